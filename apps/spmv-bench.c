/* SPDX-License-Identifier: MIT */
/* spsolve/apps/spmv-bench.c: SpMV backends side by side on one matrix (uses only spsolve.h) */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "spsolve.h"

static const char *usage_text =
    "usage: spmv-bench (-A FILE | --gen SPEC) [options]\n"
    "\n"
    "Times every SpMV backend on one matrix: conversion, upload, median time per SpMV,\n"
    "GFLOP/s, effective bandwidth on the format's bytes model, its fraction of the copy\n"
    "bandwidth measured in the same process, the ratio to the faster cuSPARSE algorithm,\n"
    "the break-even SpMV count against csr-vector, and the error against the host CSR\n"
    "reference.\n"
    "\n"
    "  -A FILE               Matrix Market file (.mtx or .mtx.gz)\n"
    "  --gen SPEC            generated matrix (see spsolve --help)\n"
    "  --spmv LIST|all       comma-separated backends, parameters allowed (drm:rows=256,\n"
    "                        unroll=8,cusparse); default all: csr-scalar, csr-vector,\n"
    "                        merge, drm, drm:rows=0, drm:nomerge,rows=0, dia, hyb, cusparse,\n"
    "                        cusparse:alg2, the benchmark rows ell, coo, bsr, lightspmv,\n"
    "                        and auto)\n"
    "  --precision P         double (default), single or both\n"
    "  --reps N              timed SpMVs per backend after a warm-up (default 500)\n"
    "  --nx N                distinct x vectors to rotate among (default 8)\n"
    "  --device D            gpu (default) or cpu (times and checks apply_host)\n"
    "  --nrhs K              block products of K right-hand sides instead (doc/spmm.md):\n"
    "                        per backend, the native block kernel, the row-panel kernel\n"
    "                        (panel, CSR family), cusparseSpMM and K\n"
    "                        single products (columns), median time per block, per\n"
    "                        right-hand side, GFLOP/s, bytes, speedups (double only)\n"
    "  --check               exit 1 if any backend's error exceeds 1e-12 (double) or 1e-5\n"
    "                        (single), or a deterministic backend's re-run differs\n"
    "  --csv FILE            write the table as CSV ('-': stdout)\n"
    "  --json FILE           write the table as JSON ('-': stdout)\n"
    "  --label NAME          matrix name in the outputs (default: file name or spec)\n"
    "  -q, --quiet           no table on stdout (files and exit status only)\n"
    "  -h, --help            this text\n"
    "  (--opt value and --opt=value are the same)\n"
    "\n"
    "Exit status: 0 ok, 1 --check failed, 2 bad usage or input, 3 runtime failure.\n";

static const char *all_backends[] = {"csr-scalar", "csr-vector", "merge", "drm", "drm:rows=0",
                                     "drm:nomerge,rows=0", "dia", "hyb", "cusparse",
                                     "cusparse:alg2", "ell", "coo", "bsr", "lightspmv", "auto"};

typedef struct row {
    char spmv[48];
    char built[48];
    int single;
    int ok;              /* built and timed */
    char note[600];      /* refusal reason, or auto's choice */
    double convert_ms, upload_ms, select_ms;
    double device_mb;
    double med_us, min_us, max_us;
    double bytes;        /* moved per SpMV (the format's bytes model) */
    double gflops, gbs, frac_bw;
    double vs_cusparse;  /* t(faster cusparse) / t(this) */
    double breakeven;    /* vs csr-vector; -1 never; 0 immediately */
    double err;
    int repeatable, deterministic;
    double fill, var;
    long long blocks;
} row;

static void die(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "spmv-bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(code);
}

/* Does t begin with a backend's name (followed by ':' or the end)? */
static int is_backend_name(const char *t)
{
    const char *name;
    for (int i = 0; sps_spmv_backend(i, &name, NULL, NULL) == SPS_OK; i++) {
        size_t l = strlen(name);
        if (strncmp(t, name, l) == 0 && (t[l] == 0 || t[l] == ':')) return 1;
    }
    return 0;
}

