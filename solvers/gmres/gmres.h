/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres.h: GMRES's operations on its basis and small
 * arrays, with a host (gmres_host.c) and a CUDA (gmres_kernels.cu)
 * implementation. */
#ifndef SPS_GMRES_H
#define SPS_GMRES_H

#include "../../spmv/backend.h"
#include "../vops.h"
#include "gmres_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GMRES's arrays, in the vectors' memory space. */
typedef struct sps_gm_ws {
    double *V;  /* basis: n x (m+1), column-major, leading dimension n */
    sps_kgm gm;
    int64_t m;  /* restart length */
    double *part; /* the device products' partials: sps__gm_part_len(n, m) doubles
                   * (the host ignores it; NULL: the products use w->red only) */
} sps_gm_ws;

/* The device Gram-Schmidt products' plans (gmres_kernels.cu), here because
 * the workspace sizes their partials. h = V'w splits the rows into at most
 * SPS_GM_TCH chunks per column beyond what w->red holds; w -= V h splits the
 * columns into tiles of at least 64 columns, at most SPS_GM_NCT, only while
 * its 64-row tiles number fewer than SPS_GM_NTB. Both depend on n and the
 * column count only. */
#define SPS_GM_TCH 32
#define SPS_GM_NCT 16
#define SPS_GM_NTB 512
static inline int64_t sps__gm_ntiles(int64_t n, int64_t ncols)
{
    int64_t rt = (n + 63) / 64, ct = (SPS_GM_NTB + rt - 1) / rt, cap = ncols / 64;
    if (cap > SPS_GM_NCT) cap = SPS_GM_NCT;
    if (ct > cap) ct = cap;
    return ct < 1 ? 1 : ct;
}
/* The products' partials (room for two right-hand sides of the column tiles:
 * DCGS2's corrections), then the fused products' bookkeeping (gmres_kernels.cu
 * "the fused products"): the w'w sums of the 64-row tiles, then unsigned
 * counters, two a double: one a column of h = V'w, one a row tile of
 * w -= V h, one for the row tiles done. The counters are zero between
 * launches (the last block to take a ticket resets it); gm_ops reset
 * zeroes them at a solve's start. */
static inline size_t sps__gm_part_core(int64_t n, int64_t m)
{
    size_t t = (size_t)(m + 1) * SPS_GM_TCH, ct = (size_t)sps__gm_ntiles(n, m + 1);
    size_t c = ct > 1 ? 2 * ct * (size_t)n : 0;
    return t > c ? t : c;
}
static inline size_t sps__gm_rtiles(int64_t n) { return (size_t)((n + 63) / 64); }
static inline size_t sps__gm_ncount(int64_t n, int64_t m) { return (size_t)(m + 1) + sps__gm_rtiles(n) + 1; }
static inline size_t sps__gm_part_len(int64_t n, int64_t m)
{
    return sps__gm_part_core(n, m) + sps__gm_rtiles(n) + (sps__gm_ncount(n, m) + 1) / 2;
}

