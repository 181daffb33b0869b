/* SPDX-License-Identifier: MIT */
/* spsolve/dist/dist.h: the distributed layer inside the library (never
 * installed): the row partition, the halo plan, the communicator interface
 * and its transports, the distributed vector operations.
 *
 * A rank owns the contiguous rows [lo, hi) of a square matrix. Its halo plan
 * renumbers the columns of its rows: owned columns c become c - lo, the
 * off-rank columns (the halo) become nloc + h, h their place in the
 * ascending list of distinct off-rank columns. Every row keeps its entries in
 * their original order, so a row's product sums the same terms in the same
 * order as the serial CSR: the distributed SpMV is bitwise the serial one for
 * any partition. The halo is sorted by global column, hence grouped by owner:
 * what rank q sends lands in one contiguous piece of the halo. */
#ifndef SPS_DIST_H
#define SPS_DIST_H

#include "internal.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- partition (partition.c) --------------------------------------------- */

/* Row starts of a partition of n rows into nranks contiguous blocks,
 * balanced by weight (nonzeros plus one per row), each start a multiple of
 * blk (the last is n). Ranks may be empty. starts has nranks + 1 entries. */
void sps__dist_partition(sps_idx n, const sps_idx *row_ptr, int nranks, sps_idx blk,
                         sps_idx *starts);
/* The rank that owns global row g (starts[q] <= g < starts[q + 1]). */
int sps__dist_owner(const sps_idx *starts, int nranks, sps_idx g);

/* ---- communicator (comm.c and the transports) ----------------------------- */

typedef struct sps_comm sps_comm;

/* Point-to-point transfers of one round: nsend messages to to[k] of sbytes[k]
 * bytes from sbuf[k], nrecv messages from from[k] into rbuf[k] (rbytes[k]).
 * The sender's and the receiver's byte counts must agree. At most one message
 * per pair of ranks and direction in a round. */
typedef struct sps_xfer {
    int nsend, nrecv;
    const int *to, *from;
    const void *const *sbuf;
    void *const *rbuf;
    const size_t *sbytes, *rbytes;
} sps_xfer;

typedef struct sps_comm_ops {
    const char *name;
    int device; /* the buffers of allgather and exchange are device memory */
    /* every rank's `bytes` bytes of send, in rank order, into recv */
    sps_status (*allgather)(sps_comm *c, const void *send, void *recv, size_t bytes);
    sps_status (*exchange)(sps_comm *c, const sps_xfer *x);
    /* the same on host buffers (setup: counts and index lists) */
    sps_status (*allgather_host)(sps_comm *c, const void *send, void *recv, size_t bytes);
    sps_status (*exchange_host)(sps_comm *c, const sps_xfer *x);
    sps_status (*barrier)(sps_comm *c);
    void (*destroy)(sps_comm *c);
} sps_comm_ops;

struct sps_comm {
    const sps_comm_ops *ops;
    sps_context *ctx; /* this rank's context (errors, stream) */
    int rank, size;
    void *impl;
};

/* The thread transport (comm_host.c): the ranks are threads of one process,
 * each with its own context; they share a group (spsolve.h). */
sps_status sps__comm_threads(sps_context *ctx, sps_dist_group *g, int rank, sps_comm **c);
/* NCCL (comm_nccl.cu; SPS_ERR_NOT_COMPILED without NCCL): the ranks of the
 * unique id `id`, this one on ctx's device and stream. */
sps_status sps__comm_nccl(sps_context *ctx, const void *id, int rank, int size, sps_comm **c);
sps_status sps__nccl_unique_id(sps_context *ctx, void *id);
/* MPI (comm_mpi.c; SPS_ERR_NOT_COMPILED without MPI): rank and size of the
 * communicator *mpi_comm, and the unique id made by rank 0 and broadcast. */
sps_status sps__mpi_bootstrap(sps_context *ctx, const void *mpi_comm, int *rank, int *size,
                              void *id);
/* The MPI transport on host buffers (comm_mpi.c): host contexts under mpiexec. */
sps_status sps__comm_mpi(sps_context *ctx, const void *mpi_comm, sps_comm **c);

/* ---- halo plan (halo.c) ---------------------------------------------------- */

