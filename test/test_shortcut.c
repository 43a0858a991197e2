/* test_shortcut.c: the max_dim 1 short-circuit (src/shortcut.h, src/shortcut_cert.[ch], kernels/shortcut.cu).
 *
 * Suites:
 *   shortcut_cert  (CPU)  the overflow certificate mg_shortcut_bound_ok at its edges, the margin argument's numbers,
 *                         and an fp32 / bf16 / tf32 accumulation model at the edge of the bound (must stay finite).
 *   gpu_shortcut   (GPU)  1. the kernels directly: weight statistics and the per-row classification against a host
 *                            model of the same rules (exact bits), for fp32 and bf16, odd K, unaligned rows and base
 *                            pointers, every threads-per-row variant, repeated calls (the completion ticket resets),
 *                            ascending compute-row lists, gather and scatter;
 *                         2. the library: a plan with the short-circuit on against the same plan with it off (same
 *                            kernel: auto and kernel 0), BITWISE, on seed-like inputs and planted NaN / inf / huge /
 *                            denormal / -0.0 values, in fp32, tf32 and bf16, shapes 1x1x1, 17x33x65, 127x257x129 and
 *                            the headline; where the answer is known, also against it (+0.0 exactly, or NaN); each
 *                            in every short-circuit mode (graph / poll / sync: shortcut.h);
 *                         3. the modes: the graph cache (x and out pointers changing between calls, a sub-batch, a
 *                            second stream, new weights), and a caller capturing its own stream (full path runs).
 *                         Skipped where no CUDA device is present.
 */
#include <criterion/criterion.h>

#include <cuda_runtime_api.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "gpu_util.h"
#include "maxgemm.h"
#include "rng.h"
#include "shortcut.h"
#include "shortcut_cert.h"
#include "test_common.h"

/* ================================================================================================================
 * CPU: the certificate
 * ================================================================================================================ */
static const double LIM = MG_CERT_LIMIT;   /* FLT_MAX / 4 */

Test(shortcut_cert, limit_is_flt_max_over_4) {
    cr_assert_eq(LIM, ldexp((double)FLT_MAX, -2));
    cr_assert_eq(LIM, ldexp(2.0 - ldexp(1.0, -23), 125));
    cr_assert_eq(MG_CERT_K_MAX, 1048576.0);
}

Test(shortcut_cert, typical_and_headline) {
    const double wb = 1.0 / sqrt(8192.0);   /* seed-like W, b bound at K = 8192 */
    cr_assert_eq(mg_shortcut_bound_ok(8192, 1.0, wb, wb), 1);
    cr_assert_eq(mg_shortcut_bound_ok(8192, 1e30, wb, wb), 1);     /* a huge but harmless x */
    /* The largest max|x| that certifies at the headline is LIM / (8192 * wb): about 9.4e35. */
    cr_assert_eq(mg_shortcut_bound_ok(8192, 9e35, wb, 0.0), 1);
    cr_assert_eq(mg_shortcut_bound_ok(8192, 1e36, wb, 0.0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(8192, 3e38, wb, wb), 0);    /* the overflow row of the GPU tests */
}

Test(shortcut_cert, just_below_and_above_the_margin) {
    /* Exact powers of two: k * x * w = 2^10 * 2^60 * 2^55 = 2^125, and b fills up to LIM exactly. */
    const double k = 1024.0, x = ldexp(1.0, 60), w = ldexp(1.0, 55);
    const double b_fill = LIM - ldexp(1.0, 125);                   /* (1 - 2^-23) 2^125, exact */
    cr_assert_eq(k * x * w + b_fill, LIM);
    cr_assert_eq(mg_shortcut_bound_ok(k, x, w, b_fill), 1, "bound == LIM must certify");
    /* One double ulp of LIM (2^73) above: LIM + 2^73 is exact. (One ulp of b_fill, 2^72, would tie back to LIM.) */
    cr_assert_eq(mg_shortcut_bound_ok(k, x, w, b_fill + ldexp(1.0, 73)), 0, "bound one double ulp above LIM");
    cr_assert_eq(mg_shortcut_bound_ok(k, x, nextafter(w, INFINITY) * 1.9, b_fill), 0);
    cr_assert_eq(mg_shortcut_bound_ok(k, x, w, 0.0), 1);
    /* The product alone at the limit: k * x * w = LIM exactly with w = LIM / 2^70 (a power-of-two scaling). */
    const double w2 = ldexp(LIM, -70);
    cr_assert_eq(mg_shortcut_bound_ok(k, x, w2, 0.0), 1);
    cr_assert_eq(mg_shortcut_bound_ok(k, x, nextafter(w2, INFINITY), 0.0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(k + 1.0, x, w2, 0.0), 0);
    /* Single operands at the cap. */
    cr_assert_eq(mg_shortcut_bound_ok(1, LIM, 1.0, 0.0), 1);
    cr_assert_eq(mg_shortcut_bound_ok(1, nextafter(LIM, INFINITY), 1.0, 0.0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, nextafterf((float)LIM, INFINITY), 1.0, 0.0), 0);
}

Test(shortcut_cert, operand_caps_hold_even_when_the_product_is_small) {
    /* x near FLT_MAX times a tiny W: the product test alone would pass, but rounding x to tf32 or bf16 could give
     * inf, so the row must be computed. */
    cr_assert_eq(mg_shortcut_bound_ok(1, 3.4e38, 1e-40, 0.0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, 1e-40, 3.4e38, 0.0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, 1e-40, 1e-40, 3.4e38), 0);
    cr_assert_eq(mg_shortcut_bound_ok(8, (double)FLT_MAX, 0.0, 0.0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(8, 0.0, (double)FLT_MAX, 0.0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(0, 0.0, (double)FLT_MAX, 0.0), 0);
}

Test(shortcut_cert, k_zero) {
    /* K = 0: y = b; only max|b| matters (x rows and W are empty: their maxima are 0). */
    cr_assert_eq(mg_shortcut_bound_ok(0, 0.0, 0.0, 0.0), 1);
    cr_assert_eq(mg_shortcut_bound_ok(0, 0.0, 0.0, 1.0), 1);
    cr_assert_eq(mg_shortcut_bound_ok(0, 0.0, 0.0, LIM), 1);
    cr_assert_eq(mg_shortcut_bound_ok(0, 0.0, 0.0, nextafter(LIM, INFINITY)), 0);
    cr_assert_eq(mg_shortcut_bound_ok(0, 0.0, 0.0, (double)FLT_MAX), 0);
    cr_assert_eq(mg_shortcut_bound_ok(0, 0.0, 1e30, 1.0), 1);    /* 0 * x * w = 0 */
}

Test(shortcut_cert, huge_k) {
    cr_assert_eq(mg_shortcut_bound_ok(MG_CERT_K_MAX, 1.0, 1.0, 1.0), 1);
    cr_assert_eq(mg_shortcut_bound_ok(MG_CERT_K_MAX + 1.0, 0.0, 0.0, 0.0), 0, "K beyond the growth argument");
    cr_assert_eq(mg_shortcut_bound_ok(1e18, 1e-30, 1e-30, 0.0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(2147483647.0, 1.0, 1.0, 1.0), 0);
    /* The largest magnitudes the caps allow at the largest K: the double evaluation (~2^272) must not overflow. */
    cr_assert_eq(mg_shortcut_bound_ok(MG_CERT_K_MAX, LIM, LIM, LIM), 0);
    cr_assert(isfinite(MG_CERT_K_MAX * LIM * LIM + LIM));
}

Test(shortcut_cert, zeros_denormals_negative_zero) {
    cr_assert_eq(mg_shortcut_bound_ok(1, 0.0, 0.0, 0.0), 1);
    cr_assert_eq(mg_shortcut_bound_ok(MG_CERT_K_MAX, 0.0, 0.0, 0.0), 1);
    const double tmin = (double)FLT_TRUE_MIN, nmin = (double)FLT_MIN;
    cr_assert_eq(mg_shortcut_bound_ok(1, tmin, tmin, tmin), 1);
    cr_assert_eq(mg_shortcut_bound_ok(4096, tmin, LIM / 8192.0, nmin), 1);
    cr_assert_eq(mg_shortcut_bound_ok(1, -0.0, -0.0, -0.0), 1);   /* -0.0 == 0.0: a finite zero magnitude */
}

Test(shortcut_cert, nan_inf_negative_arguments_fail) {
    cr_assert_eq(mg_shortcut_bound_ok(NAN, 1, 1, 1), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, NAN, 1, 1), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, 1, NAN, 1), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, 1, 1, NAN), 0);
    cr_assert_eq(mg_shortcut_bound_ok(INFINITY, 0, 0, 0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, INFINITY, 0, 0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, 0, INFINITY, 0), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, 0, 0, INFINITY), 0);
    cr_assert_eq(mg_shortcut_bound_ok(-1, 1, 1, 1), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, -1, 1, 1), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, 1, -1, 1), 0);
    cr_assert_eq(mg_shortcut_bound_ok(1, 1, 1, -1), 0);
}

