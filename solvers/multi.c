/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/multi.c: sps_solve_multi, k right-hand sides with one block
 * product per iteration (doc/spmm.md).
 *
 * Shape. Each column is a whole single solve's state: an sps_krylov with its
 * own sps_kstate and method scalars, its own vectors, driven by the method's
 * own start and operations on the ops of the context (vops.h, cg.h,
 * bicgstab.h). The only difference from k calls of sps_solve is the
 * product: the columns' vectors lie at a fixed stride in one workspace, so
 * that one sps_operator_apply_multi computes an SpMV of the iteration for
 * every column at once. CG's iteration starts with its one SpMV: it runs
 * CG's own iterate after the block product, on an operator whose product is
 * "already done" (done_backend below). BiCGSTAB's iteration has two SpMVs:
 * bicgstab.c's iterate is followed here in three phases around two block
 * products (bi_pre, bi_phase: the same operations in the same order).
 *
 * Stopping and masking come from the methods' gating (vops.h): every
 * operation that changes x, r, p or a scalar reads its column's stop flag
 * and does nothing once it is set, so a column that converged is no longer
 * updated, whatever the others do; the host reads the k states at its checks
 * (batches of iterations as in solve.c) and leaves the stopped columns out
 * of the next batch's launches, and the block product out of the columns
 * beyond the first and last still running.
 *
 * The same arithmetic as sps_solve column by column: the same finish steps
 * on the same sums. On a host context the block product is the CSR loop of
 * sps__csr_spmv (bitwise), so every column's iterates, iteration count and
 * result are bitwise those of sps_solve; on a GPU the block kernel sums a
 * row as csr-vector does, and the reductions are the single solve's own
 * kernels. The true residual overrules the recurrence as in solve.c, the
 * replacement per column. Not supported (SPS_ERR_UNSUPPORTED): methods other
 * than CG and BiCGSTAB, and a ||b|| so far out of range that sps_solve would
 * rescale. */
#include "bicgstab/bicgstab.h"
#include "cg/cg.h"
#include "engine.h"

#include <math.h>
#include <string.h>

#define MULTI_KMAX 64   /* longest batch between host checks (solve.c's) */
#define MULTI_ALIGN 32  /* doubles: each column's vectors start 256-byte aligned */

/* ---- the operator the instances see: the product was done before -------- */

static sps_status done_apply(sps_context *ctx, void *dev, double alpha, const void *x,
                             double beta, void *y)
{
    (void)ctx, (void)dev, (void)alpha, (void)x, (void)beta, (void)y;
    return SPS_OK;
}

static const sps_backend done_backend = {
    .name = "block product (sps_solve_multi)",
    .summary = "q = A p was computed for every column by one block product",
    .apply = done_apply,
};

typedef struct multi multi;

/* A method's iteration as phases around its SpMVs: pre (before the first),
 * then for each SpMV s, the block product vec[out[s]] = A vec[in[s]] and
 * phase s (what follows it in the iteration). */
typedef struct block_method {
    int nspmv;
    int in[2], out[2];
    sps_status (*pre)(multi *m, sps_krylov *kr, int64_t j);
    sps_status (*phase)(multi *m, sps_krylov *kr, int64_t j, int s);
} block_method;

struct multi {
    sps_solver *s;
    sps_context *ctx;
    const sps_method_entry *me;
    const sps_vops *o;
    sps_operator *op;   /* the caller's */
    sps_operator done;  /* what the instances apply */
    int k;
    sps_idx n;
    size_t npad;        /* column length in the workspace */
    size_t stride;      /* doubles from a vector of column j to the same of column j + 1 */
    char *base;
    double *B, *X;      /* n x k, leading dimension npad */
    sps_krylov *kr;     /* k instances */
    block_method plan;  /* the method's iteration around its block products */
    sps_kstate *st;     /* host copies of their states */
    int *active;        /* iterating at the last check */
    int64_t *it0;       /* iterations and residual norms at the last check */
    double *rn0;
    int64_t syncs;
};

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

