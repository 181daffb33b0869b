/* SPDX-License-Identifier: MIT */
/* spsolve/core/analyze.c: matrix features (sps_matrix_analyze): the host
 * reference, and the dispatch to the device analysis on a GPU context.
 *
 * Every feature is defined exactly in doc/features.md. The host analysis is
 * two passes: one over the row pointer (row lengths, the HYB histogram) and
 * one fused pass over the entries (diagonal entries and dominance, distinct
 * diagonals, distinct diagonals per segment, and the symmetry merge). The
 * symmetry merge needs no transpose: each row j keeps a cursor into its
 * lower triangle, and since the rows i < j that hold an entry (i, j) come in
 * increasing order, the cursor of row j only moves forward. Memory: markers
 * of m + n integers and m cursors. Nothing dense. The format rules (HYB
 * width, DRM slots) live in spmv/rules.c. */
#include "spmv/rules.h"
#include "gpu.h"
#include "internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What the entry pass accumulates. */
typedef struct pass_acc {
    int64_t diagonals, drm_slots;
    sps_idx missing, zero, negative, dominant;
    int strict;            /* some row strictly dominant */
    double na, nd;         /* ||A||_F^2 and ||A - A'||_F^2 (fused path: unscaled) */
    double amax;           /* max |a_ij| (fused path) */
    int pat, num;          /* pattern / values symmetric so far */
    int64_t far;           /* upper entries farther than CURSOR_BAND from the diagonal */
    int gave_up;           /* the cursor merge stopped: symmetry from the transpose */
} pass_acc;

/* Row lengths: min, max, empty rows, sum of squared lengths (exact). */
typedef struct len_stats {
    sps_idx min, max, empty;
    int64_t sum2;
} len_stats;

static void length_stats(const sps_csr *A, len_stats *s)
{
    memset(s, 0, sizeof *s);
    if (A->nrows == 0) return;
    s->min = SPS_IDX_MAX;
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx len = A->row_ptr[r + 1] - A->row_ptr[r];
        if (len < s->min) s->min = len;
        if (len > s->max) s->max = len;
        s->empty += len == 0;
        s->sum2 += (int64_t)len * len;
    }
}

/* The cursors of the fused symmetry merge stay in cache while they span at
 * most this many rows (about 130 bytes each). An entry farther from the
 * diagonal costs cache misses; a few are cheap (a banded matrix with
 * scattered points), but once more than 1/16 of the entries are far, the
 * merge gives up and the symmetry is taken from a transpose instead. */
#define CURSOR_BAND ((int64_t)1 << 17)

/* Unscaled sums of squares are exact multiples of the scaled ones while
 * max |a_ij| lies in [2^-400, 2^400] (no term overflows, none that matters
 * underflows); outside it the transpose path rescales. */
static int unscaled_ok(double amax)
{
    return amax == 0.0 || (amax >= 0x1p-400 && amax <= 0x1p400);
}

/* Population standard deviation of the row lengths from exact integer sums:
 * var = (m * sum len^2 - nnz^2) / m^2, the numerator in 128 bits. The device
 * analysis uses the same formula, so the two agree bitwise. */
#if defined(__SIZEOF_INT128__)
__extension__ typedef __int128 sps_i128;
#endif

double sps__row_std_exact(sps_idx m, int64_t nnz, int64_t sum2)
{
    if (m <= 0) return 0.0;
#if defined(__SIZEOF_INT128__)
    sps_i128 num = (sps_i128)m * sum2 - (sps_i128)nnz * nnz;
    double v = (double)num / ((double)m * (double)m);
#else
    long double num = (long double)m * sum2 - (long double)nnz * nnz;
    double v = (double)(num / ((long double)m * m));
#endif
    return v > 0 ? sqrt(v) : 0.0;
}

/* Power-of-two scale 1/2^e with 2^(e-1) <= amax < 2^e: scaling by it is
 * exact and keeps the sums of squares from overflowing or underflowing. */
