/* SPDX-License-Identifier: MIT */
/* spsolve/core/context.c: contexts (device selection, handles) */
#include "gpu.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sps_device_count(void)
{
#if SPS_HAVE_CUDA
    char why[512];
    int n = sps__gpu_count(why, sizeof why);
    if (n == 0) sps__err(NULL, SPS_ERR_NO_DEVICE, "%s", why);
    return n;
#else
    sps__err(NULL, SPS_ERR_NOT_COMPILED, "built without CUDA (./configure found no nvcc)");
    return 0;
#endif
}

sps_status sps_context_create(sps_context **out, int device)
{
    if (!out) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_context_create: ctx is NULL");
    *out = NULL;
    if (device == SPS_DEVICE_AUTO) { /* device 0, else the host when there is no GPU */
        sps_status st = sps_context_create(out, 0);
        if (st != SPS_ERR_NO_DEVICE) return st; /* a GPU that fails otherwise is an error */
        return sps_context_create(out, SPS_DEVICE_HOST); /* keeps sps_last_error(NULL) */
    }
    if (device < SPS_DEVICE_HOST)
        return sps__err(NULL, SPS_ERR_INVALID_ARG,
                        "sps_context_create: device %d is neither an ordinal, SPS_DEVICE_HOST nor SPS_DEVICE_AUTO",
                        device);
    sps_context *ctx = sps__calloc(1, sizeof *ctx);
    if (!ctx) return sps__err(NULL, SPS_ERR_NO_MEMORY, "sps_context_create: out of memory");
    ctx->device = device;
    if (device == SPS_DEVICE_HOST) {
        sps__strlcpy(ctx->name, "host (CPU reference path)", sizeof ctx->name);
        *out = ctx;
        return SPS_OK;
    }
#if SPS_HAVE_CUDA
    sps_status st = sps__gpu_init(ctx, device);
    if (st != SPS_OK) {
        sps__err(NULL, st, "%s", ctx->msg); /* keep the message for sps_last_error(NULL) */
        sps__gpu_fini(ctx);
        sps__free(ctx);
        return st;
    }
    *out = ctx;
    return SPS_OK;
#else
    sps__free(ctx);
    return sps__err(NULL, SPS_ERR_NO_DEVICE,
                    "no CUDA device: this spsolve was built without CUDA (./configure found no nvcc)");
#endif
}

void sps_context_destroy(sps_context *ctx)
{
    if (!ctx) return;
#if SPS_HAVE_CUDA
    if (ctx->gpu) sps__gpu_fini(ctx);
#endif
    sps__free(ctx->ws);
    sps__free(ctx);
}

void *sps__host_ws(sps_context *ctx, size_t bytes)
{
    if (!ctx || bytes > SPS_HOST_WS_MAX) return NULL;
    if (bytes <= ctx->ws_bytes) return ctx->ws;
    sps__free(ctx->ws);
    ctx->ws = sps__malloc(bytes);
    ctx->ws_bytes = ctx->ws ? bytes : 0;
    return ctx->ws;
}

int sps_context_on_gpu(const sps_context *ctx) { return ctx && ctx->gpu != NULL; }

const char *sps_context_device_name(const sps_context *ctx)
{
    return ctx ? ctx->name : "";
}

sps_status sps_context_set_threads(sps_context *ctx, int nthreads)
{
    if (!ctx) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_context_set_threads: ctx is NULL");
    if (nthreads < 0 || nthreads > SPS_MAX_THREADS)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "sps_context_set_threads: %d threads (0 = the online cores, or 1 to %d)", nthreads,
                        SPS_MAX_THREADS);
    ctx->threads = nthreads;
    return SPS_OK;
}

int sps_context_threads(const sps_context *ctx) { return sps__threads(ctx); }

int sps__pass_on_device(const sps_context *ctx, int64_t nnz, const char *env)
{
    const char *e = getenv(env);
    if (!ctx || !ctx->gpu || (e && strcmp(e, "host") == 0)) return 0;
    return (e && strcmp(e, "device") == 0) || nnz >= SPS_DEVICE_MIN_NNZ;
}

int sps__threads(const sps_context *ctx)
{
    long n = ctx && ctx->threads > 0 ? ctx->threads : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > SPS_MAX_THREADS ? SPS_MAX_THREADS : (int)n;
}
