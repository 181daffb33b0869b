/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/stub.c: placeholder until the solvers land (deleted by them) */
#include "../core/internal.h"

#include <string.h>

const char *sps_method_name(sps_method m)
{
    return m == SPS_CG ? "cg" : m == SPS_BICGSTAB ? "bicgstab" : m == SPS_GMRES ? "gmres" : "?";
}
sps_status sps_method_from_name(const char *name, sps_method *m)
{
    if (!name || !m) return sps__err(NULL, SPS_ERR_INVALID_ARG, "NULL argument");
    if (!strcmp(name, "cg")) *m = SPS_CG;
    else if (!strcmp(name, "bicgstab")) *m = SPS_BICGSTAB;
    else if (!strcmp(name, "gmres")) *m = SPS_GMRES;
    else return sps__err(NULL, SPS_ERR_INVALID_ARG, "unknown method '%s' (cg, bicgstab, gmres)", name);
    return SPS_OK;
}
sps_status sps_solver_create(sps_context *ctx, sps_solver **s)
{
    if (s) *s = NULL;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "solvers: not implemented yet");
}
void sps_solver_destroy(sps_solver *s) { (void)s; }
sps_status sps_solver_set_method(sps_solver *s, sps_method m) { (void)s; (void)m; return SPS_ERR_NOT_COMPILED; }
sps_status sps_solver_set_rtol(sps_solver *s, double v) { (void)s; (void)v; return SPS_ERR_NOT_COMPILED; }
sps_status sps_solver_set_atol(sps_solver *s, double v) { (void)s; (void)v; return SPS_ERR_NOT_COMPILED; }
sps_status sps_solver_set_dtol(sps_solver *s, double v) { (void)s; (void)v; return SPS_ERR_NOT_COMPILED; }
sps_status sps_solver_set_maxit(sps_solver *s, int64_t v) { (void)s; (void)v; return SPS_ERR_NOT_COMPILED; }
sps_status sps_solver_set_restart(sps_solver *s, int v) { (void)s; (void)v; return SPS_ERR_NOT_COMPILED; }
sps_status sps_solver_set_history(sps_solver *s, int v) { (void)s; (void)v; return SPS_ERR_NOT_COMPILED; }
sps_status sps_solver_set_check_interval(sps_solver *s, int v) { (void)s; (void)v; return SPS_ERR_NOT_COMPILED; }
sps_status sps_solver_set_monitor(sps_solver *s, sps_monitor_fn fn, void *u) { (void)s; (void)fn; (void)u; return SPS_ERR_NOT_COMPILED; }
sps_status sps_solve(sps_solver *s, sps_operator *op, sps_precond *pc, const double *b, double *x, sps_solve_info *info)
{
    (void)s; (void)op; (void)pc; (void)b; (void)x; (void)info;
    return SPS_ERR_NOT_COMPILED;
}
sps_status sps_dense_solve(sps_context *ctx, const sps_matrix *A, const double *b, double *x)
{
    (void)A; (void)b; (void)x;
    return sps__err(ctx, SPS_ERR_NOT_COMPILED, "sps_dense_solve: not implemented yet");
}
