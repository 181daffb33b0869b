/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/vops_cuda.cu: the generic vector operations on the GPU (the
 * same operations as vops_host.c, which is their specification). The launch
 * shape and the fixed-order reductions are in kernels.cuh; each method's fused
 * kernels are beside the method (solvers/<method>/<method>_kernels.cu).
 *
 * Gating. A kernel that changes x, r, p, ... or a scalar reads st->stop first
 * and returns when it is set; the whole grid sees the same value (nothing
 * writes the state while a vector kernel runs), so the returns are uniform.
 *
 * Where it wins or loses: the vector kernels are memory-bound; the fixed costs
 * are about 3 to 5 us per launch. */
#include "../core/gpu.h"
#include "kernels.cuh"
#include "vops_dot.cuh"

namespace {

__global__ void __launch_bounds__(TPB) k_fill(int n, double *x, double v)
{
    GRID_STRIDE(i, n) x[i] = v;
}

__global__ void __launch_bounds__(TPB) k_add(int n, double *x, const double *z)
{
    GRID_STRIDE(i, n) x[i] += z[i];
}

__global__ void __launch_bounds__(TPB) k_mul(int n, double *z, const double *d, const double *r)
{
    GRID_STRIDE(i, n) z[i] = d[i] * r[i];
}

/* max |x_i| of the block into part[block] (a maximum is exact and free of
 * order; a NaN propagates). */
__device__ __forceinline__ double max_nan(double m, double a)
{
    return (m != m || a <= m) ? m : a;
}

__device__ __forceinline__ double block_max(double m)
{
    __shared__ double sh[TPB / 32];
    const int lane = threadIdx.x & 31, wid = threadIdx.x >> 5;
    for (int off = 16; off > 0; off >>= 1) m = max_nan(m, __shfl_down_sync(0xffffffffu, m, off));
    __syncthreads();
    if (lane == 0) sh[wid] = m;
    __syncthreads();
    if (wid == 0) {
        m = lane < TPB / 32 ? sh[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1) m = max_nan(m, __shfl_down_sync(0xffffffffu, m, off));
    }
    return m;
}

__global__ void __launch_bounds__(TPB) k_amax(int n, const double *x, double *part)
{
    double m = 0.0;
    GRID_STRIDE(i, n) m = max_nan(m, fabs(x[i]));
    m = block_max(m);
    if (threadIdx.x == 0) part[blockIdx.x] = m;
}

/* One block: the maximum of the partials, then SPS_KC_AMAX (st->nrm_e). */
__global__ void __launch_bounds__(TPB) k_amax_finish(sps_kstate *st, const double *part, int G,
                                                     double *hist)
{
    double m = 0.0;
    for (int i = threadIdx.x; i < G; i += TPB) m = max_nan(m, part[i]);
    m = block_max(m);
    if (threadIdx.x == 0) {
        double s[SPS_K_NSUM] = {m};
        sps__k_common_finish(SPS_KC_AMAX, st, s, hist);
    }
}

/* sum (x_i 2^-e)^2 with e = st->nrm_e (exact scaling by a power of two). */
__global__ void __launch_bounds__(TPB) k_nrm_sum(int n, const double *x, const sps_kstate *st,
                                                 double *part)
{
    const double f = ldexp(1.0, -(int)st->nrm_e);
    double v[1] = {0.0};
    GRID_STRIDE(i, n)
    {
        double t = x[i] * f;
        v[0] += t * t;
    }
    put_partials<1>(v, part, gridDim.x);
}

__global__ void __launch_bounds__(TPB) k_axpby(int n, double *y, double a, const double *x,
                                               double b)
{
    if (b == 0.0) {
        GRID_STRIDE(i, n) y[i] = a * x[i];
    } else {
        GRID_STRIDE(i, n) y[i] = a * x[i] + b * y[i];
    }
}

/* The common finish steps on thread 0. */
struct common_fin {
    int step;
    sps_kstate *st;
    double *hist;
    __device__ void operator()(const double *v) const
    {
        if (threadIdx.x == 0) sps__k_common_finish(step, st, v, hist);
    }
};

} /* namespace */

/* ---- host side ------------------------------------------------------------ */

static sps_status c_alloc(sps_context *ctx, size_t bytes, void **p) { return sps__dmalloc(ctx, p, bytes); }

static void c_free(void *p) { sps__dfree(p); }

/* b and x0 from host memory: through the context's pinned staging ring (a
 * plain pageable copy moved poisson3d:160's b and x0, 33 MB each, at 5.3
 * GB/s on the H100 machine: 12 ms of the solve's setup). */
static sps_status c_copy_in(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    return sps__h2d_pinned(ctx, 1, &dst, &src, &bytes, NULL, 0);
}

static sps_status c_copy_out(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    return sps__d2h_pinned(ctx, dst, src, bytes);
}

