/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/amg_dsetup.cu: the smoothed-aggregation setup on the
 * device (`amg:setup=gpu`), for block 1 and the constant nullspace. Each
 * step is amg_setup.c's host reference written as independent per-row or
 * per-aggregate threads:
 *   strength   one thread per row, the host's test and expression;
 *   aggregate  MIS(2) rounds with the host's keys (two max passes and an
 *              update per round; the count of undecided nodes is an integer
 *              sum, read every MIS_BATCH rounds), roots numbered by a scan,
 *              then the two joining passes: the aggregates equal the host's
 *              exactly;
 *   P_tent     the members of each aggregate in node order (a stable radix
 *              sort of (aggregate, node)), then one thread per aggregate:
 *              the host's modified Gram-Schmidt for one column;
 *   spectral   Jacobi-PCG (Lanczos) steps with the host's products and
 *              updates; the dot products are block partials plus one block
 *              in a fixed order (deterministic, not the host's serial order:
 *              rho, so P and A_c, agree with the host's to rounding); the
 *              steps' scalars stay on the device, read once at the end;
 *   products   P = (I - omega D^-1 A) P_tent, A P and R (A P) by our own
 *              kernels: a group of 4-32 lanes a row sums into a hash table
 *              in shared memory (global memory for a row that overflows
 *              it), a block a long row (more than 2048 terms) into a larger
 *              one, one thread a row for short products; every entry's
 *              terms in the host's order (X's row, then Y's), then the row
 *              sorted. cuSPARSE SpGEMM is not used: its summation order is
 *              not documented as fixed, and this order makes C bitwise the
 *              host's for equal inputs;
 *   transpose  R = P' by a stable radix sort of P's entries by column.
 * Every product and sum is __dmul_rn / __dadd_rn (no contraction into FMA),
 * as the host's code is compiled. The device levels stay on the device
 * (the hierarchy's primary copy: the V-cycle computes on it in place, and
 * the host gets only sizes); sps__amg_host_copy brings them to the host when the
 * numeric re-setup or a test reads them. Levels of at most gpu_min rows
 * (default SPS_AMG_GPU_MIN), and a level whose coarsening stalls, are built
 * by the host code. */
#include "../../core/cuda_check.cuh"
#include "../cheby/cheby.h"
#include "amg.h"

#include <cub/cub.cuh>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

namespace {

const int TB = 256;        /* threads a block */
const int RED_BLOCKS = 256; /* blocks of a reduction: fixed, so the order is */

int blocks_for(long long n)
{
    long long b = (n + TB - 1) / TB;
    if (b > 65535LL * 32) b = 65535LL * 32;
    return b < 1 ? 1 : (int)b;
}

/* After a launch: a launch error into st (the function goes on to free
 * what it allocated). */
#define LAUNCHED(ctx, st, name)                                                           \
    do {                                                                                  \
        cudaError_t e_ = cudaGetLastError();                                              \
        if ((st) == SPS_OK && e_ != cudaSuccess)                                          \
            (st) = sps__cuda_fail((ctx), e_, "launch " name, __FILE__, __LINE__);         \
    } while (0)

#define GRID_LOOP(i, n)                                                                   \
    for (long long i = blockIdx.x * (long long)TB + threadIdx.x; i < (n);                 \
         i += (long long)gridDim.x * TB)

/* A device CSR (sps_idx indices). */
struct dcsr {
    sps_idx nr = 0, nc = 0, nnz = 0;
    sps_idx *rp = nullptr, *ci = nullptr;
    double *v = nullptr;
};

void dcsr_free(dcsr &a)
{
    sps__dfree(a.rp);
    sps__dfree(a.ci);
    sps__dfree(a.v);
    a = dcsr();
}

template <class T> sps_status dalloc(sps_context *ctx, T **p, long long count)
{
    *p = nullptr;
    return sps__dmalloc(ctx, (void **)p, (size_t)(count > 0 ? count : 1) * sizeof(T));
}

/* a's sizes, and its arrays from alloc(&array, count): dalloc's or talloc's. */
template <class F> sps_status dcsr_make(dcsr &a, sps_idx nr, sps_idx nc, sps_idx nnz, int values, F alloc)
{
    a.nr = nr;
    a.nc = nc;
    a.nnz = nnz;
    sps_status st = alloc(&a.rp, (long long)nr + 1);
    if (st == SPS_OK) st = alloc(&a.ci, nnz);
    if (st == SPS_OK && values) st = alloc(&a.v, nnz);
    return st;
}

sps_status dcsr_alloc(sps_context *ctx, dcsr &a, sps_idx nr, sps_idx nc, sps_idx nnz, int values)
{
    return dcsr_make(a, nr, nc, nnz, values, [ctx](auto **p, long long n) { return dalloc(ctx, p, n); });
}

/* The setup's state: the context, its stream, reduction scratch. */
struct dsetup {
    sps_context *ctx;
    cudaStream_t s;
    double *red = nullptr; /* RED_BLOCKS partials + 1 result */
    cudaMemPool_t pool = nullptr; /* talloc's pool (pool_begin), NULL: cudaMalloc */
    int level = 0;                /* the level being built (the step timer's label) */
};

/* ---- the step timer (sps__amg_prof_set; off by default) -------------------- */

/* The hook: NULL (the default) and every steps call below returns at once
 * (no event, no synchronization). A profiling tool's setting, not the
 * library's: not per context, not for concurrent setups. */
sps_amg_prof_fn prof_fn = nullptr;
void *prof_arg = nullptr;

/* The steps of one product (or phase): mark(name) records an event on the
 * stream, which ends the previous step and starts step name; done() records
 * the last event, waits for it and reports each step's event-to-event time
 * (the device's time of its kernels, and the host's reads, allocations and
 * launches between them) to the hook. */
struct steps {
    static const int MAX = 24;
    dsetup &D;
    const char *what;
    int n = 0;
    cudaEvent_t ev[MAX];
    const char *name[MAX];
    steps(dsetup &d, const char *w) : D(d), what(w) {}
    void mark(const char *step)
    {
        if (!prof_fn || n >= MAX) return;
        if (cudaEventCreate(&ev[n]) != cudaSuccess) {
            cudaGetLastError();
            return;
        }
        cudaEventRecord(ev[n], D.s);
        name[n++] = step;
    }
    void done()
    {
        if (!prof_fn || n == 0) return;
        mark("end");
        if (cudaEventSynchronize(ev[n - 1]) == cudaSuccess)
            for (int k = 0; k + 1 < n; k++) {
                float ms = 0.0f;
                if (cudaEventElapsedTime(&ms, ev[k], ev[k + 1]) == cudaSuccess)
                    prof_fn(prof_arg, D.level, what, name[k], ms);
            }
        for (int k = 0; k < n; k++) cudaEventDestroy(ev[k]);
        cudaGetLastError();
        n = 0;
    }
    ~steps() { done(); }
};

/* The setup's temporaries (the arrays that die inside the setup: scratch,
 * S, A P, the smoothing matrix, the nullspaces, sort and scan buffers) are
 * stream-ordered: cudaMallocFromPoolAsync / cudaFreeAsync on the context's
 * stream, from a pool of the setup's own (pool_begin, pool_end). A free is
 * queued behind the kernels that read the array: no synchronization, no
 * wait for the stream before it (cudaFree synchronizes the device and costs
 * 0.1-1 ms on the large arrays), and a size met before is served by the
 * pool without the driver. The hierarchy's arrays (T, P, R, A_{l+1}, the
 * aggregates, the smoother's scaling, the coarse inverse) stay on dalloc
 * (cudaMalloc): their owner frees them with sps__dfree. A device without
 * memory pools gets cudaMalloc, and a free after the stream is drained. */
template <class T> sps_status talloc(dsetup &D, T **p, long long count)
{
    size_t bytes = (size_t)(count > 0 ? count : 1) * sizeof(T);
    if (!D.pool) return sps__dmalloc(D.ctx, (void **)p, bytes);
    void *q = nullptr;
    cudaError_t e = cudaMallocFromPoolAsync(&q, bytes, D.pool, D.s);
    *p = (T *)q;
    if (e == cudaSuccess) return SPS_OK;
    *p = nullptr;
    cudaGetLastError();
    if (e == cudaErrorMemoryAllocation)
        return sps__err(D.ctx, SPS_ERR_NO_MEMORY,
                        "cudaMallocFromPoolAsync of %.1f MiB failed: out of device memory",
                        (double)bytes / 1048576.0);
    return sps__cuda_fail(D.ctx, e, "cudaMallocFromPoolAsync", __FILE__, __LINE__);
}

/* A temporary's free, queued on the stream (NULL: nothing). */
void tfree(dsetup &D, void *p)
{
    if (!p) return;
    if (D.pool) {
        cudaFreeAsync(p, D.s);
        return;
    }
    cudaStreamSynchronize(D.s); /* cudaFree's own synchronization is not relied on */
    sps__dfree(p);
}

sps_status dcsr_talloc(dsetup &D, dcsr &a, sps_idx nr, sps_idx nc, sps_idx nnz, int values)
{
    return dcsr_make(a, nr, nc, nnz, values, [&D](auto **p, long long n) { return talloc(D, p, n); });
}

void dcsr_tfree(dsetup &D, dcsr &a)
{
    tfree(D, a.rp);
    tfree(D, a.ci);
    tfree(D, a.v);
    a = dcsr();
}

/* ---- scans, sorts and reductions ------------------------------------------ */

/* out[0..n] = exclusive prefix sum of in[0..n) (out[n] the total). */
template <class T> sps_status scan(dsetup &D, const T *in, T *out, long long n)
{
    sps_context *ctx = D.ctx;
    cudaStream_t s = D.s;
    SPS_CUDA(ctx, cudaMemsetAsync(out, 0, sizeof(T), s));
    if (n == 0) return SPS_OK;
    size_t bytes = 0;
    SPS_CUDA(ctx, cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out + 1, (int)n, s));
    char *tmp = nullptr;
    if (bytes == 0) bytes = 16; /* a NULL buffer would only ask for the size again */
    sps_status st = talloc(D, &tmp, (long long)bytes);
    if (st != SPS_OK) return st;
    cudaError_t e = cub::DeviceScan::InclusiveSum(tmp, bytes, in, out + 1, (int)n, s);
    tfree(D, tmp); /* queued after the scan */
    if (e != cudaSuccess) return sps__cuda_fail(ctx, e, "cub::DeviceScan::InclusiveSum", __FILE__, __LINE__);
    return SPS_OK;
}

/* (keys, vals) sorted by key, stably (equal keys keep their order). */
sps_status sort_pairs(dsetup &D, const unsigned *kin, unsigned *kout, const sps_idx *vin,
                      sps_idx *vout, long long n, unsigned kmax)
{
    if (n == 0) return SPS_OK;
    sps_context *ctx = D.ctx;
    cudaStream_t s = D.s;
    int bits = 1;
    while (bits < 32 && (kmax >> bits) != 0) bits++;
    size_t bytes = 0;
    SPS_CUDA(ctx, cub::DeviceRadixSort::SortPairs(nullptr, bytes, kin, kout, vin, vout, (int)n, 0,
                                                  bits, s));
    char *tmp = nullptr;
    if (bytes == 0) bytes = 16;
    sps_status st = talloc(D, &tmp, (long long)bytes);
    if (st != SPS_OK) return st;
    cudaError_t e = cub::DeviceRadixSort::SortPairs(tmp, bytes, kin, kout, vin, vout, (int)n, 0, bits, s);
    tfree(D, tmp); /* queued after the sort */
    if (e != cudaSuccess) return sps__cuda_fail(ctx, e, "cub::DeviceRadixSort::SortPairs", __FILE__, __LINE__);
    return SPS_OK;
}

/* Partial sums (op 0) or maxima (op 1) of x.*y (op 0) or x (op 1): thread t
 * of block b takes i = b TB + t + k TB RED_BLOCKS, then a tree in shared
 * memory; the order depends on n only. */
__global__ void k_reduce_part(long long n, int op, const double *__restrict__ x,
                              const double *__restrict__ y, double *__restrict__ part)
{
    __shared__ double sh[TB];
    double s = 0.0;
    for (long long i = blockIdx.x * (long long)TB + threadIdx.x; i < n; i += (long long)TB * RED_BLOCKS)
        s = op == 0 ? __dadd_rn(s, __dmul_rn(x[i], y[i])) : fmax(s, x[i]);
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = TB / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            sh[threadIdx.x] = op == 0 ? __dadd_rn(sh[threadIdx.x], sh[threadIdx.x + w])
                                      : fmax(sh[threadIdx.x], sh[threadIdx.x + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

__global__ void k_reduce_final(int op, const double *__restrict__ part, double *__restrict__ out)
{
    __shared__ double sh[RED_BLOCKS];
    for (int i = threadIdx.x; i < RED_BLOCKS; i += blockDim.x) sh[i] = part[i];
    __syncthreads();
    for (int w = RED_BLOCKS / 2; w > 0; w >>= 1) {
        for (int i = threadIdx.x; i < w; i += blockDim.x)
            sh[i] = op == 0 ? __dadd_rn(sh[i], sh[i + w]) : fmax(sh[i], sh[i + w]);
        __syncthreads();
    }
    if (threadIdx.x == 0) *out = sh[0];
}

/* *out (device) = x'y (op 0) or max x (op 1), deterministic; nothing is
 * read back. */
sps_status reduce(dsetup &D, int op, long long n, const double *x, const double *y, double *out)
{
    k_reduce_part<<<RED_BLOCKS, TB, 0, D.s>>>(n, op, x, y, D.red);
    SPS_LAUNCH_CHECK(D.ctx, "k_reduce_part");
    k_reduce_final<<<1, TB, 0, D.s>>>(op, D.red, out);
    SPS_LAUNCH_CHECK(D.ctx, "k_reduce_final");
    return SPS_OK;
}

/* ---- strength ------------------------------------------------------------- */

/* d[i] = |a_ii| (0 when absent) */
__global__ void k_absdiag(sps_idx n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                          const double *__restrict__ v, double *__restrict__ d)
{
    GRID_LOOP(i, n) {
        double di = 0.0;
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++)
            if (ci[p] == i) di = fabs(v[p]);
        d[i] = di;
    }
}

__device__ bool strong(sps_idx i, sps_idx j, double a, double theta, const double *d)
{
    return j != i && a > 0 && a >= __dmul_rn(theta, sqrt(__dmul_rn(d[i], d[j])));
}

/* cnt[i] = strong couplings of row i, or (fill) S's columns of row i. */
__global__ void k_strength(sps_idx n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                           const double *__restrict__ v, const double *__restrict__ d, double theta,
                           sps_idx *__restrict__ cnt, const sps_idx *__restrict__ srp,
                           sps_idx *__restrict__ sci)
{
    GRID_LOOP(i, n) {
        sps_idx c = 0, w = srp ? srp[i] : 0;
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++)
            if (strong((sps_idx)i, ci[p], fabs(v[p]), theta, d)) {
                if (srp) sci[w++] = ci[p];
                c++;
            }
        if (!srp) cnt[i] = c;
    }
}

sps_status strength(dsetup &D, const dcsr &A, double theta, dcsr &S)
{
    sps_idx n = A.nr;
    double *d = nullptr;
    sps_idx *cnt = nullptr;
    int gr = blocks_for(n);
    sps_status st = talloc(D, &d, n);
    if (st == SPS_OK) st = talloc(D, &cnt, n);
    if (st == SPS_OK) st = talloc(D, &S.rp, (long long)n + 1);
    if (st == SPS_OK) {
        k_absdiag<<<gr, TB, 0, D.s>>>(n, A.rp, A.ci, A.v, d);
        LAUNCHED(D.ctx, st, "k_absdiag");
        k_strength<<<gr, TB, 0, D.s>>>(n, A.rp, A.ci, A.v, d, theta, cnt, nullptr, nullptr);
        LAUNCHED(D.ctx, st, "k_strength");
        if (st == SPS_OK) st = scan(D, cnt, S.rp, n);
    }
    /* S's columns sized by A's entries (a strong coupling is an entry of
     * A): no read of S's count, S.rp alone tells it; S, a temporary, lives
     * until the aggregates are made */
    if (st == SPS_OK) st = talloc(D, &S.ci, A.nnz);
    if (st == SPS_OK) {
        S.nr = S.nc = n;
        S.nnz = A.nnz; /* the bound */
        k_strength<<<gr, TB, 0, D.s>>>(n, A.rp, A.ci, A.v, d, theta, nullptr, S.rp, S.ci);
        LAUNCHED(D.ctx, st, "k_strength fill");
    }
    tfree(D, d);
    tfree(D, cnt);
    return st;
}

/* ---- MIS(2) aggregation ------------------------------------------------------ */

/* amg_setup.c's mis_key */
__device__ uint64_t mis_key(uint64_t state, sps_idx i)
{
    uint64_t z = (uint64_t)i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return state << 62 | (z & 0x3fffffffull) << 32 | (uint32_t)i;
}

__global__ void k_mis_init(sps_idx n, const sps_idx *__restrict__ srp, uint64_t *__restrict__ key)
{
    GRID_LOOP(i, n) key[i] = mis_key(srp[i + 1] > srp[i], (sps_idx)i);
}

__global__ void k_max_nb(sps_idx n, const sps_idx *__restrict__ srp, const sps_idx *__restrict__ sci,
                         const uint64_t *__restrict__ in, uint64_t *__restrict__ out)
{
    GRID_LOOP(i, n) {
        uint64_t v = in[i];
        for (sps_idx p = srp[i]; p < srp[i + 1]; p++)
            if (in[sci[p]] > v) v = in[sci[p]];
        out[i] = v;
    }
}

/* mis2's update; *left += undecided nodes (an integer sum: any order),
 * summed over the block first: one atomic a block. (An atomic a thread, as
 * before, queued millions of atomics on one address in the first rounds:
 * 5.7 ms of poisson3d:160's setup on an H200, 42 launches.) */
__global__ void k_mis_update(sps_idx n, uint64_t *__restrict__ key, const uint64_t *__restrict__ t2,
                             unsigned long long *__restrict__ left)
{
    __shared__ unsigned long long part[TB];
    unsigned long long c = 0;
    GRID_LOOP(i, n) {
        if (key[i] >> 62 != 1) continue;
        if ((uint32_t)t2[i] == (uint32_t)i) key[i] = mis_key(2, (sps_idx)i);
        else if (t2[i] >> 62 == 2) key[i] = mis_key(0, (sps_idx)i);
        else c++;
    }
    part[threadIdx.x] = c;
    __syncthreads();
    for (int w = TB / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0 && part[0]) atomicAdd(left, part[0]);
}

__global__ void k_root_flag(sps_idx n, const uint64_t *__restrict__ key, sps_idx *__restrict__ f)
{
    GRID_LOOP(i, n) f[i] = key[i] >> 62 == 2;
}

/* grow()'s first pass: first[i] = i's aggregate if a root, else that of its
 * first root neighbour, else -1 (num: the roots' exclusive scan). */
__global__ void k_first(sps_idx n, const sps_idx *__restrict__ srp, const sps_idx *__restrict__ sci,
                        const uint64_t *__restrict__ key, const sps_idx *__restrict__ num,
                        sps_idx *__restrict__ first)
{
    GRID_LOOP(i, n) {
        sps_idx f = key[i] >> 62 == 2 ? num[i] : -1;
        for (sps_idx p = srp[i]; p < srp[i + 1] && f < 0; p++)
            if (key[sci[p]] >> 62 == 2) f = num[sci[p]];
        first[i] = f;
    }
}

/* grow()'s second pass */
__global__ void k_join(sps_idx n, const sps_idx *__restrict__ srp, const sps_idx *__restrict__ sci,
                       const sps_idx *__restrict__ first, sps_idx *__restrict__ agg)
{
    GRID_LOOP(i, n) {
        sps_idx a = first[i];
        for (sps_idx p = srp[i]; p < srp[i + 1] && a < 0; p++) a = first[sci[p]];
        agg[i] = a;
    }
}

/* *bad += nodes with strong neighbours left without an aggregate (MIS(2)
 * is maximal: none; amg_setup.c's check, on the device). */
__global__ void k_orphans(sps_idx n, const sps_idx *__restrict__ srp, const sps_idx *__restrict__ agg,
                          unsigned long long *__restrict__ bad)
{
    unsigned long long c = 0;
    GRID_LOOP(i, n) c += agg[i] < 0 && srp[i + 1] > srp[i];
    if (c) atomicAdd(bad, c);
}

/* Rounds until no node is undecided, in batches of MIS_BATCH rounds
 * between reads of the count (a round after the last one changes nothing:
 * it has no undecided node to update), so the keys are those of the host's
 * loop with a read every MIS_BATCH rounds instead of every round. */
const int MIS_BATCH = 2;

sps_status mis2(dsetup &D, const dcsr &S, uint64_t *key, uint64_t *t1, uint64_t *t2)
{
    sps_idx n = S.nr;
    int gr = blocks_for(n);
    unsigned long long *left = nullptr, hl = 1;
    sps_status st = talloc(D, &left, MIS_BATCH);
    if (st != SPS_OK) return st;
    k_mis_init<<<gr, TB, 0, D.s>>>(n, S.rp, key);
    cudaError_t e = cudaGetLastError();
    while (st == SPS_OK && e == cudaSuccess && hl > 0) {
        st = sps__dmemset(D.ctx, left, 0, MIS_BATCH * sizeof *left);
        for (int r = 0; r < MIS_BATCH && st == SPS_OK && e == cudaSuccess; r++) {
            k_max_nb<<<gr, TB, 0, D.s>>>(n, S.rp, S.ci, key, t1);
            k_max_nb<<<gr, TB, 0, D.s>>>(n, S.rp, S.ci, t1, t2);
            k_mis_update<<<gr, TB, 0, D.s>>>(n, key, t2, left + r);
            e = cudaGetLastError();
        }
        if (st == SPS_OK && e == cudaSuccess) st = sps__d2h(D.ctx, &hl, left + MIS_BATCH - 1, sizeof hl);
    }
    tfree(D, left);
    if (e != cudaSuccess) return sps__cuda_fail(D.ctx, e, "launch MIS(2) round", __FILE__, __LINE__);
    return st;
}

/* agg (device, n) and *dnagg (device: the caller reads it with the orphan
 * count, one read): amg_setup.c's aggregates exactly. */
sps_status aggregate(dsetup &D, const dcsr &S, sps_idx *agg, sps_idx *dnagg)
{
    sps_idx n = S.nr;
    int gr = blocks_for(n);
    uint64_t *w = nullptr;
    sps_idx *f = nullptr, *num = nullptr, *first = nullptr;
    sps_status st = talloc(D, &w, 3 * (long long)n);
    if (st == SPS_OK) st = talloc(D, &f, n);
    if (st == SPS_OK) st = talloc(D, &num, (long long)n + 1);
    if (st == SPS_OK) st = talloc(D, &first, n);
    if (st == SPS_OK) st = mis2(D, S, w, w + n, w + 2 * (long long)n);
    if (st == SPS_OK) {
        k_root_flag<<<gr, TB, 0, D.s>>>(n, w, f);
        LAUNCHED(D.ctx, st, "k_root_flag");
        if (st == SPS_OK) st = scan(D, f, num, n);
    }
    if (st == SPS_OK) st = sps__d2d(D.ctx, dnagg, num + n, sizeof *dnagg);
    if (st == SPS_OK) {
        k_first<<<gr, TB, 0, D.s>>>(n, S.rp, S.ci, w, num, first);
        LAUNCHED(D.ctx, st, "k_first");
        k_join<<<gr, TB, 0, D.s>>>(n, S.rp, S.ci, first, agg);
        LAUNCHED(D.ctx, st, "k_join");
    }
    tfree(D, w);
    tfree(D, f);
    tfree(D, num);
    tfree(D, first);
    return st;
}

/* ---- tentative prolongator (one column) ------------------------------------ */

__global__ void k_agg_keys(sps_idx n, const sps_idx *__restrict__ agg, unsigned *__restrict__ key,
                           sps_idx *__restrict__ idx, sps_idx *__restrict__ has)
{
    GRID_LOOP(i, n) {
        key[i] = (unsigned)(agg[i] + 1); /* 0: in no aggregate */
        idx[i] = (sps_idx)i;
        has[i] = agg[i] >= 0;
    }
}

/* start[a] = the first position of aggregate a in the sorted keys (key a + 1). */
__global__ void k_agg_start(sps_idx n, sps_idx nagg, const unsigned *__restrict__ key,
                            sps_idx *__restrict__ start)
{
    GRID_LOOP(q, n) {
        unsigned prev = q ? key[q - 1] : 0u;
        for (unsigned a = prev; a < key[q]; a++) start[a] = (sps_idx)q; /* aggregates prev..key-1 */
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) start[nagg] = n;
}

/* mgs() for one column per aggregate: Q's column is B on the members (in
 * node order), normalized; Bc[a] = its norm (0: dependent). */
__global__ void k_tent(sps_idx nagg, const sps_idx *__restrict__ start, const sps_idx *__restrict__ mem,
                       const double *__restrict__ B, const sps_idx *__restrict__ trp,
                       sps_idx *__restrict__ tci, double *__restrict__ tv, double *__restrict__ Bc)
{
    GRID_LOOP(a, nagg) {
        double n0 = 0.0, nv = 0.0;
        for (sps_idx s = start[a]; s < start[a + 1]; s++) {
            double b = B ? B[mem[s]] : 1.0;
            n0 = __dadd_rn(n0, __dmul_rn(b, b));
        }
        for (sps_idx s = start[a]; s < start[a + 1]; s++) {
            double b = B ? B[mem[s]] : 1.0;
            nv = __dadd_rn(nv, __dmul_rn(b, b));
        }
        nv = sqrt(nv);
        bool dep = !(nv > __dmul_rn(1e-10, sqrt(n0)));
        for (sps_idx s = start[a]; s < start[a + 1]; s++) {
            sps_idx i = mem[s];
            double b = B ? B[i] : 1.0;
            tci[trp[i]] = (sps_idx)a;
            tv[trp[i]] = dep ? 0.0 : __ddiv_rn(b, nv);
        }
        Bc[a] = dep ? 0.0 : nv;
    }
}

sps_status tentative(dsetup &D, const sps_idx *agg, sps_idx n, sps_idx nagg, const double *B,
                     dcsr &T, double *Bc)
{
    int gr = blocks_for(n);
    unsigned *k1 = nullptr, *k2 = nullptr;
    sps_idx *i1 = nullptr, *i2 = nullptr, *has = nullptr, *start = nullptr;
    sps_status st = talloc(D, &k1, n);
    if (st == SPS_OK) st = talloc(D, &k2, n);
    if (st == SPS_OK) st = talloc(D, &i1, n);
    if (st == SPS_OK) st = talloc(D, &i2, n);
    if (st == SPS_OK) st = talloc(D, &has, n);
    if (st == SPS_OK) st = talloc(D, &start, (long long)nagg + 1);
    if (st == SPS_OK) st = dalloc(D.ctx, &T.rp, (long long)n + 1);
    if (st == SPS_OK) {
        k_agg_keys<<<gr, TB, 0, D.s>>>(n, agg, k1, i1, has);
        LAUNCHED(D.ctx, st, "k_agg_keys");
        if (st == SPS_OK) st = scan(D, has, T.rp, n);
    }
    if (st == SPS_OK) st = sort_pairs(D, k1, k2, i1, i2, n, (unsigned)nagg);
    if (st == SPS_OK) st = sps__d2h(D.ctx, &T.nnz, T.rp + n, sizeof T.nnz);
    if (st == SPS_OK) st = dalloc(D.ctx, &T.ci, T.nnz);
    if (st == SPS_OK) st = dalloc(D.ctx, &T.v, T.nnz);
    if (st == SPS_OK && nagg > 0) {
        T.nr = n;
        T.nc = nagg;
        st = sps__dmemset(D.ctx, start, 0, ((size_t)nagg + 1) * sizeof *start);
        if (st == SPS_OK) {
            k_agg_start<<<gr, TB, 0, D.s>>>(n, nagg, k2, start);
            LAUNCHED(D.ctx, st, "k_agg_start");
            k_tent<<<blocks_for(nagg), TB, 0, D.s>>>(nagg, start, i2, B, T.rp, T.ci, T.v, Bc);
            LAUNCHED(D.ctx, st, "k_tent");
        }
    }
    tfree(D, k1);
    tfree(D, k2);
    tfree(D, i1);
    tfree(D, i2);
    tfree(D, has);
    tfree(D, start);
    return st;
}

/* ---- diagonal scalings ------------------------------------------------------ */

/* dinv = 1 / a_ii (0 without), g[i] = sum_j |a_ij| |dinv_i| (inverse_diag);
 * l1 (when not NULL) = 1 / sum_j |a_ij| (l1_inverse). */
__global__ void k_diag(sps_idx n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                       const double *__restrict__ v, double *__restrict__ dinv, double *__restrict__ g,
                       double *__restrict__ l1)
{
    GRID_LOOP(i, n) {
        double d = 0.0, s = 0.0;
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) {
            if (ci[p] == i) d = v[p];
            s = __dadd_rn(s, fabs(v[p]));
        }
        double di = d != 0.0 ? __ddiv_rn(1.0, d) : 0.0;
        dinv[i] = di;
        g[i] = __dmul_rn(s, fabs(di));
        if (l1) l1[i] = s > 0 ? __ddiv_rn(1.0, s) : 0.0;
    }
}

/* ---- Lanczos ------------------------------------------------------------------ */

/* The Lanczos steps' scalars on the device (lanczos.cuh), and the
 * Gershgorin bound reduced beside them: the host reads both once. */
#include "../cheby/lanczos.cuh"
typedef lz_state<SPS_AMG_LANCZOS> amg_lzs;
struct amg_lz {
    amg_lzs lz;
    double gersh;
};

__global__ void k_lz_init(sps_idx n, const double *__restrict__ dinv, double *__restrict__ r,
                          double *__restrict__ z, double *__restrict__ p)
{
    GRID_LOOP(i, n) {
        double ri = sps__cheby_start(i);
        r[i] = ri;
        z[i] = p[i] = __dmul_rn(dinv[i], ri);
    }
}

/* y = A x, each row summed in CSR order by one thread (spmv_rows' sums,
 * bitwise; nothing once s stops). A warp's 32 rows take their products
 * through shared memory: the warp computes the rows' entries' products
 * contiguously (coalesced loads of values and columns, a lane an entry),
 * then each lane adds its row's products in order. */
const int SPMV_TILE = 128; /* products a warp stages at once */

__global__ void k_spmv(sps_idx n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                       const double *__restrict__ v, const double *__restrict__ x, double *__restrict__ y,
                       const amg_lzs *s)
{
    __shared__ double tile[TB / 32][SPMV_TILE];
    if (s->stop) return;
    const int w = threadIdx.x >> 5, lane = threadIdx.x & 31;
    volatile double *t = tile[w];
    for (long long r0 = ((long long)blockIdx.x * (TB / 32) + w) * 32; r0 < n; r0 += (long long)gridDim.x * TB) {
        const long long i = r0 + lane, rend = r0 + 32 < n ? r0 + 32 : n;
        const sps_idx p0 = rp[r0], p1 = rp[rend];
        const sps_idx a = i < n ? rp[i] : p1, b = i < n ? rp[i + 1] : p1;
        double sum = 0.0;
        for (sps_idx c = p0; c < p1; c += SPMV_TILE) { /* the warp's entries [c, ce) */
            const sps_idx ce = p1 - c > SPMV_TILE ? c + SPMV_TILE : p1;
            for (sps_idx p = c + lane; p < ce; p += 32) t[p - c] = __dmul_rn(v[p], x[ci[p]]);
            __syncwarp();
            const sps_idx lo = a > c ? a : c, hi = b < ce ? b : ce;
            for (sps_idx p = lo; p < hi; p++) sum = __dadd_rn(sum, t[p - c]);
            __syncwarp();
        }
        if (i < n) y[i] = sum;
    }
}

__global__ void k_lz_update(sps_idx n, const amg_lzs *s, const double *__restrict__ q,
                            const double *__restrict__ dinv, double *__restrict__ r, double *__restrict__ z)
{
    if (s->stop) return;
    double alpha = s->a;
    GRID_LOOP(i, n) {
        double ri = __dsub_rn(r[i], __dmul_rn(alpha, q[i]));
        r[i] = ri;
        z[i] = __dmul_rn(dinv[i], ri);
    }
}

__global__ void k_lz_dir(sps_idx n, const amg_lzs *s, const double *__restrict__ z, double *__restrict__ p)
{
    if (s->stop) return;
    double beta = s->b;
    GRID_LOOP(i, n) p[i] = __dadd_rn(z[i], __dmul_rn(beta, p[i]));
}

/* lanczos() of amg_setup.c with deterministic device dot products, its
 * scalars in S (device): the same steps, queued without a host read. */
sps_status lanczos(dsetup &D, const dcsr &A, const double *dinv, double *w, amg_lzs *S)
{
    sps_idx n = A.nr;
    int gr = blocks_for(n), steps = SPS_AMG_LANCZOS < n ? SPS_AMG_LANCZOS : (int)n;
    double *r = w, *z = w + n, *p = w + 2 * (long long)n, *q = w + 3 * (long long)n;
    k_lz_init<<<gr, TB, 0, D.s>>>(n, dinv, r, z, p);
    SPS_LAUNCH_CHECK(D.ctx, "k_lz_init");
    sps_status st = reduce(D, 0, n, r, z, &S->rzn);
    if (st != SPS_OK) return st;
    lz_start<<<1, 1, 0, D.s>>>(S);
    SPS_LAUNCH_CHECK(D.ctx, "lz_start");
    for (int k = 0; k < steps; k++) {
        k_spmv<<<gr, TB, 0, D.s>>>(n, A.rp, A.ci, A.v, p, q, S);
        SPS_LAUNCH_CHECK(D.ctx, "k_spmv");
        if ((st = reduce(D, 0, n, p, q, &S->pq)) != SPS_OK) return st;
        lz_alpha<<<1, 1, 0, D.s>>>(S);
        SPS_LAUNCH_CHECK(D.ctx, "lz_alpha");
        k_lz_update<<<gr, TB, 0, D.s>>>(n, S, q, dinv, r, z);
        SPS_LAUNCH_CHECK(D.ctx, "k_lz_update");
        if ((st = reduce(D, 0, n, r, z, &S->rzn)) != SPS_OK) return st;
        lz_beta<<<1, 1, 0, D.s>>>(S);
        SPS_LAUNCH_CHECK(D.ctx, "lz_beta");
        k_lz_dir<<<gr, TB, 0, D.s>>>(n, S, z, p);
        SPS_LAUNCH_CHECK(D.ctx, "k_lz_dir");
    }
    return SPS_OK;
}

/* ---- sparse products ------------------------------------------------------------ */

/* S = I - omega D^-1 A on A's pattern (smoothing_matrix) */
__global__ void k_smoother_matrix(sps_idx n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                                  const double *__restrict__ v, const double *__restrict__ dinv,
                                  double omega, double *__restrict__ sv)
{
    GRID_LOOP(i, n) {
        double f = __dmul_rn(omega, dinv[i]);
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++)
            sv[p] = __dsub_rn(ci[p] == i ? 1.0 : 0.0, __dmul_rn(f, v[p]));
    }
}

