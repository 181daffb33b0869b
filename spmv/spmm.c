/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/spmm.c: Y = alpha*A*X + beta*Y for a block of k vectors
 * (doc/spmm.md): the host reference, the operator-level dispatch by format,
 * and the timing spmv-bench --nrhs uses.
 *
 * Dispatch (sps_operator_apply_multi_kind):
 *   host context, CSR family      the block CSR loop (sps__csr_spmm)
 *   GPU, CSR family, double       spmm.cu's kernel, or cusparseSpMM
 *   GPU, the backend's apply_multi  its own block kernel (dia, drm: their .cu)
 *   anything else                 k calls of sps_operator_apply (COLUMNS)
 *   PANEL, CSR family, double     the row panels after ASpT: spmm_panel.cu's
 *                                 kernel on a GPU, sps__panel_spmm (its
 *                                 bitwise reference) on a host context */
#include "spmm.h"
#include "formats/csr_fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#endif

void sps__csr_spmm(const sps_csr *A, int k, double alpha, const double *X, int64_t ldx,
                   double beta, double *Y, int64_t ldy)
{
    for (sps_idx r = 0; r < A->nrows; r++) {
        const sps_idx p0 = A->row_ptr[r], p1 = A->row_ptr[r + 1];
        for (int c = 0; c < k; c++) {
            const double *x = X + (size_t)c * (size_t)ldx;
            double *y = Y + (size_t)c * (size_t)ldy;
            double s = 0.0;
            for (sps_idx p = p0; p < p1; p++) s += A->val[p] * x[A->col_idx[p]];
            y[r] = beta == 0.0 ? alpha * s : alpha * s + beta * y[r];
        }
    }
}

/* ---- SPS_SPMM_PANEL: the row panels and their host reference ------------- */

typedef struct panel_entry {
    sps_idx ci, src;
} panel_entry;

static int entry_cmp(const void *a, const void *b)
{
    const panel_entry *x = a, *y = b;
    if (x->ci != y->ci) return x->ci < y->ci ? -1 : 1;
    return (x->src > y->src) - (x->src < y->src);
}

static int idx_cmp(const void *a, const void *b)
{
    sps_idx x = *(const sps_idx *)a, y = *(const sps_idx *)b;
    return (x > y) - (x < y);
}

void sps__panel_free(sps_panel *P)
{
    if (!P) return;
    sps__free(P->rp);
    sps__free(P->nd);
    sps__free(P->ci);
    sps__free(P->val);
    sps__free(P->dp);
    sps__free(P->dcol);
    sps__free(P->src);
    memset(P, 0, sizeof *P);
}

/* One panel, rows r0..r1-1: its dense list appended at dcol + P->ndense and
 * each row's entries reordered (sps__panel_build). cnt and loc are zero on
 * entry and on exit; touched and tmp are scratch. */
static void panel_one(const sps_csr *A, sps_panel *P, sps_idx r0, sps_idx r1, sps_idx *cnt,
                      sps_idx *loc, sps_idx *touched, panel_entry *tmp)
{
    sps_idx nt = 0;
    for (sps_idx q = A->row_ptr[r0]; q < A->row_ptr[r1]; q++)
        if (cnt[A->col_idx[q]]++ == 0) touched[nt++] = A->col_idx[q];
    sps_idx *dl = P->dcol + P->ndense, nd = 0;
    for (sps_idx t = 0; t < nt; t++)
        if (cnt[touched[t]] >= SPS_PANEL_MIN) dl[nd++] = touched[t];
    qsort(dl, (size_t)nd, sizeof *dl, idx_cmp);
    for (sps_idx i = 0; i < nd; i++) loc[dl[i]] = i;
    for (sps_idx r = r0; r < r1; r++) {
        const sps_idx q0 = A->row_ptr[r], q1 = A->row_ptr[r + 1];
        sps_idx d = 0, sorted = 1;
        for (sps_idx q = q0; q < q1; q++) {
            if (cnt[A->col_idx[q]] < SPS_PANEL_MIN) continue;
            tmp[d] = (panel_entry){loc[A->col_idx[q]], q};
            if (d > 0 && tmp[d].ci < tmp[d - 1].ci) sorted = 0;
            d++;
        }
        if (!sorted) qsort(tmp, (size_t)d, sizeof *tmp, entry_cmp);
        sps_idx o = q0;
        for (sps_idx i = 0; i < d; i++, o++) {
            P->ci[o] = tmp[i].ci;
            P->src[o] = tmp[i].src;
        }
        for (sps_idx q = q0; q < q1; q++) {
            if (cnt[A->col_idx[q]] >= SPS_PANEL_MIN) continue;
            P->ci[o] = A->col_idx[q];
            P->src[o++] = q;
        }
        for (sps_idx q = q0; q < q1; q++) P->val[q] = A->val[P->src[q]];
        P->nd[r] = d;
        P->dense_nnz += d;
    }
    for (sps_idx t = 0; t < nt; t++) cnt[touched[t]] = 0;
    for (sps_idx i = 0; i < nd; i++) loc[dl[i]] = 0;
    P->ndense += nd;
}

