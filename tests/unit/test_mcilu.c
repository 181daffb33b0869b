/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_mcilu.c: multicolor ILU(0)/IC(0) (`ilu0:order=color`,
 * `ic0:order=color`, precond/mcilu/) on the host: the colouring is valid (no
 * edge of A or A' inside a colour), greedy (a node of colour c has
 * neighbours of every colour below c), equal to an independent Jones-Plassmann
 * written here and deterministic; the permutation sorts by (colour, index);
 * the factor equals a dense ILU(0)/IC(0) of PAP' in its pattern; the apply a
 * dense solve with those factors, and bitwise the natural-order ilu0:exact
 * built on PAP'; plain ilu0/ic0 are order=color (the default since issue 8),
 * the name mapping and its refusals, bitwise the same solutions on shared
 * matrices; the symbolic arrays (graph, cptr, F with amap and dpos, T with
 * tmap: what mcilu.cu's device setup must equal bitwise) against their
 * definitions; refresh; zero pivots named in the original numbering; edge cases;
 * solve counts against unpreconditioned ones. */
#include "pc_check.h"
#include "precond/mcilu/mcilu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

typedef struct built {
    sps_mcilu_view v;
    sps_idx *color, *perm;
    double *f;
} built;

static void built_free(built *b)
{
    free(b->color);
    free(b->perm);
    free(b->f);
    memset(b, 0, sizeof *b);
}

/* What pc holds, copied out. */
static int fetch(const sps_precond *pc, built *b)
{
    memset(b, 0, sizeof *b);
    if (!T_STATUS(ctx, sps__mcilu_fetch(pc, &b->v, NULL, NULL, NULL), "fetch sizes")) return 0;
    b->color = malloc((size_t)(b->v.n + 1) * sizeof *b->color);
    b->perm = malloc((size_t)(b->v.n + 1) * sizeof *b->perm);
    b->f = malloc((size_t)(b->v.nnz + 1) * sizeof *b->f);
    return T_STATUS(ctx, sps__mcilu_fetch(pc, NULL, b->color, b->perm, b->f), "fetch");
}

/* ---- an independent Jones-Plassmann: whole-array rounds on a snapshot ---- */

static uint64_t mix(uint64_t i)
{
    uint64_t z = i + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int beats(sps_idx j, sps_idx i) { return mix((uint64_t)j) > mix((uint64_t)i) || (mix((uint64_t)j) == mix((uint64_t)i) && j > i); }

/* Adjacency lists of A + A' without the diagonal (duplicates allowed). */
typedef struct adj_t {
    sps_idx *deg, *start, *list;
} adj_t;

static adj_t sym_adj(const sps_matrix *A)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = sps_matrix_rows(A);
    adj_t g = {calloc((size_t)n + 1, sizeof(sps_idx)), calloc((size_t)n + 2, sizeof(sps_idx)),
               malloc((size_t)(2 * rp[n] + 1) * sizeof(sps_idx))};
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++)
            if (ci[p] != i) {
                g.start[i + 1]++;
                g.start[ci[p] + 1]++;
            }
    for (sps_idx i = 0; i < n; i++) g.start[i + 1] += g.start[i];
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++)
            if (ci[p] != i) {
                g.list[g.start[i] + g.deg[i]++] = ci[p];
                g.list[g.start[ci[p]] + g.deg[ci[p]]++] = i;
            }
    return g;
}

static void adj_free(adj_t *g)
{
    free(g->deg);
    free(g->start);
    free(g->list);
}

/* Rounds on a snapshot of the colours, every node tested each round. */
static sps_idx *reference_colors(const sps_matrix *A, sps_idx *ncolors)
{
    sps_idx n = sps_matrix_rows(A);
    adj_t g = sym_adj(A);
    sps_idx *col = malloc((size_t)(n + 1) * sizeof *col), *snap = malloc((size_t)(n + 1) * sizeof *snap);
    for (sps_idx i = 0; i < n; i++) col[i] = -1;
    sps_idx maxc = -1;
    for (int left = n > 0; left;) {
        memcpy(snap, col, (size_t)n * sizeof *col);
        left = 0;
        for (sps_idx i = 0; i < n; i++) {
            if (snap[i] >= 0) continue;
            const sps_idx *nb = g.list + g.start[i];
            int win = 1;
            for (sps_idx a = 0; a < g.deg[i] && win; a++) win = !(snap[nb[a]] < 0 && beats(nb[a], i));
            if (!win) {
                left = 1;
                continue;
            }
            sps_idx c = 0;
            for (int again = 1; again;) {
                again = 0;
                for (sps_idx a = 0; a < g.deg[i]; a++)
                    if (snap[nb[a]] == c) {
                        c++;
                        again = 1;
                    }
            }
            col[i] = c;
            if (c > maxc) maxc = c;
        }
    }
    adj_free(&g);
    free(snap);
    *ncolors = maxc + 1;
    return col;
}

/* Valid, greedy, perm sorted by (colour, index). */
static void check_coloring(const char *what, const sps_matrix *A, const built *b)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = sps_matrix_rows(A), bad = 0, nc = b->v.ncolors;
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++)
            bad += ci[p] != i && b->color[ci[p]] == b->color[i];
    T_OK(bad == 0, "%s: no edge inside a colour (%d found), %d colours", what, bad, nc);
    /* greedy: below its colour, every colour is at a neighbour */
    adj_t g = sym_adj(A);
    unsigned char *seen = calloc((size_t)nc + 1, 1);
    sps_idx notgreedy = 0, outside = 0;
    for (sps_idx i = 0; i < n; i++) {
        if (b->color[i] < 0 || b->color[i] >= nc) {
            outside++;
            continue;
        }
        memset(seen, 0, (size_t)nc + 1);
        for (sps_idx a = 0; a < g.deg[i]; a++) seen[b->color[g.list[g.start[i] + a]]] = 1;
        for (sps_idx c = 0; c < b->color[i]; c++) notgreedy += !seen[c];
    }
    free(seen);
    adj_free(&g);
    T_OK(outside == 0 && notgreedy == 0, "%s: colours in [0, %d) (%d outside), greedy (%d gaps)", what,
         nc, outside, notgreedy);
    sps_idx unsorted = 0;
    for (sps_idx k = 1; k < n; k++) {
        sps_idx a = b->perm[k - 1], c = b->perm[k];
        unsorted += b->color[a] > b->color[c] || (b->color[a] == b->color[c] && a >= c);
    }
    T_OK(unsorted == 0, "%s: perm ordered by (colour, row) (%d out of order)", what, unsorted);
}

