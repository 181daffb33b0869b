#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/install.sh BUILD_DIR: install into a DESTDIR
# staging (make install, or cmake --install when BUILD_DIR is a CMake build),
# then build programs outside the tree against the staged files: with
# pkg-config (spsolve.pc is relocatable: ${pcfiledir}) and with CMake
# (find_package(spsolve), tests/consumer/), shared and static (issue 16,
# item 9). Each tool that is missing is a SKIP.
build=${1:-build}
here=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/stage
prefix=/opt/spsolve-test
root=$stage$prefix

if [ -f "$build/CMakeCache.txt" ]; then
    how="cmake --install"
    DESTDIR=$stage cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1
else
    how="make install"
    make -s install B="$build" DESTDIR="$stage" prefix="$prefix" >"$tmp/install.log" 2>&1
fi
rc=$?
if [ $rc != 0 ]; then echo "FAIL - install: $how exit $rc: $(tail -n 3 "$tmp/install.log")"; exit 0; fi
libdir=$root/lib
[ -d "$libdir" ] || libdir=$(dirname "$(find "$root" -name libspsolve.a | head -n 1)")
missing=""
for f in include/spsolve.h bin/spsolve bin/spmv-bench share/man/man1/spsolve.1 share/man/man1/spmv-bench.1; do [ -e "$root/$f" ] || missing="$missing $f"; done
for f in libspsolve.a libspsolve.so pkgconfig/spsolve.pc cmake/spsolve/spsolve-config.cmake \
    cmake/spsolve/spsolve-config-version.cmake; do
    [ -e "$libdir/$f" ] || missing="$missing lib/$f"
done
[ -z "$missing" ] && echo "ok - install ($how): header, libraries, programs, man pages, spsolve.pc, CMake package" \
    || echo "FAIL - install ($how): missing$missing"

# A sanitizer build (make check-asan) installs a library that only programs
# built with the same sanitizer can load: the consumers are built for the
# plain build only.
if grep -q __asan_init "$libdir/libspsolve.so" 2>/dev/null; then
    echo "SKIP - install consumers: the library is a sanitizer build (make check-asan)"
    exit 0
fi

# pkg-config from the staging: every path must lie inside it.
if command -v pkg-config >/dev/null 2>&1; then
    flags=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs spsolve)
    case "$flags" in
    *"$stage"*) ;;
    *) echo "FAIL - install pkg-config: '$flags' does not point into the staging"; flags="" ;;
    esac
    if [ -n "$flags" ]; then
        # shellcheck disable=SC2086
        if cc -std=c11 -o "$tmp/pc_consumer" "$here/tests/consumer/main.c" $flags >"$tmp/cc.log" 2>&1 &&
            out=$(LD_LIBRARY_PATH=$libdir "$tmp/pc_consumer") && [ "${out#consumer ok}" != "$out" ]; then
            echo "ok - install pkg-config: relocatable prefix, a consumer builds and runs ($out)"
        else
            echo "FAIL - install pkg-config consumer: $(head -n 3 "$tmp/cc.log") $out"
        fi
    fi
else
    echo "SKIP - install pkg-config: no pkg-config"
fi

# CMake: find_package(spsolve) and the imported targets.
if command -v cmake >/dev/null 2>&1; then
    if cmake -S "$here/tests/consumer" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$root" \
        -DCMAKE_BUILD_TYPE=Release >"$tmp/cmake.log" 2>&1 &&
        cmake --build "$tmp/consumer" >>"$tmp/cmake.log" 2>&1; then
        out1=$(LD_LIBRARY_PATH=$libdir "$tmp/consumer/consumer")
        out2=$("$tmp/consumer/consumer_static")
        if [ "${out1#consumer ok}" != "$out1" ] && [ "${out2#consumer ok}" != "$out2" ]; then
            echo "ok - install CMake: find_package(spsolve), spsolve::spsolve and _static build and run ($out1)"
        else
            echo "FAIL - install CMake consumer ran: '$out1' '$out2'"
        fi
    else
        echo "FAIL - install CMake consumer: $(grep -m 3 -iE 'error|could not' "$tmp/cmake.log")"
    fi
else
    echo "SKIP - install CMake: no cmake"
fi
