/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_amg_gpu.c: the AMG preconditioner on the GPU
 * against the host reference: the hierarchy the device keeps equals the
 * host's (levels, patterns, values bitwise), the V-cycle apply matches the
 * host's within 1e-10 relative, twice bitwise equal, r untouched, on every
 * entry (z starts as NaN); sizes around warp and block edges, an empty row,
 * one very long row, both smoothers, several levels, the rigid-body modes;
 * CG+amg iteration counts match the host's (+-1) and two GPU solves are
 * bitwise equal; the V-cycle's time in fine-level SpMVs. */
#include "check.h"
#include "core/gpu.h"
#include "internal.h"
#include "precond/amg/amg.h"
#include "precond/precond.h"
#include "unit/pc_check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA
static sps_context *gctx, *hctx;

static int same_csr(const sps_csr *a, const sps_csr *b)
{
    return a->nrows == b->nrows && a->ncols == b->ncols && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, ((size_t)a->nrows + 1) * sizeof *a->row_ptr) &&
           !memcmp(a->col_idx, b->col_idx, (size_t)a->nnz * sizeof *a->col_idx) &&
           !memcmp(a->val, b->val, (size_t)a->nnz * sizeof *a->val);
}

/* A CSR whose arrays are on the device only (its sizes on the host). */
static int dev_only_csr(const sps_csr *A)
{
    return A->dev && !A->row_ptr && !A->col_idx && !A->val;
}

/* setup=gpu's device levels as the setup leaves them: aggregates, scaling,
 * T, P, R and the device-built coarse matrices on the device only. */
static int device_only(const sps_amg *g)
{
    int ok = 1;
    for (int l = 0; l < g->gpu_levels && ok; l++) {
        const sps_amg_level *L = &g->lv[l];
        ok = !L->agg && !L->dinv && L->dagg && L->ddinv && dev_only_csr(&L->T) && dev_only_csr(&L->P) &&
             dev_only_csr(&L->R) && (l == 0 || dev_only_csr(&L->A));
    }
    return ok;
}

/* After a numeric re-setup of a device-built hierarchy: the device copies
 * of P, R and the coarse A (the V-cycle's arrays) hold the host's new values. */
static int device_copies_fresh(const sps_amg *g)
{
    int ok = 1;
    for (int l = 0; l + 1 < g->nlevels && ok; l++) {
        const sps_csr *M[3] = {&g->lv[l].P, &g->lv[l].R, &g->lv[l + 1].A};
        for (int k = 0; k < 3 && ok; k++) {
            if (!M[k]->dev) continue;
            const sps_dcsr *d = sps__csr_device_copy(gctx, M[k]);
            size_t nb = (size_t)M[k]->nnz * sizeof(double);
            double *v = malloc(nb + 1);
            ok = d && v && (nb == 0 || sps__d2h(gctx, v, d->val, nb) == SPS_OK) &&
                 !memcmp(v, M[k]->val, nb);
            free(v);
        }
    }
    return ok;
}

static void compare_hierarchy(const char *what, const sps_precond *hp, const sps_precond *gp)
{
    const sps_amg *h = sps__amg_hierarchy(hp), *g = sps__amg_hierarchy(gp);
    int same = h && g && h->nlevels == g->nlevels && h->nc == g->nc &&
               !memcmp(h->cinv, g->cinv, (size_t)h->nc * h->nc * sizeof *h->cinv);
    for (int l = 0; same && l < h->nlevels; l++) {
        const sps_amg_level *a = &h->lv[l], *b = &g->lv[l];
        same = a->n == b->n && a->nnz == b->nnz && (l == 0 || same_csr(&a->A, &b->A));
        if (same && l + 1 < h->nlevels)
            same = same_csr(&a->P, &b->P) && same_csr(&a->R, &b->R) &&
                   !memcmp(a->dinv, b->dinv, (size_t)a->n * sizeof *a->dinv) &&
                   !memcmp(a->c1, b->c1, sizeof a->c1) && !memcmp(a->c2, b->c2, sizeof a->c2);
    }
    T_OK(same, "%s: the GPU's hierarchy = the host's (%d levels)", what, h ? h->nlevels : 0);
}

/* Device apply of gp to r: z (host). */
static sps_status dev_apply(sps_precond *gp, const double *r, double *z, double *rb, sps_idx n)
{
    size_t nb = (size_t)n * sizeof(double);
    double *dr = NULL, *dz = NULL;
    sps_status st = sps__dmalloc(gctx, (void **)&dr, nb);
    if (st == SPS_OK) st = sps__dmalloc(gctx, (void **)&dz, nb);
    if (st == SPS_OK) st = sps__h2d(gctx, dr, r, nb);
    if (st == SPS_OK) st = sps__dmemset(gctx, dz, 0xff, nb); /* NaN: every entry must be written */
    if (st == SPS_OK) st = sps_precond_apply(gp, dr, dz);
    if (st == SPS_OK) st = sps__d2h(gctx, z, dz, nb);
    if (st == SPS_OK) st = sps__d2h(gctx, rb, dr, nb);
    sps__dfree(dr);
    sps__dfree(dz);
    return st;
}

/* How far rounding alone moves the host's V-cycle: hp's numeric re-setup on
 * A with every value perturbed by a relative 2^-50 (the aggregates and
 * patterns stay), applied to r, against zh. hp is set back to A. -1 if a
 * step fails. An ill-conditioned coarse matrix would amplify rounding, and
 * the GPU sums in another order, so the GPU is held to 100x this floor when
 * it is above 1e-12 (on the host: 1138_bus 1.1e-12, nos2 8.9e-13, bcsstk13
 * 8.8e-16; restoring A's values gives the first z back bitwise). */
