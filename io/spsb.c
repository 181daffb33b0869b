/* SPDX-License-Identifier: MIT */
/* spsolve/io/spsb.c: the .spsb binary matrix format (doc/io.md describes it)
 *
 * A 64-byte header, then the CSR arrays as they lie in memory: row_ptr
 * (int32, rows + 1), col_idx (int32, nnz), values (float64, nnz), all
 * little-endian. Two checksums (spsb64, below): one of the header's first
 * 48 bytes, one of the arrays (of their 1 MiB blocks' checksums: read and
 * checked on the context's threads). A reader trusts nothing: sizes are checked
 * against the file's length before anything is allocated, both checksums
 * are verified, and the CSR is checked (row pointer monotone from 0 to nnz,
 * columns in range and strictly increasing in each row, values finite). */
#include "internal.h"
#include "parse.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SPSB_MAGIC "SPSB\r\n\032\n"
#define SPSB_VERSION 1u
#define SPSB_HEADER 64

/* ---- spsb64: 4 lanes of 64-bit words, multiply and rotate ----------------- */

static const uint64_t P1 = UINT64_C(0x9e3779b185ebca87), P2 = UINT64_C(0xc2b2ae3d27d4eb4f);

static inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t lane(uint64_t h, uint64_t w) { return rotl(h ^ (w * P2), 31) * P1; }

typedef struct spsb64 {
    uint64_t h[4];
    uint64_t len;
    unsigned char tail[32];
    size_t ntail;
} spsb64;

static void h_init(spsb64 *s)
{
    memset(s, 0, sizeof *s);
    for (int i = 0; i < 4; i++) s->h[i] = P1 * (uint64_t)(i + 1);
}

static void h_block(spsb64 *s, const unsigned char *p)
{
    for (int i = 0; i < 4; i++) {
        uint64_t w;
        memcpy(&w, p + 8 * i, 8);
        s->h[i] = lane(s->h[i], w);
    }
}

static void h_update(spsb64 *s, const void *data, size_t n)
{
    const unsigned char *p = data;
    s->len += n;
    if (s->ntail) {
        size_t k = 32 - s->ntail < n ? 32 - s->ntail : n;
        memcpy(s->tail + s->ntail, p, k);
        s->ntail += k;
        p += k;
        n -= k;
        if (s->ntail < 32) return;
        h_block(s, s->tail);
        s->ntail = 0;
    }
    for (; n >= 32; p += 32, n -= 32) h_block(s, p);
    memcpy(s->tail, p, n);
    s->ntail = n;
}

static uint64_t h_final(spsb64 *s)
{
    if (s->ntail) {
        memset(s->tail + s->ntail, 0, 32 - s->ntail);
        h_block(s, s->tail);
    }
    uint64_t h = s->len * P2;
    for (int i = 0; i < 4; i++) h = lane(h, s->h[i]);
    return h ^ (h >> 29);
}

static uint64_t spsb64_of(const void *p, size_t n)
{
    spsb64 s;
    h_init(&s);
    h_update(&s, p, n);
    return h_final(&s);
}

/* ---- header ------------------------------------------------------------- */

typedef struct spsb_header {
    char magic[8];
    uint32_t version, header_bytes;
    int64_t rows, cols, nnz;
    uint32_t index_bytes, value_bytes;
    uint64_t header_sum, data_sum;
} spsb_header;

static void put32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> 8 * i); }
static void put64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> 8 * i); }
static uint32_t get32(const unsigned char *p) { uint32_t v = 0; for (int i = 3; i >= 0; i--) v = v << 8 | p[i]; return v; }
static uint64_t get64(const unsigned char *p) { uint64_t v = 0; for (int i = 7; i >= 0; i--) v = v << 8 | p[i]; return v; }

