/* SPDX-License-Identifier: MIT */
/* spsolve/precond/mcilu/emu/harness.cc: mcilu.cu's device setup, apply and
 * refresh on the CPU emulation against the host reference (run.sh): every
 * array the device's symbolic setup builds (the graph, colours, perm, cptr,
 * F's pattern and values, amap, dpos, and for ic0 T and tmap), the rounds,
 * the factor and the apply bitwise equal; the same failures in the same
 * words. Every other case hands the setup a device copy of A (as the solve's
 * operator leaves it); the others make it upload A. */
#include "mcilu_emu.cc"

#include <cstdio>
#include <string>

extern "C" {
extern const sps_pc_type sps_pc_ilu0, sps_pc_ic0;
int sps__gpu_sm_count(sps_context *) { return 4; }
sps_status sps__d2d(sps_context *, void *d, const void *s, size_t b) { memcpy(d, s, b); return SPS_OK; }
}

#include "tests/emu_check.h"

struct copy {
    sps_mcilu_view v{};
    std::vector<sps_idx> color, perm;
    std::vector<double> f;
};

static copy fetch(const sps_precond *pc, bool dev)
{
    copy c;
    if (dev) sps__mcilu_fetch_dev(pc, &c.v, nullptr, nullptr, nullptr);
    else sps__mcilu_fetch(pc, &c.v, nullptr, nullptr, nullptr);
    c.color.resize(c.v.n + 1);
    c.perm.resize(c.v.n + 1);
    c.f.resize(c.v.nnz + 1);
    if (dev) sps__mcilu_fetch_dev(pc, nullptr, c.color.data(), c.perm.data(), c.f.data());
    else sps__mcilu_fetch(pc, nullptr, c.color.data(), c.perm.data(), c.f.data());
    return c;
}

/* Slices over the run: stored (sliced ELL), walking CSR (fallback), stored
 * with padding (a row shorter than its slice's width). */
static long long n_ell, n_csr, n_padded;
/* The last slabs checked: terms stored, their slots, terms on the CSR walk. */
static long long last_terms, last_slots, last_csr_terms;

/* The device's slabs (dev_mcilu: this file includes mcilu.cu) against the
 * host factor: every stored term and pivot where the CSR rows hold it, the
 * offsets the scan of the widths, the fallback rule; then the apply with
 * every slice forced onto the CSR walk (the kernels' fallback) bitwise the
 * apply through the slabs (zd) too. */
