/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/diag_plan.c: DRM's iterative grouping (the paper: merge)
 * of row segments into sub-blocks (Algorithm 1)
 *
 * The paper (Wang et al. 2024, Algorithm 1) keeps the operand counts P sorted
 * in decreasing order and
 *   1. while pmax1 > 2*pmin1 and pmax1 > 2*pmin2: pmin2 += pmin1, drop pmin1,
 *      re-sort (the two smallest entries' segments will share a thread block);
 *   2. if card(P) is odd: merge the two smallest once more, re-sort;
 *   3. if card(P) > 2: pair the r-th largest with the r-th smallest.
 * Implemented in O(S) after one radix sort, without re-sorting: P is kept as
 * two ascending queues, the segments in their sorted order and the merged
 * nodes in the order they are made. Merging the two smallest entries makes
 * non-decreasing sums (the argument of the two-queue Huffman construction),
 * so the second queue stays sorted and the smallest entry of P is always at
 * one of the two fronts. The order is total and deterministic: by operand
 * count, ties broken by node id (a smaller id counts as larger, as a stable
 * sort of the segments in their original order would place it); a merged
 * node keeps pmin2's id, as `pmin2 += pmin1` does in the pseudo-code. With
 * that order the queues' fronts are exactly what re-sorting would give
 * (tests/unit/test_drm.c compares with the literal pseudo-code).
 *
 * Two points where the pseudo-code and the text differ or say nothing:
 *  - card(P) <= 2 after step 2: the text (step (4)) keeps P as the final
 *    result; the pseudo-code would pair 2 entries into one sub-block. We follow
 *    the text: two sub-blocks run in parallel, one would not.
 *  - card(P) = 1 is odd but has no pmin2: nothing to merge.
 * A sub-block is a set of segments, kept as a linked list while merging and
 * emitted in ascending segment order (neighbouring rows share x lines). A
 * sub-block of more than maxmem segments (1024 rows at most per thread block)
 * is cut into consecutive chunks of maxmem segments. */
#include "diag_common.h"

#include <string.h>

typedef struct plan {
    int64_t *ope;   /* operand count of each node (indexed by node id) */
    sps_idx *next;  /* linked list of a node's segments; node id = its first segment */
    sps_idx *tail;
} plan;

/* a comes after b in the decreasing order of P (a is "smaller"). */
static int after(const plan *p, sps_idx a, sps_idx b)
{
    return p->ope[a] < p->ope[b] || (p->ope[a] == p->ope[b] && a > b);
}

/* Node b absorbs node a (b += a). */
static void absorb(plan *p, sps_idx b, sps_idx a)
{
    p->ope[b] += p->ope[a];
    p->next[p->tail[b]] = a;
    p->tail[b] = p->tail[a];
}

/* Append node a's segments at members[*pos...]. */
static void gather(const plan *p, sps_idx a, sps_idx *members, sps_idx *pos)
{
    for (sps_idx s = a; s >= 0; s = p->next[s]) members[(*pos)++] = s;
}

/* q[0..n) = the ids in ascending (ope, -id) order: a stable LSD radix sort by
 * operand count (8-bit digits, constant digits skipped) of the ids listed
 * from n-1 down to 0. tmp has n entries. */
static void sort_ascending(const int64_t *ope, sps_idx n, sps_idx *q, sps_idx *tmp)
{
    for (sps_idx i = 0; i < n; i++) q[i] = n - 1 - i;
    for (int shift = 0; shift < 32; shift += 8) {
        sps_idx count[257] = {0};
        for (sps_idx i = 0; i < n; i++) count[((ope[q[i]] >> shift) & 255) + 1]++;
        int used = 0;
        for (int d = 1; d <= 256; d++) used += count[d] > 0;
        if (used <= 1) continue; /* every key has this digit: order unchanged */
        for (int d = 0; d < 256; d++) count[d + 1] += count[d];
        for (sps_idx i = 0; i < n; i++) tmp[count[(ope[q[i]] >> shift) & 255]++] = q[i];
        memcpy(q, tmp, (size_t)n * sizeof *q);
    }
}

/* Sort a sub-block's k segment numbers: insertion sort when short, else an
 * LSD radix sort (11-bit digits; a merged node can hold most segments). */
static void sort_members(sps_idx *a, sps_idx k, sps_idx *tmp)
{
    if (k <= 64) {
        sps__diag_sort(a, (size_t)k);
        return;
    }
    for (int shift = 0; shift < 32; shift += 11) {
        sps_idx count[2049] = {0};
        for (sps_idx i = 0; i < k; i++) count[((a[i] >> shift) & 2047) + 1]++;
        for (int d = 0; d < 2048; d++) count[d + 1] += count[d];
        for (sps_idx i = 0; i < k; i++) tmp[count[(a[i] >> shift) & 2047]++] = a[i];
        memcpy(a, tmp, (size_t)k * sizeof *a);
    }
}

/* The two queues of P: q1[i1..n1) (segments, sorted) and q2[i2..n2) (merged
 * nodes, sorted by construction). */
typedef struct queues {
    const sps_idx *q1;
    sps_idx *q2;
    sps_idx i1, n1, i2, n2;
} queues;

/* The k-th smallest entry (k = 0 or 1) without removing it; from_q1 says where. */
static sps_idx peek(const plan *p, const queues *q, int k, int *from_q1)
{
    sps_idx a1 = q->i1, a2 = q->i2, id = -1;
    for (int j = 0; j <= k; j++) {
        *from_q1 = a1 < q->n1 && (a2 >= q->n2 || after(p, q->q1[a1], q->q2[a2]));
        id = *from_q1 ? q->q1[a1++] : q->q2[a2++];
    }
    return id;
}

static sps_idx pop(const plan *p, queues *q)
{
    int from_q1;
    sps_idx id = peek(p, q, 0, &from_q1);
    if (from_q1) q->i1++;
    else q->i2++;
    return id;
}

sps_status sps__drm_plan(sps_context *ctx, const int64_t *ope, sps_idx n, int group,
                         sps_idx maxmem, sps_idx *members, sps_idx *blk, sps_idx *nblk)
{
    blk[0] = 0;
    *nblk = 0;
    if (maxmem < 1) return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: sub-block limit %d < 1", maxmem);
    for (sps_idx i = 0; i < n; i++)
        if (ope[i] < 0 || ope[i] > INT32_MAX)
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: operand count %lld out of range",
                            (long long)ope[i]);
    if (!group) {
        for (sps_idx i = 0; i < n; i++) {
            members[i] = i;
            blk[i + 1] = i + 1;
        }
        *nblk = n;
        return SPS_OK;
    }
    /* one scratch block (sps__malloc_scratch): ope, then next, tail, q1, q2
     * and h (m + 1 <= n + 1 entries) */
    plan p;
    const size_t un = (size_t)n, isz = sizeof(sps_idx);
    char *blk0 = sps__malloc_scratch(sps__mul_size(un, sizeof(int64_t) + 5 * isz) + isz);
    if (!blk0) return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory merging %d segments", n);
    p.ope = (int64_t *)(void *)blk0;
    p.next = (sps_idx *)(void *)(blk0 + un * sizeof(int64_t));
    p.tail = p.next + un;
    sps_idx *q1 = p.tail + un, *q2 = q1 + un, *h = q2 + un;
    int64_t pmax = 0;
    for (sps_idx i = 0; i < n; i++) {
        p.ope[i] = ope[i];
        p.next[i] = -1;
        p.tail[i] = i;
        if (ope[i] > pmax) pmax = ope[i];
    }
    sort_ascending(p.ope, n, q1, q2);
    queues q = {q1, q2, 0, n, 0, 0};

    /* Step 1: merge the two smallest while the largest exceeds twice both.
     * (The largest is never among them then, so pmax only grows.) */
    for (sps_idx m = n; m >= 2; m--) {
        int f;
        const sps_idx a = peek(&p, &q, 0, &f), b = peek(&p, &q, 1, &f);
        if (!(pmax > 2 * p.ope[a] && pmax > 2 * p.ope[b])) break;
        pop(&p, &q);
        pop(&p, &q);
        absorb(&p, b, a); /* pmin2 += pmin1 */
        q.q2[q.n2++] = b;
        if (p.ope[b] > pmax) pmax = p.ope[b];
    }

    /* What remains, in decreasing order: merge the two queues from their ends. */
    sps_idx m = (q.n1 - q.i1) + (q.n2 - q.i2);
    for (sps_idx k = 0, e1 = q.n1, e2 = q.n2; k < m; k++) {
        const int take1 = e1 > q.i1 && (e2 <= q.i2 || after(&p, q.q2[e2 - 1], q.q1[e1 - 1]));
        h[k] = take1 ? q.q1[--e1] : q.q2[--e2];
    }

    /* Step 2: an odd count merges its two smallest, then re-sorts. */
    if (m % 2 == 1 && m >= 3) {
        absorb(&p, h[m - 2], h[m - 1]);
        m--;
        for (sps_idx k = m - 1; k > 0 && after(&p, h[k - 1], h[k]); k--) {
            sps_idx t = h[k]; h[k] = h[k - 1]; h[k - 1] = t;
        }
    }

    /* Step 3: pair the r-th largest with the r-th smallest (more than 2 left),
     * then emit each sub-block's segments sorted, cut at maxmem. */
    const sps_idx groups = m > 2 ? m / 2 : m;
    sps_idx pos = 0, nb = 0;
    for (sps_idx r = 0; r < groups; r++) {
        const sps_idx start = pos;
        gather(&p, h[r], members, &pos);
        if (m > 2) gather(&p, h[m - 1 - r], members, &pos);
        sort_members(members + start, pos - start, q2); /* q2 is free by now */
        for (sps_idx c = start; c < pos; c += maxmem) {
            blk[nb + 1] = pos - c > maxmem ? c + maxmem : pos;
            nb++;
        }
    }
    *nblk = nb;
    sps__free(blk0);
    return SPS_OK;
}

