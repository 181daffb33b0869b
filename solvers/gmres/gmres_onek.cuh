/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres_onek.cuh: GMRES's one-kernel and cluster
 * kernels (gmres.c gm_onekernel) and their launch templates, included by the
 * translation units of solvers/gmres/onek/, one instantiation each
 * (gmres_onek.h says why). The CPU emulation (emu/run_onek.sh) cuts the
 * kernels out of this file by its section markers. */
#ifndef SPS_GMRES_ONEK_CUH
#define SPS_GMRES_ONEK_CUH

#include "../kernels.cuh"
#include "gmres_onek.h"

#include <cooperative_groups.h>
#include <stdlib.h>

namespace cg = cooperative_groups;

namespace {

/* ---- the one-kernel engine (gmres.c gm_onekernel) ---------------------------
 *
 * One block of OKT threads runs the Arnoldi steps j = j0 .. m-1 of a cycle:
 * the operations of gm_iterate in its order, thread 0 making the decisions
 * with the host's code (sps__gm_column: the check, the second pass's
 * decision, sps__gm_rotate, sps__gm_arnoldi). Thread t owns rows
 * i = t + k OKT (k < R): w = A z and the products keep those rows of w in
 * registers; the basis stays in global memory (each thread reads and writes
 * only its own rows of it, so it needs no barrier), its first kc columns
 * also in shared memory where room is left (they are read in every step: the
 * products read them from there; kc changes where a value is read, never an
 * operation, so the results do not depend on it); z (the SpMV's input,
 * gathered by every thread) and the small arrays (column j of H, h2, cs, sn,
 * g) and the state live in shared memory, written back at the end.
 *
 * h = V'w: each thread sums its rows' terms for GO_CB columns at a time (rows
 * in order), a fixed butterfly in each warp (go_warp_cols) leaves one sum per
 * (column, warp) in shared memory, then warp c % 32 adds column c's 32 warp
 * sums by a fixed tree. w -= V h: each row's terms in column order. So every
 * sum has an order fixed by n and j: run to run bitwise the same. */
#define GO_CB 8    /* columns per register chunk of h = V'w */
#define GO_RCOL 64 /* columns per round of the block's reduction (shared: 64 x 32 doubles) */
#define GO_FULL 0xffffffffu

/* The warp's sums of acc[q] (column cbase + q of the round) into
 * red[(cbase + q) * 32 + warp]: each butterfly level halves the columns a
 * lane keeps (xor 16: 4, xor 8: 2, xor 4: 1), then xor 2 and xor 1 finish
 * them; lane 4c holds column c's sum. NW: the block's warps (the stride of
 * red: OKT / 32 for the one kernel). */
template <int NW>
__device__ __forceinline__ void go_warp_cols(const double (&acc)[GO_CB], double *red, int cbase)
{
    const int lane = (int)(threadIdx.x & 31), wid = (int)(threadIdx.x >> 5);
    const bool u16 = lane & 16, u8 = lane & 8, u4 = lane & 4;
    double a[4], b[2];
#pragma unroll
    for (int q = 0; q < 4; q++) {
        const double keep = u16 ? acc[q + 4] : acc[q], send = u16 ? acc[q] : acc[q + 4];
        a[q] = keep + __shfl_xor_sync(GO_FULL, send, 16);
    }
#pragma unroll
    for (int q = 0; q < 2; q++) {
        const double keep = u8 ? a[q + 2] : a[q], send = u8 ? a[q] : a[q + 2];
        b[q] = keep + __shfl_xor_sync(GO_FULL, send, 8);
    }
    double c = (u4 ? b[1] : b[0]) + __shfl_xor_sync(GO_FULL, u4 ? b[0] : b[1], 4);
    c += __shfl_xor_sync(GO_FULL, c, 2);
    c += __shfl_xor_sync(GO_FULL, c, 1);
    if ((lane & 3) == 0) red[(cbase + (lane >> 2)) * NW + wid] = c;
}

/* Column c's first row of the block: Vs + c lds for c < kc, else V + c ldv.
 * SAME (the one kernel: lds = ldv = n): one product, the pointer chosen
 * first, as the one kernel computed it before the cluster kernel shared this
 * code (the two-product form cost it a register spill and about 10 us an
 * iteration on poisson2d:63 GMRES(30), H100). */
template <bool SAME>
__device__ __forceinline__ const double *go_col(const double *V, size_t ldv, const double *Vs, size_t lds, int kc,
                                                int c)
{
    if constexpr (SAME) return (c < kc ? Vs : V) + (size_t)c * ldv;
    return c < kc ? Vs + (size_t)c * lds : V + (size_t)c * ldv;
}

/* h[c] = V[:, c]' w for c < ncols (h in shared memory; complete in every
 * thread on return). Every thread of the block (B threads) calls it. The
 * block's nr rows: thread t owns rows i = t + k B (k < R, i < nr); column c
 * is read at Vs + c lds + i for c < kc, else at V + c ldv + i (the one
 * kernel: nr = ldv = lds = n; the cluster kernel: its slice of the rows).
 * red: GO_RCOL x B/32 doubles. */
template <int B, int R, bool SAME = false>
__device__ __forceinline__ void go_products(int nr, int ncols, const double *V, size_t ldv, const double *Vs,
                                            size_t lds, int kc, const double (&w)[R], double *h, double *red)
{
    constexpr int NW = B / 32;
    const int lane = (int)(threadIdx.x & 31), wid = (int)(threadIdx.x >> 5);
    for (int r0 = 0; r0 < ncols; r0 += GO_RCOL) {
        const int r1 = min(ncols, r0 + GO_RCOL);
        for (int c0 = r0; c0 < r1; c0 += GO_CB) {
            double acc[GO_CB];
#pragma unroll
            for (int q = 0; q < GO_CB; q++) acc[q] = 0.0;
#pragma unroll
            for (int k = 0; k < R; k++) {
                const int i = (int)threadIdx.x + k * B;
                if (i < nr) {
#pragma unroll
                    for (int q = 0; q < GO_CB; q++)
                        if (c0 + q < r1) {
                            const int c = c0 + q;
                            const double *p = go_col<SAME>(V, ldv, Vs, lds, kc, c) + i;
                            acc[q] += *p * w[k];
                        }
                }
            }
            go_warp_cols<NW>(acc, red, c0 - r0);
        }
        __syncthreads(); /* the warp sums written */
        /* column c's NW warp sums by a butterfly over the lanes that hold
         * them: the levels above NW / 2 add zeros (lanes NW..31), left out.
         * The same sums but for a sum of -0.0 (its products underflowed to
         * negative zeros), which they made +0.0: the same value */
        for (int c = r0 + wid; c < r1; c += NW) {
            double v = lane < NW ? red[(c - r0) * NW + lane] : 0.0;
            for (int off = NW >= 32 ? 16 : NW / 2; off > 0; off >>= 1) v += __shfl_xor_sync(GO_FULL, v, off);
            if (lane == 0) h[c] = v;
        }
        __syncthreads(); /* h complete; red free for the next round */
    }
}

/* w -= V[:, 0..ncols-1] h on the thread's rows (each row's terms in column
 * order, then subtracted; rows and columns as go_products'); returns the
 * thread's part of w'w. */
template <int B, int R, bool SAME = false>
__device__ __forceinline__ double go_subtract(int nr, int ncols, const double *V, size_t ldv, const double *Vs,
                                              size_t lds, int kc, const double *h, double (&w)[R])
{
    double t[R];
#pragma unroll
    for (int k = 0; k < R; k++) t[k] = 0.0;
    int c = 0;
    for (; c + 4 <= ncols; c += 4) {
        const double h0 = h[c], h1 = h[c + 1], h2 = h[c + 2], h3 = h[c + 3];
        const double *p0 = go_col<SAME>(V, ldv, Vs, lds, kc, c);
        const double *p1 = go_col<SAME>(V, ldv, Vs, lds, kc, c + 1);
        const double *p2 = go_col<SAME>(V, ldv, Vs, lds, kc, c + 2);
        const double *p3 = go_col<SAME>(V, ldv, Vs, lds, kc, c + 3);
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = (int)threadIdx.x + k * B;
            if (i < nr) {
                const double a0 = p0[i], a1 = p1[i], a2 = p2[i], a3 = p3[i];
                t[k] += a0 * h0;
                t[k] += a1 * h1;
                t[k] += a2 * h2;
                t[k] += a3 * h3;
            }
        }
    }
    for (; c < ncols; c++) {
        const double hc = h[c], *pc = go_col<SAME>(V, ldv, Vs, lds, kc, c);
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = (int)threadIdx.x + k * B;
            if (i < nr) t[k] += pc[i] * hc;
        }
    }
    double ww = 0.0;
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = (int)threadIdx.x + k * B;
        if (i < nr) {
            w[k] -= t[k];
            ww += w[k] * w[k];
        }
    }
    return ww;
}

