/* 02_mma_sync.cu: kernel 2, the first tensor-core rung.
 *
 * What it shows: a tiled GEMM on warp-level tensor-core MMAs (mma.sync, the Ampere instruction; Hopper still runs
 * it, through the legacy path at about half the wgmma rate), with the project's fused bias + NaN-propagating max
 * epilogue (partial maxima only, y is never written; contract: src/mg_kernel.h).
 *   - tf32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32, operands rounded fp32 -> tf32 with
 *           cvt.rna.tf32.f32 after the fragment load (round-to-nearest, ties away, as cuBLAS's TF32 does);
 *   - bf16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32; fp32 accumulation in both.
 *   - Global -> shared with 16-byte cp.async.cg into a STAGES-deep ring (commit_group / wait_group), one
 *     __syncthreads per k-tile; shared -> registers with ldmatrix.x4 from an XOR-swizzled layout
 *     (conflict-free for both the cp.async stores and the ldmatrix reads).
 *   - CTA tile BM x BN x BK and the warp count come from tile_configs/mma_sync.cfg (build/gen/mg_tiles.h).
 * What changed from kernel 1 (naive SIMT): tensor cores, shared-memory tiling, an async copy pipeline.
 * Host side: plan fixes the instantiation (precision), the load path (16-byte cp.async, or per-element loads when
 * K * elem_bytes % 16 != 0 or x / W is not 16-byte aligned: mg_problem.align), the tile counts and the 1-D grid;
 * no workspace, no prepare. launch checks the pointers (and their alignment against the plan's path) and enqueues.
 * Run: build/maxgemm run --kernel 2 --precision bf16 --check   (also tf32)
 * Measured (H200, headline M = 1024, N = K = 8192, bf16, max_dim 1, bench/results/h200.csv, run 126): 0.471 ms
 * (292 TFLOP/s, 0.40x kernel 0). Design, prediction, ptxas report, measurements: notes/02_mma_sync.md.
 *
 * Layout conventions (the project's, see src/maxgemm.h): x is M x K row-major, W is N x K row-major, so
 * C = x * W^T has A = x (row-major, "row") and B = W^T, which is W read K-major ("col"). Both operands
 * therefore sit in shared memory the same way: one smem row per x row / W row, K contiguous, and the same
 * ldmatrix (non-transposed) feeds both the A and the B fragments.
 *
 * The 32-bit trick for tf32: ldmatrix .b16 moves 8x8 matrices of 16-bit elements; lane l receives row l/4,
 * elements 2(l%4), 2(l%4)+1 = bytes 4(l%4) .. 4(l%4)+3 of the 16-byte row. Read as fp32, an 8-row x 16-byte
 * matrix is 8 x 4 floats and lane l receives (row l/4, float l%4): exactly the m16n8k8 tf32 A/B fragment
 * pattern (groupID = l/4, threadID_in_group = l%4). So in both precisions one k-step of the mma consumes
 * 32 bytes of K (two 16-byte chunks: k16 bf16 or k8 tf32), and the fragment addressing is identical:
 *   A (x4):  regs {a0,a1,a2,a3} = (rows 0-7, chunk lo), (rows 8-15, chunk lo), (rows 0-7, hi), (rows 8-15, hi)
 *   B (x4):  regs = n-tile j: (k lo, k hi), n-tile j+1: (k lo, k hi); W rows n, chunks along K.
 * (PTX ISA, "Matrix fragments for mma.m16n8k8" (tf32) / "m16n8k16" (bf16), counted in 32-bit registers,
 * g = groupID = lane/4, t = threadID_in_group = lane%4: A reg r holds row g + 8*(r%2), 32-bit word t + 4*(r/2)
 * of the 32-byte k-step (tf32: k = t (+4); bf16: k = 2t, 2t+1 (+8)); B reg r holds n = g, word t + 4r;
 * C c0,c1 = (g, 2t + {0,1}), c2,c3 = (g + 8, 2t + {0,1}).)
 *
 * Epilogue (the point of the project): y = acc + b[col] in fp32, element by element (so inf/NaN rules are
 * exactly PyTorch's: -inf acc + inf bias is NaN), then
 *   max_dim 1: per row, max over the CTA's columns: within the thread, over the quad (__shfl_xor 1, 2), then
 *              across the warps sharing the rows through smem -> partial[tile_n * M + row];
 *   max_dim 0: per column, max over the CTA's rows: within the thread, over the 8 row groups (__shfl_xor
 *              4, 8, 16), then across warps through smem -> partial[tile_m * N + col].
 * Padding (rows >= M, cols >= N) is masked out of the max; it never competes (padding zeros + bias would
 * otherwise be able to win). y is never written.
 *
 * Odd shapes: every load is predicated; out-of-range rows, columns and k read as zeros (cp.async src-size 0).
 * The 16-byte cp.async path needs 16-byte aligned rows (K * elem_bytes % 16 == 0 and 16-byte aligned x, W);
 * otherwise (the plan's choice) a per-element, synchronous path fills the same smem layout (correct, slower).
 */
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mg_kernel.h"
#include "mg_tiles.h"

