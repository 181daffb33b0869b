/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/create.c: sps_operator_create, the top of the SpMV framework:
 * checks the options, then builds a named backend (spmv/operator.c) or asks a
 * selector (spmv/select.c) to choose one. Nothing below calls back up here. */
#include "select.h"

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
    return sps__operator_build(ctx, &A->A, be, params, opts, op);
}

