/* SPDX-License-Identifier: MIT */
/* spsolve/precond/cheby/cheby.c: Chebyshev polynomial preconditioning, the
 * host reference and the table (`cheby`, `cheby:degree=K,lanczos=M,ratio=R`).
 *
 * M^-1 = p(D^-1 A) D^-1, where p has degree K and 1 - t p(t) is the
 * Chebyshev polynomial T_{K+1}((theta - t) / delta) / T_{K+1}(theta / delta)
 * of the interval [a, b] = [theta - delta, theta + delta] that should hold the
 * spectrum of D^-1 A: z is K + 1 steps of the Chebyshev iteration (Saad,
 * Iterative Methods, alg. 12.1) for A z = r from z = 0, Jacobi-scaled:
 *
 *   res = r; d = D^-1 r / theta; z = d
 *   for k = 1..K: res -= A d; d = c1[k] d + c2[k] D^-1 res; z += d
 *
 * with rho_0 = delta / theta, rho_k = 1 / (2 theta / delta - rho_{k-1}),
 * c1[k] = rho_k rho_{k-1}, c2[k] = 2 rho_k / delta. K SpMVs (through the
 * operator) and K + 1 fused vector kernels per apply; no reduction, so no
 * synchronization. On the GPU, with an operator that gives its device rows,
 * each step's SpMV and vector kernel are one kernel (cheby_steps.cuh, fused=1).
 *
 * The interval, at setup: M Lanczos steps (as Jacobi-PCG on A x = s from a
 * fixed pseudo-random s; the CG coefficients give the Lanczos tridiagonal T
 * of D^-1 A in the D inner product), the extreme eigenvalues of T by Sturm
 * bisection: b = min(1.1 ritz_max, Gershgorin bound of D^-1 A) (never below
 * ritz_max), a = ritz_min (or b / ratio; at most b / 1.01).
 *
 * Symmetry: M^-1 = D^-1/2 p(D^-1/2 A D^-1/2) D^-1/2 is symmetric for
 * symmetric A. Definiteness (SPD A, D > 0): with R(t) = 1 - t p(t),
 *   0 < t < a:      T_{K+1} is increasing above 1, so 0 < R(t) < 1;
 *   a <= t <= b:    |R(t)| <= 1 / T_{K+1}(theta / delta) < 1;
 *   t > b:          R(t) < 0 (K + 1 odd), or 0 < R(t) < 1 while t < a + b
 *                   (K + 1 even: |(theta - t) / delta| < theta / delta),
 * so p(t) = (1 - R(t)) / t > 0 on the whole spectrum as long as
 * lambda_max(D^-1 A) < a + b: the 1.1 margin over the Ritz value (a lower
 * bound of lambda_max) and the Gershgorin cap (an upper bound) see to it. */
#include "cheby.h"

#if SPS_HAVE_CUDA
#include "gpu.h" /* sps__dfree */
#endif

#include <math.h>
#include <string.h>

/* ---- the interval and the coefficients (host and device setup) ---------- */

/* Eigenvalues of the symmetric tridiagonal T (diagonal t, off-diagonal e)
 * below x: the Sturm count of T - x I = L D L'. */
static int sturm_below(const double *t, const double *e, int m, double x)
{
    int cnt = 0;
    double q = 1.0;
    for (int j = 0; j < m; j++) {
        q = (t[j] - x) - (j ? e[j - 1] * e[j - 1] / q : 0.0);
        if (q == 0.0) q = -1e-300; /* on an eigenvalue: count it as below */
        if (q < 0) cnt++;
    }
    return cnt;
}

/* The k-th smallest eigenvalue (0-based) of T, by bisection within [lo, hi]. */
static double tri_eig(const double *t, const double *e, int m, int k, double lo, double hi)
{
    for (int it = 0; it < 200 && hi - lo > 1e-15 * fmax(fabs(lo), fabs(hi)); it++) {
        double mid = 0.5 * (lo + hi);
        if (sturm_below(t, e, m, mid) > k) hi = mid;
        else lo = mid;
    }
    return 0.5 * (lo + hi);
}

static void coefficients(sps_cheby *c)
{
    double theta = 0.5 * (c->lmax + c->lmin), delta = 0.5 * (c->lmax - c->lmin);
    double rho = delta / theta;
    c->c1[0] = 0.0;
    c->c2[0] = 1.0 / theta;
    for (int k = 1; k <= c->degree; k++) {
        double next = 1.0 / (2.0 * theta / delta - rho);
        c->c1[k] = next * rho;
        c->c2[k] = 2.0 * next / delta;
        rho = next;
    }
}

