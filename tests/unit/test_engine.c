/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_engine.c: the iteration engine's host parts
 * (solvers/engine.h): the engine's names, setter and environment variable,
 * the graph engine's batch lengths, and the traffic model (bytes per
 * iteration, floor, fraction) reported by host solves of each method. */
#include "check.h"
#include "internal.h"
#include "solvers/engine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static sps_context *ctx;

static void test_names(void)
{
    T_OK(sps__engine_parse("classic") == SPS_ENGINE_CLASSIC && sps__engine_parse("graph") == SPS_ENGINE_GRAPH &&
             sps__engine_parse("onekernel") == SPS_ENGINE_ONEKERNEL && sps__engine_parse("fused") == SPS_ENGINE_FUSED &&
             sps__engine_parse("auto") == SPS_ENGINE_AUTO,
         "engine names parse");
    T_OK(sps__engine_parse("fast") == -1 && sps__engine_parse(NULL) == -1 && sps__engine_parse("") == -1,
         "unknown engine names do not parse");
    T_OK(strcmp(sps__engine_name(SPS_ENGINE_ONEKERNEL), "onekernel") == 0 &&
             strcmp(sps__engine_name(7), "classic") == 0,
         "engine names print");
    int64_t in[] = {1, 2, 3, 4, 63, 64, 65, 1000}, out[] = {1, 2, 2, 4, 32, 64, 64, 64};
    int ok = 1;
    for (int i = 0; i < 8; i++) ok &= sps__engine_pow2(in[i]) == out[i];
    T_OK(ok && sps__engine_pow2(0) == 1, "graph batches: the largest power of two <= k, 1 to 64");

    sps_solver *s = NULL;
    T_STATUS(ctx, sps_solver_create(ctx, &s), "solver");
    T_OK(sps_solver_set_engine(s, "bogus") == SPS_ERR_INVALID_ARG &&
             strstr(sps_last_error(ctx), "bogus") != NULL,
         "an unknown engine is rejected, named: %s", sps_last_error(ctx));
    T_OK(sps_solver_set_engine(NULL, "graph") == SPS_ERR_INVALID_ARG, "NULL solver rejected");
    unsetenv("SPS_ENGINE");
    T_OK(sps__engine_of(s) == SPS_ENGINE_AUTO, "auto by default");
    setenv("SPS_ENGINE", "graph", 1);
    T_OK(sps__engine_of(s) == SPS_ENGINE_GRAPH, "SPS_ENGINE=graph when the solver sets none");
    T_STATUS(ctx, sps_solver_set_engine(s, "onekernel"), "set onekernel");
    T_OK(sps__engine_of(s) == SPS_ENGINE_ONEKERNEL, "the solver's engine overrides SPS_ENGINE");
    T_STATUS(ctx, sps_solver_set_engine(s, NULL), "set NULL");
    setenv("SPS_ENGINE", "nonsense", 1);
    T_OK(sps__engine_of(s) == SPS_ENGINE_AUTO, "an unknown SPS_ENGINE is auto");
    unsetenv("SPS_ENGINE");
    setenv("SPS_ONEKERNEL_MAX", "4096", 1);
    T_OK(sps__engine_onek_max() == 4096, "SPS_ONEKERNEL_MAX read");
    setenv("SPS_ONEKERNEL_MAX", "12x", 1);
    T_OK(sps__engine_onek_max() == 16384, "a malformed SPS_ONEKERNEL_MAX is the default 16384");
    unsetenv("SPS_ONEKERNEL_MAX");
    sps_solver_destroy(s);
}

/* Solve poisson2d:N with method spec and preconditioner pcname (NULL: none);
 * check the model's bytes against expect(n, bytes_per_spmv). */
