#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/run.sh BUILD_DIR: convergence regression.
# For each line of goldens.tsv, run `spsolve --json` and compare the iteration
# count (within max(2, 5%) of the golden), the reason, and the final true
# residual: a converged case must meet its tolerance (true relative residual
# <= rtol, or true residual <= atol for "converged (atol)"); a case that does
# not converge must end within 10x of the golden's true relative residual. Runs on the GPU when there is one (device "auto"), else on the host.
# Also runs the examples. Prints ok/FAIL/SKIP lines for tests/run.sh to count.
build=${1:-build}
here=$(dirname "$0")
spsolve=$build/bin/spsolve
[ -x "$spsolve" ] || { echo "FAIL - regression: $spsolve not built"; exit 1; }
field() { # field NAME JSON -> value (numbers and strings)
    printf '%s' "$2" | sed -n "s/.*\"$1\": \"\{0,1\}\([^,\"}]*\)\"\{0,1\}[,}].*/\1/p"
}
tab=$(printf '\t')
gpu_ok=0
"$spsolve" --gen poisson2d:4 --device gpu -q >/dev/null 2>&1 && gpu_ok=1
while IFS="$tab" read -r matrix method precond spmv restart maxit iters relres reason device; do
    case "$matrix" in ''|'#'*|matrix) continue ;; esac
    # device: empty (the GPU when there is one, else the host), cpu, or gpu
    # (automatic plans differ by device: doc/solvers.md)
    devopt=
    case "$device" in
    cpu) devopt="--device cpu" ;;
    gpu) if [ $gpu_ok = 0 ]; then echo "SKIP - regression $matrix $method/$precond on the GPU: no GPU"; continue; fi
         devopt="--device gpu" ;;
    esac
    case "$matrix" in
    *:*) src="--gen $matrix" ;;
    *) path=""
       for d in "${SPS_MATRICES:-}" ../shared/matrices tests/data/real examples/data; do
           [ -n "$d" ] && [ -f "$d/$matrix.mtx.gz" ] && { path="$d/$matrix.mtx.gz"; break; }
       done
       if [ -z "$path" ]; then echo "SKIP - regression $matrix $method: matrix not present"; continue; fi
       src="-A $path" ;;
    esac
    name="regression $matrix $method/$precond/$spmv${device:+ ($device)}"
    out=$($spsolve $src $devopt --method "$method" --precond "$precond" --spmv "$spmv" \
        --restart "$restart" --maxit "$maxit" --json -q 2>&1)
    rc=$?
    got_it=$(field iterations "$out")
    got_rr=$(field true_rel_rnorm "$out")
    got_reason=$(field reason "$out")
    got_rtol=$(field rtol "$out")
    got_atol=$(field atol "$out")
    got_rn=$(field true_rnorm "$out")
    if [ -z "$got_it" ]; then
        echo "FAIL - $name: no result (exit $rc): $(printf '%s' "$out" | tail -n 2 | tr '\n' ' ')"
        continue
    fi
    verdict=$(awk -v gi="$got_it" -v wi="$iters" -v gr="$got_rr" -v wr="$relres" -v why="$reason" \
        -v rtol="$got_rtol" -v atol="$got_atol" -v rn="$got_rn" 'BEGIN {
        tol = wi * 0.05; if (tol < 2) tol = 2;
        d = gi - wi; if (d < 0) d = -d;
        if (d > tol) { print "iterations " gi ", golden " wi " (tolerance " tol ")"; exit }
        if (gr == "") { print "no true relative residual"; exit }
        if (why == "converged (atol)") {
            if (rn == "" || rn + 0 > atol + 0) { print "converged (atol) but true residual " rn " > atol " atol; exit }
        } else if (why ~ /^converged/) {
            if (rtol == "" || gr + 0 > rtol + 0) { print "converged but true relative residual " gr " > rtol " rtol; exit }
        } else if (gr + 0 > 10 * wr + 1e-300) { print "true relative residual " gr ", golden " wr; exit }
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

# The CLI on malformed input: exit status 2, one stderr line naming FILE:LINE,
# and no output file left behind.
tmp=$(mktemp -d)
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 100000000000\n1 1 1\n' >"$tmp/huge.mtx"
{ printf '%%%%MatrixMarket matrix coordinate real general\n3 3 1\n'; head -c 10000000 /dev/zero | tr '\0' '1'; echo; } >"$tmp/longline.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1\n4 1 2\n' >"$tmp/index.mtx"
printf '%%%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1\n2 2 1\n' >"$tmp/short.mtx"
for f in huge longline index short; do
    "$spsolve" -A "$tmp/$f.mtx" -o "$tmp/x.txt" --device cpu >/dev/null 2>"$tmp/err"
    rc=$?
    line=$(head -n 1 "$tmp/err")
    if [ "$rc" = 2 ] && [ "$(wc -l <"$tmp/err")" = 1 ] &&
        printf '%s' "$line" | grep -q "$tmp/$f.mtx:[0-9][0-9]*: " && [ ! -e "$tmp/x.txt" ]; then
        echo "ok - CLI rejects $f.mtx: $line"
    else
        echo "FAIL - CLI on $f.mtx: exit $rc, stderr: $line"
    fi
done
rm -rf "$tmp"
