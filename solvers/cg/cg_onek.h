/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/cg_onek.h: the launchers of CG's one-kernel engine
 * (cg_onek.cuh), one instantiation a translation unit (solvers/cg/onek/).
 * CUDA loads a module whole at the first launch of one of its kernels, and
 * the ten instantiations (26-41 KB of sm_90 code each) were most of
 * cg_kernels.cu's module, which every CG solve loaded (H100, a fresh context:
 * 0.50-0.76 ms, doc/solvers.md); now a one-kernel solve loads the one it runs.
 * CUDA C++ (included by .cu files only). A launcher returns 1 when it
 * launched, 0 when its shared memory does not fit (the global layout always
 * launches). */
#ifndef SPS_CG_ONEK_H
#define SPS_CG_ONEK_H

#include "cg.h"
#include <cuda_runtime.h>

/* The layouts (kernels.cuh ONEK_GLOBAL, ONEK_SHARED, then registers with 1, 2
 * or 4 rows a thread): k_cg_onekernel's MODE. */
enum { OK_GLOBAL = 0, OK_SHARED = 1, OK_REGS1 = 2, OK_REGS2 = 3, OK_REGS4 = 4 };

typedef int (*sps_cg_onek_fn)(cudaStream_t s, int n, const sps_dev_rows *A, double *x, double *r, double *p,
                              double *q, const double *dinv, double *z, sps_kstate *st, sps_cg_state *cs,
                              double *hist, int step);

/* X(name, JAC, MODE) */
#define SPS_CG_ONEK_LIST(X) \
    X(sps__cg_onek_global, false, OK_GLOBAL) \
    X(sps__cg_onek_global_jac, true, OK_GLOBAL) \
    X(sps__cg_onek_shared, false, OK_SHARED) \
    X(sps__cg_onek_shared_jac, true, OK_SHARED) \
    X(sps__cg_onek_regs1, false, OK_REGS1) \
    X(sps__cg_onek_regs1_jac, true, OK_REGS1) \
    X(sps__cg_onek_regs2, false, OK_REGS2) \
    X(sps__cg_onek_regs2_jac, true, OK_REGS2) \
    X(sps__cg_onek_regs4, false, OK_REGS4) \
    X(sps__cg_onek_regs4_jac, true, OK_REGS4) \

#define SPS_CG_ONEK_DECL(name, jac, mode)                                                          \
    extern "C" int name(cudaStream_t s, int n, const sps_dev_rows *A, double *x, double *r, double *p, \
                        double *q, const double *dinv, double *z, sps_kstate *st, sps_cg_state *cs, \
                        double *hist, int step);
SPS_CG_ONEK_LIST(SPS_CG_ONEK_DECL)

#endif /* SPS_CG_ONEK_H */
