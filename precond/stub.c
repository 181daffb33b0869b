/* SPDX-License-Identifier: MIT */
/* spsolve/precond/stub.c: placeholder until precond/precond.c lands (deleted by it) */
#include "precond.h"

sps_status sps_precond_create(sps_context *ctx, const sps_matrix *A, const char *type, sps_precond **pc)
{
    (void)A; (void)type; if (pc) *pc = NULL;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "preconditioners: not implemented yet");
}
double sps_precond_setup_ms(const sps_precond *pc) { return pc ? pc->setup_ms : 0.0; }
const char *sps_precond_name(const sps_precond *pc) { return pc ? pc->name : "none"; }
sps_status sps_precond_apply(sps_precond *pc, const double *r, double *z)
{
    return pc->apply(pc, r, z);
}
void sps_precond_destroy(sps_precond *pc) { if (pc && pc->destroy) pc->destroy(pc); }
