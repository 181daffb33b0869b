/* SPDX-License-Identifier: MIT */
/* spsolve/core/analyze.c: matrix features (sps_matrix_analyze) and the two
 * structure helpers the formats share (segmented DIA slots, HYB width).
 *
 * Every feature is defined exactly in doc/features.md. Cost: a few O(nnz)
 * passes; memory: one transpose (O(nnz)) for the symmetry test, plus
 * O(rows + cols) markers. Nothing dense. */
#include "internal.h"

#include <math.h>
#include <string.h>

int64_t sps__segmented_dia_slots(const sps_csr *A, sps_idx seg)
{
    if (!A || seg <= 0) return -1;
    if (A->nrows == 0) return 0;
    /* mark[d + nrows - 1] = 1 + the last segment that saw offset d */
    size_t span = (size_t)A->nrows + (size_t)A->ncols;
    sps_idx *mark = sps__calloc(span, sizeof *mark);
    if (!mark) return -1;
    int64_t slots = 0;
    for (sps_idx s0 = 0, h = 1; s0 < A->nrows; s0 += seg, h++) {
        sps_idx s1 = A->nrows - s0 < seg ? A->nrows : s0 + seg;
        int64_t dig = 0;
        for (sps_idx r = s0; r < s1; r++)
            for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
                size_t k = (size_t)((int64_t)A->col_idx[p] - r + A->nrows - 1);
                if (mark[k] != h) {
                    mark[k] = h;
                    dig++;
                }
            }
        slots += dig * seg; /* the last segment is padded to seg rows */
        if (A->nrows - s0 <= seg) break;
    }
    sps__free(mark);
    return slots;
}

/* ELL width for HYB: the largest K such that at least a third of the rows
 * have K or more entries. This is CUSP's compute_optimal_entries_per_row
 * (cusplibrary/cusplibrary: cusp/detail/host/conversion_utils.h, after Bell &
 * Garland, SC'09) with relative_speed = 3: an ELL slot is taken to cost a
 * third of a COO entry, so column K pays for its nrows slots once a third of
 * them hold an entry. The rule bounds the ELL part by itself:
 * K * nrows <= 3 * #(rows of length >= K) * K <= 3 * nnz. CUSP's second rule
 * (no ELL column used by fewer than 4096 rows) is left out so that small
 * matrices split the way large ones do. Bisection on K: no allocation. */
sps_idx sps__hyb_width(const sps_csr *A)
{
    if (!A || A->nrows == 0) return 0;
    sps_idx maxlen = 0;
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx l = A->row_ptr[r + 1] - A->row_ptr[r];
        if (l > maxlen) maxlen = l;
    }
    sps_idx lo = 0, hi = maxlen; /* K = lo always qualifies */
    while (lo < hi) {
        sps_idx mid = lo + (hi - lo + 1) / 2;
        int64_t n = 0;
        for (sps_idx r = 0; r < A->nrows; r++) n += A->row_ptr[r + 1] - A->row_ptr[r] >= mid;
        if (3 * n >= (int64_t)A->nrows) lo = mid; else hi = mid - 1;
    }
    /* Explicit guard for the bound above (never binding with the 1/3 rule). */
    while (lo > 0 && (int64_t)lo * A->nrows > 3 * (int64_t)A->nnz) lo--;
    return lo;
}

/* Transpose (counting sort by column): rows of At come out column-sorted. */
static int transpose(const sps_csr *A, sps_csr *At)
{
    memset(At, 0, sizeof *At);
    At->row_ptr = sps__calloc((size_t)A->ncols + 1, sizeof *At->row_ptr);
    At->col_idx = sps__malloc(sps__mul_size((size_t)A->nnz, sizeof *At->col_idx));
    At->val = sps__malloc(sps__mul_size((size_t)A->nnz, sizeof *At->val));
    if (!At->row_ptr || !At->col_idx || !At->val) {
        sps__csr_free(At);
        return 0;
    }
    At->nrows = A->ncols;
    At->ncols = A->nrows;
    At->nnz = A->nnz;
    for (sps_idx p = 0; p < A->nnz; p++) At->row_ptr[A->col_idx[p] + 1]++;
    for (sps_idx c = 0; c < A->ncols; c++) At->row_ptr[c + 1] += At->row_ptr[c];
    for (sps_idx r = 0; r < A->nrows; r++)
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
            sps_idx q = At->row_ptr[A->col_idx[p]]++;
            At->col_idx[q] = r;
            At->val[q] = A->val[p];
        }
    for (sps_idx c = A->ncols; c > 0; c--) At->row_ptr[c] = At->row_ptr[c - 1];
    At->row_ptr[0] = 0;
    return 1;
}

/* Symmetry features of a square A: merge each row of A with the same row of
 * A' (both column-sorted). Sums of squares are scaled by max |a_ij| so that
 * huge or tiny values neither overflow nor underflow. */
