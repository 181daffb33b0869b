/* SPDX-License-Identifier: MIT */
/* spsolve/dist/comm_mpi.c: the MPI bootstrap of the NCCL transport: rank
 * and size from the caller's communicator, the ncclUniqueId made by rank 0
 * and broadcast (MPI_Bcast). The caller has called MPI_Init. */
#include "dist.h"

#include <string.h>

#if SPS_HAVE_MPI
#include <mpi.h>

sps_status sps__mpi_bootstrap(sps_context *ctx, const void *mpi_comm, int *rank, int *size, void *id)
{
    if (!mpi_comm) return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: mpi_comm is NULL (%s:%d)", __FILE__, __LINE__);
    MPI_Comm comm = *(const MPI_Comm *)mpi_comm;
    int e, ok = 1;
    if ((e = MPI_Comm_rank(comm, rank)) != MPI_SUCCESS || (e = MPI_Comm_size(comm, size)) != MPI_SUCCESS)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: MPI_Comm_rank/size failed (error %d) (%s:%d)", e,
                        __FILE__, __LINE__);
    sps_status st = SPS_OK;
    memset(id, 0, SPS_DIST_ID_BYTES);
    if (*rank == 0) {
        st = sps__nccl_unique_id(ctx, id);
        ok = st == SPS_OK;
    }
    /* every rank learns whether rank 0 made the id, then gets it */
    if ((e = MPI_Bcast(&ok, 1, MPI_INT, 0, comm)) != MPI_SUCCESS ||
        (e = MPI_Bcast(id, SPS_DIST_ID_BYTES, MPI_BYTE, 0, comm)) != MPI_SUCCESS)
        return sps__err(ctx, SPS_ERR_INTERNAL, "dist: MPI_Bcast of the NCCL unique id failed (error %d) (%s:%d)", e,
                        __FILE__, __LINE__);
    if (!ok && st == SPS_OK)
        return sps__err(ctx, SPS_ERR_NOT_COMPILED, "dist: rank 0 could not make the NCCL unique id (%s:%d)",
                        __FILE__, __LINE__);
    return st;
}
#else
sps_status sps__mpi_bootstrap(sps_context *ctx, const void *mpi_comm, int *rank, int *size, void *id)
{
    (void)mpi_comm;
    (void)rank;
    (void)size;
    (void)id;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "dist: this build has no MPI (./configure --with-mpi)");
}
#endif
