/* SPDX-License-Identifier: MIT */
/* spsolve/dist/halo.c: a rank's halo plan (dist.h): the renumbered local
 * rows, the halo's global columns, and the index lists of the exchange,
 * computed once (collective: each rank tells the owners which of their rows
 * it needs). */
#include "dist.h"

#include <stdlib.h>
#include <string.h>

static int cmp_idx(const void *a, const void *b)
{
    sps_idx x = *(const sps_idx *)a, y = *(const sps_idx *)b;
    return (x > y) - (x < y);
}

static sps_status check_rows(sps_comm *c, sps_idx n, const sps_idx *starts, const sps_idx *rp,
                             const sps_idx *ci)
{
    sps_context *ctx = c->ctx;
    if (starts[0] != 0 || starts[c->size] != n)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: row starts must run from 0 to n = %d (%s:%d)",
                        (int)n, __FILE__, __LINE__);
    for (int q = 0; q < c->size; q++)
        if (starts[q + 1] < starts[q])
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: row starts decrease at rank %d (%s:%d)", q,
                            __FILE__, __LINE__);
    sps_idx nloc = starts[c->rank + 1] - starts[c->rank];
    if (rp[0] != 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: row_ptr[0] must be 0 (%s:%d)", __FILE__, __LINE__);
    for (sps_idx i = 0; i < nloc; i++)
        if (rp[i + 1] < rp[i])
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: row_ptr decreases at local row %d (%s:%d)",
                            (int)i, __FILE__, __LINE__);
    for (sps_idx p = 0; p < rp[nloc]; p++)
        if (ci[p] < 0 || ci[p] >= n)
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "dist: column %d out of range [0, %d) (%s:%d)",
                            (int)ci[p], (int)n, __FILE__, __LINE__);
    return SPS_OK;
}

/* The distinct off-rank columns, ascending. */
static sps_status halo_columns(sps_context *ctx, sps_halo *h, const sps_idx *ci, sps_idx nnz)
{
    sps_idx m = 0;
    h->halo_cols = sps__malloc((size_t)nnz * sizeof(sps_idx));
    if (!h->halo_cols) return sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    for (sps_idx p = 0; p < nnz; p++)
        if (ci[p] < h->lo || ci[p] >= h->hi) h->halo_cols[m++] = ci[p];
    qsort(h->halo_cols, (size_t)m, sizeof(sps_idx), cmp_idx);
    sps_idx u = 0;
    for (sps_idx k = 0; k < m; k++)
        if (u == 0 || h->halo_cols[u - 1] != h->halo_cols[k]) h->halo_cols[u++] = h->halo_cols[k];
    h->nhalo = u;
    return SPS_OK;
}

/* The local CSR, columns renumbered, entries in their order. */
static sps_status renumber(sps_context *ctx, sps_halo *h, const sps_idx *rp, const sps_idx *ci,
                           const double *val)
{
    sps_idx nnz = rp[h->nloc];
    sps_status st = sps__csr_alloc(ctx, &h->A, h->nloc, h->nloc + h->nhalo, nnz);
    if (st != SPS_OK) return st;
    memcpy(h->A.row_ptr, rp, ((size_t)h->nloc + 1) * sizeof(sps_idx));
    if (nnz) memcpy(h->A.val, val, (size_t)nnz * sizeof(double));
    for (sps_idx p = 0; p < nnz; p++) {
        sps_idx g = ci[p];
        if (g >= h->lo && g < h->hi) {
            h->A.col_idx[p] = g - h->lo;
        } else {
            const sps_idx *f = bsearch(&g, h->halo_cols, (size_t)h->nhalo, sizeof(sps_idx), cmp_idx);
            h->A.col_idx[p] = h->nloc + (sps_idx)(f - h->halo_cols);
        }
    }
    return SPS_OK;
}

/* The receive pieces (one per owner of halo columns) and the boundary rows. */
static sps_status recv_lists(sps_context *ctx, sps_halo *h)
{
    h->recv_rank = sps__malloc(((size_t)h->nhalo + 1) * sizeof(int));
    h->recv_off = sps__malloc(((size_t)h->nhalo + 1) * sizeof(sps_idx));
    h->bnd_rows = sps__malloc(((size_t)h->nloc + 1) * sizeof(sps_idx));
    if (!h->recv_rank || !h->recv_off || !h->bnd_rows)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    h->nrecv = 0;
    for (sps_idx k = 0; k < h->nhalo; k++) {
        int q = sps__dist_owner(h->starts, h->size, h->halo_cols[k]);
        if (h->nrecv == 0 || h->recv_rank[h->nrecv - 1] != q) {
            h->recv_rank[h->nrecv] = q;
            h->recv_off[h->nrecv++] = k;
        }
    }
    h->recv_off[h->nrecv] = h->nhalo;
    h->nbnd = 0;
    for (sps_idx i = 0; i < h->nloc; i++) {
        sps_idx p = h->A.row_ptr[i];
        while (p < h->A.row_ptr[i + 1] && h->A.col_idx[p] < h->nloc) p++;
        if (p < h->A.row_ptr[i + 1]) h->bnd_rows[h->nbnd++] = i;
    }
    return SPS_OK;
}

/* The send lists: every rank's needs per owner (an allgather of counts),
 * then the needed global rows themselves (one exchange). */
