/* 05_cublas_bf16x3.cu: kernel 5, a BASELINE: fp32-accurate GEMM from three cuBLAS bf16 GEMMs (split precision),
 * the way "a user who knows the trick" would build it from library calls.
 *
 * What it shows: every fp32 operand v is split as v = hi + lo (+ a 2^-17 relative remainder), hi and lo bf16
 * (kernels/split.cu). Then
 *     x W^T  ~=  x_lo W_hi^T  +  x_hi W_lo^T  +  x_hi W_hi^T        (x_lo W_lo^T, at most 2^-16 relative, dropped)
 * as three cublasGemmEx calls (bf16 in, fp32 accumulate, fp32 out) into a materialised fp32 y in the workspace,
 * then the shared bias + max epilogue (mg_bias_max) into ONE partial row, and the library's finalize.
 * What changed from kernel 0: SGEMM (SIMT, 2.7 ms at the headline) becomes three tensor-core GEMMs.
 *
 * Order of the three calls: small terms first. The two cross terms are ~2^-8 of the main term; summing them
 * first (beta 0 then beta 1) and adding hi*hi last (beta 1) rounds the result ONCE at the main term's magnitude,
 * while hi*hi first would round twice at that magnitude (once per accumulating call). The difference is at most
 * half an fp32 ulp of y per output, far below the in-GEMM accumulation error (notes/05_06_split.md), so it is
 * the better order on paper and no slower.
 *
 * Layout: y is M x N row-major = N x M column-major, so each call is  y_cm = W_cm^T * x_cm  with
 *   A = W part viewed column-major K x N (ld), op T;  B = x part viewed column-major K x M (ld), op N;
 * ld = K rounded up to 8 (16-byte bf16 rows) for both operands.
 * Weight side (prepare): W_hi, W_lo in the kernel's state (bf16x3_state). W holding +-inf cannot be split exactly
 * (x_lo * W_hi = 0 * inf = NaN where fp32 gives +-inf): prepare then names naive (kernel 1) as the runner, and the
 * library plans and launches that instead; so bounds cover naive's partial rows too.
 * Per call: plan lays out the workspace [y: M*N fp32][x_hi: M*ld bf16][x_lo: M*ld bf16] (each 256-byte aligned)
 * for the batch and picks the step (three GEMMs, a memset of y for K = 0, nothing for an empty output); launch
 * splits x into it and enqueues the GEMMs through io->cublas (bound to the stream by the library).
 * Run: build/maxgemm run --kernel 5 --precision fp32 --check
 * Measured (H200, headline M = 1024, N = K = 8192, fp32, bench/results/h200.csv, run 126): 0.562 ms (245 TFLOP/s,
 * 4.9x kernel 0), max abs error 1.3e-5 (max_dim 0). Design and history: notes/05_06_split.md.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_util.h"
#include "cublas_util.cuh"
#include "mg_kernel.h"
#include "split.h"

namespace {

size_t align256(size_t v) { return (v + 255) & ~(size_t)255; }
int64_t padded_ld(int64_t k) { return (k + 7) / 8 * 8; }   /* bf16 rows of a multiple of 16 bytes */

/* Workspace: [y: M*N fp32][x_hi: M*ld bf16][x_lo: M*ld bf16], each 256-byte aligned. */
size_t y_bytes(const mg_problem *p) { return align256((size_t)p->m * (size_t)p->n * sizeof(float)); }
size_t xpart_bytes(const mg_problem *p) { return align256((size_t)p->m * (size_t)padded_ld(p->k) * 2); }
size_t ws_bytes_for(const mg_problem *p) { return y_bytes(p) + 2 * xpart_bytes(p); }

/* How the launch makes y (the private part of a launch plan, mg_launch_plan::priv). */
enum bf16x3_step {
    STEP_NONE = 0,          /* empty output (M = 0 with max_dim 1, N = 0 with max_dim 0): nothing to enqueue */
    STEP_ZERO,              /* K = 0: y = 0 by a memset (cuBLAS would reject lda = 0), + b in mg_bias_max */
    STEP_SPLIT3,            /* x split into the workspace, three cublasGemmEx into y */
};
struct bf16x3_priv {
    int step;               /* bf16x3_step */
    int ld;                 /* row stride (elements) of x_hi, x_lo and of the prepared W_hi, W_lo */
    size_t y_bytes;         /* y: M*N floats at the start of the workspace (what the memset clears) */
    size_t x_hi_off, x_lo_off;  /* byte offsets of x_hi and x_lo in the workspace */
};
static_assert(sizeof(bf16x3_priv) <= sizeof(((mg_launch_plan *)nullptr)->priv.bytes),
              "bf16x3_priv outgrows mg_launch_plan::priv");