static void encode(const spsb_header *h, unsigned char *b)
{
    memcpy(b, h->magic, 8);
    put32(b + 8, h->version);
    put32(b + 12, h->header_bytes);
    put64(b + 16, (uint64_t)h->rows);
    put64(b + 24, (uint64_t)h->cols);
    put64(b + 32, (uint64_t)h->nnz);
    put32(b + 40, h->index_bytes);
    put32(b + 44, h->value_bytes);
    put64(b + 48, h->header_sum);
    put64(b + 56, h->data_sum);
}

static void decode(const unsigned char *b, spsb_header *h)
{
    memcpy(h->magic, b, 8);
    h->version = get32(b + 8);
    h->header_bytes = get32(b + 12);
    h->rows = (int64_t)get64(b + 16);
    h->cols = (int64_t)get64(b + 24);
    h->nnz = (int64_t)get64(b + 32);
    h->index_bytes = get32(b + 40);
    h->value_bytes = get32(b + 44);
    h->header_sum = get64(b + 48);
    h->data_sum = get64(b + 56);
}

static int host_little_endian(void)
{
    const uint32_t one = 1;
    unsigned char c;
    memcpy(&c, &one, 1);
    return c == 1;
}

/* ---- writing ---------------------------------------------------------------- */

/* ---- the arrays as one stream of 1 MiB blocks ------------------------------- */

/* The data checksum is spsb64 of the blocks' own spsb64 values (8 bytes
 * each, little-endian), so threads can read and hash blocks independently. */
#define SPSB_BLOCK ((size_t)1 << 20)

typedef struct blocks {
    unsigned char *seg[3]; /* row_ptr, col_idx, val */
    size_t len[3];
    size_t total;
    int fd;                /* >= 0: read each block from the file first */
    uint64_t *sums;        /* one per block */
    sps_idx ncols;         /* check: columns in [0, ncols), values finite */
    int check;
} blocks;

typedef struct block_job {
    const blocks *bl;
    size_t b0, b1;         /* blocks [b0, b1) */
    int err;               /* errno of a failed read */
    int bad;               /* check: a column out of range or a value not finite */
    pthread_t tid;
} block_job;

/* Bytes [off, off + n) of the stream, piece by piece: read (fd >= 0) and hash. */
static int do_range(const blocks *bl, size_t off, size_t n, spsb64 *h, int *bad)
{
    size_t base = 0;
    for (int s = 0; s < 3 && n > 0; base += bl->len[s], s++) {
        if (off >= base + bl->len[s]) continue;
        size_t at = off - base, k = bl->len[s] - at < n ? bl->len[s] - at : n;
        if (bl->fd >= 0) sps__io_populate(bl->seg[s] + at, k);
        for (size_t done = 0; bl->fd >= 0 && done < k;) {
            ssize_t r = pread(bl->fd, bl->seg[s] + at + done, k - done, (off_t)(SPSB_HEADER + off + done));
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return r == 0 ? EIO : errno;
            done += (size_t)r;
        }
        h_update(h, bl->seg[s] + at, k);
        if (bl->check && s == 1) { /* whole indices: offsets and lengths are multiples of 4 here */
            const sps_idx *c = (const sps_idx *)bl->seg[1];
            int x = 0;
            for (size_t i = at / 4; i < (at + k) / 4; i++) x |= (c[i] < 0) | (c[i] >= bl->ncols);
            *bad |= x;
        } else if (bl->check && s == 2) { /* the values wholly inside; read_arrays checks the others */
            const double *v = (const double *)bl->seg[2];
            int x = 0;
            for (size_t i = (at + 7) / 8; i < (at + k) / 8; i++) x |= !isfinite(v[i]);
            *bad |= x;
        }
        off += k;
        n -= k;
    }
    return 0;
}

static void *block_worker(void *arg)
{
    block_job *j = arg;
    const blocks *bl = j->bl;
    for (size_t b = j->b0; b < j->b1 && !j->err; b++) {
        spsb64 h;
        h_init(&h);
        size_t off = b * SPSB_BLOCK, n = bl->total - off < SPSB_BLOCK ? bl->total - off : SPSB_BLOCK;
        j->err = do_range(bl, off, n, &h, &j->bad);
        bl->sums[b] = h_final(&h);
    }
    return NULL;
}