/* A finish step on thread 0 (sps__gm_column, as the host's h_gm_finish),
 * then the stop flag and the second pass's flag to every thread. */
__device__ __forceinline__ void go_finish(int step, int j, double ww, sps_kstate *st, sps_gm_state *gs,
                                          double *col, double *hist, sps_kgm gm, int *flag)
{
    if (threadIdx.x == 0) {
        sps__gm_column(step, st, gs, j, col, ww, hist, gm);
        flag[0] = (int)st->stop;
        flag[1] = (int)gs->reorth;
    }
    __syncthreads();
}

/* The cycles a launch may run (max: 1 ends at the first cycle's end, as
 * the caller's gm_restart then runs it) and, for the restarts between them,
 * x (each block its rows; NULL where max is 1) and b (the one kernel and
 * the cluster kernel). */
struct gc_cycles {
    int max;
    double *x;
    const double *b;
};

/* y = R^-1 g over the cycle's kd columns (sps__gm_solve's column-oriented
 * order, so bitwise its y; yw: g's copy, worked on), by a block of B threads,
 * H and g from gm. R's triangle is copied to red (nred doubles) first where
 * it fits: one wait for its loads instead of one a column. H (column-major,
 * ld m + 1) is read past L1 (__ldcg): the cluster kernel's block 0 wrote it. */
template <int B>
__device__ __forceinline__ void go_solve(int kd, int m, const sps_kgm &gm, double *yw, double *y, double *red,
                                         int nred)
{
    const double *H = gm.H, *g = gm.g;
    const int t = (int)threadIdx.x;
    const size_t ld = (size_t)m + 1;
    const bool pk = (long long)kd * (kd + 1) / 2 <= (long long)nred;
    if (pk)
        for (int i = 0; i < kd; i++)
            for (int r = t; r <= i; r += B) red[(size_t)i * (i + 1) / 2 + r] = __ldcg(H + r + (size_t)i * ld);
    for (int i = t; i < kd; i += B) yw[i] = g[i];
    __syncthreads();
    for (int i = kd - 1; i >= 0; i--) {
        const double *Ri = pk ? red + (size_t)i * (i + 1) / 2 : nullptr, *Hi = H + (size_t)i * ld;
        const double yi = yw[i] / (pk ? Ri[i] : __ldcg(Hi + i));
        if (t == 0) y[i] = yi;
        for (int r = t; r < i; r += B) yw[r] -= (pk ? Ri[r] : __ldcg(Hi + r)) * yi;
        __syncthreads(); /* yw[i - 1] final */
    }
}

/* w = A z on the thread's rows (the one kernel's SpMV, z in shared memory). */
template <int R>
__device__ __forceinline__ void go_spmv(const sps_dev_rows &A, const double *z, int n, double (&w)[R])
{
    if constexpr (R <= 4) {
        onek_rows<R>(A, z, n, w);
    } else {
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = (int)threadIdx.x + k * OKT;
            w[k] = i < n ? onek_row(A, z, i) : 0.0;
        }
    }
}

/* v = w / d (k_gm_scale's expression) on the thread's rows of nr (rows
 * t + k B) into vn (the basis column in global memory) and vsn (its shared
 * copy, or NULL), and z = [D^-1] v (D^-1 from row lo on) into z: the one
 * kernel's v_{j+1} and v_0 (lo = 0), the cluster kernel's v_{j+1}. */
template <bool JAC, int B, int R>
__device__ __forceinline__ void go_scale(int nr, int lo, double d, const double (&w)[R], double *vn, double *vsn,
                                         double *z, const double *dinv)
{
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = (int)threadIdx.x + k * B;
        if (i < nr) {
            const double v = w[k] / d;
            vn[i] = v;
            if (vsn) vsn[i] = v;
            z[i] = JAC ? dinv[lo + i] * v : v;
        }
    }
}

