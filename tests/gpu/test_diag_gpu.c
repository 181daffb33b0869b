/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_diag_gpu.c: drm, dia and merge kernels against their host
 * references (double and single), the edge cases, bitwise repeatability, and a
 * timing print on poisson3d:64 */
#include "unit/diag_check.h"

#if SPS_HAVE_CUDA
#include "core/gpu.h"

#define G 64 /* guard entries around x and after y */

typedef struct buf {
    void *d;      /* device allocation */
    size_t bytes;
} buf;

/* Device copy of h[0..n) as double or float, between `lo` and `hi` guard
 * entries of value guard. Returns the pointer to entry 0. */
static void *to_dev(sps_context *ctx, buf *b, const double *h, size_t n, int single, size_t lo,
                    size_t hi, double guard)
{
    const size_t es = single ? sizeof(float) : sizeof(double), tot = n + lo + hi;
    char *tmp = malloc(tot * es + 1);
    for (size_t i = 0; i < tot; i++) {
        const double v = i < lo || i >= lo + n ? guard : h[i - lo];
        if (single) ((float *)tmp)[i] = (float)v;
        else ((double *)tmp)[i] = v;
    }
    b->bytes = tot * es;
    b->d = NULL;
    if (sps__dmalloc(ctx, &b->d, b->bytes) != SPS_OK || sps__h2d(ctx, b->d, tmp, b->bytes) != SPS_OK) {
        T_FAIL("device buffer", "%s", sps_last_error(ctx));
        free(tmp);
        return NULL;
    }
    free(tmp);
    return (char *)b->d + lo * es;
}

/* Whole buffer back as double. */
static double *from_dev(sps_context *ctx, const buf *b, int single)
{
    const size_t es = single ? sizeof(float) : sizeof(double), n = b->bytes / es;
    char *tmp = malloc(b->bytes + 1);
    double *out = malloc(n * sizeof *out + 1);
    if (sps__d2h(ctx, tmp, b->d, b->bytes) != SPS_OK) T_FAIL("copy back", "%s", sps_last_error(ctx));
    for (size_t i = 0; i < n; i++) out[i] = single ? ((float *)tmp)[i] : ((double *)tmp)[i];
    free(tmp);
    return out;
}

static double round_to(int single, double v) { return single ? (double)(float)v : v; }

/* Apply spec on the GPU in one precision and compare with the format's host
 * reference on the same (rounded) inputs: beta = 0 over a y full of NaN, and
 * beta = -0.5 twice (bitwise equal runs). x lies between NaN guards, y is
 * followed by guards that must stay untouched. */
static void gpu_check(sps_context *ctx, const sps_matrix *A, const char *spec, int single,
                      const char *what)
{
    sps_operator_opts o;
    sps_operator_opts_default(&o);
    o.precision = single ? SPS_SINGLE : SPS_DOUBLE;
    sps_operator *op = NULL;
    sps_status st = sps_operator_create(ctx, A, spec, &o, &op);
    if (st == SPS_ERR_UNSUPPORTED && strncmp(spec, "dia", 3) == 0) {
        printf("# %s refuses %s: %s\n", spec, what, sps_last_error(ctx));
        return;
    }
    if (st != SPS_OK) {
        T_FAIL("GPU operator", "%s (%s) on %s: %s", spec, single ? "single" : "double", what,
               sps_last_error(ctx));
        return;
    }
    const sps_idx n = sps_matrix_rows(A), nc = sps_matrix_cols(A);
    uint64_t seed = 99 + (uint64_t)n;
    double *x = malloc(((size_t)nc + 1) * sizeof *x), *y0 = malloc(((size_t)n + 1) * sizeof *y0);
    double *nan = malloc(((size_t)n + 1) * sizeof *nan), *ref = malloc(((size_t)n + 1) * sizeof *ref);
    for (sps_idx c = 0; c < nc; c++) x[c] = round_to(single, t_rand(&seed));
    for (sps_idx r = 0; r < n; r++) {
        y0[r] = round_to(single, t_rand(&seed));
        nan[r] = NAN;
    }
    const double tol = single ? 1e-4 : 1e-12, alpha = 1.5, beta = -0.5;
    buf bx, by;
    void *dx = to_dev(ctx, &bx, x, (size_t)nc, single, G, G, NAN);
    double err0 = INFINITY, err1 = INFINITY;
    int guards = 1, same = 0;
    /* beta = 0 over NaN */
    void *dy = to_dev(ctx, &by, nan, (size_t)n, single, 0, G, 12345.0);
    if (dx && dy && sps_operator_apply(op, alpha, dx, 0.0, dy) == SPS_OK) {
        double *y = from_dev(ctx, &by, single);
        memcpy(ref, nan, (size_t)n * sizeof *ref);
        sps_operator_apply_host(op, alpha, x, 0.0, ref);
        err0 = dc_rel_err(A, x, y0, alpha, 0.0, y, ref);
        for (size_t k = 0; k < G; k++) guards = guards && y[n + k] == 12345.0;
        free(y);
    } else T_FAIL("GPU apply", "%s on %s: %s", spec, what, sps_last_error(ctx));
    sps__dfree(by.d);
    /* beta = -0.5, twice */
    double *yr[2] = {NULL, NULL};
    for (int run = 0; run < 2; run++) {
        dy = to_dev(ctx, &by, y0, (size_t)n, single, 0, G, 12345.0);
        if (dx && dy && sps_operator_apply(op, alpha, dx, beta, dy) == SPS_OK) yr[run] = from_dev(ctx, &by, single);
        sps__dfree(by.d);
    }
    if (yr[0] && yr[1]) {
        memcpy(ref, y0, (size_t)n * sizeof *ref);
        sps_operator_apply_host(op, alpha, x, beta, ref);
        err1 = dc_rel_err(A, x, y0, alpha, beta, yr[0], ref);
        same = memcmp(yr[0], yr[1], ((size_t)n + G) * sizeof(double)) == 0;
        for (size_t k = 0; k < G; k++) guards = guards && yr[0][n + k] == 12345.0;
    }
    T_OK(err0 <= tol && err1 <= tol && guards,
         "%s %s on %s: GPU = host (err %.2g beta=0 over NaN, %.2g beta=-0.5)%s", spec,
         single ? "single" : "double", what, err0, err1, guards ? "" : ", GUARD OVERWRITTEN");
    T_OK(same, "%s %s on %s: two runs bitwise equal", spec, single ? "single" : "double", what);
    free(yr[0]);
    free(yr[1]);
    sps__dfree(bx.d);
    free(x);
    free(y0);
    free(nan);
    free(ref);
    sps_operator_destroy(op);
}

