/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/engine.c: the engine's choice, the graph engine's batches
 * (the CUDA calls are in engine_cuda.cu), and the traffic model's bytes. */
#include "engine.h"

#include <stdlib.h>
#include <string.h>


static const char *const names[] = {"classic", "graph", "onekernel", "fused", "auto"};


int sps__engine_parse(const char *name)
{
    if (!name) return -1;
    for (int i = 0; i < (int)(sizeof names / sizeof *names); i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

const char *sps__engine_name(int e)
{
    return e >= 0 && e < (int)(sizeof names / sizeof *names) ? names[e] : "classic";
}

int sps__engine_of(const sps_solver *s)
{
    if (s->engine >= 0) return s->engine;
    int e = sps__engine_parse(getenv("SPS_ENGINE"));
    return e < 0 ? SPS_ENGINE_AUTO : e;
}

/* The bounds of auto's one-kernel test: spmv/backend.h. */
int sps__engine_onek_auto(const sps_solver *s, const sps_operator *op, sps_idx n)
{
    sps_dev_rows rows;
    sps_idx max = sps__engine_onek_max();
    if (max > SPS_ONEK_AUTO_MAX && !getenv("SPS_ONEKERNEL_MAX")) max = SPS_ONEK_AUTO_MAX;
    const int e = sps__engine_of(s);
    if (!((e == SPS_ENGINE_AUTO || e == SPS_ENGINE_ONEKERNEL) && n <= max && !s->mon_stop &&
          s->check == 0 && sps__engine_rows(op, &rows)))
        return 0;
    return e == SPS_ENGINE_ONEKERNEL || sps__onek_serial(n, rows.max_row) <= SPS_ONEK_AUTO_SERIAL;
}

/* auto's one-kernel test: the method has the path, the operator gives its
 * rows, the preconditioner is none or Jacobi, the system is small with short rows, and no
 * stop monitor or check interval asks for host checks along the way. */
static int onek_auto(const sps_solver *s, const sps_krylov *k)
{
    return s->method->impl->onekernel && k->pcmode != SPS_PCM_APPLY && sps__engine_onek_auto(s, k->op, k->w.n);
}

int sps__engine_resolve(const sps_solver *s, const sps_krylov *k)
{
    if (!k->ops->device) return SPS_ENGINE_CLASSIC;
    int e = sps__engine_of(s);
    if (e != SPS_ENGINE_AUTO) return e;
    if (onek_auto(s, k)) return SPS_ENGINE_ONEKERNEL;
    if (s->method->impl->id == SPS_CG && sps__engine_fused_ok(k)) return SPS_ENGINE_FUSED;
    return SPS_ENGINE_CLASSIC;
}

sps_idx sps__engine_onek_max(void)
{
    const char *v = getenv("SPS_ONEKERNEL_MAX");
    if (v && *v) {
        char *end = NULL;
        long m = strtol(v, &end, 10);
        if (end && *end == '\0' && m >= 0 && m <= (long)SPS_IDX_MAX) return (sps_idx)m;
    }
    return 16384;
}

int sps__engine_rows(const sps_operator *op, sps_dev_rows *out)
{
    if (!op || !op->dev || !op->info.on_gpu || op->single || !op->be->dev_rows) return 0;
    return op->be->dev_rows(op->dev, out);
}

int sps__engine_fused_ok(const sps_krylov *k)
{
    const sps_operator *op = k->op;
    return k->ops->device && op && op->be->apply_dot && op->dev && op->info.on_gpu && !op->single;
}

int sps__engine_fused(const sps_krylov *k)
{
    return k->engine == SPS_ENGINE_FUSED && sps__engine_fused_ok(k);
}

int64_t sps__engine_pow2(int64_t batch)
{
    int64_t p = 1;
    while (p * 2 <= batch && p * 2 <= ((int64_t)1 << (SPS_KR_NGRAPH - 1))) p *= 2;
    return p;
}

#if SPS_HAVE_CUDA
static int ilog2(int64_t len)
{
    int i = 0;
    while (((int64_t)2 << i) <= len) i++;
    return i;
}
#endif

static sps_status classic_batch(sps_krylov *k, const sps_method_impl *mi, int64_t it0,
                                int64_t len)
{
    sps_status e;
    k->ran = "classic";
    for (int64_t i = 1; i <= len; i++)
        if ((e = mi->iterate(k, it0 + i)) != SPS_OK) return e;
    return SPS_OK;
}

#if SPS_HAVE_CUDA
/* Enqueue len iterations into a capture: their SpMVs and preconditioner
 * applies go to *spmvs and *pcs, k's counters stay as they were (a replay
 * counts them). */
static sps_status enqueue_captured(sps_krylov *k, const sps_method_impl *mi, int64_t it0,
                                   int64_t len, int64_t *spmvs, int64_t *pcs)
{
    int64_t s0 = k->spmvs, p0 = k->pc_applies;
    sps_status e = SPS_OK;
    for (int64_t j = 1; j <= len && e == SPS_OK; j++) e = mi->iterate(k, it0 + j);
    *spmvs = k->spmvs - s0;
    *pcs = k->pc_applies - p0;
    k->spmvs = s0;
    k->pc_applies = p0;
    return e;
}

/* Capture len iterations as graph i; non-OK: the capture failed (nothing ran). */
static sps_status capture(sps_krylov *k, const sps_method_impl *mi, int64_t it0, int64_t len,
                          int i)
{
    sps_status e = sps__graph_begin(k->w.ctx);
    if (e != SPS_OK) return e;
    e = enqueue_captured(k, mi, it0, len, &k->gspmv[i], &k->gpc[i]);
    void *g = NULL;
    sps_status ge = sps__graph_end(k->w.ctx, &g);
    if (e == SPS_OK) e = ge;
    if (e != SPS_OK) {
        sps__graph_free(g);
        return e;
    }
    k->graph[i] = g;
    return SPS_OK;
}
#endif

sps_status sps__engine_graph_batch(sps_krylov *k, const sps_method_impl *mi, int64_t it0,
                                   int64_t len)
{
#if SPS_HAVE_CUDA
    int i = ilog2(len);
    if (k->graph_failed || !k->ops->device || !mi->replay || i >= SPS_KR_NGRAPH ||
        ((int64_t)1 << i) != len)
        return classic_batch(k, mi, it0, len);
    if (!k->graph[i] && capture(k, mi, it0, len, i) != SPS_OK) {
        k->graph_failed = 1;
        return classic_batch(k, mi, it0, len);
    }
    sps_status e = sps__graph_launch(k->w.ctx, k->graph[i]);
    if (e != SPS_OK) return e;
    k->spmvs += k->gspmv[i];
    k->pc_applies += k->gpc[i];
    k->ran = "graph";
    return SPS_OK;
#else
    return classic_batch(k, mi, it0, len);
#endif
}

sps_status sps__engine_graph_while(sps_krylov *k, const sps_method_impl *mi, int64_t it0,
                                   int64_t maxit, int *ran)
{
    *ran = 0;
#if SPS_HAVE_CUDA
    if (k->gwhile_failed || k->graph_failed || !k->ops->device || !mi->replay) return SPS_OK;
    const int64_t len = SPS_GRAPH_WHILE_LEN;
    if (!k->gwhile) {
        sps_gwhile *w = NULL;
        sps_status e = sps__graph_while_begin(k->w.ctx, &w);
        if (e != SPS_OK) {
            k->gwhile_failed = 1; /* no conditional nodes: batches */
            return SPS_OK;
        }
        e = enqueue_captured(k, mi, it0, len, &k->gwspmv, &k->gwpc);
        /* enough rounds for every iteration left, and one more */
        const int64_t cap = (maxit - it0 + len - 1) / len + 2;
        void *g = NULL;
        sps_status ge = sps__graph_while_end(k->w.ctx, w, &k->w.st->stop, cap, &g);
        if (e == SPS_OK) e = ge;
        else sps__graph_while_free(g);
        if (e != SPS_OK) {
            k->gwhile_failed = 1; /* nothing ran: batches */
            return SPS_OK;
        }
        k->gwhile = g;
    }
    sps_status e = sps__graph_while_launch(k->w.ctx, k->gwhile);
    if (e != SPS_OK) return e;
    k->ran = "graph";
    *ran = 1;
#else
    (void)k, (void)mi, (void)it0, (void)maxit;
#endif
    return SPS_OK;
}

void sps__engine_graph_while_counts(sps_krylov *k, int64_t it0, int64_t iter)
{
    /* the rounds that ran: the body runs once at least, and the round in
     * which the state stopped is the last (its iterations past the stop are
     * no-ops, counted as classic counts a batch's) */
    const int64_t len = SPS_GRAPH_WHILE_LEN, d = iter > it0 ? iter - it0 : 0;
    const int64_t rounds = d > 0 ? (d + len - 1) / len : 1;
    k->spmvs += rounds * k->gwspmv;
    k->pc_applies += rounds * k->gwpc;
}

void sps__engine_release(sps_krylov *k)
{
#if SPS_HAVE_CUDA
    sps__graph_while_free(k->gwhile);
#endif
    k->gwhile = NULL;
    for (int i = 0; i < SPS_KR_NGRAPH; i++) {
#if SPS_HAVE_CUDA
        sps__graph_free(k->graph[i]);
#endif
        k->graph[i] = NULL;
    }
}

double sps__engine_bytes(const sps_krylov *k, const sps_method_impl *mi)
{
    if (!mi->traffic || !k->op) return 0.0;
    double spmvs = 0.0, v = mi->traffic(k, &spmvs);
    return spmvs * k->op->info.bytes_per_spmv + v;
}
