/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/drm_convert.cu: DRM's (and DIA's) conversion on the device, from
 * the matrix's device CSR (core/device_matrix.c), bitwise equal to the host
 * conversion (drm.c with diag_common.c's scan and layout).
 *
 *   1. seg_count_kernel, one warp per 32-row segment, one lane per row: the
 *      lanes merge their rows' sorted offsets (warp_min over the lanes'
 *      current entries), so the segment's distinct offsets come out in
 *      ascending order, as sps__diag_scan sorts them; only their number goes
 *      to the host.
 *   2. The host groups the segments (Algorithm 1 works on per-segment counts)
 *      and lays the slots out (dnum in slot order, and the inverse of index):
 *      O(segments), no pass over the nonzeros; one upload of those arrays.
 *   3. scatter_kernel repeats the merge of step 1, a warp per segment, now
 *      knowing the segment's slot: at its k-th distinct offset lane 0 writes
 *      the offset, every lane writes its row's value on that diagonal, or
 *      0 where the row has none (the warp's 32 values are contiguous), and
 *      the map entry of each value written. Every slot is written exactly
 *      once (rows past the end write zeros), so val needs no memset; no
 *      search, and the offsets need no pass of their own.
 * DIA is the one-segment case: a flag per offset, compacted in order, and the
 * same scatter with one global offset list.
 * Values are copied, never combined, so the result is the host's bit for bit.
 * Later value updates scatter through the same map on the device. */
#include "diag_common.h"
#include "core/cuda_check.cuh"

#include <limits.h>
#include <string.h>

namespace {

constexpr int NOFF = INT_MAX; /* no pending offset: above every real one */
constexpr int THREADS = 256;

__device__ int warp_min(int v)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    return __reduce_min_sync(0xffffffffu, v);
#else
    for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
#endif
}

/* The lanes' rows of segment h: r (clamped to m) and its entries [p, pe). */
__device__ void seg_row(const sps_idx *__restrict__ rp, int m, long long h, int lane, int *r,
                        int *p, int *pe)
{
    const long long r64 = h * 32 + lane;
    *r = (int)(r64 < m ? r64 : m);
    *p = *pe = 0;
    if (*r < m) {
        *p = rp[*r];
        *pe = rp[*r + 1];
    }
}

/* counts[h] = the number of distinct offsets of segment h. */
__global__ void seg_count_kernel(const sps_idx *__restrict__ rp, const sps_idx *__restrict__ col,
                                 int m, long long nseg, sps_idx *__restrict__ counts)
{
    const long long h = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (h >= nseg) return; /* whole warps: blockDim is a multiple of 32 */
    const int lane = threadIdx.x & 31;
    int r, p, pe;
    seg_row(rp, m, h, lane, &r, &p, &pe);
    int cur = p < pe ? col[p] - r : NOFF, nxt = p + 1 < pe ? col[p + 1] - r : NOFF;
    sps_idx k = 0;
    for (;;) { /* nxt loaded a step ahead: the load is in flight across the reduction */
        const int mn = warp_min(cur);
        if (mn == NOFF) break;
        k++;
        if (cur == mn) {
            p++;
            cur = nxt;
            nxt = p + 1 < pe ? col[p + 1] - r : NOFF;
        }
    }
    if (lane == 0) counts[h] = k;
}

/* Segment h's offsets, values and map at its slot inv[h]: the merge of
 * seg_count_kernel, writing at each step. */
__global__ void scatter_kernel(const sps_idx *__restrict__ rp, const sps_idx *__restrict__ col,
                               const double *__restrict__ v, int m, long long nseg,
                               const sps_idx *__restrict__ inv, const sps_idx *__restrict__ dnum,
                               sps_idx *__restrict__ off, double *__restrict__ val,
                               sps_idx *__restrict__ map)
{
    const long long h = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    if (h >= nseg) return;
    const int lane = threadIdx.x & 31;
    int r, p, pe;
    seg_row(rp, m, h, lane, &r, &p, &pe);
    /* the lane's entry p (cur, cv) and the next (nxt, nv), loaded a step
     * ahead so that their loads are in flight while the warp reduces */
    int cur = p < pe ? col[p] - r : NOFF, nxt = p + 1 < pe ? col[p + 1] - r : NOFF;
    double cv = p < pe ? v[p] : 0.0, nv = p + 1 < pe ? v[p + 1] : 0.0;
    const sps_idx base = dnum[inv[h]];
    for (sps_idx i = base;; i++) {
        const int mn = warp_min(cur);
        if (mn == NOFF) break;
        const sps_idx pos = i * 32 + lane; /* < slots <= SPS_IDX_MAX (drm.c checks) */
        if (lane == 0) off[i] = mn;
        const bool hit = cur == mn;
        val[pos] = hit ? cv : 0.0;
        if (hit) {
            map[p] = pos;
            p++;
            cur = nxt;
            cv = nv;
            nxt = p + 1 < pe ? col[p + 1] - r : NOFF;
            nv = p + 1 < pe ? v[p + 1] : 0.0;
        }
    }
}

/* DIA: flag every offset that holds an entry (plain stores of 1). */
__global__ void flag_kernel(const sps_idx *__restrict__ rp, const sps_idx *__restrict__ col, int m,
                            unsigned char *__restrict__ flag)
{
    long long r64 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r64 >= m) return;
    int r = (int)r64;
    for (sps_idx p = rp[r]; p < rp[r + 1]; p++) flag[(long long)col[p] - r + m - 1] = 1;
}

