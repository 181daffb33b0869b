/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/emu/harness.cc: spmm_panel.cu's kernel on the CPU emulation
 * against sps__panel_spmm, bitwise, and against the plain CSR block loop
 * within 1e-13 componentwise (run.sh). Every array the kernel reads is an
 * exact-size copy, so that AddressSanitizer sees a read past its end; the
 * padding rows of Y hold NaN and must stay NaN; beta = 0 runs over a Y of
 * NaN. Matrices: generated ones, the edge cases of tests/unit/spmm_cases.h
 * (empty rows, one full row, n around 32 and 1024), a matrix with no dense
 * column in any panel, a dense one (every column dense, several tiles), and
 * the files named on the command line. */
#include "spmm_panel_emu.cc"

#include <cstdio>
#include <string>
#include <vector>

extern "C" sps_status sps__spmm_panel_dev(sps_context *ctx, const sps_panel *d, int k, double alpha,
                                          const double *X, int64_t ldx, double beta, double *Y,
                                          int64_t ldy);

#include "tests/emu_check.h"

template <class T> static T *dup(const T *p, size_t n)
{
    T *q = (T *)malloc(n ? n * sizeof(T) : 1);
    if (n) memcpy(q, p, n * sizeof(T));
    return q;
}

static uint64_t rng = 88172645463325252ull;
static double urand()
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* The matrix from triplets (sps_matrix_create_coo sums duplicates). */
static sps_matrix *from_triplets(sps_context *ctx, sps_idx n, sps_idx m, std::vector<sps_idx> &I,
                                 std::vector<sps_idx> &J, std::vector<double> &V)
{
    sps_matrix *A = nullptr;
    sps_status st = sps_matrix_create_coo(ctx, n, m, (int64_t)V.size(), I.data(), J.data(), V.data(), &A);
    if (st != SPS_OK) {
        printf("FAIL create_coo: %s\n", sps_last_error(ctx));
        fails++;
        return nullptr;
    }
    return A;
}

/* tests/unit/spmm_cases.h's edge matrix (same shape, other values). */
static sps_matrix *edge(sps_context *ctx, sps_idx n)
{
    std::vector<sps_idx> I, J;
    std::vector<double> V;
    for (sps_idx i = 0; i < n; i++) {
        if (i % 7 == 3 && i != n / 2) continue;
        if (i == n / 2) {
            for (sps_idx j = 0; j < n; j++) I.push_back(i), J.push_back(j), V.push_back(1 + urand());
            continue;
        }
        I.push_back(i), J.push_back(i), V.push_back(4 + urand());
        int extra = (int)(urand() * 5);
        for (int e = 0; e < extra; e++)
            I.push_back(i), J.push_back((sps_idx)(urand() * n) % n), V.push_back(urand() - 0.5);
    }
    return from_triplets(ctx, n, n, I, J, V);
}

/* Row i has one entry, in column (i * 37) mod n (n prime to 37): no column
 * twice anywhere, so no panel has a dense column. */
static sps_matrix *nodense(sps_context *ctx, sps_idx n)
{
    std::vector<sps_idx> I, J;
    std::vector<double> V;
    for (sps_idx i = 0; i < n; i++) I.push_back(i), J.push_back((sps_idx)(((int64_t)i * 37) % n)), V.push_back(urand() + 0.5);
    return from_triplets(ctx, n, n, I, J, V);
}

/* n x m full: every column of every panel dense (m > 64: several tiles). */
static sps_matrix *full(sps_context *ctx, sps_idx n, sps_idx m)
{
    std::vector<sps_idx> I, J;
    std::vector<double> V;
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx j = 0; j < m; j++) I.push_back(i), J.push_back(j), V.push_back(urand() - 0.5);
    return from_triplets(ctx, n, m, I, J, V);
}

