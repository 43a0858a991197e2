/* 09_cublas_int8x3.cu: kernel 9, a BASELINE (issue 19, item 0): fp32-mode accuracy from cuBLAS int8 GEMMs with the
 * Ozaki scheme I slicing, the way "a user who knows the trick" would assemble it from library calls; the fused s8
 * wgmma kernel of the issue is to be measured against it, as kernel 6 is against kernel 5.
 *
 * What it shows: every row of x (per call) and of W (once, in mg_set_weights) scaled by sigma = 32639 / max|row| and
 * cut into two balanced s8 digits, v ~= (256 hi + lo) u (src/ozaki.h, notes/19_int8_ozaki.md); then
 *     hh = x_hi W_hi^T                                   one cublasGemmEx s8 x s8 -> s32, K = ldk
 *     cr = [x_hi | x_lo] [W_lo | W_hi]^T                 one cublasGemmEx over the concatenated K = 2 ldk (the cross
 *                                                        sum hi_x lo_w + lo_x hi_w in one int32 accumulator)
 *     y  = fma(fma(float(hh), 256, float(cr)), fp32(u_x u_w) * 256, b)     (3 products; lo*lo dropped)
 * in a combine kernel fused with the bias and the NaN-propagating max into partial maxima, then the library's finalize.
 * int32 is exact (no rounding in the tensor core) up to K = 66052 (the shared cross sum: K * 2 * 127 * 128 < 2^31).
 * Two GEMMs rather than three: the concatenated K writes the cr buffer once (beta 0 then beta 1 into one buffer would
 * write it twice and read it once); the same MACs either way (which is faster: to be measured).
 *
 * The guard and the fallback (issue item 3): the x pre-pass (mg_oz_slice) decides per row whether the int8 error keeps
 * the fp32 bar (src/ozaki.h: Bernstein bound <= 8.5e-5 from max|x_i|, ||x_i||^2 and W's maxima); rows with NaN / inf,
 * rows failing the bound, and every row when K > 66052 (this baseline does not split K) are FLAGGED and listed on the
 * device. The combine treats them as absent (-inf); mg_oz_fallback computes them exactly (kernel 1's fp32 FMA chain)
 * into one extra partial row, the plan's last. W with a NaN or +-inf: prepare names kernel 1 (naive) as the runner.
 * A W with outlier rows raises W's maxima, so every x row fails the guard and runs the fallback: correct, SIMT-slow.
 *
 * Layout (cuBLAS is column-major): the int32 outputs are m x np row-major = np x m column-major (np = N padded to 4),
 * each call y_cm = W_part^T * x_part with A = W slices viewed column-major (2 ldk x np, op T), B = x slices (2 ldk x
 * m, op N), lda = ldb = 2 ldk, ldc = np: cuBLAS's IMMA requirements (src/ozaki.h: pointers 16-byte aligned, leading
 * dimensions and m, k multiples of 4) hold for any M, N, K.
 * Partial rows: max_dim 1: one per 1024 columns (the combine's row max of each column chunk) + the fallback row;
 * max_dim 0: one per 32 rows (column max of each row block) + the fallback row.
 * Workspace (per batch m): the x pre-pass's (src/ozaki.h: count, x slices, u_x, flags, list) then hh and cr (m x np
 * int32 each); 16 + 64 MiB at the headline. Weight state: W slices (np x 2 ldk bytes: 128 MiB), u_w, W's guard maxima.
 * Precision: fp32 mode only. Needs cuBLAS int8 (sm_75+); registered for sm_80+, auto never takes it (auto_rank 0).
 * Run: build/maxgemm run --kernel 9 --precision fp32 --check   (also --max-dim 0)
 * Measured (H200, runs 54-56): headline fp32 mode 0.362 / 0.365 ms (md1 / md0) = 7.47x / 7.42x SGEMM, max abs
 * error 2.4e-5 .. 3.2e-5 (md0, 5 seeds). (Prediction, notes/19_int8_ozaki.md: cuBLAS int8 ran 0.128 ms per product at the
 * headline, so ~0.40 ms for three, plus ~0.05 ms of pre-pass, combine (64 MiB of int32 read) and finalize.)
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cublas_util.cuh"
#include "mg_kernel.h"
#include "ozaki.h"

namespace {

constexpr int CMB_THREADS = 256;
constexpr int CMB_COLS1 = 1024;   /* max_dim 1: columns per partial row (a warp per row walks them) */
constexpr int CMB_ROWS0 = 32;     /* max_dim 0: rows per partial row (a thread per column walks them) */

