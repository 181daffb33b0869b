/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/kstate.h: the state every method shares, which lives beside
 * the vectors, and the common scalar logic (stopping rule, norms with scaling,
 * the setup and exit steps) shared verbatim by the host ops and the device's
 * finish kernels.
 *
 * The stop flag, the reason, the iteration count, the tolerances and the norms
 * live in one sps_kstate in the vectors' memory space; each method's own
 * scalars live in its own struct right after it (solvers/<method>/). A
 * "finish" step runs after each reduction: it gets the reduced sums, updates
 * the state and applies the tests. On the GPU it is thread 0 of a one-block
 * kernel; on the host, a plain call. Both execute the same SPS_HD functions,
 * so the two paths make the same decisions on the same numbers. The structs
 * hold only int64_t and double, so C and CUDA C++ agree on their layout. */
#ifndef SPS_KSTATE_H
#define SPS_KSTATE_H

#include <math.h>
#include <stdint.h>

#include "spsolve.h"

#ifdef __CUDACC__
#define SPS_HD __host__ __device__
#else
#define SPS_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define SPS_K_EPS 2.220446049250313e-16 /* DBL_EPSILON */
#define SPS_K_HUGE 1.7976931348623157e308 /* DBL_MAX */
/* Norms with scaling (doc/solvers.md, "Scaling"): ||b|| and the true residual
 * are sqrt(sum (x_i 2^-e)^2) 2^e with 2^e near max |x_i|, exact powers of two,
 * so the result equals sqrt(x'x) bitwise wherever x'x neither overflows nor
 * underflows. A ||b|| whose binary exponent is outside +-SPS_K_SAFE_EXP makes
 * the solve rescale b and x0 by a power of two (internal stop reason
 * SPS_K_RESCALE), so that every per-iteration sum of squares stays in range. */
#define SPS_K_SAFE_EXP 250
#define SPS_K_RESCALE 100
/* Most residual replacements (the true residual overruling the recurrence). */
#define SPS_K_MAX_REPLACE 3
/* Most sums one reduction produces. */
#define SPS_K_NSUM 8

/* The state every method shares. A method's own scalars (rho, alpha, ...) are
 * its own struct (solvers/<method>/<method>_state.h), placed right after this
 * one in the same memory space. */
typedef struct sps_kstate {
    int64_t stop;     /* 0 iterating; 1 stopped (reason is set) */
    int64_t reason;   /* sps_reason */
    int64_t iter;     /* iterations completed */
    int64_t maxit;
    int64_t has_pc;   /* a preconditioner other than none */
    int64_t tol_kind; /* SPS_CONVERGED_RTOL or SPS_CONVERGED_ATOL */
    int64_t restarts; /* restarts done (a method's count, reported in the info) */
    int64_t nrm_e;    /* the scaled norm's exponent e (SPS_KC_AMAX) */
    int64_t rescale_e; /* SPS_K_RESCALE: ||b|| is about 2^rescale_e */
    double rtol, atol, dtol;
    double bnorm, r0norm, rnorm, tol, true_rnorm;
} sps_kstate;

/* The finish steps every method shares (a method's own steps are its enum). */
enum sps_kc_step {
    SPS_KC_BNORM = 0, /* s0 = b'b: ||b||, the tolerance; ZERO_RHS, NAN (ungated) */
    SPS_KC_R0,        /* s0 = r'r: ||r0||, history[0]; converged at 0 iterations */
    SPS_KC_TRUE,      /* s0 = r'r of b - A x on exit (ungated) */
    SPS_KC_AMAX,      /* s0 = max |x_i|: the exponent of the scaled norm that follows (ungated) */
    SPS_KC_RESTART    /* s0 = r'r of b - A x: residual replacement, the method starts again */
};

/* Common steps that run whatever the stop flag says (all others, and every
 * method's own steps, do nothing once the solve has stopped). */
SPS_HD static inline int sps__k_fin_gated(int step)
{
    return step != SPS_KC_BNORM && step != SPS_KC_TRUE && step != SPS_KC_AMAX;
}

/* The scale exponent of a norm from max |x_i| (0 when the maximum is 0 or not
 * finite: nothing to scale). Clamped so that 2^-e is a double. */
SPS_HD static inline int64_t sps__k_norm_exp(double amax)
{
    if (!(amax > 0.0) || !(amax <= SPS_K_HUGE)) return 0;
    int e;
    frexp(amax, &e);
    return e < -1000 ? -1000 : e;
}

/* The norm from the scaled sum of squares s (sum of (x_i 2^-e)^2). */
SPS_HD static inline double sps__k_norm(const struct sps_kstate *st, double s)
{
    return ldexp(sqrt(s), (int)st->nrm_e);
}

