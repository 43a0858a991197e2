/* test_reference.c (suite "reference"): the CPU fp64 reference against hand-computed cases, line by line
 * SEMANTICS.md. Everything here runs without a GPU. */
#include "test_common.h"

#include "reference.h"
#include "rng.h"

#include <stdlib.h>

/* The hand example, M = 2, N = 3, K = 2:
 *   x = [1 2; 3 -1]   W = [1 0; 0 1; 1 1]   b = [0.5 -1 0]
 *   y = x W^T + b = [1.5 1 3; 3.5 -2 2]
 *   max_dim 1: m = [3, 3.5]           -> out = [gelu(0), gelu(0)] = [+0, +0]
 *   max_dim 0: c = [3.5, 1, 3], mu = 2.5 -> out = [gelu(1), gelu(-1.5), gelu(0.5)] */
static const double HX[] = {1, 2, 3, -1};
static const double HW[] = {1, 0, 0, 1, 1, 1};
static const double HB[] = {0.5, -1, 0};
static const double HY[] = {1.5, 1, 3, 3.5, -2, 2};
/* x Phi(x) with Phi from the normal table: Phi(1) = 0.8413447460685429, Phi(-1.5) = 0.0668072012688581,
 * Phi(0.5) = 0.6914624612740131. */
#define GELU_1 0.8413447460685429
#define GELU_M1_5 (-1.5 * 0.0668072012688581)
#define GELU_0_5 (0.5 * 0.6914624612740131)

Test(reference, hand_example_max_dim_1) {
    double out[2] = {-7, -7};
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, 2, 1, out), MG_OK);
    MG_ASSERT_POS_ZERO(out[0]);
    MG_ASSERT_POS_ZERO(out[1]);
}

Test(reference, hand_example_max_dim_0) {
    double out[3] = {-7, -7, -7};
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, 2, 0, out), MG_OK);
    MG_ASSERT_CLOSE(out[0], GELU_1, 0, 1e-14);
    MG_ASSERT_CLOSE(out[1], GELU_M1_5, 0, 1e-14);
    MG_ASSERT_CLOSE(out[2], GELU_0_5, 0, 1e-14);
}

Test(reference, epilogue_matches_hand_y) {
    double o1[2], o0[3], r0[3];
    cr_assert_eq(mg_reference_epilogue(HY, 2, 3, 1, o1), MG_OK);
    MG_ASSERT_POS_ZERO(o1[0]);
    MG_ASSERT_POS_ZERO(o1[1]);
    cr_assert_eq(mg_reference_epilogue(HY, 2, 3, 0, o0), MG_OK);
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, 2, 0, r0), MG_OK);
    for (int j = 0; j < 3; j++) cr_assert_eq(o0[j], r0[j], "j=%d: %.17g vs %.17g", j, o0[j], r0[j]);
}

Test(reference, negative_dims_equal_positive) {
    double a[3], b[3];
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, 2, 0, a), MG_OK);
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, 2, -2, b), MG_OK);
    cr_assert_eq(memcmp(a, b, sizeof a), 0, "max_dim -2 differs from 0");
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, 2, 1, a), MG_OK);
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, 2, -1, b), MG_OK);
    cr_assert_eq(memcmp(a, b, 2 * sizeof a[0]), 0, "max_dim -1 differs from 1");
    cr_assert_eq(mg_reference_epilogue(HY, 2, 3, -2, a), MG_OK);
    cr_assert_eq(mg_reference_epilogue(HY, 2, 3, 0, b), MG_OK);
    cr_assert_eq(memcmp(a, b, sizeof a), 0);
}

/* W with all entries nonzero, so an infinite x entry gives an infinite (not NaN) product. */
static const double PW[] = {1, 2, 2, 1, 1, 1};

