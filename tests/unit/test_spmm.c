/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_spmm.c: the block product on a host context:
 * sps_matrix_spmm_host against k single products (bitwise), every backend's
 * sps_operator_apply_multi against the reference (the CSR family's native
 * block loop bitwise, the others through their columns within 1e-12), k =
 * 1..32 with odd sizes, padded leading dimensions, beta = 0 over NaN and
 * beta != 0, edge matrices (empty rows, one full row, n around 32 and
 * 1024), the refusals, and the timing helper. SPS_SPMM_PANEL: the row
 * panels' invariants (every entry once, dense columns first and ascending,
 * the density threshold), its host reference against the plain loop within
 * 1e-13 on the edge, no-dense, full, generated and real matrices, and the
 * kind through the operator on a host context (bitwise the reference). */
#include "unit/spmm_cases.h"
#include "spmv/spmm.h"

static sps_context *ctx;

/* The reference against k calls of sps_matrix_spmv_host: bitwise. */
static void ref_case(const char *mname, const sps_matrix *A, int k, double beta)
{
    sps_idx m = sps_matrix_rows(A), n = sps_matrix_cols(A);
    int64_t ldx = n + 3, ldy = m + 5;
    double *X = spmm_block(n, k, ldx, 11), *Y0 = spmm_block(m, k, ldy, 12);
    double *Y = spmm_block(m, k, ldy, 12), *R = spmm_block(m, k, ldy, 13);
    if (beta == 0.0)
        for (size_t i = 0; i < (size_t)ldy * (size_t)k; i++) Y[i] = Y0[i] = NAN;
    spmm_ref(A, k, 1.5, X, ldx, beta, Y0, ldy, R);
    sps_status st = sps_matrix_spmm_host(A, k, 1.5, X, ldx, beta, Y, ldy);
    int pad_ok = spmm_err(A, k, 1.5, X, ldx, beta, Y0, Y, R, ldy) < INFINITY;
    T_OK(st == SPS_OK && spmm_same(Y, R, m, k, ldy) && pad_ok,
         "spmm host reference = k spmv on %s, k=%d, beta=%g", mname, k, beta);
    free(X);
    free(Y0);
    free(Y);
    free(R);
}

static void test_reference(void)
{
    for (int i = 0; i < SPMM_NN; i++) {
        sps_matrix *A = spmm_edge_matrix(ctx, spmm_ns[i], 5 + (uint64_t)i);
        if (!A) continue;
        char name[64];
        snprintf(name, sizeof name, "edge n=%d", spmm_ns[i]);
        for (int j = 0; j < SPMM_NK; j++) {
            ref_case(name, A, spmm_ks[j], 0.0);
            ref_case(name, A, spmm_ks[j], -0.5);
        }
        sps_matrix_destroy(A);
    }
}

/* One operator against the reference for every k. */
static void op_case(const char *spec, const char *mname, const sps_matrix *A, sps_operator *op)
{
    sps_idx m = sps_matrix_rows(A), n = sps_matrix_cols(A);
    int csr = strncmp(spec, "csr", 3) == 0 || strncmp(spec, "cusparse", 8) == 0;
    for (int j = 0; j < SPMM_NK; j++) {
        int k = spmm_ks[j];
        int64_t ldx = n + 1, ldy = m + 2;
        double beta = j % 2 ? -0.5 : 0.0;
        double *X = spmm_block(n, k, ldx, 21 + (uint64_t)j), *Y0 = spmm_block(m, k, ldy, 22);
        double *Y = malloc(((size_t)ldy * (size_t)k + 1) * sizeof *Y), *R = spmm_block(m, k, ldy, 0);
        if (beta == 0.0)
            for (size_t i = 0; i < (size_t)ldy * (size_t)k; i++) Y0[i] = NAN;
        memcpy(Y, Y0, ((size_t)ldy * (size_t)k + 1) * sizeof *Y);
        spmm_ref(A, k, 1.5, X, ldx, beta, Y0, ldy, R);
        sps_status st = sps_operator_apply_multi(op, k, 1.5, X, ldx, beta, Y, ldy);
        double err = st == SPS_OK ? spmm_err(A, k, 1.5, X, ldx, beta, Y0, Y, R, ldy) : INFINITY;
        int same = st == SPS_OK && spmm_same(Y, R, m, k, ldy);
        if (!T_OK(st == SPS_OK && err <= 1e-12 && (!csr || same),
                  "apply_multi %s on %s, k=%d, beta=%g", spec, mname, k, beta))
            fprintf(stderr, "  status %s (%s), err %.3g, bitwise %d\n", sps_strerror(st),
                    sps_last_error(ctx), err, same);
        free(X);
        free(Y0);
        free(Y);
        free(R);
    }
}