double sps__drm_variance(const int64_t *ope, const sps_idx *members, const sps_idx *blk,
                         sps_idx nblk)
{
    if (nblk <= 0) return 0.0;
    double sum = 0.0, ss = 0.0;
    for (sps_idx b = 0; b < nblk; b++)
        for (sps_idx k = blk[b]; k < blk[b + 1]; k++) sum += (double)ope[members[k]];
    const double mean = sum / nblk;
    for (sps_idx b = 0; b < nblk; b++) {
        double pb = 0.0;
        for (sps_idx k = blk[b]; k < blk[b + 1]; k++) pb += (double)ope[members[k]];
        ss += (pb - mean) * (pb - mean);
    }
    return ss / nblk;
}

/* Number the sub-blocks in row order of their first segment, and sort each
 * sub-block's segments by row. Algorithm 1 decides which segments share a
 * sub-block (the balance); it pairs the largest with the smallest, so in its
 * own list order consecutive thread blocks work far apart in the matrix and
 * x is not reused between neighbouring blocks. The numbering of thread blocks
 * is free in Algorithm 2. O(S): the plan emits each sub-block's segments
 * sorted already (the insertion sort only checks it), and the first segments
 * are distinct, so a table indexed by segment orders the sub-blocks. (Two
 * qsorts took 2 to 5 ms on poisson3d:160's 128,000 segments, more than the
 * device's part of the conversion.) */
