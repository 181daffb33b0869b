#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/outputs.sh BUILD_DIR: the CLI's output files and
# its behaviour on a system without a solution (issue 17, defects 1, 2, 4).
# - A device or a FIFO is written in place, never replaced by a regular file;
#   a symlink is followed and kept; '-' is stdout; a write error (ENOSPC) is
#   a failure (exit 3).
# - Every output path is checked before the solve: a missing folder is exit 2
#   with no summary.
# - An empty row with b nonzero is named as an inconsistent system before the
#   solve, and the summary prints on a breakdown.
# Prints ok/FAIL/SKIP lines for tests/run.sh to count. Never writes to the
# real /dev/null: links to /dev/null and /dev/full in a scratch folder.
build=${1:-build}
spsolve=$build/bin/spsolve
[ -x "$spsolve" ] || { echo "FAIL - outputs: $spsolve not built"; exit 1; }
spsolve=$(cd "$(dirname "$spsolve")" && pwd)/spsolve
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1 # a stray file (say, one named '-') lands here
run() { "$spsolve" --gen poisson2d:4 --device cpu -q "$@"; }
ok() { echo "ok - outputs: $1"; }
fail() { echo "FAIL - outputs: $1"; }
lines() { wc -l <"$1" | tr -d ' '; }

# A symlink to /dev/null stays a symlink, and /dev/null a character device.
ln -s /dev/null "$tmp/null"
run -o "$tmp/null"; rc=$?
if [ "$rc" = 0 ] && [ -L "$tmp/null" ] && [ -c /dev/null ]; then ok "-o LINK-TO-/dev/null keeps the link and the device"
else fail "-o LINK-TO-/dev/null: exit $rc, link kept: $([ -L "$tmp/null" ] && echo yes || echo no)"; fi

# A symlink to a regular file: the target is replaced, the link kept.
printf 'old\n' >"$tmp/real.txt"
ln -s real.txt "$tmp/link.txt"
run -o "$tmp/link.txt"; rc=$?
if [ "$rc" = 0 ] && [ -L "$tmp/link.txt" ] && [ "$(lines "$tmp/real.txt")" = 16 ]; then ok "-o LINK writes the target and keeps the link"
else fail "-o LINK: exit $rc, link kept: $([ -L "$tmp/link.txt" ] && echo yes || echo no), target lines $(lines "$tmp/real.txt")"; fi

# A FIFO is streamed: the reader gets x, and the FIFO stays a FIFO.
if mkfifo "$tmp/fifo" 2>/dev/null; then
    timeout 20 cat "$tmp/fifo" >"$tmp/got.txt" &
    reader=$!
    timeout 20 "$spsolve" --gen poisson2d:4 --device cpu -q -o "$tmp/fifo"; rc=$?
    # A reader still waiting (spsolve never opened the FIFO): open it once to end it.
    sleep 0.2
    if kill -0 "$reader" 2>/dev/null; then
        timeout 5 sh -c ': >"$1"' sh "$tmp/fifo" </dev/null >/dev/null 2>&1
    fi
    wait "$reader"
    if [ "$rc" = 0 ] && [ -p "$tmp/fifo" ] && [ "$(lines "$tmp/got.txt")" = 16 ]; then ok "-o FIFO streams x and keeps the FIFO"
    else fail "-o FIFO: exit $rc, FIFO kept: $([ -p "$tmp/fifo" ] && echo yes || echo no), read $(lines "$tmp/got.txt") lines"; fi
else
    echo "SKIP - outputs: -o FIFO: mkfifo failed"
fi

# A full device: the write error is a failure (exit 3) naming ENOSPC.
if [ -c /dev/full ]; then
    ln -s /dev/full "$tmp/full"
    for opt in "-o" "--history"; do
        run $opt "$tmp/full" 2>"$tmp/err"; rc=$?
        if [ "$rc" = 3 ] && grep -q "No space left" "$tmp/err" && [ -L "$tmp/full" ]; then ok "$opt LINK-TO-/dev/full fails with exit 3"
        else fail "$opt LINK-TO-/dev/full: exit $rc, stderr: $(head -n 1 "$tmp/err")"; fi
    done
    run -o - >/dev/full 2>"$tmp/err"; rc=$?
    if [ "$rc" = 3 ]; then ok "-o - to a full stdout fails with exit 3"
    else fail "-o - to a full stdout: exit $rc, stderr: $(head -n 1 "$tmp/err")"; fi
