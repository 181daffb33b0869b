/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_gmres_cluster_gpu.c: GMRES(m) on the one-kernel
 * engine's cluster kernel (solvers/gmres/gmres_kernels.cu k_gm_cluster,
 * SPS_GM_CLUSTER=C; doc/solvers.md "Iteration engine").
 *
 * 1. Against the host driver, for C = 1, 2, 8 and 16 (16 where the device
 *    schedules it, else a SKIP line): GMRES(30) and GMRES(10), without and
 *    with Jacobi, csr-vector (and dia where it converts): same reason,
 *    iterations within 5% (at least 2), x within 1e-6 relative of the host's
 *    when converged (true relative residual <= 1e-9), the history's first
 *    steps within 1e-8 of the host's; info->engine "onekernel" with
 *    engine_cluster C; two runs bitwise equal. Matrices: a nonsymmetric
 *    tridiagonal for n = 31, 32, 33, 1023, 1024, 1025, poisson2d:63, an
 *    arrow (row and column 0 full: one row of n entries), a tridiagonal with
 *    row and column 17 empty (b's entry 0 there: consistent), and pde2961,
 *    jpwh_991 (none) and add20 (Jacobi) of the shared set.
 * 2. The basis columns in shared memory capped at 0 and 3
 *    (SPS_GM_CLUSTER_VSHARED), and the CSR read as it is instead of its DIA
 *    view (SPS_ONEK_VIEW=0, C = 8 and 16): bitwise the default's.
 * 3. Fallbacks, bitwise the one block's: SPS_GM_CLUSTER=0, a basis above
 *    the cluster's bound (SPS_GM_CLUSTER_MAX_BASIS=1000), C = 17 (not a
 *    cluster size: the one block); ilu0: classic.
 * 4. Time per iteration on poisson2d:63 GMRES(30) for C = 0 (one block),
 *    1, 2, 4, 8, 16, and C = 16 with one cycle a launch ('#' lines).
 * 5. The restarts on the device (every cycle in one launch, the default)
 *    against one cycle a launch (SPS_GM_ONEK_CYCLES=1: gm_restart between
 *    launches), on solves that restart (poisson2d:63 GMRES(30) at C = 8
 *    and 16, ntridiag n=1025 GMRES(10) at C = 2, none and Jacobi, and a
 *    stop made at a restart: ntridiag n=1024 with row and column 17 empty
 *    and b's entry there nonzero, whose residual stagnates): the same
 *    reason, iterations within 1, x within 1e-8 where converged, else the
 *    true residuals within 1e-6 of each other (A is singular there: x's
 *    null-space part is rounding's).
 * Without a device, without CUDA, or where the cluster kernel cannot run
 * (before sm_90: C = 1 refused) it prints SKIP lines. */
#include "check.h"
#include "internal.h"
#include "solvers/gmres/gmres.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA

#include "engine_jobs.h"

static sps_context *gctx, *hctx;
static int cl_runs = -1; /* the cluster kernel runs on this device (probed) */

static result solve_on(sps_context *ctx, const sps_matrix *A, const job *j, const double *b)
{
    return job_solve(ctx, A, j, b, 2000);
}

/* The same with SPS_GM_CLUSTER=C (C < 0: unset). */
static result solve_c(const sps_matrix *A, const job *j, const double *b, int C)
{
    char v[16];
    snprintf(v, sizeof v, "%d", C);
    if (C >= 0) setenv("SPS_GM_CLUSTER", v, 1);
    result r = solve_on(gctx, A, j, b);
    unsetenv("SPS_GM_CLUSTER");
    return r;
}

/* tridiag(-1.3, 2.1, -0.7) of size n; arrow: row and column 0 full (0.4 / n);
 * empty >= 0: row and column `empty` left out. */
static sps_matrix *ntri(int n, int arrow, int empty)
{
    t_triplets t = {0};
    for (int i = 0; i < n; i++) {
        if (i == empty) continue;
        t_trip_add(&t, i, i, 2.1);
        if (i > 0 && i - 1 != empty) t_trip_add(&t, i, i - 1, -1.3);
        if (i < n - 1 && i + 1 != empty) t_trip_add(&t, i, i + 1, -0.7);
        if (arrow && i > 1) t_trip_add(&t, 0, i, 0.4 / n), t_trip_add(&t, i, 0, 0.4 / n);
    }
    return t_trip_matrix(hctx, n, n, &t);
}

/* Does the cluster kernel run here? One probe (n = 33, C = 1). */
static int cluster_runs(void)
{
    if (cl_runs >= 0) return cl_runs;
    sps_matrix *T = ntri(33, 0, -1);
    double *b = rhs(33);
    job j = {"csr-vector", "gmres:restart=10", NULL, "onekernel"};
    result r = solve_c(T, &j, b, 1);
    cl_runs = r.st == SPS_OK && strcmp(r.engine, "onekernel") == 0 && r.in.engine_cluster == 1;
    if (!cl_runs)
        t_skip("gmres cluster kernel", "does not run on this device (C = 1 refused: it needs sm_90 or newer)");
    result_free(&r);
    free(b);
    sps_matrix_destroy(T);
    return cl_runs;
}

/* ---- 1. against the host ---------------------------------------------------- */

static void cluster_case(const char *name, const sps_matrix *A, const char *method, const char *pc,
                         const double *b, const result *ref)
{
    const int n = sps_matrix_rows(A);
    const int Cs[] = {1, 2, 8, 16};
    const char *bes[] = {"csr-vector", "dia"};
    for (int k = 0; k < 2; k++)
        for (int q = 0; q < 4; q++) {
            const int C = Cs[q];
            char what[200];
            snprintf(what, sizeof what, "gmres cluster C=%d %s %s%s%s %s", C, name, method, pc ? "+" : "",
                     pc ? pc : "", bes[k]);
            job gj = {bes[k], method, pc, "onekernel"};
            result g = solve_c(A, &gj, b, C);
            const int ran = job_ran(gctx, &g, what, k == 1);
            if (ran < 0) break;
            if (!ran) continue;
            if (C == 16 && g.in.engine_cluster == 0) {
                t_skip(what, "a cluster of 16 blocks is not schedulable here (%s ran)", g.engine);
                result_free(&g);
                continue;
            }
            T_OK(strcmp(g.engine, "onekernel") == 0 && g.in.engine_cluster == C, "%s: engine %s, cluster %d", what,
                 g.engine, g.in.engine_cluster);
            vs_host_checks(what, &g, ref, n);
            result g2 = solve_c(A, &gj, b, C);
            T_OK(same(&g, &g2, n), "%s: two runs bitwise equal", what);
            result_free(&g2);
            result_free(&g);
        }
}

/* Host reference, then every cluster size. */
static void vs_host(const char *name, const sps_matrix *A, const char *method, const char *pc, const double *b)
{
    job hj = {"csr-scalar", method, pc, NULL};
    result ref = solve_on(hctx, A, &hj, b);
    if (T_STATUS(hctx, ref.st, "%s %s host", name, method)) cluster_case(name, A, method, pc, b, &ref);
    result_free(&ref);
}

static void all_of(const char *name, const sps_matrix *A, const double *bin, int jacobi)
{
    const int n = sps_matrix_rows(A);
    double *b = bin ? NULL : rhs(n);
    const double *bb = bin ? bin : b;
    vs_host(name, A, "gmres:restart=30", NULL, bb);
    if (jacobi) vs_host(name, A, "gmres:restart=30", "jacobi", bb);
    vs_host(name, A, "gmres:restart=10", NULL, bb);
    free(b);
}

static void test_host(void)
{
    if (!cluster_runs()) return;
    int sizes[] = {31, 32, 33, 1023, 1024, 1025};
    for (int i = 0; i < 6; i++) {
        char name[64];
        sps_matrix *T = ntri(sizes[i], 0, -1);
        if (!T) continue;
        snprintf(name, sizeof name, "ntridiag n=%d", sizes[i]);
        all_of(name, T, NULL, 1);
        sps_matrix_destroy(T);
    }
    sps_matrix *P = NULL;
    if (T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:63", &P), "poisson2d:63")) all_of("poisson2d:63", P, NULL, 1);
    sps_matrix_destroy(P);
    sps_matrix *W = ntri(1025, 1, -1);
    if (W) all_of("arrow n=1025 (one row of n entries)", W, NULL, 1);
    sps_matrix_destroy(W);
    sps_matrix *E = ntri(1024, 0, 17);
    if (E) {
        double *b = rhs(1024);
        b[17] = 0.0;
        all_of("ntridiag n=1024, row 17 empty", E, b, 0); /* no diagonal there: no Jacobi */
        free(b);
    }
    sps_matrix_destroy(E);
    const char *none[] = {"pde2961", "jpwh_991"};
    for (int i = 0; i < 2; i++) {
        sps_matrix *A = t_read_real(hctx, none[i]);
        if (!A) continue;
        double *b = rhs(sps_matrix_rows(A));
        vs_host(none[i], A, "gmres:restart=30", NULL, b);
        free(b);
        sps_matrix_destroy(A);
    }
    sps_matrix *A = t_read_real(hctx, "add20");
    if (A) {
        double *b = rhs(sps_matrix_rows(A));
        vs_host("add20", A, "gmres:restart=30", "jacobi", b);
        free(b);
    }
    sps_matrix_destroy(A);
}

/* ---- 2. basis columns in shared memory --------------------------------------- */

static void test_vshared(void)
{
    if (!cluster_runs()) return;
    sps_matrix *P = NULL;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:63", &P), "poisson2d:63")) return;
    const int n = sps_matrix_rows(P);
    double *b = rhs(n);
    const char *pcs[] = {NULL, "jacobi"};
    for (int p = 0; p < 2; p++) {
        job j = {"csr-vector", "gmres:restart=30", pcs[p], "onekernel"};
        result d = solve_c(P, &j, b, 8);
        const char *caps[] = {"0", "3"};
        for (int c = 0; c < 2; c++) {
            setenv("SPS_GM_CLUSTER_VSHARED", caps[c], 1);
            result e = solve_c(P, &j, b, 8);
            unsetenv("SPS_GM_CLUSTER_VSHARED");
            T_OK(same(&d, &e, n) && e.in.engine_cluster == 8,
                 "gmres cluster C=8 poisson2d:63 gmres(30)%s%s: SPS_GM_CLUSTER_VSHARED=%s bitwise the default's",
                 pcs[p] ? "+" : "", pcs[p] ? pcs[p] : "", caps[c]);
            result_free(&e);
        }
        /* the CSR's DIA view (the default here: 5 diagonals) against the CSR read as it is */
        const int Cs[2] = {8, 16};
        for (int c = 0; c < 2; c++) {
            result dv = solve_c(P, &j, b, Cs[c]);
            setenv("SPS_ONEK_VIEW", "0", 1);
            result e = solve_c(P, &j, b, Cs[c]);
            unsetenv("SPS_ONEK_VIEW");
            T_OK(same(&dv, &e, n) && e.in.engine_cluster == Cs[c] && dv.in.engine_cluster == Cs[c],
                 "gmres cluster C=%d poisson2d:63 gmres(30)%s%s: SPS_ONEK_VIEW=0 bitwise the default's", Cs[c],
                 pcs[p] ? "+" : "", pcs[p] ? pcs[p] : "");
            result_free(&dv), result_free(&e);
        }
        result_free(&d);
    }
    free(b);
    sps_matrix_destroy(P);
}

/* ---- 3. fallbacks ------------------------------------------------------------ */

/* With the environment var=val and auto's cluster off (SPS_GM_CLUSTER_AUTO=0:
 * the reference is what ran before the cluster; an SPS_GM_CLUSTER that is not
 * a size is ignored, so auto's choice would stand), SPS_GM_CLUSTER=C runs
 * what runs without it (want: the one block, or classic), bitwise. */
static void fallback_case(const char *what, const sps_matrix *A, const job *j, const char *var, const char *val,
                          int C, const char *want)
{
    const int n = sps_matrix_rows(A);
    double *b = rhs(n);
    setenv("SPS_GM_CLUSTER_AUTO", "0", 1);
    if (var) setenv(var, val, 1);
    result o = solve_c(A, j, b, -1), e = solve_c(A, j, b, C);
    if (var) unsetenv(var);
    unsetenv("SPS_GM_CLUSTER_AUTO");
    if (T_STATUS(gctx, o.st, "%s: without the cluster", what) && T_STATUS(gctx, e.st, "%s", what))
        T_OK(same(&o, &e, n) && e.in.engine_cluster == 0 && strcmp(e.engine, want) == 0,
             "%s: %s ran (cluster %d), bitwise the run without the cluster", what, e.engine, e.in.engine_cluster);
    result_free(&o), result_free(&e);
    free(b);
}

static void test_fallback(void)
{
    sps_matrix *P = NULL;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:63", &P), "poisson2d:63")) return;
    job g30 = {"csr-vector", "gmres:restart=30", NULL, "onekernel"};
    fallback_case("gmres(30) poisson2d:63 SPS_GM_CLUSTER=0", P, &g30, NULL, NULL, 0, "onekernel");
    fallback_case("gmres(30) poisson2d:63 C=8, SPS_GM_CLUSTER_MAX_BASIS=1000", P, &g30, "SPS_GM_CLUSTER_MAX_BASIS",
                  "1000", 8, "onekernel");
    fallback_case("gmres(30) poisson2d:63 SPS_GM_CLUSTER=17 (not a size)", P, &g30, NULL, NULL, 17, "onekernel");
    job ilu = {"csr-vector", "gmres:restart=30", "ilu0", "onekernel"};
    fallback_case("gmres(30)+ilu0 poisson2d:63 C=8", P, &ilu, NULL, NULL, 8, "classic");
    fallback_case("gmres(30) poisson2d:63 C=8, SPS_ONEKERNEL_MAX=1000", P, &g30, "SPS_ONEKERNEL_MAX", "1000", 8,
                  "classic");
    sps_matrix_destroy(P);
}

/* engine auto: on poisson2d:63 (n >= SPS_GM_CLUSTER_MIN_ROWS, within the one
 * block's bounds) the cluster (SPS_GM_CLUSTER_DEFAULT blocks, or
 * SPS_GM_CLUSTER_FALLBACK where that cannot be scheduled); SPS_GM_CLUSTER_AUTO=0
 * keeps the one block. */
static void test_auto(void)
{
    if (!cluster_runs()) return;
    sps_matrix *P = NULL;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:63", &P), "poisson2d:63")) return;
    double *b = rhs(sps_matrix_rows(P));
    job j = {"csr-vector", "gmres:restart=30", NULL, NULL};
    setenv("SPS_GM_CLUSTER_AUTO", "0", 1);
    result o = solve_c(P, &j, b, -1);
    unsetenv("SPS_GM_CLUSTER_AUTO");
    result a = solve_c(P, &j, b, -1);
    if (T_STATUS(gctx, o.st, "auto, SPS_GM_CLUSTER_AUTO=0") && T_STATUS(gctx, a.st, "auto")) {
        T_OK(strcmp(o.engine, "onekernel") == 0 && o.in.engine_cluster == 0,
             "gmres(30) poisson2d:63 auto, SPS_GM_CLUSTER_AUTO=0: %s, cluster %d (the one block)", o.engine,
             o.in.engine_cluster);
        T_OK(strcmp(a.engine, "onekernel") == 0 &&
                 (a.in.engine_cluster == SPS_GM_CLUSTER_DEFAULT || a.in.engine_cluster == SPS_GM_CLUSTER_FALLBACK),
             "gmres(30) poisson2d:63 auto: %s, cluster %d (%d or %d)", a.engine, a.in.engine_cluster,
             SPS_GM_CLUSTER_DEFAULT, SPS_GM_CLUSTER_FALLBACK);
    }
    result_free(&o), result_free(&a);
    free(b);
    sps_matrix_destroy(P);
}

/* ---- 4. time per iteration ---------------------------------------------------- */

static void test_time(void)
{
    sps_matrix *P = NULL;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:63", &P), "poisson2d:63")) return;
    double *b = rhs(sps_matrix_rows(P));
    const int Cs[] = {0, 1, 2, 4, 8, 16, 16};
    for (int q = 0; q < 7; q++) {
        double t[3];
        if (q == 6) setenv("SPS_GM_ONEK_CYCLES", "1", 1);
        result r;
        memset(&r, 0, sizeof r);
        int ok = 1;
        for (int rep = 0; rep < 3 && ok; rep++) {
            job j = {"csr-vector", "gmres:restart=30", NULL, "onekernel"};
            if (rep) result_free(&r);
            r = solve_c(P, &j, b, Cs[q]);
            ok = T_STATUS(gctx, r.st, "poisson2d:63 gmres(30) C=%d", Cs[q]);
            t[rep] = r.in.per_iter_ms * 1e3;
        }
        if (ok) {
            double lo = t[0] < t[1] ? t[0] : t[1], hi = t[0] < t[1] ? t[1] : t[0];
            double med = t[2] < lo ? lo : t[2] > hi ? hi : t[2];
            printf("# poisson2d:63 gmres(30) SPS_GM_CLUSTER=%d%s: %s cluster %d, %.2f us per iteration (median of 3), "
                   "%lld iterations\n",
                   Cs[q], q == 6 ? " SPS_GM_ONEK_CYCLES=1" : "", r.engine, r.in.engine_cluster, med,
                   (long long)r.in.iterations);
        }
        unsetenv("SPS_GM_ONEK_CYCLES");
        result_free(&r);
    }
    free(b);
    sps_matrix_destroy(P);
}

/* ---- 5. restarts on the device ------------------------------------------------ */

static void cycles_case(const char *name, const sps_matrix *A, const char *method, const char *pc, int C)
{
    const int n = sps_matrix_rows(A);
    double *b = rhs(n);
    char what[160];
    snprintf(what, sizeof what, "gmres cluster C=%d %s %s%s%s", C, name, method, pc ? "+" : "", pc ? pc : "");
    job j = {"csr-vector", method, pc, "onekernel"};
    setenv("SPS_GM_ONEK_CYCLES", "1", 1);
    result o = solve_c(A, &j, b, C);
    unsetenv("SPS_GM_ONEK_CYCLES");
    result e = solve_c(A, &j, b, C);
    if (T_STATUS(gctx, o.st, "%s, one cycle a launch", what) && T_STATUS(gctx, e.st, "%s", what)) {
        const double d = e.in.reason > 0 ? t_rel_diff(e.x, o.x, n)
                                         : fabs(e.in.true_rel_rnorm - o.in.true_rel_rnorm) / o.in.true_rel_rnorm;
        T_OK(e.in.engine_cluster == C && o.in.engine_cluster == C && e.in.reason == o.in.reason &&
                 llabs((long long)(e.in.iterations - o.in.iterations)) <= 1 && e.in.iterations > 10 && d <= 1e-8,
             "%s: restarts on the device: %s, %lld iterations, x (true residual where not converged) within %.1e of "
             "one cycle a launch's (%s, %lld)",
             what,
             sps_reason_str(e.in.reason), (long long)e.in.iterations, d, sps_reason_str(o.in.reason),
             (long long)o.in.iterations);
    }
    result_free(&o), result_free(&e);
    free(b);
}

static void test_cycles(void)
{
    if (!cluster_runs()) return;
    sps_matrix *P = NULL, *T = ntri(1025, 0, -1), *E = ntri(1024, 0, 17);
    if (T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:63", &P), "poisson2d:63")) {
        cycles_case("poisson2d:63", P, "gmres:restart=30", NULL, 8);
        cycles_case("poisson2d:63", P, "gmres:restart=30", "jacobi", 16);
    }
    if (T) {
        cycles_case("ntridiag n=1025", T, "gmres:restart=10", NULL, 2);
        cycles_case("ntridiag n=1025", T, "gmres:restart=10", "jacobi", 2);
    }
    if (E) cycles_case("ntridiag n=1024, row 17 empty, b_17 != 0 (stagnates)", E, "gmres:restart=10", NULL, 2);
    sps_matrix_destroy(P), sps_matrix_destroy(T), sps_matrix_destroy(E);
}

/* The cluster is chosen here, not by the caller's environment. */
static void test_clean_env(void)
{
    unsetenv("SPS_ENGINE"), unsetenv("SPS_ONEKERNEL_MAX"), unsetenv("SPS_GM_CLUSTER");
    unsetenv("SPS_GM_CLUSTER_AUTO"), unsetenv("SPS_GM_CLUSTER_VSHARED"), unsetenv("SPS_GM_CLUSTER_MAX_BASIS");
    unsetenv("SPS_GM_CLUSTER_TPB"), unsetenv("SPS_GM_ONEK_VSHARED"), unsetenv("SPS_GM_ONEK_CYCLES");
    unsetenv("SPS_ONEK_VIEW");
}

T_MAIN_GPU("GMRES on the one kernel's cluster", gctx, hctx, test_clean_env, test_host, test_vshared,
           test_fallback, test_auto, test_time, test_cycles)

#else

T_MAIN_NO_CUDA("GMRES on the one kernel's cluster")

#endif
