/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_io_vector.c: vector files (text, array, coordinate) and the whole-or-nothing writers */
#include "check.h"
#include "internal.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

static sps_context *ctx;

/* Files in the scratch directory whose name starts with `prefix`. */
static int count_files(const char *prefix)
{
    DIR *d = opendir(t_tmpdir());
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) n++;
    if (d) closedir(d);
    return n;
}

static int vec_is(const double *x, sps_idx n, const double *want, sps_idx m)
{
    return x && n == m && (m == 0 || memcmp(x, want, (size_t)m * sizeof *x) == 0);
}

static void read_expect(const char *what, const char *path, sps_idx expected, const double *want, sps_idx m)
{
    double *x = NULL;
    sps_idx n = -1;
    sps_status st = sps_vector_read(ctx, path, expected, &x, &n);
    T_OK(st == SPS_OK && vec_is(x, n, want, m), "%s: %d values as expected (status %d: %s)", what, n, (int)st,
         st ? sps_last_error(ctx) : "");
    sps_free(x);
}

static void fail_expect(const char *what, const char *path, sps_idx expected, sps_status want, long line,
                        const char *needle)
{
    double *x = (double *)&x;
    sps_idx n = -1;
    sps_status st = sps_vector_read(ctx, path, expected, &x, &n);
    const char *msg = sps_last_error(ctx);
    char prefix[700];
    if (line > 0) snprintf(prefix, sizeof prefix, "%s:%ld: ", path, line);
    else snprintf(prefix, sizeof prefix, "%s: ", path);
    T_OK(st == want && x == NULL && n == 0 && strncmp(msg, prefix, strlen(prefix)) == 0 && strstr(msg, needle),
         "%s: %s: \"%s\" (want \"%s...%s\")", what, sps_strerror(want), msg, prefix, needle);
    if (st == SPS_OK) sps_free(x);
}

static void test_read(void)
{
    static const double six[] = {1, 2, 3, 4, 5, 6e-300};
    const char *text = "# a comment\n1 2\t3\r\n% another\n\n  4\n5   6e-300";
    read_expect("text, several per line, comments, CRLF", t_put_str("v.txt", text), 6, six, 6);
    read_expect("text, gzip", t_put_gz_str("v.txt.gz", text), -1, six, 6);
    read_expect("array n x 1", t_put_str("a.mtx", "%%MatrixMarket matrix array real general\n% c\n6 1\n1\n2\n3\n4\n5\n6e-300\n"),
                6, six, 6);
    read_expect("array 1 x n, gzip", t_put_gz_str("b.mtx.gz", "%%MatrixMarket matrix array real general\n1 6\n1\n2\n3\n4\n5\n6e-300\n"),
                -1, six, 6);
    read_expect("array of integers", t_put_str("i.mtx", "%%MatrixMarket matrix array integer general\n3 1\n1\n-2\n+3\n"), 3,
                (const double[]){1, -2, 3}, 3);
    read_expect("coordinate, one column: missing entries 0, repeats summed",
                t_put_str("c.mtx", "%%MatrixMarket matrix coordinate real general\n5 1 3\n2 1 1.5\n5 1 -1\n2 1 1\n"), 5,
                (const double[]){0, 2.5, 0, 0, -1}, 5);
    read_expect("coordinate, one row", t_put_str("r.mtx", "%%MatrixMarket matrix coordinate real general\n1 3 1\n1 3 7\n"), 3,
                (const double[]){0, 0, 7}, 3);
    read_expect("coordinate pattern", t_put_str("p.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 1 2\n1 1\n3 1\n"), 3,
                (const double[]){1, 0, 1}, 3);
    read_expect("a banner in a .txt file means Matrix Market",
                t_put_str("m.txt", "%%MatrixMarket matrix array real general\n2 1\n1\n2\n"), 2, (const double[]){1, 2}, 2);
    /* issue 17 defect 7: an empty vector is an error naming the file */
    fail_expect("empty text file", t_put_str("e.txt", "% nothing\n\n"), 0, SPS_ERR_PARSE, 0, "no values (an empty vector)");
    fail_expect("empty file", t_put_str("e0.txt", ""), -1, SPS_ERR_PARSE, 0, "no values");
    fail_expect("0 x 1 array", t_put_str("e.mtx", "%%MatrixMarket matrix array real general\n0 1\n"), -1, SPS_ERR_PARSE, 0,
                "no values");
    /* a declared length checked against the expected one before it is allocated */
    fail_expect("2^31-1 declared, 3 expected",
                t_put_str("huge.mtx", "%%MatrixMarket matrix coordinate real general\n2147483647 1 0\n"), 3, SPS_ERR_PARSE, 0,
                "has 2147483647 entries, the matrix has 3 rows");

    /* the length check */
    FILE *f = fopen(t_tmp_path("rhs.txt"), "w");
    for (int i = 0; i < 3936; i++) fprintf(f, "%.17g\n", 1.0 / (i + 1));
    fclose(f);
    const char *rhs = t_tmp_path("rhs.txt");
    double *x = (double *)&x;
    sps_idx n = -1;
    char want[700];
    snprintf(want, sizeof want, "%s: has 3936 entries, the matrix has 3937 rows", rhs);
    T_OK(sps_vector_read(ctx, rhs, 3937, &x, &n) == SPS_ERR_PARSE && x == NULL && strcmp(sps_last_error(ctx), want) == 0,
         "length mismatch: \"%s\"", sps_last_error(ctx));
    T_OK(sps_vector_read(ctx, rhs, 3936, &x, &n) == SPS_OK && n == 3936 && x[3935] == 1.0 / 3936,
         "the right length is accepted");
    sps_free(x);
}

