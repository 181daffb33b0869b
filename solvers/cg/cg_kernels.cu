/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/cg_kernels.cu: CG's fused kernels (the same operations
 * as cg_host.c, which is their specification). The update changes x and r,
 * applies a fused Jacobi scaling and produces r'r and r'z in one pass. */
#include "../kernels.cuh"
#include "cg.h"


namespace {

template <bool JAC>
__global__ void __launch_bounds__(TPB) k_cg_update(int n, double *x, double *r, const double *p,
                                                   const double *q, const double *dinv,
                                                   double *z, const sps_kstate *st,
                                                   const sps_cg_state *cs, double *part)
{
    if (st->stop) return;
    const double al = cs->alpha;
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

/* The fused engine's r update (x comes later, with p: k_cg_xp). */
template <bool JAC>
__global__ void __launch_bounds__(TPB) k_cg_resid(int n, double *r, const double *q,
                                                  const double *dinv, double *z,
                                                  const sps_kstate *st, const sps_cg_state *cs,
                                                  double *part)
{
    if (st->stop) return;
    const double al = cs->alpha;
    double v[2] = {0.0, 0.0};
    GRID_STRIDE(i, n)
    {
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

/* x += alpha p (unless x is up to date); p = z + beta p (unless stopped). */
__global__ void __launch_bounds__(TPB) k_cg_xp(int n, double *x, double *p, const double *z,
                                               const sps_kstate *st, const sps_cg_xstate *xs)
{
    if (xs->xiter == (double)st->iter) return;
    const double al = xs->cg.alpha, be = xs->cg.beta;
    const bool dir = !st->stop;
    GRID_STRIDE(i, n)
    {
        double pi = p[i];
        x[i] += al * pi;
        if (dir) p[i] = z[i] + be * pi;
    }
}

__global__ void __launch_bounds__(TPB) k_cg_direction(int n, double *p, const double *z,
                                                      const sps_kstate *st,
                                                      const sps_cg_state *cs)
{
    if (st->stop) return;
    const double be = cs->beta;
    GRID_STRIDE(i, n) p[i] = z[i] + be * p[i];
}

/* ---- the one-kernel engine ------------------------------------------------
 * One block of OKT threads runs whole iterations: q = A p (one thread per row,
 * the row's entries in order) with p'q, the finish ALPHA on thread 0, the
 * update with r'r [and r'z], the residual finish on thread 0, the direction;
 * until the state says stop. Row i is always thread i % OKT's, and the block
 * sums are in a fixed order: bitwise repeatable. __syncthreads orders the
 * global-memory writes of one phase before the reads of the next. */
/* Thread 0 runs the finish step on v, then the block learns the stop flag. */
__device__ __forceinline__ int onek_finish(int step, sps_kstate *st, sps_cg_state *cs,
                                           const double *v, double *hist, int *stop)
{
    if (threadIdx.x == 0) {
        sps__cg_finish(step, st, cs, v, hist);
        *stop = (int)st->stop;
    }
    __syncthreads();
    return *stop;
}

/* The iterations of k_cg_onekernel on the block's shared copies of the state
 * (st, cs): thread 0's finish steps and every thread's reads of alpha and
 * beta then cost a shared-memory access, not a global one. */
template <bool JAC>
__device__ __forceinline__ void cg_onek_loop(int n, const sps_dev_rows &A, double *x, double *r,
                                             double *p, double *q, const double *dinv, double *z,
                                             sps_kstate *st, sps_cg_state *cs, double *hist,
                                             int step, int *stop)
{
    for (;;) {
        double v1[1] = {0.0};
        for (int i = threadIdx.x; i < n; i += OKT) {
            const double s = onek_row(A, p, i);
            q[i] = s;
            v1[0] += p[i] * s;
        }
        onek_sum<1>(v1);
        if (onek_finish(SPS_CG_ALPHA, st, cs, v1, hist, stop)) return;
        const double al = cs->alpha;
        double v2[2] = {0.0, 0.0};
        for (int i = threadIdx.x; i < n; i += OKT) {
            x[i] += al * p[i];
            double ri = r[i] - al * q[i];
            r[i] = ri;
            v2[0] += ri * ri;
            if constexpr (JAC) {
                double zi = dinv[i] * ri;
                z[i] = zi;
                v2[1] += ri * zi;
            }
        }
        onek_sum<2>(v2);
        if (onek_finish(step, st, cs, v2, hist, stop)) return;
        const double be = cs->beta;
        for (int i = threadIdx.x; i < n; i += OKT) p[i] = z[i] + be * p[i];
        __syncthreads(); /* p complete before the next SpMV reads it */
    }
}

/* The same iterations with at most R rows per thread (n <= R * OKT): each
 * thread's x, r, q [z] in registers (only its own rows read them; D^-1
 * through the read-only cache),
 * p in shared memory (the SpMV gathers it). The same operations in the same
 * order as cg_onek_loop: bitwise its results. */
template <bool JAC, int R>
__device__ __forceinline__ void cg_onek_regs(int n, const sps_dev_rows &A, double *gx, double *gr,
                                             double *p, double *gq, const double *dinv, double *gz,
                                             sps_kstate *st, sps_cg_state *cs, double *hist,
                                             int step, int *stop)
{
    double x[R], r[R], q[R], z[R];
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = threadIdx.x + k * OKT;
        x[k] = r[k] = q[k] = z[k] = 0.0;
        if (i < n) x[k] = gx[i], r[k] = gr[i];
    }
    for (;;) {
        double v1[1] = {0.0};
        onek_rows<R>(A, p, n, q);
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            if (i < n) v1[0] += p[i] * q[k];
        }
        onek_sum<1>(v1);
        if (onek_finish(SPS_CG_ALPHA, st, cs, v1, hist, stop)) break;
        const double al = cs->alpha;
        double v2[2] = {0.0, 0.0};
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            if (i < n) {
                x[k] += al * p[i];
                const double ri = r[k] - al * q[k];
                r[k] = ri;
                v2[0] += ri * ri;
                if constexpr (JAC) {
                    const double zi = __ldg(dinv + i) * ri;
                    z[k] = zi;
                    v2[1] += ri * zi;
                }
            }
        }
        onek_sum<2>(v2);
        if (onek_finish(step, st, cs, v2, hist, stop)) break;
        const double be = cs->beta;
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            if (i < n) p[i] = (JAC ? z[k] : r[k]) + be * p[i];
        }
        __syncthreads(); /* p complete before the next SpMV reads it */
    }
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = threadIdx.x + k * OKT;
        if (i < n) {
            gx[i] = x[k], gr[i] = r[k], gq[i] = q[k];
            if constexpr (JAC) gz[i] = z[k];
        }
    }
}

