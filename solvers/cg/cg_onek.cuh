/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/cg_onek.cuh: CG's one-kernel engine (k_cg_onekernel)
 * and its launch template, included by the translation units of
 * solvers/cg/onek/, one instantiation each (cg_onek.h says why). */
#ifndef SPS_CG_ONEK_CUH
#define SPS_CG_ONEK_CUH

#include "../kernels.cuh"
#include "cg_onek.h"

namespace {

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
 * p in shared memory (the SpMV gathers it), A's staged entries after it
 * (onek_stage). The same operations in the same order as cg_onek_loop:
 * bitwise its results. */
template <bool JAC, int R>
__device__ __forceinline__ void cg_onek_regs(int n, const onek_A &A, double *gx, double *gr,
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
 * the operator's entries that stg names in shared memory after p
 * (onek_stage). */
static_assert((int)OK_GLOBAL == (int)ONEK_GLOBAL && (int)OK_SHARED == (int)ONEK_SHARED, "cg_onek.h's layouts are kernels.cuh's");

template <bool JAC, int MODE>
__global__ void __launch_bounds__(OKT) k_cg_onekernel(int n, const sps_dev_rows A, double *x,
                                                      double *gr, double *gp, double *gq,
                                                      const double *dinv, double *gz,
                                                      sps_kstate *st, sps_cg_state *cs,
                                                      double *hist, int step, onek_stage stg)
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
    onek_A B = {A, NULL, NULL, 0, 0};
    if constexpr (MODE >= OK_REGS1) {
        p = dyn;
        for (int i = threadIdx.x; i < n; i += OKT) p[i] = gp[i];
        B = onek_stage_to(A, dyn + n, stg); /* after p */
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

/* k_cg_onekernel<JAC, MODE> launched where its shared memory fits (false:
 * it does not; the global layout always launches). */
template <bool JAC, int MODE>
bool cg_onek_try(cudaStream_t s, int n, const sps_dev_rows &A, double *x, double *r, double *p,
                 double *q, const double *dinv, double *z, sps_kstate *st, sps_cg_state *cs,
                 double *hist, int step)
{
    const int k = MODE == OK_SHARED ? (JAC ? 4 : 3) : 1;
    const size_t vec = (size_t)k * (size_t)n * sizeof(double);
    onek_stage g = {};
    if (MODE >= OK_REGS1) g = onek_stage_plan(A, onek_room(k_cg_onekernel<JAC, MODE>, vec));
    size_t sm = 0;
    if (onek_stage_bytes(g) && !(sm = onek_smem_bytes(k_cg_onekernel<JAC, MODE>, vec + onek_stage_bytes(g))))
        g = onek_stage{};
    if (MODE != OK_GLOBAL && !sm) sm = onek_smem_bytes(k_cg_onekernel<JAC, MODE>, vec);
    if (MODE != OK_GLOBAL && !sm) return false;
    k_cg_onekernel<JAC, MODE><<<1, OKT, sm, s>>>(n, A, x, r, p, q, dinv, z, st, cs, hist, step, g);
    return true;
}

} /* namespace */

/* One instantiation's launcher (cg_onek.h's prototype). */
#define SPS_CG_ONEK_DEFINE(name, jac, mode)                                                        \
    extern "C" int name(cudaStream_t s, int n, const sps_dev_rows *A, double *x, double *r, double *p, \
                        double *q, const double *dinv, double *z, sps_kstate *st, sps_cg_state *cs, \
                        double *hist, int step)                                                    \
    {                                                                                              \
        return cg_onek_try<jac, mode>(s, n, *A, x, r, p, q, dinv, z, st, cs, hist, step);           \
    }

#endif /* SPS_CG_ONEK_CUH */
