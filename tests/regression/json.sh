#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/json.sh BUILD_DIR: `spsolve --json` prints one
# valid JSON object on every exit class (0 converged, 1 not converged, 2 bad
# usage or input, 3 runtime failure, 4 preconditioner cannot be built), with
# "error", "warnings", "hints" and "exit_status" equal to the exit status; the
# one hint never repeats what was just tried (issue 16, items 1 to 3).
build=${1:-build}
spsolve=$build/bin/spsolve
check=$build/tests/tools/json_check
for p in "$spsolve" "$check"; do [ -x "$p" ] || { echo "FAIL - json: $p not built"; exit 1; }; done
spsolve=$(cd "$(dirname "$spsolve")" && pwd)/spsolve
check=$(cd "$(dirname "$check")" && pwd)/json_check
here=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
lns=$here/examples/data/lns_3937.mtx.gz
nos6=""
for d in "${SPS_MATRICES:-}" "$here/../shared/matrices" "$here/tests/data/real"; do
    [ -n "$d" ] && [ -f "$d/nos6.mtx.gz" ] && { nos6=$d/nos6.mtx.gz; break; }
done
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n4 1 2\n' >bad.mtx
ln -s /dev/full full

# case NAME WANT_RC PATTERN... -- ARGS: run, check the JSON and every PATTERN (grep -E) in it.
case_() {
    name=$1 want=$2
    shift 2
    pats=""
    while [ "$1" != "--" ]; do pats="$pats
$1"; shift; done
    shift
    "$spsolve" "$@" --json >out.json 2>err.txt
    rc=$?
    if [ "$rc" != "$want" ]; then echo "FAIL - json $name: exit $rc, want $want: $(head -n 1 err.txt)"; return; fi
    if ! "$check" <out.json 2>check.txt; then echo "FAIL - json $name: not valid JSON: $(cat check.txt)"; return; fi
    if ! grep -q "\"exit_status\": $want}\$" out.json; then echo "FAIL - json $name: no \"exit_status\": $want at the end"; return; fi
    for k in '"error": ' '"warnings": \[' '"hints": \['; do
        grep -q "$k" out.json || { echo "FAIL - json $name: no $k"; return; }
    done
    echo "$pats" | while IFS= read -r pat; do
        [ -z "$pat" ] && continue
        grep -Eq -- "$pat" out.json || echo "FAIL - json $name: no match for /$pat/"
    done
    echo "ok - json $name: exit $rc, valid, exit_status $want"
}

case_ "converged" 0 '"converged": true' '"error": null' '"hints": \[\]' '"setup_ms": ' '"solve_ms": ' -- \
    --gen poisson2d:8 --device cpu
if [ -n "$nos6" ]; then
    case_ "maxit: one hint, and not the preconditioner just tried" 1 '"hints": \["--precond jacobi' -- \
        -A "$nos6" --maxit 50 --precond none --device cpu
    case_ "maxit with jacobi: the hint moves on" 1 '"hints": \["--precond ic0' -- \
        -A "$nos6" --maxit 50 --precond jacobi --device cpu
else
    echo "SKIP - json maxit: nos6 not present"
fi
case_ "usage" 2 '"error": "unknown option' -- --gen poisson2d:8 --bogus
case_ "bad input" 2 '"error": "cannot read the matrix: .*bad.mtx:4: ' -- -A bad.mtx --device cpu
case_ "output folder missing" 2 '"error": "-o: cannot write .*no such folder' -- \
    --gen poisson2d:8 --device cpu -o missing/x.txt
[ -c /dev/full ] && case_ "write failure" 3 '"converged": true' '"error": "cannot write -o: .*No space left' -- \
    --gen poisson2d:8 --device cpu -o full
case_ "preconditioner cannot be built" 4 '"warnings": \[".*divides by the diagonal' \
    '"hints": \["--precond none --method gmres' '"error": "jacobi cannot be built' -- \
    -A "$lns" --precond jacobi --device cpu
if grep -q '"hints": \[.*\(jacobi\|ilu0\|ic0\)' out.json; then
    echo "FAIL - json: the hint after jacobi failed names a preconditioner that needs the diagonal"
else
    echo "ok - json: the hint after jacobi failed names no preconditioner that needs the diagonal"
fi
case_ "GMRES stagnation: a longer restart" 1 '"reason": "stagnation"' '"hints": \["--restart 1000' -- \
    -A "$lns" --method gmres --maxit 3000 --device cpu
exit 0
