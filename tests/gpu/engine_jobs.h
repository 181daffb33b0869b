/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/engine_jobs.h: one solve of a (backend, method,
 * preconditioner, engine) job on a context, and the comparisons of its
 * result, shared by tests/gpu/test_engine_gpu.c and test_gmres_onek_gpu.c. */
#ifndef SPS_TEST_ENGINE_JOBS_H
#define SPS_TEST_ENGINE_JOBS_H

#include "check.h"

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

/* n deterministic values in [-1, 1) (seed 11). */
static double *rhs(int n)
{
    double *b = malloc((size_t)(n ? n : 1) * sizeof *b);
    uint64_t seed = 11;
    for (int i = 0; i < n; i++) b[i] = t_rand(&seed);
    return b;
}

#endif /* SPS_TEST_ENGINE_JOBS_H */