Test(shortcut_cert, margin_argument_numbers) {
    /* The comment in shortcut_cert.h: operand rounding (1 + 2^-8)^4 for a product of split bf16 hi + lo operands,
     * (1 + 2^-23)^(4k + 3) for accumulation at k = K_MAX, (1 + 2^-8) for a bf16 y store: together < 1.69, so the
     * intermediates stay below 1.69 * FLT_MAX / 4 < 0.43 FLT_MAX. Pin the arithmetic so raising K_MAX or the
     * limit without redoing the argument fails here. */
    const double operand = pow(1.0 + ldexp(1.0, -8), 4);
    const double accum = exp((4.0 * MG_CERT_K_MAX + 3.0) * log1p(ldexp(1.0, -23)));
    const double ystore = 1.0 + ldexp(1.0, -8);
    const double total = operand * accum * ystore;
    cr_assert_lt(operand, 1.016);
    cr_assert_lt(accum, 1.65);
    cr_assert_lt(total, 1.69, "growth factor %.6f", total);
    cr_assert_lt(total * LIM, 0.43 * (double)FLT_MAX);
}

/* Round a float to bf16 (nearest even) / tf32 (nearest, 10 stored bits) on the host, as the kernels' operands are. */
static float round_bf16(float v) { return mg_bf16_to_f32(mg_f32_to_bf16(v)); }
static float round_tf32(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    u += 0xfffu + ((u >> 13) & 1u);
    u &= ~0x1fffu;
    memcpy(&v, &u, 4);
    return v;
}

Test(shortcut_cert, accumulation_at_the_edge_stays_finite) {
    /* Worst case for a certified row: every |x| = X, |w| = W and b = B of one sign, with the bound just at LIM.
     * Accumulate in fp32 sequentially (plain, FMA) and pairwise, with fp32, tf32 and bf16 operands: the result must
     * stay finite and below FLT_MAX / 2. Random k, random split of the bound between product and bias. The
     * certificate must take these rows (all but the few that float rounding pushes over: counted) and refuse them
     * 1% above the limit, so that the sums below are those of rows it certifies, at its edge. */
    uint64_t seed = 12345;
    int certified = 0;
    for (int trial = 0; trial < 300; trial++) {
        const int k = 1 + (int)(mg_splitmix64(seed + 3 * trial) % 4096);
        const double share = 0.5 + 0.5 * mg_rng_u01(seed, 7, trial);          /* product's share of the bound */
        const double xw = LIM * share / k;                                    /* X * W */
        const double X = sqrt(xw) * (0.25 + 3.0 * mg_rng_u01(seed, 8, trial));
        const double Wd = xw / X;
        const float xf = (float)X, wf = (float)Wd, bf = (float)(LIM * (1.0 - share));
        cr_assert(!mg_shortcut_bound_ok(k, xf * 1.01f, wf, bf), "trial %d: certified 1%% above the limit", trial);
        if (!mg_shortcut_bound_ok(k, xf, wf, bf)) continue;   /* float rounding pushed it over: not a certified row */
        certified++;
        for (int mode = 0; mode < 3; mode++) {
            const float xo = mode == 0 ? xf : mode == 1 ? round_tf32(xf) : round_bf16(xf);
            const float wo = mode == 0 ? wf : mode == 1 ? round_tf32(wf) : round_bf16(wf);
            float s_plain = 0.f, s_fma = 0.f;
            float *pair = malloc(sizeof(float) * (size_t)k);
            cr_assert_not_null(pair);
            for (int i = 0; i < k; i++) {
                s_plain = s_plain + xo * wo;
                s_fma = fmaf(xo, wo, s_fma);
                pair[i] = xo * wo;
            }
            for (int len = k; len > 1;) {               /* pairwise (tree) summation, as split-K / warp trees do */
                const int half = (len + 1) / 2;
                for (int i = 0; i < len / 2; i++) pair[i] = pair[2 * i] + pair[2 * i + 1];
                if (len & 1) pair[half - 1] = pair[len - 1];
                len = half;
            }
            const float s_pair = pair[0] + bf;
            free(pair);
            s_plain += bf;
            s_fma += bf;
            cr_assert(isfinite(s_plain) && fabsf(s_plain) < FLT_MAX / 2, "trial %d mode %d k %d: %g", trial, mode, k,
                      (double)s_plain);
            cr_assert(isfinite(s_fma) && fabsf(s_fma) < FLT_MAX / 2, "trial %d mode %d: %g", trial, mode, (double)s_fma);
            cr_assert(isfinite(s_pair) && fabsf(s_pair) < FLT_MAX / 2, "trial %d mode %d: %g", trial, mode,
                      (double)s_pair);
        }
    }
    cr_log_info("accumulation_at_the_edge: %d of 300 rows certified", certified);
    cr_assert_geq(certified, 100, "only %d of 300 rows at the limit certified: the edge is not where LIM says",
                  certified);
}

/* ================================================================================================================
 * GPU helpers
 * ================================================================================================================ */

static uint32_t f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static float u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

/* Host data is kept as float; in bf16 mode it is rounded to bf16 first (mg_test_to_elems: so the host model sees what
 * the GPU sees). */
static float elem_value(const void *buf, size_t i, mg_precision prec) {
    return prec == MG_PREC_BF16 ? mg_bf16_to_f32(((const uint16_t *)buf)[i]) : ((const float *)buf)[i];
}

/* |v| bits in the fp32 domain (what the kernel reduces). */
static uint32_t abs_bits(float v) { return f2u(v) & 0x7fffffffu; }

/* The host model of mg_shortcut_weight_stats: max|W|, max|b| over finite entries, the class. */
static void model_wstats(const float *W, size_t nk, const float *b, size_t n, float out[3]) {
    uint32_t mw = 0, mb = 0;
    int nan_all = 0, compute = 0;
    for (size_t i = 0; i < nk; i++) {
        uint32_t a = abs_bits(W[i]);
        if (a < 0x7f800000u) mw = a > mw ? a : mw;
        else if (a > 0x7f800000u) nan_all = 1;
        else compute = 1;
    }
    for (size_t j = 0; j < n; j++) {
        uint32_t a = abs_bits(b[j]);
        if (a < 0x7f800000u) mb = a > mb ? a : mb;
        else if (a > 0x7f800000u || b[j] > 0) nan_all = 1;
        else compute = 1;
    }
    out[0] = u2f(mw);
    out[1] = u2f(mb);
    out[2] = nan_all ? 1.0f : compute ? 2.0f : 0.0f;
}

/* The host model of mg_shortcut_classify for one row. */
static int model_row(const float *xrow, int64_t k, const float ws[3]) {
    uint32_t mx = 0;
    for (int64_t i = 0; i < k; i++) {
        uint32_t a = abs_bits(xrow[i]);
        mx = a > mx ? a : mx;
    }
    if (mx >= 0x7f800000u) return MG_ROW_NAN;
    if (ws[2] == 1.0f) return MG_ROW_NAN;
    if (ws[2] == 2.0f) return MG_ROW_COMPUTE;
    return mg_shortcut_bound_ok((double)k, (double)u2f(mx), (double)ws[0], (double)ws[1]) ? MG_ROW_ZERO
                                                                                           : MG_ROW_COMPUTE;
}

/* ================================================================================================================
 * GPU 1: the kernels directly
 * ================================================================================================================ */
enum { WCFG_CLEAN, WCFG_W_NAN, WCFG_W_INF, WCFG_W_NEGINF, WCFG_B_NAN, WCFG_B_POSINF, WCFG_B_NEGINF, WCFG_HUGE_W,
       WCFG_COUNT };
enum { XCFG_PLAIN, XCFG_PLANTED, XCFG_ALL_COMPUTE, XCFG_COUNT };

