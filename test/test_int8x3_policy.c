/* test_int8x3_policy.c (suite "int8x3_policy", CPU only): kernel 10's launch decisions (src/int8x3_policy.h) and its
 * registry row: the tile configuration the build compiled in (tile_configs/wgmma_int8x3.cfg), the steps by K, the
 * tiles, grid and partial rows at the headline, every batch m <= M within the bounds the library allocates once, the
 * workspace regions (the x pre-pass's, shared with kernel 9) in order and disjoint, and kernel 10's plan through its
 * ops agreeing with the policy. The device side: test/test_gpu.c (gpu_int8x3, gpu_kernels). */
#include "test_common.h"

#include "int8x3_policy.h"
#include "mg_kernel.h"
#include "mg_tiles.h"

#define SMS 132

static mg_i8_plan plan_of(long long m, long long n, long long k, int md, int *rows, size_t *ws) {
    const mg_i8_shape c = mg_i8_kernel10();
    mg_i8_plan pl;
    char why[160] = "";
    cr_assert_eq(mg_i8_make_plan(&c, m, n, k, md, 1, SMS, &pl, rows, ws, why, sizeof why), 0, "%lldx%lldx%lld md%d: %s",
                 m, n, k, md, why);
    return pl;
}

/* The configuration: bm = 64 x 2 consumers, bn a width the s8 wgmma has (64, 128, 192: no n256 for integers), bk one
 * 128-byte row, cluster 1, and the stages within the 227 KiB of shared memory (the kernel's SMEM_BYTES formula). */
Test(int8x3_policy, configuration_is_well_formed) {
    const mg_i8_shape c = mg_i8_kernel10();
    cr_expect_eq(c.consumers, 2);
    cr_expect_eq(c.bm, MG_I8_SLAB * c.consumers);
    cr_expect(c.bn == 64 || c.bn == 128 || c.bn == 192, "bn %d", c.bn);
    cr_expect_eq(c.bk, 128);
    cr_expect_eq(c.cluster, 1);
    cr_expect(c.stages >= 2 && c.stages <= 8, "stages %d", c.stages);
    const long smem = 1024 + (long)c.stages * (2 * c.bm + 2 * c.bn) * 128 + (long)c.consumers * 4 * c.bn * 4 +
                      2 * c.stages * 8;
    cr_expect_leq(smem, 227 * 1024, "%ld bytes of shared memory", smem);
    cr_expect_eq(c.bm, 128, "the first version's tile is 128 x 128 (the registry row and notes assume it)");
    cr_expect_eq(c.bn, 128);
}

/* The headline: 8 x 64 tiles on 132 CTAs, 64 k-blocks of 128; max_dim 1: 64 column-tile rows + the fallback's,
 * max_dim 0: 16 slab rows + the fallback's; the workspace is the pre-pass's (16 MiB of slices + 3 x 4 KiB). */
Test(int8x3_policy, headline_plan) {
    for (int md = 0; md <= 1; md++) {
        int rows;
        size_t ws;
        const mg_i8_plan pl = plan_of(1024, 8192, 8192, md, &rows, &ws);
        cr_expect_eq(pl.step, MG_OZ_STEP_INT8);
        cr_expect_eq(pl.vec, 1);
        cr_expect_eq(pl.tiles_m, 8);
        cr_expect_eq(pl.tiles_n, 64);
        cr_expect_eq(pl.nk, 64);
        cr_expect_eq(pl.grid, SMS);
        cr_expect_eq(pl.main_rows, md == 1 ? 64 : 16);
        cr_expect_eq(rows, pl.main_rows + 1, "the fallback's row is the last");
        cr_expect_eq(ws, (size_t)256 + 1024 * 16384 + 3 * 4096);
        cr_expect_eq(pl.fb_grid, mg_oz_fallback_grid(1024, 8192, SMS));
    }
    /* a small problem: fewer tiles than SMs, tails everywhere */
    int rows;
    size_t ws;
    const mg_i8_plan pl = plan_of(77, 333, 999, 0, &rows, &ws);
    cr_expect_eq(pl.tiles_m, 1);
    cr_expect_eq(pl.tiles_n, 3);
    cr_expect_eq(pl.grid, 3);
    cr_expect_eq(pl.nk, 8);
    cr_expect_eq(pl.vec, 0, "K = 999: the scalar pre-pass");
    cr_expect_eq(rows, 2 + 1);
}

