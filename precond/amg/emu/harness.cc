/* SPDX-License-Identifier: MIT */
/* spsolve/precond/amg/emu/harness.cc: amg_dsetup.cu's device setup, run on
 * the CPU emulation (cuda_emu.h), against the host setup: per level the
 * aggregates and P_tent bitwise, level 0's scaling bitwise, rho within
 * 1e-12, P, R, A P, A_c in the host's patterns within 1e-10, and the
 * device's products bitwise the host's products of the same inputs.
 * Arguments: generator specs, or `edges` (chains of 31..1025 rows, an empty
 * row, a 1025-entry row, a diagonal matrix whose coarsening stalls). */
#include "cuda_emu.h"
#include "precond/amg/amg.h"
#include <cstdio>
extern "C" sps_status sps__amg_build_gpu(sps_context *ctx, const sps_amg_prm *prm, const sps_csr *A, sps_amg *h);
extern "C" sps_status sps__amg_host_copy(sps_context *ctx, sps_amg *h);
extern "C" void sps__amg_prof_set(sps_amg_prof_fn fn, void *arg);
extern "C" sps_status sps__amg_numeric_gpu(sps_context *ctx, const sps_csr *A, const sps_dcsr *d0, sps_amg *h);
static int dev_only(const sps_csr *A) { return A->dev && !A->row_ptr && !A->col_idx && !A->val; }
/* what the device setup left on the host before sps__amg_host_copy: the
 * sizes only (no agg, dinv, T, P, R or coarse A arrays), but the host's
 * first level complete */
static int partial_ok(const sps_amg *g)
{
    int ok = g->gpu_levels == 0 || g->host_partial;
    for (int l = 0; ok && l < g->gpu_levels; l++) {
        const sps_amg_level *L = &g->lv[l], *N = &g->lv[l + 1];
        ok = !L->agg && !L->dinv && L->dagg && L->ddinv && dev_only(&L->T) && dev_only(&L->P) && dev_only(&L->R) &&
             (l + 1 < g->gpu_levels || g->dcinv ? dev_only(&N->A)
                                                : N->A.dev && N->A.row_ptr && N->A.col_idx && N->A.val);
    }
    return ok && (!g->dcinv || !g->cinv); /* a coarse inverse made on the device stays there */
}
static int same(const sps_csr *a, const sps_csr *b, int vals)
{
    return a->nrows == b->nrows && a->ncols == b->ncols && a->nnz == b->nnz &&
           !memcmp(a->row_ptr, b->row_ptr, ((size_t)a->nrows + 1) * 4) && !memcmp(a->col_idx, b->col_idx, (size_t)a->nnz * 4) &&
           (!vals || !memcmp(a->val, b->val, (size_t)a->nnz * 8));
}
static double vdiff(const sps_csr *a, const sps_csr *b)
{
    double d = 0, m = 0;
    for (int p = 0; p < a->nnz; p++) { d = fmax(d, fabs(a->val[p] - b->val[p])); m = fmax(m, fabs(a->val[p])); }
    return m ? d / m : d;
}
/* g's level l: its products redone on the host from its own inputs (rho,
 * P_tent, P, R; Al its matrix) equal its P, R and A_{l+1} bitwise */
