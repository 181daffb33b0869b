/* SPDX-License-Identifier: MIT */
/* spsolve/precond/ilu.c: ILU(0) and IC(0): the parameters, the choice of
 * order, and the natural-order host factorization and triangular solves,
 * which are the reference the GPU ones (cuSPARSE csrilu02/csric02,
 * precond/precond_gpu.cu) are tested against. The multicolor order lives in
 * precond/mcilu/.
 *
 *   ilu0    A ~ L U in the pattern of A (L unit lower, U upper), IKJ
 *           elimination; z = U^-1 L^-1 r
 *   ic0     A ~ L L' in the pattern of tril(A); z = L'^-1 L^-1 r
 *
 * Order (`order=`): `ilu0` and `ic0` alone are the multicolor order
 * (`order=color`, precond/mcilu/: on the host shared matrices it converged
 * on 32 of 45 against 31 for the natural order, and its solves run a colour
 * at a time). The natural order is taken when the spec asks for it or for
 * something only it has: `order=natural`; `exact` (`ilu0:exact`,
 * `ic0:exact`: the natural order with exact solves, the reference);
 * `solve=jacobi` (with `sweeps=`) or `factor=par` (with `fsweeps=`). An
 * explicit `order=color` with any of those is refused (check_prm).
 *
 * Triangular solves (`solve=`):
 *   exact   (the default): forward and backward substitution (cuSPARSE
 *           SpSV on the device, level-scheduled; order=color: by colour).
 *   jacobi  (`ilu0:solve=jacobi,sweeps=K`, K default 2): each triangular
 *           system T x = b is solved approximately by K Jacobi sweeps from
 *           x_0 = D_T^-1 b: x_{k+1} = D_T^-1 (b - (T - D_T) x_k), a truncated
 *           Neumann series (Anzt, Chow, Dongarra 2015). Each sweep reads half
 *           the factor once: an apply costs about K + 1 SpMVs and no level
 *           barrier. For ic0 the backward sweeps use L' stored as its own CSR,
 *           so the backward operator is exactly the transpose of the forward
 *           one and M^-1 = F' F stays symmetric positive definite (fit for CG).
 *
 * Factorization (`factor=`): exact (the default: IKJ / row by row here,
 * csrilu02/csric02 on the device) or `par` (`fsweeps=K`, default 3): K
 * fixed-point sweeps (Chow and Patel's ParILU/ParIC, precond/parilu/) into
 * the same pattern, feeding the same solves.
 *
 * Structural checks (diagonal present, symmetry for ic0) run on the host for
 * both paths, so host and GPU report the same row in the same words. On a GPU
 * context the host stops there (ilu0) or at tril(A) (ic0): cuSPARSE
 * factorizes. factor=par on a GPU context skips the host (setup_gpu): the
 * device checks, and sends what it would refuse to the host path.
 *
 * Refresh (sps_precond_update_values): numeric only. The setup's symbolic
 * part (F's pattern, the diagonal positions, L' and its map) stays; the new
 * values are factorized by the same numeric code into a scratch array that
 * becomes F's values on success, so a failure leaves pc as it was. On a GPU
 * context the values go to sps__pc_gpu_ilu_refresh. */
#include "mcilu/mcilu.h"
#include "parilu/parilu.h"
#include "pc_impl.h"

#include <math.h>
#include <string.h>

typedef struct ilu_prm {
    int jacobi;     /* solve=jacobi */
    int sweeps;     /* K */
    int sweeps_set; /* sweeps= was given */
    int order;      /* ORDER_*: as given (ORDER_AUTO: none given) */
    int exact;      /* the `exact` key: the natural-order reference */
    int par;        /* factor=par: fixed-point sweeps (precond/parilu/) */
    int fsweeps;    /* their number */
    int fsweeps_set; /* fsweeps= was given */
} ilu_prm;

enum { ORDER_AUTO, ORDER_NATURAL, ORDER_COLOR };

