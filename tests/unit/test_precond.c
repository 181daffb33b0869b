/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_precond.c: host preconditioners against hand-computed
 * factors, exactness on tridiagonal matrices, pivot and structure errors */
#include "pc_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

/* max_i |(M z - r)_i| for a dense n x n M */
static double resid(int n, const double *M, const double *z, const double *r)
{
    double e = 0;
    for (int i = 0; i < n; i++) {
        double s = -r[i];
        for (int j = 0; j < n; j++) s += M[i * n + j] * z[j];
        if (fabs(s) > e) e = fabs(s);
    }
    return e;
}

/* M = L U for dense unit-lower L (diagonal implied) and upper U. */
static void lu_product(int n, const double *L, const double *U, double *M)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += (k == i ? 1.0 : k < i ? L[i * n + k] : 0.0) * U[k * n + j];
            M[i * n + j] = s;
        }
}

static sps_status apply(const sps_matrix *A, const char *type, const double *r, double *z)
{
    return pc_apply(ctx, A, type, r, z);
}

static void test_hand(void)
{
    /* 3x3: the (1,2) and (2,1) couplings are absent, so ILU(0) drops the fill
     * -1/4 there: L = [1; .25 1; .25 0 1], U = [4 1 1; 0 3.75 0; 0 0 3.75],
     * M = LU = [4 1 1; 1 4 .25; 1 .25 4]. IC(0): l00 = 2, l10 = l20 = .5,
     * l11 = l22 = sqrt(3.75), l21 dropped: the same M. */
    double a[9] = {4, 1, 1, 1, 4, 0, 1, 0, 4};
    double M[9] = {4, 1, 1, 1, 4, 0.25, 1, 0.25, 4};
    double r[3] = {1, 2, 3}, z[3], r0[3];
    memcpy(r0, r, sizeof r);
    sps_matrix *A = t_matrix_from_dense(ctx, 3, 3, a);
    if (!A) return;
    T_STATUS(ctx, apply(A, "jacobi", r, z), "jacobi 3x3");
    T_OK(z[0] == 0.25 && z[1] == 2.0 / 4.0 && z[2] == 0.75, "jacobi: z = r ./ diag(A)");
    T_STATUS(ctx, apply(A, "none", r, z), "none 3x3");
    T_OK(memcmp(z, r, sizeof z) == 0, "none: z = r");
    T_STATUS(ctx, apply(A, "ilu0:exact", r, z), "ilu0:exact 3x3");
    /* L y = r: y = (1, 1.75, 2.75); U z = y: z2 = 2.75/3.75, z1 = 1.75/3.75,
     * z0 = (1 - z1 - z2)/4 = -0.05 */
    T_OK(fabs(z[0] + 0.05) < 1e-15 && fabs(z[1] - 1.75 / 3.75) < 1e-15 && fabs(z[2] - 2.75 / 3.75) < 1e-15,
         "ilu0 3x3: z = (-0.05, 0.4667, 0.7333) (got %.17g %.17g %.17g)", z[0], z[1], z[2]);
    T_OK(resid(3, M, z, r) < 1e-15, "ilu0 3x3: (LU) z = r with the fill dropped");
    T_OK(memcmp(r, r0, sizeof r) == 0, "ilu0: r unchanged");
    T_STATUS(ctx, apply(A, "ic0:exact", r, z), "ic0:exact 3x3");
    T_OK(resid(3, M, z, r) < 1e-15, "ic0 3x3: (L L') z = r, same M as ILU(0)");
    sps_matrix_destroy(A);

    /* 4x4 nonsymmetric, pattern row0 {0,1,3} row1 {0,1,2} row2 {1,2,3}
     * row3 {0,2,3}. By hand (IKJ):
     *   row 1: l10 = 1/2; u11 = 3 - .5*(-1) = 3.5; (1,3) fill dropped; u12 = -1
     *   row 2: l21 = 1/3.5 = 2/7; u22 = 4 - (2/7)(-1) = 30/7; u23 = 2
     *   row 3: l30 = 1/2; (3,1) fill dropped; u33 = 5 - .5*1 = 4.5;
     *          l32 = 1/(30/7) = 7/30; u33 = 4.5 - (7/30)*2 = 121/30 */
    double b[16] = {2, -1, 0, 1, 1, 3, -1, 0, 0, 1, 4, 2, 1, 0, 1, 5};
    double L[16] = {0}, U[16] = {0}, M4[16];
    L[1 * 4 + 0] = 0.5; L[2 * 4 + 1] = 2.0 / 7.0; L[3 * 4 + 0] = 0.5; L[3 * 4 + 2] = 7.0 / 30.0;
    U[0] = 2; U[1] = -1; U[3] = 1; U[5] = 3.5; U[6] = -1; U[10] = 30.0 / 7.0; U[11] = 2;
    U[15] = 121.0 / 30.0;
    lu_product(4, L, U, M4);
    double r4[4] = {1, -2, 0.5, 3}, z4[4];
    A = t_matrix_from_dense(ctx, 4, 4, b);
    if (!A) return;
    T_STATUS(ctx, apply(A, "ilu0:exact", r4, z4), "ilu0:exact 4x4");
    T_OK(resid(4, M4, z4, r4) < 1e-14, "ilu0 4x4: (LU) z = r with the hand-computed factors (%.2g)",
         resid(4, M4, z4, r4));
    T_OK(resid(4, b, z4, r4) > 1e-3, "ilu0 4x4: and not A z = r (fill was dropped)");
    T_OK(apply(A, "ic0", r4, z4) == SPS_ERR_UNSUPPORTED && strstr(sps_last_error(ctx), "not symmetric"),
         "ic0 refuses a nonsymmetric matrix: %s", sps_last_error(ctx));
    T_OK(apply(A, "ic0:exact", r4, z4) == SPS_ERR_UNSUPPORTED && strstr(sps_last_error(ctx), "not symmetric"),
         "ic0:exact refuses it too: %s", sps_last_error(ctx));
    sps_matrix_destroy(A);
}

