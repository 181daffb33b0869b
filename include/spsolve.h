/* SPDX-License-Identifier: MIT */
/* spsolve/include/spsolve.h: the public C API (the only header a user includes) */
#ifndef SPSOLVE_H
#define SPSOLVE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/* Version                                                                   */
/* ------------------------------------------------------------------------ */

#define SPS_VERSION_MAJOR 0
#define SPS_VERSION_MINOR 1
#define SPS_VERSION_PATCH 0
#define SPS_VERSION_STRING "0.1.0"

/** The library's version string at run time (may differ from the header's). */
const char *sps_version(void);

/** Row and column index type: 32-bit. Matrices whose dimensions or nonzero
 *  count do not fit are rejected with a message, never truncated. */
typedef int32_t sps_idx;

/* ------------------------------------------------------------------------ */
/* Result channels                                                           */
/* ------------------------------------------------------------------------ */

/** Did the call work? Every function that can fail returns one of these.
 *  The detailed message of the last failure is `sps_last_error(ctx)`. */
typedef enum sps_status {
    SPS_OK = 0,
    SPS_ERR_INVALID_ARG = 1,  /**< NULL pointer, size out of range, unknown name */
    SPS_ERR_IO = 2,           /**< a file could not be opened, read or written */
    SPS_ERR_PARSE = 3,        /**< malformed input; message is `FILE:LINE: reason` */
    SPS_ERR_NO_MEMORY = 4,    /**< host or device allocation failed */
    SPS_ERR_CUDA = 5,         /**< a CUDA, cuSPARSE or NCCL call failed */
    SPS_ERR_NO_DEVICE = 6,    /**< no usable CUDA device */
    SPS_ERR_NOT_COMPILED = 7, /**< this build lacks the feature (CUDA, LAPACKE) */
    SPS_ERR_UNSUPPORTED = 8,  /**< a backend or preconditioner cannot take this matrix */
    SPS_ERR_ZERO_PIVOT = 9,   /**< a factorization met a zero or negative pivot */
    SPS_ERR_INTERNAL = 10     /**< a bug: please report it */
} sps_status;

/** Short fixed name of a status, e.g. "parse error". Never NULL. */
const char *sps_strerror(sps_status st);

/** How did a solve end? > 0 converged, < 0 diverged or broke down.
 *  The values are fixed (doc/solvers.md, "Reasons"). A name borrowed from
 *  PETSc's KSPConvergedReason has PETSc's value (RTOL 2, ATOL 3, MAXIT =
 *  KSP_DIVERGED_ITS -3, DTOL -4, BREAKDOWN -5, INDEFINITE_PC -8, NAN =
 *  KSP_DIVERGED_NANORINF -9, INDEFINITE = KSP_DIVERGED_INDEFINITE_MAT -10);
 *  spsolve's own reasons lie outside PETSc's range (20 and up, -20 and down). */
typedef enum sps_reason {
    SPS_ITERATING = 0,
    SPS_CONVERGED_RTOL = 2,        /**< ||r|| <= rtol * ||b|| (and that bound >= atol) */
    SPS_CONVERGED_ATOL = 3,        /**< ||r|| <= atol (atol was the larger bound) */
    SPS_CONVERGED_ZERO_RHS = 20,   /**< b = 0: x = 0 after 0 iterations (spsolve's own) */
    SPS_DIVERGED_MAXIT = -3,       /**< maxit iterations without convergence */
    SPS_DIVERGED_DTOL = -4,        /**< ||r|| > dtol * ||r0|| */
    SPS_DIVERGED_BREAKDOWN = -5,   /**< a method's denominator vanished (rho, omega, ...) */
    SPS_DIVERGED_INDEFINITE_PC = -8, /**< CG: r'z <= 0, the preconditioner is not SPD */
    SPS_DIVERGED_NAN = -9,         /**< a NaN or Inf appeared in the residual */
    SPS_DIVERGED_INDEFINITE = -10, /**< CG: p'Ap <= 0, the matrix is not SPD */
    SPS_DIVERGED_STAGNATION = -20, /**< the residual stopped decreasing (spsolve's own) */
    SPS_DIVERGED_TRUE_RESIDUAL = -21, /**< the recurrence converged, but the true residual
                                        ||b - A x|| failed the tolerance after every
                                        residual replacement (spsolve's own) */
    SPS_DIVERGED_USER = -22        /**< the monitor asked to stop (sps_solver_set_monitor_stop) */
} sps_reason;

/** Short fixed name of a reason, e.g. "converged (rtol)". Never NULL. */
const char *sps_reason_str(sps_reason r);

/* ------------------------------------------------------------------------ */
/* Context: device, stream, library handles, last error                      */
/* ------------------------------------------------------------------------ */

typedef struct sps_context sps_context;

/** Pass as `device` to use the host reference path (no GPU). */
#define SPS_DEVICE_HOST (-1)
/** Pass as `device` for device 0 when there is a usable GPU and the host
 *  reference path otherwise (as the CLI's `--device auto`); on the host,
 *  `sps_last_error(NULL)` then says why no GPU was used. */
#define SPS_DEVICE_AUTO (-2)

/** Create a context on CUDA device `device` (0, 1, ...) or on the host
 *  (SPS_DEVICE_HOST). On a machine without a usable GPU, a request for a
 *  device fails with SPS_ERR_NO_DEVICE, *ctx is NULL and the reason is in
 *  `sps_last_error(NULL)`.
 *  [out] ctx   the new context; destroy with sps_context_destroy
 *  [in]  device  device ordinal, SPS_DEVICE_HOST or SPS_DEVICE_AUTO
 *  CLI: `--device gpu|cpu|auto`. */
sps_status sps_context_create(sps_context **ctx, int device);

/** Destroy a context (NULL is a no-op). Objects made with it must be
 *  destroyed first. */
void sps_context_destroy(sps_context *ctx);

/** 1 if the context runs on a GPU, 0 if on the host. */
int sps_context_on_gpu(const sps_context *ctx);

/** A one-line description of where the context runs, e.g.
 *  "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)" or "host (CPU reference path)". */
const char *sps_context_device_name(const sps_context *ctx);

/** Threads the library may use for host work on this context: parsing
 *  Matrix Market files (sps_matrix_read). 0 (the default) means the online
 *  cores; 1 reads on the calling thread only. The result is bitwise the same
 *  whatever the count. SPS_ERR_INVALID_ARG outside 0..256.
 *  CLI: `--threads N` (to be wired). */
sps_status sps_context_set_threads(sps_context *ctx, int nthreads);

/** The threads host work uses on ctx (the setting resolved: >= 1). */
int sps_context_threads(const sps_context *ctx);

/** Number of usable CUDA devices (0 if none or if built without CUDA). When it
 *  is 0, `sps_last_error(NULL)` says why. */
int sps_device_count(void);

/** The detailed message of the last failure on this context (or, for
 *  ctx = NULL, of the last failure on this thread), e.g.
 *  "lns_3937.mtx:17: expected 3 fields, found 2". Empty string if none. */
const char *sps_last_error(const sps_context *ctx);

/** Free memory the library returned (vectors from sps_vector_read). */
void sps_free(void *p);

/* ------------------------------------------------------------------------ */
/* Matrices (host CSR: rows sorted, duplicates summed, symmetric mirrored)    */
/* ------------------------------------------------------------------------ */

typedef struct sps_matrix sps_matrix;

/** Symmetry declared by the source (Matrix Market banner). */
typedef enum sps_symmetry {
    SPS_GENERAL = 0,
    SPS_SYMMETRIC = 1,      /**< one triangle stored; mirrored on load */
    SPS_SKEW_SYMMETRIC = 2  /**< one triangle stored; mirrored negated */
} sps_symmetry;

