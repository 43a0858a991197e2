/* 08_wgmma_swapab.cu: kernel 8, swap-AB warp-specialized wgmma for small and mid M (M <= 1024), tf32 and bf16, with
 * the fused bias + NaN-propagating max epilogue, an optional deterministic split-K and optional clusters of 2.
 *
 * What it shows: wgmma's M side is fixed at 64 rows, so at small batch a tile of x rows on that side (kernels 3, 4)
 * is mostly padding and reads W in narrow panels. Swapping the operands puts W's rows on the M side (64 per consumer
 * warpgroup) and x's M rows on the N side, which comes in steps of 8: NX = the smallest of 8, 16, 32, 64, 96, 128, 152,
 * 192, 256 holding M (tile_configs/wgmma_swapab.cfg, one instantiation each). Above 256 rows x is cut into several x
 * tiles of one width, the two-consumer one that wastes least (waves x NX: M = 300 and 600 as 2 and 4 x n152, 384 and
 * 768 as 2 and 4 x n192, 512 and 1024 as 2 and 4 x n256), the x tiles of a W tile neighbours in the grid so that they
 * read it from L2 together: the fine N side of wgmma is the mid-M tile shape kernel 4 lacks (issue 18 item 3). Both
 * operands stay K-major as they are in memory (x M x K, W N x K), so both come by TMA with the 128B swizzle as in
 * kernel 4. At N = K = 8192 and M <= 64
 * the forward is a W stream (128 MiB bf16; floor ~31.5 us at the measured copy rate): 128 CTAs each stream a
 * 64-row panel of W (1 MiB) through a deep ring (96-192 KiB of W in flight per SM, 6-12 stages) while x's few rows
 * ride along from L2. From M = 65 two consumers share each x box (128 W rows per tile, 64 tiles) and K is split in two
 * (S = 2, 128 CTAs), so x's L2 traffic per W byte halves. The design, role by role: kernels/swapab_kernel.cuh (its
 * fused finish kernels/swapab_finish.cuh, its parameters kernels/swapab_params.cuh); every launch choice (NX,
 * consumers, stages, S, grid, padding, workspace): src/swapab_policy.h (CPU-tested).
 * What changed from kernel 4: the operand roles (W on wgmma's M side), one tile of x rows for all of M, a ring as
 * deep as shared memory allows, split-K with a last-arriver fix-up instead of stream-K with waiting owners, and
 * partial maxima per 64-row W slab (max_dim 1: cdiv(N, 64) partial rows; max_dim 0: one).
 * Design choices that differ from the brief (issue 18 item 1+2): (1) max_dim 1 reduces per 64-row slab, not per
 * 128-row tile: the two consumers never meet (no cross-warpgroup barrier), at the cost of twice the partial rows for
 * the finalize (64 KiB more to read at M = 256); (2) W is read from a copy in 128-byte-column panels (W PANELS
 * below: every W box is contiguous; +3.5% on the W-stream rows, run 85), bk / (128 B) boxes per stage (bk = 128
 * bf16 / 64 tf32 for NX <= 64; a tile_configs knob to tune), and a box wholly past K in the last k-block is not
 * loaded: its wgmmas read an 8 KiB zero
 * box in shared memory (a select; a wgmma under a branch is serialised by ptxas); (3) the x copy is made for a
 * misaligned x base too (it is small); (4) the grid is persistent (min(units, SMs) CTAs walking the units), so a
 * CTA's next unit loads under its split handoff and epilogue; (5) clusters of 2 (an option, mg_options.cluster, or a
 * .cfg column): with an even number of x tiles the two CTAs share one W tile and multicast its halves (W multicast,
 * session 13: 0.99x at M = 300 where the x multicast ran 0.88x, run 82), else they share the x box (x multicast;
 * mg_options.mcast = x takes it with an even number too: since session 17's producer +1 to +3% at M = 256-300, run
 * 105);
 * (6) the w256 rows: 256 W rows per tile, two 64-row slabs per consumer (two accumulator arrays, two m64 wgmmas per
 * k-step on one x box), which the x-tile rule takes at M = 513-768 on wide N (one wave of 128 CTAs instead of two);
 * (7) the fused finish: for max_dim 1 the kernel writes the output itself (the zeros at the start, by the CTA with
 * the first start ticket; NaN from the epilogue of a row whose max is not finite, after them), so no finalize kernel
 * follows and no CTA waits at its end (mg_options.fuse; session 19); for max_dim 0 the last CTA only in
 * clusters of 2 with fuse=force (one SM's N GELUs cost more than the finalize kernels, run 72), and in clusters of 1
 * the grid finish (the default there): one cooperative launch, every CTA finishing its own
 * rows or a share of the N columns after one grid barrier, the CTAs' sums exchanged through tagged slots that the
 * producer warpgroup's idle warp 2 polls from the CTA's start (THE POLLER, swapab_finish.cuh); (8) the w128_n64 row:
 * the n64 x tile on 128 W rows (two consumers), taken with several x tiles (x_tile=64 at M > 64, from the dispatch
 * table): M = 128 as 2 x n64 on 64 W tiles, 128 CTAs without split-K (cuBLAS's 128x64 tile there; run 77: 1.06 /
 * 1.04x against n128 split 2's 0.96), or by w_rows=128 at M <= 64 (one x tile, split by the rule: run 123's X;
 * mg_options.w_rows picks any tile height).
 *
 * Shapes: any N >= 1, K >= 0, 1 <= M <= 1024 (supports() refuses larger M, where kernel 4's 128 x 256 tiles win, and
 * fp32 mode, which is kernels 6 and 7's). K = 0: no loads, no waits, y = b. Rows of x or W that are not
 * 16-byte multiples (K * element size % 16 != 0: K = 1, 129, 257, ...) or not 16-byte aligned bases: W's panels
 * (made for every W) hold any K and alignment, zero past K; x is copied per call into the workspace with padded
 * rows (the plan says so), its descriptor still saying K columns, so the padding is never read.
 * tf32: wgmma .tf32 reads the top 19 bits of each fp32 (truncation), inside the tf32 bar (2e-3), as kernel 4.
 * Split-K is bitwise deterministic: the S partial accumulators are summed in the fixed order 0 .. S - 1 from memory
 * by whichever split arrives last (no float atomics); S > 1 differs from S = 1 only by the order of fp32 sums.
 *
 * Run:  build/maxgemm run --kernel 8 --precision bf16 -m 300 --no-shortcut --check [--splits S] [--x-tile NX]
 *         [--cluster 2 [--mcast auto|w|x]] [--fuse auto|off|force] [--verbose]
 *       make ncu KERNEL=8 PREC=bf16;  tools/ncu_mid_m.sh build out.txt "8 bf16 1 300"
 * measured (H200, run 196, x cuBLAS same process, auto = kernel 8 here): bf16 M = 1-64 35.4-37.3 us md1
 * (against the 31.4 us W floor at that H200's copy rate) and 37.7-38.9 us md0 (1.13-1.23x over both), M = 96-192
 * 1.06-1.18x, M = 256 1.042x, M = 300 in clusters of 2 sharing x (mcast=x) 1.06-1.09x, M = 384-1024 1.05-1.10x;
 * tf32 M = 1-1024 1.043-1.55x. Where the M <= 64 time goes there (run 196; notes/18_small_m.md "Session 45"): the
 * bare W ring's CTAs span 30.0 us of its 33.9-34.7 us event time; kernel 8's wgmmas lower the SM clock to 1.80 GHz
 * (1.97 without: ~1.2 us of the W stream); max_dim 0's grid-wide mean ends +1.8 us after the last epilogue
 * (run 172 before W8: 35.1-36.7 / 38.0-39.1 us; on an H100, run 195 with W8 and R: bf16 M = 1-64 47.9-49.5 /
 * 50.2-50.8 us against a 44.3 us W floor).
 * W in panels: +3.5% on the W-stream rows (run 85); the fused finish without the second fence: +2% on the fused
 * max_dim 1 rows (run 90); no divisions before the first load: +0.5% (run 94); the grid finish: +2 to +4% on max_dim 0
 * at M <= 64 (run 97); the clusters-of-2 producer on the uniform datapath: +5 to +20% on every clusters-of-2 plan
 * (run 101); max_dim 1's start ticket (no arrival, no last CTA) with the producer on the uniform datapath but at n8:
 * +2.7% geomean on bf16 max_dim 1's M = 1-768 rows, +0.5 to +5% each (run 112, same-run A/B); max_dim 0's tagged slots:
 * +1.7 to +3.5% at M = 1-8 (run 116), the own slot from the register +1 to +3% at M <= 16 (run 118), the grid finish by
 * default at mid M 0-6% over the finalize (run 118); n16 in the producer's R form +2.0% (run 116); the grid finish's
 * parameters by value (GridArgs, kernels/swapab_finish.cuh): +0.6 / +0.8% on bf16 / tf32 max_dim 0 at M <= 64 (run 129,
 * H200); the poller: +0.4 to +0.7% on bf16 max_dim 0 (runs 145-147, H100: the launch's tail after the last epilogue
 * 2.5-2.85 -> 1.8-2.4 us; on an H200, runs 152-153, 2.0-2.3 us); W's map without L2 promotion (w_map): level on an H100
 * (run 156), where tools/probe_start.cu's copy of the map read 128 MiB in 33.4 us without it against 35.6-36.0 with it
 * on an H200 (run 155; kernel 8 at bf16 M = 8 was that ring + ~0.3 us); on an H200 (run 172) kernel 8's M = 8 launch
 * still spans 32.1 us as in run 153: the promotion was not what kernel 8 lost there; the own rows' sum by one warp and
 * the grid finish's GELU in fp32 (W8): +0.6% on bf16 max_dim 0 at M <= 64 (run 190, H100: 50.6-51.0 -> 50.2-50.8 us,
 * four passes each).
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <stdlib.h>
#include <string.h>

#include "swapab_kernel.cuh"

#if !defined(MG_TILE_wgmma_swapab_n8_bf16) || !defined(MG_TILE_wgmma_swapab_n256_bf16) || \
    !defined(MG_TILE_wgmma_swapab_n8_tf32) || !defined(MG_TILE_wgmma_swapab_n256_tf32)
#error "tile_configs/wgmma_swapab.cfg must have the rows wgmma_swapab_n8 .. _n256 for tf32 and bf16"
#endif

namespace {

using mgsab::Cfg;

/* One precision's twelve configurations, in mg_sab_kernel8's order (ascending NX, siblings after). */
template <class E> struct Set;
template <> struct Set<__nv_bfloat16> {
    using C0 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_n8_bf16>;
    using C1 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_n16_bf16>;
    using C2 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_n32_bf16>;
    using C3 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_n64_bf16>;
    using C4 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_w128_n64_bf16>;
    using C5 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_n96_bf16>;
    using C6 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_n128_bf16>;
    using C7 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_n152_bf16>;
    using C8 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_n192_bf16>;
    using C9 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_n256_bf16>;
    using C10 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_w256_n152_bf16>;
    using C11 = Cfg<__nv_bfloat16, MG_TILE_wgmma_swapab_w256_n192_bf16>;
};
template <> struct Set<float> {
    using C0 = Cfg<float, MG_TILE_wgmma_swapab_n8_tf32>;
    using C1 = Cfg<float, MG_TILE_wgmma_swapab_n16_tf32>;
    using C2 = Cfg<float, MG_TILE_wgmma_swapab_n32_tf32>;
    using C3 = Cfg<float, MG_TILE_wgmma_swapab_n64_tf32>;
    using C4 = Cfg<float, MG_TILE_wgmma_swapab_w128_n64_tf32>;
    using C5 = Cfg<float, MG_TILE_wgmma_swapab_n96_tf32>;
    using C6 = Cfg<float, MG_TILE_wgmma_swapab_n128_tf32>;
    using C7 = Cfg<float, MG_TILE_wgmma_swapab_n152_tf32>;
    using C8 = Cfg<float, MG_TILE_wgmma_swapab_n192_tf32>;
    using C9 = Cfg<float, MG_TILE_wgmma_swapab_n256_tf32>;
    using C10 = Cfg<float, MG_TILE_wgmma_swapab_w256_n152_tf32>;
    using C11 = Cfg<float, MG_TILE_wgmma_swapab_w256_n192_tf32>;
};

