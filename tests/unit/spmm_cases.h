/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/spmm_cases.h: the matrices, blocks and reference that
 * tests/unit/test_spmm.c and tests/gpu/test_spmm_gpu.c both use (static
 * helpers). Blocks are column-major with a padded leading dimension whose
 * padding holds NaN, so that a kernel reading or writing past a column shows. */
#ifndef SPS_TEST_SPMM_CASES_H
#define SPS_TEST_SPMM_CASES_H

#include "check.h"
#include "unit/spmv_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Block widths every backend is tested with: the list and odd sizes
 * around the kernel's register chunks (4, 8, 16). */
static const int spmm_ks[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32};
#define SPMM_NK ((int)(sizeof spmm_ks / sizeof *spmm_ks))

/* Row counts around a warp and around 1024. */
static const sps_idx spmm_ns[] = {1, 31, 32, 33, 1023, 1024, 1025};
#define SPMM_NN ((int)(sizeof spmm_ns / sizeof *spmm_ns))

/* An n x n matrix with a nonzero diagonal except in every 7th row, which is
 * empty; a few scattered entries per row; and row n/2 full (one very long
 * row, n entries). */
static inline sps_matrix *spmm_edge_matrix(sps_context *ctx, sps_idx n, uint64_t seed)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        if (i % 7 == 3 && i != n / 2) continue; /* empty row */
        if (i == n / 2) {
            for (sps_idx j = 0; j < n; j++) t_trip_add(&t, i, j, 1.0 + t_rand(&seed) * 0.5);
            continue;
        }
        t_trip_add(&t, i, i, 4.0 + t_rand(&seed));
        int extra = (int)(t_xorshift(&seed) % 5u);
        for (int e = 0; e < extra; e++)
            t_trip_add(&t, i, (sps_idx)(t_xorshift(&seed) % (uint64_t)n), t_rand(&seed));
    }
    return t_trip_matrix(ctx, n, n, &t);
}

/* For SPS_SPMM_PANEL: row i holds one entry, in column (37 i) mod n (n prime
 * to 37: no column twice, so no panel has a dense column). */
static inline sps_matrix *spmm_nodense_matrix(sps_context *ctx, sps_idx n, uint64_t seed)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++)
        t_trip_add(&t, i, (sps_idx)(((int64_t)i * 37) % n), 1.0 + 0.5 * t_rand(&seed));
    return t_trip_matrix(ctx, n, n, &t);
}

/* An m x n matrix with every entry stored: every column of every panel dense
 * (n > 64: several shared-memory tiles per panel). */
static inline sps_matrix *spmm_full_matrix(sps_context *ctx, sps_idx m, sps_idx n, uint64_t seed)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < m; i++)
        for (sps_idx j = 0; j < n; j++) t_trip_add(&t, i, j, t_rand(&seed) + (i == j ? 4.0 : 0.0));
    return t_trip_matrix(ctx, m, n, &t);
}

/* n x k values in [-1, 1), leading dimension ld >= n; padding rows NaN. */
static inline double *spmm_block(sps_idx n, int k, int64_t ld, uint64_t seed)
{
    size_t cnt = (size_t)ld * (size_t)k + 1;
    double *b = malloc(cnt * sizeof *b);
    if (!b) {
        fprintf(stderr, "spmm_block: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < cnt; i++) b[i] = NAN;
    for (int c = 0; c < k; c++)
        for (sps_idx i = 0; i < n; i++) b[(size_t)c * (size_t)ld + (size_t)i] = t_rand(&seed);
    return b;
}

/* Yref = alpha A X + beta Y0, column by column with sps_matrix_spmv_host. */
static inline void spmm_ref(const sps_matrix *A, int k, double alpha, const double *X, int64_t ldx,
                            double beta, const double *Y0, int64_t ldy, double *Yref)
{
    sps_idx m = sps_matrix_rows(A);
    memcpy(Yref, Y0, ((size_t)ldy * (size_t)k + 1) * sizeof *Yref);
    for (int c = 0; c < k; c++)
        sps_matrix_spmv_host(A, alpha, X + (size_t)c * (size_t)ldx, beta,
                             Yref + (size_t)c * (size_t)ldy);
    (void)m;
}

/* The largest componentwise error (comp_err) over the k columns; a padding
 * entry of Y that is no longer NaN counts as infinite. */
static inline double spmm_err(const sps_matrix *A, int k, double alpha, const double *X, int64_t ldx,
                              double beta, const double *Y0, const double *Y, const double *Yref,
                              int64_t ldy)
{
    sps_idx m = sps_matrix_rows(A);
    double worst = 0;
    for (int c = 0; c < k; c++) {
        size_t o = (size_t)c * (size_t)ldy;
        double e = comp_err(A, alpha, X + (size_t)c * (size_t)ldx, beta, Y0 + o, Y + o, Yref + o);
        if (!(e <= worst)) worst = e;
        for (int64_t i = m; i < ldy; i++)
            if (!isnan(Y[o + (size_t)i])) worst = INFINITY;
    }
    return worst;
}

/* 1 when the first k columns (m rows each) of two blocks are bitwise equal. */
static inline int spmm_same(const double *a, const double *b, sps_idx m, int k, int64_t ld)
{
    for (int c = 0; c < k; c++)
        if (m > 0 && memcmp(a + (size_t)c * (size_t)ld, b + (size_t)c * (size_t)ld,
                            (size_t)m * sizeof *a) != 0)
            return 0;
    return 1;
}

#endif /* SPS_TEST_SPMM_CASES_H */