/** Create a matrix from host CSR arrays (0-based). The arrays are copied;
 *  columns within a row may be unsorted and may repeat (duplicates are summed).
 *  Rejects negative sizes, a row pointer that is not non-decreasing from 0 to
 *  nnz, column indices out of range, and NaN or Inf values (SPS_ERR_INVALID_ARG). */
sps_status sps_matrix_create_csr(sps_context *ctx, sps_idx nrows, sps_idx ncols,
                                 const sps_idx *row_ptr, const sps_idx *col_idx,
                                 const double *values, sps_matrix **A);

/** Create a matrix from triplets (0-based, any order, duplicates summed): the
 *  natural output of a finite-element assembly loop. SPS_ERR_INVALID_ARG for
 *  negative sizes, indices out of range, NaN or Inf values, and more than
 *  65536 rows with fewer entries than rows (empty rows for certain: the
 *  matrix is singular; its row storage is refused before it is allocated). */
sps_status sps_matrix_create_coo(sps_context *ctx, sps_idx nrows, sps_idx ncols,
                                 int64_t nnz, const sps_idx *rows,
                                 const sps_idx *cols, const double *values,
                                 sps_matrix **A);

/** Read a Matrix Market file (.mtx, or gzip-compressed .mtx.gz; detected by
 *  content) or a `.spsb` binary file (by its suffix or signature; doc/io.md).
 *  Coordinate real, integer or pattern; general, symmetric or
 *  skew-symmetric; an `array` file becomes a dense CSR (every stored value
 *  kept). Coordinate entries are parsed on sps_context_threads(ctx) threads;
 *  the result is bitwise the same for any count. Any defect is SPS_ERR_PARSE
 *  with `FILE:LINE: reason` (`FILE: reason` for .spsb), the first bad line
 *  whatever the thread count; a header declaring more than 65536 rows with
 *  fewer entries than rows (a singular matrix) is rejected before row storage
 *  is allocated. On failure *A is NULL. CLI: `-A FILE`. */
sps_status sps_matrix_read(sps_context *ctx, const char *path, sps_matrix **A);

/** Write a matrix as Matrix Market coordinate real general with %.17g values
 *  (a round trip is exact), or as `.spsb` binary when path ends in `.spsb`
 *  (the CSR arrays with checksums; doc/io.md). The file is written to a
 *  temporary name in the same directory and renamed: it appears whole or not
 *  at all. CLI: `--save-matrix FILE`. */
sps_status sps_matrix_write(sps_context *ctx, const sps_matrix *A, const char *path);

/** Generate a test matrix in memory, deterministically. Specs:
 *  `poisson2d:N` (5-point, N*N rows), `poisson3d:N` (7-point, N^3 rows),
 *  `poisson3d27:N` (27-point), `convdiff2d:N,PECLET` (upwind
 *  convection-diffusion, nonsymmetric), `banded:N,W,SCATTER,SEED` (W sparse
 *  diagonals with breaks and a SCATTER fraction of scattered points),
 *  `powerlaw:N,AVGDEG,SEED` (irregular row lengths), `poisson3d-jump:N,CONTRAST`
 *  (7-point, coefficients 1 or CONTRAST per random cube), `aniso3d:N,EPS`
 *  (-u_xx - u_yy - EPS u_zz), `elasticity3d:N` (trilinear hexahedra, 3
 *  unknowns per node, one face clamped). All are nonsingular;
 *  those not SPD by construction are diagonally dominant. CLI: `--gen SPEC`. */
sps_status sps_matrix_generate(sps_context *ctx, const char *spec, sps_matrix **A);

/** The 6 rigid-body modes of a generated `elasticity3d:N` matrix of n rows
 *  (translations x, y, z; rotations about z, x, y at the nodes'
 *  coordinates), into B (n x 6, column-major): the near-nullspace for amg
 *  (sps_precond_set_nullspace with block 3). CLI: `--nullspace rbm`. */
sps_status sps_matrix_generate_rbm(sps_context *ctx, const char *spec, sps_idx n, double *B);

/** Destroy a matrix (NULL is a no-op). */
void sps_matrix_destroy(sps_matrix *A);

sps_idx sps_matrix_rows(const sps_matrix *A);
sps_idx sps_matrix_cols(const sps_matrix *A);
/** Entries in the CSR (after mirroring and summing duplicates). */
int64_t sps_matrix_nnz(const sps_matrix *A);

/** Read-only views of the CSR arrays (valid while A lives). */
sps_status sps_matrix_csr(const sps_matrix *A, const sps_idx **row_ptr,
                          const sps_idx **col_idx, const double **values);

/** Where a matrix came from and what reading it cost. */
typedef struct sps_matrix_source {
    char name[256];         /**< file path or generator spec */
    int64_t nnz_stored;     /**< entries stored in the file (one triangle if symmetric) */
    sps_symmetry symmetry;  /**< as declared by the banner */
    int pattern;            /**< 1: pattern file, all values set to 1 */
    int integer;            /**< 1: integer field */
    int gzip;               /**< 1: the file was gzip-compressed */
    int64_t bytes;          /**< uncompressed bytes parsed */
    double read_ms;         /**< wall time to read and build the CSR */
    double assemble_ms;     /**< of read_ms: building the CSR from the parsed entries */
} sps_matrix_source;

sps_status sps_matrix_get_source(const sps_matrix *A, sps_matrix_source *src);

/** y = alpha*A*x + beta*y on the host with the plain CSR loop (the reference
 *  every backend is tested against). beta = 0 does not read y. */
sps_status sps_matrix_spmv_host(const sps_matrix *A, double alpha, const double *x,
                                double beta, double *y);

/** Structural and numerical features that choices depend on. */
typedef struct sps_features {
    sps_idx rows, cols;
    int64_t nnz;             /**< entries in the CSR */
    sps_idx row_min, row_max;/**< entries per row */
    double row_mean, row_std;
    sps_idx empty_rows;
    sps_idx diagonals;       /**< distinct offsets col-row holding an entry */
    double dia_fill;         /**< DIA over the whole matrix: stored zeros / stored slots */
    int64_t drm_slots;       /**< DRM with 32-row segments: stored slots */
    double drm_fill;         /**< DRM with 32-row segments: stored zeros / stored slots */
    sps_idx hyb_width;       /**< ELL width HYB would choose */
    double ell_fill;         /**< zeros / slots in HYB's ELL part */
    int64_t hyb_coo;         /**< entries HYB puts in its COO part */
    int symmetric;           /**< 1 if A equals its transpose exactly (pattern and values) */
    int pattern_symmetric;   /**< 1 if the pattern equals its transpose */
    double asymmetry;        /**< ||A - A'||_F / ||A||_F (0 for symmetric) */
    sps_idx missing_diagonal;/**< rows with no stored diagonal entry */
    sps_idx zero_diagonal;   /**< rows whose stored diagonal entry is 0 */
    sps_idx negative_diagonal; /**< rows whose diagonal entry is < 0 */
    sps_idx dominant_rows;   /**< rows with |a_ii| >= sum_{j!=i} |a_ij| */
    int diag_dominant;       /**< 1 if every row is (weakly) dominant and one strictly */
    double analyze_ms;       /**< wall time of the analysis (upload included on a GPU context) */
    int on_gpu;              /**< 1 if computed on the device (a GPU context), 0 on the host */
    double upload_ms;        /**< GPU: time this call spent copying the CSR to the device
                                  (0 when the matrix's device copy already existed) */
    double upload_gbps;      /**< GPU: effective rate of that upload (bytes of the three
                                  CSR arrays / upload_ms), pinning included; 0 if none */
    char upload_how[16];     /**< GPU: "register" or "ring" (see sps_matrix_upload) */
    double device_ms;        /**< GPU: the analysis kernels and the read-back (event-timed) */
} sps_features;

