/* 04_wgmma_ws.cu: kernel 4, warp-specialized wgmma (tf32 and bf16 modes).
 *
 * Technique (the kernel template is kernels/wgmma_ws.cuh, shared with kernel 6):
 *   - one producer warpgroup whose single elected thread issues all TMA loads (setmaxnreg.dec 40), and two
 *     consumer warpgroups (setmaxnreg.inc 232), each a 64 x 256 slice of the 128 x 256 CTA tile, m64n256 wgmma;
 *   - a full/empty mbarrier ring of 4 stages (48 KiB each: 128B-swizzled rows of BK = 128 bytes of K);
 *   - a PERSISTENT grid of num_sms CTAs walking the tiles in a grouped order (all M-tiles of a W panel together,
 *     so the large W streams from DRAM about once while x stays in L2);
 *   - the fused epilogue (bias + NaN-propagating max in registers + shuffles + a little smem), which overlaps the
 *     producer's loads for the next tile.
 * What changed from kernel 3 (wgmma_tma, every warpgroup both loads and computes, one tile per CTA): roles are
 * split so the tensor core is fed by a thread that does nothing else, register budgets follow the roles, and
 * CTAs persist so the epilogue of one tile hides under the loads of the next.
 *   - optional clusters of 2 CTAs along M (tile config `cluster 2`): each CTA loads half of the shared W tile and
 *     multicasts it to both (TMA .multicast::cluster), a third less L2 -> SM traffic.
 *   - stream-K when the tiles would leave more than half the SMs idle (small M): the k-iterations of all tiles are
 *     split into num_sms equal ranges, partial accumulators fixed up in a fixed order through the workspace.
 *   - a second tile configuration for small M (`wgmma_ws_small`: 64 x 128, one consumer, 8 stages), picked where
 *     the main and the mid-M tiles would both leave more than half the SMs idle (pick_tiles); stream-K then applies
 *     to it as to any configuration.
 *   - a third, mid-M configuration (`wgmma_ws_mid`: 128 x 128, two consumers, 6 stages) between the two: where the
 *     main tiles would leave more than half the SMs idle but these fill more than half with whole tiles (pick_tiles;
 *     129 <= M <= 256 at N = 8192). Run 34: bf16 M = 256 0.0646 -> 0.0542 ms (0.78 -> 0.93x cuBLAS), tf32 0.1217 ->
 *     0.1035 (0.82 -> 0.97x).
 *   - a fourth configuration, `wgmma_ws_n192` (128 x 192, two consumers, 5 stages), picked instead of the main one
 *     where the main tiles leave a mostly empty last wave that 192-wide tiles fill (src/ws_policy.h
 *     mg_ws_pick_n192: M = 257..384, 513..768, 1025..1152 at N = 8192 on 132 SMs).
 *   - mixed-width column panels (256 and 248 columns, wgmma m64n248) where they even out the persistent waves:
 *     264 tiles at the headline, exactly 2 per SM (wgmma_ws.cuh "MIXED PANELS").
 *   - for max_dim 1 where that takes one wide panel (the headline), all panels 248 wide and the 8 columns left over
 *     summed in 16 k-chunks by the first 16 panels' tiles (n256 for those k-blocks), added up by the finalize
 *     (wgmma_ws.cuh "REMAINDER SPLIT"). Run 40: bf16 0.1742 -> 0.1733 ms, tf32 0.3312 -> 0.3280.
 * Tile shapes: tile_configs/wgmma_ws.cfg. Measured (H200, cluster 1, session 1): bf16 0.1766 ms (1.01x cuBLAS),
 * tf32 0.3312 (1.03x). Session 4 (epilogue v2, mixed panels, PDL finalize; run 28 benchmark, paired): bf16
 * 1.046x / 1.093x (max_dim 1 / 0), tf32 1.058x / 1.055x; ncu bf16 171.2 us, tensor pipe 95.3% active (cuBLAS
 * 96.4%), tf32 322.9 us, 97.6% (cuBLAS 96.1%); cluster variants: notes/04_wgmma_ws.md. Stream-K (runs 14-15): M = 1 / 64 / 256, N = K = 8192, bf16
 * 0.0858 / 0.0862 / 0.0880 ms -> 0.0550 / 0.0557 / 0.0675, tf32 M = 64 0.161 -> 0.092 ms; the headline unchanged.
 * Small-M configuration (run 17, same-process pairs): bf16 M = 1 / 64 / 128 0.0551 / 0.0559 / 0.0565 ms -> 0.0473 /
 * 0.0465 / 0.0450 (0.76 / 0.77 / 0.79x cuBLAS -> 0.88 / 0.94 / 0.99x), tf32 M = 256 0.149 -> 0.127 ms.
 *
 * Operands: x (M x K) and W (N x K), both K-major, read by TMA straight from the caller's buffers when rows are
 * 16-byte multiples (K * elem % 16 == 0) and the base is 16-byte aligned. Otherwise W is copied once in prepare
 * (prep->buf[0], rows padded to 16 bytes) and x per call into the workspace; the descriptors still say K
 * columns, so the padding is never read (TMA zero-fills past K).
 * tf32 note: wgmma .tf32 reads the fp32 bit pattern and ignores the low 13 mantissa bits (truncation, not
 * rounding): a relative bias of up to 2^-10 per product, about 1e-3 of |y|, inside the tf32 bar (2e-3 + 2e-3|ref|).
 */
