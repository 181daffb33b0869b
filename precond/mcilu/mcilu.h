/* SPDX-License-Identifier: MIT */
/* spsolve/precond/mcilu/mcilu.h: multicolor ILU(0) / IC(0) (`ilu0:order=color`,
 * `ic0:order=color`), shared by the host reference (mcilu.c) and the kernels
 * (mcilu.cu). The per-node and per-row steps are inline functions compiled
 * for both, so the device runs the host's arithmetic in the host's order.
 *
 * Coloring: Jones-Plassmann rounds on the symmetrized pattern of A without
 * its diagonal. Node i has the fixed priority (sps__mcilu_prio(i), i). In
 * round r every uncoloured node whose priority beats that of each neighbour
 * still uncoloured at the start of the round takes the smallest colour no
 * neighbour coloured in an earlier round holds. Two neighbours never both win
 * a round, so the colours depend only on the graph.
 * Permutation: new row k is old row perm[k], colours in order, old index
 * ascending inside a colour; the factor is ILU(0) of PAP' (IC(0) of
 * tril(PAP')), whose rows of one colour never reference each other. */
#ifndef SPS_MCILU_H
#define SPS_MCILU_H

#include "../pc_impl.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define SPS_MC_HD __host__ __device__
#else
#define SPS_MC_HD
#endif

/* Device arithmetic without FMA contraction: bitwise the host's. */
#ifdef __CUDA_ARCH__
#define SPS_MC_MUL(a, b) __dmul_rn((a), (b))
#define SPS_MC_SUB(a, b) __dsub_rn((a), (b))
#define SPS_MC_DIV(a, b) __ddiv_rn((a), (b))
#define SPS_MC_SQRT(a) __dsqrt_rn(a)
#else
#define SPS_MC_MUL(a, b) ((a) * (b))
#define SPS_MC_SUB(a, b) ((a) - (b))
#define SPS_MC_DIV(a, b) ((a) / (b))
#define SPS_MC_SQRT(a) sqrt(a)
#endif

#define SPS_MC_UNCOLORED (-1)

typedef struct sps_mcilu {
    sps_idx n;
    int cholesky;     /* ic0 */
    sps_idx ncolors;
    sps_idx rounds;   /* Jones-Plassmann rounds the coloring took */
    sps_idx *grp, *gci; /* the symmetrized graph, no diagonal (setup only) */
    sps_idx *color;   /* colour of old row i */
    sps_idx *perm;    /* new row k is old row perm[k] */
    sps_idx *cptr;    /* colour c: new rows [cptr[c], cptr[c + 1]) */
    sps_csr F;        /* the factor: ilu0 L\U of PAP'; ic0 L of tril(PAP') */
    sps_idx *dpos;    /* ilu0: F's diagonal positions; ic0: T's (T.row_ptr[k]) */
    sps_idx *amap;    /* F.val[q] = A.val[amap[q]] before factorizing */
    sps_csr T;        /* ic0: L' (rows start with the diagonal) */
    sps_idx *tmap;    /* ic0: T.val[q] = F.val[tmap[q]] */
    double *y;        /* the host apply's permuted vector */
    double ms[4];     /* setup wall times: graph, colouring, permutation (F, T), factor */
    char desc[160];   /* sps_precond_describe */
} sps_mcilu;

