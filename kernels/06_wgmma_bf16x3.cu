/* 06_wgmma_bf16x3.cu: kernel 6, fp32-accurate split precision fused on kernel 4's warp-specialized design (fp32 mode).
 *
 * What it shows: fp32-mode accuracy (1e-4) from bf16 tensor cores. Every fp32 operand v = hi + lo (+ 2^-17 |v| at
 * most), hi and lo bf16 (kernels/split.cu's rules); then
 *     x W^T ~= x_lo W_hi^T + x_hi W_lo^T + x_hi W_hi^T      (x_lo W_lo^T dropped: notes/05_06_split.md)
 * W is split ONCE in prepare into W hi / lo, K-permuted within 32-column blocks (ws_mainloop.cuh "THE K PERMUTATION").
 * x is not pre-split: the producer TMA-loads the caller's fp32 x tile; each consumer reads its rows of x from shared
 * memory into registers, splits them there and issues the three products as register-A m64n256k16 bf16 wgmma into one
 * fp32 accumulator (Scheme kBF16x3RS). Same roles, scheduler, stream-K and fused epilogue as kernel 4
 * (kernels/ws_kernel.cuh); the plan is src/ws_policy.h's with one configuration (tile_configs/wgmma_bf16x3.cfg).
 * What changed from kernel 5 (cuBLAS bf16x3): one kernel instead of three GEMMs + a y round trip + a bias/max pass.
 * W holding +-inf needs the exact SIMT kernel (a bf16 split cannot carry inf exactly): prepare hands the weights to
 * kernel 1 (mg_prepared::runner). History (the pre-split scheme, tile shapes tried): notes/05_06_split.md.
 *
 * Run:  build/maxgemm run --kernel 6 --precision fp32 --check
 * Measured (H200, run 50, M=1024 N=K=8192, paired with kernel 0 = SGEMM): 5.34x / 5.22x SGEMM (max_dim 1 / 0),
 *   about 0.51 ms.
 */
#include <cuda_runtime.h>

#include "split.h"
#include "ws_host.cuh"

#if !defined(MG_TILE_wgmma_bf16x3_fp32)
#error "tile_configs/wgmma_bf16x3.cfg must have a 'wgmma_bf16x3 fp32' row"
#endif

namespace {

using CfgX3 = mgws::Cfg<mgws::Scheme::kBF16x3RS, MG_TILE_wgmma_bf16x3_fp32>;

/* Row stride (elements) of the prepared W hi / lo: K rounded up to 32 (whole permutation blocks). */
int64_t w_ld(int64_t k) { return (k + 31) / 32 * 32; }

/* W (rows x k fp32, dense) -> hi, lo (rows x ld bf16), split and K-permuted within each 32-column block
 * (mgws::rs_perm_src); columns >= k are 0. One thread per (row, 32-column block): it reads the block's 32 floats and
 * writes 4 x 16 bytes of hi and of lo, where 16-byte word j holds positions 8j .. 8j + 7 = step j / 2, half j % 2,
 * pairs q = 0..3. */
__global__ void __launch_bounds__(256) split_w_kernel(const float *__restrict__ w, int64_t rows, int64_t k, int64_t ld,
                                                      bool vec, uint4 *__restrict__ hi, uint4 *__restrict__ lo) {
    const int64_t blocks = ld / 32;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < rows * blocks;
         i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t r = i / blocks, c0 = (i % blocks) * 32;
        const float *src = w + r * k + c0;
        float v[32];
        if (vec) { /* k % 4 == 0 and w 16-byte aligned: a float4 is wholly inside or wholly past k */
#pragma unroll
            for (int j = 0; j < 8; j++) {
                const float4 f = c0 + 4 * j < k ? __ldg(reinterpret_cast<const float4 *>(src) + j)
                                                : make_float4(0.f, 0.f, 0.f, 0.f);
                v[4 * j] = f.x; v[4 * j + 1] = f.y; v[4 * j + 2] = f.z; v[4 * j + 3] = f.w;
            }
        } else {
#pragma unroll
            for (int j = 0; j < 32; j++) v[j] = c0 + j < k ? __ldg(src + j) : 0.f;
        }
        uint4 *h = hi + (r * ld + c0) / 8, *l = lo + (r * ld + c0) / 8;
#pragma unroll
        for (int j = 0; j < 4; j++) {
            uint32_t hw[4], lw[4];
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int p = 8 * j + 2 * q;  /* positions p, p + 1 <- columns rs_perm_src(p), + 1 */
                static_assert(mgws::rs_perm_src(1) == mgws::rs_perm_src(0) + 1, "pairs stay adjacent");
                mgws::rs_split_pair(v[mgws::rs_perm_src(p)], v[mgws::rs_perm_src(p) + 1], hw[q], lw[q]);
            }
            h[j] = make_uint4(hw[0], hw[1], hw[2], hw[3]);
            l[j] = make_uint4(lw[0], lw[1], lw[2], lw[3]);
        }
    }
}

