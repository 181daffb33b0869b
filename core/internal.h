/* SPDX-License-Identifier: MIT */
/* spsolve/core/internal.h: types and helpers shared inside the library (never installed) */
#ifndef SPS_INTERNAL_H
#define SPS_INTERNAL_H

#include "sps_config.h"
#include "spsolve.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SPS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SPS_PRINTF(a, b)
#endif

/* Largest value an sps_idx may hold (also the limit on nnz). */
#define SPS_IDX_MAX INT32_MAX

/* ---- host CSR ---------------------------------------------------------- */

/* Rows sorted by column, no duplicate (row, col), 0-based. */
typedef struct sps_csr {
    sps_idx nrows, ncols, nnz;
    sps_idx *row_ptr; /* nrows + 1 */
    sps_idx *col_idx; /* nnz */
    double *val;      /* nnz */
    /* The device copy of these arrays (core/gpu.h), or NULL. Owned by the
     * sps_matrix whose CSR this is (made once by sps__matrix_device, freed
     * with the matrix); a CSR copied by value (a format borrowing the
     * matrix's arrays) sees it, so it builds from the device copy instead of
     * uploading again. Never freed by sps__csr_free. */
    struct sps_dcsr *dev;
} sps_csr;

struct sps_matrix {
    sps_csr A; /* A.dev: the CSR on a device, uploaded once (core/device_matrix.c) */
    sps_matrix_source src;
};

/* Release the device copy of M (sps_matrix_destroy; no-op if none). */
void sps__matrix_drop_device(sps_matrix *M);

/* ---- context ----------------------------------------------------------- */

struct sps_gpu; /* core/gpu.cu */

struct sps_context {
    int device;          /* CUDA ordinal, or SPS_DEVICE_HOST */
    struct sps_gpu *gpu; /* NULL on the host */
    char name[160];      /* sps_context_device_name */
    char msg[1024];      /* last error message */
    int threads;         /* io parsing threads (sps_context_set_threads); 0: online cores */
    double copy_gbps;    /* device copy bandwidth, measured once for auto's predictions (0: not yet) */
    void *ws;            /* sps__host_ws's block (NULL: none yet) and its size */
    size_t ws_bytes;
};

/* Threads the io readers use on ctx: its setting, or the online cores
 * (ctx NULL or setting 0); at least 1, at most SPS_MAX_THREADS. */
#define SPS_MAX_THREADS 256
int sps__threads(const sps_context *ctx);

/* Whether a GPU context does a pass over a matrix of nnz entries on the
 * device: from SPS_DEVICE_MIN_NNZ entries; below, the host's pass and a small
 * upload cost less than the device's launches, read-backs and first kernel
 * loads (the analysis: core/analyze.c; dia's and drm's conversions:
 * spmv/backend.c; each with its H100 measurements). The environment
 * variable env, "host" or "device", overrides the size. 0 on a host
 * context. */
#define SPS_DEVICE_MIN_NNZ 32768
int sps__pass_on_device(const sps_context *ctx, int64_t nnz, const char *env);

/* ---- errors ------------------------------------------------------------ */

/* Record a message for ctx (or for the thread when ctx is NULL; the thread's
 * copy is always written too) and return st. */
sps_status sps__err(sps_context *ctx, sps_status st, const char *fmt, ...) SPS_PRINTF(3, 4);
sps_status sps__verr(sps_context *ctx, sps_status st, const char *fmt, va_list ap);
/* Prefix the current message of ctx with "prefix: ". */
void sps__err_prefix(sps_context *ctx, const char *prefix);

/* ---- memory (core/alloc.c) --------------------------------------------- */

/* malloc/calloc/realloc/free wrappers. Tests can make the N-th allocation from
 * now fail with sps__fail_alloc_after(N) (0 disables), to exercise every
 * out-of-memory path. A size of 0 returns a valid pointer. */
void *sps__malloc(size_t bytes);
void *sps__calloc(size_t n, size_t size);
void *sps__realloc(void *p, size_t bytes);
void sps__free(void *p);
/* Scratch of a few MiB that is written once, soon after (a conversion's
 * temporaries): from 1 MiB up, aligned to 2 MiB and advised for transparent
 * huge pages as a whole, so that its first touch faults once per 2 MiB (on
 * the H100 machine a 4 KiB fault of fresh memory cost about 3 us: 3 ms for
 * DRM's 3.6 MB of plan arrays). Below 1 MiB, sps__malloc. Freed with
 * sps__free. */
void *sps__malloc_scratch(size_t bytes);
void sps__fail_alloc_after(long n);
/* A host block of at least `bytes` owned by ctx and kept from call to call,
 * so that its pages stay resident: a fresh block's first writes fault page
 * by page (about 3 us a 4 KiB page on the H100 machine). Contents undefined;
 * valid until the next call on ctx or its end; one user at a time. Past
 * SPS_HOST_WS_MAX bytes, or out of memory, NULL: the caller allocates its
 * own. Freed with the context. */
#define SPS_HOST_WS_MAX ((size_t)64 << 20)
void *sps__host_ws(sps_context *ctx, size_t bytes);
/* n * size with overflow check; SIZE_MAX on overflow (so the allocation fails). */
size_t sps__mul_size(size_t n, size_t size);

/* ---- time (core/clock.c) ----------------------------------------------- */

double sps__now_ms(void); /* monotonic wall clock */
/* t from n > 0 per-call times in microseconds (us is sorted in place). */
void sps__timing_summarize(double *us, int n, sps_timing *t);
/* us[k] = the time of fn(arg, k), k < reps, after fn(arg, 0..warmup-1)
 * untimed: on the device (device != 0) CUDA events on ctx's stream around
 * each call, the stream synchronized after the warm-up; else the wall clock.
 * Stops at the first error. */
