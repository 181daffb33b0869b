/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/vops_host.c: the vector operations on the host (the
 * reference for vops_cuda.cu: same operations, same gating, plain loops) */
#include "vops.h"

#include <math.h>
#include <string.h>

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

static sps_status h_jacobi(sps_kws *w, double *z, const double *dinv, const double *r)
{
    for (sps_idx i = 0; i < w->n; i++) z[i] = dinv[i] * r[i];
    return SPS_OK;
}

/* The finish step on w->sums. GMRES's Arnoldi step first adds the second
 * Gram-Schmidt pass into H[:, j] and takes ||h||^2 (the device does this part
 * with the whole block). */
static sps_status h_finish(sps_kws *w, int fin, int64_t j)
{
    sps_kstate *st = w->st;
    double s[SPS_K_NSUM];
    for (int q = 0; q < SPS_K_NSUM; q++) s[q] = w->sums[q];
    if (fin == SPS_FIN_GM_ARNOLDI && !st->stop) {
        double *col = w->gm.H + j * (st->m + 1), hsq = 0;
        for (int64_t i = 0; i <= j; i++) {
            col[i] += w->gm.h2[i];
            hsq += col[i] * col[i];
        }
        s[1] = hsq;
    }
    sps__k_finish(fin, j, st, s, w->hist, w->gm);
    return SPS_OK;
}

