/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/spmm.h: the product with a block of k vectors, Y = alpha*A*X +
 * beta*Y (doc/spmm.md), inside the library.
 *
 * spmv/spmm.c holds the operator-level dispatch (sps_operator_apply_multi*)
 * and the host paths; spmv/spmm.cu the device kernels behind the extern "C"
 * entry points below. X and Y are column-major: column c of X starts at
 * X + c * ldx, and is a vector of the operator's columns (ldx >= ncols),
 * likewise Y (ldy >= nrows). */
#ifndef SPS_SPMV_SPMM_H
#define SPS_SPMV_SPMM_H

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The plain CSR loop over a block: for each row, for each column c, the
 * row's entries summed in stored order, y = alpha*s (beta == 0, y not read)
 * or alpha*s + beta*y: column by column bitwise the product of
 * sps__csr_spmv, reading the matrix once. */
void sps__csr_spmm(const sps_csr *A, int k, double alpha, const double *X, int64_t ldx,
                   double beta, double *Y, int64_t ldy);

/* ---- SPS_SPMM_PANEL: row panels after ASpT (doc/spmm.md, "The panel kernel") ----
 *
 * The CSR is cut into panels of SPS_PANEL_ROWS consecutive rows. In each
 * panel, a column with at least SPS_PANEL_MIN entries among the panel's rows
 * is dense; the panel's dense columns, ascending, are its dense list, cut into
 * tiles of SPS_PANEL_TILE columns. Each row's entries are reordered once:
 * first its dense entries, by their index in the dense list (stable: CSR
 * order among equal columns), then its other (sparse) entries in CSR order.
 * A dense entry's ci is its index in the panel's dense list, a sparse
 * entry's its column. Row r's sum, for every column c of X, is a chain of
 * fused multiply-adds s = fma(val, x, s) from s = 0 over the reordered entries
 * in that order, then y = alpha*s (beta == 0, y not read) or the two rounded
 * products alpha*s and beta*y added: the host reference sps__panel_spmm and
 * the kernel compute exactly this, bit for bit. */
#define SPS_PANEL_ROWS 32 /* P: rows per panel (one thread block) */
#define SPS_PANEL_MIN 2   /* T: entries in a panel that make a column dense */
#define SPS_PANEL_TILE 64 /* W: dense columns per shared-memory tile */
#define SPS_PANEL_KMAX 32 /* columns of X per kernel pass (larger k: passes) */

/* The reordered matrix: host arrays from sps__panel_build, or the device
 * copy the operator keeps (src is host only: NULL there). */
typedef struct sps_panel {
    sps_idx nrows, ncols, nnz, npanels, ndense; /* ndense: dense list entries, all panels */
    sps_idx dense_nnz;  /* entries in dense columns */
    sps_idx *rp;        /* nrows + 1: the CSR's row pointer */
    sps_idx *nd;        /* nrows: dense entries at the start of each row */
    sps_idx *ci;        /* nnz: dense list index (dense) or column (sparse) */
    double *val;        /* nnz */
    sps_idx *dp;        /* npanels + 1: panel p's dense list is dcol[dp[p] .. dp[p+1]) */
    sps_idx *dcol;      /* ndense: the dense columns, ascending within a panel */
    sps_idx *src;       /* nnz: each reordered entry's position in the CSR (host only) */
    size_t bytes;       /* device bytes held (device copy) */
} sps_panel;

/* Build the panels of A (host arrays, sps__malloc). O(nnz) plus sorting each
 * panel's dense list. Returns SPS_ERR_NO_MEMORY (message set) on failure;
 * *P is then empty. */
sps_status sps__panel_build(sps_context *ctx, const sps_csr *A, sps_panel *P);
void sps__panel_free(sps_panel *P);
/* The reference of the panel kernel (see above): bitwise its result. */
void sps__panel_spmm(const sps_panel *P, int k, double alpha, const double *X, int64_t ldx,
                     double beta, double *Y, int64_t ldy);

/* The operator's panels, built at the first SPS_SPMM_PANEL product and kept
 * until sps_operator_destroy or sps_operator_update_values (spmm.c). */
void sps__spmm_panel_drop(sps_operator *op);

#if SPS_HAVE_CUDA
/* The panel kernel (spmv/spmm_panel.cu) over a device copy of the panels:
 * one thread block per panel; k > SPS_PANEL_KMAX in passes of KMAX columns. */
sps_status sps__spmm_panel_dev(sps_context *ctx, const sps_panel *d, int k, double alpha,
                               const double *X, int64_t ldx, double beta, double *Y, int64_t ldy);
struct sps_csr_dev;
/* The native kernel over a double device CSR: a group of tpr threads per row
 * (tpr a power of two, 1..32), the k columns in register chunks, each
 * column's sum reduced over the group by a fixed butterfly: deterministic. */
sps_status sps__spmm_csr_dev(sps_context *ctx, const struct sps_csr_dev *d, int tpr, int k,
                             double alpha, const double *X, int64_t ldx, double beta, double *Y,
                             int64_t ldy);
/* cusparseSpMM (CSR_ALG1, non-transposed: deterministic) over the same CSR.
 * beta == 0 zeroes Y first (cuSPARSE does not promise not to read it). */
sps_status sps__spmm_cusparse(sps_context *ctx, const struct sps_csr_dev *d, int k, double alpha,
                              const double *X, int64_t ldx, double beta, double *Y, int64_t ldy);
#endif

#ifdef __cplusplus
}
#endif
#endif /* SPS_SPMV_SPMM_H */
