/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres.c: restarted, right-preconditioned GMRES(m) (Saad and
 * Schultz 1986) with classical Gram-Schmidt as dense GEMVs on the Krylov
 * basis, a second pass only where the first cancelled most of w (selective
 * reorthogonalization, gmres_state.h), Givens rotations, and a convergence
 * test at every inner iteration from the rotated residual |g[j+1]|.
 *
 * Memory movement per inner iteration j (j+1 basis vectors to orthogonalise
 * against), in vectors of n doubles (Jacobi; the SpMV moves its format's bytes):
 *   z = D^-1 v_j                            3n
 *   1x SpMV  w = A z                        A + 2n
 *   h = V'w, w -= V h (2 GEMVs)             2(j+1)n + 3n
 *   ||w||                                   n
 *   [the second pass, when due: 2(j+1)n + 4n]
 *   v_{j+1} = w / h_{j+1,j}                 2n
 *   total, one pass                         (2(j+1) + 11)n + A
 * The basis dominates: GMRES(m) averages (m+1)n per iteration for the GEMVs
 * with one pass, 2(m+1)n with two. Without a preconditioner z is v_j (3n
 * less). Once per cycle: y = R^-1 g (one block), x += M^-1 V y (kn + 3n), and
 * at a restart r = b - A x, ||r||, v_0 = r / ||r|| (A + 6n).
 * Launches per inner iteration on the GPU: SpMV, h = V'w, then w -= V h with
 * w'w, the check (and the rotations when no second pass is due) and the
 * scale in the tail of its last block (gm_ops gemv_n_fin), the second pass's
 * two (which return at once unless it is due): 5 (+1 for Jacobi; the scale
 * its own kernel above SPS_GM_FUSE_SCALE_ROWS rows). SPS_GM_FUSE=0: the
 * kernels one by one as before (the products' sums of partials, the dot and
 * its finish, the scale: 14).
 *
 * Above the one-kernel engine's size bounds (sps__gm_onek_fits: more than
 * 8192 rows or 1.5 MiB of basis), or with gmres:orth=dcgs2 (SPS_GM_ORTH=
 * dcgs2; gm_orth), the classic steps run delayed CGS2 instead (gmres_state.h,
 * DCGS2), every step the same:
 *   z = D^-1 p_j                            3n
 *   1x SpMV  y = A z                        A + 2n
 *   [V_0..V_j]'[p_j, y] (one pass)          (j+1)n + 2n
 *   v_j, p_{j+1} from Q a, Q b (one pass)   jn + 4n
 *   total                                   (2(j+1) + 10)n + A
 * and per cycle the closing pass ((m+1)n + n) and y = U y (m(m-1)/2
 * doubles): two reads of the basis a step where CGS2's second pass makes
 * four. Launches: SpMV, k_dp, k_dc (+1 for Jacobi); not on the one-kernel
 * and cluster engines (gm_onekernel refuses it: classic runs).
 *
 * The one-kernel engine (gm_onekernel, doc/solvers.md "Iteration engine"):
 * the Arnoldi steps of a cycle in one launch of one block of 1024 threads
 * (gmres_kernels.cu k_gm_onekernel): the same operations in the same order
 * of decisions as gm_iterate, thread 0 running the host's finish code
 * (sps__gm_column), the basis streamed from global memory (its first columns
 * from shared memory where they fit), w in registers, z and the small arrays
 * in shared memory, every sum in a fixed order. The hook then ends the cycle
 * with gm_restart, as gm_iterate does at j + 1 == m. No or Jacobi
 * preconditioning, double, n <= the engine's bound and SPS_GM_ONEK_MAX_ROWS
 * (8192), a basis of at most SPS_GM_ONEK_MAX_BASIS bytes (1.5 MiB, measured);
 * otherwise the classic steps above. auto picks it within these bounds
 * (engine.c; the GPU goldens pass with it). With SPS_GM_CLUSTER=C (or
 * SPS_GM_CLUSTER_AUTO=1) the cycle runs over a thread-block cluster of C
 * blocks instead (k_gm_cluster: each block a slice of the rows, its rows of
 * the basis in its shared memory, the sums over the blocks in rank order),
 * within its own bounds (gmres.h SPS_GM_CLUSTER_*); where it cannot run, the
 * one block as above. */
