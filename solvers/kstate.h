/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/kstate.h: the solver state that lives beside the vectors, and
 * the scalar logic (stopping rule, breakdown tests, Givens rotations) shared
 * verbatim by the host ops and the device's finish kernel.
 *
 * Every scalar a Krylov method needs (rho, alpha, omega, norms, the tolerance,
 * the iteration count, the stop flag and the reason) lives in one sps_kstate in
 * the vectors' memory space. A "finish" step runs after each reduction: it gets
 * the reduced sums, updates the state and applies the tests. On the GPU it is
 * thread 0 of a one-block kernel; on the host, a plain call. Both execute the
 * functions below, so the two paths make the same decisions on the same
 * numbers. The struct holds only int64_t and double, so C and CUDA C++ agree
 * on its layout. */
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

/* GMRES stagnation (doc/solvers.md): at a restart that ends a window of
 * stag_win cycles (win = max(2, ceil(SPS_STAG_ITERS / m))), the true residual
 * fell by less than the fraction SPS_STAG_GAIN since the window began. */
#define SPS_STAG_GAIN 0.1
#define SPS_STAG_ITERS 500
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
#define SPS_K_NSUM 3

typedef struct sps_kstate {
    int64_t stop;     /* 0 iterating; 1 stopped (reason is set) */
    int64_t reason;   /* sps_reason */
    int64_t iter;     /* iterations completed */
    int64_t maxit;
    int64_t has_pc;   /* a preconditioner other than none (CG's r'z test) */
    int64_t half;     /* BiCGSTAB: iteration `iter` ended at its half step */
    int64_t tol_kind; /* SPS_CONVERGED_RTOL or SPS_CONVERGED_ATOL */
    int64_t m;        /* GMRES: restart length (H is (m+1) x m, column-major) */
    int64_t kdim;     /* GMRES: Arnoldi columns of this cycle the update uses */
    int64_t cycle;    /* GMRES: restarts done */
    int64_t stag_win; /* GMRES: stagnation window (cycles) */
    int64_t stag_at;  /* GMRES: cycle at which the current window began */
    int64_t nrm_e;    /* the scaled norm's exponent e (SPS_FIN_AMAX) */
    int64_t rescale_e; /* SPS_K_RESCALE: ||b|| is about 2^rescale_e */
    double rtol, atol, dtol;
    double bnorm, r0norm, rnorm, tol, true_rnorm, snorm;
    double rho, alpha, beta, omega;
    double hn;        /* GMRES: ||w|| of the last Arnoldi step (H[j+1, j] before rotation) */
    double stag_ref;  /* GMRES: true residual when the current window began */
} sps_kstate;

/* GMRES small dense arrays (same memory space as the state). */
typedef struct sps_kgm {
    double *H;  /* (m+1) x m, column-major; column j holds R[:, j] once rotated */
    double *cs, *sn; /* m Givens rotations */
    double *g;  /* m+1: rotated right-hand side beta*e1 */
    double *y;  /* m: solution of R y = g */
    double *h2; /* m+1: second Gram-Schmidt pass's coefficients */
} sps_kgm;

/* What a finish step does with the sums of the reduction before it. */
enum sps_fin {
    SPS_FIN_BNORM = 0,   /* s0 = b'b: ||b||, the tolerance; ZERO_RHS, NAN */
    SPS_FIN_R0,          /* s0 = r'r: ||r0||, history[0]; converged at 0 iterations */
    SPS_FIN_TRUE,        /* s0 = r'r of b - A x on exit */
    SPS_FIN_AMAX,        /* s0 = max |x_i|: the exponent of the scaled norm that follows */
    SPS_FIN_RESTART,     /* s0 = r'r of b - A x: residual replacement, the method starts again */
    SPS_FIN_CG_RHO0,     /* s0 = r'z: rho; INDEFINITE_PC */
    SPS_FIN_CG_ALPHA,    /* s0 = p'q: alpha = rho / p'q; INDEFINITE */
    SPS_FIN_CG_RES,      /* s0 = r'r [, s1 = r'z]: the iteration's residual test, beta (j: mode) */
    SPS_FIN_CG_RZ,       /* s0 = r'z: beta (general preconditioner) */
    SPS_FIN_BICG_ALPHA,  /* s0 = r0hat'v: alpha = rho / r0hat'v */
    SPS_FIN_BICG_S,      /* s0 = s's: half-step convergence */
    SPS_FIN_BICG_OMEGA,  /* s0 = t's, s1 = t't: omega */
    SPS_FIN_BICG_R,      /* s0 = r'r, s1 = r0hat'r, s2 = entries of x that would have
                          * become NaN or Inf (kept): residual test, rho and beta tests */
    SPS_FIN_GM_START,    /* s0 = r'r at a cycle's start (j = 1: a restart) */
    SPS_FIN_GM_ARNOLDI   /* s0 = w'w after CGS2, s1 = ||h||^2: Givens, residual test (j: column) */
};

