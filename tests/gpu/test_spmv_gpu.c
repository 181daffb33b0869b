/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_spmv_gpu.c: every SpMV backend's GPU kernel, double and single, against
 * the CSR reference and its own host path; determinism, update_values, timing, auto and tune.
 *
 * The matrices and the backend list are the host test's (tests/unit/spmv_cases.h).
 * Without a device the program prints one SKIP line.
 *
 * Tolerances (componentwise, as sps_operator_check defines the error):
 *  - double: 1e-12.
 *  - single: the inputs are rounded to float first, so what remains is the
 *    arithmetic: for a row of L entries summed in any order, each product
 *    and each addition rounds once (relative u = 2^-24 ~ 6e-8), plus alpha
 *    and beta: |y - yref| <= (L + 3) u (|alpha| |A||x| + |beta y|) to first
 *    order. 1e-5 (= 168 u) covers rows of up to ~160 entries; longer rows get
 *    the bound itself with a margin, (L + 8) u. Comparing the device against
 *    apply_host (unrounded A) adds one rounding of each value: within the
 *    same margin. */
#include "../unit/spmv_cases.h"

#if SPS_HAVE_CUDA
#include "core/gpu.h"

static double tolerance(const sps_matrix *A, int single)
{
    if (!single) return 1e-12;
    const sps_idx *rp;
    sps_matrix_csr(A, &rp, NULL, NULL);
    sps_idx L = 0;
    for (sps_idx r = 0; r < sps_matrix_rows(A); r++)
        if (rp[r + 1] - rp[r] > L) L = rp[r + 1] - rp[r];
    double bound = (L + 8) * 0x1p-24;
    return bound > 1e-5 ? bound : 1e-5;
}

typedef struct gpu_run {
    const char *spec;
    unsigned caps;
    int single;
} gpu_run;

/* Device y = alpha A x (beta = 0) for host x; result as doubles in y. */
static sps_status device_apply(sps_context *ctx, sps_operator *op, int single, const double *x,
                               sps_idx m, double *y, sps_idx n)
{
    size_t es = single ? sizeof(float) : sizeof(double);
    void *dx = NULL, *dy = NULL, *hx = malloc((size_t)m * es + 1), *hy = malloc((size_t)n * es + 1);
    for (sps_idx j = 0; j < m; j++) {
        if (single) ((float *)hx)[j] = (float)x[j];
        else ((double *)hx)[j] = x[j];
    }
    sps_status st = sps__dmalloc(ctx, &dx, (size_t)m * es);
    if (st == SPS_OK) st = sps__dmalloc(ctx, &dy, (size_t)n * es);
    if (st == SPS_OK) st = sps__h2d(ctx, dx, hx, (size_t)m * es);
    if (st == SPS_OK) st = sps__dmemset(ctx, dy, 0xff, (size_t)n * es); /* NaN */
    if (st == SPS_OK) st = sps_operator_apply(op, 1.0, dx, 0.0, dy);
    if (st == SPS_OK) st = sps__d2h(ctx, hy, dy, (size_t)n * es);
    for (sps_idx i = 0; st == SPS_OK && i < n; i++)
        y[i] = single ? ((float *)hy)[i] : ((double *)hy)[i];
    sps__dfree(dx);
    sps__dfree(dy);
    free(hx);
    free(hy);
    return st;
}

