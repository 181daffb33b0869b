/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_bjacobi.c: block-Jacobi on the host: block=1 is
 * Jacobi bitwise, blockdiag(A) z = r for fixed sizes (last block short),
 * exact on a block-diagonal A, supervariables found on a 3-unknowns-per-node
 * system, symmetry, CG iterations against Jacobi, errors (allocation
 * failures: test_precond.c) */
#include "pc_check.h"
#include "precond/bjacobi/bjacobi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

/* max_i |(blockdiag_K(A) z - r)_i| / max |r| for fixed blocks of K rows */
static double block_resid(const sps_matrix *A, int K, const double *z, const double *r)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    double e = 0, big = 0;
    for (sps_idx i = 0; i < sps_matrix_rows(A); i++) {
        sps_idx s = i / K * K;
        double acc = -r[i];
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++)
            if (ci[p] >= s && ci[p] < s + K) acc += v[p] * z[ci[p]];
        e = fmax(e, fabs(acc));
        big = fmax(big, fabs(r[i]));
    }
    return e / big;
}

/* kron(poisson2d:N, B) + shift: 3 unknowns per node with the same pattern */
static void kron3_add(t_triplets *t, sps_idx i, sps_idx j, double v)
{
    const double B[9] = {4, 1.5, 0.5, 1.5, 3, 1, 0.5, 1, 2};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) t_trip_add(t, 3 * i + a, 3 * j + b, v * B[a * 3 + b] * (j == i ? 1.0 : 0.3));
}

static sps_matrix *kron3(int N) { return pc_from_poisson2d(ctx, N, 3 * N * N, kron3_add); }

static void test_reference(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "powerlaw:1025,6,4", &A) != SPS_OK) return; /* diagonally dominant */
    sps_idx n = sps_matrix_rows(A);
    double *r = malloc(n * sizeof *r), *z = malloc(n * sizeof *z), *zj = malloc(n * sizeof *zj);
    uint64_t seed = 3;
    for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
    if (T_STATUS(ctx, pc_apply(ctx, A, "bjacobi:block=1", r, z), "block=1") &&
        T_STATUS(ctx, pc_apply(ctx, A, "jacobi", r, zj), "jacobi"))
        T_OK(memcmp(z, zj, n * sizeof *z) == 0, "bjacobi:block=1 is jacobi, bitwise");
    const int Ks[] = {2, 3, 7, 31, 32};
    for (int k = 0; k < 5; k++) {
        char spec[32];
        snprintf(spec, sizeof spec, "bjacobi:block=%d", Ks[k]);
        if (T_STATUS(ctx, pc_apply(ctx, A, spec, r, z), "%s on powerlaw:1025", spec))
            T_OK(block_resid(A, Ks[k], z, r) < 1e-12, "%s: blockdiag(A) z = r (%.2g; last block %d rows)",
                 spec, block_resid(A, Ks[k], z, r), (int)(n % Ks[k] ? n % Ks[k] : Ks[k]));
    }
    free(r); free(z); free(zj);
    sps_matrix_destroy(A);
}

static void test_supervariables(void)
{
    sps_matrix *A = kron3(6), *P = NULL;
    if (!A) return;
    int n = 108;
    sps_precond *pc = NULL;
    if (T_STATUS(ctx, sps_precond_create(ctx, A, "bjacobi", &pc), "bjacobi on kron3")) {
        const sps_bjacobi *b = pc->impl;
        T_OK(b->nblocks == 36 && b->max_block == 3, "kron3: 36 supervariables of 3 (%d, max %d)",
             b->nblocks, b->max_block);
        double r[108], z[108], z3[108];
        uint64_t seed = 9;
        for (int i = 0; i < n; i++) r[i] = t_rand(&seed);
        sps_precond_apply(pc, r, z);
        T_STATUS(ctx, pc_apply(ctx, A, "bjacobi:block=3", r, z3), "block=3");
        T_OK(memcmp(z, z3, sizeof z) == 0, "kron3: supervariables = block=3, bitwise");
        pc_check_spd("bjacobi on kron3", pc, n, 1e-14);
    }
    sps_precond_destroy(pc);
    pc = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:7", &P) == SPS_OK &&
        T_STATUS(ctx, sps_precond_create(ctx, P, "bjacobi", &pc), "bjacobi on poisson2d:7")) {
        const sps_bjacobi *b = pc->impl;
        T_OK(b->nblocks == 49 && b->max_block == 1, "poisson2d:7: no supervariables (%d blocks)",
             b->nblocks);
    }
    sps_precond_destroy(pc);
    sps_matrix_destroy(P);
    sps_matrix_destroy(A);
}

