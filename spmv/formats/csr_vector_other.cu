/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/csr_vector_other.cu: the csr-vector kernel in single
 * precision and with indirect rows (hyb's tail), in a module of its own so
 * that a double solve's first csr-vector launch loads only the 15 kernels it
 * can use (csr_vector_kernel.cuh). */
#include "csr_vector_kernel.cuh"

extern "C" sps_status sps__csr_vector_run_other(sps_context *ctx, const sps_csr_dev *d,
                                                const sps_idx *rows, int tpr, double alpha,
                                                const void *x, double beta, void *y)
{
    if (d->single)
        return rows ? dispatch<float, true>(ctx, d, rows, tpr, alpha, x, beta, y)
                    : dispatch<float, false>(ctx, d, rows, tpr, alpha, x, beta, y);
    if (rows) return dispatch<double, true>(ctx, d, rows, tpr, alpha, x, beta, y);
    return sps__err(ctx, SPS_ERR_INTERNAL, "csr-vector: the double, every-row case belongs to csr_vector.cu");
}