/* splitmix64 of the row index: the node's priority. */
SPS_MC_HD static inline unsigned long long sps__mcilu_prio(sps_idx i)
{
    unsigned long long z = (unsigned long long)(unsigned)i + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Does node i win round r? rnd[j]: the round j was coloured in (-1: not yet);
 * a neighbour coloured in round r itself still competes (the round's start). */
SPS_MC_HD static inline int sps__mcilu_wins(sps_idx i, sps_idx r, const sps_idx *rp, const sps_idx *ci,
                                          const sps_idx *rnd)
{
    unsigned long long pi = sps__mcilu_prio(i);
    for (sps_idx p = rp[i]; p < rp[i + 1]; p++) {
        sps_idx j = ci[p];
        if (rnd[j] != SPS_MC_UNCOLORED && rnd[j] != r) continue;
        unsigned long long pj = sps__mcilu_prio(j);
        if (pj > pi || (pj == pi && j > i)) return 0;
    }
    return 1;
}

/* The smallest colour no neighbour of i coloured before round r holds,
 * searched 64 colours at a time. */
SPS_MC_HD static inline sps_idx sps__mcilu_pick(sps_idx i, sps_idx r, const sps_idx *rp, const sps_idx *ci,
                                              const sps_idx *rnd, const sps_idx *color)
{
    for (sps_idx base = 0;; base += 64) {
        unsigned long long used = 0;
        for (sps_idx p = rp[i]; p < rp[i + 1]; p++) {
            sps_idx j = ci[p];
            if (rnd[j] == SPS_MC_UNCOLORED || rnd[j] >= r) continue;
            sps_idx c = color[j] - base;
            if (c >= 0 && c < 64) used |= 1ull << c;
        }
        if (used != ~0ull)
            for (sps_idx b = 0; b < 64; b++)
                if (!(used >> b & 1ull)) return base + b;
    }
}

/* Row i of the symmetrized graph: A's row i (rp, ci) merged with A' row i
 * (trp, tci), both sorted, the diagonal dropped, duplicates once. Returns its
 * length; writes it to out unless out is NULL. */
SPS_MC_HD static inline sps_idx sps__mcilu_merge_row(sps_idx i, const sps_idx *rp, const sps_idx *ci,
                                                   const sps_idx *trp, const sps_idx *tci, sps_idx *out)
{
    const sps_idx big = 0x7fffffff;
    sps_idx p = rp[i], pe = rp[i + 1], q = trp[i], qe = trp[i + 1], k = 0;
    while (p < pe || q < qe) {
        sps_idx a = p < pe ? ci[p] : big, b = q < qe ? tci[q] : big;
        sps_idx c = a < b ? a : b;
        p += a == c;
        q += b == c;
        if (c == i) continue;
        if (out) out[k] = c;
        k++;
    }
    return k;
}

/* The first position in [lo, hi) of the sorted ci whose column is >= c. */
SPS_MC_HD static inline sps_idx sps__mcilu_seek(const sps_idx *ci, sps_idx lo, sps_idx hi, sps_idx c)
{
    while (lo < hi) {
        sps_idx mid = lo + (hi - lo) / 2;
        if (ci[mid] < c) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* ILU(0) of row i (IKJ, as precond/ilu.c's ilu0_numeric; the position a
 * row-k entry updates is found by merging the two sorted rows, skipping ahead
 * by binary search, instead of a dense map: the same updates in the same
 * order, and a long row k costs a row i of a few entries log time). Rows i
 * references are final. Returns 0 on a zero pivot. */
SPS_MC_HD static inline int sps__mcilu_ilu_row(sps_idx i, const sps_idx *rp, const sps_idx *ci,
                                             const sps_idx *dp, double *v)
{
    sps_idx end = rp[i + 1];
    for (sps_idx p = rp[i]; p < dp[i]; p++) {
        sps_idx k = ci[p], a = p + 1, q = dp[k] + 1, qe = rp[k + 1];
        double l = SPS_MC_DIV(v[p], v[dp[k]]);
        v[p] = l;
        while (q < qe && a < end) {
            if (ci[q] == ci[a]) {
                v[a] = SPS_MC_SUB(v[a], SPS_MC_MUL(l, v[q]));
                q++;
                a++;
            } else if (ci[q] < ci[a]) {
                q = sps__mcilu_seek(ci, q + 1, qe, ci[a]);
            } else {
                a = sps__mcilu_seek(ci, a + 1, end, ci[q]);
            }
        }
    }
    return v[dp[i]] != 0.0;
}

/* IC(0) of row i of L (rows end with the diagonal), as precond/ilu.c's
 * ic0_numeric, merging as above. Returns 0 on a pivot that is not > 0 (the
 * diagonal then keeps its unfactored value). */
SPS_MC_HD static inline int sps__mcilu_ic_row(sps_idx i, const sps_idx *rp, const sps_idx *ci, double *v)
{
    sps_idx d = rp[i + 1] - 1;
    double dd = v[d];
    for (sps_idx p = rp[i]; p < d; p++) {
        sps_idx k = ci[p], dk = rp[k + 1] - 1, a = rp[i], q = rp[k];
        double s = v[p];
        while (q < dk && a < p) {
            if (ci[q] == ci[a]) {
                s = SPS_MC_SUB(s, SPS_MC_MUL(v[a], v[q]));
                q++;
                a++;
            } else if (ci[q] < ci[a]) {
                q = sps__mcilu_seek(ci, q + 1, dk, ci[a]);
            } else {
                a = sps__mcilu_seek(ci, a + 1, p, ci[q]);
            }
        }
        v[p] = SPS_MC_DIV(s, v[dk]);
        dd = SPS_MC_SUB(dd, SPS_MC_MUL(v[p], v[p]));
    }
    if (!(dd > 0.0)) return 0;
    v[d] = SPS_MC_SQRT(dd);
    return 1;
}

/* Forward step of new row k over its m terms at v[o + j h], ci[o + j h]
 * (j < m, in column order; the CSR row: o its start, h = 1; the device
 * apply's sliced ELL, mcilu.cu: a slice's stride): s = r[perm[k]] - sum
 * v y[ci]; y[k] = s (unit) or s / piv (ic0: the diagonal that ends the row). */
SPS_MC_HD static inline void sps__mcilu_fwd_terms(sps_idx k, long long o, int h, sps_idx m, const sps_idx *ci,
                                                const double *v, int unit, double piv, const sps_idx *perm,
                                                const double *r, double *y)
{
    double s = r[perm[k]];
    for (sps_idx j = 0; j < m; j++, o += h) s = SPS_MC_SUB(s, SPS_MC_MUL(v[o], y[ci[o]]));
    y[k] = unit ? s : SPS_MC_DIV(s, piv);
}

/* Backward step of new row k over its m upper terms (stored as above):
 * y[k] = (y[k] - sum v y[ci]) / piv (the diagonal); z[perm[k]] = y[k]. */
SPS_MC_HD static inline void sps__mcilu_bwd_terms(sps_idx k, long long o, int h, sps_idx m, const sps_idx *ci,
                                                const double *v, double piv, const sps_idx *perm, double *y,
                                                double *z)
{
    double s = y[k];
    for (sps_idx j = 0; j < m; j++, o += h) s = SPS_MC_SUB(s, SPS_MC_MUL(v[o], y[ci[o]]));
    s = SPS_MC_DIV(s, piv);
    y[k] = s;
    z[perm[k]] = s;
}

/* The CSR row's steps: forward over [lo, hi) (ic0: v[hi] the diagonal),
 * backward over (d, hi) with v[d] the diagonal. */
SPS_MC_HD static inline void sps__mcilu_fwd_row(sps_idx k, sps_idx lo, sps_idx hi, const sps_idx *ci,
                                              const double *v, int unit, const sps_idx *perm,
                                              const double *r, double *y)
{
    sps__mcilu_fwd_terms(k, lo, 1, hi - lo, ci, v, unit, unit ? 1.0 : v[hi], perm, r, y);
}

SPS_MC_HD static inline void sps__mcilu_bwd_row(sps_idx k, sps_idx d, sps_idx hi, const sps_idx *ci,
                                              const double *v, const sps_idx *perm, double *y, double *z)
{
    sps__mcilu_bwd_terms(k, (long long)d + 1, 1, hi - d - 1, ci, v, v[d], perm, y, z);
}

/* ---- host (mcilu.c) ------------------------------------------------------- */

/* The setup of `ilu0:order=color` (cholesky 0) or `ic0:order=color` on
 * in->A (ic0: symmetry already checked): the diagonal check, the graph, and
 * on a host context the coloring, permutation, factor and apply. On a GPU
 * context it stops after the graph: sps__mcilu_setup_dev colours. */
sps_status sps__mcilu_setup_host(sps_precond *pc, const sps_pc_input *in, int cholesky);
/* Numeric-only refresh (colours, permutation and patterns kept). */
sps_status sps__mcilu_refresh(sps_precond *pc, const sps_matrix *A);
void sps__mcilu_free(sps_mcilu *m);

/* Jones-Plassmann on the graph of m (m->grp, m->gci): m->color, ncolors, rounds. */
sps_status sps__mcilu_color(sps_context *ctx, sps_mcilu *m);
/* From m->color: perm, cptr, and F's pattern with amap (and T, tmap for
 * ic0), F's values gathered from A (not factorized). */
sps_status sps__mcilu_permute(sps_context *ctx, sps_mcilu *m, const sps_csr *A);
/* Factorize F.val in place by colours; *bad: the first new row whose pivot
 * fails (-1: none). */
void sps__mcilu_factor(const sps_mcilu *m, double *v, sps_idx *bad);

/* What a built preconditioner holds, for tests and tools. */
typedef struct sps_mcilu_view {
    sps_idx n, ncolors, rounds;
    int64_t nnz;  /* F's entries */
    double ms[4]; /* the setup's wall times: graph, colouring, permutation, factor */
} sps_mcilu_view;

/* Copies of what pc holds (host or device): colours (n), perm (n), factor
 * values (F.nnz); any pointer may be NULL. *view gets the sizes. pc must be
 * an order=color ilu0/ic0. */
sps_status sps__mcilu_fetch(const sps_precond *pc, sps_mcilu_view *view, sps_idx *color, sps_idx *perm,
                            double *fval);
/* Is pc an order=color ilu0/ic0 (with n > 0)? */
int sps__mcilu_is(const sps_precond *pc);
/* Its summary ("N colours in R Jones-Plassmann rounds; apply: 2N sweeps by
 * colour"), or NULL when pc is not one (sps_precond_describe). */
const char *sps__mcilu_describe(const sps_precond *pc);
/* Writes m->desc from ncolors, rounds. */
void sps__mcilu_set_desc(sps_mcilu *m);

#if SPS_HAVE_CUDA
/* Device setup (mcilu.cu): the whole of it, from A's device copy (or one
 * upload); the host object (host) is empty on a GPU context. */
sps_status sps__mcilu_setup_dev(sps_precond *pc, const sps_pc_input *in, sps_mcilu *host);
sps_status sps__mcilu_refresh_dev(sps_precond *pc, const sps_matrix *A);
sps_status sps__mcilu_fetch_dev(const sps_precond *pc, sps_mcilu_view *view, sps_idx *color,
                                sps_idx *perm, double *fval);
int sps__mcilu_is_dev(const sps_precond *pc);
const char *sps__mcilu_describe_dev(const sps_precond *pc);
/* For tests: the device's symbolic setup of A (pc: a GPU-context ilu0/ic0,
 * for the context and the messages; cholesky: ic0) downloaded into a new
 * host object *out (sps__mcilu_free): the graph (grp, gci), color, perm,
 * cptr, F (pattern and A's values, not factorized), dpos, amap and, for
 * ic0, T and tmap, each to be compared bitwise with a host build's. */
sps_status sps__mcilu_symbolic_dev(sps_precond *pc, const sps_matrix *A, int cholesky, sps_mcilu **out);
#endif

#ifdef __cplusplus
}
#endif
#endif