#include "../engine.h"
#include "gmres.h"

#include <stdlib.h>
#include <string.h>

/* w [z [u]] */
enum { W, Z, U };
/* the arrays: V H cs sn g y h2, the device products' partials, DCGS2's U and d */
enum { PV, PH, PCS, PSN, PG, PY, PH2, PPART, PDC };

/* The cycle length: no longer than n or than maxit. */
static int64_t gm_len(const sps_kcfg *cfg, sps_idx n)
{
    int64_t m = cfg->restart;
    if (m > n) m = n;
    if (m > cfg->maxit && cfg->maxit > 0) m = cfg->maxit;
    return m;
}

/* The orthogonalization (gmres_state.h): gmres:orth= where given (cfg->opt[1]:
 * 1 + SPS_GM_ORTH_*), else SPS_GM_ORTH=cgs2|dcgs2, else by size (n, and m =
 * gm_len): CGS2 where the one-kernel and cluster engines may run (within
 * sps__gm_onek_fits; they run CGS2 only), DCGS2 above, where it measured
 * faster (doc/solvers.md: make run's lns_3937 GMRES(2000) iterates in 174
 * against 314 ms on the H100, the same iterations). n and m only, so that the
 * host and the GPU choose alike. */
static int gm_orth(const sps_kcfg *cfg, sps_idx n)
{
    if (cfg->opt[1] >= 1.0) return (int)cfg->opt[1] - 1;
    const char *v = getenv("SPS_GM_ORTH");
    if (v && !strcmp(v, "dcgs2")) return SPS_GM_ORTH_DCGS2;
    if (v && !strcmp(v, "cgs2")) return SPS_GM_ORTH_CGS2;
    return sps__gm_onek_fits(n, gm_len(cfg, n)) ? SPS_GM_ORTH_CGS2 : SPS_GM_ORTH_DCGS2;
}

static void gm_work(const sps_krylov *k, sps_kwork *wk)
{
    size_t m = (size_t)gm_len(k->cfg, k->w.n);
    wk->nvec = k->pcmode == SPS_PCM_NONE ? 1 : k->pcmode == SPS_PCM_JACOBI ? 2 : 3;
    wk->npiece = 9;
    wk->piece[PV] = sps__mul_size(m + 1, (size_t)k->w.n);
    wk->piece[PH] = (m + 1) * m;
    wk->piece[PCS] = m;
    wk->piece[PSN] = m;
    wk->piece[PG] = m + 1;
    wk->piece[PY] = m;
    wk->piece[PH2] = m + 1;
    wk->piece[PPART] = sps__gm_part_len(k->w.n, (int64_t)m);
    wk->piece[PDC] = gm_orth(k->cfg, k->w.n) == SPS_GM_ORTH_DCGS2 ? m * (m - 1) / 2 + 2 * (m + 1) : 0;
    wk->state_bytes = sizeof(sps_gm_state);
}

/* GMRES's stagnation window: at least SPS_STAG_ITERS iterations and 2 cycles. */
static int64_t stag_window(int64_t m)
{
    int64_t w = (SPS_STAG_ITERS + m - 1) / m;
    return w < 2 ? 2 : w;
}

static void gm_init(const sps_krylov *k, void *ms)
{
    sps_gm_state *gs = ms;
    gs->m = gm_len(k->cfg, k->w.n);
    gs->orth = gm_orth(k->cfg, k->w.n);
    gs->dstep = -1;
    gs->stag_win = k->cfg->no_stagnation ? INT64_MAX : stag_window(gs->m); /* never ends: off */
}

static sps_status gm_param(sps_context *ctx, sps_kcfg *cfg, const char *key, const char *value)
{
    char *end = NULL;
    long v = strtol(value, &end, 10);
    if (strcmp(key, "orth") == 0) {
        const int d = !strcmp(value, "dcgs2");
        if (!d && strcmp(value, "cgs2") != 0)
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "gmres: orth must be cgs2 or dcgs2 (got '%s')", value);
        cfg->opt[1] = 1.0 + (d ? SPS_GM_ORTH_DCGS2 : SPS_GM_ORTH_CGS2);
        return SPS_OK;
    }
    if (strcmp(key, "restart") != 0)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "gmres: unknown parameter '%s' (restart, orth)", key);
    if (!*value || *end || v < 1 || v > 1000000)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "gmres: restart must be an integer >= 1 (got '%s')",
                        value);
    cfg->restart = (int)v;
    return SPS_OK;
}