/* ILU(0) of a tridiagonal matrix in natural order has no fill to drop: it is
 * the exact LU, so M^-1 A x = x. Likewise IC(0) of an SPD tridiagonal is the
 * exact Cholesky. (Not in the multicolor order, the default: red-black drops
 * the black rows' Schur complement couplings.) */
static void test_exact_tridiagonal(void)
{
    enum { N = 200 };
    sps_idx ri[3 * N], ci[3 * N];
    double v[3 * N], vs[3 * N];
    uint64_t seed = 42;
    int k = 0;
    for (int i = 0; i < N; i++)
        for (int j = i - 1; j <= i + 1; j++)
            if (j >= 0 && j < N) {
                ri[k] = i; ci[k] = j;
                v[k] = i == j ? 4 + t_rand(&seed) : t_rand(&seed);
                vs[k] = i == j ? 2.5 : -1 - 0.1 * (i + j) / N; /* symmetric in (i, j) */
                k++;
            }
    sps_matrix *A = NULL, *S = NULL;
    if (sps_matrix_create_coo(ctx, N, N, k, ri, ci, v, &A) != SPS_OK ||
        sps_matrix_create_coo(ctx, N, N, k, ri, ci, vs, &S) != SPS_OK) {
        T_FAIL("tridiagonal matrices", "%s", sps_last_error(ctx));
        return;
    }
    double x[N], b[N], z[N];
    for (int i = 0; i < N; i++) x[i] = t_rand(&seed);
    const char *types[] = {"ilu0:exact", "ic0:exact"};
    for (int t = 0; t < 2; t++) {
        const sps_matrix *M = t ? S : A;
        sps_matrix_spmv_host(M, 1.0, x, 0.0, b);
        T_STATUS(ctx, apply(M, types[t], b, z), "%s tridiagonal", types[t]);
        double e = 0;
        for (int i = 0; i < N; i++) e = fmax(e, fabs(z[i] - x[i]));
        T_OK(e < 1e-12, "%s of a tridiagonal is exact: |M^-1 A x - x| = %.2g", types[t], e);
    }
    sps_matrix_destroy(A);
    sps_matrix_destroy(S);
}

/* On a symmetric matrix ILU(0) and IC(0) build the same M (LDL' vs
 * (L D^1/2)(L D^1/2)'): their applies agree to rounding, in either order
 * (the multicolor one, the default, colours ilu0 and ic0 alike). */
static void ilu_equals_ic(const char *what, const sps_matrix *A, const char *ilu, const char *ic)
{
    sps_idx n = sps_matrix_rows(A);
    double *r = malloc((size_t)n * sizeof *r), *z1 = malloc((size_t)n * sizeof *z1),
           *z2 = malloc((size_t)n * sizeof *z2);
    uint64_t seed = 7;
    for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
    sps_status s1 = apply(A, ilu, r, z1), s2 = apply(A, ic, r, z2);
    if (s2 == SPS_ERR_ZERO_PIVOT) {
        /* IC(0) may break down on SPD matrices; that must be reported, not hidden */
        T_OK(strstr(sps_last_error(ctx), "ic0: non-positive pivot at row") != NULL,
             "%s %s: IC(0) breakdown reported: %s", what, ic, sps_last_error(ctx));
    } else if (s1 == SPS_OK && s2 == SPS_OK) {
        double num = 0, den = 0;
        for (sps_idx i = 0; i < n; i++) {
            num += (z1[i] - z2[i]) * (z1[i] - z2[i]);
            den += z1[i] * z1[i];
        }
        T_OK(sqrt(num) <= 1e-10 * sqrt(den), "%s: %s and %s applies agree (%.2g)", what, ilu, ic,
             sqrt(num / den));
    } else {
        T_FAIL(what, "%s %s, %s %s: %s", ilu, sps_strerror(s1), ic, sps_strerror(s2), sps_last_error(ctx));
    }
    free(r); free(z1); free(z2);
}

static void test_ilu_equals_ic(const char *what, const sps_matrix *A)
{
    ilu_equals_ic(what, A, "ilu0", "ic0");
    ilu_equals_ic(what, A, "ilu0:exact", "ic0:exact");
}

