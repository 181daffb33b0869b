/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/amg_setup.c: the smoothed-aggregation hierarchy, built
 * on the host (the reference every other path is checked against).
 *
 * Per level, with bs unknowns per node and k near-nullspace vectors B:
 *   strength   nodes i, j (i != j) strongly coupled when
 *              |a_ij| >= theta_l sqrt(|a_ii a_jj|), with a the node matrix
 *              (block Frobenius norms when bs > 1) and theta_l = theta 2^-l
 *              (Vanek, Mandel, Brezina 1996: 0.08 on the fine level);
 *   aggregate  a distance-2 maximal independent set of the strength graph
 *              (Bell, Dalton, Olson 2012): synchronous rounds on keys
 *              (state, hash(i), i); roots seed aggregates, their neighbours
 *              join them, then the rest join a neighbour's aggregate. Each
 *              round reads only the previous round's state: deterministic
 *              and parallel as written;
 *   P_tent     per aggregate, B's rows of its unknowns orthonormalized by
 *              modified Gram-Schmidt (B_a = Q_a R_a): Q_a is P_tent's block,
 *              R_a the coarse level's B;
 *   P          (I - omega D^-1 A) P_tent, omega = 4 / (3 rho), rho a bound
 *              on lambda_max(D^-1 A) from Lanczos steps (cheby's code);
 *   A_c        P' (A P), host sparse products in a fixed order.
 * Until n <= coarse, or the level count, or coarsening stalls; the coarsest
 * matrix is inverted densely (Gauss-Jordan with partial pivoting). */
#include "amg.h"

#include "../cheby/cheby.h"
#if SPS_HAVE_CUDA
#include "../../core/gpu.h"
#endif

#include <math.h>
#include <stdio.h>
#include <string.h>

static sps_status oom(sps_context *ctx) { return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory"); }

/* ---- strength and aggregation -------------------------------------------- */

/* The node matrix: entry (I, J) = the Frobenius norm of block (I, J). */
static sps_status node_matrix(sps_context *ctx, const sps_csr *A, int bs, sps_csr *N)
{
    sps_idx nn = A->nrows / bs;
    sps_status st = sps__csr_alloc(ctx, N, nn, nn, A->nnz);
    sps_idx *pos = st == SPS_OK ? sps__malloc(sps__mul_size((size_t)nn + 1, sizeof *pos)) : NULL;
    if (st == SPS_OK && !pos) {
        sps__csr_free(N);
        st = oom(ctx);
    }
    if (st != SPS_OK) return st;
    for (sps_idx j = 0; j < nn; j++) pos[j] = -1;
    sps_idx w = 0;
    for (sps_idx I = 0; I < nn; I++) {
        N->row_ptr[I] = w;
        for (sps_idx i = I * bs; i < (I + 1) * bs; i++)
            for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
                sps_idx J = A->col_idx[p] / bs;
                if (pos[J] < N->row_ptr[I]) {
                    pos[J] = w;
                    N->col_idx[w] = J;
                    N->val[w++] = 0.0;
                }
                N->val[pos[J]] += A->val[p] * A->val[p];
            }
    }
    N->row_ptr[nn] = w;
    N->nnz = w;
    for (sps_idx p = 0; p < w; p++) N->val[p] = sqrt(N->val[p]);
    sps__csr_sort_rows(nn, N->row_ptr, N->col_idx, N->val);
    sps__free(pos);
    return SPS_OK;
}

static sps_status strength_of(sps_context *ctx, const sps_csr *A, double theta, sps_csr *S)
{
    sps_idx n = A->nrows;
    double *d = sps__calloc((size_t)n + 1, sizeof *d);
    sps_status st = d ? sps__csr_alloc(ctx, S, n, n, A->nnz) : oom(ctx);
    if (st != SPS_OK) {
        sps__free(d);
        return st;
    }
    for (sps_idx i = 0; i < n; i++)
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            if (A->col_idx[p] == i) d[i] = fabs(A->val[p]);
    sps_idx w = 0;
    for (sps_idx i = 0; i < n; i++) {
        S->row_ptr[i] = w;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
            sps_idx j = A->col_idx[p];
            double a = fabs(A->val[p]);
            if (j != i && a > 0 && a >= theta * sqrt(d[i] * d[j])) {
                S->col_idx[w] = j;
                S->val[w++] = a;
            }
        }
    }
    S->row_ptr[n] = w;
    S->nnz = w;
    sps__free(d);
    return SPS_OK;
}

sps_status sps__amg_strength(sps_context *ctx, const sps_csr *A, int bs, double theta, sps_csr *S)
{
    if (bs == 1) return strength_of(ctx, A, theta, S);
    sps_csr N;
    sps_status st = node_matrix(ctx, A, bs, &N);
    if (st != SPS_OK) return st;
    st = strength_of(ctx, &N, theta, S);
    sps__csr_free(&N);
    return st;
}

/* MIS(2) keys: state in the top 2 bits (2 root, 1 undecided, 0 out), then a
 * 30-bit hash of the node, then the node: a total order. */
static uint64_t mis_key(uint64_t state, sps_idx i)
{
    uint64_t z = (uint64_t)i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return state << 62 | (z & 0x3fffffffull) << 32 | (uint32_t)i;
}

typedef struct mis_pass {
    const sps_csr *S;
    const uint64_t *in;
    uint64_t *out;
} mis_pass;

/* out[i] = the largest of in[i] and in[j], j a neighbour of i. */
static void max_neighbours(void *arg, sps_idx lo, sps_idx hi)
{
    const mis_pass *m = arg;
    const sps_csr *S = m->S;
    for (sps_idx i = lo; i < hi; i++) {
        uint64_t v = m->in[i];
        for (sps_idx p = S->row_ptr[i]; p < S->row_ptr[i + 1]; p++)
            if (m->in[S->col_idx[p]] > v) v = m->in[S->col_idx[p]];
        m->out[i] = v;
    }
}

/* Rounds until no node is undecided; roots get key state 2. A node
 * without strong neighbours starts out (Vanek et al.: the smoother alone
 * handles it; its row of P_tent is empty). Each pass reads only the
 * previous one's keys: the rounds run on the context's threads. */
