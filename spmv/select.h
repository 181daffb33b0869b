/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/select.h: the selectors auto and tune (spmv/select.c). They
 * sit above the operator object and the measurements (doc/spmv.md, "Code
 * layout") and are called only by sps_operator_create (spmv/create.c). */
#ifndef SPS_SPMV_SELECT_H
#define SPS_SPMV_SELECT_H

#include "operator.h"

#ifdef __cplusplus
extern "C" {
#endif

/* auto (tune = 0) and tune (tune = 1): build the chosen operator and write
 * why into op->info.reason (and select_ms). auto reads the matrix's features:
 * opts->features when the caller has them, else the few it needs, computed
 * here. */
sps_status sps__select(sps_context *ctx, const sps_matrix *A, int tune,
                       const sps_operator_opts *opts, sps_operator **op);

#ifdef __cplusplus
}
#endif
#endif /* SPS_SPMV_SELECT_H */
