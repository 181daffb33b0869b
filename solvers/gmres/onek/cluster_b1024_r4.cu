/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/cluster_b1024_r4.cu: k_gm_cluster<false, 1024, 4> (blocks of 1024 threads,
 * 4 rows a thread) in a module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_CLUSTER_DEFINE(sps__gm_cluster_b1024_r4, false, 1024, 4)