static void mis2(sps_context *ctx, const sps_csr *S, uint64_t *key, uint64_t *t1, uint64_t *t2)
{
    sps_idx n = S->nrows, left = n;
    for (sps_idx i = 0; i < n; i++) key[i] = mis_key(S->row_ptr[i + 1] > S->row_ptr[i], i);
    while (left > 0) {
        mis_pass a = {S, key, t1}, b = {S, t1, t2};
        sps__amg_par_rows(ctx, n, max_neighbours, &a);
        sps__amg_par_rows(ctx, n, max_neighbours, &b);
        left = 0;
        for (sps_idx i = 0; i < n; i++) {
            if (key[i] >> 62 != 1) continue;
            if ((uint32_t)t2[i] == (uint32_t)i) key[i] = mis_key(2, i);
            else if (t2[i] >> 62 == 2) key[i] = mis_key(0, i);
            else left++;
        }
    }
}

/* Aggregates from the roots: numbered in node order; neighbours of a root
 * join it (a node has at most one root neighbour), then the others join
 * the first neighbour (in column order) that the first round placed. */
static void grow(const sps_csr *S, const uint64_t *key, sps_idx *agg, sps_idx *first, sps_idx *nagg)
{
    sps_idx n = S->nrows, na = 0;
    for (sps_idx i = 0; i < n; i++) agg[i] = key[i] >> 62 == 2 ? na++ : -1;
    for (sps_idx i = 0; i < n; i++) {
        first[i] = agg[i];
        for (sps_idx p = S->row_ptr[i]; p < S->row_ptr[i + 1] && first[i] < 0; p++)
            if (key[S->col_idx[p]] >> 62 == 2) first[i] = agg[S->col_idx[p]];
    }
    for (sps_idx i = 0; i < n; i++) {
        agg[i] = first[i];
        for (sps_idx p = S->row_ptr[i]; p < S->row_ptr[i + 1] && agg[i] < 0; p++)
            agg[i] = first[S->col_idx[p]];
    }
    *nagg = na;
}

sps_status sps__amg_aggregate(sps_context *ctx, const sps_csr *S, sps_idx *agg, sps_idx *nagg)
{
    sps_idx n = S->nrows;
    uint64_t *w = sps__malloc(sps__mul_size((size_t)n + 1, 3 * sizeof *w));
    sps_idx *first = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *first));
    sps_status st = w && first ? SPS_OK : oom(ctx);
    if (st == SPS_OK) {
        mis2(ctx, S, w, w + n, w + 2 * (size_t)n);
        grow(S, w, agg, first, nagg);
        for (sps_idx i = 0; i < n && st == SPS_OK; i++) /* MIS(2) is maximal: a coupled node is within 2 of a root */
            if (agg[i] < 0 && S->row_ptr[i + 1] > S->row_ptr[i])
                st = sps__err(ctx, SPS_ERR_INTERNAL, "amg: node %d left without an aggregate", i);
        if (*nagg == 0) /* no strong coupling at all: singletons (coarsening stalls there) */
            for (sps_idx i = 0; i < n; i++) agg[i] = (*nagg)++;
    }
    sps__free(w);
    sps__free(first);
    return st;
}

/* ---- tentative and smoothed prolongator ---------------------------------- */

/* Modified Gram-Schmidt on the m x k block Q (column-major, leading
 * dimension m): Q = Q R, R k x k upper (row-major into r). A column that
 * loses all but 1e-10 of its norm is dependent: zero in Q and R. */
static void mgs(double *Q, int m, int k, double *r)
{
    for (int j = 0; j < k; j++) {
        double *v = Q + (size_t)j * m, n0 = 0.0, nv = 0.0;
        for (int t = 0; t < m; t++) n0 += v[t] * v[t];
        for (int i = 0; i < k; i++) r[i * k + j] = 0.0;
        for (int i = 0; i < j; i++) {
            const double *q = Q + (size_t)i * m;
            double s = 0.0;
            for (int t = 0; t < m; t++) s += q[t] * v[t];
            for (int t = 0; t < m; t++) v[t] -= s * q[t];
            r[i * k + j] = s;
        }
        for (int t = 0; t < m; t++) nv += v[t] * v[t];
        nv = sqrt(nv);
        int dep = !(nv > 1e-10 * sqrt(n0));
        for (int t = 0; t < m; t++) v[t] = dep ? 0.0 : v[t] / nv;
        r[j * k + j] = dep ? 0.0 : nv;
    }
}

typedef struct tent_in {
    const sps_idx *agg; /* node -> aggregate */
    sps_idx nagg, n;
    int bs, k;
    const double *B; /* n x k column-major */
} tent_in;

/* Unknowns of each aggregate, in increasing order: start[a]..start[a+1] of
 * list (unknowns of nodes in no aggregate are in no list). */
static void agg_lists(const tent_in *t, sps_idx *start, sps_idx *list)
{
    for (sps_idx a = 0; a <= t->nagg; a++) start[a] = 0;
    for (sps_idx i = 0; i < t->n; i++)
        if (t->agg[i / t->bs] >= 0) start[t->agg[i / t->bs] + 1]++;
    for (sps_idx a = 0; a < t->nagg; a++) start[a + 1] += start[a];
    for (sps_idx i = 0; i < t->n; i++)
        if (t->agg[i / t->bs] >= 0) list[start[t->agg[i / t->bs]]++] = i;
    for (sps_idx a = t->nagg; a > 0; a--) start[a] = start[a - 1];
    start[0] = 0;
}

/* P_tent's row pointer: k entries a row, none for a node in no aggregate. */
static void tent_rows(const tent_in *t, sps_idx *rp)
{
    rp[0] = 0;
    for (sps_idx i = 0; i < t->n; i++) rp[i + 1] = rp[i] + (t->agg[i / t->bs] >= 0 ? t->k : 0);
}

