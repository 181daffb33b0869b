/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/drm.cu: DRM SpMV kernels (Algorithm 2 of Wang et al. 2024, and a packed mapping)
 *
 * Work decomposition. One thread computes one row: lane t of a slot (a
 * segment of seg rows) reads its slot's diagonals in order, value
 * val[i*seg + t] and x[row + off[i]] (guarded: rows past nrows do nothing,
 * columns outside [0, ncols) are not read). Two ways to form thread blocks:
 *
 *  - rows = 0 (default, the paper's Algorithm 2): thread block b = sub-block b
 *    of Algorithm 1; thread tid serves segment slot blo[b] + tid/seg. Blocks
 *    have as many threads as the commonest sub-block needs (2 segments on
 *    most matrices); in a larger sub-block, threads loop over the extra
 *    segments. (Sizing every block for the largest sub-block left a third of
 *    the warps idle on banded:2000000,9,0.01,1, whose sub-blocks hold 2 or 3
 *    segments: 80.5% of the copy bandwidth on an H100.) Balanced operand counts between
 *    sub-blocks are what Algorithm 1 buys. Costs: one more dependent load
 *    (blo) before the row is known, idle threads when sub-block sizes differ,
 *    and small blocks (2 segments of 32 rows = 64 threads on a regular
 *    matrix: H100 keeps at most 32 blocks per SM, so 64-thread blocks reach
 *    2048 threads only at <= 32 registers per thread).
 *
 *  - rows = R: R threads per block over consecutive slots of the merged
 *    order (several sub-blocks packed per block): no blo indirection, no idle
 *    threads, and blocks large enough for full occupancy whatever seg is.
 *    Load balance comes from the hardware's block scheduler instead.
 *
 * Both are bandwidth-bound: per row they move the slot's values (8 bytes per
 * stored slot in double), x and y once (when x stays in L2), and a few bytes
 * of index per segment. See doc/drm.md for the bytes model and the choice. */
#include "diag_kernels.h"
#include "kernels.h"

SPS_DECLARE_GPU_BACKEND(sps_drm)
extern "C" sps_status sps_drm_apply_dot(sps_context *ctx, void *dev, const double *x, double *y,
                                        double *part, int maxparts, int *nparts);
extern "C" sps_status sps_drm_apply_multi(sps_context *ctx, void *dev, int k, double alpha,
                                          const double *X, int64_t ldx, double beta, double *Y,
                                          int64_t ldy);