static sps_gm_ws gm_ws(const sps_krylov *k)
{
    sps_gm_ws g;
    g.V = k->piece[PV];
    g.gm.H = k->piece[PH];
    g.gm.cs = k->piece[PCS];
    g.gm.sn = k->piece[PSN];
    g.gm.g = k->piece[PG];
    g.gm.y = k->piece[PY];
    g.gm.h2 = k->piece[PH2];
    g.m = gm_len(k->cfg, k->w.n);
    g.gm.U = NULL;
    g.gm.d = NULL;
    if (k->work.piece[PDC] > 0) {
        g.gm.U = k->piece[PDC];
        g.gm.d = g.gm.U + g.m * (g.m - 1) / 2;
    }
    g.part = k->piece[PPART];
    return g;
}

static void gm_bind(sps_krylov *k)
{
    k->r = k->piece[PV]; /* r0 is computed into v_0 and scaled in place */
    k->scratch = k->vec[W];
}

static sps_status gm_step(sps_krylov *k, const sps_gm_ws *g, int step)
{
    sps_kfin f = sps__kfin(((const sps_gm_ops *)k->mops)->finish, g, step, 1, 0);
    return f.fn(&k->w, &f);
}

static sps_status gm_start(sps_krylov *k)
{
    const sps_gm_ops *go = k->mops;
    sps_gm_ws g = gm_ws(k);
    sps_status st;
    /* g <- ||r0|| e1;  v_0 <- r0 / ||r0||   (the sums of ||r0||) */
    if ((st = gm_step(k, &g, k->replacements ? SPS_GM_START : SPS_GM_START0)) != SPS_OK) return st;
    if ((st = go->reset(&k->w, &g)) != SPS_OK) return st;
    k->inner = 0;
    return go->scale(&k->w, &g, -1, g.V);
}

/* End of a cycle (or a stop inside one): y <- R^-1 g;  x <- x + M^-1 V y.
 * Enqueued exactly once per cycle; it reads the column count from the state,
 * so it is right whichever inner iteration the device stopped at. */
static sps_status gm_end_cycle(sps_krylov *k)
{
    const sps_vops *o = k->ops;
    const sps_gm_ops *go = k->mops;
    sps_kws *w = &k->w;
    sps_gm_ws g = gm_ws(k);
    sps_status st;
    k->inner = 0;
    if ((st = go->solve(w, &g)) != SPS_OK) return st;
    if (k->pcmode != SPS_PCM_APPLY) {
        /* x <- x + [D^-1] V y */
        if (k->pcmode == SPS_PCM_JACOBI) k->pc_applies++;
        return go->update(w, &g, k->x, sps__kr_diag(k), NULL);
    }
    /* u <- V y;  z <- M^-1 u;  x <- x + z */
    double *u = k->vec[U], *z = k->vec[Z];
    if ((st = go->update(w, &g, k->x, NULL, u)) != SPS_OK) return st;
    if ((st = sps__kr_prec(k, u, z)) != SPS_OK) return st;
    return o->add(w, k->x, z);
}

/* The cycle is full: update x, then restart from the true residual:
 * v_0 <- b - A x;  g <- ||v_0|| e1 (stagnation, dtol, tolerance tests);
 * v_0 <- v_0 / ||v_0|| */
static sps_status gm_restart(sps_krylov *k, const sps_gm_ws *g)
{
    const sps_gm_ops *go = k->mops;
    sps_status st;
    if ((st = gm_end_cycle(k)) != SPS_OK) return st;
    if ((st = sps__kr_resid(k, g->V)) != SPS_OK) return st;
    sps_kfin f = sps__kfin(go->finish, g, SPS_GM_RESTART, 1, 0);
    const double *a[1] = {g->V};
    if ((st = k->ops->dot(&k->w, 1, a, a, &f)) != SPS_OK) return st;
    return go->scale(&k->w, g, -1, g->V);
}