static void slabs(const char *what, const sps_precond *hp, sps_precond *dp, const std::vector<double> &r,
                  const std::vector<double> &zd)
{
    const sps_mcilu *m = (const sps_mcilu *)hp->impl;
    dev_mcilu *g = (dev_mcilu *)dp->impl;
    sps_idx n = m->n, ns = g->ns, nc = m->ncolors;
    const sps_csr *F = &m->F, *U = m->cholesky ? &m->T : &m->F;
    CHECK(g->sbase && g->sbase[0] == 0, "%s: slices", what);
    bool ok_len = true, ok_rule = true, ok_terms = true, ok_dg = true;
    long long at = 0;
    last_terms = last_slots = last_csr_terms = 0;
    for (int tri = 0; tri < 2; tri++)
        for (sps_idx c = 0; c < nc; c++)
            for (sps_idx r0 = m->cptr[c]; r0 < m->cptr[c + 1]; r0 += 32) {
                sps_idx t = tri * ns + g->sbase[c] + (r0 - m->cptr[c]) / 32, h = std::min<sps_idx>(32, m->cptr[c + 1] - r0);
                long long terms = 0;
                int w = 0;
                for (sps_idx k = r0; k < r0 + h; k++) {
                    sps_idx lo = tri ? m->dpos[k] + 1 : F->row_ptr[k];
                    sps_idx hi = tri ? U->row_ptr[k + 1] : (m->cholesky ? F->row_ptr[k + 1] - 1 : m->dpos[k]);
                    ok_len &= g->len[(size_t)tri * n + k] == hi - lo;
                    terms += hi - lo;
                    w = std::max(w, hi - lo);
                }
                bool ell = (long long)w * h <= 2 * terms + h;
                ok_rule &= g->width[t] == (ell ? w : -1) && g->soff[t] == at;
                if (!ell) {
                    n_csr++;
                    last_csr_terms += terms;
                    continue;
                }
                n_ell++;
                last_terms += terms;
                last_slots += (long long)w * h;
                n_padded += (long long)w * h > terms;
                for (sps_idx k = r0; k < r0 + h; k++) {
                    const sps_csr *X = tri ? U : F;
                    sps_idx lo = tri ? m->dpos[k] + 1 : F->row_ptr[k];
                    for (sps_idx j = 0; j < g->len[(size_t)tri * n + k]; j++) {
                        long long o = at + (k - r0) + (long long)j * h;
                        ok_terms &= g->scol[o] == X->col_idx[lo + j] &&
                                    memcmp(&g->sval[o], &X->val[lo + j], sizeof(double)) == 0;
                    }
                }
                at += (long long)w * h;
            }
    for (sps_idx k = 0; k < n; k++) ok_dg &= memcmp(&g->dg[k], &U->val[m->dpos[k]], sizeof(double)) == 0;
    bool last_empty = true; /* the apply folds the last colour's backward step into its forward one */
    for (sps_idx k = nc > 0 ? m->cptr[nc - 1] : n; k < n; k++) last_empty &= g->len[(size_t)n + k] == 0;
    CHECK(last_empty, "%s: the last colour's rows have terms after the diagonal", what);
    CHECK(ok_len && ok_rule && g->soff[2LL * ns] == at, "%s: slab lengths / widths / offsets", what);
    CHECK(ok_terms && ok_dg, "%s: slab terms / pivots differ from the host factor's", what);
    std::vector<int> keep(g->width, g->width + 2LL * ns);
    std::fill(g->width, g->width + 2LL * ns, -1);
    std::vector<double> zc(n, -3.0);
    CHECK(dp->apply(dp, r.data(), zc.data()) == SPS_OK && memcmp(zc.data(), zd.data(), n * sizeof(double)) == 0,
          "%s: the CSR walk differs from the slabs'", what);
    std::copy(keep.begin(), keep.end(), g->width);
}

static void same(const char *what, const sps_precond *hp, const sps_precond *dp)
{
    copy a = fetch(hp, false), b = fetch(dp, true);
    CHECK(a.v.ncolors == b.v.ncolors && a.v.rounds == b.v.rounds && a.v.nnz == b.v.nnz,
          "%s: colours %d/%d rounds %d/%d nnz %lld/%lld", what, a.v.ncolors, b.v.ncolors, a.v.rounds, b.v.rounds,
          (long long)a.v.nnz, (long long)b.v.nnz);
    CHECK(a.color == b.color, "%s: colours differ", what);
    CHECK(a.perm == b.perm, "%s: permutations differ", what);
    CHECK(a.f.size() == b.f.size() && memcmp(a.f.data(), b.f.data(), a.f.size() * sizeof(double) - sizeof(double)) == 0,
          "%s: factors differ", what);
    sps_idx n = a.v.n;
    std::vector<double> r(n), zh(n), zd(n, -1.0), zd2(n, -2.0);
    for (sps_idx i = 0; i < n; i++) r[i] = std::sin(1.0 + i) + 0.25 * (i % 5);
    std::vector<double> rb = r;
    sps_precond_apply(const_cast<sps_precond *>(hp), r.data(), zh.data());
    sps_precond *d = const_cast<sps_precond *>(dp);
    CHECK(d->apply(d, r.data(), zd.data()) == SPS_OK && d->apply(d, r.data(), zd2.data()) == SPS_OK, "%s: apply", what);
    CHECK(memcmp(zh.data(), zd.data(), n * sizeof(double)) == 0, "%s: apply differs", what);
    CHECK(memcmp(zd2.data(), zd.data(), n * sizeof(double)) == 0 && r == rb, "%s: second apply differs / r changed", what);
    slabs(what, hp, d, r, zd);
}

/* A device copy of A's CSR attached to it (the emulation's: host memory), as
 * an operator leaves it; detach() frees it. */
