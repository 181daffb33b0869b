/* SPDX-License-Identifier: MIT */
/* spsolve/precond/mcilu/mcilu.c: multicolor ILU(0) / IC(0) on the host, the
 * reference the kernels (mcilu.cu) are tested against bitwise.
 *
 *   graph     the symmetrized pattern of A, diagonal dropped (A + A' merged row
 *             by row through A's transposed pattern)
 *   colour    Jones-Plassmann rounds (mcilu.h), a worklist of uncoloured nodes
 *   permute   a stable counting sort by colour; PAP' row by row (columns
 *             mapped, sorted), ic0 keeps tril(PAP') and L' as a CSR
 *   factor    the rows in new order (colours in order), each by the row
 *             functions of mcilu.h
 *   apply     y_k = r_perm[k] - L y forward, then backward with U (ic0: L'),
 *             z_perm[k] = y_k: the device runs the rows of a colour at once
 *             and gets the same numbers (a row reads only other colours). */
#include "mcilu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_status oom(sps_precond *pc)
{
    return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "%s:order=color: out of memory", pc->type->name);
}

void sps__mcilu_free(sps_mcilu *m)
{
    if (!m) return;
    sps__free(m->grp);
    sps__free(m->gci);
    sps__free(m->color);
    sps__free(m->perm);
    sps__free(m->cptr);
    sps__free(m->dpos);
    sps__free(m->amap);
    sps__free(m->tmap);
    sps__free(m->y);
    sps__csr_free(&m->F);
    sps__csr_free(&m->T);
    sps__free(m);
}

static void host_destroy(sps_precond *pc)
{
    sps__mcilu_free(pc->impl);
    pc->impl = NULL;
}

/* ---- graph ------------------------------------------------------------------ */

/* A's transposed pattern (rows sorted: filled in row order). */
static sps_status transpose_pattern(sps_context *ctx, const sps_csr *A, sps_idx **trp, sps_idx **tci)
{
    sps_idx n = A->nrows;
    *trp = sps__calloc((size_t)n + 1, sizeof **trp);
    *tci = sps__malloc(sps__mul_size((size_t)(A->nnz ? A->nnz : 1), sizeof **tci));
    sps_idx *next = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *next));
    if (!*trp || !*tci || !next) {
        sps__free(next);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "coloring: out of memory");
    }
    sps_idx *rp = *trp;
    for (sps_idx p = 0; p < A->nnz; p++) rp[A->col_idx[p] + 1]++;
    for (sps_idx i = 0; i < n; i++) rp[i + 1] += rp[i];
    memcpy(next, rp, ((size_t)n + 1) * sizeof *next);
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) (*tci)[next[A->col_idx[p]]++] = i;
    sps__free(next);
    return SPS_OK;
}

static sps_status build_graph(sps_precond *pc, sps_mcilu *m, const sps_csr *A)
{
    sps_idx *trp = NULL, *tci = NULL, n = A->nrows;
    sps_status st = transpose_pattern(pc->ctx, A, &trp, &tci);
    if (st == SPS_OK && !(m->grp = sps__calloc((size_t)n + 1, sizeof *m->grp))) st = oom(pc);
    int64_t total = 0;
    for (sps_idx i = 0; st == SPS_OK && i < n; i++) {
        total += sps__mcilu_merge_row(i, A->row_ptr, A->col_idx, trp, tci, NULL);
        if (total > SPS_IDX_MAX)
            st = sps__err(pc->ctx, SPS_ERR_UNSUPPORTED,
                          "%s:order=color: coloring failed: the symmetrized pattern of A has more "
                          "than %d off-diagonal entries (32-bit indices)",
                          pc->type->name, SPS_IDX_MAX);
        else m->grp[i + 1] = (sps_idx)total;
    }
    if (st == SPS_OK && !(m->gci = sps__malloc(sps__mul_size((size_t)(total ? total : 1), sizeof *m->gci))))
        st = oom(pc);
    for (sps_idx i = 0; st == SPS_OK && i < n; i++)
        sps__mcilu_merge_row(i, A->row_ptr, A->col_idx, trp, tci, m->gci + m->grp[i]);
    sps__free(trp);
    sps__free(tci);
    return st;
}

/* ---- coloring --------------------------------------------------------------- */

