/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_io_par.c: parallel Matrix Market reading (issue 13):
 * bitwise the one-thread result whatever the thread count, on files of
 * several read buffers (plain and gzip), and the exact first bad line
 * wherever it falls */
#include "check.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static sps_context *ctx;
static const int threads[] = {1, 2, 3, 7, 8, 16};
#define NTHREADS ((int)(sizeof threads / sizeof *threads))
static t_triplets *record; /* make_text's entries go here too when set */

static uint64_t rng = 88172645463325252ull;
/* A text of about `mb` MB: banner, comments scattered through, CRLF and
 * blank lines, duplicates (summed in file order), rows in random order.
 * bad_at > 0: that entry line is replaced by `bad`; extra > 0: that many
 * more entries than declared. Returns the text and the 1-based line of the
 * bad (or first extra) line in *line. */
static char *make_text(const char *kind, int n, int64_t entries, int64_t bad_at, const char *bad, int extra,
                       size_t *len, int64_t *line)
{
    size_t cap = (size_t)(entries + extra) * 64 + 4096, k = 0;
    char *s = malloc(cap);
    int sym = strstr(kind, "symmetric") != NULL, skew = strstr(kind, "skew") != NULL;
    int pattern = strstr(kind, "pattern") != NULL, integer = strstr(kind, "integer") != NULL;
    int64_t ln;
    k += (size_t)sprintf(s + k, "%%%%MatrixMarket matrix coordinate %s\n%% generated\n%d %d %lld\n", kind, n, n,
                         (long long)entries);
    ln = 4;
    *line = 0;
    for (int64_t e = 1; e <= entries + extra; e++, ln++) {
        if (t_xorshift(&rng) % 97 == 0) {
            k += (size_t)sprintf(s + k, t_xorshift(&rng) % 2 ? "%% comment %lld\n" : "  \r\n", (long long)e);
            ln++;
        }
        if (e == bad_at || (extra && e == entries + 1)) *line = ln;
        if (e == bad_at) {
            k += (size_t)sprintf(s + k, "%s\n", bad);
            continue;
        }
        int i = (int)(t_xorshift(&rng) % (uint64_t)n) + 1, j = (int)(t_xorshift(&rng) % (uint64_t)n) + 1;
        if (sym && j > i) {
            int t = i;
            i = j;
            j = t;
        }
        if (skew && i == j) i = i < n ? i + 1 : (j = n - 1, n);
        double v = (double)(int64_t)(t_xorshift(&rng) % 2000001 - 1000000);
        if (pattern) k += (size_t)sprintf(s + k, "%d %d\n", i, j);
        else if (integer) k += (size_t)sprintf(s + k, "%d %d %.0f\n", i, j, v);
        else k += (size_t)sprintf(s + k, "%d %d %.17g%s\n", i, j, v / 7.0, e % 5 == 0 ? "\r" : "");
        if (record) t_trip_add(record, i - 1, j - 1, v / 7.0);
    }
    *len = k;
    return s;
}

