/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/csr_scalar.cu: the csr-scalar kernel.
 *
 * Work decomposition: thread r computes row r on its own, walking the row's
 * entries in CSR order, then writes y[r] = alpha*sum + beta*y[r].
 *
 * Wins: nothing in particular; it is the baseline every other format is
 * measured against, and it is competitive only when every row holds one to
 * three entries (then a thread group per row would idle).
 * Loses: neighbouring threads read entries one row length apart, so the
 * loads of col_idx and val are not coalesced; a warp runs as long as its
 * longest row, so uneven row lengths serialize it.
 * Deterministic: each row is summed by one thread in CSR order. */
#include "core/cuda_check.cuh"
#include "csr_fmt.h"
#include "kernels.h"

SPS_DECLARE_GPU_BACKEND(sps_csr_scalar)

namespace {

struct CsrScalarPolicy {
    static constexpr int BLOCK_THREADS = 256;
};

template <typename T, bool HAS_BETA>
__global__ void __launch_bounds__(CsrScalarPolicy::BLOCK_THREADS)
csr_scalar_kernel(sps_idx nrows, const sps_idx *__restrict__ row_ptr,
                  const sps_idx *__restrict__ col_idx, const T *__restrict__ val, T alpha,
                  const T *__restrict__ x, T beta, T *__restrict__ y)
{
    const int64_t r = (int64_t)blockIdx.x * CsrScalarPolicy::BLOCK_THREADS + threadIdx.x;
    if (r >= nrows) return;
    /* unsigned: j + 1 cannot wrap for j < end <= INT32_MAX */
    const unsigned end = (unsigned)row_ptr[r + 1];
    T sum = T(0);
    for (unsigned j = (unsigned)row_ptr[r]; j < end; j++) sum += val[j] * x[col_idx[j]];
    if constexpr (HAS_BETA)
        y[r] = alpha * sum + beta * y[r];
    else
        y[r] = alpha * sum; /* beta == 0: y is never read (it may hold NaN) */
}

template <typename T>
sps_status run(sps_context *ctx, const sps_csr_dev *d, double alpha, const void *x,
               double beta, void *y)
{
    if (d->nrows == 0) return SPS_OK;
    constexpr int B = CsrScalarPolicy::BLOCK_THREADS;
    const unsigned grid = (unsigned)(((int64_t)d->nrows + B - 1) / B);
    const T *v = (const T *)d->val;
    if (beta != 0.0)
        csr_scalar_kernel<T, true><<<grid, B, 0, sps_stream(ctx)>>>(
            d->nrows, d->row_ptr, d->col_idx, v, (T)alpha, (const T *)x, (T)beta, (T *)y);
    else
        csr_scalar_kernel<T, false><<<grid, B, 0, sps_stream(ctx)>>>(
            d->nrows, d->row_ptr, d->col_idx, v, (T)alpha, (const T *)x, T(0), (T *)y);
    SPS_LAUNCH_CHECK(ctx, "csr_scalar_kernel");
    return SPS_OK;
}

} // namespace

extern "C" sps_status sps__csr_scalar_run(sps_context *ctx, const sps_csr_dev *d, double alpha,
                                          const void *x, double beta, void *y)
{
    return d->single ? run<float>(ctx, d, alpha, x, beta, y)
                     : run<double>(ctx, d, alpha, x, beta, y);
}

extern "C" sps_status sps_csr_scalar_upload(sps_context *ctx, const sps_fmt *f, int single,
                                            void **dev, sps_spmv_stats *st)
{
    return sps__csr_fmt_upload(ctx, f, single, dev, st);
}

extern "C" sps_status sps_csr_scalar_apply(sps_context *ctx, void *dev, double alpha,
                                           const void *x, double beta, void *y)
{
    return sps__csr_scalar_run(ctx, (const sps_csr_dev *)dev, alpha, x, beta, y);
}

extern "C" sps_status sps_csr_scalar_update_dev(sps_context *ctx, const sps_fmt *f, void *dev)
{
    return sps__csr_fmt_update_dev(ctx, f, dev);
}

extern "C" void sps_csr_scalar_free_dev(void *dev) { sps__csr_fmt_free_dev(dev); }
