/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres_kernels.cu: GMRES's operations on the GPU (the
 * same operations as gmres_host.c, which is their specification).
 *
 * The Gram-Schmidt passes are our own GEMV kernels on the column-major basis
 * (transposed for h = V'w, then w -= V h). The Givens rotations are inherently
 * a recurrence: the finish block runs it as a scan (rotate_scan). The
 * triangular solve, once per cycle, is one block; the update x += V y reads
 * kdim from the state (the host does not know it). DCGS2 (gmres:orth=dcgs2)
 * has two kernels of its own, k_dp and k_dc ("the delayed products"). */
#include "../kernels.cuh"
#include "gmres.h"
#include "gmres_onek.h"

#include <cooperative_groups.h>
#include <stdlib.h>
#include <string.h>

namespace cg = cooperative_groups;

namespace {

/* The previous rotations 0..j-1 on column j with the whole block.
 * sps__gm_rotate's recurrence carries one value from rotation to rotation:
 * carry' = -s_i carry + c_i col[i+1], an affine map of carry. One thread ran
 * it in 17 ns a rotation on an H100 (j = 1500: 26 us per Arnoldi step), so
 * here each thread composes the maps of its own run of rotations, a fixed
 * Hillis-Steele scan over the block composes the runs, and each thread then
 * replays its run from its starting carry. The rounding differs from the
 * host's sequential loop (tests compare within 1e-11); the runs depend only
 * on j and the block size, so the result is run to run bitwise the same. A
 * run's last rotation reads the next run's first row, which that run
 * overwrites: it is read before the scan's barriers (edge). Returns the
 * rotated row j (before its own rotation) in every thread. */
__device__ double rotate_scan(double *col, const double *cs, const double *sn, int64_t j)
{
    __shared__ double sA[TPB], sB[TPB];
    const int t = (int)threadIdx.x;
    const int64_t L = (j + TPB - 1) / TPB;
    const int64_t lo = t * L < j ? t * L : j, hi = lo + L < j ? lo + L : j;
    const double carry0 = col[0], edge = hi > lo ? col[hi] : 0.0;
    double A = 1.0, B = 0.0; /* carry at hi = A * (carry at lo) + B */
    for (int64_t i = lo; i < hi; i++) {
        const double a = -sn[i], b = cs[i] * col[i + 1];
        A = a * A;
        B = a * B + b;
    }
    sA[t] = A;
    sB[t] = B;
    __syncthreads();
    for (int d = 1; d < TPB; d <<= 1) { /* inclusive: runs 0..t composed */
        double pa = 1.0, pb = 0.0;
        if (t >= d) pa = sA[t - d], pb = sB[t - d];
        __syncthreads();
        if (t >= d) {
            const double a = sA[t], b = sB[t];
            sA[t] = a * pa;
            sB[t] = a * pb + b;
        }
        __syncthreads();
    }
    double carry = t == 0 ? carry0 : sA[t - 1] * carry0 + sB[t - 1];
    for (int64_t i = lo; i < hi; i++) {
        const double c = cs[i], s = sn[i], next = i + 1 == hi ? edge : col[i + 1];
        col[i] = c * carry + s * next;
        carry = -s * carry + c * next;
    }
    return sA[TPB - 1] * carry0 + sB[TPB - 1];
}

/* The Arnoldi step on column j, whose entries 0..j are final: the previous
 * rotations, then sps__gm_arnoldi (thread 0) with hn = ||w|| and hsq = ||h||^2
 * (totals in thread 0). */
__device__ void arnoldi_rotate(int64_t j, sps_kstate *st, sps_gm_state *gs, double ww, double hsq,
                               double *hist, sps_kgm gm)
{
    double *col = gm.H + j * (gs->m + 1);
    const double a = rotate_scan(col, gm.cs, gm.sn, j);
    __syncthreads(); /* every row rotated before thread 0 writes rows j, j + 1 */
    if (threadIdx.x == 0) sps__gm_arnoldi(st, gs, j, a, sqrt(ww), hsq, hist, gm);
}

/* SPS_GM_CHECK and SPS_GM_ARNOLDI with the whole block (gmres_host.c's
 * h_gm_finish): ||h||^2 of column j (after adding the second pass's h2, for
 * ARNOLDI), the check's decision, the Arnoldi step. */
__device__ void arnoldi_block(int step, int64_t j, sps_kstate *st, sps_gm_state *gs,
                              const double *v, double *hist, sps_kgm gm)
{
    const int check = step == SPS_GM_CHECK;
    if (!check && !gs->reorth) return; /* the whole block reads the check's flag */
    double *col = gm.H + j * (gs->m + 1);
    double hsq[1] = {0.0};
    for (int64_t i = threadIdx.x; i <= j; i += TPB) {
        double h = check ? col[i] : col[i] + gm.h2[i];
        if (!check) col[i] = h;
        hsq[0] += h * h;
    }
    block_sum<1>(hsq); /* its barriers also publish the col[] writes */
    __shared__ int second;
    if (threadIdx.x == 0) {
        second = check ? (int)sps__gm_reorth(v[0], hsq[0]) : 0;
        if (check) gs->reorth = second;
    }
    __syncthreads();
    if (!second) arnoldi_rotate(j, st, gs, v[0], hsq[0], hist, gm);
}

/* GMRES's finish steps: the check and the Arnoldi step with the whole block,
 * the others on thread 0. */
struct gm_fin {
    int step;
    int64_t j;
    sps_kstate *st;
    sps_gm_state *gs;
    double *hist;
    sps_kgm gm;
    __device__ void operator()(const double *v) const
    {
        if (step == SPS_GM_ARNOLDI || step == SPS_GM_CHECK) arnoldi_block(step, j, st, gs, v, hist, gm);
        else if (threadIdx.x == 0) sps__gm_finish(step, st, gs, v, gm);
    }
};

__global__ void __launch_bounds__(TPB) k_gm_scale(int n, int64_t j, const double *src,
                                                  double *V, const sps_kstate *st,
                                                  const sps_gm_state *gs, sps_kgm gm)
{
    if (st->stop) return;
    const double d = j < 0 ? gm.g[0] : gs->hn;
    double *dst = V + (j + 1) * (int64_t)n;
    GRID_STRIDE(i, n) dst[i] = src[i] / d;
}

/* sps__gm_solve (gmres_state.h) on one block: the k steps of the back
 * substitution are sequential, each step's column update is parallel. A
 * single thread took ~60 ms per cycle of GMRES(2000) on an H100 (2M dependent
 * global loads); this takes k block-wide barriers. */
__global__ void __launch_bounds__(1024) k_gm_solve(const sps_gm_state *gs, sps_kgm gm)
{
    const int64_t k = gs->kdim, ld = gs->m + 1;
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
    if (gs->orth != SPS_GM_ORTH_DCGS2) return;
    /* DCGS2: y <- U y, a thread a row, each row's sum in the host's order,
     * through h2 (every row reads the others' y first) */
    for (int64_t i = threadIdx.x; i < k; i += blockDim.x) {
        double t = gm.y[i];
        for (int64_t l = i + 1; l < k; l++) t += gm.U[l * (l - 1) / 2 + i] * gm.y[l];
        gm.h2[i] = t;
    }
    __syncthreads();
    for (int64_t i = threadIdx.x; i < k; i += blockDim.x) gm.y[i] = gm.h2[i];
}

/* Gram-Schmidt's two products, ours rather than cuBLAS's gemv: the first
 * cuBLAS call of a process loads its kernels, about 50 ms that every GMRES
 * solve from the CLI paid in its setup (H100: GMRES on fs_541_1 took 52 ms
 * for 6 iterations, BiCGSTAB 4.4 ms). Both are deterministic: fixed-order
 * sums.
 *
 * part[j * P + b] = sum over block b's rows (i = b*TPB + t, stepping P*TPB)
 * of V[i, j] x[i], reduced in the block by a fixed tree. */
__global__ void __launch_bounds__(TPB) k_gemv_t_part(int n, int P, const double *__restrict__ V,
                                                     const double *__restrict__ x, double *part,
                                                     const sps_gm_state *gate)
{
    if (gate && !gate->reorth) return;
    __shared__ double sm[TPB];
    const int64_t j = blockIdx.y;
    const double *col = V + j * (int64_t)n;
    double s = 0.0;
#pragma unroll 8
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < n; i += (int64_t)P * TPB)
        s += col[i] * x[i];
    sm[threadIdx.x] = s;
    __syncthreads();
    for (int h = TPB / 2; h > 0; h >>= 1) {
        if (threadIdx.x < h) sm[threadIdx.x] += sm[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[j * P + blockIdx.x] = sm[0];
}

/* h[j] = the sum of column j's P partials, in order. */
__global__ void k_gemv_t_sum(int ncols, int P, const double *__restrict__ part, double *h,
                             const sps_gm_state *gate)
{
    if (gate && !gate->reorth) return;
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < ncols; j += gridDim.x * blockDim.x) {
        double s = 0.0;
        for (int b = 0; b < P; b++) s += part[(int64_t)j * P + b];
        h[j] = s;
    }
}

/* The basis products x -/+= V y. One thread per row summing all m columns
 * left an H100 mostly idle for a few thousand rows and a long basis (GMRES(2000)
 * on lns_3937, 3937 rows: 1621 ms of iterations, 389 with cuBLAS). A block is
 * 32 rows (threadIdx.x, the lane) by W warps (threadIdx.y) that split the
 * columns: warp w sums columns w, w + W, ... in order (loads stay coalesced
 * down a column), and warp 0 adds the W partials in warp order. W depends only
 * on the column count (gm_warps), so the order is fixed: run to run bitwise
 * the same. */
#define GM_MAXW 32
static unsigned gm_warps(int64_t ncols)
{
    unsigned w = 1;
    while (w < GM_MAXW && (int64_t)w * 32 < ncols) w *= 2;
    return w;
}
static dim3 gm_rows_grid(int64_t n) { return dim3((unsigned)((n + 31) / 32)); }

__device__ __forceinline__ double gm_rows_dot(int n, int64_t ncols, const double *__restrict__ V,
                                              const double *__restrict__ y, int64_t *row)
{
    __shared__ double sm[GM_MAXW][32];
    const int lane = (int)threadIdx.x, wp = (int)threadIdx.y, W = (int)blockDim.y;
    const int64_t i = (int64_t)blockIdx.x * 32 + lane;
    double s = 0.0;
    if (i < n)
#pragma unroll 8
        for (int64_t c = wp; c < ncols; c += W) s += V[i + c * (int64_t)n] * y[c];
    sm[wp][lane] = s;
    __syncthreads();
    double t = sm[0][lane];
    for (int k = 1; k < W; k++) t += sm[k][lane];
    *row = wp == 0 && i < n ? i : -1;
    return t;
}

/* x[i] -= sum_j V[i, j] h[j]. */
__global__ void __launch_bounds__(32 * GM_MAXW) k_gemv_n(int n, int ncols, const double *__restrict__ V,
                                                          const double *__restrict__ h, double *x,
                                                          const sps_gm_state *gate)
{
    if (gate && !gate->reorth) return;
    int64_t i;
    const double s = gm_rows_dot(n, ncols, V, h, &i);
    if (i >= 0) x[i] -= s;
}

/* The products since issue 9 (make run iterated 84 us per step on the H100,
 * the two products reading about 0.75 TB/s). Same determinism rule: every
 * sum runs in an order fixed by n and the column count only.
 *
 * h = V'w: one warp per (column, row chunk). Lane l sums rows r0 + l, + 32,
 * ... of its chunk in order, GT_U loads of V and of w in flight (V through
 * L2 only, __ldcg, so that L1 keeps w's chunk for the block's other warps),
 * then the warp's fixed shuffle tree. One chunk (C = 1): the warp writes h[j]
 * itself, one kernel; else the partials part[j * C + chunk] and k_gt_sum
 * adds each column's C partials (one warp, lanes strided, the same tree).
 * Fused (cnt != NULL, SPS_GM_FUSE unset or 1): no k_gt_sum; column j's
 * warps take tickets on cnt[j] once their partial is out, and the warp with
 * the last ticket adds the C partials as k_gt_sum does (gt_col_sum: the
 * same h bitwise, whichever warp comes last) and puts cnt[j] back to 0.
 * Warp order: chunk-major, the columns from the last: w -= V h walks the
 * columns upwards, so the columns it read last, still in L2 when the basis
 * does not fit there, are read first. */
#define GT_U 16
#define GT_TW 1024 /* the warps the default plan aims at (about 8 an SM) */

#define GM_FULL 0xffffffffu

/* h[j] = column j's C partials (k_gt_sum's order): lane l adds partials l,
 * l + 32, ... in order, then the shuffle tree. ldcg: the partials of other
 * blocks of the same launch, through L2. */
__device__ __forceinline__ double gt_col_sum(const double *part, int64_t j, int C, bool ldcg)
{
    const int lane = (int)(threadIdx.x & 31);
    double s = 0.0;
    for (int b = lane; b < C; b += 32) s += ldcg ? __ldcg(part + j * C + b) : part[j * C + b];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(GM_FULL, s, off);
    return s;
}

/* The last-ticket rule of the fused kernels: after its writes, lane 0 of
 * the warp fences them and takes a ticket on *cnt; true in every lane of the
 * warp that drew ticket `last` (which then resets *cnt for the next launch
 * and sees every other taker's writes). */
__device__ __forceinline__ bool gm_last_ticket(unsigned *cnt, unsigned last)
{
    unsigned t = 0;
    __threadfence();
    if ((threadIdx.x & 31) == 0) t = atomicAdd(cnt, 1u);
    t = __shfl_sync(GM_FULL, t, 0);
    if (t != last) return false;
    __threadfence();
    if ((threadIdx.x & 31) == 0) *cnt = 0u;
    return true;
}

template <int U>
__global__ void __launch_bounds__(TPB) k_gt(int n, int ncols, int R, int C, const double *__restrict__ V,
                                            const double *__restrict__ x, double *__restrict__ out,
                                            const sps_gm_state *gate, double *h, unsigned *cnt)
{
    if (gate && !gate->reorth) return;
    const int lane = (int)(threadIdx.x & 31);
    const int64_t wid = (int64_t)blockIdx.x * (TPB / 32) + (threadIdx.x >> 5);
    if (wid >= (int64_t)ncols * C) return; /* whole warps */
    const int chunk = (int)(wid / ncols);
    const int j = ncols - 1 - (int)(wid - (int64_t)chunk * ncols);
    const int64_t r1 = min((int64_t)n, (int64_t)(chunk + 1) * R);
    const double *col = V + (int64_t)j * n;
    double s = 0.0;
    int64_t i = (int64_t)chunk * R + lane;
    for (; i + 32 * (U - 1) < r1; i += 32 * U) { /* whole batches: the loads first */
        double a[U], b[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            a[u] = __ldcg(col + i + 32 * u);
            b[u] = __ldg(x + i + 32 * u);
        }
#pragma unroll
        for (int u = 0; u < U; u++) s += a[u] * b[u];
    }
    if (i < r1) { /* the lane's last rows, in the same order */
        double a[U], b[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int64_t k = i + 32 * u;
            a[u] = k < r1 ? __ldcg(col + k) : 0.0;
            b[u] = k < r1 ? __ldg(x + k) : 0.0;
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            if (i + 32 * u < r1) s += a[u] * b[u];
    }
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) out[(int64_t)j * C + chunk] = s;
    if (!cnt || !gm_last_ticket(cnt + j, (unsigned)C - 1u)) return;
    s = gt_col_sum(out, j, C, true);
    if (lane == 0) h[j] = s;
}

/* h[j] = column j's C partials (gt_col_sum). */
__global__ void __launch_bounds__(TPB) k_gt_sum(int ncols, int C, const double *__restrict__ part,
                                                double *h, const sps_gm_state *gate)
{
    if (gate && !gate->reorth) return;
    const int64_t j = (int64_t)blockIdx.x * (TPB / 32) + (threadIdx.x >> 5);
    if (j >= ncols) return;
    const double s = gt_col_sum(part, j, C, false);
    if ((threadIdx.x & 31) == 0) h[j] = s;
}

/* x -= V h on tiles of 32 * RPL rows by K columns: lane l holds rows
 * i0 + l + 32 r (r < RPL), each of the W warps (threadIdx.y) sums the columns
 * c0 + w, + W, ... of its tile in order, GN_U columns in flight (RPL * GN_U
 * loads: a warp reads RPL * 256 contiguous bytes of a column), warp 0 adds
 * the W sums in warp order. One column tile: x[i] -= that; else the tile's
 * sums go to part[tile * n + i] and k_gn_sum adds the tiles in order. */
#define GN_U 8
#define GN_RPL 2
#define GN_MAXW 8

/* Warp wp's (of W) sums over columns c0 + wp, + W, ... < c1 of the lane's
 * rows i0 + 32 r (r < RPL) into s (k_gn's order; the fused kernel's too). */
template <int RPL>
__device__ __forceinline__ void gn_sums(int n, int c0, int c1, int wp, int W, int64_t i0,
                                        const double *__restrict__ V, const double *__restrict__ h,
                                        double (&s)[RPL])
{
#pragma unroll
    for (int r = 0; r < RPL; r++) s[r] = 0.0;
    int c = c0 + wp;
    if (i0 + 32 * (RPL - 1) < n) /* all the lane's rows: whole batches, the loads first */
        for (; c + W * (GN_U - 1) < c1; c += W * GN_U) {
            double a[GN_U][RPL], b[GN_U];
#pragma unroll
            for (int u = 0; u < GN_U; u++) {
                const double *p = V + (int64_t)(c + u * W) * n + i0;
                b[u] = __ldg(h + c + u * W);
#pragma unroll
                for (int r = 0; r < RPL; r++) a[u][r] = __ldcg(p + 32 * r);
            }
#pragma unroll
            for (int u = 0; u < GN_U; u++)
#pragma unroll
                for (int r = 0; r < RPL; r++) s[r] += a[u][r] * b[u];
        }
    for (; c < c1; c += W * GN_U) { /* the rest, in the same order */
        double a[GN_U][RPL], b[GN_U];
#pragma unroll
        for (int u = 0; u < GN_U; u++) {
            const int cc = c + u * W;
            const bool ok = cc < c1;
            const double *p = V + (int64_t)(ok ? cc : c0) * n;
            b[u] = ok ? __ldg(h + cc) : 0.0;
#pragma unroll
            for (int r = 0; r < RPL; r++) {
                const int64_t i = i0 + 32 * r;
                a[u][r] = ok && i < n ? __ldcg(p + i) : 0.0;
            }
        }
#pragma unroll
        for (int u = 0; u < GN_U; u++) {
            if (c + u * W >= c1) continue;
#pragma unroll
            for (int r = 0; r < RPL; r++) s[r] += a[u][r] * b[u];
        }
    }
}

/* Row lane + 32 r's total over the W warps' sums, in warp order. */
template <int RPL>
__device__ __forceinline__ double gn_row_total(const double (*sm)[32 * RPL], int W, int lane, int r)
{
    double t = sm[0][lane + 32 * r];
    for (int k = 1; k < W; k++) t += sm[k][lane + 32 * r];
    return t;
}

template <int RPL>
__global__ void __launch_bounds__(32 * GN_MAXW) k_gn(int n, int ncols, int K, const double *__restrict__ V,
                                                    const double *__restrict__ h, double *x, double *part,
                                                    const sps_gm_state *gate)
{
    if (gate && !gate->reorth) return;
    __shared__ double sm[GN_MAXW][32 * RPL];
    const int lane = (int)threadIdx.x, wp = (int)threadIdx.y, W = (int)blockDim.y;
    const int64_t i0 = (int64_t)blockIdx.x * (32 * RPL) + lane;
    const int c0 = (int)blockIdx.y * K, c1 = min(ncols, c0 + K);
    double s[RPL];
    gn_sums<RPL>(n, c0, c1, wp, W, i0, V, h, s);
#pragma unroll
    for (int r = 0; r < RPL; r++) sm[wp][lane + 32 * r] = s[r];
    __syncthreads();
    if (wp != 0) return;
#pragma unroll
    for (int r = 0; r < RPL; r++) {
        const int64_t i = i0 + 32 * r;
        if (i >= n) continue;
        const double t = gn_row_total<RPL>(sm, W, lane, r);
        if (part) part[(int64_t)blockIdx.y * n + i] = t;
        else x[i] -= t;
    }
}

/* x[i] -= the CT tiles' sums of row i, in tile order. */
__global__ void __launch_bounds__(TPB) k_gn_sum(int n, int CT, const double *__restrict__ part, double *x,
                                                const sps_gm_state *gate)
{
    if (gate && !gate->reorth) return;
    GRID_STRIDE(i, n)
    {
        double t = 0.0;
        for (int k = 0; k < CT; k++) t += part[(int64_t)k * n + i];
        x[i] -= t;
    }
}

/* The basis entries gm_bench times on. The columns below `small` are scaled
 * by 1e-3 / sqrt(n) (op 4, DCGS2: the products with V_j stay below its norm). */
__global__ void k_bench_fill(int64_t n, int64_t ncols, double *V, int64_t small)
{
    const int64_t tot = n * ncols;
    const double sc = 1e-3 / sqrt((double)n);
    for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; e < tot; e += (int64_t)gridDim.x * blockDim.x)
        V[e] = sps__gm_bench_val((uint64_t)(e % n), (uint64_t)(e / n)) * (e / n < small ? sc : 1.0);
}

/* MODE 0: x += V y;  1: x += dinv .* (V y);  2: u = V y. */
template <int MODE>
__global__ void __launch_bounds__(32 * GM_MAXW) k_gm_update(int n, double *x, const double *dinv,
                                                             double *u, const double *V,
                                                             const sps_gm_state *gs, const double *y)
{
    int64_t i;
    const double s = gm_rows_dot(n, gs->kdim, V, y, &i);
    if (i < 0) return;
    if constexpr (MODE == 2) u[i] = s;
    else if constexpr (MODE == 1) x[i] += dinv[i] * s;
    else x[i] += s;
}


/* ---- the fused products (gm_ops gemv_n_fin) ---------------------------------
 *
 * One Gram-Schmidt pass's end in one launch: x -= V h (k_gn's tiles and
 * sums), then x'x, the finish step (SPS_GM_CHECK or SPS_GM_ARNOLDI:
 * arnoldi_block, as c_gm_finish's kernel runs it) and the scale v_{j+1} =
 * x / hn, which were four kernels (k_gn_sum, the vops dot, its finish,
 * k_gm_scale), each about 3.5 to 10 us on the H100 for make run's 3937 rows.
 * The blocks are 256 threads in one dimension (warps past k_gn's W idle in
 * the product), so the last block has the finish's shape. The order stays
 * fixed whichever block ends last:
 *  - a row tile of several column tiles: its blocks put their sums in the
 *    partials and take tickets on the tile's counter; the last adds the
 *    tiles in tile order, as k_gn_sum does (x bitwise as before);
 *  - the block that completes a row tile (the only one where the columns are
 *    one tile) sums its rows' x_i^2 (rows in order per lane, then the warp's
 *    shuffle tree) into wwp[tile] and takes a ticket on the tiles' counter;
 *  - the last of those adds wwp in a fixed order (thread t: tiles t, t + 256,
 *    ..., then block_sum), runs the finish and, where the step was made and
 *    n <= SPS_GM_FUSE_SCALE_ROWS, the scale (one block: 16 rows a thread for
 *    make run; above the bound the scale is k_gm_scale as before).
 * x'x so has another summation tree than the vops dot (which the host path
 * and SPS_GM_FUSE=0 keep): deterministic, not bitwise the dot's. */
#define SPS_GM_FUSE_SCALE_ROWS 16384
#define GN_SCALE_U 8 /* rows of the scale in flight a thread (make run: 16 a thread, two batches) */
static_assert(32 * GN_MAXW == TPB, "the fused products' last block runs the finish (TPB threads)");

struct gn_tail {
    double *wwp;     /* the row tiles' x'x */
    unsigned *tcnt;  /* a counter a row tile (several column tiles) */
    unsigned *done;  /* the row tiles completed */
    int step, gated; /* the finish step (SPS_GM_CHECK or SPS_GM_ARNOLDI), gated on stop */
    int64_t j;       /* the Arnoldi column */
    int64_t sj;      /* >= 0: V[:, sj + 1] = x / hn once the step is made; -1: not here */
    sps_kstate *st;
    sps_gm_state *gs;
    double *hist;
    sps_kgm gm;
    double *V;
};

/* Warp 0: the block's rows of x (at once with one column tile, else by the
 * row tile's last block), then that tile's x'x and the ticket on the tiles'
 * counter. Returns (in every lane) whether this block is the last of all. */
template <int RPL>
__device__ __forceinline__ bool gn_tile_end(int n, int W, int64_t i0, const double (*sm)[32 * RPL], double *x,
                                            double *part, const gn_tail &tl)
{
    const int lane = (int)(threadIdx.x & 31), CT = (int)gridDim.y;
    double xv[RPL];
    if (CT > 1) {
#pragma unroll
        for (int r = 0; r < RPL; r++)
            if (i0 + 32 * r < n) part[(int64_t)blockIdx.y * n + i0 + 32 * r] = gn_row_total<RPL>(sm, W, lane, r);
        if (!gm_last_ticket(tl.tcnt + blockIdx.x, (unsigned)CT - 1u)) return false;
    }
    /* the tiles' sums of the lane's rows, every load issued before the adds
     * (one warp on the critical path: a load a step would wait L2's latency
     * CT times), then added in tile order as k_gn_sum does */
#pragma unroll
    for (int r = 0; r < RPL; r++) {
        const int64_t i = i0 + 32 * r;
        xv[r] = 0.0;
        if (i >= n) continue;
        double t;
        if (CT > 1) {
            double pv[SPS_GM_NCT];
#pragma unroll
            for (int k = 0; k < SPS_GM_NCT; k++) pv[k] = k < CT ? __ldcg(part + (int64_t)k * n + i) : 0.0;
            t = 0.0;
#pragma unroll
            for (int k = 0; k < SPS_GM_NCT; k++)
                if (k < CT) t += pv[k];
        } else {
            t = gn_row_total<RPL>(sm, W, lane, r);
        }
        xv[r] = x[i] - t;
        x[i] = xv[r];
    }
    double q = 0.0;
#pragma unroll
    for (int r = 0; r < RPL; r++)
        if (i0 + 32 * r < n) q += xv[r] * xv[r];
    for (int off = 16; off > 0; off >>= 1) q += __shfl_down_sync(GM_FULL, q, off);
    if (lane == 0) tl.wwp[blockIdx.x] = q;
    return gm_last_ticket(tl.done, gridDim.x - 1u);
}

/* The last block: x'x over the tiles, the finish, the scale. */
__device__ void gn_tail_run(int n, const double *x, const gn_tail &tl)
{
    __threadfence();
    double v[1] = {0.0};
#pragma unroll 8
    for (int i = (int)threadIdx.x; i < (int)gridDim.x; i += TPB) v[0] += __ldcg(tl.wwp + i);
    block_sum<1>(v);
    const volatile sps_kstate *vst = tl.st;
    const bool stopped = tl.gated && vst->stop;
    if (stopped) return; /* the whole block: a stopped solve's finish and scale do nothing */
    arnoldi_block(tl.step, tl.j, tl.st, tl.gs, v, tl.hist, tl.gm);
    if (tl.sj < 0) return;
    __syncthreads(); /* thread 0's step (st, gs) seen by the block */
    const volatile sps_gm_state *vgs = tl.gs;
    if (vst->stop || (tl.step == SPS_GM_CHECK && vgs->reorth)) return; /* no step made, or stopped */
    const double d = vgs->hn;
    double *dst = tl.V + (tl.sj + 1) * (int64_t)n;
    for (int i0 = (int)threadIdx.x; i0 < n; i0 += GN_SCALE_U * TPB) { /* the loads of a batch first */
        double v[GN_SCALE_U];
#pragma unroll
        for (int u = 0; u < GN_SCALE_U; u++) v[u] = i0 + u * TPB < n ? __ldcg(x + i0 + u * TPB) : 0.0;
#pragma unroll
        for (int u = 0; u < GN_SCALE_U; u++)
            if (i0 + u * TPB < n) dst[i0 + u * TPB] = v[u] / d;
    }
}

/* At most 48 registers (5 blocks an SM): make run's widest launch is 62 row
 * tiles by 9 column tiles, 558 blocks, which 4 blocks an SM (62 registers
 * unbounded, the tail's) would run in two waves on 132 SMs. ptxas spills 72
 * bytes at this bound (none at 62), presumably in the one block's tail. */
/* h not __restrict__: it is column j of H (or h2), which the tail's finish
 * rewrites once every block has read it. */
template <int RPL>
__global__ void __launch_bounds__(32 * GN_MAXW, 5) k_gn_fin(int n, int ncols, int K, int W, const double *__restrict__ V,
                                                           const double *h, double *x, double *part,
                                                           const sps_gm_state *gate, gn_tail tl)
{
    if (gate && !gate->reorth) return;
    __shared__ double sm[GN_MAXW][32 * RPL];
    __shared__ int last;
    const int lane = (int)(threadIdx.x & 31), wp = (int)(threadIdx.x >> 5);
    const int64_t i0 = (int64_t)blockIdx.x * (32 * RPL) + lane;
    if (wp < W) {
        const int c0 = (int)blockIdx.y * K, c1 = min(ncols, c0 + K);
        double s[RPL];
        gn_sums<RPL>(n, c0, c1, wp, W, i0, V, h, s);
#pragma unroll
        for (int r = 0; r < RPL; r++) sm[wp][lane + 32 * r] = s[r];
    }
    __syncthreads();
    if (wp == 0) {
        const bool l = gn_tile_end<RPL>(n, W, i0, sm, x, part, tl);
        if (lane == 0) last = l;
    }
    __syncthreads();
    if (last) gn_tail_run(n, x, tl);
}

/* ---- end of the fused products */

/* ---- the delayed products (DCGS2: gm_ops dprod, dcorr) ---------------------
 *
 * gmres_state.h's DCGS2 is the arithmetic; these are its two passes over the
 * basis, each one launch, every sum in an order fixed by n and the column
 * count, no floating-point atomics (tickets only decide who sums).
 *
 * k_dp: d = [V_0..V_j]'[p_j, y] (p_j = V_j). k_gt's warps (one per column
 * and row chunk, the columns from the last, V through L2 and the two
 * right-hand sides through L1), each with two sums; a column of C chunks
 * puts its partials in the workspace's (p_j's, then at ncols * C y's) and the
 * warp with the last ticket on the column's counter adds them (gt_col_sum,
 * k_gt's order). Then each block takes a ticket on the done counter and the
 * last block runs sps__gm_dcgs2_prod over the block (dp_tail; the closing
 * products, y NULL: then column m - 1's Arnoldi step, dc_col).
 *
 * k_dc: the corrections on k_gn_fin's tiles (32 * RPL rows by K columns of
 * Q = V_0..V_{j-1}, W warps splitting the tile's columns, warp 0 adding the
 * W sums in warp order): each row's Q a and Q b at once (gn_sums2: one load
 * of V for both), the column tiles' sums in the partials (Q a's, then at
 * CT * n Q b's) and added in tile order by the row tile's last block, which
 * then writes v_j and p_{j+1} of its rows. One more block (blockIdx.x = the
 * row tiles' count, y = 0) runs column j - 1's Arnoldi step (dc_col) beside
 * them, off the step's critical path. It may stop the solve while the other
 * blocks start, so k_dc gates on the state's dstep == j (set by k_dp's tail
 * only, which runs only when the solve goes on), never on st->stop: every
 * block takes the same decision. */
#define DP_U 8
#define DC_U 4 /* k_dc's columns in flight a warp: 48 registers without spills (5 blocks an SM, as k_gn_fin) */

/* sps__gm_dcgs2_col with the whole block: column j - 1 += a and its
 * ||.||^2 (block_sum), the rotations (rotate_scan), the Arnoldi step with
 * H[j, j-1] = om on thread 0. */
__device__ void dc_col(int64_t j, double om, sps_kstate *st, sps_gm_state *gs, double *hist, sps_kgm gm)
{
    double *col = gm.H + (j - 1) * (gs->m + 1), hsq[1] = {0.0};
    for (int64_t i = threadIdx.x; i < j; i += TPB) {
        const double h = col[i] + __ldcg(gm.d + i);
        col[i] = h;
        hsq[0] += h * h;
    }
    block_sum<1>(hsq); /* its barriers also publish the col[] writes */
    const double r = rotate_scan(col, gm.cs, gm.sn, j - 1);
    __syncthreads(); /* every row rotated before thread 0 writes rows j - 1, j */
    if (threadIdx.x == 0) sps__gm_arnoldi(st, gs, j - 1, r, om, hsq[0], hist, gm);
}

/* sps__gm_dcgs2_prod with the whole block: a'a and a'b (block_sum), omega
 * and c on thread 0, column j of H and U; close: dc_col after it. */
__device__ void dp_tail(int64_t j, bool close, sps_kstate *st, sps_gm_state *gs, double *hist, sps_kgm gm)
{
    __shared__ double sc[2];
    const int64_t ld = gs->m + 1;
    const double *a = gm.d, *b = gm.d + ld;
    double v[2] = {0.0, 0.0};
    for (int64_t i = threadIdx.x; i < j; i += TPB) {
        const double ai = __ldcg(a + i);
        v[0] += ai * ai;
        if (!close) v[1] += ai * __ldcg(b + i);
    }
    block_sum<2>(v);
    if (threadIdx.x == 0) {
        const double om2 = __ldcg(a + j) - v[0], om = j == 0 ? 1.0 : om2 > 0.0 ? sqrt(om2) : 0.0;
        const double c = close || om == 0.0 ? 0.0 : (__ldcg(b + j) - v[1]) / om;
        sc[0] = om;
        sc[1] = c;
        gs->omega = om;
        gs->cj = c;
        gs->dstep = j;
    }
    __syncthreads();
    const double om = sc[0], c = sc[1];
    if (close) {
        dc_col(j, om, st, gs, hist, gm);
        return;
    }
    if (om == 0.0) return;
    double *colj = gm.H + j * ld, *u = gm.U + j * (j - 1) / 2;
    for (int64_t i = threadIdx.x; i < j; i += TPB) {
        colj[i] = __ldcg(b + i) / om;
        u[i] = __ldcg(a + i) / om;
    }
    if (threadIdx.x == 0) colj[j] = c / om;
}

template <int U>
__global__ void __launch_bounds__(TPB) k_dp(int n, int ncols, int R, int C, const double *__restrict__ V,
                                            const double *__restrict__ y, double *part, unsigned *cnt,
                                            unsigned *done, sps_kstate *st, sps_gm_state *gs, double *hist,
                                            sps_kgm gm, int ld)
{
    if (st->stop) return; /* every block: the state is the previous launch's */
    __shared__ int last;
    const int lane = (int)(threadIdx.x & 31);
    const int64_t wid = (int64_t)blockIdx.x * (TPB / 32) + (threadIdx.x >> 5);
    const bool two = y != nullptr;
    const double *x0 = V + (int64_t)(ncols - 1) * n;
    if (wid < (int64_t)ncols * C) { /* whole warps */
        const int chunk = (int)(wid / ncols);
        const int c = ncols - 1 - (int)(wid - (int64_t)chunk * ncols);
        const int64_t r1 = min((int64_t)n, (int64_t)(chunk + 1) * R);
        const double *col = V + (int64_t)c * n;
        double s0 = 0.0, s1 = 0.0;
        for (int64_t i = (int64_t)chunk * R + lane; i < r1; i += 32 * U) { /* U rows a lane in flight */
            double a[U], b0[U], b1[U];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int64_t k = i + 32 * u;
                a[u] = k < r1 ? __ldcg(col + k) : 0.0;
                b0[u] = k < r1 ? __ldg(x0 + k) : 0.0;
                b1[u] = k < r1 && two ? __ldg(y + k) : 0.0;
            }
#pragma unroll
            for (int u = 0; u < U; u++)
                if (i + 32 * u < r1) {
                    s0 += a[u] * b0[u];
                    s1 += a[u] * b1[u];
                }
        }
        for (int off = 16; off > 0; off >>= 1) {
            s0 += __shfl_down_sync(GM_FULL, s0, off);
            s1 += __shfl_down_sync(GM_FULL, s1, off);
        }
        bool mine = C == 1;
        if (!mine) {
            if (lane == 0) {
                part[(int64_t)c * C + chunk] = s0;
                part[((int64_t)ncols + c) * C + chunk] = s1;
            }
            mine = gm_last_ticket(cnt + c, (unsigned)C - 1u);
            if (mine) {
                s0 = gt_col_sum(part, c, C, true);
                s1 = gt_col_sum(part + (int64_t)ncols * C, c, C, true);
            }
        }
        if (mine && lane == 0) {
            gm.d[c] = s0;
            if (two) gm.d[ld + c] = s1;
        }
    }
    __threadfence(); /* this block's d and partials before its ticket */
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned t = atomicAdd(done, 1u);
        last = t == gridDim.x - 1u;
        if (last) *done = 0u;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    dp_tail(ncols - 1, !two, st, gs, hist, gm);
}