mg_status split_w(const float *w, int64_t rows, int64_t k, uint16_t *hi, uint16_t *lo, void *stream) {
    const int64_t ld = w_ld(k);
    const int64_t work = rows * (ld / 32);
    if (work == 0) return MG_OK;
    const bool vec = k % 4 == 0 && (uintptr_t)w % 16 == 0;
    const int64_t blocks = (work + 255) / 256;
    split_w_kernel<<<(unsigned)(blocks < 4096 ? blocks : 4096), 256, 0, (cudaStream_t)stream>>>(
        w, rows, k, ld, vec, reinterpret_cast<uint4 *>(hi), reinterpret_cast<uint4 *>(lo));
    MG_LAUNCH_CHECK();
    return MG_OK;
}

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

/* Its own bounds, and room for the exact fallback's (W holding +-inf: kernel 1 runs these weights). */
void x3_bounds(const mg_problem *p, const mg_device *dev, int *rows, size_t *ws) {
    const mg_ws_kernel kd = mg_ws_kernel6();
    mg_ws_bounds(&kd, p->m, p->n, p->k, p->max_dim, dev->num_sms, rows, ws);
    int nrows = 0;
    size_t nws = 0;
    mg_ops_naive.bounds(p, dev, &nrows, &nws);
    if (nrows > *rows) *rows = nrows;
    if (nws > *ws) *ws = nws;
}

mg_status x3_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    mg_status st = x3_supports(p, 0);
    if (st != MG_OK) return st;
    const mg_ws_kernel kd = mg_ws_kernel6();
    mg_ws_plan &pl = mgws::plan_of(lp);
    char why[160];
    if (mg_ws_make_plan(&kd, p->m, p->n, p->k, p->max_dim, (p->align & MG_ALIGN_X16) != 0, dev->num_sms, opt, &pl,
                        &lp->partial_rows, &lp->ws_bytes, why, sizeof why) != 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "%s", why);
    mg_ws_plan_summary(&kd, &pl, lp->summary, sizeof lp->summary);
    return MG_OK;
}

mg_status x3_prepare(const mg_problem *p, const mg_device *dev, const void *w, const void *b, mg_prepared *out,
                     void *stream) {
    (void)b;
    (void)dev;
    mg_status st = x3_supports(p, 0);
    if (st != MG_OK) return st;
    if (p->n == 0 || p->k == 0) return MG_OK; /* no k-iterations: the kernel never reads W */
    int has_inf = 0;
    if ((st = mg_has_inf_f32((const float *)w, (size_t)p->n * (size_t)p->k, &has_inf, stream)) != MG_OK) return st;
    if (has_inf) {
        out->runner = &mg_ops_naive; /* exact semantics for these weights (see the header) */
        return MG_OK;
    }
    const int64_t ld = w_ld(p->k);
    const size_t bytes = (size_t)p->n * (size_t)ld * 2;
    mgws::State *h = nullptr;
    if ((st = mgws::state_alloc(&h)) != MG_OK) return st;
    if ((st = mgws::dev_alloc(&h->buf[0], bytes, "wgmma_bf16x3 W hi")) != MG_OK ||
        (st = mgws::dev_alloc(&h->buf[1], bytes, "wgmma_bf16x3 W lo")) != MG_OK ||
        (st = split_w((const float *)w, p->n, p->k, (uint16_t *)h->buf[0], (uint16_t *)h->buf[1], stream)) != MG_OK) {
        mgws::state_release(h);
        return st;
    }
    /* the permuted W has data at positions >= K (a column < K can land past K inside the last 32-block), so its
     * descriptor spans the whole padded width ld (zeros past K) */
    for (int q = 0; q < 2 && st == MG_OK; q++)
        st = mgws::make_map_b<CfgX3>(&h->b[q], h->buf[q], p->n, ld, ld, CfgX3::BN);
    if (st != MG_OK) {
        mgws::state_release(h);
        return st;
    }
    out->state = h;
    return MG_OK;
}

mg_status x3_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    const mgws::State *h = static_cast<const mgws::State *>(state);
    if (lp->p.k > 0 && !h) return mg_set_error(MG_ERR_NO_WEIGHTS, "wgmma_bf16x3: W was not prepared for this problem");
    return mgws::launch_plan<CfgX3>(lp, io, h ? h->b : nullptr, nullptr, nullptr, stream, "wgmma_bf16x3");
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_wgmma_bf16x3 = {
    x3_supports, x3_bounds, x3_plan, x3_prepare, mgws::state_release, x3_launch,
};
