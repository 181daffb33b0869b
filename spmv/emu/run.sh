#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/spmv/emu/run.sh: run spmm_panel.cu's kernel (SPS_SPMM_PANEL) on the
# CPU, with precond/amg/emu's emulation (a launch runs its blocks in order,
# each block's threads as std::threads meeting at a barrier for
# __syncthreads), against the host reference sps__panel_spmm, bitwise. From
# the repository root:
#   sh spmv/emu/run.sh [MATRIX.mtx[.gz] ...]
# It copies the tracked tree to a temporary folder, builds the library there
# with ./configure --without-cuda, turns spmm_panel.cu into C++ (launches
# become emu_launch calls) and runs harness.cc under AddressSanitizer and
# UBSan (out-of-bounds reads of the panel arrays, X, Y and the shared tile
# show). Exit status 0 when every comparison holds.
set -e
root=$(pwd)
tmp=${TMPDIR:-/tmp}/panel_emu.$$
mkdir -p "$tmp/src"
trap 'rm -rf "$tmp"' EXIT
git ls-files | tar cf - -T - | (cd "$tmp/src" && tar xf -)
cp "$root/spmv/spmm_panel.cu" "$root/spmv/spmm.c" "$root/spmv/spmm.h" "$tmp/src/spmv/" # uncommitted edits too
(cd "$tmp/src" && ./configure --without-cuda --without-lapacke > /dev/null && make -j2 build/lib/libspsolve.a > /dev/null)
python3 - "$root/spmv/spmm_panel.cu" "$tmp/spmm_panel_emu.cc" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = s.replace('#include "core/cuda_check.cuh"', '#include "panel_emu.h"')
s = s.replace('#include "spmm.h"', '#include "spmv/spmm.h"')
def launch(m):
    return 'emu_sync_kernel = 1; emu_launch(%s, %s, [&] { %s(%s); });' % (m.group(2), m.group(3), m.group(1), m.group(5))
s, n = re.subn(r'(\w+)<<<([^,]+), ([^,]+), 0, ([^>]+)>>>\((.*?)\);', launch, s, flags=re.S)
assert n == 2 and '<<<' not in s, 'a launch was not converted'
open(sys.argv[2], 'w').write(s)
PY
S=$tmp/src
E=$root/spmv/emu
CXX=${CXX:-g++}
$CXX -std=c++20 -O1 -g -Wall -Wextra -Wno-unused-variable -Wno-unknown-pragmas -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    -I"$E" -I"$root/precond/amg/emu" -I"$S" -I"$S/include" -I"$S/core" -I"$tmp" \
    "$E/harness.cc" "$root/precond/amg/emu/emu_rt.cc" "$S/build/lib/libspsolve.a" -o "$tmp/harness" \
    -lz -lm -lpthread
"$tmp/harness" "$@"
