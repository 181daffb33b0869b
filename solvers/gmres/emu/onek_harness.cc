/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/onek_harness.cc: gmres_kernels.cu's one-kernel
 * path (k_gm_onekernel) run on the CPU (onek_emu.h: one block of 1024
 * fibers) against the host driver's steps (gm_iterate's order over
 * sps__gm_ops_host): one cycle from the same start, then the state (iter,
 * stop, reason, kdim), the history, H's columns, g, cs, sn and the basis
 * compared within 1e-9, and the kernel with 0, 3 and all basis columns in
 * shared memory (kc) bitwise the same.
 * Cases: CSR and DIA rows, no and Jacobi preconditioning, 1, 2, 4, 8 and 16
 * rows a thread, a stop inside the cycle (converged, maxit), the second
 * Gram-Schmidt pass (a matrix near the identity), a start at j0 > 0. Built
 * and run by run_onek.sh. The cluster kernel (k_gm_cluster) likewise over
 * C = 1, 2, 8, 16 emulated blocks (SPS_EMU_CLUSTERS lists others), with an
 * arrow matrix (one row of n entries) and a matrix with an empty row too:
 * blocks of 1 to 129 rows, and blocks that own none (n = 33, C = 16).
 * Without Jacobi, where the device has a profiling instantiation
 * (k_gm_cluster<false, B, 1, true>, B <= 512), it runs too: bitwise the
 * plain kernel's cycle, and its records sound (prof_check). */
#include "onek_emu.h"
#include "onek_rows.h"
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

emu_block *emu_b;
dim3 threadIdx, blockIdx, blockDim, gridDim;
double *emu_dyn;
emu_shape *emu_grid;

namespace {
#include "onek.inc"
}

static int nfail, nok;

/* tridiag(lo, d, up), as CSR and as DIA (offsets -1, 0, 1). */
static mat tri(int n, double lo, double d, double up)
{
    mat A;
    A.n = n;
    A.rp.push_back(0);
    for (int i = 0; i < n; i++) {
        if (i > 0) A.ci.push_back(i - 1), A.v.push_back(lo);
        A.ci.push_back(i), A.v.push_back(d);
        if (i < n - 1) A.ci.push_back(i + 1), A.v.push_back(up);
        A.rp.push_back((int)A.ci.size());
    }
    A.off = {-1, 0, 1};
    A.dval.assign(3 * (size_t)n, 0.0);
    for (int i = 0; i < n; i++) A.dval[i] = lo, A.dval[n + i] = d, A.dval[2 * (size_t)n + i] = up;
    return A;
}

/* Everything a cycle changes. */
struct gm_all {
    int n, m;
    std::vector<double> V, H, cs, sn, g, y, h2, hist, w, z;
    sps_kstate st;
    sps_gm_state gs;
    sps_kgm kgm()
    {
        sps_kgm k;
        k.H = H.data(), k.cs = cs.data(), k.sn = sn.data(), k.g = g.data(), k.y = y.data(), k.h2 = h2.data();
        return k;
    }
};

static gm_all start(const mat &A, int m, int64_t maxit, double rtol)
{
    gm_all s;
    const int n = A.n;
    s.n = n, s.m = m;
    s.V.assign((size_t)n * (m + 1), 0.0);
    s.H.assign((size_t)(m + 1) * m, 0.0);
    s.cs.assign(m, 0.0), s.sn.assign(m, 0.0), s.g.assign(m + 1, 0.0), s.y.assign(m, 0.0);
    s.h2.assign(m + 1, 0.0);
    s.hist.assign(maxit + 2, 0.0);
    s.w.assign(n, 0.0), s.z.assign(n, 0.0);
    double bb = 0;
    std::vector<double> b(n);
    for (int i = 0; i < n; i++) b[i] = sps__gm_bench_val((uint64_t)i, 7), bb += b[i] * b[i];
    memset(&s.st, 0, sizeof s.st);
    memset(&s.gs, 0, sizeof s.gs);
    const double bn = sqrt(bb);
    s.st.maxit = maxit, s.st.rtol = rtol, s.st.dtol = 1e5, s.st.bnorm = bn, s.st.tol = rtol * bn;
    s.st.tol_kind = SPS_CONVERGED_RTOL, s.st.r0norm = s.st.rnorm = bn;
    s.gs.m = m, s.gs.stag_win = INT64_MAX;
    s.hist[0] = bn;
    sps__gm_start(&s.st, &s.gs, 0, bb, s.kgm());
    for (int i = 0; i < n; i++) s.V[i] = b[i] / s.g[0];
    return s;
}

