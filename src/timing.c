/* timing.c: benchmark hygiene in one place (see timing.h).
 *
 * One sample is:   [memset of a 2 x L2 buffer]  event_start  fn(ctx)  event_stop
 * The memset sits OUTSIDE the timed events, so it evicts x/W left in L2 by the previous sample (every sample
 * starts cold, as a single forward in a real model would) without being counted. It also keeps the GPU busy
 * while the host enqueues the start event and the work, so a sample does not include host launch latency.
 * All samples are enqueued first and the stream is synchronised once at the end: no host round trip
 * between samples. Each sample has its own event pair, so the samples are independent measurements
 * (no averaging of a back-to-back loop, which would hide the spread and overlap tails with heads).
 */
#include "timing.h"
#include "mg_kernel.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct mg_timer {
    cudaStream_t stream;
    void *flush;            /* device buffer of flush_bytes, or NULL when flush is off */
    size_t flush_bytes;
    int flush_value;        /* alternates so consecutive memsets are not the same bytes (no shortcut possible) */
};

mg_status mg_timer_create(mg_timer **out, int flush_l2, void *stream) {
    if (!out) return mg_set_error(MG_ERR_INVALID_ARG, "mg_timer_create: out is NULL");
    *out = NULL;
    mg_timer *t = (mg_timer *)calloc(1, sizeof *t);
    if (!t) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "mg_timer_create: host allocation failed");
    t->stream = (cudaStream_t)stream;
    if (flush_l2) {
        int dev = 0;
        struct cudaDeviceProp prop;
        cudaError_t e = cudaGetDevice(&dev);
        if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, dev);
        if (e != cudaSuccess) {
            free(t);
            return mg_set_error(MG_ERR_CUDA, "mg_timer_create: cannot query the device: %s", cudaGetErrorString(e));
        }
        /* Twice the L2: with LRU-like replacement one pass of L2 size is not guaranteed to evict everything
         * (H100/H200 L2 is split into two partitions, and hashing is not perfectly uniform). At least 8 MiB so
         * a device that reports 0 still gets a real flush. */
        size_t l2 = prop.l2CacheSize > 0 ? (size_t)prop.l2CacheSize : 0;
        t->flush_bytes = 2 * l2 < ((size_t)8 << 20) ? ((size_t)8 << 20) : 2 * l2;
        e = cudaMalloc(&t->flush, t->flush_bytes);
        if (e != cudaSuccess) {
            size_t bytes = t->flush_bytes;
            free(t);
            return mg_set_error(e == cudaErrorMemoryAllocation ? MG_ERR_OUT_OF_MEMORY : MG_ERR_CUDA,
                                "mg_timer_create: cudaMalloc of the %zu-byte L2 flush buffer: %s", bytes,
                                cudaGetErrorString(e));
        }
    }
    *out = t;
    return MG_OK;
}

void mg_timer_destroy(mg_timer *t) {
    if (!t) return;
    if (t->flush) cudaFree(t->flush);
    free(t);
}

static void destroy_events(cudaEvent_t *ev, int n) {
    for (int i = 0; i < n; i++)
        if (ev[i]) cudaEventDestroy(ev[i]);
    free(ev);
}

mg_status mg_time(mg_timer *t, mg_timed_fn fn, void *ctx, int warmup, int iters, double *samples_ms) {
    if (!t || !fn || (iters > 0 && !samples_ms))
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_time: NULL timer, function or sample array");
    if (warmup < 0 || iters < 0)
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_time: negative warmup (%d) or iters (%d)", warmup, iters);

    /* Warm-up: first-touch costs (lazy module loading, cuBLAS heuristics, TMA descriptor caches) are paid here.
     * The flush is applied here too, so the last warm-up leaves the caches in the same state a sample sees. */
    for (int i = 0; i < warmup; i++) {
        if (t->flush) MG_CUDA_TRY(cudaMemsetAsync(t->flush, (t->flush_value++) & 0xff, t->flush_bytes, t->stream));
        mg_status s = fn(ctx);
        if (s != MG_OK) return s;
    }
    if (iters == 0) {
        MG_CUDA_TRY(cudaStreamSynchronize(t->stream));
        return MG_OK;
    }

    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)2 * (size_t)iters, sizeof *ev);
    if (!ev) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "mg_time: host allocation of %d event pairs", iters);
    for (int i = 0; i < 2 * iters; i++) {
        cudaError_t e = cudaEventCreate(&ev[i]);
        if (e != cudaSuccess) {
            destroy_events(ev, 2 * iters);
            return mg_set_error(MG_ERR_CUDA, "mg_time: cudaEventCreate: %s", cudaGetErrorString(e));
        }
    }
    mg_status st = MG_OK;
    for (int i = 0; i < iters && st == MG_OK; i++) {
        cudaError_t e = cudaSuccess;
        if (t->flush) e = cudaMemsetAsync(t->flush, (t->flush_value++) & 0xff, t->flush_bytes, t->stream);
        if (e == cudaSuccess) e = cudaEventRecord(ev[2 * i], t->stream);
        if (e != cudaSuccess) {
            st = mg_set_error(MG_ERR_CUDA, "mg_time: sample %d: flush/event record: %s", i, cudaGetErrorString(e));
            break;
        }
        st = fn(ctx);
        if (st != MG_OK) break;
        e = cudaEventRecord(ev[2 * i + 1], t->stream);
        if (e != cudaSuccess)
            st = mg_set_error(MG_ERR_CUDA, "mg_time: sample %d: event record: %s", i, cudaGetErrorString(e));
    }
    if (st == MG_OK) {
        cudaError_t e = cudaStreamSynchronize(t->stream);
        if (e != cudaSuccess)
            st = mg_set_error(MG_ERR_CUDA, "mg_time: cudaStreamSynchronize: %s", cudaGetErrorString(e));
    }
    for (int i = 0; i < iters && st == MG_OK; i++) {
        float ms = 0.0f;
        cudaError_t e = cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]);
        if (e != cudaSuccess)
            st = mg_set_error(MG_ERR_CUDA, "mg_time: cudaEventElapsedTime (sample %d): %s", i, cudaGetErrorString(e));
        else
            samples_ms[i] = (double)ms;
    }
    destroy_events(ev, 2 * iters);
    return st;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

mg_stats mg_stats_of(const double *samples, int n) {
    mg_stats s;
    s.n = n > 0 ? n : 0;
    s.median = s.min = s.max = s.mean = NAN;
    if (!samples || n <= 0) return s;
    double *c = (double *)malloc((size_t)n * sizeof *c);
    if (!c) return s;
    memcpy(c, samples, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    double sum = 0.0;
    for (int i = 0; i < n; i++) sum += c[i];
    s.min = c[0];
    s.max = c[n - 1];
    s.mean = sum / n;
    s.median = (n % 2) ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return s;
}
