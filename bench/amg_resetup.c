/* SPDX-License-Identifier: MIT */
/* spsolve/bench/amg_resetup.c: issue 11's reuse criterion. For a generated
 * matrix and an amg spec: a full setup, then sps_precond_update_values with
 * the values scaled by 2.5 plus 0.5 on the diagonal (the same pattern), each
 * timed by the library (sps_precond_setup_ms); prints the summary of
 * each (sps_precond_describe: the phases) and one line of key=value pairs.
 * Public API only. Built and run by bench/amg.sh. */
#include <spsolve.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: amg_resetup SPEC PRECOND\n");
        return 2;
    }
    sps_context *ctx = NULL;
    sps_matrix *A = NULL, *A2 = NULL;
    sps_precond *pc = NULL;
    const sps_idx *rp = NULL, *ci = NULL;
    const double *v = NULL;
    int rc = 3;
    if (sps_context_create(&ctx, SPS_DEVICE_AUTO) != SPS_OK || sps_matrix_generate(ctx, argv[1], &A) != SPS_OK ||
        sps_matrix_csr(A, &rp, &ci, &v) != SPS_OK) {
        fprintf(stderr, "amg_resetup: %s\n", sps_last_error(ctx));
        goto done;
    }
    sps_idx n = sps_matrix_rows(A);
    int64_t nnz = sps_matrix_nnz(A);
    double *w = malloc((size_t)(nnz > 0 ? nnz : 1) * sizeof *w);
    if (!w) goto done;
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) w[p] = 2.5 * v[p] + (ci[p] == i ? 0.5 : 0.0);
    if (sps_matrix_create_csr(ctx, n, n, rp, ci, w, &A2) != SPS_OK || sps_precond_create(ctx, A, argv[2], &pc) != SPS_OK) {
        fprintf(stderr, "amg_resetup: %s\n", sps_last_error(ctx));
        free(w);
        goto done;
    }
    free(w);
    double full = sps_precond_setup_ms(pc);
    printf("%s", sps_precond_describe(pc)); /* the full setup's phases */
    if (sps_precond_update_values(pc, A2) != SPS_OK) {
        fprintf(stderr, "amg_resetup: %s\n", sps_last_error(ctx));
        goto done;
    }
    double num = sps_precond_setup_ms(pc);
    printf("%s", sps_precond_describe(pc)); /* the re-setup's phases */
    printf("matrix=%s precond=%s full_ms=%.1f numeric_ms=%.1f ratio=%.3f\n", argv[1], argv[2], full, num,
           full > 0 ? num / full : 0.0);
    rc = 0;
done:
    sps_precond_destroy(pc);
    sps_matrix_destroy(A);
    sps_matrix_destroy(A2);
    sps_context_destroy(ctx);
    return rc;
}
