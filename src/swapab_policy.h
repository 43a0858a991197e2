/* swapab_policy.h: the host policy of kernel 8 (kernels/08_wgmma_swapab.cu, swap-AB wgmma for M <= 1024): every launch
 * decision as a pure function of the shape, the tile configurations (tile_configs/wgmma_swapab.cfg), the number of
 * SMs and the options, ending in mg_sab_make_plan, which fills the launch plan the kernel runs: the x-tile width NX
 * (wgmma's N), the number of x tiles, the consumers, the split-K factor S, the grid, the x padding and the workspace
 * layout. CPU tests pin all of it (test/test_swapab_policy.c). C11 and C++.
 *
 * THE SHAPE OF THE WORK. A tile is bn = 64 x consumers rows of W (wgmma's M side) against NX rows of x (wgmma's N
 * side); x's M rows are cut into xtiles = cdiv(M, NX) x tiles. tiles = cdiv(N, bn) W tiles. With split-K S every
 * tile's k-blocks are cut into S contiguous ranges (mg_sab_split_range), one unit of work each: units = tiles x
 * xtiles x S, unit u = ((W tile) x xtiles + x tile) x S + split, so the x tiles of one W tile are neighbours in the
 * grid and read that W tile from L2 together. The grid is persistent: min(units, SMs) CTAs, CTA b takes units b,
 * b + grid, ...
 * THE X TILE (mg_sab_pick_cfg). M <= 256: the smallest NX >= M, one x tile (no x row is read twice). M > 256: the
 * two-consumer configuration that minimises waves x (W rows x NX + a fixed cost per k-block) (mg_sab_multi_cost),
 * e.g. at N = 8192 on 132 SMs: M = 300 -> 2 x n152 (128 units, one wave, 1% padding), 384 -> 2 x n192, 512 -> 2 x
 * n256, 600 -> 4 x n152 of 256 W rows (w256_n152: 128 units, one wave; 128-row tiles would be 256 units in two waves),
 * 768 -> 4 x n192 of 256 W rows (w256_n192), 1024 -> 4 x n256. Several x tiles never split K
 * (S = 1: the work is already many units). mg_options.x_tile (> 0) asks for that NX instead (tuning: e.g. M = 256 as
 * 2 x n128); it must be one of the configurations' and, for M <= 256, no wider than the rule's (so only one-x-tile
 * plans of the rule's configuration split, and the bounds hold for any option). With several x tiles it takes that
 * NX's two-consumer 128-W-row row where the NX has one: x_tile = 64 at M = 128 runs w128_n64 (2 x n64 on 64 W tiles,
 * 128 units, the dispatch table's pick there), not the one-consumer n64 (256 units in two waves).
 * mg_options.w_rows (> 0: 64, 128 or 256) asks for tiles of that many W rows: the rule above among the configurations
 * of that height only (w_rows = 128 at M <= 64: w128_n64, one x tile of 64 on 128 W rows with the split rule's S,
 * where the rule takes a one-consumer 64-row tile; w_rows = 64 above 64: several one-consumer x tiles), with x_tile
 * that NX's configuration of that height. 256 rows need several x tiles (two slabs per consumer never split; one x
 * tile of them would leave most SMs idle): one x tile is refused. x_tile may still only narrow the x tile that the
 * plan would take without it. The bounds cover every one-x-tile plan any w_rows allows.
 * CLUSTERS. A configuration's cluster column (or mg_options.cluster) 2 runs the two-consumer tiles in clusters of
 * 2 CTAs (kernels/swapab_kernel.cuh "CLUSTERS OF 2"). With an even number of x tiles (mg_sab_wcast; unless
 * mg_options.mcast asks for x) the two share one W tile (x tiles 2r, 2r + 1), each loading half of the W box by TMA
 * multicast into both (W multicast). Otherwise (x multicast) they take W tiles 2q and 2q + 1 against the same x
 * tile and split, each loading half of the x box into both; the W tiles are then padded to an even count (a tile
 * past N reads zeros and writes nothing). The grid is even either way, so both CTAs of a cluster walk the same number
 * of units.
 * THE SPLIT RULE (one x tile). S = 1 .. mg_sab_split_cap (at most 16, at least 4 k-blocks per split, about 2 x SMs units) that
 * minimises the estimate mg_sab_split_cost: waves x k-blocks per split (the busiest SM's work) plus, for S > 1, a
 * fixed 2 k-blocks (the handoff: stores, fence, counter, the last CTA's epilogue) and the slot traffic in k-block
 * units. Ties go to the smaller S. At N = K = 8192 on 132 SMs: M <= 64 (64-row tiles, 128 of them): S = 1; M = 65..256
 * (128-row tiles, 64 of them): S = 2 (128 CTAs). mg_options.splits (> 0) asks for S instead; it is clamped to the cap
 * (the workspace bound is sized for the cap, so any request is safe).
 * PARTIAL ROWS. Each consumer warpgroup's 64 W rows (a slab) are reduced on their own: max_dim 1 writes one partial
 * row per slab, partial[slab * M + i] (cdiv(N, 64) rows, whatever the consumers and x tiles); max_dim 0 writes one row
 * per x tile, partial[xt * N + j].
 * THE FUSED FINISH (mg_sab_fusable). The kernel writes the forward's output itself (kernels/swapab_finish.cuh "THE
 * FUSED FINISH"), so no finalize kernel follows it. fuse = AUTO (the default): max_dim 1 by THE START TICKET (M
 * words; no CTA waits at its end: the fused finish measured 0.7-5 us faster than the finalize in run 72 with a last
 * CTA, the start ticket 0.5-5% faster again in run 112); max_dim 0 by THE GRID FINISH in every plan of clusters of 1
 * (one cooperative launch): each CTA finishes the final maxima of its own W rows where it holds them (one unit per
 * CTA, one x tile, S = 1: the W-stream plans of M <= 64), else a share of the columns after one grid barrier, and the
 * CTAs exchange their sums through THE TAGGED SLOTS (swapab_finish.cuh); in clusters of 2 the shared finalize, whose
 * kernels spread N GELUs over the GPU (the last CTA's N = 8192 on one SM measured 5-14 us slower). FORCE: in clusters
 * of 2 the last CTA, while N <= MG_SAB_FUSE_MAX_N (it stages the N column maxima in its ring), else refused. OFF:
 * neither; the shared finalize.
 * THE WORKSPACE, in one place (mg_sab_make_plan): [split counters: one int per slab, at offset 0 and of a size that
 * depends on N, K and the SM count only, so every plan of a problem finds them at the same place, zero between
 * launches] [the finish area: the done counter, max_dim 1's start word, the grid barrier's word and max_dim 1's
 * zgen, then MG_SAB_MAX_M (max_dim 1) or N (max_dim 0) words, at an offset and of a size that depend on N, K, max_dim
 * and the SM count only; zero between launches but for max_dim 1's start word, zgen and words, which each launch's
 * first CTA sets up itself (swapab_finish.cuh, THE START TICKET); the words only when fusable, the area only for
 * max_dim 0 when not]
 * [max_dim 0: the grid finish's tagged slots, one 64-bit word per SM (G), right after the finish area so that
 * every plan of the problem finds them at the same place: each grid-finish launch writes all G with its tag
 * (swapab_finish.cuh, THE TAGGED SLOTS)] [padded x, when TMA cannot read x in place] [split slots: S fp32 copies of
 * each slab's 64 x NX accumulators, slab-major]. */
