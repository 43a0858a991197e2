/* test_swapab_policy.c (suite "swapab_policy"): kernel 8's launch decisions (src/swapab_policy.h), CPU only: the
 * x-tile width per M, the split-K rule, the workspace layout and the bounds the library allocates once, on the H200's
 * 132 SMs and on other SM counts, for the tile configurations the build compiled in (tile_configs/wgmma_swapab.cfg). */
#include "test_common.h"

#include "mg_tiles.h"
#include "swapab_policy.h"

#define SMS 132

static mg_sab_kernel K8_BF16, K8_TF32;
static void describe_kernels(void) {
    K8_BF16 = mg_sab_kernel8(MG_PREC_BF16);
    K8_TF32 = mg_sab_kernel8(MG_PREC_TF32);
}

static mg_sab_plan plan_xt(const mg_sab_kernel *kd, long long m, long long n, long long k, int md, int x_aligned,
                           long long G, int splits, int x_tile, int *rows, size_t *ws) {
    mg_sab_plan pl;
    char why[160] = "";
    const mg_sab_opts o = {splits, x_tile, 0, 0, 0, 0};
    cr_assert_eq(mg_sab_make_plan(kd, m, n, k, md, x_aligned, G, &o, &pl, rows, ws, why, sizeof why), 0, "%s", why);
    return pl;
}
static mg_sab_plan plan_of(const mg_sab_kernel *kd, long long m, long long n, long long k, int md, int x_aligned,
                           long long G, int splits, int *rows, size_t *ws) {
    return plan_xt(kd, m, n, k, md, x_aligned, G, splits, 0, rows, ws);
}

/* The configurations as the build has them: ascending x-tile widths ending at 256, the same in both precisions,
 * bn = 64 x consumers, a stage row a multiple of 128 bytes, cluster 1. */
Test(swapab_policy, configurations_are_well_formed, .init = describe_kernels) {
    const mg_sab_kernel *kds[] = {&K8_BF16, &K8_TF32};
    for (int p = 0; p < 2; p++) {
        const mg_sab_kernel *kd = kds[p];
        cr_assert_eq(kd->ncfg, MG_SAB_NCFG);
        /* the one-slab rows in ascending nx up to 256, then the two-slab (256 W rows) rows, each after its sibling */
        int last1 = -1;
        for (int i = 0; i < kd->ncfg; i++)
            if (kd->cfg[i].wrows == MG_SAB_SLAB * kd->cfg[i].consumers) last1 = i;
        cr_expect_eq(kd->cfg[last1].nx, MG_SAB_ONE_TILE_M, "the widest x tile covers M = 256");
        for (int i = 0; i < kd->ncfg; i++) {
            const mg_sab_shape *c = &kd->cfg[i];
            cr_expect(c->consumers == 1 || c->consumers == 2, "cfg %d: %d consumers", i, c->consumers);
            if (i > last1) {
                cr_expect(c->consumers == 2 && c->wrows == 256 && c->cluster == 1, "cfg %d: two slabs per consumer", i);
                cr_expect_eq(mg_sab_pick_cfg(kd, c->nx, 8192, SMS, c->nx, 0) < i, 1, "cfg %d: its nx has a one-slab row",
                             i);
                continue;
            }
            cr_expect_eq(c->wrows, MG_SAB_SLAB * c->consumers, "cfg %d: bn = 64 x consumers", i);
            cr_expect_eq((c->bk * kd->elem) % 128, 0, "cfg %d: bk of whole 128-byte rows", i);
            cr_expect(c->cluster == 1 || (c->cluster == 2 && c->consumers == 2 && c->bk * kd->elem == 128),
                      "cfg %d: cluster %d (2: two consumers, one 128-byte box per stage)", i, c->cluster);
            cr_expect(c->nx % 8 == 0 && c->nx >= 8 && c->nx <= 256, "cfg %d: nx %d", i, c->nx);
            /* ascending nx; a two-consumer sibling may repeat the nx of a one-consumer row right before it (w128_n64
             * after n64), and x_tile = that nx then takes it for several x tiles only */
            if (i > 0 && c->nx == kd->cfg[i - 1].nx) {
                cr_expect(c->consumers == 2 && kd->cfg[i - 1].consumers == 1, "cfg %d: a sibling of cfg %d", i, i - 1);
                cr_expect_eq(mg_sab_pick_cfg(kd, c->nx, 8192, SMS, c->nx, 0), i - 1, "cfg %d: one x tile", i);
                cr_expect_eq(mg_sab_pick_cfg(kd, c->nx + 1, 8192, SMS, c->nx, 0), i, "cfg %d: several x tiles", i);
            } else if (i > 0) {
                cr_expect_gt(c->nx, kd->cfg[i - 1].nx, "ascending nx");
            }
            cr_expect_eq(c->nx, K8_BF16.cfg[i].nx, "both precisions have the same x tiles");
            cr_expect_eq(c->bk * kd->elem, K8_BF16.cfg[i].bk * K8_BF16.elem, "same stage bytes in both precisions");
        }
    }
    cr_expect_eq(K8_BF16.elem, 2);
    cr_expect_eq(K8_TF32.elem, 4);
}

/* Every m in 1..256 runs the smallest x tile that holds it (one x tile); m > 1024 runs none. */
Test(swapab_policy, x_tile_is_the_smallest_holding_m, .init = describe_kernels) {
    for (int m = 1; m <= MG_SAB_ONE_TILE_M; m++) {
        const int i = mg_sab_pick_cfg(&K8_BF16, m, 8192, SMS, 0, 0);
        cr_assert(i >= 0, "m = %d: no configuration", m);
        cr_expect_geq(K8_BF16.cfg[i].nx, m, "m = %d", m);
        if (i > 0) cr_expect_lt(K8_BF16.cfg[i - 1].nx, m, "m = %d: a smaller tile would hold it", m);
        cr_expect_eq(mg_sab_pick_cfg(&K8_TF32, m, 8192, SMS, 0, 0), i);
        int rows;
        size_t ws;
        const mg_sab_plan pl = plan_of(&K8_BF16, m, 8192, 8192, 0, 1, SMS, 0, &rows, &ws);
        cr_expect_eq(pl.xtiles, 1, "m = %d", m);
        cr_expect_eq(rows, 1, "m = %d: max_dim 0, one x tile: one partial row", m);
    }
    cr_expect_eq(mg_sab_pick_cfg(&K8_BF16, 0, 8192, SMS, 0, 0), -1);
    cr_expect_eq(mg_sab_pick_cfg(&K8_BF16, MG_SAB_MAX_M + 1, 8192, SMS, 0, 0), -1);
    int rows;
    size_t ws;
    mg_sab_plan pl;
    char why[160] = "";
    cr_expect_eq(mg_sab_make_plan(&K8_BF16, 1025, 8192, 8192, 1, 1, SMS, NULL, &pl, &rows, &ws, why, sizeof why), -1);
    cr_expect(strstr(why, "M = 1025 > 1024") != NULL, "why: %s", why);
}

