#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/solvers/gmres/emu/run_dcgs2.sh: run gmres_kernels.cu's DCGS2
# kernels (k_dp: the products and the step's finish; k_dc: the corrections;
# k_gm_solve's y = U y) on the CPU (no GPU needed) against the host
# reference (gmres_host.c's gm_ops dprod, dcorr, solve, compiled as C and
# linked in), with the blocks of each launch in order, reversed and
# shuffled. From the repository root, after ./configure:
#   sh solvers/gmres/emu/run_dcgs2.sh [quick]
# It cuts the pieces dcgs2_harness.cc needs out of gmres_kernels.cu (as
# run_fuse.sh does, plus "the delayed products" and their launchers, and
# k_gm_solve), block_sum out of solvers/kernels.cuh, turns the launches into
# emu_launch calls and builds dcgs2_harness.cc over onek_emu.h (each block's
# threads are fibers, one block at a time). Exit status 0 when every
# comparison holds.
set -e
root=$(pwd)
tmp=${TMPDIR:-/tmp}/gm_dcgs2_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 - "$root/solvers/kernels.cuh" "$root/solvers/gmres/gmres_kernels.cu" "$tmp/dcgs2.inc" "$root/solvers/gmres/emu" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[4])
import launches
from launches import cut
h = open(sys.argv[1]).read()
k = open(sys.argv[2]).read()
out = cut(h, 'template <int NS>\n__device__ __forceinline__ void block_sum', '/* Block totals into')
out += cut(k, '/* The previous rotations 0..j-1', '/* Gram-Schmidt\'s two products, ours rather')
out += cut(k, '/* The products since issue 9', '/* The basis entries gm_bench times on.')
out += cut(k, '/* ---- the fused products (gm_ops gemv_n_fin)', '/* ---- end of the fused products */')
out += cut(k, '/* ---- the delayed products (DCGS2', '/* ---- end of the delayed products */')
out += cut(k, "/* h = V'w's plan", '/* second: the second Gram-Schmidt pass')
out += cut(k, "/* The fused products (k_gt's sum, k_gn_fin) unless", 'static sps_status c_gemv_t(')
out += cut(k, '/* ---- the delayed launchers (DCGS2)', '/* ---- end of the delayed launchers */')
out = launches.to_emu(out, 5)
open(sys.argv[3], 'w').write(out)
PY
E=$root/solvers/gmres/emu
${CC:-gcc} -std=c11 -O2 -I"$root" -I"$root/include" -I"$root/core" -c "$root/solvers/gmres/gmres_host.c" -o "$tmp/gmres_host.o"
${CXX:-g++} -std=c++20 -O2 -Wno-unknown-pragmas -I"$tmp" -I"$E" -I"$root" -I"$root/include" -I"$root/core" \
    "$E/dcgs2_harness.cc" "$tmp/gmres_host.o" -o "$tmp/harness" -lm
"$tmp/harness" "$@"
