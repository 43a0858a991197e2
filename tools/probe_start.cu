/* tools/probe_start.cu: what a W stream's launch costs before and around its bytes, piece by piece.
 *
 * Kernel 8 at bf16 M <= 64 is a 134 MB W stream (notes/18_small_m.md): a bare flat read of those bytes takes
 * 33.6 us event timed on an H200 (3.6 us fixed + 4.47 TB/s, tools/probe_l2.cu), the forward ~2 us more, and its
 * per-CTA timelines put ~1 us between a CTA's start and its first TMA issue. Runs 135 and 139 ruled out the L2
 * flush's carveout and instruction fetch. This probe reads the same bytes (each of G = 128 CTAs one contiguous slab,
 * as kernel 8's 128 W tiles) with kernels that add kernel 8's pieces one at a time, event timed with the
 * benchmark's cold L2 (the library's read flush before every sample, the hold kernel ahead of each batch), at
 * several sizes, so that each variant's fixed cost (the intercept) and rate (the slope) separate:
 *   ld        128 CTAs x 256 threads, ld.global.nc 16 B, 8 loads in flight per thread, no shared memory
 *   flat      tools/probe_l2's grid-stride bare read (its stream_kernel, SMs x 8 blocks of 256): the reference
 *   bulk      128 CTAs x 64 threads: one thread issues 1-D bulk copies (cp.async.bulk, 16 KiB per stage, an
 *             mbarrier ring of 12 stages in 192 KiB of dynamic shared memory), one thread waits on the stages and
 *             releases them: the TMA ring without tensor maps or compute
 *   bulk384   bulk in a 384-thread CTA (three warpgroups: producer, two idle consumer warpgroups that wait at the
 *             end), kernel 8's shape
 *   bulk384r  bulk384 with kernel 8's setmaxnreg (producer 40, consumers 232) after the CTA barrier
 *   bulkp     bulk384 in kernel 8's W order: CTA b reads its 64 rows (8 KiB) of every 1 MiB panel, two per stage
 *   tma3d     bulkp through kernel 8's 3-D tensor map (128B swizzle, 64 x 64 bf16 boxes); tma3d256: in 256 threads
 *             (kernel 8's n8 CTA: the producer and one consumer warpgroup); tma3d_p0 / _p128: tma3d256 with the L2
 *             promotion off / 128 B (kernel 8's until run 156: 256 B); tma3d_ns: without the swizzle; tma3d_box2: one box of both
 *             panels per stage (64 x 64 x 2)
 *   tma3d_fin tma3d_p0 plus the least a grid-wide finish can be (session 40): the floor under kernel 8's max_dim 0
 *             finish (tagged slots, a poller, the GELU), timed beside the bare ring. After the ring, warp 1 makes 64
 *             "column maxima" from the stream's fold, sums them (a shuffle tree) into its CTA's slot (one relaxed
 *             64-bit store: the launch's tag << 32 | the float) and waits for mu; warp 2 polls the grid's 128 slots
 *             from the CTA's start (relaxed loads, only the missing ones re-read), sums them in a fixed order and
 *             hands mu over through an mbarrier; warp 1 then stores gelu(c - mu) (erff) for its 64 columns. No
 *             epilogue, no tensor instruction, no fp64: what it adds to tma3d_p0 is the chain alone (own sum -> slot
 *             -> found -> mu -> 64 GELUs stored -> end). Its output is checked on the host after the span runs.
 *             tma3d_finlate: the poller starts only when its CTA's ring is done (no polling during the stream);
 *             tma3d_finmu: no hand-over and no GELUs (the poller's mu, one store per CTA, ends the CTA).
 *             tma3d_finp: tma3d_fin with a pipelined poll (two sets of slot loads in flight, half a round trip
 *             apart: is the wait for the next poll round a part of the floor?); tma3d_finb: tma3d_fin with a 128 ns
 *             back-off between the rounds (does the pollers' traffic on the last slot's line slow its trip?);
 *             tma3d_finr: tma3d_fin with one REDUX per round instead of a shuffle tree (kernel 8's round).
 *             tma3d_fin8 (session 42): kernel 8's own finish code after the ring (kernels/swapab_finish.cuh's
 *             grid_start, grid_poll and grid_finish, with one consumer warpgroup and its 64 own columns): is the
 *             ~1.2-1.7 us by which kernel 8's max_dim 0 finish exceeds tma3d_finp's in that code, or around it?
 *             (Run 190's tma3d_fin8g / fin8w / fin8wg took its consumer side apart; what they measured is kernel
 *             8's since W8, 56107d4, and they were removed after it: 21a375d has them.)
 * The timing and the flat read are tools/probe_common.cuh's, shared with probe_l2.
 * Build: `make build/probe_start`. Output: one CSV line per case: variant,bytes,median_us,GBps,
 * then per variant the least-squares fixed cost (us) and rate (TB/s) over the sizes.
 * Run on a GPU: `build/probe_start > probe_start.csv` (~20 s); `build/probe_start bulk384 128 3` times one case only
 * (for ncu: `ncu -k regex:bulk_kernel --launch-skip 1 ...`); `build/probe_start tma3d_p0 128 10 span` then prints the
 * span of 10 more launches of it (first CTA's entry to last consumer's end, %globaltimer: kernel 8's TL3 stamps) and
 * its tail (the last end after the last ring's end: the finish's time for the tma3d_fin variants, ~0 for the rest):
 * span,VARIANT,BYTES,SPAN_US,TAIL_US, and for the tma3d_fin variants the chain after the last ring's end (session
 * 41): ,STORE_US,FOUND_FIRST_US,FOUND_LAST_US (the last slot store, the first and the last poller done; for
 * tma3d_fin8: the last consumer warpgroup's entry to grid_finish, the first and the last poller's mu handed over). */
