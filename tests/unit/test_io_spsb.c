/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_io_spsb.c: the .spsb binary format (issue 13): exact
 * round trips, whole-or-nothing writes, and every truncation, every single
 * bit flip, random damage and foreign files rejected with a clear reason */
#include "check.h"
#include "internal.h"
#include "io/parse.h" /* sps__spsb_emit */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

static sps_context *ctx;

static unsigned char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc((size_t)n + 1);
    *len = fread(b, 1, (size_t)n, f);
    fclose(f);
    return b;
}

/* A read of path must fail with SPS_ERR_PARSE, A = NULL and "PATH: ...needle...". */
static int rejects(const char *path, const char *needle, char *msg, size_t n)
{
    sps_matrix *A = (sps_matrix *)&A;
    sps_status st = sps_matrix_read(ctx, path, &A);
    snprintf(msg, n, "%s", sps_last_error(ctx));
    size_t pl = strlen(path);
    int ok = st == SPS_ERR_PARSE && A == NULL && strncmp(msg, path, pl) == 0 && msg[pl] == ':' && msg[pl + 1] == ' ' &&
             (!needle || strstr(msg, needle));
    if (st == SPS_OK) sps_matrix_destroy(A);
    return ok;
}

static sps_matrix *small_matrix(void)
{
    /* 7 x 5, an empty row, a long row, negative zero and extreme values */
    double d[35] = {0};
    d[0] = 1.5, d[3] = -2e300, d[6] = 4.9e-324, d[7] = -0.0, d[9] = 3;
    for (int j = 0; j < 5; j++) d[25 + j] = j + 0.25;
    d[34] = 1e-300;
    return t_matrix_from_dense(ctx, 7, 5, d);
}

static void test_round_trip(void)
{
    const char *specs[] = {"poisson2d:31", "powerlaw:1025,6,3", NULL};
    for (int i = 0; i < 3; i++) {
        sps_matrix *A = NULL;
        if (specs[i]) sps_matrix_generate(ctx, specs[i], &A);
        else A = small_matrix();
        if (!A) {
            T_FAIL("round trip matrix", "%s", sps_last_error(ctx));
            continue;
        }
        const char *path = t_tmp_path("rt.spsb");
        sps_matrix *B = NULL;
        sps_status w = sps_matrix_write(ctx, A, path), r = w ? w : sps_matrix_read(ctx, path, &B);
        struct stat sb;
        int64_t want = 64 + 4 * ((int64_t)sps_matrix_rows(A) + 1) + 12 * sps_matrix_nnz(A);
        sps_matrix_source src;
        if (B) sps_matrix_get_source(B, &src);
        T_OK(w == SPS_OK && r == SPS_OK && t_matrix_same(A, B) && stat(path, &sb) == 0 && sb.st_size == want &&
                 src.bytes == want && src.nnz_stored == sps_matrix_nnz(A) && !src.gzip,
             "%s: .spsb write then read gives the same CSR bit for bit, %lld bytes (%s)",
             specs[i] ? specs[i] : "7 x 5 with an empty row, -0, subnormal", (long long)want,
             w || r ? sps_last_error(ctx) : "ok");
        /* found by its signature under another name too */
        if (B) {
            const char *other = t_tmp_path("rt.bin");
            rename(path, other);
            sps_matrix *C = NULL;
            T_OK(sps_matrix_read(ctx, other, &C) == SPS_OK && t_matrix_same(A, C), "a .spsb file named .bin is read by its signature");
            sps_matrix_destroy(C);
            remove(other);
        }
        sps_matrix_destroy(B);
        sps_matrix_destroy(A);
    }
    /* empty matrices */
    sps_matrix *Z = NULL, *Y = NULL;
    sps_matrix_create_coo(ctx, 0, 0, 0, NULL, NULL, NULL, &Z);
    const char *path = t_tmp_path("z.spsb");
    T_OK(Z && sps_matrix_write(ctx, Z, path) == SPS_OK && sps_matrix_read(ctx, path, &Y) == SPS_OK && t_matrix_same(Z, Y),
         "0 x 0: .spsb round trip");
    sps_matrix_destroy(Z);
    sps_matrix_destroy(Y);
    /* whole or nothing: a failed write leaves nothing */
    sps_matrix *A = small_matrix();
    char dir[700];
    snprintf(dir, sizeof dir, "%s/no-such-dir/x.spsb", t_tmpdir());
    struct stat sb;
    T_OK(A && sps_matrix_write(ctx, A, dir) == SPS_ERR_IO && stat(dir, &sb) != 0, "write into a missing folder: SPS_ERR_IO, no file");
    sps_matrix_destroy(A);
}

