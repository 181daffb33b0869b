/* SPDX-License-Identifier: MIT */
/* spsolve/precond/parilu/parilu.cu: the fixed-point ILU(0)/IC(0)
 * factorization on the device (parilu.h), bitwise parilu.c's.
 *
 * Work decomposition, all on the context's stream, one host read at the end:
 *   rows      one thread per entry: its row, by binary search in rp
 *   dpos      (ilu0) one thread per row: its diagonal, by binary search
 *   columns   (ilu0) F by columns: the entries' columns as keys, their
 *             positions as values, a stable radix sort (CUB): rows stay
 *             ascending inside a column, as parilu.c's counting sort leaves
 *             them; then one thread per column finds its start by binary
 *             search in the sorted keys, one thread per entry its row
 *   start     one thread per entry
 *   sweeps    K launches, one thread per entry, from one buffer into the
 *             other (the last into v): the host's inline step, so the same
 *             operations in the same order (no FMA: __dmul_rn, __dsub_rn)
 *   check     one thread per entry: a refused entry lowers the 64-bit
 *             key row * 4 + kind (an integer minimum: deterministic), read
 *             once by the host.
 * Unlike the host, the device never stops early: a sweep that changes
 * nothing leaves the values as they are, so the result is the same. */
#include "../../core/cuda_check.cuh"
#include "parilu.h"

#include <cub/cub.cuh>

namespace {

const int TB = 256;

int grid_for(sps_context *ctx, long long n)
{
    long long b = (n + TB - 1) / TB, cap = 32LL * sps__gpu_sm_count(ctx);
    if (b > cap) b = cap;
    return b < 1 ? 1 : (int)b;
}

/* Device scratch, freed on every path (after the stream is drained): one
 * block reserved up front and carved (a cudaMalloc costs tens of
 * microseconds, a few SpMVs of a large matrix each), with separate
 * allocations only past its end. */
struct scratch {
    sps_context *ctx;
    char *block = nullptr;
    size_t cap = 0, off = 0;
    void *p[16] = {};
    int k = 0;
    explicit scratch(sps_context *c) : ctx(c) {}
    ~scratch()
    {
        if (k || block) sps__gpu_sync(ctx); /* nothing may still read them */
        for (int i = 0; i < k; i++) sps__dfree(p[i]);
        sps__dfree(block);
    }
    static size_t round(size_t b) { return (b + 255) / 256 * 256; }
    sps_status reserve(size_t bytes)
    {
        sps_status st = sps__dmalloc(ctx, (void **)&block, bytes);
        if (st == SPS_OK) cap = bytes;
        return st;
    }
    template <class T> sps_status get(T **out, size_t count)
    {
        size_t b = round((count ? count : 1) * sizeof(T));
        if (off + b <= cap) {
            *out = (T *)(block + off);
            off += b;
            return SPS_OK;
        }
        *out = nullptr;
        if (k == 16) return sps__err(ctx, SPS_ERR_INTERNAL, "parilu: scratch exhausted");
        sps_status st = sps__dmalloc(ctx, (void **)out, b);
        if (st == SPS_OK) p[k++] = *out;
        return st;
    }
};

/* cub's radix sort of nnz (column, position) pairs: its temporary bytes. */
sps_status sort_bytes(sps_context *ctx, int64_t nnz, int bits, size_t *bytes)
{
    *bytes = 0;
    SPS_CUDA(ctx, cub::DeviceRadixSort::SortPairs(nullptr, *bytes, (const unsigned *)nullptr, (unsigned *)nullptr,
                                                  (const sps_idx *)nullptr, (sps_idx *)nullptr, (int)nnz, 0, bits,
                                                  sps_stream(ctx)));
    return SPS_OK;
}

int key_bits(sps_idx n)
{
    int bits = 0;
    while (bits < 31 && ((unsigned)(n - 1) >> bits) != 0) bits++;
    return bits ? bits : 1;
}

/* Every scratch array of sps__parilu_dev, rounded as get rounds them. */
sps_status scratch_bytes(sps_context *ctx, sps_idx n, int64_t nnz, int cholesky, size_t *total)
{
    size_t ni = scratch::round((size_t)nnz * sizeof(sps_idx)), nd = scratch::round((size_t)nnz * sizeof(double));
    *total = ni + 2 * nd + scratch::round(sizeof(unsigned long long)); /* row, a, w, bad */
    if (cholesky) return SPS_OK;
    size_t sb = 0;
    sps_status st = sort_bytes(ctx, nnz, key_bits(n), &sb);
    *total += 4 * ni + scratch::round((size_t)n * sizeof(sps_idx)) + /* iota, cq, cr, keys; dpos */
              scratch::round(((size_t)n + 1) * sizeof(sps_idx)) + scratch::round(sb ? sb : 1);
    return st;
}

__global__ void k_rows(long long nnz, int n, const sps_idx *__restrict__ rp, sps_idx *__restrict__ row)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < nnz;
         p += (long long)gridDim.x * blockDim.x) {
        int lo = 0, hi = n; /* the last i with rp[i] <= p */
        while (lo < hi) {
            int mid = lo + (hi - lo + 1) / 2;
            if (rp[mid] <= p) lo = mid;
            else hi = mid - 1;
        }
        row[p] = lo;
    }
}