#include "hopper.cuh"
#include "probe_common.cuh"
#include "swapab_finish.cuh"

#include <cstring>

constexpr int kG = 128;               /* CTAs: kernel 8's 128 W tiles at N = 8192 */
constexpr int kStage = 16384;         /* bytes per bulk copy (kernel 8's n8 stage: 64 W rows x 128 bf16) */
constexpr int kStages = 12;           /* kernel 8's n8 ring depth */
constexpr int kSmem = kStage * kStages + 1024;
constexpr int64_t kPanel = (int64_t)kG * 64 * 128;   /* bulkp / tma3d: one panel, 128 bytes of each of kG x 64 rows */

__device__ __forceinline__ uint32_t fold(uint32_t a, uint4 q) { return a ^ q.x ^ q.y ^ q.z ^ q.w; }

/* ld: CTA b reads its slab [b * slab, (b + 1) * slab) with 8 loads in flight per thread */
__global__ void __launch_bounds__(256) ld_kernel(const uint4 *x, int64_t slab16, uint32_t *out) {
    const uint4 *p = x + (int64_t)blockIdx.x * slab16;
    uint32_t a = 0;
    int64_t i = threadIdx.x;
    for (; i + 7 * 256 < slab16; i += 8 * 256) {
        uint4 q[8];
#pragma unroll
        for (int j = 0; j < 8; j++) q[j] = __ldg(p + i + j * 256);
#pragma unroll
        for (int j = 0; j < 8; j++) a = fold(a, q[j]);
    }
    for (; i < slab16; i += 256) a = fold(a, __ldg(p + i));
    if (a == 0x9e3779b9u && threadIdx.x == 1024) out[0] = a;   /* never: keeps the loads */
}

__device__ __forceinline__ void bulk_load(void *dst, const void *src, uint32_t bytes, uint64_t *bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                     mg_smem_u32(dst)),
                 "l"(src), "r"(bytes), "r"(mg_smem_u32(bar))
                 : "memory");
}

/* bulk / bulk384 / bulk384r: thread 0 streams the slab through the ring, thread 32 consumes (waits, releases).
 * MODE 0: CTA b's slab is the contiguous [b * slab, (b + 1) * slab), one 16 KiB copy per stage. MODE 1 (bulkp) and
 * 2 (tma3d): kernel 8's W panels (a 128-byte column of all 8192 rows, 1 MiB each; CTA b reads rows 64b .. 64b + 63,
 * 8 KiB contiguous, of panels 2s and 2s + 1 at stage s), by two 8 KiB 1-D bulk copies (1) or two 3-D TMA boxes with
 * the 128B swizzle through kernel 8's tensor map (2): the same bytes in kernel 8's order and form. */
/* The span of the latest stamped launch (`probe_start VARIANT MIB REPS span`): %globaltimer at the first CTA's entry
 * (atomicMin of every CTA's) and at the last consumer thread's end (atomicMax), the stamps kernel 8's light timeline
 * takes (notes/runs/r147_exp_light_timeline.diff: TL3's start and end), so that the two launches' spans compare. */
/* first entry, last end, last ring end (tail = end - ring end); the tma3d_fin variants' chain: the last slot store,
 * the first and the last poller to have every slot (each stamped just before the store / just after the poll) */
__device__ unsigned long long g_span[6];
/* tma3d_fin: the grid's slots (tag << 32 | float bits), its output, and a poll that gave up (CTAs not co-resident) */
__device__ unsigned long long g_fin_slot[kG];
__device__ float g_fin_out[kG * 64];
__device__ int g_fin_timeout;
__device__ __forceinline__ unsigned long long span_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Half of a poll's round trip to L2 at the finish (~0.3-0.4 us on an H100 by session 32's found-after-store figures),
 * the pipelined poll's offset between its two load sets */
