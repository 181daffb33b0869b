/* SPDX-License-Identifier: MIT */
/* spsolve/precond/measure.c: sps_precond_time, the cost of one apply (the
 * summary prints it in SpMVs of the solve's operator). */
#include "pc_impl.h"

#include <math.h>
#include <string.h>

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#endif

enum { PC_WARMUP = 2 };

/* r and z in the preconditioner's memory space; r holds fixed values. */
typedef struct pc_vecs {
    double *r, *z;
    int dev;
} pc_vecs;

static void vecs_free(pc_vecs *v)
{
#if SPS_HAVE_CUDA
    if (v->dev) {
        sps__dfree(v->r);
        sps__dfree(v->z);
        return;
    }
#endif
    sps__free(v->r);
    sps__free(v->z);
}

static sps_status vecs_alloc(sps_precond *pc, pc_vecs *v)
{
    size_t n = (size_t)(pc->n > 0 ? pc->n : 1), nb = sps__mul_size(n, sizeof(double));
    double *h = sps__malloc(nb);
    if (!h) return sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "sps_precond_time: out of memory");
    for (size_t i = 0; i < n; i++) h[i] = 1.0 + 0.5 * sin(0.7 * (double)i); /* in [0.5, 1.5] */
    sps_status st = SPS_OK;
    memset(v, 0, sizeof *v);
    v->dev = sps_context_on_gpu(pc->ctx);
#if SPS_HAVE_CUDA
    if (v->dev) {
        st = sps__dmalloc(pc->ctx, (void **)&v->r, nb);
        if (st == SPS_OK) st = sps__dmalloc(pc->ctx, (void **)&v->z, nb);
        if (st == SPS_OK) st = sps__h2d(pc->ctx, v->r, h, nb);
        sps__free(h);
        return st;
    }
#endif
    v->r = h;
    v->z = sps__malloc(nb);
    if (!v->z) st = sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "sps_precond_time: out of memory");
    return st;
}

/* One apply of sps_precond_time. */
typedef struct timed_apply {
    sps_precond *pc;
    pc_vecs *v;
} timed_apply;

static sps_status apply_call(void *arg, int k)
{
    (void)k;
    const timed_apply *a = arg;
    return sps_precond_apply(a->pc, a->v->r, a->v->z);
}

sps_status sps_precond_time(sps_precond *pc, int reps, sps_timing *t)
{
    if (!pc || !t) return sps__err(pc ? pc->ctx : NULL, SPS_ERR_INVALID_ARG, "sps_precond_time: NULL argument");
    if (reps < 1)
        return sps__err(pc->ctx, SPS_ERR_INVALID_ARG, "sps_precond_time: reps = %d (need reps >= 1)", reps);
    memset(t, 0, sizeof *t);
    pc_vecs v = {NULL, NULL, 0};
    double *us = sps__malloc((size_t)reps * sizeof *us);
    sps_status st = us ? vecs_alloc(pc, &v) : sps__err(pc->ctx, SPS_ERR_NO_MEMORY, "sps_precond_time: out of memory");
    timed_apply ta = {pc, &v};
    if (st == SPS_OK) st = sps__time_calls(pc->ctx, v.dev, apply_call, &ta, PC_WARMUP, reps, us);
    if (st == SPS_OK) sps__timing_summarize(us, reps, t);
    vecs_free(&v);
    sps__free(us);
    return st;
}
