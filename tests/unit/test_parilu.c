/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_parilu.c: ILU(0)/IC(0) by fixed-point sweeps
 * (`ilu0:factor=par`, `ic0:factor=par`, precond/parilu/) on the host: the
 * fixed point equals the exact factor (precond/ilu.c's) on generated and
 * shared matrices, reached within the sweeps that the dependency chains
 * need; a few sweeps make a preconditioner whose solves take at most 1.5x
 * the exact factor's iterations; the edge sizes, an empty off-diagonal row,
 * a long row; refused pivots named by row in the exact variants' words; a
 * refresh equal to a fresh build; the parameters. */
#include "pc_check.h"
#include "precond/parilu/parilu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

/* The factor values of spec built on A (malloc'd; *nnz its length), or NULL. */
static double *factor_of(const sps_matrix *A, const char *spec, int64_t *nnz)
{
    sps_precond *pc = NULL;
    double *v = NULL;
    if (T_STATUS(ctx, sps_precond_create(ctx, A, spec, &pc), "%s", spec) &&
        T_STATUS(ctx, sps__ilu_factor_values(pc, NULL, nnz), "%s: size", spec)) {
        v = malloc((size_t)(*nnz + 1) * sizeof *v);
        if (!T_STATUS(ctx, sps__ilu_factor_values(pc, v, NULL), "%s: values", spec)) {
            free(v);
            v = NULL;
        }
    }
    sps_precond_destroy(pc);
    return v;
}

/* F = A (ilu0) or tril(A) (ic0) as a CSR borrowing nothing; dpos for ilu0. */
typedef struct pat {
    sps_csr F;
    sps_idx *dpos;
} pat;

static void pat_free(pat *p)
{
    free(p->F.row_ptr);
    free(p->F.col_idx);
    free(p->F.val);
    free(p->dpos);
}

static pat pattern_of(const sps_matrix *A, int cholesky)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = sps_matrix_rows(A), q = 0;
    pat p;
    memset(&p, 0, sizeof p);
    p.F.nrows = p.F.ncols = n;
    p.F.row_ptr = malloc(((size_t)n + 1) * sizeof *p.F.row_ptr);
    p.F.col_idx = malloc(((size_t)rp[n] + 1) * sizeof *p.F.col_idx);
    p.F.val = malloc(((size_t)rp[n] + 1) * sizeof *p.F.val);
    p.dpos = malloc(((size_t)n + 1) * sizeof *p.dpos);
    p.F.row_ptr[0] = 0;
    for (sps_idx i = 0; i < n; i++) {
        p.dpos[i] = -1;
        for (sps_idx k = rp[i]; k < rp[i + 1]; k++) {
            if (cholesky && ci[k] > i) break;
            if (ci[k] == i) p.dpos[i] = q;
            p.F.col_idx[q] = ci[k];
            p.F.val[q++] = v[k];
        }
        p.F.row_ptr[i + 1] = q;
    }
    p.F.nnz = q;
    return p;
}

/* max |x - y| / max |y| */
static double rel_diff(const double *x, const double *y, int64_t n)
{
    double d = 0, m = 0;
    for (int64_t k = 0; k < n; k++) {
        d = fmax(d, fabs(x[k] - y[k]));
        m = fmax(m, fabs(y[k]));
    }
    return m > 0 ? d / m : d;
}

/* Sweeps until stationary on A: the fixed point equals `exact`'s factor. */
static void fixed_point(const char *what, const sps_matrix *A, int cholesky, int max_sweeps)
{
    int64_t nnz = 0, bad = -2;
    double *ex = factor_of(A, cholesky ? "ic0:exact" : "ilu0:exact", &nnz);
    pat p = pattern_of(A, cholesky);
    int done = -1;
    if (ex && T_STATUS(ctx, sps__parilu_host(ctx, &p.F, cholesky ? NULL : p.dpos, cholesky, max_sweeps,
                                             p.F.val, &bad, &done),
                       "%s: sweeps", what)) {
        T_OK(nnz == p.F.nnz && bad == -1 && done < max_sweeps,
             "%s %s: stationary after %d sweeps (of at most %d), no row refused", what, cholesky ? "ic0" : "ilu0",
             done, max_sweeps);
        double d = nnz == p.F.nnz ? rel_diff(p.F.val, ex, nnz) : 1.0;
        int same = nnz == p.F.nnz && memcmp(p.F.val, ex, (size_t)nnz * sizeof *ex) == 0;
        T_OK(d <= 1e-10, "%s %s: the fixed point equals the exact factor (%.2g relative%s)", what,
             cholesky ? "ic0" : "ilu0", d, same ? ", bitwise" : "");
    }
    free(ex);
    pat_free(&p);
}

