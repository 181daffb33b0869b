/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/gmres_onek.h: the launchers of GMRES's one-kernel
 * and cluster kernels (gmres_onek.cuh), one instantiation a translation unit
 * (solvers/gmres/onek/). CUDA loads a module whole at the first launch of one
 * of its kernels: the twenty instantiations (80-390 KB of sm_90 code each)
 * made gmres_kernels.cu's module 3.5 MB, which every GMRES solve loaded (H100,
 * a fresh context: 2.9-3.4 ms, doc/solvers.md); now a solve loads the one it runs.
 * CUDA C++ (included by .cu files only). Each launcher returns what the
 * template returns: go_launch 1 launched, 0 cannot run here (the shared
 * memory does not fit); gc_launch 1, 0, or -1 the launch failed (*ce). */
#ifndef SPS_GMRES_ONEK_H
#define SPS_GMRES_ONEK_H

#include "gmres.h"
#include <cuda_runtime.h>

typedef int (*sps_gm_onek_fn)(cudaStream_t s, int n, int m, int j0, const sps_dev_rows *A, const sps_gm_ws *g,
                              const double *dinv, sps_kstate *st, sps_gm_state *gs, double *hist, int cycles,
                              double *xv, const double *bv);
typedef int (*sps_gm_cluster_fn)(cudaStream_t s, int C, int n, int m, int j0, int L, const sps_dev_rows *A,
                                 const sps_gm_ws *g, const double *dinv, sps_kstate *st, sps_gm_state *gs,
                                 double *hist, cudaError_t *ce, int cycles, double *xv, const double *bv);

/* X(name, JAC, R): k_gm_onekernel<JAC, R>, R rows a thread */
#define SPS_GM_ONEK_LIST(X) \
    X(sps__gm_onek_r1, false, 1) \
    X(sps__gm_onek_r1_jac, true, 1) \
    X(sps__gm_onek_r2, false, 2) \
    X(sps__gm_onek_r2_jac, true, 2) \
    X(sps__gm_onek_r4, false, 4) \
    X(sps__gm_onek_r4_jac, true, 4) \
    X(sps__gm_onek_r8, false, 8) \
    X(sps__gm_onek_r8_jac, true, 8) \

/* X(name, JAC, B, R): k_gm_cluster<JAC, B, R>, B threads a block, R rows a thread */
#define SPS_GM_CLUSTER_LIST(X) \
    X(sps__gm_cluster_b256, false, 256, 1) \
    X(sps__gm_cluster_b256_jac, true, 256, 1) \
    X(sps__gm_cluster_b512, false, 512, 1) \
    X(sps__gm_cluster_b512_jac, true, 512, 1) \
    X(sps__gm_cluster_b1024, false, 1024, 1) \
    X(sps__gm_cluster_b1024_jac, true, 1024, 1) \
    X(sps__gm_cluster_b1024_r2, false, 1024, 2) \
    X(sps__gm_cluster_b1024_r2_jac, true, 1024, 2) \
    X(sps__gm_cluster_b1024_r4, false, 1024, 4) \
    X(sps__gm_cluster_b1024_r4_jac, true, 1024, 4) \
    X(sps__gm_cluster_b1024_r8, false, 1024, 8) \
    X(sps__gm_cluster_b1024_r8_jac, true, 1024, 8) \

#define SPS_GM_ONEK_DECL(name, jac, r)                                                            \
    extern "C" int name(cudaStream_t s, int n, int m, int j0, const sps_dev_rows *A, const sps_gm_ws *g, \
                        const double *dinv, sps_kstate *st, sps_gm_state *gs, double *hist, int cycles, \
                        double *xv, const double *bv);
#define SPS_GM_CLUSTER_DECL(name, jac, b, r)                                                      \
    extern "C" int name(cudaStream_t s, int C, int n, int m, int j0, int L, const sps_dev_rows *A, \
                        const sps_gm_ws *g, const double *dinv, sps_kstate *st, sps_gm_state *gs, \
                        double *hist, cudaError_t *ce, int cycles, double *xv, const double *bv);
SPS_GM_ONEK_LIST(SPS_GM_ONEK_DECL)
SPS_GM_CLUSTER_LIST(SPS_GM_CLUSTER_DECL)

/* The profiling instantiations k_gm_cluster<false, B, 1, true> (gmres.h
 * sps_gm_prof), in modules of their own: loaded only when a profile runs. */
typedef int (*sps_gm_cluster_prof_fn)(cudaStream_t s, int C, int n, int m, int j0, int L, const sps_dev_rows *A,
                                      const sps_gm_ws *g, sps_kstate *st, sps_gm_state *gs, double *hist,
                                      cudaError_t *ce, long long *buf, int cap);
#define SPS_GM_CLUSTER_PROF_DECL(name)                                                            \
    extern "C" int name(cudaStream_t s, int C, int n, int m, int j0, int L, const sps_dev_rows *A, \
                        const sps_gm_ws *g, sps_kstate *st, sps_gm_state *gs, double *hist,       \
                        cudaError_t *ce, long long *buf, int cap);
SPS_GM_CLUSTER_PROF_DECL(sps__gm_cluster_b256_prof)
SPS_GM_CLUSTER_PROF_DECL(sps__gm_cluster_b512_prof)

#endif /* SPS_GMRES_ONEK_H */
