/* SPDX-License-Identifier: MIT */
/* spsolve/precond/precond_gpu.cu: the preconditioners on the device.
 *
 * Work decomposition:
 *   none    one cudaMemcpyAsync (device to device).
 *   jacobi, l1jacobi  one thread per row, grid-stride: z_i = d_i r_i. d stays
 *           on the device (pc->fused_diag) so solvers can fuse it into their updates.
 *   ilu0    cusparseDcsrilu02 (level-scheduled, in place on a device copy of
 *           A's values), then two cusparseSpSV solves over the same arrays:
 *           L (fill lower, unit diagonal) and U (fill upper, non-unit).
 *   ic0     cusparseDcsric02 on tril(A), then SpSV with L and with L' stored
 *           as its own upper CSR (values gathered from the factor): not the
 *           transposed solve on L's descriptor, whose results two analyses of
 *           the same factor did not reproduce bitwise (H100, CUDA 13.0).
 *   ilu0:solve=jacobi, ic0:solve=jacobi  the same factorizations, then each
 *           triangular solve as K + 1 Jacobi sweeps (tri_sweep: one thread per
 *           row, the terms in the host's order, two buffers in turn). ic0's
 *           backward sweeps read L' as its own CSR, whose values are gathered
 *           from the factor on the device (the pattern and the gather map come
 *           from the host).
 * Everything that allocates or synchronizes (buffer sizes, the factorization,
 * the SpSV analyses, zero-pivot queries) happens in setup; apply only points
 * the vector descriptors at r and z and launches, on the context's stream.
 * The csrilu02/csric02 analysis stays with the factor: a refresh
 * (sps__pc_gpu_ilu_refresh) factorizes new values in a scratch array with
 * it and, on success only, copies them into the factor and updates the SpSV
 * descriptors (cusparseSpSV_updateMatrix) or L' (gather).
 * Triangular solves are level-scheduled: they win on matrices with few, wide
 * levels (stencils, banded) and lose on long dependency chains, where each
 * level is a launch-bound sliver of work.
 *
 * ilu0:factor=par, ic0:factor=par  the factor by fixed-point sweeps on the
 *           device (precond/parilu/parilu.cu) instead of csrilu02/csric02,
 *           in the same arrays; the solves above follow unchanged, and a
 *           refresh sweeps again into the scratch array.
 *
 * csrilu02/csric02 are deprecated in CUDA 12/13 but have no replacement in
 * cuSPARSE's generic API; DISABLE_CUSPARSE_DEPRECATED silences the warnings
 * for this file only. */
#define DISABLE_CUSPARSE_DEPRECATED
#include "../core/cuda_check.cuh"
#include "pc_impl.h"
#include "parilu/parilu.h"

#include <new>
#include <string.h>

namespace {

/* The legacy factorization object (descriptor, csrilu02/csric02 analysis,
 * its buffer): kept with the factor so that a refresh reuses the analysis;
 * freed with it. */
struct legacy {
    cusparseMatDescr_t d = nullptr;
    csrilu02Info_t ilu = nullptr;
    csric02Info_t ic = nullptr;
    void *buf = nullptr;
    ~legacy()
    {
        if (ilu) cusparseDestroyCsrilu02Info(ilu);
        if (ic) cusparseDestroyCsric02Info(ic);
        if (d) cusparseDestroyMatDescr(d);
        sps__dfree(buf);
    }
};

struct gpu_pc {
    double *dinv = nullptr;            /* jacobi */
    int *rp = nullptr, *ci = nullptr;  /* ilu0 / ic0 factor */
    double *v = nullptr;
    double *tmp = nullptr, *scr = nullptr;
    cusparseSpMatDescr_t L = nullptr, U = nullptr;
    cusparseDnVecDescr_t vx = nullptr, vt = nullptr, vy = nullptr;
    cusparseSpSVDescr_t s1 = nullptr, s2 = nullptr;
    void *b1 = nullptr, *b2 = nullptr;
    /* solve=jacobi */
    int sweeps = -1;
    int *dpos = nullptr, *trp = nullptr, *tci = nullptr, *tdpos = nullptr, *perm = nullptr;
    double *tv = nullptr, *y = nullptr, *w = nullptr;
    sps_ilu_tri lo{}, up{};
    legacy lg;              /* ilu0, ic0: the analysis a refresh reuses */
    long long nnz = 0;      /* ilu0, ic0: the factor's entries */
    int par = 0;            /* factor=par: fixed-point sweeps (0: cuSPARSE) */
    int chol = 0;           /* factor=par: ic0 */
};

const double one = 1.0;

void gpu_destroy(sps_precond *pc)
{
    gpu_pc *g = (gpu_pc *)pc->impl;
    if (!g) return;
    cudaStreamSynchronize(sps_stream(pc->ctx)); /* no apply may still be reading */
    if (g->s1) cusparseSpSV_destroyDescr(g->s1);
    if (g->s2) cusparseSpSV_destroyDescr(g->s2);
    if (g->vx) cusparseDestroyDnVec(g->vx);
    if (g->vt) cusparseDestroyDnVec(g->vt);
    if (g->vy) cusparseDestroyDnVec(g->vy);
    if (g->L) cusparseDestroySpMat(g->L);
    if (g->U) cusparseDestroySpMat(g->U);
    sps__dfree(g->b1);
    sps__dfree(g->b2);
    sps__dfree(g->tmp);
    sps__dfree(g->scr);
    sps__dfree(g->rp);
    sps__dfree(g->ci);
    sps__dfree(g->v);
    sps__dfree(g->dinv);
    sps__dfree(g->dpos);
    sps__dfree(g->trp);
    sps__dfree(g->tci);
    sps__dfree(g->tdpos);
    sps__dfree(g->perm);
    sps__dfree(g->tv);
    sps__dfree(g->y);
    sps__dfree(g->w);
    delete g;
    pc->impl = nullptr;
    pc->fused_diag = nullptr;
}

sps_status new_impl(sps_precond *pc, gpu_pc **out)
{
    gpu_pc *g = new (std::nothrow) gpu_pc;
    if (!g) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", pc->name);
    pc->impl = g;
    pc->destroy = gpu_destroy;
    *out = g;
    return SPS_OK;
}

/* ---- none, jacobi ------------------------------------------------------ */

sps_status apply_none(sps_precond *pc, const double *r, double *z)
{
    return sps__d2d(pc->ctx, z, r, (size_t)pc->n * sizeof *z);
}

__global__ void jacobi_kernel(int n, const double *__restrict__ dinv,
                              const double *__restrict__ r, double *__restrict__ z)
{
    /* 64-bit index: i + stride must not overflow for n near 2^31 */
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        z[i] = dinv[i] * r[i];
}

/* A thread per row, the row summed in CSR order as on the host. Refused rows
 * lower *bad to their index (an integer minimum: the same result whatever
 * the order); each block writes the largest |d_i| sum_j |a_ij| of its rows. */
__global__ void diag_scan(int n, const int *__restrict__ rp, const int *__restrict__ ci,
                          const double *__restrict__ v, int l1, double *__restrict__ dinv,
                          double *__restrict__ gpart, int *bad)
{
    __shared__ double sm[256];
    double g = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        double a = 0.0, off = 0.0, all = 0.0;
        int has = 0;
        for (int p = rp[i]; p < rp[i + 1]; p++) {
            double x = v[p];
            all += fabs(x);
            if (ci[p] == (int)i) a = x, has = 1;
            else off += fabs(x);
        }
        double m = l1 ? (a < 0 ? a - off : a + off) : a;
        int refuse = l1 ? m == 0.0 : (!has || a == 0.0);
        if (refuse) atomicMin(bad, (int)i);
        double d = refuse ? 0.0 : 1.0 / m;
        dinv[i] = d;
        g = fmax(g, all * fabs(d));
    }
    sm[threadIdx.x] = g;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sm[threadIdx.x] = fmax(sm[threadIdx.x], sm[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) gpart[blockIdx.x] = sm[0];
}

__global__ void max_parts(int parts, double *gpart)
{
    __shared__ double sm[256];
    double g = 0.0;
    for (int i = threadIdx.x; i < parts; i += blockDim.x) g = fmax(g, gpart[i]);
    sm[threadIdx.x] = g;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sm[threadIdx.x] = fmax(sm[threadIdx.x], sm[threadIdx.x + s]);
        __syncthreads();
    }
    if (threadIdx.x == 0) gpart[parts] = sm[0];
}