constexpr unsigned kPollHalfNs = 160;

/* One set of the pipelined poll: issue the missing slots' loads (not waited for here) / take what they found */
__device__ __forceinline__ void fin_issue(unsigned long long (&w)[kG / 32], unsigned missing, int lane) {
#pragma unroll
    for (int i = 0; i < kG / 32; i++)
        if (missing & (1u << i)) w[i] = mg_ld_relaxed_gpu_u64(&g_fin_slot[lane + 32 * i]);
}
__device__ __forceinline__ void fin_take(const unsigned long long (&w)[kG / 32], unsigned &missing, float (&v)[kG / 32],
                                         unsigned tag) {
#pragma unroll
    for (int i = 0; i < kG / 32; i++)
        if ((missing & (1u << i)) && (unsigned)(w[i] >> 32) == tag) {
            v[i] = __uint_as_float((unsigned)w[i]);
            missing &= ~(1u << i);
        }
}

/* tma3d_finp's poller: fin_poll's slots, rounds and sum, but once at most half the slots are missing (the stream's
 * last part, where fin_poll spins) two sets of loads are kept in flight kPollHalfNs apart, each re-issued as soon as it
 * is taken, so that a slot that lands is found half a round trip after it on average instead of a whole one; done
 * when every lane has its four (one vote). Gives up after 1 s. */
__device__ __forceinline__ float fin_poll_pipe(unsigned tag) {
    const int lane = threadIdx.x & 31;
    float v[kG / 32];
    unsigned long long wa[kG / 32], wb[kG / 32];
    unsigned missing = (1u << (kG / 32)) - 1u;
    const unsigned long long t0 = span_now();
    bool timeout = false;
    for (;;) {   /* fin_poll's rounds while more than half the slots are missing */
        fin_issue(wa, missing, lane);
        fin_take(wa, missing, v, tag);
        if (__reduce_add_sync(0xffffffffu, (unsigned)__popc(missing)) <= kG / 2) break;
        if (span_now() - t0 > 1000000000ull) { timeout = true; break; }
        __nanosleep(256);
    }
    if (!timeout && !__all_sync(0xffffffffu, missing == 0u)) {
        fin_issue(wa, missing, lane);
        __nanosleep(kPollHalfNs);
        fin_issue(wb, missing, lane);
        for (;;) {
            fin_take(wa, missing, v, tag);
            if (__all_sync(0xffffffffu, missing == 0u)) break;
            fin_issue(wa, missing, lane);
            fin_take(wb, missing, v, tag);
            if (__all_sync(0xffffffffu, missing == 0u)) break;
            fin_issue(wb, missing, lane);
            if (span_now() - t0 > 1000000000ull) { timeout = true; break; }
        }
    }
    if (timeout) {
        if (lane == 0) g_fin_timeout = 1;
        return 0.f;
    }
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kG / 32; i++) sum += v[i];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    return sum;
}

/* tma3d_fin's poller (warp 2, from the CTA's start): lane l waits for slots l, l + 32, l + 64, l + 96 to carry this
 * launch's tag (re-reading only the missing; sleeping while more than half of the slots are missing, as kernel 8's
 * grid_poll), then sums them in a fixed order (the lane's four in order, then the xor tree). Gives up after 1 s.
 * BACKOFF (tma3d_finb): a 128 ns sleep after every round that still misses a slot, so that the 127 pollers waiting
 * for the last slot load its L2 line less (does their traffic delay the store or each other's loads?).
 * REDUX (tma3d_finr): the round's count of missing slots by one __reduce_add_sync (kernel 8's grid_poll) instead of a
 * five-shuffle tree (is tma3d_finp's gain its pipelining or its shorter round?). */
template <bool BACKOFF = false, bool REDUX = false> __device__ __forceinline__ float fin_poll(unsigned tag) {
    const int lane = threadIdx.x & 31;
    float v[kG / 32];
    unsigned missing = (1u << (kG / 32)) - 1u;
    const unsigned long long t0 = span_now();
    for (;;) {
#pragma unroll
        for (int i = 0; i < kG / 32; i++) {
            if (missing & (1u << i)) {
                const unsigned long long w = mg_ld_relaxed_gpu_u64(&g_fin_slot[lane + 32 * i]);
                if ((unsigned)(w >> 32) == tag) {
                    v[i] = __uint_as_float((unsigned)w);
                    missing &= ~(1u << i);
                }
            }
        }
        int left = __popc(missing);
        if (REDUX) {
            left = (int)__reduce_add_sync(0xffffffffu, (unsigned)left);
        } else {
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) left += __shfl_xor_sync(0xffffffffu, left, o);
        }
        if (left == 0) break;
        if (span_now() - t0 > 1000000000ull) {
            if (lane == 0) g_fin_timeout = 1;
            return 0.f;
        }
        if (left > kG / 2) __nanosleep(256);
        else if (BACKOFF) __nanosleep(128);
    }
    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < kG / 32; i++) sum += v[i];
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    return sum;
}

