/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_strategy.c: sps_solve_strategy (the automatic
 * method and preconditioner with fallbacks) on the host: the plan lists from
 * the features, fallbacks after a zero pivot and a breakdown, explicit
 * settings with and without fallback, the budgets, the best iterate, x
 * aliasing b, case-insensitive method names, and a handful of shared
 * matrices (SPS_MATRICES) */
#include "check.h"

#include "../../solvers/strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

/* ||b - A x|| / ||b|| on the host. */
static double relres(const sps_matrix *A, const double *b, const double *x)
{
    sps_idx n = sps_matrix_rows(A);
    double *r = malloc(sizeof(double) * (size_t)(n ? n : 1)), rr = 0, bb = 0;
    memcpy(r, b, sizeof(double) * (size_t)n);
    sps_matrix_spmv_host(A, -1.0, x, 1.0, r);
    for (sps_idx i = 0; i < n; i++) {
        rr += r[i] * r[i];
        bb += b[i] * b[i];
    }
    free(r);
    return bb > 0 ? sqrt(rr / bb) : sqrt(rr);
}

typedef struct sys {
    sps_matrix *A;
    sps_operator *op;
    double *b, *x;
    sps_idx n;
} sys;

/* b = A * ones, x = 0, a csr-vector operator. */
static int sys_make(sys *s, sps_matrix *A)
{
    memset(s, 0, sizeof *s);
    if (!A) return 0;
    s->A = A;
    s->n = sps_matrix_rows(A);
    s->b = calloc((size_t)s->n + 1, sizeof(double));
    s->x = calloc((size_t)s->n + 1, sizeof(double));
    double *ones = malloc(sizeof(double) * ((size_t)s->n + 1));
    for (sps_idx i = 0; i < s->n; i++) ones[i] = 1.0;
    sps_matrix_spmv_host(A, 1.0, ones, 0.0, s->b);
    free(ones);
    return T_STATUS(ctx, sps_operator_create(ctx, A, "csr-vector", NULL, &s->op), "operator");
}

static void sys_free(sys *s)
{
    sps_operator_destroy(s->op);
    sps_matrix_destroy(s->A);
    free(s->b);
    free(s->x);
}

/* A converged strategy's true residual meets rtol on the host too. */
static void check_honest(const char *name, const sys *s, const sps_solve_info *in, double rtol)
{
    double rr = relres(s->A, s->b, s->x);
    if (in->reason > 0)
        T_OK(rr <= rtol * 1.0001, "%s: converged and host relres %.3e <= rtol %g", name, rr, rtol);
    T_NEAR(rr, in->true_rel_rnorm, 1e-6, "%s: info's true relres %.6e is x's (%.6e)", name,
           in->true_rel_rnorm, rr);
}

static void test_plans_classes(void);

