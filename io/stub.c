/* SPDX-License-Identifier: MIT */
/* spsolve/io/stub.c: placeholder until io/mm.c lands (deleted by it) */
#include "../core/internal.h"

sps_status sps_matrix_read(sps_context *ctx, const char *path, sps_matrix **A)
{
    (void)path; if (A) *A = NULL;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "sps_matrix_read: not implemented yet");
}
sps_status sps_matrix_write(sps_context *ctx, const sps_matrix *A, const char *path)
{
    (void)A; (void)path;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "sps_matrix_write: not implemented yet");
}
sps_status sps_vector_read(sps_context *ctx, const char *path, sps_idx expected, double **x, sps_idx *n)
{
    (void)path; (void)expected; (void)x; (void)n;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "sps_vector_read: not implemented yet");
}
sps_status sps_vector_write(sps_context *ctx, const char *path, const double *x, sps_idx n)
{
    (void)path; (void)x; (void)n;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "sps_vector_write: not implemented yet");
}
