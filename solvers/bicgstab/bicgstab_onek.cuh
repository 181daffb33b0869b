/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/bicgstab_onek.cuh: BiCGSTAB's one-kernel engine
 * (k_bicg_onek_regs, k_bicg_onekernel) and their launch templates, included
 * by the translation units of solvers/bicgstab/onek/, one instantiation each
 * (bicgstab_onek.h says why). The CPU emulation (emu/run_onek.sh) cuts the
 * kernels out of this file by its section marker. */
#ifndef SPS_BICGSTAB_ONEK_CUH
#define SPS_BICGSTAB_ONEK_CUH

#include "../kernels.cuh"
#include "bicgstab_onek.h"

namespace {

/* ---- the one-kernel engine ------------------------------------------------
 * One block of OKT threads runs whole iterations, the same operations and
 * finish steps as the kernels above in the same order: p [phat]; v = A phat
 * with r0hat'v, ALPHA; s [shat] with s's; t = A shat with t's and t't; S,
 * then OMEGA; x and r with r'r, r0hat'r and the non-finite count, R. Stopped
 * at this iteration's half step (or after it): x += alpha phat, as k_bicg_x
 * does. Row i is thread i % OKT's; the block sums are in a fixed order.
 *
 * s's rides in the OMEGA reduction (one block reduction fewer an
 * iteration): onek_sum reduces each of its sums alone, in the same per-thread
 * order and the same tree whatever NS is, so the three sums are bitwise the
 * separate reductions' and thread 0 runs the same finish steps on them, S
 * before OMEGA (a no-op once S has stopped: the steps are gated). The price:
 * an iteration that stops at its half step also computes t = A shat, which
 * nothing reads (t is the driver's scratch; each iteration writes t before
 * reading it). */
typedef sps_bicg_onek onek_bicg; /* bicgstab.h */

/* Thread 0 runs the finish step on v, then the block learns the stop flag. */
__device__ __forceinline__ int onek_bicg_finish(const onek_bicg &a, int step, const double *v,
                                                int *stop)
{
    if (threadIdx.x == 0) {
        sps__bicg_finish(step, a.st, a.bs, v, a.hist);
        *stop = (int)a.st->stop;
    }
    __syncthreads();
    return *stop;
}

/* The half step's finish steps on one reduction's sums: S on v[0] = s's,
 * then OMEGA on v[1] = t's, v[2] = t't (which does nothing if S stopped). */
__device__ __forceinline__ int onek_bicg_finish_so(const onek_bicg &a, const double (&v)[3],
                                                   int *stop)
{
    if (threadIdx.x == 0) {
        sps__bicg_finish(SPS_BICG_S, a.st, a.bs, v, a.hist);
        sps__bicg_finish(SPS_BICG_OMEGA, a.st, a.bs, v + 1, a.hist);
        *stop = (int)a.st->stop;
    }
    __syncthreads();
    return *stop;
}

/* Stopped in iteration j: x += alpha phat if it stopped at its half step. */
__device__ __forceinline__ void onek_bicg_half(const onek_bicg &a, int64_t j)
{
    if (!(a.bs->half && a.st->iter == j)) return;
    const double al = a.bs->alpha;
    for (int i = threadIdx.x; i < a.n; i += OKT) {
        double xi = a.x[i] + al * a.ph[i];
        if (xi - xi == 0.0) a.x[i] = xi;
    }
}

/* The iterations of k_bicg_onekernel; a's st and bs point at the block's
 * shared copies (as in cg_onek_loop). */
template <bool JAC>
__device__ __forceinline__ void bicg_onek_loop(const onek_bicg &a, int *stop)
{
    __shared__ int64_t j;
    for (;;) {
        if (threadIdx.x == 0) j = a.st->iter + 1;
        const double be = a.bs->beta, om0 = a.bs->omega;
        for (int i = threadIdx.x; i < a.n; i += OKT) {
            double pi = a.r[i] + be * (a.p[i] - om0 * a.v[i]);
            a.p[i] = pi;
            if constexpr (JAC) a.ph[i] = a.dinv[i] * pi;
        }
        __syncthreads(); /* phat complete (and j set) before the SpMV */
        double v1[1] = {0.0};
        for (int i = threadIdx.x; i < a.n; i += OKT) {
            double vi = onek_row(a.A, a.ph, i);
            a.v[i] = vi;
            v1[0] += a.r0[i] * vi;
        }
        onek_sum<1>(v1);
        if (onek_bicg_finish(a, SPS_BICG_ALPHA, v1, stop)) return onek_bicg_half(a, j);
        const double al = a.bs->alpha;
        double o3[3] = {0.0, 0.0, 0.0}; /* s's, t's, t't */
        for (int i = threadIdx.x; i < a.n; i += OKT) {
            double si = a.r[i] - al * a.v[i];
            a.s[i] = si;
            o3[0] += si * si;
            if constexpr (JAC) a.sh[i] = a.dinv[i] * si;
        }
        __syncthreads(); /* shat complete before the SpMV */
        for (int i = threadIdx.x; i < a.n; i += OKT) {
            double ti = onek_row(a.A, a.sh, i);
            a.t[i] = ti;
            o3[1] += ti * a.s[i];
            o3[2] += ti * ti;
        }
        onek_sum<3>(o3);
        if (onek_bicg_finish_so(a, o3, stop)) return onek_bicg_half(a, j);
        const double al2 = a.bs->alpha, om = a.bs->omega;
        double x3[3] = {0.0, 0.0, 0.0};
        for (int i = threadIdx.x; i < a.n; i += OKT) {
            double xi = a.x[i] + (al2 * a.ph[i] + om * a.sh[i]);
            if (xi - xi == 0.0) a.x[i] = xi;
            else x3[2] += 1.0;
            double ri = a.s[i] - om * a.t[i];
            a.r[i] = ri;
            x3[0] += ri * ri;
            x3[1] += a.r0[i] * ri;
        }
        onek_sum<3>(x3);
        if (onek_bicg_finish(a, SPS_BICG_R, x3, stop)) return;
    }
}

/* The same iterations with at most R rows per thread (n <= R * OKT): each
 * thread's r, v, t in registers (only its own rows read them; t lives
 * within an iteration only: it is scratch, not read in and not written back,
 * so it holds no registers across iterations: with it written back at the
 * end, k_bicg_onek_regs<.., 4> spilled in its loop, and poisson2d:63 took
 * 10.4-10.7 us an iteration against 9.4-9.8 without, same results; x in
 * shared memory, updated once an iteration), r0 and
 * D^-1 through the read-only cache (they do not change), p and s [phat and
 * shat] in shared memory (the SpMVs gather phat and shat), the rows' loads
 * interleaved (onek_rows) from A (its staged entries in shared memory).
 * The same operations in the same order as bicg_onek_loop: bitwise its
 * results. b's vectors: p, s, ph, sh shared; a's: the global copies. */
template <bool JAC, int R>
__device__ __forceinline__ void bicg_onek_regs(const onek_bicg &a, const onek_bicg &b, const onek_A &A,
                                               int *stop)
{
    __shared__ int64_t j;
    const int n = a.n;
    double r[R], v[R], t[R];
    double *x = b.x; /* shared (global when staged entries take its room): updated once an iteration, fewer registers */
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = threadIdx.x + k * OKT;
        r[k] = v[k] = 0.0;
        if (i < n) r[k] = a.r[i], v[k] = a.v[i];
    }
    bool half = false;
    for (;;) {
        if (threadIdx.x == 0) j = b.st->iter + 1;
        const double be = b.bs->beta, om0 = b.bs->omega;
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            if (i < n) {
                const double pi = r[k] + be * (b.p[i] - om0 * v[k]);
                b.p[i] = pi;
                if constexpr (JAC) b.ph[i] = __ldg(a.dinv + i) * pi;
            }
        }
        __syncthreads(); /* phat complete (and j set) before the SpMV */
        double v1[1] = {0.0};
        onek_rows<R>(A, b.ph, n, v);
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            if (i < n) v1[0] += __ldg(a.r0 + i) * v[k];
        }
        onek_sum<1>(v1);
        if (onek_bicg_finish(b, SPS_BICG_ALPHA, v1, stop)) { half = true; break; }
        const double al = b.bs->alpha;
        double o3[3] = {0.0, 0.0, 0.0}; /* s's, t's, t't */
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            if (i < n) {
                const double si = r[k] - al * v[k];
                b.s[i] = si;
                o3[0] += si * si;
                if constexpr (JAC) b.sh[i] = __ldg(a.dinv + i) * si;
            }
        }
        __syncthreads(); /* shat complete before the SpMV */
        onek_rows<R>(A, b.sh, n, t);
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            if (i < n) {
                o3[1] += t[k] * b.s[i];
                o3[2] += t[k] * t[k];
            }
        }
        onek_sum<3>(o3);
        if (onek_bicg_finish_so(b, o3, stop)) { half = true; break; }
        const double al2 = b.bs->alpha, om = b.bs->omega;
        double x3[3] = {0.0, 0.0, 0.0};
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            if (i < n) {
                const double xi = x[i] + (al2 * b.ph[i] + om * b.sh[i]);
                if (xi - xi == 0.0) x[i] = xi;
                else x3[2] += 1.0;
                const double ri = b.s[i] - om * t[k];
                r[k] = ri;
                x3[0] += ri * ri;
                x3[1] += __ldg(a.r0 + i) * ri;
            }
        }
        onek_sum<3>(x3);
        if (onek_bicg_finish(b, SPS_BICG_R, x3, stop)) break;
    }
    /* stopped at the half step: x += alpha phat (onek_bicg_half) */
    if (half && b.bs->half && b.st->iter == j) {
        const double al = b.bs->alpha;
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            if (i < n) {
                const double xi = x[i] + al * b.ph[i];
                if (xi - xi == 0.0) x[i] = xi;
            }
        }
    }
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = threadIdx.x + k * OKT;
        if (i < n) a.x[i] = x[i], a.r[i] = r[k], a.v[i] = v[k];
    }
}

