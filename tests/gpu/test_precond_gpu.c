/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_precond_gpu.c: every preconditioner (and variant:
 * ilu0/ic0 solve=jacobi, cheby degrees, bjacobi block sizes) on the GPU
 * against the host reference: apply within 1e-10 relative (or within 100x
 * of what a rounding-level perturbation of A does to the host's own result,
 * for unstable incomplete factorizations), twice bitwise
 * equal, r untouched, and the same error (status and message) where the
 * host's factorization fails; ilu0/ic0 refreshed onto new values equal to a
 * fresh GPU build, and a failed refresh leaves the old one working; cheby's
 * fused steps against its unfused apply (cheby:fused=0) on dia, csr-scalar,
 * csr-vector and drm operators */
#include "check.h"
#include "core/gpu.h"
#include "internal.h"
#include "precond/cheby/cheby.h"
#include "precond/precond.h"
#include "unit/pc_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA
static sps_context *gctx, *hctx;

/* The host apply of `type` built on A with every value perturbed by a
 * relative 2^-50 (a few rounding errors): how far rounding alone moves z for
 * this factorization. An unstable incomplete factorization (tiny or negative
 * pivots: IC(0) breaks down on bcsstk09 and nos2) amplifies rounding by many
 * orders of magnitude, so the GPU, which rounds in another order, is held to
 * that noise floor, not to a fixed 1e-10. Returns -1 if the perturbed build
 * fails. */
static double rounding_noise(const sps_matrix *A, const char *type, const double *r,
                             const double *zh)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = sps_matrix_rows(A);
    int64_t nnz = sps_matrix_nnz(A);
    double *pv = malloc((size_t)(nnz ? nnz : 1) * sizeof *pv), *zp = malloc((size_t)n * sizeof *zp);
    uint64_t seed = 99;
    for (int64_t k = 0; k < nnz; k++) pv[k] = v[k] * (1.0 + ldexp(t_rand(&seed), -50));
    sps_matrix *P = NULL;
    sps_precond *pp = NULL;
    double noise = -1;
    if (sps_matrix_create_csr(hctx, n, sps_matrix_cols(A), rp, ci, pv, &P) == SPS_OK &&
        sps_precond_create(hctx, P, type, &pp) == SPS_OK && sps_precond_apply(pp, r, zp) == SPS_OK) {
        double num = 0, den = 0;
        for (sps_idx i = 0; i < n; i++) {
            num += (zp[i] - zh[i]) * (zp[i] - zh[i]);
            den += zh[i] * zh[i];
        }
        noise = den > 0 ? sqrt(num / den) : sqrt(num);
    }
    sps_precond_destroy(pp);
    sps_matrix_destroy(P);
    free(pv);
    free(zp);
    return noise;
}

/* Build the same preconditioner on the host and on the GPU (with the GPU
 * operator gop, or NULL) and compare. */
static void compare_op(const char *what, const sps_matrix *A, const char *type, sps_operator *gop)
{
    sps_precond *hp = NULL, *gp = NULL;
    sps_status hs = sps_precond_create(hctx, A, type, &hp);
    char hmsg[1024];
    snprintf(hmsg, sizeof hmsg, "%s", sps_last_error(hctx));
    sps_status gs = sps_precond_create_ex(gctx, A, gop, type, &gp);
    if (hs != SPS_OK) {
        T_OK(gs == hs && strcmp(sps_last_error(gctx), hmsg) == 0,
             "%s %s: the GPU fails like the host (%s / %s)", what, type, hmsg, sps_last_error(gctx));
        sps_precond_destroy(gp);
        return;
    }
    if (!T_STATUS(gctx, gs, "%s %s: GPU setup (%.1f ms)", what, type, sps_precond_setup_ms(gp))) {
        sps_precond_destroy(hp);
        return;
    }
    sps_idx n = sps_matrix_rows(A);
    size_t nb = (size_t)n * sizeof(double);
    double *r = malloc(nb), *zh = malloc(nb), *z1 = malloc(nb), *z2 = malloc(nb), *rb = malloc(nb);
    double *dr = NULL, *dz = NULL;
    uint64_t seed = 11;
    for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
    sps_status st = sps_precond_apply(hp, r, zh);
    if (st == SPS_OK) st = sps__dmalloc(gctx, (void **)&dr, nb);
    if (st == SPS_OK) st = sps__dmalloc(gctx, (void **)&dz, nb);
    if (st == SPS_OK) st = sps__h2d(gctx, dr, r, nb);
    if (st == SPS_OK) st = sps__dmemset(gctx, dz, 0xff, nb); /* NaN: every entry must be written */
    if (st == SPS_OK) st = sps_precond_apply(gp, dr, dz);
    if (st == SPS_OK) st = sps__d2h(gctx, z1, dz, nb);
    if (st == SPS_OK) st = sps__dmemset(gctx, dz, 0xff, nb);
    if (st == SPS_OK) st = sps_precond_apply(gp, dr, dz);
    if (st == SPS_OK) st = sps__d2h(gctx, z2, dz, nb);
    if (st == SPS_OK) st = sps__d2h(gctx, rb, dr, nb);
    if (T_STATUS(gctx, st, "%s %s: GPU apply", what, type)) {
        double num = 0, den = 0;
        for (sps_idx i = 0; i < n; i++) {
            num += (z1[i] - zh[i]) * (z1[i] - zh[i]);
            den += zh[i] * zh[i];
        }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num);
        double tol = 1e-10;
        if (rel > tol) { /* measure how much rounding alone moves this factorization */
            double noise = rounding_noise(A, type, r, zh);
            if (noise > 0 && 100 * noise > tol) tol = 100 * noise;
        }
        T_OK(rel <= tol, "%s %s: GPU apply = host apply (relative %.2g, tolerance %.2g)", what,
             type, rel, tol);
        T_OK(memcmp(z1, z2, nb) == 0, "%s %s: two GPU applies bitwise equal", what, type);
        T_OK(memcmp(r, rb, nb) == 0, "%s %s: r unchanged on the device", what, type);
    }
    if (strcmp(type, "jacobi") == 0 || strcmp(type, "l1jacobi") == 0) {
        T_OK(gp->fused_diag && sps__is_device_ptr(gp->fused_diag), "%s %s: fused_diag lives on the device", what, type);
        /* built on the device from its CSR copy, the same sums in the same order */
        T_OK(st == SPS_OK && memcmp(z1, zh, nb) == 0, "%s %s: GPU apply bitwise the host's", what, type);
    }
    sps__dfree(dr);
    sps__dfree(dz);
    free(r); free(zh); free(z1); free(z2); free(rb);
    sps_precond_destroy(hp);
    sps_precond_destroy(gp);
}