#if !defined(MG_TILE_mma_sync_tf32) || !defined(MG_TILE_mma_sync_bf16)
#error "tile_configs/mma_sync.cfg must have a 'mma_sync tf32' and a 'mma_sync bf16' row"
#endif

namespace mma_sync_k {

/* ---- tile configuration ---------------------------------------------------------------------------- */

/* Picks the warp grid WARPS_M x WARPS_N whose warp tile is the squarest (fewest ldmatrix per mma), among
 * those whose warp tile is a whole number of 16 x 16 blocks (m16 A fragments, pairs of n8 B fragments). */
constexpr int pick_warps_m(int bm, int bn, int warps) {
    int best = 0, best_cost = 1 << 30;
    for (int wm = 1; wm <= warps; wm *= 2) {
        if (warps % wm) continue;
        int wn = warps / wm;
        if (bm % (wm * 16) || bn % (wn * 16)) continue;
        int tm = bm / wm, tn = bn / wn;
        int cost = tm > tn ? tm - tn : tn - tm;
        if (cost < best_cost) { best_cost = cost; best = wm; }
    }
    return best;
}

template <int PREC, int BM_, int BN_, int BK_, int STAGES_, int WARPS_, int CLUSTER_>
struct Cfg {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, STAGES = STAGES_, WARPS = WARPS_;
    static constexpr int THREADS = WARPS * 32;
    static constexpr int EB = PREC == MG_PREC_BF16 ? 2 : 4;   /* element bytes */
    static constexpr int EPC = 16 / EB;                        /* elements per 16-byte chunk */
    static constexpr int ROWB = BK * EB;                       /* bytes per smem row (one x or W row, BK of K) */
    static constexpr int CH = ROWB / 16;                       /* 16-byte chunks per smem row */
    static constexpr int KSTEPS = CH / 2;                      /* mma k-steps per k-tile (32 bytes of K each) */
    static constexpr int WARPS_M = pick_warps_m(BM, BN, WARPS);
    static constexpr int WARPS_N = WARPS_M ? WARPS / WARPS_M : 1;
    static constexpr int WM = WARPS_M ? BM / WARPS_M : 16, WN = BN / WARPS_N;
    static constexpr int MT = WM / 16, NT = WN / 8;            /* m16 / n8 mma tiles per warp */
    static constexpr int A_BYTES = BM * ROWB, B_BYTES = BN * ROWB, STAGE_BYTES = A_BYTES + B_BYTES;
    static constexpr int PIPE_BYTES = STAGES * STAGE_BYTES;
    static constexpr int RED_FLOATS = (WARPS_N * BM > WARPS_M * BN) ? WARPS_N * BM : WARPS_M * BN;
    static constexpr int SMEM = PIPE_BYTES > RED_FLOATS * 4 ? PIPE_BYTES : RED_FLOATS * 4;
    /* XOR swizzle of the 16-byte chunk index: 8 consecutive rows read at the same logical chunk (one ldmatrix
     * 8x8 matrix) must land on 8 different 16-byte bank groups of a 128-byte bank line. RPL rows share one
     * 128-byte line; the chunk is XORed with (row / RPL) over log2(min(CH, 8)) bits. */
    static constexpr int RPL = CH >= 8 ? 1 : 8 / CH;
    static constexpr int SWM = (CH >= 8 ? 8 : CH) - 1;

