/* 03_wgmma_tma.cu: kernel 3, Hopper wgmma fed by TMA through an mbarrier ring (tf32 and bf16).
 *
 * What it shows: a CTA computes a BM x BN tile of y = x W^T + b and reduces it on the spot (bias + NaN-propagating
 * max), writing partial maxima only (contract: src/mg_kernel.h). One elected thread (thread 0) issues TMA loads
 * of the A (= x, BM x BK) and B (= W, BN x BK) tiles into a STAGES-deep shared-memory ring, 128B-swizzled, each
 * stage guarded by a "full" mbarrier (arrive.expect_tx + TMA complete_tx) and an "empty" mbarrier (every
 * thread arrives once its warpgroup's wgmmas that read the stage have retired). CONSUMERS warpgroups each own
 * BM / CONSUMERS rows x all BN columns and issue wgmma m64nBNk16 (bf16) / m64nBNk8 (tf32) straight from the
 * swizzled tiles, keeping one wgmma group in flight (wait_group 1) while the next stage is issued.
 * What changed from kernel 2 (mma_sync): the loads are TMA (no address arithmetic, no ldmatrix, hardware
 * swizzle and out-of-bounds zero fill) and the MMA is the asynchronous warpgroup-wide wgmma reading shared
 * memory directly. It is NOT warp-specialised and not persistent: every thread is a consumer, thread 0 is
 * also the producer (that is kernel 4).
 *
 * Conventions: kernels/hopper.cuh (K-major operands, 128-byte swizzle, BK = 128 bytes of K, fragment layout).
 * Tile shapes: tile_configs/wgmma_tma.cfg -> MG_TILE_wgmma_tma_{bf16,tf32} (build/gen/mg_tiles.h).
 *
 * Host side: prepare encodes W's tensor map (on a zero-padded copy of W when K * elem_bytes % 16 != 0 or W is not
 * 16-byte aligned: TMA needs 16-byte row strides and base). plan fixes the instantiation, the grid (row tiles x
 * column tiles) and how x is read: in place by TMA, or (K * elem_bytes % 16 != 0, or x not 16-byte aligned per
 * mg_problem.align) copied into the workspace with a padded leading dimension; the tensor maps still say K
 * columns, so the pad is never read (TMA zero-fills columns >= K, and rows >= M / N). launch checks the pointers
 * against the plan, makes the copy if the plan says so, encodes x's tensor map (it depends on the pointer) and
 * enqueues. Shapes: any M, N >= 1, K >= 0; K = 0 runs no k-iteration: acc = 0 and y = b.
 *
 * tf32: the tensor core reads fp32 bit patterns and uses the top 19 bits (the low 13 mantissa bits are
 * truncated), allowed by the tf32 mode's 2e-3 bar.
 *
 * Run: build/maxgemm run --kernel 3 --precision bf16 --check   (also tf32)
 * Measured (H200, headline M = 1024, N = K = 8192, bf16, max_dim 1, bench/results/h200.csv, run 126): 0.211 ms
 * (653 TFLOP/s, 1.00x kernel 0). Design, prediction, build facts, measurements: notes/03_wgmma_tma.md.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <type_traits>

#include "hopper.cuh"
#include "mg_kernel.h"
#include "mg_tiles.h"

#ifndef MG_TILE_wgmma_tma_bf16
#error "tile_configs/wgmma_tma.cfg must define a 'wgmma_tma bf16' row (run make build/gen/mg_tiles.h)"
#endif
#ifndef MG_TILE_wgmma_tma_tf32
#error "tile_configs/wgmma_tma.cfg must define a 'wgmma_tma tf32' row (run make build/gen/mg_tiles.h)"
#endif

namespace {

/* ---------------------------------------------------------------------------------------------- */
/* Element types                                                                                    */
/* ---------------------------------------------------------------------------------------------- */
template <typename T>
struct elem;
template <>
struct elem<float> {
    static constexpr CUtensorMapDataType tma = CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    static __device__ __forceinline__ float to_f(float v) { return v; }
};
template <>
struct elem<__nv_bfloat16> {
    static constexpr CUtensorMapDataType tma = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    static __device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
};