/* ub[i] = sum of the lengths of Y's rows that X's row i touches (ub NULL:
 * not written; the re-setup wants only the long rows); with lf,
 * lf[i] = whether the row is long (bound above lmin), and the long rows
 * listed in lrow (in any order: each is one block's) with *nlong their count. */
__global__ void k_sg_bound(sps_idx n, const sps_idx *__restrict__ xrp, const sps_idx *__restrict__ xci,
                           const sps_idx *__restrict__ yrp, long long *__restrict__ ub, long long lmin,
                           unsigned char *__restrict__ lf, sps_idx *__restrict__ lrow,
                           unsigned long long *__restrict__ nlong)
{
    GRID_LOOP(i, n) {
        long long c = 0;
        for (sps_idx p = xrp[i]; p < xrp[i + 1]; p++) c += yrp[xci[p] + 1] - yrp[xci[p]];
        if (ub) ub[i] = c;
        if (lf) {
            const bool l = c > lmin;
            lf[i] = l;
            if (l) lrow[atomicAdd(nlong, 1ull)] = (sps_idx)i;
        }
    }
}

/* Row i of X Y into its hash slice [off[i], off[i+1]) (columns -1 on
 * entry): the terms of an entry in X's row order, then Y's, the first one
 * stored and the others added (fill_row's sums); cnt[i] = distinct columns. */
