/* SPDX-License-Identifier: MIT */
/* spsolve/core/alloc.c: the library's allocator (malloc/calloc/realloc/free
 * wrappers with overflow checks and test-injected failures), and sps_free */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>

static long fail_after; /* 0: never fail; n: the n-th allocation from now fails */

void sps__fail_alloc_after(long n) { fail_after = n; }

static int inject_failure(void)
{
    if (fail_after <= 0) return 0;
    if (--fail_after == 0) return 1;
    return 0;
}

size_t sps__mul_size(size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) return SIZE_MAX;
    return n * size;
}

void *sps__malloc(size_t bytes)
{
    if (inject_failure() || bytes == SIZE_MAX) return NULL;
    return malloc(bytes ? bytes : 1);
}

void *sps__calloc(size_t n, size_t size)
{
    if (inject_failure() || sps__mul_size(n, size) == SIZE_MAX) return NULL;
    if (n == 0 || size == 0) return calloc(1, 1);
    return calloc(n, size);
}

void *sps__realloc(void *p, size_t bytes)
{
    if (inject_failure() || bytes == SIZE_MAX) return NULL;
    return realloc(p, bytes ? bytes : 1);
}

void sps__free(void *p) { free(p); }

void sps_free(void *p) { free(p); }