/* REGS (R rows per thread at most): p, s [phat, shat], then x (xs = 1) in
 * dynamic shared memory, r, v, t in registers (bicg_onek_regs); after them
 * the operator's entries that stg names (onek_stage). xs = 0: x stays
 * global, its room staging more. */
template <bool JAC, int R>
__global__ void __launch_bounds__(OKT) k_bicg_onek_regs(onek_bicg a, onek_stage stg, int xs)
{
    extern __shared__ double dyn[];
    __shared__ int stop;
    __shared__ sps_kstate sst;
    __shared__ sps_bicg_state sbs;
    if (threadIdx.x == 0) {
        sst = *a.st;
        sbs = *a.bs;
        stop = (int)sst.stop;
    }
    onek_bicg b = a;
    b.st = &sst;
    b.bs = &sbs;
    const size_t n = (size_t)a.n;
    const size_t nv = JAC ? 4 : 2; /* the shared vectors before x */
    b.p = dyn, b.s = dyn + n;
    b.ph = JAC ? dyn + 2 * n : b.p;
    b.sh = JAC ? dyn + 3 * n : b.s;
    if (xs) b.x = dyn + nv * n;
    const onek_A A = onek_stage_to(a.A, dyn + (nv + (xs ? 1 : 0)) * n, stg);
    for (int i = threadIdx.x; i < a.n; i += OKT) {
        b.p[i] = a.p[i], b.s[i] = a.s[i];
        if (xs) b.x[i] = a.x[i];
    }
    __syncthreads();
    if (stop) return;
    bicg_onek_regs<JAC, R>(a, b, A, &stop);
    __syncthreads(); /* the shared vectors and state are final */
    for (int i = threadIdx.x; i < a.n; i += OKT) {
        a.p[i] = b.p[i], a.s[i] = b.s[i];
        if constexpr (JAC) a.ph[i] = b.ph[i], a.sh[i] = b.sh[i];
    }
    if (threadIdx.x == 0) {
        *a.st = sst;
        *a.bs = sbs;
    }
}