/* Where the vectors live for the launch. GLOBAL: all in global memory.
 * SHARED: r, p, q [and z] in dynamic shared memory (loaded from and written
 * back to their global copies; x stays global), when they fit. REGS (R rows
 * per thread at most): p in dynamic shared memory, the rest in registers;
 * a DIA operator's values in shared memory after p where they fit
 * (onek_vals_bytes; vals = 1). */
enum { OK_GLOBAL = ONEK_GLOBAL, OK_SHARED = ONEK_SHARED, OK_REGS1 = 2, OK_REGS2 = 3, OK_REGS4 = 4 };

template <bool JAC, int MODE>
__global__ void __launch_bounds__(OKT) k_cg_onekernel(int n, const sps_dev_rows A, double *x,
                                                      double *gr, double *gp, double *gq,
                                                      const double *dinv, double *gz,
                                                      sps_kstate *st, sps_cg_state *cs,
                                                      double *hist, int step, int vals)
{
    extern __shared__ double dyn[];
    __shared__ int stop;
    __shared__ sps_kstate sst;
    __shared__ sps_cg_state scs;
    if (threadIdx.x == 0) {
        sst = *st;
        scs = *cs;
        stop = (int)sst.stop;
    }
    double *r = gr, *p = gp, *q = gq, *z = gz;
    if constexpr (MODE == OK_SHARED) {
        r = dyn, p = dyn + n, q = dyn + 2 * (size_t)n, z = JAC ? dyn + 3 * (size_t)n : r;
        for (int i = threadIdx.x; i < n; i += OKT) r[i] = gr[i], p[i] = gp[i];
    }
    sps_dev_rows B = A;
    if constexpr (MODE >= OK_REGS1) {
        p = dyn;
        for (int i = threadIdx.x; i < n; i += OKT) p[i] = gp[i];
        if (vals) B = onek_vals_to(A, dyn + n); /* after p (onek_vals_bytes) */
    }
    __syncthreads();
    if (stop) return;
    if constexpr (MODE >= OK_REGS1) {
        cg_onek_regs<JAC, MODE == OK_REGS1 ? 1 : MODE == OK_REGS2 ? 2 : 4>(
            n, B, x, gr, p, gq, dinv, gz, &sst, &scs, hist, step, &stop);
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += OKT) gp[i] = p[i];
    } else {
        cg_onek_loop<JAC>(n, A, x, r, p, q, dinv, z, &sst, &scs, hist, step, &stop);
        if constexpr (MODE == OK_SHARED) {
            __syncthreads();
            for (int i = threadIdx.x; i < n; i += OKT) {
                gr[i] = r[i], gp[i] = p[i], gq[i] = q[i];
                if constexpr (JAC) gz[i] = z[i];
            }
        }
    }
    if (threadIdx.x == 0) { /* the state back for the host and the finish kernels */
        *st = sst;
        *cs = scs;
    }
}

