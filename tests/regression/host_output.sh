#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/host_output.sh BUILD_DIR: on the host path the
# summary leaves out GPU-only details (threads per row, host
# synchronizations), and the no-GPU note is one level deep (issue 16, item 6).
build=${1:-build}
spsolve=$build/bin/spsolve
[ -x "$spsolve" ] || { echo "FAIL - host_output: $spsolve not built"; exit 0; }
out=$("$spsolve" --gen poisson2d:12 --device cpu 2>&1)
echo "$out" | grep -q '^result    converged' || echo "FAIL - host_output: no result line: $out"
for s in 'threads per row' 'threads per block' 'host synchronizations' '^syncs '; do
    echo "$out" | grep -q "$s" && echo "FAIL - host_output: --device cpu prints a GPU-only detail: /$s/"
done
echo "$out" | grep -qE 'threads per|synchronizations' || echo "ok - host_output: no GPU-only details on the host"
# --device auto: on a machine without a GPU, one note; never nested.
out=$("$spsolve" --gen poisson2d:12 2>&1)
note=$(echo "$out" | grep '^note: ')
case "$note" in
"") echo "ok - host_output: a GPU context (no note)" ;;
*"no GPU ("*|*"(no CUDA device ("*) echo "FAIL - host_output: nested note: $note" ;;
"note: no GPU: "*"; using the host reference path") echo "ok - host_output: one-level note: $note" ;;
*) echo "FAIL - host_output: unexpected note: $note" ;;
esac
[ "$(echo "$out" | grep -c '^note: ')" -le 1 ] || echo "FAIL - host_output: more than one note"
