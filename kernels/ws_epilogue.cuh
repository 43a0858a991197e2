/* ws_epilogue.cuh: the fused epilogue of the warp-specialized kernel, per consumer, in registers + shuffles (y is
 * never written): y = acc + b[col] in fp32; rows >= M and columns >= N are masked out (never compete); NaN
 * propagates (max.NaN.f32, mg_nanmaxf's contract). Tiles wholly inside N load the bias in pairs; the column loops
 * have compile-time bounds per panel width WN.
 *   max_dim 1 (row_max): thread max over its 2 rows x WN/4 columns, __shfl_xor 1, 2 over the quad ->
 *             partial[tn * M + row] (one partial row per column panel); with the remainder split, the tile's k-chunk
 *             of the leftover columns goes to the plan's rem rows (the finalize sums and folds them in).
 *   max_dim 0 (col_max): per column, max over the thread's 2 rows, a transpose-reduce butterfly over lane bits 4, 3, 2
 *             (16 rows of the warp; 56 shuffles per thread), then across the consumer's 4 warps through smem (named
 *             barrier of the consumer's 128 threads) -> partial[slab * N + col], slab = row / 64. Consumers never
 *             wait for each other.
 * finish_tile runs it for one piece of work, after the stream-K fix-up (ws_streamk.cuh). */
#ifndef MG_WS_EPILOGUE_CUH
#define MG_WS_EPILOGUE_CUH

#include "ws_pipeline.cuh"
#include "ws_streamk.cuh"

namespace mgws {

/* The bias of columns j, j + 1 (j even) as one 8-byte (float) or 4-byte (bf16) load, kept packed until used: only
 * for tiles wholly inside N whose bias pointer has that alignment (the caller checks). */
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

/* The Params fields the epilogue reads, read once per piece at the top of finish_tile and passed down in this struct.
 * Not p.bias / p.m / p.n at each use: with the bias pointer reaching the column loops as a plain value, NVVM rewrites
 * each masked column's bias + col as one base plus a constant offset, which ptxas then rebuilds per column with LEA /
 * LEA.HI.X / ULDC instead of LDC.64 + IMAD.WIDE (nvcc 13.0: +72 SASS instructions in the 64 x 128 tf32 kernel; a
 * plain pointer argument does the same). notes/refactor_17.md, "Masked epilogue". */
template <class C> struct EpiArgs {
    const typename C::T::Bias *bias;
    int m, n;
};

/* Where this thread's two accumulator rows are and whether they count (a shifted last tile's rows above tm * BM are
 * the tile above's, masked like rows past M). */
struct EpiRows {
    int r0, sh;
    bool ok0, ok1;
};

/* max_dim 1: the row maxima of one tile over its WN columns (and the remainder chunk, if the tile has one). */
template <class C, int WN>
__device__ __forceinline__ void row_max(const float (&acc)[C::BN / 2], const Params &p, const Work &wk,
                                        const EpiArgs<C> &ea, const EpiRows &er, bool pair_ok, int num_k, int lane) {
    using Bias = typename C::T::Bias;
    constexpr int NI = WN / 8;            /* 8-column groups of the panel */
    const Bias *bias = ea.bias;
    const int n_end = min(ea.n, wk.n0 + WN);
    const Bias *bias_q = bias + wk.n0 + 2 * (lane % 4);
    const int M = ea.m, r0 = er.r0;
    float m0 = -INFINITY, m1 = -INFINITY;
    if (pair_ok) {
        /* two chains per row (even, odd column), merged below: half the dependent max latency */
        float m0b = -INFINITY, m1b = -INFINITY;
#pragma unroll
        for (int i = 0; i < NI; i++) {
            const float2 bv = bias_pair_f(bias_pair_load(bias_q, 8 * i));
            m0 = mg_max_nan(m0, acc[4 * i] + bv.x);
            m0b = mg_max_nan(m0b, acc[4 * i + 1] + bv.y);
            m1 = mg_max_nan(m1, acc[4 * i + 2] + bv.x);
            m1b = mg_max_nan(m1b, acc[4 * i + 3] + bv.y);
        }
        m0 = mg_max_nan(m0, m0b);
        m1 = mg_max_nan(m1, m1b);
    } else {
#pragma unroll
        for (int i = 0; i < NI; i++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int col = wk.n0 + 8 * i + 2 * (lane % 4) + e;
                if (col < n_end) {
                    const float bv = bias_at<Bias>(bias, col);
                    m0 = mg_max_nan(m0, acc[4 * i + e] + bv);
                    m1 = mg_max_nan(m1, acc[4 * i + 2 + e] + bv);
                }
            }
        }
    }
    mg_quad_max2(m0, m1);
    if (lane % 4 == 0) {
        if (er.ok0) p.partial[(size_t)wk.tn * M + r0] = m0;
        if (er.ok1) p.partial[(size_t)wk.tn * M + r0 + 8] = m1;
    }
    if constexpr (C::MIXED && WN == C::BN_NARROW) {
        /* remainder split: this tile's k-chunk tn of the remainder columns, accumulator group NI (the n256 wgmma's
         * last 8 columns; zero outside the chunk's k-blocks), chunk 0 with the bias */
        int ck0, ck1;
        if (rem_chunk<C>(p, wk.tn, num_k, &ck0, &ck1)) {
            float *dst = p.rem + (size_t)wk.tn * p.rem_w * M;
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int col = 2 * (lane % 4) + e;
                if (col < p.rem_w) {
                    float v0 = acc[4 * NI + e], v1 = acc[4 * NI + 2 + e];
                    if (wk.tn == 0) {
                        const float bv = bias_at<Bias>(bias, p.rem_n0 + col);
                        v0 += bv;
                        v1 += bv;
                    }
                    if (er.ok0) dst[(size_t)col * M + r0] = v0;
                    if (er.ok1) dst[(size_t)col * M + r0 + 8] = v1;
                }
            }
        }
    }
}

