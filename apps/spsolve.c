/* SPDX-License-Identifier: MIT */
/* spsolve/apps/spsolve.c: the command-line solver (uses only spsolve.h) */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app_util.h"
#include "spsolve.h"

/* Exit codes (DESIGN.md): */
enum { EXIT_CONVERGED = 0, EXIT_NOT_CONVERGED = 1, EXIT_USAGE = 2, EXIT_RUNTIME = 3 };

static const char *usage_text =
    "usage: spsolve (-A FILE | --gen SPEC) [options]\n"
    "\n"
    "Solve A x = b with a Krylov method on the GPU (or on the host).\n"
    "\n"
    "Input:\n"
    "  -A FILE              matrix in Matrix Market format (.mtx or .mtx.gz)\n"
    "  --gen SPEC           generated matrix: poisson2d:N, poisson3d:N, poisson3d27:N,\n"
    "                       convdiff2d:N,PECLET, banded:N,W,SCATTER,SEED, powerlaw:N,AVGDEG,SEED\n"
    "  -b FILE              right-hand side (.txt numbers, or .mtx); default b = A*ones,\n"
    "                       so the exact solution is known and its error is printed\n"
    "  --x0 FILE            initial guess (default zeros)\n"
    "\n"
    "Solver:\n"
    "  --method M           cg | bicgstab | gmres (default: cg for a symmetric matrix with a\n"
    "                       positive diagonal, gmres otherwise)\n"
    "  --spmv NAME          SpMV backend, auto (default) or tune; see --list-spmv\n"
    "  --precond P          none (default) | jacobi | ilu0 | ic0\n"
    "  --rtol X             converged when ||r|| <= max(rtol*||b||, atol) (default 1e-8)\n"
    "  --atol X             absolute tolerance (default 0)\n"
    "  --dtol X             diverged when ||r|| > dtol*||r0|| (default 1e5)\n"
    "  --maxit N            iteration limit; GMRES counts inner iterations (default 10000)\n"
    "  --restart M          GMRES restart length (default 30)\n"
    "  --check-every K      read the convergence state every K iterations (default adaptive)\n"
    "  --device D           gpu | cpu | auto (default auto: the GPU if there is one)\n"
    "\n"
    "Output:\n"
    "  --info               print the matrix features and exit (no solve)\n"
    "  --json               one JSON object on stdout instead of the text summary\n"
    "  --monitor            one line per residual check: iteration and residual norm\n"
    "  --history FILE.csv   write iteration,residual norm for every iteration\n"
    "  -o FILE              write the solution (.mtx: Matrix Market array; else text)\n"
    "  --save-matrix FILE   write A as Matrix Market (e.g. a generated one), then go on\n"
    "  --verify             (n <= 5000) solve densely with LAPACKE and print the difference\n"
    "  --list-spmv          list the SpMV backends and their capabilities, then exit\n"
    "  -q, --quiet          print only errors\n"
    "  -h, --help           this text\n"
    "  --version            print the version\n"
    "\n"
    "Exit status: 0 converged, 1 not converged or breakdown, 2 bad usage or bad input,\n"
    "3 runtime failure (CUDA, out of memory).\n";

typedef struct opts {
    const char *A_path, *gen, *b_path, *x0_path, *out_path, *hist_path, *save_path;
    const char *method, *spmv, *precond, *device;
    double rtol, atol, dtol;
    long long maxit;
    int restart, check_every;
    int info, json, monitor, verify, quiet;
} opts;

static void die_usage(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "spsolve: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(run spsolve --help for the options)\n");
    va_end(ap);
    exit(EXIT_USAGE);
}

static double parse_double(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end || errno == ERANGE || !isfinite(v))
        die_usage("%s: '%s' is not a number", opt, s);
    return v;
}

static long long parse_int(const char *opt, const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE) die_usage("%s: '%s' is not an integer", opt, s);
    if (v < lo || v > hi) die_usage("%s: %lld is outside [%lld, %lld]", opt, v, lo, hi);
    return v;
}

