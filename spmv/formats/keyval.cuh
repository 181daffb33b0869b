/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/formats/keyval.cuh: the (row, partial sum) pair and its
 * reduce-by-key operator, for the block scans of merge.cu and coo.cu that
 * combine the partial sums of rows crossing thread boundaries. */
#ifndef SPS_SPMV_KEYVAL_CUH
#define SPS_SPMV_KEYVAL_CUH

#include "core/internal.h"

/* A partial sum of one row. */
template <typename T>
struct sps_keyval {
    sps_idx key;
    T val;
};

/* Reduce by key: sums of the same row add, a new row starts over. Associative. */
template <typename T>
struct sps_keyval_add {
    __device__ __forceinline__ sps_keyval<T> operator()(const sps_keyval<T> &a,
                                                        const sps_keyval<T> &b) const
    {
        sps_keyval<T> r;
        r.key = b.key;
        r.val = a.key == b.key ? a.val + b.val : b.val;
        return r;
    }
};

#endif
