/* SPDX-License-Identifier: MIT */
/* spsolve/solvers/registry.c: the Krylov methods, by name, with their host and
 * CUDA ops tables, and the public listing.
 *
 * A method lives in solvers/<name>/ and defines sps__method_<name> (its
 * sps_method_impl), sps__<ops>_ops_host and, in a CUDA build,
 * sps__<ops>_ops_cuda. Registering it is one line of SPS_METHODS. */
#include "krylov.h"

#include <ctype.h>
#include <string.h>

/* X(name, ops prefix): one line per method, in listing order. */
#define SPS_METHODS(X)    \
    X(cg, cg)             \
    X(bicgstab, bicg)     \
    X(gmres, gm)          \
    X(idr, idr)           \
    /* end of the list */

#define DECLARE(name, ops)                                  \
    extern const sps_method_impl sps__method_##name;        \
    extern const struct sps_##ops##_ops sps__##ops##_ops_host; \
    extern const struct sps_##ops##_ops sps__##ops##_ops_cuda;
SPS_METHODS(DECLARE)
#undef DECLARE

#define ENTRY(name, ops) {&sps__method_##name, &sps__##ops##_ops_host, SPS_CUDA_TABLE(sps__##ops##_ops_cuda)},
static const sps_method_entry methods[] = {SPS_METHODS(ENTRY)};
#undef ENTRY

int sps__method_count(void) { return (int)(sizeof methods / sizeof *methods); }

const sps_method_entry *sps__method_at(int i)
{
    return i >= 0 && i < sps__method_count() ? &methods[i] : NULL;
}

int sps__name_eq(const char *name, size_t len, const char *known)
{
    if (strlen(known) != len) return 0;
    for (size_t i = 0; i < len; i++)
        if (tolower((unsigned char)name[i]) != tolower((unsigned char)known[i])) return 0;
    return 1;
}

const sps_method_entry *sps__method_find(const char *name, size_t len)
{
    for (int i = 0; i < sps__method_count(); i++)
        if (sps__name_eq(name, len, methods[i].impl->name)) return &methods[i];
    return NULL;
}

sps_status sps_solver_method(int i, const char **name, unsigned *caps, const char **summary)
{
    const sps_method_entry *e = sps__method_at(i);
    if (!e) return sps__err(NULL, SPS_ERR_INVALID_ARG, "sps_solver_method: no method %d", i);
    if (name) *name = e->impl->name;
    if (caps) *caps = e->impl->caps;
    if (summary) *summary = e->impl->summary;
    return SPS_OK;
}
