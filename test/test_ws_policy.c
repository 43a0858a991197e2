/* test_ws_policy.c (suite "ws_policy"): kernel 4's launch decisions (src/ws_policy.h), CPU only. Which tile
 * configuration a shape runs and how N is cut into column panels decide most of the benchmark's numbers, and the GPU
 * tests force each configuration rather than pin the automatic choice; these tests pin it, on the H200's 132 SMs
 * and on other SM counts, against the measurements in notes/04_wgmma_ws.md. */
#include "test_common.h"

#include "mg_tiles.h"
#include "ws_policy.h"

#define SMS 132

static mg_ws_tiles pick(long long m, long long n, long long sms) {
    return mg_ws_pick_tiles(m, n, sms, 128, 256, 128, 128);
}

Test(ws_policy, tiles_by_m_at_n_8192) {
    /* M <= 128: small (stream-K where even those leave half the SMs idle); 129..256: mid; above: main */
    const long long small[] = {1, 8, 64, 65, 127, 128};
    const long long mid[] = {129, 150, 192, 193, 200, 255, 256};
    const long long big[] = {257, 300, 384, 512, 1000, 1024, 4096, 16384};
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++)
        cr_expect_eq(pick(small[i], 8192, SMS), MG_WS_TILES_SMALL, "M = %lld: expected the small tiles", small[i]);
    for (size_t i = 0; i < sizeof mid / sizeof mid[0]; i++)
        cr_expect_eq(pick(mid[i], 8192, SMS), MG_WS_TILES_MID, "M = %lld: expected the mid tiles", mid[i]);
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++)
        cr_expect_eq(pick(big[i], 8192, SMS), MG_WS_TILES_MAIN, "M = %lld: expected the main tiles", big[i]);
}

Test(ws_policy, tiles_follow_the_sm_count) {
    /* M = 256, N = 8192: 64 main tiles. On 114 SMs (H100 PCIe) they fill more than half: main. On 264 SMs the mid
     * tiles (128) fill only half: small. */
    cr_expect_eq(pick(256, 8192, 114), MG_WS_TILES_MAIN);
    cr_expect_eq(pick(256, 8192, 132), MG_WS_TILES_MID);
    cr_expect_eq(pick(256, 8192, 264), MG_WS_TILES_SMALL);
    /* narrow N: few tiles whatever M, so large M is needed for the main tiles */
    cr_expect_eq(pick(4096, 256, SMS), MG_WS_TILES_SMALL);    /* 32 main tiles, 32 mid: stream-K over the small */
    cr_expect_eq(pick(8192, 256, SMS), MG_WS_TILES_MID);      /* 64 main tiles, 64 x 2 = 128 mid */
    cr_expect_eq(pick(16384, 256, SMS), MG_WS_TILES_MAIN);    /* 128 main tiles */
    cr_expect_eq(pick(1, 1, SMS), MG_WS_TILES_SMALL);
}

Test(ws_policy, panels_at_the_headline) {
    /* 8 rows of 128-row tiles, N = 8192: 33 panels, one of 256 columns, 264 tiles = 2 per SM (run 24) */
    int tiles_n = 32, nw = 32;
    cr_assert_eq(mg_ws_mixed_panels(8, 8192, SMS, 256, 248, 0, &tiles_n, &nw), 1);
    cr_expect_eq(tiles_n, 33);
    cr_expect_eq(nw, 1);
    cr_expect_eq((long long)nw * 256 + (long long)(tiles_n - nw) * 248, 8192, "the panels cover N exactly");
    /* clusters of 2: 4 unit rows on 66 clusters, the same panels */
    tiles_n = 32, nw = 32;
    cr_assert_eq(mg_ws_mixed_panels(4, 8192, 66, 256, 248, 0, &tiles_n, &nw), 1);
    cr_expect_eq(tiles_n, 33);
    cr_expect_eq(nw, 1);
}

