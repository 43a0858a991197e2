/* wgmma_ws.cuh: the warp-specialized, persistent wgmma GEMM + fused bias/max epilogue, as ONE template that
 * kernel 4 (kernels/04_wgmma_ws.cu: tf32, bf16) and kernel 6 (kernels/06_wgmma_bf16x3.cu: fp32 via bf16x3)
 * instantiate. Design notes and measurements: notes/04_wgmma_ws.md, notes/05_06_split.md.
 *
 * ROLES (384 threads = 3 warpgroups for CONSUMERS = 2; __launch_bounds__(THREADS, 1) so setmaxnreg applies)
 *   warpgroup 0  producer: setmaxnreg.dec to 40 registers; ONE thread issues every TMA load; the other 127 exit.
 *   warpgroup 1+c consumer c (c < CONSUMERS): setmaxnreg.inc to 232; owns rows [64c, 64c + 64) of the BM x BN
 *                tile: one m64nBNk wgmma per k-step into BN/2 fp32 accumulators per thread (128 at BN = 256).
 * PIPELINE: a ring of STAGES shared-memory stages, each holding the A (x) tile BM x BK and the B (W) tile
 *   BN x BK (kernel 6: A_hi, A_lo, B_hi, B_lo), K-major, swizzled (128B when BK * elem = 128, 64B when 64).
 *   full[s]  count 1:  the producer's arrive.expect_tx(stage bytes) + the TMA transaction bytes complete it.
 *   empty[s] count 4 * CONSUMERS: lane 0 of every consumer WARP arrives once its wgmmas reading s completed
 *            (per-warp arrivals are correct whatever a warp's wgmma.wait_group covers; CUTLASS does the same).
 *   Every role walks the same global k-iteration counter `it` (continuing across tiles): stage s = it % STAGES,
 *   use u = it / STAGES; consumers wait full[s] for parity u & 1; the producer skips the wait on the first use
 *   of a stage and otherwise waits empty[s] for parity (u - 1) & 1 (the release of the previous use).
 *   Consumers keep ONE wgmma group in flight (wait_group 1) and release the previous stage, so the tensor core
 *   never drains between k-iterations; the tile's last stage is released after wait_group 0.
 * PERSISTENT GRID: min(num_sms, tiles) CTAs; CTA b takes tiles b, b + grid, ... in a grouped order: tiles come
 *   in groups of kGroupM M-tiles; inside a group the M index runs fastest, then N. At the headline (8 M-tiles,
 *   32 N-tiles) that is all 8 M-tiles of one W panel next to each other, so a 256-row W panel (the big operand:
 *   128 MiB bf16 / 256 MiB fp32, larger than the 50 MB L2) is fetched from DRAM about once and reused by 8
 *   CTAs that stream it at the same time, while all of x (16-32 MiB) stays hot in L2. Large M: groups of 16
 *   M-tiles bound the x working set.
 *   The producer runs ahead into the next tile as soon as stages free up, so tile t's epilogue overlaps tile
 *   t+1's loads.
 * EPILOGUE (per consumer, registers + shuffles; y is never written): y = acc + b[col] in fp32; rows >= M and
 *   columns >= N are masked out (never compete), NaN propagates (max.NaN.f32, mg_nanmaxf's contract). Tiles wholly
 *   inside N load the bias in pairs; the column loops have compile-time bounds per panel width (finish_tile).
 *   max_dim 1: thread max over its 2 rows x BN/4 columns, __shfl_xor 1, 2 over the quad ->
 *              partial[tile_n * M + row]   (partial rows = column tiles: cdiv(N, BN))
 *   max_dim 0: per column, max over the thread's 2 rows, a transpose-reduce butterfly over lane bits 4, 3, 2
 *              (16 rows of the warp; 56 shuffles per thread), then across the consumer's 4 warps through smem (named barrier of the consumer's 128 threads) ->
 *              partial[slab * N + col], slab = the consumer's 64-row block index = row / 64
 *              (partial rows = cdiv(M, 64)). Consumers never wait for each other.
 * CLUSTERS (tile config `cluster` 2; cluster 1 is the design above, unchanged): 2 CTAs along M share the N tile.
 *   Launched with cudaLaunchKernelEx + cudaLaunchAttributeClusterDimension {2,1,1}; the persistent grid is
 *   min(cudaOccupancyMaxActiveClusters, units) clusters; a UNIT is a pair of vertically adjacent tiles
 *   (tm = 2 um + rank, same tn), walked by both CTAs in the same grouped order (groups of kGroupM/2 unit rows),
 *   so the k-iteration counter `it` (stage, use, parity) is identical in both CTAs at every step.
 *   Loads: each producer loads its own A tile (plain TMA) and HALF of the B tile, rows [rank BN/2, rank BN/2 +
 *   BN/2), multicast (ctaMask 0b11) to the same smem offset in both CTAs. L2->SM bytes per CTA-stage: A + B/2.
 *   full[s]  count 1, expect_tx = STAGE_BYTES (own A + own B half + the peer's B half, all land here).
 *   empty[s] count 4 * CONSUMERS * 2: every consumer warp of BOTH CTAs arrives on both CTAs' empty[s]
 *            (mapa + mbarrier.arrive.shared::cluster, default .release.cta semantics); the producer waits it
 *            with a plain try_wait (acquire.cta). NOT .release.cluster / .acquire.cluster: those compile to a
 *            MEMBAR.ALL.GPU per arrive / a CCTL.IVALL per wait, and the fence on the consumers' path cost 1.83x
 *            (notes/04_wgmma_ws.md, "Cluster 2: the 1.83x"); CUTLASS's PipelineTmaAsync uses the plain forms.
 *   Why the phases stay clean: CTA X's full[s] use u needs the multicast of use u from BOTH producers, and a
 *   producer issues use u only after its own empty[s] completed use u-1, i.e. after all 16 consumer warps of
 *   the cluster released use u-1. Hence (1) no consumer arrives for use u on any empty barrier before both have
 *   completed use u-1 (no arrival can leak into the wrong phase), (2) no TMA (local or multicast) overwrites a
 *   stage any consumer still reads, (3) a peer's complete_tx for use u reaches X's full[s] only after X's
 *   consumers saw use u-1 complete (it may precede X's own expect_tx: tx-count goes transiently negative while
 *   X's pending arrival keeps the phase open). Property (1) needs EVERY producer to contribute to EVERY full
 *   barrier in EVERY k-iteration, so no box is ever skipped: a tile wholly below M (rank 1 of the last unit row
 *   when tiles_m is odd: M = 127 (1 M-tile), M = 1100 (9); M = 1000 has 8, no such tile) re-reads the x rows
 *   of M-tile 0, and a W half wholly past N re-reads the tile's first half (so no box ever lies wholly outside
 *   its tensor); both only feed accumulators that the epilogue masks (rows >= M, columns >= N).
 *   Start: cluster barrier after mbarrier init (peers must not signal uninitialised barriers). End: cluster
 *   barrier by every thread (the producer warpgroup no longer returns early): a CTA may not exit while its
 *   peer's consumers can still arrive on its empty barriers. K = 0: no loads, no waits, no arrivals; both CTAs
 *   run the epilogue on zeros and meet at the final cluster barrier.
 * SCHEME kBF16x3RS (kernel 6's default): each stage holds ONE fp32 A tile (BM x 32 fp32 = 128-byte rows, 128B
 *   swizzle) and the W hi / lo tiles (bf16, 64-byte rows, 64B swizzle): 16 + 2 x 16 KiB = 48 KiB. A consumer
 *   thread reads its A fragment rows with four 16-byte shared loads per stage (conflict-free, thanks to a K
 *   permutation of W made once in prepare: see "THE K PERMUTATION" below), splits x into bf16 hi/lo in
 *   registers (the rules of kernels/split.cu) and issues 6 register-A wgmma (m64nBNk16, 2 k16 steps x lo*hi,
 *   hi*lo, hi*hi). Two register sets of A fragments alternate between k-iterations, so keeping one wgmma group in
 *   flight never rewrites registers that a pending wgmma reads. Barriers, phases, clusters, epilogue: unchanged.
 * STREAM-K (cluster 1; notes/04_wgmma_ws.md "Stream-K"): the kernel can run the first dp_tiles tiles whole and
 *   split the R = sk_tiles tiles after them into G = num_sms equal contiguous ranges of k-iterations, one per
 *   CTA, in tile order. The launcher uses it only for small problems, T <= G / 2 tiles (dp_tiles = 0): whole
 *   tiles would leave more than half the SMs idle (M <= 256 at N = 8192, where W streaming is the cost). A
 *   tail of a larger problem is NOT split: measured 11-47% slower at the headline (the tiles that share a W
 *   panel lose the lockstep that lets the L2 serve the panel once). A range covers at most two tiles: the end of one
 *   (a non-head segment, starting at kb > 0) and the start of the next (a head segment, from kb = 0). Each CTA
 *   does its non-head segment first and stores its fp32 accumulators to its slot of the stream-K workspace,
 *   then raises its flag (fence, then the flag). The CTA whose range holds a tile's first k-iteration owns the
 *   tile: after its head segment it waits for the flags of the CTAs that covered the rest of the tile (they
 *   did that work first, so nobody waits on a waiter: no chain, no deadlock with every CTA resident), adds their
 *   accumulators in CTA order (a fixed order: bitwise deterministic), resets the flags to 0 for the next launch
 *   and runs the epilogue. Used when R * num_k >= 4 G (otherwise the ranges are too short to pay) and the plan's
 *   workspace holds the slots; MG_WS_STREAMK=0 turns it off (A/B timing).
 * MIXED PANELS (kernel 4's smem-operand schemes at BN 256, cluster 1 or 2): the persistent grid runs each CTA's tiles
 *   back to back, so a launch lasts about (tiles per CTA) x (panel width). 256 tiles of 256 columns on 132 SMs
 *   leave the second wave 8 tiles short: every CTA still does 2 x 256 columns. With one panel more (33 at the
 *   headline), nw of them 256 wide and the rest 248 (wgmma m64n248, into the first 124 of the 128 accumulators),
 *   there are 264 tiles, exactly 2 per SM, and a CTA does 248 + 248 (8 of them 256 + 248) columns: 1.6% less.
 *   The launcher (choose_panels) takes it only where its wave estimate is lower and the narrow panels fit N;
 *   MG_WS_MIXED=0 / 1 turns it off / forces it. A narrow panel still loads a 256-row W box (its last 8 rows belong
 *   to the next panel and feed only accumulators its n248 wgmma never touches). max_dim 1 writes one partial row
 *   per panel (partial_rows counts one more than cdiv(N, BN)). Stream-K launches keep uniform panels. With clusters
 *   of 2 the unit is a pair of vertically adjacent tiles of one panel: 4 unit rows x 33 panels = 132 units on 66
 *   clusters at the headline, and each CTA's multicast half of the W box is 128 rows as before (a narrow panel's
 *   second half ends 8 rows into the next panel, as the 256-row box does with cluster 1).
 * REMAINDER SPLIT (MIXED, cluster 1, max_dim 1; src/ws_policy.h mg_ws_rem_chunks): where the mixed panels take exactly
 *   one wide panel (N = 248 tiles_n + r, 0 < r <= 8; the headline: 33 panels, r = 8), the 8 CTAs that run it still do
 *   504 columns against 496. Instead every panel is 248 wide (nw = 0) and the r columns left over are split along K:
 *   the tiles of panel j < chunks (16 at the headline, each row unit's first 16 tiles) also compute k-chunk j of them
 *   (mg_ws_rem_range: an even split of the k-blocks). For those k-blocks the producer adds an 8-row W box (p.brem,
 *   W rows [rem_n0, rem_n0 + 8)) behind the panel's 248 rows, which now come in a 248-row box (b[0]) so that no two
 *   TMA boxes write the same rows; the consumers issue m64n256 instead of m64n248 there (the same 128 accumulators:
 *   the last 4 per thread, zeroed with the tile, gather the remainder columns), and the epilogue stores those 4
 *   values of its valid rows as chunk j of rem ([chunk][column][row] floats, chunk 0 with the bias added). The
 *   finalize (mg_finalize_rem, via mg_launch_args::rem) sums each column's chunks in ascending order (fixed:
 *   deterministic) and folds the sums into the row maxima; NaN and inf propagate through the sum as through one
 *   accumulator (inf + -inf = NaN either way). Not for max_dim 0: the column maxima of the r columns would need the
 *   sums first, a column reduction over M x chunks. Run 40: bf16 max_dim 1 0.1742 -> 0.1733 ms, tf32 0.3312 ->
 *   0.3280 (the kernel alone 1.3 / 2.7 us faster, the finalize 0.4 us slower); MG_WS_RSPLIT=0 turns it off.
 * ODD SHAPES: TMA zero-fills out-of-bounds boxes (M, N and K tails), except that a last row of tiles sticking out
 *   past M (M >= BM) is moved up inside M (tile_row0: mostly out-of-bounds boxes slow the TMA; its rows that belong
 *   to the tile above are masked); the launchers pad K so that rows are 16-byte
 *   multiples (TMA's stride rule); K = 0 gives zero k-iterations: the producer issues nothing and the consumers
 *   run the epilogue on zero accumulators (y = b), so nothing waits on a barrier that never completes.
 */
