/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/solve.c: sps_solve, and the loop every method shares:
 * workspace, initial and final residuals, batches of k iterations between
 * host checks, the monitor, the info. Memory goes through the ops table
 * (vops.h); what a method needs comes from its work hook (krylov.h).
 *
 * The host check. On the GPU the host enqueues k iterations, then copies the
 * small state back (one synchronization) and decides: stop, or enqueue the next
 * k. Operations past a stop are no-ops (vops.h), so a batch that overshoots
 * costs only its SpMVs and preconditioner applications. k starts at 1 and
 * doubles up to 64, but never past the number of iterations the last batch's
 * convergence rate says are still needed, so few iterations are wasted at the
 * end. On the host, reading the state costs nothing: k = 1. */
#include "engine.h"

#include <math.h>
#include <string.h>

#define SPS_K_MAX 64    /* longest batch between host checks */
#define SPS_ALIGN 256   /* byte alignment of each workspace piece */

/* ---- helpers for the methods ---------------------------------------------- */

sps_status sps__kr_spmv(sps_krylov *k, const double *x, double *y)
{
    k->spmvs++;
    return sps_operator_apply(k->op, 1.0, x, 0.0, y);
}

sps_status sps__kr_spmv_dot(sps_krylov *k, const double *x, double *y, int *nparts)
{
    sps_operator *op = k->op;
    int maxparts = (int)(k->ops->red_len(k->w.n) / SPS_K_NSUM);
    k->spmvs++;
    sps_status e = op->be->apply_dot(op->ctx, op->dev, x, y, k->w.red, maxparts, nparts);
    if (e == SPS_ERR_UNSUPPORTED)
        return sps__err(k->w.ctx, SPS_ERR_INTERNAL, "sps_solve: %s refused its apply_dot (%s:%d)",
                        op->be->name, __FILE__, __LINE__);
    return e;
}

sps_status sps__kr_resid(sps_krylov *k, double *r)
{
    sps_status st = k->ops->copy(&k->w, r, k->b);
    if (st != SPS_OK) return st;
    k->spmvs++;
    return sps_operator_apply(k->op, -1.0, k->x, 1.0, r);
}

sps_status sps__kr_prec(sps_krylov *k, const double *r, double *z)
{
    k->pc_applies++;
    if (k->pcmode == SPS_PCM_JACOBI) return k->ops->mul(&k->w, z, k->pc->fused_diag, r);
    return k->pc->apply(k->pc, r, z);
}

/* A common finish step (kstate.h). */
static sps_kfin common(const sps_krylov *k, int step)
{
    return sps__kfin(k->ops->finish, NULL, step, sps__k_fin_gated(step), 0);
}

/* ---- workspace ------------------------------------------------------------ */

typedef struct plan {
    size_t off;
} plan;

/* Reserve count doubles (count may overflow: checked). */
static size_t reserve(plan *p, size_t count)
{
    size_t at = p->off;
    size_t bytes = sps__mul_size(count, sizeof(double));
    if (bytes == SIZE_MAX || p->off == SIZE_MAX || bytes > SIZE_MAX - p->off - SPS_ALIGN) {
        p->off = SIZE_MAX;
        return 0;
    }
    p->off += (bytes + SPS_ALIGN - 1) / SPS_ALIGN * SPS_ALIGN;
    return at;
}

/* Offsets of every piece, then one allocation (kept on the solver for the
 * next solve when it is large enough). */
typedef struct layout {
    size_t st, red, hist, vec, piece[SPS_KR_MAXPIECE], b, x, wx;
    int copy_b, copy_x; /* b, x are not in the vectors' memory space (or x aliases b) */
} layout;

static sps_status get_block(sps_solver *s, const sps_vops *o, size_t bytes, char **base)
{
    if (s->blk && s->blk_ops == o && s->blk_bytes >= bytes) {
        *base = s->blk;
        return SPS_OK;
    }
    sps__solver_free_block(s);
    void *p = NULL;
    sps_status st = o->alloc(s->ctx, bytes, &p);
    if (st != SPS_OK) return st;
    s->blk = p;
    s->blk_bytes = bytes;
    s->blk_ops = o;
    *base = p;
    return SPS_OK;
}

