/* SPDX-License-Identifier: MIT */
/* spsolve/precond/mcilu/mcilu.cu: multicolor ILU(0) / IC(0) on the device.
 *
 * Setup, all on the device from A's device copy (the operator's, or one
 * upload), each step's arrays bitwise mcilu.c's:
 *   diagonal  one thread per row, the host's test (precond/basic.c); the
 *             first row without one and their count (integer atomics)
 *   graph     A' by a stable radix sort (CUB) of A's entries by column, the
 *             rows as values (rows ascend inside a column, as the host's
 *             counting transpose leaves them), its row starts from the sorted
 *             keys; then one thread per row
 *             merges A's row with A' row (mcilu.h's sps__mcilu_merge_row,
 *             the host's code): counted, scanned (64-bit), written
 *   colour    Jones-Plassmann rounds, two launches per round (win: one
 *             thread per node marks the round's winners; pick: each winner
 *             takes its colour and raises the largest colour and round by
 *             an integer atomicMax), the host reading a small struct (nodes
 *             left, ...) every ROUNDS_PER_CHECK rounds (rounds past the last
 *             change nothing)
 *   permute   perm by a stable radix sort of the nodes by colour (old
 *             indices ascend inside a colour: the host's counting sort);
 *             cptr from where each colour starts in the sorted keys (read by
 *             the host: one launch per colour); one thread per new row maps its columns
 *             through the inverse permutation (ic0: keeps those <= k) and
 *             sorts them with their positions in A (amap): insertion sort
 *             up to SHORT_ROW entries, heap sort by (column, position)
 *             beyond, the same order; dpos by binary search; F's values
 *             gathered from A; ic0: T = L' by the stable sort again
 *             (tmap: the positions in L), dpos = T's row starts
 *   factor    one launch per colour, one thread per row, by the row
 *             functions of mcilu.h (the host's arithmetic, no FMA
 *             contraction): the factor is bitwise the host's; then (ic0)
 *             T's values, and the apply's slabs (below)
 * The host receives the diagonal check and the graph's size, the colour
 * count, cptr, F's size (ic0) and the first failing pivot. Device memory:
 * three allocations (pool below), the scratch freed once at the end (after
 * the stream is drained). Phase times (sps_mcilu.ms): graph (with the
 * allocations and an upload of A if there is no device copy), colouring,
 * permutation (F, T), factor (with T's values and the slabs).
 * Apply: one launch per colour forward (rows read r through perm and the
 * earlier colours' y), one per colour backward in reverse (writing y and z
 * through perm): 2 x colours - 1 launches (the last colour's backward step
 * is a division, done by its forward launch), no gather or scatter pass.
 * One thread per row reads its terms from a sliced ELL copy of the two
 * triangles (32 rows a slice, column-major: coalesced), built on the device
 * once the factor is final (setup, refresh) in two more allocations (about
 * one more copy of the factor's values and columns); the row steps are
 * mcilu.h's, in the CSR row's order: bitwise the CSR walk's (the host's).
 * A zero pivot: atomicMin of the new row index on an int (deterministic),
 * read once after the factorization; rows before it are exactly the host's,
 * so it is the host's first failing row, named in the original numbering. */
#include "../../core/cuda_check.cuh"
#include "mcilu.h"

#include <cub/cub.cuh>
#include <new>
#include <string.h>

namespace {

const int BLOCK = 256;
const int ROUNDS_PER_CHECK = 4;
const int SHORT_ROW = 32; /* PAP' rows up to this long: insertion sort */
const int POOL_MAX = 96;

struct dev_mcilu {
    sps_mcilu h{}; /* host: n, cholesky, ncolors, rounds, cptr, ms, desc */
    sps_idx nnz = 0;
    int *rp = nullptr, *ci = nullptr, *dpos = nullptr, *perm = nullptr, *amap = nullptr, *color = nullptr;
    int *trp = nullptr, *tci = nullptr, *tmap = nullptr, *bad = nullptr;
    double *v = nullptr, *tv = nullptr, *y = nullptr;
    void *k1 = nullptr, *k2 = nullptr; /* the device memory: the arrays above are carved from these */
    /* The apply's sliced ELL (below): slices 0..ns-1 hold the forward's
     * (strictly lower) terms, ns..2ns-1 the backward's (strictly upper). */
    sps_idx ns = 0;             /* slices of one triangle */
    sps_idx *sbase = nullptr;   /* host: colour c's first slice (ncolors + 1) */
    int *len = nullptr;         /* 2n: the forward's terms of new row k, then the backward's */
    int *width = nullptr;       /* 2ns: a slice's width; -1: its rows walk the CSR arrays */
    long long *soff = nullptr;  /* 2ns + 1: where a slice's terms start */
    int *scol = nullptr;        /* the terms' columns and values */
    double *sval = nullptr, *dg = nullptr; /* dg: the pivot each row divides by (n) */
    void *k3 = nullptr, *k4 = nullptr;     /* the slabs' memory: len, width, soff, dg; scol, sval */
};

void dev_destroy(sps_precond *pc)
{
    dev_mcilu *g = (dev_mcilu *)pc->impl;
    if (!g) return;
    cudaStreamSynchronize(sps_stream(pc->ctx)); /* no apply may still be reading */
    sps__dfree(g->k1);
    sps__dfree(g->k2);
    sps__dfree(g->k3);
    sps__dfree(g->k4);
    sps__free(g->h.cptr);
    sps__free(g->sbase);
    delete g;
    pc->impl = nullptr;
}

int grid(sps_context *ctx, long long n)
{
    long long b = (n + BLOCK - 1) / BLOCK, cap = 32LL * sps__gpu_sm_count(ctx);
    if (b > cap) b = cap;
    return b < 1 ? 1 : (int)b;
}

#define SPS_MC_LOOP(i, lo, hi)                                                                  \
    for (long long i = (lo) + blockIdx.x * (long long)blockDim.x + threadIdx.x; i < (hi);      \
         i += (long long)gridDim.x * blockDim.x)

/* What the host reads of the setup: one small device struct. */
struct info {
    long long total; /* the graph's entries */
    int first;       /* the first row without a diagonal entry (n: none) */
    int missing;     /* rows without one */
    int left;        /* nodes still uncoloured after a batch of rounds */
    int maxc, maxr;  /* the largest colour, the last round (-1: none yet) */
    int fnnz;        /* F's entries */
};

/* Device memory of the setup. A cudaMalloc costs tens of microseconds, a
 * few SpMVs of a large matrix each, so the scratch is one block reserved up
 * front (sizes from n and nnz) and carved by get(), with separate
 * allocations only past its end; what the preconditioner keeps comes in two
 * blocks (own() + carve), handed over by keep(). Everything still in the
 * pool is freed once at the end, after the stream is drained. */
struct pool {
    sps_context *ctx;
    void *p[POOL_MAX] = {};
    int k = 0;
    char *arena = nullptr;
    size_t cap = 0, off = 0;
    void *tmp = nullptr; /* CUB's temporary storage */
    size_t tmp_cap = 0, tmp_hint = 0;
    explicit pool(sps_context *c) : ctx(c) {}
    ~pool()
    {
        if (k) sps__gpu_sync(ctx); /* nothing may still read them */
        for (int i = 0; i < k; i++) sps__dfree(p[i]);
    }
    static size_t round(size_t b) { return (b + 255) / 256 * 256; }
    template <class T> static size_t bytes(long long count)
    {
        return round((size_t)(count > 0 ? count : 1) * sizeof(T));
    }
    /* A separate allocation, tracked. */
    sps_status own(void **out, size_t b)
    {
        *out = nullptr;
        if (k == POOL_MAX) return sps__err(ctx, SPS_ERR_INTERNAL, "mcilu: setup scratch exhausted");
        sps_status st = sps__dmalloc(ctx, out, b ? b : 1);
        if (st == SPS_OK) p[k++] = *out;
        return st;
    }
    sps_status reserve(size_t b)
    {
        sps_status st = own((void **)&arena, b);
        if (st == SPS_OK) cap = b;
        return st;
    }
    /* Scratch: from the block while it lasts. */
    template <class T> sps_status get(T **out, long long count)
    {
        size_t b = bytes<T>(count);
        if (off + b <= cap) {
            *out = (T *)(arena + off);
            off += b;
            return SPS_OK;
        }
        return own((void **)out, b);
    }
    void keep(const void *q)
    {
        for (int i = 0; i < k; i++)
            if (p[i] == q) {
                p[i] = p[--k];
                return;
            }
    }
    sps_status cub_tmp(size_t b, void **out)
    {
        if (b == 0) b = 16; /* a NULL buffer would only ask for the size again */
        if (b > tmp_cap) {
            char *t = nullptr;
            size_t want = b > tmp_hint ? b : tmp_hint;
            sps_status st = get(&t, (long long)want);
            if (st != SPS_OK) return st;
            tmp = t;
            tmp_cap = want;
        }
        *out = tmp;
        return SPS_OK;
    }
};

/* Consecutive arrays of one block, each rounded as pool::bytes rounds. */
struct carver {
    char *base;
    size_t off = 0;
    explicit carver(void *b) : base((char *)b) {}
    template <class T> T *take(long long count)
    {
        T *q = (T *)(base + off);
        off += pool::bytes<T>(count);
        return q;
    }
};

int key_bits(long long maxkey)
{
    int bits = 1;
    while (bits < 32 && (maxkey >> bits) != 0) bits++;
    return bits;
}

/* out[0..n] = exclusive prefix sums of in[0..n) (out[n]: the total). */
template <class T> sps_status scan(pool &P, const T *in, T *out, long long n)
{
    cudaStream_t s = sps_stream(P.ctx);
    SPS_CUDA(P.ctx, cudaMemsetAsync(out, 0, sizeof(T), s));
    if (n == 0) return SPS_OK;
    size_t bytes = 0;
    SPS_CUDA(P.ctx, cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out + 1, (int)n, s));
    void *tmp = nullptr;
    sps_status st = P.cub_tmp(bytes, &tmp);
    if (st != SPS_OK) return st;
    SPS_CUDA(P.ctx, cub::DeviceScan::InclusiveSum(tmp, bytes, in, out + 1, (int)n, s));
    return SPS_OK;
}

