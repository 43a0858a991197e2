/* test_ozaki.c (suite "ozaki", CPU only): the int8 split-precision layer's policy and element math (src/ozaki.h, the
 * CPU reference src/ozaki.c) and kernel 9's plan, without a GPU. The device kernels run the same element functions;
 * test/test_gpu.c (gpu_int8x3) checks them bit for bit against mg_oz_slice_ref on the GPU.
 *   digits / slicing   the balanced digits for every T, hand-checked scale, T, hi, lo (ties to even), the residual
 *                      bound, zero padding, all-zero, non-finite and subnormal rows
 *   combine            the digit algebra (65536 hh + 256 cr + ll = sum T_x T_w, exactly) and a hand value
 *   guard              the notes' decisions: seed-like headline rows pass (bound ~6.5e-5 < 8.5e-5), U[0, 1.2) passes
 *                      and U[0, 1.5) fails (the notes' threshold 1.30), spikes 1e3..1e6 fail, negative / mixed-sign
 *                      rows and subnormal rows pass, K = 1 passes, K = 66053 and 100000 are flagged, a W with an
 *                      outlier row fails every row
 *   routing            which rows go to the fallback, as documented: flags and the ascending list of mg_oz_slice_ref
 *   plan               kernel 9's partial rows (combine rows + the fallback row), steps, workspace within its bounds
 */
#include "test_ozaki_common.h"

#include <float.h>
#include <stdlib.h>

#include "mg_kernel.h"
#include "ozaki.h"

/* ---- helpers ------------------------------------------------------------------------------------------------------ */

/* Host buffers for mg_oz_slice_ref over rows x cols, with the guard on when w is non-NULL. */
typedef struct {
    mg_oz_slice_args a;
    int64_t ld;
} slice_buf;

static void sb_run(slice_buf *s, const float *src, int64_t rows, int64_t cols, const mg_oz_wstats *w) {
    memset(s, 0, sizeof *s);
    s->ld = mg_oz_ld(cols);
    mg_oz_slice_args *a = &s->a;
    a->src = src;
    a->rows = rows;
    a->cols = cols;
    a->kpad = a->ld = s->ld;
    a->hi = calloc((size_t)(rows * s->ld) + 1, 1);
    a->lo = calloc((size_t)(rows * s->ld) + 1, 1);
    a->u = calloc((size_t)rows + 1, sizeof(float));
    a->amax = calloc((size_t)rows + 1, sizeof(float));
    a->n2 = calloc((size_t)rows + 1, sizeof(double));
    a->nonfinite = calloc((size_t)rows + 1, sizeof(int));
    if (w) {
        a->w = *w;
        a->flag = calloc((size_t)rows + 1, sizeof(int));
        a->list = calloc((size_t)rows + 1, sizeof(int));
        a->count = calloc(1, sizeof(int));
    }
    cr_assert(a->hi && a->lo && a->u && a->amax && a->n2 && a->nonfinite && (!w || (a->flag && a->list && a->count)));
    mg_oz_slice_ref(a);
}

static void sb_free(slice_buf *s) {
    free(s->a.hi); free(s->a.lo); free(s->a.u); free(s->a.amax); free(s->a.n2); free(s->a.nonfinite);
    free(s->a.flag); free(s->a.list); free(s->a.count);
}

/* The route of one row (host), with its bound in *bound. */
static int route_row(const float *v, int64_t k, mg_oz_wstats w, double *bound) {
    slice_buf s;
    sb_run(&s, v, 1, k, &w);
    const int r = s.a.flag[0];
    if (bound) *bound = mg_oz_bound(k, s.a.amax[0], s.a.n2[0], s.a.u[0], w);
    sb_free(&s);
    return r;
}

/* ---- digits and slicing ------------------------------------------------------------------------------------------- */