/* SM: r, r0, p, v, s, t [and phat, shat] in dynamic shared memory for the
 * launch (loaded from and written back to their global copies; x stays
 * global), when they fit (as in cg_kernels.cu). */
template <bool JAC, bool SM>
__global__ void __launch_bounds__(OKT) k_bicg_onekernel(onek_bicg a)
{
    extern __shared__ double dyn[];
    __shared__ int stop;
    __shared__ sps_kstate sst;
    __shared__ sps_bicg_state sbs;
    if (threadIdx.x == 0) {
        sst = *a.st;
        sbs = *a.bs;
        stop = (int)sst.stop;
    }
    onek_bicg b = a;
    b.st = &sst;
    b.bs = &sbs;
    const size_t n = (size_t)a.n;
    if constexpr (SM) {
        b.r = dyn, b.r0 = dyn + n, b.p = dyn + 2 * n, b.v = dyn + 3 * n, b.s = dyn + 4 * n,
        b.t = dyn + 5 * n;
        b.ph = JAC ? dyn + 6 * n : b.p;
        b.sh = JAC ? dyn + 7 * n : b.s;
        for (int i = threadIdx.x; i < a.n; i += OKT)
            b.r[i] = a.r[i], b.r0[i] = a.r0[i], b.p[i] = a.p[i], b.v[i] = a.v[i], b.s[i] = a.s[i],
            b.t[i] = a.t[i];
    }
    __syncthreads();
    if (stop) return;
    bicg_onek_loop<JAC>(b, &stop);
    __syncthreads(); /* onek_bicg_half's reads of the shared state are done */
    if constexpr (SM)
        for (int i = threadIdx.x; i < a.n; i += OKT) {
            a.r[i] = b.r[i], a.p[i] = b.p[i], a.v[i] = b.v[i], a.s[i] = b.s[i], a.t[i] = b.t[i];
            if constexpr (JAC) a.ph[i] = b.ph[i], a.sh[i] = b.sh[i];
        }
    if (threadIdx.x == 0) { /* the state back for the host and the finish kernels */
        *a.st = sst;
        *a.bs = sbs;
    }
}

