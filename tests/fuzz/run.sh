#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/fuzz/run.sh [SECONDS] [READERS]: `make fuzz` (not part of make check).
# Builds the libFuzzer harness tests/fuzz/fuzz_read.c with clang (address and
# undefined-behaviour sanitizers, leak detection on) once per reader, then runs
# each reader for SECONDS (default 60) from the committed seeds in
# tests/fuzz/corpus/<reader>, all readers at once (FUZZ_JOBS, default: all).
# Readers: text (Matrix Market), gzip (the same reader on gzip input), vector,
# spsb. New inputs the fuzzer finds go to build/fuzz/corpus-<reader>, crashes
# to build/fuzz/crash-<reader>-*. Exit status 1 if any reader crashed, leaked
# or hung (a run longer than 10 s on one input), else 0.
set -u
secs=${1:-60}
readers=${2:-"text gzip vector spsb"}
cc=${FUZZ_CC:-clang}
out=build/fuzz
mkdir -p "$out"
command -v "$cc" >/dev/null 2>&1 || { echo "fuzz: $cc not found (FUZZ_CC=...)"; exit 2; }
srcs=$(ls core/[a-z]*.c io/[a-z]*.c gen/[a-z]*.c spmv/[a-z]*.c spmv/formats/[a-z]*.c \
       precond/[a-z]*.c precond/*/[a-z]*.c solvers/[a-z]*.c solvers/*/[a-z]*.c 2>/dev/null)
target_of() { case $1 in text|gzip) echo 0 ;; vector) echo 1 ;; spsb) echo 2 ;; esac; }
seeds_of() { case $1 in text) echo mtx ;; *) echo "$1" ;; esac; }
for t in 0 1 2; do
    bin=$out/fuzz_read_$t
    # rebuilt when the harness or any library source is newer than it
    if [ -x "$bin" ]; then
        stale=0
        for f in tests/fuzz/fuzz_read.c $srcs; do [ "$f" -nt "$bin" ] && { stale=1; break; }; done
        [ $stale = 0 ] && continue
    fi
    echo "fuzz: building $bin"
    # sps_config.h from ./configure --without-cuda (no CUDA in the harness)
    mkdir -p "$out/cfg"
    printf '#define SPS_HAVE_CUDA 0\n#define SPS_HAVE_LAPACKE 0\n#define SPS_HAVE_ZLIB 1\n' > "$out/cfg/sps_config.h"
    "$cc" -g -O1 -fsanitize=fuzzer,address,undefined -DFUZZ_TARGET=$t -D_POSIX_C_SOURCE=200809L \
        -I"$out/cfg" -I. -Iinclude -Icore tests/fuzz/fuzz_read.c $srcs -lz -lm -lpthread \
        -o "$bin" 2>"$out/build_$t.log" || { tail -n 20 "$out/build_$t.log"; exit 2; }
done
pids=
for r in $readers; do
    t=$(target_of "$r")
    mkdir -p "$out/corpus-$r"
    ( "$out/fuzz_read_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=4096 \
        -artifact_prefix="$out/crash-$r-" -print_final_stats=1 \
        "$out/corpus-$r" "tests/fuzz/corpus/$(seeds_of "$r")" >"$out/log-$r.txt" 2>&1
      echo $? >"$out/rc-$r" ) &
    pids="$pids $!"
done
wait $pids
fail=0
for r in $readers; do
    rc=$(cat "$out/rc-$r")
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/log-$r.txt")
    cov=$(grep -o 'cov: [0-9]*' "$out/log-$r.txt" | tail -n 1)
    if [ "$rc" = 0 ]; then echo "fuzz $r: ok, $secs s, ${runs:-?} inputs, $cov"
    else echo "fuzz $r: FAILED (exit $rc): see $out/log-$r.txt and $out/crash-$r-*"; fail=1; fi
done
exit $fail