namespace {

struct drm_dev {
    int single;
    int rows;     /* mapping (see above) */
    int unroll;   /* diagonals per chunk: 4 or 8 */
    unsigned lg;  /* log2(seg) */
    sps_idx nrows, ncols, seg, nslot, nblk, maxmem;
    sps_idx bseg;  /* segments' worth of threads per block (rows = 0): the commonest sub-block size */
    size_t nval;  /* stored values */
    sps_idx *blo, *index, *dnum, *off;
    sps_idx *blk; /* built on the device: dnum, index, blo (SPS_DRM_BLK_*) and off in one block */
    void *val;
    sps_idx *map; /* nnz, when the format was built on the device: updates scatter through it */
};

/* Algorithm 2: one thread block per sub-block. */
template <typename T, bool BETA, int CHUNK>
__global__ void __launch_bounds__(1024) drm_block_kernel(
    const sps_idx *__restrict__ blo, const sps_idx *__restrict__ index,
    const sps_idx *__restrict__ dnum, const sps_idx *__restrict__ off, const T *__restrict__ val,
    unsigned lg, unsigned nrows, unsigned ncols, const T *__restrict__ x, T alpha, T beta,
    T *__restrict__ y)
{
    const unsigned lane = threadIdx.x & ((1u << lg) - 1), per = blockDim.x >> lg;
    const sps_idx b0 = blo[blockIdx.x];
    const unsigned nseg = (unsigned)(blo[blockIdx.x + 1] - b0);
    /* The block has as many segments' worth of threads as the most common
     * sub-block; a larger sub-block's extra segments are looped over. */
    for (unsigned rnum = threadIdx.x >> lg; rnum < nseg; rnum += per) {
        const sps_idx rinx = b0 + (sps_idx)rnum;
        const unsigned row = ((unsigned)index[rinx] << lg) + lane;
        if (row >= nrows) continue; /* last segment: rows past the end */
        const sps_idx d0 = dnum[rinx];
        const T acc = sps_diag_dot_c<CHUNK>(off + d0, val + ((unsigned)d0 << lg) + lane,
                                            1u << lg, dnum[rinx + 1] - d0, row, ncols, x);
        sps_diag_store<T, BETA>(y, row, acc, alpha, beta);
    }
}

/* Packed: consecutive slots, blockDim threads per block. */
template <typename T, bool BETA, int CHUNK>
__global__ void __launch_bounds__(1024) drm_slot_kernel(
    const sps_idx *__restrict__ index, const sps_idx *__restrict__ dnum,
    const sps_idx *__restrict__ off, const T *__restrict__ val, unsigned lg, unsigned nslot,
    unsigned nrows, unsigned ncols, const T *__restrict__ x, T alpha, T beta, T *__restrict__ y)
{
    const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned slot = g >> lg, lane = g & ((1u << lg) - 1);
    if (slot >= nslot) return;
    const unsigned row = ((unsigned)index[slot] << lg) + lane;
    if (row >= nrows) return;
    const sps_idx d0 = dnum[slot];
    const T acc = sps_diag_dot_c<CHUNK>(off + d0, val + ((unsigned)d0 << lg) + lane, 1u << lg,
                               dnum[slot + 1] - d0, row, ncols, x);
    sps_diag_store<T, BETA>(y, row, acc, alpha, beta);
}

/* The fused "SpMV plus dot" (backend.h apply_dot) on the packed mapping:
 * drm_slot_kernel's rows (the same sums as either mapping, y = A x exactly), over a grid of at
 * most maxparts blocks with a grid-stride loop, and each block's sum of
 * x_row y_row in a fixed order (its threads' strides in order, then
 * sps_diag_dot_partial). */
constexpr int kDotThreads = 256;

template <int CHUNK>
__global__ void __launch_bounds__(kDotThreads) drm_dot_kernel(
    const sps_idx *__restrict__ index, const sps_idx *__restrict__ dnum,
    const sps_idx *__restrict__ off, const double *__restrict__ val, unsigned lg,
    unsigned long long threads, unsigned nrows, unsigned ncols, const double *__restrict__ x,
    double *__restrict__ y, double *__restrict__ part)
{
    double acc = 0.0;
    const unsigned long long step = (unsigned long long)gridDim.x * kDotThreads;
    for (unsigned long long g = (unsigned long long)blockIdx.x * kDotThreads + threadIdx.x; g < threads;
         g += step) {
        const unsigned slot = (unsigned)(g >> lg), lane = (unsigned)g & ((1u << lg) - 1);
        const unsigned row = ((unsigned)index[slot] << lg) + lane;
        if (row >= nrows) continue;
        const sps_idx d0 = dnum[slot];
        const double s = sps_diag_dot_c<CHUNK>(off + d0, val + ((unsigned)d0 << lg) + lane, 1u << lg,
                                               dnum[slot + 1] - d0, row, ncols, x);
        y[row] = s;
        acc += x[row] * s;
    }
    sps_diag_dot_partial<kDotThreads>(acc, part);
}

template <typename T, bool BETA, int CHUNK>
sps_status launch_c(sps_context *ctx, const drm_dev *d, T alpha, const T *x, T beta, T *y)
{
    cudaStream_t s = sps_stream(ctx);
    if (d->rows == 0) {
        const unsigned threads = (unsigned)(d->bseg * d->seg); /* <= 1024 by construction */
        drm_block_kernel<T, BETA, CHUNK><<<(unsigned)d->nblk, threads, 0, s>>>(
            d->blo, d->index, d->dnum, d->off, (const T *)d->val, d->lg, (unsigned)d->nrows,
            (unsigned)d->ncols, x, alpha, beta, y);
        SPS_LAUNCH_CHECK(ctx, "drm_block_kernel");
    } else {
        const unsigned long long threads = (unsigned long long)d->nslot << d->lg;
        const unsigned grid = (unsigned)((threads + (unsigned)d->rows - 1) / (unsigned)d->rows);
        drm_slot_kernel<T, BETA, CHUNK><<<grid, (unsigned)d->rows, 0, s>>>(
            d->index, d->dnum, d->off, (const T *)d->val, d->lg, (unsigned)d->nslot,
            (unsigned)d->nrows, (unsigned)d->ncols, x, alpha, beta, y);
        SPS_LAUNCH_CHECK(ctx, "drm_slot_kernel");
    }
    return SPS_OK;
}

template <typename T, bool BETA>
sps_status launch(sps_context *ctx, const drm_dev *d, T alpha, const T *x, T beta, T *y)
{
    return d->unroll == 8 ? launch_c<T, BETA, 8>(ctx, d, alpha, x, beta, y)
                          : launch_c<T, BETA, 4>(ctx, d, alpha, x, beta, y);
}

template <typename T>
sps_status apply_t(sps_context *ctx, const drm_dev *d, double alpha, const void *x, double beta,
                   void *y)
{
    if (beta != 0.0)
        return launch<T, true>(ctx, d, (T)alpha, (const T *)x, (T)beta, (T *)y);
    return launch<T, false>(ctx, d, (T)alpha, (const T *)x, T(0), (T *)y);
}

/* The block product (backend.h apply_multi): the packed mapping, one thread
 * per row of consecutive slots, the k columns in register chunks of C
 * (doc/spmm.md). */
constexpr unsigned kMultiThreads = 256;

template <int C, bool BETA>
__global__ void __launch_bounds__(kMultiThreads)
drm_multi_kernel(const sps_idx *__restrict__ index, const sps_idx *__restrict__ dnum,
                 const sps_idx *__restrict__ off, const double *__restrict__ val, unsigned lg,
                 unsigned nslot, unsigned nrows, unsigned ncols, int k,
                 const double *__restrict__ X, int64_t ldx, double alpha, double beta,
                 double *__restrict__ Y, int64_t ldy)
{
    const unsigned long long g = (unsigned long long)blockIdx.x * kMultiThreads + threadIdx.x;
    const unsigned slot = (unsigned)(g >> lg), lane = (unsigned)(g & ((1u << lg) - 1));
    if (slot >= nslot) return;
    const unsigned row = ((unsigned)index[slot] << lg) + lane;
    if (row >= nrows) return;
    const sps_idx d0 = dnum[slot];
    sps_diag_row_multi<C, BETA>(off + d0, val + ((size_t)d0 << lg) + lane, 1u << lg,
                                dnum[slot + 1] - d0, row, ncols, k, X, ldx, alpha, beta, Y, ldy);
}

template <int C>
sps_status multi_c(sps_context *ctx, const drm_dev *d, int k, double alpha, const double *X,
                   int64_t ldx, double beta, double *Y, int64_t ldy)
{
    const unsigned long long threads = (unsigned long long)d->nslot << d->lg;
    const unsigned grid = (unsigned)((threads + kMultiThreads - 1) / kMultiThreads);
    cudaStream_t s = sps_stream(ctx);
    const double *v = (const double *)d->val;
    if (beta != 0.0)
        drm_multi_kernel<C, true><<<grid, kMultiThreads, 0, s>>>(
            d->index, d->dnum, d->off, v, d->lg, (unsigned)d->nslot, (unsigned)d->nrows,
            (unsigned)d->ncols, k, X, ldx, alpha, beta, Y, ldy);
    else
        drm_multi_kernel<C, false><<<grid, kMultiThreads, 0, s>>>(
            d->index, d->dnum, d->off, v, d->lg, (unsigned)d->nslot, (unsigned)d->nrows,
            (unsigned)d->ncols, k, X, ldx, alpha, 0.0, Y, ldy);
    SPS_LAUNCH_CHECK(ctx, "drm_multi_kernel");
    return SPS_OK;
}

sps_status upload_values(sps_context *ctx, const sps_fmt_drm *f, drm_dev *d)
{
    return sps__upload_values(ctx, d->val, f->val, d->nval, d->single);
}

} // namespace