void sps__cheby_finish(sps_cheby *c, const sps_cheby_prm *prm, const double *alpha,
                       const double *beta, int m)
{
    double t[SPS_CHEBY_MAX_LANCZOS], e[SPS_CHEBY_MAX_LANCZOS];
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < m; j++) {
        t[j] = 1.0 / alpha[j] + (j ? beta[j - 1] / alpha[j - 1] : 0.0);
        e[j] = j + 1 < m ? sqrt(beta[j]) / alpha[j] : 0.0;
    }
    for (int j = 0; j < m; j++) { /* Gershgorin interval of T */
        double r = fabs(e[j]) + (j ? fabs(e[j - 1]) : 0.0);
        lo = fmin(lo, t[j] - r);
        hi = fmax(hi, t[j] + r);
    }
    c->steps = m;
    c->ritz_min = tri_eig(t, e, m, 0, lo, hi);
    c->ritz_max = tri_eig(t, e, m, m - 1, lo, hi);
    c->lmax = fmax(c->ritz_max, fmin(1.1 * c->ritz_max, c->gersh));
    c->lmin = prm->ratio > 0 ? c->lmax / prm->ratio : c->ritz_min;
    if (!(c->lmin > 0)) c->lmin = c->lmax / 30.0; /* an indefinite estimate: a guess */
    if (c->lmin > c->lmax / 1.01) c->lmin = c->lmax / 1.01; /* delta > 0 */
    coefficients(c);
}

sps_status sps__cheby_not_spd(sps_precond *pc, const char *what, double v)
{
    return sps__err(pc->ctx, SPS_ERR_UNSUPPORTED,
                    "cheby: the first Lanczos step found %s = %.3g <= 0: A is not positive "
                    "definite, and Chebyshev needs the spectrum of D^-1 A in (0, b] with D > 0; "
                    "try --precond ilu0 or jacobi",
                    what, v);
}

/* ---- host ---------------------------------------------------------------- */

static double dot(sps_idx n, const double *x, const double *y)
{
    double s = 0.0;
    for (sps_idx i = 0; i < n; i++) s += x[i] * y[i];
    return s;
}

/* Jacobi-PCG on A x = s: the Lanczos coefficients. Work: 4 vectors. */
static sps_status lanczos_host(sps_precond *pc, sps_cheby *c, const sps_cheby_prm *prm,
                               double *w)
{
    sps_idx n = pc->n;
    double *r = w, *z = w + n, *p = w + 2 * (size_t)n, *q = w + 3 * (size_t)n;
    double alpha[SPS_CHEBY_MAX_LANCZOS], beta[SPS_CHEBY_MAX_LANCZOS];
    int m = 0, steps = prm->lanczos < n ? prm->lanczos : (int)n;
    for (sps_idx i = 0; i < n; i++) {
        r[i] = sps__cheby_start(i);
        z[i] = p[i] = c->dinv[i] * r[i];
    }
    double rz = dot(n, r, z), rz0 = rz;
    if (!(rz0 > 0)) return sps__cheby_not_spd(pc, "s'D^-1 s", rz0);
    while (m < steps) {
        sps_status st = sps_operator_apply(c->op, 1.0, p, 0.0, q);
        if (st != SPS_OK) return st;
        double pq = dot(n, p, q);
        if (!(pq > 0)) {
            if (m == 0) return sps__cheby_not_spd(pc, "p'Ap", pq);
            break;
        }
        alpha[m] = rz / pq;
        for (sps_idx i = 0; i < n; i++) {
            r[i] -= alpha[m] * q[i];
            z[i] = c->dinv[i] * r[i];
        }
        double rzn = dot(n, r, z);
        beta[m++] = rzn / rz;
        if (!(rzn > 1e-30 * rz0)) break; /* converged (or indefinite): T is complete */
        rz = rzn;
        for (sps_idx i = 0; i < n; i++) p[i] = z[i] + beta[m - 1] * p[i];
    }
    sps__cheby_finish(c, prm, alpha, beta, m);
    return SPS_OK;
}

static sps_status apply_host(sps_precond *pc, const double *r, double *z)
{
    sps_cheby *c = pc->impl;
    sps_idx n = pc->n;
    double *res = c->res, *d = c->d;
    const double *dinv = c->dinv;
    for (sps_idx i = 0; i < n; i++) {
        res[i] = r[i];
        z[i] = d[i] = c->c2[0] * dinv[i] * r[i];
    }
    for (int k = 1; k <= c->degree; k++) {
        sps_status st = sps_operator_apply(c->op, -1.0, d, 1.0, res);
        if (st != SPS_OK) return st;
        for (sps_idx i = 0; i < n; i++) {
            d[i] = c->c1[k] * d[i] + c->c2[k] * dinv[i] * res[i];
            z[i] += d[i];
        }
    }
    return SPS_OK;
}

static void host_destroy(sps_precond *pc)
{
    sps_cheby *c = pc->impl;
    if (!c) return;
    if (c->own_op) sps_operator_destroy(c->op);
    sps__free(c->dinv);
    sps__free(c->res);
    sps__free(c->d);
    sps__free(c);
    pc->impl = NULL;
}

/* max_i sum_j |a_ij / a_ii| (the diagonal is known to be nonzero). */
static double gershgorin(const sps_csr *A, const double *dinv)
{
    double g = 0.0;
    for (sps_idx i = 0; i < A->nrows; i++) {
        double s = 0.0;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) s += fabs(A->val[p]);
        g = fmax(g, s * fabs(dinv[i]));
    }
    return g;
}

