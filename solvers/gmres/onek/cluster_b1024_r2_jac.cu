/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/cluster_b1024_r2_jac.cu: k_gm_cluster<true, 1024, 2> (blocks of 1024 threads,
 * 2 rows a thread, Jacobi fused) in a module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_CLUSTER_DEFINE(sps__gm_cluster_b1024_r2_jac, true, 1024, 2)
