/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/onek/onek_regs1.cu: k_cg_onekernel<false, OK_REGS1> (1 row a thread in registers) in a module
 * of its own (cg_onek.h) */
#include "../cg_onek.cuh"

SPS_CG_ONEK_DEFINE(sps__cg_onek_regs1, false, OK_REGS1)