/* P_tent (n x nagg k) and the coarse B (nagg k x k). */
static sps_status tentative(sps_context *ctx, const tent_in *t, sps_csr *P, double *Bc)
{
    int k = t->k;
    sps_idx nc = t->nagg * k, mmax = 0, rows = 0;
    for (sps_idx i = 0; i < t->n; i++) rows += t->agg[i / t->bs] >= 0;
    sps_status st = sps__csr_alloc(ctx, P, t->n, nc, rows * k);
    sps_idx *start = sps__malloc(sps__mul_size((size_t)t->nagg + 1, sizeof *start));
    sps_idx *list = sps__malloc(sps__mul_size((size_t)t->n + 1, sizeof *list));
    if (st == SPS_OK && start && list) {
        agg_lists(t, start, list);
        for (sps_idx a = 0; a < t->nagg; a++)
            if (start[a + 1] - start[a] > mmax) mmax = start[a + 1] - start[a];
    }
    double *Q = st == SPS_OK && start && list ? sps__malloc(sps__mul_size((size_t)mmax * k + 1, sizeof *Q)) : NULL;
    if (st == SPS_OK && !Q) st = oom(ctx);
    if (st == SPS_OK) tent_rows(t, P->row_ptr);
    for (sps_idx a = 0; st == SPS_OK && a < t->nagg; a++) {
        sps_idx m = start[a + 1] - start[a];
        for (int j = 0; j < k; j++)
            for (sps_idx s = 0; s < m; s++)
                Q[(size_t)j * m + s] = t->B ? t->B[(size_t)j * t->n + list[start[a] + s]] : 1.0;
        double r[SPS_AMG_MAX_NULL * SPS_AMG_MAX_NULL];
        mgs(Q, (int)m, k, r);
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++) Bc[(size_t)j * nc + a * k + i] = r[i * k + j];
        for (sps_idx s = 0; s < m; s++)
            for (int j = 0; j < k; j++) {
                sps_idx q = P->row_ptr[list[start[a] + s]] + j;
                P->col_idx[q] = a * k + j;
                P->val[q] = Q[(size_t)j * m + s];
            }
    }
    sps__free(start);
    sps__free(list);
    sps__free(Q);
    if (st != SPS_OK) sps__csr_free(P);
    return st;
}

/* ---- row passes on the context's threads ------------------------------------ */

/* fn on fixed chunks of ROW_CHUNK rows of [0, n), on the context's threads
 * (a thread takes the chunks that start in its rows), part[c] = chunk c's
 * value (part may be NULL): a result combined from part in chunk order is
 * the same for any number of threads. */
#define ROW_CHUNK 2048

typedef double (*chunk_fn)(void *arg, sps_idx i0, sps_idx i1);

typedef struct chunk_job {
    chunk_fn fn;
    void *arg;
    sps_idx n;
    double *part;
} chunk_job;

static void chunk_rows(void *arg, sps_idx lo, sps_idx hi)
{
    chunk_job *j = arg;
    int64_t c0 = ((int64_t)lo + ROW_CHUNK - 1) / ROW_CHUNK, c1 = ((int64_t)hi + ROW_CHUNK - 1) / ROW_CHUNK;
    for (int64_t c = c0; c < c1; c++) {
        int64_t i1 = (c + 1) * ROW_CHUNK;
        double v = j->fn(j->arg, (sps_idx)(c * ROW_CHUNK), (sps_idx)(i1 < j->n ? i1 : j->n));
        if (j->part) j->part[c] = v;
    }
}

static void run_chunks(sps_context *ctx, sps_idx n, chunk_fn fn, void *arg, double *part)
{
    chunk_job j = {fn, arg, n, part};
    sps__amg_par_rows(ctx, n, chunk_rows, &j);
}

static size_t row_chunks(sps_idx n) { return ((size_t)n + ROW_CHUNK - 1) / ROW_CHUNK; }

/* The row passes' arguments: A, a scaling (written by the scalings, read
 * by the smoothing matrix), omega and the smoothing matrix's values. */
typedef struct row_pass {
    const sps_csr *A;
    double *dinv;
    double omega;
    double *val;
} row_pass;

static double smooth_chunk(void *arg, sps_idx i0, sps_idx i1)
{
    const row_pass *m = arg;
    const sps_csr *A = m->A;
    for (sps_idx i = i0; i < i1; i++)
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
            m->val[p] = (A->col_idx[p] == i ? 1.0 : 0.0) - m->omega * m->dinv[i] * A->val[p];
    return 0.0;
}

/* S = I - omega D^-1 A on A's pattern (dinv 0 on an empty diagonal): S's
 * row pointers and columns are A's (borrowed), its values its own; free it
 * with smoothing_free. */
static sps_status smoothing_matrix(sps_context *ctx, const sps_csr *A, const double *dinv,
                                   double omega, sps_csr *S)
{
    *S = *A;
    S->dev = NULL;
    S->val = sps__malloc(sps__mul_size((size_t)A->nnz + 1, sizeof *S->val));
    if (!S->val) return oom(ctx);
    row_pass m = {A, (double *)dinv, omega, S->val}; /* dinv only read */
    run_chunks(ctx, A->nrows, smooth_chunk, &m, NULL);
    return SPS_OK;
}

static void smoothing_free(sps_csr *S)
{
    sps__free(S->val);
    S->val = NULL;
}

/* ---- spectral estimate ---------------------------------------------------- */

typedef struct spmv_pass {
    const sps_csr *A;
    const double *x;
    double *y;
} spmv_pass;

/* y = A x on rows [lo, hi) (sps__csr_spmv's sums). */
static void spmv_rows(void *arg, sps_idx lo, sps_idx hi)
{
    const spmv_pass *m = arg;
    for (sps_idx i = lo; i < hi; i++) {
        double s = 0.0;
        for (sps_idx p = m->A->row_ptr[i]; p < m->A->row_ptr[i + 1]; p++)
            s += m->A->val[p] * m->x[m->A->col_idx[p]];
        m->y[i] = s;
    }
}

/* The Lanczos steps' vector passes, on the context's threads in row chunks
 * (run_chunks): a chunk's sum in row order, then the chunks' sums in chunk
 * order, so the dot products are the same for any number of threads. */
enum { LZ_START, LZ_PQ, LZ_UPDATE, LZ_DIR };

typedef struct lz_pass {
    int op;
    sps_idx n;
    double a; /* LZ_UPDATE: alpha; LZ_DIR: beta */
    double *r, *z, *p, *q, *part;
    const double *dinv;
} lz_pass;