/* What prepare made (mg_prepared::state): W split to bf16 hi / lo, row stride ld. */
struct bf16x3_state {
    void *w_hi, *w_lo;
    int n, k, ld;
};

mg_status bf16x3_supports(const mg_problem *p, int sm) {
    (void)sm;
    if (p->prec != MG_PREC_FP32)
        return mg_set_error(MG_ERR_UNSUPPORTED, "cublas_bf16x3 implements fp32 mode only (it IS the fp32-accurate "
                                                "split scheme); use cublas or a tensor-core kernel for %s",
                            mg_precision_name(p->prec));
    return MG_OK;
}

/* 1 row and the workspace above, or naive's (the runner prepare names when W holds +-inf): the larger of each. */
void bf16x3_bounds(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes) {
    int naive_rows = 0;
    size_t naive_ws = 0;
    mg_ops_naive.bounds(p, dev, &naive_rows, &naive_ws);
    const size_t own_ws = ws_bytes_for(p);
    if (partial_rows) *partial_rows = naive_rows > 1 ? naive_rows : 1;
    if (ws_bytes) *ws_bytes = naive_ws > own_ws ? naive_ws : own_ws;
}

mg_status bf16x3_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    (void)opt;
    if (!p || !lp)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_bf16x3: plan called with a NULL %s",
                            p ? "launch plan" : "problem");
    mg_status st = bf16x3_supports(p, dev ? dev->sm : 0);
    if (st != MG_OK) return st;
    bf16x3_priv pp = {};
    if (mg_partial_len(p) == 0) {
        pp.step = STEP_NONE;
    } else if (p->m == 0 || p->n == 0) {
        return mg_set_error(MG_ERR_SHAPE, "cublas_bf16x3: max over an empty dimension (M=%d, N=%d, max_dim %d)",
                            p->m, p->n, p->max_dim);
    } else {
        pp.step = p->k == 0 ? STEP_ZERO : STEP_SPLIT3;
    }
    pp.ld = (int)padded_ld(p->k);
    pp.y_bytes = (size_t)p->m * (size_t)p->n * sizeof(float);
    pp.x_hi_off = y_bytes(p);
    pp.x_lo_off = y_bytes(p) + xpart_bytes(p);
    const size_t ws = pp.step == STEP_NONE ? 0 : ws_bytes_for(p);
    char summary[sizeof lp->summary];
    switch (pp.step) {
    case STEP_NONE:
        snprintf(summary, sizeof summary, "cublas_bf16x3: empty output (M=%d, N=%d, max_dim %d), nothing to launch",
                 p->m, p->n, p->max_dim);
        break;
    case STEP_ZERO:
        snprintf(summary, sizeof summary, "cublas_bf16x3: K = 0: y = 0 (%d x %d fp32) by cudaMemsetAsync, then bias "
                 "+ max into 1 partial row", p->m, p->n);
        break;
    default:
        snprintf(summary, sizeof summary, "cublas_bf16x3: x split to bf16 hi/lo (ld %d), 3 cublasGemmEx (lo*hi, "
                 "hi*lo, hi*hi) into fp32 y (%d x %d), bias + max into 1 partial row; workspace %.1f MiB", pp.ld,
                 p->m, p->n, ws / 1048576.0);
        break;
    }
    mg_plan_simple(lp, 1, ws, summary);
    memcpy(lp->priv.bytes, &pp, sizeof pp);
    return MG_OK;
}

void bf16x3_release(void *state) {
    bf16x3_state *s = (bf16x3_state *)state;
    if (!s) return;
    if (s->w_hi) cudaFree(s->w_hi);   /* release cannot report; a failed free leaks at worst */
    if (s->w_lo) cudaFree(s->w_lo);
    free(s);
}