/* gn_sums with two coefficient vectors (h1, h2) over the same loads of V:
 * warp wp's (of W) sums over columns c0 + wp, + W, ... < c1, in order. The
 * classic kernels keep gn_sums as it is (their register budget). */
template <int RPL, int U>
__device__ __forceinline__ void gn_sums2(int n, int c0, int c1, int wp, int W, int64_t i0,
                                         const double *__restrict__ V, const double *__restrict__ h1,
                                         const double *__restrict__ h2, double (&s1)[RPL], double (&s2)[RPL])
{
#pragma unroll
    for (int r = 0; r < RPL; r++) s1[r] = s2[r] = 0.0;
    for (int c = c0 + wp; c < c1; c += W * U) {
        double a[U][RPL], b1[U], b2[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            const int cc = c + u * W;
            const bool ok = cc < c1;
            const double *p = V + (int64_t)(ok ? cc : c0) * n;
            b1[u] = ok ? __ldg(h1 + cc) : 0.0;
            b2[u] = ok ? __ldg(h2 + cc) : 0.0;
#pragma unroll
            for (int r = 0; r < RPL; r++) {
                const int64_t i = i0 + 32 * r;
                a[u][r] = ok && i < n ? __ldcg(p + i) : 0.0;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            if (c + u * W >= c1) continue;
#pragma unroll
            for (int r = 0; r < RPL; r++) {
                s1[r] += a[u][r] * b1[u];
                s2[r] += a[u][r] * b2[u];
            }
        }
    }
}

/* V_j <- (V_j - Q a) / omega;  V_{j+1} <- (y - Q b - v_j c) / omega, Q =
 * V_0..V_{j-1} (d: a at 0, b at ld; omega, c from dp_tail); the block past
 * the row tiles: column j - 1's Arnoldi step (dc_col). */
template <int RPL>
__global__ void __launch_bounds__(32 * GN_MAXW, 5) k_dc(int n, int j, int K, int W, double *V,
                                                    const double *__restrict__ y, double *part, unsigned *tcnt,
                                                    sps_kstate *st, sps_gm_state *gs, double *hist, sps_kgm gm,
                                                    int ld)
{
    if (gs->dstep != j) return; /* k_dp did not run: the solve had stopped */
    if (blockIdx.x == gridDim.x - 1) {
        if (blockIdx.y == 0 && j > 0) dc_col(j, gs->omega, st, gs, hist, gm);
        return;
    }
    const double om = gs->omega, c = gs->cj;
    if (om == 0.0) return; /* no v_j: dc_col stops the solve */
    const double *d = gm.d;
    __shared__ double sm[2][GN_MAXW][32 * RPL];
    const int lane = (int)(threadIdx.x & 31), wp = (int)(threadIdx.x >> 5), CT = (int)gridDim.y;
    const int64_t i0 = (int64_t)blockIdx.x * (32 * RPL) + lane;
    if (wp < W) {
        const int c0 = (int)blockIdx.y * K, c1 = min(j, c0 + K);
        double s1[RPL], s2[RPL];
        gn_sums2<RPL, DC_U>(n, c0, c1, wp, W, i0, V, d, d + ld, s1, s2);
#pragma unroll
        for (int r = 0; r < RPL; r++) {
            sm[0][wp][lane + 32 * r] = s1[r];
            sm[1][wp][lane + 32 * r] = s2[r];
        }
    }
    __syncthreads();
    if (wp != 0) return;
    double t1[RPL], t2[RPL];
#pragma unroll
    for (int r = 0; r < RPL; r++) {
        t1[r] = gn_row_total<RPL>(sm[0], W, lane, r);
        t2[r] = gn_row_total<RPL>(sm[1], W, lane, r);
    }
    if (CT > 1) {
#pragma unroll
        for (int r = 0; r < RPL; r++) {
            const int64_t i = i0 + 32 * r;
            if (i >= n) continue;
            part[(int64_t)blockIdx.y * n + i] = t1[r];
            part[((int64_t)CT + blockIdx.y) * n + i] = t2[r];
        }
        if (!gm_last_ticket(tcnt + blockIdx.x, (unsigned)CT - 1u)) return;
#pragma unroll
        for (int r = 0; r < RPL; r++) { /* the tiles' sums in tile order */
            const int64_t i = i0 + 32 * r;
            t1[r] = t2[r] = 0.0;
            if (i >= n) continue;
            for (int k = 0; k < CT; k++) {
                t1[r] += __ldcg(part + (int64_t)k * n + i);
                t2[r] += __ldcg(part + ((int64_t)CT + k) * n + i);
            }
        }
    }
    double *vj = V + (int64_t)j * n;
#pragma unroll
    for (int r = 0; r < RPL; r++) {
        const int64_t i = i0 + 32 * r;
        if (i >= n) continue;
        const double v = (vj[i] - t1[r]) / om;
        vj[i] = v;
        vj[n + i] = (y[i] - t2[r] - v * c) / om;
    }
}

/* ---- end of the delayed products */

} /* namespace */

