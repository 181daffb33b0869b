/* SPDX-License-Identifier: MIT */
/* spsolve/precond/parilu/parilu.h: ILU(0) / IC(0) factors by fixed-point
 * sweeps (`ilu0:factor=par,fsweeps=K`, `ic0:factor=par`): Chow and Patel,
 * "Fine-grained parallel incomplete LU factorization", SIAM J. Sci. Comput.
 * 37 (2015). Shared by the host reference (parilu.c) and the kernels
 * (parilu.cu): the per-entry step is an inline function compiled for both, so
 * the device does the host's operations in the host's order, bitwise.
 *
 * ilu0 (F in A's pattern, L strictly lower with a unit diagonal, U upper),
 * for every entry (i, j) of the pattern:
 *   i > j:  l_ij = (a_ij - sum_{k<j} l_ik u_kj) / u_jj
 *   i <= j: u_ij =  a_ij - sum_{k<i} l_ik u_kj
 * ic0 (F = tril(A), rows end with the diagonal):
 *   i > j:  l_ij = (a_ij - sum_{k<j} l_ik l_jk) / l_jj
 *   i = j:  l_ii = sqrt(a_ii - sum_{k<i} l_ik^2), kept signed: s < 0 gives
 *           -sqrt(-s) (no NaN storm inside the sweeps; a pivot <= 0 after the
 *           last sweep is refused naming its row).
 * The sums run over k in increasing order, the terms found by merging row i
 * of L with column j of U (ic0: row j of L), both sorted. Each sweep reads
 * only the previous sweep's values (two buffers, Jacobi style): the result
 * does not depend on the order the entries are computed in.
 * Start: l_ij = a_ij / a_jj, u_ij = a_ij (ic0: l_ij = a_ij / sqrt(a_jj),
 * l_jj = sqrt(a_jj), signed as above).
 * The fixed point is the exact ILU(0)/IC(0); with the sums in this order it
 * is reached bitwise (precond/ilu.c sums in the same order), after at most as
 * many sweeps as the longest chain of dependencies between entries. */
#ifndef SPS_PARILU_H
#define SPS_PARILU_H

#include "../pc_impl.h"

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __CUDACC__
#define SPS_PI_HD __host__ __device__
#else
#define SPS_PI_HD
#endif

/* Device arithmetic without FMA contraction: bitwise the host's (the host
 * build has no FMA contraction either: -O2 on x86-64 without -march). */
#ifdef __CUDA_ARCH__
#define SPS_PI_MUL(a, b) __dmul_rn((a), (b))
#define SPS_PI_SUB(a, b) __dsub_rn((a), (b))
#define SPS_PI_DIV(a, b) __ddiv_rn((a), (b))
#define SPS_PI_SQRT(a) __dsqrt_rn(a)
#else
#define SPS_PI_MUL(a, b) ((a) * (b))
#define SPS_PI_SUB(a, b) ((a) - (b))
#define SPS_PI_DIV(a, b) ((a) / (b))
#define SPS_PI_SQRT(a) sqrt(a)
#endif

/* Kinds of a refused row (bad = row * 4 + kind; the smallest wins). */
#define SPS_PI_PIVOT 1   /* ilu0: u_ii == 0; ic0: l_ii <= 0 (finite) */
#define SPS_PI_NONFIN 2  /* an entry of the row is Inf or NaN */

/* The pattern the sweeps run on: F's CSR (rp, ci), each entry's row (row),
 * the diagonal positions (dpos), and for ilu0 F by columns: column j holds
 * cp[j + 1] - cp[j] entries, rows ascending, cr[y] the row of the y-th and
 * cq[y] its position in F. ic0 needs no columns (cp, cr, cq NULL). */
typedef struct sps_parilu_pat {
    sps_idx n;
    int64_t nnz;
    int cholesky;
    const sps_idx *rp, *ci, *row, *dpos, *cp, *cr, *cq;
} sps_parilu_pat;