static void make_weights(float *W, int64_t n, int64_t k, float *b, int cfg, uint64_t seed) {
    for (int64_t i = 0; i < n * k; i++) W[i] = mg_rng_uniform(seed, MG_RNG_W, (uint64_t)i, -1.f, 1.f);
    for (int64_t j = 0; j < n; j++) b[j] = mg_rng_uniform(seed, MG_RNG_B, (uint64_t)j, -1.f, 1.f);
    const int64_t wi = n * k > 0 ? (int64_t)(mg_splitmix64(seed) % (uint64_t)(n * k)) : -1;
    const int64_t bj = (int64_t)(mg_splitmix64(seed + 1) % (uint64_t)n);
    switch (cfg) {
    case WCFG_W_NAN: if (wi >= 0) W[wi] = NAN; break;
    case WCFG_W_INF: if (wi >= 0) W[wi] = INFINITY; break;
    case WCFG_W_NEGINF: if (wi >= 0) W[wi] = -INFINITY; if (n * k > 1) W[n * k - 1] = NAN; break; /* NaN wins */
    case WCFG_B_NAN: b[bj] = NAN; break;
    case WCFG_B_POSINF: b[bj] = INFINITY; break;
    case WCFG_B_NEGINF: b[bj] = -INFINITY; break;
    case WCFG_HUGE_W: if (wi >= 0) W[wi] = 3e38f; break;   /* finite, above the operand cap */
    default: break;
    }
}

static void make_x(float *x, int64_t m, int64_t k, int cfg, uint64_t seed) {
    for (int64_t i = 0; i < m * k; i++) x[i] = mg_rng_uniform(seed, MG_RNG_X, (uint64_t)i, -1.f, 1.f);
    if (k == 0) return;
    if (cfg == XCFG_ALL_COMPUTE) {   /* every row above the operand cap (finite in bf16 too): every row computed */
        for (int64_t r = 0; r < m; r++) x[r * k + (r % k)] = 3e38f;
        return;
    }
    if (cfg != XCFG_PLANTED) return;
    for (int64_t r = 0; r < m; r++) {
        float *row = x + r * k;
        const int64_t c = (int64_t)(mg_splitmix64(seed + 17 * (uint64_t)r) % (uint64_t)k);
        switch (r % 11) {
        case 1: row[c] = NAN; break;
        case 2: row[k - 1] = INFINITY; break;
        case 3: row[0] = -INFINITY; break;
        case 4: row[c] = 1e38f; break;                                   /* over the bound unless k |W| < 0.85 */
        case 5: for (int64_t i = 0; i < k; i++) row[i] = 1e-40f; break; /* denormals */
        case 6: for (int64_t i = 0; i < k; i++) row[i] = -0.0f; break;
        case 7: row[c] = 3.4e38f; break;                                 /* above the operand cap */
        case 8: row[c] = -1e30f; break;                                  /* huge but certified */
        case 9: row[c] = NAN; row[0] = INFINITY; break;
        default: break;
        }
    }
}

/* Runs weight stats once and classify on the x configurations (each twice: the ticket must reset), comparing with
 * the host model. x_off / w_off shift the base pointers by elements (unaligned rows and bases). */
static void check_kernels(mg_precision prec, int64_t m, int64_t n, int64_t k, int wcfg, int x_off, int w_off) {
    const size_t es = prec == MG_PREC_BF16 ? 2 : 4;
    const uint64_t seed = 1000 + (uint64_t)(m * 31 + n * 7 + k) + (uint64_t)wcfg;
    float *W = malloc(sizeof(float) * (size_t)(n * k + 1)), *b = malloc(sizeof(float) * (size_t)n);
    float *x = malloc(sizeof(float) * (size_t)(m * k + 1));
    void *eW = malloc(es * (size_t)(n * k + 1)), *eb = malloc(es * (size_t)n), *ex = malloc(es * (size_t)(m * k + 1));
    cr_assert(W && b && x && eW && eb && ex);
    make_weights(W, n, k, b, wcfg, seed);
    mg_test_to_elems(W, (size_t)(n * k), prec, eW);
    mg_test_to_elems(b, (size_t)n, prec, eb);
    for (int64_t i = 0; i < n * k; i++) W[i] = elem_value(eW, (size_t)i, prec);   /* what the GPU sees */
    for (int64_t j = 0; j < n; j++) b[j] = elem_value(eb, (size_t)j, prec);

    char *dW, *db, *dx, *dout, *doutg;
    float *dws;
    int *drows, *dcount;
    MG_TEST_CUDA(cudaMalloc((void **)&dW, es * (size_t)(n * k + 8)));
    MG_TEST_CUDA(cudaMalloc((void **)&db, es * (size_t)n));
    MG_TEST_CUDA(cudaMalloc((void **)&dx, es * (size_t)(m * k + 8)));
    MG_TEST_CUDA(cudaMalloc((void **)&dout, es * (size_t)m));
    MG_TEST_CUDA(cudaMalloc((void **)&doutg, es * (size_t)m));
    MG_TEST_CUDA(cudaMalloc((void **)&dws, MG_WSTATS_FLOATS * sizeof(float)));
    MG_TEST_CUDA(cudaMalloc((void **)&drows, sizeof(int) * (size_t)m));
    MG_TEST_CUDA(cudaMalloc((void **)&dcount, sizeof(int)));
    MG_TEST_CUDA(cudaMemset(dws, 0xA5, MG_WSTATS_FLOATS * sizeof(float)));   /* garbage: weight_stats must not depend on it */
    MG_TEST_CUDA(cudaMemset(dcount, 0x5A, sizeof(int)));                      /* garbage: classify must overwrite it */
    MG_TEST_CUDA(cudaMemcpy(dW + es * (size_t)w_off, eW, es * (size_t)(n * k), cudaMemcpyHostToDevice));
    MG_TEST_CUDA(cudaMemcpy(db, eb, es * (size_t)n, cudaMemcpyHostToDevice));

    MG_TEST_OK(mg_shortcut_weight_stats(dW + es * (size_t)w_off, db, n, k, prec, dws, NULL));
    float ws[MG_WSTATS_FLOATS], wexp[3];
    MG_TEST_CUDA(cudaMemcpy(ws, dws, sizeof ws, cudaMemcpyDeviceToHost));
    model_wstats(W, (size_t)(n * k), b, (size_t)n, wexp);
    for (int i = 0; i < 3; i++)
        cr_assert_eq(f2u(ws[i]), f2u(wexp[i]), "%s m%lld n%lld k%lld wcfg %d: wstats[%d] = %a, expected %a",
                     mg_precision_name(prec), (long long)m, (long long)n, (long long)k, wcfg, i, (double)ws[i],
                     (double)wexp[i]);
    cr_assert_eq(f2u(ws[3]), 0u, "the completion ticket must start at zero");

    int *rows = malloc(sizeof(int) * (size_t)m);
    void *out = malloc(es * (size_t)m), *outg = malloc(es * (size_t)m);
    cr_assert(rows && out && outg);
    for (int rep = 0; rep < 2 * XCFG_COUNT; rep++) {
        const int xcfg = rep % XCFG_COUNT;
        make_x(x, m, k, xcfg, seed + 99 * (uint64_t)rep);
        mg_test_to_elems(x, (size_t)(m * k), prec, ex);
        for (int64_t i = 0; i < m * k; i++) x[i] = elem_value(ex, (size_t)i, prec);
        MG_TEST_CUDA(cudaMemcpy(dx + es * (size_t)x_off, ex, es * (size_t)(m * k), cudaMemcpyHostToDevice));
        MG_TEST_CUDA(cudaMemset(dout, 0x3C, es * (size_t)m));   /* a finite sentinel (0x3c3c...): compute rows keep it */
        MG_TEST_OK(mg_shortcut_classify(dx + es * (size_t)x_off, m, k, prec, dws, dout, drows, dcount, NULL));
        int count = -1;
        MG_TEST_CUDA(cudaMemcpy(&count, dcount, sizeof(int), cudaMemcpyDeviceToHost));
        MG_TEST_CUDA(cudaMemcpy(out, dout, es * (size_t)m, cudaMemcpyDeviceToHost));
        MG_TEST_CUDA(cudaMemcpy(rows, drows, sizeof(int) * (size_t)m, cudaMemcpyDeviceToHost));
        int expect_count = 0;
        for (int64_t r = 0; r < m; r++) {
            const int cls = model_row(x + r * k, k, wexp);
            const uint32_t got = prec == MG_PREC_BF16 ? ((uint16_t *)out)[r] : ((uint32_t *)out)[r];
            const uint32_t sentinel = prec == MG_PREC_BF16 ? 0x3c3cu : 0x3c3c3c3cu;
            const uint32_t want = cls == MG_ROW_ZERO ? 0u : cls == MG_ROW_NAN ? (prec == MG_PREC_BF16 ? 0x7fc0u : 0x7fc00000u)
                                                                                : sentinel;
            cr_assert_eq(got, want, "%s m%lld n%lld k%lld wcfg %d xcfg %d rep %d: row %lld class %d out bits 0x%x, want 0x%x",
                         mg_precision_name(prec), (long long)m, (long long)n, (long long)k, wcfg, xcfg, rep,
                         (long long)r, cls, got, want);
            if (cls == MG_ROW_COMPUTE) {
                cr_assert_lt(expect_count, count + 0, "row %lld should be computed; count %d", (long long)r, count);
                cr_assert_eq(rows[expect_count], (int)r, "compute list position %d: %d, want row %lld (ascending)",
                             expect_count, rows[expect_count], (long long)r);
                expect_count++;
            }
        }
        cr_assert_eq(count, expect_count, "%s k%lld wcfg %d xcfg %d: count %d, want %d", mg_precision_name(prec),
                     (long long)k, wcfg, xcfg, count, expect_count);
        if (xcfg == XCFG_ALL_COMPUTE && wcfg == WCFG_CLEAN && k > 0)
            cr_assert_eq(count, (int)m, "every row over the bound must be computed");

        /* The rare case's copy (the library's path, mg_shortcut_scatter_rows): out[r] = outg[r] for the listed rows,
         * with the count read on the device; the others keep classify's output. */
        for (int64_t r = 0; r < m; r++) {
            if (prec == MG_PREC_BF16) ((uint16_t *)outg)[r] = (uint16_t)(0x4000u + (unsigned)r);
            else ((float *)outg)[r] = 1000.0f + (float)r;
        }
        MG_TEST_CUDA(cudaMemcpy(doutg, outg, es * (size_t)m, cudaMemcpyHostToDevice));
        MG_TEST_OK(mg_shortcut_scatter_rows(doutg, prec, drows, dcount, m, dout, NULL));
        void *out2 = malloc(es * (size_t)m);
        cr_assert_not_null(out2);
        MG_TEST_CUDA(cudaMemcpy(out2, dout, es * (size_t)m, cudaMemcpyDeviceToHost));
        int c = 0;
        for (int64_t r = 0; r < m; r++) {
            const int is_c = c < count && rows[c] == (int)r;
            if (prec == MG_PREC_BF16) {
                const uint16_t want = is_c ? (uint16_t)(0x4000u + (unsigned)r) : ((uint16_t *)out)[r];
                cr_assert_eq(((uint16_t *)out2)[r], want, "scatter_rows row %lld", (long long)r);
            } else {
                const uint32_t want = is_c ? f2u(1000.0f + (float)r) : ((uint32_t *)out)[r];
                cr_assert_eq(((uint32_t *)out2)[r], want, "scatter_rows row %lld", (long long)r);
            }
            c += is_c;
        }
        free(out2);
    }
    MG_TEST_CUDA(cudaDeviceSynchronize());
    MG_TEST_CUDA(cudaMemcpy(ws, dws, sizeof ws, cudaMemcpyDeviceToHost));
    cr_assert_eq(f2u(ws[3]), 0u, "classify must leave the completion ticket at zero");
    cudaFree(dW); cudaFree(db); cudaFree(dx); cudaFree(dout); cudaFree(doutg); cudaFree(dws);
    cudaFree(drows); cudaFree(dcount);
    free(W); free(b); free(x); free(eW); free(eb); free(ex); free(rows); free(out); free(outg);
}

