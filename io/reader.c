/* SPDX-License-Identifier: MIT */
/* spsolve/io/reader.c: block reader (plain or gzip) that hands out complete lines in place */
#define _DEFAULT_SOURCE /* madvise's advice names */
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

sps_status sps__rd_open(sps_context *ctx, const char *path, sps_reader *rd)
{
    memset(rd, 0, sizeof *rd);
    rd->ctx = ctx;
    rd->path = path;
    rd->line = 1;
    rd->file_size = -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) == 0) {
        if (S_ISDIR(sb.st_mode)) {
            close(fd);
            return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(EISDIR));
        }
        if (S_ISREG(sb.st_mode)) rd->file_size = (int64_t)sb.st_size;
    }
    rd->gz = gzdopen(fd, "rb");
    rd->buf = sps__calloc(SPS_IO_BUF + 1 + SPS_IO_PAD, 1);
    if (!rd->gz || !rd->buf) {
        if (rd->gz) gzclose(rd->gz);
        else close(fd);
        sps__free(rd->buf);
        memset(rd, 0, sizeof *rd);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory for the read buffer", path);
    }
    gzbuffer(rd->gz, 1u << 18);
    /* zlib looks at the first bytes: gzip magic means decompress, else copy. */
    rd->gzip = !gzdirect(rd->gz);
    rd->pos = rd->lim = rd->end = rd->buf;
    return SPS_OK;
}

void sps__rd_close(sps_reader *rd)
{
    if (rd->gz) gzclose(rd->gz);
    sps__free(rd->buf);
    rd->gz = NULL;
    rd->buf = NULL;
}

static sps_status verr(sps_reader *rd, int64_t line, const char *fmt, va_list ap)
{
    char msg[768];
    vsnprintf(msg, sizeof msg, fmt, ap);
    return sps__err(rd->ctx, SPS_ERR_PARSE, "%s:%lld: %s", rd->path, (long long)line, msg);
}

sps_status sps__rd_err(sps_reader *rd, int64_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sps_status st = verr(rd, line, fmt, ap);
    va_end(ap);
    return st;
}

int sps__has_binary(const char *b, const char *e)
{
    for (; b < e; b++) {
        unsigned char c = (unsigned char)*b;
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f) return 1;
    }
    return 0;
}

const char *sps__tok(const char *p, char *out, size_t n)
{
    size_t k = 0;
    for (; k + 4 < n && !sps__is_sep(*p); p++) {
        unsigned char c = (unsigned char)*p;
        out[k++] = c < 0x20 || c >= 0x7f ? '?' : (char)c;
    }
    if (!sps__is_sep(*p) && k + 4 >= n) out[k++] = '.', out[k++] = '.', out[k++] = '.';
    out[k] = 0;
    return out;
}

sps_status sps__rd_long_line(sps_reader *rd, const char *b, const char *e)
{
    if (sps__has_binary(b, e < b + 4096 ? e : b + 4096))
        return sps__rd_err(rd, rd->line, "binary data (not a text file)");
    return sps__rd_err(rd, rd->line, "line longer than %ld bytes", SPS_IO_MAX_LINE);
}

sps_status sps__rd_refill(sps_reader *rd, int *more)
{
    /* The partial line at pos moves to the front of the buffer. */
    size_t tail = (size_t)(rd->end - rd->pos);
    memmove(rd->buf, rd->pos, tail);
    rd->pos = rd->lim = rd->buf;
    rd->end = rd->buf + tail;
    for (;;) {
        if ((long)(rd->end - rd->buf) > SPS_IO_MAX_LINE) return sps__rd_long_line(rd, rd->buf, rd->end);
        if (rd->eof) {
            if (rd->end > rd->buf) { /* last line without '\n': add one */
                *rd->end++ = '\n';
                rd->lim = rd->end;
            }
            *more = rd->pos < rd->lim;
            return SPS_OK;
        }
        char *from = rd->end;
        int n = gzread(rd->gz, from, (unsigned)(rd->buf + SPS_IO_BUF - from));
        if (n < 0 || (n == 0 && rd->gzip)) {
            int zerr;
            const char *zmsg = gzerror(rd->gz, &zerr);
            if (zerr == Z_ERRNO)
                return sps__err(rd->ctx, SPS_ERR_IO, "%s: %s", rd->path, strerror(errno));
            if (zerr != Z_OK && zerr != Z_STREAM_END) {
                const char *fdname = strstr(zmsg, ">: "); /* zlib names the file "<fd:N>: " */
                return sps__rd_err(rd, rd->line, "gzip data: %s", fdname ? fdname + 3 : zmsg);
            }
        }
        if (n <= 0) {
            rd->eof = 1;
            continue;
        }
        rd->bytes += n;
        rd->end += n;
        for (char *q = rd->end; q > from; q--)
            if (q[-1] == '\n') {
                rd->lim = q;
                *more = 1;
                return SPS_OK;
            }
    }
}

const char *sps__rd_eol(const sps_reader *rd, const char *b)
{
    return memchr(b, '\n', (size_t)(rd->lim - b));
}


void sps__io_hugepages(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    uintptr_t b = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + bytes) & ~(huge - 1);
    if (bytes >= 4 * huge && e > b) (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
#else
    (void)p;
    (void)bytes;
#endif
}

void sps__io_populate(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
    const uintptr_t page = 4096;
    uintptr_t b = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + bytes) & ~(page - 1);
    if (e > b) (void)madvise((void *)b, e - b, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}
