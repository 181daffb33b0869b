/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/gmres/emu/onek_rows.h: the test matrix of the one-kernel
 * emulations (solvers/gmres/emu/onek_harness.cc and
 * solvers/bicgstab/emu/onek_harness.cc): one matrix as CSR and as DIA, and
 * the device rows (sps_dev_rows) a kernel walks, either way. Included after
 * onek_emu.h. */
#pragma once
#include "spmv/dev_rows.cuh"
#include <cstring>
#include <vector>

struct mat {
    int n;
    std::vector<int> rp, ci, off;
    std::vector<double> v, dval; /* CSR values; DIA values, diagonal d at d n */
    std::vector<double> diag;    /* the main diagonal, where a harness keeps it */
};

static sps_dev_rows rows_of(const mat &A, int dia)
{
    sps_dev_rows r;
    memset(&r, 0, sizeof r);
    r.n = A.n;
    if (dia) {
        r.kind = SPS_ROWS_DIA;
        r.ndiag = (sps_idx)A.off.size();
        r.nnz = r.ndiag * A.n;
        r.off = A.off.data();
        r.val = A.dval.data();
    } else {
        r.kind = SPS_ROWS_CSR;
        r.row_ptr = A.rp.data();
        r.col_idx = A.ci.data();
        r.val = A.v.data();
        r.nnz = (sps_idx)A.v.size();
    }
    return r;
}
