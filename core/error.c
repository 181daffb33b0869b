/* SPDX-License-Identifier: MIT */
/* spsolve/core/error.c: status and reason names, error messages (the allocator
 * is in core/alloc.c, the clock in core/clock.c, the version in core/version.c) */
#include "internal.h"

#include <stdio.h>
#include <string.h>

const char *sps_strerror(sps_status st)
{
    switch (st) {
    case SPS_OK: return "success";
    case SPS_ERR_INVALID_ARG: return "invalid argument";
    case SPS_ERR_IO: return "I/O error";
    case SPS_ERR_PARSE: return "parse error";
    case SPS_ERR_NO_MEMORY: return "out of memory";
    case SPS_ERR_CUDA: return "CUDA error";
    case SPS_ERR_NO_DEVICE: return "no CUDA device";
    case SPS_ERR_NOT_COMPILED: return "not compiled in";
    case SPS_ERR_UNSUPPORTED: return "unsupported";
    case SPS_ERR_ZERO_PIVOT: return "zero pivot";
    case SPS_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *sps_reason_str(sps_reason r)
{
    switch (r) {
    case SPS_ITERATING: return "iterating";
    case SPS_CONVERGED_RTOL: return "converged (rtol)";
    case SPS_CONVERGED_ATOL: return "converged (atol)";
    case SPS_CONVERGED_ZERO_RHS: return "converged (zero right-hand side)";
    case SPS_DIVERGED_MAXIT: return "not converged (maxit reached)";
    case SPS_DIVERGED_DTOL: return "diverged (residual grew past dtol)";
    case SPS_DIVERGED_BREAKDOWN: return "breakdown";
    case SPS_DIVERGED_INDEFINITE: return "indefinite matrix (p'Ap <= 0)";
    case SPS_DIVERGED_INDEFINITE_PC: return "indefinite preconditioner (r'z <= 0)";
    case SPS_DIVERGED_NAN: return "NaN or Inf in the residual";
    case SPS_DIVERGED_STAGNATION: return "stagnation";
    case SPS_DIVERGED_TRUE_RESIDUAL: return "not converged (the true residual fails the tolerance)";
    case SPS_DIVERGED_USER: return "stopped by the monitor";
    }
    return "unknown reason";
}

/* ---- messages ---------------------------------------------------------- */

static _Thread_local char tls_msg[1024];

sps_status sps__verr(sps_context *ctx, sps_status st, const char *fmt, va_list ap)
{
    vsnprintf(tls_msg, sizeof tls_msg, fmt, ap);
    if (ctx) memcpy(ctx->msg, tls_msg, sizeof ctx->msg);
    return st;
}

sps_status sps__err(sps_context *ctx, sps_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sps__verr(ctx, st, fmt, ap);
    va_end(ap);
    return st;
}

void sps__err_prefix(sps_context *ctx, const char *prefix)
{
    char tmp[2 * sizeof tls_msg];
    snprintf(tmp, sizeof tmp, "%.200s: %.1000s", prefix, ctx ? ctx->msg : tls_msg);
    sps__strlcpy(tls_msg, tmp, sizeof tls_msg);
    if (ctx) sps__strlcpy(ctx->msg, tmp, sizeof ctx->msg);
}

const char *sps_last_error(const sps_context *ctx)
{
    return ctx ? ctx->msg : tls_msg;
}

/* ---- strings ----------------------------------------------------------- */

void sps__strlcpy(char *dst, const char *src, size_t n)
{
    if (n == 0) return;
    size_t i = 0;
    for (; i + 1 < n && src[i]; i++) dst[i] = src[i];
    dst[i] = 0;
}