Test(ws_policy, panels_only_where_they_pay) {
    int tiles_n, nw;
    /* M = 512: 128 uniform tiles already fit one wave; 132 mixed ones cost 256 on the wide CTAs anyway */
    tiles_n = nw = 32;
    cr_expect_eq(mg_ws_mixed_panels(4, 8192, SMS, 256, 248, 0, &tiles_n, &nw), 0);
    cr_expect_eq(tiles_n, 32, "unchanged when not taken");
    cr_expect_eq(nw, 32, "unchanged when not taken");
    /* N = 300: two narrow panels would overshoot N; not even when forced */
    tiles_n = nw = 2;
    cr_expect_eq(mg_ws_mixed_panels(1, 300, SMS, 256, 248, 1, &tiles_n, &nw), 0);
    /* forced where the narrow panels fit: N = 7936 is 32 narrow panels and no wide one; N = 8190: 33, one wide,
     * the last ragged (gpu_kernels/ws_mixed_panels runs both) */
    tiles_n = nw = 31;
    cr_expect_eq(mg_ws_mixed_panels(1, 7936, SMS, 256, 248, 1, &tiles_n, &nw), 1);
    cr_expect_eq(tiles_n, 32);
    cr_expect_eq(nw, 0);
    tiles_n = nw = 32;
    cr_expect_eq(mg_ws_mixed_panels(8, 8190, SMS, 256, 248, 1, &tiles_n, &nw), 1);
    cr_expect_eq(tiles_n, 33);
    cr_expect_eq(nw, 1);
    /* no schedulers, no rows, or no narrower width: nothing */
    tiles_n = nw = 32;
    cr_expect_eq(mg_ws_mixed_panels(8, 8192, 0, 256, 248, 1, &tiles_n, &nw), 0);
    cr_expect_eq(mg_ws_mixed_panels(0, 8192, SMS, 256, 248, 1, &tiles_n, &nw), 0);
    cr_expect_eq(mg_ws_mixed_panels(8, 8192, SMS, 256, 256, 1, &tiles_n, &nw), 0);
}

Test(ws_policy, panels_cover_n_whenever_taken) {
    /* every N and row count in a range: when taken, nw wide + the rest narrow panels cover N and the last panel
     * starts inside N */
    for (long long n = 256; n <= 20000; n += 37)
        for (long long rows = 1; rows <= 40; rows += 3) {
            const int uni = (int)mg_ws_cdiv(n, 256);
            int tiles_n = uni, nw = uni;
            if (!mg_ws_mixed_panels(rows, n, SMS, 256, 248, 0, &tiles_n, &nw)) continue;
            const long long covered = (long long)nw * 256 + (long long)(tiles_n - nw) * 248;
            const long long last_start = covered - (tiles_n > nw ? 248 : 256);
            cr_expect(covered >= n && last_start < n, "N = %lld, %lld unit rows: %d panels (%d wide) cover %lld",
                      n, rows, tiles_n, nw, covered);
            cr_expect_eq(tiles_n, uni + 1, "N = %lld: one panel more than uniform", n);
        }
}

Test(ws_policy, configured_tiles_at_the_headline) {
    /* with the shapes in tile_configs/wgmma_ws.cfg: the headline runs the main tiles in both modes, M = 256 the mid */
    cr_expect_eq(mg_ws_pick_tiles(1024, 8192, SMS, MG_TILE_wgmma_ws_bf16_BM, MG_TILE_wgmma_ws_bf16_BN,
                                  MG_TILE_wgmma_ws_mid_bf16_BM, MG_TILE_wgmma_ws_mid_bf16_BN), MG_WS_TILES_MAIN);
    cr_expect_eq(mg_ws_pick_tiles(1024, 8192, SMS, MG_TILE_wgmma_ws_tf32_BM, MG_TILE_wgmma_ws_tf32_BN,
                                  MG_TILE_wgmma_ws_mid_tf32_BM, MG_TILE_wgmma_ws_mid_tf32_BN), MG_WS_TILES_MAIN);
    cr_expect_eq(mg_ws_pick_tiles(256, 8192, SMS, MG_TILE_wgmma_ws_bf16_BM, MG_TILE_wgmma_ws_bf16_BN,
                                  MG_TILE_wgmma_ws_mid_bf16_BM, MG_TILE_wgmma_ws_mid_bf16_BN), MG_WS_TILES_MID);
}

