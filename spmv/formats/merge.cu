/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/merge.cu: merge-path CSR SpMV (Merrill & Garland, SC'16) on CUB block primitives
 *
 * Work decomposition (merge_path.h): the merge of the row end offsets with
 * the nonzero indices is cut into tiles of SPS_MERGE_TILE = 128 x 7 items
 * (rows + nonzeros), one thread block each; the tile's start coordinates are
 * precomputed at conversion. A tile
 *   1. stages its nonzeros' products val*x[col] and its row ends in shared
 *      memory (coalesced loads, each nonzero and row end read once);
 *   2. lets thread k find its start on diagonal 7k of the tile by binary
 *      search in shared memory, then consume its 7 items sequentially: a
 *      nonzero adds to the running sum, a row end stores it;
 *   3. combines the partial sums of rows that cross thread boundaries with
 *      one block-wide exclusive scan by key (cub::BlockScan, fixed order);
 *   4. writes the rows it completed (coalesced) and its carry-out: the
 *      partial sum of the row it ends inside, with that row's index.
 * A second kernel adds the carries to y in tile order (a run of tiles inside
 * one long row is summed sequentially by one thread): no floating-point
 * atomics, so y is bitwise the same run after run.
 * Wins: every thread does the same work whatever the row lengths (power-law
 * rows, a few very long rows, many empty rows). Loses to csr-vector and
 * cuSPARSE a little on regular matrices: the shared-memory staging and the
 * scan cost instructions a row-per-warp kernel does not spend. */
#include "csr_fmt.h"
#include "diag_kernels.h"
#include "merge_path.h"
#include "kernels.h"
#include "keyval.cuh"

#include <cub/block/block_scan.cuh>

SPS_DECLARE_GPU_BACKEND(sps_merge)

namespace {

constexpr int kThreads = SPS_MERGE_THREADS;
constexpr int kItems = SPS_MERGE_ITEMS;
constexpr int kTile = SPS_MERGE_TILE;

struct merge_dev {
    sps_csr_dev m;     /* row_ptr, col_idx, val (float or double) */
    int ntiles;
    int2 *coord;       /* ntiles + 1 tile starts (row, nonzero) */
    sps_idx *carry_row;/* ntiles: row each tile ends inside (nrows for none) */
    void *carry_val;   /* ntiles: its partial sum */
};

template <typename T, bool BETA>
__global__ void __launch_bounds__(kThreads) merge_tile_kernel(
    const sps_idx *__restrict__ row_ptr, const sps_idx *__restrict__ col,
    const T *__restrict__ val, const int2 *__restrict__ coord, const T *__restrict__ x, T alpha,
    T beta, T *__restrict__ y, sps_idx *__restrict__ carry_row, T *__restrict__ carry_val)
{
    using scan_t = cub::BlockScan<sps_keyval<T>, kThreads>;
    __shared__ typename scan_t::TempStorage scan_tmp;
    __shared__ sps_idx s_end[kTile + 1]; /* row ends of the tile, then a sentinel */
    __shared__ T s_prod[kTile];          /* products of the tile's nonzeros */
    __shared__ T s_row[kTile];           /* sums of the rows the tile completes */

    const int2 c0 = coord[blockIdx.x], c1 = coord[blockIdx.x + 1];
    const sps_idx r0 = c0.x, z0 = c0.y;
    const int nr = c1.x - c0.x, nz = c1.y - c0.y; /* nr + nz <= kTile */
    /* nz <= kTile = kThreads * kItems: unrolled, so that a thread issues all
     * its column and value loads before the first x gather depends on one
     * (memory-level parallelism, not a load-use chain per nonzero). */
    sps_idx cj[kItems];
    T vj[kItems];
#pragma unroll
    for (int u = 0; u < kItems; u++) {
        const int j = (int)threadIdx.x + u * kThreads;
        cj[u] = j < nz ? col[z0 + j] : 0;
        vj[u] = j < nz ? val[z0 + j] : T(0);
    }
#pragma unroll
    for (int u = 0; u < kItems; u++) {
        const int j = (int)threadIdx.x + u * kThreads;
        if (j < nz) s_prod[j] = vj[u] * __ldg(x + cj[u]);
    }
#pragma unroll
    for (int u = 0; u < kItems; u++) {
        const int i = (int)threadIdx.x + u * kThreads;
        if (i < nr) s_end[i] = row_ptr[r0 + i + 1];
    }
    if (threadIdx.x == 0) s_end[nr] = SPS_IDX_MAX; /* past the last row end: nonzeros only */
    __syncthreads();

    const int total = nr + nz;
    const int k0 = min((int)threadIdx.x * kItems, total), k1 = min(k0 + kItems, total);
    int i = (int)sps_merge_search(s_end, nr, z0, nz, k0);
    int j = k0 - i;
    const int i0 = i;
    T run = T(0);
    for (int k = k0; k < k1; k++) {
        if (z0 + j < s_end[i]) {
            run += s_prod[j];
            j++;
        } else {
            s_row[i] = run;
            run = T(0);
            i++;
        }
    }

    /* Carry-in: the partial sums of row r0+i0 left by the threads before. */
    sps_keyval<T> mine, pre;
    mine.key = r0 + i;
    mine.val = run;
    sps_keyval<T> init;
    init.key = r0;
    init.val = T(0);
    scan_t(scan_tmp).ExclusiveScan(mine, pre, init, sps_keyval_add<T>());
    if (i > i0 && pre.key == r0 + i0) s_row[i0] += pre.val;
    if (threadIdx.x == kThreads - 1) { /* the tile's carry-out: the inclusive total */
        const sps_keyval<T> out = sps_keyval_add<T>()(pre, mine);
        carry_row[blockIdx.x] = out.key;
        carry_val[blockIdx.x] = out.val;
    }
    __syncthreads();

    for (int r = threadIdx.x; r < nr; r += kThreads) {
        const sps_idx row = r0 + r;
        if (BETA) y[row] = alpha * s_row[r] + beta * y[row];
        else y[row] = alpha * s_row[r];
    }
}

/* Carries in tile order: the first tile of each run of equal rows sums the
 * run sequentially and adds it to the row, which the tile after the run has
 * written. Runs are one tile long except inside rows longer than a tile. */
template <typename T>
__global__ void merge_fixup_kernel(const sps_idx *__restrict__ carry_row,
                                   const T *__restrict__ carry_val, int ntiles, sps_idx nrows,
                                   T alpha, T *__restrict__ y)
{
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= ntiles) return;
    const sps_idx r = carry_row[t];
    if (r >= nrows || (t > 0 && carry_row[t - 1] == r)) return;
    T sum = carry_val[t];
    for (int u = t + 1; u < ntiles && carry_row[u] == r; u++) sum += carry_val[u];
    y[r] += alpha * sum;
}

template <typename T>
sps_status apply_t(sps_context *ctx, const merge_dev *d, double alpha, const void *xv,
                   double beta, void *yv)
{
    cudaStream_t s = sps_stream(ctx);
    const T *x = (const T *)xv;
    T *y = (T *)yv;
    const T *val = (const T *)d->m.val;
    T *cval = (T *)d->carry_val;
    if (beta != 0.0)
        merge_tile_kernel<T, true><<<d->ntiles, kThreads, 0, s>>>(
            d->m.row_ptr, d->m.col_idx, val, d->coord, x, (T)alpha, (T)beta, y, d->carry_row, cval);
    else
        merge_tile_kernel<T, false><<<d->ntiles, kThreads, 0, s>>>(
            d->m.row_ptr, d->m.col_idx, val, d->coord, x, (T)alpha, T(0), y, d->carry_row, cval);
    SPS_LAUNCH_CHECK(ctx, "merge_tile_kernel");
    if (d->ntiles > 1) { /* the last tile's carry belongs to no row */
        merge_fixup_kernel<T><<<(d->ntiles + 255) / 256, 256, 0, s>>>(
            d->carry_row, cval, d->ntiles, d->m.nrows, (T)alpha, y);
        SPS_LAUNCH_CHECK(ctx, "merge_fixup_kernel");
    }
    return SPS_OK;
}

} // namespace

