/* ws_kernel.cuh: the warp-specialized, persistent wgmma GEMM + fused bias/max epilogue, as ONE template that kernel 4
 * (kernels/04_wgmma_ws.cu: tf32, bf16) and kernel 6 (kernels/06_wgmma_bf16x3.cu: fp32 via bf16x3) instantiate.
 * Design notes and measurements: notes/04_wgmma_ws.md, notes/05_06_split.md. The pieces, one concern per header:
 *   ws_config.cuh     Scheme, Cfg (one tile configuration), Params (what the host plan hands the kernel);
 *   ws_scheduler.cuh  the tile scheduler both roles walk: persistent grouped order, stream-K pieces, panels;
 *   ws_pipeline.cuh   the TMA -> wgmma stage ring (full / empty mbarriers, stage and phase of a k-iteration);
 *   ws_mainloop.cuh   the consumers' k-loops (smem operands; kernel 6's register split);
 *   ws_streamk.cuh    the stream-K fix-up; ws_epilogue.cuh: bias + row max / column max, remainder sums;
 *   ws_host.cuh       TMA descriptors and the launch of a plan (src/ws_policy.h makes the plan).
 *
 * ROLES (THREADS = 128 * (CONSUMERS + 1); __launch_bounds__(THREADS, 1) so setmaxnreg applies)
 *   warpgroup 0  producer: setmaxnreg.dec to 40 registers; ONE thread issues every TMA load; the other 127 exit.
 *                It runs ahead into the next tile as soon as stages free up, so tile t's epilogue overlaps tile t+1's
 *                loads.
 *   warpgroup 1+c consumer c: setmaxnreg.inc to 232 (240 with one consumer); owns rows [64c, 64c + 64) of the
 *                BM x BN tile: one m64nBNk wgmma per k-step into BN/2 fp32 accumulators per thread. */
#ifndef MG_WS_KERNEL_CUH
#define MG_WS_KERNEL_CUH

#include "ws_epilogue.cuh"
#include "ws_mainloop.cuh"