static int in_space(const sps_vops *o, const void *p) { return o->device ? o->is_device(p) : 1; }

/* Plan the workspace of k's method for b and x. */
static sps_status plan_layout(const sps_solver *s, const sps_krylov *k, const double *b,
                              const double *x, layout *L, size_t *bytes)
{
    const sps_vops *o = k->ops;
    const sps_kwork *wk = &k->work;
    sps_idx n = k->w.n;
    /* x may alias b: b is then copied first. */
    uintptr_t ub = (uintptr_t)b, ux = (uintptr_t)x, nb = (uintptr_t)n * sizeof *b;
    int alias = ub < ux + nb && ux < ub + nb;
    L->copy_b = alias || !in_space(o, b);
    L->copy_x = !in_space(o, x);
    size_t sb = sizeof(sps_kstate) + wk->state_bytes;
    plan p = {0};
    L->st = reserve(&p, (sb + sizeof(double) - 1) / sizeof(double));
    L->red = reserve(&p, o->red_len(n));
    L->hist = reserve(&p, s->history ? (size_t)s->cfg.maxit + 1 : 0);
    L->vec = reserve(&p, sps__mul_size((size_t)wk->nvec, (size_t)n));
    for (int i = 0; i < wk->npiece; i++) L->piece[i] = reserve(&p, wk->piece[i]);
    L->b = reserve(&p, L->copy_b ? (size_t)n : 0);
    L->x = reserve(&p, L->copy_x ? (size_t)n : 0);
    L->wx = reserve(&p, o->device ? (size_t)n : 0);
    if (p.off == SIZE_MAX)
        return sps__err(s->ctx, SPS_ERR_NO_MEMORY, "sps_solve: workspace size overflows (n = %d, method %s)",
                        n, s->method->impl->name);
    *bytes = p.off;
    return SPS_OK;
}

/* Carve the block into k's vectors and arrays; copy b and x in. */
static sps_status carve(sps_solver *s, sps_krylov *k, char *base, const layout *L,
                        const double *b, double *x)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_idx n = w->n;
    size_t nb = (size_t)n * sizeof *b;
#define PIECE(off) ((double *)(void *)(base + (off)))
    k->b = L->copy_b ? PIECE(L->b) : b;
    k->x = L->copy_x ? PIECE(L->x) : x;
    for (int i = 0; i < k->work.nvec; i++) k->vec[i] = PIECE(L->vec) + (size_t)i * (size_t)n;
    for (int i = 0; i < k->work.npiece; i++) k->piece[i] = PIECE(L->piece[i]);
    w->st = (sps_kstate *)(void *)(base + L->st);
    w->ms = w->st + 1;
    w->red = PIECE(L->red);
    w->hist = s->history ? PIECE(L->hist) : NULL;
#undef PIECE
    if (s->method->impl->bind) {
        s->method->impl->bind(k);
    } else {
        k->r = k->vec[k->work.r];
        k->scratch = k->vec[k->work.scratch];
    }
    sps_status e = SPS_OK;
    double *kb = (double *)(void *)k->b;
    if (L->copy_b) e = in_space(o, b) ? o->copy(w, kb, b) : o->copy_in(s->ctx, kb, b, nb);
    if (e == SPS_OK && L->copy_x) e = o->copy_in(s->ctx, k->x, x, nb);
    k->b_in = k->b;
    return e;
}

/* ---- the loop ------------------------------------------------------------- */

/* Next batch length: double up to SPS_K_MAX, but no further than the
 * iterations that the rate observed since the last check says remain. */
