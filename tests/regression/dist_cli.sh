#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/dist_cli.sh BUILD_DIR: spsolve --gpus N (issue 14)
# with --device cpu (N host ranks over the thread transport): 1 to 4 ranks
# converge in the same iterations to bitwise the same x (-o files equal);
# on a machine without a GPU, --gpus without --device cpu is a clear
# runtime error (exit 3); a method other than cg is bad usage (exit 2);
# mpiexec -n 3 spsolve --mpi --device cpu gives the same x (when MPI is here).
build=${1:-build}
sp=$build/bin/spsolve
[ -x "$sp" ] || { echo "FAIL - dist_cli: $sp not built"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
its=
for n in 1 2 3 4; do
    out=$("$sp" --gen poisson3d:16 --device cpu --gpus $n --method cg --precond jacobi -o "$tmp/x$n.mtx" 2>&1)
    rc=$?
    it=$(echo "$out" | sed -n 's/^result  *converged (rtol) after \([0-9]*\) iterations.*/\1/p')
    [ $rc = 0 ] && [ -n "$it" ] || { echo "FAIL - dist_cli: --gpus $n: exit $rc: $out"; continue; }
    its="$its $it"
done
set -- $its
if [ $# = 4 ] && [ "$1" = "$2" ] && [ "$1" = "$3" ] && [ "$1" = "$4" ] &&
    cmp -s "$tmp/x1.mtx" "$tmp/x2.mtx" && cmp -s "$tmp/x1.mtx" "$tmp/x3.mtx" && cmp -s "$tmp/x1.mtx" "$tmp/x4.mtx"; then
    echo "ok - dist_cli: --gpus 1..4 --device cpu: $1 iterations each, x files identical"
else
    echo "FAIL - dist_cli: iterations$its; x files differ or missing"
fi
"$sp" --gen poisson2d:30 --gpus 2 --device cpu --method gmres -q >/dev/null 2>&1
rc=$?
[ $rc = 2 ] && echo "ok - dist_cli: --gpus with gmres is bad usage (2)" || echo "FAIL - dist_cli: --gpus with gmres: exit $rc (2)"
if [ -z "$(command -v nvidia-smi)" ] || ! nvidia-smi -L >/dev/null 2>&1; then
    msg=$("$sp" --gen poisson2d:30 --gpus 2 -q 2>&1 >/dev/null)
    rc=$?
    case "$msg" in *"no GPU on this machine"*) ok=1 ;; *) ok=0 ;; esac
    [ $rc = 3 ] && [ $ok = 1 ] && echo "ok - dist_cli: --gpus 2 without a GPU: exit 3, said so" ||
        echo "FAIL - dist_cli: --gpus 2 without a GPU: exit $rc: $msg"
else
    echo "SKIP - dist_cli: --gpus without a GPU: this machine has one"
fi
# spsolve --mpi under mpiexec with host processes (MPI is the transport):
# 3 processes write bitwise the x of 1 rank.
if ! command -v mpiexec >/dev/null 2>&1; then
    echo "SKIP - dist_cli: --mpi: no mpiexec on this machine"
else
    msg=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpiexec --oversubscribe -n 3 \
        "$sp" --gen poisson3d:16 --device cpu --mpi --method cg --precond jacobi -q -o "$tmp/xm.mtx" 2>&1)
    rc=$?
    case "$msg" in
    *"has no MPI"*) echo "SKIP - dist_cli: --mpi: this build has no MPI" ;;
    *)
        if [ $rc = 0 ] && cmp -s "$tmp/x1.mtx" "$tmp/xm.mtx"; then
            echo "ok - dist_cli: mpiexec -n 3 spsolve --mpi --device cpu: x bitwise that of 1 rank"
        else
            echo "FAIL - dist_cli: mpiexec -n 3 spsolve --mpi: exit $rc: $msg"
        fi ;;
    esac
fi
