/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_solvers_api.c: the solver API's edges: names,
 * setters, argument checks, empty systems, the dense oracle, allocation
 * failures */
#include "check.h"
#include "internal.h"
#include "precond/precond.h"
#include "spmv/backend.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static sps_context *ctx;

/* Tridiagonal [-1 2.5 -1] of size n. */
static sps_matrix *tridiag(int n)
{
    sps_idx r[3 * 64], c[3 * 64];
    double v[3 * 64];
    int k = 0;
    for (int i = 0; i < n && i < 64; i++) {
        r[k] = i, c[k] = i, v[k++] = 2.5;
        if (i > 0) r[k] = i, c[k] = i - 1, v[k++] = -1;
        if (i < n - 1) r[k] = i, c[k] = i + 1, v[k++] = -1;
    }
    sps_matrix *A = NULL;
    T_STATUS(ctx, sps_matrix_create_coo(ctx, n, n, k, r, c, v, &A), "tridiag(%d)", n);
    return A;
}

static void test_names(void)
{
    sps_method m;
    for (int i = 0; i < 3; i++) {
        const char *name = sps_method_name((sps_method)i);
        T_OK(sps_method_from_name(name, &m) == SPS_OK && m == (sps_method)i, "method name '%s' round-trips",
             name);
    }
    T_OK(sps_method_from_name("minres", &m) == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(NULL), "minres") != NULL,
         "unknown method rejected, named: %s", sps_last_error(NULL));
    T_OK(sps_method_from_name(NULL, &m) == SPS_ERR_INVALID_ARG, "NULL method name rejected");
}

static void test_setters(void)
{
    sps_solver *s = NULL;
    T_OK(sps_solver_create(NULL, &s) == SPS_ERR_INVALID_ARG, "solver without a context rejected");
    T_OK(sps_solver_create(ctx, NULL) == SPS_ERR_INVALID_ARG, "NULL solver pointer rejected");
    T_STATUS(ctx, sps_solver_create(ctx, &s), "solver created");
    T_OK(sps_solver_set_rtol(s, -1) == SPS_ERR_INVALID_ARG, "rtol -1 rejected");
    T_OK(sps_solver_set_rtol(s, NAN) == SPS_ERR_INVALID_ARG, "rtol NaN rejected");
    T_OK(sps_solver_set_atol(s, INFINITY) == SPS_ERR_INVALID_ARG, "atol Inf rejected");
    T_OK(sps_solver_set_dtol(s, 0) == SPS_ERR_INVALID_ARG, "dtol 0 rejected");
    T_OK(sps_solver_set_maxit(s, -1) == SPS_ERR_INVALID_ARG, "maxit -1 rejected");
    T_OK(sps_solver_set_restart(s, 0) == SPS_ERR_INVALID_ARG, "restart 0 rejected");
    T_OK(sps_solver_set_check_interval(s, -2) == SPS_ERR_INVALID_ARG, "check interval -2 rejected");
    T_OK(sps_solver_set_method(s, (sps_method)7) == SPS_ERR_INVALID_ARG, "method 7 rejected");
    T_OK(sps_solver_set_rtol(NULL, 1e-6) == SPS_ERR_INVALID_ARG, "setter on a NULL solver rejected");
    T_OK(sps_solver_set_rtol(s, 0) == SPS_OK && sps_solver_set_atol(s, 1e-12) == SPS_OK &&
             sps_solver_set_dtol(s, 1e3) == SPS_OK && sps_solver_set_maxit(s, 0) == SPS_OK &&
             sps_solver_set_restart(s, 1) == SPS_OK && sps_solver_set_check_interval(s, 8) == SPS_OK &&
             sps_solver_set_history(s, 1) == SPS_OK && sps_solver_set_monitor(s, NULL, NULL) == SPS_OK,
         "valid settings accepted");
    sps_solver_destroy(s);
    sps_solver_destroy(NULL);
}

