/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_dist_gpu.c: the distributed layer on GPUs over NCCL
 * (one thread per rank, each with its own GPU context, as `spsolve --gpus N`):
 *   - 1 rank on GPU 0: the distributed product against the serial CSR
 *     (1e-12; the warp-per-row sum has its own order), distributed CG and
 *     BiCGSTAB (Jacobi) converging;
 *   - 2 ranks on GPUs 0 and 1 (skipped with the reason on fewer GPUs): the
 *     same iterations and bitwise the same x as 1 rank, and a second run
 *     bitwise equal. */
#include "check.h"
#include "internal.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA && SPS_HAVE_NCCL
#include "core/gpu.h"

typedef struct job {
    int P, rank;
    const sps_matrix *A;
    const double *b, *x;
    double *out;           /* rank 0: the gathered solution, or the product */
    const unsigned char *id;
    const char *pc;
    sps_method method;
    int product;
    sps_solve_info info;
    sps_status st;
    char msg[256];
} job;

static sps_status work(job *j, sps_dist_operator *op)
{
    sps_idx lo, nl = sps_dist_operator_rows(op, &lo);
    double *v = calloc((size_t)nl + 1, sizeof *v);
    sps_status st;
    if (j->product) {
        st = sps_dist_operator_apply(op, j->x + lo, v);
    } else {
        sps_dist_solve_opts o;
        sps_dist_solve_opts_default(&o);
        o.precond = j->pc;
        o.method = j->method;
        st = sps_dist_solve(op, &o, j->b + lo, v, &j->info);
    }
    if (st == SPS_OK) st = sps_dist_gather(op, v, j->rank == 0 ? j->out : NULL);
    free(v);
    return st;
}

static void *rank_main(void *p)
{
    job *j = p;
    sps_context *ctx = NULL;
    sps_dist *d = NULL;
    sps_dist_operator *op = NULL;
    sps_dist_spec sp = {SPS_DIST_NCCL, j->rank, j->P, NULL, j->id, NULL};
    j->st = sps_context_create(&ctx, j->rank);
    if (j->st == SPS_OK) j->st = sps_dist_create(ctx, &sp, &d);
    if (j->st == SPS_OK) j->st = sps_dist_operator_from_matrix(d, j->A, &op);
    if (j->st == SPS_OK) j->st = work(j, op);
    snprintf(j->msg, sizeof j->msg, "%s", j->st == SPS_OK ? "" : sps_last_error(ctx));
    sps_dist_operator_destroy(op);
    sps_dist_destroy(d);
    sps_context_destroy(ctx);
    return NULL;
}

/* P ranks on GPUs 0..P-1; rank 0's job is returned in *j0. */
static sps_method g_method = SPS_CG;

static int run(int P, const sps_matrix *A, const char *pc, int product, const double *in, double *out, job *j0)
{
    unsigned char id[SPS_DIST_ID_BYTES];
    if (!T_STATUS(NULL, sps_dist_unique_id(NULL, id), "nccl unique id")) return 0;
    job j[2];
    pthread_t t[2];
    for (int r = 0; r < P; r++) {
        memset(&j[r], 0, sizeof j[r]);
        j[r].P = P;
        j[r].rank = r;
        j[r].A = A;
        j[r].b = in;
        j[r].x = in;
        j[r].out = out;
        j[r].id = id;
        j[r].pc = pc;
        j[r].method = g_method;
        j[r].product = product;
        pthread_create(&t[r], NULL, rank_main, &j[r]);
    }
    int ok = 1;
    for (int r = 0; r < P; r++) {
        pthread_join(t[r], NULL);
        if (j[r].st != SPS_OK) {
            T_FAIL("dist gpu", "%d ranks, rank %d: %s", P, r, j[r].msg);
            ok = 0;
        }
    }
    *j0 = j[0];
    return ok;
}

static void one_gpu(const sps_matrix *A, const char *spec, double *b, double *x1)
{
    sps_idx n = sps_matrix_rows(A);
    double *y = malloc((size_t)n * sizeof *y), *ref = malloc((size_t)n * sizeof *ref);
    job j0;
    sps__csr_spmv(&A->A, 1.0, b, 0.0, ref);
    if (run(1, A, "none", 1, b, y, &j0)) {
        double e = 0;
        for (sps_idx i = 0; i < n; i++) e = fmax(e, fabs(y[i] - ref[i]) / fmax(1.0, fabs(ref[i])));
        T_OK(e <= 1e-12, "dist product %s on 1 GPU: error %.2e against the serial CSR", spec, e);
    }
    if (run(1, A, "jacobi", 0, b, x1, &j0))
        T_OK(j0.info.reason > 0 && j0.info.true_rel_rnorm <= 1e-8, "dist CG %s jacobi on 1 GPU: %s in %lld, true rel %.2e, %.4f ms/iteration",
             spec, sps_reason_str(j0.info.reason), (long long)j0.info.iterations, j0.info.true_rel_rnorm, j0.info.per_iter_ms);
    g_method = SPS_BICGSTAB;
    if (run(1, A, "jacobi", 0, b, y, &j0))
        T_OK(j0.info.reason > 0 && j0.info.true_rel_rnorm <= 1e-8, "dist bicgstab %s jacobi on 1 GPU: %s in %lld, true rel %.2e",
             spec, sps_reason_str(j0.info.reason), (long long)j0.info.iterations, j0.info.true_rel_rnorm);
    g_method = SPS_CG;
    free(y);
    free(ref);
}

static void test_dist_gpu(sps_context *ctx)
{
    (void)ctx;
    const char *spec = "poisson3d:40";
    sps_matrix *A = NULL;
    if (!T_STATUS(NULL, sps_matrix_generate(NULL, spec, &A), "generate %s", spec)) return;
    sps_idx n = sps_matrix_rows(A);
    double *b = malloc((size_t)n * sizeof *b), *x1 = calloc((size_t)n, sizeof *x1), *x2 = calloc((size_t)n, sizeof *x2);
    uint64_t seed = 5;
    for (sps_idx i = 0; i < n; i++) b[i] = t_rand(&seed);
    one_gpu(A, spec, b, x1);
    char why[256] = "";
    int ngpu = sps__gpu_count(why, sizeof why);
    job j1, j2;
    if (ngpu < 2) {
        t_skip("dist CG on 2 GPUs", "%d GPU(s) here, 2 needed%s%s", ngpu, why[0] ? ": " : "", why);
    } else if (run(1, A, "jacobi", 0, b, x1, &j1) && run(2, A, "jacobi", 0, b, x2, &j2)) {
        T_OK(j1.info.iterations == j2.info.iterations && memcmp(x1, x2, (size_t)n * sizeof *x1) == 0,
             "dist CG %s on 2 GPUs: %lld iterations and x bitwise those of 1 GPU (%lld); %.4f vs %.4f ms/iteration", spec,
             (long long)j2.info.iterations, (long long)j1.info.iterations, j2.info.per_iter_ms, j1.info.per_iter_ms);
        if (run(2, A, "jacobi", 0, b, x1, &j1))
            T_OK(memcmp(x1, x2, (size_t)n * sizeof *x1) == 0, "dist CG %s on 2 GPUs: a second run bitwise equal", spec);
    }
    free(b);
    free(x1);
    free(x2);
    sps_matrix_destroy(A);
}

int main(void) { return t_run_gpu("dist gpu", test_dist_gpu); }
#else
int main(void)
{
    t_skip("dist gpu", SPS_HAVE_CUDA ? "built without NCCL" : "built without CUDA");
    return t_done();
}
#endif
