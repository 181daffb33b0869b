/* SPDX-License-Identifier: MIT */
/* spsolve/precond/parilu/parilu.c: the host reference of the fixed-point
 * ILU(0)/IC(0) factorization (parilu.h): the pattern (each entry's row, and
 * for ilu0 F by columns: a counting sort, rows ascending in each column), then
 * K Jacobi-style sweeps into two buffers in turn, then the first refused row.
 * precond/ilu.c calls it for `factor=par` on a host context (setup and
 * refresh); parilu.cu does the same on the device. */
#include "parilu.h"

#include <stdio.h>
#include <string.h>

typedef struct host_pat {
    sps_parilu_pat P;
    sps_idx *row, *cp, *cr, *cq;
} host_pat;

static void pat_free(host_pat *h)
{
    sps__free(h->row);
    sps__free(h->cp);
    sps__free(h->cr);
    sps__free(h->cq);
}

/* F by columns: a counting sort of the entries by column, rows in order. */
static void by_columns(const sps_csr *F, sps_idx *cp, sps_idx *cr, sps_idx *cq)
{
    sps_idx n = F->nrows;
    memset(cp, 0, ((size_t)n + 1) * sizeof *cp);
    for (int64_t p = 0; p < F->nnz; p++) cp[F->col_idx[p] + 1]++;
    for (sps_idx j = 0; j < n; j++) cp[j + 1] += cp[j];
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = F->row_ptr[i]; p < F->row_ptr[i + 1]; p++) {
            sps_idx y = cp[F->col_idx[p]]++;
            cr[y] = i;
            cq[y] = p;
        }
    for (sps_idx j = n; j > 0; j--) cp[j] = cp[j - 1];
    cp[0] = 0;
}

static sps_status pat_build(sps_context *ctx, const sps_csr *F, const sps_idx *dpos, int cholesky, host_pat *h)
{
    sps_idx n = F->nrows;
    size_t nz = (size_t)(F->nnz ? F->nnz : 1);
    memset(h, 0, sizeof *h);
    h->row = sps__malloc(sps__mul_size(nz, sizeof *h->row));
    if (!cholesky) {
        h->cp = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *h->cp));
        h->cr = sps__malloc(sps__mul_size(nz, sizeof *h->cr));
        h->cq = sps__malloc(sps__mul_size(nz, sizeof *h->cq));
    }
    if (!h->row || (!cholesky && (!h->cp || !h->cr || !h->cq))) {
        pat_free(h);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", cholesky ? "ic0" : "ilu0");
    }
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = F->row_ptr[i]; p < F->row_ptr[i + 1]; p++) h->row[p] = i;
    if (!cholesky) by_columns(F, h->cp, h->cr, h->cq);
    h->P = (sps_parilu_pat){n, F->nnz, cholesky, F->row_ptr, F->col_idx, h->row, dpos, h->cp, h->cr, h->cq};
    return SPS_OK;
}

/* The first refused row, as row * 4 + kind, or -1. */
static int64_t first_bad(const sps_parilu_pat *P, const double *v)
{
    for (sps_idx i = 0; i < P->n; i++) {
        int kind = 0;
        for (sps_idx p = P->rp[i]; p < P->rp[i + 1]; p++) {
            int k = sps__parilu_check(P, p, v);
            if (k && (!kind || k < kind)) kind = k;
        }
        if (kind) return (int64_t)i * 4 + kind;
    }
    return -1;
}

/* Sweeps from the start in buffers x (ending in v) and w: the start goes
 * where K sweeps later v holds the last one. */
static int sweeps(const sps_parilu_pat *P, int K, const double *a, double *v, double *w)
{
    double *cur = K % 2 == 0 ? v : w, *nxt = K % 2 == 0 ? w : v;
    for (int64_t p = 0; p < P->nnz; p++) cur[p] = sps__parilu_start(P, p, a);
    int j = 0;
    while (j < K) {
        for (int64_t p = 0; p < P->nnz; p++) nxt[p] = sps__parilu_entry(P, p, a, cur);
        j++;
        int still = memcmp(cur, nxt, (size_t)P->nnz * sizeof *cur) == 0;
        double *t = cur;
        cur = nxt;
        nxt = t;
        if (still) break; /* every later sweep gives these values again */
    }
    if (cur != v) memcpy(v, cur, (size_t)P->nnz * sizeof *v);
    return j;
}

sps_status sps__parilu_host(sps_context *ctx, const sps_csr *F, const sps_idx *dpos, int cholesky, int K,
                            double *v, int64_t *bad, int *done)
{
    host_pat h;
    *bad = -1;
    if (done) *done = 0;
    if (F->nrows == 0) return SPS_OK;
    sps_status st = pat_build(ctx, F, dpos, cholesky, &h);
    if (st != SPS_OK) return st;
    size_t nb = sps__mul_size((size_t)(F->nnz ? F->nnz : 1), sizeof(double));
    double *a = sps__malloc(nb), *w = sps__malloc(nb);
    if (!a || !w) {
        st = sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", cholesky ? "ic0" : "ilu0");
    } else {
        memcpy(a, v, (size_t)F->nnz * sizeof *a);
        int j = sweeps(&h.P, K, a, v, w);
        if (done) *done = j;
        *bad = first_bad(&h.P, v);
    }
    sps__free(a);
    sps__free(w);
    pat_free(&h);
    return st;
}

sps_status sps__parilu_fail(sps_precond *pc, int cholesky, int64_t bad, int K)
{
    sps_idx row = (sps_idx)(bad / 4);
    if (bad % 4 == SPS_PI_PIVOT) return sps__pc_pivot_error(pc, cholesky, row, 0);
    return sps__err(pc->ctx, SPS_ERR_ZERO_PIVOT,
                    "%s: non-finite entry in row %d (1-based %d) of %d after %d fixed-point sweeps "
                    "(factor=par): the sweeps diverged or a pivot vanished; try factor=exact",
                    pc->type->name, row, row + 1, pc->n, K);
}

sps_status sps__parilu_factor(sps_precond *pc, const sps_csr *F, const sps_idx *dpos, int cholesky, int K,
                              double *v)
{
    int64_t bad;
    sps_status st = sps__parilu_host(pc->ctx, F, dpos, cholesky, K, v, &bad, NULL);
    if (st != SPS_OK) return st;
    return bad >= 0 ? sps__parilu_fail(pc, cholesky, bad, K) : SPS_OK;
}
