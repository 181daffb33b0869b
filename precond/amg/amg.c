/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/amg.c: smoothed-aggregation AMG, the table
 * (`amg:theta=T,sweeps=K,smoother=cheby|l1jacobi,coarse=N,levels=L,block=B,setup=host|gpu,
 * gpu_min=N`),
 * the host V-cycle and the near-nullspace call.
 *
 * One V-cycle, z = M^-1 r, from x = 0 on every level:
 *   level l < L-1: smooth (from 0); r_l = b_l - A_l x_l; b_{l+1} = R_l r_l
 *   level L-1:     x = A^-1 b (the dense inverse)
 *   back up:       x_l += P_l x_{l+1}; smooth (from x_l)
 * The smoother is the same pre and post (l1-Jacobi sweeps, or Chebyshev of
 * degree K in D^-1 A on [lmax / 8, lmax]), so M^-1 is symmetric for symmetric
 * A and the cycle is fixed: fit for CG. Level 0's products go through the
 * operator (the caller's or a csr-vector one), the others through the host
 * CSR; no reduction in the apply, so it is deterministic. */
#include "amg.h"
#include "../mcilu/mcilu.h" /* sps_precond_describe: the colours */
#if SPS_HAVE_CUDA
#include "../../core/gpu.h" /* sps__gpu_sync, sps__matrix_device */
#endif

#include <math.h>
#include <string.h>

typedef struct host_amg {
    sps_amg *h;          /* NULL once the device setup took it */
    sps_operator *op0;   /* level 0's operator (host context) */
    int own_op0;
} host_amg;

/* y = alpha A_l x + beta y */
static sps_status level_spmv(const host_amg *a, int l, double alpha, const double *x, double beta,
                             double *y)
{
    if (l == 0) return sps_operator_apply(a->op0, alpha, x, beta, y);
    sps__csr_spmv(&a->h->lv[l].A, alpha, x, beta, y);
    return SPS_OK;
}

/* r = b - A_l x */
static sps_status residual(const host_amg *a, int l, const double *b, const double *x, double *r)
{
    memcpy(r, b, (size_t)a->h->lv[l].n * sizeof *r);
    return level_spmv(a, l, -1.0, x, 1.0, r);
}

static sps_status smooth_l1(const host_amg *a, int l, const double *b, double *x, int zero)
{
    const sps_amg_level *L = &a->h->lv[l];
    for (int s = 0; s < a->h->sweeps; s++) {
        if (s == 0 && zero) {
            for (sps_idx i = 0; i < L->n; i++) x[i] = L->dinv[i] * b[i];
            continue;
        }
        sps_status st = residual(a, l, b, x, L->r);
        if (st != SPS_OK) return st;
        for (sps_idx i = 0; i < L->n; i++) x[i] += L->dinv[i] * L->r[i];
    }
    return SPS_OK;
}

/* Chebyshev (cheby.c's recurrence) from x: res = b - A x; d = c2 D^-1 res;
 * x += d; then per step res -= A d; d = c1 d + c2 D^-1 res; x += d. */
static sps_status smooth_cheby(const host_amg *a, int l, const double *b, double *x, int zero)
{
    const sps_amg_level *L = &a->h->lv[l];
    double *res = L->r, *d = L->d;
    sps_status st = SPS_OK;
    if (zero) memcpy(res, b, (size_t)L->n * sizeof *res);
    else st = residual(a, l, b, x, res);
    if (st != SPS_OK) return st;
    for (sps_idx i = 0; i < L->n; i++) {
        d[i] = L->c2[0] * L->dinv[i] * res[i];
        x[i] = zero ? d[i] : x[i] + d[i];
    }
    for (int k = 1; k <= a->h->sweeps; k++) {
        if ((st = level_spmv(a, l, -1.0, d, 1.0, res)) != SPS_OK) return st;
        for (sps_idx i = 0; i < L->n; i++) {
            d[i] = L->c1[k] * d[i] + L->c2[k] * L->dinv[i] * res[i];
            x[i] += d[i];
        }
    }
    return SPS_OK;
}

static sps_status smooth(const host_amg *a, int l, const double *b, double *x, int zero)
{
    return a->h->smoother == SPS_AMG_CHEBY ? smooth_cheby(a, l, b, x, zero)
                                           : smooth_l1(a, l, b, x, zero);
}

/* r_l = b - A_l x_l after the pre-smoothing. Chebyshev leaves
 * res = b - A (x - d) in r: one product with d finishes it, without the
 * copy of b. */
static sps_status down_residual(const host_amg *a, int l, const double *b)
{
    const sps_amg_level *L = &a->h->lv[l];
    if (a->h->smoother == SPS_AMG_CHEBY) return level_spmv(a, l, -1.0, L->d, 1.0, L->r);
    return residual(a, l, b, L->x, L->r);
}

/* x = C b, C the dense inverse (row-major). */
static void coarse_solve(const sps_amg *h, const double *b, double *x)
{
    for (sps_idx i = 0; i < h->nc; i++) {
        double s = 0.0;
        for (sps_idx j = 0; j < h->nc; j++) s += h->cinv[(size_t)i * h->nc + j] * b[j];
        x[i] = s;
    }
}

static sps_status apply_host(sps_precond *pc, const double *r, double *z)
{
    const host_amg *a = pc->impl;
    sps_amg *h = a->h;
    int L = h->nlevels;
    h->lv[0].x = z;
    const double *b0 = r;
    sps_status st = SPS_OK;
    for (int l = 0; l + 1 < L && st == SPS_OK; l++) {
        const double *b = l ? h->lv[l].b : b0;
        st = smooth(a, l, b, h->lv[l].x, 1);
        if (st == SPS_OK) st = down_residual(a, l, b);
        if (st == SPS_OK) sps__csr_spmv(&h->lv[l].R, 1.0, h->lv[l].r, 0.0, h->lv[l + 1].b);
    }
    if (st == SPS_OK) coarse_solve(h, L > 1 ? h->lv[L - 1].b : b0, h->lv[L - 1].x);
    for (int l = L - 2; l >= 0 && st == SPS_OK; l--) {
        sps__csr_spmv(&h->lv[l].P, 1.0, h->lv[l + 1].x, 1.0, h->lv[l].x);
        st = smooth(a, l, l ? h->lv[l].b : b0, h->lv[l].x, 0);
    }
    h->lv[0].x = NULL;
    return st;
}

static void free_host(host_amg *a)
{
    if (!a) return;
    if (a->own_op0) sps_operator_destroy(a->op0);
    if (a->h) sps__amg_free(a->h);
    sps__free(a->h);
    sps__free(a);
}

static void host_destroy(sps_precond *pc)
{
    free_host(pc->impl);
    pc->impl = NULL;
}

/* Work vectors of every level (level 0's x is the caller's z). */
static sps_status host_vectors(sps_context *ctx, sps_amg *h)
{
    for (int l = 0; l < h->nlevels; l++) {
        sps_amg_level *L = &h->lv[l];
        size_t nb = sps__mul_size((size_t)L->n + 1, sizeof(double));
        if (l) L->x = sps__malloc(nb);
        L->b = sps__malloc(nb);
        L->r = sps__malloc(nb);
        L->d = sps__malloc(nb);
        if ((l && !L->x) || !L->b || !L->r || !L->d)
            return sps__err(ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    }
    return SPS_OK;
}

/* The hierarchy into a's (freeing the old one); on a host context the fine
 * operator and the work vectors too. */
static sps_status build_into(sps_precond *pc, host_amg *a, const sps_matrix *A, int block, int k,
                             const double *B, int gpu)
{
    const sps_amg_prm *prm = pc->prm;
    if (a->h) sps__amg_free(a->h);
    else a->h = sps__calloc(1, sizeof *a->h);
    if (!a->h) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    sps_status st;
#if SPS_HAVE_CUDA
    if (gpu && prm->setup == SPS_AMG_SETUP_GPU && block == 1 && !B) { /* else: the host setup */
        /* level 0 on the device once, through pinned memory, cached on A as
         * every operator's copy is (the solve's operator made it already, or
         * the fine operator amg_setup_dev makes copies it); without room for
         * it, the device setup uploads its own */
        const sps_dcsr *d0 = NULL;
        st = sps__matrix_device(pc->ctx, A, &d0, NULL);
        if (st == SPS_OK || st == SPS_ERR_NO_MEMORY) st = sps__amg_build_gpu(pc->ctx, prm, &A->A, a->h);
    } else
#endif
        st = sps__amg_build(pc->ctx, prm, &A->A, block, k, B, a->h);
    if (st != SPS_OK || gpu) return st;
    if (!a->op0) {
        st = sps_operator_create(pc->ctx, A, "csr-vector", NULL, &a->op0);
        if (st != SPS_OK) return st;
        a->own_op0 = 1;
    }
    return host_vectors(pc->ctx, a->h);
}

static sps_status amg_setup(sps_precond *pc, const sps_pc_input *in)
{
    const sps_amg_prm *prm = pc->prm;
    host_amg *a = sps__calloc(1, sizeof *a);
    if (!a) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "amg: out of memory");
    pc->impl = a;
    pc->destroy = host_destroy;
    pc->apply = apply_host;
    if (!in->gpu) a->op0 = in->op;
    return build_into(pc, a, in->A, prm->block, 1, NULL, in->gpu);
}

#if SPS_HAVE_CUDA
static sps_status amg_setup_dev(sps_precond *pc, const sps_pc_input *in, void *host)
{
    host_amg *a = host;
    sps_amg *h = a->h;
    a->h = NULL; /* the device preconditioner owns it now */
    sps_operator *op = in->op;
    if (!op) {
        sps_status st = sps_operator_create(pc->ctx, in->A, "csr-vector", NULL, &op);
        if (st != SPS_OK) {
            sps__amg_free(h);
            sps__free(h);
            return st;
        }
    }
    return sps__amg_gpu(pc, h, op, !in->op);
}
#endif

/* ---- parameters and table ------------------------------------------------ */

static void amg_default(void *p)
{
    sps_amg_prm *prm = p;
    prm->theta = 0.08;
    prm->sweeps = 1; /* Chebyshev of degree 1: the cheapest time to solution (doc/precond.md) */
    prm->smoother = SPS_AMG_CHEBY;
    prm->coarse = 500;
    prm->levels = 10;
    prm->block = 1;
    prm->setup = SPS_AMG_SETUP_GPU; /* on a GPU context; a host context always builds on the host */
    prm->gpu_min = SPS_AMG_GPU_MIN;
}

static sps_status amg_set(sps_context *ctx, void *p, const char *key, const char *value)
{
    sps_amg_prm *prm = p;
    if (strcmp(key, "theta") == 0) {
        if (strcmp(value, "0") == 0) {
            prm->theta = 0.0;
            return SPS_OK;
        }
        sps_status st = sps__pc_num(ctx, "amg", key, value, &prm->theta);
        if (st == SPS_OK && prm->theta >= 1.0)
            st = sps__err(ctx, SPS_ERR_INVALID_ARG, "amg: theta='%s' must be in [0, 1)", value);
        return st;
    }
    if (strcmp(key, "sweeps") == 0)
        return sps__pc_int(ctx, "amg", key, value, 1, SPS_AMG_MAX_DEGREE, &prm->sweeps);
    if (strcmp(key, "coarse") == 0)
        return sps__pc_int(ctx, "amg", key, value, 1, SPS_AMG_MAX_DENSE, &prm->coarse);
    if (strcmp(key, "levels") == 0)
        return sps__pc_int(ctx, "amg", key, value, 1, SPS_AMG_MAX_LEVELS, &prm->levels);
    if (strcmp(key, "block") == 0)
        return sps__pc_int(ctx, "amg", key, value, 1, 64, &prm->block);
    if (strcmp(key, "gpu_min") == 0)
        return sps__pc_int(ctx, "amg", key, value, 0, SPS_IDX_MAX, &prm->gpu_min);
    if (strcmp(key, "setup") == 0) {
        if (strcmp(value, "host") == 0) prm->setup = SPS_AMG_SETUP_HOST;
        else if (strcmp(value, "gpu") == 0) prm->setup = SPS_AMG_SETUP_GPU;
        else
            return sps__err(ctx, SPS_ERR_INVALID_ARG, "amg: setup='%s' is not host or gpu", value);
        return SPS_OK;
    }
    if (strcmp(value, "cheby") == 0) prm->smoother = SPS_AMG_CHEBY;
    else if (strcmp(value, "l1jacobi") == 0) prm->smoother = SPS_AMG_L1JACOBI;
    else
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "amg: smoother='%s' is not cheby or l1jacobi",
                        value);
    return SPS_OK;
}

