/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_amg.c: the AMG preconditioner on the host: the
 * hierarchy (aggregates cover every node once, P against the tentative
 * prolongator smoothed by hand, A_c = P'AP against a dense product, symmetry,
 * complexity, determinism), the V-cycle (symmetric positive definite M^-1,
 * bitwise repeatable), CG iteration counts against Jacobi, the rigid-body
 * modes on elasticity, the generators AMG is for, parameters, errors and
 * every allocation failure of a setup. */
#include "pc_check.h"
#include "precond/amg/amg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

static sps_matrix *gen(const char *spec)
{
    sps_matrix *A = NULL;
    T_STATUS(ctx, sps_matrix_generate(ctx, spec, &A), "generate %s", spec);
    return A;
}

static double *dense(const sps_csr *A)
{
    double *M = calloc((size_t)A->nrows * A->ncols + 1, sizeof *M);
    for (sps_idx i = 0; i < A->nrows; i++)
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            M[(size_t)i * A->ncols + A->col_idx[p]] += A->val[p];
    return M;
}

/* max |A_c - P' A P| / max |A_c|, densely. */
static double galerkin_error(const sps_csr *A, const sps_csr *P, const sps_csr *Ac)
{
    int n = A->nrows, m = P->ncols;
    double *a = dense(A), *p = dense(P), *c = dense(Ac), *ap = calloc((size_t)n * m, sizeof *ap);
    double err = 0, big = 0;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < n; k++)
            if (a[(size_t)i * n + k] != 0)
                for (int j = 0; j < m; j++) ap[(size_t)i * m + j] += a[(size_t)i * n + k] * p[(size_t)k * m + j];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++) {
            double s = 0;
            for (int k = 0; k < n; k++) s += p[(size_t)k * m + i] * ap[(size_t)k * m + j];
            err = fmax(err, fabs(s - c[(size_t)i * m + j]));
            big = fmax(big, fabs(c[(size_t)i * m + j]));
        }
    free(a); free(p); free(c); free(ap);
    return err / big;
}

static double asymmetry(const sps_csr *A)
{
    double *a = dense(A), err = 0, big = 0;
    int n = A->nrows;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            err = fmax(err, fabs(a[(size_t)i * n + j] - a[(size_t)j * n + i]));
            big = fmax(big, fabs(a[(size_t)i * n + j]));
        }
    free(a);
    return err / big;
}

/* Every aggregate non-empty; every node with a strong neighbour in exactly
 * one, the others (isolated: the smoother alone handles them) in none. */
static int aggregates_ok(const sps_csr *A, double theta, const sps_amg_level *L, int *isolated)
{
    sps_csr S;
    if (sps__amg_strength(ctx, A, L->bs, theta, &S) != SPS_OK) return 0;
    sps_idx *cnt = calloc((size_t)L->nagg + 1, sizeof *cnt);
    int ok = L->nagg > 0 && L->nagg < L->n;
    *isolated = 0;
    for (sps_idx i = 0; i < L->n && ok; i++) {
        int coupled = S.row_ptr[i + 1] > S.row_ptr[i];
        *isolated += !coupled;
        if (!coupled) ok = L->agg[i] == -1;
        else if (L->agg[i] < 0 || L->agg[i] >= L->nagg) ok = 0;
        else cnt[L->agg[i]]++;
    }
    for (sps_idx a = 0; a < L->nagg && ok; a++) ok = cnt[a] > 0;
    free(cnt);
    sps__csr_free(&S);
    return ok;
}

/* With the level's nullspace vector v (1 on the fine level) masked to the
 * aggregated nodes (w), P_tent c = w for c_a = ||v on aggregate a||, so
 * P c = (I - omega D^-1 A) w with omega = 4 / (3 rho): checks P_tent's
 * column per aggregate and the smoothing together. c becomes the next
 * level's v. */
static double prolong_error(const sps_csr *A, const sps_amg_level *L, const double *v, double *c)
{
    sps_idx n = A->nrows;
    double *y = malloc((size_t)n * sizeof *y), *aw = malloc((size_t)n * sizeof *aw);
    double *w = malloc((size_t)n * sizeof *w), err = 0, big = 0;
    memset(c, 0, (size_t)L->nagg * sizeof *c);
    for (sps_idx i = 0; i < n; i++) {
        w[i] = L->agg[i] >= 0 ? v[i] : 0.0;
        if (L->agg[i] >= 0) c[L->agg[i]] += v[i] * v[i];
        big = fmax(big, fabs(v[i]));
    }
    for (sps_idx a = 0; a < L->nagg; a++) c[a] = sqrt(c[a]);
    sps__csr_spmv(&L->P, 1.0, c, 0.0, y);
    sps__csr_spmv(A, 1.0, w, 0.0, aw);
    for (sps_idx i = 0; i < n; i++) {
        double d = 0;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            if (A->col_idx[p] == i) d = A->val[p];
        err = fmax(err, fabs(y[i] - (w[i] - 4.0 / (3.0 * L->rho) * aw[i] / d)) / big);
    }
    free(y); free(aw); free(w);
    return err;
}

