/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/dia.cu: DIA SpMV kernel (Bell & Garland)
 *
 * Work decomposition: one thread per row, 256 threads per block; the thread
 * walks every diagonal of the matrix, value val[i*nrows + row] (consecutive
 * rows, consecutive addresses: coalesced) times x[row + off[i]] (guarded:
 * columns outside [0, ncols) are not read). Wins on matrices made of a few
 * full diagonals (stencils): no column index is read at all. Loses as soon as
 * a diagonal is mostly empty: every stored zero is still read and multiplied,
 * which is why convert refuses a fill above maxfill (drm stores diagonals per
 * 32-row segment instead). */
#include "diag_kernels.h"
#include "kernels.h"

SPS_DECLARE_GPU_BACKEND(sps_dia)
extern "C" sps_status sps_dia_apply_dot(sps_context *ctx, void *dev, const double *x, double *y,
                                        double *part, int maxparts, int *nparts);
extern "C" sps_status sps_dia_apply_multi(sps_context *ctx, void *dev, int k, double alpha,
                                          const double *X, int64_t ldx, double beta, double *Y,
                                          int64_t ldy);

namespace {

constexpr unsigned kThreads = 256;

struct dia_dev {
    int single;
    sps_idx nrows, ncols, ndiag;
    size_t nval;
    sps_idx *off;
    void *val;
    sps_idx *map; /* nnz, uploaded at the first value update */
};

template <typename T, bool BETA>
__global__ void __launch_bounds__(kThreads) dia_kernel(const sps_idx *__restrict__ off,
                                                        const T *__restrict__ val, int ndiag,
                                                        unsigned nrows, unsigned ncols,
                                                        const T *__restrict__ x, T alpha, T beta,
                                                        T *__restrict__ y)
{
    const unsigned row = blockIdx.x * kThreads + threadIdx.x;
    if (row >= nrows) return;
    const T acc = sps_diag_dot(off, val + row, nrows, ndiag, row, ncols, x);
    sps_diag_store<T, BETA>(y, row, acc, alpha, beta);
}

/* The fused "SpMV plus dot" (backend.h apply_dot): dia_kernel's rows (y = A x
 * exactly) over at most maxparts blocks with a grid-stride loop, and each
 * block's sum of x_row y_row in a fixed order (sps_diag_dot_partial). */
__global__ void __launch_bounds__(kThreads) dia_dot_kernel(const sps_idx *__restrict__ off,
                                                           const double *__restrict__ val, int ndiag,
                                                           unsigned nrows, unsigned ncols,
                                                           const double *__restrict__ x,
                                                           double *__restrict__ y, double *part)
{
    double acc = 0.0;
    for (unsigned long long r = (unsigned long long)blockIdx.x * kThreads + threadIdx.x; r < nrows;
         r += (unsigned long long)gridDim.x * kThreads) {
        const unsigned row = (unsigned)r;
        const double s = sps_diag_dot(off, val + row, nrows, ndiag, row, ncols, x);
        y[row] = s;
        acc += x[row] * s;
    }
    sps_diag_dot_partial<kThreads>(acc, part);
}

template <typename T>
sps_status apply_t(sps_context *ctx, const dia_dev *d, double alpha, const void *x, double beta,
                   void *y)
{
    const unsigned grid = (unsigned)(((unsigned long long)d->nrows + kThreads - 1) / kThreads);
    cudaStream_t s = sps_stream(ctx);
    if (beta != 0.0)
        dia_kernel<T, true><<<grid, kThreads, 0, s>>>(d->off, (const T *)d->val, d->ndiag,
                                                      (unsigned)d->nrows, (unsigned)d->ncols,
                                                      (const T *)x, (T)alpha, (T)beta, (T *)y);
    else
        dia_kernel<T, false><<<grid, kThreads, 0, s>>>(d->off, (const T *)d->val, d->ndiag,
                                                       (unsigned)d->nrows, (unsigned)d->ncols,
                                                       (const T *)x, (T)alpha, T(0), (T *)y);
    SPS_LAUNCH_CHECK(ctx, "dia_kernel");
    return SPS_OK;
}

/* The block product (backend.h apply_multi): one thread per row, the k
 * columns in register chunks of C (doc/spmm.md). */
template <int C, bool BETA>
__global__ void __launch_bounds__(kThreads)
dia_multi_kernel(const sps_idx *__restrict__ off, const double *__restrict__ val, int ndiag,
                 unsigned nrows, unsigned ncols, int k, const double *__restrict__ X, int64_t ldx,
                 double alpha, double beta, double *__restrict__ Y, int64_t ldy)
{
    const unsigned row = blockIdx.x * kThreads + threadIdx.x;
    if (row >= nrows) return;
    sps_diag_row_multi<C, BETA>(off, val + row, nrows, ndiag, row, ncols, k, X, ldx, alpha, beta,
                                Y, ldy);
}

template <int C>
sps_status multi_c(sps_context *ctx, const dia_dev *d, int k, double alpha, const double *X,
                   int64_t ldx, double beta, double *Y, int64_t ldy)
{
    const unsigned grid = (unsigned)(((unsigned long long)d->nrows + kThreads - 1) / kThreads);
    cudaStream_t s = sps_stream(ctx);
    const double *v = (const double *)d->val;
    if (beta != 0.0)
        dia_multi_kernel<C, true><<<grid, kThreads, 0, s>>>(d->off, v, d->ndiag, (unsigned)d->nrows,
                                                            (unsigned)d->ncols, k, X, ldx, alpha,
                                                            beta, Y, ldy);
    else
        dia_multi_kernel<C, false><<<grid, kThreads, 0, s>>>(d->off, v, d->ndiag, (unsigned)d->nrows,
                                                             (unsigned)d->ncols, k, X, ldx, alpha,
                                                             0.0, Y, ldy);
    SPS_LAUNCH_CHECK(ctx, "dia_multi_kernel");
    return SPS_OK;
}

sps_status upload_values(sps_context *ctx, const sps_fmt_dia *f, dia_dev *d)
{
    return sps__upload_values(ctx, d->val, f->val, d->nval, d->single);
}

} // namespace

