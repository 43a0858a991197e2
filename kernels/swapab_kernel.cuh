/* swapab_kernel.cuh: the device code of kernel 8 (kernels/08_wgmma_swapab.cu), swap-AB warp-specialized wgmma for
 * small M. The host policy (tile configuration, split-K, grid, workspace) is src/swapab_policy.h; the header of
 * 08_wgmma_swapab.cu says what the kernel shows and why.
 *
 * THE SWAP. y^T = W x^T: W (N x K) is wgmma's A operand (M side: 64 W rows per consumer warpgroup), x (M x K) its B
 * operand (N side: NX columns, one x tile; cdiv(M, NX) x tiles cover M). Both are K-major in memory as they are, so
 * both come by TMA with the 128B swizzle exactly as in kernel 4 (kernels/hopper.cuh conventions). Accumulator
 * fragment of consumer c, warp w, lane l (hopper.cuh's layout with the roles swapped): acc[4q + e] is W row
 * 64 slab + 16w + l/4 (output column j) and x row 8q + 2(l%4) + e (batch row i); acc[4q + 2 + e] the W row 8 below.
 *
 * ROLES (THREADS = 128 (1 + CONSUMERS), __launch_bounds__(THREADS, 1) so setmaxnreg applies; as kernel 4)
 *   warpgroup 0  producer: setmaxnreg.dec to 40; ONE thread issues the TMA loads: per k-block, KSUB 128-byte boxes of
 *                the tile's W rows (WROWS x 128 B each) and of x (NX x 128 B each) into one stage of a STAGES-deep
 *                mbarrier ring (full / empty barriers, as ws_pipeline.cuh); it runs ahead into the next unit.
 *                x's box starts at the unit's x tile (row xt NX); TMA zero-fills rows >= M. In clusters of 2 the
 *                whole warp 0 runs the loop and elect.sync issues (THE PRODUCER'S FORM at produce()). In max_dim
 *                1's fused finish its warp 1 takes the start ticket (swapab_finish.cuh, THE START TICKET), in max_dim
 *                0's grid finish the launch's tag (THE TAGGED SLOTS).
 *   warpgroup 1+c consumer c: setmaxnreg.inc; W rows [64c, 64c + 64) of the tile: per k-block KSUB x 4 wgmma
 *                m64nNXk16 (bf16) / m64nNXk8 (tf32), one group in flight (wait_group 1), releasing the previous stage.
 *                Consumers never synchronise with each other: each one's 64 W rows (a slab) go through the split
 *                handoff and the epilogue on their own (named barrier 1 + c of its 128 threads).
 * CLUSTERS OF 2 (the plan's cluster = 2; two-consumer configurations, one box per stage), two pairings (the plan's
 *   wcast, src/swapab_policy.h mg_sab_wcast):
 *   W MULTICAST (an even number of x tiles, so S = 1; not with mcast = x): the two CTAs of a cluster take ONE W tile and x tiles 2r and
 *     2r + 1 (the unit mapping of clusters of 1: neighbours share their W tile); each loads HALF of the W box (rank 0
 *     rows [0, 64), rank 1 [64, 128): the 64-row W descriptor) by TMA multicast into both CTAs' stage, and its own
 *     whole x box: W's L2 -> SM bytes per CTA halve.
 *   X MULTICAST (one x tile, an odd number, or mcast = x): the two CTAs take W tiles 2q and 2q + 1 against the same
 *     x tile and split; each loads its own W tile and HALF of the x tile (rank 0 rows [0, XH0), rank 1 [XH0, NX)) by
 *     TMA multicast into both CTAs' stage. With several x tiles this pairing measured slower than clusters of 1
 *     (0.72-0.88x against 0.97-1.05x at M = 128-300, runs 80-82: L2 moves 51% more sectors for the same DRAM bytes,
 *     notes/18_small_m.md "Session 13"), hence the W multicast there by default; since the clusters-of-2 producer
 *     left the R2UR form (session 17) it measures +1 to +3% over the W multicast at M = 256-300 with x tiles of
 *     128-152 rows and -8% with 96 (run 105), so mg_options.mcast lets the dispatch table choose. A W tile past N (odd tile count) is zero-filled
 *     by TMA and writes nothing.
 *   Both: a stage is free again when the consumers of BOTH CTAs released it (empty count 4 x consumers x 2; remote
 *   arrive by mapa, default .release.cta semantics: hopper.cuh mg_mbar_arrive_cluster); a cluster barrier after the
 *   barrier init and before exit (every thread) keeps each CTA alive while the peer may still write into it.
 * TWO SLABS PER CONSUMER (bn = 128 x consumers, the w256 rows of the .cfg): each consumer issues two m64 wgmmas per
 *   k-step (its W rows [128c, 128c + 64) and [128c + 64, 128c + 128), the same x box) into two accumulator arrays and
 *   runs the epilogue once per slab: twice the MMA work per barrier and per x byte (cuBLAS's 256 x 152 tile at
 *   M = 600). Never split (the policy), no clusters.
 * WORK. unit u = ((W tile) x xtiles + x tile) x S + split (k-blocks mg_sab_split_range; S = 1 when xtiles > 1: the
 *   policy); CTA b walks units b, b + grid, ... (unit_of). Both roles walk the same units, so the ring's k-iteration
 *   counter `it` stays identical in both.
 * K TAIL. Inside a box TMA zero-fills k >= K in both operands: 0 x 0. With KSUB > 1 boxes per stage, the last
 *   k-block's boxes that lie wholly at k >= K are not loaded (sub_count; the stage's expect_tx counts the others); their
 *   wgmmas read a zero box in shared memory instead (both operands: the stale stage could hold inf, and inf x 0 is
 *   NaN), chosen by a select so that no wgmma sits under a branch.
 * SPLIT-K (S > 1), deterministic: the consumer stores its fp32 accumulators to its slot (slab, split) of the
 *   workspace, and after the consumer's barrier one thread adds 1 to the slab's counter (atom.acq_rel.gpu, whose
 *   release publishes the 128 threads' stores); the one that sees S - 1 is the last: it zeroes the counter for the
 *   next launch and sums the S slots from memory in the fixed order 0 .. S - 1 (its own included), so the bits never
 *   depend on who arrived last; then it runs the epilogue. Nobody waits on anybody: no deadlock whatever the
 *   residency. Slot layout [i][thread]: a warp stores 32 consecutive floats.
 * EPILOGUE (y = acc + b[j] in fp32, bias added per element before any max; W rows >= N and x rows >= M masked out,
 *   they never compete (TMA's zeros could be NaN there: 0 x inf); NaN propagates: max.NaN.f32):
 *   max_dim 1  for each x row i: max over the slab's 64 W rows: over the thread's 2 rows, then over the 8 lanes
 *              holding the same columns (lane bits 4, 3, 2; kernel 4's transpose-reduce on the first NX/32 x 8 of the
 *              thread's NX/4 values: NX/8 + NX/16 + NX/32 shuffles; the plain __shfl_xor 4, 8, 16 for the rest (n152:
 *              6 values); the plain form for all gave n256 a spill), then the 4 warps through smem ->
 *              partial[slab * M + i] (i = xt NX + the tile's row: every x row is in exactly one x tile).
 *   max_dim 0  for each W row j: max over the tile's x rows i < M: over the thread's columns, __shfl_xor 1, 2 ->
 *              partial[xt * N + j] (one partial row per x tile: every W row belongs to exactly one slab).
 * BIAS EARLY. Each consumer thread loads its two W rows' bias before the unit's k-loop, so the load (a DRAM round trip
 *   when cold, ~0.6 us) completes under the stream instead of on the kernel's tail (run 86's per-CTA timeline: the
 *   tail after the last k-block was ~3 us at M <= 64, the epilogue ~0.85 of it); for the same reason the producer's
 *   thread prefetches the descriptors before it initialises the barriers.
 * THE FUSED FINISH (the plan's fused = 1) and THE GRID FINISH (fused = 2): kernels/swapab_finish.cuh. */
