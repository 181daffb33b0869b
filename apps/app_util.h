/* SPDX-License-Identifier: MIT */
/* spsolve/apps/app_util.h: small helpers shared by the two programs (static
 * inline: each program uses what it needs) */
#ifndef SPS_APP_UTIL_H
#define SPS_APP_UTIL_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The last component of a path. */
static inline const char *app_base_name(const char *p)
{
    const char *s = strrchr(p, '/');
    return s ? s + 1 : p;
}

/* s as a JSON string, quotes included. */
static inline void app_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

/* An output file is written whole or not at all: write to PATH.tmp.PID
 * (app_open_tmp fills tmp), then app_commit_tmp closes it and renames it over
 * PATH; on any error the temporary is removed and -1 returned (errno set). */
static inline FILE *app_open_tmp(const char *path, char *tmp, size_t len)
{
    snprintf(tmp, len, "%s.tmp.%ld", path, (long)getpid());
    return fopen(tmp, "w");
}

static inline int app_commit_tmp(FILE *f, const char *tmp, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
        remove(tmp);
        return -1;
    }
    return 0;
}

#endif
