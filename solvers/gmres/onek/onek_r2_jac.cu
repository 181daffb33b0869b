/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/onek/onek_r2_jac.cu: k_gm_onekernel<true, 2> (2 rows a thread, Jacobi fused) in a
 * module of its own (gmres_onek.h) */
#include "../gmres_onek.cuh"

SPS_GM_ONEK_DEFINE(sps__gm_onek_r2_jac, true, 2)
