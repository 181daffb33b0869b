/* SPDX-License-Identifier: MIT */
/* spsolve/dist/dist.c: the communicator object, the distributed operator
 * (its halo plan, buffers and exchange), its product and the dot products
 * reduced in global block order. */
#include "dist_impl.h"

#include <string.h>

#if SPS_HAVE_CUDA
#include "gpu.h"
#endif

sps_status sps_dist_unique_id(sps_context *ctx, void *id)
{
    if (!id) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_unique_id: id is NULL");
    return sps__nccl_unique_id(ctx, id);
}

static sps_status open_comm(sps_context *ctx, const sps_dist_spec *sp, sps_comm **c)
{
    unsigned char id[SPS_DIST_ID_BYTES];
    int rank = sp->rank, size = sp->size;
    sps_status st;
    switch (sp->kind) {
    case SPS_DIST_THREADS: return sps__comm_threads(ctx, sp->group, sp->rank, c);
    case SPS_DIST_NCCL:
        if (!sp->nccl_id) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_create: nccl_id is NULL");
        return sps__comm_nccl(ctx, sp->nccl_id, rank, size, c);
    case SPS_DIST_MPI:
        if (!ctx->gpu) return sps__comm_mpi(ctx, sp->mpi_comm, c);
        if ((st = sps__mpi_bootstrap(ctx, sp->mpi_comm, &rank, &size, id)) != SPS_OK) return st;
        return sps__comm_nccl(ctx, id, rank, size, c);
    }
    return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_create: unknown kind %d", (int)sp->kind);
}

sps_status sps_dist_create(sps_context *ctx, const sps_dist_spec *spec, sps_dist **d)
{
    if (!d) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_create: d is NULL");
    *d = NULL;
    if (!ctx || !spec) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_create: ctx or spec is NULL");
    sps_dist *x = sps__calloc(1, sizeof *x);
    if (!x) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_dist_create: out of memory");
    sps_status st = open_comm(ctx, spec, &x->c);
    if (st != SPS_OK) {
        sps__free(x);
        return st;
    }
    x->ctx = ctx;
    *d = x;
    return SPS_OK;
}

int sps_dist_rank(const sps_dist *d) { return d ? d->c->rank : -1; }
int sps_dist_size(const sps_dist *d) { return d ? d->c->size : 0; }
const char *sps_dist_transport(const sps_dist *d) { return d ? d->c->ops->name : ""; }

void sps_dist_destroy(sps_dist *d)
{
    if (!d) return;
    d->c->ops->destroy(d->c);
    sps__free(d);
}

sps_status sps_dist_partition(sps_idx n, const sps_idx *row_ptr, int nranks, sps_idx *starts)
{
    if (n < 0 || !row_ptr || !starts || nranks < 1 || nranks > SPS_DIST_MAX_RANKS)
        return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_dist_partition: n = %d, %d ranks (1 to %d)", (int)n,
                        nranks, SPS_DIST_MAX_RANKS);
    sps__dist_partition(n, row_ptr, nranks, sps__dist_block(n), starts);
    return SPS_OK;
}

/* ---- the operator ----------------------------------------------------------- */

static const sps_dvops *ops_for(const sps_dist *d)
{
#if SPS_HAVE_CUDA
    if (d->c->ops->device && d->ctx->gpu) return &sps__dvops_cuda;
#endif
    (void)d;
    return &sps__dvops_host;
}

sps_idx sps__dist_block(sps_idx n)
{
    sps_idx b = SPS_DIST_BLK;
    while (b < SPS_DIST_BLK_MAX && n / (2 * b) >= 256) b *= 2;
    return b;
}

sps_idx sps_dist_block(sps_idx n) { return sps__dist_block(n < 0 ? 0 : n); }

static sps_idx nblocks(sps_idx rows, sps_idx blk) { return (rows + blk - 1) / blk; }

