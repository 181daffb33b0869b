/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_merge.c: merge-path SpMV: the partition, empty and
 * long rows, the host emulation against the CSR loop */
#include "diag_check.h"
#include "spmv/formats/csr_fmt.h"
#include "spmv/formats/merge_path.h"

/* Walk the partition the way the kernel does (tile starts from the format,
 * thread starts by search) and check that every nonzero is consumed exactly
 * once, inside its own row, and every row end exactly once; that tile starts
 * lie on the merge path; and that every tile and thread has an equal share. */
static void check_partition(const sps_operator *op, const char *what)
{
    const sps_fmt_csr *f = (const sps_fmt_csr *)op->fmt;
    const sps_csr *A = &f->A;
    const sps_idx *co = f->extra;
    const int ntiles = f->param;
    const int64_t total = (int64_t)A->nrows + A->nnz;
    int *seen_nz = calloc((size_t)A->nnz + 1, sizeof *seen_nz);
    int *seen_row = calloc((size_t)A->nrows + 1, sizeof *seen_row);
    int ok_path = co[0] == 0 && co[1] == 0 && co[2 * ntiles] == A->nrows &&
                  co[2 * ntiles + 1] == A->nnz && ntiles == (total + SPS_MERGE_TILE - 1) / SPS_MERGE_TILE;
    int ok_share = 1, ok_walk = 1;
    for (int t = 0; t < ntiles; t++) {
        const sps_idx r0 = co[2 * t], z0 = co[2 * t + 1], nr = co[2 * t + 2] - r0, nz = co[2 * t + 3] - z0;
        /* on the path: row r0-1 ended before nonzero z0, nonzero z0-1 came before row end r0 */
        if (r0 > 0 && z0 < A->nnz && A->row_ptr[r0] > z0) ok_path = 0;
        if (z0 > 0 && r0 < A->nrows && z0 - 1 >= A->row_ptr[r0 + 1]) ok_path = 0;
        if ((int64_t)r0 + z0 != (int64_t)t * SPS_MERGE_TILE) ok_path = 0;
        if (nr + nz != SPS_MERGE_TILE && t != ntiles - 1) ok_share = 0;
        int prev_end = 0;
        for (int k = 0; k < SPS_MERGE_THREADS; k++) {
            const int k0 = k * SPS_MERGE_ITEMS < nr + nz ? k * SPS_MERGE_ITEMS : nr + nz;
            const int k1 = k0 + SPS_MERGE_ITEMS < nr + nz ? k0 + SPS_MERGE_ITEMS : nr + nz;
            if (k0 != prev_end) ok_share = 0;
            prev_end = k1;
            sps_idx i = (sps_idx)sps_merge_search(A->row_ptr + r0 + 1, nr, z0, nz, k0), j = k0 - i;
            for (int q = k0; q < k1; q++) {
                if (i == nr || z0 + j < A->row_ptr[r0 + i + 1]) {
                    const sps_idx z = z0 + j++;
                    if (z >= A->nnz || z < A->row_ptr[r0 + i] || z >= A->row_ptr[r0 + i + 1]) ok_walk = 0;
                    else seen_nz[z]++;
                } else {
                    seen_row[r0 + i++]++;
                }
            }
        }
    }
    for (sps_idx z = 0; z < A->nnz; z++) ok_walk = ok_walk && seen_nz[z] == 1;
    for (sps_idx r = 0; r < A->nrows; r++) ok_walk = ok_walk && seen_row[r] == 1;
    T_OK(ok_path, "%s: %d tile starts on the merge path, from (0,0) to (%d,%d)", what, ntiles,
         A->nrows, A->nnz);
    T_OK(ok_share, "%s: every tile %d items, every thread %d (the last ones fewer)", what,
         SPS_MERGE_TILE, SPS_MERGE_ITEMS);
    T_OK(ok_walk, "%s: each nonzero consumed once in its row, each row end once", what);
    free(seen_nz);
    free(seen_row);
}

static void check_matrix(sps_context *ctx, const sps_matrix *A, const char *what)
{
    sps_operator *op = NULL;
    if (sps_operator_create(ctx, A, "merge", NULL, &op) != SPS_OK) {
        T_FAIL("merge operator", "%s: %s", what, sps_last_error(ctx));
        return;
    }
    check_partition(op, what);
    const double e0 = dc_host_err(op, A, 1.5, 0.0, 7), e1 = dc_host_err(op, A, -0.75, -0.5, 11);
    T_OK(e0 < 1e-13 && e1 < 1e-13, "%s: emulation = CSR (err %.2g beta=0 NaN y, %.2g beta=-0.5)",
         what, e0, e1);
    sps_operator_destroy(op);
}

