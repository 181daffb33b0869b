/* SPDX-License-Identifier: MIT */
/* spsolve/precond/bjacobi/bjacobi.h: what block-Jacobi's host part
 * (bjacobi.c) and device part (bjacobi.cu) share. */
#ifndef SPS_BJACOBI_H
#define SPS_BJACOBI_H

#include "../pc_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPS_BJACOBI_MAX_BLOCK 32

typedef struct sps_bjacobi_prm {
    int block; /* fixed block size; 0: supervariables (rows with the same pattern) */
} sps_bjacobi_prm;

/* Blocks of consecutive rows [start[b], start[b + 1]); the inverse of block b
 * is dense, row-major, at inv + off[b] (size^2 entries). Host or device. */
typedef struct sps_bjacobi {
    sps_idx nblocks;
    int max_block;
    sps_idx *start; /* nblocks + 1 */
    sps_idx *blk;   /* n: the block of each row */
    int64_t *off;   /* nblocks + 1 */
    double *inv;    /* off[nblocks] entries */
} sps_bjacobi;

#if SPS_HAVE_CUDA
/* Device setup (bjacobi.cu): uploads the host blocks and inverses. */
sps_status sps__bjacobi_gpu(sps_precond *pc, const sps_bjacobi *host);
#endif

#ifdef __cplusplus
}
#endif
#endif