/* First position in [lo, hi) of the sorted x whose value is >= key. */
SPS_PI_HD static inline sps_idx sps__parilu_lbound(const sps_idx *x, sps_idx lo, sps_idx hi, sps_idx key)
{
    while (lo < hi) {
        sps_idx mid = lo + (hi - lo) / 2;
        if (x[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* s - sum_k xv[a] yv[b] over the k < m found in both sorted lists
 * xk[xa..xe) and yk[ya..ye), in increasing k; a skip jumps by binary search,
 * so a long list against a short one costs the short one's length times a
 * logarithm. xp, yp: the value positions (NULL: the list position itself). */
SPS_PI_HD static inline double sps__parilu_dot(double s, sps_idx m, const sps_idx *xk, sps_idx xa, sps_idx xe,
                                             const sps_idx *yk, const sps_idx *yp, sps_idx ya, sps_idx ye,
                                             const double *v)
{
    while (xa < xe && ya < ye) {
        sps_idx kx = xk[xa], ky = yk[ya];
        if (kx >= m || ky >= m) break;
        if (kx == ky) {
            s = SPS_PI_SUB(s, SPS_PI_MUL(v[xa], v[yp ? yp[ya] : ya]));
            xa++;
            ya++;
        } else if (kx < ky) {
            xa = sps__parilu_lbound(xk, xa + 1, xe, ky);
        } else {
            ya = sps__parilu_lbound(yk, ya + 1, ye, kx);
        }
    }
    return s;
}

/* sqrt(s) with s's sign (see above). */
SPS_PI_HD static inline double sps__parilu_ssqrt(double s)
{
    return s < 0.0 ? -SPS_PI_SQRT(-s) : SPS_PI_SQRT(s);
}

/* The starting value of entry p from A's values a. */
SPS_PI_HD static inline double sps__parilu_start(const sps_parilu_pat *P, int64_t p, const double *a)
{
    sps_idx i = P->row[p], j = P->ci[p];
    if (P->cholesky) {
        double d = sps__parilu_ssqrt(a[P->rp[j + 1] - 1]);
        return j == i ? d : SPS_PI_DIV(a[p], d);
    }
    return j < i ? SPS_PI_DIV(a[p], a[P->dpos[j]]) : a[p];
}

/* One sweep's new value of entry p from the previous sweep's values v. */
SPS_PI_HD static inline double sps__parilu_entry(const sps_parilu_pat *P, int64_t p, const double *a,
                                               const double *v)
{
    sps_idx i = P->row[p], j = P->ci[p];
    if (P->cholesky) { /* row i of L against row j of L, k < j */
        double s = sps__parilu_dot(a[p], j, P->ci, P->rp[i], P->rp[i + 1] - 1, P->ci, (const sps_idx *)0,
                                   P->rp[j], P->rp[j + 1] - 1, v);
        return j == i ? sps__parilu_ssqrt(s) : SPS_PI_DIV(s, v[P->rp[j + 1] - 1]);
    }
    /* row i of L (columns < i) against column j of U (rows <= j), k < min(i, j) */
    sps_idx m = j < i ? j : i;
    double s = sps__parilu_dot(a[p], m, P->ci, P->rp[i], P->dpos[i], P->cr, P->cq, P->cp[j], P->cp[j + 1], v);
    return j < i ? SPS_PI_DIV(s, v[P->dpos[j]]) : s;
}

/* 0, or the kind that refuses entry p of the factor v (row i). */
SPS_PI_HD static inline int sps__parilu_check(const sps_parilu_pat *P, int64_t p, const double *v)
{
    double x = v[p];
    if (!isfinite(x)) return SPS_PI_NONFIN;
    sps_idx i = P->row[p];
    int diag = P->cholesky ? p == (int64_t)P->rp[i + 1] - 1 : p == (int64_t)P->dpos[i];
    if (!diag) return 0;
    return (P->cholesky ? !(x > 0.0) : x == 0.0) ? SPS_PI_PIVOT : 0;
}

/* ---- host (parilu.c) ------------------------------------------------------ */

/* K fixed-point sweeps on F's pattern (ilu0: dpos its diagonal positions;
 * ic0: NULL, F = tril(A) with rows ending in the diagonal). v holds A's
 * values in F's pattern on entry and the factor on return. A sweep that
 * changes nothing (bitwise) ends the loop early: every later sweep would give
 * the same values. *done (may be NULL): the sweeps run. *bad: -1, or the
 * first refused row as row * 4 + kind (SPS_PI_*). Out of memory:
 * SPS_ERR_NO_MEMORY with the message. */
sps_status sps__parilu_host(sps_context *ctx, const sps_csr *F, const sps_idx *dpos, int cholesky, int K,
                            double *v, int64_t *bad, int *done);

/* The error for bad (from the host or the device): a pivot in the exact
 * variants' words (sps__pc_pivot_error), a non-finite entry naming its row. */
sps_status sps__parilu_fail(sps_precond *pc, int cholesky, int64_t bad, int K);

/* sps__parilu_host, then sps__parilu_fail when a row is refused. */
sps_status sps__parilu_factor(sps_precond *pc, const sps_csr *F, const sps_idx *dpos, int cholesky, int K,
                              double *v);

#if SPS_HAVE_CUDA
/* The same on the device (parilu.cu), bitwise the host's: F's pattern in
 * rp (n + 1), ci (nnz), device memory; v (device, nnz) holds A's values on
 * entry and the factor on return. Builds each entry's row, the diagonal
 * positions and (ilu0) F by columns on the device (a stable radix sort by
 * column), runs K sweeps, finds the first refused row: one host read at the
 * end (*bad, as sps__parilu_host's). Scratch freed on return. */
sps_status sps__parilu_dev(sps_context *ctx, sps_idx n, int64_t nnz, const sps_idx *rp, const sps_idx *ci,
                           int cholesky, int K, double *v, int64_t *bad);
/* dpos (device, n): each row's diagonal position in the device CSR (rp, ci),
 * -1 where it has none; *first: the first such row, -1 if none (one host
 * read). */
sps_status sps__parilu_dev_diag(sps_context *ctx, sps_idx n, const sps_idx *rp, const sps_idx *ci,
                                sps_idx *dpos, sps_idx *first);
/* ic0 from A's device copy. *same: 1 when every off-diagonal entry (i, j)
 * has its mirror (j, i) with the same value (one host read). */
sps_status sps__parilu_dev_symmetric(sps_context *ctx, sps_idx n, int64_t nnz, const sps_idx *rp,
                                     const sps_idx *ci, const double *v, int *same);
/* tril(A) into lrp (n + 1), lci, lv (device, (nnz + n) / 2 entries when the
 * pattern is symmetric), each row up to its diagonal (dpos: A's, every row
 * has one); ldpos (n): L's diagonal positions, lrp[i + 1] - 1. */
sps_status sps__parilu_dev_tril(sps_context *ctx, sps_idx n, int64_t nnz, const sps_idx *rp, const sps_idx *ci,
                                const double *v, const sps_idx *dpos, sps_idx *lrp, sps_idx *lci, double *lv,
                                sps_idx *ldpos);
/* The transpose's pattern of the CSR (rp, ci): trp (n + 1), tci (nnz) and
 * perm (nnz: T's q-th entry is the CSR's perm[q]), columns ascending in each
 * row of T; precond/ilu.c's transpose_lower makes the same on the host. */
sps_status sps__parilu_dev_transpose(sps_context *ctx, sps_idx n, int64_t nnz, const sps_idx *rp,
                                     const sps_idx *ci, sps_idx *trp, sps_idx *tci, sps_idx *perm);
#endif

#ifdef __cplusplus
}
#endif
#endif
