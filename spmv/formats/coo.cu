/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/coo.cu: the coo kernels (row-sorted triplets, a
 * segmented reduction in a fixed order; the scheme is in coo.h).
 *
 * Work decomposition: three launches on the context's stream.
 *  1. y = beta*y (a memset when beta = 0): COO has no entry for an empty row.
 *  2. One thread block per tile of SPS_COO_TILE consecutive triplets: the
 *     tile's rows and products val*x[col] are staged in shared memory
 *     (coalesced loads), thread k sums its SPS_COO_ITEMS items run by run,
 *     adds the runs it completes to y, and the partial sums of rows that
 *     cross threads are combined by one block-wide exclusive scan by key
 *     (cub::BlockScan, a fixed tree). The tile's last run is its carry.
 *  3. The carries in tile order: the first tile of each run of equal carry
 *     rows sums the run sequentially and adds it to the row.
 * No floating-point atomics: each y[r] has one writer per launch and the
 * launches are ordered by the stream, so y is bitwise the same run after run.
 * Wins: nothing on its own against CSR (16 bytes per entry against 12, and
 * y written twice); its work per thread is equal whatever the row lengths,
 * so it holds up where rows are very uneven. Loses: every regular matrix. */
#include "core/cuda_check.cuh"
#include "coo.h"
#include "kernels.h"
#include "keyval.cuh"

#include <cub/block/block_scan.cuh>

SPS_DECLARE_GPU_BACKEND(sps_coo)

namespace {

constexpr int kThreads = SPS_COO_THREADS;
constexpr int kItems = SPS_COO_ITEMS;
constexpr int kTile = SPS_COO_TILE;

struct coo_dev {
    sps_idx nrows;
    int64_t nnz, ntiles;
    int single;
    sps_idx *row, *col;
    void *val;
    sps_idx *carry_row; /* ntiles */
    void *carry_val;    /* ntiles */
};

template <typename T>
__global__ void coo_scale_kernel(sps_idx n, T beta, T *__restrict__ y)
{
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = beta * y[i];
}

/* The items [k0, k1) of one thread (k0 < k1): runs it completes go to y;
 * returns its last run; *head and *head_row its first run when it has a
 * second one (*head_row = -1 otherwise). */
template <typename T>
__device__ __forceinline__ sps_keyval<T> thread_runs(const sps_idx *s_row, const T *s_prod,
                                                     int k0, int k1, T alpha, T *__restrict__ y,
                                                     T *head, sps_idx *head_row)
{
    sps_idx cur = s_row[k0];
    T run = T(0);
    *head_row = -1;
    for (int q = k0; q < k1; q++) {
        if (s_row[q] != cur) {
            if (*head_row >= 0) y[cur] += alpha * run;
            else {
                *head = run;
                *head_row = cur;
            }
            cur = s_row[q];
            run = T(0);
        }
        run += s_prod[q];
    }
    sps_keyval<T> last;
    last.key = cur;
    last.val = run;
    return last;
}

template <typename T>
__global__ void __launch_bounds__(kThreads) coo_tile_kernel(
    int64_t nnz, const sps_idx *__restrict__ row, const sps_idx *__restrict__ col,
    const T *__restrict__ val, const T *__restrict__ x, T alpha, T *__restrict__ y,
    sps_idx *__restrict__ carry_row, T *__restrict__ carry_val)
{
    using scan_t = cub::BlockScan<sps_keyval<T>, kThreads>;
    __shared__ typename scan_t::TempStorage scan_tmp;
    __shared__ sps_idx s_row[kTile];
    __shared__ T s_prod[kTile];

    const int64_t z0 = (int64_t)blockIdx.x * kTile;
    const int nz = (int)(nnz - z0 < kTile ? nnz - z0 : kTile); /* >= 1 */
    sps_idx cj[kItems];
    T vj[kItems];
#pragma unroll
    for (int u = 0; u < kItems; u++) { /* all loads issued before the x gathers */
        const int j = (int)threadIdx.x + u * kThreads;
        cj[u] = j < nz ? col[z0 + j] : 0;
        vj[u] = j < nz ? val[z0 + j] : T(0);
        if (j < nz) s_row[j] = row[z0 + j];
    }
#pragma unroll
    for (int u = 0; u < kItems; u++) {
        const int j = (int)threadIdx.x + u * kThreads;
        if (j < nz) s_prod[j] = vj[u] * __ldg(x + cj[u]);
    }
    __syncthreads();

    const int k0 = min((int)threadIdx.x * kItems, nz), k1 = min(k0 + kItems, nz);
    T head = T(0);
    sps_idx head_row = -1;
    sps_keyval<T> mine; /* a thread past the tile's items continues its last row with 0 */
    mine.key = s_row[nz - 1];
    mine.val = T(0);
    if (k0 < k1) mine = thread_runs(s_row, s_prod, k0, k1, alpha, y, &head, &head_row);

    sps_keyval<T> pre, init;
    init.key = -1;
    init.val = T(0);
    scan_t(scan_tmp).ExclusiveScan(mine, pre, init, sps_keyval_add<T>());
    if (k0 < k1 && pre.key >= 0 && pre.key != s_row[k0])
        y[pre.key] += alpha * pre.val; /* the row of the carry-in ended just before k0 */
    if (head_row >= 0) y[head_row] += alpha * (pre.key == head_row ? pre.val + head : head);
    if (threadIdx.x == kThreads - 1) { /* the tile's carry: the inclusive total */
        const sps_keyval<T> out = sps_keyval_add<T>()(pre, mine);
        carry_row[blockIdx.x] = out.key;
        carry_val[blockIdx.x] = out.val;
    }
}

/* Carries in tile order (as merge's fix-up, every tile's carry included). */
template <typename T>
__global__ void coo_carry_kernel(const sps_idx *__restrict__ carry_row,
                                 const T *__restrict__ carry_val, int64_t ntiles, T alpha,
                                 T *__restrict__ y)
{
    const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ntiles) return;
    const sps_idx r = carry_row[t];
    if (t > 0 && carry_row[t - 1] == r) return;
    T sum = carry_val[t];
    for (int64_t u = t + 1; u < ntiles && carry_row[u] == r; u++) sum += carry_val[u];
    y[r] += alpha * sum;
}