static void num(FILE *f, double v)
{
    if (isfinite(v)) fprintf(f, "%.6g", v);
    else fprintf(f, "null");
}

typedef struct bench {
    const char *A_path, *gen, *list, *prec, *device, *csv, *json, *label;
    int reps, nx, check, quiet;
    int nrhs;            /* --nrhs K: block products (0: off) */
    int want_d, want_s;
    const char *names[64];
    int nb;
    char *listcopy;
    sps_context *ctx;
    sps_matrix *A;
    sps_features ft;
    double bw;
    row *rows;
    int nrows, failed;
} bench;

/* --opt=value as --opt value: argv with each such word split in two (at the
 * first '=', for the options that take a value). */
/* split_eq's argv, reachable to the end of the program (not static, so that
 * the store is kept: a leak checker sees it as in use, which it is). */
char **spmv_bench_argv;

static char **split_eq(int argc, char **argv, int *nargc)
{
    static const char *const valued[] = {"--gen", "--spmv", "--precision", "--device", "--csv",
                                         "--json", "--label", "--reps", "--nx", "--nrhs"};
    char **out = spmv_bench_argv = calloc(2 * (size_t)argc + 1, sizeof *out);
    if (!out) die(3, "out of memory");
    int n = 0;
    for (int i = 0; i < argc; i++) {
        const char *eq = i > 0 && !strncmp(argv[i], "--", 2) ? strchr(argv[i], '=') : NULL;
        size_t len = eq ? (size_t)(eq - argv[i]) : 0;
        int split = 0;
        for (size_t k = 0; eq && k < sizeof valued / sizeof *valued; k++)
            split |= strlen(valued[k]) == len && !strncmp(argv[i], valued[k], len);
        if (eq && !split) die(2, "unknown option '%s' (see --help)", argv[i]);
        if (!split) {
            out[n++] = argv[i];
            continue;
        }
        char *name = malloc(len + 1);
        if (!name) die(3, "out of memory");
        memcpy(name, argv[i], len);
        name[len] = 0;
        out[n++] = name;
        out[n++] = (char *)eq + 1;
    }
    *nargc = n;
    return out;
}

static void parse_args(int argc, char **argv, bench *B)
{
    argv = split_eq(argc, argv, &argc);
    B->list = "all", B->prec = "double", B->device = "gpu";
    B->reps = 500, B->nx = 8;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die(2, "%s needs a value", a), (char *)NULL))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (!strcmp(a, "-A")) B->A_path = NEXT();
        else if (!strcmp(a, "--gen")) B->gen = NEXT();
        else if (!strcmp(a, "--spmv")) B->list = NEXT();
        else if (!strcmp(a, "--precision")) B->prec = NEXT();
        else if (!strcmp(a, "--device")) B->device = NEXT();
        else if (!strcmp(a, "--csv")) B->csv = NEXT();
        else if (!strcmp(a, "--json")) B->json = NEXT();
        else if (!strcmp(a, "--label")) B->label = NEXT();
        else if (!strcmp(a, "--reps")) B->reps = atoi(NEXT());
        else if (!strcmp(a, "--nx")) B->nx = atoi(NEXT());
        else if (!strcmp(a, "--nrhs")) B->nrhs = atoi(NEXT());
        else if (!strcmp(a, "--check")) B->check = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) B->quiet = 1;
        else die(2, "unknown option '%s' (see --help)", a);
#undef NEXT
    }
}

