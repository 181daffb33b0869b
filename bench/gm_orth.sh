#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/gm_orth.sh [REPS]: GMRES's classic steps with DCGS2
# (SPS_GM_ORTH=dcgs2: one pass over the basis for the products, one for the
# corrections) against the selective CGS2 (SPS_GM_ORTH=cgs2, the default):
# make run's solve REPS times each way, alternating (default 3), then
# tests/tools/gm_bench --orth (a step but its SpMV, both ways). The table and
# the exit status: gm_ab.sh.
exec sh "$(dirname "$0")/gm_ab.sh" SPS_GM_ORTH cgs2 dcgs2 "${1:-3}" --orth
