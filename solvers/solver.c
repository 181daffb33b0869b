/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/solver.c: the solver object, its settings, and the method
 * names (through the registry, registry.c). */
#include "engine.h"

#include <math.h>
#include <string.h>

/* ---- names ---------------------------------------------------------------- */

static const sps_method_entry *by_id(int m)
{
    for (int i = 0; i < sps__method_count(); i++)
        if (sps__method_at(i)->impl->id == m) return sps__method_at(i);
    return NULL;
}

const char *sps_method_name(sps_method m)
{
    if (m == SPS_METHOD_AUTO) return "auto";
    const sps_method_entry *e = m >= 0 ? by_id((int)m) : NULL;
    return e ? e->impl->name : "?";
}

sps_status sps_method_from_name(const char *name, sps_method *m)
{
    if (!name || !m) return sps__err(NULL, SPS_ERR_INVALID_ARG, "NULL argument");
    if (sps__name_eq(name, strlen(name), "auto")) {
        *m = SPS_METHOD_AUTO;
        return SPS_OK;
    }
    const sps_method_entry *e = sps__method_find(name, strlen(name));
    if (!e || e->impl->id < 0)
        return sps__err(NULL, SPS_ERR_INVALID_ARG, "unknown method '%s' (auto, cg, bicgstab, gmres, idr)", name);
    *m = (sps_method)e->impl->id;
    return SPS_OK;
}

/* ---- the solver object ---------------------------------------------------- */

sps_status sps_solver_create(sps_context *ctx, sps_solver **s)
{
    if (!ctx || !s) return sps__err(ctx, SPS_ERR_INVALID_ARG, "sps_solver_create: NULL argument");
    *s = sps__calloc(1, sizeof **s);
    if (!*s) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_solver_create: out of memory");
    sps_solver *v = *s;
    v->ctx = ctx;
    v->method = by_id(SPS_CG);
    v->cfg.rtol = 1e-8;
    v->cfg.atol = 0;
    v->cfg.dtol = 1e5;
    v->cfg.maxit = 10000;
    v->cfg.restart = 30;
    v->engine = -1;
    return SPS_OK;
}

void sps__solver_free_block(sps_solver *s)
{
    if (s->blk) s->blk_ops->free(s->blk);
    s->blk = NULL;
    s->blk_bytes = 0;
    s->blk_ops = NULL;
}

void sps_solver_destroy(sps_solver *s)
{
    if (!s) return;
    sps__solver_free_block(s);
    sps__free(s->hist);
    sps__free(s);
}

#define SETTER_CHECK(s, cond, ...)                                                  \
    do {                                                                           \
        if (!(s)) return sps__err(NULL, SPS_ERR_INVALID_ARG, "solver is NULL");    \
        if (!(cond)) return sps__err((s)->ctx, SPS_ERR_INVALID_ARG, __VA_ARGS__);  \
    } while (0)

sps_status sps_solver_set_method(sps_solver *s, sps_method m)
{
    const sps_method_entry *e = m >= 0 ? by_id((int)m) : NULL;
    SETTER_CHECK(s, m != SPS_METHOD_AUTO,
                 "SPS_METHOD_AUTO is not a method a solver runs: pass \"auto\" to sps_solve_strategy");
    SETTER_CHECK(s, e != NULL, "unknown method %d", (int)m);
    s->method = e;
    return SPS_OK;
}

typedef struct param_ctx {
    const sps_method_impl *mi;
    sps_kcfg *cfg;
} param_ctx;

static sps_status one_param(sps_context *ctx, void *user, const char *key, const char *value)
{
    param_ctx *p = user;
    if (!p->mi->param)
        return sps__err(ctx, SPS_ERR_INVALID_ARG, "method '%s' takes no parameters (got '%s')",
                        p->mi->name, key);
    return p->mi->param(ctx, p->cfg, key, value);
}