static const char *const specs[] = {"drm",        "drm:seg=64",  "drm:nomerge", "drm:rows=0",
                                    "drm:rows=0,order=merge", "drm:unroll=8",
                                    "drm:rows=256", "drm:seg=8", "drm:seg=128,rows=128",
                                    "drm:hdia,rows=0", "drm:rows=0,order=list",
                                    "dia",        "merge"};
#define NSPECS (sizeof specs / sizeof *specs)

static void check_all(sps_context *ctx, const sps_matrix *A, const char *what)
{
    for (size_t s = 0; s < NSPECS; s++)
        for (int single = 0; single < 2; single++) gpu_check(ctx, A, specs[s], single, what);
}

static void test_edges(sps_context *ctx)
{
    const sps_idx rp0[] = {0};
    sps_matrix *A = NULL;
    sps_matrix_create_csr(ctx, 0, 0, rp0, NULL, NULL, &A);
    for (size_t s = 0; s < NSPECS; s++) {
        sps_operator *op = NULL;
        sps_status st = sps_operator_create(ctx, A, specs[s], NULL, &op);
        T_OK(st == SPS_OK && sps_operator_apply(op, 1.0, NULL, 0.0, NULL) == SPS_OK,
             "%s on the GPU: 0 x 0", specs[s]);
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);

    const sps_idx ofs[] = {-1000, -200, -37, -1, 1, 3, 64, 500};
    const sps_idx sizes[] = {1, 31, 32, 33, 1023, 1024, 1025, 70001};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        A = dc_banded(ctx, sizes[k], ofs, 8, 0.7, 60, sizes[k] / 50, 17 + k);
        char what[64];
        snprintf(what, sizeof what, "banded n=%d", sizes[k]);
        check_all(ctx, A, what);
        sps_matrix_destroy(A);
    }

    /* Empty rows, a very long row (> 32 x 1024 entries), rectangular shapes. */
    static sps_idx len[40000];
    for (sps_idx r = 0; r < 40000; r++) len[r] = r % 5 == 0 ? 0 : 1 + r % 4;
    len[20000] = 40000;
    A = dc_rowlens(ctx, 40000, 40000, len, 3);
    check_all(ctx, A, "40000 rows, empty rows and one of 40000 entries");
    sps_matrix_destroy(A);
    A = dc_rowlens(ctx, 3000, 1700, len, 4);
    check_all(ctx, A, "3000 x 1700");
    sps_matrix_destroy(A);
    A = dc_rowlens(ctx, 1700, 3000, len + 1, 5);
    check_all(ctx, A, "1700 x 3000");
    sps_matrix_destroy(A);
    for (sps_idx r = 0; r < 5000; r++) len[r] = 0;
    A = dc_rowlens(ctx, 5000, 5000, len, 6);
    check_all(ctx, A, "5000 x 5000 without entries");
    sps_matrix_destroy(A);
}