#ifndef MG_SWAPAB_POLICY_H
#define MG_SWAPAB_POLICY_H

#include <stddef.h>
#include <stdio.h>

#include "maxgemm.h"
#include "mg_tiles.h"

#ifdef __CUDACC__
#define MG_SAB_HD __host__ __device__
#else
#define MG_SAB_HD
#endif

#define MG_SAB_MAX_M 1024       /* the largest M kernel 8 takes (several x tiles above 256) */
#define MG_SAB_ONE_TILE_M 256   /* up to here one x tile holds all of M (the widest wgmma N) */
#define MG_SAB_NCFG 12          /* tile_configs/wgmma_swapab.cfg rows per precision */
#define MG_SAB_KB_FIXED 4096    /* mg_sab_multi_cost: a unit's k-block costs W rows x NX + this (barrier, issue; the
                                 * NX + 32 of a 128-row unit) */
#define MG_SAB_MAX_SPLITS 16    /* = mg_options.splits' largest value (MG_SPLITS_MAX) */
#define MG_SAB_MIN_KB 4         /* k-blocks per split at least */
#define MG_SAB_SPLIT_FIXED_KB 2 /* the split handoff's fixed cost in k-blocks (mg_sab_split_cost) */
#define MG_SAB_SLAB 64          /* W rows per consumer warpgroup (one m64 wgmma) */
#define MG_SAB_FUSE_MAX_N 16384 /* max_dim 0: the widest N whose finish the last CTA does (THE FUSED FINISH) */
#define MG_SAB_FIN_HEAD 256     /* the finish area's done counter, padded: the words start this many bytes on */
#define MG_SAB_TICK_OFF 64      /* max_dim 1's start word (64 bits; THE START TICKET): bytes into the finish area */
#define MG_SAB_GBAR_OFF 128     /* the grid finish's barrier word: this many bytes into the finish area's head */
#define MG_SAB_ZGEN_OFF 192     /* max_dim 1's zgen word (the generation whose zeros are written): bytes into it */
#define MG_SAB_FUSE_LAST 1      /* mg_sab_plan::fused: the last CTA writes max_dim 0's output (THE FUSED FINISH) */
#define MG_SAB_FUSE_GRID 2      /* mg_sab_plan::fused: every CTA writes its share, max_dim 0 (THE GRID FINISH) */
#define MG_SAB_FUSE_TICKET 3    /* mg_sab_plan::fused: max_dim 1, zeros from the start ticket's first CTA, NaN from the
                                 * epilogues (THE FUSED FINISH: THE START TICKET) */

