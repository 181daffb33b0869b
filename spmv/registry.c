/* SPDX-License-Identifier: MIT */
/* spsolve/spmv/registry.c: the one table of SpMV backends, found by name once */
#include "backend.h"

#include <stdio.h>
#include <string.h>

/* The formats, in --list-spmv order: X(name) for the table
 * `sps_backend_<name>` of spmv/formats/<name>.c. Adding a format is one line
 * here. */
#define SPS_FORMATS(X) \
    X(csr_scalar)      \
    X(csr_vector)      \
    X(merge)           \
    X(drm)             \
    X(dia)             \
    X(hyb)             \
    X(cusparse)        \
    X(ell)             \
    X(coo)             \
    X(bsr)             \
    X(lightspmv)       \
    /* a new format: one X(name) line above this one */

#define SPS_FORMAT_EXTERN(name) extern const sps_backend sps_backend_##name;
#define SPS_FORMAT_ENTRY(name) &sps_backend_##name,
SPS_FORMATS(SPS_FORMAT_EXTERN)

static const sps_backend *const registry[] = {SPS_FORMATS(SPS_FORMAT_ENTRY)};
#define NREG ((int)(sizeof registry / sizeof *registry))

int sps__backend_count(void) { return NREG; }

const sps_backend *sps__backend_at(int i)
{
    return (i >= 0 && i < NREG) ? registry[i] : NULL;
}

const sps_backend *sps__backend_find(const char *spec, const char **params)
{
    if (!spec) return NULL;
    const char *colon = strchr(spec, ':');
    size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
    for (int i = 0; i < NREG; i++) {
        if (strlen(registry[i]->name) == len && strncmp(registry[i]->name, spec, len) == 0) {
            if (params) *params = colon ? colon + 1 : "";
            return registry[i];
        }
    }
    return NULL;
}

static unsigned caps_of(const sps_backend *b)
{
    unsigned c = b->caps & ~(unsigned)SPS_CAP_GPU;
    if (b->apply) c |= SPS_CAP_GPU;
    return c;
}

sps_status sps_spmv_backend(int i, const char **name, unsigned *caps, const char **summary)
{
    /* The formats first, then the two selectors. */
    static const char *sel_names[] = {"auto", "tune"};
    static const char *sel_summary[] = {
        "choose a format from the matrix features (rule in doc/spmv.md)",
        "time every candidate on this matrix; keep the fastest whose conversion pays off"};
    if (i >= 0 && i < NREG) {
        if (name) *name = registry[i]->name;
        if (caps) *caps = caps_of(registry[i]);
        if (summary) *summary = registry[i]->summary;
        return SPS_OK;
    }
    if (i >= NREG && i < NREG + 2) {
        if (name) *name = sel_names[i - NREG];
        if (caps) *caps = SPS_CAP_SELECTOR | SPS_CAP_DETERMINISTIC;
        if (summary) *summary = sel_summary[i - NREG];
        return SPS_OK;
    }
    return SPS_ERR_INVALID_ARG;
}
