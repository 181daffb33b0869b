/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_analyze.c: sps_matrix_analyze on hand-checked
 * matrices, the segment and HYB helpers at their boundaries, and real
 * matrices against brute-force oracles and the shared set's README table */
#include "check.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_features analyze(const sps_matrix *A)
{
    sps_features f;
    memset(&f, 0xff, sizeof f);
    sps_status st = sps_matrix_analyze(NULL, A, &f);
    if (st != SPS_OK) T_FAIL("analyze", "%s", sps_last_error(NULL));
    return f;
}

static void test_diagonal(void)
{
    double a[25] = {1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 5};
    sps_matrix *A = t_matrix_from_dense(NULL, 5, 5, a);
    if (!A) return;
    sps_features f = analyze(A);
    /* one entry per row; one diagonal (offset 0), DIA 5 slots all full;
     * DRM: one 32-row segment x 1 diagonal = 32 slots, 27 of them padding;
     * HYB: 3 * 5 rows >= 5 at K = 1, none at K = 2 */
    T_OK(f.rows == 5 && f.cols == 5 && f.nnz == 5, "diag: 5 x 5, 5 entries");
    T_OK(f.row_min == 1 && f.row_max == 1 && f.row_mean == 1 && f.row_std == 0 && f.empty_rows == 0,
         "diag: row lengths 1/1/1, std 0");
    T_OK(f.diagonals == 1 && f.dia_fill == 0.0, "diag: 1 diagonal, DIA fill 0");
    T_OK(f.drm_slots == 32 && f.drm_fill == 27.0 / 32.0, "diag: DRM 32 slots, fill 27/32");
    T_OK(f.hyb_width == 1 && f.ell_fill == 0.0 && f.hyb_coo == 0, "diag: HYB width 1, no COO");
    T_OK(f.symmetric == 1 && f.pattern_symmetric == 1 && f.asymmetry == 0.0, "diag: symmetric");
    T_OK(f.missing_diagonal == 0 && f.zero_diagonal == 0 && f.negative_diagonal == 0,
         "diag: diagonal complete, positive");
    T_OK(f.dominant_rows == 5 && f.diag_dominant == 1, "diag: dominant");
    T_OK(f.analyze_ms >= 0, "diag: analyze_ms set");
    sps_matrix_destroy(A);
}

static void test_tridiagonal(void)
{
    double a[25] = {2, -1, 0, 0, 0, -1, 2, -1, 0, 0, 0, -1, 2, -1, 0, 0, 0, -1, 2, -1, 0, 0, 0, -1, 2};
    sps_matrix *A = t_matrix_from_dense(NULL, 5, 5, a);
    if (!A) return;
    sps_features f = analyze(A);
    /* lengths 2 3 3 3 2: mean 13/5 = 2.6, deviations -.6 .4 .4 .4 -.6,
     * variance (2*.36 + 3*.16)/5 = 0.24; diagonals -1 0 1: DIA 15 slots,
     * 2 zeros; DRM 3 * 32 = 96 slots; HYB: rows >= 3: 3, 9 >= 5, so K = 3,
     * ELL 15 slots holding 13; rows 0 and 4 strictly dominant (2 > 1),
     * rows 1-3 exactly (2 = 1 + 1) */
    T_OK(f.nnz == 13 && f.row_min == 2 && f.row_max == 3, "tridiag: 13 entries, rows 2..3");
    T_NEAR(f.row_mean, 2.6, 1e-15, "tridiag: mean 2.6");
    T_NEAR(f.row_std, sqrt(0.24), 1e-15, "tridiag: population std sqrt(0.24)");
    T_OK(f.diagonals == 3, "tridiag: 3 diagonals");
    T_NEAR(f.dia_fill, 2.0 / 15.0, 1e-15, "tridiag: DIA fill 2/15");
    T_OK(f.drm_slots == 96, "tridiag: DRM 96 slots");
    T_NEAR(f.drm_fill, 83.0 / 96.0, 1e-15, "tridiag: DRM fill 83/96");
    T_OK(f.hyb_width == 3 && f.hyb_coo == 0, "tridiag: HYB width 3, no COO");
    T_NEAR(f.ell_fill, 2.0 / 15.0, 1e-15, "tridiag: ELL fill 2/15");
    T_OK(f.symmetric == 1 && f.asymmetry == 0.0, "tridiag: symmetric");
    T_OK(f.dominant_rows == 5 && f.diag_dominant == 1, "tridiag: weakly dominant, two rows strictly");
    sps_matrix_destroy(A);
}

