/* SPDX-License-Identifier: MIT */
/* spsolve/precond/bjacobi/bjacobi.c: block-Jacobi, the host reference and
 * the table (`bjacobi`, `bjacobi:block=K`).
 *
 * M = blockdiag(A_11, A_22, ...) over blocks of consecutive rows: with
 * block=K (1..32) fixed blocks of K rows (the last one shorter); without it,
 * supervariables: maximal runs of consecutive rows with the same column
 * pattern (the unknowns of one node in a finite-element system), cut at 32.
 * Each block is inverted densely at setup (Gauss-Jordan with partial
 * pivoting, on the host; a singular block is refused, naming its rows) and
 * z_i = sum_j inv_b(i, j) r_j over the row's block: one thread per row on the
 * device, the same order of terms as here, no reduction.
 *
 * For symmetric A the block inverses are symmetric (to rounding), and for SPD
 * A positive definite (principal submatrices are SPD): fit for CG. */
#include "bjacobi.h"

#include <math.h>
#include <string.h>

static void bj_free(sps_bjacobi *b)
{
    sps__free(b->start);
    sps__free(b->blk);
    sps__free(b->off);
    sps__free(b->inv);
    sps__free(b);
}

static void host_destroy(sps_precond *pc)
{
    if (pc->impl) bj_free(pc->impl);
    pc->impl = NULL;
}

static int same_pattern(const sps_csr *A, sps_idx i, sps_idx j)
{
    sps_idx li = A->row_ptr[i + 1] - A->row_ptr[i], lj = A->row_ptr[j + 1] - A->row_ptr[j];
    return li == lj && memcmp(A->col_idx + A->row_ptr[i], A->col_idx + A->row_ptr[j],
                              (size_t)li * sizeof *A->col_idx) == 0;
}

/* The block starts (b->start, b->nblocks, b->max_block); start has room for n + 1. */
static void partition(const sps_csr *A, int block, sps_bjacobi *b)
{
    sps_idx n = A->nrows, nb = 0;
    b->max_block = 0;
    for (sps_idx s = 0; s < n;) {
        sps_idx e = s + 1;
        if (block > 0) e = s + block < n ? s + block : n;
        else
            while (e < n && e - s < SPS_BJACOBI_MAX_BLOCK && same_pattern(A, s, e)) e++;
        b->start[nb++] = s;
        if (e - s > b->max_block) b->max_block = (int)(e - s);
        s = e;
    }
    b->start[nb] = n;
    b->nblocks = nb;
}

/* Invert the dense m x m row-major a into inv (Gauss-Jordan, partial
 * pivoting); a is destroyed. Returns the local row of a zero pivot, or -1. */
static int invert(int m, double *a, double *inv)
{
    for (int i = 0; i < m * m; i++) inv[i] = 0.0;
    for (int i = 0; i < m; i++) inv[i * m + i] = 1.0;
    for (int k = 0; k < m; k++) {
        int p = k;
        for (int i = k + 1; i < m; i++)
            if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
        if (a[p * m + k] == 0.0) return k;
        if (p != k)
            for (int j = 0; j < m; j++) {
                double t = a[k * m + j]; a[k * m + j] = a[p * m + j]; a[p * m + j] = t;
                t = inv[k * m + j]; inv[k * m + j] = inv[p * m + j]; inv[p * m + j] = t;
            }
        double piv = 1.0 / a[k * m + k];
        for (int j = 0; j < m; j++) {
            a[k * m + j] *= piv;
            inv[k * m + j] *= piv;
        }
        for (int i = 0; i < m; i++) {
            double f = a[i * m + k];
            if (i == k || f == 0.0) continue;
            for (int j = 0; j < m; j++) {
                a[i * m + j] -= f * a[k * m + j];
                inv[i * m + j] -= f * inv[k * m + j];
            }
        }
    }
    return -1;
}