    static_assert(PREC == MG_PREC_TF32 || PREC == MG_PREC_BF16, "mma_sync: tf32 or bf16 only");
    static_assert(CLUSTER_ == 1, "mma_sync.cfg: cluster must be 1 (this kernel uses no clusters)");
    static_assert(WARPS_M > 0, "mma_sync.cfg: no warp grid splits bm x bn into 16x16-multiple warp tiles");
    static_assert(ROWB >= 32 && ROWB <= 256 && (ROWB & (ROWB - 1)) == 0,
                  "mma_sync.cfg: bk * elem_bytes must be a power of two in 32..256 bytes");
    static_assert(NT % 2 == 0, "warp tile n must be a multiple of 16 (ldmatrix.x4 loads two n8 tiles)");
    static_assert((BM * CH) % THREADS == 0 && (BN * CH) % THREADS == 0,
                  "mma_sync.cfg: the (bm + bn) x bk tiles must split evenly into 16-byte chunks per thread");
    static_assert(STAGES >= 2, "mma_sync.cfg: stages must be >= 2 (the ring overlaps copy and compute)");
    static_assert(SMEM <= 227 * 1024, "mma_sync.cfg: shared memory exceeds the 227 KiB per-block limit");
    static_assert(MT * NT * 4 <= 128, "warp tile larger than 64x64: the accumulators would not fit in registers");

    __device__ static __forceinline__ uint32_t swz(int row, int chunk) {
        return (uint32_t)(row * ROWB + ((chunk ^ ((row / RPL) & SWM)) << 4));
    }
};

/* ---- PTX wrappers ------------------------------------------------------------------------------------ */

__device__ __forceinline__ uint32_t smem_u32(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

/* 16-byte async copy; src_bytes = 0 reads nothing and zero-fills the 16 bytes (the tail predicate). */
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void *src, int src_bytes) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes)
                 : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory"); }

__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

/* fp32 bits -> tf32 bits, round to nearest (ties away); without it the tensor core truncates. */
__device__ __forceinline__ uint32_t to_tf32(uint32_t v) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(v)));
    return r;
}

template <int PREC>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    if constexpr (PREC == MG_PREC_BF16) {
        asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

template <int PREC>
__device__ __forceinline__ float load_bias(const void *b, int col) {
    if constexpr (PREC == MG_PREC_BF16)
        return __bfloat162float(static_cast<const __nv_bfloat16 *>(b)[col]);
    else
        return static_cast<const float *>(b)[col];
}

/* ---- the kernel -------------------------------------------------------------------------------------- */

struct Params {
    const void *x, *w, *b;
    float *partial;
    int m, n, k;
    int tiles_m, tiles_n;
    int max_dim;
};

/* Copies one 16-byte chunk (EPC elements of one row, starting at element k) of a row-major rows x K operand
 * into smem, zero-filling whatever lies outside (row >= rows, k >= K). */
template <class C, bool ALIGNED>
__device__ __forceinline__ void load_chunk(uint32_t dst, const void *base, int row, int rows, int k, int K) {
    const bool row_ok = row < rows;
    if constexpr (ALIGNED) {
        /* K is a multiple of EPC here, so a chunk lies wholly inside or wholly outside [0, K). */
        const bool ok = row_ok && k < K;
        const char *src = static_cast<const char *>(base);
        if (ok) src += ((size_t)row * (size_t)K + (size_t)k) * C::EB;   /* else: never read (src-size 0) */
        cp_async_16(dst, src, ok ? 16 : 0);
    } else {
        /* Rows are not 16-byte aligned: per-element predicated loads, then one 16-byte smem store. */
        uint32_t v[4];
        if constexpr (C::EB == 4) {
            const unsigned int *src = static_cast<const unsigned int *>(base);
#pragma unroll
            for (int e = 0; e < 4; e++)
                v[e] = (row_ok && k + e < K) ? __ldg(src + (size_t)row * (size_t)K + (k + e)) : 0u;
        } else {
            const unsigned short *src = static_cast<const unsigned short *>(base);
            uint32_t h[8];
#pragma unroll
            for (int e = 0; e < 8; e++)
                h[e] = (row_ok && k + e < K) ? (uint32_t)__ldg(src + (size_t)row * (size_t)K + (k + e)) : 0u;
#pragma unroll
            for (int e = 0; e < 4; e++) v[e] = h[2 * e] | (h[2 * e + 1] << 16);   /* little-endian pairs */
        }
        asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst), "r"(v[0]), "r"(v[1]), "r"(v[2]),
                     "r"(v[3])
                     : "memory");
    }
}

