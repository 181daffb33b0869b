/* SPDX-License-Identifier: MIT */
/* spsolve/precond/pc_impl.h: how preconditioners are built. Shared by the
 * registry (precond/registry.c) and the types; the solvers never include it.
 *
 * A type is one table, registered by name in precond/registry.c (one line).
 * sps_precond_create_ex finds the table by the name before ':', parses the
 * `key=value,...` after it into the type's parameter block, then times:
 *
 *   setup_host  structural checks (host and GPU paths both run them, so both
 *               report the same row in the same words), and on a host context
 *               the whole preconditioner: pc->impl, pc->apply, pc->destroy
 *               (and pc->fused_diag when M^-1 is a diagonal). With in->gpu set
 *               it may stop at what setup_dev needs.
 *   setup_dev   on a GPU context: builds the device preconditioner from the
 *               host one (passed as `host`, freed by the caller afterwards).
 *               Sets pc->destroy before allocating anything, so a failure
 *               part-way is cleaned up by pc->destroy(pc). NULL in a build
 *               without CUDA.
 *
 * Files: a type lives in its own file pair (precond/<name>.c with the host
 * reference and the table, precond/<name>.cu with the kernels) or its own
 * folder (precond/cheby/); its .cu entry points are declared in a header
 * beside them, not here. */
#ifndef SPS_PC_IMPL_H
#define SPS_PC_IMPL_H

#include "precond.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Capabilities of a type. */
#define SPS_PCT_IDENTITY  0x1u /* M = I */
#define SPS_PCT_SYMMETRIC 0x2u /* M^-1 symmetric (positive definite for SPD A): fit for CG */
#define SPS_PCT_USES_OP   0x4u /* applies A through an operator (given, or built) */

typedef struct sps_pc_input {
    const sps_matrix *A;
    sps_operator *op; /* may be NULL: a type that needs A*x builds its own */
    int gpu;          /* a GPU context: setup_dev follows */
} sps_pc_input;

typedef struct sps_pc_type {
    const char *name;    /* "cheby" */
    const char *summary; /* one line for --list-precond */
    unsigned caps;       /* SPS_PCT_* */
    const char *keys;    /* parameter keys, for messages: "degree, iters" ("" if none) */
    size_t prm_size;     /* bytes of the parameter block pc->prm (0: none, prm is NULL) */
    void (*prm_default)(void *prm); /* may be NULL: all zero */
    /* A known key (one of `keys`) with its value ("" when absent). */
    sps_status (*prm_set)(sps_context *ctx, void *prm, const char *key, const char *value);
    sps_status (*setup_host)(sps_precond *pc, const sps_pc_input *in);
    sps_status (*setup_dev)(sps_precond *pc, const sps_pc_input *in, void *host);
    /* Optional, GPU context: the whole setup from the matrix's device copy,
     * no host pass. SPS_ERR_UNSUPPORTED (with no message) sends the setup to
     * the host path, which words the refusal (a zero pivot, a missing
     * diagonal) exactly as on a host context. */
    sps_status (*setup_gpu)(sps_precond *pc, const sps_pc_input *in);
    /* Optional: numeric-only re-setup on A's new values in the pattern pc was
     * built on (sps__pc_refresh has checked the pattern), reusing the symbolic
     * step; pc->impl is the host or the device one, as pc->ctx says. On
     * failure pc is left exactly as it was and keeps working. NULL: the spec
     * is built again and swapped in. */
    sps_status (*refresh)(sps_precond *pc, const sps_matrix *A);
} sps_pc_type;

/* ---- helpers the types share (precond/registry.c, precond/diag.c) ------- */

/* A fingerprint of A's pattern: its size, its entry count and a sample of at
 * most 4096 row pointers and column indices (cheap at any size; a refresh
 * with another pattern is refused on it). */
uint64_t sps__pc_pattern(const sps_csr *A);
/* sps_precond_update_values for every type but amg: the pattern check, then
 * the type's refresh (ilu0, ic0: numeric only) or, without one, the same spec
 * built again on A's values and swapped into pc (jacobi, l1jacobi, cheby,
 * bjacobi: their setup is numeric only). setup_ms becomes the refresh's. */
sps_status sps__pc_refresh(sps_precond *pc, const sps_matrix *A);

/* An integer parameter in [lo, hi]: else SPS_ERR_INVALID_ARG naming it. */
sps_status sps__pc_int(sps_context *ctx, const char *type, const char *key, const char *value,
                       long lo, long hi, int *out);
/* A positive finite number. */
sps_status sps__pc_num(sps_context *ctx, const char *type, const char *key, const char *value,
                       double *out);

/* The zero-pivot message, identical on the host and the GPU paths:
 * `missing` > 0 when the pivot is a missing diagonal entry; cholesky selects
 * the IC wording. */
sps_status sps__pc_pivot_error(sps_precond *pc, int cholesky, sps_idx row, sps_idx missing);

/* Position of each row's diagonal entry (-1 if none; dpos may be NULL);
 * returns the number of rows without one and the first such row in *first
 * (-1 if none). */
sps_idx sps__pc_find_diag(const sps_csr *A, sps_idx *dpos, sps_idx *first);

/* 1/a_ii for every row (n entries, sps__malloc'ed), or SPS_ERR_UNSUPPORTED
 * naming the first row without a diagonal entry or with a zero one. */