/* ---------------------------------------------------------------------------------------------- */
/* Compile-time tile configuration (from one tile_configs row) and its shared-memory map            */
/* ---------------------------------------------------------------------------------------------- */
template <typename T, int BM_, int BN_, int BK_, int STAGES_, int CONSUMERS_, int CLUSTER_>
struct tile {
    using elem_t = T;
    static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, CONSUMERS = CONSUMERS_;
    static constexpr int ROW_BYTES = 128;                       /* one 128B-swizzled row of K per operand row */
    static constexpr int THREADS = CONSUMERS * 128;
    static constexpr int NWARPS = THREADS / 32;
    static constexpr int WM = BM / CONSUMERS;                   /* rows per consumer warpgroup */
    static constexpr int MT = WM / 64;                          /* m64 sub-tiles per warpgroup */
    static constexpr int KSTEPS = ROW_BYTES / 32;               /* wgmma k-steps per stage: 32 bytes of K each */
    static constexpr int A_BYTES = BM * ROW_BYTES;              /* one stage of A */
    static constexpr int B_BYTES = BN * ROW_BYTES;              /* one stage of B */
    static constexpr int STAGE_BYTES = A_BYTES + B_BYTES;       /* = expect_tx per stage (full boxes, even at edges) */
    static constexpr int RED_FLOATS = NWARPS * BN;              /* max_dim 0: per-warp column maxima */
    static constexpr size_t SMEM_BYTES = 1024                   /* slack to align the base to 1024 */
                                         + (size_t)STAGES * STAGE_BYTES + (size_t)RED_FLOATS * 4 +
                                         (size_t)2 * STAGES * sizeof(uint64_t);

    static_assert(BK * (int)sizeof(T) == ROW_BYTES,
                  "wgmma_tma: bk must be 128 bytes of K (64 for bf16, 32 for tf32): tile_configs/wgmma_tma.cfg");
    static_assert(CLUSTER_ == 1, "wgmma_tma does not use clusters (that is kernel 4): cluster must be 1");
    static_assert(CONSUMERS >= 1 && BM % CONSUMERS == 0 && WM % 64 == 0,
                  "wgmma_tma: bm / consumers must be a multiple of 64 (m64 wgmma per warpgroup)");
    static_assert(BN == 64 || BN == 128 || BN == 192 || BN == 256,
                  "wgmma_tma: bn must be 64, 128, 192 or 256 (the wgmma N sizes hopper.cuh provides)");
    static_assert(BM <= 256 && BN <= 256, "wgmma_tma: a TMA box has at most 256 rows");
    static_assert(MT * BN / 2 <= 128, "wgmma_tma: more than 128 fp32 accumulators per thread would spill");
    static_assert(THREADS <= 1024, "wgmma_tma: too many consumer warpgroups");
    static_assert(SMEM_BYTES <= 227 * 1024, "wgmma_tma: stages x (bm + bn) x 128 B exceeds 227 KiB of smem");
    static_assert(A_BYTES % 1024 == 0 && B_BYTES % 1024 == 0, "stage tiles must keep 1024-byte alignment");
};

using tile_bf16 = tile<__nv_bfloat16, MG_TILE_wgmma_tma_bf16>;
using tile_tf32 = tile<float, MG_TILE_wgmma_tma_tf32>;

/* One k-step of one m64 sub-tile: D(64 x BN) += A(64 x kstep) B(BN x kstep)^T. */
template <typename T, int BN>
__device__ __forceinline__ void mma_step(float (&d)[BN / 2], uint64_t da, uint64_t db) {
    if constexpr (std::is_same<T, float>::value)
        mg_wgmma_tf32<BN>(d, da, db, 1);
    else
        mg_wgmma_bf16<BN>(d, da, db, 1);
}