static inline long long mg_sab_cdiv(long long a, long long b) { return (a + b - 1) / b; }

/* One tile configuration: a tile_configs/wgmma_swapab.cfg row (MG_TILE_wgmma_swapab_nX_<prec> expands to these six,
 * in this order: bm = NX x rows, bn = W rows, bk, stages, consumers, cluster). */
typedef struct mg_sab_shape {
    int nx, wrows, bk, stages, consumers, cluster;
} mg_sab_shape;

/* Kernel 8 in one precision as the policy sees it: its configurations in ascending nx, and x's element size. */
typedef struct mg_sab_kernel {
    const char *name;
    mg_sab_shape cfg[MG_SAB_NCFG];
    int ncfg;
    int elem;               /* bytes per x / W element as TMA reads them (bf16 2, tf32 4) */
} mg_sab_kernel;

#define MG_SAB_SHAPE(row) {row##_BM, row##_BN, row##_BK, row##_STAGES, row##_CONSUMERS, row##_CLUSTER}
static inline mg_sab_kernel mg_sab_kernel8(mg_precision prec) {
    const mg_sab_kernel bf16 = {"wgmma_swapab",
                                {MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n8_bf16), MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n16_bf16),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n32_bf16), MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n64_bf16),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_w128_n64_bf16),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n96_bf16),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n128_bf16),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n152_bf16),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n192_bf16),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n256_bf16),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_w256_n152_bf16),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_w256_n192_bf16)},
                                MG_SAB_NCFG, 2};
    const mg_sab_kernel tf32 = {"wgmma_swapab",
                                {MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n8_tf32), MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n16_tf32),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n32_tf32), MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n64_tf32),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_w128_n64_tf32),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n96_tf32),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n128_tf32),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n152_tf32),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n192_tf32),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_n256_tf32),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_w256_n152_tf32),
                                 MG_SAB_SHAPE(MG_TILE_wgmma_swapab_w256_n192_tf32)},
                                MG_SAB_NCFG, 4};
    return prec == MG_PREC_BF16 ? bf16 : tf32;
}

/* The estimate the x-tile rule minimises for several x tiles (M > 256): waves of units x (W rows x NX +
 * MG_SAB_KB_FIXED), a unit's time per k-block (its wgmma work, and a fixed cost per k-block that a wider unit
 * amortises: notes/18_small_m.md "Session 11"). */
static inline long long mg_sab_multi_cost(const mg_sab_shape *c, long long m, long long n, long long G) {
    if (G <= 0) G = 1;
    const long long units = mg_sab_cdiv(n, c->wrows) * mg_sab_cdiv(m, c->nx);
    return mg_sab_cdiv(units, G) * ((long long)c->wrows * c->nx + MG_SAB_KB_FIXED);
}

/* The configuration a batch of m rows runs (THE X TILE above): m <= the widest nx: the first (smallest nx) with nx >= m
 * (the rows are in ascending nx, a wider sibling of the same nx (w128_n64 after n64, w256 after the 128-row rows)
 * after it, so a sibling is never one x tile's); m larger (up to MG_SAB_MAX_M): the two-consumer configuration of
 * least mg_sab_multi_cost, ties to the later row; x_tile > 0: the first configuration with that nx, except that
 * several x tiles (m > x_tile) take the first two-consumer, 128-W-row one of that nx if there is one (x_tile=64:
 * w128_n64, 128 units at M = 128 and N = 8192, where the one-consumer n64 would make 256). w_rows > 0: only the
 * configurations of that many W rows count, and with several x tiles any of them (one consumer too: w_rows = 64), and
 * x_tile picks that nx's one of that height. -1 if none (m out of range, x_tile not a configuration's nx, or no
 * configuration of that nx and height). */
static inline int mg_sab_pick_cfg(const mg_sab_kernel *kd, long long m, long long n, long long G, int x_tile,
                                  int w_rows) {
    if (m < 1 || m > MG_SAB_MAX_M) return -1;
    if (x_tile > 0) {
        int first = -1;
        for (int i = 0; i < kd->ncfg; i++) {
            const mg_sab_shape *c = &kd->cfg[i];
            if (c->nx != x_tile) continue;
            if (w_rows > 0) {
                if (c->wrows == w_rows) return i;
                continue;
            }
            if (first < 0) first = i;
            if (m > x_tile && c->consumers == 2 && c->wrows == 2 * MG_SAB_SLAB) return i;
        }
        return first;
    }
    for (int i = 0; i < kd->ncfg; i++)
        if (kd->cfg[i].nx >= m && (w_rows <= 0 || kd->cfg[i].wrows == w_rows)) return i;
    int best = -1;
    long long best_cost = 0;
    for (int i = 0; i < kd->ncfg; i++) {
        if (w_rows > 0 ? kd->cfg[i].wrows != w_rows : kd->cfg[i].consumers != 2) continue;
        const long long c = mg_sab_multi_cost(&kd->cfg[i], m, n, G);
        if (best < 0 || c <= best_cost) {
            best = i;
            best_cost = c;
        }
    }
    return best;
}