#ifndef MG_SWAPAB_KERNEL_CUH
#define MG_SWAPAB_KERNEL_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "hopper.cuh"
#include "mg_kernel.h"
#include "mg_tiles.h"
#include "swapab_finish.cuh"
#include "swapab_policy.h"

namespace mgsab {

template <class E> struct ElemT;
template <> struct ElemT<__nv_bfloat16> {
    static constexpr CUtensorMapDataType kDtype = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    static constexpr bool kTF32 = false;
};
template <> struct ElemT<float> {
    static constexpr CUtensorMapDataType kDtype = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    static constexpr bool kTF32 = true;
};

constexpr int kProducerRegs = 40;

/* One tile configuration: a tile_configs/wgmma_swapab.cfg row (bm = NX, bn = WROWS, bk, stages, consumers, cluster)
 * for element type E, with every size derived from it. */
template <class E, int NX_, int WROWS_, int BK_, int STAGES_, int CONSUMERS_, int CLUSTER_>
struct Cfg {
    using T = E;
    static constexpr bool TF32 = ElemT<E>::kTF32;
    static constexpr CUtensorMapDataType DTYPE = ElemT<E>::kDtype;
    static constexpr int NX = NX_, WROWS = WROWS_, BK = BK_, STAGES = STAGES_, CONSUMERS = CONSUMERS_;
    static constexpr int ELEM = (int)sizeof(E);
    static constexpr int SUB_K = 128 / ELEM;            /* K elements of one 128-byte swizzled row (one box) */
    static constexpr int KSUB = BK / SUB_K;             /* boxes per operand row and stage */
    static constexpr int W_SUB = WROWS * 128, X_SUB = NX * 128;
    static constexpr int W_BYTES = KSUB * W_SUB, X_BYTES = KSUB * X_SUB;
    static constexpr int STAGE_BYTES = W_BYTES + X_BYTES;   /* [W box 0 .. KSUB-1][x box 0 .. KSUB-1] */
    static constexpr int NACC = NX / 2;                 /* fp32 accumulators per slab and consumer thread */
    static constexpr int SPC = WROWS_ / (MG_SAB_SLAB * CONSUMERS_);   /* 64-row W slabs per consumer: 1 or 2 */
    /* KSUB > 1: one zero box (64 rows x 128 B, at least NX rows) that the wgmmas of a box wholly past K read in place
     * of the box (not loaded: K TAIL in the file header) */
    static constexpr int ZERO_BYTES = KSUB > 1 ? (NX > MG_SAB_SLAB ? NX : MG_SAB_SLAB) * 128 : 0;
    static constexpr int RED_BYTES = CONSUMERS * 4 * NX * 4;   /* max_dim 1: per-warp row maxima */
    static constexpr int GCOL_BYTES = WROWS * 4;              /* the grid finish's own rows: the column maxima */
    /* PRODUCER R FORM (clusters of 1, n8 and n16): the producer's TMA loop in per-thread registers (R2UR before each
     * UTMALDG, BSSY / BSYNC around it), the form a non-uniform branch after produce() gives it. Measured against the
     * uniform-datapath form in same-run A/Bs: n8 (M <= 8) 1-2 us faster (runs 111-112; runs 98-99 saw the same as
     * EARLY ZEROS' gain); n16 +1.3 to +2.6% (bf16 max_dim 1, runs 113-114; run 116: +2.0%, max_dim 0 +1.3%), n32
     * -0.2 to +1.1%, n64 -3 to -4%, the two-consumer configurations -13 to -18% (runs 113-114). The suite passed on
     * it in runs 115, 117 and 120 (the GPU suites, 246 s); runs 114 and 119 were killed by their 300-310 s timeouts,
     * on cold machines, 119's during the CPU tests after every GPU test had passed: the suite's time varies by 30%
     * between machines (notes/18_small_m.md, Session 20) */
    static constexpr bool PRODUCER_R_FORM = NX <= 16;
    static constexpr int BAR_BYTES = 2 * STAGES * 8 + 8 + 16 + 8;   /* full, empty, zbar; flags[4]; own_bar */
    static constexpr int SMEM_BYTES =
        1024 /* alignment slack */ + STAGES * STAGE_BYTES + ZERO_BYTES + RED_BYTES + GCOL_BYTES + BAR_BYTES;
    static constexpr int THREADS = 128 * (CONSUMERS + 1);
    static constexpr int CONSUMER_REGS = CONSUMERS == 1 ? 240 : 232;  /* 128*40 + 256*232 = 64512 <= 65536 */
    static constexpr int CLUSTER = CLUSTER_;
    /* cluster 2: rank 0 loads x rows [0, XH0) of the tile, rank 1 rows [XH0, NX), each multicast into both CTAs; a
     * split at a multiple of 8 rows keeps each half on the 128B swizzle's 1024-byte grid */
    static constexpr int XH0 = CLUSTER == 1 ? NX : NX / 2 / 8 * 8, XH1 = NX - XH0;
    /* lane 0 of every consumer warp of every CTA of the cluster releases a stage (the peer multicasts into it) */
    static constexpr int EMPTY_ARRIVALS = 4 * CONSUMERS * CLUSTER;

