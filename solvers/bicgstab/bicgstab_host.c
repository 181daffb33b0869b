/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/bicgstab_host.c: BiCGSTAB's fused operations on the
 * host (the reference for bicgstab_kernels.cu) */
#include "bicgstab.h"

static sps_status h_bicg_finish(sps_kws *w, const sps_kfin *f)
{
    double s[SPS_K_NSUM] = {0};
    for (int q = 0; q < w->nsum; q++) s[q] = w->red[q];
    sps__bicg_finish(f->step, w->st, (sps_bicg_state *)w->ms, s, w->hist);
    return SPS_OK;
}

static sps_status h_bicg_step(sps_kws *w, int step)
{
    sps_kfin f = sps__kfin(h_bicg_finish, NULL, step, 1, 0);
    return h_bicg_finish(w, &f);
}

static sps_status h_bicg_p(sps_kws *w, double *p, const double *r, const double *v,
                           const double *dinv, double *phat)
{
    sps_kstate *st = w->st;
    if (st->stop) return SPS_OK;
    const sps_bicg_state *bs = w->ms;
    double be = bs->beta, om = bs->omega;
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
    double al = ((const sps_bicg_state *)w->ms)->alpha, ss = 0;
    for (sps_idx i = 0; i < w->n; i++) {
        double si = r[i] - al * v[i];
        s[i] = si;
        ss += si * si;
        if (dinv) shat[i] = dinv[i] * si;
    }
    w->red[0] = ss;
    w->nsum = 1;
    return h_bicg_step(w, SPS_BICG_S);
}

static sps_status h_bicg_x(sps_kws *w, int64_t j, double *x, double *r, const double *phat,
                           const double *shat, const double *s, const double *t,
                           const double *r0hat)
{
    sps_kstate *st = w->st;
    const sps_bicg_state *bs = w->ms;
    double al = bs->alpha, om = bs->omega;
    if (st->stop) {
        if (bs->half && st->iter == j)
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
    w->red[0] = rr;
    w->red[1] = r0r;
    w->red[2] = bad;
    w->nsum = 3;
    return h_bicg_step(w, SPS_BICG_R);
}

const sps_bicg_ops sps__bicg_ops_host = {
    .finish = h_bicg_finish,
    .p = h_bicg_p,
    .s = h_bicg_s,
    .x = h_bicg_x,
};
