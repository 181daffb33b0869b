/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/bicgstab.h: BiCGSTAB's fused operations, with a
 * host (bicgstab_host.c) and a CUDA (bicgstab_kernels.cu) implementation.
 * All gated. */
#ifndef SPS_BICGSTAB_H
#define SPS_BICGSTAB_H

#include "../../spmv/backend.h"
#include "../vops.h"
#include "bicgstab_state.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The one-kernel engine's arguments (bicgstab_onek.cuh: k_bicg_onek_regs,
 * k_bicg_onekernel): the rows, the nine vectors (x, r, r0hat, p, v, s, t,
 * phat, shat), D^-1 or NULL, the state and the history. */
typedef struct sps_bicg_onek {
    int n;
    sps_dev_rows A;
    double *x, *r, *r0, *p, *v, *s, *t, *ph, *sh;
    const double *dinv;
    sps_kstate *st;
    sps_bicg_state *bs;
    double *hist;
} sps_bicg_onek;

typedef struct sps_bicg_ops {
    /* A BiCGSTAB finish step (sps_kfin's fn: f->step is an sps_bicg_step). */
    sps_status (*finish)(sps_kws *w, const sps_kfin *f);
    /* p = r + beta (p - omega v); phat = dinv .* p when dinv != NULL */
    sps_status (*p)(sps_kws *w, double *p, const double *r, const double *v, const double *dinv,
                    double *phat);
    /* s = r - alpha v; shat = dinv .* s when dinv != NULL; s0 = s's; finish
     * SPS_BICG_S */
    sps_status (*s)(sps_kws *w, double *s, const double *r, const double *v, const double *dinv,
                    double *shat);
    /* Iteration j (1-based, as the host counts): x += alpha phat + omega shat;
     * r = s - omega t; s0 = r'r, s1 = r0hat'r; finish SPS_BICG_R. An entry of
     * x that would become NaN or Inf keeps its value and is counted in s2 (the
     * finish stops with a breakdown). If the solve stopped at the half step of
     * this very iteration (half and st->iter == j): x += alpha phat only. */
    sps_status (*x)(sps_kws *w, int64_t j, double *x, double *r, const double *phat,
                    const double *shat, const double *s, const double *t, const double *r0hat);
    /* The one-kernel engine (CUDA only; NULL on the host): the iterations
     * above (SpMVs over the operator's device rows, backend.h) until
     * the state says stop, in one thread block of one launch. vec: x r r0hat
     * p v s t phat shat (phat = p and shat = s without a preconditioner). */
    sps_status (*onekernel)(sps_kws *w, const sps_dev_rows *rows, double *const vec[9],
                            const double *dinv);
} sps_bicg_ops;

extern const sps_bicg_ops sps__bicg_ops_host;
extern const sps_bicg_ops sps__bicg_ops_cuda; /* defined only in a CUDA build */

#ifdef __cplusplus
}
#endif
#endif /* SPS_BICGSTAB_H */
