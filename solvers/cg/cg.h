/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/cg.h: CG's fused operations, with a host (cg_host.c)
 * and a CUDA (cg_kernels.cu) implementation. All gated (xp by xiter). */
#ifndef SPS_CG_H
#define SPS_CG_H

#include "../../spmv/backend.h"
#include "../vops.h"
#include "cg_state.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_cg_ops {
    /* A CG finish step (sps_kfin's fn: f->step is an sps_cg_step). */
    sps_status (*finish)(sps_kws *w, const sps_kfin *f);
    /* x += alpha p; r -= alpha q; z = dinv .* r when dinv != NULL;
     * s0 = r'r, s1 = r'z; then the finish step `step` (SPS_CG_RES_*). */
    sps_status (*update)(sps_kws *w, double *x, double *r, const double *p, const double *q,
                         const double *dinv, double *z, int step);
    /* p = z + beta p */
    sps_status (*direction)(sps_kws *w, double *p, const double *z);
    /* The finish `step` on s0 = the sum of w->red[0..nparts-1] in order (the
     * partials of a fused SpMV plus dot); gated like an sps_kfin. */
    sps_status (*finish_parts)(sps_kws *w, int nparts, int step, int gated);
    /* Fused engine: r -= alpha q; z = dinv .* r when dinv != NULL; s0 = r'r,
     * s1 = r'z; then the finish `step` (SPS_CG_RES_PLAIN or _FUSED). */
    sps_status (*resid)(sps_kws *w, double *r, const double *q, const double *dinv, double *z,
                        int step);
    /* Fused engine, in one pass: x += alpha p unless x is up to date
     * (xiter == iter); then, unless stopped, p = z + beta p. */
    sps_status (*xp)(sps_kws *w, double *x, double *p, const double *z);
    /* The one-kernel engine (CUDA only; NULL on the host): iterations
     * (SpMV over the operator's device rows, alpha, update with `step`,
     * direction) until the state says stop, in one thread block of one launch. */
    sps_status (*onekernel)(sps_kws *w, const sps_dev_rows *rows, double *x, double *r, double *p,
                            double *q, const double *dinv, double *z, int step);
} sps_cg_ops;

extern const sps_cg_ops sps__cg_ops_host;
extern const sps_cg_ops sps__cg_ops_cuda; /* defined only in a CUDA build */

#ifdef __cplusplus
}
#endif
#endif /* SPS_CG_H */
