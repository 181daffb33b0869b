/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_spmv_host.c: every SpMV backend's host path against the CSR reference,
 * parameters, selectors, measuring on a host context.
 *
 * The matrices and the backend list are shared with tests/gpu/test_spmv_gpu.c
 * through spmv_cases.h. */
#include "check.h"
#include "core/internal.h"
#include "spmv_cases.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- host tests ---------------------------------------------------------- */

#define TOL 1e-13

typedef struct backend_run {
    const char *spec;
} backend_run;

static void check_apply_host(sps_context *ctx, const char *mname, const sps_matrix *A, void *user)
{
    backend_run *br = user;
    sps_operator *op = build(ctx, br->spec, mname, A, NULL);
    if (!op) return;
    const sps_idx n = sps_matrix_rows(A), m = sps_matrix_cols(A);
    double *x = malloc(((size_t)m + 1) * sizeof *x);
    double *y0 = malloc(((size_t)n + 1) * sizeof *y0);
    double *y = malloc(((size_t)n + 1) * sizeof *y);
    double *yref = malloc(((size_t)n + 1) * sizeof *yref);
    uint64_t seed = 99;
    for (sps_idx j = 0; j < m; j++) x[j] = t_rand(&seed);
    for (sps_idx i = 0; i < n; i++) y0[i] = t_rand(&seed);
    double worst = 0;
    const double betas[] = {0.0, -0.75};
    int st_ok = 1;
    for (int b = 0; b < 2; b++) {
        double beta = betas[b];
        for (sps_idx i = 0; i < n; i++) {
            y[i] = beta == 0 ? NAN : y0[i];
            yref[i] = beta == 0 ? NAN : y0[i];
        }
        st_ok &= sps_operator_apply_host(op, 1.25, x, beta, y) == SPS_OK;
        st_ok &= sps_matrix_spmv_host(A, 1.25, x, beta, yref) == SPS_OK;
        double e = comp_err(A, 1.25, x, beta, y0, y, yref);
        if (e > worst) worst = e;
    }
    T_OK(st_ok && worst <= TOL, "%s on %s: apply_host = reference (beta 0 with NaN y, beta -0.75): err %.2e",
         br->spec, mname, worst);
    free(x);
    free(y0);
    free(y);
    free(yref);
    sps_operator_destroy(op);
}

static void test_every_backend(sps_context *ctx)
{
    static const char *const gens[] = {"poisson2d:30", "convdiff2d:25,10", "banded:5000,7,0.02,3",
                                       "powerlaw:3000,8,5", NULL};
    unsigned caps;
    const char *spec;
    for (int i = 0; (spec = spec_at(i, &caps)); i++) {
        backend_run br = {spec};
        for_each_case(ctx, gens, check_apply_host, &br);
    }
}

/* update_values with every value doubled: y doubles exactly (a power-of-two
 * scaling is exact in every summation order). */
static void check_update(sps_context *ctx, const char *mname, const sps_matrix *A, void *user)
{
    backend_run *br = user;
    if (sps_matrix_nnz(A) == 0) return;
    sps_operator *op = build(ctx, br->spec, mname, A, NULL);
    if (!op) return;
    const sps_idx n = sps_matrix_rows(A), m = sps_matrix_cols(A);
    const int64_t nnz = sps_matrix_nnz(A);
    const double *v;
    sps_matrix_csr(A, NULL, NULL, &v);
    double *v2 = malloc((size_t)nnz * sizeof *v2), *x = malloc((size_t)m * sizeof *x);
    double *y1 = malloc((size_t)n * sizeof *y1), *y2 = malloc((size_t)n * sizeof *y2);
    uint64_t seed = 5;
    for (int64_t k = 0; k < nnz; k++) v2[k] = 2 * v[k];
    for (sps_idx j = 0; j < m; j++) x[j] = t_rand(&seed);
    sps_operator_apply_host(op, 1.0, x, 0.0, y1);
    sps_status st = sps_operator_update_values(op, v2);
    sps_operator_apply_host(op, 1.0, x, 0.0, y2);
    int same = 1;
    for (sps_idx i = 0; i < n; i++) same &= y2[i] == 2 * y1[i];
    T_OK(st == SPS_OK && same, "%s on %s: update_values(2 A) doubles y exactly", br->spec, mname);
    free(v2);
    free(x);
    free(y1);
    free(y2);
    sps_operator_destroy(op);
}