/* The order the parameters select: multicolor unless order=natural, or
 * unless no order is given and the spec asks for something only the natural
 * order has (exact, solve=jacobi, sweeps=, factor=par, fsweeps=). */
static int use_color(const ilu_prm *prm)
{
    if (prm->order != ORDER_AUTO) return prm->order == ORDER_COLOR;
    return !prm->exact && !prm->jacobi && !prm->sweeps_set && !prm->par && !prm->fsweeps_set;
}

typedef struct host_pc {
    sps_csr F;       /* ilu0: L\U in A's pattern; ic0: L (rows end with the diagonal) */
    sps_idx *dpos;   /* position of each row's diagonal in F (ilu0; ic0 with solve=jacobi) */
    sps_csr T;       /* ic0, solve=jacobi: L' (rows start with the diagonal) */
    sps_idx *tperm;  /* ic0, solve=jacobi: T.val[q] = F.val[tperm[q]] */
    sps_idx *tdpos;  /* ic0, solve=jacobi: T's diagonal positions (T.row_ptr[i]) */
    double *y, *w;   /* solve=jacobi: work vectors */
    sps_ilu_tri lo, up; /* solve=jacobi: the two triangles */
} host_pc;

static void host_destroy(sps_precond *pc)
{
    host_pc *h = pc->impl;
    if (!h) return;
    sps__csr_free(&h->F);
    sps__csr_free(&h->T);
    sps__free(h->dpos);
    sps__free(h->tperm);
    sps__free(h->tdpos);
    sps__free(h->y);
    sps__free(h->w);
    sps__free(h);
    pc->impl = NULL;
}

/* ---- Jacobi sweeps (the device's tri_sweep kernel does the same) -------- */

/* xout = D_T^-1 (b - (T - D_T) xin), xin NULL meaning 0; unit: D_T = I. */
static void sweep_host(sps_idx n, const sps_ilu_tri *t, const double *b, const double *xin,
                       double *xout)
{
    for (sps_idx i = 0; i < n; i++) {
        sps_idx d = t->dpos[i], lo = t->lower ? t->rp[i] : d + 1, hi = t->lower ? d : t->rp[i + 1];
        double s = b[i];
        if (xin)
            for (sps_idx p = lo; p < hi; p++) s -= t->v[p] * xin[t->ci[p]];
        xout[i] = t->unit ? s : s / t->v[d];
    }
}

/* K + 1 sweeps ending in out (buf: the other buffer; neither aliases b). */
static void jacobi_solve(sps_idx n, const sps_ilu_tri *t, int K, const double *b, double *out,
                         double *buf)
{
    const double *prev = NULL;
    for (int j = 0; j <= K; j++) {
        double *x = (K - j) % 2 == 0 ? out : buf;
        sweep_host(n, t, b, prev, x);
        prev = x;
    }
}