/* Files over several 4 MB buffers: every thread count gives the bits of one thread. */
static void test_bitwise(void)
{
    static const char *const kinds[] = {"real general", "real symmetric", "pattern general", "integer skew-symmetric"};
    for (int kk = 0; kk < 4; kk++) {
        size_t len;
        int64_t line;
        int64_t entries = kk == 0 || kk == 1 ? 200000 : kk == 2 ? 600000 : 400000; /* > 5 MB each */
        t_triplets trip = {0};
        record = kk == 0 ? &trip : NULL;
        char *s = make_text(kinds[kk], 3000, entries, 0, NULL, 0, &len, &line);
        record = NULL;
        for (int gz = 0; gz < 2; gz++) {
            const char *path = t_write_file(gz ? "big.mtx.gz" : "big.mtx", s, len, gz);
            sps_matrix *ref = NULL;
            sps_context_set_threads(ctx, 1);
            if (sps_matrix_read(ctx, path, &ref) != SPS_OK) {
                T_FAIL(kinds[kk], "one thread: %s", sps_last_error(ctx));
                continue;
            }
            if (kk == 0 && gz == 0) { /* the in-place assembly against the generic builder */
                sps_matrix *C = t_trip_matrix(ctx, 3000, 3000, &trip);
                T_OK(C && t_matrix_same(C, ref), "real general: the CSR read equals sps_matrix_create_coo's from the same "
                                        "triplets, bit for bit (duplicates summed in file order)");
                sps_matrix_destroy(C);
            }
            int bad = 0;
            for (int t = 1; t < NTHREADS; t++) {
                sps_matrix *A = NULL;
                sps_context_set_threads(ctx, threads[t]);
                if (sps_matrix_read(ctx, path, &A) != SPS_OK || !t_matrix_same(A, ref)) bad = threads[t];
                sps_matrix_destroy(A);
            }
            T_OK(!bad && len > (5u << 20), "%s%s (%.1f MB, %lld entries): 2, 3, 7, 8 and 16 threads give the "
                                                          "one-thread CSR bit for bit (first wrong: %d threads)",
                 kinds[kk], gz ? ", gzip" : "", (double)len / 1e6, (long long)sps_matrix_nnz(ref), bad);
            sps_matrix_destroy(ref);
        }
        free(s);
    }
}

/* The first bad line, wherever it falls, and whatever the thread count. */
static void test_bad_lines(void)
{
    static const struct {
        int64_t at;
        const char *bad, *needle;
    } cases[] = {
        {2, "1 1 x", "value 'x' is not a number"},
        {90000, "1 2 3 4", "extra field '4'"},
        {179999, "0 1 1", "row index 0: indices start at 1"},
        {180000, "3001 1 1", "row index 3001 is past the dimension 3000"},
        {150001, "1 1 nan", "not finite"},
    };
    for (int c = 0; c < (int)(sizeof cases / sizeof *cases); c++) {
        size_t len;
        int64_t line;
        char *s = make_text("real general", 3000, 180000, cases[c].at, cases[c].bad, 0, &len, &line);
        for (int gz = 0; gz < 1 + (c % 2); gz++) {
            const char *path = t_write_file(gz ? "bad.mtx.gz" : "bad.mtx", s, len, gz);
            char prefix[700];
            snprintf(prefix, sizeof prefix, "%s:%lld: ", path, (long long)line);
            int wrong = 0;
            char msg[1024] = "";
            for (int t = 0; t < NTHREADS; t++) {
                sps_matrix *A = (sps_matrix *)&A;
                sps_context_set_threads(ctx, threads[t]);
                sps_status st = sps_matrix_read(ctx, path, &A);
                if (st != SPS_ERR_PARSE || A || strncmp(sps_last_error(ctx), prefix, strlen(prefix)) ||
                    !strstr(sps_last_error(ctx), cases[c].needle)) {
                    wrong = threads[t];
                    snprintf(msg, sizeof msg, "%s", sps_last_error(ctx));
                }
                if (st == SPS_OK) sps_matrix_destroy(A);
            }
            T_OK(!wrong, "bad entry %lld of 180000%s: '%s...%s' with 1, 2, 3, 7, 8, 16 threads (wrong with %d: %s)",
                 (long long)cases[c].at, gz ? " (gzip)" : "", prefix, cases[c].needle, wrong, msg);
        }
        free(s);
    }
    /* more entries than declared, past the first buffers */
    size_t len;
    int64_t line;
    char *s = make_text("real general", 3000, 160000, 0, NULL, 3, &len, &line);
    const char *path = t_write_file("extra.mtx", s, len, 0);
    char prefix[700];
    snprintf(prefix, sizeof prefix, "%s:%lld: more entries than the 160000", path, (long long)line);
    int wrong = 0;
    for (int t = 0; t < NTHREADS; t++) {
        sps_matrix *A = (sps_matrix *)&A;
        sps_context_set_threads(ctx, threads[t]);
        if (sps_matrix_read(ctx, path, &A) != SPS_ERR_PARSE || strncmp(sps_last_error(ctx), prefix, strlen(prefix)))
            wrong = threads[t];
    }
    T_OK(!wrong, "an extra entry at line %lld: '%s' with 1, 2, 3, 7, 8, 16 threads (wrong with %d: %s)", (long long)line,
         prefix, wrong, sps_last_error(ctx));
    free(s);
}