/* ---------------------------------------------------------------------------------------------- */
/* The kernel. Grid: x = row tiles (fastest: neighbouring CTAs share a W tile in L2), y = column tiles.  */
/* ---------------------------------------------------------------------------------------------- */
template <class C>
__global__ void __launch_bounds__(C::THREADS, 1)
    wgmma_tma_kernel(const __grid_constant__ CUtensorMap tm_x, const __grid_constant__ CUtensorMap tm_w,
                     const typename C::elem_t *__restrict__ bias, float *__restrict__ partial, int M, int N, int K,
                     int max_dim) {
    using T = typename C::elem_t;
    constexpr int BM = C::BM, BN = C::BN, BK = C::BK, STAGES = C::STAGES;

    /* Dynamic smem, base rounded up to 1024 bytes in the shared window (the 128B swizzle atom). */
    extern __shared__ unsigned char smem_raw[];
    unsigned char *smem = smem_raw + ((1024u - (mg_smem_u32(smem_raw) & 1023u)) & 1023u);
    unsigned char *sA = smem;                                         /* STAGES x BM rows x 128 B */
    unsigned char *sB = sA + (size_t)STAGES * C::A_BYTES;             /* STAGES x BN rows x 128 B */
    float *red = reinterpret_cast<float *>(sB + (size_t)STAGES * C::B_BYTES); /* NWARPS x BN */
    uint64_t *full = reinterpret_cast<uint64_t *>(red + C::RED_FLOATS);        /* STAGES */
    uint64_t *empty = full + STAGES;                                           /* STAGES */

    const int tid = threadIdx.x;
    const int wg = tid / 128;           /* consumer warpgroup */
    const int warp = (tid % 128) / 32;  /* warp within the warpgroup */
    const int lane = tid % 32;
    const int tile_m = blockIdx.x, tile_n = blockIdx.y;
    const int m0 = tile_m * BM, n0 = tile_n * BN;
    const int KT = (K + BK - 1) / BK;   /* 0 when K = 0: no loads, no waits, acc stays 0 */

    if (tid == 0) {
        for (int s = 0; s < STAGES; s++) {
            mg_mbar_init(&full[s], 1);              /* the producer's arrive.expect_tx; the rest is tx bytes */
            mg_mbar_init(&empty[s], C::THREADS);    /* every consumer thread releases the stage */
        }
        mg_fence_mbarrier_init();                   /* visible to the async proxy (TMA) before first use */
        if (KT > 0) {
            mg_tma_prefetch_desc(&tm_x);
            mg_tma_prefetch_desc(&tm_w);
        }
    }
    __syncthreads();

    /* Producer step (thread 0 only): k-tile kt into stage kt % STAGES. Boxes at (col = k, row = m0 / n0). */
    auto load = [&](int kt) {
        const int s = kt % STAGES;
        mg_mbar_arrive_expect_tx(&full[s], C::STAGE_BYTES);
        mg_tma_load_2d(sA + (size_t)s * C::A_BYTES, &tm_x, &full[s], kt * BK, m0);
        mg_tma_load_2d(sB + (size_t)s * C::B_BYTES, &tm_w, &full[s], kt * BK, n0);
    };

    /* Prologue: fill the ring (fewer stages when K is short). */
    if (tid == 0) {
        const int pro = KT < STAGES ? KT : STAGES;
        for (int kt = 0; kt < pro; kt++) load(kt);
    }

    float acc[C::MT][BN / 2];
#pragma unroll
    for (int mt = 0; mt < C::MT; mt++)
#pragma unroll
        for (int i = 0; i < BN / 2; i++) acc[mt][i] = 0.f;

    for (int kt = 0; kt < KT; kt++) {
        const int s = kt % STAGES;
        mg_mbar_wait(&full[s], (uint32_t)(kt / STAGES) & 1u);  /* the u-th fill of stage s has landed */

        const unsigned char *a_st = sA + (size_t)s * C::A_BYTES + (size_t)wg * C::WM * C::ROW_BYTES;
        const uint64_t db0 = mg_make_desc_k128(sB + (size_t)s * C::B_BYTES);
#pragma unroll
        for (int mt = 0; mt < C::MT; mt++) mg_fence_acc(acc[mt]);
        mg_wgmma_fence();
#pragma unroll
        for (int j = 0; j < C::KSTEPS; j++) {
            const uint64_t db = mg_desc_advance(db0, j * 32);
#pragma unroll
            for (int mt = 0; mt < C::MT; mt++) {
                const uint64_t da = mg_desc_advance(mg_make_desc_k128(a_st + (size_t)mt * 64 * C::ROW_BYTES), j * 32);
                mma_step<T, BN>(acc[mt], da, db);
            }
        }
        mg_wgmma_commit();
#pragma unroll
        for (int mt = 0; mt < C::MT; mt++) mg_fence_acc(acc[mt]);

        /* Keep this k-tile's group in flight; the previous one (k-tile kt-1) has now retired, so its stage
         * may be refilled: this thread's (and warpgroup's) wgmma reads of it are complete. */
        mg_wgmma_wait<1>();
#pragma unroll
        for (int mt = 0; mt < C::MT; mt++) mg_fence_acc(acc[mt]);
        if (kt > 0) {
            const int pk = kt - 1, ps = pk % STAGES;
            mg_mbar_arrive(&empty[ps]);
            if (tid == 0 && pk + STAGES < KT) {
                /* All THREADS released k-tile pk (phase pk / STAGES of empty[ps]): the TMA may overwrite. */
                mg_mbar_wait(&empty[ps], (uint32_t)(pk / STAGES) & 1u);
                load(pk + STAGES);
            }
            __syncwarp();  /* reconverge warp 0 before the next .sync.aligned wgmma */
        }
    }
    mg_wgmma_wait<0>();
#pragma unroll
    for (int mt = 0; mt < C::MT; mt++) mg_fence_acc(acc[mt]);

    /* ------------------------------------------------------------------------------------------ */
    /* Epilogue: y = acc + b[col]; NaN-propagating max; rows >= M and columns >= N never take part.  */
    /* Fragment (hopper.cuh): acc[mt][4i + j] is (row r, col 8i + 2q + j), acc[mt][4i + 2 + j] is     */
    /* (row r + 8, same col), r = wg * WM + mt * 64 + 16 * warp + g, with g = lane / 4, q = lane % 4.  */
    /* ------------------------------------------------------------------------------------------ */
    const int g = lane >> 2, q = lane & 3;
    const float NEG_INF = -__int_as_float(0x7f800000);
    if (max_dim == 1) {
        float r0[C::MT], r1[C::MT];
#pragma unroll
        for (int mt = 0; mt < C::MT; mt++) r0[mt] = r1[mt] = NEG_INF;
#pragma unroll
        for (int i = 0; i < BN / 8; i++) {
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const int col = n0 + 8 * i + 2 * q + j;
                if (col < N) {
                    const float bv = elem<T>::to_f(bias[col]);
#pragma unroll
                    for (int mt = 0; mt < C::MT; mt++) {
                        r0[mt] = mg_nanmaxf(r0[mt], acc[mt][4 * i + j] + bv);
                        r1[mt] = mg_nanmaxf(r1[mt], acc[mt][4 * i + 2 + j] + bv);
                    }
                }
            }
        }
#pragma unroll
        for (int mt = 0; mt < C::MT; mt++) {
            /* The 4 lanes of a quad (same g) hold the same two rows: combine their columns. */
#pragma unroll
            for (int o = 1; o <= 2; o <<= 1) {
                r0[mt] = mg_nanmaxf(r0[mt], __shfl_xor_sync(0xffffffffu, r0[mt], o));
                r1[mt] = mg_nanmaxf(r1[mt], __shfl_xor_sync(0xffffffffu, r1[mt], o));
            }
            const int row0 = m0 + wg * C::WM + mt * 64 + 16 * warp + g;
            if (q == 0) {
                /* Each warpgroup owns its rows and all BN columns: no cross-warp combine is needed. */
                if (row0 < M) partial[(size_t)tile_n * M + row0] = r0[mt];
                if (row0 + 8 < M) partial[(size_t)tile_n * M + row0 + 8] = r1[mt];
            }
        }
    } else {
        const int wid = tid / 32; /* warp within the CTA */
#pragma unroll
        for (int i = 0; i < BN / 8; i++) {
#pragma unroll
            for (int j = 0; j < 2; j++) {
                const int cl = 8 * i + 2 * q + j;
                const float bv = (n0 + cl < N) ? elem<T>::to_f(bias[n0 + cl]) : 0.f;
                float c = NEG_INF;
#pragma unroll
                for (int mt = 0; mt < C::MT; mt++) {
                    const int row0 = m0 + wg * C::WM + mt * 64 + 16 * warp + g;
                    if (row0 < M) c = mg_nanmaxf(c, acc[mt][4 * i + j] + bv);
                    if (row0 + 8 < M) c = mg_nanmaxf(c, acc[mt][4 * i + 2 + j] + bv);
                }
                /* Lanes with the same q (xor over the g bits) hold the same column: 16 rows of this warp. */
                c = mg_nanmaxf(c, __shfl_xor_sync(0xffffffffu, c, 4));
                c = mg_nanmaxf(c, __shfl_xor_sync(0xffffffffu, c, 8));
                c = mg_nanmaxf(c, __shfl_xor_sync(0xffffffffu, c, 16));
                if (g == 0) red[wid * BN + cl] = c;
            }
        }
        __syncthreads();
        for (int cl = tid; cl < BN; cl += C::THREADS) {
            float v = red[cl];
#pragma unroll
            for (int w = 1; w < C::NWARPS; w++) v = mg_nanmaxf(v, red[w * BN + cl]);
            if (n0 + cl < N) partial[(size_t)tile_m * N + n0 + cl] = v;
        }
    }
}

