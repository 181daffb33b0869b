/* SPDX-License-Identifier: MIT */
/* spsolve/core/matrix.c: the public matrix object */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int sps__rows_unjustified(int64_t rows, int64_t cols, int64_t nnz, sps_symmetry sym, char *why,
                          size_t n)
{
    int64_t reach = sym == SPS_GENERAL ? nnz : 2 * nnz;
    if (rows <= SPS_ROWS_FREE || rows <= reach) return 0;
    if (sym == SPS_GENERAL)
        snprintf(why, n, "%lld rows but only %lld entries: at least %lld empty rows%s", (long long)rows,
                 (long long)nnz, (long long)(rows - reach), rows == cols ? "; the matrix is singular" : "");
    else
        snprintf(why, n, "%lld rows but only %lld entries (%lld with the mirrored triangle): at least %lld "
                 "empty rows; the matrix is singular", (long long)rows, (long long)nnz, (long long)reach,
                 (long long)(rows - reach));
    return 1;
}

/* NaN and Inf are rejected as the file readers reject them. */
static sps_status check_finite(sps_context *ctx, const char *fn, int64_t nnz, const sps_idx *rows,
                               const sps_idx *cols, const double *values)
{
    for (int64_t k = 0; k < nnz; k++)
        if (!isfinite(values[k]))
            return sps__err(ctx, SPS_ERR_INVALID_ARG,
                            "%s: entry %lld (%d, %d) is %g: values must be finite (NaN and Inf are rejected)",
                            fn, (long long)k, rows[k], cols[k], values[k]);
    return SPS_OK;
}

sps_status sps__matrix_wrap(sps_context *ctx, sps_csr *A, const sps_matrix_source *src,
                            sps_matrix **out)
{
    sps_matrix *M = sps__calloc(1, sizeof *M);
    if (!M) {
        sps__csr_free(A);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory");
    }
    M->A = *A;
    memset(A, 0, sizeof *A);
    if (src) M->src = *src;
    *out = M;
    return SPS_OK;
}

/* *A from general triplets (duplicates summed), its source named `name`; errors
 * prefixed with the API function `fn`. */
static sps_status from_triplets(sps_context *ctx, const char *fn, const char *name, sps_idx nrows, sps_idx ncols,
                                int64_t nnz, const sps_idx *rows, const sps_idx *cols, const double *values,
                                sps_matrix **A)
{
    sps_csr C;
    sps_status st = sps__csr_from_triplets(ctx, nrows, ncols, nnz, rows, cols, values, SPS_GENERAL, &C);
    if (st != SPS_OK) {
        sps__err_prefix(ctx, fn);
        return st;
    }
    sps_matrix_source src;
    memset(&src, 0, sizeof src);
    sps__strlcpy(src.name, name, sizeof src.name);
    src.nnz_stored = nnz;
    return sps__matrix_wrap(ctx, &C, &src, A);
}

sps_status sps_matrix_create_csr(sps_context *ctx, sps_idx nrows, sps_idx ncols,
                                 const sps_idx *row_ptr, const sps_idx *col_idx,
                                 const double *values, sps_matrix **A)
{
    if (!A) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_csr: A is NULL");
    *A = NULL;
    if (nrows < 0 || ncols < 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_csr: negative size %d x %d",
                        nrows, ncols);
    if (!row_ptr) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_csr: row_ptr is NULL");
    if (row_ptr[0] != 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_csr: row_ptr[0] = %d, expected 0",
                        row_ptr[0]);
    for (sps_idx r = 0; r < nrows; r++)
        if (row_ptr[r + 1] < row_ptr[r])
            return sps__err(ctx, SPS_ERR_INVALID_ARG,
                            "sps_matrix_create_csr: row_ptr decreases at row %d (%d -> %d)", r,
                            row_ptr[r], row_ptr[r + 1]);
    sps_idx nnz = row_ptr[nrows];
    if (nnz > 0 && (!col_idx || !values))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_csr: col_idx or values is NULL");
    for (sps_idx r = 0; r < nrows; r++)
        for (sps_idx p = row_ptr[r]; p < row_ptr[r + 1]; p++)
            if (!isfinite(values[p]))
                return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_csr: entry %d (%d, %d) is %g: values "
                                "must be finite (NaN and Inf are rejected)", p, r, col_idx[p], values[p]);
    sps_idx *ri = sps__malloc(sps__mul_size((size_t)nnz, sizeof *ri));
    if (!ri) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_matrix_create_csr: out of memory");
    for (sps_idx r = 0; r < nrows; r++)
        for (sps_idx p = row_ptr[r]; p < row_ptr[r + 1]; p++) ri[p] = r;
    sps_status st = from_triplets(ctx, "sps_matrix_create_csr", "(csr arrays)", nrows, ncols, nnz, ri, col_idx,
                                  values, A);
    sps__free(ri);
    return st;
}