static void host_spmv(const mat &A, const double *x, double *y)
{
    for (int i = 0; i < A.n; i++) {
        double t = 0;
        for (int p = A.rp[i]; p < A.rp[i + 1]; p++) t += A.v[p] * x[A.ci[p]];
        y[i] = t;
    }
}

/* The host ops' workspace over s (red: the reduction's one sum). */
static void host_ws(gm_all &s, double *red, sps_kws &w, sps_gm_ws &g)
{
    memset(&w, 0, sizeof w);
    w.n = s.n, w.st = &s.st, w.ms = &s.gs, w.hist = s.hist.data(), w.red = red, w.nsum = 1;
    memset(&g, 0, sizeof g);
    g.V = s.V.data(), g.gm = s.kgm(), g.m = s.m;
}

/* gm_iterate's steps j0 .. jend-1 on the host ops; stops with the state. */
static void host_steps(const mat &A, const double *dinv, gm_all &s, int j0, int jend)
{
    const sps_gm_ops *go = &sps__gm_ops_host;
    const int n = s.n, m = s.m;
    double red[8] = {0};
    sps_kws w;
    sps_gm_ws g;
    host_ws(s, red, w, g);
    for (int j = j0; j < jend && !s.st.stop; j++) {
        const double *vj = s.V.data() + (size_t)j * n, *z = vj;
        if (dinv) {
            for (int i = 0; i < n; i++) s.z[i] = dinv[i] * vj[i];
            z = s.z.data();
        }
        host_spmv(A, z, s.w.data());
        double *h = s.H.data() + (size_t)j * (m + 1);
        go->gemv_t(&w, &g, j + 1, s.w.data(), h, 0);
        go->gemv_n(&w, &g, j + 1, h, s.w.data(), 0);
        red[0] = 0;
        for (int i = 0; i < n; i++) red[0] += s.w[i] * s.w[i];
        sps_kfin f = sps__kfin(go->finish, &g, SPS_GM_CHECK, 1, j);
        f.fn(&w, &f);
        go->gemv_t(&w, &g, j + 1, s.w.data(), s.h2.data(), 1);
        go->gemv_n(&w, &g, j + 1, s.h2.data(), s.w.data(), 1);
        red[0] = 0;
        for (int i = 0; i < n; i++) red[0] += s.w[i] * s.w[i];
        f = sps__kfin(go->finish, &g, SPS_GM_ARNOLDI, 1, j);
        f.fn(&w, &f);
        if (j + 1 < m) go->scale(&w, &g, j, s.w.data());
    }
}

static int reorth_steps; /* second passes the host took (over all cases) */
/* The cycles a launch runs (cycles_case: more than one, restarting on the
 * device), x and b for its restarts. */
static gc_cycles emu_cy = {1, nullptr, nullptr};

template <bool JAC, int R>
static void emu_kernel(const mat &A, int dia, const double *dinv, gm_all &s, int j0, int kc)
{
    const sps_dev_rows rows = rows_of(A, dia);
    const int n = s.n, m = s.m;
    sps_kgm gg = s.kgm();
    double *V = s.V.data(), *hist = s.hist.data();
    sps_kstate *st = &s.st;
    sps_gm_state *gs = &s.gs;
    emu_run_block(OKT, (size_t)n + 5 * (size_t)m + 3 + (size_t)kc * n,
                  [&] { k_gm_onekernel<JAC, R>(n, m, j0, kc, rows, V, gg, dinv, st, gs, hist, emu_cy); });
}