static void list_spmv(void)
{
    printf("%-14s %-5s %-5s %-6s %-7s %s\n", "backend", "gpu", "det", "single", "convert",
           "description");
    for (int i = 0;; i++) {
        const char *name, *summary;
        unsigned caps;
        if (sps_spmv_backend(i, &name, &caps, &summary) != SPS_OK) break;
        if (caps & SPS_CAP_SELECTOR) {
            printf("%-14s %-5s %-5s %-6s %-7s %s\n", name, "-", "yes", "-", "-", summary);
            continue;
        }
        printf("%-14s %-5s %-5s %-6s %-7s %s\n", name, caps & SPS_CAP_GPU ? "yes" : "no",
               caps & SPS_CAP_DETERMINISTIC ? "yes" : "no", caps & SPS_CAP_SINGLE ? "yes" : "no",
               caps & SPS_CAP_NEEDS_CONVERT ? "yes" : "no", summary);
    }
    printf("\nParameters: drm:nomerge (HDIA), drm:seg=K, dia:maxfill=F, csr-vector:tpr=N,\n"
           "hyb:width=K, cusparse:alg2 (deterministic CSR_ALG2; plain cusparse is CSR_ALG1).\n");
}

static void parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->spmv = "auto";
    o->precond = "none";
    o->device = "auto";
    o->rtol = 1e-8;
    o->atol = 0;
    o->dtol = 1e5;
    o->maxit = 10000;
    o->restart = 30;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
#define NEXT() (i + 1 < argc ? argv[++i] : (die_usage("%s needs a value", a), (char *)NULL))
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            exit(0);
        } else if (!strcmp(a, "--version")) {
            printf("spsolve %s\n", sps_version());
            exit(0);
        } else if (!strcmp(a, "--list-spmv")) {
            list_spmv();
            exit(0);
        } else if (!strcmp(a, "-A")) o->A_path = NEXT();
        else if (!strcmp(a, "--gen")) o->gen = NEXT();
        else if (!strcmp(a, "-b")) o->b_path = NEXT();
        else if (!strcmp(a, "--x0")) o->x0_path = NEXT();
        else if (!strcmp(a, "-o")) o->out_path = NEXT();
        else if (!strcmp(a, "--history")) o->hist_path = NEXT();
        else if (!strcmp(a, "--save-matrix")) o->save_path = NEXT();
        else if (!strcmp(a, "--method")) o->method = NEXT();
        else if (!strcmp(a, "--spmv")) o->spmv = NEXT();
        else if (!strcmp(a, "--precond")) o->precond = NEXT();
        else if (!strcmp(a, "--device")) o->device = NEXT();
        else if (!strcmp(a, "--rtol")) o->rtol = parse_double(a, NEXT());
        else if (!strcmp(a, "--atol")) o->atol = parse_double(a, NEXT());
        else if (!strcmp(a, "--dtol")) o->dtol = parse_double(a, NEXT());
        else if (!strcmp(a, "--maxit")) o->maxit = parse_int(a, NEXT(), 0, 1000000000LL);
        else if (!strcmp(a, "--restart")) o->restart = (int)parse_int(a, NEXT(), 1, 100000);
        else if (!strcmp(a, "--check-every")) o->check_every = (int)parse_int(a, NEXT(), 1, 100000);
        else if (!strcmp(a, "--info")) o->info = 1;
        else if (!strcmp(a, "--json")) o->json = 1;
        else if (!strcmp(a, "--monitor")) o->monitor = 1;
        else if (!strcmp(a, "--verify")) o->verify = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o->quiet = 1;
        else die_usage("unknown option '%s'", a);
#undef NEXT
    }
    if (!o->A_path == !o->gen) die_usage("give exactly one of -A FILE and --gen SPEC");
    if (strcmp(o->device, "gpu") && strcmp(o->device, "cpu") && strcmp(o->device, "auto"))
        die_usage("--device: '%s' is not gpu, cpu or auto", o->device);
    if (o->rtol < 0 || o->atol < 0) die_usage("tolerances must be >= 0");
    if (o->dtol <= 1) die_usage("--dtol must be > 1");
    if (o->method) {
        sps_method m;
        if (sps_method_from_name(o->method, &m) != SPS_OK)
            die_usage("--method: '%s' is not cg, bicgstab or gmres", o->method);
    }
    if (strcmp(o->precond, "none") && strcmp(o->precond, "jacobi") && strcmp(o->precond, "ilu0") &&
        strcmp(o->precond, "ic0"))
        die_usage("--precond: '%s' is not none, jacobi, ilu0 or ic0", o->precond);
}

/* ---- small output helpers ----------------------------------------------- */

static void json_str(FILE *f, const char *key, const char *v, int *first)
{
    fprintf(f, "%s\"%s\": ", *first ? "" : ", ", key);
    app_json_string(f, v);
    *first = 0;
}

static void json_num(FILE *f, const char *key, double v, int *first)
{
    if (isfinite(v)) fprintf(f, "%s\"%s\": %.10g", *first ? "" : ", ", key, v);
    else fprintf(f, "%s\"%s\": null", *first ? "" : ", ", key);
    *first = 0;
}

