/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/cusparse.c: the cusparse backend (cuSPARSE generic SpMV on CSR, the vendor baseline): table, parameters */
#include "csr_fmt.h"
#include "kernels.h"

#include <stdio.h>
#include <string.h>

SPS_DECLARE_GPU_BACKEND(sps_cusparse)

static sps_status param(sps_context *ctx, void *user, const char *key, const char *value)
{
    int *alg = user;
    if (*value)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "cusparse: parameter '%s' takes no value", key);
    if (strcmp(key, "alg1") == 0) *alg = 1;
    else if (strcmp(key, "alg2") == 0) *alg = 2;
    else
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "cusparse: unknown parameter '%s' (known: alg1, alg2)", key);
    return SPS_OK;
}

/* sps_fmt_csr.param: 1 = CUSPARSE_SPMV_CSR_ALG1, 2 = CUSPARSE_SPMV_CSR_ALG2. */
static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    int alg = 1;
    sps_status s = sps__csr_fmt_convert_params(ctx, A, "cusparse", params, param, &alg, out, st);
    if (s != SPS_OK) return s;
    ((sps_fmt_csr *)*out)->param = alg;
    st->caps_add = alg == 2 ? SPS_CAP_DETERMINISTIC : 0;
    snprintf(st->detail, sizeof st->detail, "cusparseSpMV CSR_ALG%d%s", alg,
             alg == 2 ? " (deterministic)" : " (cuSPARSE's default; not guaranteed deterministic)");
    return SPS_OK;
}

/* Only `cusparse:alg2` is deterministic: the table describes the default
 * (ALG1), so SPS_CAP_DETERMINISTIC is absent and auto never picks it; convert
 * adds the flag for alg2 (caps_add), and tune adds cusparse:alg2 to its
 * candidates by name. */
const sps_backend sps_backend_cusparse = {
    .name = "cusparse",
    .summary = "cuSPARSE generic SpMV on CSR (CSR_ALG1; cusparse:alg2 is deterministic)",
    .caps = SPS_CAP_SINGLE,
    .convert = convert,
    .apply_host = sps__csr_fmt_apply_host,
    SPS_CSR_FMT_ENTRIES,
    SPS_GPU_ENTRIES(sps_cusparse),
};