/* The plan's private part. */
inline mg_sab_plan &plan_of(mg_launch_plan *lp) {
    static_assert(sizeof(mg_sab_plan) <= sizeof lp->priv.bytes, "mg_sab_plan fits mg_launch_plan::priv");
    return *reinterpret_cast<mg_sab_plan *>(lp->priv.bytes);
}
inline const mg_sab_plan &plan_of(const mg_launch_plan *lp) {
    return *reinterpret_cast<const mg_sab_plan *>(lp->priv.bytes);
}

/* Weight-side state: W in panels (W PANELS below) and its descriptors with boxes of 64, 128 and 256 rows (the
 * configurations' W-tile heights) x one panel's 128 bytes. */
struct State {
    void *wpack;
    CUtensorMap w64, w128, w256;
};

void state_release(void *state) {
    State *s = static_cast<State *>(state);
    if (!s) return;
    if (s->wpack) cudaFree(s->wpack); /* release cannot report; a failed free leaks at worst */
    free(s);
}

/* W PANELS. prepare copies W (N x K, K-major, rows at any alignment, elements aligned to their size: prepare checks)
 * into cdiv(K, SUB_K) panels of 128-byte columns: panel q holds columns q SUB_K .. q SUB_K + SUB_K - 1 of every row,
 * row n at byte (q N + n) x 128, zeros past K (SUB_K = 64 bf16 / 32 fp32: one 128B-swizzle row). A TMA box of R rows
 * of one panel is then R x 128 contiguous bytes, the same bytes a box of the row-major W would bring (so the same
 * swizzled tile in shared memory), and the W tiles that the CTAs stream at one k-block lie in one 1 MiB panel (N = 8192
 * bf16) instead of 128 B x 64 rows spread over all of W. The copy also replaces the padded copy that misaligned or
 * odd-K rows needed. Costs N x cdiv(K, SUB_K) x 128 bytes of device memory per prepared plan and one pass over W at
 * mg_set_weights. */