#ifndef MG_WGMMA_WS_CUH
#define MG_WGMMA_WS_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>

#include <atomic>
#include <type_traits>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hopper.cuh"
#include "mg_kernel.h"
#include "mg_tiles.h"
#include "ws_policy.h"

namespace mgws {

enum class Scheme : int {
    kTF32 = 0,   /* fp32 operands, tf32 wgmma (m64nNk8), float bias */
    kBF16 = 1,   /* bf16 operands, bf16 wgmma (m64nNk16), bf16 bias */
    kBF16x3 = 2, /* fp32 mode: bf16 hi/lo operands, 3 bf16 wgmma per k-step, float bias */
    kBF16x3RS = 3, /* fp32 mode: fp32 x tile split to bf16 hi/lo in registers (A from registers), W hi/lo tiles
                    * (prepared with the K permutation of wgmma_ws.cuh "SCHEME kBF16x3RS"), 3 wgmma per k-step */
};

/* Per scheme: element bytes, parts (tiles per stage) and TMA data type of A (x) and B (W), and whether A
 * reaches the tensor core from registers (kRegA). The uniform schemes (A and B alike) also keep the plain names
 * kElem / kParts / kDtype, which the helpers that treat A and B alike (padded_k, make_map) use. */
template <Scheme S> struct SchemeT;
template <int ELEM, int PARTS, CUtensorMapDataType DT> struct UniformScheme {
    static constexpr int kElem = ELEM, kParts = PARTS;
    static constexpr CUtensorMapDataType kDtype = DT;
    static constexpr int kElemA = ELEM, kElemB = ELEM, kPartsA = PARTS, kPartsB = PARTS;
    static constexpr CUtensorMapDataType kDtypeA = DT, kDtypeB = DT;
    static constexpr bool kRegA = false;
};
template <> struct SchemeT<Scheme::kTF32> : UniformScheme<4, 1, CU_TENSOR_MAP_DATA_TYPE_FLOAT32> {
    using Bias = float;
};
template <> struct SchemeT<Scheme::kBF16> : UniformScheme<2, 1, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16> {
    using Bias = __nv_bfloat16;
};
template <> struct SchemeT<Scheme::kBF16x3> : UniformScheme<2, 2, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16> {
    /* part 0 = hi, part 1 = lo */
    using Bias = float;
};
template <> struct SchemeT<Scheme::kBF16x3RS> {
    /* A: ONE fp32 tile (x as the caller gave it); B: W hi (part 0) and W lo (part 1), bf16, K-permuted. */
    static constexpr int kElemA = 4, kElemB = 2, kPartsA = 1, kPartsB = 2;
    static constexpr CUtensorMapDataType kDtypeA = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    static constexpr CUtensorMapDataType kDtypeB = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    static constexpr bool kRegA = true;
    using Bias = float;
};

constexpr int kGroupM = 16;          /* M-tiles per scheduler group (see the header) */
constexpr int kProducerRegs = 40;    /* the producer only needs addresses and loop counters */

/* Diagnostic switches (cluster 2 only; the cluster 1 code never reads them, its SASS is the same with or without
 * them). They exist so that ONE short tune run on the H200 can attribute the 1.83x that the first cluster-2
 * version measured (notes/04_wgmma_ws.md, "Cluster 2: the 1.83x"); variants tune/c2_diag_rel, tune/c2_diag_nomc:
 *   MG_WS_DIAG_REL_CLUSTER=1   consumers release stages with mbarrier.arrive.release.cluster, exactly as the first
 *                              version did (ptxas: MEMBAR.ALL.CTA + MEMBAR.ALL.GPU + ERRBAR + CGAERRBAR before each
 *                              of a warp's 2 arrives, every k-iteration): the cause named in the notes.
 *   MG_WS_DIAG_NO_MULTICAST=1  cluster launch, grid, unit walk and cluster barriers as cluster 2, but NO data or
 *                              barrier sharing: each CTA loads its whole W tile itself (both halves, plain TMA) and
 *                              its consumers release only their own CTA's stages (empty count 4 x CONSUMERS).
 *                              Separates "the cluster launch / co-scheduling itself" from "the multicast protocol". */
#ifndef MG_WS_DIAG_REL_CLUSTER
#define MG_WS_DIAG_REL_CLUSTER 0
#endif
#ifndef MG_WS_DIAG_NO_MULTICAST
#define MG_WS_DIAG_NO_MULTICAST 0
#endif

template <Scheme S_, int BM_, int BN_, int BK_, int STAGES_, int CONSUMERS_, int CLUSTER_>
struct Cfg {
    static constexpr Scheme S = S_;
    using T = SchemeT<S_>;
    static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, CONSUMERS = CONSUMERS_;
    static constexpr int CLUSTER = CLUSTER_;
    static constexpr int A_PARTS = T::kPartsA, B_PARTS = T::kPartsB;
    static constexpr int MAX_PARTS = A_PARTS > B_PARTS ? A_PARTS : B_PARTS;
    static constexpr int THREADS = 128 * (CONSUMERS + 1);
    static constexpr int A_ROW_BYTES = BK * T::kElemA;        /* one smem row = BK elements of K */
    static constexpr int B_ROW_BYTES = BK * T::kElemB;
    static constexpr int KSTEPS = B_ROW_BYTES / 32;           /* a wgmma k-step reads 32 bytes of K (of B) */
    static constexpr int A_BYTES = BM * A_ROW_BYTES;          /* one A tile (per part) */
    static constexpr int B_BYTES = BN * B_ROW_BYTES;          /* one B tile (per part) */
    static constexpr int STAGE_BYTES = A_PARTS * A_BYTES + B_PARTS * B_BYTES;
    static constexpr int RED_BYTES = CONSUMERS * 4 * BN * 4;  /* max_dim 0 cross-warp scratch */
    static constexpr int BAR_BYTES = 2 * STAGES * 8;
    static constexpr int SMEM_BYTES = 1024 /* alignment slack */ + STAGES * STAGE_BYTES + RED_BYTES + BAR_BYTES;
    static constexpr int CONSUMER_REGS = CONSUMERS == 1 ? 240 : 232;  /* 128*40 + 256*232 = 64512 <= 65536 */
    static constexpr int SLAB = 64;                           /* rows per consumer */
    static constexpr CUtensorMapSwizzle SWIZZLE_A =
        A_ROW_BYTES == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    static constexpr CUtensorMapSwizzle SWIZZLE_B =
        B_ROW_BYTES == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;

    static_assert(CONSUMERS == 1 || CONSUMERS == 2, "1 or 2 consumer warpgroups");
    static_assert(BM == 64 * CONSUMERS, "each consumer warpgroup owns exactly 64 rows (one m64 wgmma)");
    static_assert(BN % 64 == 0 && BN >= 64 && BN <= 256, "wgmma N: 64, 128, 192 or 256 (hopper.cuh wrappers)");
    static_assert((A_ROW_BYTES == 128 || A_ROW_BYTES == 64) && (B_ROW_BYTES == 128 || B_ROW_BYTES == 64),
                  "a smem row is 128 B (128B swizzle) or 64 B (64B swizzle)");
    static_assert(!T::kRegA || (BK == 32 && A_ROW_BYTES == 128 && B_ROW_BYTES == 64 && KSTEPS == 2),
                  "kBF16x3RS: bk must be 32 (fp32 A rows of 128 B with the 128B swizzle, bf16 W rows of 64 B, two "
                  "k16 steps: the register-fragment loads and the W K-permutation assume exactly this)");
    static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "tiles must keep 1024-byte alignment");
    static_assert(STAGES >= 2 && STAGES <= 8, "2..8 stages");
    static_assert(SMEM_BYTES <= 227 * 1024, "shared memory budget (227 KiB per CTA on sm_90)");
    /* Clusters of CLUSTER CTAs along M share one N tile: CTA rank r loads the B rows
     * [r * BN / CLUSTER, (r + 1) * BN / CLUSTER) of the tile and multicasts them to every CTA of the cluster. */
    static constexpr int B_BOX_ROWS = BN / CLUSTER;           /* rows of one W TMA box (the W descriptor's box) */
    static constexpr int B_SLICE_BYTES = B_BOX_ROWS * B_ROW_BYTES;
    /* W slices multicast to every CTA of the cluster (false for cluster 1 and for the no-multicast diagnostic). */
    static constexpr bool MULTICAST = CLUSTER > 1 && !MG_WS_DIAG_NO_MULTICAST;
    /* Mixed-width panels ("MIXED PANELS" in the header): BN-wide and (BN - 8)-wide column panels in one grid.
     * The smem-operand schemes of kernel 4 at BN 256 (kernel 6's register-A wgmma has no n248 form). */
    static constexpr bool MIXED = BN == 256 && (S == Scheme::kTF32 || S == Scheme::kBF16);
    static constexpr int BN_NARROW = BN - 8;
    /* Remainder split (MIXED, cluster 1): the 8 W rows a chunk's stage adds behind a narrow panel's BN - 8 rows. */
    static constexpr bool REM_SPLIT = MIXED && CLUSTER == 1;
    static constexpr int REM_BYTES = (BN - BN_NARROW) * B_ROW_BYTES;
    static_assert(!REM_SPLIT || (BN_NARROW * B_ROW_BYTES) % (B_ROW_BYTES * 8) == 0,
                  "the remainder rows start on a swizzle atom (8 rows) of the B tile");
    /* every consumer warp of every CTA that this CTA's producer multicasts into */
    static constexpr int EMPTY_ARRIVALS = 4 * CONSUMERS * (MULTICAST ? CLUSTER : 1);
    static constexpr int UNIT_GROUP = kGroupM / CLUSTER > 0 ? kGroupM / CLUSTER : 1; /* units per scheduler group */
    static_assert(CLUSTER == 1 || CLUSTER == 2, "cluster 1 or 2 (2 CTAs along M sharing the W tile by TMA multicast)");
    static_assert(BN % CLUSTER == 0 && B_BOX_ROWS <= 256, "a W slice is one TMA box of at most 256 rows");
    static_assert(B_SLICE_BYTES % 1024 == 0,
                  "each multicast W slice must start on a 1024-byte boundary (swizzle atom) inside the B tile");
};

