#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/solvers/gmres/emu/run_fuse.sh: run gmres_kernels.cu's fused
# Gram-Schmidt products (k_gt's own sums, k_gn_fin) on the CPU (no GPU
# needed) against the kernels one by one (k_gt + k_gt_sum, k_gn + k_gn_sum,
# as SPS_GM_FUSE=0 runs them), with the blocks of each launch in several
# orders (the last-ticket logic). From the repository root, after
# ./configure: sh solvers/gmres/emu/run_fuse.sh [quick]
# It cuts the products, the fused kernels and their launchers, and the block
# finish they call (rotate_scan, arnoldi_block) out of gmres_kernels.cu,
# block_sum out of solvers/kernels.cuh, turns the launches into emu_launch
# calls and builds fuse_harness.cc with them over onek_emu.h (each block's
# threads are fibers, one block at a time). Exit status 0 when every
# comparison holds.
set -e
root=$(pwd)
tmp=${TMPDIR:-/tmp}/gm_fuse_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 - "$root/solvers/kernels.cuh" "$root/solvers/gmres/gmres_kernels.cu" "$tmp/fuse.inc" "$root/solvers/gmres/emu" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[4])
import launches
from launches import cut
h = open(sys.argv[1]).read()
k = open(sys.argv[2]).read()
out = cut(h, 'template <int NS>\n__device__ __forceinline__ void block_sum', '/* Block totals into')
out += cut(k, '/* The previous rotations 0..j-1', '/* sps__gm_solve (gmres_state.h) on one block')
out += cut(k, '/* The products since issue 9', '/* The basis entries gm_bench times on.')
out += cut(k, '/* ---- the fused products (gm_ops gemv_n_fin)', '/* ---- end of the fused products */')
out += cut(k, "/* h = V'w's plan", '/* second: the second Gram-Schmidt pass')
out += cut(k, "/* The fused products (k_gt's sum, k_gn_fin) unless", 'static sps_status c_gemv_t(')
out = launches.to_emu(out, 4)
open(sys.argv[3], 'w').write(out)
PY
E=$root/solvers/gmres/emu
${CXX:-g++} -std=c++20 -O2 -Wno-unknown-pragmas -I"$tmp" -I"$E" -I"$root" -I"$root/include" -I"$root/core" \
    "$E/fuse_harness.cc" -o "$tmp/harness" -lm
"$tmp/harness" "$@"