static void test_nonsym_empty_missing(void)
{
    double a[25] = {4, 0, 0, 1, 0,   /* row 0 */
                    2, 0, -1, 0, 0,  /* row 1: no diagonal entry */
                    0, 0, 0, 0, 0,   /* row 2: empty */
                    0, 0, 0, 5, 2,   /* row 3 */
                    0, 1, 0, 0, 3};  /* row 4 */
    sps_matrix *A = t_matrix_from_dense(NULL, 5, 5, a);
    if (!A) return;
    sps_features f = analyze(A);
    /* lengths 2 2 0 2 2: mean 1.6, variance (4*.16 + 2.56)/5 = 0.64;
     * offsets 0 3 | -1 1 | | 0 1 | -3 0: {-3,-1,0,1,3} = 5 diagonals, DIA 25
     * slots for 8 entries; DRM 5 * 32 = 160; HYB: 4 rows >= 2, 12 >= 5, K = 2,
     * ELL 10 slots holding 8.
     * A - A': pairs (0,1): 0 vs 2, (0,3): 1 vs 0, (1,2): -1 vs 0, (1,4): 0 vs 1,
     * (3,4): 2 vs 0; each difference appears twice: 2*(4+1+1+1+4) = 22;
     * ||A||^2 = 16+1+4+1+25+4+1+9 = 61.
     * Dominance: row 0 yes, row 1 no (0 < 3), row 2 yes (0 >= 0), rows 3, 4 yes. */
    T_OK(f.nnz == 8 && f.row_min == 0 && f.row_max == 2 && f.empty_rows == 1,
         "nonsym: 8 entries, one empty row");
    T_NEAR(f.row_mean, 1.6, 1e-15, "nonsym: mean 1.6");
    T_NEAR(f.row_std, 0.8, 1e-15, "nonsym: std 0.8");
    T_OK(f.diagonals == 5, "nonsym: 5 diagonals (got %d)", f.diagonals);
    T_NEAR(f.dia_fill, 17.0 / 25.0, 1e-15, "nonsym: DIA fill 17/25");
    T_OK(f.drm_slots == 160, "nonsym: DRM 160 slots");
    T_OK(f.hyb_width == 2 && f.hyb_coo == 0, "nonsym: HYB width 2");
    T_NEAR(f.ell_fill, 0.2, 1e-15, "nonsym: ELL fill 2/10");
    T_OK(f.symmetric == 0 && f.pattern_symmetric == 0, "nonsym: neither symmetric nor pattern-symmetric");
    T_NEAR(f.asymmetry, sqrt(22.0 / 61.0), 1e-15, "nonsym: asymmetry sqrt(22/61)");
    T_OK(f.missing_diagonal == 2 && f.zero_diagonal == 0 && f.negative_diagonal == 0,
         "nonsym: rows 1 and 2 lack a diagonal entry");
    T_OK(f.dominant_rows == 4 && f.diag_dominant == 0, "nonsym: 4 dominant rows, not dominant");
    sps_matrix_destroy(A);
}

