/* SPDX-License-Identifier: MIT */
/* spsolve/core/analyze_gpu.cu: sps_matrix_analyze on the device, from the
 * matrix's device CSR (core/device_matrix.c).
 *
 * Three kernels and one read-back:
 *   seg_kernel   one warp per 32-row segment, one lane per row. The lanes
 *                merge their rows' sorted offsets (col - row): each step
 *                takes the warp's smallest pending offset, counts it for the
 *                segment (DRM slots) and, through an atomic exchange on a
 *                flag per offset, for the whole matrix (distinct diagonals:
 *                exactly one warp wins each offset, so the count is exact);
 *                the lanes holding that offset consume the entry. A lane thus
 *                reads its row in column order, as the host does, so the
 *                off-diagonal sums and the dominance counts are bitwise the
 *                host's. Row lengths, their histogram (HYB) and max |a_ij|
 *                come out of the same pass.
 *   sym_kernel   a group of lanes per row; each entry (i, j) looks up (j, i)
 *                by binary search in row j (rows are column-sorted, so row j
 *                is the transpose's column j): pattern and value mismatches,
 *                and the scaled sums of squares of A and A - A', reduced in
 *                a fixed order (block tree, then one block over the blocks).
 *   sum_kernel   that last fixed-order sum.
 * Integer results use integer atomics (the same result in any order);
 * floating sums never use atomics. The host turns the counts into features
 * with the same code as the host analysis (core/analyze.c). */
#include "spmv/rules.h"
#include "cuda_check.cuh"

#include <limits.h>
#include <math.h>
#include <string.h>

