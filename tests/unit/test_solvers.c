/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_solvers.c: CG, BiCGSTAB and GMRES on the host path,
 * against LAPACKE dense solves; every reason code provoked on purpose; GMRES
 * restarts and breakdowns; preconditioned solves; the info's bookkeeping */
#include "check.h"
#include "internal.h"
#include "precond/precond.h"
#include "solvers/bicgstab/bicgstab_state.h"
#include "solvers/cg/cg_state.h"
#include "solvers/gmres/gmres.h"
#include "solvers/vops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

/* ---- matrices built here (they do not wait for the generators) ---------- */


/* 5-point Laplacian on an N x N grid, scaled by s (s < 0: negative definite). */
static sps_matrix *laplace2d(int N, double s)
{
    t_triplets t = {0};
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int r = i * N + j;
            t_trip_add(&t, r, r, 4 * s);
            if (i > 0) t_trip_add(&t, r, r - N, -s);
            if (i < N - 1) t_trip_add(&t, r, r + N, -s);
            if (j > 0) t_trip_add(&t, r, r - 1, -s);
            if (j < N - 1) t_trip_add(&t, r, r + 1, -s);
        }
    return t_trip_matrix(ctx, N * N, N * N, &t);
}

/* Upwind convection-diffusion on an N x N grid: nonsymmetric, an M-matrix. */
static sps_matrix *convdiff2d(int N, double peclet)
{
    t_triplets t = {0};
    double c = peclet / (N + 1);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            int r = i * N + j;
            t_trip_add(&t, r, r, 4 + c);
            if (i > 0) t_trip_add(&t, r, r - N, -1);
            if (i < N - 1) t_trip_add(&t, r, r + N, -1);
            if (j > 0) t_trip_add(&t, r, r - 1, -1 - c);
            if (j < N - 1) t_trip_add(&t, r, r + 1, -1);
        }
    return t_trip_matrix(ctx, N * N, N * N, &t);
}

/* Random nonsymmetric, strictly diagonally dominant (per_row off-diagonals). */
static sps_matrix *random_dd(int n, int per_row, uint64_t seed)
{
    t_triplets t = {0};
    for (int i = 0; i < n; i++) {
        double sum = 0;
        for (int k = 0; k < per_row; k++) {
            int j = (int)((t_rand(&seed) + 1) * 0.5 * n) % n;
            double v = t_rand(&seed);
            if (j == i) continue;
            t_trip_add(&t, i, j, v);
            sum += fabs(v);
        }
        t_trip_add(&t, i, i, 1.2 * sum + 0.1);
    }
    return t_trip_matrix(ctx, n, n, &t);
}

static sps_matrix *diag(int n, const double *d)
{
    t_triplets t = {0};
    for (int i = 0; i < n; i++) t_trip_add(&t, i, i, d[i]);
    return t_trip_matrix(ctx, n, n, &t);
}

/* A e_k = e_{k+1 mod n}: the Krylov space of e_0 grows one unit vector per
 * step and closes, exactly, at step n. */
static sps_matrix *cyclic_shift(int n)
{
    t_triplets t = {0};
    for (int i = 0; i < n; i++) t_trip_add(&t, i, (i + n - 1) % n, 1.0);
    return t_trip_matrix(ctx, n, n, &t);
}

/* ---- running a solve -------------------------------------------------- */

typedef struct cfg {
    sps_method m;
    int restart;
    int64_t maxit;
    double rtol, atol, dtol;
    sps_monitor_fn mon;
    void *user;
} cfg;

static cfg C(sps_method m)
{
    cfg c = {m, 30, 10000, 1e-10, 0, 1e5, NULL, NULL};
    return c;
}

/* One solve with a fresh csr-scalar operator and a fresh solver (history on).
 * The solver is returned: it owns info->history. */
static sps_solver *run(sps_matrix *A, sps_precond *pc, const cfg *c, const double *b, double *x,
                       sps_solve_info *info, sps_status *status)
{
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    memset(info, 0, sizeof *info);
    sps_status st = sps_operator_create(ctx, A, "csr-scalar", NULL, &op);
    if (st == SPS_OK) st = sps_solver_create(ctx, &s);
    if (st == SPS_OK) {
        sps_solver_set_method(s, c->m);
        sps_solver_set_restart(s, c->restart);
        sps_solver_set_maxit(s, c->maxit);
        sps_solver_set_rtol(s, c->rtol);
        sps_solver_set_atol(s, c->atol);
        sps_solver_set_dtol(s, c->dtol);
        sps_solver_set_history(s, 1);
        sps_solver_set_monitor(s, c->mon, c->user);
        st = sps_solve(s, op, pc, b, x, info);
    }
    sps_operator_destroy(op);
    if (status) *status = st;
    else if (st != SPS_OK) T_FAIL("sps_solve", "%s: %s", sps_strerror(st), sps_last_error(ctx));
    return s;
}

