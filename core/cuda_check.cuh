/* SPDX-License-Identifier: MIT */
/* spsolve/core/cuda_check.cuh: checking macros for .cu files.
 *
 * Every CUDA runtime and cuSPARSE call goes through one of these; every
 * kernel launch is followed by SPS_LAUNCH_CHECK. On failure the context gets
 * "what: error name (file:line)" and the enclosing function returns the status. */
#ifndef SPS_CUDA_CHECK_CUH
#define SPS_CUDA_CHECK_CUH

#include <cuda_runtime.h>
#include <cusparse.h>

#include "gpu.h"

sps_status sps__cuda_fail(sps_context *ctx, cudaError_t e, const char *what,
                          const char *file, int line);
sps_status sps__cusparse_fail(sps_context *ctx, cusparseStatus_t e, const char *what,
                              const char *file, int line);

#define SPS_CUDA(ctx, call)                                                        \
    do {                                                                           \
        cudaError_t sps_e_ = (call);                                               \
        if (sps_e_ != cudaSuccess)                                                 \
            return sps__cuda_fail((ctx), sps_e_, #call, __FILE__, __LINE__);       \
    } while (0)

#define SPS_CUSPARSE(ctx, call)                                                    \
    do {                                                                           \
        cusparseStatus_t sps_e_ = (call);                                          \
        if (sps_e_ != CUSPARSE_STATUS_SUCCESS)                                     \
            return sps__cusparse_fail((ctx), sps_e_, #call, __FILE__, __LINE__);   \
    } while (0)

/* After every <<<...>>> launch. */
#define SPS_LAUNCH_CHECK(ctx, kernel_name)                                         \
    do {                                                                           \
        cudaError_t sps_e_ = cudaGetLastError();                                   \
        if (sps_e_ != cudaSuccess)                                                 \
            return sps__cuda_fail((ctx), sps_e_, "launch " kernel_name, __FILE__,  \
                                  __LINE__);                                       \
    } while (0)

static inline cudaStream_t sps_stream(const sps_context *ctx)
{
    return (cudaStream_t)sps__gpu_stream(ctx);
}

#endif /* SPS_CUDA_CHECK_CUH */
