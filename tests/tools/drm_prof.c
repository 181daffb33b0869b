/* SPDX-License-Identifier: MIT */
/* spsolve/tests/tools/drm_prof.c: where DRM's device conversion spends its time
 *
 * usage: drm_prof [SPEC|FILE] [--reps N] [--fresh]
 * On a GPU context: uploads the CSR once, then times (wall clock around
 * synchronized calls, median of N, default 7) the conversion's pieces as
 * spmv/formats/drm.c runs them (the device scan of the counts with the map's
 * allocation, the host plan with the slots' dnum and inv, the device scatter
 * with its upload and allocations; the block and the plan's scratch in the
 * context's host workspace as drm.c has them, or with --fresh in a fresh
 * malloc each time, as before: the page faults of a fresh block show in the
 * plan's time, and their count is printed), a device allocation of the value
 * array's size, the whole sps_operator_create("drm"), one csr-vector SpMV
 * (the unit), and the scatter's first part alone (the block's
 * allocation and upload; the scatter less it and the val allocation is
 * about the kernel).
 * Exits 77 without a GPU. */
#include "spsolve.h"
#include "core/internal.h"
#include "gpu_tool.h"
#include "tool_stats.h"
#include "core/gpu.h"
#include "spmv/formats/diag_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#if SPS_HAVE_CUDA

#define NPH 7
static const char *names[NPH] = {"scan (device)", "plan (host)", "scatter (device)",
                                 "dmalloc val+map", "operator_create drm", "csr-vector SpMV",
                                 "block dmalloc+upload"};

/* Minor page faults of the process so far (first touches of fresh pages). */
static long minor_faults(void)
{
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : 0;
}

static int fail(sps_context *ctx, const char *what) { return tool_fail("drm_prof", ctx, what); }

