/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/emu/cuda_emu.h: a CPU emulation of the CUDA pieces
 * amg_dsetup.cu uses, to run its kernels on a machine without a GPU
 * (verification only, never built into the library: run.sh). A launch runs
 * its blocks in order and each block's threads one after the other, or as
 * std::threads with a barrier for the kernels that call __syncthreads or
 * __syncwarp (a barrier per warp and lane mask; atomics are real atomics);
 * the __*_rn intrinsics are plain IEEE operations (volatile: no
 * contraction); cub's scan and stable radix sort are std:: loops; core/gpu.h's
 * memory functions work on host memory (new allocations filled with 0xa5, so
 * a read of memory nobody wrote shows). */
#pragma once
#include "internal.h"
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
#define __global__
#define __device__
#define __host__
#define __shared__ static
struct emu_dim { unsigned x = 0; };
extern thread_local emu_dim blockIdx, threadIdx;
extern emu_dim gridDim, blockDim;
extern std::barrier<> *emu_bar;
inline void __syncthreads() { emu_bar->arrive_and_wait(); }
inline void __threadfence_block() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
/* __syncwarp(mask): a barrier of the lanes in mask of this thread's warp (one
 * per warp and mask, made on first use in the block: emu_launch clears
 * them); only in kernels run as threads (emu_sync_kernel). */
extern std::mutex emu_group_mu;
extern std::map<uint64_t, std::unique_ptr<std::barrier<>>> *emu_groups;
inline void __syncwarp(unsigned mask = 0xffffffffu)
{
    std::barrier<> *b;
    {
        std::lock_guard<std::mutex> g(emu_group_mu);
        auto &p = (*emu_groups)[(uint64_t)(threadIdx.x >> 5) << 32 | mask];
        if (!p) p.reset(new std::barrier<>(__builtin_popcount(mask)));
        b = p.get();
    }
    b->arrive_and_wait();
}
typedef int cudaError_t;
typedef void *cudaStream_t;
const int cudaSuccess = 0;
inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t) { memset(p, v, n); return 0; }
/* the stream-ordered allocator and a pool: host memory (filled with 0xa5
 * like sps__dmalloc's), pool calls that do nothing */