/* (keys, values) sorted by key stably (keys below 2^bits). */
sps_status sort_pairs(pool &P, const unsigned *kin, unsigned *kout, const int *vin, int *vout, long long n,
                      int bits)
{
    if (n == 0) return SPS_OK;
    cudaStream_t s = sps_stream(P.ctx);
    size_t bytes = 0;
    SPS_CUDA(P.ctx, cub::DeviceRadixSort::SortPairs(nullptr, bytes, kin, kout, vin, vout, (int)n, 0, bits, s));
    void *tmp = nullptr;
    sps_status st = P.cub_tmp(bytes, &tmp);
    if (st != SPS_OK) return st;
    SPS_CUDA(P.ctx, cub::DeviceRadixSort::SortPairs(tmp, bytes, kin, kout, vin, vout, (int)n, 0, bits, s));
    return SPS_OK;
}

/* ---- small kernels ---------------------------------------------------------- */

__global__ void k_iota(long long n, int *x)
{
    SPS_MC_LOOP(i, 0, n) x[i] = (int)i;
}

/* row[p]: the row of entry p (the last i with rp[i] <= p). */
__global__ void k_rows(long long nnz, int n, const int *__restrict__ rp, int *__restrict__ row)
{
    SPS_MC_LOOP(p, 0, nnz)
    {
        int lo = 0, hi = n;
        while (lo < hi) {
            int mid = lo + (hi - lo + 1) / 2;
            if (rp[mid] <= p) lo = mid;
            else hi = mid - 1;
        }
        row[p] = lo;
    }
}

/* ptr[0..nk]: where each key starts in the sorted keys (m of them, below
 * nk); no atomics. The thread of the last entry fills the tail. */
__global__ void k_starts(long long m, int nk, const unsigned *__restrict__ key, int *__restrict__ ptr)
{
    SPS_MC_LOOP(q, 0, m)
    {
        int c = (int)key[q], prev = q == 0 ? -1 : (int)key[q - 1];
        for (int x = prev + 1; x <= c; x++) ptr[x] = (int)q;
        if (q == m - 1)
            for (int x = c + 1; x <= nk; x++) ptr[x] = (int)m;
    }
}

/* dst[q] = src[map[q]] (ints). */
__global__ void k_gather_int(long long m, const int *__restrict__ map, const int *__restrict__ src,
                             int *__restrict__ dst)
{
    SPS_MC_LOOP(q, 0, m) dst[q] = src[map[q]];
}

__global__ void k_copy_int(long long m, const int *__restrict__ src, int *__restrict__ dst)
{
    SPS_MC_LOOP(q, 0, m) dst[q] = src[q];
}

/* The struct the host reads, initialized in stream order (no host copy). */
__global__ void k_info_init(info *inf, int n)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        inf->total = 0;
        inf->first = n;
        inf->missing = inf->left = inf->fnnz = 0;
        inf->maxc = inf->maxr = -1;
    }
}

__global__ void k_set_int(int *p, int value)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) *p = value;
}

/* ---- A's pattern transposed ------------------------------------------------- */

/* T = X' as a pattern: trp (nc + 1), trow (T's columns: X's rows, ascending
 * inside a row of T, as a counting transpose in row order leaves them) and,
 * if tpos is not NULL, the position in X of each of T's entries. */
sps_status transpose(pool &P, const int *rp, const int *ci, sps_idx nr, sps_idx nc, sps_idx nnz, int *trp,
                     int *trow, int *tpos)
{
    sps_context *ctx = P.ctx;
    cudaStream_t s = sps_stream(ctx);
    int *row = nullptr, *iota = nullptr;
    unsigned *skey = nullptr;
    sps_status st = P.get(&row, nnz);
    if (st == SPS_OK) st = P.get(&iota, nnz);
    if (st == SPS_OK) st = P.get(&skey, nnz);
    if (st == SPS_OK && !tpos) st = P.get(&tpos, nnz);
    if (st != SPS_OK) return st;
    SPS_CUDA(ctx, cudaMemsetAsync(trp, 0, ((size_t)nc + 1) * sizeof(int), s));
    if (nnz > 0) {
        k_rows<<<grid(ctx, nnz), BLOCK, 0, s>>>(nnz, nr, rp, row);
        SPS_LAUNCH_CHECK(ctx, "k_rows");
        k_iota<<<grid(ctx, nnz), BLOCK, 0, s>>>(nnz, iota);
        SPS_LAUNCH_CHECK(ctx, "k_iota");
        st = sort_pairs(P, (const unsigned *)ci, skey, iota, tpos, nnz, key_bits(nc > 0 ? nc - 1 : 0));
        if (st != SPS_OK) return st;
        k_gather_int<<<grid(ctx, nnz), BLOCK, 0, s>>>(nnz, tpos, row, trow);
        SPS_LAUNCH_CHECK(ctx, "k_gather_int");
        k_starts<<<grid(ctx, nnz), BLOCK, 0, s>>>(nnz, nc, skey, trp);
        SPS_LAUNCH_CHECK(ctx, "k_starts");
    }
    return SPS_OK;
}

