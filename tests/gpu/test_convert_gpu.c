/* SPDX-License-Identifier: MIT */
/* spsolve/tests/gpu/test_convert_gpu.c: DRM's and DIA's conversion on the
 * device (the default on a GPU; SPS_CONVERT=host for the reference) against the host conversion, bit for bit (every
 * array of the format, values and map included), the device operator against
 * the CSR reference, value updates scattered on the device against a fresh
 * build, single precision; edge cases, generated and real matrices; and the
 * conversion's cost in csr-vector SpMVs on the large cases. */
#include "check.h"
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if SPS_HAVE_CUDA
#include "core/gpu.h"
#include "spmv/formats/diag_common.h"

static sps_operator *build(sps_context *ctx, const sps_matrix *A, int device, int single)
{
    setenv("SPS_CONVERT", device ? "device" : "host", 1); /* device: the default */
    sps_operator_opts o;
    sps_operator_opts_default(&o);
    o.precision = single ? SPS_SINGLE : SPS_DOUBLE;
    sps_operator *op = NULL;
    sps_status st = sps_operator_create(ctx, A, "drm", &o, &op);
    unsetenv("SPS_CONVERT");
    if (st != SPS_OK) {
        T_FAIL("drm build", "%s: %s", device ? "device" : "host", sps_last_error(ctx));
        return NULL;
    }
    return op;
}

/* The host arrays of op's format, fetched from the device if they live there. */
static const sps_fmt_drm *host_fmt(sps_context *ctx, sps_operator *op, int refetch)
{
    sps_fmt_drm *f = (sps_fmt_drm *)op->fmt;
    if (refetch && f->val && op->be->fetch) {
        sps__free(f->val);
        sps__free(f->map);
        f->val = NULL;
        f->map = NULL;
    }
    if (op->be->fetch && op->be->fetch(ctx, op->fmt, op->dev) != SPS_OK) {
        T_FAIL("fetch", "%s", sps_last_error(ctx));
        return NULL;
    }
    return f;
}

#define SAME(a, b, n) ((n) == 0 || memcmp((a), (b), (size_t)(n) * sizeof *(a)) == 0)

/* Every array (index's inverse, in the block's aux part, included) and count. */
static int same_fmt(const sps_fmt_drm *a, const sps_fmt_drm *b)
{
    if (a->nslot != b->nslot || a->nblk != b->nblk || a->maxmem != b->maxmem || a->seg != b->seg ||
        a->ndiag != b->ndiag || a->bseg != b->bseg || !a->hblk || !b->hblk)
        return 0;
    sps_idx nd = a->dnum[a->nslot];
    return nd == b->dnum[b->nslot] && nd == a->ndiag && SAME(a->blo, b->blo, a->nblk + 1) &&
           SAME(a->hblk + SPS_DRM_BLK_AUX(a->nslot), b->hblk + SPS_DRM_BLK_AUX(b->nslot), a->nslot) &&
           SAME(a->index, b->index, a->nslot) && SAME(a->dnum, b->dnum, a->nslot + 1) &&
           SAME(a->off, b->off, nd) && SAME(a->val, b->val, (int64_t)nd * a->seg) &&
           SAME(a->map, b->map, a->nnz);
}

/* A with every value v -> 1.5 v + 1 (same pattern). */
static void check_update_host_built(sps_context *ctx, const char *name, const sps_matrix *A);

/* DIA built on the device (the default) against the host's: the same
 * refusal, or every array bitwise equal. */
