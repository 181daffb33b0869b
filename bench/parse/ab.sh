#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/parse/ab.sh OLD NEW THREADS FILE...: two builds of mtx_read (OLD, NEW: paths
# to build/tests/tools/mtx_read of two checkouts) alternated on each FILE and thread count
# (THREADS: e.g. "1 2"), median of REPS reads (default 5), with the CPU time of the whole
# process (user, system; /usr/bin/time) and the 1-minute load average before each run.
old=$1 new=$2 threads=$3
shift 3
reps=${REPS:-5}
tmp=${TMPDIR:-/tmp}/spsolve-ab.$$
trap 'rm -f "$tmp".*' EXIT
for f in "$@"; do
    for t in $threads; do
        for b in old new; do
            [ $b = old ] && bin=$old || bin=$new
            l=$(cut -d' ' -f1 /proc/loadavg)
            /usr/bin/time -f "%U %S" -o "$tmp.cpu" "$bin" "$f" --threads "$t" --reps "$reps" > "$tmp.out" 2>&1
            ms=$(sed -n 's/.*read \([0-9.]*\) ms (median.*/\1/p' "$tmp.out")
            asm=$(sed -n 's/.*last: \([0-9.]*\) ms of it.*/\1/p' "$tmp.out")
            echo "$f threads $t $b: $ms ms (CSR build $asm ms); cpu user, sys: $(cat "$tmp.cpu") s for $reps reads; load $l"
        done
    done
done
