/* SPDX-License-Identifier: MIT */
/* spsolve/precond/mcilu/mcilu.cu: multicolor ILU(0) / IC(0) on the device.
 *
 * Setup: the symmetrized graph (built on the host) is uploaded and coloured
 * by Jones-Plassmann rounds, two launches per round (win: one thread per
 * node, marks the round's winners; pick: each winner takes its colour), the
 * host reading a "nodes left" flag every ROUNDS_PER_CHECK rounds (rounds past
 * the last change nothing). The colours come back; the permutation and the
 * permuted pattern are the host's code (mcilu.c, symbolic); the factor is
 * computed on the device, one launch per colour, one thread per row, by the
 * row functions of mcilu.h (the host's arithmetic, no FMA contraction): the
 * colours, the permutation and the factor are bitwise the host's.
 * Apply: one launch per colour forward (rows read r through perm and the
 * earlier colours' y), one per colour backward in reverse (writing y and z
 * through perm): 2 x colours launches, no gather or scatter pass.
 * A zero pivot: atomicMin of the new row index on an int (deterministic),
 * read once after the factorization; rows before it are exactly the host's,
 * so it is the host's first failing row, named in the original numbering. */
#include "../../core/cuda_check.cuh"
#include "mcilu.h"

#include <new>
#include <string.h>

namespace {

const int BLOCK = 256;
const int ROUNDS_PER_CHECK = 4;

struct dev_mcilu {
    sps_mcilu h{};          /* host: n, cholesky, ncolors, rounds, color, perm, cptr */
    sps_idx nnz = 0, tnnz = 0, annz = 0;
    int *rp = nullptr, *ci = nullptr, *dpos = nullptr, *perm = nullptr, *amap = nullptr;
    int *trp = nullptr, *tci = nullptr, *tmap = nullptr, *bad = nullptr;
    double *v = nullptr, *tv = nullptr, *y = nullptr;
};

void dev_destroy(sps_precond *pc)
{
    dev_mcilu *g = (dev_mcilu *)pc->impl;
    if (!g) return;
    cudaStreamSynchronize(sps_stream(pc->ctx)); /* no apply may still be reading */
    int *ints[] = {g->rp, g->ci, g->dpos, g->perm, g->amap, g->trp, g->tci, g->tmap, g->bad};
    for (int *p : ints) sps__dfree(p);
    sps__dfree(g->v);
    sps__dfree(g->tv);
    sps__dfree(g->y);
    sps__free(g->h.color);
    sps__free(g->h.perm);
    sps__free(g->h.cptr);
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
                           const int *rnd, int *color, int *left)
{
    SPS_MC_LOOP(i, 0, n)
    {
        if (rnd[i] == r) color[i] = sps__mcilu_pick((sps_idx)i, r, rp, ci, rnd, color);
        else if (rnd[i] == SPS_MC_UNCOLORED) *left = 1; /* the same int from every writer */
    }
}

sps_status upload_ints(sps_context *ctx, int **dst, const sps_idx *src, size_t count)
{
    sps_status st = sps__dmalloc(ctx, (void **)dst, (count ? count : 1) * sizeof(int));
    return st == SPS_OK && count ? sps__h2d(ctx, *dst, src, count * sizeof(int)) : st;
}

struct color_bufs {
    int *rp = nullptr, *ci = nullptr, *rnd = nullptr, *color = nullptr, *left = nullptr;
    ~color_bufs()
    {
        sps__dfree(rp);
        sps__dfree(ci);
        sps__dfree(rnd);
        sps__dfree(color);
        sps__dfree(left);
    }
};

sps_status color_rounds(sps_context *ctx, sps_idx n, color_bufs &b)
{
    cudaStream_t s = sps_stream(ctx);
    int gr = grid(ctx, n);
    for (sps_idx r = 0, left = 1; left; r += ROUNDS_PER_CHECK) {
        if (r > n) /* each round colours at least the uncoloured node of highest priority */
            return sps__err(ctx, SPS_ERR_INTERNAL, "coloring failed: %d rounds for %d nodes", r, n);
        for (int j = 0; j < ROUNDS_PER_CHECK; j++) {
            if (j == ROUNDS_PER_CHECK - 1) /* the flag: nodes left after the batch's last round */
                SPS_CUDA(ctx, cudaMemsetAsync(b.left, 0, sizeof(int), s));
            color_win<<<gr, BLOCK, 0, s>>>(n, r + j, b.rp, b.ci, b.rnd);
            SPS_LAUNCH_CHECK(ctx, "color_win");
            color_pick<<<gr, BLOCK, 0, s>>>(n, r + j, b.rp, b.ci, b.rnd, b.color, b.left);
            SPS_LAUNCH_CHECK(ctx, "color_pick");
        }
        sps_status st = sps__d2h(ctx, &left, b.left, sizeof(int));
        if (st != SPS_OK) return st;
    }
    return SPS_OK;
}

/* The colours of m's graph (m->color, ncolors, rounds) computed on the device. */
sps_status color_dev(sps_context *ctx, sps_mcilu *m)
{
    sps_idx n = m->n, *rnd = (sps_idx *)sps__malloc(sps__mul_size((size_t)n, sizeof *rnd));
    m->color = (sps_idx *)sps__malloc(sps__mul_size((size_t)n, sizeof *m->color));
    if (!rnd || !m->color) {
        sps__free(rnd);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "coloring: out of memory");
    }
    color_bufs b;
    sps_status st = upload_ints(ctx, &b.rp, m->grp, (size_t)n + 1);
    if (st == SPS_OK) st = upload_ints(ctx, &b.ci, m->gci, (size_t)m->grp[n]);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&b.rnd, (size_t)n * sizeof(int));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&b.color, (size_t)n * sizeof(int));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&b.left, sizeof(int));
    if (st == SPS_OK) {
        int gr = grid(ctx, n);
        color_init<<<gr, BLOCK, 0, sps_stream(ctx)>>>(n, b.rnd, b.color);
        cudaError_t e = cudaGetLastError();
        if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "launch color_init", __FILE__, __LINE__);
    }
    if (st == SPS_OK) st = color_rounds(ctx, n, b);
    if (st == SPS_OK) st = sps__d2h(ctx, m->color, b.color, (size_t)n * sizeof(int));
    if (st == SPS_OK) st = sps__d2h(ctx, rnd, b.rnd, (size_t)n * sizeof(int));
    m->ncolors = m->rounds = 0;
    for (sps_idx i = 0; st == SPS_OK && i < n; i++) {
        if (m->color[i] + 1 > m->ncolors) m->ncolors = m->color[i] + 1;
        if (rnd[i] + 1 > m->rounds) m->rounds = rnd[i] + 1;
    }
    sps__free(rnd);
    sps__mcilu_set_desc(m);
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

