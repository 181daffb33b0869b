/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/amg.h: what the smoothed-aggregation AMG's host setup
 * (amg_setup.c), device setup (amg_dsetup.cu), host table and V-cycle
 * (amg.c) and device V-cycle (amg.cu) share. The host setup is the
 * reference; a GPU context builds the large levels on the device (they stay
 * there, copied to the host on demand) and runs the same V-cycle with
 * kernels. */
#ifndef SPS_AMG_H
#define SPS_AMG_H

#include "../pc_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPS_AMG_MAX_LEVELS 25
#define SPS_AMG_MAX_NULL 8    /* near-nullspace vectors */
#define SPS_AMG_MAX_DEGREE 8  /* Chebyshev smoother degree / l1-Jacobi sweeps */
#define SPS_AMG_MAX_DENSE 4096 /* rows of the coarsest level (dense inverse) */
#define SPS_AMG_LANCZOS 12    /* Lanczos steps for the spectral estimate per level */
#define SPS_AMG_CHEBY_RATIO 8.0 /* smoother interval [lmax / ratio, lmax] */

enum { SPS_AMG_L1JACOBI = 0, SPS_AMG_CHEBY = 1 };

typedef struct sps_amg_prm {
    double theta; /* strength threshold on the fine level (halved per level) */
    int sweeps;   /* l1-Jacobi sweeps, or the Chebyshev degree */
    int smoother; /* SPS_AMG_L1JACOBI or SPS_AMG_CHEBY */
    int coarse;   /* stop coarsening at <= coarse rows */
    int levels;   /* most levels, the finest included */
    int block;    /* unknowns per node on the fine level */
    int setup;    /* SPS_AMG_SETUP_HOST or SPS_AMG_SETUP_GPU (setup=gpu: a GPU context,
                     block 1, the constant nullspace; else the host) */
    int gpu_min;  /* setup=gpu: levels of at most gpu_min rows are built on the host */
} sps_amg_prm;

enum { SPS_AMG_SETUP_HOST = 0, SPS_AMG_SETUP_GPU = 1 };
/* setup=gpu: levels of at most this many rows finish on the host (gpu_min=N). */
#define SPS_AMG_GPU_MIN 4096

typedef struct sps_amg_level {
    sps_idx n;
    int64_t nnz;
    sps_csr A;         /* level >= 1 (level 0's is the caller's, borrowed during setup) */
    sps_csr P, R;      /* n x nc and nc x n; absent on the coarsest level */
    sps_csr T, AP;     /* P_tent and A P (kept for the numeric re-setup; setup=gpu
                          leaves A P out, and the re-setup makes it) */
    double *dinv;      /* the smoother's scaling: 1 / l1 row sums (l1-Jacobi) or
                          1 / a_ii (Chebyshev); 0 on an empty row */
    double c1[SPS_AMG_MAX_DEGREE + 1], c2[SPS_AMG_MAX_DEGREE + 1]; /* Chebyshev steps */
    double rho;        /* the bound on lambda_max(D^-1 A) used for omega and Chebyshev */
    int bs;            /* unknowns per node */
    sps_idx nagg;      /* aggregates (nodes of the next level) */
    sps_idx *agg;      /* node -> aggregate */
    /* setup=gpu (amg_dsetup.cu) keeps its device levels on the device: agg and
     * the smoother's scaling there (dagg, ddinv; agg and dinv NULL until
     * sps__amg_host_copy), T, P, R and the next level's A as device copies
     * (their .dev) with only their sizes on the host. The device V-cycle
     * (amg.cu) computes on these copies in place. Freed by sps__amg_free. */
    sps_idx *dagg;
    double *ddinv;
    /* setup=gpu's device levels: A P's pattern (rows ap_nnz entries), on the
     * device only, for the numeric re-setup on the device (its values are
     * a temporary of each re-setup); NULL on a host level. */
    sps_idx *dap_rp, *dap_ci;
    int64_t ap_nnz;
    double *x, *b, *r, *d; /* host work vectors (host context only) */
} sps_amg_level;

/* The hierarchy: host arrays; owned by the host preconditioner, then by the
 * device one (which keeps it as the reference and for the summary). */
