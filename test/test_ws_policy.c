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

/* The remainder split (wgmma_ws.cuh "REMAINDER SPLIT"): at the headline, max_dim 1, instead of the one 256-wide panel:
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
