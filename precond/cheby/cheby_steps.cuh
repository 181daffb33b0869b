/* SPDX-License-Identifier: MIT */
/* spsolve/precond/cheby/cheby_steps.cuh: the apply's kernels and the two
 * queues that launch them, shared by cheby.cu and the CPU emulation
 * (emu/harness.cc, which defines the CUDA words first). The includer
 * defines, before including it:
 *   CHEBY_LAUNCH(ctx, s, g, kernel, ...)  launch kernel<<<g, CHEBY_BLOCK, 0, s>>>
 *                                         and check the launch (returning on failure)
 *   CHEBY_SPMV(c, x, y)                   y = y - A x through c->op: an sps_status
 *
 * The unfused apply (any operator; cheby.c's apply_host step for step):
 *   cheby_first          res = r; d = z = c2[0] D^-1 r
 *   per step k = 1..K:   the operator's SpMV res -= A d, then cheby_step
 *                        d = c1[k] d + c2[k] D^-1 res; z += d
 * per step about 9 vectors (SpMV: d, res read, res written; cheby_step: d,
 * dinv, res, z read, d, z written) plus the matrix, in two launches.
 *
 * The fused apply (an operator whose backend gives its device rows,
 * backend.h dev_rows: the CSR family and dia, double precision): one launch
 * per step, each row computing its own (A d)_i (spmv/dev_rows.cuh), with d
 * double-buffered (other rows read the old d while the new one is written):
 *   cheby_fused_first    steps 0 and 1: d0 = c2[0] D^-1 r computed where it
 *                        is read (row i reads r and dinv at its columns), so
 *                        d0 is never stored; res = r - A d0; d1; z = d0 + d1
 *   cheby_fused_step     steps 2..K-1: res -= A d; d' = c1 d + c2 D^-1 res; z += d'
 *   LAST (step K)        res and d' are not stored, only z
 * Vectors per apply of degree K >= 2: 5 (r, dinv; res, d, z) + 7 (K - 2)
 * (d, res, dinv, z; res, d', z) + 4 + 1 (d, res, dinv, z; z) against
 * 5 + 9 K unfused: 24 against 41 at K = 4; degree 1 reads r and dinv and
 * writes z. The matrix is read once per step either way.
 *
 * Bitwise: each value is computed by the same expression in both applies:
 * d0 by cheby_d0, each new d by cheby_dk (explicit roundings: no contraction
 * that the compiler may choose differently in two kernels), z by one
 * addition, and res by res - (A d)_i: the SpMV's y = alpha s + beta y with
 * alpha = -1, beta = 1 is round(y - s) however it is contracted (-s and 1 y
 * are exact). (A d)_i is summed in spmv/dev_rows.cuh's order, which is
 * csr-scalar's and dia's (dia adds a * 0 for a slot outside the matrix, which
 * changes a sum only in the sign of a zero one); so with a csr-scalar or a
 * dia operator the fused apply is bitwise the unfused one, up to the sign of
 * a zero. csr-vector, merge and cuSPARSE sum a row in other orders: there
 * the two differ by rounding. Deterministic either way: no atomics, every
 * value written by one thread. */
#ifndef SPS_CHEBY_STEPS_CUH
#define SPS_CHEBY_STEPS_CUH

#include "../../spmv/dev_rows.cuh"
#include "cheby.h"