/* k-blocks [*kb0, *kb1) of split s of S over nk k-blocks: an even cut, every block in exactly one split. Host and
 * device (the kernel runs this arithmetic; the CPU tests pin it). S = 1 skips the two 64-bit divisions: the kernel's
 * producer runs this before its first load, where they cost ~0.3 us (run 93). */
static inline MG_SAB_HD void mg_sab_split_range(int nk, int S, int s, int *kb0, int *kb1) {
    if (S == 1) {
        *kb0 = 0;
        *kb1 = nk;
        return;
    }
    *kb0 = (int)((long long)nk * s / S);
    *kb1 = (int)((long long)nk * (s + 1) / S);
}

/* The largest split factor a plan may use for `tiles` tiles of nk k-blocks on G SMs: at most MG_SAB_MAX_SPLITS, at
 * least MG_SAB_MIN_KB k-blocks per split, and units = tiles x S at most 2 x G, except that S = 2 stays possible while
 * the tiles alone are fewer than 2 x G (tiles a little over one wave, e.g. 128 on 114 SMs, split better than they
 * run in two waves; and tuning may compare S = 1 and 2 anywhere). 1 when nothing can be split (K = 0 included). The
 * workspace bound is sized for this cap (mg_sab_bounds). */
static inline int mg_sab_split_cap(long long tiles, long long nk, long long G) {
    if (tiles <= 0 || nk <= 0 || G <= 0 || tiles >= 2 * G) return 1;
    long long cap = MG_SAB_MAX_SPLITS;
    const long long by_k = nk / MG_SAB_MIN_KB, by_units = (2 * G) / tiles < 2 ? 2 : (2 * G) / tiles;
    if (by_k < cap) cap = by_k;
    if (by_units < cap) cap = by_units;
    return cap < 1 ? 1 : (int)cap;
}

/* The estimate the split rule minimises, scaled by 96 to stay integer (units: one k-block of one consumer = 64 W rows
 * x bk of K from DRAM): waves of units x k-blocks per split; for S > 1 plus MG_SAB_SPLIT_FIXED_KB and the slots' bytes
 * (the writer's one slot, the last CTA's S: (S + 1) x 64 x nx x 4 bytes per consumer, read from L2 at ~3x the per-SM
 * DRAM rate: (S + 1) nx / (96 ksub) k-blocks, ksub = bk x elem / 128). */
static inline long long mg_sab_split_cost(long long tiles, long long nk, int S, long long G, int nx, int ksub) {
    if (G <= 0) G = 1;
    if (ksub <= 0) ksub = 1;
    long long c = mg_sab_cdiv(tiles * S, G) * mg_sab_cdiv(nk, S) * 96;
    if (S > 1) c += 96LL * MG_SAB_SPLIT_FIXED_KB + (long long)(S + 1) * nx / ksub;
    return c;
}

/* The W tiles a plan walks in clusters of `cluster` CTAs: with the x multicast (wcast = 0: a cluster's CTAs on
 * neighbouring W tiles) tiles rounded up to a whole number of clusters (a tile past N completes the last one); with
 * the W multicast (a cluster's CTAs on one W tile and two x tiles) the tiles as they are. */
static inline long long mg_sab_ctiles(long long tiles, int cluster, int wcast) {
    return cluster > 1 && !wcast ? mg_sab_cdiv(tiles, cluster) * cluster : tiles;
}
/* Whether clusters of 2 multicast W (1) or x (0). The W multicast needs several x tiles in an even number (then
 * S = 1): the two CTAs of a cluster share their W tile (the unit mapping of clusters of 1). mcast (mg_mcast): AUTO
 * takes W wherever it can, W the same (a request: x where it cannot), X always x (the CTAs share one x tile and two W
 * tiles, cuBLAS's 2x1 clusters at M = 256; run 105: +1 to +3% over W at M = 256-300 with x tiles of 128-152 rows,
 * -8% with 96). x also for one x tile (the CTAs then share the x tile and split) or an odd number. */
static inline int mg_sab_wcast(int cluster, long long xtiles, int mcast) {
    return cluster == 2 && mcast != MG_MCAST_X && xtiles >= 2 && xtiles % 2 == 0;
}

/* The split factor: the option's (clamped to [1, cap]) if it is > 0, else the cheapest by mg_sab_split_cost. */
static inline int mg_sab_choose_splits(long long tiles, long long nk, long long G, int nx, int ksub, int opt_splits) {
    const int cap = mg_sab_split_cap(tiles, nk, G);
    if (opt_splits > 0) return opt_splits < cap ? opt_splits : cap;
    int best = 1;
    long long best_cost = mg_sab_split_cost(tiles, nk, 1, G, nx, ksub);
    for (int S = 2; S <= cap; S++) {
        const long long c = mg_sab_split_cost(tiles, nk, S, G, nx, ksub);
        if (c < best_cost) {
            best = S;
            best_cost = c;
        }
    }
    return best;
}

