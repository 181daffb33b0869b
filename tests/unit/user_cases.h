/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/user_cases.h: user operators and preconditioners
 * (sps_operator_create_user, sps_precond_create_user) on one context, shared
 * by tests/unit/test_user.c (host) and tests/gpu/test_user_gpu.c (GPU).
 *
 * The callbacks wrap a library operator and a library preconditioner, so they
 * take the context's pointers (device pointers on a GPU) without a kernel of
 * their own; a solve through the wrappers must then give what the library
 * objects give directly. Also the other embedding calls of issue 16 that
 * must behave the same on both paths: the stop monitor
 * (sps_solver_set_monitor_stop) and the stagnation switch
 * (sps_solver_set_stagnation). */
#ifndef SPS_TEST_USER_CASES_H
#define SPS_TEST_USER_CASES_H

#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct uc_wrap {
    sps_operator *op;
    sps_precond *pc;
    int calls;
    int fail_at; /* > 0: the callback returns 7 at this call */
} uc_wrap;

static int uc_spmv(void *user, double alpha, const double *x, double beta, double *y)
{
    uc_wrap *w = user;
    if (++w->calls == w->fail_at) return 7;
    return sps_operator_apply(w->op, alpha, x, beta, y) == SPS_OK ? 0 : 1;
}

static int uc_prec(void *user, const double *r, double *z)
{
    uc_wrap *w = user;
    w->calls++;
    return sps_precond_apply(w->pc, r, z) == SPS_OK ? 0 : 1;
}

typedef struct uc_run {
    sps_solve_info info;
    sps_status st;
    double *x;
} uc_run;

/* Solve with op and pc (either may be a user one); b = A*ones on the host. */
static uc_run uc_solve(sps_context *ctx, const sps_matrix *A, sps_operator *op, sps_precond *pc,
                       sps_method m)
{
    uc_run r;
    memset(&r, 0, sizeof r);
    sps_idx n = sps_matrix_rows(A);
    double *ones = malloc((size_t)n * sizeof *ones), *b = malloc((size_t)n * sizeof *b);
    r.x = calloc((size_t)n, sizeof *r.x);
    for (sps_idx i = 0; i < n; i++) ones[i] = 1.0;
    sps_matrix_spmv_host(A, 1.0, ones, 0.0, b);
    sps_solver *s = NULL;
    r.st = sps_solver_create(ctx, &s);
    if (r.st == SPS_OK) r.st = sps_solver_set_method(s, m);
    if (r.st == SPS_OK) r.st = sps_solver_set_rtol(s, 1e-10);
    if (r.st == SPS_OK) r.st = sps_solver_set_restart(s, 40);
    /* classic: a user operator has no device rows or fused product, so the
     * engine auto would pick for the built-in one (onekernel, fused) sums in
     * another order; the comparison is of the operators, on one engine */
    if (r.st == SPS_OK) r.st = sps_solver_set_engine(s, "classic");
    if (r.st == SPS_OK) r.st = sps_solve(s, op, pc, b, r.x, &r.info);
    sps_solver_destroy(s);
    free(ones);
    free(b);
    return r;
}