static void compare(const char *what, const sps_matrix *A, const char *type)
{
    compare_op(what, A, type, NULL);
}

static void each_compare(const char *spec, const sps_matrix *A, const char *type, const char *extra)
{
    (void)extra;
    compare(spec, A, type);
}

static void test_generated(void)
{
    static const pc_case cases[] = {
        {"poisson2d:60", "none jacobi ilu0 ic0 ilu0:exact ic0:exact l1jacobi cheby bjacobi:block=8 ilu0:solve=jacobi ic0:solve=jacobi,sweeps=3", NULL},
        {"poisson3d:20", "jacobi ilu0:exact ic0:exact l1jacobi cheby cheby:degree=8 cheby:degree=0 ic0:solve=jacobi", NULL},
        {"poisson3d27:12", "ic0:exact cheby cheby:degree=2,lanczos=40,ratio=20", NULL},
        {"convdiff2d:50,100", "jacobi ilu0:exact l1jacobi cheby ilu0:solve=jacobi ilu0:solve=jacobi,sweeps=0", NULL},
        {"banded:20000,9,0.01,5", "jacobi ilu0:exact l1jacobi cheby", NULL},
        {"powerlaw:5000,6,3", "jacobi ilu0:exact l1jacobi bjacobi bjacobi:block=1 bjacobi:block=3 bjacobi:block=32", NULL},
        {"poisson2d:33", "none jacobi l1jacobi cheby", NULL}, /* 1089 rows: past one block */
        {"poisson3d:160", "cheby", NULL},                        /* 4.1M rows: the dot's grid is capped */
        {"banded:31,3,0,1", "jacobi l1jacobi cheby", NULL},
        {"banded:32,3,0,1", "jacobi l1jacobi cheby", NULL},
        {"banded:33,3,0,1", "jacobi l1jacobi cheby bjacobi:block=4", NULL},
        {"banded:1023,5,0,2", "l1jacobi cheby", NULL},
        {"banded:1024,5,0,2", "l1jacobi cheby ilu0:solve=jacobi,sweeps=4", NULL},
        {"banded:1025,5,0,2", "l1jacobi cheby bjacobi:block=32", NULL},
    };
    pc_each_case(hctx, cases, sizeof cases / sizeof *cases, each_compare);
}