/* tma3d_fin's 64 column values of CTA b from the fold a (lane l: two), as the host's check recomputes them */
__host__ __device__ inline float fin_col(uint32_t a, int b, int j) {
    return j < 32 ? (float)(a & 0xffu) + (float)j + 0.25f * (float)b : (float)(a & 0xffu) - (float)(j - 32);
}
__host__ __device__ inline float fin_gelu(float v) { return 0.5f * v * (1.f + erff(v * 0.70710678118654752f)); }

/* bulk_kernel's finish (FIN): none, tma3d_fin's, tma3d_finlate's, tma3d_finmu's (the header's list) */
enum Fin { F_NONE, F_FIN, F_LATE, F_MU, F_PIPE, F_BACK, F_REDUX, F_K8 };

/* tma3d_fin8: kernel 8's own finish code (kernels/swapab_finish.cuh: grid_start, grid_poll, grid_finish with one
 * consumer warpgroup's 64 own columns, gown) after the ring, in place of tma3d_fin's least form: its tagged slots
 * (the tag in the fp64 sum's low 16 bits), fp64 sums and mu, the poller's hand-over and its GELU */
struct K8Fin {
    static constexpr int CONSUMERS = 1, WROWS = 64;
    using T = float;
};
__device__ unsigned long long g_k8_slot[kG];   /* grid_finish's tagged slots (gslots = kG; zero: tag 0) */