static sps_status apply_sweeps_host(sps_precond *pc, const double *r, double *z)
{
    host_pc *h = pc->impl;
    int K = ((const ilu_prm *)pc->prm)->sweeps;
    jacobi_solve(pc->n, &h->lo, K, r, h->y, h->w);
    jacobi_solve(pc->n, &h->up, K, h->y, z, h->w);
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

/* ILU(0), IKJ variant, on the values v in the pattern of F (dp: its
 * diagonal positions): for each row i, eliminate with the rows k < i it
 * references (in increasing k), updating only positions already in row i. */
static sps_status ilu0_numeric(sps_precond *pc, const sps_csr *F, const sps_idx *dp, double *v)
{
    sps_idx n = F->nrows;
    sps_idx *iw = sps__malloc(sps__mul_size((size_t)n, sizeof *iw));
    if (!iw) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "ilu0: out of memory");
    const sps_idx *rp = F->row_ptr, *ci = F->col_idx;
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

/* The numeric factorization the parameters ask for: exact (IKJ / row by
 * row) or, with factor=par, fixed-point sweeps (precond/parilu/). */
static sps_status ilu0_values(sps_precond *pc, const sps_csr *F, const sps_idx *dp, double *v)
{
    const ilu_prm *prm = pc->prm;
    return prm->par ? sps__parilu_factor(pc, F, dp, 0, prm->fsweeps, v) : ilu0_numeric(pc, F, dp, v);
}

/* The symbolic step (F = A, the diagonal positions), then the numeric one. */
static sps_status ilu0_factor(sps_precond *pc, const sps_csr *A, host_pc *h)
{
    sps_context *ctx = pc->ctx;
    sps_idx first;
    h->dpos = sps__malloc(sps__mul_size((size_t)A->nrows, sizeof *h->dpos));
    sps_status st = h->dpos ? sps__csr_copy(ctx, A, &h->F)
                            : sps__err(ctx, SPS_ERR_NO_MEMORY, "ilu0: out of memory");
    if (st != SPS_OK) return st;
    sps_idx missing = sps__pc_find_diag(A, h->dpos, &first);
    if (missing) return sps__pc_pivot_error(pc, 0, first, missing);
    return ilu0_values(pc, &h->F, h->dpos, h->F.val);
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

/* IC(0) on the values v in the pattern of L = tril(A), row by row:
 *   l_ik = (a_ik - sum_{j<k} l_ij l_kj) / l_kk,  l_ii = sqrt(a_ii - sum_{j<i} l_ij^2),
 * sums over the pattern only. */
static sps_status ic0_numeric(sps_precond *pc, const sps_csr *L, double *v)
{
    sps_idx n = L->nrows;
    sps_idx *iw = sps__malloc(sps__mul_size((size_t)n, sizeof *iw));
    if (!iw) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "ic0: out of memory");
    const sps_idx *rp = L->row_ptr, *ci = L->col_idx;
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

/* As ilu0_values, for IC(0). */
static sps_status ic0_values(sps_precond *pc, const sps_csr *L, double *v)
{
    const ilu_prm *prm = pc->prm;
    return prm->par ? sps__parilu_factor(pc, L, NULL, 1, prm->fsweeps, v) : ic0_numeric(pc, L, v);
}

static sps_status not_symmetric(sps_context *ctx, int pattern_symmetric, double asymmetry)
{
    return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                    "ic0: the matrix is not symmetric (pattern %s, ||A - A'||_F / ||A||_F = %.3g); "
                    "IC(0) needs a symmetric positive definite matrix: try --precond ilu0",
                    pattern_symmetric ? "symmetric" : "nonsymmetric", asymmetry);
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
    return not_symmetric(ctx, f.pattern_symmetric, f.asymmetry);
}

/* Position of (j, i) in A (rows sorted), or -1. */
static sps_idx mirror(const sps_csr *A, sps_idx i, sps_idx j)
{
    sps_idx lo = A->row_ptr[j], hi = A->row_ptr[j + 1];
    while (lo < hi) {
        sps_idx mid = lo + (hi - lo) / 2;
        if (A->col_idx[mid] < i) lo = mid + 1;
        else hi = mid;
    }
    return lo < A->row_ptr[j + 1] && A->col_idx[lo] == i ? lo : -1;
}

/* ||A - A'||_F / ||A||_F through each entry's mirror, found by a binary
 * search, the sums scaled by the analysis's power of two (any values, any
 * pattern). */
static sps_status check_symmetric_scaled(sps_context *ctx, const sps_csr *M)
{
    double amax = 0.0, na = 0.0, nd = 0.0;
    int pat = 1;
    for (int64_t p = 0; p < M->nnz; p++) amax = fmax(amax, fabs(M->val[p]));
    double sc = sps__asym_scale(amax);
    for (sps_idx i = 0; i < M->nrows; i++)
        for (sps_idx p = M->row_ptr[i]; p < M->row_ptr[i + 1]; p++) {
            sps_idx q = mirror(M, i, M->col_idx[p]);
            double x = M->val[p] * sc, y = q >= 0 ? M->val[q] * sc : 0.0;
            pat &= q >= 0;
            na += x * x;
            nd += (x - y) * (x - y);
        }
    double asym = na > 0 ? sqrt(nd) / sqrt(na) : 0.0;
    return pat && asym <= 1e-12 ? SPS_OK : not_symmetric(ctx, pat, asym);
}

/* check_symmetric's test for a refresh, without a full analysis: rows in
 * order, each upper entry (i, j) meets its mirror (j, i) at row j's cursor
 * (a symmetric pattern lists them in column order), the sums unscaled in the
 * analysis's cursor order, so the same number. A mirror missing, a lower
 * entry left over, or values where unscaled sums are not exact: the scaled
 * pass decides. */
static sps_status check_symmetric_values(sps_context *ctx, const sps_matrix *A)
{
    if (A->src.symmetry == SPS_SYMMETRIC) return SPS_OK;
    const sps_csr *M = &A->A;
    const sps_idx *rp = M->row_ptr, *ci = M->col_idx;
    sps_idx n = M->nrows, *pos = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *pos));
    if (!pos) return sps__err(ctx, SPS_ERR_NO_MEMORY, "ic0: out of memory");
    memcpy(pos, rp, ((size_t)n + 1) * sizeof *pos);
    double amax = 0.0, na = 0.0, nd = 0.0;
    int pat = 1;
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) {
            sps_idx c = ci[p], q = pos[c];
            double x = M->val[p], ax = fabs(x);
            amax = ax > amax ? ax : amax; /* not fmax: a call per entry */
            na += x * x;
            if (c <= i) continue;
            if (q < rp[c + 1] && ci[q] == i) {
                double d = x - M->val[q];
                nd += 2.0 * d * d;
                pos[c] = q + 1;
            } else {
                pat = 0;
            }
        }
    for (sps_idx j = 0; j < n; j++) pat &= pos[j] == rp[j + 1] || ci[pos[j]] >= j;
    sps__free(pos);
    if (!pat || (amax != 0.0 && (amax < 0x1p-400 || amax > 0x1p400)))
        return check_symmetric_scaled(ctx, M);
    double asym = na > 0 ? sqrt(nd) / sqrt(na) : 0.0;
    return asym <= 1e-12 ? SPS_OK : not_symmetric(ctx, 1, asym);
}

