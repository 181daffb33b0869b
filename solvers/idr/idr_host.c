/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/idr/idr_host.c: IDR(s)'s fused operations on the host (the
 * reference for idr_kernels.cu) */
#include "idr.h"

static sps_status h_idr_finish(sps_kws *w, const sps_kfin *f)
{
    double s[SPS_K_NSUM] = {0};
    for (int q = 0; q < w->nsum; q++) s[q] = w->red[q];
    if (f->gated && w->st->stop) return SPS_OK;
    sps__idr_finish(f->step, w->st, (sps_idr_state *)w->ms, s, w->hist);
    return SPS_OK;
}

static sps_status h_idr_comb(sps_kws *w, int mode, double *out, const double *base,
                             const double *basis)
{
    if (w->st->stop) return SPS_OK;
    const sps_idr_state *is = w->ms;
    double a0 = mode == SPS_IDR_COMB_U ? is->om : 1.0, sg = mode == SPS_IDR_COMB_U ? 1.0 : -1.0;
    size_t n = (size_t)w->n;
    for (size_t e = 0; e < n; e++) {
        double acc = 0.0;
        for (int64_t i = is->k; i < is->s; i++) acc += is->c[i] * basis[(size_t)i * n + e];
        out[e] = a0 * base[e] + sg * acc;
    }
    return SPS_OK;
}

static sps_status h_idr_orth(sps_kws *w, double *g, double *u, const double *gi, const double *ui)
{
    if (w->st->stop) return SPS_OK;
    double al = ((const sps_idr_state *)w->ms)->alpha;
    for (sps_idx e = 0; e < w->n; e++) {
        g[e] -= al * gi[e];
        u[e] -= al * ui[e];
    }
    return SPS_OK;
}

static sps_status h_idr_update(sps_kws *w, int step, double *x, double *r, const double *u,
                               const double *g)
{
    if (w->st->stop) return SPS_OK;
    const sps_idr_state *is = w->ms;
    double a = step == SPS_IDR_R ? is->beta : is->om, rr = 0, bad = 0;
    for (sps_idx e = 0; e < w->n; e++) {
        double ri = r[e] - a * g[e], ue = u[e]; /* u may be r (the reduction, no M) */
        r[e] = ri;
        rr += ri * ri;
        double xi = x[e] + a * ue;
        if (xi - xi == 0.0) x[e] = xi;
        else bad += 1.0;
    }
    w->red[0] = rr;
    w->red[1] = bad;
    w->nsum = 2;
    sps_kfin f = sps__kfin(h_idr_finish, NULL, step, 1, 0);
    return h_idr_finish(w, &f);
}

const sps_idr_ops sps__idr_ops_host = {
    .finish = h_idr_finish,
    .comb = h_idr_comb,
    .orth = h_idr_orth,
    .update = h_idr_update,
};
