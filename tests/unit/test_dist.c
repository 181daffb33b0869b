/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_dist.c: the distributed layer on the host, with the
 * thread transport (one thread and one host context per rank):
 *   - the partition: starts on 256-row block boundaries, balanced, empty
 *     ranks when there are more ranks than blocks;
 *   - the halo plan: for random rank counts (1..7) and random split points of
 *     generated matrices (empty rows, one very long row, n = 31/32/33 and
 *     1023/1024/1025) and of the real matrices, the distributed product is
 *     bitwise the serial CSR product;
 *   - distributed CG and BiCGSTAB (none, Jacobi): 1..4 ranks give the same iterations and
 *     bitwise the same x; two runs are bitwise equal; the single-process host
 *     solve converges in about the same iterations;
 *   - errors: misaligned starts, a bad column on one rank (every rank fails,
 *     none waits), an undistributed method. */
#include "check.h"
#include "dist/dist_impl.h"
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXP = 8 };

typedef struct job {
    int P;
    sps_dist_group *g;
    const sps_matrix *A;
    const sps_idx *starts; /* NULL: sps_dist_operator_from_matrix */
    int solve;             /* 0: y = A x; 1: CG */
    const char *pc;
    sps_method method;
    const double *x, *b;   /* global */
    double *y;             /* global: each rank writes its rows (product) or rank 0 gathers (solve) */
    sps_solve_info info[MAXP];
    sps_status st[MAXP];
    char msg[MAXP][256];
} job;

typedef struct arg {
    job *j;
    int rank;
} arg;

static sps_status rank_op(job *j, sps_dist *d, int r, sps_dist_operator **op)
{
    if (!j->starts) return sps_dist_operator_from_matrix(d, j->A, op);
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(j->A, &rp, &ci, &v);
    sps_idx lo = j->starts[r], nl = j->starts[r + 1] - lo, base = rp[lo];
    sps_idx *lrp = malloc(((size_t)nl + 1) * sizeof *lrp);
    for (sps_idx i = 0; i <= nl; i++) lrp[i] = rp[lo + i] - base;
    sps_status st = sps_dist_operator_create(d, sps_matrix_rows(j->A), j->starts, lrp, ci + base, v + base, op);
    free(lrp);
    return st;
}

static sps_status rank_work(job *j, sps_dist_operator *op, int r)
{
    sps_idx lo, nl = sps_dist_operator_rows(op, &lo);
    if (!j->solve) return sps_dist_operator_apply(op, j->x + lo, j->y + lo);
    sps_dist_solve_opts o;
    sps_dist_solve_opts_default(&o);
    o.precond = j->pc;
    o.method = j->method;
    double *x = calloc((size_t)nl + 1, sizeof *x);
    sps_status st = sps_dist_solve(op, &o, j->b + lo, x, &j->info[r]);
    if (st == SPS_OK) st = sps_dist_gather(op, x, r == 0 ? j->y : NULL);
    free(x);
    return st;
}

static void *rank_main(void *p)
{
    arg *a = p;
    job *j = a->j;
    int r = a->rank;
    sps_context *ctx = NULL;
    sps_dist *d = NULL;
    sps_dist_operator *op = NULL;
    sps_dist_spec sp = {SPS_DIST_THREADS, r, j->P, j->g, NULL, NULL};
    sps_status st = sps_context_create(&ctx, SPS_DEVICE_HOST);
    if (st == SPS_OK) st = sps_dist_create(ctx, &sp, &d);
    if (st == SPS_OK) st = rank_op(j, d, r, &op);
    if (st == SPS_OK) st = rank_work(j, op, r);
    j->st[r] = st;
    snprintf(j->msg[r], sizeof j->msg[r], "%s", st == SPS_OK ? "" : sps_last_error(ctx));
    sps_dist_operator_destroy(op);
    sps_dist_destroy(d);
    sps_context_destroy(ctx);
    return NULL;
}