/* The steps of src/ozaki.h by shape: K = 0 and K > 66052 run the kernel with no k-blocks (its epilogue: y = b, or -inf
 * for the all-flagged rows) and no slices in the workspace; an empty output plans nothing; a max over an empty
 * dimension is refused. */
Test(int8x3_policy, steps_by_shape) {
    int rows;
    size_t ws;
    mg_oz_xlayout xl;
    mg_i8_plan pl = plan_of(40, 50, 0, 1, &rows, &ws);
    cr_expect_eq(pl.step, MG_OZ_STEP_ZERO);
    cr_expect_eq(pl.nk, 0);
    mg_oz_xlayout_make(40, 0, 0, &xl);
    cr_expect_eq(ws, xl.bytes);
    cr_expect_eq(rows, 1 + 1);
    pl = plan_of(8, 40, MG_OZ_K_MAX, 1, &rows, &ws);
    cr_expect_eq(pl.step, MG_OZ_STEP_INT8);
    cr_expect_eq(pl.nk, (MG_OZ_K_MAX + 127) / 128);
    pl = plan_of(8, 40, MG_OZ_K_MAX + 1, 0, &rows, &ws);
    cr_expect_eq(pl.step, MG_OZ_STEP_FALLBACK);
    cr_expect_eq(pl.nk, 0);
    mg_oz_xlayout_make(8, MG_OZ_K_MAX + 1, 0, &xl);
    cr_expect_eq(ws, xl.bytes, "no slices past the K limit");
    cr_expect_eq(rows, 1 + 1);
    pl = plan_of(0, 10, 10, 1, &rows, &ws);
    cr_expect_eq(pl.step, MG_OZ_STEP_NONE);
    cr_expect_eq(rows, 0);
    cr_expect_eq(ws, 0u);
    const mg_i8_shape c = mg_i8_kernel10();
    char why[160] = "";
    cr_expect_eq(mg_i8_make_plan(&c, 0, 10, 10, 0, 1, SMS, &pl, &rows, &ws, why, sizeof why), -1);
    cr_expect(strstr(why, "empty dimension") != NULL, "%s", why);
    cr_expect_eq(mg_i8_make_plan(&c, 10, -1, 10, 0, 1, SMS, &pl, &rows, &ws, why, sizeof why), -1);
}

/* The workspace regions of a plan: count, x slices (m rows of 2 ldk bytes, when the products run), u_x, flags, list,
 * each 256-byte aligned, in that order, disjoint, inside ws. */
static void expect_disjoint(long long m, long long k, const mg_i8_plan *pl, size_t ws) {
    const mg_oz_xlayout *xl = &pl->xl;
    const size_t xs_bytes = mg_oz_int8_runs(k) ? (size_t)m * 2 * (size_t)xl->ldk : 0;
    const size_t off[5] = {xl->count_off, xl->xs_off, xl->ux_off, xl->flag_off, xl->list_off};
    const size_t len[5] = {sizeof(int), xs_bytes, (size_t)m * 4, (size_t)m * 4, (size_t)m * 4};
    for (int r = 0; r < 5; r++) {
        cr_expect_eq(off[r] % 256, 0u, "m=%lld k=%lld region %d at %zu", m, k, r, off[r]);
        if (r > 0) cr_expect_geq(off[r], off[r - 1] + len[r - 1], "m=%lld k=%lld: region %d overlaps %d", m, k, r, r - 1);
    }
    cr_expect_leq(off[4] + len[4], ws, "m=%lld k=%lld: the list ends past the workspace", m, k);
    cr_expect_eq(xl->ldk, mg_oz_ld(k));
    cr_expect_eq(xl->ldk % 16, 0, "TMA: the slice rows (2 ldk bytes) and the lo half (+ ldk) stay 16-byte aligned");
}

/* Every batch m <= M plans within the bounds (partial rows and workspace), both max_dims, in every step; its regions
 * are disjoint. */
Test(int8x3_policy, plans_fit_bounds_for_every_m) {
    const mg_i8_shape c = mg_i8_kernel10();
    const long long shapes[][3] = {{300, 1000, 1000}, {129, 257, 129}, {64, 8192, 4096}, {40, 50, 0}, {9, 40, 100000}};
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
        for (int md = 0; md <= 1; md++) {
            const long long M = shapes[si][0], n = shapes[si][1], k = shapes[si][2];
            int brows;
            size_t bws;
            mg_i8_bounds(&c, M, n, k, md, &brows, &bws);
            for (long long m = md == 1 ? 0 : 1; m <= M; m++) {
                int rows;
                size_t ws;
                const mg_i8_plan pl = plan_of(m, n, k, md, &rows, &ws);
                cr_expect(rows <= brows && ws <= bws, "%lldx%lldx%lld md%d m=%lld: %d rows %zu bytes, bounds %d %zu", M,
                          n, k, md, m, rows, ws, brows, bws);
                if (pl.step != MG_OZ_STEP_NONE) {
                    expect_disjoint(m, k, &pl, ws);
                    cr_expect_eq(pl.tiles_m, (int)((m + c.bm - 1) / c.bm));
                    cr_expect_eq(pl.main_rows, md == 1 ? (int)((n + c.bn - 1) / c.bn) : (int)((m + 63) / 64));
                }
            }
        }
}