/* The cycle's end and the restart in the one kernel, as gmres.c gm_restart
 * runs them between launches: y = R^-1 g (go_solve, from the block's own
 * columns of H), x += [D^-1] V y on the thread's rows (each row's terms in
 * column order) into z, r = b - A x, r'r (onek_sum's tree), the
 * SPS_GM_RESTART finish on thread 0, and unless it stopped v_0 = r / g[0]
 * (k_gm_scale's expression) into the basis and z = [D^-1] v_0. yw, y: two
 * arrays of m (h2 and col, free at a cycle's end). A stop here leaves kdim 0
 * (gc_restart says why that suits the caller). */
template <bool JAC, int R>
__device__ __forceinline__ void go_restart(int n, int m, int kc, const sps_dev_rows &A, double *V, double *Vs,
                                           gc_cycles cy, const double *dinv, double *z, double *yw, double *y,
                                           double *red, int *flag, sps_kstate &st, sps_gm_state &gs,
                                           const sps_kgm &sm)
{
    const int t = (int)threadIdx.x;
    __syncthreads(); /* H's last column written */
    go_solve<OKT>((int)gs.kdim, m, sm, yw, y, red, GO_RCOL * 32);
    const int kd = (int)gs.kdim;
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = t + k * OKT;
        if (i < n) {
            double s = 0.0;
            for (int q = 0; q < kd; q++) s += go_col<true>(V, (size_t)n, Vs, (size_t)n, kc, q)[i] * y[q];
            const double xi = cy.x[i] + (JAC ? dinv[i] * s : s);
            cy.x[i] = xi;
            z[i] = xi;
        }
    }
    __syncthreads(); /* x complete in z */
    double w[R], v[1] = {0.0};
    go_spmv<R>(A, z, n, w);
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = t + k * OKT;
        w[k] = i < n ? cy.b[i] - w[k] : 0.0;
        v[0] += w[k] * w[k];
    }
    onek_sum<1>(v); /* its barrier: every SpMV read z */
    if (t == 0) {
        sps__gm_finish(SPS_GM_RESTART, &st, &gs, v, sm);
        flag[0] = (int)st.stop;
    }
    __syncthreads();
    if (flag[0]) return;
    go_scale<JAC, OKT, R>(n, 0, sm.g[0], w, V, kc > 0 ? Vs : nullptr, z, dinv);
    __syncthreads(); /* z complete before the next SpMV */
}

template <bool JAC, int R>
__global__ void __launch_bounds__(OKT) k_gm_onekernel(int n, int m, int j0, int kc, const sps_dev_rows A,
                                                      double *V, sps_kgm gg, const double *dinv,
                                                      sps_kstate *gst, sps_gm_state *ggs, double *hist, gc_cycles cy)
{
    extern __shared__ double dyn[];
    __shared__ double red[GO_RCOL * 32];
    __shared__ int flag[2];
    __shared__ sps_kstate st;
    __shared__ sps_gm_state gs;
    const int t = (int)threadIdx.x;
    double *z = dyn, *col = z + n, *h2 = col + (m + 1), *cs = h2 + (m + 1), *sn = cs + m, *g = sn + m;
    double *Vs = g + (m + 1); /* columns 0 .. kc-1 of the basis */
    if (t == 0) {
        st = *gst;
        gs = *ggs;
        flag[0] = (int)st.stop;
    }
    for (int i = t; i < m; i += OKT) cs[i] = gg.cs[i], sn[i] = gg.sn[i];
    for (int i = t; i <= m; i += OKT) g[i] = gg.g[i];
    /* z <- [D^-1] v_j0 */
    const double *v0 = V + (size_t)j0 * (size_t)n;
    for (int i = t; i < n; i += OKT) z[i] = JAC ? dinv[i] * v0[i] : v0[i];
    for (int c = 0; c < kc && c <= j0; c++)
        for (int i = t; i < n; i += OKT) Vs[(size_t)c * (size_t)n + i] = V[(size_t)c * (size_t)n + i];
    __syncthreads();
    if (flag[0]) return; /* the whole block: nothing changed */
    sps_kgm sm = gg;
    sm.cs = cs, sm.sn = sn, sm.g = g, sm.h2 = h2;
    double w[R];
    for (int j = j0, cycle = 1; j < m; j++) {
        /* w <- A z */
        go_spmv<R>(A, z, n, w);
        /* h <- V'w;  w <- w - V h;  the check (thread 0) */
        const size_t ld = (size_t)n;
        go_products<OKT, R, true>(n, j + 1, V, ld, Vs, ld, kc, w, col, red);
        double v1[1] = {go_subtract<OKT, R, true>(n, j + 1, V, ld, Vs, ld, kc, col, w)};
        onek_sum<1>(v1);
        go_finish(SPS_GM_CHECK, j, v1[0], &st, &gs, col, hist, sm, flag);
        if (flag[1]) {
            /* the second pass: h2 <- V'w;  w <- w - V h2;  the Arnoldi step */
            go_products<OKT, R, true>(n, j + 1, V, ld, Vs, ld, kc, w, h2, red);
            double v2[1] = {go_subtract<OKT, R, true>(n, j + 1, V, ld, Vs, ld, kc, h2, w)};
            onek_sum<1>(v2);
            go_finish(SPS_GM_ARNOLDI, j, v2[0], &st, &gs, col, hist, sm, flag);
        }
        /* column j of H is final: rows 0 .. j+1 out */
        double *Hj = gg.H + (size_t)j * (size_t)(m + 1);
        for (int r = t; r <= j + 1; r += OKT) Hj[r] = col[r];
        if (flag[0] || j + 1 == m) {
            /* a full cycle and the state goes on: the restart here, up to
             * cy.max cycles a launch (as the cluster kernel) */
            if (flag[0] || cycle >= cy.max) break;
            go_restart<JAC, R>(n, m, kc, A, V, Vs, cy, dinv, z, h2, col, red, flag, st, gs, sm);
            if (flag[0]) break;
            cycle++;
            j = -1; /* the next cycle's step 0 */
            continue;
        }
        /* v_{j+1} <- w / H[j+1, j] (k_gm_scale's expression);  z <- [D^-1] v_{j+1} */
        go_scale<JAC, OKT, R>(n, 0, gs.hn, w, V + (size_t)(j + 1) * (size_t)n,
                              j + 1 < kc ? Vs + (size_t)(j + 1) * (size_t)n : nullptr, z, dinv);
        __syncthreads(); /* z complete before the next SpMV; col read out before the next products */
    }
    /* the state and the small arrays back (thread 0's writes were published
     * by the finish's barrier) */
    if (t == 0) {
        *gst = st;
        *ggs = gs;
    }
    for (int i = t; i < m; i += OKT) gg.cs[i] = cs[i], gg.sn[i] = sn[i];
    for (int i = t; i <= m; i += OKT) gg.g[i] = g[i];
}