Test(reference, nan_row) {
    const double x[] = {NAN, 1, 3, -1};
    double o1[2], o0[3];
    cr_assert_eq(mg_reference(x, HW, HB, 2, 3, 2, 1, o1), MG_OK);
    MG_ASSERT_NAN(o1[0]);
    MG_ASSERT_POS_ZERO(o1[1]);
    /* max_dim 0: row 0 is in every column's reduction, so every c[j] and the output are NaN */
    cr_assert_eq(mg_reference(x, HW, HB, 2, 3, 2, 0, o0), MG_OK);
    for (int j = 0; j < 3; j++) MG_ASSERT_NAN(o0[j]);
}

Test(reference, nan_after_larger_values_still_propagates) {
    /* torch.max propagates NaN whatever its position; a fmax-style max would return 3 here */
    const double y[] = {3, NAN, 1};
    double o[1];
    cr_assert_eq(mg_reference_epilogue(y, 1, 3, 1, o), MG_OK);
    MG_ASSERT_NAN(o[0]);
}

Test(reference, pos_inf_row) {
    const double x[] = {INFINITY, 1, 3, -1};
    double o1[2], o0[3];
    cr_assert_eq(mg_reference(x, PW, HB, 2, 3, 2, 1, o1), MG_OK);
    MG_ASSERT_NAN(o1[0]); /* m = +inf, m - m = NaN */
    MG_ASSERT_POS_ZERO(o1[1]);
    cr_assert_eq(mg_reference(x, PW, HB, 2, 3, 2, 0, o0), MG_OK);
    for (int j = 0; j < 3; j++) MG_ASSERT_NAN(o0[j]); /* c = +inf everywhere, c - mu = inf - inf */
}

Test(reference, neg_inf_in_x) {
    const double x[] = {-INFINITY, 1, 3, -1};
    double o1[2], o0[3], only_row1[3];
    cr_assert_eq(mg_reference(x, PW, HB, 2, 3, 2, 1, o1), MG_OK);
    MG_ASSERT_NAN(o1[0]); /* m = -inf, -inf - -inf = NaN */
    MG_ASSERT_POS_ZERO(o1[1]);
    /* max_dim 0: a -inf row never wins a column max, so the result is that of row 1 alone */
    cr_assert_eq(mg_reference(x, PW, HB, 2, 3, 2, 0, o0), MG_OK);
    cr_assert_eq(mg_reference(x + 2, PW, HB, 1, 3, 2, 0, only_row1), MG_OK);
    for (int j = 0; j < 3; j++) {
        cr_assert(isfinite(o0[j]));
        cr_assert_eq(o0[j], only_row1[j], "j=%d", j);
    }
    /* row 1: y = [3 - 2 + 0.5, 6 - 1 - 1, 3 - 1 + 0] = [1.5, 4, 2], mean 2.5 */
    MG_ASSERT_CLOSE(o0[0], -1 * 0.15865525393145705, 0, 1e-14);
    MG_ASSERT_CLOSE(o0[1], 1.5 * 0.9331927987311419, 0, 1e-14);
    MG_ASSERT_CLOSE(o0[2], -0.5 * 0.3085375387259869, 0, 1e-14);
}

Test(reference, nan_in_bias) {
    const double b[] = {0.5, NAN, 0};
    double o1[2], o0[3];
    cr_assert_eq(mg_reference(HX, HW, b, 2, 3, 2, 1, o1), MG_OK);
    MG_ASSERT_NAN(o1[0]); /* column 1 is NaN in every row */
    MG_ASSERT_NAN(o1[1]);
    cr_assert_eq(mg_reference(HX, HW, b, 2, 3, 2, 0, o0), MG_OK);
    for (int j = 0; j < 3; j++) MG_ASSERT_NAN(o0[j]); /* c[1] = NaN poisons the mean */
}

Test(reference, zero_times_inf_is_nan) {
    /* IEEE: 0 * inf = NaN, as in the GPU GEMMs; x row 0 = [0, 1] against W row 0 = [inf, 0] */
    const double x[] = {0, 1, 1, 1};
    const double W[] = {INFINITY, 0, 0, 1, 1, 1};
    double o1[2];
    cr_assert_eq(mg_reference(x, W, HB, 2, 3, 2, 1, o1), MG_OK);
    MG_ASSERT_NAN(o1[0]);
    MG_ASSERT_NAN(o1[1]); /* row 1: 1 * inf = +inf wins the max -> inf - inf */
}

