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
    /* Jacobi: 1 / a_ii in the context's memory space, so solvers can fuse
     * z = D^-1 r into their vector updates. NULL for other kinds. */
    const double *dinv;
    void *impl;
    /* z = M^-1 r (r and z distinct, in the context's memory space). */
    sps_status (*apply)(sps_precond *pc, const double *r, double *z);
    void (*destroy)(sps_precond *pc);
};

#ifdef __cplusplus
}
#endif
#endif
