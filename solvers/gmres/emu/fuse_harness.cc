/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/fuse_harness.cc: gmres_kernels.cu's fused
 * Gram-Schmidt products run on the CPU (onek_emu.h's fibers, one block at a
 * time, the blocks of a launch in order, reversed and shuffled) against the
 * kernels one by one (SPS_GM_FUSE=0's sequence):
 *  - h = V'w: k_gt summing its own partials (the last warp of a column)
 *    bitwise k_gt + k_gt_sum's h, with and without the second pass's gate;
 *  - k_gn_fin: w bitwise k_gn (+ k_gn_sum)'s; the check (due and not due),
 *    the Arnoldi finish, the gate, a stopped solve; its state, column j of H,
 *    the rotations, g and v_{j+1} bitwise the same in every block order and
 *    within 1e-12 of the host's sps__gm_column on the same w (w'w is summed
 *    in another order there);
 *  - every counter back at 0 after each launch.
 * Built and run by run_fuse.sh. */
#define GRID_EMU_SEED 0x9E3779B97F4A7C15ull
#include "grid_emu.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

namespace {
#include "fuse.inc"
}

static void check(bool ok, const char *what, int64_t n, int64_t nc, int order)
{
    if (ok) {
        nok++;
        return;
    }
    nfail++;
    printf("FAIL n=%lld ncols=%lld order %d: %s\n", (long long)n, (long long)nc, order, what);
}

/* A GMRES workspace of n rows and restart m = ncols (column j = ncols - 1). */
struct wsp {
    int64_t n, m, j;
    std::vector<double> V, H, cs, sn, g, y, h2, part, red;
    sps_kstate st;
    sps_gm_state gs;
    sps_kws w;
    sps_gm_ws gw;
    wsp(int64_t n_, int64_t nc)
        : n(n_), m(nc), j(nc - 1), V((size_t)(n_ * (nc + 1))), H((size_t)((nc + 1) * nc)), cs(nc), sn(nc),
          g(nc + 1), y(nc), h2(nc + 1), part(sps__gm_part_len(n_, nc)), red(SPS_K_NSUM * sps__kgrid((sps_idx)n_))
    {
        for (int64_t e = 0; e < n * (m + 1); e++) V[e] = sps__gm_bench_val((uint64_t)(e % n), (uint64_t)(e / n));
        for (size_t e = 0; e < H.size(); e++) H[e] = sps__gm_bench_val(e, 1ull << 42);
        for (int64_t i = 0; i < m; i++) cs[i] = cos(0.1 + 0.37 * (double)i), sn[i] = sin(0.1 + 0.37 * (double)i);
        for (auto &v : g) v = 1.0;
        memset(&st, 0, sizeof st);
        st.maxit = INT64_MAX;
        st.tol = -1.0; /* never converges: the finish runs to the end */
        st.dtol = 1e300;
        st.r0norm = 1.0;
        memset(&gs, 0, sizeof gs);
        gs.m = m;
        memset(&w, 0, sizeof w);
        w.n = (sps_idx)n;
        w.st = &st;
        w.ms = &gs;
        w.red = red.data();
        memset(&gw, 0, sizeof gw);
        gw.V = V.data();
        gw.m = m;
        gw.part = part.data();
        gw.gm = sps_kgm{H.data(), cs.data(), sn.data(), g.data(), y.data(), h2.data(), nullptr, nullptr};
    }
    double *col() { return H.data() + j * (m + 1); }
    bool counters_zero()
    {
        const unsigned *c = gm_cnt(&gw, n);
        for (size_t i = 0; i < sps__gm_ncount(n, m); i++)
            if (c[i]) return false;
        return true;
    }
};

/* What a finish leaves: the state's scalars, column j, the rotations, g, v_{j+1}. */
struct outcome {
    std::vector<double> x, col, cs, sn, g, v1, sc;
    int64_t reorth, stop, iter, kdim;
};

static outcome take(wsp &s, const std::vector<double> &x)
{
    outcome o;
    o.x = x;
    o.col.assign(s.col(), s.col() + s.m + 1);
    o.cs = s.cs, o.sn = s.sn, o.g = s.g;
    o.v1.assign(s.V.begin() + (s.j + 1) * s.n, s.V.begin() + (s.j + 2) * s.n);
    o.sc = {s.gs.hn, s.st.rnorm};
    o.reorth = s.gs.reorth, o.stop = s.st.stop, o.iter = s.st.iter, o.kdim = s.gs.kdim;
    return o;
}

