/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_ilu_sweeps.c: ILU(0)/IC(0) with Jacobi-sweep
 * triangular solves (`solve=jacobi,sweeps=K`) on the host: against the
 * truncated Neumann series computed densely from hand factors, equal to the
 * natural order's exact solves (ilu0:exact, ic0:exact) once K covers the
 * triangles' depth, IC(0)'s M^-1 symmetric positive definite, CG
 * iterations, parameter errors (allocation failures: test_precond.c) */
#include "pc_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

/* K + 1 dense Jacobi sweeps for T x = b (T triangular, n x n, row-major). */
static void dense_sweeps(int n, const double *T, int K, const double *b, double *x)
{
    double *prev = calloc(n, sizeof *prev), *next = malloc(n * sizeof *next);
    for (int k = 0; k <= K; k++) {
        for (int i = 0; i < n; i++) {
            double s = b[i];
            for (int j = 0; j < n; j++)
                if (j != i && k > 0) s -= T[i * n + j] * prev[j];
            next[i] = s / T[i * n + i];
        }
        memcpy(prev, next, n * sizeof *prev);
    }
    memcpy(x, prev, n * sizeof *x);
    free(prev);
    free(next);
}

/* The 4x4 of test_precond.c with its hand-computed ILU(0) factors. */
static void test_hand(void)
{
    double a[16] = {2, -1, 0, 1, 1, 3, -1, 0, 0, 1, 4, 2, 1, 0, 1, 5};
    double L[16] = {0}, U[16] = {0};
    for (int i = 0; i < 4; i++) L[i * 4 + i] = 1;
    L[1 * 4 + 0] = 0.5; L[2 * 4 + 1] = 2.0 / 7.0; L[3 * 4 + 0] = 0.5; L[3 * 4 + 2] = 7.0 / 30.0;
    U[0] = 2; U[1] = -1; U[3] = 1; U[5] = 3.5; U[6] = -1; U[10] = 30.0 / 7.0; U[11] = 2;
    U[15] = 121.0 / 30.0;
    sps_matrix *A = t_matrix_from_dense(ctx, 4, 4, a);
    if (!A) return;
    double r[4] = {1, -2, 0.5, 3}, y[4], zw[4], z[4];
    for (int K = 0; K <= 4; K++) {
        char spec[48];
        snprintf(spec, sizeof spec, "ilu0:solve=jacobi,sweeps=%d", K);
        dense_sweeps(4, L, K, r, y);
        dense_sweeps(4, U, K, y, zw);
        if (!T_STATUS(ctx, pc_apply(ctx, A, spec, r, z), "%s", spec)) continue;
        double e = 0;
        for (int i = 0; i < 4; i++) e = fmax(e, fabs(z[i] - zw[i]));
        T_OK(e < 1e-14, "%s: K + 1 sweeps on each hand factor (%.2g)", spec, e);
    }
    double ze[4];
    T_STATUS(ctx, pc_apply(ctx, A, "ilu0:exact", r, ze), "ilu0:exact");
    T_STATUS(ctx, pc_apply(ctx, A, "ilu0:solve=jacobi,sweeps=3", r, z), "sweeps=3");
    double e = 0;
    for (int i = 0; i < 4; i++) e = fmax(e, fabs(z[i] - ze[i]));
    T_OK(e < 1e-14, "4x4: 3 sweeps cover the triangles' depth: = the exact solves (%.2g)", e);
    sps_matrix_destroy(A);
}

/* poisson2d:8: the triangles have depth 15; 15 sweeps give the exact solves. */
static void test_depth(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:8", &A) != SPS_OK) return;
    double r[64], ze[64], z[64];
    uint64_t seed = 4;
    for (int i = 0; i < 64; i++) r[i] = t_rand(&seed);
    const char *t[2][3] = {{"ilu0:exact", "ilu0:solve=jacobi,sweeps=15", "ilu0:solve=jacobi,sweeps=13"},
                           {"ic0:exact", "ic0:solve=jacobi,sweeps=15", "ic0:solve=jacobi,sweeps=13"}};
    for (int k = 0; k < 2; k++) {
        if (!T_STATUS(ctx, pc_apply(ctx, A, t[k][0], r, ze), "%s", t[k][0])) continue;
        double e15 = 0, e13 = 0, big = 0;
        T_STATUS(ctx, pc_apply(ctx, A, t[k][1], r, z), "%s", t[k][1]);
        for (int i = 0; i < 64; i++) e15 = fmax(e15, fabs(z[i] - ze[i]));
        T_STATUS(ctx, pc_apply(ctx, A, t[k][2], r, z), "%s", t[k][2]);
        for (int i = 0; i < 64; i++) {
            e13 = fmax(e13, fabs(z[i] - ze[i]));
            big = fmax(big, fabs(ze[i]));
        }
        T_OK(e15 < 1e-13 * big && e13 > 1e-15 * big,
             "%s: exact after 15 sweeps (%.2g), not yet after 13 (%.2g)", t[k][0], e15 / big,
             e13 / big);
    }
    sps_matrix_destroy(A);
}

