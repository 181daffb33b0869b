/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/cluster_b512_prof.cu: k_gm_cluster<false, 512, 1, true>, the profiling
 * instantiation (gmres.h sps_gm_prof), in a module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_CLUSTER_PROF_DEFINE(sps__gm_cluster_b512_prof, 512)
