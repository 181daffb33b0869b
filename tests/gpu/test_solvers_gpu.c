/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_solvers_gpu.c: the solvers on the GPU.
 *
 * 1. Every CUDA vector operation against its host reference (vops_host.c) on
 *    the same inputs, gated and not, for sizes that exercise one block, many
 *    blocks and the grid-stride loop; GMRES's finish with more rotations than
 *    one shared-memory chunk.
 * 2. Each method with each GPU SpMV backend against the host driver: same
 *    reason, iterations within 5%, same solution; two runs bitwise equal;
 *    host and device pointers for b and x give bitwise the same x.
 * 3. Host synchronizations per iteration below 0.25 for CG and BiCGSTAB on a
 *    2-D Laplacian of 65536 rows; the monitor runs at each host check.
 * Without a device (or without CUDA) it prints one SKIP line. */
#include "check.h"
#include "internal.h"
#include "core/gpu.h"
#include "precond/precond.h"
#include "solvers/vops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA

static sps_context *gctx, *hctx;

static double *hvec(size_t n) { return calloc(n ? n : 1, sizeof(double)); }

static double *rnd(size_t n, uint64_t seed)
{
    double *x = hvec(n);
    for (size_t i = 0; i < n; i++) x[i] = t_rand(&seed);
    return x;
}

static double *dvec(size_t n)
{
    void *p = NULL;
    if (sps__dmalloc(gctx, &p, (n ? n : 1) * sizeof(double)) != SPS_OK)
        T_FAIL("device allocation", "%s", sps_last_error(gctx));
    return p;
}

static double *up(const double *h, size_t n)
{
    double *d = dvec(n);
    sps__h2d(gctx, d, h, n * sizeof(double));
    return d;
}

/* max |a - d| / max(max |a|, floor) over n entries of a host array and a
 * device array (normwise: entries that cancel to near zero do not count more
 * than the rest; lo keeps an all-zero a from dividing by 0). NaN gives NaN. */
static double maxdiff(const double *a, const double *dev, size_t n, double lo)
{
    double *d = hvec(n), m = 0, amax = lo;
    sps__d2h(gctx, d, dev, n * sizeof(double));
    for (size_t i = 0; i < n; i++) {
        double e = fabs(a[i] - d[i]);
        if (!(e <= m)) m = e;
        if (fabs(a[i]) > amax) amax = fabs(a[i]);
    }
    free(d);
    return m / amax;
}

/* ---- 1. vops: CUDA against host ------------------------------------------ */

/* One workspace in each memory space, with the same contents. */
typedef struct pair {
    sps_kws h, d;
    sps_kstate hst;
    size_t n, m;
} pair;

static void pair_init(pair *p, size_t n, int m)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->m = (size_t)m;
    size_t ld = (size_t)m + 1;
    sps_kws *w[2] = {&p->h, &p->d};
    for (int k = 0; k < 2; k++) {
        sps_kws *x = w[k];
        int dev = k == 1;
        x->ctx = dev ? gctx : hctx;
        x->ops = dev ? &sps__vops_cuda : &sps__vops_host;
        x->n = (sps_idx)n;
        x->grid = sps__vops_cuda_grid((sps_idx)n);
        x->m = m;
        double *V = rnd(n * ld, 77), *H = rnd(ld * (size_t)m, 78), *cs = rnd((size_t)m, 79);
        double *sn = rnd((size_t)m, 80), *g = rnd(ld, 81), *h2 = rnd(ld, 82);
        double *hist = hvec(64);
        if (dev) {
            x->st = (sps_kstate *)(void *)dvec((sizeof(sps_kstate) + 7) / 8);
            x->part = dvec(2 * (size_t)x->grid);
            x->hist = up(hist, 64);
            x->V = up(V, n * ld);
            x->gm.H = up(H, ld * (size_t)m);
            x->gm.cs = up(cs, (size_t)m);
            x->gm.sn = up(sn, (size_t)m);
            x->gm.g = up(g, ld);
            x->gm.h2 = up(h2, ld);
            x->gm.y = dvec((size_t)m);
            free(V), free(H), free(cs), free(sn), free(g), free(h2), free(hist);
        } else {
            x->st = &p->hst;
            x->hist = hist;
            x->V = V;
            x->gm = (sps_kgm){H, cs, sn, g, hvec((size_t)m), h2};
        }
    }
}