static void test_ic_spd(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:6", &A) != SPS_OK) return;
    for (int K = 0; K <= 3; K++) {
        char spec[48];
        snprintf(spec, sizeof spec, "ic0:solve=jacobi,sweeps=%d", K);
        sps_precond *pc = NULL;
        if (T_STATUS(ctx, sps_precond_create(ctx, A, spec, &pc), "%s", spec))
            pc_check_spd(spec, pc, 36, 1e-14);
        sps_precond_destroy(pc);
    }
    sps_matrix_destroy(A);
}

static void test_convergence(void)
{
    sps_matrix *P = NULL, *C = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:40", &P) == SPS_OK) {
        int64_t j = pc_iterations(ctx, P, NULL, SPS_CG, "jacobi"), e = pc_iterations(ctx, P, NULL, SPS_CG, "ic0:exact"),
                s2 = pc_iterations(ctx, P, NULL, SPS_CG, "ic0:solve=jacobi");
        T_OK(s2 > 0 && j > 0 && e > 0 && e <= s2 && s2 < j,
             "poisson2d:40 CG: ic0:exact %lld <= ic0:solve=jacobi %lld < jacobi %lld iterations",
             (long long)e, (long long)s2, (long long)j);
    }
    if (sps_matrix_generate(ctx, "convdiff2d:40,20", &C) == SPS_OK) {
        int64_t j = pc_iterations(ctx, C, NULL, SPS_BICGSTAB, "jacobi"), e = pc_iterations(ctx, C, NULL, SPS_BICGSTAB, "ilu0:exact"),
                s2 = pc_iterations(ctx, C, NULL, SPS_BICGSTAB, "ilu0:solve=jacobi");
        T_OK(s2 > 0 && j > 0 && e > 0 && s2 < j,
             "convdiff2d:40,20 BiCGSTAB: ilu0:exact %lld, ilu0:solve=jacobi %lld < jacobi %lld iterations",
             (long long)e, (long long)s2, (long long)j);
    }
    sps_matrix_destroy(P);
    sps_matrix_destroy(C);
}

static void test_errors(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:4", &A) != SPS_OK) return;
    static const pc_bad bad[] = {
        {"ilu0:sweeps=2", "ilu0: sweeps=K needs solve=jacobi"},
        {"ic0:exact,sweeps=1", "ic0: sweeps=K needs solve=jacobi"},
        {"ilu0:solve=gauss", "solve='gauss' is not exact or jacobi"},
        {"ilu0:solve=jacobi,sweeps=101", "sweeps='101' is not an integer in [0, 100]"},
        {"ic0:level=1", "ic0: unknown parameter 'level' (known: exact, solve, sweeps, order, factor, fsweeps)"},
    };
    pc_check_refused(ctx, A, bad, sizeof bad / sizeof *bad);
    /* pivots are the factorization's: the same errors as the exact variant */
    double z3[9] = {1, 1, 0, 1, 1, 1, 0, 1, 1}, r[3] = {1, 1, 1}, z[3];
    sps_matrix *Z = t_matrix_from_dense(ctx, 3, 3, z3);
    if (Z) {
        T_OK(pc_apply(ctx, Z, "ilu0:solve=jacobi", r, z) == SPS_ERR_ZERO_PIVOT &&
                 strstr(sps_last_error(ctx), "ilu0: zero pivot at row 1 (1-based 2) of 3"),
             "ilu0:solve=jacobi zero pivot named: %s", sps_last_error(ctx));
        T_OK(pc_apply(ctx, Z, "ic0:solve=jacobi", r, z) == SPS_ERR_ZERO_PIVOT &&
                 strstr(sps_last_error(ctx), "ic0: non-positive pivot at row 1 (1-based 2) of 3"),
             "ic0:solve=jacobi pivot named: %s", sps_last_error(ctx));
        sps_matrix_destroy(Z);
    }
    sps_matrix_destroy(A);
}

T_MAIN_HOST(ctx, test_hand, test_depth, test_ic_spd, test_convergence, test_errors)
