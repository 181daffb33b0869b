/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/measure.c: timing an operator, checking it against the CSR reference, copy bandwidth */
#include "operator.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#endif

enum { WARMUP_CALLS = 3 };

/* splitmix64 -> [-1, 1) */
static double urand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* The operator's vectors: n values in its memory space and precision. */
typedef struct opvec {
    void *p;
    int dev;
} opvec;

static size_t elem_size(const sps_operator *op) { return op->single ? sizeof(float) : sizeof(double); }

static void opvec_free(opvec *v)
{
#if SPS_HAVE_CUDA
    if (v->dev) sps__dfree(v->p);
    else
#endif
        sps__free(v->p);
    v->p = NULL;
}

static sps_status opvec_alloc(sps_operator *op, size_t n, opvec *v)
{
    v->p = NULL;
    v->dev = op->info.on_gpu;
#if SPS_HAVE_CUDA
    if (v->dev) return sps__dmalloc(op->ctx, &v->p, sps__mul_size(n, elem_size(op)));
#endif
    v->p = sps__malloc(sps__mul_size(n, elem_size(op)));
    return v->p ? SPS_OK : sps__err(op->ctx, SPS_ERR_NO_MEMORY, "out of memory for a vector");
}

/* v[off .. off+n) = src (doubles, rounded to float in single precision). */
static sps_status opvec_set(sps_operator *op, opvec *v, size_t off, const double *src, size_t n)
{
    if (n == 0) return SPS_OK;
    if (!v->dev) {
        memcpy((double *)v->p + off, src, n * sizeof *src);
        return SPS_OK;
    }
#if SPS_HAVE_CUDA
    return sps__upload_values(op->ctx, (char *)v->p + off * elem_size(op), src, n, op->single);
#else
    (void)op;
    return SPS_ERR_INTERNAL; /* no device vectors without CUDA */
#endif
}

/* dst = v (as doubles). */
static sps_status opvec_get(sps_operator *op, const opvec *v, double *dst, size_t n)
{
    if (n == 0) return SPS_OK;
    if (!v->dev) {
        memcpy(dst, v->p, n * sizeof *dst);
        return SPS_OK;
    }
#if SPS_HAVE_CUDA
    if (!op->single) return sps__d2h(op->ctx, dst, v->p, n * sizeof *dst);
    float *tmp = sps__malloc(n * sizeof *tmp);
    if (!tmp) return sps__err(op->ctx, SPS_ERR_NO_MEMORY, "out of memory");
    sps_status st = sps__d2h(op->ctx, tmp, v->p, n * sizeof *tmp);
    for (size_t i = 0; st == SPS_OK && i < n; i++) dst[i] = tmp[i];
    sps__free(tmp);
    return st;
#else
    (void)op;
    return SPS_ERR_INTERNAL; /* no device vectors without CUDA */
#endif
}

/* v = NaN everywhere (all bits set is a NaN in float and in double). */
static sps_status opvec_nan(sps_operator *op, opvec *v, size_t n)
{
    if (n == 0) return SPS_OK;
#if SPS_HAVE_CUDA
    if (v->dev) return sps__dmemset(op->ctx, v->p, 0xff, n * elem_size(op));
#endif
    (void)op;
    memset(v->p, 0xff, n * sizeof(double));
    return SPS_OK;
}

/* One SpMV of sps_operator_time: x is the (k mod nx)-th vector. */
typedef struct timed_spmv {
    sps_operator *op;
    const void *xs;
    void *y;
    size_t xbytes;
    int nx;
} timed_spmv;

static sps_status spmv_call(void *arg, int k)
{
    const timed_spmv *a = arg;
    const void *x = a->xs ? (const char *)a->xs + (size_t)(k % a->nx) * a->xbytes : NULL;
    return sps_operator_apply(a->op, 1.0, x, 0.0, a->y);
}

