/* SPDX-License-Identifier: MIT */
/* spsolve/io/mm.c: Matrix Market and text readers: sps_matrix_read, sps_vector_read
 *
 * One pass over the file with the block reader (io/reader.c): banner, size
 * line, then entries parsed in place into int32/double triplet arrays (on
 * worker threads, buffer by buffer, when the context allows more than one:
 * read_entries_par), then the CSR built in place from them (io/assemble.c).
 * The header is checked before anything it declares is allocated (and must
 * justify its row count), and the triplet arrays start no larger than the
 * file could fill (plain files; gzip ones grow as data arrives). The entry
 * loop only recognizes valid lines; anything else goes to bad_line(), which
 * re-reads the line slowly to say exactly what is wrong.
 *
 * `array` files: sps_vector_read reads n x 1 and 1 x n; sps_matrix_read
 * builds a dense CSR from them (every stored value kept, zeros included;
 * symmetric and skew-symmetric arrays hold the lower triangle column by
 * column, as the format defines). */
#include "parse.h"

#include <pthread.h>
#include <string.h>
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define SPS_IO_AVX2 1
#endif

enum { F_REAL, F_INTEGER, F_PATTERN };

typedef struct mm_header {
    int array;        /* 1: array (dense, column-major), 0: coordinate */
    int field;        /* F_REAL, F_INTEGER, F_PATTERN */
    sps_symmetry sym;
    int64_t rows, cols;
    int64_t nnz;      /* coordinate: entries declared; array: values stored */
} mm_header;

typedef struct triplets {
    sps_idx *ri, *ci;
    double *v;        /* NULL for pattern files */
    int64_t n, cap;
} triplets;

static int ieq(const char *a, size_t n, const char *b)
{
    if (strlen(b) != n) return 0;
    for (size_t i = 0; i < n; i++) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
        if (c != b[i]) return 0;
    }
    return 1;
}

/* The line number where the input ended (the last line of the file). */
static int64_t last_line(const sps_reader *rd) { return rd->line > 1 ? rd->line - 1 : 1; }

/* Move to the next line that is neither blank nor a comment (starting with
 * '%' or `alt` after blanks); *p is its first non-blank byte and rd->pos its
 * start. *more = 0 at the end of the input. */
static inline sps_status next_line(sps_reader *rd, char alt, const char **p, int *more)
{
    for (;;) {
        if (rd->pos == rd->lim) {
            sps_status st = sps__rd_refill(rd, more);
            if (st != SPS_OK || !*more) return st;
        }
        const char *b = rd->pos, *q = sps__skip_blank(b);
        if (*q != '\n' && *q != '%' && *q != alt) {
            *p = q;
            *more = 1;
            return SPS_OK;
        }
        sps_status st = sps__rd_next(rd, b, sps__rd_eol(rd, b));
        if (st != SPS_OK) return st;
    }
}

/* [+-]digits followed by a separator: an integer-field value. */
static int is_int_token(const char *p)
{
    if (*p == '-' || *p == '+') p++;
    const char *q = p;
    while ((unsigned)(unsigned char)*q - '0' < 10) q++;
    return q > p && sps__is_sep(*q);
}

static int is_nonfinite_word(const char *p)
{
    if (*p == '-' || *p == '+') p++;
    return ieq(p, 3, "nan") || ieq(p, 3, "inf");
}

/* ---- header -------------------------------------------------------------- */

static sps_status read_banner(sps_reader *rd, mm_header *h)
{
    int more = 1;
    sps_status st = rd->pos == rd->lim ? sps__rd_refill(rd, &more) : SPS_OK;
    if (st != SPS_OK) return st;
    if (!more) return sps__rd_err(rd, 1, "empty file: missing the %%%%MatrixMarket banner");
    const char *b = rd->pos, *e = sps__rd_eol(rd, b);
    if (sps__has_binary(b, e)) return sps__rd_err(rd, 1, "binary data (not a Matrix Market file)");
    const char *w[6];
    size_t len[6];
    int n = 0;
    for (const char *p = sps__skip_blank(b); *p != '\n'; p = sps__skip_blank(p)) {
        const char *s = p;
        while (!sps__is_sep(*p)) p++;
        if (n < 6) w[n] = s, len[n] = (size_t)(p - s);
        n++;
    }
    if (n == 0 || !ieq(w[0], len[0], "%%matrixmarket"))
        return sps__rd_err(rd, 1, "missing the banner: a Matrix Market file starts with "
                                  "'%%%%MatrixMarket matrix coordinate real general' or similar");
    if (n != 5)
        return sps__rd_err(rd, 1, "malformed banner: expected '%%%%MatrixMarket matrix FORMAT "
                                  "FIELD SYMMETRY' (5 words), found %d words", n);
    char tok[48];
    if (!ieq(w[1], len[1], "matrix"))
        return sps__rd_err(rd, 1, "object '%s' is not supported (only 'matrix')", sps__tok(w[1], tok, sizeof tok));
    if (ieq(w[2], len[2], "coordinate")) h->array = 0;
    else if (ieq(w[2], len[2], "array")) h->array = 1;
    else return sps__rd_err(rd, 1, "unknown format '%s' (coordinate or array)", sps__tok(w[2], tok, sizeof tok));
    if (ieq(w[3], len[3], "real")) h->field = F_REAL;
    else if (ieq(w[3], len[3], "integer")) h->field = F_INTEGER;
    else if (ieq(w[3], len[3], "pattern")) h->field = F_PATTERN;
    else if (ieq(w[3], len[3], "complex"))
        return sps__rd_err(rd, 1, "complex values are not supported (real, integer or pattern)");
    else return sps__rd_err(rd, 1, "unknown field '%s' (real, integer or pattern)", sps__tok(w[3], tok, sizeof tok));
    if (ieq(w[4], len[4], "general")) h->sym = SPS_GENERAL;
    else if (ieq(w[4], len[4], "symmetric")) h->sym = SPS_SYMMETRIC;
    else if (ieq(w[4], len[4], "skew-symmetric")) h->sym = SPS_SKEW_SYMMETRIC;
    else if (ieq(w[4], len[4], "hermitian"))
        return sps__rd_err(rd, 1, "hermitian matrices are not supported (general, symmetric or skew-symmetric)");
    else return sps__rd_err(rd, 1, "unknown symmetry '%s' (general, symmetric or skew-symmetric)", sps__tok(w[4], tok, sizeof tok));
    if (h->array && h->field == F_PATTERN)
        return sps__rd_err(rd, 1, "a pattern field needs the coordinate format");
    if (h->field == F_PATTERN && h->sym == SPS_SKEW_SYMMETRIC)
        return sps__rd_err(rd, 1, "a pattern file cannot be skew-symmetric (it has no values to negate)");
    return sps__rd_next(rd, b, e);
}