template <int THREADS, bool REGS, int MODE = 0, int FIN = F_NONE>
__global__ void __launch_bounds__(THREADS, 1) bulk_kernel(const uint8_t *x, int64_t slab, uint32_t *out,
                                                          const __grid_constant__ CUtensorMap tm, int stamp = 0,
                                                          unsigned tag = 0) {
    extern __shared__ uint8_t smem_raw[];
    if (stamp && threadIdx.x == 0) atomicMin(&g_span[0], span_now());
    uint8_t *ring = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    __shared__ uint64_t full[kStages], empty[kStages], mubar, ringbar;
    __shared__ float mu_s;
    /* tma3d_fin8: kernel 8's zbar, its flag words (launch_tag) and own_bar (zbar + 3), the finish's doubles, gcol */
    __shared__ uint64_t k8bar[4];
    __shared__ double k8sh[8];
    __shared__ float k8col[64];
    __shared__ uint32_t k8fold;
    if (threadIdx.x == 0) {
        if constexpr (MODE == 2) mg_tma_prefetch_desc(&tm);
        for (int s = 0; s < kStages; s++) {
            mg_mbar_init(&full[s], 1);
            mg_mbar_init(&empty[s], 1);
        }
        mg_mbar_init(&mubar, 1);
        mg_mbar_init(&ringbar, 1);
        if constexpr (FIN == F_K8) {   /* tma3d_fin8's zbar and own_bar, in its kernel only */
            mg_mbar_init(&k8bar[0], 1);
            mg_mbar_init(mgsab::own_bar(k8bar), 1);
        }
        mg_fence_mbarrier_init();
    }
    __syncthreads();
    const int wg = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0);
    if constexpr (REGS) {
        if (wg == 0) mg_setmaxnreg_dec<40>();
        else mg_setmaxnreg_inc<232>();
    }
    const uint8_t *p = x + (int64_t)blockIdx.x * slab;
    const int n = (int)(slab / kStage);
    uint32_t a = 0;   /* the consumer's fold of the first word of every stage */
    if (threadIdx.x == 0) {
        for (int it = 0; it < n; it++) {
            const int st = it % kStages, use = it / kStages;
            if (use > 0) mg_mbar_wait(&empty[st], (use - 1) & 1);
            mg_mbar_arrive_expect_tx(&full[st], kStage);
            if constexpr (MODE == 0) {
                bulk_load(ring + st * kStage, p + (int64_t)it * kStage, kStage, &full[st]);
            } else {
                for (int h = 0; h < 2; h++) {
                    uint8_t *dst = ring + st * kStage + h * (kStage / 2);
                    if constexpr (MODE == 1)
                        bulk_load(dst, x + (int64_t)(2 * it + h) * kPanel + (int64_t)blockIdx.x * (kStage / 2),
                                  kStage / 2, &full[st]);
                    else if constexpr (MODE == 2)
                        mg_tma_load_3d(dst, &tm, &full[st], 0, (int)blockIdx.x * 64, 2 * it + h);
                    else if (h == 0)   /* MODE 3: one box of both panels */
                        mg_tma_load_3d(dst, &tm, &full[st], 0, (int)blockIdx.x * 64, 2 * it);
                }
            }
        }
    } else if (threadIdx.x == 32) {
        for (int it = 0; it < n; it++) {
            const int st = it % kStages;
            mg_mbar_wait(&full[st], (it / kStages) & 1);
            a ^= *reinterpret_cast<const uint32_t *>(ring + st * kStage);
            mg_mbar_arrive(&empty[st]);
        }
        if (a == 0x9e3779b9u) out[0] = a;
        if (stamp) {
            const unsigned long long t = span_now();
            atomicMax(&g_span[2], t);
            if (FIN == F_NONE) atomicMax(&g_span[1], t);
        }
        if (FIN == F_K8) k8fold = a;   /* the consumer warpgroup reads it after ringbar (release.cta) */
        if (FIN == F_LATE || FIN == F_K8) mg_mbar_arrive(&ringbar);
    }
    if constexpr (FIN == F_K8) {   /* kernel 8's roles: warp 3 the tag (its warp 1's), warp 2 the poller, wg 1 */
        const int warp = threadIdx.x / 32;
        if (threadIdx.x == 96) mgsab::grid_start(g_k8_slot, k8bar);
        if (warp == 2) {
            mgsab::grid_poll<K8Fin>(g_k8_slot, kG * 64, k8sh, k8bar);
            if (stamp && (threadIdx.x & 31) == 0) {   /* mu handed over: the first and the last CTA's */
                const unsigned long long t = span_now();
                atomicMin(&g_span[4], t);
                atomicMax(&g_span[5], t);
            }
        }
        if (wg == 1) {
            const int t = (int)threadIdx.x - 128;
            mg_mbar_wait(&ringbar, 0);
            const uint32_t f = k8fold;
            if (t < 64) k8col[t] = fin_col(f, blockIdx.x, t);
            if (stamp && t == 0) atomicMax(&g_span[3], span_now());
            const mgsab::GridArgs ga{g_fin_out, nullptr, nullptr, g_k8_slot, kG * 64, 1, 1, 64, kG};
            mgsab::grid_finish<K8Fin>(ga, t, k8sh, k8col, k8bar);
            if (stamp && t == 0) atomicMax(&g_span[1], span_now());
        }
    } else if constexpr (FIN != F_NONE) {
        const int warp = threadIdx.x / 32, lane = threadIdx.x & 31;
        if (warp == 2) {   /* the poller */
            if (FIN == F_LATE) mg_mbar_wait(&ringbar, 0);
            const float g = FIN == F_PIPE ? fin_poll_pipe(tag) : fin_poll<FIN == F_BACK, FIN == F_REDUX>(tag);
            if (stamp && lane == 0) {
                const unsigned long long t = span_now();
                atomicMin(&g_span[4], t);
                atomicMax(&g_span[5], t);
            }
            if (lane == 0) {
                mu_s = g * (1.f / (kG * 64));
                if (FIN == F_MU) {
                    g_fin_out[blockIdx.x * 64] = mu_s;
                    if (stamp) atomicMax(&g_span[1], span_now());
                } else {
                    mg_mbar_arrive(&mubar);   /* release.cta: warp 1 reads mu_s after its wait */
                }
            }
        } else if (warp == 1) {   /* lane 0 ran the ring above; the others wait for it here */
            __syncwarp();
            a = __shfl_sync(0xffffffffu, a, 0);
            const float c0 = fin_col(a, blockIdx.x, lane), c1 = fin_col(a, blockIdx.x, lane + 32);
            float own = c0 + c1;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) own += __shfl_xor_sync(0xffffffffu, own, o);
            if (lane == 0) {
                if (stamp) atomicMax(&g_span[3], span_now());
                mg_st_relaxed_gpu_u64(&g_fin_slot[blockIdx.x],
                                      ((unsigned long long)tag << 32) | __float_as_uint(own));
            }
            if (FIN != F_MU) {
                mg_mbar_wait(&mubar, 0);
                const float mu = mu_s;
                g_fin_out[blockIdx.x * 64 + lane] = fin_gelu(c0 - mu);
                g_fin_out[blockIdx.x * 64 + 32 + lane] = fin_gelu(c1 - mu);
                __syncwarp();
                if (stamp && lane == 0) atomicMax(&g_span[1], span_now());
            }
        }
    }
    if constexpr (THREADS > 128) __syncthreads();   /* the idle warpgroups stay to the end, as kernel 8's consumers */
}