static void test_pivots(void)
{
    double z3[9] = {1, 1, 0, 1, 1, 1, 0, 1, 1}; /* u11 = 0 */
    double ind[4] = {1, 2, 2, 1};                /* l11^2 = -3 */
    double mis[16] = {2, 1, 0, 0, 1, 0, 1, 0, 0, 1, 2, 0, 0, 0, 0, 3}; /* no (1,1) */
    sps_matrix *A = t_matrix_from_dense(hctx, 3, 3, z3);
    if (A) {
        compare("zero-pivot 3x3", A, "ilu0:exact");
        compare("zero-pivot 3x3", A, "ic0:exact");
        compare("zero-pivot 3x3", A, "ilu0");
        compare("zero-pivot 3x3", A, "ic0");
        compare("zero-pivot 3x3", A, "ilu0:solve=jacobi");
        compare("zero-pivot 3x3", A, "ic0:solve=jacobi");
        sps_matrix_destroy(A);
    }
    if ((A = t_matrix_from_dense(hctx, 2, 2, ind))) {
        compare("indefinite 2x2", A, "ic0:exact");
        compare("indefinite 2x2", A, "ic0");
        sps_matrix_destroy(A);
    }
    if ((A = t_matrix_from_dense(hctx, 4, 4, mis))) {
        compare("missing-diagonal 4x4", A, "ilu0:exact");
        compare("missing-diagonal 4x4", A, "ic0:exact");
        compare("missing-diagonal 4x4", A, "ilu0");
        compare("missing-diagonal 4x4", A, "ic0");
        compare("missing-diagonal 4x4", A, "jacobi");
        compare("missing-diagonal 4x4", A, "l1jacobi");
        compare("missing-diagonal 4x4", A, "cheby");
        compare("missing-diagonal 4x4", A, "bjacobi:block=1");
        compare("missing-diagonal 4x4", A, "bjacobi:block=2");
        sps_matrix_destroy(A);
    }
    /* a stored zero on the diagonal (row 1: 1 0 1) */
    const sps_idx zrp[4] = {0, 2, 5, 7}, zci[7] = {0, 1, 0, 1, 2, 1, 2};
    const double zv[7] = {2, 1, 1, 0, 1, 1, 2};
    double zr[9] = {2, 1, 0, 0, 0, 0, 0, 1, 2}; /* row 1 all zero (l1jacobi refuses) */
    A = NULL;
    if (T_STATUS(hctx, sps_matrix_create_csr(hctx, 3, 3, zrp, zci, zv, &A), "zero-diagonal 3x3")) {
        compare("zero-diagonal 3x3", A, "jacobi");
        compare("zero-diagonal 3x3", A, "l1jacobi");
        compare("zero-diagonal 3x3", A, "cheby");
        sps_matrix_destroy(A);
    }
    if ((A = t_matrix_from_dense(hctx, 3, 3, zr))) {
        compare("zero-row 3x3", A, "jacobi");
        compare("zero-row 3x3", A, "l1jacobi");
        sps_matrix_destroy(A);
    }
    const char *types[] = {"none", "jacobi", "ilu0", "ic0", "l1jacobi", "cheby", "bjacobi",
                           "ilu0:solve=jacobi", "ic0:solve=jacobi", "ilu0:exact", "ic0:exact"};
    pc_check_empty(hctx, gctx, types, 11, "GPU ");
}

static void test_real(void)
{
    const char *const *names = t_real_matrices();
    int n = 0;
    for (int k = 0; names[k]; k++) {
        const char *path = t_real_matrix_path(names[k]);
        sps_matrix *A = NULL;
        sps_status st = path ? sps_matrix_read(hctx, path, &A) : SPS_ERR_IO;
        if (st != SPS_OK) {
            T_FAIL(names[k], "read: %s", sps_last_error(hctx));
            continue;
        }
        const char *kind = t_manifest_kind(names[k]);
        sps_features f;
        if (kind && sps_matrix_analyze(hctx, A, &f) == SPS_OK &&
            f.rows <= 60000) {
            if (strcmp(kind, "spd") == 0) compare(names[k], A, "ic0:exact");
            if (strcmp(kind, "spd") == 0) compare(names[k], A, "cheby");
            if (f.zero_diagonal == 0 && f.empty_rows == 0) compare(names[k], A, "l1jacobi");
            compare(names[k], A, "bjacobi");
            compare(names[k], A, "bjacobi:block=6");
            if (f.missing_diagonal == 0) compare(names[k], A, "ilu0:exact");
            if (f.missing_diagonal == 0) compare(names[k], A, "ilu0:solve=jacobi");
            if (strcmp(kind, "spd") == 0) compare(names[k], A, "ic0:solve=jacobi");
            if (f.missing_diagonal == 0 && f.zero_diagonal == 0) compare(names[k], A, "jacobi");
            n++;
        }
        sps_matrix_destroy(A);
    }
    /* lns_3937: structural zero pivot, same row and words on both */
    const char *lns = t_real_matrix_path("lns_3937");
    sps_matrix *A = NULL;
    if (lns && sps_matrix_read(hctx, lns, &A) == SPS_OK) {
        compare("lns_3937", A, "ilu0:exact");
        compare("lns_3937", A, "ilu0");
        sps_matrix_destroy(A);
    }
    T_OK(n > 0, "real matrices compared: %d", n);
}

/* cheby through the solve's own operator (auto picks a GPU format) equals
 * the host's through csr-vector; a single-precision operator is refused. */
static void test_operator(void)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL, *sop = NULL;
    if (sps_matrix_generate(hctx, "poisson3d:24", &A) != SPS_OK) return;
    if (T_STATUS(gctx, sps_operator_create(gctx, A, "auto", NULL, &op), "auto operator"))
        compare_op("poisson3d:24 with the auto operator", A, "cheby", op);
    sps_operator_opts o;
    sps_operator_opts_default(&o);
    o.precision = SPS_SINGLE;
    if (T_STATUS(gctx, sps_operator_create(gctx, A, "csr-vector", &o, &sop), "single operator")) {
        sps_precond *pc = NULL;
        T_OK(sps_precond_create_ex(gctx, A, sop, "cheby", &pc) == SPS_ERR_INVALID_ARG && !pc &&
                 strstr(sps_last_error(gctx), "single"),
             "single-precision operator refused: %s", sps_last_error(gctx));
    }
    sps_operator_destroy(sop);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* CG + cheby on the GPU: converges in the host's iteration count (+-1), and
 * two solves give bitwise the same x. */
