/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/padded.h: the memory bound of the formats that store
 * padding (ell, bsr): a layout is refused before its arrays are allocated
 * when its stored slots pass both SPS_PAD_MAX_PER_NNZ per entry plus
 * SPS_PAD_SLACK (hyb's bound for a forced width) and SPS_PAD_MAX_SLOTS (2^27
 * slots: 1 GiB of double values, 0.5 GiB of ELL column indices), so that a
 * matrix with one very long row gets a clear SPS_ERR_UNSUPPORTED, not an
 * out-of-memory crash, while the shared matrices with a few long rows
 * (memplus: 574 of 17758 rows, 10.2M slots) still build and show what the
 * padding costs. */
#ifndef SPS_SPMV_PADDED_H
#define SPS_SPMV_PADDED_H

#include "core/internal.h"

#define SPS_PAD_MAX_PER_NNZ 16
#define SPS_PAD_SLACK ((int64_t)1 << 20)
#define SPS_PAD_MAX_SLOTS ((int64_t)1 << 27)

/* SPS_OK, or SPS_ERR_UNSUPPORTED naming the backend, the layout (what) and
 * the numbers. */
static inline sps_status sps__pad_bound(sps_context *ctx, const char *backend, const char *what,
                                        int64_t slots, int64_t nnz)
{
    if (slots <= SPS_PAD_MAX_PER_NNZ * nnz + SPS_PAD_SLACK || slots <= SPS_PAD_MAX_SLOTS)
        return SPS_OK;
    return sps__err(ctx, SPS_ERR_UNSUPPORTED,
                    "%s: %s would store %lld slots for %lld entries (%.0f MB of values); the "
                    "limit is the larger of %d per entry + %lld and %lld slots", backend, what,
                    (long long)slots, (long long)nnz, 8e-6 * (double)slots, SPS_PAD_MAX_PER_NNZ,
                    (long long)SPS_PAD_SLACK, (long long)SPS_PAD_MAX_SLOTS);
}

#endif
