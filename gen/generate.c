/* SPDX-License-Identifier: MIT */
/* spsolve/gen/generate.c: deterministic test matrices built directly as CSR.
 *
 * Specs (exact definitions in doc/features.md):
 *   poisson2d:N               5-point Laplacian, N*N rows (SPD)
 *   poisson3d:N               7-point Laplacian, N^3 rows (SPD)
 *   poisson3d27:N             27-point Laplacian, N^3 rows (SPD)
 *   convdiff2d:N,PECLET       upwind convection-diffusion, N*N rows (M-matrix)
 *   banded:N,W,SCATTER,SEED   W broken diagonals + scattered points (DRM's class)
 *   powerlaw:N,AVGDEG,SEED    power-law row lengths, random columns
 *   poisson3d-jump:N,CONTRAST 7-point, coefficients 1 or CONTRAST per random cube (SPD)
 *   aniso3d:N,EPS             7-point -u_xx - u_yy - EPS u_zz (SPD)
 *   elasticity3d:N            trilinear hexahedra, 3 unknowns a node, one face clamped (SPD)
 * Random choices come from splitmix64 (Steele, Lea, Flood 2014), whose output
 * depends only on the seed and the call order, so every machine builds the
 * same matrix bit for bit. Everything is built row by row into exactly sized
 * arrays (a counting pass first), without a triplet detour. */
#include "core/internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- PRNG -------------------------------------------------------------- */

static uint64_t sm64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Independent stream number `tag` of a seed. */
static uint64_t stream(uint64_t seed, uint64_t tag)
{
    uint64_t s = seed ^ (tag * 0xd1b54a32d192ed03ull);
    return sm64(&s);
}

/* Uniform in [0, n) (modulo bias < n / 2^64: irrelevant here). */
static uint64_t below(uint64_t *s, uint64_t n) { return sm64(s) % n; }

/* Uniform in (0, 1]. */
static double unit(uint64_t *s) { return (double)((sm64(s) >> 11) + 1) * 0x1.0p-53; }

/* An off-diagonal value: +-(0.1 + 0.9 u), never 0. */
static double offval(uint64_t *s)
{
    uint64_t z = sm64(s);
    double m = 0.1 + 0.9 * (double)(z >> 11) * 0x1.0p-53;
    return (z & 1) ? -m : m;
}

/* ---- spec parsing ------------------------------------------------------ */

typedef struct gen {
    sps_context *ctx;
    const char *spec; /* the whole spec, for messages */
    const char *form; /* expected form, e.g. "banded:N,W,SCATTER,SEED" */
} gen;

static sps_status bad(const gen *g, const char *fmt, ...) SPS_PRINTF(2, 3);
static sps_status bad(const gen *g, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sps__err(g->ctx, SPS_ERR_INVALID_ARG, "generator spec '%s': %s (expected %s)",
                    g->spec, what, g->form);
}

/* Whole-field integer in [lo, hi]. */
static sps_status get_int(const gen *g, const char *f, const char *name, int64_t lo, int64_t hi,
                          int64_t *out)
{
    char *end;
    if (!(isdigit((unsigned char)f[0]) || ((f[0] == '-' || f[0] == '+') && isdigit((unsigned char)f[1]))))
        return bad(g, "%s = '%s' is not an integer", name, f);
    errno = 0;
    long long v = strtoll(f, &end, 10);
    if (*end) return bad(g, "%s = '%s' is not an integer", name, f);
    if (errno == ERANGE || v < lo || v > hi)
        return bad(g, "%s = %s is out of range [%lld, %lld]", name, f, (long long)lo, (long long)hi);
    *out = v;
    return SPS_OK;
}

static sps_status get_seed(const gen *g, const char *f, uint64_t *out)
{
    char *end;
    if (!isdigit((unsigned char)f[0])) return bad(g, "SEED = '%s' is not a non-negative integer", f);
    errno = 0;
    unsigned long long v = strtoull(f, &end, 10);
    if (*end) return bad(g, "SEED = '%s' is not a non-negative integer", f);
    if (errno == ERANGE) return bad(g, "SEED = %s does not fit 64 bits", f);
    *out = v;
    return SPS_OK;
}

/* Whole-field finite real number. */
static sps_status get_real(const gen *g, const char *f, const char *name, double *out)
{
    char *end;
    if (!f[0] || isspace((unsigned char)f[0])) return bad(g, "%s = '%s' is not a number", name, f);
    errno = 0;
    double v = strtod(f, &end);
    if (*end || !isfinite(v)) return bad(g, "%s = '%s' is not a finite number", name, f);
    *out = v;
    return SPS_OK;
}

/* "too big" message shared by every generator. */
static sps_status too_big(const gen *g, int64_t rows, int64_t nnz)
{
    return bad(g, "%lld rows and %lld entries exceed the 32-bit index limit %d", (long long)rows,
               (long long)nnz, SPS_IDX_MAX);
}