static void test_plans(void)
{
    sps_features f;
    memset(&f, 0, sizeof f);
    sps_plan p[SPS_MAX_PLANS];
    char why[160];
    f.rows = f.cols = 100000;
    f.symmetric = 1;
    int np = sps__strategy_plans(&f, 0, 0, p, why, sizeof why);
    T_OK(np >= 3 && !strcmp(p[0].method, "cg") && !strcmp(p[0].precond, "ic0:exact") &&
             !strcmp(p[1].precond, "jacobi") && strstr(why, "positive diagonal"),
         "SPD-like: cg+ic0:exact, then cg+jacobi (%d plans, %s+%s; %s)", np, p[0].method, p[0].precond, why);
    f.symmetric = 0;
    np = sps__strategy_plans(&f, 0, 0, p, why, sizeof why);
    T_OK(!strcmp(p[0].method, "gmres:restart=100") && !strcmp(p[0].precond, "ilu0:exact") &&
             !strcmp(p[1].method, "idr") && !strcmp(p[2].method, "bicgstab"),
         "nonsymmetric: gmres(100)+ilu0:exact, idr+ilu0:exact, bicgstab+ilu0:exact (%s+%s, %s, %s)", p[0].method,
         p[0].precond, p[1].method, p[2].method);
    int has_long = 0;
    for (int i = 0; i < np; i++) has_long |= !strcmp(p[i].method, "gmres:restart=2000");
    T_OK(has_long, "nonsymmetric, n = 100000, no memory limit: a gmres(2000) plan");
    np = sps__strategy_plans(&f, (size_t)502 * 100000 * 8, 0, p, why, sizeof why);
    has_long = 0;
    for (int i = 0; i < np; i++) has_long |= !strcmp(p[i].method, "gmres:restart=500");
    T_OK(has_long, "a basis of 502 vectors fits: the long restart is 500");
    f.missing_diagonal = 3;
    np = sps__strategy_plans(&f, 0, 0, p, why, sizeof why);
    int bad = 0;
    for (int i = 0; i < np; i++) bad |= strcmp(p[i].precond, "none") != 0;
    T_OK(!bad && np >= 2 && strstr(why, "missing diagonal"),
         "missing diagonal entries: only unpreconditioned plans (%d; %s)", np, why);
    f.missing_diagonal = 0;
    f.zero_diagonal = 2;
    np = sps__strategy_plans(&f, 0, 0, p, why, sizeof why);
    bad = 0;
    for (int i = 0; i < np; i++) bad |= !strcmp(p[i].precond, "jacobi");
    T_OK(!bad && !strcmp(p[0].precond, "ilu0:exact"), "zero diagonal entries: ilu0:exact kept, jacobi left out");
    f.zero_diagonal = 0;
    f.diag_dominant = 1;
    np = sps__strategy_plans(&f, 0, 0, p, why, sizeof why);
    T_OK(!strcmp(p[1].precond, "jacobi") && !strcmp(p[2].method, "idr"),
         "diagonally dominant nonsymmetric: gmres+jacobi second (%s, then %s)", p[1].precond,
         p[2].method);
    /* the GPU lists: the cheap preconditioners first, the host list after;
     * no dominant rows (f.dominant_rows = 0): the ILU class */
    f.diag_dominant = 0;
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    T_OK(np >= 6 && !strcmp(p[0].method, "bicgstab") && !strcmp(p[0].precond, "none") &&
             p[0].maxit == 400 && !strcmp(p[1].precond, "ilu0:factor=par,solve=jacobi") && p[1].maxit == 100 &&
             !strcmp(p[2].precond, "ilu0:exact") && !p[2].maxit && !strcmp(p[3].precond, "jacobi") &&
             !strcmp(p[4].precond, "ilu0:factor=par,solve=jacobi") && !p[4].maxit && strstr(why, "GPU") &&
             strstr(why, "exact ILU(0)"),
         "GPU nonsymmetric, few dominant rows: the bicgstab probe (%s+%s, %lld its), the parallel ILU(0) "
         "capped (%s, %lld), gmres+ilu0:exact, gmres+jacobi, the uncapped parallel ILU(0) (%s, %s, %s; %s)",
         p[0].method, p[0].precond, (long long)p[0].maxit, p[1].precond, (long long)p[1].maxit, p[2].precond,
         p[3].precond, p[4].precond, why);
    T_OK(!strcmp(p[np - 1].method, "bicgstab") && !strcmp(p[np - 1].precond, "none") &&
             p[np - 1].maxit == 0 && np <= SPS_MAX_PLANS,
         "GPU nonsymmetric: the uncapped bicgstab+none stays last (%s+%s, %d plans)",
         p[np - 1].method, p[np - 1].precond, np);
    for (int i = 2; i < np; i++)
        if (p[i].maxit > 0) T_FAIL("GPU nonsymmetric", "plan %d (%s+%s) capped", i, p[i].method, p[i].precond);
    f.symmetric = 1;
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    T_OK(np >= 4 && !strcmp(p[0].precond, "cheby") && !strcmp(p[1].precond, "jacobi") &&
             !strcmp(p[2].precond, "ic0:exact"),
         "GPU SPD-like: cg+cheby, cg+jacobi, then cg+ic0:exact (%s, %s, %s)", p[0].precond, p[1].precond,
         p[2].precond);
    f.missing_diagonal = 1;
    f.symmetric = 0;
    sps_plan h[SPS_MAX_PLANS];
    int nh = sps__strategy_plans(&f, 0, 0, h, why, sizeof why);
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    int same = np == nh + 1 && p[0].maxit > 0 && !strcmp(p[0].method, "bicgstab");
    for (int i = 0; same && i < nh; i++)
        same = !strcmp(p[i + 1].method, h[i].method) && !strcmp(p[i + 1].precond, h[i].precond);
    T_OK(same,
         "GPU, missing diagonal entries: the bicgstab probe, then the host list (%d plans)", np);
    /* small systems on the GPU: the long-restart GMRES first, capped; its
     * uncapped plan stays in the list; the boundary is the basis's bytes */
    f.missing_diagonal = 0;
    f.rows = f.cols = 4000;
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    int uncapped = 0;
    for (int i = 1; i < np; i++)
        uncapped |= !strcmp(p[i].method, "gmres:restart=2000") && !strcmp(p[i].precond, "none") && p[i].maxit == 0;
    T_OK(np >= 6 && !strcmp(p[0].method, "gmres:restart=2000") && !strcmp(p[0].precond, "none") &&
             p[0].maxit == 500 && !strcmp(p[1].method, "bicgstab") && p[1].maxit > 0 && uncapped,
         "GPU nonsymmetric, n = 4000: gmres(2000)+none capped at 500 first (%s+%s, %lld its), then the "
         "bicgstab probe (%s), the uncapped plan later (%d)",
         p[0].method, p[0].precond, (long long)p[0].maxit, p[1].method, uncapped);
    f.rows = f.cols = 600;
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    /* m = n: the GMRES spans the whole space, capped at its one cycle */
    T_OK(!strcmp(p[0].method, "gmres:restart=600") && p[0].maxit == 600,
         "GPU nonsymmetric, n = 600: the long restart is n, capped at one cycle (%s, %lld its)", p[0].method,
         (long long)p[0].maxit);
    f.rows = f.cols = 16761; /* 2002 x 16761 doubles: just above 256 MiB */
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    T_OK(!strcmp(p[0].method, "bicgstab"), "GPU nonsymmetric, n = 16761: no long GMRES first (%s)",
         p[0].method);
    f.rows = f.cols = 16760; /* just below */
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    T_OK(!strcmp(p[0].method, "gmres:restart=2000"), "GPU nonsymmetric, n = 16760: long GMRES first (%s)",
         p[0].method);
    f.symmetric = 1;
    f.rows = f.cols = 4000;
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    T_OK(!strcmp(p[0].precond, "cheby") && !strcmp(p[1].precond, "jacobi") &&
             !strcmp(p[2].method, "gmres:restart=2000") && p[2].maxit == 1000 && !strcmp(p[3].precond, "ic0:exact"),
         "GPU SPD-like, n = 4000: cg+cheby, cg+jacobi, capped gmres(2000)+none, then cg+ic0:exact (%s+%s, %s+%s, "
         "%s+%s, %s+%s)", p[0].method, p[0].precond, p[1].method, p[1].precond, p[2].method, p[2].precond,
         p[3].method, p[3].precond);
    /* gpu = 2, the one kernel applies: its plans first, capped, and their
     * uncapped plans later (a probe that falls steadily is promoted) */
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    int later = 0;
    for (int i = 1; i < np; i++) later |= !strcmp(p[i].method, "cg") && !strcmp(p[i].precond, "jacobi") && !p[i].maxit;
    T_OK(!strcmp(p[0].method, "cg") && !strcmp(p[0].precond, "jacobi") && p[0].maxit == 1000 &&
             !strcmp(p[1].precond, "cheby") && later && strstr(why, "one kernel"),
         "GPU one kernel, SPD-like: a capped cg+jacobi first (%s+%s, %lld its), cg+cheby, cg+jacobi later (%d; %s)",
         p[0].method, p[0].precond, (long long)p[0].maxit, later, why);
    f.symmetric = 0;
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    int probes = 0;
    for (int i = 0; i < np; i++) probes += !strcmp(p[i].method, "bicgstab") && !strcmp(p[i].precond, "none") && p[i].maxit > 0;
    /* m = 2000 < n: a restarted long GMRES, after the exact ILU(0) */
    T_OK(!strcmp(p[0].method, "bicgstab") && p[0].maxit == 400 && !strcmp(p[1].precond, "ilu0:factor=par,solve=jacobi") &&
             p[1].maxit == 100 && !strcmp(p[2].precond, "ilu0:exact") && !p[2].maxit &&
             !strcmp(p[3].method, "gmres:restart=2000") && p[3].maxit == 500 && probes == 1,
         "GPU one kernel, nonsymmetric n = 4000, few dominant rows: the bicgstab probe, the capped parallel "
         "ILU(0), gmres+ilu0:exact, then the capped gmres(2000); one probe (%s %lld, %s %lld, %s, %s %lld, %d)",
         p[0].method, (long long)p[0].maxit, p[1].precond, (long long)p[1].maxit, p[2].precond, p[3].method,
         (long long)p[3].maxit, probes);
    /* n = 1000: the long GMRES spans the whole space (m = n), one cycle of
     * 1000 before the exact ILU(0) */
    f.rows = f.cols = 1000;
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    T_OK(!strcmp(p[0].method, "bicgstab") && !strcmp(p[1].precond, "ilu0:factor=par,solve=jacobi") &&
             !strcmp(p[2].method, "gmres:restart=1000") && !strcmp(p[2].precond, "none") && p[2].maxit == 1000 &&
             !strcmp(p[3].precond, "ilu0:exact") && !p[3].maxit,
         "GPU one kernel, nonsymmetric n = 1000, few dominant rows: the full GMRES (m = n) capped at its "
         "cycle before the exact ILU(0) (%s+%s %lld, then %s)",
         p[2].method, p[2].precond, (long long)p[2].maxit, p[3].precond);
    f.rows = f.cols = 4000;
    test_plans_classes();
}