/* ---- the one-kernel and cluster kernels' launchers (gmres_onek.h): each
 * instantiation lives in a module of its own (solvers/gmres/onek/), so that a
 * solve loads only the one it runs. CUDA loads a module whole at the first
 * launch of one of its kernels: the twenty instantiations in this file made
 * 3.5 MB of sm_90 code that every GMRES solve loaded (H100, a fresh context:
 * 2.9-3.4 ms for the module, doc/solvers.md). */
static const sps_gm_onek_fn go_fns[2][4] = {
    {sps__gm_onek_r1, sps__gm_onek_r2, sps__gm_onek_r4, sps__gm_onek_r8},
    {sps__gm_onek_r1_jac, sps__gm_onek_r2_jac, sps__gm_onek_r4_jac, sps__gm_onek_r8_jac},
};
static const sps_gm_cluster_fn gc_fns[2][6] = {
    {sps__gm_cluster_b256, sps__gm_cluster_b512, sps__gm_cluster_b1024, sps__gm_cluster_b1024_r2,
     sps__gm_cluster_b1024_r4, sps__gm_cluster_b1024_r8},
    {sps__gm_cluster_b256_jac, sps__gm_cluster_b512_jac, sps__gm_cluster_b1024_jac, sps__gm_cluster_b1024_r2_jac,
     sps__gm_cluster_b1024_r4_jac, sps__gm_cluster_b1024_r8_jac},
};

