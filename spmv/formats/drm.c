/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/drm.c: the drm backend (Wang et al. 2024): row segments stored as
 * short DIA blocks, merged into balanced sub-blocks by Algorithm 1 (diag_plan.c).
 *
 * Parameters (after "drm:"):
 *   seg=K     rows per segment, K in {8, 16, 32, 64, 128} (default 32, a warp)
 *   hdia      skip Algorithm 1's grouping: every segment its own sub-block
 *             (HDIA); `nomerge` is the older name, still accepted (it meant
 *             Algorithm 1's merging of segments, not the merge backend)
 *   rows=R    GPU mapping: R threads per block over consecutive slots (R a
 *             multiple of 32 up to 1024; default 128), or the paper's one
 *             thread block per sub-block (rows=0, Algorithm 2); see doc/drm.md
 *   order=rows|list  sub-blocks numbered in row order (default) or in
 *             Algorithm 1's list order (`order=merge`, the older name, too)
 *   unroll=4|8  diagonals per predicated chunk in the kernel (default 4) */
#include "diag_common.h"
#include "kernels.h"

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

SPS_DECLARE_GPU_BACKEND(sps_drm)
#if SPS_HAVE_CUDA
/* A device-built val and map, brought to the host for apply_host (drm.cu). */
sps_status sps_drm_fetch(sps_context *ctx, sps_fmt *f, const void *dev);
/* The fused "SpMV plus dot" (backend.h apply_dot; drm.cu, doc/solvers.md). */
sps_status sps_drm_apply_dot(sps_context *ctx, void *dev, const double *x, double *y, double *part,
                            int maxparts, int *nparts);
/* The block product (backend.h apply_multi; drm.cu, doc/spmm.md). */
sps_status sps_drm_apply_multi(sps_context *ctx, void *dev, int k, double alpha, const double *X,
                              int64_t ldx, double beta, double *Y, int64_t ldy);
#endif

typedef struct drm_params {
    sps_idx seg;
    int group;           /* 1: Algorithm 1 groups segments into sub-blocks; 0: HDIA */
    const char *hdia_as; /* the name hdia was asked by ("hdia" or "nomerge"), for the detail */
    int rows;
    int unroll;
    int order_rows; /* 1: sub-blocks in row order (default); 0: Algorithm 1's list order */
} drm_params;

static sps_status parse_one(sps_context *ctx, void *user, const char *key, const char *value)
{
    drm_params *p = user;
    char *end = NULL;
    if ((strcmp(key, "hdia") == 0 || strcmp(key, "nomerge") == 0) && !*value) {
        p->group = 0;
        p->hdia_as = key[0] == 'h' ? "hdia" : "nomerge";
        return SPS_OK;
    }
    if (strcmp(key, "seg") == 0) {
        long k = strtol(value, &end, 10);
        if (*value && !*end && (k == 8 || k == 16 || k == 32 || k == 64 || k == 128)) {
            p->seg = (sps_idx)k;
            return SPS_OK;
        }
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: seg=%s: expected 8, 16, 32, 64 or 128",
                        value);
    }
    if (strcmp(key, "rows") == 0) {
        long r = strtol(value, &end, 10);
        if (*value && !*end && r >= 0 && r <= 1024 && r % 32 == 0) {
            p->rows = (int)r;
            return SPS_OK;
        }
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "drm: rows=%s: expected 0 (one block per sub-block) or a multiple of 32 "
                        "up to 1024", value);
    }
    if (strcmp(key, "order") == 0) {
        if (strcmp(value, "rows") == 0 || strcmp(value, "list") == 0 ||
            strcmp(value, "merge") == 0) {
            p->order_rows = value[0] == 'r';
            return SPS_OK;
        }
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: order=%s: expected rows or list", value);
    }
    if (strcmp(key, "unroll") == 0) {
        if (strcmp(value, "4") == 0 || strcmp(value, "8") == 0) {
            p->unroll = value[0] - '0';
            return SPS_OK;
        }
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: unroll=%s: expected 4 or 8", value);
    }
    return sps__err(ctx, SPS_ERR_INVALID_ARG,
                    "drm: unknown parameter '%s' (known: seg=K, hdia (or nomerge), rows=R, "
                    "unroll=4|8, order=rows|list)", key);
}