/* ---- the launch plan ------------------------------------------------------------------------------------------ */

/* The kernel's own part of the launch plan (mg_launch_plan::priv). */
typedef struct mg_sab_plan {
    int cfg;                  /* index into mg_sab_kernel::cfg */
    int nx, wrows, consumers; /* the configuration's (copied for the launch's checks and the summary) */
    int nk;                   /* k-blocks of bk */
    int tiles, xtiles;        /* W-row tiles, x tiles (cdiv(M, nx)) */
    int cluster;              /* CTAs per cluster sharing boxes by TMA multicast: 1 or 2 */
    int wcast;                /* cluster 2: 1 = W multicast (one W tile, x tiles 2r, 2r + 1), 0 = x multicast (W tiles
                               * 2q, 2q + 1, one x tile): mg_sab_wcast */
    int splits, units;        /* split-K factor (1 when xtiles > 1), mg_sab_ctiles(tiles, cluster, wcast) x xtiles x
                               * splits (with the x multicast a W tile past N completes the last cluster) */
    int grid;                 /* CTAs of the persistent grid: min(units, SMs) */
    int slabs;                /* 64-row W slabs = cdiv(N, 64): counters, max_dim 1 partial rows */
    int pad_x;                /* 1: x is copied into the workspace (rows of x_ld elements) for TMA */
    int fused;                /* MG_SAB_FUSE_TICKET (max_dim 1): the kernel writes the output, no CTA waits at its
                               * end; MG_SAB_FUSE_LAST (max_dim 0): the last CTA writes it (THE FUSED FINISH);
                               * MG_SAB_FUSE_GRID (max_dim 0): every CTA its share, a cooperative launch (THE GRID
                               * FINISH); 0: the shared finalize */
    int gown;                 /* the grid finish: 1 = each CTA finishes its own unit's W rows (one unit per CTA, one
                               * x tile, S = 1, clusters of 1: unit b is W tile b), 0 = gchunk columns after a
                               * barrier */
    int gchunk;               /* the grid finish's columns per CTA (gown = 0): cdiv(N, grid) */
    int gslots;               /* the grid finish's tagged slots (max_dim 0): G, the SM count (>= grid) */
    long long x_ld;           /* row stride of the x TMA reads, in elements */
    size_t off_count, off_fin, off_x, off_slots, off_gsum; /* workspace offsets (off_count = 0); off_fin: the done
                                                  * counter, the grid barrier's word at MG_SAB_GBAR_OFF, then the
                                                  * finish words MG_SAB_FIN_HEAD bytes on; off_gsum: the grid
                                                  * finish's tagged slots (gslots of them) */
} mg_sab_plan;

static inline size_t mg_sab_align256(size_t v) { return (v + 255) & ~(size_t)255; }
static inline long long mg_sab_padded_ld(long long k, int elem) {
    const long long mult = 16 / elem;
    return (k + mult - 1) / mult * mult;
}
static inline int mg_sab_ksub(const mg_sab_shape *c, int elem) {
    const int r = c->bk * elem / 128;
    return r < 1 ? 1 : r;
}
/* The k-blocks of configuration c over K. */
static inline long long mg_sab_nk(const mg_sab_shape *c, long long k) { return k > 0 ? mg_sab_cdiv(k, c->bk) : 0; }

/* The split counters: one int per 64-row slab of N plus one (a tile of two consumers whose second slab lies past N
 * keeps its index below this), reserved when any configuration could split this problem (they stay zero between
 * launches, so their place may not depend on m). */
static inline size_t mg_sab_count_bytes(const mg_sab_kernel *kd, long long n, long long k, long long G) {
    int any = 0;
    for (int i = 0; i < kd->ncfg; i++) {
        const mg_sab_shape *c = &kd->cfg[i];
        if (mg_sab_split_cap(mg_sab_cdiv(n, c->wrows), mg_sab_nk(c, k), G) > 1) any = 1;
    }
    return any ? mg_sab_align256((size_t)(mg_sab_cdiv(n, MG_SAB_SLAB) + 1) * sizeof(int)) : 0;
}
/* 1 if the last CTA can finish a problem of this N and max_dim (THE FUSED FINISH; any M <= MG_SAB_MAX_M): whether
 * the policy does is mg_sab_make_plan's (fuse). */
static inline int mg_sab_fusable(long long n, int max_dim) { return max_dim == 1 || n <= MG_SAB_FUSE_MAX_N; }
/* The finish area: the head (MG_SAB_FIN_HEAD bytes: the done counter, the start word at MG_SAB_TICK_OFF, the grid
 * barrier's word at MG_SAB_GBAR_OFF, zgen at MG_SAB_ZGEN_OFF), then one word per output
 * (MG_SAB_MAX_M for max_dim 1, so that its size does not depend on m) where the last CTA can finish the problem;
 * max_dim 0 always has the head (the grid finish takes any N). */