/* A DCGS2 step (gmres_state.h, DCGS2): y = A M^-1 V_j (the pending
 * p_j), the products with [V_0..V_j] and their finish (omega, c, column j),
 * the corrections (v_j final, p_{j+1} into V_{j+1}) with column j - 1's
 * Arnoldi step (final, rotated, tested); at the cycle's end the closing
 * products finish column m - 1. */
static sps_status gm_iterate_dcgs2(sps_krylov *k, const sps_gm_ws *g)
{
    const sps_gm_ops *go = k->mops;
    sps_kws *w = &k->w;
    int64_t j = k->inner, m = g->m;
    double *vj = g->V + j * w->n, *y = k->vec[W], *z = vj;
    sps_status st;
    if (k->pcmode != SPS_PCM_NONE) {
        z = k->vec[Z];
        if ((st = sps__kr_prec(k, vj, z)) != SPS_OK) return st;
    }
    if ((st = sps__kr_spmv(k, z, y)) != SPS_OK) return st;
    if ((st = go->dprod(w, g, j, y)) != SPS_OK) return st;
    if ((st = go->dcorr(w, g, j, y)) != SPS_OK) return st;
    k->inner = j + 1;
    if (j + 1 < m) return SPS_OK;
    if ((st = go->dprod(w, g, m, NULL)) != SPS_OK) return st;
    return gm_restart(k, g);
}

static sps_status gm_iterate(sps_krylov *k, int64_t jj)
{
    (void)jj;
    const sps_gm_ops *go = k->mops;
    sps_kws *w = &k->w;
    sps_gm_ws g = gm_ws(k);
    if (g.gm.U) return gm_iterate_dcgs2(k, &g);
    int64_t j = k->inner, m = g.m, n = w->n;
    double *vj = g.V + j * n, *wv = k->vec[W];
    double *h = g.gm.H + j * (m + 1), *h2 = g.gm.h2;
    sps_status st;
    /* z <- M^-1 v_j */
    double *z = vj;
    if (k->pcmode != SPS_PCM_NONE) {
        z = k->vec[Z];
        if ((st = sps__kr_prec(k, vj, z)) != SPS_OK) return st;
    }
    /* w <- A z */
    if ((st = sps__kr_spmv(k, z, wv)) != SPS_OK) return st;
    /* h <- V'w;  w <- w - V h;  the check (sps__gm_reorth): without a second
     * pass, H[:, j] <- h, H[j+1, j] <- ||w||, rotate, |g[j+1]| is the residual */
    const int64_t sj = j + 1 < m ? j : -1; /* v_{j+1} is due (else the restart) */
    int scaled = 0;
    if ((st = go->gemv_t(w, &g, j + 1, wv, h, 0)) != SPS_OK) return st;
    sps_kfin f = sps__kfin(go->finish, &g, SPS_GM_CHECK, 1, j);
    if ((st = go->gemv_n_fin(w, &g, j + 1, h, wv, 0, &f, sj, &scaled)) != SPS_OK) return st;
    /* the second pass, when the check asked for it (CGS2): h2 <- V'w;
     * w <- w - V h2;  H[:, j] <- h + h2, then the Arnoldi step as above */
    if ((st = go->gemv_t(w, &g, j + 1, wv, h2, 1)) != SPS_OK) return st;
    f = sps__kfin(go->finish, &g, SPS_GM_ARNOLDI, 1, j);
    if ((st = go->gemv_n_fin(w, &g, j + 1, h2, wv, 1, &f, sj, &scaled)) != SPS_OK) return st;
    k->inner = j + 1;
    /* v_{j+1} <- w / H[j+1, j], unless the last finish did it */
    if (j + 1 < m) return scaled ? SPS_OK : go->scale(w, &g, j, wv);
    return gm_restart(k, &g);
}

/* Batches stop at the cycle's end, so the device never runs past a cycle
 * whose end the host has not enqueued. */
static int64_t gm_room(const sps_krylov *k) { return gm_len(k->cfg, k->w.n) - k->inner; }

static sps_status gm_checked(sps_krylov *k, const sps_kstate *st)
{
    /* Stopped inside a cycle: its update is still due. */
    if (st->stop && k->inner > 0) return gm_end_cycle(k);
    return SPS_OK;
}

/* An environment variable as a count in lo .. hi, else def. */
static long gm_env(const char *name, long lo, long hi, long def)
{
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    return *end || x < lo || x > hi ? def : x;
}