/* The one kernel's rows a thread, R = 1, 2, 4 or 8, as an index into go_fns
 * (-1: above SPS_GM_ONEK_MAX_ROWS, which the hook refuses first). */
static int go_pick(int n)
{
    for (int i = 0; i < 4; i++)
        if (n <= (OKT << i)) return i;
    return -1;
}

/* The block shape from the rows per block L: the fewest threads of 256, 512
 * and 1024 (at least SPS_GM_CLUSTER_TPB) that give each thread one row, else
 * 1024 threads with 2, 4 or 8 rows each; as an index into gc_fns (-1: above
 * SPS_GM_CLUSTER_MAX_ROWS a block, which the hook refuses first). */
static int gc_pick(int L)
{
    const char *v = getenv("SPS_GM_CLUSTER_TPB");
    const int tpb = v ? atoi(v) : 0;
    if (L <= 256 && tpb <= 256) return 0;
    if (L <= 512 && tpb <= 512) return 1;
    for (int i = 2; i < 6; i++)
        if (L <= (1024 << (i - 2))) return i;
    return -1;
}

static sps_status c_gm_finish(sps_kws *w, const sps_kfin *f)
{
    const sps_gm_ws *g = (const sps_gm_ws *)f->aux;
    gm_fin fn = {f->step, f->arg, w->st, (sps_gm_state *)w->ms, w->hist, g->gm};
    LAUNCH_FINISH(w, f, fn);
    return SPS_OK;
}

