/* SPDX-License-Identifier: MIT */
/* spsolve/core/upload.cu: host-to-device copies through pinned memory
 * (sps__h2d_pinned): page-locking the source in place ("register") or a
 * staging ring of pinned buffers fed by several host threads ("ring").
 *
 * A pageable cudaMemcpy stages through a small driver buffer with one host
 * thread and reaches a fraction of the link (7 GB/s against 54 GB/s pinned on
 * an H100). The ring keeps the link busy: each worker thread owns two pinned
 * buffers and a stream, copies chunk i into one buffer while the DMA of chunk
 * i - 1 drains the other, and the workers together feed the copy engine. */
#include "cuda_check.cuh"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

constexpr size_t CHUNK = (size_t)4 << 20;   /* bytes per staging buffer */
constexpr int MAX_WORKERS = 16;
constexpr size_t SMALL = (size_t)1 << 20;   /* below this in all: a plain copy */

struct ring_worker {
    char *buf[2];
    cudaStream_t stream;
    cudaEvent_t done[2];
};

struct ring {
    int workers;
    ring_worker w[MAX_WORKERS];
};

struct piece {
    char *dst;
    const char *src;
    size_t bytes;
};

int env_int(const char *name, int def, int lo, int hi)
{
    const char *e = getenv(name);
    if (!e || !*e) return def;
    int v = atoi(e);
    return v < lo ? lo : v > hi ? hi : v;
}

/* Staging workers: SPS_UPLOAD_THREADS, else the online CPUs clamped to
 * [4, 8]. H100 machine (16 cores), poisson3d:160's 359 MB CSR: 4 workers
 * 13.9 GB/s, 8 24.2, 12 25.7, 16 26.8; each worker pins 2 x 4 MiB. */
int ring_workers(void)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int def = cpus < 4 ? 4 : cpus > 8 ? 8 : (int)cpus;
    return env_int("SPS_UPLOAD_THREADS", def, 1, MAX_WORKERS);
}

void ring_destroy(ring *r)
{
    if (!r) return;
    for (int i = 0; i < r->workers; i++) {
        ring_worker *w = &r->w[i];
        if (w->stream) cudaStreamSynchronize(w->stream);
        for (int b = 0; b < 2; b++) {
            if (w->buf[b]) cudaFreeHost(w->buf[b]);
            if (w->done[b]) cudaEventDestroy(w->done[b]);
        }
        if (w->stream) cudaStreamDestroy(w->stream);
    }
    sps__free(r);
}

sps_status ring_make(sps_context *ctx, int workers, ring **out)
{
    ring *r = (ring *)sps__calloc(1, sizeof *r);
    if (!r) return sps__err(ctx, SPS_ERR_NO_MEMORY, "upload ring: out of memory");
    *out = r;
    for (int i = 0; i < workers; i++) {
        ring_worker *w = &r->w[i];
        r->workers = i + 1; /* what ring_destroy must free */
        SPS_CUDA(ctx, cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking));
        for (int b = 0; b < 2; b++) {
            SPS_CUDA(ctx, cudaHostAlloc((void **)&w->buf[b], CHUNK, cudaHostAllocDefault));
            SPS_CUDA(ctx, cudaEventCreateWithFlags(&w->done[b], cudaEventDisableTiming));
        }
    }
    return SPS_OK;
}

/* The context's ring with at least `workers` workers (made or regrown now). */
sps_status ring_get(sps_context *ctx, int workers, ring **out)
{
    ring **slot = (ring **)sps__gpu_ring_slot(ctx);
    if (*slot && (*slot)->workers >= workers) {
        *out = *slot;
        return SPS_OK;
    }
    ring_destroy(*slot);
    *slot = NULL;
    ring *r = NULL;
    sps_status st = ring_make(ctx, workers, &r);
    if (st != SPS_OK) {
        ring_destroy(r);
        return st;
    }
    *slot = r;
    *out = r;
    return SPS_OK;
}

/* Worker k copies chunks k, k + W, k + 2W, ... of the concatenated pieces. */
cudaError_t ring_work(int device, ring_worker *w, const std::vector<piece> *chunks, size_t k,
                      size_t W)
{
    cudaError_t e = cudaSetDevice(device); /* a new thread starts on device 0 */
    size_t j = 0;
    for (size_t i = k; i < chunks->size() && e == cudaSuccess; i += W, j++) {
        const piece &c = (*chunks)[i];
        int b = (int)(j & 1);
        if (j >= 2) e = cudaEventSynchronize(w->done[b]); /* buffer b drained */
        if (e != cudaSuccess) break;
        memcpy(w->buf[b], c.src, c.bytes);
        e = cudaMemcpyAsync(c.dst, w->buf[b], c.bytes, cudaMemcpyHostToDevice, w->stream);
        if (e == cudaSuccess) e = cudaEventRecord(w->done[b], w->stream);
    }
    cudaError_t e2 = cudaStreamSynchronize(w->stream);
    return e != cudaSuccess ? e : e2;
}

