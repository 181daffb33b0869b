/* SPDX-License-Identifier: MIT */
/* spsolve/tests/check.c: the test harness (see check.h) */
#include "check.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static int n_pass, n_fail, n_skip;

static void vline(const char *tag, const char *file, int line, const char *name,
                  const char *fmt, va_list ap)
{
    printf("%s - %s", tag, name);
    if (file) printf(" (%s:%d)", file, line);
    if (fmt && *fmt) {
        printf(": ");
        vprintf(fmt, ap);
    }
    printf("\n");
    fflush(stdout);
}

/* Count one check and print its line: "ok - NAME", or "FAIL - NAME (file:line)"
 * followed by ": detail" when the printf-style detail fmt is not NULL. */
static int outcome(int ok, const char *file, int line, const char *name, const char *fmt, ...)
{
    if (ok) {
        n_pass++;
        printf("ok - %s\n", name);
        fflush(stdout);
        return 1;
    }
    va_list ap;
    va_start(ap, fmt);
    n_fail++;
    vline("FAIL", file, line, name, fmt, ap);
    va_end(ap);
    return 0;
}

#define FORMAT_NAME(name, fmt)                \
    char name[512];                           \
    do {                                      \
        va_list ap_;                          \
        va_start(ap_, fmt);                   \
        vsnprintf(name, sizeof name, fmt, ap_); \
        va_end(ap_);                          \
    } while (0)

int t_check_at(const char *file, int line, int cond, const char *fmt, ...)
{
    FORMAT_NAME(name, fmt);
    return outcome(cond, file, line, name, NULL);
}

void t_fail_at(const char *file, int line, const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    n_fail++;
    vline("FAIL", file, line, name, fmt, ap);
    va_end(ap);
}

int t_status_at(const char *file, int line, sps_context *ctx, sps_status st,
                const char *fmt, ...)
{
    FORMAT_NAME(name, fmt);
    return outcome(st == SPS_OK, file, line, name, "%s: %s", sps_strerror(st), sps_last_error(ctx));
}

int t_near_at(const char *file, int line, double a, double b, double tol,
              const char *fmt, ...)
{
    FORMAT_NAME(name, fmt);
    double scale = fabs(b) > 1.0 ? fabs(b) : 1.0;
    int ok = fabs(a - b) <= tol * scale; /* NaN fails */
    return outcome(ok, file, line, name, "got %.17g, want %.17g (tol %g)", a, b, tol);
}

void t_skip(const char *name, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    n_skip++;
    vline("SKIP", NULL, 0, name, fmt, ap);
    va_end(ap);
}

int t_done(void)
{
    if (n_fail) return 1;
    if (n_pass == 0 && n_skip > 0) return 77;
    return 0;
}

sps_context *t_host_context(void)
{
    sps_context *c = NULL;
    if (sps_context_create(&c, SPS_DEVICE_HOST) != SPS_OK) T_FAIL("host context", "%s", sps_last_error(NULL));
    return c;
}

int t_run_host_ctx(const t_ctx_test_fn *tests)
{
    sps_context *ctx = t_host_context();
    if (!ctx) return t_done();
    for (; *tests; tests++) (*tests)(ctx);
    sps_context_destroy(ctx);
    return t_done();
}

int t_run_host(sps_context **ctx, const t_test_fn *tests)
{
    if (!(*ctx = t_host_context())) return t_done();
    for (; *tests; tests++) (*tests)();
    sps_context_destroy(*ctx);
    *ctx = NULL;
    return t_done();
}

