#!/bin/sh
# SPDX-License-Identifier: MIT
# spsolve/spmv/formats/drm_emu/run.sh: run drm_convert.cu's DRM kernels
# (seg_count_kernel, scatter_kernel) and drm.cu's upload and fetch on the CPU
# (no GPU needed) against the host conversion. From the repository root:
#   SPS_MATRICES=/work/shared/matrices sh spmv/formats/drm_emu/run.sh [quick] [only] [SPEC...]
# (quick: no banded:200000 and no real matrices; only: just the SPECs given,
# e.g. poisson3d:160, minutes each at 4M rows)
# It copies the tree (tracked and untracked, not ignored) to a temporary
# folder, builds the library there with ./configure --without-cuda, cuts the
# kernels out of drm_convert.cu and builds harness.cc over emu.h (a warp's
# lanes are fibers). Exit status 0 when every comparison holds.
set -e
root=$(pwd)
tmp=${TMPDIR:-/tmp}/drm_emu.$$
mkdir -p "$tmp/src"
trap 'rm -rf "$tmp"' EXIT
git ls-files -co --exclude-standard | tar cf - -T - | (cd "$tmp/src" && tar xf -)
(cd "$tmp/src" && ./configure --without-cuda > /dev/null && make -j2 build/lib/libspsolve.a > /dev/null)
python3 - "$root/spmv/formats/drm_convert.cu" "$tmp/drm_kernels.inc" <<'PY'
import sys
s = open(sys.argv[1]).read()
a = s.index('constexpr int NOFF')
b = s.index('/* DIA: flag every offset')
k = s[a:b]
for name in ('seg_count_kernel', 'scatter_kernel', 'warp_min', 'seg_row'):
    assert name in k, name + ' not found'
open(sys.argv[2], 'w').write(k)
PY
# drm.cu's upload and fetch (host code) and their value side, which
# diag_common.c keeps for drm and dia (compiled there only with CUDA): the
# device object takes the device-built arrays, the fetch brings off, val and
# map back
python3 - "$root/spmv/formats/drm.cu" "$root/spmv/formats/diag_common.c" "$tmp/drm_upload.inc" <<'PY'
import sys
def cutter(path):
    s = open(path).read()
    def cut(start, end='\n}\n'):
        a = s.index(start)
        return s[a:s.index(end, a) + len(end)] + '\n'
    return cut
cut = cutter(sys.argv[2])
common = ''.join(cut(f) for f in ('static sps_status take_dev(', 'sps_status sps__diag_upload_dev(',
                                  'static sps_status fetch_values(', 'sps_status sps__diag_fetch_dev('))
cut = cutter(sys.argv[1])
inner = cut('struct drm_dev {', '\n};\n')
outer = ''.join(cut('extern "C" ' + f) for f in
                ('void sps_drm_free_dev(', 'sps_status sps_drm_upload(', 'sps_status sps_drm_fetch('))
open(sys.argv[3], 'w').write(common + 'namespace {\n' + inner + '} // namespace\n' + outer)
PY
S=$tmp/src
E=$root/spmv/formats/drm_emu
${CXX:-g++} -std=c++17 -O2 -Wall -Wextra -I"$tmp" -I"$E" -I"$S" -I"$S/include" -I"$S/core" \
    "$E/harness.cc" "$E/emu_rt.cc" "$S/build/lib/libspsolve.a" -o "$tmp/harness" \
    $(sed -n 's/^LIBS *= *//p' "$S/Makefile")
"$tmp/harness" "$@"