static sps_status read_size(sps_reader *rd, mm_header *h, int vector)
{
    static const char *const names[] = {"rows", "columns", "entries"};
    const char *p = NULL;
    int more;
    sps_status st = next_line(rd, '%', &p, &more);
    if (st != SPS_OK) return st;
    if (!more) return sps__rd_err(rd, last_line(rd), "the file ends before the size line");
    const char *b = rd->pos;
    int64_t ln = rd->line, v[3];
    int want = h->array ? 2 : 3, n = 0;
    char tok[48];
    for (; *p != '\n'; p = sps__skip_blank(p)) {
        if (n == want)
            return sps__rd_err(rd, ln, "size line: expected %d fields (%s), found more: '%s'", want,
                               h->array ? "rows columns" : "rows columns entries", sps__tok(p, tok, sizeof tok));
        uint64_t x;
        const char *q = sps__scan_uint(p, &x);
        if (q == p || !sps__is_sep(*q)) {
            uint64_t y;
            const char *r = sps__scan_uint(p + 1, &y);
            if (*p == '-' && r > p + 1 && sps__is_sep(*r))
                return sps__rd_err(rd, ln, "size line: negative number of %s (%s)", names[n], sps__tok(p, tok, sizeof tok));
            return sps__rd_err(rd, ln, "size line: number of %s '%s' is not a non-negative integer",
                               names[n], sps__tok(p, tok, sizeof tok));
        }
        if (x > (uint64_t)SPS_IDX_MAX)
            return sps__rd_err(rd, ln, "size line: %s %s beyond the 32-bit limit (%d)", sps__tok(p, tok, sizeof tok),
                               names[n], SPS_IDX_MAX);
        v[n++] = (int64_t)x;
        p = q;
    }
    if (n < want)
        return sps__rd_err(rd, ln, "size line: expected %d fields (%s), found %d", want,
                           h->array ? "rows columns" : "rows columns entries", n);
    h->rows = v[0];
    h->cols = v[1];
    if (h->sym != SPS_GENERAL && h->rows != h->cols)
        return sps__rd_err(rd, ln, "a %s matrix must be square, the size line says %lld x %lld",
                           h->sym == SPS_SYMMETRIC ? "symmetric" : "skew-symmetric", (long long)h->rows,
                           (long long)h->cols);
    if (vector && h->rows != 1 && h->cols != 1)
        return sps__rd_err(rd, ln, "a vector file must have one column (or one row); this one is %lld x %lld",
                           (long long)h->rows, (long long)h->cols);
    if (vector && h->sym != SPS_GENERAL)
        return sps__rd_err(rd, ln, "a vector file must be 'general'");
    /* Most values the declared shape can hold (rows, cols < 2^31: no overflow). */
    int64_t r = h->rows;
    int64_t cap = h->sym == SPS_GENERAL ? r * h->cols
                : h->sym == SPS_SYMMETRIC ? r * (r + 1) / 2 : r * (r - 1) / 2;
    const char *shape = h->sym == SPS_GENERAL ? "" : h->sym == SPS_SYMMETRIC ? "lower triangle of a "
                                                                              : "strict lower triangle of a ";
    if (h->array) {
        if (cap > SPS_IDX_MAX)
            return sps__rd_err(rd, ln, "a dense %lld x %lld array holds %lld values, beyond the 32-bit limit (%d)",
                               (long long)h->rows, (long long)h->cols, (long long)cap, SPS_IDX_MAX);
        h->nnz = cap;
    } else {
        h->nnz = v[2];
        if (h->nnz > cap)
            return sps__rd_err(rd, ln, "the size line declares %lld entries, more than the %s%lld x %lld matrix holds (%lld)",
                               (long long)h->nnz, shape, (long long)h->rows, (long long)h->cols, (long long)cap);
        /* Row storage must be justified by the content (a vector is
         * allocated at its length, which the caller may check first). */
        char why[256];
        if (!vector && sps__rows_unjustified(h->rows, h->cols, h->nnz, h->sym, why, sizeof why))
            return sps__rd_err(rd, ln, "%s", why);
    }
    return sps__rd_next(rd, b, sps__rd_eol(rd, b));
}

