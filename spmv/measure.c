/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/measure.c: timing, checking, bandwidth (placeholder) */
#include "backend.h"

sps_status sps_operator_time(sps_operator *op, int reps, int nx, sps_timing *t)
{
    (void)reps; (void)nx; (void)t;
    return sps__err(op ? op->ctx : NULL, SPS_ERR_NOT_COMPILED, "sps_operator_time: not implemented yet");
}

sps_status sps_copy_bandwidth(sps_context *ctx, size_t bytes, double *gbps)
{
    (void)bytes; (void)gbps;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "sps_copy_bandwidth: not implemented yet");
}

sps_status sps_operator_check(sps_operator *op, const sps_matrix *A, double *max_err,
                              int *repeatable)
{
    (void)A; (void)max_err; (void)repeatable;
    return sps__err(op ? op->ctx : NULL, SPS_ERR_NOT_COMPILED, "sps_operator_check: not implemented yet");
}