static void test_bad_arguments(void)
{
    sps_matrix *A = tridiag(10);
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    T_STATUS(ctx, sps_operator_create(ctx, A, "csr-scalar", NULL, &op), "operator");
    T_STATUS(ctx, sps_solver_create(ctx, &s), "solver");
    double b[11] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1}, x[11] = {0};
    sps_solve_info in;
    T_OK(sps_solve(NULL, op, NULL, b, x, &in) == SPS_ERR_INVALID_ARG, "NULL solver rejected");
    T_OK(sps_solve(s, NULL, NULL, b, x, &in) == SPS_ERR_INVALID_ARG, "NULL operator rejected");
    T_OK(sps_solve(s, op, NULL, NULL, x, &in) == SPS_ERR_INVALID_ARG, "NULL b rejected");
    T_OK(sps_solve(s, op, NULL, b, NULL, &in) == SPS_ERR_INVALID_ARG, "NULL x rejected");
    T_OK(sps_solve(s, op, NULL, b, x, NULL) == SPS_ERR_INVALID_ARG, "NULL info rejected");

    op->single = 1; /* as a single-precision operator would be */
    T_OK(sps_solve(s, op, NULL, b, x, &in) == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(ctx), "single") != NULL,
         "single-precision operator rejected: %s", sps_last_error(ctx));
    op->single = 0;

    sps_precond pc;
    memset(&pc, 0, sizeof pc);
    pc.ctx = ctx;
    pc.n = 11;
    pc.fused_diag = b;
    T_OK(sps_solve(s, op, &pc, b, x, &in) == SPS_ERR_INVALID_ARG && strstr(sps_last_error(ctx), "11"),
         "preconditioner of another size rejected: %s", sps_last_error(ctx));
    pc.n = 10;
    pc.fused_diag = NULL; /* neither fusable nor applicable */
    T_OK(sps_solve(s, op, &pc, b, x, &in) == SPS_ERR_INVALID_ARG,
         "preconditioner without apply rejected: %s", sps_last_error(ctx));

    sps_context *other = NULL;
    sps_context_create(&other, SPS_DEVICE_HOST);
    sps_solver *s2 = NULL;
    sps_solver_create(other, &s2);
    T_OK(sps_solve(s2, op, NULL, b, x, &in) == SPS_ERR_INVALID_ARG,
         "operator of another context rejected: %s", sps_last_error(other));
    sps_solver_destroy(s2);
    sps_context_destroy(other);

    /* not square */
    sps_idx r[2] = {0, 1}, c[2] = {0, 2};
    double v[2] = {1, 1};
    sps_matrix *R = NULL;
    sps_operator *opR = NULL;
    sps_matrix_create_coo(ctx, 2, 3, 2, r, c, v, &R);
    sps_operator_create(ctx, R, "csr-scalar", NULL, &opR);
    T_OK(opR && sps_solve(s, opR, NULL, b, x, &in) == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(ctx), "square"),
         "2 x 3 operator rejected: %s", sps_last_error(ctx));
    sps_operator_destroy(opR);
    sps_matrix_destroy(R);

    /* 0 x 0: nothing to do, b = 0 */
    sps_matrix *Z = NULL;
    sps_operator *opZ = NULL;
    sps_matrix_create_coo(ctx, 0, 0, 0, NULL, NULL, NULL, &Z);
    sps_operator_create(ctx, Z, "csr-scalar", NULL, &opZ);
    for (int m = 0; m < 3; m++) {
        sps_solver_set_method(s, (sps_method)m);
        sps_status st = opZ ? sps_solve(s, opZ, NULL, NULL, NULL, &in) : SPS_ERR_INTERNAL;
        T_OK(st == SPS_OK && in.reason == SPS_CONVERGED_ZERO_RHS && in.iterations == 0,
             "%s on a 0 x 0 system: zero rhs, 0 iterations", sps_method_name((sps_method)m));
    }
    sps_operator_destroy(opZ);
    sps_matrix_destroy(Z);

    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void test_dense(void)
{
    sps_idx r[4] = {0, 0, 1, 2}, c[4] = {0, 2, 1, 0};
    double v[4] = {2, 1, 3, 1}, b[3] = {5, 6, 4}, x[3] = {0};
    sps_matrix *A = NULL;
    sps_matrix_create_coo(ctx, 3, 3, 4, r, c, v, &A);
    sps_status st = sps_dense_solve(ctx, A, b, x);
    if (st == SPS_ERR_NOT_COMPILED) {
        t_skip("sps_dense_solve", "built without LAPACKE");
        sps_matrix_destroy(A);
        return;
    }
    /* [2 0 1; 0 3 0; 1 0 0] x = [5 6 4]: x = (4, 2, -3) */
    T_OK(st == SPS_OK && fabs(x[0] - 4) < 1e-14 && fabs(x[1] - 2) < 1e-14 && fabs(x[2] + 3) < 1e-14,
         "dense solve of a 3 x 3 (x = %g %g %g)", x[0], x[1], x[2]);
    sps_matrix_destroy(A);

    /* singular: the second column is zero */
    sps_idx rs[3] = {0, 1, 2}, cs[3] = {0, 0, 2};
    double vs[3] = {1, 1, 1};
    sps_matrix_create_coo(ctx, 3, 3, 3, rs, cs, vs, &A);
    st = sps_dense_solve(ctx, A, b, x);
    T_OK(st == SPS_ERR_ZERO_PIVOT && strstr(sps_last_error(ctx), "U(2,2)") != NULL,
         "singular matrix: zero pivot named: %s", sps_last_error(ctx));
    sps_matrix_destroy(A);

    sps_matrix_create_coo(ctx, 2, 3, 0, NULL, NULL, NULL, &A);
    T_OK(sps_dense_solve(ctx, A, b, x) == SPS_ERR_INVALID_ARG, "dense solve of a 2 x 3 rejected");
    sps_matrix_destroy(A);
    sps_matrix_create_coo(ctx, 20001, 20001, 0, NULL, NULL, NULL, &A);
    T_OK(sps_dense_solve(ctx, A, b, x) == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(ctx), "20000") != NULL,
         "dense solve over n = 20000 rejected: %s", sps_last_error(ctx));
    sps_matrix_destroy(A);
}