/* ---- structured-grid stencils ------------------------------------------ */

/* One stencil point: grid offsets and value. Points must be listed in
 * increasing (dz, dy, dx) order, so columns come out sorted. */
typedef struct pt {
    int dx, dy, dz;
    double v;
} pt;

/* Entries of the stencil on an nx x ny x nz grid: each point contributes the
 * grid points whose neighbour lies inside, prod_d (n_d - |off_d|). */
static int64_t stencil_nnz(const int64_t n[3], const pt *s, int np)
{
    int64_t total = 0;
    for (int k = 0; k < np; k++) {
        int64_t c = 1;
        int64_t o[3] = {abs(s[k].dx), abs(s[k].dy), abs(s[k].dz)};
        for (int d = 0; d < 3; d++) c *= n[d] > o[d] ? n[d] - o[d] : 0;
        total += c;
    }
    return total;
}

static sps_status build_stencil(const gen *g, int64_t N, int dims, const pt *s, int np,
                                sps_csr *out)
{
    int64_t n[3] = {N, dims >= 2 ? N : 1, dims >= 3 ? N : 1};
    /* N <= SPS_IDX_MAX (the caller checked): N^2 fits int64, N^3 may not. */
    int64_t rows = n[0] * n[1] <= SPS_IDX_MAX || n[2] < 2097152 ? n[0] * n[1] * n[2] : INT64_MAX;
    int64_t nnz = rows <= SPS_IDX_MAX ? stencil_nnz(n, s, np) : INT64_MAX;
    if (rows > SPS_IDX_MAX || nnz > SPS_IDX_MAX) {
        /* Name the largest N that fits: nnz grows with N, so bisect. */
        int64_t lo = 1, hi = N;
        while (lo < hi) {
            int64_t mid = lo + (hi - lo + 1) / 2;
            int64_t m[3] = {mid, dims >= 2 ? mid : 1, dims >= 3 ? mid : 1};
            int ok = m[0] * m[1] <= SPS_IDX_MAX && m[0] * m[1] * m[2] <= SPS_IDX_MAX &&
                     stencil_nnz(m, s, np) <= SPS_IDX_MAX;
            if (ok) lo = mid; else hi = mid - 1;
        }
        if (rows == INT64_MAX)
            return bad(g, "N^3 rows exceed the 32-bit index limit %d (largest N is %lld)",
                       SPS_IDX_MAX, (long long)lo);
        if (nnz == INT64_MAX)
            return bad(g, "%lld rows exceed the 32-bit index limit %d (largest N is %lld)",
                       (long long)rows, SPS_IDX_MAX, (long long)lo);
        return bad(g, "%lld rows and %lld entries exceed the 32-bit index limit %d (largest N is %lld)",
                   (long long)rows, (long long)nnz, SPS_IDX_MAX, (long long)lo);
    }
    sps_status st = sps__csr_alloc(g->ctx, out, (sps_idx)rows, (sps_idx)rows, (sps_idx)nnz);
    if (st != SPS_OK) return st;
    sps_idx p = 0, r = 0;
    out->row_ptr[0] = 0;
    for (int64_t z = 0; z < n[2]; z++)
        for (int64_t y = 0; y < n[1]; y++)
            for (int64_t x = 0; x < n[0]; x++, r++) {
                for (int k = 0; k < np; k++) {
                    int64_t xx = x + s[k].dx, yy = y + s[k].dy, zz = z + s[k].dz;
                    if (xx < 0 || xx >= n[0] || yy < 0 || yy >= n[1] || zz < 0 || zz >= n[2])
                        continue;
                    out->col_idx[p] = (sps_idx)((zz * n[1] + yy) * n[0] + xx);
                    out->val[p] = s[k].v;
                    p++;
                }
                out->row_ptr[r + 1] = p;
            }
    return SPS_OK;
}

static sps_status gen_poisson2d(const gen *g, int64_t N, sps_csr *out)
{
    const pt s[] = {{0, -1, 0, -1}, {-1, 0, 0, -1}, {0, 0, 0, 4}, {1, 0, 0, -1}, {0, 1, 0, -1}};
    return build_stencil(g, N, 2, s, 5, out);
}

static sps_status gen_poisson3d(const gen *g, int64_t N, sps_csr *out)
{
    const pt s[] = {{0, 0, -1, -1}, {0, -1, 0, -1}, {-1, 0, 0, -1}, {0, 0, 0, 6},
                    {1, 0, 0, -1},  {0, 1, 0, -1},  {0, 0, 1, -1}};
    return build_stencil(g, N, 3, s, 7, out);
}

static sps_status gen_poisson3d27(const gen *g, int64_t N, sps_csr *out)
{
    pt s[27];
    int k = 0;
    for (int dz = -1; dz <= 1; dz++)
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++, k++) {
                s[k].dx = dx; s[k].dy = dy; s[k].dz = dz;
                s[k].v = (dx || dy || dz) ? -1.0 : 26.0;
            }
    return build_stencil(g, N, 3, s, 27, out);
}