static int products_ok(sps_context *ctx, sps_amg *g, const sps_csr *Al, int l)
{
    sps_amg_level *b = &g->lv[l];
    sps_csr S, P, R, AP, Ac;
    sps__csr_copy(ctx, Al, &S);
    double omega = 4.0 / (3.0 * b->rho);
    for (int i = 0; i < Al->nrows; i++) {
        double dd = 0;
        for (int p = Al->row_ptr[i]; p < Al->row_ptr[i + 1]; p++) if (Al->col_idx[p] == i) dd = Al->val[p];
        double di = dd != 0.0 ? 1.0 / dd : 0.0;
        for (int p = Al->row_ptr[i]; p < Al->row_ptr[i + 1]; p++) S.val[p] = (Al->col_idx[p] == i ? 1.0 : 0.0) - omega * di * Al->val[p];
    }
    sps__amg_spgemm(ctx, &S, &b->T, &P); sps__amg_transpose(ctx, &b->P, &R);
    sps__amg_spgemm(ctx, Al, &b->P, &AP); sps__amg_spgemm(ctx, &b->R, &AP, &Ac);
    int prod = same(&P, &b->P, 1) && same(&R, &b->R, 1) && same(&Ac, &g->lv[l + 1].A, 1);
    sps__csr_free(&S); sps__csr_free(&P); sps__csr_free(&R); sps__csr_free(&AP); sps__csr_free(&Ac);
    return prod;
}
/* two hierarchies' values bitwise equal (both on the host) */
static int same_values(const sps_amg *a, const sps_amg *b)
{
    int ok = a->nlevels == b->nlevels && a->nc == b->nc && !memcmp(a->cinv, b->cinv, (size_t)a->nc * a->nc * 8);
    for (int l = 0; ok && l + 1 < a->nlevels; l++) {
        const sps_amg_level *x = &a->lv[l], *y = &b->lv[l];
        ok = same(&x->P, &y->P, 1) && same(&x->R, &y->R, 1) && same(&a->lv[l + 1].A, &b->lv[l + 1].A, 1) &&
             x->rho == y->rho && !memcmp(x->dinv, y->dinv, (size_t)x->n * 8) && !memcmp(x->c1, y->c1, sizeof x->c1) &&
             !memcmp(x->c2, y->c2, sizeof x->c2);
    }
    return ok;
}
/* the re-setups' new values: 2.5 A + I/2 in A's pattern */
static std::vector<double> shifted(const sps_csr *C)
{
    std::vector<double> w(C->val, C->val + C->nnz);
    for (int i = 0; i < C->nrows; i++)
        for (int p = C->row_ptr[i]; p < C->row_ptr[i + 1]; p++) w[p] = 2.5 * C->val[p] + (C->col_idx[p] == i ? 0.5 : 0.0);
    return w;
}
/* an emulated device copy of C's arrays (level 0's new values on the device) */
static sps_dcsr *dev_copy(sps_context *ctx, const sps_csr *C)
{
    sps_dcsr *d = (sps_dcsr *)calloc(1, sizeof *d);
    d->ctx = ctx; d->nrows = C->nrows; d->ncols = C->ncols; d->nnz = C->nnz;
    d->row_ptr = (sps_idx *)malloc(((size_t)C->nrows + 1) * 4); memcpy(d->row_ptr, C->row_ptr, ((size_t)C->nrows + 1) * 4);
    d->col_idx = (sps_idx *)malloc((size_t)C->nnz * 4 + 4); memcpy(d->col_idx, C->col_idx, (size_t)C->nnz * 4);
    d->val = (double *)malloc((size_t)C->nnz * 8 + 8); memcpy(d->val, C->val, (size_t)C->nnz * 8);
    return d;
}
static void dev_free(sps_dcsr *d) { free(d->row_ptr); free(d->col_idx); free(d->val); free(d); }
/* The device's numeric re-setup (sps__amg_numeric_gpu) on the emulation:
 * with the setup's own values, bitwise the setup's hierarchy; with 2.5 A +
 * I/2, within 1e-10 of the host's re-setup (rho 1e-12), the products
 * bitwise the host's of the device's own inputs, the coarse inverse bitwise
 * the host's of its coarse A, two re-setups bitwise equal; a matrix in
 * another pattern (as many entries) SPS_ERR_INVALID_ARG. */