static void test_damage(void)
{
    sps_matrix *A = small_matrix();
    const char *good = t_tmp_path("good.spsb");
    if (!A || sps_matrix_write(ctx, A, good) != SPS_OK) {
        T_FAIL("damage: a .spsb file", "%s", sps_last_error(ctx));
        sps_matrix_destroy(A);
        return;
    }
    sps_matrix_destroy(A);
    size_t len = 0;
    unsigned char *b = slurp(good, &len);
    if (!b || len < 64) {
        T_FAIL("damage: read the file back", "%s", good);
        free(b);
        return;
    }
    const char *bad = t_tmp_path("bad.spsb");
    char msg[1024], first[1024] = "";
    /* every truncation */
    int wrong = 0;
    for (size_t n = 0; n < len; n++) {
        t_write_file(bad, b, n, 0);
        if (!rejects(bad, "truncated", msg, sizeof msg) && !wrong++) snprintf(first, sizeof first, "%zu: %.900s", n, msg);
    }
    T_OK(!wrong, "every truncation of a %zu-byte file rejected as truncated (%d not: %s)", len, wrong, first);
    /* trailing data */
    unsigned char *c = malloc(len + 1);
    memcpy(c, b, len);
    c[len] = 0;
    t_write_file(bad, c, len + 1, 0);
    T_OK(rejects(bad, "trailing data", msg, sizeof msg), "one byte too many rejected: %s", msg);
    /* every single bit flip */
    wrong = 0;
    for (size_t k = 0; k < 8 * len; k++) {
        memcpy(c, b, len);
        c[k / 8] ^= (unsigned char)(1u << (k % 8));
        t_write_file(bad, c, len, 0);
        if (!rejects(bad, NULL, msg, sizeof msg) && !wrong++) snprintf(first, sizeof first, "bit %zu: %.900s", k, msg);
    }
    T_OK(!wrong, "each of the %zu single bit flips rejected (%d not: %s)", 8 * len, wrong, first);
    memcpy(c, b, len);
    c[len - 3] ^= 0x10;
    t_write_file(bad, c, len, 0);
    T_OK(rejects(bad, "checksum mismatch: the data is corrupt", msg, sizeof msg), "a flip in the values: %s", msg);
    memcpy(c, b, len);
    c[20] ^= 0x01;
    t_write_file(bad, c, len, 0);
    T_OK(rejects(bad, "header checksum mismatch", msg, sizeof msg), "a flip in the row count: %s", msg);
    memcpy(c, b, len);
    c[8] = 2;
    t_write_file(bad, c, len, 0);
    T_OK(rejects(bad, ".spsb version 2 is not supported", msg, sizeof msg), "a newer version: %s", msg);
    /* random damage: runs of random bytes anywhere */
    uint64_t r = 12345;
    wrong = 0;
    for (int t = 0; t < 2000; t++) {
        memcpy(c, b, len);
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        size_t at = (size_t)(r >> 33) % len, run = 1 + (size_t)(r >> 20) % 16;
        for (size_t i = at; i < at + run && i < len; i++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            c[i] = (unsigned char)(r >> 56);
        }
        if (!memcmp(c, b, len)) continue;
        t_write_file(bad, c, len, 0);
        if (!rejects(bad, NULL, msg, sizeof msg) && !wrong++) snprintf(first, sizeof first, "try %d: %.900s", t, msg);
    }
    T_OK(!wrong, "2000 random damages rejected (%d not: %s)", wrong, first);
    free(c);
    free(b);
}

static void test_foreign(void)
{
    char msg[1024];
    const char *p = t_tmp_path("text.spsb");
    const char *mm = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1\n";
    t_write_file(p, mm, strlen(mm), 0);
    T_OK(rejects(p, "not a .spsb file (no SPSB signature; it is Matrix Market text: name it .mtx)", msg, sizeof msg),
         "Matrix Market text named .spsb: %s", msg);
    p = t_tmp_path("gz.spsb");
    gzFile g = gzopen(p, "wb");
    gzwrite(g, mm, (unsigned)strlen(mm));
    gzclose(g);
    T_OK(rejects(p, "it is gzip data", msg, sizeof msg), "gzip named .spsb: %s", msg);
    p = t_tmp_path("empty.spsb");
    t_write_file(p, "", 0, 0);
    T_OK(rejects(p, "truncated: 0 bytes, the .spsb header alone is 64", msg, sizeof msg), "empty .spsb: %s", msg);
    p = t_tmp_path("zeros.spsb");
    char zeros[200] = {0};
    t_write_file(p, zeros, sizeof zeros, 0);
    T_OK(rejects(p, "no SPSB signature", msg, sizeof msg), "zeros: %s", msg);
    sps_matrix *A = (sps_matrix *)&A;
    T_OK(sps_matrix_read(ctx, t_tmp_path("missing.spsb"), &A) == SPS_ERR_IO && A == NULL, "missing .spsb: SPS_ERR_IO");
}