static inline size_t mg_sab_fin_bytes(long long n, int max_dim) {
    if (!mg_sab_fusable(n, max_dim)) return max_dim == 0 ? MG_SAB_FIN_HEAD : 0;
    return MG_SAB_FIN_HEAD + mg_sab_align256((size_t)(max_dim == 1 ? MG_SAB_MAX_M : n) * sizeof(unsigned));
}
/* The grid finish's tagged slots: one 64-bit word per CTA of a grid of at most G (max_dim 0 only). */
static inline size_t mg_sab_gsum_bytes(long long G, int max_dim) {
    return max_dim == 0 ? mg_sab_align256((size_t)G * sizeof(double)) : 0;
}
/* The padded copy of x: m rows of ld elements. */
static inline size_t mg_sab_x_bytes(long long m, long long ld, int elem) {
    return mg_sab_align256((size_t)m * (size_t)ld * (size_t)elem);
}
/* The split slots of configuration c with S splits: per slab of every tile (tiles x consumers slabs), S slots of
 * 64 x nx floats. 0 for S = 1 (no slots). */
static inline size_t mg_sab_slot_bytes(const mg_sab_shape *c, long long tiles, int S) {
    if (S <= 1) return 0;
    return mg_sab_align256((size_t)tiles * (size_t)c->consumers * (size_t)S * MG_SAB_SLAB * (size_t)c->nx *
                           sizeof(float));
}

/* Partial rows: one per 64-row slab of N (max_dim 1), one per x tile (max_dim 0). */
static inline int mg_sab_partial_rows(long long n, long long xtiles, int max_dim) {
    return max_dim == 1 ? (int)mg_sab_cdiv(n, MG_SAB_SLAB) : (int)xtiles;
}

/* The most partial rows and workspace bytes of any plan for m <= M (<= MG_SAB_MAX_M), any options, any x alignment
 * (mg_kernel_ops::bounds). Several x tiles (an x_tile option, or m > 256) bring max_dim 0 rows, never split slots. The
 * heights a w_rows option can ask for one x tile: 64 and 128 (256 refuses one x tile). */
#define MG_SAB_ONE_TILE_WROWS {0, 64, 128}
static inline void mg_sab_bounds(const mg_sab_kernel *kd, long long M, long long n, long long k, int max_dim,
                                 long long G, int *rows, size_t *ws) {
    if (M < 1) M = 1;
    *rows = mg_sab_partial_rows(n, mg_sab_cdiv(M, kd->cfg[0].nx), max_dim);
    size_t w = mg_sab_fin_bytes(n, max_dim);
    if (k > 0) {
        w += mg_sab_count_bytes(kd, n, k, G);
        w += mg_sab_x_bytes(M, mg_sab_padded_ld(k, kd->elem), kd->elem);   /* x may be copied (misaligned base) */
        /* one x tile (the only plans that split) runs the rule's configuration for its m under its w_rows (an x_tile
         * option may only narrow it): the configurations up to the last one holding min(M, 256) under any w_rows
         * (the rows are in ascending nx, so a narrower or smaller m's pick comes earlier) */
        const int heights[] = MG_SAB_ONE_TILE_WROWS;
        int last = -1;
        for (int h = 0; h < (int)(sizeof heights / sizeof heights[0]); h++) {
            const int i = mg_sab_pick_cfg(kd, M < MG_SAB_ONE_TILE_M ? M : MG_SAB_ONE_TILE_M, n, G, 0, heights[h]);
            if (i > last) last = i;
        }
        size_t slots = 0;
        for (int i = 0; i <= (last < 0 ? kd->ncfg - 1 : last); i++) {
            const mg_sab_shape *c = &kd->cfg[i];
            const long long tiles = mg_sab_cdiv(n, c->wrows);
            const size_t s = mg_sab_slot_bytes(c, tiles, mg_sab_split_cap(tiles, mg_sab_nk(c, k), G));
            if (s > slots) slots = s;
        }
        w += slots;
    }
    *ws = w + mg_sab_gsum_bytes(G, max_dim);
}

/* The launch options the plan takes (mg_options' fields for kernel 8; 0 = the policy's; fuse is an mg_switch: AUTO
 * fuses max_dim 1, OFF nothing, FORCE both max_dims and refuses a problem that is not fusable; mcast an mg_mcast:
 * mg_sab_wcast). */
typedef struct mg_sab_opts {
    int splits, x_tile, cluster, fuse, mcast, w_rows;
} mg_sab_opts;

/* Every decision for one launch (see mg_sab_plan). Returns 0, or -1 with why[] saying what cannot run. o: the
 * options (NULL: all the policy's). rows, ws: the launch's partial rows and workspace bytes. */
