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

#if SPS_HAVE_CUDA
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
