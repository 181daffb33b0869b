/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_solvers_gpu.c: the solvers on the GPU.
 *
 * 1. Every CUDA operation (generic: vops_cuda.cu; each method's:
 *    <method>_kernels.cu) against its host reference on the same inputs, gated
 *    and not, for sizes that exercise one block, many blocks and the
 *    grid-stride loop; GMRES's finish with more rotations than one
 *    shared-memory chunk; a dot with SPS_K_NSUM sums.
 * 2. Each method with each GPU SpMV backend against the host driver: same
 *    reason, iterations within 5%, same solution; two runs bitwise equal;
 *    host and device pointers for b and x give bitwise the same x.
 * 3. Host synchronizations per iteration below 0.25 for CG and BiCGSTAB on a
 *    2-D Laplacian of 65536 rows; the monitor runs at each host check.
 * 5. GMRES's fused classic products against SPS_GM_FUSE=0.
 * 6. GMRES with DCGS2 (gmres:orth=dcgs2) against the host's DCGS2 (make
 *    run's lns_3937: against the GPU's CGS2), two GPU runs bitwise equal.
 * Without a device (or without CUDA) it prints one SKIP line. */
#include "check.h"
#include "internal.h"
#include "core/gpu.h"
#include "precond/precond.h"
#include "solvers/bicgstab/bicgstab.h"
#include "solvers/cg/cg.h"
#include "solvers/gmres/gmres.h"

#include <math.h>
#include <stdarg.h>
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

/* ---- 1. ops: CUDA against host ------------------------------------------- */

#define MSD 32 /* doubles of method state (any method's) */

/* One workspace in each memory space, with the same contents. */
typedef struct pair {
    sps_kws h, d;
    sps_kstate hst;
    double hms[MSD];
    sps_gm_ws hg, dg;
    size_t n, m;
} pair;

static void pair_init(pair *p, size_t n, int m)
{
    memset(p, 0, sizeof *p);
    p->n = n;
    p->m = (size_t)m;
    size_t ld = (size_t)m + 1;
    sps_kws *w[2] = {&p->h, &p->d};
    sps_gm_ws *gw[2] = {&p->hg, &p->dg};
    for (int k = 0; k < 2; k++) {
        sps_kws *x = w[k];
        sps_gm_ws *g = gw[k];
        int dev = k == 1;
        x->ctx = dev ? gctx : hctx;
        x->ops = dev ? &sps__vops_cuda : &sps__vops_host;
        x->n = (sps_idx)n;
        g->m = m;
        double *V = rnd(n * ld, 77), *H = rnd(ld * (size_t)m, 78), *cs = rnd((size_t)m, 79);
        double *sn = rnd((size_t)m, 80), *gg = rnd(ld, 81), *h2 = rnd(ld, 82);
        double *hist = hvec(64);
        size_t red = x->ops->red_len((sps_idx)n);
        if (dev) {
            x->st = (sps_kstate *)(void *)dvec((sizeof(sps_kstate) + 7) / 8);
            x->ms = dvec(MSD);
            x->red = dvec(red);
            x->hist = up(hist, 64);
            g->V = up(V, n * ld);
            g->gm.H = up(H, ld * (size_t)m);
            g->gm.cs = up(cs, (size_t)m);
            g->gm.sn = up(sn, (size_t)m);
            g->gm.g = up(gg, ld);
            g->gm.h2 = up(h2, ld);
            g->gm.y = dvec((size_t)m);
            g->part = dvec(sps__gm_part_len((int64_t)n, m));
            sps__gm_ops_cuda.reset(x, g); /* the fused products' counters */
            free(V), free(H), free(cs), free(sn), free(gg), free(h2), free(hist);
        } else {
            x->st = &p->hst;
            x->ms = p->hms;
            x->red = hvec(red);
            x->hist = hist;
            g->V = V;
            g->gm = (sps_kgm){H, cs, sn, gg, hvec((size_t)m), h2, NULL, NULL};
        }
    }
}

static void pair_free(pair *p)
{
    free(p->h.hist), free(p->h.red), free(p->hg.V), free(p->hg.gm.H), free(p->hg.gm.cs);
    free(p->hg.gm.sn), free(p->hg.gm.g), free(p->hg.gm.y), free(p->hg.gm.h2);
    sps__dfree(p->d.st), sps__dfree(p->d.ms), sps__dfree(p->d.red), sps__dfree(p->d.hist);
    sps__dfree(p->dg.V), sps__dfree(p->dg.gm.H), sps__dfree(p->dg.gm.cs), sps__dfree(p->dg.gm.sn);
    sps__dfree(p->dg.gm.g), sps__dfree(p->dg.gm.y), sps__dfree(p->dg.gm.h2), sps__dfree(p->dg.part);
}

/* The method states the tests start from. */
typedef struct mstates {
    sps_cg_state cg;
    sps_bicg_state bicg;
    sps_gm_state gm;
} mstates;

/* The same state on both sides (common, and one method's). */
static void set_state(pair *p, const sps_kstate *s, const void *ms, size_t bytes)
{
    p->hst = *s;
    memset(p->hms, 0, sizeof p->hms);
    memcpy(p->hms, ms, bytes);
    sps__vops_cuda.put_state(&p->d, s, p->hms, sizeof p->hms);
}

enum { M_CG, M_BICG, M_GM };

