/* SPDX-License-Identifier: MIT */
/* spsolve/tests/check.h: the tiny test harness every test program uses.
 *
 * A test program prints one line per check:
 *   ok - NAME
 *   FAIL - NAME (file:line): detail
 *   SKIP - NAME: reason
 * and exits 0 when nothing failed (77 when everything was skipped), 1
 * otherwise. tests/run.sh adds the lines up into "N passed, N failed, N skipped".
 *
 * Includes in tests: "check.h" (this file, -Itests) and "internal.h" (-Icore)
 * by their short names; any other private header by its path from the
 * repository root ("precond/precond.h", "core/gpu.h", "unit/diag_check.h"),
 * never "../../"; the public header as "spsolve.h". */
#ifndef SPS_TEST_CHECK_H
#define SPS_TEST_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "spsolve.h"

#if defined(__GNUC__)
#define T_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define T_PRINTF(a, b)
#endif

/* Record one check: passes when cond is true. Returns cond. */
int t_check_at(const char *file, int line, int cond, const char *fmt, ...) T_PRINTF(4, 5);
#define T_OK(cond, ...) t_check_at(__FILE__, __LINE__, (cond) ? 1 : 0, __VA_ARGS__)

/* A failing check with a detail message: T_FAIL("name", "got %d", x). */
void t_fail_at(const char *file, int line, const char *name, const char *fmt, ...) T_PRINTF(4, 5);
#define T_FAIL(name, ...) t_fail_at(__FILE__, __LINE__, (name), __VA_ARGS__)

/* Status check: passes when st == SPS_OK; on failure prints the status and
 * sps_last_error(ctx). */
int t_status_at(const char *file, int line, sps_context *ctx, sps_status st, const char *fmt, ...) T_PRINTF(5, 6);
#define T_STATUS(ctx, st, ...) t_status_at(__FILE__, __LINE__, (ctx), (st), __VA_ARGS__)

/* Near-equality |a - b| <= tol * max(1, |b|). */
int t_near_at(const char *file, int line, double a, double b, double tol, const char *fmt, ...) T_PRINTF(6, 7);
#define T_NEAR(a, b, tol, ...) t_near_at(__FILE__, __LINE__, (a), (b), (tol), __VA_ARGS__)

void t_skip(const char *name, const char *fmt, ...) T_PRINTF(2, 3);

/* Exit code for main: 0 if no failure (77 if nothing ran but skips), else 1. */
int t_done(void);

/* A host context, or NULL after a FAIL line "host context" with the reason. */
sps_context *t_host_context(void);

/* One test of a table run by t_run_host. */
typedef void (*t_test_fn)(void);

/* Makes a host context into *ctx (t_host_context), runs the NULL-terminated
 * table of tests in order, destroys the context and returns t_done(): the whole
 * of a test program's main. When the context cannot be made no test runs. */
int t_run_host(sps_context **ctx, const t_test_fn *tests);

/* A test that takes the program's host context. */
typedef void (*t_ctx_test_fn)(sps_context *ctx);

/* t_run_host for tests that take the context as their argument. */
int t_run_host_ctx(const t_ctx_test_fn *tests);

/* main() of a test program whose tests take a host context:
 * T_MAIN_HOST_CTX(test_a, test_b, ...). */
#define T_MAIN_HOST_CTX(...)                                          \
    int main(void)                                                    \
    {                                                                 \
        static const t_ctx_test_fn t_tests_[] = {__VA_ARGS__, NULL}; \
        return t_run_host_ctx(t_tests_);                              \
    }

/* main() of a test program whose tests use the file's host context `ctx`:
 * T_MAIN_HOST(ctx, test_a, test_b, ...). */
#define T_MAIN_HOST(ctx, ...)                                  \
    int main(void)                                             \
    {                                                          \
        static const t_test_fn t_tests_[] = {__VA_ARGS__, NULL}; \
        return t_run_host(&(ctx), t_tests_);                   \
    }

/* Path of a bundled test file: tests/data/NAME (found from the working
 * directory or SPS_TEST_DATA). Returns a static buffer. */
const char *t_data(const char *name);

/* Directory of the shared real-matrix set (SPS_MATRICES, else ../shared/matrices
 * if it exists), or NULL. */
const char *t_matrices_dir(void);

/* Names (without .mtx.gz) of the matrices listed in t_matrices_dir()'s
 * MANIFEST.tsv, or NULL-terminated list of the bundled tests/data/real/ ones
 * when the shared set is absent. The list is static. */
const char *const *t_real_matrices(void);
/* Full path of real matrix NAME (shared set first, bundled copy second), or NULL. */
const char *t_real_matrix_path(const char *name);
/* Real matrix NAME read on ctx, or NULL after a SKIP line saying why. */
sps_matrix *t_read_real(sps_context *ctx, const char *name);

/* A matrix from a dense row-major m x n array (entries equal to 0.0 are not
 * stored), made on ctx (may be NULL), or NULL after a FAIL line. */
