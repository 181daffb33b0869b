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

void sps__payoff_derive(sps_operator_info *in)
{
    in->saved_us = in->ref_us - in->spmv_us;
    in->convert_spmvs = in->ref_us > 0 ? in->extra_ms * 1e3 / in->ref_us : 0.0;
    in->break_even = sps_break_even_spmvs(in->extra_ms, in->saved_us);
}

void sps__payoff_pays(const sps_operator_info *in, char *buf, size_t len)
{
    if (in->break_even < 0) snprintf(buf, len, "never pays");
    else snprintf(buf, len, "pays after %.0f", in->break_even);
}

/* The measured payoff line (sps_operator_measure_payoff). */
static void payoff_line(sps_operator_info *in, const char *how)
{
    char pays[48];
    sps__payoff_pays(in, pays, sizeof pays);
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

/* Time of op per SpMV (median after a warm-up), reps calls rotating 2 x. */
static sps_status median_us(sps_operator *op, int reps, double *us)
{
    sps_timing tm;
    sps_status st = sps_operator_time(op, reps, 2, &tm);
    if (st == SPS_OK) *us = tm.median_us;
    return st;
}

/* Measured payoff: the operator and a csr-vector reference built beside it
 * (none when op is csr-vector: it is the reference, and its whole build is
 * the extra cost), each timed. The reference is destroyed before returning. */
sps_status sps_operator_measure_payoff(sps_operator *op, const sps_matrix *A, sps_operator_info *in)
{
    if (!op || !A || !in) return sps__err(NULL, SPS_ERR_INVALID_ARG, "measure_payoff: NULL argument");
    sps_status st = sps_operator_get_info(op, in);
    if (st != SPS_OK) return st;
    int reps = in->rows > 1000000 ? 30 : 100;
    if ((st = median_us(op, reps, &in->spmv_us)) != SPS_OK) return st;
    in->ref_us = in->spmv_us;
    double ref_build = 0.0;
    if (strcmp(in->backend, "csr-vector") != 0) {
        sps_operator *ref = NULL;
        sps_operator_opts o;
        sps_operator_opts_default(&o);
        o.precision = in->precision;
        if ((st = sps_operator_create(op->ctx, A, "csr-vector", &o, &ref)) != SPS_OK) return st;
        ref_build = ref->info.convert_ms + ref->info.upload_ms;
        st = median_us(ref, reps, &in->ref_us);
        sps_operator_destroy(ref);
        if (st != SPS_OK) return st;
    }
    in->extra_ms = in->convert_ms + in->upload_ms - ref_build;
    sps__payoff_derive(in);
    payoff_line(in, "measured");
    return SPS_OK;
}
