/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/dense.c: sps_dense_solve, the LAPACKE dgesv oracle that the
 * iterative solvers are checked against */
#include "../core/internal.h"

#include <string.h>

#if SPS_HAVE_LAPACKE
#include <lapacke.h>
#endif

#define SPS_DENSE_MAX 20000

sps_status sps_dense_solve(sps_context *ctx, const sps_matrix *A, const double *b, double *x)
{
    if (!A || (!b && A->A.nrows) || (!x && A->A.nrows))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dense_solve: NULL argument");
    const sps_csr *C = &A->A;
    sps_idx n = C->nrows;
    if (C->ncols != n)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dense_solve: the matrix is %d x %d, not square",
                        n, C->ncols);
    if (n > SPS_DENSE_MAX)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "sps_dense_solve: n = %d is over the dense limit %d", n, SPS_DENSE_MAX);
#if !SPS_HAVE_LAPACKE
    (void)b;
    (void)x;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED,
                    "sps_dense_solve: built without LAPACKE (./configure --with-lapacke)");
#else
    if (n == 0) return SPS_OK;
    /* Column-major dense copy: a(i, j) at a[i + j n]. */
    double *a = sps__calloc(sps__mul_size((size_t)n, (size_t)n), sizeof *a);
    double *rhs = sps__malloc((size_t)n * sizeof *rhs);
    lapack_int *piv = sps__malloc((size_t)n * sizeof *piv);
    if (!a || !rhs || !piv) {
        sps__free(a);
        sps__free(rhs);
        sps__free(piv);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_dense_solve: out of memory (n = %d)", n);
    }
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx k = C->row_ptr[i]; k < C->row_ptr[i + 1]; k++)
            a[(size_t)i + (size_t)C->col_idx[k] * (size_t)n] += C->val[k];
    memcpy(rhs, b, (size_t)n * sizeof *rhs);
    lapack_int info = LAPACKE_dgesv(LAPACK_COL_MAJOR, n, 1, a, n, piv, rhs, n);
    sps_status st = SPS_OK;
    if (info > 0)
        st = sps__err(ctx, SPS_ERR_ZERO_PIVOT,
                      "sps_dense_solve: the matrix is singular: U(%d,%d) is exactly zero (dgesv info %d)",
                      (int)info, (int)info, (int)info);
    else if (info < 0)
        st = sps__err(ctx, SPS_ERR_INTERNAL, "sps_dense_solve: dgesv rejected argument %d", (int)-info);
    else
        memcpy(x, rhs, (size_t)n * sizeof *x);
    sps__free(a);
    sps__free(rhs);
    sps__free(piv);
    return st;
#endif
}
