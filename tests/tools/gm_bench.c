/* SPDX-License-Identifier: MIT */
/* spsolve/tests/tools/gm_bench.c: GMRES's Gram-Schmidt products on the GPU
 *
 * usage: gm_bench [--reps N] [--edges] [--quick] [--step] [--orth]
 *        gm_bench --cluster-prof [SPEC [M]]
 * For n in {3937, 20000, 1000000} and ncols in {30, 200, 1000, 2000} (--quick:
 * n 3937 and 20000 only), times (CUDA events, 3 warm-up runs, median of N,
 * default 20) h = V'w (op t), w -= V h (op n) and both (pass: one
 * Gram-Schmidt pass, where the second product may find the basis in L2) with
 * the products before issue 9 (old) and the new ones: the default plan (new)
 * and two other plans of V'w (1chunk: one row chunk, one kernel; more: more
 * chunks), and prints us, the effective GB/s (the basis once per product,
 * plus its vectors) and old / new. Every new result must be bitwise the same
 * from its first timed run to its last, and agree with a host loop (the
 * basis entries come from sps__gm_bench_val, the same on both sides) within
 * 1e-12 of the sum of the absolute terms; the pass is checked against the
 * host where n * ncols <= 5e7, the single products on sampled columns or rows
 * above that. Then the edge shapes (n 1, 31, 32, 33, 1023, 1024, 1025 by
 * ncols 1, 2, 31, 33, 2000; --edges: only those): every op and plan, and the
 * second pass's gate (reorth 0: nothing changes; reorth 1: bitwise the
 * ungated result). Exits 0 when every check passed, 1 otherwise, 77 without
 * a GPU.
 *
 * --step: the fused products (issue 9's follow-up) instead: an Arnoldi step
 * but its SpMV (h = V'w, w -= V h, w'w and the check, the second pass when
 * the check asks for it, the scale) on make run's n = 3937 and on 20000 rows,
 * by 30, 200, 1000 and 2000 columns, the kernels one by one (SPS_GM_FUSE=0)
 * against fused; prints the two medians and their ratio. Each w must be
 * bitwise the same from the first timed run to the last, and the fused w
 * bitwise the unfused one (the products' sums are the same; only w'w's
 * rounding differs, which moves the check's decision only at a tie).
 *
 * --orth: the same shapes, a CGS2 step (--step's fused one, the second pass
 * where its check asks for it on this basis) against a DCGS2 step (gm_ops
 * dprod and dcorr: k_dp, k_dc) without its SpMV; prints both medians and
 * their ratio. The DCGS2 step's p_{j+1} must be bitwise the same from the
 * first timed run to the last and within 1e-11 of gmres_host.c's.
 *
 * --cluster-prof [SPEC [M]] (default poisson2d:63 30): where the cluster
 * kernel's Arnoldi steps go (issue 9). GMRES(M) on SPEC (a generator spec or
 * a .mtx file), b = A ones, x0 = 0, no preconditioner, engine onekernel, the
 * cluster as auto picks it: solved once plainly, then twice with the profile
 * on (gmres.h sps_gm_prof: k_gm_cluster<false, B, 1, true>, B = 256 or 512,
 * clock64 at each phase boundary, thread 0 of every block), the last run's
 * records kept, all three one cycle a launch (SPS_GM_ONEK_CYCLES=1: the
 * profiling instantiation restarts through gm_restart between launches);
 * then once as by default (the restarts on the device: its us per
 * iteration, against the steps' median, is what a restart costs there).
 * Checks that both profiled solves give bitwise the plain one's
 * iterations, reason and x, and that every block's marks rise within each
 * step. Prints the clock (block 0's clock64 over %globaltimer, and the
 * nominal one), then per phase: block 0's median and max cycles over the
 * steps, the slowest block's median (the block of the largest median step),
 * the median over steps of the largest block's, block 0's share of its
 * median step and its median in us; a pass's phases: go_products, gc_push,
 * the cluster barrier S1 (the wait alone), gc_gather + __syncthreads,
 * go_subtract + gc_sum, w's publication + w'w's push, S2 (the wait), the
 * finish (sps__gm_column + __syncthreads); the second pass's rows over the
 * steps that took it. Exits 0 when the checks hold, 1 otherwise; without a
 * GPU (or CUDA) prints a SKIP line and exits 0. */
#include "sps_config.h"
#include "spsolve.h"
#include "core/internal.h"
#include "solvers/gmres/gmres.h"
#include "gpu_tool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA

static const char *vname[4] = {"old", "new", "1chunk", "more"};
static const char *oname[5] = {"t", "n", "pass", "step", "dstep"};
static int nfail;