static void free_fmt(sps_fmt *fmt)
{
    sps_fmt_drm *f = (sps_fmt_drm *)fmt;
    if (!f) return;
    sps__free(f->blo);
    sps__free(f->index);
    sps__free(f->dnum);
    sps__free(f->off);
    sps__free(f->val);
    sps__free(f->map);
#if SPS_HAVE_CUDA
    sps__dfree(f->dval);
    sps__dfree(f->dmap);
    sps__dfree(f->ddnum);
    sps__dfree(f->doff);
#endif
    sps__free(f);
}

/* The device CSR to convert from on the device, or NULL for the host
 * conversion: a GPU context (unless SPS_CONVERT=host), the matrix's device
 * copy, 32-row segments. */
static const struct sps_dcsr *device_source(sps_context *ctx, const sps_csr *A, sps_idx seg)
{
#if SPS_HAVE_CUDA
    if (seg != 32 || !sps__convert_on_device(ctx)) return NULL;
    return sps__csr_device_copy(ctx, A);
#else
    (void)ctx;
    (void)A;
    (void)seg;
    return NULL;
#endif
}

#if SPS_HAVE_CUDA
/* The slots' diagonal counts in slot order (the dnum part of sps__diag_layout;
 * the offsets follow on the device). */
static void slot_dnum(const sps_diag_segs *s, const sps_idx *index, sps_idx *dnum)
{
    dnum[0] = 0;
    for (sps_idx sl = 0; sl < s->nseg; sl++) {
        const sps_idx h = index[sl];
        dnum[sl + 1] = dnum[sl] + (s->dnum[h + 1] - s->dnum[h]);
    }
}
#endif

/* The device scan's offsets when the build fails before the scatter took them. */
static void drop_dev_scan(sps_idx *doff_seg, sps_idx *dstart_seg)
{
#if SPS_HAVE_CUDA
    sps__dfree(doff_seg);
    sps__dfree(dstart_seg);
#else
    (void)doff_seg;
    (void)dstart_seg;
#endif
}

/* Values and map: on the host (sps__diag_layout) or on the device, which
 * takes the device scan's offsets (*doff_seg, *dstart_seg) and frees them. */
static sps_status layout(sps_context *ctx, const sps_csr *A, const struct sps_dcsr *dsrc,
                         const sps_diag_segs *sg, sps_idx **doff_seg, sps_idx **dstart_seg,
                         sps_fmt_drm *f)
{
    if (!dsrc) return sps__diag_layout(ctx, A, sg, f->index, f->dnum, f->off, f->map, f->val);
#if SPS_HAVE_CUDA
    slot_dnum(sg, f->index, f->dnum);
    sps_idx *o = *doff_seg, *st = *dstart_seg;
    *doff_seg = *dstart_seg = NULL;
    return sps__drm_scatter_dev(ctx, dsrc, f->index, f->nslot, f->dnum, o, st,
                                (double **)&f->dval, &f->dmap, &f->ddnum, &f->doff);
#else
    (void)doff_seg;
    (void)dstart_seg;
    return SPS_ERR_INTERNAL;
#endif
}

/* hdia_as: NULL for Algorithm 1's sub-blocks, else the name HDIA was asked
 * by, shown in the detail. */
static void fill_stats(const sps_fmt_drm *f, const char *hdia_as, const int64_t *ope,
                       sps_spmv_stats *st)
{
    const sps_idx ndiag = f->dnum[f->nslot];
    const int64_t slots = (int64_t)ndiag * f->seg;
    st->slots = slots;
    st->fill = slots ? (double)(slots - f->nnz) / (double)slots : 0.0;
    st->blocks = f->nblk;
    st->balance_var = sps__drm_variance(ope, f->index, f->blo, f->nblk);
    st->value_bytes = 8.0 * (double)slots + 8.0 * f->ncols + 8.0 * f->nrows;
    st->bytes_per_spmv = st->value_bytes +
                         4.0 * ((double)f->nblk + 1 + 2.0 * f->nslot + 1 + ndiag);
    sps_idx dmax = 0, mmin = f->nblk ? f->nslot : 0;
    for (sps_idx s = 0; s < f->nslot; s++)
        if (f->dnum[s + 1] - f->dnum[s] > dmax) dmax = f->dnum[s + 1] - f->dnum[s];
    for (sps_idx b = 0; b < f->nblk; b++)
        if (f->blo[b + 1] - f->blo[b] < mmin) mmin = f->blo[b + 1] - f->blo[b];
    char members[48], mapping[32] = "";
    if (mmin == f->maxmem) snprintf(members, sizeof members, "%d", mmin);
    else snprintf(members, sizeof members, "%d-%d", mmin, f->maxmem);
    if (f->rows) snprintf(mapping, sizeof mapping, ", %d threads/block", f->rows);
    snprintf(st->detail, sizeof st->detail,
             "seg=%d, %.1f diags/segment (max %d), %d sub-blocks of %s segments%s%s%s%s",
             f->seg,
             f->nslot ? (double)ndiag / f->nslot : 0.0, dmax, f->nblk, members,
             hdia_as ? " (" : "", hdia_as ? hdia_as : "", hdia_as ? ")" : "", mapping);
}

