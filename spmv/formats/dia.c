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

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SPS_DECLARE_GPU_BACKEND(sps_dia)
#if SPS_HAVE_CUDA
/* A device-built val and map, brought to the host for apply_host (dia.cu). */
sps_status sps_dia_fetch(sps_context *ctx, sps_fmt *f, const void *dev);
/* backend.h dev_rows: the device diagonals (dia.cu). */
int sps_dia_dev_rows(const void *dev, sps_dev_rows *out);
/* The fused "SpMV plus dot" (backend.h apply_dot; dia.cu, doc/solvers.md). */
sps_status sps_dia_apply_dot(sps_context *ctx, void *dev, const double *x, double *y, double *part,
                            int maxparts, int *nparts);
/* The block product (backend.h apply_multi; dia.cu, doc/spmm.md). */
sps_status sps_dia_apply_multi(sps_context *ctx, void *dev, int k, double alpha, const double *X,
                              int64_t ldx, double beta, double *Y, int64_t ldy);
#endif

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
#if SPS_HAVE_CUDA
    sps__dfree(f->dval);
    sps__dfree(f->dmap);
#endif
    sps__free(f);
}

/* The distinct offsets, ascending: a one-segment scan on the host, or the
 * device's flags. *off is owned by the caller. */
static sps_status offsets(sps_context *ctx, const sps_csr *A, const struct sps_dcsr *dsrc,
                          sps_idx **off, sps_idx *ndiag)
{
#if SPS_HAVE_CUDA
    if (dsrc) return sps__dia_offsets_dev(ctx, dsrc, off, ndiag);
#else
    (void)dsrc;
#endif
    sps_diag_segs sg;
    sps_status s = sps__diag_scan(ctx, A, A->nrows > 0 ? A->nrows : 1, &sg);
    if (s != SPS_OK) return s;
    *ndiag = sg.nseg ? sg.dnum[sg.nseg] : 0;
    *off = sg.off; /* one segment: its offsets are the matrix's */
    sg.off = NULL;
    sps__diag_segs_free(&sg);
    return SPS_OK;
}

/* Values and map: on the host (sps__diag_layout with one segment) or on the
 * device. f->off holds the offsets. */
static sps_status layout(sps_context *ctx, const sps_csr *A, const struct sps_dcsr *dsrc,
                         sps_fmt_dia *f)
{
#if SPS_HAVE_CUDA
    if (dsrc) return sps__dia_scatter_dev(ctx, dsrc, f->off, f->ndiag, (double **)&f->dval, &f->dmap);
#else
    (void)dsrc;
#endif
    sps_idx dn[2] = {0, f->ndiag};
    sps_diag_segs sg = {A->nrows > 0 ? A->nrows : 1, A->nrows > 0 ? 1 : 0, dn, f->off};
    f->val = sps__calloc((size_t)f->ndiag * (size_t)f->nrows, sizeof *f->val);
    f->map = sps__malloc(sps__mul_size((size_t)A->nnz, sizeof *f->map));
    if (!f->val || !f->map)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "dia: out of memory for %lld slots",
                        (long long)f->ndiag * f->nrows);
    sps_idx *off2 = sps__malloc(((size_t)f->ndiag + 1) * sizeof *off2);
    if (!off2) return sps__err(ctx, SPS_ERR_NO_MEMORY, "dia: out of memory");
    sps_status s = sps__diag_layout(ctx, A, &sg, &f->index0, f->dnum, off2, f->map, f->val);
    sps__free(off2); /* the same offsets again, in the one slot's order */
    return s;
}

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    *out = NULL;
    double maxfill = 0.9;
    sps_status s = sps__parse_params(ctx, params, parse_one, &maxfill);
    if (s != SPS_OK) return s;

    const struct sps_dcsr *dsrc = sps__diag_device_source(ctx, A);
    sps_idx *off = NULL, ndiag = 0;
    s = offsets(ctx, A, dsrc, &off, &ndiag);
    if (s != SPS_OK) return s;
    const int64_t slots = (int64_t)ndiag * A->nrows;
    const double fill = slots ? (double)(slots - A->nnz) / (double)slots : 0.0;
    if (slots > SPS_IDX_MAX || fill > maxfill) {
        char b[32];
        sps__diag_count_str(slots, b, sizeof b);
        sps__free(off);
        if (slots > SPS_IDX_MAX)
            return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                            "dia: %d diagonals would store %s slots for %d nonzeros (more than "
                            "2^31-1 slots)", ndiag, b, A->nnz);
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "dia: %d diagonals would store %s slots for %d nonzeros (fill %.1f%%, "
                        "limit %.0f%%)", ndiag, b, A->nnz, 100.0 * fill, 100.0 * maxfill);
    }

    sps_fmt_dia *f = sps__calloc(1, sizeof *f);
    if (!f) {
        sps__free(off);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "dia: out of memory");
    }
    f->off = off;
    f->nrows = A->nrows;
    f->ncols = A->ncols;
    f->nnz = A->nnz;
    f->ndiag = ndiag;
    f->index0 = 0;
    s = layout(ctx, A, dsrc, f);
    if (s != SPS_OK) goto fail;
    f->dnum[0] = 0;
    f->dnum[1] = ndiag;

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
    sps__diag_update_host(f->map, f->nnz, values, f->val, &f->pending);
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
#if SPS_HAVE_CUDA
    .fetch = sps_dia_fetch,
    .apply_dot = sps_dia_apply_dot,
    .dev_rows = sps_dia_dev_rows,
    .apply_multi = sps_dia_apply_multi,
#endif
};
