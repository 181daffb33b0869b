/* SPDX-License-Identifier: MIT */
/* spsolve/dist/dsolve.c: distributed preconditioned CG and BiCGSTAB (none or
 * Jacobi).
 *
 * The method files (solvers/<method>/) compute their reductions inside their
 * own fused operations over the whole local vector (cg_host.c's update sums
 * r'r in the same loop), and solve.c drives them with one operator object;
 * running them over several ranks would need a distributed copy of every
 * method's fused table and hooks in solve.c. So CG and BiCGSTAB are written
 * here, over the dvops table and sps__dist_dot, and share the scalar logic
 * verbatim: the stopping rule and the common steps (kstate.h) and the
 * methods' finish steps (cg_state.h, bicgstab_state.h) make the same
 * decisions as the single-GPU solve. The scalars
 * live on the host (one read per reduction: the partials come back after
 * the all-gather and are summed there in global block order). */
#include "dist_impl.h"
#include "solvers/bicgstab/bicgstab_state.h"
#include "solvers/cg/cg_state.h"

#include <string.h>

/* CG's vectors, then BiCGSTAB's (r0hat, phat, v, s, shat, t) */
enum { VX, VR, VP, VQ, VZ, VD, VB, NCG, VRH = NCG, VPH, VV, VS, VSH, VT, NV };

typedef struct dcg {
    sps_dist_operator *op;
    const sps_dvops *o;
    sps_context *ctx;
    sps_idx n;          /* local rows */
    double *v[NV];      /* each with room for the halo */
    int nv;             /* vectors of the method */
    int jac;
    sps_kstate st;
    sps_cg_state cs;
    sps_bicg_state bs;
    int64_t spmvs, pcs, reps;
} dcg;

static sps_status dot1(dcg *g, const double *a, const double *b, double *s)
{
    const double *pa[1] = {a}, *pb[1] = {b};
    return sps__dist_dot(g->op, 1, pa, pb, s);
}

/* dst = b - A src (src has room for the halo) */
static sps_status resid(dcg *g, double *src, double *dst)
{
    sps_status st = sps__dist_spmv(g->op, src, g->v[VQ]);
    g->spmvs++;
    if (st == SPS_OK) st = g->o->axpby(g->ctx, g->n, dst, 1.0, g->v[VB], 0.0);
    if (st == SPS_OK) st = g->o->axpby(g->ctx, g->n, dst, -1.0, g->v[VQ], 1.0);
    return st;
}

/* r'r gives ||r0|| (step: SPS_KC_R0 or SPS_KC_RESTART); then z, rho, p. */
static sps_status start(dcg *g, int step)
{
    double s[SPS_K_NSUM] = {0};
    double *r = g->v[VR], *z = g->jac ? g->v[VZ] : r;
    sps_status st = dot1(g, r, r, s);
    if (st != SPS_OK) return st;
    sps__k_common_finish(step, &g->st, s, NULL);
    if (g->jac) {
        if ((st = g->o->mul(g->ctx, g->n, z, g->v[VD], r)) != SPS_OK) return st;
        g->pcs++;
        if ((st = dot1(g, r, z, s)) != SPS_OK) return st;
        sps__cg_finish(SPS_CG_RHO0, &g->st, &g->cs, s, NULL);
    } else {
        sps__cg_finish(SPS_CG_INIT, &g->st, &g->cs, s, NULL);
    }
    return g->o->axpby(g->ctx, g->n, g->v[VP], 1.0, z, 0.0);
}

static sps_status iterate(dcg *g)
{
    double *x = g->v[VX], *r = g->v[VR], *p = g->v[VP], *q = g->v[VQ];
    double *z = g->jac ? g->v[VZ] : r;
    const double *d = g->jac ? g->v[VD] : NULL;
    double s[SPS_K_NSUM] = {0};
    sps_status st;
    while (!g->st.stop) {
        if ((st = sps__dist_spmv(g->op, p, q)) != SPS_OK) return st;
        g->spmvs++;
        if ((st = dot1(g, p, q, s)) != SPS_OK) return st;
        sps__cg_finish(SPS_CG_ALPHA, &g->st, &g->cs, s, NULL);
        if (g->st.stop) break;
        if ((st = g->o->cg_update(g->ctx, g->n, g->cs.alpha, x, p, r, q, d, z)) != SPS_OK) return st;
        const double *a2[2] = {r, r}, *b2[2] = {r, z};
        if ((st = sps__dist_dot(g->op, g->jac ? 2 : 1, a2, b2, s)) != SPS_OK) return st;
        if (g->jac) g->pcs++;
        sps__cg_finish(g->jac ? SPS_CG_RES_FUSED : SPS_CG_RES_PLAIN, &g->st, &g->cs, s, NULL);
        if (g->st.stop) break;
        if ((st = g->o->axpby(g->ctx, g->n, p, 1.0, z, g->cs.beta)) != SPS_OK) return st;
    }
    return SPS_OK;
}