static double lz_chunk(void *arg, sps_idx i0, sps_idx i1)
{
    const lz_pass *w = arg;
    double s = 0.0;
    double *r = w->r, *z = w->z, *p = w->p;
    switch (w->op) {
    case LZ_START: /* r = the start vector, z = p = D^-1 r; r'z */
        for (sps_idx i = i0; i < i1; i++) {
            r[i] = sps__cheby_start(i);
            z[i] = p[i] = w->dinv[i] * r[i];
            s += r[i] * z[i];
        }
        break;
    case LZ_PQ:
        for (sps_idx i = i0; i < i1; i++) s += p[i] * w->q[i];
        break;
    case LZ_UPDATE: /* r -= alpha q, z = D^-1 r; r'z */
        for (sps_idx i = i0; i < i1; i++) {
            r[i] -= w->a * w->q[i];
            z[i] = w->dinv[i] * r[i];
            s += r[i] * z[i];
        }
        break;
    default: /* LZ_DIR: p = z + beta p */
        for (sps_idx i = i0; i < i1; i++) p[i] = z[i] + w->a * p[i];
    }
    return s;
}

static double lz_run(sps_context *ctx, lz_pass *w, int op, double a)
{
    w->op = op;
    w->a = a;
    run_chunks(ctx, w->n, lz_chunk, w, w->part);
    double s = 0.0;
    for (size_t c = 0, nc = row_chunks(w->n); c < nc; c++) s += w->part[c];
    return s;
}

/* Jacobi-PCG steps on A x = s (cheby's Lanczos): alpha, beta; returns the step
 * count, 0 if A is not positive definite on the start vector. w: 4n, part:
 * row_chunks(n). Everything on the context's threads. */
static int lanczos(sps_context *ctx, const sps_csr *A, const double *dinv, double *w, double *part,
                   double *alpha, double *beta)
{
    sps_idx n = A->nrows;
    lz_pass lp = {0, n, 0.0, w, w + n, w + 2 * (size_t)n, w + 3 * (size_t)n, part, dinv};
    int m = 0, steps = SPS_AMG_LANCZOS < n ? SPS_AMG_LANCZOS : (int)n;
    double rz = lz_run(ctx, &lp, LZ_START, 0.0), rz0 = rz;
    if (!(rz0 > 0)) return 0;
    while (m < steps) {
        spmv_pass sp = {A, lp.p, lp.q};
        sps__amg_par_rows(ctx, n, spmv_rows, &sp);
        double pq = lz_run(ctx, &lp, LZ_PQ, 0.0);
        if (!(pq > 0)) break;
        alpha[m] = rz / pq;
        double rzn = lz_run(ctx, &lp, LZ_UPDATE, alpha[m]);
        beta[m++] = rzn / rz;
        if (!(rzn > 1e-30 * rz0)) break;
        rz = rzn;
        lz_run(ctx, &lp, LZ_DIR, beta[m - 1]);
    }
    return m;
}

/* D^-1 on rows [i0, i1) and their max_i sum_j |a_ij / a_ii| */
static double diag_chunk(void *arg, sps_idx i0, sps_idx i1)
{
    const row_pass *m = arg;
    double g = 0.0;
    for (sps_idx i = i0; i < i1; i++) {
        double d = 0.0, s = 0.0;
        for (sps_idx p = m->A->row_ptr[i]; p < m->A->row_ptr[i + 1]; p++) {
            if (m->A->col_idx[p] == i) d = m->A->val[p];
            s += fabs(m->A->val[p]);
        }
        m->dinv[i] = d != 0.0 ? 1.0 / d : 0.0;
        g = fmax(g, s * fabs(m->dinv[i]));
    }
    return g;
}

/* D^-1 (diag 0 -> 0) into dinv and, if g, *g = max_i sum_j |a_ij / a_ii|
 * (a maximum: any order), on the context's threads. */
static sps_status inverse_diag(sps_context *ctx, const sps_csr *A, double *dinv, double *g)
{
    double *part = NULL;
    if (g && !(part = sps__malloc(sps__mul_size(row_chunks(A->nrows) + 1, sizeof *part)))) return oom(ctx);
    row_pass m = {A, dinv, 0.0, NULL};
    run_chunks(ctx, A->nrows, diag_chunk, &m, part);
    if (g) {
        *g = 0.0;
        for (size_t c = 0, nc = row_chunks(A->nrows); c < nc; c++) *g = fmax(*g, part[c]);
    }
    sps__free(part);
    return SPS_OK;
}

sps_status sps__amg_spectral_finish(sps_context *ctx, sps_idx n, double gersh, int degree,
                                    const double *alpha, const double *beta, int m,
                                    sps_amg_level *L)
{
    if (m == 0)
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "amg: a level of %d rows is not positive definite (the first Lanczos "
                        "step failed); amg needs an SPD matrix with a positive diagonal",
                        n);
    sps_cheby c;
    memset(&c, 0, sizeof c);
    c.degree = degree;
    c.gersh = gersh;
    sps_cheby_prm prm = {degree, SPS_AMG_LANCZOS, SPS_AMG_CHEBY_RATIO, 0};
    sps__cheby_finish(&c, &prm, alpha, beta, m);
    L->rho = c.lmax;
    memcpy(L->c1, c.c1, sizeof L->c1);
    memcpy(L->c2, c.c2, sizeof L->c2);
    return SPS_OK;
}

/* The bound rho on lambda_max(D^-1 A) and the Chebyshev coefficients. */
static sps_status spectral(sps_context *ctx, const sps_csr *A, const double *dinv, double gersh,
                           int degree, sps_amg_level *L)
{
    double alpha[SPS_AMG_LANCZOS], beta[SPS_AMG_LANCZOS];
    size_t nc = row_chunks(A->nrows);
    double *w = sps__malloc(sps__mul_size((size_t)A->nrows + 1, 4 * sizeof *w));
    double *part = sps__malloc(sps__mul_size(nc + 1, sizeof *part));
    if (!w || !part) {
        sps__free(w);
        sps__free(part);
        return oom(ctx);
    }
    int m = lanczos(ctx, A, dinv, w, part, alpha, beta);
    sps__free(w);
    sps__free(part);
    return sps__amg_spectral_finish(ctx, A->nrows, gersh, degree, alpha, beta, m, L);
}

/* 1 / (sum_j |a_ij|) (0 for an empty row). */
static double l1_chunk(void *arg, sps_idx i0, sps_idx i1)
{
    const row_pass *m = arg;
    const sps_csr *A = m->A;
    for (sps_idx i = i0; i < i1; i++) {
        double s = 0.0;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) s += fabs(A->val[p]);
        m->dinv[i] = s > 0 ? 1.0 / s : 0.0;
    }
    return 0.0;
}

