/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/select.c: the two selectors: auto (a rule on the matrix's features) and tune (time every candidate) */
#include "select.h"
#if SPS_HAVE_CUDA
#include "core/gpu.h"
#endif

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* auto's thresholds, in one place. The rule, its reasons and the H100
 * measurements behind it are in doc/spmv.md. */
static const struct auto_rule {
    double drm_max_slots_per_nnz; /* drm when DRM stores at most this many slots per nonzero */
    double dia_max_slots_per_nnz; /* ... and dia instead when DIA stores at most this many */
    sps_idx small_rows;           /* GPU: at most this many rows (and fewer than large_nnz entries):
                                     the one-kernel engine's bound under auto (backend.h) */
    double dia_small_max_slots;   /* ... dia when DIA stores at most this many slots per nonzero:
                                     the one-kernel engine (solvers/engine.c SPS_ONEK_AUTO_MAX rows)
                                     walks a row's CSR entries one dependent load after another,
                                     DIA's diagonals without column indices (H100, the shared
                                     matrices of at most 12,288 rows: dia as fast or faster than
                                     csr-vector up to dw2048's 2.23, Trefethen_2000 2.7x at 1.10;
                                     but at 2.25 the default strategy's chain on dw2048 went from
                                     14 to 233 ms, so 1.5; doc/spmv.md) */
    int64_t dia_small_min_serial; /* ... and where a thread of that engine walks at least this many
                                     CSR entries (sps__onek_serial): below it csr-scalar's walk is
                                     short, and dia's conversion and larger module cost more than
                                     it saves (H100, 2026-11-28, solve_ms medians of 9 and 15, dia
                                     / csr-scalar: poisson2d:63 (20 a thread) 3.19 / 3.02, nos3
                                     (18) 3.35 / 3.39, rdb2048 (12) 9.99 / 9.41, pde2961 (15)
                                     10.27 / 9.65; Trefethen_2000 (44) 5.15 / 15.12) */
    double merge_min_cv;          /* irregular: std/mean of the row lengths at least this */
    double merge_min_max_ratio;   /* ... or the longest row at least this many times the mean */
    sps_idx merge_min_max_row;    /* ... and the longest row at least this long (else too small to matter) */
    sps_idx merge_small_min_max_row; /* below large_nnz, at least this long: merge runs two kernels
                                     per SpMV, so on a launch-bound matrix it pays only where
                                     csr-vector's warp on the longest row walks at least 16
                                     rounds of 32 (H100, GMRES(30), iterate ms csr-vector /
                                     merge: add20 (longest 84) 38-39 / 41-42, PGPgiantcompo
                                     (205) 199-228 / 232-248, memplus (574) 151-167 / 146-176,
                                     circuit_2 (1274) 32-33 / 27-33, bloweya (10001) 203-205 /
                                     57-63; doc/spmv.md) */
    int64_t large_nnz;            /* at least this many entries: bandwidth-bound, not launch-bound */
    double scalar_max_mean;       /* large and regular with at most this mean row length: csr-scalar
                                     (small GPU matrices within the one-kernel engine's bounds
                                     are csr-scalar too, whatever their mean: decide()) */
    const char *irregular_large;  /* large and irregular */
    const char *regular;          /* everything else */
    const char *fallback;         /* when the chosen backend refuses or is not compiled */
    double drm_convert_ns;        /* GPU context: predicted DRM conversion per nonzero (host
                                     conversion measured on the H100 machine: 390 ms for
                                     poisson3d:160's 28.5M nonzeros) */
    double upload_gbps;           /* ... and the rate its arrays upload at (pinned) */
    double drm_convert_dev_ns;    /* the same on the device (the default on a GPU context;
                                     nothing uploaded): measured on the H100, poisson3d:160,
                                     12.4-19.1 ms for 28.5M nonzeros */
    double dia_convert_dev_ms;    /* DIA's device conversion, fixed part (ms) ... */
    double dia_convert_dev_ns;    /* ... and per nonzero: one pass over the CSR already on the
                                     device, no host plan. Measured (convert_ms, H200, medians of
                                     5): poisson3d:160 1.86-1.91 ms for 28.5M nonzeros,
                                     poisson3d:200 2.47-2.52 for 55.8M; H100: poisson3d:40 0.97-1.04
                                     for 0.44M. DRM's rate (about 10x this) made poisson3d:100's dia
                                     pay only after 504 SpMVs on the H200 against the 500 expected,
                                     so auto ran csr-scalar at 1.42x dia's time to solution */
} RULE = {
    .drm_max_slots_per_nnz = 1.3,
    .dia_max_slots_per_nnz = 1.05,
    .small_rows = SPS_ONEK_AUTO_MAX,
    .dia_small_max_slots = 1.5,
    .dia_small_min_serial = 32,
    .merge_min_cv = 1.0,
    .merge_min_max_ratio = 32.0,
    .merge_min_max_row = 64,
    .merge_small_min_max_row = 512,
    .large_nnz = (int64_t)1 << 20,
    .scalar_max_mean = 16.0,
    .irregular_large = "cusparse:alg2",
    .regular = "csr-vector",
    .fallback = SPS_FALLBACK_SPEC,
    .drm_convert_ns = 14.0,
    .upload_gbps = 20.0,
    .drm_convert_dev_ns = 0.55,
    .dia_convert_dev_ms = 1.0,
    .dia_convert_dev_ns = 0.04,
};

/* Deterministic parameterized variants of backends whose default is not
 * (so their table lacks SPS_CAP_DETERMINISTIC): tune adds them to its
 * candidates by name (their convert sets caps_add). */
static const char *const tune_extra[] = {"cusparse:alg2"};

/* Bounded append to a reason string. */
static void appendf(char *buf, size_t len, const char *fmt, ...) SPS_PRINTF(3, 4);
static void appendf(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= len) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* The features auto reads, when the caller has not analyzed A: the row
 * statistics and the DRM slots (SPS_DRM_SEG_ROWS-row segments), exactly as
 * sps_matrix_analyze computes them; the other fields stay 0. */
static sps_status own_features(sps_context *ctx, const sps_csr *A, sps_features *f)
{
    sps_row_stats rs;
    sps__row_stats(A, &rs);
    *f = (sps_features){.rows = A->nrows, .cols = A->ncols, .nnz = A->nnz,
                        .row_min = rs.min, .row_max = rs.max, .empty_rows = rs.empty,
                        .row_mean = rs.mean, .row_std = rs.std};
    if (A->nnz == 0) return SPS_OK; /* no slots: the rule stops before them */
    f->drm_slots = sps__segmented_dia_slots_diags(A, SPS_DRM_SEG_ROWS, &f->diagonals);
    if (f->drm_slots < 0)
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "auto: out of memory for the features");
    f->drm_fill = (double)(f->drm_slots - A->nnz) / (double)f->drm_slots;
    return SPS_OK;
}

