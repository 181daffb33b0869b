/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/drm_emu/emu_rt.cc: emu.h's launches (run.sh). */
#include "emu.h"

#include <cstdio>
#include <cstdlib>

emu_dim threadIdx, blockIdx, blockDim, gridDim;
emu_warp *emu_w;

static void lane_main()
{
    emu_warp &w = *emu_w;
    w.body();
    w.state[w.cur] = 2;
    w.live--;
    /* a lane that returns no longer counts at a barrier */
    if (w.arrived > 0 && w.arrived == w.live) {
        w.arrived = 0;
        for (int l = 0; l < 32; l++)
            if (w.state[l] == 1) w.state[l] = 0;
    }
}

void emu_launch(unsigned grid, unsigned block, std::function<void()> body)
{
    if (block % 32) {
        fprintf(stderr, "emu: block of %u threads: not whole warps\n", block);
        exit(2);
    }
    static emu_warp w;
    emu_w = &w;
    w.body = std::move(body);
    gridDim.x = grid;
    blockDim.x = block;
    for (unsigned b = 0; b < grid; b++) {
        blockIdx.x = b;
        for (unsigned base = 0; base < block; base += 32) {
            w.base = base;
            w.live = 32;
            w.arrived = 0;
            for (int l = 0; l < 32; l++) {
                w.state[l] = 0;
                w.stack[l].resize(64 << 10);
                getcontext(&w.uc[l]);
                w.uc[l].uc_stack.ss_sp = w.stack[l].data();
                w.uc[l].uc_stack.ss_size = w.stack[l].size();
                w.uc[l].uc_link = &w.sched;
                makecontext(&w.uc[l], lane_main, 0);
            }
            for (int progress = 1; w.live > 0;) {
                if (!progress) {
                    fprintf(stderr, "emu: warp deadlocked at block %u, lanes %u..\n", b, base);
                    exit(2);
                }
                progress = 0;
                for (int l = 0; l < 32; l++) {
                    if (w.state[l] != 0) continue;
                    w.cur = l;
                    threadIdx.x = base + (unsigned)l;
                    swapcontext(&w.sched, &w.uc[l]);
                    progress = 1;
                }
            }
        }
    }
}