/* ---------------------------------------------------------------------------------------------- */
/* Host side                                                                                        */
/* ---------------------------------------------------------------------------------------------- */

/* Weight-side state (prepare, mg_prepared::state): W's tensor map, W's padded copy if it needed one, and what
 * they were made for. */
struct wt_state {
    CUtensorMap tm_w;   /* 64-byte aligned type: allocated with aligned_alloc */
    void *w_pad;        /* device: W with a 16-byte row stride, when the caller's W could not be read in place */
    int n, k, ld;       /* ld: W's leading dimension (elements) that tm_w reads */
    mg_precision prec;
};

/* How the kernel reads x (the plan's choice, mg_launch_plan::priv). */
enum wt_x_mode {
    WT_X_NONE = 0,      /* K = 0: no k-iterations, x is never read */
    WT_X_IN_PLACE = 1,  /* TMA reads the caller's x (16-byte aligned base, K * elem_bytes % 16 == 0) */
    WT_X_PADDED = 2,    /* launch copies x into the workspace with a 16-byte row stride first, TMA reads the copy */
};

/* The private part of a launch plan (mg_launch_plan::priv): every choice plan made; launch only reads it. */
struct wt_priv {
    int enqueue;        /* 0: M = 0 or N = 0, the partial rows have length 0: nothing to launch */
    int bf16;           /* instantiation: 1 tile_bf16 (bf16 mode), 0 tile_tf32 (tf32 mode) */
    unsigned grid_m;    /* grid.x: row tiles (fastest: neighbouring CTAs share a W tile in L2) */
    unsigned grid_n;    /* grid.y: column tiles (<= 65535) */
    int x_mode;         /* wt_x_mode */
    int64_t x_ld;       /* elements between rows of the x that TMA reads: K in place, padded_ld(K) when padded */
    size_t x_ws_offset; /* WT_X_PADDED: where the padded x starts in the workspace (bytes; 16-byte aligned) */
    size_t x_ws_bytes;  /* WT_X_PADDED: its size, M * x_ld * elem_bytes */
};
static_assert(sizeof(wt_priv) <= sizeof(((mg_launch_plan *)nullptr)->priv.bytes),
              "wt_priv outgrows mg_launch_plan::priv");

