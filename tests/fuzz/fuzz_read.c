/* SPDX-License-Identifier: MIT */
/* spsolve/tests/fuzz/fuzz_read.c: libFuzzer harness for the readers (issue 13/17)
 *
 * Build one target per reader (the sources of the library's rooms: core, io,
 * spmv, precond, solvers) with -DFUZZ_TARGET=0 (Matrix Market text, also
 * gzip: the reader detects gzip by content, so the fuzzer finds the magic),
 * 1 (vector), 2 (.spsb), e.g. from a tree configured --without-cuda:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_TARGET=2 \
 *     -D_POSIX_C_SOURCE=200809L -I. -Iinclude -Icore tests/fuzz/fuzz_read.c \
 *     $(ls core/[a-z]*.c io/[a-z]*.c spmv/[a-z]*.c precond/[a-z]*.c solvers/[a-z]*.c) \
 *     -lz -lm -llapacke -o fuzz_spsb
 *   ./fuzz_spsb -max_total_time=1800 -rss_limit_mb=4096 tests/fuzz/corpus/spsb
 *
 * Each input is written to a file (the readers take paths) and read on a
 * host context with 1, 3 or 7 threads (the input's length picks), so the
 * parallel reader is fuzzed as well. A read must succeed or fail cleanly;
 * any crash, leak, hang or sanitizer report is a bug. */
#include "spsolve.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FUZZ_TARGET
#define FUZZ_TARGET 0
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    static sps_context *ctx;
    if (!ctx) {
        static const char *const ext[] = {".mtx", ".txt", ".spsb"};
        snprintf(path, sizeof path, "/tmp/spsolve-fuzz-%ld%s", (long)getpid(), ext[FUZZ_TARGET]);
        if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) abort();
    }
    FILE *f = fopen(path, "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    sps_context_set_threads(ctx, size % 4 == 3 ? 7 : size % 2 ? 3 : 1);
    if (FUZZ_TARGET == 1) {
        double *x = NULL;
        sps_idx n = 0;
        if (sps_vector_read(ctx, path, -1, &x, &n) == SPS_OK && n > 0 && !x) abort();
        sps_free(x);
    } else {
        sps_matrix *A = NULL;
        if (sps_matrix_read(ctx, path, &A) == SPS_OK) {
            const sps_idx *rp, *ci;
            const double *v;
            sps_matrix_csr(A, &rp, &ci, &v);
            if (rp[sps_matrix_rows(A)] != sps_matrix_nnz(A)) abort();
            sps_matrix_destroy(A);
        } else if (A) {
            abort();
        }
    }
    remove(path);
    return 0;
}
