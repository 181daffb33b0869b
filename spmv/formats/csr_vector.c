/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/csr_vector.c: the csr-vector backend (CUSP style, a thread group per row): table, group-size rule, parameters */
#include "csr_fmt.h"
#include "kernels.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SPS_DECLARE_GPU_BACKEND(sps_csr_vector)

int sps__csr_vector_tpr(int64_t nnz, sps_idx nrows)
{
    /* The group that covers a row of mean length in one pass (CUSP's rule,
     * with the real mean instead of the truncated one). */
    double mean = nrows > 0 ? (double)nnz / nrows : 0.0;
    int tpr = 2;
    while (tpr < 32 && tpr < mean) tpr *= 2;
    return tpr;
}

sps_status sps__tpr_param(sps_context *ctx, void *user, const char *key, const char *value)
{
    sps_tpr_param *p = user;
    if (strcmp(key, "tpr") == 0) {
        char *end = NULL;
        long v = strtol(value, &end, 10);
        if (*value && *end == 0 && (v == 2 || v == 4 || v == 8 || v == 16 || v == 32)) {
            p->tpr = (int)v;
            return SPS_OK;
        }
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "%s: tpr=%s: threads per row must be 2, 4, 8, 16 or 32", p->backend, value);
    }
    return sps__err(ctx, SPS_ERR_INVALID_ARG,
                    "%s: unknown parameter '%s' (known: tpr=2|4|8|16|32)", p->backend, key);
}

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    sps_tpr_param forced = {"csr-vector", 0};
    sps_status s = sps__csr_fmt_convert_params(ctx, A, "csr-vector", params, sps__tpr_param,
                                               &forced, out, st);
    if (s != SPS_OK) return s;
    sps_fmt_csr *f = (sps_fmt_csr *)*out;
    f->param = forced.tpr ? forced.tpr : sps__csr_vector_tpr(A->nnz, A->nrows);
    sps__csr_fmt_detail(A, st, "%d threads per row (%s)", f->param,
                        forced.tpr ? "forced" : "from the mean row length");
    return SPS_OK;
}

const sps_backend sps_backend_csr_vector = {
    .name = "csr-vector",
    .summary = "CSR, a group of 2-32 threads per row sized from the mean row length (CUSP)",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_SINGLE,
    .convert = convert,
    .apply_host = sps__csr_fmt_apply_host,
    SPS_CSR_FMT_ENTRIES,
    SPS_GPU_ENTRIES(sps_csr_vector),
#if SPS_HAVE_CUDA
    .apply_dot = sps_csr_vector_apply_dot,
#endif
};