/* Host arrays of the exchange and the ops's buffers. */
static sps_status op_buffers(sps_dist_operator *op)
{
    sps_context *ctx = op->d->ctx;
    const sps_dvops *o = op->ops;
    sps_halo *h = &op->h;
    size_t P = (size_t)h->size, ns = (size_t)h->send_off[h->nsend], d = sizeof(double);
    sps_status st;
    op->rptr = sps__calloc(P, sizeof(void *));
    op->sptr = sps__calloc(P, sizeof(void *));
    op->rbytes = sps__calloc(P, sizeof(size_t));
    op->sbytes = sps__calloc(P, sizeof(size_t));
    op->part_host = sps__calloc(P * SPS_DIST_NSUM * ((size_t)op->maxblk + 1), d);
    if (!op->rptr || !op->sptr || !op->rbytes || !op->sbytes || !op->part_host)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    if ((st = o->upload(ctx, &h->A, &op->dA)) != SPS_OK) return st;
    if ((st = o->alloc(ctx, (ns + 1) * sizeof(sps_idx), (void **)&op->sidx)) != SPS_OK) return st;
    if ((st = o->copy_in(ctx, op->sidx, h->send_idx, ns * sizeof(sps_idx))) != SPS_OK) return st;
    if ((st = o->alloc(ctx, (ns + 1) * d, (void **)&op->sbuf)) != SPS_OK) return st;
    if ((st = o->alloc(ctx, ((size_t)h->nloc + (size_t)h->nhalo + 1) * d, (void **)&op->xe)) != SPS_OK)
        return st;
    if ((st = o->alloc(ctx, SPS_DIST_NSUM * ((size_t)op->maxblk + 1) * d, (void **)&op->part)) != SPS_OK)
        return st;
    if ((st = o->alloc(ctx, ((size_t)h->nloc / SPS_DIST_BLK + 1) * d, (void **)&op->scr)) != SPS_OK) return st;
    return o->alloc(ctx, P * SPS_DIST_NSUM * ((size_t)op->maxblk + 1) * d, (void **)&op->part_all);
}

static void op_exchange_plan(sps_dist_operator *op)
{
    sps_halo *h = &op->h;
    for (int k = 0; k < h->nsend; k++) {
        op->sptr[k] = op->sbuf + h->send_off[k];
        op->sbytes[k] = (size_t)(h->send_off[k + 1] - h->send_off[k]) * sizeof(double);
    }
    for (int k = 0; k < h->nrecv; k++)
        op->rbytes[k] = (size_t)(h->recv_off[k + 1] - h->recv_off[k]) * sizeof(double);
    sps_xfer x = {h->nsend, h->nrecv, h->send_rank, h->recv_rank, op->sptr, op->rptr, op->sbytes, op->rbytes};
    op->x = x;
}

/* Whether the starts are on block boundaries, and the most blocks of a rank. */
static void op_blocks(sps_dist_operator *op)
{
    sps_halo *h = &op->h;
    op->blk = sps__dist_block(h->n);
    op->aligned = 1;
    for (int q = 0; q <= h->size; q++)
        if (h->starts[q] % op->blk != 0 && h->starts[q] != h->n) op->aligned = 0;
    op->maxblk = 0;
    for (int q = 0; q < h->size; q++) {
        sps_idx b = nblocks(h->starts[q + 1] - h->starts[q], op->blk);
        if (b > op->maxblk) op->maxblk = b;
    }
}

sps_status sps_dist_operator_create(sps_dist *d, sps_idx n, const sps_idx *starts,
                                    const sps_idx *row_ptr, const sps_idx *col_idx,
                                    const double *val, sps_dist_operator **op)
{
    if (!op) return sps__err(d ? d->ctx : NULL, SPS_ERR_INVALID_ARG, "sps_dist_operator_create: op is NULL");
    *op = NULL;
    if (!d || !starts || !row_ptr || n < 0)
        return sps__err(d ? d->ctx : NULL, SPS_ERR_INVALID_ARG, "sps_dist_operator_create: bad arguments");
    sps_dist_operator *x = sps__calloc(1, sizeof *x);
    if (!x) return sps__err(d->ctx, SPS_ERR_NO_MEMORY, "sps_dist_operator_create: out of memory");
    x->d = d;
    x->ops = ops_for(d);
    sps_status st = sps__halo_build(d->c, n, starts, row_ptr, col_idx, val, &x->h);
    if (st == SPS_OK) {
        op_blocks(x);
        st = op_buffers(x);
    }
    if (st == SPS_OK) op_exchange_plan(x);
    if (st != SPS_OK) {
        sps_dist_operator_destroy(x);
        return st;
    }
    *op = x;
    return SPS_OK;
}

