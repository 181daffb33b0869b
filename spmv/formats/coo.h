/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/coo.h: the coo format (row-sorted triplets) and the
 * tile geometry its host reference (coo.c) and its kernels (coo.cu) share.
 *
 * Nonzero z belongs to tile z / SPS_COO_TILE (one thread block); thread k of
 * a tile owns its items [k * ITEMS, (k + 1) * ITEMS) and sums them in order,
 * one running sum per run of equal rows. A run that begins and ends inside a
 * thread's items is a whole row: the thread adds it to y. A thread's first
 * run (when the thread has a second one) gets the partial sums of the same
 * row from the threads before it (a scan by key over the threads' last
 * runs) and is added to y by that thread; when the carry-in's row ended just
 * before the thread's first item, the thread adds the carry-in to its row
 * instead. The tile's last run is its carry
 * (row, partial sum); a second pass adds each run of equal carries, summed
 * in tile order, to its row. y is first scaled by beta, so every write is
 * y[r] += alpha * s, each row written by one thread per pass. */
#ifndef SPS_SPMV_COO_H
#define SPS_SPMV_COO_H

#include "spmv/backend.h"

#define SPS_COO_THREADS 128
#define SPS_COO_ITEMS 7 /* odd: thread k's items in shared memory hit distinct banks */
#define SPS_COO_TILE (SPS_COO_THREADS * SPS_COO_ITEMS)

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_fmt_coo {
    sps_idx nrows, ncols;
    int64_t nnz, ntiles;
    sps_idx *row, *col; /* nnz each, row-major order (the CSR's) */
    double *val;        /* nnz */
} sps_fmt_coo;

#ifdef __cplusplus
}
#endif
#endif