static bool prec_ok(mg_precision p) { return p == MG_PREC_TF32 || p == MG_PREC_BF16; }
static int tile_bm(mg_precision p) { return p == MG_PREC_BF16 ? tile_bf16::BM : tile_tf32::BM; }
static int tile_bn(mg_precision p) { return p == MG_PREC_BF16 ? tile_bf16::BN : tile_tf32::BN; }
static int tile_bk(mg_precision p) { return p == MG_PREC_BF16 ? tile_bf16::BK : tile_tf32::BK; }

/* Leading dimension (elements) that makes the row stride a multiple of 16 bytes. */
static int64_t padded_ld(int k, size_t eb) {
    const int64_t q = 16 / (int64_t)eb;
    return ((int64_t)k + q - 1) / q * q;
}
static bool needs_pad(int k, size_t eb) { return ((int64_t)k * (int64_t)eb) % 16 != 0; }

/* Partial rows for a batch of p->m rows: one per column tile (max_dim 1) or row tile (max_dim 0); at least 1, so
 * an empty output still names one (never written, never read: the finalize reduces 0 elements). */
static int wt_rows(const mg_problem *p) {
    if (!prec_ok(p->prec)) return 1;
    const int t = p->max_dim == 1 ? mg_cdiv(p->n, tile_bn(p->prec)) : mg_cdiv(p->m, tile_bm(p->prec));
    return t > 1 ? t : 1;
}

/* Bytes of the padded copy of x a batch of m rows takes (0 when x is never read). */
static size_t wt_x_pad_bytes(const mg_problem *p, int m) {
    if (!prec_ok(p->prec) || p->k <= 0 || m <= 0 || p->n <= 0) return 0;
    const size_t eb = mg_elem_bytes(p->prec);
    return (size_t)m * (size_t)padded_ld(p->k, eb) * eb;
}

static mg_status wt_supports(const mg_problem *p, int sm) {
    if (!prec_ok(p->prec))
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_tma runs tf32 and bf16 only (got %s)",
                            mg_precision_name(p->prec));
    if (sm != 0 && sm != 90)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "wgmma_tma is built for sm_90a (wgmma, TMA) and needs a Hopper GPU (this one is sm_%d)", sm);
    if (p->m < 0 || p->n < 0 || p->k < 0) return mg_set_error(MG_ERR_SHAPE, "wgmma_tma: negative dimension");
    if (mg_cdiv(p->n, tile_bn(p->prec)) > 65535)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_tma: N = %d needs more than 65535 column tiles of %d", p->n,
                            tile_bn(p->prec));
    const size_t eb = mg_elem_bytes(p->prec);
    if ((uint64_t)padded_ld(p->k, eb) * eb >= (1ull << 31))
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_tma: K = %d makes a row wider than 2 GiB", p->k);
    return MG_OK;
}

