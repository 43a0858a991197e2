/* int8_kernel.cuh: the device code of kernel 10 (kernels/10_wgmma_int8x3.cu), the fused int8 split-precision kernel
 * (issue 19, Ozaki scheme I: src/ozaki.h, notes/19_int8_ozaki.md). The host policy is src/int8x3_policy.h; the header
 * of 10_wgmma_int8x3.cu says what the kernel shows and why.
 *
 * OPERANDS. The x pre-pass (mg_oz_slice) and prepare (mg_oz_prepare_w) leave s8 slices in kernel 9's layout: x rows
 *   [hi | lo], W rows [lo | hi], 2 ldk bytes each. Four TMA descriptors, one per half (dims {K, rows}, row stride
 *   2 ldk, UINT8, 128B swizzle, boxes of 128 bytes of K x BM or BN rows): a box reaching past K is TMA's zero fill,
 *   never the other half's bytes; rows past M or N are zero too (and masked in the epilogue).
 * ROLES (THREADS = 128 (1 + CONSUMERS), __launch_bounds__(THREADS, 1) so setmaxnreg applies; kernels 4 and 8's)
 *   warpgroup 0  producer: setmaxnreg.dec to 40; ONE thread issues per k-block the 4 boxes x_hi, x_lo (BM x 128 B),
 *                W_hi, W_lo (BN x 128 B) into one stage of a STAGES-deep ring (kernel 4's mgws::Ring,
 *                ws_pipeline.cuh: full / empty mbarriers) and runs ahead into the CTA's next tile.
 *   warpgroup 1+c consumer c: setmaxnreg.inc to 232; rows [64c, 64c + 64) of the tile. Per k-block 4 k32 steps x 3
 *                wgmma m64nBNk32.s32.s8.s8 (both operands K-major from shared memory descriptors):
 *                    cr += x_hi W_lo,  hh += x_hi W_hi,  cr += x_lo W_hi
 *                (two int32 accumulator sets of BN/2 registers each, BN registers per thread; consecutive wgmmas
 *                alternate the sets), one group in flight (wait_group 1), releasing the previous stage.
 * WORK. The persistent grid walks the tiles b, b + grid, ... in kernel 4's grouped order (mgws::tile_coords, groups of
 *   16 M-tiles). Both roles walk the same tiles and k-blocks, so the ring's counter `it` is identical in both. nk = 0
 *   (K = 0, or K > 66052 where every row is flagged): no loads, no waits, the epilogue alone on zero sums.
 * EPILOGUE (per consumer, in registers + shuffles; y is never written): per element
 *     y = fma(fma(float(hh), 256, float(cr)), fp32(u_x[i] u_w[j]) * 256, b[j])      (mg_oz_combine / mg_oz_scale:
 *   kernel 9's combine, operation for operation, so the two kernels agree bit for bit on unflagged rows). Rows >= M,
 *   FLAGGED rows (flag[i] != 0: the exact fallback computes them into the last partial row) and columns >= N are -inf
 *   (they never compete); NaN propagates (max.NaN.f32, mg_nanmaxf's contract).
 *   max_dim 1  per row: max over the thread's BN/4 columns, __shfl_xor 1, 2 over the quad -> partial[tn * M + i].
 *   max_dim 0  per column: max over the thread's 2 rows, then over the warp's 16 rows (lane bits 4, 3, 2) by the
 *              transpose-reduce kernels 4 and 8 share (mg_transpose_max_store: NV/2 + NV/4 + NV/8 shuffles), the consumer's 4
 *              warps through shared memory (named barrier 1 + c of its 128 threads) -> partial[slab * N + j],
 *              slab = the consumer's 64-row slab of x. Consumers never wait for each other. */
#ifndef MG_INT8_KERNEL_CUH
#define MG_INT8_KERNEL_CUH

