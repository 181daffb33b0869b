/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_cg_fused.c: the fused engine's CG operations on
 * the host (solvers/cg/cg_host.c, the specification of cg_kernels.cu):
 * iterations made of finish_parts (p'q, ungated, recording xiter), resid and
 * xp give bitwise the iterates of the classic operations (dot, update,
 * direction), with and without Jacobi: same reason, same iteration count,
 * the same x, including x brought up to date once in the iteration that
 * stops, and no change from iterations enqueued past the stop. */
#include "check.h"
#include "internal.h"
#include "solvers/cg/cg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 200, NOOP = 3 };

typedef struct run {
    sps_kws w;
    sps_kstate st;
    sps_cg_xstate ms;
    double red[64];
    double x[N], r[N], p[N], q[N], z[N], d[N];
} run;

/* y = A p for tridiag(-1, 2.05 + i/N, -1). */
static void matvec(const double *p, double *y)
{
    for (int i = 0; i < N; i++) {
        double s = (2.05 + (double)i / N) * p[i];
        if (i > 0) s -= p[i - 1];
        if (i < N - 1) s -= p[i + 1];
        y[i] = s;
    }
}

static void init(run *u, int jac)
{
    memset(u, 0, sizeof *u);
    u->w.ops = &sps__vops_host;
    u->w.n = N;
    u->w.st = &u->st;
    u->w.ms = &u->ms;
    u->w.red = u->red;
    uint64_t seed = 9;
    double bb = 0, rz = 0;
    for (int i = 0; i < N; i++) {
        u->r[i] = t_rand(&seed);
        u->d[i] = 1.0 / (2.05 + (double)i / N);
        u->z[i] = jac ? u->d[i] * u->r[i] : u->r[i];
        u->p[i] = u->z[i];
        bb += u->r[i] * u->r[i];
        rz += u->r[i] * u->z[i];
    }
    u->st.maxit = 1000;
    u->st.has_pc = jac;
    u->st.dtol = 1e5;
    u->st.r0norm = u->st.rnorm = sqrt(bb);
    u->st.tol = 1e-10 * sqrt(bb);
    u->st.tol_kind = SPS_CONVERGED_RTOL;
    u->ms.cg.rho = rz;
}

static void classic_iter(run *u, int jac)
{
    const sps_cg_ops *co = &sps__cg_ops_host;
    sps_kws *w = &u->w;
    matvec(u->p, u->q);
    sps_kfin f = sps__kfin(co->finish, NULL, SPS_CG_ALPHA, 1, 0);
    const double *a[1] = {u->p}, *b[1] = {u->q};
    sps__vops_host.dot(w, 1, a, b, &f);
    co->update(w, u->x, u->r, u->p, u->q, jac ? u->d : NULL, jac ? u->z : u->r,
               jac ? SPS_CG_RES_FUSED : SPS_CG_RES_PLAIN);
    co->direction(w, u->p, jac ? u->z : u->r);
}

static void fused_iter(run *u, int jac)
{
    const sps_cg_ops *co = &sps__cg_ops_host;
    sps_kws *w = &u->w;
    matvec(u->p, u->q);
    double pq = 0;
    for (int i = 0; i < N; i++) pq += u->p[i] * u->q[i];
    u->red[0] = pq;
    co->finish_parts(w, 1, SPS_CG_ALPHA_X, 0);
    co->resid(w, u->r, u->q, jac ? u->d : NULL, jac ? u->z : u->r, jac ? SPS_CG_RES_FUSED : SPS_CG_RES_PLAIN);
    co->xp(w, u->x, u->p, jac ? u->z : u->r);
}

static void test_case(int jac)
{
    static run c, f;
    init(&c, jac);
    init(&f, jac);
    int it = 0;
    while (!c.st.stop && it < 2000) classic_iter(&c, jac), it++;
    for (int k = 0; k < NOOP; k++) classic_iter(&c, jac);
    it = 0;
    while (!f.st.stop && it < 2000) fused_iter(&f, jac), it++;
    double xs[N];
    memcpy(xs, f.x, sizeof xs);
    for (int k = 0; k < NOOP; k++) fused_iter(&f, jac);
    const char *name = jac ? "cg + jacobi" : "cg";
    T_OK(c.st.reason == SPS_CONVERGED_RTOL && c.st.iter > 10, "%s classic: converged after %lld iterations",
         name, (long long)c.st.iter);
    T_OK(f.st.reason == c.st.reason && f.st.iter == c.st.iter, "%s fused: %s after %lld iterations (classic %lld)",
         name, sps_reason_str((sps_reason)f.st.reason), (long long)f.st.iter, (long long)c.st.iter);
    T_OK(memcmp(f.x, c.x, sizeof f.x) == 0, "%s fused: x bitwise classic's (updated once at the stop)", name);
    T_OK(memcmp(f.x, xs, sizeof xs) == 0, "%s fused: %d iterations past the stop leave x alone", name, NOOP);
    T_OK(memcmp(f.r, c.r, sizeof f.r) == 0 && f.st.rnorm == c.st.rnorm, "%s fused: r and ||r|| bitwise classic's",
         name);
    T_OK(f.ms.xiter == (double)f.st.iter, "%s fused: xiter records the last iteration", name);
}

int main(void)
{
    test_case(0);
    test_case(1);
    return t_done();
}
