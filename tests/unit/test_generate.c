/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_generate.c: every generator: sizes, exact nnz of
 * the stencils, symmetry, dominance, determinism, malformed specs */
#include "check.h"
#include "core/internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static sps_matrix *gen(const char *spec)
{
    sps_matrix *A = NULL;
    sps_status st = sps_matrix_generate(NULL, spec, &A);
    if (st != SPS_OK) {
        T_FAIL(spec, "%s: %s", sps_strerror(st), sps_last_error(NULL));
        return NULL;
    }
    return A;
}

static sps_features feats(const sps_matrix *A)
{
    sps_features f;
    sps_status st = sps_matrix_analyze(NULL, A, &f);
    if (st != SPS_OK) T_FAIL("analyze", "%s", sps_last_error(NULL));
    return f;
}

/* Rows with |a_ii| > sum_{j != i} |a_ij| (strict dominance, every row). */
static sps_idx strictly_dominant(const sps_csr *A)
{
    sps_idx n = 0;
    for (sps_idx r = 0; r < A->nrows; r++) {
        double d = 0, off = 0;
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++) {
            if (A->col_idx[p] == r) d = fabs(A->val[p]);
            else off += fabs(A->val[p]);
        }
        n += d > off;
    }
    return n;
}

/* Every off-diagonal value <= 0 and every diagonal value > 0 (Z-matrix with
 * positive diagonal; with dominance and irreducibility: an M-matrix). */
static int z_matrix(const sps_csr *A)
{
    for (sps_idx r = 0; r < A->nrows; r++)
        for (sps_idx p = A->row_ptr[r]; p < A->row_ptr[r + 1]; p++)
            if ((A->col_idx[p] == r) ? !(A->val[p] > 0) : !(A->val[p] <= 0)) return 0;
    return 1;
}

static int same_csr(const sps_csr *a, const sps_csr *b)
{
    return a->nrows == b->nrows && a->ncols == b->ncols && a->nnz == b->nnz &&
           memcmp(a->row_ptr, b->row_ptr, ((size_t)a->nrows + 1) * sizeof(sps_idx)) == 0 &&
           memcmp(a->col_idx, b->col_idx, (size_t)a->nnz * sizeof(sps_idx)) == 0 &&
           memcmp(a->val, b->val, (size_t)a->nnz * sizeof(double)) == 0;
}

static void test_stencils(void)
{
    static const struct {
        const char *name;
        int dim;
        double diag;
    } g[] = {{"poisson2d", 2, 4}, {"poisson3d", 3, 6}, {"poisson3d27", 3, 26}};
    int sizes[] = {1, 2, 7, 12};
    for (int k = 0; k < 3; k++)
        for (int s = 0; s < 4; s++) {
            int64_t N = sizes[s];
            char spec[64];
            snprintf(spec, sizeof spec, "%s:%lld", g[k].name, (long long)N);
            sps_matrix *A = gen(spec);
            if (!A) continue;
            int64_t rows = g[k].dim == 2 ? N * N : N * N * N;
            /* 5N^2 - 4N, 7N^3 - 6N^2, (3N - 2)^3: each point's neighbours inside */
            int64_t nnz = k == 0 ? 5 * N * N - 4 * N
                        : k == 1 ? 7 * N * N * N - 6 * N * N
                                 : (3 * N - 2) * (3 * N - 2) * (3 * N - 2);
            sps_features f = feats(A);
            T_OK(f.rows == rows && f.cols == rows, "%s: %lld rows (got %d)", spec, (long long)rows, f.rows);
            T_OK(f.nnz == nnz, "%s: nnz %lld (got %lld)", spec, (long long)nnz, (long long)f.nnz);
            T_STATUS(NULL, sps__csr_check(NULL, &A->A), "%s: valid sorted CSR", spec);
            T_OK(f.symmetric == 1 && f.asymmetry == 0.0, "%s: exactly symmetric", spec);
            /* N = 2: the 27 offsets dz*4 + dy*2 + dx collapse onto -7..7 */
            int ndiag = N == 1 ? 1 : k == 0 ? 5 : k == 1 ? 7 : N == 2 ? 15 : 27;
            T_OK(f.diagonals == ndiag,
                 "%s: distinct diagonals (got %d)", spec, f.diagonals);
            T_OK(f.dominant_rows == f.rows && f.diag_dominant == 1 && z_matrix(&A->A),
                 "%s: weakly dominant Z-matrix with a strict row (an SPD M-matrix)", spec);
            T_OK(A->A.val[A->A.row_ptr[0] + 0] == g[k].diag, "%s: a_00 = %g", spec, g[k].diag);
            sps_matrix_destroy(A);
        }
}

