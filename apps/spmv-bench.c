/* SPDX-License-Identifier: MIT */
/* spsolve/apps/spmv-bench.c: the SpMV benchmark (placeholder) */
#include <stdio.h>

#include "spsolve.h"

int main(void)
{
    printf("spsolve %s\n", sps_version());
    return 0;
}
