# issue 10: replay the automatic strategy's GPU plan list (solvers/strategy.c) offline
# on a per-plan CSV of bench/robust.py (every single plan's time, iterations and outcome
# per matrix), to compare plan orders on every matrix at once.
#
#   python3 bench/robust_sim.py PLANS.csv FEATURES.json [--rules old|new] [--best CSV...]
#
# FEATURES.json: {matrix: `spsolve -A FILE --info --json`} (bench/robust_sim.py --features
# SPSOLVE MATRICES OUT.json writes it). --best: robust.csv files whose best_ms lowers the
# reference (the smallest single-plan time seen for the matrix).
#
# The model (how faithful it is): an attempt of a plan that converged in its single run
# within the attempt's cap costs that run's time; otherwise it runs to its cap (or to where
# the single run stopped: breakdown, stagnation, divergence) at the single run's time per
# iteration. Every single run pays the start-up of a first solve (START ms) and its
# preconditioner's setup (SETUP); the replay pays the start-up once, each setup once, and
# OVERHEAD per attempt. Not modelled: the warm start from the best iterate (a later attempt
# here starts from zero, so its cost is an upper bound unless the earlier iterate was worse
# than zero), and the residual history a probe's promotion test reads: promotion is
# predicted from the single run (converged in N iterations: promoted when N - cap <= 4 cap,
# a linear residual), and for a single run that did not converge from PROMOTED (the probes
# the H100 default runs of 2026-11-27 promoted; cryg2500's long GMRES at 1000 iterations).
import csv, json, os, sys

# the model's constants (ms); ROBUST_SIM="START=0,EXACT=80" overrides them for a sensitivity check
K = {"START": 2.5, "OVERHEAD": 0.3, "EXACT": 60.0, "PILU": 2.0, "CHEBY": 1.0}
for kv in filter(None, os.environ.get("ROBUST_SIM", "").split(",")):
    K[kv.split("=")[0]] = float(kv.split("=")[1])
START, OVERHEAD = K["START"], K["OVERHEAD"]
SETUP = {"ilu0:exact": K["EXACT"], "ic0:exact": K["EXACT"], "ilu0:factor=par,solve=jacobi": K["PILU"],
         "cheby": K["CHEBY"]}
# (matrix, method base, precond, cap) -> True: the probe was promoted on the H100 though its
# single run did not converge (the promoted run then failed at its own cap)
PROMOTED = {("cryg2500", "bicgstab", "none", 400): 1976, ("cryg2500", "gmres", "none", 1000): 8142}
MAXIT = 10000


def key(method, precond):
    b = method.split(":")[0]
    if b == "gmres":
        m = method.split("restart=")[1] if "restart=" in method else "30"
        return "gmres:restart=%s:%s" % ("100" if m == "100" else "2000", precond)
    return "%s:%s" % (b, precond)


def load(plans_csv, feats_json, best_files):
    data, best = {}, {}
    for r in csv.DictReader(open(plans_csv)):
        if r["plan"] == "default":
            continue
        d = data.setdefault(r["matrix"], {"kind": r["kind"]})
        ok = r["ok"] == "True"
        its = int(r["its"]) if r["its"] else 0
        ms = float(r["ms"]) if r["ms"] else None
        d[r["plan"]] = (ok, its, ms, r["reason"])
        if ok and (r["matrix"] not in best or ms < best[r["matrix"]][1]):
            best[r["matrix"]] = (r["plan"], ms)
    for fn in best_files:
        for r in csv.DictReader(open(fn)):
            if r["best_ms"] and (r["matrix"] not in best or float(r["best_ms"]) < best[r["matrix"]][1]):
                best[r["matrix"]] = (r["best_plan"], float(r["best_ms"]))
    return data, best, json.load(open(feats_json))


# ---- the plan lists (strategy.c) ------------------------------------------------------

