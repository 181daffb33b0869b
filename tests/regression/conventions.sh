#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/conventions.sh BUILD_DIR: the conventions users
# type by habit (issue 16, item 4): --opt=value, SPSOLVE_OPTIONS, an options
# file, --monitor=K, the progress line on a terminal (plain output
# otherwise), --restart capped at n, --rtol 0 running to maxit.
build=${1:-build}
spsolve=$build/bin/spsolve
check=$build/tests/tools/json_check
for p in "$spsolve" "$check"; do [ -x "$p" ] || { echo "FAIL - conventions: $p not built"; exit 1; }; done
spsolve=$(cd "$(dirname "$spsolve")" && pwd)/spsolve
check=$(cd "$(dirname "$check")" && pwd)/json_check
here_data=$(pwd)/tests/data/real
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
unset SPSOLVE_OPTIONS SPSOLVE_PROGRESS_MS

ok() { echo "ok - conventions $1"; }
bad() { echo "FAIL - conventions $1"; }
# jget FILE KEY: the value of a top-level scalar key in the JSON object.
jget() { sed -n "s/.*\"$2\": \([^,}]*\).*/\1/p" "$1" | head -n 1; }

# --opt=value is --opt value: the same settings and the same solve, bitwise.
keys() { for k in rows rtol maxit method restart reason iterations rnorm true_rnorm; do printf '%s=%s ' $k "$(jget "$1" $k)"; done; }
"$spsolve" --gen poisson2d:12 --device cpu --precond none --rtol 1e-6 --maxit 40 --method gmres --restart 7 --json >a.json 2>/dev/null
"$spsolve" --gen=poisson2d:12 --device=cpu --precond=none --rtol=1e-6 --maxit=40 --method=gmres --restart=7 --json >b.json 2>/dev/null
if [ "$(keys a.json)" = "$(keys b.json)" ] && [ "$(jget b.json rtol)" = "1e-06" ] && [ "$(jget b.json restart)" = "7" ]; then
    ok "--opt=value equals --opt value ($(keys b.json))"
else bad "--opt=value differs: $(keys a.json) / $(keys b.json)"; fi
"$spsolve" --gen poisson2d:4 --json=yes >c.json 2>/dev/null
rc=$?
[ $rc = 2 ] && "$check" <c.json && grep -q '"error": "--json takes no value"' c.json \
    && ok "a flag given a value is a usage error (exit 2, JSON)" || bad "--json=yes: exit $rc, $(cat c.json)"
"$spsolve" --gen poisson2d:4 --rtol= 2>err.txt
rc=$?
[ $rc = 2 ] && grep -q "not a number" err.txt && ok "--rtol= (empty) is refused" || bad "--rtol=: exit $rc"

# SPSOLVE_OPTIONS: read first; the command line wins.
SPSOLVE_OPTIONS="--rtol 1e-3 --maxit=17  --json" "$spsolve" --gen poisson2d:12 --device cpu --precond none --maxit 5 >d.json 2>/dev/null
if "$check" <d.json && [ "$(jget d.json rtol)" = "0.001" ] && [ "$(jget d.json maxit)" = "5" ]; then
    ok "SPSOLVE_OPTIONS read, the command line wins"
else bad "SPSOLVE_OPTIONS: rtol $(jget d.json rtol), maxit $(jget d.json maxit)"; fi
SPSOLVE_OPTIONS="--bogus" "$spsolve" --gen poisson2d:4 2>err.txt
rc=$?
[ $rc = 2 ] && grep -q "SPSOLVE_OPTIONS: unknown option '--bogus'" err.txt && ok "SPSOLVE_OPTIONS: an unknown option names its origin" \
    || bad "SPSOLVE_OPTIONS --bogus: exit $rc, $(head -n 1 err.txt)"

