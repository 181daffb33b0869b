/* SPDX-License-Identifier: MIT */
/* spsolve/examples/minimal.c: the smallest complete use of the API: build a
 * matrix, an operator, a solver; solve; check; clean up. Uses only spsolve.h.
 *
 *   make examples && build/examples/minimal
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "spsolve.h"

#define CHECK(call)                                                                    \
    do {                                                                               \
        sps_status st_ = (call);                                                       \
        if (st_ != SPS_OK) {                                                           \
            fprintf(stderr, "%s failed: %s: %s\n", #call, sps_strerror(st_),           \
                    sps_last_error(ctx));                                              \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

int main(void)
{
    /* A GPU context if there is a GPU, the host reference path otherwise. */
    sps_context *ctx = NULL;
    if (sps_context_create(&ctx, 0) != SPS_OK) {
        printf("no GPU (%s): using the host\n", sps_last_error(NULL));
        CHECK(sps_context_create(&ctx, SPS_DEVICE_HOST));
    }
    printf("running on %s\n", sps_context_device_name(ctx));

    /* The 1-D Laplacian tridiag(-1, 2, -1) of size n, as triplets. */
    const sps_idx n = 1000;
    sps_idx *ri = malloc(3 * (size_t)n * sizeof *ri), *ci = malloc(3 * (size_t)n * sizeof *ci);
    double *v = malloc(3 * (size_t)n * sizeof *v);
    int64_t k = 0;
    for (sps_idx i = 0; i < n; i++) {
        ri[k] = i; ci[k] = i; v[k++] = 2.0;
        if (i > 0) { ri[k] = i; ci[k] = i - 1; v[k++] = -1.0; }
        if (i < n - 1) { ri[k] = i; ci[k] = i + 1; v[k++] = -1.0; }
    }
    sps_matrix *A = NULL;
    CHECK(sps_matrix_create_coo(ctx, n, n, k, ri, ci, v, &A));
    free(ri); free(ci); free(v);

    /* b = A * ones, so the solution is all ones. */
    double *x = calloc((size_t)n, sizeof *x), *b = malloc((size_t)n * sizeof *b), *one = malloc((size_t)n * sizeof *one);
    for (sps_idx i = 0; i < n; i++) one[i] = 1.0;
    CHECK(sps_matrix_spmv_host(A, 1.0, one, 0.0, b));

    sps_operator *op = NULL;
    CHECK(sps_operator_create(ctx, A, "auto", NULL, &op));   /* converts once */
    sps_solver *s = NULL;
    CHECK(sps_solver_create(ctx, &s));
    CHECK(sps_solver_set_method(s, SPS_CG));
    CHECK(sps_solver_set_rtol(s, 1e-10));
    sps_solve_info info;
    CHECK(sps_solve(s, op, NULL, b, x, &info));              /* host pointers are fine */

    double err = 0;
    for (sps_idx i = 0; i < n; i++) err = fmax(err, fabs(x[i] - 1.0));
    printf("%s after %lld iterations; true relative residual %.2e; max |x - 1| = %.2e\n",
           sps_reason_str(info.reason), (long long)info.iterations, info.true_rel_rnorm, err);

    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    free(x); free(b); free(one);
    return info.reason > 0 && err < 1e-6 ? 0 : 1;
}
