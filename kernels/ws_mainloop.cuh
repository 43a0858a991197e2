/* ws_mainloop.cuh: the consumers' k-loops of the warp-specialized kernel: wait for a stage, issue its wgmmas as one
 * group, keep that group in flight (wgmma.wait_group 1) and release the previous stage, so the tensor core never
 * drains between k-iterations. The tile's last stage is released after wait_group 0 (ws_epilogue.cuh).
 *   ss_kloop   shared-memory operands (kernel 4: tf32 m64nNk8, bf16 m64nNk16; a narrow panel issues n248);
 *   rs_kiter   kernel 6 (Scheme kBF16x3RS): x stays fp32 in shared memory, each thread loads its A fragment, splits it
 *              into bf16 hi/lo in registers and issues lo*hi, hi*lo, hi*hi as register-A wgmma. */
#ifndef MG_WS_MAINLOOP_CUH
#define MG_WS_MAINLOOP_CUH

#include <math.h>

#include "ws_pipeline.cuh"

namespace mgws {

template <int ROW_BYTES>
__device__ __forceinline__ uint64_t make_desc(const void *tile) {
    if constexpr (ROW_BYTES == 128) return mg_make_desc_k128(tile);
    else return mg_make_desc_k64(tile);
}

/* One k-step of the smem schemes: wgmma N = WN (BN, or BN - 8 on a narrow panel). */
template <class C, int WN = C::BN>
__device__ __forceinline__ void mma_step(float (&acc)[C::BN / 2], uint64_t da, uint64_t db) {
    static_assert(WN == C::BN || (C::MIXED && WN == C::BN_NARROW), "a narrow panel is BN - 8 = 248 wide");
    if constexpr (WN != C::BN) {
        if constexpr (C::S == Scheme::kTF32) mg_wgmma_tf32_n248(acc, da, db, 1);
        else mg_wgmma_bf16_n248(acc, da, db, 1);
    } else if constexpr (C::S == Scheme::kTF32) {
        mg_wgmma_tf32<C::BN>(acc, da, db, 1);
    } else {
        mg_wgmma_bf16<C::BN>(acc, da, db, 1);
    }
}

/* The k-iterations [kb0, kb1) of one piece for the smem schemes, wgmma N = WN. Releases the previous stage from the
 * piece's second k-block (kb_first + 1) on: a piece may run in parts of different WN (the remainder split's), each
 * behind a wgmma.fence (every k-iteration starts with one), as the PTX ISA asks of wgmma of different shapes on the
 * same accumulators. Returns the k-iteration counter after the part. */
template <class C, int WN>
__device__ __forceinline__ int ss_kloop(float (&acc)[C::BN / 2], const Ring<C> &ring, int it, int kb_first, int kb0,
                                        int kb1, int c, int lane) {
    for (int kb = kb0; kb < kb1; kb++, it++) {
        ring.wait_full(it);
        const uint8_t *st = ring.stage(it);
        const uint64_t da = make_desc<C::A_ROW_BYTES>(st + c * C::SLAB * C::A_ROW_BYTES);  /* this consumer's rows */
        const uint64_t db = make_desc<C::B_ROW_BYTES>(st + C::A_BYTES);
        mg_wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < C::KSTEPS; ks++)
            mma_step<C, WN>(acc, mg_desc_advance(da, ks * 32), mg_desc_advance(db, ks * 32));
        mg_wgmma_commit();
        if (kb > kb_first) {
            /* At most this k-iteration's group is pending: the previous stage has been read. */
            mg_wgmma_wait<1>();
            if (lane == 0) ring.release(it - 1);
        }
    }
    return it;
}

/* ---- Scheme kBF16x3RS ----------------------------------------------------------------------------------------
 * THE K PERMUTATION. Within every 32-column block of K (one stage, BK = 32), the W hi/lo tiles are stored permuted
 * (kernel 6's prepare, once) so that each thread's A fragment for one k16 step is FOUR CONSECUTIVE fp32 of x (one
 * 16-byte shared load) instead of two scattered pairs:
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
 * distinct chunks: all 32 banks, no conflict.
 * K tails: W columns >= K are stored as 0 and the W descriptor spans the padded width (a multiple of 32), the x
 * descriptor spans K (TMA zero-fills the rest), so every padded product is 0 * 0. */
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