__global__ void k_sg_hash(sps_idx n, const sps_idx *__restrict__ xrp, const sps_idx *__restrict__ xci,
                          const double *__restrict__ xv, const sps_idx *__restrict__ yrp,
                          const sps_idx *__restrict__ yci, const double *__restrict__ yv,
                          const long long *__restrict__ off, sps_idx *__restrict__ hc,
                          double *__restrict__ hv, long long *__restrict__ cnt, int only)
{
    GRID_LOOP(i, n) {
        long long base = off[i], size = off[i + 1] - base, c = 0;
        if (only && size == 0) continue; /* only the rows with a slice */
        for (sps_idx p = xrp[i]; p < xrp[i + 1]; p++) {
            sps_idx k = xci[p];
            double x = xv[p];
            for (sps_idx q = yrp[k]; q < yrp[k + 1]; q++) {
                sps_idx j = yci[q];
                double t = __dmul_rn(x, yv[q]);
                /* grp_hash's multiplicative hash scaled to the slice (no 64-bit modulo) */
                long long h = (long long)(((unsigned long long)((unsigned)j * 0x9e3779b1u) * (unsigned long long)size) >> 32);
                while (hc[base + h] != -1 && hc[base + h] != j) h = h + 1 == size ? 0 : h + 1;
                if (hc[base + h] == -1) {
                    hc[base + h] = j;
                    hv[base + h] = t;
                    c++;
                } else {
                    hv[base + h] = __dadd_rn(hv[base + h], t);
                }
            }
        }
        cnt[i] = c;
    }
}

/* C's row i: the slice's entries, sorted by column (insertion sort). */
__global__ void k_sg_gather(sps_idx n, const long long *__restrict__ off, const sps_idx *__restrict__ hc,
                            const double *__restrict__ hv, const long long *__restrict__ crp64,
                            sps_idx *__restrict__ crp, sps_idx *__restrict__ cci, double *__restrict__ cv)
{
    GRID_LOOP(i, n) {
        long long w0 = crp64[i], w = w0;
        for (long long s = off[i]; s < off[i + 1]; s++) {
            sps_idx j = hc[s];
            if (j < 0) continue;
            double x = hv[s];
            long long t = w++;
            while (t > w0 && cci[t - 1] > j) {
                cci[t] = cci[t - 1];
                cv[t] = cv[t - 1];
                t--;
            }
            cci[t] = j;
            cv[t] = x;
        }
        crp[i] = (sps_idx)w0;
        if (i == n - 1) crp[n] = (sps_idx)crp64[n]; /* w, unless the group kernels wrote the row */
    }
}

/* ---- products by groups of lanes --------------------------------------------- */

/* A group of G lanes (4, 8, 16 or 32, within a warp) computes a row of
 * C = X Y: X's row in order, and for each of its entries the G lanes take
 * Y's row k in slices of G entries, each lane one entry (x y_kj into column
 * j), then the group synchronizes. Y's row has each column once, so within
 * a step no two lanes touch the same column, and across steps a column's
 * terms arrive in X's row order: every entry of C is summed in the host's
 * order (fill_row: the first term stored, the next ones added, X's row
 * then Y's), whichever lane takes which term. The row's columns are keys of
 * a hash table in shared memory, 12 G slots a row (blocks of GTB threads,
 * GTB / G rows a block); a key is claimed by atomicCAS, so
 * where a column lands depends on the lanes' timing, but its value does
 * not, and the row is written sorted by rank (the count of the row's
 * smaller columns, from a list of them): C is bitwise the host's product.
 * A first pass counts each row's columns (C's row pointer, exactly); a row
 * with more than 9 G columns overflows the table: the same group sums it in
 * a slice of global memory sized by its bound (k_grp_hash_global), and
 * k_sg_gather writes it sorted.
 * 16 bytes a slot (key, value, list), 12 a lane: 24 KiB a block of 128. */
const int GTB = TB >= 256 ? 128 : TB; /* threads a block of the group kernels */
const int GRP_SLOTS = 12 * GTB;       /* hash slots a block */

__device__ unsigned grp_mask(int G)
{
    unsigned lane = threadIdx.x & 31;
    return G == 32 ? 0xffffffffu : ((1u << G) - 1) << (lane / G * G);
}

/* j's first slot in [0, hs) (a multiplicative hash scaled to hs: no modulo) */
/* A row's table (keys hk, -1 free; values hv; hs slots) out to C, in two
 * halves the caller's threads run (this one me of stride st), a barrier of
 * the caller's between them: the columns into list (any order, *nm counting
 * from 0), then each entry at its rank among them, from w0 on. The group
 * kernels' and the long rows' one output. */
__device__ void table_list(const volatile sps_idx *hk, int hs, int me, int st, volatile sps_idx *list, int *nm)
{
    for (int s = me; s < hs; s += st)
        if (hk[s] != -1) list[atomicAdd(nm, 1)] = hk[s];
}

__device__ void table_place(const volatile sps_idx *hk, const volatile double *hv, int hs, int me, int st,
                            const volatile sps_idx *list, int m, long long w0, sps_idx *__restrict__ cci,
                            double *__restrict__ cv)
{
    for (int s = me; s < hs; s += st) {
        const sps_idx j = hk[s];
        if (j == -1) continue;
        int r = 0;
        for (int t = 0; t < m; t++) r += list[t] < j;
        cci[w0 + r] = j;
        cv[w0 + r] = hv[s];
    }
}

__device__ int grp_hash(sps_idx j, int hs)
{
    return (int)(((unsigned long long)((unsigned)j * 0x9e3779b1u) * (unsigned)hs) >> 32);
}

/* j's slot in a table of size keys (-1: free), by open addressing from
 * grp_hash: the slot holding j, or a free one claimed for j by atomicCAS
 * (*added = 1). The three group kernels' one insertion. */
template <typename I> __device__ I grp_slot(volatile sps_idx *hk, I size, sps_idx j, int *added)
{
    *added = 0;
    for (I h = grp_hash(j, (int)(size < 0x7fffffff ? size : 0x7fffffff));; h = h + 1 == size ? 0 : h + 1) {
        sps_idx c = hk[h];
        if (c == j) return h;
        if (c != -1) continue;
        c = atomicCAS((sps_idx *)&hk[h], -1, j);
        if (c == -1) {
            *added = 1;
            return h;
        }
        if (c == j) return h; /* a group's step: cannot happen (j is one lane's alone);
                                 a long row's step: j from two rows of Y */
    }
}


/* A group's walk over the terms of row i of X Y in the host's order: X's
 * row G entries at a time (their rows of Y staged in sq0, sq1 and their
 * values in sx, the group's slices of the block's arrays), each entry's row
 * of Y in slices of G, lane l taking position q0 + l of Y: term(q, x), x
 * the entry of X; the group synchronized after each slice, so a column's
 * terms arrive in X's row order. k_grp_numeric's and k_grp_into's loop. */
template <class F>
__device__ void grp_terms(long long i, int G, int g, int lane, unsigned mask, const sps_idx *__restrict__ xrp,
                          const sps_idx *__restrict__ xci, const double *__restrict__ xv,
                          const sps_idx *__restrict__ yrp, sps_idx *sq0, sps_idx *sq1, double *sx, F term)
{
    const sps_idx pe = xrp[i + 1];
    for (sps_idx pb = xrp[i]; pb < pe; pb += G) { /* G entries of X staged at once */
        const int ne = pe - pb < G ? (int)(pe - pb) : G;
        if (lane < ne) {
            const sps_idx k = xci[pb + lane];
            sq0[threadIdx.x] = yrp[k];
            sq1[threadIdx.x] = yrp[k + 1];
            sx[threadIdx.x] = xv[pb + lane];
        }
        __syncwarp(mask);
        for (int e = g * G; e < g * G + ne; e++) { /* in X's order */
            const sps_idx q1 = sq1[e];
            const double x = sx[e];
            for (sps_idx q0 = sq0[e]; q0 < q1; q0 += G) {
                if (q0 + lane < q1) term(q0 + lane, x);
                __syncwarp(mask);
            }
        }
        __syncwarp(mask); /* the stage read before the next is written */
    }
}

/* cnt[i] = row i's columns, and ub[i] = 0; a row of more than 9 G columns
 * keeps its bound in ub (the fallback's slice) and cnt[i] = 0. */
__global__ void k_grp_count(sps_idx n, int G, const sps_idx *__restrict__ xrp, const sps_idx *__restrict__ xci,
                            const sps_idx *__restrict__ yrp, const sps_idx *__restrict__ yci,
                            long long *__restrict__ cnt, long long *__restrict__ ub,
                            const unsigned char *__restrict__ lf)
{
    __shared__ sps_idx keys[GRP_SLOTS];
    __shared__ sps_idx sq0[GTB], sq1[GTB]; /* the group's next G entries of X: their rows of Y */
    __shared__ int num[GTB / 4];
    const int gpb = GTB / G, hs = 12 * G, cap = 9 * G, g = threadIdx.x / G, lane = threadIdx.x % G;
    volatile sps_idx *hk = keys + g * hs;
    volatile int *nm = num + g;
    const unsigned mask = grp_mask(G);
    for (long long i = (long long)blockIdx.x * gpb + g; i < n; i += (long long)gridDim.x * gpb) {
        if (lf && lf[i]) continue; /* a long row (k_long_count; the whole group skips it) */
        for (int s = lane; s < hs; s += G) hk[s] = -1;
        if (lane == 0) *nm = 0;
        __syncwarp(mask);
        int over = 0;
        const sps_idx pe = xrp[i + 1];
        for (sps_idx pb = xrp[i]; pb < pe && !over; pb += G) { /* G entries of X staged at once */
            const int ne = pe - pb < G ? (int)(pe - pb) : G;
            if (lane < ne) {
                const sps_idx k = xci[pb + lane];
                sq0[threadIdx.x] = yrp[k];
                sq1[threadIdx.x] = yrp[k + 1];
            }
            __syncwarp(mask);
            for (int e = g * G; e < g * G + ne && !over; e++) { /* in X's order */
                const sps_idx q1 = sq1[e];
                for (sps_idx q0 = sq0[e]; q0 < q1 && !over; q0 += G) {
                    if (q0 + lane < q1) {
                        int added;
                        grp_slot(hk, hs, yci[q0 + lane], &added);
                        if (added) atomicAdd((int *)nm, 1);
                    }
                    __syncwarp(mask);
                    over = *nm > cap; /* the same for the whole group: at most 10 G keys, a free slot left */
                    __syncwarp(mask);
                }
            }
            __syncwarp(mask); /* the stage read before the next is written */
        }
        if (lane == 0) {
            cnt[i] = over ? 0 : *nm;
            if (!over) ub[i] = 0;
        }
        __syncwarp(mask);
    }
}

