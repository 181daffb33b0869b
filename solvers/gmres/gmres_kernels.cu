/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres_kernels.cu: GMRES's operations on the GPU (the
 * same operations as gmres_host.c, which is their specification).
 *
 * The Gram-Schmidt passes are our own GEMV kernels on the column-major basis
 * (transposed for h = V'w, then w -= V h). The Givens rotations are inherently
 * a recurrence: the finish block runs it as a scan (rotate_scan). The
 * triangular solve, once per cycle, is one block; the update x += V y reads
 * kdim from the state (the host does not know it). */
#include "../kernels.cuh"
#include "gmres.h"

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

} /* namespace */

static sps_status c_gm_finish(sps_kws *w, const sps_kfin *f)
{
    const sps_gm_ws *g = (const sps_gm_ws *)f->aux;
    gm_fin fn = {f->step, f->arg, w->st, (sps_gm_state *)w->ms, w->hist, g->gm};
    LAUNCH_FINISH(w, f, fn);
    return SPS_OK;
}

/* The partials go to the reduction scratch (w->red: SPS_K_NSUM * kgrid(n)
 * doubles, free between reductions): P blocks per column, as many as fit;
 * where not even one per column fits (a basis wider than 8 * kgrid(n), small
 * n), one block per column writes h directly. */
/* second: the second Gram-Schmidt pass, which the kernels skip unless the
 * state's reorth is set (a device flag: the host does not know it). */
static sps_status c_gemv_t(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *x,
                           double *h, int second)
{
    const sps_gm_state *gate = second ? (const sps_gm_state *)w->ms : NULL;
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

static sps_status c_gemv_n(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h,
                           double *x, int second)
{
    const sps_gm_state *gate = second ? (const sps_gm_state *)w->ms : NULL;
    k_gemv_n<<<gm_rows_grid(w->n), dim3(32, gm_warps(ncols)), 0, sps_stream(w->ctx)>>>(
        w->n, (int)ncols, g->V, h, x, gate);
    SPS_LAUNCH_CHECK(w->ctx, "k_gemv_n");
    return SPS_OK;
}

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

extern "C" const sps_gm_ops sps__gm_ops_cuda = SPS_GM_OPS_TABLE(c);
