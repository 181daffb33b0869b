/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/csr_vector.cu: the csr-vector kernel (Bell & Garland, CUSP).
 *
 * Work decomposition: a group of TPR consecutive lanes of a warp (TPR = 2, 4,
 * 8, 16 or 32) owns one row. Lane l of the group sums the entries l, l+TPR,
 * l+2*TPR, ... of the row, so the group reads col_idx and val in contiguous
 * runs (coalesced); the TPR partial sums are then added by a shuffle tree
 * (__shfl_down_sync with a full mask: every lane of the warp takes part, also
 * those whose group has no row), and the group's first lane writes y. With
 * TPR = 32 and a row longer than 32, the warp starts at the 32-aligned entry
 * below the row's start, so every load after the first is aligned (CUSP).
 * TPR is chosen on the host from the mean row length (sps__csr_vector_tpr).
 *
 * Wins: rows of similar length near TPR or longer: FEM, stencils, most
 * SuiteSparse matrices; it needs no conversion at all.
 * Loses: very uneven rows (a group per row still waits for its longest row,
 * and a group sized for the mean idles on short rows): merge wins there;
 * diagonal-structured matrices, where DRM/DIA read no column indices.
 * Deterministic: per-lane sums in a fixed order, then a fixed shuffle tree.
 *
 * The same kernel, with a row list (INDIRECT), sums HYB's CSR tail into y. */
#include "csr_vector_kernel.cuh"

SPS_DECLARE_GPU_BACKEND(sps_csr_vector)

namespace {

/* The fused "SpMV plus dot" (backend.h, apply_dot): y = A x in double, the
 * same per-row sums as csr_vector_kernel (lanes, then the shuffle tree), the
 * grid capped at maxparts blocks with a grid-stride loop over whole warps
 * (every lane of a warp runs the same rounds, so the shuffles stay full),
 * and each block's sum of x_i y_i over its rows, in a fixed order (each
 * group's first lane in round order, then warp shuffles, then the 8 warp
 * sums), into part[block]. */
template <int TPR>
__global__ void __launch_bounds__(CsrVectorPolicy::BLOCK_THREADS)
csr_vector_dot_kernel(sps_idx nrows, const sps_idx *__restrict__ row_ptr,
                      const sps_idx *__restrict__ col_idx, const double *__restrict__ val,
                      const double *__restrict__ x, double *__restrict__ y, double *__restrict__ part)
{
    constexpr int B = CsrVectorPolicy::BLOCK_THREADS;
    __shared__ double sh[B / 32];
    const int lane = threadIdx.x & (TPR - 1);
    const int64_t stride = (int64_t)gridDim.x * B / TPR;
    const int64_t warp0 = ((int64_t)blockIdx.x * B + (threadIdx.x & ~31)) / TPR;
    double acc = 0.0;
    for (int64_t w0 = warp0; w0 < nrows; w0 += stride) {
        const int64_t i = w0 + (threadIdx.x & 31) / TPR;
        double sum = 0.0;
        if (i < nrows) {
            const unsigned start = (unsigned)row_ptr[i], end = (unsigned)row_ptr[i + 1];
            unsigned j = start + lane;
            if (TPR == 32 && end - start > 32) {
                j = start - (start & 31u) + lane;
                if (j >= start) sum += val[j] * x[col_idx[j]];
                j += 32;
            }
            for (; j < end; j += TPR) sum += val[j] * x[col_idx[j]];
        }
#pragma unroll
        for (int off = TPR / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, TPR);
        if (lane == 0 && i < nrows) {
            y[i] = sum;
            acc += x[i] * sum;
        }
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        double t = threadIdx.x < B / 32 ? sh[threadIdx.x] : 0.0;
        for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
        if (threadIdx.x == 0) part[blockIdx.x] = t;
    }
}

template <int TPR>
sps_status launch_dot(sps_context *ctx, const sps_csr_dev *d, const double *x, double *y,
                      double *part, int maxparts, int *nparts)
{
    constexpr int B = CsrVectorPolicy::BLOCK_THREADS;
    int64_t g = ((int64_t)d->nrows * TPR + B - 1) / B;
    if (g > maxparts) g = maxparts;
    if (g < 1) g = 1;
    csr_vector_dot_kernel<TPR><<<(unsigned)g, B, 0, sps_stream(ctx)>>>(
        d->nrows, d->row_ptr, d->col_idx, (const double *)d->val, x, y, part);
    SPS_LAUNCH_CHECK(ctx, "csr_vector_dot_kernel");
    *nparts = (int)g;
    return SPS_OK;
}

} // namespace

extern "C" sps_status sps_csr_vector_apply_dot(sps_context *ctx, void *dev, const double *x,
                                               double *y, double *part, int maxparts, int *nparts)
{
    const sps_csr_dev *d = (const sps_csr_dev *)dev;
    if (d->single || d->nrows != d->ncols || maxparts < 1) return SPS_ERR_UNSUPPORTED;
    switch (d->param) {
    case 2: return launch_dot<2>(ctx, d, x, y, part, maxparts, nparts);
    case 4: return launch_dot<4>(ctx, d, x, y, part, maxparts, nparts);
    case 8: return launch_dot<8>(ctx, d, x, y, part, maxparts, nparts);
    case 16: return launch_dot<16>(ctx, d, x, y, part, maxparts, nparts);
    case 32: return launch_dot<32>(ctx, d, x, y, part, maxparts, nparts);
    default: return sps__err(ctx, SPS_ERR_INTERNAL, "csr-vector: group size %d is not 2..32", d->param);
    }
}

extern "C" sps_status sps__csr_vector_run(sps_context *ctx, const sps_csr_dev *d,
                                          const sps_idx *rows, int tpr, double alpha,
                                          const void *x, double beta, void *y)
{
    if (d->nrows == 0) return SPS_OK;
    if (d->single || rows) return sps__csr_vector_run_other(ctx, d, rows, tpr, alpha, x, beta, y);
    return dispatch<double, false>(ctx, d, rows, tpr, alpha, x, beta, y);
}

extern "C" sps_status sps_csr_vector_upload(sps_context *ctx, const sps_fmt *f, int single,
                                            void **dev, sps_spmv_stats *st)
{
    return sps__csr_fmt_upload(ctx, f, single, dev, st);
}

extern "C" sps_status sps_csr_vector_apply(sps_context *ctx, void *dev, double alpha,
                                           const void *x, double beta, void *y)
{
    const sps_csr_dev *d = (const sps_csr_dev *)dev;
    return sps__csr_vector_run(ctx, d, NULL, d->param, alpha, x, beta, y);
}

extern "C" sps_status sps_csr_vector_update_dev(sps_context *ctx, const sps_fmt *f, void *dev)
{
    return sps__csr_fmt_update_dev(ctx, f, dev);
}

extern "C" void sps_csr_vector_free_dev(void *dev) { sps__csr_fmt_free_dev(dev); }