/* The rows k_grp_count did not send to the fallback (an empty slice in
 * off): summed in the host's order, written sorted at crp[i]. */
__global__ void k_grp_numeric(sps_idx n, int G, const sps_idx *__restrict__ xrp, const sps_idx *__restrict__ xci,
                              const double *__restrict__ xv, const sps_idx *__restrict__ yrp,
                              const sps_idx *__restrict__ yci, const double *__restrict__ yv,
                              const long long *__restrict__ off, const long long *__restrict__ crp,
                              sps_idx *__restrict__ cci, double *__restrict__ cv,
                              const unsigned char *__restrict__ lf)
{
    __shared__ sps_idx keys[GRP_SLOTS];
    __shared__ double vals[GRP_SLOTS];
    __shared__ sps_idx list[GRP_SLOTS];
    __shared__ sps_idx sq0[GTB], sq1[GTB]; /* the group's next G entries of X: their rows of Y */
    __shared__ double sx[GTB];             /* and their values */
    __shared__ int num[GTB / 4];
    const int gpb = GTB / G, hs = 12 * G, g = threadIdx.x / G, lane = threadIdx.x % G;
    volatile sps_idx *hk = keys + g * hs;
    volatile double *hv = vals + g * hs;
    volatile sps_idx *hl = list + g * hs;
    volatile int *nm = num + g;
    const unsigned mask = grp_mask(G);
    for (long long i = (long long)blockIdx.x * gpb + g; i < n; i += (long long)gridDim.x * gpb) {
        if (off[i + 1] > off[i] || (lf && lf[i])) continue; /* the fallback's or a long row (the whole group skips it) */
        for (int s = lane; s < hs; s += G) hk[s] = -1;
        if (lane == 0) *nm = 0;
        __syncwarp(mask);
        grp_terms(i, G, g, lane, mask, xrp, xci, xv, yrp, sq0, sq1, sx, [&](sps_idx q, double x) {
            const double t = __dmul_rn(x, yv[q]);
            int added;
            const int h = grp_slot(hk, hs, yci[q], &added);
            hv[h] = added ? t : __dadd_rn(hv[h], t);
        });
        table_list(hk, hs, lane, G, hl, (int *)nm);
        __syncwarp(mask);
        table_place(hk, hv, hs, lane, G, hl, *nm, crp[i], cci, cv);
        __syncwarp(mask);
    }
}

/* A row that overflowed its shared table (k_grp_count): the same group
 * sums, in a slice of global memory [off[i], off[i+1]) sized by the row's
 * bound (columns -1 on entry), read by k_sg_gather after; cnt[i] = the
 * row's columns. The long rows of a coarse level's R (A P) are these (up to
 * 10^5 terms a row on poisson3d-jump), which one thread would sum alone. */
__global__ void k_grp_hash_global(sps_idx n, int G, const sps_idx *__restrict__ xrp, const sps_idx *__restrict__ xci,
                                  const double *__restrict__ xv, const sps_idx *__restrict__ yrp,
                                  const sps_idx *__restrict__ yci, const double *__restrict__ yv,
                                  const long long *__restrict__ off, sps_idx *hc, double *hv,
                                  long long *__restrict__ cnt)
{
    __shared__ int num[GTB / 4];
    const int gpb = GTB / G, g = threadIdx.x / G, lane = threadIdx.x % G;
    volatile int *nm = num + g;
    const unsigned mask = grp_mask(G);
    for (long long i = (long long)blockIdx.x * gpb + g; i < n; i += (long long)gridDim.x * gpb) {
        long long base = off[i], size = off[i + 1] - base;
        if (size == 0) continue; /* a row of k_grp_numeric */
        volatile sps_idx *hk = hc + base;
        volatile double *hw = hv + base;
        if (lane == 0) *nm = 0;
        __syncwarp(mask);
        for (sps_idx p = xrp[i]; p < xrp[i + 1]; p++) {
            sps_idx k = xci[p], q1 = yrp[k + 1];
            double x = xv[p];
            for (sps_idx q0 = yrp[k]; q0 < q1; q0 += G) {
                if (q0 + lane < q1) {
                    sps_idx j = yci[q0 + lane];
                    double t = __dmul_rn(x, yv[q0 + lane]);
                    int added;
                    const long long h = grp_slot(hk, size, j, &added);
                    hw[h] = added ? t : __dadd_rn(hw[h], t);
                    if (added) atomicAdd((int *)nm, 1);
                }
                __threadfence_block();
                __syncwarp(mask);
            }
        }
        if (lane == 0) cnt[i] = *nm;
        __syncwarp(mask);
    }
}

/* ---- long rows: a block a row --------------------------------------------------- */

/* A row of C = X Y whose bound (its terms) is above the long threshold
 * (SPS_AMG_LONG, default LONG_TERMS) takes a block of LTB threads and a hash
 * table of LHS slots in shared memory (the coarse levels' R (A P): up to
 * 10^5 terms a row on poisson3d-jump, which a group of 32 lanes took in
 * steps of one row of Y, and the rows beyond its table in global memory).
 * A step takes the next LTB terms of the row in order (X's entries, each
 * with its row of Y, possibly split between two steps): warp 0 lays the
 * step out (the rows of Y of the next entries in its window of LROWS
 * entries, and a prefix sum of their lengths), each thread takes one term, claims its column's slot
 * (atomicCAS: two rows of Y may bring one column to a step), and then the
 * values are added in rounds, one round per entry of X in the step and in
 * X's order, a barrier between rounds: a column's terms in X's row order,
 * the first stored (a slot's flag), the next ones added: fill_row's sums,
 * as the groups' kernels have them. The row is written sorted by rank. A
 * count pass first (C's row pointer); a row of more than LCAP columns keeps
 * its bound for the global fallback (k_grp_hash_global, k_sg_gather). */
const int LTB = TB;                       /* threads of a long row's block */
const int LHS = TB >= 256 ? 1536 : 12 * TB; /* its slots: 24 KiB with values and flags (8 blocks an SM) */
const int LCAP = LHS * 3 / 4;             /* its columns at most (a step adds LTB at most: a free slot left) */
const int LROWS = 32;                     /* entries of X a step may take (warp 0's lanes) */
const long long LONG_TERMS = 2048;          /* terms a row above which a row is long */

/* The step's layout (shared): the parts of rows of Y it takes. */
struct lstep {
    sps_idx q[LROWS]; /* the part's first position in Y */
    int b[LROWS];     /* the part's first term in the step */
    double x[LROWS];  /* X's entry */
    int sc[32];       /* warp 0's scan */
    int nr, tot;      /* parts, terms */
    sps_idx np, nqo;  /* the next step's entry of X and its offset in that row of Y */
};

/* Warp 0's window on X's row (registers: lane t holds entry base + t):
 * its row of Y (first position, length) and its value; loaded again once
 * the steps have gone LROWS / 2 entries past base, so most steps find
 * their rows of Y without a load. */
struct lwin {
    sps_idx base = -1, q = 0;
    int len = 0;
    double x = 0.0;
};

/* Warp 0: the step from entry p0 of X (its row of Y from offset qo), over
 * the window's entries from p0 on; the others wait at the caller's barrier. */
__device__ void long_layout(lstep &L, lwin &w, sps_idx p0, sps_idx qo, sps_idx pend, const sps_idx *__restrict__ xci,
                            const double *__restrict__ xv, const sps_idx *__restrict__ yrp)
{
    const int t = threadIdx.x;
    if (t >= 32) return;
    if (w.base < 0 || p0 - w.base >= LROWS / 2) { /* the window from p0 */
        w.base = p0;
        w.q = 0;
        w.len = 0;
        w.x = 0.0;
        if (p0 + t < pend) {
            const sps_idx k = xci[p0 + t];
            w.q = yrp[k];
            w.len = yrp[k + 1] - w.q;
            if (xv) w.x = xv[p0 + t];
        }
    }
    const int d = (int)(p0 - w.base); /* lanes below d: entries done */
    const sps_idx p = w.base + t;
    sps_idx q0 = w.q;
    int len = t < d ? 0 : w.len;
    if (t == d) {
        q0 += qo;
        len -= qo;
    }
    volatile int *sc = L.sc;
    sc[t] = len;
    __syncwarp();
    for (int d = 1; d < 32; d <<= 1) {
        const int y = t >= d ? sc[t - d] : 0;
        __syncwarp();
        sc[t] = sc[t] + y;
        __syncwarp();
    }
    const int inc = sc[t], beg = inc - len;
    const bool in = t >= d && p < pend && beg < LTB;
    if (t >= d) { /* part t - d */
        L.q[t - d] = q0;
        L.b[t - d] = beg;
        L.x[t - d] = w.x;
    }
    if (in && (t == 31 || p + 1 >= pend || inc >= LTB)) { /* the step's last part */
        L.nr = t - d + 1;
        L.tot = inc < LTB ? inc : LTB;
        if (inc <= LTB) {
            L.np = p + 1;
            L.nqo = 0;
        } else { /* the row of Y goes on in the next step */
            L.np = p;
            L.nqo = (t == d ? qo : 0) + (LTB - beg);
        }
    }
}

/* The part of the step that term t (< L.tot) belongs to: the last part
 * starting at or before t. */
__device__ int long_part(const lstep &L, int t)
{
    int lo = 0, hi = L.nr - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (L.b[mid] <= t) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* cnt[i] = long row i's columns and ub[i] = 0, or (more than LCAP
 * columns) cnt[i] = 0 and ub[i] kept: the fallback's slice. */
__global__ void k_long_count(const sps_idx *__restrict__ lrow, const sps_idx *__restrict__ xrp,
                             const sps_idx *__restrict__ xci, const sps_idx *__restrict__ yrp,
                             const sps_idx *__restrict__ yci, long long *__restrict__ cnt,
                             long long *__restrict__ ub)
{
    __shared__ sps_idx keys[LHS];
    __shared__ lstep L;
    __shared__ int num;
    const int t = threadIdx.x;
    const sps_idx i = lrow[blockIdx.x], pend = xrp[i + 1];
    volatile sps_idx *hk = keys;
    for (int s = t; s < LHS; s += LTB) hk[s] = -1;
    if (t == 0) num = 0;
    sps_idx p0 = xrp[i], qo = 0;
    bool over = false;
    lwin w;
    __syncthreads();
    while (p0 < pend && !over) {
        long_layout(L, w, p0, qo, pend, xci, nullptr, yrp);
        __syncthreads();
        p0 = L.np;
        qo = L.nqo;
        if (t < L.tot) {
            const int r = long_part(L, t);
            int added;
            grp_slot(hk, LHS, yci[L.q[r] + (t - L.b[r])], &added);
            if (added) atomicAdd(&num, 1);
        }
        __syncthreads();
        over = *(volatile int *)&num > LCAP; /* the same for the block */
    }
    if (t == 0) {
        cnt[i] = over ? 0 : num;
        if (!over) ub[i] = 0;
    }
}

/* A block's walk over long row i's terms in the host's order (long_layout's
 * steps of LTB terms): each term's slot from find(column) (negative:
 * dropped), then the step's values added in rounds, one a part (an entry
 * of X) in X's order, a barrier between rounds: add(slot, value). Every
 * thread of the block calls it (it synchronizes). k_long_numeric's and
 * k_long_into's loop. */
template <class Find, class Add>
__device__ void long_terms(lstep &L, sps_idx i, const sps_idx *__restrict__ xrp, const sps_idx *__restrict__ xci,
                           const double *__restrict__ xv, const sps_idx *__restrict__ yrp,
                           const sps_idx *__restrict__ yci, const double *__restrict__ yv, Find find, Add add)
{
    const int t = threadIdx.x;
    const sps_idx pend = xrp[i + 1];
    sps_idx p0 = xrp[i], qo = 0;
    lwin w;
    while (p0 < pend) {
        long_layout(L, w, p0, qo, pend, xci, xv, yrp);
        __syncthreads();
        p0 = L.np;
        qo = L.nqo;
        const int nr = L.nr;
        int r = -1;
        sps_idx h = -1;
        double v = 0.0;
        if (t < L.tot) {
            r = long_part(L, t);
            const sps_idx q = L.q[r] + (t - L.b[r]);
            v = __dmul_rn(L.x[r], yv[q]);
            h = find(yci[q]);
        }
        for (int rr = 0; rr < nr; rr++) { /* X's order: part rr's terms, one a column */
            __syncthreads();
            if (r == rr && h >= 0) add(h, v);
        }
        __syncthreads();
    }
}

/* The long rows k_long_count kept (an empty slice in off): summed in the
 * host's order, written sorted at crp[i]. */
__global__ void k_long_numeric(const sps_idx *__restrict__ lrow, const sps_idx *__restrict__ xrp,
                               const sps_idx *__restrict__ xci, const double *__restrict__ xv,
                               const sps_idx *__restrict__ yrp, const sps_idx *__restrict__ yci,
                               const double *__restrict__ yv, const long long *__restrict__ off,
                               const long long *__restrict__ crp, sps_idx *__restrict__ cci,
                               double *__restrict__ cv)
{
    __shared__ sps_idx keys[LHS];
    __shared__ double vals[LHS];
    __shared__ sps_idx flag[LHS]; /* 1 once the slot has a value; then the row's columns */
    __shared__ lstep L;
    __shared__ int num;
    const int t = threadIdx.x;
    const sps_idx i = lrow[blockIdx.x];
    if (off[i + 1] > off[i]) return; /* the fallback's row (the whole block) */
    volatile sps_idx *hk = keys;
    for (int s = t; s < LHS; s += LTB) {
        hk[s] = -1;
        flag[s] = 0;
    }
    if (t == 0) num = 0;
    __syncthreads();
    long_terms(
        L, i, xrp, xci, xv, yrp, yci, yv,
        [&](sps_idx j) {
            int added;
            return (sps_idx)grp_slot(hk, LHS, j, &added);
        },
        [&](sps_idx h, double v) {
            vals[h] = flag[h] ? __dadd_rn(vals[h], v) : v;
            flag[h] = 1;
        });
    /* the row's columns into a list (flag, any order), then each entry at its rank */
    table_list(hk, LHS, t, LTB, flag, &num);
    __syncthreads();
    table_place(hk, vals, LHS, t, LTB, flag, num, crp[i], cci, cv);
}

/* ---- products into a kept pattern (the numeric re-setup) ------------------------ */

/* The numeric re-setup's products: C = X Y into C's pattern (a product the
 * full setup made of the same patterns), with the full setup's sums (each
 * entry's terms in X's row order, then Y's) and none of its counting or
 * hashing: a term finds its entry by a binary search of C's sorted row. A
 * row's values start at -0.0, the sum's identity (-0.0 + t is t, bitwise,
 * for every t, +0.0 included), so the first term's sum is the term itself
 * and C equals the full setup's product bitwise, zeros' signs included. A
 * term whose column is not in C's row (a pattern that changed) sets *bad
 * and is dropped. The same three shapes as the full product: one thread a
 * row, a group of G lanes a row (Y's row in slices of G, one column a
 * lane), a block a long row (long_layout's steps, the values added in
 * rounds in X's order). */

/* j's position in cci[c0, c1) (sorted), or -1. */
__device__ sps_idx into_find(const sps_idx *__restrict__ cci, sps_idx c0, sps_idx c1, sps_idx j)
{
    sps_idx lo = c0, hi = c1;
    while (lo < hi) {
        const sps_idx m = lo + ((hi - lo) >> 1);
        if (cci[m] < j) lo = m + 1;
        else hi = m;
    }
    return lo < c1 && cci[lo] == j ? lo : -1;
}