/* a block-diagonal A: bjacobi with its block size is A^-1 */
static void test_exact(void)
{
    t_triplets t = {0};
    int n = 40, K = 5;
    uint64_t seed = 1;
    for (int i = 0; i < n; i++)
        for (int j = i / K * K; j < i / K * K + K; j++) t_trip_add(&t, i, j, i == j ? 6 : t_rand(&seed));
    sps_matrix *A = t_trip_matrix(ctx, n, n, &t);
    if (!A) return;
    double x[40], b[40], z[40], e = 0;
    for (int i = 0; i < n; i++) x[i] = t_rand(&seed);
    sps_matrix_spmv_host(A, 1.0, x, 0.0, b);
    if (T_STATUS(ctx, pc_apply(ctx, A, "bjacobi:block=5", b, z), "block-diagonal")) {
        for (int i = 0; i < n; i++) e = fmax(e, fabs(z[i] - x[i]));
        T_OK(e < 1e-13, "bjacobi on a block-diagonal A is exact (%.2g)", e);
    }
    sps_matrix_destroy(A);
}

static void test_convergence(void)
{
    sps_matrix *A = kron3(20), *P = NULL;
    if (A) {
        int64_t j = pc_iterations(ctx, A, NULL, SPS_CG, "jacobi"),
                b = pc_iterations(ctx, A, NULL, SPS_CG, "bjacobi");
        T_OK(b > 0 && j > 0 && b < j, "kron3(20): CG+bjacobi (supervariables) %lld < CG+jacobi %lld iterations",
             (long long)b, (long long)j);
    }
    if (sps_matrix_generate(ctx, "poisson2d:40", &P) == SPS_OK) {
        int64_t j = pc_iterations(ctx, P, NULL, SPS_CG, "jacobi"),
                b = pc_iterations(ctx, P, NULL, SPS_CG, "bjacobi:block=8");
        T_OK(b > 0 && j > 0 && b < j, "poisson2d:40: CG+bjacobi:block=8 %lld < CG+jacobi %lld iterations",
             (long long)b, (long long)j);
    }
    sps_matrix_destroy(P);
    sps_matrix_destroy(A);
}

static void test_errors(void)
{
    double a[16] = {1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2};
    double r[4] = {1, 2, 3, 4}, z[4];
    sps_matrix *A = t_matrix_from_dense(ctx, 4, 4, a);
    if (A) {
        T_OK(pc_apply(ctx, A, "bjacobi:block=2", r, z) == SPS_ERR_ZERO_PIVOT &&
                 strstr(sps_last_error(ctx), "bjacobi: the diagonal block of rows 0..1 (1-based 1..2) of 4 is singular"),
             "singular block named: %s", sps_last_error(ctx));
        T_STATUS(ctx, pc_apply(ctx, A, "bjacobi:block=1", r, z), "block=1 on the same matrix: nonsingular 1x1 blocks");
        sps_matrix_destroy(A);
    }
    double m[9] = {2, 1, 0, 1, 0, 1, 0, 1, 2}; /* (1,1) missing */
    A = t_matrix_from_dense(ctx, 3, 3, m);
    if (A) {
        T_OK(pc_apply(ctx, A, "bjacobi:block=1", r, z) == SPS_ERR_ZERO_PIVOT &&
                 strstr(sps_last_error(ctx), "rows 1..1 (1-based 2..2) of 3"),
             "block=1 with a missing diagonal: %s", sps_last_error(ctx));
        T_STATUS(ctx, pc_apply(ctx, A, "bjacobi:block=3", r, z), "block=3 covers the missing diagonal");
        sps_matrix_destroy(A);
    }
    if (sps_matrix_generate(ctx, "poisson2d:3", &A) == SPS_OK) {
        static const pc_bad bad[] = {{"bjacobi:block=0", "bjacobi"}, {"bjacobi:block=33", "bjacobi"},
                                     {"bjacobi:size=2", "bjacobi"}, {"bjacobi:block", "bjacobi"}};
        pc_check_refused(ctx, A, bad, 4);
        sps_matrix_destroy(A);
    }
    const char *empty[] = {"bjacobi"};
    pc_check_empty(ctx, ctx, empty, 1, "");
}

T_MAIN_HOST(ctx, test_reference, test_supervariables, test_exact, test_convergence, test_errors)
