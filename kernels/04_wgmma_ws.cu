/* 04_wgmma_ws.cu: kernel 4, warp-specialized persistent wgmma with the fused bias + max epilogue (tf32 and bf16).
 *
 * What it shows: a Hopper GEMM at the tensor-core roof whose epilogue never writes the M x N product. One producer
 * warpgroup (a single thread issuing TMA) feeds two consumer warpgroups (m64n256 wgmma each) through a 4-stage mbarrier
 * ring; a persistent grid walks the tiles so each W panel streams from DRAM about once; the epilogue of one tile hides
 * under the loads of the next. The device code is kernels/ws_kernel.cuh and its headers (one concern each); every
 * launch choice is made on the host by src/ws_policy.h (the policy, CPU-tested): four tile configurations
 * (tile_configs/wgmma_ws.cfg: main 128x256, mid 128x128, small 64x128, n192 128x192) picked by wave quantisation,
 * stream-K below half a wave, mixed 256/248 panels and the remainder split where they even out the last wave.
 * What changed from kernel 3: roles split by warpgroup with setmaxnreg, persistent CTAs, the fused epilogue
 * overlapping the next tile's loads. History and every measurement: notes/04_wgmma_ws.md.
 *
 * Run:  build/maxgemm run --kernel 4 --precision bf16 --check [--tiles main|mid|small|n192] [--verbose]
 *       make ncu KERNEL=4 PREC=bf16
 * Measured (H200, run 50, M=1024 N=K=8192, paired with kernel 0, max_dim 1 / 0): bf16 1.044x / 1.076x cuBLAS,
 *   tf32 1.066x / 1.044x.
 *
 * Operands: x (M x K) and W (N x K), both K-major, read by TMA straight from the caller's buffers when rows are
 * 16-byte multiples and the base 16-byte aligned; otherwise W is copied once in prepare (rows padded to 16 bytes)
 * and x per call into the workspace (the plan says so). tf32: wgmma .tf32 ignores the low 13 mantissa bits
 * (truncation): a relative bias of up to 2^-10 per product, inside the tf32 bar (2e-3 + 2e-3|ref|).
 */
#include <cuda_runtime.h>

#include <algorithm>

#include "ws_host.cuh"

#if !defined(MG_TILE_wgmma_ws_tf32) || !defined(MG_TILE_wgmma_ws_bf16) || !defined(MG_TILE_wgmma_ws_small_tf32) || \
    !defined(MG_TILE_wgmma_ws_small_bf16) || !defined(MG_TILE_wgmma_ws_mid_tf32) ||                              \
    !defined(MG_TILE_wgmma_ws_mid_bf16) || !defined(MG_TILE_wgmma_ws_n192_tf32) || !defined(MG_TILE_wgmma_ws_n192_bf16)
#error "tile_configs/wgmma_ws.cfg must have the rows wgmma_ws, wgmma_ws_small, wgmma_ws_mid, wgmma_ws_n192 for tf32 and bf16"
#endif

namespace {

/* One precision's four configurations, in mg_ws_tiles order (main, small, mid, n192); the policy sees the same rows
 * through mg_ws_kernel4 (src/ws_policy.h). */
template <class Main, class Small, class Mid, class N192> struct Set {
    using C0 = Main;
    using C1 = Small;
    using C2 = Mid;
    using C3 = N192;
};
using TF32 = Set<mgws::Cfg<mgws::Scheme::kTF32, MG_TILE_wgmma_ws_tf32>,
                 mgws::Cfg<mgws::Scheme::kTF32, MG_TILE_wgmma_ws_small_tf32>,
                 mgws::Cfg<mgws::Scheme::kTF32, MG_TILE_wgmma_ws_mid_tf32>,
                 mgws::Cfg<mgws::Scheme::kTF32, MG_TILE_wgmma_ws_n192_tf32>>;
using BF16 = Set<mgws::Cfg<mgws::Scheme::kBF16, MG_TILE_wgmma_ws_bf16>,
                 mgws::Cfg<mgws::Scheme::kBF16, MG_TILE_wgmma_ws_small_bf16>,
                 mgws::Cfg<mgws::Scheme::kBF16, MG_TILE_wgmma_ws_mid_bf16>,
                 mgws::Cfg<mgws::Scheme::kBF16, MG_TILE_wgmma_ws_n192_bf16>>;

/* W's descriptors in the state: one per configuration (their boxes differ in rows), then the main one's
 * remainder-split boxes (BN - 8 rows, 8 rows). */
enum { kMainNarrow = 4, kMainRem = 5 };

mg_status ws_supports(const mg_problem *p, int sm) {
    if (p->prec != MG_PREC_TF32 && p->prec != MG_PREC_BF16)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_ws runs tf32 and bf16 only (fp32 mode: kernel 6 wgmma_bf16x3)");
    if (sm != 0 && sm != 90)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "wgmma_ws is compiled for sm_90a (wgmma, setmaxnreg); this GPU is sm_%d", sm);
    return MG_OK;
}

void ws_bounds(const mg_problem *p, const mg_device *dev, int *rows, size_t *ws) {
    const mg_ws_kernel kd = mg_ws_kernel4(p->prec);
    mg_ws_bounds(&kd, p->m, p->n, p->k, p->max_dim, dev->num_sms, rows, ws);
}