static int with_copy;

static void attach(sps_matrix *A)
{
    if (!with_copy) return;
    const sps_csr *C = &A->A;
    sps_dcsr *d = (sps_dcsr *)calloc(1, sizeof *d);
    d->ctx = nullptr; /* set by the caller's context below */
    d->h_row_ptr = C->row_ptr;
    d->h_col_idx = C->col_idx;
    d->h_val = C->val;
    d->nrows = C->nrows;
    d->ncols = C->ncols;
    d->nnz = C->nnz;
    d->row_ptr = (sps_idx *)malloc(((size_t)C->nrows + 1) * 4);
    memcpy(d->row_ptr, C->row_ptr, ((size_t)C->nrows + 1) * 4);
    d->col_idx = (sps_idx *)malloc((size_t)C->nnz * 4 + 4);
    memcpy(d->col_idx, C->col_idx, (size_t)C->nnz * 4);
    d->val = (double *)malloc((size_t)C->nnz * 8 + 8);
    memcpy(d->val, C->val, (size_t)C->nnz * 8);
    A->A.dev = d;
}

static void detach(sps_matrix *A)
{
    sps_dcsr *d = A->A.dev;
    if (!d) return;
    A->A.dev = nullptr;
    free(d->row_ptr);
    free(d->col_idx);
    free(d->val);
    free(d);
}

template <class T> static bool eq(const T *a, const T *b, long long n)
{
    return n <= 0 || (a && b && memcmp(a, b, (size_t)n * sizeof(T)) == 0);
}

/* The device's symbolic arrays against the host build's (hp), bitwise. */
static void same_symbolic(sps_context *ctx, const char *what, const sps_matrix *A, int chol, const sps_precond *hp,
                          sps_precond *dp)
{
    sps_mcilu *d = nullptr;
    sps_status st = sps__mcilu_symbolic_dev(dp, A, chol, &d);
    CHECK(st == SPS_OK && d, "%s: symbolic: %s", what, sps_last_error(ctx));
    if (st != SPS_OK || !d) {
        sps__mcilu_free(d);
        return;
    }
    const sps_mcilu *h = (const sps_mcilu *)hp->impl;
    sps_idx n = h->n, nnz = h->F.nnz;
    CHECK(d->n == n && d->ncolors == h->ncolors && d->rounds == h->rounds, "%s: sizes", what);
    CHECK(eq(d->grp, h->grp, n + 1) && eq(d->gci, h->gci, h->grp[n]), "%s: graph differs", what);
    CHECK(eq(d->color, h->color, n), "%s: colours differ", what);
    CHECK(eq(d->perm, h->perm, n), "%s: perm differs", what);
    CHECK(eq(d->cptr, h->cptr, h->ncolors + 1), "%s: cptr differs", what);
    CHECK(d->F.nnz == nnz && eq(d->F.row_ptr, h->F.row_ptr, n + 1) && eq(d->F.col_idx, h->F.col_idx, nnz),
          "%s: F's pattern differs", what);
    CHECK(eq(d->amap, h->amap, nnz) && eq(d->dpos, h->dpos, n), "%s: amap / dpos differ", what);
    std::vector<double> hv(nnz + 1);
    for (sps_idx q = 0; q < nnz; q++) hv[q] = A->A.val[h->amap[q]];
    CHECK(eq(d->F.val, hv.data(), nnz), "%s: F's values (A's, gathered) differ", what);
    if (chol)
        CHECK(d->T.nnz == h->T.nnz && eq(d->T.row_ptr, h->T.row_ptr, n + 1) &&
                  eq(d->T.col_idx, h->T.col_idx, h->T.nnz) && eq(d->tmap, h->tmap, h->T.nnz),
              "%s: T / tmap differ", what);
    else CHECK(!d->T.row_ptr && !d->tmap, "%s: ilu0 builds no T", what);
    sps__mcilu_free(d);
}

/* The registry's GPU path by hand: host setup (nothing on a GPU context),
 * then the device one. */