/* into_find, and *bad set when j is not there (-1) */
__device__ sps_idx into_slot(const sps_idx *__restrict__ cci, sps_idx c0, sps_idx c1, sps_idx j, unsigned *bad)
{
    const sps_idx s = into_find(cci, c0, c1, j);
    if (s < 0) atomicOr(bad, 1u);
    return s;
}

/* term t into C's row [c0, c1): its entry's value plus t, or *bad */
__device__ void into_add(const sps_idx *__restrict__ cci, volatile double *cv, sps_idx c0, sps_idx c1,
                         sps_idx j, double t, unsigned *bad)
{
    const sps_idx s = into_slot(cci, c0, c1, j, bad);
    if (s >= 0) cv[s] = __dadd_rn(cv[s], t);
}

/* one thread a row */
__global__ void k_into_row(sps_idx n, const sps_idx *__restrict__ xrp, const sps_idx *__restrict__ xci,
                           const double *__restrict__ xv, const sps_idx *__restrict__ yrp,
                           const sps_idx *__restrict__ yci, const double *__restrict__ yv,
                           const sps_idx *__restrict__ crp, const sps_idx *__restrict__ cci, double *cv,
                           unsigned *bad)
{
    GRID_LOOP(i, n) {
        const sps_idx c0 = crp[i], c1 = crp[i + 1];
        for (sps_idx s = c0; s < c1; s++) cv[s] = -0.0;
        for (sps_idx p = xrp[i]; p < xrp[i + 1]; p++) {
            const sps_idx k = xci[p];
            const double x = xv[p];
            for (sps_idx q = yrp[k]; q < yrp[k + 1]; q++) into_add(cci, cv, c0, c1, yci[q], __dmul_rn(x, yv[q]), bad);
        }
    }
}

/* a group of G lanes a row (the long rows, lf, are k_long_into's) */
__global__ void k_grp_into(sps_idx n, int G, const sps_idx *__restrict__ xrp, const sps_idx *__restrict__ xci,
                           const double *__restrict__ xv, const sps_idx *__restrict__ yrp,
                           const sps_idx *__restrict__ yci, const double *__restrict__ yv,
                           const sps_idx *__restrict__ crp, const sps_idx *__restrict__ cci, double *cv,
                           const unsigned char *__restrict__ lf, unsigned *bad)
{
    __shared__ sps_idx sq0[GTB], sq1[GTB]; /* the group's next G entries of X: their rows of Y */
    __shared__ double sx[GTB];             /* and their values */
    const int gpb = GTB / G, g = threadIdx.x / G, lane = threadIdx.x % G;
    const unsigned mask = grp_mask(G);
    volatile double *w = cv;
    for (long long i = (long long)blockIdx.x * gpb + g; i < n; i += (long long)gridDim.x * gpb) {
        if (lf && lf[i]) continue; /* the whole group skips it */
        const sps_idx c0 = crp[i], c1 = crp[i + 1];
        for (sps_idx s = c0 + lane; s < c1; s += G) w[s] = -0.0;
        __syncwarp(mask);
        grp_terms(i, G, g, lane, mask, xrp, xci, xv, yrp, sq0, sq1, sx,
                  [&](sps_idx q, double x) { into_add(cci, w, c0, c1, yci[q], __dmul_rn(x, yv[q]), bad); });
    }
}

/* a block a long row: the rows lrow[0, *nlong), block b taking b, b +
 * gridDim.x, ... (the count stays on the device: no read before the launch) */
__global__ void k_long_into(const sps_idx *__restrict__ lrow, const unsigned long long *nlong,
                            const sps_idx *__restrict__ xrp, const sps_idx *__restrict__ xci,
                            const double *__restrict__ xv, const sps_idx *__restrict__ yrp,
                            const sps_idx *__restrict__ yci, const double *__restrict__ yv,
                            const sps_idx *__restrict__ crp, const sps_idx *__restrict__ cci, double *cv,
                            unsigned *bad)
{
    __shared__ lstep L;
    const int t = threadIdx.x;
    const long long nl = (long long)*nlong;
    volatile double *w = cv;
    for (long long b = blockIdx.x; b < nl; b += gridDim.x) {
        const sps_idx i = lrow[b], c0 = crp[i], c1 = crp[i + 1];
        for (sps_idx s = c0 + t; s < c1; s += LTB) w[s] = -0.0;
        __syncthreads();
        long_terms(
            L, i, xrp, xci, xv, yrp, yci, yv,
            [&](sps_idx j) { return into_slot(cci, c0, c1, j, bad); },
            [&](sps_idx s, double v) { w[s] = __dadd_rn(w[s], v); });
    }
}

/* R's values = P' in R's pattern (P's transpose), a thread an entry (a
 * thread a row of R waited on its searches: 3.4 ms a re-setup of
 * poisson3d:160 on an H200): entry q is (c, r), c its row (the last row
 * starting at or before q), and equals entry (r, c) of P, found in P's row
 * r; copied, bitwise. */
__global__ void k_transpose_into(sps_idx nr, sps_idx nnz, const sps_idx *__restrict__ rrp,
                                 const sps_idx *__restrict__ rci, const sps_idx *__restrict__ prp,
                                 const sps_idx *__restrict__ pci, const double *__restrict__ pv,
                                 double *__restrict__ rv, unsigned *bad)
{
    GRID_LOOP(q, nnz) {
        sps_idx lo = 0, hi = nr; /* rrp[lo] <= q < rrp[hi] */
        while (hi - lo > 1) {
            const sps_idx m = lo + ((hi - lo) >> 1);
            if (rrp[m] <= q) lo = m;
            else hi = m;
        }
        const sps_idx r = rci[q], s = into_slot(pci, prp[r], prp[r + 1], lo, bad);
        rv[q] = s < 0 ? 0.0 : pv[s];
    }
}

/* Lanes a row: Y's mean row length (a step of the group takes one row of
 * Y), at least 4; 0 for one thread a row where Y has about one entry a row
 * (P_tent) or C's rows are short (a global slice costs little). */
int group_lanes(const dcsr &Y, double mean_bound)
{
    /* SPS_AMG_LANES=0|4|8|16|32 forces one choice for every product (the
     * tests and the emulation: small tables make rows overflow) */
    const char *force = getenv("SPS_AMG_LANES");
    if (force && *force) {
        int f = atoi(force);
        if (f == 0 || f == 4 || f == 8 || f == 16 || f == 32) return f;
    }
    double my = Y.nr ? (double)Y.nnz / Y.nr : 0.0;
    if (mean_bound <= 16 || my < 2) return 0;
    int G = 4;
    while (G < 32 && G < my) G *= 2;
    return G;
}

/* The long rows' threshold: rows of more than this many terms take a
 * block (k_long_count, k_long_numeric) when the product takes groups;
 * SPS_AMG_LONG=N sets it (the tests and the emulation: 1 makes every row
 * long), SPS_AMG_LONG=0 turns the long rows off (the groups take them). */
long long long_min()
{
    const char *e = getenv("SPS_AMG_LONG");
    if (e && *e) {
        long long v = atoll(e);
        return v > 0 ? v : 0;
    }
    return LONG_TERMS;
}

int grp_blocks(long long n, int G)
{
    long long b = (n + GTB / G - 1) / (GTB / G);
    if (b > 65535LL * 32) b = 65535LL * 32;
    return b < 1 ? 1 : (int)b;
}

/* C = X Y (rows sorted), the host's sums: groups of lanes a row, the rows
 * that overflow their table (and short products) one thread a row. keep:
 * 1, C is the hierarchy's (dalloc); 2, its pattern is (dalloc) and its
 * values a temporary (talloc); 0, all temporaries. */
sps_status spgemm(dsetup &D, const dcsr &X, const dcsr &Y, dcsr &C, int keep, const char *what)
{
    steps sp(D, what);
    sp.mark("bound");
    sps_idx n = X.nr;
    int gr = blocks_for(n), G = 0;
    long long *ub = nullptr, *off = nullptr, *cnt = nullptr, *crp = nullptr, total = 0, nnz = 0, nlong = 0;
    long long two[2] = {0, 0}, lmin = long_min();
    sps_idx *hc = nullptr, *lrow = nullptr;
    unsigned char *lf = nullptr;
    double *hv = nullptr;
    sps_status st = talloc(D, &ub, n);
    if (st == SPS_OK) st = talloc(D, &off, (long long)n + 2); /* off[n + 1]: the long rows' count */
    if (st == SPS_OK) st = talloc(D, &cnt, n);
    if (st == SPS_OK) st = talloc(D, &crp, (long long)n + 1);
    if (st == SPS_OK && lmin > 0) st = talloc(D, &lf, n);
    if (st == SPS_OK && lmin > 0) st = talloc(D, &lrow, n);
    if (st == SPS_OK) st = sps__dmemset(D.ctx, off + n + 1, 0, sizeof *off);
    if (st == SPS_OK) {
        k_sg_bound<<<gr, TB, 0, D.s>>>(n, X.rp, X.ci, Y.rp, ub, lmin, lf, lrow, (unsigned long long *)(off + n + 1));
        LAUNCHED(D.ctx, st, "k_sg_bound");
        if (st == SPS_OK) st = scan(D, ub, off, n);
    }
    sp.mark("read1");
    if (st == SPS_OK) st = sps__d2h(D.ctx, two, off + n, sizeof two); /* the bounds' total, the long rows */
    total = two[0];
    if (st == SPS_OK) G = group_lanes(Y, n ? (double)total / n : 0.0);
    nlong = G > 0 ? two[1] : 0; /* one thread a row: no long rows */
    int grg = G > 0 ? grp_blocks(n, G) : 1;
    if (st == SPS_OK && G > 0) { /* counts; the bound stays only on the rows that overflow */
        sp.mark("count");
        k_grp_count<<<grg, GTB, 0, D.s>>>(n, G, X.rp, X.ci, Y.rp, Y.ci, cnt, ub, lf);
        LAUNCHED(D.ctx, st, "k_grp_count");
        if (st == SPS_OK && nlong > 0) {
            k_long_count<<<(int)nlong, LTB, 0, D.s>>>(lrow, X.rp, X.ci, Y.rp, Y.ci, cnt, ub);
            LAUNCHED(D.ctx, st, "k_long_count");
        }
        if (st == SPS_OK) st = scan(D, ub, off, n);
        sp.mark("read2");
        if (st == SPS_OK) st = sps__d2h(D.ctx, &total, off + n, sizeof total);
    }
    sp.mark("hash");
    if (st == SPS_OK) st = talloc(D, &hc, total);
    if (st == SPS_OK) st = talloc(D, &hv, total);
    if (st == SPS_OK && total > 0) st = sps__dmemset(D.ctx, hc, 0xff, (size_t)total * sizeof *hc);
    if (st == SPS_OK && G == 0) {
        k_sg_hash<<<gr, TB, 0, D.s>>>(n, X.rp, X.ci, X.v, Y.rp, Y.ci, Y.v, off, hc, hv, cnt, 0);
        LAUNCHED(D.ctx, st, "k_sg_hash");
    }
    if (st == SPS_OK && G > 0 && total > 0) { /* the rows that overflowed: the groups in global slices */
        k_grp_hash_global<<<grg, GTB, 0, D.s>>>(n, G, X.rp, X.ci, X.v, Y.rp, Y.ci, Y.v, off, hc, hv, cnt);
        LAUNCHED(D.ctx, st, "k_grp_hash_global");
    }
    sp.mark("scan");
    if (st == SPS_OK) st = scan(D, cnt, crp, n);
    sp.mark("read3");
    if (st == SPS_OK) st = sps__d2h(D.ctx, &nnz, crp + n, sizeof nnz);
    sp.mark("numeric");
    if (st == SPS_OK && nnz > SPS_IDX_MAX)
        st = sps__err(D.ctx, SPS_ERR_UNSUPPORTED,
                      "amg: a product has more entries than the 32-bit index limit %d", SPS_IDX_MAX);
    if (st == SPS_OK)
        st = keep ? dcsr_alloc(D.ctx, C, n, Y.nc, (sps_idx)nnz, keep == 1) : dcsr_talloc(D, C, n, Y.nc, (sps_idx)nnz, 1);
    if (st == SPS_OK && keep == 2) st = talloc(D, &C.v, nnz);
    if (st == SPS_OK && n == 0) st = sps__dmemset(D.ctx, C.rp, 0, sizeof *C.rp);
    if (st == SPS_OK && n > 0 && G > 0) {
        k_grp_numeric<<<grg, GTB, 0, D.s>>>(n, G, X.rp, X.ci, X.v, Y.rp, Y.ci, Y.v, off, crp, C.ci, C.v, lf);
        LAUNCHED(D.ctx, st, "k_grp_numeric");
        if (st == SPS_OK && nlong > 0) {
            k_long_numeric<<<(int)nlong, LTB, 0, D.s>>>(lrow, X.rp, X.ci, X.v, Y.rp, Y.ci, Y.v, off, crp, C.ci, C.v);
            LAUNCHED(D.ctx, st, "k_long_numeric");
        }
    }
    if (st == SPS_OK && n > 0) { /* C's row pointer; the fallback rows' entries */
        sp.mark("gather");
        k_sg_gather<<<gr, TB, 0, D.s>>>(n, off, hc, hv, crp, C.rp, C.ci, C.v);
        LAUNCHED(D.ctx, st, "k_sg_gather");
    }
    tfree(D, ub);
    tfree(D, off);
    tfree(D, cnt);
    tfree(D, crp);
    tfree(D, hc);
    tfree(D, hv);
    tfree(D, lf);
    tfree(D, lrow);
    return st;
}

/* ---- transpose ------------------------------------------------------------------ */

__global__ void k_entries(sps_idx n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                          sps_idx *__restrict__ row, unsigned *__restrict__ key, sps_idx *__restrict__ idx)
{
    GRID_LOOP(i, n)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) {
            row[p] = (sps_idx)i;
            key[p] = (unsigned)ci[p];
            idx[p] = p;
        }
}

/* T's row pointer from the sorted columns: rp[c] = first entry of column c. */
__global__ void k_col_start(sps_idx nnz, sps_idx ncols, const unsigned *__restrict__ key,
                            sps_idx *__restrict__ rp)
{
    GRID_LOOP(q, nnz) {
        unsigned prev = q ? key[q - 1] + 1 : 0u;
        for (unsigned c = prev; c <= key[q]; c++) rp[c] = (sps_idx)q;
        if (q == nnz - 1)
            for (unsigned c = key[q] + 1; c <= (unsigned)ncols; c++) rp[c] = nnz;
    }
}

__global__ void k_gather_t(sps_idx nnz, const sps_idx *__restrict__ idx, const sps_idx *__restrict__ row,
                           const double *__restrict__ v, sps_idx *__restrict__ tci, double *__restrict__ tv)
{
    GRID_LOOP(q, nnz) {
        tci[q] = row[idx[q]];
        tv[q] = v[idx[q]];
    }
}

__global__ void k_fill_int(long long n, sps_idx *__restrict__ x, sps_idx value)
{
    GRID_LOOP(i, n) x[i] = value;
}