typedef sps_status (*sps_timed_fn)(void *arg, int k);
sps_status sps__time_calls(sps_context *ctx, int device, sps_timed_fn fn, void *arg, int warmup, int reps,
                           double *us);

/* ---- CSR helpers (core/csr.c) ------------------------------------------ */

sps_status sps__csr_alloc(sps_context *ctx, sps_csr *A, sps_idx nrows, sps_idx ncols,
                          sps_idx nnz);
void sps__csr_free(sps_csr *A);
/* Deep copy. */
sps_status sps__csr_copy(sps_context *ctx, const sps_csr *src, sps_csr *dst);

/* Build a CSR from n triplets (0-based). Sorts each row by column, sums
 * duplicates, and for SPS_SYMMETRIC / SPS_SKEW_SYMMETRIC mirrors every
 * off-diagonal entry (negated for skew). Inputs are validated (indices in
 * range, result fits sps_idx); arrays are not modified. Output owned by *out. */
sps_status sps__csr_from_triplets(sps_context *ctx, sps_idx nrows, sps_idx ncols,
                                  int64_t n, const sps_idx *ri, const sps_idx *ci,
                                  const double *v, sps_symmetry sym, sps_csr *out);

/* Sort each row's columns (with their values) in place and sum duplicates,
 * compacting: row r holds cols[rp[r] .. rp[r + 1]) on entry (rp[0] = 0);
 * rp becomes the compacted row pointer. Returns the compacted entry count. */
int64_t sps__csr_sort_rows(sps_idx nrows, sps_idx *rp, sps_idx *cols, double *vals);
/* The same for rows whose entries start at cols[base] (rp[0] is not read:
 * rows of a larger CSR, sorted on several threads, each its own range);
 * returns the end of the compacted entries. */
int64_t sps__csr_sort_rows_from(sps_idx nrows, sps_idx *rp, int64_t base, sps_idx *cols, double *vals);

/* Large matrices must have content behind their row storage: more than
 * SPS_ROWS_FREE rows, more than the entries can reach (nnz, or 2 nnz when
 * a symmetric kind mirrors them), means at least rows - reach empty rows
 * (a singular matrix when square). Returns 1 and the reason in why then. */
#define SPS_ROWS_FREE 65536
int sps__rows_unjustified(int64_t rows, int64_t cols, int64_t nnz, sps_symmetry sym, char *why,
                          size_t n);

/* Full structural check: row_ptr[0] = 0, non-decreasing, row_ptr[n] = nnz,
 * columns in range, strictly increasing within a row. */
sps_status sps__csr_check(sps_context *ctx, const sps_csr *A);

/* Row-length statistics (entries per row): min, max, empty rows, mean and
 * population standard deviation. Zero rows give all zeros. */
typedef struct sps_row_stats {
    double mean, std;
    sps_idx min, max, empty;
} sps_row_stats;
void sps__row_stats(const sps_csr *A, sps_row_stats *s);

/* Reference y = alpha*A*x + beta*y; beta == 0 does not read y. */
void sps__csr_spmv(const sps_csr *A, double alpha, const double *x, double beta,
                   double *y);

/* Wrap a CSR (ownership moves into the matrix) with its source description. */
sps_status sps__matrix_wrap(sps_context *ctx, sps_csr *A, const sps_matrix_source *src,
                            sps_matrix **out);

/* ---- generators (gen/generate.c) -------------------------------------- */

sps_status sps__generate(sps_context *ctx, const char *spec, sps_csr *out);

/* ---- analysis helpers ---------------------------------------------------- */

/* Format rules the analysis reports, defined with the formats in
 * spmv/rules.c (spmv/rules.h has the segment height and the rule itself). */

/* Operand slots of DIA restricted to row segments of height seg: for each
 * segment, (distinct diagonals in it) * seg. Rows past nrows in the last
 * segment count as padding.
 * Returns -1 if A is NULL, seg <= 0, or its O(rows + cols) marker cannot be
 * allocated (callers report that as out of memory). */
int64_t sps__segmented_dia_slots(const sps_csr *A, sps_idx seg);
/* The same, and *diagonals = the distinct offsets col - row holding an entry
 * (DIA's diagonal count; diagonals may be NULL). */
int64_t sps__segmented_dia_slots_diags(const sps_csr *A, sps_idx seg, sps_idx *diagonals);

/* The row-segment height of DRM (its default seg), of the features'
 * drm_slots / drm_fill, and of auto's DRM estimate: one number for all three. */
#define SPS_DRM_SEG_ROWS 32

/* ELL width chosen for HYB from the row-length histogram (spmv/formats/hyb.c uses it
 * too, so auto and the format agree). */
sps_idx sps__hyb_width(const sps_csr *A);

/* Pieces of the analysis shared by the host and device paths (core/analyze.c). */
/* Row-length standard deviation from exact sums (m rows, nnz, sum of len^2). */
double sps__row_std_exact(sps_idx m, int64_t nnz, int64_t sum2);
/* Exact power-of-two scale for the symmetry sums of squares. */
double sps__asym_scale(double amax);
/* hyb_width, ell_fill, hyb_coo from ge[K] = rows of length >= K, K = 0..kmax
 * (f->rows and f->nnz set). */
void sps__features_hyb(sps_features *f, const int64_t *ge, sps_idx kmax);
/* dia_fill, drm_fill and row_mean from the counts already in f. */
void sps__features_finish(sps_features *f);

/* ---- small string helpers ---------------------------------------------- */

/* Bounded formatted copy that always terminates. */
void sps__strlcpy(char *dst, const char *src, size_t n);

#ifdef __cplusplus
}
#endif
#endif /* SPS_INTERNAL_H */