extern "C" void sps_drm_free_dev(void *dev)
{
    drm_dev *d = (drm_dev *)dev;
    if (!d) return;
    if (d->blk) { /* dnum, index, blo and off */
        sps__dfree(d->blk);
    } else {
        sps__dfree(d->blo);
        sps__dfree(d->index);
        sps__dfree(d->dnum);
        sps__dfree(d->off);
    }
    sps__dfree(d->val);
    sps__dfree(d->map);
    sps__free(d);
}

extern "C" sps_status sps_drm_upload(sps_context *ctx, const sps_fmt *fmt, int single, void **dev,
                                     sps_spmv_stats *st)
{
    const sps_fmt_drm *f = (const sps_fmt_drm *)fmt;
    *dev = NULL;
    drm_dev *d = (drm_dev *)sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory");
    d->single = single;
    d->rows = f->rows;
    d->unroll = f->unroll;
    d->lg = 0;
    while ((1 << d->lg) < f->seg) d->lg++;
    d->nrows = f->nrows;
    d->ncols = f->ncols;
    d->seg = f->seg;
    d->nslot = f->nslot;
    d->nblk = f->nblk;
    d->maxmem = f->maxmem;
    d->bseg = f->bseg;
    const sps_idx ndiag = f->ndiag;
    d->nval = (size_t)ndiag * (size_t)f->seg;
    size_t bytes = 0;
    const size_t is = sizeof(sps_idx);
    sps_status s = SPS_OK;
    if (f->dblk) { /* built on the device: dnum, index, blo and off are there */
        sps_fmt_drm *w = (sps_fmt_drm *)f;
        d->blk = w->dblk;
        d->dnum = d->blk;
        d->index = d->blk + SPS_DRM_BLK_INDEX(f->nslot);
        d->blo = d->blk + SPS_DRM_BLK_BLO(f->nslot);
        d->off = d->blk + SPS_DRM_BLK_WORDS(f->nslot);
        w->dblk = NULL;
        bytes += (SPS_DRM_BLK_WORDS(f->nslot) + (size_t)ndiag) * is;
    } else if (!f->off && ndiag) { /* device-built, uploaded once already */
        s = sps__err(ctx, SPS_ERR_INTERNAL, "drm: a device-built format uploaded twice (%s:%d)", __FILE__,
                     __LINE__);
    } else {
        s = sps_diag_alloc_copy(ctx, (void **)&d->blo, f->blo, ((size_t)f->nblk + 1) * is, &bytes);
        if (s == SPS_OK) s = sps_diag_alloc_copy(ctx, (void **)&d->index, f->index, (size_t)f->nslot * is, &bytes);
        if (s == SPS_OK) s = sps_diag_alloc_copy(ctx, (void **)&d->dnum, f->dnum, ((size_t)f->nslot + 1) * is, &bytes);
        if (s == SPS_OK) s = sps_diag_alloc_copy(ctx, (void **)&d->off, f->off, (size_t)ndiag * is, &bytes);
    }
    sps_fmt_drm *w = (sps_fmt_drm *)f; /* a device-built format hands its arrays over */
    if (s == SPS_OK) /* dval NULL when nnz = 0: dmap tells a device-built format too */
        s = sps__diag_upload_dev(ctx, f->dval || f->dmap, &w->dval, &w->dmap, f->val, d->nval,
                                 f->nnz, single, &d->val, &d->map, &bytes);
    if (s != SPS_OK) {
        sps_drm_free_dev(d);
        return s;
    }
    st->device_bytes = bytes;
    *dev = d;
    return SPS_OK;
}

