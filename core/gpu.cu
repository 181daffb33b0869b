/* SPDX-License-Identifier: MIT */
/* spsolve/core/gpu.cu: the CUDA runtime behind core/gpu.h (device, stream,
 * handles, memory, copies, event timers, copy bandwidth) */
#include "cuda_check.cuh"

#include <stdio.h>
#include <string.h>

struct sps_gpu {
    int device;
    cudaStream_t stream;
    cusparseHandle_t cusparse;
    cudaDeviceProp props;
    void *scratch;
    size_t scratch_bytes;
    void *ring; /* pinned staging ring of core/upload.cu, made on first use */
    double peak_gbps; /* sps__gpu_peak_gbps, 0 unknown */
};

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

sps_status sps__cuda_fail(sps_context *ctx, cudaError_t e, const char *what,
                          const char *file, int line)
{
    sps_status st = (e == cudaErrorMemoryAllocation) ? SPS_ERR_NO_MEMORY : SPS_ERR_CUDA;
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) st = SPS_ERR_NO_DEVICE;
    return sps__err(ctx, st, "%s: %s: %s (%s:%d)", what, cudaGetErrorName(e),
                    cudaGetErrorString(e), base_name(file), line);
}

sps_status sps__cusparse_fail(sps_context *ctx, cusparseStatus_t e, const char *what,
                              const char *file, int line)
{
    sps_status st = (e == CUSPARSE_STATUS_ALLOC_FAILED ||
                     e == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES)
                        ? SPS_ERR_NO_MEMORY
                        : SPS_ERR_CUDA;
    return sps__err(ctx, st, "%s: %s (%s:%d)", what, cusparseGetErrorString(e),
                    base_name(file), line);
}

int sps__gpu_count(char *why, size_t len)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        if (why && (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice))
            snprintf(why, len, "no CUDA device (no usable NVIDIA driver or GPU: %s)",
                     cudaGetErrorName(e));
        else if (why)
            snprintf(why, len, "no CUDA device: %s", cudaGetErrorString(e));
        cudaGetLastError(); /* clear the sticky-free error */
        return 0;
    }
    if (n == 0 && why) snprintf(why, len, "no CUDA device found");
    return n;
}

/* The memory's peak bandwidth (GB/s) from its clock and bus width, 0 when
 * the driver does not say. Asked once, with the context: the clock query
 * took 0.6-0.8 ms on an H100, inside the first solve's selection when auto
 * asked for it. */
static double peak_gbps(const struct sps_gpu *g)
{
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, g->device) != cudaSuccess) {
        cudaGetLastError(); /* not an error: no estimate */
        return 0.0;
    }
    return 2.0 * (double)khz * 1e3 * (double)g->props.memoryBusWidth / 8.0 / 1e9; /* double data rate */
}

