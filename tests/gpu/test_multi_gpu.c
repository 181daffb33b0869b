/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_multi_gpu.c: sps_solve_multi on the GPU against k
 * calls of sps_solve on the GPU: the same reasons; with csr-vector (whose
 * summation the block kernel repeats) the same iteration counts, with other
 * operators within 5% (the existing GPU-vs-host rule); CG and BiCGSTAB; solutions within 1e-6
 * relative (both converged to rtol 1e-8); two block runs bitwise equal;
 * B and X on the host or on the device; and one timing line (block against
 * k single solves, for the record). Without a device: one SKIP line. */
#include "check.h"
#include "internal.h"

#if SPS_HAVE_CUDA
#include "core/gpu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n x k random values; column 1 zero when zero1 (and k > 1). */
static double *rhs(sps_idx n, int k, uint64_t seed, int zero1)
{
    double *B = malloc((size_t)n * (size_t)k * sizeof *B + 8);
    for (size_t i = 0; i < (size_t)n * (size_t)k; i++) B[i] = t_rand(&seed);
    for (sps_idx i = 0; zero1 && k > 1 && i < n; i++) B[(size_t)n + (size_t)i] = 0.0;
    return B;
}

/* Block solve of B into X (host arrays; through device copies when dev). */
static sps_status block(sps_context *ctx, sps_solver *s, sps_operator *op, sps_precond *pc,
                        const double *B, double *X, sps_idx n, int k, int dev, sps_solve_info *in)
{
    if (!dev) return sps_solve_multi(s, op, pc, B, X, k, in);
    size_t bytes = (size_t)n * (size_t)k * sizeof *B;
    void *dB = NULL, *dX = NULL;
    sps_status st = sps__dmalloc(ctx, &dB, bytes);
    if (st == SPS_OK) st = sps__dmalloc(ctx, &dX, bytes);
    if (st == SPS_OK) st = sps__h2d(ctx, dB, B, bytes);
    if (st == SPS_OK) st = sps__h2d(ctx, dX, X, bytes);
    if (st == SPS_OK) st = sps_solve_multi(s, op, pc, dB, dX, k, in);
    if (st == SPS_OK) st = sps__d2h(ctx, X, dX, bytes);
    sps__dfree(dB);
    sps__dfree(dX);
    return st;
}

static void compare(sps_context *ctx, const char *name, const char *spmv, sps_solver *s,
                    sps_operator *op, sps_precond *pc, const double *B, const double *X,
                    sps_idx n, int k, const sps_solve_info *mi)
{
    double *x1 = calloc((size_t)n + 1, sizeof *x1), worst = 0;
    int reasons = 1, iters = 1, bitwise = 1;
    int exact = strcmp(spmv, "csr-vector") == 0;
    for (int j = 0; j < k; j++) {
        sps_solve_info si;
        memset(x1, 0, (size_t)n * sizeof *x1);
        if (!T_STATUS(ctx, sps_solve(s, op, pc, B + (size_t)j * (size_t)n, x1, &si), "%s: single %d", name, j))
            break;
        const double *xb = X + (size_t)j * (size_t)n;
        double d = t_rel_diff(xb, x1, n);
        int64_t di = llabs((long long)(si.iterations - mi[j].iterations));
        reasons &= si.reason == mi[j].reason;
        iters &= exact ? di == 0 : di <= (si.iterations + 19) / 20;
        bitwise &= memcmp(xb, x1, (size_t)n * sizeof *x1) == 0;
        if (d > worst) worst = d;
        if (si.reason != mi[j].reason || di)
            fprintf(stderr, "  column %d: block %s %lld it, single %s %lld it\n", j,
                    sps_reason_str(mi[j].reason), (long long)mi[j].iterations,
                    sps_reason_str(si.reason), (long long)si.iterations);
    }
    T_OK(reasons && iters && worst <= 1e-6,
         "%s: columns = single solves (reasons, iterations %s, x rel diff %.1e; bitwise %s)", name,
         exact ? "equal" : "within 5%", worst, bitwise ? "yes" : "no");
    free(x1);
}

typedef struct gcase {
    const char *method, *gen, *spmv, *pc;
    int k, dev;
} gcase;