static void test_zero_diagonal(void)
{
    /* explicit zero at (0,0): needs the triplet path (from_dense drops zeros) */
    sps_idx rp[] = {0, 2, 5, 8, 11, 13};
    sps_idx ci[] = {0, 1, 0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4};
    double v[] = {0, 1, 1, -3, 1, 1, 2, 1, 1, 2, 1, 1, 1};
    sps_matrix *A = NULL;
    if (sps_matrix_create_csr(NULL, 5, 5, rp, ci, v, &A) != SPS_OK) {
        T_FAIL("zero diag matrix", "%s", sps_last_error(NULL));
        return;
    }
    sps_features f = analyze(A);
    /* symmetric tridiagonal, off-diagonals 1; diagonal 0 -3 2 2 1.
     * Dominance: row 0: 0 < 1 no; row 1: 3 > 2 strict; rows 2, 3: 2 = 2;
     * row 4: 1 = 1. */
    T_OK(f.nnz == 13 && f.missing_diagonal == 0, "zero diag: stored, so not missing");
    T_OK(f.zero_diagonal == 1 && f.negative_diagonal == 1, "zero diag: one zero, one negative");
    T_OK(f.dominant_rows == 4 && f.diag_dominant == 0, "zero diag: 4 dominant rows, not dominant");
    T_OK(f.symmetric == 1 && f.pattern_symmetric == 1, "zero diag: symmetric");
    sps_matrix_destroy(A);
}

static void test_skew(void)
{
    double a[25] = {0, 1, 0, 0, 5, -1, 0, 2, 0, 0, 0, -2, 0, 3, 0, 0, 0, -3, 0, 4, -5, 0, 0, -4, 0};
    sps_matrix *A = t_matrix_from_dense(NULL, 5, 5, a);
    if (!A) return;
    sps_features f = analyze(A);
    /* A' = -A: ||A - A'|| = 2 ||A||; offsets +-1, +-4; no diagonal at all,
     * so no row is dominant (0 < off) */
    T_OK(f.nnz == 10 && f.row_min == 2 && f.row_max == 2 && f.row_std == 0, "skew: 2 per row");
    T_OK(f.pattern_symmetric == 1 && f.symmetric == 0, "skew: pattern symmetric only");
    T_NEAR(f.asymmetry, 2.0, 1e-15, "skew: asymmetry 2");
    T_OK(f.diagonals == 4 && f.missing_diagonal == 5 && f.dominant_rows == 0,
         "skew: 4 diagonals, 5 missing diagonal entries, no dominant row");
    sps_matrix_destroy(A);
}

static void test_rectangular_and_empty(void)
{
    double a[15] = {1, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0, 0, 0, -1, 1};
    sps_matrix *A = t_matrix_from_dense(NULL, 3, 5, a);
    if (A) {
        sps_features f = analyze(A);
        /* offsets 0 4 | 0 | 1 2: {0,1,2,4}; DIA 4 * 3 = 12 slots for 5;
         * diagonal positions exist for rows 0..2: row 2 lacks (2,2) */
        T_OK(f.rows == 3 && f.cols == 5 && f.nnz == 5 && f.diagonals == 4, "3x5: 4 diagonals");
        T_NEAR(f.dia_fill, 7.0 / 12.0, 1e-15, "3x5: DIA fill 7/12");
        T_OK(f.missing_diagonal == 1 && f.symmetric == 0 && f.pattern_symmetric == 0 &&
                 isnan(f.asymmetry),
             "3x5: one missing diagonal, not symmetric, asymmetry undefined (NaN)");
        T_OK(f.dominant_rows == 1 && f.drm_slots == 4 * 32, "3x5: 1 dominant row, 128 DRM slots");
        sps_matrix_destroy(A);
    }
    sps_idx rp0[1] = {0};
    sps_matrix *Z = NULL;
    if (sps_matrix_create_csr(NULL, 0, 0, rp0, NULL, NULL, &Z) == SPS_OK) {
        sps_features f = analyze(Z);
        T_OK(f.rows == 0 && f.nnz == 0 && f.row_min == 0 && f.row_max == 0 && f.row_mean == 0 &&
                 f.diagonals == 0 && f.dia_fill == 0 && f.drm_slots == 0 && f.hyb_width == 0 &&
                 f.symmetric == 1 && f.asymmetry == 0 && f.diag_dominant == 0,
             "0x0: every feature zero, symmetric vacuously");
        sps_matrix_destroy(Z);
    } else {
        T_FAIL("0x0 matrix", "%s", sps_last_error(NULL));
    }
    T_OK(sps_matrix_analyze(NULL, NULL, NULL) == SPS_ERR_INVALID_ARG, "NULL arguments rejected");
}