/* Issues the copies of k-tile kt (x rows m0.., W rows n0.., K columns kt*BK..) into ring slot `stage`. */
template <class C, bool ALIGNED>
__device__ __forceinline__ void load_tile(uint32_t smem, int stage, int kt, const Params &p, int m0, int n0) {
    const uint32_t sA = smem + stage * C::STAGE_BYTES, sB = sA + C::A_BYTES;
    const int kbase = kt * C::BK;
#pragma unroll
    for (int j = 0; j < C::BM * C::CH / C::THREADS; j++) {
        const int i = threadIdx.x + j * C::THREADS;   /* consecutive threads: consecutive chunks of a row */
        const int r = i / C::CH, c = i % C::CH;
        load_chunk<C, ALIGNED>(sA + C::swz(r, c), p.x, m0 + r, p.m, kbase + c * C::EPC, p.k);
    }
#pragma unroll
    for (int j = 0; j < C::BN * C::CH / C::THREADS; j++) {
        const int i = threadIdx.x + j * C::THREADS;
        const int r = i / C::CH, c = i % C::CH;
        load_chunk<C, ALIGNED>(sB + C::swz(r, c), p.w, n0 + r, p.n, kbase + c * C::EPC, p.k);
    }
}

template <int PREC, class C, bool ALIGNED>
__global__ void __launch_bounds__(C::THREADS, 1) mma_sync_kernel(const Params p) {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    const uint32_t smem = smem_u32(smem_raw);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int warp_m = warp / C::WARPS_N, warp_n = warp % C::WARPS_N;
    const int wm0 = warp_m * C::WM, wn0 = warp_n * C::WN;   /* warp tile origin inside the CTA tile */

    /* Grouped tile order for L2 reuse: GROUP_M row-tiles are walked fastest, so the CTAs resident at one time
     * share a few W panels (each read once from DRAM) and the x rows of the group (small, stays in L2).
     * At the headline (8 x 32 tiles) one group holds all of M: 8 consecutive CTAs share one W panel. */
    constexpr int GROUP_M = 16;
    const int pid = blockIdx.x;
    const int per_group = GROUP_M * p.tiles_n;
    const int first_m = (pid / per_group) * GROUP_M;
    const int gsize = min(p.tiles_m - first_m, GROUP_M);
    const int tile_m = first_m + (pid % per_group) % gsize;
    const int tile_n = (pid % per_group) / gsize;
    const int m0 = tile_m * C::BM, n0 = tile_n * C::BN;

    float acc[C::MT][C::NT][4];
#pragma unroll
    for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
        for (int ni = 0; ni < C::NT; ni++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[mi][ni][r] = 0.f;

    const int KT = p.k / C::BK + (p.k % C::BK != 0);   /* k-tiles; 0 when K = 0 (then y = b) */

    /* Prologue: fill STAGES-1 slots. Always commit, even an empty group, so group g <-> k-tile g. */
#pragma unroll
    for (int s = 0; s < C::STAGES - 1; s++) {
        if (s < KT) load_tile<C, ALIGNED>(smem, s, s, p, m0, n0);
        cp_async_commit();
    }

    /* Per-lane ldmatrix coordinates (see the header): A lane -> row lane%16, chunk-in-pair lane/16;
     * B lane -> row (lane%8) + 8*(lane/16), chunk-in-pair (lane/8)%2. */
    const int a_row = wm0 + (lane & 15), a_hi = lane >> 4;
    const int b_row = wn0 + (lane & 7) + ((lane >> 4) << 3), b_hi = (lane >> 3) & 1;

#pragma unroll 1
    for (int kt = 0; kt < KT; kt++) {
        /* Groups committed so far: STAGES-1+kt; allowing STAGES-2 in flight means k-tile kt has landed
         * (for this thread's copies). The barrier then publishes every thread's copies AND guarantees every
         * warp finished computing k-tile kt-1, whose slot (kt-1) % STAGES the next load overwrites. */
        cp_async_wait<C::STAGES - 2>();
        __syncthreads();
        {
            const int nk = kt + C::STAGES - 1;
            if (nk < KT) load_tile<C, ALIGNED>(smem, nk % C::STAGES, nk, p, m0, n0);
            cp_async_commit();
        }

        const uint32_t sA = smem + (kt % C::STAGES) * C::STAGE_BYTES, sB = sA + C::A_BYTES;
#pragma unroll
        for (int ks = 0; ks < C::KSTEPS; ks++) {
            uint32_t af[C::MT][4], bfr[C::NT][2];
#pragma unroll
            for (int mi = 0; mi < C::MT; mi++) ldmatrix_x4(af[mi], sA + C::swz(a_row + mi * 16, 2 * ks + a_hi));
#pragma unroll
            for (int nj = 0; nj < C::NT / 2; nj++) {
                uint32_t t[4];
                ldmatrix_x4(t, sB + C::swz(b_row + nj * 16, 2 * ks + b_hi));
                bfr[2 * nj][0] = t[0];
                bfr[2 * nj][1] = t[1];
                bfr[2 * nj + 1][0] = t[2];
                bfr[2 * nj + 1][1] = t[3];
            }
            if constexpr (PREC == MG_PREC_TF32) {
#pragma unroll
                for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
                    for (int r = 0; r < 4; r++) af[mi][r] = to_tf32(af[mi][r]);
#pragma unroll
                for (int ni = 0; ni < C::NT; ni++)
#pragma unroll
                    for (int r = 0; r < 2; r++) bfr[ni][r] = to_tf32(bfr[ni][r]);
            }
#pragma unroll
            for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
                for (int ni = 0; ni < C::NT; ni++) mma<PREC>(acc[mi][ni], af[mi], bfr[ni]);
        }
    }

    /* ---- fused epilogue: bias + NaN-propagating max; the pipeline smem is reused for the cross-warp step
     * (drain all copies, even empty groups, and wait for every warp to leave the main loop first). ---- */
    cp_async_wait<0>();
    __syncthreads();
    float *red = reinterpret_cast<float *>(smem_raw);
    const float NEG_INF = __int_as_float(0xff800000u);   /* identity of mg_nanmaxf */
    const int g = lane >> 2, t = lane & 3;                /* groupID, threadID_in_group */

    float bias[C::NT][2];
    bool col_ok[C::NT][2];
#pragma unroll
    for (int ni = 0; ni < C::NT; ni++)
#pragma unroll
        for (int c = 0; c < 2; c++) {
            const int col = n0 + wn0 + ni * 8 + 2 * t + c;
            col_ok[ni][c] = col < p.n;
            bias[ni][c] = col_ok[ni][c] ? load_bias<PREC>(p.b, col) : 0.f;
        }

    if (p.max_dim == 1) {
        /* Row max over this CTA's columns. acc[mi][ni][2h + c] is row wm0 + 16mi + 8h + g, col wn0 + 8ni + 2t + c. */
#pragma unroll
        for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                float v = NEG_INF;
#pragma unroll
                for (int ni = 0; ni < C::NT; ni++)
#pragma unroll
                    for (int c = 0; c < 2; c++)
                        if (col_ok[ni][c]) v = mg_nanmaxf(v, acc[mi][ni][2 * h + c] + bias[ni][c]);
                /* the quad (same g, t = 0..3) holds the row's other columns */
                v = mg_nanmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
                v = mg_nanmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
                if (t == 0) red[warp_n * C::BM + wm0 + mi * 16 + h * 8 + g] = v;
            }
        __syncthreads();
        for (int r = threadIdx.x; r < C::BM; r += C::THREADS) {
            float v = red[r];
#pragma unroll
            for (int wn = 1; wn < C::WARPS_N; wn++) v = mg_nanmaxf(v, red[wn * C::BM + r]);
            const int row = m0 + r;
            if (row < p.m) p.partial[(size_t)tile_n * (size_t)p.m + row] = v;
        }
    } else {
        /* Column max over this CTA's rows. */
        bool row_ok[C::MT][2];
#pragma unroll
        for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++) row_ok[mi][h] = m0 + wm0 + mi * 16 + h * 8 + g < p.m;
#pragma unroll
        for (int ni = 0; ni < C::NT; ni++)
#pragma unroll
            for (int c = 0; c < 2; c++) {
                float v = NEG_INF;
#pragma unroll
                for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
                    for (int h = 0; h < 2; h++)
                        if (row_ok[mi][h]) v = mg_nanmaxf(v, acc[mi][ni][2 * h + c] + bias[ni][c]);
                /* lanes with the same t (g = 0..7) hold the column's other rows */
                v = mg_nanmaxf(v, __shfl_xor_sync(0xffffffffu, v, 4));
                v = mg_nanmaxf(v, __shfl_xor_sync(0xffffffffu, v, 8));
                v = mg_nanmaxf(v, __shfl_xor_sync(0xffffffffu, v, 16));
                if (g == 0) red[warp_m * C::BN + wn0 + ni * 8 + 2 * t + c] = v;
            }
        __syncthreads();
        for (int cix = threadIdx.x; cix < C::BN; cix += C::THREADS) {
            float v = red[cix];
#pragma unroll
            for (int wm = 1; wm < C::WARPS_M; wm++) v = mg_nanmaxf(v, red[wm * C::BN + cix]);
            const int col = n0 + cix;
            if (col < p.n) p.partial[(size_t)tile_m * (size_t)p.n + col] = v;
        }
    }
}