/* The remainder split (kernels/ws_scheduler.cuh "PANELS"): at the headline, max_dim 1, instead of the one 256-wide panel:
 * 33 narrow panels and the 8 columns left over in 16 k-chunks. */
Test(ws_policy, rem_split_at_the_headline) {
    int tiles_n = 32, nw = 32;
    cr_assert_eq(mg_ws_mixed_panels(8, 8192, SMS, 256, 248, 0, &tiles_n, &nw), 1);
    cr_expect_eq(mg_ws_rem_chunks(8, SMS, tiles_n, nw, 8192 / 64, 1, MG_WS_REM_MAX_CHUNKS, 0), 16);   /* bf16 */
    cr_expect_eq(mg_ws_rem_chunks(8, SMS, tiles_n, nw, 8192 / 32, 1, MG_WS_REM_MAX_CHUNKS, 0), 16);   /* tf32 */
    cr_expect_eq(8192 - 248 * tiles_n, 8, "8 remainder columns");
    /* never for max_dim 0 (its finalize would need a column reduction of the sums) */
    cr_expect_eq(mg_ws_rem_chunks(8, SMS, tiles_n, nw, 128, 0, MG_WS_REM_MAX_CHUNKS, 1), 0);
}

Test(ws_policy, rem_split_only_where_it_pays) {
    /* not without exactly one wide panel: none (nothing left over) or two (16 columns: more than the 8 spare
     * accumulator columns) */
    cr_expect_eq(mg_ws_rem_chunks(8, SMS, 33, 0, 128, 1, 16, 1), 0);
    cr_expect_eq(mg_ws_rem_chunks(8, SMS, 33, 2, 128, 1, 16, 1), 0);
    /* M = 4096 (32 unit rows x 33 panels = 8 waves): the wide panel costs 8 of 8 x 248 columns, 0.4%: not taken
     * unless forced */
    cr_expect_eq(mg_ws_rem_chunks(32, SMS, 33, 1, 128, 1, 16, 0), 0);
    cr_expect_eq(mg_ws_rem_chunks(32, SMS, 33, 1, 128, 1, 16, 1), 16);
    /* 4 waves still taken (M = 2048: 16 x 33 = 528 tiles on 132 SMs) */
    cr_expect_eq(mg_ws_rem_chunks(16, SMS, 33, 1, 128, 1, 16, 0), 16);
    /* K short: as many chunks as k-blocks, and none below 2 (one chunk is the wide panel again) */
    cr_expect_eq(mg_ws_rem_chunks(8, SMS, 33, 1, 5, 1, 16, 0), 5);
    cr_expect_eq(mg_ws_rem_chunks(8, SMS, 33, 1, 1, 1, 16, 0), 0);
    /* the chunk count is capped by the panels and by the caller's most */
    cr_expect_eq(mg_ws_rem_chunks(8, SMS, 3, 1, 128, 1, 16, 1), 3);
    cr_expect_eq(mg_ws_rem_chunks(8, SMS, 33, 1, 128, 1, 4, 0), 4);
    cr_expect_eq(mg_ws_rem_chunks(8, 0, 33, 1, 128, 1, 16, 1), 0, "no SMs: nothing");
}