__global__ void k_dpos(int n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                       sps_idx *__restrict__ dpos)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        dpos[i] = sps__parilu_lbound(ci, rp[i], rp[i + 1], (sps_idx)i);
}

/* dpos[i]: row i's diagonal position, or -1 lowering *first to i. */
__global__ void k_diag(int n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                       sps_idx *__restrict__ dpos, int *first)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        sps_idx d = sps__parilu_lbound(ci, rp[i], rp[i + 1], (sps_idx)i);
        if (d == rp[i + 1] || ci[d] != (sps_idx)i) {
            atomicMin(first, (int)i); /* an integer minimum: deterministic */
            d = -1;
        }
        dpos[i] = d;
    }
}

__global__ void k_iota(long long nnz, sps_idx *__restrict__ x)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < nnz;
         p += (long long)gridDim.x * blockDim.x)
        x[p] = (sps_idx)p;
}

/* cp[j] = the first sorted position whose column is >= j, j = 0..n. */
__global__ void k_colptr(int n, long long nnz, const unsigned *__restrict__ key, sps_idx *__restrict__ cp)
{
    for (long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x; j <= n;
         j += (long long)gridDim.x * blockDim.x) {
        long long lo = 0, hi = nnz;
        while (lo < hi) {
            long long mid = lo + (hi - lo) / 2;
            if ((long long)key[mid] < j) lo = mid + 1;
            else hi = mid;
        }
        cp[j] = (sps_idx)lo;
    }
}

__global__ void k_gather_rows(long long nnz, const sps_idx *__restrict__ cq, const sps_idx *__restrict__ row,
                              sps_idx *__restrict__ cr)
{
    for (long long y = blockIdx.x * (long long)blockDim.x + threadIdx.x; y < nnz;
         y += (long long)gridDim.x * blockDim.x)
        cr[y] = row[cq[y]];
}

__global__ void k_start(sps_parilu_pat P, const double *__restrict__ a, double *__restrict__ out)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < P.nnz;
         p += (long long)gridDim.x * blockDim.x)
        out[p] = sps__parilu_start(&P, p, a);
}

__global__ void k_sweep(sps_parilu_pat P, const double *__restrict__ a, const double *__restrict__ cur,
                        double *__restrict__ nxt)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < P.nnz;
         p += (long long)gridDim.x * blockDim.x)
        nxt[p] = sps__parilu_entry(&P, p, a, cur);
}

__global__ void k_check(sps_parilu_pat P, const double *__restrict__ v, unsigned long long *bad)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < P.nnz;
         p += (long long)gridDim.x * blockDim.x) {
        int k = sps__parilu_check(&P, p, v);
        if (k) atomicMin(bad, (unsigned long long)P.row[p] * 4ull + (unsigned long long)k);
    }
}

/* *same stays 1 while every off-diagonal entry (i, j) meets (j, i) with
 * the same value. */
__global__ void k_symmetric(long long nnz, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                            const double *__restrict__ v, const sps_idx *__restrict__ row, int *same)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < nnz;
         p += (long long)gridDim.x * blockDim.x) {
        sps_idx i = row[p], j = ci[p];
        if (j == i) continue;
        sps_idx m = sps__parilu_lbound(ci, rp[j], rp[j + 1], i);
        if (m == rp[j + 1] || ci[m] != i || !(v[m] == v[p])) atomicMin(same, 0);
    }
}