/* The cluster kernel over C emulated blocks of B fibers (gc_pick's shapes). */
static int emu_C; /* 0: the one-block kernel */
static int views_run; /* cluster runs through a DIA view */
static int emu_clusters_ran;
/* Not null: the profiling instantiation runs where the device has one
 * (k_gm_cluster<false, B, 1, true>, B <= 512), its records in here. */
static std::vector<long long> *emu_prof;
static int prof_cases; /* cases the profiling instantiation ran */

/* 1: the cluster kernel reads a CSR through its DIA view (gc_view) where
 * the matrix has at most SPS_VIEW_DIAGS diagonals. */
static int emu_view;

/* A CSR's view: its distinct diagonals ascending (none past SPS_VIEW_DIAGS). */
static gc_view view_of(const mat &A)
{
    std::vector<int> o;
    for (int i = 0; i < A.n; i++)
        for (int p = A.rp[i]; p < A.rp[i + 1]; p++) o.push_back(A.ci[p] - i);
    std::sort(o.begin(), o.end());
    o.erase(std::unique(o.begin(), o.end()), o.end());
    gc_view v = {};
    if (o.empty() || o.size() > SPS_VIEW_DIAGS) return v;
    v.nd = (int)o.size();
    for (int d = 0; d < v.nd; d++) v.off[d] = o[d];
    return v;
}

template <bool JAC, int B, int R>
static void emu_cluster(const mat &A, int dia, const double *dinv, gm_all &s, int j0, int kc)
{
    const sps_dev_rows rows = rows_of(A, dia);
    const int n = s.n, m = s.m, C = emu_C, L = (n + C - 1) / C;
    sps_kgm gg = s.kgm();
    double *V = s.V.data(), *hist = s.hist.data();
    sps_kstate *st = &s.st;
    sps_gm_state *gs = &s.gs;
    const gc_view vw = emu_view && !dia ? view_of(A) : gc_view{};
    if (vw.nd) views_run++;
    const size_t dyn = gc_layout(m, L, B / 32, C, vw.nd).Vs + (size_t)kc * (size_t)L;
    if constexpr (!JAC && R == 1 && B <= 512)
        if (emu_prof) {
            const gc_prof pf = {emu_prof->data(), (int)(emu_prof->size() / (GC_CMAX * SPS_GCP_SLOTS))};
            emu_run_cluster(
                C, B, dyn,
                [&] { k_gm_cluster<JAC, B, R, true>(n, m, j0, kc, L, rows, V, gg, dinv, st, gs, hist, pf, emu_cy, vw); },
                64);
            prof_cases++;
            return;
        }
    emu_run_cluster(
        C, B, dyn,
        [&] {
            k_gm_cluster<JAC, B, R>(n, m, j0, kc, L, rows, V, gg, dinv, st, gs, hist, gc_prof{nullptr, 0}, emu_cy, vw);
        },
        64);
}

template <bool JAC>
static void emu_cluster_pick(const mat &A, int dia, const double *dinv, gm_all &s, int j0, int kc)
{
    const int L = (s.n + emu_C - 1) / emu_C;
    if (L <= 256) emu_cluster<JAC, 256, 1>(A, dia, dinv, s, j0, kc);
    else if (L <= 512) emu_cluster<JAC, 512, 1>(A, dia, dinv, s, j0, kc);
    else if (L <= 1024) emu_cluster<JAC, 1024, 1>(A, dia, dinv, s, j0, kc);
    else if (L <= 2048) emu_cluster<JAC, 1024, 2>(A, dia, dinv, s, j0, kc);
    else emu_cluster<JAC, 1024, 4>(A, dia, dinv, s, j0, kc);
}