static inline int mg_sab_make_plan(const mg_sab_kernel *kd, long long m, long long n, long long k, int max_dim,
                                   int x_aligned, long long G, const mg_sab_opts *o, mg_sab_plan *pl, int *rows,
                                   size_t *ws, char *why, size_t why_len) {
    const mg_sab_opts none = {0, 0, 0, 0, 0, 0};
    if (!o) o = &none;
    const int opt_splits = o->splits, opt_x_tile = o->x_tile, opt_w_rows = o->w_rows;
    mg_sab_plan z = {0};
    *pl = z;
    if (G <= 0) G = 1;
    if (m < 1 || n < 1 || k < 0) {
        snprintf(why, why_len, "%s: M = %lld, N = %lld, K = %lld: needs M, N >= 1 and K >= 0", kd->name, m, n, k);
        return -1;
    }
    if (m > MG_SAB_MAX_M) {
        snprintf(why, why_len, "%s is the small- and mid-M kernel: M = %lld > %d (kernel 4 takes larger M)", kd->name,
                 m, MG_SAB_MAX_M);
        return -1;
    }
    if (!MG_W_ROWS_VALID(opt_w_rows)) {
        snprintf(why, why_len, "%s: w_rows = %d (64, 128 or 256 W rows per tile)", kd->name, opt_w_rows);
        return -1;
    }
    pl->cfg = mg_sab_pick_cfg(kd, m, n, G, opt_x_tile, opt_w_rows);
    if (pl->cfg < 0 && opt_w_rows > 0) {
        if (opt_x_tile > 0)
            snprintf(why, why_len, "%s: no tile of x_tile = %d and w_rows = %d (tile_configs/wgmma_swapab.cfg)",
                     kd->name, opt_x_tile, opt_w_rows);
        else
            snprintf(why, why_len, "%s: no tile of w_rows = %d for M = %lld", kd->name, opt_w_rows, m);
        return -1;
    }
    if (pl->cfg < 0) {
        char list[96] = "";
        for (int i = 0, o = 0; i < kd->ncfg && o >= 0 && (size_t)o < sizeof list; i++) {
            int seen = 0;   /* each width once (a 256-row row repeats a 128-row row's nx) */
            for (int j = 0; j < i; j++) seen |= kd->cfg[j].nx == kd->cfg[i].nx;
            if (!seen) o += snprintf(list + o, sizeof list - (size_t)o, "%s%d", i ? ", " : "", kd->cfg[i].nx);
        }
        snprintf(why, why_len, "%s: x_tile = %d is not one of its x-tile widths (%s)", kd->name, opt_x_tile, list);
        return -1;
    }
    if (opt_x_tile > 0 && m <= MG_SAB_ONE_TILE_M) {   /* above, every x tile is narrower than M: S = 1 */
        const int rule = mg_sab_pick_cfg(kd, m, n, G, 0, opt_w_rows);
        if (rule >= 0 && kd->cfg[pl->cfg].nx > kd->cfg[rule].nx) {
            snprintf(why, why_len, "%s: x_tile = %d is wider than M = %lld needs (n%d): it may only narrow the x tile",
                     kd->name, opt_x_tile, m, kd->cfg[rule].nx);
            return -1;
        }
    }
    if (opt_w_rows > 2 * MG_SAB_SLAB && mg_sab_cdiv(m, kd->cfg[pl->cfg].nx) < 2) {
        snprintf(why, why_len, "%s: w_rows = %d needs several x tiles (M = %lld fits one of n%d): its two slabs per "
                 "consumer never split K, so one x tile would leave most SMs idle", kd->name, opt_w_rows, m,
                 kd->cfg[pl->cfg].nx);
        return -1;
    }
    const mg_sab_shape *c = &kd->cfg[pl->cfg];
    pl->nx = c->nx;
    pl->wrows = c->wrows;
    pl->consumers = c->consumers;
    const long long tiles = mg_sab_cdiv(n, c->wrows), nk = mg_sab_nk(c, k);
    if (tiles * MG_SAB_MAX_SPLITS > 0x7fffffffLL || nk > 0x7fffffffLL) {
        snprintf(why, why_len, "%s: too many tiles (%lld) or k-blocks (%lld)", kd->name, tiles, nk);
        return -1;
    }
    pl->tiles = (int)tiles;
    pl->xtiles = (int)mg_sab_cdiv(m, c->nx);
    pl->nk = (int)nk;
    pl->slabs = (int)mg_sab_cdiv(n, MG_SAB_SLAB);
    /* the cluster: the option's, else the configuration's, as a request (like splits): 2 needs two consumers, one
     * 128-byte box per stage and 2 SMs, and is 1 where the x tile cannot have it */
    pl->cluster = o->cluster > 0 ? o->cluster : c->cluster;
    if (pl->cluster == 2 &&
        !(c->consumers == 2 && c->wrows == 2 * MG_SAB_SLAB && mg_sab_ksub(c, kd->elem) == 1 && G >= 2))
        pl->cluster = 1;
    if (pl->cluster != 1 && pl->cluster != 2) {
        snprintf(why, why_len, "%s: cluster = %d (1 or 2)", kd->name, pl->cluster);
        return -1;
    }
    pl->wcast = mg_sab_wcast(pl->cluster, pl->xtiles, o->mcast);
    const long long ctiles = mg_sab_ctiles(tiles, pl->cluster, pl->wcast), gc = G / pl->cluster * pl->cluster;
    /* several x tiles, or two slabs per consumer (256 W rows), never split */
    pl->splits = pl->xtiles > 1 || c->wrows > MG_SAB_SLAB * c->consumers
                     ? 1 : mg_sab_choose_splits(ctiles, nk, G, c->nx, mg_sab_ksub(c, kd->elem), opt_splits);
    pl->units = (int)ctiles * pl->xtiles * pl->splits;
    pl->grid = (int)(pl->units < gc ? pl->units : gc);
    /* x: read in place by TMA (16-byte rows and base), else a padded copy in the workspace (it is small: M <= 1024) */
    pl->x_ld = k;
    if (k > 0 && ((k * kd->elem) % 16 != 0 || !x_aligned)) {
        pl->pad_x = 1;
        pl->x_ld = mg_sab_padded_ld(k, kd->elem);
    }
    *rows = mg_sab_partial_rows(n, pl->xtiles, max_dim);
    if (o->fuse == MG_SWITCH_FORCE && pl->cluster == 2 && !mg_sab_fusable(n, max_dim)) {
        snprintf(why, why_len, "%s: fuse=force in clusters of 2 (the last CTA finishes), but max_dim 0 at N = %lld > "
                 "%d is finished by the shared finalize", kd->name, n, MG_SAB_FUSE_MAX_N);
        return -1;
    }
    /* the finish: max_dim 1 by the start ticket; max_dim 0 by the whole grid wherever it can be one cooperative
     * launch (clusters of 1; the grid is at most one CTA per SM, kernel 8's occupancy): each CTA its own rows' final
     * maxima where it holds them, else chunks after a grid barrier (with the tagged slots 0-6% faster than the
     * finalize at M = 96-768, run 118; with a second barrier instead of the slots it had measured slower, run 96);
     * in clusters of 2 by the last CTA when forced */
    const int own = pl->units <= pl->grid && pl->xtiles == 1 && pl->splits == 1 && pl->cluster == 1;
    if (o->fuse == MG_SWITCH_OFF)
        pl->fused = 0;
    else if (max_dim == 1)
        pl->fused = MG_SAB_FUSE_TICKET;
    else if (pl->cluster == 1)
        pl->fused = MG_SAB_FUSE_GRID;
    else
        pl->fused = o->fuse == MG_SWITCH_FORCE ? MG_SAB_FUSE_LAST : 0;
    if (pl->fused == MG_SAB_FUSE_GRID) {
        pl->gown = own;
        pl->gchunk = (int)mg_sab_cdiv(n, pl->grid);
        pl->gslots = (int)G;
    }
    /* the workspace layout: what the launches keep between them (counters, finish words, tagged slots) at places
     * that depend on N, K, max_dim and G only */
    size_t off = k > 0 ? mg_sab_count_bytes(kd, n, k, G) : 0;
    pl->off_count = 0;
    pl->off_fin = off;
    off += mg_sab_fin_bytes(n, max_dim);   /* reserved whether or not this plan fuses: the place stays put */
    pl->off_gsum = off;
    off += mg_sab_gsum_bytes(G, max_dim);
    pl->off_x = off;
    if (pl->pad_x) off += mg_sab_x_bytes(m, pl->x_ld, kd->elem);
    pl->off_slots = off;
    off += mg_sab_slot_bytes(c, tiles, pl->splits);
    *ws = off;
    return 0;
}

