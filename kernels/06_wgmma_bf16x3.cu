/* 06_wgmma_bf16x3.cu: kernel 6, fp32-accurate split precision fused on kernel 4's design (fp32 mode only).
 *
 * Technique: every fp32 operand v = hi + lo (+ 2^-17 |v| at most), hi and lo bf16 (kernels/split.cu); then
 *     x W^T ~= x_lo W_hi^T + x_hi W_lo^T + x_hi W_hi^T      (x_lo W_lo^T dropped: notes/05_06_split.md)
 * computed by kernels/wgmma_ws.cuh with Scheme::kBF16x3: each pipeline stage holds FOUR tiles (A_hi, A_lo,
 * B_hi, B_lo; A = x, B = W), and per k16-step each consumer issues three m64n256k16 bf16 wgmmas (lo*hi, hi*lo,
 * hi*hi, small terms first) into ONE fp32 accumulator. Same producer/consumer roles, persistent grouped grid
 * and fused bias + max epilogue as kernel 4; y is never written.
 * What changed from kernel 5 (cuBLAS bf16x3): one kernel instead of three GEMMs + a y round trip + a bias/max
 * pass; each hi/lo tile is loaded once and feeds two products; the epilogue is fused.
 * Tile shape: tile_configs/wgmma_bf16x3.cfg (BK = 32 bf16 = 64-byte rows with the 64B swizzle, so four tiles
 * per stage still fit 4 stages). Measured result: not yet measured (prediction in notes/05_06_split.md).
 *
 * TWO SCHEMES, chosen at compile time (MG_K6_PRESPLIT; tools/tune.sh builds both for side-by-side timing):
 *   MG_K6_PRESPLIT 0 (default): Scheme::kBF16x3RS. x is NOT pre-split: the producer TMA-loads the caller's fp32
 *     x tile (BM x 32 fp32, 128B swizzle) and the W hi/lo tiles; each consumer reads its 64 rows of x from
 *     shared memory into registers, splits them into bf16 hi/lo there and issues the three products as
 *     register-A wgmma (wgmma_ws.cuh, "Scheme kBF16x3RS"). W is split ONCE in prepare into prep->buf[0] (hi)
 *     and buf[1] (lo), K-permuted within 32-column blocks (rows padded to a multiple of 32 with zeros). No
 *     per-call split launch; x goes to the workspace only when TMA cannot read it in place (K % 4 != 0 or a
 *     base that is not 16-byte aligned): a padded copy, as kernel 4 does. Needs bk 32 in the tile config.
 *   MG_K6_PRESPLIT 1: Scheme::kBF16x3 (the first version, measured 0.5103 / 0.5147 ms). W is split ONCE in
 *     prepare (rows padded to 8 elements, TMA's 16-byte rule), x per call by mg_split_bf16 into the workspace
 *     (x_hi, then x_lo), ~0.02-0.03 ms at the headline (32 MiB read, 32 MiB written, one more launch).
 * Both: W holding +-inf -> the exact fallback (naive SIMT kernel), decided in prepare.
 * Small M: kernel 4's stream-K (wgmma_ws.cuh) splits every tile's k-range over all SMs below half a wave. Measured
 * (runs 14-15, N = K = 8192): M = 1 / 64 / 256 0.232 / 0.234 / 0.236 ms -> 0.095 / 0.099 / 0.159 ms, i.e. 1.08x /
 * 2.19x / 4.41x SGEMM (was 0.43x / 0.92x / 2.94x); the headline unchanged (5.5x).
 */
#include <cuda_runtime.h>

#include "split.h"
#include "wgmma_ws.cuh"

#if !defined(MG_TILE_wgmma_bf16x3_fp32)
#error "tile_configs/wgmma_bf16x3.cfg must have a 'wgmma_bf16x3 fp32' row"
#endif

#ifndef MG_K6_PRESPLIT
#define MG_K6_PRESPLIT 0
#endif

