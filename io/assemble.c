/* SPDX-License-Identifier: MIT */
/* spsolve/io/assemble.c: triplets read from a file become the CSR in place
 *
 * The readers parse entries in file order into three arrays (row, column,
 * value). The column and value arrays become the CSR's own arrays: a
 * counting pass gives each row's start, the row array is overwritten with
 * each entry's destination (file order within a row, mirrored entries of a
 * symmetric file appended and placed right after the entry they mirror,
 * exactly as sps__csr_from_triplets orders them), the permutation is applied
 * in place (by blocks, then cycles), and rows are sorted and duplicates
 * summed as everywhere else. Peak memory: 16 bytes per CSR entry plus 4 per
 * row, against 12 + 4 for the CSR itself, instead of holding the triplets
 * (16 bytes per entry) and the CSR at once. The result is bitwise the
 * matrix sps__csr_from_triplets builds from the same triplets.
 *
 * On n threads (the context's) every step runs on all of them: the check
 * for a file already in CSR order and its row pointer, the counting pass
 * (atomic increments: the counts do not depend on the order), the
 * destinations of a general file (each thread owns a range of rows), the
 * permutation's block step (PARADIS-style stripes) and its in-block cycles,
 * and the row sort (ranges of rows). Every entry's destination is the same
 * as on one thread and every row is sorted by the same code, so the result
 * is bitwise the same whatever n is. Serial still: the prefix sum of the
 * row counts, and the destinations of symmetric files. */
#include "parse.h"

#include <pthread.h>
#include <string.h>

/* ---- running a task on n threads ---------------------------------------- */

typedef struct io_run_arg {
    sps_io_task fn;
    void *arg;
    int i, n;
} io_run_arg;

static void *io_run_thread(void *p)
{
    io_run_arg *a = p;
    a->fn(a->arg, a->i, a->n);
    return NULL;
}

void sps__io_run(int n, sps_io_task fn, void *arg)
{
    pthread_t tid[SPS_MAX_THREADS];
    io_run_arg a[SPS_MAX_THREADS];
    int started[SPS_MAX_THREADS];
    if (n > SPS_MAX_THREADS) n = SPS_MAX_THREADS;
    for (int i = 1; i < n; i++) {
        a[i] = (io_run_arg){fn, arg, i, n};
        started[i] = pthread_create(&tid[i], NULL, io_run_thread, &a[i]) == 0;
    }
    fn(arg, 0, n < 1 ? 1 : n);
    for (int i = 1; i < n; i++) {
        if (started[i]) pthread_join(tid[i], NULL);
        else fn(arg, i, n); /* a thread that could not start: its share here */
    }
}

/* Grow or shrink *p to n elements of size elt (n >= 1 kept valid). */
static int resize(void *p, int64_t n, size_t elt)
{
    void *q = sps__realloc(*(void **)p, sps__mul_size((size_t)(n ? n : 1), elt));
    if (!q) return 0;
    *(void **)p = q;
    return 1;
}

/* The shared state of the parallel steps. */
typedef struct asm_job {
    int64_t n, total;
    sps_idx nrows;
    sps_symmetry sym;
    sps_idx *ri, *ci, *rp;
    double *v;
    int shift;                      /* permutation blocks of 2^shift entries */
    int64_t nb;                     /* their count */
    int64_t cnt[SPS_MAX_THREADS];   /* per thread: entries with mirrors; rows' ends */
    int ok[SPS_MAX_THREADS];        /* per thread: its share in CSR order */
    sps_idx r0[SPS_MAX_THREADS + 1];/* sort: thread i sorts rows [r0[i], r0[i + 1]) */
    int64_t base[SPS_MAX_THREADS];  /* their first entry (before any compaction) */
} asm_job;

static inline int64_t share(int64_t n, int i, int nth) { return (int64_t)((double)n * i / nth); }

/* Row counts into rp[r + 1] (one thread: plain increments; several: atomic
 * ones, the same counts in any order) and the total with mirrored entries. */
static void count_task(void *arg, int i, int nth)
{
    asm_job *J = arg;
    uint32_t *c = (uint32_t *)J->rp;
    const sps_idx *ri = J->ri, *ci = J->ci;
    int64_t k0 = share(J->n, i, nth), k1 = share(J->n, i + 1, nth), total = k1 - k0;
    int mirror = J->sym != SPS_GENERAL;
    if (nth == 1) {
        for (int64_t k = k0; k < k1; k++) {
            c[ri[k] + 1]++;
            if (mirror && ri[k] != ci[k]) c[ci[k] + 1]++, total++;
        }
    } else {
        for (int64_t k = k0; k < k1; k++) {
            __atomic_fetch_add(&c[ri[k] + 1], 1u, __ATOMIC_RELAXED);
            if (mirror && ri[k] != ci[k]) __atomic_fetch_add(&c[ci[k] + 1], 1u, __ATOMIC_RELAXED), total++;
        }
    }
    J->cnt[i] = total;
}

