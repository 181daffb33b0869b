/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_spmm.c: the block product on a host context:
 * sps_matrix_spmm_host against k single products (bitwise), every backend's
 * sps_operator_apply_multi against the reference (the CSR family's native
 * block loop bitwise, the others through their columns within 1e-12), k =
 * 1..32 with odd sizes, padded leading dimensions, beta = 0 over NaN and
 * beta != 0, edge matrices (empty rows, one full row, n around 32 and
 * 1024), the refusals, and the timing helper. */
#include "unit/spmm_cases.h"

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

T_MAIN_HOST(ctx, test_reference, test_operators, test_kinds, test_timing, test_check_multi)
