/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_user.c: user operators and preconditioners on a
 * host context (the wrapping cases of unit/user_cases.h), and a truly
 * matrix-free operator: the 1-D Laplacian tridiag(-1, 2, -1) as a loop,
 * solved by CG to its known solution. */
#include "check.h"
#include "unit/user_cases.h"

static int lap1d(void *user, double alpha, const double *x, double beta, double *y)
{
    sps_idx n = *(const sps_idx *)user;
    for (sps_idx i = 0; i < n; i++) {
        double ax = 2.0 * x[i] - (i > 0 ? x[i - 1] : 0.0) - (i + 1 < n ? x[i + 1] : 0.0);
        y[i] = alpha * ax + (beta != 0.0 ? beta * y[i] : 0.0);
    }
    return 0;
}

static void matrix_free(sps_context *ctx, sps_idx n)
{
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    T_STATUS(ctx, sps_operator_create_user(ctx, n, n, lap1d, &n, &op), "matrix-free n=%d", n);
    double *b = calloc((size_t)n, sizeof *b), *x = calloc((size_t)n, sizeof *x);
    double *ones = malloc((size_t)n * sizeof *ones);
    for (sps_idx i = 0; i < n; i++) ones[i] = 1.0;
    lap1d(&n, 1.0, ones, 0.0, b); /* b = A*ones: x = ones exactly */
    sps_solve_info in;
    sps_solver_create(ctx, &s);
    sps_solver_set_method(s, SPS_CG);
    sps_solver_set_rtol(s, 1e-12);
    T_STATUS(ctx, sps_solve(s, op, NULL, b, x, &in), "matrix-free n=%d: solve", n);
    T_OK(in.reason > 0 && uc_max_diff(x, ones, n) < 1e-8,
         "matrix-free 1-D Laplacian n=%d: CG converges to ones (%s, %lld its, err %.2e)", n,
         sps_reason_str(in.reason), (long long)in.iterations, uc_max_diff(x, ones, n));
    double y[4];
    T_OK(sps_operator_apply_host(op, 1.0, ones, 0.0, y) == SPS_ERR_UNSUPPORTED,
         "matrix-free: no host reference (unsupported)");
    free(b);
    free(x);
    free(ones);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
}

int main(void)
{
    sps_context *ctx = NULL;
    if (!T_STATUS(NULL, sps_context_create(&ctx, SPS_DEVICE_HOST), "host context")) return t_done();
    user_cases(ctx, "host");
    matrix_free(ctx, 31);
    matrix_free(ctx, 33);
    matrix_free(ctx, 1025);
    sps_context_destroy(ctx);
    return t_done();
}