else
    echo "SKIP - outputs: /dev/full: no such device"
fi

# '-' is stdout: x alone on stdout, the summary on stderr.
"$spsolve" --gen poisson2d:4 --device cpu -o - >"$tmp/x.txt" 2>"$tmp/err"; rc=$?
if [ "$rc" = 0 ] && [ "$(lines "$tmp/x.txt")" = 16 ] && grep -q '^result ' "$tmp/err" &&
    ! grep -q '[a-z]' "$tmp/x.txt"; then ok "-o - writes x to stdout, the summary to stderr"
else fail "-o -: exit $rc, $(lines "$tmp/x.txt") lines on stdout"; fi
run --history - >"$tmp/h.csv"; rc=$?
if [ "$rc" = 0 ] && [ "$(head -n 1 "$tmp/h.csv")" = "iteration,residual_norm" ]; then ok "--history - writes the CSV to stdout"
else fail "--history -: exit $rc, first line '$(head -n 1 "$tmp/h.csv")'"; fi

# Output paths are checked before the solve: exit 2, no summary, nothing written.
for opt in "-o" "--history" "--save-matrix"; do
    "$spsolve" --gen poisson2d:4 --device cpu $opt "$tmp/missing/out" >"$tmp/out" 2>"$tmp/err"; rc=$?
    if [ "$rc" = 2 ] && [ ! -s "$tmp/out" ] && grep -q "no such folder" "$tmp/err"; then ok "$opt MISSING/FILE fails up front with exit 2"
    else fail "$opt MISSING/FILE: exit $rc, stdout $(wc -c <"$tmp/out") bytes, stderr: $(head -n 1 "$tmp/err")"; fi
done

# A regular file is replaced whole; a failing solve's rejected x leaves it alone.
run -o "$tmp/x.mtx"; rc=$?
if [ "$rc" = 0 ] && [ "$(head -n 1 "$tmp/x.mtx")" = "%%MatrixMarket matrix array real general" ]; then ok "-o FILE.mtx writes a Matrix Market array"
else fail "-o FILE.mtx: exit $rc"; fi

# The inconsistent system of issue 17: row 4 empty, b all ones.
printf '%%%%MatrixMarket matrix coordinate real general\n4 4 5\n1 1 4\n1 2 -1\n2 1 -1\n3 3 4\n3 2 -1\n' >"$tmp/it.mtx"
printf '1\n1\n1\n1\n' >"$tmp/ones.txt"
"$spsolve" -A "$tmp/it.mtx" -b "$tmp/ones.txt" --method gmres --device cpu >"$tmp/out" 2>"$tmp/err"
if grep -q "inconsistent: row 3 (1-based 4) of A is empty but b\[3\] = 1" "$tmp/err"; then ok "an empty row with b nonzero is named as an inconsistent system"
else fail "inconsistent system not named: $(head -n 1 "$tmp/err")"; fi
"$spsolve" -A "$tmp/it.mtx" -b "$tmp/ones.txt" --method bicgstab --device cpu -o "$tmp/xb.txt" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ "$rc" = 1 ] && grep -q '^result ' "$tmp/out" && grep -q '^residual ' "$tmp/out"; then ok "bicgstab on the inconsistent system: summary printed, exit 1"
else fail "bicgstab on the inconsistent system: exit $rc, result line: $(grep -c '^result ' "$tmp/out")"; fi

# --dtol follows the library's rule (> 0), not a stricter one of its own.
run --dtol 0.5; rc=$?
if [ "$rc" != 2 ]; then ok "--dtol 0.5 is accepted (library rule: > 0)"; else fail "--dtol 0.5 rejected as usage"; fi
run --dtol 0 2>"$tmp/err"; rc=$?
if [ "$rc" = 2 ] && grep -q "dtol must be > 0" "$tmp/err"; then ok "--dtol 0 is refused with the library's message"
else fail "--dtol 0: exit $rc, $(head -n 1 "$tmp/err")"; fi
exit 0