static void pair_free(pair *p)
{
    free(p->h.hist), free(p->h.V), free(p->h.gm.H), free(p->h.gm.cs), free(p->h.gm.sn);
    free(p->h.gm.g), free(p->h.gm.y), free(p->h.gm.h2);
    sps__dfree(p->d.st), sps__dfree(p->d.part), sps__dfree(p->d.hist), sps__dfree(p->d.V);
    sps__dfree(p->d.gm.H), sps__dfree(p->d.gm.cs), sps__dfree(p->d.gm.sn), sps__dfree(p->d.gm.g);
    sps__dfree(p->d.gm.y), sps__dfree(p->d.gm.h2);
}

/* The same state on both sides. */
static void set_state(pair *p, const sps_kstate *s)
{
    p->hst = *s;
    sps__vops_cuda.put_state(&p->d, s);
}

static void cmp_state(const pair *p, const char *what)
{
    sps_kstate d;
    sps__vops_cuda.get_state((sps_kws *)&p->d, &d);
    const sps_kstate *h = &p->hst;
    int same = d.stop == h->stop && d.reason == h->reason && d.iter == h->iter &&
               d.half == h->half && d.kdim == h->kdim && d.cycle == h->cycle;
    double dv[] = {d.rnorm, d.rho, d.alpha, d.beta, d.omega, d.bnorm, d.r0norm, d.tol, d.hn};
    double hv[] = {h->rnorm, h->rho, h->alpha, h->beta, h->omega, h->bnorm, h->r0norm, h->tol, h->hn};
    double worst = 0;
    for (int i = 0; i < 9; i++) {
        double e = fabs(dv[i] - hv[i]) / (fabs(hv[i]) + 1e-300);
        if (!(e <= worst)) worst = e;
    }
    T_OK(same && worst <= 1e-11, "%s: device state = host state (stop %lld/%lld, reason %lld/%lld, "
         "iter %lld/%lld, scalars within %.1e)", what, (long long)d.stop, (long long)h->stop,
         (long long)d.reason, (long long)h->reason, (long long)d.iter, (long long)h->iter, worst);
}

/* Vectors k of both sides: host copies hv[k], device copies dv[k]. */
#define NV 9
typedef struct vecs {
    double *h[NV], *d[NV];
} vecs;

static void vecs_init(vecs *v, size_t n, uint64_t seed)
{
    for (int k = 0; k < NV; k++) {
        v->h[k] = rnd(n, seed + (uint64_t)k);
        if (k == 8) /* a positive inverse diagonal */
            for (size_t i = 0; i < n; i++) v->h[k][i] = 0.5 + 0.25 * v->h[k][i];
        v->d[k] = up(v->h[k], n);
    }
}

static void vecs_free(vecs *v)
{
    for (int k = 0; k < NV; k++) free(v->h[k]), sps__dfree(v->d[k]);
}

static void cmp_vecs(const vecs *v, size_t n, const char *what, int first, int last)
{
    double worst = 0;
    for (int k = first; k <= last; k++) {
        double e = maxdiff(v->h[k], v->d[k], n, 1e-12);
        if (!(e <= worst)) worst = e;
    }
    T_OK(worst <= 1e-12, "%s: device vectors = host vectors (max rel diff %.1e)", what, worst);
}

