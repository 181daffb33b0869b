/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/backend.c: helpers every backend may use (declared in
 * spmv/backend.h): parameter parsing, the CSR bytes model, value upload */
#include "backend.h"

#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#endif

sps_status sps__parse_params(sps_context *ctx, const char *params, sps_param_fn fn, void *user)
{
    char buf[256];
    if (!params || !*params) return SPS_OK;
    if (strlen(params) >= sizeof buf)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "backend parameters too long: '%s'", params);
    strcpy(buf, params);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(tok, '=');
        const char *val = "";
        if (eq) {
            *eq = 0;
            val = eq + 1;
        }
        sps_status st = fn(ctx, user, tok, val);
        if (st != SPS_OK) return st;
    }
    return SPS_OK;
}

double sps__csr_bytes_model(const sps_csr *A, int beta_nonzero)
{
    /* The floor (DESIGN.md): every array once, x once, y once. */
    double n = A->nrows, nnz = A->nnz;
    return sizeof(sps_idx) * (n + 1)            /* row pointer */
           + (sizeof(sps_idx) + 8.0) * nnz      /* column index and value */
           + 8.0 * A->ncols                     /* x, once */
           + 8.0 * n * (beta_nonzero ? 2 : 1);  /* y written (and read if beta != 0) */
}

sps_status sps__no_params(sps_context *ctx, const char *backend, const char *params)
{
    if (!params || !*params) return SPS_OK;
    size_t n = strcspn(params, ",");
    return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: unknown parameter '%.*s' (it takes none)",
                    backend, (int)n, params);
}

#if SPS_HAVE_CUDA

sps_status sps__upload_values(sps_context *ctx, void *dst, const double *src, size_t n,
                              int single)
{
    if (!single) { /* through pinned memory, like the matrix's own upload */
        size_t bytes = n * sizeof(double);
        return sps__h2d_pinned(ctx, 1, &dst, (const void *const *)&src, &bytes, NULL, 0);
    }
    /* sps__h2d waits for the copy, so one bounded staging buffer is reused. */
    size_t chunk = n < ((size_t)1 << 20) ? n : ((size_t)1 << 20);
    float *tmp = sps__malloc(chunk * sizeof *tmp);
    if (!tmp) return sps__err(ctx, SPS_ERR_NO_MEMORY, "upload: out of host memory");
    sps_status st = SPS_OK;
    for (size_t done = 0; done < n && st == SPS_OK; done += chunk) {
        size_t k = n - done < chunk ? n - done : chunk;
        for (size_t i = 0; i < k; i++) tmp[i] = (float)src[done + i];
        st = sps__h2d(ctx, (float *)dst + done, tmp, k * sizeof *tmp);
    }
    sps__free(tmp);
    return st;
}

#endif /* SPS_HAVE_CUDA */

/* From SPS_DEVICE_MIN_NNZ entries (core/internal.h) dia and drm convert on
 * the device. Below, the host's conversion and its small upload cost less
 * than the device's launches and its kernels' first loads (H100, dia,
 * convert_ms host / device, medians of 3: poisson2d:63 (19,593 entries) 0.26
 * / 0.58, gr_30_30 (7,744) 0.11 / 0.53, nos6 (3,255) 0.07 / 0.53, rdb2048
 * (12,032) 0.21 / 0.55, Trefethen_2000 (41,906) 0.34 / 0.40, poisson2d:200
 * (199,200) 2.65 / 0.88; bench/results/time_to_solution.md).
 * SPS_CONVERT=host|device overrides the size. */
int sps__convert_on_device(const sps_context *ctx, int64_t nnz)
{
    return sps__pass_on_device(ctx, nnz, "SPS_CONVERT");
}