/* Rows grow with m (max_dim 0) or do not depend on it (max_dim 1). Workspace: the padded copy of x, which a plan
 * takes whenever x cannot be read in place; the plans are made per x alignment (a batch's x may be misaligned
 * whatever the bounds' problem says), so the bound reserves it for every K > 0. */
static void wt_bounds(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes) {
    (void)dev;
    if (partial_rows) *partial_rows = wt_rows(p);
    if (ws_bytes) *ws_bytes = wt_x_pad_bytes(p, p->m);
}

/* Every choice for the problem: the instantiation (precision), the grid, and how x is read (in place by TMA when
 * K * elem_bytes % 16 == 0 and x is 16-byte aligned, mg_problem.align; else a padded copy in the workspace, at
 * offset 0). No option applies to this kernel. */
static mg_status wt_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    (void)opt;
    if (!p || !lp)
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma: plan called with a NULL %s", p ? "launch plan" : "problem");
    mg_status st = wt_supports(p, dev ? dev->sm : 0);
    if (st != MG_OK) return st;
    if (p->max_dim != 0 && p->max_dim != 1)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_tma: max_dim must be normalised to 0 or 1 (got %d)",
                            p->max_dim);
    if ((p->max_dim == 0 && p->m == 0) || (p->max_dim == 1 && p->n == 0))
        return mg_set_error(MG_ERR_SHAPE, "wgmma_tma: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m,
                            p->n, p->max_dim);

    wt_priv pp = {};
    pp.enqueue = p->m != 0 && p->n != 0;
    pp.bf16 = p->prec == MG_PREC_BF16;
    pp.grid_m = (unsigned)mg_cdiv(p->m, tile_bm(p->prec));
    pp.grid_n = (unsigned)mg_cdiv(p->n, tile_bn(p->prec));   /* <= 65535: wt_supports */
    const size_t eb = mg_elem_bytes(p->prec);
    const bool rows16 = !needs_pad(p->k, eb), x16 = (p->align & MG_ALIGN_X16) != 0;
    pp.x_ld = p->k;
    if (!pp.enqueue || p->k == 0) {
        pp.x_mode = WT_X_NONE;
    } else if (rows16 && x16) {
        pp.x_mode = WT_X_IN_PLACE;
    } else {
        /* x with a padded row stride; the tail columns are outside the tensor map and never read. */
        pp.x_mode = WT_X_PADDED;
        pp.x_ld = padded_ld(p->k, eb);
        pp.x_ws_offset = 0;
        pp.x_ws_bytes = wt_x_pad_bytes(p, p->m);
    }
    const size_t ws = pp.x_mode == WT_X_PADDED ? pp.x_ws_offset + pp.x_ws_bytes : 0;

    const int rows = wt_rows(p);
    char how[96];
    if (pp.x_mode == WT_X_NONE)
        snprintf(how, sizeof how, "K = 0: no loads, y = b");
    else if (pp.x_mode == WT_X_IN_PLACE)
        snprintf(how, sizeof how, "x read in place by TMA");
    else
        snprintf(how, sizeof how, "x copied into the workspace with ld %lld (%s)", (long long)pp.x_ld,
                 rows16 ? "x is not 16-byte aligned" : "K * elem_bytes is not a multiple of 16");
    char summary[sizeof lp->summary];
    if (!pp.enqueue)
        snprintf(summary, sizeof summary, "wgmma_tma: empty output (M=%d, N=%d, max_dim %d), nothing to launch", p->m,
                 p->n, p->max_dim);
    else
        snprintf(summary, sizeof summary,
                 "wgmma_tma %s %dx%dx%d, %d stages, %d consumer warpgroups: grid %u x %u, %s, %d partial rows",
                 pp.bf16 ? "bf16" : "tf32", tile_bm(p->prec), tile_bn(p->prec), tile_bk(p->prec),
                 pp.bf16 ? tile_bf16::STAGES : tile_tf32::STAGES, pp.bf16 ? tile_bf16::CONSUMERS : tile_tf32::CONSUMERS,
                 pp.grid_m, pp.grid_n, how, rows);
    mg_plan_simple(lp, rows, ws, summary);
    memcpy(lp->priv.bytes, &pp, sizeof pp);
    return MG_OK;
}