mg_status bf16x3_prepare(const mg_problem *p, const mg_device *dev, const void *w, const void *b, mg_prepared *out,
                         void *stream) {
    (void)b;
    if (!p || !out)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_bf16x3: prepare called with a NULL %s",
                            p ? "output" : "problem");
    out->state = NULL;
    out->runner = NULL;
    mg_status st = bf16x3_supports(p, dev ? dev->sm : 0);
    if (st != MG_OK) return st;
    const int64_t ld = padded_ld(p->k);
    if (p->n == 0 || ld == 0) return MG_OK;          /* nothing to split; launch never reads W */
    if (!w) return mg_set_error(MG_ERR_INVALID_ARG, "cublas_bf16x3: W is NULL (N=%d K=%d)", p->n, p->k);
    int has_inf = 0;
    if ((st = mg_has_inf_f32((const float *)w, (size_t)p->n * (size_t)p->k, &has_inf, stream)) != MG_OK) return st;
    if (has_inf) {                                    /* the exact SIMT kernel runs on W itself */
        out->runner = &mg_ops_naive;
        return MG_OK;
    }
    bf16x3_state *s = (bf16x3_state *)calloc(1, sizeof *s);
    if (!s) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "cublas_bf16x3: host allocation of the weight state failed");
    s->n = p->n;
    s->k = p->k;
    s->ld = (int)ld;
    const size_t bytes = (size_t)p->n * (size_t)ld * 2;
    for (int i = 0; i < 2; i++) {
        void **dst = i ? &s->w_lo : &s->w_hi;
        cudaError_t e = cudaMalloc(dst, bytes);
        if (e != cudaSuccess) {
            *dst = NULL;
            bf16x3_release(s);
            return mg_set_error(e == cudaErrorMemoryAllocation ? MG_ERR_OUT_OF_MEMORY : MG_ERR_CUDA,
                                "cublas_bf16x3: cudaMalloc of %zu bytes for W %s: %s", bytes, i ? "lo" : "hi",
                                cudaGetErrorString(e));
        }
    }
    st = mg_split_bf16((const float *)w, p->n, p->k, ld, (uint16_t *)s->w_hi, (uint16_t *)s->w_lo, stream);
    if (st != MG_OK) {
        bf16x3_release(s);
        return st;
    }
    out->state = s;
    return MG_OK;
}

mg_status bf16x3_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    if (!lp || !io)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_bf16x3: launch called with a NULL %s",
                            lp ? "io" : "launch plan");
    bf16x3_priv pp;
    memcpy(&pp, lp->priv.bytes, sizeof pp);
    if (pp.step == STEP_NONE) return MG_OK;           /* empty output: nothing to reduce */
    if (pp.step != STEP_ZERO && pp.step != STEP_SPLIT3)
        return mg_set_error(MG_ERR_INVALID_ARG,
                            "cublas_bf16x3: launch plan has an unknown step %d (not made by bf16x3_plan?)", pp.step);
    const mg_problem *p = &lp->p;
    const bool gemm = pp.step == STEP_SPLIT3;
    if (!io->b || !io->partial || (gemm && !io->x))
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_bf16x3: NULL pointer:%s%s%s", io->x || !gemm ? "" : " x",
                            io->b ? "" : " b", io->partial ? "" : " partial");
    if (!io->ws)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas_bf16x3: no workspace (the plan uses %zu bytes)", lp->ws_bytes);
    cudaStream_t s = (cudaStream_t)stream;
    float *y = (float *)io->ws;

    if (!gemm) {
        /* y = 0 (+ bias in mg_bias_max). */
        MG_CUDA_TRY(cudaMemsetAsync(y, 0, pp.y_bytes, s));
    } else {
        const bf16x3_state *ps = (const bf16x3_state *)state;
        if (!ps || !ps->w_hi || !ps->w_lo || ps->ld != pp.ld || ps->n != p->n || ps->k != p->k)
            return mg_set_error(MG_ERR_NO_WEIGHTS, "cublas_bf16x3: W was not prepared for this problem (N=%d K=%d)",
                                p->n, p->k);
        cublasHandle_t h = (cublasHandle_t)io->cublas;
        if (!h) return mg_set_error(MG_ERR_INVALID_ARG, "cublas_bf16x3: no cuBLAS handle");
        uint16_t *x_hi = (uint16_t *)((char *)io->ws + pp.x_hi_off);
        uint16_t *x_lo = (uint16_t *)((char *)io->ws + pp.x_lo_off);
        mg_status st = mg_split_bf16((const float *)io->x, p->m, p->k, pp.ld, x_hi, x_lo, stream);
        if (st != MG_OK) return st;
        const void *w_hi = ps->w_hi, *w_lo = ps->w_lo;
        const float one = 1.f, zero = 0.f;
        /* Small terms first, main term last (see the header). The handle is bound to the stream by the library
         * and uses host pointer mode (the library's default). */
        struct { const void *wp, *xp; const float *beta; } terms[3] = {
            {w_hi, x_lo, &zero},   /* x_lo * W_hi^T */
            {w_lo, x_hi, &one},    /* x_hi * W_lo^T */
            {w_hi, x_hi, &one},    /* x_hi * W_hi^T */
        };
        for (int t = 0; t < 3; t++)
            MG_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, terms[t].wp,
                                       CUDA_R_16BF, pp.ld, terms[t].xp, CUDA_R_16BF, pp.ld, terms[t].beta, y,
                                       CUDA_R_32F, p->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
    return mg_bias_max(y, io->b, p->m, p->n, p->max_dim, MG_PREC_FP32, io->partial, stream);
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_cublas_bf16x3 = {
    bf16x3_supports, bf16x3_bounds, bf16x3_plan, bf16x3_prepare, bf16x3_release, bf16x3_launch,
};