static void validate_args(bench *B)
{
    if (!B->A_path == !B->gen) die(2, "give exactly one of -A FILE and --gen SPEC (see --help)");
    if (B->reps < 1 || B->reps > 10000000) die(2, "--reps must be between 1 and 10^7");
    if (B->nx < 1 || B->nx > 64) die(2, "--nx must be between 1 and 64");
    if (B->nrhs < 0 || B->nrhs > 1024) die(2, "--nrhs must be between 1 and 1024");
    B->want_d = !strcmp(B->prec, "double") || !strcmp(B->prec, "both");
    B->want_s = !strcmp(B->prec, "single") || !strcmp(B->prec, "both");
    if (!B->want_d && !B->want_s) die(2, "--precision must be double, single or both");
    if (strcmp(B->device, "gpu") && strcmp(B->device, "cpu")) die(2, "--device must be gpu or cpu");
    if (B->want_s && !strcmp(B->device, "cpu")) die(2, "single precision needs --device gpu");
    const char *paths[2] = {B->csv, B->json};
    for (int i = 0; i < 2; i++) {
        char why[4500];
        if (paths[i] && app_out_check(paths[i], why, sizeof why) != 0)
            die(2, "%s: %s", i ? "--json" : "--csv", why);
    }
}

/* The backends to run: every one, or --spmv's list. Commas separate
 * backends and also a backend's parameters ("drm:rows=256,unroll=8"): a
 * token starts a new entry only if it begins with a backend's name. */
static void backend_list(bench *B)
{
    if (!strcmp(B->list, "all")) {
        for (size_t i = 0; i < sizeof all_backends / sizeof *all_backends; i++)
            B->names[B->nb++] = all_backends[i];
    } else {
        B->listcopy = strdup(B->list);
        if (!B->listcopy) die(3, "out of memory");
        char *save = NULL;
        for (char *t = strtok_r(B->listcopy, ",", &save); t && B->nb < 64; t = strtok_r(NULL, ",", &save)) {
            if (B->nb > 0 && !is_backend_name(t)) {
                t[-1] = ','; /* glue it back onto the previous entry's parameters */
                continue;
            }
            B->names[B->nb++] = t;
        }
    }
    if (B->nb == 0) die(2, "--spmv: empty list");
}

/* Context, matrix, features, copy bandwidth. */
static void read_input(bench *B)
{
    if (sps_context_create(&B->ctx, !strcmp(B->device, "gpu") ? 0 : SPS_DEVICE_HOST) != SPS_OK)
        die(3, "%s (use --device cpu to check the host references)", sps_last_error(NULL));
    sps_status st = B->A_path ? sps_matrix_read(B->ctx, B->A_path, &B->A)
                              : sps_matrix_generate(B->ctx, B->gen, &B->A);
    if (st != SPS_OK) die(st == SPS_ERR_NO_MEMORY ? 3 : 2, "%s", sps_last_error(B->ctx));
    if (!B->label) B->label = B->A_path ? app_base_name(B->A_path) : B->gen;
    if (sps_matrix_analyze(B->ctx, B->A, &B->ft) != SPS_OK) die(3, "%s", sps_last_error(B->ctx));
    if (sps_copy_bandwidth(B->ctx, 0, &B->bw) != SPS_OK) die(3, "copy bandwidth: %s", sps_last_error(B->ctx));
}

static void print_header(const bench *B)
{
    const sps_features *ft = &B->ft;
    printf("spmv-bench %s on %s\n", sps_version(), sps_context_device_name(B->ctx));
    printf("matrix %s: %d x %d, %lld nnz, rows %d..%d (mean %.1f), %d diagonals, DRM fill %.1f%%\n",
           B->label, ft->rows, ft->cols, (long long)ft->nnz, ft->row_min, ft->row_max, ft->row_mean,
           ft->diagonals, 100 * ft->drm_fill);
    printf("copy bandwidth %.1f GB/s (read + write, measured now); %d timed SpMVs per backend, "
           "%d rotating x vectors\n\n", B->bw, B->reps, B->nx);
}

/* Warm-up, not reported: the first operator a process builds and times pays
 * CUDA's and cuSPARSE's first-use costs (module loading, handles), which
 * belong to no backend. */
