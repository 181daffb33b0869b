/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/backend.h: the SpMV backend interface.
 *
 * A backend is one table of function pointers, registered by name in
 * spmv/registry.c. sps_operator_create (spmv/create.c) looks the name up once;
 * the hot path is a pointer call, never a string comparison. Layers and the
 * one-way dependencies between them are in doc/spmv.md ("Code layout").
 *
 * Life of a format:
 *   convert     host CSR -> host format object (timed by the caller as
 *               "convert"); may refuse with SPS_ERR_UNSUPPORTED and a reason.
 *   apply_host  y = alpha*A*x + beta*y from the host format's own arrays, in
 *               double: the executable specification and the tests' oracle.
 *   upload      host format -> device object in the requested precision (timed
 *               by the caller as "upload"); GPU builds only.
 *   apply       the same product on the device, on the context's stream: no
 *               allocation, no synchronization; beta == 0 never reads y.
 *   update      new CSR values (same pattern) -> host format values and the
 *               device copy, without redoing the analysis.
 *   free_dev, free_fmt.
 *
 * Files: spmv/formats/<name>.c holds convert, apply_host, update's host part
 * and the table; spmv/formats/<name>.cu holds the kernels behind extern "C"
 * entry points, declared in spmv/formats/kernels.h. Entries a CPU-only build lacks stay NULL
 * (`#if SPS_HAVE_CUDA` around them) and the operator reports
 * SPS_ERR_NOT_COMPILED. */
#ifndef SPS_SPMV_BACKEND_H
#define SPS_SPMV_BACKEND_H

#include "core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_fmt sps_fmt;  /* each backend defines its own struct sps_fmt_<name> and casts */

/* Statistics a backend fills in convert (host part) and upload (device part). */
typedef struct sps_spmv_stats {
    size_t device_bytes;    /* upload: bytes allocated on the device */
    double bytes_per_spmv;  /* convert: bytes one SpMV moves, for double values
                               (operator.c rescales for single: see value_bytes
                               and index_bytes) */
    double value_bytes;     /* convert: part of bytes_per_spmv that is matrix values + x + y (scales with precision) */
    int64_t slots;          /* stored values including padding */
    double fill;            /* (slots - nnz) / slots */
    double balance_var;     /* variance of operand counts between thread-block work units */
    int64_t blocks;         /* work units (DRM sub-blocks, HDIA segments, ...) */
    sps_idx ell_width;      /* HYB */
    int64_t coo_entries;    /* HYB */
    char detail[256];       /* one line: e.g. "seg=32 diags/seg mean 7.1 max 11, 155 sub-blocks" */
    unsigned caps_add;      /* convert: capabilities a parameterization adds to the table's
                               (cusparse:alg2 adds SPS_CAP_DETERMINISTIC) */
} sps_spmv_stats;

/* A device matrix's rows as one thread walks them (backend.h dev_rows; the
 * one-kernel engine, doc/solvers.md): double precision, square. */
enum { SPS_ROWS_CSR = 1, SPS_ROWS_DIA = 2 };
/* The CSR family counts its longest row (a pass over row_ptr on the host at
 * upload) only up to this many rows: the one-kernel engine that reads it
 * takes at most 16384 by default, and the pass costs 1 ms per 4M rows of
 * every large build. */
#define SPS_DEV_ROWS_COUNTED 65536
/* The most diagonals a CSR's DIA view (sps_dev_rows.view_ndiag) lists. */
#define SPS_VIEW_DIAGS 32
typedef struct sps_dev_rows {
    int kind;                         /* SPS_ROWS_CSR or SPS_ROWS_DIA */
    sps_idx n;                        /* rows = columns */
    sps_idx ndiag;                    /* DIA: diagonals */
    sps_idx nnz;                      /* CSR: entries; DIA: ndiag * n slots */
    sps_idx max_row;                  /* the longest row's terms (CSR: entries, counted up to
                                         SPS_DEV_ROWS_COUNTED rows, SPS_IDX_MAX above; DIA: ndiag) */
    const sps_idx *row_ptr, *col_idx; /* CSR: n + 1, nnz (columns ascending in a row) */
    const sps_idx *off;               /* DIA: ndiag offsets, ascending */
    const double *val;                /* CSR: nnz; DIA: val[d * n + row] */
    sps_idx view_ndiag;               /* CSR: its distinct diagonals (column - row) where there
                                         are at most SPS_VIEW_DIAGS and n <= SPS_ONEK_AUTO_MAX,
                                         else 0: the one-kernel engine may stage the rows as
                                         DIA (solvers/kernels.cuh onek_stage) */
    const sps_idx *view_off;          /* CSR: those diagonals ascending, in HOST memory (the
                                         launchers read them; no kernel does) */
} sps_dev_rows;

