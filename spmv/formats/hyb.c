/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/hyb.c: the hyb backend (ELL of a chosen width + a row-grouped CSR tail): conversion, host apply, table */
#include "csr_fmt.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SPS_DECLARE_GPU_BACKEND(sps_hyb)

static sps_status param(sps_context *ctx, void *user, const char *key, const char *value)
{
    long *width = user;
    if (strcmp(key, "width") == 0) {
        char *end = NULL;
        long v = strtol(value, &end, 10);
        if (*value && *end == 0 && v >= 0 && v <= SPS_IDX_MAX) {
            *width = v;
            return SPS_OK;
        }
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "hyb: width=%s: the ELL width must be an integer >= 0", value);
    }
    return sps__err(ctx, SPS_ERR_INVALID_ARG, "hyb: unknown parameter '%s' (known: width=K)", key);
}

static void free_fmt(sps_fmt *f)
{
    sps_fmt_hyb *h = (sps_fmt_hyb *)f;
    if (!h) return;
    sps__free(h->ell_col);
    sps__free(h->ell_val);
    sps__csr_free(&h->tail);
    sps__free(h->tail_rows);
    sps__free(h->row_ptr);
    sps__free(h);
}

/* Fill the ELL and tail values of h from CSR values (same pattern). */
static void scatter_values(sps_fmt_hyb *h, const double *v)
{
    sps_idx t = 0;
    for (sps_idx r = 0; r < h->nrows; r++) {
        sps_idx p = h->row_ptr[r], len = h->row_ptr[r + 1] - p;
        sps_idx in_ell = len < h->K ? len : h->K;
        for (sps_idx k = 0; k < in_ell; k++) h->ell_val[k * h->pitch + r] = v[p + k];
        if (len > h->K) {
            memcpy(h->tail.val + h->tail.row_ptr[t], v + p + h->K,
                   (size_t)(len - h->K) * sizeof *v);
            t++;
        }
    }
}

