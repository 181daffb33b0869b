/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/idr/idr_state.h: IDR(s)'s scalars and its finish steps, one
 * source for the host (idr_host.c) and the device (idr_kernels.cu). */
#ifndef SPS_IDR_STATE_H
#define SPS_IDR_STATE_H

#include "../kstate.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPS_IDR_SMAX 4      /* the state holds s x s: s <= 4 */
#define SPS_IDR_KAPPA 0.7   /* omega's angle safeguard (van Gijzen and Sonneveld 2011) */

typedef struct sps_idr_state {
    int64_t s;                 /* shadow space dimension */
    int64_t k;                 /* the next step of the cycle (0..s-1; s: the reduction) */
    double om, alpha, beta;
    double M[SPS_IDR_SMAX * SPS_IDR_SMAX]; /* M[i*SMAX + j] = P_i' G_j (lower triangular) */
    double f[SPS_IDR_SMAX];    /* P' r */
    double c[SPS_IDR_SMAX];    /* M(k:s,k:s) c = f(k:s) */
} sps_idr_state;

/* IDR(s)'s finish steps (all gated). SPS_IDR_ALPHA + i for the i-th
 * orthogonalisation of G_k. */
enum sps_idr_step {
    SPS_IDR_F = 0,  /* s[0..s) = P'r: f, k = 0, c */
    SPS_IDR_M,      /* s[0..s-k) = P_j'G_k, j = k..s-1: column k of M, beta */
    SPS_IDR_R,      /* s0 = r'r, s1 = entries of x kept (NaN/Inf): residual; f, k++, c */
    SPS_IDR_OM,     /* s0 = t'r, s1 = t't: omega with the angle safeguard */
    SPS_IDR_R2,     /* s0 = r'r, s1 = entries of x kept: residual after the reduction */
    SPS_IDR_INIT,   /* (no sums) a fresh start: M = I, om = 1, k = 0 */
    SPS_IDR_ALPHA   /* + i: s0 = P_i'G_k: alpha = s0 / M(i,i) */
};

#define SPS_IDR_AT(is, i, j) ((is)->M[(i) * SPS_IDR_SMAX + (j)])

/* c(k..s-1) from the lower triangular M(k:s,k:s) c = f(k:s); a zero or
 * non-finite pivot is a breakdown. */
SPS_HD static inline void sps__idr_c(sps_kstate *st, sps_idr_state *is)
{
    for (int64_t i = is->k; i < is->s; i++) {
        double v = is->f[i];
        for (int64_t j = is->k; j < i; j++) v -= SPS_IDR_AT(is, i, j) * is->c[j];
        double d = SPS_IDR_AT(is, i, i);
        if (d == 0.0 || sps__k_nonfinite(d) || sps__k_nonfinite(v)) {
            sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
            return;
        }
        is->c[i] = v / d;
    }
}

/* The residual after an update: the stopping rule; x entries that would
 * have become NaN or Inf (kept) are a breakdown. */
SPS_HD static inline int sps__idr_resid(sps_kstate *st, const double *s, double *hist)
{
    sps__k_residual(st, sqrt(s[0]), hist);
    if (s[1] != 0.0 && !(st->stop && st->reason < 0)) sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
    return !st->stop;
}

SPS_HD static inline void sps__idr_om(sps_kstate *st, sps_idr_state *is, const double *s)
{
    double tr = s[0], tt = s[1];
    if (sps__k_nonfinite(tr) || sps__k_nonfinite(tt)) {
        sps__k_stop(st, SPS_DIVERGED_NAN);
        return;
    }
    if (tt == 0.0) {
        sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
        return;
    }
    double om = tr / tt, tn = sqrt(tt), rn = st->rnorm;
    double rho = rn > 0.0 ? fabs(tr) / (tn * rn) : 1.0;
    if (rho < SPS_IDR_KAPPA && rho > 0.0) om *= SPS_IDR_KAPPA / rho;
    if (om == 0.0) {
        sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
        return;
    }
    is->om = om;
}

SPS_HD static inline void sps__idr_finish(int step, sps_kstate *st, sps_idr_state *is,
                                        const double *s, double *hist)
{
    if (st->stop) return;
    int64_t k = is->k;
    if (step >= SPS_IDR_ALPHA) {
        int64_t i = step - SPS_IDR_ALPHA;
        if (sps__k_nonfinite(s[0])) sps__k_stop(st, SPS_DIVERGED_NAN);
        else is->alpha = s[0] / SPS_IDR_AT(is, i, i);
        return;
    }
    switch (step) {
    case SPS_IDR_INIT:
        for (int i = 0; i < SPS_IDR_SMAX * SPS_IDR_SMAX; i++) is->M[i] = i % (SPS_IDR_SMAX + 1) ? 0.0 : 1.0;
        is->om = 1.0;
        is->k = 0;
        break;
    case SPS_IDR_F:
        for (int64_t i = 0; i < is->s; i++) is->f[i] = s[i];
        is->k = 0;
        sps__idr_c(st, is);
        break;
    case SPS_IDR_M:
        for (int64_t j = k; j < is->s; j++) SPS_IDR_AT(is, j, k) = s[j - k];
        if (SPS_IDR_AT(is, k, k) == 0.0 || sps__k_nonfinite(SPS_IDR_AT(is, k, k)))
            sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
        else is->beta = is->f[k] / SPS_IDR_AT(is, k, k);
        break;
    case SPS_IDR_R:
        if (!sps__idr_resid(st, s, hist)) return;
        for (int64_t j = k + 1; j < is->s; j++) is->f[j] -= is->beta * SPS_IDR_AT(is, j, k);
        is->k = k + 1;
        if (is->k < is->s) sps__idr_c(st, is);
        break;
    case SPS_IDR_OM: sps__idr_om(st, is, s); break;
    case SPS_IDR_R2: sps__idr_resid(st, s, hist); break;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* SPS_IDR_STATE_H */