sps_status sps__mcilu_color(sps_context *ctx, sps_mcilu *m)
{
    sps_idx n = m->n, *rnd = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *rnd));
    sps_idx *work = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *work));
    m->color = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *m->color));
    if (!rnd || !work || !m->color) {
        sps__free(rnd);
        sps__free(work);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "coloring: out of memory");
    }
    for (sps_idx i = 0; i < n; i++) {
        rnd[i] = m->color[i] = SPS_MC_UNCOLORED;
        work[i] = i;
    }
    sps_idx left = n, r = 0, maxc = -1;
    for (; left > 0; r++) {
        for (sps_idx w = 0; w < left; w++) /* a winner marked now still competes this round */
            if (sps__mcilu_wins(work[w], r, m->grp, m->gci, rnd)) rnd[work[w]] = r;
        sps_idx keep = 0;
        for (sps_idx w = 0; w < left; w++) {
            sps_idx i = work[w];
            if (rnd[i] != r) {
                work[keep++] = i;
                continue;
            }
            m->color[i] = sps__mcilu_pick(i, r, m->grp, m->gci, rnd, m->color);
            if (m->color[i] > maxc) maxc = m->color[i];
        }
        left = keep;
    }
    m->ncolors = maxc + 1;
    m->rounds = r;
    sps__mcilu_set_desc(m);
    sps__free(rnd);
    sps__free(work);
    return SPS_OK;
}

/* ---- permutation and the permuted pattern ----------------------------------- */

typedef struct col_pos {
    sps_idx col, pos;
} col_pos;

static int col_cmp(const void *a, const void *b)
{
    sps_idx x = ((const col_pos *)a)->col, y = ((const col_pos *)b)->col;
    return (x > y) - (x < y);
}

static void sort_row(col_pos *e, sps_idx len)
{
    if (len > 32) {
        qsort(e, (size_t)len, sizeof *e, col_cmp);
        return;
    }
    for (sps_idx a = 1; a < len; a++) {
        col_pos t = e[a];
        sps_idx b = a;
        for (; b > 0 && e[b - 1].col > t.col; b--) e[b] = e[b - 1];
        e[b] = t;
    }
}

static sps_status order_by_color(sps_context *ctx, sps_mcilu *m, sps_idx **iperm)
{
    sps_idx n = m->n, nc = m->ncolors;
    m->perm = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *m->perm));
    m->cptr = sps__calloc((size_t)nc + 2, sizeof *m->cptr);
    *iperm = sps__malloc(sps__mul_size((size_t)n + 1, sizeof **iperm));
    if (!m->perm || !m->cptr || !*iperm) return sps__err(ctx, SPS_ERR_NO_MEMORY, "coloring: out of memory");
    for (sps_idx i = 0; i < n; i++) m->cptr[m->color[i] + 1]++;
    for (sps_idx c = 0; c < nc; c++) m->cptr[c + 1] += m->cptr[c];
    for (sps_idx i = 0; i < n; i++) { /* stable: old indices ascend inside a colour */
        sps_idx k = m->cptr[m->color[i]]++;
        m->perm[k] = i;
        (*iperm)[i] = k;
    }
    for (sps_idx c = nc; c > 0; c--) m->cptr[c] = m->cptr[c - 1];
    m->cptr[0] = 0;
    return SPS_OK;
}

/* Row k of PAP' (ic0: its columns <= k) sorted into e; returns its length. */
static sps_idx permuted_row(const sps_mcilu *m, const sps_csr *A, const sps_idx *iperm, sps_idx k,
                            col_pos *e)
{
    sps_idx i = m->perm[k], len = 0;
    for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
        sps_idx c = iperm[A->col_idx[p]];
        if (!m->cholesky || c <= k) e[len++] = (col_pos){c, p};
    }
    sort_row(e, len);
    return len;
}

static sps_status fill_factor(sps_context *ctx, sps_mcilu *m, const sps_csr *A, const sps_idx *iperm)
{
    sps_idx n = m->n, nnz = 0, maxlen = 0;
    for (sps_idx k = 0; k < n; k++) {
        sps_idx i = m->perm[k], len = A->row_ptr[i + 1] - A->row_ptr[i];
        if (m->cholesky) {
            len = 0;
            for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) len += iperm[A->col_idx[p]] <= k;
        }
        nnz += len;
        if (A->row_ptr[i + 1] - A->row_ptr[i] > maxlen) maxlen = A->row_ptr[i + 1] - A->row_ptr[i];
    }
    sps_status st = sps__csr_alloc(ctx, &m->F, n, n, nnz);
    if (st != SPS_OK) return st;
    col_pos *e = sps__malloc(sps__mul_size((size_t)maxlen + 1, sizeof *e));
    m->amap = sps__malloc(sps__mul_size((size_t)nnz + 1, sizeof *m->amap));
    m->dpos = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *m->dpos));
    if (!e || !m->amap || !m->dpos) {
        sps__free(e);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "coloring: out of memory");
    }
    sps_idx q = 0;
    for (sps_idx k = 0; k < n; k++) {
        sps_idx len = permuted_row(m, A, iperm, k, e);
        for (sps_idx a = 0; a < len; a++, q++) {
            if (e[a].col == k) m->dpos[k] = q;
            m->F.col_idx[q] = e[a].col;
            m->amap[q] = e[a].pos;
            m->F.val[q] = A->val[e[a].pos];
        }
        m->F.row_ptr[k + 1] = q;
    }
    sps__free(e);
    return SPS_OK;
}