static int renumeric(sps_context *ctx, sps_matrix *A, const char *name, int smoother, int sweeps, int coarse, int gmin)
{
    sps_amg_prm prm = {0.08, sweeps, smoother, coarse, 10, 1, 1, gmin};
    sps_amg *h = (sps_amg *)calloc(1, sizeof *h), *g = (sps_amg *)calloc(1, sizeof *g), *g2 = (sps_amg *)calloc(1, sizeof *g2);
    int ok = sps__amg_build(ctx, &prm, &A->A, 1, 1, NULL, h) == SPS_OK && sps__amg_build_gpu(ctx, &prm, &A->A, g) == SPS_OK &&
             sps__amg_build_gpu(ctx, &prm, &A->A, g2) == SPS_OK;
    if (ok && g->gpu_levels == 0) {
        printf("%s: no device level to re-set up\n", name);
        sps__amg_free(h); sps__amg_free(g); sps__amg_free(g2); free(h); free(g); free(g2);
        return 1;
    }
    const sps_csr *C = &A->A;
    sps_dcsr *d = dev_copy(ctx, C);
    int same1 = ok && sps__amg_numeric_gpu(ctx, C, d, g) == SPS_OK && sps__amg_host_copy(ctx, g) == SPS_OK &&
                sps__amg_host_copy(ctx, g2) == SPS_OK && same_values(g, g2);
    dev_free(d);
    std::vector<double> w = shifted(C);
    sps_csr C2 = *C;
    C2.val = w.data();
    C2.dev = NULL;
    sps_dcsr *d2 = dev_copy(ctx, &C2);
    int st2 = ok && sps__amg_numeric(ctx, &C2, h) == SPS_OK && sps__amg_numeric_gpu(ctx, &C2, d2, g) == SPS_OK &&
              sps__amg_host_copy(ctx, g) == SPS_OK && h->nlevels == g->nlevels;
    double d_max = 0, rho = 0;
    int prod = st2, pat = st2;
    for (int l = 0; st2 && l + 1 < h->nlevels; l++) {
        const sps_amg_level *a = &h->lv[l], *b = &g->lv[l];
        pat = pat && same(&a->P, &b->P, 0) && same(&a->R, &b->R, 0) && same(&h->lv[l + 1].A, &g->lv[l + 1].A, 0);
        if (!pat) break;
        d_max = fmax(d_max, fmax(fmax(vdiff(&a->P, &b->P), vdiff(&a->R, &b->R)), vdiff(&h->lv[l + 1].A, &g->lv[l + 1].A)));
        rho = fmax(rho, fabs(a->rho - b->rho) / a->rho);
        if (l < g->gpu_levels) prod = prod && products_ok(ctx, g, l ? &b->A : &C2, l);
    }
    std::vector<double> inv((size_t)g->nc * g->nc + 1);
    int cinv = st2 && sps__amg_dense_inverse(ctx, &g->lv[g->nlevels - 1].A, inv.data()) == SPS_OK &&
               !memcmp(inv.data(), g->cinv, (size_t)g->nc * g->nc * 8);
    int twice = st2 && sps__amg_numeric_gpu(ctx, &C2, d2, g2) == SPS_OK && sps__amg_host_copy(ctx, g2) == SPS_OK &&
                same_values(g, g2);
    dev_free(d2);
    /* another pattern with as many entries: row 0's last entry moved to row 1 */
    int other = 0;
    if (C->nrows > 1 && C->row_ptr[1] > 0) {
        std::vector<sps_idx> rp(C->row_ptr, C->row_ptr + C->nrows + 1);
        rp[1]--;
        sps_csr C3 = *C;
        C3.row_ptr = rp.data();
        C3.dev = NULL;
        sps_dcsr *d3 = dev_copy(ctx, &C3);
        other = sps__amg_numeric_gpu(ctx, &C3, d3, g2) == SPS_ERR_INVALID_ARG;
        dev_free(d3);
    } else other = 1;
    printf("%s: device re-setup: setup's values bitwise the setup %d; new values: patterns %d, values within %.2g, "
           "rho within %.2g, products bitwise %d, coarse inverse bitwise %d, twice bitwise %d; another pattern refused %d\n",
           name, same1, pat, d_max, rho, prod, cinv, twice, other);
    ok = ok && same1 && pat && d_max <= 1e-10 && rho <= 1e-12 && prod && cinv && twice && other;
    sps__amg_free(h); sps__amg_free(g); sps__amg_free(g2); free(h); free(g); free(g2);
    return ok;
}
static int run(sps_context *ctx, sps_matrix *A, const char *name, int smoother, int sweeps, int coarse)
{
    sps_amg_prm prm = {0.08, sweeps, smoother, coarse, 10, 1, 1, 0};
    sps_amg *h = (sps_amg *)calloc(1, sizeof *h), *g = (sps_amg *)calloc(1, sizeof *g);
    sps_status hs = sps__amg_build(ctx, &prm, &A->A, 1, 1, NULL, h);
    sps_dcsr *d0 = NULL;
    if (emu_level0_copy) { /* the caller's device copy of level 0, as the solve's operator leaves it */
        d0 = (sps_dcsr *)calloc(1, sizeof *d0);
        const sps_csr *C = &A->A;
        d0->ctx = ctx; d0->h_row_ptr = C->row_ptr; d0->h_col_idx = C->col_idx; d0->h_val = C->val;
        d0->nrows = C->nrows; d0->ncols = C->ncols; d0->nnz = C->nnz;
        d0->row_ptr = (sps_idx *)malloc(((size_t)C->nrows + 1) * 4); memcpy(d0->row_ptr, C->row_ptr, ((size_t)C->nrows + 1) * 4);
        d0->col_idx = (sps_idx *)malloc((size_t)C->nnz * 4 + 4); memcpy(d0->col_idx, C->col_idx, (size_t)C->nnz * 4);
        d0->val = (double *)malloc((size_t)C->nnz * 8 + 8); memcpy(d0->val, C->val, (size_t)C->nnz * 8);
        A->A.dev = d0;
    }
    sps_status gs = sps__amg_build_gpu(ctx, &prm, &A->A, g);
    if (d0) { A->A.dev = NULL; free(d0->row_ptr); free(d0->col_idx); free(d0->val); free(d0); }
    int ok = hs == gs;
    if (hs != SPS_OK || gs != SPS_OK) { printf("%s: status host %d gpu %d: %s\n", name, hs, gs, sps_last_error(ctx)); return ok; }
    int part = partial_ok(g);
    gs = sps__amg_host_copy(ctx, g);
    printf("%s: device levels left on the device %d, host copy %d\n", name, part, gs == SPS_OK && !g->host_partial);
    if (!part || gs != SPS_OK || g->host_partial) return 0;
    ok = h->nlevels == g->nlevels;
    printf("%s: levels %d/%d, gpu levels %d\n", name, h->nlevels, g->nlevels, g->gpu_levels);
    for (int l = 0; ok && l + 1 < h->nlevels; l++) {
        sps_amg_level *a = &h->lv[l], *b = &g->lv[l];
        int agg = a->nagg == b->nagg && !memcmp(a->agg, b->agg, (size_t)a->n * 4);
        int T = same(&a->T, &b->T, 1), dinv = l > 0 || !memcmp(a->dinv, b->dinv, (size_t)a->n * 8);
        int prod = products_ok(ctx, g, l ? &b->A : &A->A, l);
        if (l < g->gpu_levels) { printf("  products bitwise %d\n", prod); if (!prod) ok = 0; }
        int pat = same(&a->P, &b->P, 0) && same(&a->R, &b->R, 0) && (l >= g->gpu_levels || !b->AP.row_ptr) && same(&h->lv[l + 1].A, &g->lv[l + 1].A, 0);
        double d = pat ? fmax(fmax(vdiff(&a->P, &b->P), vdiff(&a->R, &b->R)), vdiff(&h->lv[l + 1].A, &g->lv[l + 1].A)) : -1;
        printf("  level %d: n %d agg %d T %d dinv %d patterns %d vals %.2g rho %.17g / %.17g (%.2g)\n", l, a->n, agg, T, dinv, pat, d, a->rho, b->rho, fabs(a->rho - b->rho) / a->rho);
        ok = ok && agg && T && dinv && pat && d >= 0 && d < 1e-10 && fabs(a->rho - b->rho) <= 1e-12 * a->rho;
    }
    ok = ok && h->nc == g->nc;
    if (ok && g->gpu_levels > 0) { /* the coarse inverse: the host's of the device's coarsest A, bitwise */
        std::vector<double> inv((size_t)g->nc * g->nc + 1);
        int ci = sps__amg_dense_inverse(ctx, &g->lv[g->nlevels - 1].A, inv.data()) == SPS_OK &&
                 !memcmp(inv.data(), g->cinv, (size_t)g->nc * g->nc * 8);
        printf("  coarse inverse (%d rows, %s) bitwise the host's of the same matrix: %d\n", g->nc,
               g->dcinv ? "device" : "host", ci);
        ok = ci;
    }
    /* the device copies handed to the hierarchy (P, R of each device level,
     * A of the levels below them) match their host arrays, bitwise; freed here
     * (no device V-cycle refreshes them after the numeric re-setup below) */
    int copies = 0, good = 1;
    for (int l = 0; l < g->nlevels; l++) {
        sps_csr *M[3] = {l ? &g->lv[l].A : NULL, &g->lv[l].P, &g->lv[l].R};
        for (sps_csr *m : M) {
            if (!m || !m->dev) continue;
            const sps_dcsr *d = sps__csr_device_copy(ctx, m);
            good = good && d && same(m, m, 1) && !memcmp(d->row_ptr, m->row_ptr, ((size_t)m->nrows + 1) * 4) &&
                   !memcmp(d->col_idx, m->col_idx, (size_t)m->nnz * 4) && !memcmp(d->val, m->val, (size_t)m->nnz * 8);
            sps__dcsr_free(m->dev);
            m->dev = NULL;
            copies++;
        }
    }
    printf("  device copies handed over: %d, equal to the host arrays: %d\n", copies, good);
    ok = ok && good && copies == 3 * g->gpu_levels;
    /* the numeric re-setup (host code) of both for 2.5 A + I/2: bitwise equal
     * (the device-built one computes its A P pattern first) */
    const sps_csr *C = &A->A;
    std::vector<double> w = shifted(C);
    sps_csr C2 = *C;
    C2.val = w.data();
    C2.dev = NULL;
    int num = ok && sps__amg_numeric(ctx, &C2, h) == SPS_OK && sps__amg_numeric(ctx, &C2, g) == SPS_OK;
    for (int l = 0; num && l + 1 < h->nlevels; l++)
        num = same(&h->lv[l].P, &g->lv[l].P, 1) && same(&h->lv[l].R, &g->lv[l].R, 1) && same(&h->lv[l].AP, &g->lv[l].AP, 1) &&
              same(&h->lv[l + 1].A, &g->lv[l + 1].A, 1) && h->lv[l].rho == g->lv[l].rho;
    num = num && !memcmp(h->cinv, g->cinv, (size_t)h->nc * h->nc * 8);
    if (ok) printf("  numeric re-setup of both bitwise equal: %d\n", num);
    ok = ok && num;
    sps__amg_free(h); sps__amg_free(g); free(h); free(g);
    printf("%s: %s\n", name, ok ? "OK" : "MISMATCH");
    return ok;
}
/* 1-D Laplacian (row `empty` cleared; arrow: row 0 couples to all; diag: a diagonal matrix) */
static sps_matrix *chain(sps_context *ctx, int n, int empty, int arrow, int diag)
{
    std::vector<int> rp(1, 0), ci; std::vector<double> v;
    for (int i = 0; i < n; i++) {
        if (i != empty) {
            if (arrow && i == 0) { ci.push_back(0); v.push_back(3.0); if (n > 1 && 1 != empty) { ci.push_back(1); v.push_back(-1.0); }
                for (int j = 2; j < n; j++) { ci.push_back(j); v.push_back(-0.5 / n); } }
            else {
                if (i > 0 && i - 1 != empty && !diag) { ci.push_back(i - 1); v.push_back(-1.0 + (arrow && i == 1 ? 0 : 0)); }
                if (arrow && i > 1) { /* column 0 before i-1: insert sorted */ ci.insert(ci.end() - (i > 0 && i - 1 != empty ? 1 : 0), 0); v.insert(v.end() - (i > 0 && i - 1 != empty ? 1 : 0), -0.5 / n); }
                ci.push_back(i); v.push_back(diag ? 1.0 + i % 7 : (arrow ? 2.01 : 2.0));
                if (i + 1 < n && i + 1 != empty && !diag) { ci.push_back(i + 1); v.push_back(-1.0); }
            }
        }
        rp.push_back((int)ci.size());
    }
    sps_matrix *A = NULL;
    if (sps_matrix_create_csr(ctx, n, n, rp.data(), ci.data(), v.data(), &A)) { printf("chain: %s\n", sps_last_error(ctx)); return NULL; }
    return A;
}