static double uc_max_diff(const double *a, const double *b, sps_idx n)
{
    double d = 0;
    for (sps_idx i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

/* The user operator wrapping op gives the same solve, bitwise. */
static void uc_same_solve(sps_context *ctx, const char *where, const char *gen, sps_method m)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL, *uop = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, gen, &A), "%s: generate %s", where, gen)) return;
    sps_idx n = sps_matrix_rows(A);
    uc_wrap w = {0};
    T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "%s: operator", where);
    w.op = op;
    T_STATUS(ctx, sps_operator_create_user(ctx, n, n, uc_spmv, &w, &uop), "%s: user operator", where);
    if (op && uop) {
        sps_operator_info oi;
        sps_operator_get_info(uop, &oi);
        T_OK(!strcmp(oi.backend, "user") && oi.rows == n && oi.on_gpu == sps_context_on_gpu(ctx),
             "%s: user operator info (backend %s, rows %d)", where, oi.backend, oi.rows);
        uc_run a = uc_solve(ctx, A, op, NULL, m), b = uc_solve(ctx, A, uop, NULL, m);
        T_OK(a.st == SPS_OK && b.st == SPS_OK && a.info.reason > 0, "%s %s %s: both solves converge (%s)",
             where, gen, sps_method_name(m), sps_reason_str(b.info.reason));
        T_OK(a.info.iterations == b.info.iterations && b.info.reason == a.info.reason,
             "%s %s: user operator: same iterations (%lld vs %lld)", where, gen,
             (long long)b.info.iterations, (long long)a.info.iterations);
        T_OK(memcmp(a.x, b.x, (size_t)n * sizeof *a.x) == 0, "%s %s: user operator: bitwise the same x",
             where, gen);
        T_OK(w.calls == (int)b.info.spmvs, "%s %s: the callback ran once per SpMV (%d calls, %lld SpMVs)",
             where, gen, w.calls, (long long)b.info.spmvs);
        free(a.x);
        free(b.x);
    }
    sps_operator_destroy(uop);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* A user preconditioner wrapping jacobi: the same solve as jacobi itself. */
static void uc_same_precond(sps_context *ctx, const char *where)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_precond *jac = NULL, *upc = NULL, *upc_ns = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "convdiff2d:33,20", &A), "%s: generate", where)) return;
    sps_idx n = sps_matrix_rows(A);
    uc_wrap w = {0};
    T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "%s: operator", where);
    T_STATUS(ctx, sps_precond_create(ctx, A, "jacobi", &jac), "%s: jacobi", where);
    w.pc = jac;
    T_STATUS(ctx, sps_precond_create_user(ctx, n, uc_prec, &w, 1, &upc), "%s: user pc", where);
    T_STATUS(ctx, sps_precond_create_user(ctx, n, uc_prec, &w, 0, &upc_ns), "%s: user pc (general)", where);
    T_OK(upc && upc_ns && sps_precond_symmetric(upc) == 1 && sps_precond_symmetric(upc_ns) == 0 &&
             !strcmp(sps_precond_name(upc), "user"),
         "%s: user pc: symmetric as declared, named user", where);
    if (op && jac && upc_ns) {
        uc_run a = uc_solve(ctx, A, op, jac, SPS_GMRES), b = uc_solve(ctx, A, op, upc_ns, SPS_GMRES);
        T_OK(a.st == SPS_OK && b.st == SPS_OK && a.info.reason > 0 && b.info.reason == a.info.reason,
             "%s: user pc: gmres converges as with jacobi (%s)", where, sps_reason_str(b.info.reason));
        long long d = (long long)(a.info.iterations - b.info.iterations);
        T_OK(d >= -1 && d <= 1, "%s: user pc: iterations %lld vs jacobi's %lld", where,
             (long long)b.info.iterations, (long long)a.info.iterations);
        T_OK(uc_max_diff(a.x, b.x, n) <= 1e-8, "%s: user pc: same solution (max diff %.2e)", where,
             uc_max_diff(a.x, b.x, n));
        T_OK(w.calls > 0 && w.calls == (int)b.info.precond_applies,
             "%s: user pc: callback once per apply (%d calls, %lld applies)", where, w.calls,
             (long long)b.info.precond_applies);
        free(a.x);
        free(b.x);
    }
    sps_precond_destroy(upc_ns);
    sps_precond_destroy(upc);
    sps_precond_destroy(jac);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* A callback that fails stops the solve with SPS_ERR_INVALID_ARG and says so. */
static void uc_failing(sps_context *ctx, const char *where)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL, *uop = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:31", &A), "%s: generate", where)) return;
    sps_idx n = sps_matrix_rows(A);
    uc_wrap w = {0};
    w.fail_at = 5;
    sps_operator_create(ctx, A, "csr-vector", NULL, &op);
    w.op = op;
    sps_operator_create_user(ctx, n, n, uc_spmv, &w, &uop);
    if (op && uop) {
        uc_run r = uc_solve(ctx, A, uop, NULL, SPS_CG);
        T_OK(r.st == SPS_ERR_INVALID_ARG && strstr(sps_last_error(ctx), "callback returned 7"),
             "%s: a failing callback stops the solve (%s: %s)", where, sps_strerror(r.st),
             sps_last_error(ctx));
        free(r.x);
    }
    sps_operator_destroy(uop);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* Cheby applies A through the user operator given to sps_precond_create_ex. */
