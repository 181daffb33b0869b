#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/tests/regression/lapacke.sh BUILD_DIR: a machine without LAPACKE
# builds by default (issue 10, item 6). In a scratch copy of the sources,
# with a compiler wrapper that refuses -llapacke (LAPACKE hidden):
# ./configure --without-cuda succeeds and names liblapacke-dev in one line;
# ./configure --with-lapacke fails; the library, spsolve and the tests with
# dense checks build with zero warnings and pass, their LAPACKE comparisons
# SKIPPED. Prints ok/FAIL/SKIP lines for tests/run.sh. About a minute.
# SPS_SKIP_LAPACKE_TEST=1 skips it.
here=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${SPS_SKIP_LAPACKE_TEST:-}" ]; then echo "SKIP - lapacke: SPS_SKIP_LAPACKE_TEST set"; exit 0; fi
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP - lapacke: no C compiler '$cc'"; exit 0; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/src" "$tmp/bin"
(cd "$here" && tar --exclude=./build --exclude=./build-asan --exclude=./.git --exclude=./Makefile \
    --exclude=./sps_config.h --exclude=./config.status -cf - .) | (cd "$tmp/src" && tar xf -)
cat >"$tmp/bin/cc" <<EOF
#!/bin/sh
for a in "\$@"; do case "\$a" in -llapacke*) echo "cc: LAPACKE hidden by tests/regression/lapacke.sh" >&2; exit 1 ;; esac; done
exec $(command -v "$cc") "\$@"
EOF
chmod +x "$tmp/bin/cc"
cd "$tmp/src" || exit 1

if ./configure --with-lapacke --without-cuda CC="$tmp/bin/cc" >conf1.txt 2>&1; then
    echo "FAIL - lapacke: --with-lapacke succeeded with LAPACKE hidden"
elif grep -q "liblapacke-dev" conf1.txt; then
    echo "ok - lapacke: --with-lapacke fails when LAPACKE is missing, naming liblapacke-dev"
else
    echo "FAIL - lapacke: --with-lapacke failed without naming liblapacke-dev: $(tail -n 1 conf1.txt)"
fi

if ! ./configure --without-cuda CC="$tmp/bin/cc" >conf.txt 2>&1; then
    echo "FAIL - lapacke: configure stopped without LAPACKE: $(tail -n 2 conf.txt | tr '\n' ' ')"
    exit 0
fi
n=$(grep -c "liblapacke-dev" conf.txt)
if [ "$n" -eq 1 ] && grep -q "LAPACKE: *no" conf.txt && grep -q "^#define SPS_HAVE_LAPACKE 0" sps_config.h; then
    echo "ok - lapacke: configure goes on without LAPACKE, one line naming liblapacke-dev"
else
    echo "FAIL - lapacke: configure output without LAPACKE: $(grep -i lapacke conf.txt | tr '\n' ' ')"
fi

unset MAKEFLAGS MFLAGS MAKELEVEL
targets="build/bin/spsolve build/tests/unit/test_solvers build/tests/unit/test_solvers_api"
if ! make -j2 $targets >make.txt 2>&1; then
    echo "FAIL - lapacke: build without LAPACKE: $(grep -m3 -i 'error' make.txt | tr '\n' ' ')"
    exit 0
fi
if grep -v '^make' make.txt | grep -q "warning:"; then
    echo "FAIL - lapacke: warnings in the build without LAPACKE: $(grep -m2 'warning:' make.txt | tr '\n' ' ')"
else
    echo "ok - lapacke: library, spsolve and tests build without LAPACKE, zero warnings"
fi
for t in test_solvers test_solvers_api; do
    out=$(./build/tests/unit/$t 2>&1)
    rc=$?
    nf=$(printf '%s\n' "$out" | grep -c '^FAIL')
    ns=$(printf '%s\n' "$out" | grep -c '^SKIP.*LAPACKE')
    if [ "$rc" -ne 0 ] || [ "$nf" -ne 0 ]; then
        echo "FAIL - lapacke: $t without LAPACKE: exit $rc, $nf failures: $(printf '%s\n' "$out" | grep -m2 '^FAIL' | tr '\n' ' ')"
    elif [ "$ns" -eq 0 ]; then
        echo "FAIL - lapacke: $t without LAPACKE reported no SKIPPED LAPACKE check"
    else
        echo "ok - lapacke: $t passes without LAPACKE, $ns LAPACKE checks SKIPPED"
    fi
done
out=$(./build/bin/spsolve --gen poisson2d:8 --device cpu --verify 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && printf '%s' "$out" | grep -q "verify .*LAPACKE"; then
    echo "ok - lapacke: spsolve --verify without LAPACKE solves and says why it cannot verify"
else
    echo "FAIL - lapacke: spsolve --verify without LAPACKE: exit $rc: $(printf '%s' "$out" | grep -m1 verify)"
fi
exit 0