Test(ws_policy, rem_ranges_cover_k_once) {
    /* every k-block in exactly one chunk, the chunks in order, sizes differing by at most one */
    const long long nks[] = {2, 3, 5, 16, 17, 128, 129, 256, 1000};
    const int chs[] = {2, 3, 5, 7, 16};
    for (size_t a = 0; a < sizeof nks / sizeof nks[0]; a++)
        for (size_t b = 0; b < sizeof chs / sizeof chs[0]; b++) {
            const long long nk = nks[a];
            const int ch = chs[b];
            if (ch > nk) continue;
            int prev = 0, lo = 1 << 30, hi = 0;
            for (int j = 0; j < ch; j++) {
                int k0, k1;
                mg_ws_rem_range(nk, ch, j, &k0, &k1);
                cr_expect_eq(k0, prev, "num_k %lld chunks %d: chunk %d starts at %d, expected %d", nk, ch, j, k0, prev);
                cr_expect(k1 > k0, "num_k %lld chunks %d: chunk %d is empty", nk, ch, j);
                lo = k1 - k0 < lo ? k1 - k0 : lo;
                hi = k1 - k0 > hi ? k1 - k0 : hi;
                prev = k1;
            }
            cr_expect_eq(prev, nk, "num_k %lld chunks %d: the chunks end at %d", nk, ch, prev);
            cr_expect(hi - lo <= 1, "num_k %lld chunks %d: sizes %d..%d", nk, ch, lo, hi);
        }
}

/* The 128 x 192 tiles replace the main ones where the main tiles' last wave is mostly empty and the narrower tiles
 * fill theirs (src/ws_policy.h mg_ws_pick_n192), at N = 8192 on 132 SMs. */
static int n192(long long m, long long n, long long sms) { return mg_ws_pick_n192(m, n, sms, 128, 256, 248, 128, 192); }

Test(ws_policy, n192_where_the_main_wave_is_partial) {
    /* M = 257..384: 96 main tiles (one 73% wave, 256 columns each) against 129 tiles of 192 (one wave) */
    const long long yes[] = {257, 300, 384, 513, 600, 768, 1025, 1152};
    /* M = 385..512: 128 main tiles fill the wave; 769..1024: 2 waves either way, the 192 tiles need 3;
     * the headline and the large M: the mixed panels already even the waves out */
    const long long no[] = {385, 512, 769, 896, 1000, 1024, 2048, 4096, 4097, 16384};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        cr_expect(n192(yes[i], 8192, SMS), "M = %lld: expected the 128 x 192 tiles", yes[i]);
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        cr_expect(!n192(no[i], 8192, SMS), "M = %lld: expected the main tiles", no[i]);
    /* the estimates behind M = 300 and M = 600 */
    cr_expect_eq(mg_ws_main_cost(3, 8192, SMS, 256, 248), 256);
    cr_expect_eq(mg_ws_main_cost(5, 8192, SMS, 256, 248), 504, "2 waves of 248 with the mixed panels, + 8");
    cr_expect_eq(mg_ws_main_cost(8, 8192, SMS, 256, 248), 504, "the headline");
    cr_expect(!n192(0, 8192, SMS) && !n192(300, 8192, 0), "no rows or no SMs: never");
}

/* ---- the launch plan (mg_ws_make_plan): every choice kernels 4 and 6 make, pinned on the CPU ------------------- */

/* Kernel 4 bf16 / tf32 and kernel 6 exactly as their .cu files plan with them (src/ws_policy.h); set by each plan
 * test's .init. */
static mg_ws_kernel K4_BF16, K4_TF32, K6;
static void describe_kernels(void) {
    K4_BF16 = mg_ws_kernel4(MG_PREC_BF16);
    K4_TF32 = mg_ws_kernel4(MG_PREC_TF32);
    K6 = mg_ws_kernel6();
}

static mg_ws_plan plan_of(const mg_ws_kernel *kd, long long m, long long n, long long k, int md, const mg_options *o,
                          int *rows, size_t *ws) {
    mg_ws_plan pl;
    char why[160] = "";
    cr_assert_eq(mg_ws_make_plan(kd, m, n, k, md, 1, SMS, o, &pl, rows, ws, why, sizeof why), 0, "%s", why);
    return pl;
}