static sps_kfin common(const multi *m, int step)
{
    return sps__kfin(m->o->finish, NULL, step, sps__k_fin_gated(step), 0);
}

/* ---- checks and setup ----------------------------------------------------- */

static sps_status check_args(sps_solver *s, sps_operator *op, sps_precond *pc, const double *B,
                             double *X, int k, int *pcmode)
{
    sps_context *ctx = s->ctx;
    static const char fn[] = "sps_solve_multi";
    if (!op) return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: operator is NULL", fn);
    if (op->ctx != ctx)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: the operator belongs to another context", fn);
    if (op->single)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: the operator is single precision", fn);
    if (op->nrows != op->ncols)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: the matrix is %d x %d, not square", fn,
                        op->nrows, op->ncols);
    if (k < 0) return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: k = %d is negative", fn, k);
    if (k > 0 && op->nrows > 0 && (!B || !X))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: %s is NULL", fn, B ? "X" : "B");
    if (s->method->impl->id != SPS_CG && s->method->impl->id != SPS_BICGSTAB)
        return sps__err(ctx, SPS_ERR_UNSUPPORTED, "%s: method '%s': only cg and bicgstab run "
                        "blocks so far", fn, s->method->impl->name);
    *pcmode = SPS_PCM_NONE;
    if (!pc || pc->identity) return SPS_OK;
    if (pc->ctx != ctx || pc->n != op->nrows)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "%s: the preconditioner belongs to another context or has size %d for %d",
                        fn, pc->n, op->nrows);
    if (pc->fused_diag) *pcmode = SPS_PCM_JACOBI;
    else if (pc->apply) *pcmode = SPS_PCM_APPLY;
    else return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: preconditioner '%s' has no apply", fn, pc->name);
    return SPS_OK;
}

/* Column j's instance, as solve.c's setup makes one. */
static void instance(multi *m, sps_precond *pc, int pcmode, sps_krylov *kr)
{
    kr->ops = m->o;
    kr->mops = m->o->device ? m->me->ops_cuda : m->me->ops_host;
    kr->cfg = &m->s->cfg;
    kr->op = &m->done;
    kr->pc = pcmode == SPS_PCM_NONE ? NULL : pc;
    kr->pcmode = pcmode;
    kr->engine = SPS_ENGINE_CLASSIC;
    kr->ran = "classic";
    kr->w.ctx = m->ctx;
    kr->w.ops = m->o;
    kr->w.n = m->n;
    m->me->impl->work(kr, &kr->work);
    sps_kstate *st = &kr->init;
    memset(st, 0, sizeof *st);
    st->maxit = m->s->cfg.maxit;
    st->has_pc = pcmode != SPS_PCM_NONE;
    st->rtol = m->s->cfg.rtol;
    st->atol = m->s->cfg.atol;
    st->dtol = m->s->cfg.dtol;
    if (m->me->impl->init) m->me->impl->init(kr, kr->minit);
}

/* One allocation: the k states, the shared reduction scratch (the columns'
 * reductions run one after another on one stream), the k columns' vectors
 * at a fixed stride, B and X. */