double sps__asym_scale(double amax)
{
    if (!(amax > 0) || !isfinite(amax)) return 1.0;
    int e;
    frexp(amax, &e);
    return ldexp(1.0, -e);
}

static double max_abs(const double *v, sps_idx n)
{
    double m = 0.0;
    for (sps_idx p = 0; p < n; p++) {
        double a = fabs(v[p]);
        m = a > m ? a : m;
    }
    return m;
}

/* Row j's cursor *q walks its lower triangle: entries (j, c) with c < upto
 * that no row c matched are unmatched, each worth 2 a^2 in ||A - A'||^2. */
static void flush_lower(const sps_csr *A, sps_idx *q, sps_idx qe, sps_idx upto, double s,
                        pass_acc *a)
{
    sps_idx k = *q;
    while (k < qe && A->col_idx[k] < upto) {
        double x = A->val[k++] * s;
        a->nd += 2.0 * x * x;
        a->pat = 0;
    }
    *q = k;
}

/* Upper entry (r, c) with value v: find (c, r) at row c's cursor. */
static void match_upper(const sps_csr *A, sps_idx *pos, sps_idx r, sps_idx c, double v,
                        pass_acc *a)
{
    sps_idx qe = A->row_ptr[c + 1];
    flush_lower(A, &pos[c], qe, r, 1.0, a);
    sps_idx q = pos[c];
    double x = v;
    if (q < qe && A->col_idx[q] == r) {
        double b = A->val[q];
        pos[c] = q + 1;
        if (v != b) a->num = 0;
        double d = x - b;
        a->nd += 2.0 * d * d;
    } else {
        a->pat = 0;
        a->nd += 2.0 * x * x;
    }
}

/* Diagonal entry and dominance of one row (entries in column order, so the
 * off-diagonal sum is the same on every path). */
static void row_diagonal(const sps_csr *A, sps_idx r, sps_idx ndiag, pass_acc *a)
{
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
    a->missing += r < ndiag && !has;
    a->zero += has && d == 0.0;
    a->negative += has && d < 0.0;
    a->dominant += fabs(d) >= off;
    a->strict |= fabs(d) > off;
}

/* Symmetry by cursors: the scaled sums, and whether to stop (too many far
 * entries so far, after the rows up to `done` entries). */
static void sym_entry(const sps_csr *A, sps_idx *pos, sps_idx r, sps_idx c, double x, pass_acc *a)
{
    double ax = fabs(x);
    a->amax = ax > a->amax ? ax : a->amax;
    a->na += x * x;
    if (c > r) {
        a->far += (int64_t)c - r > CURSOR_BAND;
        match_upper(A, pos, r, c, x, a);
    }
}

/* The entry pass: diagonals (mark[k] == 0: offset never seen), segment
 * diagonals (mark[k] == segment + 1), symmetry by cursors when pos != NULL
 * (until a->gave_up). */
static void entry_pass(const sps_csr *A, sps_idx *mark, sps_idx *pos, pass_acc *a)
{
    const sps_idx m = A->nrows, ndiag = m < A->ncols ? m : A->ncols;
    for (sps_idx s0 = 0, h = 1; s0 < m; s0 += SPS_DRM_SEG_ROWS, h++) {
        sps_idx s1 = m - s0 < SPS_DRM_SEG_ROWS ? m : s0 + SPS_DRM_SEG_ROWS;
        int64_t dig = 0;
        for (sps_idx r = s0; r < s1; r++) {
            row_diagonal(A, r, ndiag, a);
            for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
                sps_idx c = A->col_idx[p];
                size_t k = (size_t)((int64_t)c - r + m - 1);
                if (mark[k] != h) {
                    a->diagonals += mark[k] == 0;
                    mark[k] = h;
                    dig++;
                }
                if (pos) sym_entry(A, pos, r, c, A->val[p], a);
            }
        }
        a->drm_slots += sps__seg_slots(dig, SPS_DRM_SEG_ROWS);
        if (pos && a->far > 4096 + A->row_ptr[s1] / 16) {
            pos = NULL;
            a->gave_up = 1;
        }
    }
    if (pos) /* lower entries no row asked for */
        for (sps_idx j = 0; j < m; j++) flush_lower(A, &pos[j], A->row_ptr[j + 1], j, 1.0, a);
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

