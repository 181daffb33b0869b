/* SPDX-License-Identifier: MIT */
/* spsolve/tests/tools/analyze_time.c: how fast sps_matrix_analyze runs
 *
 * usage: analyze_time [SPEC|FILE] [--reps N] [--device gpu|cpu]
 * Generates SPEC (default poisson3d:130) or reads FILE, runs the analysis
 * N times (default 5) and prints the median wall time and ns per nonzero
 * (and, on the host, the median CPU time of the process, which other jobs
 * sharing the machine inflate less).
 * On a GPU context the first run includes the upload of the CSR (printed
 * apart: upload ms and GB/s), the later runs reuse the device copy. */
#include "spsolve.h"
#include "tool_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

int main(int argc, char **argv)
{
    const char *spec = "poisson3d:130";
    int reps = 5, gpu = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) gpu = strcmp(argv[++i], "gpu") == 0;
        else spec = argv[i];
    }
    if (reps < 1 || reps > 1000) reps = 5;
    sps_context *ctx = NULL;
    if (sps_context_create(&ctx, gpu ? 0 : SPS_DEVICE_HOST) != SPS_OK) {
        fprintf(stderr, "analyze_time: %s\n", sps_last_error(NULL));
        return 77;
    }
    sps_matrix *A = NULL;
    sps_status st = strchr(spec, ':') ? sps_matrix_generate(ctx, spec, &A) : sps_matrix_read(ctx, spec, &A);
    if (st != SPS_OK) {
        fprintf(stderr, "analyze_time: %s\n", sps_last_error(ctx));
        return 2;
    }
    double *ms = malloc((size_t)reps * sizeof *ms), *cpu = malloc((size_t)reps * sizeof *cpu);
    sps_features f;
    for (int r = 0; r < reps; r++) {
        double c0 = cpu_ms();
        sps_status ast = sps_matrix_analyze(ctx, A, &f);
        cpu[r] = cpu_ms() - c0;
        if (ast != SPS_OK) {
            fprintf(stderr, "analyze_time: %s\n", sps_last_error(ctx));
            return 3;
        }
        ms[r] = f.analyze_ms;
        if (r == 0 && gpu)
            printf("first run %.2f ms (upload %.2f ms, %.1f GB/s, %s)\n", f.analyze_ms, f.upload_ms,
                   f.upload_gbps, f.upload_how);
    }
    qsort(ms, (size_t)reps, sizeof *ms, tool_cmp_double);
    qsort(cpu, (size_t)reps, sizeof *cpu, tool_cmp_double);
    printf("%s: %d rows, %lld nnz, analysis on the %s: median %.2f ms (min %.2f) = %.2f ns per nonzero",
           spec, f.rows, (long long)f.nnz, f.on_gpu ? "GPU" : "host", ms[reps / 2], ms[0],
           ms[reps / 2] * 1e6 / (double)(f.nnz ? f.nnz : 1));
    if (f.on_gpu) printf(" (device kernels %.2f ms)", f.device_ms);
    else printf("; CPU time median %.2f ms = %.2f ns per nonzero", cpu[reps / 2],
                cpu[reps / 2] * 1e6 / (double)(f.nnz ? f.nnz : 1));
    printf("\n");
    free(ms);
    free(cpu);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    return 0;
}
