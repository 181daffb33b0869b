/* SPDX-License-Identifier: MIT */
/* spsolve/precond/registry.c: the one table of preconditioner types, found by
 * name once; sps_precond_create_ex (parameters, timing, host then device
 * setup) and the sps_precond_* calls every type shares. */
#include "pc_impl.h"

#include "../spmv/backend.h" /* sps__parse_params, struct sps_operator */
#include "gpu.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adding a type: its file pair (or folder) and one name here. */
#define SPS_PC_TYPES(X) X(none) X(jacobi) X(l1jacobi) X(ilu0) X(ic0) X(cheby) X(bjacobi) X(amg)

#define SPS_PC_DECLARE(t) extern const sps_pc_type sps_pc_##t;
SPS_PC_TYPES(SPS_PC_DECLARE)
#define SPS_PC_ADDRESS(t) &sps_pc_##t,
static const sps_pc_type *const registry[] = {SPS_PC_TYPES(SPS_PC_ADDRESS)};
#define NREG ((int)(sizeof registry / sizeof *registry))

sps_status sps_precond_type(int i, const char **name, const char **summary)
{
    if (i < 0 || i >= NREG) return SPS_ERR_INVALID_ARG;
    if (name) *name = registry[i]->name;
    if (summary) *summary = registry[i]->summary;
    return SPS_OK;
}

static const sps_pc_type *find_type(const char *spec, const char **params)
{
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int i = 0; i < NREG; i++)
        if (strlen(registry[i]->name) == len && strncmp(registry[i]->name, spec, len) == 0) {
            *params = colon ? colon + 1 : "";
            return registry[i];
        }
    return NULL;
}

static sps_status unknown_type(sps_context *ctx, const char *spec)
{
    char known[256] = "";
    size_t k = 0;
    for (int i = 0; i < NREG && k < sizeof known; i++)
        k += (size_t)snprintf(known + k, sizeof known - k, "%s%s", i ? ", " : "", registry[i]->name);
    return sps__err(ctx, SPS_ERR_INVALID_ARG, "unknown preconditioner '%s' (known: %s)", spec, known);
}

/* ---- parameters ---------------------------------------------------------- */

typedef struct prm_walk {
    const sps_pc_type *t;
    void *prm;
} prm_walk;

/* Is key one of the comma-separated names in keys? */
static int key_known(const char *keys, const char *key)
{
    size_t len = strlen(key);
    for (const char *p = keys; *p;) {
        while (*p == ' ' || *p == ',') p++;
        size_t w = strcspn(p, ", ");
        if (w == len && len > 0 && strncmp(p, key, len) == 0) return 1;
        p += w;
    }
    return 0;
}

static sps_status set_one(sps_context *ctx, void *user, const char *key, const char *value)
{
    const prm_walk *w = user;
    if (!key_known(w->t->keys, key))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: unknown parameter '%s' (known: %s)",
                        w->t->name, key, *w->t->keys ? w->t->keys : "none");
    return w->t->prm_set(ctx, w->prm, key, value);
}

sps_status sps__pc_int(sps_context *ctx, const char *type, const char *key, const char *value,
                       long lo, long hi, int *out)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (!*value || *end || errno || v < lo || v > hi)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: %s='%s' is not an integer in [%ld, %ld]",
                        type, key, value, lo, hi);
    *out = (int)v;
    return SPS_OK;
}

sps_status sps__pc_num(sps_context *ctx, const char *type, const char *key, const char *value,
                       double *out)
{
    char *end = NULL;
    double v = strtod(value, &end);
    if (!*value || *end || !(v > 0) || !isfinite(v))
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: %s='%s' is not a positive number", type,
                        key, value);
    *out = v;
    return SPS_OK;
}

/* ---- create ---------------------------------------------------------------- */

static sps_status apply_noop(sps_precond *pc, const double *r, double *z)
{
    (void)pc; (void)r; (void)z;
    return SPS_OK;
}

