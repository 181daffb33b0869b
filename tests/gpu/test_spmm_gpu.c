/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_spmm_gpu.c: the block product on the GPU: every
 * backend with every applicable kind (native kernel, cusparseSpMM, auto,
 * columns) against the host reference (k single CSR products) within 1e-12,
 * for k = 1..32 with odd sizes, padded leading dimensions, beta = 0 over NaN
 * and beta != 0; the edge matrices (empty rows, one full row, n = 31, 32,
 * 33, 1023, 1024, 1025), generated and real matrices; determinism (two runs
 * bitwise equal, for the native kernel and deterministic backends); the
 * timing helper. SPS_SPMM_PANEL (the row-panel kernel after ASpT) on the CSR
 * family: also bitwise its host reference sps__panel_spmm, on every matrix
 * above and on one with no dense column and a full one (every column dense,
 * several tiles), k up to 40 (passes of 32), and after update_values.
 * Without a device the program prints one SKIP line. */
#include "unit/spmm_cases.h"

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#include "spmv/spmm.h"

static const sps_spmm_kind kinds[] = {SPS_SPMM_NATIVE, SPS_SPMM_CUSPARSE, SPS_SPMM_AUTO,
                                      SPS_SPMM_COLUMNS, SPS_SPMM_PANEL};
#define NKINDS ((int)(sizeof kinds / sizeof *kinds))

/* Y (host, in and out) = alpha A X + beta Y on the device with kind. */
static sps_status dev_multi(sps_context *ctx, sps_operator *op, sps_spmm_kind kind, int k,
                            const double *X, int64_t ldx, size_t nx, double beta, double *Y,
                            int64_t ldy, size_t ny)
{
    void *dx = NULL, *dy = NULL;
    sps_status st = sps__dmalloc(ctx, &dx, nx * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, &dy, ny * sizeof(double));
    if (st == SPS_OK) st = sps__h2d(ctx, dx, X, nx * sizeof(double));
    if (st == SPS_OK) st = sps__h2d(ctx, dy, Y, ny * sizeof(double));
    if (st == SPS_OK) st = sps_operator_apply_multi_kind(op, kind, k, 1.5, dx, ldx, beta, dy, ldy);
    if (st == SPS_OK) st = sps__d2h(ctx, Y, dy, ny * sizeof(double));
    sps__dfree(dx);
    sps__dfree(dy);
    return st;
}

/* kind applies to op: cusparse and panel need the CSR family, native the CSR family
 * or dia and drm (their own block kernels). */
static int kind_applies(const char *spec, sps_spmm_kind kind)
{
    int csr = strncmp(spec, "csr", 3) == 0 || strncmp(spec, "cusparse", 8) == 0 ||
              strncmp(spec, "merge", 5) == 0;
    int diag = strncmp(spec, "dia", 3) == 0 || strncmp(spec, "drm", 3) == 0;
    if (kind == SPS_SPMM_CUSPARSE || kind == SPS_SPMM_PANEL) return csr;
    return csr || diag || kind == SPS_SPMM_AUTO || kind == SPS_SPMM_COLUMNS;
}

typedef struct run_cfg {
    const int *ks;
    int nk;
    int extra; /* also dia:maxfill=1 and drm:rows=0 (small matrices only) */
} run_cfg;

