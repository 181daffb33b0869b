/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/diag_common.h: host side shared by the diagonal formats (drm, dia).
 *
 * Both formats store a matrix as row segments of `seg` consecutive rows; a
 * segment keeps each of its distinct diagonals (offset d = col - row with at
 * least one entry in its rows) as `seg` values, lane t of diagonal i at
 * val[i * seg + t] (zeros where the diagonal has no entry). dia is the
 * special case of one segment of nrows rows. Segments are laid out in "slot"
 * order (drm: the merged order of Algorithm 1; dia: the one segment):
 *   index[s]      segment held by slot s
 *   dnum[s]       prefix count of diagonals over slots (dnum[nslot] = total)
 *   off[i]        offset of diagonal i (ascending within a slot)
 *   val[i*seg+t]  value of diagonal i in the slot's row t
 * Two rules the DRM paper leaves out: rows past nrows in the last segment are
 * neither read nor written, and x[row + off] is read only for row + off in
 * [0, ncols) (the stored value is zero there anyway). */
#ifndef SPS_DIAG_COMMON_H
#define SPS_DIAG_COMMON_H

#include "spmv/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Distinct diagonals of each segment, in segment order. */
typedef struct sps_diag_segs {
    sps_idx seg;   /* rows per segment */
    sps_idx nseg;  /* ceil(nrows / seg) */
    sps_idx *dnum; /* nseg + 1 */
    sps_idx *off;  /* dnum[nseg], ascending within each segment */
} sps_diag_segs;

/* One pass over A with a marker array (O(nnz) plus a sort of each segment's
 * short offset list). seg >= 1. */
sps_status sps__diag_scan(sps_context *ctx, const sps_csr *A, sps_idx seg, sps_diag_segs *out);
void sps__diag_segs_free(sps_diag_segs *s);

/* Lay the segments of s out in slot order index[0..nseg): fills dnum
 * (nseg + 1), off (s->dnum[nseg]) and map (A->nnz: the value position of each
 * CSR entry), and scatters A's values into val (zeroed, slots entries).
 * The caller has checked that the slot count fits in sps_idx. */
sps_status sps__diag_layout(sps_context *ctx, const sps_csr *A, const sps_diag_segs *s,
                            const sps_idx *index, sps_idx *dnum, sps_idx *off, sps_idx *map,
                            double *val);

/* The arrays of a laid-out diagonal format (pointers borrowed). */
typedef struct sps_diag_view {
    sps_idx nrows, ncols, seg, nslot;
    const sps_idx *index, *dnum, *off;
    const double *val;
} sps_diag_view;

/* y = alpha*A*x + beta*y over the slots, one row at a time, diagonals in
 * stored order, in double: the reference of the drm and dia kernels. */
void sps__diag_apply_host(const sps_diag_view *v, double alpha, const double *x, double beta,
                          double *y);

/* update_host of both formats: a host-held val (map set) takes the new
 * values now, and *pending keeps them for update_dev, which scatters them on
 * the device (where a device-built format's val lives until fetched). */
void sps__diag_update_host(const sps_idx *map, sps_idx nnz, const double *values, double *val,
                           const double **pending);

struct sps_dcsr;
/* The device CSR that both formats convert from: the matrix's device copy
 * when the pass is worth the device (sps__convert_on_device), else NULL for
 * the host conversion (always NULL without CUDA). */
const struct sps_dcsr *sps__diag_device_source(sps_context *ctx, const sps_csr *A);

/* "9.6M"-style count for messages and details. */
void sps__diag_count_str(int64_t n, char *buf, size_t len);

/* Sort n indices ascending (insertion sort when short, qsort otherwise). */
void sps__diag_sort(sps_idx *a, size_t n);

/* ---- the two formats (read by their .cu files too) ---------------------- */

extern const sps_backend sps_backend_drm; /* drm.c (tests call its entries) */
extern const sps_backend sps_backend_dia; /* dia.c */