static void test_threads_setting(void)
{
    T_OK(sps_context_set_threads(ctx, -1) == SPS_ERR_INVALID_ARG && sps_context_set_threads(ctx, 257) == SPS_ERR_INVALID_ARG,
         "threads -1 and 257 rejected");
    T_OK(sps_context_set_threads(NULL, 2) == SPS_ERR_INVALID_ARG, "threads on a NULL context rejected");
    T_OK(sps_context_set_threads(ctx, 3) == SPS_OK && sps_context_threads(ctx) == 3, "threads 3 kept");
    sps_status st = sps_context_set_threads(ctx, 0);
    int n = sps_context_threads(ctx);
    T_OK(st == SPS_OK && n >= 1, "threads 0: the online cores (%d)", n);
}

/* A general file already in CSR order takes the assembly's short path (the
 * entries stay where they are): the same CSR as the same entries shuffled,
 * which go through the permutation; a repeated entry or columns out of order
 * in a row fall back to the full path and are summed and sorted as always. */
static void test_csr_order(void)
{
    const int n = 300;
    int64_t m = 0;
    int (*e)[2] = malloc(sizeof *e * (size_t)n * 5);
    for (int i = 0; i < n; i++)
        for (int d = -2; d <= 2; d++)
            if (i + d >= 0 && i + d < n && (d != 1 || i % 7)) e[m][0] = i, e[m][1] = i + d, m++;
    char *a = malloc((size_t)m * 48 + 256), *b = malloc((size_t)m * 48 + 256);
    int64_t *perm = malloc(sizeof *perm * (size_t)m);
    for (int64_t k = 0; k < m; k++) perm[k] = k;
    for (int64_t k = m - 1; k > 0; k--) { /* shuffled order */
        int64_t j = (int64_t)(t_xorshift(&rng) % (uint64_t)(k + 1)), t = perm[k];
        perm[k] = perm[j], perm[j] = t;
    }
    for (int variant = 0; variant < 3; variant++) {
        /* 0: CSR order; 1: row 5's first two entries swapped; 2: entry 10 repeated */
        int64_t mm = m + (variant == 2);
        size_t ka = (size_t)sprintf(a, "%%%%MatrixMarket matrix coordinate real general\n%d %d %lld\n", n, n, (long long)mm);
        size_t kb = (size_t)sprintf(b, "%%%%MatrixMarket matrix coordinate real general\n%d %d %lld\n", n, n, (long long)mm);
        for (int64_t k = 0; k < m; k++) {
            int64_t q = k;
            if (variant == 1 && e[k][0] == 5 && e[k - 1][0] == 5 && (k < 2 || e[k - 2][0] != 5)) q = k - 1;
            if (variant == 1 && e[k][0] == 5 && k + 1 < m && e[k + 1][0] == 5 && (k < 1 || e[k - 1][0] != 5)) q = k + 1;
            ka += (size_t)sprintf(a + ka, "%d %d %.17g\n", e[q][0] + 1, e[q][1] + 1, 1.0 + q * 0.001);
            kb += (size_t)sprintf(b + kb, "%d %d %.17g\n", e[perm[k]][0] + 1, e[perm[k]][1] + 1,
                                  1.0 + perm[k] * 0.001);
            if (variant == 2 && k == 10) {
                ka += (size_t)sprintf(a + ka, "%d %d %.17g\n", e[k][0] + 1, e[k][1] + 1, 0.5);
                kb += (size_t)sprintf(b + kb, "%d %d %.17g\n", e[k][0] + 1, e[k][1] + 1, 0.5);
            }
        }
        sps_matrix *A = NULL, *B = NULL;
        int ok = sps_matrix_read(ctx, t_write_file("order_a.mtx", a, ka, 0), &A) == SPS_OK &&
                 sps_matrix_read(ctx, t_write_file("order_b.mtx", b, kb, 0), &B) == SPS_OK;
        const sps_idx *ra, *ca, *rb, *cb;
        const double *va, *vb;
        ok = ok && sps_matrix_csr(A, &ra, &ca, &va) == SPS_OK && sps_matrix_csr(B, &rb, &cb, &vb) == SPS_OK &&
             sps_matrix_nnz(A) == sps_matrix_nnz(B) && sps_matrix_nnz(A) == m &&
             !memcmp(ra, rb, sizeof *ra * (size_t)(n + 1)) && !memcmp(ca, cb, sizeof *ca * (size_t)m) &&
             !memcmp(va, vb, sizeof *va * (size_t)m);
        T_OK(ok, "variant %d (%s): the file's order and a shuffled order give bitwise the same CSR (%lld entries)",
             variant, variant == 0 ? "CSR order" : variant == 1 ? "two columns out of order" : "a repeated entry",
             (long long)m);
        sps_matrix_destroy(A);
        sps_matrix_destroy(B);
    }
    free(e), free(a), free(b), free(perm);
}

