/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_ilu_sweeps.c: ILU(0)/IC(0) with Jacobi-sweep
 * triangular solves (`solve=jacobi,sweeps=K`) on the host: against the
 * truncated Neumann series computed densely from hand factors, exact once K
 * covers the triangles' depth, IC(0)'s M^-1 symmetric positive definite, CG
 * iterations, parameter errors */
#include "check.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

static sps_status apply(const sps_matrix *A, const char *spec, const double *r, double *z)
{
    sps_precond *pc = NULL;
    sps_status st = sps_precond_create(ctx, A, spec, &pc);
    if (st == SPS_OK) st = sps_precond_apply(pc, r, z);
    sps_precond_destroy(pc);
    return st;
}

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
        if (!T_STATUS(ctx, apply(A, spec, r, z), "%s", spec)) continue;
        double e = 0;
        for (int i = 0; i < 4; i++) e = fmax(e, fabs(z[i] - zw[i]));
        T_OK(e < 1e-14, "%s: K + 1 sweeps on each hand factor (%.2g)", spec, e);
    }
    double ze[4];
    T_STATUS(ctx, apply(A, "ilu0", r, ze), "ilu0");
    T_STATUS(ctx, apply(A, "ilu0:solve=jacobi,sweeps=3", r, z), "sweeps=3");
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
    const char *t[2][3] = {{"ilu0", "ilu0:solve=jacobi,sweeps=15", "ilu0:solve=jacobi,sweeps=13"},
                           {"ic0", "ic0:solve=jacobi,sweeps=15", "ic0:solve=jacobi,sweeps=13"}};
    for (int k = 0; k < 2; k++) {
        if (!T_STATUS(ctx, apply(A, t[k][0], r, ze), "%s", t[k][0])) continue;
        double e15 = 0, e13 = 0, big = 0;
        T_STATUS(ctx, apply(A, t[k][1], r, z), "%s", t[k][1]);
        for (int i = 0; i < 64; i++) e15 = fmax(e15, fabs(z[i] - ze[i]));
        T_STATUS(ctx, apply(A, t[k][2], r, z), "%s", t[k][2]);
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
    int n = 36;
    for (int K = 0; K <= 3; K++) {
        char spec[48];
        snprintf(spec, sizeof spec, "ic0:solve=jacobi,sweeps=%d", K);
        sps_precond *pc = NULL;
        if (!T_STATUS(ctx, sps_precond_create(ctx, A, spec, &pc), "%s", spec)) continue;
        double Mi[36 * 36], e[36], asym = 0, big = 0, minq = INFINITY;
        for (int j = 0; j < n; j++) {
            memset(e, 0, sizeof e);
            e[j] = 1;
            sps_precond_apply(pc, e, Mi + j * n);
        }
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                asym = fmax(asym, fabs(Mi[i * n + j] - Mi[j * n + i]));
                big = fmax(big, fabs(Mi[i * n + j]));
            }
        uint64_t seed = 8;
        for (int t = 0; t < 40; t++) {
            double x[36], q = 0;
            for (int i = 0; i < n; i++) x[i] = t_rand(&seed);
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) q += x[i] * Mi[i * n + j] * x[j];
            minq = fmin(minq, q);
        }
        T_OK(asym <= 1e-14 * big && minq > 0 && sps_precond_symmetric(pc),
             "%s: M^-1 symmetric (%.2g) and positive definite (min x'M^-1x %.3g)", spec, asym / big,
             minq);
        sps_precond_destroy(pc);
    }
    sps_matrix_destroy(A);
}

