/* ws_policy.h: the host policy of the warp-specialized kernels 4 and 6 (kernels/ws_*.cuh): every launch decision
 * as a pure function of the shape, the tile sizes, the number of SMs and the options, ending in mg_ws_make_plan,
 * which fills the launch plan those kernels run (tile configuration, column panels, stream-K, remainder split, grid,
 * padding and the workspace layout). CPU tests pin all of it (test/test_ws_policy.c). C11 and C++.
 * Measurements behind each rule: notes/04_wgmma_ws.md ("Small M", "Mid M", "MIXED PANELS" / round 3). */
#ifndef MG_WS_POLICY_H
#define MG_WS_POLICY_H

#include <stddef.h>
#include <stdio.h>

#include "maxgemm.h"
#include "mg_tiles.h"

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
 * last row of tiles shifted inside M (ws_scheduler.cuh tile_row0), by 14-18% at M = 129-192.) */
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

/* Mixed-width column panels ("PANELS" in kernels/ws_scheduler.cuh): instead of *tiles_n panels of bn columns
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

/* Remainder split ("PANELS" in kernels/ws_scheduler.cuh, ws_epilogue.cuh row_max): where the mixed panels need exactly one wide panel
 * (nw = 1: N = 248 * tiles_n + r, 0 < r <= 8), max_dim 1 can instead run ALL tiles_n panels narrow and split the r
 * columns left over along K: the tiles (row unit u, panel j < chunks) each add k-chunk j of those columns to their
 * own wgmma (n256 instead of n248 for about num_k / chunks k-iterations) and write the fp32 sums out; the finalize
 * adds the chunks and folds them into the row maxima. The 8 CTAs that ran the 256-wide panel no longer run 1.6%
 * longer than the rest. Returns the number of k-chunks, 0 where it is not taken: max_dim 0 (its finalize would need
 * a column reduction of the sums over M), more than MG_WS_REM_MAX_WAVES waves of tiles (the wide panel's cost, 8
 * columns of waves x 248, is then below ~1%), or fewer than 2 chunks (K too short: the split is the wide panel
 * again). force: ignore MG_WS_REM_MAX_WAVES (tests). */
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

/* ---- the launch plan ------------------------------------------------------------------------------------------ */

/* One tile configuration (a tile_configs/ row: MG_TILE_<kernel>_<precision> expands to these six). */
typedef struct mg_ws_shape {
    int bm, bn, bk, stages, consumers, cluster;
} mg_ws_shape;

/* What a kernel brings to mg_ws_make_plan: its configurations (indexed by mg_ws_tiles; kernel 6 has one) and how it
 * reads x. */
typedef struct mg_ws_kernel {
    const char *name;
    mg_ws_shape cfg[4];
    int ncfg;              /* 4 (kernel 4: main, small, mid, n192) or 1 (kernel 6) */
    int panels;            /* 1: the main configuration may run mixed 256 / 248 panels and the remainder split */
    int x_elem;            /* bytes per x element as TMA reads it */
    int x_ld_mult;         /* a padded copy of x has rows of a multiple of this many elements (16 bytes) */
    int pad_misaligned;    /* 1: an x whose base is not 16-byte aligned is copied (kernel 6); 0: refused (kernel 4) */
} mg_ws_kernel;

/* The kernel's own part of the launch plan (mg_launch_plan::priv). The workspace layout, in one place
 * (mg_ws_make_plan): [stream-K flags: fixed size and place, zero between launches] [padded x] [remainder sums]
 * [stream-K accumulator slots]. */
typedef struct mg_ws_plan {
    int cfg;                  /* index into mg_ws_kernel::cfg (kernel 4: an mg_ws_tiles) */
    int tiles_m, tiles_n, nw; /* tile rows; column panels, the first nw BN wide, the rest BN - 8 */
    int dp_tiles, sk_tiles;   /* tiles run whole, then tiles split into grid k-ranges (stream-K) */
    int grid;                 /* CTAs of the persistent grid */
    int rem_n0, rem_w, rem_chunks; /* remainder split: columns [rem_n0, rem_n0 + rem_w) summed in rem_chunks k-chunks */
    int pad_x;                /* 1: x is copied into the workspace (rows of x_ld elements) for TMA */
    long long x_ld;           /* row stride of the x TMA reads, in elements */
    size_t off_flags, off_x, off_rem, off_slots; /* workspace offsets */
} mg_ws_plan;

