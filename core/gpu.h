/* SPDX-License-Identifier: MIT */
/* spsolve/core/gpu.h: the C-callable face of the CUDA runtime (core/gpu.cu).
 *
 * C files never include CUDA headers: they call these functions, and only
 * inside `#if SPS_HAVE_CUDA` blocks (a CPU-only build has no core/gpu.cu).
 * Every function checks its CUDA calls and, on failure, records
 * "what: cudaErrorName (file:line)" in the context and returns SPS_ERR_CUDA or
 * SPS_ERR_NO_MEMORY. Nothing here prints or exits. */
#ifndef SPS_GPU_H
#define SPS_GPU_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

#if SPS_HAVE_CUDA

/* Context lifetime: select the device, create the stream (non-blocking) and
 * the cuSPARSE handle bound to it, read the properties. */
sps_status sps__gpu_init(sps_context *ctx, int device);
void sps__gpu_fini(sps_context *ctx);
/* Number of devices; on 0, *why gets the CUDA error text. */
int sps__gpu_count(char *why, size_t len);

/* Device memory. sps__dmalloc of 0 bytes sets *p = NULL and succeeds. */
sps_status sps__dmalloc(sps_context *ctx, void **p, size_t bytes);
void sps__dfree(void *p);
/* Copies on the context's stream. h2d/d2h are synchronous with respect to the
 * host (they wait for the stream); d2d and memset are asynchronous. */
sps_status sps__h2d(sps_context *ctx, void *dst, const void *src, size_t bytes);
sps_status sps__d2h(sps_context *ctx, void *dst, const void *src, size_t bytes);
sps_status sps__d2d(sps_context *ctx, void *dst, const void *src, size_t bytes);
sps_status sps__dmemset(sps_context *ctx, void *p, int byte, size_t bytes);
/* Wait for the context's stream. */
sps_status sps__gpu_sync(sps_context *ctx);
/* 1 if p is a device (or managed) pointer, 0 if host memory. */
int sps__is_device_ptr(const void *p);

/* Events for timing on the context's stream. */
typedef struct sps_gpu_timer sps_gpu_timer;
sps_status sps__timer_create(sps_context *ctx, sps_gpu_timer **t);
sps_status sps__timer_start(sps_context *ctx, sps_gpu_timer *t);
/* Records the stop event, waits for it, returns elapsed ms. */
sps_status sps__timer_stop(sps_context *ctx, sps_gpu_timer *t, double *ms);
void sps__timer_destroy(sps_gpu_timer *t);

/* Handles for .cu files (cudaStream_t, cusparseHandle_t). */
void *sps__gpu_stream(const sps_context *ctx);
void *sps__gpu_cusparse(const sps_context *ctx);
int sps__gpu_sm_count(const sps_context *ctx);
int sps__gpu_cc(const sps_context *ctx); /* compute capability, e.g. 90 */
/* The memory's peak bandwidth in GB/s from its clock and bus width (H100
 * SXM: 3352), 0 when the driver does not say. */
double sps__gpu_peak_gbps(const sps_context *ctx);

/* A scratch device buffer owned by the context, grown on demand (never during
 * a solve's iterations: callers size it in setup). */
sps_status sps__gpu_scratch(sps_context *ctx, size_t bytes, void **p);

/* Device-to-device copy bandwidth over `bytes` (GB/s, read + write). */
sps_status sps__gpu_copy_bandwidth(sps_context *ctx, size_t bytes, double *gbps);

/* ---- the matrix's CSR on the device (core/device_matrix.c, core/upload.cu) */

/* One device copy of a matrix's CSR, cached on the sps_matrix for the
 * context it was made on and freed with the matrix. */
typedef struct sps_dcsr {
    sps_context *ctx;           /* the context it was uploaded for */
    const void *h_row_ptr, *h_col_idx, *h_val; /* the host arrays it copies */
    sps_idx nrows, ncols, nnz;
    sps_idx *row_ptr, *col_idx; /* device, nrows + 1 and nnz */
    double *val;                /* device, nnz */
    size_t bytes;               /* bytes of the three arrays */
    double upload_ms, gbps;     /* the one upload: wall time (pinning included), rate */
    char how[16];               /* "register", "ring" or "pageable" (tiny matrices) */
} sps_dcsr;

/* The device CSR of M on ctx, uploading it now if it is not there (or is on
 * another context). *uploaded is 1 if this call uploaded it. */
sps_status sps__matrix_device(sps_context *ctx, const sps_matrix *M, const sps_dcsr **d,
                              int *uploaded);
void sps__dcsr_free(sps_dcsr *d);
/* A's device copy on ctx when A (or a by-value copy of it) still has the
 * arrays that were uploaded, else NULL: builders copy device to device from
 * it instead of uploading. */
const sps_dcsr *sps__csr_device_copy(sps_context *ctx, const sps_csr *A);

/* Host-to-device copy of n arrays (dst[i] <- src[i], bytes[i]) through pinned
 * memory, synchronous: SPS_UPLOAD=register page-locks the source arrays for
 * the copy; SPS_UPLOAD=ring (default) streams them through the context's
 * pinned staging buffers, several host threads each overlapping its memcpy
 * into one buffer with the DMA out of the other (SPS_UPLOAD_THREADS, default
 * the online CPUs clamped to [4, 8]). Below 1 MiB in all, a plain copy. The
 * way used is written to how. */
sps_status sps__h2d_pinned(sps_context *ctx, int n, void *const *dst, const void *const *src,
                           const size_t *bytes, char *how, size_t how_len);
/* Device-to-host copy: into a destination whose pages are mostly resident, a
 * plain copy; into fresh memory, through the same staging ring (its threads
 * overlap the DMA into one pinned buffer with the memcpy out of the other,
 * and share the page faults). Below 1 MiB a plain copy; SPS_DOWNLOAD=ring or
 * =pageable forces a way. Synchronous. */
sps_status sps__d2h_pinned(sps_context *ctx, void *dst, const void *src, size_t bytes);
/* The context's slot for its staging ring (owned by core/upload.cu). */
void **sps__gpu_ring_slot(sps_context *ctx);
/* Make the context's staging ring now (sps__gpu_init: pinning 32 MiB costs
 * milliseconds, which belong to the context, not to the first upload);
 * best effort, silent. */
void sps__ring_prepare(sps_context *ctx);
/* Free the context's staging ring (sps__gpu_fini). */
void sps__ring_free(sps_context *ctx);

/* ---- device analysis (core/analyze_gpu.cu) ------------------------------ */

/* Fill every field of f that sps_matrix_analyze defines (f->rows, cols, nnz
 * set by the caller) from M's device CSR, uploading it if needed. */
sps_status sps__analyze_device(sps_context *ctx, const sps_matrix *M, sps_features *f);

#endif /* SPS_HAVE_CUDA */

#ifdef __cplusplus
}
#endif
#endif /* SPS_GPU_H */