sps_matrix *t_matrix_from_dense(sps_context *ctx, sps_idx m, sps_idx n, const double *a);

/* A's pattern with the values a v_p + b p + c (v_p A's value at CSR position
 * p), made on ctx; *vals gets those values (malloc'd, the caller frees them).
 * NULL after a FAIL line if the matrix cannot be made. */
sps_matrix *t_revalued(sps_context *ctx, const sps_matrix *A, double a, double b, double c, double **vals);

/* The `kind` column (spd, nonsym, sym-indefinite, unknown) of the MANIFEST.tsv
 * that t_real_matrices() read, for matrix NAME; NULL if not listed. Static buffer. */
const char *t_manifest_kind(const char *name);

/* A growing triplet list for building test matrices. */
typedef struct t_triplets {
    sps_idx *r, *c;
    double *v;
    int64_t n, cap;
} t_triplets;

/* Append (i, j, v); aborts if memory runs out (a test harness failure). */
void t_trip_add(t_triplets *t, sps_idx i, sps_idx j, double v);

/* The m x n matrix of the triplets (duplicates summed) made on ctx, or NULL
 * after a FAIL line; the list is emptied and freed either way. */
sps_matrix *t_trip_matrix(sps_context *ctx, sps_idx m, sps_idx n, t_triplets *t);

/* A scratch directory for this test program (created, removed at exit). */
const char *t_tmpdir(void);

/* t_tmpdir()/NAME in one of 8 static buffers used in turn. */
const char *t_tmp_path(const char *name);

/* Writes len bytes of data to the file t_tmp_path(name) (name itself when it
 * starts with '/'), as a new file (any old
 * one removed first), gzip-compressed at gz_level 1..9 or plain with 0; exits
 * after a message if it cannot (a test harness failure). Returns the path. */
const char *t_write_file(const char *name, const void *data, size_t len, int gz_level);

/* t_write_file of the string s, plain and gzip-compressed (default level). */
const char *t_put_str(const char *name, const char *s);
const char *t_put_gz_str(const char *name, const char *s);

/* Deterministic pseudo-random doubles in [-1, 1). */
double t_rand(uint64_t *state);

/* ||x - ref|| / ||ref|| (2-norms; ||x - ref|| when ref is zero). */
double t_rel_diff(const double *x, const double *ref, sps_idx n);

/* The next value of Marsaglia's xorshift64 (13, 7, 17) generator; *state != 0. */
uint64_t t_xorshift(uint64_t *state);

/* 1 when A and B have the same dimensions and bitwise the same CSR arrays. */
int t_matrix_same(const sps_matrix *A, const sps_matrix *B);

/* What t_each_generated and t_each_real call for each matrix. */
typedef void (*t_matrix_fn)(sps_context *ctx, const sps_matrix *A, const char *name);

/* fn(ctx, A, spec) for each matrix A generated from specs[0..n), made on mctx
 * (NULL: a host matrix without a context); a spec that cannot be generated gives
 * a FAIL line named `test` and is passed over. Returns how many fn calls ran. */
int t_each_generated(sps_context *ctx, sps_context *mctx, const char *test, const char *const *specs,
                     size_t n, t_matrix_fn fn);

/* fn(ctx, A, name) for each real matrix of t_real_matrices(), read on mctx; one
 * that cannot be read gives a FAIL line, none at all a SKIP line named `test`.
 * Returns how many fn calls ran. */
int t_each_real(sps_context *ctx, sps_context *mctx, const char *test, t_matrix_fn fn);

/* A GPU context, or NULL after printing one SKIP line with the reason (no
 * device, or built without CUDA). */
sps_context *t_gpu_context_or_skip(const char *what);

/* The whole of a GPU test program's main: t_gpu_context_or_skip(what), a line
 * "# device: NAME", body(ctx), the context destroyed; returns t_done(). */
int t_run_gpu(const char *what, void (*body)(sps_context *ctx));

/* The whole of a GPU test program's main when its tests read two globals: the
 * GPU context into *gctx (or one SKIP line) and a host context into *hctx,
 * then the NULL-terminated table of tests in order; returns t_done(). */
int t_run_gpu_tests(const char *what, sps_context **gctx, sps_context **hctx,
                    const t_test_fn *tests);
#define T_MAIN_GPU(what, gctx, hctx, ...)                                   \
    int main(void)                                                          \
    {                                                                       \
        static const t_test_fn t_tests_[] = {__VA_ARGS__, NULL};            \
        return t_run_gpu_tests((what), &(gctx), &(hctx), t_tests_);         \
    }

/* main() of a GPU test program in a build without CUDA: one SKIP line. */
#define T_MAIN_NO_CUDA(what)                      \
    int main(void)                                \
    {                                             \
        t_skip((what), "built without CUDA");     \
        return t_done();                          \
    }

#endif