/* K values that exercise every threads-per-row variant (1, 8, 32, 256) and head/body/tail splits. */
static const int64_t k_list[] = {0, 1, 3, 7, 16, 17, 33, 100, 129, 515, 1000, 2047, 2048, 2049, 4100, 8192};

Test(gpu_shortcut, kernels_fp32, .timeout = 600) {
    MG_TEST_NEED_GPU();
    for (size_t i = 0; i < sizeof k_list / sizeof k_list[0]; i++)
        for (int wcfg = 0; wcfg < WCFG_COUNT; wcfg++) {
            const int64_t k = k_list[i], m = k >= 2048 ? 67 : 300;
            check_kernels(MG_PREC_FP32, m, 13, k, wcfg, (int)(i % 3), (int)(wcfg % 2));
        }
}

Test(gpu_shortcut, kernels_bf16, .timeout = 600) {
    MG_TEST_NEED_GPU();
    for (size_t i = 0; i < sizeof k_list / sizeof k_list[0]; i++)
        for (int wcfg = 0; wcfg < WCFG_COUNT; wcfg++) {
            const int64_t k = k_list[i], m = k >= 2048 ? 67 : 300;
            check_kernels(MG_PREC_BF16, m, 13, k, wcfg, (int)(i % 5), (int)(wcfg % 3));
        }
}

Test(gpu_shortcut, kernels_many_rows_and_big_w, .timeout = 600) {
    MG_TEST_NEED_GPU();
    /* Many rows: the last-block compaction walks more than one 256-row step, several blocks flag rows. */
    check_kernels(MG_PREC_FP32, 5000, 3, 5, WCFG_CLEAN, 1, 0);
    check_kernels(MG_PREC_BF16, 4099, 3, 40, WCFG_CLEAN, 0, 1);
    check_kernels(MG_PREC_FP32, 1100, 5, 300, WCFG_CLEAN, 0, 0);
    /* W big enough that the weight-stats grid is capped and strides (16M elements), planted at the ends. */
    check_kernels(MG_PREC_FP32, 4, 2000, 8191, WCFG_W_NAN, 0, 1);
    check_kernels(MG_PREC_BF16, 4, 2000, 8191, WCFG_B_NEGINF, 0, 1);
}

Test(gpu_shortcut, weight_stats_edges) {
    MG_TEST_NEED_GPU();
    /* NaN as the very first and the very last element of a large W at an unaligned base; K = 0 ignores W. */
    const int64_t n = 1000, k = 4097;
    float *W = malloc(sizeof(float) * (size_t)(n * k)), *b = malloc(sizeof(float) * (size_t)n);
    cr_assert(W && b);
    for (int64_t j = 0; j < n; j++) b[j] = (float)(j % 7) - 3.0f;   /* max|b| = 3 */
    float *dW, *db, *dws, ws[4];
    MG_TEST_CUDA(cudaMalloc((void **)&dW, sizeof(float) * (size_t)(n * k + 1)));
    MG_TEST_CUDA(cudaMalloc((void **)&db, sizeof(float) * (size_t)n));
    MG_TEST_CUDA(cudaMalloc((void **)&dws, sizeof ws));
    MG_TEST_CUDA(cudaMemcpy(db, b, sizeof(float) * (size_t)n, cudaMemcpyHostToDevice));
    const float wmax = (float)999 * 1e-3f;
    for (int where = 0; where < 3; where++) {
        for (int64_t i = 0; i < n * k; i++) W[i] = (float)(i % 1000) * 1e-3f;
        if (where == 1) W[0] = NAN;
        if (where == 2) W[n * k - 1] = NAN;
        MG_TEST_CUDA(cudaMemcpy(dW + 1, W, sizeof(float) * (size_t)(n * k), cudaMemcpyHostToDevice));
        MG_TEST_OK(mg_shortcut_weight_stats(dW + 1, db, n, k, MG_PREC_FP32, dws, NULL));
        MG_TEST_CUDA(cudaMemcpy(ws, dws, sizeof ws, cudaMemcpyDeviceToHost));
        cr_assert_eq(ws[0], wmax, "max|W| %g", (double)ws[0]);
        cr_assert_eq(ws[1], 3.0f);
        cr_assert_eq(ws[2], where ? 1.0f : 0.0f, "where %d: class %g", where, (double)ws[2]);
        cr_assert_eq(f2u(ws[3]), 0u);
    }
    /* K = 0: W is not read (NULL is fine); b alone decides. */
    MG_TEST_OK(mg_shortcut_weight_stats(NULL, db, n, 0, MG_PREC_FP32, dws, NULL));
    MG_TEST_CUDA(cudaMemcpy(ws, dws, sizeof ws, cudaMemcpyDeviceToHost));
    cr_assert_eq(ws[0], 0.0f);
    cr_assert_eq(ws[1], 3.0f);
    cr_assert_eq(ws[2], 0.0f);
    /* Argument checks. */
    cr_assert_eq(mg_shortcut_weight_stats(dW, db, -1, 4, MG_PREC_FP32, dws, NULL), MG_ERR_SHAPE);
    cr_assert_eq(mg_shortcut_weight_stats(dW, NULL, 3, 4, MG_PREC_FP32, dws, NULL), MG_ERR_INVALID_ARG);
    cr_assert_eq(mg_shortcut_weight_stats(dW, db, 3, 4, (mg_precision)7, dws, NULL), MG_ERR_PRECISION);
    cr_assert_eq(mg_shortcut_classify(dW, 3, 4, MG_PREC_FP32, dws, NULL, NULL, NULL, NULL), MG_ERR_INVALID_ARG);
    cr_assert_eq(mg_shortcut_scatter_rows(NULL, MG_PREC_FP32, NULL, NULL, -1, NULL, NULL), MG_ERR_SHAPE);
    cr_assert_eq(mg_shortcut_scatter_rows(NULL, MG_PREC_FP32, NULL, NULL, 0, NULL, NULL), MG_OK);   /* M 0: nothing */
    cr_assert_eq(mg_shortcut_scatter_rows(NULL, MG_PREC_FP32, NULL, NULL, 3, NULL, NULL), MG_ERR_INVALID_ARG);
    int *dcount;
    MG_TEST_CUDA(cudaMalloc((void **)&dcount, sizeof(int)));
    MG_TEST_CUDA(cudaMemset(dcount, 0x7f, sizeof(int)));
    MG_TEST_OK(mg_shortcut_classify(NULL, 0, 0, MG_PREC_FP32, dws, NULL, NULL, dcount, NULL));   /* M = 0: count 0 */
    int count = -1;
    MG_TEST_CUDA(cudaMemcpy(&count, dcount, sizeof count, cudaMemcpyDeviceToHost));
    cr_assert_eq(count, 0);
    cudaFree(dW); cudaFree(db); cudaFree(dws); cudaFree(dcount);
    free(W);
    free(b);
}