/* K's dynamic shared memory: z and the small arrays (base bytes), then as
 * many basis columns of col bytes as fit (at most maxc; SPS_GM_ONEK_VSHARED=k
 * caps them at k, for tests), set as K's limit; *kc gets the columns. 0 when
 * not even base fits beside K's static shared memory (kernels.cuh's onek_smem
 * for this layout). */
template <typename K>
size_t go_smem(K kernel, size_t base, size_t col, int maxc, int *kc)
{
    int dev = 0, lim = 0;
    cudaFuncAttributes fa;
    *kc = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&lim, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&fa, kernel) != cudaSuccess || base + fa.sharedSizeBytes > (size_t)lim) {
        cudaGetLastError(); /* not an error: the caller refuses */
        return 0;
    }
    size_t room = (size_t)lim - fa.sharedSizeBytes - base, c = room / col;
    const char *v = getenv("SPS_GM_ONEK_VSHARED");
    if (v && *v) {
        char *end = NULL;
        long cap = strtol(v, &end, 10);
        if (end && *end == '\0' && cap >= 0 && (size_t)cap < c) c = (size_t)cap;
    }
    if (c > (size_t)maxc) c = (size_t)maxc;
    const size_t bytes = base + c * col;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    *kc = (int)c;
    return bytes;
}

template <bool JAC, int R>
bool go_launch(cudaStream_t s, int n, int m, int j0, const sps_dev_rows &A, const sps_gm_ws *g,
               const double *dinv, sps_kstate *st, sps_gm_state *gs, double *hist, gc_cycles cy)
{
    const size_t base = ((size_t)n + 5 * (size_t)m + 3) * sizeof(double);
    int kc = 0;
    /* columns 0 .. m-1 are the ones read (v_m is never an operand) */
    const size_t sm = go_smem(k_gm_onekernel<JAC, R>, base, (size_t)n * sizeof(double), m, &kc);
    if (!sm) return false;
    k_gm_onekernel<JAC, R><<<1, OKT, sm, s>>>(n, m, j0, kc, A, g->V, g->gm, dinv, st, gs, hist, cy);
    return true;
}

/* ---- the cluster kernel (gmres.c gm_onekernel with SPS_GM_CLUSTER) ---------
 *
 * k_gm_onekernel over a thread-block cluster of C blocks (one launch per
 * cycle, the steps j = j0 .. m-1; sm_90 and newer). Block r owns the rows
 * lo = r L .. lo + nr - 1 (L = ceil(n / C); the last blocks may own fewer or
 * none); thread t of its B owns the block's rows t + k B (k < R), w in its
 * registers. Its rows of z, of the published w (wb) and of the basis columns
 * 0 .. kc-1 live in its shared memory; the other columns are read from
 * global memory (own rows only); every new column is written through to
 * global memory (the cycle's end, gm_restart, reads V there).
 *
 * Per step, as gm_iterate: w = A z (the SpMV reads other blocks' entries of
 * z through distributed shared memory: their published w divided by hn, times
 * D^-1 with Jacobi, the owner's own expression, so bitwise its z), h = V'w
 * (each block's partials by go_products into P, then after a cluster barrier
 * every block sums the C partials of each column in rank order 0 .. C-1: every
 * block holds bitwise the same h), w -= V h, w'w the same way (P[m + 1]),
 * and thread 0 of every block runs the host's code (sps__gm_column: the
 * check, the rotations, the Arnoldi step) redundantly on identical data, so
 * every block makes the same decisions and no broadcast is needed; block 0
 * writes H's column, the history and, at the end, the state and g, cs, sn.
 * The partials are pushed, not pulled: each block stores its partials of h
 * and of w'w into row `rank` of every block's inbox (remote stores, which do
 * not wait), so that after the barrier each block sums C local rows instead
 * of waiting on C remote loads (H100, poisson2d:63 GMRES(30), clock64 on
 * block 0: the pulled w'w alone took about 2,300 cycles a pass).
 * Two cluster barriers a step (three with the second Gram-Schmidt pass): S1
 * after h's partials (every SpMV of the step has read wb), S2 after w'w's
 * partials, the second pass's partials of h (in the second inbox) and w's
 * publication, S4 after the second pass's w'w (second inbox) and w. A
 * buffer is rewritten only after a barrier that every block passes after its
 * last read of it: the first inbox's h rows after S2 or S4 (the next step's
 * push), its w'w slot after S1 of the next step, the second inbox's after
 * S1 of the next step, wb after S1 (and before S4, which no read of it
 * crosses). The orders depend on n, m, C, B and R only: run to run bitwise the
 * same. */
#define GC_CMAX SPS_GM_CLUSTER_CMAX

/* The dynamic shared memory, in doubles: the state, the flags, the C
 * pointers to each block's wb and inbox, go_products' red (GO_RCOL x B/32),
 * the block sum's warp sums, P (the block's own partials of h), two inboxes
 * (each C rows of m + 2: row r holds block r's partials of h, and of w'w at
 * m + 1; the first pass's, then the second's at gc_in2), column j of H, h2,
 * cs, sn, g, z's and wb's L rows, then kc basis columns of L rows. */
struct gc_lay {
    size_t st, gs, flag, wr, pr, red, sh, P, in, col, h2, cs, sn, g, zl, wb, vv, Vs;
};
__host__ __device__ inline gc_lay gc_layout(int m, int L, int nw, int C, int nd = 0)
{
    gc_lay a;
    size_t o = 0;
    a.st = o, o += (sizeof(sps_kstate) + 7) / 8;
    a.gs = o, o += (sizeof(sps_gm_state) + 7) / 8;
    a.flag = o, o += 1;
    a.wr = o, o += GC_CMAX;
    a.pr = o, o += GC_CMAX;
    a.red = o, o += (size_t)GO_RCOL * (size_t)nw;
    a.sh = o, o += (size_t)nw;
    a.P = o, o += (size_t)m + 1;
    a.in = o, o += 2 * (size_t)C * ((size_t)m + 2); /* the first pass's inbox, then the second's */
    a.col = o, o += (size_t)m + 1;
    a.h2 = o, o += (size_t)m + 1;
    a.cs = o, o += (size_t)m;
    a.sn = o, o += (size_t)m;
    a.g = o, o += (size_t)m + 1;
    a.zl = o, o += (size_t)L;
    a.wb = o, o += (size_t)L;
    a.vv = o, o += (size_t)nd * (size_t)L; /* the DIA view of the block's rows (gc_view) */
    a.Vs = o;
    return a;
}