namespace mgws {

/* The producer's loads of one piece: per k-iteration, the stage's x box and W box(es), all completing on full[s].
 * With the remainder split the W box has BN - 8 rows and a chunk's k-blocks add the 8 remainder rows. */
template <class C>
__device__ __forceinline__ int produce(const Params &p, const Ring<C> &ring, const Work &wk, int it, int tiles_m,
                                       int num_k) {
    const int row_a = tile_row0<C>(p, wk.tm, tiles_m);
    const int row_b = wk.n0;   /* a narrow panel still loads BN rows: the last 8 are the next panel's and feed only
                                * accumulators that its n248 wgmma never touches */
    int ck0 = 0, ck1 = 0;      /* remainder split: this tile's chunk of the remainder columns (none: ck0 = ck1) */
    (void)rem_chunk<C>(p, wk.tn, num_k, &ck0, &ck1);
    for (int kb = wk.kb0; kb < wk.kb1; kb++, it++) {
        ring.acquire(it);
        uint8_t *st = ring.stage(it);
        uint64_t *full = ring.full_bar(it);
        const int kc = kb * C::BK; /* the k column of this stage's boxes */
        /* Full boxes count, even where TMA zero-fills. */
        const bool rk = kb >= ck0 && kb < ck1;
        uint32_t tx = C::STAGE_BYTES;
        if constexpr (C::MIXED)
            if (p.rem_chunks > 0 && !rk) tx -= C::REM_BYTES;
        mg_mbar_arrive_expect_tx(full, tx);
        if constexpr (C::MIXED)
            if (rk) mg_tma_load_2d(st + C::A_BYTES + C::BN_NARROW * C::B_ROW_BYTES, &p.brem, full, kc, p.rem_n0);
        mg_tma_load_2d(st, &p.a, full, kc, row_a);
#pragma unroll
        for (int q = 0; q < C::B_PARTS; q++) mg_tma_load_2d(st + C::A_BYTES + q * C::B_BYTES, &p.b[q], full, kc, row_b);
    }
    return it;
}

template <class C>
__global__ void __launch_bounds__(C::THREADS, 1) ws_kernel(const __grid_constant__ Params p) {
    extern __shared__ uint8_t smem_raw[];
    /* The 128B swizzle pattern repeats every 1024 bytes and the descriptors assume tile bases on that grid. */
    uint8_t *smem = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    float *red = reinterpret_cast<float *>(smem + C::STAGES * C::STAGE_BYTES);
    uint64_t *bars = reinterpret_cast<uint64_t *>(smem + C::STAGES * C::STAGE_BYTES + C::RED_BYTES);
    const Ring<C> ring{smem, bars, bars + C::STAGES};
    const int wg = threadIdx.x / 128, tid = threadIdx.x % 128;

    if (threadIdx.x == 0) ring.init();
    __syncthreads(); /* the only CTA-wide barrier: roles never synchronise with each other after this */
    /* The finalize kernel after this one may be scheduled now (PDL, kernels/finalize.cu): its CTAs land on SMs this
     * grid leaves free and wait there for its completion, so its launch latency hides behind this grid's tail. */
    if (threadIdx.x == 0) mg_pdl_trigger();

    /* Each role walks its own Scheduler (the same pieces, ws_scheduler.cuh) and k-iteration counter `it`, identical
     * in every role (ws_pipeline.cuh). */
    if (wg == 0) {
        /* ---------------- producer ---------------- */
        mg_setmaxnreg_dec<kProducerRegs>();
        if (tid == 0) {
            Scheduler<C> sched(p);
            Work wk;
            int it = 0;
            if (sched.num_k > 0) {
                mg_tma_prefetch_desc(&p.a);
#pragma unroll
                for (int q = 0; q < C::B_PARTS; q++) mg_tma_prefetch_desc(&p.b[q]);
                if constexpr (C::MIXED)
                    if (p.rem_chunks > 0) mg_tma_prefetch_desc(&p.brem);
            }
            for (int w = 0; sched.get(w, wk); w++) it = produce<C>(p, ring, wk, it, sched.tiles_m, sched.num_k);
        }
        return; /* the CTA stays alive while the consumers run; every issued load is consumed by them */
    }

    /* ---------------- consumers ---------------- */
    mg_setmaxnreg_inc<C::CONSUMER_REGS>();
    const int c = wg - 1; /* consumer index: rows [64c, 64c + 64) of the tile */
    const int warp = tid / 32, lane = tid % 32;
    Scheduler<C> sched(p);
    Work wk;
    int it = 0;
    float acc[C::BN / 2];
    /* kernel 6 only: this thread's A-fragment place and two register sets (ws_mainloop.cuh rs_kloop) */
    const uint32_t smem_base = mg_smem_u32(smem);
    const RsLane ln(c, warp, lane, C::A_ROW_BYTES, C::SLAB);
    uint32_t fr0[2][2][4], fr1[2][2][4];
    (void)smem_base; (void)ln; (void)fr0; (void)fr1;

    for (int w = 0; sched.get(w, wk); w++) {
#pragma unroll
        for (int i = 0; i < C::BN / 2; i++) acc[i] = 0.f;
        mg_fence_acc(acc); /* the zeros are materialised before the wgmma.fence of the first k-iteration */
        if constexpr (C::T::kRegA) {
            it = rs_kloop<C>(acc, fr0, fr1, ring, smem_base, it, wk.kb0, wk.kb1, ln, lane);
            finish_tile<C, C::BN>(acc, p, wk, ring, it, sched.tiles_m, sched.num_k, c, warp, lane, tid, red);
        } else if constexpr (C::MIXED) {
            if (wk.width != C::BN) {
                /* a narrow panel; with a remainder chunk its k-blocks run n256 (the last 8 accumulator columns are
                 * the remainder columns, whose W rows the producer loaded behind the panel's); without one ck0 = kb1 */
                int ck0 = wk.kb1, ck1 = wk.kb1;
                (void)rem_chunk<C>(p, wk.tn, sched.num_k, &ck0, &ck1);
                it = ss_kloop<C, C::BN_NARROW>(acc, ring, it, wk.kb0, wk.kb0, ck0, c, lane);
                it = ss_kloop<C, C::BN>(acc, ring, it, wk.kb0, ck0, ck1, c, lane);
                it = ss_kloop<C, C::BN_NARROW>(acc, ring, it, wk.kb0, ck1, wk.kb1, c, lane);
                finish_tile<C, C::BN_NARROW>(acc, p, wk, ring, it, sched.tiles_m, sched.num_k, c, warp, lane, tid,
                                             red);
            } else {
                it = ss_kloop<C, C::BN>(acc, ring, it, wk.kb0, wk.kb0, wk.kb1, c, lane);
                finish_tile<C, C::BN>(acc, p, wk, ring, it, sched.tiles_m, sched.num_k, c, warp, lane, tid, red);
            }
        } else {
            it = ss_kloop<C, C::BN>(acc, ring, it, wk.kb0, wk.kb0, wk.kb1, c, lane);
            finish_tile<C, C::BN>(acc, p, wk, ring, it, sched.tiles_m, sched.num_k, c, warp, lane, tid, red);
        }
    }
}

}  // namespace mgws

#endif /* MG_WS_KERNEL_CUH */
