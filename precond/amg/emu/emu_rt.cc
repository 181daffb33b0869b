/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/emu/emu_rt.cc: the emulation's globals and core/gpu.h's
 * functions on host memory (cuda_emu.h). */
#include "cuda_emu.h"
thread_local emu_dim blockIdx, threadIdx;
emu_dim gridDim, blockDim;
std::barrier<> *emu_bar;
int emu_sync_kernel;
sps_status sps__cuda_fail(sps_context *ctx, cudaError_t, const char *what, const char *file, int line)
{ return sps__err(ctx, SPS_ERR_CUDA, "%s (%s:%d)", what, file, line); }
extern "C" {
sps_status sps__dmalloc(sps_context *, void **p, size_t bytes) { *p = bytes ? malloc(bytes) : NULL; if (*p) memset(*p, 0xa5, bytes); return SPS_OK; }
void sps__dfree(void *p) { free(p); }
sps_status sps__h2d(sps_context *, void *d, const void *s, size_t b) { memcpy(d, s, b); return SPS_OK; }
sps_status sps__d2h(sps_context *, void *d, const void *s, size_t b) { memcpy(d, s, b); return SPS_OK; }
sps_status sps__d2h_pinned(sps_context *, void *d, const void *s, size_t b) { memcpy(d, s, b); return SPS_OK; }
sps_status sps__dmemset(sps_context *, void *p, int v, size_t b) { memset(p, v, b); return SPS_OK; }
sps_status sps__gpu_sync(sps_context *) { return SPS_OK; }
void *sps__gpu_stream(const sps_context *) { return nullptr; }
}
