/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/operator.c: the operator object: a matrix converted once to a
 * backend's format, applied many times. Built by sps_operator_create
 * (spmv/create.c) directly or through a selector (spmv/select.c). */
#include "operator.h"
#include "spmm.h"
#include "formats/csr_fmt.h"

#include "core/gpu.h"

#include <stdio.h>
#include <string.h>

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
        if (be->detach) be->detach(op->fmt); /* A's arrays are no longer needed */
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

sps_status sps__operator_build_spec(sps_context *ctx, const sps_csr *A, const char *spec,
                                    const sps_operator_opts *opts, sps_operator **op)
{
    const char *params = "";
    const sps_backend *be = sps__backend_find(spec, &params);
    if (!be) return sps__err(ctx, SPS_ERR_NOT_COMPILED, "%s: not in this build's registry", spec);
    return sps__operator_build(ctx, A, be, params, opts, op);
}

sps_status sps_operator_apply(sps_operator *op, double alpha, const void *x, double beta, void *y)
{
    if (!op) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_operator_apply: op is NULL");
    if ((!x && op->ncols) || (!y && op->nrows))
        return sps__err(op->ctx, SPS_ERR_INVALID_ARG, "sps_operator_apply: NULL vector");
    if (!op->be->apply_host) /* a user operator: its callback on either context */
        return op->be->apply(op->ctx, op->dev, alpha, x, beta, y);
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
    if (!op->be->apply_host)
        return sps__err(op->ctx, SPS_ERR_UNSUPPORTED, "%s: no host reference", op->be->name);
#if SPS_HAVE_CUDA
    if (op->info.on_gpu && op->be->fetch) {
        /* A detached format keeps its host arrays on the device only: bring
         * them back once (a cache fill, so the operator stays logically const). */
        sps_status st = op->be->fetch(op->ctx, ((sps_operator *)op)->fmt, op->dev);
        if (st != SPS_OK) return st;
    }
#endif
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
    sps__spmm_panel_drop(op); /* its values are the old ones: rebuilt at the next use */
#if SPS_HAVE_CUDA
    if (op->info.on_gpu) {
        if (!op->be->update_dev)
            return sps__err(op->ctx, SPS_ERR_UNSUPPORTED, "%s: cannot update device values",
                            op->be->name);
        st = op->be->update_dev(op->ctx, op->fmt, op->dev);
        if (op->be->detach) op->be->detach(op->fmt);
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
    sps__spmm_panel_drop(op);
#if SPS_HAVE_CUDA
    if (op->dev && op->be->free_dev) op->be->free_dev(op->dev);
#endif
    if (op->fmt && op->be->free_fmt) op->be->free_fmt(op->fmt);
    sps__free(op);
}

int sps__operator_dev_csr(const sps_operator *op, const sps_idx **rp, const sps_idx **ci, const double **v)
{
#if SPS_HAVE_CUDA
    const sps_csr_dev *d = op && op->dev && op->info.on_gpu &&
                                   (op->be == &sps_backend_csr_vector || op->be == &sps_backend_csr_scalar)
                               ? op->dev /* the plain-CSR backends' device object */
                               : NULL;
    if (d && !d->single) {
        *rp = d->row_ptr;
        *ci = d->col_idx;
        *v = d->val;
        return 1;
    }
#else
    (void)op;
#endif
    *rp = NULL;
    *ci = NULL;
    *v = NULL;
    return 0;
}