static void warm_up(bench *B)
{
    for (int w = 0; w < 2; w++) {
        sps_operator *op = NULL;
        sps_timing tm;
        if (sps_operator_create(B->ctx, B->A, w ? "cusparse" : "csr-scalar", NULL, &op) == SPS_OK)
            sps_operator_time(op, 3, 1, &tm);
        sps_operator_destroy(op);
    }
}

/* The operator's build figures into r. */
static void record_build(row *r, const char *name, sps_operator *op)
{
    sps_operator_info oi;
    sps_operator_get_info(op, &oi);
    snprintf(r->built, sizeof r->built, "%s", oi.backend);
    if (!strcmp(name, "auto") || !strcmp(name, "tune")) snprintf(r->note, sizeof r->note, "%s", oi.reason);
    r->convert_ms = oi.convert_ms;
    r->upload_ms = oi.upload_ms;
    r->select_ms = oi.select_ms;
    r->device_mb = (double)oi.device_bytes / 1e6;
    r->fill = oi.fill;
    r->var = oi.balance_var;
    r->blocks = oi.blocks;
    r->deterministic = (oi.caps & SPS_CAP_DETERMINISTIC) != 0;
    r->bytes = oi.bytes_per_spmv;
}

/* Build, time and check one backend in one precision. */
static void run_backend(bench *B, row *r, const char *name, int single)
{
    snprintf(r->spmv, sizeof r->spmv, "%s", name);
    r->single = single;
    r->breakeven = NAN;
    r->vs_cusparse = NAN;
    sps_operator_opts oo;
    sps_operator_opts_default(&oo);
    oo.precision = single ? SPS_SINGLE : SPS_DOUBLE;
    sps_operator *op = NULL;
    sps_status st = sps_operator_create(B->ctx, B->A, name, &oo, &op);
    if (st != SPS_OK) {
        snprintf(r->note, sizeof r->note, "%s: %s", sps_strerror(st), sps_last_error(B->ctx));
        if (st == SPS_ERR_INVALID_ARG) die(2, "%s", r->note);
        if (st != SPS_ERR_UNSUPPORTED && st != SPS_ERR_NOT_COMPILED) B->failed = 1; /* should have worked */
        return;
    }
    record_build(r, name, op);
    sps_timing tm;
    st = sps_operator_time(op, B->reps, B->nx, &tm);
    if (st == SPS_OK) st = sps_operator_check(op, B->A, &r->err, &r->repeatable);
    sps_operator_destroy(op);
    if (st != SPS_OK) {
        snprintf(r->note, sizeof r->note, "%s: %s", sps_strerror(st), sps_last_error(B->ctx));
        B->failed = 1;
        return;
    }
    r->ok = 1;
    r->med_us = tm.median_us;
    r->min_us = tm.min_us;
    r->max_us = tm.max_us;
    r->gflops = 2.0 * (double)B->ft.nnz / (tm.median_us * 1e3);
    r->gbs = r->bytes / (tm.median_us * 1e3);
    r->frac_bw = B->bw > 0 ? r->gbs / B->bw : NAN;
    double tol = single ? 1e-5 : 1e-12;
    if (B->check && (!(r->err <= tol) || (r->deterministic && !r->repeatable))) B->failed = 1;
}

/* Ratios within one precision: to the faster cuSPARSE algorithm, and the
 * break-even count against csr-vector (sps_break_even_spmvs). */