static void test_hierarchy(void)
{
    sps_matrix *A = gen("poisson3d:12");
    sps_precond *pc = NULL, *pc2 = NULL;
    if (!A || !T_STATUS(ctx, sps_precond_create(ctx, A, "amg:coarse=20", &pc), "amg on poisson3d:12"))
        goto out;
    const sps_amg *h = sps__amg_hierarchy(pc);
    T_OK(h && h->nlevels >= 3 && h->lv[h->nlevels - 1].n <= 20 && h->lv[h->nlevels - 2].n > 20,
         "poisson3d:12, coarse=20: %d levels, coarsest %d rows", h ? h->nlevels : 0,
         h ? h->lv[h->nlevels - 1].n : -1);
    if (!h) goto out;
    T_OK(h->op_complexity > 1 && h->op_complexity < 2.0, "operator complexity %.3f in (1, 2)",
         h->op_complexity);
    double *v = malloc((size_t)h->lv[0].n * sizeof *v), *c = malloc((size_t)h->lv[0].n * sizeof *c);
    for (sps_idx i = 0; i < h->lv[0].n; i++) v[i] = 1;
    for (int l = 0; l + 1 < h->nlevels; l++) {
        const sps_amg_level *L = &h->lv[l];
        const sps_csr *Al = l ? &L->A : &A->A;
        int iso = 0, agg_ok = aggregates_ok(Al, 0.08 * ldexp(1.0, -l), L, &iso);
        T_OK(agg_ok && L->P.nrows == L->n &&
                 L->P.ncols == L->nagg && h->lv[l + 1].n == L->nagg && L->R.nrows == L->nagg,
             "level %d: %d aggregates cover %d nodes once (%d isolated: in none); P %d x %d", l,
             L->nagg, L->n, iso, L->P.nrows, L->P.ncols);
        double pe = prolong_error(Al, L, v, c), ge = galerkin_error(Al, &L->P, &h->lv[l + 1].A);
        T_OK(pe < 1e-13, "level %d: P c = (I - 4/(3 rho) D^-1 A) v, v the nullspace (%.2g)", l, pe);
        memcpy(v, c, (size_t)L->nagg * sizeof *v);
        T_OK(ge < 1e-13, "level %d: A_c = P'AP densely (%.2g)", l, ge);
        T_OK(asymmetry(&h->lv[l + 1].A) < 1e-14, "level %d: A_c symmetric (%.2g)", l + 1,
             asymmetry(&h->lv[l + 1].A));
    }
    free(v);
    free(c);
    if (T_STATUS(ctx, sps_precond_create(ctx, A, "amg:coarse=20", &pc2), "second build")) {
        const sps_amg *g = sps__amg_hierarchy(pc2);
        int same = g->nlevels == h->nlevels;
        for (int l = 1; l < h->nlevels && same; l++)
            same = g->lv[l].A.nnz == h->lv[l].A.nnz &&
                   !memcmp(g->lv[l].A.val, h->lv[l].A.val, (size_t)h->lv[l].A.nnz * sizeof(double)) &&
                   !memcmp(g->lv[l - 1].agg, h->lv[l - 1].agg, (size_t)h->lv[l - 1].n * sizeof(sps_idx));
        T_OK(same, "two setups: the same aggregates, bitwise the same coarse matrices");
    }
    T_OK(strstr(sps_precond_describe(pc), "levels, operator complexity") &&
             strstr(sps_precond_describe(pc), "level 2:") && strstr(sps_precond_describe(pc), "galerkin"),
         "describe: levels, rows and nnz, phases:\n%s", sps_precond_describe(pc));
out:
    sps_precond_destroy(pc);
    sps_precond_destroy(pc2);
    sps_matrix_destroy(A);
}

/* The strength graph and MIS(2) directly: a 1-D chain of 30 nodes has
 * aggregates of 3 to 5 consecutive nodes. */
