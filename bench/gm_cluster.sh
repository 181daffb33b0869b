#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/gm_cluster.sh [REPS]: GMRES's one kernel on one block against
# its cluster kernel (SPS_GM_CLUSTER=C, solvers/gmres/gmres_kernels.cu
# k_gm_cluster), after sh bench/gpu_build.sh, on a GPU machine. One table:
# per system and cycle length, microseconds per iteration (the median of REPS
# runs, default 3; iterate_ms / iterations from spsolve --json) for classic,
# the one block (C = 0) and C = 1, 2, 4, 8, 16, with the cluster that ran
# (tags below) and the iterations. GM_CASES=system/m,... replaces the cases;
# SPSOLVE the binary (build/bin/spsolve).
set -u
reps=${1:-3}
bin=${SPSOLVE:-build/bin/spsolve}
[ -x "$bin" ] || { echo "gm_cluster.sh: $bin not built (sh bench/gpu_build.sh)" >&2; exit 1; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -n 1

# one solve: prints "us_per_iter iterations engine cluster"
one() {
    "$bin" --gen "$1" --method gmres --restart "$2" --precond none --json -q 2>/dev/null |
        python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
    it = d.get("iterations", 0)
    us = 1e3 * d["iterate_ms"] / it if it else float("nan")
    print("%.2f %d %s %d" % (us, it, d.get("engine", "?"), d.get("engine_cluster", 0)))
except Exception:
    print("nan 0 error 0")'
}

# the median of reps runs, with the last run's engine and cluster
cell() {
    sys=$1 m=$2 eng=$3 c=$4
    i=0
    : >"${TMPDIR:-/tmp}/gm_cluster.$$"
    while [ "$i" -lt "$reps" ]; do
        if [ "$c" = classic ]; then
            SPS_ENGINE=classic one "$sys" "$m"
        else
            SPS_ENGINE=$eng SPS_GM_CLUSTER=$c one "$sys" "$m"
        fi >>"${TMPDIR:-/tmp}/gm_cluster.$$"
        i=$((i + 1))
    done
    sort -g "${TMPDIR:-/tmp}/gm_cluster.$$" | awk -v n="$reps" 'NR == int((n + 1) / 2) {
        tag = $3 == "onekernel" ? ($4 > 0 ? "c" $4 : "1b") : $3 == "classic" ? "cl" : $3
        printf "%8.2f %-3s", $1, tag; it = $2 } END { printf " %s", it }' | tr -d '\n'
    rm -f "${TMPDIR:-/tmp}/gm_cluster.$$"
}

printf '%-14s %4s | %12s | %12s |' system m classic "C=0 (1 blk)"
for c in 1 2 4 8 16; do printf ' %12s |' "C=$c"; done
printf ' iterations\n'
cases=${GM_CASES:-poisson2d:63/30,poisson2d:63/10,poisson2d:63/60,poisson2d:32/30,poisson2d:90/30}
for case in $(echo "$cases" | tr ',' ' '); do
    set -- $(echo "$case" | tr '/' ' ')
    sys=$1 m=$2
    printf '%-14s %4s |' "$sys" "$m"
    its=""
    for c in classic 0 1 2 4 8 16; do
        out=$(cell "$sys" "$m" onekernel "$c")
        set -- $out
        printf ' %8s %-3s |' "$1" "$2"
        its="$its ${3:-?}"
    done
    printf '%s\n' "$its"
done
echo "us per iteration (median of $reps); tag: the path that ran (cl classic, 1b the one block, cC a cluster of C)"
