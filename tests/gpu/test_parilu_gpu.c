/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_parilu_gpu.c: ILU(0)/IC(0) by fixed-point sweeps
 * (`ilu0:factor=par`, `ic0:factor=par`, precond/parilu/) on the GPU against
 * the host reference: the factor after K sweeps bitwise the host's (the
 * device's own setup from A's device copy for ilu0, the host pattern path for
 * ic0), two device builds bitwise equal, the apply close to the host's and
 * twice bitwise the same, r untouched; the same failure in the same words;
 * a refresh; generated cases, chains of 1..1025 rows with an empty row and a
 * long row, the shared matrices; solves within 5% of the host's iterations,
 * twice bitwise equal; and the setup and apply in SpMVs (printed). */
#include "check.h"
#include "core/gpu.h"
#include "internal.h"
#include "precond/pc_impl.h"
#include "precond/precond.h"
#include "unit/pc_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA
static sps_context *gctx, *hctx;

/* The factor of pc (malloc'd, *nnz entries), or NULL after a FAIL line. */
static double *factor_of(sps_context *ctx, const sps_precond *pc, int64_t *nnz)
{
    if (!T_STATUS(ctx, sps__ilu_factor_values(pc, NULL, nnz), "factor size")) return NULL;
    double *v = malloc((size_t)(*nnz + 1) * sizeof *v);
    if (!T_STATUS(ctx, sps__ilu_factor_values(pc, v, NULL), "factor values")) {
        free(v);
        return NULL;
    }
    return v;
}

/* Two device applies bitwise equal, r untouched, and (close) within 1e-10
 * of the host's. */
static void same_apply(const char *what, const char *spec, sps_precond *hp, sps_precond *gp, sps_idx n, int close)
{
    size_t nb = (size_t)n * sizeof(double);
    double *r = malloc(nb), *zh = malloc(nb), *z1 = malloc(nb), *z2 = malloc(nb), *rb = malloc(nb);
    double *dr = NULL, *dz = NULL;
    for (sps_idx i = 0; i < n; i++) r[i] = 1.0 + 0.5 * sin(0.37 * (double)i);
    if (T_STATUS(hctx, sps_precond_apply(hp, r, zh), "%s %s: host apply", what, spec) &&
        sps__dmalloc(gctx, (void **)&dr, nb) == SPS_OK && sps__dmalloc(gctx, (void **)&dz, nb) == SPS_OK &&
        sps__h2d(gctx, dr, r, nb) == SPS_OK && sps_precond_apply(gp, dr, dz) == SPS_OK &&
        sps__d2h(gctx, z1, dz, nb) == SPS_OK && sps_precond_apply(gp, dr, dz) == SPS_OK &&
        sps__d2h(gctx, z2, dz, nb) == SPS_OK && sps__d2h(gctx, rb, dr, nb) == SPS_OK) {
        double e = 0, m = 0;
        for (sps_idx i = 0; i < n; i++) {
            e = fmax(e, fabs(z1[i] - zh[i]));
            m = fmax(m, fabs(zh[i]));
        }
        T_OK(memcmp(z1, z2, nb) == 0 && memcmp(r, rb, nb) == 0, "%s %s: two applies bitwise equal, r untouched",
             what, spec);
        if (close)
            T_OK(e <= 1e-10 * (m > 0 ? m : 1), "%s %s: apply within 1e-10 of the host's (%.2g relative)", what, spec,
             m > 0 ? e / m : e);
    } else {
        T_FAIL("device apply", "%s %s: %s", what, spec, sps_last_error(gctx));
    }
    sps__dfree(dr);
    sps__dfree(dz);
    free(r); free(zh); free(z1); free(z2); free(rb);
}

/* Build spec on both: the same failure, or the same factor bitwise (twice on
 * the device) and the apply (apply 1: close to the host's and deterministic;
 * 2: deterministic only, for factors too unstable to compare applies). */
