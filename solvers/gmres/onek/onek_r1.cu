/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/onek_r1.cu: k_gm_onekernel<false, 1> (1 row a thread) in a
 * module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_ONEK_DEFINE(sps__gm_onek_r1, false, 1)
