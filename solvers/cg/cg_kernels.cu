/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/cg_kernels.cu: CG's fused kernels (the same operations
 * as cg_host.c, which is their specification). The update changes x and r,
 * applies a fused Jacobi scaling and produces r'r and r'z in one pass. */
#include "../kernels.cuh"
#include "cg.h"
#include "cg_onek.h"


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

/* The fused engine's r update (x comes later, with p: k_cg_xp). */
template <bool JAC>
__global__ void __launch_bounds__(TPB) k_cg_resid(int n, double *r, const double *q,
                                                  const double *dinv, double *z,
                                                  const sps_kstate *st, const sps_cg_state *cs,
                                                  double *part)
{
    if (st->stop) return;
    const double al = cs->alpha;
    double v[2] = {0.0, 0.0};
    GRID_STRIDE(i, n)
    {
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

/* x += alpha p (unless x is up to date); p = z + beta p (unless stopped). */
__global__ void __launch_bounds__(TPB) k_cg_xp(int n, double *x, double *p, const double *z,
                                               const sps_kstate *st, const sps_cg_xstate *xs)
{
    if (xs->xiter == (double)st->iter) return;
    const double al = xs->cg.alpha, be = xs->cg.beta;
    const bool dir = !st->stop;
    GRID_STRIDE(i, n)
    {
        double pi = p[i];
        x[i] += al * pi;
        if (dir) p[i] = z[i] + be * pi;
    }
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

/* The one-kernel launchers (cg_onek.h), by [Jacobi][layout]: each
 * instantiation in a module of its own (solvers/cg/onek/). */
static const sps_cg_onek_fn cg_onek_fns[2][5] = {
    {sps__cg_onek_global, sps__cg_onek_shared, sps__cg_onek_regs1, sps__cg_onek_regs2, sps__cg_onek_regs4},
    {sps__cg_onek_global_jac, sps__cg_onek_shared_jac, sps__cg_onek_regs1_jac, sps__cg_onek_regs2_jac,
     sps__cg_onek_regs4_jac},
};

/* The layout: SPS_ONEK_LAYOUT=global|shared|regs forces one (tests compare
 * them), else registers up to 4 rows a thread, shared memory where the
 * vectors fit, global memory otherwise. */
static void cg_onek_launch(int jac, cudaStream_t s, int n, const sps_dev_rows *A, double *x, double *r,
                           double *p, double *q, const double *dinv, double *z, sps_kstate *st,
                           sps_cg_state *cs, double *hist, int step)
{
    const sps_cg_onek_fn *f = cg_onek_fns[jac != 0];
    const int want = onek_layout();
#define CG_TRY(mode) f[mode](s, n, A, x, r, p, q, dinv, z, st, cs, hist, step)
    if (want < 0) {
        if (n <= OKT && CG_TRY(OK_REGS1)) return;
        if (n <= 2 * OKT && n > OKT && CG_TRY(OK_REGS2)) return;
        if (n <= 4 * OKT && n > 2 * OKT && CG_TRY(OK_REGS4)) return;
    }
    if (want != OK_GLOBAL && CG_TRY(OK_SHARED)) return;
    CG_TRY(OK_GLOBAL);
#undef CG_TRY
}

static sps_status c_cg_onekernel(sps_kws *w, const sps_dev_rows *rows, double *x, double *r,
                                 double *p, double *q, const double *dinv, double *z, int step)
{
    if (!rows || rows->n != w->n || w->n > SPS_IDX_MAX) return SPS_ERR_UNSUPPORTED;
    sps_cg_state *cs = (sps_cg_state *)w->ms;
    cudaStream_t s = sps_stream(w->ctx);
    cg_onek_launch(dinv != nullptr, s, (int)w->n, rows, x, r, p, q, dinv, z, w->st, cs, w->hist, step);
    SPS_LAUNCH_CHECK(w->ctx, "k_cg_onekernel");
    return SPS_OK;
}

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

static sps_status c_cg_finish_parts(sps_kws *w, int nparts, int step, int gated)
{
    thread0_fin<sps_cg_state> fn = {step, w->st, (sps_cg_state *)w->ms, w->hist};
    k_reduce_finish<<<1, TPB, 0, sps_stream(w->ctx)>>>(w->st, gated, w->red, nparts, 1, fn);
    SPS_LAUNCH_CHECK(w->ctx, "k_reduce_finish");
    w->nsum = 1;
    return SPS_OK;
}

static sps_status c_cg_resid(sps_kws *w, double *r, const double *q, const double *dinv, double *z,
                             int step)
{
    const sps_cg_state *cs = (const sps_cg_state *)w->ms;
    if (dinv) LAUNCH(w, k_cg_resid<true>, w->n, r, q, dinv, z, w->st, cs, w->red);
    else LAUNCH(w, k_cg_resid<false>, w->n, r, q, dinv, z, w->st, cs, w->red);
    w->nsum = 2;
    sps_kfin f = sps__kfin(c_cg_finish, NULL, step, 1, 0);
    return c_cg_finish(w, &f);
}

static sps_status c_cg_xp(sps_kws *w, double *x, double *p, const double *z)
{
    LAUNCH(w, k_cg_xp, w->n, x, p, z, w->st, (const sps_cg_xstate *)w->ms);
    return SPS_OK;
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
    .finish_parts = c_cg_finish_parts,
    .resid = c_cg_resid,
    .xp = c_cg_xp,
    .onekernel = c_cg_onekernel,
};
