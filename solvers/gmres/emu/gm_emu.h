/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/gm_emu.h: a CPU emulation of the CUDA pieces the
 * Gram-Schmidt products of gmres_kernels.cu use (verification only: run.sh).
 * A launch runs its blocks in order, each block's threads as std::threads;
 * __syncthreads is a block barrier, a warp shuffle a barrier of its warp's
 * lanes around an exchange array. */
#pragma once
#include "solvers/gmres/gmres.h"
#include "cuda_words.h"
#include <atomic>
#include <barrier>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>
extern thread_local dim3 blockIdx, threadIdx;
extern dim3 gridDim, blockDim;
extern std::barrier<> *emu_bar;
struct emu_warp {
    std::unique_ptr<std::barrier<>> bar;
    double val[32];
};
extern std::vector<emu_warp> *emu_warps;
inline void __syncthreads() { emu_bar->arrive_and_wait(); }
inline double __ldg(const double *p) { return *p; }
inline double __ldcg(const double *p) { return *p; }
inline double __shfl_down_sync(unsigned, double v, int off)
{
    const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
    emu_warp &w = (*emu_warps)[t / 32];
    const unsigned l = t % 32;
    w.val[l] = v;
    w.bar->arrive_and_wait();
    const double r = l + off < 32 ? w.val[l + off] : v;
    w.bar->arrive_and_wait();
    return r;
}
inline double __shfl_sync(unsigned, double v, int src)
{
    const unsigned t = threadIdx.y * blockDim.x + threadIdx.x;
    emu_warp &w = (*emu_warps)[t / 32];
    w.val[t % 32] = v;
    w.bar->arrive_and_wait();
    const double r = w.val[src];
    w.bar->arrive_and_wait();
    return r;
}
inline unsigned __shfl_sync(unsigned m, unsigned v, int src) { return (unsigned)__shfl_sync(m, (double)v, src); }
inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
typedef int cudaError_t;
typedef void *cudaStream_t;
inline cudaStream_t sps_stream(const sps_context *) { return nullptr; }
#define SPS_LAUNCH_CHECK(ctx, name) do { } while (0)
#define TPB 256
static inline int sps__kgrid(sps_idx n)
{
    int64_t g = ((int64_t)n + TPB - 1) / TPB;
    return g < 1 ? 1 : g > 1024 ? 1024 : (int)g;
}
#define GRID_STRIDE(i, n)                                                                   \
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < (n);                     \
         i += (int64_t)gridDim.x * TPB)
#define LAUNCH(w, kernel, ...) emu_launch(dim3(sps__kgrid((w)->n)), dim3(TPB), [&] { kernel(__VA_ARGS__); })
template <class F> void emu_launch(dim3 grid, dim3 block, F f)
{
    gridDim = grid;
    blockDim = block;
    const unsigned nt = block.x * block.y;
    for (unsigned by = 0; by < grid.y; by++)
        for (unsigned bx = 0; bx < grid.x; bx++) {
            std::barrier<> bar(nt);
            emu_bar = &bar;
            std::vector<emu_warp> warps((nt + 31) / 32);
            for (unsigned k = 0; k < warps.size(); k++)
                warps[k].bar.reset(new std::barrier<>(std::min(32u, nt - 32 * k)));
            emu_warps = &warps;
            std::vector<std::thread> th;
            for (unsigned t = 0; t < nt; t++)
                th.emplace_back([&, t, bx, by] {
                    blockIdx = dim3(bx, by);
                    threadIdx = dim3(t % block.x, t / block.x);
                    f();
                });
            for (auto &x : th) x.join();
        }
}
