/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/amg_spgemm.c: the host sparse products of the AMG
 * setup (P = S P_tent, A P, P'(A P)), P's transpose, and the row-parallel
 * loop the other setup passes use (sps__amg_par_rows).
 *
 * C = X Y row by row (Gustavson): one pass whose terms are summed in X's
 * row order then Y's, each row sorted by column as soon as it is done, into
 * a buffer per block of rows; a prefix sum; the buffers copied into C. Rows are split into contiguous blocks over the context's
 * threads (sps_context_set_threads; the online cores by default), each row
 * computed by one thread with the serial code: the result is bitwise the
 * same for any thread count. */
#include "amg.h"

#include <pthread.h>
#include <string.h>

#define MIN_ROWS_PER_THREAD 4096
/* A product of fewer rows than the threads' minimum is split by its terms
 * instead, this many a block at least: a coarse level's few long rows
 * (poisson3d-jump:128,1e4's level 3, 551 rows of 182 entries: its A P and
 * R (A P) took 6.5 ms on one thread of this 2-core machine, most of the
 * device re-setup's time spent on the host levels). */
#define MIN_TERMS_PER_THREAD 65536

typedef struct job {
    const sps_csr *X, *Y;
    sps_csr *C;
    sps_idx lo, hi;
    sps_idx *work;  /* Y->ncols + 1 slots (-1 on entry) */
    sps_idx next;   /* the next row of the block to compute */
    sps_idx *col;   /* the block's rows, sorted, one after the other */
    double *val;
    int64_t used, cap; /* entries in col/val, and room */
    int pass;       /* 0 rows into the block's buffer, 1 copy into C, 2 numeric into C's pattern */
    pthread_t tid;
    int started;
} job;

/* Entries row i of X Y can have at most (the sum of Y's row lengths it touches). */
static int64_t row_bound(const sps_csr *X, const sps_csr *Y, sps_idx i)
{
    int64_t c = 0;
    for (sps_idx p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++)
        c += Y->row_ptr[X->col_idx[p] + 1] - Y->row_ptr[X->col_idx[p]];
    return c;
}

/* Row i's entries in first touch order at col/val + w (pos: below w for
 * every column not yet in this row); returns the entry count. */
static sps_idx fill_row(const sps_csr *X, const sps_csr *Y, sps_idx i, sps_idx *pos, sps_idx *col,
                        double *val, sps_idx w0)
{
    sps_idx w = w0;
    for (sps_idx p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
        sps_idx k = X->col_idx[p];
        double x = X->val[p];
        for (sps_idx q = Y->row_ptr[k]; q < Y->row_ptr[k + 1]; q++) {
            sps_idx j = Y->col_idx[q];
            if (pos[j] < w0) {
                pos[j] = w;
                col[w] = j;
                val[w++] = x * Y->val[q];
            } else {
                val[pos[j]] += x * Y->val[q];
            }
        }
    }
    return w - w0;
}

/* pass 0: the block's rows from b->next on, each summed in X's row order
 * then Y's and sorted by column, appended to b's buffer; the row's count in
 * C->row_ptr[i + 1]. Stops at a row that does not fit (the caller grows the
 * buffer and runs the pass again). Positions in the buffer only grow, so
 * pos[j] < the row's start means "not in this row". */
static void block_rows(job *b)
{
    for (; b->next < b->hi; b->next++) {
        sps_idx i = b->next;
        int64_t ub = row_bound(b->X, b->Y, i);
        if (b->used + ub > b->cap || b->used + ub > SPS_IDX_MAX) return;
        sps_idx w0 = (sps_idx)b->used, m = fill_row(b->X, b->Y, i, b->work, b->col, b->val, w0);
        sps_idx rp[2] = {0, m};
        sps__csr_sort_rows(1, rp, b->col + w0, b->val + w0);
        b->C->row_ptr[i + 1] = m;
        b->used += m;
    }
}

/* pass 1: the block's buffer into C at its rows' place. */
static void copy_block(job *b)
{
    sps_idx at = b->C->row_ptr[b->lo];
    if (b->used == 0) return;
    memcpy(b->C->col_idx + at, b->col, (size_t)b->used * sizeof *b->col);
    memcpy(b->C->val + at, b->val, (size_t)b->used * sizeof *b->val);
}

/* pass 2: C's values = X Y in C's pattern, in block_rows' order (pos: any). */
static void numeric_rows(job *b)
{
    const sps_csr *X = b->X, *Y = b->Y;
    sps_csr *C = b->C;
    sps_idx *pos = b->work;
    for (sps_idx i = b->lo; i < b->hi; i++) {
        for (sps_idx p = C->row_ptr[i]; p < C->row_ptr[i + 1]; p++) {
            pos[C->col_idx[p]] = p;
            C->val[p] = 0.0;
        }
        for (sps_idx p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            sps_idx k = X->col_idx[p];
            for (sps_idx q = Y->row_ptr[k]; q < Y->row_ptr[k + 1]; q++)
                C->val[pos[Y->col_idx[q]]] += X->val[p] * Y->val[q];
        }
    }
}

static void *run_job(void *arg)
{
    job *b = arg;
    switch (b->pass) {
    case 0: block_rows(b); break;
    case 1: copy_block(b); break;
    default: numeric_rows(b); break;
    }
    return NULL;
}

/* One pass over the blocks: threads for all but the first (which runs
 * here, as does any block whose thread cannot start). */
static void run_pass(job *jobs, int nj, int pass)
{
    for (int t = 0; t < nj; t++) {
        jobs[t].pass = pass;
        jobs[t].started = t > 0 && pthread_create(&jobs[t].tid, NULL, run_job, &jobs[t]) == 0;
    }
    run_job(&jobs[0]);
    for (int t = 1; t < nj; t++) {
        if (jobs[t].started) pthread_join(jobs[t].tid, NULL);
        else run_job(&jobs[t]);
    }
}

/* ---- a row-parallel loop ------------------------------------------------ */

typedef struct rows_job {
    sps_amg_rows_fn fn;
    void *arg;
    sps_idx lo, hi;
    pthread_t tid;
    int started;
} rows_job;

static void *run_rows(void *arg)
{
    rows_job *j = arg;
    j->fn(j->arg, j->lo, j->hi);
    return NULL;
}

void sps__amg_par_rows(sps_context *ctx, sps_idx n, sps_amg_rows_fn fn, void *arg)
{
    rows_job jobs[SPS_MAX_THREADS];
    int nj = sps__threads(ctx);
    if ((int64_t)nj * MIN_ROWS_PER_THREAD > n) nj = (int)(n / MIN_ROWS_PER_THREAD);
    if (nj < 1) nj = 1;
    for (int t = 0; t < nj; t++) {
        rows_job *j = &jobs[t];
        j->fn = fn;
        j->arg = arg;
        j->lo = (sps_idx)((int64_t)n * t / nj);
        j->hi = (sps_idx)((int64_t)n * (t + 1) / nj);
        j->started = t > 0 && pthread_create(&j->tid, NULL, run_rows, j) == 0;
    }
    run_rows(&jobs[0]);
    for (int t = 1; t < nj; t++) {
        if (jobs[t].started) pthread_join(jobs[t].tid, NULL);
        else run_rows(&jobs[t]);
    }
}

/* ---- products ------------------------------------------------------------ */

typedef struct plan {
    job *jobs;
    int nj;
} plan;

/* The blocks' first rows cut[0..nj] (cut[nj] = n): equal rows, or, when X
 * has too few rows for every thread, about equal terms (row_bound's); the
 * product does not depend on them (each row is its own). */
static int split_rows(sps_context *ctx, const sps_csr *X, const sps_csr *Y, sps_idx *cut)
{
    sps_idx n = X->nrows;
    int nt = sps__threads(ctx), nj = nt;
    if ((int64_t)nj * MIN_ROWS_PER_THREAD > n) nj = (int)(n / MIN_ROWS_PER_THREAD);
    if (nj < 1) nj = 1;
    if (nj == nt || n < 2) {
        for (int t = 0; t <= nj; t++) cut[t] = (sps_idx)((int64_t)n * t / nj);
        return nj;
    }
    int64_t total = 0, run = 0;
    for (sps_idx i = 0; i < n; i++) total += row_bound(X, Y, i);
    int64_t m = total / MIN_TERMS_PER_THREAD;
    nj = m < nt ? (int)m : nt;
    if (nj > n) nj = (int)n;
    if (nj < 1) nj = 1;
    int t = 1;
    cut[0] = 0;
    for (sps_idx i = 0; i < n && t < nj; i++) {
        run += row_bound(X, Y, i);
        while (t < nj && run >= total * t / nj) cut[t++] = i + 1;
    }
    for (; t <= nj; t++) cut[t] = n;
    return nj;
}

/* Blocks of X's rows (split_rows), each with Y->ncols + 1 work slots set to -1. */
static sps_status plan_jobs(sps_context *ctx, const sps_csr *X, const sps_csr *Y, sps_csr *C, plan *pl)
{
    sps_idx cut[SPS_MAX_THREADS + 1];
    int nj = split_rows(ctx, X, Y, cut);
    pl->nj = nj;
    pl->jobs = sps__calloc((size_t)nj, sizeof *pl->jobs);
    if (!pl->jobs) return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    for (int t = 0; t < nj; t++) {
        job *b = &pl->jobs[t];
        b->X = X;
        b->Y = Y;
        b->C = C;
        b->lo = b->next = cut[t];
        b->hi = cut[t + 1];
        size_t slots = (size_t)Y->ncols + 1;
        b->work = sps__malloc(sps__mul_size(slots, sizeof *b->work));
        if (!b->work) return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
        for (size_t j = 0; j < slots; j++) b->work[j] = -1;
    }
    return SPS_OK;
}

static void plan_free(plan *pl)
{
    for (int t = 0; pl->jobs && t < pl->nj; t++) {
        sps__free(pl->jobs[t].work);
        sps__free(pl->jobs[t].col);
        sps__free(pl->jobs[t].val);
    }
    sps__free(pl->jobs);
}

/* Room in b's buffer for its next row and then some (doubling); here, on
 * the calling thread, so allocation failures are reported in order. */
static sps_status grow_block(sps_context *ctx, job *b)
{
    int64_t need = b->used + row_bound(b->X, b->Y, b->next), cap = b->cap ? 2 * b->cap : 8 * (int64_t)(b->hi - b->lo) + 64;
    if (need > SPS_IDX_MAX)
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "amg: a product has more entries than the 32-bit index limit %d", SPS_IDX_MAX);
    if (cap < need) cap = need;
    if (cap > SPS_IDX_MAX) cap = SPS_IDX_MAX;
    sps_idx *c = sps__realloc(b->col, sps__mul_size((size_t)cap, sizeof *c));
    if (c) b->col = c;
    double *v = c ? sps__realloc(b->val, sps__mul_size((size_t)cap, sizeof *v)) : NULL;
    if (v) b->val = v;
    if (!c || !v) return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    b->cap = cap;
    return SPS_OK;
}