static void fixed_gen(const char *spec, int cholesky)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, spec, &A), "%s", spec)) return;
    fixed_point(spec, A, cholesky, 100000);
    sps_matrix_destroy(A);
}

static void test_fixed_point(void)
{
    fixed_gen("poisson2d:12", 0);
    fixed_gen("poisson2d:12", 1);
    fixed_gen("convdiff2d:15,10", 0);
    fixed_gen("poisson3d:6", 0);
    fixed_gen("poisson3d:6", 1);
}

/* Through the preconditioner: fsweeps=50 on a small grid is the exact factor. */
static void test_option_fixed(void)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:6", &A), "poisson2d:6")) return;
    const char *sp[2][2] = {{"ilu0:exact", "ilu0:factor=par,fsweeps=50"}, {"ic0:exact", "ic0:factor=par,fsweeps=50,solve=jacobi"}};
    for (int c = 0; c < 2; c++) {
        int64_t n1 = 0, n2 = 0;
        double *e = factor_of(A, sp[c][0], &n1), *f = factor_of(A, sp[c][1], &n2);
        if (e && f) T_OK(n1 == n2 && rel_diff(f, e, n1) <= 1e-10, "%s = %s on poisson2d:6", sp[c][1], sp[c][0]);
        free(e);
        free(f);
    }
    /* and fewer sweeps are not (else the sweeps would not be counted) */
    int64_t n1 = 0, n2 = 0;
    double *e = factor_of(A, "ilu0:exact", &n1), *f = factor_of(A, "ilu0:factor=par,fsweeps=1", &n2);
    if (e && f) T_OK(n1 == n2 && rel_diff(f, e, n1) > 1e-6, "ilu0:factor=par,fsweeps=1 is not yet exact");
    free(e);
    free(f);
    sps_matrix_destroy(A);
}

/* Every shared matrix with a full diagonal and at most 60000 entries whose
 * exact factor exists: the fixed point equals it (ic0: the SPD ones). */
static void real_one(sps_context *c, const sps_matrix *A, const char *name)
{
    (void)c;
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = sps_matrix_rows(A), first;
    pat p = pattern_of(A, 0);
    sps_idx missing = sps__pc_find_diag(&p.F, NULL, &first);
    pat_free(&p);
    if (missing || rp[n] > 60000 || n != sps_matrix_cols(A)) return;
    sps_precond *pc = NULL;
    if (sps_precond_create(ctx, A, "ilu0:exact", &pc) == SPS_OK) fixed_point(name, A, 0, 20000);
    sps_precond_destroy(pc);
    pc = NULL;
    const char *kind = t_manifest_kind(name);
    if (kind && strcmp(kind, "spd") == 0 && sps_precond_create(ctx, A, "ic0:exact", &pc) == SPS_OK)
        fixed_point(name, A, 1, 20000);
    sps_precond_destroy(pc);
}

static void test_real(void) { t_each_real(ctx, ctx, "parilu on the shared matrices", real_one); }

/* A few sweeps: iterations within 1.5x of the exact factor's. */
static void solve_case(const char *gen, sps_method m, const char *exact, const char *par)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, gen, &A), "%s", gen)) return;
    int64_t e = pc_iterations(ctx, A, NULL, m, exact), p = pc_iterations(ctx, A, NULL, m, par),
            u = pc_iterations(ctx, A, NULL, m, "none");
    printf("# %-18s none %lld, %s %lld, %s %lld iterations\n", gen, (long long)u, exact, (long long)e, par,
           (long long)p);
    T_OK(e > 0 && p > 0 && 2 * p <= 3 * e && p < u, "%s: %s %lld iterations, within 1.5x of %s's %lld (none %lld)",
         gen, par, (long long)p, exact, (long long)e, (long long)u);
    sps_matrix_destroy(A);
}