/* The other way: worker k brings chunks k, k + W, ... back, the DMA of one
 * chunk into a pinned buffer overlapping the memcpy of the previous one out of
 * the other buffer. Several threads also share the first-touch page faults of
 * a fresh destination (25 ms for 32 MB on one thread, the whole of a pageable
 * copy's cost, on the H100 machine). */
cudaError_t ring_work_down(int device, ring_worker *w, const std::vector<piece> *chunks, size_t k,
                           size_t W)
{
    cudaError_t e = cudaSetDevice(device);
    const piece *held[2] = {NULL, NULL}; /* the chunk each buffer is receiving */
    size_t j = 0;
    for (size_t i = k; i < chunks->size() && e == cudaSuccess; i += W, j++) {
        int b = (int)(j & 1);
        if (held[b]) {
            e = cudaEventSynchronize(w->done[b]);
            if (e != cudaSuccess) break;
            memcpy(held[b]->dst, w->buf[b], held[b]->bytes);
        }
        held[b] = &(*chunks)[i];
        e = cudaMemcpyAsync(w->buf[b], held[b]->src, held[b]->bytes, cudaMemcpyDeviceToHost, w->stream);
        if (e == cudaSuccess) e = cudaEventRecord(w->done[b], w->stream);
    }
    for (size_t t = 0; t < 2 && e == cudaSuccess; t++) {
        int b = (int)((j + t) & 1); /* the older buffer first */
        if (!held[b]) continue;
        e = cudaEventSynchronize(w->done[b]);
        if (e == cudaSuccess) memcpy(held[b]->dst, w->buf[b], held[b]->bytes);
    }
    cudaError_t e2 = cudaStreamSynchronize(w->stream);
    return e != cudaSuccess ? e : e2;
}

typedef cudaError_t (*ring_fn)(int device, ring_worker *w, const std::vector<piece> *chunks, size_t k,
                               size_t W);

/* The parts cut into chunks, W workers (the calling thread one of them) each
 * running `work` over chunks k, k + W, ...; after the context's stream (it
 * may still be writing the sources, or the destinations' neighbours). */
sps_status run_ring(sps_context *ctx, const std::vector<piece> &parts, ring_fn work)
{
    std::vector<piece> chunks;
    for (const piece &p : parts)
        for (size_t off = 0; off < p.bytes; off += CHUNK)
            chunks.push_back({p.dst + off, p.src + off, p.bytes - off < CHUNK ? p.bytes - off : CHUNK});
    int W = ring_workers();
    if ((size_t)W > chunks.size()) W = (int)chunks.size();
    ring *r = NULL;
    sps_status st = ring_get(ctx, W, &r);
    if (st != SPS_OK) return st; /* the caller falls back to a plain copy */
    SPS_CUDA(ctx, cudaStreamSynchronize(sps_stream(ctx)));
    std::vector<cudaError_t> err((size_t)W, cudaSuccess);
    std::vector<std::thread> th;
    for (int k = 1; k < W; k++)
        th.emplace_back([&, k] { err[(size_t)k] = work(ctx->device, &r->w[k], &chunks, (size_t)k, (size_t)W); });
    err[0] = work(ctx->device, &r->w[0], &chunks, 0, (size_t)W);
    for (std::thread &t : th) t.join();
    for (int k = 0; k < W; k++) SPS_CUDA(ctx, err[(size_t)k]);
    return SPS_OK;
}

sps_status copy_ring(sps_context *ctx, const std::vector<piece> &parts)
{
    return run_ring(ctx, parts, ring_work);
}

sps_status copy_ring_down(sps_context *ctx, char *dst, const char *src, size_t bytes)
{
    return run_ring(ctx, std::vector<piece>{{dst, src, bytes}}, ring_work_down);
}

