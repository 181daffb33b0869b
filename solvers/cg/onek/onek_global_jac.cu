/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/onek/onek_global_jac.cu: k_cg_onekernel<true, OK_GLOBAL> (the vectors in global memory, Jacobi fused) in a module
 * of its own (cg_onek.h) */
#include "../cg_onek.cuh"

SPS_CG_ONEK_DEFINE(sps__cg_onek_global_jac, true, OK_GLOBAL)
