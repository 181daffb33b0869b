/* SPDX-License-Identifier: MIT */
/* spsolve/precond/cheby/emu/harness.cc: cheby_steps.cuh's two applies run on
 * the CPU (verification only: run.sh). A launch runs every thread of its
 * grid one after the other, in thread order or in reverse thread order (a
 * fused step that read a d entry another thread of the same launch writes
 * would differ between the two); the __*_rn intrinsics are single IEEE
 * operations (volatile: no contraction), and everything else is built with
 * -mfma -ffp-contract=fast, so `s += a * x` is a fused multiply-add as nvcc
 * makes it. The unfused apply's SpMV is an emulation of the GPU kernel of
 * the operator: dia_kernel (every diagonal slot, a * 0 outside the matrix)
 * or csr_scalar_kernel (the row in order), then y = alpha s + beta y with
 * alpha = -1, beta = 1.
 * Checks per case, kind (dia, csr) and degree (0, 1, 2, 3, 4, 8): the fused
 * apply (DIA or CSR rows) equal to the unfused one entry by entry (==: the
 * sign of a zero aside) and it says how many entries differ in their bits;
 * the fused apply bitwise the same in both thread orders and with a grid of
 * 3 blocks (grid-stride); r unchanged; both within 1e-10 relative of the
 * host apply (cheby.c apply_host, through csr-vector's host product, no FMA).
 * Cases: poisson3d:20, poisson2d:63, tridiagonal SPD n = 31, 32, 33, 1023,
 * 1024, 1025, and nos6, bcsstk09, gr_30_30 from $SPS_MATRICES. */
#include "emu.h"
#include "precond/cheby/cheby_steps.cuh"
#include "precond/precond.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

dim3 blockIdx, threadIdx, gridDim, blockDim;
int emu_reverse;
const sps_dev_rows *emu_spmv_rows;

/* The GPU SpMV y = -1 A x + 1 y of the operator whose rows are emu_spmv_rows,
 * in its kernel's order. */
sps_status emu_spmv(const double *x, double *y)
{
    const sps_dev_rows &A = *emu_spmv_rows;
    volatile double va = -1.0, vb = 1.0; /* runtime values, as the kernel gets them */
    const double alpha = va, beta = vb;
    for (long long i = 0; i < A.n; i++) {
        double s = 0.0;
        if (A.kind == SPS_ROWS_CSR) {
            for (sps_idx j = A.row_ptr[i]; j < A.row_ptr[i + 1]; j++) s += A.val[j] * x[A.col_idx[j]];
        } else {
            for (sps_idx d = 0; d < A.ndiag; d++) {
                const unsigned c = (unsigned)(i + A.off[d]);
                const double xv = c < (unsigned)A.n ? x[c] : 0.0;
                s += A.val[(size_t)d * A.n + i] * xv;
            }
        }
        y[i] = alpha * s + beta * y[i];
    }
    return SPS_OK;
}

static int nok, nfail;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (!ok) {
        printf("FAIL ");
        vprintf(fmt, ap);
        printf("\n");
    }
    va_end(ap);
    ok ? nok++ : nfail++;
}