    static_assert(CLUSTER == 1 || (CLUSTER == 2 && KSUB == 1 && XH0 > 0 && XH1 <= 256),
                  "cluster 2: one 128-byte box per stage (no zero box) and an x tile of two halves");
    static_assert(CONSUMERS == 1 || CONSUMERS == 2, "1 or 2 consumer warpgroups");
    static_assert(WROWS == MG_SAB_SLAB * CONSUMERS * SPC && (SPC == 1 || SPC == 2),
                  "bn (W rows) must be 64 x consumers (one m64 wgmma each) or 128 x consumers (two)");
    static_assert(SPC == 1 || (KSUB == 1 && CLUSTER == 1 && CONSUMERS == 2),
                  "two slabs per consumer: two consumers, one 128-byte box per stage, clusters of 1");
    static_assert(NX == 8 || NX == 16 || NX == 32 || NX == 64 || NX == 96 || NX == 128 || NX == 152 || NX == 192 ||
                      NX == 256,
                  "bm (NX, wgmma's N) must be 8, 16, 32, 64, 96, 128, 152, 192 or 256 (the wrappers below and "
                  "hopper.cuh's)");
    static_assert(BK % SUB_K == 0 && (KSUB == 1 || KSUB == 2 || KSUB == 4),
                  "bk must be 1, 2 or 4 128-byte rows of K (bf16 64/128/256, tf32 32/64/128)");
    static_assert(W_SUB % 1024 == 0 && X_SUB % 1024 == 0, "every box keeps the 1024-byte swizzle alignment");
    static_assert(STAGES >= 2 && STAGES <= 16, "2..16 stages");
    static_assert(SMEM_BYTES <= 227 * 1024, "shared memory budget (227 KiB per CTA on sm_90): fewer stages");
    static_assert(STAGES * STAGE_BYTES >= MG_SAB_FUSE_MAX_N * 4 && RED_BYTES >= CONSUMERS * 4 * 8 + 16,
                  "the fused finish stages N <= MG_SAB_FUSE_MAX_N column maxima in the ring and T / 32 + 2 doubles in red");
};

/* ---- wgmma m64nNk16 (bf16) / m64nNk8 (tf32) for N = 8, 16, 32 (hopper.cuh has 64 .. 256) --------------------- */
#define SAB_WGMMA(NAME, N, NACC, ACC, TYPE, IMM, IA, IB, IP, ...)                                                  \
    __device__ __forceinline__ void NAME(float (&d)[NACC], uint64_t desc_a, uint64_t desc_b) {                      \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #IP ", 0;\n"                                              \
                     "wgmma.mma_async.sync.aligned.m64n" #N TYPE " " ACC ", %" #IA ", %" #IB ", p, " IMM ";\n}\n"   \
                     : __VA_ARGS__                                                                                  \
                     : "l"(desc_a), "l"(desc_b), "r"(1));                                                           \
    }
#define SAB_ACC4 "{%0, %1, %2, %3}"
#define SAB_ACC8 "{%0, %1, %2, %3, %4, %5, %6, %7}"
#define SAB_ACC16 "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}"
#define SAB_OPS4 "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
SAB_WGMMA(wgmma_n8_bf16, 8, 4, SAB_ACC4, "k16.f32.bf16.bf16", "1, 1, 0, 0", 4, 5, 6, SAB_OPS4)
SAB_WGMMA(wgmma_n8_tf32, 8, 4, SAB_ACC4, "k8.f32.tf32.tf32", "1, 1", 4, 5, 6, SAB_OPS4)
SAB_WGMMA(wgmma_n16_bf16, 16, 8, SAB_ACC8, "k16.f32.bf16.bf16", "1, 1, 0, 0", 8, 9, 10, MG_ACC8(0))
SAB_WGMMA(wgmma_n16_tf32, 16, 8, SAB_ACC8, "k8.f32.tf32.tf32", "1, 1", 8, 9, 10, MG_ACC8(0))
SAB_WGMMA(wgmma_n32_bf16, 32, 16, SAB_ACC16, "k16.f32.bf16.bf16", "1, 1, 0, 0", 16, 17, 18, MG_ACC8(0), MG_ACC8(8))
SAB_WGMMA(wgmma_n32_tf32, 32, 16, SAB_ACC16, "k8.f32.tf32.tf32", "1, 1", 16, 17, 18, MG_ACC8(0), MG_ACC8(8))
#undef SAB_WGMMA
#undef SAB_ACC4
#undef SAB_ACC8
#undef SAB_ACC16
#undef SAB_OPS4