static void uc_cheby(sps_context *ctx, const char *where)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL, *uop = NULL;
    sps_precond *pc = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:33", &A), "%s: generate", where)) return;
    sps_idx n = sps_matrix_rows(A);
    uc_wrap w = {0};
    sps_operator_create(ctx, A, "csr-vector", NULL, &op);
    w.op = op;
    sps_operator_create_user(ctx, n, n, uc_spmv, &w, &uop);
    T_STATUS(ctx, sps_precond_create_ex(ctx, A, uop, "cheby", &pc), "%s: cheby over a user operator", where);
    if (pc) {
        int setup_calls = w.calls;
        uc_run r = uc_solve(ctx, A, uop, pc, SPS_CG);
        T_OK(r.st == SPS_OK && r.info.reason > 0 && setup_calls > 0 && w.calls > setup_calls + r.info.spmvs,
             "%s: cg+cheby through the user operator converges (%s, %d setup calls, %d in all)", where,
             sps_reason_str(r.info.reason), setup_calls, w.calls);
        free(r.x);
    }
    sps_precond_destroy(pc);
    sps_operator_destroy(uop);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void uc_args(sps_context *ctx, const char *where)
{
    sps_operator *op = (sps_operator *)1;
    sps_precond *pc = (sps_precond *)1;
    T_OK(sps_operator_create_user(ctx, 4, 4, NULL, NULL, &op) == SPS_ERR_INVALID_ARG && op == NULL,
         "%s: user operator without a callback is refused", where);
    T_OK(sps_operator_create_user(ctx, -1, 4, uc_spmv, NULL, &op) == SPS_ERR_INVALID_ARG,
         "%s: user operator with a negative size is refused", where);
    T_OK(sps_precond_create_user(ctx, 4, NULL, NULL, 0, &pc) == SPS_ERR_INVALID_ARG && pc == NULL,
         "%s: user pc without a callback is refused", where);
    T_OK(sps_precond_create_user(ctx, -2, uc_prec, NULL, 0, &pc) == SPS_ERR_INVALID_ARG,
         "%s: user pc with a negative size is refused", where);
}

typedef struct uc_stop {
    int64_t at, calls, last;
} uc_stop;

static int uc_stop_fn(void *user, int64_t it, double rnorm)
{
    uc_stop *u = user;
    (void)rnorm;
    u->calls++;
    u->last = it;
    return it >= u->at;
}

/* A stop monitor ends the solve at the first check at or past `at`, with
 * SPS_DIVERGED_USER, and x is that check's iterate: ||b - A x|| recomputed
 * on the host is the info's true residual (GMRES stops mid-cycle). */
