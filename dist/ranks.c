/* SPDX-License-Identifier: MIT */
/* spsolve/dist/ranks.c: one process driving several ranks, one thread each
 * (`spsolve --gpus N`): on a GPU context, rank r on GPU r over NCCL (the
 * unique id made here and handed to every thread, as ncclCommInitAll does);
 * on a host context, host ranks over the thread transport. */
#include "dist_impl.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#if SPS_HAVE_CUDA
#include "gpu.h"
#endif

typedef struct rank_job {
    int rank, size, gpu;
    sps_dist_group *g;
    const unsigned char *id;
    const sps_matrix *A;
    const sps_dist_solve_opts *o;
    const double *b;
    double *x;
    sps_solve_info info;
    sps_status st;
    char msg[1024];
    int mpi; /* a process of MPI_COMM_WORLD (sps_dist_solve_world) */
} rank_job;

static sps_status rank_solve(rank_job *j, sps_context *ctx)
{
    sps_dist *d = NULL;
    sps_dist_operator *op = NULL;
    sps_dist_spec sp = {j->gpu ? SPS_DIST_NCCL : SPS_DIST_THREADS, j->rank, j->size, j->g, j->id, NULL};
    if (j->mpi) {
        sp.kind = SPS_DIST_MPI;
        sp.mpi_comm = sps_dist_mpi_world();
    }
    double t0 = sps__now_ms();
    sps_status st = sps_dist_create(ctx, &sp, &d);
    if (st == SPS_OK) st = sps_dist_operator_from_matrix(d, j->A, &op);
    sps_idx lo = 0, nl = op ? sps_dist_operator_rows(op, &lo) : 0;
    double *xl = sps__malloc(((size_t)nl + 1) * sizeof(double));
    if (st == SPS_OK && !xl) st = sps__err(ctx, SPS_ERR_NO_MEMORY, "out of memory");
    if (st == SPS_OK) {
        memcpy(xl, j->x + lo, (size_t)nl * sizeof(double));
        double t1 = sps__now_ms();
        st = sps_dist_solve(op, j->o, j->b + lo, xl, &j->info);
        /* the setup includes the communicator, the partition, the halo plan
         * and the upload of the local rows */
        j->info.setup_ms += t1 - t0;
    }
    if (st == SPS_OK) st = sps_dist_gather(op, xl, sps_dist_rank(d) == 0 ? j->x : NULL);
    sps__free(xl);
    sps_dist_operator_destroy(op);
    sps_dist_destroy(d);
    return st;
}

static void *rank_main(void *p)
{
    rank_job *j = p;
    sps_context *ctx = NULL;
    j->st = sps_context_create(&ctx, j->gpu ? j->rank : SPS_DEVICE_HOST);
    if (j->st == SPS_OK) j->st = rank_solve(j, ctx);
    if (j->st != SPS_OK) snprintf(j->msg, sizeof j->msg, "%s", sps_last_error(ctx));
    sps_context_destroy(ctx);
    return NULL;
}

static sps_status check_ranks(sps_context *ctx, int nranks, int gpu)
{
    if (nranks < 1 || nranks > SPS_DIST_MAX_RANKS)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_solve_ranks: %d ranks (1 to %d)", nranks, SPS_DIST_MAX_RANKS);
#if SPS_HAVE_CUDA
    char why[256] = "";
    int have = gpu ? sps__gpu_count(why, sizeof why) : nranks;
    if (have < nranks)
        return sps__err(ctx, SPS_ERR_NO_DEVICE, "%d GPUs asked for, this machine has %d%s%s", nranks, have,
                        why[0] ? ": " : "", why);
#else
    (void)gpu;
#endif
    return SPS_OK;
}

static sps_status launch(sps_context *ctx, rank_job *jobs, int nranks)
{
    pthread_t *t = sps__calloc((size_t)nranks, sizeof *t);
    if (!t) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_dist_solve_ranks: out of memory");
    int made = 0;
    for (; made < nranks; made++)
        if (pthread_create(&t[made], NULL, rank_main, &jobs[made]) != 0) break;
    for (int r = 0; r < made; r++) pthread_join(t[r], NULL);
    sps__free(t);
    /* a rank that could not start leaves the others waiting: only before any start */
    if (made < nranks) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_dist_solve_ranks: cannot start thread %d", made);
    for (int r = 0; r < nranks; r++)
        if (jobs[r].st != SPS_OK) return sps__err(ctx, jobs[r].st, "rank %d: %s", r, jobs[r].msg);
    return SPS_OK;
}

sps_status sps_dist_solve_ranks(sps_context *ctx, const sps_matrix *A, int nranks, const sps_dist_solve_opts *o,
                                const double *b, double *x, sps_solve_info *info)
{
    if (!ctx || !A || !o || !b || !x || !info)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_solve_ranks: NULL argument");
    int gpu = ctx->gpu != NULL;
    sps_status st = check_ranks(ctx, nranks, gpu);
    if (st != SPS_OK) return st;
    unsigned char id[SPS_DIST_ID_BYTES];
    sps_dist_group *g = NULL;
    if (gpu) st = sps_dist_unique_id(ctx, id);
    else st = sps_dist_group_create(nranks, &g);
    rank_job *jobs = st == SPS_OK ? sps__calloc((size_t)nranks, sizeof *jobs) : NULL;
    if (st == SPS_OK && !jobs) st = sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_dist_solve_ranks: out of memory");
    for (int r = 0; st == SPS_OK && r < nranks; r++) {
        rank_job j = {r, nranks, gpu, g, id, A, o, b, x, {0}, SPS_OK, "", 0};
        jobs[r] = j;
    }
    if (st == SPS_OK) st = launch(ctx, jobs, nranks);
    if (st == SPS_OK) *info = jobs[0].info;
    sps__free(jobs);
    sps_dist_group_destroy(g);
    return st;
}

sps_status sps_dist_solve_world(sps_context *ctx, const sps_matrix *A, const sps_dist_solve_opts *o,
                                const double *b, double *x, sps_solve_info *info)
{
    if (!ctx || !A || !o || !b || !x || !info)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_solve_world: NULL argument");
    if (!sps_dist_mpi_world())
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_dist_solve_world: call sps_dist_mpi_init first");
    rank_job j;
    memset(&j, 0, sizeof j);
    j.A = A;
    j.o = o;
    j.b = b;
    j.x = x;
    j.mpi = 1;
    j.gpu = ctx->gpu != NULL;
    sps_status st = rank_solve(&j, ctx);
    if (st == SPS_OK) *info = j.info;
    return st;
}
