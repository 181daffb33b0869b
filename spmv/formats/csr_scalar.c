/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/csr_scalar.c: the csr-scalar backend (one thread per row): table and host side */
#include "csr_fmt.h"
#include "kernels.h"

#include <stdio.h>

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    sps_status s = sps__no_params(ctx, "csr-scalar", params);
    if (s == SPS_OK) s = sps__csr_fmt_convert(ctx, A, out, st);
    if (s != SPS_OK) return s;
    sps_row_stats rs;
    sps__row_stats(A, &rs);
    snprintf(st->detail, sizeof st->detail,
             "one thread per row; row lengths mean %.1f, max %d", rs.mean, rs.max);
    return SPS_OK;
}

const sps_backend sps_backend_csr_scalar = {
    .name = "csr-scalar",
    .summary = "CSR, one thread per row: the naive baseline",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_SINGLE,
    .convert = convert,
    .apply_host = sps__csr_fmt_apply_host,
    .update_host = sps__csr_fmt_update_host,
    .free_fmt = sps__csr_fmt_free,
    .detach = sps__csr_fmt_detach,
#if SPS_HAVE_CUDA
    .upload = sps_csr_scalar_upload,
    .apply = sps_csr_scalar_apply,
    .update_dev = sps_csr_scalar_update_dev,
    .free_dev = sps_csr_scalar_free_dev,
    .fetch = sps__csr_fmt_fetch,
#endif
};
