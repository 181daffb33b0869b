/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/spmm_panel.cu: SPS_SPMM_PANEL, the row-panel kernel after ASpT
 * (doc/spmm.md, "The panel kernel"), over the reordered CSR of spmm.h's
 * sps_panel.
 *
 * One thread block per panel of P = SPS_PANEL_ROWS rows, KT threads per row
 * (KT = 1, 2, 4 or 8 from the number of columns kc of this pass, kc <= 32);
 * thread (row, l) owns columns l, l + KT, ... < kc (CPT = 1, 2 or 4 of them,
 * sums in registers). The panel's dense columns are walked in tiles of W =
 * SPS_PANEL_TILE: the block loads X[dcol, 0..kc) of the tile's columns into
 * shared memory once (consecutive threads read consecutive dense columns of
 * one column of X: coalesced where the dense columns are consecutive, as in
 * a band), and each row adds its dense entries of that tile from shared
 * memory; the row's sparse entries follow, read row-wise from global memory
 * as the native kernel reads them. Each (row, column) sum is one thread's
 * chain of fma in the reordered order, the final scaling two __dmul_rn and a
 * __dadd_rn: bitwise sps__panel_spmm (spmm.c), run after run, no atomics.
 *
 * Every thread of a block passes every __syncthreads (the tile loop's trip
 * count is the panel's, the same for the whole block; threads past the last
 * row leave only after it). Shared memory: KT*CPT x (W + 1) doubles, at most
 * 32 x 65 x 8 = 16640 bytes, static (the + 1 staggers the columns of X
 * across banks). */
#include "core/cuda_check.cuh"
#include "spmm.h"

namespace {

constexpr int kP = SPS_PANEL_ROWS;
constexpr int kW = SPS_PANEL_TILE;
constexpr int kMaxThreads = SPS_PANEL_ROWS * 8;

template <int KT, int CPT, bool BETA>
__global__ void __launch_bounds__(kMaxThreads)
spmm_panel_kernel(const sps_idx *__restrict__ rp, const sps_idx *__restrict__ nd,
                  const sps_idx *__restrict__ ci, const double *__restrict__ val,
                  const sps_idx *__restrict__ dp, const sps_idx *__restrict__ dcol,
                  sps_idx nrows, int kc, const double *__restrict__ X, int64_t ldx,
                  double alpha, double beta, double *__restrict__ Y, int64_t ldy)
{
    __shared__ double tile[KT * CPT][kW + 1];
    const int t = (int)threadIdx.x;
    const int l = t % KT;
    const int64_t row = (int64_t)blockIdx.x * kP + t / KT;
    const bool live = row < (int64_t)nrows;
    sps_idx p = 0, pd = 0, p1 = 0;
    if (live) {
        p = rp[row];
        pd = p + nd[row];
        p1 = rp[row + 1];
    }
    double acc[CPT];
#pragma unroll
    for (int i = 0; i < CPT; i++) acc[i] = 0.0;
    const sps_idx d0 = dp[blockIdx.x], ndense = dp[blockIdx.x + 1] - d0;
    for (sps_idx t0 = 0; t0 < ndense; t0 += kW) {
        const int w = ndense - t0 < kW ? (int)(ndense - t0) : kW;
        __syncthreads(); /* every row is done with the previous tile */
        for (int e = t; e < w * kc; e += KT * kP) {
            const int c = e / w, j = e - c * w;
            tile[c][j] = X[(int64_t)dcol[d0 + t0 + j] + (int64_t)c * ldx];
        }
        __syncthreads();
        /* this row's dense entries of the tile: ci < t0 + w (ascending) */
        for (; p < pd && ci[p] < t0 + w; p++) {
            const double a = val[p];
            const int j = (int)(ci[p] - t0);
#pragma unroll
            for (int i = 0; i < CPT; i++)
                if (l + i * KT < kc) acc[i] = fma(a, tile[l + i * KT][j], acc[i]);
        }
    }
    if (!live) return; /* after the last __syncthreads */
    for (; p < p1; p++) {
        const double a = val[p];
        const double *x = X + ci[p];
#pragma unroll
        for (int i = 0; i < CPT; i++)
            if (l + i * KT < kc) acc[i] = fma(a, x[(int64_t)(l + i * KT) * ldx], acc[i]);
    }
#pragma unroll
    for (int i = 0; i < CPT; i++) {
        const int c = l + i * KT;
        if (c >= kc) continue;
        double *y = Y + (int64_t)c * ldy + row;
        *y = BETA ? __dadd_rn(__dmul_rn(alpha, acc[i]), __dmul_rn(beta, *y))
                  : __dmul_rn(alpha, acc[i]);
    }
}

template <int KT, int CPT>
sps_status launch(sps_context *ctx, const sps_panel *d, int kc, double alpha, const double *X,
                  int64_t ldx, double beta, double *Y, int64_t ldy)
{
    const unsigned grid = (unsigned)d->npanels, threads = KT * kP;
    cudaStream_t s = sps_stream(ctx);
    if (beta != 0.0) {
        auto kern = spmm_panel_kernel<KT, CPT, true>;
        kern<<<grid, threads, 0, s>>>(d->rp, d->nd, d->ci, d->val, d->dp, d->dcol, d->nrows, kc, X, ldx, alpha, beta, Y, ldy);
    } else {
        auto kern = spmm_panel_kernel<KT, CPT, false>;
        kern<<<grid, threads, 0, s>>>(d->rp, d->nd, d->ci, d->val, d->dp, d->dcol, d->nrows, kc, X, ldx, alpha, 0.0, Y, ldy);
    }
    SPS_LAUNCH_CHECK(ctx, "spmm_panel_kernel");
    return SPS_OK;
}

} // namespace

extern "C" sps_status sps__spmm_panel_dev(sps_context *ctx, const sps_panel *d, int k, double alpha,
                                          const double *X, int64_t ldx, double beta, double *Y,
                                          int64_t ldy)
{
    if (k <= 0 || d->nrows == 0) return SPS_OK;
    for (int c0 = 0; c0 < k; c0 += SPS_PANEL_KMAX) {
        const int kc = k - c0 < SPS_PANEL_KMAX ? k - c0 : SPS_PANEL_KMAX;
        const double *Xc = X + (int64_t)c0 * ldx;
        double *Yc = Y + (int64_t)c0 * ldy;
        sps_status st;
        if (kc == 1) st = launch<1, 1>(ctx, d, kc, alpha, Xc, ldx, beta, Yc, ldy);
        else if (kc == 2) st = launch<2, 1>(ctx, d, kc, alpha, Xc, ldx, beta, Yc, ldy);
        else if (kc <= 4) st = launch<4, 1>(ctx, d, kc, alpha, Xc, ldx, beta, Yc, ldy);
        else if (kc <= 8) st = launch<8, 1>(ctx, d, kc, alpha, Xc, ldx, beta, Yc, ldy);
        else if (kc <= 16) st = launch<8, 2>(ctx, d, kc, alpha, Xc, ldx, beta, Yc, ldy);
        else st = launch<8, 4>(ctx, d, kc, alpha, Xc, ldx, beta, Yc, ldy);
        if (st != SPS_OK) return st;
    }
    return SPS_OK;
}