template <bool JAC>
static void emu_pick(const mat &A, int dia, const double *dinv, gm_all &s, int j0, int kc)
{
    const int n = s.n;
    if (emu_C > 0) emu_cluster_pick<JAC>(A, dia, dinv, s, j0, kc);
    else if (n <= OKT) emu_kernel<JAC, 1>(A, dia, dinv, s, j0, kc);
    else if (n <= 2 * OKT) emu_kernel<JAC, 2>(A, dia, dinv, s, j0, kc);
    else if (n <= 4 * OKT) emu_kernel<JAC, 4>(A, dia, dinv, s, j0, kc);
    else if (n <= 8 * OKT) emu_kernel<JAC, 8>(A, dia, dinv, s, j0, kc);
    else emu_kernel<JAC, 16>(A, dia, dinv, s, j0, kc);
}

static double vdiff(const double *a, const double *b, size_t len)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < len; i++) d = std::max(d, fabs(a[i] - b[i])), s = std::max(s, fabs(b[i]));
    return d / (s > 0 ? s : 1);
}

static bool same_all(const gm_all &a, const gm_all &e)
{
    return a.V == e.V && a.H == e.H && a.g == e.g && a.cs == e.cs && a.sn == e.sn && a.hist == e.hist &&
           memcmp(&a.st, &e.st, sizeof a.st) == 0 && memcmp(&a.gs, &e.gs, sizeof a.gs) == 0;
}

/* One block's marks of a step: rising in the order taken, j, the globaltimer. */
static bool prof_row(const long long *r, int64_t j)
{
    const int last = r[SPS_GCP_REORTH] ? SPS_GCP_PASS2 + 7 : SPS_GCP_PASS1 + 7;
    long long prev = r[SPS_GCP_START];
    bool ok = prev > 0 && r[SPS_GCP_J] == j && r[SPS_GCP_GT1] > r[SPS_GCP_GT0];
    for (int s = SPS_GCP_SPMV; s <= SPS_GCP_END; s++) {
        if (s > last && s < SPS_GCP_HCOL) {
            ok = ok && r[s] == 0;
            continue;
        }
        ok = ok && r[s] > prev;
        prev = r[s];
    }
    return ok;
}

/* The profiling instantiation from the start e (kc columns, no Jacobi):
 * bitwise ref's cycle, and a row per step (the iteration count at its
 * start) in every block, none elsewhere, the second passes the host's. */
static bool prof_check(const mat &A, int dia, gm_all e, int j0, int kc, const gm_all &ref, int64_t it0, int reorth)
{
    const size_t row = (size_t)GC_CMAX * SPS_GCP_SLOTS, cap = (size_t)ref.st.iter + 2;
    std::vector<long long> rec(cap * row, 0);
    const int before = prof_cases;
    emu_prof = &rec;
    emu_pick<false>(A, dia, nullptr, e, j0, kc);
    emu_prof = nullptr;
    if (prof_cases == before) return true; /* a shape without one */
    bool ok = same_all(e, ref);
    int re = 0;
    for (size_t it = 0; it < cap; it++)
        for (int b = 0; b < GC_CMAX; b++) {
            const long long *r = rec.data() + it * row + (size_t)b * SPS_GCP_SLOTS;
            if ((int64_t)it >= it0 && (int64_t)it < ref.st.iter && b < emu_C) {
                ok = ok && prof_row(r, j0 + ((int64_t)it - it0));
                re += b == 0 && r[SPS_GCP_REORTH] != 0;
            } else
                for (int k = 0; k < SPS_GCP_SLOTS; k++) ok = ok && r[k] == 0;
        }
    return ok && re == reorth;
}

