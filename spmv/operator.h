/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/operator.h: the operator object (spmv/operator.c): one
 * backend's format built from a CSR, applied, updated, destroyed.
 *
 * This is the bottom of the framework's one-way chain
 *   create.c -> select.c -> measure.c -> operator.c -> backend tables
 * (doc/spmv.md, "Code layout"): nothing here calls a selector or a
 * measurement. */
#ifndef SPS_SPMV_OPERATOR_H
#define SPS_SPMV_OPERATOR_H

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The backend built when the one asked for refuses the matrix: auto's and
 * tune's baseline, and sps_operator_opts.fallback's. */
#define SPS_FALLBACK_SPEC "csr-vector"

/* Build an operator with a given backend: convert (timed), upload (timed),
 * fill op->info. The matrix's CSR is only read. opts->precision must be
 * valid (sps_operator_create checks it). */
sps_status sps__operator_build(sps_context *ctx, const sps_csr *A, const sps_backend *be,
                               const char *params, const sps_operator_opts *opts,
                               sps_operator **op);

/* Build from a spec "name[:params]"; a name not in the registry is
 * SPS_ERR_NOT_COMPILED (the selectors' names are always registered ones). */
sps_status sps__operator_build_spec(sps_context *ctx, const sps_csr *A, const char *spec,
                                    const sps_operator_opts *opts, sps_operator **op);

/* op's matrix on the device as a double CSR (row pointers, columns,
 * values), when its backend keeps one (csr-vector, csr-scalar): 1 and the
 * arrays, which stay op's; else 0 (another format, single precision, a
 * host context). */
int sps__operator_dev_csr(const sps_operator *op, const sps_idx **rp, const sps_idx **ci, const double **v);

/* The payoff arithmetic (spmv/payoff.c), one rule for auto's predictions and
 * the measured figures: from in->ref_us, in->spmv_us and in->extra_ms, sets
 * saved_us, convert_spmvs and break_even. */
void sps__payoff_derive(sps_operator_info *in);
/* "pays after N" or "never pays", from in->break_even. */
void sps__payoff_pays(const sps_operator_info *in, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* SPS_SPMV_OPERATOR_H */
