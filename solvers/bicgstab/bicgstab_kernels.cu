/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/bicgstab_kernels.cu: BiCGSTAB's fused kernels (the
 * same operations as bicgstab_host.c, which is their specification): they
 * update the vectors, apply a fused Jacobi scaling and produce the partial
 * sums in the same pass. */
#include "../kernels.cuh"
#include "bicgstab.h"
#include "bicgstab_onek.h"


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

/* The one-kernel launchers (bicgstab_onek.h), by [Jacobi][layout]: each
 * instantiation in a module of its own (solvers/bicgstab/onek/). */
static const sps_bicg_onek_fn bicg_onek_fns[2][5] = {
    {sps__bicg_onek_regs1, sps__bicg_onek_regs2, sps__bicg_onek_regs4, sps__bicg_onek_shared, sps__bicg_onek_global},
    {sps__bicg_onek_regs1_jac, sps__bicg_onek_regs2_jac, sps__bicg_onek_regs4_jac, sps__bicg_onek_shared_jac,
     sps__bicg_onek_global_jac},
};

/* The layout: SPS_ONEK_LAYOUT=global|shared|regs forces one (tests compare
 * them), else registers up to 4 rows a thread, shared memory where the
 * vectors fit, global memory otherwise. */
static void bicg_onek_launch(int jac, cudaStream_t s, const sps_bicg_onek *a)
{
    const sps_bicg_onek_fn *f = bicg_onek_fns[jac != 0];
    const int want = onek_layout();
    if (want < 0) {
        if (a->n <= OKT && f[0](s, a)) return;
        if (a->n > OKT && a->n <= 2 * OKT && f[1](s, a)) return;
        if (a->n > 2 * OKT && a->n <= 4 * OKT && f[2](s, a)) return;
    }
    if (want != ONEK_GLOBAL && f[3](s, a)) return;
    f[4](s, a);
}

static sps_status c_bicg_onekernel(sps_kws *w, const sps_dev_rows *rows, double *const vec[9],
                                   const double *dinv)
{
    if (!rows || rows->n != w->n || w->n > SPS_IDX_MAX) return SPS_ERR_UNSUPPORTED;
    const sps_bicg_onek a = {(int)w->n, *rows,
                             vec[0], vec[1], vec[2], vec[3], vec[4], vec[5], vec[6], vec[7], vec[8],
                             dinv, w->st, (sps_bicg_state *)w->ms, w->hist};
    bicg_onek_launch(dinv != nullptr, sps_stream(w->ctx), &a);
    SPS_LAUNCH_CHECK(w->ctx, "k_bicg_onekernel");
    return SPS_OK;
}

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
    .onekernel = c_bicg_onekernel,
};