/* GPU context: the type's device-only setup where it has one; else the host
 * setup, then the device setup from the host result. */
static sps_status setup(sps_precond *pc, const sps_pc_input *in)
{
    if (pc->n == 0) { /* nothing to precondition */
        pc->apply = apply_noop;
        return SPS_OK;
    }
#if SPS_HAVE_CUDA
    if (in->gpu && pc->type->setup_gpu) {
        sps_status sg = pc->type->setup_gpu(pc, in);
        if (sg == SPS_OK) return sps__gpu_sync(pc->ctx);
        if (sg != SPS_ERR_UNSUPPORTED) return sg;
        if (pc->destroy) pc->destroy(pc); /* the host path words the refusal */
        pc->impl = NULL;
        pc->destroy = NULL;
        pc->apply = NULL;
        pc->fused_diag = NULL;
    }
#endif
    sps_status st = pc->type->setup_host(pc, in);
    if (st != SPS_OK || !in->gpu) return st;
#if SPS_HAVE_CUDA
    if (!pc->type->setup_dev)
        return sps__err(pc->ctx, SPS_ERR_NOT_COMPILED, "%s: no GPU implementation", pc->name);
    sps_precond host = *pc; /* hand over: the host data was only the input */
    pc->impl = NULL;
    pc->fused_diag = NULL;
    pc->apply = NULL;
    pc->destroy = NULL;
    st = pc->type->setup_dev(pc, in, host.impl);
    if (host.destroy) host.destroy(&host);
    if (st == SPS_OK) st = sps__gpu_sync(pc->ctx); /* setup_ms includes the device work */
    return st;
#else
    return sps__err(pc->ctx, SPS_ERR_INTERNAL, "%s: GPU context in a build without CUDA", pc->name);
#endif
}

static sps_status check_args(sps_context *ctx, const sps_matrix *A, sps_operator *op,
                             const char *spec)
{
    if (A->A.nrows != A->A.ncols)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: the matrix must be square, got %d x %d",
                        spec, A->A.nrows, A->A.ncols);
    if (strlen(spec) >= sizeof ((sps_precond *)0)->name)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "preconditioner spec too long: '%s'", spec);
    if (!op) return SPS_OK;
    if (op->ctx != ctx)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: the operator belongs to another context", spec);
    if (op->nrows != A->A.nrows || op->ncols != A->A.ncols || op->single)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "%s: the operator (%d x %d, %s) is not A's (%d x %d) in double precision",
                        spec, op->nrows, op->ncols, op->single ? "single" : "double", A->A.nrows,
                        A->A.ncols);
    return SPS_OK;
}

static sps_status create(sps_context *ctx, const sps_matrix *A, sps_operator *op,
                         const char *spec, const sps_pc_type *t, const char *params,
                         sps_precond **out)
{
    sps_precond *pc = sps__calloc(1, sizeof *pc);
    if (!pc) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", spec);
    pc->ctx = ctx;
    pc->type = t;
    pc->identity = (t->caps & SPS_PCT_IDENTITY) != 0;
    sps__strlcpy(pc->name, spec, sizeof pc->name);
    pc->n = A->A.nrows;
    sps_status st = SPS_OK;
    if (t->prm_size) {
        pc->prm = sps__calloc(1, t->prm_size);
        if (!pc->prm) st = sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", spec);
        else if (t->prm_default) t->prm_default(pc->prm);
    }
    prm_walk w = {t, pc->prm};
    if (st == SPS_OK) st = sps__parse_params(ctx, params, set_one, &w);
    pc->pattern = sps__pc_pattern(&A->A);
    if (st == SPS_OK) {
        sps_pc_input in = {A, op, sps_context_on_gpu(ctx)};
        double t0 = sps__now_ms();
        st = setup(pc, &in);
        pc->setup_ms = sps__now_ms() - t0;
    }
    if (st != SPS_OK) {
        sps_precond_destroy(pc);
        return st;
    }
    *out = pc;
    return SPS_OK;
}

