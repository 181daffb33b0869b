/* SPDX-License-Identifier: MIT */
/* spsolve/tests/unit/test_core.c: status names, contexts, CSR from triplets */
#include "check.h"
#include "core/internal.h"

#include <math.h>
#include <string.h>

static void test_names(void)
{
    T_OK(strcmp(sps_strerror(SPS_ERR_PARSE), "parse error") == 0, "sps_strerror(SPS_ERR_PARSE)");
    T_OK(strcmp(sps_reason_str(SPS_DIVERGED_INDEFINITE), "indefinite matrix (p'Ap <= 0)") == 0,
         "sps_reason_str(SPS_DIVERGED_INDEFINITE)");
    T_OK(strcmp(sps_strerror((sps_status)999), "unknown status") == 0, "unknown status named");
}

static void test_host_context(void)
{
    sps_context *ctx = NULL;
    T_STATUS(NULL, sps_context_create(&ctx, SPS_DEVICE_HOST), "host context");
    T_OK(ctx && !sps_context_on_gpu(ctx), "host context is not on a GPU");
    T_OK(sps_context_create(NULL, 0) == SPS_ERR_INVALID_ARG, "NULL ctx pointer rejected");
    sps_context *bad = (sps_context *)1;
    T_OK(sps_context_create(&bad, -7) == SPS_ERR_INVALID_ARG && bad == NULL, "device -7 rejected");
    sps_context_destroy(ctx);
}

static void test_triplets(void)
{
    /* unsorted, duplicates, an empty row */
    sps_idx ri[] = {2, 0, 2, 0, 2, 0};
    sps_idx ci[] = {1, 2, 0, 0, 1, 2};
    double v[] = {1, 2, 3, 4, 5, 6};
    sps_csr A;
    T_STATUS(NULL, sps__csr_from_triplets(NULL, 3, 3, 6, ri, ci, v, SPS_GENERAL, &A), "triplets -> CSR");
    T_OK(A.nnz == 4, "duplicates summed: nnz 4 (got %d)", A.nnz);
    T_OK(A.row_ptr[0] == 0 && A.row_ptr[1] == 2 && A.row_ptr[2] == 2 && A.row_ptr[3] == 4,
         "row pointer 0 2 2 4");
    T_OK(A.col_idx[0] == 0 && A.col_idx[1] == 2 && A.val[0] == 4 && A.val[1] == 8,
         "row 0 sorted: (0,4) (2,8)");
    T_OK(A.col_idx[2] == 0 && A.col_idx[3] == 1 && A.val[2] == 3 && A.val[3] == 6,
         "row 2 sorted: (0,3) (1,6)");
    T_STATUS(NULL, sps__csr_check(NULL, &A), "result passes the structural check");
    sps__csr_free(&A);

    /* symmetric mirroring: lower triangle with diagonal */
    sps_idx sr[] = {0, 1, 2, 2};
    sps_idx sc[] = {0, 0, 1, 2};
    double sv[] = {4, -1, -2, 5};
    T_STATUS(NULL, sps__csr_from_triplets(NULL, 3, 3, 4, sr, sc, sv, SPS_SYMMETRIC, &A), "symmetric -> CSR");
    T_OK(A.nnz == 6, "symmetric mirrored: nnz 6 (got %d)", A.nnz);
    T_OK(A.col_idx[1] == 1 && A.val[1] == -1, "a(0,1) = a(1,0) = -1");
    sps__csr_free(&A);
    T_STATUS(NULL, sps__csr_from_triplets(NULL, 3, 3, 4, sr, sc, sv, SPS_SKEW_SYMMETRIC, &A), "skew -> CSR");
    T_OK(A.val[1] == 1, "skew mirrored negated: a(0,1) = 1 (got %g)", A.val[1]);
    sps__csr_free(&A);

    sps_idx bad[] = {3};
    sps_idx zero[] = {0};
    double one[] = {1};
    T_OK(sps__csr_from_triplets(NULL, 3, 3, 1, bad, zero, one, SPS_GENERAL, &A) == SPS_ERR_INVALID_ARG,
         "row index past the end rejected");
    T_OK(strstr(sps_last_error(NULL), "outside") != NULL, "message says outside: %s", sps_last_error(NULL));
}

static void test_alloc_failure(void)
{
    sps_idx ri[] = {0, 1}, ci[] = {1, 0};
    double v[] = {1, 2};
    int failures = 0, leaks_or_crash = 0;
    for (long k = 1; k < 20; k++) {
        sps_csr A;
        sps__fail_alloc_after(k);
        sps_status st = sps__csr_from_triplets(NULL, 2, 2, 2, ri, ci, v, SPS_GENERAL, &A);
        sps__fail_alloc_after(0);
        if (st == SPS_ERR_NO_MEMORY) {
            failures++;
            if (A.row_ptr || A.col_idx) leaks_or_crash++;
        } else if (st == SPS_OK) {
            sps__csr_free(&A);
            break;
        }
    }
    T_OK(failures >= 3 && leaks_or_crash == 0,
         "every allocation failure in CSR build reported cleanly (%d injected)", failures);
}

static void test_matrix_api(void)
{
    sps_idx rp[] = {0, 2, 3};
    sps_idx ci[] = {1, 0, 1};
    double v[] = {2, 1, 3};
    sps_matrix *A = NULL;
    T_STATUS(NULL, sps_matrix_create_csr(NULL, 2, 2, rp, ci, v, &A), "sps_matrix_create_csr");
    const sps_idx *r, *c;
    const double *val;
    sps_matrix_csr(A, &r, &c, &val);
    T_OK(c[0] == 0 && val[0] == 1 && c[1] == 1 && val[1] == 2, "unsorted row sorted on creation");
    double x[] = {1, 2}, y[] = {NAN, NAN};
    sps_matrix_spmv_host(A, 1.0, x, 0.0, y);
    T_OK(y[0] == 5 && y[1] == 6, "host SpMV with beta 0 ignores NaN in y");
    sps_matrix_destroy(A);
    sps_idx badrp[] = {0, 2, 1};
    T_OK(sps_matrix_create_csr(NULL, 2, 2, badrp, ci, v, &A) == SPS_ERR_INVALID_ARG && !A,
         "decreasing row pointer rejected");
}

int main(void)
{
    test_names();
    test_host_context();
    test_triplets();
    test_alloc_failure();
    test_matrix_api();
    return t_done();
}