/* ic0: T = L' with T.val[q] = F.val[tmap[q]]; dpos[k] = T.row_ptr[k]. */
static sps_status fill_transpose(sps_context *ctx, sps_mcilu *m)
{
    const sps_csr *L = &m->F;
    sps_idx n = m->n;
    sps_status st = sps__csr_alloc(ctx, &m->T, n, n, L->nnz);
    if (st != SPS_OK) return st;
    m->tmap = sps__malloc(sps__mul_size((size_t)L->nnz + 1, sizeof *m->tmap));
    if (!m->tmap) return sps__err(ctx, SPS_ERR_NO_MEMORY, "coloring: out of memory");
    sps_idx *rp = m->T.row_ptr;
    for (sps_idx p = 0; p < L->nnz; p++) rp[L->col_idx[p] + 1]++;
    for (sps_idx k = 0; k < n; k++) rp[k + 1] += rp[k];
    for (sps_idx k = 0; k < n; k++) m->dpos[k] = rp[k];
    for (sps_idx j = 0; j < n; j++)
        for (sps_idx p = L->row_ptr[j]; p < L->row_ptr[j + 1]; p++) {
            sps_idx q = m->dpos[L->col_idx[p]]++;
            m->T.col_idx[q] = j;
            m->tmap[q] = p;
        }
    for (sps_idx k = 0; k < n; k++) m->dpos[k] = rp[k];
    return SPS_OK;
}

sps_status sps__mcilu_permute(sps_context *ctx, sps_mcilu *m, const sps_csr *A)
{
    sps_idx *iperm = NULL;
    sps_status st = order_by_color(ctx, m, &iperm);
    if (st == SPS_OK) st = fill_factor(ctx, m, A, iperm);
    if (st == SPS_OK && m->cholesky) st = fill_transpose(ctx, m);
    sps__free(iperm);
    return st;
}

/* ---- factorization and apply ------------------------------------------------ */

void sps__mcilu_factor(const sps_mcilu *m, double *v, sps_idx *bad)
{
    const sps_idx *rp = m->F.row_ptr, *ci = m->F.col_idx;
    *bad = -1;
    for (sps_idx k = 0; k < m->n; k++) { /* colour by colour: cptr ascends with k */
        int ok = m->cholesky ? sps__mcilu_ic_row(k, rp, ci, v) : sps__mcilu_ilu_row(k, rp, ci, m->dpos, v);
        if (!ok) {
            *bad = k;
            return;
        }
    }
}

static void gather_t(sps_mcilu *m)
{
    for (sps_idx q = 0; m->cholesky && q < m->T.nnz; q++) m->T.val[q] = m->F.val[m->tmap[q]];
}

static sps_status apply_host(sps_precond *pc, const double *r, double *z)
{
    sps_mcilu *m = pc->impl;
    const sps_csr *F = &m->F, *U = m->cholesky ? &m->T : &m->F;
    const sps_idx *rp = F->row_ptr;
    for (sps_idx k = 0; k < m->n; k++) {
        sps_idx hi = m->cholesky ? rp[k + 1] - 1 : m->dpos[k];
        sps__mcilu_fwd_row(k, rp[k], hi, F->col_idx, F->val, !m->cholesky, m->perm, r, m->y);
    }
    for (sps_idx k = m->n - 1; k >= 0; k--)
        sps__mcilu_bwd_row(k, m->dpos[k], U->row_ptr[k + 1], U->col_idx, U->val, m->perm, m->y, z);
    return SPS_OK;
}

static sps_status pivot_failed(sps_precond *pc, const sps_mcilu *m, sps_idx bad)
{
    return sps__pc_pivot_error(pc, m->cholesky, m->perm[bad], 0);
}

/* ---- setup, refresh ---------------------------------------------------------- */