extern "C" void sps_dia_free_dev(void *dev)
{
    dia_dev *d = (dia_dev *)dev;
    if (!d) return;
    sps__dfree(d->off);
    sps__dfree(d->val);
    sps__dfree(d->map);
    sps__free(d);
}

extern "C" sps_status sps_dia_upload(sps_context *ctx, const sps_fmt *fmt, int single, void **dev,
                                     sps_spmv_stats *st)
{
    const sps_fmt_dia *f = (const sps_fmt_dia *)fmt;
    *dev = NULL;
    dia_dev *d = (dia_dev *)sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "dia: out of memory");
    d->single = single;
    d->nrows = f->nrows;
    d->ncols = f->ncols;
    d->ndiag = f->ndiag;
    d->nval = (size_t)f->ndiag * (size_t)f->nrows;
    size_t bytes = 0;
    sps_status s = sps_diag_alloc_copy(ctx, (void **)&d->off, f->off,
                                       (size_t)f->ndiag * sizeof(sps_idx), &bytes);
    sps_fmt_dia *w = (sps_fmt_dia *)f; /* a device-built format hands its arrays over */
    if (s == SPS_OK)
        s = sps__diag_upload_dev(ctx, f->dval != NULL, &w->dval, &w->dmap, f->val, d->nval, f->nnz,
                                 single, &d->val, &d->map, &bytes);
    if (s != SPS_OK) {
        sps_dia_free_dev(d);
        return s;
    }
    st->device_bytes = bytes;
    *dev = d;
    return SPS_OK;
}

extern "C" sps_status sps_dia_apply(sps_context *ctx, void *dev, double alpha, const void *x,
                                    double beta, void *y)
{
    const dia_dev *d = (const dia_dev *)dev;
    if (d->nrows == 0) return SPS_OK;
    return d->single ? apply_t<float>(ctx, d, alpha, x, beta, y)
                     : apply_t<double>(ctx, d, alpha, x, beta, y);
}

extern "C" sps_status sps_dia_apply_dot(sps_context *ctx, void *dev, const double *x, double *y,
                                        double *part, int maxparts, int *nparts)
{
    const dia_dev *d = (const dia_dev *)dev;
    if (d->single || d->nrows != d->ncols || maxparts < 1) return SPS_ERR_UNSUPPORTED;
    const unsigned grid = sps_diag_dot_grid((unsigned long long)d->nrows, kThreads, maxparts);
    dia_dot_kernel<<<grid, kThreads, 0, sps_stream(ctx)>>>(d->off, (const double *)d->val, d->ndiag,
                                                           (unsigned)d->nrows, (unsigned)d->ncols, x,
                                                           y, part);
    SPS_LAUNCH_CHECK(ctx, "dia_dot_kernel");
    *nparts = (int)grid;
    return SPS_OK;
}

extern "C" int sps_dia_dev_rows(const void *dev, sps_dev_rows *out)
{
    const dia_dev *d = (const dia_dev *)dev;
    if (!d || d->single || d->nrows != d->ncols) return 0;
    *out = sps_dev_rows{};
    out->kind = SPS_ROWS_DIA;
    out->n = d->nrows;
    out->ndiag = d->ndiag;
    out->nnz = d->ndiag * d->nrows;
    out->max_row = d->ndiag;
    out->off = d->off;
    out->val = (const double *)d->val;
    return 1;
}

extern "C" sps_status sps_dia_apply_multi(sps_context *ctx, void *dev, int k, double alpha,
                                          const double *X, int64_t ldx, double beta, double *Y,
                                          int64_t ldy)
{
    const dia_dev *d = (const dia_dev *)dev;
    if (d->single) return SPS_ERR_UNSUPPORTED;
    if (d->nrows == 0 || k <= 0) return SPS_OK;
    if (k <= 4) return multi_c<4>(ctx, d, k, alpha, X, ldx, beta, Y, ldy);
    if (k <= 8) return multi_c<8>(ctx, d, k, alpha, X, ldx, beta, Y, ldy);
    return multi_c<16>(ctx, d, k, alpha, X, ldx, beta, Y, ldy);
}

/* New values: the CSR values go up (nnz, not the padded slots) and are
 * scattered through the map on the device, which the first update uploads. */
extern "C" sps_status sps_dia_update_dev(sps_context *ctx, const sps_fmt *fmt, void *dev)
{
    const sps_fmt_dia *f = (const sps_fmt_dia *)fmt;
    dia_dev *d = (dia_dev *)dev;
    if (!f->pending) return upload_values(ctx, f, d);
    return sps__diag_update_dev(ctx, f->map, f->nnz, f->pending, &d->map, d->val, d->single);
}

extern "C" sps_status sps_dia_fetch(sps_context *ctx, sps_fmt *fmt, const void *dev)
{
    sps_fmt_dia *f = (sps_fmt_dia *)fmt;
    const dia_dev *d = (const dia_dev *)dev;
    if (f->val || !d->map) return SPS_OK;
    return sps__diag_fetch_dev(ctx, "dia", d->val, d->map, d->nval, f->nnz, d->single, &f->val,
                               &f->map);
}
