/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/emu/onek_harness.cc: bicgstab_kernels.cu's
 * one-kernel path run on the CPU (solvers/gmres/emu/onek_emu.h: one block of
 * 1024 fibers), this tree's kernels (namespace cur) against a base
 * revision's (namespace base), both cut out by run_onek.sh. Every layout of
 * both (registers with 1, 2 or 4 rows a thread where n fits, with the
 * operator's entries staged in shared memory or not, in part or whole, x in
 * shared or global memory; shared memory; global memory) from the same start,
 * then x, r, p, v, s [phat, shat], the history and the state (sps_kstate,
 * sps_bicg_state) compared bitwise against base's register layout (t is
 * left out: scratch, and an iteration that stops at its half step may
 * compute it in one revision only). A converged solve's true residual is
 * checked too, and at least one case must stop at its half step.
 * Cases: CSR and DIA rows, no and Jacobi preconditioning, converged, maxit,
 * the half step. */
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include "onek_emu.h"
#include "solvers/bicgstab/bicgstab.h"
#include "onek_rows.h"
#include <cmath>
#include <string>

emu_block *emu_b;
dim3 threadIdx, blockIdx, blockDim, gridDim;
double *emu_dyn;
emu_shape *emu_grid; /* onek_emu.h: the fused GMRES emulation's grid shapes; unused here (nullptr) */


namespace base {
#include "onek_base.inc"
}
namespace cur {
#include "onek_cur.inc"
}

static int nfail, nok, nhalf;

/* A banded matrix with the diagonals at offsets off, values val[d] (the same
 * down each diagonal), as CSR and as DIA. */
static mat band(int n, std::vector<int> off, std::vector<double> val)
{
    mat A;
    A.n = n, A.off = off;
    A.dval.assign(off.size() * (size_t)n, 0.0);
    A.diag.assign(n, 1.0);
    A.rp.push_back(0);
    for (int i = 0; i < n; i++) {
        for (size_t d = 0; d < off.size(); d++) {
            const long long c = (long long)i + off[d];
            if (c < 0 || c >= n) continue;
            A.ci.push_back((int)c), A.v.push_back(val[d]);
            A.dval[d * (size_t)n + i] = val[d];
            if (c == i) A.diag[i] = val[d];
        }
        A.rp.push_back((int)A.ci.size());
    }
    return A;
}

/* The 5-point nx x nx grid (no coupling across a grid line's end: holes in
 * the diagonals -1 and 1, zeros in its DIA), values varying along rows. */
static mat grid(int nx)
{
    const int n = nx * nx;
    mat A;
    A.n = n, A.off = {-nx, -1, 0, 1, nx};
    A.dval.assign(A.off.size() * (size_t)n, 0.0);
    A.diag.assign(n, 1.0);
    A.rp.push_back(0);
    for (int i = 0; i < n; i++) {
        for (size_t d = 0; d < A.off.size(); d++) {
            const int o = A.off[d], c = i + o;
            if (c < 0 || c >= n || ((o == 1 || o == -1) && c / nx != i / nx)) continue;
            const double v = o == 0 ? 4.2 + 0.1 * (i % 7) : -1.0 - 0.05 * (d + i % 3);
            A.ci.push_back(c), A.v.push_back(v);
            A.dval[d * (size_t)n + i] = v;
            if (c == i) A.diag[i] = v;
        }
        A.rp.push_back((int)A.ci.size());
    }
    return A;
}

/* Everything the launch reads or writes. */
struct bi_all {
    int n;
    std::vector<double> x, r, r0, p, v, s, t, ph, sh, hist;
    sps_kstate st;
    sps_bicg_state bs;
};

static double bval(int i) { return 1.0 + 0.5 * sin(0.7 * i) + 0.25 * cos(1.3 * i); }