/* Kernel parameters (passed __grid_constant__: TMA needs the descriptors' param-space address). */
struct Params {
    CUtensorMap a[2]; /* x (parts: hi, lo) */
    CUtensorMap b[2]; /* W (parts: hi, lo); with the remainder split, b[0] has (BN - 8)-row boxes */
    CUtensorMap brem; /* remainder split: W rows [rem_n0, rem_n0 + 8), 8-row boxes (unused otherwise) */
    const void *bias;
    float *partial;
    int m, n, k, max_dim;
    /* stream-K (cluster 1): tiles [0, dp_tiles) run whole, tiles [dp_tiles, dp_tiles + sk_tiles) are split
     * into gridDim.x k-ranges; sk_part holds gridDim.x * CONSUMERS slots of 64 x BN floats, sk_flag as many ints
     * (zero between launches). sk_tiles = 0: every tile whole. */
    float *sk_part;
    int *sk_flag;
    int dp_tiles, sk_tiles;
    /* Column panels: tiles_n of them; the first nw are BN wide, the others BN - 8 (C::MIXED only; otherwise
     * nw = tiles_n = cdiv(N, BN)). */
    int tiles_n, nw;
    /* Last row of tiles shifted up to lie wholly inside M (see tile_row0): 1 (default), 0 with MG_WS_SHIFT=0. */
    int shift;
    /* Remainder split ("REMAINDER SPLIT" in the header; C::MIXED, cluster 1, max_dim 1): rem_chunks > 0 means every
     * panel is BN - 8 wide (nw = 0) and the rem_w <= 8 columns [rem_n0, rem_n0 + rem_w) are summed in rem_chunks
     * k-chunks by the tiles of panels 0 .. rem_chunks - 1 into rem (mg_launch_args::rem's layout). */
    float *rem;
    int rem_n0, rem_w, rem_chunks;
};

/* The first row of tile row tm's accumulators. Normally tm * BM. With p.shift, a last row of tiles that sticks out
 * past M (M >= BM) is moved up to rows [M - BM, M), so its x box is wholly inside the tensor instead of mostly
 * zero-filled by TMA. A mostly out-of-bounds box slows the TMA enough to starve the short stages of the 64- and
 * 128-row tile configurations: run 37, mid tiles at M = 129 bf16 0.0918 -> 0.0537 ms, tf32 0.1725 -> 0.1055, small
 * tiles 0.0889 -> 0.0651 (the main tiles' 1024-cycle stages hide it: M = 257 0.0844 / 0.0859). Its rows below
 * tm * BM belong to the tile above and are masked in the epilogue, so every row still enters exactly one tile's
 * maxima. Tiles past the last row (cluster tails) keep tm * BM: all masked. */
template <class C> __device__ __forceinline__ int tile_row0(const Params &p, int tm, int tiles_m) {
    const int r = tm * C::BM;
    return (p.shift && tm < tiles_m && p.m >= C::BM && r + C::BM > p.m) ? p.m - C::BM : r;
}

/* Remainder split: whether the tiles of panel tn compute a k-chunk of the remainder columns (chunk tn: the panels
 * 0 .. rem_chunks - 1; none without the split, rem_chunks = 0), and if so its k-blocks [*ck0, *ck1). */
template <class C>
__device__ __forceinline__ bool rem_chunk(const Params &p, int tn, int num_k, int *ck0, int *ck1) {
    if constexpr (!C::REM_SPLIT) return false;
    if (!(p.rem_chunks > 0 && tn < p.rem_chunks)) return false;
    mg_ws_rem_range(num_k, p.rem_chunks, tn, ck0, ck1);
    return true;
}

/* First column and width of column panel tn (see Params::tiles_n). */
template <class C> __device__ __forceinline__ void panel(const Params &p, int tn, int &n0, int &width) {
    if (!C::MIXED || tn < p.nw) {
        n0 = tn * C::BN;
        width = C::BN;
    } else {
        n0 = p.nw * C::BN + (tn - p.nw) * C::BN_NARROW;
        width = C::BN_NARROW;
    }
}

/* One piece of a CTA's work: scheduling unit `unit`, k-blocks [kb0, kb1). role 0: a whole tile; 1: a stream-K
 * non-head segment (accumulators go to this CTA's slot); 2: a stream-K head segment, whose CTA owns the tile and
 * adds the slots of CTAs blockIdx.x + 1 .. last before the epilogue. */
struct Seg {
    int unit, kb0, kb1, role, last;
};

/* The stream-K CTA whose range [b S / G, (b + 1) S / G) holds k-iteration q. */
__device__ __forceinline__ int sk_cta_of(long long q, long long S, int G) {
    int b = (int)((q * G) / S);
    while (b + 1 < G && ((long long)(b + 1) * S) / G <= q) b++;
    while (b > 0 && ((long long)b * S) / G > q) b--;
    return b;
}

/* The w-th piece of this CTA's work (false: none left). The producer and the consumers walk the same list, so
 * the k-iteration counter `it` stays identical in every role. */
template <class C>
__device__ __forceinline__ bool next_seg(const Params &p, int num_units, int num_k, int first_unit, int unit_step,
                                         int w, Seg &sg) {
    const bool sk = C::CLUSTER == 1 && p.sk_tiles > 0;
    const int dp_units = sk ? p.dp_tiles : num_units;
    const int ndp = first_unit < dp_units ? (dp_units - 1 - first_unit) / unit_step + 1 : 0;
    if (w < ndp) {
        sg.unit = first_unit + w * unit_step;
        sg.kb0 = 0;
        sg.kb1 = num_k;
        sg.role = 0;
        sg.last = 0;
        return true;
    }
    if (!sk || w - ndp > 1) return false;
    const int G = (int)gridDim.x, b = (int)blockIdx.x;
    const long long S = (long long)p.sk_tiles * num_k;
    const long long q0 = (long long)b * S / G, q1 = (long long)(b + 1) * S / G;
    if (q0 >= q1) return false;
    int i = (int)(q0 / num_k);
    long long beg = q0, end;
    if (w - ndp == 0) {
        end = (long long)(i + 1) * num_k < q1 ? (long long)(i + 1) * num_k : q1;
    } else {
        i++;
        beg = (long long)i * num_k;
        if (beg >= q1) return false;
        end = q1;
    }
    sg.unit = p.dp_tiles + i;
    sg.kb0 = (int)(beg - (long long)i * num_k);
    sg.kb1 = (int)(end - (long long)i * num_k);
    sg.role = sg.kb0 > 0 ? 1 : 2;
    sg.last = sg.role == 2 ? sk_cta_of((long long)(i + 1) * num_k - 1, S, G) : 0;
    return true;
}

/* Grouped order of scheduling units (a unit = CLUSTER vertically adjacent tiles, one per CTA of a cluster;
 * for CLUSTER 1 a unit is a tile): groups of `group` unit rows; M fastest inside a group, then N. */
__device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int group_m, int &tm, int &tn) {
    const int per_group = group_m * tiles_n;
    const int group = tile / per_group;
    const int first_m = group * group_m;
    const int gsize = min(group_m, tiles_m - first_m);
    const int local = tile - group * per_group;
    tm = first_m + local % gsize;
    tn = local / gsize;
}

__device__ __forceinline__ void named_bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

template <int ROW_BYTES>
__device__ __forceinline__ uint64_t make_desc(const void *tile) {
    if constexpr (ROW_BYTES == 128) return mg_make_desc_k128(tile);
    else return mg_make_desc_k64(tile);
}

template <class C, int WN = C::BN>
__device__ __forceinline__ void mma_step(float (&acc)[C::BN / 2], uint64_t da_hi, uint64_t da_lo, uint64_t db_hi,
                                         uint64_t db_lo) {
    static_assert(WN == C::BN || (C::MIXED && WN == C::BN_NARROW), "a narrow panel is BN - 8 = 248 wide");
    if constexpr (WN != C::BN) {
        (void)da_lo; (void)db_lo;
        if constexpr (C::S == Scheme::kTF32) mg_wgmma_tf32_n248(acc, da_hi, db_hi, 1);
        else mg_wgmma_bf16_n248(acc, da_hi, db_hi, 1);
    } else if constexpr (C::S == Scheme::kTF32) {
        (void)da_lo; (void)db_lo;
        mg_wgmma_tf32<C::BN>(acc, da_hi, db_hi, 1);
    } else if constexpr (C::S == Scheme::kBF16) {
        (void)da_lo; (void)db_lo;
        mg_wgmma_bf16<C::BN>(acc, da_hi, db_hi, 1);
    } else {
        /* Small terms first (they are ~2^-8 of the main term); all three accumulate into one fp32 D. */
        mg_wgmma_bf16<C::BN>(acc, da_lo, db_hi, 1);
        mg_wgmma_bf16<C::BN>(acc, da_hi, db_lo, 1);
        mg_wgmma_bf16<C::BN>(acc, da_hi, db_hi, 1);
    }
}

/* A consumer warp's release of a stage: one arrival on the stage's empty barrier of EVERY CTA of the cluster,
 * because every CTA's producer multicasts a W slice into this CTA's stage and may refill it only when all
 * consumers of all CTAs are done with it (count EMPTY_ARRIVALS). Cluster 1: a plain local arrive.
 * The remote arrive has the default .release.cta semantics (hopper.cuh mg_mbar_arrive_cluster says why a
 * .release.cluster here halves the throughput). */
