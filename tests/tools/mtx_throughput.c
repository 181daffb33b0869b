/* SPDX-License-Identifier: MIT */
/* spsolve/tests/tools/mtx_throughput.c: how fast sps_matrix_read reads a big Matrix Market file
 *
 * usage: mtx_throughput [FILE.mtx] [--mb N] [--keep] [--threads N] [--gzip-level L] [--no-strtod]
 * Writes a random sparse matrix (N MB, default 220; 17-significant-digit
 * values as SuiteSparse writes them, "%.16e", entries sorted by column) to
 * FILE (default $TMPDIR/spsolve-throughput-PID.mtx) and a gzip copy, then
 * reports medians of 3 runs:
 *   read      sps_matrix_read, the whole call (what src.read_ms says)
 *   csr       sps__csr_from_triplets on the same triplets, in file order
 *   parse     read - csr: I/O, tokenizing and number conversion
 *   strtod    strtol/strtod over the same bytes already in memory (no I/O,
 *             no CSR): the naive parser's cost, for comparison
 * and checks that the CSR read back is bit-identical to the one built from
 * the generator's triplets. Both files are deleted unless --keep. */
#include "internal.h"
#include "tool_stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static sps_context *ctx; /* host context with --threads N (default 0: the online cores) */
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* The first field of /proc/loadavg: how busy the machine was (the two
 * cores may be shared with other work, which the timings then include). */
static double loadavg(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1) l = -1;
        fclose(f);
    }
    return l;
}

static int cmp_idx(const void *a, const void *b)
{
    sps_idx x = *(const sps_idx *)a, y = *(const sps_idx *)b;
    return (x > y) - (x < y);
}

static int same_csr(const sps_csr *a, const sps_csr *b)
{
    return a->nrows == b->nrows && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, ((size_t)a->nrows + 1) * sizeof *a->row_ptr) &&
           !memcmp(a->col_idx, b->col_idx, (size_t)a->nnz * sizeof *a->col_idx) &&
           !memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val);
}

/* Read `path` 3 times; median ms; the last matrix is checked against ref. */
static double time_read(const char *path, const sps_csr *ref, int64_t *bytes)
{
    double t[3];
    for (int r = 0; r < 3; r++) {
        sps_matrix *A;
        double t0 = sps__now_ms();
        if (sps_matrix_read(ctx, path, &A) != SPS_OK) {
            fprintf(stderr, "read failed: %s\n", sps_last_error(ctx));
            exit(1);
        }
        t[r] = sps__now_ms() - t0;
        sps_matrix_source src;
        sps_matrix_get_source(A, &src);
        *bytes = src.bytes;
        if (r == 2 && !same_csr(&A->A, ref)) {
            fprintf(stderr, "%s: the CSR read back differs from the generated one\n", path);
            exit(1);
        }
        sps_matrix_destroy(A);
    }
    return tool_median(t, 3);
}