#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "hopper.cuh"
#include "int8x3_policy.h"
#include "mg_kernel.h"
#include "ozaki.h"
#include "ws_pipeline.cuh"
#include "ws_scheduler.cuh"

namespace mgi8 {

constexpr int kProducerRegs = 40;

/* One tile configuration: the tile_configs/wgmma_int8x3.cfg row (bm, bn, bk in bytes, stages, consumers, cluster). */
template <int BM_, int BN_, int BK_, int STAGES_, int CONSUMERS_, int CLUSTER_>
struct Cfg {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, CONSUMERS = CONSUMERS_;
    static constexpr int THREADS = 128 * (CONSUMERS + 1);
    static constexpr int X_BYTES = BM * 128, W_BYTES = BN * 128;   /* one slice's tile: rows of 128 bytes of K */
    static constexpr int STAGE_BYTES = 2 * X_BYTES + 2 * W_BYTES;  /* [x_hi][x_lo][W_hi][W_lo] */
    static constexpr int NACC = BN / 2;                             /* int32 registers per accumulator set */
    static constexpr int RED_BYTES = CONSUMERS * 4 * BN * 4;        /* max_dim 0: per-warp column maxima */
    static constexpr int BAR_BYTES = 2 * STAGES * 8;
    static constexpr int SMEM_BYTES = 1024 /* alignment slack */ + STAGES * STAGE_BYTES + RED_BYTES + BAR_BYTES;
    static constexpr int CONSUMER_REGS = 232;                       /* 128 * 40 + 256 * 232 = 64512 <= 65536 */
    static constexpr int EMPTY_ARRIVALS = 4 * CONSUMERS;            /* lane 0 of every consumer warp */

    static_assert(CLUSTER_ == 1, "tile_configs/wgmma_int8x3.cfg: cluster must be 1");
    static_assert(CONSUMERS == 2 && BM == MG_I8_SLAB * CONSUMERS, "bm = 128: two consumers of 64 rows (one m64 each)");
    static_assert(BK == 128, "bk must be 128 (int8 = bytes): one 128-byte swizzled row of K per tile");
    static_assert(BN == 64 || BN == 128 || BN == 192, "bn: 64, 128 or 192 (the s8 wgmma wrappers below; no n256 for s8)");
    static_assert(X_BYTES % 1024 == 0 && W_BYTES % 1024 == 0, "every tile keeps the 1024-byte swizzle alignment");
    static_assert(STAGES >= 2 && STAGES <= 8, "2..8 stages");
    static_assert(SMEM_BYTES <= 227 * 1024, "shared memory budget (227 KiB per CTA on sm_90): fewer stages");
};

/* Kernel parameters (__grid_constant__: TMA needs the descriptors' param-space address). */
struct Params {
    CUtensorMap xhi, xlo;   /* x slices (M rows), boxes of BM x 128 B; unused when nk = 0 */
    CUtensorMap whi, wlo;   /* W slices (N rows), boxes of BN x 128 B; unused when nk = 0 */
    const float *bias, *ux, *uw;
    const int *flag;        /* the pre-pass's routes: non-zero = flagged (the fallback has the row) */
    float *partial;
    int m, n, max_dim, nk, tiles_m, tiles_n;
};

/* ---- wgmma m64nNk32 .s32.s8.s8, A and B from shared-memory descriptors, accumulating into int32 d ---------------- */
#define I8_R8(i) "+r"(d[i]), "+r"(d[i + 1]), "+r"(d[i + 2]), "+r"(d[i + 3]), "+r"(d[i + 4]), "+r"(d[i + 5]), \
    "+r"(d[i + 6]), "+r"(d[i + 7])
#define I8_OPS_32 I8_R8(0), I8_R8(8), I8_R8(16), I8_R8(24)
#define I8_OPS_64 I8_OPS_32, I8_R8(32), I8_R8(40), I8_R8(48), I8_R8(56)
#define I8_OPS_96 I8_OPS_64, I8_R8(64), I8_R8(72), I8_R8(80), I8_R8(88)
template <int N> __device__ __forceinline__ void wgmma_s8(int32_t (&d)[N / 2], uint64_t desc_a, uint64_t desc_b);
#define I8_WGMMA(N, NACC, IA, IB, IP)                                                                              \
    template <>                                                                                                    \
    __device__ __forceinline__ void wgmma_s8<N>(int32_t (&d)[NACC], uint64_t desc_a, uint64_t desc_b) {           \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #IP ", 0;\n"                                             \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k32.s32.s8.s8 " MG_ACC_STR_##NACC ", %" #IA ", %" #IB \
                     ", p;\n}\n"                                                                                   \
                     : I8_OPS_##NACC                                                                               \
                     : "l"(desc_a), "l"(desc_b), "r"(1));                                                          \
    }
