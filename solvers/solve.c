/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/solve.c: the solver object, sps_solve, and the loop every
 * method shares: workspace, initial and final residuals, batches of k
 * iterations between host checks, the monitor, the info.
 *
 * The host check. On the GPU the host enqueues k iterations, then copies the
 * small state back (one synchronization) and decides: stop, or enqueue the next
 * k. Operations past a stop are no-ops (vops.h), so a batch that overshoots
 * costs only its SpMVs and preconditioner applications. k starts at 1 and
 * doubles up to 64, but never past the number of iterations the last batch's
 * convergence rate says are still needed, so few iterations are wasted at the
 * end. On the host, reading the state costs nothing: k = 1. */
#include "../core/gpu.h"
#include "krylov.h"

#include <math.h>
#include <string.h>

#define SPS_K_MAX 64    /* longest batch between host checks */
#define SPS_ALIGN 256   /* byte alignment of each workspace piece */

struct sps_solver {
    sps_context *ctx;
    sps_method method;
    double rtol, atol, dtol;
    int64_t maxit;
    int restart, history, check;
    sps_monitor_fn mon;
    void *mon_user;
    double *hist;      /* the history handed out in the info */
    int64_t hist_cap;
    void *blk;         /* workspace kept between solves */
    size_t blk_bytes;
    int blk_gpu;
    /* The configuration the last GPU warm-up ran (sps_solve): method,
     * preconditioner mode, operator and preconditioner objects. */
    int warm_method, warm_pcmode;
    const void *warm_op, *warm_pc;
};

/* ---- names ---------------------------------------------------------------- */

const char *sps_method_name(sps_method m)
{
    return m == SPS_CG ? "cg" : m == SPS_BICGSTAB ? "bicgstab" : m == SPS_GMRES ? "gmres" : "?";
}

sps_status sps_method_from_name(const char *name, sps_method *m)
{
    if (!name || !m) return sps__err(NULL, SPS_ERR_INVALID_ARG, "NULL argument");
    if (!strcmp(name, "cg")) *m = SPS_CG;
    else if (!strcmp(name, "bicgstab")) *m = SPS_BICGSTAB;
    else if (!strcmp(name, "gmres")) *m = SPS_GMRES;
    else return sps__err(NULL, SPS_ERR_INVALID_ARG, "unknown method '%s' (cg, bicgstab, gmres)", name);
    return SPS_OK;
}

/* ---- the solver object ---------------------------------------------------- */

sps_status sps_solver_create(sps_context *ctx, sps_solver **s)
{
    if (!ctx || !s) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_solver_create: NULL argument");
    *s = sps__calloc(1, sizeof **s);
    if (!*s) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_solver_create: out of memory");
    sps_solver *v = *s;
    v->ctx = ctx;
    v->method = SPS_CG;
    v->rtol = 1e-8;
    v->atol = 0;
    v->dtol = 1e5;
    v->maxit = 10000;
    v->restart = 30;
    return SPS_OK;
}

static void free_block(sps_solver *s)
{
#if SPS_HAVE_CUDA
    if (s->blk_gpu) sps__dfree(s->blk);
    else sps__free(s->blk);
#else
    sps__free(s->blk);
#endif
    s->blk = NULL;
    s->blk_bytes = 0;
}

void sps_solver_destroy(sps_solver *s)
{
    if (!s) return;
    free_block(s);
    sps__free(s->hist);
    sps__free(s);
}

#define SETTER_CHECK(s, cond, ...)                                                  \
    do {                                                                           \
        if (!(s)) return sps__err(NULL, SPS_ERR_INVALID_ARG, "solver is NULL");    \
        if (!(cond)) return sps__err((s)->ctx, SPS_ERR_INVALID_ARG, __VA_ARGS__);  \
    } while (0)

sps_status sps_solver_set_method(sps_solver *s, sps_method m)
{
    SETTER_CHECK(s, m == SPS_CG || m == SPS_BICGSTAB || m == SPS_GMRES, "unknown method %d", (int)m);
    s->method = m;
    return SPS_OK;
}

sps_status sps_solver_set_rtol(sps_solver *s, double v)
{
    SETTER_CHECK(s, v >= 0 && v < INFINITY, "rtol must be finite and >= 0 (got %g)", v);
    s->rtol = v;
    return SPS_OK;
}