/** Compute every field of sps_features (defined in doc/features.md). On a
 *  host context (or ctx = NULL) one pass over the CSR on the host: the
 *  reference. On a GPU context, from 32,768 entries, the CSR is uploaded
 *  once (sps_matrix_upload) and the features are computed on the device
 *  from that copy: integer features equal to the host's, floating ones equal
 *  to rounding, the same bits run after run; a smaller matrix is analyzed on
 *  the host, which is faster there (f->on_gpu says which ran).
 *  SPS_ANALYZE=host in the environment forces the host path on a GPU
 *  context, SPS_ANALYZE=device the device path at any size (for
 *  comparisons). */
sps_status sps_matrix_analyze(sps_context *ctx, const sps_matrix *A, sps_features *f);

/** Copy A's CSR to the device of ctx now, once: the copy is cached on A and
 *  every later analysis and operator on ctx builds from it (nothing is
 *  uploaded twice). It is released by sps_matrix_destroy, which must
 *  therefore come before sps_context_destroy. A host context does nothing.
 *  The transfer goes through pinned memory: SPS_UPLOAD=ring (the default: a
 *  double-buffered pinned staging ring, host copies overlapped with the DMA)
 *  or SPS_UPLOAD=register (the matrix's arrays are page-locked in place for
 *  the copy, then released). *ms and *gbps (each may be NULL) get the time
 *  and the effective rate, 0 when the copy already existed.
 *  The matrix owns its CSR (sps_matrix_create_csr and _coo copy the
 *  caller's arrays), so the caller's arrays may be freed as soon as the
 *  matrix is created; the matrix's own arrays stay valid until it is
 *  destroyed. */
sps_status sps_matrix_upload(sps_context *ctx, const sps_matrix *A, double *ms, double *gbps);

/* ------------------------------------------------------------------------ */
/* Vectors (files)                                                           */
/* ------------------------------------------------------------------------ */

/** Read a vector: `.mtx` (array, or coordinate with one column) or text (one
 *  number per line or whitespace-separated; gzip allowed). If `expected` >= 0
 *  a different length is SPS_ERR_PARSE naming both lengths (for .mtx, before
 *  the vector is allocated). A file with no values is SPS_ERR_PARSE
 *  `FILE: no values`. *x is allocated (free with sps_free). CLI: `-b FILE`,
 *  `--x0 FILE`. */
sps_status sps_vector_read(sps_context *ctx, const char *path, sps_idx expected,
                           double **x, sps_idx *n);

/** Write a vector with %.17g: Matrix Market array if the name ends in `.mtx`,
 *  else one number per line. Written to a temporary name, then renamed.
 *  CLI: `-o FILE`. */
sps_status sps_vector_write(sps_context *ctx, const char *path, const double *x,
                            sps_idx n);

/* ------------------------------------------------------------------------ */
/* SpMV operators: a matrix converted once to a backend's format              */
/* ------------------------------------------------------------------------ */

typedef struct sps_operator sps_operator;

typedef enum sps_precision { SPS_DOUBLE = 0, SPS_SINGLE = 1 } sps_precision;

/** Capability flags of a backend. */
#define SPS_CAP_DETERMINISTIC 0x1u  /**< bitwise the same result run after run */
#define SPS_CAP_NEEDS_CONVERT 0x2u  /**< builds its own format (not plain CSR) */
#define SPS_CAP_GPU           0x4u  /**< has a GPU kernel in this build */
#define SPS_CAP_SINGLE        0x8u  /**< supports single precision */
#define SPS_CAP_SELECTOR      0x10u /**< a selector (auto, tune), not a format */
#define SPS_CAP_CALLBACK      0x20u /**< calls the caller's code (a user operator) */

/** Backends, in registry order: `sps_spmv_backend(i, ...)` for i = 0, 1, ...
 *  until it returns SPS_ERR_INVALID_ARG. CLI: `spsolve --list-spmv`. */
sps_status sps_spmv_backend(int i, const char **name, unsigned *caps,
                            const char **summary);

typedef struct sps_operator_opts {
    sps_precision precision;  /**< SPS_DOUBLE (solvers need it) or SPS_SINGLE (benchmarks) */
    int64_t expected_spmvs;   /**< for `tune` and `auto`: how many SpMVs the conversion must pay
                                   off within (default 1000; a solve should pass its expected
                                   count, e.g. from the iteration limit or a previous solve).
                                   On a GPU context `auto` keeps a converting format only when
                                   its predicted break-even is within this count */
    int tune_reps;            /**< for `tune`: timed calls per candidate (default 20) */
    const sps_features *features; /**< for `auto`: A's features from sps_matrix_analyze, if the
                                   caller has them (read during the call only); NULL (default):
                                   auto computes the few it reads (row statistics, drm_slots) */
    int fallback;             /**< for a named backend: 1 = when it refuses A
                                   (SPS_ERR_UNSUPPORTED, e.g. dia with too much fill) or is
                                   not in this build (SPS_ERR_NOT_COMPILED), build csr-vector
                                   instead, as auto does, and say why in the info's `reason`;
                                   0 (default) = fail with that status. Other errors
                                   (bad parameters, out of memory) always fail. */
} sps_operator_opts;

void sps_operator_opts_default(sps_operator_opts *o);

/** Convert A to a backend's format and (on a GPU context) upload it.
 *  `spmv` is a backend name with optional parameters after a colon:
 *  `csr-scalar`, `csr-vector`, `merge`, `drm`, `drm:hdia` (older name
 *  `drm:nomerge`), `drm:seg=64`,
 *  `dia`, `hyb`, `cusparse` (CSR_ALG1), `cusparse:alg2`, the benchmark rows
 *  `ell`, `coo`, `bsr` (`bsr:block=K`) and `lightspmv` (`lightspmv:tpr=N`),
 *  which no selector picks, or a selector: `auto`
 *  (chosen from the features; the rule is in doc/) or `tune` (times every
 *  candidate but the benchmark rows). A backend that cannot take A fails with SPS_ERR_UNSUPPORTED
 *  and a reason; `auto` and `tune` then fall back and say so in the info's
 *  `reason`, and so does a named backend when `opts->fallback` is set
 *  (reason: "NAME refused (why); fell back to csr-vector"). A precision that
 *  is neither SPS_DOUBLE nor SPS_SINGLE is SPS_ERR_INVALID_ARG. A does not
 *  need to outlive the operator.
 *  CLI: `--spmv NAME|auto|tune`. */
sps_status sps_operator_create(sps_context *ctx, const sps_matrix *A,
                               const char *spmv, const sps_operator_opts *opts,
                               sps_operator **op);

/** Replace the values of the operator's matrix; the pattern must be the one
 *  the operator was built from. `values` are in that matrix's CSR order
 *  (sps_matrix_csr). No analysis is redone: for Newton and time-stepping. */
sps_status sps_operator_update_values(sps_operator *op, const double *values);

/** y = alpha*A*x + beta*y in the operator's memory space (device pointers on a
 *  GPU context, host pointers on a host context) and precision (double* or
 *  float*). Runs on the context's stream; no allocation, no synchronization.
 *  beta = 0 does not read y. */
sps_status sps_operator_apply(sps_operator *op, double alpha, const void *x,
                              double beta, void *y);

/** The same product computed on the host from the format's own arrays, in
 *  double: the format's executable specification. x and y are host double*. */
sps_status sps_operator_apply_host(const sps_operator *op, double alpha,
                                   const double *x, double beta, double *y);

