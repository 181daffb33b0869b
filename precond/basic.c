/* SPDX-License-Identifier: MIT */
/* spsolve/precond/basic.c: the diagonal preconditioners (host reference and
 * tables; the device side is one upload, precond/precond_gpu.cu), and the
 * helpers every type shares.
 *
 *   none      z = r (M = I: the solvers skip it)
 *   jacobi    z = D^-1 r, D = diag(A)
 *   l1jacobi  z = D1^-1 r, d1_i = a_ii + sign(a_ii) sum_{j != i} |a_ij|
 *             (Baker, Falgout, Kolev and Yang's l1 scaling with point blocks):
 *             never smaller in modulus than a_ii, so D1^-1 A has its
 *             eigenvalues in (0, 1] for SPD A; a zero row is refused.
 *
 * Both diagonal types declare fused_diag: the solvers fold the scaling into
 * their vector updates and never call apply. */
#include "pc_impl.h"

#include <math.h>
#include <string.h>

/* ---- shared helpers ------------------------------------------------------ */

sps_status sps__pc_pivot_error(sps_precond *pc, int cholesky, sps_idx row, sps_idx missing)
{
    const char *nm = pc->type->name;
    sps_idx n = pc->n;
    if (missing > 0)
        return sps__err(pc->ctx, SPS_ERR_ZERO_PIVOT,
                        "%s: zero pivot at row %d (1-based %d) of %d: the matrix has %d row%s "
                        "with no diagonal entry; try --precond none with GMRES, or reorder",
                        nm, row, row + 1, n, missing, missing == 1 ? "" : "s");
    if (cholesky)
        return sps__err(pc->ctx, SPS_ERR_ZERO_PIVOT,
                        "%s: non-positive pivot at row %d (1-based %d) of %d: IC(0) needs a "
                        "positive definite matrix (and can break down even on one); try "
                        "--precond jacobi, or ilu0 with GMRES",
                        nm, row, row + 1, n);
    return sps__err(pc->ctx, SPS_ERR_ZERO_PIVOT,
                    "%s: zero pivot at row %d (1-based %d) of %d: the pivot vanished during the "
                    "elimination; try --precond jacobi or none, or reorder",
                    nm, row, row + 1, n);
}

sps_idx sps__pc_find_diag(const sps_csr *A, sps_idx *dpos, sps_idx *first)
{
    sps_idx missing = 0;
    *first = -1;
    for (sps_idx i = 0; i < A->nrows; i++) {
        sps_idx d = -1;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1] && A->col_idx[p] <= i; p++)
            if (A->col_idx[p] == i) d = p;
        if (dpos) dpos[i] = d;
        if (d < 0 && missing++ == 0) *first = i;
    }
    return missing;
}

/* The stored diagonal entry of row i (0 if absent). */
static double diag_entry(const sps_csr *A, sps_idx i)
{
    double a = 0.0;
    for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
        if (A->col_idx[p] == i) a = A->val[p];
    return a;
}

sps_status sps__pc_inverse_diag(sps_precond *pc, const sps_csr *A, double **out)
{
    const char *nm = pc->type->name;
    sps_idx n = A->nrows, first, missing = sps__pc_find_diag(A, NULL, &first);
    if (missing)
        return sps__err(pc->ctx, SPS_ERR_UNSUPPORTED,
                        "%s: row %d (1-based %d) of %d has no diagonal entry (%d row%s "
                        "lack%s one); try --precond ilu0 or --precond none",
                        nm, first, first + 1, n, missing, missing == 1 ? "" : "s",
                        missing == 1 ? "s" : "");
    double *d = sps__malloc(sps__mul_size((size_t)n, sizeof *d));
    if (!d) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", nm);
    for (sps_idx i = 0; i < n; i++) {
        double a = diag_entry(A, i);
        if (a == 0.0) {
            sps__free(d);
            return sps__err(pc->ctx, SPS_ERR_UNSUPPORTED,
                            "%s: row %d (1-based %d) of %d has a zero diagonal entry; try "
                            "--precond ilu0 or --precond none",
                            nm, i, i + 1, n);
        }
        d[i] = 1.0 / a;
    }
    *out = d;
    return SPS_OK;
}

sps_status sps__pc_apply_diag_host(sps_precond *pc, const double *r, double *z)
{
    const double *d = pc->fused_diag;
    for (sps_idx i = 0; i < pc->n; i++) z[i] = d[i] * r[i];
    return SPS_OK;
}

/* ---- none ------------------------------------------------------------------ */

static sps_status apply_none_host(sps_precond *pc, const double *r, double *z)
{
    memcpy(z, r, (size_t)pc->n * sizeof *z);
    return SPS_OK;
}

