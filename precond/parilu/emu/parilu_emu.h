/* SPDX-License-Identifier: MIT */
/* spsolve/precond/parilu/emu/parilu_emu.h: what parilu.cu needs beyond the
 * CPU emulation of precond/amg/emu/cuda_emu.h (verification only: run.sh). */
#pragma once
#include "cuda_emu.h"
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return 0; }
inline cudaStream_t sps_stream(const sps_context *) { return nullptr; }
inline int atomicMin(int *p, int v) { int o = *p; if (v < o) *p = v; return o; }
inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v)
{
    unsigned long long o = *p;
    if (v < o) *p = v;
    return o;
}
inline double __dsqrt_rn(double a) { volatile double r = std::sqrt(a); return r; }
using std::isfinite;
extern "C" {
int sps__gpu_sm_count(const sps_context *ctx);
sps_status sps__d2d(sps_context *ctx, void *dst, const void *src, size_t bytes);
}