static void check_gpu(sps_context *ctx, const char *mname, const sps_matrix *A, void *user)
{
    gpu_run *g = user;
    sps_operator_opts opts;
    sps_operator_opts_default(&opts);
    opts.precision = g->single ? SPS_SINGLE : SPS_DOUBLE;
    sps_operator *op = build(ctx, g->spec, mname, A, &opts);
    if (!op) return;
    const char *prec = g->single ? "single" : "double";
    const double tol = tolerance(A, g->single);
    const int det = (g->caps & SPS_CAP_DETERMINISTIC) != 0;

    /* 1. against the CSR reference; determinism */
    double err = -1;
    int rep = -1;
    sps_status st = sps_operator_check(op, A, &err, &rep);
    T_OK(st == SPS_OK && err <= tol && (rep == 1 || !det),
         "%s %s on %s: err %.2e (tol %.1e), repeatable %d%s", g->spec, prec, mname, err, tol, rep,
         det ? "" : " (not required)");

    /* 2. the device equals the format's own host path */
    const sps_idx n = sps_matrix_rows(A), m = sps_matrix_cols(A);
    double *x = malloc(((size_t)m + 1) * sizeof *x), *yd = malloc(((size_t)n + 1) * sizeof *yd);
    double *yh = malloc(((size_t)n + 1) * sizeof *yh), *yd2 = malloc(((size_t)n + 1) * sizeof *yd2);
    uint64_t seed = 31;
    for (sps_idx j = 0; j < m; j++) x[j] = g->single ? (float)t_rand(&seed) : t_rand(&seed);
    st = device_apply(ctx, op, g->single, x, m, yd, n);
    if (st == SPS_OK) st = sps_operator_apply_host(op, 1.0, x, 0.0, yh);
    err = st == SPS_OK ? comp_err(A, 1.0, x, 0.0, NULL, yd, yh) : INFINITY;
    T_OK(st == SPS_OK && err <= tol, "%s %s on %s: device = apply_host: err %.2e (%s)", g->spec,
         prec, mname, err, st == SPS_OK ? "ok" : sps_last_error(ctx));

    /* 3. update_values on the device: 2A. Deterministic kernels double y
     * exactly; every kernel must pass the check against the new matrix. */
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    const int64_t nnz = sps_matrix_nnz(A);
    double *v2 = malloc(((size_t)nnz + 1) * sizeof *v2);
    for (int64_t k = 0; k < nnz; k++) v2[k] = 2 * v[k];
    sps_matrix *A2 = NULL;
    st = sps_matrix_create_csr(ctx, n, m, rp, ci, v2, &A2);
    if (st == SPS_OK) st = sps_operator_update_values(op, v2);
    if (st == SPS_OK) st = sps_operator_check(op, A2, &err, &rep);
    T_OK(st == SPS_OK && err <= tol, "%s %s on %s: update_values(2A) on the device: err %.2e (%s)",
         g->spec, prec, mname, err, st == SPS_OK ? "ok" : sps_last_error(ctx));
    if (det && st == SPS_OK) {
        st = device_apply(ctx, op, g->single, x, m, yd2, n);
        int same = st == SPS_OK;
        for (sps_idx i = 0; same && i < n; i++) same = yd2[i] == 2 * yd[i];
        T_OK(same, "%s %s on %s: after update_values(2A), y doubles bitwise", g->spec, prec, mname);
    }
    sps_matrix_destroy(A2);
    free(v2);
    free(x);
    free(yd);
    free(yh);
    free(yd2);
    sps_operator_destroy(op);
}

static void test_every_backend(sps_context *ctx)
{
    static const char *const gens[] = {"poisson3d:40", "banded:100000,9,0.01,1",
                                       "powerlaw:50000,16,1", NULL};
    unsigned caps;
    const char *spec;
    for (int i = 0; (spec = spec_at(i, &caps)); i++) {
        if (!(caps & SPS_CAP_GPU)) {
            t_skip(spec, "no GPU kernel in this build");
            continue;
        }
        for (int single = 0; single < 2; single++) {
            if (single && !(caps & SPS_CAP_SINGLE)) continue;
            gpu_run g = {spec, caps, single};
            for_each_case(ctx, gens, check_gpu, &g);
        }
    }
}

