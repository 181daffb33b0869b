/* SPDX-License-Identifier: MIT */
/* spsolve/precond/cheby/emu/emu.h: the CUDA pieces cheby_steps.cuh uses, as
 * plain C++ for the CPU emulation (harness.cc, run.sh). A launch runs every
 * thread of the grid one after the other (the kernels share nothing inside a
 * block), in thread order or, with emu_reverse, last thread first. */
#pragma once
#include "solvers/gmres/emu/cuda_words.h"
#include "spmv/backend.h"
#include <cmath>
#include <cstdarg>
extern dim3 blockIdx, threadIdx, gridDim, blockDim;
extern int emu_reverse;
typedef void *cudaStream_t;
inline double __dadd_rn(double a, double b) { volatile double r = a + b; return r; }
inline double __dsub_rn(double a, double b) { volatile double r = a - b; return r; }
inline double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
inline double __fma_rn(double a, double b, double c) { volatile double r = std::fma(a, b, c); return r; }
template <class F> void emu_launch(int grid, int block, F f)
{
    gridDim = dim3(grid);
    blockDim = dim3(block);
    const long long nt = (long long)grid * block;
    for (long long k = 0; k < nt; k++) {
        const long long t = emu_reverse ? nt - 1 - k : k;
        blockIdx = dim3((unsigned)(t / block));
        threadIdx = dim3((unsigned)(t % block));
        f();
    }
}
/* the unfused apply's SpMV: harness.cc */
sps_status emu_spmv(const double *x, double *y);
#define CHEBY_LAUNCH(ctx, s, g, kernel, ...)                                                \
    do {                                                                                    \
        (void)(ctx), (void)(s);                                                             \
        emu_launch((g), CHEBY_BLOCK, [&] { kernel(__VA_ARGS__); });                         \
    } while (0)
#define CHEBY_SPMV(c, x, y) emu_spmv((x), (y))