static void test_shapes(sps_context *ctx)
{
    uint64_t seed = 1;
    /* Sizes around warp and block multiples, random short rows with empty ones. */
    const sps_idx sizes[] = {1, 31, 32, 33, 1023, 1024, 1025};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        const sps_idx n = sizes[k];
        sps_idx *len = malloc((size_t)n * sizeof *len);
        for (sps_idx r = 0; r < n; r++) len[r] = (sps_idx)((t_rand(&seed) + 1.0) * 4.5);
        sps_matrix *A = dc_rowlens(ctx, n, n, len, seed);
        char what[64];
        snprintf(what, sizeof what, "n=%d, 0..8 per row", n);
        check_matrix(ctx, A, what);
        sps_matrix_destroy(A);
        free(len);
    }

    /* Empty rows: all but every 100th, and a matrix with no entry at all. */
    sps_idx len[5000];
    for (sps_idx r = 0; r < 5000; r++) len[r] = r % 100 == 0 ? 3 : 0;
    sps_matrix *A = dc_rowlens(ctx, 5000, 5000, len, 2);
    check_matrix(ctx, A, "5000 rows, 98 of 99 empty");
    sps_matrix_destroy(A);
    for (sps_idx r = 0; r < 5000; r++) len[r] = 0;
    A = dc_rowlens(ctx, 5000, 300, len, 2);
    check_matrix(ctx, A, "5000 x 300, nnz = 0");
    sps_matrix_destroy(A);

    /* Long rows: one of 20000 entries (> 32 x 128 threads, many tiles) among
     * short ones; rows of exactly one tile; a first and a last long row. */
    for (sps_idx r = 0; r < 3000; r++) len[r] = 1 + r % 3;
    len[1500] = 20000;
    A = dc_rowlens(ctx, 3000, 30000, len, 3);
    check_matrix(ctx, A, "a row of 20000 among 2999 short");
    sps_matrix_destroy(A);
    for (sps_idx r = 0; r < 64; r++) len[r] = SPS_MERGE_TILE - 1; /* row + its end = one tile */
    A = dc_rowlens(ctx, 64, 2000, len, 4);
    check_matrix(ctx, A, "64 rows of exactly one tile each");
    sps_matrix_destroy(A);
    for (sps_idx r = 0; r < 10; r++) len[r] = r == 0 || r == 9 ? 9000 : 0;
    A = dc_rowlens(ctx, 10, 9001, len, 5);
    check_matrix(ctx, A, "long first and last rows, empty between");
    sps_matrix_destroy(A);

    /* Banded with scatter (regular work). */
    const sps_idx ofs[] = {-300, -1, 1, 2, 77};
    A = dc_banded(ctx, 20000, ofs, 5, 0.8, 40, 200, 6);
    check_matrix(ctx, A, "banded n=20000");
    sps_matrix_destroy(A);

    /* 0 x 0. */
    const sps_idx rp0[] = {0};
    A = NULL;
    sps_matrix_create_csr(ctx, 0, 0, rp0, NULL, NULL, &A);
    sps_operator *op = NULL;
    T_OK(sps_operator_create(ctx, A, "merge", NULL, &op) == SPS_OK &&
             sps_operator_apply(op, 1.0, NULL, 0.0, NULL) == SPS_OK &&
             ((const sps_fmt_csr *)op->fmt)->param == 0,
         "merge of 0 x 0: no tile");
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void test_misc(sps_context *ctx)
{
    sps_idx len[700];
    for (sps_idx r = 0; r < 700; r++) len[r] = r % 7;
    sps_matrix *A = dc_rowlens(ctx, 700, 700, len, 8);
    sps_operator *op = NULL;
    T_OK(sps_operator_create(ctx, A, "merge:tile=5", NULL, &op) == SPS_ERR_INVALID_ARG && !op,
         "merge:tile=5 rejected: %s", sps_last_error(ctx));
    sps_operator_create(ctx, A, "merge", NULL, &op);
    double *nv = NULL;
    sps_matrix *B = t_revalued(ctx, A, 2.0, 0.0, 1.0, &nv);
    T_OK(op && sps_operator_update_values(op, nv) == SPS_OK && dc_host_err(op, B, 1, 0, 1) < 1e-13,
         "merge after update_values = CSR of the new values");
    free(nv);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

static void test_matrices(sps_context *ctx)
{
    const char *gens[] = {"powerlaw:30000,8,3", "poisson2d:200"};
    dc_each_gen(ctx, "merge on generated matrices", gens, 2, check_matrix);
    dc_each_real(ctx, "merge on real matrices", check_matrix);
}

T_MAIN_HOST_CTX(test_shapes, test_misc, test_matrices)
