/* SPDX-License-Identifier: MIT */
/* spsolve/tests/emu_check.h: the comparison counters and CHECK of the CPU
 * emulation harnesses (precond/mcilu/emu, precond/parilu/emu, spmv/emu,
 * spmv/formats/drm_emu): one translation unit each, which prints its own
 * summary from fails and checks. */
#ifndef SPS_TESTS_EMU_CHECK_H
#define SPS_TESTS_EMU_CHECK_H

#include <stdio.h>

static int fails, checks;

/* Count a comparison; print "FAIL <message>" when c does not hold. */
#define CHECK(c, ...)                                                                                  \
    do {                                                                                               \
        checks++;                                                                                      \
        if (!(c)) {                                                                                    \
            fails++;                                                                                   \
            printf("FAIL ");                                                                           \
            printf(__VA_ARGS__);                                                                       \
            printf("\n");                                                                              \
        }                                                                                              \
    } while (0)

#endif /* SPS_TESTS_EMU_CHECK_H */