static int is_dir(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static int is_file(const char *p)
{
    struct stat sb;
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

const char *t_data(const char *name)
{
    static char buf[8][1024];
    static int k;
    char *out = buf[k++ & 7];
    const char *env = getenv("SPS_TEST_DATA");
    const char *cands[] = {env, "tests/data", "../tests/data", "../../tests/data"};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        if (!cands[i]) continue;
        snprintf(out, 1024, "%s/%s", cands[i], name);
        if (is_file(out) || is_dir(out)) return out;
    }
    snprintf(out, 1024, "tests/data/%s", name);
    return out;
}

const char *t_matrices_dir(void)
{
    static char buf[1024];
    const char *env = getenv("SPS_MATRICES");
    if (env && *env) {
        if (strcmp(env, "none") == 0) return NULL;
        snprintf(buf, sizeof buf, "%s", env);
        return is_dir(buf) ? buf : NULL;
    }
    const char *cands[] = {"../shared/matrices", "../../shared/matrices",
                           "shared/matrices"};
    for (size_t i = 0; i < sizeof cands / sizeof *cands; i++) {
        snprintf(buf, sizeof buf, "%s/MANIFEST.tsv", cands[i]);
        if (is_file(buf)) {
            snprintf(buf, sizeof buf, "%s", cands[i]);
            return buf;
        }
    }
    return NULL;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

const char *const *t_real_matrices(void)
{
    static char *names[256];
    static int done;
    if (done) return (const char *const *)names;
    done = 1;
    int n = 0;
    const char *dir = t_matrices_dir();
    if (dir) {
        char path[1200], line[4096];
        snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
        FILE *f = fopen(path, "r");
        if (f) {
            int first = 1;
            while (fgets(line, sizeof line, f) && n < 255) {
                if (first) { first = 0; continue; }
                char *tab = strchr(line, '\t');
                if (!tab) continue;
                *tab = 0;
                char *dot = strstr(line, ".mtx");
                if (dot) *dot = 0;
                names[n++] = strdup(line);
            }
            fclose(f);
        }
    }
    if (n == 0) {
        DIR *d = opendir(t_data("real"));
        if (d) {
            struct dirent *e;
            while ((e = readdir(d)) && n < 255) {
                char *dot = strstr(e->d_name, ".mtx");
                if (!dot || e->d_name[0] == '.') continue;
                names[n] = strdup(e->d_name);
                names[n][dot - e->d_name] = 0;
                n++;
            }
            closedir(d);
            qsort(names, (size_t)n, sizeof *names, cmp_str);
        }
    }
    names[n] = NULL;
    return (const char *const *)names;
}

const char *t_real_matrix_path(const char *name)
{
    static char buf[4][1200];
    static int k;
    char *out = buf[k++ & 3];
    const char *dir = t_matrices_dir();
    if (dir) {
        snprintf(out, 1200, "%s/%s.mtx.gz", dir, name);
        if (is_file(out)) return out;
    }
    char rel[600];
    snprintf(rel, sizeof rel, "real/%s.mtx.gz", name);
    snprintf(out, 1200, "%s", t_data(rel));
    if (is_file(out)) return out;
    snprintf(out, 1200, "examples/data/%s.mtx.gz", name);
    if (is_file(out)) return out;
    return NULL;
}

sps_matrix *t_read_real(sps_context *ctx, const char *name)
{
    const char *path = t_real_matrix_path(name);
    sps_matrix *A = NULL;
    sps_status st = path ? sps_matrix_read(ctx, path, &A) : SPS_ERR_IO;
    if (st != SPS_OK) {
        t_skip(name, "cannot read: %s", path ? sps_last_error(ctx) : "file not found");
        return NULL;
    }
    return A;
}

sps_matrix *t_matrix_from_dense(sps_context *ctx, sps_idx m, sps_idx n, const double *a)
{
    size_t cap = (size_t)m * (size_t)n + 1;
    sps_idx *rp = malloc(((size_t)m + 1) * sizeof *rp), *ci = malloc(cap * sizeof *ci);
    double *v = malloc(cap * sizeof *v);
    sps_matrix *A = NULL;
    if (rp && ci && v) {
        sps_idx k = 0;
        rp[0] = 0;
        for (sps_idx i = 0; i < m; i++) {
            for (sps_idx j = 0; j < n; j++)
                if (a[(size_t)i * n + j] != 0.0) {
                    ci[k] = j;
                    v[k++] = a[(size_t)i * n + j];
                }
            rp[i + 1] = k;
        }
        if (sps_matrix_create_csr(ctx, m, n, rp, ci, v, &A) != SPS_OK)
            T_FAIL("t_matrix_from_dense", "%s", sps_last_error(ctx));
    } else {
        T_FAIL("t_matrix_from_dense", "out of memory");
    }
    free(rp);
    free(ci);
    free(v);
    return A;
}

sps_matrix *t_revalued(sps_context *ctx, const sps_matrix *A, double a, double b, double c, double **vals)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    int64_t nnz = sps_matrix_nnz(A);
    double *nv = malloc(((size_t)nnz + 1) * sizeof *nv);
    if (!nv) {
        fprintf(stderr, "t_revalued: out of memory\n");
        abort();
    }
    for (int64_t p = 0; p < nnz; p++) nv[p] = a * v[p] + b * (double)p + c;
    *vals = nv;
    sps_matrix *B = NULL;
    if (sps_matrix_create_csr(ctx, sps_matrix_rows(A), sps_matrix_cols(A), rp, ci, nv, &B) != SPS_OK)
        T_FAIL("revalued matrix", "%s", sps_last_error(ctx));
    return B;
}

void t_trip_add(t_triplets *t, sps_idx i, sps_idx j, double v)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->r = realloc(t->r, (size_t)t->cap * sizeof *t->r);
        t->c = realloc(t->c, (size_t)t->cap * sizeof *t->c);
        t->v = realloc(t->v, (size_t)t->cap * sizeof *t->v);
        if (!t->r || !t->c || !t->v) {
            fprintf(stderr, "t_trip_add: out of memory\n");
            abort();
        }
    }
    t->r[t->n] = i;
    t->c[t->n] = j;
    t->v[t->n++] = v;
}

