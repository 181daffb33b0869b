/* SPDX-License-Identifier: MIT */
/* spsolve/bench/amg_resetup.c: issue 11's reuse criterion. For a generated
 * matrix and an amg spec: a first full setup (it pays the kernels' loading;
 * reported, not compared), a full setup on a fresh copy of the matrix (its
 * upload included, as a new matrix has it), then five
 * sps_precond_update_values on that one, each with a fresh matrix (its
 * values uploaded), alternating the values scaled by 2.5 plus 0.5 on the
 * diagonal (the same pattern) and the original ones again, each timed by the
 * library (sps_precond_setup_ms). Prints the summary of the full setup and
 * of the first re-setup (sps_precond_describe: the phases) and one line of
 * key=value pairs: ratio = the re-setups' median over the full setup.
 * Public API only. Built and run by bench/amg.sh. */
#include <spsolve.h>

#include <stdio.h>
#include <stdlib.h>

#define RESETUPS 5

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
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
    if (sps_precond_create(ctx, A, argv[2], &pc) != SPS_OK) {
        fprintf(stderr, "amg_resetup: %s\n", sps_last_error(ctx));
        free(w);
        goto done;
    }
    double first = sps_precond_setup_ms(pc);
    sps_precond_destroy(pc);
    pc = NULL;
    double full = 0.0, t[RESETUPS], sorted[RESETUPS];
    for (int k = -1; k < RESETUPS; k++) { /* k = -1: the full setup, then the re-setups */
        sps_matrix_destroy(A2);
        A2 = NULL;
        if (sps_matrix_create_csr(ctx, n, n, rp, ci, k >= 0 && k % 2 == 0 ? w : v, &A2) != SPS_OK ||
            (k < 0 ? sps_precond_create(ctx, A2, argv[2], &pc) : sps_precond_update_values(pc, A2)) != SPS_OK) {
            fprintf(stderr, "amg_resetup: %s\n", sps_last_error(ctx));
            free(w);
            goto done;
        }
        if (k < 0) full = sps_precond_setup_ms(pc);
        else t[k] = sorted[k] = sps_precond_setup_ms(pc);
        if (k < 1) printf("%s", sps_precond_describe(pc)); /* the full setup's and the first re-setup's phases */
    }
    free(w);
    qsort(sorted, RESETUPS, sizeof *sorted, cmp);
    double med = sorted[RESETUPS / 2];
    printf("matrix=%s precond=%s full_ms=%.1f first_full_ms=%.1f numeric_ms=%.1f numeric_each=%.1f", argv[1], argv[2],
           full, first, med, t[0]);
    for (int k = 1; k < RESETUPS; k++) printf(",%.1f", t[k]);
    printf(" ratio=%.3f\n", full > 0 ? med / full : 0.0);
    rc = 0;
done:
    sps_precond_destroy(pc);
    sps_matrix_destroy(A);
    sps_matrix_destroy(A2);
    sps_context_destroy(ctx);
    return rc;
}