Test(ws_policy, plan_at_the_headline, .init = describe_kernels) {
    const mg_options o = mg_options_default();
    int rows;
    size_t ws;
    /* bf16 max_dim 1: main tiles, 33 narrow panels, the 8 columns left over in 16 k-chunks, 132 CTAs, no stream-K */
    mg_ws_plan pl = plan_of(&K4_BF16, 1024, 8192, 8192, 1, &o, &rows, &ws);
    cr_expect_eq(pl.cfg, MG_WS_TILES_MAIN);
    cr_expect_eq(pl.tiles_m, 8);
    cr_expect_eq(pl.tiles_n, 33);
    cr_expect_eq(pl.nw, 0);
    cr_expect_eq(pl.rem_chunks, 16);
    cr_expect_eq(pl.rem_w, 8);
    cr_expect_eq(pl.rem_n0, 248 * 33);
    cr_expect_eq(pl.grid, SMS);
    cr_expect_eq(pl.sk_tiles, 0);
    cr_expect_eq(pl.dp_tiles, 264);
    cr_expect_eq(rows, 33, "one partial row per column panel");
    cr_expect_eq(pl.pad_x, 0);
    /* max_dim 0: the mixed panels (one wide), no remainder split; one partial row per 64-row slab */
    pl = plan_of(&K4_BF16, 1024, 8192, 8192, 0, &o, &rows, &ws);
    cr_expect_eq(pl.tiles_n, 33);
    cr_expect_eq(pl.nw, 1);
    cr_expect_eq(pl.rem_chunks, 0);
    cr_expect_eq(rows, 16);
    /* the options turn each choice off */
    mg_options off = o;
    off.rem_split = MG_SWITCH_OFF;
    pl = plan_of(&K4_BF16, 1024, 8192, 8192, 1, &off, &rows, &ws);
    cr_expect(pl.rem_chunks == 0 && pl.nw == 1 && pl.tiles_n == 33, "--rem-split off: the mixed panels");
    off.mixed_panels = MG_SWITCH_OFF;
    pl = plan_of(&K4_BF16, 1024, 8192, 8192, 1, &off, &rows, &ws);
    cr_expect(pl.tiles_n == 32 && pl.nw == 32 && rows == 32, "--mixed-panels off: 32 uniform panels");
    /* tf32 the same */
    pl = plan_of(&K4_TF32, 1024, 8192, 8192, 1, &o, &rows, &ws);
    cr_expect(pl.cfg == MG_WS_TILES_MAIN && pl.rem_chunks == 16 && pl.tiles_n == 33);
}

Test(ws_policy, plan_small_m_runs_stream_k, .init = describe_kernels) {
    const mg_options o = mg_options_default();
    int rows;
    size_t ws;
    /* M = 64 bf16: the small tiles (64 x 128), 64 tiles on 132 SMs: all split over the 132 CTAs */
    mg_ws_plan pl = plan_of(&K4_BF16, 64, 8192, 8192, 1, &o, &rows, &ws);
    cr_expect_eq(pl.cfg, MG_WS_TILES_SMALL);
    cr_expect_eq(pl.sk_tiles, 64);
    cr_expect_eq(pl.dp_tiles, 0);
    cr_expect_eq(pl.grid, SMS);
    cr_expect(pl.off_slots >= pl.off_flags + mg_ws_flag_bytes(SMS) && ws >= pl.off_slots + mg_ws_slot_bytes(
              &K4_BF16.cfg[MG_WS_TILES_SMALL], SMS), "the slots lie after the flags, inside the workspace");
    /* --no-streamk: whole tiles */
    mg_options off = o;
    off.streamk = MG_SWITCH_OFF;
    pl = plan_of(&K4_BF16, 64, 8192, 8192, 1, &off, &rows, &ws);
    cr_expect(pl.sk_tiles == 0 && pl.dp_tiles == 64 && pl.grid == 64);
    /* kernel 6 at M = 1 (one tile row of 32 tiles): stream-K */
    pl = plan_of(&K6, 1, 8192, 8192, 1, &o, &rows, &ws);
    cr_expect(pl.sk_tiles == 32 && pl.grid == SMS && rows == 32);
    /* too few k-iterations per range (K = 64: 2 per tile, 64 in all < 4 x 132): whole tiles */
    pl = plan_of(&K4_BF16, 64, 8192, 64, 1, &o, &rows, &ws);
    cr_expect_eq(pl.sk_tiles, 0);
}

