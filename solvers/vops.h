/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/vops.h: the vector operations the Krylov drivers are written
 * over, with a host (vops_host.c) and a CUDA (vops_cuda.cu) implementation.
 *
 * The drivers (cg.c, bicgstab.c, gmres.c) only enqueue operations; they never
 * read a scalar. Scalars live in the workspace's sps_kstate (kstate.h), in the
 * vectors' memory space. Three kinds of operations:
 *
 *   ungated    copies, fills, scratch products (z = dinv .* r), the GEMVs of
 *              GMRES, and the end-of-cycle update: they always run.
 *   gated      every operation that changes x, r, p, ... or a scalar first
 *              reads st->stop and does nothing once it is set. This is what
 *              lets the GPU host enqueue k iterations blindly: those past the
 *              stop are no-ops, except SpMVs and preconditioner applications,
 *              which write scratch vectors only.
 *   reductions compute one or two sums, then run a finish step (kstate.h:
 *              sps__k_finish) that turns them into scalars, tests and decisions.
 *              The device reduces in a fixed order (block partials into a fixed
 *              array, then one block), with a grid that depends on n only, so
 *              runs are bitwise repeatable.
 *
 * The host implementation is the executable specification of the CUDA one:
 * the same operations in the same order, plain loops. */
#ifndef SPS_VOPS_H
#define SPS_VOPS_H

#include "../core/internal.h"
#include "kstate.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_kws sps_kws;

/* The workspace the operations act on (carved by solvers/solve.c). */
struct sps_kws {
    sps_context *ctx;
    const struct sps_vops *ops;
    sps_idx n;
    int grid;        /* device: blocks of every reduction (a function of n only) */
    sps_kstate *st;  /* the state, in the vectors' memory space */
    double *part;    /* device: SPS_K_NSUM * grid block partial sums */
    int nsum;        /* device: sums in part from the last reduction */
    double sums[SPS_K_NSUM]; /* host: the last reduction's sums */
    double *hist;    /* maxit + 1 residual norms, or NULL */
    sps_kgm gm;      /* GMRES small arrays */
    double *V;       /* GMRES basis: n x (m+1), column-major, leading dimension n */
    int m;           /* GMRES restart length */
};

typedef struct sps_vops {
    const char *name;

    /* ---- ungated -------------------------------------------------------- */
    /* dst = src */
    sps_status (*copy)(sps_kws *w, double *dst, const double *src);
    /* x = v */
    sps_status (*fill)(sps_kws *w, double *x, double v);
    /* x += z */
    sps_status (*add)(sps_kws *w, double *x, const double *z);
    /* z = dinv .* r (Jacobi applied on its own) */
    sps_status (*jacobi)(sps_kws *w, double *z, const double *dinv, const double *r);

    /* ---- reductions ----------------------------------------------------- */
    /* s0 = a'b, and s1 = c'd when c != NULL; then finish step fin(j). */
    sps_status (*dot)(sps_kws *w, const double *a, const double *b, const double *c,
                      const double *d, int fin, int64_t j);
    /* ||x|| with scaling: s0 = max |x_i| (finish SPS_FIN_AMAX, which sets
     * st->nrm_e), then s0 = sum (x_i 2^-nrm_e)^2 and finish step fin
     * (SPS_FIN_BNORM or SPS_FIN_TRUE: ungated). */
    sps_status (*nrm2)(sps_kws *w, const double *x, int fin);
    /* y = a x + b y (ungated; b = 0: y = a x, y is not read) */
    sps_status (*axpby)(sps_kws *w, double *y, double a, const double *x, double b);
    /* Finish step fin(j) again on the sums of the last reduction. */
    sps_status (*finish)(sps_kws *w, int fin, int64_t j);

    /* ---- state ---------------------------------------------------------- */
    /* The host check: copy the state out (on the GPU: one synchronization). */
    sps_status (*get_state)(sps_kws *w, sps_kstate *out);
    sps_status (*put_state)(sps_kws *w, const sps_kstate *in);
    /* The first len entries of the history. */
    sps_status (*get_history)(sps_kws *w, double *out, int64_t len);

    /* ---- CG (gated) ----------------------------------------------------- */
    /* x += alpha p; r -= alpha q; z = dinv .* r when dinv != NULL;
     * s0 = r'r, s1 = r'z; finish SPS_FIN_CG_RES(mode). */
    sps_status (*cg_update)(sps_kws *w, double *x, double *r, const double *p,
                            const double *q, const double *dinv, double *z, int mode);
    /* p = z + beta p */
    sps_status (*cg_direction)(sps_kws *w, double *p, const double *z);

    /* ---- BiCGSTAB (gated) ----------------------------------------------- */
    /* p = r + beta (p - omega v); phat = dinv .* p when dinv != NULL */
    sps_status (*bicg_p)(sps_kws *w, double *p, const double *r, const double *v,
                         const double *dinv, double *phat);
    /* s = r - alpha v; shat = dinv .* s when dinv != NULL; s0 = s's; finish
     * SPS_FIN_BICG_S */
    sps_status (*bicg_s)(sps_kws *w, double *s, const double *r, const double *v,
                         const double *dinv, double *shat);
    /* Iteration j (1-based, as the host counts): x += alpha phat + omega shat;
     * r = s - omega t; s0 = r'r, s1 = r0hat'r; finish SPS_FIN_BICG_R. An
     * entry of x that would become NaN or Inf keeps its value and is counted
     * in s2 (the finish stops with a breakdown). If the
     * solve stopped at the half step of this very iteration (st->half and
     * st->iter == j): x += alpha phat only. */
    sps_status (*bicg_x)(sps_kws *w, int64_t j, double *x, double *r, const double *phat,
                         const double *shat, const double *s, const double *t,
                         const double *r0hat);

    /* ---- GMRES ---------------------------------------------------------- */
    /* h = V[:, 0..ncols-1]' x  (ungated; h in the state's memory space) */
    sps_status (*gemv_t)(sps_kws *w, int64_t ncols, const double *x, double *h);
    /* x -= V[:, 0..ncols-1] h  (ungated) */
    sps_status (*gemv_n)(sps_kws *w, int64_t ncols, const double *h, double *x);
    /* Gated. j >= 0: V[:, j+1] = src / st->hn (H[j+1, j] before its rotation);
     * j = -1: V[:, 0] = src / g[0]. */
    sps_status (*gm_scale)(sps_kws *w, int64_t j, const double *src);
    /* y = R^-1 g over st->kdim columns (ungated; enqueued once per cycle). */
    sps_status (*gm_solve)(sps_kws *w);
    /* Ungated, st->kdim columns: u != NULL: u = V y; else x += V y, or
     * x += dinv .* (V y) when dinv != NULL (Jacobi fused). */
    sps_status (*gm_update)(sps_kws *w, double *x, const double *dinv, double *u);
} sps_vops;

extern const sps_vops sps__vops_host;
#if SPS_HAVE_CUDA
extern const sps_vops sps__vops_cuda;
/* Blocks of every device reduction for length n (fixed for a given n). */
int sps__vops_cuda_grid(sps_idx n);
#endif

#ifdef __cplusplus
}
#endif
#endif /* SPS_VOPS_H */
