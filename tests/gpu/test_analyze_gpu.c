/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_analyze_gpu.c: the device analysis against the host
 * reference (integer features equal, floating ones to rounding, row_std
 * bitwise), bitwise repeatable; the device CSR cache (uploaded once, the
 * copy equal to the host arrays, both upload ways); on real matrices,
 * generated ones and edge cases (empty rows, one very long row, n = 31, 32,
 * 33, 1023, 1024, 1025, rectangular, empty). Prints the timings. */
#include "check.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA
#include "core/gpu.h"

static int same_double(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Relative closeness for the floating features (NaN equals NaN). */
static int close_to(double a, double b, double tol)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return fabs(a - b) <= tol * (fabs(b) > 1 ? fabs(b) : 1);
}

static void compare(const char *name, const sps_features *h, const sps_features *d)
{
    T_OK(d->on_gpu == 1 && h->on_gpu == 0, "%s: device analysis ran on the GPU", name);
    T_OK(d->rows == h->rows && d->cols == h->cols && d->nnz == h->nnz && d->row_min == h->row_min &&
             d->row_max == h->row_max && d->empty_rows == h->empty_rows,
         "%s: sizes and row lengths equal (min %d/%d, max %d/%d, empty %d/%d)", name, d->row_min,
         h->row_min, d->row_max, h->row_max, d->empty_rows, h->empty_rows);
    T_OK(same_double(d->row_mean, h->row_mean) && same_double(d->row_std, h->row_std),
         "%s: row mean and std bitwise equal (%.17g/%.17g)", name, d->row_std, h->row_std);
    T_OK(d->diagonals == h->diagonals && d->drm_slots == h->drm_slots &&
             same_double(d->dia_fill, h->dia_fill) && same_double(d->drm_fill, h->drm_fill),
         "%s: diagonals %d/%d, drm_slots %lld/%lld", name, d->diagonals, h->diagonals,
         (long long)d->drm_slots, (long long)h->drm_slots);
    T_OK(d->hyb_width == h->hyb_width && d->hyb_coo == h->hyb_coo && same_double(d->ell_fill, h->ell_fill),
         "%s: HYB width %d/%d, COO %lld/%lld", name, d->hyb_width, h->hyb_width,
         (long long)d->hyb_coo, (long long)h->hyb_coo);
    T_OK(d->missing_diagonal == h->missing_diagonal && d->zero_diagonal == h->zero_diagonal &&
             d->negative_diagonal == h->negative_diagonal && d->dominant_rows == h->dominant_rows &&
             d->diag_dominant == h->diag_dominant,
         "%s: diagonal entries and dominance equal (missing %d/%d, dominant %d/%d)", name,
         d->missing_diagonal, h->missing_diagonal, d->dominant_rows, h->dominant_rows);
    T_OK(d->symmetric == h->symmetric && d->pattern_symmetric == h->pattern_symmetric &&
             close_to(d->asymmetry, h->asymmetry, 1e-12) &&
             (h->asymmetry != 0.0 || d->asymmetry == 0.0),
         "%s: symmetry %d/%d, pattern %d/%d, asymmetry %.17g/%.17g", name, d->symmetric,
         h->symmetric, d->pattern_symmetric, h->pattern_symmetric, d->asymmetry, h->asymmetry);
}

/* Host and device analyses of A, the device one twice (bitwise equal). */
static void check_matrix(sps_context *ctx, const sps_matrix *A, const char *name)
{
    sps_features h, d, d2;
    if (!T_STATUS(NULL, sps_matrix_analyze(NULL, A, &h), "%s: host analysis", name)) return;
    if (!T_STATUS(ctx, sps_matrix_analyze(ctx, A, &d), "%s: device analysis", name)) return;
    if (!T_STATUS(ctx, sps_matrix_analyze(ctx, A, &d2), "%s: device analysis again", name)) return;
    compare(name, &h, &d);
    d2.analyze_ms = d.analyze_ms;
    d2.device_ms = d.device_ms;
    d2.upload_ms = d.upload_ms;
    d2.upload_gbps = d.upload_gbps;
    T_OK(memcmp(&d, &d2, sizeof d) == 0, "%s: two device analyses bitwise equal", name);
}

