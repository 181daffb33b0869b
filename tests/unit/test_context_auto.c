/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_context_auto.c: sps_context_create(&ctx,
 * SPS_DEVICE_AUTO) gives the GPU when there is one and the host otherwise,
 * saying why (issue 16, item 5); a solve runs on what it gave. */
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
    int ndev = sps_device_count();
    char why[512];
    snprintf(why, sizeof why, "%s", sps_last_error(NULL));
    sps_context *ctx = NULL;
    sps_status st = sps_context_create(&ctx, SPS_DEVICE_AUTO);
    T_OK(st == SPS_OK && ctx, "SPS_DEVICE_AUTO: a context (%s)", st ? sps_last_error(NULL) : "ok");
    if (!ctx) return t_done();
    T_OK(sps_context_on_gpu(ctx) == (ndev > 0), "SPS_DEVICE_AUTO: on %s with %d devices (%s)",
         sps_context_on_gpu(ctx) ? "the GPU" : "the host", ndev, sps_context_device_name(ctx));
    if (ndev == 0)
        T_OK(sps_last_error(NULL)[0] != 0 && strstr(sps_last_error(NULL), why) != NULL,
             "SPS_DEVICE_AUTO on the host: sps_last_error(NULL) says why (%s)", sps_last_error(NULL));
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    sps_solve_info in;
    T_STATUS(ctx, sps_matrix_generate(ctx, "poisson2d:33", &A), "generate");
    T_STATUS(ctx, sps_operator_create(ctx, A, "auto", NULL, &op), "operator");
    T_STATUS(ctx, sps_solver_create(ctx, &s), "solver");
    if (A && op && s) {
        sps_idx n = sps_matrix_rows(A);
        double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
        for (sps_idx i = 0; i < n; i++) b[i] = 1.0;
        memset(&in, 0, sizeof in);
        st = sps_solve(s, op, NULL, b, x, &in);
        T_OK(st == SPS_OK && in.reason > 0, "SPS_DEVICE_AUTO: a solve converges (%s)",
             sps_reason_str(in.reason));
        free(b);
        free(x);
    }
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    sps_context *bad = NULL;
    T_OK(sps_context_create(&bad, -3) == SPS_ERR_INVALID_ARG && !bad, "device -3 is refused");
    return t_done();
}