template <bool JAC, int R>
bool bicg_onek_regs_try(cudaStream_t s, const onek_bicg &a)
{
    /* x in shared memory if the whole stage fits after it, else in global
     * memory with the most staged (as entries are read every SpMV and x once
     * an iteration). */
    const size_t vec = (size_t)(JAC ? 4 : 2) * (size_t)a.n * sizeof(double), xb = (size_t)a.n * sizeof(double);
    const size_t room = onek_room(k_bicg_onek_regs<JAC, R>, vec);
    onek_stage g = onek_stage_plan(a.A, room > xb ? room - xb : 0);
    const onek_stage all = onek_stage_plan(a.A, room);
    int xs = 1;
    if (onek_stage_bytes(all) > onek_stage_bytes(g)) g = all, xs = 0;
    size_t sm = onek_smem_bytes(k_bicg_onek_regs<JAC, R>, vec + (xs ? xb : 0) + onek_stage_bytes(g));
    if (!sm) g = onek_stage{}, xs = 1, sm = onek_smem_bytes(k_bicg_onek_regs<JAC, R>, vec + xb);
    if (!sm) return false;
    k_bicg_onek_regs<JAC, R><<<1, OKT, sm, s>>>(a, g, xs);
    return true;
}

/* k_bicg_onekernel<JAC, SM>: SM (the vectors in shared memory) where they
 * fit (false: they do not), else in global memory (always launches). */
template <bool JAC, bool SM>
bool bicg_onek_whole_try(cudaStream_t s, const onek_bicg &a)
{
    if constexpr (SM) {
        const size_t sm = onek_smem(k_bicg_onekernel<JAC, true>, a.n, JAC ? 8 : 6);
        if (!sm) return false;
        k_bicg_onekernel<JAC, true><<<1, OKT, sm, s>>>(a);
    } else {
        k_bicg_onekernel<JAC, false><<<1, OKT, 0, s>>>(a);
    }
    return true;
}

} /* namespace */

/* One instantiation's launcher (bicgstab_onek.h's prototype): the register
 * layouts with R rows a thread, or the whole-vector ones (SM: shared). */
#define SPS_BICG_ONEK_REGS_DEFINE(name, jac, r) \
    extern "C" int name(cudaStream_t s, const sps_bicg_onek *a) { return bicg_onek_regs_try<jac, r>(s, *a); }
#define SPS_BICG_ONEK_WHOLE_DEFINE(name, jac, sm) \
    extern "C" int name(cudaStream_t s, const sps_bicg_onek *a) { return bicg_onek_whole_try<jac, sm>(s, *a); }

#endif /* SPS_BICGSTAB_ONEK_CUH */