/* kernel 8's W tensor map as it was to run 156 (w_map: mg_make_tma_3d, L2 promotion 256 B, 128B swizzle) over
 * `panels` 1 MiB panels of x, with the promotion, the swizzle and the box's panel depth as given */
static bool tma3d_map(CUtensorMap *map, void *base, int64_t panels, CUtensorMapL2promotion promo,
                      CUtensorMapSwizzle swz, unsigned depth) {
    const mg_status st = mg_make_tma_3d(map, base, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, (uint64_t)panels, (uint64_t)kG * 64,
                                        64, 128, (uint64_t)kPanel, depth, 64, 64, swz, promo);
    if (st != MG_OK) fprintf(stderr, "tma3d: %s\n", mg_last_error());
    return st == MG_OK;
}

/* The variants (the header's list): the launch, and for the tma3d ones the W map's L2 promotion, swizzle and box
 * depth in panels (0: no tensor map) */
enum Launch { L_LD, L_FLAT, L_BULK64, L_BULK384, L_BULK384R, L_BULKP, L_TMA384, L_TMA256, L_TMA256_BOX2, L_TMA256_FIN };
struct Variant {
    const char *name;
    Launch launch;
    CUtensorMapL2promotion promo;
    CUtensorMapSwizzle swizzle;
    unsigned depth;
    Fin fin = F_NONE;   /* L_TMA256_FIN: which finish (kFinKernels) */
};
constexpr CUtensorMapL2promotion kP0 = CU_TENSOR_MAP_L2_PROMOTION_NONE, kP128 = CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                  kP256 = CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
constexpr CUtensorMapSwizzle kS128 = CU_TENSOR_MAP_SWIZZLE_128B, kSNone = CU_TENSOR_MAP_SWIZZLE_NONE;
static const Variant kVariants[] = {
    {"ld", L_LD, kP0, kSNone, 0},
    {"flat", L_FLAT, kP0, kSNone, 0},
    {"bulk", L_BULK64, kP0, kSNone, 0},
    {"bulk384", L_BULK384, kP0, kSNone, 0},
    {"bulk384r", L_BULK384R, kP0, kSNone, 0},
    {"bulkp", L_BULKP, kP0, kSNone, 0},
    {"tma3d", L_TMA384, kP256, kS128, 1},
    {"tma3d256", L_TMA256, kP256, kS128, 1},
    {"tma3d_p0", L_TMA256, kP0, kS128, 1},
    {"tma3d_p128", L_TMA256, kP128, kS128, 1},
    {"tma3d_ns", L_TMA256, kP256, kSNone, 1},
    {"tma3d_box2", L_TMA256_BOX2, kP256, kS128, 2},
    {"tma3d_fin", L_TMA256_FIN, kP0, kS128, 1, F_FIN},
    {"tma3d_finlate", L_TMA256_FIN, kP0, kS128, 1, F_LATE},
    {"tma3d_finmu", L_TMA256_FIN, kP0, kS128, 1, F_MU},
    {"tma3d_finp", L_TMA256_FIN, kP0, kS128, 1, F_PIPE},
    {"tma3d_finb", L_TMA256_FIN, kP0, kS128, 1, F_BACK},
    {"tma3d_finr", L_TMA256_FIN, kP0, kS128, 1, F_REDUX},
    {"tma3d_fin8", L_TMA256_FIN, kP0, kS128, 1, F_K8},
};

/* the tma3d_fin variants' kernels, by Fin (launch() and main's shared-memory attribute) */
using FinKernel = void (*)(const uint8_t *, int64_t, uint32_t *, const CUtensorMap, int, unsigned);
static const FinKernel kFinKernels[] = {nullptr,
                                        bulk_kernel<256, false, 2, F_FIN>,
                                        bulk_kernel<256, false, 2, F_LATE>,
                                        bulk_kernel<256, false, 2, F_MU>,
                                        bulk_kernel<256, false, 2, F_PIPE>,
                                        bulk_kernel<256, false, 2, F_BACK>,
                                        bulk_kernel<256, false, 2, F_REDUX>,
                                        bulk_kernel<256, false, 2, F_K8>};
static_assert(sizeof kFinKernels / sizeof kFinKernels[0] == F_K8 + 1, "one kernel per Fin");

static unsigned g_fin_tag;   /* tma3d_fin: each launch's tag (1, 2, ...; the zeroed slots hold 0) */

/* One launch of variant var over `bytes` of x (slabs of slab bytes per CTA), stamping its span when stamp != 0 (the
 * bulk / tma3d kernels only). tm: the variant's tensor map (all zeros for the variants without one). */
