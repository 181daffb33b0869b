/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres_kernels.cu: GMRES's operations on the GPU (the
 * same operations as gmres_host.c, which is their specification).
 *
 * The Gram-Schmidt passes are cuBLAS DGEMVs on the column-major basis
 * (transposed for h = V'w, then w -= V h). The Givens rotations are inherently
 * sequential: the finish block stages column j and the rotations in shared
 * memory, 512 at a time, and thread 0 runs the sequence out of shared memory
 * (global loads in a dependent chain would cost a memory latency per
 * rotation). The triangular solve, once per cycle, is one block; the update
 * x += V y reads kdim from the state (the host does not know it), one row per
 * thread.
 *
 * Where it loses: for a long restart, the sequential rotations (a few
 * nanoseconds per rotation). */
#include "../kernels.cuh"
#include "gmres.h"

#define ROT_CHUNK 512

namespace {

/* The Arnoldi step after the block sum v: adds the second Gram-Schmidt pass
 * into H[:, j] (all threads) and runs the old rotations out of shared memory. */
__device__ void arnoldi_block(int64_t j, sps_kstate *st, sps_gm_state *gs, const double *v,
                              double *hist, sps_kgm gm)
{
    double *col = gm.H + j * (gs->m + 1);
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
    /* sps__gm_rotate, chunk by chunk: sc[t] holds row base+1+t on entry
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
    if (threadIdx.x == 0) sps__gm_arnoldi(st, gs, j, carry_sh, sqrt(v[0]), hsq[0], hist, gm);
}

/* GMRES's finish steps: the Arnoldi step with the whole block, the others on
 * thread 0. */
struct gm_fin {
    int step;
    int64_t j;
    sps_kstate *st;
    sps_gm_state *gs;
    double *hist;
    sps_kgm gm;
    __device__ void operator()(const double *v) const
    {
        if (step == SPS_GM_ARNOLDI) arnoldi_block(j, st, gs, v, hist, gm);
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

/* MODE 0: x += V y;  1: x += dinv .* (V y);  2: u = V y. Row i sums its
 * columns in order (the host's order). */
template <int MODE>
__global__ void __launch_bounds__(TPB) k_gm_update(int n, double *x, const double *dinv,
                                                   double *u, const double *V,
                                                   const sps_gm_state *gs, const double *y)
{
    const int64_t k = gs->kdim;
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

static sps_status c_gm_finish(sps_kws *w, const sps_kfin *f)
{
    const sps_gm_ws *g = (const sps_gm_ws *)f->aux;
    gm_fin fn = {f->step, f->arg, w->st, (sps_gm_state *)w->ms, w->hist, g->gm};
    LAUNCH_FINISH(w, f, fn);
    return SPS_OK;
}

static sps_status c_gemv(sps_kws *w, const sps_gm_ws *g, cublasOperation_t tr, int64_t ncols,
                         double alpha, const double *x, double beta, double *y)
{
    cublasHandle_t h = (cublasHandle_t)sps__gpu_cublas(w->ctx);
    SPS_CUBLAS(w->ctx, cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    SPS_CUBLAS(w->ctx, cublasDgemv(h, tr, w->n, (int)ncols, &alpha, g->V, w->n, x, 1, &beta, y, 1));
    return SPS_OK;
}

static sps_status c_gemv_t(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *x,
                           double *h)
{
    return c_gemv(w, g, CUBLAS_OP_T, ncols, 1.0, x, 0.0, h);
}

static sps_status c_gemv_n(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h,
                           double *x)
{
    return c_gemv(w, g, CUBLAS_OP_N, ncols, -1.0, h, 1.0, x);
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
    if (u) LAUNCH(w, k_gm_update<2>, w->n, x, dinv, u, g->V, gs, g->gm.y);
    else if (dinv) LAUNCH(w, k_gm_update<1>, w->n, x, dinv, u, g->V, gs, g->gm.y);
    else LAUNCH(w, k_gm_update<0>, w->n, x, dinv, u, g->V, gs, g->gm.y);
    return SPS_OK;
}

extern "C" const sps_gm_ops sps__gm_ops_cuda = SPS_GM_OPS_TABLE(c);
