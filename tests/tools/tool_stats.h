/* SPDX-License-Identifier: MIT */
/* spsolve/tests/tools/tool_stats.h: the timing tools' order statistics
 * (amg_prof, analyze_time, drm_prof, mtx_read, mtx_throughput). */
#ifndef SPS_TESTS_TOOL_STATS_H
#define SPS_TESTS_TOOL_STATS_H

#include <stdlib.h>

/* qsort's comparison of doubles, ascending. */
static inline int tool_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of v[0..n) (n >= 1), which it sorts in place. */
static inline double tool_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, tool_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
