/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/csr_vector_kernel.cuh: the csr-vector kernel template
 * and its launchers (csr_vector.cu's header comment describes the kernel),
 * shared by csr_vector.cu (double, every row: all a double solve launches)
 * and csr_vector_other.cu (single precision, and hyb's and AMG's indirect
 * rows). CUDA loads a module at the first launch of one of its kernels, so a
 * double solve's csr-vector module holds 15 kernels instead of 45. */
#ifndef SPS_CSR_VECTOR_KERNEL_CUH
#define SPS_CSR_VECTOR_KERNEL_CUH

#include "core/cuda_check.cuh"
#include "csr_fmt.h"
#include "kernels.h"

namespace {


struct CsrVectorPolicy {
    static constexpr int BLOCK_THREADS = 256;
};

template <typename T, int TPR, bool HAS_BETA, bool INDIRECT>
__global__ void __launch_bounds__(CsrVectorPolicy::BLOCK_THREADS)
csr_vector_kernel(sps_idx nrows, const sps_idx *__restrict__ row_ptr,
                  const sps_idx *__restrict__ col_idx, const T *__restrict__ val,
                  const sps_idx *__restrict__ rows, T alpha, const T *__restrict__ x, T beta,
                  T *__restrict__ y)
{
    constexpr int B = CsrVectorPolicy::BLOCK_THREADS;
    static_assert(B % 32 == 0 && 32 % TPR == 0, "groups must tile whole warps");
    const int lane = threadIdx.x & (TPR - 1);
    const int64_t i = ((int64_t)blockIdx.x * B + threadIdx.x) / TPR;

    T sum = T(0);
    if (i < nrows) {
        /* unsigned: j + TPR cannot wrap for j < end <= INT32_MAX */
        const unsigned start = (unsigned)row_ptr[i], end = (unsigned)row_ptr[i + 1];
        unsigned j = start + lane;
        if (TPR == 32 && end - start > 32) {
            j = start - (start & 31u) + lane; /* aligned: lanes below start skip one step */
            if (j >= start) sum += val[j] * x[col_idx[j]];
            j += 32;
        }
        for (; j < end; j += TPR) sum += val[j] * x[col_idx[j]];
    }
    /* Every lane of the warp reaches this point (no early return above). */
#pragma unroll
    for (int off = TPR / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, TPR);

    if (lane == 0 && i < nrows) {
        const int64_t r = INDIRECT ? (int64_t)rows[i] : i;
        if constexpr (HAS_BETA)
            y[r] = alpha * sum + beta * y[r];
        else
            y[r] = alpha * sum; /* beta == 0: y is never read */
    }
}

template <typename T, int TPR, bool INDIRECT>
sps_status launch(sps_context *ctx, const sps_csr_dev *d, const sps_idx *rows, double alpha,
                  const void *x, double beta, void *y)
{
    constexpr int B = CsrVectorPolicy::BLOCK_THREADS;
    const unsigned grid = (unsigned)(((int64_t)d->nrows * TPR + B - 1) / B);
    const T *v = (const T *)d->val;
    if (beta != 0.0)
        csr_vector_kernel<T, TPR, true, INDIRECT><<<grid, B, 0, sps_stream(ctx)>>>(
            d->nrows, d->row_ptr, d->col_idx, v, rows, (T)alpha, (const T *)x, (T)beta, (T *)y);
    else
        csr_vector_kernel<T, TPR, false, INDIRECT><<<grid, B, 0, sps_stream(ctx)>>>(
            d->nrows, d->row_ptr, d->col_idx, v, rows, (T)alpha, (const T *)x, T(0), (T *)y);
    SPS_LAUNCH_CHECK(ctx, "csr_vector_kernel");
    return SPS_OK;
}

template <typename T, bool INDIRECT>
sps_status dispatch(sps_context *ctx, const sps_csr_dev *d, const sps_idx *rows, int tpr,
                    double alpha, const void *x, double beta, void *y)
{
    switch (tpr) {
    case 2: return launch<T, 2, INDIRECT>(ctx, d, rows, alpha, x, beta, y);
    case 4: return launch<T, 4, INDIRECT>(ctx, d, rows, alpha, x, beta, y);
    case 8: return launch<T, 8, INDIRECT>(ctx, d, rows, alpha, x, beta, y);
    case 16: return launch<T, 16, INDIRECT>(ctx, d, rows, alpha, x, beta, y);
    case 32: return launch<T, 32, INDIRECT>(ctx, d, rows, alpha, x, beta, y);
    default: return sps__err(ctx, SPS_ERR_INTERNAL, "csr-vector: group size %d is not 2..32", tpr);
    }
}

} // namespace

#endif /* SPS_CSR_VECTOR_KERNEL_CUH */