static void test_big_poisson3d(void)
{
    double t0 = sps__now_ms();
    sps_matrix *A = gen("poisson3d:160");
    double ms = sps__now_ms() - t0;
    if (!A) return;
    T_OK(sps_matrix_rows(A) == 4096000 && sps_matrix_nnz(A) == 28518400,
         "poisson3d:160: 4096000 rows, 28518400 entries (built in %.0f ms)", ms);
    T_OK(ms < 20000, "poisson3d:160 builds in seconds (%.0f ms)", ms);
    const sps_csr *C = &A->A;
    /* a middle row: (x,y,z) = (80,80,80) has all 7 neighbours */
    sps_idx r = (80 * 160 + 80) * 160 + 80, b = C->row_ptr[r];
    T_OK(C->row_ptr[r + 1] - b == 7 && C->col_idx[b] == r - 25600 && C->col_idx[b + 3] == r &&
             C->col_idx[b + 6] == r + 25600 && C->val[b + 3] == 6 && C->val[b] == -1,
         "poisson3d:160: interior row couples to x+-1, y+-160, z+-25600");
    sps_matrix_destroy(A);
}

static void test_convdiff(void)
{
    sps_matrix *A = gen("convdiff2d:20,0");
    sps_matrix *B = gen("convdiff2d:20,50");
    if (!A || !B) goto out;
    sps_features fa = feats(A), fb = feats(B);
    T_OK(fa.symmetric == 1, "convdiff2d:20,0 is the symmetric 5-point Laplacian");
    T_OK(fb.nnz == 5 * 400 - 4 * 20 && fb.rows == 400, "convdiff2d:20,50: 400 rows, 1920 entries");
    T_OK(fb.pattern_symmetric == 1 && fb.symmetric == 0 && fb.asymmetry > 0.1,
         "convdiff2d:20,50: symmetric pattern, nonsymmetric values (asymmetry %.3f)", fb.asymmetry);
    T_OK(fb.dominant_rows == 400 && fb.diag_dominant && z_matrix(&B->A),
         "convdiff2d:20,50: dominant Z-matrix (M-matrix)");
    /* boundary rows strictly dominant; interior rows exactly balanced */
    T_OK(strictly_dominant(&B->A) == 4 * 20 - 4, "convdiff2d:20,50: the 76 boundary rows are strict (got %d)",
         strictly_dominant(&B->A));
    /* row 0 (corner): diag 4 + 2c, c = 50/21; east -1, north -1 */
    double c = 50.0 / 21.0;
    const sps_csr *C = &B->A;
    T_NEAR(C->val[0], 4 + 2 * c, 1e-15, "convdiff2d:20,50: a_00 = 4 + 2 Pe h");
    sps_idx r = 21, p = C->row_ptr[r]; /* interior (x=1, y=1): south, west, diag, east, north */
    T_OK(C->col_idx[p] == 1 && C->val[p] == -1 - c && C->val[p + 1] == -1 - c && C->val[p + 3] == -1 &&
             C->val[p + 4] == -1,
         "convdiff2d:20,50: upwind couplings -1-c (south, west), -1 (east, north)");
out:
    sps_matrix_destroy(A);
    sps_matrix_destroy(B);
}