sps_status sps_operator_time(sps_operator *op, int reps, int nx, sps_timing *t)
{
    if (!op || !t) return sps__err(op ? op->ctx : NULL, SPS_ERR_INVALID_ARG, "sps_operator_time: NULL argument");
    if (reps < 1 || nx < 0)
        return sps__err(op->ctx, SPS_ERR_INVALID_ARG,
                        "sps_operator_time: reps = %d, nx = %d (need reps >= 1, nx >= 0)", reps, nx);
    memset(t, 0, sizeof *t);
    if (nx == 0) nx = 4;
    const size_t m = (size_t)op->ncols, n = (size_t)op->nrows;
    double *us = sps__malloc((size_t)reps * sizeof *us);
    double *h = sps__malloc(sps__mul_size(m > 0 ? m : 1, sizeof *h));
    opvec xs = {0}, y = {0};
    sps_status st = (us && h) ? SPS_OK : sps__err(op->ctx, SPS_ERR_NO_MEMORY, "sps_operator_time: out of memory");
    if (st == SPS_OK) st = opvec_alloc(op, sps__mul_size(m, (size_t)nx), &xs);
    if (st == SPS_OK) st = opvec_alloc(op, n, &y);
    uint64_t seed = 42;
    for (int k = 0; st == SPS_OK && k < nx; k++) {
        for (size_t i = 0; i < m; i++) h[i] = urand(&seed);
        st = opvec_set(op, &xs, (size_t)k * m, h, m);
    }
    timed_spmv ts = {op, xs.p, y.p, m * elem_size(op), nx};
    if (st == SPS_OK) st = sps__time_calls(op->ctx, y.dev, spmv_call, &ts, WARMUP_CALLS, reps, us);
    if (st == SPS_OK) sps__timing_summarize(us, reps, t);
    opvec_free(&xs);
    opvec_free(&y);
    sps__free(us);
    sps__free(h);
    return st;
}

sps_status sps_copy_bandwidth(sps_context *ctx, size_t bytes, double *gbps)
{
    if (!ctx || !gbps) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_copy_bandwidth: NULL argument");
    *gbps = 0;
    if (bytes == 0) bytes = (size_t)256 << 20;
#if SPS_HAVE_CUDA
    if (ctx->gpu) return sps__gpu_copy_bandwidth(ctx, bytes, gbps);
#endif
    /* Host: the median of 9 memcpy calls after one warm-up (the statistic
     * of sps__gpu_copy_bandwidth). */
    enum { REPS = 9 };
    if (bytes < ((size_t)64 << 10)) bytes = (size_t)64 << 10; /* too small to time */
    char *a = sps__malloc(bytes), *b = sps__malloc(bytes);
    if (!a || !b) {
        sps__free(a);
        sps__free(b);
        return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_copy_bandwidth: out of memory for 2 x %zu bytes", bytes);
    }
    memset(a, 1, bytes);
    memset(b, 0, bytes);
    double ms[REPS + 1];
    for (int rep = 0; rep <= REPS; rep++) {
        double t0 = sps__now_ms();
        memcpy(b, a, bytes);
        ms[rep] = sps__now_ms() - t0;
        a[rep] = b[bytes - 1 - (size_t)rep]; /* a data dependence: the copy is not elided */
    }
    sps_timing t;
    sps__timing_summarize(ms + 1, REPS, &t); /* unit-agnostic: these are ms */
    double med_ms = t.median_us;
    sps__free(a);
    sps__free(b);
    *gbps = med_ms > 0 ? 2.0 * (double)bytes / (med_ms * 1e6) : 0;
    return SPS_OK;
}

/* |y - yref| / den componentwise; 0/0 = 0, NaN counts as infinite. */
static double max_rel_err(const double *y, const double *yref, const double *den, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs(y[i] - yref[i]), e;
        if (isnan(d)) e = INFINITY;
        else if (d == 0) e = 0;
        else e = den[i] > 0 ? d / den[i] : INFINITY;
        if (e > worst) worst = e;
    }
    return worst;
}

