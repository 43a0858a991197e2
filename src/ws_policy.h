/* ws_policy.h: kernel 4's launch decisions (kernels/04_wgmma_ws.cu, kernels/wgmma_ws.cuh) as pure functions of the
 * shape, the tile sizes and the number of SMs, so that CPU tests pin them (test/test_ws_policy.c). The launchers
 * add only the environment overrides (MG_WS_TILES, MG_WS_SMALL, MG_WS_MIXED). C11 and C++.
 * Measurements behind each rule: notes/04_wgmma_ws.md ("Small M", "Mid M", "MIXED PANELS" / round 3). */
#ifndef MG_WS_POLICY_H
#define MG_WS_POLICY_H

/* Kernel 4's tile configurations; also the index of each one's W descriptor in the prepared state. */
typedef enum { MG_WS_TILES_MAIN = 0, MG_WS_TILES_SMALL = 1, MG_WS_TILES_MID = 2, MG_WS_TILES_N192 = 3 } mg_ws_tiles;

/* Host and device (the kernel calls mg_ws_rem_range itself, so the CPU tests pin the arithmetic it runs). */
#ifdef __CUDACC__
#define MG_WS_HD __host__ __device__
#else
#define MG_WS_HD
#endif

static inline long long mg_ws_cdiv(long long a, long long b) { return (a + b - 1) / b; }

/* The main tiles (big_bm x big_bn), unless they would leave more than half of the sms without a tile (they would then
 * split every tile by stream-K); then the mid tiles if they fill more than half the SMs with whole tiles; else the
 * small tiles (stream-K where they too leave half the SMs idle). At N = 8192 on 132 SMs with 128 x 256 / 128 x 128
 * tiles: M <= 128 small, 129..256 mid, above main. (Runs 34-37: mid beats small by 16-19% at M = 256 and, with the
 * last row of tiles shifted inside M (wgmma_ws.cuh tile_row0), by 14-18% at M = 129-192.) */
static inline mg_ws_tiles mg_ws_pick_tiles(long long m, long long n, long long sms, int big_bm, int big_bn, int mid_bm,
                                           int mid_bn) {
    const long long big = mg_ws_cdiv(m, big_bm) * mg_ws_cdiv(n, big_bn);
    if (2 * big > sms) return MG_WS_TILES_MAIN;
    const long long mid = mg_ws_cdiv(m, mid_bm) * mg_ws_cdiv(n, mid_bn);
    return 2 * mid > sms ? MG_WS_TILES_MID : MG_WS_TILES_SMALL;
}

/* The panel-width cost estimate of a persistent grid of G schedulers running unit_rows rows of scheduling units over
 * tiles_n column panels, nw of them bn wide and the rest narrow: columns of work on the busiest scheduler, i.e. its
 * waves of narrow panels plus (bn - narrow) for each wide unit it may get (at most one per wave). nw = tiles_n is
 * the uniform layout: waves x bn. */
static inline long long mg_ws_panels_cost(long long unit_rows, long long G, long long tiles_n, long long nw, int bn,
                                          int narrow) {
    const long long waves = mg_ws_cdiv(unit_rows * tiles_n, G), wide_per = mg_ws_cdiv(unit_rows * nw, G);
    return waves * narrow + (long long)(bn - narrow) * (wide_per < waves ? wide_per : waves);
}

/* Mixed-width column panels ("MIXED PANELS" in kernels/wgmma_ws.cuh): instead of *tiles_n panels of bn columns
 * (cdiv(N, bn)), one panel more, *nw of them bn wide and the rest narrow (bn - d, d = bn - narrow), covering N.
 * A persistent grid of G schedulers (CTAs, or clusters) runs unit_rows rows of scheduling units per panel, so a
 * scheduler's time is about (its units) x (panel width). Taken (returns 1 and sets *tiles_n, *nw) when that estimate
 * is lower, or whenever the narrow panels fit N if force; otherwise returns 0 and leaves both unchanged. At the
 * headline (8 unit rows, N = 8192, G = 132, 256 / 248): 33 panels, nw = 1: every CTA 248 + 248 columns (8 of them
 * 256 + 248) instead of 256 + 256. */
static inline int mg_ws_mixed_panels(long long unit_rows, long long n, long long G, int bn, int narrow, int force,
                                     int *tiles_n, int *nw) {
    const long long d = bn - narrow;
    const long long p1 = *tiles_n + 1;
    const long long need = n - p1 * narrow;   /* columns the narrow panels leave over */
    /* need < 0: p1 narrow panels would overshoot N (the last one partly or wholly past it): not worth it */
    if (d <= 0 || need < 0 || G <= 0 || unit_rows <= 0) return 0;
    const long long w1 = (need + d - 1) / d;   /* wide panels needed (d more columns each) */
    if (w1 > p1) return 0;
    const long long cost0 = mg_ws_panels_cost(unit_rows, G, *tiles_n, *tiles_n, bn, narrow);
    const long long cost1 = mg_ws_panels_cost(unit_rows, G, p1, w1, bn, narrow);
    if (!force && cost1 >= cost0) return 0;
    *tiles_n = (int)p1;
    *nw = (int)w1;
    return 1;
}