/* The cluster kernel's size (gmres_kernels.cu k_gm_cluster): SPS_GM_CLUSTER=C
 * (1 .. 16) asks for it, 0 turns it off (*forced = 1 either way). Unset, auto
 * (SPS_GM_CLUSTER_AUTO=0 turns it off): SPS_GM_CLUSTER_DEFAULT blocks where
 * the one block would run (its bounds: ok1) on at least
 * SPS_GM_CLUSTER_MIN_ROWS rows. 0: the one-block kernel. */
static int gm_cluster_size(sps_idx n, int ok1, int *forced)
{
    long c = gm_env("SPS_GM_CLUSTER", 0, 16, -1);
    *forced = c >= 0;
    if (c >= 0) return (int)c;
    if (!gm_env("SPS_GM_CLUSTER_AUTO", 0, 1, 1)) return 0;
    return ok1 && n >= SPS_GM_CLUSTER_MIN_ROWS ? SPS_GM_CLUSTER_DEFAULT : 0;
}

/* The cluster kernel's basis bound per block, in bytes. */
static size_t gm_cluster_basis(void)
{
    return (size_t)gm_env("SPS_GM_CLUSTER_MAX_BASIS", 0, 1L << 30, (long)SPS_GM_CLUSTER_MAX_BASIS);
}

/* The cycles a one-kernel or cluster launch runs, restarting between them
 * on the device (gmres_onek.cuh go_restart, gc_restart; the ~18 launches and
 * the host check of a restart between launches took about 80 us a cycle):
 * SPS_GM_ONEK_CYCLES (1 .. 2^30; 1 is one cycle a launch, the restarts by
 * gm_restart between launches). Unset: the cluster kernel until the state
 * stops, the one block one cycle a launch (its restarts on the device moved
 * rdb2048 GMRES(10) from 739 iterations, the host's, to 806: past
 * test_gmres_onek_gpu's 5%, while one cycle a launch stays within it;
 * doc/solvers.md). */
static int gm_cycles(int cluster)
{
    return (int)gm_env("SPS_GM_ONEK_CYCLES", 1, 1L << 30, cluster ? 1L << 30 : 1);
}

/* The cluster kernel on C blocks within its bounds; auto (not forced) tries
 * SPS_GM_CLUSTER_FALLBACK blocks where C cannot be scheduled. On success
 * k->onek_cluster names the size that ran; SPS_ERR_UNSUPPORTED: neither ran. */
static sps_status gm_cluster_try(sps_krylov *k, const sps_gm_ws *g, const sps_dev_rows *rows, int C, int forced)
{
    const sps_gm_ops *go = k->mops;
    const int cycles = gm_cycles(1);
    const size_t col = (size_t)k->w.n * sizeof(double);
    sps_status st = SPS_ERR_UNSUPPORTED;
    for (int t = 0; t < 2 && st == SPS_ERR_UNSUPPORTED && C > 0; t++, C = forced ? 0 : SPS_GM_CLUSTER_FALLBACK) {
        if (((int64_t)k->w.n + C - 1) / C > SPS_GM_CLUSTER_MAX_ROWS ||
            col > gm_cluster_basis() / (size_t)(g->m + 1) * (size_t)C)
            continue;
        st = go->cluster(&k->w, g, rows, k->inner, sps__kr_diag(k), C, cycles, k->x, k->b);
        if (st == SPS_OK) k->onek_cluster = C;
    }
    return st;
}

/* The one-kernel engine (engine.h): the Arnoldi steps k->inner .. m-1 of the
 * cycle in one launch of one block (gmres_kernels.cu), then the cycle's end
 * as gm_iterate does at j + 1 == m: gm_restart, which reads the column count
 * from the state, so it is right wherever the device stopped. The loop calls
 * this once per turn: every turn is one cycle. No or Jacobi preconditioning,
 * double, n <= the engine's bound, a basis of at most SPS_GM_ONEK_MAX_BASIS
 * bytes (one SM streams it twice per step); else SPS_ERR_UNSUPPORTED. With
 * SPS_GM_CLUSTER=C (or SPS_GM_CLUSTER_AUTO=1) the cluster kernel runs the
 * cycle instead, within its bounds (gmres.h), and where it cannot run the one
 * block does as before; k->onek_cluster says which ran. */
