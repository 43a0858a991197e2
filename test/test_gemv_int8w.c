/* test_gemv_int8w.c (suite "gemv_int8w", CPU only): kernel 11 (kernels/11_gemv_int8w.cu, the small-M gemv over W's
 * s8 slices with x in fp32) without a GPU: the decode its inner loop runs (src/ozaki.h mg_oz_decode, the same function
 * on the device), its W-only guard (mg_oz_bound_w) against the three-product one, and its plan through the registry.
 * test/test_gpu.c (gpu_int8x3) runs it on the GPU: adversarial inputs, determinism, M = 1..13, PDL on / off, graphs.
 */
#include "test_ozaki_common.h"

#include <stdlib.h>

#include "mg_kernel.h"
#include "ozaki.h"

/* Every pair of slice bytes decodes to T = 256 hi + lo exactly, whatever the upper 16 bits of the gathered word hold
 * (the kernel's PRMT leaves other slice bytes there). */
Test(gemv_int8w, decode_every_digit_pair) {
    const uint32_t junk[3] = {0u, 0xffff0000u, 0x5a3c0000u};
    for (int hi = -128; hi <= 127; hi++)
        for (int lo = -128; lo <= 127; lo++)
            for (int j = 0; j < 3; j++) {
                const uint32_t pair = (uint32_t)(uint8_t)lo | (uint32_t)(uint8_t)hi << 8 | junk[j];
                const float t = mg_oz_decode(pair);
                cr_assert(t == (float)(256 * hi + lo), "hi %d lo %d (word %08x): %.9g", hi, lo, pair, (double)t);
            }
    /* through the slicing: w -> (hi, lo) -> T, and |w - T u| within the documented (1/2 + 2^-9) u */
    const float vs[] = {1.f, -1.f, 0.5f, 0.123456f, -0.987654f, 3e-5f, 0.f};
    const float sigma = mg_oz_sigma(1.f), u = mg_oz_unit(sigma);
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
        int8_t h, l;
        mg_oz_slice1(vs[i], sigma, &h, &l);
        const float t = mg_oz_decode((uint32_t)(uint8_t)l | (uint32_t)(uint8_t)h << 8);
        cr_expect(fabs((double)vs[i] - (double)t * u) <= (0.5 + 1.0 / 512) * u, "w %g: T %g, residual %g (u %g)",
                  (double)vs[i], (double)t, (double)vs[i] - (double)t * u, (double)u);
    }
}

/* ---- the W-only guard ------------------------------------------------------------------------------------------ */

/* One x row's statistics and its route under guard g (through the CPU reference of the pre-pass). */
static int route_w(const float *x, int64_t k, mg_oz_wstats w, int g, double *bound_w, double *bound_x3) {
    float u = 0.f, am = 0.f;
    double n2 = 0.0;
    int nf = 0, flag = -1, list = -1, count = 0;
    mg_oz_slice_args a = {0};
    a.src = x; a.rows = 1; a.cols = k; a.u = &u; a.amax = &am; a.n2 = &n2; a.nonfinite = &nf;
    a.w = w; a.flag = &flag; a.list = &list; a.count = &count; a.guard = g;
    mg_oz_slice_ref(&a);
    cr_assert_eq(count, flag != MG_OZ_PASS);
    if (bound_w) *bound_w = mg_oz_bound_w(k, am, n2, w);
    if (bound_x3) *bound_x3 = mg_oz_bound(k, am, n2, u, w);
    return flag;
}

/* Seed-like headline rows: the W-only bound is 3.6e-5 (2.4x inside tau), about 0.55x the three-product bound (x is
 * exact and no lo*lo term is dropped). It is never above the three-product bound. */
Test(gemv_int8w, guard_w_headline) {
    const mg_oz_wstats w = oz_headline_w();
    for (uint64_t seed = 1; seed <= 5; seed++) {
        float *x = oz_seedlike_x(8192, seed);
        double bw, b3;
        cr_expect_eq(route_w(x, 8192, w, MG_OZ_GUARD_W, &bw, &b3), MG_OZ_PASS, "seed %llu: bound %g",
                     (unsigned long long)seed, bw);
        cr_expect(bw > 3.4e-5 && bw < 3.8e-5, "seed %llu: W-only bound %g, notes/19 section 8 gives 3.6e-5",
                  (unsigned long long)seed, bw);
        cr_expect(bw < 0.6 * b3, "seed %llu: W-only bound %g not below 0.6 x the three-product %g",
                  (unsigned long long)seed, bw, b3);
        free(x);
    }
}

/* x ~ U[0, c): the W-only guard passes up to c ~ 2.38 (the three-product one up to 1.30); a spike of 3x passes, 30x
 * and more fail (its single term alone is then above tau), NaN / inf and K beyond the slices' limit are flagged as
 * such. Where the three-product guard passes, this one does too (checked on every row here). */