Test(reference, k_zero_is_bias_broadcast) {
    double o1[2], o0[3];
    /* K = 0: x and W hold no elements, NULL is fine */
    cr_assert_eq(mg_reference(NULL, NULL, HB, 2, 3, 0, 1, o1), MG_OK);
    MG_ASSERT_POS_ZERO(o1[0]);
    MG_ASSERT_POS_ZERO(o1[1]);
    cr_assert_eq(mg_reference(NULL, NULL, HB, 2, 3, 0, 0, o0), MG_OK);
    /* c = b = [0.5, -1, 0], mean -1/6: out = gelu([2/3, -5/6, 1/6]) */
    MG_ASSERT_CLOSE(o0[0], mg_gelu_exact(0.5 + 1.0 / 6), 0, 1e-15);
    MG_ASSERT_CLOSE(o0[0], 0.4983383083020514, 0, 1e-13);
    MG_ASSERT_CLOSE(o0[1], -0.1686069841363692, 0, 1e-13);
    MG_ASSERT_CLOSE(o0[2], 0.09436397210181727, 0, 1e-13);
}

Test(reference, gelu_known_values) {
    cr_assert_eq(mg_gelu_exact(0.0), 0.0);
    MG_ASSERT_CLOSE(mg_gelu_exact(1.0), 0.8413447460685429, 0, 1e-15);
    MG_ASSERT_CLOSE(mg_gelu_exact(-1.0), -0.15865525393145705, 0, 1e-15);
    MG_ASSERT_CLOSE(mg_gelu_exact(3.0), 3 * 0.9986501019683699, 0, 1e-15);
    MG_ASSERT_POS_ZERO(mg_gelu_exact(0.0));
    MG_ASSERT_NAN(mg_gelu_exact(NAN));
    /* torch evaluates x * 0.5 * (1 + erf(x / sqrt 2)): +inf stays +inf, -inf gives -inf * 0 = NaN */
    cr_assert(isinf(mg_gelu_exact(INFINITY)) && mg_gelu_exact(INFINITY) > 0);
    MG_ASSERT_NAN(mg_gelu_exact(-INFINITY));
}

Test(reference, nanmax_propagates) {
    MG_ASSERT_NAN(mg_nanmax(NAN, 1.0));
    MG_ASSERT_NAN(mg_nanmax(1.0, NAN));
    MG_ASSERT_NAN(mg_nanmax(-INFINITY, NAN));
    cr_assert_eq(mg_nanmax(1.0, 2.0), 2.0);
    cr_assert_eq(mg_nanmax(2.0, 1.0), 2.0);
    cr_assert_eq(mg_nanmax(-INFINITY, -INFINITY), -INFINITY);
    cr_assert_eq(mg_nanmax(-INFINITY, -1e308), -1e308);
}

Test(reference, empty_reductions_are_errors) {
    double o[4];
    cr_assert_eq(mg_reference(HX, HW, HB, 0, 3, 2, 0, o), MG_ERR_SHAPE);
    cr_assert_neq(strlen(mg_last_error()), 0, "mg_set_error message missing");
    cr_assert_eq(mg_reference(HX, HW, HB, 0, 3, 2, -2, o), MG_ERR_SHAPE);
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 0, 2, 1, o), MG_ERR_SHAPE);
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 0, 2, -1, o), MG_ERR_SHAPE);
    cr_assert_eq(mg_reference_epilogue(HY, 0, 3, 0, o), MG_ERR_SHAPE);
    cr_assert_eq(mg_reference_epilogue(HY, 2, 0, 1, o), MG_ERR_SHAPE);
    /* The other dimension empty is a valid, empty output, as in torch (0 x N max over dim 1 is 0 x 1). */
    cr_assert_eq(mg_reference(HX, HW, HB, 0, 3, 2, 1, o), MG_OK);
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 0, 2, 0, o), MG_OK);
    /* negative sizes */
    cr_assert_eq(mg_reference(HX, HW, HB, -1, 3, 2, 1, o), MG_ERR_SHAPE);
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, -1, 1, o), MG_ERR_SHAPE);
}

