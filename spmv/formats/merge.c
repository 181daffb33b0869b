/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/merge.c: the merge backend (Merrill & Garland, SC'16): host part.
 *
 * The format is the CSR plus the merge-path coordinates (row, nonzero) where
 * each tile of SPS_MERGE_TILE items starts, found by binary search here in
 * convert (O(tiles * log nrows), counted as conversion) so that a launch needs
 * no search kernel. apply_host is an emulation of the kernels: the same tiles,
 * the same per-thread shares and sequential sums, the carries between threads
 * combined in thread order (the GPU combines them with a block scan: same
 * values, possibly another rounding when a row spans three threads or more),
 * and rows crossing tiles fixed up in tile order. */
#include "csr_fmt.h"
#include "merge_path.h"
#include "kernels.h"

#include <stdio.h>

SPS_DECLARE_GPU_BACKEND(sps_merge)

/* Combine a carry (key, val) with the next one: partial sums of the same row
 * add up, a new row starts over (the reduce-by-key operator). */
static void carry_add(sps_idx *key, double *val, sps_idx k, double v)
{
    if (*key == k) *val = *val + v;
    else {
        *key = k;
        *val = v;
    }
}

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    sps_status s = sps__no_params(ctx, "merge", params);
    if (s != SPS_OK) return s;
    const int64_t total = (int64_t)A->nrows + A->nnz;
    const int64_t ntiles = (total + SPS_MERGE_TILE - 1) / SPS_MERGE_TILE;
    sps_idx *coord = sps__malloc(sps__mul_size((size_t)ntiles + 1, 2 * sizeof *coord));
    if (!coord) return sps__err(ctx, SPS_ERR_NO_MEMORY, "merge: out of memory");
    s = sps__csr_fmt_convert(ctx, A, out, st);
    if (s != SPS_OK) {
        sps__free(coord);
        return s;
    }
    for (int64_t t = 0; t <= ntiles; t++) {
        const int64_t diag = t * SPS_MERGE_TILE < total ? t * SPS_MERGE_TILE : total;
        const int64_t i = sps_merge_search(A->row_ptr + 1, A->nrows, 0, A->nnz, diag);
        coord[2 * t] = (sps_idx)i;
        coord[2 * t + 1] = (sps_idx)(diag - i);
    }
    sps_fmt_csr *f = (sps_fmt_csr *)*out;
    f->extra = coord;
    f->param = (int)ntiles;
    st->blocks = ntiles;
    st->bytes_per_spmv += 8.0 * (double)(ntiles + 1) + 12.0 * (double)ntiles;
    snprintf(st->detail, sizeof st->detail,
             "%lld tiles of %d merge items (%d threads x %d), tile starts precomputed",
             (long long)ntiles, SPS_MERGE_TILE, SPS_MERGE_THREADS, SPS_MERGE_ITEMS);
    return SPS_OK;
}

static void apply_host(const sps_fmt *fmt, double alpha, const double *x, double beta, double *y)
{
    const sps_fmt_csr *f = (const sps_fmt_csr *)fmt;
    const sps_csr *A = &f->A;
    const sps_idx *coord = f->extra;
    sps_idx pend_row = -1; /* run of tile carries of one row, applied once the row is written */
    double pend = 0.0;
    for (int t = 0; t < f->param; t++) {
        const sps_idx r0 = coord[2 * t], z0 = coord[2 * t + 1];
        const sps_idx nr = coord[2 * t + 2] - r0, nz = coord[2 * t + 3] - z0;
        const sps_idx *end = A->row_ptr + r0 + 1; /* end[i], i < nr: row ends of the tile */
        sps_idx ckey = r0;                        /* carry into the next thread */
        double cval = 0.0;
        for (int k = 0; k < SPS_MERGE_THREADS; k++) {
            const sps_idx k0 = k * SPS_MERGE_ITEMS < nr + nz ? k * SPS_MERGE_ITEMS : nr + nz;
            const sps_idx k1 = k0 + SPS_MERGE_ITEMS < nr + nz ? k0 + SPS_MERGE_ITEMS : nr + nz;
            sps_idx i = (sps_idx)sps_merge_search(end, nr, z0, nz, k0), j = k0 - i;
            const sps_idx i0 = i;
            double run = 0.0;
            for (sps_idx q = k0; q < k1; q++) {
                if (i == nr || z0 + j < end[i]) { /* past the tile's last row end: a nonzero */
                    run += A->val[z0 + j] * x[A->col_idx[z0 + j]];
                    j++;
                } else { /* row r0 + i ends: its first part may come from earlier threads */
                    double v = run;
                    if (i == i0 && ckey == r0 + i) v = run + cval;
                    double *yr = y + r0 + i;
                    *yr = beta == 0.0 ? alpha * v : alpha * v + beta * *yr;
                    run = 0.0;
                    i++;
                }
            }
            carry_add(&ckey, &cval, r0 + i, run);
        }
        /* The tile's carry (ckey is its last row, maybe nrows) joins the run of
         * its row; a new row flushes the previous run, whose row the tiles
         * processed so far have written. */
        if (ckey == pend_row) pend = pend + cval;
        else {
            if (pend_row >= 0 && pend_row < A->nrows) y[pend_row] += alpha * pend;
            pend_row = ckey;
            pend = cval;
        }
    }
    if (pend_row >= 0 && pend_row < A->nrows) y[pend_row] += alpha * pend;
}

const sps_backend sps_backend_merge = {
    .name = "merge",
    .summary = "merge-path CSR (Merrill & Garland SC'16): equal rows+nonzeros per thread, "
               "deterministic fix-up",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_SINGLE,
    .convert = convert,
    .apply_host = apply_host,
    SPS_CSR_FMT_ENTRIES,
    SPS_GPU_ENTRIES(sps_merge),
};
