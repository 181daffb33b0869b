/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/onek/onek_shared_jac.cu: k_cg_onekernel<true, OK_SHARED> (the vectors in shared memory, Jacobi fused) in a module
 * of its own (cg_onek.h) */
#include "../cg_onek.cuh"

SPS_CG_ONEK_DEFINE(sps__cg_onek_shared_jac, true, OK_SHARED)
