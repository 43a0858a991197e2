/* test_check.c (suite "check"): the NaN-aware tolerance checker and the host bf16 conversions. CPU only. */
#include "test_common.h"

#include <float.h>
#include <stdlib.h>

static mg_check_result one(double ref, float out, double atol, double rtol) {
    mg_check_result r;
    mg_check_f32(&ref, &out, 1, atol, rtol, &r);
    return r;
}

Test(check, nan_vs_nan_passes) {
    mg_check_result r = one(NAN, NAN, 1e-4, 1e-4);
    cr_assert(r.pass);
    cr_assert_eq(r.fails, 0);
    cr_assert_eq(r.nan_mismatch, 0);
    cr_assert_eq(r.first_bad, 1);
}

Test(check, nan_vs_finite_fails_both_ways) {
    mg_check_result r = one(NAN, 0.0f, 1e30, 1e30);
    cr_assert(!r.pass, "NaN reference, finite output must fail whatever the tolerance");
    cr_assert_eq(r.nan_mismatch, 1);
    cr_assert_eq(r.first_bad, 0);
    r = one(0.0, NAN, 1e30, 1e30);
    cr_assert(!r.pass, "finite reference, NaN output must fail whatever the tolerance");
    cr_assert_eq(r.nan_mismatch, 1);
    r = one(INFINITY, NAN, 1, 1);
    cr_assert(!r.pass);
    r = one(NAN, INFINITY, 1, 1);
    cr_assert(!r.pass);
}

Test(check, infinities) {
    cr_assert(one(INFINITY, INFINITY, 0, 0).pass);
    cr_assert(one(-INFINITY, -INFINITY, 0, 0).pass);
    cr_assert(!one(INFINITY, -INFINITY, 1e30, 1e30).pass);
    cr_assert(!one(INFINITY, FLT_MAX, 1e30, 1e30).pass);
    cr_assert(!one(1e300, INFINITY, 1e30, 1e30).pass);
    cr_assert(!one(0.0, INFINITY, 1e30, 1e30).pass);
    mg_check_result r = one(INFINITY, INFINITY, 0, 0);
    cr_assert_eq(r.max_abs, 0.0, "infinite pairs stay out of the statistics");
    cr_assert_eq(r.nan_mismatch, 0);
}

Test(check, tolerance_boundary) {
    /* |out - ref| <= atol + rtol * |ref|, all values exact in binary: bar = 0.25 + 0.25 * 1 = 0.5 */
    cr_assert(one(1.0, 1.5f, 0.25, 0.25).pass, "exactly on the bar passes");
    cr_assert(one(1.0, 0.5f, 0.25, 0.25).pass);
    cr_assert(!one(1.0, nextafterf(1.5f, 2.0f), 0.25, 0.25).pass, "one ulp past the bar fails");
    cr_assert(!one(1.0, nextafterf(0.5f, 0.0f), 0.25, 0.25).pass);
    /* rtol scales with |ref|, also for negative ref: bar = 0.25 + 0.25 * 2 = 0.75 */
    cr_assert(one(-2.0, -2.75f, 0.25, 0.25).pass);
    cr_assert(!one(-2.0, nextafterf(-2.75f, -3.0f), 0.25, 0.25).pass);
    /* atol alone at ref = 0 */
    cr_assert(one(0.0, 0.25f, 0.25, 100).pass);
    cr_assert(!one(0.0, nextafterf(0.25f, 1.0f), 0.25, 100).pass);
    /* the project's fp32 bar */
    cr_assert(one(0.5, 0.5f + 1e-4f, 1e-4, 1e-4).pass);
    cr_assert(!one(0.5, 0.5f + 2e-4f, 1e-4, 1e-4).pass);
}

/* The accuracy bars every GPU check reads through mg_precision_tolerance (test_gpu.c, test_determinism.c): pinned
 * here to SEMANTICS.md's table (atol = rtol: fp32 1e-4, tf32 2e-3, bf16 1e-2), so that loosening one in the library
 * fails a test instead of quietly widening what every kernel check accepts. */
