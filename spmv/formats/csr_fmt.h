/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/csr_fmt.h: the host and device sides shared by the CSR-based
 * backends (csr-scalar, csr-vector, merge, cusparse, and hyb's CSR tail).
 *
 * Host: the format is a copy of the CSR (sps_fmt_csr). Device: the same three
 * arrays in the operator's precision (sps_csr_dev), and the csr-scalar and
 * csr-vector launchers, which other backends reuse for their CSR parts. */
#ifndef SPS_CSR_FMT_H
#define SPS_CSR_FMT_H

#include "spmv/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_fmt_csr {
    sps_csr A;      /* owned, or borrowed from the caller (borrowed = 1; NULL arrays once detached) */
    int borrowed;
    int param;      /* backend-specific (cusparse: algorithm; csr-vector: threads per row) */
    void *extra;    /* backend-specific host data, freed with sps__free */
} sps_fmt_csr;

/* Fill the CSR bytes model and fill = 0. On a host context the format is a
 * copy of A; on a GPU context it borrows A's arrays until the upload (no host
 * copy: plain CSR costs no conversion) and is detached after it. Parameters
 * are not read. */
sps_status sps__csr_fmt_convert(sps_context *ctx, const sps_csr *A, sps_fmt **out,
                                sps_spmv_stats *st);
/* The convert prologue of the plain-CSR formats: parse params with fn (or,
 * when fn is NULL, refuse any, naming backend), then sps__csr_fmt_convert. */
sps_status sps__csr_fmt_convert_params(sps_context *ctx, const sps_csr *A, const char *backend,
                                       const char *params, sps_param_fn fn, void *user,
                                       sps_fmt **out, sps_spmv_stats *st);
/* st->detail = the formatted text, then "; row lengths mean M, max N". */
void sps__csr_fmt_detail(const sps_csr *A, sps_spmv_stats *st, const char *fmt, ...)
    SPS_PRINTF(3, 4);
void sps__csr_fmt_apply_host(const sps_fmt *f, double alpha, const double *x, double beta,
                             double *y);
sps_status sps__csr_fmt_update_host(sps_context *ctx, sps_fmt *f, const double *values);
void sps__csr_fmt_free(sps_fmt *f);
void sps__csr_fmt_detach(sps_fmt *f);
#if SPS_HAVE_CUDA
/* Download the device CSR (the sps_csr_dev every CSR-family device object
 * starts with) into owned host arrays; single-precision values come back
 * widened to double. */
sps_status sps__csr_fmt_fetch(sps_context *ctx, sps_fmt *f, const void *dev);
/* backend.h dev_rows for the CSR family: the device CSR's arrays. */
int sps__csr_fmt_dev_rows(const void *dev, sps_dev_rows *out);
#endif



/* The table entries every plain-CSR format shares (all but convert and
 * apply_host): update, free, detach after the upload, fetch back. */
#if SPS_HAVE_CUDA
#define SPS_CSR_FMT_ENTRIES                                                            \
    .update_host = sps__csr_fmt_update_host, .free_fmt = sps__csr_fmt_free,            \
    .detach = sps__csr_fmt_detach, .fetch = sps__csr_fmt_fetch,                     \
    .dev_rows = sps__csr_fmt_dev_rows
#else
#define SPS_CSR_FMT_ENTRIES                                                            \
    .update_host = sps__csr_fmt_update_host, .free_fmt = sps__csr_fmt_free,            \
    .detach = sps__csr_fmt_detach
#endif

/* csr-vector's group size (threads per row) from the mean row length: the
 * smallest of 2, 4, 8, 16, 32 that is >= nnz / nrows (32 above 16).
 * Defined in spmv/formats/csr_vector.c; hyb uses it for its tail rows. */
int sps__csr_vector_tpr(int64_t nnz, sps_idx nrows);

/* The parameter tpr=2|4|8|16|32 of csr-vector and lightspmv, for
 * sps__parse_params with a sps_tpr_param as user: sets tpr, or refuses naming
 * the backend (csr_vector.c). */
typedef struct sps_tpr_param {
    const char *backend;
    int tpr; /* 0: not given */
} sps_tpr_param;
sps_status sps__tpr_param(sps_context *ctx, void *user, const char *key, const char *value);

