/* SPDX-License-Identifier: MIT */
/* spsolve/precond/ilu.c: ILU(0) and IC(0) in natural order, the exact
 * variants (`ilu0`, `ilu0:exact`, `ic0`, `ic0:exact`): the host
 * factorization and triangular solves, which are the reference the GPU ones
 * (cuSPARSE csrilu02/csric02 and SpSV, precond/precond_gpu.cu) are tested
 * against.
 *
 *   ilu0    A ~ L U in the pattern of A (L unit lower, U upper), natural
 *           order, IKJ elimination; z = U^-1 L^-1 r
 *   ic0     A ~ L L' in the pattern of tril(A), natural order; z = L'^-1 L^-1 r
 *
 * Structural checks (diagonal present, symmetry for ic0) run on the host for
 * both paths, so host and GPU report the same row in the same words. On a GPU
 * context the host stops there (ilu0) or at tril(A) (ic0): cuSPARSE
 * factorizes. */
#include "pc_impl.h"

#include <math.h>
#include <string.h>

typedef struct host_pc {
    sps_csr F;     /* ilu0: L\U in A's pattern; ic0: L (rows end with the diagonal) */
    sps_idx *dpos; /* ilu0: position of each row's diagonal in F */
} host_pc;

static void host_destroy(sps_precond *pc)
{
    host_pc *h = pc->impl;
    if (!h) return;
    sps__csr_free(&h->F);
    sps__free(h->dpos);
    sps__free(h);
    pc->impl = NULL;
}

static sps_status apply_ilu0_host(sps_precond *pc, const double *r, double *z)
{
    const host_pc *h = pc->impl;
    const sps_idx *rp = h->F.row_ptr, *ci = h->F.col_idx, *dp = h->dpos;
    const double *v = h->F.val;
    for (sps_idx i = 0; i < pc->n; i++) { /* L y = r, L unit lower */
        double s = r[i];
        for (sps_idx p = rp[i]; p < dp[i]; p++) s -= v[p] * z[ci[p]];
        z[i] = s;
    }
    for (sps_idx i = pc->n - 1; i >= 0; i--) { /* U z = y */
        double s = z[i];
        for (sps_idx p = dp[i] + 1; p < rp[i + 1]; p++) s -= v[p] * z[ci[p]];
        z[i] = s / v[dp[i]];
    }
    return SPS_OK;
}

static sps_status apply_ic0_host(sps_precond *pc, const double *r, double *z)
{
    const host_pc *h = pc->impl;
    const sps_idx *rp = h->F.row_ptr, *ci = h->F.col_idx;
    const double *v = h->F.val;
    for (sps_idx i = 0; i < pc->n; i++) { /* L y = r */
        double s = r[i];
        sps_idx d = rp[i + 1] - 1;
        for (sps_idx p = rp[i]; p < d; p++) s -= v[p] * z[ci[p]];
        z[i] = s / v[d];
    }
    for (sps_idx i = pc->n - 1; i >= 0; i--) { /* L' z = y, by columns of L' = rows of L */
        sps_idx d = rp[i + 1] - 1;
        double zi = z[i] / v[d];
        z[i] = zi;
        for (sps_idx p = rp[i]; p < d; p++) z[ci[p]] -= v[p] * zi;
    }
    return SPS_OK;
}

/* ILU(0), IKJ variant: for each row i, eliminate with the rows k < i it
 * references (in increasing k), updating only positions already in row i. */