constexpr long long kPackBlocksUnknownSms = 1024;   /* pack_panels' grid when the SM count is not known */

template <class U>   /* U: the element's bits (uint16_t bf16, uint32_t fp32) */
__global__ void __launch_bounds__(256) pack_panels(const U *__restrict__ w, U *__restrict__ out, int n, int k,
                                                   long long chunks) {
    constexpr int V = 16 / (int)sizeof(U), SUB = 128 / (int)sizeof(U);   /* elements per 16-byte chunk, per panel row */
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < chunks;
         i += (long long)gridDim.x * blockDim.x) {
        const int c = (int)(i % 8);
        const long long r = i / 8;   /* = q N + row */
        const int row = (int)(r % n), q = (int)(r / n);
        const int k0 = q * SUB + c * V;
        const U *src = w + (size_t)row * (size_t)k + k0;
        uint4 v;
        if (k0 + V <= k && (reinterpret_cast<uintptr_t>(src) & 15) == 0) {
            v = __ldg(reinterpret_cast<const uint4 *>(src));
        } else {
            U e[V];
#pragma unroll
            for (int j = 0; j < V; j++) e[j] = k0 + j < k ? src[j] : U(0);
            memcpy(&v, e, 16);
        }
        reinterpret_cast<uint4 *>(out)[i] = v;
    }
}