sps_matrix *t_trip_matrix(sps_context *ctx, sps_idx m, sps_idx n, t_triplets *t)
{
    sps_matrix *A = NULL;
    sps_status st = sps_matrix_create_coo(ctx, m, n, t->n, t->r, t->c, t->v, &A);
    if (st != SPS_OK) T_FAIL("build a test matrix", "%s", sps_last_error(ctx));
    free(t->r);
    free(t->c);
    free(t->v);
    memset(t, 0, sizeof *t);
    return A;
}

const char *t_manifest_kind(const char *name)
{
    static char buf[64];
    const char *dir = t_matrices_dir();
    char path[1200], line[4096];
    if (dir) snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    else snprintf(path, sizeof path, "%s", t_data("real/MANIFEST.tsv"));
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    const char *out = NULL;
    while (!out && fgets(line, sizeof line, f)) {
        char *col[8];
        int n = 0;
        for (char *p = line; n < 8 && p; n++) {
            col[n] = p;
            p = strchr(p, '\t');
            if (p) *p++ = 0;
        }
        if (n == 8 && strcmp(col[1], name) == 0) {
            snprintf(buf, sizeof buf, "%s", col[7]);
            out = buf;
        }
    }
    fclose(f);
    return out;
}

static char tmpdir_buf[256];

static void rm_tmpdir(void)
{
    if (!tmpdir_buf[0]) return;
    DIR *d = opendir(tmpdir_buf);
    if (d) {
        struct dirent *e;
        char p[600];
        while ((e = readdir(d))) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
            snprintf(p, sizeof p, "%s/%s", tmpdir_buf, e->d_name);
            remove(p);
        }
        closedir(d);
    }
    rmdir(tmpdir_buf);
}

