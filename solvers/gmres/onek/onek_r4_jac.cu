/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/onek_r4_jac.cu: k_gm_onekernel<true, 4> (4 rows a thread, Jacobi fused) in a
 * module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_ONEK_DEFINE(sps__gm_onek_r4_jac, true, 4)