/* A file with valid checksums but a CSR that breaks the rules. */
static void test_invalid_csr(void)
{
    static const struct {
        sps_idx rp[4], ci[4];
        const char *needle;
    } cases[] = {
        {{0, 2, 3, 4}, {1, 0, 2, 1}, "strictly increasing"},
        {{0, 2, 3, 4}, {0, 1, 7, 1}, "outside"},
        {{0, 3, 2, 4}, {0, 1, 2, 1}, "row_ptr"},
        {{1, 2, 3, 4}, {0, 1, 2, 1}, "row_ptr[0]"},
    };
    for (int i = 0; i < 4; i++) {
        sps_csr C;
        sps__csr_alloc(ctx, &C, 3, 3, 4);
        memcpy(C.row_ptr, cases[i].rp, sizeof cases[i].rp);
        memcpy(C.col_idx, cases[i].ci, sizeof cases[i].ci);
        for (int k = 0; k < 4; k++) C.val[k] = k + 1;
        sps_matrix *A = NULL;
        sps__matrix_wrap(ctx, &C, NULL, &A);
        const char *path = t_tmp_path("invalid.spsb");
        char msg[1024];
        sps_status w = sps_matrix_write(ctx, A, path);
        T_OK(w == SPS_OK && rejects(path, "invalid CSR", msg, sizeof msg) && strstr(msg, cases[i].needle),
             "checksums right, CSR wrong (%s): %s", cases[i].needle, msg);
        sps_matrix_destroy(A);
    }
}

/* Values and columns are checked block by block as they are read (on the
 * context's threads): a NaN or Inf anywhere, also in the value that a 1 MiB
 * block's end cuts in two, and a negative column are rejected with the
 * one-thread message whatever the thread count. */
static void test_invalid_values(void)
{
    const sps_idx n = 100000; /* values start at 4 (2n + 1) = 800004: the block end at 1 MiB cuts value 31071 */
    static const struct {
        sps_idx at;
        int what; /* 0: NaN, 1: -Inf, 2: column -1 */
        const char *needle;
    } cases[] = {
        {31071, 0, "entry 31071 is nan"},
        {31070, 1, "entry 31070 is -inf"},
        {99999, 0, "entry 99999 is nan"},
        {0, 0, "entry 0 is nan"},
        {77777, 2, "outside"},
    };
    static const int threads[] = {1, 2, 3, 16};
    for (int c = 0; c < 5; c++) {
        sps_csr C;
        if (sps__csr_alloc(ctx, &C, n, n, n) != SPS_OK) {
            T_FAIL("invalid values", "alloc");
            return;
        }
        for (sps_idx i = 0; i < n; i++) {
            C.row_ptr[i + 1] = i + 1;
            C.col_idx[i] = i;
            C.val[i] = 1.0 + i;
        }
        if (cases[c].what == 2) C.col_idx[cases[c].at] = -1;
        else C.val[cases[c].at] = cases[c].what ? -INFINITY : NAN;
        const char *path = t_tmp_path("values.spsb");
        FILE *f = fopen(path, "wb"); /* the writer itself (sps_matrix_write refuses NaN) */
        sps_status w = f && sps__spsb_emit(f, &C) == 0 ? SPS_OK : SPS_ERR_IO;
        if (f && fclose(f) != 0) w = SPS_ERR_IO;
        sps__csr_free(&C);
        int wrong = 0;
        char msg[1024] = "";
        for (int t = 0; t < 4; t++) {
            sps_context_set_threads(ctx, threads[t]);
            if (w != SPS_OK || !rejects(path, cases[c].needle, msg, sizeof msg)) wrong = threads[t];
        }
        sps_context_set_threads(ctx, 0);
        T_OK(!wrong, "checksums right, %s: rejected with 1, 2, 3, 16 threads (wrong with %d: %s)", cases[c].needle,
             wrong, msg);
    }
}

T_MAIN_HOST(ctx, test_round_trip, test_damage, test_foreign, test_invalid_csr, test_invalid_values)