/* ================================================================================================================
 * GPU 2: the library, short-circuit on vs off, bitwise
 * ================================================================================================================ */
typedef struct plan_case {
    int64_t m, n, k;
    mg_precision prec;
    size_t es;
    void *x, *W, *b;
    signed char *expect;   /* per row: 0 = +0.0 exactly, 1 = NaN, -1 = only "equal to the full computation" */
} plan_case;

static void put_elems(void *d, size_t idx, size_t count, mg_precision prec, float v) {
    const size_t es = prec == MG_PREC_BF16 ? 2 : 4;
    void *h = malloc(es * count);
    cr_assert_not_null(h);
    for (size_t i = 0; i < count; i++) {
        if (prec == MG_PREC_BF16) ((uint16_t *)h)[i] = mg_f32_to_bf16(v);
        else ((float *)h)[i] = v;
    }
    MG_TEST_CUDA(cudaMemcpy((char *)d + es * idx, h, es * count, cudaMemcpyHostToDevice));
    free(h);
}
static int64_t pick(uint64_t salt, int64_t n) { return (int64_t)(mg_splitmix64(salt) % (uint64_t)n); }
static void expect_all(plan_case *c, int v) { memset(c->expect, v, (size_t)c->m); }

/* Each case plants its values and sets the expected rows; returns 0 if it does not apply to the shape. */
typedef int (*plant_fn)(plan_case *c, uint64_t salt);
static int case_seedlike(plan_case *c, uint64_t salt) { (void)salt; expect_all(c, 0); return 1; }
static int case_x_nonfinite(plan_case *c, uint64_t salt) {
    if (c->k == 0) return 0;
    expect_all(c, 0);
    const float vals[3] = {NAN, INFINITY, -INFINITY};
    for (int t = 0; t < 3; t++) {
        const int64_t r = pick(salt + (uint64_t)t, c->m), col = pick(salt + 10 + (uint64_t)t, c->k);
        put_elems(c->x, (size_t)(r * c->k + col), 1, c->prec, vals[t]);
        c->expect[r] = 1;
    }
    return 1;
}
static int case_w_nan(plan_case *c, uint64_t salt) {
    if (c->k == 0) return 0;
    put_elems(c->W, (size_t)pick(salt, c->n * c->k), 1, c->prec, NAN);
    expect_all(c, 1);
    return 1;
}
static int case_w_posinf(plan_case *c, uint64_t salt) {
    if (c->k == 0) return 0;
    /* x >= 0 (seed-like): x * inf is +inf or NaN (x = 0): every row's max is +inf or NaN. Decided by the compute
     * path (weight class 2). */
    put_elems(c->W, (size_t)pick(salt, c->n * c->k), 1, c->prec, INFINITY);
    expect_all(c, 1);
    return 1;
}
static int case_b_nan(plan_case *c, uint64_t salt) {
    put_elems(c->b, (size_t)pick(salt, c->n), 1, c->prec, NAN);
    expect_all(c, 1);
    return 1;
}
static int case_b_posinf(plan_case *c, uint64_t salt) {
    put_elems(c->b, (size_t)pick(salt, c->n), 1, c->prec, INFINITY);
    expect_all(c, 1);
    return 1;
}
static int case_b_neginf(plan_case *c, uint64_t salt) {
    /* The max comes from the other columns (finite: +0.0), unless there is no other column (-inf: NaN). */
    put_elems(c->b, (size_t)pick(salt, c->n), 1, c->prec, -INFINITY);
    expect_all(c, c->n == 1 ? 1 : 0);
    return 1;
}
static int case_x_1e30(plan_case *c, uint64_t salt) {
    if (c->k == 0) return 0;
    const int64_t r = pick(salt, c->m);
    put_elems(c->x, (size_t)(r * c->k + pick(salt + 1, c->k)), 1, c->prec, 1e30f);
    expect_all(c, 0);   /* certified: K * 1e30 * max|W| is far below FLT_MAX / 4 */
    return 1;
}
static int case_x_3e38_one(plan_case *c, uint64_t salt) {
    if (c->k == 0) return 0;
    const int64_t r = pick(salt, c->m);
    put_elems(c->x, (size_t)(r * c->k + pick(salt + 1, c->k)), 1, c->prec, 3e38f);
    /* Not certified (the bound overflows), computed: one product 3e38 * w with |w| < 1 stays finite -> +0.0. */
    expect_all(c, 0);
    return 1;
}
static int case_x_3e38_row(plan_case *c, uint64_t salt) {
    if (c->k == 0) return 0;
    const int64_t r = pick(salt, c->m);
    put_elems(c->x, (size_t)(r * c->k), (size_t)c->k, c->prec, 3e38f);
    expect_all(c, 0);
    c->expect[r] = -1;   /* may overflow fp32 (then NaN): only equality with the full computation is required */
    return 1;
}
static int case_negzero_denormal(plan_case *c, uint64_t salt) {
    if (c->k == 0) return 0;
    const int64_t r1 = pick(salt, c->m), r2 = pick(salt + 1, c->m);
    put_elems(c->x, (size_t)(r1 * c->k), (size_t)c->k, c->prec, -0.0f);
    put_elems(c->x, (size_t)(r2 * c->k), (size_t)c->k, c->prec, 1e-40f);
    put_elems(c->W, (size_t)pick(salt + 2, c->n * c->k), 1, c->prec, 1e-41f);
    put_elems(c->b, (size_t)pick(salt + 3, c->n), 1, c->prec, -0.0f);
    expect_all(c, 0);
    return 1;
}