/* Pass 0 until every block is done, growing the buffers in between. */
static sps_status symbolic(sps_context *ctx, plan *pl)
{
    for (;;) {
        run_pass(pl->jobs, pl->nj, 0);
        int more = 0;
        for (int t = 0; t < pl->nj; t++) {
            job *b = &pl->jobs[t];
            if (b->next >= b->hi) continue;
            sps_status st = grow_block(ctx, b);
            if (st != SPS_OK) return st;
            more = 1;
        }
        if (!more) return SPS_OK;
    }
}

/* Row pointer from the counts in C->row_ptr[1..n]. */
static sps_status prefix(sps_context *ctx, sps_csr *C)
{
    int64_t total = 0;
    C->row_ptr[0] = 0;
    for (sps_idx i = 0; i < C->nrows; i++) {
        total += C->row_ptr[i + 1];
        if (total > SPS_IDX_MAX)
            return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                            "amg: a product has more entries than the 32-bit index limit %d", SPS_IDX_MAX);
        C->row_ptr[i + 1] = (sps_idx)total;
    }
    return SPS_OK;
}

/* One traversal: each block sums and sorts its rows into its own buffer
 * (the terms of an entry in X's row order, then Y's), then the buffers are
 * copied into C. The sums are those of a count-then-fill product, so the
 * result is bitwise the same. */