/* Every allocation of a solve fails in turn: the solve reports it, leaves
 * nothing behind, and the next solve is right. */
static void test_alloc_failures(void)
{
    sps_matrix *A = tridiag(40);
    sps_operator *op = NULL;
    sps_operator_create(ctx, A, "csr-scalar", NULL, &op);
    double b[40], x[40];
    int nomem = 0, other = 0;
    for (int m = 0; m < 3; m++) {
        for (long k = 1; k < 12; k++) {
            sps_solver *s = NULL;
            sps_status st = sps_solver_create(ctx, &s);
            if (st != SPS_OK) continue;
            sps_solver_set_method(s, (sps_method)m);
            sps_solver_set_history(s, 1);
            for (int i = 0; i < 40; i++) b[i] = 1, x[i] = 0;
            sps_solve_info in;
            sps__fail_alloc_after(k);
            st = sps_solve(s, op, NULL, b, x, &in);
            sps__fail_alloc_after(0);
            if (st == SPS_ERR_NO_MEMORY) nomem++;
            else if (st != SPS_OK) other++;
            for (int i = 0; i < 40; i++) x[i] = 0;
            st = sps_solve(s, op, NULL, b, x, &in);
            if (st != SPS_OK || in.reason != SPS_CONVERGED_RTOL) other++;
            sps_solver_destroy(s);
        }
    }
    T_OK(nomem >= 6 && other == 0,
         "allocation failures reported as out of memory (%d), then the next solve is right (%d bad)",
         nomem, other);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* ---- issue 17: no wrong answer reported as success --------------------- */

/* One solve through the public API (csr-scalar operator). */
static sps_status solve_api(sps_matrix *A, sps_method m, double rtol, const double *b, double *x,
                            sps_solve_info *in)
{
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    sps_status st = sps_operator_create(ctx, A, "csr-scalar", NULL, &op);
    if (st == SPS_OK) st = sps_solver_create(ctx, &s);
    if (st == SPS_OK) st = sps_solver_set_method(s, m);
    if (st == SPS_OK) st = sps_solver_set_rtol(s, rtol);
    if (st == SPS_OK) st = sps_solve(s, op, NULL, b, x, in);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    return st;
}

static int finite_vec(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* The 4 x 4 system of issue 17 (row 4 and column 4 empty), b = ones:
 * inconsistent. GMRES's recurrence converges after 3 iterations with a true
 * relative residual of 0.75; BiCGSTAB's x[3] grows until it overflows. */
static void test_inconsistent(void)
{
    sps_idx r[] = {0, 0, 1, 2, 2}, c[] = {0, 1, 0, 2, 1};
    double v[] = {4, -1, -1, 4, -1}, b[4] = {1, 1, 1, 1};
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_create_coo(ctx, 4, 4, 5, r, c, v, &A), "issue 17 4x4")) return;
    for (int k = 0; k < 3; k++) {
        sps_method m = k == 0 ? SPS_GMRES : k == 1 ? SPS_BICGSTAB : SPS_CG;
        double x[4] = {0, 0, 0, 0};
        sps_solve_info in;
        if (!T_STATUS(ctx, solve_api(A, m, 1e-8, b, x, &in), "4x4 %s", sps_method_name(m))) continue;
        T_OK(in.reason < 0, "4x4 %s: not converged (%s, true relative residual %.2e)",
             sps_method_name(m), sps_reason_str(in.reason), in.true_rel_rnorm);
        T_OK(in.true_rel_rnorm > 0.5, "4x4 %s: the true residual is reported (%.2e)", sps_method_name(m),
             in.true_rel_rnorm);
        T_OK(finite_vec(x, 4), "4x4 %s: x is finite (x[3] = %g)", sps_method_name(m), x[3]);
        if (m == SPS_BICGSTAB)
            T_OK(in.reason == SPS_DIVERGED_BREAKDOWN, "4x4 bicgstab: breakdown (got %s)",
                 sps_reason_str(in.reason));
        if (m == SPS_GMRES)
            T_OK(in.reason == SPS_DIVERGED_TRUE_RESIDUAL || in.reason == SPS_DIVERGED_BREAKDOWN,
                 "4x4 gmres: true residual or breakdown (got %s, %lld replacements)",
                 sps_reason_str(in.reason), (long long)in.replacements);
    }
    T_OK(strcmp(sps_reason_str(SPS_DIVERGED_TRUE_RESIDUAL), "unknown reason") != 0,
         "SPS_DIVERGED_TRUE_RESIDUAL has a name: %s", sps_reason_str(SPS_DIVERGED_TRUE_RESIDUAL));
    sps_matrix_destroy(A);
}

