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
