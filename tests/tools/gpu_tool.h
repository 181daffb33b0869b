/* SPDX-License-Identifier: MIT */
/* spsolve/tests/tools/gpu_tool.h: the GPU profiling tools' common start
 * (amg_prof, drm_prof): a message naming the tool, and a GPU context with
 * SPEC's matrix (a generator spec NAME:ARGS, else a Matrix Market file)
 * uploaded once, as a solve has it. */
#ifndef SPS_TESTS_GPU_TOOL_H
#define SPS_TESTS_GPU_TOOL_H

#include "spsolve.h"

#include <stdio.h>
#include <string.h>

/* "TOOL: WHAT: the context's last error" on stderr; the exit status 2. */
static inline int tool_fail(const char *tool, sps_context *ctx, const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", tool, what, sps_last_error(ctx));
    return 2;
}

/* *ctx on the GPU and *A read or generated from spec, uploaded: 0, or the
 * tool's exit status after a message (77 without a GPU, 2 on an error). */
static inline int tool_gpu_matrix(const char *tool, const char *spec, sps_context **ctx, sps_matrix **A)
{
    *ctx = NULL;
    *A = NULL;
    if (sps_context_create(ctx, 0) != SPS_OK) {
        fprintf(stderr, "%s: no GPU: %s\n", tool, sps_last_error(NULL));
        return 77;
    }
    sps_status st = strchr(spec, ':') ? sps_matrix_generate(*ctx, spec, A) : sps_matrix_read(*ctx, spec, A);
    if (st != SPS_OK) return tool_fail(tool, *ctx, "matrix");
    if (sps_matrix_upload(*ctx, *A, NULL, NULL) != SPS_OK) return tool_fail(tool, *ctx, "upload");
    return 0;
}

#endif