/* Tridiagonal n x n as a CSR. */
static sps_matrix *tridiag(sps_idx n)
{
    sps_idx *ri = malloc(3 * (size_t)n * sizeof *ri), *ci = malloc(3 * (size_t)n * sizeof *ci);
    double *v = malloc(3 * (size_t)n * sizeof *v);
    int64_t k = 0;
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < n) {
                ri[k] = i; ci[k] = j; v[k++] = i == j ? 4 : -1;
            }
    sps_matrix *A = NULL;
    if (sps_matrix_create_coo(NULL, n, n, k, ri, ci, v, &A) != SPS_OK) T_FAIL("tridiag", "%s", sps_last_error(NULL));
    free(ri); free(ci); free(v);
    return A;
}

static void test_segments(void)
{
    /* n = 31, 32: one segment with 3 diagonals = 96; n = 33: a second
     * segment holding row 32 alone, offsets -1 and 0, padded to 32 rows = 64 */
    sps_idx ns[] = {31, 32, 33, 64, 65};
    int64_t want[] = {96, 96, 160, 192, 256};
    for (int k = 0; k < 5; k++) {
        sps_matrix *A = tridiag(ns[k]);
        if (!A) continue;
        sps_features f = analyze(A);
        T_OK(f.drm_slots == want[k] && sps__segmented_dia_slots(&A->A, 32) == want[k],
             "tridiag n = %d: drm_slots %lld (got %lld)", ns[k], (long long)want[k], (long long)f.drm_slots);
        /* seg = 1: each row's own offsets, so exactly nnz; seg = n: plain DIA */
        T_OK(sps__segmented_dia_slots(&A->A, 1) == A->A.nnz &&
                 sps__segmented_dia_slots(&A->A, ns[k]) == 3 * (int64_t)ns[k],
             "tridiag n = %d: seg 1 gives nnz, seg n gives DIA's 3n", ns[k]);
        sps_matrix_destroy(A);
    }
    T_OK(sps__segmented_dia_slots(NULL, 32) < 0, "segmented slots: NULL refused");
}

static void test_hyb_width(void)
{
    /* 100 rows: L rows of length 5, row 99 of length 100, the rest length 1.
     * L = 33: 34 rows reach 5 and 3*34 >= 100, so K = 5; L = 32: 3*33 < 100,
     * K = 1. The very long row alone never widens K beyond 5. */
    for (int longrows = 32; longrows <= 33; longrows++) {
        sps_idx *ri = malloc(600 * sizeof *ri), *ci = malloc(600 * sizeof *ci);
        double *v = malloc(600 * sizeof *v);
        int64_t k = 0;
        for (sps_idx i = 0; i < 100; i++) {
            int len = i == 99 ? 100 : i < longrows ? 5 : 1;
            for (int j = 0; j < len; j++) { ri[k] = i; ci[k] = (i + j) % 100; v[k++] = 1; }
        }
        sps_matrix *A = NULL;
        if (sps_matrix_create_coo(NULL, 100, 100, k, ri, ci, v, &A) == SPS_OK) {
            sps_idx K = sps__hyb_width(&A->A);
            sps_features f = analyze(A);
            int64_t coo = longrows == 33 ? 95 : 4 * 32 + 99;
            T_OK(K == (longrows == 33 ? 5 : 1) && f.hyb_width == K && f.hyb_coo == coo,
                 "hyb width with %d long rows: K = %d, COO %lld (got %d, %lld)", longrows,
                 longrows == 33 ? 5 : 1, (long long)coo, K, (long long)f.hyb_coo);
            T_OK((int64_t)K * 100 <= 3 * f.nnz, "hyb: ELL slots <= 3 nnz");
            sps_matrix_destroy(A);
        }
        free(ri); free(ci); free(v);
    }
}