typedef struct sps_fmt_drm {
    sps_idx nrows, ncols, nnz;
    sps_idx seg;      /* rows per segment: a power of 2 (the backend takes 8..128) */
    sps_idx nslot;    /* segments = slots */
    sps_idx nblk;     /* sub-blocks */
    sps_idx maxmem;   /* most segments in one sub-block */
    int unroll;       /* diagonals per predicated chunk in the kernel: 4 (default) or 8 */
    int rows;         /* kernel mapping: 0 = one thread block per sub-block (the
                         paper's), R = R threads per block over consecutive slots */
    sps_idx ndiag;    /* dnum[nslot]: diagonal pieces (slots = ndiag * seg) */
    sps_idx bseg;     /* the commonest sub-block size in segments, the larger on
                         ties (the thread block of rows = 0) */
    sps_idx dmax;     /* most diagonals of one segment (the detail) */
    sps_idx mmin;     /* fewest segments of one sub-block (the detail) */
    sps_idx *hblk;    /* one host block of SPS_DRM_BLK_WORDS(nslot) words holding
                         dnum, index and blo (SPS_DRM_BLK_*), and nslot words of
                         scratch (the conversion's counts, then the device's inv);
                         NULL (and dnum, index, blo with it) on a device-built
                         format, whose block lives in dblk, then the device object,
                         until sps_drm_fetch brings it back */
    sps_idx *blo;     /* nblk + 1: prefix count of slots per sub-block */
    sps_idx *index;   /* nslot: segment of each slot (merged order) */
    sps_idx *dnum;    /* nslot + 1 */
    sps_idx *off;     /* dnum[nslot]; NULL while it lives on the device only (dblk) */
    double *val;      /* dnum[nslot] * seg; NULL while it lives on the device only
                         (built there, see dval), until fetched for apply_host */
    sps_idx *map;     /* nnz: CSR entry -> position in val (NULL with val) */
    void *dval;       /* device conversion: val built on the device (double), handed to
                         the device object by the upload */
    sps_idx *dmap;    /* device conversion: map on the device, likewise */
    sps_idx *dblk;    /* device conversion: hblk's words on the device (dnum, index,
                         blo, inv) followed by off, likewise */
    const double *pending; /* device conversion: the CSR values of an update in progress
                              (update_host -> update_dev) */
} sps_fmt_drm;

/* The words of sps_fmt_drm's hblk (and dblk) for S slots, and where each
 * array starts: dnum (S + 1), index (S), aux (S), blo (S + 1: nblk + 1 <= S + 1
 * used, so the upload stops after it). */
#define SPS_DRM_BLK_WORDS(S) (4 * (size_t)(S) + 2)
#define SPS_DRM_BLK_INDEX(S) ((size_t)(S) + 1)
#define SPS_DRM_BLK_AUX(S) (2 * (size_t)(S) + 1)
#define SPS_DRM_BLK_BLO(S) (3 * (size_t)(S) + 1)

typedef struct sps_fmt_dia {
    sps_idx nrows, ncols, nnz;
    sps_idx ndiag;
    sps_idx index0;   /* the one slot's segment (0) */
    sps_idx dnum[2];  /* {0, ndiag} */
    sps_idx *off;     /* ndiag, ascending */
    double *val;      /* ndiag * nrows: val[i * nrows + row]; NULL while on the device only */
    sps_idx *map;     /* nnz (NULL with val) */
    void *dval;       /* device conversion: val built on the device, taken by the upload */
    sps_idx *dmap;    /* device conversion: map on the device, likewise */
    const double *pending; /* the CSR values of an update in progress (update_host -> update_dev) */
} sps_fmt_dia;

/* ---- DRM ---------------------------------------------------------------- */

/* Build the DRM format of A (drm.c): seg a power of 2 in [1, 1024] (the
 * backend's parameter allows 8..128; tests use smaller), group != 0 for
 * Algorithm 1's grouping of segments into sub-blocks (0: HDIA), rows = GPU mapping (see sps_fmt_drm), order_rows != 0 numbers
 * the sub-blocks in row order (else Algorithm 1's list order). *out is a
 * sps_fmt_drm. */