/* cnt[i] = row i's entries up to its diagonal (dpos >= 0 everywhere). */
__global__ void k_tril_count(int n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ dpos,
                             sps_idx *__restrict__ cnt)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        cnt[i] = dpos[i] - rp[i] + 1;
}

__global__ void k_tril_fill(long long nnz, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                            const double *__restrict__ v, const sps_idx *__restrict__ row,
                            const sps_idx *__restrict__ dpos, const sps_idx *__restrict__ lrp,
                            sps_idx *__restrict__ lci, double *__restrict__ lv)
{
    for (long long p = blockIdx.x * (long long)blockDim.x + threadIdx.x; p < nnz;
         p += (long long)gridDim.x * blockDim.x) {
        sps_idx i = row[p];
        if (p > dpos[i]) continue;
        sps_idx q = lrp[i] + (sps_idx)(p - rp[i]);
        lci[q] = ci[p];
        lv[q] = v[p];
    }
}

__global__ void k_last(int n, const sps_idx *__restrict__ lrp, sps_idx *__restrict__ ldpos)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        ldpos[i] = lrp[i + 1] - 1;
}

/* F by columns (ilu0): cp, cr, cq as parilu.c's by_columns makes them, in
 * out[0..2] when given (else in scratch). */
sps_status columns(sps_context *ctx, scratch &s, sps_parilu_pat &P, const sps_idx *row, sps_idx *const *out)
{
    cudaStream_t st_ = sps_stream(ctx);
    long long nnz = P.nnz;
    int n = P.n, g = grid_for(ctx, nnz), bits = key_bits(n);
    sps_idx *iota, *cq, *cr, *cp;
    unsigned *kout;
    sps_status st;
    if (out) {
        cp = out[0];
        cr = out[1];
        cq = out[2];
    }
    if ((st = s.get(&iota, nnz)) != SPS_OK || (!out && (st = s.get(&cq, nnz)) != SPS_OK) ||
        (!out && (st = s.get(&cr, nnz)) != SPS_OK) || (!out && (st = s.get(&cp, (size_t)n + 1)) != SPS_OK) ||
        (st = s.get(&kout, nnz)) != SPS_OK)
        return st;
    k_iota<<<g, TB, 0, st_>>>(nnz, iota);
    SPS_LAUNCH_CHECK(ctx, "k_iota");
    const unsigned *kin = (const unsigned *)P.ci; /* columns >= 0: the same bits */
    size_t bytes = 0;
    if ((st = sort_bytes(ctx, nnz, bits, &bytes)) != SPS_OK) return st;
    char *tmp;
    if ((st = s.get(&tmp, bytes)) != SPS_OK) return st;
    SPS_CUDA(ctx, cub::DeviceRadixSort::SortPairs(tmp, bytes, kin, kout, iota, cq, (int)nnz, 0, bits, st_));
    int gc = grid_for(ctx, (long long)n + 1);
    k_colptr<<<gc, TB, 0, st_>>>(n, nnz, kout, cp);
    SPS_LAUNCH_CHECK(ctx, "k_colptr");
    k_gather_rows<<<g, TB, 0, st_>>>(nnz, cq, row, cr);
    SPS_LAUNCH_CHECK(ctx, "k_gather_rows");
    P.cp = cp;
    P.cr = cr;
    P.cq = cq;
    return SPS_OK;
}

/* The pattern: rows, (ilu0) diagonal positions and columns. */
sps_status pattern(sps_context *ctx, scratch &s, sps_parilu_pat &P)
{
    cudaStream_t st_ = sps_stream(ctx);
    sps_idx *row, *dpos = nullptr;
    sps_status st = s.get(&row, P.nnz);
    if (st != SPS_OK) return st;
    int ge = grid_for(ctx, P.nnz), gr = grid_for(ctx, P.n);
    k_rows<<<ge, TB, 0, st_>>>(P.nnz, P.n, P.rp, row);
    SPS_LAUNCH_CHECK(ctx, "k_rows");
    P.row = row;
    if (P.cholesky) return SPS_OK;
    if ((st = s.get(&dpos, P.n)) != SPS_OK) return st;
    k_dpos<<<gr, TB, 0, st_>>>(P.n, P.rp, P.ci, dpos);
    SPS_LAUNCH_CHECK(ctx, "k_dpos");
    P.dpos = dpos;
    return columns(ctx, s, P, row, nullptr);
}