/* The features of A auto decides on: the caller's (opts->features, checked
 * against A's shape) or computed here into *buf. */
static sps_status features_for(sps_context *ctx, const sps_matrix *M, const sps_operator_opts *opts,
                               sps_features *buf, const sps_features **f)
{
    const sps_csr *A = &M->A;
    *f = opts->features;
    if (!*f) {
        *f = buf;
        /* on a GPU context the device analysis is the cheaper way to them
         * (and it uploads the matrix, which the build needs anyway) */
        if (ctx->gpu) return sps_matrix_analyze(ctx, M, buf);
        return own_features(ctx, A, buf);
    }
    if ((*f)->rows != A->nrows || (*f)->cols != A->ncols || (*f)->nnz != A->nnz)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "auto: opts->features describe a %d x %d matrix with %lld entries, not "
                        "this %d x %d one with %d", (*f)->rows, (*f)->cols, (long long)(*f)->nnz,
                        A->nrows, A->ncols, A->nnz);
    return SPS_OK;
}

/* ---- auto's cost model (GPU contexts) ------------------------------------
 * Time per SpMV is predicted as the format's bytes model over the device's
 * copy bandwidth (copy_gbps); the build cost as conversion
 * per nonzero plus the format's bytes over the upload rate, against the
 * reference csr-vector, which builds by a device-to-device copy of the CSR. */