Test(check, tolerances_are_the_semantics_bars) {
    cr_assert_eq(mg_precision_tolerance(MG_PREC_FP32), 1e-4);
    cr_assert_eq(mg_precision_tolerance(MG_PREC_TF32), 2e-3);
    cr_assert_eq(mg_precision_tolerance(MG_PREC_BF16), 1e-2);
    cr_assert_eq(mg_precision_tolerance((mg_precision)-1), 0.0, "an unknown precision has no bar (nothing passes)");
    cr_assert_eq(mg_precision_tolerance(MG_PREC_COUNT), 0.0);
}

Test(check, statistics_and_first_bad) {
    const double ref[] = {1.0, 2.0, NAN, 4.0, 0.0, -8.0};
    const float out[] = {1.0f, 2.5f, NAN, 3.0f, 0.125f, -8.0f};
    mg_check_result r;
    int pass = mg_check_f32(ref, out, 6, 0.1, 0.1, &r);
    cr_assert(!pass);
    cr_assert_eq(r.pass, 0);
    cr_assert_eq(r.n, 6);
    /* element 1: 0.5 > 0.1 + 0.2; element 3: 1 > 0.5; element 4: 0.125 > 0.1 */
    cr_assert_eq(r.fails, 3);
    cr_assert_eq(r.first_bad, 1);
    cr_assert_eq(r.nan_mismatch, 0);
    cr_assert_eq(r.max_abs, 1.0);
    cr_assert_eq(r.max_rel, 0.25, "max_rel %.17g (ref = 0 excluded)", r.max_rel);
}

Test(check, p999_nearest_rank) {
    enum { N = 1000 };
    double *ref = calloc(N, sizeof *ref);
    float *out = malloc(N * sizeof *out);
    cr_assert(ref && out);
    for (int i = 0; i < N; i++) out[(i * 7919) % N] = (float)i; /* a permutation: diffs 0 .. 999, unsorted */
    mg_check_result r;
    cr_assert(mg_check_f32(ref, out, N, 1000, 0, &r));
    cr_assert_eq(r.max_abs, 999.0);
    /* nearest rank ceil(0.999 * 1000) = 999 -> the 999th smallest difference, 998 */
    cr_assert_eq(r.p999_abs, 998.0, "p999 %.17g", r.p999_abs);
    /* NaN and inf pairs are excluded from the percentile: out[0] held the difference 0; without it the 999 finite
     * differences are 1 .. 999 and the nearest rank ceil(0.999 * 999) = 999 is 999 (998 if the NaN pair counted) */
    out[0] = NAN;
    ref[0] = NAN;
    cr_assert(mg_check_f32(ref, out, N, 1000, 0, &r));
    cr_assert_eq(r.fails, 0);
    cr_assert_eq(r.max_abs, 999.0);
    cr_assert_eq(r.p999_abs, 999.0, "p999 %.17g: the NaN pair was counted", r.p999_abs);
    free(ref);
    free(out);
}

Test(check, empty_input) {
    mg_check_result r;
    cr_assert(mg_check_f32(NULL, NULL, 0, 0, 0, &r));
    cr_assert_eq(r.n, 0);
    cr_assert_eq(r.first_bad, 0);
    cr_assert_eq(r.p999_abs, 0.0);
}

Test(check, bf16_known_values) {
    cr_assert_eq(mg_f32_to_bf16(1.0f), 0x3f80);
    cr_assert_eq(mg_f32_to_bf16(-2.0f), 0xc000);
    cr_assert_eq(mg_f32_to_bf16(0.0f), 0x0000);
    cr_assert_eq(mg_f32_to_bf16(-0.0f), 0x8000);
    cr_assert_eq(mg_f32_to_bf16(INFINITY), 0x7f80);
    cr_assert_eq(mg_f32_to_bf16(-INFINITY), 0xff80);
    cr_assert_eq(mg_bf16_to_f32(0x3f80), 1.0f);
    cr_assert_eq(mg_bf16_to_f32(0x4049), 3.140625f);
    cr_assert_eq(mg_bf16_to_f32(0x7f7f), 0x1.fep127f); /* the largest finite bf16 */
}