static void ratios(row *rows, int first, int nrows)
{
    double t_cus = INFINITY, t_vec = NAN, c_vec = NAN;
    for (int i = first; i < nrows; i++) {
        if (!rows[i].ok) continue;
        if (!strncmp(rows[i].built, "cusparse", 8) && rows[i].med_us < t_cus) t_cus = rows[i].med_us;
        if (!strcmp(rows[i].built, "csr-vector") && !strcmp(rows[i].spmv, "csr-vector")) {
            t_vec = rows[i].med_us;
            c_vec = rows[i].convert_ms + rows[i].upload_ms;
        }
    }
    for (int i = first; i < nrows; i++) {
        row *r = &rows[i];
        if (!r->ok) continue;
        if (isfinite(t_cus)) r->vs_cusparse = t_cus / r->med_us;
        if (isfinite(t_vec)) {
            double saved = t_vec - r->med_us;
            double extra = r->convert_ms + r->upload_ms + r->select_ms - c_vec;
            r->breakeven = sps_break_even_spmvs(extra, saved);
        }
    }
}

static void run_all(bench *B)
{
    B->rows = calloc((size_t)B->nb * 2, sizeof *B->rows);
    if (!B->rows) die(3, "out of memory");
    for (int pass = 0; pass < 2; pass++) {
        int single = pass == 1;
        if ((single && !B->want_s) || (!single && !B->want_d)) continue;
        int first = B->nrows;
        for (int b = 0; b < B->nb; b++) run_backend(B, &B->rows[B->nrows++], B->names[b], single);
        ratios(B->rows, first, B->nrows);
    }
}

static void print_table(const bench *B)
{
    printf("%-14s %-4s %8s %8s %8s %10s %8s %8s %6s %8s %10s %9s %4s  %s\n", "backend", "prec",
           "conv_ms", "upl_ms", "dev_MB", "median_us", "GFLOP/s", "GB/s", "%copy", "xcuSPARSE",
           "break-even", "max_err", "rep", "notes");
    for (int i = 0; i < B->nrows; i++) {
        const row *r = &B->rows[i];
        if (!r->ok) {
            printf("%-14s %-4s  %s\n", r->spmv, r->single ? "s" : "d", r->note);
            continue;
        }
        char be[32];
        if (isnan(r->breakeven)) snprintf(be, sizeof be, "-");
        else if (r->breakeven < 0) snprintf(be, sizeof be, "never");
        else snprintf(be, sizeof be, "%.0f", r->breakeven);
        char note[700];
        note[0] = 0;
        if (strcmp(r->spmv, r->built)) snprintf(note, sizeof note, "-> %s", r->built);
        if (r->fill > 0 || r->var > 0) {
            size_t l = strlen(note);
            snprintf(note + l, sizeof note - l, "%sfill %.1f%% var %.3g", l ? "; " : "", 100 * r->fill, r->var);
        }
        printf("%-14s %-4s %8.2f %8.2f %8.2f %10.2f %8.1f %8.1f %6.1f %8.2f %10s %9.2e %4s  %s\n",
               r->spmv, r->single ? "s" : "d", r->convert_ms, r->upload_ms, r->device_mb,
               r->med_us, r->gflops, r->gbs, 100 * r->frac_bw, r->vs_cusparse, be, r->err,
               r->repeatable ? "yes" : "NO", note);
    }
}

static void write_csv(const bench *B, FILE *f)
{
    fprintf(f, "matrix,rows,nnz,device,copy_gbs,backend,built,precision,ok,convert_ms,upload_ms,"
               "select_ms,device_mb,median_us,min_us,max_us,gflops,gbs,frac_copy,vs_cusparse,"
               "break_even,max_err,repeatable,deterministic,fill,balance_var,blocks,note\n");
    for (int i = 0; i < B->nrows; i++) {
        const row *r = &B->rows[i];
        char note[620];
        snprintf(note, sizeof note, "%s", r->note);
        for (char *p = note; *p; p++)
            if (*p == '\n' || *p == '"') *p = '\'';
        fprintf(f, "\"%s\",%d,%lld,\"%s\",%.1f,\"%s\",\"%s\",%s,%d,%.4f,%.4f,%.4f,%.3f,%.3f,%.3f,%.3f,%.2f,"
                   "%.2f,%.4f,%.4f,%.1f,%.3g,%d,%d,%.4f,%.6g,%lld,\"%s\"\n",
                B->label, B->ft.rows, (long long)B->ft.nnz, sps_context_device_name(B->ctx), B->bw, r->spmv,
                r->built, r->single ? "single" : "double", r->ok, r->convert_ms, r->upload_ms,
                r->select_ms, r->device_mb, r->med_us, r->min_us, r->max_us, r->gflops, r->gbs,
                r->frac_bw, r->vs_cusparse, r->breakeven, r->err, r->repeatable,
                r->deterministic, r->fill, r->var, r->blocks, note);
    }
}

