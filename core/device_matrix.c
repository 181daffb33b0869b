/* SPDX-License-Identifier: MIT */
/* spsolve/core/device_matrix.c: a matrix's CSR on the device, uploaded once
 * and cached on the matrix (sps_matrix_upload) */
#include "gpu.h"
#include "internal.h"

#include <string.h>

#if SPS_HAVE_CUDA

void sps__dcsr_free(sps_dcsr *d)
{
    if (!d) return;
    sps__dfree(d->row_ptr);
    sps__dfree(d->col_idx);
    sps__dfree(d->val);
    sps__free(d);
}

static sps_status upload(sps_context *ctx, const sps_csr *A, sps_dcsr **out)
{
    sps_dcsr *d = sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_matrix_upload: out of memory");
    double t0 = sps__now_ms();
    d->ctx = ctx;
    d->h_row_ptr = A->row_ptr;
    d->h_col_idx = A->col_idx;
    d->h_val = A->val;
    d->nrows = A->nrows;
    d->ncols = A->ncols;
    d->nnz = A->nnz;
    size_t sz[3] = {((size_t)A->nrows + 1) * sizeof(sps_idx), (size_t)A->nnz * sizeof(sps_idx),
                    (size_t)A->nnz * sizeof(double)};
    sps_status st = sps__dmalloc(ctx, (void **)&d->row_ptr, sz[0]);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&d->col_idx, sz[1]);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&d->val, sz[2]);
    if (st == SPS_OK) {
        void *dst[3] = {d->row_ptr, d->col_idx, d->val};
        const void *src[3] = {A->row_ptr, A->col_idx, A->val};
        st = sps__h2d_pinned(ctx, 3, dst, src, sz, d->how, sizeof d->how);
    }
    if (st != SPS_OK) {
        sps__err_prefix(ctx, "sps_matrix_upload");
        sps__dcsr_free(d);
        return st;
    }
    d->bytes = sz[0] + sz[1] + sz[2];
    d->upload_ms = sps__now_ms() - t0;
    d->gbps = d->upload_ms > 0 ? (double)d->bytes / (d->upload_ms * 1e6) : 0.0;
    *out = d;
    return SPS_OK;
}

const sps_dcsr *sps__csr_device_copy(sps_context *ctx, const sps_csr *A)
{
    const sps_dcsr *d = A ? A->dev : NULL;
    if (!d || d->ctx != ctx || d->nrows != A->nrows || d->ncols != A->ncols || d->nnz != A->nnz ||
        d->h_row_ptr != A->row_ptr || d->h_col_idx != A->col_idx || d->h_val != A->val)
        return NULL;
    return d;
}

sps_status sps__matrix_device(sps_context *ctx, const sps_matrix *M, const sps_dcsr **d,
                              int *uploaded)
{
    sps_matrix *m = (sps_matrix *)M; /* a cache fill: the matrix stays logically const */
    *d = NULL;
    if (uploaded) *uploaded = 0;
    if (!ctx || !ctx->gpu)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "device copy of a matrix needs a GPU context");
    if (m->A.dev && m->A.dev->ctx == ctx) {
        *d = m->A.dev;
        return SPS_OK;
    }
    sps__matrix_drop_device(m);
    sps_status st = upload(ctx, &m->A, &m->A.dev);
    if (st != SPS_OK) return st;
    if (uploaded) *uploaded = 1;
    *d = m->A.dev;
    return SPS_OK;
}

#endif /* SPS_HAVE_CUDA */

void sps__matrix_drop_device(sps_matrix *M)
{
    if (!M || !M->A.dev) return;
#if SPS_HAVE_CUDA
    sps__dcsr_free(M->A.dev);
#endif
    M->A.dev = NULL;
}

sps_status sps_matrix_upload(sps_context *ctx, const sps_matrix *A, double *ms, double *gbps)
{
    if (ms) *ms = 0;
    if (gbps) *gbps = 0;
    if (!A) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_upload: A is NULL");
    if (!ctx || !ctx->gpu) return SPS_OK;
#if SPS_HAVE_CUDA
    const sps_dcsr *d;
    int now = 0;
    sps_status st = sps__matrix_device(ctx, A, &d, &now);
    if (st == SPS_OK && now) {
        if (ms) *ms = d->upload_ms;
        if (gbps) *gbps = d->gbps;
    }
    return st;
#else
    return SPS_OK;
#endif
}