/* Read (bl->fd >= 0) and checksum the stream on up to nth threads. Returns
 * 0 and the checksum in *sum, an errno value, or -1 out of memory. */
static int run_blocks(blocks *bl, int nth, uint64_t *sum)
{
    size_t nb = (bl->total + SPSB_BLOCK - 1) / SPSB_BLOCK;
    block_job job[SPS_MAX_THREADS];
    if ((size_t)nth > nb) nth = nb ? (int)nb : 1;
    bl->sums = sps__malloc(sps__mul_size(nb, sizeof *bl->sums));
    if (!bl->sums) return -1;
    int err = 0;
    for (int i = 0; i < nth; i++) {
        job[i] = (block_job){bl, nb * (size_t)i / (size_t)nth, nb * (size_t)(i + 1) / (size_t)nth, 0, 0, 0};
        if (i == 0 || pthread_create(&job[i].tid, NULL, block_worker, &job[i]) != 0) job[i].tid = 0;
    }
    block_worker(&job[0]);
    for (int i = 1; i < nth; i++) {
        if (job[i].tid) pthread_join(job[i].tid, NULL);
        else block_worker(&job[i]);
    }
    for (int i = 0; i < nth && !err; i++) err = job[i].err;
    for (int i = 0; i < nth; i++) bl->check = bl->check && !job[i].bad; /* check: 1 if all passed */
    *sum = spsb64_of(bl->sums, nb * sizeof *bl->sums);
    sps__free(bl->sums);
    bl->sums = NULL;
    return err;
}

static void csr_blocks(const sps_csr *A, int fd, blocks *bl)
{
    bl->seg[0] = (unsigned char *)A->row_ptr;
    bl->seg[1] = (unsigned char *)A->col_idx;
    bl->seg[2] = (unsigned char *)A->val;
    bl->len[0] = ((size_t)A->nrows + 1) * sizeof *A->row_ptr;
    bl->len[1] = (size_t)A->nnz * sizeof *A->col_idx;
    bl->len[2] = (size_t)A->nnz * sizeof *A->val;
    bl->total = bl->len[0] + bl->len[1] + bl->len[2];
    bl->fd = fd;
    bl->sums = NULL;
    bl->ncols = A->ncols;
    bl->check = fd >= 0;
}

int sps__spsb_emit(FILE *f, const void *arg)
{
    const sps_csr *A = arg;
    spsb_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SPSB_MAGIC, 8);
    h.version = SPSB_VERSION;
    h.header_bytes = SPSB_HEADER;
    h.rows = A->nrows;
    h.cols = A->ncols;
    h.nnz = A->nnz;
    h.index_bytes = 4;
    h.value_bytes = 8;
    unsigned char b[SPSB_HEADER];
    encode(&h, b);
    h.header_sum = spsb64_of(b, 48);
    blocks bl;
    csr_blocks(A, -1, &bl);
    int e = run_blocks(&bl, sps__threads(NULL), &h.data_sum);
    if (e) {
        errno = e > 0 ? e : ENOMEM;
        return -1;
    }
    encode(&h, b);
    if (fwrite(b, 1, sizeof b, f) != sizeof b) return -1;
    size_t n = (size_t)A->nrows + 1, z = (size_t)A->nnz;
    if (fwrite(A->row_ptr, sizeof *A->row_ptr, n, f) != n) return -1;
    if (z && fwrite(A->col_idx, sizeof *A->col_idx, z, f) != z) return -1;
    if (z && fwrite(A->val, sizeof *A->val, z, f) != z) return -1;
    return 0;
}

int sps__spsb_writable(void) { return host_little_endian(); }

/* ---- reading ---------------------------------------------------------------- */

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int sps__spsb_probe(const char *path)
{
    if (has_suffix(path, ".spsb")) return 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char m[8];
    int yes = read(fd, m, 8) == 8 && memcmp(m, SPSB_MAGIC, 8) == 0;
    close(fd);
    return yes;
}

