/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/kernels.cuh: what every solver .cu shares (vops_cuda.cu and
 * each method's <method>_kernels.cu): the launch shape, the fixed-order block
 * sums, the partials layout, and the one-block kernel that sums the partials
 * of a reduction and runs a finish step.
 *
 * Work decomposition. Every vector kernel runs `grid` blocks of 256 threads
 * over a grid-stride loop, where grid = min(ceil(n / 256), 1024) depends on n
 * only. A reduction is two launches: each block reduces its elements (warp
 * shuffles, then the 8 warp sums in shared memory) into a fixed slot of a
 * partials array (part[q * grid + block] for sum q); then one block of 256
 * threads sums the partials in a fixed order and runs the finish step. No
 * atomics anywhere, so a solve is bitwise repeatable on a given GPU. */
#ifndef SPS_SOLVERS_KERNELS_CUH
#define SPS_SOLVERS_KERNELS_CUH

#include "../core/cuda_check.cuh"
#include "../spmv/backend.h"
#include "../spmv/dev_rows.cuh" /* onek_row */
#include "vops.h"

#define TPB 256
#define RED_MAX_BLOCKS 1024

/* Blocks of every device reduction for length n (fixed for a given n). */
static inline int sps__kgrid(sps_idx n)
{
    int64_t g = ((int64_t)n + TPB - 1) / TPB;
    return g < 1 ? 1 : g > RED_MAX_BLOCKS ? RED_MAX_BLOCKS : (int)g;
}

namespace {

/* Sum v[] over the block in a fixed order; the totals end in thread 0. Every
 * thread of the block must call it. */
template <int NS>
__device__ __forceinline__ void block_sum(double (&v)[NS])
{
    __shared__ double sh[NS][TPB / 32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
#pragma unroll
    for (int q = 0; q < NS; q++)
        for (int off = 16; off > 0; off >>= 1) v[q] += __shfl_down_sync(0xffffffffu, v[q], off);
    __syncthreads(); /* an earlier call's readers are done with sh */
    if (lane == 0)
#pragma unroll
        for (int q = 0; q < NS; q++) sh[q][wid] = v[q];
    __syncthreads();
    if (wid == 0) {
#pragma unroll
        for (int q = 0; q < NS; q++) {
            double t = lane < TPB / 32 ? sh[q][lane] : 0.0;
            for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
            v[q] = t;
        }
    }
}

/* Block totals into part[q * G + block]. */
template <int NS>
__device__ __forceinline__ void put_partials(double (&v)[NS], double *part, int G)
{
    block_sum<NS>(v);
    if (threadIdx.x == 0)
#pragma unroll
        for (int q = 0; q < NS; q++) part[q * G + blockIdx.x] = v[q];
}

#define GRID_STRIDE(i, n)                                                                   \
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < (n);                     \
         i += (int64_t)gridDim.x * TPB)

/* One block: sum the ns partials sums (fixed order), then f(v) on every
 * thread (the totals are in thread 0's v; f decides who works). Gated: a
 * stopped solve does nothing. */
template <class F>
__global__ void __launch_bounds__(TPB) k_reduce_finish(const sps_kstate *st, int gated,
                                                       const double *part, int G, int ns, F f)
{
    if (gated && st->stop) return;
    double v[SPS_K_NSUM];
#pragma unroll
    for (int q = 0; q < SPS_K_NSUM; q++) v[q] = 0.0;
    for (int q = 0; q < ns; q++)
        for (int i = threadIdx.x; i < G; i += TPB) v[q] += part[q * G + i];
    block_sum<SPS_K_NSUM>(v);
    f(v);
}

/* The one-kernel engine's dynamic shared memory for k vectors of n doubles,
 * if the device allows it for the kernel K beside K's static shared memory
 * (the attribute is set for K); else 0: K's global-memory variant runs. */
template <typename K>
size_t onek_smem_bytes(K kernel, size_t bytes)
{
    int dev = 0, lim = 0;
    cudaFuncAttributes fa;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&lim, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&fa, kernel) != cudaSuccess || bytes + fa.sharedSizeBytes > (size_t)lim ||
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess) {
        cudaGetLastError(); /* not an error: the global-memory variant runs */
        return 0;
    }
    return bytes;
}

template <typename K>
size_t onek_smem(K kernel, int n, int k)
{
    return onek_smem_bytes(kernel, (size_t)k * (size_t)n * sizeof(double));
}

/* The one-kernel engine (engine.h): one block of OKT threads; the block's
 * sums in a fixed order (warp shuffles, then the OKT/32 warp sums), totals in
 * thread 0. Every thread of the block must call it, and the block must pass
 * a barrier after thread 0 has used the totals and before the next call with
 * the same NS (the finish steps' __syncthreads does): warp 0 reads the warp
 * sums there. */
constexpr int OKT = 1024;