/* The two classes of the GPU list for a nonsymmetric matrix with a complete
 * nonzero diagonal (strategy.c, gpu_cheap_first), and the one kernel's
 * shorter BiCGSTAB probe on long rows. */
static void test_plans_classes(void)
{
    sps_features f;
    memset(&f, 0, sizeof f);
    sps_plan p[SPS_MAX_PLANS];
    char why[160];
    f.rows = f.cols = 4000;
    f.row_max = 4; /* one kernel: serial bound ceil(4000 / 1024) x 4 = 16, the full probe */
    /* 2/3 of the rows dominant (3 x 2667 >= 2 x 4000): GMRES(100)+Jacobi
     * first, capped; its uncapped plan later (promotion); no parallel-ILU
     * probe, the long GMRES capped at 1000 as before */
    f.dominant_rows = 2667;
    int np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    int later = 0, pilu_capped = 0;
    for (int i = 1; i < np; i++) {
        later |= !strcmp(p[i].method, "gmres:restart=100") && !strcmp(p[i].precond, "jacobi") && !p[i].maxit;
        pilu_capped |= !strcmp(p[i].precond, "ilu0:factor=par,solve=jacobi") && p[i].maxit > 0;
    }
    T_OK(np >= 5 && !strcmp(p[0].method, "gmres:restart=100") && !strcmp(p[0].precond, "jacobi") &&
             p[0].maxit == 300 && !strcmp(p[1].method, "bicgstab") && p[1].maxit == 400 &&
             !strcmp(p[2].method, "gmres:restart=2000") && p[2].maxit == 1000 && later && !pilu_capped &&
             strstr(why, "Jacobi-GMRES(100) probe first"),
         "GPU, 2/3 of the rows dominant: gmres(100)+jacobi capped first (%s+%s %lld), the bicgstab probe "
         "(%s %lld), the long GMRES (%s %lld), the uncapped plan later (%d), no parallel-ILU probe (%d; %s)",
         p[0].method, p[0].precond, (long long)p[0].maxit, p[1].method, (long long)p[1].maxit, p[2].method,
         (long long)p[2].maxit, later, pilu_capped, why);
    /* the same off the one kernel: Jacobi first too */
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    T_OK(!strcmp(p[0].precond, "jacobi") && p[0].maxit == 300 && !strcmp(p[1].method, "gmres:restart=2000"),
         "GPU (no one kernel), 2/3 of the rows dominant: gmres(100)+jacobi first (%s %lld, then %s)",
         p[0].precond, (long long)p[0].maxit, p[1].method);
    /* every row dominant (diag_dominant) whatever the count says */
    f.dominant_rows = 0;
    f.diag_dominant = 1;
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    T_OK(!strcmp(p[0].precond, "jacobi") && p[0].maxit == 300, "GPU, diagonally dominant: Jacobi first (%s %lld)",
         p[0].precond, (long long)p[0].maxit);
    f.diag_dominant = 0;
    /* just under 2/3 (3 x 2666 < 2 x 4000): the ILU class */
    f.dominant_rows = 2666;
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    int exact = -1, jac = -1;
    for (int i = 0; i < np; i++) {
        if (exact < 0 && !strcmp(p[i].precond, "ilu0:exact")) exact = i;
        if (jac < 0 && !strcmp(p[i].precond, "jacobi")) jac = i;
    }
    T_OK(!strcmp(p[0].method, "bicgstab") && !strcmp(p[1].precond, "ilu0:factor=par,solve=jacobi") &&
             p[1].maxit == 100 && exact == 2 && !strcmp(p[3].method, "gmres:restart=2000") && p[3].maxit == 500 &&
             jac > exact && strstr(why, "exact ILU(0)"),
         "GPU, under 2/3 of the rows dominant, n = 4000: bicgstab probe, parallel ILU(0) capped, "
         "gmres+ilu0:exact (at %d), the restarted long GMRES capped after it (%s %lld), gmres+jacobi (at %d; %s)",
         exact, p[3].method, (long long)p[3].maxit, jac, why);
    /* every capped plan has its uncapped plan later, for its promotion (the
     * list is longer than SPS_MAX_ATTEMPTS: the uncapped bicgstab+none is
     * the 11th) */
    for (int i = 0; i < np; i++) {
        if (!p[i].maxit) continue;
        int found = 0;
        for (int j = i + 1; j < np; j++)
            found |= !strcmp(p[j].method, p[i].method) && !strcmp(p[j].precond, p[i].precond) && !p[j].maxit;
        T_OK(found, "GPU, ILU class: the capped %s+%s (%lld) has its uncapped plan later (%d plans)", p[i].method,
             p[i].precond, (long long)p[i].maxit, np);
    }
    /* a zero diagonal entry: no Jacobi, the ILU class (ILU(0)'s pivot may fill in) */
    f.dominant_rows = 4000;
    f.zero_diagonal = 1;
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    int bad = 0;
    for (int i = 0; i < np; i++) bad |= !strcmp(p[i].precond, "jacobi");
    T_OK(!bad && !strcmp(p[0].method, "bicgstab") && !strcmp(p[1].precond, "ilu0:factor=par,solve=jacobi"),
         "GPU, a zero diagonal entry: no Jacobi, the parallel-ILU(0) probe second (%s)", p[1].precond);
    /* a missing diagonal entry: neither class; the long GMRES capped at 1000 */
    f.zero_diagonal = 0;
    f.missing_diagonal = 1;
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    T_OK(!strcmp(p[0].method, "bicgstab") && p[0].maxit == 400 && !strcmp(p[1].method, "gmres:restart=2000") &&
             p[1].maxit == 1000,
         "GPU, a missing diagonal entry: the bicgstab probe, the long GMRES capped at 1000 (%s %lld)", p[1].method,
         (long long)p[1].maxit);
    f.missing_diagonal = 0;
    /* the one kernel's probe on long rows: ceil(765 / 1024) x 81 = 81 > 16,
     * 400 x 16 / 81 = 79 iterations; off the one kernel 400; at least 50 */
    f.rows = f.cols = 765;
    f.row_max = 81;
    f.dominant_rows = 0;
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    T_OK(!strcmp(p[0].method, "bicgstab") && p[0].maxit == 79, "one kernel, serial bound 81: a probe of 79 (%lld)",
         (long long)p[0].maxit);
    np = sps__strategy_plans(&f, 0, 1, p, why, sizeof why);
    int probe = -1;
    for (int i = 0; i < np; i++)
        if (!strcmp(p[i].method, "bicgstab") && p[i].maxit > 0) probe = i;
    T_OK(probe >= 0 && p[probe].maxit == 400, "no one kernel, long rows: the probe keeps 400 (%lld)",
         probe >= 0 ? (long long)p[probe].maxit : -1LL);
    f.row_max = 1000;
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    T_OK(!strcmp(p[0].method, "bicgstab") && p[0].maxit == 50, "one kernel, serial bound 1000: the probe's floor 50 (%lld)",
         (long long)p[0].maxit);
    f.rows = f.cols = 2048;
    f.row_max = 8; /* serial 16: 400 */
    np = sps__strategy_plans(&f, 0, 2, p, why, sizeof why);
    T_OK(!strcmp(p[0].method, "bicgstab") && p[0].maxit == 400, "one kernel, serial bound 16: 400 (%lld)",
         (long long)p[0].maxit);
}