static void json_int(FILE *f, const char *key, long long v, int *first)
{
    fprintf(f, "%s\"%s\": %lld", *first ? "" : ", ", key, v);
    *first = 0;
}

static void json_bool(FILE *f, const char *key, int v, int *first)
{
    fprintf(f, "%s\"%s\": %s", *first ? "" : ", ", key, v ? "true" : "false");
    *first = 0;
}

static void features_json(FILE *f, const sps_matrix_source *src, const sps_features *ft, int *first)
{
    json_str(f, "matrix", src->name, first);
    json_int(f, "rows", ft->rows, first);
    json_int(f, "cols", ft->cols, first);
    json_int(f, "nnz", (long long)ft->nnz, first);
    json_int(f, "nnz_stored", (long long)src->nnz_stored, first);
    json_str(f, "file_symmetry",
             src->symmetry == SPS_SYMMETRIC ? "symmetric"
             : src->symmetry == SPS_SKEW_SYMMETRIC ? "skew-symmetric" : "general", first);
    json_bool(f, "pattern", src->pattern, first);
    json_bool(f, "symmetric", ft->symmetric, first);
    json_bool(f, "pattern_symmetric", ft->pattern_symmetric, first);
    json_num(f, "asymmetry", ft->asymmetry, first);
    json_int(f, "row_min", ft->row_min, first);
    json_int(f, "row_max", ft->row_max, first);
    json_num(f, "row_mean", ft->row_mean, first);
    json_num(f, "row_std", ft->row_std, first);
    json_int(f, "empty_rows", ft->empty_rows, first);
    json_int(f, "diagonals", ft->diagonals, first);
    json_num(f, "dia_fill", ft->dia_fill, first);
    json_int(f, "drm_slots", (long long)ft->drm_slots, first);
    json_num(f, "drm_fill", ft->drm_fill, first);
    json_int(f, "hyb_width", ft->hyb_width, first);
    json_num(f, "ell_fill", ft->ell_fill, first);
    json_int(f, "hyb_coo", (long long)ft->hyb_coo, first);
    json_int(f, "missing_diagonal", ft->missing_diagonal, first);
    json_int(f, "zero_diagonal", ft->zero_diagonal, first);
    json_int(f, "negative_diagonal", ft->negative_diagonal, first);
    json_int(f, "dominant_rows", ft->dominant_rows, first);
    json_bool(f, "diag_dominant", ft->diag_dominant, first);
    json_num(f, "read_ms", src->read_ms, first);
    json_num(f, "read_mb_per_s",
             src->read_ms > 0 ? (double)src->bytes / 1e6 / (src->read_ms / 1e3) : 0, first);
    json_num(f, "analyze_ms", ft->analyze_ms, first);
}

static void features_text(const sps_matrix_source *src, const sps_features *ft)
{
    double mbs = src->read_ms > 0 ? (double)src->bytes / 1e6 / (src->read_ms / 1e3) : 0;
    printf("matrix            %s\n", src->name);
    printf("size              %d x %d, %lld entries (%lld stored in the file, %s%s)\n", ft->rows,
           ft->cols, (long long)ft->nnz, (long long)src->nnz_stored,
           src->symmetry == SPS_SYMMETRIC ? "symmetric: one triangle"
           : src->symmetry == SPS_SKEW_SYMMETRIC ? "skew-symmetric: one triangle" : "general",
           src->pattern ? ", pattern: values set to 1" : "");
    printf("symmetry          %s (||A-A'||/||A|| = %.3g, pattern %s)\n",
           ft->symmetric ? "symmetric" : "nonsymmetric", ft->asymmetry,
           ft->pattern_symmetric ? "symmetric" : "nonsymmetric");
    printf("rows              min %d, max %d, mean %.2f, std %.2f, %d empty\n", ft->row_min,
           ft->row_max, ft->row_mean, ft->row_std, ft->empty_rows);
    printf("diagonals         %d distinct; DIA fill %.1f%%; DRM(32) %lld slots, fill %.1f%%\n",
           ft->diagonals, 100 * ft->dia_fill, (long long)ft->drm_slots, 100 * ft->drm_fill);
    printf("hyb               ELL width %d (fill %.1f%%), %lld entries in COO\n", ft->hyb_width,
           100 * ft->ell_fill, (long long)ft->hyb_coo);
    printf("diagonal entries  %d missing, %d zero, %d negative; %d of %d rows dominant%s\n",
           ft->missing_diagonal, ft->zero_diagonal, ft->negative_diagonal, ft->dominant_rows,
           ft->rows, ft->diag_dominant ? " (diagonally dominant)" : "");
    if (src->bytes > 0)
        printf("read              %.1f ms (%.1f MB%s, %.0f MB/s)\n", src->read_ms,
               (double)src->bytes / 1e6, src->gzip ? " after gunzip" : "", mbs);
    else
        printf("generated         %.1f ms\n", src->read_ms);
    printf("analyze           %.1f ms\n", ft->analyze_ms);
}