static void each_backend(const char *mname, const sps_matrix *A)
{
    unsigned caps = 0;
    const char *spec;
    for (int i = 0; (spec = spec_at(i, &caps)) != NULL; i++) {
        sps_operator *op = build(ctx, spec, mname, A, NULL);
        if (!op) continue;
        op_case(spec, mname, A, op);
        sps_operator_destroy(op);
    }
}

static void test_operators(void)
{
    static const sps_idx ns[] = {31, 33, 1025};
    for (int i = 0; i < 3; i++) {
        sps_matrix *A = spmm_edge_matrix(ctx, ns[i], 40 + (uint64_t)i);
        char name[64];
        snprintf(name, sizeof name, "edge n=%d", ns[i]);
        if (A) each_backend(name, A);
        sps_matrix_destroy(A);
    }
    sps_matrix *P = NULL;
    if (T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:20", &P), "generate poisson2d:20"))
        each_backend("poisson2d:20", P);
    sps_matrix_destroy(P);
}

/* The kinds: native refused where there is none, cusparse refused on the
 * host, columns bitwise the per-column product, bad arguments. */
static void test_kinds(void)
{
    sps_matrix *A = NULL;
    sps_operator *csr = NULL, *dia = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:8", &A), "kinds: generate")) return;
    sps_idx n = sps_matrix_rows(A);
    double *X = spmm_block(n, 3, n, 1), *Y = spmm_block(n, 3, n, 2), *R = spmm_block(n, 3, n, 2);
    T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &csr), "kinds: csr-vector");
    T_STATUS(ctx, sps_operator_create(ctx, A, "dia", NULL, &dia), "kinds: dia");
    if (csr && dia) {
        T_OK(sps_operator_apply_multi_kind(dia, SPS_SPMM_NATIVE, 3, 1, X, n, 0, Y, n) ==
                 SPS_ERR_UNSUPPORTED, "native refused for dia (no block kernel)");
        T_OK(sps_operator_apply_multi_kind(csr, SPS_SPMM_CUSPARSE, 3, 1, X, n, 0, Y, n) ==
                 SPS_ERR_UNSUPPORTED, "cusparse SpMM refused on a host context");
        T_OK(sps_operator_apply_multi_kind(csr, (sps_spmm_kind)9, 3, 1, X, n, 0, Y, n) ==
                 SPS_ERR_INVALID_ARG, "unknown kind refused");
        T_OK(sps_operator_apply_multi(csr, -1, 1, X, n, 0, Y, n) == SPS_ERR_INVALID_ARG,
             "k < 0 refused");
        T_OK(sps_operator_apply_multi(csr, 2, 1, X, n - 1, 0, Y, n) == SPS_ERR_INVALID_ARG &&
                 strstr(sps_last_error(ctx), "ldx") != NULL, "ldx < cols refused, named");
        T_OK(sps_operator_apply_multi(csr, 0, 1, NULL, 0, 0, NULL, 0) == SPS_OK, "k = 0 does nothing");
        sps_status a = sps_operator_apply_multi_kind(csr, SPS_SPMM_COLUMNS, 3, 2, X, n, 0, Y, n);
        sps_status b = sps_operator_apply_multi_kind(csr, SPS_SPMM_NATIVE, 3, 2, X, n, 0, R, n);
        T_OK(a == SPS_OK && b == SPS_OK && spmm_same(Y, R, n, 3, n), "columns = native, bitwise");
        T_OK(strcmp(sps_spmm_kind_name(SPS_SPMM_CUSPARSE), "cusparse") == 0 &&
                 sps_spmm_kind_name((sps_spmm_kind)7) == NULL, "kind names");
    }
    sps_operator_destroy(csr);
    sps_operator_destroy(dia);
    sps_matrix_destroy(A);
    free(X);
    free(Y);
    free(R);
}

static void test_timing(void)
{
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:30", &A), "timing: generate")) return;
    if (T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "timing: operator")) {
        sps_timing t;
        sps_status st = sps_operator_time_multi(op, SPS_SPMM_AUTO, 4, 5, &t);
        T_OK(st == SPS_OK && t.reps == 5 && t.min_us >= 0 && t.min_us <= t.median_us &&
                 t.median_us <= t.max_us, "time_multi: 5 reps, min <= median <= max");
        T_OK(sps_operator_time_multi(op, SPS_SPMM_AUTO, 0, 5, &t) == SPS_ERR_INVALID_ARG,
             "time_multi: k = 0 refused");
    }
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