/* Colouring checks for `spec` on A, the reference for n <= 3000. */
static void coloring_case(const char *what, const sps_matrix *A, const char *spec)
{
    sps_precond *p1 = NULL, *p2 = NULL;
    if (!T_STATUS(ctx, sps_precond_create(ctx, A, spec, &p1), "%s %s", what, spec)) return;
    built b1, b2;
    if (sps_matrix_rows(A) > 0 && fetch(p1, &b1)) {
        check_coloring(what, A, &b1);
        if (T_STATUS(ctx, sps_precond_create(ctx, A, spec, &p2), "%s again", what) && fetch(p2, &b2)) {
            size_t n = (size_t)b1.v.n;
            T_OK(b1.v.ncolors == b2.v.ncolors && memcmp(b1.color, b2.color, n * sizeof *b1.color) == 0 &&
                     memcmp(b1.f, b2.f, (size_t)b1.v.nnz * sizeof *b1.f) == 0,
                 "%s %s: two builds bitwise equal", what, spec);
            built_free(&b2);
        }
        if (b1.v.n <= 3000) {
            sps_idx nc = 0, *rc = reference_colors(A, &nc), diff = 0;
            for (sps_idx i = 0; i < b1.v.n; i++) diff += rc[i] != b1.color[i];
            T_OK(nc == b1.v.ncolors && diff == 0, "%s: = the reference Jones-Plassmann (%d colours, %d differ)",
                 what, nc, diff);
            free(rc);
        }
        char want[64];
        snprintf(want, sizeof want, "multicolor: %d colours in %d ", b1.v.ncolors, b1.v.rounds);
        T_OK(strstr(sps_precond_describe(p1), want) != NULL, "%s: describe says '%s': %s", what, want,
             sps_precond_describe(p1));
        printf("# %-28s %-16s n %7d: %3d colours, %3d rounds\n", what, spec, b1.v.n, b1.v.ncolors, b1.v.rounds);
        built_free(&b1);
    }
    sps_precond_destroy(p1);
    sps_precond_destroy(p2);
}

/* ---- test matrices ----------------------------------------------------------- */

static sps_matrix *diagonal(sps_idx n)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) t_trip_add(&t, i, i, 1.0 + i);
    return t_trip_matrix(ctx, n, n, &t);
}

static void test_coloring_generated(void)
{
    const char *gens[] = {"poisson2d:30", "poisson3d:10", "convdiff2d:30,10", "poisson3d27:8", "powerlaw:2000,6,3",
                          "poisson2d:300"};
    for (size_t k = 0; k < sizeof gens / sizeof *gens; k++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(ctx, sps_matrix_generate(ctx, gens[k], &A), "%s", gens[k])) continue;
        coloring_case(gens[k], A, "ilu0:order=color");
        sps_matrix_destroy(A);
    }
    sps_idx sizes[] = {1, 2, 31, 32, 33, 1023, 1024, 1025};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char what[64];
        sps_matrix *A = pc_arrow(ctx, sizes[k], 0);
        snprintf(what, sizeof what, "arrow %d", sizes[k]);
        if (A) coloring_case(what, A, "ilu0:order=color");
        sps_matrix_destroy(A);
        A = pc_oneway(ctx, sizes[k]);
        snprintf(what, sizeof what, "one-way %d", sizes[k]);
        if (A) coloring_case(what, A, "ilu0:order=color");
        sps_matrix_destroy(A);
        A = diagonal(sizes[k]);
        snprintf(what, sizeof what, "diagonal %d", sizes[k]);
        built b;
        sps_precond *pc = NULL;
        if (A && T_STATUS(ctx, sps_precond_create(ctx, A, "ic0:order=color", &pc), "%s", what) && fetch(pc, &b)) {
            T_OK(b.v.ncolors == 1 && b.v.rounds == 1, "%s: one colour in one round (%d, %d)", what, b.v.ncolors,
                 b.v.rounds);
            built_free(&b);
        }
        sps_precond_destroy(pc);
        sps_matrix_destroy(A);
    }
}

static void real_coloring(sps_context *c, const sps_matrix *A, const char *name)
{
    (void)c;
    sps_features f;
    if (sps_matrix_analyze(ctx, A, &f) != SPS_OK || f.missing_diagonal) return;
    if (f.rows > 20000) return;
    coloring_case(name, A, "ilu0:order=color");
}

static void test_coloring_real(void) { t_each_real(ctx, ctx, "mcilu coloring on real matrices", real_coloring); }

/* ---- the symbolic arrays (the reference mcilu.cu is compared with) ----------- */

/* Checks the host's graph, cptr, F's pattern with amap and dpos, and for ic0
 * T and tmap against their definitions, on a dense marker per row. */