static sps_status bad(sps_context *ctx, const char *path, const char *fmt, ...) SPS_PRINTF(3, 4);
static sps_status bad(sps_context *ctx, const char *path, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return sps__err(ctx, SPS_ERR_PARSE, "%s: %s", path, msg);
}

/* The header's claims, checked against each other and the file's length. */
static sps_status check_header(sps_context *ctx, const char *path, const unsigned char *b, int64_t size,
                               spsb_header *h)
{
    decode(b, h);
    if (memcmp(h->magic, SPSB_MAGIC, 8) != 0) {
        int text = memcmp(b, "%%Matrix", 8) == 0 || memcmp(b, "%%matrix", 8) == 0;
        return bad(ctx, path, "not a .spsb file (no SPSB signature%s)",
                   text ? "; it is Matrix Market text: name it .mtx" : b[0] == 0x1f && b[1] == 0x8b ? "; it is gzip data" : "");
    }
    if (h->version != SPSB_VERSION)
        return bad(ctx, path, ".spsb version %u is not supported (this library reads version %u)", h->version, SPSB_VERSION);
    if (spsb64_of(b, 48) != h->header_sum) return bad(ctx, path, "header checksum mismatch: the header is corrupt");
    if (h->header_bytes != SPSB_HEADER || h->index_bytes != 4 || h->value_bytes != 8)
        return bad(ctx, path, "unsupported layout (header %u bytes, indices %u bytes, values %u bytes; expected 64, 4, 8)",
                   h->header_bytes, h->index_bytes, h->value_bytes);
    if (h->rows < 0 || h->cols < 0 || h->nnz < 0 || h->rows > SPS_IDX_MAX || h->cols > SPS_IDX_MAX || h->nnz > SPS_IDX_MAX)
        return bad(ctx, path, "sizes %lld x %lld with %lld entries: negative or beyond the 32-bit limit (%d)",
                   (long long)h->rows, (long long)h->cols, (long long)h->nnz, SPS_IDX_MAX);
    int64_t want = SPSB_HEADER + 4 * (h->rows + 1) + 12 * h->nnz;
    if (size != want)
        return bad(ctx, path, "%s: the file has %lld bytes, its header (%lld x %lld, %lld entries) needs %lld",
                   size < want ? "truncated" : "trailing data", (long long)size, (long long)h->rows, (long long)h->cols,
                   (long long)h->nnz, (long long)want);
    return SPS_OK;
}