static void run_case(const char *name, const mat &A, int dia, int jac, int m, int64_t maxit, double rtol, int j0)
{
    const int n = A.n;
    std::vector<double> dv(n, 1.0);
    for (int i = 0; i < n; i++)
        for (int p = A.rp[i]; p < A.rp[i + 1]; p++)
            if (A.ci[p] == i) dv[i] = 1.0 / A.v[p];
    const double *dinv = jac ? dv.data() : nullptr;
    gm_all h = start(A, m, maxit, rtol);
    host_steps(A, dinv, h, 0, j0);
    gm_all e1 = h, e2 = h, e3 = h, e4 = h;
    int64_t it0 = h.st.iter;
    int reorth = 0;
    /* count the host's second passes step by step */
    for (int j = j0; j < m && !h.st.stop; j++) {
        host_steps(A, dinv, h, j, j + 1);
        reorth += (int)h.gs.reorth;
    }
    reorth_steps += reorth;
    /* the basis columns kept in shared memory: none, 3, all read */
    const int kcs[3] = {0, std::min(m, 3), m};
    gm_all *es[3] = {&e1, &e2, &e3};
    for (int q = 0; q < 3; q++) {
        emu_view = q == 2; /* the last through the DIA view where it applies: bitwise the others */
        if (jac) emu_pick<true>(A, dia, dinv, *es[q], j0, kcs[q]);
        else emu_pick<false>(A, dia, dinv, *es[q], j0, kcs[q]);
        emu_view = 0;
    }
    const int64_t k = h.gs.kdim, it = h.st.iter;
    bool same_state = e1.st.iter == it && e1.st.stop == h.st.stop && e1.st.reason == h.st.reason &&
                      e1.gs.kdim == k;
    double dh = vdiff(e1.hist.data() + 1, h.hist.data() + 1, (size_t)it), dH = 0, dV = 0;
    for (int64_t j = 0; j < k; j++)
        dH = std::max(dH, vdiff(e1.H.data() + j * (m + 1), h.H.data() + j * (m + 1), (size_t)j + 2));
    const int64_t vcols = h.st.stop ? k : m; /* columns written: v_0 .. v_kdim (v_m never) */
    for (int64_t j = 0; j < vcols; j++)
        dV = std::max(dV, vdiff(e1.V.data() + j * n, h.V.data() + j * n, (size_t)n));
    double dg = vdiff(e1.g.data(), h.g.data(), (size_t)k + 1);
    double dc = std::max(vdiff(e1.cs.data(), h.cs.data(), (size_t)k), vdiff(e1.sn.data(), h.sn.data(), (size_t)k));
    bool bit = true;
    for (int q = 1; q < 3; q++) bit = bit && same_all(e1, *es[q]);
    if (emu_C > 0 && !jac) bit = bit && prof_check(A, dia, e4, j0, kcs[1], e2, it0, reorth);
    const double tol = 1e-9;
    const bool ok = same_state && dh <= tol && dH <= tol && dV <= tol && dg <= tol && dc <= tol && bit;
    printf("%s %s C=%d n=%d m=%d %s%s j0=%d: %lld steps (host %lld, from %lld), %s (reason %lld, host %lld), kdim %lld; "
           "diff hist %.1e H %.1e V %.1e g %.1e cs/sn %.1e; bitwise %d\n",
           ok ? "ok  " : "FAIL", name, emu_C, n, m, dia ? "dia" : "csr", jac ? "+jacobi" : "", j0,
           (long long)(e1.st.iter - it0), (long long)(it - it0), (long long)it0,
           e1.st.stop ? "stopped" : "cycle full", (long long)e1.st.reason, (long long)h.st.reason, (long long)e1.gs.kdim, dh, dH, dV,
           dg, dc, (int)bit);
    ok ? nok++ : nfail++;
}

/* gm_end_cycle on the host ops: y = R^-1 g over the state's kdim columns,
 * x += [D^-1] V y. */
static void end_cycle(gm_all &s, std::vector<double> &x, const double *dinv)
{
    const sps_gm_ops *go = &sps__gm_ops_host;
    double red[8] = {0};
    sps_kws w;
    sps_gm_ws g;
    host_ws(s, red, w, g);
    go->solve(&w, &g);
    go->update(&w, &g, x.data(), dinv, nullptr);
}