static void l1_inverse(sps_context *ctx, const sps_csr *A, double *dinv)
{
    row_pass m = {A, dinv, 0.0, NULL};
    run_chunks(ctx, A->nrows, l1_chunk, &m, NULL);
}

/* ---- coarse inverse -------------------------------------------------------- */

/* M = A densely (row-major; a zero row of A gets a unit diagonal: a
 * dependent nullspace column decouples its unknown, whose right-hand side
 * is 0). */
static void dense_load(const sps_csr *A, double *M)
{
    sps_idx n = A->nrows;
    memset(M, 0, (size_t)n * (size_t)n * sizeof *M);
    for (sps_idx i = 0; i < n; i++) {
        int empty = 1;
        for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++) {
            M[(size_t)i * n + A->col_idx[p]] = A->val[p];
            if (A->val[p] != 0.0) empty = 0;
        }
        if (empty) M[(size_t)i * n + i] = 1.0;
    }
}

static void swap_rows(double *M, sps_idx n, sps_idx a, sps_idx b)
{
    for (sps_idx j = 0; j < n && a != b; j++) {
        double t = M[(size_t)a * n + j];
        M[(size_t)a * n + j] = M[(size_t)b * n + j];
        M[(size_t)b * n + j] = t;
    }
}

static void swap_cols(double *M, sps_idx n, sps_idx a, sps_idx b)
{
    for (sps_idx i = 0; i < n && a != b; i++) {
        double t = M[(size_t)i * n + a];
        M[(size_t)i * n + a] = M[(size_t)i * n + b];
        M[(size_t)i * n + b] = t;
    }
}

/* y -= f x over a row (the inner loop of the inversion: vectorized where the
 * compiler is GCC, which does not vectorize at -O2; the same arithmetic, no
 * contraction on x86-64's baseline). */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize")))
#endif
static void row_update(double *restrict y, const double *restrict x, double f, sps_idx n)
{
    for (sps_idx j = 0; j < n; j++) y[j] -= f * x[j];
}

/* One Gauss-Jordan step in place on column c (row c already the pivot row):
 * row c becomes row c / p with 1 / p in column c; every other row i loses
 * a_ic times it, with 0 in column c first (the inverse's column c). */
static void gj_step(double *M, sps_idx n, sps_idx c)
{
    double *rc = M + (size_t)c * n, pv = rc[c];
    rc[c] = 1.0;
    for (sps_idx j = 0; j < n; j++) rc[j] /= pv;
    for (sps_idx i = 0; i < n; i++) {
        double *ri = M + (size_t)i * n, f = ri[c];
        if (i == c || f == 0.0) continue;
        ri[c] = 0.0;
        row_update(ri, rc, f, n);
    }
}

/* inv = A^-1 (row-major n x n): Gauss-Jordan in place with partial pivoting,
 * n^3 multiply-adds; the row interchanges come back as column interchanges
 * in reverse order at the end. */
sps_status sps__amg_dense_inverse(sps_context *ctx, const sps_csr *A, double *inv)
{
    sps_idx n = A->nrows;
    sps_idx *perm = sps__malloc(((size_t)n + 1) * sizeof *perm);
    if (!perm) return oom(ctx);
    dense_load(A, inv);
    sps_status st = SPS_OK;
    for (sps_idx c = 0; c < n && st == SPS_OK; c++) {
        sps_idx piv = c;
        for (sps_idx i = c + 1; i < n; i++)
            if (fabs(inv[(size_t)i * n + c]) > fabs(inv[(size_t)piv * n + c])) piv = i;
        if (inv[(size_t)piv * n + c] == 0.0) {
            st = sps__err(ctx, SPS_ERR_UNSUPPORTED, "amg: the coarsest matrix (%d rows) is singular", n);
            break;
        }
        perm[c] = piv;
        swap_rows(inv, n, c, piv);
        gj_step(inv, n, c);
    }
    for (sps_idx c = n - 1; st == SPS_OK && c >= 0; c--) swap_cols(inv, n, c, perm[c]);
    sps__free(perm);
    return st;
}

/* ---- the hierarchy --------------------------------------------------------- */

typedef struct build {
    sps_context *ctx;
    const sps_amg_prm *prm;
    sps_amg *h;
    double *B;          /* this level's nullspace, n x k (NULL: constant) */
    const double *user; /* the caller's B (not freed) */
    int k;
} build;

static const sps_csr *level_A(const sps_amg *h, const sps_csr *A0, int l)
{
    return l == 0 ? A0 : &h->lv[l].A;
}

/* Smoother scaling and spectral bound of level l. */
static sps_status level_smoother(build *b, const sps_csr *A, int l)
{
    sps_amg_level *L = &b->h->lv[l];
    sps_idx n = A->nrows;
    double *dinv = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *dinv));
    if (!L->dinv) L->dinv = sps__malloc(sps__mul_size((size_t)n + 1, sizeof *L->dinv));
    if (!dinv || !L->dinv) {
        sps__free(dinv);
        return oom(b->ctx);
    }
    double t0 = sps__now_ms(), g = 0.0;
    sps_status st = inverse_diag(b->ctx, A, dinv, &g);
    if (st == SPS_OK) st = spectral(b->ctx, A, dinv, g, b->prm->sweeps, L);
    if (b->prm->smoother == SPS_AMG_CHEBY) memcpy(L->dinv, dinv, (size_t)n * sizeof *dinv);
    else l1_inverse(b->ctx, A, L->dinv);
    b->h->ms[4] += sps__now_ms() - t0;
    sps__free(dinv);
    return st;
}

/* P of level l from its aggregates: P_tent smoothed with D^-1 (plain). */
static sps_status level_prolong(build *b, const sps_csr *A, int l, double *Bc)
{
    sps_amg_level *L = &b->h->lv[l];
    tent_in t = {L->agg, L->nagg, A->nrows, L->bs, b->k, b->B};
    sps_csr S;
    double *dinv = sps__malloc(sps__mul_size((size_t)A->nrows + 1, sizeof *dinv));
    if (!dinv) return oom(b->ctx);
    sps_status st = inverse_diag(b->ctx, A, dinv, NULL);
    if (st == SPS_OK) st = tentative(b->ctx, &t, &L->T, Bc);
    if (st == SPS_OK) {
        st = smoothing_matrix(b->ctx, A, dinv, 4.0 / (3.0 * L->rho), &S);
        if (st == SPS_OK) st = sps__amg_spgemm(b->ctx, &S, &L->T, &L->P);
        if (st == SPS_OK) st = sps__amg_transpose(b->ctx, &L->P, &L->R);
        smoothing_free(&S);
    }
    sps__free(dinv);
    return st;
}