static void one_k(sps_context *ctx, const char *spec, unsigned caps, sps_spmm_kind kind,
                  const char *mname, const sps_matrix *A, sps_operator *op, int k, int j)
{
    sps_idx m = sps_matrix_rows(A), n = sps_matrix_cols(A);
    int64_t ldx = n + 3, ldy = m + 1;
    size_t nx = (size_t)ldx * (size_t)k + 1, ny = (size_t)ldy * (size_t)k + 1;
    double beta = j % 2 ? -0.5 : 0.0;
    double *X = spmm_block(n, k, ldx, 31 + (uint64_t)k), *Y0 = spmm_block(m, k, ldy, 32);
    double *Y = malloc(ny * sizeof *Y), *Y2 = malloc(ny * sizeof *Y2), *R = malloc(ny * sizeof *R);
    if (beta == 0.0)
        for (size_t i = 0; i < ny; i++) Y0[i] = NAN;
    memcpy(Y, Y0, ny * sizeof *Y);
    memcpy(Y2, Y0, ny * sizeof *Y);
    spmm_ref(A, k, 1.5, X, ldx, beta, Y0, ldy, R);
    sps_status st = dev_multi(ctx, op, kind, k, X, ldx, nx, beta, Y, ldy, ny);
    double err = st == SPS_OK ? spmm_err(A, k, 1.5, X, ldx, beta, Y0, Y, R, ldy) : INFINITY;
    const char *kn = sps_spmm_kind_name(kind);
    if (!T_OK(st == SPS_OK && err <= 1e-12, "gpu spmm %s/%s on %s, k=%d, beta=%g: err %.2e", spec,
              kn, mname, k, beta, err))
        fprintf(stderr, "  %s: %s\n", sps_strerror(st), sps_last_error(ctx));
    if (st == SPS_OK && kind == SPS_SPMM_PANEL) {
        /* the kernel's order exactly: bitwise its host reference */
        sps_panel P;
        double *H = malloc(ny * sizeof *H);
        memcpy(H, Y0, ny * sizeof *H);
        sps_status bs = sps__panel_build(ctx, &A->A, &P);
        if (bs == SPS_OK) sps__panel_spmm(&P, k, 1.5, X, ldx, beta, H, ldy);
        int same = bs == SPS_OK && spmm_same(Y, H, m, k, ldy);
        if (!T_OK(same, "gpu spmm %s/panel on %s, k=%d, beta=%g: bitwise the host reference", spec,
                  mname, k, beta) && bs == SPS_OK) {
            for (size_t i = 0; i < ny; i++)
                if (memcmp(&Y[i], &H[i], sizeof *H) != 0) {
                    fprintf(stderr, "  first difference at %zu (row %lld, column %lld): %.17g vs %.17g\n", i,
                            (long long)(i % (size_t)ldy), (long long)(i / (size_t)ldy), Y[i], H[i]);
                    break;
                }
        }
        if (bs == SPS_OK) sps__panel_free(&P);
        free(H);
    }
    /* cusparseSpMM (CSR_ALG1) is the baseline, not bitwise repeatable: on the
     * H100 two runs differed (n = 31, k = 2, every backend's CSR) */
    int det = kind == SPS_SPMM_NATIVE || kind == SPS_SPMM_PANEL ||
              (kind != SPS_SPMM_CUSPARSE && (caps & SPS_CAP_DETERMINISTIC));
    if (st == SPS_OK && det) {
        st = dev_multi(ctx, op, kind, k, X, ldx, nx, beta, Y2, ldy, ny);
        T_OK(st == SPS_OK && spmm_same(Y, Y2, m, k, ldy), "gpu spmm %s/%s on %s, k=%d: two runs bitwise equal",
             spec, kn, mname, k);
    }
    free(X);
    free(Y0);
    free(Y);
    free(Y2);
    free(R);
}

static void one_backend(sps_context *ctx, const char *spec, unsigned caps, const char *mname,
                        const sps_matrix *A, const run_cfg *cfg)
{
    sps_operator *op = build(ctx, spec, mname, A, NULL);
    if (!op) return;
    for (int q = 0; q < NKINDS; q++) {
        if (!kind_applies(spec, kinds[q])) continue;
        for (int j = 0; j < cfg->nk; j++) one_k(ctx, spec, caps, kinds[q], mname, A, op, cfg->ks[j], j);
    }
    sps_operator_destroy(op);
}

/* Every registered format; with cfg->extra, dia also without its fill limit
 * (the edge matrices' scattered entries make it refuse) and drm's other
 * mapping. */
static void every_backend(sps_context *ctx, const char *mname, const sps_matrix *A, const run_cfg *cfg)
{
    unsigned caps = 0;
    const char *spec;
    for (int i = 0; (spec = spec_at(i, &caps)) != NULL; i++)
        if ((caps & SPS_CAP_GPU) && !strchr(spec, ':')) one_backend(ctx, spec, caps, mname, A, cfg);
    if (!cfg->extra) return;
    one_backend(ctx, "dia:maxfill=1", SPS_CAP_DETERMINISTIC, mname, A, cfg);
    one_backend(ctx, "drm:rows=0", SPS_CAP_DETERMINISTIC, mname, A, cfg);
}