/* The start and K sweeps, the last into v (a: A's values). */
sps_status run_sweeps(sps_context *ctx, const sps_parilu_pat &P, int K, const double *a, double *v, double *w)
{
    cudaStream_t st_ = sps_stream(ctx);
    int g = grid_for(ctx, P.nnz);
    double *cur = K % 2 == 0 ? v : w, *nxt = K % 2 == 0 ? w : v;
    k_start<<<g, TB, 0, st_>>>(P, a, cur);
    SPS_LAUNCH_CHECK(ctx, "k_start");
    for (int j = 0; j < K; j++) {
        k_sweep<<<g, TB, 0, st_>>>(P, a, cur, nxt);
        SPS_LAUNCH_CHECK(ctx, "k_sweep");
        double *t = cur;
        cur = nxt;
        nxt = t;
    }
    return SPS_OK;
}

} // namespace

static_assert(sizeof(sps_idx) == sizeof(unsigned), "columns are sorted as unsigned keys");

extern "C" sps_status sps__parilu_dev(sps_context *ctx, sps_idx n, int64_t nnz, const sps_idx *rp,
                                     const sps_idx *ci, int cholesky, int K, double *v, int64_t *bad)
{
    *bad = -1;
    if (n == 0 || nnz == 0) return SPS_OK;
    scratch s(ctx);
    sps_parilu_pat P = {n, nnz, cholesky, rp, ci, nullptr, nullptr, nullptr, nullptr, nullptr};
    double *a, *w;
    unsigned long long *dbad, hbad = ~0ull;
    size_t total = 0;
    sps_status st = scratch_bytes(ctx, n, nnz, cholesky, &total);
    if (st == SPS_OK) st = s.reserve(total);
    if (st == SPS_OK) st = pattern(ctx, s, P);
    if (st == SPS_OK) st = s.get(&a, (size_t)nnz);
    if (st == SPS_OK) st = s.get(&w, (size_t)nnz);
    if (st == SPS_OK) st = s.get(&dbad, 1);
    if (st == SPS_OK) st = sps__d2d(ctx, a, v, (size_t)nnz * sizeof *a);
    if (st == SPS_OK) st = run_sweeps(ctx, P, K, a, v, w);
    if (st != SPS_OK) return st;
    SPS_CUDA(ctx, cudaMemsetAsync(dbad, 0xff, sizeof *dbad, sps_stream(ctx))); /* ~0: none */
    int g = grid_for(ctx, nnz);
    k_check<<<g, TB, 0, sps_stream(ctx)>>>(P, v, dbad);
    SPS_LAUNCH_CHECK(ctx, "k_check");
    if ((st = sps__d2h(ctx, &hbad, dbad, sizeof hbad)) != SPS_OK) return st;
    *bad = hbad == ~0ull ? -1 : (int64_t)hbad;
    return SPS_OK;
}

extern "C" sps_status sps__parilu_dev_diag(sps_context *ctx, sps_idx n, const sps_idx *rp, const sps_idx *ci,
                                          sps_idx *dpos, sps_idx *first)
{
    *first = -1;
    if (n == 0) return SPS_OK;
    scratch s(ctx);
    int *dfirst, h = n;
    sps_status st = s.get(&dfirst, 1);
    if (st == SPS_OK) st = sps__h2d(ctx, dfirst, &h, sizeof h);
    if (st != SPS_OK) return st;
    int g = grid_for(ctx, n);
    k_diag<<<g, TB, 0, sps_stream(ctx)>>>(n, rp, ci, dpos, dfirst);
    SPS_LAUNCH_CHECK(ctx, "k_diag");
    if ((st = sps__d2h(ctx, &h, dfirst, sizeof h)) != SPS_OK) return st;
    *first = h < n ? h : -1;
    return SPS_OK;
}

/* ---- ic0: tril(A) and L' on the device ---------------------------------- */