static void test_vops_size(size_t n)
{
    pair p;
    /* m = 700: more rotations than one shared-memory chunk (512) */
    pair_init(&p, n, n >= 1000 && n < 100000 ? 700 : 40);
    int m;
    m = (int)p.m;
    const sps_vops *H = &sps__vops_host, *D = &sps__vops_cuda;
    sps_kws *h = &p.h, *d = &p.d;
    char what[128];
    sps_kstate s0;
    memset(&s0, 0, sizeof s0);
    s0.maxit = 50;
    s0.rtol = 1e-8;
    s0.dtol = 1e5;
    s0.tol = 1e-30;
    s0.r0norm = s0.rnorm = s0.stag_ref = 1.0;
    s0.rho = 0.7, s0.alpha = 0.3, s0.beta = 0.2, s0.omega = 0.9, s0.has_pc = 1, s0.m = m;
    s0.stag_win = 2;
    vecs v;
    /* vector index use: 0 x, 1 r, 2 p, 3 q/v, 4 z/phat, 5 s, 6 shat, 7 t, 8 dinv */
    for (int gated = 0; gated < 2; gated++) {
        const char *g = gated ? " (stopped: must not move)" : "";
        sps_kstate s = s0;
        s.stop = gated;
        s.reason = gated ? SPS_DIVERGED_MAXIT : 0;

        vecs_init(&v, n, 100);
        set_state(&p, &s);
        H->cg_update(h, v.h[0], v.h[1], v.h[2], v.h[3], v.h[8], v.h[4], SPS_CG_FUSED);
        D->cg_update(d, v.d[0], v.d[1], v.d[2], v.d[3], v.d[8], v.d[4], SPS_CG_FUSED);
        snprintf(what, sizeof what, "n=%zu cg_update (Jacobi fused)%s", n, g);
        cmp_vecs(&v, n, what, 0, 8);
        cmp_state(&p, what);
        H->cg_update(h, v.h[0], v.h[1], v.h[2], v.h[3], NULL, NULL, SPS_CG_PLAIN);
        D->cg_update(d, v.d[0], v.d[1], v.d[2], v.d[3], NULL, NULL, SPS_CG_PLAIN);
        H->cg_direction(h, v.h[2], v.h[4]);
        D->cg_direction(d, v.d[2], v.d[4]);
        snprintf(what, sizeof what, "n=%zu cg_update, cg_direction%s", n, g);
        cmp_vecs(&v, n, what, 0, 8);
        cmp_state(&p, what);
        vecs_free(&v);

        vecs_init(&v, n, 200);
        set_state(&p, &s);
        H->bicg_p(h, v.h[2], v.h[1], v.h[3], v.h[8], v.h[4]);
        D->bicg_p(d, v.d[2], v.d[1], v.d[3], v.d[8], v.d[4]);
        H->bicg_s(h, v.h[5], v.h[1], v.h[3], v.h[8], v.h[6]);
        D->bicg_s(d, v.d[5], v.d[1], v.d[3], v.d[8], v.d[6]);
        H->bicg_x(h, 1, v.h[0], v.h[1], v.h[4], v.h[6], v.h[5], v.h[7], v.h[2]);
        D->bicg_x(d, 1, v.d[0], v.d[1], v.d[4], v.d[6], v.d[5], v.d[7], v.d[2]);
        H->bicg_p(h, v.h[2], v.h[1], v.h[3], NULL, NULL);
        D->bicg_p(d, v.d[2], v.d[1], v.d[3], NULL, NULL);
        snprintf(what, sizeof what, "n=%zu bicg_p, bicg_s, bicg_x%s", n, g);
        cmp_vecs(&v, n, what, 0, 8);
        cmp_state(&p, what);
        vecs_free(&v);

        /* GMRES: CGS2 on the basis, the Arnoldi finish, the scale */
        int64_t j = m - 2;
        vecs_init(&v, n, 300);
        set_state(&p, &s);
        double *hh = hvec(p.m + 1), *hd = dvec(p.m + 1);
        H->gemv_t(h, j + 1, v.h[1], hh);
        D->gemv_t(d, j + 1, v.d[1], hd);
        snprintf(what, sizeof what, "n=%zu gemv_t over %lld columns", n, (long long)j + 1);
        T_OK(maxdiff(hh, hd, (size_t)j + 1, 1e-10) <= 1e-11, "%s", what);
        H->gemv_n(h, j + 1, hh, v.h[1]);
        D->gemv_n(d, j + 1, hd, v.d[1]);
        snprintf(what, sizeof what, "n=%zu gemv_n", n);
        cmp_vecs(&v, n, what, 1, 1);
        free(hh);
        sps__dfree(hd);
        H->dot(h, v.h[1], v.h[1], NULL, NULL, SPS_FIN_GM_ARNOLDI, j);
        D->dot(d, v.d[1], v.d[1], NULL, NULL, SPS_FIN_GM_ARNOLDI, j);
        snprintf(what, sizeof what, "n=%zu GMRES Arnoldi finish, column %lld%s", n, (long long)j, g);
        cmp_state(&p, what);
        size_t ld = p.m + 1;
        T_OK(maxdiff(h->gm.H, d->gm.H, ld * p.m, 1e-12) <= 1e-11 &&
                 maxdiff(h->gm.g, d->gm.g, ld, 1e-12) <= 1e-11 &&
                 maxdiff(h->gm.cs, d->gm.cs, p.m, 1e-12) <= 1e-11 &&
                 maxdiff(h->gm.sn, d->gm.sn, p.m, 1e-12) <= 1e-11,
             "%s: H, g and the rotations agree", what);
        H->gm_scale(h, j, v.h[1]);
        D->gm_scale(d, j, v.d[1]);
        T_OK(maxdiff(h->V, d->V, n * ld, 1e-12) <= 1e-12, "n=%zu gm_scale%s", n, g);
        vecs_free(&v);
    }

    /* ungated: triangular solve and the three updates, kdim from the state */
    vecs_init(&v, n, 400);
    sps_kstate s = s0;
    s.kdim = m / 2;
    size_t ld = p.m + 1;
    for (size_t c = 0; c < p.m; c++) { /* a well-conditioned R */
        for (size_t i = 0; i < c; i++) h->gm.H[i + c * ld] *= 0.01;
        h->gm.H[c + c * ld] = 2.0 + 0.5 * h->gm.H[c + c * ld];
    }
    sps__h2d(gctx, d->gm.H, h->gm.H, ld * p.m * sizeof(double));
    set_state(&p, &s);
    H->gm_solve(h);
    D->gm_solve(d);
    T_OK(maxdiff(h->gm.y, d->gm.y, (size_t)s.kdim, 1e-12) <= 1e-11, "n=%zu gm_solve over %lld columns", n,
         (long long)s.kdim);
    sps__h2d(gctx, d->gm.y, h->gm.y, p.m * sizeof(double)); /* same y for the updates */
    H->gm_update(h, v.h[0], NULL, NULL);
    D->gm_update(d, v.d[0], NULL, NULL);
    H->gm_update(h, v.h[1], v.h[8], NULL);
    D->gm_update(d, v.d[1], v.d[8], NULL);
    H->gm_update(h, NULL, NULL, v.h[2]);
    D->gm_update(d, NULL, NULL, v.d[2]);
    H->jacobi(h, v.h[3], v.h[8], v.h[4]);
    D->jacobi(d, v.d[3], v.d[8], v.d[4]);
    H->add(h, v.h[5], v.h[6]);
    D->add(d, v.d[5], v.d[6]);
    H->fill(h, v.h[7], -2.5);
    D->fill(d, v.d[7], -2.5);
    H->copy(h, v.h[6], v.h[1]);
    D->copy(d, v.d[6], v.d[1]);
    snprintf(what, sizeof what, "n=%zu gm_update (3 modes), jacobi, add, fill, copy", n);
    cmp_vecs(&v, n, what, 0, 8);

    /* BiCGSTAB's half step: only the stopping iteration moves x */
    s = s0;
    s.stop = 1, s.half = 1, s.iter = 5, s.reason = SPS_CONVERGED_RTOL;
    set_state(&p, &s);
    H->bicg_x(h, 4, v.h[0], v.h[1], v.h[4], v.h[6], v.h[5], v.h[7], v.h[2]);
    D->bicg_x(d, 4, v.d[0], v.d[1], v.d[4], v.d[6], v.d[5], v.d[7], v.d[2]);
    H->bicg_x(h, 5, v.h[0], v.h[1], v.h[4], v.h[6], v.h[5], v.h[7], v.h[2]);
    D->bicg_x(d, 5, v.d[0], v.d[1], v.d[4], v.d[6], v.d[5], v.d[7], v.d[2]);
    snprintf(what, sizeof what, "n=%zu bicg_x at the half step", n);
    cmp_vecs(&v, n, what, 0, 8);

    /* the setup reductions */
    s = s0;
    s.stop = 0, s.iter = 0, s.maxit = 10;
    set_state(&p, &s);
    H->dot(h, v.h[1], v.h[1], NULL, NULL, SPS_FIN_BNORM, 0);
    D->dot(d, v.d[1], v.d[1], NULL, NULL, SPS_FIN_BNORM, 0);
    H->dot(h, v.h[2], v.h[2], NULL, NULL, SPS_FIN_R0, 0);
    D->dot(d, v.d[2], v.d[2], NULL, NULL, SPS_FIN_R0, 0);
    H->finish(h, SPS_FIN_GM_START, 0); /* again on r0's sums */
    D->finish(d, SPS_FIN_GM_START, 0);
    H->dot(h, v.h[3], v.h[4], v.h[5], v.h[6], SPS_FIN_BICG_OMEGA, 0);
    D->dot(d, v.d[3], v.d[4], v.d[5], v.d[6], SPS_FIN_BICG_OMEGA, 0);
    snprintf(what, sizeof what, "n=%zu bnorm, r0, omega, GMRES start", n);
    cmp_state(&p, what);
    T_OK(maxdiff(h->gm.g, d->gm.g, 1, 1e-300) <= 1e-12, "%s: g[0]", what);
    vecs_free(&v);
    pair_free(&p);
}

