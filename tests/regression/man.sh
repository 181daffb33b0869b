#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/man.sh BUILD_DIR: the man pages made from --help
# (apps/mkman.sh) render without a groff warning, have NAME, SYNOPSIS and
# DESCRIPTION, and carry every option --help lists, literally (issue 16,
# item 9).
build=${1:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for prog in spsolve spmv-bench; do
    exe=$build/bin/$prog
    [ -x "$exe" ] || { echo "FAIL - man $prog: $exe not built"; continue; }
    if ! sh apps/mkman.sh "$exe" 0.0.test >"$tmp/$prog.1" 2>"$tmp/err"; then
        echo "FAIL - man $prog: mkman failed: $(cat "$tmp/err")"; continue
    fi
    for s in '^\.TH ' '^\.SH NAME' '^\.SH SYNOPSIS' '^\.SH DESCRIPTION' "^$prog \\\\- [A-Z]"; do
        grep -q "$s" "$tmp/$prog.1" || echo "FAIL - man $prog: no /$s/"
    done
    if ! command -v groff >/dev/null 2>&1; then echo "SKIP - man $prog: no groff to render it"; continue; fi
    LC_ALL=C groff -man -Tascii -ww "$tmp/$prog.1" >"$tmp/$prog.txt" 2>"$tmp/warn"
    [ -s "$tmp/warn" ] && echo "FAIL - man $prog: groff: $(head -n 2 "$tmp/warn")"
    missing=""
    for opt in $("$exe" --help | grep -oE '(^| )--?[a-zA-Z][a-zA-Z-]*' | sort -u); do
        grep -qe "$opt" "$tmp/$prog.txt" || missing="$missing $opt"
    done
    n=$("$exe" --help | grep -oE '(^| )--?[a-zA-Z][a-zA-Z-]*' | sort -u | wc -l)
    [ -z "$missing" ] && echo "ok - man $prog: renders, every one of the $n options of --help in it" \
        || echo "FAIL - man $prog: missing$missing"
done