/* Row starts into rp (rp[r], r < nrows; counts wrap harmlessly (unsigned)
 * only when the total is over SPS_IDX_MAX, which the caller rejects) and
 * the total with mirrored entries. */
static int64_t count_rows(asm_job *J, int nth)
{
    sps__io_run(nth, count_task, J);
    int64_t total = 0;
    for (int i = 0; i < nth; i++) total += J->cnt[i];
    uint32_t *c = (uint32_t *)J->rp;
    if (total <= SPS_IDX_MAX)
        for (sps_idx r = 0; r < J->nrows; r++) c[r + 1] += c[r];
    return total;
}

/* Destinations into ri (mirrored entries appended from n on); rp[r]
 * advances to the end of row r. */
static void destinations(int64_t n, sps_idx *ri, sps_idx *ci, double *v, sps_symmetry sym, sps_idx *rp)
{
    int64_t m = n;
    for (int64_t k = 0; k < n; k++) {
        sps_idx r = ri[k], c = ci[k];
        ri[k] = rp[r]++;
        if (sym != SPS_GENERAL && r != c) {
            ci[m] = r;
            v[m] = sym == SPS_SKEW_SYMMETRIC ? -v[k] : v[k];
            ri[m] = rp[c]++;
            m++;
        }
    }
}

/* General files on several threads: thread t owns the rows [r0[t], r0[t + 1])
 * (split by entries) and walks all entries in file order, giving its own
 * their destinations, so each row's are given in file order, as above. An
 * entry's row is replaced by its destination with the top bit set (no row
 * has it), which tells the other threads to skip it; the bits are cleared
 * after. The loads and stores of ri are relaxed atomics (plain moves). */
#define SPS_DEST_BIT ((uint32_t)1 << 31)
static void dest_task(void *arg, int t, int nth)
{
    asm_job *J = arg;
    (void)nth;
    uint32_t *ri = (uint32_t *)J->ri;
    sps_idx *rp = J->rp;
    uint32_t lo = (uint32_t)J->r0[t], span = (uint32_t)(J->r0[t + 1] - J->r0[t]);
    for (int64_t k = 0; k < J->n; k++) {
        uint32_t r = __atomic_load_n(&ri[k], __ATOMIC_RELAXED);
        if (r - lo < span) __atomic_store_n(&ri[k], (uint32_t)rp[r]++ | SPS_DEST_BIT, __ATOMIC_RELAXED);
    }
}

static void unflag_task(void *arg, int i, int nth)
{
    asm_job *J = arg;
    uint32_t *ri = (uint32_t *)J->ri;
    for (int64_t k = share(J->n, i, nth); k < share(J->n, i + 1, nth); k++) ri[k] &= ~SPS_DEST_BIT;
}

/* The rows cut into nth ranges of about equal entries: r0[0 .. nth]
 * (rp[r]: the start of row r). */
static void split_rows(asm_job *J, int nth)
{
    const sps_idx *rp = J->rp;
    sps_idx nrows = J->nrows;
    J->r0[0] = 0;
    for (int i = 1; i < nth; i++) { /* first row starting at or after the i-th share */
        int64_t want = share(J->total, i, nth);
        sps_idx lo = J->r0[i - 1], hi = nrows;
        while (lo < hi) {
            sps_idx mid = lo + (hi - lo) / 2;
            if (rp[mid] < want) lo = mid + 1;
            else hi = mid;
        }
        J->r0[i] = lo;
    }
    J->r0[nth] = nrows;
}

static void destinations_par(asm_job *J, int nth)
{
    split_rows(J, nth);
    sps__io_run(nth, dest_task, J);
    sps__io_run(nth, unflag_task, J);
}

static inline void swap_entry(sps_idx *dest, sps_idx *ci, double *v, int64_t a, int64_t b)
{
    sps_idx d = dest[a], c = ci[a];
    double x = v[a];
    dest[a] = dest[b];
    ci[a] = ci[b];
    v[a] = v[b];
    dest[b] = d;
    ci[b] = c;
    v[b] = x;
}

/* Entries [lo, hi) whose destinations are in [lo, hi): follow the cycles,
 * each swap placing one entry for good. */