/* Write the residual history as CSV: whole or not at all. */
static int write_history(const char *path, const double *h, long long n)
{
    char tmp[4096];
    FILE *f = app_open_tmp(path, tmp, sizeof tmp);
    if (!f) return -1;
    fprintf(f, "iteration,residual_norm\n");
    for (long long i = 0; i < n; i++) fprintf(f, "%lld,%.17g\n", i, h[i]);
    return app_commit_tmp(f, tmp, path);
}

static void monitor_cb(void *user, int64_t it, double rnorm)
{
    double bnorm = *(const double *)user;
    printf("%8lld  rnorm %.6e  rel %.3e\n", (long long)it, rnorm, bnorm > 0 ? rnorm / bnorm : rnorm);
    fflush(stdout);
}

static int fail_status(sps_context *ctx, sps_status st, const char *what)
{
    fprintf(stderr, "spsolve: %s: %s\n", what, sps_last_error(ctx)[0] ? sps_last_error(ctx) : sps_strerror(st));
    if (st == SPS_ERR_PARSE || st == SPS_ERR_IO || st == SPS_ERR_INVALID_ARG) return EXIT_USAGE;
    if (st == SPS_ERR_ZERO_PIVOT || st == SPS_ERR_UNSUPPORTED) return EXIT_NOT_CONVERGED;
    return EXIT_RUNTIME;
}