/* Nonsymmetric tridiagonal with a stored zero at (0,0): ILU(0) meets a zero
 * pivot at once, and the strategy falls back to unpreconditioned plans. */
static sps_matrix *zero_pivot_matrix(sps_idx n)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        t_trip_add(&t, i, i, i == 0 ? 0.0 : 4.0);
        if (i > 0) t_trip_add(&t, i, i - 1, -1.0);
        if (i + 1 < n) t_trip_add(&t, i, i + 1, -2.0);
    }
    return t_trip_matrix(ctx, n, n, &t);
}

static void test_zero_pivot(sps_solver *sv)
{
    sys s;
    if (!sys_make(&s, zero_pivot_matrix(40))) return;
    sps_solve_info in;
    if (T_STATUS(ctx, sps_solve_strategy(sv, s.A, s.op, NULL, s.b, s.x, &in), "strategy, zero pivot")) {
        const sps_attempt *a = in.attempts;
        T_OK(in.nattempts >= 2 && a[0].status == SPS_ERR_ZERO_PIVOT && !strcmp(a[0].precond, "ilu0:exact") &&
                 strstr(a[0].note, "not run"),
             "zero pivot: the first plan (ilu0:exact) is not run (%d attempts, status %d, '%s')", in.nattempts,
             a[0].status, a[0].note);
        T_OK(in.nattempts >= 2 && a[1].status == SPS_ERR_ZERO_PIVOT && a[1].precond_ms == 0,
             "zero pivot: the second ilu0:exact plan reuses the cached (failed) setup");
        T_OK(in.reason > 0 && in.winner == in.nattempts - 1 &&
                 !strcmp(in.attempts[in.winner].precond, "none") &&
                 !strcmp(in.attempts[in.winner].note, "won"),
             "zero pivot: an unpreconditioned plan wins (%s, winner %d of %d)",
             sps_reason_str(in.reason), in.winner, in.nattempts);
        check_honest("zero pivot", &s, &in, 1e-8);
    }
    sys_free(&s);
}

