/* SPDX-License-Identifier: MIT */
/* spsolve/apps/spsolve.c: the command-line solver (uses only spsolve.h) */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_util.h"
#include "spsolve.h"

/* Exit codes by class (DESIGN.md, README): */
enum {
    EXIT_CONVERGED = 0,     /* converged */
    EXIT_NOT_CONVERGED = 1, /* the solve ran and did not converge, or broke down */
    EXIT_USAGE = 2,         /* bad usage or bad input (options, files, a non-square matrix) */
    EXIT_RUNTIME = 3,       /* runtime failure: CUDA, out of memory, an output write */
    EXIT_PRECOND = 4        /* the preconditioner cannot be built on this matrix */
};

#if defined(__GNUC__)
#define APP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define APP_PRINTF(a, b)
#endif

static int g_json; /* --json anywhere on the command line: usage errors answer in JSON too */

static const char *usage_text =
    "usage: spsolve (-A FILE | --gen SPEC) [options]\n"
    "\n"
    "Solve A x = b with a Krylov method on the GPU (or on the host).\n"
    "\n"
    "Input:\n"
    "  -A FILE              matrix in Matrix Market format (.mtx or .mtx.gz)\n"
    "  --gen SPEC           generated matrix: poisson2d:N, poisson3d:N, poisson3d27:N,\n"
    "                       convdiff2d:N,PECLET, banded:N,W,SCATTER,SEED, powerlaw:N,AVGDEG,SEED,\n"
    "                       poisson3d-jump:N,CONTRAST, aniso3d:N,EPS, elasticity3d:N\n"
    "  -b FILE              right-hand side (.txt numbers, or .mtx); default b = A*ones,\n"
    "                       so the exact solution is known and its error is printed\n"
    "  --x0 FILE            initial guess (default zeros)\n"
    "\n"
    "Solver:\n"
    "  --method M           auto (default) | cg | bicgstab | gmres | idr, with :key=value\n"
    "                       parameters (gmres:restart=50, idr:s=2); auto tries plans chosen\n"
    "                       from the matrix's features, falling back on failure. GMRES's\n"
    "                       orthogonalization: gmres:orth=cgs2 (classical Gram-Schmidt, a\n"
    "                       second pass where the first cancels) or orth=dcgs2 (delayed\n"
    "                       reorthogonalization: two passes over the basis a step, one\n"
    "                       reduction; the residual test one step late). Default: cgs2 up\n"
    "                       to 8192 rows and 1.5 MiB of basis ((m+1) n doubles), dcgs2\n"
    "                       above; SPS_GM_ORTH=cgs2|dcgs2 in the environment overrides it\n"
    "  --spmv NAME          SpMV backend, auto (default) or tune; see --list-spmv\n"
    "  --precond P          auto (default) | NAME[:key=value,...], e.g. cheby:degree=8; see\n"
    "                       --list-precond\n"
    "  --nullspace rbm      amg with the rigid-body modes of --gen elasticity3d:N\n"
    "  --fallback           after an explicit --method or --precond fails, try the auto plans\n"
    "  --rtol X             converged when ||r|| <= max(rtol*||b||, atol) (default 1e-8)\n"
    "  --atol X             absolute tolerance (default 0)\n"
    "  --dtol X             diverged when ||r|| > dtol*||r0|| (> 0, default 1e5)\n"
    "  --maxit N            iteration limit; GMRES counts inner iterations (default 10000)\n"
    "  --restart M          GMRES restart length (default 30)\n"
    "  --no-stagnation      no stagnation stop (GMRES): run on to the tolerances or maxit\n"
    "  --check-every K      read the convergence state every K iterations (default adaptive)\n"
    "  --device D           gpu | cpu | auto (default auto: the GPU if there is one)\n"
    "  --threads N          threads for reading the matrix (default 0: the online cores)\n"
    "  --gpus N             distributed CG or BiCGSTAB (none, jacobi) on N GPUs of this\n"
    "                       process over NCCL (with --device cpu: N host ranks); doc/dist.md\n"
    "  --mpi                under mpiexec: one process per GPU (its rank on its node picks\n"
    "                       the GPU; --device cpu: host processes over MPI); doc/dist.md\n"
    "\n"
    "Output:\n"
    "  --info               print the matrix features and exit (no solve)\n"
    "  --json               one JSON object on stdout instead of the text summary\n"
    "  --monitor[=K]        one line per residual check (every K-th iteration at most):\n"
    "                       iteration and residual norm. Without it, on a terminal, solves\n"
    "                       longer than a second show a one-line progress display on stderr\n"
    "  --history FILE.csv   write iteration,residual norm for every iteration ('-': stdout)\n"
    "  -o FILE              write the solution (.mtx: Matrix Market array; else text; '-':\n"
    "                       stdout, and the summary goes to stderr)\n"
    "  --save-matrix FILE   write A as Matrix Market (e.g. a generated one), then go on\n"
    "  --verify             (n <= 5000) solve densely with LAPACKE and print the difference\n"
    "  --list-spmv          list the SpMV backends and their capabilities, then exit\n"
    "  --list-precond       list the preconditioners, then exit\n"
    "  -q, --quiet          print only errors\n"
    "  --options-file FILE  read options from FILE: one per line, `key value` or\n"
    "                       `key=value`, with or without the leading --; # comments\n"
    "  -h, --help           this text\n"
    "  --version            print the version\n"
    "\n"
    "Options: --opt value and --opt=value are the same. SPSOLVE_OPTIONS in the environment\n"
    "holds options read before the command line's (which win), e.g. \"--rtol 1e-6 --monitor\".\n"
    "--rtol 0 runs to maxit or atol. --restart above n is capped at n, with a note.\n"
    "\n"
    "Output paths are checked before the solve. A regular file is replaced whole or not\n"
    "at all; a device or FIFO is written in place; a symlink is followed and kept.\n"
    "\n"
    "With --json, one object on stdout on every exit, with \"error\", \"warnings\",\n"
    "\"hints\" and \"exit_status\".\n"
    "\n"
    "Exit status: 0 converged, 1 not converged or breakdown, 2 bad usage or bad input,\n"
    "3 runtime failure (CUDA, out of memory, an output that cannot be written), 4 the\n"
    "preconditioner cannot be built on this matrix (zero pivot, missing diagonal entry).\n";

typedef struct opts {
    const char *A_path, *gen, *b_path, *x0_path, *out_path, *hist_path, *save_path;
    const char *method, *spmv, *precond, *device;
    const char *nullspace;  /* --nullspace rbm: amg's near-nullspace */
    double rtol, atol, dtol;
    long long maxit;
    int restart, check_every;
    int threads;            /* --threads: io threads (0: the online cores) */
    int gpus;               /* --gpus N: the distributed solve on N ranks (0: off) */
    int mpi;                /* --mpi: the distributed solve on MPI_COMM_WORLD */
    int info, json, monitor, verify, quiet;
    int fallback;           /* --fallback: explicit settings fall back to the auto plans */
    int no_stagnation;      /* --no-stagnation */
} opts;

static void app_json_string_or_null(FILE *f, const char *s)
{
    if (s && s[0]) app_json_string(f, s);
    else fputs("null", f);
}

static void die_usage(const char *fmt, ...) APP_PRINTF(1, 2);
static void die_usage(const char *fmt, ...)
{
    char msg[5000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "spsolve: %s\n(run spsolve --help for the options)\n", msg);
    if (g_json) {
        printf("{\"version\": ");
        app_json_string(stdout, sps_version());
        printf(", \"converged\": false, \"error\": ");
        app_json_string(stdout, msg);
        printf(", \"warnings\": [], \"hints\": [], \"exit_status\": %d}\n", EXIT_USAGE);
    }
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
           "hyb:width=K, cusparse:alg2 (deterministic CSR_ALG2; plain cusparse is CSR_ALG1),\n"
           "bsr:block=K, lightspmv:tpr=N.\n");
}

/* Is name (or its part before ':', where parameters go) a preconditioner type? */
static int precond_known(const char *name)
{
    const char *t;
    size_t len = strcspn(name, ":");
    for (int i = 0; sps_precond_type(i, &t, NULL) == SPS_OK; i++)
        if (strlen(t) == len && !strncmp(name, t, len)) return 1;
    return 0;
}

/* Is spec ic0 with any parameters (ic0, ic0:exact, ic0:solve=jacobi, ...)? */
static int is_ic0(const char *spec) { return strcspn(spec, ":") == 3 && !strncmp(spec, "ic0", 3); }

/* "none, jacobi, ilu0 or ic0": the registered types, for messages. */
static const char *precond_list(void)
{
    static char list[512];
    const char *t;
    size_t l = 0;
    int n = 0;
    while (sps_precond_type(n, &t, NULL) == SPS_OK) n++;
    list[0] = 0;
    for (int i = 0; i < n && sps_precond_type(i, &t, NULL) == SPS_OK; i++)
        l += (size_t)snprintf(list + l, sizeof list - l, "%s%s", i == 0 ? "" : i == n - 1 ? " or " : ", ", t);
    return list;
}

static void list_precond(void)
{
    const char *name, *summary;
    printf("%-10s %s\n", "precond", "description");
    for (int i = 0; sps_precond_type(i, &name, &summary) == SPS_OK; i++)
        printf("%-10s %s\n", name, summary);
}

static void set_defaults(opts *o)
{
    memset(o, 0, sizeof *o);
    o->spmv = "auto";
    o->precond = "auto";
    o->device = "auto";
    o->rtol = 1e-8;
    o->atol = 0;
    o->dtol = 1e5;
    o->maxit = 10000;
    o->restart = 30;
}

/* The options that exit at once (help, version, lists). */
static void early_exit_option(const char *a)
{
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) fputs(usage_text, stdout);
    else if (!strcmp(a, "--version")) printf("spsolve %s\n", sps_version());
    else if (!strcmp(a, "--list-spmv")) list_spmv();
    else if (!strcmp(a, "--list-precond")) list_precond();
    else return;
    exit(0);
}