/* The registry row and the ops: fp32 only, sm_90a, not in auto, not a baseline, the tile_config row's name; the plan
 * through the ops (no device: 132 SMs) is the policy's, with kernel 9's pre-pass layout (the GPU tests read the
 * routing at the same offsets in both kernels' workspaces), and the bounds cover naive's (the runner for non-finite W). */
Test(int8x3_policy, registry_row_and_ops) {
    const mg_kernel *k = mg_registry_find(10);
    cr_assert(k && k->ops && !strcmp(k->name, "wgmma_int8x3"), "registry has no kernel 10 'wgmma_int8x3'");
    cr_expect_eq(k->precisions, 1u << MG_PREC_FP32);
    cr_expect_eq(k->min_sm, 90);
    cr_expect_eq(k->auto_rank, 0);
    cr_expect_eq(k->baseline, 0);
    cr_expect_str_eq(k->tile_config, "wgmma_int8x3");
    cr_expect(strstr(k->device_fn, "int8x3_kernel") != NULL, "%s", k->device_fn);
    mg_problem p = {1024, 8192, 8192, 1, MG_PREC_TF32, MG_ALIGN_X16 | MG_ALIGN_W16};
    cr_expect_eq(k->ops->supports(&p, 90), MG_ERR_UNSUPPORTED);
    p.prec = MG_PREC_FP32;
    cr_expect_eq(k->ops->supports(&p, 90), MG_OK);
    cr_expect_eq(k->ops->supports(&p, 80), MG_ERR_UNSUPPORTED);
    const mg_kernel *k9 = mg_registry_find(9);
    cr_assert(k9 && k9->ops);
    for (int md = 0; md <= 1; md++) {
        p.max_dim = md;
        mg_launch_plan lp, lp9;
        memset(&lp, 0, sizeof lp);
        memset(&lp9, 0, sizeof lp9);
        lp.p = lp9.p = p;
        cr_assert_eq(k->ops->plan(&p, NULL, NULL, &lp), MG_OK, "%s", mg_last_error());
        cr_assert_eq(k9->ops->plan(&p, NULL, NULL, &lp9), MG_OK, "%s", mg_last_error());
        int rows;
        size_t ws;
        const mg_i8_plan want = plan_of(p.m, p.n, p.k, md, &rows, &ws);
        const mg_i8_plan *got = (const mg_i8_plan *)lp.priv.bytes;
        cr_expect_eq(lp.partial_rows, rows);
        cr_expect_eq(lp.ws_bytes, ws);
        cr_expect(memcmp(got, &want, sizeof want) == 0, "md%d: the ops' plan differs from the policy's", md);
        mg_oz_xlayout xl;
        mg_oz_xlayout_make(p.m, p.k, 1, &xl);
        cr_expect(memcmp(&got->xl, &xl, sizeof xl) == 0, "md%d: the pre-pass layout is not kernel 9's", md);
        cr_expect_leq(xl.bytes, lp9.ws_bytes);
        cr_expect(strstr(lp.summary, "wgmma_int8x3") != NULL, "%s", lp.summary);
        int brows = 0, nrows = 0;
        size_t bws = 0, nws = 0;
        const mg_device dev = {0, 90, SMS, ""};
        k->ops->bounds(&p, &dev, &brows, &bws);
        mg_ops_naive.bounds(&p, &dev, &nrows, &nws);
        cr_expect(brows >= rows && bws >= ws && brows >= nrows && bws >= nws);
    }
    /* an empty max dimension is a shape error, as kernel 9's */
    mg_problem bad = {0, 10, 10, 0, MG_PREC_FP32, 0};
    mg_launch_plan blp;
    memset(&blp, 0, sizeof blp);
    blp.p = bad;
    cr_expect_eq(k->ops->plan(&bad, NULL, NULL, &blp), MG_ERR_SHAPE);
}