static int64_t next_k(int64_t k, const sps_kstate *st, int64_t it0, double rn0)
{
    int64_t nk = 2 * k > SPS_K_MAX ? SPS_K_MAX : 2 * k;
    int64_t d = st->iter - it0;
    if (d > 0 && st->rnorm < rn0 && st->rnorm > st->tol && st->tol > 0) {
        double rate = log(st->rnorm / rn0) / (double)d; /* < 0 */
        double need = log(st->tol / st->rnorm) / rate;  /* > 0 */
        if (need < (double)nk) nk = (int64_t)ceil(need);
    }
    return nk < 1 ? 1 : nk;
}

/* The monitors at a host check. A stop monitor's nonzero return ends the
 * solve here: the state says so on both sides (the finish reads it back). */
static sps_status monitor(const sps_solver *s, sps_krylov *k, sps_kstate *st)
{
    double rn = ldexp(st->rnorm, -(int)k->sexp);
    if (s->mon) s->mon(s->mon_user, st->iter, rn);
    if (!s->mon_stop || st->stop || !s->mon_stop(s->mon_stop_user, st->iter, rn)) return SPS_OK;
    st->stop = 1;
    st->reason = SPS_DIVERGED_USER;
    return k->ops->put_state(&k->w, st, NULL, 0);
}

/* dst = 2^e src, in steps that keep each factor a double (|e| may pass 1023
 * for a subnormal b). */
static sps_status scale_pow2(sps_krylov *k, double *dst, const double *src, int64_t e)
{
    do {
        int64_t step = e > 1000 ? 1000 : e < -1000 ? -1000 : e;
        sps_status st = k->ops->axpby(&k->w, dst, ldexp(1.0, (int)step), src, 0.0);
        if (st != SPS_OK) return st;
        src = dst;
        e -= step;
    } while (e != 0);
    return SPS_OK;
}

/* ||b|| is out of the safe range: solve for 2^sexp x with 2^sexp b (exact
 * scalings), so that every sum of squares of the iterations stays in range. */
static sps_status rescale(sps_solver *s, sps_krylov *k, const sps_kstate *st)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_status e;
    if (k->sexp != 0) return sps__err(s->ctx, SPS_ERR_INTERNAL, "sps_solve: rescaled twice");
    if (!k->bs) {
        void *p = NULL;
        if ((e = o->alloc(s->ctx, (size_t)w->n * sizeof(double), &p)) != SPS_OK) return e;
        k->bs = p;
    }
    k->sexp = -st->rescale_e;
    if ((e = scale_pow2(k, k->bs, k->b, k->sexp)) != SPS_OK) return e;
    if ((e = scale_pow2(k, k->x, k->x, k->sexp)) != SPS_OK) return e;
    k->b = k->bs;
    sps_kstate ns = k->init;
    ns.maxit = st->maxit;
    ns.atol = ldexp(ns.atol, (int)k->sexp);
    return o->put_state(w, &ns, k->minit, k->work.state_bytes);
}

/* A host check: the state out, counted when it waits on a device. */
static sps_status check(sps_krylov *k, sps_kstate *st, int64_t *syncs)
{
    *syncs += k->ops->device;
    return k->ops->get_state(&k->w, st);
}

/* ||b||, the tolerance;  r <- b - A x;  ||r0||;  the method's start; the
 * first host check (rescaling once when ||b|| is out of range). */
static sps_status begin(sps_solver *s, sps_krylov *k, sps_kstate *st, int64_t *syncs)
{
    const sps_vops *o = k->ops;
    const sps_method_impl *mi = s->method->impl;
    sps_kws *w = &k->w;
    sps_status e;
    for (;;) {
        sps_kfin fb = common(k, SPS_KC_BNORM), fr = common(k, SPS_KC_R0);
        const double *r[1] = {k->r};
        if ((e = o->nrm2(w, k->b, &fb)) != SPS_OK) return e;
        if ((e = sps__kr_resid(k, k->r)) != SPS_OK) return e;
        if ((e = o->dot(w, 1, r, r, &fr)) != SPS_OK) return e;
        if ((e = mi->start(k)) != SPS_OK) return e;
        if ((e = check(k, st, syncs)) != SPS_OK) return e;
        if (st->reason != SPS_K_RESCALE) break;
        if ((e = rescale(s, k, st)) != SPS_OK) return e;
    }
    if ((e = monitor(s, k, st)) != SPS_OK) return e;
    if (st->reason == SPS_CONVERGED_ZERO_RHS) return o->fill(w, k->x, 0.0);
    return SPS_OK;
}

