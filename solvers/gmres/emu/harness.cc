/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/harness.cc: gmres_kernels.cu's Gram-Schmidt
 * products (gt_launch, gn_launch: every plan they pick, with and without the
 * workspace's partials, and the gate) run on the CPU (gm_emu.h) against host
 * loops: within 1e-13 of the sum of the absolute terms, and the same result
 * bitwise from two runs. Built and run by run.sh. */
#include "gm_emu.h"
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>

thread_local dim3 blockIdx, threadIdx;
dim3 gridDim, blockDim;
std::barrier<> *emu_bar;
std::vector<emu_warp> *emu_warps;
extern "C" sps_status sps__err(sps_context *, sps_status st, const char *, ...) { return st; }

namespace {
#include "products.inc"
}

static int nfail, nok;

static void run_shape(int64_t n, int64_t nc)
{
    std::vector<double> V((size_t)(n * nc)), x(n), h(nc), red(SPS_K_NSUM * sps__kgrid((sps_idx)n));
    std::vector<double> part(sps__gm_part_len(n, nc - 1));
    for (int64_t e = 0; e < n * nc; e++) V[e] = sps__gm_bench_val((uint64_t)(e % n), (uint64_t)(e / n));
    for (int64_t i = 0; i < n; i++) x[i] = sps__gm_bench_val((uint64_t)i, 1ull << 40);
    for (int64_t c = 0; c < nc; c++) h[c] = sps__gm_bench_val((uint64_t)c, 1ull << 41);
    sps_gm_state ms;
    memset(&ms, 0, sizeof ms);
    sps_kws w;
    memset(&w, 0, sizeof w);
    w.n = (sps_idx)n;
    w.red = red.data();
    w.ms = &ms;
    /* host references */
    std::vector<double> ht(nc), hts(nc), xn(n), xns(n);
    for (int64_t c = 0; c < nc; c++) {
        double s = 0, a = 0;
        for (int64_t i = 0; i < n; i++) s += V[i + c * n] * x[i], a += fabs(V[i + c * n] * x[i]);
        ht[c] = s, hts[c] = a;
    }
    for (int64_t i = 0; i < n; i++) {
        double s = 0, a = fabs(x[i]);
        for (int64_t c = 0; c < nc; c++) s += V[i + c * n] * h[c], a += fabs(V[i + c * n] * h[c]);
        xn[i] = x[i] - s, xns[i] = a;
    }
    for (int withpart = 0; withpart < 2; withpart++) {
        sps_gm_ws g;
        memset(&g, 0, sizeof g);
        g.V = V.data();
        g.m = nc - 1;
        g.part = withpart ? part.data() : nullptr;
        const int64_t tws[3] = {GT_TW, 0, 16384};
        for (int v = 0; v < 3; v++) {
            std::vector<double> o1(nc, -7.0), o2(nc, -7.0);
            gt_launch(&w, &g, nc, x.data(), o1.data(), nullptr, tws[v]);
            gt_launch(&w, &g, nc, x.data(), o2.data(), nullptr, tws[v]);
            double worst = 0;
            for (int64_t c = 0; c < nc; c++) worst = std::max(worst, fabs(o1[c] - ht[c]) / (hts[c] > 0 ? hts[c] : 1));
            const bool same = memcmp(o1.data(), o2.data(), nc * 8) == 0;
            /* the gate */
            std::vector<double> o3(nc, -7.0), o4(nc, -7.0);
            ms.reorth = 0;
            gt_launch(&w, &g, nc, x.data(), o3.data(), &ms, tws[v]);
            ms.reorth = 1;
            gt_launch(&w, &g, nc, x.data(), o4.data(), &ms, tws[v]);
            bool gate = o3 == std::vector<double>(nc, -7.0) && o4 == o1;
            if (!(worst <= 1e-13) || !same || !gate) {
                nfail++;
                printf("FAIL gemv_t n=%lld nc=%lld part=%d tw=%lld: err %.2e same %d gate %d\n", (long long)n,
                       (long long)nc, withpart, (long long)tws[v], worst, same, gate);
            } else nok++;
        }
        std::vector<double> x1 = x, x2 = x, x3 = x, x4 = x;
        gn_launch(&w, &g, nc, h.data(), x1.data(), nullptr);
        gn_launch(&w, &g, nc, h.data(), x2.data(), nullptr);
        ms.reorth = 0;
        gn_launch(&w, &g, nc, h.data(), x3.data(), &ms);
        ms.reorth = 1;
        gn_launch(&w, &g, nc, h.data(), x4.data(), &ms);
        double worst = 0;
        for (int64_t i = 0; i < n; i++) worst = std::max(worst, fabs(x1[i] - xn[i]) / (xns[i] > 0 ? xns[i] : 1));
        if (!(worst <= 1e-13) || x1 != x2 || x3 != x || x4 != x1) {
            nfail++;
            printf("FAIL gemv_n n=%lld nc=%lld part=%d (tiles %lld): err %.2e\n", (long long)n, (long long)nc,
                   withpart, (long long)sps__gm_ntiles(n, nc), worst);
        } else nok++;
    }
    printf("n=%lld ncols=%lld done\n", (long long)n, (long long)nc);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IONBF, 0);
    /* each emulated thread is a std::thread: shapes of at most ~1e5 entries,
     * and a few larger ones for the plans that only they reach */
    static const int64_t en[] = {1, 31, 32, 33, 1023, 1024, 1025}, ec[] = {1, 2, 31, 33, 65, 2000};
    for (int64_t n : en)
        for (int64_t nc : ec)
            if (n * nc <= 70000) run_shape(n, nc);
    if (argc < 2) {            /* not quick */
        run_shape(3937, 130);  /* gemv_n: 62 row tiles, 2 column tiles */
        run_shape(20000, 9);   /* gemv_t: chunks from w->red */
        run_shape(100000, 2);  /* gemv_t: chunks capped by w->red */
    }
    printf("gm emu: %d ok, %d failed\n", nok, nfail);
    return nfail ? 1 : 0;
}
