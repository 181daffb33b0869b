/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/diag_check.h: matrices and checks shared by the drm, dia and
 * merge tests (static helpers; included by test_drm.c, test_dia.c, test_merge.c
 * and tests/gpu/test_diag_gpu.c) */
#ifndef SPS_TEST_DIAG_CHECK_H
#define SPS_TEST_DIAG_CHECK_H

#include "check.h"
#include "core/internal.h"
#include "spmv/backend.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building matrices ---------------------------------------------------- */

typedef struct dc_coo {
    sps_idx n, ncols;
    int64_t nnz, cap;
    sps_idx *r, *c;
    double *v;
} dc_coo;

static inline void dc_add(dc_coo *m, sps_idx r, sps_idx c, double v)
{
    if (m->nnz == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 256;
        m->r = realloc(m->r, (size_t)m->cap * sizeof *m->r);
        m->c = realloc(m->c, (size_t)m->cap * sizeof *m->c);
        m->v = realloc(m->v, (size_t)m->cap * sizeof *m->v);
        if (!m->r || !m->c || !m->v) {
            fprintf(stderr, "test: out of memory\n");
            exit(1);
        }
    }
    m->r[m->nnz] = r;
    m->c[m->nnz] = c;
    m->v[m->nnz] = v;
    m->nnz++;
}

/* The matrix of the triplets (duplicates summed); frees them. */
static inline sps_matrix *dc_finish(sps_context *ctx, dc_coo *m)
{
    sps_matrix *A = NULL;
    sps_status st = sps_matrix_create_coo(ctx, m->n, m->ncols, m->nnz, m->r, m->c, m->v, &A);
    if (st != SPS_OK) T_FAIL("build test matrix", "%s", sps_last_error(ctx));
    free(m->r);
    free(m->c);
    free(m->v);
    memset(m, 0, sizeof *m);
    return A;
}

/* A sparse-diagonal matrix as the DRM paper targets: a full main diagonal, the
 * diagonals ofs[0..k) kept in runs (broken diagonals: each run of random length
 * up to 2*runlen is kept with probability keep), and nscatter scattered points. */
static inline sps_matrix *dc_banded(sps_context *ctx, sps_idx n, const sps_idx *ofs, int k, double keep,
                             sps_idx runlen, int64_t nscatter, uint64_t seed)
{
    dc_coo m = {n, n, 0, 0, NULL, NULL, NULL};
    for (sps_idx r = 0; r < n; r++) dc_add(&m, r, r, 4.0 + t_rand(&seed));
    for (int q = 0; q < k; q++) {
        sps_idx r = ofs[q] < 0 ? -ofs[q] : 0;
        while (r < n && r + ofs[q] < n) {
            sps_idx len = 1 + (sps_idx)((t_rand(&seed) + 1.0) * runlen);
            int on = t_rand(&seed) < 2.0 * keep - 1.0;
            for (sps_idx e = r + len; r < e && r < n && r + ofs[q] < n; r++)
                if (on && ofs[q] != 0) dc_add(&m, r, r + ofs[q], t_rand(&seed));
        }
    }
    for (int64_t s = 0; s < nscatter && n > 0; s++) {
        sps_idx r = (sps_idx)((t_rand(&seed) + 1.0) * 0.5 * n);
        sps_idx c = (sps_idx)((t_rand(&seed) + 1.0) * 0.5 * n);
        if (r >= n) r = n - 1;
        if (c >= n) c = n - 1;
        dc_add(&m, r, c, t_rand(&seed));
    }
    return dc_finish(ctx, &m);
}

/* Row r holds len[r] entries at consecutive columns (wrapping) from a random start. */
static inline sps_matrix *dc_rowlens(sps_context *ctx, sps_idx n, sps_idx ncols, const sps_idx *len,
                              uint64_t seed)
{
    dc_coo m = {n, ncols, 0, 0, NULL, NULL, NULL};
    for (sps_idx r = 0; r < n; r++) {
        sps_idx start = (sps_idx)((t_rand(&seed) + 1.0) * 0.5 * ncols) % (ncols ? ncols : 1);
        for (sps_idx j = 0; j < len[r] && j < ncols; j++)
            dc_add(&m, r, (start + j) % ncols, t_rand(&seed));
    }
    return dc_finish(ctx, &m);
}

/* 8 x 8 matrix consistent with every number the paper gives for matrix B
 * (Figure 5): 18 nonzeros on 4 diagonals {-1, 0, 1, 2}; DIA stores 32 (14
 * zeros), nrows = 4 stores 24 (6 zeros), nrows = 2 stores 20 (2 zeros) with
 * operand counts {8, 6, 4, 2}. a(r, c) = 10 r + c + 1. */
static inline sps_matrix *dc_matrix_b(sps_context *ctx)
{
    static const sps_idx rc[][2] = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {1, 3},
                                    {2, 1}, {2, 2}, {2, 3}, {3, 2}, {3, 3}, {4, 4}, {4, 5},
                                    {5, 5}, {5, 6}, {6, 6}, {7, 7}};
    dc_coo m = {8, 8, 0, 0, NULL, NULL, NULL};
    for (size_t k = 0; k < sizeof rc / sizeof *rc; k++)
        dc_add(&m, rc[k][0], rc[k][1], 10.0 * rc[k][0] + rc[k][1] + 1);
    return dc_finish(ctx, &m);
}