/* A CSR operator's DIA view (kernels.cuh onek_view_ndiag) for the cluster
 * kernel's SpMV: nd diagonals (0: none, the CSR read as it is), ascending.
 * Each block keeps its L rows' slots, diagonal d of row lo + i at
 * vv[d L + i], zeroed where the CSR has no entry; a row's terms then come
 * in the CSR's order (columns ascending are diagonals ascending), a zero
 * slot adding 0 * z(c): the same sums while z is finite, bitwise but for
 * the sign of a sum that underflowed to -0.0 (made +0.0). */
struct gc_view {
    int nd;
    sps_idx off[SPS_VIEW_DIAGS];
};

/* Row lo + i of the view times the z that x() reads. */
template <class X>
__device__ __forceinline__ double gc_view_row(const double *vv, const sps_idx *off, int nd, int L, int n, int lo,
                                              int i, const X &x)
{
    double s = 0.0;
    for (int d = 0; d < nd; d++) {
        const long long c = (long long)lo + i + off[d];
        if (c >= 0 && c < n) s += vv[(size_t)d * (size_t)L + (size_t)i] * x(c);
    }
    return s;
}

/* The second inbox, after the first (gc_layout). */
__host__ __device__ inline size_t gc_in2(int m, int C) { return (size_t)C * ((size_t)m + 2); }

/* The block's sum of v in a fixed order (warp trees, then the B/32 warp sums
 * by warp 0's tree), the total in thread 0. sh: B/32 doubles; the block must
 * pass a barrier before the next call reuses it. */
template <int B>
__device__ __forceinline__ double gc_sum(double v, double *sh)
{
    constexpr int NW = B / 32;
    const int lane = (int)(threadIdx.x & 31), wid = (int)(threadIdx.x >> 5);
    for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(GO_FULL, v, off);
    if (lane == 0) sh[wid] = v;
    __syncthreads();
    double t = 0.0;
    if (wid == 0) { /* the levels above NW / 2 add zeros (lanes NW..31): left out; a sum of
                       squares is never -0.0, so x + 0 was x */
        t = lane < NW ? sh[lane] : 0.0;
        for (int off = NW >= 32 ? 16 : NW / 2; off > 0; off >>= 1) t += __shfl_down_sync(GO_FULL, t, off);
    }
    return t;
}

/* Row `rank` of every block's inbox (pr[s]: block s's, rows of ld) gets
 * this block's partials P[0 .. ncols-1]: remote stores, which the next
 * cluster barrier makes visible. */
template <int B>
__device__ __forceinline__ void gc_push(int C, int ncols, double *const *pr, int rank, int ld, const double *P,
                                        size_t base = 0)
{
    const int tot = C * ncols;
    for (int e = (int)threadIdx.x; e < tot; e += B) {
        const int r = e / ncols, c = e - r * ncols;
        pr[r][base + rank * ld + c] = P[c];
    }
}

/* out[c] = the inbox's C rows' entries off + c (c < ncols), added in rank
 * order: every block the same sums. */
template <int B>
__device__ __forceinline__ void gc_gather(int C, int ncols, const double *in, int ld, int off, double *out)
{
    for (int c = (int)threadIdx.x; c < ncols; c += B) {
        double s = in[off + c];
        for (int r = 1; r < C; r++) s += in[r * ld + off + c];
        out[c] = s;
    }
}

/* z's entry c for the SpMV: the block's own rows from zl; another block's
 * from its published w (wr[rank]) as that block computes its z: v = w / hn,
 * z = D^-1 v with Jacobi (hn = 1 at the launch's first step, where wb holds
 * v_j0 itself: v / 1 is v exactly). */
template <bool JAC>
struct gc_z {
    const double *zl;
    const double *const *wr;
    const double *dinv;
    double hn;
    int lo, nr, L;
    __device__ __forceinline__ double operator()(long long c) const
    {
        const long long d = c - lo;
        if (d >= 0 && d < nr) return zl[d];
        const int r = (int)(c / L);
        const double v = wr[r][c - (long long)r * L] / hn;
        return JAC ? dinv[c] * v : v;
    }
};

/* The profile (gmres.h sps_gm_prof): in the PROF instantiations thread 0
 * of each block stores clock64() at the step's phase boundaries (slots
 * SPS_GCP_*) into the step's row, the state's iteration count at its start
 * (unique over a solve's launches); none past cap rows. The stores go to
 * global memory and wait for nothing. PROF false: no code. */
struct gc_prof {
    long long *buf;
    int cap;
};
__device__ __forceinline__ long long gc_gtime()
{
#ifdef __CUDA_ARCH__
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return (long long)t;
#else
    return clock64(); /* the CPU emulation's count */
#endif
}
template <bool PROF>
struct gc_marks {
    long long *row = nullptr;
    __device__ __forceinline__ void put(int slot, long long v) const
    {
        if constexpr (PROF)
            if (row) row[slot] = v;
    }
    __device__ __forceinline__ void at(int slot) const
    {
        if constexpr (PROF)
            if (row) row[slot] = clock64();
    }
    __device__ __forceinline__ void end() const
    {
        at(SPS_GCP_END);
        if constexpr (PROF)
            if (row) row[SPS_GCP_GT1] = gc_gtime();
    }
};

/* What gc_restart works on: the block's slice of the rows, the basis
 * (global and shared), x, b, D^-1, the published buffers, the block's shared
 * scratch and the small arrays (sm: H in global memory, column-major, ld
 * m + 1; g, cs, sn in the block's shared memory). */
struct gc_rs {
    int rank, C, m, L, lo, nr, kc;
    double *Vg;
    size_t ldg;
    double *Vs;
    size_t lds;
    double *x;
    const double *b;
    const double *dinv;
    const double *const *wr;
    double *const *pr;
    double *in, *red, *sh, *yw, *y, *wb, *zl;
    int *flag;
    sps_kgm sm;
};

