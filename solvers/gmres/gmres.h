/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres.h: GMRES's operations on its basis and small
 * arrays, with a host (gmres_host.c) and a CUDA (gmres_kernels.cu)
 * implementation. */
#ifndef SPS_GMRES_H
#define SPS_GMRES_H

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
} sps_gm_ws;

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
    /* Gated. j >= 0: V[:, j+1] = src / hn (H[j+1, j] before its rotation);
     * j = -1: V[:, 0] = src / g[0]. */
    sps_status (*scale)(sps_kws *w, const sps_gm_ws *g, int64_t j, const double *src);
    /* y = R^-1 g over kdim columns (ungated; enqueued once per cycle). */
    sps_status (*solve)(sps_kws *w, const sps_gm_ws *g);
    /* Ungated, kdim columns: u != NULL: u = V y; else x += V y, or
     * x += dinv .* (V y) when dinv != NULL (Jacobi fused). */
    sps_status (*update)(sps_kws *w, const sps_gm_ws *g, double *x, const double *dinv,
                         double *u);
} sps_gm_ops;

/* The table of an implementation whose functions are named P_gm_finish, ... */
#define SPS_GM_OPS_TABLE(P)                                                                 \
    {                                                                                       \
        .finish = P##_gm_finish, .gemv_t = P##_gemv_t, .gemv_n = P##_gemv_n,                \
        .scale = P##_gm_scale, .solve = P##_gm_solve, .update = P##_gm_update,              \
    }

extern const sps_gm_ops sps__gm_ops_host;
extern const sps_gm_ops sps__gm_ops_cuda; /* defined only in a CUDA build */

#ifdef __cplusplus
}
#endif
#endif /* SPS_GMRES_H */