static double rounding_noise(sps_precond *hp, const sps_matrix *A, const double *r, const double *zh)
{
    const sps_csr *C = &A->A;
    sps_idx n = C->nrows;
    double *v = malloc(((size_t)C->nnz + 1) * sizeof *v), *zp = malloc((size_t)n * sizeof *zp), noise = -1;
    uint64_t seed = 99;
    for (sps_idx p = 0; p < C->nnz; p++) v[p] = C->val[p] * (1.0 + ldexp(t_rand(&seed), -50));
    sps_matrix *P = NULL;
    if (sps_matrix_create_csr(hctx, n, n, C->row_ptr, C->col_idx, v, &P) == SPS_OK &&
        sps_precond_update_values(hp, P) == SPS_OK && sps_precond_apply(hp, r, zp) == SPS_OK) {
        double num = 0, den = 0;
        for (sps_idx i = 0; i < n; i++) {
            num += (zp[i] - zh[i]) * (zp[i] - zh[i]);
            den += zh[i] * zh[i];
        }
        noise = den > 0 ? sqrt(num / den) : sqrt(num);
    }
    if (sps_precond_update_values(hp, A) != SPS_OK) noise = -1;
    sps_matrix_destroy(P);
    free(v);
    free(zp);
    return noise;
}

static void compare_apply(const char *what, const sps_matrix *A, sps_precond *hp, sps_precond *gp)
{
    sps_idx n = sps_matrix_rows(A);
    size_t nb = (size_t)n * sizeof(double);
    double *r = malloc(nb), *zh = malloc(nb), *z1 = malloc(nb), *z2 = malloc(nb), *rb = malloc(nb);
    uint64_t seed = 11;
    for (sps_idx i = 0; i < n; i++) r[i] = t_rand(&seed);
    sps_status st = sps_precond_apply(hp, r, zh);
    if (st == SPS_OK) st = dev_apply(gp, r, z1, rb, n);
    if (st == SPS_OK) st = dev_apply(gp, r, z2, rb, n);
    if (T_STATUS(gctx, st, "%s: GPU apply", what)) {
        double num = 0, den = 0;
        for (sps_idx i = 0; i < n; i++) {
            num += (z1[i] - zh[i]) * (z1[i] - zh[i]);
            den += zh[i] * zh[i];
        }
        double rel = den > 0 ? sqrt(num / den) : sqrt(num), tol = 1e-10;
        if (rel > tol) {
            double noise = rounding_noise(hp, A, r, zh);
            if (noise > 1e-12) tol = 100 * noise;
        }
        T_OK(rel <= tol, "%s: GPU V-cycle = host V-cycle (relative %.2g, tolerance %.2g)", what, rel, tol);
        T_OK(memcmp(z1, z2, nb) == 0, "%s: two GPU applies bitwise equal", what);
        T_OK(memcmp(r, rb, nb) == 0, "%s: r unchanged on the device", what);
    }
    free(r); free(zh); free(z1); free(z2); free(rb);
}

/* Build `type` on the host and on the GPU (with B: the nullspace) and compare. */
static void compare_nb(const char *what, const sps_matrix *A, const char *type, int block, int k,
                       const double *B)
{
    char name[160];
    snprintf(name, sizeof name, "%s %s%s", what, type, B ? " +nullspace" : "");
    sps_precond *hp = NULL, *gp = NULL;
    sps_status hs = sps_precond_create(hctx, A, type, &hp);
    char hmsg[1024];
    snprintf(hmsg, sizeof hmsg, "%s", sps_last_error(hctx));
    /* setup=host: the same hierarchy on both sides, so this tests the device
     * V-cycle; test_setup_gpu tests the device setup (the default) */
    char gtype[200];
    snprintf(gtype, sizeof gtype, "%s%ssetup=host", type, strchr(type, ':') ? "," : ":");
    sps_status gs = sps_precond_create(gctx, A, gtype, &gp);
    if (hs == SPS_OK && B) hs = sps_precond_set_nullspace(hp, A, block, k, B);
    if (gs == SPS_OK && B) gs = sps_precond_set_nullspace(gp, A, block, k, B);
    if (hs != SPS_OK) {
        T_OK(gs == hs && strcmp(sps_last_error(gctx), hmsg) == 0,
             "%s: the GPU fails like the host (%s / %s)", name, hmsg, sps_last_error(gctx));
    } else if (T_STATUS(gctx, gs, "%s: GPU setup (%.1f ms)", name, sps_precond_setup_ms(gp))) {
        compare_hierarchy(name, hp, gp);
        compare_apply(name, A, hp, gp);
    }
    sps_precond_destroy(hp);
    sps_precond_destroy(gp);
}

static void compare(const char *what, const sps_matrix *A, const char *type)
{
    compare_nb(what, A, type, 1, 0, NULL);
}

static void each_compare(const char *spec, const sps_matrix *A, const char *type, const char *extra)
{
    (void)extra;
    compare(spec, A, type);
}

static void test_generated(void)
{
    static const pc_case cases[] = {
        {"poisson3d:20", "amg amg:smoother=l1jacobi amg:sweeps=3 amg:coarse=20 amg:levels=2,coarse=4000", NULL},
        {"poisson3d:64", "amg amg:smoother=l1jacobi,sweeps=2", NULL},
        {"poisson3d-jump:24,1e4", "amg", NULL},
        {"aniso3d:20,0.001", "amg amg:theta=0.25", NULL},
        {"poisson2d:60", "amg amg:coarse=1", NULL},
        {"poisson3d27:12", "amg", NULL},
        {"elasticity3d:5", "amg amg:block=3", NULL},
        {"poisson3d:6", "amg", NULL}, /* one level: the dense inverse alone */
    };
    pc_each_case(hctx, cases, sizeof cases / sizeof *cases, each_compare);
}