Test(ozaki, digits_every_t) {
    for (int t = -MG_OZ_TOP; t <= MG_OZ_TOP; t++) {
        int h, l;
        mg_oz_digits(t, &h, &l);
        cr_assert(h >= -127 && h <= 127 && l >= -128 && l <= 127 && 256 * h + l == t, "t=%d: hi %d lo %d", t, h, l);
        cr_assert_eq(h, (int)floor((t + 128) / 256.0), "t=%d: hi %d is not floor((t + 128) / 256)", t, h);
    }
    const int cases[][3] = {{32639, 127, 127}, {-32639, -127, -127}, {128, 1, -128}, {127, 0, 127},
                            {-128, 0, -128},   {-129, -1, 127},      {0, 0, 0},      {16320, 64, -64}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int h, l;
        mg_oz_digits(cases[i][0], &h, &l);
        cr_expect(h == cases[i][1] && l == cases[i][2], "t=%d: (%d, %d), expected (%d, %d)", cases[i][0], h, l,
                  cases[i][1], cases[i][2]);
    }
}

/* By hand: amax 1 gives sigma = 32639 exactly; 0.5 -> X = 16319.5, a tie, rounds to the even 16320 = 64 * 256 - 64;
 * 0.25 -> 8159.75 -> 8160 = 32 * 256 - 32; 1e-3 -> 32.639 -> 33 = (0, 33). The row max maps to T = 32639 = (127, 127)
 * (notes section 1: the arbitrary scale keeps every bit; a power of two would give 0.9999999 -> T = 16384). */
Test(ozaki, slice_hand_cases) {
    const float row[8] = {1.0f, 0.5f, 0.25f, 1e-3f, -1.0f, 0.0f, -0.25f, 3.0e-5f};
    const int8_t want_hi[8] = {127, 64, 32, 0, -127, 0, -32, 0}, want_lo[8] = {127, -64, -32, 33, -127, 0, 32, 1};
    slice_buf s;
    sb_run(&s, row, 1, 8, NULL);
    cr_assert_eq(s.ld, 16);
    cr_assert_eq(s.a.u[0], 1.0f / 32639.0f, "u = %.9g", s.a.u[0]);
    cr_assert_eq(s.a.amax[0], 1.0f);
    for (int c = 0; c < 8; c++)
        cr_expect(s.a.hi[c] == want_hi[c] && s.a.lo[c] == want_lo[c], "[%d] = %g: (%d, %d), expected (%d, %d)", c,
                  row[c], s.a.hi[c], s.a.lo[c], want_hi[c], want_lo[c]);
    for (int c = 8; c < 16; c++) cr_expect(s.a.hi[c] == 0 && s.a.lo[c] == 0, "padding [%d] not zero", c);
    sb_free(&s);
    /* the headline row's max: 0.9999999f -> sigma = fp32(32639 / 0.9999999f) = 32639.00390625, T = 32639 */
    const float sig = mg_oz_sigma(0.9999999f);
    cr_expect_eq(sig, 32639.00390625f, "sigma = %.9g", sig);
    int8_t h, l;
    mg_oz_slice1(0.9999999f, sig, &h, &l);
    cr_expect(h == 127 && l == 127, "0.9999999: (%d, %d)", h, l);
    mg_oz_slice1(-0.9999999f, sig, &h, &l);
    cr_expect(h == -127 && l == -127, "-0.9999999: (%d, %d)", h, l);
}

/* Random rows at many scales: the digits reconstruct T, T u is within (1/2 + 2^-7) u of v (the notes' (1/2 + 2^-9) u
 * plus the roundings of sigma and u), |T| <= 32639 and the row max reaches it, padding is zero. */
