/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/csr_scalar.c: the csr-scalar backend (one thread per row): table and host side */
#include "csr_fmt.h"
#include "kernels.h"

SPS_DECLARE_GPU_BACKEND(sps_csr_scalar)

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    sps_status s =
        sps__csr_fmt_convert_params(ctx, A, "csr-scalar", params, NULL, NULL, out, st);
    if (s == SPS_OK) sps__csr_fmt_detail(A, st, "one thread per row");
    return s;
}

const sps_backend sps_backend_csr_scalar = {
    .name = "csr-scalar",
    .summary = "CSR, one thread per row: the naive baseline",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_SINGLE,
    .convert = convert,
    .apply_host = sps__csr_fmt_apply_host,
    SPS_CSR_FMT_ENTRIES,
    SPS_GPU_ENTRIES(sps_csr_scalar),
};