static sps_status run_method(dcg *g, int step);

/* The true residual overrules the recurrence (as solve.c's true_residual). */
static sps_status finish(dcg *g)
{
    double s[SPS_K_NSUM] = {0};
    for (int rep = 0;; rep++) {
        sps_status st = resid(g, g->v[VX], g->v[VR]);
        if (st == SPS_OK) st = dot1(g, g->v[VR], g->v[VR], s);
        if (st != SPS_OK) return st;
        g->st.true_rnorm = sqrt(s[0]);
        int conv = g->st.reason > 0 && g->st.reason != SPS_CONVERGED_ZERO_RHS;
        if (!conv || g->st.true_rnorm <= g->st.tol) return SPS_OK;
        if (rep == SPS_K_MAX_REPLACE || g->st.iter >= g->st.maxit) {
            g->st.reason = SPS_DIVERGED_TRUE_RESIDUAL;
            return SPS_OK;
        }
        g->reps++;
        g->st.stop = 0;
        g->st.reason = SPS_ITERATING;
        if ((st = run_method(g, SPS_KC_RESTART)) != SPS_OK) return st;
    }
}

/* ---- BiCGSTAB (van der Vorst; solvers/bicgstab/ for the single GPU) ----- */

/* out = M^-1 in (Jacobi), or a copy */
static sps_status prec(dcg *g, const double *in, double *out)
{
    if (!g->jac) return g->o->axpby(g->ctx, g->n, out, 1.0, in, 0.0);
    g->pcs++;
    return g->o->mul(g->ctx, g->n, out, g->v[VD], in);
}

/* p = r + beta (p - omega v) (the first: p = r); phat = M^-1 p; v = A phat;
 * alpha = rho / r0hat'v */
static sps_status bicg_alpha(dcg *g, int first)
{
    const sps_dvops *o = g->o;
    double s[SPS_K_NSUM] = {0};
    sps_status st;
    double *p = g->v[VP], *v = g->v[VV];
    if (first) st = o->axpby(g->ctx, g->n, p, 1.0, g->v[VR], 0.0);
    else if ((st = o->axpby(g->ctx, g->n, p, -g->bs.omega, v, 1.0)) == SPS_OK)
        st = o->axpby(g->ctx, g->n, p, 1.0, g->v[VR], g->bs.beta);
    if (st != SPS_OK || (st = prec(g, p, g->v[VPH])) != SPS_OK) return st;
    if ((st = sps__dist_spmv(g->op, g->v[VPH], v)) != SPS_OK) return st;
    g->spmvs++;
    if ((st = dot1(g, g->v[VRH], v, s)) != SPS_OK) return st;
    sps__bicg_finish(SPS_BICG_ALPHA, &g->st, &g->bs, s, NULL);
    return SPS_OK;
}

/* s = r - alpha v; ||s|| (converged at the half step: x += alpha phat) */
static sps_status bicg_half(dcg *g)
{
    double s[SPS_K_NSUM] = {0};
    double *sv = g->v[VS];
    sps_status st = g->o->axpby(g->ctx, g->n, sv, 1.0, g->v[VR], 0.0);
    if (st == SPS_OK) st = g->o->axpby(g->ctx, g->n, sv, -g->bs.alpha, g->v[VV], 1.0);
    if (st == SPS_OK) st = dot1(g, sv, sv, s);
    if (st != SPS_OK) return st;
    sps__bicg_finish(SPS_BICG_S, &g->st, &g->bs, s, NULL);
    return SPS_OK;
}

/* shat = M^-1 s; t = A shat; omega; x += alpha phat + omega shat;
 * r = s - omega t; r'r, r0hat'r: the residual test, rho, beta */