/* Number the sub-blocks in row order of their first segment, and sort each
 * sub-block's segments by row. Algorithm 1 decides which segments share a
 * sub-block (the balance); it pairs the largest with the smallest, so in its
 * own list order consecutive thread blocks work far apart in the matrix and
 * x is not reused between neighbouring blocks. The numbering of thread blocks
 * is free in Algorithm 2. O(S): the plan emits each sub-block's segments
 * sorted already (the insertion sort only checks it), and the first segments
 * are distinct, so a table indexed by segment orders the sub-blocks. (Two
 * qsorts took 2 to 5 ms on poisson3d:160's 128,000 segments, more than the
 * device's part of the conversion.) */
static sps_status order_by_rows(sps_context *ctx, sps_idx *index, sps_idx *blo, sps_idx nblk,
                                sps_idx S)
{
    /* first (S), ni (S), nb (nblk + 1 <= S + 1) in one scratch block */
    sps_idx *first = sps__malloc_scratch(sps__mul_size(3 * (size_t)S + 1, sizeof *first));
    if (!first) return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory ordering %d sub-blocks", nblk);
    sps_idx *ni = first + S, *nb = ni + S;
    for (sps_idx h = 0; h < S; h++) first[h] = -1;
    for (sps_idx b = 0; b < nblk; b++) {
        sps__diag_sort(index + blo[b], (size_t)(blo[b + 1] - blo[b]));
        first[index[blo[b]]] = b;
    }
    sps_idx at = 0, k = 0;
    nb[0] = 0;
    for (sps_idx h = 0; h < S; h++) {
        const sps_idx b = first[h];
        if (b < 0) continue;
        for (sps_idx i = blo[b]; i < blo[b + 1]; i++) ni[at++] = index[i];
        nb[++k] = at;
    }
    memcpy(index, ni, (size_t)S * sizeof *index);
    memcpy(blo, nb, ((size_t)nblk + 1) * sizeof *blo);
    sps__free(first);
    return SPS_OK;
}

static sps_status build(sps_context *ctx, const sps_csr *A, sps_idx seg, const char *hdia_as,
                        int rows, int order_rows, sps_fmt **out, sps_spmv_stats *st)
{
    *out = NULL;
    if (seg < 1 || seg > 1024 || (seg & (seg - 1)))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: segment height %d is not a power of 2 "
                        "in [1, 1024]", seg);
    sps_diag_segs sg;
    sps_idx *doff_seg = NULL, *dstart_seg = NULL; /* the device scan's offsets */
    const struct sps_dcsr *dsrc = device_source(ctx, A, seg);
#if SPS_HAVE_CUDA
    sps_status s = dsrc ? sps__drm_scan_dev(ctx, dsrc, &sg, &doff_seg, &dstart_seg)
                        : sps__diag_scan(ctx, A, seg, &sg);
#else
    sps_status s = sps__diag_scan(ctx, A, seg, &sg);
