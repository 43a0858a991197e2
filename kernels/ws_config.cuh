/* ws_config.cuh: the compile-time configuration of the warp-specialized wgmma kernel (kernels 4 and 6) and the
 * parameters it is launched with. The design, role by role, is in ws_kernel.cuh; measurements: notes/04_wgmma_ws.md,
 * notes/05_06_split.md.
 *   Scheme     what the operands are and which wgmma consumes them (tf32, bf16, or fp32 x split in registers);
 *   Cfg        one tile configuration (a tile_configs/ row) with every size derived from it, checked by static_assert;
 *   Params     the __grid_constant__ kernel parameters: TMA descriptors, pointers, and the launch plan's fields
 *              (src/ws_policy.h mg_ws_plan, made on the host before the launch; the kernel decides nothing). */
#ifndef MG_WS_CONFIG_CUH
#define MG_WS_CONFIG_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "hopper.cuh"
#include "mg_kernel.h"
#include "mg_tiles.h"
#include "ws_policy.h"

namespace mgws {

enum class Scheme : int {
    kTF32 = 0,     /* fp32 operands, tf32 wgmma (m64nNk8), float bias (kernel 4) */
    kBF16 = 1,     /* bf16 operands, bf16 wgmma (m64nNk16), bf16 bias (kernel 4) */
    kBF16x3RS = 3, /* fp32 mode (kernel 6): the fp32 x tile split to bf16 hi/lo in registers (A from registers), W hi/lo
                    * tiles prepared once with THE K PERMUTATION (ws_mainloop.cuh), 3 wgmma per k-step, float bias */
};

/* Per scheme: element bytes, tiles per stage and TMA data type of A (x) and B (W), and whether A reaches the tensor
 * core from registers (kRegA). */
template <Scheme S> struct SchemeT;
template <int ELEM, CUtensorMapDataType DT> struct SmemScheme {
    static constexpr int kElemA = ELEM, kElemB = ELEM, kPartsB = 1;
    static constexpr CUtensorMapDataType kDtypeA = DT, kDtypeB = DT;
    static constexpr bool kRegA = false;
};
template <> struct SchemeT<Scheme::kTF32> : SmemScheme<4, CU_TENSOR_MAP_DATA_TYPE_FLOAT32> {
    using Bias = float;
};
template <> struct SchemeT<Scheme::kBF16> : SmemScheme<2, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16> {
    using Bias = __nv_bfloat16;
};
template <> struct SchemeT<Scheme::kBF16x3RS> {
    /* A: ONE fp32 tile (x as the caller gave it); B: W hi (part 0) and W lo (part 1), bf16, K-permuted. */
    static constexpr int kElemA = 4, kElemB = 2, kPartsB = 2;
    static constexpr CUtensorMapDataType kDtypeA = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    static constexpr CUtensorMapDataType kDtypeB = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    static constexpr bool kRegA = true;
    using Bias = float;
};

constexpr int kGroupM = 16;          /* M-tiles per scheduler group (ws_scheduler.cuh) */
constexpr int kProducerRegs = 40;    /* the producer only needs addresses and loop counters */

/* One tile configuration. CLUSTER is the tile_configs/ column; only 1 is built (clusters of 2 CTAs multicasting the W
 * tile measured no gain and were removed: notes/04_wgmma_ws.md "Cluster 2"). */
template <Scheme S_, int BM_, int BN_, int BK_, int STAGES_, int CONSUMERS_, int CLUSTER_>
struct Cfg {
    static constexpr Scheme S = S_;
    using T = SchemeT<S_>;
    static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, CONSUMERS = CONSUMERS_;
    static constexpr int B_PARTS = T::kPartsB;
    static constexpr int THREADS = 128 * (CONSUMERS + 1);
    static constexpr int A_ROW_BYTES = BK * T::kElemA;        /* one smem row = BK elements of K */
    static constexpr int B_ROW_BYTES = BK * T::kElemB;
    static constexpr int KSTEPS = B_ROW_BYTES / 32;           /* a wgmma k-step reads 32 bytes of K (of B) */
    static constexpr int A_BYTES = BM * A_ROW_BYTES;          /* the A tile */
    static constexpr int B_BYTES = BN * B_ROW_BYTES;          /* one B tile (per part) */
    static constexpr int STAGE_BYTES = A_BYTES + B_PARTS * B_BYTES;
    static constexpr int RED_BYTES = CONSUMERS * 4 * BN * 4;  /* max_dim 0 cross-warp scratch */
    static constexpr int BAR_BYTES = 2 * STAGES * 8;
    static constexpr int SMEM_BYTES = 1024 /* alignment slack */ + STAGES * STAGE_BYTES + RED_BYTES + BAR_BYTES;
    static constexpr int CONSUMER_REGS = CONSUMERS == 1 ? 240 : 232;  /* 128*40 + 256*232 = 64512 <= 65536 */
    static constexpr int SLAB = 64;                           /* rows per consumer */
    static constexpr CUtensorMapSwizzle SWIZZLE_A =
        A_ROW_BYTES == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    static constexpr CUtensorMapSwizzle SWIZZLE_B =
        B_ROW_BYTES == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
    /* Mixed-width panels (ws_scheduler.cuh "PANELS"): BN-wide and (BN - 8)-wide column panels in one grid, and the
     * remainder split behind them: the smem-operand schemes at BN 256 (register-A wgmma has no n248 form). */
    static constexpr bool MIXED = BN == 256 && !T::kRegA;
    static constexpr int BN_NARROW = BN - 8;
    static constexpr int REM_BYTES = (BN - BN_NARROW) * B_ROW_BYTES;  /* the 8 remainder rows of W in a stage */
    static constexpr int EMPTY_ARRIVALS = 4 * CONSUMERS;      /* lane 0 of every consumer warp releases a stage */