sps_status sps__hyb_build(sps_context *ctx, const sps_csr *A, sps_idx K, sps_fmt_hyb *h,
                          int64_t *ell_col_loads)
{
    h->nrows = A->nrows;
    h->ncols = A->ncols;
    h->nnz = A->nnz;
    h->K = K;
    h->pitch = ((int64_t)A->nrows + 31) / 32 * 32;
    sps_idx ntail = 0, coo = 0;
    *ell_col_loads = 0;
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx len = A->row_ptr[r + 1] - A->row_ptr[r];
        if (len > K) {
            ntail++;
            coo += len - K;
        }
        *ell_col_loads += len < K ? len + 1 : K; /* the kernel stops at the first -1 */
    }
    size_t slots = sps__mul_size((size_t)K, (size_t)h->pitch);
    h->ell_col = sps__malloc(sps__mul_size(slots, sizeof *h->ell_col));
    h->ell_val = sps__malloc(sps__mul_size(slots, sizeof *h->ell_val));
    h->tail_rows = sps__malloc((size_t)ntail * sizeof *h->tail_rows);
    h->row_ptr = sps__malloc(((size_t)A->nrows + 1) * sizeof *h->row_ptr);
    if (!h->ell_col || !h->ell_val || !h->tail_rows || !h->row_ptr)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "hyb: out of memory for ELL width %d x %d rows",
                        K, A->nrows);
    sps_status st = sps__csr_alloc(ctx, &h->tail, ntail, A->ncols, coo);
    if (st != SPS_OK) return st;
    memcpy(h->row_ptr, A->row_ptr, ((size_t)A->nrows + 1) * sizeof *h->row_ptr);

    for (size_t s = 0; s < slots; s++) h->ell_col[s] = -1;
    memset(h->ell_val, 0, slots * sizeof *h->ell_val);
    sps_idx t = 0;
    h->tail.row_ptr[0] = 0;
    for (sps_idx r = 0; r < A->nrows; r++) {
        sps_idx p = A->row_ptr[r], len = A->row_ptr[r + 1] - p;
        sps_idx in_ell = len < K ? len : K;
        for (sps_idx k = 0; k < in_ell; k++) h->ell_col[k * h->pitch + r] = A->col_idx[p + k];
        if (len > K) {
            sps_idx q = h->tail.row_ptr[t];
            memcpy(h->tail.col_idx + q, A->col_idx + p + K, (size_t)(len - K) * sizeof(sps_idx));
            h->tail_rows[t] = r;
            h->tail.row_ptr[++t] = q + (len - K);
        }
    }
    scatter_values(h, A->val);
    return SPS_OK;
}

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    *out = NULL;
    long forced = -1;
    sps_status s = sps__parse_params(ctx, params, param, &forced);
    if (s != SPS_OK) return s;
    sps_row_stats rs;
    sps__row_stats(A, &rs);
    sps_idx K = forced >= 0 ? (sps_idx)forced : sps__hyb_width(A);
    const char *why = forced >= 0 ? "forced" : "from the row-length histogram";
    if (K > rs.max) {
        /* Columns past the longest row would be padding only. */
        K = rs.max;
        why = forced >= 0 ? "forced, clamped to the longest row" : "clamped to the longest row";
    }
    if (K < 0) K = 0;
    /* An absurd forced width (one long row) would allocate padding only. */
    int64_t ell_slots = (int64_t)K * (((int64_t)A->nrows + 31) / 32 * 32);
    if (ell_slots > 16 * (int64_t)A->nnz + ((int64_t)1 << 20))
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "hyb: ELL width %d would store %lld slots for %d entries; "
                        "choose a smaller width", K, (long long)ell_slots, A->nnz);

    sps_fmt_hyb *h = sps__calloc(1, sizeof *h);
    if (!h) return sps__err(ctx, SPS_ERR_NO_MEMORY, "hyb: out of memory");
    int64_t ell_col_loads = 0;
    s = sps__hyb_build(ctx, A, K, h, &ell_col_loads);
    if (s != SPS_OK) {
        free_fmt((sps_fmt *)h);
        return s;
    }

    /* Bytes model (doc/spmv.md): every array the kernels read, once; x once;
     * y written once. ELL: the column index up to and including a short row's
     * first -1 and the value per entry. Tail (csr-vector over the tail rows,
     * beta = 1): the row number and both row pointers per tail row, column and
     * value per entry, and the tail rows of y read and written again. */
    int64_t coo = h->tail.nnz, ntr = h->tail.nrows, ell_entries = (int64_t)A->nnz - coo;
    st->bytes_per_spmv = 4.0 * ell_col_loads + 8.0 * ell_entries + (4.0 + 8.0 + 16.0) * ntr +
                         12.0 * coo + 8.0 * A->ncols + 8.0 * A->nrows;
    st->value_bytes = 8.0 * ell_entries + 16.0 * ntr + 8.0 * coo + 8.0 * A->ncols + 8.0 * A->nrows;
    st->ell_width = K;
    st->coo_entries = coo;
    st->slots = (int64_t)K * A->nrows + coo;
    st->fill = st->slots > 0 ? (double)(st->slots - A->nnz) / st->slots : 0.0;
    snprintf(st->detail, sizeof st->detail,
             "ELL width %d (%s), ELL fill %.3f; tail: %d rows, %d entries",
             K, why, (int64_t)K * A->nrows > 0
                         ? (double)((int64_t)K * A->nrows - ell_entries) / ((int64_t)K * A->nrows)
                         : 0.0,
             (int)ntr, (int)coo);
    *out = (sps_fmt *)h;
    return SPS_OK;
}

static void apply_host(const sps_fmt *f, double alpha, const double *x, double beta, double *y)
{
    const sps_fmt_hyb *h = (const sps_fmt_hyb *)f;
    /* ELL part, as the ELL kernel: one row at a time, stop at the first -1. */
    for (sps_idx r = 0; r < h->nrows; r++) {
        double s = 0.0;
        for (sps_idx k = 0; k < h->K; k++) {
            int64_t p = k * h->pitch + r;
            sps_idx c = h->ell_col[p];
            if (c < 0) break;
            s += h->ell_val[p] * x[c];
        }
        y[r] = beta == 0.0 ? alpha * s : alpha * s + beta * y[r];
    }
    /* Tail, as the second kernel: y[r] = alpha * tail_sum + y[r]. */
    for (sps_idx t = 0; t < h->tail.nrows; t++) {
        double s = 0.0;
        for (sps_idx p = h->tail.row_ptr[t]; p < h->tail.row_ptr[t + 1]; p++)
            s += h->tail.val[p] * x[h->tail.col_idx[p]];
        y[h->tail_rows[t]] += alpha * s;
    }
}

static sps_status update_host(sps_context *ctx, sps_fmt *f, const double *values)
{
    (void)ctx;
    scatter_values((sps_fmt_hyb *)f, values);
    return SPS_OK;
}

const sps_backend sps_backend_hyb = {
    .name = "hyb",
    .summary = "ELL up to a width from the row-length histogram, the rest in a row-grouped CSR tail",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_NEEDS_CONVERT | SPS_CAP_SINGLE,
    .convert = convert,
    .apply_host = apply_host,
    .update_host = update_host,
    .free_fmt = free_fmt,
    SPS_GPU_ENTRIES(sps_hyb),
};
