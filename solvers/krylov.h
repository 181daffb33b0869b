/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/krylov.h: what the methods (solvers/<method>/) and the
 * common solve loop (solve.c) share.
 *
 * A method is a table (sps_method_impl): its name and capabilities, its
 * parameters, its workspace needs, its initial scalar state, its start (after
 * r0 = b - A x0 and ||r0|| are known), one iteration, and two optional hooks
 * for methods whose iterations come in cycles (GMRES). It is registered by one
 * line in registry.c. solve.c owns everything else: checks, workspace, the
 * initial and final residuals, the batches of k iterations between host
 * checks, the monitor, the info. */
#ifndef SPS_KRYLOV_H
#define SPS_KRYLOV_H

#include "../precond/precond.h"
#include "../spmv/backend.h"
#include "vops.h"

/* How the preconditioner is applied. */
enum { SPS_PCM_NONE = 0, SPS_PCM_JACOBI = 1, SPS_PCM_APPLY = 2 };

#define SPS_KR_MAXVEC 8   /* work vectors of length n */
#define SPS_KR_MAXPIECE 9 /* further arrays */
#define SPS_KR_MSTATE 256 /* most bytes of a method's scalar state */
#define SPS_KR_NOPT 4     /* method-defined numeric options */
#define SPS_KR_NGRAPH 7   /* graph engine: batches of 1, 2, 4, ..., 64 iterations */

/* The solver's settings a method may read (and its parameters may set). */
typedef struct sps_kcfg {
    double rtol, atol, dtol;
    int64_t maxit;
    int restart;              /* restart length of methods that restart (GMRES) */
    int no_stagnation;        /* sps_solver_set_stagnation(s, 0): no stagnation stop */
    double opt[SPS_KR_NOPT];  /* a method's own options (its parameters) */
} sps_kcfg;

/* What a method needs besides the common state: work vectors of length n,
 * further arrays (in doubles), and its scalar state (bytes, <= SPS_KR_MSTATE). */
typedef struct sps_kwork {
    int nvec;
    int npiece;
    size_t piece[SPS_KR_MAXPIECE];
    size_t state_bytes;
    int r, scratch; /* vectors that hold r0 and the true residual (without bind) */
} sps_kwork;

typedef struct sps_krylov {
    sps_kws w;
    const sps_vops *ops;
    const void *mops;     /* the method's own ops table for ops's memory space */
    const sps_kcfg *cfg;
    sps_operator *op;
    sps_precond *pc;      /* NULL when pcmode is NONE */
    int pcmode;
    const double *b;      /* in the vectors' memory space */
    double *x;
    double *r;            /* where r0 = b - A x0 goes (set by the method's bind) */
    double *scratch;      /* free after the iterations: the true residual goes here */
    double *vec[SPS_KR_MAXVEC];
    double *piece[SPS_KR_MAXPIECE];
    sps_kwork work;
    int64_t spmvs, pc_applies;
    int64_t steady_syncs; /* host checks after which the loop went on (solve.c: loop) */
    int64_t replacements; /* residual replacements (solve.c: true_residual) */
    int64_t inner;        /* cycles: steps enqueued in the current cycle (GMRES) */
    const double *b_in;   /* b before any rescaling */
    double *bs;           /* 2^sexp b when the solve rescaled (allocated then) */
    int64_t sexp;         /* b and x0 were scaled by 2^sexp (0: not rescaled) */
    int engine;           /* SPS_ENGINE_* asked for (engine.h) */
    const char *ran;      /* the engine that ran the last batch */
    int onek_cluster;     /* onekernel: the blocks of the thread-block cluster the
                             method's hook ran on (GMRES's k_gm_cluster), 0: one block */
    void *graph[SPS_KR_NGRAPH];    /* graph engine: batches of 2^i iterations (per solve) */
    int64_t gspmv[SPS_KR_NGRAPH], gpc[SPS_KR_NGRAPH]; /* their SpMVs and pc applies */
    int graph_failed;     /* a capture failed: classic from then on */
    void *gwhile;         /* graph engine: the whole loop as a while node (per solve) */
    int64_t gwspmv, gwpc; /* its body's SpMVs and pc applies (SPS_GRAPH_WHILE_LEN iterations) */
    int gwhile_failed;    /* it could not be built: batches from then on */
    sps_kstate init;      /* the state a solve starts from */
    double minit[SPS_KR_MSTATE / sizeof(double)]; /* the method's initial state */
} sps_krylov;

/* Method capabilities. */
#define SPS_KM_SPD     SPS_METHOD_SPD
#define SPS_KM_RESTART SPS_METHOD_RESTART

