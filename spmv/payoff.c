/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/payoff.c: the DRM paper's argument. A format that costs
 * extra_ms more to build than a reference and saves saved_us per SpMV pays for
 * itself after extra_ms / saved_us SpMVs. Every caller (auto's selection,
 * spsolve's summary, spmv-bench's table) uses this one rule; the measured
 * version of the payoff figures (a timed csr-vector reference) lives here too,
 * so that no program builds its own second operator. */
#include "core/internal.h"
#include "spmv/operator.h"

#include <stdio.h>
#include <string.h>

double sps_break_even_spmvs(double extra_ms, double saved_us)
{
    if (!(saved_us > 0)) return -1.0;  /* not faster: never pays (NaN too) */
    if (!(extra_ms > 0)) return 0.0;   /* cheaper to build and faster */
    return extra_ms * 1e3 / saved_us;
}

/* Measured payoff: the operator and a csr-vector reference built beside it,
 * each timed (median, after a warm-up). Fills the payoff fields of *in from
 * the measurements; the reference is destroyed before returning. */
static void payoff_line(sps_operator_info *in, const char *how)
{
    char pays[48];
    if (in->break_even < 0) snprintf(pays, sizeof pays, "never pays");
    else snprintf(pays, sizeof pays, "pays after %.0f", in->break_even);
    if (!strcmp(in->backend, "csr-vector")) {
        snprintf(in->payoff, sizeof in->payoff,
                 "csr-vector: the reference, %.2f us per SpMV (%s); its build %.2f ms = %.0f SpMVs",
                 in->ref_us, how, in->convert_ms + in->upload_ms, in->convert_spmvs);
        return;
    }
    if (!(in->saved_us > 0)) {
        snprintf(in->payoff, sizeof in->payoff,
                 "%s: build %.2f ms more than csr-vector = %.0f SpMVs, and no faster per SpMV "
                 "(%.2f vs %.2f us, %s): never pays", in->backend, in->extra_ms, in->convert_spmvs,
                 in->spmv_us, in->ref_us, how);
        return;
    }
    snprintf(in->payoff, sizeof in->payoff,
             "%s: build %.2f ms more than csr-vector = %.0f SpMVs, saves %.2f us per SpMV "
             "(%.2f vs %.2f, %s), %s", in->backend, in->extra_ms, in->convert_spmvs, in->saved_us,
             in->spmv_us, in->ref_us, how, pays);
}

sps_status sps_operator_measure_payoff(sps_operator *op, const sps_matrix *A, sps_operator_info *in)
{
    if (!op || !A || !in) return sps__err(NULL, SPS_ERR_INVALID_ARG, "measure_payoff: NULL argument");
    sps_context *ctx = op->ctx;
    sps_status st = sps_operator_get_info(op, in);
    if (st != SPS_OK) return st;
    int reps = in->rows > 1000000 ? 30 : 100;
    sps_timing tm;
    if ((st = sps_operator_time(op, reps, 2, &tm)) != SPS_OK) return st;
    in->spmv_us = tm.median_us;
    double ref_build = in->convert_ms + in->upload_ms;
    in->ref_us = tm.median_us;
    if (strcmp(in->backend, "csr-vector") != 0) {
        sps_operator *ref = NULL;
        sps_operator_opts o;
        sps_operator_opts_default(&o);
        o.precision = in->precision;
        if ((st = sps_operator_create(ctx, A, "csr-vector", &o, &ref)) != SPS_OK) return st;
        sps_operator_info ri;
        sps_operator_get_info(ref, &ri);
        ref_build = ri.convert_ms + ri.upload_ms;
        st = sps_operator_time(ref, reps, 2, &tm);
        sps_operator_destroy(ref);
        if (st != SPS_OK) return st;
        in->ref_us = tm.median_us;
    }
    in->saved_us = in->ref_us - in->spmv_us;
    in->extra_ms = in->convert_ms + in->upload_ms - ref_build;
    if (!strcmp(in->backend, "csr-vector")) in->extra_ms = in->convert_ms + in->upload_ms;
    in->convert_spmvs = in->ref_us > 0 ? in->extra_ms * 1e3 / in->ref_us : 0.0;
    in->break_even = sps_break_even_spmvs(in->extra_ms, in->saved_us);
    payoff_line(in, "measured");
    return SPS_OK;
}