static void write_json_row(FILE *f, const row *r)
{
    fprintf(f, "{\"backend\": ");
    app_json_string(f, r->spmv);
    fprintf(f, ", \"built\": ");
    app_json_string(f, r->built);
    fprintf(f, ", \"precision\": \"%s\", \"ok\": %s", r->single ? "single" : "double", r->ok ? "true" : "false");
    const char *keys[] = {"convert_ms", "upload_ms", "select_ms", "device_mb", "median_us",
                          "min_us", "max_us", "gflops", "gbs", "frac_copy", "vs_cusparse",
                          "break_even", "max_err", "fill", "balance_var"};
    double vals[] = {r->convert_ms, r->upload_ms, r->select_ms, r->device_mb, r->med_us,
                     r->min_us, r->max_us, r->gflops, r->gbs, r->frac_bw, r->vs_cusparse,
                     r->breakeven, r->err, r->fill, r->var};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        fprintf(f, ", \"%s\": ", keys[k]);
        num(f, r->ok ? vals[k] : NAN);
    }
    fprintf(f, ", \"repeatable\": %s, \"deterministic\": %s, \"blocks\": %lld, \"note\": ",
            r->repeatable ? "true" : "false", r->deterministic ? "true" : "false", r->blocks);
    app_json_string(f, r->note);
    fprintf(f, "}");
}

static void write_json(const bench *B, FILE *f)
{
    fprintf(f, "{\"matrix\": ");
    app_json_string(f, B->label);
    fprintf(f, ", \"rows\": %d, \"nnz\": %lld, \"device\": ", B->ft.rows, (long long)B->ft.nnz);
    app_json_string(f, sps_context_device_name(B->ctx));
    fprintf(f, ", \"copy_gbs\": ");
    num(f, B->bw);
    fprintf(f, ", \"reps\": %d, \"results\": [", B->reps);
    for (int i = 0; i < B->nrows; i++) {
        fprintf(f, "%s\n  ", i ? "," : "");
        write_json_row(f, &B->rows[i]);
    }
    fprintf(f, "\n]}\n");
}

/* ---- --nrhs K: block products ------------------------------------------- */

/* One block-product row: backend x kind. */
typedef struct nrow {
    char spmv[48], kind[12];
    int ok;
    double med_us, per_rhs_us, spmv_us, gflops, mb, gbs, vs_cusparse, vs_single, err;
    int repeatable;
    char note[300];
} nrow;

/* The block's bytes: the format's SpMV bytes less x and y once, plus X and Y
 * (k vectors each). */
static double block_bytes(const sps_operator_info *oi, int k)
{
    double xy = 8.0 * ((double)oi->rows + (double)oi->cols);
    return oi->bytes_per_spmv - xy + (double)k * xy;
}