static inline size_t mg_ws_align256(size_t v) { return (v + 255) & ~(size_t)255; }
/* The stream-K flags: one int per consumer (at most 2) of each of G CTAs. */
static inline size_t mg_ws_flag_bytes(long long G) { return mg_ws_align256((size_t)G * 2 * sizeof(int)); }
/* The stream-K accumulator slots: a 64 x BN fp32 block per consumer of each of G CTAs. */
static inline size_t mg_ws_slot_bytes(const mg_ws_shape *c, long long G) {
    return mg_ws_align256((size_t)G * c->consumers * (size_t)(c->bn / 2) * 128 * sizeof(float));
}
static inline size_t mg_ws_x_bytes(long long m, long long ld, int elem) {
    return mg_ws_align256((size_t)m * (size_t)ld * (size_t)elem);
}
static inline size_t mg_ws_rem_bytes(long long m, long long cols, int chunks) {
    return mg_ws_align256((size_t)chunks * (size_t)cols * (size_t)m * sizeof(float));
}
static inline long long mg_ws_padded_ld(long long k, int mult) { return (k + mult - 1) / mult * mult; }

/* Partial rows a launch of configuration c writes: one per column panel (max_dim 1), one per 64-row slab (0). */
static inline int mg_ws_partial_rows(const mg_ws_shape *c, long long m, long long n, int max_dim, int mixed) {
    return (int)(max_dim == 1 ? mg_ws_cdiv(n, c->bn) + (mixed ? 1 : 0) : mg_ws_cdiv(m, 64));
}

/* Whether stream-K may split tiles of configuration c for some batch and some options (bounds): with --streamk force
 * any grid with a partial last wave may (whatever M and N), when k gives the G ranges at least 4 k-iterations. */
static inline int mg_ws_streamk_possible(const mg_ws_shape *c, long long k, long long G) {
    if (k == 0 || G <= 0) return 0;
    return (G - 1) * mg_ws_cdiv(k, c->bk) >= 4LL * G;
}

/* The most partial rows and workspace bytes of any plan for m <= M, any options (mg_kernel_ops::bounds). */
static inline void mg_ws_bounds(const mg_ws_kernel *kd, long long M, long long n, long long k, int max_dim,
                                long long G, int *rows, size_t *ws) {
    int r = 0;
    size_t slots = 0;
    for (int i = 0; i < kd->ncfg; i++) {
        const int ri = mg_ws_partial_rows(&kd->cfg[i], M, n, max_dim, kd->panels && i == MG_WS_TILES_MAIN);
        if (ri > r) r = ri;
        if (mg_ws_streamk_possible(&kd->cfg[i], k, G)) {
            const size_t s = mg_ws_slot_bytes(&kd->cfg[i], G);
            if (s > slots) slots = s;
        }
    }
    *rows = r;
    size_t w = 0;
    if (k > 0) {
        w = mg_ws_flag_bytes(G);
        const int x_may_pad = (k * kd->x_elem) % 16 != 0 || kd->pad_misaligned;
        if (x_may_pad) w += mg_ws_x_bytes(M, mg_ws_padded_ld(k, kd->x_ld_mult), kd->x_elem);
        if (kd->panels && max_dim == 1)
            w += mg_ws_rem_bytes(M, 8, MG_WS_REM_MAX_CHUNKS);   /* at most 8 columns left over (BN - 248) */
        w += slots;
    }
    *ws = w;
}

/* The configuration a shape runs: the option's, else the policy's (mg_ws_pick_tiles, then mg_ws_pick_n192). */
static inline int mg_ws_choose_cfg(const mg_ws_kernel *kd, long long m, long long n, long long G, mg_tiles opt) {
    if (kd->ncfg == 1) return 0;
    switch (opt) {
    case MG_TILES_MAIN: return MG_WS_TILES_MAIN;
    case MG_TILES_MID: return MG_WS_TILES_MID;
    case MG_TILES_SMALL: return MG_WS_TILES_SMALL;
    case MG_TILES_N192: return MG_WS_TILES_N192;
    default: break;
    }
    const mg_ws_shape *big = &kd->cfg[MG_WS_TILES_MAIN], *mid = &kd->cfg[MG_WS_TILES_MID],
                      *n192 = &kd->cfg[MG_WS_TILES_N192];
    const mg_ws_tiles w = mg_ws_pick_tiles(m, n, G, big->bm, big->bn, mid->bm, mid->bn);
    if (w == MG_WS_TILES_MAIN && mg_ws_pick_n192(m, n, G, big->bm, big->bn, big->bn - 8, n192->bm, n192->bn))
        return MG_WS_TILES_N192;
    return (int)w;
}