static void test_solve(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(hctx, "poisson3d:30", &A) != SPS_OK) return;
    sps_idx n = sps_matrix_rows(A);
    size_t nb = (size_t)n * sizeof(double);
    double *b = malloc(nb), *one = malloc(nb), *x[3];
    for (sps_idx i = 0; i < n; i++) one[i] = 1;
    sps_matrix_spmv_host(A, 1.0, one, 0.0, b);
    sps_context *cs[3] = {hctx, gctx, gctx};
    int64_t its[3] = {-1, -1, -1};
    int reason[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        x[k] = calloc((size_t)n, sizeof(double));
        sps_operator *op = NULL;
        sps_precond *pc = NULL;
        sps_solver *s = NULL;
        sps_solve_info in;
        if (T_STATUS(cs[k], sps_operator_create(cs[k], A, "csr-vector", NULL, &op), "op %d", k) &&
            T_STATUS(cs[k], sps_precond_create_ex(cs[k], A, op, "cheby", &pc), "cheby %d", k) &&
            T_STATUS(cs[k], sps_solver_create(cs[k], &s), "solver %d", k) &&
            T_STATUS(cs[k], sps_solve(s, op, pc, b, x[k], &in), "solve %d", k)) {
            its[k] = in.iterations;
            reason[k] = in.reason;
        }
        sps_solver_destroy(s);
        sps_precond_destroy(pc);
        sps_operator_destroy(op);
    }
    T_OK(reason[0] > 0 && reason[1] > 0 && llabs(its[1] - its[0]) <= 1,
         "poisson3d:30 CG+cheby: GPU %lld iterations, host %lld", (long long)its[1], (long long)its[0]);
    T_OK(its[1] == its[2] && memcmp(x[1], x[2], nb) == 0, "poisson3d:30 CG+cheby: two GPU solves bitwise equal");
    for (int k = 0; k < 3; k++) free(x[k]);
    free(b);
    free(one);
    sps_matrix_destroy(A);
}

/* ---- cheby's fused steps (precond/cheby/cheby_steps.cuh) ------------------- */

/* tridiag(-1, 4 + i % 3, -1): SPD, n rows. */
static sps_matrix *tridiag(sps_idx n)
{
    sps_idx *rp = malloc(((size_t)n + 1) * sizeof *rp), *ci = malloc(3 * (size_t)n * sizeof *ci), k = 0;
    double *v = malloc(3 * (size_t)n * sizeof *v);
    sps_matrix *A = NULL;
    if (rp && ci && v) {
        rp[0] = 0;
        for (sps_idx i = 0; i < n; i++) {
            for (sps_idx j = i > 0 ? i - 1 : 0; j <= i + 1 && j < n; j++) {
                ci[k] = j;
                v[k++] = i == j ? 4.0 + i % 3 : -1.0;
            }
            rp[i + 1] = k;
        }
        sps_matrix_create_csr(hctx, n, n, rp, ci, v, &A);
    }
    free(rp), free(ci), free(v);
    return A;
}

/* cheby:degree=K built with op (fused=1, the default, and fused=0) and on the
 * host: the fused apply runs where the operator gives its rows (dia, and the
 * CSR family with at most SPS_CHEBY_FUSED_CSR_ROW entries a row on average)
 * and not elsewhere; it equals the unfused apply bitwise where
 * the backend sums a row in spmv/dev_rows.cuh's order (dia, csr-scalar), and
 * within 1e-12 relative elsewhere (csr-vector: lanes, then a shuffle tree);
 * both within 1e-10 of the host; the fused apply twice bitwise, r untouched,
 * every entry of z written. */
