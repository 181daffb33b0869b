/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/bicgstab_kernels.cu: BiCGSTAB's fused kernels (the
 * same operations as bicgstab_host.c, which is their specification): they
 * update the vectors, apply a fused Jacobi scaling and produce the partial
 * sums in the same pass. */
#include "../kernels.cuh"
#include "bicgstab.h"

namespace {

template <bool JAC>
__global__ void __launch_bounds__(TPB) k_bicg_p(int n, double *p, const double *r,
                                                const double *v, const double *dinv,
                                                double *phat, const sps_kstate *st,
                                                const sps_bicg_state *bs)
{
    if (st->stop) return;
    const double be = bs->beta, om = bs->omega;
    GRID_STRIDE(i, n)
    {
        double pi = r[i] + be * (p[i] - om * v[i]);
        p[i] = pi;
        if constexpr (JAC) phat[i] = dinv[i] * pi;
    }
}

template <bool JAC>
__global__ void __launch_bounds__(TPB) k_bicg_s(int n, double *s, const double *r,
                                                const double *v, const double *dinv,
                                                double *shat, const sps_kstate *st,
                                                const sps_bicg_state *bs, double *part)
{
    if (st->stop) return;
    const double al = bs->alpha;
    double acc[1] = {0.0};
    GRID_STRIDE(i, n)
    {
        double si = r[i] - al * v[i];
        s[i] = si;
        acc[0] += si * si;
        if constexpr (JAC) shat[i] = dinv[i] * si;
    }
    put_partials<1>(acc, part, gridDim.x);
}

__global__ void __launch_bounds__(TPB) k_bicg_x(int n, int64_t j, double *x, double *r,
                                                const double *phat, const double *shat,
                                                const double *s, const double *t,
                                                const double *r0hat, const sps_kstate *st,
                                                const sps_bicg_state *bs, double *part)
{
    const double al = bs->alpha, om = bs->omega;
    if (st->stop) {
        /* Stopped at this iteration's half step: the iterate is x + alpha phat. */
        if (bs->half && st->iter == j) GRID_STRIDE(i, n)
            {
                double xi = x[i] + al * phat[i];
                if (xi - xi == 0.0) x[i] = xi;
            }
        return;
    }
    /* v[2] counts the entries of x that would become NaN or Inf (kept). */
    double v[3] = {0.0, 0.0, 0.0};
    GRID_STRIDE(i, n)
    {
        double xi = x[i] + (al * phat[i] + om * shat[i]);
        if (xi - xi == 0.0) x[i] = xi;
        else v[2] += 1.0;
        double ri = s[i] - om * t[i];
        r[i] = ri;
        v[0] += ri * ri;
        v[1] += r0hat[i] * ri;
    }
    put_partials<3>(v, part, gridDim.x);
}

} /* namespace */

/* BiCGSTAB's finish steps run on thread 0. */
static __device__ void sps_method_finish(int step, sps_kstate *st, sps_bicg_state *bs, const double *v,
                                         double *hist)
{
    sps__bicg_finish(step, st, bs, v, hist);
}

static constexpr auto c_bicg_finish = finish_thread0<sps_bicg_state>;

static sps_status c_bicg_step(sps_kws *w, int step, int ns)
{
    w->nsum = ns;
    sps_kfin f = sps__kfin(c_bicg_finish, NULL, step, 1, 0);
    return c_bicg_finish(w, &f);
}

static sps_status c_bicg_p(sps_kws *w, double *p, const double *r, const double *v,
                           const double *dinv, double *phat)
{
    const sps_bicg_state *bs = (const sps_bicg_state *)w->ms;
    if (dinv) LAUNCH(w, k_bicg_p<true>, w->n, p, r, v, dinv, phat, w->st, bs);
    else LAUNCH(w, k_bicg_p<false>, w->n, p, r, v, dinv, phat, w->st, bs);
    return SPS_OK;
}

static sps_status c_bicg_s(sps_kws *w, double *s, const double *r, const double *v,
                           const double *dinv, double *shat)
{
    const sps_bicg_state *bs = (const sps_bicg_state *)w->ms;
    if (dinv) LAUNCH(w, k_bicg_s<true>, w->n, s, r, v, dinv, shat, w->st, bs, w->red);
    else LAUNCH(w, k_bicg_s<false>, w->n, s, r, v, dinv, shat, w->st, bs, w->red);
    return c_bicg_step(w, SPS_BICG_S, 1);
}

static sps_status c_bicg_x(sps_kws *w, int64_t j, double *x, double *r, const double *phat,
                           const double *shat, const double *s, const double *t,
                           const double *r0hat)
{
    LAUNCH(w, k_bicg_x, w->n, j, x, r, phat, shat, s, t, r0hat, w->st,
           (const sps_bicg_state *)w->ms, w->red);
    return c_bicg_step(w, SPS_BICG_R, 3);
}

extern "C" const sps_bicg_ops sps__bicg_ops_cuda = {
    .finish = c_bicg_finish,
    .p = c_bicg_p,
    .s = c_bicg_s,
    .x = c_bicg_x,
};
