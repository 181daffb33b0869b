/* SPDX-License-Identifier: MIT */
/* spsolve/precond/cheby/cheby.h: what the Chebyshev preconditioner's host
 * part (cheby.c) and device part (cheby.cu) share. */
#ifndef SPS_CHEBY_H
#define SPS_CHEBY_H

#include "../pc_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SPS_CHEBY_MAX_DEGREE 64
#define SPS_CHEBY_MAX_LANCZOS 200
/* The fused steps walk a CSR operator's rows one thread a row (csr-scalar's
 * way): kept for CSR rows of at most this many entries on average. On an
 * H100 the fused steps on csr-vector rows took poisson3d:100's (7 a row)
 * iterations from 32.4 to 20.2 ms and poisson3d27:60's (27 a row) from 8.0
 * to 16.3 ms. dia's rows always. */
#define SPS_CHEBY_FUSED_CSR_ROW 8

typedef struct sps_cheby_prm {
    int degree;   /* K: SpMVs per apply, p has degree K */
    int lanczos;  /* Lanczos steps for the spectral bounds */
    double ratio; /* > 0: lower bound lmax / ratio instead of the Lanczos one */
    int fused;    /* GPU: 1 (default) one kernel per step on an operator with device
                     rows (cheby_steps.cuh); 0 the SpMV and a vector kernel per step */
} sps_cheby_prm;

/* The preconditioner's data, on the host or on the device (vectors in the
 * context's memory space). */
typedef struct sps_cheby {
    double *dinv;           /* 1 / a_ii */
    double *res, *d;        /* work vectors of the apply */
    sps_operator *op;       /* A's operator: the caller's, or own_op */
    int own_op;
    int degree;
    double gersh;           /* Gershgorin bound of D^-1 A: max_i sum_j |a_ij / a_ii| */
    double ritz_min, ritz_max; /* extreme Ritz values of D^-1 A from the Lanczos steps */
    int steps;              /* Lanczos steps done */
    double lmin, lmax;      /* the interval [a, b] the polynomial is built for */
    double c1[SPS_CHEBY_MAX_DEGREE + 1], c2[SPS_CHEBY_MAX_DEGREE + 1];
    /* step k: d = c1[k] d + c2[k] D^-1 res; z += d (c1[0] = 0) */
} sps_cheby;

/* Entry i of the Lanczos start vector, in [-1, 1): the same on host and device. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline double sps__cheby_start(long long i)
{
    unsigned long long z = (unsigned long long)i * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* From the Jacobi-PCG coefficients alpha[0..m-1], beta[0..m-2] of the
 * Lanczos steps (m >= 1): the Ritz values, the interval and the step
 * coefficients c1, c2. */
void sps__cheby_finish(sps_cheby *c, const sps_cheby_prm *prm, const double *alpha,
                       const double *beta, int m);

/* The message when the Lanczos steps stop at the first one: `what` = v <= 0. */
sps_status sps__cheby_not_spd(sps_precond *pc, const char *what, double v);

#if SPS_HAVE_CUDA
/* Device setup (cheby.cu): host holds dinv (host) and gersh; op the operator
 * (on the device). Fills pc->impl (a device sps_cheby), apply, destroy. */
sps_status sps__cheby_gpu(sps_precond *pc, const sps_cheby *host, sps_operator *op, int own_op);
/* The same with D^-1 already on the device (ddinv, adopted: freed with the
 * preconditioner or on failure); host->gersh and host->degree are read. */
sps_status sps__cheby_gpu_from(sps_precond *pc, const sps_cheby *host, double *ddinv,
                               sps_operator *op, int own_op);
/* For tests: 1 if pc (a device cheby) applies with the fused steps
 * (cheby_steps.cuh), 0 if with the operator's SpMV and vector kernels. */
int sps__cheby_gpu_fused(const sps_precond *pc);
#endif

#ifdef __cplusplus
}
#endif
#endif
