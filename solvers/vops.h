/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/vops.h: the generic vector operations the Krylov methods and
 * the solve loop are written over, with a host (vops_host.c) and a CUDA
 * (vops_cuda.cu) implementation. A method's fused operations are its own
 * (solvers/<method>/); only what any method or a distributed layer needs is
 * here: copies, fills, axpby, add, a pointwise product, dot products with any
 * small number of sums, the scaled norm, the state transfer, the history, and
 * the memory operations.
 *
 * The methods only enqueue operations; they never read a scalar. Scalars live
 * in the workspace's state (kstate.h and the method's own struct), in the
 * vectors' memory space. Three kinds of operations:
 *
 *   ungated    copies, fills, products, axpby: they always run.
 *   gated      every operation that changes x, r, p, ... or a scalar first
 *              reads st->stop and does nothing once it is set. This is what
 *              lets the GPU host enqueue k iterations blindly: those past the
 *              stop are no-ops, except SpMVs and preconditioner applications,
 *              which write scratch vectors only.
 *   reductions compute up to SPS_K_NSUM sums, then run a finish step (an
 *              sps_kfin: the common steps of kstate.h, or a method's own) that
 *              turns them into scalars, tests and decisions. The device
 *              reduces in a fixed order (block partials into a fixed array,
 *              then one block), with a grid that depends on n only, so runs
 *              are bitwise repeatable.
 *
 * The host implementation is the executable specification of the CUDA one:
 * the same operations in the same order, plain loops. */
#ifndef SPS_VOPS_H
#define SPS_VOPS_H

#include "../core/internal.h"
#include "kstate.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sps_kws sps_kws;
typedef struct sps_kfin sps_kfin;

/* The workspace the operations act on (carved by solvers/solve.c). */
struct sps_kws {
    sps_context *ctx;
    const struct sps_vops *ops;
    sps_idx n;
    sps_kstate *st;  /* the common state, in the vectors' memory space */
    void *ms;        /* the method's own state, right after it */
    double *hist;    /* maxit + 1 residual norms, or NULL */
    double *red;     /* the ops's reduction scratch (ops->red_len(n) doubles):
                      * host: the last reduction's sums; device: block partials */
    int nsum;        /* sums of the last reduction */
};

/* A finish step: fn runs step `step` on the sums of the last reduction
 * (w->red, w->nsum), in the ops's memory space; aux is the method's (e.g.
 * GMRES's arrays); gated: nothing happens once the solve has stopped. */
struct sps_kfin {
    sps_status (*fn)(sps_kws *w, const sps_kfin *f);
    const void *aux;
    int step;
    int gated;
    int64_t arg;
};

static inline sps_kfin sps__kfin(sps_status (*fn)(sps_kws *, const sps_kfin *), const void *aux,
                                 int step, int gated, int64_t arg)
{
    sps_kfin f;
    f.fn = fn;
    f.aux = aux;
    f.step = step;
    f.gated = gated;
    f.arg = arg;
    return f;
}

typedef struct sps_vops {
    const char *name;
    int device;      /* the vectors live in device memory */

    /* ---- memory --------------------------------------------------------- */
    sps_status (*alloc)(sps_context *ctx, size_t bytes, void **p);
    void (*free)(void *p);
    /* host -> the ops's memory, and back */
    sps_status (*copy_in)(sps_context *ctx, void *dst, const void *src, size_t bytes);
    sps_status (*copy_out)(sps_context *ctx, void *dst, const void *src, size_t bytes);
    /* p is in device memory (the host ops can tell too, to reject one) */
    int (*is_device)(const void *p);
    /* doubles of reduction scratch for length n (w->red) */
    size_t (*red_len)(sps_idx n);

    /* ---- ungated -------------------------------------------------------- */
    /* dst = src */
    sps_status (*copy)(sps_kws *w, double *dst, const double *src);
    /* x = v */
    sps_status (*fill)(sps_kws *w, double *x, double v);
    /* x += z */
    sps_status (*add)(sps_kws *w, double *x, const double *z);
    /* z = d .* r */
    sps_status (*mul)(sps_kws *w, double *z, const double *d, const double *r);
    /* y = a x + b y (b = 0: y = a x, y is not read) */
    sps_status (*axpby)(sps_kws *w, double *y, double a, const double *x, double b);

    /* ---- reductions ----------------------------------------------------- */
    /* s_q = a[q]'b[q] for q < ns (ns <= SPS_K_NSUM); then the finish f. */
    sps_status (*dot)(sps_kws *w, int ns, const double *const *a, const double *const *b,
                      const sps_kfin *f);
    /* ||x|| with scaling: s0 = max |x_i| (SPS_KC_AMAX sets st->nrm_e), then
     * s0 = sum (x_i 2^-nrm_e)^2 and the finish f (SPS_KC_BNORM or SPS_KC_TRUE). */
    sps_status (*nrm2)(sps_kws *w, const double *x, const sps_kfin *f);
    /* The common finish steps (kstate.h: sps__k_common_finish), as an sps_kfin's fn. */
    sps_status (*finish)(sps_kws *w, const sps_kfin *f);

    /* ---- state ---------------------------------------------------------- */
    /* The host check: copy the common state out (on the GPU: one synchronization). */
    sps_status (*get_state)(sps_kws *w, sps_kstate *out);
    /* The common state, and the method's (ms_bytes of ms) when ms != NULL. */
    sps_status (*put_state)(sps_kws *w, const sps_kstate *in, const void *ms, size_t ms_bytes);
    /* The first len entries of the history. */
    sps_status (*get_history)(sps_kws *w, double *out, int64_t len);
} sps_vops;

/* The table of an implementation whose functions are named P_alloc, P_copy, ... */
#define SPS_VOPS_TABLE(P, NAME, DEVICE)                                                     \
    {                                                                                       \
        .name = NAME, .device = DEVICE, .alloc = P##_alloc, .free = P##_free,               \
        .copy_in = P##_copy_in, .copy_out = P##_copy_out, .is_device = P##_is_device,       \
        .red_len = P##_red_len, .copy = P##_copy, .fill = P##_fill, .add = P##_add,         \
        .mul = P##_mul, .axpby = P##_axpby, .dot = P##_dot, .nrm2 = P##_nrm2,               \
        .finish = P##_finish, .get_state = P##_get_state, .put_state = P##_put_state,       \
        .get_history = P##_get_history,                                                     \
    }

extern const sps_vops sps__vops_host;
extern const sps_vops sps__vops_cuda; /* defined only in a CUDA build */
/* The ops of a context: CUDA on a GPU context, else the host's. */
const sps_vops *sps__vops_for(const sps_context *ctx);

/* A method's CUDA table, or NULL in a build without CUDA (the symbol is then
 * neither defined nor referenced). */
#if SPS_HAVE_CUDA
#define SPS_CUDA_TABLE(sym) (&(sym))
#else
#define SPS_CUDA_TABLE(sym) NULL
#endif

#ifdef __cplusplus
}
#endif
#endif /* SPS_VOPS_H */
