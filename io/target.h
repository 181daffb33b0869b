/* SPDX-License-Identifier: MIT */
/* spsolve/io/target.h: where and how an output file is written (io/target.c) */
#ifndef SPS_IO_TARGET_H
#define SPS_IO_TARGET_H

#include "internal.h"

#include <stdio.h>

/* How to write PATH. A regular file or a new path is written to a temporary
 * beside it and renamed over it (whole or not at all): *in_place = 0. Any
 * other existing target (a character device such as /dev/null, a FIFO, a
 * socket) is written in place: *in_place = 1. A symlink is followed to its
 * target, which is what gets replaced, so the link is kept (a dangling link
 * names the file to create). *target (free with sps__free) is the path to
 * write or rename over. A directory, a symlink loop or a failing stat is
 * SPS_ERR_IO naming PATH. */
sps_status sps__write_target(sps_context *ctx, const char *path, char **target, int *in_place);

/* Write a non-regular TARGET in place with emit (no temporary, no fsync): a
 * write error (ENOSPC on /dev/full, EPIPE) is SPS_ERR_IO naming PATH. */
sps_status sps__write_in_place(sps_context *ctx, const char *path, const char *target,
                               int (*emit)(FILE *f, const void *arg), const void *arg);

#endif