int grid_for(sps_context *ctx, int n, int block)
{
    long long b = ((long long)n + block - 1) / block, cap = 32LL * sps__gpu_sm_count(ctx);
    if (b > cap) b = cap;
    return b < 1 ? 1 : (int)b;
}

sps_status apply_jacobi(sps_precond *pc, const double *r, double *z)
{
    jacobi_kernel<<<grid_for(pc->ctx, pc->n, 256), 256, 0, sps_stream(pc->ctx)>>>(pc->n, pc->fused_diag,
                                                                                   r, z);
    SPS_LAUNCH_CHECK(pc->ctx, "jacobi_kernel");
    return SPS_OK;
}

/* ---- ilu0, ic0: triangular solves -------------------------------------- */

/* Run f with the handle in host pointer mode (alpha lives on the host),
 * restoring whatever mode the caller had. */
struct host_mode {
    cusparseHandle_t h;
    cusparsePointerMode_t old;
    cusparseStatus_t st;
    explicit host_mode(cusparseHandle_t hh) : h(hh), old(CUSPARSE_POINTER_MODE_HOST)
    {
        st = cusparseGetPointerMode(h, &old);
        if (st == CUSPARSE_STATUS_SUCCESS && old != CUSPARSE_POINTER_MODE_HOST)
            st = cusparseSetPointerMode(h, CUSPARSE_POINTER_MODE_HOST);
    }
    ~host_mode()
    {
        if (old != CUSPARSE_POINTER_MODE_HOST) cusparseSetPointerMode(h, old);
    }
};

/* z = U^-1 L^-1 r: r -> tmp with s1, tmp -> z with s2 (ic0: U = L'). */
sps_status apply_tri(sps_precond *pc, const double *r, double *z)
{
    sps_context *ctx = pc->ctx;
    gpu_pc *g = (gpu_pc *)pc->impl;
    cusparseHandle_t h = (cusparseHandle_t)sps__gpu_cusparse(ctx);
    host_mode hm(h);
    SPS_CUSPARSE(ctx, hm.st);
    /* SpSV never writes its x: the cast only satisfies the setter. */
    SPS_CUSPARSE(ctx, cusparseDnVecSetValues(g->vx, const_cast<double *>(r)));
    SPS_CUSPARSE(ctx, cusparseDnVecSetValues(g->vy, z));
    SPS_CUSPARSE(ctx, cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, g->L, g->vx,
                                         g->vt, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, g->s1));
    SPS_CUSPARSE(ctx, cusparseSpSV_solve(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, g->U, g->vt,
                                         g->vy, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT, g->s2));
    return SPS_OK;
}

/* Upload a CSR into g->rp, g->ci, g->v. */
sps_status upload(sps_context *ctx, gpu_pc *g, const sps_csr *A)
{
    size_t n1 = (size_t)A->nrows + 1, nz = (size_t)A->nnz;
    sps_status st;
    if ((st = sps__dmalloc(ctx, (void **)&g->rp, n1 * sizeof(int))) != SPS_OK) return st;
    if ((st = sps__dmalloc(ctx, (void **)&g->ci, nz * sizeof(int))) != SPS_OK) return st;
    if ((st = sps__dmalloc(ctx, (void **)&g->v, nz * sizeof(double))) != SPS_OK) return st;
    if ((st = sps__h2d(ctx, g->rp, A->row_ptr, n1 * sizeof(int))) != SPS_OK) return st;
    if ((st = sps__h2d(ctx, g->ci, A->col_idx, nz * sizeof(int))) != SPS_OK) return st;
    return sps__h2d(ctx, g->v, A->val, nz * sizeof(double));
}

