/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/merge.c: the merge backend (placeholder: host path only; kernels to come) */
#include "csr_fmt.h"

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    if (params && *params)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "merge: unknown parameter '%s'", params);
    return sps__csr_fmt_convert(ctx, A, out, st);
}

const sps_backend sps_backend_merge = {
    .name = "merge",
    .summary = "(placeholder)",
    .caps = SPS_CAP_DETERMINISTIC,
    .convert = convert,
    .apply_host = sps__csr_fmt_apply_host,
    .update_host = sps__csr_fmt_update_host,
    .free_fmt = sps__csr_fmt_free,
};
