#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/matrix_free.sh BUILD_DIR: examples/matrix_free (a
# user operator and a user preconditioner, issue 16 item 8) converges with and
# without its Jacobi callback, to x = ones, and the callback cuts the
# iterations.
build=${1:-build}
ex=$build/examples/matrix_free
[ -x "$ex" ] || { echo "FAIL - matrix_free: $ex not built"; exit 0; }
out=$("$ex" 400)
rc=$?
plain=$(echo "$out" | sed -n 's/^cg  *converged (rtol) after \([0-9]*\) iterations.*/\1/p')
jac=$(echo "$out" | sed -n 's/^cg + user jacobi converged (rtol) after \([0-9]*\) iterations.*/\1/p')
if [ $rc = 0 ] && [ -n "$plain" ] && [ -n "$jac" ] && [ "$jac" -le 400 ] && [ "$plain" -gt $((2 * jac)) ]; then
    echo "ok - matrix_free: both converge; the user jacobi: $jac iterations against $plain"
else
    echo "FAIL - matrix_free: exit $rc: $out"
fi
echo "$out" | grep -q 'max |x - 1| = [0-9.]*e-1[0-9]' && echo "ok - matrix_free: x = ones to 1e-10" \
    || echo "FAIL - matrix_free: error too large: $out"