sps_status sps__panel_build(sps_context *ctx, const sps_csr *A, sps_panel *P)
{
    memset(P, 0, sizeof *P);
    const sps_idx n = A->nrows, m = A->ncols, nnz = A->nnz;
    const sps_idx np = n / SPS_PANEL_ROWS + (n % SPS_PANEL_ROWS != 0);
    sps_idx maxlen = 0;
    for (sps_idx r = 0; r < n; r++)
        if (A->row_ptr[r + 1] - A->row_ptr[r] > maxlen) maxlen = A->row_ptr[r + 1] - A->row_ptr[r];
    P->nrows = n;
    P->ncols = m;
    P->nnz = nnz;
    P->npanels = np;
    P->rp = sps__malloc(((size_t)n + 1) * sizeof *P->rp);
    P->nd = sps__malloc(((size_t)n + 1) * sizeof *P->nd);
    P->ci = sps__malloc(((size_t)nnz + 1) * sizeof *P->ci);
    P->val = sps__malloc(((size_t)nnz + 1) * sizeof *P->val);
    P->src = sps__malloc(((size_t)nnz + 1) * sizeof *P->src);
    P->dp = sps__malloc(((size_t)np + 1) * sizeof *P->dp);
    /* a dense column holds >= SPS_PANEL_MIN of its panel's entries */
    P->dcol = sps__malloc(((size_t)nnz / SPS_PANEL_MIN + 1) * sizeof *P->dcol);
    sps_idx *cnt = sps__calloc((size_t)m + 1, sizeof *cnt), *loc = sps__calloc((size_t)m + 1, sizeof *loc);
    sps_idx *touched = sps__malloc(((size_t)m + 1) * sizeof *touched);
    panel_entry *tmp = sps__malloc(((size_t)maxlen + 1) * sizeof *tmp);
    sps_status st = SPS_OK;
    if (!P->rp || !P->nd || !P->ci || !P->val || !P->src || !P->dp || !P->dcol || !cnt || !loc ||
        !touched || !tmp) {
        sps__panel_free(P);
        st = sps__err(ctx, SPS_ERR_NO_MEMORY, "spmm panel: out of memory building the panels");
    } else {
        memcpy(P->rp, A->row_ptr, ((size_t)n + 1) * sizeof *P->rp);
        P->dp[0] = 0;
        for (sps_idx p = 0; p < np; p++) {
            sps_idx r0 = p * SPS_PANEL_ROWS, r1 = n - r0 < SPS_PANEL_ROWS ? n : r0 + SPS_PANEL_ROWS;
            panel_one(A, P, r0, r1, cnt, loc, touched, tmp);
            P->dp[p + 1] = P->ndense;
        }
    }
    sps__free(cnt);
    sps__free(loc);
    sps__free(touched);
    sps__free(tmp);
    return st;
}

void sps__panel_spmm(const sps_panel *P, int k, double alpha, const double *X, int64_t ldx,
                     double beta, double *Y, int64_t ldy)
{
    for (sps_idx p = 0; p < P->npanels; p++) {
        const sps_idx *dl = P->dcol + P->dp[p];
        const sps_idx r0 = p * SPS_PANEL_ROWS;
        const sps_idx r1 = P->nrows - r0 < SPS_PANEL_ROWS ? P->nrows : r0 + SPS_PANEL_ROWS;
        for (sps_idx r = r0; r < r1; r++) {
            const sps_idx q0 = P->rp[r], qd = q0 + P->nd[r], q1 = P->rp[r + 1];
            for (int c = 0; c < k; c++) {
                const double *x = X + (size_t)c * (size_t)ldx;
                double *y = Y + (size_t)c * (size_t)ldy + r;
                double s = 0.0;
                sps_idx q = q0;
                for (; q < qd; q++) s = fma(P->val[q], x[dl[P->ci[q]]], s);
                for (; q < q1; q++) s = fma(P->val[q], x[P->ci[q]], s);
                /* two rounded products, then the sum (separate statements:
                 * never contracted, -std=c11 has no cross-statement contraction
                 * either); the kernel uses __dmul_rn and __dadd_rn */
                const double a = alpha * s;
                if (beta == 0.0) {
                    *y = a;
                } else {
                    const double b = beta * *y;
                    *y = a + b;
                }
            }
        }
    }
}

