/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres.c: restarted, right-preconditioned GMRES(m) (Saad and
 * Schultz 1986) with classical Gram-Schmidt applied twice (CGS2) as dense
 * GEMVs on the Krylov basis, Givens rotations, and a convergence test at every
 * inner iteration from the rotated residual |g[j+1]|.
 *
 * Memory movement per inner iteration j (j+1 basis vectors to orthogonalise
 * against), in vectors of n doubles (Jacobi; the SpMV moves its format's bytes):
 *   z = D^-1 v_j                            3n
 *   1x SpMV  w = A z                        A + 2n
 *   h = V'w, w -= V h, twice (4 GEMVs)      4(j+1)n + 6n
 *   ||w||                                   n
 *   v_{j+1} = w / h_{j+1,j}                 2n
 *   total                                   (4(j+1) + 14)n + A
 * The basis dominates: GMRES(m) averages 2(m+1)n per iteration for the GEMVs.
 * Without a preconditioner z is v_j (3n less). Once per cycle: y = R^-1 g
 * (m^2/2 flops, one thread), x += M^-1 V y (kn + 3n), and at a restart
 * r = b - A x, ||r||, v_0 = r / ||r|| (A + 6n).
 * Launches per inner iteration on the GPU: SpMV, 4 GEMVs, partials + finish
 * (the finish applies the rotations), the scale: 8 (+1 for Jacobi). */
#include "krylov.h"

/* w [z [u]] */
enum { W, Z, U };

static int gm_nvec(int pcmode)
{
    return pcmode == SPS_PCM_NONE ? 1 : pcmode == SPS_PCM_JACOBI ? 2 : 3;
}

static void gm_bind(sps_krylov *k)
{
    k->r = k->w.V; /* r0 is computed into v_0 and scaled in place */
    k->scratch = k->vec[W];
}

static sps_status gm_start(sps_krylov *k)
{
    sps_status st;
    /* g <- ||r0|| e1;  v_0 <- r0 / ||r0|| */
    if ((st = k->ops->finish(&k->w, SPS_FIN_GM_START, 0)) != SPS_OK) return st;
    k->inner = 0;
    return k->ops->gm_scale(&k->w, -1, k->w.V);
}

/* End of a cycle (or a stop inside one): y <- R^-1 g;  x <- x + M^-1 V y.
 * Enqueued exactly once per cycle; it reads the column count from the state,
 * so it is right whichever inner iteration the device stopped at. */
static sps_status gm_end_cycle(sps_krylov *k)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_status st;
    k->inner = 0;
    if ((st = o->gm_solve(w)) != SPS_OK) return st;
    if (k->pcmode != SPS_PCM_APPLY) {
        /* x <- x + [D^-1] V y */
        if (k->pcmode == SPS_PCM_JACOBI) k->pc_applies++;
        return o->gm_update(w, k->x, k->dinv, NULL);
    }
    /* u <- V y;  z <- M^-1 u;  x <- x + z */
    double *u = k->vec[U], *z = k->vec[Z];
    if ((st = o->gm_update(w, k->x, NULL, u)) != SPS_OK) return st;
    if ((st = sps__kr_prec(k, u, z)) != SPS_OK) return st;
    return o->add(w, k->x, z);
}

static sps_status gm_iterate(sps_krylov *k, int64_t jj)
{
    (void)jj;
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    int64_t j = k->inner, m = w->m, n = w->n;
    double *vj = w->V + j * n, *wv = k->vec[W];
    double *h = w->gm.H + j * (m + 1), *h2 = w->gm.h2;
    sps_status st;
    /* z <- M^-1 v_j */
    double *z = vj;
    if (k->pcmode != SPS_PCM_NONE) {
        z = k->vec[Z];
        if ((st = sps__kr_prec(k, vj, z)) != SPS_OK) return st;
    }
    /* w <- A z */
    if ((st = sps__kr_spmv(k, z, wv)) != SPS_OK) return st;
    /* h <- V'w;  w <- w - V h;  h2 <- V'w;  w <- w - V h2   (CGS2) */
    if ((st = o->gemv_t(w, j + 1, wv, h)) != SPS_OK) return st;
    if ((st = o->gemv_n(w, j + 1, h, wv)) != SPS_OK) return st;
    if ((st = o->gemv_t(w, j + 1, wv, h2)) != SPS_OK) return st;
    if ((st = o->gemv_n(w, j + 1, h2, wv)) != SPS_OK) return st;
    /* H[:, j] <- h + h2;  H[j+1, j] <- ||w||;  rotate;  |g[j+1]| is the residual */
    if ((st = o->dot(w, wv, wv, NULL, NULL, SPS_FIN_GM_ARNOLDI, j)) != SPS_OK) return st;
    k->inner = j + 1;
    if (j + 1 < m) {
        /* v_{j+1} <- w / H[j+1, j] */
        return o->gm_scale(w, j, wv);
    }
    /* The cycle is full: update x, then restart from the true residual:
     * v_0 <- b - A x;  g <- ||v_0|| e1 (stagnation, dtol, tolerance tests);
     * v_0 <- v_0 / ||v_0|| */
    if ((st = gm_end_cycle(k)) != SPS_OK) return st;
    if ((st = sps__kr_resid(k, w->V)) != SPS_OK) return st;
    if ((st = o->dot(w, w->V, w->V, NULL, NULL, SPS_FIN_GM_START, 1)) != SPS_OK) return st;
    return o->gm_scale(w, -1, w->V);
}

/* Batches stop at the cycle's end, so the device never runs past a cycle
 * whose end the host has not enqueued. */
static int64_t gm_room(const sps_krylov *k) { return k->w.m - k->inner; }

static sps_status gm_checked(sps_krylov *k, const sps_kstate *st)
{
    /* Stopped inside a cycle: its update is still due. */
    if (st->stop && k->inner > 0) return gm_end_cycle(k);
    return SPS_OK;
}

const sps_method_impl sps__method_gmres = {
    .nvec = gm_nvec,
    .bind = gm_bind,
    .start = gm_start,
    .iterate = gm_iterate,
    .room = gm_room,
    .checked = gm_checked,
};