/* Remainder split ("REMAINDER SPLIT" in kernels/wgmma_ws.cuh): where the mixed panels need exactly one wide panel
 * (nw = 1: N = 248 * tiles_n + r, 0 < r <= 8), max_dim 1 can instead run ALL tiles_n panels narrow and split the r
 * columns left over along K: the tiles (row unit u, panel j < chunks) each add k-chunk j of those columns to their
 * own wgmma (n256 instead of n248 for about num_k / chunks k-iterations) and write the fp32 sums out; the finalize
 * adds the chunks and folds them into the row maxima. The 8 CTAs that ran the 256-wide panel no longer run 1.6%
 * longer than the rest. Returns the number of k-chunks, 0 where it is not taken: max_dim 0 (its finalize would need
 * a column reduction of the sums over M), more than max_waves waves of tiles (the wide panel's cost, 8 columns of
 * waves x 248, is then below ~1%), or fewer than 2 chunks (K too short: the split is the wide panel again).
 * force: ignore max_waves (tests). */
#define MG_WS_REM_MAX_CHUNKS 16   /* <= MG_REM_MAX_CHUNKS (mg_kernel.h: what the finalize takes) */
#define MG_WS_REM_MAX_WAVES 4
static inline int mg_ws_rem_chunks(long long unit_rows, long long G, int tiles_n, int nw, long long num_k, int max_dim,
                                   int max_chunks, int force) {
    if (max_dim != 1 || nw != 1 || G <= 0 || unit_rows <= 0 || tiles_n < 2) return 0;
    if (!force && mg_ws_cdiv(unit_rows * tiles_n, G) > MG_WS_REM_MAX_WAVES) return 0;
    long long ch = max_chunks < tiles_n ? max_chunks : tiles_n;
    if (num_k < ch) ch = num_k;
    return ch >= 2 ? (int)ch : 0;
}

/* k-blocks [*kb0, *kb1) of remainder chunk j of chunks, over num_k k-blocks (an even split; every block in one). */
static inline MG_WS_HD void mg_ws_rem_range(long long num_k, int chunks, int j, int *kb0, int *kb1) {
    *kb0 = (int)(num_k * j / chunks);
    *kb1 = (int)(num_k * (j + 1) / chunks);
}

/* The main tiles' cost estimate for a persistent grid of G CTAs: columns of work on the busiest CTA (waves x
 * panel width), with the mixed panels where mg_ws_mixed_panels takes them. */
static inline long long mg_ws_main_cost(long long unit_rows, long long n, long long G, int bn, int narrow) {
    int tiles_n = (int)mg_ws_cdiv(n, bn), nw = tiles_n;
    (void)mg_ws_mixed_panels(unit_rows, n, G, bn, narrow, 0, &tiles_n, &nw);   /* leaves them uniform if not taken */
    return mg_ws_panels_cost(unit_rows, G, tiles_n, nw, bn, narrow);
}

/* Where the main tiles were picked: the 128 x 192 tiles instead (returns 1) when their estimate (waves x 192) is at
 * least 10% below the main tiles' (a 192-wide tile does 3/4 of the tensor work of a 256-wide one for the same fixed
 * costs per tile and 11% more L2 -> SM bytes per flop, hence the margin). They win where the main tiles leave a
 * partial wave that the narrower tiles fill: at N = 8192 on 132 SMs, M = 257..384 (96 main tiles, one 73% wave,
 * against 129 tiles of 192), 513..768 (160-198 main tiles, 2 waves, against 215-258 tiles, 2 full waves) and
 * 1025..1152 (3 waves, the last a quarter full, against 387-430 tiles of 192). */
static inline int mg_ws_pick_n192(long long m, long long n, long long sms, int big_bm, int big_bn, int narrow, int bm,
                                  int bn) {
    if (sms <= 0 || m <= 0 || n <= 0) return 0;
    const long long main_cost = mg_ws_main_cost(mg_ws_cdiv(m, big_bm), n, sms, big_bn, narrow);
    const long long cost = mg_ws_cdiv(mg_ws_cdiv(m, bm) * mg_ws_cdiv(n, bn), sms) * bn;
    return 10 * cost <= 9 * main_cost;
}

#endif /* MG_WS_POLICY_H */