/* ---- entries -------------------------------------------------------------- */

/* Explain why the line starting at b is not a valid entry. h: the header, or
 * NULL for a text vector (any number of values per line). Always fails. */
static sps_status bad_line(sps_reader *rd, const mm_header *h, const char *b)
{
    static const char *const names[] = {"row index", "column index", "value"};
    static const char *const layout[] = {"", "value", "row column", "row column value"};
    const char *e = sps__rd_eol(rd, b);
    int64_t ln = rd->line;
    if (e - b > SPS_IO_MAX_LINE) return sps__rd_next(rd, b, e);
    if (sps__has_binary(b, e)) return sps__rd_err(rd, ln, "binary data (not a text file)");
    int want = !h ? 0 : h->array ? 1 : h->field == F_PATTERN ? 2 : 3;
    int integer = h && h->field == F_INTEGER;
    uint64_t ij[2] = {0, 0};
    char tok[48];
    int n = 0;
    for (const char *p = sps__skip_blank(b), *q; *p != '\n'; p = sps__skip_blank(q), n++) {
        int kind = want >= 2 && n < 2 ? n : 2;
        sps__tok(p, tok, sizeof tok);
        if (want && n >= want)
            return sps__rd_err(rd, ln, "extra field '%s' (expected %d: %s)", tok, want, layout[want]);
        if (kind < 2) {
            q = sps__scan_uint(p, &ij[n]);
            int64_t dim = n == 0 ? h->rows : h->cols;
            if (q == p || !sps__is_sep(*q))
                return sps__rd_err(rd, ln, "%s '%s' is not a positive integer", names[kind], tok);
            if (ij[n] == 0) return sps__rd_err(rd, ln, "%s 0: indices start at 1", names[kind]);
            if (ij[n] > (uint64_t)dim)
                return sps__rd_err(rd, ln, "%s %s is past the dimension %lld", names[kind], tok, (long long)dim);
            continue;
        }
        double v;
        sps_num r = sps__parse_double(p, &q, &v);
        if (r != SPS_NUM_BAD && !sps__is_sep(*q)) r = SPS_NUM_BAD;
        if (r == SPS_NUM_RANGE) return sps__rd_err(rd, ln, "value %s is out of the range of a double", tok);
        if (r == SPS_NUM_BAD && is_nonfinite_word(p))
            return sps__rd_err(rd, ln, "value '%s' is not finite (NaN and Inf are rejected)", tok);
        if (r == SPS_NUM_BAD) return sps__rd_err(rd, ln, "value '%s' is not a number", tok);
        if (integer && !is_int_token(p))
            return sps__rd_err(rd, ln, "value '%s' is not an integer (the field is 'integer')", tok);
    }
    if (n < want) {
        if (want == 3 && n == 2) return sps__rd_err(rd, ln, "missing value (expected 3 fields: row column value)");
        return sps__rd_err(rd, ln, "expected %d fields (%s), found %d", want, layout[want], n);
    }
    if (h && !h->array && h->sym != SPS_GENERAL) {
        unsigned long long i = ij[0], j = ij[1];
        if (h->sym == SPS_SKEW_SYMMETRIC && i == j)
            return sps__rd_err(rd, ln, "diagonal entry (%llu, %llu) in a skew-symmetric file "
                                       "(its diagonal is zero; the file is malformed)", i, j);
        if (i < j)
            return sps__rd_err(rd, ln, "entry (%llu, %llu) above the diagonal in a %s file, which stores "
                                       "only the lower triangle: the file is malformed", i, j,
                               h->sym == SPS_SYMMETRIC ? "symmetric" : "skew-symmetric");
    }
    return sps__rd_err(rd, ln, "malformed line");
}

/* Next capacity of an entry array: first what the file could hold (a plain
 * file of S bytes holds at most S / min_bytes + 1 entries), then doubling;
 * never above max. Called only while fewer than max entries are stored. */
static int64_t next_cap(const sps_reader *rd, int64_t cap, int64_t max, int min_bytes)
{
    int64_t c = cap ? 2 * cap
              : !rd->gzip && rd->file_size >= 0 ? rd->file_size / min_bytes + 1 : (int64_t)1 << 20;
    return c < max ? c : max;
}

static sps_status grow(sps_reader *rd, void *arr, size_t elt, int64_t c)
{
    void *p = sps__realloc(*(void **)arr, sps__mul_size((size_t)c, elt));
    if (!p)
        return sps__err(rd->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory for %lld entries (%.1f MB asked)", rd->path,
                        (long long)c, (double)c * (double)elt / 1e6);
    *(void **)arr = p;
    sps__io_hugepages(p, (size_t)c * elt);
    return SPS_OK;
}