namespace {

#if MG_K6_PRESPLIT
using CfgX3 = mgws::Cfg<mgws::Scheme::kBF16x3, MG_TILE_wgmma_bf16x3_fp32>;
#else
using CfgX3 = mgws::Cfg<mgws::Scheme::kBF16x3RS, MG_TILE_wgmma_bf16x3_fp32>;
#endif
constexpr bool kRS = CfgX3::T::kRegA;

/* Row stride (elements) of the prepared W hi / lo: pre-split: K rounded up to 8 (16 bytes); RS: K rounded up to
 * 32 (whole permutation blocks). */
int64_t x3_ld(const mg_problem *p) {
    if constexpr (kRS) return mgws::rs_w_ld(p->k);
    else return mgws::padded_k<CfgX3>(p->k);
}
/* Pre-split: one of the x_hi / x_lo workspace parts (bf16, row stride x3_ld). */
size_t x_part_bytes(const mg_problem *p) { return mgws::align256((size_t)p->m * (size_t)x3_ld(p) * 2); }
/* RS: row stride (fp32 elements) of the padded copy of x: K rounded up to 4 (16 bytes). */
int64_t rs_x_ld(const mg_problem *p) { return (p->k + 3) / 4 * 4; }

int x3_rows(const mg_problem *p) { return mgws::partial_rows<CfgX3>(p); }
/* Room for the exact fallback's rows too (W holding +-inf, see mg_prepared.exact_fallback). */
int x3_partial_tiles(const mg_problem *p) {
    const int own = x3_rows(p), naive = mg_ops_naive.partial_tiles(p);
    return own > naive ? own : naive;
}

/* RS: room for a padded copy of x, used only when TMA cannot read x in place (the same bytes as the pre-split
 * scheme's x_hi + x_lo; kept whatever the alignment of the x a launch will bring). */
size_t x_bytes(const mg_problem *p) {
    if (p->k == 0) return 0;
    if constexpr (kRS) return mgws::align256((size_t)p->m * (size_t)rs_x_ld(p) * 4);
    else return mgws::align256(2 * x_part_bytes(p));
}

/* Workspace: [x: padded copy (RS) or hi + lo (pre-split)] ... [the stream-K slots and flags, when they can be used:
 * always the last bytes, mgws::run]. */
size_t x3_workspace_bytes(const mg_problem *p) { return x_bytes(p) + mgws::sk_workspace_bytes<CfgX3>(p); }

mg_status x3_supports(const mg_problem *p, int sm) {
    if (p->prec != MG_PREC_FP32)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "wgmma_bf16x3 is the fp32-accurate kernel (fp32 mode only); for %s use wgmma_ws",
                            mg_precision_name(p->prec));
    if (sm != 0 && sm != 90)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "wgmma_bf16x3 is compiled for sm_90a (wgmma, setmaxnreg); this GPU is sm_%d", sm);
    return MG_OK;
}

/* W -> hi, lo (rows of ld elements): RS with the K permutation (wgmma_ws.cuh), pre-split in natural order. */
mg_status split_w(const float *w, const mg_problem *p, int64_t ld, uint16_t *hi, uint16_t *lo, void *stream) {
    if constexpr (kRS) return mgws::rs_split_w(w, p->n, p->k, hi, lo, stream);
    else return mg_split_bf16(w, p->n, p->k, ld, hi, lo, stream);
}

mg_status x3_prepare(const mg_problem *p, const void *w, const void *b, mg_prepared *out, void *stream) {
    (void)b;
    mg_status st = x3_supports(p, 0);
    if (st != MG_OK) return st;
    const int64_t ld = x3_ld(p);
    out->ld = (int)ld;
    if (p->n == 0 || p->k == 0) return MG_OK; /* no k-iterations: the kernel never reads W */
    int has_inf = 0;
    if ((st = mg_has_inf_f32((const float *)w, (size_t)p->n * (size_t)p->k, &has_inf, stream)) != MG_OK) return st;
    out->exact_fallback = has_inf;
    if (has_inf) return MG_OK;                /* launch runs the exact SIMT kernel on W itself */
    const size_t bytes = (size_t)p->n * (size_t)ld * 2;
    if ((st = mgws::dev_alloc(out, 0, bytes, "wgmma_bf16x3 W hi")) != MG_OK ||
        (st = mgws::dev_alloc(out, 1, bytes, "wgmma_bf16x3 W lo")) != MG_OK ||
        (st = split_w((const float *)w, p, ld, (uint16_t *)out->buf[0], (uint16_t *)out->buf[1], stream)) != MG_OK ||
        (st = mgws::alloc_host(out)) != MG_OK) {
        mgws::release_prepared(out);
        return st;
    }
    mgws::PreparedHost *h = static_cast<mgws::PreparedHost *>(out->host);
    /* RS: the permuted W has data at positions >= K (a column < K can land past K inside the last 32-block), so
     * its descriptor spans the whole padded width ld (zeros past K); pre-split: K columns (TMA zero-fills). */
    const int64_t w_cols = kRS ? ld : p->k;
    for (int q = 0; q < 2 && st == MG_OK; q++)
        st = mgws::make_map_b<CfgX3>(&h->b[q], out->buf[q], p->n, w_cols, ld, CfgX3::B_BOX_ROWS);
    if (st != MG_OK) mgws::release_prepared(out);
    return st;
}

