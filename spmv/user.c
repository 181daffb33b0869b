/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/user.c: a user operator (matrix-free): the product is the
 * caller's callback, y = alpha*A*x + beta*y, on the context's memory space
 * (device pointers on a GPU context, host pointers on a host one). Built by
 * sps_operator_create_user, not by name: it is not in the registry, so auto,
 * tune and --list-spmv never see it. */
#include "operator.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct sps_user_op {
    sps_user_spmv_fn fn;
    void *user;
} sps_user_op;

static sps_status user_apply(sps_context *ctx, void *dev, double alpha, const void *x,
                             double beta, void *y)
{
    const sps_user_op *u = dev;
    int rc = u->fn(u->user, alpha, (const double *)x, beta, (double *)y);
    if (rc != 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "user operator: the callback returned %d", rc);
    return SPS_OK;
}

static void user_free(sps_fmt *f) { sps__free(f); }

/* Not in the registry: the table is only the operator's dispatch. There is no
 * host format (apply_host NULL: sps_operator_apply calls apply on either
 * context), no values to update, nothing on the device to free. */
static const sps_backend user_backend = {
    .name = "user",
    .summary = "a user callback y = alpha*A*x + beta*y (sps_operator_create_user)",
    .caps = SPS_CAP_CALLBACK,
    .apply = user_apply,
    .free_fmt = user_free,
};

static void user_info(sps_operator *op)
{
    sps_operator_info *in = &op->info;
    sps__strlcpy(in->backend, "user", sizeof in->backend);
    sps__strlcpy(in->reason, "a user operator (sps_operator_create_user)", sizeof in->reason);
    snprintf(in->detail, sizeof in->detail, "matrix-free callback, %d x %d", op->nrows, op->ncols);
    in->on_gpu = sps_context_on_gpu(op->ctx);
    in->caps = in->on_gpu ? SPS_CAP_GPU : 0;
    in->precision = SPS_DOUBLE;
    in->rows = op->nrows;
    in->cols = op->ncols;
    in->nnz = -1; /* unknown */
}

sps_status sps_operator_create_user(sps_context *ctx, sps_idx nrows, sps_idx ncols,
                                    sps_user_spmv_fn fn, void *user, sps_operator **out)
{
    if (!out) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_operator_create_user: op is NULL");
    *out = NULL;
    if (!ctx || !fn)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_operator_create_user: NULL context or callback");
    if (nrows < 0 || ncols < 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_operator_create_user: negative size %d x %d",
                        nrows, ncols);
    sps_operator *op = sps__calloc(1, sizeof *op);
    sps_user_op *u = sps__calloc(1, sizeof *u);
    if (!op || !u) {
        sps__free(op);
        sps__free(u);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_operator_create_user: out of memory");
    }
    u->fn = fn;
    u->user = user;
    op->ctx = ctx;
    op->be = &user_backend;
    op->fmt = (sps_fmt *)u; /* freed by free_fmt */
    op->dev = u;            /* what apply receives (free_dev is NULL) */
    op->nrows = nrows;
    op->ncols = ncols;
    op->nnz = 0;
    user_info(op);
    *out = op;
    return SPS_OK;
}