static void test_solves(void)
{
    solve_case("convdiff2d:100,10", SPS_BICGSTAB, "ilu0:exact", "ilu0:factor=par");
    solve_case("poisson2d:63", SPS_CG, "ic0:exact", "ic0:factor=par");
    solve_case("poisson2d:63", SPS_BICGSTAB, "ilu0:exact", "ilu0:factor=par");
    solve_case("convdiff2d:100,10", SPS_BICGSTAB, "ilu0:solve=jacobi", "ilu0:factor=par,solve=jacobi");
    solve_case("poisson2d:63", SPS_CG, "ic0:solve=jacobi", "ic0:factor=par,fsweeps=5,solve=jacobi");
}

/* ---- edge cases ---------------------------------------------------------- */

/* A chain of n rows (tridiagonal, nonsymmetric values for ilu0), row `empty`
 * with only its diagonal (-1: none), row `lng` with every column (-1: none;
 * its column too, for a symmetric pattern). */
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
    return t_trip_matrix(ctx, n, n, &t);
}

static void edge_case(sps_idx n, sps_idx empty, sps_idx lng)
{
    char what[64];
    for (int chol = 0; chol < 2; chol++) {
        sps_matrix *A = edge_matrix(n, empty, lng, chol);
        if (!A) continue;
        snprintf(what, sizeof what, "n=%d empty=%d long=%d", n, empty, lng);
        fixed_point(what, A, chol, 100000);
        const char *spec = chol ? "ic0:factor=par" : "ilu0:factor=par,solve=jacobi";
        double *r = malloc((size_t)n * sizeof *r), *z = malloc((size_t)n * sizeof *z);
        for (sps_idx i = 0; i < n; i++) r[i] = 1.0 + (i % 5);
        if (T_STATUS(ctx, pc_apply(ctx, A, spec, r, z), "%s: %s", what, spec)) {
            int fin = 1;
            for (sps_idx i = 0; i < n; i++) fin &= isfinite(z[i]) != 0;
            T_OK(fin, "%s: %s applies (finite)", what, spec);
        }
        free(r);
        free(z);
        sps_matrix_destroy(A);
    }
}

static void test_edges(void)
{
    static const sps_idx ns[] = {1, 2, 31, 32, 33, 1023, 1024, 1025};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        sps_idx n = ns[k];
        edge_case(n, -1, -1);
        if (n > 2) {
            edge_case(n, n / 2, -1);
            edge_case(n, -1, 0);
            edge_case(n, -1, n - 1);
            edge_case(n, 1, n / 3);
        }
    }
    const char *types[] = {"ilu0:factor=par", "ic0:factor=par,fsweeps=2"};
    pc_check_empty(ctx, ctx, types, 2, "");
}

/* ---- errors, parameters, refresh ---------------------------------------- */

/* spec and the exact spec fail on dense a (n x n) with the same status and,
 * when `words`, the same message, which names row `row`. */
static void pivot_case(int n, const double *a, const char *spec, const char *exact, int words, const char *row)
{
    sps_matrix *A = t_matrix_from_dense(ctx, n, n, a);
    if (!A) return;
    sps_precond *pc = NULL;
    char msg[512];
    sps_status se = sps_precond_create(ctx, A, exact, &pc);
    snprintf(msg, sizeof msg, "%s", sps_last_error(ctx));
    sps_precond_destroy(pc); /* the exact factor may exist where the sweeps overflow */
    pc = NULL;
    sps_status sp = sps_precond_create(ctx, A, spec, &pc);
    const char *m = sps_last_error(ctx);
    T_OK(sp == SPS_ERR_ZERO_PIVOT && pc == NULL && strstr(m, row), "%s refused naming %s: %s", spec, row, m);
    if (words)
        T_OK(se == sp && strcmp(msg, m) == 0, "%s: the words of %s ('%s')", spec, exact, msg);
    sps_matrix_destroy(A);
}

