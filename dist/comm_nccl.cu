/* SPDX-License-Identifier: MIT */
/* spsolve/dist/comm_nccl.cu: the NCCL transport: one rank per GPU, every
 * operation on the context's stream. The halo exchange is ncclSend/ncclRecv
 * in one group; the reduction partials are one ncclAllGather (summed after
 * in global block order: no ncclAllReduce, whose order is NCCL's). The
 * setup's host buffers go through device memory. Every return code is
 * checked. Without NCCL (SPS_HAVE_NCCL 0) the entry points say so. */
#include "cuda_check.cuh"

#include "dist.h"

#include <string.h>

#if SPS_HAVE_NCCL
#include <nccl.h>

namespace {

sps_status nccl_fail(sps_context *ctx, ncclResult_t r, const char *what, const char *file, int line)
{
    return sps__err(ctx, SPS_ERR_CUDA, "%s: %s (%s:%d)", what, ncclGetErrorString(r), file, line);
}

#define SPS_NCCL(ctx, call)                                                          \
    do {                                                                             \
        ncclResult_t sps_r_ = (call);                                                \
        if (sps_r_ != ncclSuccess) return nccl_fail((ctx), sps_r_, #call, __FILE__, __LINE__); \
    } while (0)

struct nccl_impl {
    ncclComm_t comm;
    int *flag; /* device int of the barrier */
};

ncclComm_t comm_of(sps_comm *c) { return ((nccl_impl *)c->impl)->comm; }

sps_status n_allgather(sps_comm *c, const void *send, void *recv, size_t bytes)
{
    SPS_NCCL(c->ctx, ncclAllGather(send, recv, bytes, ncclChar, comm_of(c), sps_stream(c->ctx)));
    return SPS_OK;
}

sps_status n_exchange(sps_comm *c, const sps_xfer *x)
{
    ncclComm_t cm = comm_of(c);
    cudaStream_t s = sps_stream(c->ctx);
    SPS_NCCL(c->ctx, ncclGroupStart());
    for (int k = 0; k < x->nsend; k++) {
        ncclResult_t r = ncclSend(x->sbuf[k], x->sbytes[k], ncclChar, x->to[k], cm, s);
        if (r != ncclSuccess) {
            ncclGroupEnd();
            return nccl_fail(c->ctx, r, "ncclSend", __FILE__, __LINE__);
        }
    }
    for (int k = 0; k < x->nrecv; k++) {
        ncclResult_t r = ncclRecv(x->rbuf[k], x->rbytes[k], ncclChar, x->from[k], cm, s);
        if (r != ncclSuccess) {
            ncclGroupEnd();
            return nccl_fail(c->ctx, r, "ncclRecv", __FILE__, __LINE__);
        }
    }
    SPS_NCCL(c->ctx, ncclGroupEnd());
    return SPS_OK;
}

sps_status n_allgather_host(sps_comm *c, const void *send, void *recv, size_t bytes)
{
    sps_context *ctx = c->ctx;
    size_t all = bytes * (size_t)c->size;
    void *ds = NULL, *dr = NULL;
    sps_status st = sps__dmalloc(ctx, &ds, bytes + 8);
    if (st == SPS_OK) st = sps__dmalloc(ctx, &dr, all + 8);
    if (st == SPS_OK && bytes) st = sps__h2d(ctx, ds, send, bytes);
    if (st == SPS_OK) st = n_allgather(c, ds, dr, bytes);
    if (st == SPS_OK && all) st = sps__d2h(ctx, recv, dr, all);
    sps__dfree(ds);
    sps__dfree(dr);
    return st;
}

/* Host buffers through one device staging area per direction. */
sps_status n_exchange_host(sps_comm *c, const sps_xfer *x)
{
    sps_context *ctx = c->ctx;
    size_t sb = 8, rb = 8;
    for (int k = 0; k < x->nsend; k++) sb += x->sbytes[k];
    for (int k = 0; k < x->nrecv; k++) rb += x->rbytes[k];
    char *ds = NULL, *dr = NULL;
    const void **sp = (const void **)sps__calloc((size_t)x->nsend + 1, sizeof(void *));
    void **rp = (void **)sps__calloc((size_t)x->nrecv + 1, sizeof(void *));
    sps_status st = (sp && rp) ? SPS_OK : sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&ds, sb);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&dr, rb);
    size_t o = 0;
    for (int k = 0; st == SPS_OK && k < x->nsend; o += x->sbytes[k], k++) {
        sp[k] = ds + o;
        if (x->sbytes[k]) st = sps__h2d(ctx, ds + o, x->sbuf[k], x->sbytes[k]);
    }
    o = 0;
    for (int k = 0; k < x->nrecv; o += x->rbytes[k], k++) rp[k] = dr + o;
    sps_xfer d = {x->nsend, x->nrecv, x->to, x->from, sp, rp, x->sbytes, x->rbytes};
    if (st == SPS_OK) st = n_exchange(c, &d);
    for (int k = 0; st == SPS_OK && k < x->nrecv; k++)
        if (x->rbytes[k]) st = sps__d2h(ctx, x->rbuf[k], rp[k], x->rbytes[k]);
    sps__dfree(ds);
    sps__dfree(dr);
    sps__free((void *)sp);
    sps__free(rp);
    return st;
}