namespace {

constexpr int SEG = SPS_DRM_SEG_ROWS;
constexpr int WARPS = 8; /* warps (segments) per block of seg_kernel */
constexpr int SYM_THREADS = 256;
constexpr int SUM_THREADS = 1024;
constexpr int SHARED_BINS = 4096;
constexpr int NOFF = INT_MAX; /* "no pending offset": above every real one */

static_assert(SEG == 32, "seg_kernel maps one warp to one segment");

struct an_res {
    unsigned long long seg_diags; /* sum over segments of their distinct offsets */
    unsigned long long sum2;      /* sum of squared row lengths */
    unsigned long long diagonals;
    unsigned long long amax_bits; /* max |a_ij| (non-negative doubles order as integers) */
    int row_min, row_max, empty, missing, zero, negative, dominant, strict;
    int pat_bad, num_bad;
};

__device__ int warp_min(int v)
{
    for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

template <typename T> __device__ T warp_sum(T v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ int warp_max(int v)
{
    for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* One row's results in the lane that owns it. */
struct lane_row {
    double d, off, amax;
    int has;
};

__device__ void consume(const int *col, const double *val, int p, int r, lane_row *L)
{
    int c = col[p];
    double v = val[p];
    double a = fabs(v);
    if (c == r) {
        L->d = v;
        L->has = 1;
    } else {
        L->off += a;
    }
    L->amax = a > L->amax ? a : L->amax;
}

/* Add one lane's clamped length to the histogram: lanes with the same value
 * add once, through their leader. */
__device__ void hist_add(unsigned *h, int bin, int active)
{
#if __CUDA_ARCH__ >= 700
    unsigned same = __match_any_sync(0xffffffffu, active ? bin : -1);
    int lane = threadIdx.x & 31;
    if (active && lane == __ffs(same) - 1) atomicAdd(&h[bin], (unsigned)__popc(same));
#else
    if (active) atomicAdd(&h[bin], 1u);
#endif
}

struct seg_acc { /* per block, in shared memory */
    unsigned long long seg_diags, sum2, diagonals, amax_bits;
    int row_min, row_max, empty, missing, zero, negative, dominant, strict;
};

__device__ void block_flush(seg_acc *s, an_res *g)
{
    atomicAdd(&g->seg_diags, s->seg_diags);
    atomicAdd(&g->sum2, s->sum2);
    atomicAdd(&g->diagonals, s->diagonals);
    atomicMax(&g->amax_bits, s->amax_bits);
    atomicMin(&g->row_min, s->row_min);
    atomicMax(&g->row_max, s->row_max);
    atomicAdd(&g->empty, s->empty);
    atomicAdd(&g->missing, s->missing);
    atomicAdd(&g->zero, s->zero);
    atomicAdd(&g->negative, s->negative);
    atomicAdd(&g->dominant, s->dominant);
    atomicOr(&g->strict, s->strict);
}

/* The merge of one segment's rows: returns the distinct offsets it holds. */
__device__ int merge_segment(const int *rp, const int *col, const double *val, int m, int r,
                             unsigned *flags, unsigned long long *first, lane_row *L)
{
    int lane = threadIdx.x & 31;
    int p = 0, pe = 0;
    if (r < m) {
        p = rp[r];
        pe = rp[r + 1];
    }
    int off = p < pe ? col[p] - r : NOFF;
    int dig = 0;
    unsigned long long won = 0;
    for (;;) {
        int mn = warp_min(off);
        if (mn == NOFF) break;
        dig++;
        if (lane == 0) won += atomicExch(&flags[(long long)mn + m - 1], 1u) == 0u;
        if (off == mn) {
            consume(col, val, p, r, L);
            p++;
            off = p < pe ? col[p] - r : NOFF;
        }
    }
    *first = won;
    return dig;
}

__global__ void seg_kernel(const int *__restrict__ rp, const int *__restrict__ col,
                           const double *__restrict__ val, int m, int ndiag, int kcap,
                           unsigned *__restrict__ flags, unsigned *__restrict__ hist,
                           an_res *__restrict__ res)
{
    extern __shared__ unsigned sh_hist[];
    __shared__ seg_acc acc;
    const bool shared_hist = kcap < SHARED_BINS;
    if (threadIdx.x == 0) {
        memset(&acc, 0, sizeof acc);
        acc.row_min = INT_MAX;
    }
    if (shared_hist)
        for (int i = threadIdx.x; i <= kcap; i += blockDim.x) sh_hist[i] = 0;
    __syncthreads();
    long long seg = (long long)blockIdx.x * WARPS + (threadIdx.x >> 5);
    long long r64 = seg * SEG + (threadIdx.x & 31);
    int r = r64 < m ? (int)r64 : m; /* rows past m hold nothing */
    lane_row L = {0.0, 0.0, 0.0, 0};
    unsigned long long won = 0;
    int dig = seg * SEG < m ? merge_segment(rp, col, val, m, r, flags, &won, &L) : 0;
    int act = r < m;
    int len = act ? rp[r + 1] - rp[r] : 0;
    hist_add(shared_hist ? sh_hist : hist, len < kcap ? len : kcap, act);
    int lmin = warp_min(act ? len : INT_MAX), lmax = warp_max(act ? len : 0);
    unsigned long long s2 = warp_sum((unsigned long long)len * (unsigned long long)len);
    int empty = warp_sum(act && len == 0 ? 1 : 0);
    int miss = warp_sum(act && r < ndiag && !L.has ? 1 : 0);
    int zero = warp_sum(act && L.has && L.d == 0.0 ? 1 : 0);
    int neg = warp_sum(act && L.has && L.d < 0.0 ? 1 : 0);
    int dom = warp_sum(act && fabs(L.d) >= L.off ? 1 : 0);
    int strict = __any_sync(0xffffffffu, act && fabs(L.d) > L.off);
    unsigned long long ab = (unsigned long long)__double_as_longlong(L.amax), abm = ab;
    for (int o = 16; o > 0; o >>= 1) {
        unsigned long long t = __shfl_xor_sync(0xffffffffu, abm, o);
        abm = t > abm ? t : abm;
    }
    if ((threadIdx.x & 31) == 0 && seg * SEG < m) {
        atomicAdd(&acc.seg_diags, (unsigned long long)dig);
        atomicAdd(&acc.sum2, s2);
        atomicAdd(&acc.diagonals, won);
        atomicMax(&acc.amax_bits, abm);
        atomicMin(&acc.row_min, lmin);
        atomicMax(&acc.row_max, lmax);
        atomicAdd(&acc.empty, empty);
        atomicAdd(&acc.missing, miss);
        atomicAdd(&acc.zero, zero);
        atomicAdd(&acc.negative, neg);
        atomicAdd(&acc.dominant, dom);
        atomicOr(&acc.strict, strict);
    }
    __syncthreads();
    if (shared_hist)
        for (int i = threadIdx.x; i <= kcap; i += blockDim.x)
            if (sh_hist[i]) atomicAdd(&hist[i], sh_hist[i]);
    if (threadIdx.x == 0) block_flush(&acc, res);
}

__device__ double asym_scale(unsigned long long amax_bits)
{
    double amax = __longlong_as_double((long long)amax_bits);
    if (!(amax > 0) || isinf(amax)) return 1.0;
    int e;
    frexp(amax, &e);
    return ldexp(1.0, -e);
}

/* Position of column key in the sorted col[b, e), or -1. */
__device__ int find_col(const int *col, int b, int e, int key)
{
    while (b < e) {
        int mid = b + ((e - b) >> 1);
        int c = col[mid];
        if (c == key) return mid;
        if (c < key) b = mid + 1; else e = mid;
    }
    return -1;
}

/* Fixed-order tree sums of the block's a and b (blockDim.x a power of two, sa
 * and sb shared arrays of blockDim.x) into out[0] and out[1]. */
__device__ void tree_sum2(double a, double b, double *sa, double *sb, double *out)
{
    sa[threadIdx.x] = a;
    sb[threadIdx.x] = b;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) {
            sa[threadIdx.x] += sa[threadIdx.x + s];
            sb[threadIdx.x] += sb[threadIdx.x + s];
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] = sa[0];
        out[1] = sb[0];
    }
}

/* Fixed-order block sum of two doubles into out[2 * blockIdx.x + {0, 1}]. */
__device__ void block_sum2(double a, double b, double *out)
{
    __shared__ double sa[SYM_THREADS], sb[SYM_THREADS];
    tree_sum2(a, b, sa, sb, out + 2 * blockIdx.x);
}

/* g lanes per row (g a power of two <= 32). */
__global__ void sym_kernel(const int *__restrict__ rp, const int *__restrict__ col,
                           const double *__restrict__ val, int m, int g,
                           an_res *__restrict__ res, double *__restrict__ partial)
{
    double s = asym_scale(res->amax_bits);
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long r64 = t / g;
    int sub = (int)(t % g);
    double na = 0.0, nd = 0.0;
    int pat_bad = 0, num_bad = 0;
    if (r64 < m) {
        int r = (int)r64;
        for (int p = rp[r] + sub; p < rp[r + 1]; p += g) {
            int c = col[p];
            double v = val[p], x = v * s;
            na += x * x;
            if (c == r) continue;
            int q = find_col(col, rp[c], rp[c + 1], r);
            if (q < 0) {
                pat_bad = 1;
                nd += 2.0 * x * x; /* (i, j) and the absent (j, i) */
            } else {
                double b = val[q], d = x - b * s;
                num_bad |= v != b;
                nd += d * d; /* the mirror entry adds the other half */
            }
        }
    }
    pat_bad = __any_sync(0xffffffffu, pat_bad);
    num_bad = __any_sync(0xffffffffu, num_bad);
    if ((threadIdx.x & 31) == 0) {
        if (pat_bad) atomicOr(&res->pat_bad, 1);
        if (num_bad) atomicOr(&res->num_bad, 1);
    }
    block_sum2(na, nd, partial);
}

/* One block: out[0..1] = the fixed-order sums of partial[2 i + {0, 1}]. */
__global__ void sum_kernel(const double *__restrict__ partial, long long nblocks, double *out)
{
    __shared__ double sa[SUM_THREADS], sb[SUM_THREADS];
    double a = 0.0, b = 0.0;
    for (long long i = threadIdx.x; i < nblocks; i += blockDim.x) {
        a += partial[2 * i];
        b += partial[2 * i + 1];
    }
    tree_sum2(a, b, sa, sb, out);
}

/* Lanes per row for the symmetry pass, from the mean row length. */
int lanes_per_row(int64_t nnz, sps_idx m)
{
    double mean = m ? (double)nnz / m : 0.0;
    int g = 1;
    while (g < 32 && g < mean) g <<= 1;
    return g;
}

/* Device scratch of the analysis, carved from one allocation. */
struct an_mem {
    an_res *res;
    unsigned *flags, *hist;
    double *partial, *sums;
    size_t bytes;
};

size_t align256(size_t b) { return (b + 255) & ~(size_t)255; }

sps_status an_alloc(sps_context *ctx, size_t span, int kcap, long long sym_blocks, an_mem *M, void **base)
{
    size_t o_res = 0, o_flags = align256(sizeof(an_res));
    size_t o_hist = o_flags + align256(span * sizeof(unsigned));
    size_t o_part = o_hist + align256(((size_t)kcap + 1) * sizeof(unsigned));
    size_t o_sums = o_part + align256((size_t)sym_blocks * 2 * sizeof(double));
    M->bytes = o_sums + align256(2 * sizeof(double));
    sps_status st = sps__dmalloc(ctx, base, M->bytes);
    if (st != SPS_OK) return st;
    char *b = (char *)*base;
    M->res = (an_res *)(b + o_res);
    M->flags = (unsigned *)(b + o_flags);
    M->hist = (unsigned *)(b + o_hist);
    M->partial = (double *)(b + o_part);
    M->sums = (double *)(b + o_sums);
    return SPS_OK;
}

struct an_host {
    an_res res;
    double sums[2];
    int64_t *ge; /* kcap + 1 */
};

sps_status run_kernels(sps_context *ctx, const sps_dcsr *d, int kcap, an_mem *M, an_host *H)
{
    cudaStream_t s = sps_stream(ctx);
    const int m = d->nrows;
    const size_t span = (size_t)d->nrows + (size_t)d->ncols;
    an_res init;
    memset(&init, 0, sizeof init);
    init.row_min = m ? INT_MAX : 0;
    SPS_CUDA(ctx, cudaMemsetAsync(M->flags, 0, span * sizeof(unsigned), s));
    SPS_CUDA(ctx, cudaMemsetAsync(M->hist, 0, ((size_t)kcap + 1) * sizeof(unsigned), s));
    SPS_CUDA(ctx, cudaMemsetAsync(M->sums, 0, 2 * sizeof(double), s));
    SPS_CUDA(ctx, cudaMemcpyAsync(M->res, &init, sizeof init, cudaMemcpyHostToDevice, s));
    if (m > 0) {
        long long segs = ((long long)m + SEG - 1) / SEG;
        unsigned blocks = (unsigned)((segs + WARPS - 1) / WARPS);
        size_t shmem = kcap < SHARED_BINS ? ((size_t)kcap + 1) * sizeof(unsigned) : 0;
        int ndiag = d->nrows < d->ncols ? d->nrows : d->ncols;
        seg_kernel<<<blocks, WARPS * 32, shmem, s>>>(d->row_ptr, d->col_idx, d->val, m, ndiag, kcap,
                                                    M->flags, M->hist, M->res);
        SPS_LAUNCH_CHECK(ctx, "seg_kernel");
    }
    if (m > 0 && d->nrows == d->ncols) {
        int g = lanes_per_row(d->nnz, m);
        long long blocks = ((long long)m * g + SYM_THREADS - 1) / SYM_THREADS;
        sym_kernel<<<(unsigned)blocks, SYM_THREADS, 0, s>>>(d->row_ptr, d->col_idx, d->val, m, g,
                                                           M->res, M->partial);
        SPS_LAUNCH_CHECK(ctx, "sym_kernel");
        sum_kernel<<<1, SUM_THREADS, 0, s>>>(M->partial, blocks, M->sums);
        SPS_LAUNCH_CHECK(ctx, "sum_kernel");
    }
    unsigned *h32 = (unsigned *)sps__malloc(((size_t)kcap + 1) * sizeof(unsigned));
    if (!h32) return sps__err(ctx, SPS_ERR_NO_MEMORY, "device analysis: out of host memory");
    cudaError_t e = cudaMemcpyAsync(&H->res, M->res, sizeof H->res, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaMemcpyAsync(H->sums, M->sums, sizeof H->sums, cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(h32, M->hist, ((size_t)kcap + 1) * sizeof(unsigned), cudaMemcpyDeviceToHost, s);
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess) {
        sps__free(h32);
        return sps__cuda_fail(ctx, e, "device analysis: read-back", __FILE__, __LINE__);
    }
    for (int k = 0; k <= kcap; k++) H->ge[k] = h32[k];
    sps__free(h32);
    return SPS_OK;
}

/* Counts -> features, with the host analysis's own formulas. */
void finish(const sps_dcsr *d, int kcap, an_host *H, sps_features *f)
{
    const an_res *R = &H->res;
    f->row_min = d->nrows ? R->row_min : 0;
    f->row_max = R->row_max;
    f->empty_rows = R->empty;
    f->row_std = sps__row_std_exact(d->nrows, d->nnz, (int64_t)R->sum2);
    for (int k = kcap; k > 0; k--) H->ge[k - 1] += H->ge[k];
    /* the rule's kmax (<= kcap, since row_max <= n): ge[] is exact up to kcap */
    sps__features_hyb(f, H->ge, sps__hyb_kmax(d->nrows, d->nnz, R->row_max));
    f->diagonals = (sps_idx)R->diagonals;
    f->drm_slots = sps__seg_slots((int64_t)R->seg_diags, SPS_DRM_SEG_ROWS);
    f->missing_diagonal = R->missing;
    f->zero_diagonal = R->zero;
    f->negative_diagonal = R->negative;
    f->dominant_rows = R->dominant;
    f->diag_dominant = R->strict && R->dominant == d->nrows;
    if (d->nrows == d->ncols) {
        f->pattern_symmetric = !R->pat_bad;
        f->symmetric = !R->pat_bad && !R->num_bad;
        f->asymmetry = H->sums[0] > 0 ? sqrt(H->sums[1]) / sqrt(H->sums[0]) : 0.0;
    } else {
        f->asymmetry = NAN;
    }
    sps__features_finish(f);
}

} // namespace

extern "C" sps_status sps__analyze_device(sps_context *ctx, const sps_matrix *A, sps_features *f)
{
    const sps_dcsr *d = NULL;
    int now = 0;
    sps_status st = sps__matrix_device(ctx, A, &d, &now);
    if (st != SPS_OK) return st;
    f->on_gpu = 1;
    if (now) {
        f->upload_ms = d->upload_ms;
        f->upload_gbps = d->gbps;
    }
    sps__strlcpy(f->upload_how, d->how, sizeof f->upload_how);
    double t0 = sps__now_ms();
    /* HYB's K never exceeds 3 nnz / m nor the row length bound n: lengths are
     * histogrammed clamped at kcap, which keeps every count the rule reads. */
    int64_t kc = d->nrows ? 3 * (int64_t)d->nnz / d->nrows : 0;
    int kcap = (int)(kc < d->ncols ? kc : d->ncols);
    int g = lanes_per_row(d->nnz, d->nrows);
    long long sym_blocks = ((long long)d->nrows * g + SYM_THREADS - 1) / SYM_THREADS;
    an_mem M;
    void *base = NULL;
    an_host H;
    memset(&H, 0, sizeof H);
    H.ge = (int64_t *)sps__calloc((size_t)kcap + 1, sizeof(int64_t));
    if (!H.ge) return sps__err(ctx, SPS_ERR_NO_MEMORY, "device analysis: out of host memory");
    st = an_alloc(ctx, (size_t)d->nrows + (size_t)d->ncols, kcap, sym_blocks, &M, &base);
    if (st == SPS_OK) st = run_kernels(ctx, d, kcap, &M, &H);
    if (st == SPS_OK) finish(d, kcap, &H, f);
    sps__dfree(base);
    sps__free(H.ge);
    f->device_ms = sps__now_ms() - t0;
    return st;
}