#include <cuda_runtime.h>

#include <algorithm>

#include "wgmma_ws.cuh"

#if !defined(MG_TILE_wgmma_ws_tf32) || !defined(MG_TILE_wgmma_ws_bf16)
#error "tile_configs/wgmma_ws.cfg must have a 'wgmma_ws tf32' and a 'wgmma_ws bf16' row"
#endif
#if !defined(MG_TILE_wgmma_ws_small_tf32) || !defined(MG_TILE_wgmma_ws_small_bf16)
#error "tile_configs/wgmma_ws.cfg must have a 'wgmma_ws_small tf32' and a 'wgmma_ws_small bf16' row"
#endif
#if !defined(MG_TILE_wgmma_ws_mid_tf32) || !defined(MG_TILE_wgmma_ws_mid_bf16)
#error "tile_configs/wgmma_ws.cfg must have a 'wgmma_ws_mid tf32' and a 'wgmma_ws_mid bf16' row"
#endif
#if !defined(MG_TILE_wgmma_ws_n192_tf32) || !defined(MG_TILE_wgmma_ws_n192_bf16)
#error "tile_configs/wgmma_ws.cfg must have a 'wgmma_ws_n192 tf32' and a 'wgmma_ws_n192 bf16' row"
#endif

namespace {

using CfgTF32 = mgws::Cfg<mgws::Scheme::kTF32, MG_TILE_wgmma_ws_tf32>;
using CfgBF16 = mgws::Cfg<mgws::Scheme::kBF16, MG_TILE_wgmma_ws_bf16>;
using CfgTF32S = mgws::Cfg<mgws::Scheme::kTF32, MG_TILE_wgmma_ws_small_tf32>;   /* small M */
using CfgBF16S = mgws::Cfg<mgws::Scheme::kBF16, MG_TILE_wgmma_ws_small_bf16>;
using CfgTF32M = mgws::Cfg<mgws::Scheme::kTF32, MG_TILE_wgmma_ws_mid_tf32>;     /* mid M */
using CfgBF16M = mgws::Cfg<mgws::Scheme::kBF16, MG_TILE_wgmma_ws_mid_bf16>;
using CfgTF32N = mgws::Cfg<mgws::Scheme::kTF32, MG_TILE_wgmma_ws_n192_tf32>;    /* 192 wide: fills partial waves */
using CfgBF16N = mgws::Cfg<mgws::Scheme::kBF16, MG_TILE_wgmma_ws_n192_bf16>;
static_assert(CfgTF32S::CLUSTER == 1 && CfgBF16S::CLUSTER == 1, "the small-M rows run stream-K: cluster 1");

/* Which tile configuration a launch runs (also the index of its W descriptor in PreparedHost::b). kMainNarrow,
 * kMainRem: the main configuration's W boxes of BN - 8 and 8 rows (wgmma_ws.cuh "REMAINDER SPLIT"). */
enum WsTiles { kMain = MG_WS_TILES_MAIN, kSmall = MG_WS_TILES_SMALL, kMid = MG_WS_TILES_MID, kN192 = MG_WS_TILES_N192 };
enum { kMainNarrow = 4, kMainRem = 5 };

/* The main configuration, unless it would leave more than half the SMs without a tile (it would then split every
 * tile by stream-K): then the mid-M one (128 x 128) if ITS whole tiles fill more than half the SMs, else the small-M
 * one (64 x 128, stream-K where it too leaves half the SMs idle): src/ws_policy.h, with the measurements.
 * At N = 8192 on 132 SMs: M <= 128 small, 129..256 mid, above main.
 * MG_WS_TILES=main|mid|small forces one; MG_WS_SMALL=1 / 0 (older switch) forces small / main. Read per launch: the
 * tests switch them (gpu_kernels/ws_tile_configs). sms: the launch's SM count (0: ask the device). */
template <class Big, class Mid, class N192> WsTiles pick_tiles(const mg_problem *p, int sms) {
    const char *t = getenv("MG_WS_TILES");
    if (t && strcmp(t, "main") == 0) return kMain;
    if (t && strcmp(t, "mid") == 0) return kMid;
    if (t && strcmp(t, "small") == 0) return kSmall;
    if (t && strcmp(t, "n192") == 0) return kN192;
    const char *env = getenv("MG_WS_SMALL");
    if (env && strcmp(env, "0") == 0) return kMain;
    if (env && strcmp(env, "1") == 0) return kSmall;
    if (sms <= 0) sms = mgws::device_sms();
    const WsTiles w = (WsTiles)mg_ws_pick_tiles(p->m, p->n, sms, Big::BM, Big::BN, Mid::BM, Mid::BN); /* ws_policy.h */
    if (w == kMain && mg_ws_pick_n192(p->m, p->n, sms, Big::BM, Big::BN, Big::BN_NARROW, N192::BM, N192::BN))
        return kN192;
    return w;
}

/* Does x / W need a padded copy? (TMA: 16-byte aligned base, row stride a multiple of 16 bytes.) */
bool needs_pad(const mg_problem *p) { return ((size_t)p->k * mg_elem_bytes(p->prec)) % 16 != 0; }

int64_t ws_ld(const mg_problem *p) {
    return p->prec == MG_PREC_BF16 ? mgws::padded_k<CfgBF16>(p->k) : mgws::padded_k<CfgTF32>(p->k);
}

/* Plan-time sizes cover all four configurations of p's precision: a plan sized for M must hold a sub-batch
 * (mg_forward_rows, m < M) that takes another one. */
template <class Big, class Small, class Mid, class N192> int max_partial_rows(const mg_problem *p) {
    return std::max({mgws::partial_rows<Big>(p), mgws::partial_rows<Small>(p), mgws::partial_rows<Mid>(p),
                     mgws::partial_rows<N192>(p)});
}
template <class Big, class Small, class Mid, class N192> size_t max_sk_bytes(const mg_problem *p) {
    return std::max({mgws::sk_workspace_bytes<Big>(p), mgws::sk_workspace_bytes<Small>(p),
                     mgws::sk_workspace_bytes<Mid>(p), mgws::sk_workspace_bytes<N192>(p)});
}

/* The most partial rows any configuration writes; the launch reports the rows it wrote (a->ntiles). */
int ws_partial_tiles(const mg_problem *p) {
    return p->prec == MG_PREC_BF16 ? max_partial_rows<CfgBF16, CfgBF16S, CfgBF16M, CfgBF16N>(p)
                                   : max_partial_rows<CfgTF32, CfgTF32S, CfgTF32M, CfgTF32N>(p);
}

/* Workspace: [padded x, when TMA cannot read x in place] [the remainder split's column sums, max_dim 1] ... [the
 * stream-K slots and flags, when they can be used: always the last bytes, mgws::run]. */
size_t pad_bytes(const mg_problem *p) {
    if (p->k == 0 || !needs_pad(p)) return 0;
    return mgws::align256((size_t)p->m * (size_t)ws_ld(p) * mg_elem_bytes(p->prec));
}

/* Any configuration's stream-K region (slots + the shared flags at the very end; wgmma_ws.cuh). */
size_t sk_bytes(const mg_problem *p) {
    return p->prec == MG_PREC_BF16 ? max_sk_bytes<CfgBF16, CfgBF16S, CfgBF16M, CfgBF16N>(p)
                                   : max_sk_bytes<CfgTF32, CfgTF32S, CfgTF32M, CfgTF32N>(p);
}

/* The remainder split runs on the main configuration only. */
size_t rem_bytes(const mg_problem *p) {
    return p->prec == MG_PREC_BF16 ? mgws::rem_ws_bytes<CfgBF16>(p) : mgws::rem_ws_bytes<CfgTF32>(p);
}

size_t ws_workspace_bytes(const mg_problem *p) { return pad_bytes(p) + rem_bytes(p) + sk_bytes(p); }

mg_status ws_supports(const mg_problem *p, int sm) {
    if (p->prec != MG_PREC_TF32 && p->prec != MG_PREC_BF16)
        return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_ws runs tf32 and bf16 only (fp32 mode: kernel 6 wgmma_bf16x3)");
    if (sm != 0 && sm != 90)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "wgmma_ws is compiled for sm_90a (wgmma, setmaxnreg); this GPU is sm_%d", sm);
    return MG_OK;
}