static sps_status dev_build(sps_context *ctx, const sps_matrix *A, int chol, sps_precond *pc)
{
    memset(pc, 0, sizeof *pc);
    pc->ctx = ctx;
    pc->type = chol ? &sps_pc_ic0 : &sps_pc_ilu0;
    pc->n = A->A.nrows;
    snprintf(pc->name, sizeof pc->name, "%s", chol ? "ic0:order=color" : "ilu0:order=color");
    sps_pc_input in = {A, nullptr, 1};
    sps_status st = sps__mcilu_setup_host(pc, &in, chol);
    sps_precond host = *pc;
    pc->impl = nullptr;
    pc->destroy = nullptr;
    pc->apply = nullptr;
    if (st == SPS_OK) st = sps__mcilu_setup_dev(pc, &in, (sps_mcilu *)host.impl);
    if (host.destroy) host.destroy(&host);
    return st;
}

static sps_matrix *scaled(sps_context *ctx, const sps_matrix *A, double s)
{
    const sps_csr &M = A->A;
    std::vector<double> v(M.nnz + 1);
    for (sps_idx p = 0; p < M.nnz; p++) v[p] = s * M.val[p];
    sps_matrix *B = nullptr;
    sps_matrix_create_csr(ctx, M.nrows, M.ncols, M.row_ptr, M.col_idx, v.data(), &B);
    return B;
}

static void one_(sps_context *ctx, const sps_matrix *A, const char *name, int chol);

static void one(sps_context *ctx, const sps_matrix *A, const char *name, int chol)
{
    with_copy = !with_copy;
    sps_matrix *M = const_cast<sps_matrix *>(A);
    attach(M);
    if (M->A.dev) M->A.dev->ctx = ctx;
    one_(ctx, A, name, chol);
    detach(M);
}

static void one_(sps_context *ctx, const sps_matrix *A, const char *name, int chol)
{
    std::string what = std::string(name) + (chol ? " ic0" : " ilu0");
    sps_precond *hp = nullptr, dp;
    sps_status hs = sps_precond_create(ctx, A, chol ? "ic0:order=color" : "ilu0:order=color", &hp);
    std::string hmsg = hs == SPS_OK ? "" : sps_last_error(ctx);
    sps_status ds = dev_build(ctx, A, chol, &dp);
    std::string dmsg = ds == SPS_OK ? "" : sps_last_error(ctx);
    CHECK(hs == ds && hmsg == dmsg, "%s: host %d '%s', device %d '%s'", what.c_str(), hs, hmsg.c_str(), ds, dmsg.c_str());
    if (hs != SPS_OK && A->A.nrows > 0) { /* the symbolic step alone fails alike, or gets to the factor */
        sps_mcilu *d = nullptr;
        sps_status ss = sps__mcilu_symbolic_dev(&dp, A, chol, &d);
        bool early = hmsg.find("no diagonal entry") != std::string::npos || hs != SPS_ERR_ZERO_PIVOT;
        CHECK(early ? ss == hs && hmsg == sps_last_error(ctx) : ss == SPS_OK,
              "%s: symbolic: %d '%s'", what.c_str(), ss, sps_last_error(ctx));
        sps__mcilu_free(d);
    }
    if (hs == SPS_OK && ds == SPS_OK && A->A.nrows > 0) {
        same_symbolic(ctx, what.c_str(), A, chol, hp, &dp);
        same(what.c_str(), hp, &dp);
        sps_matrix *B = scaled(ctx, A, 1.5), *Z = scaled(ctx, A, 0.0);
        CHECK(sps_precond_update_values(hp, B) == SPS_OK && sps__mcilu_refresh_dev(&dp, B) == SPS_OK, "%s: refresh",
              what.c_str());
        same((what + " refreshed").c_str(), hp, &dp);
        sps_status h2 = sps_precond_update_values(hp, Z);
        std::string m2 = sps_last_error(ctx);
        sps_status d2 = sps__mcilu_refresh_dev(&dp, Z);
        CHECK(h2 == SPS_ERR_ZERO_PIVOT && d2 == h2 && m2 == sps_last_error(ctx), "%s: failed refresh: '%s' / '%s'",
              what.c_str(), m2.c_str(), sps_last_error(ctx));
        same((what + " after a failed refresh").c_str(), hp, &dp);
        printf("# %-28s %3d colours%s; slabs: %lld terms in %.2fx slots, %lld on the CSR walk\n", what.c_str(),
               fetch(&dp, true).v.ncolors, with_copy ? " (A's device copy)" : " (A uploaded)", last_terms,
               last_terms ? (double)last_slots / (double)last_terms : 0.0, last_csr_terms);
        sps_matrix_destroy(B);
        sps_matrix_destroy(Z);
    }
    if (dp.destroy) dp.destroy(&dp);
    sps_precond_destroy(hp);
}