/* Returns the status; SPS_ERR_UNSUPPORTED leaves a row with its note. */
static sps_status nrhs_one(bench *B, sps_operator *op, const char *name, sps_spmm_kind kind,
                           double spmv_us, nrow *r)
{
    int k = B->nrhs;
    sps_operator_info oi;
    sps_operator_get_info(op, &oi);
    snprintf(r->spmv, sizeof r->spmv, "%s", name);
    snprintf(r->kind, sizeof r->kind, "%s", sps_spmm_kind_name(kind));
    sps_timing t;
    sps_status st = sps_operator_time_multi(op, kind, k, B->reps, &t);
    if (st == SPS_OK && B->check) st = sps_operator_check_multi(op, B->A, kind, k, &r->err, &r->repeatable);
    if (st != SPS_OK) {
        snprintf(r->note, sizeof r->note, "%s: %s", sps_strerror(st), sps_last_error(B->ctx));
        if (st != SPS_ERR_UNSUPPORTED) B->failed = 1;
        return st;
    }
    r->ok = 1;
    r->med_us = t.median_us;
    r->per_rhs_us = t.median_us / k;
    r->spmv_us = spmv_us;
    r->gflops = 2.0 * (double)oi.nnz * k / (t.median_us * 1e3);
    r->mb = block_bytes(&oi, k) / 1e6;
    r->gbs = block_bytes(&oi, k) / (t.median_us * 1e3);
    r->vs_single = k * spmv_us / t.median_us;
    /* the panel kernel is deterministic whatever the backend's SpMV is */
    int must_repeat = (oi.caps & SPS_CAP_DETERMINISTIC) || kind == SPS_SPMM_PANEL;
    if (B->check && (r->err > 1e-12 || (!r->repeatable && must_repeat))) B->failed = 1;
    return SPS_OK;
}

static int nrhs_backend(bench *B, const char *name, nrow *rows, int at)
{
    sps_operator *op = NULL;
    sps_timing t1;
    sps_status st = sps_operator_create(B->ctx, B->A, name, NULL, &op);
    if (st == SPS_OK) st = sps_operator_time(op, B->reps, B->nx, &t1);
    if (st != SPS_OK) {
        nrow *r = &rows[at];
        snprintf(r->spmv, sizeof r->spmv, "%s", name);
        snprintf(r->note, sizeof r->note, "%s: %s", sps_strerror(st), sps_last_error(B->ctx));
        sps_operator_destroy(op);
        return at + 1;
    }
    static const sps_spmm_kind kinds[] = {SPS_SPMM_NATIVE, SPS_SPMM_PANEL, SPS_SPMM_CUSPARSE,
                                          SPS_SPMM_COLUMNS};
    for (int q = 0; q < 4; q++) {
        if (kinds[q] == SPS_SPMM_CUSPARSE && strncmp(name, "cusparse", 8) != 0) continue;
        sps_status s1 = nrhs_one(B, op, name, kinds[q], t1.median_us, &rows[at]);
        /* panel: a row only where it applies (the CSR family in double) */
        if (kinds[q] == SPS_SPMM_PANEL && s1 == SPS_ERR_UNSUPPORTED) memset(&rows[at], 0, sizeof rows[at]);
        else at++;
    }
    sps_operator_destroy(op);
    return at;
}

static void nrhs_print(const bench *B, const nrow *rows, int n)
{
    printf("block products of %d right-hand sides (column-major), %d timed calls each\n", B->nrhs, B->reps);
    printf("%-20s %-8s %10s %10s %10s %8s %9s %8s %8s %8s %9s\n", "backend", "kind", "block_us",
           "per_rhs_us", "spmv_us", "GFLOP/s", "MB", "GB/s", "vs_cusp", "vs_k_spmv", "err");
    for (int i = 0; i < n; i++) {
        const nrow *r = &rows[i];
        if (!r->ok) {
            printf("%-20s %-8s %s\n", r->spmv, r->kind, r->note);
            continue;
        }
        printf("%-20s %-8s %10.2f %10.2f %10.2f %8.1f %9.2f %8.1f %8.2f %8.2f %9.2g\n", r->spmv,
               r->kind, r->med_us, r->per_rhs_us, r->spmv_us, r->gflops, r->mb, r->gbs,
               r->vs_cusparse, r->vs_single, B->check ? r->err : NAN);
    }
}

