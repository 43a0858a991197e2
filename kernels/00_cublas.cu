/* 00_cublas.cu: kernel 0, the BASELINE every other number is read against ("x cuBLAS").
 *
 * What it shows: what a user would write without fusion. One cuBLAS GEMM materialises y = x W^T (M x N) in the
 * workspace, then a separate bias + max kernel (mg_bias_max, kernels/gpu_util.cu) reduces it into ONE partial row,
 * then the shared finalize. Per precision mode, the call PyTorch itself makes:
 *   fp32: cublasSgemm, CUBLAS_COMPUTE_32F with CUBLAS_DEFAULT_MATH (exact fp32 SIMT; TF32 off, torch's default)
 *   tf32: cublasGemmEx fp32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32 (torch with allow_tf32 = True)
 *   bf16: cublasGemmEx bf16 in, bf16 out, CUBLAS_COMPUTE_32F (torch's bf16 nn.Linear; y rounded to bf16)
 *
 * Layout: y is M x N row-major = N x M column-major, so the call is  y_cm = W_cm^T * x_cm  with
 *   A = W viewed column-major K x N (ld K), op T;  B = x viewed column-major K x M (ld K), op N;  C ld N.
 * K = 0: y = 0 by a memset (cuBLAS rejects lda = 0), then + b in mg_bias_max.
 * Host side: plan picks the call (or the memset, or nothing for an empty output) and y's size in the workspace;
 * launch checks the pointers and the cuBLAS handle (io->cublas, bound to the stream by the library) and enqueues.
 * Run: build/maxgemm run --kernel 0 --precision fp32 --check   (also tf32, bf16)
 * Measured (H200, headline M = 1024, N = K = 8192, max_dim 1, bench/results/h200.csv, run 126): fp32 2.74 ms
 * (50 TFLOP/s), tf32 0.412 ms, bf16 0.194 ms, bias + max pass included. Floors and history: notes/00_floors.md.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gpu_util.h"
#include "cublas_util.cuh"
#include "mg_kernel.h"

namespace {

/* How the launch makes y (the private part of a launch plan, mg_launch_plan::priv). */
enum cublas_step {
    STEP_NONE = 0,          /* empty output (M = 0 with max_dim 1, N = 0 with max_dim 0): nothing to enqueue */
    STEP_ZERO,              /* K = 0: y = 0 by a memset */
    STEP_SGEMM,             /* fp32: cublasSgemm, default math */
    STEP_GEMMEX_TF32,       /* tf32: cublasGemmEx fp32, CUBLAS_COMPUTE_32F_FAST_TF32 */
    STEP_GEMMEX_BF16,       /* bf16: cublasGemmEx bf16 in and out, CUBLAS_COMPUTE_32F */
};
struct cublas_priv {
    int step;               /* cublas_step */
    int y_prec;             /* y's element type for mg_bias_max: MG_PREC_BF16 in bf16 mode, MG_PREC_FP32 otherwise */
    size_t y_bytes;         /* y, M x N, at the start of the workspace */
};
static_assert(sizeof(cublas_priv) <= sizeof(((mg_launch_plan *)nullptr)->priv.bytes),
              "cublas_priv outgrows mg_launch_plan::priv");

/* y, M x N in the element type of the mode (bf16 output in the bf16 mode, as PyTorch). */
size_t y_bytes(const mg_problem *p) { return (size_t)p->m * (size_t)p->n * mg_elem_bytes(p->prec); }

mg_status cublas_supports(const mg_problem *p, int sm) {
    (void)sm;
    if (p->prec != MG_PREC_FP32 && p->prec != MG_PREC_TF32 && p->prec != MG_PREC_BF16)
        return mg_set_error(MG_ERR_UNSUPPORTED, "cublas: unknown precision %d", (int)p->prec);
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "cublas: negative size (M=%d N=%d K=%d)", p->m, p->n, p->k);
    return MG_OK;
}

/* One partial row; y for the largest batch. */
void cublas_bounds(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes) {
    (void)dev;
    if (partial_rows) *partial_rows = 1;
    if (ws_bytes) *ws_bytes = y_bytes(p);
}