/* How the launch makes the partial rows (the private part of a launch plan, mg_launch_plan::priv). The steps are
 * src/ozaki.h's (MG_OZ_STEP_*): INT8 here is the pre-pass with slices, two GEMMs, combine, fallback. */
enum int8x3_step {
    STEP_NONE = MG_OZ_STEP_NONE,
    STEP_ZERO = MG_OZ_STEP_ZERO,
    STEP_FALLBACK = MG_OZ_STEP_FALLBACK,
    STEP_INT8 = MG_OZ_STEP_INT8,
};
struct int8x3_priv {
    int step;           /* int8x3_step */
    int vec;            /* the pre-pass's 16-byte loads (x 16-byte aligned, K % 4 == 0) */
    int np;             /* N padded to 4: the int32 row stride, cuBLAS's m */
    int combine_rows;   /* partial rows the combine writes; the fallback's row is the next one */
    int fb_grid;        /* the fallback's grid */
    mg_oz_xlayout xl;   /* the pre-pass's part of the workspace */
    size_t hh_off, cr_off;
};
static_assert(sizeof(int8x3_priv) <= sizeof(((mg_launch_plan *)nullptr)->priv.bytes),
              "int8x3_priv outgrows mg_launch_plan::priv");

/* What prepare made (mg_prepared::state): the layer's weight side (src/ozaki.h). */
typedef mg_oz_wstate int8x3_state;

int gemm_runs(int64_t k) { return mg_oz_int8_runs(k); }

/* The workspace for a batch of m rows: the pre-pass's, then hh and cr when the GEMMs run. */
size_t layout(const mg_problem *p, int64_t m, mg_oz_xlayout *xl, size_t *hh_off, size_t *cr_off) {
    mg_oz_xlayout_make(m, p->k, gemm_runs(p->k), xl);
    const size_t outb = gemm_runs(p->k) ? mg_oz_align256((size_t)m * (size_t)mg_oz_np(p->n) * 4) : 0;
    *hh_off = xl->bytes;
    *cr_off = xl->bytes + outb;
    return xl->bytes + 2 * outb;
}

int own_rows(const mg_problem *p) {
    return (p->max_dim == 1 ? mg_cdiv(p->n, CMB_COLS1) : mg_cdiv(p->m, CMB_ROWS0)) + 1;
}

mg_status int8x3_supports(const mg_problem *p, int sm) {
    (void)sm;
    if (p->prec != MG_PREC_FP32)
        return mg_set_error(MG_ERR_UNSUPPORTED, "cublas_int8x3 implements fp32 mode only (it IS the fp32-accurate "
                                                "int8 split scheme); use cublas or a tensor-core kernel for %s",
                            mg_precision_name(p->prec));
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "cublas_int8x3: negative size (M=%d N=%d K=%d)", p->m, p->n, p->k);
    if (p->n > INT32_MAX - MG_OZ_NPAD || 2 * mg_oz_ld(p->k) > INT32_MAX)
        return mg_set_error(MG_ERR_UNSUPPORTED, "cublas_int8x3: N=%d or K=%d too large for cuBLAS's int dimensions",
                            p->n, p->k);
    return MG_OK;
}

/* Its own partial rows and workspace at p->m (both grow with m), or naive's (the runner when W holds NaN / inf). */
void int8x3_bounds(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes) {
    int naive_rows = 0;
    size_t naive_ws = 0, hh, cr;
    mg_ops_naive.bounds(p, dev, &naive_rows, &naive_ws);
    mg_oz_xlayout xl;
    const size_t own_ws = layout(p, p->m, &xl, &hh, &cr);
    const int rows = own_rows(p);
    if (partial_rows) *partial_rows = naive_rows > rows ? naive_rows : rows;
    if (ws_bytes) *ws_bytes = naive_ws > own_ws ? naive_ws : own_ws;
}

