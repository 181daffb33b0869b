#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/run.sh BUILD_DIR: convergence regression.
# For each line of goldens.tsv, run `spsolve --json` and compare the iteration
# count (within max(2, 5%) of the golden) and the final true relative residual
# (must meet rtol, or be within 10x of the golden for non-converging cases) and
# the reason. Runs on the GPU when there is one (device "auto"), else on the host.
# Also runs the examples. Prints ok/FAIL/SKIP lines for tests/run.sh to count.
build=${1:-build}
here=$(dirname "$0")
spsolve=$build/bin/spsolve
[ -x "$spsolve" ] || { echo "FAIL - regression: $spsolve not built"; exit 1; }
field() { # field NAME JSON -> value (numbers and strings)
    printf '%s' "$2" | sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\)\"\{0,1\}[,}].*/\1/p"
}
tab=$(printf '\t')
while IFS="$tab" read -r matrix method precond spmv restart maxit iters relres reason; do
    case "$matrix" in ''|'#'*|matrix) continue ;; esac
    case "$matrix" in
    *:*) src="--gen $matrix" ;;
    *) path=""
       for d in "${SPS_MATRICES:-}" ../shared/matrices tests/data/real examples/data; do
           [ -n "$d" ] && [ -f "$d/$matrix.mtx.gz" ] && { path="$d/$matrix.mtx.gz"; break; }
       done
       if [ -z "$path" ]; then echo "SKIP - regression $matrix $method: matrix not present"; continue; fi
       src="-A $path" ;;
    esac
    name="regression $matrix $method/$precond/$spmv"
    out=$($spsolve $src --method "$method" --precond "$precond" --spmv "$spmv" \
        --restart "$restart" --maxit "$maxit" --json -q 2>&1)
    rc=$?
    got_it=$(field iterations "$out")
    got_rr=$(field true_rel_rnorm "$out")
    got_reason=$(field reason "$out")
    if [ -z "$got_it" ]; then
        echo "FAIL - $name: no result (exit $rc): $(printf '%s' "$out" | tail -n 2 | tr '\n' ' ')"
        continue
    fi
    verdict=$(awk -v gi="$got_it" -v wi="$iters" -v gr="$got_rr" -v wr="$relres" 'BEGIN {
        tol = wi * 0.05; if (tol < 2) tol = 2;
        d = gi - wi; if (d < 0) d = -d;
        if (d > tol) { print "iterations " gi ", golden " wi " (tolerance " tol ")"; exit }
        if (gr == "" || gr > 10 * wr + 1e-300) { print "true relative residual " gr ", golden " wr; exit }
        print "ok" }')
    if [ "$got_reason" != "$reason" ]; then
        echo "FAIL - $name: reason '$got_reason', golden '$reason'"
    elif [ "$verdict" = ok ]; then
        echo "ok - $name: $got_it iterations (golden $iters), true relres $got_rr"
    else
        echo "FAIL - $name: $verdict"
    fi
done < "$here/goldens.tsv"

for ex in minimal "poisson_fem 64 jacobi"; do
    set -- $ex
    prog=$build/examples/$1
    if [ ! -x "$prog" ]; then echo "FAIL - example $ex: not built"; continue; fi
    if out=$("$build/examples/$@" 2>&1); then
        echo "ok - example $ex: $(printf '%s' "$out" | tail -n 1)"
    else
        echo "FAIL - example $ex: $(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
    fi
done