static int takes_value(const char *a)
{
    static const char *const names[] = {"-A", "--gen", "-b", "--x0", "-o", "--history",
                                         "--save-matrix", "--method", "--spmv", "--precond",
                                         "--device", "--rtol", "--atol", "--dtol", "--maxit",
                                         "--restart", "--check-every", "--threads", "--gpus",
                                         "--options-file", "--nullspace"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (!strcmp(a, names[i])) return 1;
    return 0;
}

static void options_file(opts *o, const char *path);

/* One option with a value (takes_value(a) is true). */
static void value_option(opts *o, const char *a, const char *v)
{
    if (!strcmp(a, "-A")) o->A_path = v;
    else if (!strcmp(a, "--gen")) o->gen = v;
    else if (!strcmp(a, "-b")) o->b_path = v;
    else if (!strcmp(a, "--x0")) o->x0_path = v;
    else if (!strcmp(a, "-o")) o->out_path = v;
    else if (!strcmp(a, "--history")) o->hist_path = v;
    else if (!strcmp(a, "--save-matrix")) o->save_path = v;
    else if (!strcmp(a, "--method")) o->method = v;
    else if (!strcmp(a, "--spmv")) o->spmv = v;
    else if (!strcmp(a, "--precond")) o->precond = v;
    else if (!strcmp(a, "--nullspace")) o->nullspace = v;
    else if (!strcmp(a, "--device")) o->device = v;
    else if (!strcmp(a, "--rtol")) o->rtol = parse_double(a, v);
    else if (!strcmp(a, "--atol")) o->atol = parse_double(a, v);
    else if (!strcmp(a, "--dtol")) o->dtol = parse_double(a, v);
    else if (!strcmp(a, "--maxit")) o->maxit = parse_int(a, v, 0, 1000000000LL);
    else if (!strcmp(a, "--restart")) o->restart = (int)parse_int(a, v, 1, 100000);
    else if (!strcmp(a, "--check-every")) o->check_every = (int)parse_int(a, v, 1, 100000);
    else if (!strcmp(a, "--threads")) o->threads = (int)parse_int(a, v, 0, 4096);
    else if (!strcmp(a, "--gpus")) o->gpus = (int)parse_int(a, v, 1, 1024);
    else if (!strcmp(a, "--options-file")) options_file(o, v);
}

/* One flag; 0 if a is not one. */
static int flag_option(opts *o, const char *a)
{
    if (!strcmp(a, "--info")) o->info = 1;
    else if (!strcmp(a, "--json")) o->json = g_json = 1;
    else if (!strcmp(a, "--monitor")) o->monitor = 1;
    else if (!strcmp(a, "--verify")) o->verify = 1;
    else if (!strcmp(a, "--no-stagnation")) o->no_stagnation = 1;
    else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) o->quiet = 1;
    else if (!strcmp(a, "--fallback")) o->fallback = 1;
    else if (!strcmp(a, "--mpi")) o->mpi = 1;
    else return 0;
    return 1;
}

/* The method named by spec, "NAME" or "NAME:key=value,...". */
static sps_status method_base(const char *spec, sps_method *m)
{
    char name[32];
    size_t len = strcspn(spec, ":");
    if (len >= sizeof name) return SPS_ERR_INVALID_ARG;
    memcpy(name, spec, len);
    name[len] = 0;
    return sps_method_from_name(name, m);
}

/* spec with its name part (before ':') lower-cased: names are matched
 * case-insensitively, parameters are left alone. Two slots (precond, spmv). */
static const char *lower_name(const char *spec, int slot)
{
    static char buf[2][256];
    size_t len = strlen(spec);
    if (len >= sizeof buf[slot]) return spec;
    memcpy(buf[slot], spec, len + 1);
    for (size_t i = 0; i < len && buf[slot][i] != ':'; i++)
        buf[slot][i] = (char)tolower((unsigned char)buf[slot][i]);
    return buf[slot];
}

/* The M of a "NAME:...restart=M..." method spec, or 0 when it names none. */
static int spec_restart(const char *spec)
{
    const char *rs = spec ? strstr(spec, "restart=") : NULL;
    long m = rs ? strtol(rs + 8, NULL, 10) : 0;
    return m >= 1 && m <= 100000000 ? (int)m : 0;
}

/* Checks that need no matrix. The tolerances are the library's to judge
 * (configure_solver passes them on and reports its refusal). */
static void validate_args(opts *o)
{
    if (!o->A_path == !o->gen) die_usage("give exactly one of -A FILE and --gen SPEC");
    if (strcmp(o->device, "gpu") && strcmp(o->device, "cpu") && strcmp(o->device, "auto"))
        die_usage("--device: '%s' is not gpu, cpu or auto", o->device);
    if (spec_restart(o->method)) o->restart = spec_restart(o->method); /* shown */
    if (o->method) {
        sps_method m;
        if (method_base(o->method, &m) != SPS_OK)
            die_usage("--method: '%s' is not auto, cg, bicgstab, gmres or idr (NAME or NAME:key=value)",
                      o->method);
        if (m == SPS_METHOD_AUTO) o->method = NULL;
    }
    o->precond = lower_name(o->precond, 0);
    o->spmv = lower_name(o->spmv, 1);
    if (strcmp(o->precond, "auto") && !precond_known(o->precond))
        die_usage("--precond: '%s' is not %s", o->precond, precond_list());
    if (o->nullspace && (strcmp(o->nullspace, "rbm") || (strcmp(o->precond, "amg") && strncmp(o->precond, "amg:", 4)) ||
                         !o->gen || strncmp(o->gen, "elasticity3d:", 13)))
        die_usage("--nullspace: only 'rbm', with --precond amg and --gen elasticity3d:N");
    if (o->nullspace && (!o->method || o->fallback))
        die_usage("--nullspace needs --method (and no --fallback): the auto plans build their own "
                  "preconditioners");
    if (o->out_path && o->hist_path && !strcmp(o->out_path, "-") && !strcmp(o->hist_path, "-"))
        die_usage("-o - and --history - cannot both write to stdout");
    if (o->save_path && !strcmp(o->save_path, "-"))
        die_usage("--save-matrix: give a file name (stdout is not supported)");
    const char *paths[3] = {o->out_path, o->hist_path, o->save_path};
    const char *names[3] = {"-o", "--history", "--save-matrix"};
    for (int i = 0; i < 3; i++) {
        char why[4500];
        if (paths[i] && app_out_check(paths[i], why, sizeof why) != 0)
            die_usage("%s: %s", names[i], why);
    }
}

/* A copy that lives as long as the program (options keep pointers to their
 * values; the environment's and an options file's words are copied). */
static char **g_kept;          /* every copy, so that they stay reachable to the end */
static size_t g_nkept, g_capkept;

static char *keep(const char *s, size_t len)
{
    if (g_nkept == g_capkept) {
        size_t cap = g_capkept ? 2 * g_capkept : 32;
        char **k = realloc(g_kept, cap * sizeof *k);
        if (!k) die_usage("out of memory");
        g_kept = k;
        g_capkept = cap;
    }
    char *c = malloc(len + 1);
    if (!c) die_usage("out of memory");
    memcpy(c, s, len);
    c[len] = 0;
    g_kept[g_nkept++] = c;
    return c;
}

/* One option at words[i] (and its value, joined by '=' or the next word);
 * returns the words used. origin: where the words came from, for messages. */
static int one_option(opts *o, int n, char *const *words, int i, const char *origin)
{
    const char *a = words[i], *eq = strncmp(a, "--", 2) ? NULL : strchr(a, '=');
    char name[64];
    if (eq) {
        size_t len = (size_t)(eq - a);
        if (len >= sizeof name) die_usage("%sunknown option '%s'", origin, a);
        memcpy(name, a, len);
        name[len] = 0;
        a = name;
    }
    early_exit_option(a);
    if (!strcmp(a, "--monitor") && eq) {
        o->monitor = (int)parse_int("--monitor", eq + 1, 1, 1000000000);
        return 1;
    }
    if (flag_option(o, a)) {
        if (eq) die_usage("%s%s takes no value", origin, a);
        return 1;
    }
    if (!takes_value(a)) die_usage("%sunknown option '%s'", origin, words[i]);
    if (eq) {
        value_option(o, a, eq + 1);
        return 1;
    }
    if (i + 1 >= n) die_usage("%s%s needs a value", origin, a);
    value_option(o, a, words[i + 1]);
    return 2;
}

static void parse_words(opts *o, int n, char *const *words, const char *origin)
{
    for (int i = 0; i < n;) i += one_option(o, n, words, i, origin);
}

/* Split s on white space into at most max words (copies). */
static int split_words(const char *s, char **words, int max)
{
    int n = 0;
    while (*s) {
        s += strspn(s, " \t\r\n");
        size_t len = strcspn(s, " \t\r\n");
        if (!len) break;
        if (n == max) die_usage("too many words (at most %d)", max);
        words[n++] = keep(s, len);
        s += len;
    }
    return n;
}

/* --options-file FILE: one option a line, `key value`, `key=value`, `--key
 * value` or a flag alone; blank lines and # comments skipped. */
static void options_file(opts *o, const char *path)
{
    static int depth;
    FILE *f = fopen(path, "r");
    if (!f) die_usage("--options-file: %s: %s", path, strerror(errno));
    if (++depth > 8) die_usage("--options-file: %s: nested more than 8 deep", path);
    char line[4096];
    for (int lineno = 1; fgets(line, sizeof line, f); lineno++) {
        line[strcspn(line, "#")] = 0;
        char *words[3], origin[600];
        int n = split_words(line, words, 2);
        if (!n) continue;
        if (strncmp(words[0], "-", 1)) { /* key without dashes */
            char dashed[300];
            snprintf(dashed, sizeof dashed, "%s%s", strlen(words[0]) == 1 ? "-" : "--", words[0]);
            words[0] = keep(dashed, strlen(dashed));
        }
        snprintf(origin, sizeof origin, "%s:%d: ", path, lineno);
        if (one_option(o, n, words, 0, origin) != n)
            die_usage("%sone option a line: '%s' does not take '%s'", origin, words[0], words[n - 1]);
    }
    fclose(f);
    depth--;
}

static void parse_args(int argc, char **argv, opts *o)
{
    set_defaults(o);
    const char *env = getenv("SPSOLVE_OPTIONS");
    if (env && *env) {
        char *words[256];
        int n = split_words(env, words, 256);
        parse_words(o, n, words, "SPSOLVE_OPTIONS: ");
    }
    parse_words(o, argc - 1, argv + 1, "");
    validate_args(o);
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
    json_str(f, "analyzed_on", ft->on_gpu ? "gpu" : "host", first);
    if (ft->on_gpu) {
        json_num(f, "analyze_device_ms", ft->device_ms, first);
        json_num(f, "matrix_upload_ms", ft->upload_ms, first);
        json_num(f, "matrix_upload_gbps", ft->upload_gbps, first);
        json_str(f, "matrix_upload_how", ft->upload_how, first);
    }
}