typedef struct sps_operator_info {
    char backend[48];        /**< what was built, e.g. "drm", "drm:nomerge" */
    char reason[512];        /**< why it was chosen (auto, tune) or fallback notices */
    char detail[256];        /**< format-specific one-line summary */
    unsigned caps;           /**< SPS_CAP_* of the built backend */
    int on_gpu;
    sps_precision precision;
    sps_idx rows, cols;
    int64_t nnz;
    double select_ms;        /**< auto/tune: time spent choosing (tune runs candidates) */
    double convert_ms;       /**< host conversion */
    double upload_ms;        /**< host to device copies */
    size_t device_bytes;     /**< bytes the format occupies on the device */
    double bytes_per_spmv;   /**< bytes one SpMV must move (format's model, x and y once) */
    int64_t slots;           /**< stored values including padding zeros */
    double fill;             /**< stored zeros / stored slots (0 for CSR formats) */
    double balance_var;      /**< DRM/HDIA: variance of operand counts between sub-blocks */
    int64_t blocks;          /**< DRM: sub-blocks (thread blocks); HDIA: segments */
    sps_idx ell_width;       /**< HYB: ELL width */
    int64_t coo_entries;     /**< HYB: entries in the COO part */
    /* auto's payoff arithmetic (GPU contexts; all 0 for named backends, tune
     * and the host): the built format against the reference csr-vector,
     * predicted per SpMV from the bytes models and the device's copy
     * bandwidth (so no second operator is built to measure it). */
    int64_t expected_spmvs;  /**< SpMVs the choice was weighed against (opts->expected_spmvs) */
    double ref_us;           /**< reference csr-vector time per SpMV (predicted) */
    double spmv_us;          /**< the built format's time per SpMV (predicted) */
    double saved_us;         /**< ref_us - spmv_us */
    double predicted_ms;     /**< the build cost predicted before building (convert + upload
                                  over the reference's build), from nnz and fill */
    double extra_ms;         /**< the same, measured: convert_ms + upload_ms minus the
                                  reference's build (a device-to-device copy) */
    double convert_spmvs;    /**< extra_ms in reference SpMVs */
    double break_even;       /**< sps_break_even_spmvs(extra_ms, saved_us): -1 never */
    char payoff[192];        /**< one line, e.g. "drm: conversion 1.1 ms = 9 SpMVs, saves 80 us
                                  per SpMV, pays after 14 (predicted 1.3 ms; 1000 expected)" */
} sps_operator_info;

sps_status sps_operator_get_info(const sps_operator *op, sps_operator_info *info);

/** Destroy an operator (NULL is a no-op). */
void sps_operator_destroy(sps_operator *op);

/** A user (matrix-free) operator's product: y = alpha*A*x + beta*y, with x
 *  and y in the context's memory space (device pointers on a GPU context,
 *  on the context's stream or synchronized before returning; host pointers on
 *  a host context). beta = 0 must not read y. Return 0 on success; any
 *  other value stops the caller with SPS_ERR_INVALID_ARG. */
typedef int (*sps_user_spmv_fn)(void *user, double alpha, const double *x, double beta,
                                double *y);

/** An operator whose product is fn (as PETSc's MatShell, SciPy's
 *  LinearOperator): sps_solve, sps_operator_apply and the preconditioners
 *  that apply A (cheby, through sps_precond_create_ex) use it like any other.
 *  Double precision only; no host reference (sps_operator_apply_host and
 *  sps_operator_check are SPS_ERR_UNSUPPORTED) and no values to update. The
 *  info's backend is "user" and its nnz -1. `user` is passed to fn as is and
 *  must outlive the operator. */
sps_status sps_operator_create_user(sps_context *ctx, sps_idx nrows, sps_idx ncols,
                                    sps_user_spmv_fn fn, void *user, sps_operator **op);

/* ------------------------------------------------------------------------ */
/* Measuring (spmv-bench, tune)                                              */
/* ------------------------------------------------------------------------ */

typedef struct sps_timing {
    double median_us, min_us, max_us;  /**< per SpMV */
    int reps;                          /**< timed calls */
} sps_timing;

/** Time `reps` applications (after a warm-up), rotating among `nx` distinct x
 *  vectors so that small matrices are not flattered by the cache. GPU: CUDA
 *  events around each call; host: wall clock. */
sps_status sps_operator_time(sps_operator *op, int reps, int nx, sps_timing *t);

/** Device-to-device copy bandwidth (GB/s counting bytes read plus bytes
 *  written), measured now on the context's device over `bytes` bytes
 *  (0: 256 MiB). Host context: a host memcpy. */
sps_status sps_copy_bandwidth(sps_context *ctx, size_t bytes, double *gbps);

/** Break-even SpMV count of a format that costs extra_ms more to build than
 *  a reference (conversion + upload) and saves saved_us per SpMV against it:
 *  extra_ms * 1000 / saved_us; 0 when it is both cheaper to build and
 *  faster; -1 when it is not faster (never pays off). */
double sps_break_even_spmvs(double extra_ms, double saved_us);

/** The payoff figures measured rather than predicted: times op and a
 *  csr-vector reference built from A for the purpose (then destroyed), and
 *  fills *info as sps_operator_get_info does, with ref_us, spmv_us, saved_us,
 *  extra_ms, convert_spmvs, break_even and the payoff line from those
 *  measurements. Costs one more build and a few hundred SpMVs: for reports
 *  and benchmarks, not for a solve's critical path. */
sps_status sps_operator_measure_payoff(sps_operator *op, const sps_matrix *A,
                                       sps_operator_info *info);

/** Check the operator against the host CSR reference of A (from which it was
 *  built) on random x and y for alpha = 1.5, beta in {0 with y full of NaN,
 *  -0.5}: *max_err is the largest |y - y_ref|_i / (|alpha| (|A||x|)_i +
 *  |beta y|_i) (0/0 counts 0). *repeatable is 1 if two runs on the same input
 *  were bitwise equal. Single precision compares with the reference computed
 *  in double on the rounded inputs. */
sps_status sps_operator_check(sps_operator *op, const sps_matrix *A,
                              double *max_err, int *repeatable);

/* ------------------------------------------------------------------------ */
/* Preconditioners                                                           */
/* ------------------------------------------------------------------------ */

typedef struct sps_precond sps_precond;

/** Build a preconditioner for A from a spec `NAME` or `NAME:key=value,...`
 *  (the types and their parameters: `sps_precond_type`, doc/precond.md):
 *  `none`, `jacobi`, `l1jacobi`, `ilu0` (multicolor order, =
 *  `ilu0:order=color`; the natural order: `ilu0:exact` or `order=natural`,
 *  and with approximate triangular solves `ilu0:solve=jacobi,sweeps=K` or
 *  the fixed-point factor `ilu0:factor=par`), `ic0` (likewise),
 *  `cheby:degree=K,lanczos=M,ratio=R`, `bjacobi:block=K`.
 *  `op`, when not NULL, is A's operator (same context, double precision): the
 *  types that apply A (cheby) use it, and it must then outlive the
 *  preconditioner; with NULL they build their own (csr-vector).
 *  An unknown name or parameter fails with SPS_ERR_INVALID_ARG listing the
 *  known ones. A zero or negative pivot fails with SPS_ERR_ZERO_PIVOT naming
 *  the row; a missing diagonal entry (jacobi) with SPS_ERR_UNSUPPORTED naming
 *  the row. Setup is timed. CLI: `--precond SPEC`. */
sps_status sps_precond_create_ex(sps_context *ctx, const sps_matrix *A, sps_operator *op,
                                 const char *spec, sps_precond **pc);

