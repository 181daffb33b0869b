/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/amg_spgemm.c: the host sparse products of the AMG
 * setup (P = S P_tent, A P, P'(A P)), P's transpose, and the row-parallel
 * loop the other setup passes use (sps__amg_par_rows).
 *
 * C = X Y row by row (Gustavson): a count pass, a prefix sum, a fill pass
 * whose terms are summed in X's row order then Y's, and a sort of each row
 * by column. Rows are split into contiguous blocks over the context's
 * threads (sps_context_set_threads; the online cores by default), each row
 * computed by one thread with the serial code: the result is bitwise the
 * same for any thread count. */
#include "amg.h"

#include <pthread.h>
#include <string.h>

#define MIN_ROWS_PER_THREAD 4096

typedef struct job {
    const sps_csr *X, *Y;
    sps_csr *C;
    sps_idx lo, hi;
    sps_idx *work; /* Y->ncols + 1 slots */
    int pass;      /* 0 count, 1 fill, 2 sort, 3 numeric into C's pattern */
    pthread_t tid;
    int started;
} job;

/* pass 0: C->row_ptr[i + 1] = entries of row i (mark: -1 on entry). */
static void count_rows(job *b)
{
    const sps_csr *X = b->X, *Y = b->Y;
    sps_idx *mark = b->work;
    for (sps_idx i = b->lo; i < b->hi; i++) {
        int64_t c = 0;
        for (sps_idx p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            sps_idx k = X->col_idx[p];
            for (sps_idx q = Y->row_ptr[k]; q < Y->row_ptr[k + 1]; q++)
                if (mark[Y->col_idx[q]] != i) {
                    mark[Y->col_idx[q]] = i;
                    c++;
                }
        }
        b->C->row_ptr[i + 1] = c > SPS_IDX_MAX ? SPS_IDX_MAX : (sps_idx)c;
    }
    for (sps_idx j = 0; j < Y->ncols; j++) mark[j] = -1; /* for fill_rows */
}

/* pass 1: row i's entries, first touch order (pos: -1 on entry, then below
 * the row's start for every later row of the block). */
static void fill_rows(job *b)
{
    const sps_csr *X = b->X, *Y = b->Y;
    sps_csr *C = b->C;
    sps_idx *pos = b->work;
    for (sps_idx i = b->lo; i < b->hi; i++) {
        sps_idx w = C->row_ptr[i];
        for (sps_idx p = X->row_ptr[i]; p < X->row_ptr[i + 1]; p++) {
            sps_idx k = X->col_idx[p];
            double x = X->val[p];
            for (sps_idx q = Y->row_ptr[k]; q < Y->row_ptr[k + 1]; q++) {
                sps_idx j = Y->col_idx[q];
                if (pos[j] < C->row_ptr[i]) {
                    pos[j] = w;
                    C->col_idx[w] = j;
                    C->val[w++] = x * Y->val[q];
                } else {
                    C->val[pos[j]] += x * Y->val[q];
                }
            }
        }
    }
}

/* pass 2: sort the block's rows (no duplicates: nothing moves between rows). */
static void sort_rows(job *b)
{
    sps_csr *C = b->C;
    sps_idx base = C->row_ptr[b->lo], *rp = b->work;
    for (sps_idx i = b->lo; i <= b->hi; i++) rp[i - b->lo] = C->row_ptr[i] - base;
    sps__csr_sort_rows(b->hi - b->lo, rp, C->col_idx + base, C->val + base);
}

/* pass 3: C's values = X Y in C's pattern, in fill_rows' order (pos: any). */
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
    case 0: count_rows(b); break;
    case 1: fill_rows(b); break;
    case 2: sort_rows(b); break;
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

/* Blocks of X's rows, each with Y->ncols + 1 work slots set to -1 (the
 * sort pass needs block + 1: the larger of the two). */
static sps_status plan_jobs(sps_context *ctx, const sps_csr *X, const sps_csr *Y, sps_csr *C, plan *pl)
{
    sps_idx n = X->nrows;
    int nj = sps__threads(ctx);
    if ((int64_t)nj * MIN_ROWS_PER_THREAD > n) nj = (int)(n / MIN_ROWS_PER_THREAD);
    if (nj < 1) nj = 1;
    pl->nj = nj;
    pl->jobs = sps__calloc((size_t)nj, sizeof *pl->jobs);
    if (!pl->jobs) return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    for (int t = 0; t < nj; t++) {
        job *b = &pl->jobs[t];
        b->X = X;
        b->Y = Y;
        b->C = C;
        b->lo = (sps_idx)((int64_t)n * t / nj);
        b->hi = (sps_idx)((int64_t)n * (t + 1) / nj);
        size_t slots = (size_t)(Y->ncols > b->hi - b->lo ? Y->ncols : b->hi - b->lo) + 1;
        b->work = sps__malloc(sps__mul_size(slots, sizeof *b->work));
        if (!b->work) return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
        for (size_t j = 0; j < slots; j++) b->work[j] = -1;
    }
    return SPS_OK;
}

static void plan_free(plan *pl)
{
    for (int t = 0; pl->jobs && t < pl->nj; t++) sps__free(pl->jobs[t].work);
    sps__free(pl->jobs);
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

sps_status sps__amg_spgemm(sps_context *ctx, const sps_csr *X, const sps_csr *Y, sps_csr *C)
{
    memset(C, 0, sizeof *C);
    plan pl = {NULL, 0};
    sps_status st = sps__csr_alloc(ctx, C, X->nrows, Y->ncols, 0);
    if (st == SPS_OK) st = plan_jobs(ctx, X, Y, C, &pl);
    if (st == SPS_OK) {
        run_pass(pl.jobs, pl.nj, 0);
        st = prefix(ctx, C);
    }
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
    if (st == SPS_OK) {
        run_pass(pl.jobs, pl.nj, 1);
        run_pass(pl.jobs, pl.nj, 2);
    }
    plan_free(&pl);
    if (st != SPS_OK) sps__csr_free(C);
    return st;
}

sps_status sps__amg_spgemm_into(sps_context *ctx, const sps_csr *X, const sps_csr *Y, sps_csr *C)
{
    plan pl = {NULL, 0};
    sps_status st = plan_jobs(ctx, X, Y, C, &pl);
    if (st == SPS_OK) run_pass(pl.jobs, pl.nj, 3);
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