sps_status sps_solver_set_atol(sps_solver *s, double v)
{
    SETTER_CHECK(s, v >= 0 && v < INFINITY, "atol must be finite and >= 0 (got %g)", v);
    s->atol = v;
    return SPS_OK;
}

sps_status sps_solver_set_dtol(sps_solver *s, double v)
{
    SETTER_CHECK(s, v > 0, "dtol must be > 0 (got %g)", v);
    s->dtol = v;
    return SPS_OK;
}

sps_status sps_solver_set_maxit(sps_solver *s, int64_t v)
{
    SETTER_CHECK(s, v >= 0 && v < ((int64_t)1 << 53), "maxit must be >= 0 (got %lld)", (long long)v);
    s->maxit = v;
    return SPS_OK;
}

sps_status sps_solver_set_restart(sps_solver *s, int v)
{
    SETTER_CHECK(s, v >= 1, "restart must be >= 1 (got %d)", v);
    s->restart = v;
    return SPS_OK;
}

sps_status sps_solver_set_history(sps_solver *s, int on)
{
    if (!s) return sps__err(NULL, SPS_ERR_INVALID_ARG, "solver is NULL");
    s->history = on != 0;
    return SPS_OK;
}

sps_status sps_solver_set_check_interval(sps_solver *s, int k)
{
    SETTER_CHECK(s, k >= 0, "check interval must be >= 0 (got %d)", k);
    s->check = k;
    return SPS_OK;
}

sps_status sps_solver_set_monitor(sps_solver *s, sps_monitor_fn fn, void *user)
{
    if (!s) return sps__err(NULL, SPS_ERR_INVALID_ARG, "solver is NULL");
    s->mon = fn;
    s->mon_user = user;
    return SPS_OK;
}

/* ---- helpers for the methods ---------------------------------------------- */

sps_status sps__kr_spmv(sps_krylov *k, const double *x, double *y)
{
    k->spmvs++;
    return sps_operator_apply(k->op, 1.0, x, 0.0, y);
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
    if (k->pcmode == SPS_PCM_JACOBI) return k->ops->jacobi(&k->w, z, k->dinv, r);
    return k->pc->apply(k->pc, r, z);
}

/* ---- workspace ------------------------------------------------------------ */

typedef struct plan {
    size_t off, bytes;
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
    size_t st, part, hist, vec, V, H, cs, sn, g, y, h2, b, x, wx;
} layout;