/* Above 256 rows: several x tiles of the two-consumer configuration of least mg_sab_multi_cost, at N = K = 8192 on
 * 132 SMs the tiles the policy's header names; never split; one max_dim 0 partial row per x tile. */
Test(swapab_policy, several_x_tiles_above_256, .init = describe_kernels) {
    const struct {
        int m, nx, xtiles, wrows;
    } want[] = {{257, 152, 2, 128}, {300, 152, 2, 128}, {304, 152, 2, 128}, {305, 192, 2, 128}, {384, 192, 2, 128},
                {385, 256, 2, 128},  {512, 256, 2, 128}, {513, 152, 4, 256}, {600, 152, 4, 256}, {608, 152, 4, 256},
                {609, 192, 4, 256}, {700, 192, 4, 256}, {768, 192, 4, 256}, {1000, 256, 4, 128}, {1024, 256, 4, 128}};
    const mg_sab_kernel *kds[] = {&K8_BF16, &K8_TF32};
    for (int p = 0; p < 2; p++)
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
            for (int md = 0; md < 2; md++) {
                int rows;
                size_t ws;
                const mg_sab_plan pl = plan_of(kds[p], want[i].m, 8192, 8192, md, 1, SMS, 0, &rows, &ws);
                cr_expect_eq(pl.nx, want[i].nx, "m = %d: n%d", want[i].m, pl.nx);
                cr_expect_eq(pl.xtiles, want[i].xtiles, "m = %d: %d x tiles", want[i].m, pl.xtiles);
                cr_expect_eq(pl.consumers, 2);
                cr_expect_eq(pl.wrows, want[i].wrows, "m = %d: %d W rows", want[i].m, pl.wrows);
                cr_expect_eq(pl.tiles, 8192 / want[i].wrows);
                cr_expect_eq(pl.splits, 1, "m = %d: several x tiles never split K", want[i].m);
                cr_expect_eq(pl.units, pl.tiles * pl.xtiles);
                cr_expect(pl.units == 128 || pl.units == 256, "m = %d: one or two full waves (%d units)", want[i].m,
                          pl.units);
                cr_expect_eq(pl.grid, pl.units < SMS ? pl.units : SMS);
                cr_expect_eq(rows, md == 1 ? 128 : pl.xtiles, "m = %d md %d", want[i].m, md);
                cr_expect_eq(ws, mg_sab_count_bytes(kds[p], 8192, 8192, SMS) + mg_sab_fin_bytes(8192, md) +
                                     mg_sab_gsum_bytes(SMS, md),
                             "m = %d: aligned x, no split: the counters, the finish area and (max_dim 0) the grid "
                             "finish's sums only", want[i].m);
                /* the estimate it minimised: no two-consumer configuration is cheaper */
                for (int c = 0; c < kds[p]->ncfg; c++)
                    if (kds[p]->cfg[c].consumers == 2)
                        cr_expect_geq(mg_sab_multi_cost(&kds[p]->cfg[c], want[i].m, 8192, SMS),
                                      mg_sab_multi_cost(&kds[p]->cfg[pl.cfg], want[i].m, 8192, SMS));
            }
}

/* The x_tile option: any configuration's nx above 256 rows, at most the rule's at or below; anything else is refused
 * with a message naming the widths. */
Test(swapab_policy, x_tile_option, .init = describe_kernels) {
    int rows;
    size_t ws;
    mg_sab_plan pl = plan_xt(&K8_BF16, 256, 8192, 8192, 0, 1, SMS, 0, 128, &rows, &ws);   /* M = 256 as 2 x n128 */
    cr_expect(pl.nx == 128 && pl.xtiles == 2 && pl.splits == 1 && pl.units == 128 && rows == 2);
    pl = plan_xt(&K8_BF16, 256, 8192, 8192, 0, 1, SMS, 4, 256, &rows, &ws);   /* the rule's own tile: splits apply */
    cr_expect(pl.nx == 256 && pl.xtiles == 1 && pl.splits == 4 && rows == 1);
    pl = plan_xt(&K8_TF32, 192, 8192, 8192, 1, 1, SMS, 2, 96, &rows, &ws);   /* narrower: splits ignored */
    cr_expect(pl.nx == 96 && pl.xtiles == 2 && pl.splits == 1 && rows == 128);
    pl = plan_xt(&K8_BF16, 600, 8192, 8192, 0, 1, SMS, 0, 256, &rows, &ws);   /* above 256: any width */
    cr_expect(pl.nx == 256 && pl.xtiles == 3 && pl.units == 192 && rows == 3);
    /* x_tile 64 with several x tiles: the two-consumer w128_n64 (M = 128 as 2 x n64 on 64 W tiles, 128 units, no
     * split); one x tile keeps the one-consumer n64 */
    pl = plan_xt(&K8_BF16, 128, 8192, 8192, 1, 1, SMS, 0, 64, &rows, &ws);
    cr_expect(pl.nx == 64 && pl.consumers == 2 && pl.wrows == 128 && pl.tiles == 64 && pl.xtiles == 2 &&
              pl.splits == 1 && pl.units == 128 && pl.grid == 128 && rows == 128);
    pl = plan_xt(&K8_TF32, 128, 8192, 8192, 0, 1, SMS, 0, 64, &rows, &ws);
    cr_expect(pl.nx == 64 && pl.consumers == 2 && pl.xtiles == 2 && pl.units == 128 && rows == 2);
    pl = plan_xt(&K8_BF16, 64, 8192, 8192, 1, 1, SMS, 0, 64, &rows, &ws);
    cr_expect(pl.nx == 64 && pl.consumers == 1 && pl.wrows == 64 && pl.tiles == 128 && pl.xtiles == 1);
    pl = plan_xt(&K8_BF16, 600, 8192, 8192, 0, 1, SMS, 0, 8, &rows, &ws);
    cr_expect(pl.nx == 8 && pl.consumers == 1 && pl.xtiles == 75 && pl.tiles == 128 && rows == 75);
    mg_sab_plan bad;
    char why[160] = "";
    const mg_sab_opts x192 = {0, 192, 0, 0, 0, 0}, x40 = {0, 40, 0, 0, 0, 0};
    cr_expect_eq(mg_sab_make_plan(&K8_BF16, 100, 8192, 8192, 0, 1, SMS, &x192, &bad, &rows, &ws, why, sizeof why), -1);
    cr_expect(strstr(why, "x_tile = 192 is wider than M = 100 needs (n128)") != NULL, "why: %s", why);
    cr_expect_eq(mg_sab_make_plan(&K8_BF16, 100, 8192, 8192, 0, 1, SMS, &x40, &bad, &rows, &ws, why, sizeof why), -1);
    cr_expect(strstr(why, "x_tile = 40 is not one of its x-tile widths (8, 16, 32, 64, 96, 128, 152, 192, 256)") != NULL,
              "why: %s", why);
}