/* max_dim 0: the column maxima of one consumer's 64-row slab over the tile's WN columns. */
template <class C, int WN>
__device__ __forceinline__ void col_max(const float (&acc)[C::BN / 2], const Params &p, const Work &wk,
                                        const EpiArgs<C> &ea, const EpiRows &er, bool pair_ok, int c, int warp,
                                        int lane, int tid, float *red) {
    using Bias = typename C::T::Bias;
    constexpr int NI = WN / 8;
    const Bias *bias = ea.bias;
    const int n_end = min(ea.n, wk.n0 + WN);
    const Bias *bias_q = bias + wk.n0 + 2 * (lane % 4);
    const int M = ea.m, N = ea.n;
    /* v[j], j = 2i + e: this thread's max over its rows r0, r0 + 8 of column 8i + 2(lane%4) + e. Groups i >= NI (a
     * narrow panel's last 8 columns) are -inf and never stored. */
    constexpr int NV = C::BN / 4;
    float v[NV];
    if (pair_ok && (wk.tm + 1) * C::BM <= M) {
        /* the whole tile is inside M and N: max(a + b, c + b) = max(a, c) + b exactly (rounding is monotonic; NaN
         * and inf give the same either way), two instructions per value */
#pragma unroll
        for (int i = 0; i < C::BN / 8; i++) {
            if (i < NI) {
                const float2 bv = bias_pair_f(bias_pair_load(bias_q, 8 * i));
                v[2 * i] = mg_max_nan(acc[4 * i], acc[4 * i + 2]) + bv.x;
                v[2 * i + 1] = mg_max_nan(acc[4 * i + 1], acc[4 * i + 3]) + bv.y;
            } else {
                v[2 * i] = v[2 * i + 1] = -INFINITY;
            }
        }
    } else {
#pragma unroll
        for (int i = 0; i < C::BN / 8; i++) {
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const int col = wk.n0 + 8 * i + 2 * (lane % 4) + e;
                float t = -INFINITY;
                if (i < NI && col < n_end) {
                    const float bv = bias_at<Bias>(bias, col);
                    if (er.ok0) t = acc[4 * i + e] + bv;
                    if (er.ok1) t = mg_max_nan(t, acc[4 * i + 2 + e] + bv);
                }
                v[2 * i + e] = t;
            }
        }
    }
    /* the 16-row max of each column over the 8 lanes that share lane%4 (56 shuffles, not 3 x 64) */
    mg_transpose_max_store<NV>(v, lane, red + (c * 4 + warp) * C::BN);
    mg_named_bar_sync(1 + c, 128); /* this consumer's 4 warps wrote their column maxima */
    /* = first row / 64. A shifted last tile (sh > 0) has valid rows only from local row sh: a consumer wholly above
     * it writes nothing, and the others move down by sh / 64 slabs, so the tile still writes each of its
     * cdiv(M, 64) - tm * CONSUMERS slabs exactly once (their maxima over other rows than the slab's own, but every
     * valid row enters one of them: the finalize's max is the same). */
    const int slab = wk.tm * C::CONSUMERS + c - er.sh / C::SLAB;
    if ((c + 1) * C::SLAB > er.sh && slab * C::SLAB < M) {
        const float *cred = red + c * 4 * C::BN;
        for (int lc = tid; lc < C::BN; lc += 128) {
            float x = cred[lc];
            x = mg_max_nan(x, cred[C::BN + lc]);
            x = mg_max_nan(x, cred[2 * C::BN + lc]);
            x = mg_max_nan(x, cred[3 * C::BN + lc]);
            if (wk.n0 + lc < n_end) p.partial[(size_t)slab * N + wk.n0 + lc] = x;
        }
    }
    mg_named_bar_sync(1 + c, 128); /* red is reused by the next tile */
}