sps_status set_tri(sps_context *ctx, cusparseSpMatDescr_t M, cusparseFillMode_t fill,
                   cusparseDiagType_t diag)
{
    SPS_CUSPARSE(ctx, cusparseSpMatSetAttribute(M, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
    SPS_CUSPARSE(ctx, cusparseSpMatSetAttribute(M, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag));
    return SPS_OK;
}

/* Both SpSV analyses on the factor's current values (vx and vy pointed at
 * scratch: apply re-points them): the setup's, and a refresh's where
 * cusparseSpSV_updateMatrix is missing. */
sps_status spsv_analyze(sps_precond *pc, gpu_pc *g)
{
    sps_context *ctx = pc->ctx;
    cusparseHandle_t h = (cusparseHandle_t)sps__gpu_cusparse(ctx);
    host_mode hm(h);
    SPS_CUSPARSE(ctx, hm.st);
    SPS_CUSPARSE(ctx, cusparseDnVecSetValues(g->vx, g->scr));
    SPS_CUSPARSE(ctx, cusparseDnVecSetValues(g->vy, g->scr));
    SPS_CUSPARSE(ctx, cusparseSpSV_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, g->L,
                                            g->vx, g->vt, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT,
                                            g->s1, g->b1));
    SPS_CUSPARSE(ctx, cusparseSpSV_analysis(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, g->U,
                                            g->vt, g->vy, CUDA_R_64F, CUSPARSE_SPSV_ALG_DEFAULT,
                                            g->s2, g->b2));
    return SPS_OK;
}

/* After the factorization: vectors, SpSV descriptors, buffers, analyses. */
sps_status tri_setup(sps_precond *pc, gpu_pc *g)
{
    sps_context *ctx = pc->ctx;
    cusparseHandle_t h = (cusparseHandle_t)sps__gpu_cusparse(ctx);
    size_t nb = (size_t)pc->n * sizeof(double), s1 = 0, s2 = 0;
    sps_status st;
    if ((st = sps__dmalloc(ctx, (void **)&g->tmp, nb)) != SPS_OK) return st;
    if ((st = sps__dmalloc(ctx, (void **)&g->scr, nb)) != SPS_OK) return st;
    /* vx and vy point at scr for the analyses; apply re-points them. */
    SPS_CUSPARSE(ctx, cusparseCreateDnVec(&g->vx, pc->n, g->scr, CUDA_R_64F));
    SPS_CUSPARSE(ctx, cusparseCreateDnVec(&g->vt, pc->n, g->tmp, CUDA_R_64F));
    SPS_CUSPARSE(ctx, cusparseCreateDnVec(&g->vy, pc->n, g->scr, CUDA_R_64F));
    SPS_CUSPARSE(ctx, cusparseSpSV_createDescr(&g->s1));
    SPS_CUSPARSE(ctx, cusparseSpSV_createDescr(&g->s2));
    host_mode hm(h);
    SPS_CUSPARSE(ctx, hm.st);
    SPS_CUSPARSE(ctx, cusparseSpSV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, g->L,
                                              g->vx, g->vt, CUDA_R_64F,
                                              CUSPARSE_SPSV_ALG_DEFAULT, g->s1, &s1));
    SPS_CUSPARSE(ctx, cusparseSpSV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, g->U,
                                              g->vt, g->vy, CUDA_R_64F,
                                              CUSPARSE_SPSV_ALG_DEFAULT, g->s2, &s2));
    if ((st = sps__dmalloc(ctx, &g->b1, s1)) != SPS_OK) return st;
    if ((st = sps__dmalloc(ctx, &g->b2, s2)) != SPS_OK) return st;
    if ((st = spsv_analyze(pc, g)) != SPS_OK) return st;
    pc->apply = apply_tri;
    return SPS_OK;
}

sps_status create_csr(sps_context *ctx, const gpu_pc *g, sps_idx n, sps_idx nnz,
                      cusparseSpMatDescr_t *M)
{
    SPS_CUSPARSE(ctx, cusparseCreateCsr(M, n, n, nnz, g->rp, g->ci, g->v, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    return SPS_OK;
}

/* First row whose IC(0) diagonal is not > 0 (NaN included: csric02 reports
 * exact zeros only, a negative pivot shows up as sqrt(<0) = NaN). */
__global__ void first_bad_diag(int n, const int *__restrict__ rp, const double *__restrict__ v,
                               int *first)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x)
        if (!(v[rp[i + 1] - 1] > 0.0)) atomicMin(first, (int)i); /* integer min: deterministic */
}

/* The legacy descriptor (csrilu02/csric02; a refresh checks it is there). */
sps_status legacy_descr(sps_context *ctx, gpu_pc *g)
{
    legacy &lg = g->lg;
    SPS_CUSPARSE(ctx, cusparseCreateMatDescr(&lg.d));
    SPS_CUSPARSE(ctx, cusparseSetMatIndexBase(lg.d, CUSPARSE_INDEX_BASE_ZERO));
    SPS_CUSPARSE(ctx, cusparseSetMatType(lg.d, CUSPARSE_MATRIX_TYPE_GENERAL));
    return SPS_OK;
}

/* Common start of ilu0/ic0: the impl, A on the device, the legacy descriptor. */
sps_status begin(sps_precond *pc, const sps_csr *A, gpu_pc **g)
{
    sps_context *ctx = pc->ctx;
    sps_status st = new_impl(pc, g);
    if (st == SPS_OK) st = upload(ctx, *g, A);
    if (st != SPS_OK) return st;
    (*g)->nnz = A->nnz;
    return legacy_descr(ctx, *g);
}

