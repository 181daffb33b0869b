/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_io.c: Matrix Market reading: valid files, every rejection, real matrices, round trips */
#include "check.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define BANNER "%%MatrixMarket matrix coordinate real general\n"

static sps_context *ctx;

/* Read `path`; expect status `want`, *A == NULL and a message that starts with
 * "PATH:LINE: " (line > 0) or "PATH: " (line == 0; line < 0: any line number)
 * and contains `needle`. */
static void expect_fail(const char *what, const char *path, sps_status want, long line, const char *needle)
{
    sps_matrix *A = (sps_matrix *)&A;
    double t0 = sps__now_ms();
    sps_status st = sps_matrix_read(ctx, path, &A);
    double ms = sps__now_ms() - t0;
    const char *msg = sps_last_error(ctx);
    char prefix[700];
    size_t plen;
    int prefix_ok;
    if (line > 0) {
        snprintf(prefix, sizeof prefix, "%s:%ld: ", path, line);
        prefix_ok = strncmp(msg, prefix, strlen(prefix)) == 0;
    } else if (line == 0) {
        snprintf(prefix, sizeof prefix, "%s: ", path);
        prefix_ok = strncmp(msg, prefix, strlen(prefix)) == 0;
    } else {
        snprintf(prefix, sizeof prefix, "%s:", path);
        plen = strlen(prefix);
        prefix_ok = strncmp(msg, prefix, plen) == 0 && msg[plen] >= '1' && msg[plen] <= '9';
        while (prefix_ok && msg[plen] >= '0' && msg[plen] <= '9') plen++;
        prefix_ok = prefix_ok && msg[plen] == ':';
        snprintf(prefix, sizeof prefix, "%s:N: ", path);
    }
    T_OK(st == want && A == NULL && prefix_ok && strstr(msg, needle) && ms < 5000,
         "%s: %s (status %d, %.0f ms): \"%s\" (want \"%s...%s\")", what, sps_strerror(want), (int)st, ms, msg,
         prefix, needle);
    if (st == SPS_OK) sps_matrix_destroy(A);
}

/* The content `s` as a plain file and gzipped: both must fail the same way. */
static void reject(const char *what, const char *s, long line, const char *needle)
{
    static int k;
    char name[64];
    snprintf(name, sizeof name, "bad%d.mtx", k);
    expect_fail(what, t_put_str(name, s), SPS_ERR_PARSE, line, needle);
    if (k++ % 4 == 0) { /* a few gzipped as well */
        snprintf(name, sizeof name, "bad%d.mtx.gz", k);
        char w[300];
        snprintf(w, sizeof w, "%s (gzip)", what);
        expect_fail(w, t_put_gz_str(name, s), SPS_ERR_PARSE, line, needle);
    }
}