/* Factorize v (the factor's pattern) colour by colour; *bad: the first new
 * row whose pivot fails, or -1. */
sps_status factor_dev(sps_context *ctx, dev_mcilu *g, double *v, sps_idx *bad)
{
    const sps_mcilu &h = g->h;
    int none = h.n;
    sps_status st = sps__h2d(ctx, g->bad, &none, sizeof(int));
    if (st != SPS_OK) return st;
    for (sps_idx c = 0; c < h.ncolors; c++) {
        int lo = h.cptr[c], hi = h.cptr[c + 1], gr = grid(ctx, hi - lo);
        factor_color<<<gr, BLOCK, 0, sps_stream(ctx)>>>(lo, hi, h.cholesky, g->rp, g->ci,
                                                                       g->dpos, v, g->bad);
        SPS_LAUNCH_CHECK(ctx, "factor_color");
    }
    int first = none;
    st = sps__d2h(ctx, &first, g->bad, sizeof(int));
    *bad = first < h.n ? first : -1;
    return st;
}

/* ---- apply ------------------------------------------------------------------ */

__global__ void fwd_color(int lo, int hi, int cholesky, const int *__restrict__ rp, const int *__restrict__ ci,
                          const int *__restrict__ dp, const double *__restrict__ v, const int *__restrict__ perm,
                          const double *__restrict__ r, double *y)
{
    SPS_MC_LOOP(k, lo, hi)
    sps__mcilu_fwd_row((sps_idx)k, rp[k], cholesky ? rp[k + 1] - 1 : dp[k], ci, v, !cholesky, perm, r, y);
}

__global__ void bwd_color(int lo, int hi, const int *__restrict__ rp, const int *__restrict__ ci,
                          const int *__restrict__ dp, const double *__restrict__ v, const int *__restrict__ perm,
                          double *y, double *z)
{
    SPS_MC_LOOP(k, lo, hi) sps__mcilu_bwd_row((sps_idx)k, dp[k], rp[k + 1], ci, v, perm, y, z);
}

sps_status apply_dev(sps_precond *pc, const double *r, double *z)
{
    sps_context *ctx = pc->ctx;
    dev_mcilu *g = (dev_mcilu *)pc->impl;
    const sps_mcilu &h = g->h;
    cudaStream_t s = sps_stream(ctx);
    for (sps_idx c = 0; c < h.ncolors; c++) {
        int lo = h.cptr[c], hi = h.cptr[c + 1], gr = grid(ctx, hi - lo);
        fwd_color<<<gr, BLOCK, 0, s>>>(lo, hi, h.cholesky, g->rp, g->ci, g->dpos, g->v,
                                                       g->perm, r, g->y);
        SPS_LAUNCH_CHECK(ctx, "fwd_color");
    }
    const int *urp = h.cholesky ? g->trp : g->rp, *uci = h.cholesky ? g->tci : g->ci;
    const double *uv = h.cholesky ? g->tv : g->v;
    for (sps_idx c = h.ncolors - 1; c >= 0; c--) {
        int lo = h.cptr[c], hi = h.cptr[c + 1], gr = grid(ctx, hi - lo);
        bwd_color<<<gr, BLOCK, 0, s>>>(lo, hi, urp, uci, g->dpos, uv, g->perm, g->y, z);
        SPS_LAUNCH_CHECK(ctx, "bwd_color");
    }
    return SPS_OK;
}

