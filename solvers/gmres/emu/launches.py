# SPDX-License-Identifier: MIT
# spsolve/solvers/gmres/emu/launches.py: how run.sh, run_fuse.sh and
# run_dcgs2.sh cut pieces out of gmres_kernels.cu (cut), and what they do to
# that code before compiling it on the CPU (to_emu): every
# `kernel<<<grid, block, 0, s>>>(args);` becomes an emu_launch call
# (gm_emu.h, onek_emu.h). The grid may itself hold commas inside parentheses
# (dim3(a, b)): the split is at the first comma outside them.
import re


def _launch(m):
    name, cfg, args = m.group(1), m.group(2), m.group(3)
    depth, at = 0, None
    for i, ch in enumerate(cfg):
        depth += ch == '('
        depth -= ch == ')'
        if ch == ',' and depth == 0:
            at = i
            break
    return 'emu_launch(dim3(%s), dim3(%s), [&] { %s(%s); });' % (cfg[:at], cfg[at + 1:], name, args)


def to_emu(src, at_least=1):
    """src with its launches rewritten; asserts at least at_least of them and none left."""
    out, n = re.subn(r'([\w<>]+)<<<(.*?), 0, s>>>\((.*?)\);', _launch, src, flags=re.S)
    assert n >= at_least and '<<<' not in out, 'a launch was not converted'
    return out


def cut(s, a, b):
    """s from the first occurrence of a up to the first b after it."""
    i = s.index(a)
    return s[i:s.index(b, i)]