/* The bounds within which auto's engine (solvers/engine.c) runs a solve as
 * one kernel, here because auto's SpMV rule (select.c) reads them too: at
 * most SPS_ONEK_AUTO_MAX rows (measured on the H100, doc/solvers.md
 * "Iteration engine"), and at most SPS_ONEK_AUTO_SERIAL terms that one
 * thread walks in turn per SpMV, its rows (n / 1024, rounded up) times the
 * longest row. One thread a row is latency-bound on long rows: on the H100
 * run of every shared matrix (bench/results/robust.md, 2026-11-27) the one
 * kernel took 70-700 us per iteration where this was 176-6370 (bcsstk13/15/18,
 * raefsky1, cavity10, circuit_2: one row of 1274 entries); about 10 where it
 * was at most 46 (1138_bus: 936 iterations of CG+Jacobi in 8.5 ms to the
 * solution). */
#define SPS_ONEK_AUTO_MAX 12288
#define SPS_ONEK_AUTO_SERIAL 128
static inline int64_t sps__onek_serial(int64_t rows, int64_t max_row)
{
    return (rows + 1023) / 1024 * max_row;
}

typedef struct sps_backend {
    const char *name;     /* "drm" */
    const char *summary;  /* one line for --list-spmv */
    unsigned caps;        /* SPS_CAP_* (SPS_CAP_GPU is added by the registry when apply != NULL) */
    int bench_only;       /* a benchmark row (ell, coo, bsr, lightspmv): tune never times it
                             and auto's rule never names it; built only when asked by name */

    /* params: text after "name:" (e.g. "nomerge,seg=64"), "" if none. Unknown
     * parameters are SPS_ERR_INVALID_ARG naming them. */
    sps_status (*convert)(sps_context *ctx, const sps_csr *A, const char *params,
                          sps_fmt **out, sps_spmv_stats *st);
    void (*apply_host)(const sps_fmt *f, double alpha, const double *x, double beta,
                       double *y);
    /* CSR values (in A's CSR order, same pattern as converted) -> format values. */
    sps_status (*update_host)(sps_context *ctx, sps_fmt *f, const double *csr_values);
    void (*free_fmt)(sps_fmt *f);

    /* GPU part (NULL in a CPU-only build). single != 0: values stored as float,
     * x and y are float*. */
    sps_status (*upload)(sps_context *ctx, const sps_fmt *f, int single, void **dev,
                         sps_spmv_stats *st);
    sps_status (*apply)(sps_context *ctx, void *dev, double alpha, const void *x,
                        double beta, void *y);
    /* Re-upload the values of f into dev (after update_host). */
    sps_status (*update_dev)(sps_context *ctx, const sps_fmt *f, void *dev);
    void (*free_dev)(void *dev);

    /* Optional, for formats that only borrow the caller's CSR on a GPU context
     * (the CSR family: their "conversion" is no copy at all). detach drops the
     * borrowed host arrays after a successful upload or update; fetch rebuilds
     * owned host arrays from the device object (when apply_host is asked for
     * later) and returns at once if the host arrays are there. */
    void (*detach)(sps_fmt *f);
    sps_status (*fetch)(sps_context *ctx, sps_fmt *f, const void *dev);

    /* Optional (GPU, double precision, square matrices): the solvers' fused
     * "SpMV plus dot" (doc/solvers.md, "Iteration engine"): y = A x, and with
     * G <= maxparts thread blocks (G a function of the matrix and maxparts
     * only), part[b] = block b's sum of x_i y_i over its rows in a fixed
     * order; *nparts = G. Deterministic. SPS_ERR_UNSUPPORTED for a single or
     * non-square operator. NULL: not offered. */
    sps_status (*apply_dot)(sps_context *ctx, void *dev, const double *x, double *y, double *part,
                            int maxparts, int *nparts);

    /* Optional (GPU, double precision): the block product Y = alpha*A*X +
     * beta*Y over k column-major vectors (doc/spmm.md), deterministic, no
     * allocation; beta == 0 never reads Y. sps_operator_apply_multi's
     * native kind for formats outside the CSR family (dia, drm).
     * SPS_ERR_UNSUPPORTED for a single-precision object. NULL: not offered. */
    sps_status (*apply_multi)(sps_context *ctx, void *dev, int k, double alpha, const double *X,
                              int64_t ldx, double beta, double *Y, int64_t ldy);

    /* Optional (GPU): the device object's rows for a kernel that walks them
     * itself (sps_dev_rows above). Returns 0, leaving *out alone, for a
     * single-precision or non-square object. NULL: not offered. */
    int (*dev_rows)(const void *dev, sps_dev_rows *out);
} sps_backend;