typedef struct sps_method_impl {
    const char *name;
    int id;               /* its sps_method value, or -1 */
    unsigned caps;        /* SPS_KM_* */
    const char *summary;
    /* A `name:key=value` parameter (NULL: none accepted). */
    sps_status (*param)(sps_context *ctx, sps_kcfg *cfg, const char *key, const char *value);
    /* Workspace needs (k->cfg, k->pcmode and k->w.n are set). */
    void (*work)(const sps_krylov *k, sps_kwork *wk);
    /* The method's scalar state at the start of a solve (zeroed before). */
    void (*init)(const sps_krylov *k, void *ms);
    /* Point k->r and k->scratch into the carved workspace (NULL: they are
     * the vectors work->r and work->scratch). */
    void (*bind)(sps_krylov *k);
    /* Enqueue what follows r0 and its norm (the last reduction's sums: r0'r0). */
    sps_status (*start)(sps_krylov *k);
    /* Enqueue iteration j (1-based, counted by the host). */
    sps_status (*iterate)(sps_krylov *k, int64_t j);
    /* Most iterations the next batch may hold (NULL: no limit). */
    int64_t (*room)(const sps_krylov *k);
    /* After each host check (NULL: nothing). */
    sps_status (*checked)(sps_krylov *k, const sps_kstate *st);
    /* The traffic model (doc/solvers.md, "Iteration engine"): bytes of vector
     * traffic per iteration as implemented, besides the SpMVs' own bytes
     * (which include their input and output vectors); *spmvs gets the SpMVs
     * per iteration. NULL: unknown (no floor is reported). */
    double (*traffic)(const sps_krylov *k, double *spmvs);
    /* The enqueued work of an iteration does not depend on j, so that a
     * captured batch may be replayed (the graph engine, engine.h). */
    int replay;
    /* The one-kernel engine (engine.h): run iterations until the state says
     * stop, in one launch, walking the operator's device rows (CSR or DIA,
     * double; backend.h dev_rows). SPS_ERR_UNSUPPORTED, without an error message: this solve
     * cannot (the loop enqueues classic batches). NULL: never. */
    sps_status (*onekernel)(sps_krylov *k, const sps_dev_rows *rows);
} sps_method_impl;

/* The registry (registry.c): a method with its host and CUDA ops tables. */
typedef struct sps_method_entry {
    const sps_method_impl *impl;
    const void *ops_host;
    const void *ops_cuda; /* NULL in a build without CUDA */
} sps_method_entry;

int sps__method_count(void);
const sps_method_entry *sps__method_at(int i);
/* By name (the part before any ':'), or NULL. */
const sps_method_entry *sps__method_find(const char *name, size_t len);
/* name[0..len) equals known, ignoring ASCII case (method names are matched so). */
int sps__name_eq(const char *name, size_t len, const char *known);

/* The solver object (solver.c: settings; solve.c: sps_solve). */
struct sps_solver {
    sps_context *ctx;
    const sps_method_entry *method;
    sps_kcfg cfg;
    int history, check;
    sps_monitor_fn mon;
    void *mon_user;
    sps_monitor_stop_fn mon_stop; /* sps_solver_set_monitor_stop: nonzero stops */
    void *mon_stop_user;
    double *hist;      /* the history handed out in the info */
    int64_t hist_cap;
    void *blk;         /* workspace kept between solves */
    size_t blk_bytes;
    const sps_vops *blk_ops; /* who allocated it */
    /* The configuration the last GPU warm-up ran (sps_solve): method,
     * preconditioner mode, operator and preconditioner objects. */
    const void *warm_method;
    int warm_pcmode;
    const void *warm_op, *warm_pc;
    int engine;        /* SPS_ENGINE_* (engine.h); -1: SPS_ENGINE from the environment */
    double copy_gbps;  /* host contexts: the floor's copy bandwidth, measured once */
    int floor_later;   /* the strategy's attempts: sps_solve leaves the floor's
                        * bandwidth to sps__solve_floor, after the timed part */
};

/* Free the kept workspace. */
void sps__solver_free_block(sps_solver *s);
/* The traffic floor's bandwidth part of info (copy_gbps, floor_per_iter_ms,
 * floor_fraction) from its bytes_per_iter and per_iter_ms: what sps_solve
 * leaves undone while s->floor_later is set. The first call measures the
 * bandwidth (a GPU context: 64 MiB copies, 1-3 ms with their allocations). */
void sps__solve_floor(sps_solver *s, sps_solve_info *info);

/* y = A x (counted). */
sps_status sps__kr_spmv(sps_krylov *k, const double *x, double *y);
/* y = A x with the partial sums of x'y in k->w.red[0..*nparts-1] (counted):
 * the backend's apply_dot (sps__engine_fused(k) must hold). */
sps_status sps__kr_spmv_dot(sps_krylov *k, const double *x, double *y, int *nparts);
/* r = b - A x (counted). */
sps_status sps__kr_resid(sps_krylov *k, double *r);
/* z = M^-1 r (counted): Jacobi as z = D^-1 .* r, others through pc->apply. */
sps_status sps__kr_prec(sps_krylov *k, const double *r, double *z);
/* The preconditioner's diagonal when it is fused (SPS_PCM_JACOBI), else NULL. */
static inline const double *sps__kr_diag(const sps_krylov *k)
{
    return k->pcmode == SPS_PCM_JACOBI ? k->pc->fused_diag : NULL;
}

#endif /* SPS_KRYLOV_H */
