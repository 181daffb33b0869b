# issue 10: the plain `spsolve -A FILE` (auto method, auto precond) against every
# single plan of the GPU list, on every shared matrix; time to solution = solve_ms.
# Writes robust.csv (default against the best plan) and robust_plans.csv (every run: the
# default with its attempts, then each single plan), for simulating other plan orders.
import csv, json, os, subprocess, sys
# --reps N (before --best): the default runs N times and its median solve_ms counts (a
# single run of these small systems varies 10-30%, and up to 2x on a busy machine)
REPS = 1
if "--reps" in sys.argv:
    i = sys.argv.index("--reps")
    REPS = int(sys.argv[i + 1])
    del sys.argv[i:i + 2]
S, M, OUT = sys.argv[1], sys.argv[2], sys.argv[3]
# --best CSV...: the default only, against the best single plans of earlier runs'
# robust.csv files (a later file's row for a matrix replaces an earlier one's)
BEST = {}
if "--best" in sys.argv:
    for fn in sys.argv[sys.argv.index("--best") + 1:]:
        with open(fn) as f:
            for r in csv.DictReader(f):
                if r["best_ms"]:
                    BEST[r["matrix"]] = (r["best_plan"], float(r["best_ms"]))
# the GPU plan list (solvers/strategy.c): ic0:exact / ilu0:exact, the natural order
SPD = ["cg:cheby", "cg:jacobi", "cg:ic0:exact", "cg:none", "gmres:restart=100:ilu0:exact"]
NS = ["gmres:restart=100:jacobi", "gmres:restart=100:ilu0:factor=par,solve=jacobi", "gmres:restart=100:ilu0:exact",
      "idr:ilu0:exact", "bicgstab:ilu0:exact", "gmres:restart=2000:none", "idr:none", "bicgstab:none"]
def run(path, method=None, precond=None, dev=os.environ.get("ROBUST_DEVICE", "gpu")):
    cmd = [S, "-A", path, "--json", "-q", "--device", dev]
    if method: cmd += ["--method", method, "--precond", precond]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        j = json.loads(p.stdout.strip().splitlines()[-1])
    except Exception as e:
        return {"ok": False, "ms": None, "why": str(e)[:60]}
    ok = str(j.get("reason", "")).startswith("converged") and j.get("true_rel_rnorm", 1) <= 1e-8 * 1.0000001
    return {"ok": ok, "ms": j.get("solve_ms"), "why": j.get("reason"), "its": j.get("iterations"),
            "plan": "%s+%s" % (j.get("method"), j.get("precond")), "rr": j.get("true_rel_rnorm"),
            "attempts": " / ".join("%s+%s %s its %.1f ms" % (a["method"], a["precond"], a.get("iterations"),
                                                          a.get("solve_ms") or 0) for a in j.get("attempts") or [])}
rows, per_plan = [], []
with open(os.path.join(M, "MANIFEST.tsv")) as f:
    mats = [(m["name"], m["kind"]) for m in csv.DictReader(f, delimiter="\t")]
for name, kind in mats:
    path = os.path.join(M, name + ".mtx.gz")
    runs = [run(path) for _ in range(REPS)]
    d = runs[0]
    if REPS > 1 and all(r["ok"] for r in runs):
        times = sorted(r["ms"] for r in runs)
        d = dict(d, ms=times[REPS // 2], all_ms=times)
    per_plan.append((name, kind, "default", d["ok"], d.get("its"), d["ms"], d.get("why"), d.get("rr"), d.get("attempts")))
    best = BEST.get(name)
    plans = [] if "--best" in sys.argv else SPD + NS if kind == "spd" else NS
    for pl in plans:
        parts = pl.split(":")
        if parts[0] == "gmres":
            method, precond = parts[0] + ":" + parts[1], ":".join(parts[2:])
        else:
            method, precond = parts[0], ":".join(parts[1:])
        r = run(path, method, precond)
        per_plan.append((name, kind, pl, r["ok"], r.get("its"), r["ms"], r.get("why"), r.get("rr"), ""))
        if r["ok"] and (best is None or r["ms"] < best[1]):
            best = (pl, r["ms"])
    ratio = d["ms"] / best[1] if d["ok"] and best else None
    rows.append((name, kind, d["ok"], d.get("plan"), d.get("its"), d["ms"], best[0] if best else "-",
                 best[1] if best else None, ratio, d.get("why")))
    print("%-16s %-6s default %-5s %-28s its %6s %8s ms | best %-34s %8s ms | ratio %s | %s" % (
        name, kind, d["ok"], d.get("plan"), d.get("its"), "%.1f" % d["ms"] if d["ms"] else "-",
        best[0] if best else "-", "%.1f" % best[1] if best else "-", "%.2f" % ratio if ratio else "-",
        d.get("why")) + (" | runs %s" % " ".join("%.1f" % t for t in d["all_ms"]) if "all_ms" in d else ""), flush=True)
conv = sum(1 for r in rows if r[2]); anyc = sum(1 for r in rows if r[6] != "-")
both = [r for r in rows if r[8]]
print("default converged on %d of %d; some plan converged on %d; default within 2x of best on %d of %d; worst ratio %.2f" % (
    conv, len(rows), anyc, sum(1 for r in both if r[8] <= 2), len(both), max(r[8] for r in both) if both else 0))
with open(os.path.join(OUT, "robust.csv"), "w") as f:
    w = csv.writer(f); w.writerow(["matrix", "kind", "default_ok", "default_plan", "its", "default_ms", "best_plan", "best_ms", "ratio", "reason"]); w.writerows(rows)
with open(os.path.join(OUT, "robust_plans.csv"), "w") as f:
    w = csv.writer(f); w.writerow(["matrix", "kind", "plan", "ok", "its", "ms", "reason", "true_rel_rnorm", "attempts"]); w.writerows(per_plan)