static sps_status host_rest(sps_precond *pc, sps_mcilu *m, const sps_csr *A)
{
    double t0 = sps__now_ms();
    sps_status st = sps__mcilu_color(pc->ctx, m);
    double t1 = sps__now_ms();
    if (st == SPS_OK) st = sps__mcilu_permute(pc->ctx, m, A);
    double t2 = sps__now_ms();
    m->ms[1] = t1 - t0;
    m->ms[2] = t2 - t1;
    if (st != SPS_OK) return st;
    sps_idx bad;
    sps__mcilu_factor(m, m->F.val, &bad);
    m->ms[3] = sps__now_ms() - t2;
    if (bad >= 0) return pivot_failed(pc, m, bad);
    gather_t(m);
    if (!(m->y = sps__malloc(sps__mul_size((size_t)m->n, sizeof *m->y)))) return oom(pc);
    pc->apply = apply_host;
    return SPS_OK;
}

sps_status sps__mcilu_setup_host(sps_precond *pc, const sps_pc_input *in, int cholesky)
{
    const sps_csr *A = &in->A->A;
    sps_mcilu *m = sps__calloc(1, sizeof *m);
    if (!m) return oom(pc);
    pc->impl = m;
    pc->destroy = host_destroy;
    m->n = A->nrows;
    m->cholesky = cholesky;
    if (in->gpu) return SPS_OK; /* sps__mcilu_setup_dev does it all, from A's device copy */
    double t0 = sps__now_ms();
    sps_idx first, missing = sps__pc_find_diag(A, NULL, &first);
    if (missing) return sps__pc_pivot_error(pc, cholesky, first, missing);
    sps_status st = build_graph(pc, m, A);
    m->ms[0] = sps__now_ms() - t0;
    if (st != SPS_OK) return st;
    return host_rest(pc, m, A);
}

void sps__mcilu_set_desc(sps_mcilu *m)
{
    snprintf(m->desc, sizeof m->desc,
             "multicolor: %d colours in %d Jones-Plassmann rounds; apply: %d sweeps by colour",
             m->ncolors, m->rounds, 2 * m->ncolors);
}

const char *sps__mcilu_describe(const sps_precond *pc)
{
    if (!sps__mcilu_is(pc)) return NULL;
#if SPS_HAVE_CUDA
    if (sps_context_on_gpu(pc->ctx)) return sps__mcilu_describe_dev(pc);
#endif
    return ((const sps_mcilu *)pc->impl)->desc;
}

int sps__mcilu_is(const sps_precond *pc)
{
    if (!pc || !pc->impl) return 0;
#if SPS_HAVE_CUDA
    if (sps_context_on_gpu(pc->ctx)) return sps__mcilu_is_dev(pc);
#endif
    return pc->destroy == host_destroy;
}

sps_status sps__mcilu_refresh(sps_precond *pc, const sps_matrix *A)
{
    if (!pc->impl) return SPS_OK; /* n = 0 */
#if SPS_HAVE_CUDA
    if (sps_context_on_gpu(pc->ctx)) return sps__mcilu_refresh_dev(pc, A);
#endif
    sps_mcilu *m = pc->impl;
    double *v = sps__malloc(sps__mul_size((size_t)m->F.nnz + 1, sizeof *v));
    if (!v) return oom(pc);
    for (sps_idx q = 0; q < m->F.nnz; q++) v[q] = A->A.val[m->amap[q]];
    sps_idx bad;
    sps__mcilu_factor(m, v, &bad);
    if (bad >= 0) {
        sps__free(v);
        return pivot_failed(pc, m, bad);
    }
    sps__free(m->F.val);
    m->F.val = v;
    gather_t(m);
    return SPS_OK;
}

sps_status sps__mcilu_fetch(const sps_precond *pc, sps_mcilu_view *view, sps_idx *color, sps_idx *perm,
                            double *fval)
{
    if (!pc || !pc->impl)
        return sps__err(pc ? pc->ctx : NULL, SPS_ERR_INVALID_ARG, "mcilu fetch: no multicolor factor");
#if SPS_HAVE_CUDA
    if (sps_context_on_gpu(pc->ctx)) return sps__mcilu_fetch_dev(pc, view, color, perm, fval);
#endif
    if (pc->destroy != host_destroy)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG, "%s: not order=color", pc->name);
    const sps_mcilu *m = pc->impl;
    if (view) *view = (sps_mcilu_view){m->n, m->ncolors, m->rounds, m->F.nnz, {m->ms[0], m->ms[1], m->ms[2], m->ms[3]}};
    if (color) memcpy(color, m->color, (size_t)m->n * sizeof *color);
    if (perm) memcpy(perm, m->perm, (size_t)m->n * sizeof *perm);
    if (fval) memcpy(fval, m->F.val, (size_t)m->F.nnz * sizeof *fval);
    return SPS_OK;
}
