/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/vops_host.c: the generic vector operations on the host (the
 * reference for vops_cuda.cu: same operations, same gating, plain loops) */
#include "vops.h"

#if SPS_HAVE_CUDA
#include "../core/gpu.h"
#endif

#include <math.h>
#include <string.h>

/* ---- memory ---------------------------------------------------------------- */

static sps_status h_alloc(sps_context *ctx, size_t bytes, void **p)
{
    *p = sps__malloc(bytes);
    if (!*p)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_solve: out of memory (%.1f MiB of workspace)",
                        (double)bytes / 1048576.0);
    return SPS_OK;
}

static void h_free(void *p) { sps__free(p); }

static sps_status h_copy_bytes(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    (void)ctx;
    if (dst != src && bytes) memcpy(dst, src, bytes);
    return SPS_OK;
}

static int h_is_device(const void *p)
{
#if SPS_HAVE_CUDA
    return sps__is_device_ptr(p);
#else
    (void)p;
    return 0;
#endif
}

static size_t h_red_len(sps_idx n)
{
    (void)n;
    return SPS_K_NSUM;
}

const sps_vops *sps__vops_for(const sps_context *ctx)
{
#if SPS_HAVE_CUDA
    if (ctx->gpu) return &sps__vops_cuda;
#endif
    (void)ctx;
    return &sps__vops_host;
}

/* ---- vectors --------------------------------------------------------------- */

static sps_status h_copy(sps_kws *w, double *dst, const double *src)
{
    if (dst != src) memcpy(dst, src, (size_t)w->n * sizeof *dst);
    return SPS_OK;
}

static sps_status h_fill(sps_kws *w, double *x, double v)
{
    for (sps_idx i = 0; i < w->n; i++) x[i] = v;
    return SPS_OK;
}

static sps_status h_add(sps_kws *w, double *x, const double *z)
{
    for (sps_idx i = 0; i < w->n; i++) x[i] += z[i];
    return SPS_OK;
}

static sps_status h_mul(sps_kws *w, double *z, const double *d, const double *r)
{
    for (sps_idx i = 0; i < w->n; i++) z[i] = d[i] * r[i];
    return SPS_OK;
}

static sps_status h_axpby(sps_kws *w, double *y, double a, const double *x, double b)
{
    if (b == 0.0)
        for (sps_idx i = 0; i < w->n; i++) y[i] = a * x[i];
    else
        for (sps_idx i = 0; i < w->n; i++) y[i] = a * x[i] + b * y[i];
    return SPS_OK;
}

/* ---- reductions ------------------------------------------------------------ */

static sps_status h_finish(sps_kws *w, const sps_kfin *f)
{
    double s[SPS_K_NSUM] = {0};
    for (int q = 0; q < w->nsum; q++) s[q] = w->red[q];
    sps__k_common_finish(f->step, w->st, s, w->hist);
    return SPS_OK;
}

static sps_status h_dot(sps_kws *w, int ns, const double *const *a, const double *const *b,
                        const sps_kfin *f)
{
    if (ns < 1 || ns > SPS_K_NSUM)
        return sps__err(w->ctx, SPS_ERR_INTERNAL, "dot: %d sums (1 to %d) (%s:%d)", ns, SPS_K_NSUM,
                        __FILE__, __LINE__);
    if (f->gated && w->st->stop) return SPS_OK;
    for (int q = 0; q < ns; q++) {
        const double *x = a[q], *y = b[q];
        double s = 0;
        for (sps_idx i = 0; i < w->n; i++) s += x[i] * y[i];
        w->red[q] = s;
    }
    w->nsum = ns;
    return f->fn(w, f);
}

/* max |x_i|, propagating a NaN (the device's order-free maximum). */
static double h_amax(sps_idx n, const double *x)
{
    double m = 0;
    for (sps_idx i = 0; i < n; i++) {
        double a = fabs(x[i]);
        if (m == m && !(a <= m)) m = a;
    }
    return m;
}

static sps_status h_nrm2(sps_kws *w, const double *x, const sps_kfin *f)
{
    double s[SPS_K_NSUM] = {h_amax(w->n, x)};
    sps__k_common_finish(SPS_KC_AMAX, w->st, s, w->hist);
    double sc = ldexp(1.0, -(int)w->st->nrm_e), s0 = 0;
    for (sps_idx i = 0; i < w->n; i++) {
        double v = x[i] * sc;
        s0 += v * v;
    }
    w->red[0] = s0;
    w->nsum = 1;
    return f->fn(w, f);
}

/* ---- state ----------------------------------------------------------------- */

static sps_status h_get_state(sps_kws *w, sps_kstate *out)
{
    *out = *w->st;
    return SPS_OK;
}

static sps_status h_put_state(sps_kws *w, const sps_kstate *in, const void *ms, size_t ms_bytes)
{
    *w->st = *in;
    if (ms && ms_bytes) memcpy(w->ms, ms, ms_bytes);
    return SPS_OK;
}

static sps_status h_get_history(sps_kws *w, double *out, int64_t len)
{
    if (len > 0) memcpy(out, w->hist, (size_t)len * sizeof *out);
    return SPS_OK;
}

#define h_copy_in h_copy_bytes
#define h_copy_out h_copy_bytes
const sps_vops sps__vops_host = SPS_VOPS_TABLE(h, "host", 0);
