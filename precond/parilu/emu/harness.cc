/* SPDX-License-Identifier: MIT */
/* spsolve/precond/parilu/emu/harness.cc: parilu.cu's device factorization on
 * the CPU emulation against the host reference (run.sh): the factor after K
 * sweeps bitwise equal, the same refused row and kind, the diagonal scan;
 * generated matrices, chains of 1..1025 rows with an empty row and a long
 * row, refused pivots, and the matrices named on the command line. */
#include "parilu_emu.cc"

#include <cstdio>
#include <string>

extern "C" {
int sps__gpu_sm_count(const sps_context *) { return 4; }
sps_status sps__d2d(sps_context *, void *d, const void *s, size_t b) { memcpy(d, s, b); return SPS_OK; }
}

#include "tests/emu_check.h"

static sps_context *ctx;

/* F = A (ilu0) or tril(A) (ic0). */
struct pat {
    std::vector<sps_idx> rp, ci, dpos;
    std::vector<double> v;
};

static pat pattern_of(const sps_matrix *A, bool chol)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = sps_matrix_rows(A);
    pat p;
    p.rp.push_back(0);
    for (sps_idx i = 0; i < n; i++) {
        p.dpos.push_back(-1);
        for (sps_idx k = rp[i]; k < rp[i + 1]; k++) {
            if (chol && ci[k] > i) break;
            if (ci[k] == i) p.dpos[i] = (sps_idx)p.ci.size();
            p.ci.push_back(ci[k]);
            p.v.push_back(v[k]);
        }
        p.rp.push_back((sps_idx)p.ci.size());
    }
    return p;
}

/* Host and emulated device on the same pattern and values, K sweeps. */
static void compare(const std::string &what, const pat &p, bool chol, int K)
{
    sps_idx n = (sps_idx)p.dpos.size();
    int64_t nnz = (int64_t)p.v.size();
    sps_csr F{};
    F.nrows = F.ncols = n;
    F.nnz = (sps_idx)nnz;
    F.row_ptr = const_cast<sps_idx *>(p.rp.data());
    F.col_idx = const_cast<sps_idx *>(p.ci.data());
    std::vector<double> vh = p.v, vd = p.v;
    vh.push_back(0);
    vd.push_back(0);
    int64_t bh = -2, bd = -3;
    sps_status sh = sps__parilu_host(ctx, &F, chol ? nullptr : p.dpos.data(), chol, K, vh.data(), &bh, nullptr);
    sps_status sd = sps__parilu_dev(ctx, n, nnz, p.rp.data(), p.ci.data(), chol, K, vd.data(), &bd);
    CHECK(sh == SPS_OK && sd == SPS_OK, "%s K=%d: status %d/%d", what.c_str(), K, sh, sd);
    CHECK(memcmp(vh.data(), vd.data(), (size_t)nnz * sizeof(double)) == 0, "%s %s K=%d: factors differ",
          what.c_str(), chol ? "ic0" : "ilu0", K);
    CHECK(bh == bd, "%s K=%d: refused %lld on the host, %lld on the device", what.c_str(), K, (long long)bh,
          (long long)bd);
}

static void diag_scan(const std::string &what, const pat &p)
{
    sps_idx n = (sps_idx)p.dpos.size(), first = -2, hfirst = -1;
    std::vector<sps_idx> d(n + 1, -7);
    sps__parilu_dev_diag(ctx, n, p.rp.data(), p.ci.data(), d.data(), &first);
    for (sps_idx i = n - 1; i >= 0; i--)
        if (p.dpos[i] < 0) hfirst = i;
    CHECK(first == hfirst && std::equal(p.dpos.begin(), p.dpos.end(), d.begin()), "%s: diagonal scan (first %d/%d)",
          what.c_str(), first, hfirst);
}

/* ic0's device pieces: the exact symmetry test, tril(A) with L's diagonal
 * positions, L''s pattern, against the host's. */