sps_status sps_dist_operator_from_matrix(sps_dist *d, const sps_matrix *A, sps_dist_operator **op)
{
    if (!d || !A || !op) return sps__err(d ? d->ctx : NULL, SPS_ERR_INVALID_ARG, "sps_dist_operator_from_matrix: NULL argument");
    const sps_csr *M = &A->A;
    if (M->nrows != M->ncols)
        return sps__err(d->ctx, SPS_ERR_INVALID_ARG, "sps_dist_operator_from_matrix: A is %d x %d, not square",
                        (int)M->nrows, (int)M->ncols);
    int P = d->c->size, r = d->c->rank;
    sps_idx *starts = sps__malloc(((size_t)P + 1) * sizeof(sps_idx));
    sps_idx *rp = NULL;
    if (!starts) return sps__err(d->ctx, SPS_ERR_NO_MEMORY, "sps_dist_operator_from_matrix: out of memory");
    sps__dist_partition(M->nrows, M->row_ptr, P, sps__dist_block(M->nrows), starts);
    sps_idx lo = starts[r], nloc = starts[r + 1] - lo, base = M->row_ptr[lo];
    rp = sps__malloc(((size_t)nloc + 1) * sizeof(sps_idx));
    sps_status st;
    if (!rp) {
        st = sps__err(d->ctx, SPS_ERR_NO_MEMORY, "sps_dist_operator_from_matrix: out of memory");
    } else {
        for (sps_idx i = 0; i <= nloc; i++) rp[i] = M->row_ptr[lo + i] - base;
        st = sps_dist_operator_create(d, M->nrows, starts, rp, M->col_idx + base, M->val + base, op);
    }
    sps__free(rp);
    sps__free(starts);
    return st;
}

sps_idx sps_dist_operator_rows(const sps_dist_operator *op, sps_idx *first)
{
    if (first) *first = op ? op->h.lo : 0;
    return op ? op->h.nloc : 0;
}

void sps_dist_operator_destroy(sps_dist_operator *op)
{
    if (!op) return;
    const sps_dvops *o = op->ops;
    if (op->dA) o->release(op->dA);
    o->free(op->sidx);
    o->free(op->sbuf);
    o->free(op->xe);
    o->free(op->part);
    o->free(op->scr);
    o->free(op->part_all);
    sps__free(op->rptr);
    sps__free((void *)op->sptr);
    sps__free(op->rbytes);
    sps__free(op->sbytes);
    sps__free(op->part_host);
    sps__halo_free(&op->h);
    sps__free(op);
}

/* ---- product and reductions ------------------------------------------------------ */

sps_status sps__dist_spmv(sps_dist_operator *op, double *xe, double *y)
{
    sps_context *ctx = op->d->ctx;
    sps_halo *h = &op->h;
    sps_status st;
    if (h->send_off[h->nsend] > 0 &&
        (st = op->ops->gather(ctx, h->send_off[h->nsend], op->sidx, xe, op->sbuf)) != SPS_OK)
        return st;
    for (int k = 0; k < h->nrecv; k++) op->rptr[k] = xe + h->nloc + h->recv_off[k];
    if ((st = op->d->c->ops->exchange(op->d->c, &op->x)) != SPS_OK) return st;
    if (h->nloc == 0) return SPS_OK;
    return op->ops->spmv(ctx, op->dA, xe, y);
}

