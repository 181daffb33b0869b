/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/engine_cuda.cu: the graph engine's CUDA calls (engine.h).
 * A batch is captured from the context's (non-blocking) stream in thread-local
 * mode, so that another thread's CUDA calls cannot invalidate it; a capture
 * that fails leaves nothing run and the stream usable. */
#include "../core/cuda_check.cuh"
#include "engine.h"

extern "C" sps_status sps__graph_begin(sps_context *ctx)
{
    SPS_CUDA(ctx, cudaStreamBeginCapture(sps_stream(ctx), cudaStreamCaptureModeThreadLocal));
    return SPS_OK;
}

extern "C" sps_status sps__graph_end(sps_context *ctx, void **exec)
{
    cudaGraph_t g = NULL;
    cudaGraphExec_t x = NULL;
    *exec = NULL;
    cudaError_t e = cudaStreamEndCapture(sps_stream(ctx), &g);
    if (e == cudaSuccess && !g) e = cudaErrorStreamCaptureInvalidated;
    if (e == cudaSuccess) e = cudaGraphInstantiate(&x, g, 0);
    if (g) {
        cudaError_t d = cudaGraphDestroy(g);
        if (e == cudaSuccess) e = d;
    }
    if (e != cudaSuccess) {
        (void)cudaGetLastError(); /* a capture error is not sticky: clear it */
        if (x) (void)cudaGraphExecDestroy(x);
        return sps__cuda_fail(ctx, e, "graph capture", __FILE__, __LINE__);
    }
    *exec = (void *)x;
    return SPS_OK;
}

extern "C" sps_status sps__graph_launch(sps_context *ctx, void *exec)
{
    SPS_CUDA(ctx, cudaGraphLaunch((cudaGraphExec_t)exec, sps_stream(ctx)));
    return SPS_OK;
}

extern "C" void sps__graph_free(void *exec)
{
    if (exec) (void)cudaGraphExecDestroy((cudaGraphExec_t)exec);
}

/* ---- the whole loop as one launch: a conditional while node --------------
 * The outer graph: a memset of the round counter, then a while node whose
 * body is `len` iterations captured from the stream followed by k_while_cond,
 * which keeps the loop going while the state's stop flag is 0 and fewer than
 * `cap` rounds ran (a bound the state's own maxit stop makes unreachable: it
 * only keeps a defect from looping forever). Needs conditional nodes
 * (CUDA 12.4); without them begin returns SPS_ERR_UNSUPPORTED. */
#if CUDART_VERSION >= 12040
struct sps_gwhile {
    cudaGraph_t g;              /* until instantiated */
    cudaGraphExec_t exec;
    cudaGraphConditionalHandle h;
    unsigned long long *rounds; /* device */
};

__global__ void k_while_cond(cudaGraphConditionalHandle h, const long long *stop,
                             unsigned long long *rounds, unsigned long long cap)
{
    const unsigned long long r = ++*rounds;
    cudaGraphSetConditional(h, (*stop == 0 && r < cap) ? 1u : 0u);
}

static void gwhile_free(sps_gwhile *w)
{
    if (!w) return;
    if (w->g) (void)cudaGraphDestroy(w->g);
    if (w->rounds) (void)cudaFree(w->rounds);
    free(w);
}

