/* SPDX-License-Identifier: MIT */
/* spsolve/examples/matrix_free.c: a matrix-free solve: the operator and the
 * preconditioner are the caller's callbacks (sps_operator_create_user,
 * sps_precond_create_user), as PETSc's MatShell and PCShell.
 *
 * The problem is 1-D diffusion -(k u')' = f on n cells with a coefficient k
 * that varies over three orders of magnitude, so that Jacobi (1/diagonal)
 * matters. A is never stored: apply() walks the stencil. The context is the
 * host's: the callbacks receive host pointers (on a GPU context they receive
 * device pointers and would launch their own kernels). Uses only spsolve.h.
 *
 *   make examples && build/examples/matrix_free [n]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "spsolve.h"

typedef struct problem {
    sps_idx n;
    double *k; /* k[i]: the coefficient between cells i-1 and i (n + 1 faces) */
} problem;

/* y = alpha*A*x + beta*y, A = tridiag(-k_i, k_i + k_{i+1}, -k_{i+1}). */
static int apply(void *user, double alpha, const double *x, double beta, double *y)
{
    const problem *p = user;
    for (sps_idx i = 0; i < p->n; i++) {
        double ax = (p->k[i] + p->k[i + 1]) * x[i];
        if (i > 0) ax -= p->k[i] * x[i - 1];
        if (i + 1 < p->n) ax -= p->k[i + 1] * x[i + 1];
        y[i] = alpha * ax + (beta != 0.0 ? beta * y[i] : 0.0); /* beta = 0: y not read */
    }
    return 0;
}

/* z = D^-1 r: Jacobi from the stencil's diagonal. */
static int jacobi(void *user, const double *r, double *z)
{
    const problem *p = user;
    for (sps_idx i = 0; i < p->n; i++) z[i] = r[i] / (p->k[i] + p->k[i + 1]);
    return 0;
}

static int solve(sps_context *ctx, problem *p, int precondition)
{
    sps_operator *op = NULL;
    sps_precond *pc = NULL;
    sps_solver *s = NULL;
    sps_solve_info info;
    double *b = malloc((size_t)p->n * sizeof *b), *x = calloc((size_t)p->n, sizeof *x);
    double *ones = malloc((size_t)p->n * sizeof *ones);
    for (sps_idx i = 0; i < p->n; i++) ones[i] = 1.0;
    apply(p, 1.0, ones, 0.0, b); /* b = A*ones: the exact solution is all ones */
    sps_status st = sps_operator_create_user(ctx, p->n, p->n, apply, p, &op);
    if (st == SPS_OK && precondition) st = sps_precond_create_user(ctx, p->n, jacobi, p, 1, &pc);
    if (st == SPS_OK) st = sps_solver_create(ctx, &s);
    if (st == SPS_OK) st = sps_solver_set_method(s, SPS_CG); /* A and D^-1 are SPD */
    if (st == SPS_OK) st = sps_solver_set_rtol(s, 1e-10);
    if (st == SPS_OK) st = sps_solve(s, op, pc, b, x, &info);
    int rc = 1;
    if (st != SPS_OK) {
        fprintf(stderr, "matrix_free: %s: %s\n", sps_strerror(st), sps_last_error(ctx));
    } else {
        double err = 0;
        for (sps_idx i = 0; i < p->n; i++) err = fmax(err, fabs(x[i] - 1.0));
        printf("cg %-13s %s after %lld iterations, max |x - 1| = %.2e\n",
               precondition ? "+ user jacobi" : "", sps_reason_str(info.reason),
               (long long)info.iterations, err);
        rc = info.reason > 0 ? 0 : 1;
    }
    sps_solver_destroy(s);
    sps_precond_destroy(pc);
    sps_operator_destroy(op);
    free(b);
    free(x);
    free(ones);
    return rc;
}

int main(int argc, char **argv)
{
    problem p;
    p.n = argc > 1 ? (sps_idx)atoi(argv[1]) : 1000;
    if (p.n < 1) return 2;
    p.k = malloc(((size_t)p.n + 1) * sizeof *p.k);
    for (sps_idx i = 0; i <= p.n; i++) p.k[i] = pow(10.0, 3.0 * (double)i / p.n); /* 1 .. 1e3 */
    sps_context *ctx = NULL;
    if (sps_context_create(&ctx, SPS_DEVICE_HOST) != SPS_OK) return 1;
    printf("matrix-free 1-D diffusion, n = %d, k from 1 to 1e3\n", (int)p.n);
    int rc = solve(ctx, &p, 0) | solve(ctx, &p, 1);
    sps_context_destroy(ctx);
    free(p.k);
    return rc;
}