const sps_pc_type sps_pc_amg = {
    .name = "amg",
    .summary = "smoothed-aggregation AMG, one V-cycle (smoother=cheby|l1jacobi, sweeps=1, "
               "theta=0.08, coarse=500, levels=10, block=1, setup=gpu|host, gpu_min=4096); SPD "
               "matrices",
    .caps = SPS_PCT_SYMMETRIC | SPS_PCT_USES_OP,
    .keys = "theta, sweeps, smoother, coarse, levels, block, setup, gpu_min",
    .prm_size = sizeof(sps_amg_prm),
    .prm_default = amg_default,
    .prm_set = amg_set,
    .setup_host = amg_setup,
    .setup_dev = SPS_PC_DEV(amg_setup_dev),
};

/* ---- the public calls ----------------------------------------------------- */

#if SPS_HAVE_CUDA
/* amg.cu: a new hierarchy uploaded; new values of the same one uploaded
 * (after the host's re-setup); the re-setup on the device (a hierarchy
 * with device levels). */
sps_status sps__amg_gpu_rebuild(sps_precond *pc, sps_amg *h);
sps_status sps__amg_gpu_values(sps_precond *pc, const double *a0);
sps_status sps__amg_gpu_numeric(sps_precond *pc, const sps_matrix *A);
#endif