/* -Lap u + PECLET (u_x + u_y) on (0,1)^2, Dirichlet, h = 1/(N+1), scaled by
 * h^2; first-order upwind (backward) differences for the convection, whose
 * coefficient c = PECLET h adds to the west/south couplings and the diagonal. */
static sps_status gen_convdiff2d(const gen *g, int64_t N, double pe, sps_csr *out)
{
    double c = pe / (double)(N + 1);
    const pt s[] = {{0, -1, 0, -1 - c}, {-1, 0, 0, -1 - c}, {0, 0, 0, 4 + 2 * c},
                    {1, 0, 0, -1},      {0, 1, 0, -1}};
    return build_stencil(g, N, 2, s, 5, out);
}

/* ---- banded: broken diagonals and scattered points --------------------- */

/* Run and gap lengths along an off-diagonal (rows): documented in doc/features.md. */
#define RUN_MIN 256
#define RUN_MAX 4096
#define GAP_MIN 1
#define GAP_MAX 256

typedef struct diag_walk {
    sps_idx d;       /* offset col - row */
    int on;          /* 1 inside a run */
    int64_t left;    /* rows left in the current run or gap */
    uint64_t rng;
} diag_walk;

static void walk_reset(diag_walk *w, uint64_t seed)
{
    w->rng = stream(seed, 1000 + (uint64_t)(int64_t)w->d);
    w->on = 1;
    w->left = 1 + (int64_t)below(&w->rng, RUN_MAX);
}

/* Is the entry of this diagonal in the next valid row present? */
static int walk_step(diag_walk *w)
{
    if (w->d == 0) return 1;
    if (w->left == 0) {
        w->on = !w->on;
        w->left = w->on ? RUN_MIN + (int64_t)below(&w->rng, RUN_MAX - RUN_MIN + 1)
                        : GAP_MIN + (int64_t)below(&w->rng, GAP_MAX - GAP_MIN + 1);
    }
    w->left--;
    return w->on;
}

typedef struct cv {
    sps_idx c;
    double v;
} cv;

static int cmp_cv(const void *a, const void *b)
{
    sps_idx x = ((const cv *)a)->c, y = ((const cv *)b)->c;
    return (x > y) - (x < y);
}

static int cmp_idx(const void *a, const void *b)
{
    sps_idx x = *(const sps_idx *)a, y = *(const sps_idx *)b;
    return (x > y) - (x < y);
}