/* ---- diagonal and graph ----------------------------------------------------- */

/* Rows without a diagonal entry, by precond/basic.c's test. */
__global__ void k_diag(int n, const int *__restrict__ rp, const int *__restrict__ ci, info *inf)
{
    SPS_MC_LOOP(i, 0, n)
    {
        int found = 0;
        for (int p = rp[i]; p < rp[i + 1] && ci[p] <= i; p++) found |= ci[p] == i;
        if (!found) {
            atomicMin(&inf->first, (int)i);
            atomicAdd(&inf->missing, 1);
        }
    }
}

__global__ void k_graph_count(int n, const int *__restrict__ rp, const int *__restrict__ ci,
                              const int *__restrict__ trp, const int *__restrict__ tci, long long *cnt)
{
    SPS_MC_LOOP(i, 0, n) cnt[i] = sps__mcilu_merge_row((sps_idx)i, rp, ci, trp, tci, nullptr);
}

/* The total from the scan into the struct the host reads; grp as ints. */
__global__ void k_graph_ptr(int n, const long long *__restrict__ sum, int *__restrict__ grp, info *inf)
{
    SPS_MC_LOOP(i, 0, (long long)n + 1)
    {
        if (i == n) inf->total = sum[n];
        grp[i] = sum[i] <= 0x7fffffffLL ? (int)sum[i] : 0; /* not used past a refused total */
    }
}

__global__ void k_graph_fill(int n, const int *__restrict__ rp, const int *__restrict__ ci,
                             const int *__restrict__ trp, const int *__restrict__ tci,
                             const int *__restrict__ grp, int *__restrict__ gci)
{
    SPS_MC_LOOP(i, 0, n) sps__mcilu_merge_row((sps_idx)i, rp, ci, trp, tci, gci + grp[i]);
}

/* ---- coloring ------------------------------------------------------------- */

__global__ void color_init(int n, int *rnd, int *color)
{
    SPS_MC_LOOP(i, 0, n) rnd[i] = color[i] = SPS_MC_UNCOLORED;
}

__global__ void color_win(int n, int r, const int *__restrict__ rp, const int *__restrict__ ci, int *rnd)
{
    SPS_MC_LOOP(i, 0, n)
    if (rnd[i] == SPS_MC_UNCOLORED && sps__mcilu_wins((sps_idx)i, r, rp, ci, rnd)) rnd[i] = r;
}

__global__ void color_pick(int n, int r, const int *__restrict__ rp, const int *__restrict__ ci,
                           const int *rnd, int *color, info *inf)
{
    SPS_MC_LOOP(i, 0, n)
    {
        if (rnd[i] == r) {
            int c = sps__mcilu_pick((sps_idx)i, r, rp, ci, rnd, color);
            color[i] = c;
            /* integer maxima; an atomic only where the (L2, volatile) value is
             * below: it only grows, so the result is the same, and most
             * threads read the largest already (no contention on one word) */
            if (c > *(volatile int *)&inf->maxc) atomicMax(&inf->maxc, c);
            if (r > *(volatile int *)&inf->maxr) atomicMax(&inf->maxr, r);
        } else if (rnd[i] == SPS_MC_UNCOLORED && !*(volatile int *)&inf->left) {
            inf->left = 1; /* the same int from every writer */
        }
    }
}

/* Jones-Plassmann on the graph (grp, gci): color; hi gets maxc, maxr. */
sps_status color_rounds(sps_context *ctx, sps_idx n, const int *grp, const int *gci, int *rnd, int *color,
                        info *inf, info *hi)
{
    cudaStream_t s = sps_stream(ctx);
    int gr = grid(ctx, n);
    color_init<<<gr, BLOCK, 0, s>>>(n, rnd, color);
    SPS_LAUNCH_CHECK(ctx, "color_init");
    for (sps_idx r = 0;; r += ROUNDS_PER_CHECK) {
        if (r > n) /* each round colours at least the uncoloured node of highest priority */
            return sps__err(ctx, SPS_ERR_INTERNAL, "coloring failed: %d rounds for %d nodes", r, n);
        for (int j = 0; j < ROUNDS_PER_CHECK; j++) {
            if (j == ROUNDS_PER_CHECK - 1) /* the flag: nodes left after the batch's last round */
                SPS_CUDA(ctx, cudaMemsetAsync(&inf->left, 0, sizeof(int), s));
            color_win<<<gr, BLOCK, 0, s>>>(n, r + j, grp, gci, rnd);
            SPS_LAUNCH_CHECK(ctx, "color_win");
            color_pick<<<gr, BLOCK, 0, s>>>(n, r + j, grp, gci, rnd, color, inf);
            SPS_LAUNCH_CHECK(ctx, "color_pick");
        }
        sps_status st = sps__d2h(ctx, hi, inf, sizeof *hi);
        if (st != SPS_OK || !hi->left) return st;
    }
}

/* ---- permutation and the permuted pattern ----------------------------------- */

__global__ void k_inverse(int n, const int *__restrict__ perm, int *__restrict__ iperm)
{
    SPS_MC_LOOP(k, 0, n) iperm[perm[k]] = (int)k;
}

/* The length of new row k of F: A's row perm[k] (ic0: its columns <= k). */
__global__ void k_f_count(int n, int cholesky, const int *__restrict__ perm, const int *__restrict__ iperm,
                          const int *__restrict__ rp, const int *__restrict__ ci, int *__restrict__ len)
{
    SPS_MC_LOOP(k, 0, n)
    {
        int i = perm[k], l = rp[i + 1] - rp[i];
        if (cholesky) {
            l = 0;
            for (int p = rp[i]; p < rp[i + 1]; p++) l += iperm[ci[p]] <= k;
        }
        len[k] = l;
    }
}

/* (c, a) pairs of one row by c, then a (a: distinct positions, ascending as
 * written, so the order is that of any stable sort by c: the host's). */
__device__ inline bool pair_less(const int *c, const int *a, int x, int y)
{
    return c[x] < c[y] || (c[x] == c[y] && a[x] < a[y]);
}

__device__ inline void pair_swap(int *c, int *a, int x, int y)
{
    int t = c[x];
    c[x] = c[y];
    c[y] = t;
    t = a[x];
    a[x] = a[y];
    a[y] = t;
}

__device__ void sift(int *c, int *a, int root, int end)
{
    for (;;) {
        int child = 2 * root + 1;
        if (child >= end) return;
        if (child + 1 < end && pair_less(c, a, child, child + 1)) child++;
        if (!pair_less(c, a, root, child)) return;
        pair_swap(c, a, root, child);
        root = child;
    }
}

__device__ void sort_row(int *c, int *a, int len)
{
    if (len <= SHORT_ROW) { /* insertion sort, stable */
        for (int x = 1; x < len; x++) {
            int tc = c[x], ta = a[x], y = x;
            for (; y > 0 && c[y - 1] > tc; y--) {
                c[y] = c[y - 1];
                a[y] = a[y - 1];
            }
            c[y] = tc;
            a[y] = ta;
        }
        return;
    }
    for (int x = len / 2 - 1; x >= 0; x--) sift(c, a, x, len); /* heap sort: len log len */
    for (int end = len - 1; end > 0; end--) {
        pair_swap(c, a, 0, end);
        sift(c, a, 0, end);
    }
}

/* New row k of F: A's row perm[k] through iperm (ic0: columns <= k), sorted,
 * with amap; ilu0: dpos[k] its diagonal's position. */