mg_status sab_supports(const mg_problem *p, int sm) {
    if (p->prec != MG_PREC_TF32 && p->prec != MG_PREC_BF16)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_swapab runs tf32 and bf16 only (fp32 mode: kernels 6 and 7)");
    if (sm != 0 && sm != 90)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "wgmma_swapab is compiled for sm_90a (wgmma, TMA, setmaxnreg); this GPU is sm_%d", sm);
    if (p->m > MG_SAB_MAX_M)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "wgmma_swapab is the small- and mid-M kernel: M = %d > %d (kernel 4 takes larger M)", p->m,
                            MG_SAB_MAX_M);
    if (p->m < 1 || p->n < 1 || p->k < 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_swapab: M = %d, N = %d, K = %d: needs M, N >= 1, K >= 0", p->m,
                            p->n, p->k);
    return MG_OK;
}

void sab_bounds(const mg_problem *p, const mg_device *dev, int *rows, size_t *ws) {
    const mg_sab_kernel kd = mg_sab_kernel8(p->prec);
    mg_sab_bounds(&kd, p->m, p->n, p->k, p->max_dim, dev->num_sms, rows, ws);
}

mg_status sab_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    mg_status st = sab_supports(p, 0);
    if (st != MG_OK) return st;
    const mg_sab_kernel kd = mg_sab_kernel8(p->prec);
    mg_sab_plan &pl = plan_of(lp);
    char why[160];
    const mg_sab_opts so = {opt ? opt->splits : 0, opt ? opt->x_tile : 0, opt ? opt->cluster : 0,
                            opt ? (int)opt->fuse : 0, opt ? (int)opt->mcast : 0, opt ? opt->w_rows : 0};
    if (mg_sab_make_plan(&kd, p->m, p->n, p->k, p->max_dim, (p->align & MG_ALIGN_X16) != 0, dev->num_sms, &so, &pl,
                         &lp->partial_rows, &lp->ws_bytes, why, sizeof why) != 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "%s", why);
    lp->fused_finalize = pl.fused != 0;
    mg_sab_plan_summary(&kd, &pl, lp->summary, sizeof lp->summary);
    return MG_OK;
}