def plans(f, rules, not_spd=False):
    n = f["rows"]
    diag_ok = f["missing_diagonal"] == 0 and f["zero_diagonal"] == 0
    ilu_ok = f["missing_diagonal"] == 0
    spd_like = f["symmetric"] and diag_ok and f["negative_diagonal"] == 0 and not not_spd
    dd = f["diag_dominant"]
    lm = max(30, min(n, 2000))
    longm = "gmres:restart=%d" % lm
    small = (lm + 2) * n * 8 <= 256 << 20
    serial = (n + 1023) // 1024 * f["row_max"]
    onek = n <= 12288 and serial <= 128
    p = []

    def add(m, pc, cap=0):
        if (m, pc, cap) not in p:
            p.append((m, pc, cap))
    if spd_like:
        if onek:
            add("cg", "jacobi", 1000)
        add("cg", "cheby"); add("cg", "jacobi")
        if small:
            add(longm, "none", 1000)
    elif rules == "old":
        if onek: add("bicgstab", "none", 400)
        if small: add(longm, "none", 1000)
        if not onek: add("bicgstab", "none", 400)
        if diag_ok: add("gmres:restart=100", "jacobi")
        if ilu_ok and not dd: add("gmres:restart=100", "ilu0:factor=par,solve=jacobi")
    else:
        probe = 400 if not onek or serial <= 16 else max(50, 400 * 16 // serial)
        jac = diag_ok and (dd or 3 * f["dominant_rows"] >= 2 * n)
        if jac:
            add("gmres:restart=100", "jacobi", 300)
        ilu = ilu_ok and not jac
        lcap = 500 if ilu else 1000
        if onek: add("bicgstab", "none", probe)
        if small and not onek: add(longm, "none", lcap)
        if not onek: add("bicgstab", "none", probe)
        if ilu:
            add("gmres:restart=100", "ilu0:factor=par,solve=jacobi", 100)
        if small: add(longm, "none", lcap)
        if ilu:
            add("gmres:restart=100", "ilu0:exact")
        if diag_ok: add("gmres:restart=100", "jacobi")
        if ilu_ok and not dd: add("gmres:restart=100", "ilu0:factor=par,solve=jacobi")
    if spd_like:
        add("cg", "ic0:exact"); add("cg", "jacobi"); add("cg", "none")
        if ilu_ok: add("gmres:restart=100", "ilu0:exact")
        add(longm, "none")
    else:
        if ilu_ok: add("gmres:restart=100", "ilu0:exact")
        if dd and diag_ok: add("gmres:restart=100", "jacobi")
        if ilu_ok: add("idr", "ilu0:exact"); add("bicgstab", "ilu0:exact")
        if diag_ok: add("gmres:restart=100", "jacobi")
        add(longm, "none"); add("idr", "none"); add("bicgstab", "none")
    return p


# ---- the replay -----------------------------------------------------------------------

def replay(name, d, f, rules):
    pl = plans(f, rules)
    t, built, used, log, i = START, set(), 0, [], 0
    while i < len(pl):
        m, pc, cap = pl[i]
        base = m.split(":")[0]
        want = 2 * MAXIT if pc == "none" else MAXIT
        if cap:
            want = min(want, cap)
        want = min(want, 4 * MAXIT - used)
        if want <= 0:
            break
        r = d.get(key(m, pc))
        t += OVERHEAD
        if base == "cg" and d["kind"] != "spd":  # a symmetric indefinite matrix: CG breaks down at once
            t += 0.3
            log.append("%s+%s broke down" % (m, pc))
            pl = pl[:i + 1] + [q for q in plans(f, rules, True) + pl[i + 1:] if q[0] != "cg" and q not in pl[:i + 1]]
            i += 1
            continue
        if r is None or r[2] is None:
            log.append("%s+%s not run" % (m, pc))
            i += 1
            continue
        ok, its, ms, why = r
        setup = SETUP.get(pc, 0.0)
        per = max(ms - START - setup, 0.01) / max(its, 1)
        if pc not in built:
            t += setup
            built.add(pc)
        if ok and its <= want:
            t += its * per
            log.append("%s+%s %d its won" % (m, pc, its))
            return t, log, True
        ran = min(want, its) if not ok and its < want else want
        t += ran * per
        used += ran
        log.append("%s+%s %d its (%.1f ms)" % (m, pc, ran, ran * per))
        if cap and ran == want:  # a probe that ran out of iterations: promoted?
            more = its - ran if ok else None
            if (name, base, pc, cap) in PROMOTED:
                pc_cap = PROMOTED[(name, base, pc, cap)]
                t += OVERHEAD + pc_cap * per
                used += pc_cap
                log.append("  promoted %d its failed (%.1f ms)" % (pc_cap, pc_cap * per))
            elif more is not None and more <= 4 * cap:
                t += OVERHEAD + more * per
                log.append("  promoted, won after %d more its" % more)
                return t, log, True
        i += 1
    return t, log, False


def main():
    a = sys.argv[1:]
    if a and a[0] == "--features":
        import subprocess
        S, M, out = a[1], a[2], a[3]
        mats = [r["name"] for r in csv.DictReader(open(M + "/MANIFEST.tsv"), delimiter="\t")]
        fs = {}
        for m in mats:
            p = subprocess.run([S, "-A", "%s/%s.mtx.gz" % (M, m), "--info", "--json", "--device", "cpu"],
                               capture_output=True, text=True)
            fs[m] = json.loads(p.stdout.strip().splitlines()[-1])
        json.dump(fs, open(out, "w"), indent=0)
        return
    rules = a[a.index("--rules") + 1] if "--rules" in a else "new"
    bf = a[a.index("--best") + 1:] if "--best" in a else []
    data, best, feats = load(a[0], a[1], bf)
    within, worst, n = 0, 0, 0
    verbose = "-v" in a
    for name in feats:
        if name not in data or name not in best:
            continue
        t, log, ok = replay(name, data[name], feats[name], rules)
        ratio = t / best[name][1] if ok else float("inf")
        n += 1
        within += ratio <= 2
        worst = max(worst, ratio)
        print("%-15s %8.1f ms  best %-48s %7.1f  ratio %5.2f%s" % (name, t, best[name][0], best[name][1], ratio,
              "" if not verbose else "\n    " + " / ".join(log)))
    print("rules %s: within 2x on %d of %d; worst %.2f" % (rules, within, n, worst))


if __name__ == "__main__":
    main()