static void test_rbm(void)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(hctx, "elasticity3d:6", &A) != SPS_OK) return;
    sps_idx n = sps_matrix_rows(A);
    double *B = malloc((size_t)n * 6 * sizeof *B);
    if (T_STATUS(hctx, sps_matrix_generate_rbm(hctx, "elasticity3d:6", n, B), "rbm"))
        compare_nb("elasticity3d:6", A, "amg", 3, 6, B);
    free(B);
    sps_matrix_destroy(A);
}

/* Every SPD real matrix up to 60000 rows. */
static void test_real(void)
{
    const char *const *names = t_real_matrices();
    int n = 0;
    for (int k = 0; names[k]; k++) {
        const char *kind = t_manifest_kind(names[k]), *path = t_real_matrix_path(names[k]);
        sps_matrix *A = NULL;
        if (!kind || strcmp(kind, "spd") || !path || sps_matrix_read(hctx, path, &A) != SPS_OK) continue;
        if (sps_matrix_rows(A) <= 60000) {
            compare(names[k], A, "amg");
            compare(names[k], A, "amg:coarse=20,smoother=l1jacobi");
            n++;
        }
        sps_matrix_destroy(A);
    }
    T_OK(n > 0, "SPD real matrices compared: %d", n);
}

/* Numeric-only re-setup on the host and on the GPU (gspec: the GPU's amg)
 * after A's values change (x 2.5, + 0.5 on the diagonal): the device's
 * hierarchy and V-cycle equal the host's again. */
static void compare_numeric(const char *what, const char *gspec)
{
    sps_matrix *A = NULL, *A2 = NULL;
    if (sps_matrix_generate(hctx, "poisson3d-jump:24,1e3", &A) != SPS_OK) return;
    const sps_csr *C = &A->A;
    double *v = malloc((size_t)C->nnz * sizeof *v);
    for (sps_idx i = 0; i < C->nrows; i++)
        for (sps_idx p = C->row_ptr[i]; p < C->row_ptr[i + 1]; p++)
            v[p] = 2.5 * C->val[p] + (C->col_idx[p] == i ? 0.5 : 0.0);
    sps_precond *hp = NULL, *gp = NULL;
    if (T_STATUS(hctx, sps_matrix_create_csr(hctx, C->nrows, C->ncols, C->row_ptr, C->col_idx, v, &A2), "A2") &&
        T_STATUS(hctx, sps_precond_create(hctx, A, "amg:coarse=30", &hp), "host amg") &&
        T_STATUS(gctx, sps_precond_create(gctx, A, gspec, &gp), "GPU %s", gspec) &&
        T_STATUS(hctx, sps_precond_update_values(hp, A2), "host numeric re-setup") &&
        T_STATUS(gctx, sps_precond_update_values(gp, A2), "%s (%.1f ms)", what, sps_precond_setup_ms(gp))) {
        compare_hierarchy(what, hp, gp);
        compare_apply(what, A2, hp, gp);
        const sps_amg *g = sps__amg_hierarchy(gp);
        if (g && g->gpu_levels > 0)
            T_OK(device_copies_fresh(g), "%s: the device levels' copies hold the new values", what);
    }
    sps_precond_destroy(hp);
    sps_precond_destroy(gp);
    sps_matrix_destroy(A);
    sps_matrix_destroy(A2);
    free(v);
}

/* A host-built hierarchy on the GPU (setup=host): its numeric re-setup. */
static void test_numeric(void) { compare_numeric("numeric re-setup", "amg:coarse=30,setup=host"); }

static void test_edges(void)
{
    const sps_idx sizes[] = {31, 32, 33, 1023, 1024, 1025};
    char what[64];
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        sps_matrix *A = pc_chain(hctx, sizes[k], -1, 0);
        snprintf(what, sizeof what, "chain n=%d", sizes[k]);
        if (A) compare(what, A, "amg:coarse=4");
        sps_matrix_destroy(A);
    }
    sps_matrix *E = pc_chain(hctx, 1000, 500, 0), *L = pc_chain(hctx, 1025, -1, 1);
    if (E) compare("chain 1000, row 500 empty", E, "amg:coarse=4");
    if (L) compare("arrow 1025 (row 0 has 1025 entries)", L, "amg:coarse=4");
    sps_matrix_destroy(E);
    sps_matrix_destroy(L);
    const char *types[] = {"amg"};
    pc_check_empty(hctx, gctx, types, 1, "GPU ");
}

/* CG + amg: the GPU converges in the host's iteration count (+-1); two GPU
 * solves are bitwise equal. */