/* W's descriptor with boxes of BF::B_BOX_ROWS (bf16) or TF::B_BOX_ROWS (tf32) rows, or the rows given. */
template <class BF, class TF>
mg_status make_w_map(bool bf, CUtensorMap *map, const void *base, const mg_problem *p, int64_t ld,
                     int rows_bf = BF::B_BOX_ROWS, int rows_tf = TF::B_BOX_ROWS) {
    return bf ? mgws::make_map<BF>(map, base, p->n, p->k, ld, rows_bf)
              : mgws::make_map<TF>(map, base, p->n, p->k, ld, rows_tf);
}

/* Weight side: the W descriptor (and a padded copy of W when its rows are not 16-byte multiples). */
mg_status ws_prepare(const mg_problem *p, const void *w, const void *b, mg_prepared *out, void *stream) {
    (void)b;
    mg_status st = ws_supports(p, 0);
    if (st != MG_OK) return st;
    out->ld = p->k;
    if (p->n == 0 || p->k == 0) return MG_OK; /* no k-iterations: the kernel never reads W */
    const size_t eb = mg_elem_bytes(p->prec);
    const void *base = w;
    int64_t ld = p->k;
    if (needs_pad(p) || (uintptr_t)w % 16 != 0) {
        ld = ws_ld(p);
        st = mgws::dev_alloc(out, 0, (size_t)p->n * ld * eb, "wgmma_ws padded W");
        if (st != MG_OK) return st;
        cudaError_t e = cudaMemcpy2DAsync(out->buf[0], ld * eb, w, (size_t)p->k * eb, (size_t)p->k * eb, p->n,
                                          cudaMemcpyDeviceToDevice, (cudaStream_t)stream);
        if (e != cudaSuccess) {
            mgws::release_prepared(out);
            return mg_set_error(MG_ERR_CUDA, "wgmma_ws: padding W: %s", cudaGetErrorString(e));
        }
        base = out->buf[0];
    }
    out->ld = (int)ld;
    st = mgws::alloc_host(out);
    if (st == MG_OK) {
        /* b[kMain], b[kSmall], b[kMid], b[kN192]: W as each configuration's boxes (their BN differ) */
        mgws::PreparedHost *h = static_cast<mgws::PreparedHost *>(out->host);
        const bool bf = p->prec == MG_PREC_BF16;
        st = make_w_map<CfgBF16, CfgTF32>(bf, &h->b[kMain], base, p, ld);
        if (st == MG_OK) st = make_w_map<CfgBF16S, CfgTF32S>(bf, &h->b[kSmall], base, p, ld);
        if (st == MG_OK) st = make_w_map<CfgBF16M, CfgTF32M>(bf, &h->b[kMid], base, p, ld);
        if (st == MG_OK) st = make_w_map<CfgBF16N, CfgTF32N>(bf, &h->b[kN192], base, p, ld);
        /* the remainder split's boxes: a narrow panel's BN - 8 rows, and the 8 remainder rows */
        if (st == MG_OK)
            st = make_w_map<CfgBF16, CfgTF32>(bf, &h->b[kMainNarrow], base, p, ld, CfgBF16::BN_NARROW,
                                              CfgTF32::BN_NARROW);
        if (st == MG_OK)
            st = make_w_map<CfgBF16, CfgTF32>(bf, &h->b[kMainRem], base, p, ld, CfgBF16::BN - CfgBF16::BN_NARROW,
                                              CfgTF32::BN - CfgTF32::BN_NARROW);
    }
    if (st != MG_OK) mgws::release_prepared(out);
    return st;
}

