#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/precond/cheby/emu/run.sh: run cheby_steps.cuh's applies (fused and
# unfused) on the CPU (no GPU needed) against each other and the host
# reference. From the repository root:
#   SPS_MATRICES=/path/to/matrices sh precond/cheby/emu/run.sh
# It copies the tracked tree to a temporary folder, builds the library there
# with ./configure --without-cuda and links harness.cc (which includes
# cheby_steps.cuh over emu.h) with it. Exit status 0 when every comparison
# holds.
set -e
root=$(pwd)
tmp=${TMPDIR:-/tmp}/cheby_emu.$$
mkdir -p "$tmp/src"
trap 'rm -rf "$tmp"' EXIT
git ls-files -co --exclude-standard | tar cf - -T - | (cd "$tmp/src" && tar xf -)
(cd "$tmp/src" && ./configure --without-cuda > /dev/null && make -j2 build/lib/libspsolve.a > /dev/null)
S=$tmp/src
E=$S/precond/cheby/emu
${CXX:-g++} -std=c++20 -O2 -mfma -ffp-contract=fast -Wall -Wextra -I"$E" -I"$S" -I"$S/include" -I"$S/core" \
    "$E/harness.cc" "$S/build/lib/libspsolve.a" -o "$tmp/harness" $(sed -n 's/^LIBS *= *//p' "$S/Makefile")
"$tmp/harness" "$@"