extern "C" sps_status sps_drm_apply(sps_context *ctx, void *dev, double alpha, const void *x,
                                    double beta, void *y)
{
    const drm_dev *d = (const drm_dev *)dev;
    if (d->nrows == 0 || d->nslot == 0) return SPS_OK;
    return d->single ? apply_t<float>(ctx, d, alpha, x, beta, y)
                     : apply_t<double>(ctx, d, alpha, x, beta, y);
}

extern "C" sps_status sps_drm_update_dev(sps_context *ctx, const sps_fmt *fmt, void *dev)
{
    const sps_fmt_drm *f = (const sps_fmt_drm *)fmt;
    drm_dev *d = (drm_dev *)dev;
    if (!f->pending) return upload_values(ctx, f, d);
    /* the CSR values go up (nnz, not the padded slots) and scatter through the map */
    return sps__diag_update_dev(ctx, f->map, f->nnz, f->pending, &d->map, d->val, d->single);
}

extern "C" sps_status sps_drm_fetch(sps_context *ctx, sps_fmt *fmt, const void *dev)
{
    sps_fmt_drm *f = (sps_fmt_drm *)fmt;
    const drm_dev *d = (const drm_dev *)dev;
    if (!f->hblk && d->blk) { /* a device-built format keeps dnum, index, inv and blo there */
        const size_t S = (size_t)f->nslot, up = SPS_DRM_BLK_BLO(S) + (size_t)f->nblk + 1;
        sps_idx *blk = (sps_idx *)sps__malloc(SPS_DRM_BLK_WORDS(S) * sizeof(sps_idx));
        if (!blk) return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory");
        sps_status s = sps__d2h(ctx, blk, d->blk, up * sizeof(sps_idx)); /* blo's unused tail stays */
        if (s != SPS_OK) {
            sps__free(blk);
            return s;
        }
        f->hblk = f->dnum = blk;
        f->index = blk + SPS_DRM_BLK_INDEX(S);
        f->blo = blk + SPS_DRM_BLK_BLO(S);
    }
    if (!f->off && d->off) { /* a device-built format keeps its offsets on the device */
        const size_t nd = (size_t)f->ndiag;
        sps_idx *off = (sps_idx *)sps__malloc((nd ? nd : 1) * sizeof(sps_idx));
        if (!off) return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory");
        sps_status s = sps__d2h(ctx, off, d->off, nd * sizeof(sps_idx));
        if (s != SPS_OK) {
            sps__free(off);
            return s;
        }
        f->off = off;
    }
    if (f->val || !d->map) return SPS_OK;
    return sps__diag_fetch_dev(ctx, "drm", d->val, d->map, d->nval, f->nnz, d->single, &f->val,
                               &f->map);
}