static void check_dia(sps_context *ctx, const char *name, const sps_matrix *A)
{
    sps_operator *op[2] = {NULL, NULL};
    sps_status st[2];
    for (int dev = 0; dev < 2; dev++) {
        setenv("SPS_CONVERT", dev ? "device" : "host", 1);
        st[dev] = sps_operator_create(ctx, A, "dia", NULL, &op[dev]);
        unsetenv("SPS_CONVERT");
    }
    T_OK(st[0] == st[1], "%s: dia built or refused alike on host and device (%s / %s)", name,
         sps_strerror(st[0]), sps_strerror(st[1]));
    if (st[0] == SPS_OK && st[1] == SPS_OK) {
        sps_fmt_dia *f[2];
        for (int k = 0; k < 2; k++) {
            f[k] = (sps_fmt_dia *)op[k]->fmt;
            if (op[k]->be->fetch) op[k]->be->fetch(ctx, op[k]->fmt, op[k]->dev);
        }
        int64_t slots = (int64_t)f[0]->ndiag * f[0]->nrows;
        T_OK(f[0]->ndiag == f[1]->ndiag && (slots == 0 || f[1]->val) && f[1]->dval == NULL &&
                 SAME(f[0]->off, f[1]->off, f[0]->ndiag) && SAME(f[0]->val, f[1]->val, slots) &&
                 SAME(f[0]->map, f[1]->map, f[0]->nnz),
             "%s: dia built on the device bitwise equal to the host's (%d diagonals)", name, f[0]->ndiag);
        double err = 1;
        int rep = 0;
        if (T_STATUS(ctx, sps_operator_check(op[1], A, &err, &rep), "%s: dia check", name))
            T_OK(err < 1e-12 && rep, "%s: device-built dia against the CSR: err %.2e", name, err);
    }
    sps_operator_destroy(op[0]);
    sps_operator_destroy(op[1]);
}

static void check_matrix(sps_context *ctx, const sps_matrix *A, const char *name)
{
    sps_operator *h = build(ctx, A, 0, 0), *d = build(ctx, A, 1, 0);
    if (h && d) {
        /* built on the device, the format keeps no host copy of its block
         * (dnum, index, inv, blo: in the context's workspace while planned) */
        const sps_fmt_drm *g = (const sps_fmt_drm *)d->fmt;
        T_OK(!g->hblk && !g->dnum && !g->index && !g->blo && !g->off && !g->val,
             "%s: no host arrays kept by the device conversion (hblk %d, dnum %d, index %d, blo %d, off %d, "
             "val %d)", name, g->hblk != NULL, g->dnum != NULL, g->index != NULL, g->blo != NULL,
             g->off != NULL, g->val != NULL);
        const sps_fmt_drm *fh = host_fmt(ctx, h, 0), *fd = host_fmt(ctx, d, 0);
        /* the upload took every device array (also with nnz = 0, where val
         * has no slot and dval is NULL), and the fetch brought val and map */
        T_OK(fd && fd->dval == NULL && fd->dblk == NULL && fd->dmap == NULL && fd->off && fd->val &&
                 fd->map,
             "%s: device arrays taken by the upload, fetched back (dval %d, dblk %d, dmap %d, off %d, "
             "val %d, map %d; the block below)", name, fd && fd->dval != NULL, fd && fd->dblk != NULL,
             fd && fd->dmap != NULL, fd && fd->off != NULL, fd && fd->val != NULL, fd && fd->map != NULL);
        T_OK(fh && fd && same_fmt(fh, fd),
             "%s: device conversion bitwise equal to the host's (%d slots, %d sub-blocks)", name,
             fh ? fh->nslot : -1, fh ? fh->nblk : -1);
        double err = 1;
        int rep = 0;
        if (T_STATUS(ctx, sps_operator_check(d, A, &err, &rep), "%s: check", name))
            T_OK(err < 1e-12 && rep, "%s: device-built drm against the CSR: err %.2e, repeatable %d",
                 name, err, rep);
        /* values updated on the device == a fresh build with those values */
        double *nv = NULL;
        sps_matrix *B = t_revalued(NULL, A, 1.5, 0.0, 1.0, &nv);
        sps_operator *hb = B ? build(ctx, B, 0, 0) : NULL;
        if (hb && T_STATUS(ctx, sps_operator_update_values(d, nv), "%s: update", name)) {
            const sps_fmt_drm *fu = host_fmt(ctx, d, 1), *fb = host_fmt(ctx, hb, 0);
            T_OK(fu && fb && same_fmt(fu, fb), "%s: device update bitwise equal to a fresh build", name);
        }
        sps_operator_destroy(hb);
        sps_matrix_destroy(B);
        free(nv);
    }
    sps_operator_destroy(h);
    sps_operator_destroy(d);
    check_update_host_built(ctx, name, A);
    check_dia(ctx, name, A);
    sps_operator *s = build(ctx, A, 1, 1);
    if (s) {
        double err = 1;
        int rep = 0;
        if (T_STATUS(ctx, sps_operator_check(s, A, &err, &rep), "%s: single check", name))
            T_OK(err < 1e-5 && rep, "%s: device-built drm, single: err %.2e", name, err);
        sps_operator_destroy(s);
    }
}