static void test_rejects(void)
{
    fail_expect("garbage", t_put_str("g.txt", "1 2\n3 x 4\n"), -1, SPS_ERR_PARSE, 2, "value 'x' is not a number");
    fail_expect("NaN", t_put_str("n.txt", "1\n\n2 NaN\n"), -1, SPS_ERR_PARSE, 3, "value 'NaN' is not finite");
    fail_expect("Inf (gzip)", t_put_gz_str("n.txt.gz", "1\n2\n3\ninf\n"), -1, SPS_ERR_PARSE, 4, "value 'inf' is not finite");
    fail_expect("overflow", t_put_str("o.txt", "1e308\n-1e309\n"), -1, SPS_ERR_PARSE, 2, "value -1e309 is out of the range");
    fail_expect("binary", t_put_str("b.txt", "1\n2\x01\x02\n"), -1, SPS_ERR_PARSE, 2, "binary data");
    fail_expect(".mtx without a banner", t_put_str("nb.mtx", "1\n2\n"), -1, SPS_ERR_PARSE, 1, "missing the banner");
    fail_expect("matrix-shaped coordinate", t_put_str("w.mtx", "%%MatrixMarket matrix coordinate real general\n3 2 1\n1 1 1\n"),
                -1, SPS_ERR_PARSE, 2, "one column (or one row); this one is 3 x 2");
    fail_expect("symmetric vector", t_put_str("s.mtx", "%%MatrixMarket matrix array real symmetric\n1 1\n1\n"), -1,
                SPS_ERR_PARSE, 2, "must be 'general'");
    fail_expect("array: too few", t_put_str("f.mtx", "%%MatrixMarket matrix array real general\n3 1\n1\n2\n"), -1,
                SPS_ERR_PARSE, 4, "the file ends after 2 of the 3 values");
    fail_expect("array: two per line", t_put_str("t.mtx", "%%MatrixMarket matrix array real general\n2 1\n1 2\n"), -1,
                SPS_ERR_PARSE, 3, "extra field '2'");
    fail_expect("coordinate: index past the end", t_put_str("x.mtx", "%%MatrixMarket matrix coordinate real general\n3 1 1\n4 1 1\n"),
                -1, SPS_ERR_PARSE, 3, "row index 4 is past the dimension 3");
    fail_expect("missing file", t_tmp_path("none.txt"), -1, SPS_ERR_IO, 0, "No such file or directory");
    double *x;
    sps_idx n;
    T_OK(sps_vector_read(ctx, NULL, -1, &x, &n) == SPS_ERR_INVALID_ARG, "NULL path rejected");
}