/* T = X' (rows sorted: the sort is stable, so T's row c lists X's rows in order). */
sps_status transpose(dsetup &D, const dcsr &X, dcsr &T, const char *what)
{
    steps sp(D, what);
    sp.mark("alloc");
    sps_idx nnz = X.nnz;
    unsigned *k1 = nullptr, *k2 = nullptr;
    sps_idx *row = nullptr, *i1 = nullptr, *i2 = nullptr;
    sps_status st = dcsr_alloc(D.ctx, T, X.nc, X.nr, nnz, 1);
    if (st == SPS_OK) st = talloc(D, &k1, nnz);
    if (st == SPS_OK) st = talloc(D, &k2, nnz);
    if (st == SPS_OK) st = talloc(D, &row, nnz);
    if (st == SPS_OK) st = talloc(D, &i1, nnz);
    if (st == SPS_OK) st = talloc(D, &i2, nnz);
    if (st == SPS_OK && nnz == 0) {
        k_fill_int<<<blocks_for((long long)X.nc + 1), TB, 0, D.s>>>((long long)X.nc + 1, T.rp, 0);
        LAUNCHED(D.ctx, st, "k_fill_int");
    }
    if (st == SPS_OK && nnz > 0) {
        sp.mark("keys");
        k_entries<<<blocks_for(X.nr), TB, 0, D.s>>>(X.nr, X.rp, X.ci, row, k1, i1);
        LAUNCHED(D.ctx, st, "k_entries");
        sp.mark("sort");
        if (st == SPS_OK) st = sort_pairs(D, k1, k2, i1, i2, nnz, (unsigned)(X.nc > 0 ? X.nc - 1 : 0));
    }
    if (st == SPS_OK && nnz > 0) {
        sp.mark("fill");
        k_col_start<<<blocks_for(nnz), TB, 0, D.s>>>(nnz, X.nc, k2, T.rp);
        LAUNCHED(D.ctx, st, "k_col_start");
        k_gather_t<<<blocks_for(nnz), TB, 0, D.s>>>(nnz, i2, row, X.v, T.ci, T.v);
        LAUNCHED(D.ctx, st, "k_gather_t");
    }
    tfree(D, k1);
    tfree(D, k2);
    tfree(D, row);
    tfree(D, i1);
    tfree(D, i2);
    return st;
}

/* ---- the numeric re-setup's products ---------------------------------------------- */

const int LONG_BLOCKS = 1024; /* k_long_into's blocks at most (the long rows' count stays on the device) */

/* C's values = X Y in C's pattern (the full setup's product of the same
 * patterns), the full setup's sums (k_into_row, k_grp_into, k_long_into:
 * its three shapes, the lanes chosen from the mean row lengths; the
 * result does not depend on them); a term outside C's pattern sets *bad.
 * No read of the device. */
sps_status spgemm_into(dsetup &D, const dcsr &X, const dcsr &Y, dcsr &C, unsigned *bad, const char *what)
{
    steps sp(D, what);
    sps_idx n = X.nr;
    if (n == 0) return SPS_OK;
    double mx = (double)X.nnz / X.nr, my = Y.nr ? (double)Y.nnz / Y.nr : 0.0;
    int G = group_lanes(Y, mx * my);
    long long lmin = G > 0 ? long_min() : 0;
    unsigned char *lf = nullptr;
    sps_idx *lrow = nullptr;
    unsigned long long *nlong = nullptr;
    sps_status st = SPS_OK;
    if (lmin > 0) { /* the long rows: flagged and listed, their count on the device */
        sp.mark("bound");
        st = talloc(D, &lf, n);
        if (st == SPS_OK) st = talloc(D, &lrow, n);
        if (st == SPS_OK) st = talloc(D, &nlong, 1);
        if (st == SPS_OK) st = sps__dmemset(D.ctx, nlong, 0, sizeof *nlong);
        if (st == SPS_OK) {
            k_sg_bound<<<blocks_for(n), TB, 0, D.s>>>(n, X.rp, X.ci, Y.rp, nullptr, lmin, lf, lrow, nlong);
            LAUNCHED(D.ctx, st, "k_sg_bound");
        }
    }
    sp.mark("numeric");
    if (st == SPS_OK && G == 0) {
        k_into_row<<<blocks_for(n), TB, 0, D.s>>>(n, X.rp, X.ci, X.v, Y.rp, Y.ci, Y.v, C.rp, C.ci, C.v, bad);
        LAUNCHED(D.ctx, st, "k_into_row");
    }
    if (st == SPS_OK && G > 0) {
        const int grg = grp_blocks(n, G);
        k_grp_into<<<grg, GTB, 0, D.s>>>(n, G, X.rp, X.ci, X.v, Y.rp, Y.ci, Y.v, C.rp, C.ci, C.v, lf, bad);
        LAUNCHED(D.ctx, st, "k_grp_into");
    }
    if (st == SPS_OK && lf) {
        const int lb = n < LONG_BLOCKS ? (int)n : LONG_BLOCKS;
        k_long_into<<<lb, LTB, 0, D.s>>>(lrow, nlong, X.rp, X.ci, X.v, Y.rp, Y.ci, Y.v, C.rp, C.ci, C.v, bad);
        LAUNCHED(D.ctx, st, "k_long_into");
    }
    tfree(D, lf);
    tfree(D, lrow);
    tfree(D, nlong);
    return st;
}

/* R's values = P' in R's pattern (transpose's of P's). */
sps_status transpose_into(dsetup &D, const dcsr &P, dcsr &R, unsigned *bad, const char *what)
{
    steps sp(D, what);
    sp.mark("values");
    sps_status st = SPS_OK;
    if (R.nnz > 0) {
        k_transpose_into<<<blocks_for(R.nnz), TB, 0, D.s>>>(R.nr, R.nnz, R.rp, R.ci, P.rp, P.ci, P.v, R.v, bad);
        LAUNCHED(D.ctx, st, "k_transpose_into");
    }
    return st;
}

/* ---- the coarse inverse ---------------------------------------------------------- */

/* amg_setup.c's dense_load: M = A row-major (M zeroed before), a row
 * without a nonzero value a unit diagonal. */
__global__ void k_dense_load(sps_idx n, const sps_idx *__restrict__ rp, const sps_idx *__restrict__ ci,
                             const double *__restrict__ v, double *__restrict__ M)
{
    GRID_LOOP(i, n) {
        int empty = 1;
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) {
            M[i * (long long)n + ci[p]] = v[p];
            if (v[p] != 0.0) empty = 0;
        }
        if (empty) M[i * (long long)n + i] = 1.0;
    }
}

/* One block: the pivot of column c (the first row of the largest |m_ic|,
 * i >= c: the host's scan; m_cc when it is NaN, which nothing exceeds), its
 * row swapped into row c and divided by the pivot (1 / p in column c),
 * column c into fcol; *bad = 1 on a zero pivot (later steps do nothing). */
__device__ void gj_pivot(sps_idx n, sps_idx c, volatile double *M, sps_idx *__restrict__ perm,
                         double *__restrict__ fcol, int *__restrict__ bad)
{
    __shared__ sps_idx si[TB];
    __shared__ double sv[TB];
    __shared__ int stop;
    if (threadIdx.x == 0) stop = *bad;
    __syncthreads();
    if (stop) return;
    sps_idx best = -1;
    double bv = -1.0;
    for (sps_idx i = c + threadIdx.x; i < n; i += TB) {
        double a = fabs(M[i * (long long)n + c]);
        if (a != a) a = i == c ? 2.0 * DBL_MAX : -1.0; /* NaN: c keeps it, others never win */
        if (best < 0 || a > bv) {
            best = i;
            bv = a;
        }
    }
    si[threadIdx.x] = best;
    sv[threadIdx.x] = bv;
    __syncthreads();
    for (int w = TB / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) {
            sps_idx ia = si[threadIdx.x], ib = si[threadIdx.x + w];
            double va = sv[threadIdx.x], vb = sv[threadIdx.x + w];
            if (ib >= 0 && (ia < 0 || vb > va || (vb == va && ib < ia))) {
                si[threadIdx.x] = ib;
                sv[threadIdx.x] = vb;
            }
        }
        __syncthreads();
    }
    const sps_idx piv = si[0];
    if (M[piv * (long long)n + c] == 0.0) {
        if (threadIdx.x == 0) *bad = 1;
        return; /* the whole block: every thread read the same pivot */
    }
    if (threadIdx.x == 0) perm[c] = piv;
    volatile double *rc = M + c * (long long)n, *rp = M + piv * (long long)n;
    if (piv != c)
        for (sps_idx j = threadIdx.x; j < n; j += TB) {
            double t = rc[j];
            rc[j] = rp[j];
            rp[j] = t;
        }
    __syncthreads();
    const double pv = rc[c];
    __syncthreads();
    if (threadIdx.x == 0) rc[c] = 1.0;
    __syncthreads();
    for (sps_idx j = threadIdx.x; j < n; j += TB) rc[j] = __ddiv_rn(rc[j], pv);
    __syncthreads();
    for (sps_idx i = threadIdx.x; i < n; i += TB) fcol[i] = M[i * (long long)n + c];
}

__global__ void k_gj_pivot(sps_idx n, sps_idx c, double *__restrict__ M, sps_idx *__restrict__ perm,
                           double *__restrict__ fcol, int *__restrict__ bad)
{
    gj_pivot(n, c, M, perm, fcol, bad);
}

/* gj_step's elimination of column c (every row i != c with f = m_ic != 0
 * loses f times row c: row_update's y - f x, column c from 0), then, in the
 * block that finishes last (a counter: *done, reset by that block),
 * gj_pivot of column c + 1:
 * one launch a column instead of two (poisson3d:160's 398 coarse rows: 796
 * launches, 3.9 ms on an H200, most of it launch gaps). The same
 * operations in the same order as the two kernels; the pivot reads the
 * other blocks' writes through volatile loads after their fence. */
const int GJ_BLOCKS = 1024; /* k_gj_step's blocks at most (each a "last block" candidate) */

__global__ void k_gj_step(sps_idx n, sps_idx c, double *__restrict__ M, sps_idx *__restrict__ perm,
                          double *__restrict__ fcol, int *__restrict__ bad, int *__restrict__ done)
{
    __shared__ int last;
    if (*bad) return; /* every block: a zero pivot stops the elimination */
    const double *rc = M + c * (long long)n;
    GRID_LOOP(e, (long long)n * n) {
        sps_idx i = (sps_idx)(e / n), j = (sps_idx)(e % n);
        double f = fcol[i];
        if (i == c || f == 0.0) continue;
        M[e] = __dsub_rn(j == c ? 0.0 : M[e], __dmul_rn(f, rc[j]));
    }
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(done, 1) == (int)gridDim.x - 1;
    __syncthreads();
    if (!last || c + 1 >= n) return;
    if (threadIdx.x == 0) *done = 0; /* the next launch's count */
    gj_pivot(n, c + 1, M, perm, fcol, bad);
}

/* The row interchanges undone as column interchanges, in reverse order. */
__global__ void k_gj_unswap(sps_idx n, double *__restrict__ M, const sps_idx *__restrict__ perm,
                            const int *__restrict__ bad)
{
    if (*bad) return;
    GRID_LOOP(i, n) {
        double *r = M + i * (long long)n;
        for (sps_idx c = n - 1; c >= 0; c--) {
            double t = r[c];
            r[c] = r[perm[c]];
            r[perm[c]] = t;
        }
    }
}

/* ---- copies between the device and the host hierarchy ---------------------------- */

/* A device copy (core/gpu.h's sps_dcsr) as a dcsr: its arrays in place. */
dcsr of(const sps_dcsr &d)
{
    dcsr a;
    a.nr = d.nrows;
    a.nc = d.ncols;
    a.nnz = d.nnz;
    a.rp = d.row_ptr;
    a.ci = d.col_idx;
    a.v = d.val;
    return a;
}

sps_status upload_csr(sps_context *ctx, const sps_csr *A, dcsr &d)
{
    sps_status st = dcsr_alloc(ctx, d, A->nrows, A->ncols, A->nnz, 1);
    if (st == SPS_OK) st = sps__h2d(ctx, d.rp, A->row_ptr, ((size_t)A->nrows + 1) * sizeof *d.rp);
    if (st == SPS_OK && A->nnz) st = sps__h2d(ctx, d.ci, A->col_idx, (size_t)A->nnz * sizeof *d.ci);
    if (st == SPS_OK && A->nnz) st = sps__h2d(ctx, d.v, A->val, (size_t)A->nnz * sizeof *d.v);
    return st;
}

/* d's arrays become A's device copy (core/gpu.h's sps_dcsr), the primary
 * copy: A on the host gets the sizes only (amg.cu's V-cycle runs its
 * products on the device copy in place and needs nothing else); its arrays
 * come to the host only in sps__amg_host_copy. The caller stops owning d's
 * arrays when this succeeds. */
sps_status attach(sps_context *ctx, dcsr &d, sps_csr *A)
{
    memset(A, 0, sizeof *A);
    A->nrows = d.nr;
    A->ncols = d.nc;
    A->nnz = d.nnz;
    sps_dcsr *c = (sps_dcsr *)sps__calloc(1, sizeof *c);
    if (!c) return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    c->ctx = ctx;
    c->nrows = A->nrows;
    c->ncols = A->ncols;
    c->nnz = A->nnz;
    c->row_ptr = d.rp;
    c->col_idx = d.ci;
    c->val = d.v;
    c->bytes = ((size_t)A->nrows + 1 + (size_t)A->nnz) * sizeof(sps_idx) + (size_t)A->nnz * sizeof(double);
    strcpy(c->how, "amg setup");
    A->dev = c;
    d = dcsr();
    return SPS_OK;
}

/* The host arrays A lacks, from its device copy (attach's), through the
 * context's pinned ring; the copy then describes A's new arrays. */
sps_status complete_csr(sps_context *ctx, sps_csr *A)
{
    sps_dcsr *c = A->dev;
    if (!c || (A->row_ptr && A->col_idx && A->val)) return SPS_OK;
    size_t n1 = (size_t)A->nrows + 1, nz = (size_t)A->nnz;
    if (!A->row_ptr) A->row_ptr = (sps_idx *)sps__malloc(sps__mul_size(n1, sizeof *A->row_ptr));
    if (!A->col_idx) A->col_idx = (sps_idx *)sps__malloc(sps__mul_size(nz + 1, sizeof *A->col_idx));
    if (!A->val) A->val = (double *)sps__malloc(sps__mul_size(nz + 1, sizeof *A->val));
    if (!A->row_ptr || !A->col_idx || !A->val) return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    sps_status st = c->h_row_ptr == A->row_ptr ? SPS_OK
                                               : sps__d2h_pinned(ctx, A->row_ptr, c->row_ptr, n1 * sizeof *A->row_ptr);
    if (st == SPS_OK && nz) st = sps__d2h_pinned(ctx, A->col_idx, c->col_idx, nz * sizeof *A->col_idx);
    if (st == SPS_OK && nz) st = sps__d2h_pinned(ctx, A->val, c->val, nz * sizeof *A->val);
    if (st == SPS_OK) {
        c->h_row_ptr = A->row_ptr;
        c->h_col_idx = A->col_idx;
        c->h_val = A->val;
    }
    return st;
}

template <class T> sps_status download(sps_context *ctx, T **h, const T *d, long long count)
{
    *h = (T *)sps__malloc(sps__mul_size((size_t)count + 1, sizeof(T)));
    if (!*h) return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    return count > 0 ? sps__d2h_pinned(ctx, *h, d, (size_t)count * sizeof(T)) : SPS_OK;
}

/* ---- one level -------------------------------------------------------------------- */

/* A level's device data; freed by level_free. */
struct dlevel {
    dcsr S, T, P, R, AP, Ac, Sm;
    sps_idx *agg = nullptr;
    double *dinv = nullptr, *g = nullptr, *l1 = nullptr, *w = nullptr, *Bc = nullptr;
    int dinv_temp = 0; /* dinv a temporary (talloc): l1-Jacobi keeps l1 instead */
};

/* What the hierarchy did not take: S, A P's values, Sm, g, w and Bc are
 * temporaries (and dinv when dinv_temp), the rest dalloc's. */
