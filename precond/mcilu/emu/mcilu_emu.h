/* SPDX-License-Identifier: MIT */
/* spsolve/precond/mcilu/emu/mcilu_emu.h: what mcilu.cu needs beyond the CPU
 * emulation of precond/amg/emu/cuda_emu.h (verification only: run.sh). */
#pragma once
#include "cuda_emu.h"
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return 0; }
inline cudaStream_t sps_stream(const sps_context *) { return nullptr; }
inline int atomicMin(int *p, int v) { int o = *p; if (v < o) *p = v; return o; }
inline int atomicMax(int *p, int v) { int o = *p; if (v > o) *p = v; return o; }
extern "C" {
int sps__gpu_sm_count(sps_context *ctx);
sps_status sps__d2d(sps_context *ctx, void *dst, const void *src, size_t bytes);
}
inline sps_status sps__h2d_pinned(sps_context *, int n, void *const *dst, const void *const *src, const size_t *bytes,
                                  char *how, size_t how_len)
{
    for (int i = 0; i < n; i++) memcpy(dst[i], src[i], bytes[i]);
    snprintf(how, how_len, "emulated");
    return SPS_OK;
}
