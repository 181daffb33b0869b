#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/dist.sh: strong and weak scaling of the distributed CG on 1
# and 2 GPUs (issue 14), written to bench/results/dist.md. Needs a build with
# NCCL (./configure reports it) and build/tests/tools/dist_bench... until
# `spsolve --gpus N` exists, it runs build/tests/gpu/test_dist_gpu for the
# correctness lines and times through the library with build/bin/spsolve
# when it accepts --gpus.
#   sh bench/dist.sh [BUILD_DIR]
set -eu
B=${1:-build}
out=bench/results/dist.md
tmp=$(mktemp)
{
    echo "# Distributed CG: 1 and 2 GPUs"
    echo
    echo "Machine: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' ')"
    echo "Date: $(date -u +%Y-%m-%d)"
    echo
    echo "## Correctness (tests/gpu/test_dist_gpu)"
    echo
    echo '```'
    "$B/tests/gpu/test_dist_gpu" 2>&1 || true
    echo '```'
    echo
    echo "## Strong scaling (CG, Jacobi, rtol 1e-8)"
    echo
    echo "| matrix | GPUs | iterations | ms/iteration | time to solution ms | speedup/iteration |"
    echo "|---|---|---|---|---|---|"
} >"$tmp"
row() { # spec gpus -> "| spec | gpus | it | ms/it | solve ms |"
    "$B/bin/spsolve" --gen "$1" --method cg --precond jacobi --gpus "$2" --json 2>/dev/null |
        python3 -c 'import json,sys; d=json.load(sys.stdin); print(d.get("iterations"), d.get("per_iter_ms"), d.get("solve_ms"))'
}
for spec in poisson3d:200 poisson3d:300; do
    set -- $(row "$spec" 1) ; it1=$1 ms1=$2 t1=$3
    set -- $(row "$spec" 2) ; it2=$1 ms2=$2 t2=$3
    sp=$(python3 -c "print('%.2f' % ($ms1/$ms2))" 2>/dev/null || echo "?")
    echo "| $spec | 1 | $it1 | $ms1 | $t1 | 1 |" >>"$tmp"
    echo "| $spec | 2 | $it2 | $ms2 | $t2 | $sp |" >>"$tmp"
done
{
    echo
    echo "## Weak scaling (poisson3d:N per GPU: N^3 rows per GPU)"
    echo
    echo "| matrix | GPUs | iterations | ms/iteration |"
    echo "|---|---|---|---|"
} >>"$tmp"
set -- $(row poisson3d:200 1); echo "| poisson3d:200 | 1 | $1 | $2 |" >>"$tmp"
set -- $(row poisson3d:252 2); echo "| poisson3d:252 (2 x 200^3 rows) | 2 | $1 | $2 |" >>"$tmp"
mkdir -p bench/results
mv "$tmp" "$out"
echo "wrote $out"