/* The operator's panels (op->panel): host arrays on a host context, a device
 * copy on a GPU; built at the first use from the operator's CSR (on a GPU
 * downloaded once for it, then dropped). SPS_ERR_UNSUPPORTED outside the
 * CSR family in double. */
static int csr_family_host(const sps_operator *op);
#if SPS_HAVE_CUDA
static const sps_csr_dev *device_csr(const sps_operator *op);

static void panel_dev_free(sps_panel *D)
{
    sps__dfree(D->rp);
    sps__dfree(D->nd);
    sps__dfree(D->ci);
    sps__dfree(D->val);
    sps__dfree(D->dp);
    sps__dfree(D->dcol);
    memset(D, 0, sizeof *D);
}

static sps_status panel_upload(sps_context *ctx, const sps_panel *P, sps_panel *D)
{
    *D = *P;
    D->rp = D->nd = D->ci = D->dp = D->dcol = D->src = NULL;
    D->val = NULL;
    const size_t n1 = ((size_t)P->nrows + 1) * sizeof(sps_idx), z = (size_t)P->nnz + 1;
    const size_t dp = ((size_t)P->npanels + 1) * sizeof(sps_idx);
    const size_t dc = ((size_t)P->ndense + 1) * sizeof(sps_idx);
    sps_status st = sps__dmalloc(ctx, (void **)&D->rp, n1);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&D->nd, n1);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&D->ci, z * sizeof(sps_idx));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&D->val, z * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&D->dp, dp);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&D->dcol, dc);
    if (st == SPS_OK) st = sps__h2d(ctx, D->rp, P->rp, n1);
    if (st == SPS_OK) st = sps__h2d(ctx, D->nd, P->nd, (size_t)P->nrows * sizeof(sps_idx));
    if (st == SPS_OK) st = sps__h2d(ctx, D->ci, P->ci, (z - 1) * sizeof(sps_idx));
    if (st == SPS_OK) st = sps__h2d(ctx, D->val, P->val, (z - 1) * sizeof(double));
    if (st == SPS_OK) st = sps__h2d(ctx, D->dp, P->dp, dp);
    if (st == SPS_OK) st = sps__h2d(ctx, D->dcol, P->dcol, (size_t)P->ndense * sizeof(sps_idx));
    D->bytes = 2 * n1 + z * (sizeof(sps_idx) + sizeof(double)) + dp + dc;
    if (st != SPS_OK) panel_dev_free(D);
    return st;
}
#endif

void sps__spmm_panel_drop(sps_operator *op)
{
    sps_panel *P = op ? op->panel : NULL;
    if (!P) return;
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) panel_dev_free(P);
#endif
    sps__panel_free(P); /* host arrays (on a GPU the fields are NULL by now) */
    sps__free(P);
    op->panel = NULL;
}

static sps_status panel_get(sps_operator *op, const sps_panel **out)
{
    *out = op->panel;
    if (op->panel) return SPS_OK;
    if (op->single) return SPS_ERR_UNSUPPORTED;
    sps_csr h;
    memset(&h, 0, sizeof h);
    const sps_csr *A = NULL;
    sps_status st = SPS_OK;
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) {
        const sps_csr_dev *d = device_csr(op);
        if (!d) return SPS_ERR_UNSUPPORTED;
        st = sps__csr_alloc(op->ctx, &h, d->nrows, d->ncols, d->nnz);
        if (st == SPS_OK)
            st = sps__d2h(op->ctx, h.row_ptr, d->row_ptr, ((size_t)d->nrows + 1) * sizeof(sps_idx));
        if (st == SPS_OK) st = sps__d2h(op->ctx, h.col_idx, d->col_idx, (size_t)d->nnz * sizeof(sps_idx));
        if (st == SPS_OK) st = sps__d2h(op->ctx, h.val, d->val, (size_t)d->nnz * sizeof(double));
        A = &h;
    }