/* b = v * ones on poisson2d:10 for tiny and huge v: each converges like
 * v = 1, x scales with v; b = 2^k ones gives 2^k x bitwise (the rescaling is
 * exact). Only b = 0 is a zero right-hand side. */
static void test_scaled_rhs(void)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:10", &A), "poisson2d:10")) return;
    enum { N = 100 };
    const double vals[] = {1e-200, 1e160, 1e-155, 0x1p-700, 0x1p+700, 1e-300, 1e300, 0x1p-1070};
    for (int k = 0; k < 3; k++) {
        sps_method m = k == 0 ? SPS_CG : k == 1 ? SPS_BICGSTAB : SPS_GMRES;
        double b1[N], x1[N] = {0};
        sps_solve_info i1;
        for (int i = 0; i < N; i++) b1[i] = 1.0;
        if (!T_STATUS(ctx, solve_api(A, m, 1e-8, b1, x1, &i1), "%s b = 1", sps_method_name(m))) continue;
        for (size_t c = 0; c < sizeof vals / sizeof vals[0]; c++) {
            double v = vals[c], b[N], x[N] = {0};
            sps_solve_info in;
            for (int i = 0; i < N; i++) b[i] = v;
            if (!T_STATUS(ctx, solve_api(A, m, 1e-8, b, x, &in), "%s b = %g", sps_method_name(m), v))
                continue;
            /* x against v x(b = 1), relative, but a subnormal x (b = 2^-1070)
             * only has its few bits: there the bound is 2 units of 2^-1074. */
            double err = 0;
            for (int i = 0; i < N; i++) {
                double want = v * x1[i], d = fabs(x[i] - want);
                if (d > 2 * 0x1p-1074) err = fmax(err, d / fabs(want));
            }
            T_OK(in.reason == SPS_CONVERGED_RTOL && in.true_rel_rnorm <= 1e-8 && err <= 1e-6 &&
                     fabs(in.bnorm / (10 * v) - 1) <= 1e-12,
                 "%s b = %g: %s, ||b|| %.3e, true relative %.2e, x/b against b = 1: %.1e",
                 sps_method_name(m), v, sps_reason_str(in.reason), in.bnorm, in.true_rel_rnorm, err);
            int pow2 = v == 0x1p-700 || v == 0x1p+700;
            int same = in.iterations == i1.iterations;
            for (int i = 0; pow2 && i < N; i++) same &= x[i] == v * x1[i];
            if (pow2)
                T_OK(same, "%s b = %a: 2^k x bitwise, %lld iterations as for b = 1", sps_method_name(m),
                     v, (long long)in.iterations);
        }
        double bz[N] = {0}, xz[N];
        sps_solve_info iz;
        for (int i = 0; i < N; i++) xz[i] = 1.0;
        if (T_STATUS(ctx, solve_api(A, m, 1e-8, bz, xz, &iz), "%s b = 0", sps_method_name(m)))
            T_OK(iz.reason == SPS_CONVERGED_ZERO_RHS && xz[0] == 0.0, "%s b = 0: zero right-hand side",
                 sps_method_name(m));
    }
    sps_matrix_destroy(A);
}

/* sps_solve(..., b, b, ...): b is copied first; the result is the solve
 * from x0 = b, bitwise. */