static int c_is_device(const void *p) { return sps__is_device_ptr(p); }

/* Room for SPS_K_NSUM sums of RED_MAX_BLOCKS partials whatever n (64 KiB):
 * the reductions use sps__kgrid(n) partials a sum, but a backend's fused
 * SpMV-plus-dot (sps__kr_spmv_dot: red_len / SPS_K_NSUM partials at most)
 * may want more blocks than that. csr-vector gives each row a group of up to
 * 32 lanes, so its natural grid is up to 32 times sps__kgrid(n); capped there
 * (bcsstk15, 3948 rows of about 30 entries: 16 blocks, 31 rows a warp in
 * turn) fused CG ran 41 us an iteration against classic's 27 (H100). dia and
 * drm (a thread a row) never wanted more than sps__kgrid(n): unchanged. */
static size_t c_red_len(sps_idx n)
{
    (void)n;
    return SPS_K_NSUM * (size_t)RED_MAX_BLOCKS;
}

static sps_status c_copy(sps_kws *w, double *dst, const double *src)
{
    if (dst == src) return SPS_OK;
    return sps__d2d(w->ctx, dst, src, (size_t)w->n * sizeof *dst);
}

static sps_status c_fill(sps_kws *w, double *x, double v)
{
    LAUNCH(w, k_fill, w->n, x, v);
    return SPS_OK;
}

static sps_status c_add(sps_kws *w, double *x, const double *z)
{
    LAUNCH(w, k_add, w->n, x, z);
    return SPS_OK;
}

static sps_status c_mul(sps_kws *w, double *z, const double *d, const double *r)
{
    LAUNCH(w, k_mul, w->n, z, d, r);
    return SPS_OK;
}

static sps_status c_axpby(sps_kws *w, double *y, double a, const double *x, double b)
{
    LAUNCH(w, k_axpby, w->n, y, a, x, b);
    return SPS_OK;
}

static sps_status c_finish(sps_kws *w, const sps_kfin *f)
{
    common_fin fn = {f->step, w->st, w->hist};
    LAUNCH_FINISH(w, f, fn);
    return SPS_OK;
}

static sps_status c_dot(sps_kws *w, int ns, const double *const *a, const double *const *b,
                        const sps_kfin *f)
{
    if (ns < 1 || ns > SPS_K_NSUM)
        return sps__err(w->ctx, SPS_ERR_INTERNAL, "dot: %d sums (1 to %d) (%s:%d)", ns, SPS_K_NSUM,
                        __FILE__, __LINE__);
    cudaStream_t s = sps_stream(w->ctx);
    const unsigned g = sps__kgrid(w->n);
    switch (ns) { /* 1-3 sums here, 4 and more in vops_dot_wide.cu's module (vops_dot.cuh) */
    case 1: k_dot<1><<<g, TPB, 0, s>>>(w->n, sps__dot_args(1, a, b), w->st, f->gated, w->red); break;
    case 2: k_dot<2><<<g, TPB, 0, s>>>(w->n, sps__dot_args(2, a, b), w->st, f->gated, w->red); break;
    case 3: k_dot<3><<<g, TPB, 0, s>>>(w->n, sps__dot_args(3, a, b), w->st, f->gated, w->red); break;
    default: sps__vops_dot_wide(s, g, ns, w->n, a, b, w->st, f->gated, w->red); break;
    }
    SPS_LAUNCH_CHECK(w->ctx, "k_dot");
    w->nsum = ns;
    return f->fn(w, f);
}

static sps_status c_nrm2(sps_kws *w, const double *x, const sps_kfin *f)
{
    LAUNCH(w, k_amax, w->n, x, w->red);
    k_amax_finish<<<1, TPB, 0, sps_stream(w->ctx)>>>(w->st, w->red, sps__kgrid(w->n), w->hist);
    SPS_LAUNCH_CHECK(w->ctx, "k_amax_finish");
    LAUNCH(w, k_nrm_sum, w->n, x, w->st, w->red);
    w->nsum = 1;
    return f->fn(w, f);
}

static sps_status c_get_state(sps_kws *w, sps_kstate *out)
{
    return sps__d2h(w->ctx, out, w->st, sizeof *out);
}

static sps_status c_put_state(sps_kws *w, const sps_kstate *in, const void *ms, size_t ms_bytes)
{
    sps_status e = sps__h2d(w->ctx, w->st, in, sizeof *in);
    if (e == SPS_OK && ms && ms_bytes) e = sps__h2d(w->ctx, w->ms, ms, ms_bytes);
    return e;
}

static sps_status c_get_history(sps_kws *w, double *out, int64_t len)
{
    return sps__d2h(w->ctx, out, w->hist, (size_t)len * sizeof *out);
}

extern "C" const sps_vops sps__vops_cuda = SPS_VOPS_TABLE(c, "cuda", 1);
