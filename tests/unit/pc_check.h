/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/pc_check.h: helpers shared by the preconditioner tests
 * (static; included by test_precond.c, test_cheby.c, test_bjacobi.c,
 * test_precond_gpu.c, test_amg_gpu.c,
 * test_ilu_sweeps.c) */
#ifndef SPS_TEST_PC_CHECK_H
#define SPS_TEST_PC_CHECK_H

#include "check.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A matrix built from poisson2d:N on ctx: add(t, i, j, v) for each of its
 * entries appends the new matrix's entries; m x m. NULL if it cannot be made. */
typedef void (*pc_entry_fn)(t_triplets *t, sps_idx i, sps_idx j, double v);

static inline sps_matrix *pc_from_poisson2d(sps_context *ctx, int N, sps_idx m, pc_entry_fn add)
{
    sps_matrix *P = NULL;
    char spec[32];
    snprintf(spec, sizeof spec, "poisson2d:%d", N);
    if (sps_matrix_generate(ctx, spec, &P) != SPS_OK) return NULL;
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(P, &rp, &ci, &v);
    t_triplets t = {0};
    for (sps_idx i = 0; i < N * N; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) add(&t, i, ci[p], v[p]);
    sps_matrix_destroy(P);
    return t_trip_matrix(ctx, m, m, &t);
}

/* A spec that sps_precond_create must refuse with SPS_ERR_INVALID_ARG, and a
 * part of the error message it must give. */
typedef struct pc_bad {
    const char *spec, *msg;
} pc_bad;

static inline void pc_check_refused(sps_context *ctx, const sps_matrix *A, const pc_bad *bad, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        sps_precond *pc = (sps_precond *)&pc;
        sps_status st = sps_precond_create(ctx, A, bad[k].spec, &pc);
        T_OK(st == SPS_ERR_INVALID_ARG && pc == NULL && strstr(sps_last_error(ctx), bad[k].msg),
             "'%s' refused: %s", bad[k].spec, sps_last_error(ctx));
    }
}

/* Each of types[0..n), built on ctx for a 0 x 0 matrix made on mctx, applies
 * to NULL vectors: checks named "PREFIXTYPE on 0x0". */
static inline void pc_check_empty(sps_context *mctx, sps_context *ctx, const char *const *types, int n,
                                  const char *prefix)
{
    sps_idx r0[] = {0};
    sps_matrix *A = NULL;
    if (sps_matrix_create_csr(mctx, 0, 0, r0, NULL, NULL, &A) != SPS_OK) return;
    for (int t = 0; t < n; t++) {
        sps_precond *pc = NULL;
        sps_status st = sps_precond_create(ctx, A, types[t], &pc);
        T_OK(st == SPS_OK && sps_precond_apply(pc, NULL, NULL) == SPS_OK, "%s%s on 0x0", prefix, types[t]);
        sps_precond_destroy(pc);
    }
    sps_matrix_destroy(A);
}

/* Build `spec` on A, apply it once to r. */
static inline sps_status pc_apply(sps_context *ctx, const sps_matrix *A, const char *spec,
                                  const double *r, double *z)
{
    sps_precond *pc = NULL;
    sps_status st = sps_precond_create(ctx, A, spec, &pc);
    if (st == SPS_OK) st = sps_precond_apply(pc, r, z);
    sps_precond_destroy(pc);
    return st;
}

/* Iterations of `method` with `spec` (built on op when op is given) on
 * A x = b, b_i = 1 + (i mod 7) / 10, x0 = 0; -1 if anything fails or the solve
 * does not converge. */
static inline int64_t pc_iterations(sps_context *ctx, const sps_matrix *A, sps_operator *op,
                                    sps_method method, const char *spec)
{
    sps_idx n = sps_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    for (sps_idx i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.1;
    sps_operator *own = NULL;
    sps_precond *pc = NULL;
    sps_solver *s = NULL;
    sps_solve_info in;
    int64_t its = -1;
    if ((op || sps_operator_create(ctx, A, "csr-vector", NULL, &own) == SPS_OK) &&
        sps_precond_create_ex(ctx, A, op ? op : own, spec, &pc) == SPS_OK &&
        sps_solver_create(ctx, &s) == SPS_OK && sps_solver_set_method(s, method) == SPS_OK &&
        sps_solver_set_maxit(s, 20000) == SPS_OK &&
        sps_solve(s, op ? op : own, pc, b, x, &in) == SPS_OK && in.reason > 0)
        its = in.iterations;
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(own);
    free(b);
    free(x);
    return its;
}

/* M^-1 of a host preconditioner of size n, densely from unit vectors: checks
 * that it is symmetric (to tol relative to its largest entry) and that
 * x'M^-1x > 0 on 50 random x. */
static inline void pc_check_spd(const char *what, sps_precond *pc, int n, double tol)
{
    double *Mi = malloc((size_t)n * n * sizeof *Mi), *e = calloc((size_t)n, sizeof *e);
    double asym = 0, big = 0, minq = INFINITY;
    for (int j = 0; j < n; j++) {
        e[j] = 1;
        sps_precond_apply(pc, e, Mi + (size_t)j * n); /* column j */
        e[j] = 0;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            asym = fmax(asym, fabs(Mi[i * n + j] - Mi[j * n + i]));
            big = fmax(big, fabs(Mi[i * n + j]));
        }
    uint64_t seed = 17;
    for (int t = 0; t < 50; t++) {
        double q = 0;
        for (int i = 0; i < n; i++) e[i] = t_rand(&seed);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) q += e[i] * Mi[i * n + j] * e[j];
        minq = fmin(minq, q);
    }
    T_OK(asym <= tol * big && sps_precond_symmetric(pc),
         "%s: M^-1 symmetric (%.2g of %.2g), declared so", what, asym, big);
    T_OK(minq > 0, "%s: x'M^-1 x > 0 on 50 random x (min %.3g)", what, minq);
    free(Mi);
    free(e);
}