/* DIA: position of each entry by binary search in the sorted offsets. */
__global__ void dia_scatter_kernel(const sps_idx *__restrict__ rp, const sps_idx *__restrict__ col,
                                   const double *__restrict__ v, int m, const sps_idx *__restrict__ off,
                                   sps_idx ndiag, double *__restrict__ val, sps_idx *__restrict__ map)
{
    long long r64 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r64 >= m) return;
    int r = (int)r64;
    for (sps_idx p = rp[r]; p < rp[r + 1]; p++) {
        sps_idx d = col[p] - r, lo = 0, hi = ndiag;
        while (lo < hi) {
            sps_idx mid = lo + ((hi - lo) >> 1);
            if (off[mid] < d) lo = mid + 1; else hi = mid;
        }
        sps_idx pos = (sps_idx)((int64_t)lo * m + r);
        val[pos] = v[p];
        map[p] = pos;
    }
}

/* Flagged positions per block of THREADS * 32 positions (one thread per 32). */
__global__ void count_kernel(const unsigned char *__restrict__ flag, long long span,
                             sps_idx *__restrict__ counts)
{
    __shared__ int total;
    if (threadIdx.x == 0) total = 0;
    __syncthreads();
    long long i0 = (long long)blockIdx.x * THREADS * 32 + (long long)threadIdx.x * 32;
    int c = 0;
    for (int k = 0; k < 32; k++) c += i0 + k < span && flag[i0 + k];
    atomicAdd(&total, c);
    __syncthreads();
    if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

/* The offsets of the flagged positions in ascending order (position i is
 * offset i - (m - 1)); start[b] = the block's first output. */
__global__ void compact_kernel(const unsigned char *__restrict__ flag, long long span,
                               const sps_idx *__restrict__ start, int m, sps_idx *__restrict__ out)
{
    __shared__ sps_idx cnt[THREADS];
    long long i0 = (long long)blockIdx.x * THREADS * 32 + (long long)threadIdx.x * 32;
    int c = 0;
    for (int k = 0; k < 32; k++) c += i0 + k < span && flag[i0 + k];
    cnt[threadIdx.x] = c;
    __syncthreads();
    if (threadIdx.x == 0) /* exclusive prefix over the block's threads, in order */
        for (int t = 0, acc = 0; t < THREADS; t++) {
            int x = cnt[t];
            cnt[t] = acc;
            acc += x;
        }
    __syncthreads();
    sps_idx at = start[blockIdx.x] + cnt[threadIdx.x];
    for (int k = 0; k < 32; k++)
        if (i0 + k < span && flag[i0 + k]) out[at++] = (sps_idx)(i0 + k - (m - 1));
}

template <typename T>
__global__ void values_kernel(const sps_idx *__restrict__ map, const double *__restrict__ v,
                              long long n, T *__restrict__ val)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) val[map[i]] = (T)v[i];
}

__global__ void narrow_kernel(const double *__restrict__ a, long long n, float *__restrict__ b)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) b[i] = (float)a[i];
}

unsigned blocks_for(long long threads)
{
    return (unsigned)((threads + THREADS - 1) / THREADS);
}

sps_status to_dev(sps_context *ctx, void **d, const void *h, size_t bytes)
{
    sps_status st = sps__dmalloc(ctx, d, bytes);
    if (st == SPS_OK && bytes) st = sps__h2d_pinned(ctx, 1, d, &h, &bytes, NULL, 0);
    return st;
}

} // namespace

