/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/krylov.h: what the method drivers (cg.c, bicgstab.c,
 * gmres.c) and the common solve loop (solve.c) share.
 *
 * A method is a table: how many work vectors it needs, its start (after
 * r0 = b - A x0 and ||r0|| are known), one iteration, and two optional hooks
 * for methods whose iterations come in cycles (GMRES). solve.c owns
 * everything else: checks, workspace, the initial and final residuals, the
 * batches of k iterations between host checks, the monitor, the info. */
#ifndef SPS_KRYLOV_H
#define SPS_KRYLOV_H

#include "../precond/precond.h"
#include "../spmv/backend.h"
#include "vops.h"

/* How the preconditioner is applied. */
enum { SPS_PCM_NONE = 0, SPS_PCM_JACOBI = 1, SPS_PCM_APPLY = 2 };

#define SPS_KR_MAXVEC 8

typedef struct sps_krylov {
    sps_kws w;
    const sps_vops *ops;
    sps_operator *op;
    sps_precond *pc;      /* NULL when pcmode is NONE */
    int pcmode;
    const double *dinv;   /* Jacobi: fused into the vector updates */
    const double *b;      /* in the vectors' memory space */
    double *x;
    double *r;            /* where r0 = b - A x0 goes (set by the method's bind) */
    double *scratch;      /* free after the iterations: the true residual goes here */
    double *vec[SPS_KR_MAXVEC];
    int64_t spmvs, pc_applies;
    int64_t replacements; /* residual replacements (solve.c: true_residual) */
    int64_t inner;        /* GMRES: Arnoldi steps enqueued in the current cycle */
    const double *b_in;   /* b before any rescaling */
    double *bs;           /* 2^sexp b when the solve rescaled (allocated then) */
    int bs_gpu;
    int64_t sexp;         /* b and x0 were scaled by 2^sexp (0: not rescaled) */
    sps_kstate init;      /* the state a solve starts from */
} sps_krylov;

typedef struct sps_method_impl {
    /* Work vectors of length n for a preconditioner mode. */
    int (*nvec)(int pcmode);
    /* Point k->r and k->scratch into k->vec once it is carved. */
    void (*bind)(sps_krylov *k);
    /* Enqueue what follows r0 and its norm (the state has rho = r0'r0). */
    sps_status (*start)(sps_krylov *k);
    /* Enqueue iteration j (1-based, counted by the host). */
    sps_status (*iterate)(sps_krylov *k, int64_t j);
    /* Most iterations the next batch may hold (NULL: no limit). */
    int64_t (*room)(const sps_krylov *k);
    /* After each host check (NULL: nothing). */
    sps_status (*checked)(sps_krylov *k, const sps_kstate *st);
} sps_method_impl;

extern const sps_method_impl sps__method_cg;
extern const sps_method_impl sps__method_bicgstab;
extern const sps_method_impl sps__method_gmres;

/* y = A x (counted). */
sps_status sps__kr_spmv(sps_krylov *k, const double *x, double *y);
/* r = b - A x (counted). */
sps_status sps__kr_resid(sps_krylov *k, double *r);
/* z = M^-1 r (counted): Jacobi through the ops, others through pc->apply. */
sps_status sps__kr_prec(sps_krylov *k, const double *r, double *z);

#endif /* SPS_KRYLOV_H */