typedef struct sps_gm_ops {
    /* A GMRES finish step (sps_kfin's fn: f->step is an sps_gm_step, f->aux
     * the sps_gm_ws, f->arg the Arnoldi column). SPS_GM_CHECK takes ||h||^2
     * of the first pass and sets reorth (sps__gm_reorth); without the second
     * pass it makes the Arnoldi step itself. SPS_GM_ARNOLDI, when reorth is
     * set, first adds the second pass into H[:, j]. */
    sps_status (*finish)(sps_kws *w, const sps_kfin *f);
    /* h = V[:, 0..ncols-1]' x  (h in the state's memory space). Ungated, or
     * with second != 0 only when the state's reorth is set (the second pass). */
    sps_status (*gemv_t)(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *x,
                         double *h, int second);
    /* x -= V[:, 0..ncols-1] h  (the same gate) */
    sps_status (*gemv_n)(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h,
                         double *x, int second);
    /* x -= V[:, 0..ncols-1] h (gemv_n, the same gate), then the dot x'x with
     * the finish f (SPS_GM_CHECK or SPS_GM_ARNOLDI), as gemv_n and the vops
     * dot with f. sj >= 0 asks for scale(w, g, sj, x) after the finish that
     * makes the Arnoldi step; *scaled = 1 says it was done here (the caller
     * skips scale), 0 that the caller still must. The host: gemv_n, the
     * host dot, *scaled = 0 (the arithmetic of the steps one by one). CUDA:
     * one kernel for all of it unless SPS_GM_FUSE=0 (gmres_kernels.cu "the
     * fused products"): x'x summed in another order than the vops dot. */
    sps_status (*gemv_n_fin)(sps_kws *w, const sps_gm_ws *g, int64_t ncols, const double *h,
                             double *x, int second, const sps_kfin *f, int64_t sj, int *scaled);
    /* DCGS2 (gmres_state.h), gated on a stopped solve: the products
     * d = [V_0..V_j]'V_j and [V_0..V_j]'y, then sps__gm_dcgs2_prod; y NULL:
     * the cycle's closing pass (V_j only), then sps__gm_dcgs2_col too. The
     * host sums each column's products in row order; CUDA: one pass over
     * the basis for both right-hand sides, the finish in its last block. */
    sps_status (*dprod)(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *y);
    /* DCGS2's corrections, gated (CUDA: on the state's dstep == j, which
     * only dprod's finish sets): V_j <- (V_j - Q a) / omega and
     * V_{j+1} <- (y - Q b - v_j c) / omega with Q = V_0..V_{j-1} (one pass
     * over Q for both; each row's column sums in order on the host; none
     * where omega is 0), and for j >= 1 sps__gm_dcgs2_col (CUDA: in a block
     * of its own beside the corrections). */
    sps_status (*dcorr)(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *y);
    /* At a solve's start (ungated): zero the fused products' counters
     * (sps__gm_part_len); nothing on the host. */
    sps_status (*reset)(sps_kws *w, const sps_gm_ws *g);
    /* Gated. j >= 0: V[:, j+1] = src / hn (H[j+1, j] before its rotation);
     * j = -1: V[:, 0] = src / g[0]. */
    sps_status (*scale)(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *src);
    /* y = R^-1 g over kdim columns (ungated; enqueued once per cycle). */
    sps_status (*solve)(sps_kws *w, const sps_gm_ws *g);
    /* Ungated, kdim columns: u != NULL: u = V y; else x += V y, or
     * x += dinv .* (V y) when dinv != NULL (Jacobi fused). */
    sps_status (*update)(sps_kws *w, const sps_gm_ws *g, double *x, const double *dinv,
                         double *u);
    /* The one-kernel engine (gmres.c gm_onekernel; NULL on the host): the
     * Arnoldi steps j = j0 .. m-1 of the current cycle in one launch of one
     * block, walking the operator's device rows, until the cycle is full or
     * the state says stop; z = D^-1 v_j when dinv != NULL. Leaves H, cs, sn,
     * g, the basis and the state as the classic steps would (the cycle's end
     * is the caller's). SPS_ERR_UNSUPPORTED (no message): cannot run here.
     * Up to `cycles` cycles a launch: where a cycle ends full and the state
     * goes on (cycles > 1), the kernel ends it and restarts as gm_restart
     * would (x += [D^-1] V y, r = b - A x, the SPS_GM_RESTART finish, v_0),
     * then runs the next; it leaves a stop made there with kdim 0. */
    sps_status (*onekernel)(sps_kws *w, const sps_gm_ws *g, const sps_dev_rows *rows, int64_t j0,
                            const double *dinv, int cycles, double *x, const double *b);
    /* The same over a thread-block cluster of C blocks (gmres_kernels.cu
     * k_gm_cluster; NULL on the host): each block owns a slice of the rows
     * and keeps its rows of the basis in its shared memory where they fit.
     * SPS_ERR_UNSUPPORTED (no message, nothing changed): cannot run here
     * (no sm_90, the cluster or its shared memory does not fit, C outside
     * 1 .. 16, more than SPS_GM_CLUSTER_MAX_ROWS rows a block). Cycles as
     * the one kernel's. */
    sps_status (*cluster)(sps_kws *w, const sps_gm_ws *g, const sps_dev_rows *rows, int64_t j0,
                          const double *dinv, int C, int cycles, double *x, const double *b);
} sps_gm_ops;