/* y = A x on the device, back on the host (NULL after a FAIL line). */
static double *apply_dev(sps_context *ctx, sps_operator *op, const double *x, sps_idx nc, sps_idx nr)
{
    void *dx = NULL, *dy = NULL;
    double *y = malloc(((size_t)nr + 1) * sizeof *y);
    int ok = sps__dmalloc(ctx, &dx, (size_t)nc * 8) == SPS_OK && sps__dmalloc(ctx, &dy, (size_t)nr * 8) == SPS_OK &&
             sps__h2d(ctx, dx, x, (size_t)nc * 8) == SPS_OK && sps_operator_apply(op, 1.0, dx, 0.0, dy) == SPS_OK &&
             sps__d2h(ctx, y, dy, (size_t)nr * 8) == SPS_OK;
    sps__dfree(dx);
    sps__dfree(dy);
    if (!ok) {
        T_FAIL("apply on the device", "%s", sps_last_error(ctx));
        free(y);
        return NULL;
    }
    return y;
}

/* Host-built drm and dia: values updated on the device (scattered through
 * the uploaded map) give bitwise the products of a fresh build. */
static void check_update_host_built(sps_context *ctx, const char *name, const sps_matrix *A)
{
    const char *specs[] = {"drm", "dia"};
    sps_idx nr = sps_matrix_rows(A), nc = sps_matrix_cols(A);
    double *x = malloc(((size_t)nc + 1) * sizeof *x), *nv = NULL;
    for (sps_idx i = 0; i < nc; i++) x[i] = 1.0 + (double)(i % 17) / 16.0;
    sps_matrix *B = t_revalued(NULL, A, 1.5, 0.0, 1.0, &nv);
    for (int k = 0; k < 2 && B; k++) {
        sps_operator *u = NULL, *fresh = NULL;
        if (sps_operator_create(ctx, A, specs[k], NULL, &u) != SPS_OK) continue; /* dia may refuse */
        if (T_STATUS(ctx, sps_operator_create(ctx, B, specs[k], NULL, &fresh), "%s %s fresh", name, specs[k]) &&
            T_STATUS(ctx, sps_operator_update_values(u, nv), "%s %s update", name, specs[k]) &&
            T_STATUS(ctx, sps_operator_update_values(u, nv), "%s %s update again", name, specs[k])) {
            double *yu = apply_dev(ctx, u, x, nc, nr), *yf = apply_dev(ctx, fresh, x, nc, nr);
            T_OK(yu && yf && memcmp(yu, yf, (size_t)nr * sizeof *yu) == 0,
                 "%s %s: values updated on the device give a fresh build's products bit for bit", name,
                 specs[k]);
            free(yu);
            free(yf);
        }
        sps_operator_destroy(u);
        sps_operator_destroy(fresh);
    }
    sps_matrix_destroy(B);
    free(nv);
    free(x);
}

static sps_matrix *edge_matrix(sps_idx n, sps_idx empty_row, sps_idx long_row)
{
    t_triplets t = {0};
    for (sps_idx i = 0; i < n; i++) {
        if (i == empty_row) continue;
        if (i == long_row) {
            for (sps_idx j = 0; j < n; j += 1 + (j % 3 == 1)) t_trip_add(&t, i, j, 1.0 + j % 7);
            continue;
        }
        t_trip_add(&t, i, i, 3.0 + i % 4);
        if (i > 0) t_trip_add(&t, i, i - 1, -1.25);
        if (i + 5 < n) t_trip_add(&t, i, i + 5, -0.5);
    }
    return t_trip_matrix(NULL, n, n, &t);
}