I8_WGMMA(64, 32, 32, 33, 34)
I8_WGMMA(128, 64, 64, 65, 66)
I8_WGMMA(192, 96, 96, 97, 98)
#undef I8_WGMMA
#undef I8_OPS_96
#undef I8_OPS_64
#undef I8_OPS_32
#undef I8_R8

/* ---- producer ------------------------------------------------------------------------------------------------- */
template <class C> __device__ __forceinline__ void produce(const Params &p, const mgws::Ring<C> &ring) {
    const int tiles = p.tiles_m * p.tiles_n;
    int it = 0;
    for (int t = (int)blockIdx.x; t < tiles; t += (int)gridDim.x) {
        int tm, tn;
        mgws::tile_coords(t, p.tiles_m, p.tiles_n, mgws::kGroupM, tm, tn);
        for (int kb = 0; kb < p.nk; kb++, it++) {
            ring.acquire(it);
            uint8_t *sp = ring.stage(it);
            uint64_t *full = ring.full_bar(it);
            mg_mbar_arrive_expect_tx(full, (uint32_t)C::STAGE_BYTES);   /* full boxes count, even where TMA zero-fills */
            const int kc = kb * C::BK;
            mg_tma_load_2d(sp, &p.xhi, full, kc, tm * C::BM);
            mg_tma_load_2d(sp + C::X_BYTES, &p.xlo, full, kc, tm * C::BM);
            mg_tma_load_2d(sp + 2 * C::X_BYTES, &p.whi, full, kc, tn * C::BN);
            mg_tma_load_2d(sp + 2 * C::X_BYTES + C::W_BYTES, &p.wlo, full, kc, tn * C::BN);
        }
    }
}

/* ---- consumers ------------------------------------------------------------------------------------------------ */

/* One k-block of consumer c: wait for the stage, issue its 12 wgmmas as one group, then wait until only this group is
 * pending and release the previous stage (not on the tile's first k-block). */
template <class C>
__device__ __forceinline__ void kiter(int32_t (&hh)[C::NACC], int32_t (&cr)[C::NACC], const mgws::Ring<C> &ring,
                                      int it, bool first, int c, int lane) {
    ring.wait_full(it);
    const uint8_t *sp = ring.stage(it);
    const uint64_t ahi = mg_make_desc_k128(sp + c * MG_I8_SLAB * 128);               /* my 64 rows of x_hi */
    const uint64_t alo = mg_make_desc_k128(sp + C::X_BYTES + c * MG_I8_SLAB * 128);  /* ... of x_lo */
    const uint64_t bhi = mg_make_desc_k128(sp + 2 * C::X_BYTES);
    const uint64_t blo = mg_make_desc_k128(sp + 2 * C::X_BYTES + C::W_BYTES);
    mg_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < 4; ks++) {
        const uint32_t off = ks * 32;   /* a k32 step reads 32 bytes of each 128-byte row */
        wgmma_s8<C::BN>(cr, mg_desc_advance(ahi, off), mg_desc_advance(blo, off));   /* x_hi W_lo */
        wgmma_s8<C::BN>(hh, mg_desc_advance(ahi, off), mg_desc_advance(bhi, off));   /* x_hi W_hi */
        wgmma_s8<C::BN>(cr, mg_desc_advance(alo, off), mg_desc_advance(bhi, off));   /* x_lo W_hi */
    }
    mg_wgmma_commit();
    if (!first) {
        mg_wgmma_wait<1>();
        if (lane == 0) ring.release(it - 1);
    }
}