/* ---- numeric-only refresh -------------------------------------------------- */

/* tril(A)'s values in the pattern of L (row i of L: the first
 * L.row_ptr[i + 1] - L.row_ptr[i] entries of A's row i). */
static void tril_values(const sps_csr *A, const sps_idx *lrp, double *out)
{
    for (sps_idx i = 0; i < A->nrows; i++)
        memcpy(out + lrp[i], A->val + A->row_ptr[i], (size_t)(lrp[i + 1] - lrp[i]) * sizeof *out);
}

/* ic0 on a GPU context: the factor's pattern is tril(A)'s, counted again. */
#if SPS_HAVE_CUDA
static sps_status ic0_refresh_dev(sps_precond *pc, const sps_matrix *A)
{
    const sps_csr *M = &A->A;
    sps_idx n = M->nrows, *lrp = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *lrp));
    if (!lrp) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "ic0: out of memory");
    lrp[0] = 0;
    for (sps_idx i = 0; i < n; i++) {
        sps_idx p = M->row_ptr[i];
        while (p < M->row_ptr[i + 1] && M->col_idx[p] <= i) p++;
        lrp[i + 1] = lrp[i] + (p - M->row_ptr[i]);
    }
    double *v = sps__malloc(sps__mul_size((size_t)(lrp[n] ? lrp[n] : 1), sizeof *v));
    sps_status st = v ? SPS_OK : sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "ic0: out of memory");
    if (st == SPS_OK) {
        tril_values(M, lrp, v);
        st = sps__pc_gpu_ilu_refresh(pc, v, lrp[n]);
    }
    sps__free(v);
    sps__free(lrp);
    return st;
}
#endif

