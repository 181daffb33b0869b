/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/rules.c: HYB's ELL width rule and DRM's segmented slot count
 * (the format rules the analysis reports; see spmv/rules.h) */
#include "rules.h"

/* ELL width for HYB: the largest K such that at least a third of the rows
 * have K or more entries. This is CUSP's compute_optimal_entries_per_row
 * (cusplibrary/cusplibrary: cusp/detail/host/conversion_utils.h, after Bell &
 * Garland, SC'09) with relative_speed = 3: an ELL slot is taken to cost a
 * third of a COO entry, so column K pays for its nrows slots once a third of
 * them hold an entry. The rule bounds the ELL part by itself:
 * K * nrows <= 3 * #(rows of length >= K) * K <= 3 * nnz. CUSP's second rule
 * (no ELL column used by fewer than 4096 rows) is left out so that small
 * matrices split the way large ones do. */
sps_idx sps__hyb_width_rule(sps_rows_ge_fn rows_ge, const void *user, sps_idx kmax,
                            sps_idx nrows, int64_t nnz)
{
    if (nrows <= 0 || kmax <= 0) return 0;
    sps_idx lo = 0, hi = kmax; /* K = lo always qualifies */
    while (lo < hi) {
        sps_idx mid = lo + (hi - lo + 1) / 2;
        if (3 * rows_ge(user, mid) >= (int64_t)nrows) lo = mid; else hi = mid - 1;
    }
    /* Explicit guard for the bound above (never binding with the 1/3 rule). */
    while (lo > 0 && (int64_t)lo * nrows > 3 * nnz) lo--;
    return lo;
}

sps_idx sps__hyb_kmax(sps_idx nrows, int64_t nnz, sps_idx row_max)
{
    if (nrows <= 0) return 0;
    int64_t k = 3 * nnz / nrows;
    return k < row_max ? (sps_idx)k : row_max;
}

static int64_t scan_rows_ge(const void *user, sps_idx K)
{
    const sps_csr *A = user;
    int64_t n = 0;
    for (sps_idx r = 0; r < A->nrows; r++) n += A->row_ptr[r + 1] - A->row_ptr[r] >= K;
    return n;
}

/* The CSR form (spmv/hyb.c): a row scan per bisection step, no allocation. */
sps_idx sps__hyb_width(const sps_csr *A)
{
    if (!A || A->nrows == 0) return 0;
    sps_idx maxlen = 0;
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx l = A->row_ptr[r + 1] - A->row_ptr[r];
        if (l > maxlen) maxlen = l;
    }
    return sps__hyb_width_rule(scan_rows_ge, A, sps__hyb_kmax(A->nrows, A->nnz, maxlen), A->nrows,
                               A->nnz);
}

int64_t sps__segmented_dia_slots(const sps_csr *A, sps_idx seg)
{
    return sps__segmented_dia_slots_diags(A, seg, NULL);
}

int64_t sps__segmented_dia_slots_diags(const sps_csr *A, sps_idx seg, sps_idx *diagonals)
{
    if (diagonals) *diagonals = 0;
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
                    if (diagonals && mark[k] == 0) ++*diagonals;
                    mark[k] = h;
                    dig++;
                }
            }
        slots += sps__seg_slots(dig, seg);
        if (A->nrows - s0 <= seg) break;
    }
    sps__free(mark);
    return slots;
}