/* Registry (spmv/registry.c): the one line a new format adds is there. */
int sps__backend_count(void);
const sps_backend *sps__backend_at(int i);
/* Find by the name before ':'; *params points after ':' (or to ""). */
const sps_backend *sps__backend_find(const char *spec, const char **params);

/* The built-in backends are defined in spmv/formats/<name>.c as
 * `const sps_backend sps_backend_<name>` and listed once, in registry.c. */

/* Helpers for backends (spmv/backend.c). Parameter parsing: walks "a,b=3,c" calling fn(key, value)
 * (value "" when absent). Returns the first non-OK status from fn. */
typedef sps_status (*sps_param_fn)(sps_context *ctx, void *user, const char *key,
                                   const char *value);
sps_status sps__parse_params(sps_context *ctx, const char *params, sps_param_fn fn,
                             void *user);

/* The CSR bytes model, the floor of DESIGN.md's performance method: row
 * pointer, column index and value once, x once, y written once (and read if
 * beta != 0). Every format's model follows the same rule (doc/spmv.md). */
double sps__csr_bytes_model(const sps_csr *A, int beta_nonzero);

/* A backend that takes no parameters: SPS_ERR_INVALID_ARG naming the first
 * one given. */
sps_status sps__no_params(sps_context *ctx, const char *backend, const char *params);

/* Do formats that can (drm, dia) convert a matrix of nnz entries on the
 * device? On a GPU context from 32,768 entries (below, the host's pass is
 * cheaper: backend.c); SPS_CONVERT=host asks for the host conversion (the
 * reference) whatever the size, SPS_CONVERT=device for the device's. */
int sps__convert_on_device(const sps_context *ctx, int64_t nnz);

#if SPS_HAVE_CUDA
/* Upload n doubles to dst as double, or as float when single (converted on
 * the host in bounded chunks). */
sps_status sps__upload_values(sps_context *ctx, void *dst, const double *src, size_t n,
                              int single);
#endif

/* The operator object's fields: built by spmv/operator.c (spmv/operator.h),
 * read by the solvers and the tests. Backends never see an operator. */
struct sps_operator {
    sps_context *ctx;
    const sps_backend *be;
    sps_fmt *fmt;
    void *dev;        /* NULL on a host context */
    int single;
    sps_idx nrows, ncols;
    int64_t nnz;
    sps_spmv_stats st;
    sps_operator_info info;
    void *panel;      /* SPS_SPMM_PANEL's row panels (spmv/spmm.c): built at their first
                         use, dropped by destroy and update_values */
};

#ifdef __cplusplus
}
#endif
#endif /* SPS_SPMV_BACKEND_H */
