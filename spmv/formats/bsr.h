/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/bsr.h: the bsr format (dense b x b blocks), shared by
 * its host side (bsr.c) and its kernel (bsr.cu).
 *
 * Block row I holds rows I*b .. I*b+b-1; its blocks are brow_ptr[I] ..
 * brow_ptr[I+1]-1, sorted by block column bcol[k], each b*b values row-major
 * at val[k*b*b]. The last block row and block column may stand past the
 * matrix (n not a multiple of b): their extra slots hold zeros, and x is never
 * read past ncols. The kernel's order of a row's sum, which apply_host
 * repeats: a warp owns a block row; lane l works for row i = l % b of it in
 * group g = l / b (G = 32 / b groups), summing blocks k = start + g,
 * start + g + G, ... (each block's b columns in order); then group 0's lane
 * adds the groups' sums in order g = 0, 1, ..., G-1. */
#ifndef SPS_SPMV_BSR_H
#define SPS_SPMV_BSR_H

#include "spmv/backend.h"

#define SPS_BSR_MAX_BLOCK 8 /* block sizes 1..8 (auto picks among 2..8) */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_fmt_bsr {
    sps_idx nrows, ncols;
    int64_t nnz;
    int b;              /* block size */
    sps_idx nbrows;     /* ceil(nrows / b) */
    int64_t nblocks;
    sps_idx *brow_ptr;  /* nbrows + 1 */
    sps_idx *bcol;      /* nblocks */
    double *val;        /* nblocks * b * b */
    int64_t *pos;       /* nnz: slot of the CSR entry p (update_values) */
} sps_fmt_bsr;

#ifdef __cplusplus
}
#endif
#endif
