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