static void compare(const char *what, const sps_matrix *A, const char *spec, int apply)
{
    sps_precond *hp = NULL, *gp = NULL, *gp2 = NULL;
    sps_status hs = sps_precond_create(hctx, A, spec, &hp);
    char hmsg[1024];
    snprintf(hmsg, sizeof hmsg, "%s", sps_last_error(hctx));
    sps_status gs = sps_precond_create(gctx, A, spec, &gp);
    if (hs != SPS_OK) {
        T_OK(gs == hs && strcmp(sps_last_error(gctx), hmsg) == 0, "%s %s: the GPU fails like the host (%s / %s)",
             what, spec, hmsg, sps_last_error(gctx));
        sps_precond_destroy(gp);
        return;
    }
    if (T_STATUS(gctx, gs, "%s %s: GPU setup (%.2f ms)", what, spec, sps_precond_setup_ms(gp)) &&
        T_STATUS(gctx, sps_precond_create(gctx, A, spec, &gp2), "%s %s: second GPU setup", what, spec) &&
        sps_matrix_rows(A) > 0) {
        int64_t nh = 0, ng = 0, ng2 = 0;
        double *fh = factor_of(hctx, hp, &nh), *fg = factor_of(gctx, gp, &ng), *fg2 = factor_of(gctx, gp2, &ng2);
        if (fh && fg && fg2) {
            T_OK(nh == ng && memcmp(fh, fg, (size_t)nh * sizeof *fh) == 0, "%s %s: factor bitwise the host's", what,
                 spec);
            T_OK(ng == ng2 && memcmp(fg, fg2, (size_t)ng * sizeof *fg) == 0, "%s %s: two GPU setups bitwise equal",
                 what, spec);
        }
        free(fh); free(fg); free(fg2);
        if (apply) same_apply(what, spec, hp, gp, sps_matrix_rows(A), apply == 1);
    }
    sps_precond_destroy(hp);
    sps_precond_destroy(gp);
    sps_precond_destroy(gp2);
}

static const char *const ilu_specs[] = {"ilu0:factor=par", "ilu0:factor=par,fsweeps=1,solve=jacobi",
                                        "ilu0:factor=par,fsweeps=5,solve=jacobi,sweeps=3",
                                        "ilu0:factor=par,fsweeps=50"};
static const char *const ic_specs[] = {"ic0:factor=par", "ic0:factor=par,fsweeps=1,solve=jacobi",
                                       "ic0:factor=par,fsweeps=5,solve=jacobi", "ic0:factor=par,fsweeps=50"};

static void all_specs(const char *what, const sps_matrix *A, int ic, int apply)
{
    for (int k = 0; k < 4; k++) compare(what, A, ilu_specs[k], apply);
    for (int k = 0; ic && k < 4; k++) compare(what, A, ic_specs[k], apply);
}

static void test_generated(void)
{
    static const char *const gens[] = {"poisson2d:60", "convdiff2d:100,10", "poisson3d:20", "poisson3d27:10",
                                       "convdiff2d:300,50"};
    for (size_t k = 0; k < sizeof gens / sizeof *gens; k++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(hctx, sps_matrix_generate(hctx, gens[k], &A), "%s", gens[k])) continue;
        all_specs(gens[k], A, strncmp(gens[k], "convdiff", 8) != 0, 1);
        sps_matrix_destroy(A);
    }
}

/* A chain of n rows (symmetric values when sym), row `empty` with only its
 * diagonal, row `lng` with every column (and its column). */
static sps_matrix *edge_matrix(sps_idx n, sps_idx empty, sps_idx lng, int sym)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        t_trip_add(&t, i, i, 4.0 + (i % 3));
        if (i == empty) continue;
        if (i + 1 < n && i + 1 != empty) {
            t_trip_add(&t, i, i + 1, -1.0);
            t_trip_add(&t, i + 1, i, sym ? -1.0 : -0.5);
        }
    }
    if (lng >= 0)
        for (sps_idx j = 0; j < n; j++)
            if (j != lng && j != empty && (j < lng - 1 || j > lng + 1)) {
                t_trip_add(&t, lng, j, 0.25 / n);
                t_trip_add(&t, j, lng, sym ? 0.25 / n : -0.125 / n);
            }
    return t_trip_matrix(hctx, n, n, &t);
}

static void test_edges(void)
{
    static const sps_idx ns[] = {1, 2, 31, 32, 33, 1023, 1024, 1025, 100000};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        sps_idx n = ns[k], cases[5][2] = {{-1, -1}, {n / 2, -1}, {-1, 0}, {-1, n - 1}, {1, n / 3}};
        for (int c = 0; c < 5; c++) {
            if (n <= 2 && c > 0) continue;
            if (n > 1025 && c > 1) continue; /* a long row of 100000 is a dense row: the 1025 case has it */
            char what[80];
            snprintf(what, sizeof what, "n=%d empty=%d long=%d", n, cases[c][0], cases[c][1]);
            for (int sym = 0; sym < 2; sym++) {
                sps_matrix *A = edge_matrix(n, cases[c][0], cases[c][1], sym);
                if (!A) continue;
                if (sym) for (int s = 0; s < 4; s++) compare(what, A, ic_specs[s], 1);
                else for (int s = 0; s < 4; s++) compare(what, A, ilu_specs[s], 1);
                sps_matrix_destroy(A);
            }
        }
    }
    const char *types[] = {"ilu0:factor=par", "ic0:factor=par,solve=jacobi"};
    pc_check_empty(hctx, gctx, types, 2, "GPU ");
}