static void features_text(FILE *f, const sps_matrix_source *src, const sps_features *ft)
{
    double mbs = src->read_ms > 0 ? (double)src->bytes / 1e6 / (src->read_ms / 1e3) : 0;
    fprintf(f, "matrix            %s\n", src->name);
    fprintf(f, "size              %d x %d, %lld entries (%lld stored in the file, %s%s)\n", ft->rows,
            ft->cols, (long long)ft->nnz, (long long)src->nnz_stored,
            src->symmetry == SPS_SYMMETRIC ? "symmetric: one triangle"
            : src->symmetry == SPS_SKEW_SYMMETRIC ? "skew-symmetric: one triangle" : "general",
            src->pattern ? ", pattern: values set to 1" : "");
    fprintf(f, "symmetry          %s (||A-A'||/||A|| = %.3g, pattern %s)\n",
            ft->symmetric ? "symmetric" : "nonsymmetric", ft->asymmetry,
            ft->pattern_symmetric ? "symmetric" : "nonsymmetric");
    fprintf(f, "rows              min %d, max %d, mean %.2f, std %.2f, %d empty\n", ft->row_min,
            ft->row_max, ft->row_mean, ft->row_std, ft->empty_rows);
    fprintf(f, "diagonals         %d distinct; DIA fill %.1f%%; DRM(32) %lld slots, fill %.1f%%\n",
            ft->diagonals, 100 * ft->dia_fill, (long long)ft->drm_slots, 100 * ft->drm_fill);
    fprintf(f, "hyb               ELL width %d (fill %.1f%%), %lld entries in COO\n", ft->hyb_width,
            100 * ft->ell_fill, (long long)ft->hyb_coo);
    fprintf(f, "diagonal entries  %d missing, %d zero, %d negative; %d of %d rows dominant%s\n",
            ft->missing_diagonal, ft->zero_diagonal, ft->negative_diagonal, ft->dominant_rows,
            ft->rows, ft->diag_dominant ? " (diagonally dominant)" : "");
    if (src->bytes > 0)
        fprintf(f, "read              %.1f ms (%.1f MB%s, %.0f MB/s)\n", src->read_ms,
                (double)src->bytes / 1e6, src->gzip ? " after gunzip" : "", mbs);
    else
        fprintf(f, "generated         %.1f ms\n", src->read_ms);
    if (ft->on_gpu)
        fprintf(f, "analyze           %.1f ms on the GPU (kernels %.1f ms; the CSR's one upload %.1f ms, "
                   "%.1f GB/s, %s)\n", ft->analyze_ms, ft->device_ms, ft->upload_ms, ft->upload_gbps,
                ft->upload_how);
    else
        fprintf(f, "analyze           %.1f ms on the host\n", ft->analyze_ms);
}

/* ---- the run: what each phase fills in ---------------------------------- */

/* The monitor's state: --monitor[=K] lines, or the terminal's progress line. */
typedef struct monitor_state {
    int progress;           /* a terminal and no --monitor: the one-line display */
    int shown;              /* the progress line is on the screen */
    long long next;         /* --monitor=K: the next iteration worth a line */
    double t0, r0;          /* wall clock at the solve's start (s), first residual */
    double after_s;         /* show the progress line after this long (1 s) */
    char spec[200];         /* --method NAME:...restart=M with M capped at n */
} monitor_state;

typedef struct run {
    opts o;
    monitor_state mon;
    int text;               /* print the text summary */
    FILE *rep;              /* summary, JSON, monitor: stdout, or stderr when -o/--history is '-' */
    sps_context *ctx;
    sps_solver *solver;
    sps_matrix *A;
    sps_matrix_source src;
    sps_features ft;
    sps_idx n;
    double *b, *x, *x_dense;
    int b_is_ones;
    int nrhs;               /* -b with k > 1 columns: a block solve (sps_solve_multi) */
    double *B, *X;          /* then: n x k column-major */
    sps_solve_info *infos;  /* and each column's info (r->info: the slowest column's) */
    sps_method method;
    char method_why[200];
    sps_operator *op;
    sps_operator_info oi;
    int have_payoff;        /* oi's payoff figures are filled (predicted by auto, or measured) */
    sps_precond *pc;
    double pc_apply_us;     /* measured after the solve (0: not measured) */
    double pc_spmv_us;      /* the SpMV it is counted in */
    int pc_reps;
    int strategy;           /* sps_solve_strategy runs the solve (auto or --fallback) */
    double bnorm;
    sps_solve_info info;
    double err_ones, verify_diff;
    const char *verify_note;
    int solved;             /* sps_solve ran: info holds its outcome */
    sps_idx inconsistent;   /* first empty row with b nonzero, or -1 */
    int mpi_rank, mpi_size, mpi_local; /* --mpi: this process in MPI_COMM_WORLD */
    int nwarn;
    char warnings[16][1200];
    char hint[600];         /* at most one, chosen at the end (choose_hint) */
    char error[1600];       /* the first error */
    int error_pending;      /* error not printed yet (an output write: after the summary) */
    int analyzed, info_done;
    double context_ms;      /* the context's creation (CUDA, kernels loaded) */
} run;

/* A warning or a note (kind): on stderr at once (unless -q) and in the JSON's
 * "warnings". */
static void tell(run *r, const char *kind, const char *fmt, va_list ap)
{
    char msg[1200];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (!r->o.quiet) fprintf(stderr, "spsolve: %s: %s\n", kind, msg);
    if (r->nwarn < (int)(sizeof r->warnings / sizeof *r->warnings))
        snprintf(r->warnings[r->nwarn++], sizeof r->warnings[0], "%s", msg);
}

static void warn(run *r, const char *fmt, ...) APP_PRINTF(2, 3);
static void warn(run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tell(r, "warning", fmt, ap);
    va_end(ap);
}

/* An error: on stderr, kept for the JSON's "error" (the first one wins);
 * returns the exit code rc. */
static int fail(run *r, int rc, const char *fmt, ...) APP_PRINTF(3, 4);
static int fail(run *r, int rc, const char *fmt, ...)
{
    char msg[1600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "spsolve: %s\n", msg);
    if (!r->error[0]) snprintf(r->error, sizeof r->error, "%s", msg);
    return rc;
}

/* Write the residual history as CSV (app_out's rule: whole or not at all). */
static int write_history(const char *path, const double *h, long long n)
{
    app_out out;
    if (app_out_open(&out, path) != 0) return -1;
    fprintf(out.f, "iteration,residual_norm\n");
    for (long long i = 0; i < n; i++) fprintf(out.f, "%lld,%.17g\n", i, h[i]);
    return app_out_close(&out);
}

/* The k solutions of a block solve: a Matrix Market array of n rows and k
 * columns when the name ends in .mtx, else one row of k numbers per line
 * ('-': stdout); whole or not at all (app_out). */
static int write_block(const char *path, const double *X, sps_idx n, int k)
{
    app_out out;
    size_t len = strlen(path);
    int mtx = len > 4 && !strcmp(path + len - 4, ".mtx");
    if (app_out_open(&out, path) != 0) return -1;
    if (mtx) fprintf(out.f, "%%%%MatrixMarket matrix array real general\n%d %d\n", n, k);
    for (size_t e = 0; e < (size_t)n * (size_t)k; e++) {
        size_t i = mtx ? e : e / (size_t)k, j = mtx ? 0 : e % (size_t)k;
        fprintf(out.f, "%.17g%s", X[mtx ? e : j * (size_t)n + i],
                mtx || j + 1 == (size_t)k ? "\n" : " ");
    }
    return app_out_close(&out);
}

/* x on stdout, as sps_vector_write writes a text file (-o -). */
static int write_x_stdout(const double *x, sps_idx n)
{
    app_out out;
    app_out_open(&out, "-");
    for (sps_idx i = 0; i < n; i++) fprintf(out.f, "%.17g\n", x[i]);
    return app_out_close(&out);
}

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The terminal's progress line: iteration, residual, mean rate per
 * iteration, time; rewritten in place. */
static void progress_line(run *r, int64_t it, double rnorm)
{
    double t = wall_s() - r->mon.t0;
    if (it == 0) r->mon.r0 = rnorm;
    if (t < r->mon.after_s || it == 0) return;
    double rate = r->mon.r0 > 0 && rnorm > 0 ? pow(rnorm / r->mon.r0, 1.0 / (double)it) : 0;
    fprintf(stderr, "\r  iteration %lld  rel %.3e  rate %.4f/it  %.1f s ", (long long)it,
            r->bnorm > 0 ? rnorm / r->bnorm : rnorm, rate, t);
    fflush(stderr);
    r->mon.shown = 1;
}

static void monitor_cb(void *user, int64_t it, double rnorm)
{
    run *r = user;
    if (r->mon.progress) {
        progress_line(r, it, rnorm);
        return;
    }
    if (it < r->mon.next) return;
    r->mon.next = ((long long)it / r->o.monitor + 1) * r->o.monitor;
    double bnorm = r->bnorm;
    fprintf(r->rep, "%8lld  rnorm %.6e  rel %.3e\n", (long long)it, rnorm, bnorm > 0 ? rnorm / bnorm : rnorm);
    fflush(r->rep);
}

/* --monitor lines, or on a terminal (stderr) the progress line; neither
 * with --json or -q. SPSOLVE_PROGRESS_MS sets the delay (default 1000). */
static void install_monitor(run *r)
{
    const char *ms = getenv("SPSOLVE_PROGRESS_MS");
    r->mon.after_s = ms && *ms ? atof(ms) / 1000.0 : 1.0;
    r->mon.progress = !r->o.monitor && isatty(fileno(stderr));
    if (r->o.json || r->o.quiet || (!r->o.monitor && !r->mon.progress)) return;
    r->mon.t0 = wall_s();
    sps_solver_set_monitor(r->solver, monitor_cb, r);
}

/* Clear the progress line once the solve is over. */
static void progress_end(run *r)
{
    if (r->mon.shown) fputs("\r\033[K", stderr);
    r->mon.shown = 0;
}

static void note(run *r, const char *fmt, ...) APP_PRINTF(2, 3);
static void note(run *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tell(r, "note", fmt, ap);
    va_end(ap);
}

/* GMRES's restart above n is capped at n (a Krylov space has at most n
 * dimensions), from --restart or --method gmres:restart=M. */
static void cap_restart(run *r)
{
    if (r->method != SPS_GMRES || r->n < 1 || r->o.restart <= r->n) return;
    note(r, "--restart %d is capped at n = %d", r->o.restart, (int)r->n);
    r->o.restart = (int)r->n;
    sps_solver_set_restart(r->solver, r->o.restart);
    const char *rs = r->o.method ? strstr(r->o.method, "restart=") : NULL;
    if (!rs) return;
    snprintf(r->mon.spec, sizeof r->mon.spec, "%.*srestart=%d%s", (int)(rs - r->o.method), r->o.method,
             r->o.restart, rs + 8 + strspn(rs + 8, "0123456789"));
    r->o.method = r->mon.spec;
}