static void fused_case(const char *what, const sps_matrix *A, sps_operator *op, const char *opname, int rows,
                       int bitwise, int degree)
{
    char spec[64], spec0[64];
    snprintf(spec, sizeof spec, "cheby:degree=%d", degree);
    snprintf(spec0, sizeof spec0, "cheby:degree=%d,fused=0", degree);
    sps_precond *pf = NULL, *pu = NULL, *ph = NULL;
    sps_idx n = sps_matrix_rows(A);
    size_t nb = (size_t)n * sizeof(double);
    double *r = malloc(nb), *rb = malloc(nb), *zf = malloc(nb), *zf2 = malloc(nb), *zu = malloc(nb), *zh = malloc(nb);
    double *dr = NULL, *dz = NULL;
    uint64_t seed = 23;
    for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
    if (!T_STATUS(gctx, sps_precond_create_ex(gctx, A, op, spec, &pf), "%s %s %s: fused build", what, opname, spec) ||
        !T_STATUS(gctx, sps_precond_create_ex(gctx, A, op, spec0, &pu), "%s %s %s: unfused build", what, opname, spec0) ||
        !T_STATUS(hctx, sps_precond_create(hctx, A, spec, &ph), "%s %s: host build", what, spec))
        goto done;
    T_OK(sps__cheby_gpu_fused(pf) == rows && sps__cheby_gpu_fused(pu) == 0,
         "%s %s %s: fused steps %s, fused=0 never (%d, %d)", what, opname, spec, rows ? "taken" : "not taken",
         sps__cheby_gpu_fused(pf), sps__cheby_gpu_fused(pu));
    sps_status st = sps_precond_apply(ph, r, zh);
    if (st == SPS_OK) st = sps__dmalloc(gctx, (void **)&dr, nb);
    if (st == SPS_OK) st = sps__dmalloc(gctx, (void **)&dz, nb);
    if (st == SPS_OK) st = sps__h2d(gctx, dr, r, nb);
    sps_precond *pcs[3] = {pf, pf, pu};
    double *out[3] = {zf, zf2, zu};
    for (int k = 0; k < 3 && st == SPS_OK; k++) {
        st = sps__dmemset(gctx, dz, 0xff, nb); /* NaN: every entry must be written */
        if (st == SPS_OK) st = sps_precond_apply(pcs[k], dr, dz);
        if (st == SPS_OK) st = sps__d2h(gctx, out[k], dz, nb);
    }
    if (st == SPS_OK) st = sps__d2h(gctx, rb, dr, nb);
    if (!T_STATUS(gctx, st, "%s %s %s: applies", what, opname, spec)) goto done;
    double ru = t_rel_diff(zu, zh, n), rf = t_rel_diff(zf, zh, n), rfu = t_rel_diff(zf, zu, n);
    if (bitwise)
        T_OK(memcmp(zf, zu, nb) == 0, "%s %s %s: fused bitwise the unfused apply (relative %.2g)", what, opname,
             spec, rfu);
    else
        T_OK(rfu <= 1e-12, "%s %s %s: fused = unfused apply (relative %.2g)", what, opname, spec, rfu);
    T_OK(rf <= 1e-10 && ru <= 1e-10, "%s %s %s: fused and unfused = host apply (relative %.2g, %.2g)", what,
         opname, spec, rf, ru);
    T_OK(memcmp(zf, zf2, nb) == 0, "%s %s %s: two fused applies bitwise equal", what, opname, spec);
    T_OK(memcmp(r, rb, nb) == 0, "%s %s %s: r unchanged on the device", what, opname, spec);
done:
    sps__dfree(dr);
    sps__dfree(dz);
    free(r), free(rb), free(zf), free(zf2), free(zu), free(zh);
    sps_precond_destroy(pf);
    sps_precond_destroy(pu);
    sps_precond_destroy(ph);
}

/* Every operator kind and degree on A; dia may refuse A (fill): then not
 * compared, and *dia_done is not counted. */
static void fused_matrix(const char *what, const sps_matrix *A, int *dia_done)
{
    static const struct {
        const char *name;
        int rows, bitwise;
    } ops[] = {{"dia", 1, 1}, {"csr-scalar", 1, 1}, {"csr-vector", 1, 0}, {"drm", 0, 1}};
    static const int degrees[] = {1, 2, 3, 4, 8};
    for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
        sps_operator *op = NULL;
        sps_status st = sps_operator_create(gctx, A, ops[o].name, NULL, &op);
        if (st == SPS_ERR_UNSUPPORTED && o == 0) { /* dia refuses a matrix with too much fill */
            printf("# %s: dia refused (%s)\n", what, sps_last_error(gctx));
            continue;
        }
        if (!T_STATUS(gctx, st, "%s: %s operator", what, ops[o].name)) continue;
        for (size_t d = 0; d < sizeof degrees / sizeof *degrees; d++)
            fused_case(what, A, op, ops[o].name,
                       ops[o].rows && (o == 0 || sps_matrix_nnz(A) <= SPS_CHEBY_FUSED_CSR_ROW *
                                                                       (int64_t)sps_matrix_rows(A)),
                       ops[o].bitwise, degrees[d]);
        *dia_done += o == 0;
        sps_operator_destroy(op);
    }
}

static void test_fused(void)
{
    int dia = 0;
    static const char *const gens[] = {"poisson3d:20", "poisson2d:63"};
    for (size_t g = 0; g < sizeof gens / sizeof *gens; g++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(hctx, sps_matrix_generate(hctx, gens[g], &A), "%s", gens[g])) continue;
        fused_matrix(gens[g], A, &dia);
        sps_matrix_destroy(A);
    }
    static const sps_idx sizes[] = {31, 32, 33, 1023, 1024, 1025};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char what[40];
        snprintf(what, sizeof what, "tridiagonal n=%d", sizes[k]);
        sps_matrix *A = tridiag(sizes[k]);
        if (T_OK(A != NULL, "%s", what)) fused_matrix(what, A, &dia);
        sps_matrix_destroy(A);
    }
    static const char *const real[] = {"nos6", "bcsstk09", "gr_30_30"};
    for (size_t k = 0; k < sizeof real / sizeof *real; k++) {
        sps_matrix *A = t_read_real(hctx, real[k]);
        if (A) fused_matrix(real[k], A, &dia);
        sps_matrix_destroy(A);
    }
    T_OK(dia >= 8, "cheby fused: %d matrices through a dia operator", dia);
    /* the default operator (op NULL: cheby's own csr-vector) takes the fused steps too */
    sps_matrix *A = NULL;
    sps_precond *pc = NULL;
    if (T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:20", &A), "poisson2d:20") &&
        T_STATUS(gctx, sps_precond_create(gctx, A, "cheby", &pc), "cheby, own operator"))
        T_OK(sps__cheby_gpu_fused(pc) == 1, "cheby with its own csr-vector operator: fused steps");
    sps_precond_destroy(pc);
    sps_matrix_destroy(A);
}