/* The plan in one line (mg_launch_plan::summary: --verbose, the bench's notes). */
static inline void mg_sab_plan_summary(const mg_sab_kernel *kd, const mg_sab_plan *pl, char *buf, size_t len) {
    const mg_sab_shape *c = &kd->cfg[pl->cfg];
    snprintf(buf, len, "swap-AB n%d: %d W rows x bk %d (%d consumer%s, %d stages), %d tiles x %d x tile%s x %d split%s "
             "= %d units on %d CTAs%s%s%s", c->nx, c->wrows, c->bk, c->consumers, c->consumers == 1 ? "" : "s",
             c->stages, pl->tiles, pl->xtiles, pl->xtiles == 1 ? "" : "s", pl->splits, pl->splits == 1 ? "" : "s",
             pl->units, pl->grid,
             pl->cluster == 2 ? (pl->wcast ? " in clusters of 2 (W multicast)" : " in clusters of 2 (x multicast)") : "",
             pl->pad_x ? ", x padded" : "",
             pl->fused == MG_SAB_FUSE_GRID ? (pl->gown ? "; finish fused (grid, own rows)" : "; finish fused (grid)")
             : pl->fused == MG_SAB_FUSE_TICKET ? "; finish fused (start ticket)"
             : pl->fused ? "; finish fused (last CTA)" : "");
}

#endif /* MG_SWAPAB_POLICY_H */
