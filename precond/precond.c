/* SPDX-License-Identifier: MIT */
/* spsolve/precond/precond.c: sps_precond_* (dispatch by name, timing) and the
 * host preconditioners, which are the reference the GPU ones are tested
 * against.
 *
 *   none    z = r
 *   jacobi  z = D^-1 r, D = diag(A)
 *   ilu0    A ~ L U in the pattern of A (L unit lower, U upper), natural
 *           order, IKJ elimination; z = U^-1 L^-1 r
 *   ic0     A ~ L L' in the pattern of tril(A), natural order; z = L'^-1 L^-1 r
 *
 * Structural checks (square, diagonal present, symmetry for ic0) run here on
 * the host for both paths, so host and GPU report the same row in the same
 * words. */
#include "pc_impl.h"

#include "gpu.h"

#include <math.h>
#include <string.h>

static const char *const kind_names[] = {"none", "jacobi", "ilu0", "ic0"};

sps_status sps__pc_pivot_error(sps_context *ctx, sps_pc_kind kind, sps_idx row, sps_idx n,
                               sps_idx missing)
{
    const char *nm = kind_names[kind];
    if (missing > 0)
        return sps__err(ctx, SPS_ERR_ZERO_PIVOT,
                        "%s: zero pivot at row %d (1-based %d) of %d: the matrix has %d row%s "
                        "with no diagonal entry; try --precond none with GMRES, or reorder",
                        nm, row, row + 1, n, missing, missing == 1 ? "" : "s");
    if (kind == SPS_PC_IC0)
        return sps__err(ctx, SPS_ERR_ZERO_PIVOT,
                        "ic0: non-positive pivot at row %d (1-based %d) of %d: IC(0) needs a "
                        "positive definite matrix (and can break down even on one); try "
                        "--precond jacobi, or ilu0 with GMRES",
                        row, row + 1, n);
    return sps__err(ctx, SPS_ERR_ZERO_PIVOT,
                    "%s: zero pivot at row %d (1-based %d) of %d: the pivot vanished during the "
                    "elimination; try --precond jacobi or none, or reorder",
                    nm, row, row + 1, n);
}

/* ---- host implementations ---------------------------------------------- */

typedef struct host_pc {
    sps_csr F;      /* ilu0: L\U in A's pattern; ic0: L (rows end with the diagonal) */
    sps_idx *dpos;  /* ilu0: position of each row's diagonal in F */
    double *dinv;   /* jacobi */
} host_pc;

static void host_destroy(sps_precond *pc)
{
    host_pc *h = pc->impl;
    if (!h) return;
    sps__csr_free(&h->F);
    sps__free(h->dpos);
    sps__free(h->dinv);
    sps__free(h);
    pc->impl = NULL;
}

static sps_status apply_noop(sps_precond *pc, const double *r, double *z)
{
    (void)pc; (void)r; (void)z;
    return SPS_OK;
}

static sps_status apply_none_host(sps_precond *pc, const double *r, double *z)
{
    memcpy(z, r, (size_t)pc->n * sizeof *z);
    return SPS_OK;
}

static sps_status apply_jacobi_host(sps_precond *pc, const double *r, double *z)
{
    const double *d = pc->fused_diag;
    for (sps_idx i = 0; i < pc->n; i++) z[i] = d[i] * r[i];
    return SPS_OK;
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

/* Position of each row's diagonal entry (-1 if none); returns the number of
 * rows without one and the first such row in *first (-1 if none). */
static sps_idx find_diag(const sps_csr *A, sps_idx *dpos, sps_idx *first)
{
    sps_idx missing = 0;
    *first = -1;
    for (sps_idx i = 0; i < A->nrows; i++) {
        sps_idx d = -1;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1] && A->col_idx[p] <= i; p++)
            if (A->col_idx[p] == i) d = p;
        if (dpos) dpos[i] = d;
        if (d < 0 && missing++ == 0) *first = i;
    }
    return missing;
}