static void test_update(sps_context *ctx)
{
    unsigned caps;
    const char *spec;
    for (int i = 0; (spec = spec_at(i, &caps)); i++) {
        backend_run br = {spec};
        if (strchr(spec, ':') && strncmp(spec, "hyb", 3) != 0 && strncmp(spec, "bsr", 3) != 0)
            continue; /* same host format (hyb's width and bsr's block change it) */
        uint64_t seed = 3;
        sps_matrix *A = band(ctx, 1025, &seed);
        run_case(ctx, "band n=1025", A, check_update, &br);
        edge_cases(ctx, check_update, &br);
    }
}

static void expect_rejected(sps_context *ctx, const sps_matrix *A, const char *spec,
                            const char *must_name)
{
    sps_operator *op = (sps_operator *)1;
    sps_status st = sps_operator_create(ctx, A, spec, NULL, &op);
    const char *msg = sps_last_error(ctx);
    T_OK(st == SPS_ERR_INVALID_ARG && op == NULL && strstr(msg, must_name) != NULL,
         "'%s' rejected naming '%s' (%s: %s)", spec, must_name, sps_strerror(st), msg);
}

static void test_names(sps_context *ctx)
{
    uint64_t seed = 1;
    sps_matrix *A = band(ctx, 100, &seed);
    expect_rejected(ctx, A, "nosuch", "unknown SpMV backend 'nosuch'");
    expect_rejected(ctx, A, "nosuch", "csr-vector"); /* the message lists the known names */
    expect_rejected(ctx, A, "csr-scalar:fast", "fast");
    expect_rejected(ctx, A, "csr-vector:tpr=3", "tpr=3");
    expect_rejected(ctx, A, "csr-vector:tpr=", "tpr");
    expect_rejected(ctx, A, "csr-vector:warp", "warp");
    expect_rejected(ctx, A, "hyb:width=-1", "width=-1");
    expect_rejected(ctx, A, "hyb:width=2x", "width=2x");
    expect_rejected(ctx, A, "hyb:ell=3", "ell");
    expect_rejected(ctx, A, "cusparse:alg3", "alg3");
    expect_rejected(ctx, A, "cusparse:alg2=1", "alg2");

    /* the summary of every format is filled in */
    const char *name, *summary;
    unsigned caps;
    int missing = 0;
    for (int i = 0; sps_spmv_backend(i, &name, &caps, &summary) == SPS_OK; i++)
        if (!summary || !*summary) missing++;
    T_OK(missing == 0, "every backend has a --list-spmv summary");
    sps_matrix_destroy(A);
}

