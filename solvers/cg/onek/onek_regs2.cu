/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/cg/onek/onek_regs2.cu: k_cg_onekernel<false, OK_REGS2> (2 rows a thread in registers) in a module
 * of its own (cg_onek.h) */
#include "../cg_onek.cuh"

SPS_CG_ONEK_DEFINE(sps__cg_onek_regs2, false, OK_REGS2)
