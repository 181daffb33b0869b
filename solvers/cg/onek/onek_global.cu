/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/onek/onek_global.cu: k_cg_onekernel<false, OK_GLOBAL> (the vectors in global memory) in a module
 * of its own (cg_onek.h) */
#include "../cg_onek.cuh"

SPS_CG_ONEK_DEFINE(sps__cg_onek_global, false, OK_GLOBAL)
