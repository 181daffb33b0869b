/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/merge_path.h: the merge-path partition shared by merge.c (the host
 * emulation) and merge.cu (the kernels): tile geometry and the diagonal search.
 *
 * SpMV over CSR merges two sorted lists: the row end offsets a[r] = row_ptr[r+1]
 * (r < nrows) and the nonzero indices 0..nnz-1. Walking the merge, a nonzero z
 * adds val[z]*x[col[z]] to the current row and a row end a[r] <= z (ties: the
 * row end first, so empty rows end at once) closes row r. The path has
 * nrows + nnz items; tile t owns items [t*TILE, (t+1)*TILE), thread k of a tile
 * the ITEMS items from k*ITEMS on: equal work whatever the row lengths. */
#ifndef SPS_SPMV_MERGE_PATH_H
#define SPS_SPMV_MERGE_PATH_H

#include "core/internal.h"

#define SPS_MERGE_THREADS 128 /* threads per tile (thread block) */
#define SPS_MERGE_ITEMS 7     /* merge items per thread (odd: no shared-memory bank conflicts) */
#define SPS_MERGE_TILE (SPS_MERGE_THREADS * SPS_MERGE_ITEMS)

#ifdef __CUDACC__
#define SPS_MERGE_FN static __host__ __device__ __forceinline__
#else
#define SPS_MERGE_FN static inline
#endif

/* The split of the first `diag` items of the merge of a[0..alen) with the
 * nonzero indices b0, b0+1, ..., b0+blen-1: returns i, the number of row ends
 * among them (the nonzeros are diag - i). Binary search along the diagonal:
 * the first i whose row end a[i] comes after nonzero b0 + diag - i - 1. */
SPS_MERGE_FN int64_t sps_merge_search(const sps_idx *a, int64_t alen, int64_t b0, int64_t blen,
                                      int64_t diag)
{
    int64_t lo = diag > blen ? diag - blen : 0;
    int64_t hi = diag < alen ? diag : alen;
    while (lo < hi) {
        const int64_t mid = (lo + hi) >> 1;
        if (a[mid] <= b0 + diag - mid - 1) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

#endif