static void dense_case(const char *what, int n, const double *a, const char *spec)
{
    sps_matrix *A = t_matrix_from_dense(hctx, n, n, a);
    if (!A) return;
    compare(what, A, spec, 0);
    sps_matrix_destroy(A);
}

/* Refused pivots: the same status and words on both (compare). */
static void test_pivots(void)
{
    double z[4] = {1, 1, 1, 1}, neg[4] = {1, 2, 2, 1}, big[4] = {1e-300, 1e300, 1e300, 1}, nod[4] = {0, 1, 1, 1};
    dense_case("zero pivot", 2, z, "ilu0:factor=par");
    dense_case("zero pivot", 2, z, "ilu0:factor=par,solve=jacobi");
    dense_case("negative pivot", 2, neg, "ic0:factor=par");
    dense_case("overflow", 2, big, "ilu0:factor=par");
    dense_case("missing diagonal", 2, nod, "ilu0:factor=par");
    dense_case("missing diagonal", 2, nod, "ic0:factor=par");
}

static void real_one(sps_context *c, const sps_matrix *A, const char *name)
{
    (void)c;
    if (sps_matrix_rows(A) != sps_matrix_cols(A)) return;
    const char *kind = t_manifest_kind(name);
    int spd = kind && strcmp(kind, "spd") == 0;
    compare(name, A, "ilu0:factor=par", 2);
    compare(name, A, "ilu0:factor=par,fsweeps=8,solve=jacobi", 2);
    if (spd) compare(name, A, "ic0:factor=par,solve=jacobi", 2);
}

static void test_real(void) { t_each_real(hctx, hctx, "parilu GPU on the shared matrices", real_one); }

/* A refresh on 2.5 A equals a fresh build on it, bitwise, on the device. */
static void test_refresh(void)
{
    const char *specs[] = {"ilu0:factor=par", "ic0:factor=par,fsweeps=4,solve=jacobi"};
    sps_matrix *A = NULL;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, "poisson2d:40", &A), "poisson2d:40")) return;
    double *nv = NULL;
    sps_matrix *B = t_revalued(hctx, A, 2.5, 0.0, 0.0, &nv);
    for (int k = 0; B && k < 2; k++) {
        sps_precond *pc = NULL, *fresh = NULL;
        int64_t n1 = 0, n2 = 0;
        if (T_STATUS(gctx, sps_precond_create(gctx, A, specs[k], &pc), "%s", specs[k]) &&
            T_STATUS(gctx, sps_precond_create(gctx, B, specs[k], &fresh), "%s on 2.5 A", specs[k]) &&
            T_STATUS(gctx, sps_precond_update_values(pc, B), "%s: refresh", specs[k])) {
            double *a = factor_of(gctx, pc, &n1), *b = factor_of(gctx, fresh, &n2);
            if (a && b)
                T_OK(n1 == n2 && memcmp(a, b, (size_t)n1 * sizeof *a) == 0,
                     "%s: refreshed device factor bitwise a fresh build's", specs[k]);
            free(a);
            free(b);
        }
        sps_precond_destroy(pc);
        sps_precond_destroy(fresh);
    }
    sps_matrix_destroy(B);
    free(nv);
    sps_matrix_destroy(A);
}

/* The solve on the host and twice on the GPU: iterations within 5%, the two
 * GPU solves bitwise equal. */
static void solve_case(const char *gen, sps_method m, const char *spec)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, gen, &A), "%s", gen)) return;
    sps_idx n = sps_matrix_rows(A);
    size_t nb = (size_t)n * sizeof(double);
    double *b = malloc(nb), *x[3];
    for (sps_idx i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.1;
    sps_context *cs[3] = {hctx, gctx, gctx};
    int64_t its[3] = {-1, -1, -1};
    int reason[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) {
        x[k] = calloc((size_t)n, sizeof(double));
        sps_operator *op = NULL;
        sps_precond *pc = NULL;
        sps_solver *s = NULL;
        sps_solve_info in;
        if (T_STATUS(cs[k], sps_operator_create(cs[k], A, "csr-vector", NULL, &op), "op %d", k) &&
            T_STATUS(cs[k], sps_precond_create_ex(cs[k], A, op, spec, &pc), "%s %d", spec, k) &&
            T_STATUS(cs[k], sps_solver_create(cs[k], &s), "solver %d", k) &&
            T_STATUS(cs[k], sps_solver_set_method(s, m), "method") &&
            T_STATUS(cs[k], sps_solve(s, op, pc, b, x[k], &in), "solve %d", k)) {
            its[k] = in.iterations;
            reason[k] = in.reason;
        }
        sps_solver_destroy(s);
        sps_precond_destroy(pc);
        sps_operator_destroy(op);
    }
    printf("# %-20s %-34s host %lld iterations, GPU %lld\n", gen, spec, (long long)its[0], (long long)its[1]);
    const int64_t tol = its[0] / 20 > 2 ? its[0] / 20 : 2;
    T_OK(reason[0] > 0 && reason[1] > 0 && llabs(its[1] - its[0]) <= tol,
         "%s %s: GPU %lld iterations, host %lld (within 5%%)", gen, spec, (long long)its[1], (long long)its[0]);
    T_OK(its[1] == its[2] && memcmp(x[1], x[2], nb) == 0, "%s %s: two GPU solves bitwise equal", gen, spec);
    for (int k = 0; k < 3; k++) free(x[k]);
    free(b);
    sps_matrix_destroy(A);
}