static sps_status gen_banded(const gen *g, int64_t N, int64_t W, double scatter, uint64_t seed,
                             sps_csr *out)
{
    sps_context *ctx = g->ctx;
    sps_status st = SPS_OK;
    int64_t B = N - 1 < 16 * W ? N - 1 : 16 * W; /* half-bandwidth of the offsets */
    diag_walk *walk = sps__calloc((size_t)W, sizeof *walk);
    sps_idx *cand = sps__malloc(sps__mul_size((size_t)(2 * B + 1), sizeof *cand));
    sps_idx *cnt = sps__calloc((size_t)N + 1, sizeof *cnt);
    sps_idx *scnt = NULL;
    cv *sc = NULL;
    memset(out, 0, sizeof *out);
    if (!walk || !cand || !cnt) goto oom;

    /* Offsets: 0 plus W-1 distinct ones drawn from [-B, B] \ {0} by a partial
     * Fisher-Yates shuffle, then sorted so each row's columns come out sorted. */
    uint64_t rs = stream(seed, 1);
    int64_t nc = 0;
    for (int64_t d = -B; d <= B; d++)
        if (d) cand[nc++] = (sps_idx)d;
    for (int64_t k = 0; k < W - 1; k++) {
        int64_t j = k + (int64_t)below(&rs, (uint64_t)(nc - k));
        sps_idx t = cand[k]; cand[k] = cand[j]; cand[j] = t;
    }
    cand[W - 1] = 0;
    qsort(cand, (size_t)W, sizeof *cand, cmp_idx);
    for (int64_t k = 0; k < W; k++) walk[k].d = cand[k];
    /* cand is reused below as a membership table over offsets [-B, B]. */
    memset(cand, 0, (size_t)(2 * B + 1) * sizeof *cand);
    for (int64_t k = 0; k < W; k++) cand[walk[k].d + B] = 1;

    /* Pass 1: diagonal entries per row. */
    int64_t D = 0;
    for (int64_t k = 0; k < W; k++) walk_reset(&walk[k], seed);
    for (int64_t r = 0; r < N; r++)
        for (int64_t k = 0; k < W; k++) {
            int64_t c = r + walk[k].d;
            if (c < 0 || c >= N) continue;
            if (walk_step(&walk[k])) { cnt[r]++; D++; }
        }

    /* Scattered points: S = SCATTER * N (SCATTER points per row on average),
     * at uniform positions off the chosen diagonals; bucketed by row, sorted,
     * duplicates dropped. */
    double Sd = scatter * (double)N;
    if ((double)D + Sd > (double)SPS_IDX_MAX) {
        st = too_big(g, N, D + (int64_t)Sd);
        goto done;
    }
    /* With every offset taken (W = 2N - 1) there is no room for them. */
    int64_t S = W == 2 * N - 1 ? 0 : (int64_t)llround(Sd);
    scnt = sps__calloc((size_t)N + 2, sizeof *scnt);
    sc = sps__malloc(sps__mul_size((size_t)S, sizeof *sc));
    sps_idx *srow = sps__malloc(sps__mul_size((size_t)S, sizeof *srow));
    cv *tmp = sps__malloc(sps__mul_size((size_t)S, sizeof *tmp));
    if (!scnt || !sc || !srow || !tmp) {
        sps__free(srow); sps__free(tmp);
        goto oom;
    }
    uint64_t ss = stream(seed, 2);
    for (int64_t k = 0; k < S; k++) {
        int64_t r, c;
        do {
            r = (int64_t)below(&ss, (uint64_t)N);
            c = (int64_t)below(&ss, (uint64_t)N);
        } while (c - r >= -B && c - r <= B && cand[c - r + B]);
        srow[k] = (sps_idx)r;
        tmp[k].c = (sps_idx)c;
        tmp[k].v = offval(&ss);
        scnt[r + 2]++;
    }
    for (int64_t r = 0; r < N; r++) scnt[r + 2] += scnt[r + 1];
    for (int64_t k = 0; k < S; k++) sc[scnt[srow[k] + 1]++] = tmp[k];
    sps__free(srow);
    sps__free(tmp);
    /* now scnt[r] .. scnt[r+1] is row r's slice of sc */
    int64_t total = 0;
    for (int64_t r = 0; r < N; r++) {
        cv *a = sc + scnt[r];
        sps_idx k = scnt[r + 1] - scnt[r], u = 0;
        if (k > 1) qsort(a, (size_t)k, sizeof *a, cmp_cv);
        for (sps_idx i = 0; i < k; i++)
            if (u == 0 || a[i].c != a[u - 1].c) a[u++] = a[i];
        for (sps_idx i = u; i < k; i++) a[i].c = -1; /* dropped duplicates */
        cnt[r] += u;
        total += cnt[r];
    }
    if (total > SPS_IDX_MAX) {
        st = too_big(g, N, total);
        goto done;
    }
    st = sps__csr_alloc(ctx, out, (sps_idx)N, (sps_idx)N, (sps_idx)total);
    if (st != SPS_OK) goto done;

    /* Pass 2: the same walks again, merged with the row's scattered points. */
    for (int64_t k = 0; k < W; k++) walk_reset(&walk[k], seed);
    uint64_t vs = stream(seed, 3);
    sps_idx p = 0;
    out->row_ptr[0] = 0;
    for (int64_t r = 0; r < N; r++) {
        const cv *a = sc + scnt[r];
        sps_idx na = scnt[r + 1] - scnt[r], ia = 0, dpos = -1;
        double sum = 0.0;
        for (int64_t k = 0; k <= W; k++) {
            int64_t c = -1;
            if (k < W) {
                c = r + walk[k].d;
                if (c < 0 || c >= N || !walk_step(&walk[k])) continue;
            }
            /* scattered points left of c (or all the rest after the last diagonal) */
            for (; ia < na && (k == W || a[ia].c < c); ia++) {
                if (a[ia].c < 0) continue;
                out->col_idx[p] = a[ia].c;
                out->val[p] = a[ia].v;
                sum += fabs(a[ia].v);
                p++;
            }
            if (k == W) break;
            out->col_idx[p] = (sps_idx)c;
            if (c == r) {
                dpos = p;
            } else {
                out->val[p] = offval(&vs);
                sum += fabs(out->val[p]);
            }
            p++;
        }
        out->val[dpos] = 1.0 + sum;
        out->row_ptr[r + 1] = p;
    }
    goto done;
oom:
    st = sps__err(ctx, SPS_ERR_NO_MEMORY, "generator spec '%s': out of memory", g->spec);
done:
    if (st != SPS_OK) sps__csr_free(out);
    sps__free(walk);
    sps__free(cand);
    sps__free(cnt);
    sps__free(scnt);
    sps__free(sc);
    return st;
}

/* ---- powerlaw ---------------------------------------------------------- */

/* Row i gets k_i off-diagonal entries, k_i proportional to a Pareto(alpha = 2)
 * weight w_i = 1/sqrt(u_i) (degree tail P(k) ~ k^-3, as in preferential-
 * attachment graphs), rounded by cumulative sums so that sum k_i is exactly
 * T = round(N (AVGDEG - 1)), then capped at N - 1. */