Test(ozaki, slice_reconstructs_rows) {
    const int64_t k = 37;
    const float scales[] = {1.0f, 3.7e-3f, 1e-30f, 2.5e4f, 1e35f, 1e-36f};
    float v[37];
    for (size_t si = 0; si < sizeof scales / sizeof scales[0]; si++) {
        for (int64_t c = 0; c < k; c++)
            v[c] = scales[si] * mg_rng_uniform(11 + si, 9, (uint64_t)c, -1.f, 1.f);
        slice_buf s;
        sb_run(&s, v, 1, k, NULL);
        const double u = s.a.u[0];
        cr_assert(u > 0.0 && !s.a.nonfinite[0], "scale %g: u = %g", scales[si], u);
        int tmax = 0;
        for (int64_t c = 0; c < s.ld; c++) {
            const int t = 256 * s.a.hi[c] + s.a.lo[c];
            if (c >= k) {
                cr_expect_eq(t, 0, "scale %g: padding [%lld] = %d", scales[si], (long long)c, t);
                continue;
            }
            cr_assert(s.a.hi[c] >= -127 && s.a.hi[c] <= 127 && abs(t) <= MG_OZ_TOP);
            if (abs(t) > tmax) tmax = abs(t);
            const double err = fabs((double)v[c] - t * u);
            cr_expect(err <= (0.5 + 0x1p-7) * u, "scale %g [%lld]: |v - T u| = %g u", scales[si], (long long)c, err / u);
        }
        /* rows above ~3.8e-34 use the full range; below, sigma is clamped at 2^126 */
        if (scales[si] > 1e-33f) cr_expect_eq(tmax, MG_OZ_TOP, "scale %g: max |T| %d", scales[si], tmax);
        sb_free(&s);
    }
}

Test(ozaki, special_rows) {
    const int64_t k = 20;
    float rows[5][20];
    for (int c = 0; c < k; c++) {
        rows[0][c] = 0.0f;                                                  /* all zero */
        rows[1][c] = (float)(mg_rng_u01(3, 1, (uint64_t)c) * 1e-40);       /* subnormal */
        rows[2][c] = mg_rng_u01(4, 1, (uint64_t)c);
        rows[3][c] = mg_rng_u01(5, 1, (uint64_t)c);
        rows[4][c] = -0.0f;
    }
    rows[2][7] = NAN;
    rows[3][19] = -INFINITY;
    slice_buf s;
    sb_run(&s, &rows[0][0], 5, k, NULL);
    const int8_t *hi = s.a.hi, *lo = s.a.lo;
    for (int r = 0; r < 5; r++) {
        if (r == 1) continue;
        for (int64_t c = 0; c < s.ld; c++)
            cr_expect(hi[r * s.ld + c] == 0 && lo[r * s.ld + c] == 0, "row %d [%lld]: (%d, %d), expected zeros", r,
                      (long long)c, hi[r * s.ld + c], lo[r * s.ld + c]);
        cr_expect_eq(s.a.u[r], 0.0f, "row %d: u = %g, expected 0", r, s.a.u[r]);
    }
    cr_expect(!s.a.nonfinite[0] && !s.a.nonfinite[1] && s.a.nonfinite[2] && s.a.nonfinite[3] && !s.a.nonfinite[4]);
    /* subnormal row: the scale is clamped to 2^126, the unit is 2^-126, every T is -1, 0 or 1 */
    cr_expect_eq(s.a.u[1], 0x1p-126f, "subnormal row: u = %g", s.a.u[1]);
    for (int64_t c = 0; c < k; c++) cr_expect(abs(256 * hi[s.ld + c] + lo[s.ld + c]) <= 1);
    sb_free(&s);
}

/* ---- the combine ---------------------------------------------------------------------------------------------------- */

Test(ozaki, combine) {
    /* by hand: t = 3 * 256 - 5 = 763, s = 0.5 * 0.25 * 256 = 32, y = 763 * 32 + 1 = 24417 */
    cr_expect_eq(mg_oz_scale(0.5f, 0.25f), 32.0f);
    cr_expect_eq(mg_oz_combine(3, -5, 32.0f, 1.0f), 24417.0f);
    /* the 3-product y (hi hi, the cross terms; lo lo dropped) is within the dropped u_x u_w sum lo_x lo_w (+ fp32
     * roundings) of the sliced operands' exact product, sum T_x T_w with T = 256 hi + lo */
    const int64_t k = 300;
    float x[300], w[300];
    for (int c = 0; c < k; c++) {
        x[c] = mg_rng_uniform(21, 1, (uint64_t)c, -2.f, 3.f);
        w[c] = mg_rng_uniform(21, 2, (uint64_t)c, -0.05f, 0.05f);
    }
    slice_buf sx, sw;
    sb_run(&sx, x, 1, k, NULL);
    sb_run(&sw, w, 1, k, NULL);
    int64_t hh = 0, cr = 0, ll = 0, tt = 0;
    for (int c = 0; c < k; c++) {
        const int64_t hx = sx.a.hi[c], lx = sx.a.lo[c], hw = sw.a.hi[c], lw = sw.a.lo[c];
        hh += hx * hw;
        cr += hx * lw + lx * hw;
        ll += lx * lw;
        tt += (256 * hx + lx) * (256 * hw + lw);
    }
    const float b = 0.125f;
    const double ux = sx.a.u[0], uw = sw.a.u[0];
    const double exact = (double)tt * ux * uw + b, dropped = (double)ll * ux * uw;
    const float y = mg_oz_combine((int32_t)hh, (int32_t)cr, mg_oz_scale(sx.a.u[0], sw.a.u[0]), b);
    cr_expect(fabs((double)y - (exact - dropped)) <= 4 * FLT_EPSILON * (fabs(exact) + 1.0), "y %.9g, exact %.9g, "
              "dropped %.3g", (double)y, exact, dropped);
    sb_free(&sx);
    sb_free(&sw);
}