static void fail(const char *fmt, const char *what, double a, double b)
{
    nfail++;
    printf("FAIL ");
    printf(fmt, what, a, b);
    printf("\n");
}

static double xin(int64_t i) { return sps__gm_bench_val((uint64_t)i, 1ull << 40); }
static double hin(int64_t c) { return sps__gm_bench_val((uint64_t)c, 1ull << 41); }

/* h[c] = sum_i V[i, c] x[i] and its scale sum_i |V[i, c] x[i]|. */
static void ref_t(int64_t n, int64_t c, const double *x, double *h, double *scale)
{
    double s = 0.0, a = 0.0;
    for (int64_t i = 0; i < n; i++) {
        const double t = sps__gm_bench_val((uint64_t)i, (uint64_t)c) * x[i];
        s += t;
        a += fabs(t);
    }
    *h = s;
    *scale = a;
}

/* x[i] - sum_c V[i, c] h[c] and its scale. */
static void ref_n(int64_t i, int64_t ncols, double xi, const double *h, double *out, double *scale)
{
    double s = 0.0, a = fabs(xi);
    for (int64_t c = 0; c < ncols; c++) {
        const double t = sps__gm_bench_val((uint64_t)i, (uint64_t)c) * h[c];
        s += t;
        a += fabs(t);
    }
    *out = xi - s;
    *scale = a;
}

/* The entries to check: all, or about 64 spread over len (and the last). */
static int64_t next_idx(int64_t k, int64_t len, int all)
{
    if (all) return k + 1;
    int64_t step = len / 64 > 1 ? len / 64 : 1;
    if (k + step >= len && k != len - 1) return len - 1;
    return k + step;
}

/* Checks one result against the host; returns the worst error / scale. */
static double check(int op, int64_t n, int64_t nc, const double *x, const double *h, const double *out,
                    int all)
{
    double worst = 0.0;
    if (op == 0) {
        for (int64_t c = 0; c < nc; c = next_idx(c, nc, all)) {
            double r, sc;
            ref_t(n, c, x, &r, &sc);
            const double e = fabs(out[c] - r) / (sc > 0 ? sc : 1.0);
            if (!(e <= worst)) worst = e;
        }
        return worst;
    }
    const double *hh = h;
    double *hp = NULL;
    if (op == 2) { /* the pass: h = V'x on the host first */
        hp = malloc((size_t)nc * sizeof *hp);
        if (!hp) return INFINITY;
        for (int64_t c = 0; c < nc; c++) {
            double sc;
            ref_t(n, c, x, &hp[c], &sc);
        }
        hh = hp;
    }
    for (int64_t i = 0; i < n; i = next_idx(i, n, all)) {
        double r, sc;
        ref_n(i, nc, x[i], hh, &r, &sc);
        const double e = fabs(out[i] - r) / (sc > 0 ? sc : 1.0);
        if (!(e <= worst)) worst = e;
    }
    free(hp);
    return worst;
}

static int run(sps_context *ctx, int op, int variant, int gated, int64_t n, int64_t nc, int reps,
               const double *x, const double *h, double *first, double *last, double *us)
{
    sps_gm_bench q = {op, variant, gated, reps > 2 ? 3 : 1, reps, n, nc};
    if (sps__gm_bench_run(ctx, &q, x, h, first, last, us) != SPS_OK) {
        printf("FAIL op %s %s n=%lld ncols=%lld: %s\n", oname[op], vname[variant], (long long)n,
               (long long)nc, sps_last_error(ctx));
        nfail++;
        return 0;
    }
    return 1;
}

static int same(const double *a, const double *b, size_t len) { return memcmp(a, b, len * sizeof *a) == 0; }