sps_status sps__drm_build(sps_context *ctx, const sps_csr *A, sps_idx seg, int group, int rows,
                          int order_rows, sps_fmt **out, sps_spmv_stats *st);
/* build()'s step after the plan, from f's index and blo (f->nblk
 * sub-blocks) and the segments' diagonal counts cnt[0..f->nslot): the slots'
 * f->dnum, f->ndiag, f->dmax, f->maxmem, f->mmin, f->bseg, and cnt turned into index's inverse
 * (segment -> slot). */
void sps__drm_slots(sps_fmt_drm *f, sps_idx *cnt);
/* build()'s plan and slots from the segments' diagonal counts: f's index,
 * blo and nblk (sps__drm_plan_counts_ws, sub-blocks of at most 1024 / f->seg
 * segments, its scratch ws), then sps__drm_slots. f's nslot, seg, dnum, index
 * and blo are set by the caller; *var gets the balance variance. */
sps_status sps__drm_plan_slots(sps_context *ctx, sps_fmt_drm *f, sps_idx *cnt, int group,
                               int order_rows, double *var, void *ws, size_t ws_bytes);

#if SPS_HAVE_CUDA
/* DRM's conversion on the device (drm_convert.cu), seg = 32 only, in two
 * kernels around the host's plan. The scan (as sps__diag_scan, counts only)
 * writes the number of distinct diagonals of each segment to cnt[0..nseg)
 * on the host (through the context's device scratch, sps__gpu_scratch) and
 * allocates *map, max(nnz, 1) words, while its kernel runs; the scatter
 * fills it with the map. The scatter takes blk, the words of a
 * sps_fmt_drm's hblk with the slots' dnum, index and blo filled (nblk
 * sub-blocks) and the inverse of index (segment -> slot) in its aux part,
 * uploads them (up to blo's last word) into a
 * new device block *dblk of SPS_DRM_BLK_WORDS(nslot) + dnum[nslot] words
 * that ends with the offsets, and lays out the offsets, the values (*val,
 * dnum[nslot] * 32 doubles, every slot written once, zeros included) and the
 * map as sps__diag_layout does; it does not wait for the device (but the
 * upload of blk is over when it returns). */
sps_status sps__drm_scan_dev(sps_context *ctx, const struct sps_dcsr *A, sps_idx *cnt,
                             sps_idx **map);
sps_status sps__drm_scatter_dev(sps_context *ctx, const struct sps_dcsr *A, const sps_idx *blk,
                                sps_idx nslot, sps_idx nblk, sps_idx *map, sps_idx **dblk,
                                double **val);
/* DIA on the device: the sorted distinct offsets (to the host), then the
 * values and map into new device arrays. */
sps_status sps__dia_offsets_dev(sps_context *ctx, const struct sps_dcsr *A, sps_idx **off,
                                sps_idx *ndiag);
sps_status sps__dia_scatter_dev(sps_context *ctx, const struct sps_dcsr *A, const sps_idx *off,
                                sps_idx ndiag, double **val, sps_idx **map);
/* val[map[p]] = values[p] on the device (values on the host; val float if single):
 * how drm and dia updates reach the device. */
sps_status sps__diag_values_dev(sps_context *ctx, const sps_idx *map, sps_idx nnz,
                               const double *values, void *val, int single);
/* b[i] = (float)a[i] on the device. */
sps_status sps__narrow_dev(sps_context *ctx, const double *a, size_t n, float *b);

/* The value side that drm.cu and dia.cu share (diag_common.c): their device
 * objects hold nval values (float if single) at val and the nnz-word map. */

/* The value side of the upload, into the device object's *val (nval values)
 * and *map. A device-built format (built != 0) hands over its values (*dval,
 * double) and map (*dmap), nothing copied: single narrows a float copy and
 * frees the double one; *dval and *dmap are cleared either way. Else hval
 * goes up (as float if single) and the map waits for the first update.
 * *bytes counts what the object now holds. */
