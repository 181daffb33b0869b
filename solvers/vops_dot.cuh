/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/vops_dot.cuh: the vector operations' fused dot products
 * (k_dot, NS sums in one pass, partials by put_partials). vops_cuda.cu
 * instantiates 1 to 3 sums, what CG, BiCGSTAB and GMRES launch;
 * vops_dot_wide.cu 4 to SPS_K_NSUM in a module of its own (IDR(s) and the
 * block solves): CUDA loads a module whole at the first launch of one of its
 * kernels, and the wide instantiations were two thirds of vops_cuda.cu's
 * sm_90 code, loaded by every solve. */
#ifndef SPS_VOPS_DOT_CUH
#define SPS_VOPS_DOT_CUH

#include "kernels.cuh"

namespace {

/* The operands of up to SPS_K_NSUM dot products, by value. */
struct dot_args {
    const double *a[SPS_K_NSUM], *b[SPS_K_NSUM];
};

inline dot_args sps__dot_args(int ns, const double *const *a, const double *const *b)
{
    dot_args d = {};
    for (int q = 0; q < ns; q++) d.a[q] = a[q], d.b[q] = b[q];
    return d;
}

template <int NS>
__global__ void __launch_bounds__(TPB) k_dot(int n, dot_args d, const sps_kstate *st, int gated,
                                             double *part)
{
    if (gated && st->stop) return;
    double v[NS];
#pragma unroll
    for (int q = 0; q < NS; q++) v[q] = 0.0;
    GRID_STRIDE(i, n)
    {
#pragma unroll
        for (int q = 0; q < NS; q++) v[q] += d.a[q][i] * d.b[q][i];
    }
    put_partials<NS>(v, part, gridDim.x);
}

} /* namespace */

/* k_dot<ns> for ns = 4 .. SPS_K_NSUM on grid blocks of TPB threads
 * (vops_dot_wide.cu); the caller checks the launch. */
extern "C" void sps__vops_dot_wide(cudaStream_t s, unsigned grid, int ns, int n, const double *const *a,
                                   const double *const *b, const sps_kstate *st, int gated, double *part);

#endif /* SPS_VOPS_DOT_CUH */