static sps_status gen_powerlaw(const gen *g, int64_t N, double avg, uint64_t seed, sps_csr *out)
{
    sps_context *ctx = g->ctx;
    memset(out, 0, sizeof *out);
    double T = (double)llround((double)N * (avg - 1.0));
    if ((double)N + T > (double)SPS_IDX_MAX) return too_big(g, N, N + (int64_t)T);
    sps_idx *rp = sps__malloc(sps__mul_size((size_t)N + 1, sizeof *rp));
    sps_idx *stamp = sps__calloc((size_t)N, sizeof *stamp);
    if (!rp || !stamp) {
        sps__free(rp); sps__free(stamp);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "generator spec '%s': out of memory", g->spec);
    }
    uint64_t ws = stream(seed, 1);
    double wsum = 0.0;
    for (int64_t i = 0; i < N; i++) wsum += 1.0 / sqrt(unit(&ws));
    ws = stream(seed, 1);
    double pre = 0.0;
    int64_t cprev = 0;
    rp[0] = 0;
    for (int64_t i = 0; i < N; i++) {
        pre += 1.0 / sqrt(unit(&ws));
        int64_t c = i == N - 1 ? (int64_t)T : (int64_t)floor(T * pre / wsum);
        if (c < cprev) c = cprev;
        if (c > (int64_t)T) c = (int64_t)T;
        int64_t k = c - cprev;
        cprev = c;
        if (k > N - 1) k = N - 1;
        rp[i + 1] = (sps_idx)(rp[i] + 1 + k); /* fits: total <= N + T checked above */
    }
    sps_csr A;
    memset(&A, 0, sizeof A);
    sps_status st = sps__csr_alloc(ctx, &A, (sps_idx)N, (sps_idx)N, rp[N]);
    if (st != SPS_OK) {
        sps__free(rp); sps__free(stamp);
        return st;
    }
    sps__free(A.row_ptr);
    A.row_ptr = rp;
    uint64_t cs = stream(seed, 2);
    for (int64_t i = 0; i < N; i++) {
        sps_idx *col = A.col_idx + rp[i];
        double *val = A.val + rp[i];
        int64_t k = rp[i + 1] - rp[i] - 1;
        if (2 * k <= N - 1) {
            /* few columns: rejection with a per-row stamp, then sort */
            for (int64_t j = 0; j < k; j++) {
                sps_idx c;
                do c = (sps_idx)below(&cs, (uint64_t)N);
                while (c == i || stamp[c] == i + 1);
                stamp[c] = (sps_idx)(i + 1);
                col[j] = c;
            }
            qsort(col, (size_t)k, sizeof *col, cmp_idx);
        } else {
            /* many: selection sampling (Knuth's Algorithm S), already sorted */
            int64_t need = k, left = N - 1, j = 0;
            for (int64_t c = 0; c < N && need > 0; c++) {
                if (c == i) continue;
                if ((double)below(&cs, (uint64_t)left) < (double)need) {
                    col[j++] = (sps_idx)c;
                    need--;
                }
                left--;
            }
        }
        /* insert the diagonal in order, fill the values */
        int64_t pos = k;
        while (pos > 0 && col[pos - 1] > i) {
            col[pos] = col[pos - 1];
            pos--;
        }
        col[pos] = (sps_idx)i;
        double sum = 0.0;
        for (int64_t j = 0; j <= k; j++) {
            if (j == pos) continue;
            val[j] = offval(&cs);
            sum += fabs(val[j]);
        }
        val[pos] = 1.0 + sum;
    }
    sps__free(stamp);
    *out = A;
    return SPS_OK;
}

/* ---- AMG's problems: jumping coefficients, anisotropy, elasticity ------- */

/* -div(k grad u) on an N^3 cell grid, finite volumes, Dirichlet outside:
 * face coefficient the harmonic mean of its cells' k (a boundary face: the
 * cell's own k). k is 1 or CONTRAST per cube of side ceil(N / 8), each cube
 * a coin toss of a fixed splitmix64 stream: SPD, deterministic. */
static double jump_k(const double *kc, int64_t nb, int64_t side, int64_t x, int64_t y, int64_t z)
{
    return kc[((z / side) * nb + y / side) * nb + x / side];
}

static sps_status jump_cubes(const gen *g, int64_t N, double contrast, double **kc, int64_t *nb,
                             int64_t *side)
{
    *side = (N + 7) / 8;
    *nb = (N + *side - 1) / *side;
    *kc = sps__malloc((size_t)(*nb * *nb * *nb) * sizeof **kc);
    if (!*kc) return sps__err(g->ctx, SPS_ERR_NO_MEMORY, "generator: out of memory");
    uint64_t s = stream(20261123, 11);
    for (int64_t c = 0; c < *nb * *nb * *nb; c++) (*kc)[c] = (sm64(&s) >> 63) ? contrast : 1.0;
    return SPS_OK;
}

