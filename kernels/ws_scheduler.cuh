/* ws_scheduler.cuh: the tile scheduler of the persistent warp-specialized kernel, ONE object that the producer and
 * the consumers both walk (`for (int w = 0; sched.get(w, work); w++) { ... }`), so the k-iteration counter of the stage
 * ring stays identical in every role. Everything it follows was decided on the host (src/ws_policy.h mg_ws_plan).
 *
 * PERSISTENT GRID: min(num_sms, tiles) CTAs; CTA b takes tiles b, b + grid, ... in a grouped order: tiles come in
 *   groups of kGroupM M-tiles; inside a group the M index runs fastest, then N. At the headline (8 M-tiles, 32-33
 *   N-tiles) that is all 8 M-tiles of one W panel next to each other, so a W panel (the big operand: 128 MiB bf16,
 *   larger than the 50 MB L2) is fetched from DRAM about once and reused by 8 CTAs that stream it at the same time,
 *   while all of x stays hot in L2. Large M: groups of 16 M-tiles bound the x working set.
 * STREAM-K (the plan's sk_tiles > 0, small M; notes/04_wgmma_ws.md "Stream-K"): the first dp_tiles tiles run whole
 *   and the sk_tiles after them are split into G = gridDim.x equal contiguous ranges of k-iterations, one per CTA,
 *   in tile order. A range covers at most two tiles: the end of one (a non-head piece, starting at kb > 0: role 1)
 *   and the start of the next (a head piece, from kb = 0: role 2). Each CTA does its non-head piece first and hands
 *   its accumulators over (ws_streamk.cuh); the head's CTA owns the tile and adds them in CTA order.
 * PANELS (the plan's tiles_n, nw; Cfg::MIXED): column panel tn is BN wide for tn < nw and BN - 8 (248) wide after,
 *   so that at the headline 264 tiles of 248 (one of 256) make exactly 2 per SM instead of 256 tiles on 132 SMs.
 *   With the remainder split (rem_chunks > 0: all panels narrow), the tiles of panel j < rem_chunks also compute
 *   k-chunk j of the r <= 8 columns left over (rem_chunk below; ws_epilogue.cuh stores them, the finalize adds them).
 * ODD SHAPES: a last row of tiles sticking out past M (M >= BM) is moved up inside M (row0): a mostly out-of-bounds
 *   TMA box is slow enough to starve the short stages of the 64- and 128-row configurations (run 37: mid tiles at
 *   M = 129 bf16 0.0918 -> 0.0537 ms); its rows that belong to the tile above are masked in the epilogue, so every
 *   row still enters exactly one tile's maxima. */
#ifndef MG_WS_SCHEDULER_CUH
#define MG_WS_SCHEDULER_CUH

#include "ws_config.cuh"

namespace mgws {

/* One piece of a CTA's work: tile (tm, tn), k-blocks [kb0, kb1), the panel's first column n0 and width.
 * role 0: a whole tile; 1: a stream-K non-head piece (accumulators go to this CTA's slot); 2: a stream-K head piece,
 * whose CTA owns the tile and adds the slots of CTAs blockIdx.x + 1 .. last before the epilogue. */
struct Work {
    int tm, tn, kb0, kb1, role, last, n0, width;
};

/* The first row of tile row tm's accumulators: tm * BM, or M - BM for a last row of tiles sticking out past M. */
template <class C> __device__ __forceinline__ int tile_row0(const Params &p, int tm, int tiles_m) {
    const int r = tm * C::BM;
    return (tm < tiles_m && p.m >= C::BM && r + C::BM > p.m) ? p.m - C::BM : r;
}

/* Remainder split: whether the tiles of panel tn compute a k-chunk of the remainder columns (chunk tn: the panels
 * 0 .. rem_chunks - 1), and if so its k-blocks [*ck0, *ck1) (src/ws_policy.h mg_ws_rem_range). */
template <class C>
__device__ __forceinline__ bool rem_chunk(const Params &p, int tn, int num_k, int *ck0, int *ck1) {
    if constexpr (!C::MIXED) return false;
    if (!(p.rem_chunks > 0 && tn < p.rem_chunks)) return false;
    mg_ws_rem_range(num_k, p.rem_chunks, tn, ck0, ck1);
    return true;
}

/* The stream-K CTA whose range [b S / G, (b + 1) S / G) holds k-iteration q. */
__device__ __forceinline__ int sk_cta_of(long long q, long long S, int G) {
    int b = (int)((q * G) / S);
    while (b + 1 < G && ((long long)(b + 1) * S) / G <= q) b++;
    while (b > 0 && ((long long)b * S) / G > q) b--;
    return b;
}

/* Grouped order of tiles: groups of group_m tile rows; M fastest inside a group, then N. */
__device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int group_m, int &tm, int &tn) {
    const int per_group = group_m * tiles_n;
    const int group = tile / per_group;
    const int first_m = group * group_m;
    const int gsize = min(group_m, tiles_m - first_m);
    const int local = tile - group * per_group;
    tm = first_m + local % gsize;
    tn = local / gsize;
}

