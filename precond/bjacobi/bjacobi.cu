/* SPDX-License-Identifier: MIT */
/* spsolve/precond/bjacobi/bjacobi.cu: block-Jacobi on the device.
 *
 * Setup uploads the blocks and their inverses (computed on the host,
 * bjacobi.c). Apply: one thread per row (grid-stride), z_i = the row of its
 * block's inverse times the block's part of r, terms in the host's order; no
 * reduction across threads, no atomics. */
#include "../../core/cuda_check.cuh"
#include "bjacobi.h"

#include <new>

namespace {

__global__ void bjacobi_apply(long long n, const int *__restrict__ start,
                              const int *__restrict__ blk, const long long *__restrict__ off,
                              const double *__restrict__ inv, const double *__restrict__ r,
                              double *__restrict__ z)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        int k = blk[i], s = start[k], m = start[k + 1] - s;
        const double *row = inv + off[k] + (i - s) * m;
        double acc = 0.0;
        for (int j = 0; j < m; j++) acc += row[j] * r[s + j];
        z[i] = acc;
    }
}

int grid_for(sps_context *ctx, long long n, int block)
{
    long long b = (n + block - 1) / block, cap = 32LL * sps__gpu_sm_count(ctx);
    if (b > cap) b = cap;
    return b < 1 ? 1 : (int)b;
}

sps_status apply_dev(sps_precond *pc, const double *r, double *z)
{
    const sps_bjacobi *b = (const sps_bjacobi *)pc->impl;
    bjacobi_apply<<<grid_for(pc->ctx, pc->n, 256), 256, 0, sps_stream(pc->ctx)>>>(
        pc->n, b->start, b->blk, (const long long *)b->off, b->inv, r, z);
    SPS_LAUNCH_CHECK(pc->ctx, "bjacobi_apply");
    return SPS_OK;
}

void dev_destroy(sps_precond *pc)
{
    sps_bjacobi *b = (sps_bjacobi *)pc->impl;
    if (!b) return;
    cudaStreamSynchronize(sps_stream(pc->ctx)); /* no apply may still be reading */
    sps__dfree(b->start);
    sps__dfree(b->blk);
    sps__dfree(b->off);
    sps__dfree(b->inv);
    delete b;
    pc->impl = nullptr;
}

sps_status upload(sps_context *ctx, void **dst, const void *src, size_t bytes)
{
    sps_status st = sps__dmalloc(ctx, dst, bytes);
    return st == SPS_OK ? sps__h2d(ctx, *dst, src, bytes) : st;
}

} // namespace

static_assert(sizeof(int64_t) == sizeof(long long), "off[] is read as long long");
static_assert(sizeof(sps_idx) == sizeof(int), "start[], blk[] are read as int");

extern "C" sps_status sps__bjacobi_gpu(sps_precond *pc, const sps_bjacobi *host)
{
    sps_context *ctx = pc->ctx;
    sps_bjacobi *b = new (std::nothrow) sps_bjacobi();
    if (!b) return sps__err(ctx, SPS_ERR_NO_MEMORY, "bjacobi: out of memory");
    pc->impl = b;
    pc->destroy = dev_destroy;
    b->nblocks = host->nblocks;
    b->max_block = host->max_block;
    size_t nb1 = (size_t)host->nblocks + 1;
    sps_status st = upload(ctx, (void **)&b->start, host->start, nb1 * sizeof *b->start);
    if (st == SPS_OK) st = upload(ctx, (void **)&b->blk, host->blk, (size_t)pc->n * sizeof *b->blk);
    if (st == SPS_OK) st = upload(ctx, (void **)&b->off, host->off, nb1 * sizeof *b->off);
    if (st == SPS_OK)
        st = upload(ctx, (void **)&b->inv, host->inv, (size_t)host->off[host->nblocks] * sizeof *b->inv);
    if (st == SPS_OK) pc->apply = apply_dev;
    return st;
}