static void model_case(const char *spec, const char *pcname, int N, double spmvs, double vec_n)
{
    char gen[64];
    snprintf(gen, sizeof gen, "poisson2d:%d", N);
    sps_matrix *A = NULL;
    sps_operator *op = NULL;
    sps_solver *s = NULL;
    sps_precond *pc = NULL;
    if (!T_STATUS(ctx, sps_matrix_generate(ctx, gen, &A), "%s", gen)) return;
    int n = sps_matrix_rows(A);
    T_STATUS(ctx, sps_operator_create(ctx, A, "csr-scalar", NULL, &op), "operator");
    T_STATUS(ctx, sps_solver_create(ctx, &s), "solver");
    T_STATUS(ctx, sps_solver_set_method_name(s, spec), "%s", spec);
    T_STATUS(ctx, sps_solver_set_engine(s, "onekernel"), "engine");
    if (pcname) T_STATUS(ctx, sps_precond_create(ctx, A, pcname, &pc), "%s", pcname);
    double *b = malloc((size_t)n * sizeof *b), *x = calloc((size_t)n, sizeof *x);
    for (int i = 0; i < n; i++) b[i] = 1.0 + (double)(i % 7);
    sps_solve_info in;
    char what[128];
    snprintf(what, sizeof what, "%s %s%s%s", gen, spec, pcname ? " + " : "", pcname ? pcname : "");
    if (T_STATUS(ctx, sps_solve(s, op, pc, b, x, &in), "%s: solve", what)) {
        sps_operator_info oi;
        sps_operator_get_info(op, &oi);
        double want = spmvs * oi.bytes_per_spmv + vec_n * 8.0 * n;
        T_OK(in.reason > 0 && in.iterations > 1, "%s: converged (%s, %lld iterations)", what,
             sps_reason_str(in.reason), (long long)in.iterations);
        T_OK(in.engine && strcmp(in.engine, "classic") == 0, "%s: a host context runs classic (%s)", what,
             in.engine ? in.engine : "NULL");
        T_OK(fabs(in.bytes_per_iter - want) <= 1e-9 * want, "%s: %.0f bytes per iteration, model %.0f", what,
             in.bytes_per_iter, want);
        T_OK(in.copy_gbps > 0 && fabs(in.floor_per_iter_ms - in.bytes_per_iter / (in.copy_gbps * 1e6)) <=
                                     1e-12 * in.floor_per_iter_ms,
             "%s: floor %.3g ms = bytes / %.1f GB/s", what, in.floor_per_iter_ms, in.copy_gbps);
        T_OK(in.floor_fraction > 0 &&
                 fabs(in.floor_fraction - in.per_iter_ms / in.floor_per_iter_ms) <= 1e-12 * in.floor_fraction,
             "%s: fraction %.3g = per-iteration time / floor", what, in.floor_fraction);
    }
    free(b), free(x);
    sps_precond_destroy(pc);
    sps_solver_destroy(s);
    sps_operator_destroy(op);
    sps_matrix_destroy(A);
}

static void test_model(void)
{
    model_case("cg", NULL, 20, 1.0, 11.0);
    model_case("cg", "jacobi", 20, 1.0, 13.0);
    model_case("bicgstab", NULL, 20, 2.0, 18.0);
    model_case("bicgstab", "jacobi", 20, 2.0, 23.0);
    /* GMRES(10), one Gram-Schmidt pass: (m+1) + 9 + (m+9)/m vectors, 1 + 1/m SpMVs */
    model_case("gmres:restart=10", NULL, 20, 1.1, 11.0 + 9.0 + 1.9);
    model_case("gmres:restart=10", "jacobi", 20, 1.1, 11.0 + 12.0 + 1.9);
    /* DCGS2: n less a step, the closing pass (m+2)/m, y = U y's m(m-1)/2 doubles a cycle (n = 400) */
    model_case("gmres:restart=10,orth=dcgs2", NULL, 20, 1.1, 11.0 + 9.0 + 1.9 - 1.0 + 1.2 + 4.5 / 400.0);
    model_case("gmres:restart=10,orth=dcgs2", "jacobi", 20, 1.1, 11.0 + 12.0 + 1.9 - 1.0 + 1.2 + 4.5 / 400.0);
}

int main(void)
{
    sps_context_create(&ctx, SPS_DEVICE_HOST);
    test_names();
    test_model();
    sps_context_destroy(ctx);
    return t_done();
}