static sps_status get_block(sps_solver *s, int gpu, size_t bytes, char **base)
{
    if (s->blk && s->blk_gpu == gpu && s->blk_bytes >= bytes) {
        *base = s->blk;
        return SPS_OK;
    }
    free_block(s);
    void *p = NULL;
#if SPS_HAVE_CUDA
    if (gpu) {
        sps_status st = sps__dmalloc(s->ctx, &p, bytes);
        if (st != SPS_OK) return st;
    }
#endif
    if (!gpu) {
        p = sps__malloc(bytes);
        if (!p)
            return sps__err(s->ctx, SPS_ERR_NO_MEMORY, "sps_solve: out of memory (%.1f MiB of workspace)",
                            (double)bytes / 1048576.0);
    }
    s->blk = p;
    s->blk_bytes = bytes;
    s->blk_gpu = gpu;
    *base = p;
    return SPS_OK;
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

static void monitor(const sps_solver *s, const sps_krylov *k, const sps_kstate *st)
{
    if (s->mon) s->mon(s->mon_user, st->iter, ldexp(st->rnorm, -(int)k->sexp));
}

static sps_status mem_alloc(sps_context *ctx, int gpu, size_t bytes, void **p)
{
    *p = NULL;
#if SPS_HAVE_CUDA
    if (gpu) return sps__dmalloc(ctx, p, bytes);
#endif
    (void)gpu;
    *p = sps__malloc(bytes);
    if (!*p) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_solve: out of memory (%zu bytes)", bytes);
    return SPS_OK;
}

static void mem_free(int gpu, void *p)
{
#if SPS_HAVE_CUDA
    if (gpu) {
        sps__dfree(p);
        return;
    }
#endif
    (void)gpu;
    sps__free(p);
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
static sps_status rescale(sps_solver *s, sps_krylov *k, int gpu, const sps_kstate *st)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_status e;
    if (k->sexp != 0) return sps__err(s->ctx, SPS_ERR_INTERNAL, "sps_solve: rescaled twice");
    if (!k->bs) {
        void *p = NULL;
        if ((e = mem_alloc(s->ctx, gpu, (size_t)w->n * sizeof(double), &p)) != SPS_OK) return e;
        k->bs = p;
        k->bs_gpu = gpu;
    }
    k->sexp = -st->rescale_e;
    if ((e = scale_pow2(k, k->bs, k->b, k->sexp)) != SPS_OK) return e;
    if ((e = scale_pow2(k, k->x, k->x, k->sexp)) != SPS_OK) return e;
    k->b = k->bs;
    sps_kstate ns = k->init;
    ns.maxit = st->maxit;
    ns.atol = ldexp(ns.atol, (int)k->sexp);
    return o->put_state(w, &ns);
}

/* ||b||, the tolerance;  r <- b - A x;  ||r0||;  the method's start; the
 * first host check (rescaling once when ||b|| is out of range). */
static sps_status begin(sps_solver *s, sps_krylov *k, const sps_method_impl *mi, int gpu,
                        sps_kstate *st, int64_t *syncs)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_status e;
    for (int pass = 0;; pass++) {
        if ((e = o->nrm2(w, k->b, SPS_FIN_BNORM)) != SPS_OK) return e;
        if ((e = sps__kr_resid(k, k->r)) != SPS_OK) return e;
        if ((e = o->dot(w, k->r, k->r, NULL, NULL, SPS_FIN_R0, 0)) != SPS_OK) return e;
        if ((e = mi->start(k)) != SPS_OK) return e;
        if ((e = o->get_state(w, st)) != SPS_OK) return e;
        *syncs += gpu;
        if (st->reason != SPS_K_RESCALE) break;
        if ((e = rescale(s, k, gpu, st)) != SPS_OK) return e;
    }
    monitor(s, k, st);
    if (st->reason == SPS_CONVERGED_ZERO_RHS) return o->fill(w, k->x, 0.0);
    return SPS_OK;
}

/* Batches of iterations between host checks, until the state says stop. */
static sps_status loop(sps_solver *s, sps_krylov *k, const sps_method_impl *mi, int gpu,
                       sps_kstate *st, int64_t *syncs)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_status e;
    int64_t kk = gpu ? (s->check > 0 ? s->check : 1) : 1;
    while (!st->stop) {
        int64_t batch = kk, it0 = st->iter;
        double rn0 = st->rnorm;
        if (batch > st->maxit - st->iter) batch = st->maxit - st->iter;
        if (mi->room) {
            int64_t room = mi->room(k);
            if (batch > room) batch = room;
        }
        for (int64_t i = 1; i <= batch; i++)
            if ((e = mi->iterate(k, it0 + i)) != SPS_OK) return e;
        if ((e = o->get_state(w, st)) != SPS_OK) return e;
        *syncs += gpu;
        monitor(s, k, st);
        if (mi->checked && (e = mi->checked(k, st)) != SPS_OK) return e;
        if (gpu && s->check == 0) kk = next_k(kk, st, it0, rn0);
    }
    return SPS_OK;
}

/* From the state written, through the iterations, to the last host check. */
static sps_status iterate(sps_solver *s, sps_krylov *k, const sps_method_impl *mi, int gpu,
                          sps_kstate *st, int64_t *syncs)
{
    sps_status e = begin(s, k, mi, gpu, st, syncs);
    if (e != SPS_OK) return e;
    return loop(s, k, mi, gpu, st, syncs);
}

/* The true residual overrules the recurrence (doc/solvers.md): a converged
 * solve whose ||b - A x|| fails the tolerance continues from x with the true
 * residual, at most SPS_K_MAX_REPLACE times; then it is not converged. */