template <class C> mg_status launch_cfg(mg_launch_args *a, int wmap) {
    const mg_problem *p = &a->p;
    mgws::Params prm;
    memset(&prm, 0, sizeof prm);
    if (p->k > 0) {
        if (!a->prep || !a->prep->host)
            return mg_set_error(MG_ERR_NO_WEIGHTS, "wgmma_ws: W was not prepared for this problem");
        const size_t eb = C::T::kElem;
        const void *xb = a->x;
        int64_t ld = p->k;
        if (needs_pad(p)) {
            ld = mgws::padded_k<C>(p->k);
            if (!a->ws) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_ws: no workspace for the padded x");
            MG_CUDA_TRY(cudaMemcpy2DAsync(a->ws, ld * eb, a->x, (size_t)p->k * eb, (size_t)p->k * eb, p->m,
                                          cudaMemcpyDeviceToDevice, (cudaStream_t)a->stream));
            xb = a->ws;
        } else if ((uintptr_t)a->x % 16 != 0) {
            return mg_set_error(MG_ERR_UNSUPPORTED, "wgmma_ws: x must be 16-byte aligned for TMA (got %p)", a->x);
        }
        mg_status st = mgws::make_map<C>(&prm.a[0], xb, p->m, p->k, ld, C::BM);
        if (st != MG_OK) return st;
        const mgws::PreparedHost *h = static_cast<const mgws::PreparedHost *>(a->prep->host);
        memcpy(&prm.b[0], &h->b[wmap], sizeof(CUtensorMap));
        if (wmap == kMain) /* the stream-K slots sit at the workspace's end; the remainder sums after the padded x */
            return mgws::run<C>(a, prm, pad_bytes(p), &h->b[kMainNarrow], &h->b[kMainRem]);
    }
    return mgws::run<C>(a, prm, pad_bytes(p));
}