/* A failed library call: the library's message, and the exit code of its class. */
static int fail_status(run *r, sps_status st, const char *what)
{
    int rc = EXIT_RUNTIME;
    if (st == SPS_ERR_PARSE || st == SPS_ERR_IO || st == SPS_ERR_INVALID_ARG) rc = EXIT_USAGE;
    else if (st == SPS_ERR_ZERO_PIVOT || st == SPS_ERR_UNSUPPORTED) rc = EXIT_NOT_CONVERGED;
    const char *m = r->ctx ? sps_last_error(r->ctx) : sps_last_error(NULL);
    return fail(r, rc, "%s: %s", what, m[0] ? m : sps_strerror(st));
}

static double nrm2(const double *x, long long n)
{
    double s = 0;
    for (long long i = 0; i < n; i++) s += x[i] * x[i];
    return sqrt(s);
}

/* ---- phase 1: context and solver settings -------------------------------- */

/* Why there is no GPU, without the library's own "no CUDA device (...)"
 * wrapper, so that the note is one level deep. */
static const char *gpu_absence(const char *msg)
{
    static char why[400];
    const char *pre = "no CUDA device (";
    size_t len = strlen(msg), plen = strlen(pre);
    if (len > plen + 1 && !strncmp(msg, pre, plen) && msg[len - 1] == ')')
        snprintf(why, sizeof why, "%.*s", (int)(len - plen - 1), msg + plen);
    else
        snprintf(why, sizeof why, "%s", msg);
    return why;
}

/* The context on the device asked for; -1 on success, else the exit code. */
static int open_context(run *r)
{
    char device_note[600] = "";
    /* CUDA loads each kernel at its first launch (lazy loading, the
     * default): 2-4 ms of a small solve's setup on an H100. Loading every
     * kernel with the context (CUDA_MODULE_LOADING=EAGER) takes that out
     * of the solve but makes the context 600 ms slower (250 -> 850 ms),
     * so the CLI leaves CUDA's default; context_ms reports the context. */
    const double t0 = wall_s();
    if (!strcmp(r->o.device, "cpu")) {
        sps_context_create(&r->ctx, SPS_DEVICE_HOST);
    } else if (sps_context_create(&r->ctx, r->mpi_local) != SPS_OK) {
        if (!strcmp(r->o.device, "gpu")) return fail(r, EXIT_RUNTIME, "--device gpu: %s", sps_last_error(NULL));
        snprintf(device_note, sizeof device_note, "no GPU: %s; using the host reference path",
                 gpu_absence(sps_last_error(NULL)));
        sps_context_create(&r->ctx, SPS_DEVICE_HOST);
    }
    r->context_ms = 1e3 * (wall_s() - t0);
    if (!r->ctx) return fail(r, EXIT_RUNTIME, "cannot create a context: %s", sps_last_error(NULL));
    if (r->o.threads && sps_context_set_threads(r->ctx, r->o.threads) != SPS_OK)
        return fail(r, EXIT_USAGE, "--threads: %s", sps_last_error(r->ctx));
    if (device_note[0] && !r->o.quiet) fprintf(r->o.json ? stderr : r->rep, "note: %s\n", device_note);
    return -1;
}

/* The solver with the options' settings. The library judges the values (the
 * --dtol rule is sps_solver_set_dtol's): a refusal is a usage error. */
static int configure_solver(run *r)
{
    const opts *o = &r->o;
    sps_status st = sps_solver_create(r->ctx, &r->solver);
    if (st != SPS_OK) return fail_status(r, st, "cannot create the solver");
    struct { sps_status st; const char *opt; } set[] = {
        {sps_solver_set_rtol(r->solver, o->rtol), "--rtol"},
        {sps_solver_set_atol(r->solver, o->atol), "--atol"},
        {sps_solver_set_dtol(r->solver, o->dtol), "--dtol"},
        {sps_solver_set_maxit(r->solver, o->maxit), "--maxit"},
        {sps_solver_set_restart(r->solver, o->restart), "--restart"},
        {sps_solver_set_history(r->solver, o->hist_path != NULL), "--history"},
        {o->check_every ? sps_solver_set_check_interval(r->solver, o->check_every) : SPS_OK, "--check-every"},
    };
    for (size_t i = 0; i < sizeof set / sizeof *set; i++)
        if (set[i].st != SPS_OK) {
            fail(r, EXIT_USAGE, "%s: %s", set[i].opt, sps_last_error(r->ctx));
            fprintf(stderr, "(run spsolve --help for the options)\n");
            return EXIT_USAGE;
        }
    return -1;
}

/* ---- phase 2: read ----------------------------------------------------- */

static void print_info(const run *r)
{
    if (r->o.json) {
        int first = 1;
        fprintf(r->rep, "{");
        features_json(r->rep, &r->src, &r->ft, &first);
        fprintf(r->rep, "}\n");
    } else {
        features_text(r->rep, &r->src, &r->ft);
    }
}

/* Read or generate A, analyze it, save it if asked. */
static int read_matrix(run *r)
{
    const opts *o = &r->o;
    sps_status st = o->A_path ? sps_matrix_read(r->ctx, o->A_path, &r->A)
                              : sps_matrix_generate(r->ctx, o->gen, &r->A);
    if (st != SPS_OK) {
        int rc = fail_status(r, st, o->A_path ? "cannot read the matrix" : "cannot generate the matrix");
        return rc == EXIT_RUNTIME ? EXIT_RUNTIME : EXIT_USAGE;
    }
    sps_matrix_get_source(r->A, &r->src);
    st = sps_matrix_analyze(r->ctx, r->A, &r->ft);
    if (st != SPS_OK) return fail_status(r, st, "analysis failed");
    r->analyzed = 1;
    if (o->save_path) {
        st = sps_matrix_write(r->ctx, r->A, o->save_path);
        if (st != SPS_OK) {
            int rc = fail_status(r, st, "cannot write --save-matrix");
            return st == SPS_ERR_IO ? EXIT_RUNTIME : rc;
        }
    }
    if (r->src.pattern) warn(r, "%s is a pattern matrix: every value is taken as 1", r->src.name);
    r->n = r->ft.rows;
    if (!o->info && r->ft.rows != r->ft.cols)
        return fail(r, EXIT_USAGE, "%s: the matrix is %d x %d; a linear solve needs a square matrix",
                    r->src.name, r->ft.rows, r->ft.cols);
    return -1;
}

/* -b as a Matrix Market array of n rows and k > 1 columns (read as a dense
 * matrix): r->B column-major, r->b its first column. 0 when it is one;
 * -1 leaves sps_vector_read's error in place. */
static int read_block(run *r)
{
    sps_matrix *M = NULL;
    const sps_idx *rp, *ci;
    const double *v;
    sps_status st = sps_matrix_read(r->ctx, r->o.b_path, &M);
    sps_idx n = r->n, k = st == SPS_OK ? sps_matrix_cols(M) : 0;
    if (st != SPS_OK || sps_matrix_rows(M) != n || k < 2 || k > 4096 ||
        sps_matrix_csr(M, &rp, &ci, &v) != SPS_OK) {
        double *tmp = NULL;
        sps_idx len;
        sps_matrix_destroy(M);
        /* not a block: read it as a vector again, for that error message */
        if (sps_vector_read(r->ctx, r->o.b_path, n, &tmp, &len) == SPS_OK) sps_free(tmp);
        return -1;
    }
    r->B = calloc((size_t)n * (size_t)k + 1, sizeof *r->B);
    r->X = calloc((size_t)n * (size_t)k + 1, sizeof *r->X);
    r->b = malloc(sizeof(double) * (size_t)(n ? n : 1));
    r->infos = calloc((size_t)k, sizeof *r->infos);
    if (!r->B || !r->X || !r->b || !r->infos) {
        sps_matrix_destroy(M);
        return -1;
    }
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) r->B[(size_t)ci[p] * (size_t)n + (size_t)i] = v[p];
    memcpy(r->b, r->B, sizeof(double) * (size_t)n);
    r->nrhs = (int)k;
    sps_matrix_destroy(M);
    return 0;
}

/* b (default A * ones) and x0 (default zeros). */
static int read_vectors(run *r)
{
    sps_idx len, n = r->n;
    sps_status st;
    if (r->o.b_path) {
        st = sps_vector_read(r->ctx, r->o.b_path, n, &r->b, &len);
        if (st != SPS_OK && read_block(r) == 0) st = SPS_OK;
        if (st != SPS_OK) return fail_status(r, st, "cannot read -b");
    } else {
        r->b = malloc(sizeof(double) * (size_t)(n ? n : 1));
        double *ones = malloc(sizeof(double) * (size_t)(n ? n : 1));
        if (!r->b || !ones) {
            free(ones);
            return fail(r, EXIT_RUNTIME, "out of memory");
        }
        for (sps_idx i = 0; i < n; i++) ones[i] = 1.0;
        sps_matrix_spmv_host(r->A, 1.0, ones, 0.0, r->b);
        free(ones);
        r->b_is_ones = 1;
    }
    if (r->o.x0_path) {
        st = sps_vector_read(r->ctx, r->o.x0_path, n, &r->x, &len);
        if (st != SPS_OK) return fail_status(r, st, "cannot read --x0");
    } else {
        /* zeros written, not calloc's lazy pages: the solution comes back
         * into memory already mapped (the library copies into fresh pages
         * too, at the price of their first-touch faults) */
        r->x = malloc((size_t)(n ? n : 1) * sizeof(double));
        if (!r->x) return fail(r, EXIT_RUNTIME, "out of memory");
        memset(r->x, 0, (size_t)(n ? n : 1) * sizeof(double));
    }
    r->bnorm = nrm2(r->b, n);
    return -1;
}

/* ---- phase 3: configure (method, operator, preconditioner) ---------------- */

/* Facts the analysis can state before the solve (the advice comes once, as
 * the hint after a failure). */
static void method_warnings(run *r)
{
    const sps_features *ft = &r->ft;
    const char *name = app_base_name(r->src.name);
    if (r->method == SPS_CG && !ft->symmetric)
        warn(r, "CG needs a symmetric positive definite matrix, and %s is nonsymmetric "
                "(||A-A'||/||A|| = %.2g); running it anyway", name, ft->asymmetry);
    else if (r->method == SPS_CG && (ft->negative_diagonal || ft->zero_diagonal || ft->missing_diagonal))
        warn(r, "%s has %d negative, %d zero and %d missing diagonal entries: it is not positive "
                "definite, and CG may break down", name, ft->negative_diagonal, ft->zero_diagonal,
             ft->missing_diagonal);
    if (strcmp(r->o.precond, "none") && strcmp(r->o.precond, "auto") &&
        (ft->missing_diagonal || ft->zero_diagonal))
        warn(r, "%s has %d rows without a diagonal entry and %d zero diagonal entries: %s divides "
                "by the diagonal and will break down", name, ft->missing_diagonal, ft->zero_diagonal,
             r->o.precond);
}

