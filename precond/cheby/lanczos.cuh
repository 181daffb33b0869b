/* SPDX-License-Identifier: MIT */
/* spsolve/precond/cheby/lanczos.cuh: the Lanczos steps' scalars on the device
 * (the Jacobi-PCG form of cheby.c's lanczos_host), shared by the Chebyshev
 * setup (cheby.cu) and AMG's device setup (amg/amg_dsetup.cu). The steps are
 * queued without a read by the host: each one-thread kernel below updates
 * the state, a step after the stop changes nothing, and the host reads the
 * state once at the end. Between them the includer's kernels and dot
 * products fill rzn (r'z) and pq (p'Ap) and read a, b and stop. Include
 * after the CUDA headers, inside the includer's anonymous namespace. */

/* N: the most steps the includer runs. */
template <int N> struct lz_state {
    double rz, rz0, rzn, pq, a, b;
    double bad_pq; /* p'q of the step that stopped on it */
    double alpha[N], beta[N];
    int m, stop;
};

/* rz = rz0 = r'z (in rzn); stop unless rz0 > 0 */
template <int N> __global__ void lz_start(lz_state<N> *s)
{
    s->rz = s->rz0 = s->rzn;
    s->m = 0;
    s->stop = !(s->rz0 > 0);
}

/* alpha_m = rz / p'q, or stop (keeping p'q) unless p'q > 0 */
template <int N> __global__ void lz_alpha(lz_state<N> *s)
{
    if (s->stop) return;
    if (!(s->pq > 0)) {
        s->bad_pq = s->pq;
        s->stop = 1;
        return;
    }
    s->a = s->alpha[s->m] = __ddiv_rn(s->rz, s->pq);
}

/* beta_m = r'z (new) / rz, m + 1; stop unless r'z > 1e-30 rz0 */
template <int N> __global__ void lz_beta(lz_state<N> *s)
{
    if (s->stop) return;
    s->b = s->beta[s->m] = __ddiv_rn(s->rzn, s->rz);
    s->m++;
    if (!(s->rzn > __dmul_rn(1e-30, s->rz0))) {
        s->stop = 1;
        return;
    }
    s->rz = s->rzn;
}