mg_status x3_launch(mg_launch_args *a) {
    const mg_problem *p = &a->p;
    mg_status st = x3_supports(p, 0);
    if (st != MG_OK) return st;
    if (a->prep && a->prep->exact_fallback) return mg_ops_naive.launch(a);
    a->ntiles = x3_rows(p);
    if (mg_partial_len(p) == 0) return MG_OK;
    if (p->m == 0 || p->n == 0)
        return mg_set_error(MG_ERR_SHAPE, "wgmma_bf16x3: max over an empty dimension (M=%d, N=%d, max_dim %d)",
                            p->m, p->n, p->max_dim);
    mgws::Params prm;
    memset(&prm, 0, sizeof prm);
    if (p->k > 0) {
        const int64_t ld = x3_ld(p);
        if (!a->prep || !a->prep->host || !a->prep->buf[0] || !a->prep->buf[1] || a->prep->ld != ld)
            return mg_set_error(MG_ERR_NO_WEIGHTS, "wgmma_bf16x3: W was not prepared for this problem");
        if constexpr (kRS) {
            /* x read in place by TMA (fp32, 128B swizzle) when its rows are 16-byte multiples and its base is
             * 16-byte aligned; otherwise a padded copy in the workspace (the descriptor still says K columns, so
             * the padding is never read: TMA zero-fills past K). */
            const void *xb = a->x;
            int64_t xld = p->k;
            if (p->k % 4 != 0 || (uintptr_t)a->x % 16 != 0) {
                if (!a->ws) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_bf16x3: no workspace for the padded x");
                xld = rs_x_ld(p);
                MG_CUDA_TRY(cudaMemcpy2DAsync(a->ws, (size_t)xld * 4, a->x, (size_t)p->k * 4, (size_t)p->k * 4,
                                              (size_t)p->m, cudaMemcpyDeviceToDevice, (cudaStream_t)a->stream));
                xb = a->ws;
            }
            if ((st = mgws::make_map_a<CfgX3>(&prm.a[0], xb, p->m, p->k, xld, CfgX3::BM)) != MG_OK) return st;
        } else {
            if (!a->ws) return mg_set_error(MG_ERR_INVALID_ARG, "wgmma_bf16x3: no workspace for the split x");
            uint16_t *x_hi = static_cast<uint16_t *>(a->ws);
            uint16_t *x_lo = reinterpret_cast<uint16_t *>(static_cast<char *>(a->ws) + x_part_bytes(p));
            if ((st = mg_split_bf16((const float *)a->x, p->m, p->k, ld, x_hi, x_lo, a->stream)) != MG_OK) return st;
            if ((st = mgws::make_map<CfgX3>(&prm.a[0], x_hi, p->m, p->k, ld, CfgX3::BM)) != MG_OK) return st;
            if ((st = mgws::make_map<CfgX3>(&prm.a[1], x_lo, p->m, p->k, ld, CfgX3::BM)) != MG_OK) return st;
        }
        memcpy(&prm.b[0], static_cast<const mgws::PreparedHost *>(a->prep->host)->b, 2 * sizeof(CUtensorMap));
    }
    return mgws::run<CfgX3>(a, prm, x_bytes(p));   /* the stream-K slots sit at the workspace's end */
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_wgmma_bf16x3 = {
    x3_partial_tiles, x3_workspace_bytes, x3_supports, x3_prepare, mgws::release_prepared, x3_launch,
};