static void test_aggregate_chain(void)
{
    int n = 30;
    double *a = calloc((size_t)n * n, sizeof *a);
    for (int i = 0; i < n; i++) {
        a[i * n + i] = 2;
        if (i) a[i * n + i - 1] = a[(i - 1) * n + i] = -1;
    }
    sps_matrix *A = t_matrix_from_dense(ctx, n, n, a);
    sps_csr S;
    sps_idx agg[30], na = 0;
    if (A && T_STATUS(ctx, sps__amg_strength(ctx, &A->A, 1, 0.08, &S), "strength")) {
        T_OK(S.nnz == 2 * (n - 1), "chain: %d strong couplings", S.nnz);
        if (T_STATUS(ctx, sps__amg_aggregate(ctx, &S, agg, &na), "aggregate")) {
            int ok = agg[0] == 0 && na >= n / 5 && na <= n / 3 + 1, run = 1;
            for (int i = 1; i < n; i++) {
                if (agg[i] == agg[i - 1]) run++;
                else {
                    ok &= agg[i] == agg[i - 1] + 1 && run >= 2 && run <= 5;
                    run = 1;
                }
            }
            T_OK(ok, "chain of 30: %d aggregates of 2..5 consecutive nodes, in order", na);
        }
        sps__csr_free(&S);
    }
    sps_matrix_destroy(A);
    free(a);
}

static void test_vcycle_spd(void)
{
    const char *specs[] = {"amg:coarse=30", "amg:coarse=30,smoother=l1jacobi,sweeps=1",
                           "amg:coarse=30,sweeps=3", "amg:coarse=600"};
    sps_matrix *A = gen("poisson3d:8");
    for (size_t k = 0; A && k < sizeof specs / sizeof *specs; k++) {
        sps_precond *pc = NULL;
        if (!T_STATUS(ctx, sps_precond_create(ctx, A, specs[k], &pc), "%s", specs[k])) continue;
        pc_check_spd(specs[k], pc, 512, 1e-12);
        double r[512], z1[512], z2[512];
        uint64_t seed = 3;
        for (int i = 0; i < 512; i++) r[i] = t_rand(&seed);
        sps_precond_apply(pc, r, z1);
        sps_precond_apply(pc, r, z2);
        T_OK(!memcmp(z1, z2, sizeof z1), "%s: two applies bitwise equal", specs[k]);
        sps_precond_destroy(pc);
    }
    sps_matrix_destroy(A);
}

/* The coarsest level alone (n <= coarse): M^-1 = A^-1. */
static void test_direct(void)
{
    sps_matrix *A = gen("poisson3d:6");
    double r[216], z[216], y[216];
    uint64_t seed = 8;
    for (int i = 0; i < 216; i++) r[i] = t_rand(&seed);
    if (A && T_STATUS(ctx, pc_apply(ctx, A, "amg", r, z), "amg on 216 rows")) {
        sps__csr_spmv(&A->A, 1.0, z, 0.0, y);
        double e = 0;
        for (int i = 0; i < 216; i++) e = fmax(e, fabs(y[i] - r[i]));
        T_OK(e < 1e-12, "216 rows <= coarse=500: one level, A z = r (%.2g)", e);
    }
    sps_matrix_destroy(A);
}

/* The coarse inverse with row interchanges: a one-level hierarchy of a
 * nonsingular matrix whose diagonal is 0 on even rows (each pivot search
 * swaps rows), and an exactly singular one (two equal rows) refused. */
static void test_direct_pivoting(void)
{
    enum { N = 40 };
    t_triplets t = {0}, u = {0};
    for (sps_idx i = 0; i < N; i++) {
        if (i % 2) t_trip_add(&t, i, i, 1.0 + i);
        t_trip_add(&t, i, (i + 1) % N, 3.0 + (i % 5));
        t_trip_add(&t, i, (i + N - 1) % N, -1.0 - (i % 3));
        t_trip_add(&u, i, i, 2.0);
        if (i == 1) t_trip_add(&u, i, 0, 2.0);
        if (i == 0) t_trip_add(&u, i, 1, 2.0);
        if (i == 1) t_trip_add(&u, i, 1, 0.0);
    }
    sps_matrix *A = t_trip_matrix(ctx, N, N, &t), *S = t_trip_matrix(ctx, N, N, &u);
    double r[N], z[N], y[N];
    uint64_t seed = 5;
    for (int i = 0; i < N; i++) r[i] = t_rand(&seed);
    if (A && T_STATUS(ctx, pc_apply(ctx, A, "amg", r, z), "amg on a zero-diagonal 40 x 40")) {
        sps__csr_spmv(&A->A, 1.0, z, 0.0, y);
        double e = 0;
        for (int i = 0; i < N; i++) e = fmax(e, fabs(y[i] - r[i]));
        T_OK(e < 1e-12, "zero diagonal on even rows: the pivoted coarse inverse solves A z = r (%.2g)", e);
    }
    sps_precond *pc = NULL;
    sps_status st = S ? sps_precond_create(ctx, S, "amg", &pc) : SPS_ERR_INTERNAL;
    T_OK(st == SPS_ERR_UNSUPPORTED && strstr(sps_last_error(ctx), "singular"),
         "two equal rows: the coarse inverse says singular (%s)", sps_last_error(ctx));
    sps_precond_destroy(pc);
    sps_matrix_destroy(A);
    sps_matrix_destroy(S);
}