/* The end of one piece for a panel WN columns wide: drain the wgmma groups, release the last stage, the stream-K
 * fix-up, then the epilogue of the plan's max_dim. it: the k-iteration counter after the piece. */
template <class C, int WN>
__device__ __forceinline__ void finish_tile(float (&acc)[C::BN / 2], const Params &p, const Work &wk,
                                            const Ring<C> &ring, int it, int tiles_m, int num_k, int c, int warp,
                                            int lane, int tid, float *red) {
    using Bias = typename C::T::Bias;
    const EpiArgs<C> ea{static_cast<const Bias *>(p.bias), p.m, p.n};
    mg_wgmma_wait<0>();
    mg_fence_acc(acc); /* no accumulator read may be hoisted above the wait */
    if (wk.kb1 > wk.kb0 && lane == 0) ring.release(it - 1);
    /* The bias in pairs (bias2(i) = columns 8i + 2(lane%4) + 0/1) when the panel lies inside N and the pointer allows
     * it. Not for kBF16x3RS (kernel 6), whose registers spill with it (ptxas, CUDA 13.0). (Loading all pairs before
     * the wait above measured no gain in run 23, and a float bias array of 64 registers spills tf32.) */
    const bool pair_ok = !C::T::kRegA && wk.n0 + WN <= ea.n &&
                         (reinterpret_cast<uintptr_t>(ea.bias) % (2 * sizeof(Bias))) == 0;
    if (wk.role == 1) {
        streamk_store<C>(acc, p, c, tid);
        return; /* the owner of the tile runs its epilogue */
    }
    if (wk.role == 2) streamk_gather<C>(acc, p, wk.last, c, tid);

    EpiRows er;
    const int row0 = tile_row0<C>(p, wk.tm, tiles_m);
    er.sh = wk.tm * C::BM - row0;
    er.r0 = row0 + c * C::SLAB + warp * 16 + lane / 4;
    er.ok0 = er.r0 >= wk.tm * C::BM && er.r0 < ea.m;
    er.ok1 = er.r0 + 8 >= wk.tm * C::BM && er.r0 + 8 < ea.m;
    if (p.max_dim == 1) row_max<C, WN>(acc, p, wk, ea, er, pair_ok, num_k, lane);
    else col_max<C, WN>(acc, p, wk, ea, er, pair_ok, c, warp, lane, tid, red);
}

}  // namespace mgws

#endif /* MG_WS_EPILOGUE_CUH */