static void run_case(sps_context *ctx, const gcase *c)
{
    char name[160];
    snprintf(name, sizeof name, "gpu block %s %s %s pc=%s k=%d %s", c->method, c->gen, c->spmv,
             c->pc ? c->pc : "none", c->k, c->dev ? "device B/X" : "host B/X");
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_precond *pc = NULL;
    sps_solver *s = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, c->gen, &A), "%s: generate", name)) return;
    sps_idx n = sps_matrix_rows(A);
    size_t nk = (size_t)n * (size_t)c->k;
    double *B = rhs(n, c->k, 3, 1), *X = calloc(nk + 1, sizeof *X), *X2 = calloc(nk + 1, sizeof *X2);
    sps_solve_info *mi = calloc((size_t)c->k, sizeof *mi), *mi2 = calloc((size_t)c->k, sizeof *mi2);
    if (T_STATUS(ctx, sps_operator_create(ctx, A, c->spmv, NULL, &op), "%s: operator", name) &&
        (!c->pc || T_STATUS(ctx, sps_precond_create(ctx, A, c->pc, &pc), "%s: precond", name)) &&
        T_STATUS(ctx, sps_solver_create(ctx, &s), "%s: solver", name) &&
        T_STATUS(ctx, sps_solver_set_method_name(s, c->method), "%s: method", name) &&
        T_STATUS(ctx, block(ctx, s, op, pc, B, X, n, c->k, c->dev, mi), "%s: block solve", name) &&
        T_STATUS(ctx, block(ctx, s, op, pc, B, X2, n, c->k, c->dev, mi2), "%s: again", name)) {
        T_OK(memcmp(X, X2, nk * sizeof *X) == 0, "%s: two block solves bitwise equal", name);
        T_OK(c->k < 2 || (mi[1].reason == SPS_CONVERGED_ZERO_RHS && mi[1].iterations == 0),
             "%s: the zero column", name);
        compare(ctx, name, c->spmv, s, op, pc, B, X, n, c->k, mi);
    }
    free(B);
    free(X);
    free(X2);
    free(mi);
    free(mi2);
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* Block of k against k single solves, wall time of each (after a warm-up of
 * both), as a measurement line: the figure (block <= 0.35x). */
static void timing(sps_context *ctx, const char *gen, const char *method, int k)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, gen, &A), "timing %s", gen)) return;
    sps_idx n = sps_matrix_rows(A);
    double *B = rhs(n, k, 5, 0), *X = calloc((size_t)n * (size_t)k + 1, sizeof *X);
    sps_solve_info *mi = calloc((size_t)k, sizeof *mi), si;
    if (T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "timing: op") &&
        T_STATUS(ctx, sps_solver_create(ctx, &s), "timing: solver") &&
        T_STATUS(ctx, sps_solver_set_method_name(s, method), "timing: method")) {
        sps_solve_multi(s, op, NULL, B, X, k, mi); /* warm-up */
        memset(X, 0, (size_t)n * sizeof *X);
        sps_solve(s, op, NULL, B, X, &si); /* warm-up */
        memset(X, 0, (size_t)n * (size_t)k * sizeof *X);
        double t0 = sps__now_ms();
        sps_status st = sps_solve_multi(s, op, NULL, B, X, k, mi);
        double t1 = sps__now_ms();
        for (int j = 0; j < k && st == SPS_OK; j++) {
            memset(X, 0, (size_t)n * sizeof *X);
            st = sps_solve(s, op, NULL, B + (size_t)j * (size_t)n, X, &si);
        }
        double t2 = sps__now_ms();
        int64_t imin = INT64_MAX, imax = 0;
        for (int j = 0; j < k; j++) {
            if (mi[j].iterations < imin) imin = mi[j].iterations;
            if (mi[j].iterations > imax) imax = mi[j].iterations;
        }
        T_OK(st == SPS_OK, "timing %s %s k=%d ran", gen, method, k);
        printf("# block %s on %s, k=%d: %.1f ms (iterations %lld..%lld); %d single solves %.1f ms; "
               "ratio %.3f (issue 12: <= 0.35)\n", method, gen, k, t1 - t0, (long long)imin,
               (long long)imax, k, t2 - t1, (t1 - t0) / (t2 - t1));
    }
    free(B);
    free(X);
    free(mi);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void run(sps_context *ctx)
{
    static const gcase cases[] = {
        {"cg", "poisson3d:20", "csr-vector", NULL, 8, 0},
        {"cg", "poisson3d:20", "csr-vector", "jacobi", 5, 1},
        {"cg", "poisson3d:20", "csr-vector", "ic0", 3, 0},
        {"cg", "poisson3d:20", "merge", NULL, 4, 0},
        {"cg", "poisson3d:20", "dia", "jacobi", 3, 1},
        {"cg", "poisson3d:20", "drm", NULL, 3, 0},
        {"cg", "poisson2d:100", "csr-vector", NULL, 32, 1},
        {"cg", "poisson2d:31", "cusparse", NULL, 1, 0},
        {"bicgstab", "convdiff2d:60,20", "csr-vector", NULL, 8, 0},
        {"bicgstab", "convdiff2d:60,20", "csr-vector", "jacobi", 4, 1},
        {"bicgstab", "convdiff2d:60,20", "csr-vector", "ilu0", 3, 0},
        {"bicgstab", "convdiff2d:60,20", "drm", NULL, 5, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) run_case(ctx, &cases[i]);
    timing(ctx, "poisson3d:160", "cg", 8);
    timing(ctx, "convdiff2d:1000,20", "bicgstab", 8);
}

int main(void) { return t_run_gpu("block solves on the GPU", run); }

#else

int main(void)
{
    t_skip("block solves on the GPU", "built without CUDA");
    return t_done();
}

#endif
