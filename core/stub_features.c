/* SPDX-License-Identifier: MIT */
/* spsolve/core/stub_features.c: placeholder until core/generate.c and core/analyze.c land (deleted by them) */
#include "internal.h"

#include <string.h>

sps_status sps__generate(sps_context *ctx, const char *spec, sps_csr *out)
{
    (void)spec; memset(out, 0, sizeof *out);
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "generators: not implemented yet");
}
sps_status sps_matrix_analyze(sps_context *ctx, const sps_matrix *A, sps_features *f)
{
    (void)A; (void)f;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "sps_matrix_analyze: not implemented yet");
}
int64_t sps__segmented_dia_slots(const sps_csr *A, sps_idx seg) { (void)A; (void)seg; return 0; }
sps_idx sps__hyb_width(const sps_csr *A) { (void)A; return 0; }
