/* split.h: fp32 -> bf16 hi/lo splitting for the split-precision (bf16x3) kernels (kernels/split.cu).
 * hi = bf16_rn(v), lo = bf16_rn(v - hi). The destination has row stride ld >= cols; columns [cols, ld) are
 * written as zero (padding lets TMA use 16-byte aligned rows for any K). NaN/inf: hi carries it, lo is 0
 * for inf (v - hi would be NaN) and NaN for NaN. */
#ifndef MG_SPLIT_H
#define MG_SPLIT_H
#include <stdint.h>
#include "maxgemm.h"
#ifdef __cplusplus
extern "C" {
#endif
mg_status mg_split_bf16(const float *src, int64_t rows, int64_t cols, int64_t ld, uint16_t *hi, uint16_t *lo,
                        void *stream);
/* Sets *has_inf to 1 when any of the count floats is +inf or -inf (NaN does not count: NaN in W gives NaN
 * products in every scheme, as in fp32). Synchronous on stream (called once per mg_set_weights). */
mg_status mg_has_inf_f32(const float *src, size_t count, int *has_inf, void *stream);
#ifdef __cplusplus
}
#endif
#endif
