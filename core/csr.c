/* SPDX-License-Identifier: MIT */
/* spsolve/core/csr.c: host CSR: allocation, triplets -> CSR, checks, reference SpMV */
#include "internal.h"

#include <math.h>
#include <string.h>

sps_status sps__csr_alloc(sps_context *ctx, sps_csr *A, sps_idx nrows, sps_idx ncols,
                          sps_idx nnz)
{
    memset(A, 0, sizeof *A);
    if (nrows < 0 || ncols < 0 || nnz < 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "negative matrix size %d x %d, %d entries",
                        nrows, ncols, nnz);
    A->row_ptr = sps__calloc((size_t)nrows + 1, sizeof *A->row_ptr);
    A->col_idx = sps__malloc(sps__mul_size((size_t)nnz, sizeof *A->col_idx));
    A->val = sps__malloc(sps__mul_size((size_t)nnz, sizeof *A->val));
    if (!A->row_ptr || !A->col_idx || !A->val) {
        sps__csr_free(A);
        return sps__err(ctx, SPS_ERR_NO_MEMORY,
                        "out of memory for a %d x %d CSR with %d entries", nrows, ncols, nnz);
    }
    A->nrows = nrows;
    A->ncols = ncols;
    A->nnz = nnz;
    return SPS_OK;
}

void sps__csr_free(sps_csr *A)
{
    if (!A) return;
    sps__free(A->row_ptr);
    sps__free(A->col_idx);
    sps__free(A->val);
    memset(A, 0, sizeof *A);
}

sps_status sps__csr_copy(sps_context *ctx, const sps_csr *src, sps_csr *dst)
{
    sps_status st = sps__csr_alloc(ctx, dst, src->nrows, src->ncols, src->nnz);
    if (st != SPS_OK) return st;
    memcpy(dst->row_ptr, src->row_ptr, ((size_t)src->nrows + 1) * sizeof *src->row_ptr);
    memcpy(dst->col_idx, src->col_idx, (size_t)src->nnz * sizeof *src->col_idx);
    memcpy(dst->val, src->val, (size_t)src->nnz * sizeof *src->val);
    return SPS_OK;
}

/* Sort one row's (col, val) pairs by column: insertion sort for short rows,
 * heap sort otherwise (no recursion, no extra memory, O(k log k)). */
static void sift(sps_idx *c, double *v, sps_idx start, sps_idx end)
{
    sps_idx root = start;
    for (;;) {
        sps_idx child = 2 * root + 1;
        if (child > end) return;
        if (child + 1 <= end && c[child] < c[child + 1]) child++;
        if (c[root] >= c[child]) return;
        sps_idx tc = c[root]; c[root] = c[child]; c[child] = tc;
        double tv = v[root]; v[root] = v[child]; v[child] = tv;
        root = child;
    }
}

static void sort_row(sps_idx *c, double *v, sps_idx k)
{
    if (k < 32) {
        for (sps_idx i = 1; i < k; i++) {
            sps_idx ci = c[i];
            double vi = v[i];
            sps_idx j = i - 1;
            while (j >= 0 && c[j] > ci) {
                c[j + 1] = c[j];
                v[j + 1] = v[j];
                j--;
            }
            c[j + 1] = ci;
            v[j + 1] = vi;
        }
        return;
    }
    for (sps_idx s = k / 2 - 1; s >= 0; s--) sift(c, v, s, k - 1);
    for (sps_idx e = k - 1; e > 0; e--) {
        sps_idx tc = c[0]; c[0] = c[e]; c[e] = tc;
        double tv = v[0]; v[0] = v[e]; v[e] = tv;
        sift(c, v, 0, e - 1);
    }
}

int64_t sps__csr_sort_rows(sps_idx nrows, sps_idx *rp, sps_idx *cols, double *vals)
{
    return sps__csr_sort_rows_from(nrows, rp, 0, cols, vals);
}

int64_t sps__csr_sort_rows_from(sps_idx nrows, sps_idx *rp, int64_t base, sps_idx *cols, double *vals)
{
    int64_t w = base, b = base;
    for (sps_idx r = 0; r < nrows; r++) {
        int64_t e = rp[r + 1]; /* read before rp[r + 1] is overwritten */
        sort_row(cols + b, vals + b, (sps_idx)(e - b));
        int64_t first = w;
        for (int64_t p = b; p < e; p++) {
            if (w > first && cols[w - 1] == cols[p]) {
                vals[w - 1] += vals[p];
            } else {
                cols[w] = cols[p];
                vals[w] = vals[p];
                w++;
            }
        }
        rp[r + 1] = (sps_idx)w;
        b = e;
    }
    return w;
}

