#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/gm_fuse.sh [REPS]: GMRES's classic steps with the fused
# products (the default) against SPS_GM_FUSE=0 (the kernels one by one),
# after sh bench/gpu_build.sh, on a GPU machine; builds nothing. First make
# run's solve (lns_3937, GMRES(2000), classic engine) REPS times each way,
# alternating (default 3): iterate ms, iterations, us per iteration, the
# relative residual; then tests/tools/gm_bench --step (an Arnoldi step but
# its SpMV, per n and column count, both ways). Exit status 1 when a
# solve fails or gm_bench reports a failure. SPSOLVE: the binary
# (build/bin/spsolve).
set -u
reps=${1:-3}
bin=${SPSOLVE:-build/bin/spsolve}
bench=build/tests/tools/gm_bench
[ -x "$bin" ] || { echo "gm_fuse.sh: $bin not built (sh bench/gpu_build.sh)" >&2; exit 1; }
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | head -n 1
args="-A examples/data/lns_3937.mtx.gz --method gmres --precond none --restart 2000 --maxit 6000 --rtol 1e-8 --spmv auto"
rc=0
printf '%-13s %3s | %10s | %10s | %8s | %s\n' SPS_GM_FUSE run "iterate ms" iterations "us/iter" "relres"
i=0
while [ "$i" -lt "$reps" ]; do
    for f in 0 1; do
        # shellcheck disable=SC2086
        out=$(SPS_GM_FUSE=$f "$bin" $args --json -q 2>/dev/null | python3 -c '
import json, sys
try:
    d = json.load(sys.stdin)
    it = d.get("iterations", 0)
    print("%10.1f | %10d | %8.2f | %.3e %s" % (d["iterate_ms"], it, 1e3 * d["iterate_ms"] / it if it else float("nan"),
          d.get("true_rel_rnorm", float("nan")), d.get("engine", "?")))
except Exception as e:
    print("failed: %s" % e)')
        case $out in failed*) rc=1 ;; esac
        printf '%-13s %3s | %s\n' "$f" "$((i + 1))" "$out"
    done
    i=$((i + 1))
done
if [ -x "$bench" ]; then
    "$bench" --step --reps 20 || rc=1
else
    echo "gm_fuse.sh: $bench not built" >&2
    rc=1
fi
exit $rc
