/* 05_cublas_bf16x3.cu: kernel 5, a BASELINE: fp32-accurate GEMM from three cuBLAS bf16 GEMMs (split precision),
 * the way "a user who knows the trick" would build it from library calls.
 *
 * Technique: every fp32 operand v is split as v = hi + lo (+ a 2^-17 relative remainder), hi and lo bf16
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
 *   A = W part viewed column-major K x N (ld = prep->ld), op T;  B = x part viewed column-major K x M (ld = xld), op N.
 * Weight side (prepare): W_hi, W_lo in prep->buf[0], buf[1] with row stride ld = K rounded up to 8 (16-byte rows).
 * Per call (launch): x_hi, x_lo split into the workspace (same padding), y after them.
 * Measured (H200, headline, max_dim 0, from ANCHORS.md with plain cuBLAS calls): 0.52 ms, max abs error 1.4e-5.
 */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdlib.h>

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

/* 1 row, or the exact fallback's rows when W holds +-inf (see mg_prepared.exact_fallback). */
int bf16x3_partial_tiles(const mg_problem *p) {
    const int naive = mg_ops_naive.partial_tiles(p);
    return naive > 1 ? naive : 1;
}

size_t bf16x3_workspace_bytes(const mg_problem *p) { return y_bytes(p) + 2 * xpart_bytes(p); }

mg_status bf16x3_supports(const mg_problem *p, int sm) {
    (void)sm;
    if (p->prec != MG_PREC_FP32)
        return mg_set_error(MG_ERR_UNSUPPORTED, "cublas_bf16x3 implements fp32 mode only (it IS the fp32-accurate "
                                                "split scheme); use cublas or a tensor-core kernel for %s",
                            mg_precision_name(p->prec));
    return MG_OK;
}

void bf16x3_release(mg_prepared *prep) {
    for (int i = 0; i < 4; i++) {
        if (prep->buf[i]) cudaFree(prep->buf[i]);   /* release cannot report; a failed free leaks at worst */
        prep->buf[i] = NULL;
        prep->bytes[i] = 0;
    }
}

mg_status bf16x3_prepare(const mg_problem *p, const void *w, const void *b, mg_prepared *out, void *stream) {
    (void)b;
    mg_status st = bf16x3_supports(p, 0);
    if (st != MG_OK) return st;
    const int64_t ld = padded_ld(p->k);
    out->ld = (int)ld;
    if (p->n == 0 || ld == 0) return MG_OK;          /* nothing to split; launch never reads W */
    int has_inf = 0;
    if ((st = mg_has_inf_f32((const float *)w, (size_t)p->n * (size_t)p->k, &has_inf, stream)) != MG_OK) return st;
    out->exact_fallback = has_inf;
    if (has_inf) return MG_OK;                        /* launch runs the exact SIMT kernel on W itself */
    const size_t bytes = (size_t)p->n * (size_t)ld * 2;
    for (int i = 0; i < 2; i++) {
        cudaError_t e = cudaMalloc(&out->buf[i], bytes);
        if (e != cudaSuccess) {
            bf16x3_release(out);
            return mg_set_error(e == cudaErrorMemoryAllocation ? MG_ERR_OUT_OF_MEMORY : MG_ERR_CUDA,
                                "cublas_bf16x3: cudaMalloc of %zu bytes for W %s: %s", bytes, i ? "lo" : "hi",
                                cudaGetErrorString(e));
        }
        out->bytes[i] = bytes;
    }
    st = mg_split_bf16((const float *)w, p->n, p->k, ld, (uint16_t *)out->buf[0], (uint16_t *)out->buf[1], stream);
    if (st != MG_OK) bf16x3_release(out);
    return st;
}

mg_status bf16x3_launch(mg_launch_args *a) {
    const mg_problem *p = &a->p;
    mg_status st = bf16x3_supports(p, 0);
    if (st != MG_OK) return st;
    if (a->prep && a->prep->exact_fallback) return mg_ops_naive.launch(a);
    a->ntiles = 1;
    const int len = mg_partial_len(p);
    if (len == 0) return MG_OK;                       /* empty output: nothing to reduce */
    if (p->m == 0 || p->n == 0)
        return mg_set_error(MG_ERR_SHAPE, "cublas_bf16x3: max over an empty dimension (M=%d, N=%d, max_dim %d)",
                            p->m, p->n, p->max_dim);
    if (!a->ws) return mg_set_error(MG_ERR_INVALID_ARG, "cublas_bf16x3: no workspace");
    cudaStream_t s = (cudaStream_t)a->stream;
    float *y = (float *)a->ws;
    uint16_t *x_hi = (uint16_t *)((char *)a->ws + y_bytes(p));
    uint16_t *x_lo = (uint16_t *)((char *)a->ws + y_bytes(p) + xpart_bytes(p));
    const int64_t ld = padded_ld(p->k);

    if (p->k == 0) {
        /* y = 0 (+ bias in mg_bias_max). cuBLAS would reject lda = 0. */
        MG_CUDA_TRY(cudaMemsetAsync(y, 0, (size_t)p->m * p->n * sizeof(float), s));
    } else {
        if (!a->prep || !a->prep->buf[0] || !a->prep->buf[1] || a->prep->ld != ld)
            return mg_set_error(MG_ERR_NO_WEIGHTS, "cublas_bf16x3: W was not prepared for this problem");
        st = mg_split_bf16((const float *)a->x, p->m, p->k, ld, x_hi, x_lo, a->stream);
        if (st != MG_OK) return st;
        cublasHandle_t h = (cublasHandle_t)a->cublas;
        if (!h) return mg_set_error(MG_ERR_INVALID_ARG, "cublas_bf16x3: no cuBLAS handle");
        const void *w_hi = a->prep->buf[0], *w_lo = a->prep->buf[1];
        const float one = 1.f, zero = 0.f;
        /* Small terms first, main term last (see the header). The handle is bound to the stream by the plan
         * and uses host pointer mode (the plan's default). */
        struct { const void *wp, *xp; const float *beta; } terms[3] = {
            {w_hi, x_lo, &zero},   /* x_lo * W_hi^T */
            {w_lo, x_hi, &one},    /* x_hi * W_lo^T */
            {w_hi, x_hi, &one},    /* x_hi * W_hi^T */
        };
        for (int t = 0; t < 3; t++)
            MG_CUBLAS_TRY(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, p->n, p->m, p->k, &one, terms[t].wp,
                                           CUDA_R_16BF, (int)ld, terms[t].xp, CUDA_R_16BF, (int)ld, terms[t].beta,
                                           y, CUDA_R_32F, p->n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    }
    return mg_bias_max(y, a->b, p->m, p->n, p->max_dim, MG_PREC_FP32, a->partial, a->stream);
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_cublas_bf16x3 = {
    bf16x3_partial_tiles, bf16x3_workspace_bytes, bf16x3_supports, bf16x3_prepare, bf16x3_release, bf16x3_launch,
};
