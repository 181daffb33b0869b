/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/lightspmv.cu: the LightSpMV kernel (dynamic rows).
 *
 * The paper's warp-level variant (the seed's notes measured both close
 * together; in the vector-level one each vector takes one row).
 * Work decomposition: a grid sized to fill the device once (8 blocks of 256
 * threads per multiprocessor, fewer for a small matrix) loops until the rows
 * run out. Each round, lane 0 of a warp takes the next 32 / V rows with one
 * integer atomicAdd on a row counter in device memory (zeroed by a memset on
 * the stream before every launch) and broadcasts the first one; vector v of
 * the warp (V lanes) sums row first + v as csr-vector does: lane l the
 * entries l, l+V, ..., then a __shfl_down_sync tree, and its lane 0 writes y.
 * A warp leaves the loop as a whole (the counter value is the same for its 32
 * lanes), so the shuffles always run with the full mask.
 *
 * Wins, in the paper: rows of uneven length, where a static mapping leaves
 * warps idle behind a long row. Loses here: every warp pays an atomic and a
 * broadcast per 32 / V rows, and with the hardware scheduling blocks already
 * in order, the static csr-vector mapping balances as well; the seed measured
 * it slower, and spmv-bench's lightspmv row shows by how much.
 * Deterministic: integer atomics only; each row's sum has a fixed order
 * whichever warp computes it. */
#include "core/cuda_check.cuh"
#include "csr_fmt.h"
#include "kernels.h"

SPS_DECLARE_GPU_BACKEND(sps_lightspmv)

namespace {

constexpr int kBlockThreads = 256;

struct light_dev {
    sps_csr_dev m;          /* first: the CSR family's fetch reads it */
    unsigned int *counter;  /* the next row to hand out */
    unsigned grid;
};

template <typename T, int V, bool BETA>
__global__ void __launch_bounds__(kBlockThreads)
lightspmv_kernel(sps_idx nrows, const sps_idx *__restrict__ row_ptr,
                 const sps_idx *__restrict__ col_idx, const T *__restrict__ val, T alpha,
                 const T *__restrict__ x, T beta, T *__restrict__ y,
                 unsigned int *__restrict__ counter)
{
    constexpr int RPW = 32 / V; /* rows a warp takes per round */
    const int wl = threadIdx.x & 31, lane = wl & (V - 1), vec = wl / V;
    for (;;) {
        unsigned first = 0;
        if (wl == 0) first = atomicAdd(counter, (unsigned)RPW);
        first = __shfl_sync(0xffffffffu, first, 0);
        if (first >= (unsigned)nrows) return; /* the whole warp */
        const int64_t i = (int64_t)first + vec;
        T sum = T(0);
        if (i < nrows) {
            const unsigned end = (unsigned)row_ptr[i + 1];
            for (unsigned j = (unsigned)row_ptr[i] + lane; j < end; j += V)
                sum += val[j] * x[col_idx[j]];
        }
#pragma unroll
        for (int off = V / 2; off > 0; off /= 2) sum += __shfl_down_sync(0xffffffffu, sum, off, V);
        if (lane == 0 && i < nrows) {
            if constexpr (BETA)
                y[i] = alpha * sum + beta * y[i];
            else
                y[i] = alpha * sum;
        }
    }
}

template <typename T, int V>
sps_status launch(sps_context *ctx, const light_dev *d, double alpha, const void *x, double beta,
                  void *y)
{
    cudaStream_t s = sps_stream(ctx);
    SPS_CUDA(ctx, cudaMemsetAsync(d->counter, 0, sizeof *d->counter, s));
    const T *v = (const T *)d->m.val;
    if (beta != 0.0)
        lightspmv_kernel<T, V, true><<<d->grid, kBlockThreads, 0, s>>>(
            d->m.nrows, d->m.row_ptr, d->m.col_idx, v, (T)alpha, (const T *)x, (T)beta, (T *)y,
            d->counter);
    else
        lightspmv_kernel<T, V, false><<<d->grid, kBlockThreads, 0, s>>>(
            d->m.nrows, d->m.row_ptr, d->m.col_idx, v, (T)alpha, (const T *)x, T(0), (T *)y,
            d->counter);
    SPS_LAUNCH_CHECK(ctx, "lightspmv_kernel");
    return SPS_OK;
}

template <typename T>
sps_status dispatch(sps_context *ctx, const light_dev *d, double alpha, const void *x,
                    double beta, void *y)
{
    switch (d->m.param) {
    case 2: return launch<T, 2>(ctx, d, alpha, x, beta, y);
    case 4: return launch<T, 4>(ctx, d, alpha, x, beta, y);
    case 8: return launch<T, 8>(ctx, d, alpha, x, beta, y);
    case 16: return launch<T, 16>(ctx, d, alpha, x, beta, y);
    case 32: return launch<T, 32>(ctx, d, alpha, x, beta, y);
    default:
        return sps__err(ctx, SPS_ERR_INTERNAL, "lightspmv: group size %d is not 2..32", d->m.param);
    }
}

void free_dev(light_dev *d)
{
    if (!d) return;
    sps__csr_dev_free(&d->m);
    sps__dfree(d->counter);
    sps__free(d);
}

} // namespace

extern "C" sps_status sps_lightspmv_upload(sps_context *ctx, const sps_fmt *fmt, int single,
                                           void **dev, sps_spmv_stats *st)
{
    const sps_fmt_csr *f = (const sps_fmt_csr *)fmt;
    *dev = NULL;
    light_dev *d = (light_dev *)sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "lightspmv: out of memory");
    sps_status s = sps__csr_dev_upload(ctx, &f->A, single, &d->m);
    if (s == SPS_OK) s = sps__dmalloc(ctx, (void **)&d->counter, sizeof *d->counter);
    if (s != SPS_OK) {
        free_dev(d);
        return s;
    }
    d->m.param = f->param;
    /* one wave of resident blocks, or fewer when the rows need fewer */
    const int64_t rows_per_block = (int64_t)kBlockThreads / f->param;
    const int64_t need = ((int64_t)f->A.nrows + rows_per_block - 1) / rows_per_block;
    const int64_t wave = 8 * (int64_t)(sps__gpu_sm_count(ctx) > 0 ? sps__gpu_sm_count(ctx) : 1);
    d->grid = (unsigned)(need < wave ? (need > 0 ? need : 1) : wave);
    st->device_bytes = d->m.bytes + sizeof *d->counter;
    *dev = d;
    return SPS_OK;
}

extern "C" sps_status sps_lightspmv_apply(sps_context *ctx, void *dev, double alpha,
                                          const void *x, double beta, void *y)
{
    const light_dev *d = (const light_dev *)dev;
    if (d->m.nrows == 0) return SPS_OK;
    return d->m.single ? dispatch<float>(ctx, d, alpha, x, beta, y)
                       : dispatch<double>(ctx, d, alpha, x, beta, y);
}

extern "C" sps_status sps_lightspmv_update_dev(sps_context *ctx, const sps_fmt *f, void *dev)
{
    return sps__csr_fmt_update_dev(ctx, f, dev);
}

extern "C" void sps_lightspmv_free_dev(void *dev) { free_dev((light_dev *)dev); }
