/* 10_wgmma_int8x3.cu: kernel 10, fp32-mode accuracy from int8 tensor cores, FUSED (issue 19, item 1): the Ozaki
 * scheme I slices of kernel 9 (src/ozaki.h, notes/19_int8_ozaki.md) multiplied by s8 wgmma on the warp-specialized
 * design of kernels 4 and 8, with the combine, the bias and the max in the epilogue. Kernel 9 (cuBLAS int8 GemmEx +
 * a combine pass) is its baseline, as kernel 5 is kernel 6's.
 *
 * What it shows: three int8 products per output tile, exact in int32, combined in fp32 in registers:
 *     cr = x_hi W_lo + x_lo W_hi,  hh = x_hi W_hi   (3 wgmma m64n128k32 .s32.s8.s8 per k32 step, two int32 sets)
 *     y  = fma(fma(float(hh), 256, float(cr)), fp32(u_x u_w) * 256, b)    (kernel 9's combine, bit for bit)
 * so no int32 product ever leaves the SM (kernel 9 writes and reads 64 MiB of int32 at the headline). The design,
 * role by role: kernels/int8_kernel.cuh; every launch choice: src/int8x3_policy.h (CPU-tested).
 * Shared with kernel 9, unchanged (src/ozaki.h, kernels/ozaki_slice.cu): W sliced ONCE in prepare (mg_oz_prepare_w:
 * s8 rows [lo | hi] of 2 ldk bytes, N padded to 4, u_w, W's guard maxima; W with NaN / inf -> kernel 1 runs), x sliced
 * per call by the same pre-pass (mg_oz_prepass: rows [hi | lo], u_x, the per-row guard's flags and the compacted list),
 * the same exact fallback for the flagged rows (mg_oz_fallback: kernel 1's arithmetic) into ONE extra partial row,
 * the plan's last, which the pre-pass fills with -inf. Flagged rows are -inf in this kernel's partial rows.
 * Limits: K > 66052 (the shared cross sum could overflow int32): every row is flagged and runs the fallback (no K
 * split in this version), as in kernel 9. K = 0: y = b (the kernel's epilogue on zero sums). fp32 mode only, sm_90a.
 *
 * Tile: 128 x 128 (2 consumer warpgroups of 64 rows), bk = 128 bytes, 3 stages of 64 KiB (x_hi, x_lo, W_hi, W_lo
 * tiles of 16 KiB): tile_configs/wgmma_int8x3.cfg. Why: two int32 accumulator sets of 64 x BN per consumer cost BN
 * registers per thread; BN = 128 leaves ~100 of the 232 for the rest, BN = 192 (the widest s8 wgmma below 256: the
 * integer forms stop at n224) would leave ~40 and only 2 stages of 80 KiB fit. Expected (not measured): 128 x 128
 * feeds 42.7 B/clk of L2 -> smem per SM at the int8 rate (4 slices x 128 B per 3 x 128 x 128 MACs / 4096 MAC/clk),
 * above kernel 6's 32 B/clk; 3 stages hold ~3000 clocks of loads in flight (one stage = 24 wgmma m64n128k32 of the
 * two consumers ~ 1536 clocks), at the edge of hiding L2 latency. Alternatives to measure: 128 x 192 with bk = 64
 * (64B swizzle, 5 stages of 40 KiB: 35.6 B/clk), 256 x 128 with 4 consumers' rows split over 2 warpgroups.
 *
 * Run:  build/maxgemm run --kernel 10 --precision fp32 --check --no-shortcut   (also --max-dim 0)
 * Measured (H200, run 56, same process, bench/results + notes/runs/r56_summary.txt): headline fp32 mode 0.2988 ms
 * (md1) / 0.3020 ms (md0) = 9.14x / 9.05x SGEMM, 1.69x / 1.73x kernel 6, 1.22x / 1.21x kernel 9; max abs error equal
 * to kernel 9's (2.4e-5 .. 3.2e-5 over 5 seeds, md0). So the first version beat the prediction below (0.35 ms).
 * Its slice maps without L2 promotion (slice_map, run 161 on an H100, A PK PK A over bench/matrix_int8_promo.txt):
 * 0.5-1.1% faster at the headline (0.3009-0.3023 against 0.3029-0.3043 ms), 2.5-3.2% at M = 2048-16384, 3% at 32.
 * Its max_dim 0 column maxima by the transpose-reduce kernels 4 and 8 share (run 179 on an H100, A TR TR A A TR over
 * bench/matrix_int8_md0.txt): 0.5-1% faster on every max_dim 0 row in every pass (headline 0.3032-0.3044 against
 * 0.3053-0.3070 ms, M = 16384 4.530-4.554 against 4.564-4.584 ms), max_dim 1 level.
 * Prediction at the headline (M = 1024, N = K = 8192, fp32 mode): one int8 product is 2MNK = 137.4 G ops; the floors:
 * 0.0694 ms per product at the 1979 TOPS datasheet (0.208 ms for 3), 0.128 ms per product at cuBLAS int8's measured
 * 1072 TOPS (0.384 ms for 3); kernel 9 measured 0.362 ms in all (its 2 GEMMs run the 3 products faster than 3 x 0.128).
 * This first version (3 stages, 42.7 B/clk, no tile-row shift, plain xor-shuffle epilogue): the mainloop at ~60-65%
 * of the datasheet, ~0.11 ms per product = 0.32-0.34 ms, plus the pre-pass (~0.015 ms), the epilogue (~0.01 ms) and
 * finalize: ~0.35 ms (range 0.28-0.45), i.e. about kernel 9's time; the 1.15x-over-kernel-9 target needs the stage
 * depth / tile alternatives above.
 */