/* The new factor v replaces F's values (and the sweeps' view of them). */
static void adopt_values(host_pc *h, double *v)
{
    if (h->lo.v == h->F.val) h->lo.v = v;
    if (h->up.v == h->F.val) h->up.v = v;
    sps__free(h->F.val);
    h->F.val = v;
}

/* Factor into a scratch copy; the kept factor takes it only on success. */
static sps_status ilu0_refresh(sps_precond *pc, const sps_matrix *A)
{
    if (!pc->impl) return SPS_OK; /* n = 0 */
    if (use_color(pc->prm)) return sps__mcilu_refresh(pc, A);
#if SPS_HAVE_CUDA
    if (sps_context_on_gpu(pc->ctx)) return sps__pc_gpu_ilu_refresh(pc, A->A.val, (sps_idx)A->A.nnz);
#endif
    host_pc *h = pc->impl;
    size_t nb = sps__mul_size((size_t)(h->F.nnz ? h->F.nnz : 1), sizeof(double));
    double *v = sps__malloc(nb);
    if (!v) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "ilu0: out of memory");
    memcpy(v, A->A.val, (size_t)h->F.nnz * sizeof *v);
    sps_status st = ilu0_values(pc, &h->F, h->dpos, v);
    if (st != SPS_OK) {
        sps__free(v);
        return st;
    }
    adopt_values(h, v);
    return SPS_OK;
}

/* The symmetry check first (IC(0) reads only tril(A)), then as ilu0; with
 * solve=jacobi, L' takes the new factor through tperm. */
static sps_status ic0_refresh(sps_precond *pc, const sps_matrix *A)
{
    if (!pc->impl) return SPS_OK; /* n = 0 */
    sps_status st = check_symmetric_values(pc->ctx, A);
    if (st != SPS_OK) return st;
    if (use_color(pc->prm)) return sps__mcilu_refresh(pc, A);
#if SPS_HAVE_CUDA
    if (sps_context_on_gpu(pc->ctx)) return ic0_refresh_dev(pc, A);
#endif
    host_pc *h = pc->impl;
    double *v = sps__malloc(sps__mul_size((size_t)(h->F.nnz ? h->F.nnz : 1), sizeof *v));
    if (!v) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "ic0: out of memory");
    tril_values(&A->A, h->F.row_ptr, v);
    st = ic0_values(pc, &h->F, v);
    if (st != SPS_OK) {
        sps__free(v);
        return st;
    }
    adopt_values(h, v);
    for (sps_idx q = 0; h->tperm && q < h->T.nnz; q++) h->T.val[q] = v[h->tperm[q]];
    return SPS_OK;
}

/* The factor's values in its pattern (tests): nnz (may be NULL) its entry
 * count, out (may be NULL) its values, copied from the device on a GPU
 * context. Natural order only (order=color keeps its own: mcilu). */
sps_status sps__ilu_factor_values(const sps_precond *pc, double *out, int64_t *nnz)
{
    const ilu_prm *prm = pc->prm;
    if (use_color(prm)) return sps__err(pc->ctx, SPS_ERR_INVALID_ARG, "%s: order=color keeps no natural factor", pc->name);
    if (!pc->impl) {
        if (nnz) *nnz = 0;
        return SPS_OK;
    }
#if SPS_HAVE_CUDA
    if (sps_context_on_gpu(pc->ctx)) return sps__pc_gpu_ilu_values(pc, out, nnz);
#endif
    const host_pc *h = pc->impl;
    if (nnz) *nnz = h->F.nnz;
    if (out) memcpy(out, h->F.val, (size_t)h->F.nnz * sizeof *out);
    return SPS_OK;
}

/* ---- setups and tables ---------------------------------------------------- */

static void ilu_default(void *p)
{
    ((ilu_prm *)p)->sweeps = 2;
    ((ilu_prm *)p)->fsweeps = 3;
}