static void test_iterations(void)
{
    static const struct {
        const char *gen, *spec;
        int64_t most;
    } c[] = {
        /* measured: 9, 14, 11, 9, 11 (Chebyshev degree 2, the default until
         * the degree-1 cycle was measured cheaper) */
        {"poisson3d:32", "amg:sweeps=2", 10},
        {"poisson3d:32", "amg:smoother=l1jacobi,sweeps=2", 16},
        {"poisson3d-jump:32,1e4", "amg:sweeps=2", 12},
        {"aniso3d:32,0.001", "amg:sweeps=2", 11},
        {"poisson2d:100", "amg:sweeps=2", 13},
        /* the default, Chebyshev of degree 1; measured: 10, 13, 11, 12 */
        {"poisson3d:32", "amg", 11},
        {"poisson3d-jump:32,1e4", "amg", 14},
        {"aniso3d:32,0.001", "amg", 12},
        {"poisson2d:100", "amg", 13},
    };
    for (size_t k = 0; k < sizeof c / sizeof *c; k++) {
        sps_matrix *A = gen(c[k].gen);
        if (!A) continue;
        int64_t a = pc_iterations(ctx, A, NULL, SPS_CG, c[k].spec);
        int64_t j = pc_iterations(ctx, A, NULL, SPS_CG, "jacobi");
        T_OK(a > 0 && a <= c[k].most && 5 * a < j, "%s: CG+%s %lld iterations (<= %lld), CG+jacobi %lld",
             c[k].gen, c[k].spec, (long long)a, (long long)c[k].most, (long long)j);
        sps_matrix_destroy(A);
    }
}