/* The method asked for, else the library's suggestion from the features
 * (auto: the strategy's first guess; the strategy decides in solve()). */
static void choose_method(run *r)
{
    r->strategy = !r->o.method || !strcmp(r->o.precond, "auto") || r->o.fallback;
    if (r->strategy) {
        char why[160];
        sps_method_suggest(&r->ft, &r->method, why, sizeof why);
        snprintf(r->method_why, sizeof r->method_why, "%s", r->o.method ? "as asked" : "auto");
        if (r->o.method) method_base(r->o.method, &r->method);
        method_warnings(r);
        return;
    }
    if (r->o.method) {
        method_base(r->o.method, &r->method);
        snprintf(r->method_why, sizeof r->method_why, "as asked");
    } else {
        char why[160];
        sps_method_suggest(&r->ft, &r->method, why, sizeof why);
        snprintf(r->method_why, sizeof r->method_why, "default for a %s", why);
    }
    method_warnings(r);
}

/* An empty row i with b_i != 0 makes A x = b inconsistent: no x solves it,
 * and no method can bring the residual below |b_i| / ||b||. Said before the
 * solve, naming the first such row. */
static void warn_inconsistent(run *r)
{
    const sps_idx *rp;
    r->inconsistent = -1;
    if (r->ft.empty_rows == 0 || sps_matrix_csr(r->A, &rp, NULL, NULL) != SPS_OK) return;
    sps_idx first = -1, count = 0;
    for (sps_idx i = 0; i < r->n; i++)
        if (rp[i + 1] == rp[i] && r->b[i] != 0) {
            if (first < 0) first = i;
            count++;
        }
    if (first < 0) return;
    r->inconsistent = first;
    warn(r, "the system is inconsistent: row %d (1-based %d) of A is empty but b[%d] = %g (%d such "
            "row%s): no x solves A x = b, and the true relative residual cannot fall below %.3g",
         first, first + 1, first, r->b[first], count, count == 1 ? "" : "s",
         r->bnorm > 0 ? fabs(r->b[first]) / r->bnorm : 0.0);
}

/* SpMVs the operator is expected to serve: a rough count of the iterations a
 * solve of this size needs (100 + 4 n^(1/3): poisson3d:160 takes 368 with CG,
 * the estimate says 740), capped by --maxit, times the method's SpMVs per
 * iteration. It weighs auto's conversion cost; with the device conversion
 * (50-120 SpMVs on the large matrices) the choice is rarely sensitive to it. */
static int64_t expected_spmvs(const run *r)
{
    double its = 100.0 + 4.0 * cbrt((double)(r->n > 0 ? r->n : 1)); /* poisson3d:160: 740 */
    if (its > (double)r->o.maxit) its = (double)r->o.maxit;
    if (its < 1) its = 1;
    return (int64_t)its * (r->method == SPS_CG ? 1 : 2);
}

/* -b with k > 1 columns: one block solve (sps_solve_multi). auto's
 * method is CG for a symmetric matrix, else BiCGSTAB; auto's preconditioner Jacobi when the diagonal is complete
 * and positive, else none; auto's SpMV csr-vector (its block kernel sums as
 * its SpMV, doc/spmm.md); --x0 does not apply (zeros). */
static int block_plan(run *r)
{
    if (r->nrhs < 2) return -1;
    const sps_features *ft = &r->ft;
    if (r->o.method && r->method != SPS_CG && r->method != SPS_BICGSTAB)
        return fail(r, EXIT_USAGE, "-b has %d columns: block solves run cg or bicgstab (or auto)",
                    r->nrhs);
    if (!r->o.method) r->method = r->ft.symmetric ? SPS_CG : SPS_BICGSTAB;
    r->strategy = 0;
    snprintf(r->method_why, sizeof r->method_why, "block solve of %d right-hand sides", r->nrhs);
    if (!strcmp(r->o.precond, "auto"))
        r->o.precond = ft->missing_diagonal || ft->zero_diagonal || ft->negative_diagonal ? "none"
                                                                                         : "jacobi";
    if (!strcmp(r->o.spmv, "auto")) r->o.spmv = "csr-vector"; /* sums as its SpMV: doc/spmm.md */
    if (r->o.x0_path) warn(r, "--x0 does not apply to a block solve: the initial guesses are zero");
    return -1;
}

/* The operator for --spmv. The library decides: auto weighs the formats, and
 * a named backend that refuses the matrix falls back to csr-vector (the
 * info's reason says so). The payoff figures are auto's predictions, or
 * measured by the library when it has none (a named backend, the host). */
static int build_operator(run *r)
{
    sps_operator_opts oo;
    sps_operator_opts_default(&oo);
    oo.fallback = 1;
    oo.features = &r->ft;
    oo.expected_spmvs = expected_spmvs(r);
    sps_status st = sps_operator_create(r->ctx, r->A, r->o.spmv, &oo, &r->op);
    if (st != SPS_OK) return fail_status(r, st, "cannot build the SpMV operator");
    sps_operator_get_info(r->op, &r->oi);
    if (strcmp(r->o.spmv, "auto") && strcmp(r->o.spmv, "tune") && r->oi.reason[0] &&
        strstr(r->oi.reason, "fell back"))
        warn(r, "%s", r->oi.reason);
    r->have_payoff = r->oi.payoff[0] != 0; /* else measured after the solve (measure_payoff) */
    return -1;
}

/* The payoff figures auto did not predict (a named backend, the host, or auto
 * without a dia or drm decision), measured after the solve so that the solve's time
 * to solution carries neither the measurement nor its warm-up of the kernels. */
static void measure_payoff(run *r)
{
    if (!r->have_payoff && r->op && sps_operator_measure_payoff(r->op, r->A, &r->oi) == SPS_OK)
        r->have_payoff = 1;
}

/* --nullspace rbm: amg again with elasticity's 6 rigid-body modes. */
static sps_status set_rbm(run *r)
{
    double *B = malloc((size_t)r->n * 6 * sizeof *B + 1);
    if (!B) return SPS_ERR_NO_MEMORY;
    sps_status st = sps_matrix_generate_rbm(r->ctx, r->o.gen, r->n, B);
    if (st == SPS_OK) st = sps_precond_set_nullspace(r->pc, r->A, 3, 6, B);
    free(B);
    return st;
}

static int build_precond(run *r)
{
    if (r->strategy) return -1; /* the strategy sets its preconditioners up */
    sps_status st = sps_precond_create_ex(r->ctx, r->A, r->op, r->o.precond, &r->pc);
    if (st == SPS_OK && r->o.nullspace) st = set_rbm(r);
    if (st == SPS_OK) return -1;
    if (st != SPS_ERR_ZERO_PIVOT && st != SPS_ERR_UNSUPPORTED)
        return fail_status(r, st, "preconditioner setup failed");
    /* It cannot be built on this matrix: its own class. The library's advice
     * after "; try" is left to the one hint (choose_hint), which knows what
     * was just tried. */
    char msg[1200];
    snprintf(msg, sizeof msg, "%s", sps_last_error(r->ctx));
    char *advice = strstr(msg, "; try ");
    if (advice) *advice = 0;
    return fail(r, EXIT_PRECOND, "%s cannot be built on this matrix: %s", r->o.precond, msg);
}

/* ---- phase 4: solve ------------------------------------------------------ */

static void print_header(const run *r)
{
    FILE *f = r->rep;
    const sps_features *ft = &r->ft;
    fprintf(f, "spsolve %s on %s\n", sps_version(), sps_context_device_name(r->ctx));
    fprintf(f, "matrix    %s: %d x %d, %lld nnz, %s, rows %d..%d (mean %.1f), %d diagonals, "
               "%d without diagonal entry\n",
            app_base_name(r->src.name), r->n, r->n, (long long)ft->nnz,
            ft->symmetric ? "symmetric" : "nonsymmetric", ft->row_min, ft->row_max, ft->row_mean,
            ft->diagonals, ft->missing_diagonal);
    if (r->b_is_ones) fprintf(f, "rhs       b = A * ones (no -b given): the exact solution is all ones\n");
    fprintf(f, "backend   %s%s%s\n", r->oi.backend, r->oi.reason[0] ? ": " : "", r->oi.reason);
    if (r->oi.detail[0] && r->oi.on_gpu) fprintf(f, "          %s\n", r->oi.detail); /* launch geometry */
    if (r->strategy) {
        fprintf(f, "method    %s, precond %s: the plans follow the features, with fallbacks%s; rtol %g, "
                   "atol %g, maxit %lld per attempt\n", r->o.method ? r->o.method : "auto", r->o.precond,
                r->o.fallback ? " (--fallback)" : "", r->o.rtol, r->o.atol, r->o.maxit);
        fflush(f);
        return;
    }
    fprintf(f, "method    %s", sps_method_name(r->method));
    if (r->method == SPS_GMRES) fprintf(f, "(%d)", r->o.restart);
    fprintf(f, " (%s), precond %s, rtol %g, atol %g, maxit %lld\n", r->method_why, r->o.precond,
            r->o.rtol, r->o.atol, r->o.maxit);
    for (const char *d = sps_precond_describe(r->pc), *e; *d; d = *e ? e + 1 : e) {
        e = strchr(d, '\n');
        if (!e) e = d + strlen(d);
        fprintf(f, "          %.*s\n", (int)(e - d), d);
    }
    fflush(f);
}

/* The error against the known solution (b = A * ones) and --verify's dense
 * comparison. */
static void check_solution(run *r)
{
    sps_idx n = r->n;
    r->err_ones = r->verify_diff = -1;
    if (r->b_is_ones) {
        double s = 0;
        for (sps_idx i = 0; i < n; i++) s += (r->x[i] - 1.0) * (r->x[i] - 1.0);
        r->err_ones = n ? sqrt(s / n) : 0;
    }
    if (!r->o.verify) return;
    if (n > 5000) {
        r->verify_note = "skipped: n > 5000";
        return;
    }
    r->x_dense = malloc(sizeof(double) * (size_t)(n ? n : 1));
    sps_status vs = r->x_dense ? sps_dense_solve(r->ctx, r->A, r->b, r->x_dense) : SPS_ERR_NO_MEMORY;
    if (vs != SPS_OK) {
        r->verify_note = sps_last_error(r->ctx);
        return;
    }
    double d = 0, s = 0;
    for (sps_idx i = 0; i < n; i++) {
        d += (r->x[i] - r->x_dense[i]) * (r->x[i] - r->x_dense[i]);
        s += r->x_dense[i] * r->x_dense[i];
    }
    r->verify_diff = s > 0 ? sqrt(d / s) : sqrt(d);
}