/* mg_options.w_rows: the configurations of that height only. 128 at M <= 64 is w128_n64 with one x tile and the
 * split rule's S (2 at N = K = 8192: 128 units, what run 123's X measures against n8 .. n64); 64 above M = 64 several
 * one-consumer x tiles; 256 the two-slab rows with several x tiles, refused for one; 0 the rule unchanged; x_tile that
 * nx's row of that height, refused where there is none; any other height refused. */
Test(swapab_policy, w_rows_option, .init = describe_kernels) {
    const mg_sab_kernel *kds[] = {&K8_BF16, &K8_TF32};
    int rows;
    size_t ws;
    char why[160] = "";
    mg_sab_plan pl, rule;
    for (int p = 0; p < 2; p++) {
        const mg_sab_kernel *kd = kds[p];
        const long long ms[] = {1, 8, 17, 32, 64};
        for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
            const mg_sab_opts w128 = {0, 0, 0, 0, 0, 128};
            cr_assert_eq(mg_sab_make_plan(kd, ms[i], 8192, 8192, 1, 1, SMS, &w128, &pl, &rows, &ws, why, sizeof why), 0,
                         "%s", why);
            cr_expect(pl.nx == 64 && pl.wrows == 128 && pl.consumers == 2 && pl.xtiles == 1 && pl.tiles == 64 &&
                          pl.splits == 2 && pl.units == 128 && pl.grid == 128,
                      "M = %lld w_rows 128: n%d, %d W rows, %d consumers, %d x tiles, S = %d, %d units", ms[i], pl.nx,
                      pl.wrows, pl.consumers, pl.xtiles, pl.splits, pl.units);
            const mg_sab_opts x64 = {0, 64, 0, 0, 0, 128};   /* the same tile, asked for by both options */
            cr_assert_eq(mg_sab_make_plan(kd, ms[i], 8192, 8192, 0, 1, SMS, &x64, &pl, &rows, &ws, why, sizeof why), 0,
                         "%s", why);
            cr_expect(pl.nx == 64 && pl.wrows == 128 && pl.splits == 2 && rows == 1);
            /* 0 and the rule's own height are the rule */
            const mg_sab_opts w0 = {0, 0, 0, 0, 0, 0}, w64 = {0, 0, 0, 0, 0, 64};
            cr_assert_eq(mg_sab_make_plan(kd, ms[i], 8192, 8192, 1, 1, SMS, &w0, &rule, &rows, &ws, why, sizeof why),
                         0);
            cr_assert_eq(mg_sab_make_plan(kd, ms[i], 8192, 8192, 1, 1, SMS, &w64, &pl, &rows, &ws, why, sizeof why), 0);
            cr_expect(pl.cfg == rule.cfg && pl.splits == rule.splits && pl.wrows == 64 && pl.consumers == 1);
        }
        /* 64 rows above M = 64: several one-consumer x tiles, never split */
        const mg_sab_opts w64 = {0, 0, 0, 0, 0, 64};
        cr_assert_eq(mg_sab_make_plan(kd, 128, 8192, 8192, 0, 1, SMS, &w64, &pl, &rows, &ws, why, sizeof why), 0);
        cr_expect(pl.wrows == 64 && pl.consumers == 1 && pl.xtiles >= 2 && pl.splits == 1 && rows == pl.xtiles);
        /* 128 rows at M = 600: one of the 128-row rows, several x tiles */
        const mg_sab_opts w128 = {0, 0, 0, 0, 0, 128};
        cr_assert_eq(mg_sab_make_plan(kd, 600, 8192, 8192, 1, 1, SMS, &w128, &pl, &rows, &ws, why, sizeof why), 0);
        cr_expect(pl.wrows == 128 && pl.consumers == 2 && pl.xtiles >= 3 && pl.splits == 1);
        /* 256 rows: the rule's own tile at M = 600 (4 x n152); refused for one x tile */
        const mg_sab_opts w256 = {0, 0, 0, 0, 0, 256}, w256x = {0, 152, 0, 0, 0, 256};
        cr_assert_eq(mg_sab_make_plan(kd, 600, 8192, 8192, 1, 1, SMS, &w256, &pl, &rows, &ws, why, sizeof why), 0);
        cr_assert_eq(mg_sab_make_plan(kd, 600, 8192, 8192, 1, 1, SMS, NULL, &rule, &rows, &ws, why, sizeof why), 0);
        cr_expect(pl.cfg == rule.cfg && pl.wrows == 256 && pl.nx == 152 && pl.xtiles == 4);
        cr_expect_eq(mg_sab_make_plan(kd, 100, 8192, 8192, 1, 1, SMS, &w256, &pl, &rows, &ws, why, sizeof why), -1);
        cr_expect(strstr(why, "w_rows = 256 needs several x tiles (M = 100 fits one of n152)") != NULL, "why: %s", why);
        cr_expect_eq(mg_sab_make_plan(kd, 152, 8192, 8192, 0, 1, SMS, &w256x, &pl, &rows, &ws, why, sizeof why), -1);
        cr_expect(strstr(why, "needs several x tiles") != NULL, "why: %s", why);
        cr_assert_eq(mg_sab_make_plan(kd, 153, 8192, 8192, 0, 1, SMS, &w256x, &pl, &rows, &ws, why, sizeof why), 0);
        cr_expect(pl.wrows == 256 && pl.nx == 152 && pl.xtiles == 2 && pl.splits == 1);
        /* no such tile, no such height; and x_tile still only narrows what the plan takes without it */
        const mg_sab_opts x32 = {0, 32, 0, 0, 0, 128}, w96 = {0, 0, 0, 0, 0, 96}, x96 = {0, 96, 0, 0, 0, 128};
        cr_expect_eq(mg_sab_make_plan(kd, 32, 8192, 8192, 1, 1, SMS, &x32, &pl, &rows, &ws, why, sizeof why), -1);
        cr_expect(strstr(why, "no tile of x_tile = 32 and w_rows = 128") != NULL, "why: %s", why);
        cr_expect_eq(mg_sab_make_plan(kd, 32, 8192, 8192, 1, 1, SMS, &w96, &pl, &rows, &ws, why, sizeof why), -1);
        cr_expect(strstr(why, "w_rows = 96 (64, 128 or 256 W rows per tile)") != NULL, "why: %s", why);
        cr_expect_eq(mg_sab_make_plan(kd, 32, 8192, 8192, 1, 1, SMS, &x96, &pl, &rows, &ws, why, sizeof why), -1);
        cr_expect(strstr(why, "x_tile = 96 is wider than M = 32 needs (n64)") != NULL, "why: %s", why);
        /* the workspace the library allocates for M = 8 holds the w_rows = 128 plan's split slots */
        int brows;
        size_t bws;
        mg_sab_bounds(kd, 8, 8192, 8192, 1, SMS, &brows, &bws);
        cr_assert_eq(mg_sab_make_plan(kd, 8, 8192, 8192, 1, 1, SMS, &w128, &pl, &rows, &ws, why, sizeof why), 0);
        cr_expect(ws <= bws && pl.off_slots + mg_sab_slot_bytes(&kd->cfg[pl.cfg], pl.tiles, pl.splits) <= bws,
                  "ws %zu, bound %zu", ws, bws);
    }
}