/* The analysis of the legacy incomplete factorization (the pattern only;
 * csrilu02 and csric02 take the same calls), kept in g->lg. *structural:
 * the first structural zero pivot (-1: none). */
template <typename Info, typename Size, typename Analysis, typename Zero>
sps_status analyze(sps_precond *pc, gpu_pc *g, Info info, Size size, Analysis analysis, Zero zero,
                   int *structural)
{
    sps_context *ctx = pc->ctx;
    cusparseHandle_t h = (cusparseHandle_t)sps__gpu_cusparse(ctx);
    legacy &lg = g->lg;
    int bytes = 0, nnz = (int)g->nnz;
    sps_status st;
    *structural = -1;
    SPS_CUSPARSE(ctx, size(h, pc->n, nnz, lg.d, g->v, g->rp, g->ci, info, &bytes));
    if ((st = sps__dmalloc(ctx, &lg.buf, (size_t)bytes)) != SPS_OK) return st;
    SPS_CUSPARSE(ctx, analysis(h, pc->n, nnz, lg.d, g->v, g->rp, g->ci, info,
                               CUSPARSE_SOLVE_POLICY_USE_LEVEL, lg.buf));
    cusparseStatus_t zs = zero(h, info, structural);
    if (zs == CUSPARSE_STATUS_ZERO_PIVOT) return SPS_OK;
    *structural = -1;
    SPS_CUSPARSE(ctx, zs);
    return SPS_OK;
}

/* The numeric factorization in place on vals (the factor's pattern, on the
 * device) with the kept analysis. *numerical: the first zero pivot (-1:
 * none); the query waits for the factorization. */
template <typename Info, typename Factor, typename Zero>
sps_status numeric(sps_precond *pc, gpu_pc *g, double *vals, Info info, Factor factor, Zero zero,
                   int *numerical)
{
    sps_context *ctx = pc->ctx;
    cusparseHandle_t h = (cusparseHandle_t)sps__gpu_cusparse(ctx);
    *numerical = -1;
    SPS_CUSPARSE(ctx, factor(h, pc->n, (int)g->nnz, g->lg.d, vals, g->rp, g->ci, info,
                             CUSPARSE_SOLVE_POLICY_USE_LEVEL, g->lg.buf));
    cusparseStatus_t zs = zero(h, info, numerical);
    if (zs == CUSPARSE_STATUS_ZERO_PIVOT) return SPS_OK;
    *numerical = -1;
    SPS_CUSPARSE(ctx, zs);
    return SPS_OK;
}

sps_status ilu_numeric(sps_precond *pc, gpu_pc *g, double *vals, int *bad)
{
    return numeric(pc, g, vals, g->lg.ilu, cusparseDcsrilu02, cusparseXcsrilu02_zeroPivot, bad);
}

/* IC(0) on vals, *bad the first row whose pivot is not > 0 (-1: none). A
 * negative pivot is not a "zero pivot" to cuSPARSE: the diagonal is scanned. */
sps_status ic_numeric(sps_precond *pc, gpu_pc *g, double *vals, int *bad)
{
    sps_context *ctx = pc->ctx;
    int pos = -1, *d_first = nullptr, first = pc->n;
    sps_status st = numeric(pc, g, vals, g->lg.ic, cusparseDcsric02, cusparseXcsric02_zeroPivot, &pos);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&d_first, sizeof(int));
    if (st == SPS_OK) st = sps__h2d(ctx, d_first, &first, sizeof(int));
    if (st == SPS_OK) {
        first_bad_diag<<<grid_for(ctx, pc->n, 256), 256, 0, sps_stream(ctx)>>>(pc->n, g->rp, vals,
                                                                              d_first);
        cudaError_t e = cudaGetLastError();
        st = e == cudaSuccess ? sps__d2h(ctx, &first, d_first, sizeof(int))
                              : sps__cuda_fail(ctx, e, "launch first_bad_diag", __FILE__, __LINE__);
    }
    sps__dfree(d_first);
    if (pos >= 0 && pos < first) first = pos;
    *bad = first < pc->n ? first : -1;
    return st;
}

/* factor=par: the fixed-point factorization in place on vals (A's values in
 * the factor's pattern), refused rows in the host's words. */
sps_status par_numeric(sps_precond *pc, gpu_pc *g, double *vals)
{
    int64_t bad = -1;
    sps_status st = sps__parilu_dev(pc->ctx, pc->n, g->nnz, g->rp, g->ci, g->chol, g->par, vals, &bad);
    if (st != SPS_OK) return st;
    return bad >= 0 ? sps__parilu_fail(pc, g->chol, bad, g->par) : SPS_OK;
}

/* ---- ilu0 / ic0 with Jacobi sweeps --------------------------------------- */

/* xout = D^-1 (b - (T - D) xin), xin NULL meaning 0: precond/ilu.c's sweep_host. */
__global__ void tri_sweep(int n, const int *__restrict__ rp, const int *__restrict__ ci,
                          const double *__restrict__ v, const int *__restrict__ dpos, int lower,
                          int unit, const double *__restrict__ b, const double *__restrict__ xin,
                          double *__restrict__ xout)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
         i += (long long)gridDim.x * blockDim.x) {
        int d = dpos[i], lo = lower ? rp[i] : d + 1, hi = lower ? d : rp[i + 1];
        double s = b[i];
        if (xin)
            for (int p = lo; p < hi; p++) s -= v[p] * xin[ci[p]];
        xout[i] = unit ? s : s / v[d];
    }
}

__global__ void gather(long long nnz, const int *__restrict__ perm, const double *__restrict__ v,
                       double *__restrict__ out)
{
    for (long long q = blockIdx.x * (long long)blockDim.x + threadIdx.x; q < nnz;
         q += (long long)gridDim.x * blockDim.x)
        out[q] = v[perm[q]];
}