#include <cuda_runtime.h>

#include <stdlib.h>
#include <string.h>

#include "int8_kernel.cuh"

#if !defined(MG_TILE_wgmma_int8x3_fp32)
#error "tile_configs/wgmma_int8x3.cfg must have a 'wgmma_int8x3 fp32' row"
#endif

namespace {

using Cfg10 = mgi8::Cfg<MG_TILE_wgmma_int8x3_fp32>;
static_assert(sizeof(mg_i8_plan) <= sizeof(((mg_launch_plan *)nullptr)->priv.bytes), "mg_i8_plan fits priv");

inline const mg_i8_plan &plan_of(const mg_launch_plan *lp) {
    return *reinterpret_cast<const mg_i8_plan *>(lp->priv.bytes);
}

/* What prepare made (mg_prepared::state): the layer's weight side and the two W descriptors (one per half). */
struct State {
    CUtensorMap whi, wlo;   /* first: CUtensorMap is over-aligned */
    mg_oz_wstate w;
};

void i8_release(void *state) {
    State *s = static_cast<State *>(state);
    if (!s) return;
    mg_oz_wstate_free(&s->w);
    free(s);
}

mg_status i8_supports(const mg_problem *p, int sm) {
    if (p->prec != MG_PREC_FP32)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_int8x3 implements fp32 mode only (it IS the fp32-accurate int8 "
                                                "split scheme); use a tensor-core kernel for %s",
                            mg_precision_name(p->prec));
    if (sm != 0 && sm != 90)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "wgmma_int8x3 is compiled for sm_90a (s8 wgmma, TMA, setmaxnreg); this GPU is sm_%d", sm);
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_int8x3: negative size (M=%d N=%d K=%d)", p->m, p->n, p->k);
    if (p->n > INT32_MAX - MG_OZ_NPAD || 2 * mg_oz_ld(p->k) > INT32_MAX)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_int8x3: N=%d or K=%d too large", p->n, p->k);
    return MG_OK;
}

/* Its own partial rows and workspace at p->m, or naive's (the runner when W holds NaN / inf). */
void i8_bounds(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes) {
    int naive_rows = 0, rows = 0;
    size_t naive_ws = 0, ws = 0;
    mg_ops_naive.bounds(p, dev, &naive_rows, &naive_ws);
    const mg_i8_shape c = mg_i8_kernel10();
    mg_i8_bounds(&c, p->m, p->n, p->k, p->max_dim, &rows, &ws);
    if (partial_rows) *partial_rows = naive_rows > rows ? naive_rows : rows;
    if (ws_bytes) *ws_bytes = naive_ws > ws ? naive_ws : ws;
}

