/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/select.c: auto and tune (placeholder: csr-vector) */
#include "backend.h"

#include <string.h>

sps_status sps__select(sps_context *ctx, const sps_matrix *A, int tune,
                       const sps_operator_opts *opts, sps_operator **op)
{
    (void)tune;
    sps_status st = sps__operator_build(ctx, &A->A, &sps_backend_csr_vector, "", opts, op);
    if (st == SPS_OK)
        sps__strlcpy((*op)->info.reason, "placeholder selector: csr-vector", sizeof (*op)->info.reason);
    return st;
}
