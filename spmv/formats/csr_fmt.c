/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/csr_fmt.c: host side of the CSR-based backends, their device
 * upload, and small helpers shared by every format of this directory */
#include "csr_fmt.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#endif

sps_status sps__csr_fmt_convert(sps_context *ctx, const sps_csr *A, sps_fmt **out,
                                sps_spmv_stats *st)
{
    sps_fmt_csr *f = sps__calloc(1, sizeof *f);
    if (!f) return sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory");
    if (ctx && ctx->gpu) {
        f->A = *A; /* borrowed until the upload */
        f->borrowed = 1;
    } else {
        sps_status s = sps__csr_copy(ctx, A, &f->A);
        if (s != SPS_OK) {
            sps__free(f);
            return s;
        }
    }
    st->bytes_per_spmv = sps__csr_bytes_model(A, 0);
    st->value_bytes = 8.0 * A->nnz + 8.0 * A->ncols + 8.0 * A->nrows;
    st->slots = A->nnz;
    st->fill = 0.0;
    *out = (sps_fmt *)f;
    return SPS_OK;
}

sps_status sps__csr_fmt_convert_params(sps_context *ctx, const sps_csr *A, const char *backend,
                                       const char *params, sps_param_fn fn, void *user,
                                       sps_fmt **out, sps_spmv_stats *st)
{
    sps_status s = fn ? sps__parse_params(ctx, params, fn, user)
                      : sps__no_params(ctx, backend, params);
    return s == SPS_OK ? sps__csr_fmt_convert(ctx, A, out, st) : s;
}

void sps__csr_fmt_detail(const sps_csr *A, sps_spmv_stats *st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st->detail, sizeof st->detail, fmt, ap);
    va_end(ap);
    sps_row_stats rs;
    sps__row_stats(A, &rs);
    size_t used = strlen(st->detail);
    snprintf(st->detail + used, sizeof st->detail - used, "; row lengths mean %.1f, max %d",
             rs.mean, rs.max);
}

void sps__csr_fmt_apply_host(const sps_fmt *f, double alpha, const double *x, double beta,
                             double *y)
{
    sps__csr_spmv(&((const sps_fmt_csr *)f)->A, alpha, x, beta, y);
}

sps_status sps__csr_fmt_update_host(sps_context *ctx, sps_fmt *f, const double *values)
{
    (void)ctx;
    sps_fmt_csr *c = (sps_fmt_csr *)f;
    if (c->borrowed)
        c->A.val = (double *)values; /* read by update_dev, then detached */
    else if (c->A.nnz)
        memcpy(c->A.val, values, (size_t)c->A.nnz * sizeof *values);
    return SPS_OK;
}

void sps__csr_fmt_free(sps_fmt *f)
{
    sps_fmt_csr *c = (sps_fmt_csr *)f;
    if (!c) return;
    if (!c->borrowed) sps__csr_free(&c->A);
    sps__free(c->extra);
    sps__free(c);
}

void sps__csr_fmt_detach(sps_fmt *f)
{
    sps_fmt_csr *c = (sps_fmt_csr *)f;
    if (!c->borrowed) return;
    c->A.row_ptr = NULL;
    c->A.col_idx = NULL;
    c->A.val = NULL;
}

#if SPS_HAVE_CUDA

void sps__csr_dev_free(sps_csr_dev *d)
{
    if (!d) return;
    sps__dfree(d->row_ptr);
    sps__dfree(d->col_idx);
    sps__dfree(d->val);
    memset(d, 0, sizeof *d);
}

/* The DIA view's diagonals (backend.h sps_dev_rows.view_ndiag) of a square A
 * of at most SPS_ONEK_AUTO_MAX rows: one pass over the pattern, which stops
 * at the first diagonal past SPS_VIEW_DIAGS (then no view). Without room for
 * its marks there is no view either: the engine reads the CSR as before. */
static void csr_view(const sps_csr *A, sps_csr_dev *d)
{
    d->view_ndiag = 0;
    if (!A->row_ptr || !A->col_idx || A->nrows != A->ncols || A->nrows > SPS_ONEK_AUTO_MAX || A->nnz <= 0)
        return;
    const sps_idx n = A->nrows;
    unsigned char *seen = sps__calloc(2 * (size_t)n, 1);
    if (!seen) return;
    int nd = 0;
    for (sps_idx i = 0; i < n && nd <= SPS_VIEW_DIAGS; i++)
        for (sps_idx j = A->row_ptr[i]; j < A->row_ptr[i + 1]; j++) {
            unsigned char *m = seen + (A->col_idx[j] - i + n - 1);
            if (!*m && ++nd > SPS_VIEW_DIAGS) break;
            *m = 1;
        }
    if (nd <= SPS_VIEW_DIAGS) {
        int q = 0;
        for (sps_idx o = 0; o < 2 * n - 1; o++)
            if (seen[o]) d->view_off[q++] = o - (n - 1);
        d->view_ndiag = nd;
    }
    sps__free(seen);
}

