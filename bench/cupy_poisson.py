#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# spsolve/bench/cupy_poisson.py N: the peer's time to solution. CuPy CG on the 7-point Laplacian N^3 (same matrix as spsolve --gen poisson3d:N),
# b = A*ones, rtol 1e-8, from host CSR to host x; median of 3 after a warm-up.
import sys, time
import numpy as np, scipy.sparse as sp
import cupy as cp, cupyx.scipy.sparse as csp, cupyx.scipy.sparse.linalg as cla
N = int(sys.argv[1])
t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(N, N))
I = sp.identity(N)
A = (sp.kron(sp.kron(t, I), I) + sp.kron(sp.kron(I, t), I) + sp.kron(sp.kron(I, I), t)).tocsr()
A.sort_indices(); A = A.astype(np.float64)
b = A @ np.ones(A.shape[0])
def solve():
    Ad = csp.csr_matrix(A); bd = cp.asarray(b)
    x, info = cla.cg(Ad, bd, rtol=1e-8, maxiter=20000)
    return x.get(), info
solve(); cp.cuda.Device().synchronize()
ts = []
for _ in range(3):
    t0 = time.perf_counter(); x, info = solve(); cp.cuda.Device().synchronize(); ts.append((time.perf_counter() - t0) * 1e3)
    tu = time.perf_counter(); Ad = csp.csr_matrix(A); cp.cuda.Device().synchronize(); up = (time.perf_counter() - tu) * 1e3
print("# cupy poisson3d:%d nnz %d cg: %.1f ms median (runs %s), upload alone %.1f ms, info %d, relres %.2e" % (
    N, A.nnz, sorted(ts)[1], ["%.1f" % v for v in ts], up, info, np.linalg.norm(b - A @ x) / np.linalg.norm(b)))