Test(check, bf16_round_to_nearest_even_ties) {
    /* 1 + 2^-8 lies halfway between 1 (0x3f80, even) and 1 + 2^-7 (0x3f81): ties go to even */
    cr_assert_eq(mg_f32_to_bf16(1.0f + 0x1p-8f), 0x3f80);
    /* 1 + 3 * 2^-8 lies halfway between 0x3f81 (odd) and 0x3f82 (even) */
    cr_assert_eq(mg_f32_to_bf16(1.0f + 3 * 0x1p-8f), 0x3f82);
    /* just above / below a tie rounds to nearest */
    cr_assert_eq(mg_f32_to_bf16(1.0f + 0x1p-8f + 0x1p-20f), 0x3f81);
    cr_assert_eq(mg_f32_to_bf16(1.0f + 0x1p-8f - 0x1p-20f), 0x3f80);
    cr_assert_eq(mg_f32_to_bf16(-(1.0f + 0x1p-8f)), 0xbf80);
    cr_assert_eq(mg_f32_to_bf16(-(1.0f + 3 * 0x1p-8f)), 0xbf82);
    /* subnormals tie too: bit pattern 0x00018000 is halfway between 0x0001 and 0x0002 */
    float f;
    uint32_t bits = 0x00018000u;
    memcpy(&f, &bits, sizeof f);
    cr_assert_eq(mg_f32_to_bf16(f), 0x0002);
    bits = 0x00008000u;
    memcpy(&f, &bits, sizeof f);
    cr_assert_eq(mg_f32_to_bf16(f), 0x0000);
    /* past the largest bf16 rounds to infinity; exactly halfway to it (0x7f7f8000) ties to even = inf */
    cr_assert_eq(mg_f32_to_bf16(FLT_MAX), 0x7f80);
    bits = 0x7f7f7fffu;
    memcpy(&f, &bits, sizeof f);
    cr_assert_eq(mg_f32_to_bf16(f), 0x7f7f);
}

Test(check, bf16_nan_preserved) {
    const uint32_t nans[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fbadbadu, 0xff80ffffu, 0x7fffffffu};
    for (size_t i = 0; i < sizeof nans / sizeof nans[0]; i++) {
        float f;
        memcpy(&f, &nans[i], sizeof f);
        const uint16_t h = mg_f32_to_bf16(f);
        cr_assert(isnan(mg_bf16_to_f32(h)), "NaN 0x%08x became 0x%04x", nans[i], h);
        cr_assert_eq(h >> 15, nans[i] >> 31, "sign of NaN 0x%08x lost", nans[i]);
    }
}

Test(check, bf16_round_trip_all_patterns) {
    for (uint32_t h = 0; h < 0x10000u; h++) {
        const float f = mg_bf16_to_f32((uint16_t)h);
        const uint16_t back = mg_f32_to_bf16(f);
        if (isnan(f))
            cr_assert(isnan(mg_bf16_to_f32(back)), "0x%04x", h);
        else
            cr_assert_eq(back, h, "0x%04x -> %a -> 0x%04x", h, (double)f, back);
    }
}

Test(check, bf16_checker) {
    const double ref[] = {1.0, NAN, 3.140625, INFINITY, 2.0};
    const uint16_t out[] = {0x3f80, 0x7fc0, 0x4049, 0x7f80, 0x4001};
    mg_check_result r;
    cr_assert(!mg_check_bf16(ref, out, 5, 1e-3, 1e-3, &r));
    cr_assert_eq(r.fails, 1);
    cr_assert_eq(r.first_bad, 4); /* 0x4001 = 2.015625: off by 0.0156 */
    cr_assert(mg_check_bf16(ref, out, 5, 1e-2, 1e-2, &r));
}

Test(check, bitwise_diff) {
    const float a[] = {1.0f, 0.0f, NAN, 2.0f, INFINITY};
    float b[] = {1.0f, -0.0f, NAN, nextafterf(2.0f, 3.0f), INFINITY};
    uint32_t other_nan = 0xffc01234u;
    memcpy(&b[2], &other_nan, sizeof other_nan); /* different NaN bits still count as equal */
    cr_assert_eq(mg_bitwise_diff_f32(a, b, 5), 2); /* +0 vs -0 and the ulp */
    cr_assert_eq(mg_bitwise_diff_f32(a, a, 5), 0);
}