static void test_solve(void)
{
    static const char *const specs[] = {"poisson3d:40", "poisson3d-jump:32,1e4"};
    for (int m = 0; m < 2; m++) {
        sps_matrix *A = NULL;
        if (sps_matrix_generate(hctx, specs[m], &A) != SPS_OK) continue;
        sps_idx n = sps_matrix_rows(A);
        size_t nb = (size_t)n * sizeof(double);
        double *b = malloc(nb), *x[3];
        for (sps_idx i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.1;
        sps_context *cs[3] = {hctx, gctx, gctx};
        int64_t its[3] = {-1, -1, -1};
        for (int k = 0; k < 3; k++) {
            x[k] = calloc((size_t)n, sizeof(double));
            sps_operator *op = NULL;
            sps_precond *pc = NULL;
            sps_solver *s = NULL;
            sps_solve_info in;
            if (T_STATUS(cs[k], sps_operator_create(cs[k], A, "csr-vector", NULL, &op), "op %d", k) &&
                T_STATUS(cs[k], sps_precond_create_ex(cs[k], A, op, "amg", &pc), "amg %d", k) &&
                T_STATUS(cs[k], sps_solver_create(cs[k], &s), "solver %d", k) &&
                T_STATUS(cs[k], sps_solve(s, op, pc, b, x[k], &in), "solve %d", k) && in.reason > 0)
                its[k] = in.iterations;
            sps_solver_destroy(s);
            sps_precond_destroy(pc);
            sps_operator_destroy(op);
        }
        T_OK(its[0] > 0 && its[1] > 0 && llabs(its[1] - its[0]) <= 1,
             "%s CG+amg: GPU %lld iterations, host %lld", specs[m], (long long)its[1], (long long)its[0]);
        T_OK(its[1] == its[2] && memcmp(x[1], x[2], nb) == 0, "%s CG+amg: two GPU solves bitwise equal",
             specs[m]);
        for (int k = 0; k < 3; k++) free(x[k]);
        free(b);
        sps_matrix_destroy(A);
    }
}

/* ---- amg:setup=gpu: the device setup against the host's -------------------- */

/* Largest |a - b| over the largest |a| (patterns equal), or -1 when the
 * patterns differ. */
static double csr_diff(const sps_csr *a, const sps_csr *b)
{
    if (a->nrows != b->nrows || a->ncols != b->ncols || a->nnz != b->nnz ||
        memcmp(a->row_ptr, b->row_ptr, ((size_t)a->nrows + 1) * sizeof *a->row_ptr) ||
        memcmp(a->col_idx, b->col_idx, (size_t)a->nnz * sizeof *a->col_idx))
        return -1;
    double d = 0, m = 0;
    for (sps_idx p = 0; p < a->nnz; p++) {
        d = fmax(d, fabs(a->val[p] - b->val[p]));
        m = fmax(m, fabs(a->val[p]));
    }
    return m > 0 ? d / m : d;
}

/* The device's products redone on the host from the device's own inputs
 * (its rho, P_tent, P, A P): bitwise equal, for the arithmetic order is the
 * host's. A0: level 0's matrix. */
static void check_products_bitwise(const char *what, const sps_amg *g, const sps_csr *A0)
{
    int bad = 0, checked = 0;
    for (int l = 0; l < g->gpu_levels && !bad; l++) {
        const sps_amg_level *L = &g->lv[l];
        const sps_csr *A = l ? &L->A : A0;
        sps_csr S, P, R, AP, Ac;
        memset(&P, 0, sizeof P); memset(&R, 0, sizeof R); memset(&AP, 0, sizeof AP); memset(&Ac, 0, sizeof Ac);
        int with_ap = L->AP.row_ptr != NULL; /* setup=gpu leaves A P on the device */
        if (sps__csr_copy(hctx, A, &S) != SPS_OK) { bad = 1; break; }
        double omega = 4.0 / (3.0 * L->rho);
        for (sps_idx i = 0; i < A->nrows; i++) {
            double d = 0;
            for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
                if (A->col_idx[p] == i) d = A->val[p];
            double di = d != 0.0 ? 1.0 / d : 0.0;
            for (sps_idx p = A->row_ptr[i]; p < A->row_ptr[i + 1]; p++)
                S.val[p] = (A->col_idx[p] == i ? 1.0 : 0.0) - omega * di * A->val[p];
        }
        bad = sps__amg_spgemm(hctx, &S, &L->T, &P) != SPS_OK || !same_csr(&P, &L->P) ||
              sps__amg_transpose(hctx, &L->P, &R) != SPS_OK || !same_csr(&R, &L->R) ||
              sps__amg_spgemm(hctx, A, &L->P, &AP) != SPS_OK || (with_ap && !same_csr(&AP, &L->AP)) ||
              sps__amg_spgemm(hctx, &L->R, &AP, &Ac) != SPS_OK || !same_csr(&Ac, &g->lv[l + 1].A);
        if (bad) T_FAIL(what, "level %d: P %d, R %d, AP %d, A_c %d bitwise the host's products of "
                        "the same inputs", l, same_csr(&P, &L->P), same_csr(&R, &L->R),
                        !with_ap || same_csr(&AP, &L->AP), same_csr(&Ac, &g->lv[l + 1].A));
        checked++;
        sps__csr_free(&S); sps__csr_free(&P); sps__csr_free(&R); sps__csr_free(&AP); sps__csr_free(&Ac);
    }
    if (!bad) T_OK(checked == g->gpu_levels, "%s: P = S P_tent, R = P', A P, R (A P) of %d device "
                   "levels bitwise the host's products of the same inputs", what, checked);
}

/* h: the host setup's hierarchy, g: the device setup's. */
static void compare_setup(const char *what, const sps_amg *h, const sps_amg *g, const sps_csr *A0,
                          int want_gpu)
{
    if (!T_OK(h && g && h->nlevels == g->nlevels, "%s: levels host %d, device setup %d", what,
              h ? h->nlevels : -1, g ? g->nlevels : -1))
        return;
    if (want_gpu) T_OK(g->gpu_levels > 0, "%s: %d levels built on the device", what, g->gpu_levels);
    else T_OK(g->gpu_levels == 0, "%s: the host setup (fallback)", what);
    int agg = 1, tent = 1, dinv = 1;
    double vals = 0, rho = 0;
    for (int l = 0; l + 1 < h->nlevels; l++) {
        const sps_amg_level *a = &h->lv[l], *b = &g->lv[l];
        sps_idx nodes = a->n / (a->bs ? a->bs : 1);
        agg = agg && a->nagg == b->nagg && a->agg && b->agg && !memcmp(a->agg, b->agg, (size_t)nodes * sizeof *a->agg);
        tent = tent && csr_diff(&a->T, &b->T) == 0;
        if (l == 0) dinv = !memcmp(a->dinv, b->dinv, (size_t)a->n * sizeof *a->dinv);
        rho = fmax(rho, fabs(a->rho - b->rho) / a->rho);
        double d[4] = {csr_diff(&a->P, &b->P), csr_diff(&a->R, &b->R),
                       b->AP.row_ptr ? csr_diff(&a->AP, &b->AP) : 0, /* setup=gpu: no A P */
                       csr_diff(&h->lv[l + 1].A, &g->lv[l + 1].A)};
        for (int k = 0; k < 4; k++) vals = d[k] < 0 || vals < 0 ? -1 : fmax(vals, d[k]);
    }
    T_OK(agg, "%s: the aggregates of every level bitwise the host's", what);
    T_OK(tent, "%s: P_tent of every level bitwise the host's", what);
    T_OK(dinv, "%s: level 0's smoother scaling bitwise the host's", what);
    T_OK(rho <= 1e-12, "%s: rho within %.2g of the host's (tolerance 1e-12)", what, rho);
    T_OK(vals >= 0 && vals <= 1e-10, "%s: P, R, A P, A_c in the host's patterns, values within %.2g "
         "(tolerance 1e-10)", what, vals);
    if (want_gpu) check_products_bitwise(what, g, A0);
    if (want_gpu && g->nc > 0) { /* the coarse inverse (on the device after device levels) */
        double *inv = malloc(((size_t)g->nc * g->nc + 1) * sizeof *inv);
        int same = inv && sps__amg_dense_inverse(hctx, &g->lv[g->nlevels - 1].A, inv) == SPS_OK &&
                   !memcmp(inv, g->cinv, (size_t)g->nc * g->nc * sizeof *inv);
        T_OK(same, "%s: the coarse inverse (%d rows, made on the %s) bitwise the host's of the same "
             "matrix", what, g->nc, g->dcinv ? "device" : "host");
        free(inv);
    }
}

/* Two device setups bitwise equal. */
static int same_hierarchy(const sps_amg *a, const sps_amg *b)
{
    int same = a && b && a->nlevels == b->nlevels && a->nc == b->nc &&
               !memcmp(a->cinv, b->cinv, (size_t)a->nc * a->nc * sizeof *a->cinv);
    for (int l = 0; same && l < a->nlevels; l++) {
        const sps_amg_level *x = &a->lv[l], *y = &b->lv[l];
        same = x->n == y->n && (l == 0 || same_csr(&x->A, &y->A));
        if (same && l + 1 < a->nlevels)
            same = same_csr(&x->P, &y->P) && same_csr(&x->R, &y->R) && same_csr(&x->T, &y->T) &&
                   (!x->AP.row_ptr || same_csr(&x->AP, &y->AP)) && x->rho == y->rho &&
                   !memcmp(x->dinv, y->dinv, (size_t)x->n * sizeof *x->dinv);
    }
    return same;
}

/* Host `type` against GPU `type,setup=gpu[extra]` (B: a nullspace, which
 * takes the host path). */
static void compare_gpu_setup(const char *what, const sps_matrix *A, const char *type, const char *extra,
                              int block, int k, const double *B)
{
    char gtype[200], name[260];
    snprintf(gtype, sizeof gtype, "%s%ssetup=gpu%s", type, strchr(type, ':') ? "," : ":", extra);
    snprintf(name, sizeof name, "%s %s%s", what, gtype, B ? " +nullspace" : "");
    sps_precond *hp = NULL, *gp = NULL, *gp2 = NULL;
    sps_status hs = sps_precond_create(hctx, A, type, &hp);
    sps_status gs = sps_precond_create(gctx, A, gtype, &gp);
    if (gs == SPS_OK) gs = sps_precond_create(gctx, A, gtype, &gp2);
    if (hs == SPS_OK && B) hs = sps_precond_set_nullspace(hp, A, block, k, B);
    if (gs == SPS_OK && B) gs = sps_precond_set_nullspace(gp, A, block, k, B);
    if (gs == SPS_OK && B) gs = sps_precond_set_nullspace(gp2, A, block, k, B);
    if (T_STATUS(hctx, hs, "%s: host setup", name) &&
        T_STATUS(gctx, gs, "%s: device setup (%.1f ms)", name, sps_precond_setup_ms(gp))) {
        /* the device levels stay on the device until something reads them */
        const sps_amg *g0 = sps__amg_gpu_hierarchy(gp, NULL);
        if (g0 && g0->gpu_levels > 0)
            T_OK(g0->host_partial && device_only(g0),
                 "%s: %d device levels left on the device by the setup (only sizes on the host)",
                 name, g0->gpu_levels);
        const sps_amg *g = sps__amg_hierarchy(gp);
        T_OK(g && !g->host_partial, "%s: the host copy made on demand", name);
        sps_idx gmin = strstr(extra, "gpu_min=0") ? 0 : SPS_AMG_GPU_MIN;
        int want_gpu = !B && !strstr(type, "block=") && sps_matrix_rows(A) > gmin && g && g->nlevels > 1;
        compare_setup(name, sps__amg_hierarchy(hp), g, &A->A, want_gpu);
        T_OK(same_hierarchy(g, sps__amg_hierarchy(gp2)), "%s: two device setups bitwise equal", name);
        compare_apply(name, A, hp, gp);
        printf("# %s: %s", name, g ? g->desc : "(none)\n");
    }
    sps_precond_destroy(hp);
    sps_precond_destroy(gp);
    sps_precond_destroy(gp2);
}

static void each_setup_gpu(const char *spec, const sps_matrix *A, const char *type, const char *extra)
{
    compare_gpu_setup(spec, A, type, extra, 1, 0, NULL);
}

static void test_setup_gpu(void)
{
    static const pc_case cases[] = {
        {"poisson3d:20", "amg amg:smoother=l1jacobi amg:sweeps=3 amg:coarse=20", ",gpu_min=0"},
        {"poisson3d:64", "amg amg:smoother=l1jacobi,sweeps=2", ""},
        {"poisson3d-jump:24,1e4", "amg", ",gpu_min=0"},
        {"aniso3d:20,0.001", "amg amg:theta=0.2", ",gpu_min=0"},
        {"poisson2d:60", "amg amg:coarse=1", ",gpu_min=0"},
        {"poisson3d27:12", "amg", ",gpu_min=0"},
        {"elasticity3d:5", "amg amg:block=3", ",gpu_min=0"}, /* block=3: the host path */
        {"poisson3d:6", "amg", ",gpu_min=0"},                /* one level */
    };
    pc_each_case(hctx, cases, sizeof cases / sizeof *cases, each_setup_gpu);
    /* the products' lanes forced (amg_dsetup.cu's SPS_AMG_LANES): 4 lanes a
     * row leave tables of 48 slots, so many rows overflow into the
     * one-thread kernels beside the group ones; 32; one thread a row */
    static const pc_case forced[] = {
        {"poisson3d-jump:24,1e4", "amg", ",gpu_min=0"},
        {"poisson3d27:12", "amg", ",gpu_min=0"},
    };
    static const char *lanes[] = {"4", "32", "0"};
    for (int k = 0; k < 3; k++) {
        setenv("SPS_AMG_LANES", lanes[k], 1);
        printf("# SPS_AMG_LANES=%s\n", lanes[k]);
        pc_each_case(hctx, forced, sizeof forced / sizeof *forced, each_setup_gpu);
    }
    unsetenv("SPS_AMG_LANES");
    sps_matrix *E = NULL; /* a user nullspace: the host path */
    if (sps_matrix_generate(hctx, "elasticity3d:6", &E) == SPS_OK) {
        sps_idx n = sps_matrix_rows(E);
        double *B = malloc((size_t)n * 6 * sizeof *B);
        if (T_STATUS(hctx, sps_matrix_generate_rbm(hctx, "elasticity3d:6", n, B), "rbm"))
            compare_gpu_setup("elasticity3d:6", E, "amg", ",gpu_min=0", 3, 6, B);
        free(B);
    }
    sps_matrix_destroy(E);
}

/* Warp and block edges, an empty row, a long row: every level above
 * coarse=4 on the device (gpu_min=0). */
static void test_setup_gpu_edges(void)
{
    const sps_idx sizes[] = {31, 32, 33, 1023, 1024, 1025};
    char what[64];
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        sps_matrix *A = pc_chain(hctx, sizes[k], -1, 0);
        snprintf(what, sizeof what, "chain n=%d", sizes[k]);
        if (A) compare_gpu_setup(what, A, "amg:coarse=4", ",gpu_min=0", 1, 0, NULL);
        sps_matrix_destroy(A);
    }
    sps_matrix *E = pc_chain(hctx, 1000, 500, 0), *L = pc_chain(hctx, 1025, -1, 1);
    if (E) compare_gpu_setup("chain 1000, row 500 empty", E, "amg:coarse=4", ",gpu_min=0", 1, 0, NULL);
    if (L) compare_gpu_setup("arrow 1025 (row 0 has 1025 entries)", L, "amg:coarse=4", ",gpu_min=0", 1, 0, NULL);
    sps_matrix_destroy(E);
    sps_matrix_destroy(L);
    const char *types[] = {"amg:setup=gpu,gpu_min=0"};
    pc_check_empty(hctx, gctx, types, 1, "GPU setup ");
}