static sps_status jacobi_dinv(sps_context *ctx, const sps_csr *A, double **out)
{
    sps_idx n = A->nrows, first, missing = find_diag(A, NULL, &first);
    if (missing)
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "jacobi: row %d (1-based %d) of %d has no diagonal entry (%d row%s "
                        "lack%s one); try --precond ilu0 or --precond none",
                        first, first + 1, n, missing, missing == 1 ? "" : "s",
                        missing == 1 ? "s" : "");
    double *d = sps__malloc(sps__mul_size((size_t)n, sizeof *d));
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "jacobi: out of memory");
    for (sps_idx i = 0; i < n; i++) {
        double a = 0.0;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            if (A->col_idx[p] == i) a = A->val[p];
        if (a == 0.0) {
            sps__free(d);
            return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                            "jacobi: row %d (1-based %d) of %d has a zero diagonal entry; try "
                            "--precond ilu0 or --precond none",
                            i, i + 1, n);
        }
        d[i] = 1.0 / a;
    }
    *out = d;
    return SPS_OK;
}

/* ILU(0), IKJ variant: for each row i, eliminate with the rows k < i it
 * references (in increasing k), updating only positions already in row i. */
static sps_status ilu0_factor(sps_context *ctx, const sps_csr *A, host_pc *h)
{
    sps_idx n = A->nrows, first;
    h->dpos = sps__malloc(sps__mul_size((size_t)n, sizeof *h->dpos));
    sps_idx *iw = sps__malloc(sps__mul_size((size_t)n, sizeof *iw));
    sps_status st = h->dpos && iw ? sps__csr_copy(ctx, A, &h->F)
                                  : sps__err(ctx, SPS_ERR_NO_MEMORY, "ilu0: out of memory");
    if (st != SPS_OK) {
        sps__free(iw);
        return st;
    }
    sps_idx missing = find_diag(A, h->dpos, &first);
    if (missing) {
        sps__free(iw);
        return sps__pc_pivot_error(ctx, SPS_PC_ILU0, first, n, missing);
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
            return sps__pc_pivot_error(ctx, SPS_PC_ILU0, i, n, 0);
        }
    }
    sps__free(iw);
    return SPS_OK;
}