/* Shortest entry line: "i j\n" (4 bytes), or "i j v" at the end of the file. */
static sps_status trip_grow(sps_reader *rd, triplets *t, int64_t max, int values)
{
    int64_t c = next_cap(rd, t->cap, max, 4);
    sps_status st = grow(rd, &t->ri, sizeof *t->ri, c);
    if (st == SPS_OK) st = grow(rd, &t->ci, sizeof *t->ci, c);
    if (st == SPS_OK && values) st = grow(rd, &t->v, sizeof *t->v, c);
    if (st == SPS_OK) t->cap = c;
    return st;
}

static void trip_free(triplets *t)
{
    sps__free(t->ri);
    sps__free(t->ci);
    sps__free(t->v);
    memset(t, 0, sizeof *t);
}

/* The entry line whose first non-blank byte is p: on success the indices
 * (0-based) and value are stored and the '\n' that ends it is returned;
 * NULL if the line is anything but a valid entry. */
static inline const char *parse_entry(const char *p, const mm_header *h, sps_idx *ri, sps_idx *ci, double *v)
{
    uint64_t i, j;
    const char *q = sps__scan_uint(p, &i);
    if (q == p || !sps__is_sep(*q)) return NULL;
    p = sps__skip_blank(q);
    q = sps__scan_uint(p, &j);
    if (q == p || !sps__is_sep(*q)) return NULL;
    p = sps__skip_blank(q);
    if (h->field != F_PATTERN) {
        if (h->field == F_INTEGER && !is_int_token(p)) return NULL;
        if (sps__parse_double(p, &q, v) != SPS_NUM_OK || !sps__is_sep(*q)) return NULL;
        p = sps__skip_blank(q);
    }
    if (*p != '\n' || i - 1 >= (uint64_t)h->rows || j - 1 >= (uint64_t)h->cols) return NULL; /* i = 0 wraps */
    if (h->sym != SPS_GENERAL && (h->sym == SPS_SYMMETRIC ? i < j : i <= j)) return NULL;
    *ri = (sps_idx)(i - 1);
    *ci = (sps_idx)(j - 1);
    return p;
}

/* Coordinate entries, one thread: exactly h->nnz of them, then only blanks
 * and comments. Also the exact diagnosis of a chunk the parallel reader
 * found wrong (started at that chunk's first line). */
static sps_status read_entries(sps_reader *rd, const mm_header *h, triplets *t)
{
    const int64_t nnz = h->nnz;
    double dummy;
    for (;;) {
        const char *p, *e;
        int more;
        sps_status st = next_line(rd, '%', &p, &more);
        if (st != SPS_OK) return st;
        if (!more) break;
        const char *b = rd->pos;
        if (t->n == nnz)
            return sps__rd_err(rd, rd->line, "more entries than the %lld the size line declares", (long long)nnz);
        if (t->n == t->cap && (st = trip_grow(rd, t, nnz, h->field != F_PATTERN)) != SPS_OK) return st;
        e = parse_entry(p, h, &t->ri[t->n], &t->ci[t->n], t->v ? &t->v[t->n] : &dummy);
        if (!e) return bad_line(rd, h, b);
        t->n++;
        if ((st = sps__rd_next(rd, b, e)) != SPS_OK) return st;
    }
    if (t->n < nnz)
        return sps__rd_err(rd, last_line(rd), "the file ends after %lld of the %lld entries the size line declares",
                           (long long)t->n, (long long)nnz);
    return SPS_OK;
}

/* ---- entries on several threads ------------------------------------------ */

/* One thread's share of a buffer: whole lines [b, e). A first phase counts
 * its lines and its entry candidates (lines whose first non-blank byte is
 * neither '\n' nor '%'); with the counts of the pieces before it, that is
 * where its entries go in the entry arrays, and the second phase parses
 * them there: no per-thread arrays, no copy. */
typedef struct piece {
    const mm_header *h;
    triplets *t;
    const char *b, *e;
    int64_t n;        /* entry candidates (count phase) */
    int64_t lines;    /* lines (count phase) */
    int64_t at;       /* its first entry's index in t */
    int go;           /* parse it (its entries fit in the declared count) */
    int64_t got;      /* entries parsed */
    const char *bad;  /* start of the first line that is not a valid entry, comment or blank */
} piece;

static inline int is_digit(char c) { return (unsigned)(unsigned char)c - '0' < 10; }

/* The line at s is an entry candidate (what parse_piece parses). */
static inline int is_candidate(const char *s)
{
    const char *q = sps__skip_blank(s);
    return *q != '\n' && *q != '%';
}

#ifdef SPS_IO_AVX2
/* count_piece's loop 32 bytes at a time (3.5x the SSE2 loop's speed on a
 * poisson3d file of 17-byte lines here); *p and *other are carried on. */
