/* SPDX-License-Identifier: MIT */
/* spsolve/dist/dist_impl.h: the distributed objects (dist.c) and what the
 * distributed solve (dsolve.c) uses of them. */
#ifndef SPS_DIST_IMPL_H
#define SPS_DIST_IMPL_H

#include "dist.h"

struct sps_dist {
    sps_context *ctx;
    sps_comm *c;
};

struct sps_dist_operator {
    sps_dist *d;
    sps_halo h;
    const sps_dvops *ops; /* where the vectors live */
    void *dA;             /* the local CSR in the ops's memory */
    sps_idx *sidx;        /* send_idx in the ops's memory */
    double *sbuf;         /* packed sends, ops's memory */
    double *xe;           /* nloc + nhalo: sps_dist_operator_apply's input */
    double *part, *part_all; /* reduction partials (ops's memory) */
    double *scr;          /* the GPU's first-level partials */
    sps_idx blk;          /* rows per reduction block (sps__dist_block(n)) */
    double *part_host;
    sps_idx maxblk;       /* most reduction blocks of a rank */
    sps_xfer x;           /* the halo exchange, into xe's halo (re-pointed per call) */
    void **rptr;          /* x.rbuf */
    const void **sptr;    /* x.sbuf */
    size_t *rbytes, *sbytes;
    int aligned;          /* every row start is a multiple of blk */
};

/* y = A xe on the local rows; xe has nloc + nhalo entries (ops's memory), its
 * halo is filled by the exchange first. */
sps_status sps__dist_spmv(sps_dist_operator *op, double *xe, double *y);
/* s[q] = a[q]'b[q] over all ranks, q < ns, in global block order. */
sps_status sps__dist_dot(sps_dist_operator *op, int ns, const double *const *a,
                         const double *const *b, double *s);

#endif /* SPS_DIST_IMPL_H */