/* The split rule at N = K = 8192 on 132 SMs (the brief's numbers): M <= 64: 128 tiles of 64 W rows, S = 1;
 * M = 65..256: 64 tiles of 128 W rows (two consumers), S = 2; 128 CTAs either way. */
Test(swapab_policy, splits_at_n_k_8192, .init = describe_kernels) {
    const mg_sab_kernel *kds[] = {&K8_BF16, &K8_TF32};
    for (int p = 0; p < 2; p++)
        for (int m = 1; m <= MG_SAB_ONE_TILE_M; m++) {
            int rows;
            size_t ws;
            const mg_sab_plan pl = plan_of(kds[p], m, 8192, 8192, 1, 1, SMS, 0, &rows, &ws);
            const int small = m <= 64;
            cr_expect_eq(pl.consumers, small ? 1 : 2, "%s m = %d", p ? "tf32" : "bf16", m);
            cr_expect_eq(pl.tiles, small ? 128 : 64, "%s m = %d", p ? "tf32" : "bf16", m);
            cr_expect_eq(pl.splits, small ? 1 : 2, "%s m = %d: S = %d", p ? "tf32" : "bf16", m, pl.splits);
            cr_expect_eq(pl.units, 128);
            cr_expect_eq(pl.grid, 128);
            cr_expect_eq(pl.slabs, 128);
            cr_expect_eq(rows, 128, "max_dim 1: one partial row per 64-row slab");
            cr_expect_eq(pl.pad_x, 0);
        }
}

/* Elsewhere the rule fills the SMs: narrow N splits K further, a few more tiles than SMs split in two. */
Test(swapab_policy, splits_fill_the_sms, .init = describe_kernels) {
    int rows;
    size_t ws;
    /* N = 1000, M = 1: 16 tiles of 64 rows; 8 splits of 8 k-blocks = 128 CTAs in one wave */
    mg_sab_plan pl = plan_of(&K8_BF16, 1, 1000, 8192, 1, 1, SMS, 0, &rows, &ws);
    cr_expect_eq(pl.tiles, 16);
    cr_expect_eq(pl.splits, 8);
    cr_expect_eq(pl.grid, 128);
    cr_expect_eq(rows, 16);
    /* N = 4096, M = 256: 32 tiles of 128 rows: 4 splits, 128 CTAs */
    pl = plan_of(&K8_BF16, 256, 4096, 8192, 0, 1, SMS, 0, &rows, &ws);
    cr_expect_eq(pl.tiles, 32);
    cr_expect_eq(pl.splits, 4);
    cr_expect_eq(rows, 1, "max_dim 0: one partial row");
    /* 114 SMs (H100 PCIe), N = K = 8192, M = 1: 128 tiles would take two waves; 2 splits make 256 units on 114 CTAs
     * (3 rounds of 32 k-blocks instead of 2 of 64) */
    pl = plan_of(&K8_BF16, 1, 8192, 8192, 1, 1, 114, 0, &rows, &ws);
    cr_expect_eq(pl.splits, 2);
    cr_expect_eq(pl.grid, 114);
    /* N = 16384 on 132 SMs: 256 tiles, about 2 waves of whole tiles: no split */
    pl = plan_of(&K8_BF16, 8, 16384, 8192, 1, 1, SMS, 0, &rows, &ws);
    cr_expect_eq(pl.tiles, 256);
    cr_expect_eq(pl.splits, 1);
    cr_expect_eq(pl.grid, SMS);
    /* short K: at least 4 k-blocks per split. K = 512 bf16 at NX <= 64 is 4 k-blocks of 128: no split; K = 0: none */
    pl = plan_of(&K8_BF16, 1, 1000, 512, 1, 1, SMS, 0, &rows, &ws);
    cr_expect_eq(pl.splits, 1);
    pl = plan_of(&K8_BF16, 1, 1000, 0, 1, 1, SMS, 0, &rows, &ws);
    cr_expect_eq(pl.splits, 1);
    cr_expect_eq(pl.nk, 0);
    cr_expect_eq(ws, mg_sab_fin_bytes(1000, 1), "K = 0: the finish area only");
}

/* The split cap and the cost it is chosen by. */
Test(swapab_policy, split_cap_and_cost) {
    cr_expect_eq(mg_sab_split_cap(128, 64, SMS), 2, "one wave of tiles: S = 2 stays possible");
    cr_expect_eq(mg_sab_split_cap(64, 128, SMS), 4);
    cr_expect_eq(mg_sab_split_cap(1, 1000, SMS), MG_SAB_MAX_SPLITS);
    cr_expect_eq(mg_sab_split_cap(1, 7, SMS), 1, "fewer than 2 x 4 k-blocks");
    cr_expect_eq(mg_sab_split_cap(1, 8, SMS), 2);
    cr_expect_eq(mg_sab_split_cap(264, 1000, SMS), 1, "two waves of tiles or more: no split");
    cr_expect_eq(mg_sab_split_cap(10, 0, SMS), 1, "K = 0");
    cr_expect_eq(mg_sab_split_cap(0, 10, SMS), 1);
    cr_expect_eq(mg_sab_split_cap(10, 100, 0), 1);
    /* the estimate: one wave of S = 1 against one wave of S = 2 with half the k-blocks and the handoff */
    cr_expect_eq(mg_sab_split_cost(64, 128, 1, SMS, 256, 1), 128 * 96);
    cr_expect_eq(mg_sab_split_cost(64, 128, 2, SMS, 256, 1), 64 * 96 + 2 * 96 + 3 * 256);
    /* the option: clamped to the cap, 1 forces no split */
    cr_expect_eq(mg_sab_choose_splits(64, 128, SMS, 256, 1, 0), 2);
    cr_expect_eq(mg_sab_choose_splits(64, 128, SMS, 256, 1, 1), 1);
    cr_expect_eq(mg_sab_choose_splits(64, 128, SMS, 256, 1, 3), 3);
    cr_expect_eq(mg_sab_choose_splits(64, 128, SMS, 256, 1, 16), 4);
    cr_expect_eq(mg_sab_choose_splits(128, 64, SMS, 8, 2, 0), 1);
    cr_expect_eq(mg_sab_choose_splits(128, 64, SMS, 8, 2, 2), 2);
}