/* The device copy holds exactly the host arrays. */
static void check_copy(sps_context *ctx, const char *name, const sps_matrix *A)
{
    const sps_dcsr *d = NULL;
    if (!T_STATUS(ctx, sps__matrix_device(ctx, A, &d, NULL), "%s: device copy", name)) return;
    const sps_csr *H = &A->A;
    size_t rp = ((size_t)H->nrows + 1) * sizeof(sps_idx), ci = (size_t)H->nnz * sizeof(sps_idx),
           va = (size_t)H->nnz * sizeof(double);
    char *b = malloc(rp + ci + va + 1);
    int ok = sps__d2h(ctx, b, d->row_ptr, rp) == SPS_OK && sps__d2h(ctx, b + rp, d->col_idx, ci) == SPS_OK &&
             sps__d2h(ctx, b + rp + ci, d->val, va) == SPS_OK;
    T_OK(ok && memcmp(b, H->row_ptr, rp) == 0 && memcmp(b + rp, H->col_idx, ci) == 0 &&
             memcmp(b + rp + ci, H->val, va) == 0,
         "%s: device CSR equals the host CSR (%s, %.1f MB)", name, d->how, (double)(rp + ci + va) / 1e6);
    free(b);
}

/* Both upload ways give the same copy; the copy is made once per context. */
static void test_upload(sps_context *ctx)
{
    const char *ways[] = {"ring", "register"};
    for (int w = 0; w < 2; w++) {
        setenv("SPS_UPLOAD", ways[w], 1);
        for (int threads = 1; threads <= 4; threads += 3) {
            char t[8];
            snprintf(t, sizeof t, "%d", threads);
            setenv("SPS_UPLOAD_THREADS", t, 1);
            sps_matrix *A = NULL;
            if (!T_STATUS(NULL, sps_matrix_generate(NULL, "poisson3d:60", &A), "poisson3d:60")) continue;
            double ms = -1, gbps = -1, ms2 = -1, gbps2 = -1;
            T_STATUS(ctx, sps_matrix_upload(ctx, A, &ms, &gbps), "upload %s", ways[w]);
            T_STATUS(ctx, sps_matrix_upload(ctx, A, &ms2, &gbps2), "upload %s again", ways[w]);
            T_OK(ms > 0 && gbps > 0 && ms2 == 0 && gbps2 == 0,
                 "%s, %d threads: uploaded once (%.2f ms, %.1f GB/s), the second call a no-op",
                 ways[w], threads, ms, gbps);
            char name[64];
            snprintf(name, sizeof name, "poisson3d:60 via %s x%d", ways[w], threads);
            check_copy(ctx, name, A);
            sps_features f;
            if (T_STATUS(ctx, sps_matrix_analyze(ctx, A, &f), "analysis after upload"))
                T_OK(f.upload_ms == 0 && strcmp(f.upload_how, ways[w]) == 0,
                     "%s: the analysis reused the copy (how '%s')", ways[w], f.upload_how);
            sps_matrix_destroy(A);
        }
    }
    unsetenv("SPS_UPLOAD");
    unsetenv("SPS_UPLOAD_THREADS");
    sps_matrix *A = NULL;
    if (sps_matrix_generate(NULL, "poisson2d:10", &A) == SPS_OK) { /* below 1 MiB: a plain copy */
        check_copy(ctx, "poisson2d:10", A);
        sps_matrix_destroy(A);
    }
}

/* sps__d2h_pinned (the ring the other way) brings back exactly what a plain
 * copy does, across chunk boundaries and thread counts; a fresh destination
 * timed both ways. */