/* HYB host format (spmv/formats/hyb.c, hyb.cu): ELL of width K, column-major
 * with row pitch `pitch` (nrows rounded up to 32), padded with column -1 and
 * value 0 after each row's entries; the entries of a row past K go to a CSR
 * "tail" over the rows that have them (tail_rows ascending, tail_ptr into
 * tail_col/tail_val), summed by one thread group per tail row. */
typedef struct sps_fmt_hyb {
    sps_idx nrows, ncols, nnz;
    sps_idx K;
    int64_t pitch;
    sps_idx *ell_col;   /* K * pitch */
    double *ell_val;    /* K * pitch */
    sps_csr tail;       /* tail.nrows rows with a tail, tail.ncols = ncols */
    sps_idx *tail_rows; /* tail.nrows: the matrix row of each tail row */
    sps_idx *row_ptr;   /* copy of A's row pointer: update_host maps CSR values */
} sps_fmt_hyb;

/* Fill the zeroed h from A with ELL width K (spmv/formats/hyb.c; the ell
 * backend uses it with K = the longest row). *ell_col_loads: the column
 * indices the ELL kernel reads. On failure h holds what was allocated: free
 * it with the hyb table's free_fmt. */
sps_status sps__hyb_build(sps_context *ctx, const sps_csr *A, sps_idx K, sps_fmt_hyb *h,
                          int64_t *ell_col_loads);

#if SPS_HAVE_CUDA

/* A CSR on the device: values are float if single, else double. */
typedef struct sps_csr_dev {
    sps_idx nrows, ncols, nnz;
    sps_idx max_row;    /* the longest row's entries (sps_dev_rows.max_row) */
    int single;
    int param;          /* copied from sps_fmt_csr.param */
    sps_idx *row_ptr, *col_idx;
    void *val;
    size_t bytes;       /* device bytes held */
    sps_idx view_ndiag; /* sps_dev_rows.view_ndiag, and its diagonals (host memory) */
    sps_idx view_off[SPS_VIEW_DIAGS];
} sps_csr_dev;

/* The backends whose device object is an sps_csr_dev (csr_vector.c,
 * csr_scalar.c): sps__operator_dev_csr recognises them. */
extern const sps_backend sps_backend_csr_vector;
extern const sps_backend sps_backend_csr_scalar;

/* Allocate and fill d from A (d is zeroed first; freed on failure). */
sps_status sps__csr_dev_upload(sps_context *ctx, const sps_csr *A, int single, sps_csr_dev *d);
void sps__csr_dev_free(sps_csr_dev *d);

/* The backend entries shared by the plain-CSR backends: the device object is
 * a heap sps_csr_dev (param copied from the host format). */
sps_status sps__csr_fmt_upload(sps_context *ctx, const sps_fmt *f, int single, void **dev,
                               sps_spmv_stats *st);
sps_status sps__csr_fmt_update_dev(sps_context *ctx, const sps_fmt *f, void *dev);
void sps__csr_fmt_free_dev(void *dev);

/* y = alpha*A*x + beta*y with the csr-scalar kernel (spmv/formats/csr_scalar.cu). */
sps_status sps__csr_scalar_run(sps_context *ctx, const sps_csr_dev *d, double alpha,
                               const void *x, double beta, void *y);
/* The same with the csr-vector kernel and tpr threads per row
 * (spmv/formats/csr_vector.cu). With rows != NULL, row i of d is row rows[i] of y
 * (hyb's tail: then d->nrows is the number of tail rows). */
sps_status sps__csr_vector_run(sps_context *ctx, const sps_csr_dev *d, const sps_idx *rows,
                               int tpr, double alpha, const void *x, double beta, void *y);
/* The single-precision and indirect-row cases of sps__csr_vector_run, in
 * their own module (spmv/formats/csr_vector_other.cu). */
sps_status sps__csr_vector_run_other(sps_context *ctx, const sps_csr_dev *d, const sps_idx *rows,
                                     int tpr, double alpha, const void *x, double beta, void *y);
/* csr-vector's apply_dot (backend.h): y = A x and the block partials of x'y. */
sps_status sps_csr_vector_apply_dot(sps_context *ctx, void *dev, const double *x, double *y,
                                    double *part, int maxparts, int *nparts);

#endif /* SPS_HAVE_CUDA */

#ifdef __cplusplus
}
#endif
#endif