static void cmp_state(const pair *p, const char *what, int method)
{
    sps_kstate d;
    double dms[MSD];
    sps__vops_cuda.get_state((sps_kws *)&p->d, &d);
    sps__d2h(gctx, dms, p->d.ms, sizeof dms);
    const sps_kstate *h = &p->hst;
    int same = d.stop == h->stop && d.reason == h->reason && d.iter == h->iter &&
               d.restarts == h->restarts;
    double dv[9] = {d.rnorm, d.bnorm, d.r0norm, d.tol}, hv[9] = {h->rnorm, h->bnorm, h->r0norm, h->tol};
    int nv = 4;
    if (method == M_CG) {
        const sps_cg_state *a = (const void *)dms, *b = (const void *)p->hms;
        dv[nv] = a->rho, hv[nv++] = b->rho;
        dv[nv] = a->alpha, hv[nv++] = b->alpha;
        dv[nv] = a->beta, hv[nv++] = b->beta;
    } else if (method == M_BICG) {
        const sps_bicg_state *a = (const void *)dms, *b = (const void *)p->hms;
        same = same && a->half == b->half;
        dv[nv] = a->rho, hv[nv++] = b->rho;
        dv[nv] = a->alpha, hv[nv++] = b->alpha;
        dv[nv] = a->beta, hv[nv++] = b->beta;
        dv[nv] = a->omega, hv[nv++] = b->omega;
    } else {
        const sps_gm_state *a = (const void *)dms, *b = (const void *)p->hms;
        same = same && a->kdim == b->kdim && a->stag_at == b->stag_at && a->reorth == b->reorth;
        dv[nv] = a->hn, hv[nv++] = b->hn;
        dv[nv] = a->stag_ref, hv[nv++] = b->stag_ref;
    }
    double worst = 0;
    for (int i = 0; i < nv; i++) {
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

static mstates mstates0(int m)
{
    mstates ms;
    memset(&ms, 0, sizeof ms);
    ms.cg = (sps_cg_state){0.7, 0.3, 0.2};
    ms.bicg.rho = 0.7, ms.bicg.alpha = 0.3, ms.bicg.beta = 0.2, ms.bicg.omega = 0.9;
    ms.gm.m = m, ms.gm.stag_win = 2, ms.gm.stag_ref = 1.0;
    return ms;
}

/* Fresh vectors and the same state on both sides; returns n. */
static size_t begin_case(pair *p, vecs *v, uint64_t seed, const sps_kstate *s, const void *ms,
                         size_t bytes)
{
    vecs_init(v, p->n, seed);
    set_state(p, s, ms, bytes);
    return p->n;
}

/* Every vector and the state agree. */
static void check_case(const pair *p, const vecs *v, int method, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    cmp_vecs(v, p->n, what, 0, 8);
    cmp_state(p, what, method);
}

static void test_cg_ops(pair *p, const sps_kstate *s, const char *g)
{
    const sps_cg_ops *H = &sps__cg_ops_host, *D = &sps__cg_ops_cuda;
    sps_kws *h = &p->h, *d = &p->d;
    mstates ms = mstates0((int)p->m);
    vecs v; /* 0 x, 1 r, 2 p, 3 q, 4 z, 8 dinv */
    size_t n = begin_case(p, &v, 100, s, &ms.cg, sizeof ms.cg);
    H->update(h, v.h[0], v.h[1], v.h[2], v.h[3], v.h[8], v.h[4], SPS_CG_RES_FUSED);
    D->update(d, v.d[0], v.d[1], v.d[2], v.d[3], v.d[8], v.d[4], SPS_CG_RES_FUSED);
    check_case(p, &v, M_CG, "n=%zu cg update (Jacobi fused)%s", n, g);
    H->update(h, v.h[0], v.h[1], v.h[2], v.h[3], NULL, NULL, SPS_CG_RES_PLAIN);
    D->update(d, v.d[0], v.d[1], v.d[2], v.d[3], NULL, NULL, SPS_CG_RES_PLAIN);
    H->direction(h, v.h[2], v.h[4]);
    D->direction(d, v.d[2], v.d[4]);
    check_case(p, &v, M_CG, "n=%zu cg update, direction%s", n, g);
    vecs_free(&v);
}

static void test_bicg_ops(pair *p, const sps_kstate *s, const char *g)
{
    const sps_bicg_ops *H = &sps__bicg_ops_host, *D = &sps__bicg_ops_cuda;
    sps_kws *h = &p->h, *d = &p->d;
    mstates ms = mstates0((int)p->m);
    vecs v; /* 0 x, 1 r, 2 p/r0hat, 3 v, 4 phat, 5 s, 6 shat, 7 t, 8 dinv */
    begin_case(p, &v, 200, s, &ms.bicg, sizeof ms.bicg);
    H->p(h, v.h[2], v.h[1], v.h[3], v.h[8], v.h[4]);
    D->p(d, v.d[2], v.d[1], v.d[3], v.d[8], v.d[4]);
    H->s(h, v.h[5], v.h[1], v.h[3], v.h[8], v.h[6]);
    D->s(d, v.d[5], v.d[1], v.d[3], v.d[8], v.d[6]);
    H->x(h, 1, v.h[0], v.h[1], v.h[4], v.h[6], v.h[5], v.h[7], v.h[2]);
    D->x(d, 1, v.d[0], v.d[1], v.d[4], v.d[6], v.d[5], v.d[7], v.d[2]);
    H->p(h, v.h[2], v.h[1], v.h[3], NULL, NULL);
    D->p(d, v.d[2], v.d[1], v.d[3], NULL, NULL);
    check_case(p, &v, M_BICG, "n=%zu bicgstab p, s, x%s", p->n, g);
    vecs_free(&v);
}

/* GMRES's check (SPS_GM_CHECK) or Arnoldi step on both sides, from the same
 * state with reorth set as given; compares the state, H, g and the rotations. */
static void gm_finish_case(pair *p, const vecs *v, mstates *ms, const sps_kstate *s, int step,
                           int reorth, const char *what)
{
    const sps_gm_ops *H = &sps__gm_ops_host, *D = &sps__gm_ops_cuda;
    size_t ld = p->m + 1;
    int64_t j = (int64_t)p->m - 2;
    ms->gm.reorth = reorth;
    set_state(p, s, &ms->gm, sizeof ms->gm);
    sps_kfin fh = sps__kfin(H->finish, &p->hg, step, 1, j);
    sps_kfin fd = sps__kfin(D->finish, &p->dg, step, 1, j);
    const double *ah[1] = {v->h[1]}, *ad[1] = {v->d[1]};
    sps__vops_host.dot(&p->h, 1, ah, ah, &fh);
    sps__vops_cuda.dot(&p->d, 1, ad, ad, &fd);
    cmp_state(p, what, M_GM);
    T_OK(maxdiff(p->hg.gm.H, p->dg.gm.H, ld * p->m, 1e-12) <= 1e-11 &&
             maxdiff(p->hg.gm.g, p->dg.gm.g, ld, 1e-12) <= 1e-11 &&
             maxdiff(p->hg.gm.cs, p->dg.gm.cs, p->m, 1e-12) <= 1e-11 &&
             maxdiff(p->hg.gm.sn, p->dg.gm.sn, p->m, 1e-12) <= 1e-11,
         "%s: H, g and the rotations agree", what);
}

/* Column j of H, rows 0..j, on both sides: equal entries whose squares sum to
 * ratio times w'w (w = vector 1). */
static void gm_set_col(pair *p, const vecs *v, int64_t j, double ratio)
{
    size_t ld = p->m + 1;
    double ww = 0;
    for (size_t i = 0; i < p->n; i++) ww += v->h[1][i] * v->h[1][i];
    double c = sqrt(ratio * ww / (double)(j + 1));
    for (int64_t i = 0; i <= j; i++) p->hg.gm.H[i + j * ld] = c;
    sps__h2d(gctx, p->dg.gm.H, p->hg.gm.H, ld * p->m * sizeof(double));
}

/* GMRES: the Gram-Schmidt products (the second pass's gate), the check and
 * the Arnoldi finish, the scale. */
static void test_gm_ops(pair *p, const sps_kstate *s, const char *g)
{
    const sps_gm_ops *H = &sps__gm_ops_host, *D = &sps__gm_ops_cuda;
    sps_kws *h = &p->h, *d = &p->d;
    size_t n = p->n, ld = p->m + 1;
    mstates ms = mstates0((int)p->m);
    int64_t j = (int64_t)p->m - 2;
    char what[128];
    vecs v;
    vecs_init(&v, n, 300);
    set_state(p, s, &ms.gm, sizeof ms.gm);
    double *hh = hvec(p->m + 1), *hd = dvec(p->m + 1);
    H->gemv_t(h, &p->hg, j + 1, v.h[1], hh, 0);
    D->gemv_t(d, &p->dg, j + 1, v.d[1], hd, 0);
    snprintf(what, sizeof what, "n=%zu gemv_t over %lld columns", n, (long long)j + 1);
    T_OK(maxdiff(hh, hd, (size_t)j + 1, 1e-10) <= 1e-11, "%s", what);
    H->gemv_n(h, &p->hg, j + 1, hh, v.h[1], 0);
    D->gemv_n(d, &p->dg, j + 1, hd, v.d[1], 0);
    snprintf(what, sizeof what, "n=%zu gemv_n", n);
    cmp_vecs(&v, n, what, 1, 1);
    /* reorth is 0: the second pass's products change nothing */
    H->gemv_t(h, &p->hg, j + 1, v.h[2], hh, 1);
    D->gemv_t(d, &p->dg, j + 1, v.d[2], hd, 1);
    H->gemv_n(h, &p->hg, j + 1, hh, v.h[1], 1);
    D->gemv_n(d, &p->dg, j + 1, hd, v.d[1], 1);
    snprintf(what, sizeof what, "n=%zu second pass skipped (reorth 0)", n);
    T_OK(maxdiff(hh, hd, (size_t)j + 1, 1e-10) <= 1e-11, "%s: h unchanged", what);
    cmp_vecs(&v, n, what, 1, 1);
    free(hh);
    sps__dfree(hd);
    /* the check: w'w against ||h||^2 of column j (set here to twice, then
     * half, w'w) decides on both sides: due, only the flag moves; not due,
     * the Arnoldi step runs at once */
    for (int due = 1; due >= 0; due--) {
        gm_set_col(p, &v, j, due ? 2.0 : 0.5);
        snprintf(what, sizeof what, "n=%zu GMRES check, ||h||^2 = %s w'w%s", n, due ? "2" : "0.5", g);
        gm_finish_case(p, &v, &ms, s, SPS_GM_CHECK, !due, what);
        sps_gm_state hs;
        memcpy(&hs, p->hms, sizeof hs);
        const int want = s->stop ? !due : due; /* a stopped solve's finish moves nothing */
        T_OK(hs.reorth == want, "%s: reorth %d (second pass %s)", what, want, due ? "due" : "not due");
    }
    snprintf(what, sizeof what, "n=%zu GMRES Arnoldi finish, column %lld%s", n, (long long)j, g);
    gm_finish_case(p, &v, &ms, s, SPS_GM_ARNOLDI, 1, what);
    snprintf(what, sizeof what, "n=%zu GMRES Arnoldi finish skipped without reorth%s", n, g);
    gm_finish_case(p, &v, &ms, s, SPS_GM_ARNOLDI, 0, what);
    H->scale(h, &p->hg, j, v.h[1]);
    D->scale(d, &p->dg, j, v.d[1]);
    T_OK(maxdiff(p->hg.V, p->dg.V, n * ld, 1e-12) <= 1e-12, "n=%zu gmres scale%s", n, g);
    vecs_free(&v);
}

/* Ungated: GMRES's triangular solve and its three updates (kdim from the
 * state), and the generic mul, add, fill, copy. */
static void test_ungated(pair *p, const sps_kstate *s0)
{
    const sps_gm_ops *H = &sps__gm_ops_host, *D = &sps__gm_ops_cuda;
    const sps_vops *HV = &sps__vops_host, *DV = &sps__vops_cuda;
    sps_kws *h = &p->h, *d = &p->d;
    size_t n = p->n, ld = p->m + 1;
    mstates ms = mstates0((int)p->m);
    char what[128];
    vecs v;
    vecs_init(&v, n, 400);
    ms.gm.kdim = (int64_t)p->m / 2;
    for (size_t c = 0; c < p->m; c++) { /* a well-conditioned R */
        for (size_t i = 0; i < c; i++) p->hg.gm.H[i + c * ld] *= 0.01;
        p->hg.gm.H[c + c * ld] = 2.0 + 0.5 * p->hg.gm.H[c + c * ld];
    }
    sps__h2d(gctx, p->dg.gm.H, p->hg.gm.H, ld * p->m * sizeof(double));
    set_state(p, s0, &ms.gm, sizeof ms.gm);
    H->solve(h, &p->hg);
    D->solve(d, &p->dg);
    T_OK(maxdiff(p->hg.gm.y, p->dg.gm.y, (size_t)ms.gm.kdim, 1e-12) <= 1e-11,
         "n=%zu gmres solve over %lld columns", n, (long long)ms.gm.kdim);
    sps__h2d(gctx, p->dg.gm.y, p->hg.gm.y, p->m * sizeof(double)); /* same y for the updates */
    H->update(h, &p->hg, v.h[0], NULL, NULL);
    D->update(d, &p->dg, v.d[0], NULL, NULL);
    H->update(h, &p->hg, v.h[1], v.h[8], NULL);
    D->update(d, &p->dg, v.d[1], v.d[8], NULL);
    H->update(h, &p->hg, NULL, NULL, v.h[2]);
    D->update(d, &p->dg, NULL, NULL, v.d[2]);
    HV->mul(h, v.h[3], v.h[8], v.h[4]);
    DV->mul(d, v.d[3], v.d[8], v.d[4]);
    HV->add(h, v.h[5], v.h[6]);
    DV->add(d, v.d[5], v.d[6]);
    HV->fill(h, v.h[7], -2.5);
    DV->fill(d, v.d[7], -2.5);
    HV->copy(h, v.h[6], v.h[1]);
    DV->copy(d, v.d[6], v.d[1]);
    snprintf(what, sizeof what, "n=%zu gmres update (3 modes), mul, add, fill, copy", n);
    cmp_vecs(&v, n, what, 0, 8);
    vecs_free(&v);
}

/* BiCGSTAB's half step: only the stopping iteration moves x. */
static void test_bicg_half(pair *p, const sps_kstate *s0)
{
    const sps_bicg_ops *H = &sps__bicg_ops_host, *D = &sps__bicg_ops_cuda;
    sps_kws *h = &p->h, *d = &p->d;
    mstates ms = mstates0((int)p->m);
    char what[128];
    vecs v;
    vecs_init(&v, p->n, 450);
    sps_kstate s = *s0;
    s.stop = 1, s.iter = 5, s.reason = SPS_CONVERGED_RTOL;
    ms.bicg.half = 1;
    set_state(p, &s, &ms.bicg, sizeof ms.bicg);
    H->x(h, 4, v.h[0], v.h[1], v.h[4], v.h[6], v.h[5], v.h[7], v.h[2]);
    D->x(d, 4, v.d[0], v.d[1], v.d[4], v.d[6], v.d[5], v.d[7], v.d[2]);
    H->x(h, 5, v.h[0], v.h[1], v.h[4], v.h[6], v.h[5], v.h[7], v.h[2]);
    D->x(d, 5, v.d[0], v.d[1], v.d[4], v.d[6], v.d[5], v.d[7], v.d[2]);
    snprintf(what, sizeof what, "n=%zu bicgstab x at the half step", p->n);
    cmp_vecs(&v, p->n, what, 0, 8);
    vecs_free(&v);
}

/* The setup reductions: ||b||, ||r0||, GMRES's first cycle on r0's sums,
 * BiCGSTAB's omega (two sums). */
static void test_setup_reductions(pair *p, const sps_kstate *s0)
{
    sps_kws *h = &p->h, *d = &p->d;
    const sps_vops *HV = &sps__vops_host, *DV = &sps__vops_cuda;
    mstates ms = mstates0((int)p->m);
    char what[128];
    vecs v;
    vecs_init(&v, p->n, 470);
    sps_kstate s = *s0;
    s.stop = 0, s.iter = 0, s.maxit = 10;
    set_state(p, &s, &ms.gm, sizeof ms.gm);
    sps_kfin bh = sps__kfin(HV->finish, NULL, SPS_KC_BNORM, 0, 0);
    sps_kfin bd = sps__kfin(DV->finish, NULL, SPS_KC_BNORM, 0, 0);
    sps_kfin rh = sps__kfin(HV->finish, NULL, SPS_KC_R0, 1, 0);
    sps_kfin rd = sps__kfin(DV->finish, NULL, SPS_KC_R0, 1, 0);
    const double *h1[1] = {v.h[1]}, *d1[1] = {v.d[1]}, *h2[1] = {v.h[2]}, *d2[1] = {v.d[2]};
    HV->dot(h, 1, h1, h1, &bh);
    DV->dot(d, 1, d1, d1, &bd);
    HV->dot(h, 1, h2, h2, &rh);
    DV->dot(d, 1, d2, d2, &rd);
    sps_kfin gh = sps__kfin(sps__gm_ops_host.finish, &p->hg, SPS_GM_START0, 1, 0);
    sps_kfin gd = sps__kfin(sps__gm_ops_cuda.finish, &p->dg, SPS_GM_START0, 1, 0);
    gh.fn(h, &gh); /* again on r0's sums */
    gd.fn(d, &gd);
    snprintf(what, sizeof what, "n=%zu bnorm, r0, GMRES start", p->n);
    cmp_state(p, what, M_GM);
    T_OK(maxdiff(p->hg.gm.g, p->dg.gm.g, 1, 1e-300) <= 1e-12, "%s: g[0]", what);
    set_state(p, &p->hst, &ms.bicg, sizeof ms.bicg);
    sps_kfin oh = sps__kfin(sps__bicg_ops_host.finish, NULL, SPS_BICG_OMEGA, 1, 0);
    sps_kfin od = sps__kfin(sps__bicg_ops_cuda.finish, NULL, SPS_BICG_OMEGA, 1, 0);
    const double *ha[2] = {v.h[3], v.h[5]}, *hb[2] = {v.h[4], v.h[6]};
    const double *da[2] = {v.d[3], v.d[5]}, *db[2] = {v.d[4], v.d[6]};
    HV->dot(h, 2, ha, hb, &oh);
    DV->dot(d, 2, da, db, &od);
    snprintf(what, sizeof what, "n=%zu bicgstab omega", p->n);
    cmp_state(p, what, M_BICG);
    vecs_free(&v);
}

/* A dot with SPS_K_NSUM sums: the device's block partials of each sum add up
 * to the host's sum (the partials layout part[q * grid + block], grid =
 * sps__kgrid(n) of solvers/kernels.cuh: ceil(n / 256) blocks, 1 to 1024; the
 * scratch itself holds more, for a backend's fused SpMV-plus-dot). */
static void test_dot_nsum(pair *p)
{
    sps_kws *h = &p->h, *d = &p->d;
    size_t n = p->n, G = (n + 255) / 256;
    if (G < 1) G = 1;
    if (G > 1024) G = 1024;
    T_OK(sps__vops_cuda.red_len((sps_idx)n) >= SPS_K_NSUM * G,
         "n=%zu: the device scratch holds %d sums of %zu partials", n, SPS_K_NSUM, G);
    vecs v;
    vecs_init(&v, n, 480);
    sps_kstate s;
    memset(&s, 0, sizeof s);
    mstates ms = mstates0((int)p->m);
    set_state(p, &s, &ms.gm, sizeof ms.gm);
    const double *ha[SPS_K_NSUM], *hb[SPS_K_NSUM], *da[SPS_K_NSUM], *db[SPS_K_NSUM];
    for (int q = 0; q < SPS_K_NSUM; q++) {
        ha[q] = v.h[q % NV], hb[q] = v.h[(q + 3) % NV];
        da[q] = v.d[q % NV], db[q] = v.d[(q + 3) % NV];
    }
    sps_kfin th = sps__kfin(sps__vops_host.finish, NULL, SPS_KC_TRUE, 0, 0);
    sps_kfin td = sps__kfin(sps__vops_cuda.finish, NULL, SPS_KC_TRUE, 0, 0);
    sps__vops_host.dot(h, SPS_K_NSUM, ha, hb, &th);
    sps__vops_cuda.dot(d, SPS_K_NSUM, da, db, &td);
    double *part = hvec(SPS_K_NSUM * G), worst = 0;
    sps__d2h(gctx, part, d->red, SPS_K_NSUM * G * sizeof(double));
    for (int q = 0; q < SPS_K_NSUM; q++) {
        double t = 0;
        for (size_t b = 0; b < G; b++) t += part[(size_t)q * G + b];
        double e = fabs(t - h->red[q]) / (fabs(h->red[q]) + 1e-300);
        if (!(e <= worst)) worst = e;
    }
    T_OK(worst <= 1e-11 && d->nsum == SPS_K_NSUM && h->nsum == SPS_K_NSUM,
         "n=%zu dot with %d sums: device partials add up to the host sums (max rel diff %.1e)", n,
         SPS_K_NSUM, worst);
    free(part);
    vecs_free(&v);
}

static void test_ops_size(size_t n)
{
    pair p;
    /* m = 700: more rotations than one shared-memory chunk (512) */
    pair_init(&p, n, n >= 1000 && n < 100000 ? 700 : 40);
    sps_kstate s0;
    memset(&s0, 0, sizeof s0);
    s0.maxit = 50;
    s0.rtol = 1e-8;
    s0.dtol = 1e5;
    s0.tol = 1e-30;
    s0.r0norm = s0.rnorm = 1.0;
    s0.has_pc = 1;
    for (int gated = 0; gated < 2; gated++) {
        const char *g = gated ? " (stopped: must not move)" : "";
        sps_kstate s = s0;
        s.stop = gated;
        s.reason = gated ? SPS_DIVERGED_MAXIT : 0;
        test_cg_ops(&p, &s, g);
        test_bicg_ops(&p, &s, g);
        test_gm_ops(&p, &s, g);
    }
    test_ungated(&p, &s0);
    test_bicg_half(&p, &s0);
    test_setup_reductions(&p, &s0);
    test_dot_nsum(&p);
    pair_free(&p);
}

/* Issue 17: scaled norms, axpby, and BiCGSTAB's x update keeping x finite,
 * CUDA against host. */
static void test_ops_issue17(size_t n)
{
    pair p;
    pair_init(&p, n, 4);
    const sps_vops *H = &sps__vops_host, *D = &sps__vops_cuda;
    sps_kws *h = &p.h, *d = &p.d;
    char what[160];
    sps_kstate s0;
    memset(&s0, 0, sizeof s0);
    s0.maxit = 50, s0.rtol = 1e-8, s0.dtol = 1e5, s0.tol = 1e-30;
    s0.r0norm = s0.rnorm = 1.0;
    mstates ms = mstates0(4);
    sps_kfin th = sps__kfin(H->finish, NULL, SPS_KC_TRUE, 0, 0);
    sps_kfin td = sps__kfin(D->finish, NULL, SPS_KC_TRUE, 0, 0);
    sps_kfin bh = sps__kfin(H->finish, NULL, SPS_KC_BNORM, 0, 0);
    sps_kfin bd = sps__kfin(D->finish, NULL, SPS_KC_BNORM, 0, 0);
    const double scales[] = {1.0, 1e-200, 1e160, 1e-155, 0x1p-1070, 0x1p+600};
    vecs v;
    vecs_init(&v, n, 500);
    double ref = 0;
    for (size_t c = 0; c < sizeof scales / sizeof *scales; c++) {
        for (size_t i = 0; i < n; i++) v.h[1][i] = scales[c] * v.h[0][i];
        sps__h2d(gctx, v.d[1], v.h[1], n * sizeof(double));
        sps_kstate s = s0, hs, ds;
        set_state(&p, &s, &ms.bicg, sizeof ms.bicg);
        H->nrm2(h, v.h[1], &th);
        D->nrm2(d, v.d[1], &td);
        hs = p.hst;
        D->get_state(d, &ds);
        if (c == 0) ref = ds.true_rnorm;
        snprintf(what, sizeof what, "n=%zu nrm2 of %g x", n, scales[c]);
        T_OK(ds.nrm_e == hs.nrm_e && fabs(ds.true_rnorm - hs.true_rnorm) <= 1e-13 * hs.true_rnorm &&
                 hs.true_rnorm > 0 && isfinite(hs.true_rnorm),
             "%s: device %.17g = host %.17g (e %lld/%lld)", what, ds.true_rnorm, hs.true_rnorm,
             (long long)ds.nrm_e, (long long)hs.nrm_e);
        if (scales[c] == 0x1p+600)
            T_OK(ds.true_rnorm == 0x1p+600 * ref, "%s: exactly 2^600 times the norm of x (bitwise)", what);
    }
    /* BNORM out of range asks for the rescale on both sides */
    for (size_t i = 0; i < n; i++) v.h[1][i] = 1e-200 * v.h[0][i];
    sps__h2d(gctx, v.d[1], v.h[1], n * sizeof(double));
    sps_kstate s = s0, ds;
    set_state(&p, &s, &ms.bicg, sizeof ms.bicg);
    H->nrm2(h, v.h[1], &bh);
    D->nrm2(d, v.d[1], &bd);
    D->get_state(d, &ds);
    T_OK(ds.reason == SPS_K_RESCALE && p.hst.reason == SPS_K_RESCALE && ds.rescale_e == p.hst.rescale_e,
         "n=%zu ||b|| near 1e-200: rescale on both sides (2^%lld)", n, (long long)ds.rescale_e);
    /* a NaN propagates through the maximum */
    v.h[1][n / 2] = NAN;
    sps__h2d(gctx, v.d[1], v.h[1], n * sizeof(double));
    set_state(&p, &s, &ms.bicg, sizeof ms.bicg);
    H->nrm2(h, v.h[1], &bh);
    D->nrm2(d, v.d[1], &bd);
    D->get_state(d, &ds);
    T_OK(ds.reason == SPS_DIVERGED_NAN && p.hst.reason == SPS_DIVERGED_NAN, "n=%zu NaN in b: NAN on both sides", n);
    /* axpby, both forms */
    H->axpby(h, v.h[2], 0.5, v.h[3], 0.0);
    D->axpby(d, v.d[2], 0.5, v.d[3], 0.0);
    H->axpby(h, v.h[4], -1.5, v.h[5], 2.0);
    D->axpby(d, v.d[4], -1.5, v.d[5], 2.0);
    snprintf(what, sizeof what, "n=%zu axpby", n);
    cmp_vecs(&v, n, what, 0, 8);
    vecs_free(&v);
    /* bicgstab x with an entry that would overflow: kept, counted, BREAKDOWN */
    vecs_init(&v, n, 600);
    v.h[0][n - 1] = 1.7e308, v.h[4][n - 1] = 1e308;
    sps__h2d(gctx, v.d[0], v.h[0], n * sizeof(double));
    sps__h2d(gctx, v.d[4], v.h[4], n * sizeof(double));
    s = s0;
    ms.bicg.alpha = 10.0;
    set_state(&p, &s, &ms.bicg, sizeof ms.bicg);
    sps__bicg_ops_host.x(h, 1, v.h[0], v.h[1], v.h[4], v.h[6], v.h[5], v.h[7], v.h[2]);
    sps__bicg_ops_cuda.x(d, 1, v.d[0], v.d[1], v.d[4], v.d[6], v.d[5], v.d[7], v.d[2]);
    snprintf(what, sizeof what, "n=%zu bicgstab x with an overflowing entry", n);
    cmp_vecs(&v, n, what, 0, 8);
    cmp_state(&p, what, M_BICG);
    double xl = 0;
    sps__d2h(gctx, &xl, v.d[0] + (n - 1), sizeof xl);
    T_OK(xl == 1.7e308 && p.hst.reason == SPS_DIVERGED_BREAKDOWN, "%s: x kept finite, BREAKDOWN", what);
    vecs_free(&v);
    pair_free(&p);
}

static void test_vops(void)
{
    size_t sizes17[] = {1, 31, 32, 33, 1023, 1024, 1025, 300001};
    for (size_t i = 0; i < sizeof sizes17 / sizeof *sizes17; i++) test_ops_issue17(sizes17[i]);
    size_t sizes[] = {1, 33, 1025, 300001};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) test_ops_size(sizes[i]);
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
            double e = t_rel_diff(g.x, ref.x, n);
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
        sps_matrix *A = t_read_real(hctx, real[i].mat);
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
                 t_rel_diff(g.x, h.x, n) <= 1e-6,
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

/* Issue 17 through sps_solve on the GPU: the 4x4 inconsistent system, scaled
 * right-hand sides, x aliasing b (host and device pointers). */
static void test_issue17_solves(void)
{
    sps_idx r4[] = {0, 0, 1, 2, 2}, c4[] = {0, 1, 0, 2, 1};
    double v4[] = {4, -1, -1, 4, -1}, b4[4] = {1, 1, 1, 1};
    sps_matrix *A = NULL;
    if (T_STATUS(gctx, sps_matrix_create_coo(gctx, 4, 4, 5, r4, c4, v4, &A), "4x4")) {
        for (int k = 0; k < 2; k++) {
            sps_method m = k ? SPS_BICGSTAB : SPS_GMRES;
            result r = solve_on(gctx, A, "csr-scalar", m, 30, NULL, b4, k, NULL);
            int fin = 1;
            for (int i = 0; i < 4; i++) fin &= isfinite(r.x[i]) != 0;
            T_OK(r.st == SPS_OK && r.in.reason < 0 && fin, "GPU 4x4 %s: not converged (%s), x finite",
                 sps_method_name(m), sps_reason_str(r.in.reason));
            result_free(&r);
        }
        sps_matrix_destroy(A);
    }
    A = poisson(10);
    if (!A) return;
    const double vals[] = {1.0, 1e-200, 1e160, 1e-155, 0x1p-700};
    double b[100], x1[100];
    for (int k = 0; k < 3; k++) {
        sps_method m = k == 0 ? SPS_CG : k == 1 ? SPS_BICGSTAB : SPS_GMRES;
        for (size_t c = 0; c < sizeof vals / sizeof *vals; c++) {
            for (int i = 0; i < 100; i++) b[i] = vals[c];
            result r = solve_on(gctx, A, "csr-vector", m, 30, NULL, b, (int)(c & 1), NULL);
            if (c == 0) memcpy(x1, r.x, sizeof x1);
            double err = 0;
            int same = 1;
            for (int i = 0; i < 100; i++) {
                err = fmax(err, fabs(r.x[i] / vals[c] - x1[i]) / fabs(x1[i]));
                same &= r.x[i] == vals[c] * x1[i];
            }
            T_OK(r.st == SPS_OK && r.in.reason == SPS_CONVERGED_RTOL && r.in.true_rel_rnorm <= 1e-10 &&
                     err <= 1e-6 && (vals[c] != 0x1p-700 || same),
                 "GPU %s b = %g: %s, ||b|| %.3e, true relative %.2e, x/b against b = 1: %.1e%s",
                 sps_method_name(m), vals[c], sps_reason_str(r.in.reason), r.in.bnorm,
                 r.in.true_rel_rnorm, err, vals[c] == 0x1p-700 ? " (bitwise 2^-700 x)" : "");
            result_free(&r);
        }
        /* x aliasing b: host pointers, then device pointers */
        for (int i = 0; i < 100; i++) b[i] = 1.0 + 0.01 * i;
        sps_operator *op = NULL;
        sps_solver *s = NULL;
        sps_solve_info i1, i2, i3;
        double xh[100], bh[100], xd_h[100];
        memcpy(xh, b, sizeof b), memcpy(bh, b, sizeof b);
        if (sps_operator_create(gctx, A, "csr-vector", NULL, &op) == SPS_OK &&
            sps_solver_create(gctx, &s) == SPS_OK) {
            sps_solver_set_method(s, m);
            sps_solver_set_rtol(s, 1e-10);
            sps_status e1 = sps_solve(s, op, NULL, b, xh, &i1);
            sps_status e2 = sps_solve(s, op, NULL, bh, bh, &i2);
            double *db = up(b, 100);
            sps_status e3 = sps_solve(s, op, NULL, db, db, &i3);
            sps__d2h(gctx, xd_h, db, sizeof xd_h);
            sps__dfree(db);
            T_OK(e1 == SPS_OK && e2 == SPS_OK && e3 == SPS_OK && i2.iterations == i1.iterations &&
                     i3.iterations == i1.iterations && !memcmp(xh, bh, sizeof xh) &&
                     !memcmp(xh, xd_h, sizeof xh) && i1.reason == SPS_CONVERGED_RTOL,
                 "GPU %s x aliasing b (host and device pointers): the same solve as x0 = b, bitwise",
                 sps_method_name(m));
        }
        sps_solver_destroy(s);
        sps_operator_destroy(op);
    }
    sps_matrix_destroy(A);
}

/* ---- 5. GMRES's fused classic products (gmres_kernels.cu) ----------------- */

/* A GMRES(restart) solve on the classic engine with SPS_GM_FUSE=fuse. */
static result solve_fuse(const sps_matrix *A, int restart, int64_t maxit, const double *b, const char *fuse)
{
    result r;
    memset(&r, 0, sizeof r);
    int n = sps_matrix_rows(A);
    r.x = hvec((size_t)n);
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    setenv("SPS_GM_FUSE", fuse, 1);
    r.st = sps_operator_create(gctx, A, "csr-vector", NULL, &op);
    if (r.st == SPS_OK) r.st = sps_solver_create(gctx, &s);
    if (r.st == SPS_OK) {
        sps_solver_set_method(s, SPS_GMRES);
        sps_solver_set_restart(s, restart);
        sps_solver_set_rtol(s, 1e-10);
        sps_solver_set_maxit(s, maxit);
        sps_solver_set_history(s, 1);
        r.st = sps_solver_set_engine(s, "classic");
    }
    if (r.st == SPS_OK) r.st = sps_solve(s, op, NULL, b, r.x, &r.in);
    if (r.st == SPS_OK && r.in.history_len > 0) {
        r.hist = hvec((size_t)r.in.history_len);
        memcpy(r.hist, r.in.history, (size_t)r.in.history_len * sizeof *r.hist);
    }
    unsetenv("SPS_GM_FUSE");
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    return r;
}

/* Fused (the default) against SPS_GM_FUSE=0 on the classic engine: the same
 * reason, iterations within the goldens' 5%, x within 1e-6 where converged;
 * two fused runs bitwise equal. Shapes: one long cycle (second passes, k_gt's
 * fused sums below 1024 columns), GMRES(30) on real matrices, and a matrix
 * above SPS_GM_FUSE_SCALE_ROWS (the scale its own kernel; 400 iterations,
 * maxit). */
static void fuse_case(const char *name, const sps_matrix *A, int restart, int64_t maxit)
{
    int n = sps_matrix_rows(A);
    double *b = rnd((size_t)n, 23);
    result f1 = solve_fuse(A, restart, maxit, b, "1"), f2 = solve_fuse(A, restart, maxit, b, "1");
    result f0 = solve_fuse(A, restart, maxit, b, "0");
    if (T_STATUS(gctx, f1.st, "%s GMRES(%d) fused", name, restart) &&
        T_STATUS(gctx, f0.st, "%s GMRES(%d) SPS_GM_FUSE=0", name, restart)) {
        int64_t tol = f0.in.iterations / 20 > 2 ? f0.in.iterations / 20 : 2;
        T_OK(f1.in.reason == f0.in.reason && llabs((long long)(f1.in.iterations - f0.in.iterations)) <= tol,
             "%s GMRES(%d) classic: fused %lld iterations (%s), SPS_GM_FUSE=0 %lld (%s), within 5%%", name,
             restart, (long long)f1.in.iterations, sps_reason_str(f1.in.reason), (long long)f0.in.iterations,
             sps_reason_str(f0.in.reason));
        if (f0.in.reason > 0)
            T_OK(t_rel_diff(f1.x, f0.x, n) <= 1e-6, "%s: fused x within %.1e of SPS_GM_FUSE=0's", name,
                 t_rel_diff(f1.x, f0.x, n));
        T_OK(f2.st == SPS_OK && f2.in.iterations == f1.in.iterations &&
                 !memcmp(f2.x, f1.x, (size_t)n * sizeof *f1.x) && f2.hist && f1.hist &&
                 !memcmp(f2.hist, f1.hist, (size_t)f1.in.history_len * sizeof *f1.hist),
             "%s GMRES(%d) fused: two runs bitwise equal (x, iterations, history)", name, restart);
        printf("# %s GMRES(%d) classic: fused %.4f ms per iteration, SPS_GM_FUSE=0 %.4f\n", name, restart,
               f1.in.per_iter_ms, f0.in.per_iter_ms);
    }
    result_free(&f0), result_free(&f1), result_free(&f2);
    free(b);
}

static void test_gm_fuse(void)
{
    sps_matrix *G = geometric_diag(1000, 3e4), *P = poisson(160);
    fuse_case("geometric diag 1000", G, 1000, 5000);
    fuse_case("poisson 160x160 (25600 rows)", P, 30, 400);
    sps_matrix_destroy(G);
    sps_matrix_destroy(P);
    /* the goldens' GMRES(30) cases (test_solves: within 5% on every backend) */
    const char *real[] = {"steam2", "jpwh_991", "rdb2048"};
    for (size_t i = 0; i < sizeof real / sizeof *real; i++) {
        sps_matrix *A = t_read_real(hctx, real[i]);
        if (!A) continue;
        fuse_case(real[i], A, 30, 3000);
        sps_matrix_destroy(A);
    }
}

/* ---- 6. GMRES with DCGS2 (gmres:orth=dcgs2: k_dp, k_dc) ------------------- */

/* The relative tolerance of the DCGS2 cases (1e-8 for make run's lns_3937)
 * and their preconditioner (NULL: none). */
static double orth_rtol = 1e-10;
static const char *orth_pc;

/* A GMRES(restart) solve with gmres:orth=<orth> on ctx (the GPU: classic
 * engine, csr-vector), history on. */
static result solve_orth(sps_context *ctx, const sps_matrix *A, int restart, int64_t maxit, const double *b,
                         const char *orth)
{
    result r;
    memset(&r, 0, sizeof r);
    int n = sps_matrix_rows(A);
    r.x = hvec((size_t)n);
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    sps_precond *pc = NULL;
    char spec[48];
    snprintf(spec, sizeof spec, "gmres:orth=%s", orth);
    r.st = sps_operator_create(ctx, A, ctx == gctx ? "csr-vector" : "csr-scalar", NULL, &op);
    if (r.st == SPS_OK && orth_pc) r.st = sps_precond_create(ctx, A, orth_pc, &pc);
    if (r.st == SPS_OK) r.st = sps_solver_create(ctx, &s);
    if (r.st == SPS_OK) r.st = sps_solver_set_method_name(s, spec);
    if (r.st == SPS_OK) {
        sps_solver_set_restart(s, restart);
        sps_solver_set_rtol(s, orth_rtol);
        sps_solver_set_maxit(s, maxit);
        sps_solver_set_history(s, 1);
        if (ctx == gctx) r.st = sps_solver_set_engine(s, "classic");
    }
    if (r.st == SPS_OK) r.st = sps_solve(s, op, pc, b, r.x, &r.in);
    if (r.st == SPS_OK && r.in.history_len > 0) {
        r.hist = hvec((size_t)r.in.history_len);
        memcpy(r.hist, r.in.history, (size_t)r.in.history_len * sizeof *r.hist);
    }
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    return r;
}

/* DCGS2 on the GPU against the host's DCGS2 (host: 1, else the GPU's CGS2):
 * the same reason, iterations within the goldens' 5% (at least 2), the true
 * residual within the tolerance where converged, x within 1e-6 of the
 * host's; two GPU runs bitwise equal (x, iterations, history). */
static void dcgs2_case(const char *name, const sps_matrix *A, int restart, int64_t maxit, int host)
{
    int n = sps_matrix_rows(A);
    double *b = rnd((size_t)n, 29);
    result d1 = solve_orth(gctx, A, restart, maxit, b, "dcgs2"), d2 = solve_orth(gctx, A, restart, maxit, b, "dcgs2");
    result rf = host ? solve_orth(hctx, A, restart, maxit, b, "dcgs2") : solve_orth(gctx, A, restart, maxit, b, "cgs2");
    const char *rn = host ? "host dcgs2" : "GPU cgs2";
    if (T_STATUS(gctx, d1.st, "%s GMRES(%d) dcgs2 on the GPU", name, restart) &&
        T_STATUS(host ? hctx : gctx, rf.st, "%s GMRES(%d) %s", name, restart, rn)) {
        int64_t tol = rf.in.iterations / 20 > 2 ? rf.in.iterations / 20 : 2;
        T_OK(d1.in.reason == rf.in.reason && llabs((long long)(d1.in.iterations - rf.in.iterations)) <= tol,
             "%s GMRES(%d) dcgs2: GPU %lld iterations (%s), %s %lld (%s), within 5%%", name, restart,
             (long long)d1.in.iterations, sps_reason_str(d1.in.reason), rn, (long long)rf.in.iterations,
             sps_reason_str(rf.in.reason));
        if (rf.in.reason > 0) {
            T_OK(d1.in.true_rel_rnorm <= 2.0 * orth_rtol, "%s GMRES(%d) dcgs2 GPU: true relative residual %.2e <= %.0e",
                 name, restart, d1.in.true_rel_rnorm, 2.0 * orth_rtol);
            if (host) /* the same algorithm: the same x up to rounding */
                T_OK(t_rel_diff(d1.x, rf.x, n) <= 1e-6, "%s: dcgs2 GPU x within %.1e of the %s's", name,
                     t_rel_diff(d1.x, rf.x, n), rn);
        }
        T_OK(d2.st == SPS_OK && d2.in.iterations == d1.in.iterations &&
                 !memcmp(d2.x, d1.x, (size_t)n * sizeof *d1.x) && d2.hist && d1.hist &&
                 !memcmp(d2.hist, d1.hist, (size_t)d1.in.history_len * sizeof *d1.hist),
             "%s GMRES(%d) dcgs2 GPU: two runs bitwise equal (x, iterations, history)", name, restart);
        printf("# %s GMRES(%d) dcgs2 GPU: %lld iterations, %.4f ms per iteration\n", name, restart,
               (long long)d1.in.iterations, d1.in.per_iter_ms);
    }
    result_free(&d1), result_free(&d2), result_free(&rf);
    free(b);
}

static void test_gm_dcgs2(void)
{
    sps_matrix *G = geometric_diag(1000, 3e4), *P = poisson(160), *Q = poisson(40);
    dcgs2_case("poisson 40x40", Q, 30, 3000, 1);
    orth_pc = "jacobi";
    dcgs2_case("poisson 40x40 + jacobi", Q, 30, 3000, 1);
    orth_pc = NULL;
    dcgs2_case("geometric diag 1000 (one cycle, column tiles)", G, 1000, 5000, 1);
    dcgs2_case("poisson 160x160 (25600 rows)", P, 30, 400, 1);
    sps_matrix_destroy(G);
    sps_matrix_destroy(P);
    sps_matrix_destroy(Q);
    const char *real[] = {"steam2", "jpwh_991", "rdb2048"};
    for (size_t i = 0; i < sizeof real / sizeof *real; i++) {
        sps_matrix *A = t_read_real(hctx, real[i]);
        if (!A) continue;
        dcgs2_case(real[i], A, 30, 3000, 1);
        sps_matrix_destroy(A);
    }
    /* make run's solve: GMRES(2000) on lns_3937 (the host would take a minute:
     * against the GPU's CGS2) */
    sps_matrix *L = t_read_real(hctx, "lns_3937");
    if (L) {
        orth_rtol = 1e-8;
        dcgs2_case("lns_3937", L, 2000, 20000, 0);
        orth_rtol = 1e-10;
        sps_matrix_destroy(L);
    }
}

T_MAIN_GPU("solvers on the GPU", gctx, hctx, test_vops, test_solves, test_syncs, test_issue17_solves,
           test_gm_fuse, test_gm_dcgs2)

#else

T_MAIN_NO_CUDA("solvers on the GPU")

#endif