static void test_write(void)
{
    uint64_t s = 42;
    enum { N = 1000 };
    double v[N];
    for (int i = 0; i < N; i++) v[i] = t_rand(&s) * pow(10.0, (double)(i % 40 - 20));
    v[0] = -0.0, v[1] = 4.9406564584124654e-324, v[2] = 1.7976931348623157e308, v[3] = 0.1;
    const char *names[] = {"out.mtx", "out.txt", "out"};
    for (int k = 0; k < 3; k++) {
        const char *p = t_tmp_path(names[k]);
        T_STATUS(ctx, sps_vector_write(ctx, p, v, N), "write %s", names[k]);
        read_expect(names[k], p, N, v, N); /* bit for bit, -0 included */
        FILE *f = fopen(p, "r");
        char line[128] = "";
        if (f && fgets(line, sizeof line, f)) fclose(f);
        T_OK((k == 0) == (strcmp(line, "%%MatrixMarket matrix array real general\n") == 0),
             "%s: %s", names[k], k == 0 ? "Matrix Market array banner" : "plain numbers");
    }
    /* overwrite an existing file */
    const char *p = t_tmp_path("out.txt");
    T_STATUS(ctx, sps_vector_write(ctx, p, v, 3), "overwrite an existing file");
    read_expect("overwritten", p, 3, v, 3);

    /* failures leave nothing behind */
    double bad[2] = {1.0, NAN};
    T_OK(sps_vector_write(ctx, t_tmp_path("nan.txt"), bad, 2) == SPS_ERR_INVALID_ARG && count_files("nan.txt") == 0,
         "NaN refused, no file written: %s", sps_last_error(ctx));
    const char *nodir = t_tmp_path("no/such/dir/x.txt");
    char want[700];
    snprintf(want, sizeof want, "%s: No such file or directory", nodir);
    T_OK(sps_vector_write(ctx, nodir, v, 3) == SPS_ERR_IO && strcmp(sps_last_error(ctx), want) == 0,
         "missing directory: \"%s\"", sps_last_error(ctx));
    const char *dir = t_tmp_path("adir");
    char cmd[700];
    snprintf(cmd, sizeof cmd, "mkdir %s", dir);
    if (system(cmd) != 0) T_FAIL("mkdir", "%s", cmd);
    T_OK(sps_vector_write(ctx, dir, v, 3) == SPS_ERR_IO && count_files("adir.") == 0,
         "a directory as target: IO error, temporary removed (%s)", sps_last_error(ctx));
    rmdir(dir);

    /* a write that fails half way (file size limit): no target, no temporary */
    sps_matrix *A = NULL;
    sps_idx ri[N], ci[N];
    for (int i = 0; i < N; i++) ri[i] = i, ci[i] = (i * 7) % N;
    T_STATUS(ctx, sps_matrix_create_coo(ctx, N, N, N, ri, ci, v, &A), "a test matrix");
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = 4096;
    void (*h)(int) = signal(SIGXFSZ, SIG_IGN);
    if (setrlimit(RLIMIT_FSIZE, &lim) == 0) {
        sps_status st = sps_matrix_write(ctx, A, t_tmp_path("big.mtx"));
        setrlimit(RLIMIT_FSIZE, &old);
        T_OK(st == SPS_ERR_IO && strstr(sps_last_error(ctx), "File too large") && count_files("big.mtx") == 0,
             "write failing half way: IO error, neither target nor temporary left (%s)", sps_last_error(ctx));
    } else {
        t_skip("write failing half way", "setrlimit(RLIMIT_FSIZE) refused");
    }
    signal(SIGXFSZ, h);
    sps__fail_alloc_after(1);
    sps_status st = sps_matrix_write(ctx, A, t_tmp_path("oom.mtx"));
    sps__fail_alloc_after(0);
    T_OK(st == SPS_ERR_NO_MEMORY && count_files("oom.mtx") == 0, "matrix write, allocation failure: nothing written");
    sps_matrix_destroy(A);
}

static void test_alloc_failures(void)
{
    const char *paths[3] = {t_put_str("af.txt", "1 2 3\n4\n"), t_put_gz_str("af.txt.gz", "1 2 3\n4\n"),
                            t_put_str("af.mtx", "%%MatrixMarket matrix coordinate real general\n4 1 2\n1 1 1\n4 1 4\n")};
    for (int f = 0; f < 3; f++) {
        int bad = 0, ok_at = 0;
        for (long k = 1; k < 100 && !ok_at; k++) {
            double *x = (double *)&x;
            sps_idx n = -1;
            sps__fail_alloc_after(k);
            sps_status st = sps_vector_read(ctx, paths[f], -1, &x, &n);
            sps__fail_alloc_after(0);
            if (st == SPS_OK) {
                ok_at = (int)k;
                bad += n != 4 || x[3] != 4;
                sps_free(x);
            } else {
                bad += st != SPS_ERR_NO_MEMORY || x != NULL;
            }
        }
        T_OK(ok_at > 1 && !bad, "vector read %d, allocation failure k = 1..%d: NO_MEMORY or a correct vector", f, ok_at);
    }
}

T_MAIN_HOST(ctx, test_read, test_rejects, test_write, test_alloc_failures)