static void test_edges(sps_context *ctx)
{
    run_cfg all = {spmm_ks, SPMM_NK, 1};
    for (int i = 0; i < SPMM_NN; i++) {
        sps_matrix *A = spmm_edge_matrix(ctx, spmm_ns[i], 50 + (uint64_t)i);
        char name[64];
        snprintf(name, sizeof name, "edge n=%d", spmm_ns[i]);
        if (A) every_backend(ctx, name, A, &all);
        sps_matrix_destroy(A);
    }
    /* the panel kernel's own edges: no dense column in any panel; every
     * column dense (150 columns: three tiles per panel); k above 32 (passes) */
    static const int wide[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 40};
    run_cfg panel = {wide, (int)(sizeof wide / sizeof *wide), 0};
    sps_matrix *N = spmm_nodense_matrix(ctx, 1025, 5), *F = spmm_full_matrix(ctx, 70, 150, 6);
    if (N) one_backend(ctx, "csr-vector", SPS_CAP_DETERMINISTIC, "no dense column n=1025", N, &panel);
    if (F) one_backend(ctx, "csr-vector", SPS_CAP_DETERMINISTIC, "full 70 x 150", F, &panel);
    sps_matrix *E = spmm_edge_matrix(ctx, 1025, 7);
    if (E) one_backend(ctx, "csr-scalar", SPS_CAP_DETERMINISTIC, "edge n=1025 (wide k)", E, &panel);
    sps_matrix_destroy(N);
    sps_matrix_destroy(F);
    sps_matrix_destroy(E);
}

/* The panels are rebuilt after sps_operator_update_values. */
static void test_panel_update(sps_context *ctx)
{
    sps_matrix *A = NULL, *B = NULL;
    sps_operator *op = NULL;
    double *vals = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson3d:20", &A), "panel update: generate")) return;
    B = t_revalued(ctx, A, 2.0, 0.0, 1.0, &vals);
    if (B && T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "panel update: operator")) {
        double err = -1;
        int rep = -1;
        sps_status st = sps_operator_check_multi(op, A, SPS_SPMM_PANEL, 8, &err, &rep);
        T_OK(st == SPS_OK && err <= 1e-12 && rep == 1, "panel before update: err %.2g", err);
        st = sps_operator_update_values(op, vals);
        if (st == SPS_OK) st = sps_operator_check_multi(op, B, SPS_SPMM_PANEL, 8, &err, &rep);
        T_OK(st == SPS_OK && err <= 1e-12 && rep == 1, "panel after update_values: err %.2g, repeatable %d",
             err, rep);
    }
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
    free(vals);
}

static void test_generated(sps_context *ctx)
{
    static const char *const gens[] = {"poisson3d:24", "banded:20000,9,0.01,1", "powerlaw:20000,16,1"};
    static const int ks[] = {1, 3, 8, 32};
    run_cfg cfg = {ks, 4, 0};
    for (int i = 0; i < 3; i++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(ctx, sps_matrix_generate(ctx, gens[i], &A), "generate %s", gens[i])) continue;
        every_backend(ctx, gens[i], A, &cfg);
        sps_matrix_destroy(A);
    }
}

static void real_one(sps_context *ctx, const sps_matrix *A, const char *name)
{
    static const int ks[] = {2, 8, 17};
    run_cfg cfg = {ks, 3, 0};
    every_backend(ctx, name, A, &cfg);
}

static void test_real(sps_context *ctx) { t_each_real(ctx, ctx, "gpu spmm on real matrices", real_one); }

static void test_timing(sps_context *ctx)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson3d:40", &A), "timing: generate")) return;
    if (T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "timing: operator")) {
        for (int q = 0; q < NKINDS; q++) {
            sps_timing t;
            sps_status st = sps_operator_time_multi(op, kinds[q], 8, 10, &t);
            T_OK(st == SPS_OK && t.reps == 10 && t.median_us > 0 && t.min_us <= t.median_us &&
                     t.median_us <= t.max_us, "time_multi %s k=8: median %.1f us",
                 sps_spmm_kind_name(kinds[q]), t.median_us);
        }
    }
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* sps_operator_check_multi (what spmv-bench --nrhs --check runs) for every
 * backend and kind on a stencil matrix. */
