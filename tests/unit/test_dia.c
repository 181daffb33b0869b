/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_dia.c: DIA: layout, the refusal message and limits,
 * apply_host against the CSR loop */
#include "diag_check.h"
#include "spmv/formats/diag_common.h"

static sps_operator *make(sps_context *ctx, const sps_matrix *A, const char *spec, sps_status *st)
{
    sps_operator *op = NULL;
    *st = sps_operator_create(ctx, A, spec, NULL, &op);
    return op;
}

static void test_layout(sps_context *ctx)
{
    /* The DRM paper's matrix B: DIA stores 4 x 8 = 32 slots for 18 nonzeros (14 zeros). */
    sps_matrix *B = dc_matrix_b(ctx);
    sps_status st;
    sps_operator *op = make(ctx, B, "dia", &st);
    T_STATUS(ctx, st, "dia of matrix B (fill 43.75%% < 90%%)");
    if (!op) return;
    const sps_fmt_dia *f = (const sps_fmt_dia *)op->fmt;
    const double want[] = {0, 11, 22, 33, 0, 0, 0, 0,      /* diagonal -1 (row 0 outside) */
                           1, 12, 23, 34, 45, 56, 67, 78,  /* diagonal 0 */
                           2, 13, 24, 0, 46, 57, 0, 0,     /* diagonal 1 (row 7 outside) */
                           3, 14, 0, 0, 0, 0, 0, 0};       /* diagonal 2 */
    int same = f->ndiag == 4 && f->off[0] == -1 && f->off[1] == 0 && f->off[2] == 1 && f->off[3] == 2;
    for (int k = 0; k < 32 && same; k++) same = f->val[k] == want[k];
    T_OK(same, "dia of B: offsets {-1, 0, 1, 2}, val[i*8 + row] by hand");
    sps_operator_info in;
    sps_operator_get_info(op, &in);
    T_OK(in.slots == 32 && fabs(in.fill - 14.0 / 32) < 1e-15, "dia of B: 32 slots, 14 zeros (the paper's opeDIA)");
    T_OK(dc_host_err(op, B, 1.5, 0.0, 1) < 1e-15 && dc_host_err(op, B, -1, 0.5, 2) < 1e-15,
         "dia of B: apply_host = CSR");
    sps_operator_destroy(op);
    sps_matrix_destroy(B);
}

static void test_refusal(sps_context *ctx)
{
    /* n = 1000: the main diagonal and one entry on each of the offsets 1..49:
     * 50 diagonals, 50000 slots for 1049 nonzeros, fill 97.9%. */
    dc_coo m = {1000, 1000, 0, 0, NULL, NULL, NULL};
    for (sps_idx r = 0; r < 1000; r++) dc_add(&m, r, r, 2.0);
    for (sps_idx d = 1; d < 50; d++) dc_add(&m, 7 * d, 7 * d + d, 1.0 / d);
    sps_matrix *A = dc_finish(ctx, &m);
    sps_status st;
    sps_operator *op = make(ctx, A, "dia", &st);
    T_OK(st == SPS_ERR_UNSUPPORTED && !op, "fill 97.9%% refused (SPS_ERR_UNSUPPORTED)");
    T_OK(strcmp(sps_last_error(ctx),
                "dia: 50 diagonals would store 50.0K slots for 1049 nonzeros (fill 97.9%, limit 90%)") == 0,
         "refusal message: %s", sps_last_error(ctx));
    op = make(ctx, A, "dia:maxfill=0.95", &st);
    T_OK(st == SPS_ERR_UNSUPPORTED && strstr(sps_last_error(ctx), "limit 95%"),
         "dia:maxfill=0.95 still refuses: %s", sps_last_error(ctx));
    op = make(ctx, A, "dia:maxfill=0.99", &st);
    T_STATUS(ctx, st, "dia:maxfill=0.99 accepts fill 97.9%%");
    if (op) {
        sps_operator_info in;
        sps_operator_get_info(op, &in);
        T_OK(in.slots == 50000 && fabs(in.fill - (50000.0 - 1049) / 50000) < 1e-12,
             "50000 slots, fill %.5f; detail: %s", in.fill, in.detail);
        T_OK(dc_host_err(op, A, 2, 0, 3) < 1e-15 && dc_host_err(op, A, 2, 1, 4) < 1e-15,
             "accepted at 97.9%% fill: apply_host = CSR");
    }
    sps_operator_destroy(op);
    sps_matrix_destroy(A);

    /* Every diagonal of a 46341 x 46341 matrix: (2n-1) n > 2^31-1 slots,
     * refused whatever maxfill says. */
    const sps_idx n = 46341;
    dc_coo w = {n, n, 0, 0, NULL, NULL, NULL};
    for (sps_idx d = -(n - 1); d < n; d++) dc_add(&w, d < 0 ? -d : 0, d < 0 ? 0 : d, 1.0);
    A = dc_finish(ctx, &w);
    op = make(ctx, A, "dia:maxfill=1", &st);
    T_OK(st == SPS_ERR_UNSUPPORTED && strstr(sps_last_error(ctx), "92681 diagonals") &&
             strstr(sps_last_error(ctx), "2^31-1"),
         "4.3G slots refused even at maxfill=1: %s", sps_last_error(ctx));
    sps_operator_destroy(op);
    sps_matrix_destroy(A);

    A = dc_banded(ctx, 100, (const sps_idx[]){-1, 1}, 2, 1.0, 10, 0, 1);
    const char *bad[] = {"dia:maxfill=2", "dia:maxfill=-0.1", "dia:maxfill=", "dia:seg=32"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        op = make(ctx, A, bad[k], &st);
        T_OK(st == SPS_ERR_INVALID_ARG && !op && strstr(sps_last_error(ctx), "dia:"),
             "%s rejected: %s", bad[k], sps_last_error(ctx));
    }
    sps_matrix_destroy(A);
}