static int read_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t k = read(fd, c, n > ((size_t)1 << 30) ? (size_t)1 << 30 : n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return k == 0 ? (errno = EIO, -1) : -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

/* The CSR's rules on rows [r0, r1) shared out to the threads: row pointer
 * from 0, non-decreasing, ending at nnz; columns strictly increasing in
 * each row (their range and the values' finiteness are checked block by
 * block as they are read). Only says yes or no: a no is explained by the
 * one-thread checks, which name the first defect. */
typedef struct csr_job {
    const sps_csr *A;
    int ok[SPS_MAX_THREADS];
} csr_job;

static void check_task(void *arg, int i, int nth)
{
    csr_job *J = arg;
    const sps_csr *A = J->A;
    sps_idx r0 = (sps_idx)((int64_t)A->nrows * i / nth), r1 = (sps_idx)((int64_t)A->nrows * (i + 1) / nth);
    const sps_idx *rp = A->row_ptr, *ci = A->col_idx;
    int ok = (i > 0 || rp[0] == 0) && (i < nth - 1 || rp[A->nrows] == A->nnz);
    for (sps_idx r = r0; r < r1 && ok; r++) {
        sps_idx b = rp[r], e = rp[r + 1];
        if (b < 0 || e < b || e > A->nnz) {
            ok = 0;
            break;
        }
        int bad = 0;
        for (sps_idx p = b + 1; p < e; p++) bad |= ci[p] <= ci[p - 1];
        ok = !bad;
    }
    J->ok[i] = ok;
}

/* The arrays, their checksum and the CSR's own rules. */
static sps_status read_arrays(sps_context *ctx, const char *path, int fd, const spsb_header *h, sps_csr *A)
{
    sps_status st = sps__csr_alloc(ctx, A, (sps_idx)h->rows, (sps_idx)h->cols, (sps_idx)h->nnz);
    if (st != SPS_OK) {
        sps__err_prefix(ctx, path);
        return st;
    }
    blocks bl;
    csr_blocks(A, fd, &bl);
    for (int i = 0; i < 3; i++) sps__io_hugepages(bl.seg[i], bl.len[i]);
    uint64_t sum;
    int e = run_blocks(&bl, sps__threads(ctx), &sum);
    if (e < 0) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", path);
    if (e > 0) return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(e));
    if (sum != h->data_sum) return bad(ctx, path, "checksum mismatch: the data is corrupt");
    int ok = bl.check;
    for (size_t b = SPSB_BLOCK; ok && b < bl.total; b += SPSB_BLOCK) { /* values cut by a block's end */
        size_t vb = bl.len[0] + bl.len[1];
        if (b > vb && (b - vb) % 8) ok = isfinite(A->val[(b - vb) / 8]);
    }
    int nth = sps__threads(ctx);
    if ((int64_t)nth * 65536 > (int64_t)A->nnz + A->nrows) nth = (int)(((int64_t)A->nnz + A->nrows) / 65536) + 1;
    csr_job *J = sps__malloc(sizeof *J);
    if (!J) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", path);
    J->A = A;
    if (ok) sps__io_run(nth, check_task, J);
    for (int i = 0; ok && i < nth; i++) ok &= J->ok[i];
    sps__free(J);
    if (ok) return SPS_OK;
    if (sps__csr_check(ctx, A) != SPS_OK) {
        char why[512];
        snprintf(why, sizeof why, "%s", sps_last_error(ctx));
        return bad(ctx, path, "invalid CSR: %s", why);
    }
    for (sps_idx k = 0; k < A->nnz; k++)
        if (!isfinite(A->val[k])) return bad(ctx, path, "entry %d is %g (NaN and Inf are rejected)", k, A->val[k]);
    return SPS_OK;
}

sps_status sps__spsb_read(sps_context *ctx, const char *path, sps_csr *A, sps_matrix_source *src)
{
    memset(A, 0, sizeof *A);
    if (!host_little_endian()) return sps__err(ctx, SPS_ERR_UNSUPPORTED, "%s: .spsb needs a little-endian host", path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(errno));
    struct stat sb;
    unsigned char b[SPSB_HEADER] = {0};
    spsb_header h;
    sps_status st = SPS_OK;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))
        st = sps__err(ctx, SPS_ERR_IO, "%s: %s", path, fstat(fd, &sb) ? strerror(errno) : "not a regular file");
    else if (read_all(fd, b, sb.st_size < SPSB_HEADER ? (size_t)sb.st_size : sizeof b))
        st = sps__err(ctx, SPS_ERR_IO, "%s: %s", path, strerror(errno));
    else if (sb.st_size < SPSB_HEADER && (sb.st_size < 8 || memcmp(b, SPSB_MAGIC, 8) == 0))
        st = bad(ctx, path, "truncated: %lld bytes, the .spsb header alone is %d", (long long)sb.st_size, SPSB_HEADER);
    else if (sb.st_size < SPSB_HEADER)
        st = check_header(ctx, path, b, (int64_t)sb.st_size, &h); /* says what the file is instead */
    else if ((st = check_header(ctx, path, b, (int64_t)sb.st_size, &h)) == SPS_OK)
        st = read_arrays(ctx, path, fd, &h, A);
    close(fd);
    if (st != SPS_OK) {
        sps__csr_free(A);
        return st;
    }
    src->bytes = (int64_t)sb.st_size;
    src->nnz_stored = h.nnz;
    return SPS_OK;
}