/* The driver's start from x = 0: ||b||, the tolerance, ||r0||, INIT. */
static bi_all start(int n, int64_t maxit, double rtol)
{
    bi_all a;
    a.n = n;
    a.x.assign(n, 0.0), a.r.resize(n), a.p.assign(n, 0.0), a.v.assign(n, 0.0);
    a.s.assign(n, 0.0), a.t.assign(n, 0.0), a.ph.assign(n, 0.0), a.sh.assign(n, 0.0);
    a.hist.assign(maxit + 2, 0.0);
    double bb = 0;
    for (int i = 0; i < n; i++) a.r[i] = bval(i), bb += a.r[i] * a.r[i];
    a.r0 = a.r;
    memset(&a.st, 0, sizeof a.st);
    memset(&a.bs, 0, sizeof a.bs);
    const double bn = sqrt(bb);
    a.st.maxit = maxit, a.st.rtol = rtol, a.st.dtol = 1e5, a.st.bnorm = bn, a.st.tol = rtol * bn;
    a.st.tol_kind = SPS_CONVERGED_RTOL, a.st.r0norm = a.st.rnorm = bn;
    a.hist[0] = bn;
    sps__bicg_finish(SPS_BICG_INIT, &a.st, &a.bs, &bb, a.hist.data());
    return a;
}

/* A register layout's stage (onek_stage) and x's place, the same for both
 * revisions: stage 0 none (x in shared memory); 1 all DIA values, x global;
 * for CSR, 1 half the columns, 2 all columns and a third of the values,
 * 3 everything, each with x in shared memory (odd) or global memory (even
 * stages past 1). */
struct bi_stage {
    sps_idx nval, ncol;
    int xs, view;
};
/* CSR stage 5 (this tree only, VIEW_STAGE): the rows as DIA over A's
 * diagonals (kernels.cuh onek_view_to), x global. */
enum { VIEW_STAGE = 5 };
static bi_stage stage_of(const mat &A, int dia, int stage)
{
    const size_t nnz = dia ? A.off.size() * (size_t)A.n : A.v.size();
    bi_stage g = {0, 0, 1, 0};
    if (stage == 0) return g;
    if (dia) return bi_stage{(sps_idx)nnz, 0, 0, 0};
    if (stage == VIEW_STAGE) return bi_stage{(sps_idx)(A.off.size() * (size_t)A.n), 0, 0, (int)A.off.size()};
    if (stage == 1) g.ncol = (sps_idx)(nnz / 2);
    else if (stage == 2) g.ncol = (sps_idx)nnz, g.nval = (sps_idx)(nnz / 3), g.xs = 0;
    else g.ncol = g.nval = (sps_idx)nnz, g.xs = stage == 3;
    return g;
}
static int stages_of(int dia) { return dia ? 2 : VIEW_STAGE + 1; }

/* A revision's onek_stage from g: the view's fields where it has them. */
template <class S>
static S mk_stage(const mat &A, const bi_stage &g)
{
    S s{g.nval, g.ncol};
    if constexpr (requires { s.view; }) {
        s.view = g.view;
        for (int d = 0; d < g.view; d++) s.off[d] = A.off[d];
    }
    return s;
}

/* One revision's launch in one layout: lay 0 registers (R rows a thread,
 * with stage_of's stage), 1 shared memory, 2 global memory. */
#define BI_LAUNCH(NS)                                                                           \
    template <bool JAC, int R>                                                                  \
    static void NS##_run(const mat &A, int dia, const double *dinv, bi_all &e, int lay, int stage) \
    {                                                                                           \
        const int n = e.n;                                                                      \
        NS::onek_bicg a = {n, rows_of(A, dia), e.x.data(), e.r.data(), e.r0.data(), e.p.data(), \
                           e.v.data(), e.s.data(), e.t.data(), JAC ? e.ph.data() : e.p.data(),  \
                           JAC ? e.sh.data() : e.s.data(), dinv, &e.st, &e.bs, e.hist.data()};  \
        const size_t nv = JAC ? 4 : 2, nd = (size_t)n;                                          \
        if (lay == 0) {                                                                         \
            const bi_stage g = stage_of(A, dia, stage);                                         \
            const size_t dyn = (nv + 1) * nd + g.nval + (g.ncol + 3) / 4;                       \
            emu_run_block(NS::OKT, dyn, [&] {                                                   \
                NS::k_bicg_onek_regs<JAC, R>(a, mk_stage<NS::onek_stage>(A, g), g.xs);          \
            });                                                                                 \
        } else if (lay == 1) {                                                                  \
            emu_run_block(NS::OKT, (JAC ? 8 : 6) * nd, [&] { NS::k_bicg_onekernel<JAC, true>(a); }); \
        } else {                                                                                \
            emu_run_block(NS::OKT, 0, [&] { NS::k_bicg_onekernel<JAC, false>(a); });            \
        }                                                                                       \
    }