static sps_status carve(multi *m)
{
    const sps_kwork *wk = &m->kr[0].work;
    size_t sb = round_up((sizeof(sps_kstate) + wk->state_bytes + 7) / 8, MULTI_ALIGN);
    size_t red = round_up(m->o->red_len(m->n), MULTI_ALIGN);
    m->npad = round_up((size_t)m->n, MULTI_ALIGN);
    m->stride = (size_t)wk->nvec * m->npad;
    size_t kk = (size_t)m->k, total = kk * sb + red + kk * m->stride + 2 * kk * m->npad;
    if (total > SIZE_MAX / 16)
        return sps__err(m->ctx, SPS_ERR_NO_MEMORY, "sps_solve_multi: workspace too large");
    void *p = NULL;
    sps_status e = m->o->alloc(m->ctx, total * sizeof(double), &p);
    if (e != SPS_OK) return e;
    m->base = p;
    double *d = p, *vecs = d + kk * sb + red;
    m->B = vecs + kk * m->stride;
    m->X = m->B + kk * m->npad;
    for (int j = 0; j < m->k; j++) {
        sps_krylov *kr = &m->kr[j];
        kr->w.st = (sps_kstate *)(void *)(d + (size_t)j * sb);
        kr->w.ms = kr->w.st + 1;
        kr->w.red = d + kk * sb;
        kr->w.hist = NULL;
        for (int i = 0; i < kr->work.nvec; i++)
            kr->vec[i] = vecs + (size_t)j * m->stride + (size_t)i * m->npad;
        kr->r = kr->vec[kr->work.r];
        kr->scratch = kr->vec[kr->work.scratch];
        kr->b = kr->b_in = m->B + (size_t)j * m->npad;
        kr->x = m->X + (size_t)j * m->npad;
    }
    return SPS_OK;
}

/* dst (the workspace's) = src (the caller's, host or device). */
static sps_status copy_in(multi *m, sps_krylov *kr, double *dst, const double *src)
{
    if (m->o->device && m->o->is_device(src)) return m->o->copy(&kr->w, dst, src);
    return m->o->copy_in(m->ctx, dst, src, (size_t)m->n * sizeof *src);
}

static sps_status copy_out(multi *m, sps_krylov *kr, double *dst, const double *src)
{
    if (m->o->device && m->o->is_device(dst)) return m->o->copy(&kr->w, dst, src);
    return m->o->copy_out(m->ctx, dst, src, (size_t)m->n * sizeof *src);
}

static sps_status setup(multi *m, sps_precond *pc, int pcmode, const double *B, const double *X)
{
    for (int j = 0; j < m->k; j++) instance(m, pc, pcmode, &m->kr[j]);
    const sps_kwork *wk = &m->kr[0].work;
    if (wk->nvec > SPS_KR_MAXVEC || wk->npiece > 0 || m->me->impl->bind)
        return sps__err(m->ctx, SPS_ERR_INTERNAL, "sps_solve_multi: method '%s' needs pieces (%s:%d)",
                        m->me->impl->name, __FILE__, __LINE__);
    sps_status e = carve(m);
    for (int j = 0; e == SPS_OK && j < m->k; j++) {
        sps_krylov *kr = &m->kr[j];
        size_t off = (size_t)j * (size_t)m->n;
        e = copy_in(m, kr, (double *)(void *)kr->b, B + off);
        if (e == SPS_OK) e = copy_in(m, kr, kr->x, X + off);
        if (e == SPS_OK)
            e = m->o->put_state(&kr->w, &kr->init, kr->minit, kr->work.state_bytes);
    }
    return e;
}

/* ---- the block products ----------------------------------------------------- */

/* R_j = B_j - A X_j for columns lo..hi, into each column's r (scratch = 0)
 * or its scratch vector (scratch = 1): one block product. */
static sps_status block_resid(multi *m, int lo, int hi, int scratch)
{
    sps_status e = SPS_OK;
    for (int j = lo; j <= hi && e == SPS_OK; j++) {
        sps_krylov *kr = &m->kr[j];
        e = m->o->copy(&kr->w, scratch ? kr->scratch : kr->r, kr->b);
        kr->spmvs++;
    }
    if (e != SPS_OK) return e;
    sps_krylov *k0 = &m->kr[lo];
    return sps_operator_apply_multi(m->op, hi - lo + 1, -1.0, k0->x, (int64_t)m->npad, 1.0,
                                    scratch ? k0->scratch : k0->r, (int64_t)m->stride);
}

/* vec[out] = A vec[in] for columns lo..hi: one block product. */
static sps_status block_apply(multi *m, int lo, int hi, int in, int out)
{
    sps_krylov *k0 = &m->kr[lo];
    return sps_operator_apply_multi(m->op, hi - lo + 1, 1.0, k0->vec[in], (int64_t)m->stride, 0.0,
                                    k0->vec[out], (int64_t)m->stride);
}

