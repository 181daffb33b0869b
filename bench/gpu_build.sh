#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/gpu_build.sh: configure and build for the GPU of this machine
# (its compute capability only, so the build is quick), with every test and
# example. Falls back to headers in .device/ where the machine lacks zlib's.
set -u
out=${OUT:-/tmp}
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '. ')
cc=${cc:-90}
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader 2>&1 | head -n 1
if ! ./configure --with-gpu-arch="$cc" >"$out/configure.log" 2>&1; then
    ./configure --with-gpu-arch="$cc" CFLAGS="-I$PWD/.device/include" LDFLAGS="-L$PWD/.device/lib" \
        >"$out/configure.log" 2>&1 || { cat "$out/configure.log"; exit 1; }
fi
tail -n 8 "$out/configure.log"
start=$(date +%s)
make -j"$(nproc)" all tests examples >"$out/build.log" 2>&1 || { grep -E 'error|Error' "$out/build.log" | head -n 30; exit 1; }
echo "build: $(( $(date +%s) - start )) s, warnings: $(grep -cE 'warning( #[0-9]+-D)?:' "$out/build.log")"