sps_status sps_operator_check(sps_operator *op, const sps_matrix *A, double *max_err,
                              int *repeatable)
{
    if (!op || !A || !max_err || !repeatable)
        return sps__err(op ? op->ctx : NULL, SPS_ERR_INVALID_ARG, "sps_operator_check: NULL argument");
    const sps_csr *M = &A->A;
    if (M->nrows != op->nrows || M->ncols != op->ncols || M->nnz != op->nnz)
        return sps__err(op->ctx, SPS_ERR_INVALID_ARG,
                        "sps_operator_check: the matrix (%d x %d, %d entries) is not the operator's "
                        "(%d x %d, %lld entries)", M->nrows, M->ncols, M->nnz, op->nrows, op->ncols,
                        (long long)op->nnz);
    *max_err = 0;
    *repeatable = 1;
    const size_t n = (size_t)M->nrows, m = (size_t)M->ncols;
    const double alpha = 1.5, betas[2] = {0.0, -0.5};
    /* host: x, y0, s = A x, a = |A||x|, yref, den, out1, out2 */
    double *buf = sps__malloc(sps__mul_size(m + 7 * n + 1, sizeof(double)));
    opvec dx = {0}, dy = {0};
    sps_status st = buf ? SPS_OK : sps__err(op->ctx, SPS_ERR_NO_MEMORY, "sps_operator_check: out of memory");
    if (st == SPS_OK) st = opvec_alloc(op, m, &dx);
    if (st == SPS_OK) st = opvec_alloc(op, n, &dy);
    if (st != SPS_OK) goto done;
    double *x = buf, *y0 = x + m, *s = y0 + n, *a = s + n, *yref = a + n, *den = yref + n,
           *out1 = den + n, *out2 = out1 + n;
    uint64_t seed = 7;
    /* Single precision: the device sees x, y and A rounded to float; the
     * reference below uses the same rounded inputs, in (long) double. */
    for (size_t j = 0; j < m; j++) x[j] = op->single ? (float)urand(&seed) : urand(&seed);
    for (size_t i = 0; i < n; i++) y0[i] = op->single ? (float)urand(&seed) : urand(&seed);
    for (sps_idx r = 0; r < M->nrows; r++) {
        long double sum = 0, abs_sum = 0;
        for (sps_idx p = M->row_ptr[r]; p < M->row_ptr[r + 1]; p++) {
            double v = op->single ? (double)(float)M->val[p] : M->val[p];
            sum += (long double)v * x[M->col_idx[p]];
            abs_sum += fabsl((long double)v * x[M->col_idx[p]]);
        }
        s[r] = (double)sum;
        a[r] = (double)abs_sum;
    }
    st = opvec_set(op, &dx, 0, x, m);
    for (int c = 0; st == SPS_OK && c < 2; c++) {
        double beta = betas[c];
        for (size_t i = 0; i < n; i++) {
            yref[i] = alpha * s[i] + beta * y0[i];
            den[i] = fabs(alpha) * a[i] + fabs(beta * y0[i]);
        }
        for (int run = 0; st == SPS_OK && run < 2; run++) {
            st = beta == 0.0 ? opvec_nan(op, &dy, n) : opvec_set(op, &dy, 0, y0, n);
            if (st == SPS_OK) st = sps_operator_apply(op, alpha, dx.p, beta, dy.p);
            if (st == SPS_OK) st = opvec_get(op, &dy, run ? out2 : out1, n);
        }
        if (st != SPS_OK) break;
        double e = max_rel_err(out1, yref, den, n);
        if (e > *max_err) *max_err = e;
        if (n && memcmp(out1, out2, n * sizeof *out1) != 0) *repeatable = 0;
    }
done:
    opvec_free(&dx);
    opvec_free(&dy);
    sps__free(buf);
    return st;
}