/* Call fn on each matrix, made on ctx: the generated specs[0..n), or the real
 * matrices (t_each_generated, t_each_real). */
typedef t_matrix_fn dc_matrix_fn;

static inline void dc_each_gen(sps_context *ctx, const char *test, const char *const *specs,
                               size_t n, dc_matrix_fn fn)
{
    t_each_generated(ctx, ctx, test, specs, n, fn);
}

static inline void dc_each_real(sps_context *ctx, const char *test, dc_matrix_fn fn)
{
    t_each_real(ctx, ctx, test, fn);
}

/* ---- checking against the CSR reference ------------------------------------ */

#define DC_GUARD 64

/* max_i |y - yref|_i / (|alpha| (|A||x|)_i + |beta y0_i|) (beta = 0 ignores
 * y0; 0/0 counts 0); INFINITY if some y_i is not finite. */
static inline double dc_rel_err(const sps_matrix *A, const double *x, const double *y0,
                                double alpha, double beta, const double *y, const double *yref)
{
    const sps_idx *rp, *ci;
    const double *av;
    sps_matrix_csr(A, &rp, &ci, &av);
    double err = 0.0;
    for (sps_idx r = 0; r < sps_matrix_rows(A); r++) {
        if (!isfinite(y[r])) return INFINITY;
        double s = 0.0;
        for (sps_idx p = rp[r]; p < rp[r + 1]; p++) s += fabs(av[p] * x[ci[p]]);
        const double scale = fabs(alpha) * s + (beta == 0.0 ? 0.0 : fabs(beta * y0[r]));
        const double d = fabs(y[r] - yref[r]);
        if (d > 0 && d / (scale > 0 ? scale : 1e-300) > err) err = d / (scale > 0 ? scale : 1e-300);
    }
    return err;
}

/* Relative error of the operator's apply (a host context: apply_host) against
 * the CSR loop, max over rows of |y - yref| / (|alpha| (|A||x|)_i + |beta y0_i|).
 * x sits between NaN guards (a read outside [0, ncols) poisons y), y is
 * followed by guard values that must stay untouched, beta == 0 starts from a
 * y full of NaN. Returns INFINITY on a guard hit or a non-finite result. */
static inline double dc_host_err(sps_operator *op, const sps_matrix *A, double alpha, double beta,
                          uint64_t seed)
{
    const sps_idx n = sps_matrix_rows(A), nc = sps_matrix_cols(A);
    double *xb = malloc(((size_t)nc + 2 * DC_GUARD) * sizeof *xb);
    double *y = malloc(((size_t)n + DC_GUARD) * sizeof *y);
    double *y0 = malloc(((size_t)n + 1) * sizeof *y0);
    double *yref = malloc(((size_t)n + 1) * sizeof *yref);
    if (!xb || !y || !y0 || !yref) exit(1);
    double *x = xb + DC_GUARD;
    for (sps_idx k = 0; k < DC_GUARD; k++) xb[k] = x[nc + k] = NAN;
    for (sps_idx c = 0; c < nc; c++) x[c] = t_rand(&seed);
    for (sps_idx r = 0; r < n; r++) y0[r] = beta == 0.0 ? NAN : t_rand(&seed);
    memcpy(y, y0, (size_t)n * sizeof *y);
    memcpy(yref, y0, (size_t)n * sizeof *y);
    for (sps_idx k = 0; k < DC_GUARD; k++) y[n + k] = 12345.0;
    sps_matrix_spmv_host(A, alpha, x, beta, yref);
    double err = sps_operator_apply(op, alpha, x, beta, y) == SPS_OK
                     ? dc_rel_err(A, x, y0, alpha, beta, y, yref)
                     : INFINITY;
    for (sps_idx k = 0; k < DC_GUARD; k++)
        if (y[n + k] != 12345.0) err = INFINITY;
    free(xb);
    free(y);
    free(y0);
    free(yref);
    return err;
}

/* Build spec on A (host context) and check it for beta = 0 (y NaN) and
 * beta = -0.5 within tol. */
static inline void dc_check_spec(sps_context *ctx, const sps_matrix *A, const char *spec,
                          const char *what, double tol)
{
    sps_operator *op = NULL;
    sps_status st = sps_operator_create(ctx, A, spec, NULL, &op);
    if (st != SPS_OK) {
        T_FAIL("operator", "%s %s: %s", spec, what, sps_last_error(ctx));
        return;
    }
    const double e0 = dc_host_err(op, A, 1.5, 0.0, 7);
    const double e1 = dc_host_err(op, A, -0.75, -0.5, 11);
    T_OK(e0 <= tol && e1 <= tol, "%s = CSR on %s (err %.2g beta=0 NaN y, %.2g beta=-0.5)", spec,
         what, e0, e1);
    sps_operator_destroy(op);
}

#endif
