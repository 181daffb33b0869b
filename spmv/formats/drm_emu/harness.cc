/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/drm_emu/harness.cc: drm_convert.cu's DRM kernels
 * (seg_count_kernel, scatter_kernel; run.sh cuts them out of the file) on
 * the CPU emulation of emu.h, with build()'s host steps between them as
 * drm.c runs them, against the host conversion (sps__drm_build on a CPU
 * context): the counts, dnum, index and blo, then off, val and map bit for
 * bit. The device arrays start filled with 0xa5 bytes, so a slot the scatter
 * did not write shows. Matrices: generated ones, every matrix of
 * $SPS_MATRICES, and edge cases (sizes around 32 and 1024, empty rows, a
 * long row, rectangular, empty). Exit status 0 when every comparison holds. */
#include "emu.h"
#include "core/internal.h"
#include "spmv/formats/diag_common.h"

#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <string>

namespace {
#include "drm_kernels.inc"
unsigned blocks_for(long long threads) { return (unsigned)((threads + THREADS - 1) / THREADS); }
} // namespace

/* Device memory for drm.cu's upload and fetch (drm_upload.inc): host
 * memory, and 0 bytes give NULL as core/gpu.cu's sps__dmalloc does. */
static long live_dev; /* device arrays not freed */
extern "C" sps_status sps__dmalloc(sps_context *, void **p, size_t bytes)
{
    *p = bytes ? malloc(bytes) : nullptr;
    if (*p) live_dev++;
    return bytes && !*p ? SPS_ERR_NO_MEMORY : SPS_OK;
}
extern "C" void sps__dfree(void *p)
{
    if (p) live_dev--;
    free(p);
}
extern "C" sps_status sps__d2h(sps_context *, void *dst, const void *src, size_t bytes)
{
    if (bytes) memcpy(dst, src, bytes);
    return SPS_OK;
}
static sps_status sps__h2d(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    return sps__d2h(ctx, dst, src, bytes);
}
extern "C" sps_status sps__upload_values(sps_context *, void *dst, const double *src, size_t n, int single)
{
    for (size_t i = 0; i < n; i++)
        if (single) ((float *)dst)[i] = (float)src[i];
        else ((double *)dst)[i] = src[i];
    return SPS_OK;
}
extern "C" sps_status sps__narrow_dev(sps_context *, const double *a, size_t n, float *b)
{
    for (size_t i = 0; i < n; i++) b[i] = (float)a[i];
    return SPS_OK;
}
static sps_status sps_diag_alloc_copy(sps_context *ctx, void **dst, const void *src, size_t bytes,
                                      size_t *total)
{
    *total += bytes;
    sps_status st = sps__dmalloc(ctx, dst, bytes);
    if (st == SPS_OK && src) st = sps__h2d(ctx, *dst, src, bytes);
    return st;
}
#include "drm_upload.inc"

#include "tests/emu_check.h"

template <class T> static std::vector<T> garbage(size_t n)
{
    std::vector<T> v(n + 1);
    memset(v.data(), 0xa5, v.size() * sizeof(T));
    return v;
}

template <class T> static bool same(const T *a, const T *b, size_t n)
{
    return n == 0 || memcmp(a, b, n * sizeof(T)) == 0;
}

template <class T> static T *dev_copy(const std::vector<T> &v, size_t n)
{
    void *p = nullptr;
    sps__dmalloc(nullptr, &p, n * sizeof(T));
    if (p) memcpy(p, v.data(), n * sizeof(T));
    return (T *)p;
}

/* drm.cu's upload of the device-built format g that build() leaves after
 * the scatter (no host block: hblk, dnum, index and blo NULL; ndiag, maxmem
 * and bseg from sps__drm_slots in s; dblk, val and map on the "device",
 * allocated as drm_convert.cu allocates them), then its fetch, as
 * test_convert_gpu does: the upload takes every device array and sets the
 * device object as the upload of the host build h does, the fetch brings
 * dnum, index, index's inverse (inv), blo, off, val and map back bitwise
 * equal to h's, and nothing leaks. */