/* Host: everything. GPU context: D^-1 and the Gershgorin bound only. */
static sps_status cheby_setup(sps_precond *pc, const sps_pc_input *in)
{
    const sps_cheby_prm *prm = pc->prm;
    sps_cheby *c = sps__calloc(1, sizeof *c);
    if (!c) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "cheby: out of memory");
    pc->impl = c;
    pc->destroy = host_destroy;
    pc->apply = apply_host;
    c->degree = prm->degree;
    sps_status st = sps__pc_inverse_diag(pc, &in->A->A, &c->dinv);
    if (st != SPS_OK) return st;
    c->gersh = gershgorin(&in->A->A, c->dinv);
    if (in->gpu) return SPS_OK;
    c->op = in->op;
    if (!c->op) {
        st = sps_operator_create(pc->ctx, in->A, "csr-vector", NULL, &c->op);
        if (st != SPS_OK) return st;
        c->own_op = 1;
    }
    size_t nb = sps__mul_size((size_t)pc->n, sizeof(double));
    double *w = sps__malloc(sps__mul_size(nb, 4));
    c->res = sps__malloc(nb);
    c->d = sps__malloc(nb);
    if (!w || !c->res || !c->d) st = sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "cheby: out of memory");
    else st = lanczos_host(pc, c, prm, w);
    sps__free(w);
    return st;
}

#if SPS_HAVE_CUDA
static sps_status cheby_setup_dev(sps_precond *pc, const sps_pc_input *in, void *host)
{
    sps_operator *op = in->op;
    if (!op) {
        sps_status st = sps_operator_create(pc->ctx, in->A, "csr-vector", NULL, &op);
        if (st != SPS_OK) return st;
    }
    return sps__cheby_gpu(pc, host, op, !in->op);
}

/* GPU context: D^-1 and the Gershgorin bound in one device pass over the
 * matrix's device copy (the host passes cost 145 ms on poisson3d:160), then
 * the Lanczos steps on the device as before. */
static sps_status cheby_setup_gpu(sps_precond *pc, const sps_pc_input *in)
{
    sps_cheby c;
    memset(&c, 0, sizeof c);
    c.degree = ((const sps_cheby_prm *)pc->prm)->degree;
    double *d = NULL;
    int refused = 0;
    sps_status st = sps__pc_gpu_diag_scan(pc->ctx, in->A, 0, &d, &c.gersh, &refused);
    if (st != SPS_OK) return st;
    if (refused) return SPS_ERR_UNSUPPORTED;
    sps_operator *op = in->op;
    if (!op && (st = sps_operator_create(pc->ctx, in->A, "csr-vector", NULL, &op)) != SPS_OK) {
        sps__dfree(d);
        return st;
    }
    return sps__cheby_gpu_from(pc, &c, d, op, !in->op);
}
#endif

/* ---- parameters and table ------------------------------------------------ */

static void cheby_default(void *p)
{
    sps_cheby_prm *prm = p;
    prm->degree = 2;
    prm->lanczos = 16;
    prm->ratio = 0.0;
    prm->fused = 1;
}

static sps_status cheby_set(sps_context *ctx, void *p, const char *key, const char *value)
{
    sps_cheby_prm *prm = p;
    if (strcmp(key, "degree") == 0)
        return sps__pc_int(ctx, "cheby", key, value, 0, SPS_CHEBY_MAX_DEGREE, &prm->degree);
    if (strcmp(key, "lanczos") == 0)
        return sps__pc_int(ctx, "cheby", key, value, 1, SPS_CHEBY_MAX_LANCZOS, &prm->lanczos);
    if (strcmp(key, "fused") == 0) return sps__pc_int(ctx, "cheby", key, value, 0, 1, &prm->fused);
    double ratio = 0.0;
    sps_status st = sps__pc_num(ctx, "cheby", key, value, &ratio);
    if (st == SPS_OK && !(ratio > 1.0))
        st = sps__err(ctx, SPS_ERR_INVALID_ARG, "cheby: ratio='%s' must be above 1", value);
    prm->ratio = ratio;
    return st;
}

const sps_pc_type sps_pc_cheby = {
    .name = "cheby",
    .summary = "Chebyshev polynomial in D^-1 A (degree=K SpMVs per apply, default 2; "
               "bounds from lanczos=16 steps; GPU: fused=1 one kernel per step on dia or short-row "
               "CSR operators, fused=0 SpMV + vector kernel); SPD matrices",
    .caps = SPS_PCT_SYMMETRIC | SPS_PCT_USES_OP,
    .keys = "degree, lanczos, ratio, fused",
    .prm_size = sizeof(sps_cheby_prm),
    .prm_default = cheby_default,
    .prm_set = cheby_set,
    .setup_host = cheby_setup,
    .setup_dev = SPS_PC_DEV(cheby_setup_dev),
    .setup_gpu = SPS_PC_DEV(cheby_setup_gpu),
};