sps_status sps__drm_order_rows(sps_context *ctx, sps_idx *index, sps_idx *blo, sps_idx nblk,
                               sps_idx S)
{
    /* first (S), ni (S), nb (nblk + 1 <= S + 1) in one scratch block */
    sps_idx *first = sps__malloc_scratch(sps__mul_size(3 * (size_t)S + 1, sizeof *first));
    if (!first) return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory ordering %d sub-blocks", nblk);
    sps_idx *ni = first + S, *nb = ni + S;
    for (sps_idx h = 0; h < S; h++) first[h] = -1;
    for (sps_idx b = 0; b < nblk; b++) {
        sps__diag_sort(index + blo[b], (size_t)(blo[b + 1] - blo[b]));
        first[index[blo[b]]] = b;
    }
    sps_idx at = 0, k = 0;
    nb[0] = 0;
    for (sps_idx h = 0; h < S; h++) {
        const sps_idx b = first[h];
        if (b < 0) continue;
        for (sps_idx i = blo[b]; i < blo[b + 1]; i++) ni[at++] = index[i];
        nb[++k] = at;
    }
    memcpy(index, ni, (size_t)S * sizeof *index);
    memcpy(blo, nb, ((size_t)nblk + 1) * sizeof *blo);
    sps__free(first);
    return SPS_OK;
}

