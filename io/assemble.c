/* SPDX-License-Identifier: MIT */
/* spsolve/io/assemble.c: triplets read from a file become the CSR in place
 *
 * The readers parse entries in file order into three arrays (row, column,
 * value). The column and value arrays become the CSR's own arrays: a
 * counting pass gives each row's start, the row array is overwritten with
 * each entry's destination (file order within a row, mirrored entries of a
 * symmetric file appended and placed right after the entry they mirror,
 * exactly as sps__csr_from_triplets orders them), the permutation is applied
 * in place (by blocks, then cycles), and rows are sorted and duplicates
 * summed as everywhere else. Peak memory: 16 bytes per CSR entry plus 4 per
 * row, against 12 + 4 for the CSR itself, instead of holding the triplets
 * (16 bytes per entry) and the CSR at once. The result is bitwise the
 * matrix sps__csr_from_triplets builds from the same triplets. */
#include "parse.h"

#include <string.h>

/* Grow or shrink *p to n elements of size elt (n >= 1 kept valid). */
static int resize(void *p, int64_t n, size_t elt)
{
    void *q = sps__realloc(*(void **)p, sps__mul_size((size_t)(n ? n : 1), elt));
    if (!q) return 0;
    *(void **)p = q;
    return 1;
}

/* Row starts into rp (rp[r], r < nrows) and the total with mirrored
 * entries. Counts wrap harmlessly (unsigned) only when the total is over
 * SPS_IDX_MAX, which the caller rejects. */
static int64_t count_rows(int64_t n, const sps_idx *ri, const sps_idx *ci, sps_symmetry sym, sps_idx nrows,
                          sps_idx *rp)
{
    uint32_t *c = (uint32_t *)rp;
    int64_t total = 0;
    for (int64_t k = 0; k < n; k++) {
        c[ri[k] + 1]++;
        total++;
        if (sym != SPS_GENERAL && ri[k] != ci[k]) c[ci[k] + 1]++, total++;
    }
    if (total <= SPS_IDX_MAX)
        for (sps_idx r = 0; r < nrows; r++) c[r + 1] += c[r];
    return total;
}

/* Destinations into ri (mirrored entries appended from n on); rp[r]
 * advances to the end of row r. */
static void destinations(int64_t n, sps_idx *ri, sps_idx *ci, double *v, sps_symmetry sym, sps_idx *rp)
{
    int64_t m = n;
    for (int64_t k = 0; k < n; k++) {
        sps_idx r = ri[k], c = ci[k];
        ri[k] = rp[r]++;
        if (sym != SPS_GENERAL && r != c) {
            ci[m] = r;
            v[m] = sym == SPS_SKEW_SYMMETRIC ? -v[k] : v[k];
            ri[m] = rp[c]++;
            m++;
        }
    }
}

static inline void swap_entry(sps_idx *dest, sps_idx *ci, double *v, int64_t a, int64_t b)
{
    sps_idx d = dest[a], c = ci[a];
    double x = v[a];
    dest[a] = dest[b];
    ci[a] = ci[b];
    v[a] = v[b];
    dest[b] = d;
    ci[b] = c;
    v[b] = x;
}

/* Entries [lo, hi) whose destinations are in [lo, hi): follow the cycles,
 * each swap placing one entry for good. */
static void cycles(int64_t lo, int64_t hi, sps_idx *dest, sps_idx *ci, double *v)
{
    for (int64_t i = lo; i < hi; i++) {
        sps_idx d;
        while ((d = dest[i]) != (sps_idx)i) swap_entry(dest, ci, v, i, d);
    }
}

/* Move every entry to its destination (dest is a permutation of 0..total-1).
 * Following its cycles directly would jump across the whole arrays once per
 * entry (a cache miss each, seconds for 10^7 random rows), so first every
 * entry goes to its block of 2^shift destinations, blocks filling from
 * their fronts like an American flag sort (a few thousand sequential
 * streams), then the cycles are followed inside each block, in cache. */