extern "C" void sps_merge_free_dev(void *dev)
{
    merge_dev *d = (merge_dev *)dev;
    if (!d) return;
    sps__csr_dev_free(&d->m);
    sps__dfree(d->coord);
    sps__dfree(d->carry_row);
    sps__dfree(d->carry_val);
    sps__free(d);
}

extern "C" sps_status sps_merge_upload(sps_context *ctx, const sps_fmt *fmt, int single,
                                       void **dev, sps_spmv_stats *st)
{
    const sps_fmt_csr *f = (const sps_fmt_csr *)fmt;
    *dev = NULL;
    merge_dev *d = (merge_dev *)sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "merge: out of memory");
    d->ntiles = f->param;
    const size_t nt = (size_t)d->ntiles, vsize = single ? sizeof(float) : sizeof(double);
    size_t bytes = 0;
    sps_status s = sps__csr_dev_upload(ctx, &f->A, single, &d->m);
    if (s == SPS_OK) s = sps_diag_alloc_copy(ctx, (void **)&d->coord, f->extra, (nt + 1) * sizeof(int2), &bytes);
    if (s == SPS_OK) s = sps_diag_alloc_copy(ctx, (void **)&d->carry_row, NULL, nt * sizeof(sps_idx), &bytes);
    if (s == SPS_OK) s = sps_diag_alloc_copy(ctx, &d->carry_val, NULL, nt * vsize, &bytes);
    if (s != SPS_OK) {
        sps_merge_free_dev(d);
        return s;
    }
    st->device_bytes = bytes + d->m.bytes;
    *dev = d;
    return SPS_OK;
}

extern "C" sps_status sps_merge_apply(sps_context *ctx, void *dev, double alpha, const void *x,
                                      double beta, void *y)
{
    const merge_dev *d = (const merge_dev *)dev;
    if (d->ntiles == 0) return SPS_OK;
    return d->m.single ? apply_t<float>(ctx, d, alpha, x, beta, y)
                       : apply_t<double>(ctx, d, alpha, x, beta, y);
}

extern "C" sps_status sps_merge_update_dev(sps_context *ctx, const sps_fmt *fmt, void *dev)
{
    const sps_fmt_csr *f = (const sps_fmt_csr *)fmt;
    merge_dev *d = (merge_dev *)dev;
    return sps__upload_values(ctx, d->m.val, f->A.val, (size_t)f->A.nnz, d->m.single);
}
