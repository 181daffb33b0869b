/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/lightspmv.c: the lightspmv backend (LightSpMV, Liu &
 * Schmidt, ASAP 2015: CSR with rows handed out at run time through an atomic
 * row counter): table, parameters, host reference. A benchmark row, never
 * auto's choice: the seed found it slower than a static row mapping, and the
 * bench shows it.
 *
 * The format is the CSR itself (the CSR family's borrow, upload, fetch). A
 * vector of V lanes (V = csr-vector's group size from the mean row length, or
 * tpr=V) sums one row: lane l the entries l, l+V, ... in order, then a
 * shuffle-down tree. Which warp takes which row changes from run to run; the
 * order of each row's sum does not, so y is bitwise the same. apply_host
 * repeats that order. */
#include "csr_fmt.h"
#include "kernels.h"

SPS_DECLARE_GPU_BACKEND(sps_lightspmv)

static sps_status convert(sps_context *ctx, const sps_csr *A, const char *params, sps_fmt **out,
                          sps_spmv_stats *st)
{
    sps_tpr_param forced = {"lightspmv", 0};
    sps_status s = sps__csr_fmt_convert_params(ctx, A, "lightspmv", params, sps__tpr_param,
                                               &forced, out, st);
    if (s != SPS_OK) return s;
    sps_fmt_csr *f = (sps_fmt_csr *)*out;
    f->param = forced.tpr ? forced.tpr : sps__csr_vector_tpr(A->nnz, A->nrows);
    sps__csr_fmt_detail(A, st, "%d threads per row (%s), rows taken from an atomic counter",
                        f->param, forced.tpr ? "forced" : "from the mean row length");
    return SPS_OK;
}

static void apply_host(const sps_fmt *fmt, double alpha, const double *x, double beta, double *y)
{
    const sps_fmt_csr *f = (const sps_fmt_csr *)fmt;
    const sps_csr *A = &f->A;
    const int V = f->param;
    double lane[32];
    for (sps_idx r = 0; r < A->nrows; r++) {
        for (int l = 0; l < V; l++) {
            lane[l] = 0.0;
            for (sps_idx p = A->row_ptr[r] + l; p < A->row_ptr[r + 1]; p += V)
                lane[l] += A->val[p] * x[A->col_idx[p]];
        }
        for (int off = V / 2; off > 0; off /= 2) /* __shfl_down_sync: lane l takes l + off */
            for (int l = 0; l < off; l++) lane[l] += lane[l + off];
        y[r] = beta == 0.0 ? alpha * lane[0] : alpha * lane[0] + beta * y[r];
    }
}

const sps_backend sps_backend_lightspmv = {
    .name = "lightspmv",
    .summary = "CSR with rows handed to warps at run time by an atomic row counter (LightSpMV; "
               "benchmark row)",
    .caps = SPS_CAP_DETERMINISTIC | SPS_CAP_SINGLE,
    .bench_only = 1,
    .convert = convert,
    .apply_host = apply_host,
    SPS_CSR_FMT_ENTRIES,
    SPS_GPU_ENTRIES(sps_lightspmv),
};
