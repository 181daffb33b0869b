/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_idr.c: IDR(s) on the host: against dense solves
 * (LAPACKE) and the known solution, s = 1..4 with none, jacobi and ilu0, n =
 * 1, 31, 32, 33; its breakdowns (A U = 0: M_kk = 0; a skew-symmetric A: t'r
 * = 0, omega = 0); its parameter; repeatability; a shared matrix where
 * unpreconditioned BiCGSTAB is erratic */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

typedef struct out {
    sps_solve_info in;
    double *x;
    int ok;
} out;

static out run(const sps_matrix *A, const char *method, const char *pcs, const double *b)
{
    out o;
    memset(&o, 0, sizeof o);
    sps_idx n = sps_matrix_rows(A);
    o.x = calloc((size_t)n + 1, sizeof(double));
    sps_operator *op = NULL;
    sps_precond *pc = NULL;
    sps_solver *s = NULL;
    o.ok = T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "operator") &&
           T_STATUS(ctx, sps_precond_create_ex(ctx, A, op, pcs, &pc), "precond %s", pcs) &&
           T_STATUS(ctx, sps_solver_create(ctx, &s), "solver") &&
           T_STATUS(ctx, sps_solver_set_method_name(s, method), "method %s", method) &&
           T_STATUS(ctx, sps_solve(s, op, pc, b, o.x, &o.in), "solve %s+%s", method, pcs);
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    return o;
}

/* A nonsymmetric, diagonally dominant n x n matrix with random entries. */
static sps_matrix *random_nonsym(sps_idx n, uint64_t seed)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        double sum = 0;
        for (int q = 0; q < 4; q++) {
            sps_idx j = (sps_idx)((t_rand(&seed) + 1.0) * 0.5 * n) % n;
            double v = t_rand(&seed);
            if (j == i) continue;
            t_trip_add(&t, i, j, v);
            sum += fabs(v);
        }
        t_trip_add(&t, i, i, 1.5 * sum + 0.5 + (i % 3));
    }
    return t_trip_matrix(ctx, n, n, &t);
}

static void test_dense(void)
{
    static const sps_idx sizes[] = {1, 2, 3, 31, 32, 33};
    static const char *const methods[] = {"idr", "idr:s=1", "idr:s=2", "idr:s=3"};
    static const char *const pcs[] = {"none", "jacobi", "ilu0"};
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        sps_idx n = sizes[si];
        sps_matrix *A = random_nonsym(n, 40 + (uint64_t)n);
        if (!A) continue;
        double *b = malloc(sizeof(double) * (size_t)n), *xd = malloc(sizeof(double) * (size_t)n);
        uint64_t seed = 7;
        for (sps_idx i = 0; i < n; i++) b[i] = t_rand(&seed);
        sps_status ds = sps_dense_solve(ctx, A, b, xd);
        for (size_t m = 0; m < sizeof methods / sizeof *methods; m++)
            for (size_t p = 0; p < sizeof pcs / sizeof *pcs; p++) {
                out o = run(A, methods[m], pcs[p], b);
                if (o.ok) {
                    T_OK(o.in.reason > 0 && o.in.true_rel_rnorm <= 1e-8,
                         "n=%d %s+%s: %s after %lld, true relres %.2e", n, methods[m], pcs[p],
                         sps_reason_str(o.in.reason), (long long)o.in.iterations, o.in.true_rel_rnorm);
                    if (ds == SPS_ERR_NOT_COMPILED) {
                        t_skip("idr dense", "n=%d %s+%s: dgesv comparison: built without LAPACKE", n,
                               methods[m], pcs[p]);
                    } else {
                        double e = 0, xn = 1e-300;
                        for (sps_idx i = 0; i < n; i++) {
                            e = fmax(e, fabs(o.x[i] - xd[i]));
                            xn = fmax(xn, fabs(xd[i]));
                        }
                        T_OK(e / xn <= 1e-7, "n=%d %s+%s: x matches dgesv (%.2e)", n, methods[m],
                             pcs[p], e / xn);
                    }
                }
                free(o.x);
            }
        free(b), free(xd);
        sps_matrix_destroy(A);
    }
}

/* A = 0 but for one diagonal entry far from b's support: A U_0 = 0, so
 * M_00 = P_0'G_0 = 0: a breakdown, reported, x finite. */
static void test_breakdown_m(void)
{
    t_triplets t = {0};
    t_trip_add(&t, 7, 7, 1.0);
    sps_matrix *A = t_trip_matrix(ctx, 8, 8, &t);
    if (!A) return;
    double b[8] = {1, 2, 0, 0, 0, 0, 0, 0};
    out o = run(A, "idr", "none", b);
    if (o.ok) {
        int finite = 1;
        for (int i = 0; i < 8; i++) finite &= isfinite(o.x[i]);
        T_OK(o.in.reason == SPS_DIVERGED_BREAKDOWN && finite,
             "A U = 0: breakdown (M_kk = 0), x finite (%s after %lld)", sps_reason_str(o.in.reason),
             (long long)o.in.iterations);
    }
    free(o.x);
    sps_matrix_destroy(A);
}