static void test_pivots(void)
{
    double z[4] = {1, 1, 1, 1};       /* u_11 = 0 */
    double neg[4] = {1, 2, 2, 1};     /* l_11^2 = 1 - 4 < 0 */
    double big[4] = {1e-300, 1e300, 1e300, 1}; /* l_10 overflows */
    pivot_case(2, z, "ilu0:factor=par", "ilu0:exact", 1, "row 1 (1-based 2)");
    pivot_case(2, z, "ilu0:factor=par,fsweeps=1,solve=jacobi", "ilu0:solve=jacobi", 1, "row 1 (1-based 2)");
    pivot_case(2, neg, "ic0:factor=par", "ic0:exact", 1, "non-positive pivot at row 1 (1-based 2)");
    pivot_case(2, big, "ilu0:factor=par", "ilu0:exact", 0, "non-finite entry in row 1 (1-based 2)");
    /* a larger one: the zero pivot deep in a chain is found at its row */
    enum { N = 40 };
    double *a = calloc(N * N, sizeof *a);
    for (int i = 0; i < N; i++) {
        a[i * N + i] = 2;
        if (i + 1 < N) a[i * N + i + 1] = a[(i + 1) * N + i] = 1;
    }
    double u = 2.0; /* u_i = 2 - 1 / u_{i-1}, as the elimination rounds it */
    for (int i = 1; i < 20; i++) u = 2.0 - 1.0 / u;
    a[20 * N + 20] = 1.0 / u; /* u_20 = a_20,20 - (1 / u_19) * 1 = 0 exactly (u_20 is exact after
                                  about 2 x 20 sweeps) */
    pivot_case(N, a, "ilu0:factor=par,fsweeps=50", "ilu0:exact", 1, "row 20 (1-based 21)");
    free(a);
    static const pc_bad bad[] = {
        {"ilu0:fsweeps=3", "fsweeps=K needs factor=par"},
        {"ic0:fsweeps=3,solve=jacobi", "fsweeps=K needs factor=par"},
        {"ilu0:factor=fast", "factor='fast' is not exact or par"},
        {"ilu0:factor=par,fsweeps=0", "fsweeps"},
        {"ic0:factor=par,fsweeps=51", "fsweeps"},
        {"ilu0:factor=par,order=color", "not with factor=par"},
    };
    sps_matrix *A = NULL;
    if (T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:4", &A), "poisson2d:4"))
        pc_check_refused(ctx, A, bad, sizeof bad / sizeof *bad);
    sps_matrix_destroy(A);
}

/* A refresh on new values equals a fresh build on them, bitwise; a failed
 * one leaves the factor as it was. */
static void test_refresh(void)
{
    const char *specs[] = {"ilu0:factor=par", "ic0:factor=par,fsweeps=4,solve=jacobi"};
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:20", &A), "poisson2d:20")) return;
    double *nv = NULL;
    sps_matrix *B = t_revalued(ctx, A, 2.5, 0.0, 0.0, &nv);
    for (int k = 0; B && k < 2; k++) {
        sps_precond *pc = NULL;
        int64_t nnz = 0, nb = 0;
        double *fresh = factor_of(B, specs[k], &nb);
        if (!fresh || !T_STATUS(ctx, sps_precond_create(ctx, A, specs[k], &pc), "%s", specs[k])) {
            free(fresh);
            continue;
        }
        if (T_STATUS(ctx, sps_precond_update_values(pc, B), "%s: refresh", specs[k]) &&
            T_STATUS(ctx, sps__ilu_factor_values(pc, NULL, &nnz), "size")) {
            double *got = malloc((size_t)(nnz + 1) * sizeof *got);
            sps__ilu_factor_values(pc, got, NULL);
            T_OK(nnz == nb && memcmp(got, fresh, (size_t)nnz * sizeof *got) == 0,
                 "%s: refreshed factor bitwise a fresh build's", specs[k]);
            free(got);
        }
        free(fresh);
        sps_precond_destroy(pc);
    }
    sps_matrix_destroy(B);
    free(nv);
    sps_matrix_destroy(A);
}

T_MAIN_HOST(ctx, test_fixed_point, test_option_fixed, test_real, test_solves, test_edges, test_pivots,
            test_refresh)