/* A large general file in CSR order (empty rows at the start, inside and at
 * the end) takes the short path on several threads (the row pointer from
 * where each row starts): the CSR of one thread and of the generic builder. */
static void test_csr_order_big(void)
{
    const int n = 60000;
    t_triplets trip = {0};
    size_t cap = (size_t)n * 4 * 48 + 256, k = 0;
    char *s = malloc(cap);
    int64_t m = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (pass) k = (size_t)sprintf(s, "%%%%MatrixMarket matrix coordinate real general\n%d %d %lld\n", n, n, (long long)m);
        for (int i = 10; i < n - 5; i++) {
            if (i % 13 == 0) continue;
            static const int d[4] = {-1, 0, 1, 7};
            for (int q = 0; q < 4; q++) {
                int j = i + d[q];
                if (j < 0 || j >= n) continue;
                if (!pass) {
                    m++;
                    continue;
                }
                double v = (double)(i + 1) / (j + 3);
                k += (size_t)sprintf(s + k, "%d %d %.17g\n", i + 1, j + 1, v);
                t_trip_add(&trip, i, j, v);
            }
        }
    }
    const char *path = t_write_file("ordered.mtx", s, k, 0);
    sps_matrix *ref = NULL, *C = t_trip_matrix(ctx, n, n, &trip);
    sps_context_set_threads(ctx, 1);
    int ok = sps_matrix_read(ctx, path, &ref) == SPS_OK && C && t_matrix_same(C, ref), bad = 0;
    for (int t = 1; t < NTHREADS && ok; t++) {
        sps_matrix *A = NULL;
        sps_context_set_threads(ctx, threads[t]);
        if (sps_matrix_read(ctx, path, &A) != SPS_OK || !t_matrix_same(A, ref)) bad = threads[t];
        sps_matrix_destroy(A);
    }
    T_OK(ok && !bad, "a file in CSR order (%lld entries, empty rows first, inside and last): 1 thread equals the "
                     "generic builder, and 2, 3, 7, 8, 16 threads one thread (first wrong: %d)", (long long)m, bad);
    sps_matrix_destroy(ref);
    sps_matrix_destroy(C);
    free(s);
}

T_MAIN_HOST(ctx, test_threads_setting, test_bitwise, test_bad_lines, test_csr_order, test_csr_order_big)