static void cycles(int64_t lo, int64_t hi, sps_idx *dest, sps_idx *ci, double *v)
{
    for (int64_t i = lo; i < hi; i++) {
        sps_idx d;
        while ((d = dest[i]) != (sps_idx)i) swap_entry(dest, ci, v, i, d);
    }
}

/* ---- the block step on several threads --------------------------------- */

/* Every unsorted part of a block, [gh[b], gt[b]), is cut into one stripe
 * per thread, and thread t sends the entries of its stripes to its stripes
 * of their blocks (as the one-thread loop does, but a full stripe leaves an
 * entry where it is): no two threads touch the same entry. Then each
 * block's unsorted part is partitioned (its own entries first) and what is
 * left, the entries that did not find room, goes round again on fewer
 * entries (PARADIS, Cho et al., VLDB 2015); a last small rest, or a round
 * without progress, is finished on one thread. The destinations are the
 * same, so is the result. */
typedef struct blk_job {
    asm_job *J;
    int64_t *gh, *gt;  /* per block: its unsorted part */
    int64_t *ph, *pt;  /* per thread and block: the thread's stripe (ph: next free) */
} blk_job;

static void stripe_task(void *arg, int t, int nth)
{
    blk_job *B = arg;
    asm_job *J = B->J;
    int64_t nb = J->nb, *ph = B->ph + (int64_t)t * nb, *pt = B->pt + (int64_t)t * nb;
    int shift = J->shift;
    sps_idx *dest = J->ri, *ci = J->ci;
    double *v = J->v;
    for (int64_t b = 0; b < nb; b++) {
        int64_t len = B->gt[b] - B->gh[b];
        ph[b] = B->gh[b] + (int64_t)((double)len * t / nth);
        pt[b] = B->gh[b] + (int64_t)((double)len * (t + 1) / nth);
    }
    for (int64_t b = 0; b < nb; b++) {
        for (int64_t head = ph[b]; head < pt[b]; head++) {
            sps_idx d = dest[head], c = ci[head];
            double x = v[head];
            int64_t k = d >> shift;
            while (k != b && ph[k] < pt[k]) { /* carry it to its stripe, take what was there */
                int64_t q = ph[k]++;
                sps_idx d2 = dest[q], c2 = ci[q];
                double x2 = v[q];
                dest[q] = d, ci[q] = c, v[q] = x;
                d = d2, c = c2, x = x2;
                k = d >> shift;
            }
            if (k == b) { /* at the stripe's next free place; what was there moves to head */
                int64_t q = ph[b]++;
                dest[head] = dest[q], ci[head] = ci[q], v[head] = v[q];
                dest[q] = d, ci[q] = c, v[q] = x;
            } else {
                dest[head] = d, ci[head] = c, v[head] = x;
            }
        }
    }
}

/* Each block's unsorted part: its own entries to the front. */
static void repair_task(void *arg, int t, int nth)
{
    blk_job *B = arg;
    asm_job *J = B->J;
    int shift = J->shift;
    sps_idx *dest = J->ri;
    for (int64_t b = share(J->nb, t, nth); b < share(J->nb, t + 1, nth); b++) {
        int64_t lo = B->gh[b], hi = B->gt[b];
        for (;;) {
            while (lo < hi && dest[lo] >> shift == b) lo++;
            while (hi > lo && dest[hi - 1] >> shift != b) hi--;
            if (lo >= hi) break;
            swap_entry(dest, J->ci, J->v, lo, hi - 1);
        }
        B->gh[b] = lo;
    }
}

/* 0 if the memory for the stripes is missing (the caller goes serial). */
static int blocks_parallel(asm_job *J, int64_t *next, int nth)
{
    int64_t nb = J->nb;
    blk_job B = {J, NULL, NULL, NULL, NULL};
    B.gh = next;
    B.gt = sps__malloc(sps__mul_size((size_t)nb, sizeof *B.gt));
    B.ph = sps__malloc(sps__mul_size((size_t)nb * (size_t)nth, sizeof *B.ph));
    B.pt = sps__malloc(sps__mul_size((size_t)nb * (size_t)nth, sizeof *B.pt));
    if (!B.gt || !B.ph || !B.pt) {
        sps__free(B.gt), sps__free(B.ph), sps__free(B.pt);
        return 0;
    }
    int64_t left = J->total;
    for (int64_t b = 0; b < nb; b++) B.gt[b] = (b + 1) << J->shift < J->total ? (b + 1) << J->shift : J->total;
    for (int round = 0; round < 16 && left > ((int64_t)1 << 16); round++) {
        sps__io_run(nth, stripe_task, &B);
        sps__io_run(nth, repair_task, &B);
        int64_t now = 0;
        for (int64_t b = 0; b < nb; b++) now += B.gt[b] - B.gh[b];
        if (now >= left) break;
        left = now;
    }
    sps__free(B.gt), sps__free(B.ph), sps__free(B.pt);
    return 1; /* next[b] = gh[b]: the serial loop finishes the rest */
}