sps_status sps__amg_spgemm(sps_context *ctx, const sps_csr *X, const sps_csr *Y, sps_csr *C)
{
    memset(C, 0, sizeof *C);
    plan pl = {NULL, 0};
    sps_status st = sps__csr_alloc(ctx, C, X->nrows, Y->ncols, 0);
    if (st == SPS_OK) st = plan_jobs(ctx, X, Y, C, &pl);
    if (st == SPS_OK) st = symbolic(ctx, &pl);
    if (st == SPS_OK) st = prefix(ctx, C);
    sps_idx nnz = st == SPS_OK ? C->row_ptr[C->nrows] : 0;
    if (st == SPS_OK) {
        sps_idx *ci = sps__malloc(sps__mul_size((size_t)nnz + 1, sizeof *ci));
        double *v = sps__malloc(sps__mul_size((size_t)nnz + 1, sizeof *v));
        sps__free(C->col_idx);
        sps__free(C->val);
        C->col_idx = ci;
        C->val = v;
        C->nnz = nnz;
        if (!ci || !v) st = sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    }
    if (st == SPS_OK) run_pass(pl.jobs, pl.nj, 1);
    plan_free(&pl);
    if (st != SPS_OK) sps__csr_free(C);
    return st;
}

sps_status sps__amg_spgemm_into(sps_context *ctx, const sps_csr *X, const sps_csr *Y, sps_csr *C)
{
    plan pl = {NULL, 0};
    sps_status st = plan_jobs(ctx, X, Y, C, &pl);
    if (st == SPS_OK) run_pass(pl.jobs, pl.nj, 2);
    plan_free(&pl);
    return st;
}

sps_status sps__amg_transpose(sps_context *ctx, const sps_csr *X, sps_csr *T)
{
    sps_status st = sps__csr_alloc(ctx, T, X->ncols, X->nrows, X->nnz);
    if (st != SPS_OK) return st;
    for (sps_idx p = 0; p < X->nnz; p++) T->row_ptr[X->col_idx[p] + 1]++;
    for (sps_idx i = 0; i < X->ncols; i++) T->row_ptr[i + 1] += T->row_ptr[i];
    sps_idx *next = sps__malloc(sps__mul_size((size_t)X->ncols + 1, sizeof *next));
    if (!next) {
        sps__csr_free(T);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    }
    memcpy(next, T->row_ptr, ((size_t)X->ncols + 1) * sizeof *next);
    for (sps_idx i = 0; i < X->nrows; i++) /* rows in order: T's rows come out sorted */
        for (sps_idx p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            sps_idx q = next[X->col_idx[p]]++;
            T->col_idx[q] = i;
            T->val[q] = X->val[p];
        }
    sps__free(next);
    return SPS_OK;
}

