/* SPDX-License-Identifier: MIT */
/* spsolve/precond/pc_impl.h: what precond/precond.c (host, dispatch) and
 * precond/precond_gpu.cu (device) share. Not part of the interface. */
#ifndef SPS_PC_IMPL_H
#define SPS_PC_IMPL_H

#include "precond.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The zero-pivot message, identical on the host and the GPU paths:
 * `missing` > 0 when the pivot is a missing diagonal entry. */
sps_status sps__pc_pivot_error(sps_context *ctx, sps_pc_kind kind, sps_idx row, sps_idx n,
                               sps_idx missing);

#if SPS_HAVE_CUDA
/* Device setups (precond_gpu.cu). Each sets pc->destroy before allocating
 * anything, so a failure part-way is cleaned up by pc->destroy(pc). The host
 * has already done every structural check. */
sps_status sps__pc_gpu_none(sps_precond *pc);
/* dinv: 1/a_ii on the host, n entries. */
sps_status sps__pc_gpu_jacobi(sps_precond *pc, const double *dinv);
/* A: square, sorted, every diagonal entry present. */
sps_status sps__pc_gpu_ilu0(sps_precond *pc, const sps_csr *A);
/* L: the lower triangle of a symmetric A, each row ending with its diagonal. */
sps_status sps__pc_gpu_ic0(sps_precond *pc, const sps_csr *L);
#endif

#ifdef __cplusplus
}
#endif
#endif