static void check_upload(sps_context *ctx, const char *name, const sps_fmt_drm *h, const sps_fmt_drm *s0,
                         const std::vector<sps_idx> &inv, const std::vector<sps_idx> &dblk,
                         const std::vector<double> &val, const std::vector<sps_idx> &map)
{
    const sps_idx S = h->nslot;
    const size_t nd = (size_t)h->dnum[S], words = SPS_DRM_BLK_WORDS(S);
    const size_t mw = std::max((size_t)h->nnz, (size_t)S);
    for (int single = 0; single < 2; single++) {
        const long live0 = live_dev;
        sps_fmt_drm g;
        memset(&g, 0, sizeof g);
        g.nrows = h->nrows;
        g.ncols = h->ncols;
        g.nnz = h->nnz;
        g.seg = 32;
        g.nslot = S;
        g.nblk = s0->nblk;
        g.ndiag = s0->ndiag;
        g.maxmem = s0->maxmem;
        g.bseg = s0->bseg;
        g.rows = 128;
        g.unroll = 4;
        g.dblk = dev_copy(dblk, words + nd);
        g.dval = dev_copy(val, nd * 32);
        g.dmap = dev_copy(map, mw ? mw : 1);
        void *dev = nullptr, *hdev = nullptr;
        sps_spmv_stats st{}, hst{};
        sps_status s = sps_drm_upload(ctx, (const sps_fmt *)&g, single, &dev, &st);
        CHECK(s == SPS_OK && !g.dblk && !g.dval && !g.dmap,
              "%s: the upload%s takes dblk, dval and dmap (left: %d %d %d)", name, single ? " (single)" : "",
              g.dblk != nullptr, g.dval != nullptr, g.dmap != nullptr);
        /* the host build's upload (rows = 128 as g): the same device object */
        sps_fmt_drm hc = *h;
        hc.rows = 128;
        hc.unroll = 4;
        sps_status hs = sps_drm_upload(ctx, (const sps_fmt *)&hc, single, &hdev, &hst);
        if (s == SPS_OK && hs == SPS_OK) {
            const drm_dev *a = (const drm_dev *)dev, *b = (const drm_dev *)hdev;
            CHECK(a->bseg == b->bseg && a->nval == b->nval && a->nslot == b->nslot && a->nblk == b->nblk &&
                      a->maxmem == b->maxmem && a->lg == b->lg && st.device_bytes >= hst.device_bytes &&
                      same(a->dnum, b->dnum, (size_t)S + 1) && same(a->index, b->index, (size_t)S) &&
                      same(a->blo, b->blo, (size_t)h->nblk + 1) && same(a->off, b->off, nd),
                  "%s: device object%s as the host build's upload (bseg %d and %d)", name,
                  single ? " (single)" : "", a->bseg, b->bseg);
        } else {
            CHECK(false, "%s: host build's upload: %s", name, sps_last_error(ctx));
        }
        if (s == SPS_OK) s = sps_drm_fetch(ctx, (sps_fmt *)&g, dev);
        std::vector<double> hv(h->val, h->val + nd * 32);
        for (double &x : hv) x = single ? (double)(float)x : x;
        CHECK(s == SPS_OK && g.hblk && g.dnum == g.hblk && g.index && g.blo &&
                  same(g.dnum, h->dnum, (size_t)S + 1) && same(g.index, h->index, (size_t)S) &&
                  same(g.blo, h->blo, (size_t)h->nblk + 1) &&
                  same(g.hblk + SPS_DRM_BLK_AUX(S), inv.data(), (size_t)S),
              "%s: the fetch%s brings dnum, index, inv and blo back bitwise", name, single ? " (single)" : "");
        CHECK(s == SPS_OK && g.off && g.val && g.map && same(g.off, h->off, nd) && same(g.val, hv.data(), nd * 32) &&
                  same(g.map, h->map, (size_t)h->nnz),
              "%s: the fetch%s brings off, val and map back bitwise", name, single ? " (single)" : "");
        /* a second fetch changes nothing and allocates nothing */
        const sps_idx *hb = g.hblk, *o = g.off;
        const double *vv = g.val;
        if (s == SPS_OK) s = sps_drm_fetch(ctx, (sps_fmt *)&g, dev);
        CHECK(s == SPS_OK && g.hblk == hb && g.off == o && g.val == vv, "%s: a second fetch%s is a no-op", name,
              single ? " (single)" : "");
        sps__free(g.hblk);
        sps__free(g.off);
        sps__free(g.val);
        sps__free(g.map);
        sps__dfree(g.dblk);
        sps__dfree(g.dval);
        sps__dfree(g.dmap);
        sps_drm_free_dev(dev);
        sps_drm_free_dev(hdev);
        CHECK(live_dev == live0, "%s: no device array leaks (%ld)", name, live_dev - live0);
    }
}