static sps_status none_setup(sps_precond *pc, const sps_pc_input *in)
{
    (void)in;
    pc->apply = apply_none_host;
    return SPS_OK;
}

#if SPS_HAVE_CUDA
static sps_status none_setup_dev(sps_precond *pc, const sps_pc_input *in, void *host)
{
    (void)in; (void)host;
    return sps__pc_gpu_none(pc);
}
#endif

const sps_pc_type sps_pc_none = {
    .name = "none",
    .summary = "no preconditioner (M = I)",
    .caps = SPS_PCT_IDENTITY | SPS_PCT_SYMMETRIC,
    .keys = "",
    .setup_host = none_setup,
    .setup_dev = SPS_PC_DEV(none_setup_dev),
};

/* ---- jacobi, l1jacobi: M^-1 = diag(d) -------------------------------------- */

static void diag_destroy(sps_precond *pc)
{
    sps__free(pc->impl);
    pc->impl = NULL;
    pc->fused_diag = NULL;
}

static void diag_install(sps_precond *pc, double *d)
{
    pc->impl = d;
    pc->fused_diag = d;
    pc->destroy = diag_destroy;
    pc->apply = sps__pc_apply_diag_host;
}

static sps_status jacobi_setup(sps_precond *pc, const sps_pc_input *in)
{
    double *d = NULL;
    sps_status st = sps__pc_inverse_diag(pc, &in->A->A, &d);
    if (st == SPS_OK) diag_install(pc, d);
    return st;
}

/* d_i = 1 / (a_ii + sign(a_ii) sum_{j != i} |a_ij|); a missing or zero
 * diagonal counts as positive, a row of zeros is refused. */
static sps_status l1jacobi_setup(sps_precond *pc, const sps_pc_input *in)
{
    const sps_csr *A = &in->A->A;
    double *d = sps__malloc(sps__mul_size((size_t)A->nrows, sizeof *d));
    if (!d) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "l1jacobi: out of memory");
    for (sps_idx i = 0; i < A->nrows; i++) {
        double a = 0.0, off = 0.0;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
            if (A->col_idx[p] == i) a = A->val[p];
            else off += fabs(A->val[p]);
        }
        double m = a < 0 ? a - off : a + off;
        if (m == 0.0) {
            sps__free(d);
            return sps__err(pc->ctx, SPS_ERR_UNSUPPORTED,
                            "l1jacobi: row %d (1-based %d) of %d is zero; try --precond none",
                            i, i + 1, A->nrows);
        }
        d[i] = 1.0 / m;
    }
    diag_install(pc, d);
    return SPS_OK;
}

#if SPS_HAVE_CUDA
static sps_status diag_setup_dev(sps_precond *pc, const sps_pc_input *in, void *host)
{
    (void)in;
    return sps__pc_gpu_diag(pc, host);
}

/* GPU context: the diagonal straight from the device copy (poisson3d:160 on
 * the H100: the host pass and the upload cost 100 ms); a refused row goes
 * back to the host setup for its message. */
static sps_status diag_setup_gpu(sps_precond *pc, const sps_pc_input *in, int l1)
{
    double *d = NULL;
    int refused = 0;
    sps_status st = sps__pc_gpu_diag_scan(pc->ctx, in->A, l1, &d, NULL, &refused);
    if (st != SPS_OK) return st;
    if (refused) return SPS_ERR_UNSUPPORTED;
    return sps__pc_gpu_diag_adopt(pc, d);
}

static sps_status jacobi_setup_gpu(sps_precond *pc, const sps_pc_input *in)
{
    return diag_setup_gpu(pc, in, 0);
}

static sps_status l1jacobi_setup_gpu(sps_precond *pc, const sps_pc_input *in)
{
    return diag_setup_gpu(pc, in, 1);
}
#endif

const sps_pc_type sps_pc_jacobi = {
    .name = "jacobi",
    .summary = "Jacobi: M = diag(A), fused into the solvers' vector updates",
    .caps = SPS_PCT_SYMMETRIC,
    .keys = "",
    .setup_host = jacobi_setup,
    .setup_dev = SPS_PC_DEV(diag_setup_dev),
    .setup_gpu = SPS_PC_DEV(jacobi_setup_gpu),
};

const sps_pc_type sps_pc_l1jacobi = {
    .name = "l1jacobi",
    .summary = "l1-Jacobi: M = diag(|a_ii| + sum_j!=i |a_ij|) (signed), fused like jacobi",
    .caps = SPS_PCT_SYMMETRIC,
    .keys = "",
    .setup_host = l1jacobi_setup,
    .setup_dev = SPS_PC_DEV(diag_setup_dev),
    .setup_gpu = SPS_PC_DEV(l1jacobi_setup_gpu),
};