/* Symmetric indefinite (diagonal +-3): explicit CG breaks; with fallback the
 * automatic plans take over; without, one attempt. */
/* Tridiagonal, 1 off the diagonal; the diagonal even on even rows, odd on odd ones. */
static sps_matrix *tridiag_matrix(sps_idx n, double even, double odd)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        t_trip_add(&t, i, i, i % 2 ? odd : even);
        if (i > 0) t_trip_add(&t, i, i - 1, 1.0);
        if (i + 1 < n) t_trip_add(&t, i, i + 1, 1.0);
    }
    return t_trip_matrix(ctx, n, n, &t);
}

/* Symmetric indefinite, a diagonal of alternating sign. */
static sps_matrix *indefinite_matrix(sps_idx n) { return tridiag_matrix(n, 3.0, -3.0); }

static void test_explicit(sps_solver *sv)
{
    sys s;
    if (!sys_make(&s, indefinite_matrix(64))) return;
    sps_strategy how;
    sps_strategy_default(&how);
    how.method = "CG";
    how.precond = "none";
    sps_solve_info in, plain;
    if (T_STATUS(ctx, sps_solve_strategy(sv, s.A, s.op, &how, s.b, s.x, &in), "explicit cg")) {
        T_OK(in.nattempts == 1 && !strcmp(in.attempts[0].method, "CG"),
             "explicit method and precond, no fallback: one attempt (%d)", in.nattempts);
        memset(s.x, 0, sizeof(double) * (size_t)s.n);
        sps_solver_set_method(sv, SPS_CG);
        if (T_STATUS(ctx, sps_solve(sv, s.op, NULL, s.b, s.x, &plain), "plain cg"))
            T_OK(plain.reason == in.reason && plain.iterations == in.iterations,
                 "explicit plan = sps_solve: %s after %lld, %s after %lld", sps_reason_str(in.reason),
                 (long long)in.iterations, sps_reason_str(plain.reason), (long long)plain.iterations);
    }
    memset(s.x, 0, sizeof(double) * (size_t)s.n);
    how.fallback = 1;
    if (T_STATUS(ctx, sps_solve_strategy(sv, s.A, s.op, &how, s.b, s.x, &in), "cg with fallback")) {
        T_OK(in.reason > 0 && in.nattempts >= 2 && in.attempts[0].reason <= 0 && in.winner > 0,
             "explicit cg fails, --fallback converges (%s, %d attempts, first %s)",
             sps_reason_str(in.reason), in.nattempts, sps_reason_str(in.attempts[0].reason));
        check_honest("indefinite with fallback", &s, &in, 1e-8);
    }
    sys_free(&s);
}