/* The device path of drm.c's build() for A, emulated, against the host's. */
static void check(sps_context *ctx, const char *name, const sps_csr *A, int group, int order_rows)
{
    sps_fmt *fmt = nullptr;
    sps_spmv_stats st{};
    sps_status s = sps__drm_build(ctx, A, 32, group, 128, order_rows, &fmt, &st);
    CHECK(s == SPS_OK, "%s: host build: %s", name, sps_last_error(ctx));
    if (s != SPS_OK) return;
    const sps_fmt_drm *f = (const sps_fmt_drm *)fmt;
    const int m = A->nrows;
    const sps_idx S = (m + 31) / 32;
    /* scan: counts on the "device", downloaded into the block's aux part */
    std::vector<sps_idx> blk(SPS_DRM_BLK_WORDS(S) + 1);
    sps_idx *dnum = blk.data(), *index = dnum + SPS_DRM_BLK_INDEX(S), *blo = dnum + SPS_DRM_BLK_BLO(S);
    sps_idx *cnt = dnum + SPS_DRM_BLK_AUX(S);
    std::vector<sps_idx> dcount = garbage<sps_idx>((size_t)S);
    const sps_idx *rp = A->row_ptr, *col = A->col_idx;
    const double *v = A->val;
    if (S > 0)
        emu_launch(blocks_for((long long)S * 32), THREADS,
                   [&] { seg_count_kernel(rp, col, m, S, dcount.data()); });
    memcpy(cnt, dcount.data(), (size_t)S * sizeof(sps_idx));
    /* the plan and the slots on the host, as build() does them */
    sps_idx nblk = 0;
    double var = 0;
    /* the plan's scratch lent as drm.c lends its workspace: 4 MiB of garbage */
    std::vector<double> ws = garbage<double>((size_t)1 << 19);
    sps_fmt_drm sl{}; /* build()'s plan and slots */
    sl.nslot = S;
    sl.seg = 32;
    sl.dnum = dnum;
    sl.index = index;
    sl.blo = blo;
    s = sps__drm_plan_slots(ctx, &sl, cnt, group, order_rows, &var, ws.data(),
                            ((size_t)1 << 19) * sizeof(double));
    CHECK(s == SPS_OK, "%s: plan: %s", name, sps_last_error(ctx));
    nblk = sl.nblk;
    CHECK(nblk == f->nblk && same(blo, f->blo, (size_t)nblk + 1) && same(index, f->index, (size_t)S) &&
              same(dnum, f->dnum, (size_t)S + 1) && sl.ndiag == f->ndiag && sl.maxmem == f->maxmem &&
              sl.bseg == f->bseg,
          "%s: counts, plan, dnum, maxmem and bseg as the host's (%d sub-blocks)", name, f->nblk);
    CHECK(var == st.balance_var, "%s: variance %.17g, host %.17g", name, var, st.balance_var);
    std::vector<sps_idx> inv((size_t)S + 1);
    for (sps_idx k = 0; k < S; k++) inv[(size_t)f->index[k]] = k;
    CHECK(same(cnt, inv.data(), (size_t)S), "%s: the counts became index's inverse", name);
    /* scatter */
    const size_t nd = (size_t)dnum[S];
    /* the device block: blk's words, then off; the map's array as allocated (garbage) */
    const size_t words = SPS_DRM_BLK_WORDS(S);
    std::vector<sps_idx> dblk = garbage<sps_idx>(words + nd);
    std::vector<sps_idx> map = garbage<sps_idx>(A->nnz ? (size_t)A->nnz : 1);
    const size_t up = SPS_DRM_BLK_BLO(S) + (size_t)nblk + 1; /* what the scatter uploads */
    memcpy(dblk.data(), blk.data(), up * sizeof(sps_idx));
    std::vector<double> val = garbage<double>(nd * 32);
    if (S > 0)
        emu_launch(blocks_for((long long)S * 32), THREADS, [&] {
            scatter_kernel(rp, col, v, m, S, dblk.data() + SPS_DRM_BLK_AUX(S), dblk.data(),
                           dblk.data() + words, val.data(), map.data());
        });
    CHECK(same(dblk.data() + words, f->off, nd), "%s: off bitwise (%zu diagonals)", name, nd);
    CHECK(same(val.data(), f->val, nd * 32), "%s: val bitwise (%zu slots)", name, nd * 32);
    CHECK(same(map.data(), f->map, (size_t)A->nnz), "%s: map bitwise (%d entries)", name, A->nnz);
    CHECK(same(dblk.data(), blk.data(), up), "%s: the block unchanged by the kernels", name);
    check_upload(ctx, name, f, &sl, inv, dblk, val, map);
    sps_backend_drm.free_fmt(fmt);
}