static void test_hyb_stats(sps_context *ctx)
{
    /* 3 rows of length 1, 2, 6 with width 2: ELL 3 x 2 slots, 1 stored zero,
     * one tail row of 4 entries */
    sps_idx rp[] = {0, 1, 3, 9};
    sps_idx ci[] = {0, 0, 1, 0, 1, 2, 3, 4, 5};
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    sps_matrix *A = NULL;
    sps_matrix_create_csr(ctx, 3, 6, rp, ci, v, &A);
    sps_operator *op = NULL;
    sps_operator_info in;
    T_STATUS(ctx, sps_operator_create(ctx, A, "hyb:width=2", NULL, &op), "hyb:width=2 builds");
    if (op) {
        sps_operator_get_info(op, &in);
        T_OK(in.ell_width == 2 && in.coo_entries == 4 && in.slots == 10 &&
                 fabs(in.fill - 0.1) < 1e-12,
             "hyb stats: width 2, 4 tail entries, 10 slots, fill 0.1 (got %d, %lld, %lld, %g)",
             in.ell_width, (long long)in.coo_entries, (long long)in.slots, in.fill);
        T_OK(in.bytes_per_spmv > 0 && strlen(in.detail) > 0, "hyb: bytes model and detail: %s",
             in.detail);
        sps_operator_destroy(op);
    }
    T_STATUS(ctx, sps_operator_create(ctx, A, "hyb:width=50", NULL, &op), "hyb:width=50 builds");
    if (op) {
        sps_operator_get_info(op, &in);
        T_OK(in.ell_width == 6 && in.coo_entries == 0, "width 50 clamped to the longest row 6 (got %d)",
             in.ell_width);
        sps_operator_destroy(op);
    }
    T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "csr-vector builds");
    if (op) {
        sps_operator_get_info(op, &in);
        /* mean 3 entries per row -> 4 threads per row */
        T_OK(strstr(in.detail, "4 threads per row") != NULL, "csr-vector: mean 3 -> 4 threads per row (%s)",
             in.detail);
        /* the floor (3 x 6): row pointer once, 12 bytes per entry, x once, y written once */
        T_NEAR(in.bytes_per_spmv, 4 * 4 + 12 * 9 + 8 * 6 + 8 * 3, 1e-12, "CSR bytes model");
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);

    /* a forced width that would be padding only is refused, not allocated */
    t_triplets t = {0};
    for (sps_idx i = 0; i < 5000; i++) t_trip_add(&t, i, i, 1.0);
    for (sps_idx j = 0; j < 4000; j++) t_trip_add(&t, 3, j, 0.5);
    A = t_trip_matrix(ctx, 5000, 5000, &t);
    op = (sps_operator *)1;
    sps_status st = sps_operator_create(ctx, A, "hyb:width=4000", NULL, &op);
    T_OK(st == SPS_ERR_UNSUPPORTED && !op && strstr(sps_last_error(ctx), "smaller width"),
         "hyb:width=4000 on 5000 rows refused: %s", sps_last_error(ctx));
    sps_matrix_destroy(A);
}

static void test_alloc_failures(sps_context *ctx)
{
    uint64_t seed = 8;
    sps_matrix *A = band(ctx, 200, &seed);
    static const char *const specs[] = {"hyb:width=2", "csr-vector", "auto", "ell", "coo",
                                        "bsr", "bsr:block=3", "lightspmv"};
    for (size_t s = 0; s < sizeof specs / sizeof *specs; s++) {
        int failures = 0, bad = 0, done = 0;
        for (long k = 1; k < 60 && !done; k++) {
            sps_operator *op = (sps_operator *)1;
            sps__fail_alloc_after(k);
            sps_status st = sps_operator_create(ctx, A, specs[s], NULL, &op);
            sps__fail_alloc_after(0);
            if (st == SPS_ERR_NO_MEMORY) {
                failures++;
                if (op != NULL) bad++;
            } else if (st == SPS_OK) {
                done = 1;
            } else {
                bad++;
            }
            if (st == SPS_OK) sps_operator_destroy(op);
        }
        T_OK(done && failures >= 2 && bad == 0,
             "%s: every allocation failure reported as SPS_ERR_NO_MEMORY, nothing returned (%d injected)",
             specs[s], failures);
    }
    sps_matrix_destroy(A);
}

/* Options sps_operator_create must refuse before building anything (issue 17
 * defect 7): a precision that is neither SPS_DOUBLE nor SPS_SINGLE. */
static void test_bad_opts(sps_context *ctx)
{
    uint64_t seed = 9;
    sps_matrix *A = band(ctx, 100, &seed);
    sps_operator_opts opts;
    sps_operator_opts_default(&opts);
    const int bad[] = {7, -1, 2};
    const char *const specs[] = {"csr-vector", "drm", "auto", "tune"};
    for (size_t b = 0; b < sizeof bad / sizeof *bad; b++)
        for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
            opts.precision = (sps_precision)bad[b];
            sps_operator *op = NULL;
            sps_status st = sps_operator_create(ctx, A, specs[k], &opts, &op);
            char want[32];
            snprintf(want, sizeof want, "precision %d", bad[b]);
            T_OK(st == SPS_ERR_INVALID_ARG && op == NULL && strstr(sps_last_error(ctx), want),
                 "%s with precision %d: SPS_ERR_INVALID_ARG (%s): %s", specs[k], bad[b],
                 sps_strerror(st), sps_last_error(ctx));
            sps_operator_destroy(op);
        }
    sps_matrix_destroy(A);
}