mg_status ws_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    mg_status st = ws_supports(p, 0);
    if (st != MG_OK) return st;
    const mg_ws_kernel kd = mg_ws_kernel4(p->prec);
    mg_ws_plan &pl = mgws::plan_of(lp);
    char why[160];
    if (mg_ws_make_plan(&kd, p->m, p->n, p->k, p->max_dim, (p->align & MG_ALIGN_X16) != 0, dev->num_sms, opt, &pl,
                        &lp->partial_rows, &lp->ws_bytes, why, sizeof why) != 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "%s", why);
    if (pl.rem_chunks > 0) {
        lp->rem_offset = pl.off_rem;
        lp->rem_cols = pl.rem_w;
        lp->rem_chunks = pl.rem_chunks;
    }
    mg_ws_plan_summary(&kd, &pl, lp->summary, sizeof lp->summary);
    return MG_OK;
}

/* W's descriptor with boxes of C's rows, or the rows given. */
template <class C> mg_status w_map(CUtensorMap *map, const void *base, const mg_problem *p, int64_t ld, int rows = C::BN) {
    return mgws::make_map_b<C>(map, base, p->n, p->k, ld, rows);
}

template <class Set> mg_status prepare_maps(mgws::State *h, const void *base, const mg_problem *p, int64_t ld) {
    using Main = typename Set::C0;
    mg_status st = w_map<Main>(&h->b[MG_WS_TILES_MAIN], base, p, ld);
    if (st == MG_OK) st = w_map<typename Set::C1>(&h->b[MG_WS_TILES_SMALL], base, p, ld);
    if (st == MG_OK) st = w_map<typename Set::C2>(&h->b[MG_WS_TILES_MID], base, p, ld);
    if (st == MG_OK) st = w_map<typename Set::C3>(&h->b[MG_WS_TILES_N192], base, p, ld);
    if (st == MG_OK) st = w_map<Main>(&h->b[kMainNarrow], base, p, ld, Main::BN_NARROW);
    if (st == MG_OK) st = w_map<Main>(&h->b[kMainRem], base, p, ld, Main::BN - Main::BN_NARROW);
    return st;
}

/* Weight side: W's descriptors (and a padded copy of W when its rows are not 16-byte multiples or its base is not
 * 16-byte aligned). */
mg_status ws_prepare(const mg_problem *p, const mg_device *dev, const void *w, const void *b, mg_prepared *out,
                     void *stream) {
    (void)b;
    (void)dev;
    mg_status st = ws_supports(p, 0);
    if (st != MG_OK) return st;
    if (p->n == 0 || p->k == 0) return MG_OK; /* no k-iterations: the kernel never reads W */
    mgws::State *h = nullptr;
    if ((st = mgws::state_alloc(&h)) != MG_OK) return st;
    const size_t eb = mg_elem_bytes(p->prec);
    const void *base = w;
    int64_t ld = p->k;
    if (((size_t)p->k * eb) % 16 != 0 || !(p->align & MG_ALIGN_W16)) {
        ld = mg_ws_padded_ld(p->k, (int)(16 / eb));
        st = mgws::dev_alloc(&h->buf[0], (size_t)p->n * ld * eb, "wgmma_ws padded W");
        if (st == MG_OK) {
            cudaError_t e = cudaMemcpy2DAsync(h->buf[0], ld * eb, w, (size_t)p->k * eb, (size_t)p->k * eb, p->n,
                                              cudaMemcpyDeviceToDevice, (cudaStream_t)stream);
            if (e != cudaSuccess) st = mg_set_error(MG_ERR_CUDA, "wgmma_ws: padding W: %s", cudaGetErrorString(e));
        }
        base = h->buf[0];
    }
    if (st == MG_OK) st = p->prec == MG_PREC_BF16 ? prepare_maps<BF16>(h, base, p, ld) : prepare_maps<TF32>(h, base, p, ld);
    if (st != MG_OK) {
        mgws::state_release(h);
        return st;
    }
    out->state = h;
    return MG_OK;
}

template <class C> mg_status launch_cfg(const mg_launch_plan *lp, const mg_io *io, const mgws::State *h, int cfg,
                                        void *stream) {
    const CUtensorMap *wm = h ? &h->b[cfg] : nullptr;
    const CUtensorMap *bnar = h ? &h->b[kMainNarrow] : nullptr, *brem = h ? &h->b[kMainRem] : nullptr;
    return mgws::launch_plan<C>(lp, io, wm, bnar, brem, stream, "wgmma_ws");
}

template <class Set>
mg_status launch_set(const mg_launch_plan *lp, const mg_io *io, const mgws::State *h, void *stream) {
    const int cfg = mgws::plan_of(lp).cfg;
    switch (cfg) {
    case MG_WS_TILES_MAIN: return launch_cfg<typename Set::C0>(lp, io, h, cfg, stream);
    case MG_WS_TILES_SMALL: return launch_cfg<typename Set::C1>(lp, io, h, cfg, stream);
    case MG_WS_TILES_MID: return launch_cfg<typename Set::C2>(lp, io, h, cfg, stream);
    case MG_WS_TILES_N192: return launch_cfg<typename Set::C3>(lp, io, h, cfg, stream);
    default: return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_ws: the plan names configuration %d", cfg);
    }
}

mg_status ws_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    const mgws::State *h = static_cast<const mgws::State *>(state);
    if (lp->p.k > 0 && !h) return mg_set_error(MG_ERR_NO_WEIGHTS, "wgmma_ws: W was not prepared for this problem");
    return lp->p.prec == MG_PREC_BF16 ? launch_set<BF16>(lp, io, h, stream) : launch_set<TF32>(lp, io, h, stream);
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_wgmma_ws = {
    ws_supports, ws_bounds, ws_plan, ws_prepare, mgws::state_release, ws_launch,
};