#endif
    if (!op->info.on_gpu) {
        if (!csr_family_host(op)) return SPS_ERR_UNSUPPORTED;
        A = &((const sps_fmt_csr *)op->fmt)->A;
    }
    sps_panel *P = sps__calloc(1, sizeof *P);
    if (!P && st == SPS_OK) st = sps__err(op->ctx, SPS_ERR_NO_MEMORY, "spmm panel: out of memory");
    if (st == SPS_OK) st = sps__panel_build(op->ctx, A, P);
    sps__csr_free(&h);
#if SPS_HAVE_CUDA
    if (st == SPS_OK && op->info.on_gpu) {
        sps_panel D;
        st = panel_upload(op->ctx, P, &D);
        sps__panel_free(P);
        *P = D;
    }
#endif
    if (st != SPS_OK) {
        sps__panel_free(P);
        sps__free(P);
        return st;
    }
    op->panel = P;
    *out = P;
    return SPS_OK;
}

static sps_status panel(sps_operator *op, int k, double alpha, const void *X, int64_t ldx,
                        double beta, void *Y, int64_t ldy)
{
    const sps_panel *P = NULL;
    sps_status st = panel_get(op, &P);
    if (st != SPS_OK) return st;
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) return sps__spmm_panel_dev(op->ctx, P, k, alpha, X, ldx, beta, Y, ldy);
#endif
    sps__panel_spmm(P, k, alpha, X, ldx, beta, Y, ldy);
    return SPS_OK;
}

const char *sps_spmm_kind_name(sps_spmm_kind kind)
{
    switch (kind) {
    case SPS_SPMM_AUTO: return "auto";
    case SPS_SPMM_NATIVE: return "native";
    case SPS_SPMM_CUSPARSE: return "cusparse";
    case SPS_SPMM_COLUMNS: return "columns";
    case SPS_SPMM_PANEL: return "panel";
    }
    return NULL;
}

static sps_status check_block(sps_context *ctx, const char *fn, sps_idx rows, sps_idx cols, int k,
                              const void *X, int64_t ldx, const void *Y, int64_t ldy)
{
    if (k < 0) return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: k = %d is negative", fn, k);
    if (k == 0) return SPS_OK;
    if ((!X && cols > 0) || (!Y && rows > 0))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: %s is NULL", fn, X ? "Y" : "X");
    if (ldx < (int64_t)cols || ldx < 1 || ldy < (int64_t)rows || ldy < 1)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "%s: ldx = %lld, ldy = %lld for a %d x %d matrix (ldx >= cols, ldy >= rows, "
                        "both >= 1)", fn, (long long)ldx, (long long)ldy, rows, cols);
    return SPS_OK;
}

sps_status sps_matrix_spmm_host(const sps_matrix *A, int k, double alpha, const double *X,
                                int64_t ldx, double beta, double *Y, int64_t ldy)
{
    if (!A) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_matrix_spmm_host: A is NULL");
    sps_status st = check_block(NULL, "sps_matrix_spmm_host", A->A.nrows, A->A.ncols, k, X, ldx,
                                Y, ldy);
    if (st != SPS_OK || k == 0) return st;
    sps__csr_spmm(&A->A, k, alpha, X, ldx, beta, Y, ldy);
    return SPS_OK;
}

/* The operator's format is a plain CSR (sps_fmt_csr) with the plain loop as
 * its host product. */
static int csr_family_host(const sps_operator *op)
{
    return op->be->apply_host == sps__csr_fmt_apply_host && !op->single;
}

static sps_status columns(sps_operator *op, int k, double alpha, const void *X, int64_t ldx,
                          double beta, void *Y, int64_t ldy)
{
    size_t es = op->single ? sizeof(float) : sizeof(double);
    for (int c = 0; c < k; c++) {
        const char *x = (const char *)X + (size_t)c * (size_t)ldx * es;
        char *y = (char *)Y + (size_t)c * (size_t)ldy * es;
        sps_status st = sps_operator_apply(op, alpha, x, beta, y);
        if (st != SPS_OK) return st;
    }
    return SPS_OK;
}

#if SPS_HAVE_CUDA
/* The operator's device CSR in double, or NULL (not the CSR family, or not
 * on a GPU, or single precision). */
