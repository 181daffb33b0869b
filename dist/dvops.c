/* SPDX-License-Identifier: MIT */
/* spsolve/dist/dvops.c: the distributed layer's vector operations on the
 * host (the reference for dvops.cu): plain loops, each reduction block's
 * terms summed in row order. */
#include "dist.h"

#include <string.h>

static sps_status h_alloc(sps_context *ctx, size_t bytes, void **p)
{
    *p = sps__malloc(bytes ? bytes : 1);
    if (!*p)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%.1f MiB) (%s:%d)",
                        (double)bytes / 1048576.0, __FILE__, __LINE__);
    return SPS_OK;
}

static void h_free(void *p) { sps__free(p); }

static sps_status h_copy(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    if (bytes && dst != src) memcpy(dst, src, bytes);
    return SPS_OK;
}

static sps_status h_axpby(sps_context *ctx, sps_idx n, double *y, double a, const double *x, double b)
{
    (void)ctx;
    if (b == 0.0)
        for (sps_idx i = 0; i < n; i++) y[i] = a * x[i];
    else
        for (sps_idx i = 0; i < n; i++) y[i] = a * x[i] + b * y[i];
    return SPS_OK;
}

static sps_status h_mul(sps_context *ctx, sps_idx n, double *z, const double *d, const double *r)
{
    (void)ctx;
    for (sps_idx i = 0; i < n; i++) z[i] = d[i] * r[i];
    return SPS_OK;
}

static sps_status h_cg_update(sps_context *ctx, sps_idx n, double al, double *x, const double *p,
                              double *r, const double *q, const double *d, double *z)
{
    (void)ctx;
    for (sps_idx i = 0; i < n; i++) {
        x[i] += al * p[i];
        r[i] -= al * q[i];
        if (d) z[i] = d[i] * r[i];
    }
    return SPS_OK;
}

static sps_status h_partials(sps_context *ctx, sps_idx n, sps_idx blk, const double *a, const double *b,
                             double *part, double *scr)
{
    (void)ctx;
    (void)scr;
    for (sps_idx k = 0, i0 = 0; i0 < n; k++, i0 += blk) {
        sps_idx end = n - i0 > blk ? i0 + blk : n;
        double s = 0.0;
        for (sps_idx i = i0; i < end; i++) s += a[i] * b[i];
        part[k] = s;
    }
    return SPS_OK;
}

static sps_status h_gather(sps_context *ctx, sps_idx m, const sps_idx *idx, const double *x, double *buf)
{
    (void)ctx;
    for (sps_idx k = 0; k < m; k++) buf[k] = x[idx[k]];
    return SPS_OK;
}

static sps_status h_spmv(sps_context *ctx, const void *A, const double *xe, double *y)
{
    (void)ctx;
    sps__csr_spmv(A, 1.0, xe, 0.0, y);
    return SPS_OK;
}

/* The host ops use the plan's CSR itself. */
static sps_status h_upload(sps_context *ctx, const sps_csr *A, void **dA)
{
    (void)ctx;
    *dA = (void *)A;
    return SPS_OK;
}

static void h_release(void *dA) { (void)dA; }

const sps_dvops sps__dvops_host = {
    .name = "host", .device = 0, .alloc = h_alloc, .free = h_free, .copy_in = h_copy,
    .copy_out = h_copy, .axpby = h_axpby, .mul = h_mul, .cg_update = h_cg_update,
    .partials = h_partials, .gather = h_gather, .spmv = h_spmv, .upload = h_upload,
    .release = h_release,
};