static void test_edges(sps_context *ctx)
{
    const sps_idx ns[] = {1, 31, 32, 33, 1023, 1024, 1025};
    for (size_t k = 0; k < sizeof ns / sizeof *ns; k++)
        for (int v = 0; v < 4; v++) {
            sps_idx n = ns[k];
            sps_matrix *A = edge_matrix(n, v & 1 ? n / 2 : -1, v & 2 ? n - 1 - n / 3 : -1);
            if (!A) continue;
            char name[64];
            snprintf(name, sizeof name, "n = %d%s%s", n, v & 1 ? ", empty row" : "",
                     v & 2 ? ", long row" : "");
            check_matrix(ctx, A, name);
            sps_matrix_destroy(A);
        }
    /* rectangular both ways (a long last row in the wide one), and no entries at all */
    const sps_idx shapes[][2] = {{100, 3000}, {3000, 100}, {64, 64}};
    for (int k = 0; k < 3; k++) {
        const sps_idx m = shapes[k][0], n = shapes[k][1];
        t_triplets t = {0};
        for (sps_idx i = 0; k < 2 && i < m; i++) {
            for (sps_idx j = i % 7; j < n; j += 37 + i % 5) t_trip_add(&t, i, j, 1.0 + (double)((i + j) % 9));
            if (i == m - 1)
                for (sps_idx j = 0; j < n; j += 2) t_trip_add(&t, i, j, -2.0);
        }
        sps_matrix *A = t_trip_matrix(NULL, m, n, &t);
        if (!A) continue;
        char name[64];
        snprintf(name, sizeof name, "%d x %d%s", m, n, k == 2 ? ", no entries" : "");
        check_matrix(ctx, A, name);
        sps_matrix_destroy(A);
    }
}

/* Conversion cost in csr-vector SpMVs (the target: at most 10). */
static void timing(sps_context *ctx, const char *spec)
{
    sps_matrix *A = NULL;
    if (sps_matrix_generate(NULL, spec, &A) != SPS_OK) return;
    sps_matrix_upload(ctx, A, NULL, NULL);
    sps_operator *ref = NULL, *h = build(ctx, A, 0, 0), *d = build(ctx, A, 1, 0);
    sps_timing t;
    if (h && d && sps_operator_create(ctx, A, "csr-vector", NULL, &ref) == SPS_OK &&
        sps_operator_time(ref, 20, 0, &t) == SPS_OK) {
        sps_operator_info ih, id;
        sps_operator_get_info(h, &ih);
        sps_operator_get_info(d, &id);
        double dev_ms = id.convert_ms + id.upload_ms;
        printf("# %s: csr-vector %.1f us per SpMV; drm host conversion %.1f ms + upload %.1f ms; "
               "device conversion %.2f ms + %.2f ms = %.1f SpMVs\n", spec, t.median_us,
               ih.convert_ms, ih.upload_ms, id.convert_ms, id.upload_ms, dev_ms * 1e3 / t.median_us);
        const sps_fmt_drm *fh = host_fmt(ctx, h, 0), *fd = host_fmt(ctx, d, 0);
        T_OK(fh && fd && same_fmt(fh, fd), "%s: device conversion bitwise equal to the host's", spec);
    }
    sps_operator_destroy(ref);
    sps_operator_destroy(h);
    sps_operator_destroy(d);
    sps_matrix_destroy(A);
}

static void run(sps_context *ctx)
{
    test_edges(ctx);
    const char *gens[] = {"poisson3d:40", "poisson2d:300", "banded:200000,9,0.01,1", "powerlaw:50000,8,3"};
    t_each_generated(ctx, NULL, "generated matrices", gens, 4, check_matrix);
    t_each_real(ctx, NULL, "real matrices", check_matrix);
    timing(ctx, "poisson3d:160");
    timing(ctx, "banded:2000000,9,0.01,1");
}

int main(void) { return t_run_gpu("drm conversion on the GPU", run); }

#else

T_MAIN_NO_CUDA("drm conversion on the GPU")

#endif