/* the step timer's reports (sps__amg_prof_set) during one setup: counted,
 * with the products' and steps' names checked */
struct prof_count { int reports, bad, levels; };
static void prof_hook(void *arg, int level, const char *what, const char *step, double ms)
{
    prof_count *c = (prof_count *)arg;
    c->reports++;
    if (level + 1 > c->levels) c->levels = level + 1;
    static const char *known[] = {"T, Sm", "P = Sm T", "R = P'", "A P", "R (A P)"};
    int k = 0;
    for (const char *w : known) k += !strcmp(w, what);
    if (!k || !step || !*step || !strcmp(step, "end") || !(ms >= 0)) c->bad++;
}

int main(int argc, char **argv)
{
    sps_context *ctx; sps_context_create(&ctx, SPS_DEVICE_HOST);
    int bad = 0;
    if (argc == 2 && !strcmp(argv[1], "edges")) {
        int sizes[] = {31, 32, 33, 1023, 1024, 1025};
        for (int n : sizes) { sps_matrix *A = chain(ctx, n, -1, 0, 0); char nm[64]; snprintf(nm, 64, "chain %d", n);
            bad += !run(ctx, A, nm, SPS_AMG_CHEBY, 1, 4); bad += !run(ctx, A, nm, SPS_AMG_L1JACOBI, 2, 4);
            bad += !renumeric(ctx, A, nm, SPS_AMG_CHEBY, 1, 4, 0); sps_matrix_destroy(A); }
        sps_matrix *E = chain(ctx, 1000, 500, 0, 0), *L = chain(ctx, 1025, -1, 1, 0), *D = chain(ctx, 300, -1, 0, 1);
        bad += !run(ctx, E, "chain 1000 empty row 500", SPS_AMG_CHEBY, 1, 4);
        bad += !run(ctx, L, "arrow 1025", SPS_AMG_CHEBY, 1, 4);
        bad += !run(ctx, D, "diagonal 300 (no strong coupling: stalls)", SPS_AMG_CHEBY, 1, 4);
        bad += !renumeric(ctx, E, "chain 1000 empty row 500", SPS_AMG_CHEBY, 1, 4, 0);
        bad += !renumeric(ctx, L, "arrow 1025", SPS_AMG_L1JACOBI, 2, 4, 100);
        printf("%d mismatches\n", bad);
        return bad != 0;
    }
    for (int a = 1; a < argc; a++) {
        sps_matrix *A;
        if (sps_matrix_generate(ctx, argv[a], &A)) { printf("gen %s failed\n", argv[a]); return 2; }
        bad += !run(ctx, A, argv[a], SPS_AMG_CHEBY, 1, 20);
        if (a == 1) { /* a coarse inverse of up to 300 rows, with the step timer on */
            prof_count pc = {0, 0, 0};
            sps__amg_prof_set(prof_hook, &pc);
            bad += !run(ctx, A, argv[a], SPS_AMG_CHEBY, 1, 300);
            sps__amg_prof_set(NULL, NULL);
            printf("  step timer: %d reports on %d levels, %d malformed\n", pc.reports, pc.levels, pc.bad);
            bad += pc.reports == 0 || pc.bad != 0;
        }
        emu_level0_copy = 1;
        bad += !run(ctx, A, argv[a], SPS_AMG_L1JACOBI, 2, 4);
        emu_level0_copy = 0;
        bad += !renumeric(ctx, A, argv[a], SPS_AMG_CHEBY, 1, 20, 0);
        bad += !renumeric(ctx, A, argv[a], SPS_AMG_L1JACOBI, 2, 300, 0);
        bad += !renumeric(ctx, A, argv[a], SPS_AMG_CHEBY, 1, 20, 500); /* the host's levels after the device's */
        sps_matrix_destroy(A);
    }
    printf("%d mismatches\n", bad);
    return bad != 0;
}