/* The preconditioner's apply in SpMVs of the solve's operator, timed after
 * the solve (about 60 ms of applies; none for "none"): issue 8's units. */
static void measure_precond(run *r)
{
    sps_timing t1, t, ts;
    if (!r->pc || !strcmp(r->o.precond, "none") || sps_precond_time(r->pc, 1, &t1) != SPS_OK) return;
    int reps = t1.median_us > 0 ? (int)(60000.0 / t1.median_us) : 50;
    reps = reps < 3 ? 3 : reps > 50 ? 50 : reps;
    if (sps_precond_time(r->pc, reps, &t) != SPS_OK) return;
    r->pc_spmv_us = r->have_payoff ? r->oi.spmv_us : 0;
    if (!(r->pc_spmv_us > 0) && sps_operator_time(r->op, reps, 2, &ts) == SPS_OK) r->pc_spmv_us = ts.median_us;
    if (!(r->pc_spmv_us > 0)) return;
    r->pc_apply_us = t.median_us;
    r->pc_reps = reps;
}

/* ---- the automatic strategy (sps_solve_strategy) ------------------------- */

/* The attempts' preconditioner setups (each spec once). */
static double strategy_precond_ms(const sps_solve_info *in)
{
    double ms = 0;
    for (int i = 0; i < in->nattempts; i++) ms += in->attempts[i].precond_ms;
    return ms;
}

/* eps * ||A||_inf * ||x|| / ||b||: the relative residual rounding lets x reach. */
static double attainable(const run *r)
{
    const sps_idx *rp, *ci;
    const double *v;
    if (r->info.attainable > 0) return r->info.attainable;
    if (!r->A || r->bnorm <= 0 || sps_matrix_csr(r->A, &rp, &ci, &v) != SPS_OK) return 0;
    double an = 0;
    for (sps_idx i = 0; i < r->n; i++) {
        double s = 0;
        for (sps_idx k = rp[i]; k < rp[i + 1]; k++) s += fabs(v[k]);
        an = s > an ? s : an;
    }
    return DBL_EPSILON * an * nrm2(r->x, r->n) / r->bnorm;
}

/* The attempts, one line each, and why the winner won. */
static void strategy_text(const run *r)
{
    FILE *f = r->rep;
    const sps_solve_info *in = &r->info;
    if (!r->strategy) return;
    fprintf(f, "strategy  %s: %d attempt%s, %lld iterations in all, %.1f ms\n", in->plan_why,
            in->nattempts, in->nattempts == 1 ? "" : "s", (long long)in->total_iterations, in->total_ms);
    for (int i = 0; i < in->nattempts; i++) {
        const sps_attempt *a = &in->attempts[i];
        fprintf(f, "  %s %d. %s + %s: %s, %lld iterations, relres %.2e, %.1f ms (precond %.1f): %s\n",
                i == in->winner ? "*" : " ", i + 1, a->method, a->precond,
                a->status == SPS_OK ? sps_reason_str(a->reason) : sps_strerror(a->status),
                (long long)a->iterations, a->true_rel_rnorm, a->solve_ms + a->precond_ms,
                a->precond_ms, a->note);
    }
}

static void strategy_json(const run *r, int *first)
{
    FILE *f = r->rep;
    const sps_solve_info *in = &r->info;
    json_num(f, "attainable_rel_rnorm", attainable(r), first);
    if (r->nrhs > 1 && r->solved) { /* a block solve: each column */
        fprintf(f, ", \"columns\": [");
        for (int j = 0; j < r->nrhs; j++) {
            int fc = 1;
            fprintf(f, "%s{", j ? ", " : "");
            json_str(f, "reason", sps_reason_str(r->infos[j].reason), &fc);
            json_int(f, "iterations", (long long)r->infos[j].iterations, &fc);
            json_num(f, "true_rel_rnorm", r->infos[j].true_rel_rnorm, &fc);
            fprintf(f, "}");
        }
        fprintf(f, "]");
    }
    if (!r->strategy) return;
    json_str(f, "strategy", in->plan_why, first);
    json_int(f, "winner", in->winner, first);
    json_int(f, "total_iterations", (long long)in->total_iterations, first);
    json_num(f, "strategy_ms", in->total_ms, first);
    fprintf(f, ", \"attempts\": [");
    for (int i = 0; i < in->nattempts; i++) {
        const sps_attempt *a = &in->attempts[i];
        int fa = 1;
        fprintf(f, "%s{", i ? ", " : "");
        json_str(f, "method", a->method, &fa);
        json_str(f, "precond", a->precond, &fa);
        json_str(f, "status", sps_strerror(a->status), &fa);
        json_str(f, "reason", a->status == SPS_OK ? sps_reason_str(a->reason) : "not run", &fa);
        json_int(f, "iterations", (long long)a->iterations, &fa);
        json_num(f, "true_rel_rnorm", a->true_rel_rnorm, &fa);
        json_num(f, "precond_ms", a->precond_ms, &fa);
        json_num(f, "solve_ms", a->solve_ms, &fa);
        json_str(f, "note", a->note, &fa);
        fprintf(f, "}");
    }
    fprintf(f, "]");
}

/* The solve through the strategy; the winner's method and precond become
 * the run's (for the summary and the hint). */
static int solve_strategy(run *r)
{
    sps_strategy how;
    sps_strategy_default(&how);
    how.method = r->o.method ? r->o.method : "auto";
    how.precond = r->o.precond;
    how.fallback = r->o.fallback;
    how.features = &r->ft;
    sps_status st = sps_solve_strategy(r->solver, r->A, r->op, &how, r->b, r->x, &r->info);
    if (st == SPS_ERR_ZERO_PIVOT || st == SPS_ERR_UNSUPPORTED)
        return fail(r, EXIT_PRECOND, "%s cannot be built on this matrix: %s", r->o.precond,
                    sps_last_error(r->ctx));
    if (st != SPS_OK) return fail_status(r, st, "solve failed");
    if (r->info.winner >= 0) {
        static char pcname[48];
        const sps_attempt *w = &r->info.attempts[r->info.winner];
        method_base(w->method, &r->method);
        if (spec_restart(w->method)) r->o.restart = spec_restart(w->method);
        snprintf(pcname, sizeof pcname, "%s", w->precond);
        r->o.precond = pcname;
    }
    r->solved = 1;
    check_solution(r);
    return r->info.reason > 0 ? EXIT_CONVERGED : EXIT_NOT_CONVERGED;
}

/* The block solve; r->info becomes the slowest (or first failed) column's,
 * r->b and r->x that column's, for the summary and --verify. */
static int solve_block(run *r)
{
    sps_idx n = r->n;
    int k = r->nrhs, worst = 0, conv = 1;
    if (sps_solver_set_method(r->solver, r->method) != SPS_OK)
        return fail(r, EXIT_USAGE, "--method: %s", sps_last_error(r->ctx));
    if (r->text) print_header(r);
    sps_status st = sps_solve_multi(r->solver, r->op, r->pc, r->B, r->X, k, r->infos);
    if (st != SPS_OK) return fail_status(r, st, "block solve failed");
    for (int j = 0; j < k; j++) {
        const sps_solve_info *in = &r->infos[j];
        if (conv && in->reason <= 0) worst = j, conv = 0;
        else if (conv && in->iterations > r->infos[worst].iterations) worst = j;
        if (r->text)
            fprintf(r->rep, "column %d: %s, %lld iterations, true relative residual %.3g\n", j,
                    sps_reason_str(in->reason), (long long)in->iterations, in->true_rel_rnorm);
    }
    r->info = r->infos[worst];
    memcpy(r->b, r->B + (size_t)worst * (size_t)n, sizeof(double) * (size_t)n);
    memcpy(r->x, r->X + (size_t)worst * (size_t)n, sizeof(double) * (size_t)n);
    r->solved = 1;
    check_solution(r);
    return conv ? EXIT_CONVERGED : EXIT_NOT_CONVERGED;
}

/* --gpus N: distributed CG on N ranks of this process (doc/dist.md). */
static int solve_dist(run *r)
{
    sps_dist_solve_opts o;
    sps_dist_solve_opts_default(&o);
    if (r->o.method && strcmp(r->o.method, "cg") != 0 && strcmp(r->o.method, "bicgstab") != 0)
        return fail(r, EXIT_USAGE, "--%s: the distributed solve runs cg or bicgstab, not %s",
                    r->o.mpi ? "mpi" : "gpus", r->o.method);
    o.method = r->o.method && !strcmp(r->o.method, "bicgstab") ? SPS_BICGSTAB : SPS_CG;
    if (strcmp(r->o.precond, "auto") != 0 && strcmp(r->o.precond, "none") != 0 && strcmp(r->o.precond, "jacobi") != 0)
        return fail(r, EXIT_USAGE, "--gpus: the distributed solve takes --precond none or jacobi, not %s", r->o.precond);
    if (!sps_context_on_gpu(r->ctx) && strcmp(r->o.device, "cpu") != 0)
        return fail(r, EXIT_RUNTIME, "--%s: no GPU on this machine (--device cpu runs host ranks)",
                    r->o.mpi ? "mpi" : "gpus");
    o.precond = strcmp(r->o.precond, "jacobi") == 0 ? "jacobi" : "none";
    o.rtol = r->o.rtol;
    o.atol = r->o.atol;
    o.dtol = r->o.dtol;
    o.maxit = r->o.maxit;
    r->strategy = 0;
    int ranks = r->o.mpi ? r->mpi_size : r->o.gpus;
    snprintf(r->oi.backend, sizeof r->oi.backend, "dist:%d", ranks);
    snprintf(r->oi.reason, sizeof r->oi.reason, "%d %s, %s with %s, local rows in CSR", ranks,
             r->o.mpi ? "MPI processes" : "ranks", sps_method_name(o.method), o.precond);
    if (r->text) print_header(r);
    sps_status st = r->o.mpi ? sps_dist_solve_world(r->ctx, r->A, &o, r->b, r->x, &r->info)
                             : sps_dist_solve_ranks(r->ctx, r->A, r->o.gpus, &o, r->b, r->x, &r->info);
    if (st != SPS_OK) return fail_status(r, st, r->o.mpi ? "--mpi" : "--gpus");
    r->solved = 1;
    check_solution(r);
    return r->info.reason > 0 ? EXIT_CONVERGED : EXIT_NOT_CONVERGED;
}

