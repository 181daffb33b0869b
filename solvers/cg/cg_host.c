/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/cg_host.c: CG's fused operations on the host (the
 * reference for cg_kernels.cu) */
#include "cg.h"

static sps_status h_cg_finish(sps_kws *w, const sps_kfin *f)
{
    double s[SPS_K_NSUM] = {0};
    for (int q = 0; q < w->nsum; q++) s[q] = w->red[q];
    sps__cg_finish(f->step, w->st, (sps_cg_state *)w->ms, s, w->hist);
    return SPS_OK;
}

/* The residual pass both updates share: [x += alpha p;] r -= alpha q;
 * [z = dinv .* r]; r'r and r'z; then finish step. x NULL: r alone. */
static sps_status resid_pass(sps_kws *w, double *x, const double *p, double *r, const double *q,
                             const double *dinv, double *z, int step)
{
    if (w->st->stop) return SPS_OK;
    double al = ((const sps_cg_state *)w->ms)->alpha, rr = 0, rz = 0;
    for (sps_idx i = 0; i < w->n; i++) {
        if (x) x[i] += al * p[i];
        double ri = r[i] - al * q[i];
        r[i] = ri;
        rr += ri * ri;
        if (dinv) {
            double zi = dinv[i] * ri;
            z[i] = zi;
            rz += ri * zi;
        }
    }
    w->red[0] = rr;
    w->red[1] = rz;
    w->nsum = 2;
    sps_kfin f = sps__kfin(h_cg_finish, NULL, step, 1, 0);
    return h_cg_finish(w, &f);
}

static sps_status h_cg_update(sps_kws *w, double *x, double *r, const double *p,
                              const double *q, const double *dinv, double *z, int step)
{
    return resid_pass(w, x, p, r, q, dinv, z, step);
}

static sps_status h_cg_finish_parts(sps_kws *w, int nparts, int step, int gated)
{
    if (gated && w->st->stop) return SPS_OK;
    double s = 0.0;
    for (int b = 0; b < nparts; b++) s += w->red[b];
    w->red[0] = s;
    w->nsum = 1;
    sps_kfin f = sps__kfin(h_cg_finish, NULL, step, gated, 0);
    return h_cg_finish(w, &f);
}

static sps_status h_cg_resid(sps_kws *w, double *r, const double *q, const double *dinv, double *z,
                             int step)
{
    return resid_pass(w, NULL, NULL, r, q, dinv, z, step);
}

static sps_status h_cg_xp(sps_kws *w, double *x, double *p, const double *z)
{
    const sps_kstate *st = w->st;
    const sps_cg_xstate *xs = (const sps_cg_xstate *)w->ms;
    if (xs->xiter == (double)st->iter) return SPS_OK;
    double al = xs->cg.alpha, be = xs->cg.beta;
    int dir = !st->stop;
    for (sps_idx i = 0; i < w->n; i++) {
        double pi = p[i];
        x[i] += al * pi;
        if (dir) p[i] = z[i] + be * pi;
    }
    return SPS_OK;
}

static sps_status h_cg_direction(sps_kws *w, double *p, const double *z)
{
    sps_kstate *st = w->st;
    if (st->stop) return SPS_OK;
    double be = ((const sps_cg_state *)w->ms)->beta;
    for (sps_idx i = 0; i < w->n; i++) p[i] = z[i] + be * p[i];
    return SPS_OK;
}

const sps_cg_ops sps__cg_ops_host = {
    .finish = h_cg_finish,
    .update = h_cg_update,
    .direction = h_cg_direction,
    .finish_parts = h_cg_finish_parts,
    .resid = h_cg_resid,
    .xp = h_cg_xp,
};