template <class C> __device__ __forceinline__ void release_stage(uint64_t *empty_bar) {
    if constexpr (!C::MULTICAST) {
        mg_mbar_arrive(empty_bar);
    } else {
#pragma unroll
        for (int r = 0; r < C::CLUSTER; r++) {
            if constexpr (MG_WS_DIAG_REL_CLUSTER) mg_mbar_arrive_cluster_rel_cluster(empty_bar, (uint32_t)r);
            else mg_mbar_arrive_cluster(empty_bar, (uint32_t)r);
        }
    }
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Scheme kBF16x3RS: x stays fp32 in shared memory and is split into bf16 hi/lo in registers                  */
/* ---------------------------------------------------------------------------------------------------------- */
/* THE K PERMUTATION. Within every 32-column block of K (one stage, BK = 32), the W hi/lo tiles are stored
 * permuted (rs_split_w below, once in prepare) so that each thread's A fragment for one k16 step is FOUR
 * CONSECUTIVE fp32 of x (one 16-byte shared load) instead of two scattered pairs:
 *     W tile position p = 16 ks + 8 h + 2 q + e   (k16 step ks, half h, lane%4 = q, e = 0/1)
 *     holds W column      rs_perm_src(p) = 8 q + 4 ks + 2 h + e       (of the same 32-column block)
 * The wgmma A fragment (hopper.cuh, mg_wgmma_bf16_rs) of lane (g = lane/4, q = lane%4) for step ks holds the k
 * positions 16 ks + 2q + {0,1} (registers 0, 1: rows g, g+8) and 16 ks + 8 + 2q + {0,1} (registers 2, 3), i.e.
 * x columns 8q + 4ks + {0,1} and 8q + 4ks + {2,3}: the float4 at x columns 8q + 4ks .. 8q + 4ks + 3 = 16-byte
 * chunk 2q + ks of the 128-byte fp32 row. The dot product is a sum over k, so permuting k identically in x and
 * W changes nothing but the order of the (fp32-accumulated) terms.
 * Shared-memory reads: the fp32 A tile has the 128B swizzle (chunk c of row r at c ^ (r % 8)); every row of a
 * thread satisfies r % 8 = g, so the load of (row, step ks) reads chunk (2q + ks) ^ g. A 16-byte load is served
 * per quarter-warp (8 lanes: g = 2j, 2j+1, q = 0..3): chunks (2q + ks) ^ 2j and (2q + ks) ^ (2j + 1) are 8
 * distinct chunks (bit 0 is ks for one row and ks ^ 1 for the other): all 32 banks, no conflict.
 * K tails: W columns >= K are stored as 0 and the W descriptor spans the padded width (a multiple of 32), the
 * x descriptor spans K (TMA zero-fills the rest), so every padded product is 0 * 0. */
__host__ __device__ constexpr int rs_perm_src(int p) {
    return 8 * ((p % 8) / 2) + 4 * (p / 16) + 2 * ((p % 16) / 8) + (p % 2);
}

/* The split of kernels/split.cu (split1), two values at a time, packed as a wgmma bf16x2 register (v0 in the
 * low half): hi = bf16_rn(v), lo = bf16_rn(v - hi) (exact difference); NaN -> (NaN, NaN); +-inf -> (+-inf, 0);
 * a finite v that rounds to +-inf in bf16 -> hi = +-0x7f7f (largest finite bf16), lo = bf16_rn(v - hi). */
__device__ __forceinline__ float rs_split_fix(float v, float &h) {
    const bool v_inf = fabsf(v) == INFINITY;
    if (fabsf(h) == INFINITY && !v_inf) h = copysignf(3.38953139e38f, v); /* 0x7f7f0000: exact in bf16 */
    return v_inf ? 0.f : v - h;
}
__device__ __forceinline__ void rs_split_pair(float v0, float v1, uint32_t &hi, uint32_t &lo) {
    const __nv_bfloat162 h2 = __floats2bfloat162_rn(v0, v1); /* .x = v0: the low half */
    const uint32_t hb = *reinterpret_cast<const uint32_t *>(&h2);
    float h0 = __uint_as_float(hb << 16), h1 = __uint_as_float(hb & 0xffff0000u);
    const float r0 = rs_split_fix(v0, h0), r1 = rs_split_fix(v1, h1);
    hi = __byte_perm(__float_as_uint(h0), __float_as_uint(h1), 0x7632); /* the bf16 halves of h0, h1 */
    const __nv_bfloat162 l2 = __floats2bfloat162_rn(r0, r1);
    lo = *reinterpret_cast<const uint32_t *>(&l2);
}

/* 16-byte shared load (volatile: stays after the full-barrier wait that makes the TMA bytes visible). */
__device__ __forceinline__ float4 rs_lds128(uint32_t addr) {
    float4 v;
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

/* One k-iteration (one stage, BK = 32 = two k16 steps) of a kBF16x3RS consumer: wait for the stage, read this
 * thread's 16 fp32 of x (rows r, r + 8; steps 0, 1), split them into the register set fr, and issue
 * x_lo W_hi, x_hi W_lo, x_hi W_hi per step (small terms first) as ONE wgmma group; then, as the shared-memory
 * mainloop does, wait until only this group is pending and release the previous stage. fr must not be the set
 * that the previous k-iteration's (possibly pending) group reads: the caller alternates two sets. */
template <class C>
__device__ __forceinline__ void rs_kiter(float (&acc)[C::BN / 2], uint32_t (&fr)[2][2][4], const uint8_t *smem,
                                         uint32_t smem_base, uint64_t *full, uint64_t *empty, int it, int kb,
                                         uint32_t a_off, uint32_t ch0, uint32_t ch1, int lane) {
    const int s = it % C::STAGES;
    mg_mbar_wait(&full[s], (it / C::STAGES) & 1);
    const uint32_t ra = smem_base + (uint32_t)(s * C::STAGE_BYTES) + a_off; /* row r of the fp32 A tile */
    constexpr uint32_t R8 = 8 * C::A_ROW_BYTES;                            /* row r + 8 */
    const float4 x00 = rs_lds128(ra + ch0), x10 = rs_lds128(ra + R8 + ch0); /* step 0 */
    const float4 x01 = rs_lds128(ra + ch1), x11 = rs_lds128(ra + R8 + ch1); /* step 1 */
    rs_split_pair(x00.x, x00.y, fr[0][0][0], fr[0][1][0]);
    rs_split_pair(x10.x, x10.y, fr[0][0][1], fr[0][1][1]);
    rs_split_pair(x00.z, x00.w, fr[0][0][2], fr[0][1][2]);
    rs_split_pair(x10.z, x10.w, fr[0][0][3], fr[0][1][3]);
    rs_split_pair(x01.x, x01.y, fr[1][0][0], fr[1][1][0]);
    rs_split_pair(x11.x, x11.y, fr[1][0][1], fr[1][1][1]);
    rs_split_pair(x01.z, x01.w, fr[1][0][2], fr[1][1][2]);
    rs_split_pair(x11.z, x11.w, fr[1][0][3], fr[1][1][3]);
    /* The fragments are written before the wgmma.fence (PTX ISA: a fence between a register write and the
     * wgmma that reads it). */
#pragma unroll
    for (int ks = 0; ks < 2; ks++) {
        mg_fence_regs(fr[ks][0]);
        mg_fence_regs(fr[ks][1]);
    }
    const uint8_t *b0 = smem + s * C::STAGE_BYTES + C::A_PARTS * C::A_BYTES;
    const uint64_t db_hi = make_desc<C::B_ROW_BYTES>(b0);
    const uint64_t db_lo = make_desc<C::B_ROW_BYTES>(b0 + C::B_BYTES);
    mg_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 2; ks++) {
        const uint32_t off = ks * 32;
        mg_wgmma_bf16_rs<C::BN>(acc, fr[ks][1], mg_desc_advance(db_hi, off), 1); /* x_lo * W_hi */
        mg_wgmma_bf16_rs<C::BN>(acc, fr[ks][0], mg_desc_advance(db_lo, off), 1); /* x_hi * W_lo */
        mg_wgmma_bf16_rs<C::BN>(acc, fr[ks][0], mg_desc_advance(db_hi, off), 1); /* x_hi * W_hi */
    }
    mg_wgmma_commit();
    if (kb > 0) {
        /* At most this k-iteration's group is pending: the previous stage (and the other register set) is free. */
        mg_wgmma_wait<1>();
        if (lane == 0) release_stage<C>(&empty[(it - 1) % C::STAGES]);
    }
}

#ifndef MG_WS_DIAG_NO_EPILOGUE
#define MG_WS_DIAG_NO_EPILOGUE 0
#endif
/* Timing diagnostic (tune/k4_timeline): consumer 0's thread 0 of every CTA prints its SM, its start and the end of
 * each of its tiles (%globaltimer, ns) and the tiles' column panels: where a launch's time goes, CTA by CTA. */
#ifndef MG_WS_DIAG_TIMELINE
#define MG_WS_DIAG_TIMELINE 0
#endif
__device__ __forceinline__ unsigned long long diag_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
/* The epilogue's max: PTX max.NaN.f32, one FMNMX.NAN (NaN if either input is NaN: mg_nanmaxf's contract) instead
 * of mg_nanmaxf's compare-and-select (run 22: with the paired bias loads below, 2.6% off the bf16 headline). */
__device__ __forceinline__ float epi_max(float a, float b) {
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

/* The bias of columns j, j + 1 (j even) as one 8-byte (float) or 4-byte (bf16) load, kept packed until used:
 * only for tiles wholly inside N whose bias pointer has that alignment (the caller checks). */
template <class B> struct BiasPairT { using type = float2; };
template <> struct BiasPairT<__nv_bfloat16> { using type = __nv_bfloat162; };
template <class B> __device__ __forceinline__ typename BiasPairT<B>::type bias_pair_load(const B *b, int j) {
    return __ldg(reinterpret_cast<const typename BiasPairT<B>::type *>(b + j));
}
__device__ __forceinline__ float2 bias_pair_f(float2 v) { return v; }
__device__ __forceinline__ float2 bias_pair_f(__nv_bfloat162 v) { return __bfloat1622float2(v); }

template <class B> __device__ __forceinline__ float bias_at(const B *b, int j);
template <> __device__ __forceinline__ float bias_at<float>(const float *b, int j) { return __ldg(b + j); }
template <> __device__ __forceinline__ float bias_at<__nv_bfloat16>(const __nv_bfloat16 *b, int j) {
    return __bfloat162float(b[j]);
}

/* The k-iterations [kb0, kb1) of one segment for the shared-memory-operand schemes, wgmma N = WN (BN, or BN - 8
 * on a narrow panel): wait for the stage, issue its k-steps as one wgmma group, keep that group in flight
 * (wait_group 1) and release the previous stage (from the segment's second k-block kb_first + 1 on: a segment may
 * run in pieces of different WN, the remainder split's). Returns the k-iteration counter after the piece.
 * A piece of another WN follows behind a wgmma.fence (every k-iteration starts with one), as the PTX ISA asks of
 * wgmma of different shapes on the same accumulators. */
template <class C, int WN>
__device__ __forceinline__ int ss_kloop(float (&acc)[C::BN / 2], const uint8_t *smem, uint64_t *full, uint64_t *empty,
                                        int it, int kb_first, int kb0, int kb1, int c, int lane) {
    for (int kb = kb0; kb < kb1; kb++, it++) {
        const int s = it % C::STAGES;
        mg_mbar_wait(&full[s], (it / C::STAGES) & 1);
        const uint8_t *st = smem + s * C::STAGE_BYTES;
        const uint8_t *a0 = st + c * C::SLAB * C::A_ROW_BYTES;  /* this consumer's 64 rows of A */
        const uint64_t da_hi = make_desc<C::A_ROW_BYTES>(a0);
        const uint64_t da_lo = make_desc<C::A_ROW_BYTES>(a0 + (C::A_PARTS - 1) * C::A_BYTES);
        const uint8_t *b0 = st + C::A_PARTS * C::A_BYTES;
        const uint64_t db_hi = make_desc<C::B_ROW_BYTES>(b0);
        const uint64_t db_lo = make_desc<C::B_ROW_BYTES>(b0 + (C::B_PARTS - 1) * C::B_BYTES);
        mg_wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < C::KSTEPS; ks++) {
            const uint32_t off = ks * 32;
            mma_step<C, WN>(acc, mg_desc_advance(da_hi, off), mg_desc_advance(da_lo, off),
                            mg_desc_advance(db_hi, off), mg_desc_advance(db_lo, off));
        }
        mg_wgmma_commit();
        if (kb > kb_first) {   /* kb_first: the segment's first k-block (a segment may run in several pieces) */
            /* At most this k-iteration's group is pending: the previous stage has been read. */
            mg_wgmma_wait<1>();
            if (lane == 0) release_stage<C>(&empty[(it - 1) % C::STAGES]);
        }
    }
    return it;
}

template <class C>
__global__ void __launch_bounds__(C::THREADS, 1) ws_kernel(const __grid_constant__ Params p) {
    using Bias = typename C::T::Bias;
    extern __shared__ uint8_t smem_raw[];
    /* The 128B swizzle pattern repeats every 1024 bytes and the descriptors assume tile bases on that grid. */
    uint8_t *smem = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    float *red = reinterpret_cast<float *>(smem + C::STAGES * C::STAGE_BYTES);
    uint64_t *full = reinterpret_cast<uint64_t *>(smem + C::STAGES * C::STAGE_BYTES + C::RED_BYTES);
    uint64_t *empty = full + C::STAGES;

    const int wg = threadIdx.x / 128;
    const int tid = threadIdx.x % 128;
    const int M = p.m, N = p.n;
    const int tiles_m = (M + C::BM - 1) / C::BM, tiles_n = p.tiles_n;
    const int num_k = (p.k + C::BK - 1) / C::BK;
    /* Scheduling units: CLUSTER vertically adjacent tiles (tm = um * CLUSTER + rank); both CTAs of a cluster walk
     * the same unit sequence, so their k-iteration counters `it` (stage, use, parity) are identical at every
     * step. A rank whose tile lies wholly below M (M tail) still walks it: it loads, computes, releases and
     * masks everything in the epilogue. */
    const int rank = C::CLUSTER == 1 ? 0 : (int)mg_cluster_ctarank();
    const int units_m = (tiles_m + C::CLUSTER - 1) / C::CLUSTER;
    const int num_units = units_m * tiles_n;
    const int first_unit = C::CLUSTER == 1 ? (int)blockIdx.x : (int)mg_cluster_id_x();
    const int unit_step = C::CLUSTER == 1 ? (int)gridDim.x : (int)mg_num_clusters_x();

    if (threadIdx.x == 0) {
        for (int s = 0; s < C::STAGES; s++) {
            mg_mbar_init(&full[s], 1);
            mg_mbar_init(&empty[s], C::EMPTY_ARRIVALS);
        }
        mg_fence_mbarrier_init();
    }
    /* The only CTA-wide barrier: roles never synchronise with each other after this. With clusters it is the
     * cluster barrier: the peer's multicasts and remote arrivals must not reach this CTA's barriers before they
     * are initialised. */
    if constexpr (C::CLUSTER == 1) {
        __syncthreads();
    } else {
        __syncwarp();
        mg_cluster_sync_unaligned();
    }
    /* The finalize kernel after this one may be scheduled now (PDL, kernels/finalize.cu): its CTAs land on SMs this
     * grid leaves free and wait there for its completion, so its launch latency hides behind this grid's tail. */
    if (threadIdx.x == 0) mg_pdl_trigger();

    if (wg == 0) {
        /* ---------------- producer ---------------- */
        mg_setmaxnreg_dec<kProducerRegs>();
        if (tid == 0) {
            if (num_k > 0) {
#pragma unroll
                for (int q = 0; q < C::A_PARTS; q++) mg_tma_prefetch_desc(&p.a[q]);
#pragma unroll
                for (int q = 0; q < C::B_PARTS; q++) mg_tma_prefetch_desc(&p.b[q]);
                if constexpr (C::REM_SPLIT)
                    if (p.rem_chunks > 0) mg_tma_prefetch_desc(&p.brem);
            }
            int it = 0;
            Seg sg;
            for (int w = 0; next_seg<C>(p, num_units, num_k, first_unit, unit_step, w, sg); w++) {
                int um, tn;
                tile_coords(sg.unit, units_m, tiles_n, C::UNIT_GROUP, um, tn);
                const int tm = um * C::CLUSTER + rank;
                /* Every box is issued in every k-iteration (expect_tx is always STAGE_BYTES), and no box lies
                 * wholly outside the tensor: a tile below M (cluster rank past the last M-tile) re-reads rows of
                 * M-tile 0, a W slice past N re-reads the tile's first rows. Those rows only produce accumulators
                 * that the epilogue masks (row >= M, column >= N), and every CTA keeps multicasting its slice, so
                 * each CTA's full barrier depends on every producer of the cluster (see the header). */
                const int row_a = tm < tiles_m ? tile_row0<C>(p, tm, tiles_m) : 0;
                int pn0, pw;
                panel<C>(p, tn, pn0, pw);
                /* a narrow panel still loads BN rows: the last 8 are the next panel's and feed only accumulators
                 * that its n248 wgmma never touches */
                int row_b = pn0 + rank * C::B_BOX_ROWS;
                if (row_b >= N) row_b = pn0;
                /* remainder split: this tile's chunk of the remainder columns (none: ck0 = ck1) */
                int ck0 = 0, ck1 = 0;
                (void)rem_chunk<C>(p, tn, num_k, &ck0, &ck1);
                for (int kb = sg.kb0; kb < sg.kb1; kb++, it++) {
                    const int s = it % C::STAGES;
                    const int u = it / C::STAGES;
                    const int kc = kb * C::BK; /* the k column of this stage's boxes */
                    if (u > 0) {
                        /* all consumers (of every CTA of the cluster) released the previous use */
                        /* (a plain acquire.cta wait for cluster 2 too, as CUTLASS's producer_acquire: the
                         * arrivals it waits for publish no data, see mg_mbar_arrive_cluster) */
                        mg_mbar_wait(&empty[s], (u - 1) & 1);
                    }
                    uint8_t *st = smem + s * C::STAGE_BYTES;
                    /* A tile(s) + the WHOLE B tile(s): this CTA's slice and the peers' multicast slices all
                     * complete_tx on this barrier. Full boxes count, even where TMA zero-fills. */
                    /* remainder split: the W box has BN - 8 rows; a chunk's k-blocks add the 8 remainder rows */
                    const bool rk = kb >= ck0 && kb < ck1;
                    uint32_t tx = C::STAGE_BYTES;
                    if constexpr (C::REM_SPLIT)
                        if (p.rem_chunks > 0 && !rk) tx -= C::REM_BYTES;
                    mg_mbar_arrive_expect_tx(&full[s], tx);
                    if constexpr (C::REM_SPLIT)
                        if (rk)
                            mg_tma_load_2d(st + C::A_PARTS * C::A_BYTES + C::BN_NARROW * C::B_ROW_BYTES, &p.brem,
                                           &full[s], kc, p.rem_n0);
#pragma unroll
                    for (int q = 0; q < C::MAX_PARTS; q++) {
                        /* (A q, B q) in turn: the order of the uniform schemes; kBF16x3RS has one A part */
                        if (q < C::A_PARTS)
                            mg_tma_load_2d(st + q * C::A_BYTES, &p.a[q], &full[s], kc, row_a);
                        if (q < C::B_PARTS) {
                            uint8_t *b_dst = st + C::A_PARTS * C::A_BYTES + q * C::B_BYTES + rank * C::B_SLICE_BYTES;
                            if constexpr (C::CLUSTER == 1) {
                                mg_tma_load_2d(b_dst, &p.b[q], &full[s], kc, row_b);
                            } else if constexpr (C::MULTICAST) {
                                mg_tma_load_2d_multicast(b_dst, &p.b[q], &full[s], kc, row_b,
                                                         (uint16_t)((1u << C::CLUSTER) - 1));
                            } else {
                                /* diagnostic MG_WS_DIAG_NO_MULTICAST: every slice of the W tile, own CTA only */
#pragma unroll
                                for (int r = 0; r < C::CLUSTER; r++) {
                                    int rb = pn0 + r * C::B_BOX_ROWS;
                                    if (rb >= N) rb = pn0;
                                    mg_tma_load_2d(st + C::A_PARTS * C::A_BYTES + q * C::B_BYTES +
                                                       r * C::B_SLICE_BYTES,
                                                   &p.b[q], &full[s], kc, rb);
                                }
                            }
                        }
                    }
                }
            }
        }
        if constexpr (C::CLUSTER == 1) {
            return; /* the CTA stays alive while the consumers run; every issued load is consumed by them */
        } else {
            /* No thread leaves before the whole cluster is done: the peer may still arrive on this CTA's empty
             * barriers (its consumers' last releases) after this CTA's own work is over. */
            __syncwarp(); /* thread 0 rejoins its warp mates (belt and braces: the barrier is the unaligned form) */
            mg_cluster_sync_unaligned();
            return;
        }
    }

    /* ---------------- consumers ---------------- */
    mg_setmaxnreg_inc<C::CONSUMER_REGS>();
    const int c = wg - 1;                /* consumer index: rows [64c, 64c + 64) of the tile */
    const int warp = tid / 32, lane = tid % 32;
    const Bias *bias = static_cast<const Bias *>(p.bias);
    float acc[C::BN / 2];
    int it = 0;
    /* kBF16x3RS only: this thread's A-fragment rows and 16-byte chunks in the fp32 A tile (see rs_kiter). */
    const uint32_t smem_base = mg_smem_u32(smem);
    const uint32_t a_off = (uint32_t)((c * C::SLAB + warp * 16 + lane / 4) * C::A_ROW_BYTES);
    const uint32_t ch0 = (uint32_t)((((2 * (lane % 4)) ^ (lane / 4)) & 7) * 16);
    const uint32_t ch1 = (uint32_t)((((2 * (lane % 4) + 1) ^ (lane / 4)) & 7) * 16);
    uint32_t fr0[2][2][4], fr1[2][2][4]; /* [k16 step][hi, lo][register]: two sets, see the mainloop */
    (void)smem_base; (void)a_off; (void)ch0; (void)ch1; (void)fr0; (void)fr1;

    /* MG_WS_DIAG_TIMELINE: start and tile ends (ns, SM cycles: the clock per tile) and the tiles' panels */
    unsigned long long diag_t[4] = {MG_WS_DIAG_TIMELINE ? diag_ns() : 0ull, 0ull, 0ull, 0ull};
    long long diag_c[4] = {MG_WS_DIAG_TIMELINE ? clock64() : 0ll, 0ll, 0ll, 0ll};
    int diag_tn[3] = {-1, -1, -1};
    (void)diag_t; (void)diag_c; (void)diag_tn;
    Seg sg;
    for (int w = 0; next_seg<C>(p, num_units, num_k, first_unit, unit_step, w, sg); w++) {
        int um, tn;
        tile_coords(sg.unit, units_m, tiles_n, C::UNIT_GROUP, um, tn);
        const int tm = um * C::CLUSTER + rank; /* may be >= tiles_m (cluster M tail): the epilogue masks it all */
        if (MG_WS_DIAG_TIMELINE && w < 3) diag_tn[w] = tn;
        int n0, width;
        panel<C>(p, tn, n0, width);

#pragma unroll
        for (int i = 0; i < C::BN / 2; i++) acc[i] = 0.f;
        mg_fence_acc(acc); /* the zeros are materialised before the wgmma.fence below */

        /* The rest of the tile for a panel WN columns wide (BN, or BN - 8 on a narrow panel): every loop over the
         * tile's columns has a compile-time bound. */
        auto finish_tile = [&](auto wn_tag) {
            constexpr int WN = decltype(wn_tag)::value;
            constexpr int NI = WN / 8;            /* 8-column groups of the panel */
            const int n_end = min(N, n0 + WN);    /* columns [n0, n_end) are this tile's */
            mg_wgmma_wait<0>();
            mg_fence_acc(acc); /* no accumulator read may be hoisted above the wait */
            if (sg.kb1 > sg.kb0 && lane == 0) release_stage<C>(&empty[(it - 1) % C::STAGES]);
            /* The bias in pairs (one 4- or 8-byte load per two columns, bias2(i) = columns 8i + 2(lane%4) + 0/1),
             * when the panel lies inside N and the pointer allows it. Not for kBF16x3RS (kernel 6), whose
             * registers spill with it (ptxas, CUDA 13.0): it keeps the per-column loads of the general path.
             * (Loading all pairs before the wait above, to hide their latency behind the last wgmma group,
             * measured no gain in run 23, and a float bias array of 64 registers spills tf32.) */
            const bool pair_ok = !C::T::kRegA && n0 + WN <= N &&
                                 (reinterpret_cast<uintptr_t>(bias) % (2 * sizeof(Bias))) == 0;
            const Bias *bias_q = bias + n0 + 2 * (lane % 4);
            auto bias2 = [&](int i) { return bias_pair_f(bias_pair_load(bias_q, 8 * i)); };

            if constexpr (C::CLUSTER == 1) {
                /* Stream-K (uniform panels only): slot layout [cta][consumer][i][tid] (coalesced: a warp stores 32
                 * consecutive floats). */
                constexpr int SLOT = (C::BN / 2) * 128;
                if (sg.role == 1) {
                    float *dst = p.sk_part + ((size_t)blockIdx.x * C::CONSUMERS + c) * SLOT + tid;
#pragma unroll
                    for (int i = 0; i < C::BN / 2; i++) __stcg(dst + i * 128, acc[i]);
                    __threadfence();            /* each thread's stores are visible GPU-wide before the flag */
                    named_bar_sync(1 + c, 128); /* ... all 128 threads' */
                    if (tid == 0) mg_st_release_gpu(&p.sk_flag[blockIdx.x * C::CONSUMERS + c], 1);
                    return;                     /* the owner of the tile runs its epilogue */
                }
                if (sg.role == 2) {
                    for (int o = (int)blockIdx.x + 1; o <= sg.last; o++) {
                        int *flag = &p.sk_flag[o * C::CONSUMERS + c];
                        if (tid == 0) {
                            while (mg_ld_acquire_gpu(flag) == 0) __nanosleep(64);
                            *flag = 0;          /* nothing else reads it in this launch: zero for the next one */
                        }
                        named_bar_sync(1 + c, 128); /* the acquire above orders the slot reads below */
                        const float *src = p.sk_part + ((size_t)o * C::CONSUMERS + c) * SLOT + tid;
#pragma unroll
                        for (int i = 0; i < C::BN / 2; i++) acc[i] += __ldcg(src + i * 128);
                    }
                }
            }

            /* ---------------- fused epilogue: bias + NaN-propagating max ---------------- */
            /* this thread's rows: r0, r0 + 8; rows of a shifted last tile (tile_row0) above tm * BM are the tile
             * above's, masked like rows past M */
            const int row0 = tile_row0<C>(p, tm, tiles_m), sh = tm * C::BM - row0;
            const int r0 = row0 + c * C::SLAB + warp * 16 + lane / 4;
            const bool ok0 = r0 >= tm * C::BM && r0 < M, ok1 = r0 + 8 >= tm * C::BM && r0 + 8 < M;
            if constexpr (MG_WS_DIAG_NO_EPILOGUE) {
                /* Timing diagnostic only (tune/k4_noepi): no epilogue; WRONG results. The store keeps acc live. */
                if (acc[0] == 1234.5f && acc[C::BN / 2 - 1] == 1234.5f) p.partial[0] = acc[1];
                return;
            }
            if (p.max_dim == 1) {
                float m0 = -INFINITY, m1 = -INFINITY;
                if (pair_ok) {
                    /* two chains per row (even, odd column), merged below: half the dependent max latency */
                    float m0b = -INFINITY, m1b = -INFINITY;
#pragma unroll
                    for (int i = 0; i < NI; i++) {
                        const float2 bv = bias2(i);
                        m0 = epi_max(m0, acc[4 * i] + bv.x);
                        m0b = epi_max(m0b, acc[4 * i + 1] + bv.y);
                        m1 = epi_max(m1, acc[4 * i + 2] + bv.x);
                        m1b = epi_max(m1b, acc[4 * i + 3] + bv.y);
                    }
                    m0 = epi_max(m0, m0b);
                    m1 = epi_max(m1, m1b);
                } else {
#pragma unroll
                    for (int i = 0; i < NI; i++) {
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int col = n0 + 8 * i + 2 * (lane % 4) + e;
                            if (col < n_end) {
                                const float bv = bias_at<Bias>(bias, col);
                                m0 = epi_max(m0, acc[4 * i + e] + bv);
                                m1 = epi_max(m1, acc[4 * i + 2 + e] + bv);
                            }
                        }
                    }
                }
                m0 = epi_max(m0, __shfl_xor_sync(0xffffffffu, m0, 1));
                m1 = epi_max(m1, __shfl_xor_sync(0xffffffffu, m1, 1));
                m0 = epi_max(m0, __shfl_xor_sync(0xffffffffu, m0, 2));
                m1 = epi_max(m1, __shfl_xor_sync(0xffffffffu, m1, 2));
                if (lane % 4 == 0) {
                    if (ok0) p.partial[(size_t)tn * M + r0] = m0;
                    if (ok1) p.partial[(size_t)tn * M + r0 + 8] = m1;
                }
                if constexpr (C::REM_SPLIT && WN == C::BN_NARROW) {
                    /* remainder split: this tile's k-chunk tn of the remainder columns, accumulator group NI (the
                     * n256 wgmma's last 8 columns; zero outside the chunk's k-blocks), chunk 0 with the bias */
                    int ck0, ck1;
                    if (rem_chunk<C>(p, tn, num_k, &ck0, &ck1)) {
                        float *dst = p.rem + (size_t)tn * p.rem_w * M;
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int col = 2 * (lane % 4) + e;
                            if (col < p.rem_w) {
                                float v0 = acc[4 * NI + e], v1 = acc[4 * NI + 2 + e];
                                if (tn == 0) {
                                    const float bv = bias_at<Bias>(bias, p.rem_n0 + col);
                                    v0 += bv;
                                    v1 += bv;
                                }
                                if (ok0) dst[(size_t)col * M + r0] = v0;
                                if (ok1) dst[(size_t)col * M + r0 + 8] = v1;
                            }
                        }
                    }
                }
            } else {
                /* v[j], j = 2i + e: this thread's max over its rows r0, r0 + 8 of column 8i + 2(lane%4) + e.
                 * Groups i >= NI (a narrow panel's last 8 columns) are -inf and never stored. */
                constexpr int NV = C::BN / 4;
                float v[NV];
                if (pair_ok && (tm + 1) * C::BM <= M) {
                    /* the whole tile is inside M and N: max(a + b, c + b) = max(a, c) + b exactly (rounding is
                     * monotonic; NaN and inf give the same either way), two instructions per value */
#pragma unroll
                    for (int i = 0; i < C::BN / 8; i++) {
                        if (i < NI) {
                            const float2 bv = bias2(i);
                            v[2 * i] = epi_max(acc[4 * i], acc[4 * i + 2]) + bv.x;
                            v[2 * i + 1] = epi_max(acc[4 * i + 1], acc[4 * i + 3]) + bv.y;
                        } else {
                            v[2 * i] = v[2 * i + 1] = -INFINITY;
                        }
                    }
                } else {
#pragma unroll
                    for (int i = 0; i < C::BN / 8; i++) {
#pragma unroll
                        for (int e = 0; e < 2; e++) {
                            const int col = n0 + 8 * i + 2 * (lane % 4) + e;
                            float t = -INFINITY;
                            if (i < NI && col < n_end) {
                                const float bv = bias_at<Bias>(bias, col);
                                if (ok0) t = acc[4 * i + e] + bv;
                                if (ok1) t = epi_max(t, acc[4 * i + 2 + e] + bv);
                            }
                            v[2 * i + e] = t;
                        }
                    }
                }
                /* Transpose-reduce over the 8 lanes that share lane%4 (lane bits 4, 3, 2): at each step a lane
                 * keeps half of its columns and sends the other half to its partner, so 32 + 16 + 8 = 56 shuffles
                 * (not 3 x 64) leave each lane with the 16-row max of NV/8 distinct columns. No branches. */
                const bool b16 = lane & 16, b8 = lane & 8, b4 = lane & 4;
#pragma unroll
                for (int j = 0; j < NV / 2; j++) {
                    const float keep = b16 ? v[NV / 2 + j] : v[j], send = b16 ? v[j] : v[NV / 2 + j];
                    v[j] = epi_max(keep, __shfl_xor_sync(0xffffffffu, send, 16));
                }
#pragma unroll
                for (int j = 0; j < NV / 4; j++) {
                    const float keep = b8 ? v[NV / 4 + j] : v[j], send = b8 ? v[j] : v[NV / 4 + j];
                    v[j] = epi_max(keep, __shfl_xor_sync(0xffffffffu, send, 8));
                }
#pragma unroll
                for (int j = 0; j < NV / 8; j++) {
                    const float keep = b4 ? v[NV / 8 + j] : v[j], send = b4 ? v[j] : v[NV / 8 + j];
                    v[j] = epi_max(keep, __shfl_xor_sync(0xffffffffu, send, 4));
                }
                /* v[t] now holds original index j = base + t. */
                const int base = (b16 ? NV / 2 : 0) + (b8 ? NV / 4 : 0) + (b4 ? NV / 8 : 0);
                float *my_red = red + (c * 4 + warp) * C::BN;
#pragma unroll
                for (int t = 0; t < NV / 8; t++) {
                    const int j = base + t;
                    my_red[8 * (j >> 1) + 2 * (lane % 4) + (j & 1)] = v[t];
                }
                named_bar_sync(1 + c, 128); /* this consumer's 4 warps wrote their column maxima */
                /* = first row / 64. A shifted last tile (sh > 0) has valid rows only from local row sh: a consumer
                 * wholly above it writes nothing, and the others move down by sh / 64 slabs, so the tile still writes
                 * each of its cdiv(M, 64) - tm * CONSUMERS slabs exactly once (their maxima over other rows than
                 * the slab's own, but every valid row enters one of them: the finalize's max is the same). */
                const int slab = tm * C::CONSUMERS + c - sh / C::SLAB;
                if ((c + 1) * C::SLAB > sh && slab * C::SLAB < M) {
                    const float *cred = red + c * 4 * C::BN;
                    for (int lc = tid; lc < C::BN; lc += 128) {
                        float v = cred[lc];
                        v = epi_max(v, cred[C::BN + lc]);
                        v = epi_max(v, cred[2 * C::BN + lc]);
                        v = epi_max(v, cred[3 * C::BN + lc]);
                        if (n0 + lc < n_end) p.partial[(size_t)slab * N + n0 + lc] = v;
                    }
                }
                named_bar_sync(1 + c, 128); /* red is reused by the next tile */
            }
        };

        if constexpr (C::T::kRegA) {
            /* kBF16x3RS: the A fragments alternate between two register sets (fr0: even kb, fr1: odd kb), so
             * that with one wgmma group in flight (wait_group 1) no set is rewritten while a pending wgmma still
             * reads it (PTX ISA: A registers of a wgmma must not change before a wait_group covering it). The
             * loop is unrolled by two in straight-line code so each set is its own registers. */
            int kb = sg.kb0;   /* rs_kiter gets the index within the segment: it releases from the second on */
            while (kb < sg.kb1) {
                rs_kiter<C>(acc, fr0, smem, smem_base, full, empty, it, kb - sg.kb0, a_off, ch0, ch1, lane);
                kb++, it++;
                if (kb >= sg.kb1) break;
                rs_kiter<C>(acc, fr1, smem, smem_base, full, empty, it, kb - sg.kb0, a_off, ch0, ch1, lane);
                kb++, it++;
            }
            finish_tile(std::integral_constant<int, C::BN>{});
        } else if constexpr (C::MIXED) {
            if (width != C::BN) {
                /* remainder split: the chunk's k-blocks run n256 (its last 8 accumulator columns are the remainder
                 * columns, whose W rows the producer loaded behind the panel's); without a chunk ck0 = kb1 */
                int ck0 = sg.kb1, ck1 = sg.kb1;
                (void)rem_chunk<C>(p, tn, num_k, &ck0, &ck1);
                it = ss_kloop<C, C::BN_NARROW>(acc, smem, full, empty, it, sg.kb0, sg.kb0, ck0, c, lane);
                it = ss_kloop<C, C::BN>(acc, smem, full, empty, it, sg.kb0, ck0, ck1, c, lane);
                it = ss_kloop<C, C::BN_NARROW>(acc, smem, full, empty, it, sg.kb0, ck1, sg.kb1, c, lane);
                finish_tile(std::integral_constant<int, C::BN_NARROW>{});
            } else {
                it = ss_kloop<C, C::BN>(acc, smem, full, empty, it, sg.kb0, sg.kb0, sg.kb1, c, lane);
                finish_tile(std::integral_constant<int, C::BN>{});
            }
        } else {
            it = ss_kloop<C, C::BN>(acc, smem, full, empty, it, sg.kb0, sg.kb0, sg.kb1, c, lane);
            finish_tile(std::integral_constant<int, C::BN>{});
        }
        if (MG_WS_DIAG_TIMELINE && w < 3) {
            diag_t[w + 1] = diag_ns();
            diag_c[w + 1] = clock64();
        }
    }
    if (MG_WS_DIAG_TIMELINE && c == 0 && tid == 0) {
        unsigned smid;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(smid));
        printf("TL cta %d sm %u start %llu end1 %llu end2 %llu end3 %llu panels %d %d %d cycles %lld %lld\n",
               (int)blockIdx.x, smid, diag_t[0], diag_t[1], diag_t[2], diag_t[3], diag_tn[0], diag_tn[1], diag_tn[2],
               diag_c[1] - diag_c[0], diag_t[2] ? diag_c[2] - diag_c[1] : 0ll);
    }
    /* Cluster: stay until the peer is done too (its producer may still multicast into this CTA only for stages
     * that this CTA's consumers have consumed, but its consumers' last releases arrive on this CTA's barriers). */
    if constexpr (C::CLUSTER > 1) {
        __syncwarp();
        mg_cluster_sync_unaligned();
    }
}