static sps_status gen_poisson3d_jump(const gen *g, int64_t N, double contrast, sps_csr *out)
{
    const pt s[] = {{0, 0, -1, -1}, {0, -1, 0, -1}, {-1, 0, 0, -1}, {0, 0, 0, 6},
                    {1, 0, 0, -1},  {0, 1, 0, -1},  {0, 0, 1, -1}};
    sps_status st = build_stencil(g, N, 3, s, 7, out); /* the pattern */
    double *kc = NULL;
    int64_t nb, side;
    if (st == SPS_OK) st = jump_cubes(g, N, contrast, &kc, &nb, &side);
    if (st != SPS_OK) {
        sps__csr_free(out);
        return st;
    }
    sps_idx r = 0;
    for (int64_t z = 0; z < N; z++)
        for (int64_t y = 0; y < N; y++)
            for (int64_t x = 0; x < N; x++, r++) {
                double ki = jump_k(kc, nb, side, x, y, z), diag = 6 * ki;
                sps_idx dpos = -1;
                for (sps_idx p = out->row_ptr[r]; p < out->row_ptr[r + 1]; p++) {
                    sps_idx c = out->col_idx[p];
                    if (c == r) {
                        dpos = p;
                        continue;
                    }
                    int64_t cx = c % N, cy = (c / N) % N, cz = c / (N * N);
                    double kj = jump_k(kc, nb, side, cx, cy, cz), kf = 2 * ki * kj / (ki + kj);
                    out->val[p] = -kf;
                    diag += kf - ki; /* the face's ki (boundary default) becomes kf */
                }
                out->val[dpos] = diag;
            }
    sps__free(kc);
    return SPS_OK;
}

/* -u_xx - u_yy - EPS u_zz, 7-point, N^3 rows (SPD for EPS > 0). */
static sps_status gen_aniso3d(const gen *g, int64_t N, double eps, sps_csr *out)
{
    const pt s[] = {{0, 0, -1, -eps}, {0, -1, 0, -1}, {-1, 0, 0, -1}, {0, 0, 0, 4 + 2 * eps},
                    {1, 0, 0, -1},    {0, 1, 0, -1},  {0, 0, 1, -eps}};
    return build_stencil(g, N, 3, s, 7, out);
}

/* Linear elasticity on the unit cube, N^3 trilinear hexahedra (E = 1,
 * nu = 0.3, 2x2x2 Gauss points), 3 unknowns per node, the nodes of the face
 * x = 0 clamped (removed): 3 N (N+1)^2 rows, SPD. Node (i, j, k), i >= 1, is
 * unknowns 3 ((k (N+1) + j) N + i - 1) + {0, 1, 2}. */
static void hex_grad(int a, const double q[3], double h, double g3[3])
{
    double s[3] = {(a & 1) ? 1 : -1, (a & 2) ? 1 : -1, (a & 4) ? 1 : -1};
    for (int d = 0; d < 3; d++) {
        double v = s[d] / 8.0;
        for (int e = 0; e < 3; e++)
            if (e != d) v *= 1 + s[e] * q[e];
        g3[d] = v * 2.0 / h;
    }
}

/* The 24 x 24 element matrix (row-major, unknown 3a + c). */
static void hex_stiffness(double h, double *K)
{
    const double E = 1.0, nu = 0.3, lam = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
    const double gp = 1.0 / sqrt(3.0), w = h * h * h / 8.0;
    memset(K, 0, 24 * 24 * sizeof *K);
    for (int qp = 0; qp < 8; qp++) {
        double q[3] = {(qp & 1) ? gp : -gp, (qp & 2) ? gp : -gp, (qp & 4) ? gp : -gp}, G[8][3];
        for (int a = 0; a < 8; a++) hex_grad(a, q, h, G[a]);
        /* K[a c][b d] += lam g_a,c g_b,d + mu (g_a,d g_b,c + delta_cd g_a . g_b) */
        for (int a = 0; a < 8; a++)
            for (int b = 0; b < 8; b++) {
                double dot = G[a][0] * G[b][0] + G[a][1] * G[b][1] + G[a][2] * G[b][2];
                for (int c = 0; c < 3; c++)
                    for (int d = 0; d < 3; d++)
                        K[(3 * a + c) * 24 + 3 * b + d] +=
                            w * (lam * G[a][c] * G[b][d] + mu * (G[a][d] * G[b][c] + (c == d) * dot));
            }
    }
    for (int i = 0; i < 24; i++) /* exactly symmetric: the products above round by order */
        for (int j = 0; j < i; j++) K[i * 24 + j] = K[j * 24 + i] = 0.5 * (K[i * 24 + j] + K[j * 24 + i]);
}

/* Block (I, J) of node I = (x, y, z) and J = I + (dx, dy, dz): the sum over
 * the elements holding both. */