static const sps_csr_dev *device_csr(const sps_operator *op)
{
    if (op->dev && op->info.on_gpu && !op->single && op->be->fetch == sps__csr_fmt_fetch)
        return (const sps_csr_dev *)op->dev;
    return NULL;
}
#endif

static sps_status native(sps_operator *op, int k, double alpha, const void *X, int64_t ldx,
                         double beta, void *Y, int64_t ldy)
{
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) {
        const sps_csr_dev *d = device_csr(op);
        if (!d && op->be->apply_multi && !op->single)
            return op->be->apply_multi(op->ctx, op->dev, k, alpha, X, ldx, beta, Y, ldy);
        if (!d) return SPS_ERR_UNSUPPORTED;
        /* csr-vector's own group size (its param), so that each column is
         * summed as its SpMV sums it; the mean-row-length rule otherwise. */
        int tpr = sps__csr_vector_tpr(op->nnz, op->nrows);
        if (strcmp(op->be->name, "csr-vector") == 0 && d->param >= 2 && d->param <= 32) tpr = d->param;
        return sps__spmm_csr_dev(op->ctx, d, tpr, k, alpha, X, ldx, beta, Y, ldy);
    }
#endif
    if (!csr_family_host(op) || op->info.on_gpu) return SPS_ERR_UNSUPPORTED;
    sps__csr_spmm(&((const sps_fmt_csr *)op->fmt)->A, k, alpha, X, ldx, beta, Y, ldy);
    return SPS_OK;
}

static sps_status cusparse_spmm(sps_operator *op, int k, double alpha, const void *X, int64_t ldx,
                                double beta, void *Y, int64_t ldy)
{
#if SPS_HAVE_CUDA
    const sps_csr_dev *d = device_csr(op);
    if (d) return sps__spmm_cusparse(op->ctx, d, k, alpha, X, ldx, beta, Y, ldy);
#else
    (void)k, (void)alpha, (void)X, (void)ldx, (void)beta, (void)Y, (void)ldy;
#endif
    (void)op;
    return SPS_ERR_UNSUPPORTED;
}

sps_status sps_operator_apply_multi_kind(sps_operator *op, sps_spmm_kind kind, int k,
                                         double alpha, const void *X, int64_t ldx, double beta,
                                         void *Y, int64_t ldy)
{
    static const char fn[] = "sps_operator_apply_multi";
    if (!op) return sps__err(NULL, SPS_ERR_INVALID_ARG, "%s: op is NULL", fn);
    if (!sps_spmm_kind_name(kind))
        return sps__err(op->ctx, SPS_ERR_INVALID_ARG, "%s: unknown kind %d", fn, (int)kind);
    sps_status st = check_block(op->ctx, fn, op->nrows, op->ncols, k, X, ldx, Y, ldy);
    if (st != SPS_OK || k == 0) return st;
    if (kind == SPS_SPMM_COLUMNS) return columns(op, k, alpha, X, ldx, beta, Y, ldy);
    if (kind == SPS_SPMM_CUSPARSE) {
        st = cusparse_spmm(op, k, alpha, X, ldx, beta, Y, ldy);
        if (st == SPS_ERR_UNSUPPORTED)
            return sps__err(op->ctx, st, "%s: cusparse SpMM needs a GPU operator of the CSR family "
                            "in double (this one is %s%s)", fn, op->be->name,
                            op->single ? ", single" : "");
        return st;
    }
    if (kind == SPS_SPMM_PANEL) {
        st = panel(op, k, alpha, X, ldx, beta, Y, ldy);
        if (st == SPS_ERR_UNSUPPORTED)
            return sps__err(op->ctx, st, "%s: the panel kernel needs an operator of the CSR family "
                            "in double (this one is %s%s)", fn, op->be->name,
                            op->single ? ", single" : "");
        return st;
    }
    st = native(op, k, alpha, X, ldx, beta, Y, ldy);
    if (st != SPS_ERR_UNSUPPORTED) return st;
    if (kind == SPS_SPMM_AUTO) return columns(op, k, alpha, X, ldx, beta, Y, ldy);
    return sps__err(op->ctx, st, "%s: no native block kernel for %s%s (use auto or columns)", fn,
                    op->be->name, op->single ? " in single precision" : "");
}

sps_status sps_operator_apply_multi(sps_operator *op, int k, double alpha, const void *X,
                                    int64_t ldx, double beta, void *Y, int64_t ldy)
{
    return sps_operator_apply_multi_kind(op, SPS_SPMM_AUTO, k, alpha, X, ldx, beta, Y, ldy);
}