static sps_status bicg_full(dcg *g)
{
    const sps_dvops *o = g->o;
    double s[SPS_K_NSUM] = {0};
    double *t = g->v[VT], *sv = g->v[VS], *r = g->v[VR];
    sps_status st = prec(g, sv, g->v[VSH]);
    if (st == SPS_OK) st = sps__dist_spmv(g->op, g->v[VSH], t);
    g->spmvs++;
    const double *a2[2] = {t, t}, *b2[2] = {sv, t};
    if (st == SPS_OK) st = sps__dist_dot(g->op, 2, a2, b2, s);
    if (st != SPS_OK) return st;
    sps__bicg_finish(SPS_BICG_OMEGA, &g->st, &g->bs, s, NULL);
    if (g->st.stop) return SPS_OK;
    if ((st = o->axpby(g->ctx, g->n, g->v[VX], g->bs.alpha, g->v[VPH], 1.0)) != SPS_OK ||
        (st = o->axpby(g->ctx, g->n, g->v[VX], g->bs.omega, g->v[VSH], 1.0)) != SPS_OK ||
        (st = o->axpby(g->ctx, g->n, r, 1.0, sv, 0.0)) != SPS_OK ||
        (st = o->axpby(g->ctx, g->n, r, -g->bs.omega, t, 1.0)) != SPS_OK)
        return st;
    const double *c2[2] = {r, g->v[VRH]}, *d2[2] = {r, r};
    if ((st = sps__dist_dot(g->op, 2, c2, d2, s)) != SPS_OK) return st;
    s[2] = 0.0; /* x is updated as computed: no entry is held back */
    sps__bicg_finish(SPS_BICG_R, &g->st, &g->bs, s, NULL);
    return SPS_OK;
}

/* From r0: r0hat = r0, rho = r0'r0, then iterations until the state stops. */
static sps_status bicg_iterate(dcg *g, int step)
{
    double s[SPS_K_NSUM] = {0};
    sps_status st = dot1(g, g->v[VR], g->v[VR], s);
    if (st != SPS_OK) return st;
    sps__k_common_finish(step, &g->st, s, NULL);
    sps__bicg_finish(SPS_BICG_INIT, &g->st, &g->bs, s, NULL);
    if ((st = g->o->axpby(g->ctx, g->n, g->v[VRH], 1.0, g->v[VR], 0.0)) != SPS_OK) return st;
    for (int first = 1; !g->st.stop; first = 0) {
        if ((st = bicg_alpha(g, first)) != SPS_OK) return st;
        if (g->st.stop) break;
        if ((st = bicg_half(g)) != SPS_OK) return st;
        if (!g->st.stop && (st = bicg_full(g)) != SPS_OK) return st;
    }
    /* stopped at a half step (converged there, or t = 0): x += alpha phat */
    if (g->bs.half) return g->o->axpby(g->ctx, g->n, g->v[VX], g->bs.alpha, g->v[VPH], 1.0);
    return SPS_OK;
}

/* The method's start from r (step: SPS_KC_R0 or SPS_KC_RESTART) and its iterations. */
static sps_status run_method(dcg *g, int step)
{
    if (g->nv == NV) {
        g->bs.half = 0;
        return bicg_iterate(g, step);
    }
    sps_status st = start(g, step);
    return st == SPS_OK ? iterate(g) : st;
}

/* ||b||, the tolerance; a zero right-hand side gives x = 0. */
static sps_status begin(dcg *g)
{
    double s[SPS_K_NSUM] = {0};
    sps_status st = dot1(g, g->v[VB], g->v[VB], s);
    if (st != SPS_OK) return st;
    sps__k_common_finish(SPS_KC_BNORM, &g->st, s, NULL);
    if (g->st.stop && g->st.reason == SPS_K_RESCALE)
        return sps__err(g->ctx, SPS_ERR_UNSUPPORTED,
                        "sps_dist_solve: ||b|| is near 2^%lld, outside the range the distributed "
                        "solve handles without rescaling: scale b",
                        (long long)g->st.rescale_e);
    if (g->st.stop) {
        g->st.true_rnorm = g->st.bnorm;
        if (g->st.reason == SPS_CONVERGED_ZERO_RHS)
            return g->o->axpby(g->ctx, g->n, g->v[VX], 0.0, g->v[VB], 0.0);
        return SPS_OK;
    }
    if ((st = resid(g, g->v[VX], g->v[VR])) != SPS_OK) return st;
    return run_method(g, SPS_KC_R0);
}

/* The inverse diagonal of the local rows (Jacobi), on the host. */
static sps_status inv_diag(dcg *g, double *dh)
{
    const sps_csr *A = &g->op->h.A;
    for (sps_idx i = 0; i < A->nrows; i++) {
        double dv = 0.0;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            if (A->col_idx[p] == i) dv = A->val[p];
        if (!(dv != 0.0))
            return sps__err(g->ctx, SPS_ERR_UNSUPPORTED, "sps_dist_solve: jacobi: row %d has no nonzero diagonal entry",
                            (int)(g->op->h.lo + i));
        dh[i] = 1.0 / dv;
    }
    return SPS_OK;
}