/* A2 = 2.5 A + I/2 (A's pattern), or A's pattern with row 0's last entry
 * moved to row 1 (another pattern, as many entries). */
static sps_matrix *variant(const sps_matrix *A, int other)
{
    const sps_csr *C = &A->A;
    sps_matrix *M = NULL;
    double *v = malloc((size_t)C->nnz * sizeof *v + 1);
    sps_idx *rp = malloc(((size_t)C->nrows + 1) * sizeof *rp);
    if (v && rp) {
        memcpy(rp, C->row_ptr, ((size_t)C->nrows + 1) * sizeof *rp);
        for (sps_idx i = 0; i < C->nrows; i++)
            for (sps_idx p = C->row_ptr[i]; p < C->row_ptr[i + 1]; p++)
                v[p] = other ? C->val[p] : 2.5 * C->val[p] + (C->col_idx[p] == i ? 0.5 : 0.0);
        if (other) rp[1]--;
        if (sps_matrix_create_csr(hctx, C->nrows, C->ncols, rp, C->col_idx, v, &M) != SPS_OK) M = NULL;
    }
    free(v);
    free(rp);
    return M;
}

/* The numeric re-setup on the device (sps__amg_numeric_gpu) of a
 * device-built hierarchy: with the setup's own values, bitwise the setup's
 * hierarchy; with 2.5 A + I/2, the host's re-setup to rounding
 * (compare_setup: aggregates and P_tent bitwise, rho within 1e-12, values
 * within 1e-10, the device's products bitwise the host's of its own
 * inputs, the coarse inverse bitwise), the V-cycle's copies fresh, the
 * apply the host's; two re-setups bitwise equal; another pattern refused. */
