#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# spsolve/bench/plot_tts.py [RESULTS_DIR]: time to solution by phase (spsolve) against
# CuPy's total, from raw_tts/*_call4.txt and raw_tts/*_cupy.txt; writes
# time_to_solution.png beside them. matplotlib.
import glob, os, re, sys
out = sys.argv[1] if len(sys.argv) > 1 else "bench/results"
raw = os.path.join(out, "raw_tts")
runs = {}
for path in sorted(glob.glob(os.path.join(raw, "*_call4.txt"))):
    for line in open(path):
        m = re.match(r"(poisson3d:\d+) \[([^\]]*)\] \S+ (\S+) (\d+) (.*)", line)
        if not m:
            continue
        kv = dict(re.findall(r"(\w+)=([\d.]+)", m.group(5)))
        label = "%s\n%s" % (m.group(1), "CG, none" if "none" in m.group(2) else "defaults (%s)" % m.group(3))
        runs.setdefault(label, {k: float(v) for k, v in kv.items()})
cupy = {}
for path in sorted(glob.glob(os.path.join(raw, "*_cupy.txt"))):
    for line in open(path):
        m = re.search(r"cupy (poisson3d:\d+) .*cg: ([\d.]+) ms median", line)
        if m:
            cupy[m.group(1)] = float(m.group(2))
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
labels = list(runs) + ["%s\nCuPy" % g for g in cupy]
phases = [("analyze_ms", "analyze + upload"), ("convert_ms", "convert (drm)"),
          ("precond_setup_ms", "preconditioner"), ("solve_setup_ms", "solve setup"),
          ("iterate_ms", "iterate"), ("finish_ms", "finish")]
fig, ax = plt.subplots(figsize=(9, 4.8))
bottom = [0.0] * len(labels)
for key, name in phases:
    vals = [runs[l].get(key, 0.0) if l in runs else 0.0 for l in labels]
    ax.bar(range(len(labels)), vals, bottom=bottom, label=name)
    bottom = [b + v for b, v in zip(bottom, vals)]
cvals = [cupy[l.split("\n")[0]] if l.endswith("CuPy") else 0.0 for l in labels]
ax.bar(range(len(labels)), cvals, color="0.6", label="CuPy (upload + cg + x.get())")
for i, l in enumerate(labels):
    tot = runs[l]["solve_ms"] if l in runs else cvals[i]
    ax.text(i, tot + 5, "%.0f ms" % tot, ha="center", fontsize=8)
ax.set_xticks(range(len(labels)))
ax.set_xticklabels(labels, fontsize=8)
ax.set_ylabel("time to solution, host CSR to host x (ms)")
ax.set_title("spsolve vs CuPy, CG to rtol 1e-8, NVIDIA H100")
ax.legend(fontsize=7, ncol=2)
fig.tight_layout()
fig.savefig(os.path.join(out, "time_to_solution.png"), dpi=110)
print("wrote", os.path.join(out, "time_to_solution.png"))