sps_status sps_solver_set_method_name(sps_solver *s, const char *spec)
{
    SETTER_CHECK(s, spec != NULL, "sps_solver_set_method_name: NULL name");
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    const sps_method_entry *e = sps__method_find(spec, len);
    if (!e) {
        char names[256] = "";
        for (int i = 0; i < sps__method_count(); i++) {
            if (i) strncat(names, ", ", sizeof names - strlen(names) - 1);
            strncat(names, sps__method_at(i)->impl->name, sizeof names - strlen(names) - 1);
        }
        return sps__err(s->ctx, SPS_ERR_INVALID_ARG, "unknown method '%.*s' (%s)", (int)len, spec,
                        names);
    }
    sps_kcfg cfg = s->cfg;
    param_ctx p = {e->impl, &cfg};
    if (colon) {
        sps_status st = sps__parse_params(s->ctx, colon + 1, one_param, &p);
        if (st != SPS_OK) return st;
    }
    s->method = e;
    s->cfg = cfg;
    return SPS_OK;
}

sps_status sps_solver_set_rtol(sps_solver *s, double v)
{
    SETTER_CHECK(s, v >= 0 && v < INFINITY, "rtol must be finite and >= 0 (got %g)", v);
    s->cfg.rtol = v;
    return SPS_OK;
}

sps_status sps_solver_set_atol(sps_solver *s, double v)
{
    SETTER_CHECK(s, v >= 0 && v < INFINITY, "atol must be finite and >= 0 (got %g)", v);
    s->cfg.atol = v;
    return SPS_OK;
}

sps_status sps_solver_set_dtol(sps_solver *s, double v)
{
    SETTER_CHECK(s, v > 0, "dtol must be > 0 (got %g)", v);
    s->cfg.dtol = v;
    return SPS_OK;
}

sps_status sps_solver_set_maxit(sps_solver *s, int64_t v)
{
    SETTER_CHECK(s, v >= 0 && v < ((int64_t)1 << 53), "maxit must be >= 0 (got %lld)", (long long)v);
    s->cfg.maxit = v;
    return SPS_OK;
}

sps_status sps_solver_set_restart(sps_solver *s, int v)
{
    SETTER_CHECK(s, v >= 1, "restart must be >= 1 (got %d)", v);
    s->cfg.restart = v;
    return SPS_OK;
}

sps_status sps_solver_set_stagnation(sps_solver *s, int on)
{
    if (!s) return sps__err(NULL, SPS_ERR_INVALID_ARG, "solver is NULL");
    s->cfg.no_stagnation = !on;
    return SPS_OK;
}

sps_status sps_solver_set_history(sps_solver *s, int on)
{
    if (!s) return sps__err(NULL, SPS_ERR_INVALID_ARG, "solver is NULL");
    s->history = on != 0;
    return SPS_OK;
}

sps_status sps_solver_set_check_interval(sps_solver *s, int k)
{
    SETTER_CHECK(s, k >= 0, "check interval must be >= 0 (got %d)", k);
    s->check = k;
    return SPS_OK;
}

sps_status sps_solver_set_monitor(sps_solver *s, sps_monitor_fn fn, void *user)
{
    if (!s) return sps__err(NULL, SPS_ERR_INVALID_ARG, "solver is NULL");
    s->mon = fn;
    s->mon_user = user;
    return SPS_OK;
}

sps_status sps_solver_set_engine(sps_solver *s, const char *engine)
{
    int e = engine && *engine ? sps__engine_parse(engine) : -1;
    SETTER_CHECK(s, e >= 0 || !engine || !*engine,
                 "unknown engine '%s' (auto, classic, graph, onekernel, fused)", engine);
    s->engine = e;
    return SPS_OK;
}

sps_status sps_solver_set_monitor_stop(sps_solver *s, sps_monitor_stop_fn fn, void *user)
{
    if (!s) return sps__err(NULL, SPS_ERR_INVALID_ARG, "solver is NULL");
    s->mon_stop = fn;
    s->mon_stop_user = user;
    return SPS_OK;
}