static void symbolic_case(const char *what, const sps_matrix *A, int chol)
{
    sps_precond *pc = NULL;
    const char *spec = chol ? "ic0:order=color" : "ilu0:order=color";
    if (!T_STATUS(ctx, sps_precond_create(ctx, A, spec, &pc), "%s %s", what, spec)) return;
    const sps_mcilu *m = sps__mcilu_is(pc) ? pc->impl : NULL;
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = sps_matrix_rows(A);
    if (!T_OK(m && m->n == n, "%s %s: a multicolor factor", what, spec)) {
        sps_precond_destroy(pc);
        return;
    }
    adj_t g = sym_adj(A);
    sps_idx *mark = calloc((size_t)n + 1, sizeof *mark), *iperm = malloc((size_t)(n + 1) * sizeof *iperm);
    sps_idx bad_graph = 0, bad_cptr = 0, bad_f = 0, bad_t = 0;
    for (sps_idx i = 0; i < n; i++) { /* graph row i: the neighbours of i, ascending, once */
        sps_idx cnt = 0;
        for (sps_idx a = 0; a < g.deg[i]; a++) {
            sps_idx j = g.list[g.start[i] + a];
            if (mark[j] != i + 1) cnt++;
            mark[j] = i + 1;
        }
        bad_graph += m->grp[i + 1] - m->grp[i] != cnt;
        for (sps_idx p = m->grp[i]; p < m->grp[i + 1]; p++)
            bad_graph += mark[m->gci[p]] != i + 1 || (p > m->grp[i] && m->gci[p - 1] >= m->gci[p]);
    }
    bad_cptr += m->cptr[0] != 0 || m->cptr[m->ncolors] != n;
    for (sps_idx c = 0; c < m->ncolors; c++)
        for (sps_idx k = m->cptr[c]; k < m->cptr[c + 1]; k++) bad_cptr += m->color[m->perm[k]] != c;
    for (sps_idx k = 0; k < n; k++) iperm[m->perm[k]] = k;
    sps_idx fnnz = 0;
    for (sps_idx k = 0; k < n; k++) { /* row k of F: row perm[k] of A, columns iperm, (ic0: <= k), sorted */
        sps_idx i = m->perm[k], len = 0, fr = m->F.row_ptr[k], fe = m->F.row_ptr[k + 1];
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) len += !chol || iperm[ci[p]] <= k;
        bad_f += fe - fr != len || fr != fnnz;
        fnnz += len;
        for (sps_idx q = fr; q < fe; q++) {
            sps_idx p = m->amap[q];
            bad_f += p < rp[i] || p >= rp[i + 1] || m->F.col_idx[q] != iperm[ci[p]] ||
                     (q > fr && m->F.col_idx[q - 1] >= m->F.col_idx[q]);
        }
        if (!chol) bad_f += m->dpos[k] < fr || m->dpos[k] >= fe || m->F.col_idx[m->dpos[k]] != k;
    }
    bad_f += m->F.nnz != fnnz;
    if (chol) { /* T = L': row k lists the rows j of L with an entry in column k, ascending */
        bad_t += m->T.nnz != m->F.nnz;
        for (sps_idx k = 0; k < n; k++) {
            bad_t += m->dpos[k] != m->T.row_ptr[k] || m->T.col_idx[m->T.row_ptr[k]] != k;
            for (sps_idx q = m->T.row_ptr[k]; q < m->T.row_ptr[k + 1]; q++) {
                sps_idx p = m->tmap[q], j = m->T.col_idx[q];
                bad_t += p < m->F.row_ptr[j] || p >= m->F.row_ptr[j + 1] || m->F.col_idx[p] != k ||
                         (q > m->T.row_ptr[k] && m->T.col_idx[q - 1] >= j);
            }
        }
    }
    T_OK(bad_graph == 0, "%s %s: graph = A + A' without the diagonal, rows sorted (%d wrong)", what, spec,
         bad_graph);
    T_OK(bad_cptr == 0, "%s %s: cptr bounds the colours in perm (%d wrong)", what, spec, bad_cptr);
    T_OK(bad_f == 0, "%s %s: F = %s, sorted, amap and dpos (%d wrong)", what, spec, chol ? "tril(PAP')" : "PAP'",
         bad_f);
    if (chol) T_OK(bad_t == 0, "%s %s: T = L' with tmap, rows start at the diagonal (%d wrong)", what, spec, bad_t);
    sps_mcilu_view view;
    if (T_STATUS(ctx, sps__mcilu_fetch(pc, &view, NULL, NULL, NULL), "%s view", what))
        T_OK(view.ms[0] >= 0 && view.ms[1] >= 0 && view.ms[2] >= 0 && view.ms[3] >= 0, "%s: setup times", what);
    adj_free(&g);
    free(mark);
    free(iperm);
    sps_precond_destroy(pc);
}

static void test_symbolic(void)
{
    const char *gens[] = {"poisson2d:20", "convdiff2d:20,10", "powerlaw:800,6,3", "poisson3d27:6"};
    for (size_t k = 0; k < sizeof gens / sizeof *gens; k++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(ctx, sps_matrix_generate(ctx, gens[k], &A), "%s", gens[k])) continue;
        symbolic_case(gens[k], A, 0);
        if (strncmp(gens[k], "poisson", 7) == 0) symbolic_case(gens[k], A, 1);
        sps_matrix_destroy(A);
    }
    sps_idx sizes[] = {1, 31, 32, 33, 1025};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char what[64];
        sps_matrix *A = pc_arrow(ctx, sizes[k], 1), *O = pc_oneway(ctx, sizes[k]);
        snprintf(what, sizeof what, "arrow %d", sizes[k]);
        if (A) symbolic_case(what, A, 0), symbolic_case(what, A, 1);
        snprintf(what, sizeof what, "one-way %d", sizes[k]);
        if (O) symbolic_case(what, O, 0);
        sps_matrix_destroy(A);
        sps_matrix_destroy(O);
    }
    sps_matrix *A = NULL; /* the setup's split, on the host */
    if (T_STATUS(ctx, sps_matrix_generate(ctx, "poisson3d:60", &A), "poisson3d:60")) {
        sps_precond *pc = NULL;
        sps_mcilu_view w;
        if (T_STATUS(ctx, sps_precond_create(ctx, A, "ilu0:order=color", &pc), "poisson3d:60") &&
            T_STATUS(ctx, sps__mcilu_fetch(pc, &w, NULL, NULL, NULL), "view"))
            printf("# poisson3d:60 ilu0:order=color host setup: graph %.1f ms, colouring %.1f, permutation %.1f, "
                   "factor %.1f\n", w.ms[0], w.ms[1], w.ms[2], w.ms[3]);
        sps_precond_destroy(pc);
    }
    sps_matrix_destroy(A);
}