static void elast_block(const double *K, int64_t N, const int64_t I[3], const int d3[3], double B[9])
{
    memset(B, 0, 9 * sizeof *B);
    int64_t lo[3], hi[3];
    for (int t = 0; t < 3; t++) { /* element e holds nodes e..e+1 in each direction */
        int64_t a = I[t], b = I[t] + d3[t];
        lo[t] = (a > b ? a : b) - 1;
        hi[t] = a < b ? a : b;
        if (lo[t] < 0) lo[t] = 0;
        if (hi[t] > N - 1) hi[t] = N - 1;
    }
    for (int64_t ez = lo[2]; ez <= hi[2]; ez++)
        for (int64_t ey = lo[1]; ey <= hi[1]; ey++)
            for (int64_t ex = lo[0]; ex <= hi[0]; ex++) {
                int a = (int)((I[0] - ex) + 2 * (I[1] - ey) + 4 * (I[2] - ez));
                int b = (int)((I[0] + d3[0] - ex) + 2 * (I[1] + d3[1] - ey) + 4 * (I[2] + d3[2] - ez));
                for (int c = 0; c < 3; c++)
                    for (int d = 0; d < 3; d++) B[3 * c + d] += K[(3 * a + c) * 24 + 3 * b + d];
            }
}

static sps_status gen_elasticity3d(const gen *g, int64_t N, sps_csr *out)
{
    int64_t M = N + 1, nodes = N * M * M, rows = 3 * nodes;
    if (N > 1000) return too_big(g, 3 * N * M * M, 0);
    /* 3 x 3 entries per neighbour pair: a line of L nodes has 3 L - 2 pairs */
    int64_t cx = 3 * N - 2, cy = 3 * M - 2, nnz = 9 * cx * cy * cy;
    if (rows > SPS_IDX_MAX || nnz > SPS_IDX_MAX) return too_big(g, rows, nnz);
    sps_status st = sps__csr_alloc(g->ctx, out, (sps_idx)rows, (sps_idx)rows, (sps_idx)nnz);
    if (st != SPS_OK) return st;
    double K[24 * 24], B[9];
    hex_stiffness(1.0 / (double)N, K);
    sps_idx p = 0, r = 0;
    for (int64_t z = 0; z < M; z++)
        for (int64_t y = 0; y < M; y++)
            for (int64_t x = 1; x < M; x++)
                for (int c = 0; c < 3; c++, r++) {
                    int64_t I[3] = {x, y, z};
                    for (int dz = -1; dz <= 1; dz++)
                        for (int dy = -1; dy <= 1; dy++)
                            for (int dx = -1; dx <= 1; dx++) {
                                int d3[3] = {dx, dy, dz};
                                int64_t jx = x + dx, jy = y + dy, jz = z + dz;
                                if (jx < 1 || jx > N || jy < 0 || jy > N || jz < 0 || jz > N) continue;
                                elast_block(K, N, I, d3, B);
                                sps_idx col = (sps_idx)(3 * ((jz * M + jy) * N + jx - 1));
                                for (int d = 0; d < 3; d++) {
                                    out->col_idx[p] = col + d;
                                    out->val[p++] = B[3 * c + d];
                                }
                            }
                    out->row_ptr[r + 1] = p;
                }
    return SPS_OK;
}

sps_status sps_matrix_generate_rbm(sps_context *ctx, const char *spec, sps_idx n, double *B)
{
    if (!spec || !B) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_matrix_generate_rbm: NULL argument");
    char *end = NULL;
    long long N = strncmp(spec, "elasticity3d:", 13) == 0 ? strtoll(spec + 13, &end, 10) : 0;
    if (N < 1 || !end || *end)
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "rigid-body modes: '%s' is not a generator spec elasticity3d:N", spec);
    long long M = N + 1;
    if (3 * N * M * M != (long long)n)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "rigid-body modes: %s has %lld rows, not %d",
                        spec, 3 * N * M * M, n);
    double h = 1.0 / (double)N;
    size_t r = 0;
    for (long long z = 0; z < M; z++)
        for (long long y = 0; y < M; y++)
            for (long long x = 1; x < M; x++) {
                double X[3] = {x * h, y * h, z * h};
                for (int c = 0; c < 3; c++, r++) {
                    for (int t = 0; t < 3; t++) B[(size_t)t * n + r] = c == t;
                    /* rotations about z, x, y: (-y, x, 0), (0, -z, y), (z, 0, -x) */
                    B[3 * (size_t)n + r] = c == 0 ? -X[1] : c == 1 ? X[0] : 0.0;
                    B[4 * (size_t)n + r] = c == 1 ? -X[2] : c == 2 ? X[1] : 0.0;
                    B[5 * (size_t)n + r] = c == 2 ? -X[0] : c == 0 ? X[2] : 0.0;
                }
            }
    return SPS_OK;
}