extern "C" sps_status sps__drm_scan_dev(sps_context *ctx, const sps_dcsr *A, sps_idx *cnt,
                                        sps_idx **map)
{
    *map = NULL;
    const int m = A->nrows;
    const long long nseg = ((long long)m + 31) / 32;
    /* the counts in the context's scratch: the map's allocation (nnz words,
     * milliseconds' worth of driver work on large matrices) then overlaps
     * the kernel instead of preceding it */
    void *dc = NULL;
    sps_status st = nseg > 0 ? sps__gpu_scratch(ctx, (size_t)nseg * sizeof(sps_idx), &dc) : SPS_OK;
    if (st == SPS_OK && nseg > 0) {
        seg_count_kernel<<<blocks_for(nseg * 32), THREADS, 0, sps_stream(ctx)>>>(A->row_ptr, A->col_idx,
                                                                                 m, nseg, (sps_idx *)dc);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch seg_count_kernel", __FILE__, __LINE__);
    }
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)map, (A->nnz ? (size_t)A->nnz : 1) * sizeof(sps_idx));
    if (st == SPS_OK && nseg > 0) st = sps__d2h_pinned(ctx, cnt, dc, (size_t)nseg * sizeof(sps_idx));
    if (st != SPS_OK) {
        sps__dfree(*map);
        *map = NULL;
    }
    return st;
}

extern "C" sps_status sps__drm_scatter_dev(sps_context *ctx, const sps_dcsr *A, const sps_idx *blk,
                                           sps_idx nslot, sps_idx nblk, sps_idx *map, sps_idx **dblk,
                                           double **val)
{
    *dblk = NULL;
    *val = NULL;
    const size_t is = sizeof(sps_idx), ndiag = (size_t)blk[nslot], words = SPS_DRM_BLK_WORDS(nslot);
    size_t bytes = (SPS_DRM_BLK_BLO(nslot) + (size_t)nblk + 1) * is; /* blo's unused tail stays */
    sps_status st = sps__dmalloc(ctx, (void **)dblk, (words + ndiag) * is); /* the block, then off */
    if (st == SPS_OK) st = sps__h2d_pinned(ctx, 1, (void *const *)dblk, (const void *const *)&blk, &bytes, NULL, 0);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)val, ndiag * 32 * sizeof(double));
    if (st == SPS_OK && nslot > 0) {
        const sps_idx *d = *dblk;
        scatter_kernel<<<blocks_for((long long)nslot * 32), THREADS, 0, sps_stream(ctx)>>>(
            A->row_ptr, A->col_idx, A->val, A->nrows, nslot, d + SPS_DRM_BLK_AUX(nslot), d, *dblk + words,
            *val, map);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch scatter_kernel", __FILE__, __LINE__);
    }
    if (st != SPS_OK) {
        sps__dfree(*dblk);
        sps__dfree(*val);
        *dblk = NULL;
        *val = NULL;
    }
    return st;
}

