/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/emu/emu_rt.cc: the emulation's globals and core/gpu.h's
 * functions on host memory (cuda_emu.h). */
#include "cuda_emu.h"
thread_local emu_dim blockIdx, threadIdx;
emu_dim gridDim, blockDim;
std::barrier<> *emu_bar;
int emu_sync_kernel;
double emu_now_ms() { return sps__now_ms(); }
std::mutex emu_group_mu;
std::map<uint64_t, std::unique_ptr<std::barrier<>>> *emu_groups;
sps_status sps__cuda_fail(sps_context *ctx, cudaError_t, const char *what, const char *file, int line)
{ return sps__err(ctx, SPS_ERR_CUDA, "%s (%s:%d)", what, file, line); }
extern "C" {
sps_status sps__dmalloc(sps_context *, void **p, size_t bytes) { *p = bytes ? malloc(bytes) : NULL; if (*p) memset(*p, 0xa5, bytes); return SPS_OK; }
void sps__dfree(void *p) { free(p); }
sps_status sps__h2d(sps_context *, void *d, const void *s, size_t b) { memcpy(d, s, b); return SPS_OK; }
sps_status sps__d2h(sps_context *, void *d, const void *s, size_t b) { memcpy(d, s, b); return SPS_OK; }
sps_status sps__d2h_pinned(sps_context *, void *d, const void *s, size_t b) { memcpy(d, s, b); return SPS_OK; }
sps_status sps__d2d(sps_context *, void *d, const void *s, size_t b) { memmove(d, s, b); return SPS_OK; }
sps_status sps__dmemset(sps_context *, void *p, int v, size_t b) { memset(p, v, b); return SPS_OK; }
sps_status sps__gpu_sync(sps_context *) { return SPS_OK; }
void *sps__gpu_stream(const sps_context *) { return nullptr; }
}

int emu_level0_copy;
const sps_dcsr *sps__csr_device_copy(sps_context *ctx, const sps_csr *A)
{
    const sps_dcsr *d = A ? A->dev : NULL;
    if (!d || d->ctx != ctx || d->nrows != A->nrows || d->ncols != A->ncols || d->nnz != A->nnz ||
        d->h_row_ptr != A->row_ptr || d->h_col_idx != A->col_idx || d->h_val != A->val)
        return NULL;
    return d;
}
void sps__dcsr_free(sps_dcsr *d)
{
    if (!d) return;
    free(d->row_ptr);
    free(d->col_idx);
    free(d->val);
    sps__free(d);
}