static void test_update(sps_context *ctx)
{
    const sps_idx ofs[] = {-70, -3, -1, 1, 2, 40};
    sps_matrix *A = dc_banded(ctx, 5000, ofs, 6, 0.6, 20, 25, 3);
    double *nv = NULL;
    sps_matrix *B = t_revalued(ctx, A, 3.0, 0.0, -0.5, &nv);
    const char *sp[] = {"drm", "dia", "merge"};
    for (int k = 0; k < 3; k++) {
        sps_operator *op = NULL;
        if (sps_operator_create(ctx, A, sp[k], NULL, &op) != SPS_OK ||
            sps_operator_update_values(op, nv) != SPS_OK) {
            T_FAIL("GPU update_values", "%s: %s", sp[k], sps_last_error(ctx));
            sps_operator_destroy(op);
            continue;
        }
        /* The updated operator must match a fresh one built from B. */
        sps_operator *fresh = NULL;
        sps_operator_create(ctx, B, sp[k], NULL, &fresh);
        const sps_idx n = 5000;
        double *x = malloc(n * sizeof *x);
        uint64_t seed = 4;
        for (sps_idx i = 0; i < n; i++) x[i] = t_rand(&seed);
        buf bx, b1, b2;
        void *dx = to_dev(ctx, &bx, x, n, 0, 0, 0, 0), *d1 = to_dev(ctx, &b1, x, n, 0, 0, 0, 0),
             *d2 = to_dev(ctx, &b2, x, n, 0, 0, 0, 0);
        int ok = dx && d1 && d2 && fresh && sps_operator_apply(op, 1.0, dx, 0.0, d1) == SPS_OK &&
                 sps_operator_apply(fresh, 1.0, dx, 0.0, d2) == SPS_OK;
        double *y1 = ok ? from_dev(ctx, &b1, 0) : NULL, *y2 = ok ? from_dev(ctx, &b2, 0) : NULL;
        T_OK(ok && memcmp(y1, y2, n * sizeof *y1) == 0,
             "%s on the GPU: after update_values = built from the new values, bitwise", sp[k]);
        free(y1);
        free(y2);
        free(x);
        sps__dfree(bx.d);
        sps__dfree(b1.d);
        sps__dfree(b2.d);
        sps_operator_destroy(fresh);
        sps_operator_destroy(op);
    }
    free(nv);
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

static void timing(sps_context *ctx, const sps_matrix *A, const char *spec)
{
    double bw = 0.0;
    if (sps_copy_bandwidth(ctx, 0, &bw) != SPS_OK) bw = 0.0;
    printf("# %s (%d rows, %lld nonzeros), device copy bandwidth %.0f GB/s\n", spec,
           sps_matrix_rows(A), (long long)sps_matrix_nnz(A), bw);
    const char *tspecs[] = {"drm", "drm:rows=0", "drm:nomerge", "drm:seg=64", "dia", "merge"};
    for (size_t s = 0; s < sizeof tspecs / sizeof *tspecs; s++) {
        for (int single = 0; single < 2; single++) {
            sps_operator_opts o;
            sps_operator_opts_default(&o);
            o.precision = single ? SPS_SINGLE : SPS_DOUBLE;
            sps_operator *op = NULL;
            sps_timing t;
            sps_operator_info in;
            if (sps_operator_create(ctx, A, tspecs[s], &o, &op) != SPS_OK) {
                T_FAIL("timing operator", "%s: %s", tspecs[s], sps_last_error(ctx));
                continue;
            }
            sps_status st = sps_operator_time(op, 100, 4, &t);
            sps_operator_get_info(op, &in);
            const double gbs = st == SPS_OK ? in.bytes_per_spmv / (t.median_us * 1e3) : 0.0;
            printf("# %-14s %s: median %8.1f us, %6.0f GB/s on its bytes model (%.0f%% of copy), "
                   "convert %.1f ms, %s\n",
                   tspecs[s], single ? "single" : "double", t.median_us, gbs,
                   bw > 0 ? 100.0 * gbs / bw : 0.0, in.convert_ms, in.detail);
            T_STATUS(ctx, st, "timed %s %s", tspecs[s], single ? "single" : "double");
            sps_operator_destroy(op);
        }
    }
}

static void run(sps_context *ctx)
{
    test_edges(ctx);
    test_update(ctx);
    const char *gens[] = {"poisson3d:40", "banded:200000,9,0.01,1", "poisson2d:300",
                          "powerlaw:50000,8,3"};
    dc_each_gen(ctx, "diag GPU backends on generated matrices", gens, 4, check_all);
    dc_each_real(ctx, "diag GPU backends on real matrices", check_all);
    const char *timed[] = {"poisson3d:64"};
    dc_each_gen(ctx, "timing", timed, 1, timing);
}

int main(void) { return t_run_gpu("drm, dia, merge on the GPU", run); }

#else

T_MAIN_NO_CUDA("drm, dia, merge on the GPU")

#endif