/* ---- the factor and the apply against dense references ------------------------ */

/* Dense ILU(0) (cholesky 0) or IC(0) of B (n x n, row-major) in the pattern
 * pat, in place: L\U or L. */
static void dense_factor(int n, double *B, const unsigned char *pat, int cholesky)
{
    for (int i = 0; i < n; i++) {
        if (!cholesky) {
            for (int k = 0; k < i; k++) {
                if (!pat[i * n + k]) continue;
                B[i * n + k] /= B[k * n + k];
                for (int j = k + 1; j < n; j++)
                    if (pat[i * n + j] && pat[k * n + j]) B[i * n + j] -= B[i * n + k] * B[k * n + j];
            }
            continue;
        }
        for (int k = 0; k < i; k++) {
            if (!pat[i * n + k]) continue;
            double s = B[i * n + k];
            for (int j = 0; j < k; j++)
                if (pat[i * n + j] && pat[k * n + j]) s -= B[i * n + j] * B[k * n + j];
            B[i * n + k] = s / B[k * n + k];
        }
        double d = B[i * n + i];
        for (int j = 0; j < i; j++)
            if (pat[i * n + j]) d -= B[i * n + j] * B[i * n + j];
        B[i * n + i] = sqrt(d);
    }
}

/* z = P' (LU)^-1 P r densely (ic0: U = L'). */
static void dense_apply(int n, const double *F, int cholesky, const sps_idx *perm, const double *r, double *z)
{
    double *y = malloc((size_t)n * sizeof *y);
    for (int i = 0; i < n; i++) {
        double s = r[perm[i]];
        for (int j = 0; j < i; j++) s -= F[i * n + j] * y[j];
        y[i] = cholesky ? s / F[i * n + i] : s;
    }
    for (int i = n - 1; i >= 0; i--) {
        double s = y[i];
        for (int j = i + 1; j < n; j++) s -= (cholesky ? F[j * n + i] : F[i * n + j]) * y[j];
        y[i] = s / F[i * n + i];
    }
    for (int i = 0; i < n; i++) z[perm[i]] = y[i];
    free(y);
}

/* B = PAP' densely (ic0: its lower triangle), its pattern. */
static void permuted_dense(const sps_matrix *A, const sps_idx *perm, int cholesky, double *B, unsigned char *pat)
{
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    int n = sps_matrix_rows(A);
    sps_idx *ip = malloc((size_t)n * sizeof *ip);
    for (int k = 0; k < n; k++) ip[perm[k]] = k;
    memset(B, 0, (size_t)n * n * sizeof *B);
    memset(pat, 0, (size_t)n * n);
    for (int i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) {
            int a = ip[i], c = ip[ci[p]];
            if (cholesky && c > a) continue;
            B[a * n + c] = v[p];
            pat[a * n + c] = 1;
        }
    free(ip);
}

static void dense_case(const char *what, const sps_matrix *A, int cholesky)
{
    const char *spec = cholesky ? "ic0:order=color" : "ilu0:order=color";
    int n = sps_matrix_rows(A);
    sps_precond *pc = NULL;
    built b;
    if (!T_STATUS(ctx, sps_precond_create(ctx, A, spec, &pc), "%s %s", what, spec) || !fetch(pc, &b)) {
        sps_precond_destroy(pc);
        return;
    }
    double *B = malloc((size_t)n * n * sizeof *B), *r = malloc((size_t)n * sizeof *r);
    double *z = malloc((size_t)n * sizeof *z), *zd = malloc((size_t)n * sizeof *zd);
    unsigned char *pat = malloc((size_t)n * n);
    permuted_dense(A, b.perm, cholesky, B, pat);
    dense_factor(n, B, pat, cholesky);
    double ef = 0, big = 0;
    int64_t q = 0;
    for (int i = 0; i < n; i++) /* the factor's entries: row by row, columns ascending */
        for (int j = 0; j < n; j++)
            if (pat[i * n + j]) {
                ef = fmax(ef, fabs(b.f[q++] - B[i * n + j]));
                big = fmax(big, fabs(B[i * n + j]));
            }
    T_OK(q == b.v.nnz && ef <= 1e-13 * big, "%s %s: factor of PAP' = dense %s(0) (%.2g of %.2g, %lld entries)",
         what, spec, cholesky ? "IC" : "ILU", ef, big, (long long)q);
    uint64_t seed = 5;
    for (int i = 0; i < n; i++) r[i] = t_rand(&seed);
    dense_apply(n, B, cholesky, b.perm, r, zd);
    if (T_STATUS(ctx, sps_precond_apply(pc, r, z), "%s apply", what)) {
        double e = 0, zmax = 0;
        for (int i = 0; i < n; i++) {
            e = fmax(e, fabs(z[i] - zd[i]));
            zmax = fmax(zmax, fabs(zd[i]));
        }
        T_OK(e <= 1e-12 * zmax, "%s %s: apply = P'(LU)^-1 P r densely (%.2g of %.2g)", what, spec, e, zmax);
    }
    if (cholesky && n <= 200) pc_check_spd(what, pc, n, 1e-12);
    free(B); free(r); free(z); free(zd); free(pat);
    built_free(&b);
    sps_precond_destroy(pc);
}

