/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres_state.h: GMRES's scalars and small arrays, its
 * finish steps and Givens rotations, one source for the host (gmres_host.c)
 * and the device (gmres_kernels.cu). */
#ifndef SPS_GMRES_STATE_H
#define SPS_GMRES_STATE_H

#include "../kstate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GMRES stagnation (doc/solvers.md): at a restart that ends a window of
 * stag_win cycles (win = max(2, ceil(SPS_STAG_ITERS / m))), the true residual
 * fell by less than the fraction SPS_STAG_GAIN since the window began. */
#define SPS_STAG_GAIN 0.1
#define SPS_STAG_ITERS 500

typedef struct sps_gm_state {
    int64_t m;        /* restart length (H is (m+1) x m, column-major) */
    int64_t kdim;     /* Arnoldi columns of this cycle the update uses */
    int64_t stag_win; /* stagnation window (cycles) */
    int64_t stag_at;  /* cycle (st->restarts) at which the current window began */
    int64_t reorth;   /* this Arnoldi step takes the second Gram-Schmidt pass (SPS_GM_CHECK) */
    int64_t orth;     /* SPS_GM_ORTH_CGS2 or SPS_GM_ORTH_DCGS2 (gmres.c gm_orth) */
    double hn;        /* ||w|| of the last Arnoldi step (H[j+1, j] before rotation) */
    int64_t dstep;    /* DCGS2: the step whose products' finish ran last (-1: none yet) */
    double omega, cj; /* DCGS2, that step: ||v_j|| before its scaling, v_j'y (sps__gm_dcgs2_prod) */
    double stag_ref;  /* true residual when the current window began */
} sps_gm_state;

/* GMRES small dense arrays (same memory space as the state). */
typedef struct sps_kgm {
    double *H;  /* (m+1) x m, column-major; column j holds R[:, j] once rotated */
    double *cs, *sn; /* m Givens rotations */
    double *g;  /* m+1: rotated right-hand side beta*e1 */
    double *y;  /* m: solution of R y = g */
    double *h2; /* m+1: second Gram-Schmidt pass's coefficients */
    double *U;  /* DCGS2 only (else NULL): m(m-1)/2, column l of the unit upper
                 * triangle packed at l(l-1)/2 (sps__gm_dcgs2_prod) */
    double *d;  /* DCGS2 only: 2(m+1), step j's products [V_0..V_j]'V_j, then
                 * (at m+1) [V_0..V_j]'y (sps__gm_dcgs2_prod) */
} sps_kgm;

/* The orthogonalization of the classic steps (gmres:orth=, SPS_GM_ORTH). */
enum { SPS_GM_ORTH_CGS2 = 0, SPS_GM_ORTH_DCGS2 = 1 };

/* GMRES's finish steps (all gated). */
enum sps_gm_step {
    SPS_GM_START0 = 0, /* s0 = r0'r0 at the first cycle: g = ||r0|| e1; the stagnation reference */
    SPS_GM_START,      /* s0 = r'r after a residual replacement: g = ||r|| e1 */
    SPS_GM_RESTART,    /* s0 = r'r of b - A x at a restart: tests, g = ||r|| e1 */
    SPS_GM_ARNOLDI,    /* s0 = w'w after the second pass: Givens, residual test (arg: column);
                          runs only when SPS_GM_CHECK asked for the second pass */
    SPS_GM_CHECK       /* s0 = w'w after the first pass: the second pass or, without it,
                          the Arnoldi step (arg: column) */
};

/* Selective reorthogonalization (Daniel, Gragg, Kaufman and Stewart, 1976):
 * the second classical Gram-Schmidt pass runs only when the first removed
 * more than half of w's square norm, ||w_after|| < ||w_before|| / sqrt(2).
 * With h = V'w, ||w_before||^2 = ||h||^2 + ||w_after||^2, so the test needs
 * no other product: ||w_after||^2 < ||h||^2. A pass that keeps most of w is
 * orthogonal to working precision already; one that cancels most of it is
 * repeated (twice is enough). */
