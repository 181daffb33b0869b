/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/backend.h: the SpMV backend interface.
 *
 * A backend is one table of function pointers, registered by name in
 * spmv/registry.c. The operator (spmv/operator.c) looks the name up once, at
 * creation; the hot path is a pointer call, never a string comparison.
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
 * Files: spmv/<name>.c holds convert, apply_host, update's host part and the
 * table; spmv/<name>.cu holds the kernels behind extern "C" entry points,
 * declared in spmv/kernels.h. Entries a CPU-only build lacks stay NULL
 * (`#if SPS_HAVE_CUDA` around them) and the operator reports
 * SPS_ERR_NOT_COMPILED. */
#ifndef SPS_SPMV_BACKEND_H
#define SPS_SPMV_BACKEND_H

#include "../core/internal.h"

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

typedef struct sps_backend {
    const char *name;     /* "drm" */
    const char *summary;  /* one line for --list-spmv */
    unsigned caps;        /* SPS_CAP_* (SPS_CAP_GPU is added by the registry when apply != NULL) */

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
} sps_backend;

/* Registry (spmv/registry.c). */
int sps__backend_count(void);
const sps_backend *sps__backend_at(int i);
/* Find by the name before ':'; *params points after ':' (or to ""). */
const sps_backend *sps__backend_find(const char *spec, const char **params);

/* The built-in backends (each defined in its spmv/<name>.c). */
extern const sps_backend sps_backend_csr_scalar;
extern const sps_backend sps_backend_csr_vector;
extern const sps_backend sps_backend_merge;
extern const sps_backend sps_backend_drm;
extern const sps_backend sps_backend_dia;
extern const sps_backend sps_backend_hyb;
extern const sps_backend sps_backend_cusparse;

/* Parameter parsing shared by backends: walks "a,b=3,c" calling fn(key, value)
 * (value "" when absent). Returns the first non-OK status from fn. */
typedef sps_status (*sps_param_fn)(sps_context *ctx, void *user, const char *key,
                                   const char *value);
sps_status sps__parse_params(sps_context *ctx, const char *params, sps_param_fn fn,
                             void *user);

/* The CSR bytes model, the floor of DESIGN.md's performance method: row
 * pointer, column index and value once, x once, y written once (and read if
 * beta != 0). Every format's model follows the same rule (doc/spmv.md). */
double sps__csr_bytes_model(const sps_csr *A, int beta_nonzero);

/* The operator (spmv/operator.c), used by solvers and preconditioners. */
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
};

/* Build an operator with a given backend (operator.c): convert (timed), upload
 * (timed), fill op->info. The matrix's CSR is only read. */
sps_status sps__operator_build(sps_context *ctx, const sps_csr *A, const sps_backend *be,
                               const char *params, const sps_operator_opts *opts,
                               sps_operator **op);

/* auto (tune = 0) and tune (tune = 1) (spmv/select.c): build the chosen
 * operator and write why into op->info.reason (and select_ms). */
sps_status sps__select(sps_context *ctx, const sps_matrix *A, int tune,
                       const sps_operator_opts *opts, sps_operator **op);

#ifdef __cplusplus
}
#endif
#endif /* SPS_SPMV_BACKEND_H */
