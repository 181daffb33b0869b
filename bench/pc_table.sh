#!/bin/sh
# preconditioner measurement: solve_ms by phase for each (system, method, precond);
# ic0:exact / ilu0:exact: the natural order; ic0:order=color / ilu0:order=color: the
# multicolor order (what plain ic0 / ilu0 are)
S=${SPSOLVE:-build/bin/spsolve}
M=${1:-.device/matrices}
row() { # label src method precond
  out=$($S $2 --method $3 --precond "$4" --json -q --maxit 20000 2>&1 | tail -n 1)
  echo "$out" | python3 -c "
import json,sys
try: j=json.loads(sys.stdin.read())
except Exception as e: print('%-28s %-10s %-26s ERROR'%('$1','$3','$4')); sys.exit()
print('%-28s %-10s %-26s its %6s setup %8.1f pc %8.1f iter %8.1f us/it %7.1f solve %8.1f %s'%('$1','$3','$4',j.get('iterations'),j.get('setup_ms',0),j.get('precond_ms',0) or 0,j.get('iterate_ms',0),1e3*j.get('iterate_ms',0)/max(1,j.get('iterations',1)),j.get('solve_ms',0),j.get('reason')))"
}
for p in none jacobi l1jacobi cheby bjacobi ic0:exact ic0:solve=jacobi ic0:solve=jacobi,sweeps=1 ic0:order=color; do
  row poisson3d:160 "--gen poisson3d:160" cg $p
  row poisson3d:100 "--gen poisson3d:100" cg $p
  row poisson2d:1000 "--gen poisson2d:1000" cg $p
done
for p in none jacobi cheby bjacobi ilu0:exact ilu0:solve=jacobi ilu0:solve=jacobi,sweeps=1 ilu0:order=color; do
  row convdiff2d:1000,10 "--gen convdiff2d:1000,10" bicgstab $p
  row convdiff2d:1000,10 "--gen convdiff2d:1000,10" gmres $p
done
for m in bcsstk18 nos6 gr_30_30 1138_bus; do
  for p in none jacobi cheby bjacobi ic0:exact ic0:solve=jacobi ic0:order=color; do row $m "-A $M/$m.mtx.gz" cg $p; done
done
for m in cage11 wang4 memplus sherman5 orsirr_1 pde2961; do
  for p in none jacobi bjacobi ilu0:exact ilu0:solve=jacobi ilu0:order=color; do row $m "-A $M/$m.mtx.gz" gmres $p; done
done
