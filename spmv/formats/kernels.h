/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/kernels.h: extern "C" entry points of the SpMV kernels (.cu).
 *
 * Each backend's .cu file defines its upload/apply/update_dev/free_dev here,
 * so that the table in the matching .c file can point at them. Templates stay
 * inside the .cu files. Declarations are grouped by backend; a backend's owner
 * adds its own group. */
#ifndef SPS_SPMV_KERNELS_H
#define SPS_SPMV_KERNELS_H

#include "spmv/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

#if SPS_HAVE_CUDA

#define SPS_DECLARE_GPU_BACKEND(prefix)                                                \
    sps_status prefix##_upload(sps_context *ctx, const sps_fmt *f, int single,         \
                               void **dev, sps_spmv_stats *st);                        \
    sps_status prefix##_apply(sps_context *ctx, void *dev, double alpha,               \
                              const void *x, double beta, void *y);                    \
    sps_status prefix##_update_dev(sps_context *ctx, const sps_fmt *f, void *dev);     \
    void prefix##_free_dev(void *dev);

SPS_DECLARE_GPU_BACKEND(sps_csr_scalar)
SPS_DECLARE_GPU_BACKEND(sps_csr_vector)
SPS_DECLARE_GPU_BACKEND(sps_merge)
SPS_DECLARE_GPU_BACKEND(sps_drm)
SPS_DECLARE_GPU_BACKEND(sps_dia)
SPS_DECLARE_GPU_BACKEND(sps_hyb)
SPS_DECLARE_GPU_BACKEND(sps_cusparse)

#endif

#ifdef __cplusplus
}
#endif
#endif