sps_status sps__dist_dot(sps_dist_operator *op, int ns, const double *const *a,
                         const double *const *b, double *s)
{
    sps_context *ctx = op->d->ctx;
    sps_halo *h = &op->h;
    size_t mb = (size_t)op->maxblk, P = (size_t)h->size, row = (size_t)ns * mb;
    sps_status st;
    for (int q = 0; q < ns; q++)
        if ((st = op->ops->partials(ctx, h->nloc, op->blk, a[q], b[q], op->part + (size_t)q * mb, op->scr)) != SPS_OK)
            return st;
    if ((st = op->d->c->ops->allgather(op->d->c, op->part, op->part_all, row * sizeof(double))) != SPS_OK)
        return st;
    if ((st = op->ops->copy_out(ctx, op->part_host, op->part_all, P * row * sizeof(double))) != SPS_OK)
        return st;
    for (int q = 0; q < ns; q++) {
        double t = 0.0;
        for (size_t r = 0; r < P; r++) {
            sps_idx nb = nblocks(h->starts[r + 1] - h->starts[r], op->blk);
            const double *p = op->part_host + r * row + (size_t)q * mb;
            for (sps_idx k = 0; k < nb; k++) t += p[k];
        }
        s[q] = t;
    }
    return SPS_OK;
}

sps_status sps_dist_operator_apply(sps_dist_operator *op, const double *x, double *y)
{
    if (!op || (!x && op->h.nloc) || (!y && op->h.nloc))
        return sps__err(op ? op->d->ctx : NULL, SPS_ERR_INVALID_ARG, "sps_dist_operator_apply: NULL argument");
    sps_context *ctx = op->d->ctx;
    const sps_dvops *o = op->ops;
    size_t bytes = (size_t)op->h.nloc * sizeof(double);
    double *yd = NULL;
    sps_status st = o->copy_in(ctx, op->xe, x, bytes);
    if (st == SPS_OK) st = o->alloc(ctx, bytes + sizeof(double), (void **)&yd);
    if (st == SPS_OK) st = sps__dist_spmv(op, op->xe, yd);
    if (st == SPS_OK) st = o->copy_out(ctx, y, yd, bytes);
    o->free(yd);
    return st;
}

sps_status sps_dist_gather(sps_dist_operator *op, const double *x, double *x_all)
{
    if (!op) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_dist_gather: op is NULL");
    sps_comm *c = op->d->c;
    sps_halo *h = &op->h;
    int r0 = c->rank == 0;
    if (r0 && !x_all) return sps__err(op->d->ctx, SPS_ERR_INVALID_ARG, "sps_dist_gather: x_all is NULL on rank 0");
    /* rank q sends its rows to rank 0; rank 0 receives every other rank's */
    int nr = 0, to = 0;
    int *from = sps__malloc((size_t)c->size * sizeof(int));
    void **rb = sps__malloc((size_t)c->size * sizeof(void *));
    size_t *rn = sps__malloc((size_t)c->size * sizeof(size_t));
    size_t sn = (size_t)h->nloc * sizeof(double);
    const void *sb[1] = {x};
    sps_status st = SPS_OK;
    if (!from || !rb || !rn) st = sps__err(op->d->ctx, SPS_ERR_NO_MEMORY, "sps_dist_gather: out of memory");
    if (st == SPS_OK && r0) {
        if (h->nloc) memcpy(x_all, x, sn);
        for (int q = 1; q < c->size; q++) {
            if (h->starts[q + 1] == h->starts[q]) continue;
            from[nr] = q;
            rb[nr] = x_all + h->starts[q];
            rn[nr++] = (size_t)(h->starts[q + 1] - h->starts[q]) * sizeof(double);
        }
    }
    if (st == SPS_OK) {
        sps_xfer xf = {(!r0 && h->nloc) ? 1 : 0, nr, &to, from, sb, rb, &sn, rn};
        st = c->ops->exchange_host(c, &xf);
    }
    sps__free(from);
    sps__free(rb);
    sps__free(rn);
    return st;
}
