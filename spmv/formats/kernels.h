/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/kernels.h: what ties a format's .c to its .cu.
 *
 * A format's .cu defines four extern "C" entry points, prefix_upload,
 * prefix_apply, prefix_update_dev and prefix_free_dev. Both of the format's
 * files say SPS_DECLARE_GPU_BACKEND(prefix) once (so the compiler checks the
 * .cu definitions against the declaration the table uses), and the table in
 * the .c fills its GPU entries with SPS_GPU_ENTRIES(prefix), which is empty
 * of kernels in a CPU-only build (the operator then reports
 * SPS_ERR_NOT_COMPILED). Templates stay inside the .cu files. */
#ifndef SPS_SPMV_KERNELS_H
#define SPS_SPMV_KERNELS_H

#include "spmv/backend.h"

#ifdef __cplusplus
#define SPS_KERNEL_LINKAGE extern "C"
#else
#define SPS_KERNEL_LINKAGE extern
#endif

#if SPS_HAVE_CUDA

#define SPS_DECLARE_GPU_BACKEND(prefix)                                                \
    SPS_KERNEL_LINKAGE sps_status prefix##_upload(sps_context *ctx, const sps_fmt *f,  \
                                                  int single, void **dev,              \
                                                  sps_spmv_stats *st);                 \
    SPS_KERNEL_LINKAGE sps_status prefix##_apply(sps_context *ctx, void *dev,          \
                                                 double alpha, const void *x,          \
                                                 double beta, void *y);                \
    SPS_KERNEL_LINKAGE sps_status prefix##_update_dev(sps_context *ctx,                \
                                                      const sps_fmt *f, void *dev);    \
    SPS_KERNEL_LINKAGE void prefix##_free_dev(void *dev);

#define SPS_GPU_ENTRIES(prefix)                                                        \
    .upload = prefix##_upload, .apply = prefix##_apply,                                \
    .update_dev = prefix##_update_dev, .free_dev = prefix##_free_dev

#else

#define SPS_DECLARE_GPU_BACKEND(prefix)
#define SPS_GPU_ENTRIES(prefix) .upload = NULL

#endif

#endif
