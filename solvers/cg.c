/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg.c: preconditioned conjugate gradients.
 *
 * Memory movement per iteration, in vectors of n doubles (Jacobi fused; the
 * SpMV moves its format's bytes plus p read and q written):
 *   1x SpMV                       A + 2n
 *   p'q                           2n
 *   x, r update, z = D^-1 r,      8n  (read x p r q dinv, write x r z)
 *     r'r and r'z in the same pass
 *   p = z + beta p                3n
 *   total                         15n + A
 * Without a preconditioner z is r (13n + A: no dinv, no z). With another
 * preconditioner: its apply, plus r'z (2n) on its own.
 * Launches per iteration on the GPU: SpMV, 2 reductions (partials + finish
 * each), 1 update: 6, and no host synchronization. */
#include "krylov.h"

/* r p q [z] */
enum { R, P, Q, Z };

static int cg_nvec(int pcmode) { return pcmode == SPS_PCM_NONE ? 3 : 4; }

static void cg_bind(sps_krylov *k)
{
    k->r = k->vec[R];
    k->scratch = k->vec[Q];
}

static double *cg_z(sps_krylov *k) { return k->pcmode == SPS_PCM_NONE ? k->vec[R] : k->vec[Z]; }

static sps_status cg_start(sps_krylov *k)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    double *r = k->vec[R], *z = cg_z(k), *p = k->vec[P];
    sps_status st;
    if (k->pcmode != SPS_PCM_NONE) {
        /* z <- M^-1 r;  rho <- r'z  (without M, rho = r'r is already set) */
        if ((st = sps__kr_prec(k, r, z)) != SPS_OK) return st;
        if ((st = o->dot(w, r, z, NULL, NULL, SPS_FIN_CG_RHO0, 0)) != SPS_OK) return st;
    }
    /* p <- z */
    return o->copy(w, p, z);
}

static sps_status cg_iterate(sps_krylov *k, int64_t j)
{
    (void)j;
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    double *r = k->vec[R], *p = k->vec[P], *q = k->vec[Q], *z = cg_z(k);
    int mode = k->pcmode == SPS_PCM_NONE     ? SPS_CG_PLAIN
               : k->pcmode == SPS_PCM_JACOBI ? SPS_CG_FUSED
                                             : SPS_CG_DEFERRED;
    sps_status st;
    /* q <- A p */
    if ((st = sps__kr_spmv(k, p, q)) != SPS_OK) return st;
    /* alpha <- rho / p'q   (p'q <= 0: INDEFINITE) */
    if ((st = o->dot(w, p, q, NULL, NULL, SPS_FIN_CG_ALPHA, 0)) != SPS_OK) return st;
    /* x <- x + alpha p;  r <- r - alpha q;  [z <- D^-1 r];  ||r||, [rho' <- r'z, beta] */
    if ((st = o->cg_update(w, k->x, r, p, q, k->dinv, z, mode)) != SPS_OK) return st;
    if (mode == SPS_CG_FUSED) k->pc_applies++;
    if (mode == SPS_CG_DEFERRED) {
        /* z <- M^-1 r;  rho' <- r'z, beta <- rho' / rho   (r'z <= 0: INDEFINITE_PC) */
        if ((st = sps__kr_prec(k, r, z)) != SPS_OK) return st;
        if ((st = o->dot(w, r, z, NULL, NULL, SPS_FIN_CG_RZ, 0)) != SPS_OK) return st;
    }
    /* p <- z + beta p */
    return o->cg_direction(w, p, z);
}

const sps_method_impl sps__method_cg = {
    .nvec = cg_nvec,
    .bind = cg_bind,
    .start = cg_start,
    .iterate = cg_iterate,
};