/* The products before issue 9, kept for gm_bench (variant 0).  The partials go to the reduction scratch (w->red: SPS_K_NSUM * kgrid(n)
 * doubles, free between reductions): P blocks per column, as many as fit;
 * where not even one per column fits (a basis wider than 8 * kgrid(n), small
 * n), one block per column writes h directly. */
static sps_status old_gemv_t(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *x,
                             double *h, const sps_gm_state *gate)
{
    if (ncols < 1 || ncols > 65535)
        return sps__err(w->ctx, SPS_ERR_INTERNAL, "gmres: %lld basis columns (%s:%d)",
                        (long long)ncols, __FILE__, __LINE__);
    int64_t room = (int64_t)SPS_K_NSUM * sps__kgrid(w->n) / ncols;
    int P = (int)(room < 1 ? 1 : room < sps__kgrid(w->n) ? room : sps__kgrid(w->n));
    cudaStream_t s = sps_stream(w->ctx);
    k_gemv_t_part<<<dim3((unsigned)P, (unsigned)ncols), TPB, 0, s>>>(w->n, P, g->V, x,
                                                                     P == 1 ? h : w->red, gate);
    SPS_LAUNCH_CHECK(w->ctx, "k_gemv_t_part");
    if (P == 1) return SPS_OK;
    k_gemv_t_sum<<<(unsigned)((ncols + TPB - 1) / TPB), TPB, 0, s>>>((int)ncols, P, w->red, h, gate);
    SPS_LAUNCH_CHECK(w->ctx, "k_gemv_t_sum");
    return SPS_OK;
}

static sps_status old_gemv_n(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h,
                             double *x, const sps_gm_state *gate)
{
    k_gemv_n<<<gm_rows_grid(w->n), dim3(32, gm_warps(ncols)), 0, sps_stream(w->ctx)>>>(
        w->n, (int)ncols, g->V, h, x, gate);
    SPS_LAUNCH_CHECK(w->ctx, "k_gemv_n");
    return SPS_OK;
}

/* h = V'w's plan: C chunks of R rows (R a multiple of 32). tw > 0: enough
 * chunks for about tw warps, and chunks of at most about 4096 rows (8
 * batches of loads a lane); tw = 0: one chunk. Never chunks under 512 rows,
 * nor more than cap. So lns_3937's GMRES(2000) takes one kernel from 1024
 * columns on, 6 or 8 chunks below; n = 1e6 with 30 columns 245 chunks. */
struct gt_plan {
    int C, R;
};
static gt_plan gt_plan_for(int64_t n, int64_t ncols, int64_t cap, int64_t tw)
{
    int64_t c = 1;
    if (tw > 0) {
        c = (tw + ncols - 1) / ncols;
        if (c < (n + 4095) / 4096) c = (n + 4095) / 4096;
    }
    if (c > (n + 511) / 512) c = (n + 511) / 512;
    if (c > cap) c = cap;
    if (c < 1) c = 1;
    const int64_t r = ((n + c - 1) / c + 31) / 32 * 32;
    gt_plan p;
    p.R = (int)r;
    p.C = (int)((n + r - 1) / r);
    return p;
}

/* The partials: w->red (SPS_K_NSUM * kgrid(n) doubles, free between
 * reductions) where they fit, else the workspace's (SPS_GM_TCH per column).
 * cnt: the columns' counters (the fused sum, k_gt), NULL: k_gt_sum. */