/* ---- host side ---------------------------------------------------------------------------------------- */

template <int BM_, int BN_, int BK_, int STAGES_, int WARPS_, int CLUSTER_>
struct TileArgs {
    template <int PREC>
    using cfg = Cfg<PREC, BM_, BN_, BK_, STAGES_, WARPS_, CLUSTER_>;
};
using CfgTF32 = TileArgs<MG_TILE_mma_sync_tf32>::cfg<MG_PREC_TF32>;
using CfgBF16 = TileArgs<MG_TILE_mma_sync_bf16>::cfg<MG_PREC_BF16>;

/* Index math uses int for rows, columns and k (+ one tile of slack) and size_t for element offsets. */
constexpr int DIM_LIMIT = 0x7fffffff - 1024;

/* The private part of a launch plan (mg_launch_plan::priv): every choice plan made; launch only reads it. */
struct mma_sync_priv {
    int enqueue;            /* 0: empty output (M = 0 or N = 0), nothing to launch */
    int bf16;               /* instantiation: 1 CfgBF16 (bf16 mode), 0 CfgTF32 (tf32 mode) */
    int aligned;            /* 1: 16-byte cp.async loads (K * elem_bytes % 16 == 0, x and W 16-byte aligned);
                             * 0: per-element predicated loads (mma_sync_kernel<..., false>) */
    int tiles_m, tiles_n;   /* row tiles, column tiles; the 1-D grid is tiles_m * tiles_n CTAs in grouped order */
    unsigned grid;          /* CTAs */
};
static_assert(sizeof(mma_sync_priv) <= sizeof(((mg_launch_plan *)nullptr)->priv.bytes),
              "mma_sync_priv outgrows mg_launch_plan::priv");

