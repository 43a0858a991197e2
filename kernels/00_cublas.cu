/* 00_cublas.cu: kernel 0, the BASELINE every other number is read against ("x cuBLAS").
 *
 * What a user would write without fusion: one cuBLAS GEMM materialises y = x W^T (M x N) in the workspace,
 * then a separate bias + max kernel (mg_bias_max, kernels/gpu_util.cu) reduces it into ONE partial row
 * (ntiles = 1), then the shared finalize. Per precision mode, the call PyTorch itself makes:
 *   fp32: cublasSgemm, CUBLAS_COMPUTE_32F with CUBLAS_DEFAULT_MATH (exact fp32 SIMT; TF32 off, torch's default)
 *   tf32: cublasGemmEx fp32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32 (torch with allow_tf32 = True)
 *   bf16: cublasGemmEx bf16 in, bf16 out, CUBLAS_COMPUTE_32F (torch's bf16 nn.Linear; y rounded to bf16)
 *
 * Layout: y is M x N row-major = N x M column-major, so the call is  y_cm = W_cm^T * x_cm  with
 *   A = W viewed column-major K x N (ld K), op T;  B = x viewed column-major K x M (ld K), op N;  C ld N.
 * K = 0: y = 0 by a memset (cuBLAS rejects lda = 0), then + b in mg_bias_max.
 * Measured (H200, headline, ANCHORS.md, GEMM alone): fp32 2.74 ms (50 TFLOP/s), tf32 0.351 ms, bf16 0.180 ms;
 * the separate bias + max pass over the 32 MiB y adds ~0.015 ms.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "gpu_util.h"
#include "cublas_util.cuh"
#include "mg_kernel.h"

namespace {

int cublas_partial_tiles(const mg_problem *p) { (void)p; return 1; }

/* y, M x N in the element type of the mode (bf16 output in the bf16 mode, as PyTorch). */
size_t cublas_workspace_bytes(const mg_problem *p) {
    return (size_t)p->m * (size_t)p->n * mg_elem_bytes(p->prec);
}

mg_status cublas_supports(const mg_problem *p, int sm) {
    (void)sm;
    if (p->prec != MG_PREC_FP32 && p->prec != MG_PREC_TF32 && p->prec != MG_PREC_BF16)
        return mg_set_error(MG_ERR_UNSUPPORTED, "cublas: unknown precision %d", (int)p->prec);
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "cublas: negative size (M=%d N=%d K=%d)", p->m, p->n, p->k);
    return MG_OK;
}

mg_status cublas_launch(mg_launch_args *a) {
    const mg_problem *p = &a->p;
    mg_status st = cublas_supports(p, 0);
    if (st != MG_OK) return st;
    a->ntiles = 1;
    if (mg_partial_len(p) == 0) return MG_OK;          /* empty output: nothing to reduce */
    if (p->m == 0 || p->n == 0)
        return mg_set_error(MG_ERR_SHAPE, "cublas: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m, p->n,
                            p->max_dim);
    if (!a->ws) return mg_set_error(MG_ERR_INVALID_ARG, "cublas: no workspace for y");
    cudaStream_t s = (cudaStream_t)a->stream;
    void *y = a->ws;

    if (p->k == 0) {
        /* y = x W^T is an empty sum: zero bits are +0.0 in fp32 and bf16. */
        MG_CUDA_TRY(cudaMemsetAsync(y, 0, cublas_workspace_bytes(p), s));
    } else {
        cublasHandle_t h = (cublasHandle_t)a->cublas;
        if (!h) return mg_set_error(MG_ERR_INVALID_ARG, "cublas: no cuBLAS handle");
        /* The handle is the plan's, already bound to the stream. Default math: no TF32 in SGEMM, so fp32 mode is
         * exact fp32 (the tf32 and bf16 calls choose their compute type explicitly). */
        MG_CUBLAS_TRY(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
        const float one = 1.f, zero = 0.f;
        switch (p->prec) {
        case MG_PREC_FP32:
            MG_CUBLAS_TRY(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, (const float *)a->w, p->k,
                                    (const float *)a->x, p->k, &zero, (float *)y, p->n));
            break;
        case MG_PREC_TF32:
            MG_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, a->w, CUDA_R_32F, p->k,
                                     a->x, CUDA_R_32F, p->k, &zero, y, CUDA_R_32F, p->n,
                                     CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
            break;
        case MG_PREC_BF16:
            MG_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, a->w, CUDA_R_16BF, p->k,
                                     a->x, CUDA_R_16BF, p->k, &zero, y, CUDA_R_16BF, p->n, CUBLAS_COMPUTE_32F,
                                     CUBLAS_GEMM_DEFAULT));
            break;
        default:
            return mg_set_error(MG_ERR_UNSUPPORTED, "cublas: unknown precision %d", (int)p->prec);
        }
    }
    /* y holds bf16 in the bf16 mode, float otherwise; b has the same element type. */
    const mg_precision y_prec = p->prec == MG_PREC_BF16 ? MG_PREC_BF16 : MG_PREC_FP32;
    return mg_bias_max(y, a->b, p->m, p->n, p->max_dim, y_prec, a->partial, a->stream);
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_cublas = {
    cublas_partial_tiles, cublas_workspace_bytes, cublas_supports, NULL, NULL, cublas_launch,
};