static void test_timing(sps_context *ctx)
{
    uint64_t seed = 17;
    sps_matrix *A = band(ctx, 100000, &seed);
    unsigned caps;
    const char *spec;
    for (int i = 0; (spec = spec_at(i, &caps)); i++) {
        if (!(caps & SPS_CAP_GPU) || strchr(spec, ':')) continue;
        sps_operator *op = NULL;
        if (!(op = build(ctx, spec, "band n=100000", A, NULL))) continue;
        sps_timing t;
        sps_status st = sps_operator_time(op, 20, 0, &t);
        T_OK(st == SPS_OK && t.reps == 20 && t.median_us > 0 && t.min_us <= t.median_us &&
                 t.median_us <= t.max_us,
             "%s: timing sane: min %.2f <= median %.2f <= max %.2f us", spec, t.min_us, t.median_us,
             t.max_us);
        sps_operator_destroy(op);
    }
    double gbps = 0;
    T_STATUS(ctx, sps_copy_bandwidth(ctx, 0, &gbps), "device copy bandwidth");
    T_OK(gbps > 0, "device copy bandwidth %.0f GB/s", gbps);
    /* auto's estimate before a measurement (spmv/select.c): 0.87 of the peak */
    const double peak = sps__gpu_peak_gbps(ctx);
    T_OK(peak > 0 && gbps <= 1.05 * peak && gbps >= 0.5 * peak,
         "device copy bandwidth %.0f GB/s against the memory's peak %.0f GB/s (%.2f)", gbps, peak,
         peak > 0 ? gbps / peak : 0.0);
    sps_matrix_destroy(A);
}

static void test_selectors(sps_context *ctx)
{
    uint64_t seed = 23;
    sps_matrix *A = band(ctx, 50000, &seed);
    static const char *const sel[] = {"auto", "tune"};
    for (int s = 0; s < 2; s++) {
        sps_operator *op = NULL;
        sps_operator_info in;
        T_STATUS(ctx, sps_operator_create(ctx, A, sel[s], NULL, &op), "%s on the GPU", sel[s]);
        if (!op) continue;
        sps_operator_get_info(op, &in);
        double err = -1;
        int rep = -1;
        sps_status st = sps_operator_check(op, A, &err, &rep);
        T_OK(st == SPS_OK && err <= 1e-12 && rep == 1 && in.on_gpu && strlen(in.reason) > 0,
             "%s built %s: err %.2e, repeatable %d; reason: %s", sel[s], in.backend, err, rep,
             in.reason);
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);
}

/* A rows x rows matrix: a diagonal, then per row k more entries at scattered
 * columns (no diagonal structure), and row 0 with `longest` entries. */
static sps_matrix *scattered(sps_context *ctx, sps_idx rows, int k, sps_idx longest)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < rows; i++) {
        t_trip_add(&t, i, i, 4.0);
        for (int e = 1; e <= k && i > 0; e++)
            t_trip_add(&t, i, (sps_idx)(((int64_t)i * 7919 + (int64_t)e * 104729) % rows), -0.25);
    }
    for (sps_idx j = 1; j < longest && j < rows; j++) t_trip_add(&t, 0, j, -0.01);
    return t_trip_matrix(ctx, rows, rows, &t);
}

/* auto's operator on A (what names it in a FAIL line), checked against the
 * CSR: its info into *in and the check's error into *err. 1: built and
 * checked; -1: built, but the check failed; 0: not built (T_STATUS said so). */
static int auto_pick(sps_context *ctx, const sps_matrix *A, const char *what, sps_operator_info *in, double *err)
{
    sps_operator *op = NULL;
    *err = -1;
    if (!T_STATUS(ctx, sps_operator_create(ctx, A, "auto", NULL, &op), "auto, %s", what)) return 0;
    sps_operator_get_info(op, in);
    int rep = -1;
    const sps_status st = sps_operator_check(op, A, err, &rep);
    sps_operator_destroy(op);
    return st == SPS_OK ? 1 : -1;
}

/* auto on small matrices (spmv/select.c): within the one-kernel engine's
 * bounds (backend.h: at most SPS_ONEK_AUTO_MAX rows, rows / 1024 rounded up
 * times the longest row at most SPS_ONEK_AUTO_SERIAL), csr-scalar, whatever
 * the mean row (21 entries in the last two); just outside them, csr-vector. */
