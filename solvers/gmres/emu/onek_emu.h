/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/onek_emu.h: a CPU emulation of one thread block
 * for gmres_kernels.cu's one-kernel path (verification only: run_onek.sh).
 * The block's threads are fibers (ucontext) on one OS thread, resumed in
 * thread order by a scheduler: __syncthreads waits for every live thread of
 * the block, a warp shuffle for the 32 lanes of its warp (each lane posts its
 * value, waits, reads its partner's, waits). __shared__ variables are
 * statics: one block, so one copy, as on the device. A cluster of blocks
 * (gmres_kernels.cu k_gm_cluster, which keeps its shared data in the dynamic
 * array, one a block here) runs every block's fibers under one scheduler:
 * cluster.sync waits for every live thread of every block, map_shared_rank
 * points into the other block's dynamic array. */
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
    char *stack = nullptr; /* in emu_stacks: kept from launch to launch, never zeroed */
    int wait = 0; /* 0 running, 1 block barrier, 2 warp barrier, 3 done, 4 cluster barrier */
    uint64_t gen = 0;
};
/* The blocks of a launch (one, or a cluster of nblk), their nt threads each
 * as fibers nt b .. nt (b + 1) - 1; cur: the fiber running. */
struct emu_block {
    ucontext_t sched;
    std::vector<emu_fiber> f;
    int cur = 0, nt = 0, nblk = 1;
    std::vector<int> live, nbar; /* per block */
    std::vector<uint64_t> bgen;
    int clive = 0, cbar = 0; /* the cluster's */
    uint64_t cgen = 0;
    std::vector<int> wcount;
    std::vector<uint64_t> wgen;
    std::vector<double> wval;
    std::vector<double *> dyn; /* each block's dynamic shared memory */
};
extern emu_block *emu_b;
extern dim3 threadIdx, blockIdx, blockDim, gridDim;
extern double *emu_dyn;
/* One block of a grid launch (fuse_harness.cc): the launch's grid and block
 * shapes and this block's index; nullptr (the one kernel, a cluster): a
 * one-dimensional block of nt threads, blocks numbered by rank. */
struct emu_shape {
    dim3 grid, block, bidx;
};
extern emu_shape *emu_grid;

/* clock64() for the cluster kernel's profiling instantiation: a count that
 * rises at every read (so within a thread, in its order). */
inline long long clock64()
{
    static long long c;
    return ++c;
}

inline void emu_yield() { swapcontext(&emu_b->f[emu_b->cur].ctx, &emu_b->sched); }

inline void __syncthreads()
{
    emu_block &b = *emu_b;
    emu_fiber &me = b.f[b.cur];
    const int k = b.cur / b.nt;
    if (++b.nbar[k] == b.live[k]) { /* the last to arrive releases the others */
        b.nbar[k] = 0;
        b.bgen[k]++;
        return;
    }
    me.wait = 1;
    me.gen = b.bgen[k];
    emu_yield();
}

/* cluster.sync(): every live thread of every block of the cluster. */
inline void emu_cluster_sync()
{
    emu_block &b = *emu_b;
    emu_fiber &me = b.f[b.cur];
    if (++b.cbar == b.clive) {
        b.cbar = 0;
        b.cgen++;
        return;
    }
    me.wait = 4;
    me.gen = b.cgen;
    emu_yield();
}

/* cooperative_groups' cluster as the cluster kernel uses it: the rank, the
 * size, the barrier, and another block's shared memory at the same offset
 * (map_shared_rank: a pointer into that block's dynamic shared array). */
namespace cg {
struct cluster_group {
    unsigned block_rank() const { return blockIdx.x; }
    unsigned num_blocks() const { return (unsigned)emu_b->nblk; }
    void sync() const { emu_cluster_sync(); }
    template <class T> T *map_shared_rank(T *p, unsigned r) const
    {
        const char *mine = (const char *)emu_b->dyn[blockIdx.x];
        return (T *)((char *)emu_b->dyn[r] + ((const char *)p - mine));
    }
};
inline cluster_group this_cluster() { return cluster_group(); }
} /* namespace cg */

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
/* An unsigned through a double: exact below 2^53. */
inline unsigned __shfl_sync(unsigned, unsigned v, int src) { return (unsigned)emu_shfl((double)v, src); }

