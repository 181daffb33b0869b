/* SPDX-License-Identifier: MIT */
/* spsolve/io/write.c: sps_matrix_write, sps_vector_write: whole files or nothing */
#include "parse.h"
#include "target.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process umask without changing it (umask(2) would, racing other
 * threads): Linux shows it in /proc/self/status; else assume 022. */
static mode_t current_umask(void)
{
    mode_t m = 022;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return m;
    char line[256];
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Umask:", 6) == 0) {
            m = (mode_t)strtol(line + 6, NULL, 8);
            break;
        }
    fclose(f);
    return m;
}

typedef int (*emit_fn)(FILE *f, const void *arg); /* < 0 on a write error */

/* Write to PATH.XXXXXX in the target's directory, flush it to disk, rename it
 * over the target. On any failure the temporary is removed and nothing else
 * changes. */
static sps_status write_renamed(sps_context *ctx, const char *path, emit_fn emit, const void *arg)
{
    size_t len = strlen(path);
    char *tmp = sps__malloc(len + 8);
    if (!tmp) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", path);
    memcpy(tmp, path, len);
    memcpy(tmp + len, ".XXXXXX", 8);
    int fd = mkstemp(tmp);
    if (fd < 0) {
        int e = errno;
        sps__free(tmp);
        return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(e));
    }
    int e = 0;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        e = errno;
        close(fd);
    } else {
        if (fchmod(fd, 0666 & ~current_umask()) != 0) e = errno;
        errno = 0;
        if (!e && (emit(f, arg) < 0 || fflush(f) != 0 || fsync(fd) != 0)) e = errno ? errno : EIO;
        if (fclose(f) != 0 && !e) e = errno;
    }
    if (!e && rename(tmp, path) != 0) e = errno;
    if (e) unlink(tmp);
    sps__free(tmp);
    return e ? sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(e)) : SPS_OK;
}

/* A regular file or a new path is written whole (write_renamed); a device or
 * a FIFO in place; a symlink is followed and kept (io/target.c). */
static sps_status write_whole(sps_context *ctx, const char *path, emit_fn emit, const void *arg)
{
    char *target;
    int in_place;
    sps_status st = sps__write_target(ctx, path, &target, &in_place);
    if (st != SPS_OK) return st;
    if (in_place) st = sps__write_in_place(ctx, path, target, emit, arg);
    else st = write_renamed(ctx, target, emit, arg);
    sps__free(target);
    return st;
}

static int emit_matrix(FILE *f, const void *arg)
{
    const sps_csr *A = arg;
    if (fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", A->nrows, A->ncols, A->nnz) < 0)
        return -1;
    for (sps_idx r = 0; r < A->nrows; r++)
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++)
            if (fprintf(f, "%d %d %.17g\n", r + 1, A->col_idx[p] + 1, A->val[p]) < 0) return -1;
    return 0;
}

sps_status sps_matrix_write(sps_context *ctx, const sps_matrix *A, const char *path)
{
    if (!A || !path) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_write: NULL argument");
    const sps_csr *C = &A->A;
    size_t len = strlen(path);
    int spsb = len >= 5 && strcmp(path + len - 5, ".spsb") == 0;
    if (spsb && !sps__spsb_writable())
        return sps__err(ctx, SPS_ERR_UNSUPPORTED, "%s: .spsb is written on little-endian hosts only", path);
    for (sps_idx r = 0; r < C->nrows; r++)
        for (sps_idx p = C->row_ptr[r]; p < C->row_ptr[r + 1]; p++)
            if (!isfinite(C->val[p]))
                return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: entry (%d, %d) is %g, which a matrix file cannot hold",
                                path, r + 1, C->col_idx[p] + 1, C->val[p]);
    return write_whole(ctx, path, spsb ? sps__spsb_emit : emit_matrix, C);
}

typedef struct vec_arg {
    const double *x;
    sps_idx n;
    int mtx;
} vec_arg;

static int emit_vector(FILE *f, const void *arg)
{
    const vec_arg *a = arg;
    if (a->mtx && fprintf(f, "%%%%MatrixMarket matrix array real general\n%d 1\n", a->n) < 0) return -1;
    for (sps_idx i = 0; i < a->n; i++)
        if (fprintf(f, "%.17g\n", a->x[i]) < 0) return -1;
    return 0;
}

sps_status sps_vector_write(sps_context *ctx, const char *path, const double *x, sps_idx n)
{
    if (!path || n < 0 || (!x && n > 0)) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_vector_write: bad argument");
    for (sps_idx i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "%s: entry %d is %g, which the file could not be read back with",
                            path, i + 1, x[i]);
    size_t len = strlen(path);
    vec_arg a = {x, n, len >= 4 && strcmp(path + len - 4, ".mtx") == 0};
    return write_whole(ctx, path, emit_vector, &a);
}