/* ---- timing (spmv-bench --nrhs) ------------------------------------------ */

/* A block of n x k in the operator's memory space and precision, filled with
 * a fixed pattern of values in [0.5, 1.5). */
static sps_status block_alloc(sps_operator *op, size_t n, int k, void **p)
{
    size_t es = op->single ? sizeof(float) : sizeof(double), cnt = n * (size_t)k;
    void *h = sps__malloc(cnt * es + 1);
    if (!h) return sps__err(op->ctx, SPS_ERR_NO_MEMORY, "sps_operator_time_multi: out of memory");
    for (size_t i = 0; i < cnt; i++) {
        double v = 0.5 + (double)((i * 2654435761u) % 1000u) / 1000.0;
        if (op->single) ((float *)h)[i] = (float)v;
        else ((double *)h)[i] = v;
    }
    *p = h;
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) {
        *p = NULL;
        sps_status st = sps__dmalloc(op->ctx, p, cnt * es + 1);
        if (st == SPS_OK) st = sps__h2d(op->ctx, *p, h, cnt * es);
        sps__free(h);
        return st;
    }
#endif
    return SPS_OK;
}

static void block_free(const sps_operator *op, void *p)
{
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) {
        sps__dfree(p);
        return;
    }
#endif
    (void)op;
    sps__free(p);
}

/* One block product of sps_operator_time_multi. */
typedef struct timed_spmm {
    sps_operator *op;
    sps_spmm_kind kind;
    int k;
    const void *X;
    void *Y;
} timed_spmm;

static sps_status spmm_call(void *arg, int i)
{
    (void)i;
    const timed_spmm *a = arg;
    return sps_operator_apply_multi_kind(a->op, a->kind, a->k, 1.0, a->X, a->op->ncols, 0.0, a->Y, a->op->nrows);
}

sps_status sps_operator_time_multi(sps_operator *op, sps_spmm_kind kind, int k, int reps,
                                   sps_timing *t)
{
    if (!op || !t || k < 1 || reps < 1)
        return sps__err(op ? op->ctx : NULL, SPS_ERR_INVALID_ARG,
                        "sps_operator_time_multi: NULL argument, k < 1 or reps < 1");
    memset(t, 0, sizeof *t);
    void *X = NULL, *Y = NULL;
    double *us = sps__calloc((size_t)reps, sizeof *us);
    sps_status st = us ? SPS_OK : sps__err(op->ctx, SPS_ERR_NO_MEMORY, "sps_operator_time_multi: out of memory");
    if (st == SPS_OK) st = block_alloc(op, (size_t)op->ncols, k, &X);
    if (st == SPS_OK) st = block_alloc(op, (size_t)op->nrows, k, &Y);
    timed_spmm ts = {op, kind, k, X, Y};
    if (st == SPS_OK) st = sps__time_calls(op->ctx, op->info.on_gpu, spmm_call, &ts, 3, reps, us);
    if (st == SPS_OK) sps__timing_summarize(us, reps, t);
    if (X) block_free(op, X);
    if (Y) block_free(op, Y);
    sps__free(us);
    return st;
}

/* ---- checking (spmv-bench --nrhs --check) --------------------------------- */

typedef struct chk {
    sps_operator *op;
    const sps_csr *A;
    int k;
    int64_t ldx, ldy;
    size_t nx, ny;     /* doubles of X and Y (padding included) */
    double *X, *Y0, *Y, *Y2, *R;
    void *dX, *dY;     /* device copies (GPU operators) */
} chk;