void level_free(dsetup &D, dlevel &L)
{
    dcsr_tfree(D, L.S);
    dcsr_free(L.T);
    dcsr_free(L.P);
    dcsr_free(L.R);
    sps__dfree(L.AP.rp);
    sps__dfree(L.AP.ci);
    tfree(D, L.AP.v);
    L.AP = dcsr();
    dcsr_free(L.Ac);
    tfree(D, L.Sm.v); /* Sm borrows A's pattern */
    L.Sm = dcsr();
    sps__dfree(L.agg);
    if (L.dinv_temp) tfree(D, L.dinv);
    else sps__dfree(L.dinv);
    tfree(D, L.g);
    sps__dfree(L.l1);
    tfree(D, L.w);
    tfree(D, L.Bc);
    L.agg = nullptr;
    L.dinv = L.g = L.l1 = L.w = L.Bc = nullptr;
}

struct gbuild {
    dsetup D;
    const sps_amg_prm *prm;
    sps_amg *h;
};

/* The phase's kernels done (its time is honest): its time into h->ms. */
double tick(gbuild &b, sps_status &st, double t0, int phase)
{
    sps_status sy = sps__gpu_sync(b.D.ctx);
    if (st == SPS_OK) st = sy;
    double t = sps__now_ms();
    b.h->ms[phase] += t - t0;
    return t;
}

/* Strength and aggregates of level l; *stalled when they would not shrink it. */
sps_status level_aggregate(gbuild &b, const dcsr &A, int l, dlevel &G, int *stalled)
{
    sps_amg_level *L = &b.h->lv[l];
    sps_context *ctx = b.D.ctx;
    double t0 = sps__now_ms();
    sps_status st = strength(b.D, A, b.prm->theta * ldexp(1.0, -l), G.S);
    double t1 = tick(b, st, t0, 0);
    /* the aggregates' count and the host's check (sps__amg_aggregate) on
     * the device: one read of both */
    struct agg_counts {
        unsigned long long bad;
        sps_idx nagg;
    } *cnt = nullptr, hc;
    memset(&hc, 0, sizeof hc);
    if (st == SPS_OK) st = dalloc(ctx, &G.agg, A.nr);
    if (st == SPS_OK) st = talloc(b.D, &cnt, 1);
    if (st == SPS_OK) st = aggregate(b.D, G.S, G.agg, &cnt->nagg);
    if (st == SPS_OK) st = sps__dmemset(ctx, &cnt->bad, 0, sizeof cnt->bad);
    if (st == SPS_OK) {
        k_orphans<<<blocks_for(A.nr), TB, 0, b.D.s>>>(A.nr, G.S.rp, G.agg, &cnt->bad);
        LAUNCHED(ctx, st, "k_orphans");
    }
    if (st == SPS_OK) st = sps__d2h(ctx, &hc, cnt, sizeof hc);
    if (st == SPS_OK) L->nagg = hc.nagg;
    if (st == SPS_OK && hc.bad)
        st = sps__err(ctx, SPS_ERR_INTERNAL, "amg: %llu nodes left without an aggregate", hc.bad);
    tfree(b.D, cnt);
    dcsr_tfree(b.D, G.S); /* read by nothing after the aggregates */
    tick(b, st, t1, 1);
    *stalled = st == SPS_OK && (L->nagg == 0 || L->nagg >= A.nr);
    return st;
}

/* Scalings and spectral bound of level l (level_smoother). keep: the
 * hierarchy's array of the kept scaling (l1 for l1-Jacobi, dinv for
 * Chebyshev), written in place (the numeric re-setup: G borrows it, the
 * caller takes it back before level_free), or NULL: a new one. */
sps_status level_spectral(gbuild &b, const dcsr &A, int l, dlevel &G, double *keep)
{
    sps_amg_level *L = &b.h->lv[l];
    sps_context *ctx = b.D.ctx;
    sps_idx n = A.nr;
    int l1 = b.prm->smoother != SPS_AMG_CHEBY;
    double t0 = sps__now_ms();
    amg_lz *S = nullptr, hs;
    memset(&hs, 0, sizeof hs);
    G.dinv_temp = l1; /* the hierarchy keeps l1 (l1-Jacobi) or dinv (Chebyshev) */
    sps_status st = SPS_OK;
    if (l1) st = talloc(b.D, &G.dinv, n);
    else if (keep) G.dinv = keep;
    else st = dalloc(ctx, &G.dinv, n);
    if (st == SPS_OK) st = talloc(b.D, &G.g, n);
    if (st == SPS_OK && l1) {
        if (keep) G.l1 = keep;
        else st = dalloc(ctx, &G.l1, n);
    }
    if (st == SPS_OK) st = talloc(b.D, &G.w, 4 * (long long)n);
    if (st == SPS_OK) st = talloc(b.D, &S, 1);
    if (st == SPS_OK) {
        k_diag<<<blocks_for(n), TB, 0, b.D.s>>>(n, A.rp, A.ci, A.v, G.dinv, G.g, G.l1);
        LAUNCHED(ctx, st, "k_diag");
        if (st == SPS_OK) st = reduce(b.D, 1, n, G.g, nullptr, &S->gersh);
    }
    if (st == SPS_OK) st = lanczos(b.D, A, G.dinv, G.w, &S->lz);
    if (st == SPS_OK) st = sps__d2h(ctx, &hs, S, sizeof hs); /* the one read: Gershgorin, alpha, beta, steps */
    tfree(b.D, S);
    if (st == SPS_OK) st = sps__amg_spectral_finish(ctx, n, hs.gersh, b.prm->sweeps, hs.lz.alpha, hs.lz.beta, hs.lz.m, L);
    tick(b, st, t0, 4); /* the scaling stays on the device (device_level) */
    return st;
}

/* G.Sm = I - omega D^-1 A on A's pattern (its values a temporary), omega = 4 / (3 rho) */
sps_status smoothing_matrix(gbuild &b, const dcsr &A, double rho, dlevel &G)
{
    G.Sm = A;
    G.Sm.v = nullptr;
    sps_status st = talloc(b.D, &G.Sm.v, A.nnz);
    if (st == SPS_OK) {
        k_smoother_matrix<<<blocks_for(A.nr), TB, 0, b.D.s>>>(A.nr, A.rp, A.ci, A.v, G.dinv, 4.0 / (3.0 * rho),
                                                              G.Sm.v);
        LAUNCHED(b.D.ctx, st, "k_smoother_matrix");
    }
    return st;
}

/* P_tent, P, R (level_prolong) */
sps_status level_prolong(gbuild &b, const dcsr &A, int l, dlevel &G, const double *B)
{
    sps_amg_level *L = &b.h->lv[l];
    double t0 = sps__now_ms();
    steps sp(b.D, "T, Sm");
    sp.mark("tent");
    sps_status st = talloc(b.D, &G.Bc, L->nagg);
    if (st == SPS_OK) st = tentative(b.D, G.agg, A.nr, L->nagg, B, G.T, G.Bc);
    sp.mark("Sm");
    if (st == SPS_OK) st = smoothing_matrix(b, A, L->rho, G);
    sp.done();
    if (st == SPS_OK) st = spgemm(b.D, G.Sm, G.T, G.P, 1, "P = Sm T");
    if (st == SPS_OK) st = transpose(b.D, G.P, G.R, "R = P'");
    tick(b, st, t0, 2);
    return st;
}

/* A P (its pattern kept for the numeric re-setup) and R (A P) (the
 * Galerkin product) */
sps_status level_galerkin(gbuild &b, const dcsr &A, dlevel &G)
{
    double t0 = sps__now_ms();
    sps_status st = spgemm(b.D, A, G.P, G.AP, 2, "A P");
    if (st == SPS_OK) st = spgemm(b.D, G.R, G.AP, G.Ac, 1, "R (A P)");
    tick(b, st, t0, 3);
    return st;
}

/* Level l's aggregates, scaling, T, P and R stay on the device as the
 * hierarchy's primary copy (sps__amg_host_copy brings them to the host
 * when something reads them); the host gets their sizes only. Of A P only
 * the pattern stays, on the device alone (dap_rp, dap_ci): the numeric
 * re-setup's (sps__amg_numeric_gpu); never copied to the host. */
sps_status level_keep(gbuild &b, int l, dlevel &G)
{
    sps_amg_level *L = &b.h->lv[l];
    double t0 = sps__now_ms();
    sps_status st = attach(b.D.ctx, G.T, &L->T);
    if (st == SPS_OK) st = attach(b.D.ctx, G.P, &L->P);
    if (st == SPS_OK) st = attach(b.D.ctx, G.R, &L->R);
    if (st == SPS_OK) {
        L->dap_rp = G.AP.rp;
        L->dap_ci = G.AP.ci;
        L->ap_nnz = G.AP.nnz;
        tfree(b.D, G.AP.v);
        G.AP = dcsr();
        L->dagg = G.agg;
        G.agg = nullptr;
        if (b.prm->smoother == SPS_AMG_CHEBY) {
            L->ddinv = G.dinv;
            G.dinv = nullptr;
        } else {
            L->ddinv = G.l1;
            G.l1 = nullptr;
        }
    }
    b.h->ms_download += sps__now_ms() - t0;
    return st;
}

/* Level l on the device: 1 in *host when the host must take level l over
 * (too small, the coarsest, or stalled), else A (device) becomes level
 * l + 1's matrix and *B its nullspace (device). *own: whether A's arrays
 * are ours to free (level 0's upload), or the hierarchy's device copy of
 * level l's matrix (or the caller's). */
sps_status device_level(gbuild &b, int l, dcsr &A, double **B, int *host, int *own)
{
    sps_amg *h = b.h;
    h->lv[l].n = A.nr;
    h->lv[l].nnz = A.nnz;
    h->nlevels = l + 1;
    *host = !sps__amg_coarsen_more(b.prm, l, A.nr) || A.nr <= b.prm->gpu_min;
    if (*host) return SPS_OK;
    b.D.level = l;
    dlevel G;
    int stalled = 0;
    sps_status st = level_aggregate(b, A, l, G, &stalled);
    if (st == SPS_OK && stalled) {
        sps__free(h->lv[l].agg);
        h->lv[l].agg = nullptr;
        *host = 1;
    }
    if (st == SPS_OK && !*host) st = level_spectral(b, A, l, G, nullptr);
    if (st == SPS_OK && !*host) st = level_prolong(b, A, l, G, *B);
    if (st == SPS_OK && !*host) st = level_galerkin(b, A, G);
    if (st == SPS_OK && !*host) st = level_keep(b, l, G);
    if (st == SPS_OK && !*host) {
        h->lv[l + 1].bs = 1;
        h->gpu_levels = l + 1;
        h->host_partial = 1;
        if (*own) dcsr_free(A);
        A = G.Ac; /* ours until the hierarchy's copy of A_{l+1} takes it */
        G.Ac = dcsr();
        *own = 1;
        dcsr keep = A;
        double t0 = sps__now_ms();
        st = attach(b.D.ctx, keep, &h->lv[l + 1].A); /* keep emptied: A's arrays now the hierarchy's */
        h->ms_download += sps__now_ms() - t0;
        if (st == SPS_OK) *own = 0;
        tfree(b.D, *B);
        *B = G.Bc;
        G.Bc = nullptr;
    }
    level_free(b.D, G);
    return st;
}

/* The host's nullspace of level l (NULL on level 0: the constant). */
sps_status host_nullspace(sps_context *ctx, const double *B, sps_idx n, double **hB)
{
    *hB = nullptr;
    return B ? download(ctx, hB, B, n) : SPS_OK;
}

/* Level 0's matrix on the device: the caller's device copy when A0 has
 * one (the solve's operator made it), else an upload of our own (*own). */
sps_status level0(sps_context *ctx, const sps_csr *A0, dcsr &A, int *own)
{
    const sps_dcsr *d = sps__csr_device_copy(ctx, A0);
    *own = !d;
    if (!d) return upload_csr(ctx, A0, A);
    A = of(*d);
    return SPS_OK;
}

/* h->dcinv = A^-1 on the device, amg_setup.c's Gauss-Jordan step for step
 * (bitwise its result for the same A): a pivot block and an elimination
 * a column, queued without a host read; one read of the singular flag. */
sps_status device_coarse(gbuild &b, const dcsr &A)
{
    sps_amg *h = b.h;
    sps_context *ctx = b.D.ctx;
    double t0 = sps__now_ms();
    sps_idx n = A.nr;
    h->nc = n;
    if (n > SPS_AMG_MAX_DENSE)
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "amg: the coarsest level has %d rows, above the dense limit %d; raise "
                        "levels= or lower coarse=",
                        n, SPS_AMG_MAX_DENSE);
    double *fcol = nullptr;
    sps_idx *perm = nullptr;
    int *bad = nullptr, *done = nullptr, hbad = 0;
    long long nn = (long long)n * n;
    /* a numeric re-setup writes the V-cycle's array in place */
    sps_status st = h->dcinv ? SPS_OK : dalloc(ctx, &h->dcinv, nn);
    if (st == SPS_OK) st = talloc(b.D, &fcol, n);
    if (st == SPS_OK) st = talloc(b.D, &perm, n);
    if (st == SPS_OK) st = talloc(b.D, &bad, 2);
    if (st == SPS_OK) st = sps__dmemset(ctx, bad, 0, 2 * sizeof *bad);
    done = bad + 1;
    if (st == SPS_OK && nn > 0) st = sps__dmemset(ctx, h->dcinv, 0, (size_t)nn * sizeof *h->dcinv);
    if (st == SPS_OK && n > 0) {
        k_dense_load<<<blocks_for(n), TB, 0, b.D.s>>>(n, A.rp, A.ci, A.v, h->dcinv);
        LAUNCHED(ctx, st, "k_dense_load");
    }
    if (st == SPS_OK && n > 0) {
        k_gj_pivot<<<1, TB, 0, b.D.s>>>(n, 0, h->dcinv, perm, fcol, bad);
        LAUNCHED(ctx, st, "k_gj_pivot");
    }
    const int gb = blocks_for(nn) < GJ_BLOCKS ? blocks_for(nn) : GJ_BLOCKS;
    for (sps_idx c = 0; c < n && st == SPS_OK; c++) { /* column c's elimination, column c + 1's pivot */
        k_gj_step<<<gb, TB, 0, b.D.s>>>(n, c, h->dcinv, perm, fcol, bad, done);
        LAUNCHED(ctx, st, "k_gj_step");
    }
    if (st == SPS_OK && n > 0) {
        k_gj_unswap<<<blocks_for(n), TB, 0, b.D.s>>>(n, h->dcinv, perm, bad);
        LAUNCHED(ctx, st, "k_gj_unswap");
    }
    if (st == SPS_OK) st = sps__d2h(ctx, &hbad, bad, sizeof hbad);
    if (st == SPS_OK && hbad)
        st = sps__err(ctx, SPS_ERR_UNSUPPORTED, "amg: the coarsest matrix (%d rows) is singular", n);
    tfree(b.D, fcol);
    tfree(b.D, perm);
    tfree(b.D, bad);
    h->ms[5] += sps__now_ms() - t0;
    return st;
}

sps_status build_levels(gbuild &b, const sps_csr *A0)
{
    sps_context *ctx = b.D.ctx;
    dcsr A;
    double *B = nullptr, *hB = nullptr;
    int host = 0, l = 0, own = 1;
    double t0 = sps__now_ms();
    sps_status st = level0(ctx, A0, A, &own);
    b.h->ms_download += sps__now_ms() - t0; /* the transfers, both ways */
    for (; st == SPS_OK; l++) {
        st = device_level(b, l, A, &B, &host, &own);
        if (st != SPS_OK || host) break;
    }
    if (st == SPS_OK && l > 0 && !sps__amg_coarsen_more(b.prm, l, A.nr)) {
        /* the coarsest level after device levels: its inverse on the device too */
        st = device_coarse(b, A);
        if (own) dcsr_free(A);
        tfree(b.D, B);
        if (st == SPS_OK) sps__amg_describe(b.h, "\n");
        return st;
    }
    if (st == SPS_OK) st = host_nullspace(ctx, B, A.nr, &hB);
    if (st == SPS_OK && l > 0) { /* the host code takes level l over: its A on the host */
        double t1 = sps__now_ms();
        st = complete_csr(ctx, &b.h->lv[l].A);
        b.h->ms_download += sps__now_ms() - t1;
    }
    if (own) dcsr_free(A);
    tfree(b.D, B);
    if (st == SPS_OK) return sps__amg_build_from(ctx, A0, l, hB, b.h); /* takes hB */
    sps__free(hB);
    return st;
}