sps_status copy_register(sps_context *ctx, const std::vector<piece> &parts)
{
    std::vector<int> pinned(parts.size(), 0);
    sps_status st = SPS_OK;
    cudaStream_t s = sps_stream(ctx);
    for (size_t i = 0; i < parts.size() && st == SPS_OK; i++) {
        /* already registered (by the caller), or not registrable here: the
         * part is copied as it is (pinned already, or pageable) */
        cudaError_t e = cudaHostRegister((void *)parts[i].src, parts[i].bytes, cudaHostRegisterDefault);
        if (e == cudaSuccess) pinned[i] = 1;
        else cudaGetLastError();
        {
            e = cudaMemcpyAsync(parts[i].dst, parts[i].src, parts[i].bytes, cudaMemcpyHostToDevice, s);
            if (e != cudaSuccess) st = sps__cuda_fail(ctx, e, "cudaMemcpyAsync", __FILE__, __LINE__);
        }
    }
    cudaError_t e = cudaStreamSynchronize(s);
    if (e != cudaSuccess && st == SPS_OK) st = sps__cuda_fail(ctx, e, "cudaStreamSynchronize", __FILE__, __LINE__);
    for (size_t i = 0; i < parts.size(); i++)
        if (pinned[i]) {
            e = cudaHostUnregister((void *)parts[i].src);
            if (e != cudaSuccess && st == SPS_OK)
                st = sps__cuda_fail(ctx, e, "cudaHostUnregister", __FILE__, __LINE__);
        }
    return st;
}

} // namespace

extern "C" void sps__ring_prepare(sps_context *ctx)
{
    ring *r = NULL;
    if (ring_get(ctx, ring_workers(), &r) != SPS_OK) {
        ctx->msg[0] = 0; /* best effort: the first upload tries again */
        cudaGetLastError();
    }
}

extern "C" void sps__ring_free(sps_context *ctx)
{
    ring **slot = (ring **)sps__gpu_ring_slot(ctx);
    ring_destroy(*slot);
    *slot = NULL;
}

extern "C" sps_status sps__h2d_pinned(sps_context *ctx, int n, void *const *dst,
                                      const void *const *src, const size_t *bytes, char *how,
                                      size_t how_len)
{
    std::vector<piece> parts;
    size_t total = 0;
    for (int i = 0; i < n; i++)
        if (bytes[i]) {
            parts.push_back({(char *)dst[i], (const char *)src[i], bytes[i]});
            total += bytes[i];
        }
    const char *e = getenv("SPS_UPLOAD");
    const char *way = e && strcmp(e, "register") == 0 ? "register" : "ring";
    if (total < SMALL) way = "pageable";
    if (how && how_len) {
        strncpy(how, way, how_len - 1);
        how[how_len - 1] = 0;
    }
    if (parts.empty()) return SPS_OK;
    if (way[0] == 'r' && way[1] == 'e') return copy_register(ctx, parts);
    if (way[0] == 'r') {
        sps_status st = copy_ring(ctx, parts);
        if (st != SPS_ERR_NO_MEMORY) return st;
        /* no pinned staging memory to be had (a locked-memory limit): plain copies */
        if (how && how_len) {
            strncpy(how, "pageable", how_len - 1);
            how[how_len - 1] = 0;
        }
    }
    for (const piece &p : parts) {
        sps_status st = sps__h2d(ctx, p.dst, p.src, p.bytes);
        if (st != SPS_OK) return st;
    }
    return SPS_OK;
}

/* Whether most pages of [p, p + bytes) are resident (written before): a plain
 * copy into them is fast (3.3 ms for 32 MB on the H100 machine) and beats
 * the ring's thread start-up; into pages never touched the first-touch faults
 * dominate (25 ms) and the ring's threads share them (8 ms). */
static int mostly_resident(const void *p, size_t bytes)
{
    long pg = sysconf(_SC_PAGESIZE);
    if (pg <= 0) return 0;
    uintptr_t a = (uintptr_t)p & ~((uintptr_t)pg - 1), b = (uintptr_t)p + bytes;
    size_t pages = (size_t)((b - a + (uintptr_t)pg - 1) / (uintptr_t)pg);
    unsigned char *v = (unsigned char *)malloc(pages);
    if (!v) return 0;
    size_t in = 0;
    if (mincore((void *)a, (size_t)(b - a), v) == 0)
        for (size_t i = 0; i < pages; i++) in += v[i] & 1;
    free(v);
    return in * 10 >= pages * 9;
}

extern "C" sps_status sps__d2h_pinned(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    const char *e = getenv("SPS_DOWNLOAD");
    int ring = e && strcmp(e, "ring") == 0, plain = e && strcmp(e, "pageable") == 0;
    if (!ring && !plain) plain = mostly_resident(dst, bytes);
    if (bytes >= SMALL && !plain) {
        sps_status st = copy_ring_down(ctx, (char *)dst, (const char *)src, bytes);
        if (st != SPS_ERR_NO_MEMORY) return st;
        ctx->msg[0] = 0; /* no pinned staging memory: the plain copy below */
    }
    return sps__d2h(ctx, dst, src, bytes);
}