/* ---- the methods' iterations around their block products ------------------ */

/* CG: the iteration starts with q = A p, so it is CG's own iterate, whose
 * SpMV (on the "done" operator) is a no-op. p = vec[1], q = vec[2]. */
static sps_status cg_phase(multi *m, sps_krylov *kr, int64_t j, int s)
{
    (void)s;
    return m->me->impl->iterate(kr, j);
}

/* BiCGSTAB: bicgstab.c's bicg_iterate cut at its two SpMVs (the same
 * operations in the same order; its vectors r r0hat p v s t [phat shat]). */
enum { BI_R, BI_R0, BI_P, BI_V, BI_S, BI_T, BI_PH, BI_SH };

static sps_status bi_pre(multi *m, sps_krylov *kr, int64_t j)
{
    (void)m, (void)j;
    const sps_bicg_ops *bo = kr->mops;
    double *p = kr->vec[BI_P], *ph = kr->pcmode == SPS_PCM_NONE ? p : kr->vec[BI_PH];
    sps_status st = bo->p(&kr->w, p, kr->vec[BI_R], kr->vec[BI_V], sps__kr_diag(kr), ph);
    if (st == SPS_OK && kr->pcmode == SPS_PCM_JACOBI) kr->pc_applies++;
    if (st == SPS_OK && kr->pcmode == SPS_PCM_APPLY) st = sps__kr_prec(kr, p, ph);
    kr->spmvs++; /* v = A phat, by the block product that follows */
    return st;
}

static sps_status bi_phase(multi *m, sps_krylov *kr, int64_t j, int s)
{
    const sps_bicg_ops *bo = kr->mops;
    const sps_vops *o = m->o;
    sps_kws *w = &kr->w;
    double **v = kr->vec;
    int none = kr->pcmode == SPS_PCM_NONE;
    double *sh = none ? v[BI_S] : v[BI_SH], *ph = none ? v[BI_P] : v[BI_PH];
    sps_status st;
    if (s == 0) {
        sps_kfin fa = sps__kfin(bo->finish, NULL, SPS_BICG_ALPHA, 1, 0);
        const double *a1[1] = {v[BI_R0]}, *b1[1] = {v[BI_V]};
        if ((st = o->dot(w, 1, a1, b1, &fa)) != SPS_OK) return st;
        if ((st = bo->s(w, v[BI_S], v[BI_R], v[BI_V], sps__kr_diag(kr), sh)) != SPS_OK) return st;
        if (kr->pcmode == SPS_PCM_JACOBI) kr->pc_applies++;
        if (kr->pcmode == SPS_PCM_APPLY && (st = sps__kr_prec(kr, v[BI_S], sh)) != SPS_OK) return st;
        kr->spmvs++; /* t = A shat, by the block product that follows */
        return SPS_OK;
    }
    sps_kfin fo = sps__kfin(bo->finish, NULL, SPS_BICG_OMEGA, 1, 0);
    const double *a2[2] = {v[BI_T], v[BI_T]}, *b2[2] = {v[BI_S], v[BI_T]};
    if ((st = o->dot(w, 2, a2, b2, &fo)) != SPS_OK) return st;
    return bo->x(w, j, kr->x, v[BI_R], ph, sh, v[BI_S], v[BI_T], v[BI_R0]);
}

/* The block plan of the solver's method for this preconditioning mode. */
static block_method plan_of(const multi *m, int pcmode)
{
    block_method b;
    memset(&b, 0, sizeof b);
    if (m->me->impl->id == SPS_CG) {
        b.nspmv = 1, b.in[0] = 1, b.out[0] = 2, b.phase = cg_phase;
        return b;
    }
    int none = pcmode == SPS_PCM_NONE;
    b.nspmv = 2;
    b.in[0] = none ? BI_P : BI_PH, b.out[0] = BI_V;
    b.in[1] = none ? BI_S : BI_SH, b.out[1] = BI_T;
    b.pre = bi_pre;
    b.phase = bi_phase;
    return b;
}

