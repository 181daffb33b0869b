/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/engine_jobs.h: one solve of a (backend, method,
 * preconditioner, engine) job on a context, and the comparisons of its
 * result, shared by tests/gpu/test_engine_gpu.c, test_gmres_onek_gpu.c and
 * test_gmres_cluster_gpu.c. */
#ifndef SPS_TEST_ENGINE_JOBS_H
#define SPS_TEST_ENGINE_JOBS_H

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct result {
    sps_solve_info in;
    double *x, *hist;
    sps_status st;
    char engine[16];
} result;

typedef struct job {
    const char *spmv;   /* backend */
    const char *method; /* method spec */
    const char *pc;     /* preconditioner type or NULL */
    const char *engine; /* engine or NULL (auto, the default) */
} job;

/* Solve A x = b on ctx (x0 = 0, rtol 1e-10, history on; at most maxit
 * iterations when maxit > 0, else the solver's default). */
static result job_solve(sps_context *ctx, const sps_matrix *A, const job *j, const double *b, int64_t maxit)
{
    result r;
    memset(&r, 0, sizeof r);
    int n = sps_matrix_rows(A);
    r.x = calloc((size_t)n, sizeof *r.x);
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    sps_precond *pc = NULL;
    r.st = sps_operator_create(ctx, A, j->spmv, NULL, &op);
    if (r.st == SPS_OK) r.st = sps_solver_create(ctx, &s);
    if (r.st == SPS_OK) r.st = sps_solver_set_method_name(s, j->method);
    if (r.st == SPS_OK) r.st = sps_solver_set_engine(s, j->engine);
    if (r.st == SPS_OK && j->pc) r.st = sps_precond_create(ctx, A, j->pc, &pc);
    if (r.st == SPS_OK) {
        sps_solver_set_rtol(s, 1e-10);
        if (maxit > 0) sps_solver_set_maxit(s, maxit);
        sps_solver_set_history(s, 1);
        r.st = sps_solve(s, op, pc, b, r.x, &r.in);
    }
    if (r.st == SPS_OK && r.in.history_len > 0) {
        r.hist = calloc((size_t)r.in.history_len, sizeof *r.hist);
        memcpy(r.hist, r.in.history, (size_t)r.in.history_len * sizeof *r.hist);
    }
    if (r.st == SPS_OK && r.in.engine) snprintf(r.engine, sizeof r.engine, "%s", r.in.engine);
    sps_precond_destroy(pc);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    return r;
}

static void result_free(result *r) { free(r->x), free(r->hist); }

/* Both solved, and bitwise the same reason, iterations, x and history. */
static int same(const result *a, const result *b, int n)
{
    return a->st == SPS_OK && b->st == SPS_OK && a->in.reason == b->in.reason &&
           a->in.iterations == b->in.iterations && memcmp(a->x, b->x, (size_t)n * sizeof *a->x) == 0 &&
           a->hist && b->hist && a->in.history_len == b->in.history_len &&
           memcmp(a->hist, b->hist, (size_t)a->in.history_len * sizeof *a->hist) == 0;
}

/* A device solve g of `what` on ctx: 1 when it ran; -1 when dia refused the
 * matrix (dia: the job's backend is dia; too many diagonals: a SKIP line);
 * 0 when it failed (a failed check). g is freed unless it ran. */
static int job_ran(sps_context *ctx, result *g, const char *what, int dia)
{
    if (g->st == SPS_ERR_UNSUPPORTED && dia) {
        t_skip(what, "%s", sps_last_error(ctx));
        result_free(g);
        return -1;
    }
    if (!T_STATUS(ctx, g->st, "%s: solve", what)) {
        result_free(g);
        return 0;
    }
    return 1;
}

/* A device GMRES solve g against the host driver's ref (n rows): the same
 * reason, iterations within 5% (at least 2), x within 1e-6 relative of the
 * host's and a true relative residual <= 1e-9 when converged, the history
 * consistent (its length and ends, its first 5 steps within 1e-8 of the
 * host's, relative to ||r0||). inline: test_engine_gpu.c does not call it. */
static inline void vs_host_checks(const char *what, const result *g, const result *ref, int n)
{
    int64_t di = g->in.iterations - ref->in.iterations;
    int64_t tol = ref->in.iterations * 5 / 100 > 2 ? ref->in.iterations * 5 / 100 : 2;
    T_OK(g->in.reason == ref->in.reason, "%s: reason %s (host %s)", what, sps_reason_str(g->in.reason),
         sps_reason_str(ref->in.reason));
    T_OK(llabs((long long)di) <= tol, "%s: %lld iterations, host %lld (within 5%%)", what,
         (long long)g->in.iterations, (long long)ref->in.iterations);
    if (ref->in.reason > 0) {
        double e = t_rel_diff(g->x, ref->x, n);
        T_OK(e <= 1e-6 && g->in.true_rel_rnorm <= 1e-9, "%s: x within %.1e of the host's, true relres %.1e",
             what, e, g->in.true_rel_rnorm);
    }
    int hok = g->hist && g->in.history_len == g->in.iterations + 1 && g->hist[0] == g->in.r0norm &&
              g->hist[g->in.iterations] == g->in.rnorm && ref->hist;
    double hworst = 0;
    for (int64_t i = 1; hok && i <= 5 && i <= g->in.iterations && i <= ref->in.iterations; i++) {
        double d = fabs(g->hist[i] - ref->hist[i]) / ref->hist[0];
        hworst = d > hworst ? d : hworst;
    }
    T_OK(hok && hworst <= 1e-8, "%s: history consistent (first steps within %.1e of the host's)", what, hworst);
}

/* n deterministic values in [-1, 1) (seed 11). */
static double *rhs(int n)
{
    double *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    uint64_t seed = 11;
    for (int i = 0; i < n; i++) b[i] = t_rand(&seed);
    return b;
}

#endif /* SPS_TEST_ENGINE_JOBS_H */