SPS_HD static inline int64_t sps__gm_reorth(double ww, double hsq) { return !(ww >= hsq); }

/* Upper-triangular solve R y = g over the kdim columns of this cycle. Zero
 * pivots cannot occur: a column whose rotated diagonal is 0 is left out of
 * kdim when it is met (SPS_GM_ARNOLDI). */
SPS_HD static inline void sps__gm_solve(const sps_gm_state *gs, sps_kgm gm)
{
    /* Column-oriented back substitution: once y[i] is known, column i of R
     * (contiguous in column-major H) is subtracted from the entries above it.
     * Every y[r] sees its updates in the same order (i descending), so the
     * device's one-block version (gmres_kernels.cu), which does each column's
     * update in parallel, computes the same sums. */
    int64_t k = gs->kdim, ld = gs->m + 1;
    for (int64_t i = 0; i < k; i++) gm.y[i] = gm.g[i];
    for (int64_t i = k - 1; i >= 0; i--) {
        double yi = gm.y[i] / gm.H[i + i * ld];
        gm.y[i] = yi;
        for (int64_t r = 0; r < i; r++) gm.y[r] -= gm.H[r + i * ld] * yi;
    }
    if (gs->orth != SPS_GM_ORTH_DCGS2) return;
    /* DCGS2's directions are D = M^-1 V U (sps__gm_dcgs2_prod): y <- U y, row i
     * summed over l = i+1 .. k-1 in order. Rows ascending read only rows
     * below them, still U's input; the device (one thread a row) sums each
     * row in the same order. */
    for (int64_t i = 0; i < k; i++) {
        double t = gm.y[i];
        for (int64_t l = i + 1; l < k; l++) t += gm.U[l * (l - 1) / 2 + i] * gm.y[l];
        gm.y[i] = t;
    }
}

/* Apply the previous rotations 0..j-1, in order, to column j of H; returns
 * the rotated entry of row j (still to be combined with H[j+1, j]). The
 * running value carries row i+1 from one rotation to the next: an affine
 * recurrence, which the device runs as a scan over the block (rotate_scan in
 * gmres_kernels.cu; the same maps, rounded in another order). */
