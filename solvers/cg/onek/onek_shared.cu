/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/onek/onek_shared.cu: k_cg_onekernel<false, OK_SHARED> (the vectors in shared memory) in a module
 * of its own (cg_onek.h) */
#include "../cg_onek.cuh"

SPS_CG_ONEK_DEFINE(sps__cg_onek_shared, false, OK_SHARED)
