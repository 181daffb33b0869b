/* SPDX-License-Identifier: MIT */
/* spsolve/core/alloc.c: the library's allocator (malloc/calloc/realloc/free
 * wrappers with overflow checks and test-injected failures), and sps_free */
#define _DEFAULT_SOURCE /* madvise, MADV_HUGEPAGE */
#include "internal.h"

#include <stdint.h>
#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

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

/* Large blocks (CSR arrays, entry arrays, vectors) ask for transparent huge
 * pages where the kernel gives them on request (Linux, THP "madvise"): their
 * first touch then faults once per 2 MiB instead of once per 4 KiB. The
 * 2 MiB-aligned part of the block only; advice that fails is ignored. */
#define SPS_HUGE_MIN ((size_t)8 << 20)
static void *huge_advice(void *p, size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (p && bytes >= SPS_HUGE_MIN) {
        const uintptr_t h = (uintptr_t)2 << 20, b = ((uintptr_t)p + h - 1) & ~(h - 1),
                        e = ((uintptr_t)p + bytes) & ~(h - 1);
        if (e > b) (void)madvise((void *)b, e - b, MADV_HUGEPAGE);
    }
#else
    (void)bytes;
#endif
    return p;
}

void *sps__malloc(size_t bytes)
{
    if (inject_failure() || bytes == SIZE_MAX) return NULL;
    return huge_advice(malloc(bytes ? bytes : 1), bytes);
}

void *sps__calloc(size_t n, size_t size)
{
    if (inject_failure() || sps__mul_size(n, size) == SIZE_MAX) return NULL;
    if (n == 0 || size == 0) return calloc(1, 1);
    return huge_advice(calloc(n, size), n * size);
}

void *sps__realloc(void *p, size_t bytes)
{
    if (inject_failure() || bytes == SIZE_MAX) return NULL;
    return huge_advice(realloc(p, bytes ? bytes : 1), bytes);
}

void *sps__malloc_scratch(size_t bytes)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const size_t h = (size_t)2 << 20;
    if (bytes >= ((size_t)1 << 20) && bytes <= SIZE_MAX - h) {
        if (inject_failure()) return NULL;
        const size_t r = (bytes + h - 1) & ~(h - 1);
        void *p = aligned_alloc(h, r);
        if (p) (void)madvise(p, r, MADV_HUGEPAGE);
        return p;
    }
#endif
    return sps__malloc(bytes);
}

void sps__free(void *p) { free(p); }

void sps_free(void *p) { free(p); }