#endif
    if (s != SPS_OK) return s;
    const sps_idx S = sg.nseg, ndiag = sg.dnum[S];
    const int64_t slots = (int64_t)ndiag * seg;
    if (slots > SPS_IDX_MAX) {
        char b[32];
        sps__diag_count_str(slots, b, sizeof b);
        sps__diag_segs_free(&sg);
        drop_dev_scan(doff_seg, dstart_seg);
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "drm: %d diagonal pieces would store %s slots (more than 2^31-1) for %d "
                        "nonzeros", ndiag, b, A->nnz);
    }
    sps_fmt_drm *f = sps__calloc(1, sizeof *f);
    int64_t *ope = sps__malloc_scratch(sps__mul_size((size_t)S, sizeof *ope));
    if (f) {
        f->blo = sps__malloc(((size_t)S + 1) * sizeof *f->blo);
        f->index = sps__malloc(sps__mul_size((size_t)S, sizeof *f->index));
        f->dnum = sps__malloc(((size_t)S + 1) * sizeof *f->dnum);
        if (!dsrc) { /* the device conversion keeps them on the device (fetch) */
            f->off = sps__malloc(sps__mul_size((size_t)ndiag, sizeof *f->off));
            f->val = sps__calloc((size_t)slots, sizeof *f->val);
            f->map = sps__malloc(sps__mul_size((size_t)A->nnz, sizeof *f->map));
        }
    }
    if (!f || !ope || !f->blo || !f->index || !f->dnum ||
        (!dsrc && (!f->off || !f->val || !f->map))) {
        s = sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory for %lld slots",
                     (long long)slots);
        goto fail;
    }
    f->nrows = A->nrows;
    f->ncols = A->ncols;
    f->nnz = A->nnz;
    f->seg = seg;
    f->nslot = S;
    f->rows = rows;
    for (sps_idx h = 0; h < S; h++) ope[h] = (int64_t)(sg.dnum[h + 1] - sg.dnum[h]) * seg;

    s = sps__drm_plan(ctx, ope, S, hdia_as == NULL, 1024 / seg, f->index, f->blo, &f->nblk);
    if (s != SPS_OK) goto fail;
    if (order_rows && (s = order_by_rows(ctx, f->index, f->blo, f->nblk, S)) != SPS_OK) goto fail;
    s = layout(ctx, A, dsrc, &sg, &doff_seg, &dstart_seg, f);
    if (s != SPS_OK) goto fail;
    f->maxmem = 0;
    for (sps_idx b = 0; b < f->nblk; b++)
        if (f->blo[b + 1] - f->blo[b] > f->maxmem) f->maxmem = f->blo[b + 1] - f->blo[b];
    fill_stats(f, hdia_as, ope, st);
    sps__free(ope);
    sps__diag_segs_free(&sg);
    *out = (sps_fmt *)f;
    return SPS_OK;
fail:
    drop_dev_scan(doff_seg, dstart_seg);
    sps__free(ope);
    sps__diag_segs_free(&sg);
    free_fmt((sps_fmt *)f);
    return s;
}

sps_status sps__drm_build(sps_context *ctx, const sps_csr *A, sps_idx seg, int group, int rows,
                          int order_rows, sps_fmt **out, sps_spmv_stats *st)
{
    return build(ctx, A, seg, group ? NULL : "hdia", rows, order_rows, out, st);
}

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    *out = NULL;
    /* Default mapping: packed, 128 threads per block (H100, double:
     * banded:2000000,9,0.01,1 86.0% of the copy bandwidth against 83.5% for
     * Algorithm 2's block per sub-block; poisson3d:160 93.4% against 90.1%). */
    drm_params p = {SPS_DRM_SEG_ROWS, 1, NULL, 128, 4, 1};
    sps_status s = sps__parse_params(ctx, params, parse_one, &p);
    if (s != SPS_OK) return s;
    s = build(ctx, A, p.seg, p.group ? NULL : p.hdia_as, p.rows, p.order_rows, out, st);
    if (s == SPS_OK) ((sps_fmt_drm *)*out)->unroll = p.unroll;
    return s;
}

static void apply_host(const sps_fmt *fmt, double alpha, const double *x, double beta, double *y)
{
    const sps_fmt_drm *f = (const sps_fmt_drm *)fmt;
    const sps_diag_view v = {f->nrows, f->ncols, f->seg, f->nslot, f->index, f->dnum, f->off,
                             f->val};
    sps__diag_apply_host(&v, alpha, x, beta, y);
}

static sps_status update_host(sps_context *ctx, sps_fmt *fmt, const double *values)
{
    (void)ctx;
    sps_fmt_drm *f = (sps_fmt_drm *)fmt;
    if (f->map) sps__diag_update(f->map, f->nnz, values, f->val);
    f->pending = values; /* a device-built val is updated on the device (update_dev) */
    return SPS_OK;
}

const sps_backend sps_backend_drm = {
    .name = "drm",
    .summary = "DRM (Wang et al. 2024): 32-row DIA segments merged into balanced sub-blocks; "
               "drm:seg=K, drm:hdia (alias drm:nomerge), drm:rows=0 (Algorithm 2's block per sub-block)",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_NEEDS_CONVERT | SPS_CAP_SINGLE,
    .convert = convert,
    .apply_host = apply_host,
    .update_host = update_host,
    .free_fmt = free_fmt,
    SPS_GPU_ENTRIES(sps_drm),
#if SPS_HAVE_CUDA
    .fetch = sps_drm_fetch,
    .apply_dot = sps_drm_apply_dot,
    .apply_multi = sps_drm_apply_multi,
#endif
};
