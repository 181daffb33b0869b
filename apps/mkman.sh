#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/apps/mkman.sh PROGRAM [VERSION] > NAME.1: a man page made from the program's
# own --help and --version (the one source of the options), for make install
# and the CMake install. The help text goes in verbatim (.nf), escaped.
prog=$1
name=$(basename "$prog")
help=$("$prog" --help) || { echo "mkman: $prog --help failed" >&2; exit 1; }
version=${2:-$("$prog" --version 2>/dev/null | sed -n '1s/.* //p')}
# roff escapes: backslashes first, then a leading '.' or "'" made literal.
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }
usage=$(printf '%s\n' "$help" | sed -n '1s/^usage: //p')
summary=$(printf '%s\n' "$help" | sed -n '3p' | sed -e 's/:.*//' -e 's/\.$//')
body=$(printf '%s\n' "$help" | sed '1,3d')
printf '.TH %s 1 "" "spsolve %s" "User Commands"\n' "$(echo "$name" | tr 'a-z' 'A-Z')" "$version"
printf '.SH NAME\n%s \\- %s\n' "$name" "$(printf '%s' "$summary" | esc)"
printf '.SH SYNOPSIS\n.nf\n%s\n.fi\n' "$(printf '%s\n' "$usage" | esc)"
printf '.SH DESCRIPTION\n.nf\n%s\n.fi\n' "$(printf '%s\n' "$body" | esc)"
printf '.SH SEE ALSO\n'
if [ "$name" = spsolve ]; then printf '.BR spmv-bench (1)\n'; else printf '.BR spsolve (1)\n'; fi
printf '.PP\nThe README and doc/ of the spsolve sources; the library is described in spsolve.h.\n'
