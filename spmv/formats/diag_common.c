/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/diag_common.c: segment scan, slot layout and host apply shared by drm and dia */
#include "diag_common.h"

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_idx(const void *a, const void *b)
{
    sps_idx x = *(const sps_idx *)a, y = *(const sps_idx *)b;
    return (x > y) - (x < y);
}

void sps__diag_sort(sps_idx *a, size_t n)
{
    if (n > 24) {
        qsort(a, n, sizeof *a, cmp_idx);
        return;
    }
    for (size_t i = 1; i < n; i++) {
        sps_idx v = a[i];
        size_t j = i;
        for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
        a[j] = v;
    }
}

void sps__diag_count_str(int64_t n, char *buf, size_t len)
{
    if (n < 10000) snprintf(buf, len, "%lld", (long long)n);
    else if (n < 1000000) snprintf(buf, len, "%.1fK", n / 1e3);
    else if (n < 1000000000) snprintf(buf, len, "%.1fM", n / 1e6);
    else snprintf(buf, len, "%.1fG", n / 1e9);
}

/* Offsets run from -(nrows-1) to ncols-1: marker index d + nrows - 1. */
static size_t offset_span(const sps_csr *A)
{
    size_t span = (size_t)A->nrows + (size_t)A->ncols;
    return span ? span : 1;
}

void sps__diag_segs_free(sps_diag_segs *s)
{
    if (!s) return;
    sps__free(s->dnum);
    sps__free(s->off);
    memset(s, 0, sizeof *s);
}

sps_status sps__diag_scan(sps_context *ctx, const sps_csr *A, sps_idx seg, sps_diag_segs *out)
{
    memset(out, 0, sizeof *out);
    if (seg < 1) return sps__err(ctx, SPS_ERR_INVALID_ARG, "segment height %d < 1", seg);
    const sps_idx n = A->nrows;
    const sps_idx nseg = (sps_idx)(((int64_t)n + seg - 1) / seg);
    const size_t span = offset_span(A);
    sps_idx *mark = sps__malloc(sps__mul_size(span, sizeof *mark));
    out->dnum = sps__malloc(((size_t)nseg + 1) * sizeof *out->dnum);
    out->off = sps__malloc(sps__mul_size((size_t)A->nnz, sizeof *out->off));
    if (!mark || !out->dnum || !out->off) {
        sps__free(mark);
        sps__diag_segs_free(out);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory scanning %d rows for diagonals", n);
    }
    out->seg = seg;
    out->nseg = nseg;
    for (size_t k = 0; k < span; k++) mark[k] = -1;
    sps_idx total = 0;
    out->dnum[0] = 0;
    for (sps_idx h = 0; h < nseg; h++) {
        const sps_idx start = total;
        const int64_t r0 = (int64_t)h * seg;
        const int64_t r1 = r0 + seg < n ? r0 + seg : n;
        for (int64_t r = r0; r < r1; r++) {
            for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
                const int64_t d = (int64_t)A->col_idx[p] - r;
                const size_t k = (size_t)(d + n - 1);
                if (mark[k] != h) {  /* first entry of diagonal d in segment h */
                    mark[k] = h;
                    out->off[total++] = (sps_idx)d;
                }
            }
        }
        sps__diag_sort(out->off + start, (size_t)(total - start));
        out->dnum[h + 1] = total;
    }
    sps__free(mark);
    return SPS_OK;
}

sps_status sps__diag_layout(sps_context *ctx, const sps_csr *A, const sps_diag_segs *s,
                            const sps_idx *index, sps_idx *dnum, sps_idx *off, sps_idx *map,
                            double *val)
{
    const sps_idx n = A->nrows, seg = s->seg;
    const size_t span = offset_span(A);
    sps_idx *pos = sps__malloc(sps__mul_size(span, sizeof *pos));
    if (!pos) return sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory laying out %d segments", s->nseg);
    dnum[0] = 0;
    for (sps_idx sl = 0; sl < s->nseg; sl++) {
        const sps_idx h = index[sl];
        const sps_idx *o = s->off + s->dnum[h];
        const sps_idx dig = s->dnum[h + 1] - s->dnum[h];
        memcpy(off + dnum[sl], o, (size_t)dig * sizeof *off);
        dnum[sl + 1] = dnum[sl] + dig;
        /* Position of each of the segment's diagonals; only these are read below. */
        for (sps_idx j = 0; j < dig; j++) pos[(size_t)((int64_t)o[j] + n - 1)] = j;
        const int64_t r0 = (int64_t)h * seg;
        const int64_t r1 = r0 + seg < n ? r0 + seg : n;
        for (int64_t r = r0; r < r1; r++) {
            for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
                const int64_t d = (int64_t)A->col_idx[p] - r;
                const int64_t i = dnum[sl] + pos[(size_t)(d + n - 1)];
                map[p] = (sps_idx)(i * seg + (r - r0));
                val[map[p]] = A->val[p];
            }
        }
    }
    sps__free(pos);
    return SPS_OK;
}

/* Rows are taken CHUNK at a time with the diagonal loop outside, so that the
 * values are read contiguously; each row still sums its diagonals in order. */
#define CHUNK 64