/* tril(A) with a structural check: each row must end with its diagonal. */
static sps_status lower_triangle(sps_context *ctx, const sps_csr *A, sps_csr *L)
{
    sps_idx n = A->nrows, first, missing = find_diag(A, NULL, &first);
    memset(L, 0, sizeof *L);
    if (missing) return sps__pc_pivot_error(ctx, SPS_PC_IC0, first, n, missing);
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
static sps_status ic0_factor(sps_context *ctx, sps_csr *L)
{
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
            return sps__pc_pivot_error(ctx, SPS_PC_IC0, i, n, 0);
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

/* ---- create / apply / destroy ------------------------------------------ */

static sps_status setup(sps_precond *pc, const sps_matrix *M)
{
    sps_context *ctx = pc->ctx;
    const sps_csr *A = &M->A;
    int gpu = sps_context_on_gpu(ctx);
    sps_status st;
    if (pc->n == 0) { /* nothing to precondition */
        pc->apply = apply_noop;
        return SPS_OK;
    }
    if (pc->kind == SPS_PC_IC0 && (st = check_symmetric(ctx, M)) != SPS_OK) return st;
    host_pc *h = sps__calloc(1, sizeof *h);
    if (!h) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", pc->name);
    pc->impl = h;
    pc->destroy = host_destroy;
    switch (pc->kind) {
    case SPS_PC_NONE:
        pc->apply = apply_none_host;
        st = SPS_OK;
        break;
    case SPS_PC_JACOBI:
        st = jacobi_dinv(ctx, A, &h->dinv);
        pc->fused_diag = h->dinv;
        pc->apply = apply_jacobi_host;
        break;
    case SPS_PC_ILU0:
        if (gpu) { /* the structural check only; cuSPARSE factorizes */
            sps_idx first, missing = find_diag(A, NULL, &first);
            st = missing ? sps__pc_pivot_error(ctx, SPS_PC_ILU0, first, pc->n, missing) : SPS_OK;
        } else {
            st = ilu0_factor(ctx, A, h);
        }
        pc->apply = apply_ilu0_host;
        break;
    default:
        st = lower_triangle(ctx, A, &h->F);
        if (st == SPS_OK && !gpu) st = ic0_factor(ctx, &h->F);
        pc->apply = apply_ic0_host;
        break;
    }
    if (st != SPS_OK || !gpu) return st;
#if SPS_HAVE_CUDA
    /* Hand over to the device: the host data above was only the input. */
    pc->impl = NULL;
    pc->fused_diag = NULL;
    pc->apply = NULL;
    pc->destroy = NULL;
    switch (pc->kind) {
    case SPS_PC_NONE: st = sps__pc_gpu_none(pc); break;
    case SPS_PC_JACOBI: st = sps__pc_gpu_jacobi(pc, h->dinv); break;
    case SPS_PC_ILU0: st = sps__pc_gpu_ilu0(pc, A); break;
    default: st = sps__pc_gpu_ic0(pc, &h->F); break;
    }
    sps_precond tmp = *pc;
    tmp.impl = h;
    host_destroy(&tmp);
    if (st == SPS_OK) st = sps__gpu_sync(ctx); /* setup_ms includes the device work */
    return st;
#else
    return sps__err(ctx, SPS_ERR_INTERNAL, "%s: GPU context in a build without CUDA", pc->name);
#endif
}

sps_status sps_precond_type(int i, const char **name, const char **summary)
{
    static const char *const summaries[] = {
        "no preconditioner (M = I)",
        "Jacobi: M = diag(A), fused into the solvers' vector updates",
        "ILU(0): incomplete LU with A's sparsity pattern",
        "IC(0): incomplete Cholesky with A's sparsity pattern (SPD matrices)",
    };
    if (i < 0 || i >= 4) return SPS_ERR_INVALID_ARG;
    if (name) *name = kind_names[i];
    if (summary) *summary = summaries[i];
    return SPS_OK;
}

sps_status sps_precond_create(sps_context *ctx, const sps_matrix *A, const char *type,
                              sps_precond **out)
{
    if (!out) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_precond_create: pc is NULL");
    *out = NULL;
    if (!ctx || !A || !type)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_precond_create: NULL argument");
    int kind = -1;
    for (int k = 0; k < 4; k++)
        if (strcmp(type, kind_names[k]) == 0) kind = k;
    if (kind < 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "unknown preconditioner '%s' (known: none, jacobi, ilu0, ic0)", type);
    if (A->A.nrows != A->A.ncols)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: the matrix must be square, got %d x %d",
                        type, A->A.nrows, A->A.ncols);
    sps_precond *pc = sps__calloc(1, sizeof *pc);
    if (!pc) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", type);
    pc->ctx = ctx;
    pc->kind = (sps_pc_kind)kind;
    pc->identity = kind == SPS_PC_NONE;
    sps__strlcpy(pc->name, type, sizeof pc->name);
    pc->n = A->A.nrows;
    double t0 = sps__now_ms();
    sps_status st = setup(pc, A);
    pc->setup_ms = sps__now_ms() - t0;
    if (st != SPS_OK) {
        sps_precond_destroy(pc);
        return st;
    }
    *out = pc;
    return SPS_OK;
}

double sps_precond_setup_ms(const sps_precond *pc) { return pc ? pc->setup_ms : 0.0; }

const char *sps_precond_name(const sps_precond *pc) { return pc ? pc->name : "none"; }

sps_status sps_precond_apply(sps_precond *pc, const double *r, double *z)
{
    if (!pc) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_precond_apply: pc is NULL");
    if (pc->n > 0 && (!r || !z))
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG, "sps_precond_apply: NULL vector");
    if (pc->n > 0 && r == z)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                        "sps_precond_apply: r and z must be distinct vectors");
    return pc->apply(pc, r, z);
}

void sps_precond_destroy(sps_precond *pc)
{
    if (!pc) return;
    if (pc->destroy) pc->destroy(pc);
    sps__free(pc);
}
