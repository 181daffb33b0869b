/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/idr/idr.c: right-preconditioned IDR(s) with
 * biorthogonalisation (van Gijzen and Sonneveld 2011, Algorithm 913), s <= 4
 * (default 4), for nonsymmetric systems where BiCGSTAB is erratic and GMRES(m)
 * stagnates.
 *
 * A cycle is s + 1 iterations, each one SpMV and one preconditioner
 * application: s steps that build G = A U with P'G lower triangular, then a
 * dimension-reduction step (the omega step, with the angle safeguard kappa =
 * 0.7). The shadow space P (n x s) is pseudo-random with a fixed seed,
 * orthonormalised on the host: a solve is repeatable. Step k of a cycle:
 *   v = r - G(:,k:s) c;  vh = M^-1 v;  U_k = om vh + U(:,k:s) c;  G_k = A U_k
 *   for i < k: alpha = P_i'G_k / M_ii;  G_k -= alpha G_i;  U_k -= alpha U_i
 *   M(k:s,k) = P(:,k:s)'G_k;  beta = f_k / M_kk;  r -= beta G_k;  x += beta U_k
 * and the reduction: vh = M^-1 r; t = A vh; om = t'r / t't; x += om vh;
 * r -= om t; f = P'r. The scalars live beside the vectors (idr_state.h):
 * no host synchronization inside an iteration. */
#include "../krylov.h"
#include "idr.h"

#include <stdlib.h>
#include <string.h>

/* r v t [vh];  pieces: P, G, U (s n each) */
enum { R, V, T, VH };
enum { PP, PG, PU };

/* s, and never more than n (the shadow space has at most n independent vectors). */
static int64_t idr_s(const sps_krylov *k)
{
    int64_t s = k->cfg->opt[0] >= 1 ? (int64_t)k->cfg->opt[0] : SPS_IDR_SMAX;
    return s < k->w.n ? s : k->w.n < 1 ? 1 : k->w.n;
}

static void idr_work(const sps_krylov *k, sps_kwork *wk)
{
    size_t sn = (size_t)idr_s(k) * (size_t)k->w.n;
    wk->nvec = k->pcmode == SPS_PCM_NONE ? 3 : 4;
    wk->npiece = 3;
    wk->piece[PP] = wk->piece[PG] = wk->piece[PU] = sn;
    wk->r = R;
    wk->scratch = T;
    wk->state_bytes = sizeof(sps_idr_state);
}

static void idr_init(const sps_krylov *k, void *ms)
{
    sps_idr_state *is = ms;
    is->s = idr_s(k);
    is->k = 0;
    is->om = 1.0;
    for (int i = 0; i < SPS_IDR_SMAX; i++) SPS_IDR_AT(is, i, i) = 1.0;
}

static sps_status idr_param(sps_context *ctx, sps_kcfg *cfg, const char *key, const char *value)
{
    char *end = NULL;
    long v = strtol(value, &end, 10);
    if (strcmp(key, "s") != 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "idr: unknown parameter '%s' (s)", key);
    if (!*value || *end || v < 1 || v > SPS_IDR_SMAX)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "idr: s must be an integer from 1 to %d (got '%s')",
                        SPS_IDR_SMAX, value);
    cfg->opt[0] = (double)v;
    return SPS_OK;
}

/* The shadow space: s pseudo-random vectors (fixed seed), orthonormalised
 * by modified Gram-Schmidt on the host, then copied in. */