/* K + 1 sweeps ending in out: precond/ilu.c's jacobi_solve. */
sps_status jacobi_solve(sps_precond *pc, const sps_ilu_tri &t, int K, const double *b, double *out,
                        double *buf)
{
    const double *prev = nullptr;
    int grid = grid_for(pc->ctx, pc->n, 256);
    for (int j = 0; j <= K; j++) {
        double *x = (K - j) % 2 == 0 ? out : buf;
        tri_sweep<<<grid, 256, 0, sps_stream(pc->ctx)>>>(pc->n, t.rp, t.ci, t.v, t.dpos, t.lower,
                                                          t.unit, b, prev, x);
        SPS_LAUNCH_CHECK(pc->ctx, "tri_sweep");
        prev = x;
    }
    return SPS_OK;
}

sps_status apply_sweeps(sps_precond *pc, const double *r, double *z)
{
    gpu_pc *g = (gpu_pc *)pc->impl;
    sps_status st = jacobi_solve(pc, g->lo, g->sweeps, r, g->y, g->w);
    return st == SPS_OK ? jacobi_solve(pc, g->up, g->sweeps, g->y, z, g->w) : st;
}

sps_status upload_ints(sps_context *ctx, int **dst, const sps_idx *src, size_t count)
{
    sps_status st = sps__dmalloc(ctx, (void **)dst, count * sizeof(int));
    return st == SPS_OK ? sps__h2d(ctx, *dst, src, count * sizeof(int)) : st;
}

/* After the factorization (g->rp, g->ci, g->v hold the factor). */
sps_status sweeps_setup(sps_precond *pc, gpu_pc *g, int sweeps)
{
    sps_context *ctx = pc->ctx;
    size_t nb = (size_t)pc->n * sizeof(double);
    sps_status st = sps__dmalloc(ctx, (void **)&g->y, nb);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&g->w, nb);
    if (st != SPS_OK) return st;
    g->sweeps = sweeps;
    pc->apply = apply_sweeps;
    return SPS_OK;
}

} // namespace

static_assert(sizeof(sps_idx) == sizeof(int), "index arrays are uploaded as int");

extern "C" sps_status sps__pc_gpu_none(sps_precond *pc)
{
    pc->apply = apply_none;
    return SPS_OK;
}

extern "C" sps_status sps__pc_gpu_diag(sps_precond *pc, const double *dinv)
{
    gpu_pc *g = nullptr;
    sps_status st = new_impl(pc, &g);
    if (st != SPS_OK) return st;
    size_t nb = (size_t)pc->n * sizeof(double);
    if ((st = sps__dmalloc(pc->ctx, (void **)&g->dinv, nb)) != SPS_OK) return st;
    if ((st = sps__h2d(pc->ctx, g->dinv, dinv, nb)) != SPS_OK) return st;
    pc->fused_diag = g->dinv;
    pc->apply = apply_jacobi;
    return SPS_OK;
}

extern "C" sps_status sps__pc_gpu_diag_scan(sps_context *ctx, const sps_matrix *A, int l1,
                                          double **dinv, double *gersh, int *refused)
{
    *dinv = nullptr;
    *refused = 0;
    const sps_dcsr *d = nullptr;
    sps_status st = sps__matrix_device(ctx, A, &d, NULL);
    if (st != SPS_OK) return st;
    int n = d->nrows, grid = grid_for(ctx, n, 256);
    double *out = nullptr, *gpart = nullptr;
    int *bad = nullptr;
    struct { double g; int bad; } h = {0.0, 0};
    st = sps__dmalloc(ctx, (void **)&out, (size_t)n * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&gpart, (size_t)(grid + 1) * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&bad, sizeof(int));
    if (st == SPS_OK) st = sps__h2d(ctx, bad, &n, sizeof n); /* n: no refused row */
    if (st == SPS_OK && n > 0) {
        cudaStream_t s = sps_stream(ctx);
        diag_scan<<<grid, 256, 0, s>>>(n, d->row_ptr, d->col_idx, d->val, l1, out, gpart, bad);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch diag_scan", __FILE__, __LINE__);
        if (st == SPS_OK) {
            max_parts<<<1, 256, 0, s>>>(grid, gpart);
            e = cudaGetLastError();
            if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch max_parts", __FILE__, __LINE__);
        }
        if (st == SPS_OK) st = sps__d2h(ctx, &h.g, gpart + grid, sizeof h.g);
        if (st == SPS_OK) st = sps__d2h(ctx, &h.bad, bad, sizeof h.bad);
    }
    sps__dfree(gpart);
    sps__dfree(bad);
    if (st == SPS_OK && n > 0 && h.bad < n) *refused = 1;
    if (st != SPS_OK || *refused) {
        sps__dfree(out);
        return st;
    }
    if (gersh) *gersh = h.g;
    *dinv = out;
    return SPS_OK;
}

extern "C" sps_status sps__pc_gpu_diag_adopt(sps_precond *pc, double *dinv)
{
    gpu_pc *g = nullptr;
    sps_status st = new_impl(pc, &g);
    if (st != SPS_OK) {
        sps__dfree(dinv);
        return st;
    }
    g->dinv = dinv;
    pc->fused_diag = g->dinv;
    pc->apply = apply_jacobi;
    return SPS_OK;
}

