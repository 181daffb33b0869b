/* SPDX-License-Identifier: MIT */
/* spsolve/dist/partition.c: contiguous row blocks balanced by nonzeros, their
 * starts on reduction-block boundaries (dist.h) */
#include "dist.h"

/* Weight of rows [0, i): their nonzeros plus one per row (an empty row still
 * costs its vector entries). */
static int64_t prefix_weight(const sps_idx *row_ptr, sps_idx i)
{
    return (int64_t)row_ptr[i] - row_ptr[0] + i;
}

void sps__dist_partition(sps_idx n, const sps_idx *row_ptr, int nranks, sps_idx blk,
                         sps_idx *starts)
{
    if (blk < 1) blk = 1;
    int64_t nb = ((int64_t)n + blk - 1) / blk; /* candidate starts: k * blk, k <= nb */
    int64_t total = prefix_weight(row_ptr, n);
    int64_t k = 0;
    starts[0] = 0;
    for (int r = 1; r < nranks; r++) {
        /* the block boundary whose prefix weight is nearest r/nranks of the total */
        double target = (double)total * r / nranks;
        while (k < nb) {
            sps_idx a = (sps_idx)(k * blk), b = (sps_idx)((k + 1) * blk < n ? (k + 1) * blk : n);
            double da = target - (double)prefix_weight(row_ptr, a);
            double db = (double)prefix_weight(row_ptr, b) - target;
            if (db < 0 || db < da) k++;
            else break;
        }
        starts[r] = (sps_idx)(k * blk < n ? k * blk : n);
    }
    starts[nranks] = n;
}

int sps__dist_owner(const sps_idx *starts, int nranks, sps_idx g)
{
    int lo = 0, hi = nranks; /* starts[lo] <= g < starts[hi]: skips empty ranks */
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (starts[mid] <= g) lo = mid;
        else hi = mid;
    }
    return lo;
}