template <int PREC, class C>
mg_status launch_impl(const mg_launch_plan *lp, const mma_sync_priv &pp, const mg_io *io, cudaStream_t stream) {
    const mg_problem *p = &lp->p;
    Params kp;
    kp.x = io->x;
    kp.w = io->w;
    kp.b = io->b;
    kp.partial = io->partial;
    kp.m = p->m;
    kp.n = p->n;
    kp.k = p->k;
    kp.tiles_m = pp.tiles_m;
    kp.tiles_n = pp.tiles_n;
    kp.max_dim = p->max_dim;

    void (*kern)(const Params) = pp.aligned ? mma_sync_kernel<PREC, C, true> : mma_sync_kernel<PREC, C, false>;
    /* Above 48 KiB of dynamic shared memory a kernel must opt in (per device, so set it on every launch). */
    MG_CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM));
    kern<<<pp.grid, C::THREADS, C::SMEM, stream>>>(kp);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

}  // namespace mma_sync_k

using namespace mma_sync_k;

/* Partial rows for a batch of p->m rows: one per column tile (max_dim 1) or row tile (max_dim 0); at least 1, so
 * an empty output still names one (never written, never read: the finalize reduces 0 elements). */
static int mma_sync_rows(const mg_problem *p) {
    const int bm = p->prec == MG_PREC_BF16 ? CfgBF16::BM : CfgTF32::BM;
    const int bn = p->prec == MG_PREC_BF16 ? CfgBF16::BN : CfgTF32::BN;
    const int t = p->max_dim == 1 ? mg_cdiv(p->n, bn) : mg_cdiv(p->m, bm);
    return t > 1 ? t : 1;
}