/* One k-step: D(64 W rows x N x rows) += A(W, 64 x kstep) B(x, N x kstep)^T, accumulating. */
template <int N, bool TF32>
__device__ __forceinline__ void mma(float (&d)[N / 2], uint64_t da, uint64_t db) {
    if constexpr (N == 8) {
        if constexpr (TF32) wgmma_n8_tf32(d, da, db); else wgmma_n8_bf16(d, da, db);
    } else if constexpr (N == 16) {
        if constexpr (TF32) wgmma_n16_tf32(d, da, db); else wgmma_n16_bf16(d, da, db);
    } else if constexpr (N == 32) {
        if constexpr (TF32) wgmma_n32_tf32(d, da, db); else wgmma_n32_bf16(d, da, db);
    } else if constexpr (TF32) {
        mg_wgmma_tf32<N>(d, da, db, 1);
    } else {
        mg_wgmma_bf16<N>(d, da, db, 1);
    }
}

/* ---- small helpers (the kernel parameters: kernels/swapab_params.cuh; named barriers: kernels/hopper.cuh) ------- */

/* Unit u's W tile, x tile and split (WORK in the file header). Clusters of 2 (ranks u % 2, the grid and the units
 * are even): W multicast (p.wcast) the mapping of clusters of 1, whose neighbours u, u + 1 share a W tile (an even
 * number of x tiles, S = 1); x multicast W tiles 2q and 2q + 1 of the same x tile and split, q = the unit pair. */
struct Unit {
    int t, xt, s;
};
template <int CL> __device__ __forceinline__ Unit unit_of(const Params &p, int u) {
    if constexpr (CL == 2) {
        if (p.wcast) return unit_of<1>(p, u);
    }
    const int q = CL == 1 ? u : u >> 1, per_tile = p.xtiles * p.splits;
    /* one unit per W tile (one x tile, S = 1: every W-stream plan) without the integer divisions, which the producer
     * would otherwise run before its first load (~0.5 us with split_range's, run 93's prologue timeline) */
    if (per_tile == 1) return Unit{q * CL + (CL == 1 ? 0 : (u & 1)), 0, 0};
    const int r = q % per_tile;
    return Unit{(q / per_tile) * CL + (CL == 1 ? 0 : (u & 1)), r / p.splits, r % p.splits};
}

/* Consumer release of stage st: this CTA's empty barrier, and with clusters the peer's too (it multicasts into it). */
template <class C> __device__ __forceinline__ void release_stage(uint64_t *empty, int st) {
    if constexpr (C::CLUSTER == 1) {
        mg_mbar_arrive(&empty[st]);
    } else {
        mg_mbar_arrive_cluster(&empty[st], 0);
        mg_mbar_arrive_cluster(&empty[st], 1);
    }
}

/* The 128-byte boxes of k-block kb that hold any k < K (KSUB but at the last k-block). */
template <class C> __device__ __forceinline__ int sub_count(int k, int kb) {
    const int rem = k - kb * C::BK;
    return rem >= C::BK ? C::KSUB : (rem + C::SUB_K - 1) / C::SUB_K;
}

/* ---- producer ------------------------------------------------------------------------------------------------- */

/* Thread 0 of warpgroup 0 (clusters of 2: its whole warp 0, elect.sync issuing): every unit's k-blocks into the ring
 * (stage it % STAGES, its use it / STAGES: the previous use's release is awaited, none before the first).
 * THE PRODUCER'S FORM. The loop must stay on the uniform datapath (UTMALDG operands in uniform registers): one thread
 * that exits after the loop does (clusters of 1), but one that reconverges with its warpgroup before the cluster
 * barrier did not (every TMA issue went through R2UR from per-thread registers; notes/18_small_m.md "Session 17"),
 * so in clusters of 2 the whole warp runs the loop, warp-uniform, with each TMA and expect_tx issued by elect.sync,
 * as CUTLASS's producers do (run 101: clusters-of-2 plans +5 to +20%). tools/sass_kloop_diff.py counts the loop's
 * R2UR. */
template <class C>
__device__ __forceinline__ void produce(const Params &p, uint8_t *smem, uint64_t *full, uint64_t *empty) {
    int it = 0;
    const int rank = C::CLUSTER == 1 ? 0 : (int)(blockIdx.x % C::CLUSTER);
    /* cluster 2 (the whole warp runs this loop, elect.sync issues): one instruction form for both pairings, each box
     * by a multicast whose mask is both CTAs or this CTA alone */
    const bool wc = p.wcast != 0;
    const uint16_t wmask = wc ? (uint16_t)3 : (uint16_t)(1u << rank), xmask = wc ? (uint16_t)(1u << rank) : (uint16_t)3;
    const int woff = wc ? rank * (C::WROWS / 2) : 0, xoff = !wc && rank == 1 ? C::XH0 : 0;
    const CUtensorMap *xd = !wc && rank == 1 ? &p.x1 : &p.x;
    for (int u = (int)blockIdx.x; u < p.units; u += (int)gridDim.x) {
        const Unit un = unit_of<C::CLUSTER>(p, u);
        int kb0, kb1;
        mg_sab_split_range(p.nk, p.splits, un.s, &kb0, &kb1);
        const int n0 = un.t * C::WROWS, x0 = un.xt * C::NX;
        for (int kb = kb0; kb < kb1; kb++, it++) {
            const int st = it % C::STAGES, use = it / C::STAGES;
            if (use > 0) mg_mbar_wait(&empty[st], (use - 1) & 1);
            uint8_t *sp = smem + st * C::STAGE_BYTES;
            const int ns = C::KSUB == 1 ? 1 : sub_count<C>(p.k, kb);
            /* full boxes count even where TMA zero-fills; boxes wholly past K are not loaded (nor multiplied) */
            if constexpr (C::CLUSTER == 1)
                mg_mbar_arrive_expect_tx(&full[st], (uint32_t)(ns * (C::W_SUB + C::X_SUB)));
            else
                mg_mbar_arrive_expect_tx_elect(&full[st], (uint32_t)(ns * (C::W_SUB + C::X_SUB)));
            for (int j = 0; j < ns; j++) {
                const int kc = kb * C::BK + j * C::SUB_K;
                const int pw = kb * C::KSUB + j;   /* W's panel: its 128-byte column kc .. kc + SUB_K - 1 */
                if constexpr (C::CLUSTER == 1) {
                    mg_tma_load_3d(sp + j * C::W_SUB, &p.w, &full[st], 0, n0, pw);
                    mg_tma_load_2d(sp + C::W_BYTES + j * C::X_SUB, &p.x, &full[st], kc, x0);
                } else {
                    mg_tma_load_3d_multicast_elect(sp + woff * 128, &p.w, &full[st], 0, n0 + woff, pw, wmask);
                    mg_tma_load_2d_multicast_elect(sp + C::W_BYTES + xoff * 128, xd, &full[st], kc, x0 + xoff,
                                                   xmask);
                }
            }
        }
    }
}

