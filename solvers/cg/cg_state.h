/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/cg_state.h: CG's scalars and its finish steps, one
 * source for the host (cg_host.c) and the device (cg_kernels.cu). */
#ifndef SPS_CG_STATE_H
#define SPS_CG_STATE_H

#include "../kstate.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_cg_state {
    double rho, alpha, beta;
} sps_cg_state;

/* The state a solve carves (cg.c): CG's, then the fused engine's xiter
 * (st->iter when x was last brought up to date). */
typedef struct sps_cg_xstate {
    sps_cg_state cg;
    double xiter;
} sps_cg_xstate;

/* CG's finish steps (all gated). */
enum sps_cg_step {
    SPS_CG_INIT = 0,     /* s0 = r'r (no preconditioner): rho */
    SPS_CG_RHO0,         /* s0 = r'z: rho; INDEFINITE_PC */
    SPS_CG_ALPHA,        /* s0 = p'q: alpha = rho / p'q; INDEFINITE */
    SPS_CG_RES_PLAIN,    /* s0 = r'r: the residual test; beta from r'r */
    SPS_CG_RES_FUSED,    /* s0 = r'r, s1 = r'z (Jacobi fused): the residual test; beta from r'z */
    SPS_CG_RES_DEFERRED, /* s0 = r'r: the residual test (r'z comes later: SPS_CG_RZ) */
    SPS_CG_RZ,           /* s0 = r'z: beta (general preconditioner) */
    SPS_CG_ALPHA_X       /* fused engine, ungated: xiter = iter (x is up to date); then ALPHA */
};

/* The new rho = r'z gives beta; r'z <= 0 means M is not SPD. */
SPS_HD static inline void sps__cg_beta(sps_kstate *st, sps_cg_state *cs, double rz)
{
    if (sps__k_nonfinite(rz)) {
        sps__k_stop(st, SPS_DIVERGED_NAN);
    } else if (st->has_pc && !(rz > 0.0)) {
        sps__k_stop(st, SPS_DIVERGED_INDEFINITE_PC);
    } else {
        cs->beta = rz / cs->rho; /* rho > 0: tested when it was set */
        cs->rho = rz;
    }
}

SPS_HD static inline void sps__cg_finish(int step, sps_kstate *st, sps_cg_state *cs,
                                       const double *s, double *hist)
{
    if (step == SPS_CG_ALPHA_X) {
        ((sps_cg_xstate *)cs)->xiter = (double)st->iter;
        step = SPS_CG_ALPHA;
    }
    if (st->stop) return;
    switch (step) {
    case SPS_CG_INIT: cs->rho = s[0]; break;
    case SPS_CG_RHO0:
        if (sps__k_nonfinite(s[0])) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (st->has_pc && !(s[0] > 0.0)) sps__k_stop(st, SPS_DIVERGED_INDEFINITE_PC);
        else cs->rho = s[0];
        break;
    case SPS_CG_ALPHA:
        /* p'Ap <= 0: A is not SPD; stop before dividing. */
        if (sps__k_nonfinite(s[0])) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (!(s[0] > 0.0)) sps__k_stop(st, SPS_DIVERGED_INDEFINITE);
        else cs->alpha = cs->rho / s[0];
        break;
    case SPS_CG_RES_PLAIN:
    case SPS_CG_RES_FUSED:
    case SPS_CG_RES_DEFERRED:
        sps__k_residual(st, sqrt(s[0]), hist);
        if (st->stop) break;
        if (step == SPS_CG_RES_PLAIN) sps__cg_beta(st, cs, s[0]);
        else if (step == SPS_CG_RES_FUSED) sps__cg_beta(st, cs, s[1]);
        break;
    case SPS_CG_RZ: sps__cg_beta(st, cs, s[0]); break;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* SPS_CG_STATE_H */
