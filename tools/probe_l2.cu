/* tools/probe_l2.cu: how fast can one pass over x go, and does x stay in the H200's L2 between calls?
 *
 * The short-circuit's classify (kernels/shortcut.cu) reads x once per call and does almost nothing else, so its
 * cost is a read stream. This probe times read-and-reduce (max of |v| bit patterns, as classify) kernels, event
 * timed, in two states:
 *   cold: before every sample a 256 MiB buffer is READ (clean lines evict x; no dirty write-back under the sample);
 *   warm: samples back to back on the same buffer (x as the previous layer would have left it).
 * Parts:
 *   1. size sweep, flat grid-stride stream (132 x 8 blocks of 256 threads): per-byte time against size says
 *      whether x stays L2-resident (a step between sizes) and what DRAM rate a stream reaches; its 128 and 256 MiB
 *      rows are W's bytes at N = K = 8192 (bf16 / tf32): the fastest a bare read of W goes, event timed, cold;
 *      same with an L2::evict_last cache policy on the loads;
 *   2. the headline shape as rows (M = 1024 rows of 32 KiB fp32 / 16 KiB bf16): block-per-row layouts,
 *      which is what classify needs (one max per row), with different loads in flight per thread;
 *   3. the library's own classify (mg_shortcut_classify, the plain-launch ticket variant) on the same buffer, and
 *      a bare write of 1024 floats: the short-circuit's two bench rows, in this process, by this method.
 * Every batch of samples is queued behind the library's hold kernel (mg_gpu_hold, as src/timing.c does), so no
 * sample includes host launch latency, warm or cold; the cold flush is the library's mg_l2_flush_read (of 256 MiB
 * here) and the bare write is the benchmark's own (bench/bare_write.cu).
 * Build: `make build/probe_l2` (links libmaxgemm.so, found beside the binary, and the bench's bare write).
 * Output: one CSV line per case: part,variant,bytes,state,median_us,GBps. */
#include "bare_write.h"
#include "probe_common.cuh"
#include "shortcut.h"

/* One row of row16 16-byte words, read by TPB threads with LPT loads in flight per thread per round; the block's
 * max of |v| bits lands in thread 0 (s: TPB / 32 words of shared scratch, free again on return to thread 0 only). */
template <int TPB, int LPT, bool kEvictLast>
__device__ __forceinline__ uint32_t row_absmax(const uint4 *p, int row16, uint64_t pol, uint32_t *s) {
    uint32_t a = 0;
    int v = threadIdx.x;
    for (; v + (LPT - 1) * TPB < row16; v += LPT * TPB) {
        uint4 q[LPT];
#pragma unroll
        for (int j = 0; j < LPT; j++) q[j] = ld16<kEvictLast>(p + v + j * TPB, pol);
#pragma unroll
        for (int j = 0; j < LPT; j++) a = amax4(a, q[j]);
    }
    for (; v < row16; v += TPB) a = amax4(a, ld16<kEvictLast>(p + v, pol));
    a = __reduce_max_sync(0xffffffffu, a);
    if ((threadIdx.x & 31) == 0) s[threadIdx.x / 32] = a;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int w = 0; w < TPB / 32; w++) a = max(a, s[w]);
    return a;
}

/* part 2: block per row (TPB threads), LPT 16-byte loads issued per thread per round */
template <int TPB, int LPT, bool kEvictLast>
__global__ void __launch_bounds__(TPB, 2048 / TPB) row_kernel(const uint4 *x, int m, int row16, uint32_t *out) {
    uint64_t pol = 0;
    if constexpr (kEvictLast) asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(pol));
    __shared__ uint32_t s[TPB / 32];
    const uint32_t a = row_absmax<TPB, LPT, kEvictLast>(x + (int64_t)blockIdx.x * row16, row16, pol, s);
    if (threadIdx.x == 0) out[blockIdx.x] = a;
}

/* part 2b: persistent rows: G blocks of TPB threads walk rows blockIdx.x, +gridDim.x, ... */
template <int TPB, int LPT>
__global__ void __launch_bounds__(TPB, 1) persist_kernel(const uint4 *x, int m, int row16, uint32_t *out) {
    __shared__ uint32_t s[TPB / 32];
    for (int row = blockIdx.x; row < m; row += gridDim.x) {
        const uint32_t a = row_absmax<TPB, LPT, false>(x + (int64_t)row * row16, row16, 0, s);
        if (threadIdx.x == 0) out[row] = a;
        __syncthreads();   /* s is reused by the next row */
    }
}

static void line(const char *part, const char *var, int64_t bytes, bool cold, double us) {
    printf("%s,%s,%lld,%s,%.2f,%.0f\n", part, var, (long long)bytes, cold ? "cold" : "warm", us, bytes / us / 1e3);
    fflush(stdout);
}

