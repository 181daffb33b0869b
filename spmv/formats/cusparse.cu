/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/cusparse.cu: the cusparse backend: cuSPARSE's generic SpMV.
 *
 * Work decomposition: cuSPARSE's own (CSR_ALG1, its default, or CSR_ALG2, a
 * row-balanced algorithm documented as bitwise deterministic). Everything
 * that allocates or analyses runs once, in upload: the matrix descriptor,
 * dense-vector descriptors, cusparseSpMV_bufferSize, the buffer, and
 * cusparseSpMV_preprocess (skipped where cuSPARSE answers NOT_SUPPORTED for
 * the algorithm; the detail line says which). apply only re-points the vector descriptors
 * (cusparseDnVecSetValues) and calls cusparseSpMV on the context's stream:
 * no allocation, no synchronization.
 *
 * beta == 0 with NaN in y: cuSPARSE's documentation does not promise that y
 * is left unread when beta is 0. upload therefore probes it on this matrix:
 * y filled with NaN, x = 0, beta = 0; if any NaN comes back, apply zeroes y
 * (cudaMemsetAsync) before every beta == 0 call, which restores the
 * contract at the cost of one write of y. The finding is in the detail line.
 *
 * Empty cases (0 rows, 0 columns, 0 entries) never reach cuSPARSE: the
 * csr-scalar kernel computes y = beta*y (or 0) for them.
 *
 * Wins: a robust baseline across all shapes (ALG2 balances irregular rows).
 * Loses: setup time (buffer and preprocessing), and to formats that move
 * fewer bytes (DRM/DIA on diagonal matrices). */
#include "core/cuda_check.cuh"
#include "csr_fmt.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

SPS_DECLARE_GPU_BACKEND(sps_cusparse)

namespace {

struct cusparse_dev {
    sps_csr_dev m;
    int alg;                  /* 1 or 2 */
    int use_cusparse;         /* 0: empty matrix, csr-scalar handles it */
    int zero_y_first;         /* the probe saw cuSPARSE read y with beta == 0 */
    int preprocessed;         /* cusparseSpMV_preprocess accepted the algorithm */
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t x, y;
    void *buffer;
    size_t buffer_bytes;
    void *probe_x, *probe_y;  /* upload only */
};

cudaDataType dtype(int single) { return single ? CUDA_R_32F : CUDA_R_64F; }

cusparseSpMVAlg_t alg_of(int alg)
{
    return alg == 2 ? CUSPARSE_SPMV_CSR_ALG2 : CUSPARSE_SPMV_CSR_ALG1;
}

size_t elem(const cusparse_dev *d) { return d->m.single ? sizeof(float) : sizeof(double); }

/* preprocess = 1: cusparseSpMV_preprocess, else cusparseSpMV. Returns
 * cuSPARSE's status; the caller checks it. */
cusparseStatus_t call_raw(sps_context *ctx, cusparse_dev *d, double alpha, double beta,
                          int preprocess)
{
    cusparseHandle_t h = (cusparseHandle_t)sps__gpu_cusparse(ctx);
    float fa = (float)alpha, fb = (float)beta;
    const void *pa = d->m.single ? (const void *)&fa : (const void *)&alpha;
    const void *pb = d->m.single ? (const void *)&fb : (const void *)&beta;
    cusparseStatus_t e = cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST);
    if (e != CUSPARSE_STATUS_SUCCESS) return e;
    if (preprocess)
        return cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, pa, d->A, d->x, pb,
                                       d->y, dtype(d->m.single), alg_of(d->alg), d->buffer);
    return cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, pa, d->A, d->x, pb, d->y,
                        dtype(d->m.single), alg_of(d->alg), d->buffer);
}

sps_status call(sps_context *ctx, cusparse_dev *d, double alpha, double beta)
{
    SPS_CUSPARSE(ctx, call_raw(ctx, d, alpha, beta, 0));
    return SPS_OK;
}

void free_dev(cusparse_dev *d)
{
    if (!d) return;
    if (d->A) cusparseDestroySpMat(d->A);
    if (d->x) cusparseDestroyDnVec(d->x);
    if (d->y) cusparseDestroyDnVec(d->y);
    sps__dfree(d->buffer);
    sps__dfree(d->probe_x);
    sps__dfree(d->probe_y);
    sps__csr_dev_free(&d->m);
    sps__free(d);
}

/* Does cusparseSpMV with beta = 0 read y? y = NaN, x = 0: any NaN in the
 * result says yes (or that A holds Inf/NaN: then zeroing y is harmless). */
sps_status probe_beta_zero(sps_context *ctx, cusparse_dev *d)
{
    const size_t ny = (size_t)d->m.nrows;
    sps_status s = sps__dmemset(ctx, d->probe_x, 0, (size_t)d->m.ncols * elem(d));
    if (s == SPS_OK) s = sps__dmemset(ctx, d->probe_y, 0xff, ny * elem(d)); /* all-ones = NaN */
    if (s == SPS_OK) s = call(ctx, d, 1.0, 0.0);
    if (s != SPS_OK) return s;
    void *host = sps__malloc(ny * elem(d));
    if (!host) return sps__err(ctx, SPS_ERR_NO_MEMORY, "cusparse: out of memory");
    s = sps__d2h(ctx, host, d->probe_y, ny * elem(d));
    d->zero_y_first = 0;
    for (size_t i = 0; s == SPS_OK && i < ny && !d->zero_y_first; i++)
        d->zero_y_first = d->m.single ? isnan(((float *)host)[i]) : isnan(((double *)host)[i]);
    sps__free(host);
    return s;
}