static void test_errors(void)
{
    /* [1 1 0; 1 1 1; 0 1 1]: u11 = 1 - 1*1 = 0, and for IC(0) l11^2 = 0 */
    double a[9] = {1, 1, 0, 1, 1, 1, 0, 1, 1};
    double r[3] = {1, 1, 1}, z[3];
    sps_matrix *A = t_matrix_from_dense(ctx, 3, 3, a);
    if (A) {
        sps_precond *pc = (sps_precond *)&pc;
        T_OK(sps_precond_create(ctx, A, "ilu0:exact", &pc) == SPS_ERR_ZERO_PIVOT && pc == NULL &&
                 strstr(sps_last_error(ctx), "ilu0: zero pivot at row 1 (1-based 2) of 3"),
             "ilu0:exact numerical zero pivot named: %s", sps_last_error(ctx));
        T_OK(apply(A, "ic0:exact", r, z) == SPS_ERR_ZERO_PIVOT &&
                 strstr(sps_last_error(ctx), "ic0: non-positive pivot at row 1 (1-based 2) of 3"),
             "ic0:exact zero pivot named: %s", sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    double ind[4] = {1, 2, 2, 1}; /* symmetric indefinite: 1 - 4 < 0 */
    A = t_matrix_from_dense(ctx, 2, 2, ind);
    if (A) {
        const char *ics[] = {"ic0", "ic0:exact"}; /* 2 x 2: either order, row 1 */
        for (int k = 0; k < 2; k++)
            T_OK(apply(A, ics[k], r, z) == SPS_ERR_ZERO_PIVOT &&
                     strstr(sps_last_error(ctx), "ic0: non-positive pivot at row 1 (1-based 2) of 2"),
                 "%s negative pivot named: %s", ics[k], sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    /* a missing (1,1) entry: every order and variant names row 1 (the
     * default, multicolor, included) */
    double m[16] = {2, 1, 0, 0, 1, 0, 1, 0, 0, 1, 2, 0, 0, 0, 0, 3};
    A = t_matrix_from_dense(ctx, 4, 4, m);
    if (A) {
        const char *ilus[] = {"ilu0", "ilu0:exact", "ilu0:order=color", "ilu0:factor=par", "ilu0:solve=jacobi"};
        for (int k = 0; k < 5; k++)
            T_OK(apply(A, ilus[k], r, z) == SPS_ERR_ZERO_PIVOT &&
                     strstr(sps_last_error(ctx), "ilu0: zero pivot at row 1 (1-based 2) of 4: the matrix has 1 row "
                                                 "with no diagonal entry"),
                 "%s missing diagonal: %s", ilus[k], sps_last_error(ctx));
        const char *ics[] = {"ic0", "ic0:exact", "ic0:order=color"};
        for (int k = 0; k < 3; k++)
            T_OK(apply(A, ics[k], r, z) == SPS_ERR_ZERO_PIVOT &&
                     strstr(sps_last_error(ctx), "ic0: zero pivot at row 1 (1-based 2) of 4: the matrix has 1 row"),
                 "%s missing diagonal: %s", ics[k], sps_last_error(ctx));
        T_OK(apply(A, "jacobi", r, z) == SPS_ERR_UNSUPPORTED &&
                 strstr(sps_last_error(ctx), "row 1 (1-based 2) of 4 has no diagonal entry") &&
                 strstr(sps_last_error(ctx), "ilu0"),
             "jacobi missing diagonal: %s", sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    /* explicit zero diagonal entry for Jacobi */
    sps_idx rp[] = {0, 1, 2}, ci[] = {0, 1};
    double v[] = {1, 0};
    if (sps_matrix_create_csr(ctx, 2, 2, rp, ci, v, &A) == SPS_OK) {
        T_OK(apply(A, "jacobi", r, z) == SPS_ERR_UNSUPPORTED &&
                 strstr(sps_last_error(ctx), "row 1 (1-based 2) of 2 has a zero diagonal entry"),
             "jacobi zero diagonal: %s", sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    /* bad arguments */
    double sq[4] = {1, 0, 0, 1};
    A = t_matrix_from_dense(ctx, 2, 2, sq);
    if (A) {
        sps_precond *pc = NULL;
        T_OK(sps_precond_create(ctx, A, "ilu1", &pc) == SPS_ERR_INVALID_ARG &&
                 strstr(sps_last_error(ctx), "unknown preconditioner 'ilu1'"),
             "unknown type named: %s", sps_last_error(ctx));
        T_STATUS(ctx, sps_precond_create(ctx, A, "ilu0", &pc), "ilu0 identity");
        if (pc) {
            T_OK(sps_precond_apply(pc, r, r) == SPS_ERR_INVALID_ARG, "apply with r == z refused");
            T_OK(strcmp(sps_precond_name(pc), "ilu0") == 0 && sps_precond_setup_ms(pc) >= 0,
                 "name and setup time");
        }
        sps_precond_destroy(pc);
        sps_matrix_destroy(A);
    }
    sps_idx rr[] = {0, 1};
    sps_idx cc[] = {2};
    double vv[] = {1};
    if (sps_matrix_create_csr(ctx, 1, 3, rr, cc, vv, &A) == SPS_OK) {
        sps_precond *pc = NULL;
        T_OK(sps_precond_create(ctx, A, "jacobi", &pc) == SPS_ERR_INVALID_ARG && pc == NULL,
             "rectangular matrix refused: %s", sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    const char *types[] = {"none", "jacobi", "ilu0", "ic0"};
    pc_check_empty(ctx, ctx, types, 4, "");
}

static void test_generated(void)
{
    const char *sym[] = {"poisson2d:30", "poisson3d:12", "poisson3d27:8"};
    for (int k = 0; k < 3; k++) {
        sps_matrix *A = NULL;
        if (sps_matrix_generate(ctx, sym[k], &A) != SPS_OK) continue;
        test_ilu_equals_ic(sym[k], A);
        sps_matrix_destroy(A);
    }
    /* ILU(0) is a better approximation of A than Jacobi on convection-diffusion:
     * ||A M^-1 r - r|| smaller */
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "convdiff2d:30,40", &A) == SPS_OK) {
        sps_idx n = sps_matrix_rows(A);
        double *r = malloc((size_t)n * sizeof *r), *z = malloc((size_t)n * sizeof *z),
               *y = malloc((size_t)n * sizeof *y);
        uint64_t seed = 3;
        for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
        double err[2] = {0, 0};
        const char *types[] = {"jacobi", "ilu0"};
        for (int t = 0; t < 2; t++) {
            if (apply(A, types[t], r, z) != SPS_OK) {
                T_FAIL(types[t], "%s", sps_last_error(ctx));
                continue;
            }
            sps_matrix_spmv_host(A, 1.0, z, 0.0, y);
            for (sps_idx i = 0; i < n; i++) err[t] += (y[i] - r[i]) * (y[i] - r[i]);
        }
        T_OK(err[1] < 0.5 * err[0], "convdiff2d: ILU(0) approximates A better than Jacobi (%.3g < %.3g)",
             sqrt(err[1]), sqrt(err[0]));
        free(r); free(z); free(y);
        sps_matrix_destroy(A);
    }
}

static void test_real(void)
{
    /* lns_3937: 734 rows without a diagonal entry; the first one is named */
    const char *path = t_real_matrix_path("lns_3937");
    sps_matrix *A = NULL;
    sps_status st = path ? sps_matrix_read(ctx, path, &A) : SPS_ERR_IO;
    if (st == SPS_OK) {
        const sps_idx *rp, *ci;
        sps_matrix_csr(A, &rp, &ci, NULL);
        sps_idx first = -1;
        for (sps_idx i = 0; i < sps_matrix_rows(A) && first < 0; i++) {
            int has = 0;
            for (sps_idx p = rp[i]; p < rp[i + 1]; p++) has |= ci[p] == i;
            if (!has) first = i;
        }
        char want[160];
        snprintf(want, sizeof want, "ilu0: zero pivot at row %d (1-based %d) of 3937: the matrix has 734 rows", first, first + 1);
        sps_precond *pc = NULL;
        T_OK(sps_precond_create(ctx, A, "ilu0", &pc) == SPS_ERR_ZERO_PIVOT && strstr(sps_last_error(ctx), want),
             "lns_3937: %s", sps_last_error(ctx));
        sps_matrix_destroy(A);
    } else {
        T_FAIL("lns_3937", "%s", sps_last_error(ctx));
    }
    /* every bundled symmetric matrix with a full diagonal: ILU(0) = IC(0) */
    const char *const *names = t_real_matrices();
    int n = 0;
    for (int k = 0; names[k]; k++) {
        const char *p = t_real_matrix_path(names[k]);
        if (!p || sps_matrix_read(ctx, p, &A) != SPS_OK) continue;
        sps_features f;
        if (sps_matrix_analyze(ctx, A, &f) == SPS_OK && f.symmetric && f.missing_diagonal == 0 &&
            f.zero_diagonal == 0 && f.rows <= 20000) {
            test_ilu_equals_ic(names[k], A);
            n++;
        }
        sps_matrix_destroy(A);
    }
    T_OK(n > 3, "real symmetric matrices with a full diagonal checked: %d", n);
}

static void test_alloc_failure(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:6", &A) != SPS_OK) return;
    const char *types[] = {"jacobi", "ilu0", "ic0", "l1jacobi", "cheby:degree=2",
                           "bjacobi:block=4", "ilu0:solve=jacobi", "ic0:solve=jacobi", "ilu0:exact", "ic0:exact"};
    int fails = 0, bad = 0;
    for (int t = 0; t < 10; t++)
        for (long k = 1; k < 24; k++) {
            sps_precond *pc = NULL;
            sps__fail_alloc_after(k);
            sps_status st = sps_precond_create(ctx, A, types[t], &pc);
            sps__fail_alloc_after(0);
            if (st == SPS_ERR_NO_MEMORY) {
                fails++;
                if (pc) bad++;
            } else if (st != SPS_OK) {
                bad++;
            }
            sps_precond_destroy(pc);
        }
    T_OK(fails > 5 && bad == 0, "injected allocation failures give NO_MEMORY and no object (%d)", fails);
    sps_matrix_destroy(A);
}

/* The registry: every listed type builds (the list is what create reads),
 * names are unique, ilu0/ic0 alone are their multicolor variants bitwise and
 * :exact their natural-order ones, l1jacobi by hand, symmetry declared as
 * documented. */
static void test_registry(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:5", &A) != SPS_OK) return;
    const char *name, *summary, *seen[32];
    int n = 0;
    for (; sps_precond_type(n, &name, &summary) == SPS_OK && n < 32; n++) {
        seen[n] = name;
        for (int k = 0; k < n; k++) T_OK(strcmp(seen[k], name) != 0, "type %s listed once", name);
        sps_precond *pc = NULL;
        T_OK(sps_precond_create(ctx, A, name, &pc) == SPS_OK && summary && *summary &&
                 strcmp(sps_precond_name(pc), name) == 0,
             "listed type %s builds on poisson2d:5 (%s)", name, sps_last_error(ctx));
        int sym = strcmp(name, "ilu0") != 0;
        T_OK(!pc || sps_precond_symmetric(pc) == sym, "%s: symmetric = %d", name, sym);
        sps_precond_destroy(pc);
    }
    T_OK(n == 8 && sps_precond_type(-1, NULL, NULL) == SPS_ERR_INVALID_ARG, "8 types listed (%d)", n);
    double r[25], z1[25], z2[25];
    uint64_t seed = 21;
    for (int i = 0; i < 25; i++) r[i] = t_rand(&seed);
    const char *pairs[][2] = {{"ilu0", "ilu0:order=color"}, {"ic0", "ic0:order=color"},
                              {"ilu0:exact", "ilu0:order=natural"}, {"ic0:exact", "ic0:order=natural"},
                              {"ilu0:solve=exact", "ilu0:order=color"}, {"ilu0:factor=exact", "ilu0:order=color"},
                              {"ilu0:exact,order=natural", "ilu0:order=natural,solve=exact"}};
    for (int k = 0; k < 7; k++) {
        T_STATUS(ctx, apply(A, pairs[k][0], r, z1), "%s", pairs[k][0]);
        T_STATUS(ctx, apply(A, pairs[k][1], r, z2), "%s", pairs[k][1]);
        T_OK(memcmp(z1, z2, sizeof z1) == 0, "%s = %s bitwise", pairs[k][1], pairs[k][0]);
    }
    T_STATUS(ctx, apply(A, "ilu0", r, z1), "ilu0");
    T_STATUS(ctx, apply(A, "ilu0:exact", r, z2), "ilu0:exact");
    T_OK(memcmp(z1, z2, sizeof z1) != 0, "ilu0 (multicolor) and ilu0:exact (natural) differ on poisson2d:5");
    sps_matrix_destroy(A);
    /* l1jacobi: 4 + 1 + 1, 4 + 1, 4 + 1; with -A the signs follow the diagonal */
    double a[9] = {4, 1, 1, 1, 4, 0, 1, 0, 4}, na[9], r3[3] = {6, 5, -10}, z[3];
    for (int i = 0; i < 9; i++) na[i] = -a[i];
    A = t_matrix_from_dense(ctx, 3, 3, a);
    sps_matrix *N = t_matrix_from_dense(ctx, 3, 3, na);
    if (A && N) {
        T_STATUS(ctx, apply(A, "l1jacobi", r3, z), "l1jacobi 3x3");
        T_OK(z[0] == 1 && z[1] == 1 && z[2] == -2, "l1jacobi: z = r ./ (6, 5, 5) (%g %g %g)", z[0], z[1], z[2]);
        T_STATUS(ctx, apply(N, "l1jacobi", r3, z), "l1jacobi -A");
        T_OK(z[0] == -1 && z[1] == -1 && z[2] == 2, "l1jacobi of -A: z = r ./ (-6, -5, -5)");
    }
    sps_matrix_destroy(A);
    sps_matrix_destroy(N);
    double zr[4] = {1, 0, 0, 0}; /* row 1 all zero */
    sps_idx rp[] = {0, 1, 1}, ci[] = {0};
    double v[] = {2};
    if (sps_matrix_create_csr(ctx, 2, 2, rp, ci, v, &A) == SPS_OK) {
        T_OK(apply(A, "l1jacobi", zr, z) == SPS_ERR_UNSUPPORTED &&
                 strstr(sps_last_error(ctx), "l1jacobi: row 1 (1-based 2) of 2 is zero"),
             "l1jacobi zero row named: %s", sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
}

/* D A D + extra I with d_i = 1 + (i % 7) / 10: A's pattern, other numbers,
 * symmetric when A is. */
static sps_matrix *rescaled(const sps_matrix *A, double extra)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix *B = NULL;
    if (sps_matrix_csr(A, &rp, &ci, &v) != SPS_OK) return NULL;
    sps_idx n = sps_matrix_rows(A);
    double *w = malloc((size_t)(rp[n] ? rp[n] : 1) * sizeof *w);
    for (sps_idx i = 0; w && i < n; i++)
        for (sps_idx k = rp[i]; k < rp[i + 1]; k++) w[k] = v[k] * (1.0 + (i % 7) / 10.0) * (1.0 + (ci[k] % 7) / 10.0) + (ci[k] == i ? extra : 0.0);
    if (w) sps_matrix_create_csr(ctx, n, sps_matrix_cols(A), rp, ci, w, &B);
    free(w);
    return B;
}

/* sps_precond_update_values on every registry type: after the refresh the
 * apply is bitwise a fresh build's on the new values; another pattern is
 * refused and leaves pc working; a failed refresh leaves pc as it was. */
static void test_refresh(void)
{
    sps_matrix *A = NULL, *P = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:20", &A), "poisson2d:20")) return;
    sps_matrix *B = rescaled(A, 0.5);
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:21", &P), "poisson2d:21") || !B) goto out;
    const char *types[] = {"none", "jacobi", "l1jacobi", "ilu0", "ic0", "cheby", "bjacobi:block=4",
                           "ilu0:solve=jacobi", "ic0:solve=jacobi", "amg", "ilu0:exact", "ic0:exact"};
    sps_idx n = sps_matrix_rows(A);
    double *r = malloc((size_t)n * sizeof *r), *z1 = malloc((size_t)n * sizeof *z1),
           *z2 = malloc((size_t)n * sizeof *z2);
    for (sps_idx i = 0; i < n; i++) r[i] = sin(1.0 + i);
    for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
        sps_precond *pc = NULL, *fresh = NULL;
        if (!T_STATUS(ctx, sps_precond_create(ctx, A, types[k], &pc), "%s on A", types[k])) continue;
        sps_status st = sps_precond_update_values(pc, B);
        T_STATUS(ctx, st, "%s: refresh with new values", types[k]);
        if (st == SPS_OK && T_STATUS(ctx, sps_precond_create(ctx, B, types[k], &fresh), "%s on B", types[k])) {
            int ok = sps_precond_apply(pc, r, z1) == SPS_OK && sps_precond_apply(fresh, r, z2) == SPS_OK;
            T_OK(ok && memcmp(z1, z2, (size_t)n * sizeof *z1) == 0,
                 "%s: the refreshed apply is bitwise a fresh build's", types[k]);
        }
        st = sps_precond_update_values(pc, P);
        T_OK(st == SPS_ERR_INVALID_ARG, "%s: another pattern refused (%s)", types[k], sps_last_error(ctx));
        if (strcmp(types[k], "amg") != 0) /* amg's contract: after a failure, destroy only */
            T_OK(sps_precond_apply(pc, r, z1) == SPS_OK && memcmp(z1, z2, (size_t)n * sizeof *z1) == 0,
                 "%s: still the refreshed preconditioner after the refusal", types[k]);
        sps_precond_destroy(fresh);
        sps_precond_destroy(pc);
    }
    /* new values with a zero pivot: the refresh fails, pc keeps working */
    sps_matrix *Z = rescaled(A, -4.0); /* the diagonal 4 becomes 0 on rows with i % 7 == 0 */
    sps_precond *pc = NULL;
    if (Z && T_STATUS(ctx, sps_precond_create(ctx, A, "jacobi", &pc), "jacobi on A")) {
        sps_status st = sps_precond_update_values(pc, Z);
        T_OK(st == SPS_ERR_UNSUPPORTED && sps_precond_apply(pc, r, z1) == SPS_OK,
             "jacobi: a refresh onto a zero diagonal fails and the old one stays (%s)", sps_last_error(ctx));
    }
    sps_precond_destroy(pc);
    sps_matrix_destroy(Z);
    free(r), free(z1), free(z2);
out:
    sps_matrix_destroy(B);
    sps_matrix_destroy(P);
    sps_matrix_destroy(A);
}

/* A copy of A's values with f applied to each entry (i, j, a_ij). */
static sps_matrix *revalued(const sps_matrix *A, double (*f)(sps_idx, sps_idx, double, void *), void *u)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix *B = NULL;
    if (sps_matrix_csr(A, &rp, &ci, &v) != SPS_OK) return NULL;
    sps_idx n = sps_matrix_rows(A);
    double *w = malloc((size_t)(rp[n] ? rp[n] : 1) * sizeof *w);
    for (sps_idx i = 0; w && i < n; i++)
        for (sps_idx k = rp[i]; k < rp[i + 1]; k++) w[k] = f(i, ci[k], v[k], u);
    if (w) sps_matrix_create_csr(ctx, n, sps_matrix_cols(A), rp, ci, w, &B);
    free(w);
    return B;
}

/* Row k's lower part and diagonal and column k's upper part zeroed (explicit
 * zeros: the pattern stays): the first zero pivot of ILU(0) and IC(0) is at
 * row k exactly (l_kj = 0, so u_kk = l_kk^2 = 0), after k good rows. */
static double zero_pivot_at(sps_idx i, sps_idx j, double a, void *u)
{
    sps_idx k = *(const sps_idx *)u;
    return (i == k && j <= k) || (j == k && i < k) ? 0.0 : a * (1.0 + (i + j) % 5 / 8.0);
}

/* Rows scaled by 1 + (i % 3) / 4: the pattern stays symmetric, the values not. */
static double row_scaled(sps_idx i, sps_idx j, double a, void *u)
{
    (void)j, (void)u;
    return a * (1.0 + (i % 3) / 4.0);
}

/* Symmetric but for one entry perturbed by a relative *(double *)u. */
static double one_off(sps_idx i, sps_idx j, double a, void *u)
{
    double w = a * (1.0 + (i + j) % 5 / 8.0);
    return i == 5 && j == 6 ? w * (1.0 + *(const double *)u) : w;
}

/* z = M^-1 r of pc into z; 0 on failure. */
static int apply_ok(sps_precond *pc, const double *r, double *z)
{
    return sps_precond_apply(pc, r, z) == SPS_OK;
}

/* ilu0/ic0 (natural order) refresh onto a zero pivot at row k: it fails with a fresh build's
 * status and words, and the old factor's apply is bitwise unchanged; a good
 * refresh afterwards still works. */
static void refresh_pivot(const char *type, const sps_matrix *A, const sps_matrix *B, sps_idx k,
                          const double *r, double *z1, double *z2)
{
    sps_matrix *Z = revalued(A, zero_pivot_at, &k);
    sps_precond *pc = NULL, *fresh = NULL;
    size_t nb = (size_t)sps_matrix_rows(A) * sizeof *z1;
    if (!Z || !T_STATUS(ctx, sps_precond_create(ctx, A, type, &pc), "%s on A", type)) goto out;
    sps_status fs = sps_precond_create(ctx, Z, type, &fresh);
    char want[512], fmt[80];
    snprintf(want, sizeof want, "%s", sps_last_error(ctx));
    snprintf(fmt, sizeof fmt, "pivot at row %d (1-based %d) of %d", k, k + 1, sps_matrix_rows(A));
    T_OK(fs == SPS_ERR_ZERO_PIVOT && strstr(want, fmt), "%s: a build on Z fails at row %d (%s)", type, k, want);
    int ok = apply_ok(pc, r, z1);
    sps_status st = sps_precond_update_values(pc, Z);
    T_OK(st == fs && strcmp(sps_last_error(ctx), want) == 0,
         "%s: the refresh onto Z fails as a build does (%s)", type, sps_last_error(ctx));
    T_OK(ok && apply_ok(pc, r, z2) && memcmp(z1, z2, nb) == 0,
         "%s: after the failed refresh the apply is bitwise the old one", type);
    sps_precond_destroy(fresh);
    fresh = NULL;
    if (T_STATUS(ctx, sps_precond_update_values(pc, B), "%s: refresh onto B after the failure", type) &&
        T_STATUS(ctx, sps_precond_create(ctx, B, type, &fresh), "%s on B", type))
        T_OK(apply_ok(pc, r, z1) && apply_ok(fresh, r, z2) && memcmp(z1, z2, nb) == 0,
             "%s: and a good refresh after it is bitwise a fresh build's", type);
out:
    sps_precond_destroy(fresh);
    sps_precond_destroy(pc);
    sps_matrix_destroy(Z);
}

/* ic0's refresh keeps the setup's symmetry rule (||A - A'||_F / ||A||_F <=
 * 1e-12, the same words), without a full analysis. */
static void refresh_symmetry(const char *type, const sps_matrix *A, const double *r, double *z1,
                             double *z2)
{
    sps_matrix *N = revalued(A, row_scaled, NULL);
    double tiny = 1e-15, big = 1e-9;
    sps_matrix *T = revalued(A, one_off, &tiny), *G = revalued(A, one_off, &big);
    sps_precond *pc = NULL, *fresh = NULL;
    size_t nb = (size_t)sps_matrix_rows(A) * sizeof *z1;
    if (!N || !T || !G || !T_STATUS(ctx, sps_precond_create(ctx, A, type, &pc), "%s on A", type)) goto out;
    const sps_matrix *bad[2] = {N, G};
    for (int b = 0; b < 2; b++) {
        sps_status fs = sps_precond_create(ctx, bad[b], type, &fresh);
        char want[512];
        snprintf(want, sizeof want, "%s", sps_last_error(ctx));
        int ok = apply_ok(pc, r, z1);
        sps_status st = sps_precond_update_values(pc, bad[b]);
        T_OK(fs == SPS_ERR_UNSUPPORTED && st == fs && strstr(want, "not symmetric") &&
                 strcmp(sps_last_error(ctx), want) == 0,
             "%s: refresh onto nonsymmetric values %d refused as a build is (%s)", type, b, sps_last_error(ctx));
        T_OK(ok && apply_ok(pc, r, z2) && memcmp(z1, z2, nb) == 0,
             "%s: after the refusal the apply is bitwise the old one", type);
        sps_precond_destroy(fresh);
        fresh = NULL;
    }
    T_STATUS(ctx, sps_precond_update_values(pc, T), "%s: asymmetry 1e-15 accepted, as a build does", type);
    if (T_STATUS(ctx, sps_precond_create(ctx, T, type, &fresh), "%s on T", type))
        T_OK(apply_ok(pc, r, z1) && apply_ok(fresh, r, z2) && memcmp(z1, z2, nb) == 0,
             "%s: refreshed onto T bitwise a fresh build's", type);
out:
    sps_precond_destroy(fresh);
    sps_precond_destroy(pc);
    sps_matrix_destroy(N);
    sps_matrix_destroy(T);
    sps_matrix_destroy(G);
}

/* The refresh is numeric only: it allocates just its scratch (the values
 * and the elimination's work array; ic0 also the symmetry check's cursors:
 * 2 or 3 allocations, where a build makes more than 5), and an allocation
 * failure leaves pc bitwise as it was. */
static void refresh_allocs(const char *type, const sps_matrix *A, const sps_matrix *B,
                           const double *r, double *z1, double *z2)
{
    long want = strncmp(type, "ic0", 3) == 0 ? 3 : 2;
    sps_precond *pc = NULL;
    size_t nb = (size_t)sps_matrix_rows(A) * sizeof *z1;
    if (!T_STATUS(ctx, sps_precond_create(ctx, A, type, &pc), "%s on A", type)) return;
    int ok = apply_ok(pc, r, z1), same = 1;
    long k = 1;
    sps_status st = SPS_ERR_NO_MEMORY;
    for (; k < 40 && st == SPS_ERR_NO_MEMORY; k++) {
        sps__fail_alloc_after(k);
        st = sps_precond_update_values(pc, B);
        sps__fail_alloc_after(0);
        if (st == SPS_ERR_NO_MEMORY) same &= apply_ok(pc, r, z2) && memcmp(z1, z2, nb) == 0;
    }
    T_OK(st == SPS_OK && k - 2 == want, "%s: the refresh makes %ld allocations (%ld)", type, want, k - 2);
    T_OK(ok && same, "%s: a refresh that runs out of memory leaves the apply bitwise as it was", type);
    sps_precond_destroy(pc);
}

static void test_refresh_numeric(void)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:20", &A), "poisson2d:20")) return;
    sps_matrix *B = rescaled(A, 0.5);
    sps_idx n = sps_matrix_rows(A);
    double *r = malloc((size_t)n * sizeof *r), *z1 = malloc((size_t)n * sizeof *z1),
           *z2 = malloc((size_t)n * sizeof *z2);
    for (sps_idx i = 0; i < n; i++) r[i] = cos(0.5 + i);
    const char *types[] = {"ilu0:exact", "ic0:exact", "ilu0:solve=jacobi", "ic0:solve=jacobi,sweeps=3"};
    for (int t = 0; B && t < 4; t++) {
        refresh_pivot(types[t], A, B, 217, r, z1, z2);
        refresh_pivot(types[t], A, B, 0, r, z1, z2);
        refresh_allocs(types[t], A, B, r, z1, z2);
        if (strncmp(types[t], "ic0", 3) == 0) refresh_symmetry(types[t], A, r, z1, z2);
    }
    free(r), free(z1), free(z2);
    sps_matrix_destroy(B);
    sps_matrix_destroy(A);
}

/* Host: a numeric refresh against a full build on poisson3d:60 (216,000
 * rows), both onto the same general (not symmetric-stored) values, medians
 * of 5: a measurement, not an assertion. */
static void test_refresh_time(void)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson3d:60", &A), "poisson3d:60")) return;
    sps_matrix *B = rescaled(A, 0.5);
    const char *types[] = {"ilu0:exact", "ic0:exact", "ilu0:solve=jacobi", "ic0:solve=jacobi", "ilu0", "ic0"};
    for (int t = 0; B && t < 6; t++) {
        double full = 0, upd = 0;
        if (!T_OK(pc_refresh_medians(ctx, A, B, types[t], 0, &full, &upd),
                  "%s: builds and refreshes on poisson3d:60 (%s)", types[t], sps_last_error(ctx)))
            continue;
        printf("# %-18s poisson3d:60: refresh %.1f ms, full create %.1f ms (%.2f), medians of 5\n",
               types[t], upd, full, upd / full);
    }
    sps_matrix_destroy(B);
    sps_matrix_destroy(A);
}

/* sps_precond_time: its argument checks, and figures that order as the work
 * does: IC(0)'s two triangular solves cost more than Jacobi's scaling. */
static void test_time(void)
{
    sps_matrix *A = NULL;
    sps_precond *jac = NULL, *ic = NULL;
    sps_timing tj, ti;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, "poisson3d:30", &A), "poisson3d:30")) return;
    if (T_STATUS(ctx, sps_precond_create(ctx, A, "jacobi", &jac), "jacobi") &&
        T_STATUS(ctx, sps_precond_create(ctx, A, "ic0", &ic), "ic0")) {
        T_OK(sps_precond_time(NULL, 3, &tj) == SPS_ERR_INVALID_ARG && sps_precond_time(jac, 3, NULL) == SPS_ERR_INVALID_ARG &&
                 sps_precond_time(jac, 0, &tj) == SPS_ERR_INVALID_ARG,
             "sps_precond_time: NULL pc or t and reps < 1 refused");
        if (T_STATUS(ctx, sps_precond_time(jac, 9, &tj), "time jacobi") &&
            T_STATUS(ctx, sps_precond_time(ic, 9, &ti), "time ic0"))
            T_OK(tj.reps == 9 && tj.min_us > 0 && tj.min_us <= tj.median_us && tj.median_us <= tj.max_us &&
                     ti.median_us > tj.median_us,
                 "9 timed applies: jacobi %.1f us (min %.1f, max %.1f), ic0 %.1f us", tj.median_us, tj.min_us,
                 tj.max_us, ti.median_us);
    }
    sps_precond_destroy(jac);
    sps_precond_destroy(ic);
    sps_matrix_destroy(A);
}

T_MAIN_HOST(ctx,
            test_hand, test_exact_tridiagonal, test_errors, test_generated, test_alloc_failure, test_registry, test_real,
            test_refresh, test_refresh_numeric, test_refresh_time, test_time)