static void launch(const Variant &var, const uint8_t *x, int64_t bytes, int64_t slab, const CUtensorMap &tm,
                   int stamp) {
    const uint4 *x16 = (const uint4 *)x;
    switch (var.launch) {
    case L_LD: ld_kernel<<<kG, 256>>>(x16, slab / 16, g_sink); break;
    case L_FLAT: stream_kernel<false><<<g_sms * 8, 256>>>(x16, bytes / 16, g_sink); break;
    case L_BULK64: bulk_kernel<64, false><<<kG, 64, kSmem>>>(x, slab, g_sink, tm, stamp); break;
    case L_BULK384: bulk_kernel<384, false><<<kG, 384, kSmem>>>(x, slab, g_sink, tm, stamp); break;
    case L_BULK384R: bulk_kernel<384, true><<<kG, 384, kSmem>>>(x, slab, g_sink, tm, stamp); break;
    case L_BULKP: bulk_kernel<384, false, 1><<<kG, 384, kSmem>>>(x, slab, g_sink, tm, stamp); break;
    case L_TMA384: bulk_kernel<384, false, 2><<<kG, 384, kSmem>>>(x, slab, g_sink, tm, stamp); break;
    case L_TMA256: bulk_kernel<256, false, 2><<<kG, 256, kSmem>>>(x, slab, g_sink, tm, stamp); break;
    case L_TMA256_BOX2: bulk_kernel<256, false, 3><<<kG, 256, kSmem>>>(x, slab, g_sink, tm, stamp); break;
    case L_TMA256_FIN:
        kFinKernels[var.fin]<<<kG, 256, kSmem>>>(x, slab, g_sink, tm, stamp, ++g_fin_tag);
        break;
    }
}

/* tma3d_fin's output after its last launch: every CTA's fold is the XOR of the first word of its n stages (x is
 * memset to 0x3c), so the host knows the 64 x kG column values, mu and the GELUs; a slot missed or mis-summed
 * moves mu and fails this. Also fails on a poll that gave up. */
static bool fin_check(int64_t slab, bool mu_only) {
    int timeout = 0;
    CK(cudaMemcpyFromSymbol(&timeout, g_fin_timeout, sizeof timeout));
    std::vector<float> got(kG * 64);
    CK(cudaMemcpyFromSymbol(got.data(), g_fin_out, got.size() * sizeof(float)));
    const int n = (int)(slab / kStage);
    const uint32_t a = (n % 2) ? 0x3c3c3c3cu : 0u;
    double sum = 0;
    for (int b = 0; b < kG; b++)
        for (int j = 0; j < 64; j++) sum += fin_col(a, b, j);
    const float mu = (float)(sum / (kG * 64));
    int bad = 0;
    for (int b = 0; b < kG; b++)
        for (int j = 0; j < (mu_only ? 1 : 64); j++) {   /* tma3d_finmu: each CTA's mu at its column 0 */
            const float want = mu_only ? mu : fin_gelu(fin_col(a, b, j) - mu), d = fabsf(got[b * 64 + j] - want);
            if (!(d <= 1e-4f * (1.f + fabsf(want)))) bad++;
        }
    if (timeout || bad) {
        fprintf(stderr, "probe_start: tma3d_fin*: %s%d of %d outputs wrong (mu %g)\n", timeout ? "a poll gave up; " : "",
                bad, mu_only ? kG : kG * 64, mu);
        return false;
    }
    fprintf(stderr, "probe_start: tma3d_fin*: %d outputs checked (mu %g)\n", mu_only ? kG : kG * 64, mu);
    return true;
}

/* `span`: REPS stamped launches of the bulk / tma3d variants, each after the read flush, one line each:
 * span,VARIANT,BYTES,us from the first CTA's entry to the last consumer's end */