static void test_alias(void)
{
    sps_matrix *A = tridiag(40);
    if (!A) return;
    for (int k = 0; k < 3; k++) {
        sps_method m = k == 0 ? SPS_CG : k == 1 ? SPS_BICGSTAB : SPS_GMRES;
        double b[40], x[40], bx[40];
        for (int i = 0; i < 40; i++) b[i] = bx[i] = x[i] = 1.0 + 0.01 * i;
        sps_solve_info i1, i2;
        if (!T_STATUS(ctx, solve_api(A, m, 1e-10, b, x, &i1), "%s x0 = b", sps_method_name(m))) continue;
        if (!T_STATUS(ctx, solve_api(A, m, 1e-10, bx, bx, &i2), "%s x aliases b", sps_method_name(m)))
            continue;
        T_OK(i2.reason == SPS_CONVERGED_RTOL && i2.iterations == i1.iterations &&
                 memcmp(x, bx, sizeof x) == 0 && i2.true_rel_rnorm <= 1e-10,
             "%s x aliasing b: the same solve as x0 = b (%s, %lld iterations)", sps_method_name(m),
             sps_reason_str(i2.reason), (long long)i2.iterations);
    }
    sps_matrix_destroy(A);
}

/* The registry: the listing, names with parameters, and "gmres:restart=m"
 * solving bitwise as sps_solver_set_restart(m). */
static void test_registry(void)
{
    const char *name = NULL, *summary = NULL;
    unsigned caps = 0;
    int count = 0, seen = 0;
    while (sps_solver_method(count, &name, &caps, &summary) == SPS_OK) {
        sps_method m;
        if (sps_method_from_name(name, &m) == SPS_OK) seen |= 1 << (int)m;
        T_OK(summary && *summary, "method %d '%s' has a summary", count, name);
        if (!strcmp(name, "cg")) T_OK(caps & SPS_METHOD_SPD, "cg says it needs SPD");
        if (!strcmp(name, "gmres")) T_OK(caps & SPS_METHOD_RESTART, "gmres says it restarts");
        count++;
    }
    T_OK(count >= 4 && seen == 15, "%d methods listed, cg, bicgstab, gmres and idr among them", count);
    T_OK(sps_solver_method(-1, &name, NULL, NULL) == SPS_ERR_INVALID_ARG, "method -1 rejected");
    sps_solver *s = NULL, *t = NULL;
    T_STATUS(ctx, sps_solver_create(ctx, &s), "solver");
    T_STATUS(ctx, sps_solver_create(ctx, &t), "solver");
    T_OK(sps_solver_set_method_name(s, "minres") == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(ctx), "gmres") != NULL,
         "unknown method name rejected, the known ones listed: %s", sps_last_error(ctx));
    T_OK(sps_solver_set_method_name(s, "gmres:restrat=5") == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(ctx), "restrat") != NULL,
         "unknown gmres parameter rejected: %s", sps_last_error(ctx));
    T_OK(sps_solver_set_method_name(s, "gmres:restart=0") == SPS_ERR_INVALID_ARG &&
             sps_solver_set_method_name(s, "gmres:restart=x") == SPS_ERR_INVALID_ARG,
         "restart 0 and x rejected");
    T_OK(sps_solver_set_method_name(s, "cg:restart=5") == SPS_ERR_INVALID_ARG,
         "cg takes no parameters");
    sps_matrix *A = tridiag(40);
    sps_operator *op = NULL;
    if (A && T_STATUS(ctx, sps_operator_create(ctx, A, "csr-scalar", NULL, &op), "operator") &&
        T_STATUS(ctx, sps_solver_set_method_name(s, "gmres:restart=5"), "gmres:restart=5") &&
        T_STATUS(ctx, sps_solver_set_method(t, SPS_GMRES), "gmres") &&
        T_STATUS(ctx, sps_solver_set_restart(t, 5), "restart 5")) {
        double b[40], x1[40] = {0}, x2[40] = {0};
        for (int i = 0; i < 40; i++) b[i] = 1.0 + 0.01 * i;
        sps_solve_info i1, i2;
        T_STATUS(ctx, sps_solve(s, op, NULL, b, x1, &i1), "solve by name");
        T_STATUS(ctx, sps_solve(t, op, NULL, b, x2, &i2), "solve by setters");
        T_OK(i1.reason == SPS_CONVERGED_RTOL && i1.iterations == i2.iterations && i1.restarts > 0 &&
                 i1.restarts == i2.restarts && memcmp(x1, x2, sizeof x1) == 0,
             "gmres:restart=5 = set_restart(5): %lld iterations, %lld restarts, x bitwise equal",
             (long long)i1.iterations, (long long)i1.restarts);
    }
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_solver_destroy(s);
    sps_solver_destroy(t);
}

T_MAIN_HOST(ctx, test_names, test_setters, test_bad_arguments, test_dense, test_alloc_failures, test_inconsistent, test_scaled_rhs, test_alias, test_registry)