static void timed_shape(sps_context *ctx, int64_t n, int64_t nc, int reps)
{
    double *x = malloc((size_t)n * sizeof *x), *h = malloc((size_t)nc * sizeof *h);
    size_t len = (size_t)(n > nc ? n : nc);
    double *first = malloc(len * sizeof *first), *last = malloc(len * sizeof *last);
    if (!x || !h || !first || !last) {
        printf("FAIL no host memory\n");
        nfail++;
        free(x), free(h), free(first), free(last);
        return;
    }
    for (int64_t i = 0; i < n; i++) x[i] = xin(i);
    for (int64_t c = 0; c < nc; c++) h[c] = hin(c);
    const int all = (double)n * (double)nc <= 5e7;
    for (int op = 0; op < 3; op++) {
        double told = 0.0;
        const double basis = (double)n * (double)nc * 8.0 * (op == 2 ? 2.0 : 1.0);
        const double vecs = op == 0 ? (n + nc) * 8.0 : op == 1 ? (2.0 * n + nc) * 8.0 : (3.0 * n + 2.0 * nc) * 8.0;
        for (int v = 0; v < 4; v++) {
            if (v >= 2 && op == 1) continue; /* the V'w plans only */
            double us = 0.0;
            if (!run(ctx, op, v, 0, n, nc, reps, x, h, first, last, &us)) continue;
            const size_t rlen = op == 0 ? (size_t)nc : (size_t)n;
            if (v == 0) told = us;
            char what[160];
            snprintf(what, sizeof what, "op %s %s n=%lld ncols=%lld", oname[op], vname[v], (long long)n,
                     (long long)nc);
            double err = -1.0;
            if (v > 0 || all) {
                if (op < 2 || all) err = check(op, n, nc, x, h, last, op < 2 ? all : 1);
                if (!same(first, last, rlen)) fail("%s: runs differ bitwise (%g %g)", what, 0, 0);
                if (err > 1e-12) fail("%s: error %.2e of the terms' scale (limit %.0e)", what, err, 1e-12);
            }
            char es[32] = "not checked";
            if (err >= 0) snprintf(es, sizeof es, "%.1e", err);
            printf("%-5s %-7s n=%-8lld ncols=%-5lld %10.2f us %8.1f GB/s  old/this %5.2f  err %s%s\n",
                   oname[op], vname[v], (long long)n, (long long)nc, us, (basis + vecs) / (us * 1e3),
                   told / us, es, v > 0 && !same(first, last, rlen) ? "  NOT BITWISE" : "");
        }
    }
    fflush(stdout);
    free(x), free(h), free(first), free(last);
}

static void step_shape(sps_context *ctx, int64_t n, int64_t nc, int reps)
{
    double *x = malloc((size_t)n * sizeof *x), *h = malloc((size_t)nc * sizeof *h);
    double *f[2] = {malloc((size_t)n * sizeof(double)), malloc((size_t)n * sizeof(double))};
    double *l[2] = {malloc((size_t)n * sizeof(double)), malloc((size_t)n * sizeof(double))};
    double us[2] = {0, 0};
    int ok = x && h && f[0] && f[1] && l[0] && l[1];
    for (int64_t i = 0; ok && i < n; i++) x[i] = xin(i);
    for (int64_t c = 0; ok && c < nc; c++) h[c] = hin(c);
    for (int v = 0; v < 2 && ok; v++) ok = run(ctx, 3, v, 0, n, nc, reps, x, h, f[v], l[v], &us[v]);
    if (ok) {
        char what[96];
        snprintf(what, sizeof what, "step n=%lld ncols=%lld", (long long)n, (long long)nc);
        if (!same(f[0], l[0], (size_t)n) || !same(f[1], l[1], (size_t)n))
            fail("%s: runs differ bitwise (%g %g)", what, 0, 0);
        if (!same(l[0], l[1], (size_t)n)) fail("%s: fused w differs from SPS_GM_FUSE=0's (%g %g)", what, 0, 0);
        printf("step  n=%-8lld ncols=%-5lld unfused %9.2f us  fused %9.2f us  unfused/fused %5.2f\n",
               (long long)n, (long long)nc, us[0], us[1], us[0] / us[1]);
    }
    fflush(stdout);
    free(x), free(h), free(f[0]), free(f[1]), free(l[0]), free(l[1]);
}

/* op 4's p_{j+1} on the host: gmres_host.c's dprod and dcorr on the same
 * basis (k_bench_fill's entries, the columns below j scaled) and y = x. */
static double *dstep_host(int64_t n, int64_t nc, const double *x)
{
    const int64_t m = nc, j = nc - 1;
    double *V = malloc((size_t)(n * (m + 1)) * sizeof *V), *H = calloc((size_t)((m + 1) * m), sizeof *H);
    double *sm = calloc((size_t)(4 * (m + 1) + m * (m - 1) / 2 + 2 * (m + 1)), sizeof *sm), *out = NULL;
    if (V && H && sm) {
        const double sc = 1e-3 / sqrt((double)n);
        for (int64_t e = 0; e < n * (m + 1); e++)
            V[e] = sps__gm_bench_val((uint64_t)(e % n), (uint64_t)(e / n)) * (e / n < j ? sc : 1.0);
        sps_kstate ks;
        memset(&ks, 0, sizeof ks);
        ks.maxit = INT64_MAX, ks.tol = -1.0, ks.dtol = 1e300, ks.r0norm = 1.0;
        sps_gm_state gs;
        memset(&gs, 0, sizeof gs);
        gs.m = m, gs.orth = SPS_GM_ORTH_DCGS2;
        sps_kws w;
        memset(&w, 0, sizeof w);
        w.n = (sps_idx)n, w.st = &ks, w.ms = &gs;
        sps_gm_ws g;
        memset(&g, 0, sizeof g);
        g.V = V, g.m = m, g.gm.H = H;
        g.gm.cs = sm, g.gm.sn = sm + m, g.gm.g = sm + 2 * m, g.gm.h2 = sm + 3 * m + 1;
        g.gm.U = sm + 4 * (m + 1), g.gm.d = g.gm.U + m * (m - 1) / 2;
        for (int64_t i = 0; i <= m; i++) g.gm.g[i] = 1.0;
        sps__gm_ops_host.dprod(&w, &g, j, x);
        sps__gm_ops_host.dcorr(&w, &g, j, x);
        out = malloc((size_t)n * sizeof *out);
        if (out) memcpy(out, V + nc * n, (size_t)n * sizeof *out);
    }
    free(V), free(H), free(sm);
    return out;
}

