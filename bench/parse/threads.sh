#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/parse/threads.sh [BUILD_DIR] [MB] [THREADS...]: Matrix Market read throughput
# by thread count (sps_context_set_threads), plain text, gzip and .spsb, on two files:
#   random  mtx_throughput's random matrix (MB of text, entries in column order, %.16e values)
#   poisson spsolve --gen poisson3d:150 --save-matrix (427 MB, rows in order, %.17g values)
# Prints one line per (file, form, threads): the median of REPS reads (default 3; gzip: GZ_REPS,
# default 1) in MB/s of uncompressed text, the CSR build's share, and the CPU time of the
# whole mtx_read process (user and system, all reads) with the load average before it.
# Needs build/tests/tools/{mtx_throughput,mtx_read} and build/bin/spsolve (make tests apps).
# gzip copies are written at level 1 (fast); on 16 cores, 1000 MB: about 3-4 minutes.
build=${1:-build}
mb=${2:-200}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
threads=${*:-1 2}
reps=${REPS:-3}
gzreps=${GZ_REPS:-1}
dir=${TMPDIR:-/tmp}/spsolve-parse-bench.$$
mkdir -p "$dir" || exit 2
trap 'rm -rf "$dir"' EXIT
for tool in "$build/tests/tools/mtx_throughput" "$build/tests/tools/mtx_read" "$build/bin/spsolve"; do
    [ -x "$tool" ] || { echo "missing $tool: make tests apps" >&2; exit 2; }
done
timer=
[ -x /usr/bin/time ] && timer="/usr/bin/time -f cpu:%U:%S -o $dir/cpu"
load() { cut -d' ' -f1 /proc/loadavg 2>/dev/null; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -sr)"
"$build/tests/tools/mtx_throughput" "$dir/random.mtx" --mb "$mb" --keep --gzip-level 1 --no-strtod \
    > "$dir/throughput.txt" || exit 1
grep -E '^(file|read|inflate)' "$dir/throughput.txt"
"$build/bin/spsolve" --gen poisson3d:150 --save-matrix "$dir/poisson.mtx" --info > /dev/null 2>&1 || exit 1
for f in random poisson; do
    "$build/bin/spsolve" -A "$dir/$f.mtx" --save-matrix "$dir/$f.spsb" --info > /dev/null 2>&1 || rm -f "$dir/$f.spsb"
    [ -f "$dir/$f.mtx.gz" ] || gzip -1 -k "$dir/$f.mtx"
    for form in mtx mtx.gz spsb; do
        [ -f "$dir/$f.$form" ] || continue
        r=$reps
        [ "$form" = mtx.gz ] && r=$gzreps
        for t in $threads; do
            l=$(load)
            out=$($timer "$build/tests/tools/mtx_read" "$dir/$f.$form" --threads "$t" --reps "$r" | grep -v '^process')
            cpu=
            [ -n "$timer" ] && cpu=$(sed -n 's/^cpu:\(.*\):\(.*\)/; cpu of the process: user \1 s, sys \2 s/p' "$dir/cpu")
            echo "$out$cpu; load $l"
        done
    done
done