sps_status sps__gpu_init(sps_context *ctx, int device)
{
    char why[512];
    int n = sps__gpu_count(why, sizeof why);
    if (n == 0) return sps__err(ctx, SPS_ERR_NO_DEVICE, "%s", why);
    if (device >= n)
        return sps__err(ctx, SPS_ERR_NO_DEVICE, "CUDA device %d requested, %d present", device, n);
    struct sps_gpu *g = (struct sps_gpu *)sps__calloc(1, sizeof *g);
    if (!g) return sps__err(ctx, SPS_ERR_NO_MEMORY, "sps_context_create: out of memory");
    ctx->gpu = g;
    g->device = device;
    SPS_CUDA(ctx, cudaSetDevice(device));
    SPS_CUDA(ctx, cudaGetDeviceProperties(&g->props, device));
    g->peak_gbps = peak_gbps(g);
    SPS_CUDA(ctx, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    SPS_CUSPARSE(ctx, cusparseCreate(&g->cusparse));
    SPS_CUSPARSE(ctx, cusparseSetStream(g->cusparse, g->stream));
    sps__ring_prepare(ctx);
    snprintf(ctx->name, sizeof ctx->name, "%s (sm_%d%d, %d SMs, %.1f GiB)", g->props.name,
             g->props.major, g->props.minor, g->props.multiProcessorCount,
             (double)g->props.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
    return SPS_OK;
}

void sps__gpu_fini(sps_context *ctx)
{
    struct sps_gpu *g = ctx->gpu;
    if (!g) return;
    if (g->stream) cudaStreamSynchronize(g->stream);
    sps__ring_free(ctx);
    if (g->scratch) cudaFree(g->scratch);
    if (g->cusparse) cusparseDestroy(g->cusparse);
    if (g->stream) cudaStreamDestroy(g->stream);
    sps__free(g);
    ctx->gpu = NULL;
}

void *sps__gpu_stream(const sps_context *ctx) { return (void *)ctx->gpu->stream; }
void *sps__gpu_cusparse(const sps_context *ctx) { return (void *)ctx->gpu->cusparse; }
void **sps__gpu_ring_slot(sps_context *ctx) { return &ctx->gpu->ring; }
int sps__gpu_sm_count(const sps_context *ctx) { return ctx->gpu->props.multiProcessorCount; }
int sps__gpu_cc(const sps_context *ctx)
{
    return ctx->gpu->props.major * 10 + ctx->gpu->props.minor;
}

double sps__gpu_peak_gbps(const sps_context *ctx) { return ctx->gpu->peak_gbps; }

sps_status sps__dmalloc(sps_context *ctx, void **p, size_t bytes)
{
    *p = NULL;
    if (bytes == 0) return SPS_OK;
    cudaError_t e = cudaMalloc(p, bytes);
    if (e != cudaSuccess) {
        *p = NULL;
        cudaGetLastError();
        if (e == cudaErrorMemoryAllocation)
            return sps__err(ctx, SPS_ERR_NO_MEMORY, "cudaMalloc of %.1f MiB failed: out of device memory",
                            (double)bytes / 1048576.0);
        return sps__cuda_fail(ctx, e, "cudaMalloc", __FILE__, __LINE__);
    }
    return SPS_OK;
}

void sps__dfree(void *p)
{
    if (p) cudaFree(p);
}

sps_status sps__h2d(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) return SPS_OK;
    SPS_CUDA(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, ctx->gpu->stream));
    SPS_CUDA(ctx, cudaStreamSynchronize(ctx->gpu->stream));
    return SPS_OK;
}

sps_status sps__d2h(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) return SPS_OK;
    SPS_CUDA(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, ctx->gpu->stream));
    SPS_CUDA(ctx, cudaStreamSynchronize(ctx->gpu->stream));
    return SPS_OK;
}

sps_status sps__d2d(sps_context *ctx, void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) return SPS_OK;
    SPS_CUDA(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, ctx->gpu->stream));
    return SPS_OK;
}

sps_status sps__dmemset(sps_context *ctx, void *p, int byte, size_t bytes)
{
    if (bytes == 0) return SPS_OK;
    SPS_CUDA(ctx, cudaMemsetAsync(p, byte, bytes, ctx->gpu->stream));
    return SPS_OK;
}

sps_status sps__gpu_sync(sps_context *ctx)
{
    SPS_CUDA(ctx, cudaStreamSynchronize(ctx->gpu->stream));
    return SPS_OK;
}