/* The cycle's end and the restart, as gmres.c gm_restart runs them between
 * launches, over the cluster: y = R^-1 g (every block the same, go_solve);
 * x += [D^-1] V y on the block's rows (each row's terms in column order),
 * published in wb; r = b - A x (other blocks' x through distributed shared
 * memory), r'r summed as w'w is (each block's sum pushed to every inbox,
 * added in rank order), the SPS_GM_RESTART finish on thread 0 of every block
 * (the same data: the same decisions); unless it stopped, v_0 = r / g[0]
 * (k_gm_scale's expression) into the basis, published as a step's v_j0 is.
 * Four cluster barriers: R1 after the last column of H, R2 after x, R3
 * after r'r's partials, R4 after v_0. A stop here leaves kdim 0, so the
 * caller's gm_restart then adds nothing to x and its finish does nothing.
 * Inlined (H200, poisson2d:63 GMRES(30), C = 16, us an iteration: 15.37,
 * against 16.37 not inlined, where the kernel took 138 registers and a
 * 496-byte stack frame). */
template <bool JAC, int B, int R>
__device__ __forceinline__ void gc_restart(const gc_rs c, const sps_dev_rows A, sps_kstate *stp, sps_gm_state *gsp)
{
    cg::cluster_group cl = cg::this_cluster();
    sps_kstate &st = *stp;
    sps_gm_state &gs = *gsp;
    const int t = (int)threadIdx.x;
    double w[R];
    cl.sync(); /* R1: block 0's column of H written, every block past its last read of wb and the inbox */
    const int kd = (int)gs.kdim; /* y = R^-1 g (every block the same) */
    go_solve<B>(kd, c.m, c.sm, c.yw, c.y, c.red, GO_RCOL * (B / 32));
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = t + k * B;
        if (i < c.nr) {
            double s = 0.0;
            for (int q = 0; q < kd; q++) s += go_col<false>(c.Vg, c.ldg, c.Vs, c.lds, c.kc, q)[i] * c.y[q];
            const double xi = c.x[c.lo + i] + (JAC ? c.dinv[c.lo + i] * s : s);
            c.x[c.lo + i] = xi;
            c.wb[i] = xi;
            c.zl[i] = xi;
        }
    }
    cl.sync(); /* R2: x published */
    const gc_z<false> xs = {c.zl, c.wr, c.dinv, 1.0, c.lo, c.nr, c.L};
    double rr = 0.0;
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = t + k * B;
        w[k] = i < c.nr ? c.b[c.lo + i] - sps_row_dot(A, c.lo + i, xs) : 0.0;
        rr += w[k] * w[k];
    }
    rr = gc_sum<B>(rr, c.sh);
    if (t == 0)
        for (int r = 0; r < c.C; r++) c.pr[r][c.rank * (c.m + 2) + c.m + 1] = rr;
    cl.sync(); /* R3: r'r's partials in every inbox; x read */
    if (t == 0) {
        gc_gather<B>(c.C, 1, c.in, c.m + 2, c.m + 1, &rr);
        sps__gm_finish(SPS_GM_RESTART, &st, &gs, &rr, c.sm);
        c.flag[0] = (int)st.stop;
    }
    __syncthreads();
    if (c.flag[0]) return;
    const double g0 = c.sm.g[0];
#pragma unroll
    for (int k = 0; k < R; k++) {
        const int i = t + k * B;
        if (i < c.nr) {
            const double v = w[k] / g0;
            c.Vg[i] = v;
            if (c.kc > 0) c.Vs[i] = v;
            c.wb[i] = v;
            c.zl[i] = JAC ? c.dinv[c.lo + i] * v : v;
        }
    }
    cl.sync(); /* R4: v_0 published */
}

/* (B, 1): one block an SM (its shared memory takes the SM anyway); with (B)
 * alone ptxas kept 64 registers and spilled at B = 256 and 512 (44 and 32
 * bytes), the shapes poisson2d:63 takes at C = 16 and 8. */