SPS_HD static inline double sps__gm_rotate(double *col, const double *cs, const double *sn,
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

/* Arnoldi column j once rotated: a = rotated H[j, j], hn = ||w|| after both
 * Gram-Schmidt passes, hsq = ||h||^2 (so ||A z_j||^2 = hsq + hn^2). Makes the
 * new rotation, updates g and tests |g[j+1]|. */
SPS_HD static inline void sps__gm_arnoldi_col(sps_kstate *st, sps_gm_state *gs, int64_t j, double *col,
                                            double a, double hn, double hsq, double *hist, sps_kgm gm)
{
    gs->hn = hn;
    if (a == 0.0 && hn == 0.0) {
        /* A z_j lies in the span of the earlier columns and adds nothing: the
         * Krylov space is invariant but the system is not solved in it
         * (singular A). Column j is left out of the update. */
        col[j] = 0.0;
        col[j + 1] = 0.0;
        gs->kdim = j;
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
    gs->kdim = j + 1;
    sps__k_residual(st, fabs(gm.g[j + 1]), hist);
    /* A NaN or Inf in this column: the update uses the columns before it
     * (their g entries are untouched), so x is the last good iterate. */
    if (st->reason == SPS_DIVERGED_NAN) gs->kdim = j;
    /* Lucky breakdown: w vanished against A z_j. The Krylov space is invariant
     * and its solution is in hand (kdim columns); reaching it without meeting
     * the tolerance means A is singular on that space. */
    if (!st->stop && hn <= 4.0 * SPS_K_EPS * sqrt(hsq + hn * hn))
        sps__k_stop(st, SPS_DIVERGED_BREAKDOWN);
}

/* The same with column j in H (col = H[:, j]; the one-kernel path keeps the
 * column it works on elsewhere and passes it to sps__gm_arnoldi_col). */
SPS_HD static inline void sps__gm_arnoldi(sps_kstate *st, sps_gm_state *gs, int64_t j, double a,
                                        double hn, double hsq, double *hist, sps_kgm gm)
{
    sps__gm_arnoldi_col(st, gs, j, gm.H + j * (gs->m + 1), a, hn, hsq, hist, gm);
}

/* SPS_GM_CHECK and SPS_GM_ARNOLDI on one thread (the host's h_gm_finish and
 * the one-kernel path's thread 0), column j in col, ww = w'w: CHECK takes
 * hsq = ||h||^2 in row order and sets reorth (sps__gm_reorth); without the
 * second pass, or at ARNOLDI after adding h2 into col when reorth is set,
 * the previous rotations (sps__gm_rotate) and the Arnoldi step with
 * hn = sqrt(ww). */
SPS_HD static inline void sps__gm_column(int step, sps_kstate *st, sps_gm_state *gs, int64_t j,
                                       double *col, double ww, double *hist, sps_kgm gm)
{
    double hsq = 0;
    if (step == SPS_GM_CHECK) {
        for (int64_t i = 0; i <= j; i++) hsq += col[i] * col[i];
        gs->reorth = sps__gm_reorth(ww, hsq);
        if (gs->reorth) return;
    } else {
        if (!gs->reorth) return;
        for (int64_t i = 0; i <= j; i++) {
            col[i] += gm.h2[i];
            hsq += col[i] * col[i];
        }
    }
    double a = sps__gm_rotate(col, gm.cs, gm.sn, j);
    sps__gm_arnoldi_col(st, gs, j, col, a, sqrt(ww), hsq, hist, gm);
}

/* Delayed classical Gram-Schmidt with reorthogonalization (DCGS2:
 * Swirydowicz, Langou, Ananthan, Yang and Thomas 2020; Bielich et al. 2022;
 * doc/solvers.md). Step j starts with V_0..V_{j-1} final and V_j = p_j, the
 * pending vector: one Gram-Schmidt pass done, not yet reorthogonalized nor
 * normalized. y = A M^-1 p_j (the SpMV runs on p_j), then ONE pass over the
 * basis gives d = [V_0..V_j]'p_j = [a; alpha] and [V_0..V_j]'y = [b; beta],
 * and ONE pass (the corrections) writes
 *   v_j = (p_j - Q a) / omega,  omega = sqrt(alpha - a'a)  (Pythagoras)
 *   p_{j+1} = (y - Q b - v_j c) / omega,  c = v_j'y = (beta - a'b) / omega
 * with Q = V_0..V_{j-1}. The search directions are d_l = M^-1 p_l / omega_l
 * (d_0 = M^-1 v_0, omega_0 = 1): A d_l = y_l / omega_l = [Q, v_l] [b; c] /
 * omega_l + p_{l+1}, and p_{l+1} = Q' a' + omega' v_{l+1} with step l+1's
 * a' and omega'. So A D = V H exactly, with
 *   H[0..l, l] = [b; c] / omega_l  (written at step l)
 *   H[0..l, l] += a',  H[l+1, l] = omega'  (step l + 1: final, rotated, tested)
 * and D = M^-1 V U, U unit upper triangular with column l = a_l / omega_l:
 * the cycle's update x += D y is x += M^-1 V (U y) (sps__gm_solve). The
 * residual test of column j - 1 so comes at step j; at the cycle's last step
 * a closing pass (close: d = [V_0..V_m]'p_m only) finishes column m - 1.
 *
 * Two finishes, so that the device can test column j - 1 beside the
 * corrections (gmres_kernels.cu k_dc): after the products,
 * sps__gm_dcgs2_prod (omega, c, column j of H and U; close: omega only);
 * after the corrections (or the closing products), sps__gm_dcgs2_col
 * (column j - 1's Arnoldi step). One thread here (the host); the device
 * runs the same formulas over a block. omega^2 <= 0 (p_j in the span of Q)
 * gives omega = 0: no column j, no corrections, and the Arnoldi step's
 * lucky-breakdown rule stops the solve. */
SPS_HD static inline void sps__gm_dcgs2_prod(sps_gm_state *gs, int64_t j, int close, sps_kgm gm)
{
    const int64_t ld = gs->m + 1;
    const double *a = gm.d, *b = gm.d + ld;
    double aa = 0.0, ab = 0.0;
    for (int64_t i = 0; i < j; i++) {
        aa += a[i] * a[i];
        if (!close) ab += a[i] * b[i];
    }
    const double om2 = a[j] - aa, om = j == 0 ? 1.0 : om2 > 0.0 ? sqrt(om2) : 0.0;
    gs->omega = om;
    gs->cj = 0.0;
    gs->dstep = j;
    if (close || om == 0.0) return;
    const double c = (b[j] - ab) / om;
    double *col = gm.H + j * ld, *u = gm.U + j * (j - 1) / 2;
    for (int64_t i = 0; i < j; i++) {
        col[i] = b[i] / om;
        u[i] = a[i] / om;
    }
    col[j] = c / om;
    gs->cj = c;
}

/* Column j - 1 (j >= 1) is final: H[0..j-1, j-1] += a, H[j, j-1] = omega
 * (of step j), the previous rotations and the Arnoldi step. */
SPS_HD static inline void sps__gm_dcgs2_col(sps_kstate *st, sps_gm_state *gs, int64_t j, double *hist, sps_kgm gm)
{
    double *col = gm.H + (j - 1) * (gs->m + 1), hsq = 0.0;
    for (int64_t i = 0; i < j; i++) {
        col[i] += gm.d[i];
        hsq += col[i] * col[i];
    }
    const double r = sps__gm_rotate(col, gm.cs, gm.sn, j - 1);
    sps__gm_arnoldi_col(st, gs, j - 1, col, r, gs->omega, hsq, hist, gm);
}

/* The start of a cycle: s0 = r'r with r = b - A x in V[:, 0]. restart: a
 * restart of the cycles (the stopping rule and stagnation apply). */
SPS_HD static inline void sps__gm_start(sps_kstate *st, sps_gm_state *gs, int restart, double rr,
                                      sps_kgm gm)
{
    double rn = sqrt(rr);
    gs->kdim = 0;
    if (restart) {
        /* The true residual replaces the recurrence's; no iteration is counted. */
        st->restarts++;
        st->rnorm = rn;
        int window_done = st->restarts - gs->stag_at >= gs->stag_win;
        if (sps__k_bad(rn)) sps__k_stop(st, SPS_DIVERGED_NAN);
        else if (rn <= st->tol) sps__k_stop(st, st->tol_kind);
        else if (rn > st->dtol * st->r0norm) sps__k_stop(st, SPS_DIVERGED_DTOL);
        else if (window_done && rn > (1.0 - SPS_STAG_GAIN) * gs->stag_ref)
            sps__k_stop(st, SPS_DIVERGED_STAGNATION);
        if (window_done) {
            gs->stag_at = st->restarts;
            gs->stag_ref = rn;
        }
    }
    gm.g[0] = rn;
}

/* The finish steps but SPS_GM_ARNOLDI (which needs the whole block on the
 * device: gmres_host.c, gmres_kernels.cu). */
SPS_HD static inline void sps__gm_finish(int step, sps_kstate *st, sps_gm_state *gs,
                                       const double *s, sps_kgm gm)
{
    if (st->stop) return;
    switch (step) {
    case SPS_GM_START0:
        gs->stag_ref = sqrt(s[0]);
        sps__gm_start(st, gs, 0, s[0], gm);
        break;
    case SPS_GM_START: sps__gm_start(st, gs, 0, s[0], gm); break;
    case SPS_GM_RESTART: sps__gm_start(st, gs, 1, s[0], gm); break;
    }
}

#ifdef __cplusplus
}
#endif
#endif /* SPS_GMRES_STATE_H */
