/* timing.c: benchmark hygiene in one place (see timing.h).
 *
 * One sample is:   [read of a 2 x L2 buffer]  event_start  fn(ctx)  event_stop
 * The flush sits OUTSIDE the timed events, so it evicts x/W left in L2 by the previous sample (every sample
 * starts cold, as a single forward in a real model would) without being counted. It also keeps the GPU busy
 * while the host enqueues the start event and the work, so a sample does not include host launch latency.
 * It READS (mg_l2_flush_read): until run 9 it was a memset, which leaves the L2 full of dirty lines whose
 * write-back then competed with the sample's own reads (the short-circuit's classify, a 32 MiB read, measured
 * ~10.6 us alone under ncu but ~19.5 us event-timed after the memset; notes/shortcut.md).
 * All samples are enqueued first and the stream is synchronised once at the end: no host round trip
 * between samples. Before them a hold kernel (mg_gpu_hold, nvbench's "blocking kernel") spins on a host-mapped
 * word until every sample is queued, so without a flush too (warm samples) no sample includes host launch
 * latency: run 16 measured an empty launch at 5.7 us event-timed back to back without it against 2.9 us behind
 * a busy GPU, which inflated every warm short-circuit figure and the bare write by ~1-3 us (notes/shortcut.md). mg_time_interleaved alternates several functions sample by sample (A B A B ...), so ratios
 * between them come from the same seconds of the run. Each sample has its own event pair, so the samples are independent measurements
 * (no averaging of a back-to-back loop, which would hide the spread and overlap tails with heads).
 */
#include "timing.h"
#include "gpu_util.h"
#include "mg_kernel.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct mg_timer {
    cudaStream_t stream;
    void *flush;            /* device buffer of flush_bytes (zeroed once), or NULL when flush is off */
    size_t flush_bytes;
    unsigned *sink;         /* the flush kernel's never-written output */
    int num_sms;
    volatile unsigned *hold;  /* host-mapped words: [0] release, [1] the hold timed out */
    unsigned *hold_dev;       /* the same words as the device sees them */
    int hold_timeouts;        /* sample batches whose hold ran into its timeout (some host gap may be in them) */
};

/* The hold gives up after this much GPU time: enqueueing a batch takes ~1 ms; a timed function that blocks the
 * host on the stream (a synchronous copy) would otherwise deadlock with it. */
#define MG_HOLD_TIMEOUT_NS 50000000ull

mg_status mg_timer_create(mg_timer **out, int flush_l2, void *stream) {
    if (!out) return mg_set_error(MG_ERR_INVALID_ARG, "mg_timer_create: out is NULL");
    *out = NULL;
    mg_timer *t = (mg_timer *)calloc(1, sizeof *t);
    if (!t) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "mg_timer_create: host allocation failed");
    t->stream = (cudaStream_t)stream;
    {
        void *h = NULL, *d = NULL;
        cudaError_t e = cudaHostAlloc(&h, 2 * sizeof(unsigned), cudaHostAllocMapped);
        if (e == cudaSuccess) e = cudaHostGetDevicePointer(&d, h, 0);
        if (e != cudaSuccess) {
            if (h) cudaFreeHost(h);
            free(t);
            return mg_set_error(MG_ERR_CUDA, "mg_timer_create: the host-mapped hold words: %s", cudaGetErrorString(e));
        }
        t->hold = (volatile unsigned *)h;
        t->hold_dev = (unsigned *)d;
        t->hold[0] = t->hold[1] = 0u;
    }
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
        t->flush_bytes = 2 * l2 < ((size_t)8 << 20) ? ((size_t)8 << 20) : (2 * l2 + 15) / 16 * 16;
        t->num_sms = prop.multiProcessorCount;
        e = cudaMalloc(&t->flush, t->flush_bytes);
        if (e == cudaSuccess) e = cudaMalloc((void **)&t->sink, sizeof(unsigned));
        if (e == cudaSuccess) e = cudaMemset(t->flush, 0, t->flush_bytes);   /* defined contents to read */
        if (e != cudaSuccess) {
            size_t bytes = t->flush_bytes;
            mg_timer_destroy(t);
            return mg_set_error(e == cudaErrorMemoryAllocation ? MG_ERR_OUT_OF_MEMORY : MG_ERR_CUDA,
                                "mg_timer_create: the %zu-byte L2 flush buffer: %s", bytes, cudaGetErrorString(e));
        }
    }
    *out = t;
    return MG_OK;
}

void mg_timer_destroy(mg_timer *t) {
    if (!t) return;
    if (t->flush) cudaFree(t->flush);
    if (t->sink) cudaFree(t->sink);
    if (t->hold) cudaFreeHost((void *)t->hold);
    free(t);
}

static void destroy_events(cudaEvent_t *ev, int n) {
    for (int i = 0; i < n; i++)
        if (ev[i]) cudaEventDestroy(ev[i]);
    free(ev);
}