static void test_vops(void)
{
    size_t sizes[] = {1, 33, 1025, 300001};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) test_vops_size(sizes[i]);
}

/* ---- 2. whole solves ------------------------------------------------------ */

/* Laplacian on an N x N grid, built as CSR directly. */
static sps_matrix *poisson(int N)
{
    int n = N * N;
    sps_idx *rp = malloc((size_t)(n + 1) * sizeof *rp), *ci = malloc((size_t)5 * n * sizeof *ci);
    double *v = malloc((size_t)5 * n * sizeof *v);
    int k = 0;
    for (int r = 0; r < n; r++) {
        int i = r / N, j = r % N;
        rp[r] = k;
        int cols[5] = {r - N, r - 1, r, r + 1, r + N};
        int ok[5] = {i > 0, j > 0, 1, j < N - 1, i < N - 1};
        for (int q = 0; q < 5; q++)
            if (ok[q]) ci[k] = cols[q], v[k++] = q == 2 ? 4.0 : -1.0;
    }
    rp[n] = k;
    sps_matrix *A = NULL;
    T_STATUS(hctx, sps_matrix_create_csr(hctx, n, n, rp, ci, v, &A), "poisson %d", N);
    free(rp), free(ci), free(v);
    return A;
}

/* diag(kappa^(i/(n-1))): GMRES needs hundreds of steps in one cycle. */
static sps_matrix *geometric_diag(int n, double kappa)
{
    sps_idx *rp = malloc((size_t)(n + 1) * sizeof *rp), *ci = malloc((size_t)n * sizeof *ci);
    double *v = malloc((size_t)n * sizeof *v);
    for (int i = 0; i < n; i++) rp[i] = i, ci[i] = i, v[i] = pow(kappa, (double)i / (n - 1));
    rp[n] = n;
    sps_matrix *A = NULL;
    sps_matrix_create_csr(hctx, n, n, rp, ci, v, &A);
    free(rp), free(ci), free(v);
    return A;
}

