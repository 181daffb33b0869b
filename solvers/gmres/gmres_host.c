/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres_host.c: GMRES's operations on the host (the
 * reference for gmres_kernels.cu) */
#include "gmres.h"

static sps_status h_gm_finish(sps_kws *w, const sps_kfin *f)
{
    sps_kstate *st = w->st;
    sps_gm_state *gs = w->ms;
    const sps_gm_ws *g = f->aux;
    if (st->stop) return SPS_OK;
    double s[SPS_K_NSUM] = {0};
    for (int q = 0; q < w->nsum; q++) s[q] = w->red[q];
    if (f->step != SPS_GM_ARNOLDI && f->step != SPS_GM_CHECK) {
        sps__gm_finish(f->step, st, gs, s, g->gm);
        return SPS_OK;
    }
    /* The classic device path does this part with the whole block; the
     * one-kernel path runs the same function on thread 0. */
    int64_t j = f->arg;
    sps__gm_column(f->step, st, gs, j, g->gm.H + j * (gs->m + 1), s[0], w->hist, g->gm);
    return SPS_OK;
}

/* The second Gram-Schmidt pass's gate: skipped unless the check asked for it. */
static int h_skip(const sps_kws *w, int second)
{
    return second && !((const sps_gm_state *)w->ms)->reorth;
}

/* h = V' x, four columns per sweep over x (column-major V: each column is a
 * contiguous stream; x stays in cache). */
static sps_status h_gemv_t(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *x,
                           double *h, int second)
{
    if (h_skip(w, second)) return SPS_OK;
    sps_idx n = w->n;
    const double *V = g->V;
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
static sps_status h_gemv_n(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h,
                           double *x, int second)
{
    if (h_skip(w, second)) return SPS_OK;
    sps_idx n = w->n;
    const double *V = g->V;
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

/* gemv_n, then the host dot with the finish: the steps one by one. */
static sps_status h_gemv_n_fin(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h,
                               double *x, int second, const sps_kfin *f, int64_t sj, int *scaled)
{
    (void)sj;
    *scaled = 0;
    sps_status st = h_gemv_n(w, g, ncols, h, x, second);
    const double *a[1] = {x};
    return st != SPS_OK ? st : w->ops->dot(w, 1, a, a, f);
}

static sps_status h_gm_reset(sps_kws *w, const sps_gm_ws *g)
{
    (void)w, (void)g;
    return SPS_OK;
}

static sps_status h_gm_scale(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *src)
{
    sps_kstate *st = w->st;
    if (st->stop) return SPS_OK;
    double d = j < 0 ? g->gm.g[0] : ((const sps_gm_state *)w->ms)->hn;
    double *dst = g->V + (j + 1) * (int64_t)w->n;
    for (sps_idx i = 0; i < w->n; i++) dst[i] = src[i] / d;
    return SPS_OK;
}

/* DCGS2's products, column by column, each in row order; then their finish
 * (the closing products: column j - 1's Arnoldi step too). */
static sps_status h_gm_dprod(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *y)
{
    sps_kstate *st = w->st;
    if (st->stop) return SPS_OK;
    const int64_t n = w->n, ld = g->m + 1;
    const double *V = g->V, *p = V + j * n;
    for (int64_t c = 0; c <= j; c++) {
        const double *v = V + c * n;
        double sp = 0, sy = 0;
        for (int64_t i = 0; i < n; i++) {
            sp += v[i] * p[i];
            if (y) sy += v[i] * y[i];
        }
        g->gm.d[c] = sp;
        if (y) g->gm.d[ld + c] = sy;
    }
    sps__gm_dcgs2_prod(w->ms, j, y == NULL, g->gm);
    if (!y) sps__gm_dcgs2_col(st, w->ms, j, w->hist, g->gm);
    return SPS_OK;
}

/* DCGS2's corrections, row by row, the columns of each row in order (none
 * where omega is 0); then column j - 1's Arnoldi step. */
static sps_status h_gm_dcorr(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *y)
{
    if (w->st->stop) return SPS_OK;
    sps_gm_state *gs = w->ms;
    const int64_t n = w->n, ld = g->m + 1;
    const double *a = g->gm.d, *b = g->gm.d + ld, om = gs->omega, c = gs->cj;
    double *V = g->V;
    for (int64_t i = 0; i < n && om != 0.0; i++) {
        double s1 = 0, s2 = 0;
        for (int64_t k = 0; k < j; k++) {
            s1 += V[i + k * n] * a[k];
            s2 += V[i + k * n] * b[k];
        }
        const double v = (V[i + j * n] - s1) / om;
        V[i + j * n] = v;
        V[i + (j + 1) * n] = (y[i] - s2 - v * c) / om;
    }
    if (j > 0) sps__gm_dcgs2_col(w->st, gs, j, w->hist, g->gm);
    return SPS_OK;
}

static sps_status h_gm_solve(sps_kws *w, const sps_gm_ws *g)
{
    sps__gm_solve(w->ms, g->gm);
    return SPS_OK;
}

/* Row by row, columns in order: the device kernel's summation order. */
static sps_status h_gm_update(sps_kws *w, const sps_gm_ws *g, double *x, const double *dinv,
                              double *u)
{
    int64_t k = ((const sps_gm_state *)w->ms)->kdim, n = w->n;
    const double *y = g->gm.y, *V = g->V;
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

const sps_gm_ops sps__gm_ops_host = SPS_GM_OPS_TABLE(h);