/* ---- the loop --------------------------------------------------------------- */

static sps_status check_all(multi *m, int *lo, int *hi)
{
    *lo = m->k;
    *hi = -1;
    m->syncs += m->o->device;
    for (int j = 0; j < m->k; j++) {
        if (!m->active[j]) continue;
        sps_status e = m->o->get_state(&m->kr[j].w, &m->st[j]);
        if (e != SPS_OK) return e;
        m->active[j] = !m->st[j].stop;
        if (m->active[j] && j < *lo) *lo = j;
        if (m->active[j]) *hi = j;
    }
    return SPS_OK;
}

/* solve.c's next batch length, for the slowest column still running. */
static int64_t next_len(const multi *m, int64_t len)
{
    const int64_t *it0 = m->it0;
    const double *rn0 = m->rn0;
    int64_t nk = 2 * len > MULTI_KMAX ? MULTI_KMAX : 2 * len, want = 1;
    for (int j = 0; j < m->k; j++) {
        const sps_kstate *st = &m->st[j];
        int64_t d = st->iter - it0[j], need = nk;
        if (!m->active[j]) continue;
        if (d > 0 && st->rnorm < rn0[j] && st->rnorm > st->tol && st->tol > 0) {
            double rate = log(st->rnorm / rn0[j]) / (double)d;
            double nd = ceil(log(st->tol / st->rnorm) / rate);
            if (nd < (double)nk) need = (int64_t)nd;
        }
        if (need > want) want = need;
    }
    return want;
}

/* One iteration of every column still running at the last check (i-th of
 * the batch: iteration st.iter + i of each). */
static sps_status iterate_once(multi *m, int lo, int hi, int64_t i)
{
    const block_method *b = &m->plan;
    sps_status e = SPS_OK;
    for (int j = lo; j <= hi && e == SPS_OK && b->pre; j++)
        if (m->active[j]) e = b->pre(m, &m->kr[j], m->st[j].iter + i);
    for (int s = 0; s < b->nspmv && e == SPS_OK; s++) {
        e = block_apply(m, lo, hi, b->in[s], b->out[s]);
        for (int j = lo; j <= hi && e == SPS_OK; j++)
            if (m->active[j]) e = b->phase(m, &m->kr[j], m->st[j].iter + i, s);
    }
    return e;
}

static sps_status run_batch(multi *m, int lo, int hi, int64_t len)
{
    for (int64_t i = 1; i <= len; i++) {
        sps_status e = iterate_once(m, lo, hi, i);
        if (e != SPS_OK) return e;
    }
    return SPS_OK;
}

/* Batches until every column has stopped. */
static sps_status loop(multi *m, int lo, int hi)
{
    int64_t len = m->o->device ? (m->s->check > 0 ? m->s->check : 1) : 1;
    while (hi >= lo) {
        int64_t room = 1;
        for (int j = lo; j <= hi; j++) {
            m->it0[j] = m->st[j].iter;
            m->rn0[j] = m->st[j].rnorm;
            if (m->active[j] && m->st[j].maxit - m->st[j].iter > room)
                room = m->st[j].maxit - m->st[j].iter;
        }
        sps_status e = run_batch(m, lo, hi, len < room ? len : room);
        if (e == SPS_OK) e = check_all(m, &lo, &hi);
        if (e != SPS_OK) return e;
        if (m->o->device && m->s->check == 0) len = next_len(m, len);
    }
    return SPS_OK;
}

/* ||b||, the tolerance; R = B - A X; ||r0||; the method's start; the first
 * check. A column whose ||b|| sps_solve would rescale is refused. */
