/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/suggest.c: sps_method_suggest, the default method chosen
 * from a matrix's features (what spsolve runs when no --method is given) */
#include "internal.h"

#include <stdio.h>

sps_status sps_method_suggest(const sps_features *f, sps_method *m, char *why, size_t len)
{
    if (!f || !m) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_method_suggest: NULL argument");
    /* CG needs A symmetric positive definite. Exact symmetry and a complete,
     * positive diagonal are necessary conditions the analysis can see; a
     * matrix that has them is taken as SPD, every other one gets GMRES. */
    int spd_like = f->symmetric && f->missing_diagonal == 0 && f->negative_diagonal == 0 &&
                   f->zero_diagonal == 0;
    *m = spd_like ? SPS_CG : SPS_GMRES;
    if (why && len > 0)
        snprintf(why, len, "%s", spd_like ? "symmetric matrix with a positive diagonal"
                                          : "nonsymmetric or indefinite-looking matrix");
    return SPS_OK;
}