/* rows x k elements of eb bytes at src (row stride k) -> dst with row stride ld >= k, the tail columns zeroed
 * (never read: the tensor map says k columns; zeros keep the buffer deterministic). */
static mg_status copy_padded(void *dst, int64_t ld, const void *src, int rows, int k, size_t eb, cudaStream_t st) {
    MG_CUDA_TRY(cudaMemsetAsync(dst, 0, (size_t)rows * (size_t)ld * eb, st));
    MG_CUDA_TRY(cudaMemcpy2DAsync(dst, (size_t)ld * eb, src, (size_t)k * eb, (size_t)k * eb, (size_t)rows,
                                  cudaMemcpyDeviceToDevice, st));
    return MG_OK;
}

static void wt_release(void *state) {
    wt_state *h = static_cast<wt_state *>(state);
    if (!h) return;
    if (h->w_pad) cudaFree(h->w_pad);
    free(h);
}

/* Weight-side work, once per mg_set_weights: W's padded copy (only if its row stride is not a multiple of 16
 * bytes or W is not 16-byte aligned) and its TMA descriptor. On failure it frees what it made and leaves
 * out->state NULL. */
static mg_status wt_prepare(const mg_problem *p, const mg_device *dev, const void *w, const void *b, mg_prepared *out,
                            void *stream) {
    (void)b;
    (void)dev;
    if (!out) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma prepare: NULL output");
    out->state = NULL;
    out->runner = NULL;
    if (!p) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma prepare: NULL problem");
    if (!prec_ok(p->prec))
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_tma runs tf32 and bf16 only (got %s)",
                            mg_precision_name(p->prec));
    if (p->k == 0 || p->n == 0) return MG_OK; /* no k-iterations / no columns: W is never read */
    if (!w) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma prepare: W is NULL");

    /* aligned_alloc: CUtensorMap is a 64-byte aligned type; the size must be a multiple of the alignment. */
    const size_t hb = (sizeof(wt_state) + 63) / 64 * 64;
    wt_state *h = static_cast<wt_state *>(aligned_alloc(64, hb));
    if (!h) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "wgmma_tma: host allocation of the W descriptor failed");
    memset(h, 0, hb);

    const size_t eb = mg_elem_bytes(p->prec);
    const bool pad = needs_pad(p->k, eb) || ((uintptr_t)w % 16 != 0);
    const int64_t ld = needs_pad(p->k, eb) ? padded_ld(p->k, eb) : p->k;
    const void *wsrc = w;
    cudaStream_t st = (cudaStream_t)stream;
    mg_status s = MG_OK;
    if (pad) {
        const size_t bytes = (size_t)p->n * (size_t)ld * eb;
        cudaError_t e = cudaMalloc(&h->w_pad, bytes);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            h->w_pad = NULL;
            wt_release(h);
            return mg_set_error(MG_ERR_OUT_OF_MEMORY, "wgmma_tma: padded copy of W (%.1f MiB): %s",
                                bytes / 1048576.0, cudaGetErrorString(e));
        }
        s = copy_padded(h->w_pad, ld, w, p->n, p->k, eb, st);
        wsrc = h->w_pad;
    }
    h->n = p->n;
    h->k = p->k;
    h->ld = (int)ld;
    h->prec = p->prec;
    if (s == MG_OK) {
        const CUtensorMapDataType dt = p->prec == MG_PREC_BF16 ? elem<__nv_bfloat16>::tma : elem<float>::tma;
        s = mg_make_tma_2d(&h->tm_w, wsrc, dt, (uint64_t)p->n, (uint64_t)p->k, (uint64_t)ld * eb,
                           (uint32_t)tile_bn(p->prec), (uint32_t)tile_bk(p->prec), CU_TENSOR_MAP_SWIZZLE_128B,
                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
    }
    if (s != MG_OK) {
        wt_release(h);
        return s;
    }
    out->state = h;
    return MG_OK;
}