/* The problem-side constraints (supports() and plan()). */
static mg_status mma_sync_check(const mg_problem *p) {
    if (p->prec != MG_PREC_TF32 && p->prec != MG_PREC_BF16)
        return mg_set_error(MG_ERR_UNSUPPORTED, "mma_sync: precision %s is not supported (tf32 and bf16 only)",
                            mg_precision_name(p->prec));
    if (p->max_dim != 0 && p->max_dim != 1)
        return mg_set_error(MG_ERR_UNSUPPORTED, "mma_sync: max_dim must be normalised to 0 or 1 (got %d)",
                            p->max_dim);
    if (p->m < 0 || p->n < 0 || p->k < 0 || p->m > DIM_LIMIT || p->n > DIM_LIMIT || p->k > DIM_LIMIT)
        return mg_set_error(MG_ERR_UNSUPPORTED, "mma_sync: M, N, K must be in 0 .. %d (got %d, %d, %d)", DIM_LIMIT,
                            p->m, p->n, p->k);
    const int bm = p->prec == MG_PREC_BF16 ? CfgBF16::BM : CfgTF32::BM;
    const int bn = p->prec == MG_PREC_BF16 ? CfgBF16::BN : CfgTF32::BN;
    const long long tiles = (long long)mg_cdiv(p->m, bm) * mg_cdiv(p->n, bn);
    if (tiles > 0x7fffffffLL)
        return mg_set_error(MG_ERR_UNSUPPORTED, "mma_sync: %lld output tiles exceed the 1-D grid limit", tiles);
    return MG_OK;
}

static mg_status mma_sync_supports(const mg_problem *p, int sm) {
    /* mma.sync with tf32/bf16 exists from sm_80; this build carries sm_90a code only (Makefile GENCODE), so on
     * another GPU the launch fails with CUDA's "no kernel image" error rather than running wrong code.
     * sm = 0: any GPU (the problem-side constraints only). */
    if (sm != 0 && sm < 80)
        return mg_set_error(MG_ERR_UNSUPPORTED, "mma_sync: needs compute capability 8.0+ (got %d.%d)", sm / 10,
                            sm % 10);
    return mma_sync_check(p);
}

/* No workspace; the rows grow with m (max_dim 0) or do not depend on it (max_dim 1): p->m's count covers every
 * batch. */
static void mma_sync_bounds(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes) {
    (void)dev;
    if (partial_rows) *partial_rows = mma_sync_rows(p);
    if (ws_bytes) *ws_bytes = 0;
}

/* Every choice for the problem: the instantiation (precision), the load path (16-byte cp.async when every row
 * start is 16-byte aligned: K * elem_bytes % 16 == 0 and both bases aligned, p->align; else the per-element
 * path), the tile counts and the grid. No option applies to this kernel. */
