#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/solvers/bicgstab/emu/run_onek.sh: run bicgstab_kernels.cu's
# one-kernel path (k_bicg_onek_regs, k_bicg_onekernel) on the CPU (no GPU
# needed) over the GMRES emulation's block of 1024 fibers
# (solvers/gmres/emu/onek_emu.h), this tree's kernels against those of git
# revision BASE (default main), bitwise. From the repository root:
#   BASE=rev sh solvers/bicgstab/emu/run_onek.sh [quick]
# It cuts the one-kernel helpers (OKT .. the namespace's end) out of
# solvers/kernels.cuh and the kernels out of bicgstab_kernels.cu, of both
# revisions, into two namespaces. Exit status 0 when every comparison holds.
set -e
root=$(pwd)
base=${BASE:-main}
tmp=${TMPDIR:-/tmp}/bicg_onek_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
git show "$base:solvers/kernels.cuh" > "$tmp/base_kernels.cuh"
git show "$base:solvers/bicgstab/bicgstab_onek.cuh" > "$tmp/base_bicg.cu" 2>/dev/null ||
    git show "$base:solvers/bicgstab/bicgstab_kernels.cu" > "$tmp/base_bicg.cu"
python3 - "$tmp" "$root/solvers/kernels.cuh" "$root/solvers/bicgstab/bicgstab_onek.cuh" <<'PY'
import sys
tmp = sys.argv[1]
def cut(hpath, kpath, out):
    h = open(hpath).read()
    k = open(kpath).read()
    helpers = h[h.index('constexpr int OKT'):h.index('} /* namespace */')]
    kern = k[k.index('/* ---- the one-kernel engine'):k.index('template <bool JAC, int R>\nbool bicg_onek_regs_try')]
    assert kern.count('extern __shared__ double dyn[];') == 2
    kern = kern.replace('extern __shared__ double dyn[];', 'double *dyn = emu_dyn;')
    if 'struct onek_stage' not in helpers:
        # a base from before the staged entries: its kernel takes vals (a DIA
        # operator's values in shared memory, x global), which is the stage
        # of all DIA values with xs = 0; any other stage reads global memory
        # there, bitwise the same sums
        kern += '''
struct onek_stage { sps_idx nval, ncol; };
template <bool JAC, int R> void k_bicg_onek_regs(onek_bicg a, onek_stage g, int xs)
{
    k_bicg_onek_regs<JAC, R>(a, a.A.kind == SPS_ROWS_DIA && g.nval && !xs ? 1 : 0);
}
'''
    open(out, 'w').write(helpers + '\n' + kern)
cut(tmp + '/base_kernels.cuh', tmp + '/base_bicg.cu', tmp + '/onek_base.inc')
cut(sys.argv[2], sys.argv[3], tmp + '/onek_cur.inc')
PY
${CXX:-g++} -std=c++20 -O2 -Wall -Wno-unknown-pragmas -Wno-unused-function -I"$tmp" -I"$root/solvers/gmres/emu" \
    -I"$root" -I"$root/include" -I"$root/core" "$root/solvers/bicgstab/emu/onek_harness.cc" -o "$tmp/harness" -lm
echo "base: $base ($(git rev-parse --short "$base")); current: the working tree"
"$tmp/harness" "$@"