static sps_status ilu_set(sps_context *ctx, void *p, const char *key, const char *value)
{
    ilu_prm *prm = p;
    if (strcmp(key, "sweeps") == 0) {
        prm->sweeps_set = 1;
        return sps__pc_int(ctx, "ilu0/ic0", key, value, 0, 100, &prm->sweeps);
    }
    if (strcmp(key, "order") == 0) {
        if (strcmp(value, "natural") && strcmp(value, "color"))
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "order='%s' is not natural or color", value);
        prm->order = strcmp(value, "color") == 0 ? ORDER_COLOR : ORDER_NATURAL;
        return SPS_OK;
    }
    if (strcmp(key, "fsweeps") == 0) {
        prm->fsweeps_set = 1;
        return sps__pc_int(ctx, "ilu0/ic0", key, value, 1, 50, &prm->fsweeps);
    }
    if (strcmp(key, "factor") == 0) {
        if (strcmp(value, "exact") && strcmp(value, "par"))
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "factor='%s' is not exact or par", value);
        prm->par = strcmp(value, "par") == 0;
        return SPS_OK;
    }
    if (strcmp(key, "solve") == 0) {
        if (strcmp(value, "exact") && strcmp(value, "jacobi"))
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "solve='%s' is not exact or jacobi", value);
        prm->jacobi = strcmp(value, "jacobi") == 0;
        return SPS_OK;
    }
    if (*value) /* exact */
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s takes no value (got '%s=%s')", key, key,
                        value);
    prm->exact = 1; /* natural order, exact solves */
    prm->jacobi = 0;
    return SPS_OK;
}

/* The combinations refused (both paths: the same words). factor=par,
 * solve=jacobi and exact select the natural order unless order=color is
 * given, which refuses them. */
static sps_status check_prm(sps_precond *pc)
{
    const ilu_prm *prm = pc->prm;
    if (prm->sweeps_set && !prm->jacobi)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG, "%s: sweeps=K needs solve=jacobi",
                        pc->type->name);
    if (prm->fsweeps_set && !prm->par)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG, "%s: fsweeps=K needs factor=par",
                        pc->type->name);
    if (prm->order == ORDER_COLOR && prm->par)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                        "%s: order=color has its own factorization (not with factor=par)",
                        pc->type->name);
    if (prm->order == ORDER_COLOR && prm->jacobi)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                        "%s: order=color has exact solves only (not with solve=jacobi)",
                        pc->type->name);
    if (prm->order == ORDER_COLOR && prm->exact)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                        "%s: exact is the natural-order factor (not with order=color)",
                        pc->type->name);
    return SPS_OK;
}

static sps_status new_host(sps_precond *pc, host_pc **h)
{
    sps_status st = check_prm(pc);
    if (st != SPS_OK) return st;
    *h = sps__calloc(1, sizeof **h);
    if (!*h) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", pc->type->name);
    pc->impl = *h;
    pc->destroy = host_destroy;
    return SPS_OK;
}

static sps_status work_vectors(sps_precond *pc, host_pc *h)
{
    size_t nb = sps__mul_size((size_t)pc->n, sizeof(double));
    h->y = sps__malloc(nb);
    h->w = sps__malloc(nb);
    if (!h->y || !h->w) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", pc->type->name);
    pc->apply = apply_sweeps_host;
    return SPS_OK;
}