template <int NS>
__device__ __forceinline__ void onek_sum(double (&v)[NS])
{
    __shared__ double sh[NS][OKT / 32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
#pragma unroll
    for (int q = 0; q < NS; q++)
        for (int off = 16; off > 0; off >>= 1) v[q] += __shfl_down_sync(0xffffffffu, v[q], off);
    if (lane == 0)
#pragma unroll
        for (int q = 0; q < NS; q++) sh[q][wid] = v[q];
    __syncthreads();
    if (wid == 0) {
#pragma unroll
        for (int q = 0; q < NS; q++) {
            double t = sh[q][lane];
            for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
            v[q] = t;
        }
    }
}

/* Rows i_k = threadIdx.x + k OKT (k < R, those below n) of the operator's
 * device rows times x, into s[k]: each row's terms in onek_row's order (so
 * bitwise its sums), the R rows' loads interleaved. */
template <int R>
__device__ __forceinline__ void onek_rows(const sps_dev_rows &A, const double *x, int n, double (&s)[R])
{
#pragma unroll
    for (int k = 0; k < R; k++) s[k] = 0.0;
    if (A.kind == SPS_ROWS_CSR) {
        sps_idx b[R], e[R], m = 0;
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            b[k] = i < n ? A.row_ptr[i] : 0;
            e[k] = i < n ? A.row_ptr[i + 1] : 0;
            m = e[k] - b[k] > m ? e[k] - b[k] : m;
        }
        for (sps_idx t = 0; t < m; t++)
#pragma unroll
            for (int k = 0; k < R; k++)
                if (b[k] + t < e[k]) s[k] += A.val[b[k] + t] * x[A.col_idx[b[k] + t]];
        return;
    }
    /* In 32-bit unsigned arithmetic (some 40% fewer instructions a term
     * than 64-bit): for 0 <= i < n and any offset o, (unsigned)i + (unsigned)o
     * < n exactly when 0 <= i + o < n (a negative i + o wraps to 2^31 or
     * more; n < 2^31), and d n + i < ndiag n < 2^31 (dia stores at most
     * SPS_IDX_MAX slots). The same terms as onek_row's in the same order. */
    const unsigned nu = (unsigned)A.n;
    for (sps_idx d = 0; d < A.ndiag; d++) {
        const unsigned o = (unsigned)A.off[d], dn = (unsigned)d * nu;
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            const unsigned c = (unsigned)i + o;
            if (i < n && c < nu) s[k] += A.val[dn + (unsigned)i] * x[c];
        }
    }
}

/* The one kernel's vector layout asked for by SPS_ONEK_LAYOUT (tests compare
 * them; each method's launcher picks otherwise): ONEK_GLOBAL, ONEK_SHARED,
 * or -1 (unset, "regs" or unknown: registers where the rows per thread
 * allow, then shared memory, then global memory). */
enum { ONEK_GLOBAL = 0, ONEK_SHARED = 1 };
inline int onek_layout()
{
    const char *f = getenv("SPS_ONEK_LAYOUT");
    return !f ? -1 : !strcmp(f, "global") ? ONEK_GLOBAL : !strcmp(f, "shared") ? ONEK_SHARED : -1;
}

/* The operator's values in the launch's shared memory (the register
 * layouts, where room is left after their vectors): DIA's ndiag x n values,
 * which every SpMV of the launch reads again; then the rows' loads come from
 * shared memory instead of L2. The same values in the same order: bitwise
 * the same sums. onek_vals_bytes: the room they take (0: not offered, a CSR
 * operator, or SPS_ONEK_VALS=0). */
inline size_t onek_vals_bytes(const sps_dev_rows &A)
{
    const char *f = getenv("SPS_ONEK_VALS");
    if ((f && !strcmp(f, "0")) || A.kind != SPS_ROWS_DIA) return 0;
    return (size_t)A.ndiag * (size_t)A.n * sizeof(double);
}

/* Every thread copies its share of A's DIA values to dst (onek_vals_bytes
 * of room); returns A reading them there. The caller's barrier follows. */
__device__ __forceinline__ sps_dev_rows onek_vals_to(const sps_dev_rows &A, double *dst)
{
    const size_t len = (size_t)A.ndiag * (size_t)A.n;
    for (size_t i = threadIdx.x; i < len; i += OKT) dst[i] = A.val[i];
    sps_dev_rows B = A;
    B.val = dst;
    return B;
}

} /* namespace */

#define LAUNCH(w, kernel, ...)                                                              \
    do {                                                                                    \
        kernel<<<sps__kgrid((w)->n), TPB, 0, sps_stream((w)->ctx)>>>(__VA_ARGS__);          \
        SPS_LAUNCH_CHECK((w)->ctx, #kernel);                                                \
    } while (0)

/* The finish f (a functor) on the last reduction's partials. */
#define LAUNCH_FINISH(w, fin, functor)                                                      \
    do {                                                                                    \
        k_reduce_finish<<<1, TPB, 0, sps_stream((w)->ctx)>>>((w)->st, (fin)->gated, (w)->red, \
                                                             sps__kgrid((w)->n), (w)->nsum,  \
                                                             functor);                      \
        SPS_LAUNCH_CHECK((w)->ctx, "k_reduce_finish");                                      \
    } while (0)

/* A method finish step that runs on thread 0, for a method whose state is S
 * (CG, BiCGSTAB): the method's .cu defines
 *   __device__ void sps_method_finish(int step, sps_kstate *, S *, const double *v, double *hist)
 * (found by argument-dependent lookup when the template is instantiated). */
template <class S>
struct thread0_fin {
    int step;
    sps_kstate *st;
    S *ms;
    double *hist;
    __device__ void operator()(const double *v) const
    {
        if (threadIdx.x == 0) sps_method_finish(step, st, ms, v, hist);
    }
};

/* An sps_kfin fn: thread0_fin on the last reduction's partials. */
template <class S>
static sps_status finish_thread0(sps_kws *w, const sps_kfin *f)
{
    thread0_fin<S> fn = {f->step, w->st, (S *)w->ms, w->hist};
    LAUNCH_FINISH(w, f, fn);
    return SPS_OK;
}

#endif /* SPS_SOLVERS_KERNELS_CUH */
