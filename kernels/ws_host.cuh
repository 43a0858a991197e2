/* ws_host.cuh: the host side of the warp-specialized kernel: TMA descriptors, the weight-side state kernels 4 and 6
 * keep, and the launch of a plan. Every decision was made by src/ws_policy.h mg_ws_make_plan into the launch plan's
 * private part (mg_ws_plan); launch_plan copies it into the kernel's Params and launches, deciding nothing. */
#ifndef MG_WS_HOST_CUH
#define MG_WS_HOST_CUH

#include <stdlib.h>
#include <string.h>

#include "ws_kernel.cuh"

namespace mgws {

/* The plan's private part. */
inline mg_ws_plan &plan_of(mg_launch_plan *lp) {
    static_assert(sizeof(mg_ws_plan) <= sizeof lp->priv.bytes, "mg_ws_plan fits mg_launch_plan::priv");
    return *reinterpret_cast<mg_ws_plan *>(lp->priv.bytes);
}
inline const mg_ws_plan &plan_of(const mg_launch_plan *lp) {
    return *reinterpret_cast<const mg_ws_plan *>(lp->priv.bytes);
}

/* TMA descriptor of the A (x) / B (W) operand of configuration C: rows x k elements, row stride ld elements, boxes
 * of box_rows x BK. */
template <class C>
mg_status make_map_a(CUtensorMap *map, const void *base, int64_t rows, int64_t k, int64_t ld, int box_rows) {
    return mg_make_tma_2d(map, base, C::T::kDtypeA, (uint64_t)rows, (uint64_t)k, (uint64_t)ld * C::T::kElemA,
                          (uint32_t)box_rows, (uint32_t)C::BK, C::SWIZZLE_A,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}
template <class C>
mg_status make_map_b(CUtensorMap *map, const void *base, int64_t rows, int64_t k, int64_t ld, int box_rows) {
    return mg_make_tma_2d(map, base, C::T::kDtypeB, (uint64_t)rows, (uint64_t)k, (uint64_t)ld * C::T::kElemB,
                          (uint32_t)box_rows, (uint32_t)C::BK, C::SWIZZLE_B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
}

/* Weight-side state (mg_prepared::state): device copies of W (kernel 4: a padded W when its rows are not 16-byte
 * multiples; kernel 6: W hi and lo) and W's descriptors (kernel 4: one per tile configuration, then the main one's
 * remainder-split boxes; kernel 6: hi, lo). */
struct State {
    void *buf[2];
    CUtensorMap b[6];
};

inline mg_status state_alloc(State **out) {
    /* CUtensorMap is alignas(64) or alignas(128) depending on the CUDA version; sizeof is a multiple of it. */
    void *h = aligned_alloc(alignof(State), sizeof(State));
    if (!h) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "wgmma_ws: host allocation failed");
    memset(h, 0, sizeof(State));
    *out = static_cast<State *>(h);
    return MG_OK;
}

inline void state_release(void *state) {
    State *s = static_cast<State *>(state);
    if (!s) return;
    for (int i = 0; i < 2; i++)
        if (s->buf[i]) cudaFree(s->buf[i]); /* release cannot report; a failed free leaks at worst */
    free(s);
}

inline mg_status dev_alloc(void **buf, size_t bytes, const char *what) {
    cudaError_t e = cudaMalloc(buf, bytes);
    if (e != cudaSuccess) {
        *buf = NULL;
        return mg_set_error(e == cudaErrorMemoryAllocation ? MG_ERR_OUT_OF_MEMORY : MG_ERR_CUDA,
                            "cudaMalloc of %zu bytes for %s: %s", bytes, what, cudaGetErrorString(e));
    }
    return MG_OK;
}

/* Launches configuration C as the plan says. wmaps: W's B_PARTS descriptors for C's boxes; with the remainder split
 * bnar / brem: W with (BN - 8)-row and 8-row boxes. */
template <class C>
mg_status launch_plan(const mg_launch_plan *lp, const mg_io *io, const CUtensorMap *wmaps, const CUtensorMap *bnar,
                      const CUtensorMap *brem, void *stream, const char *name) {
    const mg_problem &p = lp->p;
    const mg_ws_plan &pl = plan_of(lp);
    cudaStream_t s = (cudaStream_t)stream;
    char *ws = static_cast<char *>(io->ws);
    if (lp->ws_bytes > 0 && !ws) return mg_set_error(MG_ERR_INVALID_ARG, "%s: the plan needs a workspace", name);
    Params prm;
    memset(&prm, 0, sizeof prm);
    if (p.k > 0) {
        if (!wmaps) return mg_set_error(MG_ERR_NO_WEIGHTS, "%s: W was not prepared for this problem", name);
        const void *xb = io->x;
        if (pl.pad_x) {
            /* a copy with 16-byte rows; the descriptor still says K columns, so the padding is never read */
            const size_t eb = C::T::kElemA;
            MG_CUDA_TRY(cudaMemcpy2DAsync(ws + pl.off_x, (size_t)pl.x_ld * eb, io->x, (size_t)p.k * eb,
                                          (size_t)p.k * eb, (size_t)p.m, cudaMemcpyDeviceToDevice, s));
            xb = ws + pl.off_x;
        } else if ((uintptr_t)io->x % 16 != 0) {
            return mg_set_error(MG_ERR_INVALID_ARG, "%s: the plan reads x in place but x (%p) is not 16-byte aligned",
                                name, io->x);
        }
        mg_status st = make_map_a<C>(&prm.a, xb, p.m, p.k, pl.x_ld, C::BM);
        if (st != MG_OK) return st;
        for (int q = 0; q < C::B_PARTS; q++) prm.b[q] = wmaps[q];
        if (pl.rem_chunks > 0) {
            if (!bnar || !brem) return mg_set_error(MG_ERR_INVALID_ARG, "%s: remainder split without its W boxes", name);
            prm.b[0] = *bnar;
            prm.brem = *brem;
        }
    }
    prm.bias = io->b;
    prm.partial = io->partial;
    prm.m = p.m;
    prm.n = p.n;
    prm.k = p.k;
    prm.max_dim = p.max_dim;
    prm.tiles_n = pl.tiles_n;
    prm.nw = pl.nw;
    prm.dp_tiles = pl.dp_tiles;
    prm.sk_tiles = pl.sk_tiles;
    if (pl.sk_tiles > 0) {
        prm.sk_part = reinterpret_cast<float *>(ws + pl.off_slots);
        prm.sk_flag = reinterpret_cast<int *>(ws + pl.off_flags);
    }
    if (pl.rem_chunks > 0) {
        prm.rem = reinterpret_cast<float *>(ws + pl.off_rem);
        prm.rem_n0 = pl.rem_n0;
        prm.rem_w = pl.rem_w;
        prm.rem_chunks = pl.rem_chunks;
    }
    auto kern = ws_kernel<C>;
    /* Idempotent; cheap enough per launch, and safe under concurrent plans (no static flag to race on). */
    MG_CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM_BYTES));
    if (pl.sk_tiles == 0) {
        kern<<<pl.grid, C::THREADS, C::SMEM_BYTES, s>>>(prm);
        MG_LAUNCH_CHECK();
        return MG_OK;
    }
    /* Stream-K: a tile's owner waits for the other CTAs that covered its k-range (ws_streamk.cuh), so every CTA must
     * be resident: a cooperative launch (kernel 8's grid finish does the same; run 121 measured no cost for the
     * attribute there). */
    const cudaError_t e = mg_launch_cooperative(kern, (unsigned)pl.grid, C::THREADS, C::SMEM_BYTES, s, prm);
    if (e != cudaSuccess)
        return mg_set_error(MG_ERR_CUDA, "%s: the cooperative launch of %d CTAs (stream-K: a tile's owner waits for "
                            "the CTAs that share its k-range, so all must be resident): %s", name, pl.grid,
                            cudaGetErrorString(e));
    return MG_OK;
}

}  // namespace mgws

#endif /* MG_WS_HOST_CUH */