/* ---- the guard ----------------------------------------------------------------------------------------------------- */

/* Seed-like headline rows pass, with the bound the notes give (6.55e-5 against tau = 8.5e-5: a 1.3x margin). */
Test(ozaki, guard_passes_seedlike_headline) {
    const mg_oz_wstats w = oz_headline_w();
    cr_expect(w.a_w > 3.3e-7 && w.a_w < 3.4e-7, "A_W = %g (1/sqrt(8192)/32639 = 3.385e-7)", w.a_w);
    for (uint64_t seed = 1; seed <= 5; seed++) {
        float *x = oz_seedlike_x(8192, seed);
        double bound;
        cr_expect_eq(route_row(x, 8192, w, &bound), MG_OZ_PASS, "seed %llu: bound %g", (unsigned long long)seed, bound);
        cr_expect(bound > 6.2e-5 && bound < 6.9e-5, "seed %llu: bound %g, the notes give 6.55e-5",
                  (unsigned long long)seed, bound);
        for (int c = 0; c < 8192; c++) x[c] = -x[c];   /* negative x: the digits are symmetric */
        cr_expect_eq(route_row(x, 8192, w, NULL), MG_OZ_PASS, "seed %llu: negative row flagged", (unsigned long long)seed);
        for (int c = 0; c < 8192; c++) x[c] = 2.f * (-x[c]) - 1.f;   /* mixed sign U(-1, 1) */
        cr_expect_eq(route_row(x, 8192, w, NULL), MG_OZ_PASS, "seed %llu: mixed-sign row flagged", (unsigned long long)seed);
        free(x);
    }
}

/* The notes' thresholds (3 products, headline W): x ~ U[0, c) passes for c <= 1.30. */
Test(ozaki, guard_scale_threshold) {
    const mg_oz_wstats w = oz_headline_w();
    const float cs[] = {1.2f, 1.5f, 2.f, 4.f};
    const int want[] = {MG_OZ_PASS, MG_OZ_RANGE, MG_OZ_RANGE, MG_OZ_RANGE};
    for (int i = 0; i < 4; i++) {
        float *x = oz_seedlike_x(8192, 9);
        for (int c = 0; c < 8192; c++) x[c] *= cs[i];
        double bound;
        cr_expect_eq(route_row(x, 8192, w, &bound), want[i], "U[0, %g): route %d, bound %g", cs[i],
                     route_row(x, 8192, w, NULL), bound);
        free(x);
    }
}

/* One element 1e3 .. 1e6 times the rest: every such row fails (int8 would be 150-3300x over the bar there). */
Test(ozaki, guard_flags_spikes) {
    const mg_oz_wstats w = oz_headline_w();
    const float fs[] = {3.f, 1e3f, 1e4f, 1e5f, 1e6f};
    for (int i = 0; i < 5; i++) {
        float *x = oz_seedlike_x(8192, 10 + i);
        x[777] = fs[i];
        double bound;
        cr_expect_eq(route_row(x, 8192, w, &bound), MG_OZ_RANGE, "spike %g: bound %g", fs[i], bound);
        free(x);
    }
}

