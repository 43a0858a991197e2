/* 03_wgmma_tma.cu: kernel 3, Hopper wgmma fed by TMA through an mbarrier ring (tf32 and bf16).
 *
 * Technique: a CTA computes a BM x BN tile of y = x W^T + b and reduces it on the spot (bias + NaN-propagating
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
 * Shapes: any M, N >= 1, K >= 0. TMA needs 16-byte aligned row strides: when K * elem_bytes % 16 != 0, W is
 * copied once (prepare) and x on every launch (into the workspace) with a padded leading dimension; the
 * tensor map still says K columns, so the pad is never read (TMA zero-fills columns >= K, and rows >= M / N).
 * K = 0 runs no k-iteration: acc = 0 and y = b.
 *
 * tf32: the tensor core reads fp32 bit patterns and uses the top 19 bits (the low 13 mantissa bits are
 * truncated), allowed by the tf32 mode's 2e-3 bar.
 *
 * Measured: see notes/03_wgmma_tma.md (H200, M=1024, N=K=8192).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <limits.h>
#include <stdint.h>
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

/* Weight-side state (prepare): W's tensor map, and what it was made for. */
struct w_host {
    CUtensorMap tm_w; /* 64-byte aligned type */
    int n, k, ld;
    mg_precision prec;
};

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

static int wt_partial_tiles(const mg_problem *p) {
    if (!prec_ok(p->prec)) return 1;
    return p->max_dim == 1 ? mg_cdiv(p->n, tile_bn(p->prec)) : mg_cdiv(p->m, tile_bm(p->prec));
}

static size_t wt_workspace_bytes(const mg_problem *p) {
    if (!prec_ok(p->prec) || p->k <= 0) return 0;
    const size_t eb = mg_elem_bytes(p->prec);
    return needs_pad(p->k, eb) ? (size_t)p->m * (size_t)padded_ld(p->k, eb) * eb : 0;
}

static mg_status wt_supports(const mg_problem *p, int sm) {
    if (!prec_ok(p->prec))
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_tma runs tf32 and bf16 only (got %s)",
                            mg_precision_name(p->prec));
    if (sm != 90)
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

static void wt_release(mg_prepared *prep) {
    if (!prep) return;
    if (prep->buf[0]) cudaFree(prep->buf[0]);
    prep->buf[0] = NULL;
    prep->bytes[0] = 0;
    free(prep->host);
    prep->host = NULL;
    prep->ld = 0;
}

/* Weight-side work, once per mg_set_weights: W's padded copy (only if its row stride is not a multiple of 16
 * bytes or W is not 16-byte aligned) and its TMA descriptor. The plan calls wt_release even when this fails. */
static mg_status wt_prepare(const mg_problem *p, const void *w, const void *b, mg_prepared *out, void *stream) {
    (void)b;
    if (!out) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma prepare: NULL output");
    if (!prec_ok(p->prec))
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_tma runs tf32 and bf16 only (got %s)",
                            mg_precision_name(p->prec));
    out->host = NULL;
    out->buf[0] = NULL;
    out->bytes[0] = 0;
    out->ld = p->k;
    if (p->k == 0 || p->n == 0) return MG_OK; /* no k-iterations / no columns: W is never read */
    if (!w) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma prepare: W is NULL");

    const size_t eb = mg_elem_bytes(p->prec);
    const bool pad = needs_pad(p->k, eb) || ((uintptr_t)w % 16 != 0);
    const int64_t ld = needs_pad(p->k, eb) ? padded_ld(p->k, eb) : p->k;
    const void *wsrc = w;
    cudaStream_t st = (cudaStream_t)stream;
    if (pad) {
        const size_t bytes = (size_t)p->n * (size_t)ld * eb;
        void *buf = NULL;
        cudaError_t e = cudaMalloc(&buf, bytes);
        if (e != cudaSuccess) {
            (void)cudaGetLastError();
            return mg_set_error(MG_ERR_OUT_OF_MEMORY, "wgmma_tma: padded copy of W (%.1f MiB): %s",
                                bytes / 1048576.0, cudaGetErrorString(e));
        }
        out->buf[0] = buf;
        out->bytes[0] = bytes;
        /* Zero tail columns (never read: the tensor map says K columns; zeros keep the buffer deterministic). */
        MG_CUDA_TRY(cudaMemsetAsync(buf, 0, bytes, st));
        MG_CUDA_TRY(cudaMemcpy2DAsync(buf, (size_t)ld * eb, w, (size_t)p->k * eb, (size_t)p->k * eb, (size_t)p->n,
                                      cudaMemcpyDeviceToDevice, st));
        wsrc = buf;
    }
    out->ld = (int)ld;

    /* aligned_alloc: CUtensorMap is a 64-byte aligned type; the size must be a multiple of the alignment. */
    const size_t hb = (sizeof(w_host) + 63) / 64 * 64;
    w_host *h = static_cast<w_host *>(aligned_alloc(64, hb));
    if (!h) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "wgmma_tma: host allocation of the W descriptor failed");
    memset(h, 0, hb);
    out->host = h;
    h->n = p->n;
    h->k = p->k;
    h->ld = (int)ld;
    h->prec = p->prec;
    const CUtensorMapDataType dt =
        p->prec == MG_PREC_BF16 ? elem<__nv_bfloat16>::tma : elem<float>::tma;
    return mg_make_tma_2d(&h->tm_w, wsrc, dt, (uint64_t)p->n, (uint64_t)p->k, (uint64_t)ld * eb,
                          (uint32_t)tile_bn(p->prec), (uint32_t)tile_bk(p->prec), CU_TENSOR_MAP_SWIZZLE_128B);
}