/* Strength, aggregates, P, R and A_c for level l (-> l + 1); *Bc the
 * coarse nullspace (nagg k x k). */
static sps_status coarsen(build *b, const sps_csr *A, int l, double **Bc)
{
    sps_amg *h = b->h;
    sps_amg_level *L = &h->lv[l];
    sps_csr S;
    double t0 = sps__now_ms();
    sps_status st = sps__amg_strength(b->ctx, A, L->bs, b->prm->theta * ldexp(1.0, -l), &S);
    double t1 = sps__now_ms();
    h->ms[0] += t1 - t0;
    if (st != SPS_OK) return st;
    L->agg = sps__malloc(sps__mul_size((size_t)S.nrows + 1, sizeof *L->agg));
    st = L->agg ? sps__amg_aggregate(b->ctx, &S, L->agg, &L->nagg) : oom(b->ctx);
    sps__csr_free(&S);
    double t2 = sps__now_ms();
    h->ms[1] += t2 - t1;
    if (st == SPS_OK) {
        *Bc = sps__malloc(sps__mul_size((size_t)L->nagg * b->k * b->k + 1, sizeof **Bc));
        st = *Bc ? level_prolong(b, A, l, *Bc) : oom(b->ctx);
    }
    double t3 = sps__now_ms();
    h->ms[2] += t3 - t2;
    if (st == SPS_OK) st = sps__amg_spgemm(b->ctx, A, &L->P, &L->AP);
    if (st == SPS_OK) st = sps__amg_spgemm(b->ctx, &L->R, &L->AP, &h->lv[l + 1].A);
    h->ms[3] += sps__now_ms() - t3;
    return st;
}

static sps_status finish_coarse(build *b, const sps_csr *A)
{
    sps_amg *h = b->h;
    double t0 = sps__now_ms();
    h->nc = A->nrows;
    if (h->nc > SPS_AMG_MAX_DENSE)
        return sps__err(b->ctx, SPS_ERR_UNSUPPORTED,
                        "amg: the coarsest level has %d rows, above the dense limit %d; raise "
                        "levels= or lower coarse=",
                        h->nc, SPS_AMG_MAX_DENSE);
    h->cinv = sps__malloc(sps__mul_size((size_t)h->nc * h->nc + 1, sizeof *h->cinv));
    sps_status st = h->cinv ? sps__amg_dense_inverse(b->ctx, A, h->cinv) : oom(b->ctx);
    h->ms[5] += sps__now_ms() - t0;
    return st;
}

/* Go on coarsening level l (n rows)? */
int sps__amg_coarsen_more(const sps_amg_prm *prm, int l, sps_idx n)
{
    return n > prm->coarse && l + 1 < prm->levels && l + 1 < SPS_AMG_MAX_LEVELS;
}

static sps_status levels(build *b, const sps_csr *A0, int l0)
{
    sps_amg *h = b->h;
    for (int l = l0;; l++) {
        const sps_csr *A = level_A(h, A0, l);
        sps_amg_level *L = &h->lv[l];
        L->n = A->nrows;
        L->nnz = A->nnz;
        h->nlevels = l + 1;
        if (!sps__amg_coarsen_more(b->prm, l, A->nrows)) return finish_coarse(b, A);
        sps_status st = level_smoother(b, A, l);
        if (st != SPS_OK) return st;
        double *Bc = NULL;
        st = coarsen(b, A, l, &Bc);
        if (b->B != b->user) sps__free(b->B);
        b->B = Bc;
        if (st != SPS_OK) return st;
        h->lv[l + 1].bs = b->k;
        if (h->lv[l + 1].A.nrows >= A->nrows) { /* coarsening stalled: this is the coarsest */
            sps__csr_free(&h->lv[l + 1].A);
            sps__csr_free(&L->P);
            sps__csr_free(&L->R);
            sps__csr_free(&L->T);
            sps__csr_free(&L->AP);
            h->nlevels = l + 1;
            if (A->nrows > SPS_AMG_MAX_DENSE)
                return sps__err(b->ctx, SPS_ERR_UNSUPPORTED,
                                "amg: coarsening stalled at level %d (%d rows): too few couplings "
                                "are strong at theta=%g; lower theta=",
                                l, A->nrows, b->prm->theta * ldexp(1.0, -l));
            return finish_coarse(b, A);
        }
    }
}

static void describe_levels(sps_amg *h, char *s, size_t len)
{
    size_t k = 0;
    int64_t nnz = 0;
    sps_idx rows = 0;
    for (int l = 0; l < h->nlevels; l++) {
        nnz += h->lv[l].nnz;
        rows += h->lv[l].n;
    }
    h->op_complexity = h->lv[0].nnz ? (double)nnz / (double)h->lv[0].nnz : 1.0;
    h->grid_complexity = h->lv[0].n ? (double)rows / (double)h->lv[0].n : 1.0;
    k += (size_t)snprintf(s + k, len - k,
                          "amg: %d levels, operator complexity %.3f, grid complexity %.3f, "
                          "smoother %s x%d\n",
                          h->nlevels, h->op_complexity, h->grid_complexity,
                          h->smoother == SPS_AMG_CHEBY ? "cheby" : "l1jacobi", h->sweeps);
    for (int l = 0; l < h->nlevels && k < len; l++)
        k += (size_t)snprintf(s + k, len - k, "  level %d: %d rows, %lld nnz, %.1f per row%s\n", l,
                              h->lv[l].n, (long long)h->lv[l].nnz,
                              h->lv[l].n ? (double)h->lv[l].nnz / h->lv[l].n : 0.0,
                              l + 1 == h->nlevels ? " (dense inverse)" : "");
}