Test(reference, invalid_max_dim) {
    double o[3];
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, 2, 2, o), MG_ERR_MAX_DIM);
    cr_assert_neq(strlen(mg_last_error()), 0);
    cr_assert_eq(mg_reference(HX, HW, HB, 2, 3, 2, -3, o), MG_ERR_MAX_DIM);
    cr_assert_eq(mg_reference_epilogue(HY, 2, 3, 2, o), MG_ERR_MAX_DIM);
    int d = 7;
    cr_assert_eq(mg_normalize_max_dim(2, &d), MG_ERR_MAX_DIM);
    cr_assert_eq(mg_normalize_max_dim(-3, &d), MG_ERR_MAX_DIM);
    cr_assert_eq(mg_normalize_max_dim(-1, &d), MG_OK);
    cr_assert_eq(d, 1);
    cr_assert_eq(mg_normalize_max_dim(-2, &d), MG_OK);
    cr_assert_eq(d, 0);
    cr_assert_eq(mg_normalize_max_dim(0, &d), MG_OK);
    cr_assert_eq(d, 0);
    cr_assert_eq(mg_normalize_max_dim(1, &d), MG_OK);
    cr_assert_eq(d, 1);
}

/* Seed-like inputs: the fused reference equals the epilogue applied to an explicitly computed y, and max_dim 1
 * gives +0.0 for every (finite) row. */
Test(reference, seedlike_fused_matches_materialised) {
    enum { M = 7, N = 13, K = 9 };
    float xf[M * K], wf[N * K], bf[N];
    double x[M * K], w[N * K], b[N], y[M * N], r0[N], e0[N], r1[M];
    mg_test_seedlike_f32(xf, wf, bf, M, N, K, 42);
    mg_test_widen(xf, x, M * K, 0);
    mg_test_widen(wf, w, N * K, 0);
    mg_test_widen(bf, b, N, 0);
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += x[i * K + k] * w[j * K + k];
            y[i * N + j] = acc + b[j];
        }
    cr_assert_eq(mg_reference(x, w, b, M, N, K, 0, r0), MG_OK);
    cr_assert_eq(mg_reference_epilogue(y, M, N, 0, e0), MG_OK);
    for (int j = 0; j < N; j++) cr_assert_eq(r0[j], e0[j], "j=%d", j);
    /* the output of max_dim 0 has mean-subtracted inputs: some are negative, some positive */
    int neg = 0, pos = 0;
    for (int j = 0; j < N; j++) { neg += r0[j] < 0; pos += r0[j] > 0; }
    cr_assert(neg > 0 && pos > 0);
    cr_assert_eq(mg_reference(x, w, b, M, N, K, 1, r1), MG_OK);
    for (int i = 0; i < M; i++) MG_ASSERT_POS_ZERO(r1[i]);
}

/* mg_rng_s8 (the int8 ceiling's inputs, drawn on the GPU by mg_fill_s8): every byte in [-127, 127], both ends and
 * zero drawn, about uniformly (255 values: ~392 each in 100000 draws), and the streams differ. */
Test(rng, s8_range_and_spread) {
    int count[256] = {0}, same = 0;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        const int v = mg_rng_s8(42, MG_RNG_X, (uint64_t)i);
        cr_assert(v >= -127 && v <= 127, "draw %d = %d is outside [-127, 127]", i, v);
        count[v + 128]++;
        same += v == mg_rng_s8(42, MG_RNG_W, (uint64_t)i);
    }
    cr_expect(count[1] > 0 && count[255] > 0 && count[128] > 0, "-127, 127 and 0 are all drawn (%d, %d, %d)", count[1],
              count[255], count[128]);
    for (int v = 1; v < 256; v++)
        cr_expect(count[v] > 250 && count[v] < 550, "value %d drawn %d times in %d (expected ~%d)", v - 128, count[v],
                  n, n / 255);
    cr_expect(same < n / 100, "the x and W streams agree on %d of %d draws", same, n);
}