int sps__is_device_ptr(const void *p)
{
    cudaPointerAttributes a;
    if (!p) return 0;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

struct sps_gpu_timer {
    cudaEvent_t a, b;
};

sps_status sps__timer_create(sps_context *ctx, sps_gpu_timer **t)
{
    *t = (sps_gpu_timer *)sps__calloc(1, sizeof **t);
    if (!*t) return sps__err(ctx, SPS_ERR_NO_MEMORY, "timer: out of memory");
    SPS_CUDA(ctx, cudaEventCreate(&(*t)->a));
    SPS_CUDA(ctx, cudaEventCreate(&(*t)->b));
    return SPS_OK;
}

sps_status sps__timer_start(sps_context *ctx, sps_gpu_timer *t)
{
    SPS_CUDA(ctx, cudaEventRecord(t->a, ctx->gpu->stream));
    return SPS_OK;
}

sps_status sps__timer_stop(sps_context *ctx, sps_gpu_timer *t, double *ms)
{
    float f = 0;
    SPS_CUDA(ctx, cudaEventRecord(t->b, ctx->gpu->stream));
    SPS_CUDA(ctx, cudaEventSynchronize(t->b));
    SPS_CUDA(ctx, cudaEventElapsedTime(&f, t->a, t->b));
    *ms = f;
    return SPS_OK;
}

void sps__timer_destroy(sps_gpu_timer *t)
{
    if (!t) return;
    if (t->a) cudaEventDestroy(t->a);
    if (t->b) cudaEventDestroy(t->b);
    sps__free(t);
}

sps_status sps__gpu_scratch(sps_context *ctx, size_t bytes, void **p)
{
    struct sps_gpu *g = ctx->gpu;
    if (bytes > g->scratch_bytes) {
        SPS_CUDA(ctx, cudaStreamSynchronize(g->stream));
        if (g->scratch) cudaFree(g->scratch);
        g->scratch = NULL;
        g->scratch_bytes = 0;
        sps_status st = sps__dmalloc(ctx, &g->scratch, bytes);
        if (st != SPS_OK) return st;
        g->scratch_bytes = bytes;
    }
    *p = g->scratch;
    return SPS_OK;
}

/* Copy kernel with 16-byte accesses: the bandwidth a memory-bound kernel of
 * ours can hope for (cudaMemcpy D2D is measured too; the larger is kept). */
__global__ void sps_copy_kernel(const double2 *__restrict__ a, double2 *__restrict__ b, size_t n)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        b[i] = a[i];
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median over 9 timed copies (after 2 warm-ups) of our 16-byte copy kernel and
 * of cudaMemcpyAsync D2D; the faster of the two medians is reported. */
sps_status sps__gpu_copy_bandwidth(sps_context *ctx, size_t bytes, double *gbps)
{
    enum { WARM = 2, REPS = 9 };
    if (bytes == 0) bytes = (size_t)256 << 20;
    bytes &= ~(size_t)15;
    void *a = NULL, *b = NULL;
    sps_gpu_timer *t = NULL;
    *gbps = 0;
    sps_status st = sps__dmalloc(ctx, &a, bytes);
    if (st == SPS_OK) st = sps__dmalloc(ctx, &b, bytes);
    if (st == SPS_OK) st = sps__timer_create(ctx, &t);
    if (st == SPS_OK) st = sps__dmemset(ctx, a, 1, bytes);
    double ms[2][REPS];
    size_t n2 = bytes / 16;
    int blocks = ctx->gpu ? ctx->gpu->props.multiProcessorCount * 8 : 1;
    for (int way = 0; st == SPS_OK && way < 2; way++) {
        for (int rep = 0; st == SPS_OK && rep < WARM + REPS; rep++) {
            double m = 0;
            st = sps__timer_start(ctx, t);
            if (st != SPS_OK) break;
            cudaError_t e;
            if (way == 0) {
                sps_copy_kernel<<<blocks, 512, 0, ctx->gpu->stream>>>((const double2 *)a, (double2 *)b, n2);
                e = cudaGetLastError();
            } else {
                e = cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, ctx->gpu->stream);
            }
            if (e != cudaSuccess) {
                st = sps__cuda_fail(ctx, e, way == 0 ? "launch sps_copy_kernel" : "cudaMemcpyAsync",
                                    __FILE__, __LINE__);
                break;
            }
            st = sps__timer_stop(ctx, t, &m);
            if (rep >= WARM) ms[way][rep - WARM] = m;
        }
    }
    if (st == SPS_OK) {
        double best = 0;
        for (int way = 0; way < 2; way++) {
            qsort(ms[way], REPS, sizeof(double), cmp_double);
            double med = ms[way][REPS / 2];
            if (med > 0 && 2.0 * (double)bytes / (med * 1e6) > best) best = 2.0 * (double)bytes / (med * 1e6);
        }
        *gbps = best;
    }
    sps__timer_destroy(t);
    sps__dfree(a);
    sps__dfree(b);
    return st;
}