/* ilu0:order=color applied to r = natural ilu0:exact of PAP' applied to Pr, bitwise. */
static void natural_case(const char *what, const sps_matrix *A)
{
    sps_precond *pc = NULL, *pn = NULL;
    built b;
    if (!T_STATUS(ctx, sps_precond_create(ctx, A, "ilu0:order=color", &pc), "%s", what) || !fetch(pc, &b)) {
        sps_precond_destroy(pc);
        return;
    }
    const sps_idx *rp, *ci;
    const double *v;
    sps_matrix_csr(A, &rp, &ci, &v);
    sps_idx n = sps_matrix_rows(A), *ip = malloc((size_t)n * sizeof *ip);
    for (sps_idx k = 0; k < n; k++) ip[b.perm[k]] = k;
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) t_trip_add(&t, ip[i], ip[ci[p]], v[p]);
    sps_matrix *B = t_trip_matrix(ctx, n, n, &t);
    double *r = malloc((size_t)n * sizeof *r), *pr = malloc((size_t)n * sizeof *pr);
    double *z = malloc((size_t)n * sizeof *z), *zn = malloc((size_t)n * sizeof *zn);
    uint64_t seed = 8;
    for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
    for (sps_idx k = 0; k < n; k++) pr[k] = r[b.perm[k]];
    if (B && T_STATUS(ctx, sps_precond_create(ctx, B, "ilu0:exact", &pn), "%s: ilu0:exact of PAP'", what) &&
        T_STATUS(ctx, sps_precond_apply(pn, pr, zn), "natural apply") &&
        T_STATUS(ctx, sps_precond_apply(pc, r, z), "color apply")) {
        sps_idx diff = 0;
        for (sps_idx k = 0; k < n; k++) diff += memcmp(&z[b.perm[k]], &zn[k], sizeof *z) != 0;
        T_OK(diff == 0, "%s: ilu0:order=color = ilu0:exact of PAP' bitwise (%d of %d differ)", what, diff, n);
    }
    free(r); free(pr); free(z); free(zn); free(ip);
    built_free(&b);
    sps_matrix_destroy(B);
    sps_precond_destroy(pn);
    sps_precond_destroy(pc);
}

static void test_dense(void)
{
    const char *gens[] = {"poisson2d:7", "poisson3d:4", "convdiff2d:8,10"};
    for (size_t k = 0; k < sizeof gens / sizeof *gens; k++) {
        sps_matrix *A = NULL;
        if (!T_STATUS(ctx, sps_matrix_generate(ctx, gens[k], &A), "%s", gens[k])) continue;
        dense_case(gens[k], A, 0);
        if (k < 2) dense_case(gens[k], A, 1);
        natural_case(gens[k], A);
        sps_matrix_destroy(A);
    }
    sps_idx sizes[] = {1, 31, 32, 33};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        char what[32];
        snprintf(what, sizeof what, "arrow %d", sizes[k]);
        sps_matrix *A = pc_arrow(ctx, sizes[k], 0), *S = pc_arrow(ctx, sizes[k], 1), *O = pc_oneway(ctx, sizes[k]);
        if (A) dense_case(what, A, 0), natural_case(what, A);
        snprintf(what, sizeof what, "symmetric arrow %d", sizes[k]);
        if (S) dense_case(what, S, 1);
        snprintf(what, sizeof what, "one-way %d", sizes[k]);
        if (O) dense_case(what, O, 0), natural_case(what, O);
        sps_matrix_destroy(A);
        sps_matrix_destroy(S);
        sps_matrix_destroy(O);
    }
    sps_idx big[] = {1023, 1024, 1025};
    for (size_t k = 0; k < 3; k++) {
        char what[32];
        snprintf(what, sizeof what, "one-way %d", big[k]);
        sps_matrix *O = pc_oneway(ctx, big[k]), *A = pc_arrow(ctx, big[k], 0);
        if (O) natural_case(what, O);
        snprintf(what, sizeof what, "arrow %d", big[k]);
        if (A) natural_case(what, A);
        sps_matrix_destroy(O);
        sps_matrix_destroy(A);
    }
}

/* ---- refresh, errors, edges ---------------------------------------------------- */

static void refresh_case(const char *what, const sps_matrix *A, const char *spec)
{
    double *vals = NULL, *vz = NULL;
    sps_matrix *A2 = t_revalued(ctx, A, 1.5, 0.0, 0.0, &vals); /* scaled: the same colours */
    sps_matrix *Z = t_revalued(ctx, A, 0.0, 0.0, 0.0, &vz);     /* all zero: the first pivot fails */
    sps_precond *pc = NULL, *fresh = NULL;
    built b0, b1, bf;
    sps_idx n = sps_matrix_rows(A);
    double *r = malloc((size_t)n * sizeof *r), *z1 = malloc((size_t)n * sizeof *z1),
           *z2 = malloc((size_t)n * sizeof *z2);
    uint64_t seed = 3;
    for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
    if (A2 && Z && T_STATUS(ctx, sps_precond_create(ctx, A, spec, &pc), "%s %s", what, spec) && fetch(pc, &b0)) {
        if (T_STATUS(ctx, sps_precond_update_values(pc, A2), "%s %s refresh", what, spec) && fetch(pc, &b1) &&
            T_STATUS(ctx, sps_precond_create(ctx, A2, spec, &fresh), "fresh") && fetch(fresh, &bf)) {
            T_OK(memcmp(b1.color, b0.color, (size_t)n * sizeof *b0.color) == 0 &&
                     memcmp(b1.f, bf.f, (size_t)bf.v.nnz * sizeof *bf.f) == 0,
                 "%s %s: refresh keeps the colours, its factor bitwise a fresh build's", what, spec);
            sps_precond_apply(pc, r, z1);
            sps_precond_apply(fresh, r, z2);
            T_OK(memcmp(z1, z2, (size_t)n * sizeof *z1) == 0, "%s %s: refreshed apply = fresh apply", what, spec);
            sps_status st = sps_precond_update_values(pc, Z);
            T_OK(st == SPS_ERR_ZERO_PIVOT && strstr(sps_last_error(ctx), "pivot at row"),
                 "%s %s: zero values refused: %s", what, spec, sps_last_error(ctx));
            sps_precond_apply(pc, r, z2);
            T_OK(memcmp(z1, z2, (size_t)n * sizeof *z1) == 0, "%s %s: a failed refresh leaves pc as it was", what,
                 spec);
            built_free(&bf);
            built_free(&b1);
        }
        built_free(&b0);
    }
    free(r); free(z1); free(z2); free(vals); free(vz);
    sps_precond_destroy(pc);
    sps_precond_destroy(fresh);
    sps_matrix_destroy(A2);
    sps_matrix_destroy(Z);
}

