/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/spmm.cu: the block products Y = alpha*A*X + beta*Y over a
 * device CSR in double (doc/spmm.md): spsolve's kernel and cusparseSpMM.
 *
 * The kernel: a group of tpr threads per row (csr-vector's group size from
 * the mean row length; 32 = a warp per row). The group walks the row's
 * entries once per chunk of C columns (C = 4, 8 or 16 by k: accumulators in
 * registers), lane l taking entries l, l + tpr, ...; each column's partial
 * sums are then reduced over the group by an xor butterfly (every lane ends
 * with the same bits, since each step adds the same two values), and lane
 * c mod tpr writes column c. The reduction tree depends on tpr only, which is
 * a function of the matrix: bitwise the same result run after run, no
 * atomics. Within a chunk the row's value and column index are read once for
 * all C columns; the chunks after the first find them in cache. With
 * csr-vector's group size, the per-lane sums (including csr-vector's aligned
 * start for tpr = 32) and the tree are csr-vector's: lane 0's butterfly
 * adds the same values in the same order as its __shfl_down_sync tree. */
#include "core/cuda_check.cuh"
#include "formats/csr_fmt.h"
#include "spmm.h"

namespace {

constexpr unsigned kThreads = 256;

/* The lanes of this thread's group within its warp. */
__device__ inline unsigned group_mask(int tpr)
{
    if (tpr >= 32) return 0xffffffffu;
    const unsigned lane = threadIdx.x & 31u;
    return ((1u << tpr) - 1u) << (lane & ~(unsigned)(tpr - 1));
}

/* acc[c] += a * X[j, c] for the chunk's kc columns. */
template <int C>
__device__ inline void add_entry(double (&acc)[C], int kc, double a, sps_idx j,
                                 const double *__restrict__ Xc, int64_t ldx)
{
#pragma unroll
    for (int c = 0; c < C; c++)
        if (c < kc) acc[c] += a * Xc[(int64_t)j + (int64_t)c * ldx];
}

template <int C, bool BETA>
__global__ void __launch_bounds__(kThreads)
spmm_csr_kernel(const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                const double *__restrict__ val, sps_idx nrows, int tpr, int k,
                const double *__restrict__ X, int64_t ldx, double alpha, double beta,
                double *__restrict__ Y, int64_t ldy)
{
    const int64_t g = (int64_t)blockIdx.x * kThreads + threadIdx.x;
    const int64_t row = g / tpr;
    const int lane = (int)(g % tpr);
    if (row >= nrows) return; /* whole groups leave together */
    const unsigned mask = group_mask(tpr);
    const sps_idx p0 = rp[row], p1 = rp[row + 1];
    for (int c0 = 0; c0 < k; c0 += C) {
        const int kc = k - c0 < C ? k - c0 : C;
        const double *Xc = X + (int64_t)c0 * ldx;
        double acc[C];
#pragma unroll
        for (int c = 0; c < C; c++) acc[c] = 0.0;
        /* unsigned: p + tpr cannot wrap for p < p1 <= INT32_MAX */
        unsigned p = (unsigned)p0 + (unsigned)lane;
        if (tpr == 32 && p1 - p0 > 32) {
            p = (unsigned)p0 - ((unsigned)p0 & 31u) + (unsigned)lane; /* aligned, as csr-vector */
            if (p >= (unsigned)p0) add_entry<C>(acc, kc, val[p], ci[p], Xc, ldx);
            p += 32;
        }
        for (; p < (unsigned)p1; p += (unsigned)tpr) add_entry<C>(acc, kc, val[p], ci[p], Xc, ldx);
#pragma unroll
        for (int c = 0; c < C; c++)
            for (int o = tpr >> 1; o > 0; o >>= 1) acc[c] += __shfl_xor_sync(mask, acc[c], o);
#pragma unroll
        for (int c = 0; c < C; c++) {
            if (c < kc && c % tpr == lane) {
                double *y = Y + (int64_t)(c0 + c) * ldy + row;
                *y = BETA ? alpha * acc[c] + beta * *y : alpha * acc[c];
            }
        }
    }
}

template <int C>
sps_status launch(sps_context *ctx, const sps_csr_dev *d, int tpr, int k, double alpha,
                  const double *X, int64_t ldx, double beta, double *Y, int64_t ldy)
{
    const unsigned long long threads = (unsigned long long)d->nrows * (unsigned long long)tpr;
    const unsigned grid = (unsigned)((threads + kThreads - 1) / kThreads);
    cudaStream_t s = sps_stream(ctx);
    const double *v = (const double *)d->val;
    if (beta != 0.0)
        spmm_csr_kernel<C, true><<<grid, kThreads, 0, s>>>(d->row_ptr, d->col_idx, v, d->nrows,
                                                           tpr, k, X, ldx, alpha, beta, Y, ldy);
    else
        spmm_csr_kernel<C, false><<<grid, kThreads, 0, s>>>(d->row_ptr, d->col_idx, v, d->nrows,
                                                            tpr, k, X, ldx, alpha, 0.0, Y, ldy);
    SPS_LAUNCH_CHECK(ctx, "spmm_csr_kernel");
    return SPS_OK;
}

/* The descriptors of one cusparseSpMM call, destroyed whatever happens. */
struct spmm_desc {
    cusparseSpMatDescr_t A = nullptr;
    cusparseDnMatDescr_t X = nullptr, Y = nullptr;
    ~spmm_desc()
    {
        /* Destruction statuses cannot change the outcome; the calls only
         * free host structures. */
        if (A) (void)cusparseDestroySpMat(A);
        if (X) (void)cusparseDestroyDnMat(X);
        if (Y) (void)cusparseDestroyDnMat(Y);
    }
};

sps_status cusparse_run(sps_context *ctx, const sps_csr_dev *d, int k, double alpha,
                        const double *X, int64_t ldx, double beta, double *Y, int64_t ldy)
{
    cusparseHandle_t h = (cusparseHandle_t)sps__gpu_cusparse(ctx);
    SPS_CUSPARSE(ctx, cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST)); /* alpha, beta */
    spmm_desc m;
    SPS_CUSPARSE(ctx, cusparseCreateCsr(&m.A, d->nrows, d->ncols, d->nnz, d->row_ptr, d->col_idx,
                                        d->val, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    SPS_CUSPARSE(ctx, cusparseCreateDnMat(&m.X, d->ncols, k, ldx, (void *)X, CUDA_R_64F,
                                          CUSPARSE_ORDER_COL));
    SPS_CUSPARSE(ctx, cusparseCreateDnMat(&m.Y, d->nrows, k, ldy, Y, CUDA_R_64F,
                                          CUSPARSE_ORDER_COL));
    const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
    const cusparseSpMMAlg_t alg = CUSPARSE_SPMM_CSR_ALG1;
    size_t bytes = 0;
    SPS_CUSPARSE(ctx, cusparseSpMM_bufferSize(h, nt, nt, &alpha, m.A, m.X, &beta, m.Y, CUDA_R_64F,
                                              alg, &bytes));
    void *buf = nullptr;
    if (bytes > 0) {
        sps_status st = sps__gpu_scratch(ctx, bytes, &buf);
        if (st != SPS_OK) return st;
    }
    SPS_CUSPARSE(ctx, cusparseSpMM(h, nt, nt, &alpha, m.A, m.X, &beta, m.Y, CUDA_R_64F, alg, buf));
    return SPS_OK;
}

} // namespace

extern "C" sps_status sps__spmm_csr_dev(sps_context *ctx, const sps_csr_dev *d, int tpr, int k,
                                        double alpha, const double *X, int64_t ldx, double beta,
                                        double *Y, int64_t ldy)
{
    if (tpr < 1 || tpr > 32 || (tpr & (tpr - 1)))
        return sps__err(ctx, SPS_ERR_INTERNAL, "spmm: group size %d is not a power of two in 1..32 "
                        "(%s:%d)", tpr, __FILE__, __LINE__);
    if (d->single)
        return sps__err(ctx, SPS_ERR_INTERNAL, "spmm: single-precision CSR (%s:%d)", __FILE__,
                        __LINE__);
    if (k <= 0 || d->nrows == 0) return SPS_OK;
    if (k <= 4) return launch<4>(ctx, d, tpr, k, alpha, X, ldx, beta, Y, ldy);
    if (k <= 8) return launch<8>(ctx, d, tpr, k, alpha, X, ldx, beta, Y, ldy);
    return launch<16>(ctx, d, tpr, k, alpha, X, ldx, beta, Y, ldy);
}

extern "C" sps_status sps__spmm_cusparse(sps_context *ctx, const sps_csr_dev *d, int k,
                                         double alpha, const double *X, int64_t ldx, double beta,
                                         double *Y, int64_t ldy)
{
    if (k <= 0 || d->nrows == 0) return SPS_OK;
    if (d->nnz == 0 || d->ncols == 0) /* cuSPARSE is not asked about empty matrices */
        return sps__spmm_csr_dev(ctx, d, 1, k, alpha, X, ldx, beta, Y, ldy);
    if (beta == 0.0)
        SPS_CUDA(ctx, cudaMemset2DAsync(Y, (size_t)ldy * sizeof(double), 0,
                                        (size_t)d->nrows * sizeof(double), (size_t)k,
                                        sps_stream(ctx)));
    return cusparse_run(ctx, d, k, alpha, X, ldx, beta, Y, ldy);
}