template <class F> struct emu_body {
    static F *fn;
    static void run()
    {
        (*fn)();
        emu_block &b = *emu_b;
        const int k = b.cur / b.nt;
        b.f[b.cur].wait = 3;
        b.live[k]--;
        b.clive--;
        /* a thread that returns no longer counts at a barrier; the others
         * of this kernel return at the same point (uniform exits) */
        if (b.nbar[k] > 0 && b.nbar[k] == b.live[k]) b.nbar[k] = 0, b.bgen[k]++;
        if (b.cbar > 0 && b.cbar == b.clive) b.cbar = 0, b.cgen++;
    }
};
template <class F> F *emu_body<F>::fn;

/* A cluster of nblk blocks of nt threads (nt a multiple of 32 where there
 * are several blocks) running f(); dyn_doubles of dynamic shared memory
 * each; stack_kib of stack a thread. */
template <class F> void emu_run_cluster(int nblk, unsigned nt, size_t dyn_doubles, F f, size_t stack_kib = 256)
{
    std::vector<std::vector<double>> dyn((size_t)nblk, std::vector<double>(dyn_doubles + 1, 0.0));
    const unsigned all = nt * (unsigned)nblk;
    emu_block b;
    b.nt = (int)nt;
    b.nblk = nblk;
    b.f.resize(all);
    b.live.assign((size_t)nblk, (int)nt);
    b.nbar.assign((size_t)nblk, 0);
    b.bgen.assign((size_t)nblk, 0);
    b.clive = (int)all;
    b.wcount.assign((all + 31) / 32, 0);
    b.wgen.assign((all + 31) / 32, 0);
    b.wval.assign(all, 0.0);
    for (int k = 0; k < nblk; k++) b.dyn.push_back(dyn[(size_t)k].data());
    emu_b = &b;
    emu_body<F>::fn = &f;
    gridDim = emu_grid ? emu_grid->grid : dim3((unsigned)nblk);
    blockDim = emu_grid ? emu_grid->block : dim3(nt);
    static std::vector<char> emu_stacks;
    const size_t sb = stack_kib << 10;
    if (emu_stacks.size() < all * sb) emu_stacks.resize(all * sb);
    for (unsigned t = 0; t < all; t++) {
        emu_fiber &fb = b.f[t];
        fb.stack = emu_stacks.data() + t * sb;
        getcontext(&fb.ctx);
        fb.ctx.uc_stack.ss_sp = fb.stack;
        fb.ctx.uc_stack.ss_size = sb;
        fb.ctx.uc_link = &b.sched;
        makecontext(&fb.ctx, (void (*)())emu_body<F>::run, 0);
    }
    for (;;) {
        int ran = 0, done = 0;
        for (unsigned t = 0; t < all; t++) {
            emu_fiber &fb = b.f[t];
            const unsigned k = t / nt;
            if (fb.wait == 3) {
                done++;
                continue;
            }
            if (fb.wait == 1 && fb.gen == b.bgen[k]) continue;
            if (fb.wait == 2 && fb.gen == b.wgen[t / 32]) continue;
            if (fb.wait == 4 && fb.gen == b.cgen) continue;
            fb.wait = 0;
            b.cur = (int)t;
            threadIdx = emu_grid ? dim3(t % nt % blockDim.x, t % nt / blockDim.x) : dim3(t % nt);
            blockIdx = emu_grid ? emu_grid->bidx : dim3(k);
            emu_dyn = b.dyn[k];
            swapcontext(&b.sched, &fb.ctx);
            ran++;
        }
        if (done == (int)all) break;
        if (!ran) {
            fprintf(stderr, "onek emu: deadlock (threads waiting at different barriers)\n");
            exit(2);
        }
    }
    emu_b = nullptr;
}

/* One block of nt threads running f(); dyn_doubles of dynamic shared memory. */
template <class F> void emu_run_block(unsigned nt, size_t dyn_doubles, F f)
{
    emu_run_cluster(1, nt, dyn_doubles, f);
}