static void uc_monitor_stop(sps_context *ctx, const char *where, sps_method m)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "convdiff2d:33,5", &A), "%s: generate", where)) return;
    sps_idx n = sps_matrix_rows(A);
    sps_operator_create(ctx, A, "csr-vector", NULL, &op);
    sps_solver_create(ctx, &s);
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    double *r = malloc((size_t)n * sizeof *r);
    for (sps_idx i = 0; i < n; i++) b[i] = 1.0 + (double)(i % 7);
    uc_stop u = {23, 0, -1};
    sps_solve_info in;
    memset(&in, 0, sizeof in);
    sps_solver_set_method(s, m);
    sps_solver_set_restart(s, 50);
    sps_solver_set_monitor_stop(s, uc_stop_fn, &u);
    sps_status st = op && s ? sps_solve(s, op, NULL, b, x, &in) : SPS_ERR_INTERNAL;
    T_OK(st == SPS_OK && in.reason == SPS_DIVERGED_USER && in.iterations == u.last && u.last >= 23 &&
             in.iterations < 200,
         "%s %s: the stop monitor ends the solve (%s after %lld iterations, asked at %lld)", where,
         sps_method_name(m), sps_reason_str(in.reason), (long long)in.iterations, (long long)u.last);
    memcpy(r, b, (size_t)n * sizeof *r);
    sps_matrix_spmv_host(A, -1.0, x, 1.0, r);
    double rn = 0;
    for (sps_idx i = 0; i < n; i++) rn += r[i] * r[i];
    rn = sqrt(rn);
    T_OK(in.true_rnorm > 0 && fabs(rn - in.true_rnorm) <= 1e-9 * in.bnorm && in.true_rel_rnorm < 1.0,
         "%s %s: x is the stopped iterate (||b - Ax|| %.6e, info %.6e)", where, sps_method_name(m), rn,
         in.true_rnorm);
    sps_solver_set_monitor_stop(s, NULL, NULL);
    memset(x, 0, (size_t)n * sizeof *x);
    st = sps_solve(s, op, NULL, b, x, &in);
    T_OK(st == SPS_OK && in.reason > 0, "%s %s: removed, the solve runs to convergence (%s)", where,
         sps_method_name(m), sps_reason_str(in.reason));
    free(b);
    free(x);
    free(r);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* sps_solver_set_stagnation(s, 0): GMRES(30) on dw2048 no longer stops for
 * stagnation (on the host, it does with the stop on) and gets further. */
static void uc_stagnation(sps_context *ctx, const char *where)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    if (sps_matrix_read(ctx, t_data("real/dw2048.mtx.gz"), &A) != SPS_OK) {
        t_skip("stagnation off", "dw2048 not bundled: %s", sps_last_error(ctx));
        return;
    }
    sps_operator_create(ctx, A, "csr-vector", NULL, &op);
    uc_run r[2];
    for (int off = 0; off < 2; off++) {
        sps_solver *s = NULL;
        sps_idx n = sps_matrix_rows(A);
        double *b = malloc((size_t)n * sizeof *b);
        r[off].x = calloc((size_t)n, sizeof *r[off].x);
        for (sps_idx i = 0; i < n; i++) b[i] = 1.0;
        sps_solver_create(ctx, &s);
        sps_solver_set_method(s, SPS_GMRES);
        if (off) sps_solver_set_stagnation(s, 0);
        r[off].st = op ? sps_solve(s, op, NULL, b, r[off].x, &r[off].info) : SPS_ERR_INTERNAL;
        sps_solver_destroy(s);
        free(b);
        free(r[off].x);
    }
    if (!sps_context_on_gpu(ctx))
        T_OK(r[0].st == SPS_OK && r[0].info.reason == SPS_DIVERGED_STAGNATION,
             "%s: dw2048 gmres(30) stops for stagnation by default (%s)", where, sps_reason_str(r[0].info.reason));
    T_OK(r[1].st == SPS_OK && r[1].info.reason != SPS_DIVERGED_STAGNATION &&
             (r[0].info.reason != SPS_DIVERGED_STAGNATION ||
              (r[1].info.iterations > r[0].info.iterations &&
               r[1].info.true_rel_rnorm < r[0].info.true_rel_rnorm)),
         "%s: stagnation off: %s at %.3e after %lld (on: %s at %.3e after %lld)", where,
         sps_reason_str(r[1].info.reason), r[1].info.true_rel_rnorm, (long long)r[1].info.iterations,
         sps_reason_str(r[0].info.reason), r[0].info.true_rel_rnorm, (long long)r[0].info.iterations);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void user_cases(sps_context *ctx, const char *where)
{
    uc_stagnation(ctx, where);
    uc_monitor_stop(ctx, where, SPS_GMRES);
    uc_monitor_stop(ctx, where, SPS_BICGSTAB);
    uc_args(ctx, where);
    uc_same_solve(ctx, where, "poisson2d:32", SPS_CG);
    uc_same_solve(ctx, where, "convdiff2d:33,10", SPS_GMRES);
    uc_same_solve(ctx, where, "convdiff2d:31,10", SPS_BICGSTAB);
    uc_same_precond(ctx, where);
    uc_failing(ctx, where);
    uc_cheby(ctx, where);
}

#endif