__global__ void k_f_fill(int n, int cholesky, const int *__restrict__ perm, const int *__restrict__ iperm,
                         const int *__restrict__ rp, const int *__restrict__ ci, const int *__restrict__ frp,
                         int *fci, int *amap, int *dpos)
{
    SPS_MC_LOOP(k, 0, n)
    {
        int i = perm[k], lo = frp[k], q = lo;
        for (int p = rp[i]; p < rp[i + 1]; p++) {
            int c = iperm[ci[p]];
            if (!cholesky || c <= k) {
                fci[q] = c;
                amap[q] = p;
                q++;
            }
        }
        sort_row(fci + lo, amap + lo, q - lo);
        if (!cholesky) dpos[k] = sps__mcilu_seek(fci, lo, q, (sps_idx)k);
    }
}

__global__ void gather(long long m, const int *__restrict__ map, const double *__restrict__ src,
                       double *__restrict__ dst)
{
    SPS_MC_LOOP(q, 0, m) dst[q] = src[map[q]];
}

sps_status launch_gather(sps_context *ctx, long long m, const int *map, const double *src, double *dst)
{
    if (m == 0) return SPS_OK;
    int gr = grid(ctx, m);
    gather<<<gr, BLOCK, 0, sps_stream(ctx)>>>(m, map, src, dst);
    SPS_LAUNCH_CHECK(ctx, "gather");
    return SPS_OK;
}

/* ---- the symbolic setup ------------------------------------------------------- */

/* What the symbolic setup leaves on the device (all in the pool). */
struct dsym {
    const int *arp = nullptr, *aci = nullptr;
    const double *av = nullptr;
    sps_idx gnnz = 0, fnnz = 0;
    int *grp = nullptr, *gci = nullptr; /* scratch */
    void *k1 = nullptr, *k2 = nullptr;  /* what is kept: n-sized, then F-sized */
    int *color = nullptr, *perm = nullptr, *frp = nullptr, *dpos = nullptr, *bad = nullptr; /* in k1 */
    double *y = nullptr;                                                                    /* in k1 */
    int *fci = nullptr, *amap = nullptr, *trp = nullptr, *tci = nullptr, *tmap = nullptr;   /* in k2 */
    double *fv = nullptr, *tv = nullptr;                                                    /* in k2 */
};

/* The kept n-sized block: color, perm, dpos, frp, the apply's y, the pivot flag. */
sps_status alloc_k1(pool &P, sps_idx n, dsym &S)
{
    size_t b = 3 * pool::bytes<int>(n) + pool::bytes<int>(n + 1LL) + pool::bytes<double>(n) + pool::bytes<int>(1);
    sps_status st = P.own(&S.k1, b);
    if (st != SPS_OK) return st;
    carver c(S.k1);
    S.color = c.take<int>(n);
    S.perm = c.take<int>(n);
    S.dpos = c.take<int>(n);
    S.frp = c.take<int>(n + 1LL);
    S.y = c.take<double>(n);
    S.bad = c.take<int>(1);
    return SPS_OK;
}

/* The kept F-sized block: fci, amap, F's values; ic0: T (trp, tci, tmap, values). */
sps_status alloc_k2(pool &P, sps_idx n, int cholesky, dsym &S)
{
    long long f = S.fnnz;
    size_t b = 2 * pool::bytes<int>(f) + pool::bytes<double>(f);
    if (cholesky) b += pool::bytes<int>(n + 1LL) + 2 * pool::bytes<int>(f) + pool::bytes<double>(f);
    sps_status st = P.own(&S.k2, b);
    if (st != SPS_OK) return st;
    carver c(S.k2);
    S.fci = c.take<int>(f);
    S.amap = c.take<int>(f);
    S.fv = c.take<double>(f);
    if (!cholesky) return SPS_OK;
    S.trp = c.take<int>(n + 1LL);
    S.tci = c.take<int>(f);
    S.tmap = c.take<int>(f);
    S.tv = c.take<double>(f);
    return SPS_OK;
}

/* The scratch block: every scratch array of the setup at its largest (the
 * graph at 2 nnz, F at nnz), and CUB's temporary storage at the largest the
 * sorts and scans ask for. */
sps_status reserve_scratch(pool &P, sps_idx n, sps_idx annz, int cholesky)
{
    cudaStream_t s = sps_stream(P.ctx);
    size_t sb[4] = {0, 0, 0, 0};
    SPS_CUDA(P.ctx, cub::DeviceRadixSort::SortPairs(nullptr, sb[0], (const unsigned *)nullptr, (unsigned *)nullptr,
                                                    (const int *)nullptr, (int *)nullptr, (int)annz, 0,
                                                    key_bits(n > 0 ? n - 1 : 0), s));
    SPS_CUDA(P.ctx, cub::DeviceRadixSort::SortPairs(nullptr, sb[1], (const unsigned *)nullptr, (unsigned *)nullptr,
                                                    (const int *)nullptr, (int *)nullptr, (int)n, 0,
                                                    key_bits(n > 0 ? n - 1 : 0), s));
    SPS_CUDA(P.ctx, cub::DeviceScan::InclusiveSum(nullptr, sb[2], (const long long *)nullptr, (long long *)nullptr,
                                                  (int)n, s));
    SPS_CUDA(P.ctx, cub::DeviceScan::InclusiveSum(nullptr, sb[3], (const int *)nullptr, (int *)nullptr, (int)n, s));
    for (size_t x : sb)
        if (x > P.tmp_hint) P.tmp_hint = x;
    long long n1 = n + 1LL, a = annz;
    size_t b = 2 * pool::bytes<info>(1) + pool::round(P.tmp_hint ? P.tmp_hint : 16);
    b += 2 * pool::bytes<int>(n1) + pool::bytes<int>(a) + pool::bytes<long long>(n) + pool::bytes<long long>(n1);
    b += 4 * pool::bytes<int>(a) + pool::bytes<int>(2 * a); /* A' (row, iota, keys, positions), the graph */
    b += pool::bytes<int>(n) + pool::bytes<int>(n1) + 4 * pool::bytes<int>(n); /* rnd; cptr, iota, keys, iperm, len */
    if (cholesky) b += 3 * pool::bytes<int>(a);                                  /* L' (row, iota, keys) */
    return P.reserve(b);
}

/* A on the device: the operator's copy when there is one, else an upload
 * of our own (through core/gpu.h's pinned path), freed after the setup. */
sps_status device_A(pool &P, const sps_csr *A, dsym &S)
{
    const sps_dcsr *d = sps__csr_device_copy(P.ctx, A);
    if (d) {
        S.arp = d->row_ptr;
        S.aci = d->col_idx;
        S.av = d->val;
        return SPS_OK;
    }
    int *rp = nullptr, *ci = nullptr;
    double *v = nullptr;
    size_t n = (size_t)A->nrows, nz = (size_t)A->nnz;
    sps_status st = P.get(&rp, (long long)n + 1);
    if (st == SPS_OK) st = P.get(&ci, (long long)nz);
    if (st == SPS_OK) st = P.get(&v, (long long)nz);
    void *dst[3] = {rp, ci, v};
    const void *src[3] = {A->row_ptr, A->col_idx, A->val};
    size_t bytes[3] = {(n + 1) * sizeof(int), nz * sizeof(int), nz * sizeof(double)};
    char how[16];
    if (st == SPS_OK) st = sps__h2d_pinned(P.ctx, nz ? 3 : 1, dst, src, bytes, how, sizeof how);
    S.arp = rp;
    S.aci = ci;
    S.av = v;
    return st;
}