/** sps_precond_create_ex without an operator. */
sps_status sps_precond_create(sps_context *ctx, const sps_matrix *A,
                              const char *type, sps_precond **pc);

/** Preconditioner types, in registry order: `sps_precond_type(i, ...)` for
 *  i = 0, 1, ... gives each name and a one-line summary; past the end it
 *  returns SPS_ERR_INVALID_ARG. CLI: `--list-precond`. */
sps_status sps_precond_type(int i, const char **name, const char **summary);

/** 1 if the type builds a symmetric M^-1 from a symmetric A (positive
 *  definite when A is SPD), so that CG may use it: none, jacobi, l1jacobi,
 *  ic0 (either solve), cheby, bjacobi. 0 for ilu0. NULL counts as none. */
int sps_precond_symmetric(const sps_precond *pc);

/** Setup time of the preconditioner (ms). */
double sps_precond_setup_ms(const sps_precond *pc);

/** Name it was built with. */
const char *sps_precond_name(const sps_precond *pc);

/** z = M^-1 r in the context's memory space (device pointers on a GPU). */
sps_status sps_precond_apply(sps_precond *pc, const double *r, double *z);

/** Time `reps` applications of pc (after two untimed ones) on a fixed r in
 *  its memory space: CUDA events around each call on a GPU context, the wall
 *  clock on the host. t's figures are per apply. `spsolve` prints the median
 *  in SpMVs of the solve's operator. */
sps_status sps_precond_time(sps_precond *pc, int reps, sps_timing *t);

void sps_precond_destroy(sps_precond *pc);

/** AMG (`amg`) with user near-nullspace vectors: redo the setup of pc, built
 *  on A, with the k vectors B (n x k, column-major, host memory; 1 <= k <= 8)
 *  instead of the constant vector, and `block` unknowns per node (the
 *  aggregates take whole nodes; elasticity: block 3 and the 6 rigid-body
 *  modes, sps_matrix_generate_rbm). A must be the matrix pc was built from.
 *  The setup time becomes this setup's. After a failure pc can only be
 *  destroyed. SPS_ERR_INVALID_ARG when pc is not an amg preconditioner.
 *  CLI: `--nullspace rbm`. */
sps_status sps_precond_set_nullspace(sps_precond *pc, const sps_matrix *A, int block, int k,
                                     const double *B);

/** Re-setup after A's values changed in the pattern pc was built on (e.g.
 *  with sps_operator_update_values on the solve's operator, which the caller
 *  updates itself). amg is numeric only: it keeps its aggregates, tentative
 *  prolongator and patterns and recomputes the smoothers, P's values, the
 *  Galerkin products and the coarse inverse (after a failure it can only be
 *  destroyed). ilu0 and ic0 are numeric only too: they keep the factor's
 *  pattern and the symbolic analyses (on the GPU cuSPARSE's) and factorize
 *  the new values into a scratch copy, adopted on success (ic0 still
 *  refuses nonsymmetric values). The other types are built again on A's
 *  values with the same spec and swapped in (jacobi, l1jacobi, cheby,
 *  bjacobi have no symbolic step). On failure (e.g. a zero pivot in the new
 *  values) every type but amg stays as it was and keeps working. The setup
 *  time becomes this one's. A in another pattern (size, entry count and a
 *  sample of the indices are compared): SPS_ERR_INVALID_ARG; a user
 *  preconditioner: SPS_ERR_UNSUPPORTED. */
sps_status sps_precond_update_values(sps_precond *pc, const sps_matrix *A);

/** A description of the preconditioner's setup, several lines (amg: the
 *  levels with their rows and entries, operator complexity, setup time per
 *  phase; ilu0/ic0 in multicolor order, the default: one line with the
 *  colours), or "" for a type that has none. Valid until pc changes. */
const char *sps_precond_describe(const sps_precond *pc);

/** A user preconditioner's apply: z = M^-1 r, r and z distinct vectors of n
 *  entries in the context's memory space (device pointers on a GPU
 *  context). Return 0 on success; any other value stops the solve with
 *  SPS_ERR_INVALID_ARG. */
typedef int (*sps_user_precond_fn)(void *user, const double *r, double *z);

/** A preconditioner whose apply is fn (as PETSc's PCShell). symmetric != 0
 *  declares M^-1 symmetric positive definite, so that CG accepts it
 *  (sps_precond_symmetric). Setup time 0; name "user". `user` must outlive
 *  the preconditioner. */
sps_status sps_precond_create_user(sps_context *ctx, sps_idx n, sps_user_precond_fn fn,
                                   void *user, int symmetric, sps_precond **pc);

/* ------------------------------------------------------------------------ */
/* Solvers                                                                   */
/* ------------------------------------------------------------------------ */

/** SPS_METHOD_AUTO is not a method a solver runs: it asks sps_solve_strategy
 *  to choose one (and fall back to others) from the matrix's features. */
typedef enum sps_method {
    SPS_METHOD_AUTO = -1,
    SPS_CG = 0,
    SPS_BICGSTAB = 1,
    SPS_GMRES = 2,
    SPS_IDR = 3 /**< IDR(s) with biorthogonalisation, s = 4 ("idr:s=K", K <= 4) */
} sps_method;

/** "cg", "bicgstab", "gmres", "idr" ("auto" for SPS_METHOD_AUTO). */
const char *sps_method_name(sps_method m);
/** Parse a method name, case-insensitively ("auto" gives SPS_METHOD_AUTO);
 *  SPS_ERR_INVALID_ARG listing the known names if unknown. */
sps_status sps_method_from_name(const char *name, sps_method *m);

typedef struct sps_solver sps_solver;

sps_status sps_solver_create(sps_context *ctx, sps_solver **s);
void sps_solver_destroy(sps_solver *s);

/** CLI: `--method`. Default CG. SPS_METHOD_AUTO is refused (SPS_ERR_INVALID_ARG): the
 *  automatic choice is sps_solve_strategy's. */
sps_status sps_solver_set_method(sps_solver *s, sps_method m);
/** A method by name with optional parameters after a colon, e.g. "cg" or
 *  "gmres:restart=50" (the same as sps_solver_set_restart). Any registered
 *  method, including those without an sps_method value. */
sps_status sps_solver_set_method_name(sps_solver *s, const char *spec);

/** Capability flags of a method. */
#define SPS_METHOD_SPD     0x1u /**< needs A (and M) symmetric positive definite */
#define SPS_METHOD_RESTART 0x2u /**< iterations come in cycles (`restart`) */

/** Methods, in registry order: `sps_solver_method(i, ...)` for i = 0, 1, ...
 *  until it returns SPS_ERR_INVALID_ARG. */
sps_status sps_solver_method(int i, const char **name, unsigned *caps, const char **summary);
/** Converged when ||r|| <= max(rtol*||b||, atol). CLI: `--rtol` (default 1e-8), `--atol` (0). */
sps_status sps_solver_set_rtol(sps_solver *s, double rtol);
sps_status sps_solver_set_atol(sps_solver *s, double atol);
/** Diverged when ||r|| > dtol*||r0||. CLI: `--dtol` (default 1e5). */
sps_status sps_solver_set_dtol(sps_solver *s, double dtol);
/** Iteration limit (GMRES: inner iterations across restarts). CLI: `--maxit` (default 10000). */
sps_status sps_solver_set_maxit(sps_solver *s, int64_t maxit);
/** GMRES restart length m. CLI: `--restart` (default 30). */
sps_status sps_solver_set_restart(sps_solver *s, int m);
/** The stagnation stop (GMRES: SPS_DIVERGED_STAGNATION when a window of
 *  restarts gains too little, doc/solvers.md): on (1, the default) or off (0:
 *  the solve runs on to the tolerances, maxit or dtol). CLI: `--no-stagnation`. */
