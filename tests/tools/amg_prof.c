/* SPDX-License-Identifier: MIT */
/* spsolve/tests/tools/amg_prof.c: where the device AMG setup (amg:setup=gpu)
 * spends its time, per level, product and step
 *
 * usage: amg_prof [SPEC|FILE] [--reps N] [--gpu-min N] [--resetup]
 * On a GPU context: uploads A once (the solve's device copy, which level 0
 * reads), runs sps__amg_build_gpu once to warm up (its wall time and phases
 * printed too: the first setup in a process is what a one-solve user
 * meets; bench/amg_resetup.c's first full setup took 17-19 ms more than
 * its second on poisson3d:160 and poisson3d-jump:128,1e4, H200), then N
 * times (default 5)
 * with the setup's step timer on (sps__amg_prof_set: CUDA events between the
 * steps of each product, one synchronization at each product's end) and N
 * times with it off. Prints the setup's wall time (timer off) and its phases,
 * then a table: a line per level and product (P = Sm T, R = P', A P,
 * R (A P), and "T, Sm": the tentative prolongator and the smoothing matrix),
 * a column per step, the median over the N runs in ms. The steps of a
 * product (amg_dsetup.cu's spgemm): bound (row bounds, scan), read1 (the
 * bounds' total to the host), count (the groups' count pass, the long rows'
 * count, the scan of the overflow slices), read2, hash (slices' allocation
 * and clearing, the one-thread rows or the overflow rows in global memory),
 * scan (of the counts), read3 (C's size), numeric (C's allocation, the
 * groups' and long rows' numeric pass), gather (C's row pointer, the slices'
 * rows sorted); a transpose's: alloc, keys, sort, fill. A step's time is
 * event to event: its kernels and the host's work (reads, launches) until
 * the next step begins. --resetup: the same for the numeric re-setup on the
 * device (sps__amg_numeric_gpu, A's own values, level 0 from A's device
 * copy: no upload) of one setup's hierarchy; its products' one step is
 * numeric (bound: the long rows' flags), the transpose's values. Exits 77
 * without a GPU. */
#include "spsolve.h"
#include "core/internal.h"
#include "gpu_tool.h"
#include "tool_stats.h"
#include "precond/amg/amg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA

#define MAXREP 50
#define MAXROW 64
#define MAXCOL 24

struct table {
    int rep;                       /* the run being recorded */
    int nrow, ncol;
    int level[MAXROW];
    char what[MAXROW][24];
    char col[MAXCOL][16];
    double ms[MAXROW][MAXCOL][MAXREP]; /* sums within a run; -1: never seen */
    int seen[MAXROW][MAXCOL];
};

static struct table tab;

static int find_row(int level, const char *what)
{
    for (int r = 0; r < tab.nrow; r++)
        if (tab.level[r] == level && strcmp(tab.what[r], what) == 0) return r;
    if (tab.nrow == MAXROW) return -1;
    tab.level[tab.nrow] = level;
    snprintf(tab.what[tab.nrow], sizeof tab.what[0], "%s", what);
    return tab.nrow++;
}

static int find_col(const char *step)
{
    for (int c = 0; c < tab.ncol; c++)
        if (strcmp(tab.col[c], step) == 0) return c;
    if (tab.ncol == MAXCOL) return -1;
    snprintf(tab.col[tab.ncol], sizeof tab.col[0], "%s", step);
    return tab.ncol++;
}

static void hook(void *arg, int level, const char *what, const char *step, double ms)
{
    (void)arg;
    int r = find_row(level, what), c = find_col(step);
    if (r < 0 || c < 0) return;
    tab.seen[r][c] = 1;
    tab.ms[r][c][tab.rep] += ms;
}

static int fail(sps_context *ctx, const char *what) { return tool_fail("amg_prof", ctx, what); }

/* One device setup of A: its wall time into *ms, the hierarchy's phases into ph. */
static sps_status build(sps_context *ctx, const sps_amg_prm *prm, sps_matrix *A, double *ms, double ph[6],
                        sps_amg *keep)
{
    sps_amg *h = calloc(1, sizeof *h);
    if (!h) return SPS_ERR_NO_MEMORY;
    double t0 = sps__now_ms();
    sps_status st = sps__amg_build_gpu(ctx, prm, &A->A, h);
    *ms = sps__now_ms() - t0;
    for (int k = 0; k < 6; k++) ph[k] = h->ms[k];
    if (keep && st == SPS_OK) {
        keep->nlevels = h->nlevels;
        keep->gpu_levels = h->gpu_levels;
        for (int l = 0; l < h->nlevels; l++) {
            keep->lv[l].n = h->lv[l].n;
            keep->lv[l].nnz = h->lv[l].nnz;
        }
    }
    sps__amg_free(h);
    free(h);
    return st;
}