static double nrm2(const double *x, long long n)
{
    double s = 0;
    for (long long i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

int main(int argc, char **argv)
{
    opts o;
    parse_args(argc, argv, &o);
    int text = !o.json && !o.quiet;

    /* ---- context --------------------------------------------------------- */
    sps_context *ctx = NULL;
    char device_note[600] = "";
    if (!strcmp(o.device, "cpu")) {
        sps_context_create(&ctx, SPS_DEVICE_HOST);
    } else {
        sps_status st = sps_context_create(&ctx, 0);
        if (st != SPS_OK) {
            if (!strcmp(o.device, "gpu")) {
                fprintf(stderr, "spsolve: --device gpu: %s\n", sps_last_error(NULL));
                return EXIT_RUNTIME;
            }
            snprintf(device_note, sizeof device_note,
                     "no GPU (%s): using the host reference path", sps_last_error(NULL));
            sps_context_create(&ctx, SPS_DEVICE_HOST);
        }
    }
    if (!ctx) {
        fprintf(stderr, "spsolve: cannot create a context: %s\n", sps_last_error(NULL));
        return EXIT_RUNTIME;
    }
    if (device_note[0] && !o.quiet) fprintf(o.json ? stderr : stdout, "note: %s\n", device_note);

    /* ---- read and analyze ------------------------------------------------ */
    sps_matrix *A = NULL;
    sps_status st = o.A_path ? sps_matrix_read(ctx, o.A_path, &A) : sps_matrix_generate(ctx, o.gen, &A);
    if (st != SPS_OK) {
        int rc = fail_status(ctx, st, o.A_path ? "cannot read the matrix" : "cannot generate the matrix");
        sps_context_destroy(ctx);
        return rc == EXIT_RUNTIME ? EXIT_RUNTIME : EXIT_USAGE;
    }
    sps_matrix_source src;
    sps_matrix_get_source(A, &src);
    sps_features ft;
    st = sps_matrix_analyze(ctx, A, &ft);
    if (st != SPS_OK) {
        int rc = fail_status(ctx, st, "analysis failed");
        sps_matrix_destroy(A);
        sps_context_destroy(ctx);
        return rc;
    }
    if (o.save_path) {
        st = sps_matrix_write(ctx, A, o.save_path);
        if (st != SPS_OK) {
            int rc = fail_status(ctx, st, "cannot write --save-matrix");
            sps_matrix_destroy(A);
            sps_context_destroy(ctx);
            return rc;
        }
    }
    if (src.pattern && !o.quiet)
        fprintf(stderr, "spsolve: warning: %s is a pattern matrix: every value is taken as 1\n",
                src.name);

    if (o.info) {
        if (o.json) {
            int first = 1;
            printf("{");
            features_json(stdout, &src, &ft, &first);
            printf("}\n");
        } else {
            features_text(&src, &ft);
        }
        sps_matrix_destroy(A);
        sps_context_destroy(ctx);
        return 0;
    }

    int rc = EXIT_RUNTIME;
    sps_idx n = ft.rows;
    double *b = NULL, *x = NULL, *x_dense = NULL;
    sps_operator *op = NULL, *ref = NULL;
    sps_precond *pc = NULL;
    sps_solver *solver = NULL;
    if (ft.rows != ft.cols) {
        fprintf(stderr, "spsolve: %s: the matrix is %d x %d; a linear solve needs a square matrix\n",
                src.name, ft.rows, ft.cols);
        rc = EXIT_USAGE;
        goto done;
    }

    /* ---- method ---------------------------------------------------------- */
    sps_method method;
    char method_why[200];
    int spd_like = ft.symmetric && ft.missing_diagonal == 0 && ft.negative_diagonal == 0 &&
                   ft.zero_diagonal == 0;
    if (o.method) {
        sps_method_from_name(o.method, &method);
        snprintf(method_why, sizeof method_why, "as asked");
    } else {
        method = spd_like ? SPS_CG : SPS_GMRES;
        snprintf(method_why, sizeof method_why, "default for a %s",
                 spd_like ? "symmetric matrix with a positive diagonal"
                          : "nonsymmetric or indefinite-looking matrix");
    }
    if (method == SPS_CG && !ft.symmetric && !o.quiet)
        fprintf(stderr,
                "spsolve: warning: CG needs a symmetric positive definite matrix, and %s is "
                "nonsymmetric (||A-A'||/||A|| = %.2g); running it anyway. GMRES or BiCGSTAB "
                "(--method gmres) would suit it.\n",
                app_base_name(src.name), ft.asymmetry);
    else if (method == SPS_CG && (ft.negative_diagonal || ft.zero_diagonal || ft.missing_diagonal) &&
             !o.quiet)
        fprintf(stderr,
                "spsolve: warning: %s has %d negative, %d zero and %d missing diagonal entries: it "
                "is not positive definite, and CG may break down; MINRES-like behaviour is not "
                "available, try --method gmres.\n",
                app_base_name(src.name), ft.negative_diagonal, ft.zero_diagonal, ft.missing_diagonal);
    if ((!strcmp(o.precond, "jacobi") || !strcmp(o.precond, "ilu0") || !strcmp(o.precond, "ic0")) &&
        (ft.missing_diagonal || ft.zero_diagonal) && !o.quiet)
        fprintf(stderr,
                "spsolve: warning: %s has %d rows without a diagonal entry and %d zero diagonal "
                "entries: %s divides by the diagonal and will break down. Unpreconditioned GMRES "
                "with a long restart (--precond none --method gmres --restart 1000 or more) "
                "works on such matrices.\n",
                app_base_name(src.name), ft.missing_diagonal, ft.zero_diagonal, o.precond);

    /* ---- vectors --------------------------------------------------------- */
    int b_is_ones = 0;
    if (o.b_path) {
        sps_idx len;
        st = sps_vector_read(ctx, o.b_path, n, &b, &len);
        if (st != SPS_OK) { rc = fail_status(ctx, st, "cannot read -b"); goto done; }
    } else {
        b = malloc(sizeof(double) * (size_t)(n ? n : 1));
        double *ones = malloc(sizeof(double) * (size_t)(n ? n : 1));
        if (!b || !ones) { free(ones); fprintf(stderr, "spsolve: out of memory\n"); goto done; }
        for (sps_idx i = 0; i < n; i++) ones[i] = 1.0;
        sps_matrix_spmv_host(A, 1.0, ones, 0.0, b);
        free(ones);
        b_is_ones = 1;
    }
    if (o.x0_path) {
        sps_idx len;
        st = sps_vector_read(ctx, o.x0_path, n, &x, &len);
        if (st != SPS_OK) { rc = fail_status(ctx, st, "cannot read --x0"); goto done; }
    } else {
        x = calloc((size_t)(n ? n : 1), sizeof(double));
        if (!x) { fprintf(stderr, "spsolve: out of memory\n"); goto done; }
    }

    /* ---- operator (with fallback) ---------------------------------------- */
    char fallback[700] = "";
    st = sps_operator_create(ctx, A, o.spmv, NULL, &op);
    if (st == SPS_ERR_UNSUPPORTED || st == SPS_ERR_NOT_COMPILED) {
        snprintf(fallback, sizeof fallback, "%s refused (%s); fell back to csr-vector", o.spmv,
                 sps_last_error(ctx));
        if (!o.quiet) fprintf(stderr, "spsolve: %s\n", fallback);
        st = sps_operator_create(ctx, A, "csr-vector", NULL, &op);
    }
    if (st != SPS_OK) { rc = fail_status(ctx, st, "cannot build the SpMV operator"); goto done; }
    sps_operator_info oi;
    sps_operator_get_info(op, &oi);

    /* The DRM paper's argument: conversion cost against plain csr-vector SpMVs. */
    double t_chosen = 0, t_ref = 0, conv_ref = 0;
    int have_payoff = 0;
    {
        sps_timing tm;
        int reps = n > 1000000 ? 30 : 100;
        if (sps_operator_time(op, reps, 2, &tm) == SPS_OK) {
            t_chosen = tm.median_us;
            if (!strcmp(oi.backend, "csr-vector")) {
                t_ref = t_chosen;
                conv_ref = oi.convert_ms + oi.upload_ms;
                have_payoff = 1;
            } else if (sps_operator_create(ctx, A, "csr-vector", NULL, &ref) == SPS_OK) {
                sps_operator_info ri;
                sps_operator_get_info(ref, &ri);
                conv_ref = ri.convert_ms + ri.upload_ms;
                if (sps_operator_time(ref, reps, 2, &tm) == SPS_OK) {
                    t_ref = tm.median_us;
                    have_payoff = 1;
                }
                sps_operator_destroy(ref);
                ref = NULL;
            }
        }
    }

    /* ---- preconditioner -------------------------------------------------- */
    st = sps_precond_create(ctx, A, o.precond, &pc);
    if (st != SPS_OK) {
        rc = fail_status(ctx, st, "preconditioner setup failed");
        if (st == SPS_ERR_ZERO_PIVOT || st == SPS_ERR_UNSUPPORTED)
            fprintf(stderr, "spsolve: %s cannot be used on this matrix; try --precond none "
                            "--method gmres with a long --restart, or --precond jacobi if the "
                            "diagonal is complete\n", o.precond);
        goto done;
    }

    /* ---- solve ----------------------------------------------------------- */
    st = sps_solver_create(ctx, &solver);
    if (st != SPS_OK) { rc = fail_status(ctx, st, "cannot create the solver"); goto done; }
    sps_solver_set_method(solver, method);
    sps_solver_set_rtol(solver, o.rtol);
    sps_solver_set_atol(solver, o.atol);
    sps_solver_set_dtol(solver, o.dtol);
    sps_solver_set_maxit(solver, o.maxit);
    sps_solver_set_restart(solver, o.restart);
    sps_solver_set_history(solver, o.hist_path != NULL);
    if (o.check_every) sps_solver_set_check_interval(solver, o.check_every);
    double bnorm = nrm2(b, n);
    if (o.monitor && !o.json) sps_solver_set_monitor(solver, monitor_cb, &bnorm);

    if (text) {
        printf("spsolve %s on %s\n", sps_version(), sps_context_device_name(ctx));
        printf("matrix    %s: %d x %d, %lld nnz, %s, rows %d..%d (mean %.1f), %d diagonals, "
               "%d without diagonal entry\n",
               app_base_name(src.name), n, n, (long long)ft.nnz,
               ft.symmetric ? "symmetric" : "nonsymmetric", ft.row_min, ft.row_max, ft.row_mean,
               ft.diagonals, ft.missing_diagonal);
        if (b_is_ones)
            printf("rhs       b = A * ones (no -b given): the exact solution is all ones\n");
        printf("backend   %s%s%s\n", oi.backend, oi.reason[0] ? ": " : "", oi.reason);
        if (oi.detail[0]) printf("          %s\n", oi.detail);
        printf("method    %s", sps_method_name(method));
        if (method == SPS_GMRES) printf("(%d)", o.restart);
        printf(" (%s), precond %s, rtol %g, atol %g, maxit %lld\n", method_why, o.precond, o.rtol,
               o.atol, o.maxit);
        fflush(stdout);
    }

    sps_solve_info info;
    st = sps_solve(solver, op, pc, b, x, &info);
    if (st != SPS_OK) { rc = fail_status(ctx, st, "solve failed"); goto done; }
    rc = info.reason > 0 ? EXIT_CONVERGED : EXIT_NOT_CONVERGED;

    double err_ones = -1;
    if (b_is_ones) {
        double s = 0;
        for (sps_idx i = 0; i < n; i++) s += (x[i] - 1.0) * (x[i] - 1.0);
        err_ones = n ? sqrt(s / n) : 0;
    }
    double verify_diff = -1;
    const char *verify_note = NULL;
    if (o.verify) {
        if (n > 5000) {
            verify_note = "skipped: n > 5000";
        } else {
            x_dense = malloc(sizeof(double) * (size_t)(n ? n : 1));
            sps_status vs = x_dense ? sps_dense_solve(ctx, A, b, x_dense) : SPS_ERR_NO_MEMORY;
            if (vs == SPS_OK) {
                double d = 0, r = 0;
                for (sps_idx i = 0; i < n; i++) {
                    d += (x[i] - x_dense[i]) * (x[i] - x_dense[i]);
                    r += x_dense[i] * x_dense[i];
                }
                verify_diff = r > 0 ? sqrt(d / r) : sqrt(d);
            } else {
                verify_note = sps_last_error(ctx);
            }
        }
    }

    if (o.out_path) {
        st = sps_vector_write(ctx, o.out_path, x, n);
        if (st != SPS_OK) { rc = fail_status(ctx, st, "cannot write -o"); goto done; }
    }
    if (o.hist_path && write_history(o.hist_path, info.history, info.history_len) != 0) {
        fprintf(stderr, "spsolve: cannot write %s: %s\n", o.hist_path, strerror(errno));
        rc = EXIT_RUNTIME;
        goto done;
    }

    /* ---- report ---------------------------------------------------------- */
    double conv_ms = oi.convert_ms + oi.upload_ms;
    double saved_us = t_ref - t_chosen;
    double conv_in_spmvs = t_ref > 0 ? conv_ms * 1e3 / t_ref : 0;
    /* -1: never pays off (not faster than csr-vector); 0: cheaper to build and faster */
    double breakeven = sps_break_even_spmvs(conv_ms - conv_ref, saved_us);
    double precond_ms = sps_precond_setup_ms(pc);
    double total_ms = src.read_ms + ft.analyze_ms + oi.select_ms + oi.convert_ms + oi.upload_ms +
                      precond_ms + info.setup_ms + info.iterate_ms + info.finish_ms;

    if (o.json) {
        int first = 1;
        printf("{");
        json_str(stdout, "version", sps_version(), &first);
        json_str(stdout, "device", sps_context_device_name(ctx), &first);
        json_bool(stdout, "on_gpu", sps_context_on_gpu(ctx), &first);
        features_json(stdout, &src, &ft, &first);
        json_str(stdout, "method", sps_method_name(method), &first);
        json_int(stdout, "restart", o.restart, &first);
        json_str(stdout, "precond", o.precond, &first);
        json_str(stdout, "spmv", oi.backend, &first);
        json_str(stdout, "spmv_reason", oi.reason, &first);
        json_str(stdout, "spmv_fallback", fallback, &first);
        json_num(stdout, "rtol", o.rtol, &first);
        json_num(stdout, "atol", o.atol, &first);
        json_int(stdout, "maxit", o.maxit, &first);
        json_str(stdout, "reason", sps_reason_str(info.reason), &first);
        json_int(stdout, "reason_code", info.reason, &first);
        json_bool(stdout, "converged", info.reason > 0, &first);
        json_int(stdout, "iterations", (long long)info.iterations, &first);
        json_int(stdout, "restarts", (long long)info.restarts, &first);
        json_num(stdout, "bnorm", info.bnorm, &first);
        json_num(stdout, "r0norm", info.r0norm, &first);
        json_num(stdout, "rnorm", info.rnorm, &first);
        json_num(stdout, "true_rnorm", info.true_rnorm, &first);
        json_num(stdout, "rel_rnorm", info.rel_rnorm, &first);
        json_num(stdout, "true_rel_rnorm", info.true_rel_rnorm, &first);
        if (b_is_ones) json_num(stdout, "error_rms_vs_ones", err_ones, &first);
        if (verify_diff >= 0) json_num(stdout, "verify_rel_diff", verify_diff, &first);
        json_num(stdout, "select_ms", oi.select_ms, &first);
        json_num(stdout, "convert_ms", oi.convert_ms, &first);
        json_num(stdout, "upload_ms", oi.upload_ms, &first);
        json_int(stdout, "device_bytes", (long long)oi.device_bytes, &first);
        json_num(stdout, "precond_setup_ms", precond_ms, &first);
        json_num(stdout, "solve_setup_ms", info.setup_ms, &first);
        json_num(stdout, "iterate_ms", info.iterate_ms, &first);
        json_num(stdout, "per_iter_ms", info.per_iter_ms, &first);
        json_num(stdout, "finish_ms", info.finish_ms, &first);
        json_num(stdout, "total_ms", total_ms, &first);
        json_int(stdout, "host_syncs", (long long)info.host_syncs, &first);
        json_num(stdout, "syncs_per_iter",
                 info.iterations ? (double)info.host_syncs / (double)info.iterations : 0, &first);
        json_int(stdout, "spmvs", (long long)info.spmvs, &first);
        json_int(stdout, "precond_applies", (long long)info.precond_applies, &first);
        if (have_payoff) {
            json_num(stdout, "spmv_us", t_chosen, &first);
            json_num(stdout, "csr_vector_spmv_us", t_ref, &first);
            json_num(stdout, "conversion_in_csr_vector_spmvs", conv_in_spmvs, &first);
            json_num(stdout, "saved_us_per_spmv", saved_us, &first);
            json_num(stdout, "break_even_spmvs", breakeven, &first);
        }
        printf("}\n");
    } else if (text) {
        printf("result    %s after %lld iterations", sps_reason_str(info.reason),
               (long long)info.iterations);
        if (method == SPS_GMRES) printf(" (%lld restarts)", (long long)info.restarts);
        printf("\n");
        printf("residual  relative: recurrence %.3e, true %.3e (||b|| = %.3e)\n", info.rel_rnorm,
               info.true_rel_rnorm, info.bnorm);
        if (b_is_ones)
            printf("error     rms(x - 1) = %.3e%s\n", err_ones,
                   info.reason > 0 && err_ones > 1e-3
                       ? " (a small residual, a large error: A is ill-conditioned)" : "");
        if (o.verify) {
            if (verify_diff >= 0)
                printf("verify    ||x - x_lapack|| / ||x_lapack|| = %.3e (LAPACKE dgesv)\n", verify_diff);
            else
                printf("verify    %s\n", verify_note ? verify_note : "failed");
        }
        printf("time      read %.1f | analyze %.1f | select %.1f | convert %.1f | upload %.1f | "
               "precond %.1f | setup %.1f | iterate %.1f | finish %.1f | total %.1f ms\n",
               src.read_ms, ft.analyze_ms, oi.select_ms, oi.convert_ms, oi.upload_ms, precond_ms,
               info.setup_ms, info.iterate_ms, info.finish_ms, total_ms);
        printf("          %.4f ms per iteration\n", info.per_iter_ms);
        printf("syncs     %lld host synchronizations in %lld iterations (%.3f per iteration)\n",
               (long long)info.host_syncs, (long long)info.iterations,
               info.iterations ? (double)info.host_syncs / (double)info.iterations : 0.0);
        if (have_payoff) {
            if (!strcmp(oi.backend, "csr-vector"))
                printf("payoff    csr-vector %.2f us per SpMV is the reference; conversion %.2f ms "
                       "= %.1f SpMVs; this solve used %lld SpMVs\n",
                       t_ref, conv_ms, conv_in_spmvs, (long long)info.spmvs);
            else if (breakeven >= 0)
                printf("payoff    conversion %.2f ms = %.1f csr-vector SpMVs; saves %.2f us per "
                       "SpMV (%.2f vs %.2f); break-even after %.0f SpMVs; this solve used %lld\n",
                       conv_ms, conv_in_spmvs, saved_us, t_chosen, t_ref, breakeven,
                       (long long)info.spmvs);
            else
                printf("payoff    conversion %.2f ms = %.1f csr-vector SpMVs; %s is %.2f us per SpMV "
                       "vs csr-vector %.2f: it never pays off here; this solve used %lld SpMVs\n",
                       conv_ms, conv_in_spmvs, oi.backend, t_chosen, t_ref, (long long)info.spmvs);
        }
    }
    if (!o.quiet && info.reason == SPS_DIVERGED_STAGNATION && method == SPS_GMRES &&
        !strcmp(o.precond, "none"))
        fprintf(stderr, "spsolve: GMRES(%d) stagnated; restarting loses the Krylov space: a longer "
                        "--restart (up to n) or a preconditioner may converge.\n", o.restart);
    if (!o.quiet && info.reason == SPS_DIVERGED_INDEFINITE)
        fprintf(stderr, "spsolve: CG met p'Ap <= 0: the matrix is not positive definite; use "
                        "--method gmres or --method bicgstab.\n");

done:
    sps_free(b);
    sps_free(x);
    free(x_dense);
    sps_solver_destroy(solver);
    sps_precond_destroy(pc);
    sps_operator_destroy(ref);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    return rc;
}