/* sps_operator_check_multi: 0 error and repeatable for the block loop and
 * the columns; refusals. */
static void test_check_multi(void)
{
    sps_matrix *A = NULL, *B = NULL;
    sps_operator *op = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:17", &A), "check_multi: generate")) return;
    sps_matrix_generate(ctx, "poisson2d:5", &B);
    if (T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "check_multi: operator")) {
        static const sps_spmm_kind kinds[] = {SPS_SPMM_NATIVE, SPS_SPMM_COLUMNS, SPS_SPMM_AUTO};
        for (int q = 0; q < 3; q++) {
            double err = -1;
            int rep = -1;
            sps_status st = sps_operator_check_multi(op, A, kinds[q], 9, &err, &rep);
            T_OK(st == SPS_OK && err == 0.0 && rep == 1, "check_multi %s k=9: err %.2g, repeatable %d",
                 sps_spmm_kind_name(kinds[q]), err, rep);
        }
        double err;
        int rep;
        T_OK(sps_operator_check_multi(op, B, SPS_SPMM_AUTO, 2, &err, &rep) == SPS_ERR_INVALID_ARG,
             "check_multi: a matrix of another size refused");
        T_OK(sps_operator_check_multi(op, A, SPS_SPMM_AUTO, 0, &err, &rep) == SPS_ERR_INVALID_ARG,
             "check_multi: k = 0 refused");
    }
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

/* ---- SPS_SPMM_PANEL ------------------------------------------------------ */

/* P against A: rp is A's; in each row the dense entries first, with their
 * index in the panel's dense list, ascending, then the others with their
 * column in CSR order; src a permutation of the row's positions and val the
 * values there; each panel's dense list ascending, holding exactly the
 * columns with >= SPS_PANEL_MIN entries among the panel's rows. */
static int panel_ok(const sps_matrix *M, const sps_panel *P, char *why, size_t len)
{
    const sps_csr *A = &M->A;
    int *cnt = calloc((size_t)A->ncols + 1, sizeof *cnt), *seen = calloc((size_t)A->nnz + 1, sizeof *seen);
    int ok = cnt && seen && P->nrows == A->nrows && P->nnz == A->nnz && P->dp[0] == 0 &&
             P->npanels == (A->nrows + SPS_PANEL_ROWS - 1) / SPS_PANEL_ROWS;
    sps_idx dense = 0;
    for (sps_idx pn = 0; ok && pn < P->npanels; pn++) {
        const sps_idx r0 = pn * SPS_PANEL_ROWS;
        const sps_idx r1 = A->nrows - r0 < SPS_PANEL_ROWS ? A->nrows : r0 + SPS_PANEL_ROWS;
        const sps_idx *dl = P->dcol + P->dp[pn], nd = P->dp[pn + 1] - P->dp[pn];
        for (sps_idx q = A->row_ptr[r0]; q < A->row_ptr[r1]; q++) cnt[A->col_idx[q]]++;
        sps_idx ndense = 0;
        for (sps_idx q = A->row_ptr[r0]; q < A->row_ptr[r1]; q++)
            if (cnt[A->col_idx[q]] >= SPS_PANEL_MIN) ndense++;
        for (sps_idx i = 0; ok && i < nd; i++) {
            ok = cnt[dl[i]] >= SPS_PANEL_MIN && (i == 0 || dl[i - 1] < dl[i]);
            if (!ok) snprintf(why, len, "panel %d: dense list entry %d (column %d, %d entries)", pn, i, dl[i], cnt[dl[i]]);
        }
        sps_idx in_panel = 0;
        for (sps_idx r = r0; ok && r < r1; r++) {
            ok = P->rp[r] == A->row_ptr[r] && P->rp[r + 1] == A->row_ptr[r + 1] &&
                 P->nd[r] >= 0 && P->nd[r] <= A->row_ptr[r + 1] - A->row_ptr[r];
            for (sps_idx q = A->row_ptr[r]; ok && q < A->row_ptr[r + 1]; q++) {
                const sps_idx src = P->src[q];
                const int isd = q < A->row_ptr[r] + P->nd[r];
                ok = src >= A->row_ptr[r] && src < A->row_ptr[r + 1] && !seen[src]++ &&
                     memcmp(&P->val[q], &A->val[src], sizeof(double)) == 0;
                if (ok && isd)
                    ok = P->ci[q] >= 0 && P->ci[q] < nd && dl[P->ci[q]] == A->col_idx[src] &&
                         (q == A->row_ptr[r] || P->ci[q - 1] < P->ci[q] ||
                          (P->ci[q - 1] == P->ci[q] && P->src[q - 1] < src));
                if (ok && !isd)
                    ok = P->ci[q] == A->col_idx[src] && cnt[P->ci[q]] < SPS_PANEL_MIN &&
                         (q == A->row_ptr[r] + P->nd[r] || P->src[q - 1] < src);
                if (!ok) snprintf(why, len, "row %d, entry %d (%s)", r, q, isd ? "dense" : "sparse");
            }
            dense += P->nd[r];
            in_panel += P->nd[r];
        }
        for (sps_idx q = A->row_ptr[r0]; q < A->row_ptr[r1]; q++) cnt[A->col_idx[q]] = 0;
        if (ok && in_panel != ndense) {
            ok = 0;
            snprintf(why, len, "panel %d: %d dense entries, %d in dense columns", pn, in_panel, ndense);
        }
    }
    if (ok && dense != P->dense_nnz) {
        ok = 0;
        snprintf(why, len, "dense_nnz %d, counted %d", P->dense_nnz, dense);
    }
    if (ok && P->ndense != P->dp[P->npanels]) {
        ok = 0;
        snprintf(why, len, "ndense %d, dp[npanels] %d", P->ndense, P->dp[P->npanels]);
    }
    free(cnt);
    free(seen);
    return ok;
}