typedef struct sps_amg {
    int nlevels, smoother, sweeps, nnull;
    sps_amg_level lv[SPS_AMG_MAX_LEVELS];
    double *cinv; /* row-major inverse of the coarsest A (nc x nc) */
    double *dcinv; /* setup=gpu: cinv computed on the device (cinv NULL until
                      sps__amg_host_copy); the V-cycle uses it in place */
    sps_idx nc;
    double ms[6]; /* setup phases: strength, aggregate, prolong, galerkin, spectral, coarse */
    double op_complexity, grid_complexity;
    char desc[2048]; /* the summary (sps_precond_describe) */
    sps_amg_prm prm;   /* the parameters it was built with */
    uint64_t pattern;  /* level 0's pattern (sps__amg_pattern) */
    int gpu_levels;    /* levels built on the device (setup=gpu), 0: all on the host */
    double ms_download; /* setup=gpu: level 0 up (when it has no device copy), the
                           device levels' bookkeeping, a host level's A down */
    int host_partial;  /* setup=gpu: the device levels' arrays are not all on the host yet */
} sps_amg;

/* Build the hierarchy of A. B: k near-nullspace vectors (n x k column-major)
 * or NULL for the constant vector (k = 1); block: unknowns per node. */
sps_status sps__amg_build(sps_context *ctx, const sps_amg_prm *prm, const sps_csr *A,
                          int block, int k, const double *B, sps_amg *h);
void sps__amg_free(sps_amg *h);
/* h's header for a build of A (sizes, parameters; the caller sets h->pattern);
 * the block check. */
sps_status sps__amg_init(sps_context *ctx, const sps_amg_prm *prm, const sps_csr *A, int block,
                         int k, const double *B, sps_amg *h);
/* The host setup from level l0 on: h's levels below l0 are built, level
 * l0's matrix is A0 (l0 = 0) or h->lv[l0].A, B its nullspace (owned, freed;
 * NULL: the constant vector, l0 = 0 only); then the summary. */
sps_status sps__amg_build_from(sps_context *ctx, const sps_csr *A0, int l0, double *B, sps_amg *h);
/* Coarsen level l of n rows (not the coarsest)? */
int sps__amg_coarsen_more(const sps_amg_prm *prm, int l, sps_idx n);
/* rho, c1, c2 of L from m Lanczos steps (alpha, beta) and the Gershgorin
 * bound; m = 0: not SPD (the error). */
sps_status sps__amg_spectral_finish(sps_context *ctx, sps_idx n, double gersh, int degree,
                                    const double *alpha, const double *beta, int m,
                                    sps_amg_level *L);
/* Numeric-only re-setup for new values of A in the setup's pattern: the
 * aggregates and P_tent stay; the smoothers, P, R, the coarse matrices (in
 * their patterns) and the coarse inverse are recomputed, in the full
 * setup's order (bitwise the same result for the same values, up to the
 * sign of zeros). */
sps_status sps__amg_numeric(sps_context *ctx, const sps_csr *A, sps_amg *h);
/* Its levels from l0 on (level l0's matrix: A when l0 = 0, else
 * h->lv[l0].A with its new values) and the coarse inverse, on the host; no
 * pattern check (the caller's), no summary. */
sps_status sps__amg_numeric_from(sps_context *ctx, const sps_csr *A, sps_amg *h, int l0);
/* The error for a re-setup's A that is not in h's pattern (SPS_ERR_INVALID_ARG). */
sps_status sps__amg_pattern_error(sps_context *ctx, const sps_csr *A, const sps_amg *h);
/* *out = a fingerprint of A's pattern (sizes, row pointers, columns), on
 * the context's threads; the same for any number of threads. */
sps_status sps__amg_pattern(sps_context *ctx, const sps_csr *A, uint64_t *out);
/* The same in two steps, with no allocation and no error (the device setup
 * runs it on a thread of its own): the slots it needs, then the
 * fingerprint, slot holding that many. */
int64_t sps__amg_pattern_slots(const sps_csr *A);
uint64_t sps__amg_pattern_into(sps_context *ctx, const sps_csr *A, uint64_t *slot);
/* The summary of a built hierarchy into h->desc (extra: appended, may be ""). */
void sps__amg_describe(sps_amg *h, const char *extra);

/* Host pieces the tests reach too (amg_setup.c). */
/* Strength graph of a node matrix (values |.|, diagonal included): pattern
 * only, no diagonal: |a_ij| >= theta sqrt(|a_ii a_jj|). */
sps_status sps__amg_strength(sps_context *ctx, const sps_csr *A, int bs, double theta,
                             sps_csr *S);