/* Symmetry of a square A for wide bands (the cursors would miss the cache):
 * merge each row of A with the same row of A', sums scaled by s. */
static int symmetry_transpose(const sps_csr *A, double s, pass_acc *a)
{
    sps_csr At;
    if (!transpose(A, &At)) return 0;
    a->na = a->nd = 0.0;
    a->pat = a->num = 1;
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx p = A->row_ptr[r], pe = A->row_ptr[r + 1];
        sps_idx q = At.row_ptr[r], qe = At.row_ptr[r + 1];
        while (p < pe || q < qe) {
            double x = 0.0, y = 0.0;
            if (q >= qe || (p < pe && A->col_idx[p] < At.col_idx[q])) {
                x = A->val[p++];
                a->pat = 0;
            } else if (p >= pe || At.col_idx[q] < A->col_idx[p]) {
                y = At.val[q++];
                a->pat = 0;
            } else {
                x = A->val[p++];
                y = At.val[q++];
            }
            if (x != y) a->num = 0;
            a->na += (x * s) * (x * s);
            a->nd += (x * s - y * s) * (x * s - y * s);
        }
    }
    sps__csr_free(&At);
    return 1;
}

typedef struct hist_view {
    const int64_t *ge; /* ge[K] = rows of length >= K, K = 0 .. kmax */
} hist_view;

static int64_t hist_rows_ge(const void *user, sps_idx K)
{
    return ((const hist_view *)user)->ge[K];
}

void sps__features_hyb(sps_features *f, const int64_t *ge, sps_idx kmax)
{
    hist_view hv = {ge};
    f->hyb_width = sps__hyb_width_rule(hist_rows_ge, &hv, kmax, f->rows, f->nnz);
    /* ell = sum_i min(len_i, K) = sum_{k=1..K} #(len >= k) */
    int64_t ell = 0;
    for (sps_idx k = 1; k <= f->hyb_width; k++) ell += ge[k];
    int64_t ell_slots = (int64_t)f->hyb_width * f->rows;
    f->ell_fill = ell_slots ? (double)(ell_slots - ell) / (double)ell_slots : 0.0;
    f->hyb_coo = f->nnz - ell;
}

/* HYB from a histogram of row lengths clamped at kmax. */
static int hyb_features(const sps_csr *A, sps_features *f)
{
    sps_idx kmax = sps__hyb_kmax(A->nrows, A->nnz, f->row_max);
    int64_t *ge = sps__calloc((size_t)kmax + 2, sizeof *ge);
    if (!ge) return 0;
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx len = A->row_ptr[r + 1] - A->row_ptr[r];
        ge[len < kmax ? len : kmax]++;
    }
    for (sps_idx k = kmax; k > 0; k--) ge[k - 1] += ge[k]; /* histogram -> rows >= k */
    sps__features_hyb(f, ge, kmax);
    sps__free(ge);
    return 1;
}

void sps__features_finish(sps_features *f)
{
    int64_t dia_slots = (int64_t)f->diagonals * f->rows;
    f->dia_fill = dia_slots ? (double)(dia_slots - f->nnz) / (double)dia_slots : 0.0;
    f->drm_fill = f->drm_slots ? (double)(f->drm_slots - f->nnz) / (double)f->drm_slots : 0.0;
    f->row_mean = f->rows ? (double)f->nnz / f->rows : 0.0;
}

