/* int8x3_policy.h: the host policy of kernel 10 (kernels/10_wgmma_int8x3.cu, the fused int8 split-precision kernel of
 * issue 19): every launch decision as a pure function of the shape, the tile configuration
 * (tile_configs/wgmma_int8x3.cfg) and the number of SMs, ending in mg_i8_make_plan, which fills the plan the launch
 * runs. CPU tests pin it (test/test_int8x3_policy.c). C11 and C++.
 *
 * THE STEPS are src/ozaki.h's (mg_oz_step): NONE (empty output), ZERO (K = 0: y = b), FALLBACK (K > MG_OZ_K_MAX =
 *   66052: every row flagged, the int8 kernel only writes -inf), INT8. Every step but NONE runs the x pre-pass, the
 *   fused kernel (with nk = 0 k-blocks for ZERO and FALLBACK: its epilogue alone) and the exact fallback.
 * THE TILES. bm x bn tiles of the output (bm = 64 x consumers rows of x, bn columns = W rows), tiles_m x tiles_n of
 *   them, walked by a persistent grid of min(tiles, SMs) CTAs in kernel 4's grouped order (kernels/ws_scheduler.cuh
 *   tile_coords, groups of 16 M-tiles). nk = cdiv(K, bk) k-blocks of bk int8 (= bytes) each; 0 when no product runs.
 * PARTIAL ROWS (mg_i8_partial_rows), then ONE more, the fallback's (src/ozaki.h):
 *   max_dim 1: one per column tile, partial[tn * M + i] = max over the tile's bn columns (tiles_n rows);
 *   max_dim 0: one per 64-row slab of x (a consumer's rows), partial[slab * N + j] (cdiv(M, 64) rows).
 *   Both are the layout of kernel 4 (ws_epilogue.cuh); kernel 9 cuts them otherwise (1024 columns, 32 rows), so the
 *   two kernels agree on the reduced maxima, not on the partial rows themselves.
 * THE WORKSPACE is the x pre-pass's only (src/ozaki.h mg_oz_xlayout: count, x slices [hi | lo] of 2 ldk bytes per
 *   row, u_x, flags, list), at offset 0 as in kernel 9, so the routing a test reads is at the same place. */
#ifndef MG_INT8X3_POLICY_H
#define MG_INT8X3_POLICY_H

#include <stddef.h>
#include <stdio.h>

#include "mg_tiles.h"
#include "ozaki.h"

#define MG_I8_SLAB 64   /* x rows per consumer warpgroup (one m64 wgmma) */

/* One tile configuration: a tile_configs/wgmma_int8x3.cfg row (bm, bn, bk, stages, consumers, cluster). */
typedef struct mg_i8_shape {
    int bm, bn, bk, stages, consumers, cluster;
} mg_i8_shape;

static inline mg_i8_shape mg_i8_kernel10(void) {
    const mg_i8_shape s = {MG_TILE_wgmma_int8x3_fp32_BM,     MG_TILE_wgmma_int8x3_fp32_BN,
                           MG_TILE_wgmma_int8x3_fp32_BK,     MG_TILE_wgmma_int8x3_fp32_STAGES,
                           MG_TILE_wgmma_int8x3_fp32_CONSUMERS, MG_TILE_wgmma_int8x3_fp32_CLUSTER};
    return s;
}

/* The kernel's own part of the launch plan (mg_launch_plan::priv). */
typedef struct mg_i8_plan {
    int step;                 /* MG_OZ_STEP_* */
    int vec;                  /* the pre-pass's 16-byte loads (x 16-byte aligned and K % 4 == 0) */
    int bm, bn;               /* the configuration's (the launch checks them against its instantiation) */
    int tiles_m, tiles_n, nk; /* output tiles, k-blocks (0: no product runs) */
    int grid;                 /* CTAs of the persistent grid */
    int main_rows;            /* partial rows of the fused kernel; the fallback's row is the next one */
    int fb_grid;              /* the exact fallback's grid (mg_oz_fallback_grid) */
    mg_oz_xlayout xl;         /* the workspace: the x pre-pass's */
} mg_i8_plan;

static inline long long mg_i8_cdiv(long long a, long long b) { return (a + b - 1) / b; }

