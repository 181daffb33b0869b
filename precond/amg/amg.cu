/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/amg.cu: the AMG V-cycle on the device.
 *
 * Setup uploads the hierarchy (amg_setup.c's, or amg_dsetup.cu's, whose
 * device levels are on the device already): each level's A (level 0: the
 * solve's operator), P and R as csr-vector products (csr_vector.cu's kernel;
 * the group half of csr-vector's rule, amg_tpr) on the level's device CSR: a
 * device level's arrays in place, with no copy and no host pass (the group
 * size needs only the sizes), a host level's uploaded once; the smoother's
 * scaling (a device level's in place), and the dense
 * inverse of the coarsest matrix. Apply: the host's
 * V-cycle (amg.c) step for step, the products through the operators, the
 * vector updates as kernels whose expressions are the host's, the coarse
 * solve a dense product with one warp per row summing in a fixed order.
 * Everything on the context's stream: no synchronization, no atomics. */
#include "../../core/cuda_check.cuh"
#include "../../spmv/formats/csr_fmt.h" /* sps_csr_dev, sps__csr_vector_run */
#include "../../spmv/operator.h" /* sps__operator_dev_csr */
#include "amg.h"

#include <new>
#include <stdio.h>
#include <string.h>

namespace {

const int BLOCK = 256;

/* A level's product: the device CSR d (its arrays a device copy's, the
 * hierarchy's or the upload's) and its group size (amg_tpr; 1: csr-scalar's
 * kernel). */
struct dev_op {
    sps_csr_dev d = sps_csr_dev();
    int tpr = 0;
    sps_dcsr *own = nullptr; /* the upload of a host level's CSR, else NULL (borrowed) */
};

struct dev_level {
    dev_op A, P, R; /* A: levels >= 1 */
    double *dinv = nullptr, *x = nullptr, *b = nullptr, *r = nullptr, *d = nullptr;
    int own_dinv = 0; /* else the hierarchy's device scaling (setup=gpu) */
};

struct dev_amg {
    sps_amg *h = nullptr; /* the host hierarchy: the reference, the summary */
    sps_operator *op0 = nullptr;
    int own_op0 = 0;
    dev_level lv[SPS_AMG_MAX_LEVELS];
    double *cinv = nullptr;
    int own_cinv = 0; /* else the hierarchy's (setup=gpu's dcinv) */
};

/* x = dinv .* b */
__global__ void k_jacobi_first(long long n, const double *__restrict__ dinv,
                               const double *__restrict__ b, double *__restrict__ x)
{
    for (long long i = blockIdx.x * (long long)BLOCK + threadIdx.x; i < n;
         i += (long long)gridDim.x * BLOCK)
        x[i] = dinv[i] * b[i];
}

/* x += dinv .* r */
__global__ void k_jacobi_add(long long n, const double *__restrict__ dinv,
                             const double *__restrict__ r, double *__restrict__ x)
{
    for (long long i = blockIdx.x * (long long)BLOCK + threadIdx.x; i < n;
         i += (long long)gridDim.x * BLOCK)
        x[i] += dinv[i] * r[i];
}

/* d = c2 dinv res; x = d (zero) or x += d */
__global__ void k_cheby_first(long long n, double c2, int zero, const double *__restrict__ dinv,
                              const double *__restrict__ res, double *__restrict__ d,
                              double *__restrict__ x)
{
    for (long long i = blockIdx.x * (long long)BLOCK + threadIdx.x; i < n;
         i += (long long)gridDim.x * BLOCK) {
        double di = c2 * dinv[i] * res[i];
        d[i] = di;
        x[i] = zero ? di : x[i] + di;
    }
}

/* d = c1 d + c2 dinv res; x += d */
__global__ void k_cheby_step(long long n, double c1, double c2, const double *__restrict__ dinv,
                             const double *__restrict__ res, double *__restrict__ d,
                             double *__restrict__ x)
{
    for (long long i = blockIdx.x * (long long)BLOCK + threadIdx.x; i < n;
         i += (long long)gridDim.x * BLOCK) {
        double di = c1 * d[i] + c2 * dinv[i] * res[i];
        d[i] = di;
        x[i] += di;
    }
}

/* x = C b, C row-major n x n: one warp per row, lanes stride the row, then a
 * shuffle tree: a fixed order. */
__global__ void k_dense(int n, const double *__restrict__ C, const double *__restrict__ b,
                        double *__restrict__ x)
{
    int lane = threadIdx.x & 31;
    long long warps = (long long)gridDim.x * (BLOCK / 32);
    for (long long i = (blockIdx.x * (long long)BLOCK + threadIdx.x) >> 5; i < n; i += warps) {
        const double *row = C + i * n;
        double s = 0.0;
        for (int j = lane; j < n; j += 32) s += row[j] * b[j];
        for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
        if (lane == 0) x[i] = s;
    }
}

int grid_cap(sps_context *ctx, long long n)
{
    long long b = (n + BLOCK - 1) / BLOCK, cap = 32LL * sps__gpu_sm_count(ctx);
    if (b > cap) b = cap;
    return b < 1 ? 1 : (int)b;
}

struct cycle {
    sps_context *ctx;
    dev_amg *g;
    cudaStream_t s;
};

/* y = alpha op x + beta y, csr-vector's product (csr-scalar's for a group of 1) */
sps_status op_apply(const cycle &c, const dev_op &op, double alpha, const double *x, double beta,
                    double *y)
{
    if (op.tpr == 1) return sps__csr_scalar_run(c.ctx, &op.d, alpha, x, beta, y);
    return sps__csr_vector_run(c.ctx, &op.d, nullptr, op.tpr, alpha, x, beta, y);
}

/* y = alpha A_l x + beta y (level 0: the solve's operator) */
sps_status level_apply(const cycle &c, int l, double alpha, const double *x, double beta, double *y)
{
    if (l == 0) return sps_operator_apply(c.g->op0, alpha, x, beta, y);
    return op_apply(c, c.g->lv[l].A, alpha, x, beta, y);
}

/* r = b - A_l x */
sps_status residual(const cycle &c, int l, const double *b, const double *x, double *r)
{
    long long n = c.g->h->lv[l].n;
    sps_status st = sps__d2d(c.ctx, r, b, (size_t)n * sizeof *r);
    return st == SPS_OK ? level_apply(c, l, -1.0, x, 1.0, r) : st;
}

sps_status smooth_l1(const cycle &c, int l, const double *b, double *x, int zero)
{
    const dev_level &L = c.g->lv[l];
    long long n = c.g->h->lv[l].n;
    int gr = grid_cap(c.ctx, n);
    for (int s = 0; s < c.g->h->sweeps; s++) {
        if (s == 0 && zero) {
            k_jacobi_first<<<gr, BLOCK, 0, c.s>>>(n, L.dinv, b, x);
            SPS_LAUNCH_CHECK(c.ctx, "k_jacobi_first");
            continue;
        }
        sps_status st = residual(c, l, b, x, L.r);
        if (st != SPS_OK) return st;
        k_jacobi_add<<<gr, BLOCK, 0, c.s>>>(n, L.dinv, L.r, x);
        SPS_LAUNCH_CHECK(c.ctx, "k_jacobi_add");
    }
    return SPS_OK;
}

sps_status smooth_cheby(const cycle &c, int l, const double *b, double *x, int zero)
{
    const dev_level &L = c.g->lv[l];
    const sps_amg_level &H = c.g->h->lv[l];
    long long n = H.n;
    int gr = grid_cap(c.ctx, n);
    sps_status st = zero ? sps__d2d(c.ctx, L.r, b, (size_t)n * sizeof *b) : residual(c, l, b, x, L.r);
    if (st != SPS_OK) return st;
    k_cheby_first<<<gr, BLOCK, 0, c.s>>>(n, H.c2[0], zero, L.dinv, L.r, L.d, x);
    SPS_LAUNCH_CHECK(c.ctx, "k_cheby_first");
    for (int k = 1; k <= c.g->h->sweeps; k++) {
        if ((st = level_apply(c, l, -1.0, L.d, 1.0, L.r)) != SPS_OK) return st;
        k_cheby_step<<<gr, BLOCK, 0, c.s>>>(n, H.c1[k], H.c2[k], L.dinv, L.r, L.d, x);
        SPS_LAUNCH_CHECK(c.ctx, "k_cheby_step");
    }
    return SPS_OK;
}

sps_status smooth(const cycle &c, int l, const double *b, double *x, int zero)
{
    return c.g->h->smoother == SPS_AMG_CHEBY ? smooth_cheby(c, l, b, x, zero)
                                             : smooth_l1(c, l, b, x, zero);
}

/* r_l = b - A_l x_l after the pre-smoothing (amg.c's down_residual). */
sps_status down_residual(const cycle &c, int l, const double *b, const double *x)
{
    const dev_level &L = c.g->lv[l];
    if (c.g->h->smoother == SPS_AMG_CHEBY)
        return level_apply(c, l, -1.0, L.d, 1.0, L.r);
    return residual(c, l, b, x, L.r);
}

sps_status coarse(const cycle &c, const double *b, double *x)
{
    int n = c.g->h->nc;
    long long warps = ((long long)n + 7) / 8 * 8; /* 8 warps a block */
    int gr = grid_cap(c.ctx, warps * 32);
    k_dense<<<gr, BLOCK, 0, c.s>>>(n, c.g->cinv, b, x);
    SPS_LAUNCH_CHECK(c.ctx, "k_dense");
    return SPS_OK;
}

sps_status down(const cycle &c, const double *r0, double *z)
{
    dev_amg *g = c.g;
    int L = g->h->nlevels;
    sps_status st = SPS_OK;
    for (int l = 0; l + 1 < L && st == SPS_OK; l++) {
        const double *b = l ? g->lv[l].b : r0;
        double *x = l ? g->lv[l].x : z;
        st = smooth(c, l, b, x, 1);
        if (st == SPS_OK) st = down_residual(c, l, b, x);
        if (st == SPS_OK) st = op_apply(c, g->lv[l].R, 1.0, g->lv[l].r, 0.0, g->lv[l + 1].b);
    }
    if (st == SPS_OK) st = coarse(c, L > 1 ? g->lv[L - 1].b : r0, L > 1 ? g->lv[L - 1].x : z);
    return st;
}

sps_status apply_dev(sps_precond *pc, const double *r, double *z)
{
    dev_amg *g = (dev_amg *)pc->impl;
    cycle c = {pc->ctx, g, sps_stream(pc->ctx)};
    sps_status st = down(c, r, z);
    for (int l = g->h->nlevels - 2; l >= 0 && st == SPS_OK; l--) {
        double *x = l ? g->lv[l].x : z;
        st = op_apply(c, g->lv[l].P, 1.0, g->lv[l + 1].x, 1.0, x);
        if (st == SPS_OK) st = smooth(c, l, l ? g->lv[l].b : r, x, 0);
    }
    return st;
}

void free_levels(dev_amg *g)
{
    for (int l = 0; l < SPS_AMG_MAX_LEVELS; l++) {
        dev_level &L = g->lv[l];
        sps__dcsr_free(L.A.own);
        sps__dcsr_free(L.P.own);
        sps__dcsr_free(L.R.own);
        if (L.own_dinv) sps__dfree(L.dinv);
        sps__dfree(L.x);
        sps__dfree(L.b);
        sps__dfree(L.r);
        sps__dfree(L.d);
        L = dev_level();
    }
    if (g->own_cinv) sps__dfree(g->cinv);
    g->cinv = nullptr;
    g->own_cinv = 0;
}

void dev_destroy(sps_precond *pc)
{
    dev_amg *g = (dev_amg *)pc->impl;
    if (!g) return;
    cudaStreamSynchronize(sps_stream(pc->ctx)); /* no apply may still be reading */
    free_levels(g);
    if (g->own_op0) sps_operator_destroy(g->op0);
    if (g->h) sps__amg_free(g->h);
    sps__free(g->h);
    delete g;
    pc->impl = nullptr;
}

/* The group size of a level's product: half of csr-vector's rule (the group
 * that covers a row of mean length in one pass), so that a group covers it
 * in two; below 2, one thread a row. With csr-vector's rule the level
 * products waited on their gathers of x, not on bandwidth (ncu, poisson3d:200's
 * level 1, 33 entries a row, 32 lanes a row: DRAM 29% busy, L2 49%, 0.59
 * eligible warps a scheduler). A warp on two or more rows has more
 * independent gathers in flight, and neighbouring rows' columns nearly
 * coincide (the likely reasons; not measured apart). H200, V-cycle by the
 * summary's median (csr-vector's rule / half): poisson3d:200 2.83 / 2.15
 * ms, poisson3d:160 1.48 / 1.15, poisson3d-jump:128,1e4 0.89 / 0.74; a
 * quarter: within 3% of half. */
int amg_tpr(long long nnz, sps_idx nrows)
{
    int t = sps__csr_vector_tpr(nnz, nrows) / 2;
    return t < 1 ? 1 : t;
}

/* The product of a level's CSR A: on A's device copy when it has one
 * (setup=gpu's device levels, and the first host level: the hierarchy's
 * primary copy, with only the sizes on the host; used in place, and
 * refreshed in place by sps__amg_gpu_values), else on an upload of A's host
 * arrays that op owns. No pass over the rows: the group size comes from the
 * sizes, and the longest row is left unknown (no caller reads it). */
sps_status make_op(sps_context *ctx, const sps_csr *A, dev_op &op)
{
    const sps_dcsr *c = sps__csr_device_copy(ctx, A);
    if (!c) {
        sps_matrix M;
        memset(&M, 0, sizeof M);
        M.A = *A;
        M.A.dev = nullptr;
        sps_status st = sps__matrix_device(ctx, &M, &c, nullptr);
        if (st != SPS_OK) return st;
        op.own = M.A.dev;
    }
    sps_csr_dev &d = op.d;
    d.nrows = c->nrows;
    d.ncols = c->ncols;
    d.nnz = c->nnz;
    d.max_row = SPS_IDX_MAX;
    d.single = 0;
    d.row_ptr = c->row_ptr;
    d.col_idx = c->col_idx;
    d.val = c->val;
    d.bytes = c->bytes;
    op.tpr = amg_tpr(c->nnz, c->nrows);
    d.param = op.tpr;
    return SPS_OK;
}

/* New values of op's matrix (the host's, in its pattern) into its device
 * arrays: the upload's, or the hierarchy's device copy (which then agrees
 * with the host's arrays again). */
sps_status op_values(sps_context *ctx, dev_op &op, const double *val)
{
    return op.d.nnz ? sps__h2d(ctx, op.d.val, val, (size_t)op.d.nnz * sizeof *val) : SPS_OK;
}

sps_status upload(sps_context *ctx, double **dst, const double *src, size_t count)
{
    sps_status st = sps__dmalloc(ctx, (void **)dst, count * sizeof(double));
    return st == SPS_OK && src ? sps__h2d(ctx, *dst, src, count * sizeof(double)) : st;
}

sps_status upload_level(sps_context *ctx, sps_amg *h, int l, dev_level &L)
{
    sps_amg_level &H = h->lv[l];
    size_t n = (size_t)H.n;
    sps_status st = SPS_OK;
    if (l > 0) st = make_op(ctx, &H.A, L.A);
    if (st == SPS_OK && l + 1 < h->nlevels) {
        st = make_op(ctx, &H.P, L.P);
        if (st == SPS_OK) st = make_op(ctx, &H.R, L.R);
        if (st == SPS_OK && H.ddinv) L.dinv = H.ddinv; /* setup=gpu's: shared, the hierarchy's */
        else if (st == SPS_OK) {
            st = upload(ctx, &L.dinv, H.dinv, n);
            L.own_dinv = 1;
        }
        if (st == SPS_OK) st = upload(ctx, &L.r, nullptr, n);
        if (st == SPS_OK) st = upload(ctx, &L.d, nullptr, n);
    }
    if (st == SPS_OK && l > 0) st = upload(ctx, &L.x, nullptr, n);
    if (st == SPS_OK && l > 0) st = upload(ctx, &L.b, nullptr, n);
    return st;
}

sps_status upload_all(sps_precond *pc, dev_amg *g)
{
    sps_context *ctx = pc->ctx;
    sps_amg *h = g->h;
    double t0 = sps__now_ms();
    sps_status st = SPS_OK;
    for (int l = 0; l < h->nlevels && st == SPS_OK; l++) st = upload_level(ctx, h, l, g->lv[l]);
    if (st == SPS_OK && h->dcinv) g->cinv = h->dcinv; /* setup=gpu's: shared */
    else if (st == SPS_OK) {
        st = upload(ctx, &g->cinv, h->cinv, (size_t)h->nc * (size_t)h->nc);
        g->own_cinv = 1;
    }
    if (st == SPS_OK) st = sps__gpu_sync(ctx);
    char extra[96];
    snprintf(extra, sizeof extra, ", upload %.1f\n", sps__now_ms() - t0);
    if (st == SPS_OK) sps__amg_describe(g->h, extra);
    return st;
}

} // namespace

extern "C" sps_status sps__amg_gpu(sps_precond *pc, sps_amg *h, sps_operator *op0, int own_op0)
{
    dev_amg *g = new (std::nothrow) dev_amg;
    if (!g) {
        if (own_op0) sps_operator_destroy(op0);
        sps__amg_free(h);
        sps__free(h);
        return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    }
    g->h = h;
    g->op0 = op0;
    g->own_op0 = own_op0;
    pc->impl = g;
    pc->destroy = dev_destroy;
    sps_status st = upload_all(pc, g);
    if (st == SPS_OK) pc->apply = apply_dev;
    return st;
}

extern "C" sps_amg *sps__amg_gpu_hierarchy(sps_precond *pc, sps_operator **op0)
{
    dev_amg *g = (dev_amg *)pc->impl;
    if (op0) *op0 = g ? g->op0 : nullptr;
    return g ? g->h : nullptr;
}

extern "C" sps_status sps__amg_gpu_rebuild(sps_precond *pc, sps_amg *h)
{
    dev_amg *g = (dev_amg *)pc->impl;
    SPS_CUDA(pc->ctx, cudaStreamSynchronize(sps_stream(pc->ctx)));
    free_levels(g);
    g->h = h;
    return upload_all(pc, g);
}

namespace {

/* The V-cycle's copies of levels l0 on (A from l0 + 1: level l0's is the
 * device's own or op0) from the host hierarchy's new values; the coarse
 * inverse unless it is the device's. */
sps_status values_from(sps_context *ctx, dev_amg *g, int l0)
{
    const sps_amg *h = g->h;
    sps_status st = SPS_OK;
    for (int l = l0; l < h->nlevels && st == SPS_OK; l++) {
        const sps_amg_level &H = h->lv[l];
        dev_level &L = g->lv[l];
        if (l > l0) st = op_values(ctx, L.A, H.A.val);
        if (st != SPS_OK || l + 1 == h->nlevels) continue;
        st = op_values(ctx, L.P, H.P.val);
        if (st == SPS_OK) st = op_values(ctx, L.R, H.R.val);
        if (st == SPS_OK) st = sps__h2d(ctx, L.dinv, H.dinv, (size_t)H.n * sizeof(double));
    }
    if (st == SPS_OK && !h->dcinv) st = sps__h2d(ctx, g->cinv, h->cinv, (size_t)h->nc * h->nc * sizeof(double));
    return st;
}

/* Level 0's new values on the device as a CSR: A's device copy when it has
 * one, else the fine operator's arrays when they are a double CSR of our
 * own (updated just before), else an upload of A (cached on it). */
sps_status level0_values(sps_context *ctx, dev_amg *g, const sps_matrix *A, sps_dcsr *tmp, const sps_dcsr **d0)
{
    *d0 = sps__csr_device_copy(ctx, &A->A);
    if (*d0) return SPS_OK;
    const sps_idx *rp = nullptr, *ci = nullptr;
    const double *v = nullptr;
    if (g->own_op0 && sps__operator_dev_csr(g->op0, &rp, &ci, &v)) {
        memset(tmp, 0, sizeof *tmp);
        tmp->ctx = ctx;
        tmp->nrows = A->A.nrows;
        tmp->ncols = A->A.ncols;
        tmp->nnz = A->A.nnz;
        tmp->row_ptr = (sps_idx *)rp;
        tmp->col_idx = (sps_idx *)ci;
        tmp->val = (double *)v;
        *d0 = tmp;
        return SPS_OK;
    }
    return sps__matrix_device(ctx, A, d0, nullptr);
}

} // namespace

extern "C" sps_status sps__amg_gpu_values(sps_precond *pc, const double *a0)
{
    sps_context *ctx = pc->ctx;
    dev_amg *g = (dev_amg *)pc->impl;
    double t0 = sps__now_ms();
    SPS_CUDA(ctx, cudaStreamSynchronize(sps_stream(ctx))); /* no apply may still be reading */
    sps_status st = g->own_op0 ? sps_operator_update_values(g->op0, a0) : SPS_OK;
    if (st == SPS_OK) st = values_from(ctx, g, 0);
    if (st == SPS_OK) st = sps__gpu_sync(ctx);
    char extra[96];
    snprintf(extra, sizeof extra, ", upload %.1f (numeric re-setup)\n", sps__now_ms() - t0);
    if (st == SPS_OK) sps__amg_describe(g->h, extra);
    return st;
}

extern "C" sps_status sps__amg_gpu_numeric(sps_precond *pc, const sps_matrix *A)
{
    sps_context *ctx = pc->ctx;
    dev_amg *g = (dev_amg *)pc->impl;
    sps_amg *h = g->h;
    if (A->A.nrows != h->lv[0].n || A->A.nnz != h->lv[0].nnz) return sps__amg_pattern_error(ctx, &A->A, h);
    double t0 = sps__now_ms();
    SPS_CUDA(ctx, cudaStreamSynchronize(sps_stream(ctx))); /* no apply may still be reading */
    sps_status st = g->own_op0 ? sps_operator_update_values(g->op0, A->A.val) : SPS_OK;
    sps_dcsr tmp;
    const sps_dcsr *d0 = nullptr;
    if (st == SPS_OK) st = level0_values(ctx, g, A, &tmp, &d0);
    double up = sps__now_ms() - t0;
    if (st == SPS_OK) st = sps__amg_numeric_gpu(ctx, &A->A, d0, h);
    double t1 = sps__now_ms();
    if (st == SPS_OK && !h->dcinv) st = values_from(ctx, g, h->gpu_levels); /* the host's levels */
    if (st == SPS_OK) st = sps__gpu_sync(ctx);
    char extra[128];
    snprintf(extra, sizeof extra, ", upload %.1f (numeric re-setup on the device)\n",
             up + h->ms_download + sps__now_ms() - t1);
    if (st == SPS_OK) sps__amg_describe(h, extra);
    return st;
}
