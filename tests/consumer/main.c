/* SPDX-License-Identifier: MIT */
/* spsolve/tests/consumer/main.c: a program outside the tree, built against an
 * installed spsolve (CMake package or pkg-config): solves poisson2d:16 on the
 * host and prints "consumer ok VERSION ITERATIONS" when it converges. */
#include <spsolve.h>

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    sps_context *ctx = NULL;
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    sps_solve_info info;
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) return 1;
    if (sps_matrix_generate(ctx, "poisson2d:16", &A) != SPS_OK ||
        sps_operator_create(ctx, A, "auto", NULL, &op) != SPS_OK || sps_solver_create(ctx, &s) != SPS_OK) {
        fprintf(stderr, "consumer: %s\n", sps_last_error(ctx));
        return 1;
    }
    sps_idx n = sps_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    for (sps_idx i = 0; i < n; i++) b[i] = 1.0;
    int rc = sps_solve(s, op, NULL, b, x, &info) == SPS_OK && info.reason > 0 ? 0 : 1;
    printf("consumer %s %s %lld\n", rc ? "FAILED" : "ok", sps_version(), (long long)info.iterations);
    free(b);
    free(x);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    return rc;
}