static void test_download(sps_context *ctx)
{
    const size_t mib = (size_t)1 << 20;
    const size_t sizes[] = {1, 8 * 31, mib - 8, mib, 4 * mib - 8, 4 * mib + 8, 17 * mib + 24,
                            64 * mib};
    size_t most = 64 * mib;
    char *h = malloc(most), *a = malloc(most);
    void *d = NULL;
    if (!h || !a || !T_STATUS(ctx, sps__dmalloc(ctx, &d, most), "download: device buffer")) goto out;
    for (size_t i = 0; i < most; i++) h[i] = (char)(i * 2654435761u >> 13);
    if (!T_STATUS(ctx, sps__h2d(ctx, d, h, most), "download: fill")) goto out;
    for (int threads = 1; threads <= 16; threads *= 4) {
        char t[16];
        snprintf(t, sizeof t, "%d", threads);
        setenv("SPS_UPLOAD_THREADS", t, 1);
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            memset(a, 0x5a, sizes[k] + 1 <= most ? sizes[k] + 1 : most);
            int ok = T_STATUS(ctx, sps__d2h_pinned(ctx, a, d, sizes[k]), "download %zu bytes", sizes[k]);
            T_OK(ok && memcmp(a, h, sizes[k]) == 0 && (sizes[k] == most || a[sizes[k]] == 0x5a),
                 "download of %zu bytes, %d threads: exactly the bytes, nothing past them", sizes[k],
                 threads);
        }
    }
    unsetenv("SPS_UPLOAD_THREADS");
    const char *ways[] = {"ring", "pageable", "auto"};
    for (int w = 0; w < 6; w++) { /* fresh (never touched) or touched destinations */
        int touched = w >= 3;
        if (w % 3 < 2) setenv("SPS_DOWNLOAD", ways[w % 3], 1);
        else unsetenv("SPS_DOWNLOAD");
        size_t n = (size_t)32 << 20;
        char *f = malloc(n);
        if (f && touched) memset(f, 1, n);
        double t0 = sps__now_ms();
        sps_status st = f ? sps__d2h_pinned(ctx, f, d, n) : SPS_ERR_NO_MEMORY;
        double ms = sps__now_ms() - t0;
        T_OK(st == SPS_OK && memcmp(f, h, n) == 0, "download into %s memory (%s)",
             touched ? "touched" : "fresh", ways[w % 3]);
        printf("# download of 32 MiB into %s host memory: %s %.2f ms = %.1f GB/s\n",
               touched ? "touched" : "fresh", ways[w % 3], ms, (double)n / (ms * 1e6));
        free(f);
    }
    unsetenv("SPS_DOWNLOAD");
out:
    sps__dfree(d);
    free(h);
    free(a);
}

/* n x n tridiagonal with an optional empty row and an optional long row. */
static sps_matrix *edge_matrix(sps_idx n, sps_idx empty_row, sps_idx long_row, int nonsym)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        if (i == empty_row) continue;
        if (i == long_row) {
            for (sps_idx j = 0; j < n; j += 1 + (j % 3 == 1)) t_trip_add(&t, i, j, 1.0 + j % 7);
            continue;
        }
        t_trip_add(&t, i, i, i % 5 == 0 ? -2.0 : 3.0);
        if (i > 0) t_trip_add(&t, i, i - 1, nonsym ? -1.5 : -1.0);
        if (i + 1 < n) t_trip_add(&t, i, i + 1, -1.0);
    }
    return t_trip_matrix(NULL, n, n, &t);
}