/* The next batch's length. */
static int64_t batch_len(const sps_method_impl *mi, const sps_krylov *k, const sps_kstate *st,
                         int64_t kk)
{
    int64_t batch = kk;
    if (batch > st->maxit - st->iter) batch = st->maxit - st->iter;
    if (mi->room) {
        int64_t room = mi->room(k);
        if (batch > room) batch = room;
    }
    return batch;
}

/* The one-kernel engine (engine.h): the method runs every remaining
 * iteration in one launch. *ran = 0 when it cannot (the loop goes classic). */
static sps_status onekernel(sps_krylov *k, const sps_method_impl *mi, int *ran)
{
    *ran = 0;
    sps_dev_rows rows;
    if (k->engine != SPS_ENGINE_ONEKERNEL || !k->ops->device || !mi->onekernel ||
        !sps__engine_rows(k->op, &rows))
        return SPS_OK;
    k->onek_cluster = 0;
    sps_status e = mi->onekernel(k, &rows);
    if (e == SPS_ERR_UNSUPPORTED) return SPS_OK;
    if (e != SPS_OK) return e;
    *ran = 1;
    k->ran = "onekernel";
    return SPS_OK;
}

/* The one-kernel launch's SpMVs and Jacobi scalings, from the iterations it
 * ran: the method's SpMVs per iteration (its traffic model) each, and one
 * iteration more when a breakdown stopped it before the iteration counted. */
static void onekernel_counts(sps_krylov *k, const sps_method_impl *mi, const sps_kstate *st,
                             int64_t it0)
{
    double per = 1.0;
    if (mi->traffic) (void)mi->traffic(k, &per);
    int64_t d = st->iter - it0 + (st->reason == SPS_DIVERGED_INDEFINITE ||
                                  st->reason == SPS_DIVERGED_BREAKDOWN);
    int64_t c = (int64_t)((double)d * per + 0.5);
    k->spmvs += c;
    if (k->pcmode == SPS_PCM_JACOBI) k->pc_applies += c;
}

/* One batch of iterations with the solve's engine. */
static sps_status run_batch(sps_krylov *k, const sps_method_impl *mi, int64_t it0, int64_t batch)
{
    if (k->engine == SPS_ENGINE_GRAPH && k->ops->device)
        return sps__engine_graph_batch(k, mi, it0, batch);
    k->ran = "classic";
    for (int64_t i = 1; i <= batch; i++) {
        sps_status e = mi->iterate(k, it0 + i);
        if (e != SPS_OK) return e;
    }
    return SPS_OK;
}

/* Batches of iterations between host checks, until the state says stop. */
static sps_status loop(sps_solver *s, sps_krylov *k, sps_kstate *st, int64_t *syncs)
{
    const sps_method_impl *mi = s->method->impl;
    int dev = k->ops->device;
    sps_status e;
    int64_t kk = dev ? (s->check > 0 ? s->check : 1) : 1;
    while (!st->stop) {
        int64_t batch = batch_len(mi, k, st, kk), it0 = st->iter;
        double rn0 = st->rnorm;
        int one = 0, whole = 0;
        if ((e = onekernel(k, mi, &one)) != SPS_OK) return e;
        if (!one && k->engine == SPS_ENGINE_GRAPH && dev) {
            /* without a monitor or a check interval: the whole loop in one
             * launch, no host wait until the state says stop */
            if (!s->mon && !s->mon_stop && s->check == 0 &&
                (e = sps__engine_graph_while(k, mi, it0, st->maxit, &whole)) != SPS_OK)
                return e;
            batch = sps__engine_pow2(batch);
        }
        if (!one && !whole && (e = run_batch(k, mi, it0, batch)) != SPS_OK) return e;
        if ((e = check(k, st, syncs)) != SPS_OK) return e;
        if (!st->stop) k->steady_syncs += dev; /* a wait with iterations still to run */
        if (one) onekernel_counts(k, mi, st, it0);
        if (whole) sps__engine_graph_while_counts(k, it0, st->iter);
        if ((e = monitor(s, k, st)) != SPS_OK) return e;
        if (mi->checked && (e = mi->checked(k, st)) != SPS_OK) return e;
        if (dev && s->check == 0) kk = next_k(kk, st, it0, rn0);
    }
    return SPS_OK;
}