/* The naive parser: strtol, strtol, strtod per line over bytes in memory. */
static double time_strtod(const char *path, int64_t nnz)
{
    FILE *f = fopen(path, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) exit(1);
    fclose(f);
    buf[n] = 0;
    double t[3], sum = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = sps__now_ms();
        char *p = buf;
        for (int line = 0; line < 3; line++) p = strchr(p, '\n') + 1; /* banner, comment, size */
        for (int64_t k = 0; k < nnz; k++) {
            long i = strtol(p, &p, 10), j = strtol(p, &p, 10);
            sum += strtod(p, &p) + (double)(i + j);
        }
        t[r] = sps__now_ms() - t0;
    }
    free(buf);
    return sum == 0.5 ? 0 : tool_median(t, 3); /* use sum so the loop stays */
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    double mb = 220;
    int keep = 0, threads = 0, level = 6, strtod_too = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--mb") && i + 1 < argc) mb = atof(argv[++i]);
        else if (!strcmp(argv[i], "--keep")) keep = 1;
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--gzip-level") && i + 1 < argc) level = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-strtod")) strtod_too = 0;
        else if (argv[i][0] != '-') path = argv[i];
        else {
            fprintf(stderr, "usage: %s [FILE.mtx] [--mb N] [--keep] [--threads N] [--gzip-level L] [--no-strtod]\n",
                    argv[0]);
            return 2;
        }
    }
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK || sps_context_set_threads(ctx, threads) != SPS_OK) {
        fprintf(stderr, "%s\n", sps_last_error(ctx));
        return 1;
    }
    printf("threads   %d\n", sps_context_threads(ctx));
    char def[512], gzpath[600];
    if (!path) {
        const char *tmp = getenv("TMPDIR");
        snprintf(def, sizeof def, "%s/spsolve-throughput-%ld.mtx", tmp && *tmp ? tmp : "/tmp", (long)getpid());
        path = def;
    }
    snprintf(gzpath, sizeof gzpath, "%s.gz", path);

    /* A random n x n matrix, about 39 bytes per line, sorted by column. */
    sps_idx n = 1000000;
    int64_t nnz = (int64_t)(mb * 1e6 / 39.0), k = 0;
    sps_idx *ri = malloc((size_t)nnz * sizeof *ri), *ci = malloc((size_t)nnz * sizeof *ci);
    double *v = malloc((size_t)nnz * sizeof *v);
    if (!ri || !ci || !v) return 1;
    static const double scale[17] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1,
                                     1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8};
    for (sps_idx j = 0; j < n && k < nnz; j++) {
        int64_t want = (int64_t)((double)nnz * (j + 1) / n) - k; /* about nnz/n per column */
        int64_t c0 = k;
        for (int64_t e = 0; e < want; e++, k++) {
            ri[k] = (sps_idx)(next() % (uint64_t)n);
            ci[k] = j;
            /* magnitudes 1e-8 .. 1e8, both signs, full 53-bit significands */
            double m = (double)(next() >> 11) / 9007199254740992.0;
            v[k] = (next() & 1 ? -m : m) * scale[next() % 17];
        }
        qsort(ri + c0, (size_t)(k - c0), sizeof *ri, cmp_idx);
    }
    nnz = k;
    double t0 = sps__now_ms();
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return 1;
    }
    setvbuf(f, NULL, _IOFBF, 1 << 22);
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%% random test matrix from mtx_throughput\n");
    fprintf(f, "%d %d %lld\n", n, n, (long long)nnz);
    for (int64_t e = 0; e < nnz; e++) fprintf(f, "%d %d %.16e\n", ri[e] + 1, ci[e] + 1, v[e]);
    if (fclose(f) != 0) {
        perror(path);
        return 1;
    }
    double write_ms = sps__now_ms() - t0;

    /* gzip copy (default level 6, as the SuiteSparse .mtx.gz files; 1 is
     * five times faster to write, for quick runs) */
    if (level < 1 || level > 9) level = 6;
    char mode[8];
    snprintf(mode, sizeof mode, "wb%d", level);
    t0 = sps__now_ms();
    FILE *in = fopen(path, "rb");
    gzFile gz = gzopen(gzpath, mode);
    static char chunk[1 << 20];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, in)) > 0)
        if (gzwrite(gz, chunk, (unsigned)got) != (int)got) return 1;
    fclose(in);
    if (gzclose(gz) != Z_OK) return 1;
    double gzip_ms = sps__now_ms() - t0;

    /* reference CSR and its build time */
    double tc[3];
    sps_csr ref;
    for (int r = 0; r < 3; r++) {
        t0 = sps__now_ms();
        if (sps__csr_from_triplets(NULL, n, n, nnz, ri, ci, v, SPS_GENERAL, &ref) != SPS_OK) return 1;
        tc[r] = sps__now_ms() - t0;
        if (r < 2) sps__csr_free(&ref);
    }
    double csr_ms = tool_median(tc, 3);
    free(ri);
    free(ci);
    free(v);

    int64_t bytes = 0, gzbytes = 0;
    double load0 = loadavg();
    double read_ms = time_read(path, &ref, &bytes);
    double gzread_ms = time_read(gzpath, &ref, &gzbytes);
    double strtod_ms = strtod_too ? time_strtod(path, nnz) : 0;
    sps__csr_free(&ref);

    /* zlib alone: inflate the copy to memory */
    double tz[3];
    for (int r = 0; r < 3; r++) {
        t0 = sps__now_ms();
        gz = gzopen(gzpath, "rb");
        gzbuffer(gz, 1 << 18);
        while (gzread(gz, chunk, sizeof chunk) > 0) {}
        gzclose(gz);
        tz[r] = sps__now_ms() - t0;
    }
    double inflate_ms = tool_median(tz, 3);
    FILE *zf = fopen(gzpath, "rb");
    fseek(zf, 0, SEEK_END);
    long zsize = ftell(zf);
    fclose(zf);

    double MB = (double)bytes / 1e6;
    printf("file      %s: %.1f MB, %d x %d, %lld entries (written in %.0f ms; gzip -%d copy %.1f MB in %.0f ms)\n",
           path, MB, n, n, (long long)nnz, write_ms, level, zsize / 1e6, gzip_ms);
    printf("read      %8.1f ms  %7.1f MB/s  sps_matrix_read, whole call (median of 3)\n", read_ms, MB / read_ms * 1e3);
    printf("csr       %8.1f ms  %7.1f MB/s  sps__csr_from_triplets alone (%.0f%% of the read)\n", csr_ms,
           MB / csr_ms * 1e3, 100 * csr_ms / read_ms);
    printf("parse     %8.1f ms  %7.1f MB/s  read - csr: I/O, tokens, numbers\n", read_ms - csr_ms,
           MB / (read_ms - csr_ms) * 1e3);
    if (strtod_too)
        printf("strtod    %8.1f ms  %7.1f MB/s  naive strtol/strtod over the bytes in memory (no I/O, no CSR)\n",
           strtod_ms, MB / strtod_ms * 1e3);
    printf("gz read   %8.1f ms  %7.1f MB/s  sps_matrix_read of the gzip copy (uncompressed MB/s)\n", gzread_ms,
           (double)gzbytes / 1e6 / gzread_ms * 1e3);
    printf("inflate   %8.1f ms  %7.1f MB/s  zlib gzread alone (uncompressed MB/s)\n", inflate_ms,
           (double)gzbytes / 1e6 / inflate_ms * 1e3);
    printf("check     the CSR read back equals the generated one, bit for bit (plain and gzip)\n");
    printf("load      1-minute load average %.2f before the timings, %.2f after\n", load0, loadavg());
    if (!keep) {
        remove(path);
        remove(gzpath);
    }
    sps_context_destroy(ctx);
    return 0;
}