static void compare_gpu_numeric(const char *spec, const char *type, const char *extra)
{
    char gtype[200], name[260];
    snprintf(gtype, sizeof gtype, "%s%ssetup=gpu%s", type, strchr(type, ':') ? "," : ":", extra);
    snprintf(name, sizeof name, "%s %s, device re-setup", spec, gtype);
    sps_matrix *A = NULL, *A2 = NULL, *A3 = NULL;
    sps_precond *hp = NULL, *gp = NULL, *gp2 = NULL;
    if (!T_STATUS(hctx, sps_matrix_generate(hctx, spec, &A), "%s", spec)) return;
    A2 = variant(A, 0);
    A3 = variant(A, 1);
    if (T_OK(A2 && A3, "%s: the new values and another pattern", name) &&
        T_STATUS(hctx, sps_precond_create(hctx, A, type, &hp), "%s: host setup", name) &&
        T_STATUS(gctx, sps_precond_create(gctx, A, gtype, &gp), "%s: device setup", name) &&
        T_STATUS(gctx, sps_precond_create(gctx, A, gtype, &gp2), "%s: second device setup", name)) {
        double full = sps_precond_setup_ms(gp);
        const sps_amg *g0 = sps__amg_gpu_hierarchy(gp, NULL);
        T_OK(g0 && g0->gpu_levels > 0, "%s: %d device levels", name, g0 ? g0->gpu_levels : -1);
        if (T_STATUS(gctx, sps_precond_update_values(gp, A), "%s: the setup's values", name))
            T_OK(same_hierarchy(sps__amg_hierarchy(gp), sps__amg_hierarchy(gp2)),
                 "%s: with the setup's values, bitwise the setup's hierarchy", name);
        if (T_STATUS(hctx, sps_precond_update_values(hp, A2), "%s: host re-setup", name) &&
            T_STATUS(gctx, sps_precond_update_values(gp, A2), "%s (%.1f ms, the full setup %.1f)", name,
                     sps_precond_setup_ms(gp), full)) {
            const sps_amg *g = sps__amg_hierarchy(gp);
            compare_setup(name, sps__amg_hierarchy(hp), g, &A2->A, 1);
            T_OK(g && device_copies_fresh(g), "%s: the V-cycle's copies hold the new values", name);
            compare_apply(name, A2, hp, gp);
            if (T_STATUS(gctx, sps_precond_update_values(gp2, A2), "%s: second re-setup", name))
                T_OK(same_hierarchy(sps__amg_hierarchy(gp), sps__amg_hierarchy(gp2)),
                     "%s: two re-setups bitwise equal", name);
        }
        sps_status st = sps_precond_update_values(gp2, A3);
        T_OK(st == SPS_ERR_INVALID_ARG, "%s: another pattern refused (%s)", name, sps_last_error(gctx));
    }
    sps_precond_destroy(hp);
    sps_precond_destroy(gp);
    sps_precond_destroy(gp2);
    sps_matrix_destroy(A);
    sps_matrix_destroy(A2);
    sps_matrix_destroy(A3);
}

