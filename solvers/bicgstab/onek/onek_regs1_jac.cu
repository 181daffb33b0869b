/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/onek/onek_regs1_jac.cu: k_bicg_onek_regs<true, 1> (1 row a thread in registers, Jacobi fused)
 * in a module of its own (bicgstab_onek.h) */
#include "../bicgstab_onek.cuh"

SPS_BICG_ONEK_REGS_DEFINE(sps__bicg_onek_regs1_jac, true, 1)
