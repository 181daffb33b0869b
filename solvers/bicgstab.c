/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab.c: right-preconditioned BiCGSTAB (van der Vorst
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
#include "krylov.h"

/* r r0hat p v s t [phat shat] */
enum { R, R0, P, V, S, T, PH, SH };

static int bicg_nvec(int pcmode) { return pcmode == SPS_PCM_NONE ? 6 : 8; }

static void bicg_bind(sps_krylov *k)
{
    k->r = k->vec[R];
    k->scratch = k->vec[T];
}

static sps_status bicg_start(sps_krylov *k)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_status st;
    /* r0hat <- r;  p <- 0;  v <- 0   (rho = r'r, alpha = omega = 1, beta = 0:
     * the first p is r) */
    if ((st = o->copy(w, k->vec[R0], k->vec[R])) != SPS_OK) return st;
    if ((st = o->fill(w, k->vec[P], 0.0)) != SPS_OK) return st;
    return o->fill(w, k->vec[V], 0.0);
}

static sps_status bicg_iterate(sps_krylov *k, int64_t j)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    double *r = k->vec[R], *r0 = k->vec[R0], *p = k->vec[P], *v = k->vec[V], *s = k->vec[S],
           *t = k->vec[T];
    int none = k->pcmode == SPS_PCM_NONE, fused = k->pcmode == SPS_PCM_JACOBI;
    double *ph = none ? p : k->vec[PH], *sh = none ? s : k->vec[SH];
    sps_status st;
    /* p <- r + beta (p - omega v);  [phat <- D^-1 p] */
    if ((st = o->bicg_p(w, p, r, v, k->dinv, ph)) != SPS_OK) return st;
    if (fused) k->pc_applies++;
    /* phat <- M^-1 p */
    if (k->pcmode == SPS_PCM_APPLY && (st = sps__kr_prec(k, p, ph)) != SPS_OK) return st;
    /* v <- A phat */
    if ((st = sps__kr_spmv(k, ph, v)) != SPS_OK) return st;
    /* alpha <- rho / r0hat'v   (r0hat'v = 0: BREAKDOWN) */
    if ((st = o->dot(w, r0, v, NULL, NULL, SPS_FIN_BICG_ALPHA, 0)) != SPS_OK) return st;
    /* s <- r - alpha v;  [shat <- D^-1 s];  ||s|| <= tol: converged at the half step */
    if ((st = o->bicg_s(w, s, r, v, k->dinv, sh)) != SPS_OK) return st;
    if (fused) k->pc_applies++;
    /* shat <- M^-1 s */
    if (k->pcmode == SPS_PCM_APPLY && (st = sps__kr_prec(k, s, sh)) != SPS_OK) return st;
    /* t <- A shat */
    if ((st = sps__kr_spmv(k, sh, t)) != SPS_OK) return st;
    /* omega <- t's / t't   (t't = 0: BREAKDOWN keeping x + alpha phat) */
    if ((st = o->dot(w, t, s, t, t, SPS_FIN_BICG_OMEGA, 0)) != SPS_OK) return st;
    /* x <- x + alpha phat + omega shat;  r <- s - omega t;  ||r||;
     * rho' <- r0hat'r, beta <- (rho'/rho)(alpha/omega)   (rho' ~ 0 or omega = 0: BREAKDOWN)
     * (stopped at this iteration's half step: x <- x + alpha phat only) */
    return o->bicg_x(w, j, k->x, r, ph, sh, s, t, r0);
}

const sps_method_impl sps__method_bicgstab = {
    .nvec = bicg_nvec,
    .bind = bicg_bind,
    .start = bicg_start,
    .iterate = bicg_iterate,
};