const char *t_tmpdir(void)
{
    if (!tmpdir_buf[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(tmpdir_buf, sizeof tmpdir_buf, "%s/spsolve-test-XXXXXX",
                 base && *base ? base : "/tmp");
        if (!mkdtemp(tmpdir_buf)) {
            perror("mkdtemp");
            exit(1);
        }
        atexit(rm_tmpdir);
    }
    return tmpdir_buf;
}

const char *t_tmp_path(const char *name)
{
    static char buf[8][600];
    static int k;
    char *p = buf[k++ & 7];
    snprintf(p, sizeof buf[0], "%s/%s", t_tmpdir(), name);
    return p;
}

const char *t_write_file(const char *name, const void *data, size_t len, int gz_level)
{
    const char *path = name[0] == '/' ? name : t_tmp_path(name);
    remove(path); /* a new file each time: rewriting one in place makes ext4 flush it */
    int ok;
    if (gz_level > 0) {
        char mode[4] = {'w', 'b', (char)('0' + gz_level), 0};
        gzFile g = gzopen(path, mode);
        ok = g && gzwrite(g, data, (unsigned)len) == (int)len;
        ok = g && gzclose(g) == Z_OK && ok;
    } else {
        FILE *f = fopen(path, "wb");
        ok = f && fwrite(data, 1, len, f) == len;
        ok = f && fclose(f) == 0 && ok;
    }
    if (!ok) {
        fprintf(stderr, "t_write_file: cannot write %s\n", path);
        exit(1);
    }
    return path;
}

const char *t_put_str(const char *name, const char *s) { return t_write_file(name, s, strlen(s), 0); }

const char *t_put_gz_str(const char *name, const char *s) { return t_write_file(name, s, strlen(s), 6); }

double t_rand(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

double t_rel_diff(const double *x, const double *ref, sps_idx n)
{
    double d = 0, s = 0;
    for (sps_idx i = 0; i < n; i++) d += (x[i] - ref[i]) * (x[i] - ref[i]), s += ref[i] * ref[i];
    return s > 0 ? sqrt(d / s) : sqrt(d);
}

uint64_t t_xorshift(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *state = x;
}

int t_matrix_same(const sps_matrix *A, const sps_matrix *B)
{
    const sps_idx *ra, *ca, *rb, *cb;
    const double *va, *vb;
    sps_idx n = sps_matrix_rows(A);
    int64_t nnz = sps_matrix_nnz(A);
    if (n != sps_matrix_rows(B) || sps_matrix_cols(A) != sps_matrix_cols(B) || nnz != sps_matrix_nnz(B)) return 0;
    sps_matrix_csr(A, &ra, &ca, &va);
    sps_matrix_csr(B, &rb, &cb, &vb);
    return memcmp(ra, rb, ((size_t)n + 1) * sizeof *ra) == 0 && memcmp(ca, cb, (size_t)nnz * sizeof *ca) == 0 &&
           memcmp(va, vb, (size_t)nnz * sizeof *va) == 0;
}

int t_each_generated(sps_context *ctx, sps_context *mctx, const char *test, const char *const *specs,
                     size_t n, t_matrix_fn fn)
{
    int ran = 0;
    for (size_t g = 0; g < n; g++) {
        sps_matrix *A = NULL;
        if (sps_matrix_generate(mctx, specs[g], &A) != SPS_OK) {
            T_FAIL(test, "generate %s: %s", specs[g], sps_last_error(mctx));
            continue;
        }
        fn(ctx, A, specs[g]);
        sps_matrix_destroy(A);
        ran++;
    }
    return ran;
}

int t_each_real(sps_context *ctx, sps_context *mctx, const char *test, t_matrix_fn fn)
{
    const char *const *names = t_real_matrices();
    int ran = 0;
    if (!names[0]) t_skip(test, "no real matrices found");
    for (const char *const *nm = names; *nm; nm++) {
        const char *path = t_real_matrix_path(*nm);
        sps_matrix *A = NULL;
        if (!path || sps_matrix_read(mctx, path, &A) != SPS_OK) {
            T_FAIL("read real matrix", "%s: %s", *nm, path ? sps_last_error(mctx) : "not found");
            continue;
        }
        fn(ctx, A, *nm);
        sps_matrix_destroy(A);
        ran++;
    }
    return ran;
}

sps_context *t_gpu_context_or_skip(const char *what)
{
    sps_context *ctx = NULL;
    sps_status st = sps_context_create(&ctx, 0);
    if (st != SPS_OK) {
        t_skip(what, "no GPU: %s", sps_last_error(NULL));
        return NULL;
    }
    return ctx;
}

int t_run_gpu(const char *what, void (*body)(sps_context *ctx))
{
    sps_context *ctx = t_gpu_context_or_skip(what);
    if (!ctx) return t_done();
    printf("# device: %s\n", sps_context_device_name(ctx));
    body(ctx);
    sps_context_destroy(ctx);
    return t_done();
}

int t_run_gpu_tests(const char *what, sps_context **gctx, sps_context **hctx,
                    const t_test_fn *tests)
{
    *gctx = t_gpu_context_or_skip(what);
    if (!*gctx) return t_done();
    printf("# device: %s\n", sps_context_device_name(*gctx));
    if (sps_context_create(hctx, SPS_DEVICE_HOST) != SPS_OK) {
        T_FAIL("host context", "%s", sps_last_error(NULL));
    } else {
        for (int i = 0; tests[i]; i++) tests[i]();
        sps_context_destroy(*hctx);
    }
    sps_context_destroy(*gctx);
    return t_done();
}