static bool same_outcome(const outcome &a, const outcome &b)
{
    return same(a.x, b.x) && same(a.col, b.col) && same(a.cs, b.cs) && same(a.sn, b.sn) && same(a.g, b.g) &&
           same(a.v1, b.v1) && same(a.sc, b.sc) && a.reorth == b.reorth && a.stop == b.stop && a.iter == b.iter &&
           a.kdim == b.kdim;
}

/* The pieces a finish may change, to start each run from the same place. */
struct saved {
    std::vector<double> H, cs, sn, g, h2, v1;
    sps_kstate st;
    sps_gm_state gs;
};
static saved save(wsp &s)
{
    return saved{s.H, s.cs, s.sn, s.g, s.h2,
                 std::vector<double>(s.V.begin() + (s.j + 1) * s.n, s.V.begin() + (s.j + 2) * s.n), s.st, s.gs};
}
static void restore(wsp &s, const saved &v)
{
    s.H = v.H, s.cs = v.cs, s.sn = v.sn, s.g = v.g, s.h2 = v.h2, s.st = v.st, s.gs = v.gs;
    std::copy(v.v1.begin(), v.v1.end(), s.V.begin() + (s.j + 1) * s.n);
    s.gw.gm = sps_kgm{s.H.data(), s.cs.data(), s.sn.data(), s.g.data(), s.y.data(), s.h2.data(), nullptr, nullptr};
}

/* h = V'x: fused (counters) against k_gt + k_gt_sum, in every block order,
 * ungated and behind the gate. Returns the unfused h. */
static std::vector<double> test_gt(wsp &s, const std::vector<double> &x, int64_t tw)
{
    const int64_t nc = s.m;
    std::vector<double> hu(nc, -7.0);
    emu_order = 0;
    gt_launch(&s.w, &s.gw, nc, x.data(), hu.data(), nullptr, tw, nullptr);
    double worst = 0;
    for (int64_t c = 0; c < nc; c++) {
        double r = 0, a = 0;
        for (int64_t i = 0; i < s.n; i++) r += s.V[i + c * s.n] * x[i], a += fabs(s.V[i + c * s.n] * x[i]);
        worst = std::max(worst, fabs(hu[c] - r) / (a > 0 ? a : 1));
    }
    check(worst <= 1e-13, "k_gt + k_gt_sum against the host loop", s.n, nc, 0);
    unsigned *cnt = gm_cnt(&s.gw, s.n);
    for (int o = 0; o < 3; o++) {
        emu_order = o;
        std::vector<double> hf(nc, -7.0), hg(nc, -7.0), hr(nc, -7.0);
        gt_launch(&s.w, &s.gw, nc, x.data(), hf.data(), nullptr, tw, cnt);
        check(same(hf, hu) && s.counters_zero(), "fused h = V'w bitwise the two kernels', counters 0", s.n, nc, o);
        s.gs.reorth = 0;
        gt_launch(&s.w, &s.gw, nc, x.data(), hg.data(), &s.gs, tw, cnt);
        s.gs.reorth = 1;
        gt_launch(&s.w, &s.gw, nc, x.data(), hr.data(), &s.gs, tw, cnt);
        s.gs.reorth = 0;
        check(hg == std::vector<double>(nc, -7.0) && same(hr, hu) && s.counters_zero(),
              "fused h = V'w behind the gate (reorth 0: nothing; 1: the same h)", s.n, nc, o);
    }
    return hu;
}

/* The host's finish on the unfused w (gmres_host.c h_gm_finish, then h_gm_scale). */
static outcome host_finish(wsp &s, const saved &start, int step, const std::vector<double> &xu, bool scale)
{
    restore(s, start);
    double ww = 0;
    for (int64_t i = 0; i < s.n; i++) ww += xu[i] * xu[i];
    if (!s.st.stop) sps__gm_column(step, &s.st, &s.gs, s.j, s.col(), ww, nullptr, s.gw.gm);
    const bool made = !s.st.stop && (step == SPS_GM_ARNOLDI ? start.gs.reorth != 0 : !s.gs.reorth);
    if (scale && made && !start.st.stop)
        for (int64_t i = 0; i < s.n; i++) s.V[(s.j + 1) * s.n + i] = xu[i] / s.gs.hn;
    return take(s, xu);
}

/* One k_gn_fin case: from `start`, x -= V hp (hp: h, or h2 for ARNOLDI) and
 * the finish step, gated on the state's reorth for ARNOLDI. */