/* ---------------------------------------------------------------------------------------------------------- */
/* Host side                                                                                                  */
/* ---------------------------------------------------------------------------------------------------------- */

/* The most partial rows a launch of configuration C can write (plan sizing): max_dim 1 has one row per column
 * panel, and the mixed-width layout has one panel more than cdiv(N, BN). */
template <class C> int partial_rows(const mg_problem *p) {
    return p->max_dim == 1 ? mg_cdiv(p->n, C::BN) + (C::MIXED ? 1 : 0) : mg_cdiv(p->m, C::SLAB);
}

/* MIXED PANELS: the column panels for unit_rows rows of scheduling units (cdiv(m, BM x CLUSTER)) on G schedulers
 * (CTAs, or clusters); tiles_n and nw come in uniform (cdiv(N, BN)
 * panels of BN) and are changed only when mixed is taken. Mixed: one panel more, nw of them BN wide and the rest BN - 8 (248), so that they cover N. With a persistent grid a CTA's
 * time is about (its tiles) x (panel width); mixed is taken when its estimate is lower: at the headline 256 tiles
 * of 256 columns on 132 SMs cost 2 x 256 per CTA, 264 tiles of 248 (one panel of 256) cost 248 + 256, 1.6% less.
 * MG_WS_MIXED=0 turns it off (A/B runs), MG_WS_MIXED=1 takes it wherever the panels fit N (tests). */