static void test_setup_gpu_numeric(void)
{
    compare_gpu_numeric("poisson3d-jump:24,1e3", "amg:coarse=30", ",gpu_min=0");      /* the coarse inverse the device's */
    compare_gpu_numeric("poisson3d-jump:24,1e3", "amg:coarse=30", ",gpu_min=2000");   /* host levels after the device's */
    compare_gpu_numeric("poisson3d:40", "amg:smoother=l1jacobi,sweeps=2", "");         /* the default gpu_min */
    compare_gpu_numeric("aniso3d:20,0.001", "amg:theta=0.2", ",gpu_min=0");
    /* every row of more than 64 terms a block's (k_long_into), then one thread a row (k_into_row) */
    setenv("SPS_AMG_LONG", "64", 1);
    compare_gpu_numeric("poisson3d-jump:24,1e4", "amg", ",gpu_min=0");
    unsetenv("SPS_AMG_LONG");
    setenv("SPS_AMG_LANES", "0", 1);
    compare_gpu_numeric("poisson3d-jump:24,1e4", "amg", ",gpu_min=0");
    unsetenv("SPS_AMG_LANES");
}

/* CG + amg:setup=gpu converges in the host setup's iteration count; two
 * solves bitwise equal. */
static void test_setup_gpu_solve(void)
{
    static const char *const specs[] = {"poisson3d:40", "poisson3d-jump:32,1e4", "aniso3d:32,0.001"};
    static const char *const pcs[3] = {"amg", "amg:setup=gpu", "amg:setup=gpu"};
    for (int m = 0; m < 3; m++) {
        sps_matrix *A = NULL;
        if (sps_matrix_generate(hctx, specs[m], &A) != SPS_OK) continue;
        sps_idx n = sps_matrix_rows(A);
        size_t nb = (size_t)n * sizeof(double);
        double *b = malloc(nb), *x[3];
        for (sps_idx i = 0; i < n; i++) b[i] = 1.0 + (i % 7) * 0.1;
        int64_t its[3] = {-1, -1, -1};
        for (int k = 0; k < 3; k++) {
            x[k] = calloc((size_t)n, sizeof(double));
            sps_operator *op = NULL;
            sps_precond *pc = NULL;
            sps_solver *s = NULL;
            sps_solve_info in;
            if (T_STATUS(gctx, sps_operator_create(gctx, A, "csr-vector", NULL, &op), "op %d", k) &&
                T_STATUS(gctx, sps_precond_create_ex(gctx, A, op, pcs[k], &pc), "%s", pcs[k]) &&
                T_STATUS(gctx, sps_solver_create(gctx, &s), "solver %d", k) &&
                T_STATUS(gctx, sps_solve(s, op, pc, b, x[k], &in), "solve %d", k) && in.reason > 0)
                its[k] = in.iterations;
            sps_solver_destroy(s);
            sps_precond_destroy(pc);
            sps_operator_destroy(op);
        }
        T_OK(its[0] > 0 && its[1] == its[0], "%s CG: amg:setup=gpu %lld iterations, amg (host setup) %lld",
             specs[m], (long long)its[1], (long long)its[0]);
        T_OK(its[1] == its[2] && memcmp(x[1], x[2], nb) == 0,
             "%s CG+amg:setup=gpu: two solves bitwise equal", specs[m]);
        for (int k = 0; k < 3; k++) free(x[k]);
        free(b);
        sps_matrix_destroy(A);
    }
}

