/* SPDX-License-Identifier: MIT */
/* spsolve/io/parse.h: the io/ reader core: block reader with line numbers, tokens, numbers */
#ifndef SPS_IO_PARSE_H
#define SPS_IO_PARSE_H

#include "internal.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

/* Any line longer than this is rejected (and never read whole). */
#define SPS_IO_MAX_LINE (1L << 20)
/* Read buffer: room for a maximal line plus a few MiB of data. */
#define SPS_IO_BUF (4L << 20)
/* Readable (zeroed) bytes after the buffer's data: the number parser reads
 * 8 bytes at a time and may look past the end of the line. */
#define SPS_IO_PAD 16

/* A file (plain or gzip, detected by content) read in big blocks. Lines are
 * parsed in place: every line in [pos, lim) ends with a '\n' before lim, so
 * a tokenizer may run to the '\n' without a bounds check. */
typedef struct sps_reader {
    sps_context *ctx;
    const char *path;  /* as given: the FILE of every message */
    gzFile gz;         /* zlib reads plain files transparently */
    char *buf;         /* SPS_IO_BUF + 1 (a final '\n') + SPS_IO_PAD bytes */
    char *pos;         /* start of the next unread line */
    char *lim;         /* one past the last '\n' in the buffer */
    char *end;         /* end of the data in the buffer */
    int64_t line;      /* 1-based number of the line at pos */
    int64_t bytes;     /* uncompressed bytes read so far */
    int64_t file_size; /* size of a regular file, else -1 */
    int gzip;          /* 1: the file is gzip-compressed */
    int eof;
} sps_reader;

/* Open path; SPS_ERR_IO "FILE: strerror" if it cannot be opened or read. */
sps_status sps__rd_open(sps_context *ctx, const char *path, sps_reader *rd);
void sps__rd_close(sps_reader *rd);
/* Called when pos == lim: read on until a complete line starts at pos.
 * *more = 0 at the end of the input. Fails on read errors, corrupt gzip data
 * and lines over SPS_IO_MAX_LINE (at their line, after reading at most one
 * buffer of them). */
sps_status sps__rd_refill(sps_reader *rd, int *more);
/* SPS_ERR_PARSE with "FILE:LINE: reason". */
sps_status sps__rd_err(sps_reader *rd, int64_t line, const char *fmt, ...) SPS_PRINTF(3, 4);
/* The '\n' that ends the line starting at b (b in [pos, lim)). */
const char *sps__rd_eol(const sps_reader *rd, const char *b);
/* Error for the line at b..e, longer than SPS_IO_MAX_LINE. */
sps_status sps__rd_long_line(sps_reader *rd, const char *b, const char *e);
/* The line b..eol has been consumed: move to the next one (rejecting it if too long). */
static inline sps_status sps__rd_next(sps_reader *rd, const char *b, const char *eol)
{
    if (eol - b > SPS_IO_MAX_LINE) return sps__rd_long_line(rd, b, eol);
    rd->pos = (char *)eol + 1;
    rd->line++;
    return SPS_OK;
}
/* 1 if [b, e) holds a control byte other than tab and CR (a binary file). */
int sps__has_binary(const char *b, const char *e);
/* Copy the token at p (up to a blank or the end of line) into out, shortened
 * and with unprintable bytes as '?', for messages. Returns out. */
const char *sps__tok(const char *p, char *out, size_t n);