/* From the state written, through the iterations, to the last host check. */
static sps_status iterate(sps_solver *s, sps_krylov *k, sps_kstate *st, int64_t *syncs)
{
    sps_status e = begin(s, k, st, syncs);
    if (e != SPS_OK) return e;
    return loop(s, k, st, syncs);
}

/* r <- b - A x;  ||r|| replaces the recurrence's;  the method's start. */
static sps_status replace_residual(sps_solver *s, sps_krylov *k, sps_kstate *st, int64_t *syncs)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_kfin f = common(k, SPS_KC_RESTART);
    const double *r[1] = {k->r};
    sps_status e;
    k->replacements++;
    st->stop = 0;
    st->reason = SPS_ITERATING;
    if ((e = o->put_state(w, st, NULL, 0)) != SPS_OK) return e;
    if ((e = sps__kr_resid(k, k->r)) != SPS_OK) return e;
    if ((e = o->dot(w, 1, r, r, &f)) != SPS_OK) return e;
    if ((e = s->method->impl->start(k)) != SPS_OK) return e;
    if ((e = check(k, st, syncs)) != SPS_OK) return e;
    if ((e = monitor(s, k, st)) != SPS_OK) return e;
    return loop(s, k, st, syncs);
}

/* The true residual overrules the recurrence (doc/solvers.md): a converged
 * solve whose ||b - A x|| fails the tolerance continues from x with the true
 * residual, at most SPS_K_MAX_REPLACE times; then it is not converged. */
static sps_status true_residual(sps_solver *s, sps_krylov *k, sps_kstate *st, int64_t *syncs)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_status e;
    for (int rep = 0;; rep++) {
        sps_kfin f = common(k, SPS_KC_TRUE);
        if ((e = sps__kr_resid(k, k->scratch)) != SPS_OK) return e;
        if ((e = o->nrm2(w, k->scratch, &f)) != SPS_OK) return e;
        if ((e = o->get_state(w, st)) != SPS_OK) return e;
        int converged = st->reason > 0 && st->reason != SPS_CONVERGED_ZERO_RHS;
        if (!converged || st->true_rnorm <= st->tol) return SPS_OK;
        if (rep == SPS_K_MAX_REPLACE || st->iter >= st->maxit) {
            st->reason = SPS_DIVERGED_TRUE_RESIDUAL;
            return SPS_OK;
        }
        if ((e = replace_residual(s, k, st, syncs)) != SPS_OK) return e;
    }
}

static sps_status check_args(sps_solver *s, sps_operator *op, sps_precond *pc, const double *b,
                             double *x, int *pcmode)
{
    sps_context *ctx = s->ctx;
    if (!op) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_solve: operator is NULL");
    if (op->ctx != ctx)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_solve: the operator belongs to another context");
    if (op->single)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "sps_solve: the operator is single precision; solvers need SPS_DOUBLE");
    if (op->nrows != op->ncols)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_solve: the matrix is %d x %d, not square",
                        op->nrows, op->ncols);
    if (op->nrows > 0 && (!b || !x))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_solve: %s is NULL", b ? "x" : "b");
    *pcmode = SPS_PCM_NONE;
    if (pc && !pc->identity) {
        if (pc->ctx != ctx)
            return sps__err(ctx, SPS_ERR_INVALID_ARG,
                            "sps_solve: the preconditioner belongs to another context");
        if (pc->n != op->nrows)
            return sps__err(ctx, SPS_ERR_INVALID_ARG,
                            "sps_solve: preconditioner of size %d for a matrix of size %d", pc->n,
                            op->nrows);
        if (pc->fused_diag) *pcmode = SPS_PCM_JACOBI;
        else if (pc->apply) *pcmode = SPS_PCM_APPLY;
        else return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_solve: preconditioner '%s' has no apply", pc->name);
    }
    const sps_vops *o = sps__vops_for(ctx);
    if (!o->device && (o->is_device(b) || o->is_device(x)))
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "sps_solve: %s is a device pointer but the context is on the host",
                        o->is_device(b) ? "b" : "x");
    return SPS_OK;
}