static sps_status begin(multi *m, int *lo, int *hi)
{
    const sps_vops *o = m->o;
    sps_status e = SPS_OK;
    sps_kfin fb = common(m, SPS_KC_BNORM), fr = common(m, SPS_KC_R0);
    for (int j = 0; j < m->k && e == SPS_OK; j++) e = o->nrm2(&m->kr[j].w, m->kr[j].b, &fb);
    if (e == SPS_OK) e = block_resid(m, 0, m->k - 1, 0);
    for (int j = 0; j < m->k && e == SPS_OK; j++) {
        sps_krylov *kr = &m->kr[j];
        const double *r[1] = {kr->r};
        e = o->dot(&kr->w, 1, r, r, &fr);
        if (e == SPS_OK) e = m->me->impl->start(kr);
    }
    for (int j = 0; j < m->k; j++) m->active[j] = 1;
    if (e == SPS_OK) e = check_all(m, lo, hi);
    for (int j = 0; j < m->k && e == SPS_OK; j++) {
        if (m->st[j].reason == SPS_K_RESCALE)
            return sps__err(m->ctx, SPS_ERR_UNSUPPORTED, "sps_solve_multi: column %d: ||b|| is "
                            "about 2^%lld, out of the range a block solve takes (solve it alone)",
                            j, (long long)m->st[j].rescale_e);
        if (m->st[j].reason == SPS_CONVERGED_ZERO_RHS) e = o->fill(&m->kr[j].w, m->kr[j].x, 0.0);
    }
    return e;
}

/* Column j converged by its recurrence but its true residual fails: r from
 * x (one SpMV), ||r|| replaces the recurrence's, the method starts again. */
static sps_status replace(multi *m, int j)
{
    sps_krylov *kr = &m->kr[j];
    sps_kstate *st = &m->st[j];
    sps_kfin f = common(m, SPS_KC_RESTART);
    const double *r[1] = {kr->r};
    kr->replacements++;
    st->stop = 0;
    st->reason = SPS_ITERATING;
    sps_status e = m->o->put_state(&kr->w, st, NULL, 0);
    if (e == SPS_OK) e = m->o->copy(&kr->w, kr->r, kr->b);
    kr->spmvs++;
    if (e == SPS_OK) e = sps_operator_apply(m->op, -1.0, kr->x, 1.0, kr->r);
    if (e == SPS_OK) e = m->o->dot(&kr->w, 1, r, r, &f);
    if (e == SPS_OK) e = m->me->impl->start(kr);
    m->active[j] = 1;
    return e;
}

/* The true residuals (one block product); columns that need a replacement
 * get it and the loop goes on with them, at most SPS_K_MAX_REPLACE times. */
static sps_status true_residual(multi *m)
{
    for (int rep = 0;; rep++) {
        sps_kfin f = common(m, SPS_KC_TRUE);
        sps_status e = block_resid(m, 0, m->k - 1, 1);
        for (int j = 0; j < m->k && e == SPS_OK; j++) {
            e = m->o->nrm2(&m->kr[j].w, m->kr[j].scratch, &f);
            if (e == SPS_OK) e = m->o->get_state(&m->kr[j].w, &m->st[j]);
        }
        int again = 0;
        for (int j = 0; j < m->k && e == SPS_OK; j++) {
            sps_kstate *st = &m->st[j];
            int converged = st->reason > 0 && st->reason != SPS_CONVERGED_ZERO_RHS;
            if (!converged || st->true_rnorm <= st->tol) continue;
            if (rep == SPS_K_MAX_REPLACE || st->iter >= st->maxit) {
                st->reason = SPS_DIVERGED_TRUE_RESIDUAL;
                continue;
            }
            e = replace(m, j);
            again = 1;
        }
        if (e != SPS_OK || !again) return e;
        int lo = 0, hi = -1;
        if ((e = check_all(m, &lo, &hi)) != SPS_OK) return e;
        if ((e = loop(m, lo, hi)) != SPS_OK) return e;
    }
}

