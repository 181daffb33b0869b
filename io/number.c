/* SPDX-License-Identifier: MIT */
/* spsolve/io/number.c: decimal text to double, correctly rounded, strtod only as the last resort
 *
 * A token w * 10^q (w: up to 19 significant digits) takes the first of three
 * paths that applies:
 *  1. Clinger: w < 2^53 and |q| <= 22. w and 10^|q| are exact doubles, so one
 *     IEEE multiplication or division rounds the exact value once: correct.
 *  2. Product with 5^q: 10^q = 5^q * 2^q, and 5^q is kept as a 128-bit
 *     normalized significand (table built once, below). w * 5^q to 128 bits
 *     is within a few units of its last place of the exact value, so the
 *     rounding to 53 bits is decided correctly unless the bits below the 53rd
 *     lie within that error of exactly one half: then, and for results that
 *     would be subnormal or overflow, take path 3. This is the idea of the
 *     Eisel-Lemire algorithm (D. Lemire, "Number parsing at a gigabyte per
 *     second", Software: Practice and Experience 51(8), 2021), reduced to a
 *     plain error bound instead of its exact case analysis.
 *  3. strtod on the token in place (it ends at a separator): more than 19
 *     significant digits, huge or tiny exponents, near-ties.
 * SuiteSparse's 17-digit values (w >= 10^16 > 2^53) take path 2. */
#include "parse.h"

#include <float.h>
#include <locale.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define P5_MIN (-342)
#define P5_MAX 308
#define P5_N (P5_MAX - P5_MIN + 1)

/* 5^q ~= (p5_hi[i] * 2^64 + p5_lo[i]) * 2^p5_exp[i], i = q - P5_MIN, top bit of
 * p5_hi set, below the exact value by less than 2 units of p5_lo. */
static uint64_t p5_hi[P5_N], p5_lo[P5_N];
static int16_t p5_exp[P5_N];
static atomic_int p5_state; /* 0 not built, 1 being built, 2 ready */

/* m: 256-bit significand in 32-bit limbs (m[0] most significant, top bit set),
 * value m * 2^e. */
static void p5_store(int q, const uint32_t *m, int e)
{
    int i = q - P5_MIN;
    p5_hi[i] = (uint64_t)m[0] << 32 | m[1];
    p5_lo[i] = (uint64_t)m[2] << 32 | m[3];
    p5_exp[i] = (int16_t)(e + 128);
}

static void p5_build(void)
{
    uint32_t m[8];
    int e;
    /* q >= 0: times 5, then shift right by 2 or 3 to renormalize (exact while
     * 5^q fits in 256 bits, truncated after that). */
    memset(m, 0, sizeof m);
    m[0] = 0x80000000u;
    e = -255;
    for (int q = 0; q <= P5_MAX; q++) {
        p5_store(q, m, e);
        uint64_t c = 0;
        for (int k = 7; k >= 0; k--) {
            c += (uint64_t)m[k] * 5;
            m[k] = (uint32_t)c;
            c >>= 32;
        }
        int s = c >= 4 ? 3 : 2; /* 5m has 258 or 259 bits: c is 2, 3 or 4 */
        for (int k = 7; k > 0; k--) m[k] = m[k] >> s | m[k - 1] << (32 - s);
        m[0] = m[0] >> s | (uint32_t)c << (32 - s);
        e += s;
    }
    /* q < 0: divide by 5, then shift left by 2 or 3, continuing the division
     * into the new low bits (each step truncates by less than one unit). */
    memset(m, 0, sizeof m);
    m[0] = 0x80000000u;
    e = -255;
    for (int q = -1; q >= P5_MIN; q--) {
        uint64_t r = 0;
        for (int k = 0; k < 8; k++) {
            uint64_t cur = r << 32 | m[k];
            m[k] = (uint32_t)(cur / 5);
            r = cur % 5;
        }
        int s = (m[0] & 0x20000000u) ? 2 : 3; /* m/5 has 254 or 253 bits */
        for (int k = 0; k < 7; k++) m[k] = m[k] << s | m[k + 1] >> (32 - s);
        m[7] = m[7] << s | (uint32_t)((r << s) / 5);
        e -= s;
        p5_store(q, m, e);
    }
}

/* 1 when the table is usable. The first caller builds it; a thread that finds
 * it being built takes the exact strtod path meanwhile instead of waiting. */
static int p5_ready(void)
{
    int s = atomic_load_explicit(&p5_state, memory_order_acquire);
    if (s == 2) return 1;
    int expect = 0;
    if (s == 0 && atomic_compare_exchange_strong(&p5_state, &expect, 1)) {
        p5_build();
        atomic_store_explicit(&p5_state, 2, memory_order_release);
        return 1;
    }
    return 0;
}