/* Whole solves: the host's cycles (host_steps, then gm_restart: end_cycle,
 * r = b - A x, the SPS_GM_RESTART finish, v_0 = r / g[0]) against the one
 * kernel or the cluster kernel restarting on the device (emu_cy: up to 1000 cycles a launch), then
 * the caller's gm_restart (end_cycle: nothing where the device stopped at a
 * restart, kdim 0). The state (iterations, restarts, stop, reason), the
 * history and x within 1e-9; a second run bitwise the first. maxit or rtol
 * so that the solve spans several cycles; stag > 0: a stagnation window of
 * that many cycles (0: off). */
static void cycles_case(const char *name, const mat &A, int dia, int jac, int m, int64_t maxit, double rtol,
                        int64_t stag = 0)
{
    const int n = A.n;
    std::vector<double> dv(n, 1.0), b(n);
    for (int i = 0; i < n; i++) {
        b[i] = sps__gm_bench_val((uint64_t)i, 7);
        for (int p = A.rp[i]; p < A.rp[i + 1]; p++)
            if (A.ci[p] == i) dv[i] = 1.0 / A.v[p];
    }
    const double *dinv = jac ? dv.data() : nullptr;
    gm_all h = start(A, m, maxit, rtol);
    if (stag > 0) h.gs.stag_win = stag;
    gm_all e = h, e2 = h;
    std::vector<double> xh(n, 0.0), xe(n, 0.0), xe2(n, 0.0), r(n);
    for (;;) {
        host_steps(A, dinv, h, 0, m);
        end_cycle(h, xh, dinv);
        if (h.st.stop) break;
        host_spmv(A, xh.data(), r.data());
        double rr = 0.0;
        for (int i = 0; i < n; i++) r[i] = b[i] - r[i], rr += r[i] * r[i];
        sps__gm_finish(SPS_GM_RESTART, &h.st, &h.gs, &rr, h.kgm());
        if (h.st.stop) break;
        for (int i = 0; i < n; i++) h.V[i] = r[i] / h.g[0];
    }
    gm_all *es[2] = {&e, &e2};
    std::vector<double> *xs[2] = {&xe, &xe2};
    for (int q = 0; q < 2; q++) {
        emu_cy = gc_cycles{1000, xs[q]->data(), b.data()};
        if (jac) emu_pick<true>(A, dia, dinv, *es[q], 0, std::min(m, 3));
        else emu_pick<false>(A, dia, dinv, *es[q], 0, std::min(m, 3));
        emu_cy = gc_cycles{1, nullptr, nullptr};
        end_cycle(*es[q], *xs[q], dinv);
    }
    const int64_t it = h.st.iter;
    const bool same_state = e.st.iter == it && e.st.restarts == h.st.restarts && e.st.stop == h.st.stop &&
                            e.st.reason == h.st.reason;
    const double dh = vdiff(e.hist.data() + 1, h.hist.data() + 1, (size_t)it), dx = vdiff(xe.data(), xh.data(), n);
    const bool bit = xe == xe2 && same_all(e, e2);
    const bool ok = same_state && dh <= 1e-9 && dx <= 1e-9 && bit && h.st.restarts > 0;
    printf("%s %s (cycles) C=%d n=%d m=%d %s%s: %lld iterations (host %lld), %lld restarts (host %lld), reason %lld "
           "(host %lld); diff hist %.1e x %.1e; bitwise %d\n",
           ok ? "ok  " : "FAIL", name, emu_C, n, m, dia ? "dia" : "csr", jac ? "+jacobi" : "", (long long)e.st.iter,
           (long long)it, (long long)e.st.restarts, (long long)h.st.restarts, (long long)e.st.reason,
           (long long)h.st.reason, dh, dx, (int)bit);
    ok ? nok++ : nfail++;
}

/* ntridiag(-1.3, 2.1, -0.7) with row and column 0 full (0.4 / n): one long
 * row that reads every block's z, and a column every block's rows read. CSR. */