/* ---- the plan as build() asks for it, fast ---------------------------------
 * sps__drm_plan, sps__drm_order_rows and sps__drm_variance above are the
 * reference; this is the same plan with less memory and fewer passes (on the
 * H100 machine the reference's fresh scratch pages cost more than its work).
 * Operand counts are cnt * seg: the order of P is the order of cnt.
 *  - The segments sorted: a counting sort of cnt (ids from n-1 down to 0, so
 *    ties come out as the reference's stable radix sort leaves them).
 *  - Step 1 on the two queues as in sps__drm_plan; a merged node's weight
 *    travels with its q2 entry, and absorbed segments point to their
 *    absorber (parent) instead of joining a linked list.
 *  - Step 2 pops the two smallest; the merged node (extra) joins the
 *    remaining nodes as a third source, so P in decreasing order needs no
 *    array: step 3 pairs the r-th largest with the r-th smallest by popping
 *    from both ends, and marks each root with its group r.
 *  - One pass over the segments in ascending order finds each segment's group
 *    (parent chains, compressed as they are walked) and counts the groups; a
 *    second places each segment in its sub-block: groups are emitted sorted
 *    and cut at maxmem, so the k-th member of group g goes to chunk k/maxmem
 *    at place k%maxmem. In row order a chunk is numbered when its first (and
 *    smallest) segment is met; in list order chunks follow their groups.
 *  - The variance from exact integer sums (every sum of operand counts is an
 *    integer below 2^53, so the reference's double sums are the same).
 * Outside its range (a segment with more than 65536 diagonals, or operand
 * sums past 2^31-1) it calls the reference. */

#define FAST_MAXC 65536

typedef struct fplan {
    const sps_idx *cnt;
    int64_t seg;
    const sps_idx *q1; /* q1[i1..n1): singles, ascending */
    sps_idx *q2;       /* q2[i2..n2): merged nodes, ascending by construction */
    int64_t *q2w;      /* their weights */
    sps_idx i1, n1, i2, n2;
    sps_idx ex;        /* step 2's merged node (-1: none) and its weight */
    int64_t exw;
} fplan;

/* (wa, a) comes after (wb, b) in the decreasing order of P. */
static int fafter(int64_t wa, sps_idx a, int64_t wb, sps_idx b)
{
    return wa < wb || (wa == wb && a > b);
}

/* Remove and return the smallest node (lo) or the largest (!lo) of what
 * remains, with its weight. Sources: q1's front or back, q2's, the extra. */
static sps_idx fpop(fplan *p, int lo, int64_t *w)
{
    sps_idx id = -1;
    int src = 0;
    if (p->i1 < p->n1) {
        id = p->q1[lo ? p->i1 : p->n1 - 1];
        *w = p->cnt[id] * p->seg;
        src = 1;
    }
    if (p->i2 < p->n2) {
        const sps_idx k = lo ? p->i2 : p->n2 - 1, c = p->q2[k];
        const int64_t cw = p->q2w[k];
        if (!src || (lo ? fafter(cw, c, *w, id) : fafter(*w, id, cw, c))) {
            id = c;
            *w = cw;
            src = 2;
        }
    }
    if (p->ex >= 0 && (!src || (lo ? fafter(p->exw, p->ex, *w, id) : fafter(*w, id, p->exw, p->ex)))) {
        id = p->ex;
        *w = p->exw;
        src = 3;
    }
    if (src == 1) {
        if (lo) p->i1++;
        else p->n1--;
    } else if (src == 2) {
        if (lo) p->i2++;
        else p->n2--;
    } else if (src == 3) {
        p->ex = -1;
    }
    return id;
}

/* The weight of the k-th smallest (k = 0 or 1) without removing it. */
static int64_t fpeek_w(const fplan *p, int k)
{
    fplan c = *p;
    int64_t w = 0;
    for (int j = 0; j <= k; j++) fpop(&c, 1, &w);
    return w;
}

/* The group of segment s: -(code + 2) at the end of its parent chain; the
 * chain is compressed to it. */
static sps_idx fgroup(sps_idx *parent, sps_idx s)
{
    sps_idx x = s;
    while (parent[x] >= 0) x = parent[x];
    const sps_idx code = parent[x];
    for (x = s; parent[x] >= 0;) {
        const sps_idx nx = parent[x];
        parent[x] = code;
        x = nx;
    }
    return -code - 2;
}

/* q1[0..n) = the segments in ascending (cnt, -id) order: a counting sort
 * with keys below K. The ids are cut in four quarters, each with its own
 * histogram (hist: 4K words), and the quarters are counted and placed
 * interleaved: one histogram word incremented on every step (all counts
 * equal on a regular matrix) would wait on its own store each time. Higher
 * quarters come first within a key, so the ids of a key end up descending. */