static void cycles_task(void *arg, int i, int nth);
/* Move every entry to its destination (dest is a permutation of 0..total-1).
 * Following its cycles directly would jump across the whole arrays once per
 * entry (a cache miss each, seconds for 10^7 random rows), so first every
 * entry goes to its block of 2^shift destinations, blocks filling from
 * their fronts like an American flag sort (a few thousand sequential
 * streams), then the cycles are followed inside each block, in cache. */
static void permute(asm_job *J, int nth)
{
    int64_t total = J->total;
    sps_idx *dest = J->ri, *ci = J->ci;
    double *v = J->v;
    int bits = 0;
    while (bits < 62 && ((int64_t)1 << bits) < total) bits++;
    int shift = bits - 11 > 12 ? bits - 11 : 12;
    int64_t nb = (total >> shift) + 1, next[2049];
    J->shift = shift;
    J->nb = nb;
    for (int64_t b = 0; b < nb; b++) next[b] = b << shift;
    if (nth > 1) blocks_parallel(J, next, nth);
    for (int64_t b = 0; b < nb; b++) {
        int64_t end = (b + 1) << shift < total ? (b + 1) << shift : total;
        while (next[b] < end) {
            int64_t p = next[b], home = dest[p] >> shift;
            if (home == b) next[b]++;
            else swap_entry(dest, ci, v, p, next[home]++);
        }
    }
    sps__io_run(nth, cycles_task, J);
}

/* A general file whose entries are already the CSR's order (rows in order,
 * columns strictly increasing within a row, so no duplicates): the column
 * and value arrays are the CSR's as they are. Files written row by row
 * (spsolve --save-matrix, SciPy's mmwrite of a CSR) are this way. */
static void order_task(void *arg, int i, int nth)
{
    asm_job *J = arg;
    const sps_idx *ri = J->ri, *ci = J->ci;
    int64_t k0 = share(J->n, i, nth), k1 = share(J->n, i + 1, nth);
    int ok = 1;
    for (int64_t k = k0 > 0 ? k0 : 1; k < k1 && ok; k++)
        ok = ri[k] > ri[k - 1] || (ri[k] == ri[k - 1] && ci[k] > ci[k - 1]);
    J->ok[i] = ok;
}

static int in_csr_order(asm_job *J, int nth)
{
    sps__io_run(nth, order_task, J);
    for (int i = 0; i < nth; i++)
        if (!J->ok[i]) return 0;
    return 1;
}

/* Entries in CSR order: rows (ri[k - 1], ri[k]] start at k. */
static void rowptr_task(void *arg, int i, int nth)
{
    asm_job *J = arg;
    const sps_idx *ri = J->ri;
    sps_idx *rp = J->rp;
    int64_t k0 = share(J->n, i, nth), k1 = share(J->n, i + 1, nth);
    for (int64_t k = k0; k < k1; k++)
        for (sps_idx r = k ? ri[k - 1] + 1 : 0; r <= ri[k]; r++) rp[r] = (sps_idx)k;
    if (i == nth - 1)
        for (sps_idx r = J->n ? ri[J->n - 1] + 1 : 0; r <= J->nrows; r++) rp[r] = (sps_idx)J->n;
}

/* A pattern file's values: all ones. */
static void ones_task(void *arg, int i, int nth)
{
    asm_job *J = arg;
    for (int64_t k = share(J->n, i, nth); k < share(J->n, i + 1, nth); k++) J->v[k] = 1.0;
}

/* Cycles inside each block of the permutation, blocks shared out. */
static void cycles_task(void *arg, int i, int nth)
{
    asm_job *J = arg;
    int64_t b0 = share(J->nb, i, nth), b1 = share(J->nb, i + 1, nth), total = J->total;
    for (int64_t b = b0; b < b1; b++) {
        int64_t lo = b << J->shift, hi = (b + 1) << J->shift < total ? (b + 1) << J->shift : total;
        cycles(lo, hi, J->ri, J->ci, J->v);
    }
}

/* Rows [r0[i], r0[i + 1]) sorted and their duplicates summed, compacted
 * from base[i]; cnt[i] is the end of what is kept. */