static void report(const multi *m, int j, const double t[4], sps_solve_info *info)
{
    const sps_kstate *st = &m->st[j];
    const sps_krylov *kr = &m->kr[j];
    memset(info, 0, sizeof *info);
    sps__kstate_report(st, 0, t, info);
    info->host_syncs = m->syncs;
    info->spmvs = kr->spmvs;
    info->precond_applies = kr->pc_applies;
    info->replacements = kr->replacements;
    info->engine = "block";
}

static sps_status solve(multi *m, sps_precond *pc, int pcmode, const double *B, double *X,
                        sps_solve_info *infos)
{
    double t[4] = {sps__now_ms(), 0, 0, 0};
    sps_status e = setup(m, pc, pcmode, B, X);
    int lo = 0, hi = -1;
    t[1] = sps__now_ms();
    if (e == SPS_OK) e = begin(m, &lo, &hi);
    if (e == SPS_OK) e = loop(m, lo, hi);
    t[2] = sps__now_ms();
    if (e == SPS_OK) e = true_residual(m);
    for (int j = 0; j < m->k && e == SPS_OK; j++)
        e = copy_out(m, &m->kr[j], X + (size_t)j * (size_t)m->n, m->kr[j].x);
    t[3] = sps__now_ms();
    for (int j = 0; j < m->k && e == SPS_OK; j++) report(m, j, t, &infos[j]);
    return e;
}

static sps_status alloc_host(multi *m)
{
    size_t k = (size_t)m->k;
    m->kr = sps__calloc(k, sizeof *m->kr);
    m->st = sps__calloc(k, sizeof *m->st);
    m->active = sps__calloc(k, sizeof *m->active);
    m->it0 = sps__calloc(k, sizeof *m->it0);
    m->rn0 = sps__calloc(k, sizeof *m->rn0);
    if (m->kr && m->st && m->active && m->it0 && m->rn0) return SPS_OK;
    return sps__err(m->ctx, SPS_ERR_NO_MEMORY, "sps_solve_multi: out of memory (%d columns)", m->k);
}

static void release(multi *m)
{
    if (m->base) m->o->free(m->base);
    sps__free(m->kr);
    sps__free(m->st);
    sps__free(m->active);
    sps__free(m->it0);
    sps__free(m->rn0);
}

sps_status sps_solve_multi(sps_solver *s, sps_operator *op, sps_precond *pc, const double *B,
                           double *X, int k, sps_solve_info *infos)
{
    if (!s) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_solve_multi: solver is NULL");
    if (!infos && k > 0) return sps__err(s->ctx, SPS_ERR_INVALID_ARG, "sps_solve_multi: infos is NULL");
    int pcmode = SPS_PCM_NONE;
    sps_status e = check_args(s, op, pc, B, X, k, &pcmode);
    if (e != SPS_OK || k == 0) return e;
    if (op->nrows == 0) {
        for (int j = 0; j < k; j++) {
            memset(&infos[j], 0, sizeof infos[j]);
            infos[j].reason = SPS_CONVERGED_ZERO_RHS;
        }
        return SPS_OK;
    }
    multi m;
    memset(&m, 0, sizeof m);
    m.s = s;
    m.ctx = s->ctx;
    m.me = s->method;
    m.o = sps__vops_for(s->ctx);
    m.op = op;
    m.k = k;
    m.n = op->nrows;
    m.done.ctx = s->ctx;
    m.done.be = &done_backend;
    m.done.nrows = m.done.ncols = op->nrows;
    if (!(m.o->device ? m.me->ops_cuda : m.me->ops_host))
        return sps__err(s->ctx, SPS_ERR_NOT_COMPILED, "sps_solve_multi: no %s operations for '%s'",
                        m.o->name, m.me->impl->name);
    m.plan = plan_of(&m, pcmode);
    e = alloc_host(&m);
    if (e == SPS_OK) e = solve(&m, pcmode == SPS_PCM_NONE ? NULL : pc, pcmode, B, X, infos);
    release(&m);
    return e;
}