/* The copy bandwidth auto predicts with: the context's measured one when
 * known; else, on a GPU, SPS_COPY_OF_PEAK of the memory's peak (the copy
 * kernel's measured 2920 GB/s against the H100's 3352), which costs nothing, where
 * measuring costs about 2 ms of the first solve's selection (8% of
 * poisson3d:100's time to solution); else measured (64 MiB copies). */
#define SPS_COPY_OF_PEAK 0.87
static double copy_gbps(sps_context *ctx)
{
    if (ctx->copy_gbps > 0) return ctx->copy_gbps;
#if SPS_HAVE_CUDA
    const double peak = ctx->gpu ? sps__gpu_peak_gbps(ctx) : 0.0;
    if (peak > 0) return SPS_COPY_OF_PEAK * peak;
#endif
    {
        double g = 0;
        if (sps_copy_bandwidth(ctx, (size_t)64 << 20, &g) != SPS_OK || !(g > 0)) g = 1000.0;
        ctx->copy_gbps = g;
    }
    return ctx->copy_gbps;
}

static double csr_bytes(const sps_features *f)
{
    return 4.0 * (f->rows + 1.0) + 12.0 * (double)f->nnz + 8.0 * f->cols + 8.0 * f->rows;
}

/* The reference's build: the CSR copied device to device (read + write). */
static double ref_build_ms(sps_context *ctx, const sps_features *f)
{
    return 2.0 * (4.0 * (f->rows + 1.0) + 12.0 * (double)f->nnz) / (copy_gbps(ctx) * 1e6);
}

/* DRM's bytes per SpMV from the features (its model in drm.c, with one
 * sub-block per segment). */
static double drm_bytes(const sps_features *f)
{
    double segs = ceil((double)f->rows / SPS_DRM_SEG_ROWS), diags = (double)f->drm_slots / SPS_DRM_SEG_ROWS;
    return 8.0 * (double)f->drm_slots + 8.0 * f->cols + 8.0 * f->rows + 4.0 * (3.0 * segs + 2 + diags);
}

/* Predicted extra build cost (ms) and saving per SpMV (us) of drm, or of dia
 * (dia = 1): where decide() picks dia, DIA stores at most 1.05 slots per
 * nonzero, so its bytes are DRM's; its device conversion is one pass without
 * DRM's host plan and has its own rate. */
static void diag_predict(sps_context *ctx, const sps_features *f, int dia, double *extra_ms,
                         double *saved_us)
{
    double bw = copy_gbps(ctx) * 1e3; /* bytes per us */
    if (sps__convert_on_device(ctx, f->nnz)) {
        double build = dia ? RULE.dia_convert_dev_ms + RULE.dia_convert_dev_ns * 1e-6 * (double)f->nnz
                           : RULE.drm_convert_dev_ns * 1e-6 * (double)f->nnz;
        *extra_ms = build - ref_build_ms(ctx, f);
    } else {
        double up = (8.0 + 4.0 / SPS_DRM_SEG_ROWS) * (double)f->drm_slots;
        *extra_ms = RULE.drm_convert_ns * 1e-6 * (double)f->nnz + up / (RULE.upload_gbps * 1e6) -
                    ref_build_ms(ctx, f);
    }
    *saved_us = (csr_bytes(f) - drm_bytes(f)) / bw;
}