/* opts.fallback: a named backend that refuses A gives way to csr-vector and
 * says why; without it the refusal is the caller's. */
static void test_fallback(sps_context *ctx)
{
    t_triplets t = {0};
    t_trip_add(&t, 0, 299, 2.5);
    t_trip_add(&t, 299, 0, -1.5);
    for (sps_idx i = 0; i < 300; i += 7) t_trip_add(&t, i, i, 1.0 + i);
    sps_matrix *A = t_trip_matrix(ctx, 300, 300, &t); /* dia: fill far above 90% */
    uint64_t seed = 3;
    sps_matrix *B = band(ctx, 300, &seed);            /* dia takes it */
    sps_operator_opts opts;
    sps_operator_opts_default(&opts);
    T_OK(opts.fallback == 0, "fallback is off by default");
    sps_operator *op = NULL;
    sps_status st = sps_operator_create(ctx, A, "dia", &opts, &op);
    T_OK(st == SPS_ERR_UNSUPPORTED && op == NULL, "dia refuses without fallback: %s",
         sps_last_error(ctx));

    opts.fallback = 1;
    T_STATUS(ctx, sps_operator_create(ctx, A, "dia", &opts, &op), "dia with fallback builds");
    if (op) {
        sps_operator_info in;
        sps_operator_get_info(op, &in);
        T_OK(strcmp(in.backend, "csr-vector") == 0, "fallback built csr-vector: %s", in.backend);
        T_OK(strncmp(in.reason, "dia refused (dia: ", 18) == 0 &&
                 strstr(in.reason, "; fell back to csr-vector") != NULL,
             "the reason says who refused, why, and what was built: %s", in.reason);
        double err = 1;
        int rep = 0;
        T_STATUS(ctx, sps_operator_check(op, A, &err, &rep), "check the fallback operator");
        T_OK(err <= 1e-13 && rep, "the fallback computes A*x: err %.2e, repeatable %d", err, rep);
        sps_operator_destroy(op);
        op = NULL;
    }
    T_STATUS(ctx, sps_operator_create(ctx, B, "dia", &opts, &op), "dia with fallback, dia fits");
    if (op) {
        sps_operator_info in;
        sps_operator_get_info(op, &in);
        T_OK(strcmp(in.backend, "dia") == 0 && in.reason[0] == 0,
             "no fallback when the backend takes A: %s, reason '%s'", in.backend, in.reason);
        sps_operator_destroy(op);
        op = NULL;
    }
    st = sps_operator_create(ctx, A, "dia:maxfill=x", &opts, &op);
    T_OK(st == SPS_ERR_INVALID_ARG && op == NULL,
         "a bad parameter is not a refusal: no fallback: %s", sps_last_error(ctx));
    st = sps_operator_create(ctx, A, "nosuch", &opts, &op);
    T_OK(st == SPS_ERR_INVALID_ARG && op == NULL, "an unknown name is not a refusal either");
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

/* auto decides on the caller's features exactly as on its own (on a matrix
 * of each of its branches), and refuses features of another matrix. */
static void same_auto_choice(sps_context *ctx, const char *name, const sps_matrix *A, void *user)
{
    (void)user;
    sps_features f;
    if (!T_STATUS(ctx, sps_matrix_analyze(ctx, A, &f), "analyze %s", name)) return;
    sps_operator_opts opts;
    sps_operator_opts_default(&opts);
    sps_operator *own = NULL, *given = NULL;
    T_STATUS(ctx, sps_operator_create(ctx, A, "auto", NULL, &own), "auto on %s", name);
    opts.features = &f;
    T_STATUS(ctx, sps_operator_create(ctx, A, "auto", &opts, &given),
             "auto with opts.features on %s", name);
    if (own && given) {
        sps_operator_info a, b;
        sps_operator_get_info(own, &a);
        sps_operator_get_info(given, &b);
        T_OK(strcmp(a.backend, b.backend) == 0 && strcmp(a.reason, b.reason) == 0,
             "%s: the same choice and reason with and without opts.features: %s / %s", name,
             a.reason, b.reason);
    }
    sps_operator_destroy(own);
    sps_operator_destroy(given);
}

static void test_auto_features(sps_context *ctx)
{
    static const char *const gens[] = {"poisson2d:40", "banded:5000,9,0.01,1",
                                       "powerlaw:3000,8,1", NULL};
    for_each_case(ctx, gens, same_auto_choice, NULL);

    uint64_t seed = 5;
    sps_matrix *A = band(ctx, 3000, &seed);
    sps_matrix *B = band(ctx, 3001, &seed);
    sps_features f;
    T_STATUS(ctx, sps_matrix_analyze(ctx, A, &f), "analyze the band matrix");
    sps_operator_opts opts;
    sps_operator_opts_default(&opts);
    opts.features = &f;
    sps_operator *op = NULL;
    sps_status st = sps_operator_create(ctx, B, "auto", &opts, &op);
    T_OK(st == SPS_ERR_INVALID_ARG && !op && strstr(sps_last_error(ctx), "features"),
         "auto refuses another matrix's features: %s", sps_last_error(ctx));
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

static void test_selectors(sps_context *ctx)
{
    uint64_t seed = 4;
    sps_matrix *A = band(ctx, 2000, &seed);
    sps_operator *op = NULL;
    sps_operator_info in;
    T_STATUS(ctx, sps_operator_create(ctx, A, "auto", NULL, &op), "auto builds on a band matrix");
    if (op) {
        sps_operator_get_info(op, &in);
        T_OK(strncmp(in.reason, "auto: ", 6) == 0 && strstr(in.reason, in.backend) != NULL,
             "auto's reason names the backend '%s': %s", in.backend, in.reason);
        T_OK(in.caps & SPS_CAP_DETERMINISTIC, "auto chose a deterministic backend");
        T_OK(in.select_ms >= 0, "auto: select_ms %.3f >= 0", in.select_ms);
        sps_operator_destroy(op);
    }

    /* one row 1000x the mean: the irregular branch */
    t_triplets t = {0};
    for (sps_idx i = 0; i < 5000; i++) t_trip_add(&t, i, i, 1.0);
    for (sps_idx j = 0; j < 4000; j++) t_trip_add(&t, 3, j, 0.5);
    sps_matrix *L = t_trip_matrix(ctx, 5000, 5000, &t);
    T_STATUS(ctx, sps_operator_create(ctx, L, "auto", NULL, &op), "auto builds on a matrix with one long row");
    if (op) {
        sps_operator_get_info(op, &in);
        T_OK(strstr(in.reason, "merge") != NULL && strstr(in.reason, "longest row 4000") != NULL,
             "auto: irregular rows lead to merge (or its fallback): %s", in.reason);
        sps_operator_destroy(op);
    }

    /* the same shape with the long row under 512 entries: csr-vector (merge's second
     * kernel costs more than a warp's 10 rounds on it), at 512 merge again */
    for (int len = 300; len <= 512; len += 212) {
        t_triplets u = {0};
        for (sps_idx i = 0; i < 5000; i++) t_trip_add(&u, i, i, 1.0);
        for (sps_idx j = 0; j < len; j++)
            if (j != 3) t_trip_add(&u, 3, j, 0.5);
        sps_matrix *S = t_trip_matrix(ctx, 5000, 5000, &u);
        T_STATUS(ctx, sps_operator_create(ctx, S, "auto", NULL, &op), "auto builds (longest row %d)", len);
        if (op) {
            sps_operator_get_info(op, &in);
            const char *want = len < 512 ? "auto: csr-vector: irregular" : "auto: merge";
            T_OK(strncmp(in.reason, want, strlen(want)) == 0 || (len == 512 && strstr(in.reason, "merge")),
                 "auto: longest row %d: %s (got %s)", len, want, in.reason);
            sps_operator_destroy(op);
        }
        sps_matrix_destroy(S);
    }

    /* tridiagonal: DIA stores ~1.0002 slots per nonzero (DRM ~1.01): dia */
    for (sps_idx i = 0; i < 3000; i++)
        for (sps_idx j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < 3000) t_trip_add(&t, i, j, j == i ? 4.0 : -1.0);
    sps_matrix *D = t_trip_matrix(ctx, 3000, 3000, &t);
    T_STATUS(ctx, sps_operator_create(ctx, D, "auto", NULL, &op), "auto builds on a tridiagonal matrix");
    if (op) {
        sps_operator_get_info(op, &in);
        T_OK(strncmp(in.reason, "auto: dia: 3 diagonals, DIA stores 1.00 slots per nonzero", 57) == 0 &&
                 (strcmp(in.backend, "dia") == 0 || strstr(in.reason, "fell back to csr-vector")),
             "auto: tridiagonal leads to dia (or says it fell back): %s -> %s", in.reason, in.backend);
        sps_operator_destroy(op);
    }
    /* a tridiagonal band plus one far entry per 64 rows: DIA's full-length
     * extra diagonals pass 1.05 slots per nonzero, DRM's segments do not: drm */
    for (sps_idx i = 0; i < 3000; i++) {
        for (sps_idx j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < 3000) t_trip_add(&t, i, j, j == i ? 4.0 : -1.0);
        if (i % 64 == 0) t_trip_add(&t, i, (i + 1500) % 3000, 0.5);
    }
    sps_matrix *E = t_trip_matrix(ctx, 3000, 3000, &t);
    T_STATUS(ctx, sps_operator_create(ctx, E, "auto", NULL, &op), "auto builds on a band with far entries");
    if (op) {
        sps_operator_get_info(op, &in);
        T_OK(strncmp(in.reason, "auto: drm: ", 11) == 0 &&
                 (strcmp(in.backend, "drm") == 0 || strstr(in.reason, "fell back to csr-vector")),
             "auto: a band with scattered far entries leads to drm: %s -> %s", in.reason, in.backend);
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(D);
    sps_matrix_destroy(E);

    sps_operator_opts opts;
    sps_operator_opts_default(&opts);
    opts.tune_reps = 3;
    T_STATUS(ctx, sps_operator_create(ctx, A, "tune", &opts, &op), "tune builds");
    if (op) {
        sps_operator_get_info(op, &in);
        T_OK(strncmp(in.reason, "tune (3 reps", 12) == 0 && strstr(in.reason, "chose ") != NULL,
             "tune's reason lists the candidates and the choice: %s", in.reason);
        T_OK(in.select_ms > 0 && (in.caps & SPS_CAP_DETERMINISTIC),
             "tune: select_ms %.3f > 0, deterministic choice %s", in.select_ms, in.backend);
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);
    sps_matrix_destroy(L);
}

static void test_measure(sps_context *ctx)
{
    uint64_t seed = 6;
    sps_matrix *A = band(ctx, 1025, &seed);
    sps_operator *op = NULL;
    T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "csr-vector for timing");
    if (!op) return;
    sps_timing t;
    T_STATUS(ctx, sps_operator_time(op, 7, 0, &t), "sps_operator_time on the host");
    T_OK(t.reps == 7 && t.median_us > 0 && t.min_us <= t.median_us && t.median_us <= t.max_us,
         "timing sane: %d reps, min %.2f <= median %.2f <= max %.2f us", t.reps, t.min_us,
         t.median_us, t.max_us);
    T_OK(sps_operator_time(op, 0, 0, &t) == SPS_ERR_INVALID_ARG, "0 reps rejected");
    double err = -1;
    int rep = -1;
    T_STATUS(ctx, sps_operator_check(op, A, &err, &rep), "sps_operator_check on the host");
    T_OK(err >= 0 && err <= TOL && rep == 1, "check: err %.2e, repeatable %d", err, rep);
    sps_matrix *B = band(ctx, 1024, &seed);
    T_OK(sps_operator_check(op, B, &err, &rep) == SPS_ERR_INVALID_ARG,
         "check against another matrix rejected: %s", sps_last_error(ctx));
    double gbps = 0;
    T_STATUS(ctx, sps_copy_bandwidth(ctx, (size_t)8 << 20, &gbps), "host copy bandwidth");
    T_OK(gbps > 0, "host copy bandwidth %.1f GB/s > 0", gbps);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

/* sps_operator_check on every backend and every edge case (host apply). */
static void check_op_check(sps_context *ctx, const char *mname, const sps_matrix *A, void *user)
{
    backend_run *br = user;
    sps_operator *op = build(ctx, br->spec, mname, A, NULL);
    if (!op) return;
    double err = -1;
    int rep = -1;
    sps_status st = sps_operator_check(op, A, &err, &rep);
    T_OK(st == SPS_OK && err <= TOL && rep == 1, "%s on %s: sps_operator_check err %.2e, repeatable %d",
         br->spec, mname, err, rep);
    sps_operator_destroy(op);
}

static void test_check_every_backend(sps_context *ctx)
{
    unsigned caps;
    const char *spec;
    for (int i = 0; (spec = spec_at(i, &caps)); i++) {
        if (strchr(spec, ':')) continue;
        backend_run br = {spec};
        edge_cases(ctx, check_op_check, &br);
    }
}

static int is_bench_row(const char *backend)
{
    static const char *const rows[] = {"ell", "coo", "bsr", "lightspmv"};
    for (int k = 0; k < 4; k++)
        if (strcmp(backend, rows[k]) == 0) return 1;
    return 0;
}

static void auto_not_bench_row(sps_context *ctx, const char *mname, const sps_matrix *A, void *user)
{
    (void)user;
    sps_operator *op = NULL;
    if (!T_STATUS(ctx, sps_operator_create(ctx, A, "auto", NULL, &op), "auto on %s", mname)) return;
    sps_operator_info in;
    sps_operator_get_info(op, &in);
    T_OK(!is_bench_row(in.backend), "auto on %s built %s, not a benchmark row", mname, in.backend);
    sps_operator_destroy(op);
}

/* The benchmark rows (ell, coo, bsr, lightspmv): auto never builds them,
 * tune never times them. */
static void test_bench_rows_not_chosen(sps_context *ctx)
{
    static const char *const gens[] = {"poisson2d:40", "banded:5000,9,0.01,1", "powerlaw:3000,8,1",
                                       NULL};
    for_each_case(ctx, gens, auto_not_bench_row, NULL);

    uint64_t seed = 14;
    sps_matrix *A = band(ctx, 3000, &seed);
    sps_operator_opts opts;
    sps_operator_opts_default(&opts);
    opts.tune_reps = 2;
    sps_operator *op = NULL;
    T_STATUS(ctx, sps_operator_create(ctx, A, "tune", &opts, &op), "tune on a band matrix");
    if (op) {
        sps_operator_info in;
        sps_operator_get_info(op, &in);
        static const char *const rows[] = {" ell ", " coo ", " bsr ", " lightspmv "};
        int named = 0;
        for (int k = 0; k < 4; k++) named += strstr(in.reason, rows[k]) != NULL;
        T_OK(named == 0 && strstr(in.reason, " hyb ") != NULL,
             "tune times hyb but none of ell, coo, bsr, lightspmv: %s", in.reason);
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);
}

/* ell: the width is the longest row; one very long row is refused by the
 * padding bound with the numbers, not allocated. */
static void test_ell(sps_context *ctx)
{
    sps_idx rp[] = {0, 1, 3, 9, 9};
    sps_idx ci[] = {0, 0, 1, 0, 1, 2, 3, 4, 5};
    double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    sps_matrix *A = NULL;
    sps_matrix_create_csr(ctx, 4, 6, rp, ci, v, &A);
    sps_operator *op = NULL;
    T_STATUS(ctx, sps_operator_create(ctx, A, "ell", NULL, &op), "ell builds");
    if (op) {
        sps_operator_info in;
        sps_operator_get_info(op, &in);
        T_OK(in.ell_width == 6 && in.slots == 24 && fabs(in.fill - 15.0 / 24) < 1e-12 &&
                 in.coo_entries == 0,
             "ell: width 6 = the longest row, 24 slots, fill 15/24, no tail (%d, %lld, %g, %lld)",
             in.ell_width, (long long)in.slots, in.fill, (long long)in.coo_entries);
        sps_operator_destroy(op);
    }
    expect_rejected(ctx, A, "ell:width=3", "width=3");
    sps_matrix_destroy(A);

    t_triplets t = {0};
    for (sps_idx i = 0; i < 40000; i++) t_trip_add(&t, i, i, 1.0);
    for (sps_idx j = 0; j < 33000; j++) t_trip_add(&t, 7, j, 0.5);
    A = t_trip_matrix(ctx, 40000, 40000, &t);
    op = (sps_operator *)1;
    sps_status st = sps_operator_create(ctx, A, "ell", NULL, &op);
    const char *msg = sps_last_error(ctx);
    T_OK(st == SPS_ERR_UNSUPPORTED && !op && strstr(msg, "ell: padding every row to the longest "
                                                         "(33000 entries) would store 1320000000 slots"),
         "ell refuses a 33000-entry row in 40000 rows: %s", msg);
    sps_matrix_destroy(A);
}

/* bsr: the block size of least fill (3 on a matrix of dense 3 x 3 blocks),
 * block=K, the parameters refused. */
static void test_bsr(sps_context *ctx)
{
    t_triplets t = {0};
    uint64_t seed = 21;
    const sps_idx nb = 40; /* 120 x 120: block rows I have blocks (I, I) and (I, (7I) % 40) */
    for (sps_idx I = 0; I < nb; I++)
        for (int pass = 0; pass < 2; pass++) {
            sps_idx J = pass ? (7 * I + 3) % nb : I;
            if (pass && J == I) continue;
            for (int a = 0; a < 3; a++)
                for (int c = 0; c < 3; c++) t_trip_add(&t, 3 * I + a, 3 * J + c, t_rand(&seed));
        }
    sps_matrix *A = t_trip_matrix(ctx, 3 * nb, 3 * nb, &t);
    sps_operator *op = NULL;
    sps_operator_info in;
    T_STATUS(ctx, sps_operator_create(ctx, A, "bsr", NULL, &op), "bsr builds");
    if (op) {
        sps_operator_get_info(op, &in);
        T_OK(in.fill == 0.0 && strncmp(in.detail, "3 x 3 blocks (least fill", 24) == 0 &&
                 in.slots == sps_matrix_nnz(A),
             "bsr picks 3 x 3 blocks, no fill: %s", in.detail);
        sps_operator_destroy(op);
    }
    T_STATUS(ctx, sps_operator_create(ctx, A, "bsr:block=2", NULL, &op), "bsr:block=2 builds");
    if (op) {
        sps_operator_get_info(op, &in);
        T_OK(in.fill > 0.2 && strncmp(in.detail, "2 x 2 blocks (forced)", 21) == 0,
             "bsr:block=2 on 3 x 3 blocks stores zeros: fill %.3f (%s)", in.fill, in.detail);
        double err = 1;
        int rep = 0;
        T_STATUS(ctx, sps_operator_check(op, A, &err, &rep), "check bsr:block=2");
        T_OK(err <= TOL && rep, "bsr:block=2 computes A*x: err %.2e", err);
        sps_operator_destroy(op);
    }
    expect_rejected(ctx, A, "bsr:block=0", "block=0");
    expect_rejected(ctx, A, "bsr:block=9", "block=9");
    expect_rejected(ctx, A, "bsr:block=2x", "block=2x");
    expect_rejected(ctx, A, "bsr:size=2", "size");
    expect_rejected(ctx, A, "lightspmv:tpr=3", "tpr=3");
    expect_rejected(ctx, A, "coo:tile=4", "tile");
    sps_matrix_destroy(A);
}

T_MAIN_HOST_CTX(test_every_backend, test_update, test_names, test_hyb_stats, test_alloc_failures, test_selectors,
                test_bad_opts, test_auto_features, test_fallback, test_measure, test_check_every_backend,
                test_bench_rows_not_chosen, test_ell, test_bsr)