static void test_apply(sps_context *ctx)
{
    const sps_idx sizes[] = {1, 31, 32, 33, 1023, 1024, 1025};
    const sps_idx ofs[] = {-40, -2, -1, 1, 2, 40};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        sps_matrix *A = dc_banded(ctx, sizes[k], ofs, 6, 0.9, 200, 0, 3 + k);
        char what[64];
        snprintf(what, sizeof what, "banded n=%d", sizes[k]);
        dc_check_spec(ctx, A, "dia:maxfill=1", what, 1e-15);
        sps_matrix_destroy(A);
    }
    const sps_idx lens[] = {3, 0, 5, 1, 7, 7, 0, 2, 9, 4, 4, 4, 1, 0, 6, 6, 2, 3, 1, 5};
    sps_matrix *A = dc_rowlens(ctx, 20, 13, lens, 9);
    dc_check_spec(ctx, A, "dia:maxfill=1", "a 20 x 13 matrix with empty rows", 1e-15);
    sps_matrix_destroy(A);
    A = dc_rowlens(ctx, 13, 20, lens, 10);
    dc_check_spec(ctx, A, "dia:maxfill=1", "a 13 x 20 matrix", 1e-15);
    sps_matrix_destroy(A);

    const sps_idx rp0[] = {0};
    sps_status st;
    A = NULL;
    sps_matrix_create_csr(ctx, 0, 0, rp0, NULL, NULL, &A);
    sps_operator *op = make(ctx, A, "dia", &st);
    T_OK(st == SPS_OK && sps_operator_apply(op, 1.0, NULL, 0.0, NULL) == SPS_OK, "dia of 0 x 0");
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_idx rp[6] = {0};
    A = NULL;
    sps_matrix_create_csr(ctx, 5, 5, rp, NULL, NULL, &A);
    op = make(ctx, A, "dia", &st);
    T_OK(st == SPS_OK && dc_host_err(op, A, 1, 0, 1) == 0 && dc_host_err(op, A, 1, 3, 1) == 0,
         "dia of an empty 5 x 5: y = beta*y");
    sps_operator_destroy(op);
    sps_matrix_destroy(A);

    /* update_values */
    A = dc_banded(ctx, 500, ofs, 6, 0.9, 200, 0, 5);
    op = make(ctx, A, "dia", &st);
    double *nv = NULL;
    sps_matrix *B = t_revalued(ctx, A, -1.0, 0.01, 0.0, &nv);
    T_OK(op && sps_operator_update_values(op, nv) == SPS_OK && dc_host_err(op, B, 1, 0, 2) < 1e-15,
         "dia after update_values = CSR of the new values");
    free(nv);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

/* dia takes A (and matches CSR) or refuses it with a message naming dia. */
static void check_or_refuse(sps_context *ctx, const sps_matrix *A, const char *name)
{
    sps_status st;
    sps_operator *op = make(ctx, A, "dia", &st);
    if (st == SPS_OK)
        T_OK(dc_host_err(op, A, 1.5, 0, 1) < 1e-13 && dc_host_err(op, A, 1, -0.5, 2) < 1e-13,
             "dia = CSR on %s", name);
    else
        T_OK(st == SPS_ERR_UNSUPPORTED && strncmp(sps_last_error(ctx), "dia: ", 5) == 0,
             "dia refuses %s: %s", name, sps_last_error(ctx));
    if (strcmp(name, "lns_3937") == 0)
        T_OK(strcmp(sps_last_error(ctx), "dia: 311 diagonals would store 1.2M slots for 25407 "
                                         "nonzeros (fill 97.9%, limit 90%)") == 0,
             "lns_3937 refusal: %s", sps_last_error(ctx));
    sps_operator_destroy(op);
}

static void test_matrices(sps_context *ctx)
{
    const char *gens[] = {"poisson3d:20", "banded:20000,9,0.01,1"};
    dc_each_gen(ctx, "dia on generated matrices", gens, 2, check_or_refuse);
    dc_each_real(ctx, "dia on real matrices", check_or_refuse);
}

T_MAIN_HOST_CTX(test_layout, test_refusal, test_apply, test_matrices)