typedef struct sps_halo {
    int rank, size;
    sps_idx n;          /* global rows and columns */
    sps_idx lo, hi;     /* owned rows */
    sps_idx nloc, nhalo;
    sps_idx *starts;    /* size + 1 row starts */
    sps_csr A;          /* nloc x (nloc + nhalo), renumbered, entries in their order */
    sps_idx *halo_cols; /* nhalo global columns, ascending */
    int nrecv, nsend;
    int *recv_rank, *send_rank;
    sps_idx *recv_off;  /* nrecv + 1: rank recv_rank[k]'s piece of the halo */
    sps_idx *send_off;  /* nsend + 1 */
    sps_idx *send_idx;  /* send_off[nsend] owned rows (local numbers) to pack */
    sps_idx *bnd_rows;  /* rows with a halo entry (the boundary), nbnd of them */
    sps_idx nbnd;
} sps_halo;

/* Build this rank's plan (collective over c) from its rows [starts[rank],
 * starts[rank + 1]) given as a CSR with global columns (row_ptr[0] = 0). */
sps_status sps__halo_build(sps_comm *c, sps_idx n, const sps_idx *starts, const sps_idx *row_ptr,
                           const sps_idx *col_idx, const double *val, sps_halo *h);
void sps__halo_free(sps_halo *h);

/* ---- distributed vector operations (dvops.c, dvops.cu) -------------------- */

/* Reduction blocks: dot products are sums of per-block partials, added in
 * global block order; a block's partial depends only on its rows (host: its
 * terms in row order; GPU: a fixed tree). Rank starts on block boundaries
 * make every scalar independent of the rank count. The block length
 * depends on n only (sps__dist_block): 256 rows, doubled while there are
 * at least 256 blocks of the doubled length, at most 65536 rows, so that a
 * large system's all-gather and read-back stay small (poisson3d:300:
 * 65536-row blocks, 412 partials in all). SPS_DIST_BLK is the GPU's first
 * level (one thread block); a longer block is a fixed tree over those. */
#define SPS_DIST_BLK 256
#define SPS_DIST_BLK_MAX 65536
sps_idx sps__dist_block(sps_idx n);
#define SPS_DIST_NSUM 2
/* Most ranks of one communicator. */
#define SPS_DIST_MAX_RANKS 1024

typedef struct sps_dvops {
    const char *name;
    int device;
    sps_status (*alloc)(sps_context *ctx, size_t bytes, void **p);
    void (*free)(void *p);
    sps_status (*copy_in)(sps_context *ctx, void *dst, const void *src, size_t bytes);
    sps_status (*copy_out)(sps_context *ctx, void *dst, const void *src, size_t bytes);
    /* y = a x + b y (b = 0: y not read) over n */
    sps_status (*axpby)(sps_context *ctx, sps_idx n, double *y, double a, const double *x, double b);
    /* z = d .* r */
    sps_status (*mul)(sps_context *ctx, sps_idx n, double *z, const double *d, const double *r);
    /* x += al p; r -= al q; z = d .* r when d (else z untouched) */
    sps_status (*cg_update)(sps_context *ctx, sps_idx n, double al, double *x, const double *p,
                            double *r, const double *q, const double *d, double *z);
    /* part[k] = the sum over block k's rows (blk rows each, the last may
     * be short) of a[i] b[i]; scr: ceil(n / SPS_DIST_BLK) doubles of the
     * ops's memory (the GPU's first level) */
    sps_status (*partials)(sps_context *ctx, sps_idx n, sps_idx blk, const double *a, const double *b,
                           double *part, double *scr);
    /* buf[k] = x[idx[k]], k < m */
    sps_status (*gather)(sps_context *ctx, sps_idx m, const sps_idx *idx, const double *x, double *buf);
    /* y = A xe for the renumbered local CSR (device arrays on a device ops) */
    sps_status (*spmv)(sps_context *ctx, const void *A, const double *xe, double *y);
    /* the local CSR in the ops's memory (*dA), and its release */
    sps_status (*upload)(sps_context *ctx, const sps_csr *A, void **dA);
    void (*release)(void *dA);
} sps_dvops;

extern const sps_dvops sps__dvops_host;
extern const sps_dvops sps__dvops_cuda; /* CUDA builds only */

#ifdef __cplusplus
}
#endif
#endif /* SPS_DIST_H */