/* The payoff figures of the built operator (GPU contexts). */
static void fill_payoff(sps_context *ctx, const sps_features *f, const sps_operator_opts *opts,
                        double predicted_ms, sps_operator_info *in)
{
    double bw = copy_gbps(ctx) * 1e3;
    in->expected_spmvs = opts->expected_spmvs;
    in->ref_us = csr_bytes(f) / bw;
    in->spmv_us = in->bytes_per_spmv / bw;
    in->predicted_ms = predicted_ms;
    in->extra_ms = in->convert_ms + in->upload_ms - ref_build_ms(ctx, f);
    sps__payoff_derive(in);
    if (!(in->caps & SPS_CAP_NEEDS_CONVERT)) {
        snprintf(in->payoff, sizeof in->payoff, "%s: no conversion (a device copy of the CSR), "
                 "%.1f us per SpMV predicted", in->backend, in->spmv_us);
        return;
    }
    char pays[48];
    sps__payoff_pays(in, pays, sizeof pays);
    snprintf(in->payoff, sizeof in->payoff,
             "%s: conversion %.1f ms = %.0f SpMVs, saves %.1f us per SpMV, %s (predicted %.1f ms; "
             "%lld expected)", in->backend, in->extra_ms, in->convert_spmvs, in->saved_us, pays,
             predicted_ms, (long long)opts->expected_spmvs);
}

/* The auto rule on the features: returns the backend spec and writes the
 * deciding features. allow_drm = 0: the rule as if DRM did not pay; gpu:
 * a GPU context (the small-matrix dia rule). */