static sps_status chk_alloc(chk *c)
{
    c->X = sps__malloc(c->nx * sizeof(double));
    c->Y0 = sps__malloc(c->ny * sizeof(double));
    c->Y = sps__malloc(c->ny * sizeof(double));
    c->Y2 = sps__malloc(c->ny * sizeof(double));
    c->R = sps__malloc(c->ny * sizeof(double));
    if (!c->X || !c->Y0 || !c->Y || !c->Y2 || !c->R)
        return sps__err(c->op->ctx, SPS_ERR_NO_MEMORY, "sps_operator_check_multi: out of memory");
    uint64_t s = 0x1234567u;
    for (size_t i = 0; i < c->nx; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        c->X[i] = (double)(s >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    }
#if SPS_HAVE_CUDA
    if (c->op->info.on_gpu) {
        sps_status st = sps__dmalloc(c->op->ctx, &c->dX, c->nx * sizeof(double));
        if (st == SPS_OK) st = sps__dmalloc(c->op->ctx, &c->dY, c->ny * sizeof(double));
        if (st == SPS_OK) st = sps__h2d(c->op->ctx, c->dX, c->X, c->nx * sizeof(double));
        return st;
    }
#endif
    return SPS_OK;
}

static void chk_free(chk *c)
{
#if SPS_HAVE_CUDA
    sps__dfree(c->dX);
    sps__dfree(c->dY);
#endif
    sps__free(c->X);
    sps__free(c->Y0);
    sps__free(c->Y);
    sps__free(c->Y2);
    sps__free(c->R);
}

/* Y (host) = 1.5 A X + beta Y0 with kind. */
static sps_status chk_run(chk *c, sps_spmm_kind kind, double beta, double *Y)
{
    sps_operator *op = c->op;
    memcpy(Y, c->Y0, c->ny * sizeof *Y);
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) {
        sps_status st = sps__h2d(op->ctx, c->dY, Y, c->ny * sizeof *Y);
        if (st == SPS_OK)
            st = sps_operator_apply_multi_kind(op, kind, c->k, 1.5, c->dX, c->ldx, beta, c->dY, c->ldy);
        if (st == SPS_OK) st = sps__d2h(op->ctx, Y, c->dY, c->ny * sizeof *Y);
        return st;
    }
#endif
    return sps_operator_apply_multi_kind(op, kind, c->k, 1.5, c->X, c->ldx, beta, Y, c->ldy);
}

/* The componentwise error of Y against R (sps_operator_check's definition). */
static double chk_err(const chk *c, double beta)
{
    const sps_csr *A = c->A;
    double worst = 0;
    for (int j = 0; j < c->k; j++) {
        const double *x = c->X + (size_t)j * (size_t)c->ldx;
        size_t o = (size_t)j * (size_t)c->ldy;
        for (sps_idx r = 0; r < A->nrows; r++) {
            double a = 0;
            for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) a += fabs(A->val[p] * x[A->col_idx[p]]);
            double den = 1.5 * a + (beta != 0.0 ? fabs(beta * c->Y0[o + (size_t)r]) : 0.0);
            double d = fabs(c->Y[o + (size_t)r] - c->R[o + (size_t)r]);
            double e = d == 0.0 ? 0.0 : den > 0.0 ? d / den : INFINITY;
            if (!(e <= worst)) worst = e;
        }
    }
    return worst;
}

sps_status sps_operator_check_multi(sps_operator *op, const sps_matrix *A, sps_spmm_kind kind,
                                    int k, double *max_err, int *repeatable)
{
    if (!op || !A || !max_err || !repeatable || k < 1)
        return sps__err(op ? op->ctx : NULL, SPS_ERR_INVALID_ARG,
                        "sps_operator_check_multi: NULL argument or k < 1");
    if (op->single || A->A.nrows != op->nrows || A->A.ncols != op->ncols)
        return sps__err(op->ctx, SPS_ERR_INVALID_ARG, "sps_operator_check_multi: a double operator "
                        "built from A is needed");
    chk c = {.op = op, .A = &A->A, .k = k, .ldx = op->ncols + 3, .ldy = op->nrows + 5};
    c.nx = (size_t)c.ldx * (size_t)k;
    c.ny = (size_t)c.ldy * (size_t)k;
    *max_err = INFINITY;
    *repeatable = 0;
    sps_status st = chk_alloc(&c);
    for (int b = 0; b < 2 && st == SPS_OK; b++) {
        double beta = b ? -0.5 : 0.0;
        for (size_t i = 0; i < c.ny; i++) c.Y0[i] = b ? c.X[i % c.nx] : NAN;
        memcpy(c.R, c.Y0, c.ny * sizeof *c.R);
        sps__csr_spmm(c.A, k, 1.5, c.X, c.ldx, beta, c.R, c.ldy);
        st = chk_run(&c, kind, beta, c.Y);
        if (st == SPS_OK) st = chk_run(&c, kind, beta, c.Y2);
        if (st != SPS_OK) break;
        double e = chk_err(&c, beta);
        *max_err = b ? (e > *max_err ? e : *max_err) : e;
        *repeatable = (b ? *repeatable : 1) && memcmp(c.Y, c.Y2, c.ny * sizeof *c.Y) == 0;
    }
    chk_free(&c);
    return st;
}
