/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/bsr.cu: the bsr kernel (dense b x b blocks).
 *
 * Work decomposition: one warp per block row. Lane l works for row
 * i = l % b of the block row in group g = l / b: the G = 32 / b groups take
 * the block row's blocks round-robin (group g: blocks g, g + G, ...), each
 * lane summing its row of a block over the block's b columns. Group 0's lane
 * i then adds the G group sums in order g = 0 .. G-1 (__shfl_sync from lane
 * g*b + i) and writes y. The block size is a template parameter (1..8), so
 * the b columns of a block unroll into independent loads. Lanes past G*b
 * (b = 3, 5, 6, 7) idle.
 *
 * Wins: matrices made of small dense blocks (several unknowns per node, as
 * in elasticity or coupled PDEs): one column index per b*b values, and x
 * read in runs of b. Loses: everything with scattered entries, where the
 * blocks are mostly zeros (fill) and a warp per block row idles on short
 * block rows.
 * Deterministic: fixed per-lane order and a fixed combination of the groups. */
#include "bsr.h"
#include "core/cuda_check.cuh"
#include "kernels.h"

SPS_DECLARE_GPU_BACKEND(sps_bsr)

namespace {

constexpr int kBlockThreads = 256;

struct bsr_dev {
    sps_idx nrows, ncols, nbrows;
    int b, single;
    int64_t slots;
    sps_idx *brow_ptr, *bcol;
    void *val;
};

template <typename T, int B, bool BETA>
__global__ void __launch_bounds__(kBlockThreads)
bsr_kernel(sps_idx nbrows, sps_idx nrows, sps_idx ncols, const sps_idx *__restrict__ brow_ptr,
           const sps_idx *__restrict__ bcol, const T *__restrict__ val, T alpha,
           const T *__restrict__ x, T beta, T *__restrict__ y)
{
    constexpr int G = 32 / B;
    const int lane = threadIdx.x & 31, i = lane % B, g = lane / B;
    const int64_t I = ((int64_t)blockIdx.x * kBlockThreads + threadIdx.x) / 32;
    if (I >= nbrows) return; /* the whole warp: I is the same for its 32 lanes */
    T sum = T(0);
    if (g < G) {
        const sps_idx end = brow_ptr[I + 1];
        for (sps_idx k = brow_ptr[I] + g; k < end; k += G) {
            const T *v = val + (int64_t)k * (B * B) + i * B;
            const int64_t c0 = (int64_t)bcol[k] * B;
#pragma unroll
            for (int c = 0; c < B; c++)
                if (c0 + c < ncols) sum += v[c] * x[c0 + c];
        }
    }
    T total = sum; /* lane h*B + i holds group h's sum for row i */
#pragma unroll
    for (int h = 1; h < G; h++) total += __shfl_sync(0xffffffffu, sum, h * B + i);
    const int64_t r = I * B + i;
    if (g == 0 && r < nrows) {
        if constexpr (BETA)
            y[r] = alpha * total + beta * y[r];
        else
            y[r] = alpha * total; /* beta == 0: y is never read */
    }
}

template <typename T, int B>
sps_status launch(sps_context *ctx, const bsr_dev *d, double alpha, const void *x, double beta,
                  void *y)
{
    const unsigned grid = (unsigned)(((int64_t)d->nbrows * 32 + kBlockThreads - 1) / kBlockThreads);
    const T *v = (const T *)d->val;
    if (beta != 0.0)
        bsr_kernel<T, B, true><<<grid, kBlockThreads, 0, sps_stream(ctx)>>>(
            d->nbrows, d->nrows, d->ncols, d->brow_ptr, d->bcol, v, (T)alpha, (const T *)x,
            (T)beta, (T *)y);
    else
        bsr_kernel<T, B, false><<<grid, kBlockThreads, 0, sps_stream(ctx)>>>(
            d->nbrows, d->nrows, d->ncols, d->brow_ptr, d->bcol, v, (T)alpha, (const T *)x, T(0),
            (T *)y);
    SPS_LAUNCH_CHECK(ctx, "bsr_kernel");
    return SPS_OK;
}

template <typename T>
sps_status dispatch(sps_context *ctx, const bsr_dev *d, double alpha, const void *x, double beta,
                    void *y)
{
    static_assert(SPS_BSR_MAX_BLOCK == 8, "one case per block size");
    switch (d->b) {
    case 1: return launch<T, 1>(ctx, d, alpha, x, beta, y);
    case 2: return launch<T, 2>(ctx, d, alpha, x, beta, y);
    case 3: return launch<T, 3>(ctx, d, alpha, x, beta, y);
    case 4: return launch<T, 4>(ctx, d, alpha, x, beta, y);
    case 5: return launch<T, 5>(ctx, d, alpha, x, beta, y);
    case 6: return launch<T, 6>(ctx, d, alpha, x, beta, y);
    case 7: return launch<T, 7>(ctx, d, alpha, x, beta, y);
    case 8: return launch<T, 8>(ctx, d, alpha, x, beta, y);
    default: return sps__err(ctx, SPS_ERR_INTERNAL, "bsr: block size %d is not 1..8", d->b);
    }
}

void free_dev(bsr_dev *d)
{
    if (!d) return;
    sps__dfree(d->brow_ptr);
    sps__dfree(d->bcol);
    sps__dfree(d->val);
    sps__free(d);
}

} // namespace

