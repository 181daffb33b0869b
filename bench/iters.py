#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# spsolve/bench/iters.py SPSOLVE REPS [case ...]: us per iteration (median of REPS) for issue 9's cases;
# a case is GEN@METHOD[@SPMV] (GEN: a --gen spec or a matrix file; SPMV: a --spmv value, default auto)
import json, subprocess, sys, statistics
exe, reps = sys.argv[1], int(sys.argv[2])
cases = sys.argv[3:] or ["poisson2d:63@cg", "poisson2d:63@bicgstab", "poisson2d:63@gmres",
                         "poisson3d:160@cg", "poisson3d:200@cg"]
print("%-16s %-9s %-12s %-10s %8s %8s %6s %9s %8s %6s %6s" % ("case", "method", "spmv", "engine", "us/it", "min", "its", "iter_ms", "solve_ms", "syncs", "steady"))
for c in cases:
    g, m, *sp = c.split("@")
    rows = []
    for _ in range(reps):
        src = ["-A", g] if ".mtx" in g or "/" in g else ["--gen", g]
        cmd = [exe] + src + [ "--method", m, "--precond", "none", "--json"] + (["--spmv", sp[0]] if sp else [])
        p = subprocess.run(cmd, capture_output=True, text=True)
        try:
            j = json.loads(p.stdout)
        except Exception:
            print("FAIL", c, p.stdout[-300:], p.stderr[-300:]); break
        rows.append(j)
    if not rows: continue
    us = [r["per_iter_ms"] * 1e3 for r in rows]
    print("%-16s %-9s %-12s %-10s %8.2f %8.2f %6d %9.2f %8.2f %6s %6s" % (g.split("/")[-1][:16], m, rows[0].get("spmv", "?")[:12], "%s/%s" % (rows[0]["engine"], rows[0].get("engine_cluster", 0)),
          statistics.median(us), min(us), rows[0]["iterations"], statistics.median([r["iterate_ms"] for r in rows]),
          statistics.median([r["solve_ms"] for r in rows]), rows[0].get("host_syncs"), rows[0].get("steady_syncs")), flush=True)