void sps__amg_describe(sps_amg *h, const char *extra)
{
    char lv[1536];
    describe_levels(h, lv, sizeof lv);
    char dev[160] = "";
    double ap = 0.0; /* bytes of the A P patterns the device levels keep (the re-setup's) */
    for (int l = 0; l < h->gpu_levels; l++)
        if (h->lv[l].dap_rp) ap += ((double)h->lv[l].n + 1 + (double)h->lv[l].ap_nnz) * sizeof(sps_idx);
    if (h->gpu_levels > 0)
        snprintf(dev, sizeof dev, " (levels 0-%d on the device), transfers %.1f; A P patterns kept %.1f MiB",
                 h->gpu_levels - 1, h->ms_download, ap / 1048576.0);
    snprintf(h->desc, sizeof h->desc,
             "%s  setup ms%s: strength %.1f, aggregate %.1f, prolong %.1f, galerkin %.1f, "
             "spectral %.1f, coarse %.1f%s",
             lv, h->gpu_levels > 0 ? " (setup=gpu)" : "", h->ms[0], h->ms[1], h->ms[2], h->ms[3],
             h->ms[4], h->ms[5], extra);
    if (dev[0]) { /* before the final newline of extra */
        size_t k = strlen(h->desc);
        int nl = k > 0 && h->desc[k - 1] == '\n';
        if (nl) h->desc[--k] = 0;
        snprintf(h->desc + k, sizeof h->desc - k, "%s%s", dev, nl ? "\n" : "");
    }
}

/* A device copy setup=gpu left on A and nobody took (a failed setup). */
static void drop_device_copy(sps_csr *A)
{
#if SPS_HAVE_CUDA
    sps__dcsr_free(A->dev);
#endif
    A->dev = NULL;
}

void sps__amg_free(sps_amg *h)
{
    for (int l = 0; l < SPS_AMG_MAX_LEVELS; l++) {
        sps_amg_level *L = &h->lv[l];
        if (l > 0) drop_device_copy(&L->A);
        drop_device_copy(&L->P);
        drop_device_copy(&L->R);
        drop_device_copy(&L->T);
#if SPS_HAVE_CUDA
        sps__dfree(L->dagg);
        sps__dfree(L->ddinv);
        sps__dfree(L->dap_rp);
        sps__dfree(L->dap_ci);
#endif
        if (l > 0) sps__csr_free(&L->A);
        sps__csr_free(&L->P);
        sps__csr_free(&L->R);
        sps__csr_free(&L->T);
        sps__csr_free(&L->AP);
        sps__free(L->dinv);
        sps__free(L->agg);
        sps__free(L->x);
        sps__free(L->b);
        sps__free(L->r);
        sps__free(L->d);
    }
    sps__free(h->cinv);
#if SPS_HAVE_CUDA
    sps__dfree(h->dcinv);
#endif
    memset(h, 0, sizeof *h);
}

sps_status sps__amg_init(sps_context *ctx, const sps_amg_prm *prm, const sps_csr *A, int block,
                         int k, const double *B, sps_amg *h)
{
    memset(h, 0, sizeof *h);
    h->smoother = prm->smoother;
    h->sweeps = prm->sweeps;
    h->nnull = B ? k : 1;
    h->lv[0].bs = block;
    h->prm = *prm;
    if (block < 1 || A->nrows % block)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "amg: %d rows are not a multiple of block=%d",
                        A->nrows, block);
    return SPS_OK;
}

sps_status sps__amg_build(sps_context *ctx, const sps_amg_prm *prm, const sps_csr *A, int block,
                          int k, const double *B, sps_amg *h)
{
    sps_status st = sps__amg_init(ctx, prm, A, block, k, B, h);
    if (st == SPS_OK) st = sps__amg_pattern(ctx, A, &h->pattern);
    if (st != SPS_OK) return st;
    build b = {ctx, prm, h, (double *)B, B, B ? k : 1};
    st = levels(&b, A, 0);
    if (b.B != B) sps__free(b.B);
    if (st == SPS_OK) sps__amg_describe(h, "\n");
    return st;
}

sps_status sps__amg_build_from(sps_context *ctx, const sps_csr *A0, int l0, double *B, sps_amg *h)
{
    build b = {ctx, &h->prm, h, B, NULL, h->nnull};
    sps_status st = levels(&b, A0, l0);
    sps__free(b.B);
    if (st == SPS_OK) sps__amg_describe(h, "\n");
    return st;
}

/* ---- numeric-only re-setup ------------------------------------------------- */

/* The fingerprint's words: A's row pointers, then its column indices, cut
 * into chunks of PATTERN_CHUNK words (the last one padded with zeros); each
 * chunk's FNV-1a hash (four lanes over the words in turn, so a thread is
 * not bound to one multiply chain) plus its length goes into its slot. The chunks are fixed, so the result does not depend
 * on the threads. */
#define PATTERN_CHUNK 256

typedef struct pattern_job {
    const sps_csr *A;
    uint64_t *chunk;
} pattern_job;

static void pattern_chunks(void *arg, sps_idx lo, sps_idx hi)
{
    const pattern_job *j = arg;
    const int64_t nr = (int64_t)j->A->nrows + 1, nw = nr + j->A->nnz;
    uint32_t w[PATTERN_CHUNK];
    for (sps_idx c = lo; c < hi; c++) {
        int64_t k0 = (int64_t)c * PATTERN_CHUNK, k1 = k0 + PATTERN_CHUNK < nw ? k0 + PATTERN_CHUNK : nw;
        int64_t m = k0 < nr ? (k1 < nr ? k1 : nr) - k0 : 0; /* the chunk's row pointers */
        if (m > 0) memcpy(w, j->A->row_ptr + k0, (size_t)m * sizeof *w);
        if (k1 - k0 > m) memcpy(w + m, j->A->col_idx + (k0 + m - nr), (size_t)(k1 - k0 - m) * sizeof *w);
        int len = (int)(k1 - k0);
        for (int k = len; k < PATTERN_CHUNK; k++) w[k] = 0; /* the last chunk: 0 after its words */
        uint64_t z0 = 0xcbf29ce484222325ull, z1 = 0x84222325cbf29ce4ull, z2 = 0x9ce484222325cbf2ull,
                 z3 = 0x2325cbf29ce48422ull;
        for (int k = 0; k < PATTERN_CHUNK; k += 4) {
            z0 = (z0 ^ w[k]) * 0x100000001b3ull;
            z1 = (z1 ^ w[k + 1]) * 0x100000001b3ull;
            z2 = (z2 ^ w[k + 2]) * 0x100000001b3ull;
            z3 = (z3 ^ w[k + 3]) * 0x100000001b3ull;
        }
        j->chunk[c] = (z0 ^ (z1 * 3) ^ (z2 * 5) ^ (z3 * 7)) + (uint64_t)len;
    }
}