static sps_status keep_history(sps_solver *s, sps_krylov *k, int64_t len)
{
    if (len > s->hist_cap) {
        double *h = sps__realloc(s->hist, sps__mul_size((size_t)len, sizeof *h));
        if (!h) return sps__err(s->ctx, SPS_ERR_NO_MEMORY, "sps_solve: out of memory (history)");
        s->hist = h;
        s->hist_cap = len;
    }
    sps_status e = k->ops->get_history(&k->w, s->hist, len);
    for (int64_t i = 0; k->sexp && i < len; i++) s->hist[i] = ldexp(s->hist[i], -(int)k->sexp);
    return e;
}

/* Plan, allocate, carve, copy in; the initial states. */
static sps_status setup(sps_solver *s, sps_krylov *k, sps_operator *op, sps_precond *pc,
                        int pcmode, const double *b, double *x, char **base, layout *L)
{
    const sps_method_entry *me = s->method;
    k->ops = sps__vops_for(s->ctx);
    k->mops = k->ops->device ? me->ops_cuda : me->ops_host;
    if (!k->mops)
        return sps__err(s->ctx, SPS_ERR_NOT_COMPILED, "sps_solve: method '%s' has no %s operations",
                        me->impl->name, k->ops->name);
    k->cfg = &s->cfg;
    k->op = op;
    k->pc = pcmode == SPS_PCM_NONE ? NULL : pc;
    k->pcmode = pcmode;
    k->ran = "classic";
    k->w.ctx = s->ctx;
    k->w.ops = k->ops;
    k->w.n = op->nrows;
    k->engine = sps__engine_resolve(s, k);
    me->impl->work(k, &k->work);
    if (k->work.nvec > SPS_KR_MAXVEC || k->work.npiece > SPS_KR_MAXPIECE ||
        k->work.r >= k->work.nvec || k->work.scratch >= k->work.nvec ||
        k->work.state_bytes > sizeof k->minit)
        return sps__err(s->ctx, SPS_ERR_INTERNAL, "sps_solve: method '%s' asks for too much (%s:%d)",
                        me->impl->name, __FILE__, __LINE__);
    size_t bytes = 0;
    sps_status e = plan_layout(s, k, b, x, L, &bytes);
    if (e == SPS_OK) e = get_block(s, k->ops, bytes, base);
    if (e == SPS_OK) e = carve(s, k, *base, L, b, x);
    if (e != SPS_OK) return e;
    sps_kstate *st = &k->init;
    memset(st, 0, sizeof *st);
    st->maxit = s->cfg.maxit;
    st->has_pc = pcmode != SPS_PCM_NONE;
    st->rtol = s->cfg.rtol;
    st->atol = s->cfg.atol;
    st->dtol = s->cfg.dtol;
    memset(k->minit, 0, sizeof k->minit);
    if (me->impl->init) me->impl->init(k, k->minit);
    return SPS_OK;
}

/* Warm-up: CUDA loads every kernel (ours, cuSPARSE's) at its first
 * launch, milliseconds each. The first device solve of a configuration runs
 * one iteration on a scratch copy of x, with the monitor off, so that loading
 * is paid in setup_ms and the iteration phase measures iterations. x, the
 * counters and the state are then reset. Not with a user operator or
 * preconditioner: their callbacks run exactly once per SpMV or apply that
 * sps_solve_info counts (the loading then falls in the first iteration). */
