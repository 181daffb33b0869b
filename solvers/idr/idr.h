/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/idr/idr.h: IDR(s)'s fused operations, with a host
 * (idr_host.c) and a CUDA (idr_kernels.cu) implementation. All gated: they
 * do nothing once the solve has stopped. */
#ifndef SPS_IDR_H
#define SPS_IDR_H

#include "../vops.h"
#include "idr_state.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { SPS_IDR_COMB_V = 0, SPS_IDR_COMB_U = 1 };

typedef struct sps_idr_ops {
    /* An IDR finish step (sps_kfin's fn: f->step is an sps_idr_step). */
    sps_status (*finish)(sps_kws *w, const sps_kfin *f);
    /* COMB_V: out = base - sum_{i=k..s-1} c_i basis_i;
     * COMB_U: out = om base + sum_{i=k..s-1} c_i basis_i (out may be basis_k).
     * basis_i = basis + i n; k and c from the state. */
    sps_status (*comb)(sps_kws *w, int mode, double *out, const double *base, const double *basis);
    /* g -= alpha gi;  u -= alpha ui */
    sps_status (*orth)(sps_kws *w, double *g, double *u, const double *gi, const double *ui);
    /* With a = beta (step SPS_IDR_R) or om (SPS_IDR_R2): r -= a g; x += a u
     * (an entry of x that would become NaN or Inf keeps its value and is
     * counted in s1); s0 = r'r; then the finish step. */
    sps_status (*update)(sps_kws *w, int step, double *x, double *r, const double *u,
                         const double *g);
} sps_idr_ops;

extern const sps_idr_ops sps__idr_ops_host;
extern const sps_idr_ops sps__idr_ops_cuda; /* defined only in a CUDA build */

#ifdef __cplusplus
}
#endif
#endif /* SPS_IDR_H */