/* Every rank of j in its own thread; 1 if all returned SPS_OK. */
static int run_ranks(job *j)
{
    pthread_t t[MAXP];
    arg a[MAXP];
    if (sps_dist_group_create(j->P, &j->g) != SPS_OK) return 0;
    for (int r = 0; r < j->P; r++) {
        a[r].j = j;
        a[r].rank = r;
        pthread_create(&t[r], NULL, rank_main, &a[r]);
    }
    int ok = 1;
    for (int r = 0; r < j->P; r++) {
        pthread_join(t[r], NULL);
        if (j->st[r] != SPS_OK) ok = 0;
    }
    sps_dist_group_destroy(j->g);
    return ok;
}

/* ---- partition ---------------------------------------------------------------- */

static void check_partition(const sps_matrix *A, int P, const char *name)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = sps_matrix_rows(A), s[MAXP + 1];
    if (!T_STATUS(NULL, sps_dist_partition(n, rp, P, s), "partition %s P=%d", name, P)) return;
    int ok = s[0] == 0 && s[P] == n;
    int64_t total = rp[n] + n, most = 0, blkmax = 0;
    for (int q = 0; q < P; q++) {
        ok = ok && s[q + 1] >= s[q] && (s[q] % sps_dist_block(n) == 0 || s[q] == n);
        int64_t w = (int64_t)rp[s[q + 1]] - rp[s[q]] + (s[q + 1] - s[q]);
        if (w > most) most = w;
    }
    for (sps_idx b = 0, B = sps_dist_block(n); b < n; b += B) {
        sps_idx e = n - b > B ? b + B : n;
        int64_t w = (int64_t)rp[e] - rp[b] + (e - b);
        if (w > blkmax) blkmax = w;
    }
    T_OK(ok, "partition %s P=%d: starts from 0 to n on block boundaries", name, P);
    T_OK(most <= total / P + 2 * blkmax, "partition %s P=%d: heaviest rank %lld <= %lld/P + 2 x block %lld", name, P,
         (long long)most, (long long)total, (long long)blkmax);
}

static void test_partition(void)
{
    const char *specs[] = {"poisson2d:100", "poisson3d:20", "powerlaw:5000,6,7", "banded:3000,9,0.1,2"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(NULL, sps_matrix_generate(NULL, specs[k], &A), "generate %s", specs[k])) continue;
        for (int P = 1; P <= 7; P++) check_partition(A, P, specs[k]);
        sps_matrix_destroy(A);
    }
    T_OK(sps_dist_block(0) == 256 && sps_dist_block(3600) == 256 && sps_dist_block(131071) == 256 &&
             sps_dist_block(131072) == 512 && sps_dist_block(175616) == 512 && sps_dist_block(27000000) == 65536 &&
             sps_dist_block(2000000000) == 65536,
         "reduction block: 256 rows, doubled while 256 blocks remain, at most 65536");
    /* more ranks than blocks: the extra ranks are empty */
    sps_matrix *A = NULL;
    if (T_STATUS(NULL, sps_matrix_generate(NULL, "poisson2d:20", &A), "generate poisson2d:20")) {
        const sps_idx *rp, *ci;
        const double *v;
        sps_matrix_csr(A, &rp, &ci, &v);
        sps_idx s[8];
        sps_dist_partition(400, rp, 7, s);
        int empty = 0;
        for (int q = 0; q < 7; q++) empty += s[q + 1] == s[q];
        T_OK(empty == 5 && s[7] == 400, "partition of 400 rows (2 blocks) on 7 ranks: %d empty ranks (5)", empty);
        sps_matrix_destroy(A);
    }
}

/* ---- halo plan against the serial product --------------------------------------- */

static uint64_t seed = 0x9e3779b97f4a7c15u;

static void random_starts(sps_idx n, int P, sps_idx *s)
{
    s[0] = 0;
    s[P] = n;
    for (int q = 1; q < P; q++) s[q] = (sps_idx)(t_xorshift(&seed) % ((uint64_t)n + 1));
    for (int q = 1; q < P; q++) /* insertion sort */
        for (int k = q; k > 1 && s[k] < s[k - 1]; k--) {
            sps_idx t = s[k];
            s[k] = s[k - 1];
            s[k - 1] = t;
        }
}