static void one(sps_context *ctx, const char *name, const sps_matrix *A, const std::vector<int> &ks)
{
    const sps_csr *C = &A->A;
    sps_panel P;
    if (sps__panel_build(ctx, C, &P) != SPS_OK) {
        CHECK(false, "%s: build: %s", name, sps_last_error(ctx));
        return;
    }
    /* the invariants: every entry once, dense ones first and ascending */
    std::vector<int> seen((size_t)C->nnz, 0);
    bool ok = P.rp[P.nrows] == C->nnz;
    for (sps_idx r = 0; r < P.nrows && ok; r++) {
        sps_idx pan = r / SPS_PANEL_ROWS, nd = P.dp[pan + 1] - P.dp[pan];
        for (sps_idx q = P.rp[r]; q < P.rp[r + 1]; q++) {
            sps_idx s = P.src[q];
            ok = ok && s >= C->row_ptr[r] && s < C->row_ptr[r + 1] && !seen[(size_t)s]++;
            ok = ok && P.val[q] == C->val[s];
            if (q < P.rp[r] + P.nd[r]) ok = ok && P.ci[q] < nd && P.dcol[P.dp[pan] + P.ci[q]] == C->col_idx[s] &&
                                           (q == P.rp[r] || P.ci[q - 1] <= P.ci[q]);
            else ok = ok && P.ci[q] == C->col_idx[s];
        }
    }
    CHECK(ok, "%s: the panels hold every entry once, dense first", name);
    /* device copies of exact size */
    sps_panel D = P;
    D.rp = dup(P.rp, (size_t)P.nrows + 1);
    D.nd = dup(P.nd, (size_t)P.nrows);
    D.ci = dup(P.ci, (size_t)P.nnz);
    D.val = dup(P.val, (size_t)P.nnz);
    D.dp = dup(P.dp, (size_t)P.npanels + 1);
    D.dcol = dup(P.dcol, (size_t)P.ndense);
    D.src = nullptr;
    const sps_idx n = C->nrows, m = C->ncols;
    for (int k : ks) {
        for (int b = 0; b < 2; b++) {
            const double beta = b ? -0.5 : 0.0, alpha = 1.5;
            const int64_t ldx = m + 3, ldy = n + 5;
            const size_t nx = (size_t)ldx * (size_t)k, ny = (size_t)ldy * (size_t)k;
            std::vector<double> X(nx), Y0(ny), R(ny), Q(ny);
            for (size_t i = 0; i < nx; i++) X[i] = (int64_t)(i % (size_t)ldx) < m ? urand() * 2 - 1 : NAN;
            for (size_t i = 0; i < ny; i++) Y0[i] = (int64_t)(i % (size_t)ldy) < n && b ? urand() : NAN;
            R = Y0;
            Q = Y0;
            sps__panel_spmm(&P, k, alpha, X.data(), ldx, beta, R.data(), ldy);
            sps__csr_spmm(C, k, alpha, X.data(), ldx, beta, Q.data(), ldy);
            double *dX = dup(X.data(), nx), *dY = dup(Y0.data(), ny);
            sps_status st = sps__spmm_panel_dev(ctx, &D, k, alpha, dX, ldx, beta, dY, ldy);
            bool same = st == SPS_OK && memcmp(dY, R.data(), ny * sizeof(double)) == 0;
            /* the padding is NaN in both: memcmp compares the same NaN bits */
            CHECK(same, "%s k=%d beta=%g: kernel = reference, bitwise", name, k, beta);
            double worst = 0;
            for (int c = 0; c < k; c++)
                for (sps_idx r = 0; r < n; r++) {
                    size_t o = (size_t)c * (size_t)ldy + (size_t)r;
                    double a = 0;
                    for (sps_idx q = C->row_ptr[r]; q < C->row_ptr[r + 1]; q++)
                        a += fabs(C->val[q] * X[(size_t)c * (size_t)ldx + (size_t)C->col_idx[q]]);
                    double den = fabs(alpha) * a + (b ? fabs(beta * Y0[o]) : 0.0);
                    double d = fabs(R[o] - Q[o]);
                    double e = d == 0 ? 0 : den > 0 ? d / den : INFINITY;
                    if (!(e <= worst)) worst = e;
                }
            CHECK(worst <= 1e-13, "%s k=%d beta=%g: reference = CSR loop within 1e-13 (%.2e)", name, k, beta, worst);
            free(dX);
            free(dY);
        }
    }
    printf("%-28s n=%-7d nnz=%-8d panels %-6d dense columns %-7d dense entries %.1f%%\n", name, n, C->nnz,
           P.npanels, P.ndense, C->nnz ? 100.0 * P.dense_nnz / C->nnz : 0.0);
    free(D.rp);
    free(D.nd);
    free(D.ci);
    free(D.val);
    free(D.dp);
    free(D.dcol);
    sps__panel_free(&P);
}

int main(int argc, char **argv)
{
    sps_context *ctx = nullptr;
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) {
        printf("FAIL context\n");
        return 1;
    }
    const std::vector<int> all = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 40};
    const std::vector<int> few = {1, 3, 8, 17, 32};
    for (sps_idx n : {1, 31, 32, 33, 1023, 1024, 1025}) {
        sps_matrix *A = edge(ctx, n);
        if (A) one(ctx, ("edge n=" + std::to_string(n)).c_str(), A, all);
        sps_matrix_destroy(A);
    }
    for (sps_idx n : {33, 1025}) {
        sps_matrix *A = nodense(ctx, n);
        if (A) one(ctx, ("no dense column n=" + std::to_string(n)).c_str(), A, all);
        sps_matrix_destroy(A);
    }
    {
        sps_matrix *A = full(ctx, 70, 150);
        if (A) one(ctx, "full 70 x 150", A, all);
        sps_matrix_destroy(A);
    }
    for (const char *g : {"poisson3d:12", "banded:3000,9,0.01,1", "powerlaw:3000,16,1", "poisson2d:40"}) {
        sps_matrix *A = nullptr;
        if (sps_matrix_generate(ctx, g, &A) == SPS_OK) one(ctx, g, A, few);
        else CHECK(false, "generate %s: %s", g, sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    for (int i = 1; i < argc; i++) {
        sps_matrix *A = nullptr;
        if (sps_matrix_read(ctx, argv[i], &A) == SPS_OK) one(ctx, argv[i], A, {2, 8, 17});
        else CHECK(false, "read %s: %s", argv[i], sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    sps_context_destroy(ctx);
    printf("%s: %d of %d checks failed\n", fails ? "FAIL" : "PASS", fails, checks);
    return fails != 0;
}