mg_status int8x3_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    (void)opt;
    if (!p || !lp)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_int8x3: plan called with a NULL %s",
                            p ? "launch plan" : "problem");
    mg_status st = int8x3_supports(p, dev ? dev->sm : 0);
    if (st != MG_OK) return st;
    int8x3_priv pp = {};
    pp.step = mg_oz_step(p->m, p->n, p->k, p->max_dim);
    if (pp.step < 0)
        return mg_set_error(MG_ERR_SHAPE, "cublas_int8x3: max over an empty dimension (M=%d, N=%d, max_dim %d)",
                            p->m, p->n, p->max_dim);
    pp.vec = (p->align & MG_ALIGN_X16) && p->k % 4 == 0;
    pp.np = (int)mg_oz_np(p->n);
    pp.combine_rows = own_rows(p) - 1;
    pp.fb_grid = mg_oz_fallback_grid(p->m, p->n, dev ? dev->num_sms : 0);
    const size_t ws = layout(p, p->m, &pp.xl, &pp.hh_off, &pp.cr_off);
    char summary[sizeof lp->summary];
    if (pp.step == STEP_NONE)
        snprintf(summary, sizeof summary, "cublas_int8x3: empty output (M=%d, N=%d, max_dim %d), nothing to launch",
                 p->m, p->n, p->max_dim);
    else
        snprintf(summary, sizeof summary, "cublas_int8x3: %s; combine into %d partial rows + 1 exact-fallback row "
                 "(grid %d); workspace %.1f MiB",
                 pp.step == STEP_ZERO ? "K = 0, y = b" : pp.step == STEP_FALLBACK ? "K > 66052, all rows exact" :
                 pp.vec ? "x sliced (16-byte loads), 2 GemmEx s8" : "x sliced (scalar loads), 2 GemmEx s8",
                 pp.combine_rows, pp.fb_grid, ws / 1048576.0);
    mg_plan_simple(lp, pp.combine_rows + 1, pp.step == STEP_NONE ? 0 : ws, summary);
    memcpy(lp->priv.bytes, &pp, sizeof pp);
    return MG_OK;
}

mg_status int8x3_prepare(const mg_problem *p, const mg_device *dev, const void *w, const void *b, mg_prepared *out,
                         void *stream) {
    (void)b;
    if (!p || !out)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_int8x3: prepare called with a NULL %s",
                            p ? "output" : "problem");
    out->state = NULL;
    out->runner = NULL;
    const mg_status st = int8x3_supports(p, dev ? dev->sm : 0);
    if (st != MG_OK) return st;
    return mg_oz_prepare_state(p, w, "cublas_int8x3", out, stream);
}

/* ---- the combine: y from hh and cr, + b, NaN-propagating max; flagged rows are -inf (the fallback has them) ---- */

/* What both combine kernels read and write. kzero: K = 0, y = b (hh, cr, u_w not read). */
struct CombineArgs {
    const int32_t *hh, *cr;   /* m x np int32, row-major */
    int np;
    const float *ux, *uw, *b;
    const int *flag;          /* the pre-pass's routes: non-zero = flagged (the fallback has the row) */
    int M, N, kzero;
    float *partial;
};

/* max_dim 1: a warp per row, its lanes striding the block's column chunk; partial[c * M + i]. */
__global__ void __launch_bounds__(CMB_THREADS) int8x3_combine_rowmax(const CombineArgs a) {
    const int i = blockIdx.x * (CMB_THREADS / 32) + (threadIdx.x >> 5), lane = threadIdx.x & 31;
    if (i >= a.M) return;   /* no barrier below */
    const int c = blockIdx.y, j1 = min(a.N, (c + 1) * CMB_COLS1);
    float m = -INFINITY;
    if (!a.flag[i]) {
        const float u = a.ux[i];
        const int32_t *h = a.hh + (size_t)i * a.np, *r = a.cr + (size_t)i * a.np;
        for (int j = c * CMB_COLS1 + lane; j < j1; j += 32)
            m = mg_nanmaxf(m, a.kzero ? mg_oz_combine(0, 0, 0.f, a.b[j])
                                      : mg_oz_combine(h[j], r[j], mg_oz_scale(u, a.uw[j]), a.b[j]));
        for (int o = 16; o > 0; o >>= 1) m = mg_nanmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    }
    if (lane == 0) a.partial[(size_t)c * a.M + i] = m;
}

/* max_dim 0: a thread per column, the rows of the block's row range in ascending order; partial[rb * N + j]. */
__global__ void __launch_bounds__(CMB_THREADS) int8x3_combine_colmax(const CombineArgs a) {
    const int j = blockIdx.x * CMB_THREADS + threadIdx.x, rb = blockIdx.y;
    if (j >= a.N) return;
    const float w = a.kzero ? 0.f : a.uw[j], bj = a.b[j];
    const int i1 = min(a.M, (rb + 1) * CMB_ROWS0);
    float m = -INFINITY;
    for (int i = rb * CMB_ROWS0; i < i1; i++) {
        if (a.flag[i]) continue;
        const size_t o = (size_t)i * a.np + j;
        m = mg_nanmaxf(m, a.kzero ? mg_oz_combine(0, 0, 0.f, bj)
                                  : mg_oz_combine(a.hh[o], a.cr[o], mg_oz_scale(a.ux[i], w), bj));
    }
    a.partial[(size_t)rb * a.N + j] = m;
}

