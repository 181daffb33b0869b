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
    sps__free(f->hblk); /* blo, index and dnum */
    sps__free(f->off);
    sps__free(f->val);
    sps__free(f->map);
#if SPS_HAVE_CUDA
    sps__dfree(f->dval);
    sps__dfree(f->dmap);
    sps__dfree(f->dblk);
#endif
    sps__free(f);
}

/* The device conversion takes 32-row segments only. */
static const struct sps_dcsr *device_source(sps_context *ctx, const sps_csr *A, sps_idx seg)
{
    return seg == 32 ? sps__diag_device_source(ctx, A) : NULL;
}

/* hdia_as: NULL for Algorithm 1's sub-blocks, else the name HDIA was asked
 * by, shown in the detail. var: the balance variance. */
static void fill_stats(const sps_fmt_drm *f, const char *hdia_as, double var, sps_spmv_stats *st)
{
    const sps_idx ndiag = f->ndiag;
    const int64_t slots = (int64_t)ndiag * f->seg;
    st->slots = slots;
    st->fill = slots ? (double)(slots - f->nnz) / (double)slots : 0.0;
    st->blocks = f->nblk;
    st->balance_var = var;
    st->value_bytes = 8.0 * (double)slots + 8.0 * f->ncols + 8.0 * f->nrows;
    st->bytes_per_spmv = st->value_bytes +
                         4.0 * ((double)f->nblk + 1 + 2.0 * f->nslot + 1 + ndiag);
    const sps_idx dmax = f->dmax, mmin = f->mmin;
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

/* The diagonal counts of A's segments into cnt: on the device (the scatter
 * finds the offsets again; f->dmap is allocated meanwhile) or on
 * the host (*sg keeps the offsets for sps__diag_layout). */
static sps_status count_diagonals(sps_context *ctx, const sps_csr *A, const struct sps_dcsr *dsrc,
                                  sps_idx seg, sps_idx *cnt, sps_diag_segs *sg, sps_fmt_drm *f)
{
    memset(sg, 0, sizeof *sg);
#if SPS_HAVE_CUDA
    if (dsrc) return sps__drm_scan_dev(ctx, dsrc, cnt, &f->dmap);
#else
    (void)dsrc;
    (void)f;
#endif
    sps_status s = sps__diag_scan(ctx, A, seg, sg);
    for (sps_idx h = 0; s == SPS_OK && h < sg->nseg; h++) cnt[h] = sg->dnum[h + 1] - sg->dnum[h];
    return s;
}

/* Offsets, values and map: on the host (sps__diag_layout, from sg's
 * offsets) or on the device (from the block blk: f's slots and index's
 * inverse in its aux part). */
static sps_status layout(sps_context *ctx, const sps_csr *A, const struct sps_dcsr *dsrc,
                         const sps_diag_segs *sg, const sps_idx *blk, sps_fmt_drm *f)
{
    const size_t nd = (size_t)f->ndiag;
    if (!dsrc) {
        f->off = sps__malloc(sps__mul_size(nd, sizeof *f->off));
        f->val = sps__calloc(nd * (size_t)f->seg, sizeof *f->val);
        f->map = sps__malloc(sps__mul_size((size_t)A->nnz, sizeof *f->map));
        if (!f->off || !f->val || !f->map)
            return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory for %lld slots",
                            (long long)nd * f->seg);
        return sps__diag_layout(ctx, A, sg, f->index, f->dnum, f->off, f->map, f->val);
    }
#if SPS_HAVE_CUDA
    return sps__drm_scatter_dev(ctx, dsrc, blk, f->nslot, f->nblk, f->dmap, &f->dblk,
                                (double **)&f->dval);
#else
    (void)blk;
    return sps__err(ctx, SPS_ERR_INTERNAL, "drm: a device source in a build without CUDA");
#endif
}

void sps__drm_slots(sps_fmt_drm *f, sps_idx *cnt)
{
    const sps_idx S = f->nslot;
    sps_idx *dnum = f->dnum, dmax = 0, maxmem = 0, mmin = f->nblk ? S : 0, acc = 0;
    dnum[0] = 0;
    for (sps_idx sl = 0; sl < S; sl++) { /* the slots' dnum; cnt becomes index's inverse */
        const sps_idx h = f->index[sl], c = cnt[h];
        acc += c; /* in a register: dnum may alias cnt, a reload would wait on the store */
        dnum[sl + 1] = acc;
        dmax = c > dmax ? c : dmax;
        cnt[h] = sl;
    }
    /* The commonest sub-block size (in segments), the larger on ties: the
     * thread block of rows = 0 (drm.cu). A block sized for the largest
     * sub-block would leave most of its warps idle when a few sub-blocks are
     * bigger than the rest. Counted by runs of equal sizes: one counter
     * incremented block after block (most sub-blocks of the same size)
     * would wait on its own store each time. */
    int64_t n[1025] = {0}, run = 0;
    sps_idx prev = 0;
    for (sps_idx b = 0; b < f->nblk; b++) {
        const sps_idx k = f->blo[b + 1] - f->blo[b];
        maxmem = k > maxmem ? k : maxmem;
        mmin = k < mmin ? k : mmin;
        if (k != prev) {
            n[prev > 1024 ? 1024 : prev] += run;
            prev = k;
            run = 0;
        }
        run++;
    }
    n[prev > 1024 ? 1024 : prev] += run;
    f->ndiag = dnum[S];
    f->dmax = dmax;
    f->maxmem = maxmem;
    f->mmin = mmin;
    f->bseg = 1;
    for (sps_idx k = 1; k <= f->maxmem && k <= 1024; k++)
        if (n[k] >= n[f->bseg]) f->bseg = k;
}