sps_status sps__pc_inverse_diag(sps_precond *pc, const sps_csr *A, double **dinv);

/* The host apply z = d .* r with d = pc->fused_diag. */
sps_status sps__pc_apply_diag_host(sps_precond *pc, const double *r, double *z);

/* One triangle of an incomplete factor for Jacobi sweeps (precond/ilu.c):
 * row i's diagonal is v[dpos[i]]; its off-diagonal terms are [rp[i], dpos[i])
 * (lower) or (dpos[i], rp[i + 1]) (upper); unit: the diagonal is 1. */
typedef struct sps_ilu_tri {
    const sps_idx *rp, *ci, *dpos;
    const double *v;
    int lower, unit;
} sps_ilu_tri;

/* ic0 with Jacobi sweeps: what the device needs besides L's CSR: L's
 * diagonal positions, and L' as a pattern (row pointer, columns, diagonal
 * positions) with T.val[q] = L.val[perm[q]]. */
typedef struct sps_ilu_pattern {
    const sps_idx *dpos, *trp, *tci, *tdpos, *perm;
} sps_ilu_pattern;

/* ilu0 / ic0 (precond/ilu.c), for tests: the factor's entry count (nnz,
 * may be NULL) and values (out, may be NULL), host or device; natural order
 * only. */
sps_status sps__ilu_factor_values(const sps_precond *pc, double *out, int64_t *nnz);

/* A type's .setup_dev: fn in a CUDA build (fn defined under SPS_HAVE_CUDA), else NULL. */
#if SPS_HAVE_CUDA
#define SPS_PC_DEV(fn) fn
#else
#define SPS_PC_DEV(fn) NULL
#endif

#if SPS_HAVE_CUDA
/* Device setups of the basic types (precond/precond_gpu.cu). */
sps_status sps__pc_gpu_none(sps_precond *pc);
/* d: M^-1's diagonal on the host, n entries: uploaded, becomes pc->fused_diag. */
sps_status sps__pc_gpu_diag(sps_precond *pc, const double *d);
/* One pass over A's device CSR, a thread per row summing in the host's order:
 * *dinv (device, n entries, the caller frees it with sps__dfree) gets
 * 1 / a_ii (l1 = 0, jacobi's) or 1 / (a_ii + sign(a_ii) sum_{j != i} |a_ij|)
 * (l1 = 1), bitwise the host's; *gersh (may be NULL) max_i |d_i| sum_j |a_ij|;
 * *refused 1 when a row is one the host setup refuses (jacobi: a missing or
 * zero diagonal; l1: a zero row), then *dinv is NULL. */
sps_status sps__pc_gpu_diag_scan(sps_context *ctx, const sps_matrix *A, int l1, double **dinv,
                                 double *gersh, int *refused);
/* Adopt a device diagonal (from sps__pc_gpu_diag_scan) as pc->fused_diag. */
sps_status sps__pc_gpu_diag_adopt(sps_precond *pc, double *dinv);
/* A: square, sorted, every diagonal entry present. dpos: NULL for exact
 * (SpSV) solves, else the diagonal positions and `sweeps` Jacobi sweeps.
 * fsweeps: 0 for csrilu02, else that many fixed-point sweeps (factor=par,
 * precond/parilu/). */
sps_status sps__pc_gpu_ilu0(sps_precond *pc, const sps_csr *A, const sps_idx *dpos, int sweeps, int fsweeps);
/* ilu0:factor=par (fsweeps sweeps) from A's device copy, no host pass;
 * sweeps >= 0: that many Jacobi sweeps per triangle, < 0: exact (SpSV)
 * solves. SPS_ERR_UNSUPPORTED, without a message, when a row has no
 * diagonal entry (the host path words it). */
sps_status sps__pc_gpu_ilu0_par(sps_precond *pc, const sps_matrix *A, int sweeps, int fsweeps);
/* ic0:factor=par likewise: tril(A), the factor and L' all on the device.
 * SPS_ERR_UNSUPPORTED, without a message, when a row has no diagonal entry
 * or A is not exactly symmetric (the host path decides and words it). */
sps_status sps__pc_gpu_ic0_par(sps_precond *pc, const sps_matrix *A, int sweeps, int fsweeps);
/* L: the lower triangle of a symmetric A, each row ending with its diagonal.
 * t: L' as a pattern (its values gathered on the device); sweeps >= 0: that
 * many Jacobi sweeps per triangle, < 0: exact (SpSV) solves with L and L'. */
sps_status sps__pc_gpu_ic0(sps_precond *pc, const sps_csr *L, const sps_ilu_pattern *t, int sweeps,
                           int fsweeps);
/* Numeric-only refresh of a device ilu0/ic0: vals (host, nnz entries) are the
 * new values in the factor's pattern (ilu0: A's; ic0: tril(A)). Factorizes
 * into a scratch copy with the kept analysis; a zero pivot fails with the
 * setup's words and leaves pc as it was; else the factor takes the values and
 * the triangular solves (SpSV or L' for the sweeps) follow. */
sps_status sps__pc_gpu_ilu_refresh(sps_precond *pc, const double *vals, sps_idx nnz);
/* The device factor's entry count and values (sps__ilu_factor_values). */
sps_status sps__pc_gpu_ilu_values(const sps_precond *pc, double *out, int64_t *nnz);
#endif

#ifdef __cplusplus
}
#endif
#endif