# --options-file: key value, key=value, --key value, flags, comments.
printf '# solver settings\nrtol 1e-4\nmaxit=23   # a comment\n--method gmres\n\njson\n' >opts.txt
"$spsolve" --gen poisson2d:12 --device cpu --precond none --options-file opts.txt >e.json 2>/dev/null
if "$check" <e.json && [ "$(jget e.json rtol)" = "0.0001" ] && [ "$(jget e.json maxit)" = "23" ] \
    && grep -q '"method": "gmres"' e.json; then ok "--options-file: key value, key=value, --key, flags, comments"
else bad "--options-file: $(head -c 300 e.json)"; fi
printf 'rtol 1e-4\nfrobnicate 3\n' >bad.txt
"$spsolve" --gen poisson2d:4 --options-file=bad.txt 2>err.txt
rc=$?
[ $rc = 2 ] && grep -q "bad.txt:2: unknown option '--frobnicate'" err.txt && ok "--options-file: FILE:LINE of a bad option" \
    || bad "--options-file bad: exit $rc, $(head -n 1 err.txt)"
"$spsolve" --gen poisson2d:4 --options-file missing.txt 2>err.txt
[ $? = 2 ] && grep -q "missing.txt" err.txt && ok "--options-file: a missing file is exit 2" || bad "--options-file missing"

# --monitor=K: lines at most every K iterations; --monitor: every check.
"$spsolve" --gen poisson2d:20 --device cpu --precond none --method cg --monitor=10 >m.txt 2>/dev/null
its=$(grep rnorm m.txt | awk '{print $1}' | tr '\n' ' ')
case "$its" in "0 10 20 30 "*) ok "--monitor=10: iterations $its" ;; *) bad "--monitor=10: iterations $its" ;; esac
n1=$("$spsolve" --gen poisson2d:20 --device cpu --precond none --method cg --monitor 2>/dev/null | grep -c rnorm)
n10=$(grep -c rnorm m.txt)
[ "$n1" -gt $((5 * n10)) ] && ok "--monitor: every check ($n1 lines, $n10 with =10)" || bad "--monitor: $n1 lines vs $n10"
"$spsolve" --gen poisson2d:4 --precond none --monitor=0 2>/dev/null
[ $? = 2 ] && ok "--monitor=0 is refused" || bad "--monitor=0 accepted"

# The progress line: on a terminal only, never in a pipe or a file.
SPSOLVE_PROGRESS_MS=0 "$spsolve" --gen poisson2d:30 --device cpu --precond none >p.txt 2>&1
if grep -q "rate .*/it" p.txt; then bad "progress line written to a file"; else ok "no progress line when stderr is not a terminal"; fi
if command -v script >/dev/null 2>&1 && script -qec true /dev/null >/dev/null 2>&1; then
    SPSOLVE_PROGRESS_MS=0 script -qec "$spsolve --gen poisson2d:30 --device cpu --method cg --precond none" /dev/null >t.txt 2>&1
    if tr '\r' '\n' <t.txt | grep -Eq '^  iteration [0-9]+  rel [0-9.e+-]+  rate 0\.[0-9]+/it  [0-9.]+ s'; then
        ok "progress line on a terminal (iteration, residual, rate, time)"
    else bad "no progress line on a terminal: $(tr '\r' '\n' <t.txt | grep -m1 iteration)"; fi
    script -qec "$spsolve --gen poisson2d:30 --device cpu --method cg --precond none" /dev/null >t.txt 2>&1
    if tr '\r' '\n' <t.txt | grep -q '  iteration '; then bad "progress line on a solve shorter than a second"
    else ok "no progress line for a solve under a second"; fi
else
    echo "SKIP - conventions progress line: no script(1) to give a terminal"
fi

# --restart above n: capped at n, with a note (text and JSON).
"$spsolve" --gen poisson2d:5 --device cpu --precond none --method gmres --restart 100 >r.txt 2>err.txt
grep -q "note: --restart 100 is capped at n = 25" err.txt && grep -q "gmres(25)" r.txt \
    && ok "--restart 100 on n = 25: capped, with a note" || bad "--restart cap: $(cat err.txt)"