static sps_status apply_broken(sps_precond *pc, const double *r, double *z)
{
    (void)r;
    (void)z;
    return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                    "amg: sps_precond_set_nullspace failed on this preconditioner; destroy it");
}

static sps_status nullspace_args(sps_precond *pc, const sps_matrix *A, int block, int k,
                                 const double *B)
{
    if (!pc || !A || !B) return sps__err(pc ? pc->ctx : NULL, SPS_ERR_INVALID_ARG,
                                         "sps_precond_set_nullspace: NULL argument");
    if (pc->type != &sps_pc_amg)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                        "sps_precond_set_nullspace: '%s' is not an amg preconditioner", pc->name);
    if (A->A.nrows != pc->n)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                        "sps_precond_set_nullspace: A has %d rows, the preconditioner %d",
                        A->A.nrows, pc->n);
    if (k < 1 || k > SPS_AMG_MAX_NULL || block < 1)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG,
                        "sps_precond_set_nullspace: %d vectors (1..%d), block %d (>= 1)", k,
                        SPS_AMG_MAX_NULL, block);
    return SPS_OK;
}

static sps_status rebuild(sps_precond *pc, const sps_matrix *A, int block, int k, const double *B)
{
    int gpu = sps_context_on_gpu(pc->ctx);
    if (!gpu) return build_into(pc, pc->impl, A, block, k, B, 0);
#if SPS_HAVE_CUDA
    sps_operator *op0 = NULL;
    host_amg tmp = {sps__amg_gpu_hierarchy(pc, &op0), NULL, 0};
    /* the old hierarchy's device arrays are the V-cycle's: no apply may still read them */
    sps_status st = sps__gpu_sync(pc->ctx);
    if (st == SPS_OK) st = build_into(pc, &tmp, A, block, k, B, 1);
    return st == SPS_OK ? sps__amg_gpu_rebuild(pc, tmp.h) : st;
#else
    return sps__err(pc->ctx, SPS_ERR_INTERNAL, "amg: GPU context in a build without CUDA");
#endif
}

