/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/onek/onek_regs2.cu: k_bicg_onek_regs<false, 2> (2 rows a thread in registers)
 * in a module of its own (bicgstab_onek.h) */
#include "../bicgstab_onek.cuh"

SPS_BICG_ONEK_REGS_DEFINE(sps__bicg_onek_regs2, false, 2)