/* W's descriptor over the panels: boxes of box_rows x one panel's 128 bytes, without L2 promotion: a panel's rows are
 * 128 bytes, and the 256-byte promotion cost the W stream ~2 us at bf16 M <= 64 on an H200 (run 155: probe_start's
 * tma3d256 35.6-36.0 us against tma3d_p0 33.4, the 1-D bulk read of the same bytes 33.5-34.9; 1.25x the L2 sectors). */
mg_status w_map(CUtensorMap *map, const void *base, const mg_problem *p, long long panels, int box_rows) {
    const bool bf16 = p->prec == MG_PREC_BF16;
    const size_t eb = bf16 ? 2 : 4;
    return mg_make_tma_3d(map, base, bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
                          (uint64_t)panels, (uint64_t)p->n, (uint64_t)(128 / eb), 128, (uint64_t)p->n * 128, 1,
                          (uint32_t)box_rows, (uint32_t)(128 / eb), CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

mg_status sab_prepare(const mg_problem *p, const mg_device *dev, const void *w, const void *b, mg_prepared *out,
                      void *stream) {
    (void)b;
    mg_status st = sab_supports(p, 0);
    if (st != MG_OK) return st;
    if (p->n == 0 || p->k == 0) return MG_OK; /* no k-blocks: the kernel never reads W */
    if (!w) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_swapab: NULL W");
    if ((uintptr_t)w % mg_elem_bytes(p->prec) != 0)   /* pack_panels reads W by elements (16 bytes where aligned) */
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_swapab: W (%p) is not aligned to its %zu-byte elements", w,
                            mg_elem_bytes(p->prec));
    /* CUtensorMap is alignas(64) or alignas(128) depending on the CUDA version; sizeof is a multiple of it */
    State *h = static_cast<State *>(aligned_alloc(alignof(State), sizeof(State)));
    if (!h) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "wgmma_swapab: host allocation failed");
    memset(h, 0, sizeof(State));
    const size_t eb = mg_elem_bytes(p->prec);
    const long long sub = (long long)(128 / eb), panels = (p->k + sub - 1) / sub, chunks = panels * p->n * 8;
    const size_t bytes = (size_t)chunks * 16;
    cudaError_t e = cudaMalloc(&h->wpack, bytes);
    if (e != cudaSuccess) {
        h->wpack = NULL;
        st = mg_set_error(e == cudaErrorMemoryAllocation ? MG_ERR_OUT_OF_MEMORY : MG_ERR_CUDA,
                          "cudaMalloc of %zu bytes for wgmma_swapab's W panels: %s", bytes, cudaGetErrorString(e));
    } else {
        /* a grid-stride copy: any grid is correct; 8 blocks per SM where the device says how many it has */
        const long long per_grid = dev && dev->num_sms > 0 ? 8LL * dev->num_sms : kPackBlocksUnknownSms;
        const long long blocks = std::min<long long>((chunks + 255) / 256, per_grid);
        if (eb == 2)
            pack_panels<uint16_t><<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>(
                static_cast<const uint16_t *>(w), static_cast<uint16_t *>(h->wpack), p->n, p->k, chunks);
        else
            pack_panels<uint32_t><<<(unsigned)blocks, 256, 0, (cudaStream_t)stream>>>(
                static_cast<const uint32_t *>(w), static_cast<uint32_t *>(h->wpack), p->n, p->k, chunks);
        e = cudaGetLastError();
        if (e != cudaSuccess) st = mg_set_error(MG_ERR_CUDA, "wgmma_swapab: packing W: %s", cudaGetErrorString(e));
    }
    if (st == MG_OK) st = w_map(&h->w64, h->wpack, p, panels, 64);
    if (st == MG_OK) st = w_map(&h->w128, h->wpack, p, panels, 128);
    if (st == MG_OK) st = w_map(&h->w256, h->wpack, p, panels, 256);
    if (st != MG_OK) {
        state_release(h);
        return st;
    }
    out->state = h;
    return MG_OK;
}