static void sort_counts(const sps_idx *cnt, sps_idx n, size_t K, sps_idx *q1, sps_idx *hist)
{
    const sps_idx ql = (n + 3) / 4;
    sps_idx beg[4], len[4];
    for (int j = 0; j < 4; j++) {
        const int64_t b = (int64_t)j * ql, e = (int64_t)(j + 1) * ql;
        beg[j] = (sps_idx)(b < n ? b : n);
        len[j] = (sps_idx)(e < n ? e : n) - beg[j];
    }
    sps_idx *h0 = hist, *h1 = h0 + K, *h2 = h1 + K, *h3 = h2 + K;
    const sps_idx *c0 = cnt + beg[0], *c1 = cnt + beg[1], *c2 = cnt + beg[2], *c3 = cnt + beg[3];
    memset(hist, 0, 4 * K * sizeof *hist);
    sps_idx i = 0;
    for (; i < len[3]; i++) { /* len[0] >= len[1] >= len[2] >= len[3] */
        h0[c0[i]]++;
        h1[c1[i]]++;
        h2[c2[i]]++;
        h3[c3[i]]++;
    }
    for (; i < ql; i++) {
        if (i < len[0]) h0[c0[i]]++;
        if (i < len[1]) h1[c1[i]]++;
        if (i < len[2]) h2[c2[i]]++;
    }
    for (size_t c = 0, acc = 0; c < K; c++) { /* key c: quarter 3's ids first */
        sps_idx *h[4] = {h3, h2, h1, h0};
        for (int j = 0; j < 4; j++) {
            const sps_idx t = h[j][c];
            h[j][c] = (sps_idx)acc;
            acc += (size_t)t;
        }
    }
    for (i = ql - 1; i >= len[3]; i--) {
        if (i < len[2]) q1[h2[c2[i]]++] = beg[2] + i;
        if (i < len[1]) q1[h1[c1[i]]++] = beg[1] + i;
        if (i < len[0]) q1[h0[c0[i]]++] = beg[0] + i;
    }
    for (; i >= 0; i--) { /* descending ids within each quarter */
        q1[h3[c3[i]]++] = beg[3] + i;
        q1[h2[c2[i]]++] = beg[2] + i;
        q1[h1[c1[i]]++] = beg[1] + i;
        q1[h0[c0[i]]++] = beg[0] + i;
    }
}

/* The plan of a regular matrix, where Algorithm 1 merges nothing in step 1
 * (the largest operand count is at most twice one of the two smallest), in
 * row order, each group within maxmem: after the sort (q1 in members) no
 * scratch and three passes. Step 2 (n odd) makes one node of the two
 * smallest segments; what remains, ascending, is q1 from its third entry with
 * that node put in its place (a binary search); pair r joins the r-th
 * smallest and the r-th largest, written in work as partner[first] = second
 * and -1 at the second (the three-segment group: n at its first). One pass
 * over the segments in order then emits each group at its first segment, its
 * balance term with it. Returns 0 (touching only work) where this does not
 * apply. */