/* Level 0's fingerprint (sps__amg_pattern) on a host thread of its own
 * while this thread drives the device's levels: the setup's one pass over
 * A's host arrays, hidden behind the device's work (the result does not
 * depend on the threads). */
struct fingerprint {
    sps_context *ctx = nullptr;
    const sps_csr *A = nullptr;
    uint64_t *slot = nullptr, z = 0;
    pthread_t tid;
    int started = 0;
};

void *fingerprint_run(void *arg)
{
    fingerprint *f = (fingerprint *)arg;
    f->z = sps__amg_pattern_into(f->ctx, f->A, f->slot);
    return nullptr;
}

/* A's fingerprint started on a thread of its own (on this one if none can
 * be made); fingerprint_end waits for it and frees its slots. */
sps_status fingerprint_begin(fingerprint &f, sps_context *ctx, const sps_csr *A)
{
    f.ctx = ctx;
    f.A = A;
    f.slot = (uint64_t *)sps__malloc(sps__mul_size((size_t)sps__amg_pattern_slots(A), sizeof *f.slot));
    if (!f.slot) return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    f.started = pthread_create(&f.tid, nullptr, fingerprint_run, &f) == 0;
    if (!f.started) fingerprint_run(&f);
    return SPS_OK;
}

uint64_t fingerprint_end(fingerprint &f)
{
    if (f.started) pthread_join(f.tid, nullptr);
    f.started = 0;
    sps__free(f.slot);
    f.slot = nullptr;
    return f.z;
}

/* CUDA loads a kernel at its first launch (lazy loading, the default since
 * CUDA 12.2), in the launching thread, while the device often waits (the
 * setup reads sizes back between its steps): on an H100 the first setup in
 * a process took 4-15 ms more than a warm one, and loading every kernel with
 * the context (CUDA_MODULE_LOADING=EAGER) took those off. A thread of its own
 * asks for each setup kernel's attributes at the setup's start, which loads
 * it, the products' and the coarse phase's first (the main thread meets the
 * early ones at once), so the loads overlap the first phases. Loading
 * changes no result. SPS_AMG_PRELOAD=0 turns it off (to measure it). */
struct preload {
    int dev = 0;
    pthread_t tid;
    int started = 0;
};

void *preload_run(void *arg)
{
    static const void *const kernels[] = {
        (const void *)k_grp_count, (const void *)k_grp_numeric, (const void *)k_grp_hash_global,
        (const void *)k_long_count, (const void *)k_long_numeric, (const void *)k_sg_bound,
        (const void *)k_sg_hash, (const void *)k_sg_gather, (const void *)k_smoother_matrix,
        (const void *)k_entries, (const void *)k_col_start, (const void *)k_gather_t,
        (const void *)k_fill_int, (const void *)k_dense_load, (const void *)k_gj_pivot,
        (const void *)k_gj_step, (const void *)k_gj_unswap, (const void *)k_diag,
        (const void *)k_lz_init, (const void *)k_spmv, (const void *)k_lz_update,
        (const void *)k_lz_dir, (const void *)k_agg_keys, (const void *)k_agg_start,
        (const void *)k_tent, (const void *)k_root_flag, (const void *)k_first,
        (const void *)k_join, (const void *)k_orphans, (const void *)k_mis_init,
        (const void *)k_max_nb, (const void *)k_mis_update, (const void *)k_reduce_part,
        (const void *)k_reduce_final, (const void *)k_absdiag, (const void *)k_strength};
    /* the numeric re-setup's own kernels (k_into_row, k_grp_into, k_long_into,
     * k_transpose_into) are left to its first run: a setup that is never
     * re-set up does not load them */
    preload *p = (preload *)arg;
    if (cudaSetDevice(p->dev) == cudaSuccess) {
        cudaFuncAttributes a;
        for (const void *k : kernels) (void)cudaFuncGetAttributes(&a, k);
    }
    cudaGetLastError(); /* this thread's own error state: nothing to report */
    return nullptr;
}

void preload_begin(preload &p)
{
    const char *e = getenv("SPS_AMG_PRELOAD");
    p.started = 0;
    if ((e && e[0] == '0') || cudaGetDevice(&p.dev) != cudaSuccess) return;
    p.started = pthread_create(&p.tid, nullptr, preload_run, &p) == 0;
}

void preload_end(preload &p)
{
    if (p.started) pthread_join(p.tid, nullptr);
    p.started = 0;
}

/* The setup's pool: a pool of its own on the device (the device's default
 * pool and its attributes, which the application may use, stay untouched)
 * that keeps what the temporaries free (release threshold: all) for the
 * setup's length, so a size met again (the same arrays level after level,
 * the scan and sort buffers) is served without the driver; pool_end, after
 * the stream is drained, destroys it, and its memory (the setup's peak,
 * A P's hash slices on level 0 among it) goes back to the device for the
 * solve. No pool on the device (or one that cannot be made): D.pool NULL,
 * talloc's cudaMalloc. */
void pool_begin(dsetup &D)
{
    int dev = 0, has = 0;
    D.pool = nullptr;
    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&has, cudaDevAttrMemoryPoolsSupported, dev) == cudaSuccess && has) {
        cudaMemPoolProps pp;
        memset(&pp, 0, sizeof pp);
        pp.allocType = cudaMemAllocationTypePinned;
        pp.handleTypes = cudaMemHandleTypeNone;
        pp.location.type = cudaMemLocationTypeDevice;
        pp.location.id = dev;
        uint64_t all = UINT64_MAX;
        if (cudaMemPoolCreate(&D.pool, &pp) != cudaSuccess) D.pool = nullptr;
        else if (cudaMemPoolSetAttribute(D.pool, cudaMemPoolAttrReleaseThreshold, &all) != cudaSuccess) {
            cudaMemPoolDestroy(D.pool);
            D.pool = nullptr;
        }
    }
    cudaGetLastError(); /* no pool: cudaMalloc, no error */
}

void pool_end(dsetup &D)
{
    if (D.pool) cudaMemPoolDestroy(D.pool);
    D.pool = nullptr;
    cudaGetLastError();
}

/* work(b) with b on ctx's stream for h, inside the setup's frame: its pool
 * and reduction buffer, the queued frees done before the pool goes. The
 * setup's and the numeric re-setup's. */
template <class F> sps_status in_frame(sps_context *ctx, sps_amg *h, F work)
{
    gbuild b;
    b.D.ctx = ctx;
    b.D.s = (cudaStream_t)sps__gpu_stream(ctx);
    b.prm = &h->prm;
    b.h = h;
    pool_begin(b.D);
    sps_status st = talloc(b.D, &b.D.red, RED_BLOCKS + 1);
    if (st == SPS_OK) st = work(b);
    tfree(b.D, b.D.red);
    sps_status sy = sps__gpu_sync(ctx); /* the queued frees done */
    if (st == SPS_OK) st = sy;
    pool_end(b.D);
    return st;
}

/* ---- the numeric re-setup on the device ------------------------------------------ */

/* A CSR of the hierarchy as its device copy (attach's): its arrays in
 * place (none without one; the sizes are the host's either way). */
dcsr view(const sps_csr &M)
{
    dcsr d;
    if (M.dev) d = of(*M.dev);
    d.nr = M.nrows;
    d.nc = M.ncols;
    d.nnz = M.nnz;
    return d;
}

/* Level l's smoother, P, R and A_{l+1} for new values of A, in the arrays
 * the setup made (the V-cycle's, in place): level_spectral as the setup
 * runs it, then the setup's products into their kept patterns (T, the
 * aggregates and the patterns stay). */
sps_status level_renumeric(gbuild &b, const dcsr &A, int l, unsigned *bad)
{
    sps_amg *h = b.h;
    sps_amg_level *L = &h->lv[l];
    sps_context *ctx = b.D.ctx;
    b.D.level = l;
    if (!L->dap_rp) return sps__err(ctx, SPS_ERR_INTERNAL, "amg: level %d keeps no pattern of A P", l);
    dlevel G;
    sps_status st = level_spectral(b, A, l, G, L->ddinv); /* the kept scaling in place */
    double t0 = sps__now_ms();
    dcsr T = view(L->T), P = view(L->P), R = view(L->R), Ac = view(h->lv[l + 1].A), AP;
    if (st == SPS_OK) st = smoothing_matrix(b, A, L->rho, G);
    if (st == SPS_OK) st = spgemm_into(b.D, G.Sm, T, P, bad, "P = Sm T");
    if (st == SPS_OK) st = transpose_into(b.D, P, R, bad, "R = P'");
    t0 = tick(b, st, t0, 2);
    AP.nr = A.nr;
    AP.nc = P.nc;
    AP.nnz = (sps_idx)L->ap_nnz;
    AP.rp = L->dap_rp;
    AP.ci = L->dap_ci;
    if (st == SPS_OK) st = talloc(b.D, &AP.v, AP.nnz);
    if (st == SPS_OK) st = spgemm_into(b.D, A, P, AP, bad, "A P");
    if (st == SPS_OK) st = spgemm_into(b.D, R, AP, Ac, bad, "R (A P)");
    tfree(b.D, AP.v);
    tick(b, st, t0, 3);
    if (G.dinv == L->ddinv) G.dinv = nullptr; /* the hierarchy's, borrowed */
    if (G.l1 == L->ddinv) G.l1 = nullptr;
    level_free(b.D, G);
    return st;
}

/* The host's copies of what the device re-setup changed (the scalings,
 * P's, R's and the device-made A's values, a device-made coarse inverse)
 * dropped: sps__amg_host_copy downloads them again when something reads
 * them. The first host level's A (refreshed by the caller) stays. */
void drop_host_values(sps_amg *h)
{
    for (int l = 0; l < h->gpu_levels; l++) {
        sps_amg_level *L = &h->lv[l];
        sps_csr *M[3] = {&L->P, &L->R, l + 1 < h->gpu_levels || h->dcinv ? &h->lv[l + 1].A : nullptr};
        sps__free(L->dinv);
        L->dinv = nullptr;
        for (sps_csr *m : M)
            if (m) {
                sps__free(m->val);
                m->val = nullptr;
            }
    }
    if (h->dcinv) {
        sps__free(h->cinv);
        h->cinv = nullptr;
    }
    h->host_partial = 1;
}

/* The device levels (level 0's matrix A0), then the coarse inverse when it
 * is the device's; *bad: a term outside a kept pattern (read here). */
sps_status renumeric_levels(gbuild &b, const dcsr &A0, int *bad)
{
    sps_amg *h = b.h;
    unsigned *dbad = nullptr, hbad = 0;
    sps_status st = talloc(b.D, &dbad, 1);
    if (st == SPS_OK) st = sps__dmemset(b.D.ctx, dbad, 0, sizeof *dbad);
    for (int l = 0; l < h->gpu_levels && st == SPS_OK; l++)
        st = level_renumeric(b, l ? view(h->lv[l].A) : A0, l, dbad);
    if (st == SPS_OK && h->dcinv) st = device_coarse(b, view(h->lv[h->nlevels - 1].A));
    if (st == SPS_OK) st = sps__d2h(b.D.ctx, &hbad, dbad, sizeof hbad);
    tfree(b.D, dbad);
    *bad = hbad != 0;
    return st;
}

/* The levels the host built (after the device's): the first one's new A
 * from its device copy (the device re-setup's A_c, in place), then the
 * host's re-setup from there. */
sps_status renumeric_host(sps_context *ctx, sps_amg *h)
{
    if (h->dcinv) return SPS_OK;
    sps_csr *A = &h->lv[h->gpu_levels].A;
    double t0 = sps__now_ms();
    sps_status st = A->nnz && A->dev ? sps__d2h_pinned(ctx, A->val, A->dev->val, (size_t)A->nnz * sizeof *A->val)
                                     : SPS_OK;
    h->ms_download += sps__now_ms() - t0;
    return st == SPS_OK ? sps__amg_numeric_from(ctx, NULL, h, h->gpu_levels) : st;
}

} // namespace

extern "C" void sps__amg_prof_set(sps_amg_prof_fn fn, void *arg)
{
    prof_fn = fn;
    prof_arg = arg;
}

extern "C" sps_status sps__amg_build_gpu(sps_context *ctx, const sps_amg_prm *prm, const sps_csr *A,
                                         sps_amg *h)
{
    sps_status st = sps__amg_init(ctx, prm, A, 1, 1, nullptr, h);
    fingerprint f;
    if (st == SPS_OK) st = fingerprint_begin(f, ctx, A);
    if (st != SPS_OK) return st;
    preload pl;
    preload_begin(pl);
    st = in_frame(ctx, h, [&](gbuild &b) { return build_levels(b, A); });
    preload_end(pl);
    h->pattern = fingerprint_end(f);
    return st;
}

extern "C" sps_status sps__amg_host_copy(sps_context *ctx, sps_amg *h)
{
    if (!h->host_partial) return SPS_OK;
    sps_status st = SPS_OK;
    for (int l = 0; l < h->gpu_levels && st == SPS_OK; l++) {
        sps_amg_level *L = &h->lv[l];
        if (!L->agg && L->dagg) st = download(ctx, &L->agg, L->dagg, L->n);
        if (st == SPS_OK && !L->dinv && L->ddinv) st = download(ctx, &L->dinv, L->ddinv, L->n);
        if (st == SPS_OK) st = complete_csr(ctx, &L->T);
        if (st == SPS_OK) st = complete_csr(ctx, &L->P);
        if (st == SPS_OK) st = complete_csr(ctx, &L->R);
        if (st == SPS_OK) st = complete_csr(ctx, &h->lv[l + 1].A);
    }
    if (st == SPS_OK && !h->cinv && h->dcinv) st = download(ctx, &h->cinv, h->dcinv, (long long)h->nc * h->nc);
    if (st == SPS_OK) h->host_partial = 0;
    return st;
}

extern "C" sps_status sps__amg_numeric_gpu(sps_context *ctx, const sps_csr *A, const sps_dcsr *d0, sps_amg *h)
{
    if (A->nrows != h->lv[0].n || A->nnz != h->lv[0].nnz)
        return sps__amg_pattern_error(ctx, A, h);
    if (h->gpu_levels == 0 || !d0)
        return sps__err(ctx, SPS_ERR_INTERNAL, "amg: device re-setup of a hierarchy without device levels");
    fingerprint f; /* level 0's pattern checked on a thread of its own, as the setup takes it */
    sps_status st = fingerprint_begin(f, ctx, A);
    if (st != SPS_OK) return st;
    memset(h->ms, 0, sizeof h->ms);
    h->ms_download = 0.0;
    const dcsr A0 = of(*d0);
    int bad = 0;
    st = in_frame(ctx, h, [&](gbuild &b) { return renumeric_levels(b, A0, &bad); });
    if (fingerprint_end(f) != h->pattern && st == SPS_OK) st = sps__amg_pattern_error(ctx, A, h);
    if (st == SPS_OK && bad)
        st = sps__err(ctx, SPS_ERR_INTERNAL, "amg: numeric re-setup: a product left its kept pattern");
    if (st == SPS_OK) st = renumeric_host(ctx, h);
    drop_host_values(h);
    return st;
}