__attribute__((target("avx2"))) static int64_t count_avx2(const char **pp, const char *e, int64_t *other)
{
    const char *p = *pp;
    int64_t lines = 0;
    const __m256i nl = _mm256_set1_epi8('\n'), zero = _mm256_set1_epi8('0'), nine = _mm256_set1_epi8(9);
    for (; p + 33 <= e; p += 32) {
        unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)p), nl));
        if (!m) continue;
        lines += __builtin_popcount(m);
        __m256i d = _mm256_sub_epi8(_mm256_loadu_si256((const __m256i *)(p + 1)), zero); /* the byte after each */
        unsigned nd = m & ~(unsigned)_mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_min_epu8(d, nine), d));
        for (; nd; nd &= nd - 1) {
            const char *s = p + __builtin_ctz(nd) + 1;
            if (s < e && !is_candidate(s)) ++*other;
        }
    }
    *pp = p;
    return lines;
}
#endif

/* Lines of [b, e) (each ends with a '\n' before e) and their candidates. A
 * line that starts with a digit is one; any other (comments, blank lines,
 * indented entries: rare) is looked at. 32 bytes at a time with AVX2 where
 * the processor has it, else 16 with SSE2. */
static void count_piece(piece *pc)
{
    const char *b = pc->b, *e = pc->e, *p = b;
    int64_t lines = 0, other = 0;
    if (b < e && !is_digit(*b) && !is_candidate(b)) other++;
#ifdef SPS_IO_AVX2
    static int avx2 = -1; /* not known yet */
    int a = __atomic_load_n(&avx2, __ATOMIC_RELAXED);
    if (a < 0) __atomic_store_n(&avx2, a = __builtin_cpu_supports("avx2") ? 1 : 0, __ATOMIC_RELAXED);
    if (a) lines += count_avx2(&p, e, &other);
#endif
#if defined(__SSE2__) && defined(__GNUC__)
    const __m128i nl = _mm_set1_epi8('\n'), zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
    for (; p + 17 <= e; p += 16) {
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), nl));
        if (!m) continue;
        lines += __builtin_popcount(m);
        __m128i d = _mm_sub_epi8(_mm_loadu_si128((const __m128i *)(p + 1)), zero); /* the byte after each */
        unsigned nd = m & ~(unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, nine), d));
        for (; nd; nd &= nd - 1) {
            const char *s = p + __builtin_ctz(nd) + 1;
            if (s < e && !is_candidate(s)) other++;
        }
    }
#endif
    for (; p < e; p++)
        if (*p == '\n') {
            lines++;
            if (p + 1 < e && !is_digit(p[1]) && !is_candidate(p + 1)) other++;
        }
    pc->lines = lines;
    pc->n = lines - other;
}

/* Parse the piece into t from pc->at; stops at the first line that is not a
 * valid entry, comment or blank (or is too long). */
static void parse_piece(piece *pc)
{
    const mm_header *h = pc->h;
    const char *p = pc->b, *e = pc->e;
    sps_idx *ri = pc->t->ri + pc->at, *ci = pc->t->ci + pc->at;
    double *v = pc->t->v ? pc->t->v + pc->at : NULL, dummy;
    int64_t n = 0;
    pc->bad = NULL;
    while (p < e) {
        const char *q = sps__skip_blank(p), *eol;
        if (*q == '\n' || *q == '%') eol = memchr(q, '\n', (size_t)(e - q));
        else if (!(eol = parse_entry(q, h, &ri[n], &ci[n], v ? &v[n] : &dummy))) break;
        else n++;
        if (eol - p > SPS_IO_MAX_LINE) {
            if (*q != '\n' && *q != '%') n--;
            break;
        }
        p = eol + 1;
    }
    if (p < e) pc->bad = p;
    pc->got = n;
}

/* The workers live for the whole read. Each round has two phases, started
 * by this thread and awaited: COUNT and PARSE, each thread (this one too)
 * taking the pieces one at a time. */
enum { PH_EXIT, PH_COUNT, PH_PARSE };

struct par_state;
typedef struct worker_arg {
    struct par_state *ps;
} worker_arg;

/* Pieces per thread and buffer: the threads take the pieces of a phase one
 * at a time, so a thread slowed down (a huge page zeroed on first touch, the
 * read-ahead sharing its core) leaves its share to the others instead of
 * holding up the phase's end. */
#define SPS_IO_PIECES 8

typedef struct par_state {
    int nth;                  /* threads */
    int npc;                  /* pieces per buffer: nth * SPS_IO_PIECES */
    int nstarted;             /* workers running (this thread takes pieces too) */
    piece pc[SPS_MAX_THREADS * SPS_IO_PIECES];
    pthread_t tid[SPS_MAX_THREADS];
    worker_arg wa[SPS_MAX_THREADS];
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    int gen, phase, pending;
    int next;                 /* the phase's next piece to take (atomic) */
    char *spare;              /* the second buffer (read ahead while the first is parsed) */
} par_state;

/* Take the phase's pieces one at a time until none is left. */
static void run_phase(par_state *ps, int phase)
{
    for (;;) {
        int i = __atomic_fetch_add(&ps->next, 1, __ATOMIC_RELAXED);
        if (i >= ps->npc) return;
        if (phase == PH_COUNT) count_piece(&ps->pc[i]);
        else if (ps->pc[i].go) parse_piece(&ps->pc[i]);
    }
}