/* Every split cuts the k-blocks into contiguous ranges covering [0, nk) once, at least 4 each when S > 1 (the cap). */
Test(swapab_policy, split_ranges_cover_k_once) {
    const int nks[] = {1, 4, 7, 8, 33, 64, 128, 129, 1000};
    for (size_t i = 0; i < sizeof nks / sizeof nks[0]; i++) {
        const int nk = nks[i];
        const int cap = mg_sab_split_cap(1, nk, SMS);
        for (int S = 1; S <= cap; S++) {
            int next = 0;
            for (int s = 0; s < S; s++) {
                int kb0, kb1;
                mg_sab_split_range(nk, S, s, &kb0, &kb1);
                cr_assert_eq(kb0, next, "nk %d S %d split %d starts at %d, expected %d", nk, S, s, kb0, next);
                if (S > 1)
                    cr_assert_geq(kb1 - kb0, MG_SAB_MIN_KB, "nk %d S %d split %d: %d k-blocks", nk, S, s, kb1 - kb0);
                next = kb1;
            }
            cr_assert_eq(next, nk, "nk %d S %d: the splits end at %d", nk, S, next);
        }
    }
}

/* Clusters of 2: the option (or a configuration's column) on a two-consumer x tile pads the W tiles and the grid to
 * even counts; it is a request (as splits): a one-consumer tile, or one SM, runs clusters of 1; 3 is refused. */
Test(swapab_policy, clusters_of_two, .init = describe_kernels) {
    int rows;
    size_t ws;
    mg_sab_plan pl;
    char why[200] = "";
    const mg_sab_opts c1 = {0, 0, 1, 0, 0, 0}, c2 = {0, 0, 2, 0, 0, 0};
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 300, 8192, 8192, 1, 1, SMS, &c2, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 2 && pl.wcast == 1 && pl.nx == 152 && pl.tiles == 64 && pl.units == 128 && pl.grid == 128,
              "2 x n152: W multicast (a cluster's CTAs on one W tile, x tiles 0 and 1)");
    const mg_sab_opts c2x = {0, 192, 2, 0, 0, 0};   /* x_tile 192: the 128-row n192 */
    cr_assert_eq(mg_sab_make_plan(&K8_TF32, 768, 8192, 8192, 0, 1, SMS, &c2x, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 2 && pl.wcast == 1 && pl.nx == 192 && pl.wrows == 128 && pl.xtiles == 4 &&
              pl.units == 256 && pl.grid == 132 && rows == 4);
    /* an odd number of x tiles: the x multicast (W tiles 2q, 2q + 1 of one x tile), the W tiles padded to even */
    const mg_sab_opts c2w = {0, 256, 2, 0, 0, 0};
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 600, 300, 8192, 1, 1, SMS, &c2w, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 2 && pl.wcast == 0 && pl.xtiles == 3 && pl.tiles == 3 && pl.units == 4 * 3 &&
              pl.grid % 2 == 0, "3 x n256 on 3 W tiles: x multicast, %d units", pl.units);
    /* the W multicast pads nothing: 3 W tiles x 2 x tiles = 6 units, each cluster on one W tile (x_tile 152: at
     * N = 300 the rule itself takes 5 x n64, one wave of 15 units) */
    const mg_sab_opts c2n = {0, 152, 2, 0, 0, 0};
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 300, 300, 8192, 1, 1, SMS, &c2n, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 2 && pl.wcast == 1 && pl.tiles == 3 && pl.xtiles == 2 && pl.units == 6 && pl.grid == 6);
    /* one x tile: the x multicast (the CTAs of a cluster share the x tile and split) */
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 192, 8192, 8192, 1, 1, SMS, &c2, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 2 && pl.wcast == 0 && pl.xtiles == 1 && pl.splits == 2 && pl.units == 128);
    /* 256 W rows (two slabs per consumer) run in clusters of 1 */
    cr_assert_eq(mg_sab_make_plan(&K8_TF32, 600, 8192, 8192, 0, 1, SMS, &c2, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 1 && pl.wrows == 256 && pl.xtiles == 4 && pl.units == 128 && rows == 4);
    /* N = 200: 2 W tiles of 128 rows, even; N = 300: 3 tiles padded to 4 */
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 100, 300, 1000, 1, 1, SMS, &c2, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.tiles == 3 && pl.units == 4 * pl.splits && pl.grid % 2 == 0, "tiles %d units %d grid %d", pl.tiles,
              pl.units, pl.grid);
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 100, 300, 1000, 1, 1, 7, &c2, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.grid <= 6 && pl.grid % 2 == 0, "7 SMs: an even grid of at most 6 CTAs (%d)", pl.grid);
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 300, 8192, 8192, 1, 1, SMS, &c1, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 1 && pl.grid == 128);
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 8, 8192, 8192, 1, 1, SMS, &c2, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 1 && pl.nx == 8 && pl.units == 128, "a one-consumer tile: clusters of 1");
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 300, 8192, 8192, 1, 1, 1, &c2, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 1 && pl.grid == 1, "one SM: clusters of 1");
    const mg_sab_opts c3 = {0, 0, 3, 0, 0, 0};
    cr_expect_eq(mg_sab_make_plan(&K8_BF16, 300, 8192, 8192, 1, 1, SMS, &c3, &pl, &rows, &ws, why, sizeof why), -1);
    cr_expect(strstr(why, "cluster = 3 (1 or 2)") != NULL, "why: %s", why);
    /* mcast: x pairs two W tiles on one x tile with an even number of x tiles too (M = 256 as 2 x n128: 64 W tiles,
     * even, nothing padded); w is the policy's where it can and, as a request, x where it cannot (one x tile or an
     * odd number); both nothing in clusters of 1 */
    const mg_sab_opts mx = {0, 128, 2, 0, MG_MCAST_X, 0}, mw = {0, 128, 2, 0, MG_MCAST_W, 0},
                      mx1 = {0, 128, 1, 0, MG_MCAST_X, 0};
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 256, 8192, 8192, 1, 1, SMS, &mx, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 2 && pl.wcast == 0 && pl.nx == 128 && pl.xtiles == 2 && pl.tiles == 64 && pl.splits == 1 &&
              pl.units == 128 && pl.grid == 128, "mcast x: 2 x n128, x multicast (wcast %d, %d units)", pl.wcast, pl.units);
    char desc[400];
    mg_sab_plan_summary(&K8_BF16, &pl, desc, sizeof desc);
    cr_expect(strstr(desc, "in clusters of 2 (x multicast)") != NULL, "%s", desc);
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 256, 8192, 8192, 1, 1, SMS, &mw, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 2 && pl.wcast == 1 && pl.units == 128, "mcast w with 2 x tiles: W multicast");
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 600, 300, 8192, 1, 1, SMS, &(mg_sab_opts){0, 256, 2, 0, MG_MCAST_W, 0}, &pl,
                                  &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 2 && pl.wcast == 0 && pl.xtiles == 3, "mcast w with 3 x tiles: x multicast (a request)");
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 256, 8192, 8192, 1, 1, SMS, &mx1, &pl, &rows, &ws, why, sizeof why), 0, "%s", why);
    cr_expect(pl.cluster == 1 && pl.wcast == 0 && pl.units == 128, "mcast x in clusters of 1: nothing changes");
    /* the configurations' own column: a one-consumer row's plan always has cluster 1 */
    for (long long m = 1; m <= 64; m++) {
        cr_assert_eq(mg_sab_make_plan(&K8_BF16, m, 8192, 8192, 1, 1, SMS, NULL, &pl, &rows, &ws, why, sizeof why), 0);
        cr_expect_eq(pl.cluster, 1);
    }
}

