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
    pc.kind = SPS_PC_JACOBI;
    pc.n = 11;
    pc.fused_diag = b;
    T_OK(sps_solve(s, op, &pc, b, x, &in) == SPS_ERR_INVALID_ARG && strstr(sps_last_error(ctx), "11"),
         "preconditioner of another size rejected: %s", sps_last_error(ctx));
    pc.n = 10;
    pc.kind = SPS_PC_ILU0;
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

int main(void)
{
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) {
        T_FAIL("host context", "%s", sps_last_error(NULL));
        return t_done();
    }
    test_names();
    test_setters();
    test_bad_arguments();
    test_dense();
    test_alloc_failures();
    sps_context_destroy(ctx);
    return t_done();
}
