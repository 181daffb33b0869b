/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/bsr.c: the bsr backend (dense b x b blocks, one warp
 * per block row): block size rule, conversion, host reference, table. A
 * benchmark row, never auto's choice.
 *
 * Parameter: block=K (1..SPS_BSR_MAX_BLOCK). Without it the block size is
 * the one among 2..8 with the least zero fill (the larger on a tie): 3 for
 * a matrix of 3 x 3 nodal blocks, usually 2 for anything else. A layout
 * whose slots pass the padding bound (padded.h) is refused. */
#include "bsr.h"
#include "kernels.h"
#include "padded.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SPS_DECLARE_GPU_BACKEND(sps_bsr)

static sps_status param(sps_context *ctx, void *user, const char *key, const char *value)
{
    int *block = user;
    if (strcmp(key, "block") == 0) {
        char *end = NULL;
        long v = strtol(value, &end, 10);
        if (*value && *end == 0 && v >= 1 && v <= SPS_BSR_MAX_BLOCK) {
            *block = (int)v;
            return SPS_OK;
        }
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "bsr: block=%s: the block size must be 1..%d",
                        value, SPS_BSR_MAX_BLOCK);
    }
    return sps__err(ctx, SPS_ERR_INVALID_ARG, "bsr: unknown parameter '%s' (known: block=K)",
                    key);
}

static void free_fmt(sps_fmt *fmt)
{
    sps_fmt_bsr *f = (sps_fmt_bsr *)fmt;
    if (!f) return;
    sps__free(f->brow_ptr);
    sps__free(f->bcol);
    sps__free(f->val);
    sps__free(f->pos);
    sps__free(f);
}

/* Blocks of A at block size b; counts[I] (when not NULL) the blocks of block
 * row I. mark has ceil(ncols / b) entries, zeroed. */
static int64_t count_blocks(const sps_csr *A, int b, sps_idx *mark, sps_idx *counts)
{
    const sps_idx nbrows = (A->nrows + b - 1) / b;
    int64_t total = 0;
    for (sps_idx I = 0; I < nbrows; I++) {
        sps_idx n = 0, r1 = (I + 1) * b < A->nrows ? (I + 1) * b : A->nrows;
        for (sps_idx p = A->row_ptr[I * b]; p < A->row_ptr[r1]; p++) {
            sps_idx J = A->col_idx[p] / b;
            if (mark[J] != I + 1) {
                mark[J] = I + 1;
                n++;
            }
        }
        if (counts) counts[I] = n;
        total += n;
    }
    return total;
}

/* The block size with the least fill among 2..SPS_BSR_MAX_BLOCK; on a tie
 * the larger (fewer block columns and block rows to read). */
static int pick_block(const sps_csr *A, sps_idx *mark)
{
    int best = 2;
    double best_fill = 2.0;
    for (int b = 2; b <= SPS_BSR_MAX_BLOCK; b++) {
        memset(mark, 0, ((size_t)A->ncols + 1) * sizeof *mark);
        int64_t slots = count_blocks(A, b, mark, NULL) * b * b;
        double fill = slots > 0 ? (double)(slots - A->nnz) / (double)slots : 0.0;
        if (fill <= best_fill) {
            best = b;
            best_fill = fill;
        }
    }
    return best;
}

static int cmp_idx(const void *a, const void *b)
{
    sps_idx x = *(const sps_idx *)a, y = *(const sps_idx *)b;
    return (x > y) - (x < y);
}

/* Fill brow_ptr (from counts), bcol (sorted per block row), pos and val.
 * where has ceil(ncols / b) entries. */
static void fill_blocks(sps_fmt_bsr *f, const sps_csr *A, sps_idx *mark, sps_idx *where)
{
    const int b = f->b;
    memset(mark, 0, ((size_t)A->ncols + 1) * sizeof *mark);
    for (sps_idx I = 0; I < f->nbrows; I++) {
        sps_idx k = f->brow_ptr[I], r0 = I * b, r1 = r0 + b < A->nrows ? r0 + b : A->nrows;
        for (sps_idx p = A->row_ptr[r0]; p < A->row_ptr[r1]; p++) {
            sps_idx J = A->col_idx[p] / b;
            if (mark[J] != I + 1) {
                mark[J] = I + 1;
                f->bcol[k++] = J;
            }
        }
        qsort(f->bcol + f->brow_ptr[I], (size_t)(k - f->brow_ptr[I]), sizeof *f->bcol, cmp_idx);
        for (sps_idx q = f->brow_ptr[I]; q < k; q++) where[f->bcol[q]] = q;
        for (sps_idx r = r0; r < r1; r++)
            for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
                sps_idx c = A->col_idx[p];
                f->pos[p] = (int64_t)where[c / b] * b * b + (r - r0) * b + c % b;
            }
    }
    memset(f->val, 0, sps__mul_size((size_t)f->nblocks * b, (size_t)b * sizeof *f->val));
    for (sps_idx p = 0; p < A->nnz; p++) f->val[f->pos[p]] = A->val[p];
}

