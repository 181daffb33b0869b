/* SPDX-License-Identifier: MIT */
/* spsolve/core/clock.c: the monotonic wall clock every timing in the library reads */
#include "internal.h"

#if SPS_HAVE_CUDA
#include "gpu.h"
#endif

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

sps_status sps__time_calls(sps_context *ctx, int device, sps_timed_fn fn, void *arg, int warmup, int reps,
                           double *us)
{
    sps_status st = SPS_OK;
    for (int k = 0; st == SPS_OK && k < warmup; k++) st = fn(arg, k);
#if SPS_HAVE_CUDA
    if (device) {
        sps_gpu_timer *timer = NULL;
        if (st == SPS_OK) st = sps__gpu_sync(ctx);
        if (st == SPS_OK) st = sps__timer_create(ctx, &timer);
        for (int k = 0; st == SPS_OK && k < reps; k++) {
            double ms = 0;
            st = sps__timer_start(ctx, timer);
            if (st == SPS_OK) st = fn(arg, k);
            if (st == SPS_OK) st = sps__timer_stop(ctx, timer, &ms);
            us[k] = ms * 1000.0;
        }
        sps__timer_destroy(timer);
        return st;
    }
#else
    (void)ctx;
    (void)device;
#endif
    for (int k = 0; st == SPS_OK && k < reps; k++) {
        double t0 = sps__now_ms();
        st = fn(arg, k);
        us[k] = (sps__now_ms() - t0) * 1000.0;
    }
    return st;
}