/* y of this thread's two rows (-inf where masked: row >= M or flagged, column >= N) at each of its BN/4 columns, in
 * accumulator order: f(jj, y0, y1) for jj = 2i + e, column cb + 8i + e (the file header's combine). */
template <class C, class F>
__device__ __forceinline__ void each_y(const int32_t (&hh)[C::NACC], const int32_t (&cr)[C::NACC], const Params &p,
                                       int cb, bool ok0, bool ok1, float u0, float u1, F &&f) {
#pragma unroll
    for (int i = 0; i < C::BN / 8; i++) {
#pragma unroll
        for (int e = 0; e < 2; e++) {
            const int j = cb + 8 * i + e;
            float y0 = -INFINITY, y1 = -INFINITY;
            if (j < p.n) {
                const float uw = p.uw[j], bj = p.bias[j];
                if (ok0) y0 = mg_oz_combine(hh[4 * i + e], cr[4 * i + e], mg_oz_scale(u0, uw), bj);
                if (ok1) y1 = mg_oz_combine(hh[4 * i + 2 + e], cr[4 * i + 2 + e], mg_oz_scale(u1, uw), bj);
            }
            f(2 * i + e, y0, y1);
        }
    }
}

/* The fused epilogue of consumer c's 64 rows of tile (tm, tn) (the file header). */
template <class C>
__device__ __forceinline__ void epilogue(const int32_t (&hh)[C::NACC], const int32_t (&cr)[C::NACC], const Params &p,
                                         int tm, int tn, int c, int warp, int lane, int tid, float *red) {
    const int M = p.m, N = p.n;
    const int r0 = tm * C::BM + c * MG_I8_SLAB + warp * 16 + lane / 4, r1 = r0 + 8;   /* this thread's 2 rows */
    const bool ok0 = r0 < M && p.flag[r0] == 0, ok1 = r1 < M && p.flag[r1] == 0;
    const float u0 = ok0 ? p.ux[r0] : 0.f, u1 = ok1 ? p.ux[r1] : 0.f;
    const int cb = tn * C::BN + 2 * (lane % 4);   /* column of acc[0]; acc[4i + 2h + e]: column cb + 8i + e */
    if (p.max_dim == 1) {
        float m0 = -INFINITY, m1 = -INFINITY;
        each_y<C>(hh, cr, p, cb, ok0, ok1, u0, u1, [&](int, float y0, float y1) {
            m0 = mg_max_nan(m0, y0);
            m1 = mg_max_nan(m1, y1);
        });
        mg_quad_max2(m0, m1);
        if ((lane & 3) == 0) {
            if (r0 < M) p.partial[(size_t)tn * M + r0] = m0;
            if (r1 < M) p.partial[(size_t)tn * M + r1] = m1;
        }
        return;
    }
    /* max_dim 0: v[2i + e] = this thread's max over its 2 rows of column cb + 8i + e */
    constexpr int NV = C::BN / 4;
    float v[NV];
    each_y<C>(hh, cr, p, cb, ok0, ok1, u0, u1, [&](int jj, float y0, float y1) { v[jj] = mg_max_nan(y0, y1); });
    float *mine = red + (c * 4 + warp) * C::BN;
    /* over the 8 lanes sharing lane % 4 (the warp's 16 rows): kernels 4 and 8's transpose-reduce (kernels/hopper.cuh),
     * NV/2 + NV/4 + NV/8 shuffles where three plain ones per value took 3 NV */
    static_assert(NV % 8 == 0, "the transpose-reduce takes the columns 8 at a time (BN a multiple of 32)");
    mg_transpose_max_store<NV>(v, lane, mine);
    mg_named_bar_sync(1 + c, 128);   /* the consumer's 4 warps wrote their column maxima */
    const int slab = tm * C::CONSUMERS + c;
    if (slab * MG_I8_SLAB < M) {
        const float *cred = red + c * 4 * C::BN;
        for (int lc = tid; lc < C::BN; lc += 128) {
            const float x = mg_max_nan(mg_max_nan(cred[lc], cred[C::BN + lc]),
                                       mg_max_nan(cred[2 * C::BN + lc], cred[3 * C::BN + lc]));
            if (tn * C::BN + lc < N) p.partial[(size_t)slab * N + tn * C::BN + lc] = x;
        }
    }
    mg_named_bar_sync(1 + c, 128);   /* red is reused by the next tile */
}