static void ic0_pieces(const std::string &what, const sps_matrix *A, const pat &pu, const pat &pl)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = (sps_idx)pu.dpos.size();
    int64_t nnz = (int64_t)pu.v.size();
    int same = -1, hsame = 1;
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) {
            sps_idx j = ci[p], m = rp[j];
            while (m < rp[j + 1] && ci[m] < i) m++;
            if (m == rp[j + 1] || ci[m] != i || !(v[m] == v[p])) hsame = 0;
        }
    sps__parilu_dev_symmetric(ctx, n, nnz, rp, ci, v, &same);
    CHECK(same == hsame, "%s: exact symmetry %d on the device, %d on the host", what.c_str(), same, hsame);
    if (!hsame) return;
    int64_t lnz = (nnz + n) / 2;
    CHECK(lnz == (int64_t)pl.v.size(), "%s: tril has %lld entries, (nnz + n) / 2 = %lld", what.c_str(),
          (long long)pl.v.size(), (long long)lnz);
    std::vector<sps_idx> lrp(n + 1, -5), lci(lnz + 1, -5), ldpos(n + 1, -5), trp(n + 1, -5), tci(lnz + 1, -5),
        perm(lnz + 1, -5);
    std::vector<double> lv(lnz + 1, -5.0);
    sps__parilu_dev_tril(ctx, n, nnz, rp, ci, v, pu.dpos.data(), lrp.data(), lci.data(), lv.data(), ldpos.data());
    bool ok = std::equal(pl.rp.begin(), pl.rp.end(), lrp.begin()) &&
              std::equal(pl.ci.begin(), pl.ci.end(), lci.begin()) &&
              memcmp(pl.v.data(), lv.data(), pl.v.size() * sizeof(double)) == 0;
    for (sps_idx i = 0; i < n; i++) ok = ok && ldpos[i] == pl.rp[i + 1] - 1;
    CHECK(ok, "%s: tril(A) on the device", what.c_str());
    /* L' on the host: rows of L in order, each entry to its column's row */
    std::vector<sps_idx> hrp(n + 1, 0), hci(lnz), hperm(lnz), pos;
    for (int64_t p = 0; p < lnz; p++) hrp[pl.ci[p] + 1]++;
    for (sps_idx i = 0; i < n; i++) hrp[i + 1] += hrp[i];
    pos.assign(hrp.begin(), hrp.end() - 1);
    for (sps_idx j = 0; j < n; j++)
        for (sps_idx p = pl.rp[j]; p < pl.rp[j + 1]; p++) {
            sps_idx q = pos[pl.ci[p]]++;
            hci[q] = j;
            hperm[q] = p;
        }
    sps__parilu_dev_transpose(ctx, n, lnz, pl.rp.data(), pl.ci.data(), trp.data(), tci.data(), perm.data());
    CHECK(std::equal(hrp.begin(), hrp.end(), trp.begin()) && std::equal(hci.begin(), hci.end(), tci.begin()) &&
              std::equal(hperm.begin(), hperm.end(), perm.begin()),
          "%s: L' pattern on the device", what.c_str());
}

static void all_k(const std::string &what, const sps_matrix *A, bool ilu, bool ic)
{
    static const int ks[] = {1, 2, 3, 5, 8, 50};
    pat pu = pattern_of(A, false);
    diag_scan(what, pu);
    bool full = std::find(pu.dpos.begin(), pu.dpos.end(), -1) == pu.dpos.end();
    if (!full) return;
    pat pl = pattern_of(A, true);
    ic0_pieces(what, A, pu, pl);
    for (int K : ks) {
        if (ilu) compare(what, pu, false, K);
        if (ic) compare(what, pl, true, K);
    }
}

static void generated(const char *spec)
{
    sps_matrix *A = nullptr;
    if (sps_matrix_generate(ctx, spec, &A) != SPS_OK) {
        CHECK(0, "%s: %s", spec, sps_last_error(ctx));
        return;
    }
    all_k(spec, A, true, true);
    sps_matrix_destroy(A);
}

