/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/payoff.c: the DRM paper's argument in one function. A format
 * that costs extra_ms more to build than a reference and saves saved_us per
 * SpMV pays for itself after extra_ms / saved_us SpMVs. Every caller (auto's
 * selection, spsolve's summary, spmv-bench's table) uses this one rule. */
#include "core/internal.h"

double sps_break_even_spmvs(double extra_ms, double saved_us)
{
    if (!(saved_us > 0)) return -1.0;  /* not faster: never pays (NaN too) */
    if (!(extra_ms > 0)) return 0.0;   /* cheaper to build and faster */
    return extra_ms * 1e3 / saved_us;
}