/* ---- the kernel ----------------------------------------------------------------------------------------------- */
template <class C>
__global__ void __launch_bounds__(C::THREADS, 1) int8x3_kernel(const __grid_constant__ Params p) {
    extern __shared__ uint8_t smem_raw[];
    /* the 128B swizzle pattern repeats every 1024 bytes and the descriptors assume tile bases on that grid */
    uint8_t *smem = reinterpret_cast<uint8_t *>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    float *red = reinterpret_cast<float *>(smem + C::STAGES * C::STAGE_BYTES);
    uint64_t *bars = reinterpret_cast<uint64_t *>(smem + C::STAGES * C::STAGE_BYTES + C::RED_BYTES);
    const mgws::Ring<C> ring{smem, bars, bars + C::STAGES};
    const int wg = (int)threadIdx.x / 128, tid = (int)threadIdx.x % 128;

    if (threadIdx.x == 0) ring.init();
    __syncthreads();   /* the only CTA-wide barrier: roles never synchronise with each other after this */

    if (wg == 0) {
        /* ---------------- producer ---------------- */
        mg_setmaxnreg_dec<kProducerRegs>();
        if (tid == 0 && p.nk > 0) {
            mg_tma_prefetch_desc(&p.xhi);
            mg_tma_prefetch_desc(&p.xlo);
            mg_tma_prefetch_desc(&p.whi);
            mg_tma_prefetch_desc(&p.wlo);
            produce<C>(p, ring);
        }
        return;   /* every issued load is consumed by the consumers, which keep the CTA alive */
    }

    /* ---------------- consumers ---------------- */
    mg_setmaxnreg_inc<C::CONSUMER_REGS>();
    const int c = wg - 1, warp = tid / 32, lane = tid % 32;
    const int tiles = p.tiles_m * p.tiles_n;
    int32_t hh[C::NACC], cr[C::NACC];
    int it = 0;
    for (int t = (int)blockIdx.x; t < tiles; t += (int)gridDim.x) {
        int tm, tn;
        mgws::tile_coords(t, p.tiles_m, p.tiles_n, mgws::kGroupM, tm, tn);
#pragma unroll
        for (int i = 0; i < C::NACC; i++) hh[i] = cr[i] = 0;
        mg_fence_acc(hh);   /* the zeros are materialised before the wgmma.fence of the first k-block */
        mg_fence_acc(cr);
        for (int kb = 0; kb < p.nk; kb++, it++) kiter<C>(hh, cr, ring, it, kb == 0, c, lane);
        mg_wgmma_wait<0>();
        mg_fence_acc(hh);   /* no accumulator read may be hoisted above the wait */
        mg_fence_acc(cr);
        if (p.nk > 0 && lane == 0) ring.release(it - 1);
        epilogue<C>(hh, cr, p, tm, tn, c, warp, lane, tid, red);
    }
}

}  // namespace mgi8

#endif /* MG_INT8_KERNEL_CUH */