static sps_status ilu0_setup(sps_precond *pc, const sps_pc_input *in)
{
    host_pc *h;
    sps_status st = new_host(pc, &h);
    if (st != SPS_OK) return st;
    if (use_color(pc->prm)) {
        host_destroy(pc);
        return sps__mcilu_setup_host(pc, in, 0);
    }
    pc->apply = apply_ilu0_host;
    if (!in->gpu) st = ilu0_factor(pc, &in->A->A, h);
    else {
        sps_idx n = pc->n, first, missing;
        h->dpos = sps__malloc(sps__mul_size((size_t)n, sizeof *h->dpos));
        if (!h->dpos) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "ilu0: out of memory");
        missing = sps__pc_find_diag(&in->A->A, h->dpos, &first);
        if (missing) st = sps__pc_pivot_error(pc, 0, first, missing);
    }
    if (st != SPS_OK || !((const ilu_prm *)pc->prm)->jacobi || in->gpu) return st;
    h->lo = (sps_ilu_tri){h->F.row_ptr, h->F.col_idx, h->dpos, h->F.val, 1, 1};
    h->up = (sps_ilu_tri){h->F.row_ptr, h->F.col_idx, h->dpos, h->F.val, 0, 0};
    return work_vectors(pc, h);
}

/* ic0, solve=jacobi: dpos of L, and L' as a CSR T with T.val[q] = L.val[tperm[q]]
 * (rows of T in increasing column order, so each starts with its diagonal). */
static sps_status transpose_lower(sps_precond *pc, host_pc *h)
{
    const sps_csr *L = &h->F;
    sps_idx n = L->nrows;
    sps_status st = sps__csr_alloc(pc->ctx, &h->T, n, n, L->nnz);
    if (st != SPS_OK) return st;
    h->dpos = sps__malloc(sps__mul_size((size_t)n, sizeof *h->dpos));
    h->tdpos = sps__malloc(sps__mul_size((size_t)n, sizeof *h->tdpos));
    h->tperm = sps__malloc(sps__mul_size((size_t)(L->nnz ? L->nnz : 1), sizeof *h->tperm));
    if (!h->dpos || !h->tdpos || !h->tperm)
        return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "ic0: out of memory");
    sps_idx *rp = h->T.row_ptr;
    memset(rp, 0, ((size_t)n + 1) * sizeof *rp);
    for (sps_idx p = 0; p < L->nnz; p++) rp[L->col_idx[p] + 1]++;
    for (sps_idx i = 0; i < n; i++) rp[i + 1] += rp[i];
    for (sps_idx i = 0; i < n; i++) h->tdpos[i] = rp[i];
    for (sps_idx j = 0; j < n; j++) { /* rows of L in order: T's columns ascend */
        h->dpos[j] = L->row_ptr[j + 1] - 1;
        for (sps_idx p = L->row_ptr[j]; p < L->row_ptr[j + 1]; p++) {
            sps_idx q = h->tdpos[L->col_idx[p]]++;
            h->T.col_idx[q] = j;
            h->tperm[q] = p;
            h->T.val[q] = L->val[p];
        }
    }
    for (sps_idx i = 0; i < n; i++) h->tdpos[i] = rp[i];
    return SPS_OK;
}

static sps_status ic0_setup(sps_precond *pc, const sps_pc_input *in)
{
    host_pc *h;
    sps_status st = check_symmetric(pc->ctx, in->A);
    if (st == SPS_OK) st = new_host(pc, &h);
    if (st == SPS_OK && use_color(pc->prm)) {
        host_destroy(pc);
        return sps__mcilu_setup_host(pc, in, 1);
    }
    if (st == SPS_OK) st = lower_triangle(pc, &in->A->A, &h->F);
    pc->apply = apply_ic0_host;
    if (st == SPS_OK && !in->gpu) st = ic0_values(pc, &h->F, h->F.val);
    if (st != SPS_OK || (!((const ilu_prm *)pc->prm)->jacobi && !in->gpu)) return st;
    /* L' for the sweeps, and on a GPU for the exact solves too (values: after
     * the factorization) */
    if ((st = transpose_lower(pc, h)) != SPS_OK || in->gpu) return st;
    h->lo = (sps_ilu_tri){h->F.row_ptr, h->F.col_idx, h->dpos, h->F.val, 1, 0};
    h->up = (sps_ilu_tri){h->T.row_ptr, h->T.col_idx, h->tdpos, h->T.val, 0, 0};
    return work_vectors(pc, h);
}