/* The one-kernel path streams the basis through one SM: above this many
 * bytes of basis ((m+1) n doubles), or above SPS_GM_ONEK_MAX_ROWS rows (8 a
 * thread), it is refused (classic runs). Measured on the H100 (doc/solvers.md:
 * poisson2d:N, GMRES(m)): faster than classic up to about 1 MB of basis
 * (poisson2d:63 GMRES(30), 0.98 MB: 36 against 47 us per iteration), slower
 * from 1.9 MB (GMRES(60): 61 against 49); 8 rows a thread tie at 0.7 MB. */
#define SPS_GM_ONEK_MAX_BASIS ((size_t)3 << 19)
#define SPS_GM_ONEK_MAX_ROWS 8192

/* Does a GMRES(m) basis of n rows fit the one-block engine's bounds above
 * (the cluster's auto choice runs within them too)? gmres.c gm_onekernel
 * tests it, and gm_orth's default reads it: CGS2 within, DCGS2 above. */
static inline int sps__gm_onek_fits(int64_t n, int64_t m)
{
    return n >= 0 && m >= 0 && n <= SPS_GM_ONEK_MAX_ROWS &&
           (size_t)n * sizeof(double) <= SPS_GM_ONEK_MAX_BASIS / (size_t)(m + 1);
}

/* The cluster kernel's bounds (doc/solvers.md): at most
 * SPS_GM_CLUSTER_MAX_ROWS rows a block (8 a thread of 1024), and a basis of
 * at most C times SPS_GM_CLUSTER_MAX_BASIS bytes (per block: what one SM was
 * measured to stream faster than classic; SPS_GM_CLUSTER_MAX_BASIS=bytes
 * overrides it). Auto (SPS_GM_CLUSTER unset, SPS_GM_CLUSTER_AUTO not 0) takes
 * SPS_GM_CLUSTER_DEFAULT blocks, SPS_GM_CLUSTER_FALLBACK where that cluster
 * cannot be scheduled, where the one block would run on at least
 * SPS_GM_CLUSTER_MIN_ROWS rows. Measured on the H100 (2026-11-27, bench/
 * gm_cluster.sh, us per iteration, GMRES(30)): poisson2d:32 (n = 1024) one
 * block 17.0, C = 16 18.1; poisson2d:63 (3969) one block 36.0, C = 8 19.9,
 * C = 16 17.8; GMRES(10) 22.7 against 17.2 (C = 16). */
#define SPS_GM_CLUSTER_MAX_ROWS 8192
#define SPS_GM_CLUSTER_CMAX 16 /* the most blocks a cluster (1 .. 16) */
#define SPS_GM_CLUSTER_MAX_BASIS SPS_GM_ONEK_MAX_BASIS
#define SPS_GM_CLUSTER_DEFAULT 16
#define SPS_GM_CLUSTER_FALLBACK 8
#define SPS_GM_CLUSTER_MIN_ROWS 2048

/* The table of an implementation whose functions are named P_gm_finish, ...
 * (onekernel left NULL: the host's table; the CUDA table names it). */
#define SPS_GM_OPS_TABLE(P)                                                                 \
    {                                                                                       \
        .finish = P##_gm_finish, .gemv_t = P##_gemv_t, .gemv_n = P##_gemv_n,                \
        .gemv_n_fin = P##_gemv_n_fin, .reset = P##_gm_reset, .scale = P##_gm_scale,         \
        .dprod = P##_gm_dprod, .dcorr = P##_gm_dcorr, .solve = P##_gm_solve,               \
        .update = P##_gm_update,                                                            \
    }

/* tests/tools/gm_bench: the basis entry V[i, c] it times on (exact in
 * doubles, the same on host and device), and its entry point (CUDA builds
 * only): op 0 h = V'x, 1 x -= V h, 2 both (one Gram-Schmidt pass), 3 an
 * Arnoldi step but its SpMV on column ncols - 1 (both passes, the finishes,
 * the scale; variant 0 the kernels one by one, 1 fused; out: x), 4 a DCGS2
 * step but its SpMV on column j = ncols - 1 (k_dp and k_dc with y = x; the
 * columns below j scaled by 1e-3 / sqrt(n) and V_j restored before each run;
 * out: p_{j+1}); variant 0
 * the products before issue 9, 1 the default plans, 2 one row chunk for
 * V'x (one kernel), 3 more row chunks (16384 warps aimed at, not 1024); gated 0 no
 * gate, 1 the second pass's gate with reorth 0 (nothing may change), 2 with
 * reorth 1. The inputs x (n) and h (ncols) are restored before each of the
 * warm + reps runs; out_first (after the first timed run) and out_last
 * (after the last) get h (op 0) or x; us gets the median time of one run. */