    static_assert(CLUSTER_ == 1, "tile_configs: cluster must be 1 (cluster 2 was removed; notes/04_wgmma_ws.md)");
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
    static_assert(!MIXED || (BN_NARROW * B_ROW_BYTES) % (B_ROW_BYTES * 8) == 0,
                  "the remainder rows start on a swizzle atom (8 rows) of the B tile");
};

/* Kernel parameters (passed __grid_constant__: TMA needs the descriptors' param-space address). Everything but the
 * descriptors and pointers is a field of the launch plan (mg_ws_plan). */
struct Params {
    CUtensorMap a;    /* x */
    CUtensorMap b[2]; /* W (kernel 6: hi, lo); with the remainder split, b[0] has (BN - 8)-row boxes */
    CUtensorMap brem; /* remainder split: W rows [rem_n0, rem_n0 + 8), 8-row boxes (unused otherwise) */
    const void *bias;
    float *partial;
    int m, n, k, max_dim;
    /* stream-K: tiles [0, dp_tiles) run whole, tiles [dp_tiles, dp_tiles + sk_tiles) are split into gridDim.x
     * k-ranges; sk_part holds gridDim.x * CONSUMERS slots of 64 x BN floats, sk_flag as many ints (zero between
     * launches). sk_tiles = 0: every tile whole. */
    float *sk_part;
    int *sk_flag;
    int dp_tiles, sk_tiles;
    /* Column panels: tiles_n of them; the first nw are BN wide, the others BN - 8 (Cfg::MIXED only; otherwise
     * nw = tiles_n = cdiv(N, BN)). */
    int tiles_n, nw;
    /* Remainder split (Cfg::MIXED, max_dim 1): rem_chunks > 0 means every panel is BN - 8 wide (nw = 0) and the
     * rem_w <= 8 columns [rem_n0, rem_n0 + rem_w) are summed in rem_chunks k-chunks by the tiles of panels
     * 0 .. rem_chunks - 1 into rem (mg_launch_plan's layout). */
    float *rem;
    int rem_n0, rem_w, rem_chunks;
};

}  // namespace mgws

#endif /* MG_WS_CONFIG_CUH */
