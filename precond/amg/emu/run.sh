#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/precond/amg/emu/run.sh: run amg_dsetup.cu's device setup on the CPU
# (no GPU needed) against the host setup. From the repository root:
#   sh precond/amg/emu/run.sh [SPEC...]   (default: a set of generators, then edges)
# It copies the tracked tree to a temporary folder, builds the library there
# with ./configure --without-cuda, turns amg_dsetup.cu into C++ (launches
# become emu_launch calls; TB = 32 and 8 reduction blocks to keep the
# barrier-emulated kernels cheap, 3 blocks a coarse column's step: the code paths are the same; the kernels
# with __syncthreads or __syncwarp run their threads as std::threads), and runs
# harness.cc. Exit status 0 when every comparison holds. SPS_AMG_LANES and
# SPS_AMG_LONG in the environment reach the harness (amg_dsetup.cu's
# group_lanes, long_min).
set -e
root=$(pwd)
tmp=${TMPDIR:-/tmp}/amg_emu.$$
mkdir -p "$tmp/src"
trap 'rm -rf "$tmp"' EXIT
git ls-files | tar cf - -T - | (cd "$tmp/src" && tar xf -)
(cd "$tmp/src" && ./configure --without-cuda > /dev/null && make -j2 build/lib/libspsolve.a > /dev/null)
python3 - "$root/precond/amg/amg_dsetup.cu" "$tmp/dsetup_emu.cc" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = s.replace('#include "../../core/cuda_check.cuh"', '#include "cuda_emu.h"')
s = s.replace('#include "../cheby/cheby.h"', '#include "precond/cheby/cheby.h"')
s = s.replace('#include "../cheby/lanczos.cuh"', '#include "precond/cheby/lanczos.cuh"')
s = s.replace('#include "amg.h"', '#include "precond/amg/amg.h"').replace('#include <cub/cub.cuh>', '')
s = re.sub(r'^const int TB = 256;.*$', 'const int TB = 32;', s, flags=re.M)
s = re.sub(r'^const int RED_BLOCKS = 256;.*$', 'const int RED_BLOCKS = 8;', s, flags=re.M)
s = re.sub(r'^const int GJ_BLOCKS = 1024;.*$', 'const int GJ_BLOCKS = 3;', s, flags=re.M)
def launch(m):
    sync = m.group(1) in ('k_reduce_part', 'k_reduce_final', 'k_mis_update', 'k_grp_count', 'k_grp_numeric', 'k_grp_hash_global', 'k_gj_pivot',
                          'k_long_count', 'k_long_numeric', 'k_grp_into', 'k_long_into', 'k_gj_step', 'k_spmv')
    return 'emu_sync_kernel = %d; emu_launch(%s, %s, [&] { %s(%s); });' % (sync, m.group(2), m.group(3), m.group(1), m.group(5))
s, n = re.subn(r'(\w+)<<<([^,]+), ([^,]+), 0, ([^>]+)>>>\((.*?)\);', launch, s, flags=re.S)
assert n > 0 and '<<<' not in s, 'a launch was not converted'
open(sys.argv[2], 'w').write(s)
PY
S=$tmp/src
E=$root/precond/amg/emu
CXX=${CXX:-g++}
lapacke=
grep -q 'SPS_HAVE_LAPACKE 1' "$S/sps_config.h" && lapacke=-llapacke # the library's own need
$CXX -std=c++20 -O1 -I"$E" -I"$S" -I"$S/include" -I"$S/core" "$tmp/dsetup_emu.cc" "$E/emu_rt.cc" "$E/harness.cc" \
    "$S/build/lib/libspsolve.a" -o "$tmp/harness" $lapacke -lz -lm -lpthread
if [ $# -gt 0 ]; then
    "$tmp/harness" "$@"
else
    "$tmp/harness" poisson3d:14 poisson3d-jump:16,1e4 aniso3d:14,0.001 poisson2d:50 convdiff2d:30,0 \
        banded:2000,5,0.1,1 poisson3d27:10
    "$tmp/harness" edges
    # the group products with forced lane counts: 4 (tables of 32 slots:
    # many rows overflow into the one-thread path), 32, and one thread a row
    for lanes in 4 32 0; do
        echo "SPS_AMG_LANES=$lanes"
        SPS_AMG_LANES=$lanes "$tmp/harness" poisson3d:10 poisson3d-jump:12,1e4 poisson3d27:8
        SPS_AMG_LANES=$lanes "$tmp/harness" edges
    done
    # the long rows' blocks: every row long (rows of more than 1 term; the
    # emulation's tables of 384 slots send rows of more than 288 columns to
    # the global fallback), and rows of more than 64 terms long (blocks and
    # groups in one product)
    for long in 1 64; do
        echo "SPS_AMG_LONG=$long"
        SPS_AMG_LONG=$long "$tmp/harness" poisson3d:10 poisson3d-jump:12,1e4 poisson3d27:8
        SPS_AMG_LONG=$long "$tmp/harness" edges
    done
fi
