/* SPDX-License-Identifier: MIT */
/* spsolve/core/clock.c: the monotonic wall clock every timing in the library reads */
#include "internal.h"

#include <time.h>

double sps__now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