template <typename T>
sps_status apply_t(sps_context *ctx, const coo_dev *d, double alpha, const void *xv, double beta,
                   void *yv)
{
    cudaStream_t s = sps_stream(ctx);
    T *y = (T *)yv;
    T *cval = (T *)d->carry_val;
    if (beta == 0.0) {
        SPS_CUDA(ctx, cudaMemsetAsync(y, 0, (size_t)d->nrows * sizeof(T), s));
    } else {
        coo_scale_kernel<T><<<(unsigned)(((int64_t)d->nrows + 255) / 256), 256, 0, s>>>(
            d->nrows, (T)beta, y);
        SPS_LAUNCH_CHECK(ctx, "coo_scale_kernel");
    }
    if (d->ntiles == 0) return SPS_OK;
    coo_tile_kernel<T><<<(unsigned)d->ntiles, kThreads, 0, s>>>(
        d->nnz, d->row, d->col, (const T *)d->val, (const T *)xv, (T)alpha, y, d->carry_row, cval);
    SPS_LAUNCH_CHECK(ctx, "coo_tile_kernel");
    coo_carry_kernel<T><<<(unsigned)((d->ntiles + 255) / 256), 256, 0, s>>>(
        d->carry_row, cval, d->ntiles, (T)alpha, y);
    SPS_LAUNCH_CHECK(ctx, "coo_carry_kernel");
    return SPS_OK;
}

void free_dev(coo_dev *d)
{
    if (!d) return;
    sps__dfree(d->row);
    sps__dfree(d->col);
    sps__dfree(d->val);
    sps__dfree(d->carry_row);
    sps__dfree(d->carry_val);
    sps__free(d);
}

} // namespace

extern "C" sps_status sps_coo_upload(sps_context *ctx, const sps_fmt *fmt, int single, void **dev,
                                     sps_spmv_stats *st)
{
    const sps_fmt_coo *f = (const sps_fmt_coo *)fmt;
    *dev = NULL;
    coo_dev *d = (coo_dev *)sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "coo: out of memory");
    d->nrows = f->nrows;
    d->nnz = f->nnz;
    d->ntiles = f->ntiles;
    d->single = single;
    const size_t vs = single ? sizeof(float) : sizeof(double);
    const size_t ib = (size_t)f->nnz * sizeof(sps_idx), nt = (size_t)f->ntiles;
    sps_status s = sps__dmalloc(ctx, (void **)&d->row, ib);
    if (s == SPS_OK) s = sps__dmalloc(ctx, (void **)&d->col, ib);
    if (s == SPS_OK) s = sps__dmalloc(ctx, &d->val, (size_t)f->nnz * vs);
    if (s == SPS_OK) s = sps__dmalloc(ctx, (void **)&d->carry_row, nt * sizeof(sps_idx));
    if (s == SPS_OK) s = sps__dmalloc(ctx, &d->carry_val, nt * vs);
    if (s == SPS_OK) s = sps__h2d(ctx, d->row, f->row, ib);
    if (s == SPS_OK) s = sps__h2d(ctx, d->col, f->col, ib);
    if (s == SPS_OK) s = sps__upload_values(ctx, d->val, f->val, (size_t)f->nnz, single);
    if (s != SPS_OK) {
        free_dev(d);
        return s;
    }
    st->device_bytes = 2 * ib + (size_t)f->nnz * vs + nt * (sizeof(sps_idx) + vs);
    *dev = d;
    return SPS_OK;
}

extern "C" sps_status sps_coo_apply(sps_context *ctx, void *dev, double alpha, const void *x,
                                    double beta, void *y)
{
    const coo_dev *d = (const coo_dev *)dev;
    if (d->nrows == 0) return SPS_OK;
    return d->single ? apply_t<float>(ctx, d, alpha, x, beta, y)
                     : apply_t<double>(ctx, d, alpha, x, beta, y);
}

extern "C" sps_status sps_coo_update_dev(sps_context *ctx, const sps_fmt *fmt, void *dev)
{
    const sps_fmt_coo *f = (const sps_fmt_coo *)fmt;
    coo_dev *d = (coo_dev *)dev;
    return sps__upload_values(ctx, d->val, f->val, (size_t)f->nnz, d->single);
}

extern "C" void sps_coo_free_dev(void *dev) { free_dev((coo_dev *)dev); }
