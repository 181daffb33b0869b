#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/gm_ab.sh VAR A B REPS GM_BENCH_FLAG: make run's solve
# (lns_3937, GMRES(2000)) with the environment variable VAR at A, then at B,
# REPS times, alternating: iterate ms, iterations, us per iteration, the true
# relative residual, the traffic model's floor per iteration, the engine;
# then tests/tools/gm_bench GM_BENCH_FLAG (both ways per n and column count).
# After sh bench/gpu_build.sh, on a GPU machine; builds nothing. Exit status
# 1 when a solve fails or gm_bench reports a failure. SPSOLVE: the binary
# (build/bin/spsolve). Run through gm_fuse.sh and gm_orth.sh.
set -u
var=$1 va=$2 vb=$3 reps=$4 flag=$5
bin=${SPSOLVE:-build/bin/spsolve}
bench=build/tests/tools/gm_bench
[ -x "$bin" ] || { echo "gm_ab.sh: $bin not built (sh bench/gpu_build.sh)" >&2; exit 1; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -n 1
args="-A examples/data/lns_3937.mtx.gz --method gmres --precond none --restart 2000 --maxit 6000 --rtol 1e-8 --spmv auto"
rc=0
printf '%-13s %3s | %10s | %10s | %8s | %10s | %9s | %s\n' "$var" run "iterate ms" iterations "us/iter" \
    "true relres" "floor us" engine
i=0
while [ "$i" -lt "$reps" ]; do
    for v in "$va" "$vb"; do
        # shellcheck disable=SC2086
        out=$(env "$var=$v" "$bin" $args --json -q 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
    it = d.get("iterations", 0)
    print("%10.1f | %10d | %8.2f | %10.3e | %9.2f | %s" % (d["iterate_ms"], it,
          1e3 * d["iterate_ms"] / it if it else float("nan"), d.get("true_rel_rnorm", float("nan")),
          1e3 * d.get("floor_per_iter_ms", float("nan")), d.get("engine", "?")))
except Exception as e:
    print("failed: %s" % e)')
        case $out in failed*) rc=1 ;; esac
        printf '%-13s %3s | %s\n' "$v" "$((i + 1))" "$out"
    done
    i=$((i + 1))
done
if [ -x "$bench" ]; then
    "$bench" "$flag" --reps 20 || rc=1
else
    echo "gm_ab.sh: $bench not built" >&2
    rc=1
fi
exit $rc