/* ---- real matrices ------------------------------------------------------ */

/* "missing diag" column of /work/shared/matrices/README.md (the bundled files
 * are the same files). */
static const struct {
    const char *name;
    int missing;
} missing_table[] = {
    {"1138_bus", 0}, {"494_bus", 0}, {"add20", 0}, {"add32", 0}, {"bayer10", 13433},
    {"bcsstk09", 0}, {"bcsstk13", 0}, {"bcsstk15", 0}, {"bcsstk18", 0}, {"bloweya", 20003},
    {"cage10", 0}, {"cage11", 0}, {"cavity10", 674}, {"circuit_2", 9}, {"cryg2500", 0},
    {"dw2048", 0}, {"fs_541_1", 0}, {"gr_30_30", 0}, {"jpwh_991", 0}, {"lns_3937", 734},
    {"lund_a", 0}, {"mcfe", 0}, {"memplus", 0}, {"mesh2e1", 0}, {"mhd4800a", 2995},
    {"nos2", 0}, {"nos3", 0}, {"nos6", 0}, {"olm1000", 0}, {"orsirr_1", 0},
    {"Pd", 0}, {"pde2961", 0}, {"PGPgiantcompo", 10680}, {"pores_2", 0}, {"raefsky1", 0},
    {"rdb2048", 0}, {"sherman1", 0}, {"sherman3", 0}, {"sherman5", 0}, {"Si2", 0},
    {"steam2", 0}, {"stokes64", 4096}, {"Trefethen_2000", 0}, {"wang4", 0}, {"west0479", 471},
};

static int expected_missing(const char *name)
{
    for (size_t k = 0; k < sizeof missing_table / sizeof *missing_table; k++)
        if (strcmp(missing_table[k].name, name) == 0) return missing_table[k].missing;
    return -1;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

typedef struct ent {
    sps_idx r, c;
    double v;
} ent;

static int cmp_ent(const void *a, const void *b)
{
    const ent *x = a, *y = b;
    if (x->r != y->r) return (x->r > y->r) - (x->r < y->r);
    return (x->c > y->c) - (x->c < y->c);
}

/* Independent oracles: sorting instead of markers, histograms instead of
 * bisection, sorted triplets instead of a CSR transpose. */
static void oracle_check(const char *name, const sps_csr *A, const sps_features *f)
{
    int64_t *off = malloc(((size_t)A->nnz + 1) * sizeof *off);
    for (sps_idx r = 0; r < A->nrows; r++)
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) off[p] = (int64_t)A->col_idx[p] - r;
    /* distinct diagonals */
    qsort(off, (size_t)A->nnz, sizeof *off, cmp_i64);
    int64_t nd = 0;
    for (sps_idx p = 0; p < A->nnz; p++) nd += p == 0 || off[p] != off[p - 1];
    /* DRM slots: per 32-row segment, sort its offsets */
    int64_t slots = 0;
    for (sps_idx s0 = 0; s0 < A->nrows; s0 += 32) {
        sps_idx s1 = s0 + 32 < A->nrows ? s0 + 32 : A->nrows, b = A->row_ptr[s0], e = A->row_ptr[s1];
        for (sps_idx r = s0; r < s1; r++)
            for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) off[p] = (int64_t)A->col_idx[p] - r;
        qsort(off + b, (size_t)(e - b), sizeof *off, cmp_i64);
        for (sps_idx p = b; p < e; p++) slots += 32 * (p == b || off[p] != off[p - 1]);
    }
    free(off);
    /* HYB width from the histogram, scanning down from the longest row */
    sps_idx K = f->row_max;
    for (;; K--) {
        int64_t c = 0;
        for (sps_idx r = 0; r < A->nrows; r++) c += A->row_ptr[r + 1] - A->row_ptr[r] >= K;
        if (K == 0 || 3 * c >= A->nrows) break;
    }
    /* symmetry from sorted (r,c) and (c,r) triplets */
    ent *a = malloc(((size_t)A->nnz + 1) * sizeof *a), *t = malloc(((size_t)A->nnz + 1) * sizeof *t);
    for (sps_idx r = 0; r < A->nrows; r++)
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
            a[p] = (ent){r, A->col_idx[p], A->val[p]};
            t[p] = (ent){A->col_idx[p], r, A->val[p]};
        }
    qsort(t, (size_t)A->nnz, sizeof *t, cmp_ent);
    int same_pat = 1, same_val = 1;
    for (sps_idx p = 0; p < A->nnz; p++) {
        if (a[p].r != t[p].r || a[p].c != t[p].c) same_pat = 0;
        else if (a[p].v != t[p].v) same_val = 0;
    }
    free(a);
    free(t);
    T_OK(f->diagonals == nd && f->drm_slots == slots && f->hyb_width == K,
         "%s: diagonals %lld, drm_slots %lld, hyb_width %d match the brute-force oracles (got %d, %lld, %d)",
         name, (long long)nd, (long long)slots, K, f->diagonals, (long long)f->drm_slots, f->hyb_width);
    T_OK(f->pattern_symmetric == same_pat && f->symmetric == (same_pat && same_val) &&
             (f->symmetric == (f->asymmetry == 0.0) || !f->pattern_symmetric),
         "%s: symmetry %d/%d matches sorted triplets, asymmetry %.3g consistent", name,
         f->symmetric, f->pattern_symmetric, f->asymmetry);
}

