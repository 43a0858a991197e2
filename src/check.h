/* check.h: the NaN-aware tolerance checker every correctness check goes through (CPU code).
 * Element i passes when: ref is NaN and out is NaN; or both are the same infinity; or both finite and
 * |out - ref| <= atol + rtol * |ref|  (the KernelBench convention; SEMANTICS.md).
 * A NaN where ref is finite, or a finite value where ref is NaN, fails. */
#ifndef MG_CHECK_H
#define MG_CHECK_H
#include <stddef.h>
#include <stdint.h>

typedef struct mg_check_result {
    size_t n;               /* elements compared */
    size_t fails;           /* elements outside the tolerance (NaN mismatches included) */
    size_t nan_mismatch;    /* NaN in one of out/ref but not the other */
    double max_abs;         /* max |out - ref| over elements where both are finite */
    double max_rel;         /* max |out - ref| / |ref| over finite elements with ref != 0 */
    double p999_abs;        /* 99.9th percentile of |out - ref| over finite pairs */
    size_t first_bad;       /* index of the first failing element (n if none) */
    int pass;               /* fails == 0 */
} mg_check_result;

/* out is float. Returns r->pass. */
int mg_check_f32(const double *ref, const float *out, size_t n, double atol, double rtol, mg_check_result *r);
/* out is bf16 bits. */
int mg_check_bf16(const double *ref, const uint16_t *out, size_t n, double atol, double rtol, mg_check_result *r);
/* Bitwise comparison of two float arrays (NaNs equal when both NaN); returns the count that differ. */
size_t mg_bitwise_diff_f32(const float *a, const float *b, size_t n);

/* bf16 <-> float on the host (round to nearest even; NaN stays NaN). */
float mg_bf16_to_f32(uint16_t h);
uint16_t mg_f32_to_bf16(float f);
#endif