/* --orth: a CGS2 step (op 3, fused; the second pass where the check asks for
 * it on this basis) against a DCGS2 step (op 4), both without the SpMV. The
 * DCGS2 step's p_{j+1} must be bitwise the same from the first timed run to
 * the last and within 1e-11 of the host's (dstep_host). */
static void orth_shape(sps_context *ctx, int64_t n, int64_t nc, int reps)
{
    double *x = malloc((size_t)n * sizeof *x), *h = malloc((size_t)nc * sizeof *h);
    double *f = malloc((size_t)n * sizeof *f), *l = malloc((size_t)n * sizeof *l);
    double us[2] = {0, 0};
    int ok = x && h && f && l;
    for (int64_t i = 0; ok && i < n; i++) x[i] = xin(i);
    for (int64_t c = 0; ok && c < nc; c++) h[c] = hin(c);
    ok = ok && run(ctx, 3, 1, 0, n, nc, reps, x, h, f, l, &us[0]);
    ok = ok && run(ctx, 4, 1, 0, n, nc, reps, x, h, f, l, &us[1]);
    if (ok) {
        char what[96];
        snprintf(what, sizeof what, "dcgs2 step n=%lld ncols=%lld", (long long)n, (long long)nc);
        if (!same(f, l, (size_t)n)) fail("%s: runs differ bitwise (%g %g)", what, 0, 0);
        double *r = dstep_host(n, nc, x), e = 0, sc = 0;
        for (int64_t i = 0; r && i < n; i++) {
            e = fmax(e, fabs(l[i] - r[i]));
            sc = fmax(sc, fabs(r[i]));
        }
        if (!r || !(e <= 1e-11 * sc)) fail("%s: p_{j+1} differs from the host's: %g of %g", what, e, sc);
        free(r);
        printf("orth  n=%-8lld ncols=%-5lld cgs2 step %9.2f us  dcgs2 step %9.2f us  cgs2/dcgs2 %5.2f\n",
               (long long)n, (long long)nc, us[0], us[1], us[0] / us[1]);
    }
    fflush(stdout);
    free(x), free(h), free(f), free(l);
}

static void edge_shape(sps_context *ctx, int64_t n, int64_t nc)
{
    double *x = malloc((size_t)n * sizeof *x), *h = malloc((size_t)nc * sizeof *h);
    size_t len = (size_t)(n > nc ? n : nc);
    double *f = malloc(len * sizeof *f), *l = malloc(len * sizeof *l), *g = malloc(len * sizeof *g);
    if (!x || !h || !f || !l || !g) {
        printf("FAIL no host memory\n");
        nfail++;
        free(x), free(h), free(f), free(l), free(g);
        return;
    }
    for (int64_t i = 0; i < n; i++) x[i] = xin(i);
    for (int64_t c = 0; c < nc; c++) h[c] = hin(c);
    int before = nfail;
    for (int op = 0; op < 3; op++)
        for (int v = 0; v < 4; v++) {
            if (v >= 2 && op == 1) continue;
            double us;
            const size_t rlen = op == 0 ? (size_t)nc : (size_t)n;
            const double *in = op == 0 ? h : x;
            char what[160];
            snprintf(what, sizeof what, "edge op %s %s n=%lld ncols=%lld", oname[op], vname[v], (long long)n,
                     (long long)nc);
            if (!run(ctx, op, v, 0, n, nc, 2, x, h, f, l, &us)) continue;
            const double err = check(op, n, nc, x, h, l, 1);
            if (err > 1e-12) fail("%s: error %.2e of the terms' scale (limit %.0e)", what, err, 1e-12);
            if (!same(f, l, rlen)) fail("%s: runs differ bitwise (%g %g)", what, 0, 0);
            if (v == 0) continue;
            if (run(ctx, op, v, 1, n, nc, 2, x, h, g, g, &us) && !same(g, in, rlen))
                fail("%s: the gate with reorth 0 changed the output (%g %g)", what, 0, 0);
            if (run(ctx, op, v, 2, n, nc, 2, x, h, g, g, &us) && !same(g, l, rlen))
                fail("%s: the gate with reorth 1 differs from the ungated result (%g %g)", what, 0, 0);
        }
    printf("edge  n=%-5lld ncols=%-5lld %s\n", (long long)n, (long long)nc, nfail == before ? "ok" : "FAILED");
    fflush(stdout);
    free(x), free(h), free(f), free(l), free(g);
}

