/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/idr/idr_kernels.cu: IDR(s)'s fused kernels (the same
 * operations as idr_host.c, which is their specification). The combinations
 * sum the basis vectors in index order, so a solve is bitwise repeatable. */
#include "../kernels.cuh"
#include "idr.h"

namespace {

__global__ void __launch_bounds__(TPB) k_idr_comb(int n, int mode, double *out, const double *base,
                                                  const double *basis, const sps_kstate *st,
                                                  const sps_idr_state *is)
{
    if (st->stop) return;
    const double a0 = mode == SPS_IDR_COMB_U ? is->om : 1.0;
    const double sg = mode == SPS_IDR_COMB_U ? 1.0 : -1.0;
    const int64_t k0 = is->k, s = is->s;
    double c[SPS_IDR_SMAX];
#pragma unroll
    for (int i = 0; i < SPS_IDR_SMAX; i++) c[i] = is->c[i];
    GRID_STRIDE(e, n)
    {
        double acc = 0.0;
        for (int64_t i = k0; i < s; i++) acc += c[i] * basis[i * (int64_t)n + e];
        out[e] = a0 * base[e] + sg * acc;
    }
}

__global__ void __launch_bounds__(TPB) k_idr_orth(int n, double *g, double *u, const double *gi,
                                                  const double *ui, const sps_kstate *st,
                                                  const sps_idr_state *is)
{
    if (st->stop) return;
    const double al = is->alpha;
    GRID_STRIDE(e, n)
    {
        g[e] -= al * gi[e];
        u[e] -= al * ui[e];
    }
}

__global__ void __launch_bounds__(TPB) k_idr_update(int n, int step, double *x, double *r,
                                                    const double *u, const double *g,
                                                    const sps_kstate *st, const sps_idr_state *is,
                                                    double *part)
{
    if (st->stop) return;
    const double a = step == SPS_IDR_R ? is->beta : is->om;
    double v[2] = {0.0, 0.0};
    GRID_STRIDE(e, n)
    {
        double ri = r[e] - a * g[e], ue = u[e]; /* u may be r (the reduction, no M) */
        r[e] = ri;
        v[0] += ri * ri;
        double xi = x[e] + a * ue;
        if (xi - xi == 0.0) x[e] = xi;
        else v[1] += 1.0;
    }
    put_partials<2>(v, part, gridDim.x);
}

} /* namespace */

/* IDR's finish steps run on thread 0. */
static __device__ void sps_method_finish(int step, sps_kstate *st, sps_idr_state *is, const double *v,
                                         double *hist)
{
    sps__idr_finish(step, st, is, v, hist);
}

static constexpr auto c_idr_finish = finish_thread0<sps_idr_state>;

static sps_status c_idr_comb(sps_kws *w, int mode, double *out, const double *base, const double *basis)
{
    LAUNCH(w, k_idr_comb, w->n, mode, out, base, basis, w->st, (const sps_idr_state *)w->ms);
    return SPS_OK;
}

static sps_status c_idr_orth(sps_kws *w, double *g, double *u, const double *gi, const double *ui)
{
    LAUNCH(w, k_idr_orth, w->n, g, u, gi, ui, w->st, (const sps_idr_state *)w->ms);
    return SPS_OK;
}

static sps_status c_idr_update(sps_kws *w, int step, double *x, double *r, const double *u,
                               const double *g)
{
    LAUNCH(w, k_idr_update, w->n, step, x, r, u, g, w->st, (const sps_idr_state *)w->ms, w->red);
    w->nsum = 2;
    sps_kfin f = sps__kfin(c_idr_finish, NULL, step, 1, 0);
    return c_idr_finish(w, &f);
}

extern "C" const sps_idr_ops sps__idr_ops_cuda = {
    .finish = c_idr_finish,
    .comb = c_idr_comb,
    .orth = c_idr_orth,
    .update = c_idr_update,
};
