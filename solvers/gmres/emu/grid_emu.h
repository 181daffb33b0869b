/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/grid_emu.h: what fuse_harness.cc and
 * dcgs2_harness.cc need beyond onek_emu.h to run gmres_kernels.cu's
 * multi-block kernels on the CPU: the globals onek_emu.h declares, the CUDA
 * words the products use, emu_launch, which runs a launch's blocks one at a
 * time (each block's threads as fibers) in the order emu_order says, and the
 * comparisons both make. The harness defines GRID_EMU_SEED (the shuffle's
 * seed) before including it. */
#ifndef SPS_GRID_EMU_H
#define SPS_GRID_EMU_H

#include "onek_emu.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <vector>

emu_block *emu_b;
dim3 threadIdx, blockIdx, blockDim, gridDim;
double *emu_dyn;
emu_shape *emu_grid;
extern "C" sps_status sps__err(sps_context *, sps_status st, const char *, ...) { return st; }

/* The CUDA words the products use beyond onek_emu.h's. Fibers run one at a
 * time: a fence is nothing, an atomic a plain add. */
inline double __ldg(const double *p) { return *p; }
inline double __ldcg(const double *p) { return *p; }
inline void __threadfence() {}
inline unsigned atomicAdd(unsigned *p, unsigned v)
{
    const unsigned o = *p;
    *p = o + v;
    return o;
}
typedef int cudaError_t;
typedef void *cudaStream_t;
inline cudaStream_t sps_stream(const sps_context *) { return nullptr; }
#define SPS_LAUNCH_CHECK(ctx, name) \
    do {                            \
    } while (0)
#define TPB 256
static inline int sps__kgrid(sps_idx n)
{
    int64_t g = ((int64_t)n + TPB - 1) / TPB;
    return g < 1 ? 1 : g > 1024 ? 1024 : (int)g;
}
#define GRID_STRIDE(i, n) \
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < (n); i += (int64_t)gridDim.x * TPB)
#define LAUNCH(w, kernel, ...) emu_launch(dim3(sps__kgrid((w)->n)), dim3(TPB), [&] { kernel(__VA_ARGS__); })

/* The order the blocks of a launch run in: 0 in order, 1 reversed, 2 shuffled. */
static int emu_order;
static uint64_t emu_seed = GRID_EMU_SEED;

template <class F> void emu_launch(dim3 grid, dim3 block, F f)
{
    const unsigned nb = grid.x * grid.y;
    std::vector<unsigned> ord(nb);
    std::iota(ord.begin(), ord.end(), 0u);
    if (emu_order == 1) std::reverse(ord.begin(), ord.end());
    if (emu_order == 2)
        for (unsigned i = nb; i > 1; i--) {
            emu_seed = emu_seed * 6364136223846793005ull + 1442695040888963407ull;
            std::swap(ord[i - 1], ord[(unsigned)((emu_seed >> 33) % i)]);
        }
    for (unsigned b : ord) {
        emu_shape sh = {grid, block, dim3(b % grid.x, b / grid.x)};
        emu_grid = &sh;
        emu_run_cluster(1, block.x * block.y, 0, f, 64);
        emu_grid = nullptr;
    }
}

/* The harness's tally (its check() counts), and its comparisons: bitwise, and
 * the largest difference relative to b's largest entry. */
static int nfail, nok;

static bool same(const std::vector<double> &a, const std::vector<double> &b)
{
    return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

static double relerr(const std::vector<double> &a, const std::vector<double> &b)
{
    double m = 0, s = 1e-300;
    for (size_t i = 0; i < a.size(); i++) m = std::max(m, fabs(a[i] - b[i])), s = std::max(s, fabs(b[i]));
    return m / s;
}

#endif /* SPS_GRID_EMU_H */