sps_status sps_solver_set_stagnation(sps_solver *s, int on);
/** Record the residual norm of every iteration (read back once, at the end). CLI: `--history`. */
sps_status sps_solver_set_history(sps_solver *s, int on);
/** How often the host reads the convergence state: every k iterations, or 0
 *  for adaptive (the default). */
sps_status sps_solver_set_check_interval(sps_solver *s, int k);

/** Called at each host check with the iterations done and the last residual
 *  norm (GPU: every k iterations; host: every iteration). CLI: `--monitor`. */
typedef void (*sps_monitor_fn)(void *user, int64_t iteration, double rnorm);
sps_status sps_solver_set_monitor(sps_solver *s, sps_monitor_fn fn, void *user);
/** The iteration engine on a GPU context (doc/solvers.md, "Iteration
 *  engine"): "auto" (the default: "onekernel" for CG, BiCGSTAB and GMRES
 *  (within its bounds below) with no or Jacobi preconditioning up to 12288
 *  rows and short rows (at most 128 terms a thread per SpMV) unless a stop monitor or a check
 *  interval asks for host checks, else "fused" for CG where it applies, else
 *  "classic"), "classic" (each iteration's kernels enqueued by the host),
 *  "graph" (a batch of iterations captured once as a CUDA graph and
 *  replayed; CG, else classic), "onekernel" (CG, BiCGSTAB or GMRES with no or
 *  Jacobi preconditioning on a double operator whose backend gives its
 *  device rows (CSR family, dia) with n <= SPS_ONEKERNEL_MAX, default 16384:
 *  the whole iteration phase in one thread block of one launch, GMRES one
 *  cycle a launch with n <= 8192 and a basis of at most 1.5 MiB; else
 *  classic),
 *  "fused" (classic enqueueing; CG's SpMV gives p'q in the same pass where
 *  the operator's backend offers it: csr-vector, dia, drm; else classic), or
 *  NULL / "" for the environment variable SPS_ENGINE (auto when unset). An
 *  engine that does not apply falls back to classic; info->engine says which
 *  ran. Host contexts always run classic. */
sps_status sps_solver_set_engine(sps_solver *s, const char *engine);

/** One plan tried by sps_solve_strategy. */
#define SPS_MAX_ATTEMPTS 10
typedef struct sps_attempt {
    char method[48];         /**< method spec run, e.g. "gmres:restart=100" */
    char precond[48];        /**< preconditioner spec, e.g. "ilu0" */
    sps_status status;       /**< SPS_OK if the plan ran; else why not (setup failed,
                                  out of memory), the message in note */
    sps_reason reason;       /**< how it ended (SPS_ITERATING if it did not run) */
    int64_t iterations;
    double true_rel_rnorm;   /**< ||b - A x|| / ||b|| at its end */
    double precond_ms;       /**< preconditioner setup (0 when the setup was cached) */
    double solve_ms;         /**< sps_solve's setup + iterations + finish */
    int64_t maxit;           /**< the iteration limit it ran under (the budget's share) */
    char note[160];          /**< "won", or why the strategy left it */
} sps_attempt;

/** A monitor that can stop the solve: called where sps_monitor_fn is (after
 *  it, when both are set); a nonzero return ends the solve at that check with
 *  SPS_DIVERGED_USER, x holding the iterate of that check (a time limit, a
 *  user's cancel, an outer Newton loop's own test). NULL removes it. */
typedef int (*sps_monitor_stop_fn)(void *user, int64_t iteration, double rnorm);
sps_status sps_solver_set_monitor_stop(sps_solver *s, sps_monitor_stop_fn fn, void *user);

typedef struct sps_solve_info {
    sps_reason reason;
    int64_t iterations;      /**< GMRES: inner iterations */
    double bnorm;            /**< ||b|| */
    double r0norm;           /**< ||b - A x0|| */
    double rnorm;            /**< final residual norm from the method's recurrence */
    double true_rnorm;       /**< ||b - A x|| recomputed on exit */
    double rel_rnorm;        /**< rnorm / ||b|| */
    double true_rel_rnorm;   /**< true_rnorm / ||b|| */
    double setup_ms;         /**< workspace allocation and copies in */
    double iterate_ms;       /**< the iterations */
    double per_iter_ms;
    double finish_ms;        /**< true residual, copies out */
    int64_t host_syncs;      /**< times the host waited on the device during the iterations */
    int64_t spmvs;           /**< SpMVs applied (including the true residual) */
    int64_t precond_applies;
    int64_t restarts;        /**< GMRES restarts */
    int64_t replacements;    /**< residual replacements: times the true residual
                                  overruled a converged recurrence and the method
                                  went on from x (each costs one extra SpMV) */
    const double *history;   /**< residual norms, history[0] = ||r0||; owned by the solver */
    int64_t history_len;     /**< entries in history (0 if history is off) */
    /* The traffic model (doc/solvers.md, "Iteration engine"). */
    const char *engine;      /**< the engine that ran the iterations: "classic", "graph", "onekernel", "fused" */
    int engine_cluster;      /**< onekernel: the blocks of the thread-block cluster it ran on
                                  (GMRES with SPS_GM_CLUSTER), 0: one block */
    double bytes_per_iter;   /**< modelled bytes per iteration: SpMVs (the format's bytes) + the method's vectors */
    double copy_gbps;        /**< the copy bandwidth the floor divides by (measured once per context) */
    double floor_per_iter_ms; /**< bytes_per_iter / copy_gbps: the time an iteration cannot beat */
    double floor_fraction;   /**< per_iter_ms / floor_per_iter_ms (1: at the floor; 0 when no iteration ran) */
    int64_t steady_syncs;    /**< of host_syncs, the waits after which iterations were still to run
                                  (the steady state's): 0 when the loop ran as one launch
                                  (onekernel; graph without a monitor or a check interval) */
    /* sps_solve_strategy only (0 / empty after a plain sps_solve): */
    int nattempts;           /**< plans tried, in order, in attempts[] */
    int winner;              /**< index of the attempt whose outcome the fields above
                                  report (the converged one, else the best), -1 if none ran */
    int64_t total_iterations;/**< iterations of every attempt */
    double total_ms;         /**< wall time of the whole strategy (setups included) */
    double attainable;       /**< eps * ||A||_inf * ||x|| / ||b||: the relative residual
                                  that rounding lets this x reach (set when the winner did
                                  not converge; 0 when it met the tolerance) */
    char plan_why[160];      /**< why this plan list, e.g. "symmetric, positive diagonal" */
    sps_attempt attempts[SPS_MAX_ATTEMPTS];
} sps_solve_info;

/** Solve A x = b with the operator (double precision) and an optional
 *  preconditioner (NULL = none). On entry x holds the initial guess; b and x
 *  may be host or device pointers (detected), and x may be b itself (b is
 *  copied first). A converged reason is reported only when the true residual
 *  ||b - A x|| meets the tolerance (doc/solvers.md). Returns SPS_OK when the
 *  solve ran, whatever its outcome: read info->reason. */
sps_status sps_solve(sps_solver *s, sps_operator *op, sps_precond *pc,
                     const double *b, double *x, sps_solve_info *info);

/** How sps_solve_strategy chooses. */
typedef struct sps_strategy {
    const char *method;      /**< "auto" (or NULL): chosen from the features; else a method
                                  spec ("gmres:restart=50"), honoured as given */
    const char *precond;     /**< "auto" (or NULL): chosen; else a preconditioner spec */
    int fallback;            /**< 1: after an explicit method or precond, fall back to the
                                  automatic plans too (auto always falls back) */
    int64_t max_iterations;  /**< iterations of all attempts together; 0: 4 x the solver's maxit */
    double max_ms;           /**< wall time of all attempts (checked between attempts); 0: none */
    const sps_features *features; /**< A's analysis if the caller has it; NULL: computed */
} sps_strategy;