/* The panels of A: invariants, then the reference against the plain loop
 * within 1e-13 for every k, beta = 0 over NaN and -0.5. Returns the share
 * of dense entries (-1 after a failure). */
static double panel_case(const char *mname, const sps_matrix *A, const int *ks, int nk)
{
    sps_panel P;
    char why[160] = "";
    if (!T_STATUS(ctx, sps__panel_build(ctx, &A->A, &P), "panel build %s", mname)) return -1;
    int ok = panel_ok(A, &P, why, sizeof why);
    T_OK(ok, "panel invariants on %s (every entry once, dense first)%s%s", mname, ok ? "" : ": ", why);
    sps_idx m = sps_matrix_rows(A), n = sps_matrix_cols(A);
    double worst = 0;
    for (int j = 0; j < nk; j++) {
        int k = ks[j];
        for (int b = 0; b < 2; b++) {
            double beta = b ? -0.5 : 0.0;
            int64_t ldx = n + 3, ldy = m + 5;
            size_t ny = (size_t)ldy * (size_t)k + 1;
            double *X = spmm_block(n, k, ldx, 61 + (uint64_t)j), *Y0 = spmm_block(m, k, ldy, 62);
            double *Y = malloc(ny * sizeof *Y), *R = malloc(ny * sizeof *R);
            if (!b)
                for (size_t i = 0; i < ny; i++) Y0[i] = NAN;
            memcpy(Y, Y0, ny * sizeof *Y);
            spmm_ref(A, k, 1.5, X, ldx, beta, Y0, ldy, R);
            sps__panel_spmm(&P, k, 1.5, X, ldx, beta, Y, ldy);
            double e = spmm_err(A, k, 1.5, X, ldx, beta, Y0, Y, R, ldy);
            if (!(e <= worst)) worst = e;
            free(X);
            free(Y0);
            free(Y);
            free(R);
        }
    }
    T_OK(worst <= 1e-13, "panel reference = plain CSR loop within 1e-13 on %s: %.2e", mname, worst);
    double share = A->A.nnz ? (double)P.dense_nnz / (double)A->A.nnz : 0.0;
    sps__panel_free(&P);
    return ok && worst <= 1e-13 ? share : -1;
}

