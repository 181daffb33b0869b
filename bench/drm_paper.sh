#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/drm_paper.sh [BUILD_DIR] [OUT_DIR]: the DRM paper's comparison
# redone: drm (default mapping), drm:rows=0 (Algorithm 2), drm:nomerge,rows=0
# (HDIA), dia, csr-vector and both cuSPARSE algorithms, measured in one process
# per matrix, double and single, on the paper's matrices we have (add32,
# lns_3937, dw2048), the shared matrices tagged "diagonal" and two large
# generated diagonal ones. Writes OUT_DIR/drm_paper.md.
set -u
build=${1:-build}
out=${2:-bench/results}
raw=$out/raw_drm
mkdir -p "$raw"
mats=
for d in "${SPS_MATRICES:-}" ../shared/matrices .device/matrices tests/data/real; do
    if [ -n "$d" ] && [ -f "$d/dw2048.mtx.gz" ]; then mats=$d; break; fi
done
list="drm,drm:rows=0,drm:nomerge,rows=0,dia,csr-vector,cusparse,cusparse:alg2"
for m in add32 lns_3937 dw2048 bcsstk09 cryg2500 gr_30_30 nos2 nos3 nos6 olm1000 pde2961 \
         rdb2048 sherman1 sherman3 sherman5 Trefethen_2000 wang4; do
    [ -f "$mats/$m.mtx.gz" ] || continue
    "$build/bin/spmv-bench" -A "$mats/$m.mtx.gz" --spmv "$list" --precision both \
        --reps "${SPS_BENCH_REPS:-400}" -q --csv "$raw/$m.csv" --label "$m" || echo "$m failed"
done
for g in poisson3d:160 banded:2000000,9,0.01,1; do
    "$build/bin/spmv-bench" --gen "$g" --spmv "$list" --precision both \
        --reps "${SPS_BENCH_REPS:-400}" -q --csv "$raw/$(echo "$g" | tr ':,' '__').csv" --label "$g" ||
        echo "$g failed"
done
python3 bench/tables.py "$raw" "$out" --drm-only
