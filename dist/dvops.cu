/* SPDX-License-Identifier: MIT */
/* spsolve/dist/dvops.cu: the distributed layer's vector operations on the
 * GPU (dvops.c is their specification). Every kernel runs on the context's
 * stream. The reduction partials: one thread block per SPS_DIST_BLK rows
 * (each thread one row, then a fixed tree in shared memory), then for longer
 * reduction blocks a fixed tree over their first-level partials: a block's
 * partial depends only on its rows, so the all-gathered partials summed in
 * global block order give the same scalar on any number of ranks. The local
 * SpMV is one warp per row, lanes striding the row's entries in order and a
 * fixed butterfly: each row's product depends only on the row, which the
 * halo plan keeps identical on every partition. */
#include "cuda_check.cuh"

#include "dist.h"

namespace {

const int TPB = 256;

int grid_for(sps_idx n)
{
    long long g = ((long long)n + TPB - 1) / TPB;
    return (int)(g < 1 ? 1 : (g > 65535 * 32 ? 65535 * 32 : g));
}

#define GSTRIDE(i, n) \
    for (sps_idx i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)

__global__ void k_axpby(sps_idx n, double *y, double a, const double *x, double b)
{
    if (b == 0.0) {
        GSTRIDE(i, n) y[i] = a * x[i];
    } else {
        GSTRIDE(i, n) y[i] = a * x[i] + b * y[i];
    }
}

__global__ void k_mul(sps_idx n, double *z, const double *d, const double *r)
{
    GSTRIDE(i, n) z[i] = d[i] * r[i];
}

__global__ void k_cg_update(sps_idx n, double al, double *x, const double *p, double *r,
                            const double *q, const double *d, double *z)
{
    GSTRIDE(i, n)
    {
        x[i] += al * p[i];
        double ri = r[i] - al * q[i];
        r[i] = ri;
        if (d) z[i] = d[i] * ri;
    }
}

/* One block per SPS_DIST_BLK rows (blockDim.x == SPS_DIST_BLK). */
__global__ void k_partials(sps_idx n, const double *a, const double *b, double *part)
{
    __shared__ double sh[SPS_DIST_BLK];
    sps_idx i = (sps_idx)blockIdx.x * SPS_DIST_BLK + threadIdx.x;
    sh[threadIdx.x] = i < n ? a[i] * b[i] : 0.0;
    __syncthreads();
    for (int s = SPS_DIST_BLK / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

/* Second level: part[g] = the fixed tree over G = blockDim.x consecutive
 * first-level partials (G a power of two <= 256; missing ones are 0). */
__global__ void k_group(sps_idx m, const double *first, double *part)
{
    __shared__ double sh[256];
    sps_idx i = (sps_idx)blockIdx.x * blockDim.x + threadIdx.x;
    sh[threadIdx.x] = i < m ? first[i] : 0.0;
    __syncthreads();
    for (int s = (int)blockDim.x / 2; s > 0; s >>= 1) {
        if ((int)threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = sh[0];
}

__global__ void k_gather(sps_idx m, const sps_idx *idx, const double *x, double *buf)
{
    GSTRIDE(k, m) buf[k] = x[idx[k]];
}

__global__ void k_spmv(sps_idx nrows, const sps_idx *rp, const sps_idx *ci, const double *v,
                       const double *x, double *y)
{
    sps_idx w = ((sps_idx)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x & 31;
    if (w >= nrows) return;
    double s = 0.0;
    for (sps_idx p = rp[w] + lane; p < rp[w + 1]; p += 32) s += v[p] * x[ci[p]];
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) y[w] = s;
}

struct dcsr {
    sps_idx nrows, nnz;
    sps_idx *rp, *ci;
    double *v;
};

sps_status d_alloc(sps_context *ctx, size_t bytes, void **p) { return sps__dmalloc(ctx, p, bytes ? bytes : 8); }

void d_free(void *p) { sps__dfree(p); }

sps_status d_copy_in(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (!bytes) return SPS_OK;
    /* host or device source (cudaMemcpyDefault), ordered on the stream */
    SPS_CUDA(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, sps_stream(ctx)));
    SPS_CUDA(ctx, cudaStreamSynchronize(sps_stream(ctx)));
    return SPS_OK;
}

sps_status d_axpby(sps_context *ctx, sps_idx n, double *y, double a, const double *x, double b)
{
    if (n <= 0) return SPS_OK;
    k_axpby<<<grid_for(n), TPB, 0, sps_stream(ctx)>>>(n, y, a, x, b);
    SPS_LAUNCH_CHECK(ctx, "k_axpby");
    return SPS_OK;
}

sps_status d_mul(sps_context *ctx, sps_idx n, double *z, const double *d, const double *r)
{
    if (n <= 0) return SPS_OK;
    k_mul<<<grid_for(n), TPB, 0, sps_stream(ctx)>>>(n, z, d, r);
    SPS_LAUNCH_CHECK(ctx, "k_mul");
    return SPS_OK;
}

sps_status d_cg_update(sps_context *ctx, sps_idx n, double al, double *x, const double *p, double *r,
                       const double *q, const double *d, double *z)
{
    if (n <= 0) return SPS_OK;
    k_cg_update<<<grid_for(n), TPB, 0, sps_stream(ctx)>>>(n, al, x, p, r, q, d, z);
    SPS_LAUNCH_CHECK(ctx, "k_cg_update");
    return SPS_OK;
}

sps_status d_partials(sps_context *ctx, sps_idx n, sps_idx blk, const double *a, const double *b, double *part,
                      double *scr)
{
    sps_idx n1 = (n + SPS_DIST_BLK - 1) / SPS_DIST_BLK;
    if (n1 == 0) return SPS_OK;
    int G = (int)(blk / SPS_DIST_BLK);
    if (G < 1 || G > 256 || (G & (G - 1)) || blk % SPS_DIST_BLK)
        return sps__err(ctx, SPS_ERR_INTERNAL, "dist: reduction block of %d rows (%s:%d)", (int)blk, __FILE__, __LINE__);
    k_partials<<<n1, SPS_DIST_BLK, 0, sps_stream(ctx)>>>(n, a, b, G == 1 ? part : scr);
    SPS_LAUNCH_CHECK(ctx, "k_partials");
    if (G == 1) return SPS_OK;
    k_group<<<(n1 + G - 1) / G, G, 0, sps_stream(ctx)>>>(n1, scr, part);
    SPS_LAUNCH_CHECK(ctx, "k_group");
    return SPS_OK;
}

sps_status d_gather(sps_context *ctx, sps_idx m, const sps_idx *idx, const double *x, double *buf)
{
    if (m <= 0) return SPS_OK;
    k_gather<<<grid_for(m), TPB, 0, sps_stream(ctx)>>>(m, idx, x, buf);
    SPS_LAUNCH_CHECK(ctx, "k_gather");
    return SPS_OK;
}

sps_status d_spmv(sps_context *ctx, const void *A, const double *xe, double *y)
{
    const dcsr *M = (const dcsr *)A;
    if (M->nrows <= 0) return SPS_OK;
    long long blocks = ((long long)M->nrows * 32 + TPB - 1) / TPB;
    k_spmv<<<(unsigned)blocks, TPB, 0, sps_stream(ctx)>>>(M->nrows, M->rp, M->ci, M->v, xe, y);
    SPS_LAUNCH_CHECK(ctx, "k_spmv");
    return SPS_OK;
}

void d_release(void *dA)
{
    dcsr *M = (dcsr *)dA;
    if (!M) return;
    sps__dfree(M->rp);
    sps__dfree(M->ci);
    sps__dfree(M->v);
    sps__free(M);
}

sps_status d_upload(sps_context *ctx, const sps_csr *A, void **dA)
{
    *dA = NULL;
    dcsr *M = (dcsr *)sps__calloc(1, sizeof *M);
    if (!M) return sps__err(ctx, SPS_ERR_NO_MEMORY, "dist: out of memory (%s:%d)", __FILE__, __LINE__);
    M->nrows = A->nrows;
    M->nnz = A->nnz;
    size_t rb = ((size_t)A->nrows + 1) * sizeof(sps_idx), nz = (size_t)A->nnz;
    sps_status st = sps__dmalloc(ctx, (void **)&M->rp, rb);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&M->ci, (nz + 1) * sizeof(sps_idx));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&M->v, (nz + 1) * sizeof(double));
    if (st == SPS_OK) st = sps__h2d(ctx, M->rp, A->row_ptr, rb);
    if (st == SPS_OK && nz) st = sps__h2d(ctx, M->ci, A->col_idx, nz * sizeof(sps_idx));
    if (st == SPS_OK && nz) st = sps__h2d(ctx, M->v, A->val, nz * sizeof(double));
    if (st != SPS_OK) {
        d_release(M);
        return st;
    }
    *dA = M;
    return SPS_OK;
}

sps_status d_copy_out(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (!bytes) return SPS_OK;
    SPS_CUDA(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, sps_stream(ctx)));
    SPS_CUDA(ctx, cudaStreamSynchronize(sps_stream(ctx)));
    return SPS_OK;
}

} // namespace

extern "C" const sps_dvops sps__dvops_cuda = {
    "cuda", 1, d_alloc, d_free, d_copy_in, d_copy_out, d_axpby, d_mul, d_cg_update,
    d_partials, d_gather, d_spmv, d_upload, d_release,
};
