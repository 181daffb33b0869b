/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/onek_r8.cu: k_gm_onekernel<false, 8> (8 rows a thread) in a
 * module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_ONEK_DEFINE(sps__gm_onek_r8, false, 8)