void sps__diag_apply_host(const sps_diag_view *v, double alpha, const double *x, double beta,
                          double *y)
{
    const int64_t n = v->nrows, nc = v->ncols, seg = v->seg;
    for (sps_idx sl = 0; sl < v->nslot; sl++) {
        const int64_t r0 = (int64_t)v->index[sl] * seg;
        const int64_t rows = r0 + seg < n ? seg : n - r0; /* last segment: rows past n skipped */
        for (int64_t t0 = 0; t0 < rows; t0 += CHUNK) {
            const int64_t tn = rows - t0 < CHUNK ? rows - t0 : CHUNK;
            double acc[CHUNK] = {0};
            for (sps_idx i = v->dnum[sl]; i < v->dnum[sl + 1]; i++) {
                const double *vi = v->val + (int64_t)i * seg + t0;
                const int64_t c0 = r0 + t0 + v->off[i]; /* column of the chunk's first row */
                for (int64_t t = 0; t < tn; t++)
                    if (c0 + t >= 0 && c0 + t < nc) acc[t] += vi[t] * x[c0 + t];
            }
            double *yr = y + r0 + t0;
            for (int64_t t = 0; t < tn; t++)
                yr[t] = beta == 0.0 ? alpha * acc[t] : alpha * acc[t] + beta * yr[t];
        }
    }
}

void sps__diag_update_host(const sps_idx *map, sps_idx nnz, const double *values, double *val,
                           const double **pending)
{
    if (map)
        for (sps_idx p = 0; p < nnz; p++) val[map[p]] = values[p];
    *pending = values;
}

const struct sps_dcsr *sps__diag_device_source(sps_context *ctx, const sps_csr *A)
{
#if SPS_HAVE_CUDA
    if (!sps__convert_on_device(ctx, A->nnz)) return NULL;
    return sps__csr_device_copy(ctx, A);
#else
    (void)ctx;
    (void)A;
    return NULL;
#endif
}

#if SPS_HAVE_CUDA
static sps_status take_dev(sps_context *ctx, void **dval, sps_idx **dmap, size_t nval,
                           sps_idx nnz, int single, void **val, sps_idx **map, size_t *bytes)
{
    *bytes += nval * (single ? sizeof(float) : sizeof(double)) + (size_t)nnz * sizeof(sps_idx);
    *map = *dmap;
    *dmap = NULL;
    if (!single) {
        *val = *dval;
        *dval = NULL;
        return SPS_OK;
    }
    sps_status s = sps__dmalloc(ctx, val, nval * sizeof(float));
    if (s == SPS_OK) s = sps__narrow_dev(ctx, (const double *)*dval, nval, (float *)*val);
    sps__dfree(*dval);
    *dval = NULL;
    return s;
}

sps_status sps__diag_upload_dev(sps_context *ctx, int built, void **dval, sps_idx **dmap,
                                const double *hval, size_t nval, sps_idx nnz, int single,
                                void **val, sps_idx **map, size_t *bytes)
{
    if (built) return take_dev(ctx, dval, dmap, nval, nnz, single, val, map, bytes);
    const size_t vbytes = nval * (single ? sizeof(float) : sizeof(double));
    *bytes += vbytes;
    sps_status s = sps__dmalloc(ctx, val, vbytes);
    if (s == SPS_OK) s = sps__upload_values(ctx, *val, hval, nval, single);
    return s;
}

sps_status sps__diag_update_dev(sps_context *ctx, const sps_idx *hmap, sps_idx nnz,
                                const double *values, sps_idx **dmap, void *val, int single)
{
    if (!*dmap && nnz) {
        size_t bytes = (size_t)nnz * sizeof(sps_idx);
        sps_status s = sps__dmalloc(ctx, (void **)dmap, bytes);
        if (s == SPS_OK)
            s = sps__h2d_pinned(ctx, 1, (void *const *)dmap, (const void *const *)&hmap, &bytes,
                                NULL, 0);
        if (s != SPS_OK) return s;
    }
    return sps__diag_values_dev(ctx, *dmap, nnz, values, val, single);
}

/* A float device array is read into the front of the double one and widened
 * in place from the back, so that no second host buffer is needed. */
static sps_status fetch_values(sps_context *ctx, const void *dval, size_t nval, int single,
                               double *val)
{
    if (!single) return sps__d2h(ctx, val, dval, nval * sizeof(double));
    sps_status s = sps__d2h(ctx, val, dval, nval * sizeof(float));
    const float *fv = (const float *)val;
    for (size_t i = nval; i-- > 0;) val[i] = (double)fv[i];
    return s;
}

sps_status sps__diag_fetch_dev(sps_context *ctx, const char *name, const void *dval,
                               const sps_idx *dmap, size_t nval, sps_idx nnz, int single,
                               double **val, sps_idx **map)
{
    /* the casts let drm_emu/run.sh build this as C++ */
    double *v = (double *)sps__malloc((nval ? nval : 1) * sizeof(double));
    sps_idx *m = (sps_idx *)sps__malloc(((size_t)nnz + 1) * sizeof(sps_idx));
    sps_status s = v && m ? SPS_OK : sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", name);
    if (s == SPS_OK) s = sps__d2h(ctx, m, dmap, (size_t)nnz * sizeof(sps_idx));
    if (s == SPS_OK) s = fetch_values(ctx, dval, nval, single, v);
    if (s != SPS_OK) {
        sps__free(v);
        sps__free(m);
        return s;
    }
    *val = v;
    *map = m;
    return SPS_OK;
}
#endif