static int solve(run *r)
{
    if (r->o.gpus || r->o.mpi) return solve_dist(r);
    if (r->nrhs > 1) return solve_block(r);
    if (r->strategy) {
        install_monitor(r); /* --monitor lines and the progress line, every attempt */
        if (r->text) print_header(r);
        return solve_strategy(r);
    }
    sps_status ms = r->o.method && strchr(r->o.method, ':')
                        ? sps_solver_set_method_name(r->solver, r->o.method)
                        : sps_solver_set_method(r->solver, r->method);
    if (ms != SPS_OK) return fail(r, EXIT_USAGE, "--method: %s", sps_last_error(r->ctx));
    install_monitor(r);
    if (r->text) print_header(r);
    sps_status st = sps_solve(r->solver, r->op, r->pc, r->b, r->x, &r->info);
    if (st != SPS_OK) return fail_status(r, st, "solve failed");
    r->solved = 1;
    check_solution(r);
    measure_payoff(r);
    measure_precond(r);
    return r->info.reason > 0 ? EXIT_CONVERGED : EXIT_NOT_CONVERGED;
}

/* -o and --history, after the solve whatever its outcome (x is the iterate
 * the library returned). A failure is kept in error and printed after the
 * summary. A write error (a full disk) is a runtime failure; an x that is
 * not finite, which only a failed solve returns, keeps its status. */
static int write_outputs(run *r, int rc)
{
    const opts *o = &r->o;
    int bad = 0;
    char msg[1600] = "";
    if (o->out_path && r->nrhs > 1) {
        if (write_block(o->out_path, r->X, r->n, r->nrhs) != 0) {
            snprintf(msg, sizeof msg, "cannot write -o: %s: %s", o->out_path, strerror(errno));
            bad = 1;
        }
    } else if (o->out_path && !strcmp(o->out_path, "-")) {
        if (write_x_stdout(r->x, r->n) != 0) {
            snprintf(msg, sizeof msg, "cannot write -o: stdout: %s", strerror(errno));
            bad = 1;
        }
    } else if (o->out_path) {
        sps_status st = sps_vector_write(r->ctx, o->out_path, r->x, r->n);
        if (st != SPS_OK) {
            snprintf(msg, sizeof msg, "cannot write -o: %s", sps_last_error(r->ctx));
            bad = st == SPS_ERR_INVALID_ARG ? 2 : 1; /* 2: x is not finite (a failed solve) */
        }
    }
    if (!bad && o->hist_path && write_history(o->hist_path, r->info.history, r->info.history_len) != 0) {
        snprintf(msg, sizeof msg, "cannot write %s: %s", strcmp(o->hist_path, "-") ? o->hist_path : "stdout",
                 strerror(errno));
        bad = 1;
    }
    if (!bad) return rc;
    snprintf(r->error, sizeof r->error, "%s", msg);
    r->error_pending = 1;
    return bad == 2 && rc != EXIT_CONVERGED ? rc : EXIT_RUNTIME;
}

/* ---- phase 5: report ------------------------------------------------------ */

/* Times and payoff figures derived from the phases. */
typedef struct derived {
    double precond_ms, total_ms, setup_ms, solve_ms;
} derived;

static derived derive(const run *r)
{
    derived d;
    const sps_operator_info *oi = &r->oi;
    const sps_solve_info *in = &r->info;
    d.precond_ms = r->strategy ? strategy_precond_ms(in) : sps_precond_setup_ms(r->pc);
    /* setup: everything after the matrix is in host memory and before the
     * first iteration; solve: setup and the iterations and the finish. */
    d.setup_ms = r->ft.analyze_ms + oi->select_ms + oi->convert_ms + oi->upload_ms + d.precond_ms +
                 in->setup_ms;
    d.solve_ms = d.setup_ms + in->iterate_ms + in->finish_ms;
    if (r->strategy) /* every attempt, setups included */
        d.solve_ms = r->ft.analyze_ms + oi->select_ms + oi->convert_ms + oi->upload_ms + in->total_ms;
    d.total_ms = r->src.read_ms + d.solve_ms;
    return d;
}

/* count / the iterations (0 when none ran): the syncs' per-iteration rates. */
static double per_iteration(const sps_solve_info *in, int64_t count)
{
    return in->iterations ? (double)count / (double)in->iterations : 0.0;
}

static void report_json_result(const run *r, const derived *d, int *first)
{
    FILE *f = r->rep;
    const sps_solve_info *in = &r->info;
    json_str(f, "reason", sps_reason_str(in->reason), first);
    json_int(f, "reason_code", in->reason, first);
    json_bool(f, "converged", in->reason > 0, first);
    json_int(f, "iterations", (long long)in->iterations, first);
    json_int(f, "restarts", (long long)in->restarts, first);
    json_num(f, "bnorm", in->bnorm, first);
    json_num(f, "r0norm", in->r0norm, first);
    json_num(f, "rnorm", in->rnorm, first);
    json_num(f, "true_rnorm", in->true_rnorm, first);
    json_num(f, "rel_rnorm", in->rel_rnorm, first);
    json_num(f, "true_rel_rnorm", in->true_rel_rnorm, first);
    if (r->b_is_ones) json_num(f, "error_rms_vs_ones", r->err_ones, first);
    if (r->verify_diff >= 0) json_num(f, "verify_rel_diff", r->verify_diff, first);
    json_num(f, "select_ms", r->oi.select_ms, first);
    json_num(f, "convert_ms", r->oi.convert_ms, first);
    json_num(f, "upload_ms", r->oi.upload_ms, first);
    json_int(f, "device_bytes", (long long)r->oi.device_bytes, first);
    json_num(f, "precond_setup_ms", d->precond_ms, first);
    json_num(f, "solve_setup_ms", in->setup_ms, first);
    json_num(f, "iterate_ms", in->iterate_ms, first);
    json_num(f, "per_iter_ms", in->per_iter_ms, first);
    json_str(f, "engine", in->engine ? in->engine : "classic", first);
    json_int(f, "engine_cluster", in->engine_cluster, first);
    json_num(f, "bytes_per_iter", in->bytes_per_iter, first);
    json_num(f, "floor_per_iter_ms", in->floor_per_iter_ms, first);
    json_num(f, "floor_fraction", in->floor_fraction, first);
    json_num(f, "finish_ms", in->finish_ms, first);
    json_num(f, "total_ms", d->total_ms, first);
    json_num(f, "context_ms", r->context_ms, first);
    json_num(f, "setup_ms", d->setup_ms, first);
    json_num(f, "solve_ms", d->solve_ms, first);
    json_int(f, "host_syncs", (long long)in->host_syncs, first);
    json_num(f, "syncs_per_iter", per_iteration(in, in->host_syncs), first);
    json_int(f, "steady_syncs", (long long)in->steady_syncs, first);
    json_num(f, "steady_syncs_per_iter", per_iteration(in, in->steady_syncs), first);
    json_int(f, "spmvs", (long long)in->spmvs, first);
    json_int(f, "precond_applies", (long long)in->precond_applies, first);
    strategy_json(r, first);
}

static void report_json_end(const run *r, int rc, int *first)
{
    FILE *f = r->rep;
    fprintf(f, "%s\"error\": ", *first ? "" : ", ");
    app_json_string_or_null(f, r->error);
    fprintf(f, ", \"warnings\": [");
    for (int i = 0; i < r->nwarn; i++) {
        fprintf(f, "%s", i ? ", " : "");
        app_json_string(f, r->warnings[i]);
    }
    fprintf(f, "], \"hints\": [");
    if (r->hint[0]) app_json_string(f, r->hint);
    fprintf(f, "], \"exit_status\": %d}\n", rc);
}

static void report_json(const run *r, const derived *d, int rc)
{
    FILE *f = r->rep;
    int first = 1;
    fprintf(f, "{");
    json_str(f, "version", sps_version(), &first);
    json_str(f, "device", sps_context_device_name(r->ctx), &first);
    json_bool(f, "on_gpu", sps_context_on_gpu(r->ctx), &first);
    features_json(f, &r->src, &r->ft, &first);
    json_str(f, "method", sps_method_name(r->method), &first);
    json_int(f, "restart", r->o.restart, &first);
    json_str(f, "precond", r->o.precond, &first);
    json_str(f, "spmv", r->oi.backend, &first);
    json_str(f, "spmv_reason", r->oi.reason, &first);
    json_str(f, "spmv_fallback", strstr(r->oi.reason, "fell back") ? r->oi.reason : "", &first);
    json_num(f, "rtol", r->o.rtol, &first);
    json_num(f, "atol", r->o.atol, &first);
    json_int(f, "maxit", r->o.maxit, &first);
    report_json_result(r, d, &first);
    if (r->pc_apply_us > 0) {
        json_num(f, "precond_apply_us", r->pc_apply_us, &first);
        json_num(f, "precond_apply_spmvs", r->pc_apply_us / r->pc_spmv_us, &first);
        json_num(f, "precond_setup_spmvs", d->precond_ms * 1000.0 / r->pc_spmv_us, &first);
    }
    if (r->have_payoff) {
        const sps_operator_info *oi = &r->oi;
        json_num(f, "spmv_us", oi->spmv_us, &first);
        json_num(f, "csr_vector_spmv_us", oi->ref_us, &first);
        json_num(f, "conversion_in_csr_vector_spmvs", oi->convert_spmvs, &first);
        json_num(f, "saved_us_per_spmv", oi->saved_us, &first);
        json_num(f, "break_even_spmvs", oi->break_even, &first);
        json_int(f, "expected_spmvs", (long long)oi->expected_spmvs, &first);
        json_str(f, "payoff", oi->payoff, &first);
    }
    report_json_end(r, rc, &first);
}

static void report_precond_cost(const run *r, const derived *d)
{
    if (!(r->pc_apply_us > 0)) return;
    fprintf(r->rep, "precond   %s: setup %.2f ms = %.0f SpMVs; apply %.2f us = %.2f SpMVs (%s SpMV %.2f us; "
                    "medians of %d, after the solve)\n",
            r->o.precond, d->precond_ms, d->precond_ms * 1000.0 / r->pc_spmv_us, r->pc_apply_us,
            r->pc_apply_us / r->pc_spmv_us, r->oi.backend, r->pc_spmv_us, r->pc_reps);
}

static void report_payoff(const run *r)
{
    if (!r->have_payoff) return;
    fprintf(r->rep, "payoff    %s; this solve used %lld SpMVs\n", r->oi.payoff,
            (long long)r->info.spmvs);
}