namespace {

constexpr int CHEBY_BLOCK = 256;

#define CHEBY_ROWS(i, n)                                                                    \
    for (long long i = (long long)blockIdx.x * CHEBY_BLOCK + threadIdx.x; i < (long long)(n); \
         i += (long long)gridDim.x * CHEBY_BLOCK)

/* d of step 0: c2 D^-1 r, as (c2 dinv_i) r_i. */
__device__ __forceinline__ double cheby_d0(double c2, double dinv, double r)
{
    return __dmul_rn(__dmul_rn(c2, dinv), r);
}

/* d of step k >= 1: c1 d + c2 D^-1 res, as fma(c1, d, (c2 dinv_i) res_i). */
__device__ __forceinline__ double cheby_dk(double c1, double d, double c2, double dinv, double res)
{
    return __fma_rn(c1, d, __dmul_rn(__dmul_rn(c2, dinv), res));
}

/* step 0: res = r; d = z = c2 D^-1 r */
__global__ void __launch_bounds__(CHEBY_BLOCK)
cheby_first(long long n, double c2, const double *__restrict__ dinv, const double *__restrict__ r,
            double *__restrict__ res, double *__restrict__ d, double *__restrict__ z)
{
    CHEBY_ROWS(i, n) {
        const double ri = r[i], di = cheby_d0(c2, dinv[i], ri);
        res[i] = ri;
        d[i] = di;
        z[i] = di;
    }
}

/* step k (after the SpMV res -= A d): d = c1 d + c2 D^-1 res; z += d */
__global__ void __launch_bounds__(CHEBY_BLOCK)
cheby_step(long long n, double c1, double c2, const double *__restrict__ dinv,
           const double *__restrict__ res, double *__restrict__ d, double *__restrict__ z)
{
    CHEBY_ROWS(i, n) {
        const double di = cheby_dk(c1, d[i], c2, dinv[i], res[i]);
        d[i] = di;
        z[i] = __dadd_rn(z[i], di);
    }
}

/* d0's entry c computed where a row reads it (sps_row_dot's x). */
struct cheby_d0_x {
    double c2;
    const double *dinv, *r;
    __device__ __forceinline__ double operator()(long long c) const { return cheby_d0(c2, dinv[c], r[c]); }
};

/* steps 0 and 1 in one pass: res = r - A d0; d = c1 d0 + c2 D^-1 res;
 * z = d0 + d (LAST, degree 1: z only). */
template <bool LAST>
__global__ void __launch_bounds__(CHEBY_BLOCK)
cheby_fused_first(sps_dev_rows A, double c20, double c1, double c2, const double *__restrict__ dinv,
                  const double *__restrict__ r, double *__restrict__ res, double *__restrict__ d,
                  double *__restrict__ z)
{
    const cheby_d0_x x0 = {c20, dinv, r};
    CHEBY_ROWS(i, A.n) {
        const double d0 = x0(i), ri = __dsub_rn(r[i], sps_row_dot(A, (int)i, x0));
        const double di = cheby_dk(c1, d0, c2, dinv[i], ri);
        if (!LAST) {
            res[i] = ri;
            d[i] = di;
        }
        z[i] = __dadd_rn(d0, di);
    }
}

/* step k in one pass: res -= A dold; dnew = c1 dold + c2 D^-1 res; z += dnew
 * (LAST, step K: z only; res and dnew untouched). */
template <bool LAST>
__global__ void __launch_bounds__(CHEBY_BLOCK)
cheby_fused_step(sps_dev_rows A, double c1, double c2, const double *__restrict__ dinv,
                 const double *__restrict__ dold, double *__restrict__ res,
                 double *__restrict__ dnew, double *__restrict__ z)
{
    const sps_row_x x = {dold};
    CHEBY_ROWS(i, A.n) {
        const double ri = __dsub_rn(res[i], sps_row_dot(A, (int)i, x));
        const double di = cheby_dk(c1, dold[i], c2, dinv[i], ri);
        if (!LAST) {
            res[i] = ri;
            dnew[i] = di;
        }
        z[i] = __dadd_rn(z[i], di);
    }
}

/* The unfused apply: K SpMVs through the operator, K + 1 vector kernels. */
sps_status cheby_queue(sps_context *ctx, const sps_cheby *c, cudaStream_t s, int g, long long n,
                       const double *r, double *z)
{
    CHEBY_LAUNCH(ctx, s, g, cheby_first, n, c->c2[0], c->dinv, r, c->res, c->d, z);
    for (int k = 1; k <= c->degree; k++) {
        sps_status st = CHEBY_SPMV(c, c->d, c->res);
        if (st != SPS_OK) return st;
        CHEBY_LAUNCH(ctx, s, g, cheby_step, n, c->c1[k], c->c2[k], c->dinv, c->res, c->d, z);
    }
    return SPS_OK;
}

/* The fused apply on A's rows (A.n = n): K launches (degree 0: cheby_first
 * alone). d2: a second d, for degree >= 3 (degree 2 ends with the step
 * that would write it: LAST). */
sps_status cheby_queue_fused(sps_context *ctx, const sps_cheby *c, const sps_dev_rows &A, double *d2,
                             cudaStream_t s, int g, long long n, const double *r, double *z)
{
    const int K = c->degree;
    if (K == 0) {
        CHEBY_LAUNCH(ctx, s, g, cheby_first, n, c->c2[0], c->dinv, r, c->res, c->d, z);
        return SPS_OK;
    }
    if (K == 1) {
        CHEBY_LAUNCH(ctx, s, g, cheby_fused_first<true>, A, c->c2[0], c->c1[1], c->c2[1], c->dinv, r,
                     nullptr, nullptr, z);
        return SPS_OK;
    }
    CHEBY_LAUNCH(ctx, s, g, cheby_fused_first<false>, A, c->c2[0], c->c1[1], c->c2[1], c->dinv, r,
                 c->res, c->d, z);
    double *dold = c->d, *dnew = d2;
    for (int k = 2; k < K; k++) {
        CHEBY_LAUNCH(ctx, s, g, cheby_fused_step<false>, A, c->c1[k], c->c2[k], c->dinv, dold, c->res,
                     dnew, z);
        double *t = dold;
        dold = dnew;
        dnew = t;
    }
    CHEBY_LAUNCH(ctx, s, g, cheby_fused_step<true>, A, c->c1[K], c->c2[K], c->dinv, dold, c->res,
                 nullptr, z);
    return SPS_OK;
}

} /* namespace */

#endif /* SPS_CHEBY_STEPS_CUH */