/* ---- dispatch ---------------------------------------------------------- */

#define MAX_FIELDS 8

sps_status sps__generate(sps_context *ctx, const char *spec, sps_csr *out)
{
    static const struct {
        const char *name, *form;
        int nf;
    } gens[] = {
        {"poisson2d", "poisson2d:N", 1},
        {"poisson3d", "poisson3d:N", 1},
        {"poisson3d27", "poisson3d27:N", 1},
        {"convdiff2d", "convdiff2d:N,PECLET", 2},
        {"banded", "banded:N,W,SCATTER,SEED", 4},
        {"powerlaw", "powerlaw:N,AVGDEG,SEED", 3},
        {"poisson3d-jump", "poisson3d-jump:N,CONTRAST", 2},
        {"aniso3d", "aniso3d:N,EPS", 2},
        {"elasticity3d", "elasticity3d:N", 1},
    };
    const int ngens = (int)(sizeof gens / sizeof *gens);
    if (out) memset(out, 0, sizeof *out);
    if (!spec || !out) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps__generate: NULL argument");
    gen g = {ctx, spec, ""};
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    int which = -1;
    for (int i = 0; i < ngens; i++)
        if (strlen(gens[i].name) == nlen && strncmp(spec, gens[i].name, nlen) == 0) which = i;
    if (which < 0) {
        char known[256] = "";
        for (int i = 0; i < ngens; i++) {
            strcat(known, gens[i].form);
            if (i + 1 < ngens) strcat(known, ", ");
        }
        return sps__err(ctx, SPS_ERR_INVALID_ARG,
                        "generator spec '%s': unknown generator '%.*s' (known: %s)", spec,
                        (int)nlen, spec, known);
    }
    g.form = gens[which].form;
    if (!colon) return bad(&g, "missing ':' and parameters");

    /* Split the parameters at commas (empty fields are kept, and rejected). */
    char buf[256];
    if (strlen(colon + 1) >= sizeof buf) return bad(&g, "parameters too long");
    strcpy(buf, colon + 1);
    int nf = 1;
    for (const char *p = buf; *p; p++) nf += *p == ',';
    if (nf != gens[which].nf)
        return bad(&g, "%d parameter%s given, %d expected", nf, nf == 1 ? "" : "s",
                   gens[which].nf);
    char *f[MAX_FIELDS];
    f[0] = buf;
    for (int i = 1; i < nf; i++) {
        char *c = strchr(f[i - 1], ',');
        *c = 0;
        f[i] = c + 1;
    }
    for (int i = 0; i < nf; i++)
        if (!f[i][0]) return bad(&g, "parameter %d is empty", i + 1);

    int64_t N, W;
    double x;
    uint64_t seed;
    sps_status st = get_int(&g, f[0], "N", 1, SPS_IDX_MAX, &N);
    if (st != SPS_OK) return st;
    switch (which) {
    case 0: return gen_poisson2d(&g, N, out);
    case 1: return gen_poisson3d(&g, N, out);
    case 2: return gen_poisson3d27(&g, N, out);
    case 3:
        if ((st = get_real(&g, f[1], "PECLET", &x)) != SPS_OK) return st;
        if (x < 0) return bad(&g, "PECLET = %s must be >= 0", f[1]);
        return gen_convdiff2d(&g, N, x, out);
    case 4:
        if ((st = get_int(&g, f[1], "W", 1, 2 * N - 1, &W)) != SPS_OK) return st;
        if ((st = get_real(&g, f[2], "SCATTER", &x)) != SPS_OK) return st;
        if (!(x >= 0 && x < 1)) return bad(&g, "SCATTER = %s is outside [0, 1)", f[2]);
        if ((st = get_seed(&g, f[3], &seed)) != SPS_OK) return st;
        return gen_banded(&g, N, W, x, seed, out);
    case 6:
        if ((st = get_real(&g, f[1], "CONTRAST", &x)) != SPS_OK) return st;
        if (!(x > 0)) return bad(&g, "CONTRAST = %s must be > 0", f[1]);
        return gen_poisson3d_jump(&g, N, x, out);
    case 7:
        if ((st = get_real(&g, f[1], "EPS", &x)) != SPS_OK) return st;
        if (!(x > 0)) return bad(&g, "EPS = %s must be > 0", f[1]);
        return gen_aniso3d(&g, N, x, out);
    case 8: return gen_elasticity3d(&g, N, out);
    default:
        if ((st = get_real(&g, f[1], "AVGDEG", &x)) != SPS_OK) return st;
        if (!(x >= 1 && x <= (double)N))
            return bad(&g, "AVGDEG = %s is outside [1, N] = [1, %lld]", f[1], (long long)N);
        if ((st = get_seed(&g, f[2], &seed)) != SPS_OK) return st;
        return gen_powerlaw(&g, N, x, seed, out);
    }
}