static const char *decide(const sps_features *f, int allow_drm, int gpu, char *why, size_t len)
{
    if (f->nnz == 0) {
        snprintf(why, len, "auto: %s: the matrix has no entries", RULE.regular);
        return RULE.regular;
    }
    const sps_idx seg = SPS_DRM_SEG_ROWS;
    int64_t slots = f->drm_slots;
    double per_nnz = (double)slots / f->nnz;
    int64_t segs = ((int64_t)f->rows + seg - 1) / seg;
    /* DIA's slots: every diagonal the length of the rows */
    double dia_per_nnz = (double)f->diagonals * (double)f->rows / (double)f->nnz;
    const int64_t serial = sps__onek_serial(f->rows, f->row_max);
    if (gpu && f->rows <= RULE.small_rows && f->nnz < RULE.large_nnz && f->diagonals > 0 &&
        dia_per_nnz <= RULE.dia_small_max_slots && serial >= RULE.dia_small_min_serial) {
        snprintf(why, len,
                 "auto: dia: %d rows (<= %d), %d diagonals, DIA stores %.2f slots per nonzero "
                 "(<= %.2f), %lld CSR entries a thread (>= %lld): the one-kernel engine's SpMV "
                 "reads no column index",
                 f->rows, RULE.small_rows, f->diagonals, dia_per_nnz, RULE.dia_small_max_slots,
                 (long long)serial, (long long)RULE.dia_small_min_serial);
        return "dia";
    }
    /* Within the one-kernel engine's bounds (backend.h SPS_ONEK_AUTO_MAX,
     * SPS_ONEK_AUTO_SERIAL) that engine walks the rows itself in csr-scalar's
     * order (spmv/dev_rows.cuh), so the CSR backend's own kernel serves only
     * the SpMVs outside it (the warm-up, a restart's residual), and
     * csr-scalar's module loads fastest (H100, a fresh context: 0.07 ms
     * against csr-vector's 0.23). solve_ms, medians of 7 (doc/spmv.md):
     * lund_a (CG) 3.63 on csr-vector / 3.48 on csr-scalar, Si2 (GMRES, mean
     * row 23) 9.23 / 8.63. The serial bound keeps the rows short: 128
     * entries at most up to 1024 rows, 10 at 12,288 (so at most 2^17
     * entries, far below large_nnz). */
    if (gpu && f->rows <= SPS_ONEK_AUTO_MAX && serial <= SPS_ONEK_AUTO_SERIAL) {
        snprintf(why, len,
                 "auto: csr-scalar: %d rows (<= %d) of at most %d entries: within the one-kernel "
                 "engine's bounds, which walks the rows in csr-scalar's order; csr-scalar's "
                 "kernels load fastest",
                 f->rows, SPS_ONEK_AUTO_MAX, f->row_max);
        return "csr-scalar";
    }
    if (allow_drm && per_nnz <= RULE.drm_max_slots_per_nnz && f->diagonals > 0 &&
        dia_per_nnz <= RULE.dia_max_slots_per_nnz) {
        snprintf(why, len,
                 "auto: dia: %d diagonals, DIA stores %.2f slots per nonzero (<= %.2f; DRM %.2f): "
                 "the same bytes per SpMV without DRM's segment plan",
                 f->diagonals, dia_per_nnz, RULE.dia_max_slots_per_nnz, per_nnz);
        return "dia";
    }
    if (allow_drm && per_nnz <= RULE.drm_max_slots_per_nnz) {
        snprintf(why, len,
                 "auto: drm: %.1f diagonals per %d-row segment on average, DRM stores %.2f slots "
                 "per nonzero (<= %.2f)",
                 (double)slots / seg / segs, seg, per_nnz, RULE.drm_max_slots_per_nnz);
        return "drm";
    }
    double cv = f->row_mean > 0 ? f->row_std / f->row_mean : 0.0;
    double ratio = f->row_mean > 0 ? f->row_max / f->row_mean : 0.0;
    int large = f->nnz >= RULE.large_nnz;
    sps_idx min_long = large ? RULE.merge_min_max_row : RULE.merge_small_min_max_row;
    if ((cv >= RULE.merge_min_cv || ratio >= RULE.merge_min_max_ratio) && f->row_max >= min_long) {
        const char *pick = large ? RULE.irregular_large : "merge";
        snprintf(why, len,
                 "auto: %s: irregular row lengths (std/mean %.2f, threshold %.2f; longest row "
                 "%d = %.0fx the mean %.1f, threshold %.0fx; at least %d long)%s",
                 pick, cv, RULE.merge_min_cv, f->row_max, ratio, f->row_mean,
                 RULE.merge_min_max_ratio, min_long,
                 large ? ", and large enough to be bandwidth-bound" : "");
        return pick;
    }
    if (large && f->row_mean <= RULE.scalar_max_mean) {
        snprintf(why, len,
                 "auto: csr-scalar: large (%lld entries) with short regular rows (mean %.1f, "
                 "std/mean %.2f): one thread per row streams them best",
                 (long long)f->nnz, f->row_mean, cv);
        appendf(why, len, "; DRM would store %.2f slots per nonzero", per_nnz);
        return "csr-scalar";
    }
    if (cv >= RULE.merge_min_cv || ratio >= RULE.merge_min_max_ratio)
        snprintf(why, len,
                 "auto: %s: irregular row lengths (std/mean %.2f, longest row %d = %.0fx the mean "
                 "%.1f) but the longest row is under %d: a warp walks it in %d round%s of 32%s",
                 RULE.regular, cv, f->row_max, ratio, f->row_mean, min_long, (f->row_max + 31) / 32,
                 f->row_max > 32 ? "s" : "", large ? "" : ", cheaper than merge's second kernel");
    else
        snprintf(why, len, "auto: %s: regular rows (mean %.1f, std/mean %.2f, longest %d)",
                 RULE.regular, f->row_mean, cv, f->row_max);
    appendf(why, len, "; DRM would store %.2f slots per nonzero", per_nnz);
    return RULE.regular;
}