/* Launches configuration C as the plan says (it decides nothing). */
template <class C>
mg_status launch_cfg(const mg_launch_plan *lp, const mg_io *io, const State *h, void *stream) {
    const mg_problem &p = lp->p;
    const mg_sab_plan &pl = plan_of(lp);
    cudaStream_t s = (cudaStream_t)stream;
    char *ws = static_cast<char *>(io->ws);
    if (pl.nx != C::NX || pl.wrows != C::WROWS || pl.consumers != C::CONSUMERS || pl.cluster != C::CLUSTER ||
        pl.grid % C::CLUSTER != 0 || pl.units % C::CLUSTER != 0)
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_swapab: the plan's tile (n%d, %d W rows, cluster %d, %d CTAs, %d "
                            "units) is not configuration %d's", pl.nx, pl.wrows, pl.cluster, pl.grid, pl.units,
                            pl.cfg);
    const long long ctiles = mg_sab_ctiles(pl.tiles, pl.cluster, pl.wcast);
    if (pl.xtiles < 1 || (pl.xtiles > 1 && pl.splits > 1) || pl.units != ctiles * pl.xtiles * pl.splits ||
        (pl.wcast && !mg_sab_wcast(pl.cluster, pl.xtiles, MG_MCAST_AUTO)))
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_swapab: the plan's units (%d W tiles, cluster %d, x %d x tiles x "
                            "%d splits = %d) are not a launchable split (several x tiles never split K)", pl.tiles,
                            pl.cluster, pl.xtiles, pl.splits, pl.units);
    if (lp->ws_bytes > 0 && !ws) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_swapab: the plan needs a workspace");
    if (!io->partial || !io->b) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_swapab: NULL bias or partial buffer");
    if (pl.fused && (!io->out || !ws))
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_swapab: the plan finishes the forward in the kernel but the launch "
                            "has no %s", io->out ? "workspace" : "output buffer");
    mgsab::Params prm;
    memset(&prm, 0, sizeof prm);
    if (p.k > 0) {
        if (!h) return mg_set_error(MG_ERR_NO_WEIGHTS, "wgmma_swapab: W was not prepared for this problem");
        const void *xb = io->x;
        if (pl.pad_x) {
            /* a copy with 16-byte rows; the descriptor still says K columns, so the padding is never read */
            MG_CUDA_TRY(cudaMemcpy2DAsync(ws + pl.off_x, (size_t)pl.x_ld * C::ELEM, io->x, (size_t)p.k * C::ELEM,
                                          (size_t)p.k * C::ELEM, (size_t)p.m, cudaMemcpyDeviceToDevice, s));
            xb = ws + pl.off_x;
        } else if ((uintptr_t)io->x % 16 != 0) {
            return mg_set_error(MG_ERR_INVALID_ARG,
                                "wgmma_swapab: the plan reads x in place but x (%p) is not 16-byte aligned", io->x);
        }
        /* x multicast: two half boxes (rank 0 the first XH0 rows of the x tile, rank 1 the other XH1); W multicast:
         * whole x boxes, and W boxes of half the tile's rows (64: each rank loads one half into both CTAs) */
        const bool xcast = C::CLUSTER == 2 && !pl.wcast, wcast = C::CLUSTER == 2 && pl.wcast;
        mg_status st = mg_make_tma_2d(&prm.x, xb, C::DTYPE, (uint64_t)p.m, (uint64_t)p.k,
                                      (uint64_t)pl.x_ld * C::ELEM, (uint32_t)(xcast ? C::XH0 : C::NX),
                                      (uint32_t)C::SUB_K, CU_TENSOR_MAP_SWIZZLE_128B,
                                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
        if (st == MG_OK && xcast)
            st = mg_make_tma_2d(&prm.x1, xb, C::DTYPE, (uint64_t)p.m, (uint64_t)p.k, (uint64_t)pl.x_ld * C::ELEM,
                                (uint32_t)C::XH1, (uint32_t)C::SUB_K, CU_TENSOR_MAP_SWIZZLE_128B,
                                CU_TENSOR_MAP_L2_PROMOTION_L2_256B);
        if (st != MG_OK) return st;
        static_assert(C::CLUSTER == 1 || C::WROWS == 128,
                      "clusters of 2: 128-row W tiles (the W multicast loads two 64-row halves)");
        prm.w = C::WROWS == 64 || wcast ? h->w64 : C::WROWS == 128 ? h->w128 : h->w256;
    }
    prm.bias = io->b;
    prm.partial = io->partial;
    prm.m = p.m;
    prm.n = p.n;
    prm.k = p.k;
    prm.max_dim = p.max_dim;
    prm.nk = pl.nk;
    prm.xtiles = pl.xtiles;
    prm.splits = pl.splits;
    prm.units = pl.units;
    prm.slabs = pl.slabs;
    prm.wcast = pl.wcast;
    if (pl.fused == MG_SAB_FUSE_GRID &&
        (C::CLUSTER != 1 || (!pl.gown && pl.gchunk < 1) || pl.gslots < pl.grid || pl.grid > 32 * mgsab::kPollQ ||
         (pl.gown && (pl.units > pl.grid || pl.xtiles != 1 || pl.splits != 1))))
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_swapab: the plan's grid finish (own rows %d, %d columns per "
                            "CTA, %d slots) does not fit its grid (cluster %d, %d units on %d CTAs (the poller reads "
                            "at most %d), %d x tiles, %d splits)", pl.gown, pl.gchunk, pl.gslots, C::CLUSTER, pl.units,
                            pl.grid, 32 * mgsab::kPollQ, pl.xtiles, pl.splits);
    if (pl.fused) {
        prm.fused = pl.fused;
        prm.out = io->out;
        prm.done = reinterpret_cast<int *>(ws + pl.off_fin);
        prm.tick = reinterpret_cast<unsigned long long *>(ws + pl.off_fin + MG_SAB_TICK_OFF);
        prm.zgen = reinterpret_cast<unsigned *>(ws + pl.off_fin + MG_SAB_ZGEN_OFF);
        prm.fin = reinterpret_cast<unsigned *>(ws + pl.off_fin + MG_SAB_FIN_HEAD);
        prm.gbar = reinterpret_cast<unsigned *>(ws + pl.off_fin + MG_SAB_GBAR_OFF);
        prm.gslot = reinterpret_cast<unsigned long long *>(ws + pl.off_gsum);
        prm.gown = pl.gown;
        prm.gchunk = pl.gchunk;
        prm.gslots = pl.gslots;
    }
    if (pl.splits > 1) {
        prm.count = reinterpret_cast<int *>(ws + pl.off_count);
        prm.slots = reinterpret_cast<float *>(ws + pl.off_slots);
    }
    auto kern = mgsab::swapab_kernel<C>;
    /* idempotent; cheap enough per launch, and safe under concurrent plans (no static flag to race on) */
    MG_CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, C::SMEM_BYTES));
    if (C::CLUSTER == 1 && pl.fused == MG_SAB_FUSE_GRID) {
        /* THE GRID FINISH: every CTA waits for the others, so all must be resident: a cooperative launch (the
         * runtime refuses a grid that cannot be) */
        const cudaError_t e = mg_launch_cooperative(kern, (unsigned)pl.grid, C::THREADS, C::SMEM_BYTES, s, prm);
        if (e != cudaSuccess)
            return mg_set_error(MG_ERR_CUDA, "wgmma_swapab: the cooperative launch of %d CTAs (the grid finish; "
                                "fuse=off runs without it): %s", pl.grid, cudaGetErrorString(e));
    } else if constexpr (C::CLUSTER == 1) {
        kern<<<pl.grid, C::THREADS, C::SMEM_BYTES, s>>>(prm);
        MG_LAUNCH_CHECK();
    } else {
        cudaLaunchAttribute attr = {};
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = C::CLUSTER;
        attr.val.clusterDim.y = 1;
        attr.val.clusterDim.z = 1;
        const cudaLaunchConfig_t cfg = mg_launch_config_attr((unsigned)pl.grid, C::THREADS, C::SMEM_BYTES, s, &attr);
        MG_CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, prm));
    }
    return MG_OK;
}

