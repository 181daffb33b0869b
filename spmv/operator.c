/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/operator.c: the public operator: a matrix converted once to a
 * backend's format, applied many times */
#include "../core/gpu.h"
#include "backend.h"

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

sps_status sps__operator_build(sps_context *ctx, const sps_csr *A, const sps_backend *be,
                               const char *params, const sps_operator_opts *opts,
                               sps_operator **out)
{
    *out = NULL;
    int on_gpu = ctx->gpu != NULL;
    int single = opts->precision == SPS_SINGLE;
    if (single && !on_gpu)
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "%s: single precision runs on a GPU context only (the host path is double)",
                        be->name);
    if (single && !(be->caps & SPS_CAP_SINGLE))
        return sps__err(ctx, SPS_ERR_UNSUPPORTED, "%s: no single-precision kernel", be->name);
    if (on_gpu && !be->apply)
        return sps__err(ctx, SPS_ERR_NOT_COMPILED, "%s: no GPU kernel in this build", be->name);

    sps_operator *op = sps__calloc(1, sizeof *op);
    if (!op) return sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory");
    op->ctx = ctx;
    op->be = be;
    op->single = single;
    op->nrows = A->nrows;
    op->ncols = A->ncols;
    op->nnz = A->nnz;

    double t0 = sps__now_ms();
    sps_status st = be->convert(ctx, A, params ? params : "", &op->fmt, &op->st);
    double t1 = sps__now_ms();
    if (st != SPS_OK) {
        sps__free(op);
        return st;
    }
    op->info.convert_ms = t1 - t0;
#if SPS_HAVE_CUDA
    if (on_gpu) {
        st = be->upload(ctx, op->fmt, single, &op->dev, &op->st);
        if (st == SPS_OK) st = sps__gpu_sync(ctx);
        op->info.upload_ms = sps__now_ms() - t1;
        if (st != SPS_OK) {
            sps_operator_destroy(op);
            return st;
        }
    }
#endif
    sps_operator_info *in = &op->info;
    if (params && *params)
        snprintf(in->backend, sizeof in->backend, "%s:%s", be->name, params);
    else
        sps__strlcpy(in->backend, be->name, sizeof in->backend);
    sps__strlcpy(in->detail, op->st.detail, sizeof in->detail);
    in->caps = (be->caps | op->st.caps_add) & ~(unsigned)SPS_CAP_GPU;
    if (on_gpu) in->caps |= SPS_CAP_GPU;
    in->on_gpu = on_gpu;
    in->precision = single ? SPS_SINGLE : SPS_DOUBLE;
    in->rows = A->nrows;
    in->cols = A->ncols;
    in->nnz = A->nnz;
    in->device_bytes = op->st.device_bytes;
    in->bytes_per_spmv = single ? op->st.bytes_per_spmv - 0.5 * op->st.value_bytes
                                : op->st.bytes_per_spmv;
    in->slots = op->st.slots;
    in->fill = op->st.fill;
    in->balance_var = op->st.balance_var;
    in->blocks = op->st.blocks;
    in->ell_width = op->st.ell_width;
    in->coo_entries = op->st.coo_entries;
    *out = op;
    return SPS_OK;
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

sps_status sps_operator_apply(sps_operator *op, double alpha, const void *x, double beta, void *y)
{
    if (!op) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_operator_apply: op is NULL");
    if ((!x && op->ncols) || (!y && op->nrows))
        return sps__err(op->ctx, SPS_ERR_INVALID_ARG, "sps_operator_apply: NULL vector");
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) return op->be->apply(op->ctx, op->dev, alpha, x, beta, y);
#endif
    op->be->apply_host(op->fmt, alpha, (const double *)x, beta, (double *)y);
    return SPS_OK;
}

sps_status sps_operator_apply_host(const sps_operator *op, double alpha, const double *x,
                                   double beta, double *y)
{
    if (!op) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_operator_apply_host: op is NULL");
    if ((!x && op->ncols) || (!y && op->nrows))
        return sps__err(op->ctx, SPS_ERR_INVALID_ARG, "sps_operator_apply_host: NULL vector");
    op->be->apply_host(op->fmt, alpha, x, beta, y);
    return SPS_OK;
}

sps_status sps_operator_update_values(sps_operator *op, const double *values)
{
    if (!op || (!values && op->nnz))
        return sps__err(op ? op->ctx : NULL, SPS_ERR_INVALID_ARG,
                        "sps_operator_update_values: NULL argument");
    if (!op->be->update_host)
        return sps__err(op->ctx, SPS_ERR_UNSUPPORTED, "%s: cannot update values in place",
                        op->be->name);
    sps_status st = op->be->update_host(op->ctx, op->fmt, values);
    if (st != SPS_OK) return st;
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) {
        if (!op->be->update_dev)
            return sps__err(op->ctx, SPS_ERR_UNSUPPORTED, "%s: cannot update device values",
                            op->be->name);
        st = op->be->update_dev(op->ctx, op->fmt, op->dev);
    }
#endif
    return st;
}

sps_status sps_operator_get_info(const sps_operator *op, sps_operator_info *info)
{
    if (!op || !info) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_operator_get_info: NULL argument");
    *info = op->info;
    return SPS_OK;
}

void sps_operator_destroy(sps_operator *op)
{
    if (!op) return;
#if SPS_HAVE_CUDA
    if (op->dev && op->be->free_dev) op->be->free_dev(op->dev);
#endif
    if (op->fmt && op->be->free_fmt) op->be->free_fmt(op->fmt);
    sps__free(op);
}