static int64_t iterations(const sps_matrix *A, sps_method m, const char *spec)
{
    sps_idx n = sps_matrix_rows(A);
    double *b = malloc(n * sizeof *b), *x = calloc(n, sizeof *x);
    for (sps_idx i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.1;
    sps_operator *op = NULL;
    sps_precond *pc = NULL;
    sps_solver *s = NULL;
    sps_solve_info in;
    int64_t its = -1;
    if (sps_operator_create(ctx, A, "csr-vector", NULL, &op) == SPS_OK &&
        sps_precond_create(ctx, A, spec, &pc) == SPS_OK && sps_solver_create(ctx, &s) == SPS_OK &&
        sps_solver_set_method(s, m) == SPS_OK && sps_solve(s, op, pc, b, x, &in) == SPS_OK &&
        in.reason > 0)
        its = in.iterations;
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    free(b); free(x);
    return its;
}

static void test_convergence(void)
{
    sps_matrix *P = NULL, *C = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:40", &P) == SPS_OK) {
        int64_t j = iterations(P, SPS_CG, "jacobi"), e = iterations(P, SPS_CG, "ic0"),
                s2 = iterations(P, SPS_CG, "ic0:solve=jacobi");
        T_OK(s2 > 0 && j > 0 && e > 0 && e <= s2 && s2 < j,
             "poisson2d:40 CG: ic0 %lld <= ic0:solve=jacobi %lld < jacobi %lld iterations",
             (long long)e, (long long)s2, (long long)j);
    }
    if (sps_matrix_generate(ctx, "convdiff2d:40,20", &C) == SPS_OK) {
        int64_t j = iterations(C, SPS_BICGSTAB, "jacobi"), e = iterations(C, SPS_BICGSTAB, "ilu0"),
                s2 = iterations(C, SPS_BICGSTAB, "ilu0:solve=jacobi");
        T_OK(s2 > 0 && j > 0 && e > 0 && s2 < j,
             "convdiff2d:40,20 BiCGSTAB: ilu0 %lld, ilu0:solve=jacobi %lld < jacobi %lld iterations",
             (long long)e, (long long)s2, (long long)j);
    }
    sps_matrix_destroy(P);
    sps_matrix_destroy(C);
}

static void test_errors(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:4", &A) != SPS_OK) return;
    static const struct {
        const char *spec, *msg;
    } bad[] = {
        {"ilu0:sweeps=2", "ilu0: sweeps=K needs solve=jacobi"},
        {"ic0:exact,sweeps=1", "ic0: sweeps=K needs solve=jacobi"},
        {"ilu0:solve=gauss", "solve='gauss' is not exact or jacobi"},
        {"ilu0:solve=jacobi,sweeps=101", "sweeps='101' is not an integer in [0, 100]"},
        {"ic0:level=1", "ic0: unknown parameter 'level' (known: exact, solve, sweeps)"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        sps_precond *pc = (sps_precond *)&pc;
        T_OK(sps_precond_create(ctx, A, bad[k].spec, &pc) == SPS_ERR_INVALID_ARG && !pc &&
                 strstr(sps_last_error(ctx), bad[k].msg),
             "'%s' refused: %s", bad[k].spec, sps_last_error(ctx));
    }
    /* pivots are the factorization's: the same errors as the exact variant */
    double z3[9] = {1, 1, 0, 1, 1, 1, 0, 1, 1}, r[3] = {1, 1, 1}, z[3];
    sps_matrix *Z = t_matrix_from_dense(ctx, 3, 3, z3);
    if (Z) {
        T_OK(apply(Z, "ilu0:solve=jacobi", r, z) == SPS_ERR_ZERO_PIVOT &&
                 strstr(sps_last_error(ctx), "ilu0: zero pivot at row 1 (1-based 2) of 3"),
             "ilu0:solve=jacobi zero pivot named: %s", sps_last_error(ctx));
        T_OK(apply(Z, "ic0:solve=jacobi", r, z) == SPS_ERR_ZERO_PIVOT &&
                 strstr(sps_last_error(ctx), "ic0: non-positive pivot at row 1 (1-based 2) of 3"),
             "ic0:solve=jacobi pivot named: %s", sps_last_error(ctx));
        sps_matrix_destroy(Z);
    }
    sps_matrix_destroy(A);
}

static void test_alloc_failure(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:6", &A) != SPS_OK) return;
    const char *specs[] = {"ilu0:solve=jacobi", "ic0:solve=jacobi"};
    int fails = 0, bad = 0;
    for (int t = 0; t < 2; t++)
        for (long k = 1; k < 20; k++) {
            sps_precond *pc = NULL;
            sps__fail_alloc_after(k);
            sps_status st = sps_precond_create(ctx, A, specs[t], &pc);
            sps__fail_alloc_after(0);
            if (st == SPS_ERR_NO_MEMORY) {
                fails++;
                if (pc) bad++;
            } else if (st != SPS_OK) {
                bad++;
            }
            sps_precond_destroy(pc);
        }
    T_OK(fails > 8 && bad == 0, "injected allocation failures give NO_MEMORY and no object (%d)", fails);
    sps_matrix_destroy(A);
}

int main(void)
{
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) {
        T_FAIL("host context", "%s", sps_last_error(NULL));
        return t_done();
    }
    test_hand();
    test_depth();
    test_ic_spd();
    test_convergence();
    test_errors();
    test_alloc_failure();
    sps_context_destroy(ctx);
    return t_done();
}