static void test_real(void)
{
    const char *const *names = t_real_matrices();
    int n = 0;
    for (int k = 0; names[k]; k++) {
        const char *path = t_real_matrix_path(names[k]);
        if (!path) continue;
        sps_matrix *A = NULL;
        sps_status st = sps_matrix_read(NULL, path, &A);
        if (st != SPS_OK) {
            T_FAIL(names[k], "read: %s", sps_last_error(NULL));
            continue;
        }
        sps_features f = analyze(A);
        n++;
        int want = expected_missing(names[k]);
        if (want >= 0)
            T_OK(f.missing_diagonal == want, "%s: missing_diagonal %d as in the README table (got %d)",
                 names[k], want, f.missing_diagonal);
        const char *kind = t_manifest_kind(names[k]);
        if (kind && (strcmp(kind, "spd") == 0 || strcmp(kind, "sym-indefinite") == 0))
            T_OK(f.symmetric == 1 && f.asymmetry == 0.0, "%s (%s): symmetric", names[k], kind);
        if (kind && strcmp(kind, "spd") == 0)
            T_OK(f.negative_diagonal == 0 && f.zero_diagonal == 0 && f.missing_diagonal == 0,
                 "%s (spd): positive diagonal", names[k]);
        if (kind && strcmp(kind, "nonsym") == 0 && f.asymmetry > 0)
            T_OK(f.symmetric == 0, "%s (nonsym): not symmetric (asymmetry %.3g)", names[k], f.asymmetry);
        oracle_check(names[k], &A->A, &f);
        sps_matrix_destroy(A);
    }
    /* lns_3937 (examples/data) is not in the bundled list */
    const char *lns = t_real_matrix_path("lns_3937");
    sps_matrix *A = NULL;
    if (lns && sps_matrix_read(NULL, lns, &A) == SPS_OK) {
        sps_features f = analyze(A);
        T_OK(f.missing_diagonal == 734 && f.symmetric == 0, "lns_3937: 734 missing diagonal entries");
        sps_matrix_destroy(A);
    }
    T_OK(n > 0, "real matrices analyzed: %d", n);
}