static sps_status auto_select(sps_context *ctx, const sps_matrix *M, const sps_operator_opts *opts,
                              sps_operator **op)
{
    double t0 = sps__now_ms();
    sps_features buf;
    const sps_features *f;
    const sps_csr *A = &M->A;
    sps_status st = features_for(ctx, M, opts, &buf, &f);
    if (st != SPS_OK) return st;
    char why[512];
    const int gpu = ctx->gpu != NULL;
    const char *spec = decide(f, 1, gpu, why, sizeof why);
    double predicted = 0.0;
    int weighed = 0;
    /* does the conversion pay within the solve? (dia and drm: diag_predict) */
    int diagonal = strcmp(spec, "drm") == 0 || strcmp(spec, "dia") == 0;
    if (ctx->gpu && strcmp(spec, "dia") == 0 && f->nnz < RULE.large_nnz && f->rows <= RULE.small_rows) {
        /* the small-matrix dia rule's pick keeps dia without weighing: the
         * one-kernel engine's SpMV reads no column index where its threads
         * would walk long CSR rows (H100, Trefethen_2000, CG: iterate 2.6 ms
         * on dia against 12.8 on csr-scalar). Above small_rows a stencil of
         * fewer than large_nnz entries is launch-bound like any other
         * (below: not weighed; poisson3d:40, CG, solve_ms: dia 8.34, of which
         * the conversion 1.04, csr-vector 7.17, the same iterate) */
        appendf(why, sizeof why, "; kept without weighing: %lld entries (< %lld)", (long long)f->nnz,
                (long long)RULE.large_nnz);
    } else if (ctx->gpu && diagonal && f->nnz < RULE.large_nnz) {
        /* launch-bound: the bytes DRM saves are a fraction of a launch's
         * latency, so its conversion cannot pay; not weighed */
        char no[160];
        snprintf(no, sizeof no, "; %s not weighed: %lld entries (< %lld) keep the SpMV launch-bound",
                 spec, (long long)f->nnz, (long long)RULE.large_nnz);
        spec = decide(f, 0, gpu, why, sizeof why);
        appendf(why, sizeof why, "%s", no);
    } else if (ctx->gpu && diagonal) {
        weighed = 1;
        double saved;
        diag_predict(ctx, f, strcmp(spec, "dia") == 0, &predicted, &saved);
        double be = sps_break_even_spmvs(predicted, saved);
        if (be < 0 || be > (double)opts->expected_spmvs) {
            char no[256];
            snprintf(no, sizeof no, "; %s would save %.1f us per SpMV, but its conversion "
                     "(predicted %.1f ms) pays only after %.0f SpMVs, more than the %lld expected",
                     spec, saved, predicted, be < 0 ? INFINITY : be, (long long)opts->expected_spmvs);
            spec = decide(f, 0, gpu, why, sizeof why);
            appendf(why, sizeof why, "%s", no);
            predicted = 0.0;
        }
    }
    st = sps__operator_build_spec(ctx, A, spec, opts, op);
    if (st == SPS_OK && !((*op)->info.caps & SPS_CAP_DETERMINISTIC)) { /* never by design */
        sps_operator_destroy(*op);
        *op = NULL;
        st = sps__err(ctx, SPS_ERR_UNSUPPORTED, "%s is not deterministic", spec);
    }
    if ((st == SPS_ERR_UNSUPPORTED || st == SPS_ERR_NOT_COMPILED) &&
        strcmp(spec, RULE.fallback) != 0) {
        appendf(why, sizeof why, "; %s refused (%s): fell back to %s", spec, sps_last_error(ctx),
                RULE.fallback);
        st = sps__operator_build_spec(ctx, A, RULE.fallback, opts, op);
    }
    if (st != SPS_OK) return st;
    sps_operator_info *in = &(*op)->info;
    sps__strlcpy(in->reason, why, sizeof in->reason);
    /* The payoff figures need a copy bandwidth: a weighed dia or drm decision
     * has its estimate (copy_gbps); otherwise the figures are filled when a
     * measured bandwidth is known already and left empty (payoff "") for
     * sps_operator_measure_payoff after the solve, so that a small matrix's
     * time to solution does not carry the measurement (about 2 ms). */
    if (ctx->gpu && (weighed || ctx->copy_gbps > 0)) fill_payoff(ctx, f, opts, predicted, in);
    /* choosing: the features, the rule and any refused build; the final
     * build is reported as convert_ms and upload_ms */
    in->select_ms = sps__now_ms() - t0 - in->convert_ms - in->upload_ms;
    if (in->select_ms < 0) in->select_ms = 0;
    return SPS_OK;
}