static sps_matrix *from_triplets(sps_context *ctx, sps_idx n, std::vector<sps_idx> &r, std::vector<sps_idx> &c,
                                 std::vector<double> &v)
{
    sps_matrix *A = nullptr;
    sps_matrix_create_coo(ctx, n, n, (int64_t)v.size(), r.data(), c.data(), v.data(), &A);
    return A;
}

static sps_matrix *arrow(sps_context *ctx, sps_idx n)
{
    std::vector<sps_idx> r, c;
    std::vector<double> v;
    auto add = [&](sps_idx i, sps_idx j, double x) { r.push_back(i); c.push_back(j); v.push_back(x); };
    for (sps_idx i = 0; i < n; i++) {
        add(i, i, i == 0 ? 4.0 + 0.5 * n : 4.0);
        if (i > 0) add(i, i - 1, -1.0);
        if (i + 1 < n) add(i, i + 1, -1.0);
        if (i > 1) add(0, i, 0.5), add(i, 0, 0.5);
    }
    return from_triplets(ctx, n, r, c, v);
}

static sps_matrix *oneway(sps_context *ctx, sps_idx n)
{
    std::vector<sps_idx> r, c;
    std::vector<double> v;
    auto add = [&](sps_idx i, sps_idx j, double x) { r.push_back(i); c.push_back(j); v.push_back(x); };
    for (sps_idx i = 0; i < n; i++) {
        add(i, i, 3.0 + (i % 4));
        if (i % 5 == 0) continue;
        if (i + 3 < n && (i + 3) % 5) add(i, i + 3, -1.0);
        if (i >= 1 && (i - 1) % 5) add(i, i - 1, -0.5);
    }
    return from_triplets(ctx, n, r, c, v);
}

/* Rows i and i + 1, i + 8 (a grid 8 wide), row 0 a hub coupled both ways to
 * every row 7j + 3 (one row much longer than its slice's others: the CSR
 * fallback), rows 11j + 5 isolated (no term in either triangle); diagonally
 * dominant, nonsymmetric values on a symmetric pattern unless sym. */
static sps_matrix *hub(sps_context *ctx, sps_idx n, int sym)
{
    std::vector<sps_idx> r, c;
    std::vector<double> v, d(n, 1.0);
    auto add = [&](sps_idx i, sps_idx j, double x, double y) {
        r.push_back(i), c.push_back(j), v.push_back(x);
        r.push_back(j), c.push_back(i), v.push_back(sym ? x : y);
        d[i] += std::fabs(x), d[j] += std::fabs(sym ? x : y);
    };
    auto alone = [](sps_idx i) { return i % 11 == 5; };
    for (sps_idx i = 0; i < n; i++) {
        if (alone(i)) continue;
        if (i + 1 < n && (i + 1) % 8 && !alone(i + 1)) add(i, i + 1, -1.0, -0.75);
        if (i + 8 < n && !alone(i + 8)) add(i, i + 8, -1.0, -1.25);
        if (i > 1 && i % 7 == 3) add(0, i, 0.5, 0.25);
    }
    for (sps_idx i = 0; i < n; i++) r.push_back(i), c.push_back(i), v.push_back(d[i] + 0.125 * (i % 3));
    return from_triplets(ctx, n, r, c, v);
}