/* ---- --cluster-prof ---------------------------------------------------- */

#define GCP_MAXPH 24
typedef struct gcp_phase {
    char name[40];
    int from, to; /* slots; from -1: the last pass's finish */
    int pass2;    /* only the steps that took the second pass */
    int scale;    /* only the steps that scale (not a cycle's last, not the solve's last) */
} gcp_phase;

static const char *gcp_pass_name[8] = {
    "products (V'w partials)", "push h partials", "S1 wait (cl.sync)", "gather h + sync",
    "subtract + w'w sum", "publish w + push w'w", "S2 wait (cl.sync)", "finish (column + sync)",
};

static int gcp_phases(gcp_phase *ph)
{
    int k = 0;
    ph[k++] = (gcp_phase){"SpMV w = A z", SPS_GCP_START, SPS_GCP_SPMV, 0, 0};
    for (int p = 0; p < 2; p++) {
        const int base = p ? SPS_GCP_PASS2 : SPS_GCP_PASS1;
        for (int q = 0; q < 8; q++) {
            ph[k] = (gcp_phase){"", q ? base + q - 1 : p ? SPS_GCP_PASS1 + 7 : SPS_GCP_SPMV, base + q, p, 0};
            snprintf(ph[k].name, sizeof ph[k].name, "%d %s", p + 1, gcp_pass_name[q]);
            k++;
        }
    }
    ph[k++] = (gcp_phase){"H column write", -1, SPS_GCP_HCOL, 0, 0};
    ph[k++] = (gcp_phase){"scale + sync", SPS_GCP_HCOL, SPS_GCP_END, 0, 1};
    ph[k++] = (gcp_phase){"step total", SPS_GCP_START, SPS_GCP_END, 0, 0};
    return k;
}

/* Block b's marks of step it. */
static const long long *gcp_row(const long long *rec, int64_t it, int b)
{
    return rec + ((size_t)it * SPS_GM_CLUSTER_CMAX + (size_t)b) * SPS_GCP_SLOTS;
}

/* Phase ph of one block's step (last: the solve's last step), -1 where it
 * does not apply. */
static long long gcp_val(const gcp_phase *ph, const long long *r, int m, int last)
{
    const int re = r[SPS_GCP_REORTH] != 0;
    if ((ph->pass2 && !re) || (ph->scale && (last || r[SPS_GCP_J] + 1 >= m))) return -1;
    const int from = ph->from >= 0 ? ph->from : re ? SPS_GCP_PASS2 + 7 : SPS_GCP_PASS1 + 7;
    return r[ph->to] - r[from];
}

