/* SPDX-License-Identifier: MIT */
/* spsolve/apps/app_util.h: small helpers shared by the two programs (static
 * inline: each program uses what it needs) */
#ifndef SPS_APP_UTIL_H
#define SPS_APP_UTIL_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* ---- output files -------------------------------------------------------
 * "-" is stdout. A regular file or a new path is written to PATH.tmp.PID
 * beside it and renamed over it: whole or not at all. Anything else (a
 * character device such as /dev/null, a FIFO) is written in place, never
 * replaced. A symlink is followed: its target is what gets written, and the
 * link stays. The library's writers (sps_vector_write, sps_matrix_write)
 * follow the same rule. */

typedef struct app_out {
    FILE *f;
    int mode;          /* 0 stdout, 1 in place, 2 temporary then rename */
    char path[4096];   /* what to rename over (mode 2) */
    char tmp[4200];
} app_out;

/* The folder part of path ("." for none) into dir. */
static inline void app_dir_name(const char *path, char *dir, size_t len)
{
    const char *s = strrchr(path, '/');
    if (!s) snprintf(dir, len, ".");
    else if (s == path) snprintf(dir, len, "/");
    else snprintf(dir, len, "%.*s", (int)(s - path), path);
}

/* Can path be written? Checked before the work that produces the output, so
 * that a typo fails at once. 0 if so; else -1 with the reason in why. */
static inline int app_out_check(const char *path, char *why, size_t len)
{
    struct stat st;
    char dir[4096];
    if (!strcmp(path, "-")) return 0;
    if (!path[0]) return snprintf(why, len, "an empty file name"), -1;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return snprintf(why, len, "cannot write %s: it is a folder", path), -1;
        if (!S_ISREG(st.st_mode) && access(path, W_OK) != 0)
            return snprintf(why, len, "cannot write %s: %s", path, strerror(errno)), -1;
        if (S_ISREG(st.st_mode)) {
            char *real = realpath(path, NULL);
            app_dir_name(real ? real : path, dir, sizeof dir);
            free(real);
        } else {
            return 0;
        }
    } else if (errno != ENOENT) {
        return snprintf(why, len, "cannot write %s: %s", path, strerror(errno)), -1;
    } else {
        app_dir_name(path, dir, sizeof dir);
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return snprintf(why, len, "cannot write %s: no such folder '%s'", path, dir), -1;
    if (access(dir, W_OK) != 0)
        return snprintf(why, len, "cannot write %s: the folder '%s' is not writable (%s)", path, dir,
                        strerror(errno)), -1;
    return 0;
}

/* Open path for writing by the rule above; -1 with errno on failure. */
static inline int app_out_open(app_out *o, const char *path)
{
    struct stat st;
    memset(o, 0, sizeof *o);
    if (!strcmp(path, "-")) {
        o->f = stdout;
        return 0;
    }
    int exists = stat(path, &st) == 0;
    struct stat ls;
    int dangling = !exists && lstat(path, &ls) == 0 && S_ISLNK(ls.st_mode);
    if ((exists && !S_ISREG(st.st_mode)) || dangling) {
        o->mode = 1; /* a device, a FIFO, or a link to a file to create: in place */
        o->f = fopen(path, "w");
        return o->f ? 0 : -1;
    }
    char *real = exists ? realpath(path, NULL) : NULL;
    if (exists && !real) return -1;
    snprintf(o->path, sizeof o->path, "%s", real ? real : path);
    free(real);
    o->mode = 2;
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->path, (long)getpid());
    o->f = fopen(o->tmp, "w");
    return o->f ? 0 : -1;
}

/* Finish the file: flush, close (not stdout), rename (mode 2). Any write
 * error (ENOSPC on /dev/full, EPIPE) is -1 with errno set; a temporary is
 * removed. */
static inline int app_out_close(app_out *o)
{
    errno = 0;
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = bad ? (errno ? errno : EIO) : 0;
    if (o->mode != 0 && fclose(o->f) != 0 && !e) e = errno ? errno : EIO;
    if (!e && o->mode == 2 && rename(o->tmp, o->path) != 0) e = errno;
    if (e && o->mode == 2) remove(o->tmp);
    o->f = NULL;
    errno = e;
    return e ? -1 : 0;
}

#endif
