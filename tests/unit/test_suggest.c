/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_suggest.c: sps_method_suggest, the default method
 * from the features, on matrices whose answer is known */
#include "check.h"

#include <string.h>

static sps_context *ctx;

/* The method suggested for the dense n x n matrix a (row-major). */
static int suggest(int n, const double *a, sps_method *m, char *why, size_t len)
{
    sps_matrix *A = t_matrix_from_dense(ctx, n, n, a);
    sps_features f;
    int ok = A && T_STATUS(ctx, sps_matrix_analyze(ctx, A, &f), "analyze %dx%d", n, n);
    sps_matrix_destroy(A);
    return ok && T_STATUS(ctx, sps_method_suggest(&f, m, why, len), "sps_method_suggest");
}

int main(void)
{
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) {
        T_FAIL("host context", "%s", sps_last_error(NULL));
        return t_done();
    }
    const double spd[9] = {4, -1, 0, -1, 4, -1, 0, -1, 4};
    const double nonsym[9] = {4, -1, 0, -2, 4, -1, 0, -1, 4};
    const double negdiag[9] = {4, -1, 0, -1, -4, -1, 0, -1, 4};
    const double nodiag[9] = {4, -1, 0, -1, 0, -1, 0, -1, 4}; /* (2,2) not stored */
    sps_method m = SPS_BICGSTAB;
    char why[128] = "";
    if (suggest(3, spd, &m, why, sizeof why))
        T_OK(m == SPS_CG && strstr(why, "symmetric matrix with a positive diagonal"),
             "SPD tridiagonal: cg (%s, '%s')", sps_method_name(m), why);
    if (suggest(3, nonsym, &m, why, sizeof why))
        T_OK(m == SPS_GMRES && strstr(why, "nonsymmetric"), "nonsymmetric: gmres (%s, '%s')",
             sps_method_name(m), why);
    if (suggest(3, negdiag, &m, NULL, 0))
        T_OK(m == SPS_GMRES, "symmetric with a negative diagonal entry: gmres (%s)", sps_method_name(m));
    if (suggest(3, nodiag, &m, why, 8))
        T_OK(m == SPS_GMRES && strlen(why) == 7, "missing diagonal entry: gmres, why cut to len (%s, '%s')",
             sps_method_name(m), why);
    T_OK(sps_method_suggest(NULL, &m, NULL, 0) == SPS_ERR_INVALID_ARG, "NULL features: invalid argument");
    sps_features f;
    memset(&f, 0, sizeof f);
    T_OK(sps_method_suggest(&f, NULL, NULL, 0) == SPS_ERR_INVALID_ARG, "NULL method: invalid argument");
    sps_context_destroy(ctx);
    return t_done();
}