/* The diagonal check and the symmetrized graph (S.grp, S.gci). */
sps_status sym_graph(sps_precond *pc, pool &P, sps_idx n, sps_idx annz, int cholesky, dsym &S)
{
    sps_context *ctx = P.ctx;
    cudaStream_t s = sps_stream(ctx);
    int *trp = nullptr, *tci = nullptr;
    long long *cnt = nullptr, *sum = nullptr;
    info *inf = nullptr, hi = {};
    sps_status st = P.get(&inf, 1);
    if (st == SPS_OK) st = P.get(&trp, (long long)n + 1);
    if (st == SPS_OK) st = P.get(&tci, annz);
    if (st == SPS_OK) st = P.get(&cnt, n);
    if (st == SPS_OK) st = P.get(&sum, (long long)n + 1);
    if (st == SPS_OK) st = P.get(&S.grp, (long long)n + 1);
    if (st != SPS_OK) return st;
    k_info_init<<<1, 32, 0, s>>>(inf, n);
    SPS_LAUNCH_CHECK(ctx, "k_info_init");
    k_diag<<<grid(ctx, n), BLOCK, 0, s>>>(n, S.arp, S.aci, inf);
    SPS_LAUNCH_CHECK(ctx, "k_diag");
    if ((st = transpose(P, S.arp, S.aci, n, n, annz, trp, tci, nullptr)) != SPS_OK) return st;
    k_graph_count<<<grid(ctx, n), BLOCK, 0, s>>>(n, S.arp, S.aci, trp, tci, cnt);
    SPS_LAUNCH_CHECK(ctx, "k_graph_count");
    if ((st = scan(P, (const long long *)cnt, sum, n)) != SPS_OK) return st;
    k_graph_ptr<<<grid(ctx, n + 1LL), BLOCK, 0, s>>>(n, sum, S.grp, inf);
    SPS_LAUNCH_CHECK(ctx, "k_graph_ptr");
    if ((st = sps__d2h(ctx, &hi, inf, sizeof hi)) != SPS_OK) return st;
    if (hi.missing) return sps__pc_pivot_error(pc, cholesky, hi.first, hi.missing);
    if (hi.total > SPS_IDX_MAX)
        return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                        "%s:order=color: coloring failed: the symmetrized pattern of A has more "
                        "than %d off-diagonal entries (32-bit indices)",
                        pc->type->name, SPS_IDX_MAX);
    S.gnnz = (sps_idx)hi.total;
    if ((st = P.get(&S.gci, S.gnnz)) != SPS_OK) return st;
    k_graph_fill<<<grid(ctx, n), BLOCK, 0, s>>>(n, S.arp, S.aci, trp, tci, S.grp, S.gci);
    SPS_LAUNCH_CHECK(ctx, "k_graph_fill");
    return SPS_OK;
}

/* Colours (S.color; h: ncolors, rounds, desc). */
sps_status sym_color(pool &P, sps_mcilu &h, dsym &S)
{
    sps_idx n = h.n;
    int *rnd = nullptr;
    info *inf = nullptr, hi = {};
    sps_status st = P.get(&inf, 1);
    if (st == SPS_OK) st = P.get(&rnd, n);
    if (st != SPS_OK) return st;
    k_info_init<<<1, 32, 0, sps_stream(P.ctx)>>>(inf, n);
    SPS_LAUNCH_CHECK(P.ctx, "k_info_init");
    if ((st = color_rounds(P.ctx, n, S.grp, S.gci, rnd, S.color, inf, &hi)) != SPS_OK) return st;
    h.ncolors = hi.maxc + 1;
    h.rounds = hi.maxr + 1;
    sps__mcilu_set_desc(&h);
    return SPS_OK;
}

/* perm, cptr (host), F's pattern, amap, dpos, F's values (A's), and for ic0
 * T, tmap. */
sps_status sym_permute(pool &P, sps_mcilu &h, sps_idx annz, dsym &S)
{
    sps_context *ctx = P.ctx;
    cudaStream_t s = sps_stream(ctx);
    sps_idx n = h.n, nc = h.ncolors;
    int *dcptr = nullptr, *iota = nullptr, *iperm = nullptr, *flen = nullptr;
    unsigned *skey = nullptr;
    sps_status st = P.get(&dcptr, (long long)nc + 1);
    if (st == SPS_OK) st = P.get(&iota, n);
    if (st == SPS_OK) st = P.get(&skey, n);
    if (st == SPS_OK) st = P.get(&iperm, n);
    if (st == SPS_OK) st = P.get(&flen, n);
    if (st == SPS_OK && !(h.cptr = (sps_idx *)sps__calloc((size_t)nc + 2, sizeof *h.cptr)))
        st = sps__err(ctx, SPS_ERR_NO_MEMORY, "coloring: out of memory");
    if (st != SPS_OK) return st;
    int gr = grid(ctx, n);
    k_iota<<<gr, BLOCK, 0, s>>>(n, iota);
    SPS_LAUNCH_CHECK(ctx, "k_iota");
    st = sort_pairs(P, (const unsigned *)S.color, skey, iota, S.perm, n, key_bits(nc > 0 ? nc - 1 : 0));
    if (st != SPS_OK) return st;
    k_starts<<<gr, BLOCK, 0, s>>>(n, nc, skey, dcptr); /* cptr: where each colour starts */
    SPS_LAUNCH_CHECK(ctx, "k_starts");
    k_inverse<<<gr, BLOCK, 0, s>>>(n, S.perm, iperm);
    SPS_LAUNCH_CHECK(ctx, "k_inverse");
    k_f_count<<<gr, BLOCK, 0, s>>>(n, h.cholesky, S.perm, iperm, S.arp, S.aci, flen);
    SPS_LAUNCH_CHECK(ctx, "k_f_count");
    if ((st = scan(P, (const int *)flen, S.frp, n)) != SPS_OK) return st;
    if ((st = sps__d2h(ctx, h.cptr, dcptr, ((size_t)nc + 1) * sizeof(int))) != SPS_OK) return st;
    S.fnnz = annz;
    if (h.cholesky && (st = sps__d2h(ctx, &S.fnnz, S.frp + n, sizeof(int))) != SPS_OK) return st;
    if ((st = alloc_k2(P, n, h.cholesky, S)) != SPS_OK) return st;
    k_f_fill<<<gr, BLOCK, 0, s>>>(n, h.cholesky, S.perm, iperm, S.arp, S.aci, S.frp, S.fci, S.amap, S.dpos);
    SPS_LAUNCH_CHECK(ctx, "k_f_fill");
    if ((st = launch_gather(ctx, S.fnnz, S.amap, S.av, S.fv)) != SPS_OK || !h.cholesky) return st;
    if ((st = transpose(P, S.frp, S.fci, n, n, S.fnnz, S.trp, S.tci, S.tmap)) != SPS_OK) return st;
    k_copy_int<<<gr, BLOCK, 0, s>>>(n, S.trp, S.dpos); /* T's rows start with the diagonal */
    SPS_LAUNCH_CHECK(ctx, "k_copy_int");
    return SPS_OK;
}

/* The whole symbolic setup of A (h: n, cholesky set), timed by phase (each
 * ends with the stream drained). */
sps_status symbolic(sps_precond *pc, pool &P, const sps_csr *A, sps_mcilu &h, dsym &S)
{
    double t0 = sps__now_ms();
    sps_status st = device_A(P, A, S);
    if (st == SPS_OK) st = reserve_scratch(P, h.n, A->nnz, h.cholesky);
    if (st == SPS_OK) st = alloc_k1(P, h.n, S);
    if (st == SPS_OK) st = sym_graph(pc, P, h.n, A->nnz, h.cholesky, S);
    if (st == SPS_OK) st = sps__gpu_sync(P.ctx);
    double t1 = sps__now_ms();
    h.ms[0] = t1 - t0;
    if (st == SPS_OK) st = sym_color(P, h, S);
    double t2 = sps__now_ms();
    h.ms[1] = t2 - t1;
    if (st == SPS_OK) st = sym_permute(P, h, A->nnz, S);
    if (st == SPS_OK) st = sps__gpu_sync(P.ctx);
    h.ms[2] = sps__now_ms() - t2;
    return st;
}