/* Every decision for one launch (see mg_ws_plan). Returns 0, or -1 with why[] saying what cannot run. rows, ws: the
 * launch's partial rows and workspace bytes; rem_*: what the finalize folds in (mg_launch_plan). */
static inline int mg_ws_make_plan(const mg_ws_kernel *kd, long long m, long long n, long long k, int max_dim,
                                  int x_aligned, long long G, const mg_options *opt, mg_ws_plan *pl, int *rows,
                                  size_t *ws, char *why, size_t why_len) {
    mg_ws_plan z = {0};
    *pl = z;
    if (G <= 0) G = 1;
    pl->cfg = mg_ws_choose_cfg(kd, m, n, G, opt->tiles);
    const mg_ws_shape *c = &kd->cfg[pl->cfg];
    const int panels = kd->panels && pl->cfg == MG_WS_TILES_MAIN && c->bn == 256;
    pl->tiles_m = (int)mg_ws_cdiv(m, c->bm);
    pl->tiles_n = (int)mg_ws_cdiv(n, c->bn);
    pl->nw = pl->tiles_n;
    long long tiles = (long long)pl->tiles_m * pl->tiles_n;
    if (tiles > 0x7fffffffLL) {
        snprintf(why, why_len, "%s: too many tiles (%lld)", kd->name, tiles);
        return -1;
    }
    /* x: read in place by TMA (16-byte rows and base), else a padded copy in the workspace (kernel 6), or refused */
    const int rows16 = (k * kd->x_elem) % 16 == 0;
    pl->x_ld = k;
    if (k > 0 && (!rows16 || (!x_aligned && kd->pad_misaligned))) {
        pl->pad_x = 1;
        pl->x_ld = mg_ws_padded_ld(k, kd->x_ld_mult);
    } else if (k > 0 && !x_aligned) {
        snprintf(why, why_len, "%s: x must be 16-byte aligned for TMA", kd->name);
        return -1;
    }
    pl->grid = (int)(tiles < G ? tiles : G);
    pl->dp_tiles = (int)tiles;
    const long long nk = mg_ws_cdiv(k, c->bk);
    /* Stream-K: when the tiles would leave more than half the SMs idle (small M), all of them are split into G equal
     * k-ranges, if each range gets at least 4 k-iterations. Not for the last partial wave of a larger problem (r14:
     * the headline ran 11-47% slower: CTAs at different k offsets of the tiles sharing a W panel break the lockstep
     * that lets L2 serve the panel once; notes/04_wgmma_ws.md "Stream-K"). */
    const long long tail = tiles % G; /* the last partial wave's tiles (all of them when tiles < G) */
    if (opt->streamk != MG_SWITCH_OFF && nk > 0 && 2 * tiles <= G && tiles * nk >= 4LL * G) {
        pl->dp_tiles = 0;
        pl->sk_tiles = (int)tiles;
        pl->grid = (int)G;
    } else if (opt->streamk == MG_SWITCH_FORCE && nk > 0 && tail > 0 && tail * nk >= 4LL * G) {
        /* --streamk force (issue 18's mid-M experiment; the dispatch table takes it where it measures faster): the
         * whole waves run as whole tiles, the last partial wave's tiles are split into G equal k-ranges. M = 600
         * bf16, 128 x 256 tiles: 160 tiles on 132 SMs, 2 waves of whole tiles -> 1 wave + 28 x 128 / 132 = 27
         * k-iterations per CTA. */
        pl->dp_tiles = (int)(tiles - tail);
        pl->sk_tiles = (int)tail;
        pl->grid = (int)G;
    } else if (panels) {
        if (opt->mixed_panels != MG_SWITCH_OFF)
            (void)mg_ws_mixed_panels(pl->tiles_m, n, G, c->bn, c->bn - 8, opt->mixed_panels == MG_SWITCH_FORCE,
                                     &pl->tiles_n, &pl->nw);
        tiles = (long long)pl->tiles_m * pl->tiles_n;
        pl->dp_tiles = (int)tiles;
        pl->grid = (int)(tiles < G ? tiles : G);
        if (k > 0 && opt->rem_split != MG_SWITCH_OFF) {
            const int ch = mg_ws_rem_chunks(pl->tiles_m, G, pl->tiles_n, pl->nw, nk, max_dim, MG_WS_REM_MAX_CHUNKS,
                                            opt->rem_split == MG_SWITCH_FORCE);
            const long long r = n - (long long)(c->bn - 8) * pl->tiles_n;
            if (ch > 0 && r >= 1 && r <= 8) {
                pl->rem_n0 = (c->bn - 8) * pl->tiles_n;
                pl->rem_w = (int)r;
                pl->rem_chunks = ch;
                pl->nw = 0;
            }
        }
    }
    /* one partial row per column panel (max_dim 1) or per 64-row slab (max_dim 0) */
    *rows = max_dim == 1 ? pl->tiles_n : (int)mg_ws_cdiv(m, 64);
    /* the workspace layout */
    size_t off = 0;
    if (k > 0) off = mg_ws_flag_bytes(G);
    pl->off_flags = 0;
    pl->off_x = off;
    if (pl->pad_x) off += mg_ws_x_bytes(m, pl->x_ld, kd->x_elem);
    pl->off_rem = off;
    if (pl->rem_chunks > 0) off += mg_ws_rem_bytes(m, pl->rem_w, pl->rem_chunks);
    pl->off_slots = off;
    if (pl->sk_tiles > 0) off += mg_ws_slot_bytes(c, G);
    *ws = off;
    return 0;
}

