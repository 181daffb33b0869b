/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/dev_rows.cuh: a row of a device matrix's rows (backend.h
 * sps_dev_rows) times a vector, one thread per row, for kernels that walk
 * the rows themselves: the one-kernel engine (solvers/kernels.cuh) and
 * cheby's fused steps (precond/cheby/cheby_steps.cuh). CUDA C++, or C++ in
 * the CPU emulations (with the CUDA words defined first).
 *
 * The order: a CSR row's entries in order, or a DIA row's diagonals in order
 * (the slots whose column falls outside the matrix left out), each term
 * added as s += a * x (a fused multiply-add where the compiler contracts,
 * as nvcc does by default). That is csr-scalar's order and dia's (whose
 * kernel adds a * 0 for the slots outside, which changes no sum but the
 * sign of a zero one); csr-vector, merge and cuSPARSE sum in other orders. */
#ifndef SPS_SPMV_DEV_ROWS_CUH
#define SPS_SPMV_DEV_ROWS_CUH

#include "backend.h"

namespace {

/* Row i of A times the vector whose entry c is x(c) (a functor: a plain
 * load, or an entry computed where it is read). */
template <class X>
__device__ __forceinline__ double sps_row_dot(const sps_dev_rows &A, int i, const X &x)
{
    double s = 0.0;
    if (A.kind == SPS_ROWS_CSR) {
        const sps_idx e = A.row_ptr[i + 1];
        for (sps_idx j = A.row_ptr[i]; j < e; j++) s += A.val[j] * x(A.col_idx[j]);
        return s;
    }
    for (sps_idx d = 0; d < A.ndiag; d++) {
        const long long c = (long long)i + A.off[d];
        if (c >= 0 && c < (long long)A.n) s += A.val[(size_t)d * (size_t)A.n + (size_t)i] * x(c);
    }
    return s;
}

/* x[c] by a plain load. */
struct sps_row_x {
    const double *x;
    __device__ __forceinline__ double operator()(long long c) const { return x[c]; }
};

/* Row i of the operator's device rows times x. Plain loads: x changes
 * during the one kernel's launch. */
__device__ __forceinline__ double onek_row(const sps_dev_rows &A, const double *x, int i)
{
    return sps_row_dot(A, i, sps_row_x{x});
}

} /* namespace */

#endif /* SPS_SPMV_DEV_ROWS_CUH */