/* Allocate and build f at block size f->b (counts from count_blocks). */
static sps_status build(sps_context *ctx, const sps_csr *A, sps_fmt_bsr *f, sps_idx *mark)
{
    const int b = f->b;
    f->nbrows = (A->nrows + b - 1) / b;
    f->brow_ptr = sps__malloc(((size_t)f->nbrows + 1) * sizeof *f->brow_ptr);
    if (!f->brow_ptr) return sps__err(ctx, SPS_ERR_NO_MEMORY, "bsr: out of memory");
    memset(mark, 0, ((size_t)A->ncols + 1) * sizeof *mark);
    f->nblocks = count_blocks(A, b, mark, f->brow_ptr + 1);
    f->brow_ptr[0] = 0;
    for (sps_idx I = 0; I < f->nbrows; I++) f->brow_ptr[I + 1] += f->brow_ptr[I];
    char what[64];
    snprintf(what, sizeof what, "%lld blocks of %d x %d", (long long)f->nblocks, b, b);
    sps_status s = sps__pad_bound(ctx, "bsr", what, f->nblocks * b * b, A->nnz);
    if (s != SPS_OK) return s;
    f->bcol = sps__malloc((size_t)f->nblocks * sizeof *f->bcol + 1);
    f->val = sps__malloc(sps__mul_size((size_t)f->nblocks * b, (size_t)b * sizeof *f->val) + 1);
    f->pos = sps__malloc((size_t)A->nnz * sizeof *f->pos + 1);
    if (!f->bcol || !f->val || !f->pos)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "bsr: out of memory for %lld blocks of %d x %d",
                        (long long)f->nblocks, b, b);
    fill_blocks(f, A, mark, mark + (size_t)A->ncols + 1);
    return SPS_OK;
}

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    *out = NULL;
    int forced = 0;
    sps_status s = sps__parse_params(ctx, params, param, &forced);
    if (s != SPS_OK) return s;
    /* mark, then where: ncols + 1 entries each (block columns <= ncols) */
    sps_idx *mark = sps__malloc(sps__mul_size((size_t)A->ncols + 1, 2 * sizeof *mark));
    sps_fmt_bsr *f = sps__calloc(1, sizeof *f);
    if (!mark || !f) {
        sps__free(mark);
        sps__free(f);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "bsr: out of memory");
    }
    f->nrows = A->nrows;
    f->ncols = A->ncols;
    f->nnz = A->nnz;
    f->b = forced ? forced : pick_block(A, mark);
    s = build(ctx, A, f, mark);
    sps__free(mark);
    if (s != SPS_OK) {
        free_fmt((sps_fmt *)f);
        return s;
    }
    const int b = f->b;
    st->slots = f->nblocks * b * b;
    st->fill = st->slots > 0 ? (double)(st->slots - A->nnz) / (double)st->slots : 0.0;
    st->blocks = f->nblocks;
    /* Bytes model: block row pointer, block column per block, every slot's
     * value, x once (the padded columns are not read), y once. */
    st->bytes_per_spmv = 4.0 * (f->nbrows + 1) + 4.0 * f->nblocks + 8.0 * st->slots +
                         8.0 * A->ncols + 8.0 * A->nrows;
    st->value_bytes = 8.0 * st->slots + 8.0 * A->ncols + 8.0 * A->nrows;
    snprintf(st->detail, sizeof st->detail,
             "%d x %d blocks (%s), %lld blocks, fill %.3f; one warp per block row", b, b,
             forced ? "forced" : "least fill among 2..8", (long long)f->nblocks, st->fill);
    *out = (sps_fmt *)f;
    return SPS_OK;
}

/* Group g's sum for row i of block row I (bsr.h). */
static double group_sum(const sps_fmt_bsr *f, sps_idx I, int i, int g, const double *x)
{
    const int b = f->b, G = 32 / b;
    double s = 0.0;
    for (sps_idx k = f->brow_ptr[I] + g; k < f->brow_ptr[I + 1]; k += G) {
        const double *v = f->val + (int64_t)k * b * b + i * b;
        const int64_t c0 = (int64_t)f->bcol[k] * b;
        for (int c = 0; c < b; c++)
            if (c0 + c < f->ncols) s += v[c] * x[c0 + c];
    }
    return s;
}

static void apply_host(const sps_fmt *fmt, double alpha, const double *x, double beta, double *y)
{
    const sps_fmt_bsr *f = (const sps_fmt_bsr *)fmt;
    const int b = f->b, G = 32 / b;
    for (sps_idx I = 0; I < f->nbrows; I++)
        for (int i = 0; i < b && (int64_t)I * b + i < f->nrows; i++) {
            double s = group_sum(f, I, i, 0, x);
            for (int g = 1; g < G; g++) s += group_sum(f, I, i, g, x);
            double *yr = y + (int64_t)I * b + i;
            *yr = beta == 0.0 ? alpha * s : alpha * s + beta * *yr;
        }
}

static sps_status update_host(sps_context *ctx, sps_fmt *fmt, const double *values)
{
    (void)ctx;
    sps_fmt_bsr *f = (sps_fmt_bsr *)fmt;
    for (int64_t p = 0; p < f->nnz; p++) f->val[f->pos[p]] = values[p];
    return SPS_OK;
}

const sps_backend sps_backend_bsr = {
    .name = "bsr",
    .summary = "dense b x b blocks (b of least fill among 2..8, or block=K), one warp per block "
               "row (benchmark row)",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_NEEDS_CONVERT | SPS_CAP_SINGLE,
    .bench_only = 1,
    .convert = convert,
    .apply_host = apply_host,
    .update_host = update_host,
    .free_fmt = free_fmt,
    SPS_GPU_ENTRIES(sps_bsr),
};