typedef struct result {
    sps_solve_info in;
    double *x, *hist;
    sps_status st;
} result;

typedef struct mon_count {
    int64_t calls;
} mon_count;

static void count_mon(void *u, int64_t it, double r)
{
    (void)it, (void)r;
    ((mon_count *)u)->calls++;
}

/* Solve on ctx with backend spmv; b and x on the device when dev_ptrs. */
static result solve_on(sps_context *ctx, const sps_matrix *A, const char *spmv, sps_method m,
                       int restart, sps_precond *pc, const double *b, int dev_ptrs, mon_count *mc)
{
    result r;
    memset(&r, 0, sizeof r);
    int n = sps_matrix_rows(A);
    r.x = hvec((size_t)n);
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    r.st = sps_operator_create(ctx, A, spmv, NULL, &op);
    if (r.st == SPS_OK) r.st = sps_solver_create(ctx, &s);
    if (r.st != SPS_OK) {
        sps_operator_destroy(op);
        return r;
    }
    sps_solver_set_method(s, m);
    sps_solver_set_restart(s, restart);
    sps_solver_set_rtol(s, 1e-10);
    sps_solver_set_history(s, 1);
    if (mc) sps_solver_set_monitor(s, count_mon, mc);
    if (dev_ptrs) {
        double *db = up(b, (size_t)n), *dx = up(r.x, (size_t)n);
        r.st = sps_solve(s, op, pc, db, dx, &r.in);
        sps__d2h(gctx, r.x, dx, (size_t)n * sizeof *r.x);
        sps__dfree(db), sps__dfree(dx);
    } else {
        r.st = sps_solve(s, op, pc, b, r.x, &r.in);
    }
    if (r.st == SPS_OK && r.in.history_len > 0) {
        r.hist = hvec((size_t)r.in.history_len);
        memcpy(r.hist, r.in.history, (size_t)r.in.history_len * sizeof *r.hist);
    }
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    return r;
}

