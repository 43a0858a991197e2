/* ws_streamk.cuh: the stream-K fix-up of the warp-specialized kernel (ws_scheduler.cuh says who does what).
 * A CTA that ran a NON-HEAD piece of a tile (role 1) stores its fp32 accumulators to its slot of the workspace and
 * raises its flag (fence, then the flag). The CTA whose piece holds the tile's first k-iteration owns the tile (role
 * 2): after its head piece it waits for the flags of the CTAs that covered the rest (they did that work first, so
 * nobody waits on a waiter: no chain, no deadlock with every CTA resident, which the cooperative launch of a stream-K
 * plan guarantees: ws_host.cuh), adds their accumulators in CTA order (a fixed order: bitwise deterministic), resets
 * the flags to 0 for the next launch and runs the epilogue.
 * Slot layout [cta][consumer][i][tid]: a warp stores 32 consecutive floats. */
#ifndef MG_WS_STREAMK_CUH
#define MG_WS_STREAMK_CUH

#include "ws_scheduler.cuh"

namespace mgws {

/* Role 1: hand this consumer's accumulators to the tile's owner. */
template <class C>
__device__ __forceinline__ void streamk_store(const float (&acc)[C::BN / 2], const Params &p, int c, int tid) {
    constexpr int SLOT = (C::BN / 2) * 128;
    float *dst = p.sk_part + ((size_t)blockIdx.x * C::CONSUMERS + c) * SLOT + tid;
#pragma unroll
    for (int i = 0; i < C::BN / 2; i++) __stcg(dst + i * 128, acc[i]);
    __threadfence();            /* each thread's stores are visible GPU-wide before the flag */
    mg_named_bar_sync(1 + c, 128); /* ... all 128 threads' */
    if (tid == 0) mg_st_release_gpu(&p.sk_flag[blockIdx.x * C::CONSUMERS + c], 1);
}

/* Role 2: add the accumulators of CTAs blockIdx.x + 1 .. last, in that order. */
template <class C>
__device__ __forceinline__ void streamk_gather(float (&acc)[C::BN / 2], const Params &p, int last, int c, int tid) {
    constexpr int SLOT = (C::BN / 2) * 128;
    for (int o = (int)blockIdx.x + 1; o <= last; o++) {
        int *flag = &p.sk_flag[o * C::CONSUMERS + c];
        if (tid == 0) {
            while (mg_ld_acquire_gpu(flag) == 0) __nanosleep(64);
            *flag = 0;          /* nothing else reads it in this launch: zero for the next one */
        }
        mg_named_bar_sync(1 + c, 128); /* the acquire above orders the slot reads below */
        const float *src = p.sk_part + ((size_t)o * C::CONSUMERS + c) * SLOT + tid;
#pragma unroll
        for (int i = 0; i < C::BN / 2; i++) acc[i] += __ldcg(src + i * 128);
    }
}

}  // namespace mgws

#endif /* MG_WS_STREAMK_CUH */