static void gn_case(wsp &s, const saved &start, const std::vector<double> &x, const double *hp, int step,
                    const char *what)
{
    const int64_t nc = s.m;
    const bool gated = step == SPS_GM_ARNOLDI, skip = gated && !start.gs.reorth;
    restore(s, start);
    std::vector<double> xu = x;
    emu_order = 0;
    if (!skip) gn_launch(&s.w, &s.gw, nc, hp, xu.data(), nullptr);
    const int64_t sj = s.n <= SPS_GM_FUSE_SCALE_ROWS ? s.j : -1;
    const sps_kfin f = sps__kfin(nullptr, &s.gw, step, 1, s.j);
    outcome first;
    char msg[200];
    for (int o = 0; o < 3; o++) {
        restore(s, start);
        std::vector<double> xf = x;
        emu_order = o;
        gn_fin_launch(&s.w, &s.gw, nc, hp, xf.data(), gated ? &s.gs : nullptr, &f, sj);
        outcome got = take(s, xf);
        snprintf(msg, sizeof msg, "%s: w bitwise k_gn's, counters 0", what);
        check(same(xf, xu) && s.counters_zero(), msg, s.n, nc, o);
        if (o == 0) {
            first = got;
            outcome ref = host_finish(s, start, step, xu, sj >= 0);
            const bool close = got.reorth == ref.reorth && got.stop == ref.stop && got.iter == ref.iter &&
                               got.kdim == ref.kdim && relerr(got.col, ref.col) <= 1e-11 &&
                               relerr(got.g, ref.g) <= 1e-12 && relerr(got.cs, ref.cs) <= 1e-12 &&
                               relerr(got.sn, ref.sn) <= 1e-12 && relerr(got.v1, ref.v1) <= 1e-12 &&
                               relerr(got.sc, ref.sc) <= 1e-12;
            snprintf(msg, sizeof msg, "%s: state, H, rotations, g, v_{j+1} within 1e-12 of the host's (reorth %lld/%lld)",
                     what, (long long)got.reorth, (long long)ref.reorth);
            check(close, msg, s.n, nc, o);
        } else {
            snprintf(msg, sizeof msg, "%s: the same outcome bitwise as in order 0", what);
            check(same_outcome(got, first), msg, s.n, nc, o);
        }
    }
}

static void run_shape(int64_t n, int64_t nc)
{
    wsp s(n, nc);
    std::vector<double> x(n);
    for (int64_t i = 0; i < n; i++) x[i] = sps__gm_bench_val((uint64_t)i, 1ull << 40);
    std::vector<double> hu = test_gt(s, x, GT_TW);
    (void)test_gt(s, x, 16384); /* more chunks */
    /* the check: column j holds h (the first pass's product); not due */
    std::copy(hu.begin(), hu.end(), s.col());
    saved st0 = save(s);
    gn_case(s, st0, x, s.col(), SPS_GM_CHECK, "check");
    /* due: column j scaled up, the product from h itself */
    for (int64_t i = 0; i <= s.j; i++) s.col()[i] = hu[i] * 1e8;
    saved st1 = save(s);
    gn_case(s, st1, x, hu.data(), SPS_GM_CHECK, "check, second pass due");
    /* the Arnoldi finish after the second pass: h2 = h, reorth set; then unset */
    std::copy(hu.begin(), hu.end(), s.h2.begin());
    s.gs.reorth = 1;
    saved st2 = save(s);
    gn_case(s, st2, x, s.h2.data(), SPS_GM_ARNOLDI, "Arnoldi finish");
    s.gs.reorth = 0;
    saved st3 = save(s);
    gn_case(s, st3, x, s.h2.data(), SPS_GM_ARNOLDI, "Arnoldi finish, gated off");
    /* a stopped solve: w moves, nothing else */
    restore(s, st0);
    s.st.stop = 1;
    saved st4 = save(s);
    gn_case(s, st4, x, s.col(), SPS_GM_CHECK, "check, solve stopped");
    printf("n=%lld ncols=%lld done (%d ok, %d failed so far)\n", (long long)n, (long long)nc, nok, nfail);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const bool quick = argc > 1;
    static const int64_t en[] = {31, 32, 33, 1023, 1025, 3937, 20000}, ec[] = {1, 30, 1000, 2001};
    for (int64_t n : en)
        for (int64_t nc : ec) {
            if (quick && n * nc > 2500000) continue;
            run_shape(n, nc);
        }
    printf("gm fuse emu: %d ok, %d failed\n", nok, nfail);
    return nfail ? 1 : 0;
}