static void result_free(result *r) { free(r->x), free(r->hist); }

static double rel(const double *x, const double *y, int n)
{
    double d = 0, s = 0;
    for (int i = 0; i < n; i++) d += (x[i] - y[i]) * (x[i] - y[i]), s += y[i] * y[i];
    return sqrt(d / (s > 0 ? s : 1));
}

/* GPU (every GPU backend) against the host driver on one matrix. */
static void compare_case(const char *mname, const sps_matrix *A, sps_method m, int restart)
{
    int n = sps_matrix_rows(A);
    double *b = rnd((size_t)n, 5);
    result ref = solve_on(hctx, A, "csr-scalar", m, restart, NULL, b, 0, NULL);
    char name[160];
    snprintf(name, sizeof name, "%s %s host", mname, sps_method_name(m));
    if (!T_STATUS(hctx, ref.st, "%s", name)) return;
    const char *names[16];
    int nb = 0;
    names[nb++] = "cusparse:alg2";
    for (int i = 0; nb < 15; i++) {
        const char *bn;
        unsigned caps;
        if (sps_spmv_backend(i, &bn, &caps, NULL) != SPS_OK) break;
        if ((caps & SPS_CAP_GPU) && !(caps & SPS_CAP_SELECTOR)) names[nb++] = bn;
    }
    for (int k = 0; k < nb; k++) {
        snprintf(name, sizeof name, "%s %s %s", mname, sps_method_name(m), names[k]);
        result g = solve_on(gctx, A, names[k], m, restart, NULL, b, 0, NULL);
        if (g.st == SPS_ERR_UNSUPPORTED) { /* dia refusing the matrix */
            t_skip(name, "%s", sps_last_error(gctx));
            result_free(&g);
            continue;
        }
        if (!T_STATUS(gctx, g.st, "%s: solve", name)) {
            result_free(&g);
            continue;
        }
        int64_t di = g.in.iterations - ref.in.iterations;
        int64_t tol = ref.in.iterations / 20 > 2 ? ref.in.iterations / 20 : 2;
        T_OK(g.in.reason == ref.in.reason, "%s: reason %s (host %s)", name, sps_reason_str(g.in.reason),
             sps_reason_str(ref.in.reason));
        T_OK(llabs((long long)di) <= tol, "%s: %lld iterations, host %lld (within 5%%)", name,
             (long long)g.in.iterations, (long long)ref.in.iterations);
        if (ref.in.reason > 0) {
            double e = rel(g.x, ref.x, n);
            T_OK(e <= 1e-6 && g.in.true_rel_rnorm <= 1e-9, "%s: x within %.1e of the host's, true relres %.1e",
                 name, e, g.in.true_rel_rnorm);
        }
        T_OK(g.in.history_len == g.in.iterations + 1 && g.hist && g.hist[0] == g.in.r0norm &&
                 g.hist[g.in.iterations] == g.in.rnorm,
             "%s: history read back once, consistent", name);
        unsigned caps = 0;
        sps_operator *probe = NULL;
        if (sps_operator_create(gctx, A, names[k], NULL, &probe) == SPS_OK) {
            sps_operator_info oi;
            sps_operator_get_info(probe, &oi);
            caps = oi.caps;
        }
        sps_operator_destroy(probe);
        if (caps & SPS_CAP_DETERMINISTIC) {
            result g2 = solve_on(gctx, A, names[k], m, restart, NULL, b, 0, NULL);
            T_OK(g2.st == SPS_OK && g2.in.iterations == g.in.iterations &&
                     memcmp(g2.x, g.x, (size_t)n * sizeof *g.x) == 0 && g2.hist &&
                     memcmp(g2.hist, g.hist, (size_t)g.in.history_len * sizeof *g.hist) == 0,
                 "%s: two runs bitwise equal (x, iterations, history)", name);
            result_free(&g2);
        }
        if (k == 0) {
            result g3 = solve_on(gctx, A, names[k], m, restart, NULL, b, 1, NULL);
            T_OK(g3.st == SPS_OK && g3.in.iterations == g.in.iterations &&
                     memcmp(g3.x, g.x, (size_t)n * sizeof *g.x) == 0,
                 "%s: device pointers for b and x give bitwise the same x", name);
            result_free(&g3);
        }
        result_free(&g);
    }
    result_free(&ref);
    free(b);
}