static sps_status warm_up(sps_solver *s, sps_krylov *k, double *wx, sps_operator *op,
                          sps_precond *pc)
{
    if (!k->ops->device || (s->warm_method == s->method && s->warm_pcmode == k->pcmode &&
                            s->warm_op == op && s->warm_pc == pc))
        return SPS_OK;
    if ((op->be->caps & SPS_CAP_CALLBACK) || (k->pc && k->pc->callback)) return SPS_OK;
    double *xreal = k->x;
    sps_monitor_fn mon = s->mon;
    sps_monitor_stop_fn mon_stop = s->mon_stop;
    sps_kstate ws = k->init;
    int64_t wsyncs = 0;
    ws.maxit = 1;
    s->mon = NULL;
    s->mon_stop = NULL;
    sps_status e = k->ops->copy(&k->w, wx, xreal);
    k->x = wx;
    if (e == SPS_OK) e = k->ops->put_state(&k->w, &ws, k->minit, k->work.state_bytes);
    if (e == SPS_OK) e = iterate(s, k, &ws, &wsyncs);
    s->mon = mon;
    s->mon_stop = mon_stop;
    sps__engine_release(k); /* its graphs write wx */
    k->x = xreal;
    k->b = k->b_in;
    k->sexp = 0;
    if (e != SPS_OK) return e;
    k->spmvs = 0;
    k->steady_syncs = 0;
    k->pc_applies = 0;
    k->replacements = 0;
    s->warm_method = s->method;
    s->warm_pcmode = k->pcmode;
    s->warm_op = op;
    s->warm_pc = pc;
    return SPS_OK;
}

void sps__kstate_report(const sps_kstate *st, int un, const double t[4], sps_solve_info *info)
{
    int64_t iters = st->iter;
    info->reason = (sps_reason)st->reason;
    info->iterations = iters;
    info->restarts = st->restarts;
    info->bnorm = ldexp(st->bnorm, un);
    info->r0norm = ldexp(st->r0norm, un);
    info->rnorm = ldexp(st->rnorm, un);
    info->true_rnorm = ldexp(st->true_rnorm, un);
    info->rel_rnorm = st->bnorm > 0 ? st->rnorm / st->bnorm : 0.0;
    info->true_rel_rnorm = st->bnorm > 0 ? st->true_rnorm / st->bnorm : 0.0;
    if (sps__k_bad(st->bnorm)) info->rel_rnorm = info->true_rel_rnorm = st->bnorm;
    info->setup_ms = t[1] - t[0];
    info->iterate_ms = t[2] - t[1];
    info->per_iter_ms = iters > 0 ? (t[2] - t[1]) / (double)iters : 0.0;
    info->finish_ms = t[3] - t[2];
}

static void report(const sps_solver *s, const sps_krylov *k, const sps_kstate *st,
                   const double t[4], int64_t syncs, sps_solve_info *info)
{
    sps__kstate_report(st, -(int)k->sexp, t, info); /* back from the rescaled problem */
    info->host_syncs = syncs;
    info->steady_syncs = k->steady_syncs;
    info->spmvs = k->spmvs;
    info->precond_applies = k->pc_applies;
    info->replacements = k->replacements;
    info->history = s->history ? s->hist : NULL;
    info->history_len = s->history ? st->iter + 1 : 0;
}

/* The copy bandwidth the floor divides by: the context's (measured once, as
 * auto's predictions do) on a GPU; on the host a smaller copy, once per
 * solver. 0 when it cannot be measured. */
static double floor_gbps(sps_solver *s)
{
    sps_context *ctx = s->ctx;
    if (ctx->gpu) {
        double g = 0;
        if (!(ctx->copy_gbps > 0) && sps_copy_bandwidth(ctx, (size_t)64 << 20, &g) == SPS_OK && g > 0)
            ctx->copy_gbps = g;
        return ctx->copy_gbps > 0 ? ctx->copy_gbps : 0.0;
    }
    if (!(s->copy_gbps > 0)) {
        double g = 0;
        if (sps_copy_bandwidth(ctx, (size_t)4 << 20, &g) == SPS_OK && g > 0) s->copy_gbps = g;
    }
    return s->copy_gbps > 0 ? s->copy_gbps : 0.0;
}