template <bool JAC, int B, int R, bool PROF = false>
__global__ void __launch_bounds__(B, 1) k_gm_cluster(int n, int m, int j0, int kc, int L, const sps_dev_rows A,
                                                  double *V, sps_kgm gg, const double *dinv, sps_kstate *gst,
                                                  sps_gm_state *ggs, double *hist, gc_prof prof, gc_cycles cy,
                                                  gc_view vw)
{
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
    extern __shared__ double dyn[];
    __shared__ sps_idx voff[SPS_VIEW_DIAGS];
    cg::cluster_group cl = cg::this_cluster();
    const int t = (int)threadIdx.x, rank = (int)cl.block_rank(), C = (int)cl.num_blocks();
    const gc_lay a = gc_layout(m, L, B / 32, C, vw.nd);
    sps_kstate &st = *(sps_kstate *)(dyn + a.st);
    sps_gm_state &gs = *(sps_gm_state *)(dyn + a.gs);
    int *flag = (int *)(dyn + a.flag);
    const double **wr = (const double **)(dyn + a.wr);
    double **pr = (double **)(dyn + a.pr);
    double *red = dyn + a.red, *sh = dyn + a.sh, *P = dyn + a.P, *in = dyn + a.in, *col = dyn + a.col, *h2 = dyn + a.h2;
    double *cs = dyn + a.cs, *sn = dyn + a.sn, *g = dyn + a.g, *zl = dyn + a.zl, *wb = dyn + a.wb;
    double *Vs = dyn + a.Vs;
    const int lo = min(n, rank * L), nr = min(n, lo + L) - lo;
    double *Vg = V + lo; /* the block's rows of the basis in global memory (leading dimension n) */
    const size_t ldg = (size_t)n, lds = (size_t)L;
    if (t == 0) {
        st = *gst;
        gs = *ggs;
        flag[0] = (int)st.stop;
    }
    if (t < C) {
        wr[t] = cl.map_shared_rank(wb, t);
        pr[t] = cl.map_shared_rank(in, t);
    }
    for (int i = t; i < m; i += B) cs[i] = gg.cs[i], sn[i] = gg.sn[i];
    for (int i = t; i <= m; i += B) g[i] = gg.g[i];
    /* z <- [D^-1] v_j0 on the block's rows; v_j0 published for the others */
    const double *v0 = Vg + (size_t)j0 * ldg;
    for (int i = t; i < nr; i += B) {
        const double v = v0[i];
        wb[i] = v;
        zl[i] = JAC ? dinv[lo + i] * v : v;
    }
    for (int c = 0; c < kc && c <= j0; c++)
        for (int i = t; i < nr; i += B) Vs[(size_t)c * lds + i] = Vg[(size_t)c * ldg + i];
    double *vv = dyn + a.vv;
    if (vw.nd) { /* the view: each thread its rows (onek_view_row, stride L) */
        onek_view_offs(vw.off, voff);
        for (int i = t; i < nr; i += B) onek_view_row(A, lo + i, vw.off, vw.nd, vv + i, lds);
    }
    cl.sync(); /* every block started, its rows of v_j0 published */
    if (flag[0]) return; /* every block (the same state): nothing changed */
    sps_kgm sm = gg;
    sm.cs = cs, sm.sn = sn, sm.g = g, sm.h2 = h2;
    double *hs = rank == 0 ? hist : nullptr;
    double hn = 1.0;
    double w[R];
    for (int j = j0, cycle = 1; j < m; j++) {
        gc_marks<PROF> pm;
        if constexpr (PROF)
            if (t == 0 && st.iter >= 0 && st.iter < prof.cap) {
                pm.row = prof.buf + ((size_t)st.iter * GC_CMAX + (size_t)rank) * SPS_GCP_SLOTS;
                pm.put(SPS_GCP_J, j);
                pm.put(SPS_GCP_GT0, gc_gtime());
                pm.at(SPS_GCP_START);
            }
        /* w <- A z */
        const gc_z<JAC> zx = {zl, wr, dinv, hn, lo, nr, L};
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = t + k * B;
            w[k] = i >= nr ? 0.0 : vw.nd ? gc_view_row(vv, voff, vw.nd, L, n, lo, i, zx) : sps_row_dot(A, lo + i, zx);
        }
        pm.at(SPS_GCP_SPMV);
        /* The first Gram-Schmidt pass: h <- V'w (the block's partials, then
         * the C blocks' in rank order), w <- w - V h, w published, w'w the
         * same way, then the check's finish (SPS_GM_CHECK). The second
         * pass's partials (V'w of that w: what the pass would compute) ride
         * with w'w into the second inbox before S2, so the second pass,
         * where the check asks for it, gathers them at once: S1, S2, and S4
         * with the second pass (three cluster barriers where there were
         * four; a step without it computes them for nothing, 17 of 525 on
         * poisson2d:63 GMRES(30)). The same sums in the same order: bitwise
         * the separate pass's h2. */
        const size_t in2 = gc_in2(m, C);
        const int p1 = SPS_GCP_PASS1, p2 = SPS_GCP_PASS2; /* the profile's slots */
        auto publish = [&](double ww, size_t box) {
#pragma unroll
            for (int k = 0; k < R; k++)
                if (t + k * B < nr) wb[t + k * B] = w[k];
            if (t == 0)
                for (int r = 0; r < C; r++) pr[r][box + rank * (m + 2) + m + 1] = ww;
        };
        go_products<B, R>(nr, j + 1, Vg, ldg, Vs, lds, kc, w, P, red);
        pm.at(p1 + SPS_GCP_PRODUCTS);
        gc_push<B>(C, j + 1, pr, rank, m + 2, P);
        pm.at(p1 + SPS_GCP_PUSH);
        cl.sync(); /* S1 */
        pm.at(p1 + SPS_GCP_S1);
        gc_gather<B>(C, j + 1, in, m + 2, 0, col);
        __syncthreads();
        pm.at(p1 + SPS_GCP_GATHER);
        double ww = gc_sum<B>(go_subtract<B, R>(nr, j + 1, Vg, ldg, Vs, lds, kc, col, w), sh);
        pm.at(p1 + SPS_GCP_SUBTRACT);
        go_products<B, R>(nr, j + 1, Vg, ldg, Vs, lds, kc, w, P, red); /* the second pass's */
        gc_push<B>(C, j + 1, pr, rank, m + 2, P, in2);
        publish(ww, 0);
        pm.at(p1 + SPS_GCP_PUBLISH);
        cl.sync(); /* S2 */
        pm.at(p1 + SPS_GCP_S2);
        if (t == 0) gc_gather<B>(C, 1, in, m + 2, m + 1, &ww);
        go_finish(SPS_GM_CHECK, j, ww, &st, &gs, col, hs, sm, flag);
        pm.at(p1 + SPS_GCP_FINISH);
        if (flag[1]) { /* the second pass where it is due: its partials are in */
            pm.put(SPS_GCP_REORTH, 1);
            pm.at(p2 + SPS_GCP_PRODUCTS); /* computed in the first pass's publish */
            pm.at(p2 + SPS_GCP_PUSH);
            pm.at(p2 + SPS_GCP_S1);
            gc_gather<B>(C, j + 1, in + in2, m + 2, 0, h2);
            __syncthreads();
            pm.at(p2 + SPS_GCP_GATHER);
            ww = gc_sum<B>(go_subtract<B, R>(nr, j + 1, Vg, ldg, Vs, lds, kc, h2, w), sh);
            pm.at(p2 + SPS_GCP_SUBTRACT);
            publish(ww, in2);
            pm.at(p2 + SPS_GCP_PUBLISH);
            cl.sync(); /* S4 */
            pm.at(p2 + SPS_GCP_S2);
            if (t == 0) gc_gather<B>(C, 1, in + in2, m + 2, m + 1, &ww);
            go_finish(SPS_GM_ARNOLDI, j, ww, &st, &gs, col, hs, sm, flag);
            pm.at(p2 + SPS_GCP_FINISH);
        }
        /* column j of H is final: rows 0 .. j+1 out */
        if (rank == 0) {
            double *Hj = gg.H + (size_t)j * (size_t)(m + 1);
            for (int r = t; r <= j + 1; r += B) Hj[r] = col[r];
        }
        pm.at(SPS_GCP_HCOL);
        if (flag[0] || j + 1 == m) {
            pm.end();
            /* The cycle is full and the state goes on: its end and the
             * restart here (gc_restart), up to cy.max cycles a launch; else
             * the caller's. Within the steps' loop: a loop of cycles around
             * it cost the steps registers and time (H200, poisson2d:63
             * GMRES(30), C = 16, one cycle a launch: 18.1 us an iteration
             * against 17.1). */
            if (flag[0] || cycle >= cy.max) break;
            gc_restart<JAC, B, R>(gc_rs{rank, C, m, L, lo, nr, kc, Vg, ldg, Vs, lds, cy.x, cy.b, dinv, wr, pr, in,
                                        red, sh, h2, col, wb, zl, flag, sm},
                                  A, &st, &gs);
            if (flag[0]) break;
            hn = 1.0; /* wb holds v_0 itself */
            cycle++;
            j = -1; /* the next cycle's step 0 */
            continue;
        }
        /* v_{j+1} <- w / H[j+1, j] (k_gm_scale's expression);  z <- [D^-1] v_{j+1} */
        hn = gs.hn;
        go_scale<JAC, B, R>(nr, lo, hn, w, Vg + (size_t)(j + 1) * ldg, j + 1 < kc ? Vs + (size_t)(j + 1) * lds : nullptr,
                            zl, dinv);
        __syncthreads(); /* zl complete before the next SpMV; col read out */
        pm.end();
    }
    if (rank == 0) {
        if (t == 0) {
            *gst = st;
            *ggs = gs;
        }
        for (int i = t; i < m; i += B) gg.cs[i] = cs[i], gg.sn[i] = sn[i];
        for (int i = t; i <= m; i += B) gg.g[i] = g[i];
    }
    cl.sync(); /* no block leaves while another may read its shared memory (the last w'w) */
