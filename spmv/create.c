/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/create.c: sps_operator_create, the top of the SpMV framework:
 * checks the options, then builds a named backend (spmv/operator.c) or asks a
 * selector (spmv/select.c) to choose one. Nothing below calls back up here. */
#include "select.h"

#include "core/gpu.h"

#include <stdio.h>
#include <string.h>

void sps_operator_opts_default(sps_operator_opts *o)
{
    memset(o, 0, sizeof *o);
    o->precision = SPS_DOUBLE;
    o->expected_spmvs = 1000;
    o->tune_reps = 20;
}

static void list_names(char *buf, size_t len)
{
    buf[0] = 0;
    for (int i = 0;; i++) {
        const char *name;
        if (sps_spmv_backend(i, &name, NULL, NULL) != SPS_OK) break;
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? ", " : "", name);
    }
}

/* opts->fallback: the named backend refused (the context holds why); build
 * the fallback and say so in the reason. */
static sps_status fall_back(sps_context *ctx, const sps_csr *A, const char *spmv,
                            const sps_operator_opts *opts, sps_operator **op)
{
    char why[sizeof((*op)->info.reason)];
    snprintf(why, sizeof why, "%s refused (%s); fell back to %s", spmv, sps_last_error(ctx),
             SPS_FALLBACK_SPEC);
    sps_status st = sps__operator_build_spec(ctx, A, SPS_FALLBACK_SPEC, opts, op);
    if (st == SPS_OK) sps__strlcpy((*op)->info.reason, why, sizeof (*op)->info.reason);
    return st;
}

/* On a GPU context the matrix goes to the device once, through pinned memory
 * (sps_matrix_upload), and every format builds from that copy. *ms: the
 * upload's time if this call made it. Without room for the copy, the
 * formats upload from the host as before. */
static sps_status device_copy(sps_context *ctx, const sps_matrix *A, const sps_operator_opts *opts,
                              double *ms)
{
    *ms = 0;
#if SPS_HAVE_CUDA
    if (!ctx->gpu || opts->precision != SPS_DOUBLE) return SPS_OK;
    const sps_dcsr *d = NULL;
    int now = 0;
    sps_status st = sps__matrix_device(ctx, A, &d, &now);
    if (st == SPS_ERR_NO_MEMORY) return SPS_OK;
    if (st == SPS_OK && now) *ms = d->upload_ms;
    return st;
#else
    (void)ctx;
    (void)A;
    (void)opts;
    return SPS_OK;
#endif
}

static sps_status create(sps_context *ctx, const sps_matrix *A, const char *spmv,
                         const sps_operator_opts *opts, sps_operator **op);

sps_status sps_operator_create(sps_context *ctx, const sps_matrix *A, const char *spmv,
                               const sps_operator_opts *opts, sps_operator **op)
{
    if (!ctx || !A || !op)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_operator_create: NULL argument");
    *op = NULL;
    sps_operator_opts def;
    if (!opts) {
        sps_operator_opts_default(&def);
        opts = &def;
    }
    if (opts->precision != SPS_DOUBLE && opts->precision != SPS_SINGLE)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "sps_operator_create: precision %d is neither SPS_DOUBLE nor SPS_SINGLE",
                        (int)opts->precision);
    double up_ms = 0;
    sps_status st = device_copy(ctx, A, opts, &up_ms);
    if (st == SPS_OK) st = create(ctx, A, spmv, opts, op);
    if (st == SPS_OK) (*op)->info.upload_ms += up_ms; /* the matrix's one upload */
    return st;
}

static sps_status create(sps_context *ctx, const sps_matrix *A, const char *spmv,
                         const sps_operator_opts *opts, sps_operator **op)
{
    if (!spmv || !*spmv) spmv = "auto";
    if (strcmp(spmv, "auto") == 0) return sps__select(ctx, A, 0, opts, op);
    if (strcmp(spmv, "tune") == 0) return sps__select(ctx, A, 1, opts, op);
    const char *params = "";
    const sps_backend *be = sps__backend_find(spmv, &params);
    if (!be) {
        char names[512];
        list_names(names, sizeof names);
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "unknown SpMV backend '%s' (known: %s)", spmv,
                        names);
    }
    sps_status st = sps__operator_build(ctx, &A->A, be, params, opts, op);
    if (opts->fallback && (st == SPS_ERR_UNSUPPORTED || st == SPS_ERR_NOT_COMPILED) &&
        strcmp(be->name, SPS_FALLBACK_SPEC) != 0)
        st = fall_back(ctx, &A->A, spmv, opts, op);
    return st;
}