static void test_banded(void)
{
    sps_matrix *A = gen("banded:5000,9,0,1");
    sps_matrix *S = gen("banded:5000,9,0.01,1");
    sps_matrix *A2 = gen("banded:5000,9,0,1");
    sps_matrix *O = gen("banded:5000,9,0,2");
    if (!A || !S || !A2 || !O) goto out;
    sps_features f = feats(A), fs = feats(S);
    T_STATUS(NULL, sps__csr_check(NULL, &A->A), "banded: valid sorted CSR");
    T_OK(f.diagonals == 9, "banded:5000,9,0,1: exactly W = 9 diagonals (got %d)", f.diagonals);
    T_OK(f.missing_diagonal == 0 && strictly_dominant(&A->A) == 5000 &&
             strictly_dominant(&S->A) == 5000,
         "banded: full main diagonal, every row strictly dominant");
    T_OK(f.nnz > 0.85 * 9 * 5000 && f.nnz < 0.99 * 9 * 5000,
         "banded: broken diagonals keep 85-99%% of 9 x 5000 (%lld)", (long long)f.nnz);
    T_OK(f.drm_fill < 0.2 && f.drm_fill < f.dia_fill,
         "banded: DRM fill %.3f low and below DIA fill %.3f", f.drm_fill, f.dia_fill);
    T_OK(fs.diagonals > 9 && fs.dia_fill > 0.5,
         "banded with 1%% scatter: scattered offsets (%d diagonals, DIA fill %.2f)", fs.diagonals,
         fs.dia_fill);
    /* the scattered version has the same diagonals (same seed) plus the points */
    {
        const sps_csr *a = &A->A, *s = &S->A;
        int64_t extra = 0, subset = 1;
        for (sps_idx r = 0; r < a->nrows; r++) {
            sps_idx q = s->row_ptr[r];
            for (sps_idx p = a->row_ptr[r]; p < a->row_ptr[r + 1]; p++) {
                while (q < s->row_ptr[r + 1] && s->col_idx[q] < a->col_idx[p]) { q++; extra++; }
                if (q >= s->row_ptr[r + 1] || s->col_idx[q] != a->col_idx[p]) subset = 0;
                else q++;
            }
            extra += s->row_ptr[r + 1] - q;
        }
        /* 0.01 per row: 50 points, fewer only where two fall on one position */
        T_OK(subset && extra >= 45 && extra <= 50,
             "banded: SCATTER 0.01 adds 0.01 x 5000 scattered points (%lld) on top of the same "
             "diagonals", (long long)extra);
        T_OK(fs.drm_fill > f.drm_fill && fs.drm_fill < 0.15,
             "banded: the scattered points raise DRM's fill from %.3f to %.3f (each costs a "
             "32-slot diagonal)", f.drm_fill, fs.drm_fill);
    }
    T_OK(same_csr(&A->A, &A2->A), "banded: same spec, identical arrays");
    T_OK(!same_csr(&A->A, &O->A), "banded: another SEED, another matrix");
out:
    sps_matrix_destroy(A);
    sps_matrix_destroy(S);
    sps_matrix_destroy(A2);
    sps_matrix_destroy(O);

    /* tiny and degenerate: every offset taken, one row */
    const char *tiny[] = {"banded:1,1,0.5,7", "banded:2,3,0.5,7", "banded:3,2,0.9,7", "banded:40,79,0.3,7"};
    for (int k = 0; k < 4; k++) {
        sps_matrix *T = gen(tiny[k]);
        if (!T) continue;
        T_OK(sps__csr_check(NULL, &T->A) == SPS_OK && strictly_dominant(&T->A) == T->A.nrows,
             "%s: valid and strictly dominant", tiny[k]);
        sps_matrix_destroy(T);
    }
    double t0 = sps__now_ms();
    sps_matrix *L = gen("banded:2000000,9,0.01,1");
    double ms = sps__now_ms() - t0;
    if (L) {
        T_OK(sps_matrix_rows(L) == 2000000 && sps_matrix_nnz(L) > 10000000 && ms < 20000,
             "banded:2000000,9,0.01,1: %lld entries in %.0f ms", (long long)sps_matrix_nnz(L), ms);
        sps_matrix_destroy(L);
    }
}