extern "C" sps_status sps__graph_while_begin(sps_context *ctx, sps_gwhile **out)
{
    *out = NULL;
    sps_gwhile *w = (sps_gwhile *)calloc(1, sizeof *w);
    if (!w) return sps__err(ctx, SPS_ERR_NO_MEMORY, "graph: out of host memory");
    cudaGraphNode_t set = NULL, loop = NULL;
    cudaError_t e = cudaMalloc((void **)&w->rounds, sizeof *w->rounds);
    if (e == cudaSuccess) e = cudaGraphCreate(&w->g, 0);
    if (e == cudaSuccess) e = cudaGraphConditionalHandleCreate(&w->h, w->g, 1, cudaGraphCondAssignDefault);
    if (e == cudaSuccess) {
        cudaMemsetParams mp;
        memset(&mp, 0, sizeof mp);
        mp.dst = w->rounds;
        mp.value = 0;
        mp.elementSize = 1;
        mp.width = sizeof *w->rounds;
        mp.height = 1;
        e = cudaGraphAddMemsetNode(&set, w->g, NULL, 0, &mp);
    }
    cudaGraph_t body = NULL;
    if (e == cudaSuccess) {
        /* zeroed as the API asks (its union has no default constructor) */
        cudaGraphNodeParams *cp = (cudaGraphNodeParams *)calloc(1, sizeof *cp);
        if (!cp) e = cudaErrorMemoryAllocation;
        if (cp) {
            cp->type = cudaGraphNodeTypeConditional;
            cp->conditional.handle = w->h;
            cp->conditional.type = cudaGraphCondTypeWhile;
            cp->conditional.size = 1;
            e = cudaGraphAddNode(&loop, w->g, &set, NULL, 1, cp);
            if (e == cudaSuccess) body = cp->conditional.phGraph_out[0];
            free(cp);
        }
    }
    if (e == cudaSuccess)
        e = cudaStreamBeginCaptureToGraph(sps_stream(ctx), body, NULL, NULL, 0,
                                          cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        gwhile_free(w);
        return sps__cuda_fail(ctx, e, "graph: conditional while node", __FILE__, __LINE__);
    }
    *out = w;
    return SPS_OK;
}

extern "C" sps_status sps__graph_while_end(sps_context *ctx, sps_gwhile *w, const int64_t *stop,
                                           int64_t cap, void **exec)
{
    *exec = NULL;
    cudaStream_t s = sps_stream(ctx);
    k_while_cond<<<1, 1, 0, s>>>(w->h, (const long long *)stop, w->rounds,
                                 (unsigned long long)(cap > 0 ? cap : 1));
    cudaError_t e = cudaGetLastError();
    cudaGraph_t body = NULL;
    cudaError_t c = cudaStreamEndCapture(s, &body); /* ends it whatever e says */
    if (e == cudaSuccess) e = c;
    cudaGraphExec_t x = NULL;
    if (e == cudaSuccess) e = cudaGraphInstantiate(&x, w->g, 0);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        if (x) (void)cudaGraphExecDestroy(x);
        gwhile_free(w);
        return sps__cuda_fail(ctx, e, "graph: conditional while node", __FILE__, __LINE__);
    }
    /* the exec keeps its own copy of the graph; the counter stays with it */
    (void)cudaGraphDestroy(w->g);
    w->g = NULL;
    w->exec = x;
    *exec = (void *)w;
    return SPS_OK;
}

extern "C" sps_status sps__graph_while_launch(sps_context *ctx, void *wh)
{
    SPS_CUDA(ctx, cudaGraphLaunch(((sps_gwhile *)wh)->exec, sps_stream(ctx)));
    return SPS_OK;
}

extern "C" void sps__graph_while_free(void *wh)
{
    sps_gwhile *w = (sps_gwhile *)wh;
    if (!w) return;
    if (w->exec) (void)cudaGraphExecDestroy(w->exec);
    gwhile_free(w);
}
#else
extern "C" sps_status sps__graph_while_begin(sps_context *ctx, sps_gwhile **out)
{
    *out = NULL;
    return sps__err(ctx, SPS_ERR_UNSUPPORTED, "graph: conditional nodes need CUDA 12.4");
}
extern "C" sps_status sps__graph_while_end(sps_context *ctx, sps_gwhile *w, const int64_t *stop,
                                           int64_t cap, void **exec)
{
    (void)w, (void)stop, (void)cap, *exec = NULL;
    return sps__err(ctx, SPS_ERR_UNSUPPORTED, "graph: conditional nodes need CUDA 12.4");
}
extern "C" sps_status sps__graph_while_launch(sps_context *ctx, void *wh)
{
    (void)wh;
    return sps__err(ctx, SPS_ERR_UNSUPPORTED, "graph: conditional nodes need CUDA 12.4");
}
extern "C" void sps__graph_while_free(void *wh) { (void)wh; }
#endif