/* ---- consumers ------------------------------------------------------------------------------------------------ */

/* One k-iteration of consumer c: wait for the stage, issue its wgmmas (KSUB boxes of 4 k-steps) as one group, then
 * wait until only this group is pending and release the previous stage (from the unit's second k-block on). A box
 * wholly past K (only in the last k-block, KSUB > 1) was not loaded: its wgmmas read the zero box instead (a select,
 * not a branch: a wgmma under a branch is serialised by ptxas, C7520). */
template <class C>
__device__ __forceinline__ void kiter(float (&acc)[C::SPC][C::NACC], uint8_t *smem, const uint8_t *zero,
                                      uint64_t *full, uint64_t *empty, int it, bool first, int c, int lane, int ns) {
    const int st = it % C::STAGES;
    mg_mbar_wait(&full[st], (it / C::STAGES) & 1);
    const uint8_t *sp = smem + st * C::STAGE_BYTES;
    mg_wgmma_fence();
#pragma unroll
    for (int j = 0; j < C::KSUB; j++) {
        const bool in = C::KSUB == 1 || j < ns;
        /* my W rows: slab q of mine is rows (c SPC + q) 64 of the tile */
        const uint64_t da = mg_make_desc_k128(in ? sp + j * C::W_SUB + c * C::SPC * MG_SAB_SLAB * 128 : zero);
        const uint64_t db = mg_make_desc_k128(in ? sp + C::W_BYTES + j * C::X_SUB : zero);
#pragma unroll
        for (int ks = 0; ks < 4; ks++)
#pragma unroll
            for (int q = 0; q < C::SPC; q++)
                mma<C::NX, C::TF32>(acc[q], mg_desc_advance(da, q * MG_SAB_SLAB * 128 + ks * 32),
                                    mg_desc_advance(db, ks * 32));
    }
    mg_wgmma_commit();
    if (!first) {
        mg_wgmma_wait<1>();
        if (lane == 0) release_stage<C>(empty, (it - 1) % C::STAGES);
    }
}

/* The k-blocks [kb0, kb1) of one unit; returns the k-iteration counter after them. */
template <class C>
__device__ __forceinline__ int kloop(float (&acc)[C::SPC][C::NACC], const Params &p, uint8_t *smem, const uint8_t *zero,
                                     uint64_t *full, uint64_t *empty, int it, int kb0, int kb1, int c, int lane) {
    for (int kb = kb0; kb < kb1; kb++, it++)
        kiter<C>(acc, smem, zero, full, empty, it, kb == kb0, c, lane, C::KSUB == 1 ? 1 : sub_count<C>(p.k, kb));
    return it;
}

/* The named barriers (1 + c, 128 threads) that split_reduce and max_dim 1's epilogue each pass: a consumer that skips
 * either passes as many itself (the kernel's unit loop), so that all reach the fused finish's flag having passed the
 * same number (racecheck: THE FLAG in the kernel). Keep them equal to the barrier counts of the two functions. */
constexpr int kHandoffBars = 2, kEpilogueBarsMd1 = 2;

/* Split-K handoff of consumer c's slab (S > 1): store the accumulators to slot s, count the arrival; the last of the
 * S splits zeroes the counter and sums the S slots in order 0 .. S - 1 into acc (returns true: it runs the epilogue);
 * the others return false. */
template <class C>
__device__ __forceinline__ bool split_reduce(float (&acc)[C::NACC], const Params &p, int slab, int s, int c, int tid,
                                             int *flags) {
    constexpr int SLOT = C::NACC * 128;   /* = 64 x NX floats */
    const float *base = p.slots + (size_t)slab * p.splits * SLOT + tid;
    float *mine = p.slots + ((size_t)slab * p.splits + s) * SLOT + tid;
#pragma unroll
    for (int i = 0; i < C::NACC; i++) __stcg(mine + i * 128, acc[i]);
    /* the 128 threads' stores, ordered by the barrier, are released GPU-wide by tid 0's acq_rel atomic (cumulative,
     * as THE FUSED FINISH's arrival) */
    mg_named_bar_sync(1 + c, 128);
    if (tid == 0) {
        const int last = atom_add_acq_rel_gpu(&p.count[slab], 1) == p.splits - 1;
        if (last) p.count[slab] = 0;    /* every split has arrived: nothing reads it again in this launch */
        flags[c] = last;
    }
    mg_named_bar_sync(1 + c, 128);         /* the flag, and the acquire above orders the slot reads below */
    /* a vote, not a plain test of the shared flag: ptxas then knows the branch is warp-uniform and keeps the k-loop
     * free of WARPSYNCs (a branch it cannot prove uniform put one before every wgmma group) */
    if (!__all_sync(0xffffffffu, flags[c] != 0)) return false;
#pragma unroll
    for (int i = 0; i < C::NACC; i++) acc[i] = __ldcg(base + i * 128);
    for (int o = 1; o < p.splits; o++) {
        const float *src = base + (size_t)o * SLOT;
#pragma unroll
        for (int i = 0; i < C::NACC; i++) acc[i] += __ldcg(src + i * 128);
    }
    return true;
}