/* The traffic model's floor, and how far the iterations were above it. */
static void report_floor(sps_solver *s, const sps_krylov *k, sps_solve_info *info)
{
    info->engine = k->ran ? k->ran : "classic";
    info->engine_cluster = strcmp(info->engine, "onekernel") == 0 ? k->onek_cluster : 0;
    info->bytes_per_iter = sps__engine_bytes(k, s->method->impl);
    if (!s->floor_later) sps__solve_floor(s, info);
}

void sps__solve_floor(sps_solver *s, sps_solve_info *info)
{
    if (!(info->bytes_per_iter > 0)) return;
    info->copy_gbps = floor_gbps(s);
    if (!(info->copy_gbps > 0)) return;
    info->floor_per_iter_ms = info->bytes_per_iter / (info->copy_gbps * 1e6);
    if (info->iterations > 0) info->floor_fraction = info->per_iter_ms / info->floor_per_iter_ms;
}

static sps_status solve(sps_solver *s, sps_krylov *k, sps_operator *op, sps_precond *pc,
                        const double *b, double *x, sps_solve_info *info)
{
    int pcmode = SPS_PCM_NONE;
    sps_status e = check_args(s, op, pc, b, x, &pcmode);
    if (e != SPS_OK) return e;
    double t[4] = {sps__now_ms(), 0, 0, 0};
    if (op->nrows == 0) {
        /* Nothing to solve: b is empty, hence zero. */
        info->reason = SPS_CONVERGED_ZERO_RHS;
        return SPS_OK;
    }
    char *base = NULL;
    layout L;
    memset(&L, 0, sizeof L);
    if ((e = setup(s, k, op, pc, pcmode, b, x, &base, &L)) != SPS_OK) return e;
    if ((e = warm_up(s, k, (double *)(void *)(base + L.wx), op, pc)) != SPS_OK) return e;
    sps_kstate st = k->init;
    if ((e = k->ops->put_state(&k->w, &st, k->minit, k->work.state_bytes)) != SPS_OK) return e;
    t[1] = sps__now_ms();

    /* ---- iterations ---- */
    int64_t syncs = 0;
    if ((e = iterate(s, k, &st, &syncs)) != SPS_OK) return e;
    t[2] = sps__now_ms();

    /* ---- finish: the true residual (it may send the solve on), copies out ---- */
    int64_t iters0 = st.iter;
    if ((e = true_residual(s, k, &st, &syncs)) != SPS_OK) return e;
    if (st.iter != iters0) t[2] = sps__now_ms();
    if (s->history && (e = keep_history(s, k, st.iter + 1)) != SPS_OK) return e;
    if (k->sexp && (e = scale_pow2(k, k->x, k->x, -k->sexp)) != SPS_OK) return e;
    if (L.copy_x && (e = k->ops->copy_out(s->ctx, x, k->x, (size_t)k->w.n * sizeof *x)) != SPS_OK)
        return e;
    t[3] = sps__now_ms();
    report(s, k, &st, t, syncs, info);
    report_floor(s, k, info);
    return SPS_OK;
}

sps_status sps_solve(sps_solver *s, sps_operator *op, sps_precond *pc, const double *b, double *x,
                     sps_solve_info *info)
{
    if (!s) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_solve: solver is NULL");
    if (!info) return sps__err(s->ctx, SPS_ERR_INVALID_ARG, "sps_solve: info is NULL");
    memset(info, 0, sizeof *info);
    sps_krylov k;
    memset(&k, 0, sizeof k);
    sps_status e = solve(s, &k, op, pc, b, x, info);
    sps__engine_release(&k);
    if (k.bs) k.ops->free(k.bs);
    return e;
}
