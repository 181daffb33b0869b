/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/bicgstab.c: right-preconditioned BiCGSTAB (van der Vorst
 * 1992), with explicit breakdown tests and convergence at the half step.
 *
 * Memory movement per iteration, in vectors of n doubles (Jacobi fused; each
 * SpMV moves its format's bytes plus its input read and output written):
 *   p = r + beta (p - omega v), phat = D^-1 p   6n  (read r p v dinv, write p phat)
 *   1x SpMV  v = A phat                         A + 2n
 *   r0hat'v                                     2n
 *   s = r - alpha v, shat = D^-1 s, s's         5n  (read r v dinv, write s shat)
 *   1x SpMV  t = A shat                         A + 2n
 *   t's, t't                                    2n  (t and s read once)
 *   x += alpha phat + omega shat, r = s - omega t,
 *     r'r and r0hat'r in the same pass          8n  (read x phat shat s t r0hat, write x r)
 *   total                                       27n + 2A
 * Without a preconditioner phat is p and shat is s (22n + 2A). Launches per
 * iteration on the GPU: 2 SpMVs, 4 reductions' partials and finishes, 1
 * update: 11, and no host synchronization. */
#include "../engine.h"
#include "bicgstab.h"

/* r r0hat p v s t [phat shat] */
enum { R, R0, P, V, S, T, PH, SH };

static void bicg_work(const sps_krylov *k, sps_kwork *wk)
{
    wk->nvec = k->pcmode == SPS_PCM_NONE ? 6 : 8;
    wk->r = R;
    wk->scratch = T;
    wk->state_bytes = sizeof(sps_bicg_state);
}

static sps_kfin bicg_fin(const sps_krylov *k, int step)
{
    return sps__kfin(((const sps_bicg_ops *)k->mops)->finish, NULL, step, 1, 0);
}

static sps_status bicg_start(sps_krylov *k)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_status st;
    /* rho <- r'r (the sums of ||r0||), alpha = omega = 1, beta = 0: the first p is r */
    sps_kfin f = bicg_fin(k, SPS_BICG_INIT);
    if ((st = f.fn(w, &f)) != SPS_OK) return st;
    /* r0hat <- r;  p <- 0;  v <- 0 */
    if ((st = o->copy(w, k->vec[R0], k->vec[R])) != SPS_OK) return st;
    if ((st = o->fill(w, k->vec[P], 0.0)) != SPS_OK) return st;
    return o->fill(w, k->vec[V], 0.0);
}

static sps_status bicg_iterate(sps_krylov *k, int64_t j)
{
    const sps_vops *o = k->ops;
    const sps_bicg_ops *bo = k->mops;
    sps_kws *w = &k->w;
    double *r = k->vec[R], *r0 = k->vec[R0], *p = k->vec[P], *v = k->vec[V], *s = k->vec[S],
           *t = k->vec[T];
    int none = k->pcmode == SPS_PCM_NONE, fused = k->pcmode == SPS_PCM_JACOBI;
    double *ph = none ? p : k->vec[PH], *sh = none ? s : k->vec[SH];
    const double *dinv = sps__kr_diag(k);
    sps_status st;
    /* p <- r + beta (p - omega v);  [phat <- D^-1 p] */
    if ((st = bo->p(w, p, r, v, dinv, ph)) != SPS_OK) return st;
    if (fused) k->pc_applies++;
    /* phat <- M^-1 p */
    if (k->pcmode == SPS_PCM_APPLY && (st = sps__kr_prec(k, p, ph)) != SPS_OK) return st;
    /* v <- A phat */
    if ((st = sps__kr_spmv(k, ph, v)) != SPS_OK) return st;
    /* alpha <- rho / r0hat'v   (r0hat'v = 0: BREAKDOWN) */
    sps_kfin fa = bicg_fin(k, SPS_BICG_ALPHA);
    const double *a1[1] = {r0}, *b1[1] = {v};
    if ((st = o->dot(w, 1, a1, b1, &fa)) != SPS_OK) return st;
    /* s <- r - alpha v;  [shat <- D^-1 s];  ||s|| <= tol: converged at the half step */
    if ((st = bo->s(w, s, r, v, dinv, sh)) != SPS_OK) return st;
    if (fused) k->pc_applies++;
    /* shat <- M^-1 s */
    if (k->pcmode == SPS_PCM_APPLY && (st = sps__kr_prec(k, s, sh)) != SPS_OK) return st;
    /* t <- A shat */
    if ((st = sps__kr_spmv(k, sh, t)) != SPS_OK) return st;
    /* omega <- t's / t't   (t't = 0: BREAKDOWN keeping x + alpha phat) */
    sps_kfin fo = bicg_fin(k, SPS_BICG_OMEGA);
    const double *a2[2] = {t, t}, *b2[2] = {s, t};
    if ((st = o->dot(w, 2, a2, b2, &fo)) != SPS_OK) return st;
    /* x <- x + alpha phat + omega shat;  r <- s - omega t;  ||r||;
     * rho' <- r0hat'r, beta <- (rho'/rho)(alpha/omega)   (rho' ~ 0 or omega = 0: BREAKDOWN)
     * (stopped at this iteration's half step: x <- x + alpha phat only) */
    return bo->x(w, j, k->x, r, ph, sh, s, t, r0);
}

/* The traffic model (the header's table without the SpMVs' own bytes, which
 * include their input and output): 18n without a preconditioner, 23n with
 * Jacobi fused, 18n plus the preconditioner's own traffic (not modelled)
 * with another. */
static double bicg_traffic(const sps_krylov *k, double *spmvs)
{
    *spmvs = 2.0;
    double v = k->pcmode == SPS_PCM_JACOBI ? 23.0 : 18.0;
    return v * 8.0 * (double)k->w.n;
}

/* The whole iteration phase in one launch (engine.h): no or Jacobi
 * preconditioning, n within the engine's threshold. */
static sps_status bicg_onekernel(sps_krylov *k, const sps_dev_rows *rows)
{
    const sps_bicg_ops *bo = k->mops;
    if (!bo->onekernel || !rows || k->pcmode == SPS_PCM_APPLY || k->w.n > sps__engine_onek_max())
        return SPS_ERR_UNSUPPORTED;
    int none = k->pcmode == SPS_PCM_NONE;
    double *const vec[9] = {k->x,        k->vec[R], k->vec[R0],
                            k->vec[P],   k->vec[V], k->vec[S],
                            k->vec[T],   none ? k->vec[P] : k->vec[PH],
                            none ? k->vec[S] : k->vec[SH]};
    return bo->onekernel(&k->w, rows, vec, sps__kr_diag(k));
}

const sps_method_impl sps__method_bicgstab = {
    .name = "bicgstab", .id = SPS_BICGSTAB, .caps = 0,
    .summary = "right-preconditioned BiCGSTAB (general A)",
    .work = bicg_work, .start = bicg_start, .iterate = bicg_iterate,
    .traffic = bicg_traffic, .onekernel = bicg_onekernel,
};