sps_status sps_matrix_create_coo(sps_context *ctx, sps_idx nrows, sps_idx ncols, int64_t nnz,
                                 const sps_idx *rows, const sps_idx *cols,
                                 const double *values, sps_matrix **A)
{
    if (!A) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_coo: A is NULL");
    *A = NULL;
    if (nnz > 0 && (!rows || !cols || !values))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_coo: NULL array");
    if (nrows < 0 || ncols < 0 || nnz < 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_coo: negative size %d x %d with %lld entries",
                        nrows, ncols, (long long)nnz);
    char why[256];
    if (sps__rows_unjustified(nrows, ncols, nnz, SPS_GENERAL, why, sizeof why))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_create_coo: %s", why);
    sps_status st = check_finite(ctx, "sps_matrix_create_coo", nnz, rows, cols, values);
    if (st != SPS_OK) return st;
    return from_triplets(ctx, "sps_matrix_create_coo", "(coo arrays)", nrows, ncols, nnz, rows, cols, values, A);
}

sps_status sps_matrix_generate(sps_context *ctx, const char *spec, sps_matrix **A)
{
    if (!A || !spec) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_generate: NULL argument");
    *A = NULL;
    double t0 = sps__now_ms();
    sps_csr C;
    sps_status st = sps__generate(ctx, spec, &C);
    if (st != SPS_OK) return st;
    sps_matrix_source src;
    memset(&src, 0, sizeof src);
    sps__strlcpy(src.name, spec, sizeof src.name);
    src.nnz_stored = C.nnz;
    src.read_ms = sps__now_ms() - t0;
    return sps__matrix_wrap(ctx, &C, &src, A);
}

void sps_matrix_destroy(sps_matrix *A)
{
    if (!A) return;
    sps__matrix_drop_device(A);
    sps__csr_free(&A->A);
    sps__free(A);
}

sps_idx sps_matrix_rows(const sps_matrix *A) { return A ? A->A.nrows : 0; }
sps_idx sps_matrix_cols(const sps_matrix *A) { return A ? A->A.ncols : 0; }
int64_t sps_matrix_nnz(const sps_matrix *A) { return A ? A->A.nnz : 0; }

sps_status sps_matrix_csr(const sps_matrix *A, const sps_idx **row_ptr, const sps_idx **col_idx,
                          const double **values)
{
    if (!A) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_matrix_csr: A is NULL");
    if (row_ptr) *row_ptr = A->A.row_ptr;
    if (col_idx) *col_idx = A->A.col_idx;
    if (values) *values = A->A.val;
    return SPS_OK;
}

sps_status sps_matrix_get_source(const sps_matrix *A, sps_matrix_source *src)
{
    if (!A || !src) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_matrix_get_source: NULL argument");
    *src = A->src;
    return SPS_OK;
}

sps_status sps_matrix_spmv_host(const sps_matrix *A, double alpha, const double *x, double beta,
                                double *y)
{
    if (!A || (!x && A->A.ncols) || (!y && A->A.nrows))
        return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_matrix_spmv_host: NULL argument");
    sps__csr_spmv(&A->A, alpha, x, beta, y);
    return SPS_OK;
}