/* Configuration C with the cluster size the plan asks for (a two-consumer row runs in clusters of 1 or 2 whatever
 * its cluster column says; the others in clusters of 1: the plan refuses 2 for them). */
template <class C> struct WithCluster;
template <class E, int NX, int WR, int BK, int ST, int CO, int CL> struct WithCluster<Cfg<E, NX, WR, BK, ST, CO, CL>> {
    using One = Cfg<E, NX, WR, BK, ST, CO, 1>;
    using Two = Cfg<E, NX, WR, BK, ST, CO, 2>;
};
template <class C>
mg_status launch_cfg_cl(const mg_launch_plan *lp, const mg_io *io, const State *h, void *stream) {
    if constexpr (C::CONSUMERS == 2 && C::KSUB == 1 && C::SPC == 1) {
        if (plan_of(lp).cluster == 2) return launch_cfg<typename WithCluster<C>::Two>(lp, io, h, stream);
    }
    return launch_cfg<typename WithCluster<C>::One>(lp, io, h, stream);
}

template <class E>
mg_status launch_set(const mg_launch_plan *lp, const mg_io *io, const State *h, void *stream) {
    using S = Set<E>;
    switch (plan_of(lp).cfg) {
    case 0: return launch_cfg_cl<typename S::C0>(lp, io, h, stream);
    case 1: return launch_cfg_cl<typename S::C1>(lp, io, h, stream);
    case 2: return launch_cfg_cl<typename S::C2>(lp, io, h, stream);
    case 3: return launch_cfg_cl<typename S::C3>(lp, io, h, stream);
    case 4: return launch_cfg_cl<typename S::C4>(lp, io, h, stream);
    case 5: return launch_cfg_cl<typename S::C5>(lp, io, h, stream);
    case 6: return launch_cfg_cl<typename S::C6>(lp, io, h, stream);
    case 7: return launch_cfg_cl<typename S::C7>(lp, io, h, stream);
    case 8: return launch_cfg_cl<typename S::C8>(lp, io, h, stream);
    case 9: return launch_cfg_cl<typename S::C9>(lp, io, h, stream);
    case 10: return launch_cfg_cl<typename S::C10>(lp, io, h, stream);
    case 11: return launch_cfg_cl<typename S::C11>(lp, io, h, stream);
    default: return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_swapab: the plan names configuration %d", plan_of(lp).cfg);
    }
}