/** method "auto", precond "auto", no explicit fallback, default budgets. */
void sps_strategy_default(sps_strategy *how);

/** Solve A x = b with a list of (method, preconditioner) plans chosen from
 *  A's features (doc/solvers.md, "The automatic strategy"): symmetric with a
 *  complete positive diagonal: CG with IC(0), Jacobi, none, then GMRES;
 *  others: GMRES(100) with ILU(0), BiCGSTAB with ILU(0), GMRES(100) with
 *  Jacobi, GMRES with a long restart (as long as its basis fits in memory),
 *  BiCGSTAB; plans that divide by a missing or zero diagonal are left out.
 *  A plan that breaks down, stagnates, diverges or runs out of iterations
 *  hands over to the next (each gets the solver's maxit, an unpreconditioned
 *  one twice that), which starts from the best iterate so far (the
 *  smallest true residual). The operator is reused; each preconditioner
 *  is set up once. The solver's settings (rtol, maxit per plan, monitor,
 *  history) apply to each attempt, and the solver's method is restored on
 *  return. info lists every attempt; its main fields are the winner's.
 *  An explicit method and precond without how->fallback run one plan, as
 *  sps_solve does. SPS_OK when the strategy ran, whatever its outcome.
 *  CLI: the default (`--method auto --precond auto`), `--fallback`. */
sps_status sps_solve_strategy(sps_solver *s, const sps_matrix *A, sps_operator *op,
                              const sps_strategy *how, const double *b, double *x,
                              sps_solve_info *info);

/** The method to use when none is asked for, from A's features: CG for a
 *  symmetric matrix with a complete positive diagonal (taken as SPD), GMRES
 *  otherwise. If why is not NULL it receives a short reason of at most len
 *  bytes, e.g. "symmetric matrix with a positive diagonal". CLI: the default
 *  of `--method`. */
sps_status sps_method_suggest(const sps_features *f, sps_method *m, char *why, size_t len);

/* ------------------------------------------------------------------------ */
/* Dense verification                                                        */
/* ------------------------------------------------------------------------ */

/** Solve A x = b densely on the host with LAPACKE dgesv (n <= 20000).
 *  SPS_ERR_NOT_COMPILED without LAPACKE; SPS_ERR_ZERO_PIVOT if singular.
 *  CLI: `--verify`. */
sps_status sps_dense_solve(sps_context *ctx, const sps_matrix *A, const double *b,
                           double *x);

/* ------------------------------------------------------------------------ */
/* Several right-hand sides: SpMM and block solves (doc/spmm.md)             */
/* ------------------------------------------------------------------------ */

/** How sps_operator_apply_multi_kind computes Y = alpha*A*X + beta*Y. */
typedef enum sps_spmm_kind {
    SPS_SPMM_AUTO = 0,     /**< NATIVE where the operator has it, else COLUMNS */
    SPS_SPMM_NATIVE = 1,   /**< spsolve's block kernel, in double: the CSR family's (csr-scalar,
                                csr-vector, merge, cusparse; on a host context the block CSR
                                loop), and on a GPU dia's and drm's own; SPS_ERR_UNSUPPORTED
                                for other operators */
    SPS_SPMM_CUSPARSE = 2, /**< cusparseSpMM (CSR_ALG1) on the operator's device CSR: the
                                baseline (GPU, CSR family, double); else SPS_ERR_UNSUPPORTED */
    SPS_SPMM_COLUMNS = 3,  /**< k products sps_operator_apply, one per column (any operator) */
    SPS_SPMM_PANEL = 4     /**< row panels after ASpT (doc/spmm.md): each panel's dense column
                                segments through shared memory, the rest row-wise; CSR family,
                                double (GPU kernel; on a host context its bitwise reference).
                                The panels are built at the first call (which allocates
                                and synchronizes) and kept with the operator until
                                sps_operator_update_values or destroy; else
                                SPS_ERR_UNSUPPORTED */
} sps_spmm_kind;

/** Y = alpha*A*X + beta*Y for k right-hand sides at once, in the operator's
 *  memory space and precision. X and Y are column-major: column c of X is
 *  the vector at X + c*ldx (ldx >= cols), column c of Y at Y + c*ldy
 *  (ldy >= rows); ldx and ldy count elements. Deterministic for a
 *  deterministic operator; each column equals sps_operator_apply's product
 *  within rounding (bitwise on a host context). beta = 0 does not read Y.
 *  Runs on the context's stream; no synchronization. k = 0 does nothing. */
sps_status sps_operator_apply_multi(sps_operator *op, int k, double alpha, const void *X,
                                    int64_t ldx, double beta, void *Y, int64_t ldy);

/** The same with a chosen computation (spmv-bench --nrhs). */
sps_status sps_operator_apply_multi_kind(sps_operator *op, sps_spmm_kind kind, int k,
                                         double alpha, const void *X, int64_t ldx, double beta,
                                         void *Y, int64_t ldy);

/** "auto", "native", "cusparse", "columns", "panel"; NULL for another value. */
const char *sps_spmm_kind_name(sps_spmm_kind kind);

/** The host reference: Y = alpha*A*X + beta*Y with the plain CSR loop, host
 *  double arrays, column-major as above; each column bitwise equal to
 *  sps_matrix_spmv_host of that column. */
sps_status sps_matrix_spmm_host(const sps_matrix *A, int k, double alpha, const double *X,
                                int64_t ldx, double beta, double *Y, int64_t ldy);

/** Time `reps` block products of k columns with `kind` after a warm-up
 *  (GPU: CUDA events around each call; host: wall clock). t is per block
 *  product, not per column. */
sps_status sps_operator_time_multi(sps_operator *op, sps_spmm_kind kind, int k, int reps,
                                   sps_timing *t);

/** Check the block product of `kind` against the host CSR reference of A
 *  (from which op was built), as sps_operator_check does for one vector: k
 *  columns of fixed pseudo-random values, alpha = 1.5, beta in {0 with Y full
 *  of NaN, -0.5}, padded leading dimensions; *max_err is the largest
 *  componentwise error, *repeatable 1 if two runs were bitwise equal.
 *  Double precision operators only. */
sps_status sps_operator_check_multi(sps_operator *op, const sps_matrix *A, sps_spmm_kind kind,
                                    int k, double *max_err, int *repeatable);

/** Solve A X = B for k right-hand sides with one block product per SpMV of
 *  the method's iteration (CG: one, BiCGSTAB: two; doc/spmm.md). B and X are n x k column-major with leading
 *  dimension n, host or device pointers (as sps_solve's b and x); X holds the
 *  initial guesses on entry. Each column keeps its own scalars and stopping
 *  test, and stops on its own: a stopped column is no longer updated.
 *  infos[j] reports column j as sps_solve's info would (the times are the
 *  whole block's). The solver's method must be CG or
 *  BiCGSTAB (SPS_ERR_UNSUPPORTED otherwise); history, monitors and engines other
 *  than classic do not apply. SPS_OK when the solve ran. CLI: `-b` with a
 *  k-column Matrix Market array. */
sps_status sps_solve_multi(sps_solver *s, sps_operator *op, sps_precond *pc, const double *B,
                           double *X, int k, sps_solve_info *infos);