/* ---- factorization -------------------------------------------------------- */

__global__ void factor_color(int lo, int hi, int cholesky, const int *__restrict__ rp,
                             const int *__restrict__ ci, const int *__restrict__ dp, double *v, int *bad)
{
    SPS_MC_LOOP(k, lo, hi)
    {
        int ok = cholesky ? sps__mcilu_ic_row((sps_idx)k, rp, ci, v) : sps__mcilu_ilu_row((sps_idx)k, rp, ci, dp, v);
        if (!ok) atomicMin(bad, (int)k);
    }
}

/* Factorize v (the factor's pattern) colour by colour; *bad: the first new
 * row whose pivot fails, or -1. */
sps_status factor_dev(sps_context *ctx, dev_mcilu *g, double *v, sps_idx *bad)
{
    const sps_mcilu &h = g->h;
    int none = h.n;
    k_set_int<<<1, 32, 0, sps_stream(ctx)>>>(g->bad, none);
    SPS_LAUNCH_CHECK(ctx, "k_set_int");
    for (sps_idx c = 0; c < h.ncolors; c++) {
        int lo = h.cptr[c], hi = h.cptr[c + 1], gr = grid(ctx, hi - lo);
        factor_color<<<gr, BLOCK, 0, sps_stream(ctx)>>>(lo, hi, h.cholesky, g->rp, g->ci, g->dpos, v, g->bad);
        SPS_LAUNCH_CHECK(ctx, "factor_color");
    }
    int first = none;
    sps_status st = sps__d2h(ctx, &first, g->bad, sizeof(int));
    *bad = first < h.n ? first : -1;
    return st;
}

/* A failed pivot of new row bad, named by its old index (perm on the device). */
sps_status pivot_failed(sps_precond *pc, const dev_mcilu *g, sps_idx bad)
{
    int old = 0;
    sps_status st = sps__d2h(pc->ctx, &old, g->perm + bad, sizeof(int));
    return st != SPS_OK ? st : sps__pc_pivot_error(pc, g->h.cholesky, old, 0);
}

/* ---- apply ------------------------------------------------------------------ */

/* The apply's sliced ELL. Each colour's rows are cut into slices of SLICE
 * consecutive rows (the last one shorter: h rows); a slice stores the terms
 * of a triangle (the forward's strictly lower part of F, the backward's
 * strictly upper part of F, ic0: of T = L') column-major at width w, term j
 * of its row x at soff + j h + x: a warp, one thread per row, reads each
 * term's value and column coalesced. Rows keep their lengths (len): no
 * padding is computed with, so the sums are the CSR walk's, term for term.
 * A slice whose w h slots would exceed 2 x its terms + h (a long row among
 * short ones) stores nothing and its rows walk the CSR arrays instead
 * (width -1): the slabs hold at most about 2 copies of the factor's terms and
 * usually one. Built once the factor is final (setup, refresh). */
const int SLICE = 32;

/* The terms of new row k in each triangle: forward (ilu0: before the
 * diagonal; ic0: all of L's row but its closing diagonal), backward (after
 * the diagonal; ic0: T's row after its opening one). */
__global__ void sell_len(int n, int cholesky, const int *__restrict__ rp, const int *__restrict__ dp,
                         const int *__restrict__ trp, int *__restrict__ len)
{
    SPS_MC_LOOP(k, 0, n)
    {
        len[k] = (cholesky ? rp[k + 1] - 1 : dp[k]) - rp[k];
        len[n + k] = cholesky ? trp[k + 1] - trp[k] - 1 : rp[k + 1] - dp[k] - 1;
    }
}

/* Colour [lo, hi), its slices from sb: each slice's width (or -1: CSR) and
 * slots in both triangles (the second at ns). */
__global__ void sell_width(int lo, int hi, int sb, int ns, int n, const int *__restrict__ len,
                           int *__restrict__ width, long long *__restrict__ cnt)
{
    SPS_MC_LOOP(t, 0, (hi - lo + SLICE - 1) / SLICE)
    {
        int r0 = lo + (int)t * SLICE, h = hi - r0 < SLICE ? hi - r0 : SLICE;
        for (int tri = 0; tri < 2; tri++) {
            const int *l = len + (size_t)tri * n + r0;
            int w = 0;
            long long terms = 0;
            for (int x = 0; x < h; x++) {
                w = l[x] > w ? l[x] : w;
                terms += l[x];
            }
            long long slots = (long long)w * h;
            int ell = slots <= 2 * terms + h;
            width[tri * ns + sb + t] = ell ? w : -1;
            cnt[tri * ns + sb + t] = ell ? slots : 0;
        }
    }
}

/* Colour [lo, hi) into its slices: the terms' values (and with cols their
 * columns), and the pivot each row divides by (ilu0: U's diagonal; ic0: T's,
 * bitwise L's closing one). */
__global__ void sell_pack(int lo, int hi, int sb, int ns, int n, int cholesky, int cols, const int *__restrict__ rp,
                          const int *__restrict__ ci, const int *__restrict__ dp, const double *__restrict__ v,
                          const int *__restrict__ tci, const double *__restrict__ tv, const int *__restrict__ len,
                          const int *__restrict__ width, const long long *__restrict__ soff, int *__restrict__ scol,
                          double *__restrict__ sval, double *__restrict__ dg)
{
    SPS_MC_LOOP(k, lo, hi)
    {
        int loc = (int)(k - lo), x = loc % SLICE, t = sb + loc / SLICE, h = hi - (int)k + x;
        h = h < SLICE ? h : SLICE;
        const int *uci = cholesky ? tci : ci;
        const double *uv = cholesky ? tv : v;
        int src[2] = {rp[k], dp[k] + 1}; /* ic0: dp = T's row starts */
        const int *c[2] = {ci, uci};
        const double *w[2] = {v, uv};
        for (int tri = 0; tri < 2; tri++) {
            if (width[tri * ns + t] < 0) continue;
            long long o = soff[tri * ns + t] + x;
            for (int j = 0, m = len[(size_t)tri * n + k]; j < m; j++, o += h) {
                sval[o] = w[tri][src[tri] + j];
                if (cols) scol[o] = c[tri][src[tri] + j];
            }
        }
        dg[k] = uv[dp[k]];
    }
}

/* One colour forward: rows [lo, hi), slices from sb. With z (the last
 * colour) the backward step too: the last colour's rows have no terms after
 * the diagonal (their columns would be rows of a later colour), so it only
 * divides by the pivot (dg: the value bwd_row reads) and writes y and z. */
__global__ void fwd_color(int lo, int hi, int sb, int cholesky, const int *__restrict__ rp, const int *__restrict__ ci,
                          const int *__restrict__ dp, const double *__restrict__ v, const int *__restrict__ len,
                          const int *__restrict__ width, const long long *__restrict__ soff,
                          const int *__restrict__ scol, const double *__restrict__ sval, const double *__restrict__ dg,
                          const int *__restrict__ perm, const double *__restrict__ r, double *y, double *z)
{
    SPS_MC_LOOP(k, lo, hi)
    {
        int loc = (int)(k - lo), x = loc % SLICE, t = sb + loc / SLICE;
        if (width[t] < 0) {
            sps__mcilu_fwd_row((sps_idx)k, rp[k], cholesky ? rp[k + 1] - 1 : dp[k], ci, v, !cholesky, perm, r, y);
        } else {
            int h = hi - (int)k + x;
            sps__mcilu_fwd_terms((sps_idx)k, soff[t] + x, h < SLICE ? h : SLICE, len[k], scol, sval, !cholesky,
                                 dg[k], perm, r, y);
        }
        if (z) sps__mcilu_bwd_terms((sps_idx)k, 0, 1, 0, scol, sval, dg[k], perm, y, z);
    }
}