/* CG iterations with amg, the rigid-body modes set when rbm. */
static int64_t elasticity_its(const sps_matrix *A, const char *spec, int rbm)
{
    sps_idx n = sps_matrix_rows(A);
    double *B = malloc((size_t)n * 6 * sizeof *B), *b = malloc((size_t)n * sizeof *b);
    double *x = calloc((size_t)n, sizeof *x);
    for (sps_idx i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.1;
    sps_operator *op = NULL;
    sps_precond *pc = NULL;
    sps_solver *s = NULL;
    sps_solve_info in;
    int64_t its = -1;
    sps_status st = sps_matrix_generate_rbm(ctx, spec, n, B);
    if (st == SPS_OK) st = sps_operator_create(ctx, A, "csr-vector", NULL, &op);
    if (st == SPS_OK) st = sps_precond_create_ex(ctx, A, op, "amg", &pc);
    if (st == SPS_OK && rbm) st = sps_precond_set_nullspace(pc, A, 3, 6, B);
    if (st == SPS_OK) st = sps_solver_create(ctx, &s);
    if (st == SPS_OK) st = sps_solve(s, op, pc, b, x, &in);
    if (T_STATUS(ctx, st, "%s, rbm %d", spec, rbm) && in.reason > 0) its = in.iterations;
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    free(B); free(b); free(x);
    return its;
}

static void test_elasticity(void)
{
    const char *spec = "elasticity3d:10";
    sps_matrix *A = gen(spec);
    if (!A) return;
    sps_idx n = sps_matrix_rows(A);
    double *B = malloc((size_t)n * 6 * sizeof *B), *y = malloc((size_t)n * sizeof *y);
    if (T_STATUS(ctx, sps_matrix_generate_rbm(ctx, spec, n, B), "rbm of %s", spec)) {
        /* rows of nodes x >= 2 couple no clamped node: A b = 0 there */
        double err = 0, big = 0;
        for (int k = 0; k < 6; k++) {
            sps__csr_spmv(&A->A, 1.0, B + (size_t)k * n, 0.0, y);
            for (sps_idx r = 0; r < n; r++) {
                if ((r / 3) % 10 == 0) continue; /* node x = 1 */
                err = fmax(err, fabs(y[r]));
            }
        }
        for (int64_t p = 0; p < A->A.nnz; p++) big = fmax(big, fabs(A->A.val[p]));
        T_OK(err < 1e-12 * big, "%s: A * rigid-body modes = 0 off the clamped face (%.2g)", spec, err / big);
        T_OK(asymmetry(&A->A) == 0, "%s: exactly symmetric", spec);
    }
    int64_t c = elasticity_its(A, spec, 0), r = elasticity_its(A, spec, 1);
    T_OK(r > 0 && c > 0 && 2 * r < c, "%s: CG+amg with the rigid-body modes %lld < half of %lld "
         "(constant vector)", spec, (long long)r, (long long)c);
    free(B);
    free(y);
    sps_matrix_destroy(A);
}

static void test_generators(void)
{
    sps_matrix *J = gen("poisson3d-jump:16,1e4"), *E = gen("aniso3d:5,0.01");
    if (J) {
        double dmin = INFINITY, dmax = 0, rs = 0;
        for (sps_idx i = 0; i < J->A.nrows; i++) {
            double s = 0, d = 0;
            for (sps_idx p = J->A.row_ptr[i]; p < J->A.row_ptr[i + 1]; p++) {
                s += J->A.val[p];
                if (J->A.col_idx[p] == i) d = J->A.val[p];
            }
            int x = i % 16, y = (i / 16) % 16, z = i / 256;
            if (x && y && z && x < 15 && y < 15 && z < 15) rs = fmax(rs, fabs(s) / d);
            dmin = fmin(dmin, d);
            dmax = fmax(dmax, d);
        }
        T_OK(J->A.nrows == 4096 && J->A.nnz == 7 * 4096 - 6 * 256 && asymmetry(&J->A) == 0 &&
                 rs < 1e-12 && dmax / dmin > 1e3,
             "poisson3d-jump:16,1e4: 4096 rows, symmetric, interior row sums 0 (%.2g), diagonal "
             "range %.3g", rs, dmax / dmin);
    }
    if (E) {
        double *a = dense(&E->A);
        T_OK(fabs(a[0] - 4.02) < 1e-15 && a[25] == -0.01 && a[1] == -1 && a[5] == -1,
             "aniso3d:5,0.01: 4 + 2 eps on the diagonal, -eps along z, -1 along x and y");
        free(a);
    }
    sps_matrix *bad = NULL;
    T_OK(sps_matrix_generate(ctx, "aniso3d:5,0", &bad) == SPS_ERR_INVALID_ARG &&
             sps_matrix_generate(ctx, "poisson3d-jump:5", &bad) == SPS_ERR_INVALID_ARG &&
             sps_matrix_generate_rbm(ctx, "poisson3d:5", 125, (double[6]){0}) == SPS_ERR_INVALID_ARG,
         "bad specs refused");
    sps_matrix_destroy(J);
    sps_matrix_destroy(E);
}

static void test_errors(void)
{
    static const pc_bad bad[] = {
        {"amg:theta=1", "theta='1' must be in [0, 1)"},
        {"amg:smoother=gs", "smoother='gs' is not cheby or l1jacobi"},
        {"amg:sweeps=0", "sweeps='0'"},
        {"amg:levels=0", "levels='0'"},
        {"amg:coarse=5000", "coarse='5000'"},
        {"amg:cycle=w", "unknown parameter 'cycle'"},
    };
    sps_matrix *A = gen("poisson3d:10"), *E = gen("elasticity3d:2");
    if (!A || !E) goto out;
    pc_check_refused(ctx, A, bad, sizeof bad / sizeof *bad);
    sps_precond *pc = NULL;
    T_OK(sps_precond_create(ctx, A, "amg:block=3", &pc) == SPS_ERR_INVALID_ARG && !pc &&
             strstr(sps_last_error(ctx), "1000 rows are not a multiple of block=3"),
         "block=3 on 1000 rows refused: %s", sps_last_error(ctx));
    sps_matrix *big = gen("poisson3d:17");
    T_OK(big && sps_precond_create(ctx, big, "amg:levels=1", &pc) == SPS_ERR_UNSUPPORTED && !pc &&
             strstr(sps_last_error(ctx), "4913 rows, above the dense limit 4096"),
         "levels=1 on 4913 rows refused: %s", sps_last_error(ctx));
    sps_matrix_destroy(big);
    double B[54 * 6];
    if (T_STATUS(ctx, sps_precond_create(ctx, A, "jacobi", &pc), "jacobi")) {
        T_OK(sps_precond_set_nullspace(pc, A, 1, 1, B) == SPS_ERR_INVALID_ARG,
             "set_nullspace on jacobi refused: %s", sps_last_error(ctx));
        sps_precond_destroy(pc);
    }
    if (T_STATUS(ctx, sps_precond_create(ctx, A, "amg", &pc), "amg")) {
        T_OK(sps_precond_set_nullspace(pc, E, 3, 6, B) == SPS_ERR_INVALID_ARG &&
                 sps_precond_set_nullspace(pc, A, 1, 9, B) == SPS_ERR_INVALID_ARG,
             "set_nullspace: another matrix, 9 vectors refused");
        sps_precond_destroy(pc);
    }
    const char *types[] = {"amg"};
    pc_check_empty(ctx, ctx, types, 1, "");
out:
    sps_matrix_destroy(A);
    sps_matrix_destroy(E);
}

/* Every allocation of a 3-level setup failing in turn: NO_MEMORY, nothing leaks (ASan). */
static void test_alloc_failures(void)
{
    sps_matrix *A = gen("poisson3d:6");
    int ok = 1, n = 1;
    for (; A && n < 2000; n++) {
        sps_precond *pc = NULL;
        sps__fail_alloc_after(n);
        sps_status st = sps_precond_create(ctx, A, "amg:coarse=5", &pc);
        sps__fail_alloc_after(0);
        sps_precond_destroy(pc);
        if (st == SPS_OK) break;
        if (st != SPS_ERR_NO_MEMORY) ok = 0;
    }
    T_OK(A && ok && n > 20 && n < 2000, "amg setup: each of %d allocations failing gives NO_MEMORY", n - 1);
    sps_matrix_destroy(A);
}

static void test_edges(void)
{
    const sps_idx sizes[] = {31, 32, 33, 1023, 1024, 1025};
    for (size_t k = 0; k < 8; k++) {
        sps_idx n = k < 6 ? sizes[k] : k == 6 ? 1000 : 1025;
        sps_matrix *A = pc_chain(ctx, n, k == 6 ? 500 : -1, k == 7);
        sps_precond *pc = NULL;
        double *r = malloc((size_t)n * sizeof *r), *z = malloc((size_t)n * sizeof *z);
        for (sps_idx i = 0; i < n; i++) r[i] = i == 500 && k == 6 ? 0.0 : 1.0;
        if (A && T_STATUS(ctx, sps_precond_create(ctx, A, "amg:coarse=4", &pc), "chain %d (%zu)", n, k) &&
            T_STATUS(ctx, sps_precond_apply(pc, r, z), "apply")) {
            const sps_amg *h = sps__amg_hierarchy(pc);
            double rz = 0;
            int finite = 1;
            for (sps_idx i = 0; i < n; i++) {
                rz += r[i] * z[i];
                finite &= isfinite(z[i]);
            }
            T_OK(h->nlevels >= 3 && finite && rz > 0 && (k != 6 || z[500] == 0),
                 "%s n=%d: %d levels, z finite, r'z = %.3g > 0%s", k == 7 ? "arrow" : "chain", n,
                 h->nlevels, rz, k == 6 ? ", the empty row's z 0" : "");
            if (n <= 33) pc_check_spd("chain", pc, n, 1e-12);
        }
        sps_precond_destroy(pc);
        sps_matrix_destroy(A);
        free(r);
        free(z);
    }
}

/* A's pattern with a_ij s + shift on the diagonal. */
static sps_matrix *revalued(const sps_matrix *A, double s, double shift)
{
    const sps_csr *C = &A->A;
    double *v = malloc((size_t)C->nnz * sizeof *v);
    for (sps_idx i = 0; i < C->nrows; i++)
        for (sps_idx p = C->row_ptr[i]; p < C->row_ptr[i + 1]; p++)
            v[p] = C->val[p] * s + (C->col_idx[p] == i ? shift : 0.0);
    sps_matrix *B = NULL;
    T_STATUS(ctx, sps_matrix_create_csr(ctx, C->nrows, C->ncols, C->row_ptr, C->col_idx, v, &B), "revalued");
    free(v);
    return B;
}

static void apply_r(sps_precond *pc, sps_idx n, double *z)
{
    double *r = malloc((size_t)n * sizeof *r);
    uint64_t seed = 4;
    for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
    T_STATUS(ctx, sps_precond_apply(pc, r, z), "apply");
    free(r);
}

static void test_numeric(void)
{
    sps_matrix *A = gen("poisson3d-jump:40,1e3"), *A2 = A ? revalued(A, 2.5, 0) : NULL;
    sps_matrix *S = gen("poisson3d-jump:12,1e3"), *S3 = S ? revalued(S, 1.0, 0.5) : NULL;
    sps_matrix *O = gen("poisson3d27:8");
    sps_precond *pc = NULL, *full = NULL, *sm = NULL;
    if (!A || !A2 || !S || !S3 || !O ||
        !T_STATUS(ctx, sps_precond_create(ctx, S, "amg:coarse=20", &sm), "amg on poisson3d-jump:12,1e3") ||
        !T_STATUS(ctx, sps_precond_create(ctx, A, "amg:coarse=50", &pc), "amg on poisson3d-jump:40,1e3") ||
        !T_STATUS(ctx, sps_precond_create(ctx, A2, "amg:coarse=50", &full), "amg on 2.5 A"))
        goto out;
    sps_idx n = sps_matrix_rows(A);
    double full_ms = sps_precond_setup_ms(full);
    double *z1 = malloc((size_t)n * sizeof *z1), *z2 = malloc((size_t)n * sizeof *z2), e = 0;
    if (T_STATUS(ctx, sps_precond_update_values(pc, A2), "update to 2.5 A")) {
        double upd_ms = sps_precond_setup_ms(pc);
        apply_r(pc, n, z1);
        apply_r(full, n, z2);
        for (sps_idx i = 0; i < n; i++) e = fmax(e, fabs(z1[i] - z2[i]) / fabs(z2[i]));
        T_OK(e < 1e-14, "2.5 A (the same aggregates): numeric re-setup = full setup (%.2g)", e);
        /* a measurement, not an assertion: a timed test fails on a busy machine
         * (CI: 0.78 under load; 0.27 to 0.28 measured alone) */
        printf("# numeric re-setup %.1f ms, full setup %.1f ms: %.2f (issue 11: <= 1/3)\n", upd_ms,
               full_ms, upd_ms / full_ms);
        T_OK(strstr(sps_precond_describe(pc), "numeric re-setup") != NULL, "describe says numeric re-setup");
    }
    if (T_STATUS(ctx, sps_precond_update_values(sm, S3), "update to A + I/2")) {
        const sps_amg *h = sps__amg_hierarchy(sm);
        double ge = galerkin_error(&S3->A, &h->lv[0].P, &h->lv[1].A);
        double ge2 = galerkin_error(&h->lv[1].A, &h->lv[1].P, &h->lv[2].A);
        T_OK(ge < 1e-13 && ge2 < 1e-13, "A + I/2: A_1 = P_0'(A + I/2)P_0, A_2 = P_1'A_1P_1 densely (%.2g, %.2g)", ge, ge2);
        pc_check_spd("A + I/2, numeric re-setup", sm, 1728, 1e-12);
    }
    T_OK(sps_precond_update_values(pc, O) == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(ctx), "needs the pattern"),
         "another pattern refused: %s", sps_last_error(ctx));
    sps_precond *jac = NULL;
    if (T_STATUS(ctx, sps_precond_create(ctx, A, "jacobi", &jac), "jacobi"))
        T_OK(sps_precond_update_values(jac, A2) == SPS_OK,
             "jacobi: refreshed on 2.5 A (built again; checked in test_precond's test_refresh)");
    sps_precond_destroy(jac);
    free(z1);
    free(z2);
out:
    sps_precond_destroy(pc);
    sps_precond_destroy(full);
    sps_precond_destroy(sm);
    sps_matrix_destroy(A);
    sps_matrix_destroy(A2);
    sps_matrix_destroy(S);
    sps_matrix_destroy(S3);
    sps_matrix_destroy(O);
}

