/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_reasons.c: the reason codes' values are fixed: a
 * name borrowed from PETSc has PETSc's value, spsolve's own lie outside
 * PETSc's range (issue 16, item 7), every one has a name, and no two share a
 * value or a name. */
#include "check.h"

#include <string.h>

int main(void)
{
    static const struct { sps_reason r; int v; } fixed[] = {
        {SPS_CONVERGED_RTOL, 2},          {SPS_CONVERGED_ATOL, 3},
        {SPS_CONVERGED_ZERO_RHS, 20},     {SPS_DIVERGED_MAXIT, -3},
        {SPS_DIVERGED_DTOL, -4},          {SPS_DIVERGED_BREAKDOWN, -5},
        {SPS_DIVERGED_INDEFINITE_PC, -8}, {SPS_DIVERGED_NAN, -9},
        {SPS_DIVERGED_INDEFINITE, -10},   {SPS_DIVERGED_STAGNATION, -20},
        {SPS_DIVERGED_TRUE_RESIDUAL, -21}, {SPS_DIVERGED_USER, -22},
    };
    const int n = (int)(sizeof fixed / sizeof *fixed);
    for (int i = 0; i < n; i++) {
        const char *name = sps_reason_str(fixed[i].r);
        T_OK((int)fixed[i].r == fixed[i].v, "reason %s = %d (got %d)", name, fixed[i].v, (int)fixed[i].r);
        T_OK(strcmp(name, "unknown reason") != 0, "reason %d has a name (%s)", fixed[i].v, name);
        T_OK((fixed[i].v > 0) == (strstr(name, "converged") == name), "reason %d (%s): its sign says converged",
             fixed[i].v, name);
        for (int j = 0; j < i; j++)
            if (fixed[j].v == fixed[i].v || !strcmp(sps_reason_str(fixed[j].r), name))
                T_FAIL("reasons unique", "%d and %d share a value or the name '%s'", fixed[i].v, fixed[j].v, name);
    }
    T_OK(!strcmp(sps_reason_str((sps_reason)4), "unknown reason"),
         "4 (PETSc's KSP_CONVERGED_ITS) is no spsolve reason");
    return t_done();
}