extern "C" sps_status sps_drm_apply_dot(sps_context *ctx, void *dev, const double *x, double *y,
                                        double *part, int maxparts, int *nparts)
{
    const drm_dev *d = (const drm_dev *)dev;
    /* whatever the mapping (rows): each row's sum is the same */
    if (d->single || d->nrows != d->ncols || maxparts < 1) return SPS_ERR_UNSUPPORTED;
    const unsigned long long threads = (unsigned long long)d->nslot << d->lg;
    const unsigned grid = sps_diag_dot_grid(threads, kDotThreads, maxparts);
    cudaStream_t s = sps_stream(ctx);
    if (d->unroll == 8)
        drm_dot_kernel<8><<<grid, kDotThreads, 0, s>>>(d->index, d->dnum, d->off, (const double *)d->val,
                                                       d->lg, threads, (unsigned)d->nrows,
                                                       (unsigned)d->ncols, x, y, part);
    else
        drm_dot_kernel<4><<<grid, kDotThreads, 0, s>>>(d->index, d->dnum, d->off, (const double *)d->val,
                                                       d->lg, threads, (unsigned)d->nrows,
                                                       (unsigned)d->ncols, x, y, part);
    SPS_LAUNCH_CHECK(ctx, "drm_dot_kernel");
    *nparts = (int)grid;
    return SPS_OK;
}

extern "C" sps_status sps_drm_apply_multi(sps_context *ctx, void *dev, int k, double alpha,
                                          const double *X, int64_t ldx, double beta, double *Y,
                                          int64_t ldy)
{
    const drm_dev *d = (const drm_dev *)dev;
    if (d->single) return SPS_ERR_UNSUPPORTED;
    if (d->nrows == 0 || d->nslot == 0 || k <= 0) return SPS_OK;
    if (k <= 4) return multi_c<4>(ctx, d, k, alpha, X, ldx, beta, Y, ldy);
    if (k <= 8) return multi_c<8>(ctx, d, k, alpha, X, ldx, beta, Y, ldy);
    return multi_c<16>(ctx, d, k, alpha, X, ldx, beta, Y, ldy);
}
