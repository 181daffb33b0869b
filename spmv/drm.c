/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/drm.c: the drm backend (placeholder) */
#include "backend.h"

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    (void)A; (void)params; (void)out; (void)st;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "drm: not implemented yet");
}

static void apply_host(const sps_fmt *f, double alpha, const double *x, double beta, double *y)
{
    (void)f; (void)alpha; (void)x; (void)beta; (void)y;
}

static void free_fmt(sps_fmt *f) { (void)f; }

const sps_backend sps_backend_drm = {
    .name = "drm",
    .summary = "(placeholder)",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_NEEDS_CONVERT,
    .convert = convert,
    .apply_host = apply_host,
    .free_fmt = free_fmt,
};