/* Subnormal rows (every T is 0 or +-1, the error is the dot product itself, < 1e-37) and every other element
 * subnormal (half the row is a seed-like row) pass. */
Test(ozaki, guard_subnormal_rows) {
    const mg_oz_wstats w = oz_headline_w();
    float *x = oz_seedlike_x(8192, 17);
    for (int c = 0; c < 8192; c += 2) x[c] = (float)(x[c] * 1e-40);
    double bound;
    cr_expect_eq(route_row(x, 8192, w, &bound), MG_OZ_PASS, "half subnormal: bound %g", bound);
    for (int c = 1; c < 8192; c += 2) x[c] = (float)(x[c] * 1e-40);
    cr_expect_eq(route_row(x, 8192, w, &bound), MG_OZ_PASS, "all subnormal: bound %g", bound);
    cr_expect(bound < 1e-30, "all subnormal: bound %g", bound);
    free(x);
}

/* K = 1 passes through the deterministic bound K M; K beyond the shared accumulator's int32 limit is flagged
 * (66052 is the last K that passes), and a non-finite row is flagged as such whatever K is. */
Test(ozaki, guard_k_limits) {
    /* K = 1, nn.Linear's init: W ~ U(-1, 1) */
    float W1[64], x1 = 0.9999f;
    mg_test_seedlike_f32(NULL, W1, NULL, 0, 64, 1, 3);
    mg_oz_wstats w1;
    cr_assert_eq(oz_wstats_of(W1, 64, 1, &w1), 0);
    double bound;
    cr_expect_eq(route_row(&x1, 1, w1, &bound), MG_OZ_PASS, "K = 1: bound %g", bound);
    const mg_oz_wstats w = oz_headline_w();
    /* an all-zero row (bound 0) isolates the K test */
    cr_expect_eq(mg_oz_route_g(MG_OZ_GUARD_X3, MG_OZ_K_MAX, 0, 0.f, 0.0, 0.f, w), MG_OZ_PASS);
    cr_expect_eq(mg_oz_route_g(MG_OZ_GUARD_X3, MG_OZ_K_MAX + 1, 0, 0.f, 0.0, 0.f, w), MG_OZ_KLIMIT);
    cr_expect_eq(MG_OZ_K_MAX, (int)(2147483647LL / (2 * 127 * 128)));
    float *x = oz_seedlike_x(100000, 23);
    cr_expect_eq(route_row(x, 100000, w, NULL), MG_OZ_KLIMIT, "K = 100000 must be flagged");
    x[5] = NAN;
    cr_expect_eq(route_row(x, 100000, w, NULL), MG_OZ_NONFINITE);
    free(x);
}

/* A W with one outlier row (one element 1e3 x W's max): W's maxima grow, so even the headline's rows fail the guard
 * (they run the exact fallback: correct and slow, as documented). */
Test(ozaki, guard_w_outlier_row_flags_everything) {
    const int64_t n = 64, k = 8192;
    float *W = malloc((size_t)(n * k) * sizeof(float));
    cr_assert_not_null(W);
    mg_test_seedlike_f32(NULL, W, NULL, 0, n, k, 29);
    mg_oz_wstats clean, spiked;
    cr_assert_eq(oz_wstats_of(W, n, k, &clean), 0);
    W[3 * k + 100] = 1e3f / sqrtf((float)k);
    cr_assert_eq(oz_wstats_of(W, n, k, &spiked), 0);
    cr_expect(spiked.a_w > 900 * clean.a_w, "A_W %g vs %g", spiked.a_w, clean.a_w);
    float *x = oz_seedlike_x(k, 30);
    cr_expect_eq(route_row(x, k, clean, NULL), MG_OZ_PASS);
    cr_expect_eq(route_row(x, k, spiked, NULL), MG_OZ_RANGE);
    free(x);
    /* a W row holding a NaN or inf is counted (prepare then hands W to kernel 1) and left out of the maxima */
    W[5 * k + 1] = INFINITY;
    mg_oz_wstats with_inf;
    cr_expect_eq(oz_wstats_of(W, n, k, &with_inf), 1);
    cr_expect_eq(with_inf.a_w, spiked.a_w);
    free(W);
}