mg_status i8_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    (void)opt;
    if (!p || !lp)
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_int8x3: plan called with a NULL %s", p ? "launch plan" : "problem");
    mg_status st = i8_supports(p, 0);
    if (st != MG_OK) return st;
    const mg_i8_shape c = mg_i8_kernel10();
    mg_i8_plan *pl = reinterpret_cast<mg_i8_plan *>(lp->priv.bytes);
    char why[160];
    if (mg_i8_make_plan(&c, p->m, p->n, p->k, p->max_dim, (p->align & MG_ALIGN_X16) != 0, dev ? dev->num_sms : 0, pl,
                        &lp->partial_rows, &lp->ws_bytes, why, sizeof why) != 0)
        return mg_set_error(pl->step < 0 ? MG_ERR_SHAPE : MG_ERR_UNSUPPORTED, "%s", why);
    mg_i8_plan_summary(&c, pl, lp->summary, sizeof lp->summary);
    return MG_OK;
}

/* A descriptor of one slice half: rows x k int8 at base, row stride 2 ldk bytes, boxes of box_rows x 128 bytes, no
 * L2 promotion (run 158: 3.5% faster at M = 2048 on an H100 than the 256-byte one, which pulls the next 128 bytes of
 * a row into L2 with every box). */
mg_status slice_map(CUtensorMap *map, const int8_t *base, int64_t rows, int64_t k, int64_t ldk, int box_rows) {
    return mg_make_tma_2d(map, base, CU_TENSOR_MAP_DATA_TYPE_UINT8, (uint64_t)rows, (uint64_t)k, (uint64_t)(2 * ldk),
                          (uint32_t)box_rows, 128u, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE);
}

mg_status i8_prepare(const mg_problem *p, const mg_device *dev, const void *w, const void *b, mg_prepared *out,
                     void *stream) {
    (void)b;
    (void)dev;
    if (!p || !out)
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_int8x3: prepare called with a NULL %s", p ? "output" : "problem");
    out->state = NULL;
    out->runner = NULL;
    mg_status st = i8_supports(p, 0);
    if (st != MG_OK) return st;
    if (p->n == 0) return MG_OK;   /* no column: launch never reads W */
    if (!w && p->k > 0) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_int8x3: W is NULL (N=%d K=%d)", p->n, p->k);
    /* CUtensorMap is alignas(64) or alignas(128) depending on the CUDA version; sizeof is a multiple of it */
    State *s = static_cast<State *>(aligned_alloc(alignof(State), sizeof(State)));
    if (!s) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "wgmma_int8x3: host allocation of the weight state failed");
    memset(s, 0, sizeof(State));
    int64_t bad = 0;
    st = mg_oz_prepare_w((const float *)w, p->n, p->k, (p->align & MG_ALIGN_W16) && p->k % 4 == 0, "wgmma_int8x3",
                         &s->w, &bad, stream);
    if (st == MG_OK && bad == 0 && s->w.w_sl) {   /* W rows are [lo | hi] */
        const int64_t ldk = mg_oz_ld(p->k);
        st = slice_map(&s->whi, s->w.w_sl + ldk, p->n, p->k, ldk, Cfg10::BN);
        if (st == MG_OK) st = slice_map(&s->wlo, s->w.w_sl, p->n, p->k, ldk, Cfg10::BN);
    }
    if (st != MG_OK || bad > 0) {
        i8_release(s);
        if (st == MG_OK) out->runner = &mg_ops_naive;   /* NaN / inf in W: the exact SIMT kernel runs on W itself */
        return st;
    }
    out->state = s;
    return MG_OK;
}