static void test_auto_small(sps_context *ctx)
{
    static const struct {
        sps_idx rows, longest;
        int k;
        const char *want;
    } c[] = {
        {1024, 128, 4, "csr-scalar"},  {1024, 129, 4, "csr-vector"}, {1025, 64, 4, "csr-scalar"},
        {1025, 65, 4, "csr-vector"},   {31, 8, 3, "csr-scalar"},     {12288, 10, 5, "csr-scalar"},
        {12289, 10, 5, "csr-vector"},  {2048, 64, 20, "csr-scalar"}, {2049, 43, 20, "csr-vector"},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        sps_matrix *A = scattered(ctx, c[i].rows, c[i].k, c[i].longest);
        char what[32];
        snprintf(what, sizeof what, "%d rows", (int)c[i].rows);
        sps_operator_info in;
        double err;
        const int r = auto_pick(ctx, A, what, &in, &err);
        if (r) {
            T_OK(r > 0 && strcmp(in.backend, c[i].want) == 0 && err <= 1e-12,
                 "auto: %d rows, longest %d, %d more a row: %s (want %s, err %.1e): %s", (int)c[i].rows,
                 (int)c[i].longest, c[i].k, in.backend, c[i].want, err, in.reason);
            if (strcmp(c[i].want, "csr-scalar") == 0)
                T_OK(strstr(in.reason, "one-kernel engine") != NULL, "the reason says why: %s", in.reason);
        }
        sps_matrix_destroy(A);
    }
}

/* auto's diagonal picks on a GPU (select.c decide, auto_select): a small
 * banded matrix (DIA within 1.5 slots per nonzero) goes to dia only where a
 * thread of the one-kernel engine would walk at least 32 CSR entries
 * (sps__onek_serial), else csr-scalar; a stencil above 12,288 rows with fewer
 * than 2^20 entries is launch-bound: csr-vector, not dia. */
static void test_auto_diagonal(sps_context *ctx)
{
    static const struct {
        const char *gen, *want;
    } c[] = {
        {"banded:4096,8,0.0,1", "dia"},         /* 4 rows a thread of 8: 32 */
        {"banded:2048,16,0.0,1", "dia"},        /* 2 x 16 = 32 */
        {"banded:2048,15,0.0,1", "csr-scalar"}, /* 30 */
        {"banded:1024,31,0.0,1", "csr-scalar"}, /* 31 */
        {"banded:1024,32,0.0,1", "dia"},        /* 32 */
        {"poisson2d:63", "csr-scalar"},         /* 4 x 5 = 20 */
        {"poisson3d:40", "csr-vector"},         /* 64,000 rows, 438,400 entries */
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(NULL, sps_matrix_generate(NULL, c[i].gen, &A), "%s", c[i].gen)) continue;
        sps_operator_info in;
        double err;
        const int r = auto_pick(ctx, A, c[i].gen, &in, &err);
        if (r)
            T_OK(r > 0 && strcmp(in.backend, c[i].want) == 0 && err <= 1e-12,
                 "auto on %s: %s (want %s, err %.1e): %s", c[i].gen, in.backend, c[i].want, err, in.reason);
        sps_matrix_destroy(A);
    }
}

/* auto's weighed dia (select.c diag_predict): a stencil of at least 2^20
 * entries gets dia when its device conversion pays within the SpMVs the
 * solve is expected to use. poisson3d:100 (6.9M entries): CG takes 234
 * iterations, so dia pays; within 20 it cannot (csr-scalar, and the reason
 * gives the arithmetic). The prediction is checked against the build's
 * measured cost: within a factor of 3. */