namespace {

/* csrilu02: the analysis (kept for a refresh), then the factorization. */
sps_status ilu_exact(sps_precond *pc, gpu_pc *g)
{
    sps_context *ctx = pc->ctx;
    int zs, zn;
    SPS_CUSPARSE(ctx, cusparseCreateCsrilu02Info(&g->lg.ilu));
    sps_status st = analyze(pc, g, g->lg.ilu, cusparseDcsrilu02_bufferSize, cusparseDcsrilu02_analysis,
                            cusparseXcsrilu02_zeroPivot, &zs);
    if (st != SPS_OK) return st;
    /* structural zeros were ruled out on the host; report one anyway */
    if (zs >= 0) return sps__pc_pivot_error(pc, 0, zs, 1);
    if ((st = ilu_numeric(pc, g, g->v, &zn)) != SPS_OK) return st;
    return zn >= 0 ? sps__pc_pivot_error(pc, 0, zn, 0) : SPS_OK;
}

/* After the factorization: K = sweeps Jacobi sweeps (g->dpos set), or exact
 * SpSV solves (sweeps < 0). */
sps_status ilu0_solves(sps_precond *pc, gpu_pc *g, int sweeps)
{
    sps_context *ctx = pc->ctx;
    sps_status st;
    if (sweeps >= 0) {
        g->lo = sps_ilu_tri{g->rp, g->ci, g->dpos, g->v, 1, 1};
        g->up = sps_ilu_tri{g->rp, g->ci, g->dpos, g->v, 0, 0};
        return sweeps_setup(pc, g, sweeps);
    }
    if ((st = create_csr(ctx, g, pc->n, g->nnz, &g->L)) != SPS_OK) return st;
    if ((st = set_tri(ctx, g->L, CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_UNIT)) != SPS_OK)
        return st;
    if ((st = create_csr(ctx, g, pc->n, g->nnz, &g->U)) != SPS_OK) return st;
    if ((st = set_tri(ctx, g->U, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT)) != SPS_OK)
        return st;
    return tri_setup(pc, g);
}

} // namespace

extern "C" sps_status sps__pc_gpu_ilu0(sps_precond *pc, const sps_csr *A, const sps_idx *dpos,
                                      int sweeps, int fsweeps)
{
    sps_context *ctx = pc->ctx;
    gpu_pc *g = nullptr;
    sps_status st = begin(pc, A, &g);
    if (st != SPS_OK) return st;
    g->par = fsweeps;
    if ((st = fsweeps > 0 ? par_numeric(pc, g, g->v) : ilu_exact(pc, g)) != SPS_OK) return st;
    if (dpos && (st = upload_ints(ctx, &g->dpos, dpos, (size_t)pc->n)) != SPS_OK) return st;
    return ilu0_solves(pc, g, dpos ? sweeps : -1);
}

/* factor=par from A's device copy: no host pass (the registry's setup_gpu).
 * A row without a diagonal entry: SPS_ERR_UNSUPPORTED without a message, and
 * the host path words the refusal. */
extern "C" sps_status sps__pc_gpu_ilu0_par(sps_precond *pc, const sps_matrix *A, int sweeps, int fsweeps)
{
    sps_context *ctx = pc->ctx;
    const sps_dcsr *d = nullptr;
    gpu_pc *g = nullptr;
    sps_status st = sps__matrix_device(ctx, A, &d, NULL);
    if (st == SPS_OK) st = new_impl(pc, &g);
    if (st != SPS_OK) return st;
    size_t n1 = (size_t)pc->n + 1, nz = (size_t)d->nnz;
    g->nnz = d->nnz;
    g->par = fsweeps;
    if ((st = sps__dmalloc(ctx, (void **)&g->rp, n1 * sizeof(int))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->ci, nz * sizeof(int))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->v, nz * sizeof(double))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->dpos, (n1 - 1) * sizeof(int))) != SPS_OK ||
        (st = sps__d2d(ctx, g->rp, d->row_ptr, n1 * sizeof(int))) != SPS_OK ||
        (st = sps__d2d(ctx, g->ci, d->col_idx, nz * sizeof(int))) != SPS_OK ||
        (st = sps__d2d(ctx, g->v, d->val, nz * sizeof(double))) != SPS_OK)
        return st;
    sps_idx first = -1;
    if ((st = sps__parilu_dev_diag(ctx, pc->n, g->rp, g->ci, g->dpos, &first)) != SPS_OK) return st;
    if (first >= 0) return SPS_ERR_UNSUPPORTED;
    if ((st = legacy_descr(ctx, g)) != SPS_OK || (st = par_numeric(pc, g, g->v)) != SPS_OK) return st;
    return ilu0_solves(pc, g, sweeps);
}