/* One run: a setup (h NULL), or a numeric re-setup of h. */
static sps_status once(sps_context *ctx, const sps_amg_prm *prm, sps_matrix *A, sps_amg *h, double *ms, double ph[6])
{
    if (!h) return build(ctx, prm, A, ms, ph, NULL);
    double t0 = sps__now_ms();
    sps_status st = sps__amg_numeric_gpu(ctx, &A->A, A->A.dev, h);
    *ms = sps__now_ms() - t0;
    for (int k = 0; k < 6; k++) ph[k] = h->ms[k];
    return st;
}

int main(int argc, char **argv)
{
    const char *spec = "poisson3d:160";
    int reps = 5, gpu_min = SPS_AMG_GPU_MIN, resetup = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--gpu-min") == 0 && i + 1 < argc) gpu_min = atoi(argv[++i]);
        else if (strcmp(argv[i], "--resetup") == 0) resetup = 1;
        else spec = argv[i];
    }
    if (reps < 1 || reps > MAXREP) reps = 5;
    sps_context *ctx = NULL;
    sps_matrix *A = NULL;
    int rc = tool_gpu_matrix("amg_prof", spec, &ctx, &A);
    if (rc) return rc;
    sps_amg_prm prm = {0.08, 1, SPS_AMG_CHEBY, 500, 10, 1, SPS_AMG_SETUP_GPU, gpu_min}; /* amg.c's defaults */
    static sps_amg shape;
    double wall[MAXREP], ph[6][MAXREP], one[6], w, first, first_ph[6];
    if (build(ctx, &prm, A, &first, first_ph, &shape) != SPS_OK) return fail(ctx, "setup (warm-up)");
    sps_amg *h = NULL; /* --resetup: the hierarchy re-set up */
    if (resetup && (!(h = calloc(1, sizeof *h)) || sps__amg_build_gpu(ctx, &prm, &A->A, h) != SPS_OK ||
                    once(ctx, &prm, A, h, &w, one) != SPS_OK))
        return fail(ctx, "setup and re-setup (warm-up)");
    for (int r = 0; r < reps; r++) { /* the timer off */
        if (once(ctx, &prm, A, h, &wall[r], one) != SPS_OK) return fail(ctx, "setup");
        for (int k = 0; k < 6; k++) ph[k][r] = one[k];
    }
    sps__amg_prof_set(hook, NULL);
    for (tab.rep = 0; tab.rep < reps; tab.rep++)
        if (once(ctx, &prm, A, h, &w, one) != SPS_OK) return fail(ctx, "setup (timed steps)");
    sps__amg_prof_set(NULL, NULL);
    if (h) sps__amg_free(h);
    free(h);

    printf("amg_prof %s: %d levels, %d on the device (gpu_min %d); median of %d runs, ms\n", spec, shape.nlevels,
           shape.gpu_levels, gpu_min, reps);
    for (int l = 0; l < shape.nlevels; l++)
        printf("  level %d: %d rows, %lld nnz (%.1f a row)\n", l, shape.lv[l].n, (long long)shape.lv[l].nnz,
               shape.lv[l].n ? (double)shape.lv[l].nnz / shape.lv[l].n : 0.0);
    static const char *phase[6] = {"strength", "aggregate", "prolong", "galerkin", "spectral", "coarse"};
    printf("%s (timer off) %.2f:", resetup ? "numeric re-setup" : "setup", tool_median(wall, reps));
    for (int k = 0; k < 6; k++) printf(" %s %.2f", phase[k], tool_median(ph[k], reps));
    printf("\nfirst setup in the process (the warm-up) %.2f:", first);
    for (int k = 0; k < 6; k++) printf(" %s %.2f", phase[k], first_ph[k]);
    printf("\n\n%-2s %-9s", "lv", "product");
    for (int c = 0; c < tab.ncol; c++)
        if (strcmp(tab.col[c], "end") != 0) printf(" %7s", tab.col[c]);
    printf(" %8s\n", "sum");
    double colsum[MAXCOL] = {0}, all = 0.0;
    for (int r = 0; r < tab.nrow; r++) {
        printf("%-2d %-9s", tab.level[r], tab.what[r]);
        double sum = 0.0;
        for (int c = 0; c < tab.ncol; c++) {
            if (strcmp(tab.col[c], "end") == 0) continue;
            if (!tab.seen[r][c]) {
                printf(" %7s", "-");
                continue;
            }
            double m = tool_median(tab.ms[r][c], reps);
            sum += m;
            colsum[c] += m;
            printf(" %7.3f", m);
        }
        all += sum;
        printf(" %8.3f\n", sum);
    }
    printf("%-12s", "all");
    for (int c = 0; c < tab.ncol; c++)
        if (strcmp(tab.col[c], "end") != 0) printf(" %7.3f", colsum[c]);
    printf(" %8.3f\n", all);
    sps_matrix_destroy(A);
    sps_context_destroy(ctx);
    return 0;
}
#else
int main(void)
{
    fprintf(stderr, "amg_prof: built without CUDA\n");
    return 77;
}
#endif