static int symmetry(const sps_csr *A, sps_features *f)
{
    sps_csr At;
    if (!transpose(A, &At)) return 0;
    double amax = 0.0;
    for (sps_idx p = 0; p < A->nnz; p++)
        if (fabs(A->val[p]) > amax) amax = fabs(A->val[p]);
    double s = amax > 0 ? 1.0 / amax : 1.0;
    double na = 0.0, nd = 0.0;
    int pat = 1, num = 1;
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx p = A->row_ptr[r], pe = A->row_ptr[r + 1];
        sps_idx q = At.row_ptr[r], qe = At.row_ptr[r + 1];
        while (p < pe || q < qe) {
            double a = 0.0, b = 0.0;
            if (q >= qe || (p < pe && A->col_idx[p] < At.col_idx[q])) {
                a = A->val[p++];
                pat = 0;
            } else if (p >= pe || At.col_idx[q] < A->col_idx[p]) {
                b = At.val[q++];
                pat = 0;
            } else {
                a = A->val[p++];
                b = At.val[q++];
            }
            if (a != b) num = 0;
            na += (a * s) * (a * s);
            nd += (a * s - b * s) * (a * s - b * s);
        }
    }
    sps__csr_free(&At);
    f->pattern_symmetric = pat;
    f->symmetric = pat && num;
    f->asymmetry = na > 0 ? sqrt(nd) / sqrt(na) : 0.0;
    return 1;
}

sps_status sps_matrix_analyze(sps_context *ctx, const sps_matrix *M, sps_features *f)
{
    if (!M || !f) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_analyze: NULL argument");
    double t0 = sps__now_ms();
    const sps_csr *A = &M->A;
    memset(f, 0, sizeof *f);
    f->rows = A->nrows;
    f->cols = A->ncols;
    f->nnz = A->nnz;
    sps_idx n = A->nrows;

    sps_row_stats rs;
    sps__row_stats(A, &rs);
    f->row_min = rs.min;
    f->row_max = rs.max;
    f->empty_rows = rs.empty;
    f->row_mean = rs.mean;
    f->row_std = rs.std;

    /* Diagonal entries, dominance: one pass. */
    sps_idx nd = n < A->ncols ? n : A->ncols; /* rows that have a diagonal position */
    for (sps_idx r = 0; r < n; r++) {
        double d = 0.0, off = 0.0;
        int has = 0;
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
            if (A->col_idx[p] == r) {
                d = A->val[p];
                has = 1;
            } else {
                off += fabs(A->val[p]);
            }
        }
        if (r < nd && !has) f->missing_diagonal++;
        if (has && d == 0.0) f->zero_diagonal++;
        if (has && d < 0.0) f->negative_diagonal++;
        if (fabs(d) >= off) f->dominant_rows++;
        if (fabs(d) > off) f->diag_dominant = 1; /* provisional: "one strictly" */
    }
    f->diag_dominant = f->diag_dominant && f->dominant_rows == n;

    /* Distinct diagonals: a bitmap over offsets -(rows-1) .. cols-1. */
    size_t span = (size_t)A->nrows + (size_t)A->ncols;
    unsigned char *seen = sps__calloc(span ? span : 1, 1);
    if (!seen) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_matrix_analyze: out of memory");
    for (sps_idx r = 0; r < n; r++)
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
            size_t k = (size_t)((int64_t)A->col_idx[p] - r + n - 1);
            if (!seen[k]) {
                seen[k] = 1;
                f->diagonals++;
            }
        }
    sps__free(seen);
    int64_t dia_slots = (int64_t)f->diagonals * n;
    f->dia_fill = dia_slots ? (double)(dia_slots - A->nnz) / (double)dia_slots : 0.0;

    f->drm_slots = sps__segmented_dia_slots(A, 32);
    if (f->drm_slots < 0) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_matrix_analyze: out of memory");
    f->drm_fill = f->drm_slots ? (double)(f->drm_slots - A->nnz) / (double)f->drm_slots : 0.0;

    f->hyb_width = sps__hyb_width(A);
    int64_t ell = 0;
    for (sps_idx r = 0; r < n; r++) {
        sps_idx l = A->row_ptr[r + 1] - A->row_ptr[r];
        ell += l < f->hyb_width ? l : f->hyb_width;
    }
    int64_t ell_slots = (int64_t)f->hyb_width * n;
    f->ell_fill = ell_slots ? (double)(ell_slots - ell) / (double)ell_slots : 0.0;
    f->hyb_coo = A->nnz - ell;

    if (A->nrows == A->ncols) {
        if (!symmetry(A, f))
            return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_matrix_analyze: out of memory");
    } else {
        f->asymmetry = NAN; /* A - A' is undefined for a rectangular matrix */
    }
    f->analyze_ms = sps__now_ms() - t0;
    return SPS_OK;
}