template <class C> void choose_panels(long long unit_rows, int n, int G, int &tiles_n, int &nw) {
    if constexpr (C::MIXED) {
        const char *env = getenv("MG_WS_MIXED");   /* read per launch: A/B runs and tests switch it */
        if (env && strcmp(env, "0") == 0) return;
        const bool force = env && strcmp(env, "1") == 0;   /* whenever the panels fit N (tests) */
        (void)mg_ws_mixed_panels(unit_rows, n, G, C::BN, C::BN_NARROW, force, &tiles_n, &nw);   /* src/ws_policy.h */
    }
}

/* K padded so that a row of K elements is a multiple of 16 bytes (TMA's global stride rule). */
template <class C> int64_t padded_k(int64_t k) {
    const int64_t q = 16 / C::T::kElem;
    return (k + q - 1) / q * q;
}

/* Clusters of C::CLUSTER CTAs of kern that can be resident at once on the current device (cached per device:
 * cudaOccupancyMaxActiveClusters is a host-side query, not free per launch). Falls back to num_sms / CLUSTER when
 * the query fails (the grid is persistent, so a too-large count is only slower, never wrong). */
template <class C, class K> int max_active_clusters(K kern, const cudaLaunchConfig_t *launch_cfg, int sms) {
    static std::atomic<int> cache[64];
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) {
        (void)cudaGetLastError();
        dev = -1;
    }
    if (dev >= 0) {
        const int v = cache[dev].load(std::memory_order_relaxed);
        if (v > 0) return v;
    }
    cudaLaunchConfig_t q = *launch_cfg;
    q.gridDim = dim3((unsigned)(C::CLUSTER * (sms / C::CLUSTER > 0 ? sms / C::CLUSTER : 1)), 1, 1);
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, (void *)kern, &q) != cudaSuccess) {
        (void)cudaGetLastError(); /* not sticky: do not let it fail the launch check */
        return sms / C::CLUSTER;  /* not cached: ask again next time */
    }
    if (dev >= 0 && n > 0) cache[dev].store(n, std::memory_order_relaxed);
    return n; /* 0: the cluster does not fit; the caller reports it */
}

