/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/strategy.h: the automatic plan list of sps_solve_strategy
 * (strategy.c), exposed for the tests. */
#ifndef SPS_STRATEGY_H
#define SPS_STRATEGY_H

#include "spsolve.h"

/* A list may hold more plans than an info records attempts
 * (SPS_MAX_ATTEMPTS): the strategy stops after that many attempts, and the
 * longer list keeps the uncapped plans its capped ones are promoted to (the
 * GPU list of the ILU class has 11: at 10 the uncapped bicgstab+none, the
 * BiCGSTAB probe's promotion, fell off). */
#define SPS_MAX_PLANS 16

typedef struct sps_plan {
    char method[48];   /* method spec, e.g. "gmres:restart=100" */
    char precond[48];  /* preconditioner spec */
    int64_t maxit;     /* > 0: at most this many iterations (a probe); 0: the usual share */
} sps_plan;

/* The plans for a matrix with features f, in order, when the method and the
 * preconditioner are both automatic. basis_bytes is the memory a long GMRES
 * basis may take (0: no limit). gpu: the plans for a GPU context (1: the
 * cheap preconditioners first; 2: also the one-kernel engine's plans first,
 * capped; see strategy.c). Writes why (a short phrase).
 * Returns the count (>= 1). */
int sps__strategy_plans(const sps_features *f, size_t basis_bytes, int gpu, sps_plan *p,
                        char *why, size_t len);

#endif /* SPS_STRATEGY_H */
