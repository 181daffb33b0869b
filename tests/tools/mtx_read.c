/* SPDX-License-Identifier: MIT */
/* spsolve/tests/tools/mtx_read.c: read one matrix file and say what it cost
 *
 * usage: mtx_read FILE [--threads N] [--reps R]
 * Reads FILE with sps_matrix_read (Matrix Market, gzip or .spsb) R times
 * (default 1) on a host context with N parsing threads (default 0: the
 * online cores) and prints, for the last read: size, CSR bytes, the median
 * wall time and the rate in MB/s of the file's uncompressed bytes. Run it
 * under `/usr/bin/time -v` for the peak RSS of a read. */
#include "internal.h"
#include "tool_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Resident memory now (the base that /usr/bin/time's peak includes). */
static double rss_mb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double mb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) mb = atof(line + 6) / 1024.0;
    if (f) fclose(f);
    return mb;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int threads = 0, reps = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else {
            fprintf(stderr, "usage: mtx_read FILE [--threads N] [--reps R]\n");
            return 2;
        }
    }
    if (!path || reps < 1 || reps > 100) {
        fprintf(stderr, "usage: mtx_read FILE [--threads N] [--reps R]\n");
        return 2;
    }
    printf("process RSS before the read: %.0f MB\n", rss_mb());
    sps_context *ctx;
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) return 1;
    if (sps_context_set_threads(ctx, threads) != SPS_OK) {
        fprintf(stderr, "%s\n", sps_last_error(ctx));
        return 1;
    }
    double *t = calloc((size_t)reps, sizeof *t);
    sps_matrix_source src;
    memset(&src, 0, sizeof src);
    sps_matrix *A = NULL;
    for (int r = 0; r < reps; r++) {
        sps_matrix_destroy(A);
        A = NULL;
        double t0 = sps__now_ms();
        if (sps_matrix_read(ctx, path, &A) != SPS_OK) {
            fprintf(stderr, "%s\n", sps_last_error(ctx));
            return 1;
        }
        t[r] = sps__now_ms() - t0;
    }
    sps_matrix_get_source(A, &src);
    qsort(t, (size_t)reps, sizeof *t, tool_cmp_double);
    double ms = t[reps / 2];
    int64_t nnz = sps_matrix_nnz(A);
    double csr_mb = ((double)(sps_matrix_rows(A) + 1) * sizeof(sps_idx) +
                     (double)nnz * (sizeof(sps_idx) + sizeof(double))) / 1e6;
    printf("%s: %d x %d, %lld entries, CSR %.1f MB, %lld bytes%s, threads %d, read %.1f ms "
           "(median of %d; last: %.1f ms of it building the CSR), %.0f MB/s\n",
           path, sps_matrix_rows(A), sps_matrix_cols(A), (long long)nnz, csr_mb,
           (long long)src.bytes, src.gzip ? " (gzip, uncompressed)" : "", threads, ms, reps, src.assemble_ms,
           (double)src.bytes / 1e3 / ms);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    free(t);
    return 0;
}
