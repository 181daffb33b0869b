/* SPDX-License-Identifier: MIT */
/* spsolve/io/target.c: the output target rule. Write-then-rename keeps a
 * regular file whole, but renaming over a device, a FIFO or a symlink would
 * replace it with a regular file (as root, `-o /dev/null` would replace the
 * system's /dev/null): those are written in place, or followed. */
#include "target.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPS_MAX_LINKS 40 /* as the kernel's ELOOP limit */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = sps__malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* The path a symlink at LINK points to, relative targets taken from LINK's
 * folder; NULL (errno set) on failure. */
static char *link_target(const char *link)
{
    char buf[4096];
    ssize_t k = readlink(link, buf, sizeof buf - 1);
    if (k < 0) return NULL;
    if (k >= (ssize_t)sizeof buf - 1) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    buf[k] = 0;
    const char *slash = strrchr(link, '/');
    size_t dir = buf[0] == '/' || !slash ? 0 : (size_t)(slash - link) + 1;
    char *t = sps__malloc(dir + (size_t)k + 1);
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    memcpy(t, link, dir);
    memcpy(t + dir, buf, (size_t)k + 1);
    return t;
}

/* Follow a symlink chain to its end: the regular file to replace, or the
 * path to create (a dangling link). */
static sps_status follow_links(sps_context *ctx, const char *path, char **target)
{
    char *p = dup_str(path);
    errno = 0;
    for (int i = 0; p && i <= SPS_MAX_LINKS; i++) {
        struct stat ls;
        if (lstat(p, &ls) != 0 && errno != ENOENT) break;
        if (errno == ENOENT || !S_ISLNK(ls.st_mode)) {
            *target = p;
            return SPS_OK;
        }
        char *next = link_target(p);
        sps__free(p);
        p = next;
        errno = 0;
    }
    int e = errno ? errno : p ? ELOOP : ENOMEM;
    sps__free(p);
    return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(e));
}

sps_status sps__write_target(sps_context *ctx, const char *path, char **target, int *in_place)
{
    *target = NULL;
    *in_place = 0;
    struct stat ls, st;
    if (lstat(path, &ls) != 0) {
        if (errno != ENOENT) return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(errno));
        *target = dup_str(path); /* a new file */
    } else if (!S_ISLNK(ls.st_mode)) {
        if (S_ISDIR(ls.st_mode)) return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(EISDIR));
        *in_place = !S_ISREG(ls.st_mode);
        *target = dup_str(path);
    } else if (stat(path, &st) != 0) {
        if (errno != ENOENT) return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(errno));
        return follow_links(ctx, path, target); /* dangling: create its target */
    } else if (S_ISDIR(st.st_mode)) {
        return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(EISDIR));
    } else if (!S_ISREG(st.st_mode)) {
        *in_place = 1; /* opening the link reaches the device or FIFO */
        *target = dup_str(path);
    } else {
        return follow_links(ctx, path, target); /* the regular file the link points to */
    }
    if (!*target) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", path);
    return SPS_OK;
}

sps_status sps__write_in_place(sps_context *ctx, const char *path, const char *target,
                               int (*emit)(FILE *f, const void *arg), const void *arg)
{
    FILE *f = fopen(target, "w");
    if (!f) return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(errno));
    errno = 0;
    int e = 0;
    if (emit(f, arg) < 0 || fflush(f) != 0 || ferror(f)) e = errno ? errno : EIO;
    if (fclose(f) != 0 && !e) e = errno ? errno : EIO;
    return e ? sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(e)) : SPS_OK;
}
