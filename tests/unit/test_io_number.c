/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_io_number.c: the io/ number parser equals strtod bit for bit */
#include "check.h"
#include "io/parse.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long n_tested, n_bad;
static char first_bad[160];

/* Parse s both ways; a mismatch in value bits, end or status is recorded.
 * (The parser may read 8 bytes past the token, as its buffers allow.) */
static void one(const char *str)
{
    char s[600] = {0};
    snprintf(s, sizeof s, "%s", str);
    char *e1;
    double ref = strtod(s, &e1);
    const char *e2;
    double v = 12345.0;
    sps_num r = sps__parse_double(s, &e2, &v);
    int ok = *e1 == 0 && e2 == e1 && memcmp(&v, &ref, sizeof v) == 0 &&
             r == (isinf(ref) ? SPS_NUM_RANGE : SPS_NUM_OK);
    n_tested++;
    if (!ok && n_bad++ == 0)
        snprintf(first_bad, sizeof first_bad, "'%s': got %.17g (status %d), strtod %.17g", s, v, (int)r, ref);
}

static uint64_t rng = 0x1234567u;
static double rnd_double(void)
{
    /* any finite bit pattern, subnormals included */
    for (;;) {
        uint64_t b = t_xorshift(&rng);
        double d;
        memcpy(&d, &b, sizeof d);
        if (isfinite(d)) return d;
    }
}

static void test_fixed(void)
{
    static const char *const cases[] = {
        "0", "-0", "+0", "0.0", "-0.0", ".5", "5.", "+.5", "-5.", "1E+05", "1e-05", "0.1", "0.2", "0.3",
        "1", "-1", "+1", "9007199254740992", "9007199254740993", "9007199254740994", "9007199254740995",
        "18014398509481985", "1e22", "1e23", "1e-22", "1e-23", "9007199254740991e22", "9007199254740993e22",
        "9007199254740991e-22", "4503599627370497e-22", "123456789012345678", "1234567890123456789",
        "12345678901234567890", "99999999999999999999", "18446744073709551615", "18446744073709551616",
        "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308",
        "2.225073858507201136057409796709131975934819546351645648e-308", "4.9406564584124654e-324",
        "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-324", "5e-324", "1e-400", "1e-99999",
        "1.7976931348623157e308", "1.7976931348623158e308", "1.7976931348623159e308", "1e308", "1e309",
        "1e999", "-1e999", "1e99999999999999999999", "0e99999999999", "0.000000000000000000000000000001",
        "1.00000000000000011102230246251565404236316680908203125", "1.0000000000000001110223024625156540",
        "1.00000000000000011102230246251565404236316680908203124",
        "7.2057594037927933e16", "3.0517578125e-5", "8.98846567431158e307", "2.5e-324",
        "0.30000000000000004", "-1.2345678901234567e-03", "6.02214076e23", "1.602176634e-19",
        "1.7976931348623157e+308", "000000000000000000000000001.5", "1.5000000000000000000000000000",
        "4.35679e-321", "9.5e-321", "2.2250738585072009e-308", "1.1125369292536007e-308",
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) one(cases[i]);
}

/* Values printed the ways files print them. */
static void test_printed(long n)
{
    static const char *const fmts[] = {"%.17g", "%.16e", "%.15g", "%.6e", "%.18e", "%.20g", "%.3f", "%g"};
    char s[400];
    for (long i = 0; i < n; i++) {
        double d = rnd_double();
        if (i & 1) d = ldexp((double)(t_xorshift(&rng) >> 11), (int)(t_xorshift(&rng) % 120) - 80); /* typical magnitudes */
        snprintf(s, sizeof s, fmts[i % 8], d);
        one(s);
    }
}

/* Random digit strings: 1..24 digits, a point anywhere or nowhere, exponents
 * around the fast paths' edges and beyond, signs, leading zeros. */
