#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/amg.sh: issue 11's criteria for the amg preconditioner, written to
# bench/results/amg.md (raw JSON lines in bench/results/raw_amg/). Run from
# the repository root after a GPU build (sh bench/gpu_build.sh):
#   sh bench/amg.sh [build]      (default build dir: build)
# It runs, each CG to rtol 1e-8 with b = A * ones:
#   poisson3d:160, poisson3d:200, poisson3d-jump:128,1e4 with jacobi, amg
#   (Chebyshev degree 1), amg:sweeps=2 and amg:setup=gpu;
#   elasticity3d:40 with amg, without and with --nullspace rbm;
#   the numeric-only re-setup against a full setup (bench/amg_resetup.c);
#   the fine-level SpMV time (spmv-bench, the backend auto picks), so that
#   the setup can be read in SpMVs (the criterion: <= 150).
# SB_ARGS: extra spmv-bench arguments (--device cpu to try the script on a
# machine without a GPU).
# Criteria (issue 11): <= 20 iterations on poisson3d:160/200, <= 30 on
# poisson3d-jump:128,1e4; setup <= 150 SpMVs, one V-cycle <= 12 (the V-cycle
# cost is printed by build/tests/gpu/test_amg_gpu, "one V-cycle"); time to
# solution against jacobi <= 0.6x (poisson3d:200) and <= 0.2x (jump); numeric
# re-setup <= 1/3 of a full setup; elasticity with rbm < half the iterations.
set -u
B=${1:-build}
S=$B/bin/spsolve
SB=$B/bin/spmv-bench
OUT=bench/results/amg.md
RAW=bench/results/raw_amg
mkdir -p "$RAW"
: > "$RAW/solves.jsonl"
TMP=${TMPDIR:-/tmp}/amg_bench.$$
mkdir -p "$TMP"
trap 'rm -rf "$TMP"' EXIT

solve() { # spec precond [extra args]
  g=$1; p=$2; shift 2
  out=$($S --gen "$g" --method cg --precond "$p" --rtol 1e-8 --maxit 20000 --json -q "$@" 2>"$TMP/err" | tail -n 1)
  [ -n "$out" ] || out='{"error": "no output"}'
  printf '%s\n' "$out" | python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
j["bench_spec"], j["bench_precond"], j["bench_extra"] = sys.argv[1], sys.argv[2], sys.argv[3]
print(json.dumps(j))' "$g" "$p" "$*" >> "$RAW/solves.jsonl"
  [ "$p" = jacobi ] || $S --gen "$g" --method cg --precond "$p" --rtol 1e-8 --maxit 20000 "$@" 2>&1 |
    sed -n '/^ *amg:/,/setup ms/p' > "$RAW/summary_$(echo "$g $p $*" | tr -c 'A-Za-z0-9.\n' _).txt"
}

spmv_ms() { # spec -> "backend ms" lines: median ms per SpMV of every backend
  $SB --gen "$1" --reps 50 ${SB_ARGS:-} --json "$TMP/sb.json" > /dev/null 2>&1
  python3 - "$TMP/sb.json" "$1" <<'PY'
import json, sys
try:
    for x in json.load(open(sys.argv[1]))["results"]:
        if x.get("ok") and x.get("median_us"):
            print(sys.argv[2], x["backend"], x["median_us"] / 1e3)
except Exception as e:
    print(sys.argv[2], "none nan")
PY
}

for g in poisson3d:160 poisson3d:200 poisson3d-jump:128,1e4; do
  for p in jacobi amg amg:sweeps=2 amg:setup=gpu; do solve "$g" "$p"; done
  spmv_ms "$g" >> "$TMP/spmv.txt"
done
solve elasticity3d:40 amg
solve elasticity3d:40 amg --nullspace rbm
solve elasticity3d:40 amg:setup=gpu

cc -O2 -std=c11 -Iinclude bench/amg_resetup.c "$B/lib/libspsolve.a" -o "$TMP/amg_resetup" \
  $(sed -n 's/^LIBS *= *//p' Makefile) $(sed -n 's/^CUDA_LIBS *= *//p' Makefile) 2> "$TMP/cc.err" ||
  echo "amg_resetup did not build: $(cat "$TMP/cc.err")" >&2
: > "$RAW/resetup.txt"
for a in "poisson3d:160 amg" "poisson3d-jump:128,1e4 amg" "poisson3d:160 amg:setup=gpu" "elasticity3d:40 amg"; do
  [ -x "$TMP/amg_resetup" ] && "$TMP/amg_resetup" $a >> "$RAW/resetup.txt" 2>&1
done
cp "$TMP/spmv.txt" "$RAW/spmv.txt"

python3 - "$RAW" "$OUT" <<'PY'
import json, sys
raw, out = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(raw + "/solves.jsonl") if l.strip()]
bk = {}
for l in open(raw + "/spmv.txt"):
    k, b, v = l.split()
    try: bk.setdefault(k, {})[b] = float(v)
    except ValueError: pass
# the fine SpMV: the backend the solves used (auto's choice), else the fastest
spmv = {}
for r in rows:
    g, t = r["bench_spec"], bk.get(r["bench_spec"], {})
    if t and g not in spmv:
        spmv[g] = (r.get("spmv"), t[r["spmv"]]) if r.get("spmv") in t else (min(t, key=t.get), min(t.values()))
def f(x, fmt="%.1f"):
    return fmt % x if isinstance(x, (int, float)) else "-"
L = ["# amg: issue 11's criteria", "",
     "CG to rtol 1e-8, b = A * ones; `sh bench/amg.sh` (raw JSON in `raw_amg/`).", "",
     "| matrix | precond | extra | its | precond setup ms | setup in SpMVs | iterate ms | time to solution ms | vs jacobi | reason |",
     "|---|---|---|---|---|---|---|---|---|---|"]
jac = {r["bench_spec"]: r.get("solve_ms") for r in rows if r["bench_precond"] == "jacobi"}
for r in rows:
    g, p = r["bench_spec"], r["bench_precond"]
    su = r.get("precond_setup_ms")
    sp = spmv.get(g, (None, None))[1]
    tts = r.get("solve_ms")
    ratio = tts / jac[g] if jac.get(g) and isinstance(tts, (int, float)) and p != "jacobi" else None
    L.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        g, p, r["bench_extra"], r.get("iterations", "-"), f(su), f(su / sp, "%.0f") if su and sp else "-",
        f(r.get("iterate_ms")), f(tts), f(ratio, "%.2fx") if ratio else "-", r.get("reason", r.get("error"))))
L += ["", "Fine SpMV (spmv-bench, median ms, the backend the solves used): " +
      ", ".join("%s %s %.4f" % (k, b, v) for k, (b, v) in spmv.items()), "",
      "Numeric-only re-setup against a full setup (`bench/amg_resetup.c`; criterion: ratio <= 0.33):", "", "```"]
L += [l.rstrip() for l in open(raw + "/resetup.txt")] + ["```", "",
      "The V-cycle's cost in SpMVs (criterion <= 12) and the setup in SpMVs on poisson3d:160 are printed by",
      "`build/tests/gpu/test_amg_gpu` (lines starting `# poisson3d:160`)."]
open(out, "w").write("\n".join(L) + "\n")
print("wrote", out)
PY