#endif
}
/* ---- end of the cluster kernel */

/* 1: k_gm_cluster launched over a cluster of C blocks of B threads; 0: it
 * cannot run here (before sm_90, not built for sm_90, its shared memory or
 * the cluster does not fit: nothing changed, the caller falls back); -1: the
 * launch failed (*ce). kc: as many basis columns in shared memory as fit (at
 * most m; SPS_GM_CLUSTER_VSHARED=k caps them, for tests: bitwise the same). */
template <bool JAC, int B, int R, bool PROF = false>
int gc_launch(cudaStream_t s, int C, int n, int m, int j0, int L, const sps_dev_rows &A, const sps_gm_ws *g,
              const double *dinv, sps_kstate *st, sps_gm_state *gs, double *hist, cudaError_t *ce, gc_cycles cy,
              gc_prof prof = {nullptr, 0})
{
    void (*kern)(int, int, int, int, int, const sps_dev_rows, double *, sps_kgm, const double *, sps_kstate *,
                 sps_gm_state *, double *, gc_prof, gc_cycles, gc_view) = k_gm_cluster<JAC, B, R, PROF>;
    int dev = 0, lim = 0, major = 0;
    cudaFuncAttributes fa;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess || major < 9 ||
        cudaDeviceGetAttribute(&lim, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        cudaFuncGetAttributes(&fa, kern) != cudaSuccess || fa.binaryVersion < 90) {
        cudaGetLastError(); /* not an error: the caller falls back */
        return 0;
    }
    gc_view vw = {};
    vw.nd = onek_view_ndiag(A);
    if (vw.nd && gc_layout(m, L, B / 32, C, vw.nd).Vs * sizeof(double) + fa.sharedSizeBytes > (size_t)lim) vw.nd = 0;
    for (int d = 0; d < vw.nd; d++) vw.off[d] = A.view_off[d];
    const size_t base = gc_layout(m, L, B / 32, C, vw.nd).Vs * sizeof(double), colb = (size_t)L * sizeof(double);
    if (base + fa.sharedSizeBytes > (size_t)lim) return 0;
    size_t c = ((size_t)lim - fa.sharedSizeBytes - base) / colb;
    const char *v = getenv("SPS_GM_CLUSTER_VSHARED");
    if (v && *v) {
        char *end = NULL;
        long cap = strtol(v, &end, 10);
        if (end && *end == '\0' && cap >= 0 && (size_t)cap < c) c = (size_t)cap;
    }
    if (c > (size_t)m) c = (size_t)m;
    const size_t bytes = base + c * colb;
    if (cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess ||
        (C > 8 && cudaFuncSetAttribute(kern, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)) {
        cudaGetLastError();
        return 0;
    }
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1] = {};
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = (unsigned)C;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.gridDim = dim3((unsigned)C);
    cfg.blockDim = dim3(B);
    cfg.dynamicSmemBytes = bytes;
    cfg.stream = s;
    cfg.attrs = at;
    cfg.numAttrs = 1;
    int ncl = 0;
    if (cudaOccupancyMaxActiveClusters(&ncl, kern, &cfg) != cudaSuccess || ncl < 1) {
        cudaGetLastError(); /* the cluster cannot be scheduled: not an error */
        return 0;
    }
    *ce = cudaLaunchKernelEx(&cfg, kern, n, m, j0, (int)c, L, A, g->V, g->gm, dinv, st, gs, hist, prof, cy, vw);
    return *ce == cudaSuccess ? 1 : -1;
}

} /* namespace */

/* One instantiation's launcher (gmres_onek.h's prototypes). */
#define SPS_GM_ONEK_DEFINE(name, jac, r)                                                          \
    extern "C" int name(cudaStream_t s, int n, int m, int j0, const sps_dev_rows *A, const sps_gm_ws *g, \
                        const double *dinv, sps_kstate *st, sps_gm_state *gs, double *hist, int cycles, \
                        double *xv, const double *bv)                                             \
    {                                                                                             \
        return go_launch<jac, r>(s, n, m, j0, *A, g, dinv, st, gs, hist, gc_cycles{cycles, xv, bv}); \
    }
#define SPS_GM_CLUSTER_DEFINE(name, jac, b, r)                                                     \
    extern "C" int name(cudaStream_t s, int C, int n, int m, int j0, int L, const sps_dev_rows *A,  \
                        const sps_gm_ws *g, const double *dinv, sps_kstate *st, sps_gm_state *gs,  \
                        double *hist, cudaError_t *ce, int cycles, double *xv, const double *bv)     \
    {                                                                                              \
        return gc_launch<jac, b, r>(s, C, n, m, j0, L, *A, g, dinv, st, gs, hist, ce,              \
                                    gc_cycles{cycles, xv, bv});                                    \
    }
/* The profiling instantiation's launcher (gmres_onek.h SPS_GM_CLUSTER_PROF_DECL). */
#define SPS_GM_CLUSTER_PROF_DEFINE(name, b)                                                        \
    extern "C" int name(cudaStream_t s, int C, int n, int m, int j0, int L, const sps_dev_rows *A,  \
                        const sps_gm_ws *g, sps_kstate *st, sps_gm_state *gs, double *hist,        \
                        cudaError_t *ce, long long *buf, int cap)                                  \
    {                                                                                              \
        return gc_launch<false, b, 1, true>(s, C, n, m, j0, L, *A, g, nullptr, st, gs, hist, ce,   \
                                            gc_cycles{1, nullptr, nullptr}, gc_prof{buf, cap});    \
    }

#endif /* SPS_GMRES_ONEK_CUH */