/* This thread's place in the fp32 A tile: its fragment rows and 16-byte chunks (see THE K PERMUTATION). */
struct RsLane {
    uint32_t a_off, ch0, ch1;
    __device__ __forceinline__ RsLane(int c, int warp, int lane, int row_bytes, int slab)
        : a_off((uint32_t)((c * slab + warp * 16 + lane / 4) * row_bytes)),
          ch0((uint32_t)((((2 * (lane % 4)) ^ (lane / 4)) & 7) * 16)),
          ch1((uint32_t)((((2 * (lane % 4) + 1) ^ (lane / 4)) & 7) * 16)) {}
};

/* One k-iteration (one stage, BK = 32 = two k16 steps) of a kBF16x3RS consumer: wait for the stage, read this
 * thread's 16 fp32 of x (rows r, r + 8; steps 0, 1), split them into the register set fr, and issue
 * x_lo W_hi, x_hi W_lo, x_hi W_hi per step (small terms first) as ONE wgmma group; then wait until only this group is
 * pending and release the previous stage. fr must not be the set that the previous k-iteration's (possibly pending)
 * group reads: the caller alternates two sets. kb: the index within the piece (it releases from the second on). */
template <class C>
__device__ __forceinline__ void rs_kiter(float (&acc)[C::BN / 2], uint32_t (&fr)[2][2][4], const Ring<C> &ring,
                                         uint32_t smem_base, int it, int kb, const RsLane &ln, int lane) {
    ring.wait_full(it);
    const uint32_t ra = smem_base + (uint32_t)((it % C::STAGES) * C::STAGE_BYTES) + ln.a_off; /* row r of A */
    constexpr uint32_t R8 = 8 * C::A_ROW_BYTES;                                                /* row r + 8 */
    const float4 x00 = rs_lds128(ra + ln.ch0), x10 = rs_lds128(ra + R8 + ln.ch0); /* step 0 */
    const float4 x01 = rs_lds128(ra + ln.ch1), x11 = rs_lds128(ra + R8 + ln.ch1); /* step 1 */
    rs_split_pair(x00.x, x00.y, fr[0][0][0], fr[0][1][0]);
    rs_split_pair(x10.x, x10.y, fr[0][0][1], fr[0][1][1]);
    rs_split_pair(x00.z, x00.w, fr[0][0][2], fr[0][1][2]);
    rs_split_pair(x10.z, x10.w, fr[0][0][3], fr[0][1][3]);
    rs_split_pair(x01.x, x01.y, fr[1][0][0], fr[1][1][0]);
    rs_split_pair(x11.x, x11.y, fr[1][0][1], fr[1][1][1]);
    rs_split_pair(x01.z, x01.w, fr[1][0][2], fr[1][1][2]);
    rs_split_pair(x11.z, x11.w, fr[1][0][3], fr[1][1][3]);
    /* The fragments are written before the wgmma.fence (PTX ISA: a fence between a register write and the wgmma
     * that reads it). */
#pragma unroll
    for (int ks = 0; ks < 2; ks++) {
        mg_fence_regs(fr[ks][0]);
        mg_fence_regs(fr[ks][1]);
    }
    const uint8_t *b0 = ring.stage(it) + C::A_BYTES;
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
        if (lane == 0) ring.release(it - 1);
    }
}

/* A whole piece [kb0, kb1) of kernel 6: the A fragments alternate between two register sets (fr0: even, fr1: odd),
 * so that with one wgmma group in flight no set is rewritten while a pending wgmma still reads it (PTX ISA: A
 * registers of a wgmma must not change before a wait_group covering it). Unrolled by two in straight-line code so
 * each set is its own registers. Returns the k-iteration counter after the piece. */
template <class C>
__device__ __forceinline__ int rs_kloop(float (&acc)[C::BN / 2], uint32_t (&fr0)[2][2][4], uint32_t (&fr1)[2][2][4],
                                        const Ring<C> &ring, uint32_t smem_base, int it, int kb0, int kb1,
                                        const RsLane &ln, int lane) {
    int kb = kb0;
    while (kb < kb1) {
        rs_kiter<C>(acc, fr0, ring, smem_base, it, kb - kb0, ln, lane);
        kb++, it++;
        if (kb >= kb1) break;
        rs_kiter<C>(acc, fr1, ring, smem_base, it, kb - kb0, ln, lane);
        kb++, it++;
    }
    return it;
}

}  // namespace mgws

#endif /* MG_WS_MAINLOOP_CUH */
