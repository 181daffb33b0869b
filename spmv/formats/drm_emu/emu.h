/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/drm_emu/emu.h: a CPU emulation of the warp-per-segment
 * kernels of drm_convert.cu (verification only: run.sh). A launch runs its
 * blocks in order and each block's warps one after the other; a warp's 32
 * lanes are fibers (ucontext) on one OS thread, resumed in lane order, and a
 * warp collective (__reduce_min_sync, __shfl_xor_sync) waits for every live
 * lane of the warp: each posts its value, waits, reads, waits. __CUDA_ARCH__
 * is 900, so the kernels take the path the H100 runs. */
#pragma once
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <ucontext.h>
#include <vector>

#define __CUDA_ARCH__ 900
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
using std::min;

struct emu_dim {
    unsigned x = 0, y = 0, z = 0;
};
extern emu_dim threadIdx, blockIdx, blockDim, gridDim;

struct emu_warp {
    ucontext_t sched;
    ucontext_t uc[32];
    std::vector<char> stack[32];
    int state[32]; /* 0 runnable, 1 waiting at the warp barrier, 2 done */
    int cur = 0, live = 0, arrived = 0;
    long long posted[32];
    std::function<void()> body;
    unsigned base = 0; /* threadIdx.x of lane 0 */
};
extern emu_warp *emu_w;

inline void emu_warp_barrier()
{
    emu_warp &w = *emu_w;
    if (++w.arrived == w.live) { /* the last to arrive releases the others */
        w.arrived = 0;
        for (int l = 0; l < 32; l++)
            if (w.state[l] == 1) w.state[l] = 0;
        return;
    }
    w.state[w.cur] = 1;
    swapcontext(&w.uc[w.cur], &w.sched);
}

inline int __reduce_min_sync(unsigned, int v)
{
    emu_warp &w = *emu_w;
    w.posted[w.cur] = v;
    emu_warp_barrier();
    long long m = LLONG_MAX;
    for (int l = 0; l < 32; l++)
        if (w.state[l] != 2) m = std::min(m, w.posted[l]);
    const int r = (int)m;
    emu_warp_barrier();
    return r;
}

inline int __shfl_xor_sync(unsigned, int v, int mask)
{
    emu_warp &w = *emu_w;
    w.posted[w.cur] = v;
    emu_warp_barrier();
    const int r = (int)w.posted[w.cur ^ mask];
    emu_warp_barrier();
    return r;
}

/* kernel<<<grid, block>>>(...) as emu_launch(grid, block, [&] { kernel(...); }). */
void emu_launch(unsigned grid, unsigned block, std::function<void()> body);