/* x is read in place when TMA can (16-byte rows and base), else copied with rows padded to 16 bytes. */
Test(swapab_policy, x_padding, .init = describe_kernels) {
    int rows;
    size_t ws;
    mg_sab_plan pl = plan_of(&K8_BF16, 3, 5000, 4100, 1, 1, SMS, 0, &rows, &ws);   /* 8200-byte rows */
    cr_expect(pl.pad_x == 1 && pl.x_ld == 4104);
    cr_expect_geq(pl.off_slots, pl.off_x + mg_sab_x_bytes(3, 4104, 2));
    pl = plan_of(&K8_BF16, 3, 5000, 4096, 1, 0, SMS, 0, &rows, &ws);   /* misaligned base, 16-byte rows */
    cr_expect(pl.pad_x == 1 && pl.x_ld == 4096);
    pl = plan_of(&K8_BF16, 127, 257, 1, 1, 1, SMS, 0, &rows, &ws);     /* K = 1 */
    cr_expect(pl.pad_x == 1 && pl.x_ld == 8);
    pl = plan_of(&K8_TF32, 127, 257, 129, 0, 1, SMS, 0, &rows, &ws);
    cr_expect(pl.pad_x == 1 && pl.x_ld == 132);
    pl = plan_of(&K8_TF32, 64, 8192, 8192, 1, 1, SMS, 0, &rows, &ws);
    cr_expect(pl.pad_x == 0 && pl.x_ld == 8192);
}

/* Every plan for every m <= M, every option and both x alignments lies within the bounds the library allocates once
 * for M, and its workspace regions are in order and never overlap: [counters at 0][finish area][padded x][slots]. */