/* ---- routing: which rows go to the fallback --------------------------------------------------------------------- */

/* Eight rows of K = 4096 under the headline's W statistics: seed-like, a 1e3 spike, a NaN, all zero, subnormal,
 * negative seed-like, a +inf, U[0, 4). The flagged ones are 1 (range), 2 (non-finite), 6 (non-finite), 7 (range), in
 * that order in the CPU reference's list (the device's list holds the same rows in any order); the fallback row is
 * filled with -inf. */
Test(ozaki, routing_as_documented) {
    const int64_t k = 4096, rows = 8;
    const mg_oz_wstats w = oz_headline_w();   /* K differs from the W's 8192: the bound scales the same way */
    float *x = malloc((size_t)(rows * k) * sizeof(float));
    cr_assert_not_null(x);
    mg_test_seedlike_f32(x, NULL, NULL, rows, 0, k, 31);
    x[1 * k + 9] = 1e3f;
    x[2 * k + 100] = NAN;
    for (int64_t c = 0; c < k; c++) {
        x[3 * k + c] = 0.f;
        x[4 * k + c] = (float)(x[4 * k + c] * 1e-40);
        x[5 * k + c] = -x[5 * k + c];
        x[7 * k + c] *= 4.f;
    }
    x[6 * k + k - 1] = INFINITY;
    const int want[8] = {MG_OZ_PASS, MG_OZ_RANGE, MG_OZ_NONFINITE, MG_OZ_PASS, MG_OZ_PASS, MG_OZ_PASS,
                         MG_OZ_NONFINITE, MG_OZ_RANGE};
    slice_buf s;
    float fill[5] = {1, 2, 3, 4, 5};
    memset(&s, 0, sizeof s);
    sb_run(&s, x, rows, k, &w);
    for (int r = 0; r < rows; r++) cr_expect_eq(s.a.flag[r], want[r], "row %d: route %d, expected %d", r, s.a.flag[r], want[r]);
    cr_assert_eq(*s.a.count, 4);
    const int list[4] = {1, 2, 6, 7};
    for (int i = 0; i < 4; i++) cr_expect_eq(s.a.list[i], list[i], "list[%d] = %d", i, s.a.list[i]);
    /* the fallback row fill, on its own */
    mg_oz_slice_args f = {0};
    float u0;
    f.u = &u0;
    f.fill = fill;
    f.fill_len = 5;
    mg_oz_slice_ref(&f);
    for (int j = 0; j < 5; j++) cr_expect(isinf(fill[j]) && fill[j] < 0, "fill[%d] = %g", j, fill[j]);
    sb_free(&s);
    free(x);
}

/* ---- kernel 9's plan ---------------------------------------------------------------------------------------------- */

static const mg_kernel *kernel9(void) {
    const mg_kernel *k = mg_registry_find(9);
    cr_assert(k && k->ops && !strcmp(k->name, "cublas_int8x3"), "registry has no kernel 9 'cublas_int8x3'");
    return k;
}

static mg_launch_plan plan9(int m, int n, int k, int dim) {
    const mg_kernel *k9 = kernel9();
    mg_problem p = {m, n, k, dim, MG_PREC_FP32, MG_ALIGN_X16 | MG_ALIGN_W16};
    mg_launch_plan lp;
    memset(&lp, 0, sizeof lp);
    lp.p = p;
    cr_assert_eq(k9->ops->plan(&p, NULL, NULL, &lp), MG_OK, "plan %dx%dx%d md%d: %s", m, n, k, dim, mg_last_error());
    return lp;
}

Test(ozaki, kernel9_registry_row) {
    const mg_kernel *k = kernel9();
    cr_expect_eq(k->precisions, 1u << MG_PREC_FP32);
    cr_expect_eq(k->auto_rank, 0);
    cr_expect_eq(k->baseline, 1);
    cr_expect_eq(k->min_sm, 80);
    mg_problem p = {16, 16, 16, 1, MG_PREC_TF32, 0};
    cr_expect_eq(k->ops->supports(&p, 90), MG_ERR_UNSUPPORTED);
    p.prec = MG_PREC_FP32;
    cr_expect_eq(k->ops->supports(&p, 90), MG_OK);
}