sps_status sps_precond_set_nullspace(sps_precond *pc, const sps_matrix *A, int block, int k,
                                     const double *B)
{
    sps_status st = nullspace_args(pc, A, block, k, B);
    if (st != SPS_OK || pc->n == 0) return st;
    double t0 = sps__now_ms();
    st = rebuild(pc, A, block, k, B);
    pc->setup_ms = sps__now_ms() - t0;
    if (st != SPS_OK) pc->apply = apply_broken;
    return st;
}

/* The hierarchy as it is (a device-built one may have its levels on the
 * device only). */
static sps_amg *hierarchy_as_is(const sps_precond *pc)
{
    if (!pc || pc->type != &sps_pc_amg || !pc->impl || pc->n == 0) return NULL;
#if SPS_HAVE_CUDA
    if (sps_context_on_gpu(pc->ctx)) return sps__amg_gpu_hierarchy((sps_precond *)pc, NULL);
#endif
    return ((const host_amg *)pc->impl)->h;
}

static sps_status numeric(sps_precond *pc, const sps_matrix *A)
{
    sps_amg *h = hierarchy_as_is(pc);
    sps_status st = SPS_OK;
#if SPS_HAVE_CUDA
    if (h && sps_context_on_gpu(pc->ctx) && h->gpu_levels > 0) return sps__amg_gpu_numeric(pc, A);
    if (h && sps_context_on_gpu(pc->ctx)) st = sps__amg_host_copy(pc->ctx, h); /* what it reads */
#endif
    if (st == SPS_OK) st = sps__amg_numeric(pc->ctx, &A->A, h);
    if (st != SPS_OK) return st;
#if SPS_HAVE_CUDA
    if (sps_context_on_gpu(pc->ctx)) return sps__amg_gpu_values(pc, A->A.val);
#endif
    const host_amg *a = pc->impl;
    return a->own_op0 ? sps_operator_update_values(a->op0, A->A.val) : SPS_OK;
}

