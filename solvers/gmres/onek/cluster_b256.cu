/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/cluster_b256.cu: k_gm_cluster<false, 256, 1> (blocks of 256 threads,
 * 1 row a thread) in a module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_CLUSTER_DEFINE(sps__gm_cluster_b256, false, 256, 1)