static void report_text(const run *r, const derived *d)
{
    FILE *f = r->rep;
    const sps_solve_info *in = &r->info;
    fprintf(f, "result    %s after %lld iterations", sps_reason_str(in->reason), (long long)in->iterations);
    if (r->method == SPS_GMRES) fprintf(f, " (%lld restarts)", (long long)in->restarts);
    fprintf(f, "\n");
    fprintf(f, "residual  relative: recurrence %.3e, true %.3e (||b|| = %.3e)\n", in->rel_rnorm,
            in->true_rel_rnorm, in->bnorm);
    if (in->reason == SPS_DIVERGED_TRUE_RESIDUAL)
        fprintf(f, "accuracy  converged to the attainable accuracy %.1e (eps*||A||*||x||/||b||) at best: "
                   "the true residual %.1e stays above rtol %g\n", attainable(r), in->true_rel_rnorm,
                r->o.rtol);
    strategy_text(r);
    if (r->b_is_ones)
        fprintf(f, "error     rms(x - 1) = %.3e%s\n", r->err_ones,
                in->reason > 0 && r->err_ones > 1e-3
                    ? " (a small residual, a large error: A is ill-conditioned)" : "");
    if (r->o.verify) {
        if (r->verify_diff >= 0)
            fprintf(f, "verify    ||x - x_lapack|| / ||x_lapack|| = %.3e (LAPACKE dgesv)\n", r->verify_diff);
        else
            fprintf(f, "verify    %s\n", r->verify_note ? r->verify_note : "failed");
    }
    fprintf(f, "time      read %.1f | analyze %.1f (%s) | select %.1f | convert %.1f | upload %.1f | "
               "precond %.1f | setup %.1f | iterate %.1f | finish %.1f | total %.1f ms\n",
            r->src.read_ms, r->ft.analyze_ms, r->ft.on_gpu ? "gpu" : "host", r->oi.select_ms, r->oi.convert_ms, r->oi.upload_ms,
            d->precond_ms, in->setup_ms, in->iterate_ms, in->finish_ms, d->total_ms);
    if (in->floor_per_iter_ms > 0)
        fprintf(f, "          %.4f ms per iteration (%s engine); the traffic floor %.4f ms (%.0f bytes "
                   "at %.0f GB/s): %.2fx the floor\n", in->per_iter_ms, in->engine ? in->engine : "classic",
                in->floor_per_iter_ms, in->bytes_per_iter, in->copy_gbps, in->floor_fraction);
    else
        fprintf(f, "          %.4f ms per iteration\n", in->per_iter_ms);
    fprintf(f, "          time to solution %.1f ms = setup %.1f (analyze to the solve's setup) + "
               "iterate %.1f + finish %.1f, from the matrix in host memory\n",
            d->solve_ms, d->setup_ms, in->iterate_ms, in->finish_ms);
    if (r->oi.on_gpu) /* the host path never waits on a device */
        fprintf(f, "syncs     %lld host synchronizations in %lld iterations (%.3f per iteration); "
                   "%lld with iterations still to run (%.3f per iteration)\n",
                (long long)in->host_syncs, (long long)in->iterations, per_iteration(in, in->host_syncs),
                (long long)in->steady_syncs, per_iteration(in, in->steady_syncs));
    report_precond_cost(r, d);
    report_payoff(r);
}

/* A longer GMRES restart worth suggesting: 1000, or twice a long one; at most n. */
static int longer_restart(const run *r)
{
    long long m = r->o.restart < 1000 ? 1000 : 2LL * r->o.restart;
    return (int)(m < r->n ? m : r->n);
}

/* The one hint after a failure: what to try next, never what was just tried
 * nor what the analysis rules out (a preconditioner that divides by a missing
 * or zero diagonal entry; CG where the features say not SPD). Empty when
 * nothing in reach would help. */
static void choose_hint(run *r, int rc)
{
    char *h = r->hint;
    size_t len = sizeof r->hint;
    const sps_features *ft = &r->ft;
    int diag_ok = ft->missing_diagonal == 0 && ft->zero_diagonal == 0;
    int pc_none = !strcmp(r->o.precond, "none"), gmres = r->method == SPS_GMRES;
    int can_restart = gmres && r->o.restart < r->n;
    int cg_spd;
    sps_method sugg = SPS_GMRES;
    if (r->analyzed) sps_method_suggest(ft, &sugg, NULL, 0);
    cg_spd = r->method == SPS_CG && sugg == SPS_CG; /* CG is the right method: keep it */
    sps_reason why = r->info.reason;
    if (rc == EXIT_PRECOND) {
        if (diag_ok && strcmp(r->o.precond, "jacobi"))
            snprintf(h, len, "--precond jacobi: the diagonal is complete and nonzero");
        else
            snprintf(h, len, "--precond none --method gmres --restart %d: with %d rows lacking a nonzero "
                             "diagonal entry, no preconditioner that divides by the diagonal can be built",
                     longer_restart(r), ft->missing_diagonal + ft->zero_diagonal);
        return;
    }
    if (rc != EXIT_NOT_CONVERGED || !r->solved) return;
    if (r->strategy && r->info.nattempts > 1 && r->inconsistent < 0) {
        /* the strategy already tried the plans a hint would name */
        snprintf(h, len, "--maxit %lld: %d plans were tried; the best reached a relative residual "
                         "of %.2e (rtol %g)", 2 * r->o.maxit + 1, r->info.nattempts,
                 r->info.true_rel_rnorm, r->o.rtol);
        return;
    }
    if (r->inconsistent >= 0)
        snprintf(h, len, "none will converge: the system has no solution (row %d, 1-based %d, of A is "
                         "empty and b is not); check how A and b were made", r->inconsistent, r->inconsistent + 1);
    else if (r->method == SPS_CG && (why == SPS_DIVERGED_INDEFINITE || sugg != SPS_CG))
        snprintf(h, len, "--method gmres: CG needs a symmetric positive definite matrix%s",
                 why == SPS_DIVERGED_INDEFINITE ? ", and it met p'Ap <= 0" : "");
    else if (why == SPS_DIVERGED_BREAKDOWN && !gmres)
        snprintf(h, len, "--method gmres: %s broke down, and GMRES does not", sps_method_name(r->method));
    else if (why == SPS_DIVERGED_STAGNATION && can_restart)
        snprintf(h, len, "--restart %d: GMRES(%d) stagnated, and each restart loses the Krylov space",
                 longer_restart(r), r->o.restart);
    else if (pc_none && diag_ok)
        snprintf(h, len, "--precond jacobi: the diagonal is complete and nonzero");
    else if (cg_spd && !is_ic0(r->o.precond))
        snprintf(h, len, "--precond ic0: incomplete Cholesky is a stronger preconditioner for CG");
    else if (can_restart)
        snprintf(h, len, "--restart %d: a longer restart keeps more of the Krylov space", longer_restart(r));
    else if (!gmres && !cg_spd)
        snprintf(h, len, "--method gmres: its residual never grows");
    else if (why == SPS_DIVERGED_MAXIT)
        snprintf(h, len, "--maxit %lld: the relative residual reached %.2e of rtol %g", 2 * r->o.maxit + 1,
                 r->info.true_rel_rnorm, r->o.rtol);
}

/* One JSON object on every exit: what is known by then, the error, the
 * warnings, the hint and the exit status. */
static void report_json_any(const run *r, int rc)
{
    FILE *f = r->rep;
    int first = 1;
    if (r->solved) {
        derived d = derive(r);
        report_json(r, &d, rc);
        return;
    }
    fprintf(f, "{");
    json_str(f, "version", sps_version(), &first);
    if (r->ctx) json_str(f, "device", sps_context_device_name(r->ctx), &first);
    if (r->analyzed) features_json(f, &r->src, &r->ft, &first);
    json_str(f, "precond", r->o.precond, &first);
    json_bool(f, "converged", 0, &first);
    fprintf(f, ", \"reason\": null");
    report_json_end(r, rc, &first);
}

static void report(run *r, int rc)
{
    choose_hint(r, rc);
    if (r->o.json) report_json_any(r, rc);
    else if (r->text && r->solved) {
        derived d = derive(r);
        report_text(r, &d);
    }
    fflush(r->rep);
    if (r->hint[0] && !r->o.quiet) fprintf(stderr, "spsolve: hint: try %s\n", r->hint);
    if (r->error_pending) fprintf(stderr, "spsolve: %s\n", r->error);
}

/* ---- main: read, configure, solve, report --------------------------------- */

static void cleanup(run *r)
{
    sps_free(r->b);
    sps_free(r->x);
    free(r->B);
    free(r->X);
    free(r->infos);
    free(r->x_dense);
    sps_solver_destroy(r->solver);
    sps_precond_destroy(r->pc);
    sps_operator_destroy(r->op);
    sps_matrix_destroy(r->A);
    sps_context_destroy(r->ctx);
}

/* Everything up to the solve; -1 when it is ready, else the exit code. */
static int prepare(run *r)
{
    int rc;
    if ((rc = open_context(r)) >= 0 || (rc = configure_solver(r)) >= 0 || (rc = read_matrix(r)) >= 0)
        return rc;
    if (r->o.info) {
        print_info(r);
        r->info_done = 1;
        return EXIT_CONVERGED;
    }
    choose_method(r);
    cap_restart(r);
    if (r->o.no_stagnation) sps_solver_set_stagnation(r->solver, 0);
    if ((rc = read_vectors(r)) >= 0) return rc;
    warn_inconsistent(r);
    if (r->o.gpus || r->o.mpi) return -1; /* the ranks build their own operators */
    if ((rc = block_plan(r)) >= 0) return rc;
    if ((rc = build_operator(r)) >= 0 || (rc = build_precond(r)) >= 0) return rc;
    return -1;
}

/* --mpi: join MPI_COMM_WORLD; only rank 0 prints and writes files. */
static void mpi_start(run *r)
{
    if (sps_dist_mpi_init(&r->mpi_rank, &r->mpi_size, &r->mpi_local) != SPS_OK) {
        fprintf(stderr, "spsolve: --mpi: %s\n", sps_last_error(NULL));
        exit(EXIT_RUNTIME);
    }
    if (r->mpi_rank == 0) return;
    r->o.quiet = 1;
    r->o.json = g_json = 0;
    r->o.monitor = 0;
    r->o.out_path = r->o.hist_path = r->o.save_path = NULL;
}

int main(int argc, char **argv)
{
    static run r; /* zeroed: cleanup() frees what was made */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--json")) g_json = 1;
    parse_args(argc, argv, &r.o);
    if (r.o.mpi) mpi_start(&r);
    r.text = !r.o.json && !r.o.quiet;
    int to_stdout = (r.o.out_path && !strcmp(r.o.out_path, "-")) ||
                    (r.o.hist_path && !strcmp(r.o.hist_path, "-"));
    r.rep = to_stdout ? stderr : stdout;
    r.inconsistent = -1;
    int rc = prepare(&r);
    if (rc < 0) {
        rc = solve(&r);
        if (r.solved) measure_payoff(&r);
        progress_end(&r);
        if (r.solved) rc = write_outputs(&r, rc);
    }
    if (!r.info_done) report(&r, rc);
    cleanup(&r);
    if (r.o.mpi) sps_dist_mpi_finalize();
    return rc;
}