Test(gemv_int8w, guard_w_decisions) {
    const mg_oz_wstats w = oz_headline_w();
    const struct { float scale, spike; int want; } cases[] = {
        {1.f, 0.f, MG_OZ_PASS},   {1.3f, 0.f, MG_OZ_PASS},  {2.3f, 0.f, MG_OZ_PASS},  {2.5f, 0.f, MG_OZ_RANGE},
        {4.f, 0.f, MG_OZ_RANGE},  {1.f, 3.f, MG_OZ_PASS},   {1.f, 30.f, MG_OZ_RANGE}, {1.f, 1e3f, MG_OZ_RANGE},
        {1.f, 1e6f, MG_OZ_RANGE}, {1.f, NAN, MG_OZ_NONFINITE}, {1.f, -INFINITY, MG_OZ_NONFINITE},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        float *x = oz_seedlike_x(8192, 40 + i);
        for (int c = 0; c < 8192; c++) x[c] *= cases[i].scale;
        if (cases[i].spike != 0.f) x[777] = cases[i].spike;
        double bw, b3;
        const int r = route_w(x, 8192, w, MG_OZ_GUARD_W, &bw, &b3);
        cr_expect_eq(r, cases[i].want, "U[0, %g) spike %g: route %d, bound %g", (double)cases[i].scale,
                     (double)cases[i].spike, r, bw);
        if (route_w(x, 8192, w, MG_OZ_GUARD_X3, NULL, NULL) == MG_OZ_PASS)
            cr_expect_eq(r, MG_OZ_PASS, "U[0, %g): the three-product guard passes, the W-only one does not",
                         (double)cases[i].scale);
        free(x);
    }
    /* K: every row is flagged past the slices' limit (mg_oz_prepare_w makes none there); an all-zero row isolates it */
    cr_expect_eq(mg_oz_route_g(MG_OZ_GUARD_W, MG_OZ_K_MAX, 0, 0.f, 0.0, 0.f, w), MG_OZ_PASS);
    cr_expect_eq(mg_oz_route_g(MG_OZ_GUARD_W, MG_OZ_K_MAX + 1, 0, 0.f, 0.0, 0.f, w), MG_OZ_KLIMIT);
    cr_expect_eq(mg_oz_route_g(MG_OZ_GUARD_W, 1000, 1, 0.f, 0.0, 0.f, w), MG_OZ_NONFINITE);
}

/* ---- the plan ------------------------------------------------------------------------------------------------- */

static const mg_kernel *kernel11(void) {
    const mg_kernel *k = mg_registry_find(11);
    cr_assert(k && k->ops && !strcmp(k->name, "gemv_int8w"), "registry has no kernel 11 'gemv_int8w'");
    return k;
}

static mg_status plan11(int m, int n, int k, int dim, unsigned align, const mg_options *o, mg_launch_plan *lp) {
    const mg_problem p = {m, n, k, dim, MG_PREC_FP32, align};
    memset(lp, 0, sizeof *lp);
    lp->p = p;
    return kernel11()->ops->plan(&p, NULL, o, lp);
}

Test(gemv_int8w, registry_row) {
    const mg_kernel *k = kernel11();
    cr_expect_eq(k->precisions, 1u << MG_PREC_FP32);
    cr_expect_eq(k->min_sm, 90);
    cr_expect_eq(k->auto_rank, 0);
    cr_expect_eq(k->baseline, 0);
    cr_expect(k->auto_fits == mg_gemv_i8_auto_fits);
    cr_expect(strstr(k->device_fn, "gemv_i8_kernel") != NULL, "%s", k->device_fn);
    mg_problem p = {8, 8192, 8192, 1, MG_PREC_TF32, 0};
    cr_expect_eq(k->ops->supports(&p, 90), MG_ERR_UNSUPPORTED);
    cr_expect(strstr(mg_last_error(), "fp32 mode only") != NULL, "%s", mg_last_error());
    p.prec = MG_PREC_FP32;
    cr_expect_eq(k->ops->supports(&p, 90), MG_OK);
    cr_expect_eq(k->ops->supports(&p, 80), MG_ERR_UNSUPPORTED);
    /* auto's range: fp32, M <= 8, K 1024 .. 66052 */
    const struct { int m, k, prec, want; } fits[] = {
        {1, 8192, MG_PREC_FP32, 1}, {8, 8192, MG_PREC_FP32, 1},  {9, 8192, MG_PREC_FP32, 0},
        {4, 1023, MG_PREC_FP32, 0}, {4, 1024, MG_PREC_FP32, 1},  {4, 66052, MG_PREC_FP32, 1},
        {4, 66053, MG_PREC_FP32, 0}, {4, 8192, MG_PREC_BF16, 0},
    };
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++) {
        const mg_problem q = {fits[i].m, 8192, fits[i].k, 1, (mg_precision)fits[i].prec, 0};
        cr_expect_eq(mg_gemv_i8_auto_fits(&q), fits[i].want, "M=%d K=%d prec %d", fits[i].m, fits[i].k, fits[i].prec);
    }
    cr_expect_eq(mg_gemv_i8_auto_fits(NULL), 0);
}