static double norm2(const double *x, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

static double rel_diff(const double *x, const double *y, int n)
{
    double d = 0, s = 0;
    for (int i = 0; i < n; i++) {
        d += (x[i] - y[i]) * (x[i] - y[i]);
        s += y[i] * y[i];
    }
    return sqrt(d) / (s > 0 ? sqrt(s) : 1.0);
}

/* ||b - A x|| on the host. */
static double resid(const sps_matrix *A, const double *b, const double *x)
{
    int n = sps_matrix_rows(A);
    double *r = malloc((size_t)n * sizeof *r);
    memcpy(r, b, (size_t)n * sizeof *r);
    sps_matrix_spmv_host(A, -1.0, x, 1.0, r);
    double v = norm2(r, n);
    free(r);
    return v;
}

static double *vec(int n, double v)
{
    double *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    for (int i = 0; i < n; i++) x[i] = v;
    return x;
}

static double *random_vec(int n, uint64_t seed)
{
    double *x = vec(n, 0);
    for (int i = 0; i < n; i++) x[i] = t_rand(&seed);
    return x;
}

static int all_finite(const double *x, int n)
{
    for (int i = 0; i < n; i++)
        if (!isfinite(x[i])) return 0;
    return 1;
}

/* What every info must satisfy (name: the case). */
static void check_info(const char *name, const sps_matrix *A, const double *b, const double *x0,
                       const double *x, const sps_solve_info *in, sps_method m)
{
    int n = sps_matrix_rows(A);
    double bn = norm2(b, n);
    T_NEAR(in->bnorm, bn, 1e-12, "%s: bnorm = ||b||", name);
    T_NEAR(in->r0norm, resid(A, b, x0), 1e-10, "%s: r0norm = ||b - A x0||", name);
    T_NEAR(in->true_rnorm, resid(A, b, x), 1e-8, "%s: true_rnorm = ||b - A x||", name);
    T_NEAR(in->rel_rnorm, in->rnorm / bn, 1e-14, "%s: rel_rnorm = rnorm / bnorm", name);
    T_NEAR(in->true_rel_rnorm, in->true_rnorm / bn, 1e-14, "%s: true_rel_rnorm = true / bnorm", name);
    T_OK(in->history_len == in->iterations + 1, "%s: history_len %lld = iterations + 1 (%lld)", name,
         (long long)in->history_len, (long long)in->iterations + 1);
    T_OK(in->history && in->history[0] == in->r0norm && in->history[in->iterations] == in->rnorm,
         "%s: history[0] = r0norm, history[last] = rnorm", name);
    /* Each residual replacement adds r = b - A x and one more true residual. */
    int64_t want = m == SPS_CG         ? in->iterations + 2
                   : m == SPS_BICGSTAB ? 2 * in->iterations + 2
                                       : in->iterations + in->restarts + 2;
    want += 2 * in->replacements;
    T_OK(in->spmvs == want,
         "%s: spmvs %lld (want %lld: the iterations' plus r0, the true residual and 2 per replacement)",
         name, (long long)in->spmvs, (long long)want);

    T_OK(in->host_syncs == 0, "%s: no host synchronization on the host path", name);
    T_OK(in->setup_ms >= 0 && in->iterate_ms >= 0 && in->finish_ms >= 0 &&
             fabs(in->per_iter_ms * (double)(in->iterations ? in->iterations : 1) -
                  (in->iterations ? in->iterate_ms : 0)) <= 1e-9 * (1 + in->iterate_ms),
         "%s: timings consistent", name);
}

/* ---- 1. against dense solves ------------------------------------------ */

static void solve_vs_dense(const char *what, sps_matrix *A, cfg c, int64_t max_iters)
{
    int n = sps_matrix_rows(A);
    double *b = random_vec(n, 42 + (uint64_t)n), *x = vec(n, 0), *x0 = vec(n, 0), *xd = vec(n, 0);
    char name[160];
    snprintf(name, sizeof name, "%s %s%s", what, sps_method_name(c.m),
             c.m == SPS_GMRES ? (c.restart >= n ? "(m >= n)" : "(30)") : "");
    sps_status st = sps_dense_solve(ctx, A, b, xd);
    sps_solve_info in;
    sps_solver *s = run(A, NULL, &c, b, x, &in, NULL);
    T_OK(in.reason == SPS_CONVERGED_RTOL, "%s: converged (%s, %lld iterations)", name,
         sps_reason_str(in.reason), (long long)in.iterations);
    T_OK(in.iterations <= max_iters, "%s: %lld iterations <= %lld", name, (long long)in.iterations,
         (long long)max_iters);
    if (st == SPS_ERR_NOT_COMPILED) {
        t_skip(name, "dgesv comparison: built without LAPACKE");
    } else if (T_STATUS(ctx, st, "%s: dense solve", name)) {
        double e = rel_diff(x, xd, n);
        T_OK(e <= 1e-7, "%s: x matches dgesv (relative error %.2e)", name, e);
    }
    T_OK(in.true_rel_rnorm <= 2e-10, "%s: true relative residual %.2e <= 2e-10", name,
         in.true_rel_rnorm);
    T_OK(fabs(in.true_rel_rnorm - in.rel_rnorm) <= 0.05 * in.rel_rnorm + 1e-13,
         "%s: true residual %.3e close to the recurrence's %.3e", name, in.true_rel_rnorm,
         in.rel_rnorm);
    check_info(name, A, b, x0, x, &in, c.m);
    if (c.m == SPS_GMRES) {
        int mono = 1;
        for (int64_t i = 0; i < in.iterations; i++)
            if (in.history[i + 1] > in.history[i] * (1 + 1e-12)) mono = 0;
        T_OK(mono, "%s: GMRES residual history is non-increasing", name);
        if (c.restart >= n)
            T_OK(in.restarts == 0 && in.iterations <= n, "%s: m >= n: no restart, <= n iterations",
                 name);
    }
    sps_solver_destroy(s);
    free(b);
    free(x);
    free(x0);
    free(xd);
}

static void test_vs_dense(void)
{
    sps_matrix *L = laplace2d(12, 1.0), *Cd = convdiff2d(12, 40.0), *R = random_dd(300, 6, 7);
    cfg cg = C(SPS_CG), bi = C(SPS_BICGSTAB), gm = C(SPS_GMRES), gfull = C(SPS_GMRES);
    gfull.restart = 100000;
    solve_vs_dense("laplace2d:12", L, cg, 60);
    solve_vs_dense("laplace2d:12", L, bi, 60);
    solve_vs_dense("laplace2d:12", L, gm, 300);
    solve_vs_dense("laplace2d:12", L, gfull, 144);
    solve_vs_dense("convdiff2d:12,40", Cd, bi, 100);
    solve_vs_dense("convdiff2d:12,40", Cd, gm, 300);
    solve_vs_dense("convdiff2d:12,40", Cd, gfull, 144);
    solve_vs_dense("random_dd:300", R, bi, 60);
    solve_vs_dense("random_dd:300", R, gm, 100);
    sps_matrix_destroy(L);
    sps_matrix_destroy(Cd);
    sps_matrix_destroy(R);
}

/* ---- 2. the monitor and a nonzero initial guess ------------------------ */

typedef struct mon_log {
    int64_t calls, last_it, bad_order;
    double last_r;
} mon_log;

static void mon_fn(void *user, int64_t it, double rnorm)
{
    mon_log *l = user;
    if (it != l->calls) l->bad_order++;
    l->calls++;
    l->last_it = it;
    l->last_r = rnorm;
}

static void test_monitor_and_x0(void)
{
    sps_matrix *A = convdiff2d(10, 10.0);
    int n = 100;
    double *b = random_vec(n, 3), *x0 = random_vec(n, 4), *x = vec(n, 0);
    for (int m = 0; m < 3; m++) {
        mon_log log = {0, 0, 0, 0};
        cfg c = C((sps_method)m);
        if (m == SPS_CG) c.m = SPS_GMRES, c.restart = 7; /* nonsymmetric: CG is not for it */
        c.mon = mon_fn;
        c.user = &log;
        memcpy(x, x0, (size_t)n * sizeof *x);
        sps_solve_info in;
        sps_solver *s = run(A, NULL, &c, b, x, &in, NULL);
        const char *name = m == SPS_CG ? "gmres(7)" : sps_method_name(c.m);
        T_OK(in.reason == SPS_CONVERGED_RTOL, "x0 != 0, %s: converged", name);
        T_OK(log.calls == in.iterations + 1 && log.bad_order == 0,
             "%s: host path calls the monitor every iteration, in order (%lld calls, %lld iterations)",
             name, (long long)log.calls, (long long)in.iterations);
        T_OK(log.last_it == in.iterations && log.last_r == in.rnorm,
             "%s: the last monitor call has the final iteration and rnorm", name);
        check_info(name, A, b, x0, x, &in, c.m);
        sps_solver_destroy(s);
    }
    free(b);
    free(x0);
    free(x);
    sps_matrix_destroy(A);
}

/* ---- 3. preconditioners: Jacobi fused vs applied, real ones ------------ */

static sps_status diag_apply(sps_precond *pc, const double *r, double *z)
{
    const double *d = pc->impl;
    for (sps_idx i = 0; i < pc->n; i++) z[i] = d[i] * r[i];
    return SPS_OK;
}

/* A Jacobi preconditioner made here: fused != 0 declares fused_diag, which
 * the methods fuse into their vector updates; otherwise it goes through
 * apply. */
static void fake_pc(sps_precond *pc, int fused, const double *dinv, sps_idx n)
{
    memset(pc, 0, sizeof *pc);
    pc->ctx = ctx;
    strcpy(pc->name, fused ? "jacobi" : "diag-apply");
    pc->n = n;
    pc->fused_diag = fused ? dinv : NULL;
    pc->impl = (void *)dinv;
    pc->apply = diag_apply;
}

static double *inverse_diagonal(const sps_matrix *A)
{
    const sps_idx *rp, *ci;
    const double *v;
    int n = sps_matrix_rows(A);
    double *d = vec(n, 0);
    sps_matrix_csr(A, &rp, &ci, &v);
    for (int i = 0; i < n; i++)
        for (sps_idx k = rp[i]; k < rp[i + 1]; k++)
            if (ci[k] == i) d[i] = 1.0 / v[k];
    return d;
}

/* D L D with D = 10^(i mod 4): SPD, badly scaled (Jacobi's case). */
static sps_matrix *scaled_laplace(int N)
{
    sps_matrix *L = laplace2d(N, 1.0);
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(L, &rp, &ci, &v);
    t_triplets t = {0};
    for (int i = 0; i < N * N; i++)
        for (sps_idx k = rp[i]; k < rp[i + 1]; k++)
            t_trip_add(&t, i, ci[k], pow(10.0, i % 4) * v[k] * pow(10.0, ci[k] % 4));
    sps_matrix_destroy(L);
    return t_trip_matrix(ctx, N * N, N * N, &t);
}

static void test_jacobi_fusion(void)
{
    sps_matrix *A = scaled_laplace(14);
    int n = 196;
    double *dinv = inverse_diagonal(A), *b = random_vec(n, 11);
    double *x1 = vec(n, 0), *x2 = vec(n, 0), *x3 = vec(n, 0);
    sps_precond fused, applied;
    fake_pc(&fused, 1, dinv, n);
    fake_pc(&applied, 0, dinv, n);
    for (int m = 0; m < 3; m++) {
        const char *name = sps_method_name((sps_method)m);
        cfg c = C((sps_method)m);
        sps_solve_info i1, i2, i3;
        memset(x1, 0, (size_t)n * sizeof *x1);
        memset(x2, 0, (size_t)n * sizeof *x2);
        memset(x3, 0, (size_t)n * sizeof *x3);
        sps_solver *s1 = run(A, &fused, &c, b, x1, &i1, NULL);
        sps_solver *s2 = run(A, &applied, &c, b, x2, &i2, NULL);
        sps_solver *s3 = run(A, NULL, &c, b, x3, &i3, NULL);
        T_OK(i1.reason == SPS_CONVERGED_RTOL && i2.reason == SPS_CONVERGED_RTOL,
             "%s + Jacobi on a badly scaled SPD matrix: converged (%lld iterations; none: %lld, %s)",
             name, (long long)i1.iterations, (long long)i3.iterations, sps_reason_str(i3.reason));
        T_OK(i1.iterations == i2.iterations && memcmp(x1, x2, (size_t)n * sizeof *x1) == 0,
             "%s: Jacobi fused into the updates = Jacobi through apply, bitwise", name);
        T_OK(i1.precond_applies == i2.precond_applies && i1.precond_applies > i1.iterations,
             "%s: preconditioner applications counted alike (%lld, %lld)", name,
             (long long)i1.precond_applies, (long long)i2.precond_applies);
        T_OK(i1.true_rel_rnorm <= 1e-9, "%s + Jacobi: true relative residual %.2e", name,
             i1.true_rel_rnorm);
        if (m == SPS_CG)
            T_OK(i3.reason != SPS_CONVERGED_RTOL || i1.iterations * 2 < i3.iterations,
                 "cg: Jacobi at least halves the iterations on a badly scaled matrix (%lld vs %lld)",
                 (long long)i1.iterations, (long long)i3.iterations);
        sps_solver_destroy(s1);
        sps_solver_destroy(s2);
        sps_solver_destroy(s3);
    }
    free(dinv);
    free(b);
    free(x1);
    free(x2);
    free(x3);
    sps_matrix_destroy(A);
}

/* The preconditioners of precond/ on matrices built here: the real Jacobi is
 * the fused one above, bitwise; ic0 and ilu0 cut the iterations. */
static void test_precond_module(void)
{
    sps_matrix *S = scaled_laplace(14), *Cd = convdiff2d(20, 50.0);
    sps_precond *jac = NULL, *ic = NULL, *ilu = NULL, *none = NULL;
    sps_status st = sps_precond_create(ctx, S, "jacobi", &jac);
    T_STATUS(ctx, st, "jacobi on the scaled Laplacian");
    T_STATUS(ctx, sps_precond_create(ctx, S, "ic0", &ic), "ic0 on the scaled Laplacian");
    T_STATUS(ctx, sps_precond_create(ctx, Cd, "ilu0", &ilu), "ilu0 on convdiff2d:20,50");
    T_STATUS(ctx, sps_precond_create(ctx, Cd, "none", &none), "none on convdiff2d:20,50");
    double *dinv = inverse_diagonal(S), *b = random_vec(400, 31);
    double *x1 = vec(400, 0), *x2 = vec(400, 0);
    sps_precond fake;
    fake_pc(&fake, 1, dinv, 196);
    cfg c = C(SPS_CG);
    sps_solve_info i1, i2;
    sps_solver *s1 = run(S, jac, &c, b, x1, &i1, NULL);
    sps_solver *s2 = run(S, &fake, &c, b, x2, &i2, NULL);
    T_OK(i1.reason == SPS_CONVERGED_RTOL && i1.iterations == i2.iterations &&
             memcmp(x1, x2, 196 * sizeof *x1) == 0,
         "cg + jacobi (precond/) = cg + the fused D^-1 of this test, bitwise (%lld iterations)",
         (long long)i1.iterations);
    sps_solver_destroy(s1);
    sps_solver_destroy(s2);
    memset(x1, 0, 400 * sizeof *x1);
    s1 = run(S, ic, &c, b, x1, &i1, NULL);
    T_OK(i1.reason == SPS_CONVERGED_RTOL && i1.true_rel_rnorm <= 1e-9 && i1.iterations < i2.iterations,
         "cg + ic0: converged in %lld iterations (jacobi: %lld), true relres %.1e",
         (long long)i1.iterations, (long long)i2.iterations, i1.true_rel_rnorm);
    sps_solver_destroy(s1);
    for (int m = 1; m < 3; m++) {
        const char *mn = sps_method_name((sps_method)m);
        c = C((sps_method)m);
        memset(x1, 0, 400 * sizeof *x1);
        memset(x2, 0, 400 * sizeof *x2);
        s1 = run(Cd, ilu, &c, b, x1, &i1, NULL);
        s2 = run(Cd, NULL, &c, b, x2, &i2, NULL);
        T_OK(i1.reason == SPS_CONVERGED_RTOL && i1.true_rel_rnorm <= 1e-9 &&
                 i1.iterations < i2.iterations && i1.precond_applies >= i1.iterations,
             "%s + ilu0: converged in %lld iterations (none: %lld), true relres %.1e", mn,
             (long long)i1.iterations, (long long)i2.iterations, i1.true_rel_rnorm);
        sps_solver_destroy(s1);
        memset(x1, 0, 400 * sizeof *x1);
        s1 = run(Cd, none, &c, b, x1, &i1, NULL);
        T_OK(i1.iterations == i2.iterations && memcmp(x1, x2, 400 * sizeof *x1) == 0 &&
                 i1.precond_applies == 0,
             "%s + none (precond/) = no preconditioner, bitwise", mn);
        sps_solver_destroy(s1);
        sps_solver_destroy(s2);
    }
    sps_precond_destroy(jac);
    sps_precond_destroy(ic);
    sps_precond_destroy(ilu);
    sps_precond_destroy(none);
    free(dinv);
    free(b);
    free(x1);
    free(x2);
    sps_matrix_destroy(S);
    sps_matrix_destroy(Cd);
}

/* ---- 4. real matrices (once sps_matrix_read and the preconditioners exist) */

static sps_matrix *read_real(const char *name)
{
    const char *path = t_real_matrix_path(name);
    if (!path) {
        t_skip(name, "matrix file not found");
        return NULL;
    }
    sps_matrix *A = NULL;
    sps_status st = sps_matrix_read(ctx, path, &A);
    if (!T_STATUS(ctx, st, "read %s", name)) return NULL;
    return A;
}

static void real_case(const char *mat, sps_method m, const char *pcname, double max_err)
{
    char name[128];
    snprintf(name, sizeof name, "%s %s%s%s", mat, sps_method_name(m), pcname ? " + " : "",
             pcname ? pcname : "");
    sps_matrix *A = read_real(mat);
    if (!A) return;
    sps_precond *pc = NULL;
    if (pcname) {
        sps_status st = sps_precond_create(ctx, A, pcname, &pc);
        if (!T_STATUS(ctx, st, "%s: preconditioner setup", name)) {
            sps_matrix_destroy(A);
            return;
        }
    }
    int n = sps_matrix_rows(A);
    double *b = random_vec(n, 5), *x = vec(n, 0), *x0 = vec(n, 0), *xd = vec(n, 0);
    cfg c = C(m);
    sps_solve_info in;
    sps_solver *s = run(A, pc, &c, b, x, &in, NULL);
    T_OK(in.reason == SPS_CONVERGED_RTOL, "%s: converged (%s after %lld iterations)", name,
         sps_reason_str(in.reason), (long long)in.iterations);
    T_OK(in.true_rel_rnorm <= 1e-9, "%s: true relative residual %.2e", name, in.true_rel_rnorm);
    /* The true residual overrules the recurrence (issue 17, defect 1). */
    T_OK(in.true_rnorm <= c.rtol * in.bnorm,
         "%s: converged, so the true residual meets rtol (true relative %.3e, %lld replacements)",
         name, in.true_rel_rnorm, (long long)in.replacements);
    sps_status st = sps_dense_solve(ctx, A, b, xd);
    if (st == SPS_OK) {
        double e = rel_diff(x, xd, n);
        T_OK(e <= max_err, "%s: x matches dgesv (relative error %.2e <= %.0e)", name, e, max_err);
    }
    if (!pcname) check_info(name, A, b, x0, x, &in, m);
    else T_OK(in.precond_applies >= in.iterations, "%s: preconditioner applied", name);
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    free(b);
    free(x);
    free(x0);
    free(xd);
    sps_matrix_destroy(A);
}

static void test_real(void)
{
    real_case("nos6", SPS_CG, NULL, 1e-5);
    real_case("bcsstk09", SPS_CG, NULL, 1e-7);
    real_case("gr_30_30", SPS_CG, NULL, 1e-8);
    real_case("orsirr_1", SPS_BICGSTAB, NULL, 1e-7);
    real_case("pde2961", SPS_BICGSTAB, NULL, 1e-7);
    real_case("sherman1", SPS_BICGSTAB, NULL, 1e-5);
    real_case("jpwh_991", SPS_GMRES, NULL, 1e-8);
    real_case("rdb2048", SPS_GMRES, NULL, 1e-6);
    real_case("fs_541_1", SPS_GMRES, NULL, 1e-8);
    real_case("bcsstk09", SPS_CG, "jacobi", 1e-7);
    real_case("nos6", SPS_CG, "ic0", 1e-5);
    real_case("orsirr_1", SPS_BICGSTAB, "ilu0", 1e-7);
    real_case("orsirr_1", SPS_GMRES, "ilu0", 1e-7);
    real_case("pde2961", SPS_GMRES, "jacobi", 1e-7);
}

/* ---- 5. reason codes, on purpose --------------------------------------- */

static void expect(const char *name, sps_matrix *A, sps_precond *pc, cfg c, const double *b,
                   double *x, sps_reason want, int64_t iters, sps_solve_info *out)
{
    sps_solve_info in;
    sps_solver *s = run(A, pc, &c, b, x, &in, NULL);
    T_OK(in.reason == want, "%s: %s (got %s)", name, sps_reason_str(want), sps_reason_str(in.reason));
    if (iters >= 0)
        T_OK(in.iterations == iters, "%s: %lld iterations (got %lld)", name, (long long)iters,
             (long long)in.iterations);
    T_OK(in.history_len == in.iterations + 1, "%s: history has iterations + 1 entries", name);
    if (out) *out = in;
    sps_solver_destroy(s);
}

static void test_zero_rhs_nan_maxit_dtol(void)
{
    sps_matrix *L = laplace2d(16, 1.0);
    int n = 256;
    double *b = vec(n, 0), *x = random_vec(n, 9);
    char name[96];
    for (int m = 0; m < 3; m++) {
        const char *mn = sps_method_name((sps_method)m);
        sps_solve_info in;
        /* b = 0: x = 0 after 0 iterations, whatever x0 was */
        for (int i = 0; i < n; i++) b[i] = 0, x[i] = i + 1.0;
        snprintf(name, sizeof name, "%s b = 0", mn);
        expect(name, L, NULL, C((sps_method)m), b, x, SPS_CONVERGED_ZERO_RHS, 0, &in);
        T_OK(norm2(x, n) == 0 && in.true_rnorm == 0 && in.r0norm == 0,
             "%s: x = 0, residuals 0", name);
        /* NaN or Inf in b */
        for (int i = 0; i < n; i++) b[i] = 1, x[i] = 0;
        b[17] = m == SPS_BICGSTAB ? INFINITY : NAN;
        snprintf(name, sizeof name, "%s %s in b", mn, m == SPS_BICGSTAB ? "Inf" : "NaN");
        expect(name, L, NULL, C((sps_method)m), b, x, SPS_DIVERGED_NAN, 0, NULL);
        /* maxit */
        for (int i = 0; i < n; i++) b[i] = 1, x[i] = 0;
        cfg c = C((sps_method)m);
        c.maxit = 7;
        snprintf(name, sizeof name, "%s maxit 7", mn);
        expect(name, L, NULL, c, b, x, SPS_DIVERGED_MAXIT, 7, &in);
        T_NEAR(in.true_rnorm, in.rnorm, 1e-8, "%s: x is the 7th iterate (true = recurrence)", name);
        c.maxit = 0;
        snprintf(name, sizeof name, "%s maxit 0", mn);
        expect(name, L, NULL, c, b, x, SPS_DIVERGED_MAXIT, 0, NULL);
        /* dtol below 1: the first residual above dtol * ||r0|| ends the solve */
        c = C((sps_method)m);
        c.dtol = 1e-3;
        memset(x, 0, (size_t)n * sizeof *x);
        snprintf(name, sizeof name, "%s dtol 1e-3", mn);
        expect(name, L, NULL, c, b, x, SPS_DIVERGED_DTOL, 1, &in);
        T_OK(in.rnorm > 1e-3 * in.r0norm, "%s: ||r|| > dtol ||r0||", name);
        /* atol larger than rtol ||b||: converged by atol */
        c = C((sps_method)m);
        c.atol = 1e-3 * norm2(b, n);
        memset(x, 0, (size_t)n * sizeof *x);
        snprintf(name, sizeof name, "%s atol", mn);
        expect(name, L, NULL, c, b, x, SPS_CONVERGED_ATOL, -1, &in);
        T_OK(in.rnorm <= c.atol, "%s: ||r|| <= atol", name);
    }
    /* NaN inside A: CG meets it in p'Ap. The API rejects NaN values (issue
     * 17), so the matrix is wrapped from a CSR directly. */
    sps_idx di[4] = {0, 1, 2, 3};
    sps_csr dc;
    sps_matrix *D = NULL;
    if (sps__csr_from_triplets(ctx, 4, 4, 4, di, di, (double[]){1, NAN, 2, 3}, SPS_GENERAL, &dc) != SPS_OK ||
        sps__matrix_wrap(ctx, &dc, NULL, &D) != SPS_OK)
        T_FAIL("NaN matrix", "%s", sps_last_error(ctx));
    double b4[4] = {1, 1, 1, 1}, x4[4] = {0, 0, 0, 0};
    expect("cg, NaN in A", D, NULL, C(SPS_CG), b4, x4, SPS_DIVERGED_NAN, 0, NULL);
    for (int m = 1; m < 3; m++) {
        snprintf(name, sizeof name, "%s, NaN in A", sps_method_name((sps_method)m));
        memset(x4, 0, sizeof x4);
        expect(name, D, NULL, C((sps_method)m), b4, x4, SPS_DIVERGED_NAN, -1, NULL);
        T_OK(all_finite(x4, 4), "%s: x keeps the last finite iterate", name);
    }
    sps_matrix_destroy(D);
    free(b);
    free(x);
    sps_matrix_destroy(L);
}

static void test_indefinite(void)
{
    int n = 144;
    double *b = random_vec(n, 21), *x = vec(n, 0);
    sps_solve_info in;
    /* negative definite: the first p'Ap < 0 */
    sps_matrix *A = laplace2d(12, -1.0);
    expect("cg on -Laplacian", A, NULL, C(SPS_CG), b, x, SPS_DIVERGED_INDEFINITE, 0, NULL);
    T_OK(norm2(x, n) == 0, "cg on -Laplacian: x untouched (no step taken with a bad alpha)");
    sps_matrix_destroy(A);
    /* symmetric indefinite, first step fine: p'Ap <= 0 later, never a NaN */
    double d[6] = {1, 2, 3, 4, 5, -3}, b6[6] = {1, 1, 1, 1, 1, 1}, x6[6] = {0};
    A = diag(6, d);
    expect("cg on diag(1,2,3,4,5,-3)", A, NULL, C(SPS_CG), b6, x6, SPS_DIVERGED_INDEFINITE, -1, &in);
    T_OK(in.iterations >= 1 && all_finite(x6, 6) && isfinite(in.rnorm),
         "cg indefinite after %lld iterations: x and the residual stay finite", (long long)in.iterations);
    sps_matrix_destroy(A);
    /* preconditioner with a negative entry: r'z < 0 */
    A = laplace2d(12, 1.0);
    double *dinv = vec(n, 0.25);
    dinv[0] = -1;
    double *e0 = vec(n, 0);
    e0[0] = 1;
    sps_precond pc;
    fake_pc(&pc, 1, dinv, n);
    memset(x, 0, (size_t)n * sizeof *x);
    expect("cg with an indefinite Jacobi", A, &pc, C(SPS_CG), e0, x, SPS_DIVERGED_INDEFINITE_PC, 0,
           NULL);
    free(dinv);
    free(e0);
    free(b);
    free(x);
    sps_matrix_destroy(A);
}

/* diag(0, 1, 1, 1, 1) with b = ones: b is not in the range of A. */
static void test_singular(void)
{
    double d[5] = {0, 1, 1, 1, 1}, b[5] = {1, 1, 1, 1, 1}, x[5] = {0};
    sps_matrix *A = diag(5, d);
    sps_solve_info in;
    /* CG: alpha = 5/4, beta = 1/4 (exact): the second p is (1.25, 0, 0, 0, 0),
     * in the null space, so p'Ap = 0: A is not positive definite. */
    expect("singular: cg", A, NULL, C(SPS_CG), b, x, SPS_DIVERGED_INDEFINITE, 1, NULL);
    /* BiCGSTAB: after one step r = e0 (exact); the next p is a multiple of
     * e0, so v = A p = 0 and r0hat'v = 0: the alpha denominator vanishes. */
    memset(x, 0, sizeof x);
    expect("singular: bicgstab", A, NULL, C(SPS_BICGSTAB), b, x, SPS_DIVERGED_BREAKDOWN, 1, &in);
    T_NEAR(in.true_rnorm, 1.0, 1e-12, "singular: bicgstab leaves only the null-space residual e0");
    /* GMRES: A has two eigenvalues, the Krylov space closes after 2 steps
     * with the residual e0 left: a lucky breakdown that is not a solution. */
    memset(x, 0, sizeof x);
    expect("singular: gmres", A, NULL, C(SPS_GMRES), b, x, SPS_DIVERGED_BREAKDOWN, 2, &in);
    T_NEAR(in.true_rnorm, 1.0, 1e-10, "singular: gmres leaves only the null-space residual");
    T_OK(all_finite(x, 5) && fabs(x[1] - 1) < 1e-10, "singular: gmres x finite, x[1..4] = 1");
    sps_matrix_destroy(A);
    /* skew [[0, 1], [-1, 0]], b = e0: v = A b is orthogonal to r0hat = b */
    t_triplets t = {0};
    t_trip_add(&t, 0, 1, 1.0);
    t_trip_add(&t, 1, 0, -1.0);
    A = t_trip_matrix(ctx, 2, 2, &t);
    double b2[2] = {1, 0}, x2[2] = {0, 0};
    expect("skew 2x2: bicgstab", A, NULL, C(SPS_BICGSTAB), b2, x2, SPS_DIVERGED_BREAKDOWN, 0, NULL);
    T_OK(x2[0] == 0 && x2[1] == 0, "skew 2x2: bicgstab leaves x alone at the breakdown");
    sps_matrix_destroy(A);
}

/* ---- 6. GMRES: lucky breakdowns, restarts, stagnation ------------------ */

static void test_gmres_special(void)
{
    sps_solve_info in;
    /* x0 is the solution (exactly): 0 iterations even with rtol = atol = 0 */
    double two[8] = {2, 2, 2, 2, 2, 2, 2, 2}, b8[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    double x8[8] = {0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
    sps_matrix *A = diag(8, two);
    cfg c = C(SPS_GMRES);
    c.rtol = 0;
    for (int m = 0; m < 3; m++) {
        char name[64];
        c.m = (sps_method)m;
        snprintf(name, sizeof name, "%s, x0 = exact solution", sps_method_name(c.m));
        expect(name, A, NULL, c, b8, x8, SPS_CONVERGED_RTOL, 0, NULL);
    }
    /* BiCGSTAB on 2I: s = 0 at the first half step; x = x0 + alpha phat */
    memset(x8, 0, sizeof x8);
    expect("bicgstab on 2I: converged at the half step", A, NULL, C(SPS_BICGSTAB), b8, x8,
           SPS_CONVERGED_RTOL, 1, &in);
    T_OK(x8[0] == 0.5 && x8[7] == 0.5 && in.true_rnorm == 0,
         "bicgstab half step: x = b / 2 exactly, no division by omega = 0");
    sps_matrix_destroy(A);

    /* The Krylov space of e0 under a cyclic shift closes exactly at step n:
     * h(n, n-1) = 0, the rotated residual is 0 even with rtol = atol = 0. */
    A = cyclic_shift(6);
    double e0[6] = {1, 0, 0, 0, 0, 0}, x6[6] = {0};
    expect("gmres, cyclic shift: Krylov space closes at n = 6", A, NULL, c = C(SPS_GMRES), e0, x6,
           SPS_CONVERGED_RTOL, 6, &in);
    T_OK(fabs(x6[5] - 1) < 1e-14 && fabs(x6[0]) < 1e-14 && in.restarts == 0,
         "gmres, cyclic shift: x = e5 = A^-1 e0");
    sps_matrix_destroy(A);

    /* Three distinct eigenvalues: the Krylov space closes after 3 steps. */
    double d30[30];
    for (int i = 0; i < 30; i++) d30[i] = 1 + i % 3;
    double *b30 = random_vec(30, 8), x30[30] = {0};
    A = diag(30, d30);
    c = C(SPS_GMRES);
    c.rtol = 1e-12;
    expect("gmres, 3 distinct eigenvalues: 3 iterations", A, NULL, c, b30, x30, SPS_CONVERGED_RTOL, 3,
           NULL);
    sps_matrix_destroy(A);
    free(b30);

    /* Five distinct eigenvalues with m = 5: converges at the cycle's last
     * inner iteration (the update must still happen, no restart). */
    double d40[40];
    for (int i = 0; i < 40; i++) d40[i] = 1 + i % 5;
    double *b40 = random_vec(40, 12), x40[40] = {0};
    A = diag(40, d40);
    c.restart = 5;
    expect("gmres(5), 5 eigenvalues: converged at the restart boundary", A, NULL, c, b40, x40,
           SPS_CONVERGED_RTOL, 5, &in);
    T_OK(in.restarts == 0 && in.true_rel_rnorm <= 1e-11, "gmres(5): x updated (true relres %.1e)",
         in.true_rel_rnorm);
    memset(x40, 0, sizeof x40);
    c.restart = 4;
    expect("gmres(4), 5 eigenvalues: converges in the second cycle", A, NULL, c, b40, x40,
           SPS_CONVERGED_RTOL, -1, &in);
    T_OK(in.restarts >= 1 && in.iterations > 4, "gmres(4): %lld iterations, %lld restarts",
         (long long)in.iterations, (long long)in.restarts);
    sps_matrix_destroy(A);
    free(b40);

    /* maxit = 2m + 5, m = 4 not dividing it: 3 full cycles and a partial one */
    A = laplace2d(16, 1.0);
    double *b = random_vec(256, 13), *x = vec(256, 0);
    c = C(SPS_GMRES);
    c.restart = 4;
    c.maxit = 13;
    expect("gmres(4), maxit 13", A, NULL, c, b, x, SPS_DIVERGED_MAXIT, 13, &in);
    T_OK(in.restarts == 3, "gmres(4), maxit 13: 3 restarts (got %lld)", (long long)in.restarts);
    T_NEAR(in.true_rnorm, in.rnorm, 1e-9, "gmres(4), maxit 13: the partial cycle's update is in x");
    T_OK(in.spmvs == 13 + 3 + 2, "gmres(4), maxit 13: spmvs = iterations + restarts + 2");
    sps_matrix_destroy(A);
    free(b);
    free(x);

    /* Complete stagnation: GMRES(10) on a cyclic shift of size 40 makes no
     * progress before the space has dimension 40: stagnation after the first
     * window of ceil(500 / 10) = 50 cycles. */
    A = cyclic_shift(40);
    b = vec(40, 0);
    b[0] = 1;
    x = vec(40, 0);
    c = C(SPS_GMRES);
    c.restart = 10;
    expect("gmres(10), cyclic shift of 40: stagnation", A, NULL, c, b, x, SPS_DIVERGED_STAGNATION, 500,
           &in);
    T_OK(in.restarts == 50, "stagnation after a window of 50 cycles (got %lld restarts)",
         (long long)in.restarts);
    sps_matrix_destroy(A);
    free(b);
    free(x);

    /* A slow but steady solve is not stagnation: GMRES(3) on a Laplacian. */
    A = laplace2d(40, 1.0);
    b = vec(1600, 1);
    x = vec(1600, 0);
    c = C(SPS_GMRES);
    c.restart = 3;
    c.rtol = 1e-8;
    c.maxit = 20000;
    expect("gmres(3), laplace2d:40: slow, converges", A, NULL, c, b, x, SPS_CONVERGED_RTOL, -1, &in);
    T_OK(in.iterations > 1500, "gmres(3): a slow solve (%lld iterations, %lld restarts)",
         (long long)in.iterations, (long long)in.restarts);
    sps_matrix_destroy(A);
    free(b);
    free(x);

    /* lns_3937, unpreconditioned GMRES(30): stagnates near 0.5 (doc/solvers.md) */
    A = read_real("lns_3937");
    if (A) {
        int n = sps_matrix_rows(A);
        double *ones = vec(n, 1);
        b = vec(n, 0);
        x = vec(n, 0);
        sps_matrix_spmv_host(A, 1.0, ones, 0.0, b);
        expect("lns_3937 gmres(30): stagnation", A, NULL, C(SPS_GMRES), b, x, SPS_DIVERGED_STAGNATION,
               -1, &in);
        T_OK(in.iterations < 3000, "lns_3937 gmres(30): stagnation found after %lld iterations (< 3000)",
             (long long)in.iterations);
        free(ones);
        free(b);
        free(x);
        sps_matrix_destroy(A);
    }
}

/* ---- 6b. GMRES with DCGS2 (gmres:orth=dcgs2, gmres_state.h) -------------- */

/* One GMRES solve on the host with method spec `spec` (history off). */
static void run_spec(sps_matrix *A, const char *pcname, const char *spec, int restart, int64_t maxit,
                     double rtol, const double *b, double *x, sps_solve_info *in)
{
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    sps_precond *pc = NULL;
    memset(in, 0, sizeof *in);
    sps_status st = sps_operator_create(ctx, A, "csr-scalar", NULL, &op);
    if (st == SPS_OK && pcname) st = sps_precond_create(ctx, A, pcname, &pc);
    if (st == SPS_OK) st = sps_solver_create(ctx, &s);
    if (st == SPS_OK) st = sps_solver_set_method_name(s, spec);
    if (st == SPS_OK) {
        sps_solver_set_restart(s, restart);
        sps_solver_set_maxit(s, maxit);
        sps_solver_set_rtol(s, rtol);
        st = sps_solve(s, op, pc, b, x, in);
    }
    if (st != SPS_OK) T_FAIL(spec, "%s: %s", sps_strerror(st), sps_last_error(ctx));
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
}

/* DCGS2 against CGS2 on one system: both converge, DCGS2 within a few
 * iterations of CGS2, its true residual meets the tolerance and its x agrees. */
static void dcgs2_case(const char *what, sps_matrix *A, const char *pcname, int restart, double rtol,
                       int64_t slack)
{
    int n = sps_matrix_rows(A);
    double *b = random_vec(n, 77 + (uint64_t)n), *xc = vec(n, 0), *xd = vec(n, 0);
    sps_solve_info ic, id;
    run_spec(A, pcname, "gmres:orth=cgs2", restart, 20000, rtol, b, xc, &ic);
    run_spec(A, pcname, "gmres:orth=dcgs2", restart, 20000, rtol, b, xd, &id);
    T_OK(id.reason == SPS_CONVERGED_RTOL && ic.reason == SPS_CONVERGED_RTOL,
         "%s gmres(%d) dcgs2: converged (%s; cgs2 %s)", what, restart, sps_reason_str(id.reason),
         sps_reason_str(ic.reason));
    T_OK(llabs(id.iterations - ic.iterations) <= slack, "%s gmres(%d): dcgs2 %lld iterations, cgs2 %lld (within %lld)",
         what, restart, (long long)id.iterations, (long long)ic.iterations, (long long)slack);
    T_OK(id.true_rel_rnorm <= 2.0 * rtol, "%s gmres(%d) dcgs2: true relative residual %.2e <= 2 rtol", what, restart,
         id.true_rel_rnorm);
    T_OK(fabs(id.true_rel_rnorm - id.rel_rnorm) <= 0.05 * id.rel_rnorm + 1e-13,
         "%s gmres(%d) dcgs2: true residual %.3e close to the recurrence's %.3e", what, restart, id.true_rel_rnorm,
         id.rel_rnorm);
    /* one SpMV per step; a stop ran one step past its last iteration (and,
     * at a cycle's last step, the restart's residual as CGS2 would) */
    int64_t want = id.iterations + id.restarts + 2;
    T_OK(id.spmvs >= want && id.spmvs <= want + 2, "%s gmres(%d) dcgs2: spmvs %lld (%lld to 2 more)", what, restart,
         (long long)id.spmvs, (long long)want);
    double e = rel_diff(xd, xc, n);
    T_OK(e <= 1e3 * rtol, "%s gmres(%d): dcgs2's x within %.1e of cgs2's", what, restart, e);
    free(b);
    free(xc);
    free(xd);
}

/* GMRES's default orthogonalization (gmres.c gm_orth): CGS2 within the
 * one-kernel engine's size bounds (sps__gm_onek_fits: at most 8192 rows and
 * 1.5 MiB of basis), DCGS2 above; SPS_GM_ORTH overrides it. Checked by the
 * result: the default's x and history are bitwise those of the explicit
 * spec it should equal. */
static int same_solve(const sps_solve_info *a, const double *xa, const sps_solve_info *b, const double *xb, int n)
{
    return a->iterations == b->iterations && a->reason == b->reason && a->rnorm == b->rnorm &&
           memcmp(xa, xb, (size_t)n * sizeof(double)) == 0;
}

static void orth_default_case(const char *what, sps_matrix *A, int restart, const char *env, const char *want)
{
    const int n = sps_matrix_rows(A);
    double *b = random_vec(n, 5), *xd = vec(n, 0), *xw = vec(n, 0), *xo = vec(n, 0);
    const char *other = strcmp(want, "dcgs2") == 0 ? "gmres:orth=cgs2" : "gmres:orth=dcgs2";
    char spec[32];
    snprintf(spec, sizeof spec, "gmres:orth=%s", want);
    sps_solve_info id, iw, io;
    if (env) setenv("SPS_GM_ORTH", env, 1);
    run_spec(A, NULL, "gmres", restart, 400, 1e-10, b, xd, &id);
    unsetenv("SPS_GM_ORTH");
    run_spec(A, NULL, spec, restart, 400, 1e-10, b, xw, &iw);
    run_spec(A, NULL, other, restart, 400, 1e-10, b, xo, &io);
    T_OK(same_solve(&id, xd, &iw, xw, n) && !same_solve(&id, xd, &io, xo, n),
         "%s GMRES(%d)%s%s: the default is %s (%lld iterations, bitwise its x; %s %lld)", what, restart,
         env ? ", SPS_GM_ORTH=" : "", env ? env : "", want, (long long)id.iterations, other,
         (long long)io.iterations);
    free(b), free(xd), free(xw), free(xo);
}

static void test_gmres_orth_default(void)
{
    T_OK(sps__gm_onek_fits(8192, 22) && !sps__gm_onek_fits(8193, 1) && sps__gm_onek_fits(1024, 191) &&
             !sps__gm_onek_fits(1024, 192) && sps__gm_onek_fits(0, 0),
         "sps__gm_onek_fits: 8192 rows and (m + 1) n doubles <= 1.5 MiB, no more");
    sps_matrix *A = laplace2d(32, 1.0); /* 1024 rows: 1.5 MiB is 192 columns */
    orth_default_case("laplace2d:32", A, 30, NULL, "cgs2");
    orth_default_case("laplace2d:32", A, 191, NULL, "cgs2");
    orth_default_case("laplace2d:32", A, 192, NULL, "dcgs2");
    orth_default_case("laplace2d:32", A, 192, "cgs2", "cgs2");
    orth_default_case("laplace2d:32", A, 30, "dcgs2", "dcgs2");
    sps_matrix_destroy(A);
    A = laplace2d(91, 1.0); /* 8281 rows */
    orth_default_case("laplace2d:91", A, 5, NULL, "dcgs2");
    sps_matrix_destroy(A);
}

/* A cycle of m Arnoldi steps from b with the host's gm_ops (the steps gmres.c
 * enqueues, without the solve around them). Returns ||I - V'V||_F over
 * V_0..V_{m-1} and sets *gap to | |g[m]| - ||b - A x|| | / ||b|| with x the
 * cycle's least-squares update (y = R^-1 g, x = V y or V U y: H and U checked). */
static double arnoldi_cycle(sps_matrix *A, const double *b, int64_t m, int orth, double *gap)
{
    const sps_gm_ops *go = &sps__gm_ops_host;
    const int64_t n = sps_matrix_rows(A), ld = m + 1;
    double *V = vec((int)(n * (m + 1)), 0), *H = vec((int)(ld * m), 0), *cs = vec((int)m, 0), *sn = vec((int)m, 0);
    double *g = vec((int)ld, 0), *y = vec((int)m, 0), *h2 = vec((int)ld, 0), *w = vec((int)n, 0);
    double *U = vec((int)(m * (m - 1) / 2 + 1), 0), *d = vec((int)(2 * ld), 0), *red = vec(64, 0);
    sps_kstate st;
    memset(&st, 0, sizeof st);
    st.maxit = INT64_MAX, st.tol = -1.0, st.dtol = 1e300, st.r0norm = 1.0;
    sps_gm_state gs;
    memset(&gs, 0, sizeof gs);
    gs.m = m, gs.orth = orth, gs.stag_win = INT64_MAX;
    sps_kws ws = {ctx, &sps__vops_host, (sps_idx)n, &st, &gs, NULL, red, 0};
    sps_gm_ws gw;
    memset(&gw, 0, sizeof gw);
    gw.V = V, gw.m = m;
    gw.gm = (sps_kgm){H, cs, sn, g, y, h2, orth ? U : NULL, orth ? d : NULL};
    const double bn = norm2(b, (int)n);
    g[0] = bn;
    for (int64_t i = 0; i < n; i++) V[i] = b[i] / bn;
    for (int64_t j = 0; j < m; j++) {
        sps_matrix_spmv_host(A, 1.0, V + j * n, 0.0, w);
        if (orth) {
            go->dprod(&ws, &gw, j, w);
            go->dcorr(&ws, &gw, j, w);
            continue;
        }
        int scaled = 0;
        sps_kfin f = sps__kfin(go->finish, &gw, SPS_GM_CHECK, 1, j);
        go->gemv_t(&ws, &gw, j + 1, w, H + j * ld, 0);
        go->gemv_n_fin(&ws, &gw, j + 1, H + j * ld, w, 0, &f, j, &scaled);
        go->gemv_t(&ws, &gw, j + 1, w, h2, 1);
        f = sps__kfin(go->finish, &gw, SPS_GM_ARNOLDI, 1, j);
        go->gemv_n_fin(&ws, &gw, j + 1, h2, w, 1, &f, j, &scaled);
        go->scale(&ws, &gw, j, w);
    }
    if (orth) go->dprod(&ws, &gw, m, NULL);
    double e = 0;
    for (int64_t p = 0; p < m; p++)
        for (int64_t q = 0; q < m; q++) {
            double s = 0;
            for (int64_t i = 0; i < n; i++) s += V[i + p * n] * V[i + q * n];
            s -= p == q;
            e += s * s;
        }
    go->solve(&ws, &gw);
    double *x = vec((int)n, 0), *r = vec((int)n, 0);
    go->update(&ws, &gw, x, NULL, NULL);
    sps_matrix_spmv_host(A, -1.0, x, 0.0, r);
    for (int64_t i = 0; i < n; i++) r[i] += b[i];
    *gap = fabs(fabs(g[gs.kdim]) - norm2(r, (int)n)) / bn;
    T_OK(!st.stop && gs.kdim == m && st.iter == m, "arnoldi cycle (%s): %lld columns, %lld iterations, running",
         orth ? "dcgs2" : "cgs2", (long long)gs.kdim, (long long)st.iter);
    free(V), free(H), free(cs), free(sn), free(g), free(y), free(h2), free(w), free(U), free(d), free(red);
    free(x), free(r);
    return sqrt(e);
}

/* DCGS2's basis orthogonality on an ill-conditioned case (lns_3937, where
 * CGS2 takes the second pass on nearly every step; else a convection-dominated
 * convdiff), against CGS2's. */
static void dcgs2_orthogonality(void)
{
    sps_matrix *A = read_real("lns_3937");
    const char *name = "lns_3937";
    if (!A) A = convdiff2d(40, 2000.0), name = "convdiff2d:40,2000";
    int n = sps_matrix_rows(A);
    double *b = vec(n, 0), *ones = vec(n, 1);
    sps_matrix_spmv_host(A, 1.0, ones, 0.0, b);
    const int64_t m = 240;
    double gc = 0, gd = 0;
    const double oc = arnoldi_cycle(A, b, m, SPS_GM_ORTH_CGS2, &gc);
    const double od = arnoldi_cycle(A, b, m, SPS_GM_ORTH_DCGS2, &gd);
    T_OK(od <= 1e-12 && od <= 100.0 * oc + 1e-14,
         "%s, %lld Arnoldi steps: ||I - V'V||_F dcgs2 %.2e <= 1e-12, cgs2 %.2e", name, (long long)m, od, oc);
    T_OK(gd <= 1e-6 && gd <= 10.0 * gc + 1e-12,
         "%s: |g[m]| against ||b - A x|| of the cycle's update: dcgs2 %.1e, cgs2 %.1e of ||b||", name, gd, gc);
    free(b);
    free(ones);
    sps_matrix_destroy(A);
    /* well conditioned: H and U reproduce the true residual to rounding */
    A = convdiff2d(12, 40.0);
    b = random_vec(144, 11);
    const double od2 = arnoldi_cycle(A, b, 60, SPS_GM_ORTH_DCGS2, &gd);
    T_OK(gd <= 1e-13 && od2 <= 1e-13, "convdiff2d:12,40, 60 steps dcgs2: |g[m]| - ||b - A x|| %.1e of ||b||, "
         "||I - V'V||_F %.1e", gd, od2);
    free(b);
    sps_matrix_destroy(A);
}

static void test_gmres_dcgs2(void)
{
    sps_matrix *L = laplace2d(12, 1.0), *Cd = convdiff2d(12, 40.0), *R = random_dd(300, 6, 7);
    dcgs2_case("laplace2d:12", L, NULL, 30, 1e-10, 2);
    dcgs2_case("laplace2d:12", L, NULL, 100000, 1e-10, 2);
    dcgs2_case("laplace2d:12", L, NULL, 5, 1e-8, 20);
    dcgs2_case("convdiff2d:12,40", Cd, NULL, 30, 1e-10, 2);
    dcgs2_case("convdiff2d:12,40 jacobi", Cd, "jacobi", 30, 1e-10, 2);
    dcgs2_case("convdiff2d:12,40", Cd, NULL, 100000, 1e-10, 2);
    dcgs2_case("random_dd:300", R, NULL, 30, 1e-10, 2);
    dcgs2_case("random_dd:300 jacobi", R, "jacobi", 1, 1e-8, 4);
    sps_matrix_destroy(L);
    sps_matrix_destroy(Cd);
    sps_matrix_destroy(R);
    /* maxit inside a cycle: the partial cycle's update is in x */
    sps_matrix *A = convdiff2d(10, 10.0);
    double *b = random_vec(100, 5), *x = vec(100, 0);
    sps_solve_info in;
    run_spec(A, NULL, "gmres:orth=dcgs2", 4, 13, 1e-14, b, x, &in);
    T_OK(in.reason == SPS_DIVERGED_MAXIT && in.iterations == 13 && in.restarts == 3,
         "gmres(4) dcgs2, maxit 13: MAXIT at 13 iterations, 3 restarts (%s, %lld, %lld)", sps_reason_str(in.reason),
         (long long)in.iterations, (long long)in.restarts);
    T_NEAR(in.true_rnorm, in.rnorm, 1e-9, "gmres(4) dcgs2, maxit 13: the partial cycle's update is in x");
    /* the Krylov space closes (3 distinct eigenvalues): a lucky breakdown */
    double dg[30];
    for (int i = 0; i < 30; i++) dg[i] = 1.0 + (double)(i % 3);
    sps_matrix *D = diag(30, dg);
    double *b30 = random_vec(30, 9), *x30 = vec(30, 0);
    run_spec(D, NULL, "gmres:orth=dcgs2", 30, 100, 1e-12, b30, x30, &in);
    T_OK(in.reason == SPS_CONVERGED_RTOL && in.iterations == 3 && in.true_rel_rnorm <= 1e-11,
         "gmres dcgs2, 3 distinct eigenvalues: 3 iterations (%s, %lld, true relres %.1e)", sps_reason_str(in.reason),
         (long long)in.iterations, in.true_rel_rnorm);
    sps_solver *s = NULL;
    T_OK(sps_solver_create(ctx, &s) == SPS_OK && sps_solver_set_method_name(s, "gmres:orth=mgs") == SPS_ERR_INVALID_ARG &&
             sps_solver_set_method_name(s, "gmres:orth=dcgs2,restart=7") == SPS_OK,
         "gmres:orth= takes cgs2 or dcgs2 only");
    sps_solver_destroy(s);
    sps_matrix_destroy(A);
    sps_matrix_destroy(D);
    free(b), free(x), free(b30), free(x30);
    dcgs2_orthogonality();
}

/* ---- 7. the shared finish logic on states built by hand ----------------- */

static sps_kstate fresh_state(void)
{
    sps_kstate st;
    memset(&st, 0, sizeof st);
    st.maxit = 100;
    st.tol = 1e-8;
    st.dtol = 1e5;
    st.r0norm = st.rnorm = 1.0;
    st.tol_kind = SPS_CONVERGED_RTOL;
    return st;
}

static sps_gm_state fresh_gm(int64_t m)
{
    sps_gm_state gs;
    memset(&gs, 0, sizeof gs);
    gs.m = m;
    gs.stag_win = 3;
    gs.stag_ref = 1.0;
    return gs;
}

static sps_bicg_state fresh_bicg(void)
{
    sps_bicg_state bs;
    memset(&bs, 0, sizeof bs);
    bs.rho = bs.alpha = bs.omega = 1.0;
    return bs;
}

/* GMRES's Arnoldi finish as gmres_host.c runs it (h2 = 0: H[:, j] as given). */
static void gm_arnoldi(sps_kstate *st, sps_gm_state *gs, int64_t j, const double *s, double *hist,
                       sps_kgm gm)
{
    if (st->stop) return;
    double a = sps__gm_rotate(gm.H + j * (gs->m + 1), gm.cs, gm.sn, j);
    sps__gm_arnoldi(st, gs, j, a, sqrt(s[0]), s[1], hist, gm);
}

static void test_finish_logic(void)
{
    double H[6 * 5] = {0}, cs[5] = {0}, sn[5] = {0}, g[6] = {0}, y[5] = {0}, h2[6] = {0};
    sps_kgm gm = {H, cs, sn, g, y, h2, NULL, NULL};
    double hist[8] = {0}, s[SPS_K_NSUM] = {0};
    /* GMRES: a NaN in column 1 leaves it out of the update */
    sps_kstate st = fresh_state();
    sps_gm_state gs = fresh_gm(5);
    g[0] = 1.0;
    H[0] = 2.0, s[0] = 1.0, s[1] = 4.0;
    gm_arnoldi(&st, &gs, 0, s, hist, gm);
    T_OK(!st.stop && gs.kdim == 1 && st.iter == 1, "Arnoldi column 0: one column, going on");
    H[6] = NAN, H[7] = 1.0, s[0] = NAN, s[1] = NAN;
    gm_arnoldi(&st, &gs, 1, s, hist, gm);
    T_OK(st.stop && st.reason == SPS_DIVERGED_NAN && gs.kdim == 1,
         "Arnoldi column 1 with a NaN: NAN, the update keeps column 0 only (kdim %lld)",
         (long long)gs.kdim);
    /* GMRES: rotated diagonal and ||w|| both 0: column left out, BREAKDOWN */
    st = fresh_state();
    gs = fresh_gm(5);
    memset(H, 0, sizeof H);
    g[0] = 1.0;
    s[0] = 0.0, s[1] = 0.0;
    gm_arnoldi(&st, &gs, 0, s, hist, gm);
    T_OK(st.stop && st.reason == SPS_DIVERGED_BREAKDOWN && gs.kdim == 0 && st.iter == 1 &&
             st.rnorm == 1.0,
         "Arnoldi: A z in the span already: BREAKDOWN, no column used, residual kept");
    /* GMRES stagnation: windows of 3 cycles, less than 10% gained */
    st = fresh_state();
    gs = fresh_gm(5);
    double cyc[] = {0.8, 0.7, 0.65, 0.62, 0.6, 0.59};
    int stopped_at = -1;
    for (int c = 0; c < 6 && !st.stop; c++) {
        s[0] = cyc[c] * cyc[c];
        sps__gm_finish(SPS_GM_RESTART, &st, &gs, s, gm);
        if (st.stop) stopped_at = (int)st.restarts;
    }
    T_OK(stopped_at == 6 && st.reason == SPS_DIVERGED_STAGNATION,
         "stagnation: window 1 (1 -> 0.65) passes, window 2 (0.65 -> 0.59) stops at cycle 6 (got %d)",
         stopped_at);
    /* BiCGSTAB: t't = 0 keeps the half step and breaks down */
    st = fresh_state();
    sps_bicg_state bs = fresh_bicg();
    bs.snorm = 0.5;
    s[0] = 0.0, s[1] = 0.0;
    sps__bicg_finish(SPS_BICG_OMEGA, &st, &bs, s, hist);
    T_OK(st.stop && st.reason == SPS_DIVERGED_BREAKDOWN && bs.half == 1 && st.iter == 1 &&
             st.rnorm == 0.5 && hist[1] == 0.5,
         "bicgstab t't = 0: BREAKDOWN at the half step, residual ||s|| recorded");
    /* BiCGSTAB: omega = 0 after a full step breaks down before dividing */
    st = fresh_state();
    bs = fresh_bicg();
    bs.omega = 0.0;
    s[0] = 0.25, s[1] = 0.3;
    sps__bicg_finish(SPS_BICG_R, &st, &bs, s, hist);
    T_OK(st.stop && st.reason == SPS_DIVERGED_BREAKDOWN && st.iter == 1 && isfinite(bs.beta),
         "bicgstab omega = 0: BREAKDOWN, beta never divided by 0");
    /* BiCGSTAB: rho = r0hat'r at eps * ||r0|| ||r|| is no breakdown, at 0 it is */
    st = fresh_state();
    bs = fresh_bicg();
    s[0] = 0.25, s[1] = 1e-16 * 0.5;
    sps__bicg_finish(SPS_BICG_R, &st, &bs, s, hist);
    T_OK(!st.stop, "bicgstab rho with cosine 1e-16: goes on");
    s[1] = 0.0;
    sps__bicg_finish(SPS_BICG_R, &st, &bs, s, hist);
    T_OK(st.stop && st.reason == SPS_DIVERGED_BREAKDOWN, "bicgstab rho = 0: BREAKDOWN");
    /* CG: p'Ap = 0 and NaN */
    st = fresh_state();
    sps_cg_state cgs = {1.0, 1.0, 0.0};
    s[0] = 0.0;
    sps__cg_finish(SPS_CG_ALPHA, &st, &cgs, s, hist);
    T_OK(st.reason == SPS_DIVERGED_INDEFINITE && cgs.alpha == 1.0, "cg p'Ap = 0: INDEFINITE, alpha untouched");
    st = fresh_state();
    s[0] = NAN;
    sps__cg_finish(SPS_CG_ALPHA, &st, &cgs, s, hist);
    T_OK(st.reason == SPS_DIVERGED_NAN, "cg p'Ap NaN: NAN");
    /* gated steps do nothing once stopped; BNORM and TRUE still run */
    st = fresh_state();
    st.stop = 1, st.reason = SPS_DIVERGED_MAXIT;
    s[0] = 4.0;
    sps__cg_finish(SPS_CG_RES_PLAIN, &st, &cgs, s, hist);
    sps__k_common_finish(SPS_KC_R0, &st, s, hist);
    sps__k_common_finish(SPS_KC_TRUE, &st, s, hist);
    T_OK(st.iter == 0 && st.r0norm == 1.0 && st.true_rnorm == 2.0 && st.reason == SPS_DIVERGED_MAXIT,
         "stopped: the residual steps are no-ops, the true residual still computed");
}

/* The host's generic dot with every count of sums: s_q = a[q]'b[q], then the
 * finish callback; counts outside 1..SPS_K_NSUM are refused. */
static void test_dot_counts(void)
{
    enum { N = 33 };
    double vec[SPS_K_NSUM + 1][N], red[SPS_K_NSUM] = {0}, hist[4] = {0};
    const double *a[SPS_K_NSUM], *b[SPS_K_NSUM];
    for (int q = 0; q <= SPS_K_NSUM; q++)
        for (int i = 0; i < N; i++) vec[q][i] = (double)((q + 1) * (i % 7) - 3);
    sps_kstate st = fresh_state();
    sps_kws w;
    memset(&w, 0, sizeof w);
    w.ctx = ctx, w.ops = &sps__vops_host, w.n = N, w.st = &st, w.red = red, w.hist = hist;
    sps_kfin f = sps__kfin(sps__vops_host.finish, NULL, SPS_KC_TRUE, 0, 0);
    for (int ns = 1; ns <= SPS_K_NSUM; ns++) {
        for (int q = 0; q < ns; q++) a[q] = vec[q], b[q] = vec[q + 1];
        int ok = sps__vops_host.dot(&w, ns, a, b, &f) == SPS_OK && w.nsum == ns;
        for (int q = 0; q < ns && ok; q++) {
            double e = 0;
            for (int i = 0; i < N; i++) e += vec[q][i] * vec[q + 1][i];
            ok = red[q] == e;
        }
        T_OK(ok && st.true_rnorm == sqrt(red[0]), "host dot with %d sums: each a[q]'b[q], then the finish", ns);
    }
    T_OK(sps__vops_host.dot(&w, SPS_K_NSUM + 1, a, b, &f) == SPS_ERR_INTERNAL &&
             sps__vops_host.dot(&w, 0, a, b, &f) == SPS_ERR_INTERNAL,
         "dot with 0 or %d sums refused: %s", SPS_K_NSUM + 1, sps_last_error(ctx));
}

/* ---- 8. the same solver again: workspace reuse, determinism ------------ */

static void test_reuse(void)
{
    sps_matrix *A = convdiff2d(9, 5.0), *B = random_dd(50, 4, 3);
    sps_operator *opA = NULL, *opB = NULL;
    sps_solver *s = NULL;
    sps_operator_create(ctx, A, "csr-scalar", NULL, &opA);
    sps_operator_create(ctx, B, "csr-scalar", NULL, &opB);
    sps_solver_create(ctx, &s);
    sps_solver_set_history(s, 1);
    double *b = random_vec(81, 1), *x1 = vec(81, 0), *x2 = vec(81, 0), *h1 = vec(10001, 0);
    double *bb = random_vec(50, 2), *xb = vec(50, 0);
    for (int m = 1; m < 3; m++) {
        const char *mn = sps_method_name((sps_method)m);
        sps_solver_set_method(s, (sps_method)m);
        sps_solve_info i1, i2, i3;
        memset(x1, 0, 81 * sizeof *x1);
        memset(x2, 0, 81 * sizeof *x2);
        memset(xb, 0, 50 * sizeof *xb);
        T_STATUS(ctx, sps_solve(s, opA, NULL, b, x1, &i1), "%s: first solve", mn);
        memcpy(h1, i1.history, (size_t)i1.history_len * sizeof *h1);
        T_STATUS(ctx, sps_solve(s, opB, NULL, bb, xb, &i3), "%s: another size in between", mn);
        T_OK(i3.reason > 0 && resid(B, bb, xb) <= 1e-7 * norm2(bb, 50), "%s: the other size solved", mn);
        T_STATUS(ctx, sps_solve(s, opA, NULL, b, x2, &i2), "%s: same solve again", mn);
        T_OK(i1.iterations == i2.iterations && memcmp(x1, x2, 81 * sizeof *x1) == 0 &&
                 memcmp(h1, i2.history, (size_t)i2.history_len * sizeof *h1) == 0,
             "%s: repeated solve is bitwise identical (x, iterations, history)", mn);
    }
    sps_solver_destroy(s);
    sps_operator_destroy(opA);
    sps_operator_destroy(opB);
    free(b);
    free(x1);
    free(x2);
    free(h1);
    free(bb);
    free(xb);
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

T_MAIN_HOST(ctx, test_vs_dense, test_monitor_and_x0, test_jacobi_fusion, test_precond_module, test_real,
            test_zero_rhs_nan_maxit_dtol, test_indefinite, test_singular, test_gmres_special,
            test_gmres_dcgs2, test_gmres_orth_default, test_finish_logic, test_dot_counts, test_reuse)
