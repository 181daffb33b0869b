/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/diag_plan.c: DRM's iterative merge of row segments into sub-blocks (Algorithm 1)
 *
 * The paper (Wang et al. 2024, Algorithm 1) keeps the operand counts P sorted
 * in decreasing order and
 *   1. while pmax1 > 2*pmin1 and pmax1 > 2*pmin2: pmin2 += pmin1, drop pmin1,
 *      re-sort (the two smallest entries' segments will share a thread block);
 *   2. if card(P) is odd: merge the two smallest once more, re-sort;
 *   3. if card(P) > 2: pair the r-th largest with the r-th smallest.
 * Here P is a binary min-heap, so each merge of step 1 costs O(log S) instead
 * of a re-sort: O(S log S) in all. The order is total and deterministic: by
 * operand count, ties broken by node id (a smaller id counts as larger, like a
 * stable sort of the segments in their original order); a merged node keeps
 * pmin2's id, as `pmin2 += pmin1` does in the pseudo-code.
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

/* a comes after b in the decreasing order of P. */
static int after(const plan *p, sps_idx a, sps_idx b)
{
    return p->ope[a] < p->ope[b] || (p->ope[a] == p->ope[b] && a > b);
}

/* Min-heap (by `after`) of node ids. */
static void sift_down(const plan *p, sps_idx *h, sps_idx m, sps_idx k)
{
    for (;;) {
        sps_idx c = 2 * k + 1;
        if (c >= m) return;
        if (c + 1 < m && after(p, h[c + 1], h[c])) c++;
        if (!after(p, h[c], h[k])) return;
        sps_idx t = h[c]; h[c] = h[k]; h[k] = t;
        k = c;
    }
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

sps_status sps__drm_plan(sps_context *ctx, const int64_t *ope, sps_idx n, int merge,
                         sps_idx maxmem, sps_idx *members, sps_idx *blk, sps_idx *nblk)
{
    blk[0] = 0;
    *nblk = 0;
    if (maxmem < 1) return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: sub-block limit %d < 1", maxmem);
    if (!merge) {
        for (sps_idx i = 0; i < n; i++) {
            members[i] = i;
            blk[i + 1] = i + 1;
        }
        *nblk = n;
        return SPS_OK;
    }
    plan p;
    p.ope = sps__malloc(sps__mul_size((size_t)n, sizeof *p.ope));
    p.next = sps__malloc(sps__mul_size((size_t)n, sizeof *p.next));
    p.tail = sps__malloc(sps__mul_size((size_t)n, sizeof *p.tail));
    sps_idx *h = sps__malloc(sps__mul_size((size_t)n, sizeof *h));
    if (!p.ope || !p.next || !p.tail || !h) {
        sps__free(p.ope); sps__free(p.next); sps__free(p.tail); sps__free(h);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory merging %d segments", n);
    }
    int64_t pmax = 0;
    for (sps_idx i = 0; i < n; i++) {
        p.ope[i] = ope[i];
        p.next[i] = -1;
        p.tail[i] = i;
        h[i] = i;
        if (ope[i] > pmax) pmax = ope[i];
    }
    sps_idx m = n;
    for (sps_idx k = m / 2; k-- > 0;) sift_down(&p, h, m, k);

    /* Step 1: merge the two smallest while the largest exceeds twice both. */
    while (m >= 2) {
        const sps_idx a = h[0];
        const sps_idx b = (m == 2 || after(&p, h[1], h[2])) ? h[1] : h[2];
        if (!(pmax > 2 * p.ope[a] && pmax > 2 * p.ope[b])) break;
        h[0] = h[--m];             /* pop pmin1: pmin2 comes to the top */
        sift_down(&p, h, m, 0);
        absorb(&p, b, a);          /* pmin2 += pmin1: a larger key at the root */
        sift_down(&p, h, m, 0);
        if (p.ope[b] > pmax) pmax = p.ope[b];
    }

    /* Heap sort in place: the min-heap leaves h[0..m) in decreasing order. */
    for (sps_idx k = m; k > 1; k--) {
        sps_idx t = h[0]; h[0] = h[k - 1]; h[k - 1] = t;
        sift_down(&p, h, k - 1, 0);
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
        sps__diag_sort(members + start, (size_t)(pos - start));
        for (sps_idx c = start; c < pos; c += maxmem) {
            blk[nb + 1] = pos - c > maxmem ? c + maxmem : pos;
            nb++;
        }
    }
    *nblk = nb;
    sps__free(p.ope); sps__free(p.next); sps__free(p.tail); sps__free(h);
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
