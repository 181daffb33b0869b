/* SPDX-License-Identifier: MIT */
/* spsolve/dist/comm_host.c: the thread transport: the ranks are threads of
 * one process that share a group (mailboxes and a barrier); every buffer is
 * host memory. It runs the distributed layer's logic on any machine (the
 * host tests), as NCCL runs it between GPUs. A round posts every send
 * buffer, waits, copies what each rank receives, and waits again, so a
 * buffer may be reused as soon as the call returns. */
#include "dist.h"

#include <pthread.h>
#include <string.h>

struct sps_dist_group {
    int size;
    pthread_barrier_t bar;
    const void **post;  /* post[src * size + dst]: what src sends dst this round */
    size_t *bytes;
};

sps_status sps_dist_group_create(int size, sps_dist_group **g)
{
    *g = NULL;
    if (size < 1 || size > SPS_DIST_MAX_RANKS)
        return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_dist_group_create: %d ranks (1 to %d)", size,
                        SPS_DIST_MAX_RANKS);
    sps_dist_group *x = sps__calloc(1, sizeof *x);
    size_t n2 = (size_t)size * (size_t)size;
    if (x) {
        x->post = sps__calloc(n2, sizeof *x->post);
        x->bytes = sps__calloc(n2, sizeof *x->bytes);
    }
    if (!x || !x->post || !x->bytes || pthread_barrier_init(&x->bar, NULL, (unsigned)size) != 0) {
        if (x) {
            sps__free(x->post);
            sps__free(x->bytes);
        }
        sps__free(x);
        return sps__err(NULL, SPS_ERR_NO_MEMORY, "sps_dist_group_create: out of memory");
    }
    x->size = size;
    *g = x;
    return SPS_OK;
}

void sps_dist_group_destroy(sps_dist_group *g)
{
    if (!g) return;
    pthread_barrier_destroy(&g->bar);
    sps__free(g->post);
    sps__free(g->bytes);
    sps__free(g);
}

static void wait_all(sps_dist_group *g) { pthread_barrier_wait(&g->bar); }

static sps_status t_allgather(sps_comm *c, const void *send, void *recv, size_t bytes)
{
    sps_dist_group *g = c->impl;
    size_t me = (size_t)c->rank * (size_t)g->size + (size_t)c->rank;
    g->post[me] = send;
    g->bytes[me] = bytes;
    wait_all(g);
    sps_status st = SPS_OK;
    for (int q = 0; q < g->size; q++) {
        size_t s = (size_t)q * (size_t)g->size + (size_t)q;
        if (g->bytes[s] != bytes)
            st = sps__err(c->ctx, SPS_ERR_INTERNAL, "dist: allgather of %zu bytes, rank %d gave %zu (%s:%d)",
                          bytes, q, g->bytes[s], __FILE__, __LINE__);
        else if (bytes)
            memcpy((char *)recv + (size_t)q * bytes, g->post[s], bytes);
    }
    wait_all(g);
    return st;
}

static sps_status t_exchange(sps_comm *c, const sps_xfer *x)
{
    sps_dist_group *g = c->impl;
    size_t P = (size_t)g->size, r = (size_t)c->rank;
    for (int k = 0; k < x->nsend; k++) {
        g->post[r * P + (size_t)x->to[k]] = x->sbuf[k];
        g->bytes[r * P + (size_t)x->to[k]] = x->sbytes[k];
    }
    wait_all(g);
    sps_status st = SPS_OK;
    for (int k = 0; k < x->nrecv; k++) {
        size_t s = (size_t)x->from[k] * P + r;
        if (!g->post[s] || g->bytes[s] != x->rbytes[k])
            st = sps__err(c->ctx, SPS_ERR_INTERNAL,
                          "dist: rank %d expected %zu bytes from rank %d, which sent %zu (%s:%d)", (int)r,
                          x->rbytes[k], x->from[k], g->post[s] ? g->bytes[s] : 0, __FILE__, __LINE__);
        else if (x->rbytes[k])
            memcpy(x->rbuf[k], g->post[s], x->rbytes[k]);
    }
    wait_all(g);
    for (int k = 0; k < x->nsend; k++) {
        g->post[r * P + (size_t)x->to[k]] = NULL;
        g->bytes[r * P + (size_t)x->to[k]] = 0;
    }
    return st;
}

static sps_status t_barrier(sps_comm *c)
{
    wait_all(c->impl);
    return SPS_OK;
}

static void t_destroy(sps_comm *c) { sps__free(c); }

static const sps_comm_ops threads_ops = {
    .name = "threads", .device = 0,
    .allgather = t_allgather, .exchange = t_exchange,
    .allgather_host = t_allgather, .exchange_host = t_exchange,
    .barrier = t_barrier, .destroy = t_destroy,
};

sps_status sps__comm_threads(sps_context *ctx, sps_dist_group *g, int rank, sps_comm **c)
{
    *c = NULL;
    if (!g || rank < 0 || rank >= g->size)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: rank %d outside the group of %d (%s:%d)", rank,
                        g ? g->size : 0, __FILE__, __LINE__);
    sps_comm *x = sps__calloc(1, sizeof *x);
    if (!x) return sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    x->ops = &threads_ops;
    x->ctx = ctx;
    x->rank = rank;
    x->size = g->size;
    x->impl = g;
    *c = x;
    return SPS_OK;
}