/* The layout: SPS_ONEK_LAYOUT=global|shared|regs forces one (tests compare
 * them), else registers up to 4 rows a thread, shared memory where the
 * vectors fit, global memory otherwise. */
template <bool JAC, int MODE>
bool cg_onek_try(cudaStream_t s, int n, const sps_dev_rows &A, double *x, double *r, double *p,
                 double *q, const double *dinv, double *z, sps_kstate *st, sps_cg_state *cs,
                 double *hist, int step)
{
    const int k = MODE == OK_SHARED ? (JAC ? 4 : 3) : 1;
    const size_t vec = (size_t)k * (size_t)n * sizeof(double);
    const size_t vb = MODE >= OK_REGS1 ? onek_vals_bytes(A) : 0;
    size_t sm = 0;
    int vals = 0;
    if (vb && (sm = onek_smem_bytes(k_cg_onekernel<JAC, MODE>, vec + vb)) != 0) vals = 1;
    else if (MODE != OK_GLOBAL) sm = onek_smem_bytes(k_cg_onekernel<JAC, MODE>, vec);
    if (MODE != OK_GLOBAL && !sm) return false;
    k_cg_onekernel<JAC, MODE><<<1, OKT, sm, s>>>(n, A, x, r, p, q, dinv, z, st, cs, hist, step, vals);
    return true;
}

template <bool JAC>
void cg_onek_launch(cudaStream_t s, int n, const sps_dev_rows &A, double *x, double *r, double *p,
                    double *q, const double *dinv, double *z, sps_kstate *st, sps_cg_state *cs,
                    double *hist, int step)
{
    const int want = onek_layout();
    if (want < 0) {
        if (n <= OKT && cg_onek_try<JAC, OK_REGS1>(s, n, A, x, r, p, q, dinv, z, st, cs, hist, step)) return;
        if (n <= 2 * OKT && n > OKT &&
            cg_onek_try<JAC, OK_REGS2>(s, n, A, x, r, p, q, dinv, z, st, cs, hist, step)) return;
        if (n <= 4 * OKT && n > 2 * OKT &&
            cg_onek_try<JAC, OK_REGS4>(s, n, A, x, r, p, q, dinv, z, st, cs, hist, step)) return;
    }
    if (want != OK_GLOBAL &&
        cg_onek_try<JAC, OK_SHARED>(s, n, A, x, r, p, q, dinv, z, st, cs, hist, step)) return;
    cg_onek_try<JAC, OK_GLOBAL>(s, n, A, x, r, p, q, dinv, z, st, cs, hist, step);
}

} /* namespace */