/* One colour backward (width, soff, len: the backward's). */
__global__ void bwd_color(int lo, int hi, int sb, const int *__restrict__ urp, const int *__restrict__ uci,
                          const int *__restrict__ dp, const double *__restrict__ uv, const int *__restrict__ len,
                          const int *__restrict__ width, const long long *__restrict__ soff,
                          const int *__restrict__ scol, const double *__restrict__ sval, const double *__restrict__ dg,
                          const int *__restrict__ perm, double *y, double *z)
{
    SPS_MC_LOOP(k, lo, hi)
    {
        int loc = (int)(k - lo), x = loc % SLICE, t = sb + loc / SLICE;
        if (width[t] < 0) {
            sps__mcilu_bwd_row((sps_idx)k, dp[k], urp[k + 1], uci, uv, perm, y, z);
        } else {
            int h = hi - (int)k + x;
            sps__mcilu_bwd_terms((sps_idx)k, soff[t] + x, h < SLICE ? h : SLICE, len[k], scol, sval, dg[k], perm, y,
                                 z);
        }
    }
}

/* The slabs' values and pivots from v (and tv), columns too with cols: one
 * launch per colour. */
sps_status sell_fill(sps_context *ctx, dev_mcilu *g, int cols)
{
    const sps_mcilu &h = g->h;
    for (sps_idx c = 0; c < h.ncolors; c++) {
        int lo = h.cptr[c], hi = h.cptr[c + 1];
        sell_pack<<<grid(ctx, hi - lo), BLOCK, 0, sps_stream(ctx)>>>(lo, hi, g->sbase[c], g->ns, h.n, h.cholesky, cols,
                                                                     g->rp, g->ci, g->dpos, g->v, g->tci, g->tv,
                                                                     g->len, g->width, g->soff, g->scol, g->sval, g->dg);
        SPS_LAUNCH_CHECK(ctx, "sell_pack");
    }
    return SPS_OK;
}

/* The slabs of a final factor (v, and tv for ic0): slices per colour, row
 * lengths, widths and offsets (a scan), then the terms. */
sps_status sell_build(sps_context *ctx, dev_mcilu *g)
{
    const sps_mcilu &h = g->h;
    sps_idx n = h.n, nc = h.ncolors;
    cudaStream_t s = sps_stream(ctx);
    if (!(g->sbase = (sps_idx *)sps__calloc((size_t)nc + 1, sizeof *g->sbase)))
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "mcilu: out of memory");
    for (sps_idx c = 0; c < nc; c++) g->sbase[c + 1] = g->sbase[c] + (h.cptr[c + 1] - h.cptr[c] + SLICE - 1) / SLICE;
    sps_idx ns = g->ns = g->sbase[nc];
    size_t b = pool::bytes<int>(2LL * n) + pool::bytes<int>(2LL * ns) + pool::bytes<long long>(2LL * ns + 1) +
               pool::bytes<double>(n);
    sps_status st = sps__dmalloc(ctx, &g->k3, b);
    if (st != SPS_OK) return st;
    carver cv(g->k3);
    g->len = cv.take<int>(2LL * n);
    g->width = cv.take<int>(2LL * ns);
    g->soff = cv.take<long long>(2LL * ns + 1);
    g->dg = cv.take<double>(n);
    long long total = 0;
    {
        pool P(ctx);
        long long *cnt = nullptr;
        if ((st = P.get(&cnt, 2LL * ns)) != SPS_OK) return st;
        if (n > 0) {
            sell_len<<<grid(ctx, n), BLOCK, 0, s>>>(n, h.cholesky, g->rp, g->dpos, g->trp, g->len);
            SPS_LAUNCH_CHECK(ctx, "sell_len");
        }
        for (sps_idx c = 0; c < nc; c++) {
            int lo = h.cptr[c], hi = h.cptr[c + 1];
            sell_width<<<grid(ctx, g->sbase[c + 1] - g->sbase[c]), BLOCK, 0, s>>>(lo, hi, g->sbase[c], ns, n, g->len,
                                                                                  g->width, cnt);
            SPS_LAUNCH_CHECK(ctx, "sell_width");
        }
        if ((st = scan(P, (const long long *)cnt, g->soff, 2LL * ns)) != SPS_OK) return st;
        if ((st = sps__d2h(ctx, &total, g->soff + 2LL * ns, sizeof total)) != SPS_OK) return st;
    } /* the scratch is freed here */
    if ((st = sps__dmalloc(ctx, &g->k4, pool::bytes<double>(total) + pool::bytes<int>(total))) != SPS_OK) return st;
    carver cw(g->k4);
    g->sval = cw.take<double>(total);
    g->scol = cw.take<int>(total);
    return sell_fill(ctx, g, 1);
}

sps_status apply_dev(sps_precond *pc, const double *r, double *z)
{
    sps_context *ctx = pc->ctx;
    dev_mcilu *g = (dev_mcilu *)pc->impl;
    const sps_mcilu &h = g->h;
    cudaStream_t s = sps_stream(ctx);
    sps_idx n = h.n, ns = g->ns;
    for (sps_idx c = 0; c < h.ncolors; c++) {
        int lo = h.cptr[c], hi = h.cptr[c + 1], gr = grid(ctx, hi - lo);
        fwd_color<<<gr, BLOCK, 0, s>>>(lo, hi, g->sbase[c], h.cholesky, g->rp, g->ci, g->dpos, g->v, g->len, g->width,
                                       g->soff, g->scol, g->sval, g->dg, g->perm, r, g->y,
                                       c == h.ncolors - 1 ? z : nullptr);
        SPS_LAUNCH_CHECK(ctx, "fwd_color");
    }
    const int *urp = h.cholesky ? g->trp : g->rp, *uci = h.cholesky ? g->tci : g->ci;
    const double *uv = h.cholesky ? g->tv : g->v;
    for (sps_idx c = h.ncolors - 2; c >= 0; c--) { /* the last colour's: with its forward */
        int lo = h.cptr[c], hi = h.cptr[c + 1], gr = grid(ctx, hi - lo);
        bwd_color<<<gr, BLOCK, 0, s>>>(lo, hi, g->sbase[c], urp, uci, g->dpos, uv, g->len + n, g->width + ns,
                                       g->soff + ns, g->scol, g->sval, g->dg, g->perm, g->y, z);
        SPS_LAUNCH_CHECK(ctx, "bwd_color");
    }
    return SPS_OK;
}

/* ---- setup ------------------------------------------------------------------ */

/* What the preconditioner keeps of the symbolic setup: its two blocks, out
 * of the pool. */
void adopt(pool &P, dev_mcilu *g, dsym &S)
{
    P.keep(S.k1);
    P.keep(S.k2);
    g->k1 = S.k1;
    g->k2 = S.k2;
    g->nnz = S.fnnz;
    g->rp = S.frp;
    g->ci = S.fci;
    g->dpos = S.dpos;
    g->perm = S.perm;
    g->amap = S.amap;
    g->color = S.color;
    g->bad = S.bad;
    g->v = S.fv;
    g->y = S.y;
    g->trp = S.trp;
    g->tci = S.tci;
    g->tmap = S.tmap;
    g->tv = S.tv;
}

} // namespace

