/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/cg_kernels.cu: CG's fused kernels (the same operations
 * as cg_host.c, which is their specification). The update changes x and r,
 * applies a fused Jacobi scaling and produces r'r and r'z in one pass. */
#include "../kernels.cuh"
#include "cg.h"

namespace {

template <bool JAC>
__global__ void __launch_bounds__(TPB) k_cg_update(int n, double *x, double *r, const double *p,
                                                   const double *q, const double *dinv,
                                                   double *z, const sps_kstate *st,
                                                   const sps_cg_state *cs, double *part)
{
    if (st->stop) return;
    const double al = cs->alpha;
    double v[2] = {0.0, 0.0};
    GRID_STRIDE(i, n)
    {
        x[i] += al * p[i];
        double ri = r[i] - al * q[i];
        r[i] = ri;
        v[0] += ri * ri;
        if constexpr (JAC) {
            double zi = dinv[i] * ri;
            z[i] = zi;
            v[1] += ri * zi;
        }
    }
    put_partials<2>(v, part, gridDim.x);
}

__global__ void __launch_bounds__(TPB) k_cg_direction(int n, double *p, const double *z,
                                                      const sps_kstate *st,
                                                      const sps_cg_state *cs)
{
    if (st->stop) return;
    const double be = cs->beta;
    GRID_STRIDE(i, n) p[i] = z[i] + be * p[i];
}

} /* namespace */

/* CG's finish steps run on thread 0. */
static __device__ void sps_method_finish(int step, sps_kstate *st, sps_cg_state *cs, const double *v,
                                         double *hist)
{
    sps__cg_finish(step, st, cs, v, hist);
}

static constexpr auto c_cg_finish = finish_thread0<sps_cg_state>;

static sps_status c_cg_update(sps_kws *w, double *x, double *r, const double *p, const double *q,
                              const double *dinv, double *z, int step)
{
    const sps_cg_state *cs = (const sps_cg_state *)w->ms;
    if (dinv) LAUNCH(w, k_cg_update<true>, w->n, x, r, p, q, dinv, z, w->st, cs, w->red);
    else LAUNCH(w, k_cg_update<false>, w->n, x, r, p, q, dinv, z, w->st, cs, w->red);
    w->nsum = 2;
    sps_kfin f = sps__kfin(c_cg_finish, NULL, step, 1, 0);
    return c_cg_finish(w, &f);
}

static sps_status c_cg_direction(sps_kws *w, double *p, const double *z)
{
    LAUNCH(w, k_cg_direction, w->n, p, z, w->st, (const sps_cg_state *)w->ms);
    return SPS_OK;
}

extern "C" const sps_cg_ops sps__cg_ops_cuda = {
    .finish = c_cg_finish,
    .update = c_cg_update,
    .direction = c_cg_direction,
};
