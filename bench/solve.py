#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# spsolve/bench/solve.py BUILD_DIR MATRIX_DIR OUT_DIR [--device gpu|cpu] [--cupy]
#
# Solves every matrix of the shared set with a suitable method and
# preconditioner (CG with IC(0), then Jacobi, for SPD; GMRES with ILU(0) for the
# rest, then unpreconditioned GMRES with a long restart where ILU(0) breaks
# down; IC(0)/ILU(0) in natural order, `ic0:exact`/`ilu0:exact`, as the
# automatic strategy's plans), rtol 1e-8, b = A*ones, and writes solve.md and solve.csv. With --cupy
# it also runs CuPy's unpreconditioned cg/gmres on the same systems (the peer)
# and compares the time per iteration of the same method in the same process
# family. Standard library (+ CuPy/SciPy for --cupy).
import csv
import json
import os
import subprocess
import sys
import time

RTOL = 1e-8


def run(spsolve, path, method, precond, restart, maxit, device):
    cmd = [spsolve, "-A", path, "--method", method, "--precond", precond, "--restart",
           str(restart), "--maxit", str(maxit), "--rtol", str(RTOL), "--json", "-q",
           "--device", device]
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        j = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        lines = [l for l in (p.stderr or p.stdout).strip().splitlines() if l.strip()]
        err = lines[0] if lines else "no output"
        for prefix in ("spsolve: preconditioner setup failed: ", "spsolve: "):
            if err.startswith(prefix):
                err = err[len(prefix):]
                break
        j = {"error": err[:140]}
    j["exit"] = p.returncode
    j["cmd"] = " ".join(cmd[1:])
    return j


def plans(kind, n):
    long_restart = min(n, 2000)
    if kind == "spd":
        return [("cg", "ic0:exact", 30), ("cg", "jacobi", 30), ("cg", "none", 30),
                ("gmres", "none", long_restart)]
    return [("gmres", "ilu0:exact", 100), ("bicgstab", "ilu0:exact", 30), ("gmres", "jacobi", 100),
            ("gmres", "none", long_restart), ("bicgstab", "none", 30)]


def idr_column(spsolve, path, device):
    """IDR(4) on a nonsymmetric matrix: unpreconditioned, then with ILU(0) (the
    table's IDR column, issue 10: every nonsymmetric shared matrix)."""
    out = {}
    for key, precond in (("none", "none"), ("ilu0", "ilu0:exact")):
        j = run(spsolve, path, "idr", precond, 30, 20000, device)
        rr = j.get("true_rel_rnorm")
        out["idr_" + key] = "%s, %s it, %s ms, relres %s" % (
            "converged" if j.get("converged") else (j.get("reason") or j.get("error") or "?")[:60],
            j.get("iterations", "-"),
            ("%.1f" % j["iterate_ms"]) if isinstance(j.get("iterate_ms"), (int, float)) else "-",
            ("%.1e" % rr) if isinstance(rr, float) else "-")
        out["idr_" + key + "_conv"] = bool(j.get("converged"))
    return out


def cupy_peer(path, method, restart, maxit, iters_ours):
    """Time per iteration of CuPy's unpreconditioned solver on the same system."""
    import cupy as cp
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cla
    import scipy.io
    A = scipy.io.mmread(path).tocsr().astype("float64")
    Ad = csp.csr_matrix(A)
    b = Ad @ cp.ones(A.shape[0])
    count = [0]

    def cb(_):
        count[0] += 1
    fn = {"cg": cla.cg, "gmres": cla.gmres, "bicgstab": getattr(cla, "bicgstab", None)}.get(method)
    if fn is None:
        return None
    kw = dict(rtol=RTOL, maxiter=maxit, callback=cb)
    if method == "gmres":
        kw.update(restart=restart, callback_type="pr_norm")
    try:
        fn(Ad, b, **{k: v for k, v in kw.items()})  # warm-up (compiles kernels)
    except TypeError:
        kw["tol"] = kw.pop("rtol")
        fn(Ad, b, **kw)
    count[0] = 0
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    x, info = fn(Ad, b, **kw)
    cp.cuda.Device().synchronize()
    t = time.perf_counter() - t0
    its = count[0] if method != "gmres" else count[0]
    r = float(cp.linalg.norm(b - Ad @ x) / cp.linalg.norm(b))
    return {"cupy_ms": t * 1e3, "cupy_iters": its, "cupy_relres": r,
            "cupy_ms_per_iter": t * 1e3 / max(its, 1)}