static void test_random_digits(long n)
{
    char s[128];
    for (long i = 0; i < n; i++) {
        int k = 0, nd = 1 + (int)(t_xorshift(&rng) % 24), point = (int)(t_xorshift(&rng) % (nd + 2)) - 1;
        uint64_t r = t_xorshift(&rng);
        if (r & 1) s[k++] = (r & 2) ? '-' : '+';
        if ((r >> 2) % 5 == 0) s[k++] = '0', s[k++] = '0';
        for (int j = 0; j < nd; j++) {
            if (j == point) s[k++] = '.';
            s[k++] = (char)('0' + t_xorshift(&rng) % 10);
        }
        if (point == nd) s[k++] = '.';
        if ((r >> 5) % 4) {
            int ex;
            switch ((r >> 8) % 4) {
            case 0: ex = (int)(t_xorshift(&rng) % 61) - 30; break;     /* Clinger's edges (+-22) */
            case 1: ex = (int)(t_xorshift(&rng) % 700) - 350; break;   /* the whole table */
            case 2: ex = (int)(t_xorshift(&rng) % 50) + 290; break;    /* overflow edge */
            default: ex = -(int)(t_xorshift(&rng) % 60) - 300; break;  /* subnormal edge */
            }
            k += snprintf(s + k, sizeof s - (size_t)k, "%c%s%d", (r >> 12) & 1 ? 'e' : 'E',
                          ex >= 0 && ((r >> 13) & 1) ? "+" : "", ex);
        }
        s[k] = 0;
        one(s);
    }
}

/* Near-ties: the exact midpoint between two neighbouring doubles, printed
 * with 17 to 21 significant digits (rounded: just above or below the tie),
 * exactly, and nudged by one unit in the last printed digit. */
static void test_near_ties(long n)
{
#if LDBL_MANT_DIG >= 64
    char s[128];
    for (long i = 0; i < n; i++) {
        double d = fabs(rnd_double());
        if (i & 1) d = ldexp(1.0 + (double)(t_xorshift(&rng) >> 12) / 4503599627370496.0, (int)(t_xorshift(&rng) % 200) - 100);
        if (!isfinite(nextafter(d, INFINITY))) continue;
        long double mid = ((long double)d + (long double)nextafter(d, INFINITY)) / 2;
        int digits = 16 + (int)(i % 6);
        snprintf(s, sizeof s, "%.*Le", digits, mid);
        one(s);
        snprintf(s, sizeof s, "%.60Le", mid); /* exact */
        one(s);
        snprintf(s, sizeof s, "%.*Le", digits, mid);
        char *e = strchr(s, 'e');
        if (e && e[-1] > '0' && e[-1] < '9') { /* nudge the last digit both ways */
            e[-1]++;
            one(s);
            e[-1] -= 2;
            one(s);
        }
    }
#else
    (void)n;
    t_skip("near ties", "long double has no more precision than double here");
#endif
}

/* sps__parse_double on a padded copy of str; *stop: the byte it stopped at. */
static sps_num pd(const char *str, char *stop, double *v)
{
    char s[64] = {0};
    snprintf(s, sizeof s, "%s", str);
    const char *e;
    sps_num r = sps__parse_double(s, &e, v);
    *stop = *e;
    return r;
}