BI_LAUNCH(base)
BI_LAUNCH(cur)

template <bool JAC, int R>
static void run_rev(int rev, const mat &A, int dia, const double *dinv, bi_all &e, int lay, int stage)
{
    if (rev == 0) base_run<JAC, R>(A, dia, dinv, e, lay, stage);
    else cur_run<JAC, R>(A, dia, dinv, e, lay, stage);
}

static void run_any(int rev, int jac, int R, const mat &A, int dia, const double *dinv, bi_all &e, int lay,
                    int stage)
{
#define BI_R(J, RR) if (jac == J && R == RR) return run_rev<J, RR>(rev, A, dia, dinv, e, lay, stage)
    BI_R(0, 1);
    BI_R(0, 2);
    BI_R(0, 4);
    BI_R(1, 1);
    BI_R(1, 2);
    BI_R(1, 4);
#undef BI_R
    abort();
}

static bool same(const bi_all &a, const bi_all &b, int jac)
{
    return a.x == b.x && a.r == b.r && a.p == b.p && a.v == b.v && a.s == b.s && a.hist == b.hist &&
           (!jac || (a.ph == b.ph && a.sh == b.sh)) && memcmp(&a.st, &b.st, sizeof a.st) == 0 &&
           memcmp(&a.bs, &b.bs, sizeof a.bs) == 0;
}