sps_status sps_precond_create_ex(sps_context *ctx, const sps_matrix *A, sps_operator *op,
                                 const char *spec, sps_precond **out)
{
    if (!out) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_precond_create: pc is NULL");
    *out = NULL;
    if (!ctx || !A || !spec)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_precond_create: NULL argument");
    const char *params = "";
    const sps_pc_type *t = find_type(spec, &params);
    if (!t) return unknown_type(ctx, spec);
    sps_status st = check_args(ctx, A, op, spec);
    if (st != SPS_OK) return st;
    return create(ctx, A, op, spec, t, params, out);
}

sps_status sps_precond_create(sps_context *ctx, const sps_matrix *A, const char *type,
                              sps_precond **out)
{
    return sps_precond_create_ex(ctx, A, NULL, type, out);
}

double sps_precond_setup_ms(const sps_precond *pc) { return pc ? pc->setup_ms : 0.0; }

const char *sps_precond_name(const sps_precond *pc) { return pc ? pc->name : "none"; }

int sps_precond_symmetric(const sps_precond *pc)
{
    return !pc || (pc->type->caps & (SPS_PCT_SYMMETRIC | SPS_PCT_IDENTITY)) != 0;
}

sps_status sps_precond_apply(sps_precond *pc, const double *r, double *z)
{
    if (!pc) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_precond_apply: pc is NULL");
    if (pc->n > 0 && (!r || !z))
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG, "sps_precond_apply: NULL vector");
    if (pc->n > 0 && r == z)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                        "sps_precond_apply: r and z must be distinct vectors");
    return pc->apply(pc, r, z);
}

uint64_t sps__pc_pattern(const sps_csr *A)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the sampled words */
#define SPS_MIX(v) (h = (h ^ (uint64_t)(v)) * 1099511628211ull)
    SPS_MIX(A->nrows);
    SPS_MIX(A->ncols);
    SPS_MIX(A->nnz);
    int64_t step = A->nnz / 4096 + 1, rstep = A->nrows / 4096 + 1;
    for (int64_t k = 0; k < A->nnz; k += step) SPS_MIX(A->col_idx[k]);
    for (int64_t i = 0; i <= A->nrows; i += rstep) SPS_MIX(A->row_ptr[i]);
#undef SPS_MIX
    return h;
}

sps_status sps__pc_refresh(sps_precond *pc, const sps_matrix *A)
{
    if (A->A.nrows != pc->n || A->A.ncols != pc->n || sps__pc_pattern(&A->A) != pc->pattern)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                        "sps_precond_update_values: %s: the matrix (%d x %d, %lld entries) is not in "
                        "the pattern the preconditioner was built on (%d rows)",
                        pc->name, A->A.nrows, A->A.ncols, (long long)A->A.nnz, pc->n);
    if (pc->type->refresh) {
        double t0 = sps__now_ms();
        sps_status sr = pc->type->refresh(pc, A);
        if (sr == SPS_OK) pc->setup_ms = sps__now_ms() - t0;
        return sr;
    }
    const char *params = "";
    const sps_pc_type *t = find_type(pc->name, &params);
    if (!t || t != pc->type)
        return sps__err(pc->ctx, SPS_ERR_UNSUPPORTED,
                        "sps_precond_update_values: '%s' cannot be built again (a user "
                        "preconditioner: refresh its data yourself)", pc->name);
    sps_precond *fresh = NULL;
    sps_status st = create(pc->ctx, A, NULL, pc->name, t, params, &fresh);
    if (st != SPS_OK) return st; /* pc is left as it was */
    sps_precond old = *pc;
    *pc = *fresh;
    if (old.destroy) old.destroy(&old);
    sps__free(old.prm);
    sps__free(fresh);
    return SPS_OK;
}

void sps_precond_destroy(sps_precond *pc)
{
    if (!pc) return;
    if (pc->destroy) pc->destroy(pc);
    sps__free(pc->prm);
    sps__free(pc);
}