static inline int sps__is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
static inline int sps__is_sep(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static inline const char *sps__skip_blank(const char *p)
{
    while (sps__is_blank(*p)) p++;
    return p;
}

#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SPS_IO_SWAR 1
/* The number written by 8 digit values (0..9), one per byte, first digit in
 * the lowest byte: bytes pair up into 2-digit numbers, then the four pairs
 * combine in two multiplications whose high halves hold the sums. */
static inline uint64_t sps__digits8(uint64_t y)
{
    const uint64_t mask = UINT64_C(0x000000ff000000ff);
    y = y * 10 + (y >> 8); /* bytes 0, 2, 4, 6: d0d1, d2d3, d4d5, d6d7 */
    return ((y & mask) * (100 + (UINT64_C(1000000) << 32)) + ((y >> 16) & mask) * (1 + (UINT64_C(10000) << 32))) >> 32;
}
#endif

/* Unsigned decimal digits at p; returns the end (p itself if no digit).
 * Saturates far above any 32-bit index, so callers only range-check. Up to
 * 7 digits take one 8-byte load (p must have 8 readable bytes, as the
 * reader's buffer does) and no branch per digit. */
static inline const char *sps__scan_uint(const char *p, uint64_t *v)
{
#ifdef SPS_IO_SWAR
    uint64_t x;
    memcpy(&x, p, 8);
    /* Per byte y = b - '0'; a byte is not a digit when y >= 10, seen in the
     * top bit of y | (y + 0x76). Borrows and carries only reach bytes after
     * the first non-digit, which are not used. */
    uint64_t y = x - UINT64_C(0x3030303030303030);
    uint64_t stop = (y | (y + UINT64_C(0x7676767676767676))) & UINT64_C(0x8080808080808080);
    if (stop) {
        int len = __builtin_ctzll(stop) >> 3;
        *v = len ? sps__digits8(y << (64 - 8 * len)) : 0;
        return p + len;
    }
#endif
    uint64_t a = 0;
    unsigned d;
    while ((d = (unsigned)(unsigned char)*p - '0') < 10) {
        a = a < (UINT64_C(1) << 58) ? a * 10 + d : UINT64_MAX;
        p++;
    }
    *v = a;
    return p;
}

typedef enum sps_num { SPS_NUM_OK = 0, SPS_NUM_BAD = 1, SPS_NUM_RANGE = 2 } sps_num;

/* Decimal number at p: [+-] (digits [. digits] | . digits) [(e|E) [+-] digits].
 * *end is set past the longest such prefix (the caller checks that a
 * separator follows). The value is strtod's, bit for bit: a fast exact path
 * for up to 19 significant digits, strtod on the token otherwise.
 * SPS_NUM_BAD: no number at p (also nan, inf, hex); SPS_NUM_RANGE: the value
 * overflows (*x = +-inf). Values below the smallest subnormal become +-0.
 * Reads up to 8 bytes past the end of the token: they must be readable. */
sps_num sps__parse_double(const char *p, const char **end, double *x);

/* The CSR of n triplets read from path (indices already validated), built
 * in place: *ci and *v become its arrays and *ri is freed (all three are
 * NULL after success; a NULL *v means pattern, all ones). On failure the
 * arrays stay with the caller, to free. See io/assemble.c. */
sps_status sps__io_assemble(sps_context *ctx, const char *path, sps_idx nrows, sps_idx ncols, sps_symmetry sym,
                            int64_t n, sps_idx **ri, sps_idx **ci, double **v, sps_csr *out);

/* Fault in the pages of a fresh array about to be written, in one call
 * (MADV_POPULATE_WRITE, Linux 5.14+; a hint, failures ignored): a page
 * fault each costs more (about 3 us per 4 KiB page on the H100 machine). */
void sps__io_populate(void *p, size_t bytes);

/* fn(arg, i, n) for i = 0 .. n - 1, each on its own thread (i = 0 on the
 * calling thread; a share whose thread cannot start runs here after its
 * own), all finished on return. io/assemble.c. */
typedef void (*sps_io_task)(void *arg, int i, int n);
void sps__io_run(int n, sps_io_task fn, void *arg);

/* Ask for transparent huge pages on a large array (fewer page faults while
 * it is first written; a hint, failures ignored). io/reader.c. */
void sps__io_hugepages(void *p, size_t bytes);

/* ---- .spsb (io/spsb.c) ---- */
/* 1 if path names a .spsb file (by its suffix, or by its signature). */
int sps__spsb_probe(const char *path);
/* Read a .spsb file: every defect is SPS_ERR_PARSE "FILE: reason". Fills
 * src->bytes and src->nnz_stored. */
sps_status sps__spsb_read(sps_context *ctx, const char *path, sps_csr *A, sps_matrix_source *src);
/* Write A as .spsb to f (< 0 on a write error); 0 from sps__spsb_writable()
 * on a big-endian host, where the format is not written. */
int sps__spsb_emit(FILE *f, const void *A);
int sps__spsb_writable(void);

#endif /* SPS_IO_PARSE_H */