"$spsolve" --gen poisson2d:5 --device cpu --precond none --method gmres:restart=300 --json >r.json 2>/dev/null
[ "$(jget r.json restart)" = "25" ] && grep -q '"warnings": \["--restart 300 is capped at n = 25"\]' r.json \
    && ok "--method gmres:restart=300: capped in the JSON, the note in warnings" || bad "gmres:restart=300: $(head -c 400 r.json)"

# --rtol 0: no relative test; runs to maxit (or atol).
"$spsolve" --gen poisson2d:12 --device cpu --precond none --rtol 0 --maxit 30 --json >z.json 2>/dev/null
rc=$?
[ $rc = 1 ] && [ "$(jget z.json iterations)" = "30" ] && grep -q '"reason": "not converged (maxit' z.json \
    && ok "--rtol 0 runs to maxit (30 iterations, exit 1)" || bad "--rtol 0: exit $rc, $(jget z.json iterations) iterations"
"$spsolve" --gen poisson2d:12 --device cpu --precond none --rtol 0 --atol 1e-6 --json >z.json 2>/dev/null
[ $? = 0 ] && grep -q '"reason": "converged (atol)' z.json && ok "--rtol 0 --atol 1e-6: converged (atol)" \
    || bad "--rtol 0 --atol: $(jget z.json reason)"

# The JSON names the reason as well as its number (issue 16, item 7).
"$spsolve" --gen poisson2d:12 --device cpu --precond none --maxit 3 --json >z.json 2>/dev/null
grep -q '"reason": "not converged (maxit reached)", "reason_code": -3' z.json \
    && ok "JSON: reason name and code together" || bad "JSON reason: $(grep -o '"reason[^,]*,[^,]*' z.json)"

# spmv-bench takes --opt=value too (a flag given a value is refused).
bench=$(dirname "$spsolve")/spmv-bench
if [ -x "$bench" ]; then
    "$bench" --gen=poisson2d:20 --device=cpu --spmv=csr-vector,drm:rows=0 --reps=5 --json=- -q >sb.json 2>err.txt
    rc=$?
    if [ $rc = 0 ] && "$check" <sb.json && grep -q '"reps": 5' sb.json && grep -q '"backend": "drm:rows=0"' sb.json; then
        ok "spmv-bench --opt=value (--spmv=LIST with its own '=')"
    else bad "spmv-bench --opt=value: exit $rc, $(head -n 1 err.txt)"; fi
    "$bench" --gen poisson2d:20 --check=1 2>/dev/null
    [ $? = 2 ] && ok "spmv-bench --check=1 is refused" || bad "spmv-bench --check=1 accepted"
else
    bad "spmv-bench not built"
fi

# --no-stagnation (sps_solver_set_stagnation): dw2048 with GMRES(30) stops for
# stagnation while its residual still falls; without the stop it goes further.
dw=$here_data/dw2048.mtx.gz
if [ -f "$dw" ]; then
    "$spsolve" -A "$dw" --method gmres --device cpu --precond none --json >s1.json 2>/dev/null
    "$spsolve" -A "$dw" --method gmres --device cpu --precond none --no-stagnation --json >s2.json 2>/dev/null
    r1=$(jget s1.json reason) r2=$(jget s2.json reason)
    t1=$(jget s1.json true_rel_rnorm) t2=$(jget s2.json true_rel_rnorm)
    if [ "$r1" = '"stagnation"' ] && [ "$r2" != '"stagnation"' ] && [ "$(jget s2.json iterations)" -gt "$(jget s1.json iterations)" ] &&
        awk -v a="$t2" -v b="$t1" 'BEGIN { exit !(a < b) }'; then
        ok "--no-stagnation: dw2048 goes on past the stagnation stop ($r1 at $t1, then $r2 at $t2)"
    else bad "--no-stagnation: $r1 $t1 / $r2 $t2"; fi
else
    echo "SKIP - conventions --no-stagnation: dw2048 not bundled"
fi
