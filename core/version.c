/* SPDX-License-Identifier: MIT */
/* spsolve/core/version.c: the library's version string (SPS_VERSION_STRING,
 * from sps_config.h) */
#include "internal.h"

const char *sps_version(void) { return SPS_VERSION_STRING; }