static sps_matrix *read_real(const char *name)
{
    const char *path = t_real_matrix_path(name);
    sps_matrix *A = NULL;
    sps_status st = path ? sps_matrix_read(hctx, path, &A) : SPS_ERR_IO;
    if (st != SPS_OK) {
        t_skip(name, "cannot read: %s", path ? sps_last_error(hctx) : "file not found");
        return NULL;
    }
    return A;
}

static void test_solves(void)
{
    sps_matrix *P = poisson(40), *G = geometric_diag(1000, 3e4);
    compare_case("poisson 40x40", P, SPS_CG, 30);
    compare_case("poisson 40x40", P, SPS_BICGSTAB, 30);
    compare_case("poisson 40x40", P, SPS_GMRES, 30);
    compare_case("geometric diag 1000 (585 steps in one cycle)", G, SPS_GMRES, 1000);
    sps_matrix_destroy(P);
    sps_matrix_destroy(G);
    struct { const char *mat; sps_method m; } real[] = {
        /* Long unpreconditioned runs on ill-conditioned matrices amplify the
         * rounding order, so their iteration counts are not comparable to 5%:
         * measured on an H100, orsirr_1 takes 1696 BiCGSTAB iterations on the
         * host and 1810 to 2764 on the GPU depending on the backend, and 4769
         * GMRES(30) iterations on the host against 5755 to 7784. BiCGSTAB's
         * residual is not monotone, so its count moves with the SpMV's
         * rounding order even on short runs: mesh2e1 takes 93 iterations on
         * the host and 87 to 98 on the GPU across backends (6.5%). The cases
         * here converge within 5% on every backend. */
        {"nos6", SPS_CG}, {"bcsstk09", SPS_CG}, {"steam2", SPS_GMRES},
        {"pde2961", SPS_BICGSTAB}, {"jpwh_991", SPS_GMRES}, {"rdb2048", SPS_GMRES},
    };
    for (size_t i = 0; i < sizeof real / sizeof *real; i++) {
        sps_matrix *A = read_real(real[i].mat);
        if (!A) continue;
        compare_case(real[i].mat, A, real[i].m, 30);
        sps_matrix_destroy(A);
    }
}