static void test_edges(sps_context *ctx)
{
    const sps_idx ns[] = {1, 31, 32, 33, 1023, 1024, 1025};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        sps_idx n = ns[k];
        for (int v = 0; v < 4; v++) {
            sps_matrix *A = edge_matrix(n, v & 1 ? n / 2 : -1, v & 2 ? n - 1 - n / 3 : -1, v == 3);
            if (!A) continue;
            char name[64];
            snprintf(name, sizeof name, "n = %d%s%s%s", n, v & 1 ? ", empty row" : "",
                     v & 2 ? ", long row" : "", v == 3 ? ", nonsymmetric" : "");
            check_matrix(ctx, A, name);
            sps_matrix_destroy(A);
        }
    }
    /* rectangular (tall and wide) and empty */
    double a[15] = {1, 0, 0, 0, 2, 0, 3, 0, 0, 0, 0, 0, 0, -1, 1};
    sps_matrix *R = t_matrix_from_dense(NULL, 3, 5, a);
    if (R) {
        check_matrix(ctx, R, "3 x 5");
        sps_matrix_destroy(R);
    }
    R = t_matrix_from_dense(NULL, 5, 3, a);
    if (R) {
        check_matrix(ctx, R, "5 x 3");
        sps_matrix_destroy(R);
    }
    sps_idx rp0[4] = {0, 0, 0, 0};
    sps_matrix *Z = NULL;
    if (sps_matrix_create_csr(NULL, 0, 0, rp0, NULL, NULL, &Z) == SPS_OK) {
        check_matrix(ctx, Z, "0 x 0");
        sps_matrix_destroy(Z);
    }
    if (sps_matrix_create_csr(NULL, 3, 3, rp0, NULL, NULL, &Z) == SPS_OK) {
        check_matrix(ctx, Z, "3 x 3 without entries");
        sps_matrix_destroy(Z);
    }
}

static void check_real(sps_context *ctx, const sps_matrix *A, const char *name)
{
    check_matrix(ctx, A, name);
    check_copy(ctx, name, A);
}

static void test_real(sps_context *ctx)
{
    int n = t_each_real(ctx, NULL, "real matrices", check_real);
    T_OK(n > 0, "real matrices compared: %d", n);
}

/* Timings for the lead's table: host vs device analysis, upload both ways. */
static void test_timing(sps_context *ctx, const char *spec)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(NULL, spec, &A) != SPS_OK) return;
    sps_features h, d;
    sps_matrix_analyze(NULL, A, &h);
    for (int w = 0; w < 2; w++) {
        setenv("SPS_UPLOAD", w ? "register" : "ring", 1);
        sps__matrix_drop_device(A);
        if (sps_matrix_analyze(ctx, A, &d) != SPS_OK) break;
        printf("# %s (%lld nnz, %.0f MB): upload %s %.2f ms = %.1f GB/s; device analysis %.2f ms "
               "first, ",
               spec, (long long)d.nnz, (double)(d.nnz * 12 + (d.rows + 1) * 4) / 1e6, d.upload_how,
               d.upload_ms, d.upload_gbps, d.analyze_ms);
        sps_matrix_analyze(ctx, A, &d);
        printf("%.2f ms cached (kernels %.2f ms); host %.1f ms\n", d.analyze_ms, d.device_ms,
               h.analyze_ms);
    }
    unsetenv("SPS_UPLOAD");
    compare(spec, &h, &d);
    const char *specs[] = {"csr-vector", "drm", "auto"};
    for (int k = 0; k < 3; k++) {
        sps_operator *op = NULL;
        sps_operator_info in;
        if (sps_operator_create(ctx, A, specs[k], NULL, &op) != SPS_OK) continue;
        sps_operator_get_info(op, &in);
        printf("# %s %s: convert %.2f ms, upload %.2f ms (from the device copy)%s%s\n", spec,
               in.backend, in.convert_ms, in.upload_ms, in.payoff[0] ? "; " : "", in.payoff);
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);
}

