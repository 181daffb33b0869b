/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/coo.c: the coo backend (row-sorted triplets, a
 * segmented reduction over fixed ranges of nonzeros): conversion, host
 * reference, table. A benchmark row, never auto's choice.
 *
 * apply_host emulates the kernels (coo.h): the same tiles and per-thread
 * runs, the partial sums of a row that crosses threads combined in thread
 * order (the GPU combines them with a block scan: the same terms, possibly
 * grouped otherwise when a row spans three threads or more), the tile
 * carries added in tile order. */
#include "coo.h"
#include "kernels.h"

#include <stdio.h>
#include <string.h>

SPS_DECLARE_GPU_BACKEND(sps_coo)

static void free_fmt(sps_fmt *fmt)
{
    sps_fmt_coo *f = (sps_fmt_coo *)fmt;
    if (!f) return;
    sps__free(f->row);
    sps__free(f->col);
    sps__free(f->val);
    sps__free(f);
}

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    *out = NULL;
    sps_status s = sps__no_params(ctx, "coo", params);
    if (s != SPS_OK) return s;
    sps_fmt_coo *f = sps__calloc(1, sizeof *f);
    const size_t n = (size_t)A->nnz;
    if (f) {
        f->row = sps__malloc(n * sizeof *f->row + 1);
        f->col = sps__malloc(n * sizeof *f->col + 1);
        f->val = sps__malloc(n * sizeof *f->val + 1);
    }
    if (!f || !f->row || !f->col || !f->val) {
        free_fmt((sps_fmt *)f);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "coo: out of memory for %lld triplets",
                        (long long)A->nnz);
    }
    f->nrows = A->nrows;
    f->ncols = A->ncols;
    f->nnz = A->nnz;
    f->ntiles = (f->nnz + SPS_COO_TILE - 1) / SPS_COO_TILE;
    for (sps_idx r = 0; r < A->nrows; r++)
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) f->row[p] = r;
    memcpy(f->col, A->col_idx, n * sizeof *f->col);
    memcpy(f->val, A->val, n * sizeof *f->val);
    /* Bytes model: row, column and value per entry; x once; y zeroed (or
     * scaled) once, then read and written by the += of the sums. */
    st->bytes_per_spmv = 16.0 * A->nnz + 8.0 * A->ncols + 24.0 * A->nrows;
    st->value_bytes = 8.0 * A->nnz + 8.0 * A->ncols + 24.0 * A->nrows;
    st->slots = A->nnz;
    st->fill = 0.0;
    st->blocks = f->ntiles;
    snprintf(st->detail, sizeof st->detail,
             "%lld tiles of %d triplets (%d threads x %d), segmented reduction, carries in "
             "tile order", (long long)f->ntiles, SPS_COO_TILE, SPS_COO_THREADS, SPS_COO_ITEMS);
    *out = (sps_fmt *)f;
    return SPS_OK;
}

/* Reduce by key: a partial sum of the same row adds, a new row starts over. */
static void carry_add(sps_idx *key, double *val, sps_idx k, double v)
{
    if (*key == k) *val = *val + v;
    else {
        *key = k;
        *val = v;
    }
}

/* Thread items [k0, k1) of a tile starting at z0 (coo.h): a carry-in of a
 * row that ended just before k0, whole runs and the first run go to y; the
 * last run joins the carry (ckey, cval). */
static void thread_items(const sps_fmt_coo *f, int64_t z0, int k0, int k1, double alpha,
                         const double *x, double *y, sps_idx *ckey, double *cval)
{
    const sps_idx first = f->row[z0 + k0];
    if (*ckey >= 0 && *ckey != first) y[*ckey] += alpha * *cval; /* it ended at k0 */
    sps_idx cur = first;
    double run = 0.0, head = 0.0;
    int head_done = 0;
    for (int q = k0; q < k1; q++) {
        const int64_t z = z0 + q;
        if (f->row[z] != cur) {
            if (head_done) y[cur] += alpha * run;
            else {
                head = run;
                head_done = 1;
            }
            cur = f->row[z];
            run = 0.0;
        }
        run += f->val[z] * x[f->col[z]];
    }
    if (head_done) y[first] += alpha * (*ckey == first ? *cval + head : head);
    carry_add(ckey, cval, cur, run);
}

static void apply_host(const sps_fmt *fmt, double alpha, const double *x, double beta, double *y)
{
    const sps_fmt_coo *f = (const sps_fmt_coo *)fmt;
    for (sps_idx r = 0; r < f->nrows; r++) y[r] = beta == 0.0 ? 0.0 : beta * y[r];
    sps_idx pend_row = -1; /* the run of equal tile carries */
    double pend = 0.0;
    for (int64_t t = 0; t < f->ntiles; t++) {
        const int64_t z0 = t * SPS_COO_TILE;
        const int nz = (int)(f->nnz - z0 < SPS_COO_TILE ? f->nnz - z0 : SPS_COO_TILE);
        sps_idx ckey = -1;
        double cval = 0.0;
        for (int k = 0; k < SPS_COO_THREADS && k * SPS_COO_ITEMS < nz; k++) {
            const int k0 = k * SPS_COO_ITEMS;
            const int k1 = k0 + SPS_COO_ITEMS < nz ? k0 + SPS_COO_ITEMS : nz;
            thread_items(f, z0, k0, k1, alpha, x, y, &ckey, &cval);
        }
        if (ckey == pend_row) pend = pend + cval;
        else {
            if (pend_row >= 0) y[pend_row] += alpha * pend;
            pend_row = ckey;
            pend = cval;
        }
    }
    if (pend_row >= 0) y[pend_row] += alpha * pend;
}

static sps_status update_host(sps_context *ctx, sps_fmt *fmt, const double *values)
{
    (void)ctx;
    sps_fmt_coo *f = (sps_fmt_coo *)fmt;
    if (f->nnz) memcpy(f->val, values, (size_t)f->nnz * sizeof *values);
    return SPS_OK;
}

const sps_backend sps_backend_coo = {
    .name = "coo",
    .summary = "row-sorted triplets, a segmented reduction over fixed ranges of nonzeros with "
               "carries in tile order (benchmark row)",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_NEEDS_CONVERT | SPS_CAP_SINGLE,
    .bench_only = 1,
    .convert = convert,
    .apply_host = apply_host,
    .update_host = update_host,
    .free_fmt = free_fmt,
    SPS_GPU_ENTRIES(sps_coo),
};
