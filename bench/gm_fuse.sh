#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/gm_fuse.sh [REPS]: GMRES's classic steps with the fused
# products (the default) against SPS_GM_FUSE=0 (the kernels one by one):
# make run's solve REPS times each way, alternating (default 3), then
# tests/tools/gm_bench --step (an Arnoldi step but its SpMV, both ways).
# The table and the exit status: gm_ab.sh.
exec sh "$(dirname "$0")/gm_ab.sh" SPS_GM_FUSE 0 1 "${1:-3}" --step