static void check_all(sps_context *ctx, const char *name, const sps_matrix *M)
{
    check(ctx, name, &M->A, 1, 1);
    check(ctx, (std::string(name) + " (order=list)").c_str(), &M->A, 1, 0);
    check(ctx, (std::string(name) + " (hdia)").c_str(), &M->A, 0, 1);
}

static unsigned long long rng = 88172645463325252ull;
static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* m x n with about k entries per row, `empty` of 8 rows empty, and row
 * `longrow` (if >= 0) with entries in `longlen` columns. */
static sps_matrix *random_matrix(sps_context *ctx, int m, int n, int k, int empty, int longrow, int longlen)
{
    std::vector<sps_idx> ri, ci;
    std::vector<double> vv;
    for (int i = 0; i < m; i++) {
        int len = (int)rnd(8) < empty ? 0 : 1 + (int)rnd((unsigned)(2 * k));
        if (i == longrow) len = longlen;
        for (int t = 0; t < len && n > 0; t++) {
            ri.push_back(i);
            /* near the diagonal mostly, anywhere sometimes */
            long long c = rnd(4) ? (long long)i + (long long)rnd(41) - 20 : (long long)rnd((unsigned)n);
            if (i == longrow) c = (long long)t * n / len;
            ci.push_back((sps_idx)std::max(0LL, std::min((long long)n - 1, c)));
            vv.push_back((rnd(2) ? -1.0 : 1.0) * (1.0 + rnd(1000)) / 7.0);
        }
    }
    sps_matrix *M = nullptr;
    if (sps_matrix_create_coo(ctx, m, n, (int64_t)ri.size(), ri.data(), ci.data(), vv.data(), &M) != SPS_OK) {
        printf("FAIL random %dx%d: %s\n", m, n, sps_last_error(ctx));
        fails++;
        return nullptr;
    }
    return M;
}

/* check() on the generated matrix spec, or a FAIL line when it cannot be made. */
static void check_generated(sps_context *ctx, const char *spec)
{
    sps_matrix *M = nullptr;
    if (sps_matrix_generate(ctx, spec, &M) != SPS_OK) {
        printf("FAIL generate %s: %s\n", spec, sps_last_error(ctx));
        fails++;
        return;
    }
    check(ctx, spec, &M->A, 1, 1);
    sps_matrix_destroy(M);
}