static const struct { const char *name; plant_fn fn; } cases[] = {
    {"seedlike", case_seedlike},       {"x_nan_inf_rows", case_x_nonfinite}, {"w_nan", case_w_nan},
    {"w_posinf", case_w_posinf},       {"b_nan", case_b_nan},                {"b_posinf", case_b_posinf},
    {"b_neginf", case_b_neginf},       {"x_1e30", case_x_1e30},              {"x_3e38_one", case_x_3e38_one},
    {"x_3e38_row", case_x_3e38_row},   {"negzero_denormal", case_negzero_denormal},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static int out_is_nan(const void *out, int64_t i, mg_precision prec) { return isnan(elem_value(out, (size_t)i, prec)); }
static uint32_t out_bits(const void *out, int64_t i, mg_precision prec) {
    return prec == MG_PREC_BF16 ? ((const uint16_t *)out)[i] : ((const uint32_t *)out)[i];
}

/* Rows where on and off differ, bitwise except that any NaN equals any NaN; *first = the first such row or -1. */
static size_t count_diff(const void *on, const void *off, int64_t m, mg_precision prec, int64_t *first) {
    size_t diff = 0;
    *first = -1;
    for (int64_t i = 0; i < m; i++) {
        const int same = (out_is_nan(on, i, prec) && out_is_nan(off, i, prec)) ||
                         out_bits(on, i, prec) == out_bits(off, i, prec);
        if (!same && *first < 0) *first = i;
        diff += !same;
    }
    return diff;
}

/* Runs case ci on a fresh seed-like problem with kernel `kernel`: the plan's output with the short-circuit on, in
 * each mode (graph, poll, sync: the mode must not fall back), against the same plan with it off, compared bitwise
 * (NaN == NaN), and with the expected rows. Returns 1 if it ran, 0 if the plan is unsupported
 * (that precision/kernel/shape is not built) or the case does not apply. */
static int run_plan_case(int64_t m, int64_t n, int64_t k, mg_precision prec, int kernel, int ci, uint64_t seed) {
    mg_plan_desc d = mg_plan_desc_default();
    d.m = m; d.n = n; d.k = k; d.max_dim = 1; d.precision = prec; d.kernel = kernel; d.shortcut = 1;
    mg_plan *plan = NULL;
    mg_status st = mg_plan_create(&plan, &d);
    if (st == MG_ERR_UNSUPPORTED || st == MG_ERR_KERNEL) return 0;
    cr_assert_eq(st, MG_OK, "mg_plan_create: %s (%s)", mg_strerror(st), mg_last_error());

    plan_case c = {m, n, k, prec, prec == MG_PREC_BF16 ? 2 : 4, NULL, NULL, NULL, NULL};
    MG_TEST_CUDA(cudaMalloc(&c.x, c.es * (size_t)(m * k + 1)));
    MG_TEST_CUDA(cudaMalloc(&c.W, c.es * (size_t)(n * k + 1)));
    MG_TEST_CUDA(cudaMalloc(&c.b, c.es * (size_t)n));
    void *d_on, *d_off;
    MG_TEST_CUDA(cudaMalloc(&d_on, c.es * (size_t)m));
    MG_TEST_CUDA(cudaMalloc(&d_off, c.es * (size_t)m));
    c.expect = malloc((size_t)m);
    cr_assert_not_null(c.expect);
    MG_TEST_OK(mg_fill_seedlike(c.x, c.W, c.b, m, n, k, prec, seed, NULL));
    MG_TEST_CUDA(cudaDeviceSynchronize());
    if (!cases[ci].fn(&c, seed * 1315423911u + (uint64_t)ci)) {
        cudaFree(c.x); cudaFree(c.W); cudaFree(c.b); cudaFree(d_on); cudaFree(d_off); free(c.expect);
        mg_plan_destroy(plan);
        return 0;
    }
    /* Finite sentinel (0x3c3c...: ~0.0115 / bf16 0.0115): a row the short-circuit forgets to write shows up. */
    MG_TEST_CUDA(cudaMemset(d_on, 0x3c, c.es * (size_t)m));
    MG_TEST_CUDA(cudaMemset(d_off, 0x3c, c.es * (size_t)m));
    MG_TEST_OK(mg_set_weights(plan, c.W, c.b, NULL));
    /* The full computation first, then the short-circuit in every mode on the same plan (graph: the conditional
     * body runs whenever the case leaves rows to compute; a row it forgot would keep the sentinel). */
    MG_TEST_OK(mg_plan_set_shortcut(plan, 0));
    MG_TEST_OK(mg_forward(plan, c.x, d_off, NULL));
    MG_TEST_CUDA(cudaDeviceSynchronize());
    void *on = malloc(c.es * (size_t)m), *off = malloc(c.es * (size_t)m);
    cr_assert(on && off);
    MG_TEST_CUDA(cudaMemcpy(off, d_off, c.es * (size_t)m, cudaMemcpyDeviceToHost));
    const char *kname = mg_plan_kernel_name(plan);
    MG_TEST_OK(mg_plan_set_shortcut(plan, 1));
    for (int mode = 0; mode < MG_SHORTCUT_MODE_COUNT; mode++) {
        MG_TEST_CUDA(cudaMemset(d_on, 0x3c, c.es * (size_t)m));
        MG_TEST_OK(mg_plan_set_shortcut_mode(plan, mode));
        MG_TEST_OK(mg_forward(plan, c.x, d_on, NULL));
        MG_TEST_CUDA(cudaDeviceSynchronize());
        cr_expect_eq(mg_plan_shortcut_mode_used(plan), mode, "%s kernel %s %lldx%lldx%lld case %s: mode %s ran as %s "
                     "(graph fallback: '%s')", mg_precision_name(prec), kname, (long long)m, (long long)n,
                     (long long)k, cases[ci].name, mg_shortcut_mode_name(mode),
                     mg_shortcut_mode_name(mg_plan_shortcut_mode_used(plan)), mg_plan_shortcut_fallback(plan));
        MG_TEST_CUDA(cudaMemcpy(on, d_on, c.es * (size_t)m, cudaMemcpyDeviceToHost));
        int64_t first = -1;
        const size_t diff = count_diff(on, off, m, prec, &first);
        cr_expect_eq(diff, 0, "%s kernel %s %lldx%lldx%lld case %s mode %s: %zu rows differ from the full computation; "
                              "row %lld: shortcut 0x%x, full 0x%x", mg_precision_name(prec), kname, (long long)m,
                     (long long)n, (long long)k, cases[ci].name, mg_shortcut_mode_name(mode), diff, (long long)first,
                     first >= 0 ? out_bits(on, first, prec) : 0, first >= 0 ? out_bits(off, first, prec) : 0);
        for (int64_t i = 0; i < m; i++) {
            if (c.expect[i] < 0) continue;
            const int ok = c.expect[i] == 1 ? out_is_nan(on, i, prec) : out_bits(on, i, prec) == 0u;
            cr_expect(ok, "%s kernel %s %lldx%lldx%lld case %s mode %s: row %lld is 0x%x, expected %s",
                      mg_precision_name(prec), kname, (long long)m, (long long)n, (long long)k, cases[ci].name,
                      mg_shortcut_mode_name(mode), (long long)i, out_bits(on, i, prec),
                      c.expect[i] == 1 ? "NaN" : "+0.0");
            if (!ok) break;
        }
    }
    free(on); free(off); free(c.expect);
    cudaFree(c.x); cudaFree(c.W); cudaFree(c.b); cudaFree(d_on); cudaFree(d_off);
    mg_plan_destroy(plan);
    return 1;
}

static void run_shape(int64_t m, int64_t n, int64_t k, int only_cases) {
    const int kernels[2] = {MG_KERNEL_AUTO, 0};
    int ran = 0;
    for (int p = 0; p < MG_PREC_COUNT; p++)
        for (int kk = 0; kk < 2; kk++)
            for (int ci = 0; ci < (only_cases ? only_cases : NCASES); ci++)
                ran += run_plan_case(m, n, k, (mg_precision)p, kernels[kk], ci, 7 + (uint64_t)(p * 100 + kk * 10 + ci));
    cr_assert_gt(ran, 0, "no plan could be created for %lldx%lldx%lld: nothing was compared", (long long)m,
                 (long long)n, (long long)k);
}

Test(gpu_shortcut, plan_1x1x1, .timeout = 300) { MG_TEST_NEED_GPU(); run_shape(1, 1, 1, 0); }
Test(gpu_shortcut, plan_17x33x65, .timeout = 300) { MG_TEST_NEED_GPU(); run_shape(17, 33, 65, 0); }
Test(gpu_shortcut, plan_127x257x129, .timeout = 300) { MG_TEST_NEED_GPU(); run_shape(127, 257, 129, 0); }
/* K = 0 (y = b): skipped per plan where a kernel does not support it; the b cases apply. */
Test(gpu_shortcut, plan_k0, .timeout = 300) {
    MG_TEST_NEED_GPU();
    const int kernels[2] = {MG_KERNEL_AUTO, 0};
    int ran = 0;
    for (int p = 0; p < MG_PREC_COUNT; p++)
        for (int kk = 0; kk < 2; kk++)
            for (int ci = 0; ci < NCASES; ci++)
                ran += run_plan_case(9, 5, 0, (mg_precision)p, kernels[kk], ci, 3 + (uint64_t)ci);
    cr_assert_gt(ran, 0, "no K = 0 plan could be created: nothing was compared");
}
/* The headline: seed-like and one case with NaN / inf rows (the first two cases). */
Test(gpu_shortcut, plan_headline, .timeout = 600) { MG_TEST_NEED_GPU(); run_shape(1024, 8192, 8192, 2); }

/* ================================================================================================================
 * The short-circuit's modes: parsing (CPU), the graph cache, a caller that captures its own stream (GPU)
 * ================================================================================================================ */
Test(shortcut_cert, mode_names_parse) {
    cr_assert_eq(mg_shortcut_mode_parse(NULL), MG_SHORTCUT_DEFAULT);
    cr_assert_eq(mg_shortcut_mode_parse(""), MG_SHORTCUT_DEFAULT);
    cr_assert_eq(mg_shortcut_mode_parse("tail"), MG_SHORTCUT_TAIL);
    cr_assert_eq(mg_shortcut_mode_parse("graph"), MG_SHORTCUT_GRAPH);
    cr_assert_eq(mg_shortcut_mode_parse("poll"), MG_SHORTCUT_POLL);
    cr_assert_eq(mg_shortcut_mode_parse("sync"), MG_SHORTCUT_SYNC);
    cr_assert_eq(mg_shortcut_mode_parse("Graph"), -1);
    cr_assert_eq(mg_shortcut_mode_parse("graphs"), -1);
    for (int mode = 0; mode < MG_SHORTCUT_MODE_COUNT; mode++)
        cr_assert_eq(mg_shortcut_mode_parse(mg_shortcut_mode_name(mode)), mode);
    cr_assert_str_eq(mg_shortcut_mode_name(-1), "none");
    cr_assert_eq(mg_plan_set_shortcut_mode(NULL, 0), MG_ERR_INVALID_ARG);
}

/* One plan, fp32, several x buffers and outputs used in turn (every call must rebuild or reuse the right graph),
 * a sub-batch (mg_forward_rows), a second stream, and new weights (the graph must be dropped): each call compared
 * bitwise with the full computation of the same call. Two x buffers leave rows to compute (a 3e38 row: the
 * conditional body runs), one has NaN rows, one is clean. */
static void graph_cache_run(int kernel) {
    const int64_t m = 37, n = 65, k = 129;
    mg_plan_desc d = mg_plan_desc_default();
    d.m = m; d.n = n; d.k = k; d.max_dim = 1; d.precision = MG_PREC_FP32; d.kernel = kernel; d.shortcut = 1;
    mg_plan *plan = NULL;
    /* auto and kernel 0 (cuBLAS) take fp32 at any shape on any GPU: a refusal is a failure, not a skip */
    MG_TEST_OK(mg_plan_create(&plan, &d));
    enum { NX = 4, NO = 3 };
    float *x[NX], *out[NO], *ref, *W, *W2, *b;
    for (int i = 0; i < NX; i++) MG_TEST_CUDA(cudaMalloc((void **)&x[i], sizeof(float) * (size_t)(m * k)));
    for (int i = 0; i < NO; i++) MG_TEST_CUDA(cudaMalloc((void **)&out[i], sizeof(float) * (size_t)m));
    MG_TEST_CUDA(cudaMalloc((void **)&ref, sizeof(float) * (size_t)m));
    MG_TEST_CUDA(cudaMalloc((void **)&W, sizeof(float) * (size_t)(n * k)));
    MG_TEST_CUDA(cudaMalloc((void **)&W2, sizeof(float) * (size_t)(n * k)));
    MG_TEST_CUDA(cudaMalloc((void **)&b, sizeof(float) * (size_t)n));
    for (int i = 0; i < NX; i++) MG_TEST_OK(mg_fill_seedlike(x[i], i ? W2 : W, b, m, n, k, MG_PREC_FP32, 50 + (uint64_t)i, NULL));
    MG_TEST_CUDA(cudaDeviceSynchronize());
    put_elems(x[1], (size_t)(5 * k), (size_t)k, MG_PREC_FP32, 3e38f);        /* row 5: computed (may overflow) */
    put_elems(x[1], (size_t)(30 * k + 7), 1, MG_PREC_FP32, 3e38f);           /* row 30: computed, finite */
    put_elems(x[2], (size_t)(3 * k + 1), 1, MG_PREC_FP32, NAN);              /* row 3: NaN */
    put_elems(x[3], (size_t)(36 * k), (size_t)k, MG_PREC_FP32, -3e38f);      /* the last row: computed */
    put_elems(W2, 17, 1, MG_PREC_FP32, INFINITY);                            /* W2: weight class 2, all computed */
    cudaStream_t s2;
    MG_TEST_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    float *h_on = malloc(sizeof(float) * (size_t)m), *h_ref = malloc(sizeof(float) * (size_t)m);
    cr_assert(h_on && h_ref);
    /* (x index, out index, rows, stream 2?, weights: 0 W, 1 W2) */
    static const int seq[][5] = {{0, 0, 37, 0, 0}, {1, 0, 37, 0, 0}, {1, 1, 37, 0, 0}, {0, 0, 37, 0, 0},
                                 {2, 0, 37, 1, 0}, {3, 2, 37, 0, 0}, {1, 1, 20, 0, 0}, {1, 1, 37, 0, 0},
                                 {3, 2, 37, 1, 1}, {0, 0, 37, 0, 1}, {0, 0, 37, 0, 0}, {1, 0, 1, 0, 0}};
    int weights = -1;
    for (size_t t = 0; t < sizeof seq / sizeof seq[0]; t++) {
        const int xi = seq[t][0], oi = seq[t][1], rows = seq[t][2], w = seq[t][4];
        cudaStream_t s = seq[t][3] ? s2 : NULL;
        if (w != weights) {
            MG_TEST_OK(mg_set_weights(plan, w ? W2 : W, b, NULL));
            MG_TEST_CUDA(cudaDeviceSynchronize());   /* s2 does not wait for the legacy stream */
            weights = w;
        }
        for (int mode = 0; mode < MG_SHORTCUT_MODE_COUNT; mode++) {
            MG_TEST_OK(mg_plan_set_shortcut(plan, 0));
            MG_TEST_CUDA(cudaMemsetAsync(ref, 0x3c, sizeof(float) * (size_t)m, s));
            MG_TEST_OK(mg_forward_rows(plan, rows, x[xi], ref, s));
            MG_TEST_OK(mg_plan_set_shortcut(plan, 1));
            MG_TEST_OK(mg_plan_set_shortcut_mode(plan, mode));
            MG_TEST_CUDA(cudaMemsetAsync(out[oi], 0x3c, sizeof(float) * (size_t)m, s));
            MG_TEST_OK(mg_forward_rows(plan, rows, x[xi], out[oi], s));
            MG_TEST_CUDA(cudaDeviceSynchronize());
            cr_expect_eq(mg_plan_shortcut_mode_used(plan), mode, "kernel %s step %zu: mode %s ran as %s ('%s')",
                         mg_plan_kernel_name(plan), t, mg_shortcut_mode_name(mode),
                         mg_shortcut_mode_name(mg_plan_shortcut_mode_used(plan)), mg_plan_shortcut_fallback(plan));
            MG_TEST_CUDA(cudaMemcpy(h_on, out[oi], sizeof(float) * (size_t)m, cudaMemcpyDeviceToHost));
            MG_TEST_CUDA(cudaMemcpy(h_ref, ref, sizeof(float) * (size_t)m, cudaMemcpyDeviceToHost));
            int64_t first = -1;
            const size_t diff = count_diff(h_on, h_ref, m, MG_PREC_FP32, &first);
            cr_expect_eq(diff, 0, "kernel %s step %zu (x%d out%d rows %d W%d) mode %s: %zu rows differ; row %lld: "
                                  "0x%x, full 0x%x", mg_plan_kernel_name(plan), t, xi, oi, rows, w,
                         mg_shortcut_mode_name(mode), diff, (long long)first,
                         first >= 0 ? out_bits(h_on, first, MG_PREC_FP32) : 0,
                         first >= 0 ? out_bits(h_ref, first, MG_PREC_FP32) : 0);
            /* Rows past a sub-batch are not the call's: both keep the sentinel. */
            for (int64_t i = rows; i < m; i++)
                cr_expect_eq(out_bits(h_on, i, MG_PREC_FP32), 0x3c3c3c3cu, "step %zu: row %lld past the batch written",
                             t, (long long)i);
            /* Known answers: W2 (+inf in W) leaves every row to the GEMM; with W, x2 row 3 is NaN, the rest +0.0
             * except the computed rows (x1 rows 5 and 30, x3 row 36), which only have to match the full path. */
            if (w == 0)
                for (int64_t i = 0; i < rows; i++) {
                    const int computed = (xi == 1 && (i == 5 || i == 30)) || (xi == 3 && i == 36);
                    if (computed) continue;
                    const int want_nan = xi == 2 && i == 3;
                    const int ok = want_nan ? isnan(h_on[i]) : out_bits(h_on, i, MG_PREC_FP32) == 0u;
                    cr_expect(ok, "step %zu mode %s: row %lld is 0x%x, expected %s", t, mg_shortcut_mode_name(mode),
                              (long long)i, out_bits(h_on, i, MG_PREC_FP32), want_nan ? "NaN" : "+0.0");
                }
        }
    }
    free(h_on); free(h_ref);
    MG_TEST_CUDA(cudaStreamDestroy(s2));
    for (int i = 0; i < NX; i++) cudaFree(x[i]);
    for (int i = 0; i < NO; i++) cudaFree(out[i]);
    cudaFree(ref); cudaFree(W); cudaFree(W2); cudaFree(b);
    mg_plan_destroy(plan);
}

Test(gpu_shortcut, modes_graph_cache, .timeout = 300) {
    MG_TEST_NEED_GPU();
    graph_cache_run(MG_KERNEL_AUTO);
    graph_cache_run(0);
}

/* Tail mode rebuilds its two graphs when x, out or m change, and the device graph's handle lives in the parameters of
 * the previous call's classify, which may still be queued: here a host function holds the stream for 50 ms while
 * calls on other x and out buffers rebuild the graphs behind it, each x with a row classify cannot certify (so the
 * queued classify tail-launches its device graph when it finally runs). Every output must equal the full path's. */
static void CUDART_CB hold_stream(void *ms) {
    const struct timespec t = {0, (long)(*(int *)ms) * 1000000L};
    nanosleep(&t, NULL);
}
Test(gpu_shortcut, tail_rebuild_behind_a_queued_call, .timeout = 120) {
    MG_TEST_NEED_GPU();
    const int64_t m = 21, n = 48, k = 80;
    enum { NB = 3 };
    mg_plan_desc d = mg_plan_desc_default();
    d.m = m; d.n = n; d.k = k; d.max_dim = 1; d.precision = MG_PREC_FP32; d.shortcut = 1;
    mg_plan *plan = NULL;
    MG_TEST_OK(mg_plan_create(&plan, &d));
    MG_TEST_OK(mg_plan_set_shortcut_mode(plan, MG_SHORTCUT_TAIL));
    float *x[NB], *out[NB], *ref[NB], *W, *b;
    for (int i = 0; i < NB; i++) {
        MG_TEST_CUDA(cudaMalloc((void **)&x[i], sizeof(float) * (size_t)(m * k)));
        MG_TEST_CUDA(cudaMalloc((void **)&out[i], sizeof(float) * (size_t)m));
        MG_TEST_CUDA(cudaMalloc((void **)&ref[i], sizeof(float) * (size_t)m));
    }
    MG_TEST_CUDA(cudaMalloc((void **)&W, sizeof(float) * (size_t)(n * k)));
    MG_TEST_CUDA(cudaMalloc((void **)&b, sizeof(float) * (size_t)n));
    for (int i = 0; i < NB; i++) MG_TEST_OK(mg_fill_seedlike(x[i], W, b, m, n, k, MG_PREC_FP32, 70 + (uint64_t)i, NULL));
    MG_TEST_CUDA(cudaDeviceSynchronize());
    for (int i = 0; i < NB; i++) put_elems(x[i], (size_t)((3 + 5 * i) * k + 2), 1, MG_PREC_FP32, 3e38f);   /* computed */
    MG_TEST_OK(mg_set_weights(plan, W, b, NULL));
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    /* the references: the full path, stream-ordered and finished before the held calls */
    MG_TEST_OK(mg_plan_set_shortcut(plan, 0));
    for (int i = 0; i < NB; i++) MG_TEST_OK(mg_forward(plan, x[i], ref[i], st));
    MG_TEST_CUDA(cudaStreamSynchronize(st));
    MG_TEST_OK(mg_plan_set_shortcut(plan, 1));
    static int hold_ms = 50;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < NB; i++) MG_TEST_CUDA(cudaMemsetAsync(out[i], 0x3c, sizeof(float) * (size_t)m, st));
        MG_TEST_CUDA(cudaLaunchHostFunc(st, hold_stream, &hold_ms));
        for (int i = 0; i < NB; i++) {
            MG_TEST_OK(mg_forward(plan, x[i], out[i], st));
            cr_expect_eq(mg_plan_shortcut_mode_used(plan), MG_SHORTCUT_TAIL, "call %d ran as %s ('%s')", i,
                         mg_shortcut_mode_name(mg_plan_shortcut_mode_used(plan)), mg_plan_shortcut_fallback(plan));
        }
        MG_TEST_CUDA(cudaStreamSynchronize(st));
        for (int i = 0; i < NB; i++) {
            float h_on[32], h_ref[32];
            MG_TEST_CUDA(cudaMemcpy(h_on, out[i], sizeof(float) * (size_t)m, cudaMemcpyDeviceToHost));
            MG_TEST_CUDA(cudaMemcpy(h_ref, ref[i], sizeof(float) * (size_t)m, cudaMemcpyDeviceToHost));
            int64_t first = -1;
            const size_t diff = count_diff(h_on, h_ref, m, MG_PREC_FP32, &first);
            cr_expect_eq(diff, 0, "round %d call %d: %zu rows differ from the full path (first %lld)", round, i, diff,
                         (long long)first);
        }
    }
    MG_TEST_CUDA(cudaStreamDestroy(st));
    for (int i = 0; i < NB; i++) {
        cudaFree(x[i]);
        cudaFree(out[i]);
        cudaFree(ref[i]);
    }
    cudaFree(W);
    cudaFree(b);
    mg_plan_destroy(plan);
}