static int cmp_ll(const void *a, const void *b)
{
    const long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

static long long gcp_median(long long *v, int n)
{
    if (n < 1) return -1;
    qsort(v, (size_t)n, sizeof *v, cmp_ll);
    return v[(n - 1) / 2];
}

/* Marks that do not rise within a step (any block): 0 when sound. */
static int gcp_disorder(const long long *rec, int64_t steps, int C)
{
    int bad = 0;
    for (int64_t it = 0; it < steps; it++)
        for (int b = 0; b < C; b++) {
            const long long *r = gcp_row(rec, it, b);
            const int last = r[SPS_GCP_REORTH] ? SPS_GCP_PASS2 + 7 : SPS_GCP_PASS1 + 7;
            long long prev = r[SPS_GCP_START];
            for (int s = SPS_GCP_SPMV; s <= SPS_GCP_END; s++) {
                if (s > last && s < SPS_GCP_HCOL) continue;
                if (r[s] < prev) bad++;
                prev = r[s];
            }
            if (r[SPS_GCP_START] == 0 || r[SPS_GCP_GT1] < r[SPS_GCP_GT0]) bad++;
        }
    return bad;
}

/* A phase's numbers over the steps it applies to (k of them): block 0's
 * median and max, block `slow`'s median, the median of the largest block's. */
typedef struct gcp_stat {
    long long b0med, b0max, slmed, mxmed;
    int k;
} gcp_stat;

static gcp_stat gcp_stats(const gcp_phase *ph, const long long *rec, int64_t steps, int C, int m, int slow,
                          long long *v, long long *mx)
{
    gcp_stat a = {-1, -1, -1, -1, 0};
    int ks = 0;
    for (int64_t it = 0; it < steps; it++) {
        const int last = it == steps - 1;
        const long long x = gcp_val(ph, gcp_row(rec, it, 0), m, last);
        if (x < 0) continue;
        long long worst = x;
        for (int b = 1; b < C; b++) {
            const long long y = gcp_val(ph, gcp_row(rec, it, b), m, last);
            if (y > worst) worst = y;
        }
        if (x > a.b0max) a.b0max = x;
        v[a.k] = x;
        mx[a.k++] = worst;
    }
    a.b0med = gcp_median(v, a.k);
    a.mxmed = gcp_median(mx, a.k);
    for (int64_t it = 0; it < steps; it++) {
        const long long y = gcp_val(ph, gcp_row(rec, it, slow), m, it == steps - 1);
        if (y >= 0) v[ks++] = y;
    }
    a.slmed = gcp_median(v, ks);
    return a;
}

/* The block of the largest median step. */
static int gcp_slowest(const gcp_phase *total, const long long *rec, int64_t steps, int C, int m, long long *v)
{
    int slow = 0;
    long long best = -1;
    for (int b = 0; b < C; b++) {
        int k = 0;
        for (int64_t it = 0; it < steps; it++) v[k++] = gcp_val(total, gcp_row(rec, it, b), m, it == steps - 1);
        const long long med = gcp_median(v, k);
        if (med > best) best = med, slow = b;
    }
    return slow;
}

static void gcp_table(const long long *rec, int64_t steps, int C, int m, double ghz)
{
    gcp_phase ph[GCP_MAXPH];
    const int np = gcp_phases(ph);
    long long *v = malloc((size_t)steps * sizeof *v), *mx = malloc((size_t)steps * sizeof *mx);
    if (!v || !mx) {
        printf("FAIL no host memory\n");
        nfail++;
        free(v), free(mx);
        return;
    }
    const int slow = gcp_slowest(&ph[np - 1], rec, steps, C, m, v);
    const gcp_stat tot = gcp_stats(&ph[np - 1], rec, steps, C, m, slow, v, mx);
    char sl[16];
    snprintf(sl, sizeof sl, "b%d med", slow);
    printf("%-28s %9s %9s %9s %9s %6s %8s %6s\n", "phase (cycles)", "b0 med", "b0 max", sl, "maxb med", "%step",
           "us b0", "steps");
    for (int p = 0; p < np; p++) {
        const gcp_stat a = gcp_stats(&ph[p], rec, steps, C, m, slow, v, mx);
        if (a.k == 0) {
            printf("%-28s %9s %9s %9s %9s %6s %8s %6d\n", ph[p].name, "-", "-", "-", "-", "-", "-", 0);
            continue;
        }
        printf("%-28s %9lld %9lld %9lld %9lld %5.1f%% %8.3f %6d\n", ph[p].name, a.b0med, a.b0max, a.slmed, a.mxmed,
               tot.b0med > 0 ? 100.0 * (double)a.b0med / (double)tot.b0med : 0.0,
               ghz > 0 ? (double)a.b0med / (ghz * 1e3) : 0.0, a.k);
    }
    free(v), free(mx);
}

/* Block 0's clock64 cycles over its globaltimer ns, summed over the steps. */
static double gcp_ghz(const long long *rec, int64_t steps)
{
    double cyc = 0, ns = 0;
    for (int64_t it = 0; it < steps; it++) {
        const long long *r = gcp_row(rec, it, 0);
        cyc += (double)(r[SPS_GCP_END] - r[SPS_GCP_START]);
        ns += (double)(r[SPS_GCP_GT1] - r[SPS_GCP_GT0]);
    }
    return ns > 0 ? cyc / ns : 0.0;
}

/* The shape, the clock, the checks on the records, the table. */
static int gcp_report(const char *spec, int m, sps_idx n, const sps_solve_info *i0, const sps_solve_info *i1,
                      const sps_gm_prof *p, const long long *rec)
{
    printf("gm_bench --cluster-prof %s m=%d: n=%lld, engine %s, cluster %d; profiled launches %d (C=%d, B=%d), "
           "other cluster launches %d\n",
           spec, m, (long long)n, i1->engine ? i1->engine : "?", i1->engine_cluster, p->launches, p->C, p->B,
           p->other);
    printf("us/iteration (iterate_ms / iterations), one cycle a launch: plain %.2f, profiled %.2f\n",
           i0->iterations ? 1e3 * i0->iterate_ms / (double)i0->iterations : 0.0,
           i1->iterations ? 1e3 * i1->iterate_ms / (double)i1->iterations : 0.0);
    if (p->launches < 1 || p->C < 1) {
        printf("FAIL the profiling kernel did not run (needs the cluster kernel at B = 256 or 512, no Jacobi)\n");
        return 1;
    }
    /* the rows with marks, packed (steps that ran elsewhere have none) */
    const size_t row = (size_t)SPS_GM_CLUSTER_CMAX * SPS_GCP_SLOTS;
    long long *pk = malloc((size_t)p->cap * row * sizeof *pk);
    if (!pk) {
        printf("FAIL no host memory\n");
        return 1;
    }
    int64_t steps = 0;
    int reorth = 0;
    for (int64_t it = 0; it < p->cap; it++)
        if (gcp_row(rec, it, 0)[SPS_GCP_START] != 0) {
            memcpy(pk + (size_t)steps++ * row, gcp_row(rec, it, 0), row * sizeof *pk);
            reorth += gcp_row(rec, it, 0)[SPS_GCP_REORTH] != 0;
        }
    const int bad = gcp_disorder(pk, steps, p->C);
    if (bad || steps < 1) nfail++;
    const double ghz = gcp_ghz(pk, steps);
    printf("steps profiled %lld of %lld iterations, %d took the second pass; marks out of order: %d%s\n",
           (long long)steps, (long long)i1->iterations, reorth, bad, bad || steps < 1 ? " FAIL" : "");
    printf("clock: %.4f GHz measured (block 0: clock64 over %%globaltimer, summed over the steps), %.4f GHz "
           "nominal (cudaDevAttrClockRate); us = cycles / measured\n",
           ghz, p->clock_khz * 1e-6);
    if (steps > 0) gcp_table(pk, steps, p->C, m, ghz);
    free(pk);
    printf("gm_bench --cluster-prof: %d failure%s\n", nfail, nfail == 1 ? "" : "s");
    return nfail ? 1 : 0;
}

/* One solve from x = 0 into x; *prof: the profile on (records into rec). */
static int gcp_solve(sps_context *ctx, sps_solver *s, sps_operator *op, const double *b, double *x, sps_idx n,
                     sps_solve_info *info, sps_gm_prof *prof, int cap, long long *rec)
{
    memset(x, 0, (size_t)n * sizeof *x);
    if (prof && sps__gm_cluster_prof_begin(ctx, prof, cap) != SPS_OK) return tool_fail("gm_bench", ctx, "profile");
    sps_status st = sps_solve(s, op, NULL, b, x, info);
    sps_status st2 = prof ? sps__gm_cluster_prof_end(ctx, prof, rec) : SPS_OK;
    if (st != SPS_OK) return tool_fail("gm_bench", ctx, "solve");
    if (st2 != SPS_OK) return tool_fail("gm_bench", ctx, "profile read-back");
    return 0;
}

/* The profiled solve against the plain one: bitwise the same? */
static void gcp_same(const char *what, const sps_solve_info *a, const double *xa, const sps_solve_info *b,
                     const double *xb, sps_idx n)
{
    const int ok = a->iterations == b->iterations && a->reason == b->reason && same(xa, xb, (size_t)n);
    printf("check %s: iterations %lld / %lld, reason %d / %d, x (%lld entries) %s: %s\n", what,
           (long long)b->iterations, (long long)a->iterations, (int)b->reason, (int)a->reason, (long long)n,
           same(xa, xb, (size_t)n) ? "bitwise equal" : "DIFFERS", ok ? "ok" : "FAIL");
    if (!ok) nfail++;
}

static int gcp_run(sps_context *ctx, sps_matrix *A, const char *spec, int m)
{
    const sps_idx n = sps_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x0 = malloc((size_t)n * sizeof *x0),
           *x = malloc((size_t)n * sizeof *x);
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    if (!b || !x0 || !x) return free(b), free(x0), free(x), tool_fail("gm_bench", ctx, "no host memory");
    for (sps_idx i = 0; i < n; i++) x[i] = 1.0;
    int rc = sps_matrix_spmv_host(A, 1.0, x, 0.0, b) != SPS_OK ? tool_fail("gm_bench", ctx, "b = A ones") : 0;
    if (!rc && sps_operator_create(ctx, A, "auto", NULL, &op) != SPS_OK) rc = tool_fail("gm_bench", ctx, "operator");
    if (!rc && (sps_solver_create(ctx, &s) != SPS_OK || sps_solver_set_method(s, SPS_GMRES) != SPS_OK ||
                sps_solver_set_restart(s, m) != SPS_OK || sps_solver_set_engine(s, "onekernel") != SPS_OK))
        rc = tool_fail("gm_bench", ctx, "solver");
    sps_solve_info i0, i1, id;
    setenv("SPS_GM_ONEK_CYCLES", "1", 1);
    if (!rc) rc = gcp_solve(ctx, s, op, b, x0, n, &i0, NULL, 0, NULL);
    const int cap = rc ? 0 : (int)i0.iterations + 2;
    long long *rec = cap ? calloc((size_t)cap * SPS_GM_CLUSTER_CMAX * SPS_GCP_SLOTS, sizeof *rec) : NULL;
    sps_gm_prof prof;
    memset(&prof, 0, sizeof prof);
    if (!rc && !rec) rc = tool_fail("gm_bench", ctx, "no host memory");
    for (int r = 0; r < 2 && !rc; r++) {
        rc = gcp_solve(ctx, s, op, b, x, n, &i1, &prof, cap, rec);
        if (!rc) gcp_same(r ? "profiled run 2" : "profiled run 1", &i0, x0, &i1, x, n);
    }
    unsetenv("SPS_GM_ONEK_CYCLES");
    if (!rc) rc = gcp_report(spec, m, n, &i0, &i1, &prof, rec);
    if (!rc && !(rc = gcp_solve(ctx, s, op, b, x, n, &id, NULL, 0, NULL)))
        printf("the default (restarts on the device): %.2f us/iteration, %lld iterations, %lld host syncs\n",
               id.per_iter_ms * 1e3, (long long)id.iterations, (long long)id.host_syncs);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    free(b), free(x0), free(x), free(rec);
    return rc;
}

/* --cluster-prof [SPEC [M]]. */
static int cluster_prof(int argc, char **argv)
{
    const char *spec = argc > 0 ? argv[0] : "poisson2d:63";
    const int m = argc > 1 ? atoi(argv[1]) : 30;
    if (m < 1) {
        fprintf(stderr, "usage: gm_bench --cluster-prof [SPEC [M]]\n");
        return 2;
    }
    sps_context *ctx = NULL;
    sps_matrix *A = NULL;
    int rc = tool_gpu_matrix("gm_bench", spec, &ctx, &A);
    if (rc == 77) {
        printf("SKIP gm_bench --cluster-prof: no GPU (%s)\n", sps_last_error(NULL));
        return 0;
    }
    if (!rc) rc = gcp_run(ctx, A, spec, m);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    return rc;
}

int main(int argc, char **argv)
{
    int reps = 20, edges_only = 0, quick = 0, step = 0, orth = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--cluster-prof") == 0) return cluster_prof(argc - i - 1, argv + i + 1);
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--edges") == 0) edges_only = 1;
        else if (strcmp(argv[i], "--quick") == 0) quick = 1;
        else if (strcmp(argv[i], "--step") == 0) step = 1;
        else if (strcmp(argv[i], "--orth") == 0) orth = 1;
        else {
            fprintf(stderr, "usage: gm_bench [--reps N] [--edges] [--quick] [--step] [--orth]\n"
                            "       gm_bench --cluster-prof [SPEC [M]]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 1000) reps = 20;
    sps_context *ctx = NULL;
    if (sps_context_create(&ctx, 0) != SPS_OK) {
        fprintf(stderr, "gm_bench: no GPU: %s\n", sps_last_error(NULL));
        return 77;
    }
    static const int64_t ns[3] = {3937, 20000, 1000000}, ncs[4] = {30, 200, 1000, 2000};
    static const int64_t en[7] = {1, 31, 32, 33, 1023, 1024, 1025}, ec[5] = {1, 2, 31, 33, 2000};
    if (step || orth) {
        static const int64_t sn[2] = {3937, 20000}, sc[4] = {30, 200, 1000, 2000};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 4; b++)
                if (orth) orth_shape(ctx, sn[a], sc[b], reps);
                else step_shape(ctx, sn[a], sc[b], reps);
        sps_context_destroy(ctx);
        printf("gm_bench: %d failure%s\n", nfail, nfail == 1 ? "" : "s");
        return nfail ? 1 : 0;
    }
    if (!edges_only) {
        printf("op    variant shape                           median         effective   speedup\n");
        for (int a = 0; a < (quick ? 2 : 3); a++)
            for (int b = 0; b < 4; b++) timed_shape(ctx, ns[a], ncs[b], reps);
    }
    for (int a = 0; a < 7; a++)
        for (int b = 0; b < 5; b++) edge_shape(ctx, en[a], ec[b]);
    sps_context_destroy(ctx);
    printf("gm_bench: %d failure%s\n", nfail, nfail == 1 ? "" : "s");
    return nfail ? 1 : 0;
}

#else

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--cluster-prof") == 0) {
            printf("SKIP gm_bench --cluster-prof: built without CUDA\n");
            return 0;
        }
    fprintf(stderr, "gm_bench: built without CUDA\n");
    return 77;
}

#endif