/* Symmetric with a positive diagonal (so SPD-like to the features) but
 * indefinite: tridiag(1, 1, 1) has eigenvalues 1 + 2 cos(k pi / (n + 1)). */
static sps_matrix *spd_like_indefinite(sps_idx n) { return tridiag_matrix(n, 1.0, 1.0); }

/* Once CG meets p'Ap <= 0, no later attempt is CG. */
static void test_not_spd(sps_solver *sv)
{
    sys s;
    if (!sys_make(&s, spd_like_indefinite(200))) return;
    sps_solve_info in;
    if (T_STATUS(ctx, sps_solve_strategy(sv, s.A, s.op, NULL, s.b, s.x, &in), "spd-like indefinite")) {
        int at = -1, cg_after = 0;
        for (int i = 0; i < in.nattempts; i++) {
            if (at >= 0 && !strncmp(in.attempts[i].method, "cg", 2)) cg_after++;
            if (at < 0 && in.attempts[i].reason == SPS_DIVERGED_INDEFINITE) at = i;
        }
        T_OK(at >= 0 && cg_after == 0 && in.reason > 0 && strstr(in.plan_why, "p'Ap") != NULL,
             "CG met p'Ap <= 0 in attempt %d, %d CG attempts after it, %s (%d attempts; %s)", at + 1,
             cg_after, sps_reason_str(in.reason), in.nattempts, in.plan_why);
        check_honest("spd-like indefinite", &s, &in, 1e-8);
    }
    sys_free(&s);
}