static void test_refresh(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "convdiff2d:20,10", &A) == SPS_OK) refresh_case("convdiff2d:20,10", A, "ilu0:order=color");
    sps_matrix_destroy(A);
    A = NULL;
    if (sps_matrix_generate(ctx, "poisson3d:8", &A) == SPS_OK) refresh_case("poisson3d:8", A, "ic0:order=color");
    sps_matrix_destroy(A);
}

/* Row 3 holds only a stored zero (ic0: -1): the pivot fails there whatever the
 * colouring; the message names row 3, not its new position. The default
 * (plain ilu0/ic0) reaches the same words. */
static void test_pivots(void)
{
    static const char *const pspecs[] = {"ilu0:order=color", "ic0:order=color", "ilu0", "ic0"};
    for (int s4 = 0; s4 < 4; s4++) {
        const char *spec = pspecs[s4];
        int chol = s4 % 2;
        t_triplets t = {0};
        sps_idx n = 12;
        for (sps_idx i = 0; i < n; i++) {
            t_trip_add(&t, i, i, i == 3 ? (chol ? -1.0 : 0.0) : 4.0);
            if (i == 3 || i == 2 || i == 4) continue;
            if (i + 1 < n && i + 1 != 3) {
                t_trip_add(&t, i, i + 1, -1.0);
                t_trip_add(&t, i + 1, i, -1.0);
            }
        }
        sps_matrix *A = t_trip_matrix(ctx, n, n, &t);
        if (!A) continue;
        sps_precond *pc = (sps_precond *)&pc;
        sps_status st = sps_precond_create(ctx, A, spec, &pc);
        char want[96];
        snprintf(want, sizeof want, "%s: %s pivot at row 3 (1-based 4) of 12", chol ? "ic0" : "ilu0",
                 chol ? "non-positive" : "zero");
        T_OK(st == SPS_ERR_ZERO_PIVOT && pc == NULL && strstr(sps_last_error(ctx), want), "%s: '%s' (%s)", spec,
             want, sps_last_error(ctx));
        sps_matrix_destroy(A);
    }
    /* the same matrix with a good row 3: row 3 is not at position 3 once permuted */
    double mis[16] = {2, 1, 0, 0, 1, 0, 1, 0, 0, 1, 2, 0, 0, 0, 0, 3}; /* no (1,1) */
    sps_matrix *M = t_matrix_from_dense(ctx, 4, 4, mis);
    if (M) {
        static const char *specs[] = {"ilu0:order=color", "ic0:order=color", "ilu0", "ic0"};
        for (int k = 0; k < 4; k++) {
            sps_precond *pc = NULL;
            sps_status st = sps_precond_create(ctx, M, specs[k], &pc);
            T_OK(st == SPS_ERR_ZERO_PIVOT && strstr(sps_last_error(ctx), "zero pivot at row 1 (1-based 2) of 4") &&
                     strstr(sps_last_error(ctx), "no diagonal entry"),
                 "%s: missing diagonal named: %s", specs[k], sps_last_error(ctx));
            sps_precond_destroy(pc);
        }
        sps_matrix_destroy(M);
    }
}

/* A row with no entry at all (row 5 of 9): refused, named, on both types. */
static void test_empty_row(void)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < 9; i++) {
        if (i == 5) continue;
        t_trip_add(&t, i, i, 4.0);
        if (i + 1 < 9 && i + 1 != 5 && i != 5) {
            t_trip_add(&t, i, i + 1, -1.0);
            t_trip_add(&t, i + 1, i, -1.0);
        }
    }
    sps_matrix *A = t_trip_matrix(ctx, 9, 9, &t);
    if (!A) return;
    static const char *specs[] = {"ilu0:order=color", "ic0:order=color", "ilu0", "ic0"};
    for (int k = 0; k < 4; k++) {
        sps_precond *pc = NULL;
        sps_status st = sps_precond_create(ctx, A, specs[k], &pc);
        T_OK(st == SPS_ERR_ZERO_PIVOT && pc == NULL &&
                 strstr(sps_last_error(ctx), "zero pivot at row 5 (1-based 6) of 9: the matrix has 1 row with no "
                                             "diagonal entry"),
             "%s, an empty row: %s", specs[k], sps_last_error(ctx));
    }
    sps_matrix_destroy(A);
}

