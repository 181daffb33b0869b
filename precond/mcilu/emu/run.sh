#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/precond/mcilu/emu/run.sh: run mcilu.cu's kernels on the CPU (no GPU
# needed) against the host reference, with precond/amg/emu's emulation (a
# launch runs its blocks in order, each block's threads one after the other;
# new device memory is filled with 0xa5). From the repository root:
#   sh precond/mcilu/emu/run.sh
# It copies the tracked tree to a temporary folder, builds the library there
# with ./configure --without-cuda, turns mcilu.cu into C++ (launches become
# emu_launch calls; 4 "SMs", so grids are capped at 128 blocks as on a GPU they
# are at 32 per SM) and runs harness.cc. Exit status 0 when every comparison
# holds.
set -e
root=$(pwd)
tmp=${TMPDIR:-/tmp}/mcilu_emu.$$
mkdir -p "$tmp/src"
trap 'rm -rf "$tmp"' EXIT
git ls-files | tar cf - -T - | (cd "$tmp/src" && tar xf -)
(cd "$tmp/src" && ./configure --without-cuda > /dev/null && make -j2 build/lib/libspsolve.a > /dev/null)
python3 - "$root/precond/mcilu/mcilu.cu" "$tmp/mcilu_emu.cc" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
s = s.replace('#include "../../core/cuda_check.cuh"', '#include "mcilu_emu.h"')
s = s.replace('#include "mcilu.h"', '#include "precond/mcilu/mcilu.h"')
s = s.replace('#include <cub/cub.cuh>', '')  # cuda_emu.h's std:: loops stand in for CUB
def launch(m):
    return '(void)(%s); emu_sync_kernel = 0; emu_launch(%s, %s, [&] { %s(%s); });' % (
        m.group(4), m.group(2), m.group(3), m.group(1), m.group(5))
arg = r'((?:[^,()]|\([^()]*\))+)'  # a launch argument: no comma outside one level of parentheses
s, n = re.subn(r'(\w+)<<<' + arg + ', ' + arg + r', 0, ([^>]+)>>>\((.*?)\);', launch, s, flags=re.S)
assert n > 0 and '<<<' not in s, 'a launch was not converted'
open(sys.argv[2], 'w').write(s)
PY
S=$tmp/src
E=$root/precond/mcilu/emu
CXX=${CXX:-g++}
$CXX -std=c++20 -O1 -Wall -Wextra -I"$E" -I"$root/precond/amg/emu" -I"$S" -I"$S/include" -I"$S/core" -I"$tmp" \
    "$E/harness.cc" "$root/precond/amg/emu/emu_rt.cc" "$S/build/lib/libspsolve.a" -o "$tmp/harness" \
    $(sed -n 's/^LIBS *= *//p' "$S/Makefile")
"$tmp/harness" "$@"