static sps_status ilu0_factor(sps_precond *pc, const sps_csr *A, host_pc *h)
{
    sps_context *ctx = pc->ctx;
    sps_idx n = A->nrows, first;
    h->dpos = sps__malloc(sps__mul_size((size_t)n, sizeof *h->dpos));
    sps_idx *iw = sps__malloc(sps__mul_size((size_t)n, sizeof *iw));
    sps_status st = h->dpos && iw ? sps__csr_copy(ctx, A, &h->F)
                                  : sps__err(ctx, SPS_ERR_NO_MEMORY, "ilu0: out of memory");
    if (st != SPS_OK) {
        sps__free(iw);
        return st;
    }
    sps_idx missing = sps__pc_find_diag(A, h->dpos, &first);
    if (missing) {
        sps__free(iw);
        return sps__pc_pivot_error(pc, 0, first, missing);
    }
    const sps_idx *rp = h->F.row_ptr, *ci = h->F.col_idx, *dp = h->dpos;
    double *v = h->F.val;
    for (sps_idx i = 0; i < n; i++) iw[i] = -1;
    for (sps_idx i = 0; i < n; i++) {
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) iw[ci[p]] = p;
        for (sps_idx p = rp[i]; p < dp[i]; p++) {
            sps_idx k = ci[p];
            double l = v[p] / v[dp[k]];
            v[p] = l;
            for (sps_idx q = dp[k] + 1; q < rp[k + 1]; q++) {
                sps_idx w = iw[ci[q]];
                if (w >= 0) v[w] -= l * v[q];
            }
        }
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) iw[ci[p]] = -1;
        if (v[dp[i]] == 0.0) {
            sps__free(iw);
            return sps__pc_pivot_error(pc, 0, i, 0);
        }
    }
    sps__free(iw);
    return SPS_OK;
}

/* tril(A) with a structural check: each row must end with its diagonal. */
static sps_status lower_triangle(sps_precond *pc, const sps_csr *A, sps_csr *L)
{
    sps_context *ctx = pc->ctx;
    sps_idx n = A->nrows, first, missing = sps__pc_find_diag(A, NULL, &first);
    memset(L, 0, sizeof *L);
    if (missing) return sps__pc_pivot_error(pc, 1, first, missing);
    sps_idx nnz = 0;
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1] && A->col_idx[p] <= i; p++) nnz++;
    sps_status st = sps__csr_alloc(ctx, L, n, n, nnz);
    if (st != SPS_OK) return st;
    sps_idx q = 0;
    for (sps_idx i = 0; i < n; i++) {
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1] && A->col_idx[p] <= i; p++) {
            L->col_idx[q] = A->col_idx[p];
            L->val[q++] = A->val[p];
        }
        L->row_ptr[i + 1] = q;
    }
    return SPS_OK;
}

/* IC(0) on L = tril(A) in place, row by row:
 *   l_ik = (a_ik - sum_{j<k} l_ij l_kj) / l_kk,  l_ii = sqrt(a_ii - sum_{j<i} l_ij^2),
 * sums over the pattern only. */
static sps_status ic0_factor(sps_precond *pc, sps_csr *L)
{
    sps_context *ctx = pc->ctx;
    sps_idx n = L->nrows;
    sps_idx *iw = sps__malloc(sps__mul_size((size_t)n, sizeof *iw));
    if (!iw) return sps__err(ctx, SPS_ERR_NO_MEMORY, "ic0: out of memory");
    const sps_idx *rp = L->row_ptr, *ci = L->col_idx;
    double *v = L->val;
    for (sps_idx i = 0; i < n; i++) iw[i] = -1;
    for (sps_idx i = 0; i < n; i++) {
        sps_idx d = rp[i + 1] - 1;
        for (sps_idx p = rp[i]; p < d; p++) iw[ci[p]] = p;
        double dd = v[d];
        for (sps_idx p = rp[i]; p < d; p++) {
            sps_idx k = ci[p], dk = rp[k + 1] - 1;
            double s = v[p];
            for (sps_idx q = rp[k]; q < dk; q++) {
                sps_idx w = iw[ci[q]];
                if (w >= 0) s -= v[w] * v[q];
            }
            v[p] = s / v[dk];
            dd -= v[p] * v[p];
        }
        for (sps_idx p = rp[i]; p < d; p++) iw[ci[p]] = -1;
        if (!(dd > 0.0)) {
            sps__free(iw);
            return sps__pc_pivot_error(pc, 1, i, 0);
        }
        v[d] = sqrt(dd);
    }
    sps__free(iw);
    return SPS_OK;
}