inline size_t align256(size_t v) { return (v + 255) & ~(size_t)255; }

/* Stream-K workspace for a grid of G CTAs: the accumulator slots, then the flags, as the LAST bytes of the
 * workspace. The flags region has one size and one place for every configuration (G x 2 ints: at most 2 consumers
 * per CTA), so a launcher with more than one tile configuration (kernel 4: the small-M one) always finds the flags
 * the previous launch left at zero, whichever configuration that was; only the slots before them differ in size. */
template <class C> size_t sk_part_bytes(int G) {
    return align256((size_t)G * C::CONSUMERS * (C::BN / 2) * 128 * sizeof(float));
}
inline size_t sk_flag_bytes(int G) { return align256((size_t)G * 2 * sizeof(int)); }
template <class C> size_t sk_slot_bytes(int G) { return sk_part_bytes<C>(G) + sk_flag_bytes(G); }

/* Multiprocessors of the current device (0 if the query fails). */
inline int device_sms() {
    int d = 0, n = 0;
    if (cudaGetDevice(&d) != cudaSuccess || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

/* Workspace bytes stream-K may need for problem p or any sub-batch of it (mg_forward_rows: m <= p->m),
 * on the current device; 0 when it can never be used (clusters, K = 0, or too little work: the tail's k-iteration
 * count grows with m, so the full M bounds it). The plan zeroes its workspace once (the flags start at 0). */
template <class C> size_t sk_workspace_bytes(const mg_problem *p) {
    if (C::CLUSTER != 1 || p->k == 0) return 0;
    const int G = device_sms();
    if (G <= 0) return 0;
    /* the most tiles any m <= M can split (run(): at most G / 2), and the fewest (m = 1: one tile row) */
    const long long tiles_n = mg_cdiv(p->n, C::BN), tiles = (long long)mg_cdiv(p->m, C::BM) * tiles_n;
    const long long most = tiles < G / 2 ? tiles : G / 2;
    if (tiles_n > G / 2 || most * mg_cdiv(p->k, C::BK) < 4LL * G) return 0;
    return sk_slot_bytes<C>(G);
}

/* REMAINDER SPLIT (header): where choose_panels took exactly one wide panel and src/ws_policy.h's mg_ws_rem_chunks
 * agrees, run every panel narrow and split the r = N - (BN - 8) tiles_n remainder columns into k-chunks. Needs the
 * prepared (BN - 8)-row and 8-row W descriptors and rem_ws_bytes of workspace after the launcher's own region.
 * MG_WS_RSPLIT=0 turns it off, =1 takes it wherever one wide panel was taken (tests); MG_WS_RCHUNKS=n (2..16)
 * sets the most chunks (A/B runs). Read per launch. */
template <class C> size_t rem_ws_bytes(const mg_problem *p) {
    if (!C::REM_SPLIT || p->max_dim != 1) return 0;
    /* + the stream-K flags' size as slack: the region never reaches the workspace's last bytes (run() checks) */
    return align256((size_t)MG_WS_REM_MAX_CHUNKS * (C::BN - C::BN_NARROW) * (size_t)p->m * sizeof(float)) +
           sk_flag_bytes(device_sms());
}
template <class C>
void choose_rem_split(mg_launch_args *a, Params &prm, size_t own_ws, long long unit_rows, int sms, long long nk,
                      const CUtensorMap *bnar, const CUtensorMap *brem) {
    const mg_problem *p = &a->p;
    const char *env = getenv("MG_WS_RSPLIT");
    if (env && strcmp(env, "0") == 0) return;
    const char *ce = getenv("MG_WS_RCHUNKS");
    int most = ce ? atoi(ce) : MG_WS_REM_MAX_CHUNKS;
    if (most < 2 || most > MG_WS_REM_MAX_CHUNKS) most = MG_WS_REM_MAX_CHUNKS;
    const int ch = mg_ws_rem_chunks(unit_rows, sms, prm.tiles_n, prm.nw, nk, p->max_dim, most,
                                    env && strcmp(env, "1") == 0);
    const long long r = (long long)p->n - (long long)C::BN_NARROW * prm.tiles_n;
    if (ch <= 0 || r < 1 || r > C::BN - C::BN_NARROW || !a->ws) return;
    const size_t need = (size_t)ch * (size_t)r * (size_t)p->m * sizeof(float);
    if (own_ws + need + sk_flag_bytes(sms) > a->ws_bytes) return;   /* never into the stream-K flags */
    prm.rem = reinterpret_cast<float *>(static_cast<char *>(a->ws) + own_ws);
    prm.rem_n0 = C::BN_NARROW * prm.tiles_n;
    prm.rem_w = (int)r;
    prm.rem_chunks = ch;
    prm.nw = 0;
    memcpy(&prm.b[0], bnar, sizeof(CUtensorMap));
    memcpy(&prm.brem, brem, sizeof(CUtensorMap));
    a->rem = prm.rem;
    a->rem_cols = (int)r;
    a->rem_chunks = ch;
}

/* Launches the kernel. The descriptors in prm must already describe x (a) and W (b); bias, partial, shape are
 * filled here. Sets a->ntiles. own_ws: the bytes at the start of the workspace that the launcher itself uses for
 * this launch (padded or split x). The stream-K slots and flags are the LAST sk_slot_bytes of the workspace: a
 * place that does not move with a sub-batch's m (mg_forward_rows), so the flags found there are the ones the
 * previous launch left at zero, whatever m it had (the launcher's own region grows with m and would overlap
 * them otherwise). */
template <class C>
mg_status run(mg_launch_args *a, Params &prm, size_t own_ws = 0, const CUtensorMap *bnar = nullptr,
              const CUtensorMap *brem = nullptr) {
    const mg_problem *p = &a->p;
    prm.bias = a->b;
    prm.partial = a->partial;
    prm.m = p->m;
    prm.n = p->n;
    prm.k = p->k;
    prm.max_dim = p->max_dim;
    prm.tiles_n = mg_cdiv(p->n, C::BN);
    prm.nw = prm.tiles_n;
    {
        const char *sh = getenv("MG_WS_SHIFT");   /* read per launch: A/B runs and tests switch it */
        prm.shift = !(sh && strcmp(sh, "0") == 0);
    }
    long long tiles = (long long)mg_cdiv(p->m, C::BM) * prm.tiles_n;
    a->ntiles = p->max_dim == 1 ? prm.tiles_n : mg_cdiv(p->m, C::SLAB);
    if (tiles == 0) return MG_OK;
    if (tiles > INT32_MAX) return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_ws: too many tiles (%lld)", tiles);
    const int sms = a->num_sms > 0 ? a->num_sms : 1;
    auto kern = ws_kernel<C>;
    /* Idempotent; cheap enough per launch, and safe under concurrent plans (no static flag to race on). */
    MG_CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM_BYTES));
    static const bool verbose = getenv("MG_VERBOSE") != nullptr;   /* launch geometry, for tuning runs */
    if constexpr (C::CLUSTER == 1) {
        int grid = (int)(tiles < sms ? tiles : sms);
        prm.dp_tiles = (int)tiles;
        prm.sk_tiles = 0;
        /* Stream-K (header comment): when the tiles would leave more than half the SMs idle (small M), all of
         * them are split into `sms` equal k-ranges, if each range gets at least 4 k-iterations. Not for the
         * last partial wave of a larger problem (r14: the headline ran 11-47% SLOWER that way: CTAs at
         * different k offsets of the tiles that share a W panel break the lockstep that lets L2 serve the
         * panel to all of them; notes/04_wgmma_ws.md "Stream-K"). */
        static const bool sk_on = !(getenv("MG_WS_STREAMK") && strcmp(getenv("MG_WS_STREAMK"), "0") == 0);
        const long long nk = mg_cdiv(p->k, C::BK);
        const size_t slots = sk_slot_bytes<C>(sms);
        if (sk_on && nk > 0 && 2 * tiles <= sms && tiles * nk >= 4LL * sms && a->ws && a->ws_bytes >= own_ws + slots) {
            char *sk_ws = static_cast<char *>(a->ws) + (a->ws_bytes - slots);
            prm.dp_tiles = 0;
            prm.sk_tiles = (int)tiles;
            prm.sk_part = reinterpret_cast<float *>(sk_ws);
            prm.sk_flag = reinterpret_cast<int *>(static_cast<char *>(a->ws) + (a->ws_bytes - sk_flag_bytes(sms)));
            grid = sms;
        } else if (C::MIXED) {
            choose_panels<C>(mg_cdiv(p->m, C::BM), p->n, sms, prm.tiles_n, prm.nw);
            tiles = (long long)mg_cdiv(p->m, C::BM) * prm.tiles_n;
            if (tiles > INT32_MAX) return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_ws: too many tiles (%lld)", tiles);
            prm.dp_tiles = (int)tiles;
            grid = (int)(tiles < sms ? tiles : sms);
            if (p->max_dim == 1) a->ntiles = prm.tiles_n;
            if constexpr (C::REM_SPLIT) {
                if (bnar && brem) choose_rem_split<C>(a, prm, own_ws, mg_cdiv(p->m, C::BM), sms, nk, bnar, brem);
            }
        }
        if (verbose)
            fprintf(stderr, "wgmma_ws: tile %dx%d, %d consumer(s), %d stages; tiles %lld, grid %d, whole tiles %d, "
                            "stream-K tiles %d, k-blocks %lld, column panels %d (%d of %d columns, the rest %d), "
                            "remainder split %d columns in %d k-chunks\n",
                    C::BM, C::BN, C::CONSUMERS, C::STAGES, tiles, grid, prm.dp_tiles, prm.sk_tiles, nk, prm.tiles_n,
                    prm.nw, C::BN, C::BN_NARROW, prm.rem_w, prm.rem_chunks);
        kern<<<grid, C::THREADS, C::SMEM_BYTES, (cudaStream_t)a->stream>>>(prm);
        MG_LAUNCH_CHECK();
        return MG_OK;
    } else {
        /* Persistent grid of clusters: as many as can be resident at once (a GPC whose SM count is odd leaves
         * an SM idle, so this can be below num_sms / CLUSTER), at most one per scheduling unit. */
        cudaLaunchAttribute attr[1] = {};
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = C::CLUSTER;
        attr[0].val.clusterDim.y = 1;
        attr[0].val.clusterDim.z = 1;
        cudaLaunchConfig_t cfg = {};
        cfg.blockDim = dim3(C::THREADS, 1, 1);
        cfg.dynamicSmemBytes = C::SMEM_BYTES;
        cfg.stream = (cudaStream_t)a->stream;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        const int clusters_max = max_active_clusters<C>(kern, &cfg, sms);
        if (clusters_max < 1)
            return mg_set_error(MG_ERR_UNSUPPORTED,
                                "wgmma_ws: no cluster of %d CTAs (%d threads, %d B shared memory each) fits this GPU",
                                C::CLUSTER, C::THREADS, C::SMEM_BYTES);
        const long long units_m = mg_cdiv(p->m, C::BM * C::CLUSTER);
        if (C::MIXED) {
            choose_panels<C>(units_m, p->n, clusters_max, prm.tiles_n, prm.nw);
            if (p->max_dim == 1) a->ntiles = prm.tiles_n;
        }
        const long long units = units_m * prm.tiles_n;
        if (units > INT32_MAX) return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_ws: too many tiles (%lld units)", units);
        const int clusters = (int)(units < clusters_max ? units : clusters_max);
        cfg.gridDim = dim3((unsigned)(clusters * C::CLUSTER), 1, 1);
        if (verbose)
            fprintf(stderr, "wgmma_ws: cluster %d, max active clusters %d, units %lld, grid %d CTAs, smem %d B, "
                            "column panels %d (%d of %d columns, the rest %d)\n",
                    C::CLUSTER, clusters_max, units, clusters * C::CLUSTER, C::SMEM_BYTES, prm.tiles_n, prm.nw, C::BN,
                    C::BN_NARROW);
        MG_CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, prm));
        MG_LAUNCH_CHECK();
        return MG_OK;
    }
}