const int cudaErrorMemoryAllocation = 2;
typedef void *cudaMemPool_t;
enum cudaMemPoolAttr { cudaMemPoolAttrReleaseThreshold = 4 };
enum cudaDeviceAttr { cudaDevAttrMemoryPoolsSupported = 115 };
enum { cudaMemAllocationTypePinned = 1, cudaMemHandleTypeNone = 0, cudaMemLocationTypeDevice = 1 };
struct cudaMemPoolProps {
    int allocType, handleTypes;
    struct { int type, id; } location;
};
inline cudaError_t cudaMallocFromPoolAsync(void **p, size_t n, cudaMemPool_t, cudaStream_t) { *p = malloc(n ? n : 1); memset(*p, 0xa5, n); return 0; }
inline cudaError_t cudaFreeAsync(void *p, cudaStream_t) { free(p); return 0; }
inline cudaError_t cudaGetDevice(int *d) { *d = 0; return 0; }
/* the kernel preload (loading is the runtime's: nothing to load here) */
inline cudaError_t cudaSetDevice(int) { return 0; }
struct cudaFuncAttributes { int maxThreadsPerBlock; };
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, const void *) { a->maxThreadsPerBlock = 1024; return 0; }
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int) { *v = 1; return 0; }
inline cudaError_t cudaMemPoolCreate(cudaMemPool_t *p, const cudaMemPoolProps *) { static char pool; *p = &pool; return 0; }
inline cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void *) { return 0; }
inline cudaError_t cudaMemPoolDestroy(cudaMemPool_t) { return 0; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return 0; }
/* events (the step timer): the host's clock at the record (launches run at once) */
typedef double *cudaEvent_t;
double emu_now_ms();
inline cudaError_t cudaEventCreate(cudaEvent_t *e) { *e = new double(0.0); return 0; }
inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t) { *e = emu_now_ms(); return 0; }
inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return 0; }
inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b) { *ms = (float)(*b - *a); return 0; }
inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return 0; }
inline double __dadd_rn(double a, double b) { volatile double r = a + b; return r; }
inline double __dsub_rn(double a, double b) { volatile double r = a - b; return r; }
inline double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
inline double __ddiv_rn(double a, double b) { volatile double r = a / b; return r; }
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicOr(unsigned *p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
inline int atomicCAS(int *p, int cmp, int v) { __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); return cmp; }
sps_status sps__cuda_fail(sps_context *ctx, cudaError_t e, const char *what, const char *file, int line);
#define SPS_CUDA(ctx, call) do { if ((call) != 0) return sps__err((ctx), SPS_ERR_CUDA, "%s", #call); } while (0)
#define SPS_LAUNCH_CHECK(ctx, name) do { } while (0)
extern int emu_sync_kernel; /* 1: run threads of a block as std::threads (kernels with __syncthreads) */
template <class F> void emu_launch(int grid, int block, F f)
{
    gridDim.x = grid; blockDim.x = block;
    for (int b = 0; b < grid; b++) {
        if (!emu_sync_kernel) {
            for (int t = 0; t < block; t++) { blockIdx.x = b; threadIdx.x = t; f(); }
            continue;
        }
        std::barrier<> bar(block);
        emu_bar = &bar;
        std::map<uint64_t, std::unique_ptr<std::barrier<>>> groups;
        emu_groups = &groups;
        std::vector<std::thread> th;
        for (int t = 0; t < block; t++) th.emplace_back([&, t, b] { blockIdx.x = b; threadIdx.x = t; f(); });
        for (auto &x : th) x.join();
    }
}
namespace cub {
struct DeviceScan {
    template <class T> static cudaError_t InclusiveSum(void *tmp, size_t &bytes, const T *in, T *out, int n, cudaStream_t)
    {
        if (!tmp) { bytes = 16; return 0; }
        T s = 0;
        for (int i = 0; i < n; i++) { s += in[i]; out[i] = s; }
        return 0;
    }
};
struct DeviceRadixSort {
    static cudaError_t SortPairs(void *tmp, size_t &bytes, const unsigned *kin, unsigned *kout, const int *vin, int *vout,
                                 int n, int b0, int b1, cudaStream_t)
    {
        (void)b0;
        if (!tmp) { bytes = 16; return 0; }
        std::vector<int> ix(n);
        for (int i = 0; i < n; i++) ix[i] = i;
        unsigned mask = b1 >= 32 ? ~0u : ((1u << b1) - 1);
        std::stable_sort(ix.begin(), ix.end(), [&](int a, int c) { return (kin[a] & mask) < (kin[c] & mask); });
        for (int i = 0; i < n; i++) { kout[i] = kin[ix[i]]; vout[i] = vin[ix[i]]; }
        return 0;
    }
};
}
/* core/gpu.h's device copy of a CSR (absent in a --without-cuda build) */
typedef struct sps_dcsr {
    sps_context *ctx;
    const void *h_row_ptr, *h_col_idx, *h_val;
    sps_idx nrows, ncols, nnz;
    sps_idx *row_ptr, *col_idx;
    double *val;
    size_t bytes;
    double upload_ms, gbps;
    char how[16];
} sps_dcsr;
/* emu_level0_copy: 1 to hand level 0 a device copy (the caller's), 0: upload */
extern int emu_level0_copy;
const sps_dcsr *sps__csr_device_copy(sps_context *ctx, const sps_csr *A);
void sps__dcsr_free(sps_dcsr *d);
/* core/gpu.h's functions on host memory */
extern "C" {
sps_status sps__dmalloc(sps_context *ctx, void **p, size_t bytes);
void sps__dfree(void *p);
sps_status sps__h2d(sps_context *ctx, void *dst, const void *src, size_t bytes);
sps_status sps__d2h(sps_context *ctx, void *dst, const void *src, size_t bytes);
sps_status sps__d2h_pinned(sps_context *ctx, void *dst, const void *src, size_t bytes);
sps_status sps__d2d(sps_context *ctx, void *dst, const void *src, size_t bytes);
sps_status sps__dmemset(sps_context *ctx, void *p, int byte, size_t bytes);
sps_status sps__gpu_sync(sps_context *ctx);
void *sps__gpu_stream(const sps_context *ctx);
}
