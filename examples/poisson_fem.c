/* SPDX-License-Identifier: MIT */
/* spsolve/examples/poisson_fem.c: a finite-element code embedding spsolve.
 *
 * Solves -div(k grad u) = f on the unit square, u = 0 on the boundary, with
 * linear (P1) triangles on a structured N x N mesh: each square is cut into
 * two triangles, element stiffness matrices are assembled as triplets (the
 * duplicates that assembly produces are summed by sps_matrix_create_coo), and
 * boundary rows become identity rows. With k = 1 and f = 2 pi^2 sin(pi x)
 * sin(pi y) the exact solution is u = sin(pi x) sin(pi y), so the error is
 * printed and shrinks like h^2.
 *
 * Then a second solve with k = 3 (same mesh, same pattern) shows the
 * time-stepping / Newton pattern: sps_operator_update_values replaces the
 * values without redoing the format analysis, and the preconditioner is
 * rebuilt. The solution must then be u/3.
 *
 *   make examples && build/examples/poisson_fem [N] [precond]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spsolve.h"

#define CHECK(call)                                                                    \
    do {                                                                               \
        sps_status st_ = (call);                                                       \
        if (st_ != SPS_OK) {                                                           \
            fprintf(stderr, "%s failed: %s: %s\n", #call, sps_strerror(st_),           \
                    sps_last_error(ctx));                                              \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static const double PI = 3.14159265358979323846;

/* Assemble K (diffusion coefficient kappa) and the load vector f. */
static sps_matrix *assemble(sps_context *ctx, int N, double kappa, double *f)
{
    int nv = (N + 1) * (N + 1);
    double h = 1.0 / N;
    size_t cap = (size_t)2 * N * N * 9 + (size_t)nv;
    sps_idx *ri = malloc(cap * sizeof *ri), *ci = malloc(cap * sizeof *ci);
    double *v = malloc(cap * sizeof *v);
    char *boundary = calloc((size_t)nv, 1);
    if (!ri || !ci || !v || !boundary) { fprintf(stderr, "out of memory\n"); exit(1); }
    for (int j = 0; j <= N; j++)
        for (int i = 0; i <= N; i++)
            boundary[j * (N + 1) + i] = (i == 0 || j == 0 || i == N || j == N);
    memset(f, 0, (size_t)nv * sizeof *f);
    int64_t k = 0;
    for (int j = 0; j < N; j++) {
        for (int i = 0; i < N; i++) {
            int a = j * (N + 1) + i, b = a + 1, c = a + N + 1, d = c + 1;
            int tri[2][3] = {{a, b, d}, {a, d, c}};
            for (int t = 0; t < 2; t++) {
                double X[3], Y[3];
                for (int q = 0; q < 3; q++) {
                    X[q] = (tri[t][q] % (N + 1)) * h;
                    Y[q] = (tri[t][q] / (N + 1)) * h;
                }
                double area = 0.5 * fabs((X[1] - X[0]) * (Y[2] - Y[0]) - (X[2] - X[0]) * (Y[1] - Y[0]));
                /* gradients of the barycentric basis functions */
                double gx[3], gy[3];
                for (int q = 0; q < 3; q++) {
                    int q1 = (q + 1) % 3, q2 = (q + 2) % 3;
                    gx[q] = (Y[q1] - Y[q2]) / (2 * area);
                    gy[q] = (X[q2] - X[q1]) / (2 * area);
                }
                double xc = (X[0] + X[1] + X[2]) / 3, yc = (Y[0] + Y[1] + Y[2]) / 3;
                double fc = 2 * PI * PI * sin(PI * xc) * sin(PI * yc);
                for (int p = 0; p < 3; p++) {
                    int r = tri[t][p];
                    if (boundary[r]) continue;
                    f[r] += fc * area / 3;
                    for (int q = 0; q < 3; q++) {
                        int c2 = tri[t][q];
                        if (boundary[c2]) continue; /* u = 0 there: drop the column */
                        ri[k] = r; ci[k] = c2;
                        v[k++] = kappa * area * (gx[p] * gx[q] + gy[p] * gy[q]);
                    }
                }
            }
        }
    }
    for (int r = 0; r < nv; r++)
        if (boundary[r]) { ri[k] = r; ci[k] = r; v[k++] = 1.0; }
    sps_matrix *A = NULL;
    CHECK(sps_matrix_create_coo(ctx, nv, nv, k, ri, ci, v, &A)); /* duplicates summed */
    free(ri); free(ci); free(v); free(boundary);
    return A;
}