int main(int argc, char **argv)
{
    const char *spec = "poisson3d:160";
    int reps = 7, fresh = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--fresh") == 0) fresh = 1;
        else spec = argv[i];
    }
    if (reps < 1 || reps > 100) reps = 7;
    sps_context *ctx = NULL;
    sps_matrix *A = NULL;
    int rc = tool_gpu_matrix("drm_prof", spec, &ctx, &A);
    if (rc) return rc;
    const sps_dcsr *d = sps__csr_device_copy(ctx, &A->A);
    if (!d) return fail(ctx, "device copy");
    double *ms = calloc((size_t)NPH * reps, sizeof *ms);
    long faults[100] = {0};
    const sps_idx S = (d->nrows + 31) / 32;
    for (int r = 0; r < reps; r++) {
        /* the block of sps_fmt_drm (dnum, index, blo, counts then inv), as drm.c builds it */
        const size_t bb = SPS_DRM_BLK_WORDS(S) * sizeof(sps_idx);
        const size_t ws_bytes = (3 * (size_t)S + (size_t)S / 2 + 8) * sizeof(sps_idx);
        sps_idx *own = fresh ? NULL : sps__host_ws(ctx, bb + ws_bytes), nblk = 0;
        void *ws = own ? (char *)own + bb : NULL;
        sps_idx *blk = own ? own : malloc(bb);
        sps_idx *dnum = blk, *index = blk + SPS_DRM_BLK_INDEX(S), *blo = blk + SPS_DRM_BLK_BLO(S);
        sps_idx *cnt = blk + SPS_DRM_BLK_AUX(S);
        sps_idx *map = NULL, *dblk = NULL;
        double t0 = sps__now_ms();
        if (sps__drm_scan_dev(ctx, d, cnt, &map) != SPS_OK) return fail(ctx, "scan");
        double t1 = sps__now_ms(), var = 0;
        const long f0 = minor_faults();
        sps_fmt_drm f = {0};
        f.nslot = S;
        f.seg = 32;
        f.dnum = dnum;
        f.index = index;
        f.blo = blo;
        if (sps__drm_plan_slots(ctx, &f, cnt, 1, 1, &var, ws, ws_bytes) != SPS_OK) return fail(ctx, "plan");
        nblk = f.nblk;
        double t2 = sps__now_ms();
        faults[r] = minor_faults() - f0;
        double *val = NULL;
        if (sps__drm_scatter_dev(ctx, d, blk, S, nblk, map, &dblk, &val) != SPS_OK ||
            sps__gpu_sync(ctx) != SPS_OK)
            return fail(ctx, "scatter");
        double t3 = sps__now_ms();
        size_t vb = (size_t)dnum[S] * 32 * sizeof(double), mb = (size_t)d->nnz * sizeof(sps_idx);
        sps__dfree(val);
        sps__dfree(map);
        sps__dfree(dblk);
        double t4 = sps__now_ms();
        void *p1 = NULL, *p2 = NULL;
        if (sps__dmalloc(ctx, &p1, vb) != SPS_OK || sps__dmalloc(ctx, &p2, mb) != SPS_OK) return fail(ctx, "dmalloc");
        double t5 = sps__now_ms();
        sps__dfree(p1);
        sps__dfree(p2);
        /* the scatter's first part alone: the block's allocation and upload */
        size_t ub = (SPS_DRM_BLK_BLO(S) + (size_t)nblk + 1) * sizeof(sps_idx);
        void *p3 = NULL;
        double t8 = sps__now_ms();
        if (sps__dmalloc(ctx, &p3, (SPS_DRM_BLK_WORDS(S) + (size_t)dnum[S]) * sizeof(sps_idx)) != SPS_OK ||
            sps__h2d_pinned(ctx, 1, &p3, (const void *const *)&blk, &ub, NULL, 0) != SPS_OK)
            return fail(ctx, "block upload");
        double t9 = sps__now_ms();
        sps__dfree(p3);
        sps_operator *op = NULL;
        double t6 = sps__now_ms();
        if (sps_operator_create(ctx, A, "drm", NULL, &op) != SPS_OK || sps__gpu_sync(ctx) != SPS_OK)
            return fail(ctx, "drm operator");
        double t7 = sps__now_ms();
        sps_operator_destroy(op);
        ms[0 * reps + r] = t1 - t0;
        ms[1 * reps + r] = t2 - t1;
        ms[2 * reps + r] = t3 - t2;
        ms[3 * reps + r] = t5 - t4;
        ms[4 * reps + r] = t7 - t6;
        ms[6 * reps + r] = t9 - t8;
        if (!own) free(blk);
    }
    sps_operator *cv = NULL;
    sps_timing t;
    if (sps_operator_create(ctx, A, "csr-vector", NULL, &cv) != SPS_OK || sps_operator_time(cv, 20, 0, &t) != SPS_OK)
        return fail(ctx, "csr-vector");
    sps_operator_destroy(cv);
    for (int r = 0; r < reps; r++) ms[5 * reps + r] = t.median_us * 1e-3;
    printf("%s: %d rows, %d nnz; medians of %d (ms, and csr-vector SpMVs); block %s\n", spec, d->nrows,
           d->nnz, reps, fresh ? "fresh (--fresh)" : "in the context's workspace");
    printf("  plan's page faults per rep:");
    for (int r = 0; r < reps; r++) printf(" %ld", faults[r]);
    printf("\n");
    for (int k = 0; k < NPH; k++) {
        qsort(ms + k * reps, (size_t)reps, sizeof *ms, tool_cmp_double);
        double m = ms[k * reps + reps / 2];
        printf("  %-22s %8.3f ms  %6.1f SpMVs  (min %.3f, max %.3f)\n", names[k], m, m / (t.median_us * 1e-3),
               ms[k * reps], ms[k * reps + reps - 1]);
    }
    free(ms);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    return 0;
}
#else
int main(void)
{
    fprintf(stderr, "drm_prof: built without CUDA\n");
    return 77;
}
#endif
