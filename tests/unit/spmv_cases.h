/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/spmv_cases.h: the matrices and the backend list that
 * tests/unit/test_spmv_host.c and tests/gpu/test_spmv_gpu.c both run (static
 * helpers, so that neither test includes the other's .c) */
#ifndef SPS_TEST_SPMV_CASES_H
#define SPS_TEST_SPMV_CASES_H

#include "check.h"
#include "core/internal.h"
#include "spmv/formats/coo.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Backends and variants to test: every format of the registry (selectors
 * skipped), then parameter variants that take other code paths. */
static const char *const variants[] = {
    "csr-vector:tpr=2",  "csr-vector:tpr=4", "csr-vector:tpr=8", "csr-vector:tpr=16",
    "csr-vector:tpr=32", "hyb:width=0",      "hyb:width=2",      "hyb:width=8",
    "cusparse:alg2",     "bsr:block=1",      "bsr:block=3",      "bsr:block=8",
    "lightspmv:tpr=2",   "lightspmv:tpr=32",
};

/* The formats that may refuse a matrix for its layout (DIA's fill limit, the
 * padding bound of ELL and BSR): a refusal is a SKIP with its reason. */
static inline int may_refuse(const char *spec)
{
    static const char *const names[] = {"dia", "ell", "bsr"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        size_t l = strlen(names[k]);
        if (strncmp(spec, names[k], l) == 0 && (spec[l] == 0 || spec[l] == ':')) return 1;
    }
    return 0;
}

/* Spec i (NULL past the end); *caps gets the backend's capabilities. */
static inline const char *spec_at(int i, unsigned *caps)
{
    int k = 0;
    const char *name;
    unsigned c;
    for (int b = 0; sps_spmv_backend(b, &name, &c, NULL) == SPS_OK; b++) {
        if (c & SPS_CAP_SELECTOR) continue;
        if (k++ == i) {
            *caps = c;
            return name;
        }
    }
    int v = i - k;
    if (v >= (int)(sizeof variants / sizeof *variants)) return NULL;
    char base[32];
    snprintf(base, sizeof base, "%.*s", (int)strcspn(variants[v], ":"), variants[v]);
    *caps = 0;
    for (int b = 0; sps_spmv_backend(b, &name, &c, NULL) == SPS_OK; b++)
        if (strcmp(name, base) == 0) *caps = c;
    if (strcmp(variants[v], "cusparse:alg2") == 0) *caps |= SPS_CAP_DETERMINISTIC;
    return variants[v];
}

/* Componentwise error of y against yref (the definition of
 * sps_operator_check): |y - yref|_i / (|alpha| (|A||x|)_i + |beta y0|_i),
 * 0/0 = 0, NaN = infinite. beta = 0 ignores y0. */
static inline double comp_err(const sps_matrix *A, double alpha, const double *x, double beta,
                       const double *y0, const double *y, const double *yref)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    double worst = 0;
    for (sps_idx r = 0; r < sps_matrix_rows(A); r++) {
        double a = 0;
        for (sps_idx p = rp[r]; p < rp[r + 1]; p++) a += fabs(v[p] * x[ci[p]]);
        double den = fabs(alpha) * a + (beta != 0 ? fabs(beta * y0[r]) : 0);
        double d = fabs(y[r] - yref[r]);
        double e = isnan(d) ? INFINITY : d == 0 ? 0 : den > 0 ? d / den : INFINITY;
        if (e > worst) worst = e;
    }
    return worst;
}

/* Random band matrix: the diagonal and about 60% of |i - j| <= 4. */
static inline sps_matrix *band(sps_context *ctx, sps_idx n, uint64_t *seed)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx j = i - 4; j <= i + 4; j++)
            if (j >= 0 && j < n && (j == i || t_rand(seed) < 0.2)) t_trip_add(&t, i, j, t_rand(seed));
    return t_trip_matrix(ctx, n, n, &t);
}

typedef void (*case_fn)(sps_context *ctx, const char *name, const sps_matrix *A, void *user);

static inline void run_case(sps_context *ctx, const char *name, sps_matrix *A, case_fn fn, void *user)
{
    if (A) fn(ctx, name, A, user);
    sps_matrix_destroy(A);
}

