#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/parse/threads.sh [BUILD_DIR] [MB] [THREADS...]: Matrix Market read throughput
# by thread count (sps_context_set_threads), plain text, gzip and .spsb, on two files:
#   random  mtx_throughput's random matrix (MB of text, entries in column order, %.16e values)
#   poisson spsolve --gen poisson3d:150 --save-matrix (427 MB, rows in order, %.17g values)
# Prints one line per (file, form, threads): MB/s of uncompressed text and the CSR build share.
# Needs build/tests/tools/{mtx_throughput,mtx_read} and build/bin/spsolve (make tests apps).
build=${1:-build}
mb=${2:-200}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] && shift
threads=${*:-1 2}
dir=${TMPDIR:-/tmp}/spsolve-parse-bench.$$
mkdir -p "$dir" || exit 2
trap 'rm -rf "$dir"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -sr)"
"$build/tests/tools/mtx_throughput" "$dir/random.mtx" --mb "$mb" --keep > "$dir/throughput.txt" || exit 1
grep -E '^(file|read|inflate)' "$dir/throughput.txt"
"$build/bin/spsolve" --gen poisson3d:150 --save-matrix "$dir/poisson.mtx" --info > /dev/null 2>&1 || exit 1
for f in random poisson; do
    "$build/bin/spsolve" -A "$dir/$f.mtx" --save-matrix "$dir/$f.spsb" --info > /dev/null 2>&1 || rm -f "$dir/$f.spsb"
    [ -f "$dir/$f.mtx.gz" ] || gzip -1 -k "$dir/$f.mtx"
    for form in mtx mtx.gz spsb; do
        [ -f "$dir/$f.$form" ] || continue
        for t in $threads; do
            "$build/tests/tools/mtx_read" "$dir/$f.$form" --threads "$t" --reps 3 | grep -v '^process'
        done
    done
done
