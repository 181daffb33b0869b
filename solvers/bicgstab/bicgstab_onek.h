/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/bicgstab/bicgstab_onek.h: the launchers of BiCGSTAB's
 * one-kernel engine (bicgstab_onek.cuh), one instantiation a translation unit
 * (solvers/bicgstab/onek/). CUDA loads a module whole at the first launch of
 * one of its kernels, and the ten instantiations (40-59 KB of sm_90 code
 * each) were most of bicgstab_kernels.cu's module, which every BiCGSTAB solve
 * loaded (H100, a fresh context: 0.56-0.64 ms, doc/solvers.md); now a one-kernel
 * solve loads the one it runs. CUDA C++ (included by .cu files only). A
 * launcher returns 1 when it launched, 0 when its shared memory does not fit
 * (the global layout always launches). */
#ifndef SPS_BICGSTAB_ONEK_H
#define SPS_BICGSTAB_ONEK_H

#include "bicgstab.h"
#include <cuda_runtime.h>

typedef int (*sps_bicg_onek_fn)(cudaStream_t s, const sps_bicg_onek *a);

/* X(name): registers with 1, 2 or 4 rows a thread, then the vectors in
 * shared or global memory; plain, then Jacobi fused */
#define SPS_BICG_ONEK_LIST(X) \
    X(sps__bicg_onek_regs1) \
    X(sps__bicg_onek_regs1_jac) \
    X(sps__bicg_onek_regs2) \
    X(sps__bicg_onek_regs2_jac) \
    X(sps__bicg_onek_regs4) \
    X(sps__bicg_onek_regs4_jac) \
    X(sps__bicg_onek_shared) \
    X(sps__bicg_onek_shared_jac) \
    X(sps__bicg_onek_global) \
    X(sps__bicg_onek_global_jac) \

#define SPS_BICG_ONEK_DECL(name) extern "C" int name(cudaStream_t s, const sps_bicg_onek *a);
SPS_BICG_ONEK_LIST(SPS_BICG_ONEK_DECL)

#endif /* SPS_BICGSTAB_ONEK_H */