static void test_position_moves(void)
{
    /* the pivot test is meaningful only if row 3 moves: check on good values */
    t_triplets t = {0};
    sps_idx n = 12;
    for (sps_idx i = 0; i < n; i++) {
        t_trip_add(&t, i, i, 4.0);
        if (i == 3 || i == 2 || i == 4) continue;
        if (i + 1 < n && i + 1 != 3) {
            t_trip_add(&t, i, i + 1, -1.0);
            t_trip_add(&t, i + 1, i, -1.0);
        }
    }
    sps_matrix *A = t_trip_matrix(ctx, n, n, &t);
    sps_precond *pc = NULL;
    built b;
    if (A && T_STATUS(ctx, sps_precond_create(ctx, A, "ilu0:order=color", &pc), "12-row") && fetch(pc, &b)) {
        sps_idx at = -1;
        for (sps_idx k = 0; k < n; k++)
            if (b.perm[k] == 3) at = k;
        T_OK(at >= 0 && at != 3, "the pivot test's row 3 sits at new position %d", at);
        built_free(&b);
    }
    sps_precond_destroy(pc);
    sps_matrix_destroy(A);
}

static void test_params(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:4", &A) != SPS_OK) return;
    static const pc_bad bad[] = {
        {"ilu0:order=color,solve=jacobi", "ilu0: order=color has exact solves only (not with solve=jacobi)"},
        {"ic0:solve=jacobi,order=color", "ic0: order=color has exact solves only"},
        {"ilu0:order=rcm", "order='rcm' is not natural or color"},
        {"ic0:level=1", "ic0: unknown parameter 'level' (known: exact, solve, sweeps, order, factor, fsweeps)"},
        {"ilu0:order=color,factor=par", "ilu0: order=color has its own factorization (not with factor=par)"},
        {"ic0:factor=par,order=color", "ic0: order=color has its own factorization (not with factor=par)"},
        {"ilu0:exact,order=color", "ilu0: exact is the natural-order factor (not with order=color)"},
        {"ic0:order=color,exact", "ic0: exact is the natural-order factor (not with order=color)"},
        {"ilu0:sweeps=2", "ilu0: sweeps=K needs solve=jacobi"},
        {"ilu0:exact,sweeps=2", "ilu0: sweeps=K needs solve=jacobi"},
        {"ic0:fsweeps=3", "ic0: fsweeps=K needs factor=par"},
    };
    pc_check_refused(ctx, A, bad, sizeof bad / sizeof *bad);
    double r[16], z1[16], z2[16];
    for (int i = 0; i < 16; i++) r[i] = 1.0 + i;
    T_STATUS(ctx, pc_apply(ctx, A, "ilu0:order=natural", r, z1), "order=natural");
    T_STATUS(ctx, pc_apply(ctx, A, "ilu0:exact", r, z2), "ilu0:exact");
    T_OK(memcmp(z1, z2, sizeof z1) == 0, "ilu0:order=natural is ilu0:exact");
    /* the order each spelling selects: multicolor (1) or natural (0) */
    static const struct {
        const char *spec;
        int color;
    } map[] = {{"ilu0", 1}, {"ic0", 1}, {"ilu0:order=color", 1}, {"ic0:order=color", 1},
               {"ilu0:solve=exact", 1}, {"ilu0:factor=exact", 1}, {"ic0:solve=exact,factor=exact", 1},
               {"ilu0:exact", 0}, {"ic0:exact", 0}, {"ilu0:order=natural", 0}, {"ic0:order=natural", 0},
               {"ilu0:factor=par", 0}, {"ic0:factor=par,fsweeps=5", 0}, {"ilu0:solve=jacobi", 0},
               {"ic0:solve=jacobi,sweeps=3", 0}, {"ilu0:factor=par,solve=jacobi", 0},
               {"ilu0:exact,factor=par", 0}, {"ilu0:order=natural,factor=exact", 0}};
    for (size_t k = 0; k < sizeof map / sizeof *map; k++) {
        sps_precond *pc = NULL;
        if (T_STATUS(ctx, sps_precond_create(ctx, A, map[k].spec, &pc), "%s", map[k].spec))
            T_OK(sps__mcilu_is(pc) == map[k].color && (sps__mcilu_describe(pc) != NULL) == map[k].color,
                 "%s: %s order", map[k].spec, map[k].color ? "multicolor" : "natural");
        sps_precond_destroy(pc);
    }
    /* the natural spellings are one factor, bitwise */
    static const char *const nat[][2] = {{"ilu0:exact,factor=par", "ilu0:factor=par"},
                                         {"ic0:exact", "ic0:order=natural,solve=exact,factor=exact"}};
    for (int k = 0; k < 2; k++) {
        T_STATUS(ctx, pc_apply(ctx, A, nat[k][0], r, z1), "%s", nat[k][0]);
        T_STATUS(ctx, pc_apply(ctx, A, nat[k][1], r, z2), "%s", nat[k][1]);
        T_OK(memcmp(z1, z2, sizeof z1) == 0, "%s is %s, bitwise", nat[k][0], nat[k][1]);
    }
    int found = 0;
    const char *name, *summary;
    for (int i = 0; sps_precond_type(i, &name, &summary) == SPS_OK; i++)
        found += (!strcmp(name, "ilu0") || !strcmp(name, "ic0")) && strstr(summary, "order=color") &&
                 strstr(summary, ":exact") && strstr(summary, "multicolor") && !strchr(summary, '\n');
    T_OK(found == 2, "--list-precond: ilu0 and ic0 name the multicolor default and :exact, one line each (%d)",
         found);
    sps_matrix_destroy(A);
    const char *types[] = {"ilu0:order=color", "ic0:order=color", "ilu0", "ic0"};
    pc_check_empty(ctx, ctx, types, 4, "");
    /* a nonsymmetric matrix: ic0:order=color refuses as ic0 does */
    double ns[4] = {2, 1, 0, 2};
    sps_matrix *N = t_matrix_from_dense(ctx, 2, 2, ns);
    sps_precond *pc = NULL;
    if (N)
        T_OK(sps_precond_create(ctx, N, "ic0:order=color", &pc) == SPS_ERR_UNSUPPORTED &&
                 strstr(sps_last_error(ctx), "not symmetric"),
             "ic0:order=color on a nonsymmetric matrix: %s", sps_last_error(ctx));
    if (N)
        T_OK(sps_precond_create(ctx, N, "ic0", &pc) == SPS_ERR_UNSUPPORTED &&
                 strstr(sps_last_error(ctx), "not symmetric"),
             "ic0 (multicolor) on a nonsymmetric matrix: %s", sps_last_error(ctx));
    sps_matrix_destroy(N);
}