sps_status sps__csr_dev_upload(sps_context *ctx, const sps_csr *A, int single, sps_csr_dev *d)
{
    memset(d, 0, sizeof *d);
    d->nrows = A->nrows;
    d->ncols = A->ncols;
    d->nnz = A->nnz;
    const int count = A->row_ptr && A->nrows <= SPS_DEV_ROWS_COUNTED;
    d->max_row = count ? 0 : SPS_IDX_MAX;
    for (sps_idx i = 0; count && i < A->nrows; i++)
        if (A->row_ptr[i + 1] - A->row_ptr[i] > d->max_row) d->max_row = A->row_ptr[i + 1] - A->row_ptr[i];
    if (!single) csr_view(A, d);
    d->single = single;
    size_t rp = ((size_t)A->nrows + 1) * sizeof(sps_idx);
    size_t ci = (size_t)A->nnz * sizeof(sps_idx);
    size_t va = (size_t)A->nnz * (single ? sizeof(float) : sizeof(double));
    /* the matrix's device copy, when there is one: nothing crosses the bus again */
    const sps_dcsr *dc = single ? NULL : sps__csr_device_copy(ctx, A);
    sps_status st = sps__dmalloc(ctx, (void **)&d->row_ptr, rp);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&d->col_idx, ci);
    if (st == SPS_OK) st = sps__dmalloc(ctx, &d->val, va);
    if (st == SPS_OK && dc) {
        st = sps__d2d(ctx, d->row_ptr, dc->row_ptr, rp);
        if (st == SPS_OK) st = sps__d2d(ctx, d->col_idx, dc->col_idx, ci);
        if (st == SPS_OK) st = sps__d2d(ctx, d->val, dc->val, va);
    } else if (st == SPS_OK) {
        st = sps__h2d(ctx, d->row_ptr, A->row_ptr, rp);
        if (st == SPS_OK) st = sps__h2d(ctx, d->col_idx, A->col_idx, ci);
        if (st == SPS_OK) st = sps__upload_values(ctx, d->val, A->val, (size_t)A->nnz, single);
    }
    if (st != SPS_OK) {
        sps__csr_dev_free(d);
        return st;
    }
    d->bytes = rp + ci + va;
    return SPS_OK;
}

sps_status sps__csr_fmt_upload(sps_context *ctx, const sps_fmt *f, int single, void **dev,
                               sps_spmv_stats *st)
{
    const sps_fmt_csr *c = (const sps_fmt_csr *)f;
    *dev = NULL;
    sps_csr_dev *d = sps__calloc(1, sizeof *d);
    if (!d) return sps__err(ctx, SPS_ERR_NO_MEMORY, "upload: out of memory");
    sps_status s = sps__csr_dev_upload(ctx, &c->A, single, d);
    if (s != SPS_OK) {
        sps__free(d);
        return s;
    }
    d->param = c->param;
    st->device_bytes = d->bytes;
    *dev = d;
    return SPS_OK;
}

sps_status sps__csr_fmt_update_dev(sps_context *ctx, const sps_fmt *f, void *dev)
{
    const sps_fmt_csr *c = (const sps_fmt_csr *)f;
    sps_csr_dev *d = dev;
    return sps__upload_values(ctx, d->val, c->A.val, (size_t)c->A.nnz, d->single);
}

sps_status sps__csr_fmt_fetch(sps_context *ctx, sps_fmt *f, const void *dev)
{
    sps_fmt_csr *c = (sps_fmt_csr *)f;
    if (!c->borrowed) return SPS_OK;
    const sps_csr_dev *d = dev;
    sps_csr h;
    sps_status st = sps__csr_alloc(ctx, &h, d->nrows, d->ncols, d->nnz);
    if (st != SPS_OK) return st;
    size_t n = (size_t)d->nnz;
    st = sps__d2h(ctx, h.row_ptr, d->row_ptr, ((size_t)d->nrows + 1) * sizeof(sps_idx));
    if (st == SPS_OK) st = sps__d2h(ctx, h.col_idx, d->col_idx, n * sizeof(sps_idx));
    if (st == SPS_OK && !d->single) st = sps__d2h(ctx, h.val, d->val, n * sizeof(double));
    if (st == SPS_OK && d->single) {
        /* widen in place from the back: floats occupy the first half of val */
        st = sps__d2h(ctx, h.val, d->val, n * sizeof(float));
        const float *fv = (const float *)h.val;
        for (size_t i = n; i-- > 0;) h.val[i] = (double)fv[i];
    }
    if (st != SPS_OK) {
        sps__csr_free(&h);
        return st;
    }
    c->A = h;
    c->borrowed = 0;
    return SPS_OK;
}

int sps__csr_fmt_dev_rows(const void *dev, sps_dev_rows *out)
{
    const sps_csr_dev *d = dev;
    if (!d || d->single || d->nrows != d->ncols) return 0;
    memset(out, 0, sizeof *out);
    out->kind = SPS_ROWS_CSR;
    out->n = d->nrows;
    out->nnz = d->nnz;
    out->max_row = d->max_row;
    out->row_ptr = d->row_ptr;
    out->col_idx = d->col_idx;
    out->val = (const double *)d->val;
    out->view_ndiag = d->view_ndiag;
    out->view_off = d->view_ndiag ? d->view_off : NULL;
    return 1;
}

void sps__csr_fmt_free_dev(void *dev)
{
    sps__csr_dev_free(dev);
    sps__free(dev);
}

#endif /* SPS_HAVE_CUDA */