/* Every SPD real matrix: CG+amg converges, in fewer iterations than CG+jacobi
 * (measured with the shared set: 1138_bus 9 vs 936, bcsstk13 275 vs 1360,
 * nos2 237 vs 3388; n <= 500 is the dense inverse: 1 iteration). */
static void test_real(void)
{
    const char *const *names = t_real_matrices();
    int n = 0;
    for (int k = 0; names[k]; k++) {
        const char *kind = t_manifest_kind(names[k]), *path = t_real_matrix_path(names[k]);
        sps_matrix *A = NULL;
        if (!kind || strcmp(kind, "spd") || !path || sps_matrix_read(ctx, path, &A) != SPS_OK) continue;
        if (sps_matrix_rows(A) <= 5000) { /* bcsstk18 (11948 rows) alone took 20 s */
            int64_t a = pc_iterations(ctx, A, NULL, SPS_CG, "amg");
            int64_t j = pc_iterations(ctx, A, NULL, SPS_CG, "jacobi");
            if (j < 0 && a < 0) /* nos2 (condition 5e9): rtol 1e-8 is out of reach on this b */
                t_skip(names[k], "neither CG+jacobi nor CG+amg reaches rtol 1e-8 on this b");
            else
                T_OK(a > 0 && (a < j || j < 0 || a == 1), "%s: CG+amg %lld iterations, CG+jacobi %lld",
                     names[k], (long long)a, (long long)j);
            n++;
        }
        sps_matrix_destroy(A);
    }
    T_OK(n > 0, "SPD real matrices solved with amg: %d", n);
}