/* The iteration budget, and the best iterate handed over. */
static void test_budget(sps_solver *sv, const char *path)
{
    sps_matrix *A = NULL;
    if (!path || sps_matrix_read(ctx, path, &A) != SPS_OK) {
        t_skip("strategy budget", "nos6 not present");
        return;
    }
    sys s;
    if (!sys_make(&s, A)) return;
    sps_strategy how;
    sps_strategy_default(&how);
    how.max_iterations = 30;
    sps_solver_set_maxit(sv, 10);
    sps_solve_info in;
    if (T_STATUS(ctx, sps_solve_strategy(sv, s.A, s.op, &how, s.b, s.x, &in), "budget")) {
        T_OK(in.reason == SPS_DIVERGED_MAXIT && in.total_iterations == 30 && in.nattempts == 3,
             "budget 30, maxit 10: three attempts of 10 (%s, %lld, %d)", sps_reason_str(in.reason),
             (long long)in.total_iterations, in.nattempts);
        double best = INFINITY;
        for (int i = 0; i < in.nattempts; i++) best = fmin(best, in.attempts[i].true_rel_rnorm);
        T_OK(in.true_rel_rnorm == best, "the best iterate is returned (%.3e, best %.3e)",
             in.true_rel_rnorm, best);
        T_OK(in.nattempts < 2 || in.attempts[1].true_rel_rnorm < in.attempts[0].true_rel_rnorm,
             "the second attempt starts from the first's iterate (%.3e < %.3e)",
             in.attempts[1].true_rel_rnorm, in.attempts[0].true_rel_rnorm);
        check_honest("budget", &s, &in, 1e-8);
    }
    sps_solver_set_maxit(sv, 10000);
    sys_free(&s);
}

/* An attempt that ends worse than x = 0 (west0479: BiCGSTAB grows the
 * residual past dtol in 8 iterations) hands zero to the next attempt, not its
 * iterate: the second attempt then runs exactly as it does alone from zero. */
static void test_worse_than_zero(sps_solver *sv, const char *path)
{
    sps_matrix *A = NULL;
    if (!path || sps_matrix_read(ctx, path, &A) != SPS_OK) {
        t_skip("strategy: worse than zero", "west0479 not present");
        return;
    }
    sys s;
    if (!sys_make(&s, A)) return;
    sps_strategy how;
    sps_strategy_default(&how);
    how.method = "bicgstab";
    how.precond = "none";
    how.fallback = 1;
    sps_solve_info in, alone;
    if (!T_STATUS(ctx, sps_solve_strategy(sv, s.A, s.op, &how, s.b, s.x, &in), "bicgstab, fallback")) {
        sys_free(&s);
        return;
    }
    T_OK(in.nattempts >= 2 && in.attempts[0].reason == SPS_DIVERGED_DTOL &&
             in.attempts[0].true_rel_rnorm > 1.0,
         "west0479: the explicit bicgstab diverges (%s, relres %.3e, %d attempts)",
         sps_reason_str(in.attempts[0].reason), in.attempts[0].true_rel_rnorm, in.nattempts);
    const sps_attempt *a1 = &in.attempts[1];
    sps_precond *pc = NULL;
    if (in.nattempts >= 2 && a1->status == SPS_OK &&
        T_STATUS(ctx, sps_precond_create(ctx, s.A, a1->precond, &pc), "second plan's precond") &&
        T_STATUS(ctx, sps_solver_set_method_name(sv, a1->method), "second plan's method")) {
        memset(s.x, 0, sizeof(double) * (size_t)s.n);
        sps_solver_set_maxit(sv, a1->maxit);
        if (T_STATUS(ctx, sps_solve(sv, s.op, pc, s.b, s.x, &alone), "second plan alone"))
            T_OK(alone.iterations == a1->iterations && alone.reason == a1->reason &&
                     alone.true_rel_rnorm == a1->true_rel_rnorm,
                 "the second attempt (%s+%s) started from zero: %lld iterations, %s, relres %.6e "
                 "(alone from zero: %lld, %s, %.6e)",
                 a1->method, a1->precond, (long long)a1->iterations, sps_reason_str(a1->reason),
                 a1->true_rel_rnorm, (long long)alone.iterations, sps_reason_str(alone.reason),
                 alone.true_rel_rnorm);
        sps_solver_set_maxit(sv, 10000);
    }
    sps_precond_destroy(pc);
    sps_solver_set_method(sv, SPS_CG);
    sys_free(&s);
}

