#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# spsolve/bench/spmm.py BUILD_DIR MATRIX_DIR OUT_DIR [--ks 1,2,4,8,16,32] [--skip-shared]
#                       [--solve-k 8] [--reps N] [--check-ks 1,8]
#
# Several right-hand sides (issue 12, doc/spmm.md), on the GPU:
#  1. SpMM: `spmv-bench --nrhs K` for K in --ks (with --check for K in
#     --check-ks: the host reference costs seconds per run) on poisson3d:160,
#     banded:2000000,9,0.01,1 and every matrix of MATRIX_DIR (*.mtx, *.mtx.gz),
#     backends csr-vector, cusparse (its cusparseSpMM is the baseline), dia,
#     drm (the CSR-family operators also get a row for the row-panel kernel
#     after ASpT, kind "panel"): median time per block product, per right-hand side, GFLOP/s, bytes,
#     speed against cusparseSpMM (vs_cusp) and against K single SpMVs
#     (vs_k_spmv).
#  2. The block solve: `spsolve -b` with K columns (one sps_solve_multi) against
#     K runs of `spsolve -b` with one column each, on poisson3d:160 (CG, no
#     preconditioner, csr-vector, rtol 1e-8): iterations per column and
#     solve_ms (setup + iterations + finish, the CLI's JSON) of the block
#     against the sum of the K single solves'.
# Writes OUT_DIR/spmm.csv, OUT_DIR/spmm_solve.csv, OUT_DIR/spmm.md and
# OUT_DIR/spmm.png (matplotlib, if installed). Example on the GPU machine:
#   python3 bench/spmm.py build /work/shared/matrices bench/results
import csv
import glob
import io
import json
import os
import random
import subprocess
import sys

GENERATED = ["poisson3d:160", "banded:2000000,9,0.01,1"]
BACKENDS = "csr-vector,cusparse,dia,drm"


def args():
    a = sys.argv[1:]
    if len(a) < 3:
        sys.exit(__doc__ or "usage: spmm.py BUILD_DIR MATRIX_DIR OUT_DIR [options]")
    opt = {"build": a[0], "mdir": a[1], "out": a[2], "ks": [1, 2, 4, 8, 16, 32],
           "shared": True, "solve_k": 8, "reps": 100, "check_ks": [1, 8]}
    i = 3
    while i < len(a):
        if a[i] == "--ks":
            opt["ks"] = [int(x) for x in a[i + 1].split(",")]
            i += 1
        elif a[i] == "--skip-shared":
            opt["shared"] = False
        elif a[i] == "--solve-k":
            opt["solve_k"] = int(a[i + 1])
            i += 1
        elif a[i] == "--check-ks":
            opt["check_ks"] = [int(x) for x in a[i + 1].split(",")]
            i += 1
        elif a[i] == "--reps":
            opt["reps"] = int(a[i + 1])
            i += 1
        else:
            sys.exit("unknown option " + a[i])
        i += 1
    return opt


def cases(opt):
    out = [("--gen", g, g) for g in GENERATED]
    if opt["shared"]:
        for p in sorted(glob.glob(os.path.join(opt["mdir"], "*.mtx*"))):
            name = os.path.basename(p).split(".mtx")[0]
            out.append(("-A", p, name))
    return out


def spmm_rows(opt, flag, src, label, k):
    cmd = [os.path.join(opt["build"], "bin", "spmv-bench"), flag, src, "--nrhs", str(k),
           "--spmv", BACKENDS, "--reps", str(opt["reps"]), "--csv", "-", "-q", "--label", label]
    if k in opt["check_ks"]:
        cmd.append("--check")  # the host reference costs seconds on the large matrices
    p = subprocess.run(cmd, capture_output=True, text=True)
    rows = list(csv.DictReader(io.StringIO(p.stdout)))
    if p.returncode not in (0, 1) or not rows:
        print("spmv-bench failed on %s k=%d: %s" % (label, k, p.stderr.strip()[:200]), file=sys.stderr)
    for r in rows:
        r["check_exit"] = p.returncode
    return rows


def write_block(path, cols, n):
    with open(path, "w") as f:
        f.write("%%%%MatrixMarket matrix array real general\n%d %d\n" % (n, len(cols)))
        for c in cols:
            f.write("".join("%.17g\n" % v for v in c))


def spsolve_json(opt, gen, bpath):
    cmd = [os.path.join(opt["build"], "bin", "spsolve"), "--gen", gen, "-b", bpath, "--method", "cg",
           "--precond", "none", "--spmv", "csr-vector", "--rtol", "1e-8", "--json", "-q"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (p.stderr or p.stdout).strip()[:200]}