/* Row 3: a stored zero (ic0: -1) with no neighbours. */
static sps_matrix *pivot12(sps_context *ctx, int chol)
{
    std::vector<sps_idx> r, c;
    std::vector<double> v;
    auto add = [&](sps_idx i, sps_idx j, double x) { r.push_back(i); c.push_back(j); v.push_back(x); };
    for (sps_idx i = 0; i < 12; i++) {
        add(i, i, i == 3 ? (chol ? -1.0 : 0.0) : 4.0);
        if (i == 3 || i == 2 || i == 4) continue;
        if (i + 1 < 12 && i + 1 != 3) add(i, i + 1, -1.0), add(i + 1, i, -1.0);
    }
    return from_triplets(ctx, 12, r, c, v);
}

/* Row 5 of 9 empty (no diagonal: refused alike, before the graph). */
static sps_matrix *empty_row(sps_context *ctx)
{
    std::vector<sps_idx> r, c;
    std::vector<double> v;
    auto add = [&](sps_idx i, sps_idx j, double x) { r.push_back(i); c.push_back(j); v.push_back(x); };
    for (sps_idx i = 0; i < 9; i++) {
        if (i == 5) continue;
        add(i, i, 4.0);
        if (i + 1 < 9 && i + 1 != 5) add(i, i + 1, -1.0), add(i + 1, i, -1.0);
    }
    return from_triplets(ctx, 9, r, c, v);
}

int main(int argc, char **argv)
{
    sps_context *ctx = nullptr;
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) return 2;
    const char *gens[] = {"poisson2d:30", "poisson3d:10", "convdiff2d:30,10", "poisson3d27:7",
                          "powerlaw:3000,6,3", "banded:1025,5,0,2", "poisson2d:200", "poisson3d:30", "poisson3d:70",
                          "convdiff2d:300,10", "convdiff2d:600,10"};
    for (const char *g : gens) {
        sps_matrix *A = nullptr;
        if (sps_matrix_generate(ctx, g, &A) != SPS_OK) { CHECK(0, "%s", g); continue; }
        one(ctx, A, g, 0);
        if (strncmp(g, "poisson", 7) == 0) one(ctx, A, g, 1);
        sps_matrix_destroy(A);
    }
    for (sps_idx n : {1, 2, 31, 32, 33, 1023, 1024, 1025, 40000}) {
        char w[48];
        sps_matrix *A = arrow(ctx, n), *O = oneway(ctx, n);
        snprintf(w, sizeof w, "arrow %d", n);
        one(ctx, A, w, 0);
        one(ctx, A, w, 1);
        snprintf(w, sizeof w, "one-way %d", n);
        one(ctx, O, w, 0);
        sps_matrix *H = hub(ctx, n, 0), *S = hub(ctx, n, 1);
        snprintf(w, sizeof w, "hub %d", n);
        one(ctx, H, w, 0);
        one(ctx, S, w, 1);
        sps_matrix_destroy(A);
        sps_matrix_destroy(O);
        sps_matrix_destroy(H);
        sps_matrix_destroy(S);
    }
    for (int chol = 0; chol < 2; chol++) {
        sps_matrix *P = pivot12(ctx, chol);
        one(ctx, P, "pivot at row 3", chol);
        sps_matrix_destroy(P);
        sps_matrix *E = empty_row(ctx);
        one(ctx, E, "empty row 5 of 9", chol);
        sps_matrix_destroy(E);
    }
    for (int k = 1; k < argc; k++) { /* real matrices: paths */
        sps_matrix *A = nullptr;
        if (sps_matrix_read(ctx, argv[k], &A) != SPS_OK) { CHECK(0, "read %s", argv[k]); continue; }
        const char *b = strrchr(argv[k], '/');
        one(ctx, A, b ? b + 1 : argv[k], 0);
        if (A->src.symmetry == SPS_SYMMETRIC) one(ctx, A, b ? b + 1 : argv[k], 1);
        sps_matrix_destroy(A);
    }
    sps_context_destroy(ctx);
    printf("# slices: %lld sliced ELL (%lld of them padded), %lld on the CSR walk\n", n_ell, n_padded, n_csr);
    CHECK(n_ell > 0 && n_padded > 0 && n_csr > 0, "both paths and padding covered");
    printf("%d checks, %d failed\n", checks, fails);
    return fails != 0;
}