template <class C>
static mg_status launch_tile(const mg_launch_plan *lp, const wt_priv &pp, const mg_io *io, const wt_state *h,
                             cudaStream_t st) {
    using T = typename C::elem_t;
    const mg_problem *p = &lp->p;
    const int M = p->m, N = p->n, K = p->k;
    const size_t eb = sizeof(T);

    CUtensorMap tm_x, tm_w;
    memset(&tm_x, 0, sizeof tm_x); /* K = 0: never dereferenced by the kernel (no k-iterations) */
    memset(&tm_w, 0, sizeof tm_w);
    if (pp.x_mode != WT_X_NONE) {
        tm_w = h->tm_w;
        const void *xsrc = io->x;
        if (pp.x_mode == WT_X_PADDED) {
            void *xp = static_cast<char *>(io->ws) + pp.x_ws_offset;
            MG_CUDA_TRY(cudaMemcpy2DAsync(xp, (size_t)pp.x_ld * eb, io->x, (size_t)K * eb, (size_t)K * eb, (size_t)M,
                                          cudaMemcpyDeviceToDevice, st));
            xsrc = xp;
        }
        mg_status s = mg_make_tma_2d(&tm_x, xsrc, elem<T>::tma, (uint64_t)M, (uint64_t)K, (uint64_t)pp.x_ld * eb,
                                     (uint32_t)C::BM, (uint32_t)C::BK, CU_TENSOR_MAP_SWIZZLE_128B,
                                     CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
        if (s != MG_OK) return s;
    }

    const dim3 grid(pp.grid_m, pp.grid_n);
    MG_CUDA_TRY(cudaFuncSetAttribute(wgmma_tma_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)C::SMEM_BYTES));
    wgmma_tma_kernel<C><<<grid, C::THREADS, C::SMEM_BYTES, st>>>(tm_x, tm_w, static_cast<const T *>(io->b),
                                                                 io->partial, M, N, K, p->max_dim);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

static mg_status wt_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    if (!lp || !io)
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma: launch called with a NULL %s", lp ? "io" : "launch plan");
    wt_priv pp;
    memcpy(&pp, lp->priv.bytes, sizeof pp);
    if (!pp.enqueue) return MG_OK; /* the partial rows have length 0: nothing to compute */
    const mg_problem *p = &lp->p;
    const bool reads_x = pp.x_mode != WT_X_NONE;
    if (!io->b || !io->partial || (reads_x && !io->x))
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma: NULL pointer:%s%s%s", reads_x && !io->x ? " x" : "",
                            io->b ? "" : " b", io->partial ? "" : " partial");
    const wt_state *h = static_cast<const wt_state *>(state);
    if (reads_x) {
        if (!h)
            return mg_set_error(MG_ERR_NO_WEIGHTS, "wgmma_tma: W's TMA descriptor is missing (prepare did not run)");
        if (h->n != p->n || h->k != p->k || h->prec != p->prec)
            return mg_set_error(MG_ERR_INVALID_ARG,
                                "wgmma_tma: weights were prepared for N=%d K=%d %s, launch has N=%d K=%d %s", h->n,
                                h->k, mg_precision_name(h->prec), p->n, p->k, mg_precision_name(p->prec));
    }
    if (pp.x_mode == WT_X_IN_PLACE && (uintptr_t)io->x % 16 != 0)
        return mg_set_error(MG_ERR_INVALID_ARG,
                            "wgmma_tma: the launch plan reads x in place by TMA, which needs a 16-byte aligned x (got "
                            "%p); the plan was made for an aligned x (mg_problem.align): plan for this pointer's "
                            "alignment (its plan copies x into the workspace)",
                            io->x);
    if (pp.x_mode == WT_X_PADDED && !io->ws)
        return mg_set_error(MG_ERR_INVALID_ARG,
                            "wgmma_tma: the launch plan copies x (K = %d) into %zu bytes of workspace (at offset %zu), "
                            "but the workspace is NULL",
                            p->k, pp.x_ws_bytes, pp.x_ws_offset);
    if (pp.x_mode == WT_X_PADDED && ((uintptr_t)io->ws + pp.x_ws_offset) % 16 != 0)
        return mg_set_error(MG_ERR_INVALID_ARG,
                            "wgmma_tma: the launch plan copies x (K = %d) into the workspace at offset %zu, which must "
                            "be 16-byte aligned for TMA (workspace %p)",
                            p->k, pp.x_ws_offset, io->ws);
    cudaStream_t st = (cudaStream_t)stream;
    return pp.bf16 ? launch_tile<tile_bf16>(lp, pp, io, h, st) : launch_tile<tile_tf32>(lp, pp, io, h, st);
}

} /* namespace */

extern "C" const mg_kernel_ops mg_ops_wgmma_tma = {
    wt_supports, wt_bounds, wt_plan, wt_prepare, wt_release, wt_launch,
};
