/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/dcgs2_harness.cc: gmres_kernels.cu's DCGS2
 * kernels run on the CPU (onek_emu.h's fibers, one block at a time, the
 * blocks of a launch in order, reversed and shuffled) against the host
 * reference (gmres_host.c's gm_ops, linked in):
 *  - k_dp (gm_ops dprod): the products d within 1e-13 of the host's (another
 *    summation order), their finish (omega, c, column j of H and U) within
 *    1e-11, the closing products (no y; column j - 1's Arnoldi step too), a
 *    stopped solve (nothing);
 *  - k_dc (dcorr), from the same state as the host: v_j and p_{j+1} within
 *    1e-12 of the host's, column j - 1's Arnoldi step (H, g, the rotations,
 *    the state) within 1e-11; after a stopped k_dp (dstep not j) nothing;
 *  - every result bitwise the same in every block order, every counter back
 *    at 0;
 *  - k_gm_solve with U (y = R^-1 g, then y = U y) bitwise the host's
 *    sps__gm_solve (the same sums in the same order; no FMA on the CPU).
 * Built and run by run_dcgs2.sh. */
#define GRID_EMU_SEED 0x2545F4914F6CDD1Dull
#include "grid_emu.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

namespace {
#include "dcgs2.inc"
}

static void check(bool ok, const char *what, int64_t n, int64_t j, int order)
{
    if (ok) {
        nok++;
        return;
    }
    nfail++;
    printf("FAIL n=%lld j=%lld order %d: %s\n", (long long)n, (long long)j, order, what);
}

/* A DCGS2 workspace of n rows, restart m, at step j: V_0..V_{j-1} small
 * (1e-3 / sqrt(n) times the bench entries: a'a well below alpha, so omega
 * is real), V_j the bench entries, H, the rotations and g as after earlier
 * steps; the state never converges. */
struct wsp {
    int64_t n, m, j;
    std::vector<double> V, H, cs, sn, g, y, h2, U, d, part, red;
    sps_kstate st;
    sps_gm_state gs;
    sps_kws w;
    sps_gm_ws gw;
    wsp(int64_t n_, int64_t m_, int64_t j_)
        : n(n_), m(m_), j(j_), V((size_t)(n_ * (m_ + 1))), H((size_t)((m_ + 1) * m_)), cs(m_), sn(m_), g(m_ + 1),
          y(m_), h2(m_ + 1), U((size_t)(m_ * (m_ - 1) / 2 + 1)), d((size_t)(2 * (m_ + 1))),
          part(sps__gm_part_len(n_, m_)), red(SPS_K_NSUM * sps__kgrid((sps_idx)n_))
    {
        const double sm = 1e-3 / sqrt((double)n);
        for (int64_t e = 0; e < n * (m + 1); e++)
            V[e] = sps__gm_bench_val((uint64_t)(e % n), (uint64_t)(e / n)) * (e / n < j ? sm : 1.0);
        for (size_t e = 0; e < H.size(); e++) H[e] = sps__gm_bench_val(e, 1ull << 42);
        for (int64_t i = 0; i < m; i++) cs[i] = cos(0.1 + 0.37 * (double)i), sn[i] = sin(0.1 + 0.37 * (double)i);
        for (auto &v : g) v = 1.0;
        memset(&st, 0, sizeof st);
        st.maxit = INT64_MAX;
        st.tol = -1.0;
        st.dtol = 1e300;
        st.r0norm = 1.0;
        memset(&gs, 0, sizeof gs);
        gs.m = m;
        gs.orth = SPS_GM_ORTH_DCGS2;
        gs.dstep = -1; /* gm_init's */
        memset(&w, 0, sizeof w);
        w.n = (sps_idx)n;
        w.st = &st;
        w.ms = &gs;
        w.red = red.data();
        memset(&gw, 0, sizeof gw);
        gw.V = V.data();
        gw.m = m;
        gw.part = part.data();
        bind();
    }
    wsp &operator=(const wsp &) = delete;
    wsp(const wsp &o) : n(o.n), m(o.m), j(o.j), V(o.V), H(o.H), cs(o.cs), sn(o.sn), g(o.g), y(o.y), h2(o.h2), U(o.U),
                        d(o.d), part(o.part), red(o.red), st(o.st), gs(o.gs), w(o.w), gw(o.gw)
    {
        bind();
    }
    void bind()
    {
        w.st = &st;
        w.ms = &gs;
        w.red = red.data();
        gw.V = V.data();
        gw.part = part.data();
        gw.gm = sps_kgm{H.data(), cs.data(), sn.data(), g.data(), y.data(), h2.data(), U.data(), d.data()};
    }
    bool counters_zero()
    {
        const unsigned *c = gm_cnt(&gw, n);
        for (size_t i = 0; i < sps__gm_ncount(n, m); i++)
            if (c[i]) return false;
        return true;
    }
    /* everything a step may change, as one list of doubles (the state's too) */
    std::vector<double> all() const
    {
        std::vector<double> o(V);
        o.insert(o.end(), H.begin(), H.end());
        o.insert(o.end(), cs.begin(), cs.end());
        o.insert(o.end(), sn.begin(), sn.end());
        o.insert(o.end(), g.begin(), g.end());
        o.insert(o.end(), U.begin(), U.end());
        o.insert(o.end(), d.begin(), d.begin() + (j + 1));
        o.insert(o.end(), d.begin() + (m + 1), d.begin() + (m + 1) + (j + 1));
        o.insert(o.end(), {gs.omega, gs.cj, gs.hn, st.rnorm, (double)st.iter, (double)st.stop, (double)gs.kdim});
        return o;
    }
};

static std::vector<double> col(const std::vector<double> &a, int64_t at, int64_t len)
{
    return std::vector<double>(a.begin() + at, a.begin() + at + len);
}

/* One step j (close: the cycle's closing products, j = m) in every block
 * order against the host's dprod then dcorr. */
static void step_case(int64_t n, int64_t m, int64_t j, bool close, bool stopped)
{
    wsp s0(n, m, j);
    s0.st.stop = stopped;
    std::vector<double> yv(n);
    for (int64_t i = 0; i < n; i++) yv[i] = sps__gm_bench_val((uint64_t)i, 1ull << 40);
    const double *y = close ? nullptr : yv.data();
    wsp ref(s0);
    sps__gm_ops_host.dprod(&ref.w, &ref.gw, j, y);
    const int64_t ld = m + 1;
    std::vector<double> first;
    char msg[160];
    for (int o = 0; o < 3; o++) {
        wsp s(s0);
        emu_order = o;
        c_gm_dprod(&s.w, &s.gw, j, y);
        check(s.counters_zero(), "k_dp: counters back at 0", n, j, o);
        if (o == 0 && !stopped) {
            const double ed = std::max(relerr(col(s.d, 0, j + 1), col(ref.d, 0, j + 1)),
                                       close ? 0.0 : relerr(col(s.d, ld, j + 1), col(ref.d, ld, j + 1)));
            snprintf(msg, sizeof msg, "k_dp: products within 1e-13 of the host's (%.1e)", ed);
            check(ed <= 1e-13, msg, n, j, o);
            const std::vector<double> sc = {s.gs.omega, s.gs.cj, s.gs.hn, s.st.rnorm},
                                      rc = {ref.gs.omega, ref.gs.cj, ref.gs.hn, ref.st.rnorm};
            const double ef = std::max({relerr(s.H, ref.H), relerr(s.U, ref.U), relerr(s.g, ref.g),
                                        relerr(s.cs, ref.cs), relerr(s.sn, ref.sn), relerr(sc, rc)});
            snprintf(msg, sizeof msg, "k_dp's finish: H, U, g, rotations, omega, c within 1e-11 of the host's (%.1e)", ef);
            check(ef <= 1e-11 && s.st.iter == ref.st.iter && s.st.stop == ref.st.stop && s.gs.kdim == ref.gs.kdim &&
                      s.gs.dstep == j && ref.gs.dstep == j,
                  msg, n, j, o);
        }
        if (stopped) check(same(s.all(), s0.all()), "k_dp, solve stopped: nothing changes", n, j, o);
        if (!close) {
            /* the corrections from the same state on both sides */
            wsp h(s);
            sps__gm_ops_host.dcorr(&h.w, &h.gw, j, y);
            c_gm_dcorr(&s.w, &s.gw, j, y);
            check(s.counters_zero(), "k_dc: counters back at 0", n, j, o);
            const double ev = std::max(relerr(col(s.V, j * n, n), col(h.V, j * n, n)),
                                       relerr(col(s.V, (j + 1) * n, n), col(h.V, (j + 1) * n, n)));
            snprintf(msg, sizeof msg, "k_dc: v_j and p_{j+1} within 1e-12 of the host's (%.1e)", ev);
            check(ev <= 1e-12 && same(col(s.V, 0, j * n), col(h.V, 0, j * n)), msg, n, j, o);
            const std::vector<double> sc = {s.gs.hn, s.st.rnorm}, hc = {h.gs.hn, h.st.rnorm};
            const double ef = std::max({relerr(s.H, h.H), relerr(s.g, h.g), relerr(s.cs, h.cs), relerr(s.sn, h.sn),
                                        relerr(sc, hc)});
            snprintf(msg, sizeof msg, "k_dc's column j - 1: H, g, rotations, ||w|| within 1e-11 of the host's (%.1e)",
                     ef);
            check(ef <= 1e-11 && s.st.iter == h.st.iter && s.st.stop == h.st.stop && s.gs.kdim == h.gs.kdim &&
                      s.st.iter == s0.st.iter + (j > 0 && !stopped),
                  msg, n, j, o);
            if (stopped) check(same(s.all(), s0.all()), "k_dc, solve stopped: nothing changes", n, j, o);
        }
        if (o == 0) first = s.all();
        else check(same(s.all(), first), "the whole step bitwise the same as in order 0", n, j, o);
    }
}

/* k_gm_solve with U: y = R^-1 g, then y = U y, against sps__gm_solve. */
static void solve_case(int64_t m, int64_t kdim)
{
    wsp s(1, m, 0);
    for (int64_t c = 0; c < m; c++) s.H[c + c * (m + 1)] += 3.0; /* a safe diagonal */
    for (size_t e = 0; e < s.U.size(); e++) s.U[e] = sps__gm_bench_val(e, 1ull << 43);
    s.gs.kdim = kdim;
    wsp h(s);
    emu_order = 0;
    emu_launch(dim3(1), dim3(1024), [&] { k_gm_solve(&s.gs, s.gw.gm); });
    sps__gm_solve(&h.gs, h.gw.gm);
    check(same(col(s.y, 0, kdim), col(h.y, 0, kdim)), "k_gm_solve with U: y bitwise sps__gm_solve's", 0, kdim, 0);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const bool quick = argc > 1;
    static const int64_t en[] = {31, 33, 1025, 3937, 20000}, ej[] = {0, 1, 2, 30, 999, 1999};
    for (int64_t n : en)
        for (int64_t j : ej) {
            const int64_t m = j < 30 ? 30 : j + 1;
            if (quick && n * (m + 1) > 2500000) continue;
            step_case(n, m, j, false, false);
            if (j == 1 || j == 30) step_case(n, m, j, false, true);
            if (j == 30) step_case(n, j, j, true, false); /* the closing products of a cycle of m = j */
            printf("n=%lld j=%lld done (%d ok, %d failed so far)\n", (long long)n, (long long)j, nok, nfail);
        }
    solve_case(30, 30);
    solve_case(1100, 1037);
    printf("gm dcgs2 emu: %d ok, %d failed\n", nok, nfail);
    return nfail ? 1 : 0;
}