/* A caller that captures its own stream: the short-circuit cannot wait on the device inside a capture, so it runs
 * the (capturable) full path; replaying the caller's graph must give the full computation's bits. */
Test(gpu_shortcut, caller_stream_capture, .timeout = 300) {
    MG_TEST_NEED_GPU();
    const int64_t m = 19, n = 40, k = 72;
    mg_plan_desc d = mg_plan_desc_default();
    d.m = m; d.n = n; d.k = k; d.max_dim = 1; d.precision = MG_PREC_FP32; d.shortcut = 1;
    mg_plan *plan = NULL;
    MG_TEST_OK(mg_plan_create(&plan, &d));
    float *x, *W, *b, *o1, *o2;
    MG_TEST_CUDA(cudaMalloc((void **)&x, sizeof(float) * (size_t)(m * k)));
    MG_TEST_CUDA(cudaMalloc((void **)&W, sizeof(float) * (size_t)(n * k)));
    MG_TEST_CUDA(cudaMalloc((void **)&b, sizeof(float) * (size_t)n));
    MG_TEST_CUDA(cudaMalloc((void **)&o1, sizeof(float) * (size_t)m));
    MG_TEST_CUDA(cudaMalloc((void **)&o2, sizeof(float) * (size_t)m));
    MG_TEST_OK(mg_fill_seedlike(x, W, b, m, n, k, MG_PREC_FP32, 77, NULL));
    MG_TEST_CUDA(cudaDeviceSynchronize());
    put_elems(x, (size_t)(4 * k), (size_t)k, MG_PREC_FP32, 3e38f);
    put_elems(x, (size_t)(9 * k + 2), 1, MG_PREC_FP32, NAN);
    MG_TEST_OK(mg_set_weights(plan, W, b, NULL));
    MG_TEST_OK(mg_plan_set_shortcut(plan, 0));
    MG_TEST_OK(mg_forward(plan, x, o1, NULL));
    MG_TEST_OK(mg_plan_set_shortcut(plan, 1));
    MG_TEST_CUDA(cudaMemset(o2, 0x3c, sizeof(float) * (size_t)m));
    MG_TEST_CUDA(cudaDeviceSynchronize());
    cudaStream_t s;
    MG_TEST_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    MG_TEST_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    const mg_status fst = mg_forward(plan, x, o2, s);
    MG_TEST_CUDA(cudaStreamEndCapture(s, &g));
    cr_assert_eq(fst, MG_OK, "mg_forward under capture: %s (%s)", mg_strerror(fst), mg_last_error());
    cr_assert_eq(mg_plan_shortcut_mode_used(plan), -1, "under capture the full path must run");
    MG_TEST_CUDA(cudaGraphInstantiate(&ge, g, 0));
    MG_TEST_CUDA(cudaGraphLaunch(ge, s));
    MG_TEST_CUDA(cudaStreamSynchronize(s));
    float h1[19], h2[19];
    MG_TEST_CUDA(cudaMemcpy(h1, o1, sizeof h1, cudaMemcpyDeviceToHost));
    MG_TEST_CUDA(cudaMemcpy(h2, o2, sizeof h2, cudaMemcpyDeviceToHost));
    int64_t first = -1;
    cr_expect_eq(count_diff(h2, h1, m, MG_PREC_FP32, &first), 0, "row %lld differs", (long long)first);
    cr_expect(isnan(h2[9]), "row 9 (NaN in x) must be NaN");
    cudaGraphExecDestroy(ge);
    cudaGraphDestroy(g);
    MG_TEST_CUDA(cudaStreamDestroy(s));
    cudaFree(x); cudaFree(W); cudaFree(b); cudaFree(o1); cudaFree(o2);
    mg_plan_destroy(plan);
}