/* MIS(2) aggregation of graph S: agg[i] in [0, *nagg). */
sps_status sps__amg_aggregate(sps_context *ctx, const sps_csr *S, sps_idx *agg, sps_idx *nagg);
/* fn(arg, lo, hi) over [0, n) in contiguous blocks on the context's threads
 * (one block, on this thread, below 2 x 4096 rows). */
typedef void (*sps_amg_rows_fn)(void *arg, sps_idx lo, sps_idx hi);
void sps__amg_par_rows(sps_context *ctx, sps_idx n, sps_amg_rows_fn fn, void *arg);
/* C = X Y (sorted rows), on the context's threads (amg_spgemm.c). */
sps_status sps__amg_spgemm(sps_context *ctx, const sps_csr *X, const sps_csr *Y, sps_csr *C);
/* C's values = X Y in C's pattern (a previous sps__amg_spgemm's), in its order. */
sps_status sps__amg_spgemm_into(sps_context *ctx, const sps_csr *X, const sps_csr *Y, sps_csr *C);
sps_status sps__amg_transpose(sps_context *ctx, const sps_csr *X, sps_csr *T);
/* inv = A^-1, row-major n x n (Gauss-Jordan in place, partial pivoting; a
 * zero row of A gets a unit diagonal): the coarse solve's inverse. */
sps_status sps__amg_dense_inverse(sps_context *ctx, const sps_csr *A, double *inv);

/* The hierarchy of an amg preconditioner (host or device), or NULL; a
 * device-built one is first copied into host memory (sps__amg_host_copy;
 * NULL if that fails). */
sps_amg *sps__amg_hierarchy(const sps_precond *pc);

/* The device setup's step timer's hook (sps__amg_prof_set). */
typedef void (*sps_amg_prof_fn)(void *arg, int level, const char *what, const char *step, double ms);

#if SPS_HAVE_CUDA
/* Device setup (amg.cu): takes h (owned from now on, freed by pc->destroy);
 * op0: level 0's operator on the device, owned when own_op0. */
sps_status sps__amg_gpu(sps_precond *pc, sps_amg *h, sps_operator *op0, int own_op0);
/* The device setup (amg_dsetup.cu), h as sps__amg_build makes it (block 1,
 * the constant nullspace): levels above prm->gpu_min rows on the
 * device, copied into h; the rest, and a level whose coarsening stalls, on
 * the host (sps__amg_build_from). */
sps_status sps__amg_build_gpu(sps_context *ctx, const sps_amg_prm *prm, const sps_csr *A,
                              sps_amg *h);
/* The device levels' arrays into h's host CSRs (agg, dinv, T, P, R, the
 * coarse A): what the numeric re-setup and the tests read. Once; a no-op
 * for a hierarchy built on the host. */
sps_status sps__amg_host_copy(sps_context *ctx, sps_amg *h);
/* The device setup's step timer (tests/tools/amg_prof): fn(arg, level,
 * what, step, ms) for each step of each product and phase (CUDA events on
 * the setup's stream; one synchronization at each product's end). NULL
 * (the default): off, nothing recorded. Process-wide: for a profiling tool. */
void sps__amg_prof_set(sps_amg_prof_fn fn, void *arg);
/* The numeric re-setup on the device (amg_dsetup.cu) of a hierarchy with
 * device levels: level 0's new values in d0 (on the device, in A's
 * pattern), A's host arrays for the pattern's check (its fingerprint, on a
 * thread of its own while the device works; a mismatch is
 * SPS_ERR_INVALID_ARG after the device levels were overwritten). Each
 * device level: the setup's spectral phase, then P, R, A P and A_c into
 * the patterns the setup kept, in the setup's arrays (the V-cycle's, in
 * place), the same sums: for the setup's values, bitwise the setup's
 * hierarchy. The levels the host built (after the device's) are the host
 * code's (sps__amg_numeric_from); the caller uploads them. The host's
 * copies of the device levels' values are dropped (host_partial). */
sps_status sps__amg_numeric_gpu(sps_context *ctx, const sps_csr *A, const struct sps_dcsr *d0, sps_amg *h);
/* amg.cu: a device preconditioner's hierarchy as it is (no host copy) and
 * its fine operator. */
sps_amg *sps__amg_gpu_hierarchy(sps_precond *pc, sps_operator **op0);
#endif

#ifdef __cplusplus
}
#endif
#endif
