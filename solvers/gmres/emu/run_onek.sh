#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/solvers/gmres/emu/run_onek.sh: run gmres_onek.cuh's one-kernel
# path (k_gm_onekernel) on the CPU (no GPU needed) against the host driver's
# steps. From the repository root, after ./configure:
#   sh solvers/gmres/emu/run_onek.sh [quick]
# It cuts the kernels (k_gm_onekernel, and k_gm_cluster with C blocks) out of
# gmres_onek.cuh and the one-kernel helpers (OKT,
# onek_sum, onek_rows) out of solvers/kernels.cuh, includes onek_row's
# spmv/dev_rows.cuh before them, and builds
# onek_harness.cc with them over onek_emu.h (one block of 1024 fibers; C
# blocks of fibers for the cluster kernel). Exit
# status 0 when every comparison holds. SPS_EMU_CLUSTERS="1 2 8 16" (the
# default) lists the cluster sizes run, SPS_EMU_ONEBLOCK=0 leaves out the
# one block's cases.
set -e
root=$(pwd)
tmp=${TMPDIR:-/tmp}/gm_onek_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 - "$root/solvers/kernels.cuh" "$root/solvers/gmres/gmres_onek.cuh" "$tmp/onek.inc" <<'PY'
import sys
h = open(sys.argv[1]).read()
k = open(sys.argv[2]).read()
helpers = h[h.index('constexpr int OKT'):h.index('} /* namespace */')]
kern = k[k.index('/* ---- the one-kernel engine'):k.index("/* K's dynamic shared memory")]
kern += k[k.index('/* ---- the cluster kernel'):k.index('/* ---- end of the cluster kernel */')]
assert kern.count('extern __shared__ double dyn[];') == 2
kern = kern.replace('extern __shared__ double dyn[];', 'double *dyn = emu_dyn;')
open(sys.argv[3], 'w').write('#include "spmv/dev_rows.cuh"\n' + helpers + '\n' + kern)
PY
E=$root/solvers/gmres/emu
${CC:-gcc} -std=c11 -O2 -I"$root" -I"$root/include" -I"$root/core" -c "$root/solvers/gmres/gmres_host.c" \
    -o "$tmp/gmres_host.o"
${CXX:-g++} -std=c++20 -O2 -Wno-unknown-pragmas -I"$tmp" -I"$E" -I"$root" -I"$root/include" -I"$root/core" \
    "$E/onek_harness.cc" "$tmp/gmres_host.o" -o "$tmp/harness" -lm
"$tmp/harness" "$@"