int64_t sps__amg_pattern_slots(const sps_csr *A)
{
    return ((int64_t)A->nrows + 1 + A->nnz + PATTERN_CHUNK - 1) / PATTERN_CHUNK;
}

uint64_t sps__amg_pattern_into(sps_context *ctx, const sps_csr *A, uint64_t *slot)
{
    uint64_t z = 0xcbf29ce484222325ull ^ (uint64_t)A->nrows ^ ((uint64_t)A->nnz << 32);
    int64_t nc = sps__amg_pattern_slots(A);
    pattern_job j = {A, slot};
    sps__amg_par_rows(ctx, (sps_idx)nc, pattern_chunks, &j);
    for (int64_t c = 0; c < nc; c++) z = (z ^ slot[c]) * 0x100000001b3ull;
    return z;
}

sps_status sps__amg_pattern(sps_context *ctx, const sps_csr *A, uint64_t *out)
{
    uint64_t *slot = sps__malloc(sps__mul_size((size_t)sps__amg_pattern_slots(A), sizeof *slot));
    if (!slot) return oom(ctx);
    *out = sps__amg_pattern_into(ctx, A, slot);
    sps__free(slot);
    return SPS_OK;
}

/* R's values = P' (R's pattern is P's transpose, built by sps__amg_transpose). */
static sps_status transpose_into(sps_context *ctx, const sps_csr *P, sps_csr *R)
{
    sps_idx *next = sps__malloc(sps__mul_size((size_t)R->nrows + 1, sizeof *next));
    if (!next) return oom(ctx);
    memcpy(next, R->row_ptr, ((size_t)R->nrows + 1) * sizeof *next);
    for (sps_idx i = 0; i < P->nrows; i++)
        for (sps_idx p = P->row_ptr[i]; p < P->row_ptr[i + 1]; p++) R->val[next[P->col_idx[p]]++] = P->val[p];
    sps__free(next);
    return SPS_OK;
}

/* Level l's smoother, P, R and A_{l+1} for new values of A. */
static sps_status level_numeric(build *b, const sps_csr *A, int l)
{
    sps_amg *h = b->h;
    sps_amg_level *L = &h->lv[l];
    sps_status st = level_smoother(b, A, l);
    if (st != SPS_OK) return st;
    double t0 = sps__now_ms();
    sps_csr S;
    double *dinv = sps__malloc(sps__mul_size((size_t)A->nrows + 1, sizeof *dinv));
    if (!dinv) st = oom(b->ctx);
    if (st == SPS_OK) st = inverse_diag(b->ctx, A, dinv, NULL);
    if (st == SPS_OK) st = smoothing_matrix(b->ctx, A, dinv, 4.0 / (3.0 * L->rho), &S);
    if (st == SPS_OK) {
        st = sps__amg_spgemm_into(b->ctx, &S, &L->T, &L->P);
        smoothing_free(&S);
        if (st == SPS_OK) st = transpose_into(b->ctx, &L->P, &L->R);
    }
    sps__free(dinv);
    double t1 = sps__now_ms();
    h->ms[2] += t1 - t0;
    if (st == SPS_OK && !L->AP.row_ptr) /* setup=gpu keeps no A P: its pattern now, the same sums */
        st = sps__amg_spgemm(b->ctx, A, &L->P, &L->AP);
    else if (st == SPS_OK)
        st = sps__amg_spgemm_into(b->ctx, A, &L->P, &L->AP);
    if (st == SPS_OK) st = sps__amg_spgemm_into(b->ctx, &L->R, &L->AP, &h->lv[l + 1].A);
    h->ms[3] += sps__now_ms() - t1;
    return st;
}

sps_status sps__amg_pattern_error(sps_context *ctx, const sps_csr *A, const sps_amg *h)
{
    return sps__err(ctx, SPS_ERR_INVALID_ARG,
                    "amg: numeric re-setup needs the pattern of the setup's matrix (%d rows, "
                    "%lld entries); got %d rows, %lld entries%s",
                    h->lv[0].n, (long long)h->lv[0].nnz, A->nrows, (long long)A->nnz,
                    A->nnz == h->lv[0].nnz && A->nrows == h->lv[0].n ? " in another pattern" : "");
}

sps_status sps__amg_numeric_from(sps_context *ctx, const sps_csr *A, sps_amg *h, int l0)
{
    build b = {ctx, &h->prm, h, NULL, NULL, h->nnull};
    sps_status st = SPS_OK;
    for (int l = l0; l + 1 < h->nlevels && st == SPS_OK; l++)
        st = level_numeric(&b, l ? &h->lv[l].A : A, l);
    if (st == SPS_OK) {
        double t0 = sps__now_ms();
        const sps_csr *C = h->nlevels > 1 ? &h->lv[h->nlevels - 1].A : A;
        st = sps__amg_dense_inverse(ctx, C, h->cinv);
        h->ms[5] += sps__now_ms() - t0;
    }
    return st;
}

sps_status sps__amg_numeric(sps_context *ctx, const sps_csr *A, sps_amg *h)
{
    uint64_t pattern = 0;
    if (A->nrows == h->lv[0].n && A->nnz == h->lv[0].nnz) {
        sps_status sp = sps__amg_pattern(ctx, A, &pattern);
        if (sp != SPS_OK) return sp;
    }
    if (A->nrows != h->lv[0].n || A->nnz != h->lv[0].nnz || pattern != h->pattern)
        return sps__amg_pattern_error(ctx, A, h);
    if (h->host_partial)
        return sps__err(ctx, SPS_ERR_INTERNAL, "amg: numeric re-setup of a hierarchy not yet on the host");
    /* A GPU context re-sets a hierarchy with device levels up on the device
     * (sps__amg_numeric_gpu); this host code serves host contexts, the
     * host-built hierarchies of GPU contexts (sps__amg_gpu_values uploads
     * the results) and the tests. */
    memset(h->ms, 0, sizeof h->ms);
    sps_status st = sps__amg_numeric_from(ctx, A, h, 0);
    if (st == SPS_OK) sps__amg_describe(h, " (numeric re-setup)\n");
    return st;
}