/* The combine's partial rows (one per 1024 columns for max_dim 1, per 32 rows for max_dim 0) plus the fallback's;
 * the workspace: the pre-pass (count, x slices of 2 ldk bytes per row, u_x, flags, list) and hh, cr (m x np int32). */
Test(ozaki, kernel9_plan_rows_and_workspace) {
    const mg_kernel *k9 = kernel9();
    mg_launch_plan lp = plan9(1024, 8192, 8192, 1);
    cr_expect_eq(lp.partial_rows, 8 + 1);
    mg_oz_xlayout xl;
    mg_oz_xlayout_make(1024, 8192, 1, &xl);
    cr_expect_eq(xl.xs_off % 256, 0);
    cr_expect_eq(xl.bytes, 256 + 1024 * 16384 + 3 * 4096);
    cr_expect_eq(lp.ws_bytes, xl.bytes + 2 * (size_t)1024 * 8192 * 4, "ws %zu", lp.ws_bytes);
    lp = plan9(1024, 8192, 8192, 0);
    cr_expect_eq(lp.partial_rows, 32 + 1);
    lp = plan9(33, 1001, 63, 0);
    cr_expect_eq(lp.partial_rows, 2 + 1);
    cr_expect_eq(mg_oz_ld(63), 64);
    cr_expect_eq(mg_oz_np(1001), 1004);
    mg_oz_xlayout_make(33, 63, 1, &xl);
    cr_expect_eq(lp.ws_bytes, xl.bytes + 2 * mg_oz_align256((size_t)33 * 1004 * 4));
    /* K = 0 and K > 66052: no slices, no int32 outputs in the workspace */
    mg_oz_xlayout_make(40, 0, 0, &xl);
    cr_expect_eq(plan9(40, 50, 0, 1).ws_bytes, xl.bytes);
    mg_oz_xlayout_make(8, 100000, 0, &xl);
    lp = plan9(8, 40, 100000, 1);
    cr_expect_eq(lp.ws_bytes, xl.bytes);
    cr_expect(strstr(lp.summary, "all rows exact") != NULL, "%s", lp.summary);
    /* bounds cover every batch m <= M in both max_dims */
    for (int dim = 0; dim <= 1; dim++) {
        const int M = 1000, N = 3000, K = 520;
        mg_problem p = {M, N, K, dim, MG_PREC_FP32, MG_ALIGN_X16 | MG_ALIGN_W16};
        int rows = 0;
        size_t ws = 0;
        k9->ops->bounds(&p, NULL, &rows, &ws);
        const int ms[] = {1, 7, 31, 32, 33, 999, 1000};
        for (int i = 0; i < 7; i++) {
            lp = plan9(ms[i], N, K, dim);
            cr_expect(lp.partial_rows <= rows && lp.ws_bytes <= ws, "md%d m=%d: %d rows %zu bytes, bounds %d %zu", dim,
                      ms[i], lp.partial_rows, lp.ws_bytes, rows, ws);
        }
        /* naive is the runner when W holds NaN / inf: its rows are within the bounds too */
        int nrows = 0;
        size_t nws = 0;
        mg_ops_naive.bounds(&p, NULL, &nrows, &nws);
        cr_expect(nrows <= rows && nws <= ws);
    }
    /* an empty output plans nothing; an empty max dimension is an error */
    cr_expect_eq(plan9(0, 10, 10, 1).ws_bytes, 0u);
    mg_problem bad = {0, 10, 10, 0, MG_PREC_FP32, 0};
    mg_launch_plan blp;
    memset(&blp, 0, sizeof blp);
    cr_expect_eq(k9->ops->plan(&bad, NULL, NULL, &blp), MG_ERR_SHAPE);
}

Test(ozaki, fallback_grid) {
    cr_expect_eq(mg_oz_fallback_grid(1024, 8192, 132), 132 * 8);
    cr_expect_eq(mg_oz_fallback_grid(16, 16, 132), 1);
    cr_expect_eq(mg_oz_fallback_grid(17, 33, 132), 2 * 3);
    cr_expect_eq(mg_oz_fallback_grid(0, 0, 0), 1);
}