/* One random partition (or the balanced one) against sps__csr_spmv, bitwise. */
static void check_product(const sps_matrix *A, const char *name, int P, int balanced)
{
    sps_idx n = sps_matrix_rows(A), s[MAXP + 1];
    double *x = malloc(((size_t)n + 1) * sizeof *x), *y = malloc(((size_t)n + 1) * sizeof *y);
    double *ref = malloc(((size_t)n + 1) * sizeof *ref);
    for (sps_idx i = 0; i < n; i++) x[i] = t_rand(&seed);
    for (sps_idx i = 0; i < n; i++) y[i] = NAN;
    sps__csr_spmv(&A->A, 1.0, x, 0.0, ref);
    random_starts(n, P, s);
    job j;
    memset(&j, 0, sizeof j);
    j.P = P;
    j.A = A;
    j.starts = balanced ? NULL : s;
    j.x = x;
    j.y = y;
    int ok = run_ranks(&j);
    if (!ok) {
        for (int r = 0; r < P; r++)
            if (j.st[r] != SPS_OK) T_FAIL("halo product", "%s P=%d rank %d: %s", name, P, r, j.msg[r]);
    } else {
        sps_idx bad = -1;
        for (sps_idx i = 0; i < n && bad < 0; i++)
            if (memcmp(&y[i], &ref[i], sizeof(double)) != 0) bad = i;
        char sp[128] = "";
        for (int q = 0; q <= P && !balanced; q++)
            snprintf(sp + strlen(sp), sizeof sp - strlen(sp), " %d", (int)s[q]);
        if (bad >= 0) T_FAIL("halo product", "%s P=%d starts%s: row %d: %.17g, serial %.17g", name, P, sp, (int)bad, y[bad], ref[bad]);
        else T_OK(1, "halo product %s P=%d%s: bitwise the serial SpMV", name, P, balanced ? " balanced" : "");
    }
    free(x);
    free(y);
    free(ref);
}

/* n rows, a few random entries per row, every 7th row empty, row n/2 full. */
static sps_matrix *edge_matrix(sps_idx n)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        if (i % 7 == 3) continue;
        if (i == n / 2) {
            for (sps_idx c = 0; c < n; c++) t_trip_add(&t, i, c, 1.0 + t_rand(&seed));
            continue;
        }
        t_trip_add(&t, i, i, 4.0);
        for (int k = 0; k < 3; k++) t_trip_add(&t, i, (sps_idx)(t_xorshift(&seed) % (uint64_t)n), t_rand(&seed));
    }
    return t_trip_matrix(NULL, n, n, &t);
}

static void test_halo_generated(void)
{
    const sps_idx ns[] = {1, 31, 32, 33, 1023, 1024, 1025};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++) {
        sps_matrix *A = edge_matrix(ns[k]);
        if (!A) continue;
        char name[64];
        snprintf(name, sizeof name, "edge n=%d", (int)ns[k]);
        for (int trial = 0; trial < 4; trial++) check_product(A, name, 1 + (int)(t_xorshift(&seed) % 7), 0);
        check_product(A, name, 7, 0);
        check_product(A, name, 7, 1);
        sps_matrix_destroy(A);
    }
    const char *specs[] = {"poisson3d:12", "powerlaw:3000,8,5", "convdiff2d:40,10"};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; k++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(NULL, sps_matrix_generate(NULL, specs[k], &A), "generate %s", specs[k])) continue;
        for (int trial = 0; trial < 3; trial++) check_product(A, specs[k], 1 + (int)(t_xorshift(&seed) % 7), 0);
        check_product(A, specs[k], 4, 1);
        sps_matrix_destroy(A);
    }
}

static void real_product(sps_context *ctx, const sps_matrix *A, const char *name)
{
    (void)ctx;
    if (sps_matrix_rows(A) != sps_matrix_cols(A)) return;
    check_product(A, name, 1 + (int)(t_xorshift(&seed) % 7), 0);
    check_product(A, name, 1 + (int)(t_xorshift(&seed) % 7), 1);
}

static void test_halo_real(void) { t_each_real(NULL, NULL, "halo product on the real matrices", real_product); }

