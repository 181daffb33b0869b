/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/cluster_b256_prof.cu: k_gm_cluster<false, 256, 1, true>, the profiling
 * instantiation (gmres.h sps_gm_prof), in a module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_CLUSTER_PROF_DEFINE(sps__gm_cluster_b256_prof, 256)