/* auto weighs DRM's conversion against the expected SpMVs and says so. */
static void test_payoff(sps_context *ctx)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(NULL, sps_matrix_generate(NULL, "poisson3d:100", &A), "poisson3d:100")) return;
    sps_features f;
    sps_operator_opts o;
    sps_operator_opts_default(&o);
    o.features = &f;
    if (!T_STATUS(ctx, sps_matrix_analyze(ctx, A, &f), "analysis")) goto out;
    const int64_t expect[] = {1, 1000000000};
    for (int k = 0; k < 2; k++) {
        o.expected_spmvs = expect[k];
        sps_operator *op = NULL;
        sps_operator_info in;
        if (!T_STATUS(ctx, sps_operator_create(ctx, A, "auto", &o, &op), "auto")) continue;
        sps_operator_get_info(op, &in);
        /* a diagonal format: dia on this pure 7-diagonal stencil */
        int drm = strcmp(in.backend, "drm") == 0 || strcmp(in.backend, "dia") == 0;
        T_OK(in.expected_spmvs == expect[k] && in.ref_us > 0 && in.spmv_us > 0 && in.payoff[0] &&
                 strncmp(in.payoff, in.backend, strlen(in.backend)) == 0,
             "auto, %lld SpMVs expected: %s; %s", (long long)expect[k], in.backend, in.payoff);
        T_OK(k == 0 ? !drm : drm, "auto picks dia/drm only when it pays within %lld SpMVs (%s: %s)",
             (long long)expect[k], in.backend, in.reason);
        if (drm)
            T_OK(in.break_even >= 0 && in.saved_us > 0 && in.predicted_ms > 0 && in.extra_ms > 0,
                 "%s payoff: break-even %.0f, saves %.2f us, predicted %.2f ms, measured %.2f ms",
                 in.backend, in.break_even, in.saved_us, in.predicted_ms, in.extra_ms);
        printf("# auto (%lld expected): %s | %s\n", (long long)expect[k], in.payoff, in.reason);
        sps_operator_destroy(op);
    }
out:
    sps_matrix_destroy(A);
}

/* Where sps_matrix_analyze runs on a GPU context (core/analyze.c): the host
 * below 32,768 entries, the device from there; SPS_ANALYZE=host|device
 * forces one. */
static void test_where(sps_context *ctx)
{
    static const struct {
        const char *gen, *env;
        int gpu;
    } c[] = {{"poisson2d:63", NULL, 0},        {"poisson2d:200", NULL, 1},
             {"poisson2d:63", "device", 1},    {"poisson2d:200", "host", 0},
             {"banded:3838,9,0.0,1", NULL, 0}, {"banded:3839,9,0.0,1", NULL, 1}}; /* 32,761 and 32,770 entries */
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        sps_matrix *A = NULL;
        sps_features f;
        if (c[i].env) setenv("SPS_ANALYZE", c[i].env, 1);
        else unsetenv("SPS_ANALYZE");
        if (T_STATUS(ctx, sps_matrix_generate(ctx, c[i].gen, &A), "generate %s", c[i].gen) &&
            T_STATUS(ctx, sps_matrix_analyze(ctx, A, &f), "analyze %s", c[i].gen))
            T_OK(f.on_gpu == c[i].gpu, "%s (%lld entries), SPS_ANALYZE=%s: analyzed on the %s (want the %s)",
                 c[i].gen, (long long)f.nnz, c[i].env ? c[i].env : "(unset)", f.on_gpu ? "device" : "host",
                 c[i].gpu ? "device" : "host");
        sps_matrix_destroy(A);
    }
    setenv("SPS_ANALYZE", "device", 1);
}

static void run(sps_context *ctx)
{
    /* the comparisons below run the device analysis at every size */
    setenv("SPS_ANALYZE", "device", 1);
    test_where(ctx);
    test_upload(ctx);
    test_download(ctx);
    test_edges(ctx);
    const char *gens[] = {"poisson2d:63", "poisson3d:40", "poisson3d27:20", "convdiff2d:300,50",
                          "banded:200000,9,0.01,1", "powerlaw:100000,16,1", "powerlaw:2000,500,2"};
    t_each_generated(ctx, NULL, "generated matrices", gens, sizeof gens / sizeof *gens, check_matrix);
    test_real(ctx);
    test_payoff(ctx);
    test_timing(ctx, "poisson3d:160");
    test_timing(ctx, "banded:2000000,9,0.01,1");
    test_timing(ctx, "powerlaw:1000000,16,1");
}

int main(void) { return t_run_gpu("device analysis and upload", run); }

#else

T_MAIN_NO_CUDA("device analysis and upload")

#endif