static sps_status gt_launch(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *x, double *h,
                            const sps_gm_state *gate, int64_t tw, unsigned *cnt = nullptr)
{
    if (ncols < 1 || ncols > INT32_MAX / SPS_GM_TCH || w->n < 1)
        return sps__err(w->ctx, SPS_ERR_INTERNAL, "gmres: %lld basis columns (%s:%d)",
                        (long long)ncols, __FILE__, __LINE__);
    const int64_t nred = (int64_t)SPS_K_NSUM * sps__kgrid(w->n), rroom = nred / ncols;
    const int64_t cap = g->part && rroom < SPS_GM_TCH ? SPS_GM_TCH : rroom;
    const gt_plan p = gt_plan_for(w->n, ncols, cap, tw);
    double *out = p.C == 1 ? h : (int64_t)p.C * ncols <= nred ? w->red : g->part;
    const int64_t warps = ncols * p.C, wpb = TPB / 32;
    cudaStream_t s = sps_stream(w->ctx);
    if (p.C == 1) cnt = nullptr;
    k_gt<GT_U><<<(unsigned)((warps + wpb - 1) / wpb), TPB, 0, s>>>(w->n, (int)ncols, p.R, p.C, g->V, x,
                                                                   out, gate, h, cnt);
    SPS_LAUNCH_CHECK(w->ctx, "k_gt");
    if (p.C == 1 || cnt) return SPS_OK;
    k_gt_sum<<<(unsigned)((ncols + wpb - 1) / wpb), TPB, 0, s>>>((int)ncols, p.C, out, h, gate);
    SPS_LAUNCH_CHECK(w->ctx, "k_gt_sum");
    return SPS_OK;
}

/* x -= V h's plan: W warps per block (each at least 8 columns, at most
 * GN_MAXW), sps__gm_ntiles column tiles (1 without the workspace's partials). */
static unsigned gn_warps(int64_t ncols)
{
    unsigned W = 1;
    while (W < GN_MAXW && (int64_t)W * 16 <= ncols) W *= 2;
    return W;
}

static sps_status gn_launch(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h, double *x,
                            const sps_gm_state *gate)
{
    if (ncols < 1 || ncols > INT32_MAX || w->n < 1)
        return sps__err(w->ctx, SPS_ERR_INTERNAL, "gmres: %lld basis columns (%s:%d)",
                        (long long)ncols, __FILE__, __LINE__);
    const unsigned W = gn_warps(ncols);
    const int64_t ct = g->part ? sps__gm_ntiles(w->n, ncols) : 1, K = (ncols + ct - 1) / ct;
    const int64_t rt = (w->n + 32 * GN_RPL - 1) / (32 * GN_RPL);
    cudaStream_t s = sps_stream(w->ctx);
    k_gn<GN_RPL><<<dim3((unsigned)rt, (unsigned)ct), dim3(32, W), 0, s>>>(
        w->n, (int)ncols, (int)K, g->V, h, x, ct > 1 ? g->part : NULL, gate);
    SPS_LAUNCH_CHECK(w->ctx, "k_gn");
    if (ct == 1) return SPS_OK;
    LAUNCH(w, k_gn_sum, w->n, (int)ct, g->part, x, gate);
    return SPS_OK;
}

/* second: the second Gram-Schmidt pass, which the kernels skip unless the
 * state's reorth is set (a device flag: the host does not know it). */

/* The fused products (k_gt's sum, k_gn_fin) unless SPS_GM_FUSE=0, and only
 * with the workspace's partials and counters (sps__gm_part_len). */
static bool gm_fuse(const sps_gm_ws *g)
{
    const char *v = getenv("SPS_GM_FUSE");
    return g->part && !(v && !strcmp(v, "0"));
}

/* The counters after the partials and the tiles' x'x (gmres.h). */
static double *gm_wwp(const sps_gm_ws *g, int64_t n) { return g->part + sps__gm_part_core(n, g->m); }
static unsigned *gm_cnt(const sps_gm_ws *g, int64_t n)
{
    return (unsigned *)(void *)(gm_wwp(g, n) + sps__gm_rtiles(n));
}

/* k_gn_fin: x -= V h, x'x, the finish f and, with sj >= 0, the scale. */
static sps_status gn_fin_launch(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h, double *x,
                                const sps_gm_state *gate, const sps_kfin *f, int64_t sj)
{
    const int64_t n = w->n;
    if (ncols < 1 || ncols > g->m + 1 || n < 1)
        return sps__err(w->ctx, SPS_ERR_INTERNAL, "gmres: %lld basis columns (%s:%d)",
                        (long long)ncols, __FILE__, __LINE__);
    const int64_t ct = sps__gm_ntiles(n, ncols), K = (ncols + ct - 1) / ct, rt = (int64_t)sps__gm_rtiles(n);
    unsigned *cnt = gm_cnt(g, n);
    gn_tail tl = {gm_wwp(g, n), cnt + g->m + 1, cnt + g->m + 1 + rt, f->step, f->gated, f->arg, sj,
                  w->st, (sps_gm_state *)w->ms, w->hist, g->gm, g->V};
    cudaStream_t s = sps_stream(w->ctx);
    k_gn_fin<GN_RPL><<<dim3((unsigned)rt, (unsigned)ct), 32 * GN_MAXW, 0, s>>>(
        (int)n, (int)ncols, (int)K, (int)gn_warps(ncols), g->V, h, x, ct > 1 ? g->part : NULL, gate, tl);
    SPS_LAUNCH_CHECK(w->ctx, "k_gn_fin");
    return SPS_OK;
}

static sps_status c_gemv_t(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *x,
                           double *h, int second)
{
    return gt_launch(w, g, ncols, x, h, second ? (const sps_gm_state *)w->ms : NULL, GT_TW,
                     gm_fuse(g) ? gm_cnt(g, w->n) : nullptr);
}

static sps_status c_gemv_n(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h,
                           double *x, int second)
{
    return gn_launch(w, g, ncols, h, x, second ? (const sps_gm_state *)w->ms : NULL);
}

static sps_status c_gemv_n_fin(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h,
                               double *x, int second, const sps_kfin *f, int64_t sj, int *scaled)
{
    const sps_gm_state *gate = second ? (const sps_gm_state *)w->ms : NULL;
    *scaled = 0;
    if (!gm_fuse(g) || (f->step != SPS_GM_CHECK && f->step != SPS_GM_ARNOLDI) || f->fn != c_gm_finish) {
        sps_status st = gn_launch(w, g, ncols, h, x, gate);
        const double *a[1] = {x};
        return st != SPS_OK ? st : w->ops->dot(w, 1, a, a, f);
    }
    const int64_t fs = sj >= 0 && w->n <= SPS_GM_FUSE_SCALE_ROWS ? sj : -1;
    sps_status st = gn_fin_launch(w, g, ncols, h, x, gate, f, fs);
    if (st == SPS_OK) *scaled = fs >= 0;
    return st;
}

static sps_status c_gm_reset(sps_kws *w, const sps_gm_ws *g)
{
    if (!g->part) return SPS_OK;
    const size_t bytes = sps__gm_ncount(w->n, g->m) * sizeof(unsigned);
    cudaError_t ce = cudaMemsetAsync(gm_cnt(g, w->n), 0, bytes, sps_stream(w->ctx));
    return ce == cudaSuccess ? SPS_OK : sps__cuda_fail(w->ctx, ce, "cudaMemsetAsync gm counters", __FILE__, __LINE__);
}

/* ---- end of the fused launchers */

/* ---- the delayed launchers (DCGS2) */

/* k_dp over columns 0..j: the partials in the workspace (chunks capped at
 * SPS_GM_TCH / 2: two right-hand sides), the columns' counters and the done
 * counter (gmres.h: one a column, then the row tiles', then done). */
static sps_status c_gm_dprod(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *y)
{
    const int64_t n = w->n, ncols = j + 1;
    if (ncols < 1 || ncols > g->m + 1 || n < 1 || !g->part || !g->gm.d || !g->gm.U)
        return sps__err(w->ctx, SPS_ERR_INTERNAL, "gmres dcgs2: %lld basis columns (%s:%d)", (long long)ncols,
                        __FILE__, __LINE__);
    const gt_plan p = gt_plan_for(n, ncols, SPS_GM_TCH / 2, GT_TW);
    unsigned *cnt = gm_cnt(g, n);
    const int64_t warps = ncols * p.C, wpb = TPB / 32, rt = (int64_t)sps__gm_rtiles(n);
    cudaStream_t s = sps_stream(w->ctx);
    k_dp<DP_U><<<(unsigned)((warps + wpb - 1) / wpb), TPB, 0, s>>>(
        (int)n, (int)ncols, p.R, p.C, g->V, y, g->part, cnt, cnt + g->m + 1 + rt, w->st, (sps_gm_state *)w->ms,
        w->hist, g->gm, (int)(g->m + 1));
    SPS_LAUNCH_CHECK(w->ctx, "k_dp");
    return SPS_OK;
}

/* k_dc on k_gn_fin's plan over Q = V_0..V_{j-1} (at least one column tile:
 * step 0 has no Q and writes v_0 and p_1 alone), one more column of blocks
 * (its first runs dc_col; the rest return at once). */
static sps_status c_gm_dcorr(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *y)
{
    const int64_t n = w->n;
    if (j < 0 || j + 1 > g->m || n < 1 || !g->part || !g->gm.d)
        return sps__err(w->ctx, SPS_ERR_INTERNAL, "gmres dcgs2: column %lld (%s:%d)", (long long)j, __FILE__,
                        __LINE__);
    const int64_t ct = sps__gm_ntiles(n, j), K = (j + ct - 1) / ct, rt = (int64_t)sps__gm_rtiles(n);
    unsigned *cnt = gm_cnt(g, n);
    cudaStream_t s = sps_stream(w->ctx);
    k_dc<GN_RPL><<<dim3((unsigned)rt + 1u, (unsigned)ct), 32 * GN_MAXW, 0, s>>>(
        (int)n, (int)j, (int)K, (int)gn_warps(j), g->V, y, g->part, cnt + g->m + 1, w->st, (sps_gm_state *)w->ms,
        w->hist, g->gm, (int)(g->m + 1));
    SPS_LAUNCH_CHECK(w->ctx, "k_dc");
    return SPS_OK;
}

/* ---- end of the delayed launchers */


