#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/block_cli.sh BUILD_DIR: the CLI's block solves and
# block products on the host (doc/spmm.md): spsolve -b with a 3-column array
# writes 3 columns, each bitwise the single solve of its column; a method
# without a block version is refused; spmv-bench --nrhs --check passes.
build=${1:-build}
spsolve=$build/bin/spsolve
bench=$build/bin/spmv-bench
[ -x "$spsolve" ] && [ -x "$bench" ] || { echo "FAIL - block_cli: $spsolve or $bench not built"; exit 0; }
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
n=144
awk -v n=$n 'BEGIN { print "%%MatrixMarket matrix array real general"; print n, 3;
    for (j = 0; j < 3; j++) for (i = 0; i < n; i++) printf "%.17g\n", (j == 1 ? 1 : sin(i * (j + 1) + j)) }' >"$dir/B.mtx"
for j in 0 1 2; do
    awk -v n=$n -v j=$j 'NR == 1 { print; next } NR == 2 { print n, 1; next }
        NR > 2 + j * n && NR <= 2 + (j + 1) * n' "$dir/B.mtx" >"$dir/b$j.mtx"
done
opts="--device cpu --gen poisson2d:12 --method cg --precond jacobi --spmv csr-vector"
# shellcheck disable=SC2086
json=$("$spsolve" $opts -b "$dir/B.mtx" -o "$dir/X.txt" --json -q); rc=$?
[ $rc -eq 0 ] && echo "ok - block_cli: block solve of 3 columns converged" ||
    echo "FAIL - block_cli: block solve exit $rc: $json"
cols=$(echo "$json" | grep -o '"columns": \[[^]]*\]' | grep -o '"iterations"' | wc -l)
[ "$cols" -eq 3 ] && echo "ok - block_cli: --json lists 3 columns" ||
    echo "FAIL - block_cli: --json lists $cols columns: $json"
same=1
for j in 0 1 2; do
    # shellcheck disable=SC2086
    "$spsolve" $opts -b "$dir/b$j.mtx" -o "$dir/x$j.txt" -q >/dev/null 2>&1 || same=0
    awk -v c=$((j + 1)) '{ print $c }' "$dir/X.txt" | cmp -s - "$dir/x$j.txt" || same=0
done
[ $same -eq 1 ] && echo "ok - block_cli: each column of -o bitwise equal to its single solve" ||
    echo "FAIL - block_cli: a column of the block differs from its single solve"
"$spsolve" --device cpu --gen poisson2d:12 -b "$dir/B.mtx" -o "$dir/X.mtx" -q >/dev/null 2>&1
[ "$(sed -n 2p "$dir/X.mtx" 2>/dev/null)" = "$n 3" ] && echo "ok - block_cli: -o X.mtx is a $n x 3 array" ||
    echo "FAIL - block_cli: -o X.mtx header: $(sed -n 1,2p "$dir/X.mtx" 2>/dev/null)"
"$spsolve" --device cpu --gen poisson2d:12 -b "$dir/B.mtx" --method gmres -q >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] && echo "ok - block_cli: gmres with 3 columns refused (exit 2)" ||
    echo "FAIL - block_cli: gmres with 3 columns: exit $rc, expected 2"
out=$("$bench" --device cpu --gen poisson2d:30 --nrhs 5 --reps 3 --check 2>&1); rc=$?
[ $rc -eq 0 ] && echo "$out" | grep -q 'check: passed' && echo "$out" | grep -q 'csr-vector *native' &&
    echo "ok - block_cli: spmv-bench --nrhs 5 --check passed" ||
    echo "FAIL - block_cli: spmv-bench --nrhs 5 --check: exit $rc: $out"