static_assert(sizeof(sps_idx) == sizeof(int), "index arrays are device ints");

extern "C" sps_status sps__mcilu_setup_dev(sps_precond *pc, const sps_pc_input *in, sps_mcilu *host)
{
    sps_context *ctx = pc->ctx;
    dev_mcilu *g = new (std::nothrow) dev_mcilu;
    if (!g) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s:order=color: out of memory", pc->type->name);
    pc->impl = g;
    pc->destroy = dev_destroy;
    g->h.n = host->n;
    g->h.cholesky = host->cholesky;
    sps_status st;
    {
        pool P(ctx);
        dsym S;
        st = symbolic(pc, P, &in->A->A, g->h, S);
        if (st != SPS_OK) return st;
        adopt(P, g, S);
    } /* the scratch is freed here */
    double t0 = sps__now_ms();
    sps_idx bad;
    st = factor_dev(ctx, g, g->v, &bad);
    if (st == SPS_OK && bad >= 0) st = pivot_failed(pc, g, bad);
    if (st == SPS_OK && g->h.cholesky) st = launch_gather(ctx, g->nnz, g->tmap, g->v, g->tv);
    if (st == SPS_OK) st = sell_build(ctx, g);
    if (st == SPS_OK) st = sps__gpu_sync(ctx);
    g->h.ms[3] = sps__now_ms() - t0;
    if (st != SPS_OK) return st;
    pc->apply = apply_dev;
    return SPS_OK;
}

/* Device arrays into fresh host memory. */
static sps_status down(sps_context *ctx, sps_idx **dst, const int *src, size_t count)
{
    *dst = (sps_idx *)sps__malloc((count ? count : 1) * sizeof(int));
    if (!*dst) return sps__err(ctx, SPS_ERR_NO_MEMORY, "mcilu: out of memory");
    return count ? sps__d2h(ctx, *dst, src, count * sizeof(int)) : SPS_OK;
}

static sps_status down_csr(sps_context *ctx, sps_csr *C, sps_idx n, sps_idx nnz, const int *rp, const int *ci,
                           const double *v)
{
    sps_status st = sps__csr_alloc(ctx, C, n, n, nnz);
    if (st == SPS_OK) st = sps__d2h(ctx, C->row_ptr, rp, ((size_t)n + 1) * sizeof(int));
    if (st == SPS_OK && nnz) st = sps__d2h(ctx, C->col_idx, ci, (size_t)nnz * sizeof(int));
    if (st == SPS_OK && nnz && v) st = sps__d2h(ctx, C->val, v, (size_t)nnz * sizeof(double));
    return st;
}

extern "C" sps_status sps__mcilu_symbolic_dev(sps_precond *pc, const sps_matrix *A, int cholesky, sps_mcilu **out)
{
    sps_context *ctx = pc->ctx;
    sps_mcilu *m = (sps_mcilu *)sps__calloc(1, sizeof *m);
    *out = m;
    if (!m) return sps__err(ctx, SPS_ERR_NO_MEMORY, "mcilu: out of memory");
    m->n = A->A.nrows;
    m->cholesky = cholesky;
    pool P(ctx);
    dsym S;
    sps_status st = symbolic(pc, P, &A->A, *m, S);
    size_t n = (size_t)m->n;
    if (st == SPS_OK) st = down(ctx, &m->grp, S.grp, n + 1);
    if (st == SPS_OK) st = down(ctx, &m->gci, S.gci, (size_t)S.gnnz);
    if (st == SPS_OK) st = down(ctx, &m->color, S.color, n);
    if (st == SPS_OK) st = down(ctx, &m->perm, S.perm, n);
    if (st == SPS_OK) st = down(ctx, &m->dpos, S.dpos, n);
    if (st == SPS_OK) st = down(ctx, &m->amap, S.amap, (size_t)S.fnnz);
    if (st == SPS_OK) st = down_csr(ctx, &m->F, m->n, S.fnnz, S.frp, S.fci, S.fv);
    if (st == SPS_OK && cholesky) st = down(ctx, &m->tmap, S.tmap, (size_t)S.fnnz);
    if (st == SPS_OK && cholesky) st = down_csr(ctx, &m->T, m->n, S.fnnz, S.trp, S.tci, nullptr);
    return st;
}

static sps_status refresh_values(sps_precond *pc, dev_mcilu *g, double *a, double *f)
{
    sps_context *ctx = pc->ctx;
    sps_idx bad;
    sps_status st = launch_gather(ctx, g->nnz, g->amap, a, f);
    if (st == SPS_OK) st = factor_dev(ctx, g, f, &bad);
    if (st != SPS_OK) return st;
    if (bad >= 0) return pivot_failed(pc, g, bad);
    st = sps__d2d(ctx, g->v, f, (size_t)g->nnz * sizeof(double)); /* after any apply reading v */
    if (st == SPS_OK && g->h.cholesky) st = launch_gather(ctx, g->nnz, g->tmap, g->v, g->tv);
    if (st == SPS_OK) st = sell_fill(ctx, g, 0); /* the slabs' values and pivots, after any apply reading them */
    return st;
}

extern "C" sps_status sps__mcilu_refresh_dev(sps_precond *pc, const sps_matrix *A)
{
    sps_context *ctx = pc->ctx;
    dev_mcilu *g = (dev_mcilu *)pc->impl;
    double *a = nullptr, *f = nullptr;
    size_t na = (size_t)A->A.nnz;
    sps_status st = sps__dmalloc(ctx, (void **)&a, (na ? na : 1) * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&f, ((size_t)g->nnz + 1) * sizeof(double));
    if (st == SPS_OK && na) st = sps__h2d(ctx, a, A->A.val, na * sizeof(double));
    if (st == SPS_OK) st = refresh_values(pc, g, a, f);
    sps_status ss = sps__gpu_sync(ctx); /* a and f are freed below */
    sps__dfree(a);
    sps__dfree(f);
    return st != SPS_OK ? st : ss;
}

extern "C" int sps__mcilu_is_dev(const sps_precond *pc)
{
    return pc && pc->impl && pc->destroy == dev_destroy;
}

extern "C" const char *sps__mcilu_describe_dev(const sps_precond *pc)
{
    return sps__mcilu_is_dev(pc) ? ((const dev_mcilu *)pc->impl)->h.desc : nullptr;
}

extern "C" sps_status sps__mcilu_fetch_dev(const sps_precond *pc, sps_mcilu_view *view, sps_idx *color,
                                           sps_idx *perm, double *fval)
{
    if (!sps__mcilu_is_dev(pc))
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG, "%s: not order=color", pc->name);
    const dev_mcilu *g = (const dev_mcilu *)pc->impl;
    const sps_mcilu &h = g->h;
    if (view)
        *view = sps_mcilu_view{h.n, h.ncolors, h.rounds, (int64_t)g->nnz, {h.ms[0], h.ms[1], h.ms[2], h.ms[3]}};
    sps_status st = sps__gpu_sync(pc->ctx);
    size_t n = (size_t)h.n;
    if (st == SPS_OK && color && n) st = sps__d2h(pc->ctx, color, g->color, n * sizeof *color);
    if (st == SPS_OK && perm && n) st = sps__d2h(pc->ctx, perm, g->perm, n * sizeof *perm);
    if (st == SPS_OK && fval && g->nnz) st = sps__d2h(pc->ctx, fval, g->v, (size_t)g->nnz * sizeof *fval);
    return st;
}