/* The launch of one precision's four configurations (Big, Small, Mid, N192), by pick_tiles. */
template <class Big, class Small, class Mid, class N192> mg_status launch_picked(mg_launch_args *a) {
    switch (pick_tiles<Big, Mid, N192>(&a->p, a->num_sms)) {
    case kSmall: return launch_cfg<Small>(a, kSmall);
    case kMid: return launch_cfg<Mid>(a, kMid);
    case kN192: return launch_cfg<N192>(a, kN192);
    default: return launch_cfg<Big>(a, kMain);
    }
}

mg_status ws_launch(mg_launch_args *a) {
    const mg_problem *p = &a->p;
    mg_status st = ws_supports(p, 0);
    if (st != MG_OK) return st;
    a->ntiles = ws_partial_tiles(p);
    if (mg_partial_len(p) == 0) return MG_OK;
    if (p->m == 0 || p->n == 0)
        return mg_set_error(MG_ERR_SHAPE, "wgmma_ws: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m,
                            p->n, p->max_dim);
    return p->prec == MG_PREC_BF16 ? launch_picked<CfgBF16, CfgBF16S, CfgBF16M, CfgBF16N>(a)
                                   : launch_picked<CfgTF32, CfgTF32S, CfgTF32M, CfgTF32N>(a);
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_wgmma_ws = {
    ws_partial_tiles, ws_workspace_bytes, ws_supports, ws_prepare, mgws::release_prepared, ws_launch,
};