static void test_rejects_header(void)
{
    reject("empty file", "", 1, "missing the %%MatrixMarket banner");
    reject("no banner", "3 3 1\n1 1 1\n", 1, "missing the banner");
    reject("banner with a typo", "%%MatrixMarkt matrix coordinate real general\n1 1 1\n1 1 1\n", 1, "missing the banner");
    reject("short banner", "%%MatrixMarket matrix coordinate real\n1 1 1\n1 1 1\n", 1, "malformed banner");
    reject("long banner", "%%MatrixMarket matrix coordinate real general extra\n", 1, "malformed banner");
    reject("object vector", "%%MatrixMarket vector coordinate real general\n1 1 1\n1 1 1\n", 1, "object 'vector'");
    reject("complex", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n", 1, "complex");
    reject("hermitian", "%%MatrixMarket matrix coordinate real hermitian\n1 1 1\n1 1 1\n", 1, "hermitian");
    reject("unknown format", "%%MatrixMarket matrix sparse real general\n", 1, "unknown format 'sparse'");
    reject("unknown field", "%%MatrixMarket matrix coordinate float general\n", 1, "unknown field 'float'");
    reject("unknown symmetry", "%%MatrixMarket matrix coordinate real diagonal\n", 1, "unknown symmetry 'diagonal'");
    reject("pattern array", "%%MatrixMarket matrix array pattern general\n2 2\n", 1, "pattern field needs the coordinate");
    reject("pattern skew", "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n2 1\n", 1,
           "cannot be skew-symmetric");
    reject("banner only, no newline", "%%MatrixMarket matrix coordinate real general", 1, "ends before the size line");
    reject("no size line", BANNER "% only comments\n\n", 3, "ends before the size line");
    reject("size: too few fields", BANNER "3 3\n", 2, "expected 3 fields (rows columns entries), found 2");
    reject("size: too many fields", BANNER "% c\n3 3 3 3\n", 3, "found more: '3'");
    reject("size: not a number", BANNER "3 x 3\n", 2, "number of columns 'x' is not a non-negative integer");
    reject("size: negative", BANNER "3 -3 3\n", 2, "negative number of columns (-3)");
    reject("size: 1.5", BANNER "3 3 1.5\n", 2, "entries '1.5' is not a non-negative integer");
    reject("size: 1e3", BANNER "1e3 3 1\n", 2, "rows '1e3' is not");
    reject("size: rows over 2^31", BANNER "3000000000 3 1\n", 2, "3000000000 rows beyond the 32-bit limit");
    reject("size: 10^11 entries", BANNER "100000 100000 100000000000\n1 1 1\n", 2,
           "100000000000 entries beyond the 32-bit limit");
    reject("size: 2^31 entries in a 9-byte file", BANNER "60000 60000 2147483647\n1 1 1\n", 3,
           "the file ends after 1 of the 2147483647 entries");
    reject("size: more than rows*cols", BANNER "3 3 10\n", 2, "more than the 3 x 3 matrix holds (9)");
    reject("size: more than the triangle", "%%MatrixMarket matrix coordinate real symmetric\n3 3 7\n", 2,
           "more than the lower triangle of a 3 x 3 matrix holds (6)");
    reject("size: skew triangle", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 4\n", 2,
           "strict lower triangle of a 3 x 3 matrix holds (3)");
    reject("size: symmetric not square", "%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n", 2,
           "must be square, the size line says 3 x 4");
    reject("array too large", "%%MatrixMarket matrix array real general\n100000 100000\n", 2,
           "beyond the 32-bit limit");
}

static void test_rejects_entries(void)
{
    reject("fewer entries", BANNER "3 3 3\n1 1 1\n2 2 2\n", 4, "the file ends after 2 of the 3 entries");
    reject("fewer entries, trailing comment", BANNER "3 3 3\n1 1 1\n2 2 2\n% end\n\n", 6,
           "the file ends after 2 of the 3 entries");
    reject("more entries", BANNER "3 3 2\n1 1 1\n2 2 2\n3 3 3\n", 5, "more entries than the 2 the size line declares");
    reject("row index 0", BANNER "3 3 2\n1 1 1\n0 2 2\n", 4, "row index 0: indices start at 1");
    reject("column past the dimension", BANNER "3 3 2\n1 1 1\n2 4 2\n", 4, "column index 4 is past the dimension 3");
    reject("row past the dimension", BANNER "3 5 2\n1 1 1\n4 4 2\n", 4, "row index 4 is past the dimension 3");
    reject("huge index", BANNER "3 3 1\n99999999999999999999999 1 2\n", 3, "row index 99999999999999999999999 is past");
    reject("index 1.5", BANNER "3 3 1\n1.5 1 2\n", 3, "row index '1.5' is not a positive integer");
    reject("index abc", BANNER "3 3 1\n1 abc 2\n", 3, "column index 'abc' is not a positive integer");
    reject("index 1e3", BANNER "3 3 1\n1e3 1 2\n", 3, "row index '1e3' is not a positive integer");
    reject("index -1", BANNER "3 3 1\n-1 1 2\n", 3, "row index '-1' is not a positive integer");
    reject("missing value", BANNER "3 3 1\n1 1\n", 3, "missing value");
    reject("missing column", BANNER "3 3 1\n1\n", 3, "expected 3 fields (row column value), found 1");
    reject("extra token", BANNER "3 3 1\n1 1 1 1\n", 3, "extra field '1'");
    reject("pattern with a value", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 1 1\n", 3,
           "extra field '1' (expected 2: row column)");
    reject("NaN", BANNER "3 3 2\n1 1 1\n2 2 nan\n", 4, "value 'nan' is not finite");
    reject("Inf", BANNER "3 3 1\n2 2 -Infinity\n", 3, "value '-Infinity' is not finite");
    reject("1e999", BANNER "3 3 1\n2 2 1e999\n", 3, "value 1e999 is out of the range of a double");
    reject("not a number", BANNER "3 3 1\n2 2 1.0.0\n", 3, "value '1.0.0' is not a number");
    reject("comma decimal", BANNER "3 3 1\n2 2 1,5\n", 3, "value '1,5' is not a number");
    reject("hex float", BANNER "3 3 1\n2 2 0x1p3\n", 3, "value '0x1p3' is not a number");
    reject("integer field with 1.5", "%%MatrixMarket matrix coordinate integer general\n3 3 1\n2 2 1.5\n", 3,
           "value '1.5' is not an integer");
    reject("symmetric: above the diagonal", "%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 1\n1 2 5\n",
           4, "entry (1, 2) above the diagonal in a symmetric file");
    reject("skew: diagonal entry", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1\n2 2 5\n", 4,
           "diagonal entry (2, 2) in a skew-symmetric file");
    reject("array: extra value on a line", "%%MatrixMarket matrix array real general\n2 1\n1 2\n3\n", 3,
           "extra field '2' (expected 1: value)");
    reject("array: too few values", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n", 5,
           "the file ends after 3 of the 4 values");
    reject("array: too many values", "%%MatrixMarket matrix array real general\n1 2\n1\n2\n3\n", 5,
           "more values than the 2");
    {
        static const char bin[] = BANNER "3 3 1\n1 1 \x01\x02\x00\xff\n";
        expect_fail("binary data in an entry", t_write_file("bin1.mtx", bin, sizeof bin - 1, 0), SPS_ERR_PARSE, 3, "binary data");
        static const char nul[] = BANNER "3 3 1\n1 1 1\0\n";
        expect_fail("NUL after a value", t_write_file("bin2.mtx", nul, sizeof nul - 1, 0), SPS_ERR_PARSE, 3, "binary data");
    }
    {
        /* a binary file that is not gzip */
        unsigned char junk[70000];
        uint64_t s = 7;
        for (size_t i = 0; i < sizeof junk; i++) junk[i] = (unsigned char)(t_rand(&s) * 127 + 128);
        junk[0] = 0x7f, junk[1] = 'E';
        expect_fail("binary file", t_write_file("bin3.mtx", (const char *)junk, sizeof junk, 0), SPS_ERR_PARSE, 1, "binary data");
    }
}

static void test_rejects_files(void)
{
    expect_fail("missing file", t_tmp_path("no-such-file.mtx"), SPS_ERR_IO, 0, "No such file or directory");
    expect_fail("directory", t_tmpdir(), SPS_ERR_IO, 0, "Is a directory");
    /* gzip: corrupt in the middle, and cut short */
    size_t n = 0;
    char *big = malloc(400000);
    n += (size_t)sprintf(big, "%s1000 1000 10000\n", BANNER);
    for (int i = 0; i < 10000; i++) n += (size_t)sprintf(big + n, "%d %d %.17g\n", i % 1000 + 1, i / 10 + 1, 1.0 / (i + 1));
    const char *gz = t_write_file("good.mtx.gz", big, n, 6);
    FILE *f = fopen(gz, "rb");
    char *z = malloc(400000);
    size_t zn = fread(z, 1, 400000, f);
    fclose(f);
    expect_fail("truncated gzip", t_write_file("cut.mtx.gz", z, zn / 2, 0), SPS_ERR_PARSE, -1, "gzip data: unexpected end of file");
    for (size_t i = zn / 3; i < zn / 3 + 64; i++) z[i] = (char)(z[i] ^ 0x5a);
    expect_fail("corrupt gzip", t_write_file("corrupt.mtx.gz", z, zn, 0), SPS_ERR_PARSE, -1, "gzip data: ");
    free(z);
    free(big);
}

static void test_long_lines(void)
{
    /* a 10 MB single line: rejected after one buffer, not read whole */
    size_t n = 10u << 20;
    char *s = malloc(n + 1);
    memset(s, '1', n);
    s[n] = 0;
    const char *p = t_write_file("long1.mtx", s, n, 0);
    expect_fail("10 MB single line", p, SPS_ERR_PARSE, 1, "line longer than 1048576 bytes");
    /* the same as line 3 of a valid header, gzipped */
    memcpy(s, BANNER "9 9 1\n", strlen(BANNER "9 9 1\n"));
    expect_fail("10 MB line 3 (gzip)", t_write_file("long2.mtx.gz", s, n, 6), SPS_ERR_PARSE, 3, "line longer than 1048576 bytes");
    /* a complete 1.5 MB line that would otherwise parse */
    size_t h = strlen(BANNER "9 9 1\n"), m = h + (3u << 19);
    memset(s + h, ' ', m - h);
    memcpy(s + m, "1 1 1\n", 7);
    expect_fail("1.5 MB line of blanks and an entry", t_write_file("long3.mtx", s, m + 6, 0), SPS_ERR_PARSE, 3,
                "line longer than 1048576 bytes");
    /* a comment line of 2 MB */
    memcpy(s + h, "%", 1);
    memset(s + h + 1, 'c', (2u << 20));
    memcpy(s + h + 1 + (2u << 20), "\n1 1 1\n", 8);
    expect_fail("2 MB comment", t_write_file("long4.mtx", s, h + 8 + (2u << 20), 0), SPS_ERR_PARSE, 3, "line longer");
    free(s);
}

/* ---- valid files ----------------------------------------------------------- */

static sps_matrix *read_ok(const char *what, const char *path)
{
    sps_matrix *A = NULL;
    sps_status st = sps_matrix_read(ctx, path, &A);
    T_STATUS(ctx, st, "%s: read", what);
    return st == SPS_OK ? A : NULL;
}

/* A's CSR equals the dense n x m matrix d (row-major). */
static int csr_is(const sps_matrix *A, sps_idx n, sps_idx m, const double *d, int64_t nnz)
{
    const sps_idx *rp, *ci;
    const double *v;
    if (!A || sps_matrix_rows(A) != n || sps_matrix_cols(A) != m || sps_matrix_nnz(A) != nnz) return 0;
    sps_matrix_csr(A, &rp, &ci, &v);
    double *full = calloc((size_t)n * (size_t)m + 1, sizeof *full);
    for (sps_idx r = 0; r < n; r++)
        for (sps_idx p = rp[r]; p < rp[r + 1]; p++) full[(size_t)r * (size_t)m + (size_t)ci[p]] = v[p];
    int ok = memcmp(full, d, (size_t)n * (size_t)m * sizeof *d) == 0;
    free(full);
    return ok;
}

static void test_valid(void)
{
    sps_matrix *A;
    sps_matrix_source src;
    /* CRLF, comments everywhere, blank lines, tabs, leading/trailing blanks,
     * case-insensitive banner, a duplicate, no final newline */
    const char *crlf = "%%matrixmarket MATRIX Coordinate REAL General\r\n% comment\r\n\r\n  \t\r\n"
                       " 2\t3   4 \r\n% between\r\n1 1 1.5\r\n\t2 3 -2e-1  \r\n\r\n%x\r\n1 1 .5\r\n 2 1 +3.";
    A = read_ok("CRLF and comments", t_put_str("crlf.mtx", crlf));
    double d1[] = {2.0, 0, 0, 3.0, 0, -0.2};
    T_OK(csr_is(A, 2, 3, d1, 3), "CRLF and comments: values, duplicate summed, last line without newline");
    sps_matrix_get_source(A, &src);
    T_OK(src.nnz_stored == 4 && src.symmetry == SPS_GENERAL && !src.pattern && !src.integer && !src.gzip &&
             src.bytes == (int64_t)strlen(crlf) && strcmp(src.name, t_tmp_path("crlf.mtx")) == 0 && src.read_ms >= 0,
         "CRLF and comments: source (stored %lld, bytes %lld)", (long long)src.nnz_stored, (long long)src.bytes);
    sps_matrix_destroy(A);

    A = read_ok("gzip copy", t_put_gz_str("crlf.mtx.gz", crlf));
    T_OK(csr_is(A, 2, 3, d1, 3), "gzip copy: same matrix");
    sps_matrix_get_source(A, &src);
    T_OK(src.gzip == 1 && src.bytes == (int64_t)strlen(crlf), "gzip copy: gzip flag and uncompressed bytes");
    sps_matrix_destroy(A);

    /* gzip is detected by content, not by name */
    A = read_ok("gzip named .mtx", t_put_gz_str("plain-name.mtx", crlf));
    T_OK(csr_is(A, 2, 3, d1, 3), "gzip under a plain name");
    sps_matrix_destroy(A);

    A = read_ok("pattern", t_put_str("pat.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 3\n1 1\n3 1\n2 2\n"));
    double d2[] = {1, 0, 1, 0, 1, 0, 1, 0, 0};
    T_OK(csr_is(A, 3, 3, d2, 4), "pattern symmetric: ones, mirrored");
    sps_matrix_get_source(A, &src);
    T_OK(src.pattern == 1 && src.symmetry == SPS_SYMMETRIC && src.nnz_stored == 3, "pattern: source flags");
    sps_matrix_destroy(A);

    A = read_ok("integer", t_put_str("int.mtx", "%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 2 -7\n2 1 +12\n"));
    double d3[] = {0, -7, 12, 0};
    T_OK(csr_is(A, 2, 2, d3, 2), "integer: values");
    sps_matrix_get_source(A, &src);
    T_OK(src.integer == 1 && !src.pattern, "integer: source flag");
    sps_matrix_destroy(A);

    A = read_ok("skew", t_put_str("skew.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 4\n3 2 -1\n"));
    double d4[] = {0, -4, 0, 4, 0, 1, 0, -1, 0};
    T_OK(csr_is(A, 3, 3, d4, 4), "skew-symmetric: mirrored negated");
    sps_matrix_destroy(A);

    A = read_ok("empty", t_put_str("empty.mtx", BANNER "0 0 0\n"));
    T_OK(A && sps_matrix_rows(A) == 0 && sps_matrix_nnz(A) == 0, "0 x 0 matrix");
    sps_matrix_destroy(A);
    A = read_ok("no entries", t_put_str("noent.mtx", BANNER "5 4 0\n% nothing\n"));
    T_OK(A && sps_matrix_rows(A) == 5 && sps_matrix_cols(A) == 4 && sps_matrix_nnz(A) == 0, "5 x 4 with no entries");
    sps_matrix_destroy(A);

    A = read_ok("array general", t_put_str("arr.mtx", "%%MatrixMarket matrix array real general\n2 3\n1\n2\n3\n0\n5\n6\n"));
    double d5[] = {1, 3, 5, 2, 0, 6};
    T_OK(csr_is(A, 2, 3, d5, 6), "array general: column-major, dense CSR keeps the zero");
    sps_matrix_destroy(A);
    A = read_ok("array symmetric", t_put_str("arrs.mtx", "%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n"));
    double d6[] = {1, 2, 2, 3};
    T_OK(csr_is(A, 2, 2, d6, 4), "array symmetric: lower triangle mirrored");
    sps_matrix_destroy(A);
    A = read_ok("array skew", t_put_str("arrk.mtx", "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n"));
    double d7[] = {0, -1, -2, 1, 0, -3, 2, 3, 0};
    T_OK(csr_is(A, 3, 3, d7, 6), "array skew-symmetric: strict lower triangle mirrored negated");
    sps_matrix_destroy(A);

    /* Bad arguments */
    A = (sps_matrix *)&A;
    T_OK(sps_matrix_read(ctx, NULL, &A) == SPS_ERR_INVALID_ARG && A == NULL, "NULL path rejected");
    T_OK(sps_matrix_read(ctx, "x", NULL) == SPS_ERR_INVALID_ARG, "NULL result pointer rejected");
}

/* ---- real matrices ---------------------------------------------------------- */

typedef struct manifest_row {
    char name[128];
    long rows, cols, stored;
    char sym[32], field[32];
} manifest_row;

static int manifest_find(const char *name, manifest_row *out)
{
    const char *dir = t_matrices_dir();
    char path[1200], line[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir ? dir : t_data("real"));
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        char file[256];
        if (sscanf(line, "%255s %127s %ld %ld %ld %31s %31s", file, out->name, &out->rows, &out->cols, &out->stored,
                   out->sym, out->field) == 7 &&
            strcmp(out->name, name) == 0)
            found = 1;
    }
    fclose(f);
    return found;
}