/* Medians of 5, in ms: the setup of a fresh `type` on B (*full_ms), and
 * the numeric refresh of one built on A (*refresh_ms) onto B, or onto B and
 * A in turn when `alternate`. 0 if a build or refresh fails (the message in
 * ctx). A measurement for '#' lines, not an assertion. */
static inline int pc_refresh_medians(sps_context *ctx, const sps_matrix *A, const sps_matrix *B,
                                     const char *type, int alternate, double *full_ms, double *refresh_ms)
{
    double full[5], upd[5];
    sps_precond *pc = NULL;
    int ok = 1;
    for (int k = 0; k < 5 && ok; k++) {
        sps_precond *f = NULL;
        ok = sps_precond_create(ctx, B, type, &f) == SPS_OK;
        full[k] = sps_precond_setup_ms(f);
        sps_precond_destroy(f);
    }
    ok = ok && sps_precond_create(ctx, A, type, &pc) == SPS_OK;
    for (int k = 0; k < 5 && ok; k++) {
        ok = sps_precond_update_values(pc, alternate && k % 2 ? A : B) == SPS_OK;
        upd[k] = sps_precond_setup_ms(pc);
    }
    sps_precond_destroy(pc);
    if (!ok) return 0;
    sps_timing tf, tu;
    sps__timing_summarize(full, 5, &tf);
    sps__timing_summarize(upd, 5, &tu);
    *full_ms = tf.median_us; /* the helper only sorts and picks: the unit is ms */
    *refresh_ms = tu.median_us;
    return 1;
}

/* 1-D Laplacian of n rows on ctx (row `empty` cleared when >= 0; row 0
 * coupled to every other row when arrow: one very long row, the diagonal
 * shifted to stay SPD). NULL after a FAIL line. */
static inline sps_matrix *pc_chain(sps_context *ctx, sps_idx n, sps_idx empty, int arrow)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        if (i == empty) continue;
        t_trip_add(&t, i, i, arrow ? (i == 0 ? 3.0 : 2.01) : 2.0);
        if (i + 1 < n && i + 1 != empty) {
            t_trip_add(&t, i, i + 1, -1.0);
            t_trip_add(&t, i + 1, i, -1.0);
        }
        if (arrow && i > 1) {
            t_trip_add(&t, 0, i, -0.5 / n);
            t_trip_add(&t, i, 0, -0.5 / n);
        }
    }
    return t_trip_matrix(ctx, n, n, &t);
}

/* Tridiagonal 4, -1 plus row and column 0 full: one very long row (the
 * diagonal 4 + n/2 on row 0). sym: -1 and 0.5 both ways; else -1.5 above
 * the diagonal and 0.25 in column 0 (nonsymmetric values, symmetric pattern). */
static inline sps_matrix *pc_arrow(sps_context *ctx, sps_idx n, int sym)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        t_trip_add(&t, i, i, i == 0 ? 4.0 + 0.5 * n : 4.0);
        if (i > 0) t_trip_add(&t, i, i - 1, -1.0);
        if (i + 1 < n) t_trip_add(&t, i, i + 1, sym ? -1.0 : -1.5);
        if (i > 1) {
            t_trip_add(&t, 0, i, 0.5);
            t_trip_add(&t, i, 0, sym ? 0.5 : 0.25);
        }
    }
    return t_trip_matrix(ctx, n, n, &t);
}

/* A nonsymmetric pattern: i couples to i + 3 one way only, and rows 5k are
 * isolated (the diagonal alone: an empty row of the graph). */
static inline sps_matrix *pc_oneway(sps_context *ctx, sps_idx n)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        t_trip_add(&t, i, i, 3.0 + (i % 4));
        if (i % 5 == 0) continue;
        if (i + 3 < n && (i + 3) % 5) t_trip_add(&t, i, i + 3, -1.0);
        if (i >= 1 && (i - 1) % 5) t_trip_add(&t, i, i - 1, -0.5);
    }
    return t_trip_matrix(ctx, n, n, &t);
}

/* Generated matrices and the preconditioner specs to run on each: `types`
 * space-separated; `extra` passed through (may be NULL). */
typedef struct pc_case {
    const char *spec, *types, *extra;
} pc_case;
typedef void (*pc_case_fn)(const char *spec, const sps_matrix *A, const char *type, const char *extra);

/* fn on each case's matrix (generated on ctx; a FAIL line if it cannot be)
 * and each of its types in turn. */
static inline void pc_each_case(sps_context *ctx, const pc_case *cases, size_t n, pc_case_fn fn)
{
    for (size_t k = 0; k < n; k++) {
        sps_matrix *A = NULL;
        if (sps_matrix_generate(ctx, cases[k].spec, &A) != SPS_OK) {
            T_FAIL(cases[k].spec, "%s", sps_last_error(ctx));
            continue;
        }
        char types[200], *save = NULL;
        snprintf(types, sizeof types, "%s", cases[k].types);
        for (char *t = strtok_r(types, " ", &save); t; t = strtok_r(NULL, " ", &save))
            fn(cases[k].spec, A, t, cases[k].extra);
        sps_matrix_destroy(A);
    }
}

#endif