sps_status sps__drm_plan_slots(sps_context *ctx, sps_fmt_drm *f, sps_idx *cnt, int group,
                               int order_rows, double *var, void *ws, size_t ws_bytes)
{
    sps_status s = sps__drm_plan_counts_ws(ctx, cnt, f->nslot, f->seg, group, order_rows, 1024 / f->seg,
                                           f->index, f->blo, &f->nblk, var, f->dnum, ws, ws_bytes);
    if (s == SPS_OK) sps__drm_slots(f, cnt);
    return s;
}

/* The conversion, host or device alike up to the layout: the segments'
 * diagonal counts, the plan on the host (O(segments)), the slots' dnum.
 * Converting on the device, the block of dnum, index, inv and blo and the
 * plan's scratch are the context's host workspace (sps__host_ws), whose
 * pages stay resident from one conversion to the next: a fresh block's
 * writes fault page by page (about 3 us a 4 KiB page on the H100 machine;
 * poisson3d:160's 2 MB block). Past SPS_HOST_WS_MAX, fresh allocations as
 * on the host. Either way the format keeps no host copy of the block once
 * the scatter has uploaded it (sps_drm_fetch brings it back). */
static sps_status build(sps_context *ctx, const sps_csr *A, sps_idx seg, const char *hdia_as,
                        int rows, int order_rows, sps_fmt **out, sps_spmv_stats *st)
{
    *out = NULL;
    if (seg < 1 || seg > 1024 || (seg & (seg - 1)))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "drm: segment height %d is not a power of 2 "
                        "in [1, 1024]", seg);
    const struct sps_dcsr *dsrc = device_source(ctx, A, seg);
    const sps_idx S = (sps_idx)(((int64_t)A->nrows + seg - 1) / seg);
    const size_t bb = sps__mul_size(SPS_DRM_BLK_WORDS(S), sizeof(sps_idx));
    sps_diag_segs sg = {0};
    /* the workspace: the block, then the plan's scratch (diag_plan.c: 3.5 S words) */
    const size_t sb = sps__mul_size(3 * (size_t)S + (size_t)S / 2 + 8, sizeof(sps_idx));
    sps_idx *blk = dsrc && bb < SIZE_MAX - sb ? sps__host_ws(ctx, bb + sb) : NULL;
    void *ws = blk ? (char *)blk + bb : NULL;
    const size_t ws_bytes = blk ? sb : 0;
    sps_fmt_drm *f = sps__calloc(1, sizeof *f);
    if (f && !blk) blk = f->hblk = sps__malloc(bb);
    if (!f || !blk) {
        sps__free(f);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "drm: out of memory for %d segments", S);
    }
    f->dnum = blk;
    f->index = blk + SPS_DRM_BLK_INDEX(S);
    f->blo = blk + SPS_DRM_BLK_BLO(S);
    sps_idx *cnt = blk + SPS_DRM_BLK_AUX(S); /* counts, then index's inverse */
    f->nrows = A->nrows;
    f->ncols = A->ncols;
    f->nnz = A->nnz;
    f->seg = seg;
    f->nslot = S;
    f->rows = rows;
    double var = 0.0;
    int64_t ndiag = 0;
    sps_status s = count_diagonals(ctx, A, dsrc, seg, cnt, &sg, f);
    if (s != SPS_OK) goto fail;
    for (sps_idx h = 0; h < S; h++) ndiag += cnt[h];
    if (ndiag * seg > SPS_IDX_MAX) {
        char b[32];
        sps__diag_count_str(ndiag * seg, b, sizeof b);
        s = sps__err(ctx, SPS_ERR_UNSUPPORTED,
                     "drm: %lld diagonal pieces would store %s slots (more than 2^31-1) for %d "
                     "nonzeros", (long long)ndiag, b, A->nnz);
        goto fail;
    }
    s = sps__drm_plan_slots(ctx, f, cnt, hdia_as == NULL, order_rows, &var, ws, ws_bytes);
    if (s != SPS_OK) goto fail;
    fill_stats(f, hdia_as, var, st);
    s = layout(ctx, A, dsrc, &sg, blk, f);
    if (s != SPS_OK) goto fail;
    sps__diag_segs_free(&sg);
    if (dsrc) { /* the block is on the device now (dblk) */
        sps__free(f->hblk);
        f->hblk = f->dnum = f->index = f->blo = NULL;
    }
    *out = (sps_fmt *)f;
    return SPS_OK;
fail:
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
    sps__diag_update_host(f->map, f->nnz, values, f->val, &f->pending);
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