static void test_real(void)
{
    const char *const *names = t_real_matrices();
    int count = 0, bad_manifest = 0, bad_sym = 0, bad_trip = 0;
    char detail[600] = "";
    for (int i = 0; names[i]; i++) {
        const char *path = t_real_matrix_path(names[i]);
        manifest_row m;
        if (!path || !manifest_find(names[i], &m)) {
            T_FAIL(names[i], "not found (path %s) or not in the manifest", path ? path : "none");
            continue;
        }
        sps_matrix *A = read_ok(names[i], path);
        if (!A) continue;
        count++;
        sps_matrix_source src;
        sps_matrix_get_source(A, &src);
        int sym = strcmp(m.sym, "symmetric") == 0;
        if (sps_matrix_rows(A) != m.rows || sps_matrix_cols(A) != m.cols || src.nnz_stored != m.stored ||
            src.symmetry != (sym ? SPS_SYMMETRIC : SPS_GENERAL) || src.integer != (strcmp(m.field, "integer") == 0) ||
            !src.gzip) {
            if (!bad_manifest++)
                snprintf(detail, sizeof detail, "%s: %d x %d, %lld stored, symmetry %d; manifest %ld x %ld, %ld, %s",
                         names[i], sps_matrix_rows(A), sps_matrix_cols(A), (long long)src.nnz_stored,
                         (int)src.symmetry, m.rows, m.cols, m.stored, m.sym);
        }
        if (sym) { /* nnz = 2 * stored - diagonal entries, and A equals its transpose */
            const sps_idx *rp, *ci;
            const double *v;
            sps_matrix_csr(A, &rp, &ci, &v);
            int64_t diag = 0;
            for (sps_idx r = 0; r < sps_matrix_rows(A); r++)
                for (sps_idx p = rp[r]; p < rp[r + 1]; p++) diag += ci[p] == r;
            if (sps_matrix_nnz(A) != 2 * src.nnz_stored - diag) bad_sym++;
        }
        /* round trip through sps_matrix_write */
        const char *out = t_tmp_path("roundtrip.mtx");
        sps_matrix *B = NULL;
        if (sps_matrix_write(ctx, A, out) != SPS_OK || sps_matrix_read(ctx, out, &B) != SPS_OK || !t_matrix_same(A, B)) {
            if (!bad_trip++) snprintf(detail, sizeof detail, "%s: round trip: %s", names[i], sps_last_error(ctx));
        }
        remove(out);
        sps_matrix_destroy(B);
        sps_matrix_destroy(A);
    }
    T_OK(count > 0 && !bad_manifest, "%d real matrices: rows, cols, stored entries, symmetry and field match the "
                                     "manifest (%d differ) %s", count, bad_manifest, detail);
    T_OK(count > 0 && !bad_sym, "symmetric real matrices: nnz = 2*stored - diagonal (%d differ)", bad_sym);
    T_OK(count > 0 && !bad_trip, "real matrices: write then read gives the identical CSR, bit for bit (%d differ) %s",
         bad_trip, detail);
}

