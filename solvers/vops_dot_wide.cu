/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/vops_dot_wide.cu: the dot products of 4 to SPS_K_NSUM sums
 * in a module of their own (vops_dot.cuh says why) */
#include "vops_dot.cuh"

extern "C" void sps__vops_dot_wide(cudaStream_t s, unsigned grid, int ns, int n, const double *const *a,
                                   const double *const *b, const sps_kstate *st, int gated, double *part)
{
    const dot_args d = sps__dot_args(ns, a, b);
    switch (ns) {
    case 4: k_dot<4><<<grid, TPB, 0, s>>>(n, d, st, gated, part); break;
    case 5: k_dot<5><<<grid, TPB, 0, s>>>(n, d, st, gated, part); break;
    case 6: k_dot<6><<<grid, TPB, 0, s>>>(n, d, st, gated, part); break;
    case 7: k_dot<7><<<grid, TPB, 0, s>>>(n, d, st, gated, part); break;
    default: k_dot<8><<<grid, TPB, 0, s>>>(n, d, st, gated, part); break;
    }
}