extern "C" sps_status sps_bsr_upload(sps_context *ctx, const sps_fmt *fmt, int single, void **dev,
                                     sps_spmv_stats *st)
{
    const sps_fmt_bsr *f = (const sps_fmt_bsr *)fmt;
    *dev = NULL;
    bsr_dev *d = (bsr_dev *)sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "bsr: out of memory");
    d->nrows = f->nrows;
    d->ncols = f->ncols;
    d->nbrows = f->nbrows;
    d->b = f->b;
    d->single = single;
    d->slots = f->nblocks * f->b * f->b;
    const size_t pb = ((size_t)f->nbrows + 1) * sizeof(sps_idx);
    const size_t cb = (size_t)f->nblocks * sizeof(sps_idx);
    const size_t vb = (size_t)d->slots * (single ? sizeof(float) : sizeof(double));
    sps_status s = sps__dmalloc(ctx, (void **)&d->brow_ptr, pb);
    if (s == SPS_OK) s = sps__dmalloc(ctx, (void **)&d->bcol, cb);
    if (s == SPS_OK) s = sps__dmalloc(ctx, &d->val, vb);
    if (s == SPS_OK) s = sps__h2d(ctx, d->brow_ptr, f->brow_ptr, pb);
    if (s == SPS_OK) s = sps__h2d(ctx, d->bcol, f->bcol, cb);
    if (s == SPS_OK) s = sps__upload_values(ctx, d->val, f->val, (size_t)d->slots, single);
    if (s != SPS_OK) {
        free_dev(d);
        return s;
    }
    st->device_bytes = pb + cb + vb;
    *dev = d;
    return SPS_OK;
}

extern "C" sps_status sps_bsr_apply(sps_context *ctx, void *dev, double alpha, const void *x,
                                    double beta, void *y)
{
    const bsr_dev *d = (const bsr_dev *)dev;
    if (d->nbrows == 0) return SPS_OK;
    return d->single ? dispatch<float>(ctx, d, alpha, x, beta, y)
                     : dispatch<double>(ctx, d, alpha, x, beta, y);
}

extern "C" sps_status sps_bsr_update_dev(sps_context *ctx, const sps_fmt *fmt, void *dev)
{
    const sps_fmt_bsr *f = (const sps_fmt_bsr *)fmt;
    bsr_dev *d = (bsr_dev *)dev;
    return sps__upload_values(ctx, d->val, f->val, (size_t)d->slots, d->single);
}

extern "C" void sps_bsr_free_dev(void *dev) { free_dev((bsr_dev *)dev); }
