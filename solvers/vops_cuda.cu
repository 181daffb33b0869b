/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/vops_cuda.cu: the vector operations on the GPU (the same
 * operations as vops_host.c, which is their specification).
 *
 * Work decomposition. Every vector kernel runs `grid` blocks of 256 threads
 * over a grid-stride loop, where grid = min(ceil(n / 256), 1024) depends on n
 * only. A reduction is two launches: each block reduces its elements (warp
 * shuffles, then the 8 warp sums in shared memory) into a fixed slot of a
 * partials array; then one block of 256 threads sums the partials in a fixed
 * order and its thread 0 runs the finish step (kstate.h), which sets the
 * scalars, the stop flag and the reason. No atomics anywhere, so a solve is
 * bitwise repeatable on a given GPU. Fused kernels (CG's update, BiCGSTAB's
 * three) update the vectors and produce the partials in the same pass.
 *
 * Gating. A kernel that changes x, r, p, ... or a scalar reads st->stop first
 * and returns when it is set; the whole grid sees the same value (nothing
 * writes the state while a vector kernel runs), so the returns are uniform.
 *
 * GMRES. The Gram-Schmidt passes are cuBLAS DGEMVs on the column-major basis
 * (transposed for h = V'w, then w -= V h). The Givens rotations are inherently
 * sequential: the finish block stages column j and the rotations in shared
 * memory, 512 at a time, and thread 0 runs the sequence out of shared memory
 * (global loads in a dependent chain would cost a memory latency per
 * rotation). The triangular solve, once per cycle, is a single thread; the
 * update x += V y reads kdim from the state (the host does not know it), one
 * row per thread.
 *
 * Where it wins or loses: the vector kernels are memory-bound and move the
 * bytes listed in each driver; the fixed costs are about 3 to 5 us per launch
 * and, for GMRES with a long restart, the sequential rotations (a few
 * nanoseconds per rotation). */
#include "../core/cuda_check.cuh"
#include "vops.h"

#define TPB 256
#define RED_MAX_BLOCKS 1024
#define ROT_CHUNK 512

extern "C" int sps__vops_cuda_grid(sps_idx n)
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

__global__ void __launch_bounds__(TPB) k_fill(int n, double *x, double v)
{
    GRID_STRIDE(i, n) x[i] = v;
}

__global__ void __launch_bounds__(TPB) k_add(int n, double *x, const double *z)
{
    GRID_STRIDE(i, n) x[i] += z[i];
}

__global__ void __launch_bounds__(TPB) k_jacobi(int n, double *z, const double *dinv,
                                                const double *r)
{
    GRID_STRIDE(i, n) z[i] = dinv[i] * r[i];
}

template <int NS>
__global__ void __launch_bounds__(TPB) k_dot(int n, const double *a, const double *b,
                                             const double *c, const double *d,
                                             const sps_kstate *st, int gated, double *part)
{
    if (gated && st->stop) return;
    double v[NS];
#pragma unroll
    for (int q = 0; q < NS; q++) v[q] = 0.0;
    GRID_STRIDE(i, n)
    {
        v[0] += a[i] * b[i];
        if constexpr (NS == 2) v[1] += c[i] * d[i];
    }
    put_partials<NS>(v, part, gridDim.x);
}

/* max |x_i| of the block into part[block] (a maximum is exact and free of
 * order; a NaN propagates). */
__device__ __forceinline__ double max_nan(double m, double a)
{
    return (m != m || a <= m) ? m : a;
}

__device__ __forceinline__ double block_max(double m)
{
    __shared__ double sh[TPB / 32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    for (int off = 16; off > 0; off >>= 1) m = max_nan(m, __shfl_down_sync(0xffffffffu, m, off));
    __syncthreads();
    if (lane == 0) sh[wid] = m;
    __syncthreads();
    if (wid == 0) {
        m = lane < TPB / 32 ? sh[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1) m = max_nan(m, __shfl_down_sync(0xffffffffu, m, off));
    }
    return m;
}

__global__ void __launch_bounds__(TPB) k_amax(int n, const double *x, double *part)
{
    double m = 0.0;
    GRID_STRIDE(i, n) m = max_nan(m, fabs(x[i]));
    m = block_max(m);
    if (threadIdx.x == 0) part[blockIdx.x] = m;
}

/* One block: the maximum of the partials, then SPS_FIN_AMAX (st->nrm_e). */
__global__ void __launch_bounds__(TPB) k_amax_finish(sps_kstate *st, const double *part, int G,
                                                     double *hist, sps_kgm gm)
{
    double m = 0.0;
    for (int i = threadIdx.x; i < G; i += TPB) m = max_nan(m, part[i]);
    m = block_max(m);
    if (threadIdx.x == 0) {
        double s[SPS_K_NSUM] = {m, 0.0, 0.0};
        sps__k_finish(SPS_FIN_AMAX, 0, st, s, hist, gm);
    }
}

/* sum (x_i 2^-e)^2 with e = st->nrm_e (exact scaling by a power of two). */
__global__ void __launch_bounds__(TPB) k_nrm_sum(int n, const double *x, const sps_kstate *st,
                                                 double *part)
{
    const double f = ldexp(1.0, -(int)st->nrm_e);
    double v[1] = {0.0};
    GRID_STRIDE(i, n)
    {
        double t = x[i] * f;
        v[0] += t * t;
    }
    put_partials<1>(v, part, gridDim.x);
}

__global__ void __launch_bounds__(TPB) k_axpby(int n, double *y, double a, const double *x,
                                               double b)
{
    if (b == 0.0) {
        GRID_STRIDE(i, n) y[i] = a * x[i];
    } else {
        GRID_STRIDE(i, n) y[i] = a * x[i] + b * y[i];
    }
}

/* One block: sum the partials, then the finish step. GMRES's Arnoldi step
 * first adds the second Gram-Schmidt pass into H[:, j] (all threads) and runs
 * the old rotations out of shared memory. */
__global__ void __launch_bounds__(TPB) k_finish(int fin, int64_t j, sps_kstate *st,
                                                const double *part, int G, int ns,
                                                double *hist, sps_kgm gm)
{
    if (sps__k_fin_gated(fin) && st->stop) return;
    double v[SPS_K_NSUM] = {0.0, 0.0, 0.0};
    for (int q = 0; q < ns; q++)
        for (int i = threadIdx.x; i < G; i += TPB) v[q] += part[q * G + i];
    block_sum<SPS_K_NSUM>(v);
    if (fin != SPS_FIN_GM_ARNOLDI) {
        if (threadIdx.x == 0) sps__k_finish(fin, j, st, v, hist, gm);
        return;
    }
    double *col = gm.H + j * (st->m + 1);
    double hsq[1] = {0.0};
    for (int64_t i = threadIdx.x; i <= j; i += TPB) {
        double h = col[i] + gm.h2[i];
        col[i] = h;
        hsq[0] += h * h;
    }
    block_sum<1>(hsq); /* its barriers also publish the col[] writes */
    __shared__ double sc[ROT_CHUNK], scs[ROT_CHUNK], ssn[ROT_CHUNK];
    __shared__ double carry_sh;
    if (threadIdx.x == 0) carry_sh = col[0];
    /* sps__k_gm_rotate, chunk by chunk: sc[t] holds row base+1+t on entry
     * and the rotated row base+t on exit. */
    for (int64_t base = 0; base < j; base += ROT_CHUNK) {
        int cnt = (int)(j - base < ROT_CHUNK ? j - base : ROT_CHUNK);
        __syncthreads();
        for (int t = threadIdx.x; t < cnt; t += TPB) {
            sc[t] = col[base + 1 + t];
            scs[t] = gm.cs[base + t];
            ssn[t] = gm.sn[base + t];
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            double carry = carry_sh;
            for (int t = 0; t < cnt; t++) {
                double c = scs[t], s = ssn[t], next = sc[t];
                sc[t] = c * carry + s * next;
                carry = -s * carry + c * next;
            }
            carry_sh = carry;
        }
        __syncthreads();
        for (int t = threadIdx.x; t < cnt; t += TPB) col[base + t] = sc[t];
    }
    __syncthreads();
    if (threadIdx.x == 0) sps__k_gm_arnoldi(st, j, carry_sh, sqrt(v[0]), hsq[0], hist, gm);
}

/* ---- CG ---- */

template <bool JAC>
__global__ void __launch_bounds__(TPB) k_cg_update(int n, double *x, double *r, const double *p,
                                                   const double *q, const double *dinv,
                                                   double *z, const sps_kstate *st,
                                                   double *part)
{
    if (st->stop) return;
    const double al = st->alpha;
    double v[2] = {0.0, 0.0};
    GRID_STRIDE(i, n)
    {
        x[i] += al * p[i];
        double ri = r[i] - al * q[i];
        r[i] = ri;
        v[0] += ri * ri;
        if constexpr (JAC) {
            double zi = dinv[i] * ri;
            z[i] = zi;
            v[1] += ri * zi;
        }
    }
    put_partials<2>(v, part, gridDim.x);
}

__global__ void __launch_bounds__(TPB) k_cg_direction(int n, double *p, const double *z,
                                                      const sps_kstate *st)
{
    if (st->stop) return;
    const double be = st->beta;
    GRID_STRIDE(i, n) p[i] = z[i] + be * p[i];
}

/* ---- BiCGSTAB ---- */

template <bool JAC>
__global__ void __launch_bounds__(TPB) k_bicg_p(int n, double *p, const double *r,
                                                const double *v, const double *dinv,
                                                double *phat, const sps_kstate *st)
{
    if (st->stop) return;
    const double be = st->beta, om = st->omega;
    GRID_STRIDE(i, n)
    {
        double pi = r[i] + be * (p[i] - om * v[i]);
        p[i] = pi;
        if constexpr (JAC) phat[i] = dinv[i] * pi;
    }
}

template <bool JAC>
__global__ void __launch_bounds__(TPB) k_bicg_s(int n, double *s, const double *r,
                                                const double *v, const double *dinv,
                                                double *shat, const sps_kstate *st,
                                                double *part)
{
    if (st->stop) return;
    const double al = st->alpha;
    double acc[1] = {0.0};
    GRID_STRIDE(i, n)
    {
        double si = r[i] - al * v[i];
        s[i] = si;
        acc[0] += si * si;
        if constexpr (JAC) shat[i] = dinv[i] * si;
    }
    put_partials<1>(acc, part, gridDim.x);
}

__global__ void __launch_bounds__(TPB) k_bicg_x(int n, int64_t j, double *x, double *r,
                                                const double *phat, const double *shat,
                                                const double *s, const double *t,
                                                const double *r0hat, const sps_kstate *st,
                                                double *part)
{
    const double al = st->alpha, om = st->omega;
    if (st->stop) {
        /* Stopped at this iteration's half step: the iterate is x + alpha phat. */
        if (st->half && st->iter == j) GRID_STRIDE(i, n)
            {
                double xi = x[i] + al * phat[i];
                if (xi - xi == 0.0) x[i] = xi;
            }
        return;
    }
    /* v[2] counts the entries of x that would become NaN or Inf (kept). */
    double v[3] = {0.0, 0.0, 0.0};
    GRID_STRIDE(i, n)
    {
        double xi = x[i] + (al * phat[i] + om * shat[i]);
        if (xi - xi == 0.0) x[i] = xi;
        else v[2] += 1.0;
        double ri = s[i] - om * t[i];
        r[i] = ri;
        v[0] += ri * ri;
        v[1] += r0hat[i] * ri;
    }
    put_partials<3>(v, part, gridDim.x);
}

/* ---- GMRES ---- */

__global__ void __launch_bounds__(TPB) k_gm_scale(int n, int64_t j, const double *src,
                                                  double *V, const sps_kstate *st, sps_kgm gm)
{
    if (st->stop) return;
    const double d = j < 0 ? gm.g[0] : st->hn;
    double *dst = V + (j + 1) * (int64_t)n;
    GRID_STRIDE(i, n) dst[i] = src[i] / d;
}

/* sps__k_gm_solve (kstate.h) on one block: the k steps of the back
 * substitution are sequential, each step's column update is parallel. A
 * single thread took ~60 ms per cycle of GMRES(2000) on an H100 (2M dependent
 * global loads); this takes k block-wide barriers. */
__global__ void __launch_bounds__(1024) k_gm_solve(const sps_kstate *st, sps_kgm gm)
{
    const int64_t k = st->kdim, ld = st->m + 1;
    for (int64_t i = threadIdx.x; i < k; i += blockDim.x) gm.y[i] = gm.g[i];
    __syncthreads();
    for (int64_t i = k - 1; i >= 0; i--) {
        const double yi = gm.y[i] / gm.H[i + i * ld];
        __syncthreads(); /* every thread has read y[i] before it is overwritten */
        if (threadIdx.x == 0) gm.y[i] = yi;
        const double *col = gm.H + i * ld;
        for (int64_t r = threadIdx.x; r < i; r += blockDim.x) gm.y[r] -= col[r] * yi;
        __syncthreads();
    }
}

/* MODE 0: x += V y;  1: x += dinv .* (V y);  2: u = V y. Row i sums its
 * columns in order (the host's order). */
template <int MODE>
__global__ void __launch_bounds__(TPB) k_gm_update(int n, double *x, const double *dinv,
                                                   double *u, const double *V,
                                                   const sps_kstate *st, const double *y)
{
    const int64_t k = st->kdim;
    GRID_STRIDE(i, n)
    {
        double s = 0.0;
        for (int64_t c = 0; c < k; c++) s += V[i + c * (int64_t)n] * y[c];
        if constexpr (MODE == 2) u[i] = s;
        else if constexpr (MODE == 1) x[i] += dinv[i] * s;
        else x[i] += s;
    }
}

} /* namespace */

/* ---- host side ------------------------------------------------------------ */

#define LAUNCH(w, kernel, ...)                                                              \
    do {                                                                                    \
        kernel<<<(w)->grid, TPB, 0, sps_stream((w)->ctx)>>>(__VA_ARGS__);                   \
        SPS_LAUNCH_CHECK((w)->ctx, #kernel);                                                \
    } while (0)

static sps_status c_copy(sps_kws *w, double *dst, const double *src)
{
    if (dst == src) return SPS_OK;
    return sps__d2d(w->ctx, dst, src, (size_t)w->n * sizeof *dst);
}

static sps_status c_fill(sps_kws *w, double *x, double v)
{
    LAUNCH(w, k_fill, w->n, x, v);
    return SPS_OK;
}

static sps_status c_add(sps_kws *w, double *x, const double *z)
{
    LAUNCH(w, k_add, w->n, x, z);
    return SPS_OK;
}

static sps_status c_jacobi(sps_kws *w, double *z, const double *dinv, const double *r)
{
    LAUNCH(w, k_jacobi, w->n, z, dinv, r);
    return SPS_OK;
}

static sps_status c_finish_ns(sps_kws *w, int fin, int64_t j, int ns)
{
    w->nsum = ns;
    k_finish<<<1, TPB, 0, sps_stream(w->ctx)>>>(fin, j, w->st, w->part, w->grid, ns, w->hist,
                                                w->gm);
    SPS_LAUNCH_CHECK(w->ctx, "k_finish");
    return SPS_OK;
}

static sps_status c_dot(sps_kws *w, const double *a, const double *b, const double *c,
                        const double *d, int fin, int64_t j)
{
    int gated = sps__k_fin_gated(fin);
    if (c) LAUNCH(w, k_dot<2>, w->n, a, b, c, d, w->st, gated, w->part);
    else LAUNCH(w, k_dot<1>, w->n, a, b, c, d, w->st, gated, w->part);
    return c_finish_ns(w, fin, j, c ? 2 : 1);
}

static sps_status c_nrm2(sps_kws *w, const double *x, int fin)
{
    LAUNCH(w, k_amax, w->n, x, w->part);
    k_amax_finish<<<1, TPB, 0, sps_stream(w->ctx)>>>(w->st, w->part, w->grid, w->hist, w->gm);
    SPS_LAUNCH_CHECK(w->ctx, "k_amax_finish");
    LAUNCH(w, k_nrm_sum, w->n, x, w->st, w->part);
    return c_finish_ns(w, fin, 0, 1);
}

static sps_status c_axpby(sps_kws *w, double *y, double a, const double *x, double b)
{
    LAUNCH(w, k_axpby, w->n, y, a, x, b);
    return SPS_OK;
}

static sps_status c_finish(sps_kws *w, int fin, int64_t j)
{
    return c_finish_ns(w, fin, j, w->nsum);
}

static sps_status c_get_state(sps_kws *w, sps_kstate *out)
{
    return sps__d2h(w->ctx, out, w->st, sizeof *out);
}

static sps_status c_put_state(sps_kws *w, const sps_kstate *in)
{
    return sps__h2d(w->ctx, w->st, in, sizeof *in);
}

static sps_status c_get_history(sps_kws *w, double *out, int64_t len)
{
    return sps__d2h(w->ctx, out, w->hist, (size_t)len * sizeof *out);
}

static sps_status c_cg_update(sps_kws *w, double *x, double *r, const double *p, const double *q,
                              const double *dinv, double *z, int mode)
{
    if (dinv) LAUNCH(w, k_cg_update<true>, w->n, x, r, p, q, dinv, z, w->st, w->part);
    else LAUNCH(w, k_cg_update<false>, w->n, x, r, p, q, dinv, z, w->st, w->part);
    return c_finish_ns(w, SPS_FIN_CG_RES, mode, 2);
}

static sps_status c_cg_direction(sps_kws *w, double *p, const double *z)
{
    LAUNCH(w, k_cg_direction, w->n, p, z, w->st);
    return SPS_OK;
}

static sps_status c_bicg_p(sps_kws *w, double *p, const double *r, const double *v,
                           const double *dinv, double *phat)
{
    if (dinv) LAUNCH(w, k_bicg_p<true>, w->n, p, r, v, dinv, phat, w->st);
    else LAUNCH(w, k_bicg_p<false>, w->n, p, r, v, dinv, phat, w->st);
    return SPS_OK;
}

static sps_status c_bicg_s(sps_kws *w, double *s, const double *r, const double *v,
                           const double *dinv, double *shat)
{
    if (dinv) LAUNCH(w, k_bicg_s<true>, w->n, s, r, v, dinv, shat, w->st, w->part);
    else LAUNCH(w, k_bicg_s<false>, w->n, s, r, v, dinv, shat, w->st, w->part);
    return c_finish_ns(w, SPS_FIN_BICG_S, 0, 1);
}

static sps_status c_bicg_x(sps_kws *w, int64_t j, double *x, double *r, const double *phat,
                           const double *shat, const double *s, const double *t,
                           const double *r0hat)
{
    LAUNCH(w, k_bicg_x, w->n, j, x, r, phat, shat, s, t, r0hat, w->st, w->part);
    return c_finish_ns(w, SPS_FIN_BICG_R, 0, 3);
}

static sps_status c_gemv(sps_kws *w, cublasOperation_t tr, int64_t ncols, double alpha,
                         const double *x, double beta, double *y)
{
    cublasHandle_t h = (cublasHandle_t)sps__gpu_cublas(w->ctx);
    SPS_CUBLAS(w->ctx, cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    SPS_CUBLAS(w->ctx, cublasDgemv(h, tr, w->n, (int)ncols, &alpha, w->V, w->n, x, 1, &beta, y, 1));
    return SPS_OK;
}

static sps_status c_gemv_t(sps_kws *w, int64_t ncols, const double *x, double *h)
{
    return c_gemv(w, CUBLAS_OP_T, ncols, 1.0, x, 0.0, h);
}

static sps_status c_gemv_n(sps_kws *w, int64_t ncols, const double *h, double *x)
{
    return c_gemv(w, CUBLAS_OP_N, ncols, -1.0, h, 1.0, x);
}

static sps_status c_gm_scale(sps_kws *w, int64_t j, const double *src)
{
    LAUNCH(w, k_gm_scale, w->n, j, src, w->V, w->st, w->gm);
    return SPS_OK;
}

static sps_status c_gm_solve(sps_kws *w)
{
    k_gm_solve<<<1, 1024, 0, sps_stream(w->ctx)>>>(w->st, w->gm);
    SPS_LAUNCH_CHECK(w->ctx, "k_gm_solve");
    return SPS_OK;
}

static sps_status c_gm_update(sps_kws *w, double *x, const double *dinv, double *u)
{
    if (u) LAUNCH(w, k_gm_update<2>, w->n, x, dinv, u, w->V, w->st, w->gm.y);
    else if (dinv) LAUNCH(w, k_gm_update<1>, w->n, x, dinv, u, w->V, w->st, w->gm.y);
    else LAUNCH(w, k_gm_update<0>, w->n, x, dinv, u, w->V, w->st, w->gm.y);
    return SPS_OK;
}

/* In the order of struct sps_vops (C++17 has no designated initializers). */
extern "C" const sps_vops sps__vops_cuda = {
    "cuda",
    c_copy,
    c_fill,
    c_add,
    c_jacobi,
    c_dot,
    c_nrm2,
    c_axpby,
    c_finish,
    c_get_state,
    c_put_state,
    c_get_history,
    c_cg_update,
    c_cg_direction,
    c_bicg_p,
    c_bicg_s,
    c_bicg_x,
    c_gemv_t,
    c_gemv_n,
    c_gm_scale,
    c_gm_solve,
    c_gm_update,
};