/* A chain of n rows, row `empty` with only its diagonal, row `lng` full. */
static sps_matrix *edge(sps_idx n, sps_idx empty, sps_idx lng, bool sym)
{
    std::vector<double> dense;
    std::vector<sps_idx> rp{0}, ci;
    std::vector<double> v;
    for (sps_idx i = 0; i < n; i++) {
        for (sps_idx j = 0; j < n; j++) {
            double x = 0;
            if (j == i) x = 4.0 + (i % 3);
            else if (i != empty && j != empty && (j == i + 1 || j == i - 1)) x = j > i || sym ? -1.0 : -0.5;
            else if (i == lng && j != empty) x = 0.25 / n;
            else if (j == lng && i != empty) x = sym ? 0.25 / n : -0.125 / n;
            if (x != 0) {
                ci.push_back(j);
                v.push_back(x);
            }
        }
        rp.push_back((sps_idx)ci.size());
    }
    sps_matrix *A = nullptr;
    sps_matrix_create_csr(ctx, n, n, rp.data(), ci.data(), v.data(), &A);
    return A;
}

static void edges()
{
    for (sps_idx n : {1, 2, 31, 32, 33, 1023, 1024, 1025}) {
        sps_idx cases[][2] = {{-1, -1}, {n / 2, -1}, {-1, 0}, {-1, n - 1}, {1, n / 3}};
        for (auto &c : cases) {
            if (n <= 2 && (c[0] >= 0 || c[1] >= 0)) continue;
            for (bool sym : {false, true}) {
                sps_matrix *A = edge(n, c[0], c[1], sym);
                if (!A) {
                    CHECK(0, "edge n=%d: %s", n, sps_last_error(ctx));
                    continue;
                }
                all_k("n=" + std::to_string(n) + " empty=" + std::to_string(c[0]) + " long=" + std::to_string(c[1]) +
                          (sym ? " sym" : ""),
                      A, true, true);
                sps_matrix_destroy(A);
            }
        }
    }
}

static void dense_case(const char *what, int n, const double *a)
{
    std::vector<sps_idx> rp{0}, ci;
    std::vector<double> v;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++)
            if (a[i * n + j] != 0) {
                ci.push_back(j);
                v.push_back(a[i * n + j]);
            }
        rp.push_back((sps_idx)ci.size());
    }
    sps_matrix *A = nullptr;
    if (sps_matrix_create_csr(ctx, n, n, rp.data(), ci.data(), v.data(), &A) != SPS_OK) return;
    all_k(what, A, true, true);
    sps_matrix_destroy(A);
}

static void pivots()
{
    double z[4] = {1, 1, 1, 1}, neg[4] = {1, 2, 2, 1}, big[4] = {1e-300, 1e300, 1e300, 1};
    double nodiag[4] = {0, 1, 1, 1};
    dense_case("zero pivot", 2, z);
    dense_case("negative IC pivot", 2, neg);
    dense_case("overflow", 2, big);
    dense_case("missing diagonal", 2, nodiag);
}

int main(int argc, char **argv)
{
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) return 2;
    for (const char *g : {"poisson2d:12", "poisson2d:63", "convdiff2d:40,10", "convdiff2d:100,10", "poisson3d:10",
                          "poisson3d27:8"})
        generated(g);
    edges();
    pivots();
    for (int k = 1; k < argc; k++) {
        sps_matrix *A = nullptr;
        if (sps_matrix_read(ctx, argv[k], &A) != SPS_OK) {
            CHECK(0, "%s: %s", argv[k], sps_last_error(ctx));
            continue;
        }
        all_k(argv[k], A, true, true);
        sps_matrix_destroy(A);
    }
    sps_context_destroy(ctx);
    printf("%d checks, %d failed\n", checks, fails);
    return fails ? 1 : 0;
}
