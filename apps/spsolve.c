/* SPDX-License-Identifier: MIT */
/* spsolve/apps/spsolve.c: the command-line solver (placeholder) */
#include <stdio.h>

#include "spsolve.h"

int main(void)
{
    printf("spsolve %s\n", sps_version());
    return 0;
}