static sps_status c_gm_scale(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *src)
{
    LAUNCH(w, k_gm_scale, w->n, j, src, g->V, w->st, (const sps_gm_state *)w->ms, g->gm);
    return SPS_OK;
}

static sps_status c_gm_solve(sps_kws *w, const sps_gm_ws *g)
{
    k_gm_solve<<<1, 1024, 0, sps_stream(w->ctx)>>>((const sps_gm_state *)w->ms, g->gm);
    SPS_LAUNCH_CHECK(w->ctx, "k_gm_solve");
    return SPS_OK;
}

static sps_status c_gm_update(sps_kws *w, const sps_gm_ws *g, double *x, const double *dinv,
                              double *u)
{
    const sps_gm_state *gs = (const sps_gm_state *)w->ms;
    /* the block shape from m: kdim is on the device */
    const dim3 nb = gm_rows_grid(w->n), tb(32, gm_warps(g->m));
    cudaStream_t s = sps_stream(w->ctx);
    if (u) k_gm_update<2><<<nb, tb, 0, s>>>(w->n, x, dinv, u, g->V, gs, g->gm.y);
    else if (dinv) k_gm_update<1><<<nb, tb, 0, s>>>(w->n, x, dinv, u, g->V, gs, g->gm.y);
    else k_gm_update<0><<<nb, tb, 0, s>>>(w->n, x, dinv, u, g->V, gs, g->gm.y);
    SPS_LAUNCH_CHECK(w->ctx, "k_gm_update");
    return SPS_OK;
}


/* The one-kernel path (gmres.h): n <= 8 OKT rows (SPS_GM_ONEK_MAX_ROWS), the
 * steps j0 .. m-1 of the cycle; the shared memory for z and the small arrays
 * must fit (else SPS_ERR_UNSUPPORTED: the caller runs classic). */
static sps_status c_gm_onekernel(sps_kws *w, const sps_gm_ws *g, const sps_dev_rows *rows, int64_t j0,
                                 const double *dinv, int cycles, double *x, const double *b)
{
    if (cycles < 1 || !x || !b) cycles = 1;
    if (!rows || rows->n != w->n || w->n < 1 || w->n > 8 * OKT || g->m < 1 || g->m > INT32_MAX / 8 ||
        j0 < 0 || j0 >= g->m)
        return SPS_ERR_UNSUPPORTED;
    sps_gm_state *gs = (sps_gm_state *)w->ms;
    cudaStream_t s = sps_stream(w->ctx);
    const int n = (int)w->n, m = (int)g->m, j = (int)j0;
    const int i = go_pick(n);
    if (i < 0 || !go_fns[dinv != nullptr][i](s, n, m, j, rows, g, dinv, w->st, gs, w->hist, cycles, x, b))
        return SPS_ERR_UNSUPPORTED;
    SPS_LAUNCH_CHECK(w->ctx, "k_gm_onekernel");
    return SPS_OK;
}

/* The profile (gmres.h sps_gm_prof): NULL off. */
static sps_gm_prof *gc_prof_on;
static const sps_gm_cluster_prof_fn gc_prof_fns[2] = {sps__gm_cluster_b256_prof, sps__gm_cluster_b512_prof};

/* gc_fns[dinv != NULL][i], or its profiling instantiation while a profile is
 * on (B = 256, 512 without Jacobi; the others counted in p->other). */
static int gc_run(int i, cudaStream_t s, int C, int n, int m, int j, int L, const sps_dev_rows *rows,
                  const sps_gm_ws *g, const double *dinv, sps_kws *w, sps_gm_state *gs, cudaError_t *ce, int cycles,
                  double *x, const double *b)
{
    sps_gm_prof *p = gc_prof_on;
    if (p && !dinv && (i == 0 || i == 1)) {
        const int r = gc_prof_fns[i](s, C, n, m, j, L, rows, g, w->st, gs, w->hist, ce, p->dev, p->cap);
        if (r > 0) p->launches++, p->C = C, p->B = 256 << i;
        return r;
    }
    const int r = gc_fns[dinv != nullptr][i](s, C, n, m, j, L, rows, g, dinv, w->st, gs, w->hist, ce, cycles, x, b);
    if (p && r > 0) p->other++;
    return r;
}

extern "C" sps_status sps__gm_cluster_prof_begin(sps_context *ctx, sps_gm_prof *p, int cap)
{
    if (!p || cap < 1) return sps__err(ctx, SPS_ERR_INVALID_ARG, "gm cluster profile: bad request");
    memset(p, 0, sizeof *p);
    const size_t bytes = (size_t)cap * SPS_GM_CLUSTER_CMAX * SPS_GCP_SLOTS * sizeof(long long);
    int dev = 0, khz = 0;
    SPS_CUDA(ctx, cudaGetDevice(&dev));
    SPS_CUDA(ctx, cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev));
    sps_status st = sps__dmalloc(ctx, (void **)&p->dev, bytes);
    if (st != SPS_OK) return st;
    const cudaError_t ce = cudaMemsetAsync(p->dev, 0, bytes, sps_stream(ctx));
    if (ce != cudaSuccess) {
        sps__dfree(p->dev);
        p->dev = nullptr;
        return sps__cuda_fail(ctx, ce, "cudaMemsetAsync (gm cluster profile)", __FILE__, __LINE__);
    }
    p->cap = cap;
    p->clock_khz = khz;
    gc_prof_on = p;
    return SPS_OK;
}

extern "C" sps_status sps__gm_cluster_prof_end(sps_context *ctx, sps_gm_prof *p, long long *host)
{
    gc_prof_on = nullptr;
    if (!p || !p->dev) return sps__err(ctx, SPS_ERR_INVALID_ARG, "gm cluster profile: not begun");
    const size_t bytes = (size_t)p->cap * SPS_GM_CLUSTER_CMAX * SPS_GCP_SLOTS * sizeof(long long);
    cudaError_t ce = cudaStreamSynchronize(sps_stream(ctx));
    if (ce == cudaSuccess && host) ce = cudaMemcpy(host, p->dev, bytes, cudaMemcpyDeviceToHost);
    sps__dfree(p->dev);
    p->dev = nullptr;
    return ce == cudaSuccess ? SPS_OK : sps__cuda_fail(ctx, ce, "gm cluster profile: read back", __FILE__, __LINE__);
}

/* The cluster kernel (gmres.h): C blocks (1 .. SPS_GM_CLUSTER_CMAX) of at most
 * SPS_GM_CLUSTER_MAX_ROWS rows each; SPS_ERR_UNSUPPORTED where it cannot run
 * (nothing changed: the caller falls back). */
static sps_status c_gm_cluster(sps_kws *w, const sps_gm_ws *g, const sps_dev_rows *rows, int64_t j0,
                               const double *dinv, int C, int cycles, double *x, const double *b)
{
    if (cycles < 1 || !x || !b) cycles = 1;
    if (!rows || rows->n != w->n || w->n < 1 || C < 1 || C > SPS_GM_CLUSTER_CMAX ||
        (w->n + C - 1) / C > SPS_GM_CLUSTER_MAX_ROWS || g->m < 1 || g->m > INT32_MAX / 8 || j0 < 0 || j0 >= g->m)
        return SPS_ERR_UNSUPPORTED;
    sps_gm_state *gs = (sps_gm_state *)w->ms;
    cudaStream_t s = sps_stream(w->ctx);
    const int n = (int)w->n, m = (int)g->m, j = (int)j0;
    cudaError_t ce = cudaSuccess;
    const int L = (n + C - 1) / C, i = gc_pick(L);
    const int r = i < 0 ? 0 : gc_run(i, s, C, n, m, j, L, rows, g, dinv, w, gs, &ce, cycles, x, b);
    if (r == 0) return SPS_ERR_UNSUPPORTED;
    if (r < 0) return sps__cuda_fail(w->ctx, ce, "cudaLaunchKernelEx k_gm_cluster", __FILE__, __LINE__);
    SPS_LAUNCH_CHECK(w->ctx, "k_gm_cluster");
    return SPS_OK;
}

/* SPS_GM_OPS_TABLE(c) with the one-kernel paths (the host has none). */
extern "C" const sps_gm_ops sps__gm_ops_cuda = {
    .finish = c_gm_finish, .gemv_t = c_gemv_t, .gemv_n = c_gemv_n, .gemv_n_fin = c_gemv_n_fin,
    .dprod = c_gm_dprod, .dcorr = c_gm_dcorr, .reset = c_gm_reset, .scale = c_gm_scale,
    .solve = c_gm_solve, .update = c_gm_update, .onekernel = c_gm_onekernel, .cluster = c_gm_cluster,
};

/* tests/tools/gm_bench (gmres.h). Allocates per call: a benchmark, not a
 * solver path. */
/* op 3: an Arnoldi step but its SpMV on column j = ncols - 1 (gm_iterate's
 * products, finishes and scale, m = ncols): variant 0 the kernels one by one
 * (SPS_GM_FUSE=0), 1 fused. */
static sps_status bench_step(sps_kws *w, const sps_gm_ws *g, int64_t nc, double *x, bool fuse)
{
    const int64_t j = nc - 1;
    double *h = g->gm.H + j * (g->m + 1);
    unsigned *cnt = fuse ? gm_cnt(g, w->n) : nullptr;
    const int64_t sj = fuse && w->n <= SPS_GM_FUSE_SCALE_ROWS ? j : -1;
    const sps_gm_state *gate = (const sps_gm_state *)w->ms;
    const double *a[1] = {x};
    sps_status st = SPS_OK;
    for (int pass = 0; pass < 2 && st == SPS_OK; pass++) {
        double *hp = pass ? g->gm.h2 : h;
        const sps_kfin f = sps__kfin(c_gm_finish, g, pass ? SPS_GM_ARNOLDI : SPS_GM_CHECK, 1, j);
        st = gt_launch(w, g, nc, x, hp, pass ? gate : NULL, GT_TW, cnt);
        if (st == SPS_OK && fuse) st = gn_fin_launch(w, g, nc, hp, x, pass ? gate : NULL, &f, sj);
        if (st == SPS_OK && !fuse) st = gn_launch(w, g, nc, hp, x, pass ? gate : NULL);
        if (st == SPS_OK && !fuse) st = sps__vops_cuda.dot(w, 1, a, a, &f);
    }
    return st != SPS_OK || sj >= 0 ? st : c_gm_scale(w, g, j, x);
}