# Peer cases: the same unpreconditioned method on both sides, large enough
# that the time per iteration is the GPU's, not the launches'.
PEERS = [("poisson3d:64", "cg", 30), ("convdiff2d:1000,10", "bicgstab", 30),
         ("convdiff2d:1000,10", "gmres", 30), ("cage11", "gmres", 30), ("lns_3937", "gmres", 2000)]


def peer_table(spsolve, matdir, device):
    import tempfile
    rows = []
    tmp = tempfile.mkdtemp()
    for name, method, restart in PEERS:
        if ":" in name:
            path = os.path.join(tmp, name.replace(":", "_").replace(",", "_") + ".mtx")
            subprocess.run([spsolve, "--gen", name, "--save-matrix", path, "--info", "-q",
                            "--device", "cpu"], check=True, capture_output=True)
        else:
            path = os.path.join(matdir, name + ".mtx.gz")
        j = run(spsolve, path, method, "none", restart, 20000, device)
        row = {"matrix": name, "method": method if method != "gmres" else "gmres(%d)" % restart,
               "iterations": j.get("iterations"), "ms_per_iter": j.get("per_iter_ms"),
               "iterate_ms": j.get("iterate_ms"),
               "relres": j.get("true_rel_rnorm"), "spmv": j.get("spmv"), "reason": j.get("reason")}
        try:
            row.update(cupy_peer(path, method, restart, 20000, j.get("iterations")))
        except Exception as e:
            row["cupy_error"] = str(e)[:100]
        rows.append(row)
        print("peer %-20s %-12s spsolve %s ms/it (%s its), cupy %s" % (
            name, row["method"], row["ms_per_iter"], row["iterations"],
            row.get("cupy_ms_per_iter", row.get("cupy_error"))), flush=True)
    return rows


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    device = "gpu"
    if "--device" in sys.argv:
        device = sys.argv[sys.argv.index("--device") + 1]
        args.remove(device)
    with_cupy = "--cupy" in sys.argv
    build, matdir, out = args[:3]
    spsolve = os.path.join(build, "bin", "spsolve")
    manifest = os.path.join(matdir, "MANIFEST.tsv")
    with open(manifest) as f:
        mats = list(csv.DictReader(f, delimiter="\t"))
    results = []
    for m in mats:
        path = os.path.join(matdir, m["file"])
        n = int(m["rows"])
        chosen, tried = None, []
        for method, precond, restart in plans(m["kind"], n):
            maxit = 20000 if precond == "none" else 10000
            j = run(spsolve, path, method, precond, restart, maxit, device)
            tried.append("%s+%s: %s" % (method, precond, j.get("reason") or j.get("error") or "?"))
            if j.get("converged"):
                chosen = (method, precond, restart, maxit, j)
                break
            if chosen is None or ("reason" in j and "reason" not in chosen[4]):
                chosen = (method, precond, restart, maxit, j)
        method, precond, restart, maxit, j = chosen
        row = {"matrix": m["name"], "kind": m["kind"], "n": n, "nnz": j.get("nnz", ""),
               "method": method if method != "gmres" else "gmres(%d)" % restart,
               "precond": precond, "spmv": j.get("spmv", ""), "reason": j.get("reason") or j.get("error"),
               "iterations": j.get("iterations", ""), "true_relres": j.get("true_rel_rnorm", ""),
               "ms_per_iter": j.get("per_iter_ms", ""), "iterate_ms": j.get("iterate_ms", ""),
               "syncs_per_iter": j.get("syncs_per_iter", ""), "tried": "; ".join(tried[:-1]),
               "device": j.get("device", "")}
        if with_cupy and j.get("iterations") and not j.get("converged") is False:
            try:
                peer = cupy_peer(path, method, restart, maxit, j["iterations"]) if precond == "none" else None
                if peer:
                    row.update(peer)
            except Exception as e:  # the peer is optional: record why it is missing
                row["cupy_error"] = str(e)[:80]
        if m["kind"] == "nonsym":
            row.update(idr_column(spsolve, path, device))
        results.append(row)
        print("%-16s %-12s %-7s %-12s %6s it  relres %-10s %s" % (
            row["matrix"], row["method"], precond, row["spmv"], row["iterations"],
            ("%.2e" % row["true_relres"]) if isinstance(row["true_relres"], float) else row["true_relres"],
            row["reason"]), flush=True)
    keys = ["matrix", "kind", "n", "nnz", "method", "precond", "spmv", "reason", "iterations",
            "true_relres", "ms_per_iter", "iterate_ms", "syncs_per_iter", "tried", "device",
            "cupy_ms_per_iter", "cupy_iters", "cupy_relres", "cupy_error", "idr_none", "idr_ilu0"]
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "solve.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(results)
    dev = next((r["device"] for r in results if r["device"]), device)
    lines = ["# Solving every shared matrix", "",
             "Generated by `bench/solve.py` on %s. b = A*ones, x0 = 0, rtol %g, backend `auto`. "
             "Plan per matrix: SPD: CG with IC(0), then Jacobi, then none; others: GMRES(100) with "
             "ILU(0), BiCGSTAB with ILU(0), GMRES(100) with Jacobi, unpreconditioned GMRES with "
             "restart min(n, 2000), then unpreconditioned BiCGSTAB. The first plan that converges is shown; `earlier` lists the plans "
             "that did not and why. The true residual is ||b - Ax|| / ||b|| recomputed after the solve."
             % (dev, RTOL), "",
             "| matrix | kind | n | method | precond | backend | iterations | true relres | reason | ms/iter | syncs/iter | earlier |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        rr = r["true_relres"]
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["matrix"], r["kind"], r["n"], r["method"], r["precond"], r["spmv"], r["iterations"],
            ("%.2e" % rr) if isinstance(rr, float) else rr, r["reason"],
            ("%.4f" % r["ms_per_iter"]) if isinstance(r["ms_per_iter"], float) else "",
            ("%.3f" % r["syncs_per_iter"]) if isinstance(r["syncs_per_iter"], (int, float)) else "",
            r["tried"]))
    conv = sum(1 for r in results if str(r["reason"]).startswith("converged"))
    lines += ["", "%d of %d matrices reach rtol %g." % (conv, len(results), RTOL)]
    nonsym = [r for r in results if r["kind"] == "nonsym"]
    if nonsym:
        lines += ["", "## IDR(4) on every nonsymmetric matrix", "",
                  "`--method idr` (s = 4), unpreconditioned and with ILU(0), the same b, x0 "
                  "and rtol; maxit 20000. Each cell: outcome, iterations, iteration phase "
                  "(`iterate_ms`), true relative residual.", "",
                  "| matrix | n | idr+none | idr+ilu0 | first converging plan above |",
                  "|---|---|---|---|---|"]
        for r in nonsym:
            lines.append("| %s | %s | %s | %s | %s |" % (
                r["matrix"], r["n"], r.get("idr_none", ""), r.get("idr_ilu0", ""),
                "%s+%s" % (r["method"], r["precond"]) if str(r["reason"]).startswith("converged") else "none"))
        ci = sum(1 for r in nonsym if r.get("idr_none_conv") or r.get("idr_ilu0_conv"))
        lines += ["", "IDR converges (either column) on %d of %d nonsymmetric matrices." % (ci, len(nonsym))]
    peers = [r for r in results if "cupy_ms_per_iter" in r]
    if with_cupy:
        extra = peer_table(spsolve, matdir, device)
        for r in extra:
            if "cupy_ms_per_iter" not in r:
                continue
            peers.append({"matrix": r["matrix"], "method": r["method"], "ms_per_iter": r["ms_per_iter"],
                          "iterate_ms": r["iterate_ms"], "cupy_ms": r["cupy_ms"],
                          "cupy_ms_per_iter": r["cupy_ms_per_iter"], "iterations": r["iterations"],
                          "cupy_iters": r["cupy_iters"], "cupy_relres": r["cupy_relres"]})
    if peers:
        lines += ["", "## Against CuPy (same method, unpreconditioned, same GPU)", "",
                  "Time to reach rtol %g from x0 = 0 with b = A*ones: spsolve's iteration phase "
                  "(`iterate_ms`) against CuPy's call, timed after a warm-up call. CuPy's iteration "
                  "count is its callback count." % RTOL, "",
                  "| matrix | method | spsolve its | spsolve ms | spsolve ms/it | CuPy its | CuPy ms | CuPy ms/it | CuPy relres | CuPy time / spsolve time |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in peers:
            ours = r.get("iterate_ms") or (r["ms_per_iter"] * r["iterations"] if r["ms_per_iter"] else 0)
            lines.append("| %s | %s | %s | %.1f | %.4f | %s | %.1f | %.4f | %.2e | %.2fx |" % (
                r["matrix"], r["method"], r["iterations"], ours, r["ms_per_iter"] or 0,
                r["cupy_iters"], r["cupy_ms"], r["cupy_ms_per_iter"], r["cupy_relres"],
                r["cupy_ms"] / ours if ours else 0))
    with open(os.path.join(out, "solve.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("solve.py: %d of %d converged; wrote %s/solve.md" % (conv, len(results), out))


if __name__ == "__main__":
    main()
