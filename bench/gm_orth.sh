#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/gm_orth.sh [REPS]: GMRES's classic steps with DCGS2
# (SPS_GM_ORTH=dcgs2: one pass over the basis for the products, one for the
# corrections) against today's selective CGS2 (SPS_GM_ORTH=cgs2, the
# default), after sh bench/gpu_build.sh, on a GPU machine; builds nothing.
# First make run's solve (Makefile RUN_ARGS: lns_3937, GMRES(2000)) REPS
# times each way, alternating (default 3): iterate ms, iterations, us per
# iteration, the true relative residual, the traffic model's floor per
# iteration; then tests/tools/gm_bench --orth (a step but its SpMV, per n
# and column count, both ways). Exit status 1 when a solve fails or gm_bench
# reports a failure. SPSOLVE: the binary (build/bin/spsolve).
set -u
reps=${1:-3}
bin=${SPSOLVE:-build/bin/spsolve}
bench=build/tests/tools/gm_bench
[ -x "$bin" ] || { echo "gm_orth.sh: $bin not built (sh bench/gpu_build.sh)" >&2; exit 1; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -n 1
args="-A examples/data/lns_3937.mtx.gz --method gmres --precond none --restart 2000 --maxit 6000 --rtol 1e-8 --spmv auto"
rc=0
printf '%-6s %3s | %10s | %10s | %8s | %10s | %9s | %s\n' orth run "iterate ms" iterations "us/iter" "true relres" \
    "floor us" engine
i=0
while [ "$i" -lt "$reps" ]; do
    for o in cgs2 dcgs2; do
        # shellcheck disable=SC2086
        out=$(SPS_GM_ORTH=$o "$bin" $args --json -q 2>/dev/null | python3 -c '
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
        printf '%-6s %3s | %s\n' "$o" "$((i + 1))" "$out"
    done
    i=$((i + 1))
done
if [ -x "$bench" ]; then
    "$bench" --orth --reps 20 || rc=1
else
    echo "gm_orth.sh: $bench not built" >&2
    rc=1
fi
exit $rc