static int same_csr(const sps_csr *a, const sps_csr *b)
{
    return a->nrows == b->nrows && a->ncols == b->ncols && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, ((size_t)a->nrows + 1) * sizeof *a->row_ptr) &&
           !memcmp(a->col_idx, b->col_idx, (size_t)a->nnz * sizeof *a->col_idx) &&
           !memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val);
}

/* Levels of h and g bitwise the same (P, A P, the coarse matrices). */
static int same_levels(const sps_amg *h, const sps_amg *g)
{
    int same = g && h && h->nlevels == g->nlevels && h->nlevels >= 3;
    for (int l = 0; same && l + 1 < h->nlevels; l++)
        same = same_csr(&h->lv[l].P, &g->lv[l].P) && same_csr(&h->lv[l].AP, &g->lv[l].AP) &&
               same_csr(&h->lv[l + 1].A, &g->lv[l + 1].A);
    return same;
}

/* The sparse products on 1, 2, 3 and 7 threads: bitwise the same hierarchy,
 * the numeric re-setup too. */
static void test_threads(void)
{
    sps_matrix *A = gen("poisson3d-jump:28,1e2"), *A2 = A ? revalued(A, 3.0, 0.25) : NULL;
    const int threads[] = {1, 2, 3, 7};
    sps_precond *pc[4] = {NULL, NULL, NULL, NULL};
    for (int pass = 0; A && A2 && pass < 2; pass++)
        for (int t = 0; t < 4; t++) {
            sps_context_set_threads(ctx, threads[t]);
            sps_status st = pass ? sps_precond_update_values(pc[t], A2)
                                 : sps_precond_create(ctx, A, "amg:coarse=50", &pc[t]);
            if (!T_STATUS(ctx, st, "%s, %d threads", pass ? "update" : "setup", threads[t]) || t == 0) continue;
            T_OK(same_levels(sps__amg_hierarchy(pc[t]), sps__amg_hierarchy(pc[0])),
                 "%d threads: the %s bitwise the same as on 1", threads[t], pass ? "numeric re-setup" : "hierarchy");
        }
    sps_context_set_threads(ctx, 0);
    for (int t = 0; t < 4; t++) sps_precond_destroy(pc[t]);
    sps_matrix_destroy(A);
    sps_matrix_destroy(A2);
}

