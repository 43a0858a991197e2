/* shortcut.h: the exact max_dim == 1 short-circuit (kernels/shortcut.cu, certificate arithmetic in src/shortcut_cert.c).
 *
 * For max_dim 1 the output row i is +0.0 when the y row is finite, NaN otherwise (SEMANTICS.md). With the weight
 * statistics taken once in mg_set_weights and one pass over x per call, every row is classified:
 *   MG_ROW_ZERO      all of x row i, W and b finite, and the overflow bound holds  -> out[i] = +0.0
 *   MG_ROW_NAN       x row i holds a NaN or +-inf, or W/b hold a value that makes every y NaN/+inf -> NaN
 *   MG_ROW_COMPUTE   neither can be decided cheaply (overflow possible, or -inf/+-inf in W or b):
 *                    the row is computed by the plan's fused kernel on the gathered rows.
 */
#ifndef MG_SHORTCUT_H
#define MG_SHORTCUT_H
#include <stdint.h>
#include "maxgemm.h"
#ifdef __cplusplus
extern "C" {
#endif
enum { MG_ROW_ZERO = 0, MG_ROW_NAN = 1, MG_ROW_COMPUTE = 2 };

/* Weight statistics, device-resident (MG_WSTATS_FLOATS floats), computed by mg_shortcut_weight_stats. */
#define MG_WSTATS_FLOATS 4
/* [0] max|W| over finite entries, [1] max|b| over finite entries, [2] weight class: 0 all finite,
 * 1 every y is NaN or +inf (NaN in W or b, or +inf in b) -> all rows NaN, 2 other non-finite -> rows need compute. */
mg_status mg_shortcut_weight_stats(const void *W, const void *b, int64_t n, int64_t k, mg_precision prec,
                                   float *d_wstats, void *stream);

/* The certificate on the host side (also used on the device by the same formula): returns 1 when
 * K * max_abs_x * max_abs_w + max_abs_b is safely below FLT_MAX (see shortcut_cert.c for the margin). */
int mg_shortcut_bound_ok(double k, double max_abs_x, double max_abs_w, double max_abs_b);

/* One pass over x (M x K): writes out[i] = +0.0 (MG_ROW_ZERO) or NaN (MG_ROW_NAN) directly (float or bf16),
 * appends MG_ROW_COMPUTE rows to d_rows (ascending order) and their count to *d_count (device int, zeroed by this call). */
mg_status mg_shortcut_classify(const void *x, int64_t m, int64_t k, mg_precision prec, const float *d_wstats,
                               void *out, int *d_rows, int *d_count, void *stream);
/* Gathers rows d_rows[0..count) of x (M x K) into xg (count x K, same type). */
mg_status mg_shortcut_gather(const void *x, int64_t k, mg_precision prec, const int *d_rows, int count, void *xg,
                             void *stream);
/* Scatters outg[r] into out[d_rows[r]] for r < count. */
mg_status mg_shortcut_scatter(const void *outg, mg_precision prec, const int *d_rows, int count, void *out,
                              void *stream);
#ifdef __cplusplus
}
#endif
#endif
