/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/onek_emu.h: a CPU emulation of one thread block
 * for gmres_kernels.cu's one-kernel path (verification only: run_onek.sh).
 * The block's threads are fibers (ucontext) on one OS thread, resumed in
 * thread order by a scheduler: __syncthreads waits for every live thread of
 * the block, a warp shuffle for the 32 lanes of its warp (each lane posts its
 * value, waits, reads its partner's, waits). __shared__ variables are
 * statics: one block, so one copy, as on the device. */
#pragma once
#include "solvers/gmres/gmres.h"
#include "cuda_words.h"
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ucontext.h>
#include <vector>

struct emu_fiber {
    ucontext_t ctx;
    std::vector<char> stack;
    int wait = 0; /* 0 running, 1 block barrier, 2 warp barrier, 3 done */
    uint64_t gen = 0;
};
struct emu_block {
    ucontext_t sched;
    std::vector<emu_fiber> f;
    int cur = 0, live = 0, nbar = 0;
    uint64_t bgen = 0;
    std::vector<int> wcount;
    std::vector<uint64_t> wgen;
    std::vector<double> wval;
};
extern emu_block *emu_b;
extern dim3 threadIdx, blockIdx, blockDim, gridDim;
extern double *emu_dyn;

inline void emu_yield() { swapcontext(&emu_b->f[emu_b->cur].ctx, &emu_b->sched); }

inline void __syncthreads()
{
    emu_block &b = *emu_b;
    emu_fiber &me = b.f[b.cur];
    if (++b.nbar == b.live) { /* the last to arrive releases the others */
        b.nbar = 0;
        b.bgen++;
        return;
    }
    me.wait = 1;
    me.gen = b.bgen;
    emu_yield();
}

inline void emu_warp_bar()
{
    emu_block &b = *emu_b;
    const int w = b.cur / 32;
    emu_fiber &me = b.f[b.cur];
    if (++b.wcount[w] == 32) {
        b.wcount[w] = 0;
        b.wgen[w]++;
        return;
    }
    me.wait = 2;
    me.gen = b.wgen[w];
    emu_yield();
}

inline double emu_shfl(double v, int src)
{
    emu_block &b = *emu_b;
    const int t = b.cur, base = t & ~31;
    b.wval[t] = v;
    emu_warp_bar();
    const double r = b.wval[base + src];
    emu_warp_bar();
    return r;
}
inline double __shfl_down_sync(unsigned, double v, int off)
{
    const int l = emu_b->cur & 31;
    return emu_shfl(v, l + off < 32 ? l + off : l);
}
inline double __shfl_xor_sync(unsigned, double v, int m) { return emu_shfl(v, (emu_b->cur & 31) ^ m); }

template <class F> struct emu_body {
    static F *fn;
    static void run()
    {
        (*fn)();
        emu_block &b = *emu_b;
        b.f[b.cur].wait = 3;
        b.live--;
        /* a thread that returns no longer counts at a barrier; the others
         * of this kernel return at the same point (uniform exits) */
        if (b.nbar > 0 && b.nbar == b.live) b.nbar = 0, b.bgen++;
    }
};
template <class F> F *emu_body<F>::fn;

/* One block of nt threads running f(); dyn_doubles of dynamic shared memory. */
template <class F> void emu_run_block(unsigned nt, size_t dyn_doubles, F f)
{
    std::vector<double> dyn(dyn_doubles + 1, 0.0);
    emu_dyn = dyn.data();
    emu_block b;
    b.f.resize(nt);
    b.live = (int)nt;
    b.wcount.assign((nt + 31) / 32, 0);
    b.wgen.assign((nt + 31) / 32, 0);
    b.wval.assign(nt, 0.0);
    emu_b = &b;
    emu_body<F>::fn = &f;
    blockIdx = dim3(0);
    gridDim = dim3(1);
    blockDim = dim3(nt);
    for (unsigned t = 0; t < nt; t++) {
        emu_fiber &fb = b.f[t];
        fb.stack.resize(256 << 10);
        getcontext(&fb.ctx);
        fb.ctx.uc_stack.ss_sp = fb.stack.data();
        fb.ctx.uc_stack.ss_size = fb.stack.size();
        fb.ctx.uc_link = &b.sched;
        makecontext(&fb.ctx, (void (*)())emu_body<F>::run, 0);
    }
    for (;;) {
        int ran = 0, done = 0;
        for (unsigned t = 0; t < nt; t++) {
            emu_fiber &fb = b.f[t];
            if (fb.wait == 3) {
                done++;
                continue;
            }
            if (fb.wait == 1 && fb.gen == b.bgen) continue;
            if (fb.wait == 2 && fb.gen == b.wgen[t / 32]) continue;
            fb.wait = 0;
            b.cur = (int)t;
            threadIdx = dim3(t);
            swapcontext(&b.sched, &fb.ctx);
            ran++;
        }
        if (done == (int)nt) break;
        if (!ran) {
            fprintf(stderr, "onek emu: deadlock (threads waiting at different barriers)\n");
            exit(2);
        }
    }
    emu_b = nullptr;
}