mg_status cublas_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    (void)opt;
    if (!p || !lp)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas: plan called with a NULL %s", p ? "launch plan" : "problem");
    mg_status st = cublas_supports(p, dev ? dev->sm : 0);
    if (st != MG_OK) return st;
    cublas_priv pp = {};
    pp.y_prec = p->prec == MG_PREC_BF16 ? MG_PREC_BF16 : MG_PREC_FP32;
    const char *what = "";
    if (mg_partial_len(p) == 0) {
        pp.step = STEP_NONE;
    } else if (p->m == 0 || p->n == 0) {
        return mg_set_error(MG_ERR_SHAPE, "cublas: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m, p->n,
                            p->max_dim);
    } else if (p->k == 0) {
        pp.step = STEP_ZERO;
        what = "K = 0: y = 0 by cudaMemsetAsync";
    } else {
        switch (p->prec) {
        case MG_PREC_FP32: pp.step = STEP_SGEMM; what = "cublasSgemm (default math, no TF32)"; break;
        case MG_PREC_TF32: pp.step = STEP_GEMMEX_TF32; what = "cublasGemmEx fp32, COMPUTE_32F_FAST_TF32"; break;
        default: pp.step = STEP_GEMMEX_BF16; what = "cublasGemmEx bf16 in/out, COMPUTE_32F"; break;
        }
    }
    pp.y_bytes = pp.step == STEP_NONE ? 0 : y_bytes(p);
    char summary[sizeof lp->summary];
    if (pp.step == STEP_NONE)
        snprintf(summary, sizeof summary, "cublas: empty output (M=%d, N=%d, max_dim %d), nothing to launch", p->m,
                 p->n, p->max_dim);
    else
        snprintf(summary, sizeof summary,
                 "cublas: %s into y (%d x %d %s, %.1f MiB), then bias + max into 1 partial row", what, p->m,
                 p->n, pp.y_prec == MG_PREC_BF16 ? "bf16" : "fp32", pp.y_bytes / 1048576.0);
    mg_plan_simple(lp, 1, pp.y_bytes, summary);
    memcpy(lp->priv.bytes, &pp, sizeof pp);
    return MG_OK;
}

mg_status cublas_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    (void)state;
    if (!lp || !io)
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas: launch called with a NULL %s", lp ? "io" : "launch plan");
    cublas_priv pp;
    memcpy(&pp, lp->priv.bytes, sizeof pp);
    if (pp.step == STEP_NONE) return MG_OK;            /* empty output: nothing to reduce */
    const mg_problem *p = &lp->p;
    const bool gemm = pp.step != STEP_ZERO;
    if (!io->b || !io->partial || (gemm && (!io->x || !io->w)))
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas: NULL pointer:%s%s%s%s", io->x || !gemm ? "" : " x",
                            io->w || !gemm ? "" : " W", io->b ? "" : " b", io->partial ? "" : " partial");
    if (!io->ws) return mg_set_error(MG_ERR_INVALID_ARG, "cublas: no workspace for y (%zu bytes)", pp.y_bytes);
    cublasHandle_t h = (cublasHandle_t)io->cublas;
    if (gemm && !h) return mg_set_error(MG_ERR_INVALID_ARG, "cublas: no cuBLAS handle");
    cudaStream_t s = (cudaStream_t)stream;
    void *y = io->ws;
    /* The handle is the plan's, already bound to the stream. Default math: no TF32 in SGEMM, so fp32 mode is exact
     * fp32 (the tf32 and bf16 calls choose their compute type explicitly). */
    if (gemm) MG_CUBLAS_TRY(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    const float one = 1.f, zero = 0.f;
    switch (pp.step) {
    case STEP_ZERO:
        /* y = x W^T is an empty sum: zero bits are +0.0 in fp32 and bf16. */
        MG_CUDA_TRY(cudaMemsetAsync(y, 0, pp.y_bytes, s));
        break;
    case STEP_SGEMM:
        MG_CUBLAS_TRY(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, (const float *)io->w, p->k,
                                  (const float *)io->x, p->k, &zero, (float *)y, p->n));
        break;
    case STEP_GEMMEX_TF32:
        MG_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, io->w, CUDA_R_32F, p->k, io->x,
                                   CUDA_R_32F, p->k, &zero, y, CUDA_R_32F, p->n, CUBLAS_COMPUTE_32F_FAST_TF32,
                                   CUBLAS_GEMM_DEFAULT));
        break;
    case STEP_GEMMEX_BF16:
        MG_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, io->w, CUDA_R_16BF, p->k,
                                   io->x, CUDA_R_16BF, p->k, &zero, y, CUDA_R_16BF, p->n, CUBLAS_COMPUTE_32F,
                                   CUBLAS_GEMM_DEFAULT));
        break;
    default:
        return mg_set_error(MG_ERR_INVALID_ARG, "cublas: launch plan has an unknown step %d (not made by cublas_plan?)",
                            pp.step);
    }
    /* y holds bf16 in the bf16 mode, float otherwise; b has the same element type. */
    return mg_bias_max(y, io->b, p->m, p->n, p->max_dim, (mg_precision)pp.y_prec, io->partial, stream);
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_cublas = {
    cublas_supports, cublas_bounds, cublas_plan, NULL, NULL, cublas_launch,
};