static void sort_task(void *arg, int i, int nth)
{
    asm_job *J = arg;
    (void)nth;
    J->cnt[i] = sps__csr_sort_rows_from(J->r0[i + 1] - J->r0[i], J->rp + J->r0[i], J->base[i], J->ci, J->v);
}

/* Row sort on nth threads (rows split by entries); returns the CSR's count. */
static int64_t sort_rows(asm_job *J, int nth)
{
    const sps_idx *rp = J->rp;
    sps_idx nrows = J->nrows;
    if (nth > nrows) nth = nrows > 0 ? nrows : 1;
    split_rows(J, nth);
    for (int i = 0; i < nth; i++) J->base[i] = rp[J->r0[i]]; /* before any thread writes them */
    sps__io_run(nth, sort_task, J);
    /* Shares that lost duplicates leave gaps: close them, in order. */
    int64_t w = J->cnt[0];
    for (int i = 1; i < nth; i++) {
        int64_t b = J->base[i], len = J->cnt[i] - b;
        if (b != w) {
            memmove(J->ci + w, J->ci + b, (size_t)len * sizeof *J->ci);
            memmove(J->v + w, J->v + b, (size_t)len * sizeof *J->v);
            for (sps_idx r = J->r0[i]; r < J->r0[i + 1]; r++) J->rp[r + 1] -= (sps_idx)(b - w);
        }
        w += len;
    }
    return w;
}

sps_status sps__io_assemble(sps_context *ctx, const char *path, sps_idx nrows, sps_idx ncols, sps_symmetry sym,
                            int64_t n, sps_idx **ri, sps_idx **ci, double **v, sps_csr *out)
{
    memset(out, 0, sizeof *out);
    int nth = sps__threads(ctx);
    if ((int64_t)nth * 4096 > n) nth = (int)(n / 4096) + 1; /* small inputs: not worth a thread */
    /* The row pointer counts, then moves along each row, then is the CSR's. */
    sps_idx *rp = sps__calloc((size_t)nrows + 2, sizeof *rp);
    asm_job *J = sps__calloc(1, sizeof *J);
    if (!rp || !J) {
        sps__free(rp);
        sps__free(J);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory for the row pointer of %d rows (%.1f MB asked)",
                        path, nrows, (double)(nrows + 2) * 4e-6);
    }
    J->n = n;
    J->nrows = nrows;
    J->sym = sym;
    J->ri = *ri;
    J->ci = *ci;
    J->rp = rp;
    /* A general file in CSR order: the row pointer from where each row
     * starts, no counting (and no atomics) */
    int ordered = sym == SPS_GENERAL && in_csr_order(J, nth);
    int64_t total = n;
    if (ordered) sps__io_run(nth, rowptr_task, J);
    else total = count_rows(J, nth);
    if (total > SPS_IDX_MAX) {
        sps__free(rp);
        sps__free(J);
        return sps__err(ctx, SPS_ERR_PARSE, "%s: %lld entries after mirroring exceed the 32-bit index limit (%d)",
                        path, (long long)total, SPS_IDX_MAX);
    }
    int pattern = *v == NULL;
    if (!resize(ri, total, sizeof **ri) || !resize(ci, total, sizeof **ci) || !resize(v, total, sizeof **v)) {
        sps__free(rp);
        sps__free(J);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory for a CSR of %lld entries (%.1f MB asked)",
                        path, (long long)total, (double)total * 16e-6);
    }
    J->ri = *ri;
    J->ci = *ci;
    J->v = *v;
    J->total = total;
    if (pattern) sps__io_run(nth, ones_task, J);
    int64_t w = total;
    if (ordered) { /* the entries are in place */
        sps__free(*ri);
        *ri = NULL;
    } else {
        if (sym == SPS_GENERAL && nth > 1) destinations_par(J, nth);
        else destinations(n, *ri, *ci, *v, sym, rp);
        permute(J, nth);
        sps__free(*ri);
        *ri = NULL;
        memmove(rp + 1, rp, (size_t)nrows * sizeof *rp); /* rp[r] was the end of row r */
        rp[0] = 0;
        w = sort_rows(J, nth);
    }
    sps__free(J);
    resize(ci, w, sizeof **ci); /* shrinking: failure is harmless */
    resize(v, w, sizeof **v);
    out->nrows = nrows;
    out->ncols = ncols;
    out->nnz = (sps_idx)w;
    out->row_ptr = rp;
    out->col_idx = *ci;
    out->val = *v;
    *ci = NULL;
    *v = NULL;
    return SPS_OK;
}