static sps_status make_shadow(sps_krylov *k, int64_t s)
{
    size_t n = (size_t)k->w.n;
    double *p = malloc(sizeof(double) * (size_t)s * n + 1);
    if (!p) return sps__err(k->w.ctx, SPS_ERR_NO_MEMORY, "idr: out of memory (shadow space)");
    uint64_t z = 0x9E3779B97F4A7C15ull;
    for (size_t e = 0; e < (size_t)s * n; e++) {
        z = z * 6364136223846793005ull + 1442695040888963407ull;
        p[e] = (double)(z >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
    }
    for (int64_t i = 0; i < s; i++) {
        double *pi = p + (size_t)i * n;
        for (int64_t j = 0; j < i; j++) {
            const double *pj = p + (size_t)j * n;
            double d = 0;
            for (size_t e = 0; e < n; e++) d += pj[e] * pi[e];
            for (size_t e = 0; e < n; e++) pi[e] -= d * pj[e];
        }
        double nn = 0;
        for (size_t e = 0; e < n; e++) nn += pi[e] * pi[e];
        nn = nn > 0 ? 1.0 / sqrt(nn) : 0.0;
        for (size_t e = 0; e < n; e++) pi[e] *= nn;
    }
    sps_status st = k->ops->copy_in(k->w.ctx, k->piece[PP], p, sizeof(double) * (size_t)s * n);
    free(p);
    return st;
}

static sps_kfin idr_fin(const sps_krylov *k, int step)
{
    return sps__kfin(((const sps_idr_ops *)k->mops)->finish, NULL, step, 1, 0);
}

/* f = P'r (then k = 0 and c, in the finish). */
static sps_status shadow_dot(sps_krylov *k, int64_t s)
{
    const double *a[SPS_IDR_SMAX], *b[SPS_IDR_SMAX];
    size_t n = (size_t)k->w.n;
    for (int64_t i = 0; i < s; i++) {
        a[i] = k->piece[PP] + (size_t)i * n;
        b[i] = k->vec[R];
    }
    sps_kfin f = idr_fin(k, SPS_IDR_F);
    return k->ops->dot(&k->w, (int)s, a, b, &f);
}

/* After r0 (or a residual replacement): G = U = 0, M = I, om = 1; f = P'r. */
static sps_status idr_start(sps_krylov *k)
{
    int64_t s = idr_s(k);
    sps_status st;
    size_t n = (size_t)k->w.n;
    k->inner = 0;
    sps_kfin fi = idr_fin(k, SPS_IDR_INIT);
    if ((st = fi.fn(&k->w, &fi)) != SPS_OK) return st;
    if ((st = make_shadow(k, s)) != SPS_OK) return st;
    for (int64_t i = 0; i < s; i++) {
        if ((st = k->ops->fill(&k->w, k->piece[PG] + (size_t)i * n, 0.0)) != SPS_OK) return st;
        if ((st = k->ops->fill(&k->w, k->piece[PU] + (size_t)i * n, 0.0)) != SPS_OK) return st;
    }
    return shadow_dot(k, s);
}

/* vh = M^-1 v (vh = v without a preconditioner). */
static sps_status precond(sps_krylov *k, double *v, double **vh)
{
    *vh = k->pcmode == SPS_PCM_NONE ? v : k->vec[VH];
    return k->pcmode == SPS_PCM_NONE ? SPS_OK : sps__kr_prec(k, v, *vh);
}

static sps_status idr_step(sps_krylov *k, int64_t kk, int64_t s)
{
    const sps_idr_ops *io = k->mops;
    sps_kws *w = &k->w;
    size_t n = (size_t)w->n;
    double *G = k->piece[PG], *U = k->piece[PU], *P = k->piece[PP];
    double *gk = G + (size_t)kk * n, *uk = U + (size_t)kk * n, *vh;
    sps_status st;
    if ((st = io->comb(w, SPS_IDR_COMB_V, k->vec[V], k->vec[R], G)) != SPS_OK) return st;
    if ((st = precond(k, k->vec[V], &vh)) != SPS_OK) return st;
    if ((st = io->comb(w, SPS_IDR_COMB_U, uk, vh, U)) != SPS_OK) return st;
    if ((st = sps__kr_spmv(k, uk, gk)) != SPS_OK) return st;
    for (int64_t i = 0; i < kk; i++) {
        const double *a[1] = {P + (size_t)i * n}, *b[1] = {gk};
        sps_kfin f = idr_fin(k, SPS_IDR_ALPHA + (int)i);
        if ((st = k->ops->dot(w, 1, a, b, &f)) != SPS_OK) return st;
        if ((st = io->orth(w, gk, uk, G + (size_t)i * n, U + (size_t)i * n)) != SPS_OK) return st;
    }
    const double *a[SPS_IDR_SMAX], *b[SPS_IDR_SMAX];
    for (int64_t j = kk; j < s; j++) {
        a[j - kk] = P + (size_t)j * n;
        b[j - kk] = gk;
    }
    sps_kfin fm = idr_fin(k, SPS_IDR_M);
    if ((st = k->ops->dot(w, (int)(s - kk), a, b, &fm)) != SPS_OK) return st;
    return io->update(w, SPS_IDR_R, k->x, k->vec[R], uk, gk);
}

static sps_status idr_reduce(sps_krylov *k, int64_t s)
{
    const sps_idr_ops *io = k->mops;
    sps_kws *w = &k->w;
    double *r = k->vec[R], *t = k->vec[T], *vh;
    sps_status st;
    if ((st = precond(k, r, &vh)) != SPS_OK) return st;
    if ((st = sps__kr_spmv(k, vh, t)) != SPS_OK) return st;
    const double *a[2] = {t, t}, *b[2] = {r, t};
    sps_kfin fo = idr_fin(k, SPS_IDR_OM);
    if ((st = k->ops->dot(w, 2, a, b, &fo)) != SPS_OK) return st;
    if ((st = io->update(w, SPS_IDR_R2, k->x, r, vh, t)) != SPS_OK) return st;
    return shadow_dot(k, s);
}

/* Iteration j: step k->inner mod (s + 1) of the cycle (the host counts the
 * steps; the device's k follows the same sequence). */
static sps_status idr_iterate(sps_krylov *k, int64_t j)
{
    (void)j;
    int64_t s = idr_s(k), ph = k->inner % (s + 1);
    k->inner++;
    return ph < s ? idr_step(k, ph, s) : idr_reduce(k, s);
}

const sps_method_impl sps__method_idr = {
    .name = "idr", .id = SPS_IDR, .caps = 0,
    .summary = "right-preconditioned IDR(s), s = 4 (idr:s=K, K <= 4; general A)",
    .param = idr_param, .work = idr_work, .init = idr_init, .start = idr_start,
    .iterate = idr_iterate,
};