/* The mean of 20 calls after 20 warm-up calls: ms per call of
 * sps_operator_apply (pc NULL) or of the V-cycle. */
static sps_status time_calls(sps_operator *op, sps_precond *pc, const double *dr, double *dz, double *ms)
{
    sps_gpu_timer *t = NULL;
    sps_status st = sps__timer_create(gctx, &t);
    for (int rep = 0; rep < 2 && st == SPS_OK; rep++) { /* the first round warms up */
        if ((st = sps__timer_start(gctx, t)) != SPS_OK) break;
        for (int i = 0; i < 20 && st == SPS_OK; i++)
            st = pc ? sps_precond_apply(pc, dr, dz) : sps_operator_apply(op, 1.0, dr, 0.0, dz);
        if (st == SPS_OK) st = sps__timer_stop(gctx, t, ms);
    }
    *ms /= 20;
    sps__timer_destroy(t);
    return st;
}

/* The cost of one V-cycle on poisson3d:160 in fine-level SpMVs, for the
 * default amg (Chebyshev of degree 1), amg:sweeps=2 and amg:setup=gpu,
 * printed as measurement lines with the setup in SpMVs: issue 11's targets
 * (at most 12 and 150) are benchmark figures, not tests that a slow or busy
 * GPU could fail (H100, before the default became degree 1: 10.9 for
 * degree 1, 15.3 for degree 2; setup 15901 SpMVs with the host setup). */
static void test_cost(void)
{
    static const char *const specs[] = {"amg", "amg:sweeps=2", "amg:setup=gpu"};
    sps_matrix *A = NULL;
    if (sps_matrix_generate(hctx, "poisson3d:160", &A) != SPS_OK) return;
    sps_idx n = sps_matrix_rows(A);
    size_t nb = (size_t)n * sizeof(double);
    sps_operator *op = NULL;
    double *dr = NULL, *dz = NULL, spmv = 0;
    sps_status st = sps_operator_create(gctx, A, "csr-vector", NULL, &op);
    if (st == SPS_OK) st = sps__dmalloc(gctx, (void **)&dr, nb);
    if (st == SPS_OK) st = sps__dmalloc(gctx, (void **)&dz, nb);
    if (st == SPS_OK) st = sps__dmemset(gctx, dr, 0, nb);
    if (st == SPS_OK) st = time_calls(op, NULL, dr, dz, &spmv);
    for (int k = 0; k < 3 && T_STATUS(gctx, st, "poisson3d:160: SpMV timing"); k++) {
        sps_precond *pc = NULL;
        double cyc = 0;
        st = sps_precond_create_ex(gctx, A, op, specs[k], &pc);
        if (st == SPS_OK) st = time_calls(op, pc, dr, dz, &cyc);
        if (T_STATUS(gctx, st, "poisson3d:160 %s: V-cycle timing", specs[k]) &&
            T_OK(cyc > 0 && spmv > 0, "poisson3d:160 %s: V-cycle and SpMV timed", specs[k]))
            printf("# poisson3d:160 %s: one V-cycle %.3f ms = %.1f SpMVs of %.3f ms (issue 11: <= 12); "
                   "setup %.0f ms = %.0f SpMVs\n", specs[k], cyc, cyc / spmv, spmv,
                   sps_precond_setup_ms(pc), sps_precond_setup_ms(pc) / spmv);
        const char *split = pc ? strstr(sps_precond_describe(pc), "setup ms") : NULL;
        if (split) printf("# poisson3d:160 %s: %.*s\n", specs[k], (int)strcspn(split, "\n"), split);
        sps_precond_destroy(pc);
    }
    sps__dfree(dr);
    sps__dfree(dz);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

T_MAIN_GPU("amg on the GPU", gctx, hctx, test_generated, test_real, test_rbm, test_numeric, test_edges, test_solve,
           test_setup_gpu, test_setup_gpu_edges, test_setup_gpu_numeric, test_setup_gpu_solve, test_cost)

#else

T_MAIN_NO_CUDA("amg on the GPU")

#endif /* SPS_HAVE_CUDA */
