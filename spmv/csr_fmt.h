/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/csr_fmt.h: the host side shared by the CSR-based backends
 * (csr-scalar, csr-vector, merge, cusparse): the format is a copy of the CSR. */
#ifndef SPS_CSR_FMT_H
#define SPS_CSR_FMT_H

#include "backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_fmt_csr {
    sps_csr A;
    int param;      /* backend-specific (cusparse: algorithm; csr-vector: threads per row) */
    void *extra;    /* backend-specific host data, freed with sps__free */
} sps_fmt_csr;

/* Copy A; fill the CSR bytes model and fill = 0. Parameters are not read. */
sps_status sps__csr_fmt_convert(sps_context *ctx, const sps_csr *A, sps_fmt **out,
                                sps_spmv_stats *st);
void sps__csr_fmt_apply_host(const sps_fmt *f, double alpha, const double *x, double beta,
                             double *y);
sps_status sps__csr_fmt_update_host(sps_context *ctx, sps_fmt *f, const double *values);
void sps__csr_fmt_free(sps_fmt *f);

#ifdef __cplusplus
}
#endif
#endif