static void test_generated_big(void)
{
    /* analysis stays O(nnz): a 4.1M-row matrix in well under the test budget */
    sps_matrix *A = NULL;
    if (sps_matrix_generate(NULL, "poisson3d:100", &A) != SPS_OK) {
        T_FAIL("poisson3d:100", "%s", sps_last_error(NULL));
        return;
    }
    sps_features f = analyze(A);
    T_OK(f.symmetric && f.diagonals == 7 && f.hyb_width == 7 && f.drm_fill < 0.01,
         "poisson3d:100: symmetric, 7 diagonals, HYB width 7, DRM fill %.4f (%.0f ms)", f.drm_fill,
         f.analyze_ms);
    sps_matrix_destroy(A);
    /* random columns: most entries far from the diagonal, so the fused cursor
     * merge gives up and the symmetry comes from the transpose; the
     * brute-force oracles check both the structure and the symmetry */
    if (sps_matrix_generate(NULL, "powerlaw:400000,4,1", &A) != SPS_OK) {
        T_FAIL("powerlaw:400000,4,1", "%s", sps_last_error(NULL));
        return;
    }
    f = analyze(A);
    oracle_check("powerlaw:400000,4,1", &A->A, &f);
    T_OK(f.symmetric == 0 && f.asymmetry > 0.1 && f.diag_dominant == 1,
         "powerlaw: nonsymmetric (asymmetry %.3f), dominant", f.asymmetry);
    sps_matrix_destroy(A);
}

/* A symmetric tridiagonal matrix with a mirrored pair of far entries and one
 * unmatched far entry: the cursor merge meets them past other rows. */
static void test_far_pairs(void)
{
    for (sps_idx n = 1023; n <= 1025; n++) {
        t_triplets t = {0};
        for (sps_idx i = 0; i < n; i++) {
            t_trip_add(&t, i, i, 4);
            if (i > 0) t_trip_add(&t, i, i - 1, -1);
            if (i + 1 < n) t_trip_add(&t, i, i + 1, -1);
        }
        t_trip_add(&t, 3, n - 1, 0.5);
        t_trip_add(&t, n - 1, 3, 0.5);
        t_trip_add(&t, 0, n - 2, 2.0); /* no (n-2, 0) */
        sps_matrix *A = t_trip_matrix(NULL, n, n, &t);
        if (!A) continue;
        sps_features f = analyze(A);
        oracle_check("far pairs", &A->A, &f);
        /* ||A - A'||^2 = 2 * 2^2; ||A||^2 = 16 n + 2 (n - 1) + 2 * 0.25 + 4 */
        double want = sqrt(8.0 / (16.0 * n + 2.0 * (n - 1) + 0.5 + 4.0));
        T_NEAR(f.asymmetry, want, 1e-14, "far pairs n = %d: asymmetry %.6g (got %.6g)", n, want,
               f.asymmetry);
        T_OK(f.pattern_symmetric == 0 && f.diagonals == 6,
             "far pairs n = %d: 6 diagonals (got %d)", n, f.diagonals);
        sps_matrix_destroy(A);
    }
}

static void test_alloc_failure(void)
{
    sps_matrix *A = tridiag(40);
    if (!A) return;
    int fails = 0, bad = 0;
    for (long k = 1; k < 12; k++) {
        sps_features f;
        sps__fail_alloc_after(k);
        sps_status st = sps_matrix_analyze(NULL, A, &f);
        sps__fail_alloc_after(0);
        if (st == SPS_ERR_NO_MEMORY) fails++;
        else if (st != SPS_OK) bad++;
    }
    T_OK(fails >= 3 && bad == 0, "analysis reports injected allocation failures (%d)", fails);
    sps_matrix_destroy(A);
}

int main(void)
{
    test_diagonal();
    test_tridiagonal();
    test_nonsym_empty_missing();
    test_zero_diagonal();
    test_skew();
    test_rectangular_and_empty();
    test_segments();
    test_hyb_width();
    test_generated_big();
    test_far_pairs();
    test_alloc_failure();
    test_real();
    return t_done();
}
