/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/csr_fmt.c: host side of the CSR-based backends */
#include "csr_fmt.h"

#include <string.h>

sps_status sps__csr_fmt_convert(sps_context *ctx, const sps_csr *A, sps_fmt **out,
                                sps_spmv_stats *st)
{
    sps_fmt_csr *f = sps__calloc(1, sizeof *f);
    if (!f) return sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory");
    sps_status s = sps__csr_copy(ctx, A, &f->A);
    if (s != SPS_OK) {
        sps__free(f);
        return s;
    }
    st->bytes_per_spmv = sps__csr_bytes_model(A, 0);
    st->value_bytes = 8.0 * A->nnz * 2 + 8.0 * A->nrows;
    st->slots = A->nnz;
    st->fill = 0.0;
    *out = (sps_fmt *)f;
    return SPS_OK;
}

void sps__csr_fmt_apply_host(const sps_fmt *f, double alpha, const double *x, double beta,
                             double *y)
{
    sps__csr_spmv(&((const sps_fmt_csr *)f)->A, alpha, x, beta, y);
}

sps_status sps__csr_fmt_update_host(sps_context *ctx, sps_fmt *f, const double *values)
{
    (void)ctx;
    sps_fmt_csr *c = (sps_fmt_csr *)f;
    memcpy(c->A.val, values, (size_t)c->A.nnz * sizeof *values);
    return SPS_OK;
}

void sps__csr_fmt_free(sps_fmt *f)
{
    sps_fmt_csr *c = (sps_fmt_csr *)f;
    if (!c) return;
    sps__csr_free(&c->A);
    sps__free(c->extra);
    sps__free(c);
}
