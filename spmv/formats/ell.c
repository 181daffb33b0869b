/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/ell.c: the ell backend: plain ELL (Bell & Garland),
 * every row padded to the longest one; a benchmark row, never auto's choice.
 *
 * ELL is HYB with the width of the longest row and no tail, so the layout,
 * its construction (sps__hyb_build), the host reference and the kernel are
 * hyb's (hyb.c, hyb.cu: the column-major slab with a pitch of nrows rounded
 * up to 32, one thread per row, stopping at the first padding column):
 * nothing is copied, and there is no ell.cu. What is ELL's own is the width
 * and the memory bound (padded.h): one row of 33000 entries in 40000 rows
 * would need 1.3e9 slots and is refused with SPS_ERR_UNSUPPORTED naming the
 * numbers. */
#include "csr_fmt.h"
#include "kernels.h"
#include "padded.h"

#include <stdio.h>

SPS_DECLARE_GPU_BACKEND(sps_hyb)

extern const sps_backend sps_backend_hyb;

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    *out = NULL;
    sps_status s = sps__no_params(ctx, "ell", params);
    if (s != SPS_OK) return s;
    sps_row_stats rs;
    sps__row_stats(A, &rs);
    const sps_idx K = A->nrows > 0 ? rs.max : 0;
    const int64_t slots = (int64_t)K * (((int64_t)A->nrows + 31) / 32 * 32);
    char what[96];
    snprintf(what, sizeof what, "padding every row to the longest (%d entries)", K);
    s = sps__pad_bound(ctx, "ell", what, slots, A->nnz);
    if (s != SPS_OK) return s;
    sps_fmt_hyb *h = sps__calloc(1, sizeof *h);
    if (!h) return sps__err(ctx, SPS_ERR_NO_MEMORY, "ell: out of memory");
    int64_t col_loads = 0;
    s = sps__hyb_build(ctx, A, K, h, &col_loads);
    if (s != SPS_OK) {
        sps_backend_hyb.free_fmt((sps_fmt *)h);
        return s;
    }
    /* Bytes model (hyb's without a tail): the column indices the kernel reads
     * (a short row's up to its first -1), a value per entry, x once, y once. */
    st->bytes_per_spmv = 4.0 * col_loads + 8.0 * A->nnz + 8.0 * A->ncols + 8.0 * A->nrows;
    st->value_bytes = 8.0 * A->nnz + 8.0 * A->ncols + 8.0 * A->nrows;
    st->ell_width = K;
    st->slots = (int64_t)K * A->nrows;
    st->fill = st->slots > 0 ? (double)(st->slots - A->nnz) / (double)st->slots : 0.0;
    snprintf(st->detail, sizeof st->detail,
             "width %d (the longest row), %lld slots, fill %.3f; one thread per row", K,
             (long long)st->slots, st->fill);
    *out = (sps_fmt *)h;
    return SPS_OK;
}

static void apply_host(const sps_fmt *f, double alpha, const double *x, double beta, double *y)
{
    sps_backend_hyb.apply_host(f, alpha, x, beta, y);
}

static sps_status update_host(sps_context *ctx, sps_fmt *f, const double *values)
{
    return sps_backend_hyb.update_host(ctx, f, values);
}

static void free_fmt(sps_fmt *f) { sps_backend_hyb.free_fmt(f); }

const sps_backend sps_backend_ell = {
    .name = "ell",
    .summary = "ELL padded to the longest row, one thread per row (benchmark row: never chosen by "
               "auto or tune)",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_NEEDS_CONVERT | SPS_CAP_SINGLE,
    .bench_only = 1,
    .convert = convert,
    .apply_host = apply_host,
    .update_host = update_host,
    .free_fmt = free_fmt,
    SPS_GPU_ENTRIES(sps_hyb),
};