static sps_status send_lists(sps_comm *c, sps_halo *h)
{
    sps_context *ctx = c->ctx;
    int P = c->size, r = c->rank;
    int64_t *mine = sps__calloc((size_t)P, sizeof(int64_t));
    int64_t *all = sps__calloc((size_t)P * (size_t)P, sizeof(int64_t));
    size_t *sb = sps__malloc(((size_t)h->nrecv + 1) * sizeof(size_t));
    size_t *rb = sps__malloc((size_t)P * sizeof(size_t));
    void **rbuf = sps__malloc((size_t)P * sizeof(void *));
    const void **sbuf = sps__malloc(((size_t)h->nrecv + 1) * sizeof(void *));
    h->send_rank = sps__malloc((size_t)P * sizeof(int));
    h->send_off = sps__malloc(((size_t)P + 1) * sizeof(sps_idx));
    sps_status st = SPS_OK;
    if (!mine || !all || !sb || !rb || !rbuf || !sbuf || !h->send_rank || !h->send_off) {
        st = sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
        goto out;
    }
    for (int k = 0; k < h->nrecv; k++) mine[h->recv_rank[k]] = h->recv_off[k + 1] - h->recv_off[k];
    if ((st = c->ops->allgather_host(c, mine, all, (size_t)P * sizeof(int64_t))) != SPS_OK) goto out;
    h->nsend = 0;
    h->send_off[0] = 0;
    for (int q = 0; q < P; q++) {
        int64_t m = all[(size_t)q * P + r]; /* rows of mine that q needs */
        if (q == r || m == 0) continue;
        h->send_rank[h->nsend] = q;
        h->send_off[h->nsend + 1] = h->send_off[h->nsend] + (sps_idx)m;
        h->nsend++;
    }
    h->send_idx = sps__malloc(((size_t)h->send_off[h->nsend] + 1) * sizeof(sps_idx));
    if (!h->send_idx) {
        st = sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
        goto out;
    }
    for (int k = 0; k < h->nrecv; k++) {
        sbuf[k] = h->halo_cols + h->recv_off[k];
        sb[k] = (size_t)(h->recv_off[k + 1] - h->recv_off[k]) * sizeof(sps_idx);
    }
    for (int k = 0; k < h->nsend; k++) {
        rbuf[k] = h->send_idx + h->send_off[k];
        rb[k] = (size_t)(h->send_off[k + 1] - h->send_off[k]) * sizeof(sps_idx);
    }
    sps_xfer x = {h->nrecv, h->nsend, h->recv_rank, h->send_rank, sbuf, rbuf, sb, rb};
    if ((st = c->ops->exchange_host(c, &x)) != SPS_OK) goto out;
    for (sps_idx k = 0; k < h->send_off[h->nsend]; k++) {
        sps_idx g = h->send_idx[k];
        if (g < h->lo || g >= h->hi) {
            st = sps__err(ctx, SPS_ERR_INTERNAL, "dist: rank %d was asked for row %d it does not own (%s:%d)",
                          r, (int)g, __FILE__, __LINE__);
            goto out;
        }
        h->send_idx[k] = g - h->lo;
    }
out:
    sps__free(mine);
    sps__free(all);
    sps__free(sb);
    sps__free(rb);
    sps__free(rbuf);
    sps__free((void *)sbuf);
    return st;
}

/* Every rank learns whether any failed (so that none waits for a rank that
 * gave up): st, or an error naming the first rank that failed. */
static sps_status agree(sps_comm *c, sps_status st)
{
    int64_t mine = st, all[SPS_DIST_MAX_RANKS];
    sps_status cst = c->ops->allgather_host(c, &mine, all, sizeof mine);
    if (cst != SPS_OK) return cst;
    if (st != SPS_OK) return st;
    for (int q = 0; q < c->size; q++)
        if (all[q] != SPS_OK)
            return sps__err(c->ctx, (sps_status)all[q], "dist: rank %d failed during the setup (%s:%d)", q,
                            __FILE__, __LINE__);
    return SPS_OK;
}

sps_status sps__halo_build(sps_comm *c, sps_idx n, const sps_idx *starts, const sps_idx *row_ptr,
                           const sps_idx *col_idx, const double *val, sps_halo *h)
{
    memset(h, 0, sizeof *h);
    h->rank = c->rank;
    h->size = c->size;
    h->n = n;
    sps_status st = check_rows(c, n, starts, row_ptr, col_idx);
    if ((st = agree(c, st)) != SPS_OK) return st;
    h->lo = starts[c->rank];
    h->hi = starts[c->rank + 1];
    h->nloc = h->hi - h->lo;
    h->starts = sps__malloc(((size_t)c->size + 1) * sizeof(sps_idx));
    if (h->starts) memcpy(h->starts, starts, ((size_t)c->size + 1) * sizeof(sps_idx));
    else st = sps__err(c->ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    if (st == SPS_OK) st = halo_columns(c->ctx, h, col_idx, row_ptr[h->nloc]);
    if (st == SPS_OK) st = renumber(c->ctx, h, row_ptr, col_idx, val);
    if (st == SPS_OK) st = recv_lists(c->ctx, h);
    if ((st = agree(c, st)) != SPS_OK || (st = send_lists(c, h)) != SPS_OK) {
        sps__halo_free(h);
        return st;
    }
    return SPS_OK;
}

void sps__halo_free(sps_halo *h)
{
    sps__csr_free(&h->A);
    sps__free(h->starts);
    sps__free(h->halo_cols);
    sps__free(h->recv_rank);
    sps__free(h->recv_off);
    sps__free(h->send_rank);
    sps__free(h->send_off);
    sps__free(h->send_idx);
    sps__free(h->bnd_rows);
    memset(h, 0, sizeof *h);
}
