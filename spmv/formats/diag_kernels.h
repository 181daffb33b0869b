/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/diag_kernels.h: device code shared by drm.cu and dia.cu, an upload helper
 * shared with merge.cu (CUDA C++ only).
 *
 * One thread computes one row: it walks the diagonals of its slot, reading
 * lane t's value of diagonal i at val[i * stride] (the caller has added the
 * lane) and x[row + off[i]]. Consecutive lanes read consecutive values and
 * consecutive x entries: both coalesced; every lane of a warp reads the same
 * off[i] (one broadcast transaction, kept in L1). The loop goes in
 * predicated chunks of 4 diagonals with all loads issued before the
 * multiply-adds, so each thread has up to 8 independent loads in flight: a
 * memory-bound kernel needs bytes in flight, not arithmetic. Values are streamed (__ldcs: evict-first, they are used
 * once); x goes through the read-only path (__ldg) so that its reuse between
 * neighbouring rows and diagonals hits L1/L2. */
#ifndef SPS_DIAG_KERNELS_H
#define SPS_DIAG_KERNELS_H

#ifndef __CUDACC__
#error "diag_kernels.h is for .cu files"
#endif

#include "core/cuda_check.cuh"
#include "csr_fmt.h"
#include "diag_common.h"

#include <cuda_runtime.h>

/* x[c] for c in [0, ncols), else 0 without reading (the stored value there is
 * zero; the index may be negative or past the end). c wraps as unsigned. */
template <typename T>
__device__ __forceinline__ T sps_diag_x(const T *__restrict__ x, unsigned c, unsigned ncols)
{
    return c < ncols ? __ldg(x + c) : T(0);
}

/* sum_{k < nd} val[k * stride] * x[row + off[k]], in order of k.
 * The diagonals go in predicated chunks of SPS_DIAG_CHUNK: a chunk's offset
 * and value loads are all issued before its x gathers, and the x gathers
 * before the multiply-adds, whatever nd is; a tail shorter than a chunk is
 * one more predicated chunk rather than a serial off -> x load chain per
 * diagonal (segments of 7 to 10 diagonals spent most of their loop there).
 * CHUNK 4 is the default; drm:unroll=8 doubles the loads in flight per
 * thread at the price of registers (occupancy). */
template <int CHUNK, typename T>
__device__ __forceinline__ T sps_diag_dot_c(const sps_idx *__restrict__ off,
                                            const T *__restrict__ val, unsigned stride, int nd,
                                            unsigned row, unsigned ncols, const T *__restrict__ x)
{
    T acc = T(0);
    for (int k = 0; k < nd; k += CHUNK) {
        unsigned c[CHUNK];
        T v[CHUNK], xv[CHUNK];
#pragma unroll
        for (int u = 0; u < CHUNK; u++) {
            const bool in = k + u < nd;
            c[u] = in ? row + (unsigned)__ldg(off + k + u) : ncols; /* ncols: not read */
            v[u] = in ? __ldcs(val + (unsigned)(k + u) * stride) : T(0);
        }
#pragma unroll
        for (int u = 0; u < CHUNK; u++) xv[u] = sps_diag_x(x, c[u], ncols);
#pragma unroll
        for (int u = 0; u < CHUNK; u++)
            if (k + u < nd) acc += v[u] * xv[u];
    }
    return acc;
}

template <typename T>
__device__ __forceinline__ T sps_diag_dot(const sps_idx *__restrict__ off,
                                          const T *__restrict__ val, unsigned stride, int nd,
                                          unsigned row, unsigned ncols, const T *__restrict__ x)
{
    return sps_diag_dot_c<4>(off, val, stride, nd, row, ncols, x);
}

/* The block product's row (doc/spmm.md): for the k columns of X (leading
 * dimension ldx) in register chunks of C, acc[c] = sum_{i < nd} val[i *
 * stride] * X[row + off[i], c] in order of i, then Y[row, c] = alpha*acc
 * (+ beta*Y[row, c]). No column index is read: each diagonal's value and
 * offset serve all C columns of a chunk. */
template <int C, bool BETA>
__device__ __forceinline__ void sps_diag_row_multi(const sps_idx *__restrict__ off,
                                                   const double *__restrict__ val, unsigned stride,
                                                   int nd, unsigned row, unsigned ncols, int k,
                                                   const double *__restrict__ X, int64_t ldx,
                                                   double alpha, double beta,
                                                   double *__restrict__ Y, int64_t ldy)
{
    for (int c0 = 0; c0 < k; c0 += C) {
        const int kc = k - c0 < C ? k - c0 : C;
        const double *Xc = X + (int64_t)c0 * ldx;
        double acc[C];
#pragma unroll
        for (int c = 0; c < C; c++) acc[c] = 0.0;
        for (int i = 0; i < nd; i++) {
            const unsigned col = row + (unsigned)__ldg(off + i);
            if (col >= ncols) continue; /* the stored value is zero there */
            const double v = __ldg(val + (unsigned)i * stride);
#pragma unroll
            for (int c = 0; c < C; c++)
                if (c < kc) acc[c] += v * __ldg(Xc + (int64_t)c * ldx + col);
        }
#pragma unroll
        for (int c = 0; c < C; c++) {
            if (c >= kc) continue;
            double *y = Y + (int64_t)(c0 + c) * ldy + row;
            *y = BETA ? alpha * acc[c] + beta * *y : alpha * acc[c];
        }
    }
}

/* y[row] = alpha*acc (+ beta*y[row]); BETA = false never reads y. */
template <typename T, bool BETA>
__device__ __forceinline__ void sps_diag_store(T *__restrict__ y, unsigned row, T acc, T alpha,
                                               T beta)
{
    if (BETA) y[row] = alpha * acc + beta * y[row];
    else y[row] = alpha * acc;
}

/* The fused "SpMV plus dot" (backend.h apply_dot) of the diagonal formats:
 * part[blockIdx.x] = the block's sum of its threads' acc, in a fixed order
 * (warp shuffles, then the B/32 warp sums by warp 0). Every thread of the
 * block calls it. */
template <int B>
__device__ __forceinline__ void sps_diag_dot_partial(double acc, double *__restrict__ part)
{
    __shared__ double sh[B / 32];
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        double t = threadIdx.x < B / 32 ? sh[threadIdx.x] : 0.0;
        for (int o = 16; o > 0; o >>= 1) t += __shfl_down_sync(0xffffffffu, t, o);
        if (threadIdx.x == 0) part[blockIdx.x] = t;
    }
}

/* Blocks of B threads for `threads` work items, at most maxparts (a
 * grid-stride loop covers the rest): a function of the matrix and maxparts
 * only, as apply_dot requires. */
static inline unsigned sps_diag_dot_grid(unsigned long long threads, unsigned B, int maxparts)
{
    unsigned long long g = (threads + B - 1) / B;
    if (g > (unsigned long long)maxparts) g = (unsigned long long)maxparts;
    return g < 1 ? 1u : (unsigned)g;
}

/* Allocate `bytes` of device memory at *dst and copy src there (src NULL:
 * allocate only); *total counts the bytes. */
static inline sps_status sps_diag_alloc_copy(sps_context *ctx, void **dst, const void *src,
                                             size_t bytes, size_t *total)
{
    *total += bytes;
    sps_status st = sps__dmalloc(ctx, dst, bytes);
    if (st == SPS_OK && src) st = sps__h2d(ctx, *dst, src, bytes);
    return st;
}

#endif