static int plan_pairs(const sps_idx *cnt, sps_idx n, sps_idx seg, sps_idx maxc, int64_t total,
                      sps_idx maxmem, sps_idx *members, sps_idx *blk, sps_idx *work, sps_idx *nblk,
                      double *var)
{
    const sps_idx *q1 = members;
    const int odd = n % 2;
    if (n < 4 || maxmem < 2 + odd) return 0;
    const int64_t pmax = (int64_t)maxc * seg;
    if (pmax > 2 * (int64_t)cnt[q1[0]] * seg && pmax > 2 * (int64_t)cnt[q1[1]] * seg) return 0;
    /* asc(j), j < m: q1[2..n) with ex = q1[1] (absorbing q1[0]) at place ins (n odd), else q1 */
    const sps_idx m = n - odd, *rem = q1 + 2 * odd, ex = odd ? q1[1] : -1;
    sps_idx ins = m;
    if (odd) {
        const int64_t ew = ((int64_t)cnt[q1[0]] + cnt[q1[1]]) * seg;
        sps_idx lo = 0, hi = n - 2; /* rem[0..n-2): the first not below ex */
        while (lo < hi) {
            const sps_idx mid = lo + (hi - lo) / 2;
            if (fafter((int64_t)cnt[rem[mid]] * seg, rem[mid], ew, ex)) lo = mid + 1;
            else hi = mid;
        }
        ins = lo;
    }
    sps_idx *partner = work, trip[3] = {-1, -1, -1};
    for (sps_idx r = 0; r < m / 2; r++) {
        const sps_idx jl = r, jh = m - 1 - r;
        const sps_idx x = jl < ins ? rem[jl] : jl == ins ? ex : rem[jl - 1];
        const sps_idx y = jh < ins ? rem[jh] : jh == ins ? ex : rem[jh - 1];
        const sps_idx a = x < y ? x : y, b = x < y ? y : x;
        partner[a] = b;
        partner[b] = -1;
        if (jl == ins || jh == ins) { /* ex's group: q1[0], q1[1] and its partner, sorted */
            trip[0] = q1[0];
            trip[1] = ex;
            trip[2] = jl == ins ? y : x;
            for (int i = 1; i < 3; i++)
                for (int j = i; j > 0 && trip[j - 1] > trip[j]; j--) {
                    const sps_idx t = trip[j];
                    trip[j] = trip[j - 1];
                    trip[j - 1] = t;
                }
        }
    }
    if (odd) {
        partner[trip[0]] = n;
        partner[trip[1]] = partner[trip[2]] = -1;
    }
    /* each group at its first segment; the stores of a segment that is not
     * first are made and then overwritten (no branch on a coin flip) */
    const sps_idx G = m / 2;
    const double mean = (double)(total * seg) / G;
    double ss = 0.0;
    sps_idx k = 0, nb = 0, spill[2];
    for (sps_idx s = 0; s < n; s++) {
        const sps_idx t = partner[s];
        if (t == n) { /* the three-segment group, once */
            blk[nb++] = k;
            members[k++] = trip[0];
            members[k++] = trip[1];
            members[k++] = trip[2];
            const double d = (double)(((int64_t)cnt[trip[0]] + cnt[trip[1]] + cnt[trip[2]]) * seg) - mean;
            ss += d * d;
            continue;
        }
        const sps_idx first = t >= 0, other = first ? t : s;
        sps_idx *dst = k + 2 <= n ? members + k : spill;
        dst[0] = s;
        dst[1] = other;
        blk[nb] = k;
        const double d = (double)(((int64_t)cnt[s] + cnt[other]) * seg) - mean;
        ss += first ? d * d : 0.0;
        k += 2 * first;
        nb += first;
    }
    blk[nb] = k;
    *nblk = nb;
    *var = ss / nb;
    return 1;
}

static sps_status plan_reference(sps_context *ctx, const sps_idx *cnt, sps_idx n, sps_idx seg,
                                 int group, int order_rows, sps_idx maxmem, sps_idx *members,
                                 sps_idx *blk, sps_idx *nblk, double *var)
{
    int64_t *ope = sps__malloc_scratch(sps__mul_size((size_t)n, sizeof *ope));
    if (!ope) return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory planning %d segments", n);
    for (sps_idx h = 0; h < n; h++) ope[h] = (int64_t)cnt[h] * seg;
    sps_status s = sps__drm_plan(ctx, ope, n, group, maxmem, members, blk, nblk);
    if (s == SPS_OK && order_rows) s = sps__drm_order_rows(ctx, members, blk, *nblk, n);
    if (s == SPS_OK) *var = sps__drm_variance(ope, members, blk, *nblk);
    sps__free(ope);
    return s;
}

/* The plan's scratch block of `bytes`: the lent ws where it fits (*own = 0),
 * else a fresh allocation (*own = 1; NULL when out of memory). */
static char *plan_scratch(void *ws, size_t ws_bytes, size_t bytes, int *own)
{
    *own = !(ws && bytes <= ws_bytes);
    return *own ? (char *)sps__malloc(bytes) : (char *)ws;
}

sps_status sps__drm_plan_counts(sps_context *ctx, const sps_idx *cnt, sps_idx n, sps_idx seg,
                                int group, int order_rows, sps_idx maxmem, sps_idx *members,
                                sps_idx *blk, sps_idx *nblk, double *var, sps_idx *work)
{
    return sps__drm_plan_counts_ws(ctx, cnt, n, seg, group, order_rows, maxmem, members, blk, nblk,
                                   var, work, NULL, 0);
}