static mat arrow(int n)
{
    mat A;
    A.n = n;
    A.rp.push_back(0);
    for (int i = 0; i < n; i++) {
        if (i == 0)
            for (int c = 0; c < n; c++) A.ci.push_back(c), A.v.push_back(c == 0 ? 2.1 : c == 1 ? -0.7 : 0.4 / n);
        else {
            if (i > 1) A.ci.push_back(0), A.v.push_back(0.4 / n);
            A.ci.push_back(i - 1), A.v.push_back(-1.3);
            A.ci.push_back(i), A.v.push_back(2.1);
            if (i < n - 1) A.ci.push_back(i + 1), A.v.push_back(-0.7);
        }
        A.rp.push_back((int)A.ci.size());
    }
    return A;
}

/* ntridiag with row and column k empty (the rest of the coupling kept): a
 * row of no terms (its SpMV entry 0), a z entry no row reads. The harness's
 * b is nonzero there, a component A never reaches: a residual that cannot
 * fall below it, but one cycle's steps still agree on every path. CSR. */
static mat empty_row(int n, int k)
{
    mat A;
    A.n = n;
    A.rp.push_back(0);
    for (int i = 0; i < n; i++) {
        if (i != k)
            for (int c = i - 1; c <= i + 1; c++)
                if (c >= 0 && c < n && c != k) A.ci.push_back(c), A.v.push_back(c < i ? -1.3 : c == i ? 2.1 : -0.7);
        A.rp.push_back((int)A.ci.size());
    }
    return A;
}

/* A 5-point band (offsets -k, -1, 0, 1, k; every entry in range kept) of
 * size n: the SpMV reads k rows of the neighbouring blocks. CSR and DIA. */
static mat band5(int n, int k)
{
    mat A;
    A.n = n;
    A.off = {-k, -1, 0, 1, k};
    const double val[5] = {-0.9, -1.3, 4.3, -0.7, -1.1};
    A.dval.assign(5 * (size_t)n, 0.0);
    A.rp.push_back(0);
    for (int i = 0; i < n; i++) {
        for (int d = 0; d < 5; d++) {
            const int c = i + A.off[d];
            if (c < 0 || c >= n) continue;
            A.ci.push_back(c), A.v.push_back(val[d]);
            A.dval[(size_t)d * n + i] = val[d];
        }
        A.rp.push_back((int)A.ci.size());
    }
    return A;
}

/* The cases both kernels run (the one block, emu_C = 0, and each cluster):
 * tridiagonals with and without Jacobi, CSR and DIA, a start inside the
 * cycle, a stop inside it, maxit, and I + small (the first pass cancels most
 * of w). */
static void small_cases(void)
{
    const mat t31 = tri(31, -1.3, 2.1, -0.7), t33 = tri(33, -1.3, 2.1, -0.7), t64 = tri(64, -0.5, 4.0, -0.3);
    const mat near = tri(40, -0.004, 1.0, 0.011);
    run_case("ntridiag", t31, 0, 0, 10, 2000, 1e-10, 0);
    run_case("ntridiag", t33, 1, 1, 30, 2000, 1e-10, 0);
    run_case("ntridiag", t31, 1, 0, 10, 2000, 1e-10, 3);
    run_case("dominant (stops inside the cycle)", t64, 0, 1, 30, 2000, 1e-10, 0);
    run_case("ntridiag (maxit 5)", t33, 0, 0, 10, 5, 1e-10, 0);
    run_case("near the identity", near, 0, 0, 20, 2000, 1e-14, 0);
}

/* Several cycles a launch (both kernels): converged at a step; maxit 37
 * (rtol 1e-16 is never met) at step 7 of the fourth cycle; stagnation,
 * decided at a restart (the empty row's component of b stays in the
 * residual); GMRES(70), whose triangle R (2485 entries) does not fit the
 * solve's scratch (go_solve reads H itself). */