namespace {

/* ic0 with Jacobi sweeps: L' as its own CSR, its values gathered from L. */
/* L' as its own CSR on the device: the pattern from the host, the values
 * gathered from the factor (again after a refresh: adopt_factor). */
sps_status ic0_transpose(sps_precond *pc, gpu_pc *g, const sps_ilu_pattern *t)
{
    sps_context *ctx = pc->ctx;
    size_t n = (size_t)pc->n, nnz = (size_t)g->nnz;
    sps_status st;
    if ((st = upload_ints(ctx, &g->dpos, t->dpos, n)) != SPS_OK) return st;
    if ((st = upload_ints(ctx, &g->trp, t->trp, n + 1)) != SPS_OK) return st;
    if ((st = upload_ints(ctx, &g->tci, t->tci, nnz)) != SPS_OK) return st;
    if ((st = upload_ints(ctx, &g->tdpos, t->tdpos, n)) != SPS_OK) return st;
    if ((st = upload_ints(ctx, &g->perm, t->perm, nnz)) != SPS_OK) return st;
    if ((st = sps__dmalloc(ctx, (void **)&g->tv, nnz * sizeof(double))) != SPS_OK) return st;
    gather<<<grid_for(ctx, (int)nnz, 256), 256, 0, sps_stream(ctx)>>>((long long)nnz, g->perm,
                                                                      g->v, g->tv);
    SPS_LAUNCH_CHECK(ctx, "gather");
    return SPS_OK;
}

sps_status ic0_sweeps(sps_precond *pc, gpu_pc *g, int sweeps)
{
    g->lo = sps_ilu_tri{g->rp, g->ci, g->dpos, g->v, 1, 0};
    g->up = sps_ilu_tri{g->trp, g->tci, g->tdpos, g->tv, 0, 0};
    return sweeps_setup(pc, g, sweeps);
}

/* Exact solves: L (lower, non-unit) and L' stored as an upper CSR, both
 * without a transpose: cuSPARSE's transposed SpSV gave results that two
 * analyses of the same factor did not reproduce bitwise (H100, CUDA 13.0). */
sps_status ic0_exact(sps_precond *pc, gpu_pc *g)
{
    sps_context *ctx = pc->ctx;
    sps_status st;
    if ((st = create_csr(ctx, g, pc->n, g->nnz, &g->L)) != SPS_OK) return st;
    if ((st = set_tri(ctx, g->L, CUSPARSE_FILL_MODE_LOWER, CUSPARSE_DIAG_TYPE_NON_UNIT)) != SPS_OK)
        return st;
    SPS_CUSPARSE(ctx, cusparseCreateCsr(&g->U, pc->n, pc->n, g->nnz, g->trp, g->tci, g->tv,
                                        CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                        CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
    if ((st = set_tri(ctx, g->U, CUSPARSE_FILL_MODE_UPPER, CUSPARSE_DIAG_TYPE_NON_UNIT)) != SPS_OK)
        return st;
    return tri_setup(pc, g);
}

} // namespace

namespace {

/* csric02: the analysis (kept for a refresh), then the factorization. */
sps_status ic_exact(sps_precond *pc, gpu_pc *g)
{
    sps_context *ctx = pc->ctx;
    int zs, bad;
    SPS_CUSPARSE(ctx, cusparseCreateCsric02Info(&g->lg.ic));
    sps_status st = analyze(pc, g, g->lg.ic, cusparseDcsric02_bufferSize, cusparseDcsric02_analysis,
                            cusparseXcsric02_zeroPivot, &zs);
    if (st != SPS_OK) return st;
    if (zs >= 0) return sps__pc_pivot_error(pc, 1, zs, 1);
    if ((st = ic_numeric(pc, g, g->v, &bad)) != SPS_OK) return st;
    return bad >= 0 ? sps__pc_pivot_error(pc, 1, bad, 0) : SPS_OK;
}

} // namespace

extern "C" sps_status sps__pc_gpu_ic0(sps_precond *pc, const sps_csr *L, const sps_ilu_pattern *t,
                                     int sweeps, int fsweeps)
{
    gpu_pc *g = nullptr;
    sps_status st = begin(pc, L, &g);
    if (st != SPS_OK) return st;
    g->par = fsweeps;
    g->chol = 1;
    if ((st = fsweeps > 0 ? par_numeric(pc, g, g->v) : ic_exact(pc, g)) != SPS_OK) return st;
    if ((st = ic0_transpose(pc, g, t)) != SPS_OK) return st;
    return sweeps >= 0 ? ic0_sweeps(pc, g, sweeps) : ic0_exact(pc, g);
}

namespace {

/* A device array of ints freed on every path. */
struct iscratch {
    int *p = nullptr;
    ~iscratch() { sps__dfree(p); }
};

/* ic0:factor=par from A's device copy: the diagonal scan and the exact
 * symmetry test; 1 in *go when both pass (else the host path decides). */
sps_status ic0_dev_checks(sps_precond *pc, const sps_matrix *A, const sps_dcsr *d, int *dpos, int *go)
{
    sps_idx first = -1;
    int same = 1;
    sps_status st = sps__parilu_dev_diag(pc->ctx, pc->n, d->row_ptr, d->col_idx, dpos, &first);
    if (st == SPS_OK && first < 0 && A->src.symmetry != SPS_SYMMETRIC) /* mirrored on load: exact */
        st = sps__parilu_dev_symmetric(pc->ctx, pc->n, d->nnz, d->row_ptr, d->col_idx, d->val, &same);
    *go = st == SPS_OK && first < 0 && same;
    return st;
}

/* L = tril(A) into g (rp, ci, v, dpos), (nnz + n) / 2 entries: the pattern
 * is symmetric with every diagonal entry. */
sps_status ic0_dev_tril(sps_precond *pc, gpu_pc *g, const sps_dcsr *d, const int *adpos)
{
    sps_context *ctx = pc->ctx;
    size_t n = (size_t)pc->n, nz = ((size_t)d->nnz + n) / 2;
    sps_status st;
    g->nnz = (long long)nz;
    if ((st = sps__dmalloc(ctx, (void **)&g->rp, (n + 1) * sizeof(int))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->ci, nz * sizeof(int))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->v, nz * sizeof(double))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->dpos, n * sizeof(int))) != SPS_OK)
        return st;
    return sps__parilu_dev_tril(ctx, pc->n, d->nnz, d->row_ptr, d->col_idx, d->val, adpos, g->rp, g->ci, g->v,
                                g->dpos);
}

/* L' as its own CSR on the device: the pattern by a stable sort, the values
 * gathered from the factor (as ic0_transpose does from the host pattern). */
sps_status ic0_dev_transpose(sps_precond *pc, gpu_pc *g)
{
    sps_context *ctx = pc->ctx;
    size_t n = (size_t)pc->n, nnz = (size_t)g->nnz;
    sps_status st;
    if ((st = sps__dmalloc(ctx, (void **)&g->trp, (n + 1) * sizeof(int))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->tci, nnz * sizeof(int))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->perm, nnz * sizeof(int))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->tdpos, n * sizeof(int))) != SPS_OK ||
        (st = sps__dmalloc(ctx, (void **)&g->tv, nnz * sizeof(double))) != SPS_OK ||
        (st = sps__parilu_dev_transpose(ctx, pc->n, g->nnz, g->rp, g->ci, g->trp, g->tci, g->perm)) != SPS_OK ||
        (st = sps__d2d(ctx, g->tdpos, g->trp, n * sizeof(int))) != SPS_OK) /* rows of L' start with the diagonal */
        return st;
    gather<<<grid_for(ctx, (int)nnz, 256), 256, 0, sps_stream(ctx)>>>((long long)nnz, g->perm, g->v, g->tv);
    SPS_LAUNCH_CHECK(ctx, "gather");
    return SPS_OK;
}

} // namespace