/* IC(0) reads only the lower triangle: refuse matrices whose upper triangle
 * says something else (relative asymmetry above 1e-12). */
static sps_status check_symmetric(sps_context *ctx, const sps_matrix *A)
{
    if (A->src.symmetry == SPS_SYMMETRIC) return SPS_OK; /* mirrored on load: exact */
    sps_features f;
    sps_status st = sps_matrix_analyze(ctx, A, &f);
    if (st != SPS_OK) return st;
    if (f.symmetric || (f.pattern_symmetric && f.asymmetry <= 1e-12)) return SPS_OK;
    return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                    "ic0: the matrix is not symmetric (pattern %s, ||A - A'||_F / ||A||_F = %.3g); "
                    "IC(0) needs a symmetric positive definite matrix: try --precond ilu0",
                    f.pattern_symmetric ? "symmetric" : "nonsymmetric", f.asymmetry);
}

/* ---- setups and tables ---------------------------------------------------- */

/* `exact` names the variant (the only one so far): nothing to store. */
static sps_status exact_set(sps_context *ctx, void *prm, const char *key, const char *value)
{
    (void)prm;
    if (*value)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s takes no value (got '%s=%s')", key, key,
                        value);
    return SPS_OK;
}

static sps_status new_host(sps_precond *pc, host_pc **h)
{
    *h = sps__calloc(1, sizeof **h);
    if (!*h) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", pc->type->name);
    pc->impl = *h;
    pc->destroy = host_destroy;
    return SPS_OK;
}

static sps_status ilu0_setup(sps_precond *pc, const sps_pc_input *in)
{
    host_pc *h;
    sps_status st = new_host(pc, &h);
    if (st != SPS_OK) return st;
    pc->apply = apply_ilu0_host;
    if (!in->gpu) return ilu0_factor(pc, &in->A->A, h);
    sps_idx first, missing = sps__pc_find_diag(&in->A->A, NULL, &first);
    return missing ? sps__pc_pivot_error(pc, 0, first, missing) : SPS_OK;
}

static sps_status ic0_setup(sps_precond *pc, const sps_pc_input *in)
{
    host_pc *h;
    sps_status st = check_symmetric(pc->ctx, in->A);
    if (st == SPS_OK) st = new_host(pc, &h);
    if (st == SPS_OK) st = lower_triangle(pc, &in->A->A, &h->F);
    pc->apply = apply_ic0_host;
    if (st == SPS_OK && !in->gpu) st = ic0_factor(pc, &h->F);
    return st;
}

#if SPS_HAVE_CUDA
static sps_status ilu0_setup_dev(sps_precond *pc, const sps_pc_input *in, void *host)
{
    (void)host;
    return sps__pc_gpu_ilu0(pc, &in->A->A);
}

static sps_status ic0_setup_dev(sps_precond *pc, const sps_pc_input *in, void *host)
{
    (void)in;
    return sps__pc_gpu_ic0(pc, &((host_pc *)host)->F);
}
#define ILU0_DEV ilu0_setup_dev
#define IC0_DEV ic0_setup_dev
#else
#define ILU0_DEV NULL
#define IC0_DEV NULL
#endif

const sps_pc_type sps_pc_ilu0 = {
    .name = "ilu0",
    .summary = "ILU(0): incomplete LU with A's sparsity pattern (exact triangular solves)",
    .caps = 0,
    .keys = "exact",
    .prm_set = exact_set,
    .setup_host = ilu0_setup,
    .setup_dev = ILU0_DEV,
};

const sps_pc_type sps_pc_ic0 = {
    .name = "ic0",
    .summary = "IC(0): incomplete Cholesky with A's sparsity pattern (SPD matrices)",
    .caps = SPS_PCT_SYMMETRIC,
    .keys = "exact",
    .prm_set = exact_set,
    .setup_host = ic0_setup,
    .setup_dev = IC0_DEV,
};
