/* SPDX-License-Identifier: MIT */
/* spsolve/dist/comm_mpi.c: MPI. On a GPU context it bootstraps the NCCL
 * transport: rank and size from the caller's communicator, the ncclUniqueId
 * made by rank 0 and broadcast (MPI_Bcast). On a host context it is a
 * transport itself (host buffers: MPI_Allgather, MPI_Isend/MPI_Irecv,
 * MPI_Barrier), so that processes on CPUs run the distributed layer's logic
 * under mpiexec. The caller has called MPI_Init (or sps_dist_mpi_init). */
#include "dist_impl.h"

#include <string.h>

#if SPS_HAVE_MPI
#include <mpi.h>

static sps_status mpi_fail(sps_context *ctx, int e, const char *what, const char *file, int line)
{
    char s[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(e, s, &len);
    return sps__err(ctx, SPS_ERR_INTERNAL, "%s: %s (%s:%d)", what, s, file, line);
}

#define SPS_MPI(ctx, call)                                                               \
    do {                                                                                 \
        int sps_m_ = (call);                                                             \
        if (sps_m_ != MPI_SUCCESS) return mpi_fail((ctx), sps_m_, #call, __FILE__, __LINE__); \
    } while (0)

static MPI_Comm comm_of(sps_comm *c) { return *(MPI_Comm *)c->impl; }

static sps_status m_allgather(sps_comm *c, const void *send, void *recv, size_t bytes)
{
    if (bytes > (size_t)INT32_MAX) return sps__err(c->ctx, SPS_ERR_INVALID_ARG, "dist: allgather of %zu bytes", bytes);
    SPS_MPI(c->ctx, MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, comm_of(c)));
    return SPS_OK;
}

static sps_status m_exchange(sps_comm *c, const sps_xfer *x)
{
    MPI_Request *rq = sps__malloc(((size_t)x->nsend + (size_t)x->nrecv + 1) * sizeof *rq);
    if (!rq) return sps__err(c->ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    int nr = 0, e = MPI_SUCCESS;
    for (int k = 0; k < x->nrecv && e == MPI_SUCCESS; k++)
        e = MPI_Irecv(x->rbuf[k], (int)x->rbytes[k], MPI_BYTE, x->from[k], 0, comm_of(c), &rq[nr++]);
    for (int k = 0; k < x->nsend && e == MPI_SUCCESS; k++)
        e = MPI_Isend(x->sbuf[k], (int)x->sbytes[k], MPI_BYTE, x->to[k], 0, comm_of(c), &rq[nr++]);
    if (e == MPI_SUCCESS) e = MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);
    sps__free(rq);
    if (e != MPI_SUCCESS) return mpi_fail(c->ctx, e, "MPI_Isend/MPI_Irecv", __FILE__, __LINE__);
    return SPS_OK;
}

static sps_status m_barrier(sps_comm *c)
{
    SPS_MPI(c->ctx, MPI_Barrier(comm_of(c)));
    return SPS_OK;
}

static void m_destroy(sps_comm *c)
{
    if (c) sps__free(c->impl);
    sps__free(c);
}

static const sps_comm_ops mpi_ops = {
    .name = "mpi", .device = 0,
    .allgather = m_allgather, .exchange = m_exchange,
    .allgather_host = m_allgather, .exchange_host = m_exchange,
    .barrier = m_barrier, .destroy = m_destroy,
};

sps_status sps__comm_mpi(sps_context *ctx, const void *mpi_comm, sps_comm **c)
{
    *c = NULL;
    if (!mpi_comm) return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: mpi_comm is NULL (%s:%d)", __FILE__, __LINE__);
    sps_comm *x = sps__calloc(1, sizeof *x);
    MPI_Comm *m = sps__malloc(sizeof *m);
    if (!x || !m) {
        sps__free(x);
        sps__free(m);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    }
    *m = *(const MPI_Comm *)mpi_comm;
    x->ops = &mpi_ops;
    x->ctx = ctx;
    x->impl = m;
    if (MPI_Comm_rank(*m, &x->rank) != MPI_SUCCESS || MPI_Comm_size(*m, &x->size) != MPI_SUCCESS) {
        m_destroy(x);
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: MPI_Comm_rank/size failed (%s:%d)", __FILE__, __LINE__);
    }
    *c = x;
    return SPS_OK;
}

static MPI_Comm g_world = MPI_COMM_NULL;
static int g_inited;

sps_status sps_dist_mpi_init(int *rank, int *size, int *local_rank)
{
    int flag = 0;
    MPI_Initialized(&flag);
    if (!flag) {
        if (MPI_Init(NULL, NULL) != MPI_SUCCESS)
            return sps__err(NULL, SPS_ERR_INTERNAL, "sps_dist_mpi_init: MPI_Init failed");
        g_inited = 1;
    }
    MPI_Comm node;
    int lr = 0;
    if (MPI_Comm_rank(MPI_COMM_WORLD, rank) != MPI_SUCCESS || MPI_Comm_size(MPI_COMM_WORLD, size) != MPI_SUCCESS)
        return sps__err(NULL, SPS_ERR_INTERNAL, "sps_dist_mpi_init: MPI_Comm_rank/size failed");
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, *rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_rank(node, &lr);
        MPI_Comm_free(&node);
    }
    if (local_rank) *local_rank = lr;
    g_world = MPI_COMM_WORLD;
    return SPS_OK;
}

void sps_dist_mpi_finalize(void)
{
    if (g_inited) MPI_Finalize();
    g_inited = 0;
}

const void *sps_dist_mpi_world(void) { return g_world == MPI_COMM_NULL ? NULL : (const void *)&g_world; }

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
sps_status sps__comm_mpi(sps_context *ctx, const void *mpi_comm, sps_comm **c)
{
    (void)mpi_comm;
    *c = NULL;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "dist: this build has no MPI (./configure --with-mpi)");
}

sps_status sps_dist_mpi_init(int *rank, int *size, int *local_rank)
{
    *rank = 0;
    *size = 1;
    if (local_rank) *local_rank = 0;
    return sps__err(NULL, SPS_ERR_NOT_COMPILED, "this build has no MPI (./configure --with-mpi)");
}

void sps_dist_mpi_finalize(void) {}

const void *sps_dist_mpi_world(void) { return NULL; }

sps_status sps__mpi_bootstrap(sps_context *ctx, const void *mpi_comm, int *rank, int *size, void *id)
{
    (void)mpi_comm;
    (void)rank;
    (void)size;
    (void)id;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "dist: this build has no MPI (./configure --with-mpi)");
}
#endif
