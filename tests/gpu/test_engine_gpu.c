/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_engine_gpu.c: the iteration engines on the GPU
 * (solvers/engine.h, doc/solvers.md "Iteration engine").
 *
 * 1. onekernel (CG and BiCGSTAB, one thread block): against the host driver (same reason,
 *    iterations within 5%, x within 1e-6, true relative residual <= 1e-9),
 *    without and with Jacobi, on every CSR-family backend, for n = 31, 32,
 *    33, 1023, 1024, 1025 (a shifted 1-D Laplacian, and an arrow matrix with
 *    one row of n entries), poisson2d:63 and real SPD matrices; two runs
 *    bitwise equal; info->engine says "onekernel"; the three layouts
 *    (SPS_ONEK_LAYOUT: registers, shared, global memory) bitwise equal; the
 *    staged entries (a CSR's DIA view, its columns and values, in part or
 *    whole, none) bitwise equal; the
 *    dia backend's rows too; a backend without device rows (drm), a
 *    system above SPS_ONEKERNEL_MAX and ic0 (either order) fall back to
 *    classic, bitwise equal to it (GMRES's one kernel: test_gmres_onek_gpu.c).
 * 1b. auto (the default): onekernel for small CG/BiCGSTAB systems, fused for
 *    CG otherwise where the backend has apply_dot, else classic; a stop
 *    monitor keeps the host checks (no onekernel); SPS_ENGINE overrides.
 * 2. graph (CG): bitwise equal to classic (x, iterations, history), with no,
 *    Jacobi, ic0:exact (SpSV) and ic0 (multicolor) preconditioning, on poisson2d:63 and a 256 x 256 grid
 *    (batches up to 64); two runs bitwise equal; BiCGSTAB and GMRES fall back
 *    to classic, bitwise equal to it.
 * 3. fused: the apply_dot of csr-vector, drm (both mappings) and dia against
 *    the host (y bitwise the plain apply's, the partials' sum x'Ax), for n =
 *    31, 32, 33, 1023, 1024, 1025, 100000, empty rows and one long row (dia: a
 *    band), few and many blocks, run twice bitwise; CG with the fused engine
 *    on each of them against the host driver; a backend without
 *    apply_dot falls back to classic, bitwise.
 * 4. The traffic model on the device: bytes, floor and fraction reported;
 *    the per-iteration time of each engine printed (a '#' line).
 * Without a device (or without CUDA) it prints one SKIP line. */
#include "check.h"
#include "internal.h"
#include "core/gpu.h"
#include "spmv/backend.h"
#include "solvers/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA

#include "engine_jobs.h"

static sps_context *gctx, *hctx;

/* Solve A x = b on ctx (x0 = 0, rtol 1e-10, history on). */
static result solve_on(sps_context *ctx, const sps_matrix *A, const job *j, const double *b)
{
    return job_solve(ctx, A, j, b, 0);
}

/* tridiag(-1, d, -1) of size n; with arrow, row and column 0 full (2/n). */
static sps_matrix *tridiag(int n, double d, int arrow)
{
    t_triplets t = {0};
    for (int i = 0; i < n; i++) {
        t_trip_add(&t, i, i, d);
        if (i > 0) t_trip_add(&t, i, i - 1, -1.0);
        if (i < n - 1) t_trip_add(&t, i, i + 1, -1.0);
        if (arrow && i > 1) t_trip_add(&t, 0, i, 2.0 / n), t_trip_add(&t, i, 0, 2.0 / n);
    }
    return t_trip_matrix(hctx, n, n, &t);
}

/* ---- 1. onekernel against the host ---------------------------------------- */

static void onek_case(const char *name, const sps_matrix *A, const char *method, const char *pcname)
{
    int n = sps_matrix_rows(A);
    double *b = rhs(n);
    job hj = {"csr-scalar", method, pcname, NULL};
    result ref = solve_on(hctx, A, &hj, b);
    if (!T_STATUS(hctx, ref.st, "%s host", name)) goto out;
    const char *csr[] = {"csr-vector", "csr-scalar", "merge", "cusparse:alg2", "dia"};
    for (int k = 0; k < 5; k++) {
        char what[200];
        snprintf(what, sizeof what, "onekernel %s %s%s%s %s", name, method, pcname ? "+" : "",
                 pcname ? pcname : "", csr[k]);
        job gj = {csr[k], method, pcname, "onekernel"};
        result g = solve_on(gctx, A, &gj, b);
        if (job_ran(gctx, &g, what, strcmp(csr[k], "dia") == 0) <= 0) continue;
        int64_t di = g.in.iterations - ref.in.iterations;
        /* BiCGSTAB's residual is not monotone and its count follows the
         * reduction order: on an H100, tridiag(2.1) n=1023 takes 52 iterations
         * on the host and 57 with onekernel's sums (58 against 52 with
         * Jacobi). CG stays within 5%, BiCGSTAB within 15%. */
        int pct = strcmp(method, "cg") == 0 ? 5 : 15;
        int64_t tol = ref.in.iterations * pct / 100 > 2 ? ref.in.iterations * pct / 100 : 2;
        T_OK(strcmp(g.engine, "onekernel") == 0, "%s: engine %s", what, g.engine);
        T_OK(g.in.reason == ref.in.reason, "%s: reason %s (host %s)", what, sps_reason_str(g.in.reason),
             sps_reason_str(ref.in.reason));
        T_OK(llabs((long long)di) <= tol, "%s: %lld iterations, host %lld (within %d%%)", what,
             (long long)g.in.iterations, (long long)ref.in.iterations, pct);
        if (ref.in.reason > 0) {
            double e = t_rel_diff(g.x, ref.x, n);
            T_OK(e <= 1e-6 && g.in.true_rel_rnorm <= 1e-9, "%s: x within %.1e of the host's, true relres %.1e",
                 what, e, g.in.true_rel_rnorm);
        }
        T_OK(g.hist && g.in.history_len == g.in.iterations + 1 && g.hist[0] == g.in.r0norm &&
                 g.hist[g.in.iterations] == g.in.rnorm,
             "%s: history consistent", what);
        if (strcmp(method, "cg") == 0)
            T_OK(g.in.spmvs >= g.in.iterations + 2 && g.in.spmvs <= g.in.iterations + 3 + 2 * g.in.replacements,
                 "%s: %lld SpMVs for %lld iterations", what, (long long)g.in.spmvs, (long long)g.in.iterations);
        result g2 = solve_on(gctx, A, &gj, b);
        T_OK(same(&g, &g2, n), "%s: two runs bitwise equal", what);
        result_free(&g2);
        /* the layouts (registers, shared or global memory) do the same
         * operations in the same order: bitwise the default's. */
        const char *lay[] = {"global", "shared", "regs"};
        for (int l = 0; l < 3; l++) {
            setenv("SPS_ONEK_LAYOUT", lay[l], 1);
            result gl = solve_on(gctx, A, &gj, b);
            unsetenv("SPS_ONEK_LAYOUT");
            T_OK(same(&g, &gl, n), "%s: layout %s bitwise the default's", what, lay[l]);
            result_free(&gl);
        }
        /* the register layouts' staged entries (kernels.cuh onek_stage): dia's
         * values, a CSR's columns and values read from shared memory (the
         * default where they fit), from global memory, or in part from each
         * (half the columns; all columns and a third of the values; all of
         * both where they fit, even below ONEK_STAGE_MIN): bitwise the same */
        setenv("SPS_ONEK_VALS", "0", 1);
        result gv = solve_on(gctx, A, &gj, b);
        unsetenv("SPS_ONEK_VALS");
        T_OK(same(&g, &gv, n), "%s: values from global memory (SPS_ONEK_VALS=0) bitwise the default's", what);
        result_free(&gv);
        /* a CSR's DIA view (the default where the rows have few diagonals:
         * the tridiagonal and Poisson cases) against the CSR staged as such */
        setenv("SPS_ONEK_VIEW", "0", 1);
        result gw = solve_on(gctx, A, &gj, b);
        T_OK(same(&g, &gw, n), "%s: no DIA view (SPS_ONEK_VIEW=0) bitwise the default's", what);
        result_free(&gw);
        const long long nnz = (long long)sps_matrix_nnz(A);
        const long long caps[3] = {nnz, 2 * nnz + 8 * (nnz / 3), 10 * nnz};
        for (int c = 0; c < 3 && strcmp(csr[k], "dia") != 0; c++) {
            char cap[32];
            snprintf(cap, sizeof cap, "%lld", caps[c]);
            setenv("SPS_ONEK_STAGE_MAX", cap, 1);
            result gp = solve_on(gctx, A, &gj, b);
            unsetenv("SPS_ONEK_STAGE_MAX");
            T_OK(same(&g, &gp, n), "%s: entries staged in part (SPS_ONEK_STAGE_MAX=%s) bitwise the default's",
                 what, cap);
            result_free(&gp);
        }
        unsetenv("SPS_ONEK_VIEW");
        result_free(&g);
    }
    result_free(&ref);
out:
    free(b);
}

/* The engine asked for does not apply: classic runs, bitwise classic's. */
static void fallback_case(const char *what, const sps_matrix *A, const job *j, const char *engine)
{
    int n = sps_matrix_rows(A);
    double *b = rhs(n);
    job cj = *j, ej = *j;
    cj.engine = "classic";
    ej.engine = engine;
    result c = solve_on(gctx, A, &cj, b), e = solve_on(gctx, A, &ej, b);
    if (c.st == SPS_ERR_UNSUPPORTED) t_skip(what, "%s", sps_last_error(gctx));
    else
        T_OK(same(&c, &e, n) && strcmp(e.engine, "classic") == 0,
             "%s: falls back to classic (%s), bitwise equal to it", what, e.engine);
    result_free(&c), result_free(&e);
    free(b);
}


/* The device rows' DIA view (backend.h view_ndiag): a CSR operator's
 * distinct diagonals, ascending, where there are at most SPS_VIEW_DIAGS; none
 * above that, nor for dia's own rows. */
static void view_case(const char *name, const sps_matrix *A, const char *spmv, int nd, const sps_idx *off)
{
    sps_operator *op = NULL;
    sps_dev_rows r;
    if (!T_STATUS(gctx, sps_operator_create(gctx, A, spmv, NULL, &op), "view %s %s", name, spmv)) return;
    if (T_OK(sps__engine_rows(op, &r), "view %s %s: device rows", name, spmv)) {
        int same_off = r.view_ndiag == nd && (nd == 0 ? r.view_off == NULL : r.view_off != NULL);
        for (int d = 0; same_off && d < nd; d++) same_off = r.view_off[d] == off[d];
        T_OK(same_off, "view %s %s: %d diagonals listed (expected %d)", name, spmv, (int)r.view_ndiag, nd);
    }
    sps_operator_destroy(op);
}

static void test_view(void)
{
    sps_matrix *P = NULL;
    if (T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:63", &P), "poisson2d:63")) {
        const sps_idx off[5] = {-63, -1, 0, 1, 63};
        view_case("poisson2d:63", P, "csr-scalar", 5, off);
        view_case("poisson2d:63", P, "csr-vector", 5, off);
        view_case("poisson2d:63", P, "dia", 0, NULL);
        sps_matrix_destroy(P);
    }
    const int sizes[] = {31, 32, 33, 1023, 1024, 1025};
    for (int i = 0; i < 6; i++) {
        char name[64];
        const sps_idx off3[3] = {-1, 0, 1};
        sps_matrix *T = tridiag(sizes[i], 2.1, 0), *W = tridiag(sizes[i], 4.0, 1);
        snprintf(name, sizeof name, "tridiag n=%d", sizes[i]);
        view_case(name, T, "csr-scalar", 3, off3);
        /* the arrow: every diagonal of the matrix (2n - 1), one more than
         * SPS_VIEW_DIAGS from n = 17 */
        snprintf(name, sizeof name, "arrow n=%d", sizes[i]);
        view_case(name, W, "csr-scalar", 0, NULL);
        sps_matrix_destroy(T);
        sps_matrix_destroy(W);
    }
}

static void test_onekernel(void)
{
    int sizes[] = {31, 32, 33, 1023, 1024, 1025, 2047, 2049, 4096, 4097};
    for (int i = 0; i < 10; i++) {
        char name[64];
        sps_matrix *T = tridiag(sizes[i], 2.1, 0), *W = tridiag(sizes[i], 4.0, 1);
        snprintf(name, sizeof name, "tridiag n=%d", sizes[i]);
        onek_case(name, T, "cg", NULL);
        onek_case(name, T, "cg", "jacobi");
        onek_case(name, T, "bicgstab", NULL);
        onek_case(name, T, "bicgstab", "jacobi");
        snprintf(name, sizeof name, "arrow n=%d (one row of n entries)", sizes[i]);
        onek_case(name, W, "cg", NULL);
        onek_case(name, W, "bicgstab", NULL);
        sps_matrix_destroy(T);
        sps_matrix_destroy(W);
    }
    sps_matrix *P = NULL;
    if (T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:63", &P), "poisson2d:63")) {
        onek_case("poisson2d:63", P, "cg", NULL);
        onek_case("poisson2d:63", P, "cg", "jacobi");
        onek_case("poisson2d:63", P, "bicgstab", NULL);
        onek_case("poisson2d:63", P, "bicgstab", "jacobi");
        job d = {"drm", "cg", NULL, NULL};
        fallback_case("onekernel poisson2d:63 cg drm (no device rows)", P, &d, "onekernel");
        /* GMRES's one kernel: tests/gpu/test_gmres_onek_gpu.c */
        job ic = {"csr-vector", "cg", "ic0:exact", NULL}, mc = {"csr-vector", "cg", "ic0", NULL};
        fallback_case("onekernel poisson2d:63 cg+ic0:exact", P, &ic, "onekernel");
        fallback_case("onekernel poisson2d:63 cg+ic0 (multicolor)", P, &mc, "onekernel");
        setenv("SPS_ONEKERNEL_MAX", "1000", 1);
        job c = {"csr-vector", "cg", NULL, NULL};
        fallback_case("onekernel poisson2d:63 cg, SPS_ONEKERNEL_MAX=1000", P, &c, "onekernel");
        unsetenv("SPS_ONEKERNEL_MAX");
        sps_matrix_destroy(P);
    }
    const char *real[] = {"nos6", "bcsstk09", "gr_30_30"};
    for (int i = 0; i < 3; i++) {
        sps_matrix *A = t_read_real(hctx, real[i]);
        if (!A) continue;
        onek_case(real[i], A, "cg", NULL);
        onek_case(real[i], A, "cg", "jacobi");
        sps_matrix_destroy(A);
    }
    /* BiCGSTAB's count moves with the rounding order (test_solvers_gpu.c):
     * pde2961 is one that stays within 5% */
    sps_matrix *B = t_read_real(hctx, "pde2961");
    if (B) onek_case("pde2961", B, "bicgstab", NULL);
    sps_matrix_destroy(B);
}

/* ---- 1b. auto: which engine runs ------------------------------------------ */

static int stop_never(void *user, int64_t it, double rnorm)
{
    (void)user, (void)it, (void)rnorm;
    return 0;
}

/* The engine auto (NULL: the default) runs for j on A, and with a stop
 * monitor; the result is bitwise that engine's when named. */
static void auto_case(const char *name, const sps_matrix *A, const job *j, const char *expect,
                      const char *expect_monitored)
{
    int n = sps_matrix_rows(A);
    double *b = rhs(n);
    job aj = *j, ej = *j;
    aj.engine = NULL;
    ej.engine = expect;
    result a = solve_on(gctx, A, &aj, b), e = solve_on(gctx, A, &ej, b);
    char what[200];
    snprintf(what, sizeof what, "auto %s %s%s%s %s", name, j->method, j->pc ? "+" : "", j->pc ? j->pc : "",
             j->spmv);
    if (T_STATUS(gctx, a.st, "%s", what) && T_STATUS(gctx, e.st, "%s: %s", what, expect)) {
        T_OK(strcmp(a.engine, expect) == 0, "%s: ran %s (expected %s)", what, a.engine, expect);
        T_OK(same(&a, &e, n), "%s: bitwise the named engine's", what);
    }
    result_free(&a), result_free(&e);
    /* a stop monitor wants its host checks: no one-kernel path */
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    sps_solve_info in;
    double *x = calloc((size_t)n, sizeof *x);
    sps_status st = sps_operator_create(gctx, A, j->spmv, NULL, &op);
    if (st == SPS_OK) st = sps_solver_create(gctx, &s);
    if (st == SPS_OK) st = sps_solver_set_method_name(s, j->method);
    if (st == SPS_OK) st = sps_solver_set_monitor_stop(s, stop_never, NULL);
    if (st == SPS_OK) st = sps_solve(s, op, NULL, b, x, &in);
    if (T_STATUS(gctx, st, "%s, stop monitor", what))
        T_OK(strcmp(in.engine, expect_monitored) == 0, "%s, stop monitor: ran %s (expected %s)", what,
             in.engine, expect_monitored);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    free(x);
    free(b);
}

static void test_auto(void)
{
    sps_matrix *P = NULL, *Q = NULL;
    if (T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:63", &P), "poisson2d:63")) {
        job cg = {"csr-vector", "cg", NULL, NULL}, cgd = {"dia", "cg", NULL, NULL},
            cgj = {"csr-vector", "cg", "jacobi", NULL}, bi = {"dia", "bicgstab", NULL, NULL},
            gm = {"csr-vector", "gmres:restart=30", NULL, NULL}, cgm = {"drm", "cg", NULL, NULL},
            cgs = {"cusparse:alg2", "cg", NULL, NULL};
        auto_case("poisson2d:63", P, &cg, "onekernel", "fused");
        auto_case("poisson2d:63", P, &cgd, "onekernel", "fused");
        auto_case("poisson2d:63", P, &cgj, "onekernel", "fused");
        auto_case("poisson2d:63", P, &bi, "onekernel", "classic");
        auto_case("poisson2d:63", P, &gm, "onekernel", "classic");
        auto_case("poisson2d:63", P, &cgm, "fused", "fused");     /* drm: no device rows */
        auto_case("poisson2d:63", P, &cgs, "onekernel", "classic"); /* no apply_dot */
        setenv("SPS_ONEKERNEL_MAX", "1000", 1);
        auto_case("poisson2d:63, SPS_ONEKERNEL_MAX=1000", P, &cg, "fused", "fused");
        unsetenv("SPS_ONEKERNEL_MAX");
        double *b = rhs(sps_matrix_rows(P));
        setenv("SPS_ENGINE", "classic", 1);
        result r = solve_on(gctx, P, &cg, b);
        unsetenv("SPS_ENGINE");
        if (T_STATUS(gctx, r.st, "auto poisson2d:63 cg, SPS_ENGINE=classic"))
            T_OK(strcmp(r.engine, "classic") == 0, "SPS_ENGINE=classic overrides auto (%s ran)", r.engine);
        result_free(&r);
        free(b);
    }
    if (T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:256", &Q), "poisson2d:256")) {
        job cg = {"csr-vector", "cg", NULL, NULL}, bi = {"csr-vector", "bicgstab", NULL, NULL};
        auto_case("poisson2d:256", Q, &cg, "fused", "fused");
        auto_case("poisson2d:256", Q, &bi, "classic", "classic");
    }
    /* one row of n entries: one thread of the one kernel would walk 2 x 1025
     * terms in turn per SpMV (engine.c SPS_ONEK_AUTO_SERIAL): auto leaves it,
     * named it still runs */
    sps_matrix *W = tridiag(1025, 4.0, 1);
    if (T_OK(W != NULL, "arrow n=1025")) {
        job cg = {"csr-vector", "cg", NULL, NULL}, bi = {"csr-vector", "bicgstab", NULL, NULL},
            bo = {"csr-vector", "bicgstab", NULL, "onekernel"};
        auto_case("arrow n=1025", W, &cg, "fused", "fused");
        auto_case("arrow n=1025", W, &bi, "classic", "classic");
        double *b = rhs(1025);
        result r = solve_on(gctx, W, &bo, b);
        if (T_STATUS(gctx, r.st, "arrow n=1025 bicgstab, onekernel named"))
            T_OK(strcmp(r.engine, "onekernel") == 0, "arrow n=1025: onekernel named runs (%s)", r.engine);
        result_free(&r);
        free(b);
    }
    sps_matrix_destroy(W);
    sps_matrix_destroy(P);
    sps_matrix_destroy(Q);
}

/* ---- 2. graph against classic --------------------------------------------- */

/* expect_graph: 1 the graph engine must run, 0 classic must (the method is
 * not replayable), -1 either (a preconditioner whose apply may not capture). */
static void graph_case(const char *name, const sps_matrix *A, const job *j, int expect_graph)
{
    int n = sps_matrix_rows(A);
    double *b = rhs(n);
    job cj = *j, gj = *j;
    cj.engine = "classic";
    gj.engine = "graph";
    char what[200];
    snprintf(what, sizeof what, "graph %s %s%s%s %s", name, j->method, j->pc ? "+" : "", j->pc ? j->pc : "",
             j->spmv);
    result c = solve_on(gctx, A, &cj, b), g = solve_on(gctx, A, &gj, b), g2 = solve_on(gctx, A, &gj, b);
    if (T_STATUS(gctx, c.st, "%s: classic", what) && T_STATUS(gctx, g.st, "%s: graph", what)) {
        T_OK(c.in.reason > 0, "%s: converged (%s, %lld iterations)", what, sps_reason_str(c.in.reason),
             (long long)c.in.iterations);
        T_OK(same(&c, &g, n), "%s: bitwise equal to classic (x, iterations %lld/%lld, history)", what,
             (long long)g.in.iterations, (long long)c.in.iterations);
        T_OK(same(&g, &g2, n), "%s: two runs bitwise equal", what);
        if (expect_graph > 0) {
            T_OK(strcmp(g.engine, "graph") == 0, "%s: the graph engine ran (%s)", what, g.engine);
            /* no monitor, no check interval: the whole loop is one launch of
             * a conditional while node, so the host never waits while
             * iterations are still to run */
            T_OK(g.in.steady_syncs == 0 && c.in.steady_syncs > 0,
                 "%s: host waits with iterations still to run: graph %lld, classic %lld", what,
                 (long long)g.in.steady_syncs, (long long)c.in.steady_syncs);
            /* one SpMV an iteration, b - A x0's and the true residual's, and
             * at most 3 no-op iterations past the stop in the while node's
             * last round of 4 (engine.h SPS_GRAPH_WHILE_LEN) */
            T_OK(g.in.spmvs >= g.in.iterations + 2 &&
                     g.in.spmvs <= g.in.iterations + 6 + 5 * g.in.replacements,
                 "%s: %lld SpMVs for %lld iterations", what, (long long)g.in.spmvs,
                 (long long)g.in.iterations);
        }
        else if (expect_graph == 0)
            T_OK(strcmp(g.engine, "classic") == 0, "%s: not replayable, classic ran (%s)", what, g.engine);
        printf("# %s: classic %.4f ms/it, graph %.4f ms/it, %lld syncs (%lld steady) / %lld iterations\n",
               what, c.in.per_iter_ms, g.in.per_iter_ms, (long long)g.in.host_syncs,
               (long long)g.in.steady_syncs, (long long)g.in.iterations);
    }
    result_free(&c), result_free(&g), result_free(&g2);
    free(b);
}

static void test_graph(void)
{
    const char *grids[] = {"poisson2d:63", "poisson2d:256"};
    for (int i = 0; i < 2; i++) {
        sps_matrix *P = NULL;
        if (!T_STATUS(hctx, sps_matrix_generate(hctx, grids[i], &P), "%s", grids[i])) continue;
        job js[] = {{"csr-vector", "cg", NULL, NULL},       {"csr-vector", "cg", "jacobi", NULL},
                    {"cusparse:alg2", "cg", NULL, NULL},    {"drm", "cg", NULL, NULL},
                    {"csr-vector", "cg", "ic0:exact", NULL}, {"csr-vector", "cg", "ic0", NULL}};
        /* cuSPARSE's SpMV and ic0's triangular solves (SpSV; the multicolor
         * sweeps) may or may not capture */
        for (int k = 0; k < 6; k++) graph_case(grids[i], P, &js[k], k == 2 || k >= 4 ? -1 : 1);
        job bi = {"csr-vector", "bicgstab", NULL, NULL}, gm = {"csr-vector", "gmres:restart=30", NULL, NULL};
        graph_case(grids[i], P, &bi, 0);
        if (i == 0) graph_case(grids[i], P, &gm, 0);
        sps_matrix_destroy(P);
    }
}

/* ---- 3. fused SpMV plus dot ------------------------------------------------ */

/* n x n: row i has (i % 5) entries (row 3, 8, ... : none when i % 5 == 0),
 * row 1 has n entries (one long row). */
static sps_matrix *ragged(int n)
{
    t_triplets t = {0};
    uint64_t seed = 3;
    for (int i = 0; i < n; i++) {
        int len = i == 1 ? n : i % 5;
        for (int q = 0; q < len; q++) t_trip_add(&t, i, i == 1 ? q : (i * 7 + q * 13) % n, t_rand(&seed));
    }
    return t_trip_matrix(hctx, n, n, &t);
}

/* n x n with diagonals -2..2 (rows near the ends shorter): dia takes it. */
static sps_matrix *band5(int n)
{
    t_triplets t = {0};
    uint64_t seed = 5;
    for (int i = 0; i < n; i++)
        for (int d = -2; d <= 2; d++)
            if (i + d >= 0 && i + d < n) t_trip_add(&t, i, i + d, d == 0 ? 8.0 : t_rand(&seed));
    return t_trip_matrix(hctx, n, n, &t);
}

/* backend's apply_dot on A (taken): y bitwise the plain apply's and within
 * 1e-12 of the host's, the partials' sum x'Ax, partials repeatable, for
 * maxparts 1, 3 and 1024. */
static void apply_dot_case(const char *be, sps_matrix *A, const char *label)
{
    int n = A ? sps_matrix_rows(A) : 0;
    sps_operator *op = NULL;
    char what[96];
    snprintf(what, sizeof what, "apply_dot %s %s n=%d", be, label, n);
    if (!A || !T_STATUS(gctx, sps_operator_create(gctx, A, be, NULL, &op), "%s", what)) {
        sps_matrix_destroy(A);
        return;
    }
    double *x = rhs(n), *yh = calloc((size_t)n, sizeof *yh), *y1 = calloc((size_t)n, sizeof *y1),
           *y2 = calloc((size_t)n, sizeof *y2);
    sps_operator_apply_host(op, 1.0, x, 0.0, yh);
    double ref = 0, mag = 0;
    for (int i = 0; i < n; i++) ref += x[i] * yh[i], mag += fabs(x[i] * yh[i]);
    void *dx = NULL, *dy = NULL, *dy2 = NULL, *dp = NULL;
    sps__dmalloc(gctx, &dx, (size_t)n * 8), sps__dmalloc(gctx, &dy, (size_t)n * 8);
    sps__dmalloc(gctx, &dy2, (size_t)n * 8), sps__dmalloc(gctx, &dp, 1024 * 8);
    sps__h2d(gctx, dx, x, (size_t)n * 8);
    T_OK(op->be->apply_dot != NULL, "%s: %s offers apply_dot", what, be);
    int maxp[] = {1, 3, 1024};
    for (int m = 0; m < 3 && op->be->apply_dot; m++) {
        int np = 0, np2 = 0;
        double p1[1024], p2[1024];
        sps_status st = op->be->apply_dot(gctx, op->dev, dx, dy, dp, maxp[m], &np);
        if (st == SPS_OK) st = sps__gpu_sync(gctx);
        sps__d2h(gctx, y1, dy, (size_t)n * 8);
        sps__d2h(gctx, p1, dp, (size_t)(np > 0 ? np : 1) * 8);
        st = st == SPS_OK ? op->be->apply_dot(gctx, op->dev, dx, dy, dp, maxp[m], &np2) : st;
        sps__d2h(gctx, p2, dp, (size_t)(np2 > 0 ? np2 : 1) * 8);
        sps_operator_apply(op, 1.0, dx, 0.0, dy2);
        sps__d2h(gctx, y2, dy2, (size_t)n * 8);
        if (!T_STATUS(gctx, st, "%s maxparts %d", what, maxp[m])) continue;
        double sum = 0, e = 0, ymax = 1e-300;
        for (int b = 0; b < np; b++) sum += p1[b];
        for (int i = 0; i < n; i++) e = fmax(e, fabs(y1[i] - yh[i])), ymax = fmax(ymax, fabs(yh[i]));
        e /= ymax; /* normwise: row 1's n terms may cancel */
        T_OK(np >= 1 && np <= maxp[m] && np == np2, "%s maxparts %d: %d blocks", what, maxp[m], np);
        T_OK(memcmp(y1, y2, (size_t)n * 8) == 0, "%s maxparts %d: y bitwise the plain apply's", what, maxp[m]);
        T_OK(e <= 1e-12, "%s maxparts %d: y within %.1e of the host's", what, maxp[m], e);
        T_OK(fabs(sum - ref) <= 8.0 * n * 2.2e-16 * mag + 1e-300, "%s maxparts %d: x'Ax %.17g, host %.17g", what, maxp[m], sum,
             ref);
        T_OK(memcmp(p1, p2, (size_t)np * 8) == 0, "%s maxparts %d: partials bitwise equal run to run", what,
             maxp[m]);
    }
    sps__dfree(dx), sps__dfree(dy), sps__dfree(dy2), sps__dfree(dp);
    free(x), free(yh), free(y1), free(y2);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void fused_case(const char *name, const sps_matrix *A, const char *pcname, const char *be)
{
    int n = sps_matrix_rows(A);
    double *b = rhs(n);
    job hj = {"csr-scalar", "cg", pcname, NULL}, fj = {be, "cg", pcname, "fused"};
    char what[160];
    snprintf(what, sizeof what, "fused %s cg%s%s %s", name, pcname ? "+" : "", pcname ? pcname : "", be);
    result h = solve_on(hctx, A, &hj, b), f = solve_on(gctx, A, &fj, b), f2 = solve_on(gctx, A, &fj, b);
    if (T_STATUS(hctx, h.st, "%s: host", what) && T_STATUS(gctx, f.st, "%s: solve", what)) {
        int64_t di = f.in.iterations - h.in.iterations;
        int64_t tol = h.in.iterations / 20 > 2 ? h.in.iterations / 20 : 2;
        T_OK(strcmp(f.engine, "fused") == 0, "%s: engine %s", what, f.engine);
        T_OK(f.in.reason == h.in.reason && llabs((long long)di) <= tol,
             "%s: %s after %lld iterations (host %s, %lld)", what, sps_reason_str(f.in.reason),
             (long long)f.in.iterations, sps_reason_str(h.in.reason), (long long)h.in.iterations);
        if (h.in.reason > 0)
            T_OK(t_rel_diff(f.x, h.x, n) <= 1e-6 && f.in.true_rel_rnorm <= 1e-9, "%s: x within %.1e of the host's",
                 what, t_rel_diff(f.x, h.x, n));
        T_OK(same(&f, &f2, n), "%s: two runs bitwise equal", what);
    }
    result_free(&h), result_free(&f), result_free(&f2);
    free(b);
}

static void test_fused(void)
{
    int sizes[] = {31, 32, 33, 1023, 1024, 1025, 100000};
    for (int i = 0; i < 7; i++) {
        apply_dot_case("csr-vector", ragged(sizes[i]), "ragged");
        apply_dot_case("drm", ragged(sizes[i]), "ragged");
        apply_dot_case("drm:rows=0", ragged(sizes[i]), "ragged");
        apply_dot_case("dia", band5(sizes[i]), "band5");
    }
    const char *gens[] = {"poisson2d:63", "poisson2d:256"};
    const char *fbe[] = {"csr-vector", "drm", "dia"};
    for (int i = 0; i < 2; i++) {
        sps_matrix *P = NULL;
        if (!T_STATUS(hctx, sps_matrix_generate(hctx, gens[i], &P), "%s", gens[i])) continue;
        for (int k = 0; k < 3; k++) {
            fused_case(gens[i], P, NULL, fbe[k]);
            fused_case(gens[i], P, "jacobi", fbe[k]);
        }
        if (i == 0) {
            job c = {"cusparse:alg2", "cg", NULL, NULL};
            fallback_case("fused poisson2d:63 cg cusparse:alg2 (no apply_dot)", P, &c, "fused");
            job bi = {"csr-vector", "bicgstab", NULL, NULL};
            fallback_case("fused poisson2d:63 bicgstab", P, &bi, "fused");
        }
        sps_matrix_destroy(P);
    }
    const char *real[] = {"nos6", "bcsstk09"};
    for (int i = 0; i < 2; i++) {
        sps_matrix *A = t_read_real(hctx, real[i]);
        if (!A) continue;
        fused_case(real[i], A, NULL, "csr-vector");
        fused_case(real[i], A, NULL, "drm");
        sps_matrix_destroy(A);
    }
}

/* ---- 4. the traffic model, and each engine's time ------------------------- */

static void test_floor(void)
{
    const char *gens[] = {"poisson2d:63", "poisson3d:160"};
    const char *engines[] = {"classic", "graph", "onekernel", "fused"};
    const char *methods[] = {"cg", "bicgstab", "gmres:restart=30"};
    for (int i = 0; i < 2; i++) {
        sps_matrix *P = NULL;
        if (!T_STATUS(hctx, sps_matrix_generate(hctx, gens[i], &P), "%s", gens[i])) continue;
        int n = sps_matrix_rows(P);
        double *b = rhs(n);
        for (int m = 0; m < (i == 0 ? 3 : 2); m++)
            for (int e = 0; e < 4; e++) {
                job j = {"csr-vector", methods[m], NULL, engines[e]};
                result r = solve_on(gctx, P, &j, b);
                if (T_STATUS(gctx, r.st, "%s %s %s", gens[i], methods[m], engines[e])) {
                    T_OK(r.in.bytes_per_iter > 88.0 * n && r.in.copy_gbps > 0 && r.in.floor_per_iter_ms > 0 &&
                             r.in.floor_fraction > 0.5,
                         "%s %s %s: %.0f bytes per iteration, floor %.2f us at %.0f GB/s, %.2f x the floor",
                         gens[i], methods[m], engines[e], r.in.bytes_per_iter, r.in.floor_per_iter_ms * 1e3,
                         r.in.copy_gbps, r.in.floor_fraction);
                    printf("# %s %s engine %s ran %s: %.2f us per iteration (%lld iterations), floor %.2f us, "
                           "%.2f x the floor, %lld syncs\n",
                           gens[i], methods[m], engines[e], r.engine, r.in.per_iter_ms * 1e3,
                           (long long)r.in.iterations, r.in.floor_per_iter_ms * 1e3, r.in.floor_fraction,
                           (long long)r.in.host_syncs);
                }
                result_free(&r);
            }
        free(b);
        sps_matrix_destroy(P);
    }
}

/* The engines are chosen here, not by the caller's environment. */
static void test_clean_env(void) { unsetenv("SPS_ENGINE"); }

T_MAIN_GPU("the iteration engines on the GPU", gctx, hctx, test_clean_env, test_view, test_onekernel, test_auto, test_graph,
           test_fused, test_floor)

#else

T_MAIN_NO_CUDA("the iteration engines on the GPU")

#endif
