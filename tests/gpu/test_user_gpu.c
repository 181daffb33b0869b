/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_user_gpu.c: user operators and preconditioners on a
 * GPU context: the callbacks receive device pointers (they wrap a library
 * operator and preconditioner, unit/user_cases.h) and a solve through them
 * matches the library objects' own (bitwise for the operator). Without a
 * device (or without CUDA) it prints one SKIP line. */
#include "check.h"
#include "internal.h"

#if SPS_HAVE_CUDA
#include "unit/user_cases.h"

int main(void)
{
    sps_context *ctx = t_gpu_context_or_skip("user operator and preconditioner on the GPU");
    if (!ctx) return t_done();
    user_cases(ctx, "gpu");
    sps_context_destroy(ctx);
    return t_done();
}
#else
int main(void)
{
    t_skip("user operator and preconditioner on the GPU", "built without CUDA");
    return t_done();
}
#endif