static sps_status true_residual(sps_solver *s, sps_krylov *k, const sps_method_impl *mi, int gpu,
                                sps_kstate *st, int64_t *syncs)
{
    const sps_vops *o = k->ops;
    sps_kws *w = &k->w;
    sps_status e;
    for (int rep = 0;; rep++) {
        if ((e = sps__kr_resid(k, k->scratch)) != SPS_OK) return e;
        if ((e = o->nrm2(w, k->scratch, SPS_FIN_TRUE)) != SPS_OK) return e;
        if ((e = o->get_state(w, st)) != SPS_OK) return e;
        int converged = st->reason > 0 && st->reason != SPS_CONVERGED_ZERO_RHS;
        if (!converged || st->true_rnorm <= st->tol) return SPS_OK;
        if (rep == SPS_K_MAX_REPLACE || st->iter >= st->maxit) {
            st->reason = SPS_DIVERGED_TRUE_RESIDUAL;
            return SPS_OK;
        }
        /* r <- b - A x;  ||r|| replaces the recurrence's;  the method's start */
        k->replacements++;
        st->stop = 0;
        st->reason = SPS_ITERATING;
        if ((e = o->put_state(w, st)) != SPS_OK) return e;
        if ((e = sps__kr_resid(k, k->r)) != SPS_OK) return e;
        if ((e = o->dot(w, k->r, k->r, NULL, NULL, SPS_FIN_RESTART, 0)) != SPS_OK) return e;
        if ((e = mi->start(k)) != SPS_OK) return e;
        if ((e = o->get_state(w, st)) != SPS_OK) return e;
        *syncs += gpu;
        monitor(s, k, st);
        if ((e = loop(s, k, mi, gpu, st, syncs)) != SPS_OK) return e;
    }
}

static const sps_method_impl *method_impl(sps_method m)
{
    return m == SPS_CG ? &sps__method_cg : m == SPS_BICGSTAB ? &sps__method_bicgstab : &sps__method_gmres;
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
#if SPS_HAVE_CUDA
    if (!ctx->gpu && (sps__is_device_ptr(b) || sps__is_device_ptr(x)))
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "sps_solve: %s is a device pointer but the context is on the host",
                        sps__is_device_ptr(b) ? "b" : "x");
#endif
    return SPS_OK;
}