Test(ws_policy, plan_tiles_option_and_mid_m, .init = describe_kernels) {
    const mg_options o = mg_options_default();
    int rows;
    size_t ws;
    cr_expect_eq(plan_of(&K4_BF16, 200, 8192, 8192, 1, &o, &rows, &ws).cfg, MG_WS_TILES_MID);
    cr_expect_eq(plan_of(&K4_BF16, 300, 8192, 8192, 1, &o, &rows, &ws).cfg, MG_WS_TILES_N192);
    const mg_tiles t[] = {MG_TILES_MAIN, MG_TILES_SMALL, MG_TILES_MID, MG_TILES_N192};
    for (int i = 0; i < 4; i++) {
        mg_options f = o;
        f.tiles = t[i];
        cr_expect_eq(plan_of(&K4_BF16, 300, 8192, 8192, 1, &f, &rows, &ws).cfg, i, "--tiles %s", mg_tiles_name(t[i]));
    }
}

Test(ws_policy, plan_pads_x_and_refuses_what_it_cannot_read, .init = describe_kernels) {
    const mg_options o = mg_options_default();
    int rows;
    size_t ws;
    /* bf16 K = 4100: 8200-byte rows, not 16-byte multiples: x copied with rows of 4104 elements */
    mg_ws_plan pl = plan_of(&K4_BF16, 3, 5000, 4100, 1, &o, &rows, &ws);
    cr_expect(pl.pad_x == 1 && pl.x_ld == 4104);
    cr_expect(ws >= pl.off_x + mg_ws_x_bytes(3, 4104, 2));
    /* kernel 4 with a misaligned x base and 16-byte rows: refused with the reason; kernel 6 copies it */
    char why[160] = "";
    cr_expect_eq(mg_ws_make_plan(&K4_BF16, 64, 64, 64, 1, 0, SMS, &o, &pl, &rows, &ws, why, sizeof why), -1);
    cr_expect(strstr(why, "16-byte aligned") != NULL, "why: %s", why);
    cr_expect_eq(mg_ws_make_plan(&K6, 64, 64, 64, 1, 0, SMS, &o, &pl, &rows, &ws, why, sizeof why), 0);
    cr_expect(pl.pad_x == 1 && pl.x_ld == 64);
    /* K = 0: no workspace at all */
    pl = plan_of(&K4_BF16, 5, 7, 0, 1, &o, &rows, &ws);
    cr_expect(ws == 0 && pl.sk_tiles == 0);
}

/* Every plan for every m <= M and every option lies within the bounds the library allocates once, and the workspace
 * regions of a plan never overlap. */
