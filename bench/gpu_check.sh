#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/gpu_check.sh [MATRICES]: on a GPU machine, build for its GPU,
# run every test (the GPU ones included) on the shared matrices, the make run
# demo, and print the GPU tests' measurement lines ('#'). Logs go to $OUT
# (or /tmp). Exit status: make check's.
set -u
out=${OUT:-/tmp}
mats=${1:-.device/matrices}
sh bench/gpu_build.sh || exit 1
start=$(date +%s)
SPS_MATRICES=$mats make check >"$out/check.log" 2>&1; rc=$?
echo "make check: $(( $(date +%s) - start )) s, exit $rc"
grep -E '^(FAIL|SKIP)|^    FAIL' "$out/check.log" | head -n 40
for t in build/tests/gpu/test_*; do
    case $t in *.d) continue ;; esac
    grep -E "^(PASS|FAIL) gpu/$(basename "$t")" "$out/check.log"
done
tail -n 1 "$out/check.log"
grep -h '^#' build/tests/logs/gpu_*.log | head -n 60
cp build/tests/logs/gpu_*.log "$out"/ 2>/dev/null
grep -h -B1 -A2 '^FAIL - ' build/tests/logs/*.log | head -n 40
make run 2>&1 | grep -E 'result|time to solution|^time' | head -n 4
exit $rc