int main(int argc, char **argv)
{
    int N = argc > 1 ? atoi(argv[1]) : 128;
    const char *pcname = argc > 2 ? argv[2] : "ic0";
    if (N < 2 || N > 4000) { fprintf(stderr, "usage: poisson_fem [N in 2..4000] [precond]\n"); return 2; }
    sps_context *ctx = NULL;
    if (sps_context_create(&ctx, 0) != SPS_OK) CHECK(sps_context_create(&ctx, SPS_DEVICE_HOST));
    printf("P1 FEM Poisson on a %d x %d mesh, %s, on %s\n", N, N, pcname, sps_context_device_name(ctx));

    int nv = (N + 1) * (N + 1);
    double *f = malloc((size_t)nv * sizeof *f), *u = calloc((size_t)nv, sizeof *u);
    sps_matrix *K = assemble(ctx, N, 1.0, f);

    sps_operator *op = NULL;
    CHECK(sps_operator_create(ctx, K, "auto", NULL, &op));
    sps_operator_info oi;
    sps_operator_get_info(op, &oi);
    sps_precond *pc = NULL;
    CHECK(sps_precond_create(ctx, K, pcname, &pc));
    sps_solver *s = NULL;
    CHECK(sps_solver_create(ctx, &s));
    CHECK(sps_solver_set_method(s, SPS_CG));
    CHECK(sps_solver_set_rtol(s, 1e-10));
    sps_solve_info info;
    CHECK(sps_solve(s, op, pc, f, u, &info));

    double err = 0, h = 1.0 / N;
    for (int j = 0; j <= N; j++)
        for (int i = 0; i <= N; i++)
            err = fmax(err, fabs(u[j * (N + 1) + i] - sin(PI * i * h) * sin(PI * j * h)));
    printf("k = 1: %s, %lld iterations, backend %s, max error %.3e (h^2 = %.3e)\n",
           sps_reason_str(info.reason), (long long)info.iterations, oi.backend, err, h * h);
    int ok = info.reason > 0 && err < 10 * h * h;

    /* Same mesh, new coefficient: new values, same pattern. */
    double *f3 = malloc((size_t)nv * sizeof *f3), *u3 = calloc((size_t)nv, sizeof *u3);
    sps_matrix *K3 = assemble(ctx, N, 3.0, f3);
    const double *vals;
    sps_matrix_csr(K3, NULL, NULL, &vals);
    CHECK(sps_operator_update_values(op, vals));
    sps_precond_destroy(pc);
    CHECK(sps_precond_create(ctx, K3, pcname, &pc));
    CHECK(sps_solve(s, op, pc, f3, u3, &info));
    double d = 0;
    for (int r = 0; r < nv; r++) d = fmax(d, fabs(3 * u3[r] - u[r]));
    printf("k = 3 (values updated in place): %s, %lld iterations, max |3 u3 - u| = %.3e\n",
           sps_reason_str(info.reason), (long long)info.iterations, d);
    ok = ok && info.reason > 0 && d < 1e-7;

    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    sps_matrix_destroy(K);
    sps_matrix_destroy(K3);
    sps_context_destroy(ctx);
    free(f); free(u); free(f3); free(u3);
    return ok ? 0 : 1;
}