static void *worker(void *arg)
{
    par_state *ps = ((worker_arg *)arg)->ps;
    int seen = 0;
    for (;;) {
        pthread_mutex_lock(&ps->mu);
        while (ps->gen == seen) pthread_cond_wait(&ps->go, &ps->mu);
        seen = ps->gen;
        int phase = ps->phase;
        pthread_mutex_unlock(&ps->mu);
        if (phase == PH_EXIT) return NULL;
        run_phase(ps, phase);
        pthread_mutex_lock(&ps->mu);
        if (--ps->pending == 0) pthread_cond_signal(&ps->done);
        pthread_mutex_unlock(&ps->mu);
    }
}

static void start_phase(par_state *ps, int phase)
{
    pthread_mutex_lock(&ps->mu);
    ps->phase = phase;
    ps->pending = ps->nstarted;
    __atomic_store_n(&ps->next, 0, __ATOMIC_RELAXED); /* published by the mutex */
    ps->gen++;
    pthread_cond_broadcast(&ps->go);
    pthread_mutex_unlock(&ps->mu);
}

/* Take pieces along with the workers, then wait for them. */
static void finish_phase(par_state *ps, int phase)
{
    run_phase(ps, phase);
    pthread_mutex_lock(&ps->mu);
    while (ps->pending > 0) pthread_cond_wait(&ps->done, &ps->mu);
    pthread_mutex_unlock(&ps->mu);
}

static void par_free(par_state *ps)
{
    if (ps->nstarted) {
        start_phase(ps, PH_EXIT);
        for (int i = 0; i < ps->nstarted; i++) pthread_join(ps->tid[i], NULL);
    }
    pthread_mutex_destroy(&ps->mu);
    pthread_cond_destroy(&ps->go);
    pthread_cond_destroy(&ps->done);
    sps__free(ps->spare);
    sps__free(ps);
}