/* ---- allocation failures ------------------------------------------------------- */

static void test_alloc_failures(void)
{
    const char *s = "%%MatrixMarket matrix coordinate real symmetric\n4 4 5\n1 1 1\n2 1 2\n3 3 3\n4 2 4\n4 4 5\n";
    const char *paths[2] = {t_put_str("alloc.mtx", s), t_put_gz_str("alloc.mtx.gz", s)};
    for (int f = 0; f < 2; f++) {
        int bad = 0, ok_at = 0;
        for (long k = 1; k < 200 && ok_at == 0; k++) {
            sps_matrix *A = (sps_matrix *)&A;
            sps__fail_alloc_after(k);
            sps_status st = sps_matrix_read(ctx, paths[f], &A);
            sps__fail_alloc_after(0);
            if (st == SPS_OK) {
                ok_at = (int)k;
                if (sps_matrix_nnz(A) != 7) bad++;
                sps_matrix_destroy(A);
            } else if (st != SPS_ERR_NO_MEMORY || A != NULL) {
                bad++;
            }
        }
        T_OK(ok_at > 1 && bad == 0, "allocation failure k = 1..%d on a %s read: NO_MEMORY, A = NULL, or a correct "
                                    "matrix (%d wrong)", ok_at, f ? "gzip" : "plain", bad);
    }
}

int main(void)
{
    if (!(ctx = t_host_context())) return t_done();
    /* every rejection gives the same FILE:LINE whatever the thread count */
    static const int threads[] = {1, 2, 3, 7, 16};
    for (int i = 0; i < 5; i++) {
        sps_context_set_threads(ctx, threads[i]);
        test_rejects_header();
        test_rejects_entries();
        test_rejects_files();
        test_long_lines();
    }
    sps_context_set_threads(ctx, 0);
    test_valid();
    test_real();
    test_alloc_failures();
    sps_context_destroy(ctx);
    return t_done();
}