/* The pattern's fingerprint: the same on 1, 2, 3 and 7 threads; a copy
 * gives the same, one changed word (the first row pointer's chunk, a
 * column in the middle, the last column) or two swapped columns another. */
static void test_pattern(void)
{
    sps_matrix *A = gen("poisson3d:100");
    sps_csr C;
    if (!A || !T_STATUS(ctx, sps__csr_copy(ctx, &A->A, &C), "copy")) {
        sps_matrix_destroy(A);
        return;
    }
    const int threads[] = {1, 2, 3, 7};
    uint64_t z[4] = {0, 0, 0, 0}, c = 0, d[4] = {0, 0, 0, 0};
    for (int t = 0; t < 4; t++) {
        sps_context_set_threads(ctx, threads[t]);
        T_STATUS(ctx, sps__amg_pattern(ctx, &A->A, &z[t]), "fingerprint on %d threads", threads[t]);
    }
    sps_context_set_threads(ctx, 0);
    T_OK(z[1] == z[0] && z[2] == z[0] && z[3] == z[0], "fingerprint the same on 1, 2, 3, 7 threads");
    T_OK(sps__amg_pattern(ctx, &C, &c) == SPS_OK && c == z[0], "a copy's fingerprint the same");
    sps_idx m = C.nnz / 2, last = C.nnz - 1;
    C.row_ptr[1]++;
    sps__amg_pattern(ctx, &C, &d[0]);
    C.row_ptr[1]--;
    C.col_idx[m] ^= 1;
    sps__amg_pattern(ctx, &C, &d[1]);
    C.col_idx[m] ^= 1;
    C.col_idx[last]--;
    sps__amg_pattern(ctx, &C, &d[2]);
    C.col_idx[last]++;
    sps_idx t0 = C.col_idx[m];
    C.col_idx[m] = C.col_idx[m + 1];
    C.col_idx[m + 1] = t0;
    sps__amg_pattern(ctx, &C, &d[3]);
    T_OK(d[0] != c && d[1] != c && d[2] != c && d[3] != c && d[0] != d[1] && d[1] != d[3],
         "one changed word, or two swapped columns, change the fingerprint");
    sps__csr_free(&C);
    sps_matrix_destroy(A);
}

T_MAIN_HOST(ctx, test_pattern, test_threads, test_real, test_numeric, test_edges, test_hierarchy, test_aggregate_chain, test_vcycle_spd, test_direct, test_direct_pivoting, test_iterations,
            test_elasticity, test_generators, test_errors, test_alloc_failures)
