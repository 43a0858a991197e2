/* tools/probe_common.cuh: what the stream probes share (tools/probe_l2.cu, tools/probe_start.cu): the CUDA error
 * check, the flat grid-stride read (probe_l2's part 1, probe_start's "flat"), and event timing with the benchmark's
 * method: every batch of samples queued behind the library's hold kernel (mg_gpu_hold, as src/timing.c does), cold
 * samples each after the library's read flush (mg_l2_flush_read) of probe_init's buffer. One translation unit each:
 * the state below is static. */
#ifndef MG_PROBE_COMMON_CUH
#define MG_PROBE_COMMON_CUH

#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gpu_util.h"
#include "maxgemm.h"

#define CK(x)                                                                                      \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

__device__ __forceinline__ uint32_t amax4(uint32_t a, uint4 q) {
    a = max(a, q.x & 0x7fffffffu);
    a = max(a, q.y & 0x7fffffffu);
    a = max(a, q.z & 0x7fffffffu);
    return max(a, q.w & 0x7fffffffu);
}

template <bool kEvictLast>
__device__ __forceinline__ uint4 ld16(const uint4 *p, uint64_t pol) {
    uint4 q;
    if constexpr (kEvictLast)
        asm volatile("ld.global.nc.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                     : "=r"(q.x), "=r"(q.y), "=r"(q.z), "=r"(q.w)
                     : "l"(p), "l"(pol));
    else
        q = __ldg(p);
    return q;
}

/* the flat grid-stride stream (probe_l2's part 1, probe_start's flat), 4 loads in flight per thread */
template <bool kEvictLast>
__global__ void __launch_bounds__(256, 8) stream_kernel(const uint4 *x, int64_t n16, uint32_t *out) {
    uint64_t pol = 0;
    if constexpr (kEvictLast) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint32_t a = 0;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        uint4 q0 = ld16<kEvictLast>(x + i, pol), q1 = ld16<kEvictLast>(x + i + stride, pol);
        uint4 q2 = ld16<kEvictLast>(x + i + 2 * stride, pol), q3 = ld16<kEvictLast>(x + i + 3 * stride, pol);
        a = amax4(amax4(amax4(amax4(a, q0), q1), q2), q3);
    }
    for (; i < n16; i += stride) a = amax4(a, ld16<kEvictLast>(x + i, pol));
    a = __reduce_max_sync(0xffffffffu, a);
    if ((threadIdx.x & 31) == 0 && a == 0xffffffffu) out[0] = a;   /* never true: keeps the loads alive */
}

static volatile unsigned *g_release;   /* the hold's words (host-mapped): [0] release, [1] timed out */
static unsigned *g_release_dev;
static const void *g_flush;
static size_t g_flush_bytes;
static int g_sms;
static uint32_t *g_sink;

template <typename F>
static double time_us(F launch, bool cold, int reps) {
    std::vector<cudaEvent_t> ev(2 * (reps + 3));
    for (auto &e : ev) CK(cudaEventCreate(&e));
    /* One untimed call first, as mg_time's warm-up: the first launch of a kernel loads it (lazy loading), and a
     * load while the hold spins waits for it (r20: the hold timed out on exactly the batches that launched a
     * kernel of another module for the first time). */
    if (cold && mg_l2_flush_read(g_flush, g_flush_bytes, g_sink, g_sms, 0) != MG_OK) exit(1);
    launch();
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    g_release[0] = g_release[1] = 0u;
    __sync_synchronize();
    if (mg_gpu_hold(g_release_dev, g_release_dev + 1, 50000000ull, 0) != MG_OK) {
        fprintf(stderr, "hold: %s\n", mg_last_error());
        exit(1);
    }
    for (int r = 0; r < reps + 3; r++) {
        if (cold && mg_l2_flush_read(g_flush, g_flush_bytes, g_sink, g_sms, 0) != MG_OK) {
            fprintf(stderr, "flush: %s\n", mg_last_error());
            exit(1);
        }
        CK(cudaEventRecord(ev[2 * r]));
        launch();
        CK(cudaEventRecord(ev[2 * r + 1]));
    }
    __sync_synchronize();
    g_release[0] = 1u;
    CK(cudaDeviceSynchronize());
    CK(cudaGetLastError());
    if (g_release[1]) fprintf(stderr, "warning: the hold timed out: these samples may include host latency\n");
    std::vector<float> t;
    for (int r = 3; r < reps + 3; r++) {
        float ms;
        CK(cudaEventElapsedTime(&ms, ev[2 * r], ev[2 * r + 1]));
        t.push_back(ms * 1000.f);
    }
    for (auto &e : ev) CK(cudaEventDestroy(e));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

/* The flush buffer (flush_bytes, read before every cold sample), the flush kernel's sink, the hold's host-mapped
 * words and the SM count (g_sms). */
static void probe_init(size_t flush_bytes) {
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, 0));
    void *f = nullptr;
    CK(cudaMalloc(&f, flush_bytes));
    CK(cudaMemset(f, 0x11, flush_bytes));
    CK(cudaMalloc(&g_sink, 1 << 20));
    g_flush = f;
    g_flush_bytes = flush_bytes;
    void *h = nullptr, *d = nullptr;
    CK(cudaHostAlloc(&h, 2 * sizeof(unsigned), cudaHostAllocMapped));
    CK(cudaHostGetDevicePointer(&d, h, 0));
    g_release = (volatile unsigned *)h;
    g_release_dev = (unsigned *)d;
}

#endif /* MG_PROBE_COMMON_CUH */
