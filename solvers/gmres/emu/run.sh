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
python3 - "$root/solvers/gmres/gmres_kernels.cu" "$tmp/products.inc" <<'PY'
import re, sys
s = open(sys.argv[1]).read()
k = s[s.index('/* The products since issue 9'):s.index('/* MODE 0:')]
h = s[s.index("/* h = V'w's plan"):s.index('/* second: the second Gram-Schmidt pass')]
out = k + h
def launch(m):
    name, cfg, args = m.group(1), m.group(2), m.group(3)
    depth, cut = 0, None
    for i, ch in enumerate(cfg):
        depth += ch in '(' ; depth -= ch in ')'
        if ch == ',' and depth == 0: cut = i; break
    return 'emu_launch(dim3(%s), dim3(%s), [&] { %s(%s); });' % (cfg[:cut], cfg[cut + 1:], name, args)
out, n = re.subn(r'([\w<>]+)<<<(.*?), 0, s>>>\((.*?)\);', launch, out, flags=re.S)
assert n > 0 and '<<<' not in out, 'a launch was not converted'
open(sys.argv[2], 'w').write(out)
PY
E=$root/solvers/gmres/emu
${CXX:-g++} -std=c++20 -O2 -I"$tmp" -I"$E" -I"$root" -I"$root/include" -I"$root/core" \
    "$E/harness.cc" -o "$tmp/harness" -lpthread
"$tmp/harness" "$@"
