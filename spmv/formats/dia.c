/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/dia.c: the dia backend: plain DIA over the whole matrix
 * (Bell & Garland), refused when the zero fill would pass a limit.
 *
 * Storage: the sorted distinct offsets, and ndiag x nrows values with
 * val[i * nrows + row] (consecutive rows consecutive in memory). It is the
 * diag_common layout with one segment of nrows rows.
 * Parameter: maxfill=F (0 <= F <= 1, default 0.9): refuse when
 * (slots - nnz) / slots > F. More than 2^31-1 slots is always refused. */
#include "diag_common.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SPS_DECLARE_GPU_BACKEND(sps_dia)

static sps_status parse_one(sps_context *ctx, void *user, const char *key, const char *value)
{
    double *maxfill = user;
    if (strcmp(key, "maxfill") == 0) {
        char *end = NULL;
        double v = strtod(value, &end);
        if (*value && !*end && v >= 0.0 && v <= 1.0) {
            *maxfill = v;
            return SPS_OK;
        }
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "dia: maxfill=%s: expected a number in [0, 1]",
                        value);
    }
    return sps__err(ctx, SPS_ERR_INVALID_ARG, "dia: unknown parameter '%s' (known: maxfill=F)",
                    key);
}

static void free_fmt(sps_fmt *fmt)
{
    sps_fmt_dia *f = (sps_fmt_dia *)fmt;
    if (!f) return;
    sps__free(f->off);
    sps__free(f->val);
    sps__free(f->map);
    sps__free(f);
}

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    *out = NULL;
    double maxfill = 0.9;
    sps_status s = sps__parse_params(ctx, params, parse_one, &maxfill);
    if (s != SPS_OK) return s;

    sps_diag_segs sg;
    s = sps__diag_scan(ctx, A, A->nrows > 0 ? A->nrows : 1, &sg);
    if (s != SPS_OK) return s;
    const sps_idx ndiag = sg.nseg ? sg.dnum[sg.nseg] : 0;
    const int64_t slots = (int64_t)ndiag * A->nrows;
    const double fill = slots ? (double)(slots - A->nnz) / (double)slots : 0.0;
    if (slots > SPS_IDX_MAX || fill > maxfill) {
        char b[32];
        sps__diag_count_str(slots, b, sizeof b);
        sps__diag_segs_free(&sg);
        if (slots > SPS_IDX_MAX)
            return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                            "dia: %d diagonals would store %s slots for %d nonzeros (more than "
                            "2^31-1 slots)", ndiag, b, A->nnz);
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "dia: %d diagonals would store %s slots for %d nonzeros (fill %.1f%%, "
                        "limit %.0f%%)", ndiag, b, A->nnz, 100.0 * fill, 100.0 * maxfill);
    }

    sps_fmt_dia *f = sps__calloc(1, sizeof *f);
    if (f) {
        f->off = sps__malloc(sps__mul_size((size_t)ndiag, sizeof *f->off));
        f->val = sps__calloc((size_t)slots, sizeof *f->val);
        f->map = sps__malloc(sps__mul_size((size_t)A->nnz, sizeof *f->map));
    }
    if (!f || !f->off || !f->val || !f->map) {
        s = sps__err(ctx, SPS_ERR_NO_MEMORY, "dia: out of memory for %lld slots", (long long)slots);
        goto fail;
    }
    f->nrows = A->nrows;
    f->ncols = A->ncols;
    f->nnz = A->nnz;
    f->ndiag = ndiag;
    f->index0 = 0;
    s = sps__diag_layout(ctx, A, &sg, &f->index0, f->dnum, f->off, f->map, f->val);
    if (s != SPS_OK) goto fail;
    f->dnum[0] = 0;
    f->dnum[1] = ndiag;
    sps__diag_segs_free(&sg);

    st->slots = slots;
    st->fill = fill;
    st->blocks = 0;
    st->value_bytes = 8.0 * (double)slots + 8.0 * A->ncols + 8.0 * A->nrows;
    st->bytes_per_spmv = st->value_bytes + 4.0 * ndiag;
    char b[32];
    sps__diag_count_str(slots, b, sizeof b);
    snprintf(st->detail, sizeof st->detail, "%d diagonals, %s slots (fill %.1f%%, limit %.0f%%)",
             ndiag, b, 100.0 * fill, 100.0 * maxfill);
    *out = (sps_fmt *)f;
    return SPS_OK;
fail:
    sps__diag_segs_free(&sg);
    free_fmt((sps_fmt *)f);
    return s;
}

static void apply_host(const sps_fmt *fmt, double alpha, const double *x, double beta, double *y)
{
    const sps_fmt_dia *f = (const sps_fmt_dia *)fmt;
    const sps_diag_view v = {f->nrows, f->ncols, f->nrows, f->nrows > 0 ? 1 : 0, &f->index0,
                             f->dnum, f->off, f->val};
    sps__diag_apply_host(&v, alpha, x, beta, y);
}

static sps_status update_host(sps_context *ctx, sps_fmt *fmt, const double *values)
{
    (void)ctx;
    sps_fmt_dia *f = (sps_fmt_dia *)fmt;
    sps__diag_update(f->map, f->nnz, values, f->val);
    f->pending = values; /* scattered on the device too (update_dev) */
    return SPS_OK;
}

const sps_backend sps_backend_dia = {
    .name = "dia",
    .summary = "DIA (Bell & Garland): whole diagonals; refused past a zero-fill limit "
               "(dia:maxfill=F, default 0.9)",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_NEEDS_CONVERT | SPS_CAP_SINGLE,
    .convert = convert,
    .apply_host = apply_host,
    .update_host = update_host,
    .free_fmt = free_fmt,
    SPS_GPU_ENTRIES(sps_dia),
};