template <class C> struct Scheduler {
    const Params &p;
    const int tiles_m, num_k;

    __device__ __forceinline__ explicit Scheduler(const Params &p_)
        : p(p_), tiles_m((p_.m + C::BM - 1) / C::BM), num_k((p_.k + C::BK - 1) / C::BK) {}

    /* Piece w of this CTA's work (false: none left). Every role walks w = 0, 1, 2, ... in a plain counted loop,
     * `for (int w = 0; sched.get(w, wk); w++)`: with the counter in the loop header ptxas keeps the loop warp-uniform
     * (a `while (sched.next(wk))` over a counter kept inside the object cost a WARPSYNC before every wgmma and 10% at
     * M = 256, measured in session 8). */
    __device__ __forceinline__ bool get(int w, Work &wk) const {
        int unit;
        if (!piece(w, unit, wk)) return false;
        tile_coords(unit, tiles_m, p.tiles_n, kGroupM, wk.tm, wk.tn);
        if (!C::MIXED || wk.tn < p.nw) {
            wk.n0 = wk.tn * C::BN;
            wk.width = C::BN;
        } else {
            wk.n0 = p.nw * C::BN + (wk.tn - p.nw) * C::BN_NARROW;
            wk.width = C::BN_NARROW;
        }
        return true;
    }

  private:
    /* The i-th piece: whole tiles first (b, b + G, ...), then at most two stream-K pieces. */
    __device__ __forceinline__ bool piece(int i, int &unit, Work &wk) const {
        const int num_units = tiles_m * p.tiles_n;
        const bool sk = p.sk_tiles > 0;
        const int first = (int)blockIdx.x, step = (int)gridDim.x;
        const int dp_units = sk ? p.dp_tiles : num_units;
        const int ndp = first < dp_units ? (dp_units - 1 - first) / step + 1 : 0;
        if (i < ndp) {
            unit = first + i * step;
            wk.kb0 = 0;
            wk.kb1 = num_k;
            wk.role = 0;
            wk.last = 0;
            return true;
        }
        if (!sk || i - ndp > 1) return false;
        const int G = (int)gridDim.x, b = (int)blockIdx.x;
        const long long S = (long long)p.sk_tiles * num_k;
        const long long q0 = (long long)b * S / G, q1 = (long long)(b + 1) * S / G;
        if (q0 >= q1) return false;
        int t = (int)(q0 / num_k);
        long long beg = q0, end;
        if (i - ndp == 0) {
            end = (long long)(t + 1) * num_k < q1 ? (long long)(t + 1) * num_k : q1;
        } else {
            t++;
            beg = (long long)t * num_k;
            if (beg >= q1) return false;
            end = q1;
        }
        unit = p.dp_tiles + t;
        wk.kb0 = (int)(beg - (long long)t * num_k);
        wk.kb1 = (int)(end - (long long)t * num_k);
        wk.role = wk.kb0 > 0 ? 1 : 2;
        wk.last = wk.role == 2 ? sk_cta_of((long long)(t + 1) * num_k - 1, S, G) : 0;
        return true;
    }
};

}  // namespace mgws

#endif /* MG_WS_SCHEDULER_CUH */