static sps_status gm_onekernel(sps_krylov *k, const sps_dev_rows *rows)
{
    const sps_gm_ops *go = k->mops;
    sps_gm_ws g = gm_ws(k);
    if (!go->onekernel || !rows || g.gm.U || k->pcmode == SPS_PCM_APPLY || (k->op && k->op->single) ||
        k->w.n > sps__engine_onek_max() || g.m < 1)
        return SPS_ERR_UNSUPPORTED;
    const int ok1 = sps__gm_onek_fits(k->w.n, g.m);
    int forced = 0;
    const int C = gm_cluster_size(k->w.n, ok1, &forced);
    sps_status st = C > 0 && go->cluster ? gm_cluster_try(k, &g, rows, C, forced) : SPS_ERR_UNSUPPORTED;
    if (st == SPS_ERR_UNSUPPORTED) {
        /* the one block (the cluster off, refused, or outside its bounds) */
        if (!ok1) return SPS_ERR_UNSUPPORTED;
        st = go->onekernel(&k->w, &g, rows, k->inner, sps__kr_diag(k), gm_cycles(0), k->x, k->b);
    }
    if (st != SPS_OK) return st;
    /* The launch ended at a cycle's end (the restart is due), inside a cycle
     * (stopped: its update is due), or (the cluster kernel) at a restart it
     * ran that stopped: kdim 0, so gm_restart adds nothing to x, recomputes
     * the residual of that x, and its gated finish and scale do nothing. */
    /* solve.c's onekernel_counts counts this launch's SpMVs and Jacobi
     * scalings from its iterations and the traffic model's 1 + 1/m SpMVs per
     * iteration: a full cycle m + 1, the restart's r = b - A x and the
     * update's D^-1 included. So the restart's own counts are taken back. */
    int64_t spmvs = k->spmvs, pcs = k->pc_applies;
    k->inner = g.m;
    st = gm_restart(k, &g);
    k->spmvs = spmvs;
    k->pc_applies = pcs;
    return st;
}

/* The traffic model, averaged over a cycle of m (the header's table without
 * the SpMV's own bytes), for CGS2 steps that take one Gram-Schmidt pass: inner
 * step j moves 2(j+1)n + 12n with Jacobi (9n without), (m+1)n + 12n on
 * average; once per cycle x += M^-1 V y (mn + 3n) and the restart (6n and one
 * SpMV), spread over the cycle's m steps. A step that takes the second pass
 * (sps__gm_reorth) moves 2(j+1)n more: the floor is a lower bound. */
static double gm_traffic(const sps_krylov *k, double *spmvs)
{
    double m = (double)gm_len(k->cfg, k->w.n);
    if (m < 1) m = 1;
    *spmvs = 1.0 + 1.0 / m;
    double v = (m + 1.0) + (k->pcmode == SPS_PCM_NONE ? 9.0 : 12.0) + (m + 9.0) / m;
    if (gm_orth(k->cfg, k->w.n) != SPS_GM_ORTH_DCGS2) return v * 8.0 * (double)k->w.n;
    /* DCGS2 (gm_iterate_dcgs2): the products read V_0..V_j, then p_j and y
     * as their right-hand sides ((j+1)n + 2n); the corrections read
     * V_0..V_{j-1}, p_j and y and write v_j and p_{j+1} (jn + 4n); no ||w||
     * pass nor scale (3n): n less than one CGS pass. Once per cycle the
     * closing products ((m+1)n + n) and y = U y (m(m-1)/2 doubles). Every
     * step takes this, whatever the cancellation: the model is the cost. */
    v += -1.0 + (m + 2.0) / m;
    return v * 8.0 * (double)k->w.n + (m - 1.0) / 2.0 * 8.0;
}

const sps_method_impl sps__method_gmres = {
    .name = "gmres", .id = SPS_GMRES, .caps = SPS_KM_RESTART,
    .summary = "restarted right-preconditioned GMRES(m) (general A; gmres:restart=m,orth=cgs2|dcgs2)",
    .param = gm_param, .work = gm_work, .init = gm_init, .bind = gm_bind,
    .start = gm_start, .iterate = gm_iterate, .room = gm_room, .checked = gm_checked,
    .traffic = gm_traffic, .onekernel = gm_onekernel,
};