/* Kernels 4 and 6 as the policy sees them, from the same tile_configs/ rows (MG_TILE_*) their Cfg templates
 * instantiate: the kernels plan with these, and the CPU tests pin the plans of exactly these. */
#define MG_WS_SHAPE(row) {row##_BM, row##_BN, row##_BK, row##_STAGES, row##_CONSUMERS, row##_CLUSTER}
static inline mg_ws_kernel mg_ws_kernel4(mg_precision prec) {
    /* x read as stored (bf16 2 bytes, tf32 4), rows padded to 16 bytes; a misaligned x base is refused */
    const mg_ws_kernel bf16 = {"wgmma_ws",
                               {MG_WS_SHAPE(MG_TILE_wgmma_ws_bf16), MG_WS_SHAPE(MG_TILE_wgmma_ws_small_bf16),
                                MG_WS_SHAPE(MG_TILE_wgmma_ws_mid_bf16), MG_WS_SHAPE(MG_TILE_wgmma_ws_n192_bf16)},
                               4, 1, 2, 8, 0};
    const mg_ws_kernel tf32 = {"wgmma_ws",
                               {MG_WS_SHAPE(MG_TILE_wgmma_ws_tf32), MG_WS_SHAPE(MG_TILE_wgmma_ws_small_tf32),
                                MG_WS_SHAPE(MG_TILE_wgmma_ws_mid_tf32), MG_WS_SHAPE(MG_TILE_wgmma_ws_n192_tf32)},
                               4, 1, 4, 4, 0};
    return prec == MG_PREC_BF16 ? bf16 : tf32;
}
static inline mg_ws_kernel mg_ws_kernel6(void) {
    /* x read as fp32, rows padded to 4 elements; a misaligned x base is copied, as its K tail is */
    const mg_ws_kernel k6 = {"wgmma_bf16x3", {MG_WS_SHAPE(MG_TILE_wgmma_bf16x3_fp32)}, 1, 0, 4, 4, 1};
    return k6;
}

/* The plan in one line (mg_launch_plan::summary: --verbose, the bench's notes). */
static inline void mg_ws_plan_summary(const mg_ws_kernel *kd, const mg_ws_plan *pl, char *buf, size_t len) {
    static const char *const names[4] = {"main", "small", "mid", "n192"};
    const mg_ws_shape *c = &kd->cfg[pl->cfg];
    const int narrow = pl->tiles_n - pl->nw;
    char rem[64] = "";
    if (pl->rem_chunks > 0) snprintf(rem, sizeof rem, ", remainder %d cols in %d k-chunks", pl->rem_w, pl->rem_chunks);
    snprintf(buf, len, "tiles %s %dx%d (%d consumer%s, %d stages), %d x %d tiles%s on %d CTAs, %d panels%s%s%s",
             kd->ncfg == 1 ? "" : names[pl->cfg], c->bm, c->bn, c->consumers, c->consumers == 1 ? "" : "s", c->stages,
             pl->tiles_m, pl->tiles_n, pl->sk_tiles > 0 ? " stream-K" : "", pl->grid, pl->tiles_n,
             narrow > 0 ? (pl->nw > 0 ? " (mixed 256/248)" : " (248 wide)") : "", rem, pl->pad_x ? ", x padded" : "");
}

#endif /* MG_WS_POLICY_H */
