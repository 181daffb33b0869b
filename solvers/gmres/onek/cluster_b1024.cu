/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/cluster_b1024.cu: k_gm_cluster<false, 1024, 1> (blocks of 1024 threads,
 * 1 row a thread) in a module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_CLUSTER_DEFINE(sps__gm_cluster_b1024, false, 1024, 1)