static sps_status c_cg_onekernel(sps_kws *w, const sps_dev_rows *rows, double *x, double *r,
                                 double *p, double *q, const double *dinv, double *z, int step)
{
    if (!rows || rows->n != w->n || w->n > SPS_IDX_MAX) return SPS_ERR_UNSUPPORTED;
    sps_cg_state *cs = (sps_cg_state *)w->ms;
    cudaStream_t s = sps_stream(w->ctx);
    if (dinv) cg_onek_launch<true>(s, (int)w->n, *rows, x, r, p, q, dinv, z, w->st, cs, w->hist, step);
    else cg_onek_launch<false>(s, (int)w->n, *rows, x, r, p, q, dinv, z, w->st, cs, w->hist, step);
    SPS_LAUNCH_CHECK(w->ctx, "k_cg_onekernel");
    return SPS_OK;
}

/* CG's finish steps run on thread 0. */
static __device__ void sps_method_finish(int step, sps_kstate *st, sps_cg_state *cs, const double *v,
                                         double *hist)
{
    sps__cg_finish(step, st, cs, v, hist);
}

static constexpr auto c_cg_finish = finish_thread0<sps_cg_state>;

static sps_status c_cg_update(sps_kws *w, double *x, double *r, const double *p, const double *q,
                              const double *dinv, double *z, int step)
{
    const sps_cg_state *cs = (const sps_cg_state *)w->ms;
    if (dinv) LAUNCH(w, k_cg_update<true>, w->n, x, r, p, q, dinv, z, w->st, cs, w->red);
    else LAUNCH(w, k_cg_update<false>, w->n, x, r, p, q, dinv, z, w->st, cs, w->red);
    w->nsum = 2;
    sps_kfin f = sps__kfin(c_cg_finish, NULL, step, 1, 0);
    return c_cg_finish(w, &f);
}

static sps_status c_cg_finish_parts(sps_kws *w, int nparts, int step, int gated)
{
    thread0_fin<sps_cg_state> fn = {step, w->st, (sps_cg_state *)w->ms, w->hist};
    k_reduce_finish<<<1, TPB, 0, sps_stream(w->ctx)>>>(w->st, gated, w->red, nparts, 1, fn);
    SPS_LAUNCH_CHECK(w->ctx, "k_reduce_finish");
    w->nsum = 1;
    return SPS_OK;
}

static sps_status c_cg_resid(sps_kws *w, double *r, const double *q, const double *dinv, double *z,
                             int step)
{
    const sps_cg_state *cs = (const sps_cg_state *)w->ms;
    if (dinv) LAUNCH(w, k_cg_resid<true>, w->n, r, q, dinv, z, w->st, cs, w->red);
    else LAUNCH(w, k_cg_resid<false>, w->n, r, q, dinv, z, w->st, cs, w->red);
    w->nsum = 2;
    sps_kfin f = sps__kfin(c_cg_finish, NULL, step, 1, 0);
    return c_cg_finish(w, &f);
}

static sps_status c_cg_xp(sps_kws *w, double *x, double *p, const double *z)
{
    LAUNCH(w, k_cg_xp, w->n, x, p, z, w->st, (const sps_cg_xstate *)w->ms);
    return SPS_OK;
}

static sps_status c_cg_direction(sps_kws *w, double *p, const double *z)
{
    LAUNCH(w, k_cg_direction, w->n, p, z, w->st, (const sps_cg_state *)w->ms);
    return SPS_OK;
}

extern "C" const sps_cg_ops sps__cg_ops_cuda = {
    .finish = c_cg_finish,
    .update = c_cg_update,
    .direction = c_cg_direction,
    .finish_parts = c_cg_finish_parts,
    .resid = c_cg_resid,
    .xp = c_cg_xp,
    .onekernel = c_cg_onekernel,
};
