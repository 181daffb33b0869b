/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/bicgstab_state.h: BiCGSTAB's scalars and its
 * finish steps, one source for the host (bicgstab_host.c) and the device
 * (bicgstab_kernels.cu). */
#ifndef SPS_BICGSTAB_STATE_H
#define SPS_BICGSTAB_STATE_H

#include "../kstate.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_bicg_state {
    int64_t half; /* iteration `iter` ended at its half step */
    double rho, alpha, beta, omega;
    double snorm; /* ||s|| of the half step */
} sps_bicg_state;

/* BiCGSTAB's finish steps (all gated). */
enum sps_bicg_step {
    SPS_BICG_INIT = 0, /* s0 = r'r: rho; alpha = omega = 1, beta = 0 (the first p is r) */
    SPS_BICG_ALPHA,    /* s0 = r0hat'v: alpha = rho / r0hat'v */
    SPS_BICG_S,        /* s0 = s's: half-step convergence */
    SPS_BICG_OMEGA,    /* s0 = t's, s1 = t't: omega */
    SPS_BICG_R         /* s0 = r'r, s1 = r0hat'r, s2 = entries of x that would have
                        * become NaN or Inf (kept): residual test, rho and beta tests */
};

SPS_HD static inline void sps__bicg_omega(sps_kstate *st, sps_bicg_state *bs, const double *s,
                                        double *hist)
{
    if (sps__k_nonfinite(s[0]) || sps__k_nonfinite(s[1])) {
        sps__k_stop(st, SPS_DIVERGED_NAN);
    } else if (s[1] == 0.0) {
        /* t = A shat = 0: s cannot be reduced along t. Keep the half-step
         * iterate (its residual is s) and stop. */
        bs->half = 1;
        sps__k_residual(st, bs->snorm, hist);
        if (!(st->reason > 0)) sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
    } else {
        bs->omega = s[0] / s[1];
    }
}

SPS_HD static inline void sps__bicg_r(sps_kstate *st, sps_bicg_state *bs, const double *s,
                                    double *hist)
{
    sps__k_residual(st, sqrt(s[0]), hist);
    if (s[2] != 0.0 && !(st->stop && st->reason < 0)) {
        /* An entry of x would have become NaN or Inf (its column of A is
         * empty or the step overflowed); it kept its last finite value. */
        sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
        return;
    }
    if (st->stop) return;
    double rho = s[1];
    /* omega = 0: the next beta would divide by it. rho = r0hat'r ~ 0
     * (cosine of r and r0hat below eps^2, i.e. zero but for roundoff):
     * the next alpha and beta would divide by it. A cosine merely at eps
     * is not a breakdown: the method recovers (1138_bus, orsirr_1). */
    if (bs->omega == 0.0 || sps__k_nonfinite(rho) ||
        fabs(rho) <= SPS_K_EPS * SPS_K_EPS * st->r0norm * st->rnorm) {
        sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
        return;
    }
    bs->beta = (rho / bs->rho) * (bs->alpha / bs->omega);
    bs->rho = rho;
}

SPS_HD static inline void sps__bicg_finish(int step, sps_kstate *st, sps_bicg_state *bs,
                                         const double *s, double *hist)
{
    if (st->stop) return;
    switch (step) {
    case SPS_BICG_INIT:
        bs->rho = s[0];
        bs->alpha = bs->omega = 1.0;
        bs->beta = 0.0;
        bs->half = 0;
        break;
    case SPS_BICG_ALPHA:
        if (sps__k_nonfinite(s[0])) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (s[0] == 0.0) sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
        else bs->alpha = bs->rho / s[0];
        break;
    case SPS_BICG_S: {
        double sn = sqrt(s[0]);
        bs->snorm = sn;
        if (sps__k_bad(sn)) {
            sps__k_residual(st, sn, hist); /* stops with NAN; x is left as it was */
        } else if (sn <= st->tol) {
            /* Converged at the half step: x + alpha phat is the iterate. */
            bs->half = 1;
            sps__k_residual(st, sn, hist);
        }
        break;
    }
    case SPS_BICG_OMEGA: sps__bicg_omega(st, bs, s, hist); break;
    case SPS_BICG_R: sps__bicg_r(st, bs, s, hist); break;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* SPS_BICGSTAB_STATE_H */
