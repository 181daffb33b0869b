/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/cuda_words.h: the CUDA keywords and dim3 as plain
 * C++ for the CPU emulations of gmres_kernels.cu (gm_emu.h: the products,
 * threads; onek_emu.h: the one kernel, fibers). __shared__ variables become
 * statics: one block at a time, so one copy, as on the device. */
#pragma once
#include <algorithm>
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
using std::min;
/* the read-only cache's load: a plain one */
template <class T> inline T __ldg(const T *p) { return *p; }
/* the L2-only load: a plain one */
template <class T> inline T __ldcg(const T *p) { return *p; }
struct dim3 {
    unsigned x = 1, y = 1, z = 1;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
