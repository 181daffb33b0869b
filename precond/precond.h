/* SPDX-License-Identifier: MIT */
/* spsolve/precond/precond.h: the preconditioner object, as the solvers see it.
 *
 * A preconditioner lives in its context's memory space: on a GPU context its
 * data and apply run on the device (on the context's stream, without
 * synchronizing); on a host context, on the host. How one is built (the
 * registry of types, their parameters, host and device setups) is in
 * precond/pc_impl.h, which the solvers never include. */
#ifndef SPS_PRECOND_H
#define SPS_PRECOND_H

#include "../core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sps_pc_type;

struct sps_precond {
    sps_context *ctx;
    const struct sps_pc_type *type; /* the registry entry it was built from */
    char name[64];                  /* the spec it was built with, e.g. "cheby:degree=4" */
    sps_idx n;
    double setup_ms;
    /* What the solvers read (they never look at the type):
     * identity    M = I: a solver may skip the preconditioner altogether;
     * fused_diag  non-NULL when M^-1 = diag(fused_diag), in the context's
     *             memory space: a solver may fuse z = fused_diag .* r into
     *             its vector updates instead of calling apply. */
    int identity;
    const double *fused_diag;
    /* callback    apply runs the caller's code (sps_precond_create_user): a
     *             solver calls it only for the applies it counts. */
    int callback;
    uint64_t pattern; /* fingerprint of the pattern it was built on (sps__pc_pattern) */
    void *prm;  /* the type's parameters (parsed from the spec) */
    void *impl; /* the type's data */
    /* z = M^-1 r (r and z distinct, in the context's memory space). */
    sps_status (*apply)(sps_precond *pc, const double *r, double *z);
    void (*destroy)(sps_precond *pc);
};

#ifdef __cplusplus
}
#endif
#endif