/* GMRES's stagnation window: at least SPS_STAG_ITERS iterations and 2 cycles. */
static int64_t stag_window(int64_t m)
{
    int64_t w = (SPS_STAG_ITERS + m - 1) / m;
    return w < 2 ? 2 : w;
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

static sps_status solve(sps_solver *s, sps_krylov *kp, sps_operator *op, sps_precond *pc,
                        const double *b, double *x, sps_solve_info *info);

sps_status sps_solve(sps_solver *s, sps_operator *op, sps_precond *pc, const double *b, double *x,
                     sps_solve_info *info)
{
    sps_krylov k;
    memset(&k, 0, sizeof k);
    sps_status e = solve(s, &k, op, pc, b, x, info);
    if (k.bs) mem_free(k.bs_gpu, k.bs);
    return e;
}

static sps_status solve(sps_solver *s, sps_krylov *kp, sps_operator *op, sps_precond *pc,
                        const double *b, double *x, sps_solve_info *info)
{
    if (!s) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_solve: solver is NULL");
    if (!info) return sps__err(s->ctx, SPS_ERR_INVALID_ARG, "sps_solve: info is NULL");
    memset(info, 0, sizeof *info);
    int pcmode = SPS_PCM_NONE;
    sps_status e = check_args(s, op, pc, b, x, &pcmode);
    if (e != SPS_OK) return e;
    double t0 = sps__now_ms();
    sps_context *ctx = s->ctx;
    int gpu = ctx->gpu != NULL;
    sps_idx n = op->nrows;
    if (n == 0) {
        /* Nothing to solve: b is empty, hence zero. */
        info->reason = SPS_CONVERGED_ZERO_RHS;
        return SPS_OK;
    }
    const sps_method_impl *mi = method_impl(s->method);
    int64_t m = 0;
    if (s->method == SPS_GMRES) {
        /* A cycle longer than n or than maxit cannot be used. */
        m = s->restart;
        if (m > n) m = n;
        if (m > s->maxit && s->maxit > 0) m = s->maxit;
    }
    /* x may alias b: b is then copied first. */
    uintptr_t ub = (uintptr_t)b, ux = (uintptr_t)x, nb = (uintptr_t)n * sizeof *b;
    int alias = ub < ux + nb && ux < ub + nb;
    int copy_b = alias, copy_x = 0, b_host = 1;
#if SPS_HAVE_CUDA
    if (gpu) {
        b_host = !sps__is_device_ptr(b);
        copy_b |= b_host;
        copy_x = !sps__is_device_ptr(x);
    }
#endif
    /* ---- setup: plan, allocate, carve, copy in ---- */
    int nv = mi->nvec(pcmode);
    plan p = {0, 0};
    layout L;
    L.st = reserve(&p, (sizeof(sps_kstate) + sizeof(double) - 1) / sizeof(double));
    int grid = 0;
#if SPS_HAVE_CUDA
    if (gpu) grid = sps__vops_cuda_grid(n);
#endif
    L.part = reserve(&p, SPS_K_NSUM * (size_t)grid);
    L.hist = reserve(&p, s->history ? (size_t)s->maxit + 1 : 0);
    L.vec = reserve(&p, sps__mul_size((size_t)nv, (size_t)n));
    L.V = reserve(&p, sps__mul_size((size_t)(m + 1), (size_t)n));
    L.H = reserve(&p, (size_t)((m + 1) * m));
    L.cs = reserve(&p, (size_t)m);
    L.sn = reserve(&p, (size_t)m);
    L.g = reserve(&p, (size_t)m + 1);
    L.y = reserve(&p, (size_t)m);
    L.h2 = reserve(&p, (size_t)m + 1);
    L.b = reserve(&p, copy_b ? (size_t)n : 0);
    L.x = reserve(&p, copy_x ? (size_t)n : 0);
    L.wx = reserve(&p, gpu ? (size_t)n : 0);
    if (p.off == SIZE_MAX)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_solve: workspace size overflows (n = %d, m = %lld)",
                        n, (long long)m);
    char *base = NULL;
    if ((e = get_block(s, gpu, p.off, &base)) != SPS_OK) return e;
#define PIECE(field) ((double *)(void *)(base + L.field))
    kp->ops = &sps__vops_host;
#if SPS_HAVE_CUDA
    if (gpu) kp->ops = &sps__vops_cuda;
#endif
    kp->op = op;
    kp->pc = pcmode == SPS_PCM_NONE ? NULL : pc;
    kp->pcmode = pcmode;
    kp->dinv = pcmode == SPS_PCM_JACOBI ? pc->fused_diag : NULL;
    kp->b = copy_b ? PIECE(b) : b;
    kp->x = copy_x ? PIECE(x) : x;
    for (int i = 0; i < nv; i++) kp->vec[i] = PIECE(vec) + (size_t)i * (size_t)n;
    sps_kws *w = &kp->w;
    w->ctx = ctx;
    w->ops = kp->ops;
    w->n = n;
    w->grid = grid;
    w->st = (sps_kstate *)(void *)(base + L.st);
    w->part = PIECE(part);
    w->hist = s->history ? PIECE(hist) : NULL;
    w->V = m ? PIECE(V) : NULL;
    w->m = (int)m;
    w->gm.H = PIECE(H);
    w->gm.cs = PIECE(cs);
    w->gm.sn = PIECE(sn);
    w->gm.g = PIECE(g);
    w->gm.y = PIECE(y);
    w->gm.h2 = PIECE(h2);
#undef PIECE
    mi->bind(kp);
    if (copy_b && !(gpu && b_host) && (e = kp->ops->copy(w, (double *)(void *)kp->b, b)) != SPS_OK)
        return e;
#if SPS_HAVE_CUDA
    if (copy_b && gpu && b_host && (e = sps__h2d(ctx, (void *)kp->b, b, (size_t)n * sizeof *b)) != SPS_OK)
        return e;
    if (copy_x && (e = sps__h2d(ctx, kp->x, x, (size_t)n * sizeof *x)) != SPS_OK) return e;
#endif
    kp->b_in = kp->b;
    sps_kstate st;
    memset(&st, 0, sizeof st);
    st.maxit = s->maxit;
    st.has_pc = pcmode != SPS_PCM_NONE;
    st.m = m;
    st.stag_win = m ? stag_window(m) : 0;
    st.rtol = s->rtol;
    st.atol = s->atol;
    st.dtol = s->dtol;
    kp->init = st;
#if SPS_HAVE_CUDA
    /* Warm-up: CUDA loads every kernel (ours, cuBLAS's, cuSPARSE's) at its
     * first launch, milliseconds each. The first GPU solve of a configuration
     * runs one iteration on a scratch copy of x, with the monitor off, so that
     * loading is paid here (setup_ms) and the iteration phase measures
     * iterations. x, the counters and the state are then reset. */
    if (gpu && (s->warm_method != (int)s->method || s->warm_pcmode != pcmode ||
                s->warm_op != op || s->warm_pc != pc)) {
        double *xreal = kp->x, *wx = (double *)(void *)(base + L.wx);
        sps_monitor_fn mon = s->mon;
        sps_kstate ws = st;
        int64_t wsyncs = 0;
        ws.maxit = 1;
        s->mon = NULL;
        e = sps__d2d(ctx, wx, xreal, (size_t)n * sizeof *wx);
        kp->x = wx;
        if (e == SPS_OK) e = kp->ops->put_state(w, &ws);
        if (e == SPS_OK) e = iterate(s, kp, mi, gpu, &ws, &wsyncs);
        s->mon = mon;
        kp->x = xreal;
        kp->b = kp->b_in;
        kp->sexp = 0;
        if (e != SPS_OK) return e;
        kp->spmvs = 0;
        kp->pc_applies = 0;
        kp->replacements = 0;
        s->warm_method = (int)s->method;
        s->warm_pcmode = pcmode;
        s->warm_op = op;
        s->warm_pc = pc;
    }
#endif
    if ((e = kp->ops->put_state(w, &st)) != SPS_OK) return e;
    double t1 = sps__now_ms();

    /* ---- iterations ---- */
    int64_t syncs = 0;
    if ((e = iterate(s, kp, mi, gpu, &st, &syncs)) != SPS_OK) return e;
    double t2 = sps__now_ms();

    /* ---- finish: the true residual (it may send the solve on), copies out ---- */
    int64_t iters0 = st.iter;
    if ((e = true_residual(s, kp, mi, gpu, &st, &syncs)) != SPS_OK) return e;
    int64_t iters = st.iter;
    if (iters != iters0) t2 = sps__now_ms();
    if (s->history && (e = keep_history(s, kp, iters + 1)) != SPS_OK) return e;
    if (kp->sexp && (e = scale_pow2(kp, kp->x, kp->x, -kp->sexp)) != SPS_OK) return e;
#if SPS_HAVE_CUDA
    if (copy_x && (e = sps__d2h(ctx, x, kp->x, (size_t)n * sizeof *x)) != SPS_OK) return e;
#endif
    double t3 = sps__now_ms();

    int un = -(int)kp->sexp; /* back from the rescaled problem */
    info->reason = (sps_reason)st.reason;
    info->iterations = iters;
    info->bnorm = ldexp(st.bnorm, un);
    info->r0norm = ldexp(st.r0norm, un);
    info->rnorm = ldexp(st.rnorm, un);
    info->true_rnorm = ldexp(st.true_rnorm, un);
    info->rel_rnorm = st.bnorm > 0 ? st.rnorm / st.bnorm : 0.0;
    info->true_rel_rnorm = st.bnorm > 0 ? st.true_rnorm / st.bnorm : 0.0;
    if (sps__k_bad(st.bnorm)) info->rel_rnorm = info->true_rel_rnorm = st.bnorm;
    info->setup_ms = t1 - t0;
    info->iterate_ms = t2 - t1;
    info->per_iter_ms = iters > 0 ? (t2 - t1) / (double)iters : 0.0;
    info->finish_ms = t3 - t2;
    info->host_syncs = syncs;
    info->spmvs = kp->spmvs;
    info->precond_applies = kp->pc_applies;
    info->restarts = st.cycle;
    info->replacements = kp->replacements;
    info->history = s->history ? s->hist : NULL;
    info->history_len = s->history ? iters + 1 : 0;
    return SPS_OK;
}
