/* SPDX-License-Identifier: MIT */
/* spsolve/precond/user.c: a user preconditioner: z = M^-1 r is the caller's
 * callback, in the context's memory space (device pointers on a GPU
 * context). Built by sps_precond_create_user, not by name: the type is not
 * in the registry (it has no matrix to set up from). */
#include "pc_impl.h"

#include <string.h>

typedef struct sps_user_pc {
    sps_user_precond_fn fn;
    void *user;
} sps_user_pc;

static sps_status no_setup(sps_precond *pc, const sps_pc_input *in)
{
    (void)in;
    return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                    "user: give the callback with sps_precond_create_user");
}

static const sps_pc_type user_general = {
    .name = "user",
    .summary = "a user callback z = M^-1 r (sps_precond_create_user)",
    .keys = "",
    .setup_host = no_setup,
};

static const sps_pc_type user_symmetric = {
    .name = "user",
    .summary = "a user callback z = M^-1 r, M symmetric positive definite",
    .caps = SPS_PCT_SYMMETRIC,
    .keys = "",
    .setup_host = no_setup,
};

static sps_status user_apply(sps_precond *pc, const double *r, double *z)
{
    const sps_user_pc *u = pc->impl;
    int rc = u->fn(u->user, r, z);
    if (rc != 0)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG, "user preconditioner: the callback returned %d", rc);
    return SPS_OK;
}

static void user_destroy(sps_precond *pc) { sps__free(pc->impl); }

sps_status sps_precond_create_user(sps_context *ctx, sps_idx n, sps_user_precond_fn fn,
                                   void *user, int symmetric, sps_precond **out)
{
    if (!out) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_precond_create_user: pc is NULL");
    *out = NULL;
    if (!ctx || !fn)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_precond_create_user: NULL context or callback");
    if (n < 0) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_precond_create_user: negative size %d", n);
    sps_precond *pc = sps__calloc(1, sizeof *pc);
    sps_user_pc *u = sps__calloc(1, sizeof *u);
    if (!pc || !u) {
        sps__free(pc);
        sps__free(u);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_precond_create_user: out of memory");
    }
    u->fn = fn;
    u->user = user;
    pc->ctx = ctx;
    pc->type = symmetric ? &user_symmetric : &user_general;
    sps__strlcpy(pc->name, "user", sizeof pc->name);
    pc->n = n;
    pc->impl = u;
    pc->apply = user_apply;
    pc->callback = 1;
    pc->destroy = user_destroy;
    *out = pc;
    return SPS_OK;
}