static bool var_span(const Variant &var, const uint8_t *x, int64_t slab, const CUtensorMap &tm, int reps) {
    const bool fin = var.fin != F_NONE;
    if (var.launch != L_BULK384 && var.launch != L_BULKP && var.launch != L_TMA384 && var.launch != L_TMA256 && !fin) {
        fprintf(stderr, "probe_start: span: %s is not a bulk384 / bulkp / tma3d variant\n", var.name);
        return false;
    }
    for (int r = 0; r < reps; r++) {
        const unsigned long long init[6] = {~0ull, 0ull, 0ull, 0ull, ~0ull, 0ull};
        CK(cudaMemcpyToSymbol(g_span, init, sizeof init));
        if (mg_l2_flush_read(g_flush, g_flush_bytes, g_sink, g_sms, 0) != MG_OK) return false;
        launch(var, x, slab * kG, slab, tm, 1);
        CK(cudaDeviceSynchronize());
        unsigned long long got[6];
        CK(cudaMemcpyFromSymbol(got, g_span, sizeof got));
        const double ring = (double)got[2];
        printf("span,%s,%lld,%.3f,%.3f", var.name, (long long)slab * kG, (got[1] - got[0]) / 1e3, ((double)got[1] - ring) / 1e3);
        /* the chain after the last ring's end: the last slot store, the first and the last poll done (tma3d_fin8: the
         * last consumer warpgroup's entry to grid_finish, the first and the last poller's mu handed over) */
        if (fin)
            printf(",%.3f,%.3f,%.3f", ((double)got[3] - ring) / 1e3, ((double)got[4] - ring) / 1e3,
                   ((double)got[5] - ring) / 1e3);
        printf("\n");
    }
    return !fin || fin_check(slab, var.fin == F_MU);
}

int main(int argc, char **argv) {
    /* optional: `probe_start VARIANT MIB [REPS [span]]` times that one case only (e.g. under ncu: bulk384 128 3) */
    const char *only = argc > 1 ? argv[1] : NULL;
    const int only_mib = argc > 2 ? atoi(argv[2]) : 0;
    const int reps = argc > 3 ? atoi(argv[3]) : 30;
    const bool span = argc > 4 && strcmp(argv[4], "span") == 0;
    /* the arguments first: a bad one is a usage error on any machine, before the GPU is touched */
    if (argc == 2 || argc > 5 || (argc == 5 && !span) || (argc > 2 && (only_mib < 1 || only_mib > 128 || reps < 1))) {
        fprintf(stderr, "usage: probe_start [VARIANT MIB [REPS [span]]]   (MIB 1..128, REPS >= 1)\n");
        return 2;
    }
    const int64_t kMax = 128ll << 20, kFlush = 256ll << 20;
    probe_init((size_t)kFlush);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    fprintf(stderr, "%s, %d SMs\n", prop.name, g_sms);
    uint8_t *x;
    CK(cudaMalloc(&x, kMax));
    CK(cudaMemset(x, 0x3c, kMax));
    CK(cudaFuncSetAttribute(bulk_kernel<64, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    CK(cudaFuncSetAttribute(bulk_kernel<384, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    CK(cudaFuncSetAttribute(bulk_kernel<384, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    CK(cudaFuncSetAttribute(bulk_kernel<384, false, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    CK(cudaFuncSetAttribute(bulk_kernel<384, false, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    CK(cudaFuncSetAttribute(bulk_kernel<256, false, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    CK(cudaFuncSetAttribute(bulk_kernel<256, false, 3>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    for (int f = F_FIN; f <= F_K8; f++)
        CK(cudaFuncSetAttribute(kFinKernels[f], cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem));
    const int mib[] = {8, 16, 32, 64, 128};
    const int nv = (int)(sizeof kVariants / sizeof kVariants[0]);
    CUtensorMap none;
    memset(&none, 0, sizeof none);
    printf("variant,bytes,median_us,GBps\n");
    int matched = 0;
    for (int v = 0; v < nv; v++) {
        const Variant &var = kVariants[v];
        if (only && strcmp(only, var.name) != 0) continue;
        matched = 1;
        double sx = 0, sy = 0, sxx = 0, sxy = 0;
        for (int mb : mib) {
            if (only) mb = only_mib;
            const int64_t bytes = (int64_t)mb << 20, slab = bytes / kG;
            CUtensorMap tm = none;   /* the tma3d launches: kernel 8's W map (bf16 panels of 64 x 8192 rows) */
            if (var.depth > 0 && !tma3d_map(&tm, x, bytes / kPanel, var.promo, var.swizzle, var.depth)) return 1;
            const double us = time_us([&] { launch(var, x, bytes, slab, tm, 0); }, true, reps);
            printf("%s,%lld,%.2f,%.0f\n", var.name, (long long)bytes, us, bytes / us / 1e3);
            fflush(stdout);
            if (only && span && !var_span(var, x, slab, tm, reps)) return 1;
            const double mbytes = bytes / 1e6;
            sx += mbytes; sy += us; sxx += mbytes * mbytes; sxy += mbytes * us;
            if (only) break;
        }
        if (only) continue;
        const double n = sizeof mib / sizeof mib[0], slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
        printf("# %s: fixed %.2f us, rate %.2f TB/s\n", var.name, (sy - slope * sx) / n, 1.0 / slope);   /* us per MB */
    }
    if (only && !matched) {
        fprintf(stderr, "probe_start: no variant %s (see the header)\n", only);
        return 2;
    }
    CK(cudaDeviceSynchronize());
    return 0;
}