/* x = b on entry (aliased): every attempt still sees the original b. */
static void test_alias(sps_solver *sv)
{
    sys s;
    if (!sys_make(&s, zero_pivot_matrix(33))) return;
    double *bx = malloc(sizeof(double) * (size_t)s.n);
    memcpy(bx, s.b, sizeof(double) * (size_t)s.n);
    sps_solve_info in;
    if (T_STATUS(ctx, sps_solve_strategy(sv, s.A, s.op, NULL, bx, bx, &in), "aliased")) {
        double e = 0;
        for (sps_idx i = 0; i < s.n; i++) e = fmax(e, fabs(bx[i] - 1.0));
        T_OK(in.reason > 0 && in.nattempts >= 2 && e < 1e-5,
             "x aliases b, after a fallback: x = ones (max error %.2e, %d attempts)", e, in.nattempts);
    }
    free(bx);
    sys_free(&s);
}

static void test_names(sps_solver *sv)
{
    sps_method m = SPS_CG;
    T_OK(sps_method_from_name("GMRES", &m) == SPS_OK && m == SPS_GMRES, "'GMRES' is gmres");
    T_OK(sps_method_from_name("Auto", &m) == SPS_OK && m == SPS_METHOD_AUTO, "'Auto' is auto");
    T_OK(!strcmp(sps_method_name(SPS_METHOD_AUTO), "auto"), "SPS_METHOD_AUTO is named auto");
    T_OK(sps_solver_set_method_name(sv, "BiCGStab") == SPS_OK, "'BiCGStab' is accepted");
    sps_status st = sps_solver_set_method_name(sv, "bogus");
    T_OK(st == SPS_ERR_INVALID_ARG && strstr(sps_last_error(ctx), "cg") &&
             strstr(sps_last_error(ctx), "gmres"),
         "an unknown method lists the known ones (%s)", sps_last_error(ctx));
    T_OK(sps_solver_set_method(sv, SPS_METHOD_AUTO) == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(ctx), "sps_solve_strategy"),
         "a solver refuses SPS_METHOD_AUTO, naming sps_solve_strategy (%s)", sps_last_error(ctx));
    sps_solver_set_method(sv, SPS_CG);
}

/* A handful of shared matrices: the strategy converges, honestly. */
static void test_real(sps_solver *sv)
{
    static const char *const names[] = {"nos6", "west0479", "sherman1", "orsirr_1", "fs_541_1"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *path = t_real_matrix_path(names[i]);
        sps_matrix *A = NULL;
        if (!path || sps_matrix_read(ctx, path, &A) != SPS_OK) {
            t_skip("strategy real", "%s not present", names[i]);
            continue;
        }
        sys s;
        if (!sys_make(&s, A)) continue;
        sps_solve_info in;
        if (T_STATUS(ctx, sps_solve_strategy(sv, s.A, s.op, NULL, s.b, s.x, &in), "%s", names[i])) {
            const sps_attempt *w = in.winner >= 0 ? &in.attempts[in.winner] : NULL;
            T_OK(in.reason > 0 && w, "%s: converged with %s+%s in %lld iterations (%d attempts)",
                 names[i], w ? w->method : "-", w ? w->precond : "-", (long long)in.iterations,
                 in.nattempts);
            check_honest(names[i], &s, &in, 1e-8);
            /* the floor is measured after the attempts, and still reported */
            T_OK(in.bytes_per_iter > 0 && in.copy_gbps > 0 && in.floor_per_iter_ms > 0 &&
                     in.floor_fraction > 0,
                 "%s: the winner's floor (%.0f bytes per iteration, %.1f GB/s, %.2fx)", names[i],
                 in.bytes_per_iter, in.copy_gbps, in.floor_fraction);
        }
        sys_free(&s);
    }
}

int main(void)
{
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) {
        T_FAIL("host context", "%s", sps_last_error(NULL));
        return t_done();
    }
    sps_solver *sv = NULL;
    if (T_STATUS(ctx, sps_solver_create(ctx, &sv), "solver")) {
        test_plans();
        test_names(sv);
        test_zero_pivot(sv);
        test_explicit(sv);
        test_not_spd(sv);
        test_budget(sv, t_real_matrix_path("nos6"));
        test_alias(sv);
        test_worse_than_zero(sv, t_real_matrix_path("west0479"));
        test_real(sv);
    }
    sps_solver_destroy(sv);
    sps_context_destroy(ctx);
    return t_done();
}
