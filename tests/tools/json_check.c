/* SPDX-License-Identifier: MIT */
/* spsolve/tests/tools/json_check.c: is stdin exactly one JSON value (RFC 8259),
 * with whitespace around it? Exit 0 if so; else 1 and the byte offset on
 * stderr. Used by tests/regression/json.sh (no python on a bare CI machine). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *p, *end;

static void ws(void)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
}

static int lit(const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(end - p) < n || memcmp(p, w, n)) return 0;
    p += n;
    return 1;
}

static int string(void)
{
    if (p >= end || *p != '"') return 0;
    for (p++; p < end && *p != '"'; p++) {
        if ((unsigned char)*p < 0x20) return 0;
        if (*p != '\\') continue;
        if (++p >= end) return 0;
        if (*p == 'u') {
            for (int i = 0; i < 4; i++)
                if (++p >= end || !isxdigit((unsigned char)*p)) return 0;
        } else if (!strchr("\"\\/bfnrt", *p)) {
            return 0;
        }
    }
    return p < end && *p++ == '"';
}

static int digits(void)
{
    const char *s = p;
    while (p < end && isdigit((unsigned char)*p)) p++;
    return p > s;
}

static int number(void)
{
    if (p < end && *p == '-') p++;
    if (p < end && *p == '0') p++;
    else if (!digits()) return 0;
    if (p < end && *p == '.' && (p++, !digits())) return 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (!digits()) return 0;
    }
    return 1;
}

static int value(int depth);

/* Members of an object (obj) or elements of an array, after the opening bracket. */
static int items(int depth, int obj)
{
    char close = obj ? '}' : ']';
    ws();
    if (p < end && *p == close) return p++, 1;
    for (;;) {
        ws();
        if (obj) {
            if (!string()) return 0;
            ws();
            if (p >= end || *p++ != ':') return 0;
        }
        if (!value(depth + 1)) return 0;
        ws();
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        return p < end && *p++ == close;
    }
}

static int value(int depth)
{
    ws();
    if (depth > 64 || p >= end) return 0;
    if (*p == '{') return p++, items(depth, 1);
    if (*p == '[') return p++, items(depth, 0);
    if (*p == '"') return string();
    if (lit("true") || lit("false") || lit("null")) return 1;
    return number();
}

int main(void)
{
    static char buf[1 << 22];
    size_t n = fread(buf, 1, sizeof buf, stdin);
    p = buf;
    end = buf + n;
    int ok = n < sizeof buf && value(0);
    ws();
    if (ok && p == end) return 0;
    fprintf(stderr, "json_check: not one JSON value (at byte %ld of %zu)\n", (long)(p - buf), n);
    return 1;
}
