#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/run.sh [BUILD_DIR] [OUT_DIR]: `make bench`.
# Runs spmv-bench (double and single) on every matrix of the shared set (or the
# bundled subset) and on three large generated ones, then writes the markdown
# tables of bench/results/ with bench/tables.py. Needs a GPU; on a machine
# without one it checks the host references instead (spmv-bench --device cpu).
# spmv-bench's default list holds every backend, the benchmark rows ell, coo,
# bsr and lightspmv included; a refusal (DIA's fill limit, the padding bound of
# ELL and BSR) is an `r` cell, not a --check failure. SPS_BENCH_SPMV=LIST runs
# only LIST (spmv-bench --spmv), e.g. "csr-vector,cusparse,ell,coo,bsr,lightspmv".
set -u
build=${1:-build}
out=${2:-bench/results}
raw=$out/raw
mkdir -p "$raw"
bench=$build/bin/spmv-bench
[ -x "$bench" ] || { echo "bench: $bench not built (make first)"; exit 1; }

mats=
for d in "${SPS_MATRICES:-}" ../shared/matrices .device/matrices tests/data/real; do
    if [ -n "$d" ] && [ -d "$d" ] && ls "$d"/*.mtx.gz >/dev/null 2>&1; then mats=$d; break; fi
done
gens=${SPS_BENCH_GENS:-"poisson3d:160 banded:2000000,9,0.01,1 powerlaw:1000000,16,1"}
reps=${SPS_BENCH_REPS:-500}
spmv=${SPS_BENCH_SPMV:-all}
dev=gpu
prec=both
if ! "$bench" --gen poisson2d:4 --spmv csr-scalar --reps 1 -q 2>/dev/null; then
    echo "bench: no GPU: checking the host references only (--device cpu)"
    dev=cpu; prec=double
fi
echo "bench: matrices from $mats, generated: $gens, $reps reps, device $dev"
fail=0
for f in "$mats"/*.mtx.gz; do
    name=$(basename "$f" .mtx.gz)
    printf '%-18s ' "$name"
    if "$bench" -A "$f" --precision $prec --device $dev --reps "$reps" --spmv "$spmv" --check -q \
        --csv "$raw/$name.csv" --label "$name"; then echo ok; else echo "CHECK FAILED"; fail=1; fi
done
for g in $gens; do
    [ "$dev" = cpu ] && break
    name=$(echo "$g" | tr ':,' '__')
    printf '%-18s ' "$g"
    if "$bench" --gen "$g" --precision $prec --device $dev --reps "$reps" --spmv "$spmv" --check -q \
        --csv "$raw/$name.csv" --label "$g"; then echo ok; else echo "CHECK FAILED"; fail=1; fi
done
python3 bench/tables.py "$raw" "$out" || fail=1
exit $fail