mg_status sab_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    const State *h = static_cast<const State *>(state);
    if (lp->p.k > 0 && !h) return mg_set_error(MG_ERR_NO_WEIGHTS, "wgmma_swapab: W was not prepared for this problem");
    if (lp->p.prec == MG_PREC_BF16) return launch_set<__nv_bfloat16>(lp, io, h, stream);
    if (lp->p.prec == MG_PREC_TF32) return launch_set<float>(lp, io, h, stream);
    return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_swapab runs tf32 and bf16 only");
}

/* The policy's view (mg_sab_kernel8) and the instantiations must describe the same rows. */
static_assert(MG_SAB_NCFG == 12 && Set<__nv_bfloat16>::C0::NX == MG_TILE_wgmma_swapab_n8_bf16_BM &&
                  Set<__nv_bfloat16>::C4::WROWS == MG_TILE_wgmma_swapab_w128_n64_bf16_BN &&
                  Set<float>::C9::NX == MG_TILE_wgmma_swapab_n256_tf32_BM &&
                  Set<float>::C10::WROWS == MG_TILE_wgmma_swapab_w256_n152_tf32_BN,
              "Set<> follows tile_configs/wgmma_swapab.cfg");

}  // namespace

extern "C" const mg_kernel_ops mg_ops_wgmma_swapab = {
    sab_supports, sab_bounds, sab_plan, sab_prepare, state_release, sab_launch,
};