/* ic0:factor=par from A's device copy, no host pass (setup_gpu); a missing
 * diagonal or a matrix not exactly symmetric: SPS_ERR_UNSUPPORTED without a
 * message, and the host path decides and words it. */
extern "C" sps_status sps__pc_gpu_ic0_par(sps_precond *pc, const sps_matrix *A, int sweeps, int fsweeps)
{
    sps_context *ctx = pc->ctx;
    const sps_dcsr *d = nullptr;
    gpu_pc *g = nullptr;
    iscratch adpos;
    int go = 0;
    sps_status st = sps__matrix_device(ctx, A, &d, NULL);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&adpos.p, (size_t)pc->n * sizeof(int));
    if (st == SPS_OK) st = ic0_dev_checks(pc, A, d, adpos.p, &go);
    if (st != SPS_OK) return st;
    if (!go) return SPS_ERR_UNSUPPORTED;
    if ((st = new_impl(pc, &g)) != SPS_OK || (st = ic0_dev_tril(pc, g, d, adpos.p)) != SPS_OK) return st;
    if ((st = sps__gpu_sync(ctx)) != SPS_OK) return st; /* adpos is freed on return */
    g->par = fsweeps;
    g->chol = 1;
    if ((st = legacy_descr(ctx, g)) != SPS_OK || (st = par_numeric(pc, g, g->v)) != SPS_OK ||
        (st = ic0_dev_transpose(pc, g)) != SPS_OK)
        return st;
    return sweeps >= 0 ? ic0_sweeps(pc, g, sweeps) : ic0_exact(pc, g);
}

namespace {

/* A device array freed on every path. */
struct dscratch {
    double *p = nullptr;
    ~dscratch() { sps__dfree(p); }
};

/* The SpSV descriptors keep a copy of the values from their analysis: give
 * them the new ones (L's in g->v; U's in g->v, or ic0's L' in g->tv) with
 * cusparseSpSV_updateMatrix (CUDA 12.1 on), or analyze again before it. */
sps_status spsv_refresh(sps_precond *pc, gpu_pc *g)
{
#if CUDART_VERSION >= 12010
    sps_context *ctx = pc->ctx;
    cusparseHandle_t h = (cusparseHandle_t)sps__gpu_cusparse(ctx);
    SPS_CUSPARSE(ctx, cusparseSpSV_updateMatrix(h, g->s1, g->v, CUSPARSE_SPSV_UPDATE_GENERAL));
    SPS_CUSPARSE(ctx, cusparseSpSV_updateMatrix(h, g->s2, g->tv ? g->tv : g->v,
                                                CUSPARSE_SPSV_UPDATE_GENERAL));
    return SPS_OK;
#else
    return spsv_analyze(pc, g);
#endif
}

/* The new factor s (device, the factor's pattern) becomes g->v, in stream
 * order after any apply still reading the old one; then what reads it: the
 * SpSV analyses (their copy of the values) or L' for the sweeps. */
sps_status adopt_factor(sps_precond *pc, gpu_pc *g, const double *s)
{
    sps_context *ctx = pc->ctx;
    cudaStream_t stream = sps_stream(ctx);
    size_t nb = (size_t)g->nnz * sizeof(double);
    SPS_CUDA(ctx, cudaMemcpyAsync(g->v, s, nb, cudaMemcpyDeviceToDevice, stream));
    if (g->tv) {
        gather<<<grid_for(ctx, (int)g->nnz, 256), 256, 0, stream>>>(g->nnz, g->perm, g->v, g->tv);
        SPS_LAUNCH_CHECK(ctx, "gather");
    }
    sps_status st = g->s1 ? spsv_refresh(pc, g) : SPS_OK;
    return st == SPS_OK ? sps__gpu_sync(ctx) : st;
}

} // namespace

extern "C" sps_status sps__pc_gpu_ilu_refresh(sps_precond *pc, const double *vals, sps_idx nnz)
{
    sps_context *ctx = pc->ctx;
    gpu_pc *g = (gpu_pc *)pc->impl;
    if (!g || !g->lg.d || nnz != g->nnz)
        return sps__err(ctx, SPS_ERR_INTERNAL, "%s: refresh with %lld entries of a factor of %lld",
                        pc->name, (long long)nnz, g ? g->nnz : -1LL);
    dscratch s;
    int bad = -1;
    size_t nb = (size_t)nnz * sizeof(double);
    sps_status st = sps__dmalloc(ctx, (void **)&s.p, nb);
    if (st == SPS_OK) st = sps__h2d(ctx, s.p, vals, nb);
    if (st == SPS_OK && g->par) st = par_numeric(pc, g, s.p); /* refused rows: its own words */
    else if (st == SPS_OK) st = g->lg.ilu ? ilu_numeric(pc, g, s.p, &bad) : ic_numeric(pc, g, s.p, &bad);
    if (st != SPS_OK) return st;
    if (bad >= 0) return sps__pc_pivot_error(pc, g->lg.ic != nullptr, bad, 0);
    return adopt_factor(pc, g, s.p);
}

extern "C" sps_status sps__pc_gpu_ilu_values(const sps_precond *pc, double *out, int64_t *nnz)
{
    const gpu_pc *g = (const gpu_pc *)pc->impl;
    if (!g || !g->lg.d) return sps__err(pc->ctx, SPS_ERR_INTERNAL, "%s: no device factor", pc->name);
    if (nnz) *nnz = g->nnz;
    return out ? sps__d2h(pc->ctx, out, g->v, (size_t)g->nnz * sizeof *out) : SPS_OK;
}