static sps_status par_alloc(sps_reader *rd, const mm_header *h, triplets *t, int nth, par_state **out)
{
    par_state *ps = sps__calloc(1, sizeof *ps);
    if (!ps) return sps__err(rd->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", rd->path);
    ps->nth = nth;
    ps->npc = nth * SPS_IO_PIECES;
    pthread_mutex_init(&ps->mu, NULL);
    pthread_cond_init(&ps->go, NULL);
    pthread_cond_init(&ps->done, NULL);
    if (!(ps->spare = sps__calloc(SPS_IO_BUF + 1 + SPS_IO_PAD, 1))) {
        par_free(ps);
        return sps__err(rd->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory for a second read buffer (%.1f MB asked)",
                        rd->path, (double)SPS_IO_BUF / 1e6);
    }
    for (int i = 0; i < ps->npc; i++) {
        ps->pc[i].h = h;
        ps->pc[i].t = t;
    }
    for (int i = 0; i < nth; i++) ps->wa[i].ps = ps;
    for (int i = 0; i < nth; i++) {
        if (pthread_create(&ps->tid[i], NULL, worker, &ps->wa[i]) != 0) break; /* the rest: this thread */
        ps->nstarted++;
    }
    *out = ps;
    return SPS_OK;
}

/* Split [rd->pos, rd->lim) at line ends into ps->npc pieces. */
static void split(const sps_reader *rd, par_state *ps)
{
    const char *b = rd->pos, *e = rd->lim;
    size_t share = (size_t)(e - b) / (size_t)ps->npc;
    for (int i = 0; i < ps->npc; i++) {
        const char *x = i == ps->npc - 1 ? e : b + share < e ? b + share : e;
        if (x < e && x > b) x = (const char *)memchr(x - 1, '\n', (size_t)(e - x + 1)) + 1;
        ps->pc[i].b = b;
        ps->pc[i].e = b = x;
    }
}

/* The buffer's pieces are counted, then parsed into place by the workers
 * while this thread reads (and inflates) the next buffer into the spare.
 * The first piece in file order that holds a bad line, or whose entries
 * would pass the declared count, is parsed again by read_entries from its
 * first line, which gives the exact error and line whatever the thread
 * count (the pieces before it are in place). */
static sps_status par_round(sps_reader *rd, const mm_header *h, triplets *t, par_state *ps, int *more)
{
    split(rd, ps);
    start_phase(ps, PH_COUNT);
    finish_phase(ps, PH_COUNT);
    int64_t n = t->n;
    int stop = ps->npc; /* pieces from stop on are not parsed */
    for (int i = 0; i < ps->npc; i++) {
        piece *pc = &ps->pc[i];
        pc->at = n;
        pc->go = i < stop && n + pc->n <= h->nnz;
        if (!pc->go && stop == ps->npc) stop = i;
        if (pc->go) n += pc->n;
    }
    while (t->cap < n) {
        sps_status st = trip_grow(rd, t, h->nnz, h->field != F_PATTERN);
        if (st != SPS_OK) return st;
    }
    start_phase(ps, PH_PARSE);
    /* Read ahead: the partial last line moves to the spare, which refill fills. */
    sps_reader next = *rd;
    size_t tail = (size_t)(rd->end - rd->lim);
    memcpy(ps->spare, rd->lim, tail);
    next.buf = ps->spare;
    next.pos = next.lim = ps->spare;
    next.end = ps->spare + tail;
    sps_status rst = sps__rd_refill(&next, more); /* its line is known later: see below */
    finish_phase(ps, PH_PARSE);
    int64_t line = rd->line;
    for (int i = 0; i < ps->npc; i++) {
        const piece *pc = &ps->pc[i];
        if (!pc->go || pc->bad || pc->got != pc->n) { /* diagnose from the piece's first line */
            rd->pos = (char *)pc->b;
            rd->line = line;
            t->n = pc->at;
            sps_status st = read_entries(rd, h, t);
            return st != SPS_OK ? st : sps__rd_err(rd, rd->line, "internal error: parallel parse disagrees");
        }
        line += pc->lines;
    }
    t->n = n;
    ps->spare = rd->buf;
    next.line = line;
    *rd = next;
    /* A failed read-ahead is repeated now that its line number is known:
     * zlib keeps its error, and a too-long line is still too long. */
    return rst == SPS_OK ? SPS_OK : sps__rd_refill(rd, more);
}

static sps_status read_entries_par(sps_reader *rd, const mm_header *h, triplets *t, int nth)
{
    par_state *ps = NULL;
    sps_status st = par_alloc(rd, h, t, nth, &ps);
    int more = 1;
    if (st == SPS_OK && rd->pos == rd->lim) st = sps__rd_refill(rd, &more);
    while (st == SPS_OK && more) st = par_round(rd, h, t, ps, &more);
    if (ps) par_free(ps);
    if (st == SPS_OK && t->n < h->nnz)
        return sps__rd_err(rd, last_line(rd), "the file ends after %lld of the %lld entries the size line declares",
                           (long long)t->n, (long long)h->nnz);
    return st;
}

/* Values, one per line (array: exactly `count`) or any number per line
 * (h == NULL: a text vector, '%' and '#' comments, count < 0). */
static sps_status read_values(sps_reader *rd, const mm_header *h, int64_t count, double **x, int64_t *n)
{
    const int64_t max = count >= 0 ? count : SPS_IDX_MAX;
    const int integer = h && h->field == F_INTEGER;
    int64_t k = 0, cap = 0;
    *x = NULL;
    for (;;) {
        const char *p, *q;
        int more;
        sps_status st = next_line(rd, h ? '%' : '#', &p, &more);
        if (st != SPS_OK) return st;
        if (!more) break;
        const char *b = rd->pos;
        do {
            if (k == max) {
                if (count >= 0)
                    return sps__rd_err(rd, rd->line, "more values than the %lld the size line declares", (long long)count);
                return sps__rd_err(rd, rd->line, "more than %d values (the 32-bit limit)", SPS_IDX_MAX);
            }
            if (k == cap) { /* shortest value: "1\n" */
                int64_t c = next_cap(rd, cap, max, 2);
                if ((st = grow(rd, x, sizeof **x, c)) != SPS_OK) return st;
                cap = c;
            }
            if (integer && !is_int_token(p)) return bad_line(rd, h, b);
            if (sps__parse_double(p, &q, &(*x)[k]) != SPS_NUM_OK || !sps__is_sep(*q)) return bad_line(rd, h, b);
            k++;
            p = sps__skip_blank(q);
        } while (!h && *p != '\n');
        if (*p != '\n') return bad_line(rd, h, b);
        if ((st = sps__rd_next(rd, b, p)) != SPS_OK) return st;
    }
    if (count >= 0 && k < count)
        return sps__rd_err(rd, last_line(rd), "the file ends after %lld of the %lld values the size line declares",
                           (long long)k, (long long)count);
    *n = k;
    return SPS_OK;
}

/* ---- public readers ---------------------------------------------------------- */

/* Dense array values (column-major; lower triangle for symmetric kinds) as triplets. */
static sps_status array_triplets(sps_reader *rd, const mm_header *h, triplets *t)
{
    int64_t n;
    sps_status st = read_values(rd, h, h->nnz, &t->v, &n);
    if (st != SPS_OK) return st;
    t->ri = sps__malloc(sps__mul_size((size_t)n, sizeof *t->ri));
    t->ci = sps__malloc(sps__mul_size((size_t)n, sizeof *t->ci));
    if (!t->ri || !t->ci) return sps__err(rd->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", rd->path);
    int64_t k = 0;
    int skip = h->sym == SPS_SKEW_SYMMETRIC; /* first stored row of column j: j + skip */
    for (sps_idx j = 0; j < (sps_idx)h->cols; j++)
        for (sps_idx i = h->sym == SPS_GENERAL ? 0 : j + skip; i < (sps_idx)h->rows; i++) {
            t->ri[k] = i;
            t->ci[k] = j;
            k++;
        }
    t->n = n;
    return SPS_OK;
}

static sps_status read_spsb(sps_context *ctx, const char *path, double t0, sps_matrix **A)
{
    sps_matrix_source src;
    memset(&src, 0, sizeof src);
    sps_csr C;
    sps_status st = sps__spsb_read(ctx, path, &C, &src);
    if (st != SPS_OK) return st;
    sps__strlcpy(src.name, path, sizeof src.name);
    src.read_ms = sps__now_ms() - t0;
    return sps__matrix_wrap(ctx, &C, &src, A);
}

sps_status sps_matrix_read(sps_context *ctx, const char *path, sps_matrix **A)
{
    if (!A) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_read: A is NULL");
    *A = NULL;
    if (!path) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_read: path is NULL");
    double t0 = sps__now_ms();
    if (sps__spsb_probe(path)) return read_spsb(ctx, path, t0, A);
    sps_reader rd;
    sps_status st = sps__rd_open(ctx, path, &rd);
    if (st != SPS_OK) return st;
    mm_header h;
    triplets t;
    memset(&h, 0, sizeof h);
    memset(&t, 0, sizeof t);
    st = read_banner(&rd, &h);
    if (st == SPS_OK) st = read_size(&rd, &h, 0);
    int nth = sps__threads(ctx);
    if (st == SPS_OK)
        st = h.array ? array_triplets(&rd, &h, &t) : nth > 1 ? read_entries_par(&rd, &h, &t, nth) : read_entries(&rd, &h, &t);
    sps_matrix_source src;
    memset(&src, 0, sizeof src);
    src.bytes = rd.bytes;
    src.gzip = rd.gzip;
    sps__rd_close(&rd);
    sps_csr C;
    double t1 = sps__now_ms();
    if (st == SPS_OK) st = sps__io_assemble(ctx, path, (sps_idx)h.rows, (sps_idx)h.cols, h.sym, t.n, &t.ri, &t.ci, &t.v, &C);
    trip_free(&t);
    if (st != SPS_OK) return st;
    sps__strlcpy(src.name, path, sizeof src.name);
    src.nnz_stored = h.nnz;
    src.symmetry = h.sym;
    src.pattern = h.field == F_PATTERN;
    src.integer = h.field == F_INTEGER;
    src.read_ms = sps__now_ms() - t0;
    src.assemble_ms = sps__now_ms() - t1;
    return sps__matrix_wrap(ctx, &C, &src, A);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && ieq(s + n - m, m, suffix);
}

/* A vector in a coordinate file (n x 1 or 1 x n): missing entries are 0,
 * repeated ones are summed. */
static sps_status coordinate_vector(sps_reader *rd, const mm_header *h, double **x, int64_t *n)
{
    triplets t;
    memset(&t, 0, sizeof t);
    sps_status st = read_entries(rd, h, &t);
    int64_t len = h->rows * h->cols;
    if (st == SPS_OK && !(*x = sps__calloc((size_t)len, sizeof **x)))
        st = sps__err(rd->ctx, SPS_ERR_NO_MEMORY, "%s: out of memory for %lld values (%.1f MB asked)", rd->path,
                      (long long)len, (double)len * 8e-6);
    if (st == SPS_OK) {
        const sps_idx *pos = h->cols == 1 ? t.ri : t.ci;
        for (int64_t k = 0; k < t.n; k++) (*x)[pos[k]] += t.v ? t.v[k] : 1.0;
        *n = len;
    }
    trip_free(&t);
    return st;
}

sps_status sps_vector_read(sps_context *ctx, const char *path, sps_idx expected, double **x, sps_idx *n)
{
    if (!x || !n || !path) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_vector_read: NULL argument");
    *x = NULL;
    *n = 0;
    sps_reader rd;
    sps_status st = sps__rd_open(ctx, path, &rd);
    if (st != SPS_OK) return st;
    /* Matrix Market by name, or by a banner on the first line. */
    int more = 1, mm = ends_with(path, ".mtx") || ends_with(path, ".mtx.gz");
    st = sps__rd_refill(&rd, &more);
    if (st == SPS_OK && !mm && more) {
        const char *p = sps__skip_blank(rd.pos);
        mm = rd.lim - p >= 14 && ieq(p, 14, "%%matrixmarket");
    }
    double *v = NULL;
    int64_t len = 0;
    if (st == SPS_OK && mm) {
        mm_header h;
        memset(&h, 0, sizeof h);
        st = read_banner(&rd, &h);
        if (st == SPS_OK) st = read_size(&rd, &h, 1);
        if (st == SPS_OK && expected >= 0 && h.rows * h.cols != expected) /* before allocating it */
            st = sps__err(ctx, SPS_ERR_PARSE, "%s: has %lld entries, the matrix has %d rows", path,
                          (long long)(h.rows * h.cols), expected);
        if (st == SPS_OK) st = h.array ? read_values(&rd, &h, h.nnz, &v, &len) : coordinate_vector(&rd, &h, &v, &len);
    } else if (st == SPS_OK) {
        st = read_values(&rd, NULL, -1, &v, &len);
    }
    sps__rd_close(&rd);
    if (st == SPS_OK && len == 0)
        st = sps__err(ctx, SPS_ERR_PARSE, "%s: no values (an empty vector)", path);
    if (st == SPS_OK && expected >= 0 && len != expected)
        st = sps__err(ctx, SPS_ERR_PARSE, "%s: has %lld entries, the matrix has %d rows", path, (long long)len, expected);
    if (st != SPS_OK) {
        sps__free(v);
        return st;
    }
    if (!v && !(v = sps__malloc(0))) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s: out of memory", path);
    double *shrunk = sps__realloc(v, (size_t)len * sizeof *v);
    *x = shrunk ? shrunk : v;
    *n = (sps_idx)len;
    return SPS_OK;
}