/* TMA descriptor of an operand: rows x k elements, row stride ld elements, box (box_rows x BK). make_map: the
 * uniform schemes (A and B alike); make_map_a / make_map_b: the A (x) / B (W) operand of any scheme. */
template <class C>
mg_status make_map(CUtensorMap *map, const void *base, int64_t rows, int64_t k, int64_t ld, int box_rows) {
    return mg_make_tma_2d(map, base, C::T::kDtype, (uint64_t)rows, (uint64_t)k, (uint64_t)ld * C::T::kElem,
                          (uint32_t)box_rows, (uint32_t)C::BK, C::SWIZZLE_A);
}
template <class C>
mg_status make_map_a(CUtensorMap *map, const void *base, int64_t rows, int64_t k, int64_t ld, int box_rows) {
    return mg_make_tma_2d(map, base, C::T::kDtypeA, (uint64_t)rows, (uint64_t)k, (uint64_t)ld * C::T::kElemA,
                          (uint32_t)box_rows, (uint32_t)C::BK, C::SWIZZLE_A);
}
template <class C>
mg_status make_map_b(CUtensorMap *map, const void *base, int64_t rows, int64_t k, int64_t ld, int box_rows) {
    return mg_make_tma_2d(map, base, C::T::kDtypeB, (uint64_t)rows, (uint64_t)k, (uint64_t)ld * C::T::kElemB,
                          (uint32_t)box_rows, (uint32_t)C::BK, C::SWIZZLE_B);
}

/* kBF16x3RS prepare: W (rows x k fp32, dense) -> hi, lo (rows x ld bf16, ld a multiple of 32 >= k), split with
 * the rules above and K-permuted within each 32-column block (rs_perm_src); columns >= k are 0. One thread per
 * (row, 32-column block): it reads the block's 32 floats and writes 4 x 16 bytes of hi and of lo, where 16-byte
 * word j holds positions 8j .. 8j + 7 = step j / 2, half j % 2, pairs q = 0..3. */
template <int UNUSED = 0>
__global__ void __launch_bounds__(256) rs_split_w_kernel(const float *__restrict__ w, int64_t rows, int64_t k,
                                                          int64_t ld, bool vec, uint4 *__restrict__ hi,
                                                          uint4 *__restrict__ lo) {
    const int64_t blocks = ld / 32;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows * blocks;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / blocks, c0 = (i % blocks) * 32;
        const float *src = w + r * k + c0;
        float v[32];
        if (vec) { /* k % 4 == 0 and w 16-byte aligned: a float4 is wholly inside or wholly past k */
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const float4 f = c0 + 4 * j < k ? __ldg(reinterpret_cast<const float4 *>(src) + j)
                                                : make_float4(0.f, 0.f, 0.f, 0.f);
                v[4 * j] = f.x; v[4 * j + 1] = f.y; v[4 * j + 2] = f.z; v[4 * j + 3] = f.w;
            }
        } else {
#pragma unroll
            for (int j = 0; j < 32; j++) v[j] = c0 + j < k ? __ldg(src + j) : 0.f;
        }
        uint4 *h = hi + (r * ld + c0) / 8, *l = lo + (r * ld + c0) / 8;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint32_t hw[4], lw[4];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int p = 8 * j + 2 * q;  /* positions p, p + 1 <- columns rs_perm_src(p), + 1 */
                static_assert(rs_perm_src(1) == rs_perm_src(0) + 1, "pairs stay adjacent");
                rs_split_pair(v[rs_perm_src(p)], v[rs_perm_src(p) + 1], hw[q], lw[q]);
            }
            h[j] = make_uint4(hw[0], hw[1], hw[2], hw[3]);
            l[j] = make_uint4(lw[0], lw[1], lw[2], lw[3]);
        }
    }
}

inline int64_t rs_w_ld(int64_t k) { return (k + 31) / 32 * 32; }

template <int UNUSED = 0> /* a template, so that only the TUs that call it instantiate the kernel */
inline mg_status rs_split_w(const float *w, int64_t rows, int64_t k, uint16_t *hi, uint16_t *lo, void *stream) {
    const int64_t ld = rs_w_ld(k);
    const int64_t work = rows * (ld / 32);
    if (work == 0) return MG_OK;
    const bool vec = k % 4 == 0 && (uintptr_t)w % 16 == 0;
    const int64_t blocks = (work + 255) / 256;
    rs_split_w_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, (cudaStream_t)stream>>>(
        w, rows, k, ld, vec, reinterpret_cast<uint4 *>(hi), reinterpret_cast<uint4 *>(lo));
    MG_LAUNCH_CHECK();
    return MG_OK;
}

/* Host-side state kept in mg_prepared::host: the W descriptors (aligned as CUtensorMap requires). Kernel 4: one per
 * tile configuration (main, small-M, mid-M: their W boxes differ in rows); kernel 6: W hi, W lo. */
struct PreparedHost {
    CUtensorMap b[6];   /* kernel 4: per tile configuration, then the main one's remainder-split boxes */
};

inline mg_status alloc_host(mg_prepared *out) {
    /* CUtensorMap is alignas(64) or alignas(128) depending on the CUDA version; sizeof is a multiple of it. */
    void *h = aligned_alloc(alignof(PreparedHost), sizeof(PreparedHost));
    if (!h) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "wgmma_ws: host allocation failed");
    memset(h, 0, sizeof(PreparedHost));
    out->host = h;
    return MG_OK;
}

inline void release_prepared(mg_prepared *prep) {
    for (int i = 0; i < 4; i++) {
        if (prep->buf[i]) cudaFree(prep->buf[i]); /* release cannot report; a failed free leaks at worst */
        prep->buf[i] = NULL;
        prep->bytes[i] = 0;
    }
    free(prep->host);
    prep->host = NULL;
}

inline mg_status dev_alloc(mg_prepared *out, int slot, size_t bytes, const char *what) {
    cudaError_t e = cudaMalloc(&out->buf[slot], bytes);
    if (e != cudaSuccess) {
        out->buf[slot] = NULL;
        return mg_set_error(e == cudaErrorMemoryAllocation ? MG_ERR_OUT_OF_MEMORY : MG_ERR_CUDA,
                            "cudaMalloc of %zu bytes for %s: %s", bytes, what, cudaGetErrorString(e));
    }
    out->bytes[slot] = bytes;
    return MG_OK;
}


}  // namespace mgws

#endif /* MG_WGMMA_WS_CUH */
