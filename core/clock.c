/* SPDX-License-Identifier: MIT */
/* spsolve/core/clock.c: the monotonic wall clock every timing in the library reads */
#include "internal.h"

#include <stdlib.h>
#include <time.h>

double sps__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sps__timing_summarize(double *us, int n, sps_timing *t)
{
    qsort(us, (size_t)n, sizeof *us, cmp_double);
    t->min_us = us[0];
    t->max_us = us[n - 1];
    t->median_us = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
    t->reps = n;
}