static sps_status bench_op(sps_kws *w, const sps_gm_ws *g, const sps_gm_bench *q, double *x, double *h)
{
    if (q->op == 3) return bench_step(w, g, q->ncols, x, q->variant == 1);
    if (q->op == 4) { /* a DCGS2 step but its SpMV on column j = ncols - 1, y = x */
        sps_status st = c_gm_dprod(w, g, q->ncols - 1, x);
        return st != SPS_OK ? st : c_gm_dcorr(w, g, q->ncols - 1, x);
    }
    static const int64_t tws[4] = {0, GT_TW, 0, 16384};
    const sps_gm_state *gate = q->gated ? (const sps_gm_state *)w->ms : NULL;
    sps_status st = SPS_OK;
    if (q->op == 0 || q->op == 2)
        st = q->variant == 0 ? old_gemv_t(w, g, q->ncols, x, h, gate)
                             : gt_launch(w, g, q->ncols, x, h, gate, tws[q->variant & 3]);
    if (st == SPS_OK && (q->op == 1 || q->op == 2))
        st = q->variant == 0 ? old_gemv_n(w, g, q->ncols, h, x, gate) : gn_launch(w, g, q->ncols, h, x, gate);
    return st;
}

extern "C" sps_status sps__gm_bench_run(sps_context *ctx, const sps_gm_bench *q, const double *xin,
                                        const double *hin, double *out_first, double *out_last, double *us)
{
    if (q->n < 1 || q->ncols < 1 || q->op < 0 || q->op > 4 || q->variant < 0 || q->variant > 3 ||
        q->reps < 1 || q->warm < 0 || q->n > INT32_MAX)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "gm_bench: bad request");
    const bool dstep = q->op == 4;
    const int64_t n = q->n, nc = q->ncols, m = q->op >= 3 ? nc : nc - 1; /* ops 3, 4: v_{j+1} too */
    const size_t nv = (size_t)n * (size_t)(m + 1), nred = (size_t)SPS_K_NSUM * sps__kgrid((sps_idx)n);
    const size_t npart = sps__gm_part_len(n, m);
    const size_t nsmall = (size_t)(m + 1) * (size_t)(m + 6) + (size_t)(m * (m - 1) / 2 + 2 * (m + 1)); /* + U, d */
    double *V = NULL, *x0 = NULL, *x = NULL, *h0 = NULL, *h = NULL, *red = NULL, *part = NULL, *sm = NULL;
    double *vj0 = NULL; /* op 4: V_j as filled (each run starts from it) */
    sps_gm_state *ms = NULL;
    sps_kstate *kst = NULL;
    cudaEvent_t e0 = NULL, e1 = NULL;
    const int total = q->warm + q->reps;
    float *ms_run = (float *)calloc((size_t)total, sizeof(float));
    cudaStream_t s = sps_stream(ctx);
    sps_status st = ms_run ? SPS_OK : sps__err(ctx, SPS_ERR_NO_MEMORY, "gm_bench: no memory");
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&V, nv * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&x0, (size_t)n * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&x, (size_t)n * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&h0, (size_t)nc * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&h, (size_t)nc * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&red, nred * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&part, npart * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&ms, sizeof(sps_gm_state));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&kst, sizeof(sps_kstate));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&sm, nsmall * sizeof(double));
    if (st == SPS_OK && dstep) st = sps__dmalloc(ctx, (void **)&vj0, (size_t)n * sizeof(double));
    sps_gm_state hs;
    memset(&hs, 0, sizeof hs);
    hs.reorth = q->gated == 2;
    hs.m = m;
    hs.orth = dstep ? SPS_GM_ORTH_DCGS2 : SPS_GM_ORTH_CGS2;
    /* op 3's state: never stops (a tolerance below 0, no maxit, no dtol) */
    sps_kstate ks;
    memset(&ks, 0, sizeof ks);
    ks.maxit = INT64_MAX;
    ks.tol = -1.0;
    ks.dtol = 1e300;
    ks.r0norm = 1.0;
    double *small = (double *)calloc(nsmall, sizeof(double));
    if (!small && st == SPS_OK) st = sps__err(ctx, SPS_ERR_NO_MEMORY, "gm_bench: no memory");
    for (size_t i = 0; small && i < (size_t)(m + 1); i++) small[nsmall - 1 - i] = 1.0; /* g */
    cudaError_t ce = cudaSuccess;
#define BENCH_CUDA(call)                                                                      \
    do {                                                                                      \
        if (st == SPS_OK && (ce = (call)) != cudaSuccess)                                    \
            st = sps__cuda_fail(ctx, ce, #call, __FILE__, __LINE__);                          \
    } while (0)
    BENCH_CUDA(cudaMemcpyAsync(x0, xin, (size_t)n * sizeof(double), cudaMemcpyHostToDevice, s));
    BENCH_CUDA(cudaMemcpyAsync(h0, hin, (size_t)nc * sizeof(double), cudaMemcpyHostToDevice, s));
    BENCH_CUDA(cudaMemcpyAsync(ms, &hs, sizeof hs, cudaMemcpyHostToDevice, s));
    BENCH_CUDA(cudaMemcpyAsync(kst, &ks, sizeof ks, cudaMemcpyHostToDevice, s));
    if (small) BENCH_CUDA(cudaMemcpyAsync(sm, small, nsmall * sizeof(double), cudaMemcpyHostToDevice, s));
    BENCH_CUDA(cudaMemsetAsync(part, 0, npart * sizeof(double), s)); /* the counters */
    BENCH_CUDA(cudaStreamSynchronize(s));
    free(small);
    if (st == SPS_OK) {
        k_bench_fill<<<1024, TPB, 0, s>>>(n, m + 1, V, dstep ? nc - 1 : 0);
        if ((ce = cudaGetLastError()) != cudaSuccess) st = sps__cuda_fail(ctx, ce, "k_bench_fill", __FILE__, __LINE__);
    }
    if (dstep)
        BENCH_CUDA(cudaMemcpyAsync(vj0, V + (nc - 1) * n, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice, s));
    BENCH_CUDA(cudaEventCreate(&e0));
    BENCH_CUDA(cudaEventCreate(&e1));
    sps_kws w;
    memset(&w, 0, sizeof w);
    w.ctx = ctx;
    w.n = (sps_idx)n;
    w.red = red;
    w.ms = ms;
    w.st = kst;
    sps_gm_ws g;
    memset(&g, 0, sizeof g);
    g.V = V;
    g.m = m;
    g.part = part;
    g.gm.H = sm; /* (m+1) x m, then cs, sn (m), h2, g (m+1): the last (m+1) are g */
    g.gm.cs = sm + (m + 1) * m;
    g.gm.sn = g.gm.cs + m;
    g.gm.h2 = g.gm.sn + m;
    g.gm.y = g.gm.h2 + (m + 1);
    g.gm.g = sm + nsmall - (size_t)(m + 1);
    if (dstep) { /* after y: U, then d (g stays last) */
        g.gm.U = g.gm.y + m;
        g.gm.d = g.gm.U + m * (m - 1) / 2;
    }
    double *res = q->op == 0 ? h : dstep ? V + nc * n : x; /* op 4: p_{j+1} */
    const size_t rlen = q->op == 0 ? (size_t)nc : (size_t)n;
    for (int r = 0; r < total && st == SPS_OK; r++) {
        BENCH_CUDA(cudaMemcpyAsync(x, x0, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice, s));
        BENCH_CUDA(cudaMemcpyAsync(h, h0, (size_t)nc * sizeof(double), cudaMemcpyDeviceToDevice, s));
        if (dstep)
            BENCH_CUDA(cudaMemcpyAsync(V + (nc - 1) * n, vj0, (size_t)n * sizeof(double), cudaMemcpyDeviceToDevice, s));
        BENCH_CUDA(cudaEventRecord(e0, s));
        if (st == SPS_OK) st = bench_op(&w, &g, q, x, h);
        BENCH_CUDA(cudaEventRecord(e1, s));
        BENCH_CUDA(cudaEventSynchronize(e1));
        BENCH_CUDA(cudaEventElapsedTime(&ms_run[r], e0, e1));
        if (r == q->warm)
            BENCH_CUDA(cudaMemcpy(out_first, res, rlen * sizeof(double), cudaMemcpyDeviceToHost));
    }
    BENCH_CUDA(cudaMemcpy(out_last, res, rlen * sizeof(double), cudaMemcpyDeviceToHost));
#undef BENCH_CUDA
    if (st == SPS_OK) {
        float *t = ms_run + q->warm; /* median of the timed runs: insertion sort */
        for (int i = 1; i < q->reps; i++)
            for (int k = i; k > 0 && t[k - 1] > t[k]; k--) {
                const float v = t[k];
                t[k] = t[k - 1];
                t[k - 1] = v;
            }
        *us = 1e3 * (q->reps % 2 ? t[q->reps / 2] : 0.5 * ((double)t[q->reps / 2 - 1] + t[q->reps / 2]));
    }
    if (e0) (void)cudaEventDestroy(e0);
    if (e1) (void)cudaEventDestroy(e1);
    sps__dfree(V), sps__dfree(x0), sps__dfree(x), sps__dfree(h0), sps__dfree(h);
    sps__dfree(red), sps__dfree(part), sps__dfree(ms), sps__dfree(kst), sps__dfree(sm), sps__dfree(vj0);
    free(ms_run);
    return st;
}