static mg_status mma_sync_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    (void)opt;
    if (!p || !lp)
        return mg_set_error(MG_ERR_INVALID_ARG, "mma_sync: plan called with a NULL %s", p ? "launch plan" : "problem");
    mg_status st = mma_sync_supports(p, dev ? dev->sm : 0);
    if (st != MG_OK) return st;

    mma_sync_priv pp = {};
    pp.bf16 = p->prec == MG_PREC_BF16;
    const int bm = pp.bf16 ? CfgBF16::BM : CfgTF32::BM, bn = pp.bf16 ? CfgBF16::BN : CfgTF32::BN;
    const int bk = pp.bf16 ? CfgBF16::BK : CfgTF32::BK, stages = pp.bf16 ? CfgBF16::STAGES : CfgTF32::STAGES;
    const int warps = pp.bf16 ? CfgBF16::WARPS : CfgTF32::WARPS;
    const size_t eb = mg_elem_bytes(p->prec);
    pp.tiles_m = mg_cdiv(p->m, bm);
    pp.tiles_n = mg_cdiv(p->n, bn);
    /* An empty output (M = 0 with max_dim 1, N = 0 with max_dim 0) has nothing to reduce; a zero-size grid would be
     * a launch error, so the plan launches nothing. */
    pp.enqueue = p->m != 0 && p->n != 0;
    pp.grid = pp.enqueue ? (unsigned)((long long)pp.tiles_m * pp.tiles_n) : 0u;   /* <= 2^31 - 1: mma_sync_check */
    const bool rows16 = ((size_t)p->k * eb) % 16 == 0;
    const bool x16 = (p->align & MG_ALIGN_X16) != 0, w16 = (p->align & MG_ALIGN_W16) != 0;
    pp.aligned = rows16 && x16 && w16;

    const int rows = mma_sync_rows(p);
    char summary[sizeof lp->summary];
    if (!pp.enqueue)
        snprintf(summary, sizeof summary, "mma_sync: empty output (M=%d, N=%d, max_dim %d), nothing to launch", p->m,
                 p->n, p->max_dim);
    else
        snprintf(summary, sizeof summary,
                 "mma_sync %s %dx%dx%d, %d stages, %d warps: %d x %d tiles (%u CTAs), %s, %d partial rows",
                 pp.bf16 ? "bf16" : "tf32", bm, bn, bk, stages, warps, pp.tiles_m, pp.tiles_n, pp.grid,
                 pp.aligned ? "16-byte cp.async loads"
                 : !rows16  ? "per-element loads (K * elem_bytes is not a multiple of 16)"
                 : !x16     ? "per-element loads (x is not 16-byte aligned)"
                            : "per-element loads (W is not 16-byte aligned)",
                 rows);
    mg_plan_simple(lp, rows, 0, summary);
    memcpy(lp->priv.bytes, &pp, sizeof pp);
    return MG_OK;
}

static mg_status mma_sync_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    (void)state;   /* no prepare: reads the caller's x and W directly */
    if (!lp || !io)
        return mg_set_error(MG_ERR_INVALID_ARG, "mma_sync: launch called with a NULL %s", lp ? "io" : "launch plan");
    mma_sync_priv pp;
    memcpy(&pp, lp->priv.bytes, sizeof pp);
    if (!pp.enqueue) return MG_OK;   /* empty output: nothing to reduce */
    if (!io->x || !io->w || !io->b || !io->partial)
        return mg_set_error(MG_ERR_INVALID_ARG, "mma_sync: NULL pointer:%s%s%s%s", io->x ? "" : " x",
                            io->w ? "" : " W", io->b ? "" : " b", io->partial ? "" : " partial");
    /* The plan chose the 16-byte cp.async path from the alignment it was made for; these pointers must have it. */
    if (pp.aligned && ((uintptr_t)io->x % 16 != 0 || (uintptr_t)io->w % 16 != 0))
        return mg_set_error(MG_ERR_INVALID_ARG,
                            "mma_sync: the launch plan reads x and W with 16-byte cp.async (made for 16-byte aligned "
                            "bases, mg_problem.align), but %s is not 16-byte aligned (x %p, W %p)",
                            (uintptr_t)io->x % 16 != 0 ? "x" : "W", io->x, io->w);
    if (pp.bf16) return launch_impl<MG_PREC_BF16, CfgBF16>(lp, pp, io, (cudaStream_t)stream);
    return launch_impl<MG_PREC_TF32, CfgTF32>(lp, pp, io, (cudaStream_t)stream);
}

extern "C" const mg_kernel_ops mg_ops_mma_sync = {
    mma_sync_supports,      /* supports */
    mma_sync_bounds,        /* bounds: no workspace */
    mma_sync_plan,          /* plan */
    NULL,                   /* prepare: none (reads the caller's x and W directly) */
    NULL,                   /* release */
    mma_sync_launch,        /* launch */
};