static void set_symmetry(sps_features *f, int pat, int num, double na, double nd)
{
    f->pattern_symmetric = pat;
    f->symmetric = pat && num;
    f->asymmetry = na > 0 ? sqrt(nd) / sqrt(na) : 0.0;
}

static void set_counts(const pass_acc *a, sps_idx m, sps_features *f)
{
    f->diagonals = (sps_idx)a->diagonals;
    f->drm_slots = a->drm_slots;
    f->missing_diagonal = a->missing;
    f->zero_diagonal = a->zero;
    f->negative_diagonal = a->negative;
    f->dominant_rows = a->dominant;
    f->diag_dominant = a->strict && a->dominant == m;
}

static sps_status analyze_host(sps_context *ctx, const sps_csr *A, sps_features *f)
{
    len_stats ls;
    length_stats(A, &ls);
    f->row_min = ls.min;
    f->row_max = ls.max;
    f->empty_rows = ls.empty;
    f->row_std = sps__row_std_exact(A->nrows, A->nnz, ls.sum2);
    int square = A->nrows == A->ncols, cursors = square;
    size_t span = (size_t)A->nrows + (size_t)A->ncols;
    sps_idx *mark = sps__calloc(span ? span : 1, sizeof *mark);
    sps_idx *pos = cursors ? sps__malloc(((size_t)A->nrows + 1) * sizeof *pos) : NULL;
    int ok = mark && (!cursors || pos) && hyb_features(A, f);
    pass_acc a;
    memset(&a, 0, sizeof a);
    a.pat = a.num = 1;
    if (ok) {
        if (pos) memcpy(pos, A->row_ptr, ((size_t)A->nrows + 1) * sizeof *pos);
        entry_pass(A, mark, pos, &a);
    }
    sps__free(mark);
    sps__free(pos);
    if (ok && square && (a.gave_up || !unscaled_ok(a.amax)))
        ok = symmetry_transpose(A, sps__asym_scale(max_abs(A->val, A->nnz)), &a);
    if (!ok) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_matrix_analyze: out of memory");
    set_counts(&a, A->nrows, f);
    if (square) set_symmetry(f, a.pat, a.num, a.na, a.nd);
    else f->asymmetry = NAN; /* A - A' is undefined for a rectangular matrix */
    sps__features_finish(f);
    return SPS_OK;
}

/* On a GPU context the device analyzes from SPS_DEVICE_MIN_NNZ entries
 * (internal.h). Below, the host's pass costs 5-12 ns an entry (lund_a's
 * 2,449 entries 0.02 ms, Si2's 17,801 0.12 ms on the 2-core CI machine)
 * against the device's fixed cost, its launches, the read-back and the first
 * load of the kernels (H100, a fresh process: analyze_device_ms 0.36-0.45 on
 * matrices of 2,449 to 19,593 entries, plus the upload, which the operator's
 * build then does instead; doc/features.md). SPS_ANALYZE=host keeps every
 * analysis on the host, SPS_ANALYZE=device puts every one of a GPU context
 * on the device. */
sps_status sps_matrix_analyze(sps_context *ctx, const sps_matrix *M, sps_features *f)
{
    if (!M || !f) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_analyze: NULL argument");
    double t0 = sps__now_ms();
    const sps_csr *A = &M->A;
    memset(f, 0, sizeof *f);
    f->rows = A->nrows;
    f->cols = A->ncols;
    f->nnz = A->nnz;
    sps_status st;
    if (sps__pass_on_device(ctx, A->nnz, "SPS_ANALYZE")) {
#if SPS_HAVE_CUDA
        st = sps__analyze_device(ctx, M, f);
#else
        st = sps__err(ctx, SPS_ERR_NOT_COMPILED, "sps_matrix_analyze: built without CUDA");
#endif
    } else {
        st = analyze_host(ctx, A, f);
    }
    f->analyze_ms = sps__now_ms() - t0;
    return st;
}
