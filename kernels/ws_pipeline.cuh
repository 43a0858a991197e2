/* ws_pipeline.cuh: the TMA -> wgmma stage ring of the warp-specialized kernel.
 *
 * A ring of STAGES shared-memory stages, each holding the A (x) tile BM x BK and the B (W) tile(s) BN x BK, K-major,
 * swizzled (128B when a row is 128 bytes, 64B when 64). Two mbarriers per stage:
 *   full[s]  count 1:  the producer's arrive.expect_tx(stage bytes) + the TMA transaction bytes complete it.
 *   empty[s] count 4 * CONSUMERS: lane 0 of every consumer WARP arrives once its wgmmas reading s completed
 *            (per-warp arrivals are correct whatever a warp's wgmma.wait_group covers; CUTLASS does the same).
 * Every role walks the same global k-iteration counter `it` (continuing across tiles, see ws_scheduler.cuh):
 * stage s = it % STAGES, use u = it / STAGES; consumers wait full[s] for parity u & 1; the producer skips the wait
 * on the first use of a stage and otherwise waits empty[s] for parity (u - 1) & 1 (the previous use's release).
 * K = 0 gives zero k-iterations: the producer issues nothing and the consumers run the epilogue on zero accumulators
 * (y = b), so nothing waits on a barrier that never completes. */
#ifndef MG_WS_PIPELINE_CUH
#define MG_WS_PIPELINE_CUH

#include "ws_config.cuh"

namespace mgws {

template <class C> struct Ring {
    uint8_t *smem;   /* stage 0 (1024-byte aligned: the 128B swizzle pattern repeats every 1024 bytes) */
    uint64_t *full, *empty;

    /* Thread 0, before the CTA barrier that publishes the initialised barriers. */
    __device__ __forceinline__ void init() const {
        for (int s = 0; s < C::STAGES; s++) {
            mg_mbar_init(&full[s], 1);
            mg_mbar_init(&empty[s], C::EMPTY_ARRIVALS);
        }
        mg_fence_mbarrier_init();
    }
    __device__ __forceinline__ uint8_t *stage(int it) const { return smem + (it % C::STAGES) * C::STAGE_BYTES; }
    __device__ __forceinline__ uint64_t *full_bar(int it) const { return &full[it % C::STAGES]; }
    /* Producer: wait until every consumer released the stage's previous use (none on its first use). */
    __device__ __forceinline__ void acquire(int it) const {
        const int u = it / C::STAGES;
        if (u > 0) mg_mbar_wait(&empty[it % C::STAGES], (u - 1) & 1);
    }
    /* Consumers: wait until the stage's TMA bytes landed. */
    __device__ __forceinline__ void wait_full(int it) const {
        mg_mbar_wait(&full[it % C::STAGES], (it / C::STAGES) & 1);
    }
    /* Consumer warp (lane 0): done reading the stage of k-iteration it. */
    __device__ __forceinline__ void release(int it) const { mg_mbar_arrive(&empty[it % C::STAGES]); }
};

}  // namespace mgws

#endif /* MG_WS_PIPELINE_CUH */