/* CG's FIN_CG_RES modes: where the new rho = r'z comes from. */
enum { SPS_CG_PLAIN = 0, SPS_CG_FUSED = 1, SPS_CG_DEFERRED = 2 };

/* Finish steps that run whatever the stop flag says (all others do nothing
 * once the solve has stopped). */
SPS_HD static inline int sps__k_fin_gated(int fin)
{
    return fin != SPS_FIN_BNORM && fin != SPS_FIN_TRUE && fin != SPS_FIN_AMAX;
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

/* CG: the new rho = r'z gives beta; r'z <= 0 means M is not SPD. */
SPS_HD static inline void sps__k_cg_beta(sps_kstate *st, double rz)
{
    if (sps__k_nonfinite(rz)) {
        sps__k_stop(st, SPS_DIVERGED_NAN);
    } else if (st->has_pc && !(rz > 0.0)) {
        sps__k_stop(st, SPS_DIVERGED_INDEFINITE_PC);
    } else {
        st->beta = rz / st->rho; /* rho > 0: tested when it was set */
        st->rho = rz;
    }
}

/* Upper-triangular solve R y = g over the kdim columns of this cycle. Zero
 * pivots cannot occur: a column whose rotated diagonal is 0 is left out of
 * kdim when it is met (SPS_FIN_GM_ARNOLDI). */
SPS_HD static inline void sps__k_gm_solve(const sps_kstate *st, sps_kgm gm)
{
    /* Column-oriented back substitution: once y[i] is known, column i of R
     * (contiguous in column-major H) is subtracted from the entries above it.
     * Every y[r] sees its updates in the same order (i descending), so the
     * device's one-block version (vops_cuda.cu), which does each column's
     * update in parallel, computes the same sums. */
    int64_t k = st->kdim, ld = st->m + 1;
    for (int64_t i = 0; i < k; i++) gm.y[i] = gm.g[i];
    for (int64_t i = k - 1; i >= 0; i--) {
        double yi = gm.y[i] / gm.H[i + i * ld];
        gm.y[i] = yi;
        for (int64_t r = 0; r < i; r++) gm.y[r] -= gm.H[r + i * ld] * yi;
    }
}

/* GMRES: apply the previous rotations 0..j-1, in order, to column j of H;
 * returns the rotated entry of row j (still to be combined with H[j+1, j]).
 * The running value carries row i+1 from one rotation to the next. The device
 * runs the same sequence out of shared memory (vops_cuda.cu). */
SPS_HD static inline double sps__k_gm_rotate(double *col, const double *cs, const double *sn,
                                           int64_t j)
{
    double carry = col[0];
    for (int64_t i = 0; i < j; i++) {
        double c = cs[i], s = sn[i], next = col[i + 1];
        col[i] = c * carry + s * next;
        carry = -s * carry + c * next;
    }
    return carry;
}

/* GMRES, Arnoldi column j once rotated: a = rotated H[j, j], hn = ||w|| after
 * both Gram-Schmidt passes, hsq = ||h||^2 (so ||A z_j||^2 = hsq + hn^2). Makes
 * the new rotation, updates g and tests |g[j+1]|. */
SPS_HD static inline void sps__k_gm_arnoldi(sps_kstate *st, int64_t j, double a, double hn,
                                          double hsq, double *hist, sps_kgm gm)
{
    double *col = gm.H + j * (st->m + 1);
    st->hn = hn;
    if (a == 0.0 && hn == 0.0) {
        /* A z_j lies in the span of the earlier columns and adds nothing: the
         * Krylov space is invariant but the system is not solved in it
         * (singular A). Column j is left out of the update. */
        col[j] = 0.0;
        col[j + 1] = 0.0;
        st->kdim = j;
        st->iter++;
        st->rnorm = fabs(gm.g[j]); /* > tol, or the last iteration would have stopped */
        if (hist) hist[st->iter] = st->rnorm;
        sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
        return;
    }
    double r = hypot(a, hn), c = a / r, s = hn / r;
    col[j] = r;
    col[j + 1] = 0.0;
    gm.cs[j] = c;
    gm.sn[j] = s;
    gm.g[j + 1] = -s * gm.g[j];
    gm.g[j] = c * gm.g[j];
    st->kdim = j + 1;
    sps__k_residual(st, fabs(gm.g[j + 1]), hist);
    /* A NaN or Inf in this column: the update uses the columns before it
     * (their g entries are untouched), so x is the last good iterate. */
    if (st->reason == SPS_DIVERGED_NAN) st->kdim = j;
    /* Lucky breakdown: w vanished against A z_j. The Krylov space is invariant
     * and its solution is in hand (kdim columns); reaching it without meeting
     * the tolerance means A is singular on that space. */
    if (!st->stop && hn <= 4.0 * SPS_K_EPS * sqrt(hsq + hn * hn))
        sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
}

/* GMRES at the start of a cycle: s0 = r'r with r = b - A x in V[:, 0]. */
SPS_HD static inline void sps__k_gm_start(sps_kstate *st, int restart, double rr, sps_kgm gm)
{
    double rn = sqrt(rr);
    st->kdim = 0;
    if (restart) {
        /* The true residual replaces the recurrence's; no iteration is counted. */
        st->cycle++;
        st->rnorm = rn;
        int window_done = st->cycle - st->stag_at >= st->stag_win;
        if (sps__k_bad(rn)) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (rn <= st->tol) sps__k_stop(st, st->tol_kind);
        else if (rn > st->dtol * st->r0norm) sps__k_stop(st, SPS_DIVERGED_DTOL);
        else if (window_done && rn > (1.0 - SPS_STAG_GAIN) * st->stag_ref)
            sps__k_stop(st, SPS_DIVERGED_STAGNATION);
        if (window_done) {
            st->stag_at = st->cycle;
            st->stag_ref = rn;
        }
    }
    gm.g[0] = rn;
}

/* The finish step: s[] are the reduced sums of the reduction just done. */
SPS_HD static inline void sps__k_finish(int fin, int64_t j, sps_kstate *st, const double *s,
                                      double *hist, sps_kgm gm)
{
    if (sps__k_fin_gated(fin) && st->stop) return;
    switch (fin) {
    case SPS_FIN_BNORM: {
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
        break;
    }
    case SPS_FIN_R0: {
        double rn = sqrt(s[0]);
        st->r0norm = st->rnorm = st->stag_ref = rn;
        st->rho = s[0];
        st->alpha = st->omega = 1.0;
        st->beta = 0.0;
        if (hist) hist[0] = rn;
        if (sps__k_bad(rn)) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (rn <= st->tol) sps__k_stop(st, st->tol_kind);
        else if (st->maxit <= 0) sps__k_stop(st, SPS_DIVERGED_MAXIT);
        break;
    }
    case SPS_FIN_TRUE: st->true_rnorm = sps__k_norm(st, s[0]); break;
    case SPS_FIN_AMAX: st->nrm_e = sps__k_norm_exp(s[0]); break;
    case SPS_FIN_RESTART: {
        /* The true residual replaces the recurrence's; the method starts
         * again from x (no iteration is counted; r0norm stays). */
        double rn = sqrt(s[0]);
        st->rnorm = rn;
        st->rho = s[0];
        st->alpha = st->omega = 1.0;
        st->beta = 0.0;
        st->half = 0;
        if (sps__k_bad(rn)) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (rn <= st->tol) sps__k_stop(st, st->tol_kind);
        else if (st->iter >= st->maxit) sps__k_stop(st, SPS_DIVERGED_MAXIT);
        break;
    }
    case SPS_FIN_CG_RHO0:
        if (sps__k_nonfinite(s[0])) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (st->has_pc && !(s[0] > 0.0)) sps__k_stop(st, SPS_DIVERGED_INDEFINITE_PC);
        else st->rho = s[0];
        break;
    case SPS_FIN_CG_ALPHA:
        /* p'Ap <= 0: A is not SPD; stop before dividing. */
        if (sps__k_nonfinite(s[0])) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (!(s[0] > 0.0)) sps__k_stop(st, SPS_DIVERGED_INDEFINITE);
        else st->alpha = st->rho / s[0];
        break;
    case SPS_FIN_CG_RES:
        sps__k_residual(st, sqrt(s[0]), hist);
        if (st->stop) break;
        if (j == SPS_CG_PLAIN) sps__k_cg_beta(st, s[0]);
        else if (j == SPS_CG_FUSED) sps__k_cg_beta(st, s[1]);
        break;
    case SPS_FIN_CG_RZ: sps__k_cg_beta(st, s[0]); break;
    case SPS_FIN_BICG_ALPHA:
        if (sps__k_nonfinite(s[0])) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (s[0] == 0.0) sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
        else st->alpha = st->rho / s[0];
        break;
    case SPS_FIN_BICG_S: {
        double sn = sqrt(s[0]);
        st->snorm = sn;
        if (sps__k_bad(sn)) {
            sps__k_residual(st, sn, hist); /* stops with NAN; x is left as it was */
        } else if (sn <= st->tol) {
            /* Converged at the half step: x + alpha phat is the iterate. */
            st->half = 1;
            sps__k_residual(st, sn, hist);
        }
        break;
    }
    case SPS_FIN_BICG_OMEGA:
        if (sps__k_nonfinite(s[0]) || sps__k_nonfinite(s[1])) {
            sps__k_stop(st, SPS_DIVERGED_NAN);
        } else if (s[1] == 0.0) {
            /* t = A shat = 0: s cannot be reduced along t. Keep the half-step
             * iterate (its residual is s) and stop. */
            st->half = 1;
            sps__k_residual(st, st->snorm, hist);
            if (!(st->reason > 0)) sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
        } else {
            st->omega = s[0] / s[1];
        }
        break;
    case SPS_FIN_BICG_R: {
        sps__k_residual(st, sqrt(s[0]), hist);
        if (s[2] != 0.0 && !(st->stop && st->reason < 0)) {
            /* An entry of x would have become NaN or Inf (its column of A is
             * empty or the step overflowed); it kept its last finite value. */
            sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
            break;
        }
        if (st->stop) break;
        double rho = s[1];
        /* omega = 0: the next beta would divide by it. rho = r0hat'r ~ 0
         * (cosine of r and r0hat below eps^2, i.e. zero but for roundoff):
         * the next alpha and beta would divide by it. A cosine merely at eps
         * is not a breakdown: the method recovers (1138_bus, orsirr_1). */
        if (st->omega == 0.0 || sps__k_nonfinite(rho) ||
            fabs(rho) <= SPS_K_EPS * SPS_K_EPS * st->r0norm * st->rnorm) {
            sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
            break;
        }
        st->beta = (rho / st->rho) * (st->alpha / st->omega);
        st->rho = rho;
        break;
    }
    case SPS_FIN_GM_START: sps__k_gm_start(st, (int)j, s[0], gm); break;
    case SPS_FIN_GM_ARNOLDI: {
        double a = sps__k_gm_rotate(gm.H + j * (st->m + 1), gm.cs, gm.sn, j);
        sps__k_gm_arnoldi(st, j, a, sqrt(s[0]), s[1], hist, gm);
        break;
    }
    }
}

#ifdef __cplusplus
}
#endif
#endif /* SPS_KSTATE_H */