static sps_status h_dot(sps_kws *w, const double *a, const double *b, const double *c,
                        const double *d, int fin, int64_t j)
{
    if (sps__k_fin_gated(fin) && w->st->stop) return SPS_OK;
    double s0 = 0, s1 = 0;
    for (sps_idx i = 0; i < w->n; i++) s0 += a[i] * b[i];
    if (c)
        for (sps_idx i = 0; i < w->n; i++) s1 += c[i] * d[i];
    w->sums[0] = s0;
    w->sums[1] = s1;
    w->sums[2] = 0;
    return h_finish(w, fin, j);
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

static sps_status h_nrm2(sps_kws *w, const double *x, int fin)
{
    w->sums[0] = h_amax(w->n, x);
    w->sums[1] = w->sums[2] = 0;
    h_finish(w, SPS_FIN_AMAX, 0);
    double f = ldexp(1.0, -(int)w->st->nrm_e), s0 = 0;
    for (sps_idx i = 0; i < w->n; i++) {
        double v = x[i] * f;
        s0 += v * v;
    }
    w->sums[0] = s0;
    return h_finish(w, fin, 0);
}

static sps_status h_axpby(sps_kws *w, double *y, double a, const double *x, double b)
{
    if (b == 0.0)
        for (sps_idx i = 0; i < w->n; i++) y[i] = a * x[i];
    else
        for (sps_idx i = 0; i < w->n; i++) y[i] = a * x[i] + b * y[i];
    return SPS_OK;
}

static sps_status h_get_state(sps_kws *w, sps_kstate *out)
{
    *out = *w->st;
    return SPS_OK;
}

static sps_status h_put_state(sps_kws *w, const sps_kstate *in)
{
    *w->st = *in;
    return SPS_OK;
}

static sps_status h_get_history(sps_kws *w, double *out, int64_t len)
{
    if (len > 0) memcpy(out, w->hist, (size_t)len * sizeof *out);
    return SPS_OK;
}

/* ---- CG ------------------------------------------------------------------ */

static sps_status h_cg_update(sps_kws *w, double *x, double *r, const double *p,
                              const double *q, const double *dinv, double *z, int mode)
{
    sps_kstate *st = w->st;
    if (st->stop) return SPS_OK;
    double al = st->alpha, rr = 0, rz = 0;
    for (sps_idx i = 0; i < w->n; i++) {
        x[i] += al * p[i];
        double ri = r[i] - al * q[i];
        r[i] = ri;
        rr += ri * ri;
        if (dinv) {
            double zi = dinv[i] * ri;
            z[i] = zi;
            rz += ri * zi;
        }
    }
    w->sums[0] = rr;
    w->sums[1] = rz;
    w->sums[2] = 0;
    return h_finish(w, SPS_FIN_CG_RES, mode);
}

static sps_status h_cg_direction(sps_kws *w, double *p, const double *z)
{
    sps_kstate *st = w->st;
    if (st->stop) return SPS_OK;
    double be = st->beta;
    for (sps_idx i = 0; i < w->n; i++) p[i] = z[i] + be * p[i];
    return SPS_OK;
}

/* ---- BiCGSTAB ------------------------------------------------------------ */

static sps_status h_bicg_p(sps_kws *w, double *p, const double *r, const double *v,
                           const double *dinv, double *phat)
{
    sps_kstate *st = w->st;
    if (st->stop) return SPS_OK;
    double be = st->beta, om = st->omega;
    for (sps_idx i = 0; i < w->n; i++) {
        double pi = r[i] + be * (p[i] - om * v[i]);
        p[i] = pi;
        if (dinv) phat[i] = dinv[i] * pi;
    }
    return SPS_OK;
}

static sps_status h_bicg_s(sps_kws *w, double *s, const double *r, const double *v,
                           const double *dinv, double *shat)
{
    sps_kstate *st = w->st;
    if (st->stop) return SPS_OK;
    double al = st->alpha, ss = 0;
    for (sps_idx i = 0; i < w->n; i++) {
        double si = r[i] - al * v[i];
        s[i] = si;
        ss += si * si;
        if (dinv) shat[i] = dinv[i] * si;
    }
    w->sums[0] = ss;
    w->sums[1] = w->sums[2] = 0;
    return h_finish(w, SPS_FIN_BICG_S, 0);
}

static sps_status h_bicg_x(sps_kws *w, int64_t j, double *x, double *r, const double *phat,
                           const double *shat, const double *s, const double *t,
                           const double *r0hat)
{
    sps_kstate *st = w->st;
    double al = st->alpha, om = st->omega;
    if (st->stop) {
        if (st->half && st->iter == j)
            for (sps_idx i = 0; i < w->n; i++) {
                double xi = x[i] + al * phat[i];
                if (xi - xi == 0.0) x[i] = xi;
            }
        return SPS_OK;
    }
    double rr = 0, r0r = 0, bad = 0;
    for (sps_idx i = 0; i < w->n; i++) {
        double xi = x[i] + (al * phat[i] + om * shat[i]);
        if (xi - xi == 0.0) x[i] = xi;
        else bad += 1.0;
        double ri = s[i] - om * t[i];
        r[i] = ri;
        rr += ri * ri;
        r0r += r0hat[i] * ri;
    }
    w->sums[0] = rr;
    w->sums[1] = r0r;
    w->sums[2] = bad;
    return h_finish(w, SPS_FIN_BICG_R, 0);
}

/* ---- GMRES --------------------------------------------------------------- */

/* h = V' x, four columns per sweep over x (column-major V: each column is a
 * contiguous stream; x stays in cache). */
static sps_status h_gemv_t(sps_kws *w, int64_t ncols, const double *x, double *h)
{
    sps_idx n = w->n;
    const double *V = w->V;
    int64_t c = 0;
    for (; c + 4 <= ncols; c += 4) {
        const double *v0 = V + c * n, *v1 = v0 + n, *v2 = v1 + n, *v3 = v2 + n;
        double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (sps_idx i = 0; i < n; i++) {
            double xi = x[i];
            s0 += v0[i] * xi;
            s1 += v1[i] * xi;
            s2 += v2[i] * xi;
            s3 += v3[i] * xi;
        }
        h[c] = s0;
        h[c + 1] = s1;
        h[c + 2] = s2;
        h[c + 3] = s3;
    }
    for (; c < ncols; c++) {
        const double *v0 = V + c * n;
        double s0 = 0;
        for (sps_idx i = 0; i < n; i++) s0 += v0[i] * x[i];
        h[c] = s0;
    }
    return SPS_OK;
}

/* x -= V h, four columns per sweep over x. */
static sps_status h_gemv_n(sps_kws *w, int64_t ncols, const double *h, double *x)
{
    sps_idx n = w->n;
    const double *V = w->V;
    int64_t c = 0;
    for (; c + 4 <= ncols; c += 4) {
        const double *v0 = V + c * n, *v1 = v0 + n, *v2 = v1 + n, *v3 = v2 + n;
        double h0 = h[c], h1 = h[c + 1], h2 = h[c + 2], h3 = h[c + 3];
        for (sps_idx i = 0; i < n; i++)
            x[i] -= v0[i] * h0 + v1[i] * h1 + v2[i] * h2 + v3[i] * h3;
    }
    for (; c < ncols; c++) {
        const double *v0 = V + c * n;
        double h0 = h[c];
        for (sps_idx i = 0; i < n; i++) x[i] -= v0[i] * h0;
    }
    return SPS_OK;
}

static sps_status h_gm_scale(sps_kws *w, int64_t j, const double *src)
{
    sps_kstate *st = w->st;
    if (st->stop) return SPS_OK;
    double d = j < 0 ? w->gm.g[0] : st->hn;
    double *dst = w->V + (j + 1) * (int64_t)w->n;
    for (sps_idx i = 0; i < w->n; i++) dst[i] = src[i] / d;
    return SPS_OK;
}

static sps_status h_gm_solve(sps_kws *w)
{
    sps__k_gm_solve(w->st, w->gm);
    return SPS_OK;
}

/* Row by row, columns in order: the device kernel's summation order. */
static sps_status h_gm_update(sps_kws *w, double *x, const double *dinv, double *u)
{
    int64_t k = w->st->kdim, n = w->n;
    const double *y = w->gm.y, *V = w->V;
    if (k == 0 && !u) return SPS_OK;
    for (int64_t i = 0; i < n; i++) {
        double s = 0;
        for (int64_t c = 0; c < k; c++) s += V[i + c * n] * y[c];
        if (u) u[i] = s;
        else if (dinv) x[i] += dinv[i] * s;
        else x[i] += s;
    }
    return SPS_OK;
}

static sps_status h_finish_op(sps_kws *w, int fin, int64_t j)
{
    if (sps__k_fin_gated(fin) && w->st->stop) return SPS_OK;
    return h_finish(w, fin, j);
}

const sps_vops sps__vops_host = {
    .name = "host",
    .copy = h_copy,
    .fill = h_fill,
    .add = h_add,
    .jacobi = h_jacobi,
    .dot = h_dot,
    .nrm2 = h_nrm2,
    .axpby = h_axpby,
    .finish = h_finish_op,
    .get_state = h_get_state,
    .put_state = h_put_state,
    .get_history = h_get_history,
    .cg_update = h_cg_update,
    .cg_direction = h_cg_direction,
    .bicg_p = h_bicg_p,
    .bicg_s = h_bicg_s,
    .bicg_x = h_bicg_x,
    .gemv_t = h_gemv_t,
    .gemv_n = h_gemv_n,
    .gm_scale = h_gm_scale,
    .gm_solve = h_gm_solve,
    .gm_update = h_gm_update,
};