#if SPS_HAVE_CUDA
static sps_status ilu0_setup_dev(sps_precond *pc, const sps_pc_input *in, void *host)
{
    const ilu_prm *prm = pc->prm;
    const host_pc *h = host;
    if (use_color(prm)) return sps__mcilu_setup_dev(pc, in, host);
    return sps__pc_gpu_ilu0(pc, &in->A->A, prm->jacobi ? h->dpos : NULL, prm->sweeps,
                            prm->par ? prm->fsweeps : 0);
}

/* factor=par on a GPU context: the whole setup from A's device copy. A
 * missing diagonal (ic0: or a matrix not exactly symmetric) gives
 * SPS_ERR_UNSUPPORTED, and the host path decides and words it. */
static sps_status par_setup_gpu(sps_precond *pc, const sps_pc_input *in, int cholesky)
{
    const ilu_prm *prm = pc->prm;
    if (!prm->par || use_color(prm)) return SPS_ERR_UNSUPPORTED;
    sps_status st = check_prm(pc);
    if (st != SPS_OK) return st;
    int sweeps = prm->jacobi ? prm->sweeps : -1;
    return cholesky ? sps__pc_gpu_ic0_par(pc, in->A, sweeps, prm->fsweeps)
                    : sps__pc_gpu_ilu0_par(pc, in->A, sweeps, prm->fsweeps);
}

static sps_status ilu0_setup_gpu(sps_precond *pc, const sps_pc_input *in) { return par_setup_gpu(pc, in, 0); }

static sps_status ic0_setup_gpu(sps_precond *pc, const sps_pc_input *in) { return par_setup_gpu(pc, in, 1); }

static sps_status ic0_setup_dev(sps_precond *pc, const sps_pc_input *in, void *host)
{
    const ilu_prm *prm = pc->prm;
    const host_pc *h = host;
    if (use_color(prm)) return sps__mcilu_setup_dev(pc, in, host);
    sps_ilu_pattern t = {h->dpos, h->T.row_ptr, h->T.col_idx, h->tdpos, h->tperm};
    return sps__pc_gpu_ic0(pc, &h->F, &t, prm->jacobi ? prm->sweeps : -1, prm->par ? prm->fsweeps : 0);
}
#endif

const sps_pc_type sps_pc_ilu0 = {
    .name = "ilu0",
    .summary = "ILU(0): incomplete LU with A's sparsity pattern, multicolor order (= order=color, exact "
               "solves by colour); ilu0:exact or order=natural: natural order; solve=jacobi,sweeps=K "
               "and factor=par,fsweeps=K (fixed-point sweeps) imply the natural order",
    .caps = 0,
    .keys = "exact, solve, sweeps, order, factor, fsweeps",
    .prm_size = sizeof(ilu_prm),
    .prm_default = ilu_default,
    .prm_set = ilu_set,
    .setup_host = ilu0_setup,
    .setup_dev = SPS_PC_DEV(ilu0_setup_dev),
    .setup_gpu = SPS_PC_DEV(ilu0_setup_gpu),
    .refresh = ilu0_refresh,
};

const sps_pc_type sps_pc_ic0 = {
    .name = "ic0",
    .summary = "IC(0): incomplete Cholesky with A's sparsity pattern, SPD matrices, multicolor order "
               "(= order=color); ic0:exact or order=natural: natural order; solve=jacobi,sweeps=K and "
               "factor=par,fsweeps=K imply the natural order",
    .caps = SPS_PCT_SYMMETRIC,
    .keys = "exact, solve, sweeps, order, factor, fsweeps",
    .prm_size = sizeof(ilu_prm),
    .prm_default = ilu_default,
    .prm_set = ilu_set,
    .setup_host = ic0_setup,
    .setup_dev = SPS_PC_DEV(ic0_setup_dev),
    .setup_gpu = SPS_PC_DEV(ic0_setup_gpu),
    .refresh = ic0_refresh,
};