static void nrhs_csv(const bench *B, const nrow *rows, int n)
{
    app_out out;
    if (app_out_open(&out, B->csv) != 0) die(3, "cannot write %s: %s", B->csv, strerror(errno));
    fprintf(out.f, "matrix,rows,nnz,device,nrhs,backend,kind,ok,block_us,per_rhs_us,spmv_us,gflops,"
                   "mb,gbs,vs_cusparse,vs_k_spmv,max_err,repeatable\n");
    for (int i = 0; i < n; i++) {
        const nrow *r = &rows[i];
        fprintf(out.f, "\"%s\",%d,%lld,\"%s\",%d,\"%s\",\"%s\",%d,%.3f,%.3f,%.3f,%.2f,%.3f,%.2f,%.3f,"
                       "%.3f,%.3g,%d\n", B->label, B->ft.rows, (long long)B->ft.nnz,
                sps_context_device_name(B->ctx), B->nrhs, r->spmv, r->kind, r->ok, r->med_us,
                r->per_rhs_us, r->spmv_us, r->gflops, r->mb, r->gbs, r->vs_cusparse, r->vs_single,
                r->err, r->repeatable);
    }
    if (app_out_close(&out) != 0) die(3, "cannot write %s: %s", B->csv, strerror(errno));
}

/* Every backend's block products; vs_cusparse against cusparseSpMM on the
 * cusparse operator (when it ran). Exit status as the SpMV table's. */
static int run_nrhs(bench *B)
{
    nrow *rows = calloc((size_t)B->nb * 4 + 1, sizeof *rows);
    if (!rows) die(3, "out of memory");
    int n = 0;
    for (int i = 0; i < B->nb; i++) n = nrhs_backend(B, B->names[i], rows, n);
    double cusp = NAN;
    for (int i = 0; i < n; i++)
        if (rows[i].ok && !strcmp(rows[i].kind, "cusparse") && !(rows[i].med_us >= cusp)) cusp = rows[i].med_us;
    for (int i = 0; i < n; i++) rows[i].vs_cusparse = rows[i].ok ? cusp / rows[i].med_us : NAN;
    if (!B->quiet) nrhs_print(B, rows, n);
    if (B->csv) nrhs_csv(B, rows, n);
    if (!B->quiet && B->check) printf("\ncheck: %s\n", B->failed ? "FAILED" : "passed");
    free(rows);
    int fail = B->failed && B->check;
    free(B->listcopy);
    sps_matrix_destroy(B->A);
    sps_context_destroy(B->ctx);
    return fail ? 1 : 0;
}

/* A table file by app_out's rule (whole or not at all; devices and FIFOs in
 * place; '-' is stdout); a write error is exit 3. */
static void write_file(const bench *B, const char *path, void (*emit)(const bench *, FILE *))
{
    app_out out;
    if (app_out_open(&out, path) != 0) die(3, "cannot write %s: %s", path, strerror(errno));
    emit(B, out.f);
    if (app_out_close(&out) != 0) die(3, "cannot write %s: %s", path, strerror(errno));
}

int main(int argc, char **argv)
{
    static bench B;
    parse_args(argc, argv, &B);
    validate_args(&B);
    backend_list(&B);
    read_input(&B);
    if (!B.quiet) print_header(&B);
    warm_up(&B);
    if (B.nrhs > 0) return run_nrhs(&B);
    run_all(&B);
    if (!B.quiet) print_table(&B);
    if (B.csv) write_file(&B, B.csv, write_csv);
    if (B.json) write_file(&B, B.json, write_json);
    if (!B.quiet && B.check) printf("\ncheck: %s\n", B.failed ? "FAILED" : "passed");
    free(B.rows);
    free(B.listcopy);
    sps_matrix_destroy(B.A);
    sps_context_destroy(B.ctx);
    return B.failed && B.check ? 1 : 0;
}