sps_status sps__drm_plan_counts_ws(sps_context *ctx, const sps_idx *cnt, sps_idx n, sps_idx seg,
                                   int group, int order_rows, sps_idx maxmem, sps_idx *members,
                                   sps_idx *blk, sps_idx *nblk, double *var, sps_idx *work,
                                   void *ws, size_t ws_bytes)
{
    *var = 0.0;
    *nblk = 0;
    blk[0] = 0;
    if (maxmem < 1) return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: sub-block limit %d < 1", maxmem);
    sps_idx maxc = 0, minc = 0;
    int64_t total = 0;
    for (sps_idx h = 0; h < n; h++) {
        maxc = cnt[h] > maxc ? cnt[h] : maxc;
        minc = cnt[h] < minc ? cnt[h] : minc;
        total += cnt[h];
    }
    if (minc < 0) return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: diagonal count %d < 0", minc);
    if (maxc > FAST_MAXC || total * seg > INT32_MAX || seg < 1)
        return plan_reference(ctx, cnt, n, seg, group, order_rows, maxmem, members, blk, nblk, var);
    sps_idx nb = 0;
    if (!group) { /* HDIA: in row order already */
        for (sps_idx i = 0; i < n; i++) {
            members[i] = i;
            blk[i + 1] = i + 1;
        }
        nb = n;
    } else {
        /* Memory (only what is touched costs: fresh pages fault): q1 in
         * members, parent in work, tsize (each node's segments) in blk.
         * Scratch words: the counting sort's four histograms (4 (maxc + 1))
         * first; then q2w (the merged nodes' weights, int64, none on most
         * matrices) followed at once by asc (what remains after step 2,
         * ascending: m <= n - merges words) in [0, 2n); q2 (the merged
         * nodes) in [2n, 3n); gcnt (each group's segments) after it; last
         * the group cursors at and end over asc's words. */
        const size_t K = (size_t)maxc + 1, un = (size_t)n;
        size_t words = 3 * un + un / 2 + 8;
        if (4 * K > words) words = 4 * K;
        char *scr = NULL;
        int own = 0; /* scr is a fresh allocation (else ws, or none yet) */
        sps_idx *q1 = members, *hist = 4 * K <= un + 1 ? blk : NULL; /* blk is free until the end */
        if (!hist && !(hist = (sps_idx *)(void *)(scr = plan_scratch(ws, ws_bytes, words * sizeof(sps_idx), &own))))
            return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory planning %d segments", n);
        sort_counts(cnt, n, K, q1, hist);
        if (order_rows && plan_pairs(cnt, n, seg, maxc, total, maxmem, members, blk, work, nblk, var)) {
            if (own) sps__free(scr);
            return SPS_OK;
        }
        if (!scr && !(scr = plan_scratch(ws, ws_bytes, words * sizeof(sps_idx), &own)))
            return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory planning %d segments", n);
        sps_idx *q2 = (sps_idx *)(void *)scr + 2 * un, *gcnt = q2 + un;
        sps_idx *parent = work, *tsize = blk;
        for (sps_idx h = 0; h < n; h++) {
            parent[h] = -1;
            tsize[h] = 1;
        }
        fplan p = {cnt, seg, q1, q2, (int64_t *)(void *)scr, 0, n, 0, 0, -1, 0};
        int64_t pmax = (int64_t)maxc * seg;
        /* Step 1 (see sps__drm_plan) */
        for (sps_idx m = n; m >= 2; m--) {
            const int64_t wa = fpeek_w(&p, 0), wb = fpeek_w(&p, 1);
            if (!(pmax > 2 * wa && pmax > 2 * wb)) break;
            int64_t w1, w2;
            const sps_idx a = fpop(&p, 1, &w1), b = fpop(&p, 1, &w2);
            parent[a] = b; /* pmin2 += pmin1 */
            tsize[b] += tsize[a];
            p.q2[p.n2] = b;
            p.q2w[p.n2++] = w1 + w2;
            if (w1 + w2 > pmax) pmax = w1 + w2;
        }
        sps_idx m = (p.n1 - p.i1) + (p.n2 - p.i2);
        /* Step 2: an odd count merges its two smallest */
        if (m % 2 == 1 && m >= 3) {
            int64_t w1, w2;
            const sps_idx a = fpop(&p, 1, &w1), b = fpop(&p, 1, &w2);
            parent[a] = b;
            tsize[b] += tsize[a];
            p.ex = b;
            p.exw = w1 + w2;
            m--;
        }
        /* What remains in ascending order: q1's runs copied between the
         * merged nodes (q2's and the extra, few on most matrices). */
        sps_idx *asc = (sps_idx *)(void *)(p.q2w + p.n2), k = 0, i1 = p.i1;
        for (;;) {
            sps_idx o = -1;
            int64_t ow = 0;
            const int take_ex = p.ex >= 0 && (p.i2 >= p.n2 || fafter(p.exw, p.ex, p.q2w[p.i2], p.q2[p.i2]));
            if (take_ex) {
                o = p.ex;
                ow = p.exw;
                p.ex = -1;
            } else if (p.i2 < p.n2) {
                o = p.q2[p.i2];
                ow = p.q2w[p.i2++];
            }
            if (o < 0) break;
            sps_idx e = i1, hi = p.n1; /* q1's entries below o: a run (q1 ascends) */
            while (e < hi) {
                const sps_idx mid = e + (hi - e) / 2;
                if (fafter(cnt[q1[mid]] * seg, q1[mid], ow, o)) e = mid + 1;
                else hi = mid;
            }
            memcpy(asc + k, q1 + i1, (size_t)(e - i1) * sizeof *asc);
            k += e - i1;
            i1 = e;
            asc[k++] = o;
        }
        memcpy(asc + k, q1 + i1, (size_t)(p.n1 - i1) * sizeof *asc);
        /* Step 3: group r = the r-th largest and (more than 2 left) the r-th smallest */
        const sps_idx G = m > 2 ? m / 2 : m;
        sps_idx gmax = 0;
        for (sps_idx r = 0; r < G; r++) {
            const sps_idx hi = asc[m - 1 - r], lo = m > 2 ? asc[r] : hi;
            parent[hi] = parent[lo] = -r - 2;
            gcnt[r] = tsize[hi] + (lo != hi ? tsize[lo] : 0);
            gmax = gcnt[r] > gmax ? gcnt[r] : gmax;
        }
        /* Each segment at its place (its group: fgroup). at[g]: where group
         * g's next member goes; end[g]: the end of its current chunk. */
        sps_idx *at = (sps_idx *)(void *)scr, *end = at + G, run = 0;
        if (order_rows && gmax <= maxmem) {
            /* every group one chunk, numbered when its first segment comes:
             * no branch on it (they would be taken half the time at random) */
            for (sps_idx g = 0; g < G; g++) at[g] = -1;
            for (sps_idx s = 0; s < n; s++) {
                const sps_idx g = fgroup(parent, s), isnew = at[g] < 0;
                const sps_idx place = isnew ? run : at[g];
                blk[nb] = run; /* kept only when nb moves on */
                nb += isnew;
                run += isnew ? gcnt[g] : 0;
                members[place] = s;
                at[g] = place + 1;
            }
        } else if (order_rows) {
            memset(at, 0, 2 * (size_t)G * sizeof *at);
            for (sps_idx s = 0; s < n; s++) {
                const sps_idx g = fgroup(parent, s);
                if (at[g] == end[g]) { /* a new chunk: its first segment */
                    const sps_idx size = gcnt[g] < maxmem ? gcnt[g] : maxmem;
                    at[g] = run;
                    end[g] = run + size;
                    blk[nb++] = run;
                    run += size;
                }
                gcnt[g]--; /* members of g still to place */
                members[at[g]++] = s;
            }
        } else {
            for (sps_idx g = 0; g < G; g++) { /* chunks in list order */
                at[g] = run;
                for (sps_idx c = 0; c < gcnt[g]; c += maxmem) blk[nb++] = run + c;
                run += gcnt[g];
            }
            for (sps_idx s = 0; s < n; s++) members[at[fgroup(parent, s)]++] = s;
        }
        blk[nb] = run;
        if (own) sps__free(scr);
    }
    *nblk = nb;
    if (nb > 0) {
        const double mean = (double)(total * seg) / nb;
        double ss = 0.0;
        for (sps_idx b = 0; b < nb; b++) {
            int64_t c = 0;
            for (sps_idx k = blk[b]; k < blk[b + 1]; k++) c += cnt[members[k]];
            const double pb = (double)(c * seg);
            ss += (pb - mean) * (pb - mean);
        }
        *var = ss / nb;
    }
    return SPS_OK;
}