sps_status sps__csr_from_triplets(sps_context *ctx, sps_idx nrows, sps_idx ncols,
                                  int64_t n, const sps_idx *ri, const sps_idx *ci,
                                  const double *v, sps_symmetry sym, sps_csr *out)
{
    memset(out, 0, sizeof *out);
    if (nrows < 0 || ncols < 0 || n < 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "negative size %d x %d with %lld entries",
                        nrows, ncols, (long long)n);
    if (sym != SPS_GENERAL && nrows != ncols)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "a %s matrix must be square, got %d x %d",
                        sym == SPS_SYMMETRIC ? "symmetric" : "skew-symmetric", nrows, ncols);
    /* Count per row, including mirrored entries; validate indices. */
    int64_t *cnt = sps__calloc((size_t)nrows + 1, sizeof *cnt);
    if (!cnt) return sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory building CSR");
    for (int64_t k = 0; k < n; k++) {
        sps_idx r = ri[k], c = ci[k];
        if (r < 0 || r >= nrows || c < 0 || c >= ncols) {
            sps__free(cnt);
            return sps__err(ctx, SPS_ERR_INVALID_ARG,
                            "entry %lld: index (%d, %d) outside a %d x %d matrix",
                            (long long)k, r, c, nrows, ncols);
        }
        cnt[r + 1]++;
        if (sym != SPS_GENERAL && r != c) cnt[c + 1]++;
    }
    for (sps_idx r = 0; r < nrows; r++) cnt[r + 1] += cnt[r];
    int64_t total = cnt[nrows];
    if (total > SPS_IDX_MAX) {
        sps__free(cnt);
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "%lld entries after mirroring exceed the 32-bit index limit (%d)",
                        (long long)total, SPS_IDX_MAX);
    }
    sps_idx *cols = sps__malloc(sps__mul_size((size_t)total, sizeof *cols));
    double *vals = sps__malloc(sps__mul_size((size_t)total, sizeof *vals));
    int64_t *pos = sps__malloc(sps__mul_size((size_t)nrows + 1, sizeof *pos));
    if (!cols || !vals || !pos) {
        sps__free(cnt); sps__free(cols); sps__free(vals); sps__free(pos);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory building CSR (%lld entries)",
                        (long long)total);
    }
    memcpy(pos, cnt, ((size_t)nrows + 1) * sizeof *pos);
    for (int64_t k = 0; k < n; k++) {
        sps_idx r = ri[k], c = ci[k];
        double x = v ? v[k] : 1.0;
        int64_t p = pos[r]++;
        cols[p] = c;
        vals[p] = x;
        if (sym != SPS_GENERAL && r != c) {
            p = pos[c]++;
            cols[p] = r;
            vals[p] = sym == SPS_SKEW_SYMMETRIC ? -x : x;
        }
    }
    sps__free(pos);
    /* Sort each row, sum duplicates, compact in place. */
    sps_idx *rp = sps__malloc(sps__mul_size((size_t)nrows + 1, sizeof *rp));
    if (!rp) {
        sps__free(cnt); sps__free(cols); sps__free(vals);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory building CSR");
    }
    for (sps_idx r = 0; r <= nrows; r++) rp[r] = (sps_idx)cnt[r]; /* <= total: fits */
    sps__free(cnt);
    int64_t w = sps__csr_sort_rows(nrows, rp, cols, vals);
    /* Shrink to fit (failure to shrink is harmless). */
    sps_idx *c2 = sps__realloc(cols, (size_t)(w ? w : 1) * sizeof *cols);
    if (c2) cols = c2;
    double *v2 = sps__realloc(vals, (size_t)(w ? w : 1) * sizeof *vals);
    if (v2) vals = v2;
    out->nrows = nrows;
    out->ncols = ncols;
    out->nnz = (sps_idx)w;
    out->row_ptr = rp;
    out->col_idx = cols;
    out->val = vals;
    return SPS_OK;
}

sps_status sps__csr_check(sps_context *ctx, const sps_csr *A)
{
    if (A->nrows < 0 || A->ncols < 0 || A->nnz < 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "CSR: negative size");
    if (!A->row_ptr || (A->nnz > 0 && (!A->col_idx || !A->val)))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "CSR: NULL array");
    if (A->row_ptr[0] != 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "CSR: row_ptr[0] = %d, expected 0", A->row_ptr[0]);
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx b = A->row_ptr[r], e = A->row_ptr[r + 1];
        if (e < b || e > A->nnz)
            return sps__err(ctx, SPS_ERR_INVALID_ARG,
                            "CSR: row_ptr[%d] = %d after row_ptr[%d] = %d (nnz %d)", r + 1, e, r,
                            b, A->nnz);
        for (sps_idx p = b; p < e; p++) {
            sps_idx c = A->col_idx[p];
            if (c < 0 || c >= A->ncols)
                return sps__err(ctx, SPS_ERR_INVALID_ARG,
                                "CSR: row %d has column %d outside [0, %d)", r, c, A->ncols);
            if (p > b && c <= A->col_idx[p - 1])
                return sps__err(ctx, SPS_ERR_INVALID_ARG,
                                "CSR: row %d columns not strictly increasing (%d after %d)", r, c,
                                A->col_idx[p - 1]);
        }
    }
    if (A->row_ptr[A->nrows] != A->nnz)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "CSR: row_ptr[%d] = %d, expected nnz %d",
                        A->nrows, A->row_ptr[A->nrows], A->nnz);
    return SPS_OK;
}

void sps__row_stats(const sps_csr *A, sps_row_stats *s)
{
    memset(s, 0, sizeof *s);
    if (A->nrows == 0) return;
    s->min = SPS_IDX_MAX;
    double sum2 = 0.0;
    s->mean = (double)A->nnz / A->nrows;
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx len = A->row_ptr[r + 1] - A->row_ptr[r];
        if (len < s->min) s->min = len;
        if (len > s->max) s->max = len;
        if (len == 0) s->empty++;
        double d = len - s->mean;
        sum2 += d * d;
    }
    s->std = sqrt(sum2 / A->nrows);
}

void sps__csr_spmv(const sps_csr *A, double alpha, const double *x, double beta, double *y)
{
    for (sps_idx r = 0; r < A->nrows; r++) {
        double s = 0.0;
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++)
            s += A->val[p] * x[A->col_idx[p]];
        y[r] = beta == 0.0 ? alpha * s : alpha * s + beta * y[r];
    }
}