static sps_status invert_blocks(sps_precond *pc, const sps_csr *A, sps_bjacobi *b)
{
    double a[SPS_BJACOBI_MAX_BLOCK * SPS_BJACOBI_MAX_BLOCK];
    for (sps_idx k = 0; k < b->nblocks; k++) {
        sps_idx s = b->start[k];
        int m = (int)(b->start[k + 1] - s);
        memset(a, 0, (size_t)m * m * sizeof *a);
        for (int i = 0; i < m; i++) {
            b->blk[s + i] = k;
            for (sps_idx p = A->row_ptr[s + i]; p < A->row_ptr[s + i + 1]; p++) {
                sps_idx j = A->col_idx[p] - s;
                if (j >= 0 && j < m) a[i * m + j] += A->val[p];
            }
        }
        int bad = invert(m, a, b->inv + b->off[k]);
        if (bad >= 0)
            return sps__err(pc->ctx, SPS_ERR_ZERO_PIVOT,
                            "bjacobi: the diagonal block of rows %d..%d (1-based %d..%d) of %d is "
                            "singular; try a smaller block=K, or --precond ilu0",
                            s, s + m - 1, s + 1, s + m, pc->n);
    }
    return SPS_OK;
}

static sps_status apply_host(sps_precond *pc, const double *r, double *z)
{
    const sps_bjacobi *b = pc->impl;
    for (sps_idx i = 0; i < pc->n; i++) {
        sps_idx k = b->blk[i], s = b->start[k];
        int m = (int)(b->start[k + 1] - s);
        const double *row = b->inv + b->off[k] + (int64_t)(i - s) * m;
        double acc = 0.0;
        for (int j = 0; j < m; j++) acc += row[j] * r[s + j];
        z[i] = acc;
    }
    return SPS_OK;
}

static sps_status bjacobi_setup(sps_precond *pc, const sps_pc_input *in)
{
    const sps_csr *A = &in->A->A;
    const sps_bjacobi_prm *prm = pc->prm;
    sps_idx n = pc->n;
    sps_bjacobi *b = sps__calloc(1, sizeof *b);
    if (!b) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "bjacobi: out of memory");
    pc->impl = b;
    pc->destroy = host_destroy;
    pc->apply = apply_host;
    b->start = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *b->start));
    b->blk = sps__malloc(sps__mul_size((size_t)n, sizeof *b->blk));
    if (!b->start || !b->blk) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "bjacobi: out of memory");
    partition(A, prm->block, b);
    b->off = sps__malloc(sps__mul_size((size_t)b->nblocks + 1, sizeof *b->off));
    if (!b->off) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "bjacobi: out of memory");
    b->off[0] = 0;
    for (sps_idx k = 0; k < b->nblocks; k++) {
        int64_t m = b->start[k + 1] - b->start[k];
        b->off[k + 1] = b->off[k] + m * m;
    }
    b->inv = sps__malloc(sps__mul_size((size_t)b->off[b->nblocks], sizeof *b->inv));
    if (!b->inv) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "bjacobi: out of memory");
    return invert_blocks(pc, A, b);
}

#if SPS_HAVE_CUDA
static sps_status bjacobi_setup_dev(sps_precond *pc, const sps_pc_input *in, void *host)
{
    (void)in;
    return sps__bjacobi_gpu(pc, host);
}
#endif

static sps_status bjacobi_set(sps_context *ctx, void *p, const char *key, const char *value)
{
    return sps__pc_int(ctx, "bjacobi", key, value, 1, SPS_BJACOBI_MAX_BLOCK,
                       &((sps_bjacobi_prm *)p)->block);
}

const sps_pc_type sps_pc_bjacobi = {
    .name = "bjacobi",
    .summary = "block-Jacobi: dense inverses of diagonal blocks (block=K rows, 1..32; "
               "default: supervariables)",
    .caps = SPS_PCT_SYMMETRIC,
    .keys = "block",
    .prm_size = sizeof(sps_bjacobi_prm),
    .prm_set = bjacobi_set,
    .setup_host = bjacobi_setup,
    .setup_dev = SPS_PC_DEV(bjacobi_setup_dev),
};