sps_status sps_precond_update_values(sps_precond *pc, const sps_matrix *A)
{
    if (!pc || !A)
        return sps__err(pc ? pc->ctx : NULL, SPS_ERR_INVALID_ARG,
                        "sps_precond_update_values: NULL argument");
    if (pc->type != &sps_pc_amg) return sps__pc_refresh(pc, A); /* the other types */
    if (pc->n == 0 || pc->apply == apply_broken) return pc->n == 0 ? SPS_OK : apply_broken(pc, NULL, NULL);
    double t0 = sps__now_ms();
    sps_status st = numeric(pc, A);
    pc->setup_ms = sps__now_ms() - t0;
    if (st != SPS_OK) pc->apply = apply_broken;
    return st;
}

sps_amg *sps__amg_hierarchy(const sps_precond *pc)
{
    sps_amg *h = hierarchy_as_is(pc);
#if SPS_HAVE_CUDA
    if (h && sps_context_on_gpu(pc->ctx) && sps__amg_host_copy(pc->ctx, h) != SPS_OK) return NULL;
#endif
    return h;
}

const char *sps_precond_describe(const sps_precond *pc)
{
    const char *mc = sps__mcilu_describe(pc); /* ilu0/ic0:order=color: the colours */
    if (mc) return mc;
    const sps_amg *h = hierarchy_as_is(pc); /* the summary: no copy to the host */
    return h ? h->desc : "";
}