/* ---- numeric-only refresh (sps_precond_update_values) ---------------------- */

/* A copy of A (made on hctx) with f applied to each entry (i, j, a_ij). */
static sps_matrix *revalued(const sps_matrix *A, double (*f)(sps_idx, sps_idx, double, const void *),
                            const void *u)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix *B = NULL;
    if (sps_matrix_csr(A, &rp, &ci, &v) != SPS_OK) return NULL;
    sps_idx n = sps_matrix_rows(A);
    double *w = malloc((size_t)(rp[n] ? rp[n] : 1) * sizeof *w);
    for (sps_idx i = 0; w && i < n; i++)
        for (sps_idx k = rp[i]; k < rp[i + 1]; k++) w[k] = f(i, ci[k], v[k], u);
    if (w) sps_matrix_create_csr(hctx, n, sps_matrix_cols(A), rp, ci, w, &B);
    free(w);
    return B;
}

/* Symmetric new values: a_ij (1 + ((i + j) % 5) / 8) plus 0.25 |a_ii| on the diagonal. */
static double sym_scaled(sps_idx i, sps_idx j, double a, const void *u)
{
    (void)u;
    return a * (1.0 + (i + j) % 5 / 8.0) + (i == j ? 0.25 * fabs(a) : 0.0);
}

/* sym_scaled with row k's lower part and diagonal and column k's upper part
 * zeroed (the pattern stays): the first zero pivot of ILU(0) and IC(0) is at row k. */
static double zero_pivot_at(sps_idx i, sps_idx j, double a, const void *u)
{
    sps_idx k = *(const sps_idx *)u;
    return (i == k && j <= k) || (j == k && i < k) ? 0.0 : sym_scaled(i, j, a, u);
}

/* Rows scaled by 1 + (i % 3) / 4: the pattern symmetric, the values not. */
static double row_scaled(sps_idx i, sps_idx j, double a, const void *u)
{
    (void)j, (void)u;
    return a * (1.0 + (i % 3) / 4.0);
}

/* z = M^-1 r on the device for host r and z. */
static sps_status gpu_apply(sps_precond *pc, const double *r, double *z, sps_idx n)
{
    size_t nb = (size_t)n * sizeof(double);
    double *dr = NULL, *dz = NULL;
    sps_status st = sps__dmalloc(gctx, (void **)&dr, nb);
    if (st == SPS_OK) st = sps__dmalloc(gctx, (void **)&dz, nb);
    if (st == SPS_OK) st = sps__h2d(gctx, dr, r, nb);
    if (st == SPS_OK) st = sps__dmemset(gctx, dz, 0xff, nb); /* NaN: every entry must be written */
    if (st == SPS_OK) st = sps_precond_apply(pc, dr, dz);
    if (st == SPS_OK) st = sps__d2h(gctx, z, dz, nb);
    sps__dfree(dr);
    sps__dfree(dz);
    return st;
}

/* pc refreshed onto B against a fresh GPU build on B: relative 1e-12, and
 * bitwise (csrilu02/csric02 and SpSV are deterministic; the analyses depend
 * on the pattern only). Where the build on B fails (a real matrix whose
 * factorization breaks down on the new values), the refresh fails alike. */
static void refresh_equals_fresh(const char *what, const char *type, sps_precond *pc,
                                 const sps_matrix *B, const double *r, double *z1, double *z2)
{
    sps_idx n = sps_matrix_rows(B);
    sps_precond *fresh = NULL;
    sps_status fs = sps_precond_create(gctx, B, type, &fresh);
    if (fs != SPS_OK) {
        char want[512];
        snprintf(want, sizeof want, "%s", sps_last_error(gctx));
        T_OK(sps_precond_update_values(pc, B) == fs && strcmp(sps_last_error(gctx), want) == 0,
             "%s %s: the build on the new values fails and so does the refresh (%s)", what, type, want);
        return;
    }
    if (T_STATUS(gctx, sps_precond_update_values(pc, B), "%s %s: GPU refresh (%.2f ms)", what, type,
                 sps_precond_setup_ms(pc))) {
        sps_status st = gpu_apply(pc, r, z1, n);
        if (st == SPS_OK) st = gpu_apply(fresh, r, z2, n);
        if (T_STATUS(gctx, st, "%s %s: applies", what, type)) {
            double rel = t_rel_diff(z1, z2, n);
            T_OK(rel <= 1e-12, "%s %s: refreshed apply = a fresh GPU build's (relative %.2g)", what, type, rel);
            T_OK(memcmp(z1, z2, (size_t)n * sizeof *z1) == 0, "%s %s: and bitwise", what, type);
        }
    }
    sps_precond_destroy(fresh);
}

