/* SPDX-License-Identifier: MIT */
/* spsolve/precond/precond.h: the preconditioner interface.
 *
 * A preconditioner lives in its context's memory space: on a GPU context its
 * data and apply run on the device (on the context's stream, without
 * synchronizing); on a host context, on the host. `sps_precond_create`
 * (precond/precond.c) dispatches on the type name to one setup function per
 * kind and times it. */
#ifndef SPS_PRECOND_H
#define SPS_PRECOND_H

#include "../core/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sps_pc_kind {
    SPS_PC_NONE = 0,
    SPS_PC_JACOBI = 1,
    SPS_PC_ILU0 = 2,
    SPS_PC_IC0 = 3
} sps_pc_kind;

struct sps_precond {
    sps_context *ctx;
    sps_pc_kind kind;
    char name[16];
    sps_idx n;
    double setup_ms;
    /* Capabilities the solvers read (they never look at the kind):
     * identity    M = I: a solver may skip the preconditioner altogether;
     * fused_diag  non-NULL when M^-1 = diag(fused_diag), in the context's
     *             memory space: a solver may fuse z = fused_diag .* r into
     *             its vector updates instead of calling apply. */
    int identity;
    const double *fused_diag;
    void *impl;
    /* z = M^-1 r (r and z distinct, in the context's memory space). */
    sps_status (*apply)(sps_precond *pc, const double *r, double *z);
    void (*destroy)(sps_precond *pc);
};

#ifdef __cplusplus
}
#endif
#endif