/* The first of this thread's two W rows of a slab (the accumulator layout in the file header); the other is 8 below. */
__device__ __forceinline__ int slab_row0(int slab, int warp, int lane) {
    return slab * MG_SAB_SLAB + warp * 16 + lane / 4;
}

/* The bias of this thread's two W rows of a slab (0 past N). Loaded before the slab's k-loop (BIAS EARLY in the
 * file header): after it, a cold load is a DRAM round trip on the kernel's tail. */
template <class C>
__device__ __forceinline__ float2 slab_bias(const Params &p, int slab, int warp, int lane) {
    const typename C::T *bias = static_cast<const typename C::T *>(p.bias);
    const int j0 = slab_row0(slab, warp, lane), j1 = j0 + 8;
    return make_float2(j0 < p.n ? mg_to_f32(bias[j0]) : 0.f, j1 < p.n ? mg_to_f32(bias[j1]) : 0.f);
}

/* The fused epilogue of consumer c's slab (64 W rows from 64 slab) against x tile xt: bias (bb: slab_bias),
 * masks, NaN-propagating max into the partial maxima (the file header). */
template <class C>
__device__ __forceinline__ void epilogue(const float (&acc)[C::NACC], const Params &p, int slab, int xt, int c,
                                         int warp, int lane, int tid, float *red, float *gcol, float2 bb,
                                         uint64_t *zbar) {
    const int j0 = slab_row0(slab, warp, lane), j1 = j0 + 8;   /* this thread's W rows */
    const bool ok0 = j0 < p.n, ok1 = j1 < p.n;
    const float b0 = bb.x, b1 = bb.y;
    const int x0 = xt * C::NX, M = p.m, mt = p.m - x0;   /* the tile's first x row; its rows < M: i < mt */
    if (p.max_dim == 1) {
        /* v[jj], jj = 2q + e: the max over the thread's two W rows of x row 8q + 2(lane%4) + e */
        constexpr int NV = C::NX / 4;
        float v[NV];
#pragma unroll
        for (int q = 0; q < C::NX / 8; q++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const float y0 = ok0 ? acc[4 * q + e] + b0 : -INFINITY;
                v[2 * q + e] = ok1 ? mg_max_nan(y0, acc[4 * q + 2 + e] + b1) : y0;
            }
        }
        /* max over the 8 lanes sharing lane%4 (lane bits 4, 3, 2: the warp's 16 W rows). The first NT = NV/8 x 8
         * values: the transpose-reduce kernel 4's col_max shares (mg_transpose_max_store, kernels/hopper.cuh),
         * NT/2 + NT/4 + NT/8 shuffles. The NV - NT others (NX not a multiple of 32: n8, n16, n152): three plain
         * shuffles each. */
        constexpr int NT = NV / 8 * 8;
        float *mine = red + (c * 4 + warp) * C::NX;
        if constexpr (NT > 0) mg_transpose_max_store<NT>(v, lane, mine);
#pragma unroll
        for (int jj = NT; jj < NV; jj++) {
            float w = v[jj];
            w = mg_max_nan(w, __shfl_xor_sync(0xffffffffu, w, 4));
            w = mg_max_nan(w, __shfl_xor_sync(0xffffffffu, w, 8));
            w = mg_max_nan(w, __shfl_xor_sync(0xffffffffu, w, 16));
            if (lane < 4) mine[8 * (jj >> 1) + 2 * lane + (jj & 1)] = w;
        }
        mg_named_bar_sync(1 + c, 128);     /* the consumer's 4 warps wrote their maxima */
        const float *cr = red + c * 4 * C::NX;
        for (int i = tid; i < C::NX && i < mt; i += 128) {
            const float m =
                mg_max_nan(mg_max_nan(cr[i], cr[C::NX + i]), mg_max_nan(cr[2 * C::NX + i], cr[3 * C::NX + i]));
            p.partial[(size_t)slab * M + x0 + i] = m;
            if (p.fused == MG_SAB_FUSE_TICKET && !(m - m == 0.f)) row_finish<C>(p, x0 + i, m, zbar);   /* not finite */
        }
        mg_named_bar_sync(1 + c, 128);     /* red is reused by the next unit */
    } else {
        float m0 = -INFINITY, m1 = -INFINITY;
#pragma unroll
        for (int q = 0; q < C::NX / 8; q++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                if (8 * q + 2 * (lane % 4) + e < mt) {   /* x rows >= M: TMA's zero rows, masked */
                    m0 = mg_max_nan(m0, acc[4 * q + e] + b0);
                    m1 = mg_max_nan(m1, acc[4 * q + 2 + e] + b1);
                }
            }
        }
        /* mg_quad_max2's four shuffles, written out: through the helper ptxas schedules this epilogue differently
         * (same length; run 173's library measured this form) */
        m0 = mg_max_nan(m0, __shfl_xor_sync(0xffffffffu, m0, 1));
        m1 = mg_max_nan(m1, __shfl_xor_sync(0xffffffffu, m1, 1));
        m0 = mg_max_nan(m0, __shfl_xor_sync(0xffffffffu, m0, 2));
        m1 = mg_max_nan(m1, __shfl_xor_sync(0xffffffffu, m1, 2));
        if ((lane & 3) == 0) {
            float *row = p.partial + (size_t)xt * p.n;
            if (ok0) row[j0] = m0;
            if (ok1) row[j1] = m1;
            if (p.gown) {   /* THE GRID FINISH's own rows: the tile's column maxima stay in shared memory too */
                gcol[j0 & (C::WROWS - 1)] = m0;
                gcol[j1 & (C::WROWS - 1)] = m1;
            }
            if (p.fused == MG_SAB_FUSE_LAST) {   /* the last CTA's max_dim 0 (the grid finish reads the partial rows) */
                if (ok0) atomicMax(p.fin + j0, col_key(m0));
                if (ok1) atomicMax(p.fin + j1, col_key(m1));
            }
        }
    }
}