template <class C>
static mg_status launch_tile(mg_launch_args *a) {
    using T = typename C::elem_t;
    const mg_problem *p = &a->p;
    const int M = p->m, N = p->n, K = p->k;
    const size_t eb = sizeof(T);
    cudaStream_t st = (cudaStream_t)a->stream;

    CUtensorMap tm_x, tm_w;
    memset(&tm_x, 0, sizeof tm_x); /* K = 0: never dereferenced by the kernel (no k-iterations) */
    memset(&tm_w, 0, sizeof tm_w);
    if (K > 0) {
        const w_host *h = a->prep ? static_cast<const w_host *>(a->prep->host) : NULL;
        if (!h) return mg_set_error(MG_ERR_NO_WEIGHTS, "wgmma_tma: W's TMA descriptor is missing (prepare did not run)");
        if (h->n != N || h->k != K || h->prec != p->prec)
            return mg_set_error(MG_ERR_INVALID_ARG,
                                "wgmma_tma: weights were prepared for N=%d K=%d %s, launch has N=%d K=%d %s", h->n,
                                h->k, mg_precision_name(h->prec), N, K, mg_precision_name(p->prec));
        tm_w = h->tm_w;

        const void *xsrc = a->x;
        int64_t ld = K;
        if (needs_pad(K, eb)) {
            ld = padded_ld(K, eb);
            if (!a->ws || (uintptr_t)a->ws % 16 != 0)
                return mg_set_error(MG_ERR_INVALID_ARG,
                                    "wgmma_tma: K = %d needs a 16-byte aligned workspace of %zu bytes for padded x", K,
                                    (size_t)M * (size_t)ld * eb);
            /* x with a padded row stride; the tail columns are outside the tensor map and never read. */
            MG_CUDA_TRY(cudaMemcpy2DAsync(a->ws, (size_t)ld * eb, a->x, (size_t)K * eb, (size_t)K * eb, (size_t)M,
                                          cudaMemcpyDeviceToDevice, st));
            xsrc = a->ws;
        } else if ((uintptr_t)a->x % 16 != 0) {
            return mg_set_error(MG_ERR_UNSUPPORTED,
                                "wgmma_tma: x must be 16-byte aligned for TMA (got %p); pass a cudaMalloc'ed pointer",
                                a->x);
        }
        mg_status s = mg_make_tma_2d(&tm_x, xsrc, elem<T>::tma, (uint64_t)M, (uint64_t)K, (uint64_t)ld * eb,
                                     (uint32_t)C::BM, (uint32_t)C::BK, CU_TENSOR_MAP_SWIZZLE_128B);
        if (s != MG_OK) return s;
    }

    const dim3 grid((unsigned)mg_cdiv(M, C::BM), (unsigned)mg_cdiv(N, C::BN));
    MG_CUDA_TRY(cudaFuncSetAttribute(wgmma_tma_kernel<C>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                     (int)C::SMEM_BYTES));
    wgmma_tma_kernel<C><<<grid, C::THREADS, C::SMEM_BYTES, st>>>(tm_x, tm_w, static_cast<const T *>(a->b),
                                                                 a->partial, M, N, K, p->max_dim);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

static mg_status wt_launch(mg_launch_args *a) {
    if (!a) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma: NULL launch arguments");
    const mg_problem *p = &a->p;
    if (!prec_ok(p->prec))
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_tma runs tf32 and bf16 only (got %s)",
                            mg_precision_name(p->prec));
    if (p->m < 0 || p->n < 0 || p->k < 0) return mg_set_error(MG_ERR_SHAPE, "wgmma_tma: negative dimension");
    if ((p->max_dim == 0 && p->m == 0) || (p->max_dim == 1 && p->n == 0))
        return mg_set_error(MG_ERR_SHAPE, "wgmma_tma: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m,
                            p->n, p->max_dim);
    a->ntiles = wt_partial_tiles(p);
    if (p->m == 0 || p->n == 0) return MG_OK; /* the partial rows have length 0: nothing to compute */
    if (!a->b || !a->partial || (p->k > 0 && !a->x))
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_tma: NULL x, b or partial");
    if (mg_cdiv(p->n, tile_bn(p->prec)) > 65535)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_tma: N = %d needs more than 65535 column tiles", p->n);
    return p->prec == MG_PREC_BF16 ? launch_tile<tile_bf16>(a) : launch_tile<tile_tf32>(a);
}

} /* namespace */

extern "C" const mg_kernel_ops mg_ops_wgmma_tma = {
    wt_partial_tiles, wt_workspace_bytes, wt_supports, wt_prepare, wt_release, wt_launch,
};