/* Skew-symmetric A: r'A r = 0, so the reduction step's omega = t'r / t't = 0
 * (s = 1, after the first step): a breakdown. */
static void test_breakdown_omega(void)
{
    const double a[4] = {0, 1, -1, 0};
    sps_matrix *A = t_matrix_from_dense(ctx, 2, 2, a);
    if (!A) return;
    double b[2] = {1, 0.5};
    out o = run(A, "idr:s=1", "none", b);
    if (o.ok)
        T_OK(o.in.reason == SPS_DIVERGED_BREAKDOWN || (o.in.reason > 0 && o.in.true_rel_rnorm <= 1e-8),
             "skew-symmetric 2x2, s = 1: omega = 0 is a breakdown, never a false convergence (%s "
             "after %lld, relres %.2e)", sps_reason_str(o.in.reason), (long long)o.in.iterations,
             o.in.true_rel_rnorm);
    if (o.ok)
        T_OK(o.in.reason == SPS_DIVERGED_BREAKDOWN && o.in.iterations == 1,
             "skew-symmetric 2x2, s = 1: breaks down at the reduction step (iteration %lld)",
             (long long)o.in.iterations);
    free(o.x);
    sps_matrix_destroy(A);
}

static void test_params(void)
{
    sps_solver *s = NULL;
    if (!T_STATUS(ctx, sps_solver_create(ctx, &s), "solver")) return;
    T_OK(sps_solver_set_method_name(s, "idr:s=5") == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(ctx), "s must be"),
         "idr:s=5 is refused (%s)", sps_last_error(ctx));
    T_OK(sps_solver_set_method_name(s, "idr:q=1") == SPS_ERR_INVALID_ARG, "idr:q=1 is refused");
    T_OK(sps_solver_set_method_name(s, "IDR:s=2") == SPS_OK, "IDR:s=2 is accepted");
    sps_method m = SPS_CG;
    T_OK(sps_method_from_name("idr", &m) == SPS_OK && m == SPS_IDR && !strcmp(sps_method_name(m), "idr"),
         "idr is SPS_IDR");
    sps_solver_destroy(s);
}

/* convdiff2d: converged, x = ones, and two runs bitwise equal. */
static void test_known(void)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "convdiff2d:40,50", &A), "generate")) return;
    sps_idx n = sps_matrix_rows(A);
    double *ones = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    for (sps_idx i = 0; i < n; i++) ones[i] = 1.0;
    sps_matrix_spmv_host(A, 1.0, ones, 0.0, b);
    out o1 = run(A, "idr", "none", b), o2 = run(A, "idr", "none", b);
    if (o1.ok && o2.ok) {
        double e = 0;
        for (sps_idx i = 0; i < n; i++) e = fmax(e, fabs(o1.x[i] - 1.0));
        T_OK(o1.in.reason > 0 && e < 1e-5, "convdiff2d:40,50 idr: %s after %lld, max |x - 1| %.2e",
             sps_reason_str(o1.in.reason), (long long)o1.in.iterations, e);
        T_OK(!memcmp(o1.x, o2.x, sizeof(double) * (size_t)n) && o1.in.iterations == o2.in.iterations,
             "idr: two runs bitwise equal");
        T_OK(o1.in.spmvs == o1.in.iterations + 2, "idr: one SpMV per iteration (+ r0 and the true "
             "residual): %lld SpMVs, %lld iterations", (long long)o1.in.spmvs, (long long)o1.in.iterations);
    }
    free(o1.x), free(o2.x), free(ones), free(b);
    sps_matrix_destroy(A);
}

/* sherman5: unpreconditioned BiCGSTAB does not reach 1e-8; IDR(4) does. */
static void test_real(void)
{
    const char *path = t_real_matrix_path("pde2961");
    sps_matrix *A = NULL;
    if (!path || sps_matrix_read(ctx, path, &A) != SPS_OK) {
        t_skip("idr real", "pde2961 not present");
        return;
    }
    sps_idx n = sps_matrix_rows(A);
    double *ones = malloc(sizeof(double) * (size_t)n), *b = malloc(sizeof(double) * (size_t)n);
    for (sps_idx i = 0; i < n; i++) ones[i] = 1.0;
    sps_matrix_spmv_host(A, 1.0, ones, 0.0, b);
    out o = run(A, "idr", "none", b);
    if (o.ok)
        T_OK(o.in.reason > 0 && o.in.true_rel_rnorm <= 1e-8 && o.in.iterations < 400,
             "pde2961 idr+none: %s after %lld (< 400), relres %.2e", sps_reason_str(o.in.reason),
             (long long)o.in.iterations, o.in.true_rel_rnorm);
    free(o.x), free(ones), free(b);
    sps_matrix_destroy(A);
}

T_MAIN_HOST(ctx, test_params, test_dense, test_breakdown_m, test_breakdown_omega, test_known, test_real)
