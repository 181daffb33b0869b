#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/run.sh BUILD_DIR TEST...: run test programs, add up their
# "ok/FAIL/SKIP" lines, end with "N passed, N failed, N skipped".
# A program that crashes or exits non-zero without a FAIL line counts as one
# failure; a program's log is kept in BUILD_DIR/tests/logs/NAME.log.
build=$1
shift
logs=$build/tests/logs
mkdir -p "$logs"
pass=0 fail=0 skip=0
for t in "$@"; do
    name=$(echo "$t" | sed "s|^$build/tests/||")
    log=$logs/$(echo "$name" | tr '/' '_').log
    start=$(date +%s)
    "$t" >"$log" 2>&1
    rc=$?
    end=$(date +%s)
    p=$(grep -c '^ok - ' "$log")
    f=$(grep -c '^FAIL - ' "$log")
    s=$(grep -c '^SKIP - ' "$log")
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ] && [ "$f" -eq 0 ]; then
        echo "FAIL - $name exited with status $rc" >>"$log"
        f=1
    fi
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
    if [ "$f" -gt 0 ]; then
        printf 'FAIL %-34s %4d passed, %d failed, %d skipped (%ds)\n' "$name" "$p" "$f" "$s" $((end - start))
        grep -E '^FAIL - ' "$log" | head -n 20 | sed 's/^/    /'
    elif [ "$p" -eq 0 ] && [ "$s" -gt 0 ]; then
        printf 'SKIP %-34s %s\n' "$name" "$(grep -m1 '^SKIP - ' "$log" | sed 's/^SKIP - //')"
    else
        printf 'PASS %-34s %4d passed, %d skipped (%ds)\n' "$name" "$p" "$s" $((end - start))
    fi
done
# Every shell test in tests/regression/ (run.sh: the convergence goldens;
# the others: the CLI's behaviour), given the build directory.
for script in tests/regression/*.sh; do
    [ -f "$script" ] || continue
    start=$(date +%s)
    out=$(sh "$script" "$build" 2>&1)
    rc=$?
    end=$(date +%s)
    echo "$out" | grep -v '^\(ok\|FAIL\|SKIP\) - '
    p=$(echo "$out" | grep -c '^ok - ')
    f=$(echo "$out" | grep -c '^FAIL - ')
    s=$(echo "$out" | grep -c '^SKIP - ')
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; out="$out
FAIL - $script exited with status $rc"; fi
    if [ "$f" -gt 0 ]; then
        printf 'FAIL %-34s %4d passed, %d failed, %d skipped (%ds)\n' "$script" "$p" "$f" "$s" $((end - start))
        echo "$out" | grep '^FAIL - ' | sed 's/^/    /'
    else
        printf 'PASS %-34s %4d passed, %d skipped (%ds)\n' "$script" "$p" "$s" $((end - start))
    fi
    pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
done
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