static void test_solve(void)
{
    solve_case("convdiff2d:100,10", SPS_BICGSTAB, "ilu0:factor=par");
    solve_case("convdiff2d:100,10", SPS_BICGSTAB, "ilu0:factor=par,solve=jacobi");
    solve_case("poisson2d:63", SPS_CG, "ic0:factor=par");
    solve_case("poisson2d:63", SPS_CG, "ic0:factor=par,fsweeps=5,solve=jacobi");
}

/* Printed, not asserted beyond being timed: the setup (a second build, the
 * matrix already on the device through the operator, kernels loaded) and the
 * apply in SpMVs of csr-vector, against the exact factor's setup. */
static void cost_case(const char *gen, const char *spec, const char *exact)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, gen, &A), "%s", gen)) return;
    sps_operator *op = NULL;
    sps_precond *pc = NULL, *ex = NULL;
    sps_timing ts = {0}, tp = {0};
    double first = -1;
    if (T_STATUS(gctx, sps_operator_create(gctx, A, "csr-vector", NULL, &op), "operator") &&
        T_STATUS(gctx, sps_precond_create_ex(gctx, A, op, spec, &pc), "%s %s", gen, spec)) {
        first = sps_precond_setup_ms(pc);
        sps_precond_destroy(pc);
        pc = NULL;
    }
    if (first >= 0 && T_STATUS(gctx, sps_precond_create_ex(gctx, A, op, spec, &pc), "%s %s again", gen, spec) &&
        T_STATUS(gctx, sps_operator_time(op, 50, 1, &ts), "SpMV time") &&
        T_STATUS(gctx, sps_precond_time(pc, 50, &tp), "apply time")) {
        double spmv_ms = ts.median_us * 1e-3, setup = sps_precond_setup_ms(pc);
        printf("# %s %s setup %.3f ms = %.1f SpMVs (first build %.3f ms); apply %.1f us = %.2f SpMVs "
               "(csr-vector SpMV %.1f us)\n",
               gen, spec, setup, setup / spmv_ms, first, tp.median_us, tp.median_us / ts.median_us, ts.median_us);
        if (exact && sps_precond_create_ex(gctx, A, op, exact, &ex) == SPS_OK)
            printf("# %s %s setup %.3f ms = %.1f SpMVs\n", gen, exact, sps_precond_setup_ms(ex),
                   sps_precond_setup_ms(ex) / spmv_ms);
        T_OK(setup > 0 && ts.median_us > 0 && tp.median_us > 0, "%s %s: timed", gen, spec);
    }
    sps_precond_destroy(ex);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void test_cost(void)
{
    cost_case("convdiff2d:1000,10", "ilu0:factor=par,solve=jacobi", "ilu0:solve=jacobi");
    cost_case("convdiff2d:1000,10", "ilu0:factor=par,fsweeps=1,solve=jacobi", NULL);
    cost_case("convdiff2d:2000,50", "ilu0:factor=par,solve=jacobi", NULL);
    cost_case("poisson3d:160", "ic0:factor=par,solve=jacobi", "ic0:solve=jacobi");
    cost_case("poisson3d:100", "ilu0:factor=par,solve=jacobi", NULL);
}

T_MAIN_GPU("ILU(0)/IC(0) by fixed-point sweeps on the GPU", gctx, hctx, test_generated, test_edges, test_pivots,
           test_real, test_refresh, test_solve, test_cost)

#else

T_MAIN_NO_CUDA("ILU(0)/IC(0) by fixed-point sweeps on the GPU")

#endif /* SPS_HAVE_CUDA */