SPS_HD static inline double sps__gm_bench_val(uint64_t i, uint64_t c)
{
    uint64_t z = i * 0x9E3779B97F4A7C15ull + c * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53 - 0.5;
}
typedef struct sps_gm_bench {
    int op, variant, gated, warm, reps;
    int64_t n, ncols;
} sps_gm_bench;
sps_status sps__gm_bench_run(sps_context *ctx, const sps_gm_bench *q, const double *x, const double *h,
                             double *out_first, double *out_last, double *us);

/* tests/tools/gm_bench --cluster-prof: where the cluster kernel's steps go.
 * While a profile is on (sps__gm_cluster_prof_begin .. _end; process-wide,
 * for a profiling tool), a cycle that would run k_gm_cluster<false, B, 1>
 * with B = 256 or 512 runs k_gm_cluster<false, B, 1, true> instead
 * (gmres_onek.cuh; solvers/gmres/onek/cluster_b*_prof.cu): the same
 * operations, and thread 0 of each block stores clock64() at the step's
 * phase boundaries into row `it` (the iteration count at the step's start,
 * it < cap) of dev: dev[(it * SPS_GM_CLUSTER_CMAX + rank) * SPS_GCP_SLOTS +
 * slot]; the globaltimer at the step's start and end (GT0, GT1), j, and 1 in
 * REORTH where the step took the second pass. A pass's slots follow
 * SPS_GCP_PASS1 (the check's pass) or SPS_GCP_PASS2, each the time after:
 * go_products, gc_push, cluster barrier S1, gc_gather and its
 * __syncthreads, go_subtract and gc_sum, w's publication and w'w's push, S2
 * (S4), the finish (w'w's gather, sps__gm_column, __syncthreads). The second
 * pass's products and push run inside the first pass's publication (its
 * partials ride with w'w), and it has no S1: its first three slots all hold
 * the time after the check's finish. */
enum {
    SPS_GCP_START, SPS_GCP_SPMV, SPS_GCP_PASS1, SPS_GCP_PASS2 = SPS_GCP_PASS1 + 8,
    SPS_GCP_HCOL = SPS_GCP_PASS2 + 8, /* H's column written (block 0) */
    SPS_GCP_END,                       /* the scale and its __syncthreads (the cycle's last step: none) */
    SPS_GCP_REORTH, SPS_GCP_J, SPS_GCP_GT0, SPS_GCP_GT1, SPS_GCP_SLOTS
};
enum {
    SPS_GCP_PRODUCTS, SPS_GCP_PUSH, SPS_GCP_S1, SPS_GCP_GATHER, SPS_GCP_SUBTRACT, SPS_GCP_PUBLISH, SPS_GCP_S2,
    SPS_GCP_FINISH
};
typedef struct sps_gm_prof {
    long long *dev;   /* cap x SPS_GM_CLUSTER_CMAX x SPS_GCP_SLOTS on the device, zeroed by _begin */
    int cap;          /* steps recorded: iteration counts 0 .. cap - 1 */
    int launches;     /* cycles run by the profiling kernel */
    int other;        /* cycles on the cluster kernel not profiled (Jacobi, other shapes) */
    int C, B;         /* the last profiled launch's blocks and threads a block */
    double clock_khz; /* the device's nominal clock (cudaDevAttrClockRate) */
} sps_gm_prof;
/* Allocates and zeroes p->dev for cap steps and turns the profile on. */
sps_status sps__gm_cluster_prof_begin(sps_context *ctx, sps_gm_prof *p, int cap);
/* Waits for ctx's stream, copies dev into host (cap x SPS_GM_CLUSTER_CMAX x
 * SPS_GCP_SLOTS; NULL: none), frees it, turns the profile off. */
sps_status sps__gm_cluster_prof_end(sps_context *ctx, sps_gm_prof *p, long long *host);

extern const sps_gm_ops sps__gm_ops_host;
extern const sps_gm_ops sps__gm_ops_cuda; /* defined only in a CUDA build */

#ifdef __cplusplus
}
#endif
#endif /* SPS_GMRES_H */
