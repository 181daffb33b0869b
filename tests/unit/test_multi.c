/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_multi.c: sps_solve_multi on a host context against
 * k calls of sps_solve: each column's reason, iteration count, residuals and
 * solution bitwise equal (the same arithmetic: the block CSR loop is
 * sps__csr_spmv's), with no preconditioner, Jacobi (fused) and IC(0)
 * (applied), BiCGSTAB likewise (none, Jacobi, ILU(0)), block and per-column operators, nonzero initial guesses, a zero
 * column, columns that need very different iteration counts (the early ones
 * masked), the iteration limit, X aliasing B; and the refusals. */
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

/* Column j of an n x k block: j = 1 is zero, j = 2 is smooth (fast), the
 * others random; scaled by 10^(j - 2) so the norms differ. */
static double *rhs_block(sps_idx n, int k, uint64_t seed)
{
    double *B = malloc((size_t)n * (size_t)k * sizeof *B + 8);
    for (int j = 0; j < k; j++)
        for (sps_idx i = 0; i < n; i++) {
            double v = j == 1 ? 0.0 : j == 2 ? 1.0 : t_rand(&seed);
            B[(size_t)j * (size_t)n + (size_t)i] = v * pow(10.0, j - 2);
        }
    return B;
}

typedef struct mcase {
    const char *method, *gen, *spmv, *pc;
    int k;
    int x0;        /* nonzero initial guesses */
    int64_t maxit; /* 0: default */
    int alias;     /* X is B */
} mcase;

static int same_info(const sps_solve_info *a, const sps_solve_info *b)
{
    return a->reason == b->reason && a->iterations == b->iterations && a->rnorm == b->rnorm &&
           a->true_rnorm == b->true_rnorm && a->bnorm == b->bnorm && a->r0norm == b->r0norm &&
           a->replacements == b->replacements && a->spmvs == b->spmvs &&
           a->precond_applies == b->precond_applies;
}

static void run_case(const mcase *c)
{
    char name[160];
    snprintf(name, sizeof name, "%s %s %s pc=%s k=%d x0=%d maxit=%lld alias=%d", c->method, c->gen, c->spmv,
             c->pc ? c->pc : "none", c->k, c->x0, (long long)c->maxit, c->alias);
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_precond *pc = NULL;
    sps_solver *s = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, c->gen, &A), "%s: generate", name)) return;
    sps_idx n = sps_matrix_rows(A);
    size_t nk = (size_t)n * (size_t)c->k;
    double *B = rhs_block(n, c->k, 7), *X = calloc(nk + 1, sizeof *X), *X1 = calloc(nk + 1, sizeof *X1);
    uint64_t seed = 99;
    for (size_t i = 0; c->x0 && i < nk; i++) X[i] = X1[i] = 0.1 * t_rand(&seed);
    sps_solve_info *mi = calloc((size_t)c->k, sizeof *mi), si;
    int ok = T_STATUS(ctx, sps_operator_create(ctx, A, c->spmv, NULL, &op), "%s: operator", name) &&
             (!c->pc || T_STATUS(ctx, sps_precond_create(ctx, A, c->pc, &pc), "%s: precond", name)) &&
             T_STATUS(ctx, sps_solver_create(ctx, &s), "%s: solver", name);
    if (ok) ok = T_STATUS(ctx, sps_solver_set_method_name(s, c->method), "%s: method", name);
    if (ok && c->maxit) sps_solver_set_maxit(s, c->maxit);
    if (ok && c->alias) memcpy(X, B, nk * sizeof *X);
    sps_status st = ok ? sps_solve_multi(s, op, pc, c->alias ? X : B, X, c->k, mi) : SPS_ERR_INTERNAL;
    if (ok) T_STATUS(ctx, st, "%s: sps_solve_multi ran", name);
    int equal = st == SPS_OK, conv = 0;
    int64_t imin = INT64_MAX, imax = 0;
    for (int j = 0; equal && j < c->k; j++) {
        double *xj = X1 + (size_t)j * (size_t)n;
        if (c->alias) memcpy(xj, B + (size_t)j * (size_t)n, (size_t)n * sizeof *xj);
        if (!T_STATUS(ctx, sps_solve(s, op, pc, B + (size_t)j * (size_t)n, xj, &si), "%s: single %d", name, j))
            equal = 0;
        else if (!same_info(&si, &mi[j]) ||
                 memcmp(xj, X + (size_t)j * (size_t)n, (size_t)n * sizeof *xj) != 0) {
            fprintf(stderr, "  column %d: block %s %lld it %.17g, single %s %lld it %.17g\n", j,
                    sps_reason_str(mi[j].reason), (long long)mi[j].iterations, mi[j].true_rnorm,
                    sps_reason_str(si.reason), (long long)si.iterations, si.true_rnorm);
            equal = 0;
        }
        conv += mi[j].reason > 0;
        if (mi[j].iterations > imax) imax = mi[j].iterations;
        if (mi[j].iterations > 0 && mi[j].iterations < imin) imin = mi[j].iterations;
    }
    if (ok) T_OK(equal, "%s: every column bitwise = sps_solve (iterations %lld..%lld, %d converged)",
                 name, (long long)imin, (long long)imax, conv);
    if (ok && c->k > 1) T_OK(mi[1].reason == SPS_CONVERGED_ZERO_RHS && mi[1].iterations == 0,
                             "%s: the zero column: zero rhs, 0 iterations", name);
    free(B);
    free(X);
    free(X1);
    free(mi);
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void test_against_single(void)
{
    static const mcase cases[] = {
        {"cg", "poisson2d:24", "csr-vector", NULL, 5, 0, 0, 0},
        {"cg", "poisson2d:24", "csr-vector", "jacobi", 6, 1, 0, 0},
        {"cg", "poisson2d:24", "csr-vector", "ic0", 4, 0, 0, 0},
        {"cg", "poisson2d:24", "dia", NULL, 3, 1, 0, 0},
        {"cg", "poisson3d:9", "merge", "jacobi", 8, 0, 0, 0},
        {"cg", "poisson3d:9", "csr-scalar", NULL, 1, 0, 0, 0},
        {"cg", "poisson3d:9", "csr-vector", NULL, 17, 1, 0, 0},
        {"cg", "poisson2d:24", "csr-vector", NULL, 4, 0, 7, 0},
        {"cg", "poisson2d:24", "csr-vector", "jacobi", 3, 0, 0, 1},
        {"bicgstab", "convdiff2d:24,20", "csr-vector", NULL, 5, 0, 0, 0},
        {"bicgstab", "convdiff2d:24,20", "csr-vector", "jacobi", 4, 1, 0, 0},
        {"bicgstab", "convdiff2d:24,20", "csr-vector", "ilu0", 3, 0, 0, 0},
        {"bicgstab", "convdiff2d:24,20", "drm", NULL, 3, 1, 0, 0},
        {"bicgstab", "poisson3d:9", "csr-vector", NULL, 9, 1, 0, 0},
        {"bicgstab", "convdiff2d:24,20", "csr-vector", NULL, 4, 0, 6, 0},
        {"bicgstab", "convdiff2d:24,20", "csr-vector", "jacobi", 3, 0, 0, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(&cases[i]);
}

static void test_refusals(void)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:5", &A), "refusals: generate")) return;
    sps_operator_create(ctx, A, "csr-vector", NULL, &op);
    sps_solver_create(ctx, &s);
    double B[50] = {1}, X[50] = {0};
    sps_solve_info in[2];
    T_OK(sps_solve_multi(NULL, op, NULL, B, X, 2, in) == SPS_ERR_INVALID_ARG, "NULL solver refused");
    T_OK(sps_solve_multi(s, NULL, NULL, B, X, 2, in) == SPS_ERR_INVALID_ARG, "NULL operator refused");
    T_OK(sps_solve_multi(s, op, NULL, B, X, -1, in) == SPS_ERR_INVALID_ARG, "k < 0 refused");
    T_OK(sps_solve_multi(s, op, NULL, B, X, 2, NULL) == SPS_ERR_INVALID_ARG, "NULL infos refused");
    T_OK(sps_solve_multi(s, op, NULL, B, X, 0, NULL) == SPS_OK, "k = 0 does nothing");
    sps_solver_set_method(s, SPS_GMRES);
    T_OK(sps_solve_multi(s, op, NULL, B, X, 2, in) == SPS_ERR_UNSUPPORTED &&
             strstr(sps_last_error(ctx), "gmres") != NULL, "gmres refused, named: %s",
         sps_last_error(ctx));
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

T_MAIN_HOST(ctx, test_against_single, test_refusals)
