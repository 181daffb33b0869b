#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# spsolve/bench/phases.py SPSOLVE REPS "ARGS" ...: phase medians of spsolve --json for each argument string, runs alternating
import json, subprocess, sys, statistics, shlex
exe, reps = sys.argv[1], int(sys.argv[2])
keys = ["read_ms", "analyze_ms", "analyze_device_ms", "matrix_upload_ms", "matrix_upload_gbps", "select_ms", "convert_ms", "upload_ms", "precond_setup_ms", "solve_setup_ms", "setup_ms",
        "iterate_ms", "finish_ms", "solve_ms"]
res = {a: [] for a in sys.argv[3:]}
for _ in range(reps):
    for a in sys.argv[3:]:
        p = subprocess.run([exe] + shlex.split(a) + ["--json"], capture_output=True, text=True)
        try: res[a].append(json.loads(p.stdout))
        except Exception: print("FAIL", a, p.stdout[-300:], p.stderr[-300:])
for a, rows in res.items():
    if not rows: continue
    r0 = rows[0]
    print("## %s: spmv %s, precond %s, its %d, analyzed_on %s, engine %s" % (a, r0["spmv"], r0["precond"], r0["iterations"], r0.get("analyzed_on"), r0.get("engine")))
    print("   " + " ".join("%s=%.2f" % (k.replace("_ms", ""), statistics.median([r.get(k, 0) or 0 for r in rows])) for k in keys))
    print("   solve_ms all: " + " ".join("%.1f" % r["solve_ms"] for r in rows))