/* NaN or +Inf (for norms, which are never negative). */
SPS_HD static inline int sps__k_bad(double v) { return !(v <= SPS_K_HUGE); }
/* NaN or +-Inf. */
SPS_HD static inline int sps__k_nonfinite(double v) { return !(v - v == 0.0); }

SPS_HD static inline void sps__k_stop(sps_kstate *st, int64_t reason)
{
    st->stop = 1;
    st->reason = reason;
}

/* An iteration finished with residual norm rn: count it, record it, and apply
 * the stopping rule (converged, NaN/Inf, dtol, maxit: in this order). */
SPS_HD static inline void sps__k_residual(sps_kstate *st, double rn, double *hist)
{
    st->iter++;
    st->rnorm = rn;
    if (hist) hist[st->iter] = rn;
    if (sps__k_bad(rn)) sps__k_stop(st, SPS_DIVERGED_NAN);
    else if (rn <= st->tol) sps__k_stop(st, st->tol_kind);
    else if (rn > st->dtol * st->r0norm) sps__k_stop(st, SPS_DIVERGED_DTOL);
    else if (st->iter >= st->maxit) sps__k_stop(st, SPS_DIVERGED_MAXIT);
}

SPS_HD static inline void sps__k_bnorm(sps_kstate *st, const double *s, double *hist)
{
    double bn = sps__k_norm(st, s[0]), rt = st->rtol * bn;
    st->bnorm = bn;
    st->tol = rt >= st->atol ? rt : st->atol;
    st->tol_kind = rt >= st->atol ? SPS_CONVERGED_RTOL : SPS_CONVERGED_ATOL;
    int be = 0;
    if (s[0] > 0.0 && s[0] <= SPS_K_HUGE) frexp(sqrt(s[0]), &be);
    be += (int)st->nrm_e;
    if (s[0] > 0.0 && s[0] <= SPS_K_HUGE && (be < -SPS_K_SAFE_EXP || be > SPS_K_SAFE_EXP)) {
        st->rescale_e = be;
        sps__k_stop(st, SPS_K_RESCALE);
    } else if (sps__k_bad(bn)) sps__k_stop(st, SPS_DIVERGED_NAN);
    else if (bn == 0.0) sps__k_stop(st, SPS_CONVERGED_ZERO_RHS);
    if (st->stop) {
        /* No residual will be computed: b = 0 gives x = 0 and r = 0; a
         * NaN or Inf in b makes r so. */
        st->r0norm = st->rnorm = bn;
        if (hist) hist[0] = bn;
    }
}

/* A common finish step: s[] are the reduced sums of the reduction just done.
 * The method's start runs its own initial step on the same sums after
 * SPS_KC_R0 and SPS_KC_RESTART. */
SPS_HD static inline void sps__k_common_finish(int step, sps_kstate *st, const double *s,
                                             double *hist)
{
    if (sps__k_fin_gated(step) && st->stop) return;
    switch (step) {
    case SPS_KC_BNORM: sps__k_bnorm(st, s, hist); break;
    case SPS_KC_R0: {
        double rn = sqrt(s[0]);
        st->r0norm = st->rnorm = rn;
        if (hist) hist[0] = rn;
        if (sps__k_bad(rn)) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (rn <= st->tol) sps__k_stop(st, st->tol_kind);
        else if (st->maxit <= 0) sps__k_stop(st, SPS_DIVERGED_MAXIT);
        break;
    }
    case SPS_KC_TRUE: st->true_rnorm = sps__k_norm(st, s[0]); break;
    case SPS_KC_AMAX: st->nrm_e = sps__k_norm_exp(s[0]); break;
    case SPS_KC_RESTART: {
        /* The true residual replaces the recurrence's; the method starts
         * again from x (no iteration is counted; r0norm stays). */
        double rn = sqrt(s[0]);
        st->rnorm = rn;
        if (sps__k_bad(rn)) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (rn <= st->tol) sps__k_stop(st, st->tol_kind);
        else if (st->iter >= st->maxit) sps__k_stop(st, SPS_DIVERGED_MAXIT);
        break;
    }
    }
}

/* Host (solvers/solve.c): the fields of sps_solve_info every driver reports
 * from its final state: reason, iterations, restarts, the norms scaled by
 * 2^un (back from a rescaled problem; 0 if none), the relative norms (a bad
 * ||b|| reported as it is), and the phase times from the clock readings t[0]
 * (start), t[1] (first iteration), t[2] (last), t[3] (end). The rest of info
 * is left as it is. */
void sps__kstate_report(const sps_kstate *st, int un, const double t[4], sps_solve_info *info);

#ifdef __cplusplus
}
#endif
#endif /* SPS_KSTATE_H */
