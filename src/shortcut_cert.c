/* shortcut_cert.c: the host side of the max_dim 1 short-circuit's overflow certificate (src/shortcut.h).
 *
 * The formula lives in src/shortcut_cert.h (mg_cert_bound_ok) and is compiled both here and into
 * kernels/shortcut.cu, so what the CPU tests pin is exactly what the classify kernel evaluates per row.
 *
 * Why the margin is FLT_MAX / 4 (the full argument is in notes/shortcut.md):
 *   the certificate bounds every partial sum of row i by B = k * max|x_i| * max|W| + max|b| in exact arithmetic.
 *   The kernels compute with rounding, which can only grow magnitudes by
 *     - operand rounding: tf32 (u = 2^-11) or bf16 (u = 2^-8) per operand, and the bf16x3 split's hi + lo
 *       (|hi| + |lo| <= (1 + 2^-8)^2 |v|): each product term is at most (1 + 2^-8)^4 |x||w| < 1.016 |x||w|;
 *     - fp32 accumulation: (1 + 2^-23) per rounding (faithful, below one ulp; the round-to-nearest bound would be
 *       (1 + 2^-24)), over at most 4k + 3 roundings on any path of any summation order (k <= 2^20 is required):
 *       (1 + 2^-23)^(4k+3) <= exp(0.5 + 3 * 2^-23) < 1.65;
 *     - a bf16 store of y (kernel 0 in bf16 mode adds the bias after a bf16 GEMM output): (1 + 2^-8).
 *   Product of the factors: < 1.69, so every intermediate is below 1.69 * FLT_MAX / 4 < 0.43 * FLT_MAX: no overflow,
 *   with 2.3x to spare for tensor-core internals the model misses. Each of max|x|, max|W|, max|b| is also capped at
 *   FLT_MAX / 4 so that rounding a single operand to tf32/bf16 can never produce inf (x = 3.4e38 with a tiny W
 *   passes the product test but not the operand cap). The test is evaluated in double (no overflow: < 2^273).
 */
#include "shortcut.h"
#include "shortcut_cert.h"

int mg_shortcut_bound_ok(double k, double max_abs_x, double max_abs_w, double max_abs_b) {
    return mg_cert_bound_ok(k, max_abs_x, max_abs_w, max_abs_b);
}
