#!/bin/sh
# host: exact vs par ILU(0), GMRES(100) and BiCGSTAB, on every shared matrix
cd /work/main
for f in /work/shared/matrices/*.mtx.gz; do
  m=$(basename $f .mtx.gz)
  for meth in gmres:restart=100 bicgstab; do
    for p in ilu0:exact ilu0:factor=par,solve=jacobi; do
      r=$(timeout 120 build/bin/spsolve -A $f --device cpu --method $meth --precond $p --maxit 10000 --json 2>/dev/null | python3 -c 'import json,sys
try:
  j=json.load(sys.stdin); print("conv" if j.get("converged") else "NO", j.get("iterations"), "%.1f" % (j.get("total_ms") or 0), (j.get("reason") or j.get("error") or "").replace(" ","_"))
except Exception as e: print("timeout/err")')
      echo "$m $meth $p $r"
    done
  done
done