int main(int argc, char **argv)
{
    /* arguments: "quick" (no banded:200000, no real matrices), "only" (none of
     * the built-in cases), generator specs to check as well */
    bool quick = false, only = false;
    std::vector<const char *> extra;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "quick") == 0) quick = true;
        else if (strcmp(argv[i], "only") == 0) only = true;
        else extra.push_back(argv[i]);
    }
    sps_context *ctx = nullptr;
    if (sps_context_create(&ctx, -1) != SPS_OK) {
        printf("FAIL context: %s\n", sps_last_error(nullptr));
        return 1;
    }
    for (const char *g : extra) check_generated(ctx, g);
    if (only) {
        sps_context_destroy(ctx);
        printf("%s: %d of %d comparisons hold\n", fails ? "FAIL" : "ok", checks - fails, checks);
        return fails ? 1 : 0;
    }
    /* edge cases */
    const int sizes[] = {1, 2, 31, 32, 33, 63, 64, 65, 1023, 1024, 1025, 4097};
    for (int m : sizes)
        for (int empty = 0; empty <= 4; empty += 2) {
            sps_matrix *M = random_matrix(ctx, m, m, 4, empty, -1, 0);
            if (!M) continue;
            char name[64];
            snprintf(name, sizeof name, "random %d, %d/8 rows empty", m, empty);
            check_all(ctx, name, M);
            sps_matrix_destroy(M);
        }
    struct { int m, n, k, empty, longrow, longlen; } shapes[] = {
        {1025, 1025, 3, 1, 700, 1025},  /* one full row */
        {2000, 3000, 5, 2, 33, 2900},   /* rectangular, one long row */
        {3000, 200, 3, 1, -1, 0},       /* tall */
        {100, 5000, 8, 0, 99, 4000},    /* wide, the last row long */
        {64, 64, 0, 8, -1, 0},          /* no entries */
    };
    for (auto &sh : shapes) {
        sps_matrix *M = random_matrix(ctx, sh.m, sh.n, sh.k, sh.empty, sh.longrow, sh.longlen);
        if (!M) continue;
        char name[96];
        snprintf(name, sizeof name, "random %dx%d, long row %d", sh.m, sh.n, sh.longrow);
        check_all(ctx, name, M);
        sps_matrix_destroy(M);
    }
    {
        sps_idx rp0[1] = {0};
        sps_matrix *M = nullptr;
        if (sps_matrix_create_csr(ctx, 0, 0, rp0, nullptr, nullptr, &M) == SPS_OK) {
            check_all(ctx, "0x0", M);
            sps_matrix_destroy(M);
        }
    }
    /* generated */
    const char *gens[] = {"poisson3d:40", "poisson2d:100", "banded:200000,9,0.01,1", "powerlaw:20000,8,3",
                          "convdiff2d:90,10"};
    for (const char *g : gens) {
        if (quick && strncmp(g, "banded", 6) == 0) continue;
        check_generated(ctx, g);
    }
    /* real */
    const char *dir = getenv("SPS_MATRICES");
    if (dir && !quick) {
        DIR *d = opendir(dir);
        std::vector<std::string> names;
        for (struct dirent *e; d && (e = readdir(d));)
            if (strstr(e->d_name, ".mtx")) names.push_back(e->d_name);
        if (d) closedir(d);
        std::sort(names.begin(), names.end());
        for (auto &nm : names) {
            sps_matrix *M = nullptr;
            if (sps_matrix_read(ctx, (std::string(dir) + "/" + nm).c_str(), &M) != SPS_OK) {
                printf("FAIL read %s: %s\n", nm.c_str(), sps_last_error(ctx));
                fails++;
                continue;
            }
            check(ctx, nm.c_str(), &M->A, 1, 1);
            sps_matrix_destroy(M);
        }
    }
    sps_context_destroy(ctx);
    printf("%s: %d of %d comparisons hold\n", fails ? "FAIL" : "ok", checks - fails, checks);
    return fails ? 1 : 0;
}