mg_status int8x3_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    if (!lp || !io)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_int8x3: launch called with a NULL %s",
                            lp ? "io" : "launch plan");
    int8x3_priv pp;
    memcpy(&pp, lp->priv.bytes, sizeof pp);
    if (pp.step == STEP_NONE) return MG_OK;           /* empty output: nothing to reduce */
    if (pp.step < STEP_ZERO || pp.step > STEP_INT8)
        return mg_set_error(MG_ERR_INVALID_ARG,
                            "cublas_int8x3: launch plan has an unknown step %d (not made by int8x3_plan?)", pp.step);
    const mg_problem *p = &lp->p;
    const int m = p->m, n = p->n, k = p->k;
    if (!io->b || !io->partial || (k > 0 && (!io->x || !io->w)))
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_int8x3: NULL pointer:%s%s%s%s", io->x || k == 0 ? "" : " x",
                            io->w || k == 0 ? "" : " W", io->b ? "" : " b", io->partial ? "" : " partial");
    if (!io->ws)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_int8x3: no workspace (the plan uses %zu bytes)", lp->ws_bytes);
    const int8x3_state *s = (const int8x3_state *)state;
    if (!s || !s->u_w || s->n != n || s->k != k || (pp.step == STEP_INT8 && !s->w_sl))
        return mg_set_error(MG_ERR_NO_WEIGHTS, "cublas_int8x3: W was not prepared for this problem (N=%d K=%d)", n, k);
    cudaStream_t st = (cudaStream_t)stream;
    char *ws = (char *)io->ws;
    int *count = (int *)(ws + pp.xl.count_off), *flag = (int *)(ws + pp.xl.flag_off), *list = (int *)(ws + pp.xl.list_off);
    float *ux = (float *)(ws + pp.xl.ux_off);
    int8_t *xs = pp.step == STEP_INT8 ? (int8_t *)(ws + pp.xl.xs_off) : NULL;
    int32_t *hh = (int32_t *)(ws + pp.hh_off), *cr = (int32_t *)(ws + pp.cr_off);
    const int64_t ldk = pp.xl.ldk;
    const int len = mg_partial_len(p);
    float *fb_row = io->partial + (size_t)pp.combine_rows * len;

    /* 1. the x pre-pass: slices, units, the guard's flags and list, the fallback row's -inf */
    mg_status ret = mg_oz_prepass(&pp.xl, pp.step, MG_OZ_GUARD_X3, (const float *)io->x, m, k, pp.vec, s->ws, io->ws,
                                  fb_row, len, stream);
    if (ret != MG_OK) return ret;

    /* 2. hh and the cross sum (cuBLAS column-major: y_cm[np x m] = W_part^T x_part) */
    if (pp.step == STEP_INT8) {
        cublasHandle_t h = (cublasHandle_t)io->cublas;
        if (!h) return mg_set_error(MG_ERR_INVALID_ARG, "cublas_int8x3: no cuBLAS handle");
        const int32_t one = 1, zero = 0;
        const int ld2 = (int)(2 * ldk);
        MG_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, pp.np, m, (int)ldk, &one, s->w_sl + ldk, CUDA_R_8I, ld2,
                                   xs, CUDA_R_8I, ld2, &zero, hh, CUDA_R_32I, pp.np, CUBLAS_COMPUTE_32I,
                                   CUBLAS_GEMM_DEFAULT));
        MG_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, pp.np, m, ld2, &one, s->w_sl, CUDA_R_8I, ld2, xs,
                                   CUDA_R_8I, ld2, &zero, cr, CUDA_R_32I, pp.np, CUBLAS_COMPUTE_32I,
                                   CUBLAS_GEMM_DEFAULT));
    }

    /* 3. the combine (flagged rows: -inf), 4. the exact fallback for the flagged rows */
    const CombineArgs ca = {hh, cr, pp.np, ux, s->u_w, (const float *)io->b, flag, m, n, pp.step == STEP_ZERO,
                            io->partial};
    if (p->max_dim == 1)
        int8x3_combine_rowmax<<<dim3(mg_cdiv(m, CMB_THREADS / 32), pp.combine_rows), CMB_THREADS, 0, st>>>(ca);
    else
        int8x3_combine_colmax<<<dim3(mg_cdiv(n, CMB_THREADS), pp.combine_rows), CMB_THREADS, 0, st>>>(ca);
    MG_LAUNCH_CHECK();
    return mg_oz_fallback((const float *)io->x, (const float *)io->w, (const float *)io->b, m, n, k, p->max_dim, list,
                          count, fb_row, pp.fb_grid, 0, stream);
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_cublas_int8x3 = {
    int8x3_supports, int8x3_bounds, int8x3_plan, int8x3_prepare, mg_oz_wstate_release, int8x3_launch,
};