/* ---- several GPUs (doc/dist.md) --------------------------------------------
 * A distributed solve runs on `size` ranks, each with its own context (one
 * GPU, or the host) and the contiguous rows [starts[rank], starts[rank + 1])
 * of a square A. Every call below marked collective must be made by every
 * rank of the communicator, in the same order. Three ways to form one, as
 * PETSc's and AMGX's distributed entry points take an MPI communicator or a
 * (rank, size, unique id) triple:
 *   SPS_DIST_THREADS  ranks are threads of one process sharing a group
 *                     (sps_dist_group_create); host contexts or GPUs
 *   SPS_DIST_NCCL     the triple: rank, size and the bytes of an NCCL unique
 *                     id (sps_dist_unique_id on one rank, passed to all)
 *   SPS_DIST_MPI      an MPI communicator (the address of an MPI_Comm): rank
 *                     and size from it; on GPU contexts rank 0 makes the
 *                     NCCL unique id and broadcasts it (builds with MPI and
 *                     NCCL); on host contexts MPI is the transport
 * Scalars are reduced in a fixed order over fixed global blocks of
 * sps_dist_block(n) rows: with row starts on block boundaries
 * (sps_dist_partition), a solve gives bitwise the same iterates on any number
 * of ranks. */
#define SPS_DIST_ID_BYTES 128

typedef struct sps_dist sps_dist;
typedef struct sps_dist_group sps_dist_group;
typedef struct sps_dist_operator sps_dist_operator;

typedef enum sps_dist_kind {
    SPS_DIST_THREADS = 0,
    SPS_DIST_NCCL = 1,
    SPS_DIST_MPI = 2
} sps_dist_kind;

typedef struct sps_dist_spec {
    sps_dist_kind kind;
    int rank, size;           /**< THREADS, NCCL (MPI: from the communicator) */
    sps_dist_group *group;    /**< THREADS: the group every rank's thread shares */
    const void *nccl_id;      /**< NCCL: SPS_DIST_ID_BYTES bytes, the same on every rank */
    const void *mpi_comm;     /**< MPI: the address of an MPI_Comm */
} sps_dist_spec;

/** A group for `size` ranks that are threads of this process. */
sps_status sps_dist_group_create(int size, sps_dist_group **g);
void sps_dist_group_destroy(sps_dist_group *g);
/** An NCCL unique id into id[SPS_DIST_ID_BYTES] (SPS_ERR_NOT_COMPILED without NCCL). */
sps_status sps_dist_unique_id(sps_context *ctx, void *id);
/** This rank's end of a communicator (collective). The context stays the caller's. */
sps_status sps_dist_create(sps_context *ctx, const sps_dist_spec *spec, sps_dist **d);
int sps_dist_rank(const sps_dist *d);
int sps_dist_size(const sps_dist *d);
/** The transport's name: "threads" or "nccl". */
const char *sps_dist_transport(const sps_dist *d);
void sps_dist_destroy(sps_dist *d);

/** Rows per reduction block for an n-row system: 256, doubled while at
 *  least 256 blocks remain, at most 65536 (it depends on n only). */
sps_idx sps_dist_block(sps_idx n);
/** Row starts (nranks + 1 entries) of contiguous blocks balanced by nonzeros
 *  (plus one per row), each a multiple of sps_dist_block(n). Ranks may be empty. */
sps_status sps_dist_partition(sps_idx n, const sps_idx *row_ptr, int nranks, sps_idx *starts);

/** The distributed operator of this rank's rows (collective): rows
 *  [starts[rank], starts[rank + 1]) of the n x n matrix as a CSR with global
 *  column indices (row_ptr[0] = 0; the FEM case). The halo plan (which rows
 *  each rank sends to which) is computed here, once. Any row starts work for
 *  products; a solve wants them on block boundaries (else SPS_ERR_INVALID_ARG). */
sps_status sps_dist_operator_create(sps_dist *d, sps_idx n, const sps_idx *starts,
                                    const sps_idx *row_ptr, const sps_idx *col_idx,
                                    const double *val, sps_dist_operator **op);
/** The same from a whole matrix every rank holds (read or generated), split
 *  by sps_dist_partition (collective). */
sps_status sps_dist_operator_from_matrix(sps_dist *d, const sps_matrix *A, sps_dist_operator **op);
/** This rank's rows: their count, and the first one's global index. */
sps_idx sps_dist_operator_rows(const sps_dist_operator *op, sps_idx *first);
/** y = A x on this rank's rows (collective); x and y host pointers of the
 *  local rows. */
sps_status sps_dist_operator_apply(sps_dist_operator *op, const double *x, double *y);
void sps_dist_operator_destroy(sps_dist_operator *op);

typedef struct sps_dist_solve_opts {
    sps_method method;        /**< SPS_CG or SPS_BICGSTAB (others: SPS_ERR_UNSUPPORTED) */
    const char *precond;      /**< "none" or "jacobi" (NULL: none) */
    double rtol, atol, dtol;  /**< as the solver's (defaults 1e-8, 0, 1e5) */
    int64_t maxit;            /**< default 10000 */
} sps_dist_solve_opts;

void sps_dist_solve_opts_default(sps_dist_solve_opts *o);
/** Solve A x = b (collective): b and x are this rank's rows, host pointers;
 *  x holds the initial guess. The info's fields are global (every rank gets
 *  the same); iterate_ms and per_iter_ms are this rank's. */
sps_status sps_dist_solve(sps_dist_operator *op, const sps_dist_solve_opts *o, const double *b,
                          double *x, sps_solve_info *info);
/** One process, `nranks` ranks, one thread each (`spsolve --gpus N`): on a
 *  GPU context rank r runs on GPU r over NCCL (SPS_ERR_NO_DEVICE naming the
 *  count when the machine has fewer GPUs; SPS_ERR_NOT_COMPILED without
 *  NCCL); on a host context the ranks are host threads (the thread
 *  transport). A is the whole matrix; b and x whole host vectors (x holds
 *  the initial guess, and gets the solution); info is rank 0's, its
 *  setup_ms including the communicator, the partition, the halo plan and
 *  the upload (not the contexts). */
sps_status sps_dist_solve_ranks(sps_context *ctx, const sps_matrix *A, int nranks,
                                const sps_dist_solve_opts *o, const double *b, double *x,
                                sps_solve_info *info);
/** Under mpiexec (builds with MPI; else SPS_ERR_NOT_COMPILED): MPI_Init
 *  unless the caller did, this process's rank and size in MPI_COMM_WORLD and
 *  its rank within its node (to choose its GPU). */
sps_status sps_dist_mpi_init(int *rank, int *size, int *local_rank);
/** MPI_Finalize if sps_dist_mpi_init called MPI_Init. */
void sps_dist_mpi_finalize(void);
/** The address of MPI_COMM_WORLD for sps_dist_spec.mpi_comm after
 *  sps_dist_mpi_init (NULL before, or without MPI). */
const void *sps_dist_mpi_world(void);
/** Solve on the processes of MPI_COMM_WORLD after sps_dist_mpi_init
 *  (collective; `mpiexec -n N spsolve --mpi`): each process holds the whole
 *  A (read or generated), b and x, and solves its rows on its context (a GPU:
 *  NCCL bootstrapped by MPI; the host: MPI itself); x is gathered on rank 0. */
sps_status sps_dist_solve_world(sps_context *ctx, const sps_matrix *A, const sps_dist_solve_opts *o,
                                const double *b, double *x, sps_solve_info *info);
/** Every rank's rows of x in order into x_all (n entries) on rank 0
 *  (collective; x_all is not read on other ranks and may be NULL there). */
sps_status sps_dist_gather(sps_dist_operator *op, const double *x, double *x_all);


#ifdef __cplusplus
}
#endif
#endif /* SPSOLVE_H */