/* ---- 3. host synchronizations, the monitor, Jacobi on the device ---------- */

static void test_syncs(void)
{
    sps_matrix *A = poisson(256);
    int n = 65536;
    double *b = rnd((size_t)n, 17);
    for (int m = 0; m < 2; m++) {
        const char *mn = sps_method_name((sps_method)m);
        mon_count mc = {0};
        result r = solve_on(gctx, A, "csr-vector", (sps_method)m, 30, NULL, b, 0, &mc);
        if (!T_STATUS(gctx, r.st, "%s poisson 256x256 on the GPU", mn)) continue;
        double per = r.in.iterations ? (double)r.in.host_syncs / (double)r.in.iterations : 1;
        T_OK(r.in.reason == SPS_CONVERGED_RTOL && r.in.iterations > 300,
             "%s poisson 256x256: converged after %lld iterations", mn, (long long)r.in.iterations);
        T_OK(per < 0.25, "%s: %lld host synchronizations for %lld iterations (%.3f per iteration < 0.25)",
             mn, (long long)r.in.host_syncs, (long long)r.in.iterations, per);
        T_OK(mc.calls == r.in.host_syncs, "%s: the monitor ran at each host check (%lld calls)", mn,
             (long long)mc.calls);
        int64_t needed = m == SPS_CG ? r.in.iterations + 2 : 2 * r.in.iterations + 2;
        T_OK(r.in.spmvs >= needed && r.in.spmvs <= needed + 2 * 64,
             "%s: %lld SpMVs, %lld of them past convergence (at most one batch)", mn,
             (long long)r.in.spmvs, (long long)(r.in.spmvs - needed));
        printf("# %s poisson 256x256: %.4f ms per iteration, %lld syncs, %lld iterations\n", mn,
               r.in.per_iter_ms, (long long)r.in.host_syncs, (long long)r.in.iterations);
        result_free(&r);
    }
    /* Jacobi fused on the device */
    sps_precond *pc = NULL;
    sps_status st = sps_precond_create(gctx, A, "jacobi", &pc);
    if (T_STATUS(gctx, st, "jacobi on the GPU")) {
        sps_precond *hpc = NULL;
        sps_precond_create(hctx, A, "jacobi", &hpc);
        result g = solve_on(gctx, A, "csr-vector", SPS_CG, 30, pc, b, 0, NULL);
        result h = solve_on(hctx, A, "csr-scalar", SPS_CG, 30, hpc, b, 0, NULL);
        T_OK(g.st == SPS_OK && h.st == SPS_OK && g.in.reason == h.in.reason &&
                 llabs((long long)(g.in.iterations - h.in.iterations)) <= 2 + h.in.iterations / 20 &&
                 rel(g.x, h.x, n) <= 1e-6,
             "cg + jacobi: GPU %lld iterations, host %lld, same solution", (long long)g.in.iterations,
             (long long)h.in.iterations);
        result_free(&g);
        result_free(&h);
        sps_precond_destroy(hpc);
    }
    sps_precond_destroy(pc);
    free(b);
    sps_matrix_destroy(A);
}

int main(void)
{
    gctx = t_gpu_context_or_skip("solvers on the GPU");
    if (!gctx) return t_done();
    sps_context_create(&hctx, SPS_DEVICE_HOST);
    test_vops();
    test_solves();
    test_syncs();
    sps_context_destroy(hctx);
    sps_context_destroy(gctx);
    return t_done();
}

#else

int main(void)
{
    t_gpu_context_or_skip("solvers on the GPU");
    return t_done();
}

#endif