sps_status n_barrier(sps_comm *c)
{
    nccl_impl *m = (nccl_impl *)c->impl;
    SPS_NCCL(c->ctx, ncclAllReduce(m->flag, m->flag, 1, ncclInt, ncclSum, m->comm, sps_stream(c->ctx)));
    SPS_CUDA(c->ctx, cudaStreamSynchronize(sps_stream(c->ctx)));
    return SPS_OK;
}

void n_destroy(sps_comm *c)
{
    nccl_impl *m = (nccl_impl *)c->impl;
    if (m) {
        if (m->comm) ncclCommDestroy(m->comm);
        sps__dfree(m->flag);
        sps__free(m);
    }
    sps__free(c);
}

const sps_comm_ops nccl_ops = {
    "nccl", 1, n_allgather, n_exchange, n_allgather_host, n_exchange_host, n_barrier, n_destroy,
};

} // namespace

extern "C" sps_status sps__nccl_unique_id(sps_context *ctx, void *id)
{
    static_assert(sizeof(ncclUniqueId) <= SPS_DIST_ID_BYTES, "ncclUniqueId larger than SPS_DIST_ID_BYTES");
    ncclUniqueId u;
    SPS_NCCL(ctx, ncclGetUniqueId(&u));
    memset(id, 0, SPS_DIST_ID_BYTES);
    memcpy(id, &u, sizeof u);
    return SPS_OK;
}

extern "C" sps_status sps__comm_nccl(sps_context *ctx, const void *id, int rank, int size, sps_comm **c)
{
    *c = NULL;
    if (!ctx->gpu)
        return sps__err(ctx, SPS_ERR_NO_DEVICE, "dist: the NCCL transport needs a GPU context (%s:%d)", __FILE__, __LINE__);
    if (size < 1 || size > SPS_DIST_MAX_RANKS || rank < 0 || rank >= size)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: rank %d of %d (%s:%d)", rank, size, __FILE__, __LINE__);
    sps_comm *x = (sps_comm *)sps__calloc(1, sizeof *x);
    nccl_impl *m = (nccl_impl *)sps__calloc(1, sizeof *m);
    if (!x || !m) {
        sps__free(x);
        sps__free(m);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    }
    x->ops = &nccl_ops;
    x->ctx = ctx;
    x->rank = rank;
    x->size = size;
    x->impl = m;
    ncclUniqueId u;
    memcpy(&u, id, sizeof u);
    sps_status st = SPS_OK;
    cudaError_t ce = cudaSetDevice(ctx->device);
    if (ce != cudaSuccess) st = sps__cuda_fail(ctx, ce, "cudaSetDevice", __FILE__, __LINE__);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&m->flag, sizeof(int));
    if (st == SPS_OK) st = sps__dmemset(ctx, m->flag, 0, sizeof(int));
    if (st == SPS_OK) {
        ncclResult_t r = ncclCommInitRank(&m->comm, size, u, rank);
        if (r != ncclSuccess) {
            m->comm = NULL;
            st = nccl_fail(ctx, r, "ncclCommInitRank", __FILE__, __LINE__);
        }
    }
    if (st != SPS_OK) {
        n_destroy(x);
        return st;
    }
    *c = x;
    return SPS_OK;
}

#endif /* SPS_HAVE_NCCL */