/* A refresh that must fail (zero pivot, nonsymmetric values for ic0): the
 * status and words of a GPU build on the same values, and the apply after it
 * bitwise the one before. */
static void refresh_fails(const char *what, const char *type, sps_precond *pc, const sps_matrix *Z,
                          const double *r, double *z1, double *z2)
{
    sps_idx n = sps_matrix_rows(Z);
    sps_precond *fresh = NULL;
    sps_status fs = sps_precond_create(gctx, Z, type, &fresh);
    char want[512];
    snprintf(want, sizeof want, "%s", sps_last_error(gctx));
    sps_precond_destroy(fresh);
    sps_status st0 = gpu_apply(pc, r, z1, n);
    sps_status st = sps_precond_update_values(pc, Z);
    T_OK(fs != SPS_OK && st == fs && strcmp(sps_last_error(gctx), want) == 0,
         "%s %s: the refresh fails as a GPU build does (%s / %s)", what, type, want, sps_last_error(gctx));
    T_OK(st0 == SPS_OK && gpu_apply(pc, r, z2, n) == SPS_OK && memcmp(z1, z2, (size_t)n * sizeof *z1) == 0,
         "%s %s: after the failed refresh the apply is bitwise the old one", what, type);
}

/* Every natural-order ilu0/ic0 variant on A (the multicolor one:
 * test_mcilu_gpu): refreshed onto new values, onto a zero pivot at row k
 * (then onto good values again), and ic0 onto nonsymmetric values. */
static void refresh_case(const char *what, const sps_matrix *A, int spd, int real)
{
    static const char *const types[] = {"ilu0:exact", "ic0:exact", "ilu0:solve=jacobi", "ic0:solve=jacobi"};
    sps_idx n = sps_matrix_rows(A), k = n / 3;
    sps_matrix *B = revalued(A, sym_scaled, NULL), *Z = revalued(A, zero_pivot_at, &k);
    sps_matrix *N = revalued(A, row_scaled, NULL);
    double *r = malloc((size_t)n * sizeof *r), *z1 = malloc((size_t)n * sizeof *z1),
           *z2 = malloc((size_t)n * sizeof *z2);
    uint64_t seed = 5;
    for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
    for (int t = 0; B && Z && N && t < 4; t++) {
        int ic = strncmp(types[t], "ic0", 3) == 0;
        sps_precond *pc = NULL;
        if (ic && !spd) continue;
        sps_status st = sps_precond_create(gctx, A, types[t], &pc);
        if (real && st != SPS_OK) continue; /* a breakdown on A itself: compare() covers it */
        if (!T_STATUS(gctx, st, "%s %s: GPU build", what, types[t])) continue;
        refresh_equals_fresh(what, types[t], pc, B, r, z1, z2);
        refresh_fails(what, types[t], pc, Z, r, z1, z2);
        if (ic) refresh_fails(what, types[t], pc, N, r, z1, z2);
        refresh_equals_fresh(what, types[t], pc, A, r, z1, z2); /* back to A after the failures */
        sps_precond_destroy(pc);
    }
    free(r), free(z1), free(z2);
    sps_matrix_destroy(B);
    sps_matrix_destroy(Z);
    sps_matrix_destroy(N);
}

/* SPD, n rows: tridiagonal plus a long row and column 0 (an arrow). */
static sps_matrix *arrow(sps_idx n)
{
    sps_idx cap = 5 * n, k = 0;
    sps_idx *ri = malloc((size_t)cap * sizeof *ri), *ci = malloc((size_t)cap * sizeof *ci);
    double *v = malloc((size_t)cap * sizeof *v);
    for (sps_idx i = 0; ri && ci && v && i < n; i++)
        for (sps_idx j = 0; j < n; j++) {
            int tri = j >= i - 1 && j <= i + 1, arm = (i == 0) != (j == 0);
            if (!tri && !arm) continue;
            ri[k] = i, ci[k] = j;
            v[k++] = i == j ? (i == 0 ? n + 2.0 : 4.0 + i % 3) : (tri ? -1.0 : 0.5);
        }
    sps_matrix *A = NULL;
    if (ri && ci && v) sps_matrix_create_coo(hctx, n, n, k, ri, ci, v, &A);
    free(ri), free(ci), free(v);
    return A;
}