Test(swapab_policy, plans_stay_within_the_bounds, .init = describe_kernels) {
    const mg_sab_kernel *kds[] = {&K8_BF16, &K8_TF32};
    const long long Ms[] = {1, 8, 64, 100, 256, 600, 1024};
    const long long shapes[][2] = {{8192, 8192}, {1000, 4100}, {257, 129}, {7, 0}, {1, 1}, {8190, 1}, {4096, 8192},
                                   {300, 264}, {64, 100000}};
    const long long sms[] = {SMS, 114, 1};
    for (size_t ki = 0; ki < 2; ki++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (size_t gi = 0; gi < sizeof sms / sizeof sms[0]; gi++)
                for (size_t mi = 0; mi < sizeof Ms / sizeof Ms[0]; mi++)
                    for (int md = 0; md < 2; md++) {
                        const long long M = Ms[mi], n = shapes[si][0], k = shapes[si][1], G = sms[gi];
                        int brows;
                        size_t bws;
                        mg_sab_bounds(kds[ki], M, n, k, md, G, &brows, &bws);
                        const size_t cbytes = k > 0 ? mg_sab_count_bytes(kds[ki], n, k, G) : 0;
                        for (long long m = 1; m <= M; m = m == M ? M + 1 : m < 8 ? m + 1 : m * 2 < M ? m * 2 : M)
                            for (int sp = 0; sp <= MG_SAB_MAX_SPLITS; sp += (sp < 4 ? 1 : 6))
                                for (int xi = -1; xi < kds[ki]->ncfg; xi++)
                                for (int wi = 0; wi < 4; wi++)
                                for (int al = 0; al < 2; al++) {
                                    int rows;
                                    size_t ws;
                                    const int xt = xi < 0 ? 0 : kds[ki]->cfg[xi].nx, wr = wi ? 32 << wi : 0;
                                    mg_sab_plan pl;
                                    char why[160];
                                    /* fuse auto/off/force; w_rows auto, 64, 128, 256 */
                                    const mg_sab_opts so = {sp, xt, 0, (int)(sp % 3), 0, wr};
                                    if (mg_sab_make_plan(kds[ki], m, n, k, md, al, G, &so, &pl, &rows, &ws, why,
                                                         sizeof why) != 0) {
                                        if (so.fuse == MG_SWITCH_FORCE && !mg_sab_fusable(n, md)) {
                                            /* only where the last CTA would finish: clusters of 2 */
                                            cr_assert(strstr(why, "clusters of 2") != NULL, "%s", why);
                                            continue;
                                        }
                                        /* only an x tile wider than the rule's (under w_rows), at m <= 256, a
                                         * height no tile of that x_tile has, and 256 rows on one x tile are refused */
                                        const int rule = mg_sab_pick_cfg(kds[ki], m, n, G, 0, wr),
                                                  pick = mg_sab_pick_cfg(kds[ki], m, n, G, xt, wr);
                                        const int wider = xt > 0 && m <= 256 && rule >= 0 &&
                                                          xt > kds[ki]->cfg[rule].nx;
                                        const int no_tile = wr > 0 && pick < 0;
                                        const int one_256 = wr == 256 && pick >= 0 &&
                                                            m <= kds[ki]->cfg[pick].nx &&
                                                            strstr(why, "needs several x tiles") != NULL;
                                        cr_assert(wider || no_tile || one_256, "m=%lld x_tile %d w_rows %d: %s", m, xt,
                                                  wr, why);
                                        continue;
                                    }
                                    const mg_sab_shape *c = &kds[ki]->cfg[pl.cfg];
                                    const char *what = ki ? "tf32" : "bf16";
                                    cr_assert(rows >= 1 && rows <= brows && ws <= bws,
                                              "%s M=%lld m=%lld N=%lld K=%lld G=%lld md %d splits %d: %d rows (bound "
                                              "%d), %zu bytes (bound %zu)", what, M, m, n, k, G, md, sp, rows, brows,
                                              ws, bws);
                                    cr_assert_eq(pl.xtiles, (int)mg_sab_cdiv(m, c->nx));
                                    cr_assert_eq(rows, md == 1 ? (int)mg_sab_cdiv(n, 64) : pl.xtiles);
                                    cr_assert(pl.splits >= 1 && pl.splits <= MG_SAB_MAX_SPLITS);
                                    cr_assert(pl.splits <= mg_sab_split_cap(pl.tiles, pl.nk, G));
                                    if (pl.xtiles > 1) cr_assert_eq(pl.splits, 1, "several x tiles never split");
                                    if (sp > 0) cr_assert(pl.splits <= sp, "the option is an upper bound");
                                    const int ctiles = (pl.tiles + pl.cluster - 1) / pl.cluster * pl.cluster;
                                    cr_assert(pl.units == ctiles * pl.xtiles * pl.splits && pl.grid >= 1 &&
                                              pl.grid <= G && pl.grid <= pl.units);
                                    cr_assert(pl.grid % pl.cluster == 0 && pl.units % pl.cluster == 0);
                                    cr_assert_eq(pl.tiles, (int)mg_sab_cdiv(n, c->wrows));
                                    if (xt > 0) cr_assert_eq(c->nx, xt);
                                    if (wr > 0) cr_assert_eq(c->wrows, wr, "w_rows %d", wr);
                                    /* the regions, in order and apart */
                                    cr_assert_eq(pl.off_count, 0u);
                                    const size_t fbytes = mg_sab_fin_bytes(n, md);
                                    cr_assert_eq(pl.off_fin, cbytes, "the counters' size does not depend on m");
                                    cr_assert_eq(pl.off_gsum, cbytes + fbytes, "nor the finish area's");
                                    /* the grid finish's tagged slots: a 64-bit word per SM (max_dim 0), before
                                     * anything whose size depends on m */
                                    cr_assert_eq(pl.off_x, pl.off_gsum + mg_sab_gsum_bytes(G, md));
                                    if (md == 0) cr_assert_geq(pl.off_x - pl.off_gsum, (size_t)G * 8);
                                    /* max_dim 1: the start ticket; max_dim 0: the grid in clusters of 1, the last CTA
                                     * in clusters of 2 when forced; off: neither */
                                    const int own = pl.units <= pl.grid && pl.xtiles == 1 && pl.splits == 1 &&
                                                    pl.cluster == 1;
                                    const int fz = so.fuse == MG_SWITCH_OFF ? 0 : md == 1 ? MG_SAB_FUSE_TICKET
                                                   : pl.cluster == 1
                                                       ? MG_SAB_FUSE_GRID
                                                   : so.fuse == MG_SWITCH_FORCE ? MG_SAB_FUSE_LAST : 0;
                                    cr_assert_eq(pl.fused, fz, "md %d fuse %d cluster %d", md, so.fuse, pl.cluster);
                                    if (pl.fused == MG_SAB_FUSE_LAST || pl.fused == MG_SAB_FUSE_TICKET)   /* the head
                                                                              * and a word per output */
                                        cr_assert_geq(fbytes, 256 + (size_t)(md == 1 ? m : n) * sizeof(unsigned));
                                    if (md == 0)   /* the grid barrier's word in the head */
                                        cr_assert_geq(fbytes, (size_t)MG_SAB_GBAR_OFF + sizeof(unsigned));
                                    if (pl.fused == MG_SAB_FUSE_GRID) {
                                        /* own rows exactly where unit b is W tile b and holds its final maxima; else
                                         * chunks that cover N, none empty but the tail */
                                        cr_assert_eq(pl.gown, own);
                                        cr_assert((long long)pl.gchunk * pl.grid >= n &&
                                                  (long long)(pl.gchunk - 1) * pl.grid < n, "chunk %d grid %d n %lld",
                                                  pl.gchunk, pl.grid, n);
                                        cr_assert_eq(pl.gslots, (int)G, "every slot, not the grid's");
                                        cr_assert_leq(pl.grid, pl.gslots);
                                    }
                                    cr_assert(pl.off_x <= pl.off_slots && pl.off_slots <= ws);
                                    if (pl.pad_x)
                                        cr_assert_geq(pl.off_slots, pl.off_x + (size_t)m * pl.x_ld * kds[ki]->elem);
                                    else
                                        cr_assert_eq(pl.off_slots, pl.off_x);
                                    cr_assert_eq(ws, pl.off_slots + mg_sab_slot_bytes(c, pl.tiles, pl.splits));
                                    if (pl.splits > 1) {
                                        /* a counter per slab of every tile, and S slots of 64 x nx floats each */
                                        cr_assert_geq(cbytes, (size_t)pl.tiles * c->consumers * sizeof(int));
                                        cr_assert_geq(ws - pl.off_slots, (size_t)pl.tiles * c->consumers *
                                                      pl.splits * 64 * c->nx * sizeof(float));
                                    }
                                    if (k == 0) cr_assert(ws == fbytes + mg_sab_gsum_bytes(G, md) && pl.splits == 1);
                                }
                    }
}

/* The workspace bound stays modest where the policy splits (N = K = 8192, M = 256: 2 x 64 x 2 slabs of 64 x 256
 * floats is 16 MiB; the cap allows S = 4 there: 32 MiB, plus 4 MiB of x and the counters). */
Test(swapab_policy, bounds_at_m_256, .init = describe_kernels) {
    int rows;
    size_t ws;
    mg_sab_bounds(&K8_BF16, 256, 8192, 8192, 1, SMS, &rows, &ws);
    cr_expect_eq(rows, 128);
    const size_t slots = (size_t)64 * 2 * 4 * 64 * 256 * 4, x = (size_t)256 * 8192 * 2;
    cr_expect_eq(ws, mg_sab_count_bytes(&K8_BF16, 8192, 8192, SMS) + mg_sab_fin_bytes(8192, 1) + x + slots, "%zu bytes",
                 ws);
    cr_expect_leq(ws, (size_t)40 << 20);
}

/* The brief's check: every m in 1..256 against the bounds of an M = 256 plan (the library sizes its buffers once, with
 * the plan's M, for every batch it may run), with and without a split request, x aligned or not. */
Test(swapab_policy, every_m_fits_the_m_256_bounds, .init = describe_kernels) {
    const long long shapes[][2] = {{8192, 8192}, {1000, 4100}, {257, 129}, {130, 5000}};
    const mg_sab_kernel *kds[] = {&K8_BF16, &K8_TF32};
    for (size_t ki = 0; ki < 2; ki++)
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (int md = 0; md < 2; md++) {
                int brows;
                size_t bws;
                mg_sab_bounds(kds[ki], 256, shapes[si][0], shapes[si][1], md, SMS, &brows, &bws);
                for (long long m = 1; m <= 256; m++)
                    for (int sp = 0; sp <= MG_SAB_MAX_SPLITS; sp += MG_SAB_MAX_SPLITS / 2)
                        for (int al = 0; al < 2; al++) {
                            int rows;
                            size_t ws;
                            plan_of(kds[ki], m, shapes[si][0], shapes[si][1], md, al, SMS, sp, &rows, &ws);
                            cr_assert(rows <= brows && ws <= bws, "m = %lld N = %lld K = %lld md %d splits %d: %d rows "
                                      "(bound %d), %zu bytes (bound %zu)", m, shapes[si][0], shapes[si][1], md, sp,
                                      rows, brows, ws, bws);
                        }
            }
}

/* THE FUSED FINISH, per fuse option: max_dim 1 by the start ticket at any N (auto and force); max_dim 0 by the grid
 * finish in every clusters-of-1 plan (auto and force: each CTA its own rows with one W tile per CTA, else chunks of
 * columns), in clusters of 2 by the last CTA only under fuse=force (up to N = MG_SAB_FUSE_MAX_N; wider N is refused,
 * naming why), else the shared finalize; fuse=off never. The finish area sits after the counters at a place and of a
 * size that do not depend on m: 256 bytes of head (done counter, start word, grid barrier word, zgen), then
 * MG_SAB_MAX_M (max_dim 1) or N (max_dim 0) words; the grid finish's tagged slots right after it. */
Test(swapab_policy, fused_finish, .init = describe_kernels) {
    int rows;
    size_t ws;
    mg_sab_plan pl;
    char why[160] = "";
    const mg_sab_opts autof = {0, 0, 0, MG_SWITCH_AUTO, 0, 0}, off = {0, 0, 0, MG_SWITCH_OFF, 0, 0},
                      force = {0, 0, 0, MG_SWITCH_FORCE, 0, 0}, force2 = {0, 0, 2, MG_SWITCH_FORCE, 0, 0},
                      auto2 = {0, 0, 2, MG_SWITCH_AUTO, 0, 0};
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 64, 8192, 8192, 1, 1, SMS, &autof, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect(pl.fused == MG_SAB_FUSE_TICKET && pl.off_fin == mg_sab_count_bytes(&K8_BF16, 8192, 8192, SMS));
    cr_expect_eq(mg_sab_fin_bytes(8192, 1), 256u + MG_SAB_MAX_M * 4u);
    cr_expect_eq(mg_sab_fin_bytes(8192, 0), 256u + 8192u * 4u);
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 64, 8192, 8192, 1, 1, SMS, NULL, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect_eq(pl.fused, MG_SAB_FUSE_TICKET, "no options: auto");
    cr_assert_eq(mg_sab_make_plan(&K8_TF32, 600, 8192, 8192, 1, 1, SMS, &off, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect_eq(pl.fused, 0, "fuse=off");
    cr_assert_eq(mg_sab_make_plan(&K8_TF32, 600, 8192, 8192, 0, 1, SMS, &off, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect_eq(pl.fused, 0, "max_dim 0, fuse=off: the shared finalize");
    /* max_dim 0, M = 600 (4 x tiles): the grid finish in chunks of columns, by default as when forced */
    for (int f = 0; f < 2; f++) {
        cr_assert_eq(mg_sab_make_plan(&K8_TF32, 600, 8192, 8192, 0, 1, SMS, f ? &force : &autof, &pl, &rows, &ws, why,
                                      sizeof why), 0);
        cr_expect(pl.fused == MG_SAB_FUSE_GRID && pl.cluster == 1 && pl.xtiles == 4 && !pl.gown &&
                  pl.gchunk == (8192 + pl.grid - 1) / pl.grid, "max_dim 0, %s: %d own %d chunk %d",
                  f ? "force" : "auto", pl.fused, pl.gown, pl.gchunk);
    }
    cr_expect_eq(pl.off_gsum, pl.off_fin + mg_sab_fin_bytes(8192, 0), "the area stays where it is");
    cr_expect_eq(pl.off_x, pl.off_gsum + mg_sab_gsum_bytes(SMS, 0), "the tagged slots next, before x");
    cr_expect_eq(pl.gslots, SMS, "every launch keeps all the SM count's slots at its tag");
    /* one W tile per CTA, one x tile, no split: each CTA finishes its own rows */
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 8, 8192, 8192, 0, 1, SMS, &autof, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect(pl.fused == MG_SAB_FUSE_GRID && pl.gown && pl.units == pl.grid && pl.splits == 1, "M = 8: %d %d",
              pl.fused, pl.gown);
    /* clusters of 2: the last CTA when forced, else the shared finalize */
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 384, 8192, 8192, 0, 1, SMS, &force2, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect(pl.cluster == 2 && pl.fused == MG_SAB_FUSE_LAST, "cluster %d fused %d", pl.cluster, pl.fused);
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 384, 8192, 8192, 0, 1, SMS, &auto2, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect(pl.cluster == 2 && pl.fused == 0, "cluster %d fused %d", pl.cluster, pl.fused);
    /* max_dim 0 past the staging bound: the grid finish takes any N; the last CTA (clusters of 2, forced) is
     * refused; max_dim 1 fuses at any N */
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 8, MG_SAB_FUSE_MAX_N + 1, 64, 0, 1, SMS, &force, &pl, &rows, &ws, why,
                                  sizeof why), 0);
    cr_expect(pl.fused == MG_SAB_FUSE_GRID && mg_sab_fin_bytes(MG_SAB_FUSE_MAX_N + 1, 0) == 256 &&
              pl.off_gsum == pl.off_fin + 256);
    cr_expect(mg_sab_fusable(MG_SAB_FUSE_MAX_N, 0) && mg_sab_fusable(1 << 20, 1));
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 96, MG_SAB_FUSE_MAX_N + 1, 8192, 0, 1, SMS, &auto2, &pl, &rows, &ws,
                                  why, sizeof why), 0);
    cr_expect(pl.cluster == 2 && pl.fused == 0, "cluster %d fused %d", pl.cluster, pl.fused);
    cr_expect_eq(mg_sab_make_plan(&K8_BF16, 96, MG_SAB_FUSE_MAX_N + 1, 8192, 0, 1, SMS, &force2, &pl, &rows, &ws,
                                  why, sizeof why), -1);
    cr_expect(strstr(why, "fuse=force") != NULL && strstr(why, "16385") != NULL, "%s", why);
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 1024, 100000, 64, 1, 1, SMS, &force, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect_eq(pl.fused, MG_SAB_FUSE_TICKET);
    /* K = 0 (y = b): the area and the sums are the whole workspace */
    cr_assert_eq(mg_sab_make_plan(&K8_BF16, 5, 7, 0, 0, 1, SMS, &force, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect(pl.fused == MG_SAB_FUSE_GRID && pl.off_fin == 0 &&
              ws == mg_sab_fin_bytes(7, 0) + mg_sab_gsum_bytes(SMS, 0));
}