static void test_check_multi(sps_context *ctx)
{
    static const char *const specs[] = {"csr-vector", "csr-scalar", "merge", "cusparse", "dia",
                                        "drm", "drm:rows=0", "drm:hdia", "hyb"};
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson3d:30", &A), "check_multi: generate")) return;
    for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
        sps_operator *op = NULL;
        if (!T_STATUS(ctx, sps_operator_create(ctx, A, specs[i], NULL, &op), "check_multi: %s", specs[i]))
            continue;
        for (int q = 0; q < NKINDS; q++) {
            if (!kind_applies(specs[i], kinds[q])) continue;
            double err = -1;
            int rep = -1;
            sps_status st = sps_operator_check_multi(op, A, kinds[q], 8, &err, &rep);
            /* repeatable: required of our kernels, not of cuSPARSE's SpMM or of
             * the columns of a backend that is not deterministic itself */
            sps_operator_info oi;
            sps_operator_get_info(op, &oi);
            int must = kinds[q] == SPS_SPMM_NATIVE || kinds[q] == SPS_SPMM_PANEL ||
                       (kinds[q] != SPS_SPMM_CUSPARSE && (oi.caps & SPS_CAP_DETERMINISTIC));
            T_OK(st == SPS_OK && err <= 1e-12 && (rep == 1 || !must),
                 "check_multi %s/%s k=8: err %.2g, repeatable %d%s", specs[i],
                 sps_spmm_kind_name(kinds[q]), err, rep, must ? "" : " (not required)");
        }
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);
}

/* Single precision: auto takes the columns path, bitwise the per-column
 * products; native is refused. */
static void test_single(sps_context *ctx)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_operator_opts oo;
    sps_operator_opts_default(&oo);
    oo.precision = SPS_SINGLE;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson3d:20", &A), "single: generate")) return;
    sps_idx n = sps_matrix_rows(A);
    const int k = 3;
    size_t bytes = (size_t)n * k * sizeof(float);
    float *h = malloc(bytes), *y1 = malloc(bytes), *y2 = malloc(bytes);
    uint64_t seed = 9;
    for (size_t i = 0; i < (size_t)n * k; i++) h[i] = (float)t_rand(&seed);
    void *dx = NULL, *dy = NULL;
    sps_status st = sps_operator_create(ctx, A, "csr-vector", &oo, &op);
    if (st == SPS_OK) st = sps__dmalloc(ctx, &dx, bytes);
    if (st == SPS_OK) st = sps__dmalloc(ctx, &dy, bytes);
    if (st == SPS_OK) st = sps__h2d(ctx, dx, h, bytes);
    if (st == SPS_OK) st = sps_operator_apply_multi(op, k, 1.0, dx, n, 0.0, dy, n);
    if (st == SPS_OK) st = sps__d2h(ctx, y1, dy, bytes);
    for (int c = 0; c < k && st == SPS_OK; c++)
        st = sps_operator_apply(op, 1.0, (float *)dx + (size_t)c * n, 0.0, (float *)dy + (size_t)c * n);
    if (st == SPS_OK) st = sps__d2h(ctx, y2, dy, bytes);
    T_OK(st == SPS_OK && memcmp(y1, y2, bytes) == 0, "single precision: auto = per-column products, bitwise");
    T_OK(op && sps_operator_apply_multi_kind(op, SPS_SPMM_NATIVE, k, 1.0, dx, n, 0.0, dy, n) ==
                   SPS_ERR_UNSUPPORTED, "single precision: native refused");
    T_OK(op && sps_operator_apply_multi_kind(op, SPS_SPMM_PANEL, k, 1.0, dx, n, 0.0, dy, n) ==
                   SPS_ERR_UNSUPPORTED, "single precision: panel refused");
    sps__dfree(dx);
    sps__dfree(dy);
    free(h);
    free(y1);
    free(y2);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void run(sps_context *ctx)
{
    test_single(ctx);
    test_check_multi(ctx);
    test_panel_update(ctx);
    test_edges(ctx);
    test_generated(ctx);
    test_real(ctx);
    test_timing(ctx);
}

int main(void) { return t_run_gpu("spmm on the GPU", run); }

#else

int main(void)
{
    (void)spmm_edge_matrix;
    (void)spmm_block;
    (void)spmm_ref;
    (void)spmm_err;
    (void)spmm_same;
    (void)for_each_case;
    (void)spec_at;
    (void)comp_err;
    (void)build;
    (void)band;
    t_skip("spmm on the GPU", "built without CUDA");
    return t_done();
}

#endif