/* Candidate i of tune, or NULL past the end: the fallback (csr-vector, the
 * baseline) first, then the other deterministic backends but the benchmark
 * rows (bench_only), then tune_extra. */
static const char *candidate(int i)
{
    if (i == 0) return RULE.fallback;
    int k = 1;
    for (int b = 0; b < sps__backend_count(); b++) {
        const sps_backend *be = sps__backend_at(b);
        if (!(be->caps & SPS_CAP_DETERMINISTIC) || be->bench_only ||
            strcmp(be->name, RULE.fallback) == 0)
            continue;
        if (k++ == i) return be->name;
    }
    int e = i - k;
    return e < (int)(sizeof tune_extra / sizeof *tune_extra) ? tune_extra[e] : NULL;
}

static sps_status tune_select(sps_context *ctx, const sps_csr *A, const sps_operator_opts *opts,
                              sps_operator **out)
{
    double t0 = sps__now_ms();
    int reps = opts->tune_reps > 0 ? opts->tune_reps : 20;
    char why[512];
    snprintf(why, sizeof why, "tune (%d reps, pay-off within %lld SpMVs):", reps,
             (long long)opts->expected_spmvs);

    sps_operator *best = NULL;
    sps_timing t;
    sps_status st = sps__operator_build_spec(ctx, A, RULE.fallback, opts, &best);
    if (st == SPS_OK) st = sps_operator_time(best, reps, 0, &t);
    if (st != SPS_OK) {
        sps_operator_destroy(best);
        return st;
    }
    const double base_us = t.median_us;
    const double base_ms = best->info.convert_ms + best->info.upload_ms;
    double best_us = base_us, best_be = 0;
    appendf(why, sizeof why, " %s %.2f us", RULE.fallback, base_us);

    for (int i = 1; candidate(i); i++) {
        const char *spec = candidate(i);
        sps_operator *op = NULL;
        st = sps__operator_build_spec(ctx, A, spec, opts, &op);
        if (st == SPS_OK) st = sps_operator_time(op, reps, 0, &t);
        if (st != SPS_OK) {
            appendf(why, sizeof why, ", %s %s", spec, sps_strerror(st));
            sps_operator_destroy(op);
            continue;
        }
        /* break-even: the extra conversion cost over the time saved per SpMV */
        double saved_us = base_us - t.median_us;
        double extra_ms = op->info.convert_ms + op->info.upload_ms - base_ms;
        double be = sps_break_even_spmvs(extra_ms, saved_us);
        int pays = be >= 0 && be <= (double)opts->expected_spmvs;
        appendf(why, sizeof why, ", %s %.2f us", spec, t.median_us);
        if (saved_us > 0) appendf(why, sizeof why, " (break-even %.0f)", be);
        if (pays && t.median_us < best_us) {
            sps_operator_destroy(best);
            best = op;
            best_us = t.median_us;
            best_be = be;
        } else {
            sps_operator_destroy(op);
        }
    }
    if (best_us < base_us)
        appendf(why, sizeof why, "; chose %s: %.2fx faster than %s, pays off after %.0f SpMVs",
                best->info.backend, base_us / best_us, RULE.fallback, best_be);
    else
        appendf(why, sizeof why, "; chose %s", best->info.backend);
    sps__strlcpy(best->info.reason, why, sizeof best->info.reason);
    best->info.select_ms = sps__now_ms() - t0; /* the whole tune, winner's build included */
    *out = best;
    return SPS_OK;
}

sps_status sps__select(sps_context *ctx, const sps_matrix *A, int tune,
                       const sps_operator_opts *opts, sps_operator **op)
{
    *op = NULL;
    return tune ? tune_select(ctx, &A->A, opts, op) : auto_select(ctx, A, opts, op);
}