static void test_tokens(void)
{
    /* The parser stops at the end of the number; the caller checks the separator. */
    char e;
    double v;
    T_OK(pd("1.5 2", &e, &v) == SPS_NUM_OK && v == 1.5 && e == ' ', "stops at a blank");
    T_OK(pd("1.5\n", &e, &v) == SPS_NUM_OK && e == '\n', "stops at the end of line");
    T_OK(pd("1.5x", &e, &v) == SPS_NUM_OK && e == 'x', "leaves trailing junk to the caller");
    T_OK(pd("12345678.12345678x", &e, &v) == SPS_NUM_OK && e == 'x' && v == 12345678.12345678,
         "8-digit groups on both sides of the point");
    T_OK(pd("1234567:", &e, &v) == SPS_NUM_OK && e == ':' && v == 1234567, "':' (after '9') ends a group");
    T_OK(pd("1234567/", &e, &v) == SPS_NUM_OK && e == '/' && v == 1234567, "'/' (before '0') ends a group");
    T_OK(pd("1e", &e, &v) == SPS_NUM_OK && e == 'e', "an exponent without digits is not consumed");
    T_OK(pd("nan", &e, &v) == SPS_NUM_BAD, "nan is not a decimal number");
    T_OK(pd("-inf", &e, &v) == SPS_NUM_BAD, "inf is not a decimal number");
    T_OK(pd(".", &e, &v) == SPS_NUM_BAD, "'.' alone is not a number");
    T_OK(pd("-", &e, &v) == SPS_NUM_BAD, "'-' alone is not a number");
    T_OK(pd("e5", &e, &v) == SPS_NUM_BAD, "'e5' is not a number");
    T_OK(pd("0x1p3", &e, &v) == SPS_NUM_OK && e == 'x', "hex floats are not read (stops at x)");
    T_OK(pd("1e999", &e, &v) == SPS_NUM_RANGE && isinf(v), "1e999 overflows");
}

/* Indices: 1 to 12 digits (the 8-byte path and the digit loop), each
 * followed by the bytes a line may hold next. */
static void test_uint(void)
{
    int bad = 0;
    uint64_t r = 1;
    for (int len = 1; len <= 12; len++)
        for (int k = 0; k < 2000; k++) {
            char s[64] = {0};
            static const char after[] = " \t\r\n.e:/x";
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            for (int i = 0; i < len; i++) s[i] = (char)('0' + (r >> (3 * i + 7)) % 10);
            s[len] = after[k % (sizeof after - 1)];
            for (int i = len + 1; i < 20; i++) s[i] = (char)('0' + (k + i) % 10); /* digits after a stop */
            uint64_t v;
            const char *e = sps__scan_uint(s, &v);
            bad += e != s + len || v != strtoull(s, NULL, 10);
        }
    T_OK(bad == 0, "sps__scan_uint: 1 to 12 digits, any stop byte, equals strtoull (%d differ)", bad);
    uint64_t v;
    char z[16] = "x";
    T_OK(sps__scan_uint(z, &v) == z && v == 0, "sps__scan_uint: no digit, no progress");
}

/* A program that set a locale with a decimal comma still reads '.' files. */
static void test_locale(void)
{
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "fr_FR.utf8"};
    const char *got = NULL;
    for (int i = 0; i < 4 && !got; i++) got = setlocale(LC_NUMERIC, names[i]);
    if (!got) {
        t_skip("decimal-comma locale", "no de_DE or fr_FR locale installed");
        return;
    }
    char s[64] = "1.000000000000000000000000001 "; /* > 19 digits: the strtod path */
    const char *e;
    double v;
    sps_num r = sps__parse_double(s, &e, &v);
    T_OK(r == SPS_NUM_OK && v == 1.0 && *e == ' ', "strtod path under LC_NUMERIC=%s", got);
    setlocale(LC_NUMERIC, "C");
}

int main(void)
{
    test_locale();
    test_uint();
    test_tokens();
    test_fixed();
    T_OK(n_bad == 0, "fixed tricky cases equal strtod (%ld tested, %ld differ; first: %s)", n_tested, n_bad, first_bad);
    n_tested = n_bad = 0;
    test_printed(1000000);
    T_OK(n_bad == 0, "printed doubles (%%.17g, %%.16e, ...) equal strtod (%ld tested, %ld differ; first: %s)",
         n_tested, n_bad, first_bad);
    n_tested = n_bad = 0;
    test_random_digits(1000000);
    T_OK(n_bad == 0, "random digit strings equal strtod (%ld tested, %ld differ; first: %s)", n_tested, n_bad,
         first_bad);
    n_tested = n_bad = 0;
    test_near_ties(200000);
    T_OK(n_bad == 0, "near-tie decimals equal strtod (%ld tested, %ld differ; first: %s)", n_tested, n_bad,
         first_bad);
    return t_done();
}
