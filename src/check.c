/* check.c: the NaN-aware tolerance checker (see check.h for the pass rule) and host bf16 conversions.
 *
 * Statistics (max_abs, max_rel, p999_abs) are taken over pairs where both ref and out are finite; non-finite
 * pairs only decide pass/fail. p999_abs is the nearest-rank 99.9th percentile of a sorted copy of those
 * differences (if that copy cannot be allocated, max_abs is reported: an upper bound, never an understatement).
 */
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

float mg_bf16_to_f32(uint16_t h) {
    const uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

uint16_t mg_f32_to_bf16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
        /* NaN: keep sign and the top payload bits, force the quiet bit so a payload that lived only in the
         * low 16 bits cannot truncate to the infinity pattern. */
        return (uint16_t)((bits >> 16) | 0x0040u);
    }
    /* Round to nearest, ties to even: add 0x7fff plus the lowest kept bit, then truncate. Finite values past
     * the largest bf16 round up to infinity, as IEEE rounding does. */
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One element: returns 1 if it passes; updates the statistics of r and appends finite differences to diffs. */
static int check_one(double ref, double out, double atol, double rtol, mg_check_result *r, double *diffs,
                     size_t *ndiff) {
    const int rn = isnan(ref), on = isnan(out);
    if (rn || on) {
        if (rn && on) return 1;
        r->nan_mismatch++;
        return 0;
    }
    if (isinf(ref) || isinf(out)) return ref == out; /* the same infinity passes; anything else fails */
    const double d = fabs(out - ref);
    if (d > r->max_abs) r->max_abs = d;
    if (ref != 0.0) {
        const double rel = d / fabs(ref);
        if (rel > r->max_rel) r->max_rel = rel;
    }
    if (diffs) diffs[(*ndiff)++] = d;
    return d <= atol + rtol * fabs(ref);
}

/* out_f32 or out_bf16 (exactly one non-NULL when n > 0). */
static int check_impl(const double *ref, const float *out_f32, const uint16_t *out_bf16, size_t n, double atol,
                      double rtol, mg_check_result *res) {
    mg_check_result r;
    memset(&r, 0, sizeof r);
    r.n = n;
    r.first_bad = n;
    double *diffs = n ? malloc(n * sizeof *diffs) : NULL;
    size_t ndiff = 0;
    for (size_t i = 0; i < n; i++) {
        const double o = out_f32 ? (double)out_f32[i] : (double)mg_bf16_to_f32(out_bf16[i]);
        if (!check_one(ref[i], o, atol, rtol, &r, diffs, &ndiff)) {
            if (r.fails == 0) r.first_bad = i;
            r.fails++;
        }
    }
    if (diffs && ndiff > 0) {
        qsort(diffs, ndiff, sizeof *diffs, cmp_double);
        /* nearest rank: the smallest value with at least 99.9 % of the differences at or below it */
        size_t rank = (size_t)ceil(0.999 * (double)ndiff);
        if (rank < 1) rank = 1;
        if (rank > ndiff) rank = ndiff;
        r.p999_abs = diffs[rank - 1];
    } else if (!diffs) {
        r.p999_abs = r.max_abs;
    }
    free(diffs);
    r.pass = r.fails == 0;
    if (res) *res = r;
    return r.pass;
}

int mg_check_f32(const double *ref, const float *out, size_t n, double atol, double rtol, mg_check_result *r) {
    return check_impl(ref, out, NULL, n, atol, rtol, r);
}

int mg_check_bf16(const double *ref, const uint16_t *out, size_t n, double atol, double rtol, mg_check_result *r) {
    return check_impl(ref, NULL, out, n, atol, rtol, r);
}

size_t mg_bitwise_diff_f32(const float *a, const float *b, size_t n) {
    size_t diff = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) && isnan(b[i])) continue;
        uint32_t x, y;
        memcpy(&x, &a[i], sizeof x);
        memcpy(&y, &b[i], sizeof y);
        diff += x != y;
    }
    return diff;
}
