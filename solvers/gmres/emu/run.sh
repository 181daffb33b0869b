#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/solvers/gmres/emu/run.sh: run gmres_kernels.cu's Gram-Schmidt
# products on the CPU (no GPU needed) against host loops. From the repository
# root, after ./configure: sh solvers/gmres/emu/run.sh [quick] (quick: the
# small shapes only, about 8 minutes on 2 busy cores)
# It cuts the products' kernels and launchers out of gmres_kernels.cu, turns
# the launches into emu_launch calls (gm_emu.h) and builds harness.cc with
# them. Exit status 0 when every comparison holds.
set -e
root=$(pwd)
tmp=${TMPDIR:-/tmp}/gm_emu.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
python3 - "$root/solvers/gmres/gmres_kernels.cu" "$tmp/products.inc" "$root/solvers/gmres/emu" <<'PY'
import sys
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[3])
import launches
s = open(sys.argv[1]).read()
k = s[s.index('/* The products since issue 9'):s.index('/* MODE 0:')]
h = s[s.index("/* h = V'w's plan"):s.index('/* second: the second Gram-Schmidt pass')]
out = launches.to_emu(k + h)
open(sys.argv[2], 'w').write(out)
PY
E=$root/solvers/gmres/emu
${CXX:-g++} -std=c++20 -O2 -I"$tmp" -I"$E" -I"$root" -I"$root/include" -I"$root/core" \
    "$E/harness.cc" -o "$tmp/harness" -lpthread
"$tmp/harness" "$@"