mg_status mg_time_interleaved(mg_timer *t, int nfn, const mg_timed_fn *fns, void *const *ctxs, int warmup, int iters,
                              double *const *samples_ms) {
    if (!t || nfn < 1 || !fns || !ctxs || (iters > 0 && !samples_ms))
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_time: NULL timer, functions or sample arrays");
    if (warmup < 0 || iters < 0)
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_time: negative warmup (%d) or iters (%d)", warmup, iters);
    for (int f = 0; f < nfn; f++)
        if (!fns[f] || (iters > 0 && !samples_ms[f]))
            return mg_set_error(MG_ERR_INVALID_ARG, "mg_time: function %d or its sample array is NULL", f);

    /* Warm-up: first-touch costs (lazy module loading, cuBLAS heuristics, TMA descriptor caches) are paid here.
     * The flush is applied here too, so the last warm-up leaves the caches in the same state a sample sees. */
    for (int i = 0; i < warmup; i++)
        for (int f = 0; f < nfn; f++) {
            mg_status s = t->flush ? mg_l2_flush_read(t->flush, t->flush_bytes, t->sink, t->num_sms, t->stream) : MG_OK;
            if (s == MG_OK) s = fns[f](ctxs[f]);
            if (s != MG_OK) return s;
        }
    if (iters == 0) {
        MG_CUDA_TRY(cudaStreamSynchronize(t->stream));
        return MG_OK;
    }

    const int nev = 2 * nfn * iters;
    cudaEvent_t *ev = (cudaEvent_t *)calloc((size_t)nev, sizeof *ev);
    if (!ev) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "mg_time: host allocation of %d events", nev);
    for (int i = 0; i < nev; i++) {
        cudaError_t e = cudaEventCreate(&ev[i]);
        if (e != cudaSuccess) {
            destroy_events(ev, nev);
            return mg_set_error(MG_ERR_CUDA, "mg_time: cudaEventCreate: %s", cudaGetErrorString(e));
        }
    }
    /* sample i of function f uses events ev[2 * (i * nfn + f)] and the next one: all enqueued behind the hold,
     * released, one sync */
    t->hold[0] = 0u;
    t->hold[1] = 0u;
    __sync_synchronize();
    mg_status st = mg_gpu_hold(t->hold_dev, t->hold_dev + 1, MG_HOLD_TIMEOUT_NS, t->stream);
    for (int i = 0; i < iters && st == MG_OK; i++)
        for (int f = 0; f < nfn && st == MG_OK; f++) {
            cudaEvent_t *pe = &ev[2 * (i * nfn + f)];
            if (t->flush && (st = mg_l2_flush_read(t->flush, t->flush_bytes, t->sink, t->num_sms, t->stream)) != MG_OK)
                break;
            cudaError_t e = cudaEventRecord(pe[0], t->stream);
            if (e != cudaSuccess) {
                st = mg_set_error(MG_ERR_CUDA, "mg_time: sample %d: event record: %s", i, cudaGetErrorString(e));
                break;
            }
            st = fns[f](ctxs[f]);
            if (st != MG_OK) break;
            e = cudaEventRecord(pe[1], t->stream);
            if (e != cudaSuccess)
                st = mg_set_error(MG_ERR_CUDA, "mg_time: sample %d: event record: %s", i, cudaGetErrorString(e));
        }
    __sync_synchronize();
    t->hold[0] = 1u;   /* release, on every path: an error above must not leave the GPU spinning */
    __sync_synchronize();
    if (st == MG_OK) {
        cudaError_t e = cudaStreamSynchronize(t->stream);
        if (e != cudaSuccess)
            st = mg_set_error(MG_ERR_CUDA, "mg_time: cudaStreamSynchronize: %s", cudaGetErrorString(e));
        else if (t->hold[1])
            t->hold_timeouts++;
    }
    for (int i = 0; i < iters && st == MG_OK; i++)
        for (int f = 0; f < nfn && st == MG_OK; f++) {
            float ms = 0.0f;
            cudaEvent_t *pe = &ev[2 * (i * nfn + f)];
            cudaError_t e = cudaEventElapsedTime(&ms, pe[0], pe[1]);
            if (e != cudaSuccess)
                st = mg_set_error(MG_ERR_CUDA, "mg_time: cudaEventElapsedTime (sample %d): %s", i,
                                  cudaGetErrorString(e));
            else
                samples_ms[f][i] = (double)ms;
        }
    destroy_events(ev, nev);
    return st;
}

int mg_timer_hold_timeouts(const mg_timer *t) { return t ? t->hold_timeouts : 0; }

mg_status mg_time(mg_timer *t, mg_timed_fn fn, void *ctx, int warmup, int iters, double *samples_ms) {
    return mg_time_interleaved(t, 1, &fn, &ctx, warmup, iters, &samples_ms);
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
