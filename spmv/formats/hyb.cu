/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/hyb.cu: the hyb kernels (ELL part, then the CSR tail).
 *
 * Work decomposition: two launches on the context's stream.
 *  1. ELL: thread r owns row r. The ELL arrays are column-major with a pitch
 *     of nrows rounded up to 32, so at step k the threads of a warp read 32
 *     consecutive column indices and values (coalesced). A row's entries come
 *     first and its padding (column -1) after, so the thread stops at the
 *     first -1: padding values and x are never read. It writes
 *     y[r] = alpha*ell_sum + beta*y[r].
 *  2. Tail: the entries of each row past the ELL width, stored as a CSR over
 *     the rows that have them, are summed by the csr-vector kernel (a thread
 *     group per tail row, a fixed shuffle tree) with beta = 1: y[r] +=
 *     alpha*tail_sum. Each y[r] is written by exactly one thread per launch
 *     and the launches are ordered by the stream: no atomics.
 *
 * Wins: matrices whose rows are nearly all of one length (ELL loads are
 * perfectly coalesced and carry no row pointer) with a few long rows that
 * would otherwise inflate the padding.
 * Loses: widely spread row lengths (padding or a large tail), and anything
 * where plain CSR is already coalesced: the ELL loop is one thread per row.
 * Deterministic: fixed per-row order in both launches. */
#include "core/cuda_check.cuh"
#include "csr_fmt.h"
#include "kernels.h"

SPS_DECLARE_GPU_BACKEND(sps_hyb)


namespace {

struct EllPolicy {
    static constexpr int BLOCK_THREADS = 256;
};

struct hyb_dev {
    sps_idx nrows, K;
    int64_t pitch;
    int single;
    int tail_tpr;
    sps_idx *ell_col;
    void *ell_val;
    sps_csr_dev tail;    /* tail.nrows = rows with a tail */
    sps_idx *tail_rows;
    size_t bytes;
};

template <typename T, bool HAS_BETA>
__global__ void __launch_bounds__(EllPolicy::BLOCK_THREADS)
ell_kernel(sps_idx nrows, sps_idx K, int64_t pitch, const sps_idx *__restrict__ col,
           const T *__restrict__ val, T alpha, const T *__restrict__ x, T beta,
           T *__restrict__ y)
{
    const int64_t r = (int64_t)blockIdx.x * EllPolicy::BLOCK_THREADS + threadIdx.x;
    if (r >= nrows) return;
    T sum = T(0);
    for (sps_idx k = 0; k < K; k++) {
        const int64_t p = k * pitch + r;
        const sps_idx c = col[p];
        if (c < 0) break; /* padding starts: the rest of the row is padding */
        sum += val[p] * x[c];
    }
    if constexpr (HAS_BETA)
        y[r] = alpha * sum + beta * y[r];
    else
        y[r] = alpha * sum; /* beta == 0: y is never read */
}

template <typename T>
sps_status run_ell(sps_context *ctx, const hyb_dev *d, double alpha, const void *x, double beta,
                   void *y)
{
    constexpr int B = EllPolicy::BLOCK_THREADS;
    const unsigned grid = (unsigned)(((int64_t)d->nrows + B - 1) / B);
    const T *v = (const T *)d->ell_val;
    if (beta != 0.0)
        ell_kernel<T, true><<<grid, B, 0, sps_stream(ctx)>>>(
            d->nrows, d->K, d->pitch, d->ell_col, v, (T)alpha, (const T *)x, (T)beta, (T *)y);
    else
        ell_kernel<T, false><<<grid, B, 0, sps_stream(ctx)>>>(
            d->nrows, d->K, d->pitch, d->ell_col, v, (T)alpha, (const T *)x, T(0), (T *)y);
    SPS_LAUNCH_CHECK(ctx, "ell_kernel");
    return SPS_OK;
}

void free_dev(hyb_dev *d)
{
    if (!d) return;
    sps__dfree(d->ell_col);
    sps__dfree(d->ell_val);
    sps__csr_dev_free(&d->tail);
    sps__dfree(d->tail_rows);
    sps__free(d);
}

sps_status upload_ell_values(sps_context *ctx, const sps_fmt_hyb *h, hyb_dev *d)
{
    return sps__upload_values(ctx, d->ell_val, h->ell_val, (size_t)h->K * (size_t)h->pitch,
                              d->single);
}

} // namespace

extern "C" sps_status sps_hyb_upload(sps_context *ctx, const sps_fmt *f, int single, void **dev,
                                     sps_spmv_stats *st)
{
    const sps_fmt_hyb *h = (const sps_fmt_hyb *)f;
    *dev = NULL;
    hyb_dev *d = (hyb_dev *)sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "hyb: out of memory");
    d->nrows = h->nrows;
    d->K = h->K;
    d->pitch = h->pitch;
    d->single = single;
    d->tail_tpr = sps__csr_vector_tpr(h->tail.nnz, h->tail.nrows);
    const size_t slots = (size_t)h->K * (size_t)h->pitch;
    const size_t ell_col_bytes = slots * sizeof(sps_idx);
    const size_t ell_val_bytes = slots * (single ? sizeof(float) : sizeof(double));
    const size_t rows_bytes = (size_t)h->tail.nrows * sizeof(sps_idx);
    sps_status s = sps__dmalloc(ctx, (void **)&d->ell_col, ell_col_bytes);
    if (s == SPS_OK) s = sps__dmalloc(ctx, &d->ell_val, ell_val_bytes);
    if (s == SPS_OK) s = sps__dmalloc(ctx, (void **)&d->tail_rows, rows_bytes);
    if (s == SPS_OK) s = sps__h2d(ctx, d->ell_col, h->ell_col, ell_col_bytes);
    if (s == SPS_OK) s = upload_ell_values(ctx, h, d);
    if (s == SPS_OK) s = sps__h2d(ctx, d->tail_rows, h->tail_rows, rows_bytes);
    if (s == SPS_OK) s = sps__csr_dev_upload(ctx, &h->tail, single, &d->tail);
    if (s != SPS_OK) {
        free_dev(d);
        return s;
    }
    d->bytes = ell_col_bytes + ell_val_bytes + rows_bytes + d->tail.bytes;
    st->device_bytes = d->bytes;
    *dev = d;
    return SPS_OK;
}

extern "C" sps_status sps_hyb_apply(sps_context *ctx, void *dev, double alpha, const void *x,
                                    double beta, void *y)
{
    const hyb_dev *d = (const hyb_dev *)dev;
    if (d->nrows == 0) return SPS_OK;
    sps_status s = d->single ? run_ell<float>(ctx, d, alpha, x, beta, y)
                             : run_ell<double>(ctx, d, alpha, x, beta, y);
    if (s != SPS_OK || d->tail.nrows == 0) return s;
    return sps__csr_vector_run(ctx, &d->tail, d->tail_rows, d->tail_tpr, alpha, x, 1.0, y);
}

extern "C" sps_status sps_hyb_update_dev(sps_context *ctx, const sps_fmt *f, void *dev)
{
    const sps_fmt_hyb *h = (const sps_fmt_hyb *)f;
    hyb_dev *d = (hyb_dev *)dev;
    sps_status s = upload_ell_values(ctx, h, d);
    if (s != SPS_OK) return s;
    return sps__upload_values(ctx, d->tail.val, h->tail.val, (size_t)h->tail.nnz, d->single);
}

extern "C" void sps_hyb_free_dev(void *dev) { free_dev((hyb_dev *)dev); }
