/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/cg.c: preconditioned conjugate gradients.
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
#include "../engine.h"
#include "cg.h"

/* r p q [z] */
enum { R, P, Q, Z };

static void cg_work(const sps_krylov *k, sps_kwork *wk)
{
    wk->nvec = k->pcmode == SPS_PCM_NONE ? 3 : 4;
    wk->state_bytes = sizeof(sps_cg_xstate);
    wk->r = R;
    wk->scratch = Q;
}

static double *cg_z(sps_krylov *k) { return k->pcmode == SPS_PCM_NONE ? k->vec[R] : k->vec[Z]; }

static sps_kfin cg_fin(const sps_krylov *k, int step)
{
    return sps__kfin(((const sps_cg_ops *)k->mops)->finish, NULL, step, 1, 0);
}

static sps_status cg_start(sps_krylov *k)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    double *r = k->vec[R], *z = cg_z(k), *p = k->vec[P];
    sps_status st;
    if (k->pcmode != SPS_PCM_NONE) {
        /* z <- M^-1 r;  rho <- r'z */
        sps_kfin f = cg_fin(k, SPS_CG_RHO0);
        const double *a[1] = {r}, *b[1] = {z};
        if ((st = sps__kr_prec(k, r, z)) != SPS_OK) return st;
        if ((st = o->dot(w, 1, a, b, &f)) != SPS_OK) return st;
    } else {
        /* rho <- r'r (the sums of ||r0||) */
        sps_kfin f = cg_fin(k, SPS_CG_INIT);
        if ((st = f.fn(w, &f)) != SPS_OK) return st;
    }
    /* p <- z */
    return o->copy(w, p, z);
}

/* The fused engine with no or Jacobi preconditioning (cg_traffic): q = A p
 * with p'q in one pass; r, [z],
 * r'r [r'z] in one pass; x and p in one pass. x's update waits for the next
 * iteration's pass, so the finish of p'q (ungated) records that x is up to
 * date, and the x-and-p pass brings x up to date even in the iteration that
 * stopped (once). */
static sps_status cg_iterate_fused(sps_krylov *k)
{
    const sps_cg_ops *co = k->mops;
    sps_kws *w = &k->w;
    double *r = k->vec[R], *p = k->vec[P], *q = k->vec[Q], *z = cg_z(k);
    const double *dinv = sps__kr_diag(k);
    int parts = 0;
    sps_status st;
    if ((st = sps__kr_spmv_dot(k, p, q, &parts)) != SPS_OK) return st;
    if ((st = co->finish_parts(w, parts, SPS_CG_ALPHA_X, 0)) != SPS_OK) return st;
    if ((st = co->resid(w, r, q, dinv, z, dinv ? SPS_CG_RES_FUSED : SPS_CG_RES_PLAIN)) != SPS_OK)
        return st;
    if (dinv) k->pc_applies++;
    k->ran = "fused";
    return co->xp(w, k->x, p, z);
}

static sps_status cg_iterate(sps_krylov *k, int64_t j)
{
    (void)j;
    const sps_vops *o = k->ops;
    const sps_cg_ops *co = k->mops;
    sps_kws *w = &k->w;
    double *r = k->vec[R], *p = k->vec[P], *q = k->vec[Q], *z = cg_z(k);
    int step = k->pcmode == SPS_PCM_NONE     ? SPS_CG_RES_PLAIN
               : k->pcmode == SPS_PCM_JACOBI ? SPS_CG_RES_FUSED
                                             : SPS_CG_RES_DEFERRED;
    sps_status st;
    if (sps__engine_fused(k) && k->pcmode != SPS_PCM_APPLY) return cg_iterate_fused(k);
    if (sps__engine_fused(k)) {
        /* q <- A p with p'q in the same pass;  alpha <- rho / p'q */
        int parts = 0;
        if ((st = sps__kr_spmv_dot(k, p, q, &parts)) != SPS_OK) return st;
        if ((st = co->finish_parts(w, parts, SPS_CG_ALPHA, 1)) != SPS_OK) return st;
        k->ran = "fused";
    } else {
        /* q <- A p */
        if ((st = sps__kr_spmv(k, p, q)) != SPS_OK) return st;
        /* alpha <- rho / p'q   (p'q <= 0: INDEFINITE) */
        sps_kfin fa = cg_fin(k, SPS_CG_ALPHA);
        const double *a[1] = {p}, *b[1] = {q};
        if ((st = o->dot(w, 1, a, b, &fa)) != SPS_OK) return st;
    }
    /* x <- x + alpha p;  r <- r - alpha q;  [z <- D^-1 r];  ||r||, [rho' <- r'z, beta] */
    if ((st = co->update(w, k->x, r, p, q, sps__kr_diag(k), z, step)) != SPS_OK) return st;
    if (step == SPS_CG_RES_FUSED) k->pc_applies++;
    if (step == SPS_CG_RES_DEFERRED) {
        /* z <- M^-1 r;  rho' <- r'z, beta <- rho' / rho   (r'z <= 0: INDEFINITE_PC) */
        sps_kfin fz = cg_fin(k, SPS_CG_RZ);
        const double *ra[1] = {r}, *zb[1] = {z};
        if ((st = sps__kr_prec(k, r, z)) != SPS_OK) return st;
        if ((st = o->dot(w, 1, ra, zb, &fz)) != SPS_OK) return st;
    }
    /* p <- z + beta p */
    return co->direction(w, p, z);
}

/* The traffic model (the header's table without the SpMV's own bytes, which
 * include p read and q written): 11n without a preconditioner, 13n with
 * Jacobi fused, 13n plus the preconditioner's own traffic (not modelled)
 * with another. The fused engine: p'q in the SpMV's pass; r, [z] and
 * r'r [r'z] in one pass (3n, Jacobi 5n); x and p in one pass (5n): 8n, 10n
 * with Jacobi (the "CG in 10 vectors" counts the SpMV's 2n), and
 * 11n with another preconditioner (only p'q is fused). */
static double cg_traffic(const sps_krylov *k, double *spmvs)
{
    *spmvs = 1.0;
    double v = k->pcmode == SPS_PCM_NONE ? 11.0 : 13.0;
    if (sps__engine_fused(k)) v = k->pcmode == SPS_PCM_NONE ? 8.0 : k->pcmode == SPS_PCM_JACOBI ? 10.0 : 11.0;
    return v * 8.0 * (double)k->w.n;
}

/* The whole iteration phase in one launch (engine.h): no or Jacobi
 * preconditioning, n within the engine's threshold. */
static sps_status cg_onekernel(sps_krylov *k, const sps_dev_rows *rows)
{
    const sps_cg_ops *co = k->mops;
    if (!co->onekernel || !rows || k->pcmode == SPS_PCM_APPLY || k->w.n > sps__engine_onek_max())
        return SPS_ERR_UNSUPPORTED;
    int step = k->pcmode == SPS_PCM_NONE ? SPS_CG_RES_PLAIN : SPS_CG_RES_FUSED;
    return co->onekernel(&k->w, rows, k->x, k->vec[R], k->vec[P], k->vec[Q], sps__kr_diag(k), cg_z(k),
                         step);
}

const sps_method_impl sps__method_cg = {
    .name = "cg", .id = SPS_CG, .caps = SPS_KM_SPD,
    .summary = "preconditioned conjugate gradients (A and M symmetric positive definite)",
    .work = cg_work, .start = cg_start, .iterate = cg_iterate,
    .replay = 1, .traffic = cg_traffic, .onekernel = cg_onekernel,
};
