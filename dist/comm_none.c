/* SPDX-License-Identifier: MIT */
/* spsolve/dist/comm_none.c: the NCCL entry points of a build without NCCL
 * (comm_nccl.cu has them otherwise). */
#include "dist.h"

#if !SPS_HAVE_NCCL || !SPS_HAVE_CUDA
sps_status sps__nccl_unique_id(sps_context *ctx, void *id)
{
    (void)id;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED,
                    "dist: this build has no NCCL (./configure --with-nccl); the thread transport works");
}

sps_status sps__comm_nccl(sps_context *ctx, const void *id, int rank, int size, sps_comm **c)
{
    (void)id;
    (void)rank;
    (void)size;
    *c = NULL;
    return sps__nccl_unique_id(ctx, NULL);
}
#endif