/* DIA's distinct offsets, ascending, on the host (*off, *ndiag). */
extern "C" sps_status sps__dia_offsets_dev(sps_context *ctx, const sps_dcsr *A, sps_idx **off,
                                           sps_idx *ndiag)
{
    *off = NULL;
    *ndiag = 0;
    const int m = A->nrows;
    const long long span = (long long)A->nrows + A->ncols;
    const long long nblk = (span + THREADS * 32 - 1) / (THREADS * 32);
    unsigned char *flag = NULL;
    sps_idx *counts = NULL, *start = NULL, *dout = NULL;
    sps_idx *hc = (sps_idx *)sps__malloc(((size_t)nblk + 1) * sizeof(sps_idx));
    cudaStream_t s = sps_stream(ctx);
    sps_status st = hc ? SPS_OK : sps__err(ctx, SPS_ERR_NO_MEMORY, "dia: out of memory");
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&flag, (size_t)span);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&counts, ((size_t)nblk + 1) * sizeof(sps_idx));
    if (st == SPS_OK) st = sps__dmemset(ctx, flag, 0, (size_t)span);
    if (st == SPS_OK && m > 0) {
        flag_kernel<<<blocks_for(m), THREADS, 0, s>>>(A->row_ptr, A->col_idx, m, flag);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch flag_kernel", __FILE__, __LINE__);
    }
    if (st == SPS_OK && nblk > 0) {
        count_kernel<<<(unsigned)nblk, THREADS, 0, s>>>(flag, span, counts);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch count_kernel", __FILE__, __LINE__);
    }
    if (st == SPS_OK) st = sps__d2h(ctx, hc, counts, (size_t)nblk * sizeof(sps_idx));
    int64_t total = 0;
    for (long long b = 0; st == SPS_OK && b < nblk; b++) { /* counts -> block starts */
        sps_idx c = hc[b];
        hc[b] = (sps_idx)total;
        total += c;
    }
    if (st == SPS_OK) st = to_dev(ctx, (void **)&start, hc, (size_t)nblk * sizeof(sps_idx));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&dout, (size_t)total * sizeof(sps_idx));
    if (st == SPS_OK && nblk > 0 && total > 0) {
        compact_kernel<<<(unsigned)nblk, THREADS, 0, s>>>(flag, span, start, m, dout);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch compact_kernel", __FILE__, __LINE__);
    }
    if (st == SPS_OK) {
        *off = (sps_idx *)sps__malloc(((size_t)total + 1) * sizeof(sps_idx));
        if (!*off) st = sps__err(ctx, SPS_ERR_NO_MEMORY, "dia: out of memory");
    }
    if (st == SPS_OK) st = sps__d2h(ctx, *off, dout, (size_t)total * sizeof(sps_idx));
    if (st == SPS_OK) {
        *ndiag = (sps_idx)total;
    } else {
        sps__free(*off);
        *off = NULL;
    }
    sps__free(hc);
    sps__dfree(flag);
    sps__dfree(counts);
    sps__dfree(start);
    sps__dfree(dout);
    return st;
}

/* DIA's values and map on the device, given its sorted offsets (host). */
extern "C" sps_status sps__dia_scatter_dev(sps_context *ctx, const sps_dcsr *A, const sps_idx *off,
                                           sps_idx ndiag, double **val, sps_idx **map)
{
    *val = NULL;
    *map = NULL;
    const size_t slots = (size_t)ndiag * (size_t)A->nrows;
    sps_idx *doff = NULL;
    sps_status st = to_dev(ctx, (void **)&doff, off, (size_t)ndiag * sizeof(sps_idx));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)val, slots * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)map, (size_t)A->nnz * sizeof(sps_idx));
    if (st == SPS_OK) st = sps__dmemset(ctx, *val, 0, slots * sizeof(double));
    if (st == SPS_OK && A->nrows > 0 && A->nnz > 0) {
        dia_scatter_kernel<<<blocks_for(A->nrows), THREADS, 0, sps_stream(ctx)>>>(
            A->row_ptr, A->col_idx, A->val, A->nrows, doff, ndiag, *val, *map);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch dia_scatter_kernel", __FILE__, __LINE__);
    }
    if (st == SPS_OK) st = sps__gpu_sync(ctx);
    sps__dfree(doff);
    if (st != SPS_OK) {
        sps__dfree(*val);
        sps__dfree(*map);
        *val = NULL;
        *map = NULL;
    }
    return st;
}

extern "C" sps_status sps__diag_values_dev(sps_context *ctx, const sps_idx *map, sps_idx nnz,
                                          const double *values, void *val, int single)
{
    if (nnz == 0) return SPS_OK;
    double *tmp = NULL;
    sps_status st = sps__dmalloc(ctx, (void **)&tmp, (size_t)nnz * sizeof(double));
    if (st == SPS_OK) st = sps__upload_values(ctx, tmp, values, (size_t)nnz, 0);
    if (st == SPS_OK) {
        if (single)
            values_kernel<float><<<blocks_for(nnz), THREADS, 0, sps_stream(ctx)>>>(map, tmp, nnz, (float *)val);
        else
            values_kernel<double><<<blocks_for(nnz), THREADS, 0, sps_stream(ctx)>>>(map, tmp, nnz, (double *)val);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch values_kernel", __FILE__, __LINE__);
    }
    if (st == SPS_OK) st = sps__gpu_sync(ctx);
    sps__dfree(tmp);
    return st;
}

extern "C" sps_status sps__narrow_dev(sps_context *ctx, const double *a, size_t n, float *b)
{
    if (n == 0) return SPS_OK;
    narrow_kernel<<<blocks_for((long long)n), THREADS, 0, sps_stream(ctx)>>>(a, (long long)n, b);
    SPS_LAUNCH_CHECK(ctx, "narrow_kernel");
    return sps__gpu_sync(ctx);
}