/* ---- setup ------------------------------------------------------------------ */

/* Take what the device object keeps from the host one (colours, perm, cptr). */
void adopt_host(dev_mcilu *g, sps_mcilu *m)
{
    g->h.n = m->n;
    g->h.cholesky = m->cholesky;
    g->h.ncolors = m->ncolors;
    g->h.rounds = m->rounds;
    memcpy(g->h.desc, m->desc, sizeof g->h.desc);
    g->h.color = m->color;
    g->h.perm = m->perm;
    g->h.cptr = m->cptr;
    m->color = m->perm = m->cptr = nullptr;
    g->nnz = m->F.nnz;
    g->tnnz = m->T.nnz;
}

sps_status upload_all(sps_context *ctx, dev_mcilu *g, const sps_mcilu *m)
{
    size_t n = (size_t)m->n, nz = (size_t)m->F.nnz;
    sps_status st = upload_ints(ctx, &g->rp, m->F.row_ptr, n + 1);
    if (st == SPS_OK) st = upload_ints(ctx, &g->ci, m->F.col_idx, nz);
    if (st == SPS_OK) st = upload_ints(ctx, &g->dpos, m->dpos, n);
    if (st == SPS_OK) st = upload_ints(ctx, &g->perm, m->perm, n);
    if (st == SPS_OK) st = upload_ints(ctx, &g->amap, m->amap, nz);
    if (st == SPS_OK) st = upload_ints(ctx, &g->bad, nullptr, 0);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&g->v, (nz ? nz : 1) * sizeof(double));
    if (st == SPS_OK && nz) st = sps__h2d(ctx, g->v, m->F.val, nz * sizeof(double));
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&g->y, n * sizeof(double));
    if (st != SPS_OK || !m->cholesky) return st;
    st = upload_ints(ctx, &g->trp, m->T.row_ptr, n + 1);
    if (st == SPS_OK) st = upload_ints(ctx, &g->tci, m->T.col_idx, nz);
    if (st == SPS_OK) st = upload_ints(ctx, &g->tmap, m->tmap, nz);
    if (st == SPS_OK) st = sps__dmalloc(ctx, (void **)&g->tv, (nz ? nz : 1) * sizeof(double));
    return st;
}

} // namespace

static_assert(sizeof(sps_idx) == sizeof(int), "index arrays are uploaded as int");

extern "C" sps_status sps__mcilu_setup_dev(sps_precond *pc, const sps_pc_input *in, sps_mcilu *host)
{
    sps_context *ctx = pc->ctx;
    dev_mcilu *g = new (std::nothrow) dev_mcilu;
    if (!g) return sps__err(ctx, SPS_ERR_NO_MEMORY, "%s:order=color: out of memory", pc->type->name);
    pc->impl = g;
    pc->destroy = dev_destroy;
    sps_status st = color_dev(ctx, host);
    if (st == SPS_OK) st = sps__mcilu_permute(ctx, host, &in->A->A);
    if (st == SPS_OK) st = upload_all(ctx, g, host);
    g->annz = in->A->A.nnz;
    adopt_host(g, host);
    if (st != SPS_OK) return st;
    sps_idx bad;
    if ((st = factor_dev(ctx, g, g->v, &bad)) != SPS_OK) return st;
    if (bad >= 0) return sps__pc_pivot_error(pc, g->h.cholesky, g->h.perm[bad], 0);
    if (g->h.cholesky && (st = launch_gather(ctx, g->nnz, g->tmap, g->v, g->tv)) != SPS_OK) return st;
    pc->apply = apply_dev;
    return SPS_OK;
}

static sps_status refresh_values(sps_precond *pc, dev_mcilu *g, double *a, double *f)
{
    sps_context *ctx = pc->ctx;
    sps_idx bad;
    sps_status st = launch_gather(ctx, g->nnz, g->amap, a, f);
    if (st == SPS_OK) st = factor_dev(ctx, g, f, &bad);
    if (st != SPS_OK) return st;
    if (bad >= 0) return sps__pc_pivot_error(pc, g->h.cholesky, g->h.perm[bad], 0);
    st = sps__d2d(ctx, g->v, f, (size_t)g->nnz * sizeof(double)); /* after any apply reading v */
    if (st == SPS_OK && g->h.cholesky) st = launch_gather(ctx, g->nnz, g->tmap, g->v, g->tv);
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
    if (view) *view = sps_mcilu_view{h.n, h.ncolors, h.rounds, (int64_t)g->nnz};
    if (color) memcpy(color, h.color, (size_t)h.n * sizeof *color);
    if (perm) memcpy(perm, h.perm, (size_t)h.n * sizeof *perm);
    sps_status st = sps__gpu_sync(pc->ctx);
    if (st == SPS_OK && fval && g->nnz) st = sps__d2h(pc->ctx, fval, g->v, (size_t)g->nnz * sizeof *fval);
    return st;
}