sps_status sps__diag_upload_dev(sps_context *ctx, int built, void **dval, sps_idx **dmap,
                                const double *hval, size_t nval, sps_idx nnz, int single,
                                void **val, sps_idx **map, size_t *bytes);
/* update_dev with new CSR values on the host: the host map (a host-built
 * format's) goes up into *dmap at the first update, then the values scatter
 * through it on the device. */
sps_status sps__diag_update_dev(sps_context *ctx, const sps_idx *hmap, sps_idx nnz,
                                const double *values, sps_idx **dmap, void *val, int single);
/* fetch: the device's values, widened to double, and map into new host
 * arrays *val and *map (left alone on failure); name is the backend's, for
 * the message. */
sps_status sps__diag_fetch_dev(sps_context *ctx, const char *name, const void *dval,
                               const sps_idx *dmap, size_t nval, sps_idx nnz, int single,
                               double **val, sps_idx **map);
#endif

/* ---- DRM: the iterative grouping of segments into sub-blocks (Algorithm 1) ----
 * (the paper calls it merging; spsolve says grouping, so that it is not taken
 * for the merge-path backend, spmv/formats/merge.c) */

/* Sub-blocks from the operand counts ope[0..n) of n segments.
 * group != 0: Algorithm 1 of the paper (see drm.c); group == 0: every segment
 * its own sub-block, in order (HDIA). A sub-block of more than maxmem segments
 * (maxmem >= 1) is cut into consecutive chunks of maxmem (the last one shorter).
 * Output: *nblk sub-blocks; members[blk[b] .. blk[b+1]) are the segments of
 * sub-block b in ascending order; blk has room for n + 1 entries, members for n. */
sps_status sps__drm_plan(sps_context *ctx, const int64_t *ope, sps_idx n, int group,
                         sps_idx maxmem, sps_idx *members, sps_idx *blk, sps_idx *nblk);

/* Population variance of the sub-blocks' operand sums (formula 13 of the
 * paper applied to sub-blocks): (1/nblk) sum_b (P_b - mean)^2. */
double sps__drm_variance(const int64_t *ope, const sps_idx *members, const sps_idx *blk,
                         sps_idx nblk);

/* Number the sub-blocks in row order of their first segment (each one's
 * segments ascending, as sps__drm_plan emits them). S: segments. */
sps_status sps__drm_order_rows(sps_context *ctx, sps_idx *members, sps_idx *blk, sps_idx nblk,
                               sps_idx S);

/* What build() (drm.c) asks of the plan, in one call: from the diagonal
 * counts cnt[0..n) of n segments of seg rows (operand counts cnt * seg),
 * the sub-blocks of sps__drm_plan (group, maxmem), renumbered by
 * sps__drm_order_rows if order_rows, and *var = sps__drm_variance of them:
 * the same members, blk, *nblk and *var as those three calls, in O(n): no
 * scratch on a regular matrix (step 1 merges nothing), else one block of
 * at most 3.5n words (about 1.5n touched when few segments merge). work:
 * n + 1 words it may overwrite. */
sps_status sps__drm_plan_counts(sps_context *ctx, const sps_idx *cnt, sps_idx n, sps_idx seg,
                                int group, int order_rows, sps_idx maxmem, sps_idx *members,
                                sps_idx *blk, sps_idx *nblk, double *var, sps_idx *work);
/* The same, with ws_bytes of memory ws (8-byte aligned; anything in it) that
 * the plan takes for its scratch block where that fits, instead of a fresh
 * allocation (whose first touch faults page by page): drm.c lends part of
 * the context's workspace (sps__host_ws). ws = NULL: sps__drm_plan_counts. */
sps_status sps__drm_plan_counts_ws(sps_context *ctx, const sps_idx *cnt, sps_idx n, sps_idx seg,
                                   int group, int order_rows, sps_idx maxmem, sps_idx *members,
                                   sps_idx *blk, sps_idx *nblk, double *var, sps_idx *work,
                                   void *ws, size_t ws_bytes);

#ifdef __cplusplus
}
#endif
#endif