static inline void mul64(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
#ifdef __SIZEOF_INT128__
    __extension__ typedef unsigned __int128 u128;
    u128 p = (u128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
#else
    uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu, bh = b >> 32;
    uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
    *lo = (mid << 32) | (ll & 0xffffffffu);
    *hi = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
}

static inline int clz64(uint64_t x)
{
#if defined(__GNUC__)
    return __builtin_clzll(x);
#else
    int n = 0;
    while (!(x & (UINT64_C(1) << 63))) { x <<= 1; n++; }
    return n;
#endif
}

/* Path 2: w * 10^q for w != 0, q in [P5_MIN, P5_MAX]. 0 when undecided. */
static int mul_pow5(uint64_t w, int q, int neg, double *x)
{
    int i = q - P5_MIN;
    int lz = clz64(w);
    uint64_t wn = w << lz, ahi, alo, bhi, blo;
    mul64(wn, p5_hi[i], &ahi, &alo);
    mul64(wn, p5_lo[i], &bhi, &blo);
    /* top:mid = top 128 bits of the 192-bit product, low 64 bits of wn * lo
     * dropped: < 3 units of mid below the exact product. */
    uint64_t top = ahi, mid = alo + bhi;
    top += mid < alo;
    /* A product in [2^190, 2^191) shifts left once (no branch: it is random) */
    int s = (int)(top >> 63) ^ 1;
    top = top << s | (mid >> 63 & (uint64_t)s);
    mid <<= s;
    /* Bits below the 53 kept: (top & 0x7ff):mid, one half is 0x400:0. Too
     * close to the half (error < 6 units of mid): undecided. */
    uint64_t rh = top & 0x7ff;
    if ((rh == 0x400 && mid <= 16) || (rh == 0x3ff && mid >= UINT64_MAX - 16)) return 0;
    uint64_t m = (top >> 11) + (rh >= 0x400);
    /* value = m * 2^k: product = top:mid * 2^(64-s), m = top:mid >> 75 */
    int k = 139 - s + p5_exp[i] + q - lz;
    if (m == UINT64_C(1) << 53) {
        m >>= 1;
        k++;
    }
    int be = k + 52 + 1023; /* biased exponent of a normal double */
    if (be < 1 || be > 2046) return 0;
    uint64_t bits = (uint64_t)neg << 63 | (uint64_t)be << 52 | (m & ((UINT64_C(1) << 52) - 1));
    memcpy(x, &bits, sizeof *x);
    return 1;
}

/* If the 8 bytes at s are all digits, their value in *v (one step instead of
 * eight dependent multiply-adds; the caller's buffer has 8 readable bytes
 * past any token). */
static inline int eight_digits(const char *s, uint64_t *v)
{
#ifdef SPS_IO_SWAR
    uint64_t x;
    memcpy(&x, s, 8);
    /* every byte in 0x30..0x39: high nibble 3, and adding 6 does not carry */
    if (((x & UINT64_C(0xf0f0f0f0f0f0f0f0)) | (((x + UINT64_C(0x0606060606060606)) & UINT64_C(0xf0f0f0f0f0f0f0f0)) >> 4)) !=
        UINT64_C(0x3333333333333333))
        return 0;
    *v = sps__digits8(x - UINT64_C(0x3030303030303030));
    return 1;
#else
    (void)s;
    (void)v;
    return 0;
#endif
}

/* strtod in the "C" locale, for a program that changed LC_NUMERIC. */
static double strtod_c(const char *p, char **e)
{
    *e = (char *)p;
    locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (c == (locale_t)0) return 0;
    locale_t old = uselocale(c);
    double v = strtod(p, e);
    uselocale(old);
    freelocale(c);
    return v;
}

static const double p10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

sps_num sps__parse_double(const char *p, const char **end, double *x)
{
    const char *s = p;
    /* Signs are random in real data: no branches on them. */
    int neg = *s == '-';
    s += neg | (*s == '+');
    uint64_t w = 0;
    int nd = 0, many = 0; /* significant digits in w; more than 19 seen */
    int64_t q = 0;
    unsigned d;
    const char *start = s;
    while (*s == '0') s++;
    for (uint64_t e8; nd <= 11 && eight_digits(s, &e8); s += 8) w = w * 100000000 + e8, nd += 8;
    for (; (d = (unsigned)(unsigned char)*s - '0') < 10; s++) {
        if (nd < 19) w = w * 10 + d, nd++;
        else many = 1;
    }
    int digits = s > start;
    if (*s == '.') {
        const char *f = ++s;
        if (nd == 0)
            for (; *s == '0'; s++) q--;
        for (uint64_t e8; nd <= 11 && eight_digits(s, &e8); s += 8) w = w * 100000000 + e8, nd += 8, q -= 8;
        for (; (d = (unsigned)(unsigned char)*s - '0') < 10; s++) {
            if (nd < 19) w = w * 10 + d, nd++, q--;
            else many = 1;
        }
        digits |= s > f;
    }
    if (!digits) {
        *end = p;
        return SPS_NUM_BAD;
    }
    if (*s == 'e' || *s == 'E') {
        const char *t = s + 1;
        int eneg = *t == '-';
        t += eneg | (*t == '+');
        if ((unsigned)(unsigned char)*t - '0' < 10) {
            int64_t ex = 0;
            for (; (d = (unsigned)(unsigned char)*t - '0') < 10; t++)
                if (ex < 100000) ex = ex * 10 + d;
            q += eneg ? -ex : ex;
            s = t;
        }
    }
    *end = s;
    if (!many) {
        if (w == 0) {
            *x = neg ? -0.0 : 0.0;
            return SPS_NUM_OK;
        }
#if FLT_EVAL_METHOD == 0
        if (w < (UINT64_C(1) << 53) && q >= -22 && q <= 22) {
            double v = (double)w;
            v = q < 0 ? v / p10[-q] : v * p10[q];
            *x = neg ? -v : v;
            return SPS_NUM_OK;
        }
#endif
        if (q >= P5_MIN && q <= P5_MAX && p5_ready() && mul_pow5(w, (int)q, neg, x))
            return SPS_NUM_OK;
    }
    char *e;
    double v = strtod(p, &e);
    if (e != s) v = strtod_c(p, &e); /* a locale whose decimal point is not '.' */
    if (e != s) return SPS_NUM_BAD;
    *x = v;
    return isinf(v) ? SPS_NUM_RANGE : SPS_NUM_OK;
}
