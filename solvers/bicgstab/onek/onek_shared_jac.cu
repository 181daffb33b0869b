/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/onek/onek_shared_jac.cu: k_bicg_onekernel<true, true> (the vectors in shared memory, Jacobi fused)
 * in a module of its own (bicgstab_onek.h) */
#include "../bicgstab_onek.cuh"

SPS_BICG_ONEK_WHOLE_DEFINE(sps__bicg_onek_shared_jac, true, true)