extern "C" sps_status sps__parilu_dev_symmetric(sps_context *ctx, sps_idx n, int64_t nnz, const sps_idx *rp,
                                               const sps_idx *ci, const double *v, int *same)
{
    *same = 1;
    if (n == 0 || nnz == 0) return SPS_OK;
    scratch s(ctx);
    sps_idx *row;
    int *dsame, h = 1, ge = grid_for(ctx, nnz);
    sps_status st = s.reserve(scratch::round((size_t)nnz * sizeof(sps_idx)) + scratch::round(sizeof(int)));
    if (st == SPS_OK) st = s.get(&row, (size_t)nnz);
    if (st == SPS_OK) st = s.get(&dsame, 1);
    if (st == SPS_OK) st = sps__h2d(ctx, dsame, &h, sizeof h);
    if (st != SPS_OK) return st;
    k_rows<<<ge, TB, 0, sps_stream(ctx)>>>(nnz, n, rp, row);
    SPS_LAUNCH_CHECK(ctx, "k_rows");
    k_symmetric<<<ge, TB, 0, sps_stream(ctx)>>>(nnz, rp, ci, v, row, dsame);
    SPS_LAUNCH_CHECK(ctx, "k_symmetric");
    if ((st = sps__d2h(ctx, &h, dsame, sizeof h)) != SPS_OK) return st;
    *same = h;
    return SPS_OK;
}

extern "C" sps_status sps__parilu_dev_tril(sps_context *ctx, sps_idx n, int64_t nnz, const sps_idx *rp,
                                          const sps_idx *ci, const double *v, const sps_idx *dpos, sps_idx *lrp,
                                          sps_idx *lci, double *lv, sps_idx *ldpos)
{
    if (n == 0) return SPS_OK;
    cudaStream_t st_ = sps_stream(ctx);
    scratch s(ctx);
    sps_idx *row, *cnt;
    size_t sb = 0;
    SPS_CUDA(ctx, cub::DeviceScan::InclusiveSum(nullptr, sb, (const sps_idx *)nullptr, (sps_idx *)nullptr, (int)n,
                                               st_));
    char *tmp;
    int ge = grid_for(ctx, nnz), gr = grid_for(ctx, n);
    sps_status st = s.reserve(scratch::round((size_t)nnz * sizeof(sps_idx)) +
                              scratch::round((size_t)n * sizeof(sps_idx)) + scratch::round(sb ? sb : 1));
    if (st == SPS_OK) st = s.get(&row, (size_t)nnz);
    if (st == SPS_OK) st = s.get(&cnt, (size_t)n);
    if (st == SPS_OK) st = s.get(&tmp, sb);
    if (st != SPS_OK) return st;
    k_tril_count<<<gr, TB, 0, st_>>>(n, rp, dpos, cnt);
    SPS_LAUNCH_CHECK(ctx, "k_tril_count");
    SPS_CUDA(ctx, cudaMemsetAsync(lrp, 0, sizeof *lrp, st_));
    SPS_CUDA(ctx, cub::DeviceScan::InclusiveSum(tmp, sb, (const sps_idx *)cnt, lrp + 1, (int)n, st_));
    k_rows<<<ge, TB, 0, st_>>>(nnz, n, rp, row);
    SPS_LAUNCH_CHECK(ctx, "k_rows");
    k_tril_fill<<<ge, TB, 0, st_>>>(nnz, rp, ci, v, row, dpos, lrp, lci, lv);
    SPS_LAUNCH_CHECK(ctx, "k_tril_fill");
    k_last<<<gr, TB, 0, st_>>>(n, lrp, ldpos);
    SPS_LAUNCH_CHECK(ctx, "k_last");
    return SPS_OK;
}

extern "C" sps_status sps__parilu_dev_transpose(sps_context *ctx, sps_idx n, int64_t nnz, const sps_idx *rp,
                                               const sps_idx *ci, sps_idx *trp, sps_idx *tci, sps_idx *perm)
{
    if (n == 0) return SPS_OK;
    scratch s(ctx);
    sps_parilu_pat P = {n, nnz, 1, rp, ci, nullptr, nullptr, nullptr, nullptr, nullptr};
    size_t ni = scratch::round((size_t)(nnz ? nnz : 1) * sizeof(sps_idx)), sb = 0;
    sps_status st = sort_bytes(ctx, nnz, key_bits(n), &sb);
    if (st == SPS_OK) st = s.reserve(3 * ni + scratch::round(sb ? sb : 1));
    sps_idx *row;
    if (st == SPS_OK) st = s.get(&row, (size_t)nnz);
    if (st != SPS_OK) return st;
    int ge = grid_for(ctx, nnz);
    k_rows<<<ge, TB, 0, sps_stream(ctx)>>>(nnz, n, rp, row);
    SPS_LAUNCH_CHECK(ctx, "k_rows");
    sps_idx *const out[3] = {trp, tci, perm};
    return columns(ctx, s, P, row, out);
}