static void run_case(const char *name, const mat &A, int dia, int jac, int64_t maxit, double rtol)
{
    const int n = A.n;
    std::vector<double> dv(n);
    for (int i = 0; i < n; i++) dv[i] = 1.0 / A.diag[i];
    const double *dinv = jac ? dv.data() : nullptr;
    const bi_all s0 = start(n, maxit, rtol);
    const int rmin = n <= 1024 ? 1 : n <= 2048 ? 2 : 4;
    bi_all ref = s0;
    run_any(0, jac, rmin, A, dia, dinv, ref, 0, 0);
    std::string bad;
    int runs = 0;
    for (int rev = 0; rev < 2; rev++)
        for (int R = rmin; R <= 4; R *= 2)
            for (int stage = 0; stage < stages_of(dia); stage++) {
                if (rev == 0 && ((R == rmin && stage == 0) || (!dia && stage == VIEW_STAGE))) continue;
                bi_all e = s0;
                run_any(rev, jac, R, A, dia, dinv, e, 0, stage);
                runs++;
                if (!same(ref, e, jac))
                    bad += std::string(rev ? " cur" : " base") + " regs R=" + std::to_string(R) +
                           (stage ? " stage " + std::to_string(stage) : "");
            }
    for (int rev = 0; rev < 2; rev++)
        for (int lay = 1; lay <= 2; lay++) {
            bi_all e = s0;
            run_any(rev, jac, rmin, A, dia, dinv, e, lay, 0);
            runs++;
            if (!same(ref, e, jac)) bad += std::string(rev ? " cur" : " base") + (lay == 1 ? " shared" : " global");
        }
    /* the true residual of a converged solve */
    double rr = 0, bb = 0;
    for (int i = 0; i < n; i++) {
        double ax = 0;
        for (int q = A.rp[i]; q < A.rp[i + 1]; q++) ax += A.v[q] * ref.x[A.ci[q]];
        rr += (bval(i) - ax) * (bval(i) - ax), bb += bval(i) * bval(i);
    }
    const double rel = sqrt(rr / bb);
    const bool conv = ref.st.reason > 0;
    const bool ok = bad.empty() && (!conv || rel <= 10 * rtol);
    nhalf += ref.bs.half != 0;
    printf("%s %s n=%d %s%s: %lld iterations, reason %lld%s, true relres %.1e; %d runs bitwise base regs R=%d%s%s\n",
           ok ? "ok  " : "FAIL", name, n, dia ? "dia" : "csr", jac ? "+jacobi" : "", (long long)ref.st.iter,
           (long long)ref.st.reason, ref.bs.half ? " at the half step" : "", rel, runs, rmin,
           bad.empty() ? "" : ", differ:", bad.c_str());
    ok ? nok++ : nfail++;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    const int quick = argc > 1;
    const mat t31 = band(31, {-1, 0, 1}, {-1.3, 2.1, -0.7});
    const mat t700 = band(700, {-1, 0, 1}, {-1.3, 2.6, -0.9});
    const mat id = band(200, {0}, {3.0}); /* s = 0 at the first half step */
    const mat near = band(300, {-1, 0, 1}, {-1e-9, 1.0, 2e-9});
    const mat p2 = band(400, {-20, -1, 0, 1, 20}, {-1.0, -1.2, 4.1, -0.8, -1.0}); /* 20 x 20 grid */
    for (int dia = 0; dia <= 1; dia++)
        for (int jac = 0; jac <= 1; jac++) {
            run_case("ntridiag", t31, dia, jac, 500, 1e-10);
            run_case("ntridiag (maxit 7)", t700, dia, jac, 7, 1e-10);
            run_case("3 I", id, dia, jac, 50, 1e-10);
            run_case("near I", near, dia, jac, 50, 1e-12);
            run_case("5 bands", p2, dia, jac, 500, 1e-10);
        }
    /* rows past 2 x 1024: 4 rows a thread in every register layout */
    const mat t2500 = band(2500, {-1, 0, 1}, {-1.3, 2.6, -0.9});
    const mat p50 = band(2500, {-50, -1, 0, 1, 50}, {-1.0, -1.2, 4.1, -0.8, -1.0}); /* 50 x 50 grid */
    run_case("ntridiag (maxit 6)", t2500, 1, 0, 6, 1e-10);
    run_case("5 bands (maxit 6)", p50, 1, 1, 6, 1e-10);
    run_case("5 bands (maxit 4)", p50, 0, 0, 4, 1e-10);
    /* holes in the diagonals: the CSR's DIA view adds 0 * x there */
    const mat g20 = grid(20), g50 = grid(50);
    run_case("grid 20x20", g20, 0, 0, 500, 1e-10);
    run_case("grid 20x20", g20, 0, 1, 500, 1e-10);
    run_case("grid 50x50 (maxit 5)", g50, 0, 0, 5, 1e-10);
    if (!quick) {
        const mat t1500 = band(1500, {-1, 0, 1}, {-1.3, 2.6, -0.9});
        const mat p4 = band(3969, {-63, -1, 0, 1, 63}, {-1.0, -1.0, 4.0, -1.0, -1.0});
        run_case("ntridiag", t1500, 1, 0, 400, 1e-10);
        run_case("ntridiag", t1500, 0, 1, 400, 1e-10);
        run_case("poisson2d:63-like (maxit 12)", p4, 1, 0, 12, 1e-10);
        run_case("poisson2d:63-like (maxit 9)", p4, 0, 1, 9, 1e-10);
    }
    printf("cases stopped at the half step: %d%s\n", nhalf, nhalf ? "" : " (FAIL: none exercised)");
    if (!nhalf) nfail++;
    printf("bicg onek emu: %d ok, %d failed\n", nok, nfail);
    return nfail ? 1 : 0;
}