static void permute(int64_t total, sps_idx *dest, sps_idx *ci, double *v)
{
    int bits = 0;
    while (bits < 62 && ((int64_t)1 << bits) < total) bits++;
    int shift = bits - 11 > 12 ? bits - 11 : 12;
    int64_t nb = (total >> shift) + 1, next[2049];
    for (int64_t b = 0; b < nb; b++) next[b] = b << shift;
    for (int64_t b = 0; b < nb; b++) {
        int64_t end = (b + 1) << shift < total ? (b + 1) << shift : total;
        while (next[b] < end) {
            int64_t p = next[b], home = dest[p] >> shift;
            if (home == b) next[b]++;
            else swap_entry(dest, ci, v, p, next[home]++);
        }
    }
    for (int64_t b = 0; b < nb; b++) cycles(b << shift, (b + 1) << shift < total ? (b + 1) << shift : total, dest, ci, v);
}

/* A general file whose entries are already the CSR's order (rows in order,
 * columns strictly increasing within a row, so no duplicates): the column
 * and value arrays are the CSR's as they are. Files written row by row
 * (spsolve --save-matrix, SciPy's mmwrite of a CSR) are this way. */
static int in_csr_order(int64_t n, const sps_idx *ri, const sps_idx *ci)
{
    for (int64_t k = 1; k < n; k++)
        if (ri[k] < ri[k - 1] || (ri[k] == ri[k - 1] && ci[k] <= ci[k - 1])) return 0;
    return 1;
}

sps_status sps__io_assemble(sps_context *ctx, const char *path, sps_idx nrows, sps_idx ncols, sps_symmetry sym,
                            int64_t n, sps_idx **ri, sps_idx **ci, double **v, sps_csr *out)
{
    memset(out, 0, sizeof *out);
    /* The row pointer counts, then moves along each row, then is the CSR's. */
    sps_idx *rp = sps__calloc((size_t)nrows + 2, sizeof *rp);
    if (!rp)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory for the row pointer of %d rows (%.1f MB asked)",
                        path, nrows, (double)(nrows + 2) * 4e-6);
    int64_t total = count_rows(n, *ri, *ci, sym, nrows, rp);
    if (total > SPS_IDX_MAX) {
        sps__free(rp);
        return sps__err(ctx, SPS_ERR_PARSE, "%s: %lld entries after mirroring exceed the 32-bit index limit (%d)",
                        path, (long long)total, SPS_IDX_MAX);
    }
    int pattern = *v == NULL;
    if (!resize(ri, total, sizeof **ri) || !resize(ci, total, sizeof **ci) || !resize(v, total, sizeof **v)) {
        sps__free(rp);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory for a CSR of %lld entries (%.1f MB asked)",
                        path, (long long)total, (double)total * 16e-6);
    }
    if (pattern)
        for (int64_t k = 0; k < n; k++) (*v)[k] = 1.0;
    int64_t w = total;
    if (sym == SPS_GENERAL && in_csr_order(n, *ri, *ci)) {
        /* count_rows left the row pointer (rp[0] = 0, rp[r + 1] the end of
         * row r); the entries are in place */
        sps__free(*ri);
        *ri = NULL;
    } else {
        destinations(n, *ri, *ci, *v, sym, rp);
        permute(total, *ri, *ci, *v);
        sps__free(*ri);
        *ri = NULL;
        memmove(rp + 1, rp, (size_t)nrows * sizeof *rp); /* rp[r] was the end of row r */
        rp[0] = 0;
        w = sps__csr_sort_rows(nrows, rp, *ci, *v);
    }
    resize(ci, w, sizeof **ci); /* shrinking: failure is harmless */
    resize(v, w, sizeof **v);
    out->nrows = nrows;
    out->ncols = ncols;
    out->nnz = (sps_idx)w;
    out->row_ptr = rp;
    out->col_idx = *ci;
    out->val = *v;
    *ci = NULL;
    *v = NULL;
    return SPS_OK;
}