static double rel(const std::vector<double> &x, const std::vector<double> &ref)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < x.size(); i++) {
        num += (x[i] - ref[i]) * (x[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

/* A's rows as the dia backend stores them: ascending offsets, val[d n + i],
 * zero where a diagonal has no entry. */
struct dia_rows {
    std::vector<sps_idx> off;
    std::vector<double> val;
};

static dia_rows to_dia(sps_idx n, const sps_idx *rp, const sps_idx *ci, const double *v)
{
    dia_rows D;
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) D.off.push_back(ci[p] - i);
    std::sort(D.off.begin(), D.off.end());
    D.off.erase(std::unique(D.off.begin(), D.off.end()), D.off.end());
    D.val.assign(D.off.size() * (size_t)n, 0.0);
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) {
            size_t d = std::lower_bound(D.off.begin(), D.off.end(), ci[p] - i) - D.off.begin();
            D.val[d * n + i] = v[p];
        }
    return D;
}

static const double NaN = std::nan("");

/* One apply on the emulated device: a copy of the host's sps_cheby with its
 * own work vectors (NaN: a read of an unwritten entry shows). */
static std::vector<double> run_apply(const sps_cheby *hc, const sps_dev_rows &rows, int fused, int grid,
                                     int reverse, const std::vector<double> &r)
{
    const long long n = rows.n;
    std::vector<double> res(n, NaN), d(n, NaN), d2(n, NaN), z(n, NaN), rr = r;
    sps_cheby c = *hc;
    c.res = res.data();
    c.d = d.data();
    emu_reverse = reverse;
    emu_spmv_rows = &rows;
    sps_status st = fused ? cheby_queue_fused(nullptr, &c, rows, d2.data(), nullptr, grid, n, rr.data(), z.data())
                          : cheby_queue(nullptr, &c, nullptr, grid, n, rr.data(), z.data());
    check(st == SPS_OK, "apply status %d", (int)st);
    check(memcmp(rr.data(), r.data(), n * sizeof(double)) == 0, "r unchanged");
    return z;
}

static void case_matrix(sps_context *ctx, const char *what, const sps_matrix *A)
{
    const sps_idx *rp, *ci;
    const double *v;
    if (sps_matrix_csr(A, &rp, &ci, &v) != SPS_OK) {
        check(false, "%s: csr", what);
        return;
    }
    const sps_idx n = sps_matrix_rows(A);
    dia_rows D = to_dia(n, rp, ci, v);
    sps_dev_rows rows[2] = {};
    rows[0].kind = SPS_ROWS_DIA;
    rows[0].n = n;
    rows[0].ndiag = (sps_idx)D.off.size();
    rows[0].off = D.off.data();
    rows[0].val = D.val.data();
    rows[1].kind = SPS_ROWS_CSR;
    rows[1].n = n;
    rows[1].row_ptr = rp;
    rows[1].col_idx = ci;
    rows[1].val = v;
    std::vector<double> r(n), zh(n);
    uint64_t seed = 11;
    for (sps_idx i = 0; i < n; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        r[i] = (double)(seed >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    }
    static const int degrees[] = {0, 1, 2, 3, 4, 8};
    for (int deg : degrees) {
        char spec[64];
        snprintf(spec, sizeof spec, "cheby:degree=%d", deg);
        sps_precond *pc = nullptr;
        if (sps_precond_create(ctx, A, spec, &pc) != SPS_OK || sps_precond_apply(pc, r.data(), zh.data()) != SPS_OK) {
            check(false, "%s %s: host build and apply: %s", what, spec, sps_last_error(ctx));
            sps_precond_destroy(pc);
            continue;
        }
        const sps_cheby *hc = (const sps_cheby *)pc->impl;
        const int full = (int)std::max<long long>(1, ((long long)n + CHEBY_BLOCK - 1) / CHEBY_BLOCK);
        for (int k = 0; k < 2; k++) {
            const char *kind = k ? "csr" : "dia";
            std::vector<double> zu = run_apply(hc, rows[k], 0, full, 0, r);
            std::vector<double> zf = run_apply(hc, rows[k], 1, full, 0, r);
            std::vector<double> zr = run_apply(hc, rows[k], 1, full, 1, r);
            std::vector<double> z3 = run_apply(hc, rows[k], 1, 3, 1, r);
            long long neq = 0, nbits = 0;
            for (sps_idx i = 0; i < n; i++) {
                neq += !(zf[i] == zu[i]);
                nbits += memcmp(&zf[i], &zu[i], sizeof(double)) != 0;
            }
            check(neq == 0, "%s %s %s: fused = unfused (%lld entries differ)", what, spec, kind, neq);
            check(memcmp(zf.data(), zr.data(), n * sizeof(double)) == 0 &&
                      memcmp(zf.data(), z3.data(), n * sizeof(double)) == 0,
                  "%s %s %s: fused bitwise the same in reverse thread order and on 3 blocks", what, spec, kind);
            const double ru = rel(zu, zh), rf = rel(zf, zh);
            check(ru <= 1e-10 && rf <= 1e-10, "%s %s %s: unfused %.2g, fused %.2g from the host apply", what,
                  spec, kind, ru, rf);
            printf("%-22s %-16s %s: fused = unfused (%lld entries differ in their bits), from host %.2g\n",
                   what, spec, kind, nbits, rf);
        }
        sps_precond_destroy(pc);
    }
}

/* tridiag(-1, 4 + i % 3, -1), SPD. */
static sps_matrix *tridiag(sps_context *ctx, sps_idx n)
{
    std::vector<sps_idx> rp(1, 0), ci;
    std::vector<double> v;
    for (sps_idx i = 0; i < n; i++) {
        for (sps_idx j = std::max(0, i - 1); j <= std::min(n - 1, i + 1); j++) {
            ci.push_back(j);
            v.push_back(i == j ? 4.0 + i % 3 : -1.0);
        }
        rp.push_back((sps_idx)ci.size());
    }
    sps_matrix *A = nullptr;
    sps_matrix_create_csr(ctx, n, n, rp.data(), ci.data(), v.data(), &A);
    return A;
}

int main()
{
    sps_context *ctx = nullptr;
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) return 2;
    for (const char *g : {"poisson3d:20", "poisson2d:63"}) {
        sps_matrix *A = nullptr;
        if (sps_matrix_generate(ctx, g, &A) == SPS_OK) case_matrix(ctx, g, A);
        else check(false, "%s: %s", g, sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    for (sps_idx n : {31, 32, 33, 1023, 1024, 1025}) {
        char what[32];
        snprintf(what, sizeof what, "tridiagonal n=%d", n);
        sps_matrix *A = tridiag(ctx, n);
        if (A) case_matrix(ctx, what, A);
        else check(false, "%s", what);
        sps_matrix_destroy(A);
    }
    const char *dir = getenv("SPS_MATRICES");
    for (const char *m : {"nos6", "bcsstk09", "gr_30_30"}) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s.mtx.gz", dir ? dir : "tests/data/real", m);
        sps_matrix *A = nullptr;
        if (sps_matrix_read(ctx, path, &A) == SPS_OK) case_matrix(ctx, m, A);
        else check(false, "%s: %s", path, sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    sps_context_destroy(ctx);
    printf("cheby emu: %d ok, %d failed\n", nok, nfail);
    return nfail != 0;
}