int main() {
    const int64_t kMax = 256ll << 20, kFlush = 256ll << 20;
    probe_init((size_t)kFlush);
    const int sms = g_sms;
    int l2 = 0;
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    fprintf(stderr, "SMs %d, L2 %d bytes\n", sms, l2);
    uint4 *x;
    CK(cudaMalloc(&x, kMax));
    CK(cudaMemset(x, 0x3c, kMax));
    const int reps = 30;
    printf("part,variant,bytes,state,median_us,GBps\n");
    /* floor: an empty launch */
    for (int cold = 0; cold < 2; cold++)
        line("launch", "empty_1block", 0, cold, time_us([&] { stream_kernel<false><<<1, 256>>>(x, 0, g_sink); }, cold, reps));
    /* 128 / 256 MiB: W of N = K = 8192 in bf16 / fp32 */
    const int mib[] = {4, 8, 12, 16, 20, 24, 28, 32, 40, 48, 64, 128, 256};
    for (int mb : mib) {
        const int64_t bytes = (int64_t)mb << 20;
        for (int cold = 0; cold < 2; cold++) {
            line("sweep", "stream", bytes, cold,
                 time_us([&] { stream_kernel<false><<<sms * 8, 256>>>(x, bytes / 16, g_sink); }, cold, reps));
            line("sweep", "stream_evict_last", bytes, cold,
                 time_us([&] { stream_kernel<true><<<sms * 8, 256>>>(x, bytes / 16, g_sink); }, cold, reps));
        }
    }
    /* part 2: the headline as rows; fp32 rows of 32 KiB (2048 x 16 B) and bf16 rows of 16 KiB (1024 x 16 B) */
    const int m = 1024;
    for (int rb : {2048, 1024}) {
        const int64_t bytes = (int64_t)m * rb * 16;
        char tag[64];
        for (int cold = 0; cold < 2; cold++) {
#define ROWCASE(TPB, LPT, EL)                                                                              \
    snprintf(tag, sizeof tag, "row_t%d_l%d%s_%s", TPB, LPT, EL ? "_el" : "", rb == 2048 ? "fp32" : "bf16"); \
    line("rows", tag, bytes, cold,                                                                         \
         time_us([&] { row_kernel<TPB, LPT, EL><<<m, TPB>>>(x, m, rb, g_sink); }, cold, reps));
            ROWCASE(256, 4, false)   /* classify today */
            ROWCASE(256, 8, false)
            ROWCASE(256, 4, true)
            ROWCASE(512, 4, false)
            ROWCASE(128, 8, false)
            ROWCASE(1024, 2, false)
#define PCASE(TPB, LPT, G)                                                                                  \
    snprintf(tag, sizeof tag, "persist_t%d_l%d_g%d_%s", TPB, LPT, G, rb == 2048 ? "fp32" : "bf16");         \
    line("rows", tag, bytes, cold,                                                                          \
         time_us([&] { persist_kernel<TPB, LPT><<<G, TPB>>>(x, m, rb, g_sink); }, cold, reps));
            PCASE(1024, 4, 132)
            PCASE(1024, 8, 132)
            line("rows", rb == 2048 ? "flat_stream_fp32" : "flat_stream_bf16", bytes, cold,
                 time_us([&] { stream_kernel<false><<<sms * 8, 256>>>(x, bytes / 16, g_sink); }, cold, reps));
        }
    }
    /* part 3: the library's classify (plain launch, ticket variant) and a bare write, same buffer, same method */
    {
        float *ws, *out;
        int *rows, *count;
        CK(cudaMalloc(&ws, MG_WSTATS_FLOATS * sizeof(float)));
        CK(cudaMalloc(&out, m * sizeof(float)));
        CK(cudaMalloc(&rows, m * sizeof(int)));
        CK(cudaMalloc(&count, sizeof(int)));
        for (int cold = 0; cold < 2; cold++) {
            for (mg_precision prec : {MG_PREC_FP32, MG_PREC_BF16}) {
                const int64_t k = 8192;
                /* W = the first row of x, b = its first element: finite, small: every row certifies */
                if (mg_shortcut_weight_stats(x, x, 1, k, prec, ws, 0) != MG_OK) {
                    fprintf(stderr, "weight stats: %s\n", mg_last_error());
                    return 1;
                }
                const int64_t bytes = (int64_t)m * k * (prec == MG_PREC_BF16 ? 2 : 4);
                line("lib", prec == MG_PREC_BF16 ? "classify_plain_bf16" : "classify_plain_fp32", bytes, cold,
                     time_us([&] { mg_shortcut_classify(x, m, k, prec, ws, out, rows, count, 0); }, cold, reps));
                line("lib", prec == MG_PREC_BF16 ? "row_t256_l4_bf16" : "row_t256_l4_fp32", bytes, cold,
                     time_us([&] { row_kernel<256, 4, false><<<m, 256>>>(x, m, (int)(bytes / m / 16), g_sink); },
                             cold, reps));
            }
            line("lib", "bare_write_1024", m * 4, cold,
                 time_us([&] { mgb_bare_write(out, m, 0); }, cold, reps));
        }
        int h_count = -1;
        CK(cudaMemcpy(&h_count, count, sizeof h_count, cudaMemcpyDeviceToHost));
        fprintf(stderr, "classify count (rows left to compute) after the last call: %d (expect 0)\n", h_count);
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
