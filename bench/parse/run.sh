#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/bench/parse/run.sh [BUILD_DIR] [mtx_throughput args...]: Matrix Market read
# throughput on a generated >= 200 MB file (plain and gzip), with the machine described.
# Output is Markdown-ready; bench/results/parse.md holds a run.
build=${1:-build}
[ $# -gt 0 ] && shift
tool=$build/tests/tools/mtx_throughput
[ -x "$tool" ] || { echo "build $tool first: make tests" >&2; exit 2; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(uname -sr)"
echo "command: $tool $*"
"$tool" "$@"