static void test_powerlaw(void)
{
    sps_matrix *A = gen("powerlaw:20000,8,1");
    sps_matrix *A2 = gen("powerlaw:20000,8,1");
    sps_matrix *O = gen("powerlaw:20000,8,2");
    if (!A || !A2 || !O) goto out;
    sps_features f = feats(A);
    T_STATUS(NULL, sps__csr_check(NULL, &A->A), "powerlaw: valid sorted CSR");
    T_OK(f.nnz == 160000 && f.row_mean == 8.0, "powerlaw:20000,8,1: mean row length exactly 8 (%g)",
         f.row_mean);
    T_OK(f.row_max > 20 * f.row_mean && f.row_std > f.row_mean,
         "powerlaw: a few very long rows (max %d, std %.1f, mean %.1f)", f.row_max, f.row_std,
         f.row_mean);
    T_OK(strictly_dominant(&A->A) == 20000 && f.missing_diagonal == 0,
         "powerlaw: every row strictly dominant");
    T_OK(same_csr(&A->A, &A2->A), "powerlaw: same spec, identical arrays");
    T_OK(!same_csr(&A->A, &O->A), "powerlaw: another SEED, another matrix");
out:
    sps_matrix_destroy(A);
    sps_matrix_destroy(A2);
    sps_matrix_destroy(O);
    /* extremes: AVGDEG 1 is diagonal; AVGDEG N is (nearly) dense */
    sps_matrix *D = gen("powerlaw:100,1,3");
    sps_matrix *F = gen("powerlaw:12,12,3");
    if (D) T_OK(sps_matrix_nnz(D) == 100, "powerlaw:100,1,3 is diagonal");
    /* rows whose share exceeds N - 1 are capped, so the mean falls short of N */
    if (F) T_OK(sps_matrix_nnz(F) <= 144 && sps_matrix_nnz(F) > 100 &&
                    sps__csr_check(NULL, &F->A) == SPS_OK && strictly_dominant(&F->A) == 12,
                "powerlaw:12,12,3 is nearly dense and valid (%lld)", (long long)sps_matrix_nnz(F));
    sps_matrix_destroy(D);
    sps_matrix_destroy(F);
}

static void test_malformed(void)
{
    static const char *bad[] = {
        "",                     "poisson2d",           "poisson2d:",        "poisson2d:0",
        "poisson2d:-3",         "poisson2d:x",         "poisson2d:3,4",     "poisson2d:3.5",
        "poisson2d: 3",         "poisson2d:20725",     "poisson3d:675",     "poisson3d:3000000",
        "poisson3d27:431",      "poisson4d:3",         "convdiff2d:10",     "convdiff2d:10,-1",
        "convdiff2d:10,nan",    "convdiff2d:10,1e999", "convdiff2d:10,,",   "banded:100,0,0,1",
        "banded:100,200,0,1",   "banded:100,5,1,1",    "banded:100,5,-0.1,1", "banded:100,5,0.1",
        "banded:100,5,0.1,-1",  "banded:100,5,0.1,1x", "powerlaw:100,0.5,1", "powerlaw:100,101,1",
        "powerlaw:100,8",       "powerlaw:0,8,1",      "powerlaw:99999999999,8,1", "POISSON2D:3",
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        sps_matrix *A = (sps_matrix *)&A;
        sps_status st = sps_matrix_generate(NULL, bad[k], &A);
        const char *msg = sps_last_error(NULL);
        T_OK(st == SPS_ERR_INVALID_ARG && A == NULL && strstr(msg, bad[k]) &&
                 (strstr(msg, "expected") || strstr(msg, "known:")),
             "'%s' rejected: %s", bad[k], msg);
    }
    sps_csr C;
    T_OK(sps__generate(NULL, "poisson2d:0", &C) == SPS_ERR_INVALID_ARG && C.row_ptr == NULL,
         "a rejected spec leaves the output empty");
    T_OK(sps_matrix_generate(NULL, NULL, NULL) == SPS_ERR_INVALID_ARG, "NULL arguments rejected");
}

static void test_alloc_failure(void)
{
    const char *specs[] = {"poisson2d:5", "banded:300,5,0.05,3", "powerlaw:300,4,3"};
    int bad = 0, fails = 0;
    for (int s = 0; s < 3; s++)
        for (long k = 1; k < 20; k++) {
            sps_csr C;
            sps__fail_alloc_after(k);
            sps_status st = sps__generate(NULL, specs[s], &C);
            sps__fail_alloc_after(0);
            if (st == SPS_ERR_NO_MEMORY) {
                fails++;
                if (C.row_ptr || C.col_idx || C.val) bad++;
            } else if (st == SPS_OK) {
                sps__csr_free(&C);
            } else {
                bad++;
            }
        }
    T_OK(fails > 5 && bad == 0, "every injected allocation failure is NO_MEMORY with nothing returned (%d)",
         fails);
}

int main(void)
{
    test_stencils();
    test_big_poisson3d();
    test_convdiff();
    test_banded();
    test_powerlaw();
    test_malformed();
    test_alloc_failure();
    return t_done();
}
