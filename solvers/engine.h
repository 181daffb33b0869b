/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/engine.h: the iteration engines (doc/solvers.md,
 * "Iteration engine") and the traffic model's floor.
 *
 *   classic    the host enqueues each iteration's kernels (solve.c's loop).
 *   graph      the whole loop as one launch of a conditional while node
 *              (no monitor, no check interval), else a batch of 2^i
 *              iterations captured once per solve as a CUDA graph and
 *              replayed; iterations past the stop are no-ops as in
 *              classic, so the result is bitwise classic's. Methods whose
 *              enqueued work does not depend on the iteration number only
 *              (sps_method_impl.replay: CG); a failed capture falls back to classic.
 *   onekernel  the method's onekernel hook runs the whole iteration phase in
 *              one launch (CG, BiCGSTAB: one thread block, the operator's
 *              device rows read directly (CSR or DIA), vectors in shared
 *              memory where they fit); SPS_ERR_UNSUPPORTED from the hook: classic.
 *   fused      classic enqueueing, with the SpMV giving x'Ax in the same pass
 *              where the operator's backend offers apply_dot (CG: p'q).
 *   auto       (the default) onekernel for small systems, else fused, else
 *              classic: sps__engine_resolve.
 * sps_solver_set_engine or SPS_ENGINE choose another. */
#ifndef SPS_ENGINE_H
#define SPS_ENGINE_H

#include "krylov.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SPS_ENGINE_CLASSIC = 0, SPS_ENGINE_GRAPH = 1, SPS_ENGINE_ONEKERNEL = 2, SPS_ENGINE_FUSED = 3,
    SPS_ENGINE_AUTO = 4
};

/* "classic", "graph", "onekernel", "fused", "auto" -> SPS_ENGINE_*, or -1. */
int sps__engine_parse(const char *name);
const char *sps__engine_name(int e);
/* The engine a solver asks for: its own, else SPS_ENGINE from the
 * environment (an unknown value is auto), else auto. */
int sps__engine_of(const sps_solver *s);
/* The engine a solve runs (classic, graph, onekernel or fused): the asked
 * one, or for auto on a GPU the one-kernel path where the method offers one
 * (CG, BiCGSTAB, GMRES within its own bounds) and rows <= SPS_ONEK_AUTO_MAX (no stop monitor, no check interval), else
 * fused where it applies (sps__engine_fused_ok), else classic. Host solves:
 * classic. */
int sps__engine_resolve(const sps_solver *s, const sps_krylov *k);
/* Most rows of the one-kernel path: SPS_ONEKERNEL_MAX, else 16384 when asked
 * by name, SPS_ONEK_AUTO_MAX under auto. */
sps_idx sps__engine_onek_max(void);
/* The operator's device rows in double (backend.h dev_rows): 1 and *out
 * filled when its backend offers them, else 0. */
int sps__engine_rows(const sps_operator *op, sps_dev_rows *out);
/* 1 when auto (or onekernel by name) would run a solve of n rows on op as
 * one kernel, given a method with the path and no or Jacobi preconditioning:
 * the size bound, device rows, no stop monitor, no check interval. The
 * strategy orders its plans by it. */
int sps__engine_onek_auto(const sps_solver *s, const sps_operator *op, sps_idx n);

/* One batch of len iterations starting after iteration it0 with the graph
 * engine (len a power of two <= 2^(SPS_KR_NGRAPH-1)); falls back to classic
 * enqueueing when a capture fails. */
sps_status sps__engine_graph_batch(sps_krylov *k, const sps_method_impl *mi, int64_t it0,
                                   int64_t len);
/* The largest power of two <= batch (at least 1, at most 2^(SPS_KR_NGRAPH-1)). */
int64_t sps__engine_pow2(int64_t batch);
/* Free k's graphs. */
void sps__engine_release(sps_krylov *k);

/* The fused engine runs for k: k->engine is fused (sps__engine_fused_ok). */
int sps__engine_fused(const sps_krylov *k);
/* The fused engine can run for k: on a GPU, and the operator's backend
 * offers apply_dot in double. */
int sps__engine_fused_ok(const sps_krylov *k);

/* The traffic model: bytes per iteration = spmvs * the format's bytes + the
 * method's vector bytes; 0 when the method has no model. */
double sps__engine_bytes(const sps_krylov *k, const sps_method_impl *mi);

/* The graph engine's whole loop (CG without a monitor or a check interval):
 * from after iteration it0 to the state's stop in one launch, a CUDA
 * conditional while node whose body is SPS_GRAPH_WHILE_LEN iterations
 * (captured once per solve). *ran = 0 when it cannot (not replayable, no
 * conditional nodes, the capture failed): the caller goes on with batches.
 * No host wait happens inside it; its SpMVs are counted by the caller from
 * the iterations that ran (sps__engine_graph_while_counts). */
#define SPS_GRAPH_WHILE_LEN 4
sps_status sps__engine_graph_while(sps_krylov *k, const sps_method_impl *mi, int64_t it0,
                                   int64_t maxit, int *ran);
/* After the whole-loop launch and its check: the SpMVs and preconditioner
 * applies of its rounds (iterations it0 + 1 .. iter, rounded up to whole
 * bodies: the last round's no-op iterations past the stop ran too). */
void sps__engine_graph_while_counts(sps_krylov *k, int64_t it0, int64_t iter);

#if SPS_HAVE_CUDA
/* engine_cuda.cu: the conditional while graph (sps__engine_graph_while):
 * begin creates the outer graph and starts capturing its body from the
 * stream; the caller enqueues the body's iterations; end appends the
 * condition (stop == 0 and fewer than cap rounds) and instantiates (non-OK:
 * nothing ran, the stream is usable). */
typedef struct sps_gwhile sps_gwhile;
sps_status sps__graph_while_begin(sps_context *ctx, sps_gwhile **w);
sps_status sps__graph_while_end(sps_context *ctx, sps_gwhile *w, const int64_t *stop, int64_t cap,
                                void **exec);
sps_status sps__graph_while_launch(sps_context *ctx, void *exec);
void sps__graph_while_free(void *exec);
/* engine_cuda.cu: CUDA graphs on the context's stream. begin starts a
 * capture; end stops it and instantiates (non-OK when the capture failed:
 * nothing was run, the stream is usable, *exec is NULL). */
sps_status sps__graph_begin(sps_context *ctx);
sps_status sps__graph_end(sps_context *ctx, void **exec);
sps_status sps__graph_launch(sps_context *ctx, void *exec);
void sps__graph_free(void *exec);
#endif

#ifdef __cplusplus
}
#endif
#endif /* SPS_ENGINE_H */