/* ---- distributed CG ------------------------------------------------------------------ */

static sps_method g_method = SPS_CG;

static int solve_ranks(const sps_matrix *A, int P, const char *pc, const double *b, double *x, sps_solve_info *info)
{
    job j;
    memset(&j, 0, sizeof j);
    j.P = P;
    j.A = A;
    j.solve = 1;
    j.pc = pc;
    j.method = g_method;
    j.b = b;
    j.y = x;
    int ok = run_ranks(&j);
    for (int r = 0; r < P; r++)
        if (j.st[r] != SPS_OK) T_FAIL("dist solve", "P=%d rank %d: %s", P, r, j.msg[r]);
    int same = 1;
    for (int r = 1; r < P; r++)
        same = same && j.info[r].iterations == j.info[0].iterations && j.info[r].reason == j.info[0].reason &&
               memcmp(&j.info[r].rnorm, &j.info[0].rnorm, sizeof(double)) == 0;
    T_OK(!ok || same, "dist solve P=%d %s: every rank reports the same outcome", P, pc);
    *info = j.info[0];
    return ok;
}

static int64_t host_iterations(const sps_matrix *A, const char *pc, const double *b)
{
    sps_context *ctx = NULL;
    sps_operator *op = NULL;
    sps_precond *p = NULL;
    sps_solver *s = NULL;
    sps_solve_info info;
    sps_idx n = sps_matrix_rows(A);
    double *x = calloc((size_t)n, sizeof *x);
    int64_t it = -1;
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) == SPS_OK && sps_operator_create(ctx, A, "csr-scalar", NULL, &op) == SPS_OK &&
        sps_precond_create(ctx, A, pc, &p) == SPS_OK && sps_solver_create(ctx, &s) == SPS_OK &&
        sps_solver_set_method(s, g_method) == SPS_OK &&
        sps_solve(s, op, p, b, x, &info) == SPS_OK && info.reason > 0)
        it = info.iterations;
    sps_solver_destroy(s);
    sps_precond_destroy(p);
    sps_operator_destroy(op);
    sps_context_destroy(ctx);
    free(x);
    return it;
}

static void solve_case(const char *spec, const char *pc)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(NULL, sps_matrix_generate(NULL, spec, &A), "generate %s", spec)) return;
    sps_idx n = sps_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x1 = malloc((size_t)n * sizeof *x1), *xp = malloc((size_t)n * sizeof *xp);
    for (sps_idx i = 0; i < n; i++) b[i] = t_rand(&seed);
    sps_solve_info i1, ip;
    if (solve_ranks(A, 1, pc, b, x1, &i1)) {
        T_OK(i1.reason > 0 && i1.true_rel_rnorm <= 1e-8, "dist %s %s %s 1 rank: converged (%s) in %lld, true rel %.2e", sps_method_name(g_method), spec, pc,
             sps_reason_str(i1.reason), (long long)i1.iterations, i1.true_rel_rnorm);
        int64_t hit = host_iterations(A, pc, b);
        T_OK(hit > 0 && llabs(hit - i1.iterations) <= 2 + hit / 50,
             "dist %s %s %s: %lld iterations, the single-process host solve %lld (within 2%% + 2)", sps_method_name(g_method), spec, pc,
             (long long)i1.iterations, (long long)hit);
        for (int P = 2; P <= 4; P++) {
            if (!solve_ranks(A, P, pc, b, xp, &ip)) continue;
            T_OK(ip.iterations == i1.iterations && memcmp(x1, xp, (size_t)n * sizeof *x1) == 0,
                 "dist %s %s %s: %d ranks, %lld iterations and x bitwise those of 1 rank (%lld)", sps_method_name(g_method), spec, pc, P,
                 (long long)ip.iterations, (long long)i1.iterations);
        }
        if (solve_ranks(A, 3, pc, b, xp, &ip))
            T_OK(memcmp(x1, xp, (size_t)n * sizeof *x1) == 0, "dist %s %s %s: a second 3-rank run bitwise equal", sps_method_name(g_method), spec, pc);
    }
    free(b);
    free(x1);
    free(xp);
    sps_matrix_destroy(A);
}