static void test_auto_weighed(sps_context *ctx)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(NULL, sps_matrix_generate(NULL, "poisson3d:100", &A), "poisson3d:100")) return;
    static const struct {
        int64_t expected;
        const char *want;
    } c[] = {{234, "dia"}, {20, "csr-scalar"}};
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        sps_operator_opts oo;
        sps_operator_opts_default(&oo);
        oo.expected_spmvs = c[i].expected;
        sps_operator *op = NULL;
        if (!T_STATUS(ctx, sps_operator_create(ctx, A, "auto", &oo, &op), "auto, poisson3d:100")) continue;
        sps_operator_info in;
        sps_operator_get_info(op, &in);
        T_OK(strcmp(in.backend, c[i].want) == 0, "auto on poisson3d:100, %lld SpMVs expected: %s (want %s): %s",
             (long long)c[i].expected, in.backend, c[i].want, in.reason);
        if (strcmp(c[i].want, "dia") == 0)
            T_OK(in.predicted_ms > 0 && in.extra_ms > 0 && in.predicted_ms <= 3 * in.extra_ms &&
                     in.extra_ms <= 3 * in.predicted_ms,
                 "dia's conversion on poisson3d:100: predicted %.2f ms, measured %.2f ms (within 3x)",
                 in.predicted_ms, in.extra_ms);
        else
            T_OK(strstr(in.reason, "pays only after") != NULL, "the reason gives the arithmetic: %s", in.reason);
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);
}

/* The benchmark rows whose work is scheduled at run time (lightspmv's row
 * counter) or combined across blocks (coo's carries): 20 applies, every one
 * bitwise equal to the first, on matrices with very uneven rows. */
static void repeat_bitwise(sps_context *ctx, const char *mname, const sps_matrix *A, void *user)
{
    const char *spec = user;
    sps_operator *op = build(ctx, spec, mname, A, NULL);
    if (!op) return;
    const sps_idx n = sps_matrix_rows(A), m = sps_matrix_cols(A);
    double *x = malloc(((size_t)m + 1) * sizeof *x), *y0 = malloc(((size_t)n + 1) * sizeof *y0);
    double *y = malloc(((size_t)n + 1) * sizeof *y);
    uint64_t seed = 77;
    for (sps_idx j = 0; j < m; j++) x[j] = t_rand(&seed);
    sps_status st = device_apply(ctx, op, 0, x, m, y0, n);
    int same = st == SPS_OK, runs = 1;
    for (; same && runs < 20; runs++) {
        st = device_apply(ctx, op, 0, x, m, y, n);
        for (sps_idx i = 0; st == SPS_OK && same && i < n; i++) same = y[i] == y0[i];
        same &= st == SPS_OK;
    }
    T_OK(same, "%s on %s: 20 runs bitwise equal (%d ran; %s)", spec, mname, runs,
         st == SPS_OK ? "ok" : sps_last_error(ctx));
    free(x);
    free(y0);
    free(y);
    sps_operator_destroy(op);
}

static void test_bench_rows_repeat(sps_context *ctx)
{
    static const char *const specs[] = {"lightspmv", "lightspmv:tpr=2", "lightspmv:tpr=32", "coo"};
    static const char *const gens[] = {"powerlaw:200000,16,1", "poisson3d:60", NULL};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++)
        for (int i = 0; gens[i]; i++) {
            sps_matrix *A = NULL;
            if (sps_matrix_generate(ctx, gens[i], &A) != SPS_OK)
                T_FAIL(gens[i], "generate: %s", sps_last_error(ctx));
            run_case(ctx, gens[i], A, repeat_bitwise, (void *)specs[k]);
        }
}

static void run(sps_context *ctx)
{
    test_every_backend(ctx);
    test_bench_rows_repeat(ctx);
    test_timing(ctx);
    test_selectors(ctx);
    test_auto_small(ctx);
    test_auto_diagonal(ctx);
    test_auto_weighed(ctx);
}

int main(void) { return t_run_gpu("spmv on the GPU", run); }

#else

int main(void)
{
    /* the shared part is compiled (and so kept warning-free) in this build too */
    (void)for_each_case;
    (void)spec_at;
    (void)comp_err;
    (void)build;
    (void)band;
    t_skip("spmv on the GPU", "built without CUDA");
    return t_done();
}

#endif