/* The hand-built edge cases. */
static inline void edge_cases(sps_context *ctx, case_fn fn, void *user)
{
    uint64_t seed = 12345;
    t_triplets t = {0};
    char name[64];

    sps_idx rp0[1] = {0};
    sps_matrix *A = NULL;
    if (sps_matrix_create_csr(ctx, 0, 0, rp0, NULL, NULL, &A) != SPS_OK)
        T_FAIL("0 x 0 matrix", "%s", sps_last_error(ctx));
    run_case(ctx, "0x0", A, fn, user);

    /* 12 x 9 with rows 0, 5, 6 and 11 empty */
    for (sps_idx i = 1; i < 11; i++)
        if (i != 5 && i != 6)
            for (sps_idx j = 0; j < 9; j += 1 + i % 3) t_trip_add(&t, i, j, t_rand(&seed));
    run_case(ctx, "empty rows (first, middle, last)", t_trip_matrix(ctx, 12, 9, &t), fn, user);

    /* one row of 33000 entries (> 32 x 1024) in a 40000-row diagonal matrix */
    for (sps_idx i = 0; i < 40000; i++) t_trip_add(&t, i, i, 1.0 + t_rand(&seed));
    for (sps_idx j = 0; j < 33000; j++)
        if (j != 7) t_trip_add(&t, 7, j, t_rand(&seed));
    run_case(ctx, "one row of 33000 entries", t_trip_matrix(ctx, 40000, 40000, &t), fn, user);

    /* many rows of 5, every 97th row of 300: HYB's ELL + tail */
    for (sps_idx i = 0; i < 3000; i++) {
        int len = i % 97 == 0 ? 300 : 5;
        for (int k = 0; k < len; k++) t_trip_add(&t, i, (i + k * 7) % 3000, t_rand(&seed));
    }
    run_case(ctx, "skewed rows (5 and 300)", t_trip_matrix(ctx, 3000, 3000, &t), fn, user);

    /* coo's boundaries (I items a thread, T a tile): rows ending exactly at
     * a thread's last item and at the tile's, a row of exactly one tile, rows
     * spanning two and four tiles, then an empty row and short ones */
    enum { I = SPS_COO_ITEMS, T = SPS_COO_TILE };
    static const sps_idx lens[] = {I, I, T - 3 * I, I, T, 2 * T, 3 * T + 5, 0, 5, 1, I - 1, I + 1};
    for (sps_idx i = 0; i < (sps_idx)(sizeof lens / sizeof *lens); i++)
        for (sps_idx k = 0; k < lens[i]; k++) t_trip_add(&t, i, (i * 13 + k) % 4096, t_rand(&seed));
    run_case(ctx, "rows at coo's thread and tile boundaries", t_trip_matrix(ctx, 12, 4096, &t), fn,
             user);

    static const sps_idx sizes[] = {31, 32, 33, 1023, 1024, 1025};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        snprintf(name, sizeof name, "band n=%d", sizes[k]);
        run_case(ctx, name, band(ctx, sizes[k], &seed), fn, user);
    }

    /* only the far corners: offsets n-1 and -(n-1) */
    t_trip_add(&t, 0, 299, 2.5);
    t_trip_add(&t, 299, 0, -1.5);
    run_case(ctx, "far-off diagonals +-(n-1)", t_trip_matrix(ctx, 300, 300, &t), fn, user);

    /* rectangular, both ways */
    for (int k = 0; k < 400; k++) t_trip_add(&t, (sps_idx)(40 * (t_rand(&seed) + 1) / 2), (sps_idx)(97 * (t_rand(&seed) + 1) / 2), t_rand(&seed));
    run_case(ctx, "rectangular 40 x 97", t_trip_matrix(ctx, 40, 97, &t), fn, user);
    for (int k = 0; k < 400; k++) t_trip_add(&t, (sps_idx)(97 * (t_rand(&seed) + 1) / 2), (sps_idx)(40 * (t_rand(&seed) + 1) / 2), t_rand(&seed));
    run_case(ctx, "rectangular 97 x 40", t_trip_matrix(ctx, 97, 40, &t), fn, user);
}

/* Every case: the real matrices (when io/ is there), the generators given
 * (gen/generate.c), then the edge cases. */
static inline void for_each_case(sps_context *ctx, const char *const *gens, case_fn fn, void *user)
{
    const char *const *names = t_real_matrices();
    for (int i = 0; names[i]; i++) {
        sps_matrix *A = NULL;
        if (sps_matrix_read(ctx, t_real_matrix_path(names[i]), &A) != SPS_OK)
            T_FAIL(names[i], "read: %s", sps_last_error(ctx));
        run_case(ctx, names[i], A, fn, user);
    }
    for (int i = 0; gens[i]; i++) {
        sps_matrix *A = NULL;
        if (sps_matrix_generate(ctx, gens[i], &A) != SPS_OK)
            T_FAIL(gens[i], "generate: %s", sps_last_error(ctx));
        run_case(ctx, gens[i], A, fn, user);
    }
    edge_cases(ctx, fn, user);
}

/* Build spec on A. Returns the operator, or NULL after recording why: the
 * SPS_ERR_UNSUPPORTED of a format that may refuse (may_refuse) is a SKIP with
 * its reason, anything else a FAIL. */
static inline sps_operator *build(sps_context *ctx, const char *spec, const char *mname,
                           const sps_matrix *A, const sps_operator_opts *opts)
{
    sps_operator *op = NULL;
    sps_status st = sps_operator_create(ctx, A, spec, opts, &op);
    if (st == SPS_OK) return op;
    char name[160];
    snprintf(name, sizeof name, "%s on %s", spec, mname);
    if (st == SPS_ERR_UNSUPPORTED && may_refuse(spec))
        t_skip(name, "refused: %s", sps_last_error(ctx));
    else
        T_FAIL(name, "%s: %s", sps_strerror(st), sps_last_error(ctx));
    return NULL;
}

#endif /* SPS_TEST_SPMV_CASES_H */