static void test_solve(void)
{
    solve_case("poisson2d:60", "none");
    solve_case("poisson2d:60", "jacobi");
    solve_case("poisson3d:14", "jacobi");
    solve_case("poisson3d:56", "jacobi"); /* 512-row reduction blocks */
    g_method = SPS_BICGSTAB;
    solve_case("convdiff2d:40,10", "none");
    solve_case("convdiff2d:40,10", "jacobi");
    solve_case("poisson3d:14", "jacobi");
    g_method = SPS_CG;
}

/* ---- errors ---------------------------------------------------------------------------- */

static void test_errors(void)
{
    sps_matrix *A = NULL;
    if (!T_STATUS(NULL, sps_matrix_generate(NULL, "poisson2d:30", &A), "generate poisson2d:30")) return;
    sps_idx s[3] = {0, 450, 900};
    double *b = calloc(900, sizeof *b), *y = calloc(900, sizeof *y);
    b[3] = 1;
    job j;
    memset(&j, 0, sizeof j);
    j.P = 2;
    j.A = A;
    j.starts = s;
    j.solve = 1;
    j.method = SPS_CG;
    j.b = b;
    j.y = y;
    run_ranks(&j);
    T_OK(j.st[0] == SPS_ERR_INVALID_ARG && j.st[1] == SPS_ERR_INVALID_ARG && strstr(j.msg[0], "multiples of 256"),
         "dist solve with row starts off the blocks: refused on every rank (%s)", j.msg[0]);
    memset(&j, 0, sizeof j);
    j.P = 3;
    j.A = A;
    j.solve = 1;
    j.method = SPS_GMRES;
    j.b = b;
    j.y = y;
    run_ranks(&j);
    T_OK(j.st[0] == SPS_ERR_UNSUPPORTED && strstr(j.msg[0], "gmres") != NULL, "dist gmres: unsupported, said so (%s)", j.msg[0]);
    sps_matrix_destroy(A);
    free(b);
    free(y);
}

/* A column out of range on rank 1 only: every rank fails, no rank waits. */
typedef struct bad_arg {
    sps_dist_group *g;
    int rank;
    sps_status st;
} bad_arg;

static void *bad_main(void *p)
{
    bad_arg *a = p;
    sps_context *ctx = NULL;
    sps_dist *d = NULL;
    sps_dist_operator *op = NULL;
    sps_dist_spec sp = {SPS_DIST_THREADS, a->rank, 2, a->g, NULL, NULL};
    sps_idx starts[3] = {0, 2, 4}, rp[3] = {0, 1, 2}, ci[2] = {a->rank * 2, a->rank == 1 ? 9 : 1};
    double v[2] = {1, 2};
    a->st = sps_context_create(&ctx, SPS_DEVICE_HOST);
    if (a->st == SPS_OK) a->st = sps_dist_create(ctx, &sp, &d);
    if (a->st == SPS_OK) a->st = sps_dist_operator_create(d, 4, starts, rp, ci, v, &op);
    sps_dist_operator_destroy(op);
    sps_dist_destroy(d);
    sps_context_destroy(ctx);
    return NULL;
}

static void test_bad_column(void)
{
    sps_dist_group *g = NULL;
    if (!T_STATUS(NULL, sps_dist_group_create(2, &g), "group")) return;
    pthread_t t[2];
    bad_arg a[2] = {{g, 0, SPS_OK}, {g, 1, SPS_OK}};
    for (int r = 0; r < 2; r++) pthread_create(&t[r], NULL, bad_main, &a[r]);
    for (int r = 0; r < 2; r++) pthread_join(t[r], NULL);
    sps_dist_group_destroy(g);
    T_OK(a[0].st == SPS_ERR_INVALID_ARG && a[1].st == SPS_ERR_INVALID_ARG,
         "a column out of range on rank 1: both ranks fail (%d, %d)", (int)a[0].st, (int)a[1].st);
}

int main(void)
{
    test_partition();
    test_halo_generated();
    test_halo_real();
    test_solve();
    test_errors();
    test_bad_column();
    return t_done();
}