/* ---- solves ------------------------------------------------------------------- */

static void solve_case(const char *what, const sps_matrix *A, sps_method m, const char *nat, const char *col)
{
    int64_t none = pc_iterations(ctx, A, NULL, m, "none"), n0 = pc_iterations(ctx, A, NULL, m, nat),
            c0 = pc_iterations(ctx, A, NULL, m, col);
    printf("# %-20s %-8s none %6lld  %-10s %6lld  %-18s %6lld\n", what, m == SPS_CG ? "CG" : "BiCGSTAB",
           (long long)none, nat, (long long)n0, col, (long long)c0);
    T_OK(c0 > 0 && (none < 0 || c0 < none), "%s: %s converges in fewer iterations (%lld) than none (%lld)", what,
         col, (long long)c0, (long long)none);
}

static void test_solves(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(ctx, "convdiff2d:100,10", &A) == SPS_OK)
        solve_case("convdiff2d:100,10", A, SPS_BICGSTAB, "ilu0:exact", "ilu0:order=color");
    sps_matrix_destroy(A);
    A = NULL;
    if (sps_matrix_generate(ctx, "poisson2d:63", &A) == SPS_OK) {
        solve_case("poisson2d:63", A, SPS_CG, "ic0:exact", "ic0:order=color");
        solve_case("poisson2d:63", A, SPS_BICGSTAB, "ilu0:exact", "ilu0:order=color");
    }
    sps_matrix_destroy(A);
    static const struct {
        const char *name;
        sps_method m;
    } real[] = {{"nos6", SPS_CG}, {"gr_30_30", SPS_CG}, {"1138_bus", SPS_CG},
                {"sherman1", SPS_BICGSTAB}, {"orsirr_1", SPS_BICGSTAB}, {"pde2961", SPS_BICGSTAB}};
    for (size_t k = 0; k < sizeof real / sizeof *real; k++) {
        const char *path = t_real_matrix_path(real[k].name);
        A = NULL;
        if (!path || sps_matrix_read(ctx, path, &A) != SPS_OK) {
            t_skip(real[k].name, "not found");
            continue;
        }
        int cg = real[k].m == SPS_CG;
        solve_case(real[k].name, A, real[k].m, cg ? "ic0:exact" : "ilu0:exact", cg ? "ic0:order=color" : "ilu0:order=color");
        sps_matrix_destroy(A);
    }
}

/* x of `method` with spec on A x = b (b as pc_iterations'), into x (n
 * entries, from 0); its iterations, -1 on a failure. */
static int64_t solve_x(const sps_matrix *A, sps_method m, const char *spec, double *x)
{
    sps_idx n = sps_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b);
    for (sps_idx i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.1;
    memset(x, 0, (size_t)n * sizeof *x);
    sps_operator *op = NULL;
    sps_precond *pc = NULL;
    sps_solver *s = NULL;
    sps_solve_info in;
    int64_t its = -1;
    if (sps_operator_create(ctx, A, "csr-vector", NULL, &op) == SPS_OK &&
        sps_precond_create_ex(ctx, A, op, spec, &pc) == SPS_OK && sps_solver_create(ctx, &s) == SPS_OK &&
        sps_solver_set_method(s, m) == SPS_OK && sps_solver_set_maxit(s, 20000) == SPS_OK &&
        sps_solve(s, op, pc, b, x, &in) == SPS_OK)
        its = in.iterations;
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    free(b);
    return its;
}

/* Plain ilu0 / ic0 are ilu0:order=color / ic0:order=color: the same
 * iterations and bitwise the same x on shared matrices (host). */
static void test_default_is_color(void)
{
    static const struct {
        const char *name;
        sps_method m;
    } real[] = {{"nos6", SPS_CG}, {"gr_30_30", SPS_CG}, {"1138_bus", SPS_CG}, {"sherman1", SPS_BICGSTAB},
                {"orsirr_1", SPS_GMRES}, {"pde2961", SPS_BICGSTAB}, {"sherman5", SPS_IDR}};
    for (size_t k = 0; k < sizeof real / sizeof *real; k++) {
        const char *path = t_real_matrix_path(real[k].name);
        sps_matrix *A = NULL;
        if (!path || sps_matrix_read(ctx, path, &A) != SPS_OK) {
            t_skip(real[k].name, "not found");
            continue;
        }
        int cg = real[k].m == SPS_CG;
        const char *def = cg ? "ic0" : "ilu0", *col = cg ? "ic0:order=color" : "ilu0:order=color";
        sps_idx n = sps_matrix_rows(A);
        double *x1 = malloc((size_t)n * sizeof *x1), *x2 = malloc((size_t)n * sizeof *x2);
        int64_t i1 = solve_x(A, real[k].m, def, x1), i2 = solve_x(A, real[k].m, col, x2);
        T_OK(i1 > 0 && i1 == i2 && memcmp(x1, x2, (size_t)n * sizeof *x1) == 0,
             "%s %s: %s = %s, bitwise x (%lld and %lld iterations)", real[k].name,
             sps_method_name(real[k].m), def, col, (long long)i1, (long long)i2);
        free(x1);
        free(x2);
        sps_matrix_destroy(A);
    }
}

T_MAIN_HOST(ctx, test_coloring_generated, test_coloring_real, test_symbolic, test_dense, test_refresh, test_pivots,
            test_empty_row, test_position_moves, test_params, test_solves, test_default_is_color)
