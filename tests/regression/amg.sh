#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/amg.sh BUILD_DIR: spsolve --precond amg on the
# host (issue 11): the hierarchy in the summary, CG+amg against CG+jacobi on
# poisson3d:24, --nullspace rbm halving the iterations on elasticity3d:8,
# --nullspace's usage errors (exit 2), amg:setup=gpu on a host context (the
# host setup: the same iterations) and a bad setup= value (exit 2).
build=${1:-build}
b=$build/bin/spsolve
[ -x "$b" ] || { echo "FAIL - amg: $b not built"; exit 0; }
its() { echo "$1" | sed -n 's/^result  *converged (rtol) after \([0-9]*\) iterations.*/\1/p'; }

out=$("$b" --gen poisson3d:24 --method cg --precond amg --device cpu 2>&1)
a=$(its "$out")
j=$(its "$("$b" --gen poisson3d:24 --method cg --precond jacobi --device cpu 2>&1)")
if [ -n "$a" ] && [ -n "$j" ] && [ "$a" -le 10 ] && [ "$j" -gt $((5 * a)) ]; then
    echo "ok - amg: poisson3d:24 CG+amg $a iterations, CG+jacobi $j"
else
    echo "FAIL - amg: poisson3d:24 CG+amg '$a', CG+jacobi '$j': $out"
fi
echo "$out" | grep -q '^ *amg: [0-9]* levels, operator complexity' && echo "$out" | grep -q '^ *level 1: ' &&
    echo "$out" | grep -qE '^ *setup ms( \(setup=gpu\))?: strength' && echo "ok - amg: the summary shows the hierarchy" ||
    echo "FAIL - amg: no hierarchy in the summary: $out"

c=$(its "$("$b" --gen elasticity3d:8 --method cg --precond amg --device cpu 2>&1)")
out=$("$b" --gen elasticity3d:8 --method cg --precond amg --nullspace rbm --device cpu 2>&1)
r=$(its "$out")
if [ -n "$c" ] && [ -n "$r" ] && [ $((2 * r)) -lt "$c" ]; then
    echo "ok - amg: elasticity3d:8 --nullspace rbm $r iterations, constant vector $c"
else
    echo "FAIL - amg: elasticity3d:8 rbm '$r', constant '$c': $out"
fi

for args in "--gen poisson3d:8 --method cg --precond amg --nullspace rbm" \
            "--gen elasticity3d:4 --method cg --precond jacobi --nullspace rbm" \
            "--gen elasticity3d:4 --precond amg --nullspace rbm" \
            "--gen elasticity3d:4 --method cg --precond amg --nullspace zero"; do
    "$b" $args --device cpu >/dev/null 2>&1
    rc=$?
    [ $rc = 2 ] && echo "ok - amg: '$args' is a usage error" || echo "FAIL - amg: '$args' exit $rc, not 2"
done

g=$(its "$("$b" --gen poisson3d:24 --method cg --precond amg:setup=gpu --device cpu 2>&1)")
[ -n "$g" ] && [ "$g" = "$a" ] && echo "ok - amg: setup=gpu on the host is the host setup ($g iterations)" ||
    echo "FAIL - amg: setup=gpu on the host '$g' iterations, amg '$a'"
err=$("$b" --gen poisson3d:8 --method cg --precond amg:setup=fast --device cpu 2>&1)
rc=$?
[ $rc = 2 ] && echo "$err" | grep -q "setup='fast' is not host or gpu" && echo "ok - amg: setup=fast is refused" ||
    echo "FAIL - amg: setup=fast exit $rc: $err"