static sps_status alloc_vectors(dcg *g, const double *b, const double *x)
{
    size_t n = (size_t)g->n, ext = n + (size_t)g->op->h.nhalo + 1, d = sizeof(double);
    sps_status st = SPS_OK;
    for (int k = 0; k < g->nv && st == SPS_OK; k++) st = g->o->alloc(g->ctx, ext * d, (void **)&g->v[k]);
    if (st == SPS_OK) st = g->o->copy_in(g->ctx, g->v[VB], b, n * d);
    if (st == SPS_OK) st = g->o->copy_in(g->ctx, g->v[VX], x, n * d);
    if (st != SPS_OK || !g->jac) return st;
    double *dh = sps__malloc((n + 1) * d);
    if (!dh) return sps__err(g->ctx, SPS_ERR_NO_MEMORY, "sps_dist_solve: out of memory");
    st = inv_diag(g, dh);
    if (st == SPS_OK) st = g->o->copy_in(g->ctx, g->v[VD], dh, n * d);
    sps__free(dh);
    return st;
}

void sps_dist_solve_opts_default(sps_dist_solve_opts *o)
{
    memset(o, 0, sizeof *o);
    o->method = SPS_CG;
    o->precond = "none";
    o->rtol = 1e-8;
    o->dtol = 1e5;
    o->maxit = 10000;
}

static sps_status check_opts(sps_dist_operator *op, const sps_dist_solve_opts *o, int *jac)
{
    sps_context *ctx = op->d->ctx;
    if (o->method != SPS_CG && o->method != SPS_BICGSTAB)
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "sps_dist_solve: method %s is not distributed yet (cg and bicgstab are)",
                        sps_method_name(o->method));
    *jac = o->precond && strcmp(o->precond, "jacobi") == 0;
    if (o->precond && !*jac && strcmp(o->precond, "none") != 0)
        return sps__err(ctx, SPS_ERR_UNSUPPORTED, "sps_dist_solve: preconditioner '%s' (none or jacobi)", o->precond);
    if (!op->aligned)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "sps_dist_solve: row starts must be multiples of %d (sps_dist_block; "
                        "sps_dist_partition) for reductions independent of the rank count", (int)op->blk);
    if (!(o->rtol >= 0) || !(o->atol >= 0) || !(o->dtol > 0) || o->maxit < 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_solve: rtol, atol >= 0, dtol > 0, maxit >= 0");
    return SPS_OK;
}

static void fill_info(const dcg *g, sps_solve_info *info, double t0, double t1, double t2, double t3)
{
    const double t[4] = {t0, t1, t2, t3};
    memset(info, 0, sizeof *info);
    sps__kstate_report(&g->st, 0, t, info);
    info->spmvs = g->spmvs;
    info->precond_applies = g->pcs;
    info->replacements = g->reps;
    info->engine = "dist";
    info->winner = -1;
}

sps_status sps_dist_solve(sps_dist_operator *op, const sps_dist_solve_opts *o, const double *b,
                          double *x, sps_solve_info *info)
{
    if (!op || !o || !info || ((!b || !x) && op->h.nloc))
        return sps__err(op ? op->d->ctx : NULL, SPS_ERR_INVALID_ARG, "sps_dist_solve: NULL argument");
    dcg g;
    memset(&g, 0, sizeof g);
    g.op = op;
    g.o = op->ops;
    g.ctx = op->d->ctx;
    g.n = op->h.nloc;
    g.nv = o->method == SPS_BICGSTAB ? NV : NCG;
    sps_status st = check_opts(op, o, &g.jac);
    if (st != SPS_OK) return st;
    g.st.maxit = o->maxit;
    g.st.rtol = o->rtol;
    g.st.atol = o->atol;
    g.st.dtol = o->dtol;
    g.st.has_pc = g.jac;
    double t0 = sps__now_ms();
    st = alloc_vectors(&g, b, x);
    double t1 = sps__now_ms(), t2 = t1;
    if (st == SPS_OK) st = begin(&g);
    if (st == SPS_OK) {
        t2 = sps__now_ms();
        st = finish(&g);
    }
    if (st == SPS_OK) st = g.o->copy_out(g.ctx, x, g.v[VX], (size_t)g.n * sizeof(double));
    for (int k = 0; k < g.nv; k++) g.o->free(g.v[k]);
    if (st == SPS_OK) fill_info(&g, info, t0, t1, t2, sps__now_ms());
    return st;
}