static void test_panel(void)
{
    for (int i = 0; i < SPMM_NN; i++) {
        sps_matrix *A = spmm_edge_matrix(ctx, spmm_ns[i], 70 + (uint64_t)i);
        char name[64];
        snprintf(name, sizeof name, "edge n=%d", spmm_ns[i]);
        if (A) panel_case(name, A, spmm_ks, SPMM_NK);
        sps_matrix_destroy(A);
    }
    sps_matrix *N = spmm_nodense_matrix(ctx, 1025, 3), *F = spmm_full_matrix(ctx, 70, 150, 4);
    if (N) T_OK(panel_case("no dense column n=1025", N, spmm_ks, SPMM_NK) == 0.0,
                "no dense column: every entry in the sparse part");
    if (F) T_OK(panel_case("full 70 x 150", F, spmm_ks, SPMM_NK) == 1.0,
                "full matrix: every entry in a dense tile");
    sps_matrix_destroy(N);
    sps_matrix_destroy(F);
    static const char *const gens[] = {"poisson3d:12", "banded:3000,9,0.01,1", "powerlaw:3000,16,1"};
    static const int ks[] = {1, 3, 8, 17, 32, 40};
    for (int i = 0; i < 3; i++) {
        sps_matrix *A = NULL;
        if (T_STATUS(ctx, sps_matrix_generate(ctx, gens[i], &A), "generate %s", gens[i]))
            T_OK(panel_case(gens[i], A, ks, 6) > 0.0, "%s: some entries dense", gens[i]);
        sps_matrix_destroy(A);
    }
}

static void panel_real(sps_context *c, const sps_matrix *A, const char *name)
{
    (void)c;
    static const int ks[] = {2, 8, 17};
    panel_case(name, A, ks, 3);
}

static void test_panel_real(void) { t_each_real(ctx, ctx, "panel on real matrices", panel_real); }

/* The kind through the operator on a host context: bitwise the reference,
 * run to run; refused outside the CSR family; rebuilt after new values. */
static void test_panel_kind(void)
{
    sps_matrix *A = spmm_edge_matrix(ctx, 1025, 80), *B = NULL;
    sps_operator *op = NULL, *dia = NULL;
    if (!A) return;
    const int k = 9;
    sps_idx n = sps_matrix_rows(A);
    int64_t ld = n + 2;
    size_t cnt = (size_t)ld * k + 1;
    double *X = spmm_block(n, k, ld, 81), *Y = spmm_block(n, k, ld, 82), *Y2 = malloc(cnt * sizeof *Y2);
    double *R = malloc(cnt * sizeof *R), *vals = NULL;
    sps_panel P;
    memcpy(Y2, Y, cnt * sizeof *Y);
    memcpy(R, Y, cnt * sizeof *Y);
    if (T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &op), "panel kind: csr-vector") &&
        T_STATUS(ctx, sps__panel_build(ctx, &A->A, &P), "panel kind: build")) {
        sps__panel_spmm(&P, k, 1.5, X, ld, -0.5, R, ld);
        sps_status a = sps_operator_apply_multi_kind(op, SPS_SPMM_PANEL, k, 1.5, X, ld, -0.5, Y, ld);
        sps_status b = sps_operator_apply_multi_kind(op, SPS_SPMM_PANEL, k, 1.5, X, ld, -0.5, Y2, ld);
        T_OK(a == SPS_OK && b == SPS_OK && spmm_same(Y, R, n, k, ld) && spmm_same(Y, Y2, n, k, ld),
             "panel kind on a host operator = its reference, bitwise, twice");
        sps__panel_free(&P);
        double err = -1;
        int rep = -1;
        sps_status st = sps_operator_check_multi(op, A, SPS_SPMM_PANEL, 9, &err, &rep);
        T_OK(st == SPS_OK && err <= 1e-13 && rep == 1, "check_multi panel k=9: err %.2g, repeatable %d", err, rep);
        /* new values: the panels are rebuilt */
        B = t_revalued(ctx, A, 2.0, 0.0, 1.0, &vals);
        if (B && T_STATUS(ctx, sps_operator_update_values(op, vals), "panel kind: update values")) {
            st = sps_operator_check_multi(op, B, SPS_SPMM_PANEL, 3, &err, &rep);
            T_OK(st == SPS_OK && err <= 1e-13, "panel kind after update_values: err %.2g", err);
        }
    }
    T_STATUS(ctx, sps_operator_create(ctx, A, "dia:maxfill=1", NULL, &dia), "panel kind: dia");
    if (dia)
        T_OK(sps_operator_apply_multi_kind(dia, SPS_SPMM_PANEL, k, 1, X, ld, 0, Y, ld) == SPS_ERR_UNSUPPORTED &&
                 strstr(sps_last_error(ctx), "panel") != NULL, "panel kind refused for dia, named");
    T_OK(strcmp(sps_spmm_kind_name(SPS_SPMM_PANEL), "panel") == 0, "kind name panel");
    sps_operator_destroy(op);
    sps_operator_destroy(dia);
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
    free(vals);
    free(X);
    free(Y);
    free(Y2);
    free(R);
}

T_MAIN_HOST(ctx, test_reference, test_operators, test_kinds, test_timing, test_check_multi, test_panel,
            test_panel_real, test_panel_kind)