static void all_cycles(int quick)
{
    cycles_case("ntridiag", tri(33, -1.3, 2.1, -0.7), 0, 0, 5, 2000, 1e-10);
    cycles_case("ntridiag", tri(33, -1.3, 2.1, -0.7), 1, 1, 4, 2000, 1e-10);
    cycles_case("ntridiag (maxit 37)", tri(31, -1.3, 2.1, -0.7), 0, 1, 10, 37, 1e-16);
    cycles_case("arrow", arrow(33), 0, 0, 6, 2000, 1e-10);
    cycles_case("empty row 5 (stagnates)", empty_row(32, 5), 0, 1, 4, 2000, 1e-12, 2);
    cycles_case("ntridiag (maxit 150, R read from H)", tri(150, -1.3, 2.1, -0.7), 0, 0, 70, 150, 1e-16);
    if (!quick) {
        cycles_case("5-point band k=63", band5(3969, 63), 1, 0, 10, 2000, 1e-8);
        cycles_case("5-point band k=63", band5(3969, 63), 0, 1, 8, 2000, 1e-8);
    }
}

/* The cluster kernel's cases, with C blocks. */
static void cluster_cases(int C, int quick)
{
    emu_C = C;
    small_cases();
    run_case("arrow (one row of n entries)", arrow(33), 0, 1, 10, 2000, 1e-10, 0);
    run_case("empty row 5", empty_row(32, 5), 0, 0, 10, 2000, 1e-10, 0);
    all_cycles(quick);
    if (!quick) {
        const mat t1025 = tri(1025, -1.3, 2.1, -0.7);
        run_case("ntridiag", t1025, 1, 1, 8, 2000, 1e-10, 0);
        run_case("arrow (one row of n entries)", arrow(1024), 0, 0, 6, 2000, 1e-10, 0);
        run_case("5-point band k=63", band5(3969, 63), 1, 0, 12, 2000, 1e-10, 0);
        run_case("5-point band k=63", band5(3969, 63), 0, 1, 6, 2000, 1e-10, 4);
    }
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const int quick = argc > 1;
    const mat t1025 = tri(1025, -1.3, 2.1, -0.7);
    const char *ob = getenv("SPS_EMU_ONEBLOCK"); /* 0: the cluster cases only */
    const int oneblock = !(ob && !strcmp(ob, "0"));
    if (oneblock) {
        small_cases();
        run_case("ntridiag", t1025, 0, 0, 8, 2000, 1e-10, 0);
        all_cycles(quick);
    }
    if (oneblock && !quick) {
        const mat t3000 = tri(3000, -1.3, 2.1, -0.7), t5000 = tri(5000, -1.3, 2.1, -0.7),
                  t9000 = tri(9000, -1.3, 2.1, -0.7);
        run_case("ntridiag", t3000, 1, 1, 5, 2000, 1e-10, 0);
        run_case("ntridiag", t5000, 0, 0, 3, 2000, 1e-10, 0);
        run_case("ntridiag", t9000, 0, 1, 2, 2000, 1e-10, 0);
        run_case("ntridiag", t1025, 0, 0, 70, 2000, 1e-10, 0); /* two rounds of 64 columns */
    }
    /* the cluster kernel: SPS_EMU_CLUSTERS="1 2 8" (default 1 2 8 16; "" none) */
    const char *cl = getenv("SPS_EMU_CLUSTERS");
    std::string cls = cl ? cl : "1 2 8 16";
    for (size_t p = 0; p < cls.size();) {
        char *end = nullptr;
        long c = strtol(cls.c_str() + p, &end, 10);
        if (end == cls.c_str() + p) break;
        p = (size_t)(end - cls.c_str());
        if (c >= 1 && c <= 16) cluster_cases((int)c, quick), emu_clusters_ran = 1;
    }
    printf("host second passes over the cases: %d%s\n", reorth_steps, reorth_steps ? "" : " (FAIL: none exercised)");
    if (!reorth_steps) nfail++;
    printf("cases run by the profiling instantiation (bitwise the plain kernel's, its records checked): %d\n",
           prof_cases);
    printf("cluster runs through a CSR's DIA view (bitwise the others): %d\n", views_run);
    if (emu_clusters_ran && !views_run) nfail++;
    printf("gm onek emu: %d ok, %d failed\n", nok, nfail);
    return nfail ? 1 : 0;
}