sps_status setup(sps_context *ctx, cusparse_dev *d)
{
    const sps_csr_dev *m = &d->m;
    const cudaDataType t = dtype(m->single);
    SPS_CUSPARSE(ctx, cusparseCreateCsr(&d->A, m->nrows, m->ncols, m->nnz, m->row_ptr,
                                        m->col_idx, m->val, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, t));
    /* Vectors for the descriptors' creation, bufferSize, preprocess and the
     * probe; apply re-points the descriptors at the caller's vectors. */
    sps_status s = sps__dmalloc(ctx, &d->probe_x, (size_t)m->ncols * elem(d));
    if (s == SPS_OK) s = sps__dmalloc(ctx, &d->probe_y, (size_t)m->nrows * elem(d));
    if (s != SPS_OK) return s;
    SPS_CUSPARSE(ctx, cusparseCreateDnVec(&d->x, m->ncols, d->probe_x, t));
    SPS_CUSPARSE(ctx, cusparseCreateDnVec(&d->y, m->nrows, d->probe_y, t));
    cusparseHandle_t h = (cusparseHandle_t)sps__gpu_cusparse(ctx);
    SPS_CUSPARSE(ctx, cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST));
    double one = 1.0, zero = 0.0;
    float fone = 1.0f, fzero = 0.0f;
    SPS_CUSPARSE(ctx, cusparseSpMV_bufferSize(
                          h, CUSPARSE_OPERATION_NON_TRANSPOSE,
                          m->single ? (const void *)&fone : (const void *)&one, d->A, d->x,
                          m->single ? (const void *)&fzero : (const void *)&zero, d->y, t,
                          alg_of(d->alg), &d->buffer_bytes));
    s = sps__dmalloc(ctx, &d->buffer, d->buffer_bytes);
    if (s != SPS_OK) return s;
    /* Preprocessing is an optimization: where this cuSPARSE does not offer
     * it for the algorithm, go on without. */
    cusparseStatus_t e = call_raw(ctx, d, 1.0, 0.0, 1);
    d->preprocessed = e == CUSPARSE_STATUS_SUCCESS;
    if (e != CUSPARSE_STATUS_SUCCESS && e != CUSPARSE_STATUS_NOT_SUPPORTED)
        return sps__cusparse_fail(ctx, e, "cusparseSpMV_preprocess", __FILE__, __LINE__);
    s = probe_beta_zero(ctx, d);
    if (s != SPS_OK) return s;
    sps__dfree(d->probe_x);
    sps__dfree(d->probe_y);
    d->probe_x = d->probe_y = NULL;
    return SPS_OK;
}

} // namespace

extern "C" sps_status sps_cusparse_upload(sps_context *ctx, const sps_fmt *f, int single,
                                          void **dev, sps_spmv_stats *st)
{
    const sps_fmt_csr *c = (const sps_fmt_csr *)f;
    *dev = NULL;
    cusparse_dev *d = (cusparse_dev *)sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "cusparse: out of memory");
    d->alg = c->param;
    sps_status s = sps__csr_dev_upload(ctx, &c->A, single, &d->m);
    d->use_cusparse = c->A.nrows > 0 && c->A.ncols > 0 && c->A.nnz > 0;
    if (s == SPS_OK && d->use_cusparse) s = setup(ctx, d);
    if (s != SPS_OK) {
        free_dev(d);
        return s;
    }
    st->device_bytes = d->m.bytes + d->buffer_bytes;
    size_t used = strlen(st->detail);
    if (d->use_cusparse)
        snprintf(st->detail + used, sizeof st->detail - used,
                 "; buffer %.1f KiB%s; beta=0 reads y: %s", d->buffer_bytes / 1024.0,
                 d->preprocessed ? ", preprocessed" : ", preprocess not supported",
                 d->zero_y_first ? "yes (y zeroed first)" : "no");
    else
        snprintf(st->detail + used, sizeof st->detail - used, "; empty: csr-scalar kernel");
    *dev = d;
    return SPS_OK;
}

extern "C" sps_status sps_cusparse_apply(sps_context *ctx, void *dev, double alpha,
                                         const void *x, double beta, void *y)
{
    cusparse_dev *d = (cusparse_dev *)dev;
    if (!d->use_cusparse) return sps__csr_scalar_run(ctx, &d->m, alpha, x, beta, y);
    SPS_CUSPARSE(ctx, cusparseDnVecSetValues(d->x, (void *)x));
    SPS_CUSPARSE(ctx, cusparseDnVecSetValues(d->y, y));
    if (beta == 0.0 && d->zero_y_first) {
        sps_status s = sps__dmemset(ctx, y, 0, (size_t)d->m.nrows * elem(d));
        if (s != SPS_OK) return s;
    }
    return call(ctx, d, alpha, beta);
}

/* The values are overwritten in place (the descriptor keeps the pointer).
 * preprocess is not redone: it is assumed to depend on the pattern only
 * (tests/gpu/test_spmv_gpu.c checks update_values against the reference). */
extern "C" sps_status sps_cusparse_update_dev(sps_context *ctx, const sps_fmt *f, void *dev)
{
    const sps_fmt_csr *c = (const sps_fmt_csr *)f;
    cusparse_dev *d = (cusparse_dev *)dev;
    return sps__upload_values(ctx, d->m.val, c->A.val, (size_t)c->A.nnz, d->m.single);
}

extern "C" void sps_cusparse_free_dev(void *dev) { free_dev((cusparse_dev *)dev); }
