/* SPDX-License-Identifier: MIT */
/* spsolve/precond/cheby/cheby.cu: the Chebyshev preconditioner on the device.
 *
 * Setup: D^-1 uploaded; the Lanczos steps as Jacobi-PCG with the operator's
 * SpMV and deterministic dot products (block partials in a grid that depends
 * only on n, then one block summing them in a fixed order), their scalars
 * kept on the device and read by the host once at the end; then the same host code as the
 * reference (sps__cheby_finish) turns the coefficients into the interval.
 * Apply (cheby_steps.cuh): with an operator that gives its device rows
 * (backend.h dev_rows) and fused=1 (the default), one kernel per step that
 * computes its rows of A d itself; else, and with fused=0, one kernel for
 * step 0, then per step the operator's SpMV (res = res - A d) and one
 * vector kernel (d = c1 d + c2 D^-1 res; z += d). All on the context's
 * stream, no synchronization, no atomics. */
#include "../../core/cuda_check.cuh"
#include "cheby.h"

#include <new>

#define CHEBY_LAUNCH(ctx, s, g, kernel, ...)                                                \
    do {                                                                                    \
        kernel<<<(g), CHEBY_BLOCK, 0, (s)>>>(__VA_ARGS__);                                  \
        SPS_LAUNCH_CHECK((ctx), #kernel);                                                   \
    } while (0)
#define CHEBY_SPMV(c, x, y) sps_operator_apply((c)->op, -1.0, (x), 1.0, (y))
#include "cheby_steps.cuh"

namespace {

const int BLOCK = 256;
const int MAX_PARTS = 1024;

struct dev_cheby {
    sps_cheby c;           /* dinv, res, d: device pointers */
    double *part = nullptr; /* the dot products' MAX_PARTS block partials */
    int fused = 0;         /* fused=1 and the operator gave its rows at setup */
    double *d2 = nullptr;  /* the fused apply's second d (degree >= 3) */
};

int grid_for(long long n)
{
    long long b = (n + BLOCK - 1) / BLOCK;
    if (b > MAX_PARTS) b = MAX_PARTS;
    return b < 1 ? 1 : (int)b;
}

__device__ double block_sum(double v)
{
    __shared__ double s[BLOCK];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int w = BLOCK / 2; w > 0; w >>= 1) {
        if ((int)threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
        __syncthreads();
    }
    return s[0];
}

__global__ void dot_part(long long n, const double *__restrict__ x, const double *__restrict__ y,
                         double *__restrict__ part)
{
    double v = 0.0;
    for (long long i = blockIdx.x * (long long)BLOCK + threadIdx.x; i < n;
         i += (long long)gridDim.x * BLOCK)
        v += x[i] * y[i];
    v = block_sum(v);
    if (threadIdx.x == 0) part[blockIdx.x] = v;
}

__global__ void dot_final(int parts, const double *part, double *out)
{
    double v = 0.0;
    for (int i = threadIdx.x; i < parts; i += BLOCK) v += part[i];
    v = block_sum(v);
    if (threadIdx.x == 0) *out = v;
}

/* r = start vector, z = p = D^-1 r */
__global__ void lanczos_start(long long n, const double *__restrict__ dinv, double *r, double *z,
                              double *p)
{
    for (long long i = blockIdx.x * (long long)BLOCK + threadIdx.x; i < n;
         i += (long long)gridDim.x * BLOCK) {
        double ri = sps__cheby_start(i);
        r[i] = ri;
        z[i] = p[i] = dinv[i] * ri;
    }
}

/* The Lanczos scalars' state and one-thread steps (lanczos.cuh): the 2
 * reads per step they replace cost more than the step on small matrices
 * (96 SpMVs of setup on poisson3d:100). */
#include "lanczos.cuh"
typedef lz_state<SPS_CHEBY_MAX_LANCZOS> cheby_lz;

/* r -= alpha q; z = D^-1 r */
__global__ void lanczos_update(long long n, const cheby_lz *s, const double *__restrict__ q,
                               const double *__restrict__ dinv, double *r, double *z)
{
    if (s->stop) return;
    const double alpha = s->a;
    for (long long i = blockIdx.x * (long long)BLOCK + threadIdx.x; i < n;
         i += (long long)gridDim.x * BLOCK) {
        double ri = r[i] - alpha * q[i];
        r[i] = ri;
        z[i] = dinv[i] * ri;
    }
}

/* p = z + beta p */
__global__ void lanczos_dir(long long n, const cheby_lz *s, const double *__restrict__ z, double *p)
{
    if (s->stop) return;
    const double beta = s->b;
    for (long long i = blockIdx.x * (long long)BLOCK + threadIdx.x; i < n;
         i += (long long)gridDim.x * BLOCK)
        p[i] = z[i] + beta * p[i];
}

int grid_cap(sps_context *ctx, long long n)
{
    long long b = (n + BLOCK - 1) / BLOCK, cap = 32LL * sps__gpu_sm_count(ctx);
    if (b > cap) b = cap;
    return b < 1 ? 1 : (int)b;
}

/* The operator's device rows in double (backend.h dev_rows; the checks of
 * solvers/engine.c's sps__engine_rows), for n rows: 1 and *out, or 0. */
int op_rows(const sps_operator *op, long long n, sps_dev_rows *out)
{
    if (!op || !op->dev || !op->info.on_gpu || op->single || !op->be || !op->be->dev_rows) return 0;
    return op->be->dev_rows(op->dev, out) && out->n == n;
}

/* The fused apply's rows, when it runs: fused=1, the operator's rows, and
 * the second d where the degree needs it. */
int fused_rows(const dev_cheby *g, long long n, sps_dev_rows *rows)
{
    return g->fused && (g->c.degree < 3 || g->d2) && op_rows(g->c.op, n, rows);
}

sps_status apply_dev(sps_precond *pc, const double *r, double *z)
{
    sps_context *ctx = pc->ctx;
    dev_cheby *g = (dev_cheby *)pc->impl;
    const sps_cheby *c = &g->c;
    cudaStream_t s = sps_stream(ctx);
    long long n = pc->n;
    int gr = grid_cap(ctx, n);
    sps_dev_rows rows;
    if (fused_rows(g, n, &rows))
        return cheby_queue_fused(ctx, c, rows, g->d2, s, gr, n, r, z);
    return cheby_queue(ctx, c, s, gr, n, r, z);
}

void dev_destroy(sps_precond *pc)
{
    dev_cheby *g = (dev_cheby *)pc->impl;
    if (!g) return;
    cudaStreamSynchronize(sps_stream(pc->ctx)); /* no apply may still be reading */
    if (g->c.own_op) sps_operator_destroy(g->c.op);
    sps__dfree(g->c.dinv);
    sps__dfree(g->c.res);
    sps__dfree(g->c.d);
    sps__dfree(g->d2);
    sps__dfree(g->part);
    delete g;
    pc->impl = nullptr;
}

/* x'y on the device into *out (device). */
sps_status dot(sps_context *ctx, dev_cheby *g, long long n, const double *x, const double *y,
               double *out)
{
    cudaStream_t s = sps_stream(ctx);
    int parts = grid_for(n);
    dot_part<<<parts, BLOCK, 0, s>>>(n, x, y, g->part);
    SPS_LAUNCH_CHECK(ctx, "dot_part");
    dot_final<<<1, BLOCK, 0, s>>>(parts, g->part, out);
    SPS_LAUNCH_CHECK(ctx, "dot_final");
    return SPS_OK;
}

/* The device twin of cheby.c's lanczos_host (the same steps and stops, the
 * scalars in S on the device); w: 4 device vectors. */
sps_status lanczos_queue(sps_precond *pc, dev_cheby *g, double *w, cheby_lz *S)
{
    sps_context *ctx = pc->ctx;
    const sps_cheby_prm *prm = (const sps_cheby_prm *)pc->prm;
    sps_cheby *c = &g->c;
    long long n = pc->n;
    double *r = w, *z = w + n, *p = w + 2 * n, *q = w + 3 * n;
    int steps = prm->lanczos < n ? prm->lanczos : (int)n;
    if (steps > SPS_CHEBY_MAX_LANCZOS) steps = SPS_CHEBY_MAX_LANCZOS;
    cudaStream_t s = sps_stream(ctx);
    int gr = grid_cap(ctx, n);
    lanczos_start<<<gr, BLOCK, 0, s>>>(n, c->dinv, r, z, p);
    SPS_LAUNCH_CHECK(ctx, "lanczos_start");
    sps_status st = dot(ctx, g, n, r, z, &S->rzn);
    if (st != SPS_OK) return st;
    lz_start<<<1, 1, 0, s>>>(S);
    SPS_LAUNCH_CHECK(ctx, "lz_start");
    for (int k = 0; k < steps; k++) {
        if ((st = sps_operator_apply(c->op, 1.0, p, 0.0, q)) != SPS_OK) return st;
        if ((st = dot(ctx, g, n, p, q, &S->pq)) != SPS_OK) return st;
        lz_alpha<<<1, 1, 0, s>>>(S);
        SPS_LAUNCH_CHECK(ctx, "lz_alpha");
        lanczos_update<<<gr, BLOCK, 0, s>>>(n, S, q, c->dinv, r, z);
        SPS_LAUNCH_CHECK(ctx, "lanczos_update");
        if ((st = dot(ctx, g, n, r, z, &S->rzn)) != SPS_OK) return st;
        lz_beta<<<1, 1, 0, s>>>(S);
        SPS_LAUNCH_CHECK(ctx, "lz_beta");
        lanczos_dir<<<gr, BLOCK, 0, s>>>(n, S, z, p);
        SPS_LAUNCH_CHECK(ctx, "lanczos_dir");
    }
    return SPS_OK;
}

/* The steps, one read of their scalars, the host's checks and interval. */
sps_status lanczos(sps_precond *pc, dev_cheby *g, double *w)
{
    cheby_lz *S = nullptr, h;
    sps_status st = sps__dmalloc(pc->ctx, (void **)&S, sizeof *S);
    if (st == SPS_OK) st = lanczos_queue(pc, g, w, S);
    if (st == SPS_OK) st = sps__d2h(pc->ctx, &h, S, sizeof h);
    sps__dfree(S);
    if (st != SPS_OK) return st;
    if (!(h.rz0 > 0)) return sps__cheby_not_spd(pc, "s'D^-1 s", h.rz0);
    if (h.m == 0) return sps__cheby_not_spd(pc, "p'Ap", h.bad_pq);
    sps__cheby_finish(&g->c, (const sps_cheby_prm *)pc->prm, h.alpha, h.beta, h.m);
    return SPS_OK;
}

} // namespace

extern "C" int sps__cheby_gpu_fused(const sps_precond *pc)
{
    if (!pc || pc->apply != apply_dev) return 0;
    sps_dev_rows rows;
    return fused_rows((const dev_cheby *)pc->impl, pc->n, &rows);
}

extern "C" sps_status sps__cheby_gpu(sps_precond *pc, const sps_cheby *host, sps_operator *op,
                                     int own_op)
{
    return sps__cheby_gpu_from(pc, host, NULL, op, own_op);
}

extern "C" sps_status sps__cheby_gpu_from(sps_precond *pc, const sps_cheby *host, double *ddinv,
                                          sps_operator *op, int own_op)
{
    sps_context *ctx = pc->ctx;
    dev_cheby *g = new (std::nothrow) dev_cheby;
    if (!g) {
        if (own_op) sps_operator_destroy(op);
        sps__dfree(ddinv);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "cheby: out of memory");
    }
    g->c = *host;
    g->c.dinv = ddinv;
    g->c.res = g->c.d = nullptr;
    g->c.op = op;
    g->c.own_op = own_op;
    pc->impl = g;
    pc->destroy = dev_destroy;
    size_t nb = (size_t)pc->n * sizeof(double);
    double *w = nullptr;
    sps_status st = ddinv ? SPS_OK : sps__dmalloc(ctx, (void **)&g->c.dinv, nb);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&g->c.res, nb);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&g->c.d, nb);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&g->part, MAX_PARTS * sizeof(double));
    if (st == SPS_OK && !ddinv) st = sps__h2d(ctx, g->c.dinv, host->dinv, nb);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&w, 4 * nb);
    if (st == SPS_OK) st = lanczos(pc, g, w);
    sps_dev_rows rows;
    g->fused = ((const sps_cheby_prm *)pc->prm)->fused && op_rows(op, pc->n, &rows) &&
               (rows.kind == SPS_ROWS_DIA || op->info.nnz <= SPS_CHEBY_FUSED_CSR_ROW * (int64_t)pc->n);
    if (st == SPS_OK && g->fused && g->c.degree >= 3) st = sps__dmalloc(ctx, (void **)&g->d2, nb);
    if (w) {
        cudaStreamSynchronize(sps_stream(ctx)); /* the last kernels may still read w */
        sps__dfree(w);
    }
    if (st == SPS_OK) pc->apply = apply_dev;
    return st;
}