/* ---- the kernel ----------------------------------------------------------------------------------------------- */
template <class C>
__global__ void __launch_bounds__(C::THREADS, 1) swapab_kernel(const __grid_constant__ Params p) {
    extern __shared__ uint8_t smem_raw[];
    /* the 128B swizzle pattern repeats every 1024 bytes and the descriptors assume tile bases on that grid */
    uint8_t *smem = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    uint8_t *zero = smem + C::STAGES * C::STAGE_BYTES;   /* 1024-aligned: STAGE_BYTES is a multiple of 1024 */
    float *red = reinterpret_cast<float *>(zero + C::ZERO_BYTES);
    float *gcol = red + C::RED_BYTES / 4;   /* THE GRID FINISH's own rows (gown) */
    uint64_t *full = reinterpret_cast<uint64_t *>(zero + C::ZERO_BYTES + C::RED_BYTES + C::GCOL_BYTES);
    uint64_t *empty = full + C::STAGES;
    uint64_t *zbar = empty + C::STAGES;   /* max_dim 1: this launch's zeros are written; max_dim 0: its tag is read */
    /* flags: [c] consumer c's split handoff, [2] the last CTA (max_dim 0's fused finish, THE FLAG), [3] the grid
     * finish's tag (launch_tag, swapab_finish.cuh); then own_bar (zbar + 3: THE POLLER) */
    int *flags = reinterpret_cast<int *>(zbar + 1);
    /* the warpgroup index through __shfl_sync: ptxas then knows it is warp-uniform, so the consumer index c below is
     * uniform and two-consumer k-loops keep their descriptor arithmetic on the uniform datapath (no R2UR per
     * k-block; notes/18_small_m.md, "Session 23"; run 123: bf16 max_dim 1 M > 64 +3.1%, the rest +0-1%) */
    const int wg = __shfl_sync(0xffffffffu, (int)threadIdx.x / 128, 0), tid = (int)threadIdx.x % 128;

    if (threadIdx.x == 0) {
        /* the producer's thread: the descriptors' first fetch starts before anything else (a DRAM round trip when
         * cold) */
        if (p.nk > 0) {
            mg_tma_prefetch_desc(&p.w);
            mg_tma_prefetch_desc(&p.x);
        }
        for (int s = 0; s < C::STAGES; s++) {
            mg_mbar_init(&full[s], 1);
            mg_mbar_init(&empty[s], C::EMPTY_ARRIVALS);
        }
        mg_mbar_init(zbar, 1);
        mg_mbar_init(own_bar(zbar), 1);   /* THE POLLER (swapab_finish.cuh): after the flags */
        mg_fence_mbarrier_init();
    }
    if constexpr (C::ZERO_BYTES > 0) {
        for (int i = (int)threadIdx.x; i < C::ZERO_BYTES / 16; i += C::THREADS)
            reinterpret_cast<uint4 *>(zero)[i] = make_uint4(0u, 0u, 0u, 0u);
        mg_fence_proxy_async(); /* the wgmmas (async proxy) see the zeros */
    }
    /* the only CTA-wide barrier: roles never synchronise with each other after this (cluster 2: and the peer's
     * barriers are initialised before anything multicasts into them or arrives on them) */
    if constexpr (C::CLUSTER == 1) __syncthreads(); else mg_cluster_sync();
    /* the finalize after this grid may be scheduled now (PDL, kernels/finalize.cu), as kernel 4 does */
    if (threadIdx.x == 0) mg_pdl_trigger();

    if (wg == 0) {
        /* ---------------- producer ---------------- */
        mg_setmaxnreg_dec<kProducerRegs>();
        if constexpr (C::CLUSTER == 1 && C::PRODUCER_R_FORM) {
            if (tid == 0 && p.nk > 0) produce<C>(p, smem, full, empty);
            if (tid == 32 && has_start(p)) fused_start<C>(p, zbar);
            if (tid / 32 == 2 && p.fused == MG_SAB_FUSE_GRID)   /* THE POLLER (swapab_finish.cuh) */
                grid_poll<C>(p.gslot, p.n, reinterpret_cast<double *>(red), zbar);
            return;
        } else if constexpr (C::CLUSTER == 1) {
            /* warp 1's branch warp-uniform (__shfl_sync tells ptxas so) and before the producer's: the TMA loop stays
             * on the uniform datapath (0-1 R2UR; a tid == 32 branch after produce() made it 13-71, run 98's form) */
            const int pw = __shfl_sync(0xffffffffu, tid / 32, 0);
            if (pw == 1 && has_start(p)) {
                if (tid == 32) fused_start<C>(p, zbar);
                return;
            }
            if (pw == 2 && p.fused == MG_SAB_FUSE_GRID) {   /* THE POLLER (swapab_finish.cuh) */
                grid_poll<C>(p.gslot, p.n, reinterpret_cast<double *>(red), zbar);
                return;
            }
            if (tid == 0 && p.nk > 0) produce<C>(p, smem, full, empty);
            return;
        } else {   /* the whole warp 0 (warp-uniform: __shfl_sync tells ptxas so) */
            if (__shfl_sync(0xffffffffu, tid / 32, 0) == 0 && p.nk > 0) produce<C>(p, smem, full, empty);
        }
        /* max_dim 1's fused finish: warp 1 takes the start ticket (the zeros, zbar: THE START TICKET) */
        if (tid == 32 && p.fused == MG_SAB_FUSE_TICKET) md1_start<C>(p, zbar);
        /* cluster 2: no CTA leaves while its peer may still multicast into it or arrive on its barriers */
        if constexpr (C::CLUSTER == 2) mg_cluster_sync_unaligned();
        return; /* every issued load is consumed by the consumers, which keep the CTA alive */
    }

    /* ---------------- consumers ---------------- */
    mg_setmaxnreg_inc<C::CONSUMER_REGS>();
    const int c = C::CONSUMERS == 1 ? 0 : wg - 1;   /* uniform (wg is): uniform descriptor arithmetic */
    const int warp = tid / 32, lane = tid % 32;
    float acc[C::SPC][C::NACC];
    int it = 0;
    for (int u = (int)blockIdx.x; u < p.units; u += (int)gridDim.x) {
        const Unit un = unit_of<C::CLUSTER>(p, u);
        int kb0, kb1;
        mg_sab_split_range(p.nk, p.splits, un.s, &kb0, &kb1);
#pragma unroll
        for (int q = 0; q < C::SPC; q++) {
#pragma unroll
            for (int i = 0; i < C::NACC; i++) acc[q][i] = 0.f;
            mg_fence_acc(acc[q]); /* the zeros are materialised before the wgmma.fence of the first k-iteration */
        }
        float2 bias[C::SPC];   /* BIAS EARLY: the loads are in flight under the k-loop */
#pragma unroll
        for (int q = 0; q < C::SPC; q++) bias[q] = slab_bias<C>(p, (un.t * C::CONSUMERS + c) * C::SPC + q, warp, lane);
        it = kloop<C>(acc, p, smem, zero, full, empty, it, kb0, kb1, c, lane);
        mg_wgmma_wait<0>();
#pragma unroll
        for (int q = 0; q < C::SPC; q++) mg_fence_acc(acc[q]); /* no accumulator read may be hoisted above the wait */
        if (kb1 > kb0 && lane == 0) release_stage<C>(empty, (it - 1) % C::STAGES);
#pragma unroll
        for (int q = 0; q < C::SPC; q++) {
            const int slab = (un.t * C::CONSUMERS + c) * C::SPC + q;
            /* every consumer passes the same named barriers per slab, whatever it skips: the split handoff's two
             * (S > 1) and max_dim 1's epilogue's two, so that all reach the fused finish's flag having passed the
             * same number (racecheck: THE FLAG below) */
            const int handoff_bars = C::SPC == 1 && p.splits > 1 ? kHandoffBars : 0,
                      epi_bars = p.max_dim == 1 ? kEpilogueBarsMd1 : 0;
            /* rows wholly past N: nothing to write (a vote: warp-uniform for ptxas, as in split_reduce) */
            if (__all_sync(0xffffffffu, slab * MG_SAB_SLAB >= p.n)) {
                for (int b = 0; b < handoff_bars + epi_bars; b++) mg_named_bar_sync(1 + c, 128);
                continue;
            }
            if constexpr (C::SPC == 1) {   /* two slabs per consumer never split K (the policy) */
                if (p.splits > 1 && !split_reduce<C>(acc[q], p, slab, un.s, c, tid, flags)) {
                    for (int b = 0; b < epi_bars; b++) mg_named_bar_sync(1 + c, 128);   /* not the last split */
                    continue;
                }
            }
            epilogue<C>(acc[q], p, slab, un.xt, c, warp, lane, tid, red, gcol, bias[q], zbar);
        }
    }
    if (p.fused == MG_SAB_FUSE_GRID) {
        grid_finish<C>(grid_args(p), (int)threadIdx.x - 128, reinterpret_cast<double *>(red), gcol, zbar);   /* THE GRID FINISH */
    } else if (p.fused == MG_SAB_FUSE_LAST) {
        /* THE FUSED FINISH of max_dim 0: this CTA's partial rows and atomics are visible GPU-wide before it counts
         * itself done: the consumers' barrier, then one thread's release, the done counter's atom.acq_rel.gpu
         * (cumulative over what the barrier ordered before it; CUTLASS's generic barrier arrives the same way,
         * fence.acq_rel then a relaxed red). No __threadfence before it: that is fence.sc.gpu, a second GPU membar.
         * (max_dim 1 has no arrival: THE START TICKET.) */
        constexpr int T = 128 * C::CONSUMERS;
        const int t = (int)threadIdx.x - 128;
        mg_named_bar_sync(3, T);
        if (t == 0) {
            const int last = atom_add_acq_rel_gpu(p.done, 1) == (int)gridDim.x - 1;
            if (last) *p.done = 0;   /* every CTA has arrived: nothing reads it again in this launch */
            flags[2] = last;
        }
        /* THE FLAG; the acquire above orders the last CTA's reads of fin below. Barrier 3 orders the store before the
         * loads for all 256 threads. compute-sanitizer's racecheck reported this store and the loads as a hazard
         * (runs 75-76) in CTAs whose second consumer's slab lies wholly past N, until that consumer passed its
         * epilogue's named barriers like the other (the loop above): racecheck orders threads by the barriers each
         * has passed. Clean since (run 77: the same shapes; run 80: every kernel); the same pattern through the
         * split handoff (a past-N slab beside a split one, run 83) is clean since every consumer passes the
         * handoff's barriers too (run 84: racecheck 0 hazards, sanitize.sh 356/356). */
        mg_named_bar_sync(3, T);
        if (__all_sync(0xffffffffu, flags[2] != 0))   /* a vote: warp-uniform for ptxas (split_reduce's reason) */
            finish<C>(p, t, reinterpret_cast<float *>(smem), reinterpret_cast<double *>(red));
    }
    if constexpr (C::CLUSTER == 2) mg_cluster_sync_unaligned();   /* the producer's reason, for the consumers */
}

}  // namespace mgsab

#endif /* MG_SWAPAB_KERNEL_CUH */