def block_solve(opt, gen="poisson3d:160"):
    k = opt["solve_k"]
    n = int(gen.split(":")[1]) ** 3
    rnd = random.Random(12)
    cols = [[rnd.uniform(-1, 1) for _ in range(n)] for _ in range(k)]
    tmp = os.path.join(opt["out"], "spmm_tmp")
    os.makedirs(tmp, exist_ok=True)
    write_block(os.path.join(tmp, "B.mtx"), cols, n)
    blk = spsolve_json(opt, gen, os.path.join(tmp, "B.mtx"))
    singles = []
    for j, c in enumerate(cols):
        write_block(os.path.join(tmp, "b%d.mtx" % j), [c], n)
        singles.append(spsolve_json(opt, gen, os.path.join(tmp, "b%d.mtx" % j)))
    for f in glob.glob(os.path.join(tmp, "*.mtx")):
        os.remove(f)
    os.rmdir(tmp)
    return gen, k, blk, singles


def md_spmm(rows, k_headline=8):
    out = ["## SpMM (block products), %s" % (rows[0]["device"] if rows else "?"), "",
           "| matrix | k | backend | kind | block us | per rhs us | spmv us | GFLOP/s | GB/s | vs cusparseSpMM | vs k SpMVs | err |",
           "|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        if r["ok"] != "1":
            continue
        out.append("| %s | %s | %s | %s | %.1f | %.2f | %.2f | %.1f | %.0f | %.2f | %.2f | %s |" % (
            r["matrix"], r["nrhs"], r["backend"], r["kind"], float(r["block_us"]),
            float(r["per_rhs_us"]), float(r["spmv_us"]), float(r["gflops"]), float(r["gbs"]),
            float(r["vs_cusparse"]), float(r["vs_k_spmv"]), r["max_err"]))
    for kind, what in (("native", "csr-vector's native kernel"), ("panel", "the row-panel kernel (ASpT)")):
        out += ["", "Headline (k = %d, %s):" % (k_headline, what), ""]
        for r in rows:
            if r["ok"] == "1" and r["nrhs"] == str(k_headline) and r["backend"] == "csr-vector" and r["kind"] == kind:
                out.append("- %s: %.2fx cusparseSpMM, %.2fx per right-hand side against %d single SpMVs" % (
                    r["matrix"], float(r["vs_cusparse"]), float(r["vs_k_spmv"]), k_headline))
    return out


def md_solve(res):
    gen, k, blk, singles = res
    out = ["", "## Block CG against %d single solves (%s, no preconditioner, csr-vector)" % (k, gen), ""]
    bad = [j.get("error") for j in [blk] + singles if j.get("error") or "solve_ms" not in j]
    if bad:
        return out + ["failed: %s" % bad[0]]
    ts = sum(s["solve_ms"] for s in singles)
    its = [s["iterations"] for s in singles]
    out.append("- block: %.1f ms (iterate %.1f ms), iterations per column %s" % (
        blk["solve_ms"], blk["iterate_ms"], [c["iterations"] for c in blk.get("columns", [])]))
    out.append("- %d single solves: %.1f ms in all, iterations %s" % (k, ts, its))
    out.append("- ratio block / singles: %.3f (target <= 0.35)" % (blk["solve_ms"] / ts))
    return out


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no plot", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(8, 5))
    for m in sorted({r["matrix"] for r in rows}):
        for kind, style in (("native", "-o"), ("panel", ":^"), ("cusparse", "--s")):
            be = "csr-vector" if kind == "native" else "cusparse"
            pts = sorted((int(r["nrhs"]), float(r["gflops"])) for r in rows
                         if r["matrix"] == m and r["kind"] == kind and r["backend"] == be and r["ok"] == "1")
            if pts and m in GENERATED:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label="%s %s" % (m, kind))
    ax.set_xscale("log", base=2)
    ax.set_xlabel("right-hand sides k")
    ax.set_ylabel("GFLOP/s")
    ax.set_title("SpMM: csr-vector's block kernel and the row-panel kernel against cusparseSpMM")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    opt = args()
    os.makedirs(opt["out"], exist_ok=True)
    rows = []
    for flag, src, label in cases(opt):
        for k in opt["ks"]:
            rows += spmm_rows(opt, flag, src, label, k)
    if rows:
        with open(os.path.join(opt["out"], "spmm.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
    res = block_solve(opt)
    gen, k, blk, singles = res
    with open(os.path.join(opt["out"], "spmm_solve.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["matrix", "k", "run", "iterations", "solve_ms", "iterate_ms", "reason"])
        for name, j in [("block", blk)] + [("single%d" % i, s) for i, s in enumerate(singles)]:
            w.writerow([gen, k, name, j.get("iterations"), j.get("solve_ms"), j.get("iterate_ms"),
                        j.get("reason", j.get("error"))])
    md = ["# SpMM and block solves (issue 12)", "",
          "Generated by bench/spmm.py; `spmv-bench --nrhs K --check` per matrix and k."]
    md += [""] + md_spmm(rows) + md_solve(res)
    with open(os.path.join(opt["out"], "spmm.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    plot(rows, os.path.join(opt["out"], "spmm.png"))
    bad = [r for r in rows if r.get("check_exit") == 1]
    print("wrote %s/spmm.md (%d rows, %d with --check failures)" % (opt["out"], len(rows), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