/* Partial rows of the fused kernel (the fallback's row not counted). */
static inline int mg_i8_partial_rows(const mg_i8_shape *c, long long m, long long n, int max_dim) {
    return (int)(max_dim == 1 ? mg_i8_cdiv(n, c->bn) : mg_i8_cdiv(m, MG_I8_SLAB));
}

/* The most partial rows and workspace bytes of any plan for m <= M (mg_kernel_ops::bounds, own part only). */
static inline void mg_i8_bounds(const mg_i8_shape *c, long long M, long long n, long long k, int max_dim, int *rows,
                                size_t *ws) {
    mg_oz_xlayout xl;
    mg_oz_xlayout_make(M, k, mg_oz_int8_runs(k), &xl);
    *rows = mg_i8_partial_rows(c, M, n, max_dim) + 1;
    *ws = xl.bytes;
}

/* Every decision for one launch. Returns 0, or -1 with why[] saying what cannot run (a max over an empty dimension,
 * sizes the kernel cannot index). G: the SMs (<= 0: 132). rows, ws: the launch's partial rows and workspace bytes. */
static inline int mg_i8_make_plan(const mg_i8_shape *c, long long m, long long n, long long k, int max_dim,
                                  int x_aligned, long long G, mg_i8_plan *pl, int *rows, size_t *ws, char *why,
                                  size_t why_len) {
    const mg_i8_plan z = {0};
    *pl = z;
    *rows = 0;
    *ws = 0;
    if (G <= 0) G = 132;
    if (m < 0 || n < 0 || k < 0 || m > 0x7fffffffLL || n > 0x7fffffffLL - MG_OZ_NPAD || k > 0x3fffffffLL) {
        snprintf(why, why_len, "wgmma_int8x3: M = %lld, N = %lld, K = %lld out of range", m, n, k);
        return -1;
    }
    pl->step = mg_oz_step(m, n, k, max_dim);
    if (pl->step < 0) {
        snprintf(why, why_len, "wgmma_int8x3: max over an empty dimension (M=%lld, N=%lld, max_dim %d)", m, n,
                 max_dim);
        return -1;
    }
    pl->bm = c->bm;
    pl->bn = c->bn;
    if (pl->step == MG_OZ_STEP_NONE) return 0;   /* nothing to launch: no rows, no workspace */
    pl->vec = x_aligned && k % 4 == 0;
    pl->tiles_m = (int)mg_i8_cdiv(m, c->bm);
    pl->tiles_n = (int)mg_i8_cdiv(n, c->bn);
    pl->nk = pl->step == MG_OZ_STEP_INT8 ? (int)mg_i8_cdiv(k, c->bk) : 0;
    const long long tiles = (long long)pl->tiles_m * pl->tiles_n;
    if (tiles > 0x7fffffffLL) {
        snprintf(why, why_len, "wgmma_int8x3: %lld tiles, more than an int indexes", tiles);
        return -1;
    }
    pl->grid = (int)(tiles < G ? tiles : G);
    pl->main_rows = mg_i8_partial_rows(c, m, n, max_dim);
    pl->fb_grid = mg_oz_fallback_grid((int)m, (int)n, (int)G);
    mg_oz_xlayout_make(m, k, mg_oz_int8_runs(k), &pl->xl);
    *rows = pl->main_rows + 1;
    *ws = pl->xl.bytes;
    return 0;
}

/* The plan in one line (mg_launch_plan::summary: --verbose, the bench's notes). */
static inline void mg_i8_plan_summary(const mg_i8_shape *c, const mg_i8_plan *pl, char *buf, size_t len) {
    if (pl->step == MG_OZ_STEP_NONE) {
        snprintf(buf, len, "wgmma_int8x3: empty output, nothing to launch");
        return;
    }
    snprintf(buf, len, "wgmma_int8x3: %s; %dx%d tiles (bk %d, %d stages) %d x %d on %d CTAs, %d k-blocks; %d partial "
             "rows + 1 exact-fallback row (grid %d)",
             pl->step == MG_OZ_STEP_ZERO ? "K = 0, y = b" : pl->step == MG_OZ_STEP_FALLBACK ? "K > 66052, all rows exact"
             : pl->vec ? "x sliced (16-byte loads)" : "x sliced (scalar loads)",
             c->bm, c->bn, c->bk, c->stages, pl->tiles_m, pl->tiles_n, pl->grid, pl->nk, pl->main_rows, pl->fb_grid);
}

#endif /* MG_INT8X3_POLICY_H */
