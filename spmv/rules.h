/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/rules.h: the format rules the analysis needs (HYB's ELL width,
 * DRM's segment height and slot count), kept with the formats.
 *
 * The analysis (core/analyze.c on the host, core/analyze_gpu.cu on the
 * device) gathers the counts; these functions turn counts into a format's
 * decision, so the features and the formats agree by construction. */
#ifndef SPS_SPMV_RULES_H
#define SPS_SPMV_RULES_H

#include "core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The row-segment height of DRM and of the analysis's DRM fill (drm_slots)
 * is SPS_DRM_SEG_ROWS (core/internal.h): rows 32h .. 32h+31 form segment h. */

/* Slots DRM stores for one segment that holds `distinct` distinct diagonals:
 * every diagonal at the full segment height (the last segment is padded). */
static inline int64_t sps__seg_slots(int64_t distinct, sps_idx seg)
{
    return distinct * (int64_t)seg;
}

/* Rows of length >= K, for the HYB width rule: a histogram or a row scan. */
typedef int64_t (*sps_rows_ge_fn)(const void *user, sps_idx K);

/* HYB's ELL width (doc/features.md): the largest K in [0, kmax] such that
 * 3 * rows_ge(K) >= nrows, then lowered while K * nrows > 3 * nnz (never
 * binding with the 1/3 rule). kmax >= the answer: the longest row, or
 * anything at least min(longest row, 3 * nnz / nrows). Bisection: about
 * log2(kmax) calls of rows_ge. */
sps_idx sps__hyb_width_rule(sps_rows_ge_fn rows_ge, const void *user, sps_idx kmax,
                            sps_idx nrows, int64_t nnz);

/* The largest K the rule can return: floor(3 * nnz / nrows), capped at
 * row_max (0 when nrows = 0). A histogram of row lengths clamped at this
 * value gives the rule's answer exactly. */
sps_idx sps__hyb_kmax(sps_idx nrows, int64_t nnz, sps_idx row_max);

#ifdef __cplusplus
}
#endif
#endif /* SPS_SPMV_RULES_H */