static void test_refresh(void)
{
    static const char *const gens[] = {"poisson2d:20", "poisson3d:12", "poisson3d27:8"};
    for (size_t g = 0; g < sizeof gens / sizeof *gens; g++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(hctx, sps_matrix_generate(hctx, gens[g], &A), "%s", gens[g])) continue;
        refresh_case(gens[g], A, 1, 0);
        sps_matrix_destroy(A);
    }
    static const sps_idx sizes[] = {31, 32, 33, 1023, 1024, 1025};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        char what[32];
        snprintf(what, sizeof what, "arrow n=%d", sizes[s]);
        sps_matrix *A = arrow(sizes[s]);
        if (T_OK(A != NULL, "%s", what)) refresh_case(what, A, 1, 0);
        sps_matrix_destroy(A);
    }
    const char *const *names = t_real_matrices();
    int done = 0;
    for (int k = 0; names[k]; k++) {
        const char *path = t_real_matrix_path(names[k]), *kind = t_manifest_kind(names[k]);
        sps_matrix *A = NULL;
        sps_features f;
        if (!path || !kind || sps_matrix_read(hctx, path, &A) != SPS_OK) continue;
        if (sps_matrix_analyze(hctx, A, &f) == SPS_OK && f.rows <= 60000 && f.missing_diagonal == 0 &&
            f.zero_diagonal == 0) {
            sps_precond *probe = NULL; /* a matrix whose own factorization fails has nothing to refresh */
            int ok = sps_precond_create(hctx, A, "ilu0:exact", &probe) == SPS_OK;
            sps_precond_destroy(probe);
            if (ok) refresh_case(names[k], A, strcmp(kind, "spd") == 0 && f.symmetric, 1);
            done += ok;
        }
        sps_matrix_destroy(A);
    }
    T_OK(done > 0, "real matrices refreshed: %d", done);
    /* 0 x 0: nothing to refresh */
    sps_idx r0[] = {0};
    sps_matrix *E = NULL;
    if (sps_matrix_create_csr(hctx, 0, 0, r0, NULL, NULL, &E) == SPS_OK) {
        static const char *const types[] = {"ilu0:exact", "ic0:exact", "ilu0:solve=jacobi", "ic0:solve=jacobi"};
        for (int t = 0; t < 4; t++) {
            sps_precond *pc = NULL;
            T_OK(sps_precond_create(gctx, E, types[t], &pc) == SPS_OK &&
                     sps_precond_update_values(pc, E) == SPS_OK,
                 "%s on 0x0: refresh", types[t]);
            sps_precond_destroy(pc);
        }
        sps_matrix_destroy(E);
    }
}

/* GPU refresh against a full GPU build on poisson3d:60, medians of 5: a
 * measurement (the analyses a refresh skips are the GPU's symbolic cost). */
static void test_refresh_time(void)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, "poisson3d:60", &A), "poisson3d:60")) return;
    sps_matrix *B = revalued(A, sym_scaled, NULL);
    static const char *const types[] = {"ilu0:exact", "ic0:exact", "ilu0:solve=jacobi", "ic0:solve=jacobi"};
    for (int t = 0; B && t < 4; t++) {
        double full = 0, upd = 0;
        if (!T_OK(pc_refresh_medians(gctx, A, B, types[t], 1, &full, &upd),
                  "%s: GPU builds and refreshes on poisson3d:60 (%s)", types[t], sps_last_error(gctx)))
            continue;
        printf("# GPU %-18s poisson3d:60: refresh %.2f ms, full create %.2f ms (%.2f), medians of 5\n",
               types[t], upd, full, upd / full);
    }
    sps_matrix_destroy(B);
    sps_matrix_destroy(A);
}

/* sps_precond_time on a GPU context: device vectors and CUDA events; the
 * figures order as the work does (ilu0:exact's level-scheduled solves
 * against Jacobi). */
static void test_time(void)
{
    sps_matrix *A = NULL;
    sps_precond *jac = NULL, *ilu = NULL;
    sps_timing tj, ti;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, "poisson3d:40", &A), "poisson3d:40")) return;
    if (T_STATUS(gctx, sps_precond_create(gctx, A, "jacobi", &jac), "GPU jacobi") &&
        T_STATUS(gctx, sps_precond_create(gctx, A, "ilu0:exact", &ilu), "GPU ilu0:exact") &&
        T_STATUS(gctx, sps_precond_time(jac, 9, &tj), "time GPU jacobi") &&
        T_STATUS(gctx, sps_precond_time(ilu, 9, &ti), "time GPU ilu0:exact"))
        T_OK(tj.reps == 9 && tj.min_us > 0 && tj.min_us <= tj.median_us && tj.median_us <= tj.max_us &&
                 ti.median_us > tj.median_us,
             "GPU, 9 timed applies: jacobi %.1f us, ilu0:exact %.1f us", tj.median_us, ti.median_us);
    sps_precond_destroy(jac);
    sps_precond_destroy(ilu);
    sps_matrix_destroy(A);
}

static void run(sps_context *ctx)
{
    static const t_test_fn tests[] = {test_generated, test_pivots, test_real, test_operator, test_solve,
                                      test_fused, test_refresh, test_refresh_time, test_time, NULL};
    gctx = ctx;
    t_run_host(&hctx, tests);
}

int main(void) { return t_run_gpu("preconditioners on the GPU", run); }

#else

T_MAIN_NO_CUDA("preconditioners on the GPU")

#endif /* SPS_HAVE_CUDA */
