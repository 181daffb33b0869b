/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/kernels.cuh: what every solver .cu shares (vops_cuda.cu and
 * each method's <method>_kernels.cu): the launch shape, the fixed-order block
 * sums, the partials layout, and the one-block kernel that sums the partials
 * of a reduction and runs a finish step.
 *
 * Work decomposition. Every vector kernel runs `grid` blocks of 256 threads
 * over a grid-stride loop, where grid = min(ceil(n / 256), 1024) depends on n
 * only. A reduction is two launches: each block reduces its elements (warp
 * shuffles, then the 8 warp sums in shared memory) into a fixed slot of a
 * partials array (part[q * grid + block] for sum q); then one block of 256
 * threads sums the partials in a fixed order and runs the finish step. No
 * atomics anywhere, so a solve is bitwise repeatable on a given GPU. */
#ifndef SPS_SOLVERS_KERNELS_CUH
#define SPS_SOLVERS_KERNELS_CUH

#include "../core/cuda_check.cuh"
#include "../spmv/backend.h"
#include "../spmv/dev_rows.cuh" /* onek_row */
#include "vops.h"

#define TPB 256
#define RED_MAX_BLOCKS 1024

/* Blocks of every device reduction for length n (fixed for a given n). */
static inline int sps__kgrid(sps_idx n)
{
    int64_t g = ((int64_t)n + TPB - 1) / TPB;
    return g < 1 ? 1 : g > RED_MAX_BLOCKS ? RED_MAX_BLOCKS : (int)g;
}

namespace {

/* Sum v[] over the block in a fixed order; the totals end in thread 0. Every
 * thread of the block must call it. */
template <int NS>
__device__ __forceinline__ void block_sum(double (&v)[NS])
{
    __shared__ double sh[NS][TPB / 32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
#pragma unroll
    for (int q = 0; q < NS; q++)
        for (int off = 16; off > 0; off >>= 1) v[q] += __shfl_down_sync(0xffffffffu, v[q], off);
    __syncthreads(); /* an earlier call's readers are done with sh */
    if (lane == 0)
#pragma unroll
        for (int q = 0; q < NS; q++) sh[q][wid] = v[q];
    __syncthreads();
    if (wid == 0) {
#pragma unroll
        for (int q = 0; q < NS; q++) {
            double t = lane < TPB / 32 ? sh[q][lane] : 0.0;
            for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
            v[q] = t;
        }
    }
}

/* Block totals into part[q * G + block]. */
template <int NS>
__device__ __forceinline__ void put_partials(double (&v)[NS], double *part, int G)
{
    block_sum<NS>(v);
    if (threadIdx.x == 0)
#pragma unroll
        for (int q = 0; q < NS; q++) part[q * G + blockIdx.x] = v[q];
}

#define GRID_STRIDE(i, n)                                                                   \
    for (int64_t i = (int64_t)blockIdx.x * TPB + threadIdx.x; i < (n);                     \
         i += (int64_t)gridDim.x * TPB)

/* One block: sum the ns partials sums (fixed order), then f(v) on every
 * thread (the totals are in thread 0's v; f decides who works). Gated: a
 * stopped solve does nothing. */
template <class F>
__global__ void __launch_bounds__(TPB) k_reduce_finish(const sps_kstate *st, int gated,
                                                       const double *part, int G, int ns, F f)
{
    if (gated && st->stop) return;
    double v[SPS_K_NSUM];
#pragma unroll
    for (int q = 0; q < SPS_K_NSUM; q++) v[q] = 0.0;
    for (int q = 0; q < ns; q++)
        for (int i = threadIdx.x; i < G; i += TPB) v[q] += part[q * G + i];
    block_sum<SPS_K_NSUM>(v);
    f(v);
}

/* The device's opt-in dynamic shared memory limit and kernel K's
 * attributes; false (the error cleared) where it cannot say. */
template <typename K>
bool onek_limits(K kernel, int *lim, cudaFuncAttributes *fa)
{
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(lim, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess ||
        cudaFuncGetAttributes(fa, kernel) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return true;
}

/* The one-kernel engine's dynamic shared memory for k vectors of n doubles,
 * if the device allows it for the kernel K beside K's static shared memory
 * (the attribute is set for K); else 0: K's global-memory variant runs. */
template <typename K>
size_t onek_smem_bytes(K kernel, size_t bytes)
{
    int lim = 0;
    cudaFuncAttributes fa;
    if (!onek_limits(kernel, &lim, &fa) || bytes + fa.sharedSizeBytes > (size_t)lim ||
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes) != cudaSuccess) {
        cudaGetLastError(); /* not an error: the global-memory variant runs */
        return 0;
    }
    return bytes;
}

/* The dynamic shared memory the device leaves kernel K beyond `bytes` (0
 * where it leaves none or cannot say). */
template <typename K>
size_t onek_room(K kernel, size_t bytes)
{
    int lim = 0;
    cudaFuncAttributes fa;
    if (!onek_limits(kernel, &lim, &fa) || bytes + fa.sharedSizeBytes >= (size_t)lim) return 0;
    return (size_t)lim - fa.sharedSizeBytes - bytes;
}

template <typename K>
size_t onek_smem(K kernel, int n, int k)
{
    return onek_smem_bytes(kernel, (size_t)k * (size_t)n * sizeof(double));
}

/* The one-kernel engine (engine.h): one block of OKT threads; the block's
 * sums in a fixed order (warp shuffles, then the OKT/32 warp sums), totals in
 * thread 0. Every thread of the block must call it, and the block must pass
 * a barrier after thread 0 has used the totals and before the next call with
 * the same NS (the finish steps' __syncthreads does): warp 0 reads the warp
 * sums there. */
constexpr int OKT = 1024;

template <int NS>
__device__ __forceinline__ void onek_sum(double (&v)[NS])
{
    __shared__ double sh[NS][OKT / 32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
#pragma unroll
    for (int q = 0; q < NS; q++)
        for (int off = 16; off > 0; off >>= 1) v[q] += __shfl_down_sync(0xffffffffu, v[q], off);
    if (lane == 0)
#pragma unroll
        for (int q = 0; q < NS; q++) sh[q][wid] = v[q];
    __syncthreads();
    if (wid == 0) {
#pragma unroll
        for (int q = 0; q < NS; q++) {
            double t = sh[q][lane];
            for (int off = 16; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
            v[q] = t;
        }
    }
}

/* A load from shared memory by a generic pointer that points there, as a
 * shared-memory load: where the pointer's space is not known at compile
 * time (a struct's member, a pointer that is shared in one branch and
 * global in another) nvcc emits a generic load, which costs more. volatile:
 * not moved across the barrier after the stage's copy. The CPU emulation
 * loads plainly. */
template <class T>
__device__ __forceinline__ T onek_lds(const T *p)
{
#ifdef __CUDA_ARCH__
    T v;
    const unsigned a = (unsigned)__cvta_generic_to_shared(p);
    if constexpr (sizeof(T) == 8) asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(a));
    else asm volatile("ld.shared.u16 %0, [%1];" : "=h"(v) : "r"(a));
    return v;
#else
    return *p;
#endif
}

/* The operator's rows as a register layout's SpMVs read them: A, and the
 * copies in the launch's shared memory of the entries onek_stage_to staged:
 * a CSR operator's values of entries [0, nv) and 16-bit columns of entries
 * [0, nc). A DIA operator's staged values are A.val itself (plain loads:
 * poisson2d:63 on the H200, CG 4.3 us an iteration, BiCGSTAB 9.3, against
 * 4.7 and 10.5 through onek_lds and __ldg). */
struct onek_A {
    sps_dev_rows A;
    const double *sv;
    const unsigned short *sc;
    sps_idx nv, nc;
};

/* Rows i_k = threadIdx.x + k OKT (k < R, those below n) of the operator's
 * device rows times x, into s[k]: each row's terms in onek_row's order (so
 * bitwise its sums, wherever an entry is read from), the R rows' loads
 * interleaved. x is in shared memory (every caller's is; the staged loops
 * load it as such). */
template <int R>
__device__ __forceinline__ void onek_rows(const onek_A &S, const double *x, int n, double (&s)[R])
{
    const sps_dev_rows &A = S.A;
#pragma unroll
    for (int k = 0; k < R; k++) s[k] = 0.0;
    if (A.kind == SPS_ROWS_CSR) {
        sps_idx b[R], e[R], m = 0;
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            b[k] = i < n ? A.row_ptr[i] : 0;
            e[k] = i < n ? A.row_ptr[i + 1] : 0;
            m = e[k] - b[k] > m ? e[k] - b[k] : m;
        }
        /* three loops, not one with a test a term: the test's loads from
         * either space cost more than the stage saved (H200, poisson2d:63
         * CG: 7.9 us an iteration unstaged against 6.4 with the plain loop);
         * the plain loop's generic loads as they were (through __ldg and
         * onek_lds: 7.3) */
        if (S.nv >= A.nnz && S.nc >= A.nnz) { /* all staged */
            for (sps_idx t = 0; t < m; t++)
#pragma unroll
                for (int k = 0; k < R; k++)
                    if (b[k] + t < e[k])
                        s[k] += onek_lds(S.sv + b[k] + t) * onek_lds(x + onek_lds(S.sc + b[k] + t));
        } else if (S.nv || S.nc) { /* a prefix staged */
            for (sps_idx t = 0; t < m; t++)
#pragma unroll
                for (int k = 0; k < R; k++) {
                    const sps_idx j = b[k] + t;
                    if (j < e[k]) {
                        const double a = j < S.nv ? onek_lds(S.sv + j) : __ldg(A.val + j);
                        const sps_idx c = j < S.nc ? (sps_idx)onek_lds(S.sc + j) : __ldg(A.col_idx + j);
                        s[k] += a * onek_lds(x + c);
                    }
                }
        } else {
            for (sps_idx t = 0; t < m; t++)
#pragma unroll
                for (int k = 0; k < R; k++)
                    if (b[k] + t < e[k]) s[k] += A.val[b[k] + t] * x[A.col_idx[b[k] + t]];
        }
        return;
    }
    /* In 32-bit unsigned arithmetic (some 40% fewer instructions a term
     * than 64-bit): for 0 <= i < n and any offset o, (unsigned)i + (unsigned)o
     * < n exactly when 0 <= i + o < n (a negative i + o wraps to 2^31 or
     * more; n < 2^31), and d n + i < ndiag n < 2^31 (dia stores at most
     * SPS_IDX_MAX slots). The same terms as onek_row's in the same order. */
    const unsigned nu = (unsigned)A.n;
    for (sps_idx d = 0; d < A.ndiag; d++) {
        const unsigned o = (unsigned)A.off[d], dn = (unsigned)d * nu;
#pragma unroll
        for (int k = 0; k < R; k++) {
            const int i = threadIdx.x + k * OKT;
            const unsigned c = (unsigned)i + o;
            if (i < n && c < nu) s[k] += A.val[dn + (unsigned)i] * x[c];
        }
    }
}

/* The one kernel's vector layout asked for by SPS_ONEK_LAYOUT (tests compare
 * them; each method's launcher picks otherwise): ONEK_GLOBAL, ONEK_SHARED,
 * or -1 (unset, "regs" or unknown: registers where the rows per thread
 * allow, then shared memory, then global memory). */
enum { ONEK_GLOBAL = 0, ONEK_SHARED = 1 };
inline int onek_layout()
{
    const char *f = getenv("SPS_ONEK_LAYOUT");
    return !f ? -1 : !strcmp(f, "global") ? ONEK_GLOBAL : !strcmp(f, "shared") ? ONEK_SHARED : -1;
}

/* The same with every entry read from A's own arrays. */
template <int R>
__device__ __forceinline__ void onek_rows(const sps_dev_rows &A, const double *x, int n, double (&s)[R])
{
    onek_rows<R>(onek_A{A, NULL, NULL, 0, 0}, x, n, s);
}

/* What of the operator's entries a register layout keeps in the launch's
 * shared memory, in the room left after its vectors: every SpMV of the
 * launch reads them again, and these loads then come from shared memory
 * instead of L2.
 *   DIA: all ndiag x n values (nval = ndiag n), or none.
 *   CSR with a DIA view (sps_dev_rows.view_ndiag, view > 0): the rows as
 *        DIA over the view's diagonals, all of them (nval = view n), where
 *        they fit and take at most ONEK_VIEW_SLOTS slots per entry; the
 *        launch's prologue scatters the entries into zeroed slots
 *        (onek_stage_to). The SpMV then reads no column index and every
 *        load is a warp's consecutive words. Each row's entries come in
 *        the same order (columns ascending are diagonals ascending); the
 *        slots the CSR lacks add 0 * x[c], which changes no sum while x is
 *        finite: s + 0 is s but for s = -0.0, which a sum from +0.0 by
 *        fused multiply-adds becomes only where its terms underflow to
 *        negative zeros, and which then comes out +0.0 (the same value).
 *        So the sums are the CSR's, bitwise but for that sign; an Inf in x
 *        makes NaN there.
 *   CSR otherwise: the columns of entries [0, ncol) as 16-bit numbers (n <=
 *        65536), then the values of entries [0, nval): columns first, as 2
 *        bytes of room save 4 bytes of L2 reads where a value's 8 save 8.
 * Layout: nval doubles, then ncol unsigned shorts. The same entries in the
 * same order: bitwise the same sums. SPS_ONEK_VALS=0 stages nothing;
 * SPS_ONEK_VIEW=0 stages no view; SPS_ONEK_STAGE_MAX=B caps the room at B
 * bytes, and stages a CSR operator below ONEK_STAGE_MIN too (tests: a
 * partial or whole stage). */
struct onek_stage {
    sps_idx nval, ncol;
    int view;                    /* CSR as DIA: its diagonals (0: no view) */
    sps_idx off[SPS_VIEW_DIAGS]; /* ... ascending */
};

/* A view takes at most this many slots per CSR entry (auto's small dia rule,
 * spmv/select.c dia_small_max_slots). */
constexpr double ONEK_VIEW_SLOTS = 1.5;

/* A CSR operator whose entries take fewer bytes than this is not staged:
 * beside a small stage L1 holds them as well, and the stage's loads cost
 * more (H200, CG, us an iteration staged / not: 494_bus, 20 KB of entries,
 * 2.86 / 2.60; sherman1 BiCGSTAB, 45 KB, 6.15 / 6.31; bcsstk09, 221 KB,
 * 7.12 / 7.85; poisson2d:63, 235 KB, 5.56 / 6.4). */
constexpr size_t ONEK_STAGE_MIN = 32768;

inline size_t onek_stage_bytes(const onek_stage &g)
{
    return (size_t)g.nval * sizeof(double) + (size_t)g.ncol * sizeof(unsigned short);
}

/* The diagonals of A's DIA view where a kernel may use it (CSR rows that
 * list at most SPS_VIEW_DIAGS diagonals, at most ONEK_VIEW_SLOTS slots an
 * entry, SPS_ONEK_VIEW not 0), else 0; the room is the caller's test. */
inline int onek_view_ndiag(const sps_dev_rows &A)
{
    const char *vw = getenv("SPS_ONEK_VIEW");
    const double slots = (double)A.view_ndiag * (double)A.n;
    if (A.kind != SPS_ROWS_CSR || A.nnz <= 0 || A.view_ndiag <= 0 || A.view_ndiag > SPS_VIEW_DIAGS ||
        !A.view_off || (vw && !strcmp(vw, "0")) || slots > ONEK_VIEW_SLOTS * (double)A.nnz)
        return 0;
    return (int)A.view_ndiag;
}

inline onek_stage onek_stage_plan(const sps_dev_rows &A, size_t room)
{
    onek_stage g = {};
    const char *f = getenv("SPS_ONEK_VALS"), *cap = getenv("SPS_ONEK_STAGE_MAX");
    if (f && !strcmp(f, "0")) return g;
    if (cap && strtoull(cap, NULL, 10) < room) room = (size_t)strtoull(cap, NULL, 10);
    if (A.kind == SPS_ROWS_DIA) {
        if ((size_t)A.nnz * sizeof(double) <= room) g.nval = A.nnz;
        return g;
    }
    if (A.kind != SPS_ROWS_CSR || A.nnz <= 0) return g;
    const size_t slots = (size_t)A.view_ndiag * (size_t)A.n;
    if (onek_view_ndiag(A) && slots * sizeof(double) <= room) {
        g.nval = (sps_idx)slots;
        g.view = (int)A.view_ndiag;
        for (int d = 0; d < g.view; d++) g.off[d] = A.view_off[d];
        return g;
    }
    if (A.n > 65536) return g;
    if (!cap && (size_t)A.nnz * (sizeof(double) + sizeof(sps_idx)) < ONEK_STAGE_MIN) return g;
    const size_t nnz = (size_t)A.nnz, nc = room / sizeof(unsigned short);
    g.ncol = (sps_idx)(nc < nnz ? nc : nnz);
    const size_t nv = (room - (size_t)g.ncol * sizeof(unsigned short)) / sizeof(double);
    g.nval = (sps_idx)(nv < nnz ? nv : nnz);
    return g;
}

/* The DIA view's diagonals (ascending, in a kernel parameter: constant
 * indices read its words in place) into shared memory, by threads 0 .. 31;
 * a barrier before any other thread reads them. */
__device__ __forceinline__ void onek_view_offs(const sps_idx (&off)[SPS_VIEW_DIAGS], sps_idx *voff)
{
#pragma unroll
    for (int q = 0; q < SPS_VIEW_DIAGS; q++)
        if ((int)threadIdx.x == q) voff[q] = off[q];
}

/* Row g of the CSR A as DIA over the nd diagonals off: slot[d stride] for
 * diagonal d, zeroed, then the row's entries in their diagonals' slots (a
 * row's columns ascend, so its diagonal index only grows). The calling
 * thread owns the row's slots. */
__device__ __forceinline__ void onek_view_row(const sps_dev_rows &A, int g, const sps_idx (&off)[SPS_VIEW_DIAGS],
                                              int nd, double *slot, size_t stride)
{
    for (int d = 0; d < nd; d++) slot[(size_t)d * stride] = 0.0;
    int d = 0;
    const sps_idx e = A.row_ptr[g + 1];
    for (sps_idx j = A.row_ptr[g]; j < e; j++) {
        const sps_idx o = A.col_idx[j] - g;
        while (d + 1 < nd && off[d] < o) d++; /* found: the view lists every diagonal */
        slot[(size_t)d * stride] = A.val[j];
    }
}

/* A CSR's DIA view (g.view > 0) in dst: each thread its rows
 * (onek_view_row, stride n); the diagonals in shared memory. Returns the
 * rows as DIA, read there. The caller's barrier follows. */
__device__ __forceinline__ onek_A onek_view_to(const sps_dev_rows &A, double *dst, const onek_stage &g)
{
    __shared__ sps_idx voff[SPS_VIEW_DIAGS];
    onek_view_offs(g.off, voff);
    const int n = (int)A.n;
    for (int i = (int)threadIdx.x; i < n; i += OKT) onek_view_row(A, i, g.off, g.view, dst + i, (size_t)n);
    sps_dev_rows B = A;
    B.kind = SPS_ROWS_DIA;
    B.ndiag = g.view;
    B.nnz = g.nval;
    B.max_row = g.view;
    B.off = voff;
    B.val = dst;
    return onek_A{B, NULL, NULL, 0, 0};
}

/* Every thread copies its share of the staged entries to dst (the plan's
 * onek_stage_bytes of room); returns the rows reading them there. The
 * caller's barrier follows. */
__device__ __forceinline__ onek_A onek_stage_to(const sps_dev_rows &A, double *dst, const onek_stage &g)
{
    if (g.view) return onek_view_to(A, dst, g);
    unsigned short *sc = (unsigned short *)(dst + g.nval);
    for (sps_idx i = threadIdx.x; i < g.nval; i += OKT) dst[i] = A.val[i];
    if (A.kind == SPS_ROWS_DIA) { /* the plain loads of the loop below, from here */
        sps_dev_rows B = A;
        if (g.nval) B.val = dst;
        return onek_A{B, NULL, NULL, 0, 0};
    }
    for (sps_idx i = threadIdx.x; i < g.ncol; i += OKT) sc[i] = (unsigned short)A.col_idx[i];
    return onek_A{A, dst, sc, g.nval, g.ncol};
}

} /* namespace */

#define LAUNCH(w, kernel, ...)                                                              \
    do {                                                                                    \
        kernel<<<sps__kgrid((w)->n), TPB, 0, sps_stream((w)->ctx)>>>(__VA_ARGS__);          \
        SPS_LAUNCH_CHECK((w)->ctx, #kernel);                                                \
    } while (0)

/* The finish f (a functor) on the last reduction's partials. */
#define LAUNCH_FINISH(w, fin, functor)                                                      \
    do {                                                                                    \
        k_reduce_finish<<<1, TPB, 0, sps_stream((w)->ctx)>>>((w)->st, (fin)->gated, (w)->red, \
                                                             sps__kgrid((w)->n), (w)->nsum,  \
                                                             functor);                      \
        SPS_LAUNCH_CHECK((w)->ctx, "k_reduce_finish");                                      \
    } while (0)

/* A method finish step that runs on thread 0, for a method whose state is S
 * (CG, BiCGSTAB): the method's .cu defines
 *   __device__ void sps_method_finish(int step, sps_kstate *, S *, const double *v, double *hist)
 * (found by argument-dependent lookup when the template is instantiated). */
template <class S>
struct thread0_fin {
    int step;
    sps_kstate *st;
    S *ms;
    double *hist;
    __device__ void operator()(const double *v) const
    {
        if (threadIdx.x == 0) sps_method_finish(step, st, ms, v, hist);
    }
};

/* An sps_kfin fn: thread0_fin on the last reduction's partials. */
template <class S>
static sps_status finish_thread0(sps_kws *w, const sps_kfin *f)
{
    thread0_fin<S> fn = {f->step, w->st, (S *)w->ms, w->hist};
    LAUNCH_FINISH(w, f, fn);
    return SPS_OK;
}

#endif /* SPS_SOLVERS_KERNELS_CUH */
