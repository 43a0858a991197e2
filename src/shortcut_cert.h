/* shortcut_cert.h: the overflow certificate of the max_dim 1 short-circuit as ONE inline formula, compiled for the
 * host (src/shortcut_cert.c: mg_shortcut_bound_ok, the CPU-tested entry point) and for the device
 * (kernels/shortcut.cu: the per-row test in mg_shortcut_classify), so the two cannot drift apart.
 *
 * Claim: if every entry of x row i, W and b is finite and
 *     k <= MG_CERT_K_MAX,  max|x_i|, max|W|, max|b| <= MG_CERT_LIMIT,  k * max|x_i| * max|W| + max|b| <= MG_CERT_LIMIT
 * (MG_CERT_LIMIT = FLT_MAX / 4, evaluated in double so the test itself cannot overflow), then every intermediate of
 * y[i, j] = sum_k x[i,k] W[j,k] + b[j], in any kernel of the registry (fp32 SIMT, tf32, bf16, bf16x3 split, cuBLAS,
 * any summation order), stays below 0.43 * FLT_MAX: y row i is finite, m_i - m_i = +0.0 and the output is +0.0,
 * bit for bit what the full computation writes. The margin argument (src/shortcut_cert.c and notes/shortcut.md):
 *   operand rounding   tf32 u = 2^-11, bf16 u = 2^-8 per operand; bf16 hi/lo split: |hi| + |lo| <= (1 + 2^-8)^2 |v|;
 *                      so every product term <= (1 + 2^-8)^4 |x||w| < 1.016 |x||w| (4 products per k at most);
 *   accumulation       every rounded fp32 add, FMA or product satisfies |fl(a + b)| <= (|a| + |b|)(1 + 2^-23)
 *                      (faithful rounding: error below one ulp <= 2^-23 |result|; truncating tensor-core accumulation
 *                      only shrinks magnitudes); any summation tree over the <= 4k + 1 terms (4 product terms per k,
 *                      the bias) has at most n = 4k + 3 roundings on a path (4k adds, one product rounding, one
 *                      split-K style merge): growth <= (1 + 2^-23)^n <= exp(n 2^-23) < 1.65 for k <= 2^20;
 *   bf16 y             kernel 0 in bf16 mode stores y as bf16 before adding b: one more (1 + 2^-8) factor;
 *   double arithmetic  of the test itself: relative 2^-52, negligible;
 *   total              1.016 * 1.65 * 1.004 = 1.69 < 4: intermediates <= 1.69 * FLT_MAX / 4 < 0.43 FLT_MAX, leaving
 *                      a further 2.3x for anything the hardware does that the model above misses.
 * The per-operand caps matter when the product is small but one factor is near FLT_MAX: rounding such a value to
 * tf32 or bf16 could give inf (the split kernels saturate, cuBLAS tf32 would not), so those rows are computed.
 * Denormals and -0.0 are finite and certify like any other value.
 */
#ifndef MG_SHORTCUT_CERT_H
#define MG_SHORTCUT_CERT_H

#include <float.h>

#ifdef __CUDACC__
#define MG_CERT_HD __host__ __device__ __forceinline__
#else
#define MG_CERT_HD static inline
#endif

/* FLT_MAX / 4 = 0x1.fffffep+125, exact in double. */
#define MG_CERT_LIMIT (0.25 * (double)FLT_MAX)
/* Longest reduction the accumulation-growth argument covers (2^20); longer rows go to the full computation. */
#define MG_CERT_K_MAX 1048576.0

/* Rounded double multiply and add, never contracted into an FMA, so host and device compute the same bits
 * (gcc -std=c11 does not contract; nvcc would without the intrinsics). */
MG_CERT_HD double mg_cert_mul(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
MG_CERT_HD double mg_cert_add(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

/* 1 when a row with these statistics certainly has a finite y row (see the claim above); 0 otherwise, including
 * for NaN, infinite or negative arguments (every comparison is written so that NaN fails it). */
MG_CERT_HD int mg_cert_bound_ok(double k, double max_abs_x, double max_abs_w, double max_abs_b) {
    if (!(k >= 0.0 && k <= MG_CERT_K_MAX)) return 0;
    if (!(max_abs_x >= 0.0 && max_abs_x <= MG_CERT_LIMIT)) return 0;
    if (!(max_abs_w >= 0.0 && max_abs_w <= MG_CERT_LIMIT)) return 0;
    if (!(max_abs_b >= 0.0 && max_abs_b <= MG_CERT_LIMIT)) return 0;
    /* Below 2^20 * 2^126 * 2^126 < 2^273: no overflow in double. */
    const double bound = mg_cert_add(mg_cert_mul(mg_cert_mul(k, max_abs_x), max_abs_w), max_abs_b);
    return bound <= MG_CERT_LIMIT;
}

#endif /* MG_SHORTCUT_CERT_H */