Test(ws_policy, plans_stay_within_the_bounds, .init = describe_kernels) {
    const mg_ws_kernel *kds[] = {&K4_BF16, &K4_TF32, &K6};
    const long long Ms[] = {1, 64, 256, 1024};
    const long long shapes[][2] = {{8192, 8192}, {8190, 4100}, {520, 264}, {7, 0}};
    for (size_t ki = 0; ki < 3; ki++)
        for (size_t si = 0; si < 4; si++)
            for (size_t mi = 0; mi < 4; mi++)
                for (int md = 0; md < 2; md++) {
                    const long long M = Ms[mi], n = shapes[si][0], k = shapes[si][1];
                    int brows;
                    size_t bws;
                    mg_ws_bounds(kds[ki], M, n, k, md, SMS, &brows, &bws);
                    for (long long m = 1; m <= M; m = m < 8 ? m + 1 : m * 2 + 1)
                        for (int t = 0; t < MG_TILES_COUNT; t++)
                            for (int sw = 0; sw < 3; sw++) {
                                mg_options o = mg_options_default();
                                o.tiles = (mg_tiles)t;
                                o.mixed_panels = o.rem_split = (mg_switch)sw;
                                o.streamk = (mg_switch)sw;
                                int rows;
                                size_t ws;
                                mg_ws_plan pl;
                                char why[160];
                                cr_assert_eq(mg_ws_make_plan(kds[ki], m, n, k, md, 0, SMS, &o, &pl, &rows, &ws, why,
                                                             sizeof why) == 0 || !kds[ki]->pad_misaligned, 1, "%s", why);
                                if (mg_ws_make_plan(kds[ki], m, n, k, md, 1, SMS, &o, &pl, &rows, &ws, why, sizeof why))
                                    cr_assert_fail("%s", why);
                                cr_assert(rows >= 1 && rows <= brows && ws <= bws,
                                          "%s M=%lld m=%lld N=%lld K=%lld md %d tiles %d switch %d: %d rows (bound %d), "
                                          "%zu bytes (bound %zu)", kds[ki]->name, M, m, n, k, md, t, sw, rows, brows,
                                          ws, bws);
                                cr_assert(pl.off_flags <= pl.off_x && pl.off_x <= pl.off_rem &&
                                          pl.off_rem <= pl.off_slots && pl.off_slots <= ws, "regions in order");
                                if (pl.sk_tiles > 0)
                                    cr_assert(pl.off_x >= mg_ws_flag_bytes(SMS), "the flags have their own bytes");
                            }
                }
}

/* --streamk force: the whole waves run whole, the last partial wave is split into SMS k-ranges (M = 600 bf16 at
 * N = K = 8192: 5 x 32 main tiles = 160, one wave of 132 whole, 28 split); a grid of whole waves stays whole; auto
 * keeps the whole tiles there. */
Test(ws_policy, streamk_force_splits_the_last_partial_wave, .init = describe_kernels) {
    mg_options o = mg_options_default();
    mg_ws_plan pl;
    int rows;
    size_t ws, bws;
    int brows;
    char why[160];
    o.tiles = MG_TILES_MAIN;
    o.streamk = MG_SWITCH_FORCE;
    cr_assert_eq(mg_ws_make_plan(&K4_BF16, 600, 8192, 8192, 1, 1, SMS, &o, &pl, &rows, &ws, why, sizeof why), 0, "%s",
                 why);
    cr_assert_eq(pl.dp_tiles, 132);
    cr_assert_eq(pl.sk_tiles, 28);
    cr_assert_eq(pl.grid, SMS);
    cr_assert_eq(rows, 32, "one partial row per 256-wide panel (no mixed panels with stream-K)");
    mg_ws_bounds(&K4_BF16, 1024, 8192, 8192, 1, SMS, &brows, &bws);
    cr_assert(ws <= bws && rows <= brows);
    /* 4 x 33 = 132 tiles: whole waves, nothing to split */
    cr_assert_eq(mg_ws_make_plan(&K4_BF16, 512, 33 * 256, 8192, 0, 1, SMS, &o, &pl, &rows, &ws, why, sizeof why), 0);
    cr_assert_eq(pl.sk_tiles, 0, "tiles %d x %d", pl.tiles_m, pl.tiles_n);
    o.streamk = MG_SWITCH_AUTO;
    cr_assert_eq(mg_ws_make_plan(&K4_BF16, 600, 8192, 8192, 1, 1, SMS, &o, &pl, &rows, &ws, why, sizeof why), 0);
    cr_assert_eq(pl.sk_tiles, 0, "auto: the last partial wave runs whole tiles");
}