/* Partial rows: one per 32 columns (max_dim 1) or per 8 x rows (max_dim 0), plus the fallback's; the workspace is the
 * pre-pass's without x slices; the instantiation (MT) and the x loads follow M, K and x's alignment; PDL follows the
 * options; K = 0 and K > 66052 plan no products; an empty output plans nothing; a max over an empty dimension is an
 * error. */
Test(gemv_int8w, plan_rows_workspace_and_choices) {
    mg_launch_plan lp;
    const unsigned al = MG_ALIGN_X16 | MG_ALIGN_W16;
    mg_oz_xlayout xl;
    for (int m = 1; m <= 16; m++)
        for (int dim = 0; dim <= 1; dim++) {
            cr_assert_eq(plan11(m, 8192, 8192, dim, al, NULL, &lp), MG_OK, "%s", mg_last_error());
            cr_expect_eq(lp.partial_rows, (dim == 1 ? 256 : (m + 7) / 8) + 1, "m=%d md%d: %d rows", m, dim,
                         lp.partial_rows);
            mg_oz_xlayout_make(m, 8192, 0, &xl);
            cr_expect_eq(lp.ws_bytes, xl.bytes, "m=%d: ws %zu", m, lp.ws_bytes);
            const int mt = m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8;
            char want[32];
            snprintf(want, sizeof want, "MT %d,", mt);
            cr_expect(strstr(lp.summary, want) != NULL, "m=%d: %s", m, lp.summary);
            cr_expect(strstr(lp.summary, "16-byte x loads") && strstr(lp.summary, "PDL"), "%s", lp.summary);
        }
    /* 4-byte x loads: K % 4 != 0, or x not 16-byte aligned */
    cr_assert_eq(plan11(3, 1030, 2047, 1, al, NULL, &lp), MG_OK);
    cr_expect(strstr(lp.summary, "4-byte x loads") != NULL, "%s", lp.summary);
    cr_expect_eq(lp.partial_rows, 33 + 1);
    cr_assert_eq(plan11(3, 1030, 2048, 1, MG_ALIGN_W16, NULL, &lp), MG_OK);
    cr_expect(strstr(lp.summary, "4-byte x loads") != NULL, "%s", lp.summary);
    /* PDL off through the options */
    mg_options o = mg_options_default();
    o.pdl = 0;
    cr_assert_eq(plan11(3, 1030, 2048, 0, al, &o, &lp), MG_OK);
    cr_expect(strstr(lp.summary, "PDL") == NULL, "%s", lp.summary);
    /* the steps */
    cr_assert_eq(plan11(5, 70, 0, 1, al, NULL, &lp), MG_OK);
    cr_expect(strstr(lp.summary, "K = 0") != NULL, "%s", lp.summary);
    cr_assert_eq(plan11(5, 70, 100000, 0, al, NULL, &lp), MG_OK);
    cr_expect(strstr(lp.summary, "exact fallback") != NULL, "%s", lp.summary);
    cr_expect_eq(lp.partial_rows, 1 + 1);
    cr_assert_eq(plan11(0, 70, 64, 1, al, NULL, &lp), MG_OK);
    cr_expect(lp.ws_bytes == 0 && strstr(lp.summary, "nothing to launch"), "%zu: %s", lp.ws_bytes, lp.summary);
    cr_expect_eq(plan11(0, 70, 64, 0, al, NULL, &lp), MG_ERR_SHAPE);
    cr_expect_eq(plan11(5, 0, 64, 1, al, NULL, &lp), MG_ERR_SHAPE);
}

/* The bounds cover every plan for a batch m <= M, both max_dims, and naive's (the runner for W with NaN / inf). */
Test(gemv_int8w, plans_fit_bounds_for_every_m) {
    const mg_kernel *k = kernel11();
    const int shapes[][3] = {{8, 8192, 8192}, {13, 1030, 2047}, {40, 50, 0}, {9, 40, 100000}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int dim = 0; dim <= 1; dim++) {
            const mg_problem p = {shapes[si][0], shapes[si][1], shapes[si][2], dim, MG_PREC_FP32, 0};
            int rows = 0, nrows = 0;
            size_t ws = 0, nws = 0;
            k->ops->bounds(&p, NULL, &rows, &ws);
            mg_ops_naive.bounds(&p, NULL, &nrows, &nws);
            cr_expect(nrows <= rows && nws <= ws, "naive's %d rows %zu bytes outside %d %zu", nrows, nws, rows, ws);
            for (int m = dim == 1 ? 0 : 1; m <= p.m; m++) {
                mg_launch_plan lp;
                cr_assert_eq(plan11(m, p.n, p.k, dim, 0, NULL, &lp), MG_OK, "%s", mg_last_error());
                cr_expect(lp.partial_rows <= rows && lp.ws_bytes <= ws, "%dx%dx%d md%d m=%d: %d rows %zu bytes, bounds "
                          "%d %zu", p.m, p.n, p.k, dim, m, lp.partial_rows, lp.ws_bytes, rows, ws);
            }
        }
}