mg_status i8_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    if (!lp || !io)
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_int8x3: launch called with a NULL %s", lp ? "io" : "launch plan");
    const mg_i8_plan &pl = plan_of(lp);
    if (pl.step == MG_OZ_STEP_NONE) return MG_OK;   /* empty output: nothing to reduce */
    if (pl.step < MG_OZ_STEP_ZERO || pl.step > MG_OZ_STEP_INT8 || pl.bm != Cfg10::BM || pl.bn != Cfg10::BN)
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_int8x3: the launch plan (step %d, tile %dx%d) is not this "
                            "build's (%dx%d)", pl.step, pl.bm, pl.bn, Cfg10::BM, Cfg10::BN);
    const mg_problem *p = &lp->p;
    const int m = p->m, n = p->n, k = p->k;
    if (!io->b || !io->partial || (k > 0 && (!io->x || !io->w)))
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_int8x3: NULL pointer:%s%s%s%s", io->x || k == 0 ? "" : " x",
                            io->w || k == 0 ? "" : " W", io->b ? "" : " b", io->partial ? "" : " partial");
    if (!io->ws)
        return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_int8x3: no workspace (the plan uses %zu bytes)", lp->ws_bytes);
    const State *s = static_cast<const State *>(state);
    if (!s || !s->w.u_w || s->w.n != n || s->w.k != k || (pl.step == MG_OZ_STEP_INT8 && !s->w.w_sl))
        return mg_set_error(MG_ERR_NO_WEIGHTS, "wgmma_int8x3: W was not prepared for this problem (N=%d K=%d)", n, k);
    cudaStream_t st = (cudaStream_t)stream;
    char *ws = static_cast<char *>(io->ws);
    const int len = mg_partial_len(p);
    float *fb_row = io->partial + (size_t)pl.main_rows * len;

    /* 1. the x pre-pass (shared with kernel 9): slices, u_x, the guard's flags and list, the fallback row's -inf */
    mg_status ret = mg_oz_prepass(&pl.xl, pl.step, MG_OZ_GUARD_X3, (const float *)io->x, m, k, pl.vec, s->w.ws, ws,
                                  fb_row, len, stream);
    if (ret != MG_OK) return ret;

    /* 2. the fused kernel (nk = 0 for K = 0 and K > 66052: its epilogue alone) */
    mgi8::Params prm;
    memset(&prm, 0, sizeof prm);
    if (pl.nk > 0) {
        const int8_t *xs = reinterpret_cast<const int8_t *>(ws + pl.xl.xs_off);   /* x rows are [hi | lo] */
        if ((ret = slice_map(&prm.xhi, xs, m, k, pl.xl.ldk, Cfg10::BM)) != MG_OK) return ret;
        if ((ret = slice_map(&prm.xlo, xs + pl.xl.ldk, m, k, pl.xl.ldk, Cfg10::BM)) != MG_OK) return ret;
        prm.whi = s->whi;
        prm.wlo = s->wlo;
    }
    prm.bias = static_cast<const float *>(io->b);
    prm.ux = reinterpret_cast<const float *>(ws + pl.xl.ux_off);
    prm.uw = s->w.u_w;
    prm.flag = reinterpret_cast<const int *>(ws + pl.xl.flag_off);
    prm.partial = io->partial;
    prm.m = m;
    prm.n = n;
    prm.max_dim = p->max_dim;
    prm.nk = pl.nk;
    prm.tiles_m = pl.tiles_m;
    prm.tiles_n = pl.tiles_n;
    auto kern = mgi8::int8x3_kernel<Cfg10>;
    /* idempotent; cheap enough per launch, and safe under concurrent plans (no static flag to race on) */
    MG_CUDA_TRY(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg10::SMEM_BYTES));
    kern<<<pl.grid, Cfg10::THREADS, Cfg10::SMEM_BYTES, st>>>(prm);
    MG_LAUNCH_CHECK();

    /* 3. the exact fallback for the flagged rows (shared with kernel 9) */
    return mg_oz_fallback((const float *)io->x, (const float *)io->w, (const float *)io->b, m, n, k, p->max_dim,
                          reinterpret_cast<const int *>(ws + pl.xl.list_off),
                          reinterpret_cast<const int *>(ws + pl.xl.count_off), fb_row, pl.fb_grid, 0, stream);
}

/* The policy's view and the instantiation must describe the same row. */
static_assert(Cfg10::BM == MG_TILE_wgmma_int8x3_fp32_BM && Cfg10::BN == MG_TILE_wgmma_int8x3_fp32_BN,
              "Cfg10 follows tile_configs/wgmma_int8x3.cfg");

}  // namespace

extern "C" const mg_kernel_ops mg_ops_wgmma_int8x3 = {
    i8_supports, i8_bounds, i8_plan, i8_prepare, i8_release, i8_launch,
};
