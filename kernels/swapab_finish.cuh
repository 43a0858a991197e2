/* swapab_finish.cuh: kernel 8's fused finish (kernels/08_wgmma_swapab.cu; the kernel is kernels/swapab_kernel.cuh):
 * max_dim 1's start ticket, max_dim 0's last CTA and its grid finish.
 *
 * THE FUSED FINISH (the plan's fused = 3 for max_dim 1, 1 for max_dim 0's last CTA: mg_launch_plan::fused_finalize;
 * no finalize kernel after kernel 8).
 *   max_dim 1 (THE START TICKET: no CTA waits at its end, none counts itself done): row i's output is gelu(m - m) =
 *              +0 for a finite row max m, NaN for NaN or +-inf (SEMANTICS.md), so a launch writes M zeros and then NaN
 *              over the rows that are not finite, ordered after the zeros. At its start every CTA's idle producer
 *              warp 1 takes a ticket from the workspace's start word (generation << 32 | CTAs started; the CTA that
 *              starts last adds 2^32 - grid: the next generation, count 0, so any grid of any plan can follow). The
 *              CTA with ticket 0 writes the M zeros and zeroes fin[0, M), then stores generation + 1 to zgen
 *              (st.release.gpu); every other CTA's warp 1 waits for that value (ld.acquire.gpu). Each warp 1 then
 *              arrives on its CTA's zbar. An epilogue whose row max m is not finite (the rare case, row_finish) waits
 *              on zbar, then writes NaN for NaN or +inf, and for -inf adds 1 to fin[i] (atomicAdd): the slab that
 *              makes it cdiv(N, 64) writes NaN (every slab's max was -inf). A finite m, the common case, does
 *              nothing: the forward ends with the last epilogue, with no arrival and no last CTA (session 19: the
 *              done counter's round trip and the last CTA's finish were ~1 us of every launch's tail). The output
 *              equals the shared finalize's bit for bit; fin and zgen need not be zero between launches.
 *   max_dim 0  (the last CTA) each epilogue folds its column maxima into fin[j] = max(fin[j], key(c)) (atomicMax on an
 *              order-preserving key of the float, NaN above +inf, 0 below -inf: "none yet"), so fin[j] ends as the
 *              key of c[j] = the max over the x tiles whoever came first. Every CTA then counts itself done
 *              (atom.acq_rel.gpu on the done counter); the last one zeroes the counter and writes the output from fin
 *              (zeroing it for the next launch): the column maxima staged in its idle ring, mu = their fp64 sum in a
 *              fixed order (thread t sums j = t, t + T, ... ; then a fixed tree over the T consumer threads) / N,
 *              out[j] = gelu(c[j] - mu), with c - mu in fp64 and the GELU in fp32 (erff; fp64 where c - mu is beyond
 *              fp32's range): one SM's fp64 units would take microseconds for N = 8192 erf. It differs from the
 *              shared finalize's output by the order of the fp64 sum and the fp32 GELU (a few fp32 ulp).
 *   No CTA waits for another that may not be running: only the CTA with ticket 0, which has started. The policy fuses
 *   max_dim 1 this way; max_dim 0 only where the grid finish cannot run (clusters of 2) and when asked (fuse=force):
 *   one SM's N GELUs cost more than the finalize kernels they replace (run 72: +5 to +14 us at N = 8192;
 *   notes/18_small_m.md "Session 12").
 * THE GRID FINISH (the plan's fused = 2: max_dim 0, clusters of 1, the policy's default there since run 118; launched
 *   cooperatively so that every CTA is resident and may wait for the others). The epilogues store the partial rows as
 *   without a finish; then every CTA takes a share of the N columns: its own unit's W rows when each CTA has one unit
 *   and it holds the final column maxima (one x tile, S = 1: the plan's gown), else, after a grid barrier, gchunk =
 *   cdiv(N, grid) columns from b gchunk. It reduces them over the x tiles (c[j], x-tile order), sums them in fp64 in a
 *   fixed order (own rows: the consumers' first warp alone, a lane's columns ascending, then a xor tree; else
 *   ascending j per thread, then consumers_sum's tree) into its tagged slot, waits until every CTA's slot carries this
 *   launch's tag, and sums the grid's slots in one fixed order: mu, the same bits in every CTA. out[j] =
 *   gelu(c[j] - mu), c - mu in fp64 and the GELU in fp32 (erff) where c - mu fits fp32, the shared finalize's fp64
 *   GELU where it does not, so the output differs from the finalize's by the order of the mean's fp64 sum, the 16
 *   mantissa bits each CTA's sum gives up to the tag (relative 2^-36) and the fp32 GELU (a few fp32 ulp). One grid
 *   barrier (grid_barrier; none with own rows) and the slots replace the finalize's two kernels.
 * THE TAGGED SLOTS. A CTA's sum and the launch it belongs to travel in one 64-bit word (slot_pack: the fp64 sum with
 *   its low 16 bits replaced by the launch's tag), written with one relaxed store and polled with relaxed loads, so
 *   that the last CTA's sum reaches the others in one store and one load: no fence, no atomic, no second read (the
 *   barrier they replace, session 19's max_dim 0, ended with a fence, an atomic, a poll and a read of the sums:
 *   ~3.5 us after the slowest CTA; with the slots every CTA knows mu ~1.8-2 us after it, runs 117-118's timeline). The tag needs no counter: every grid-finish launch writes all gslots (>= grid)
 *   slots of the workspace with its tag (CTA b its own, b + grid, b + 2 grid, ...), which sit at a place that depends
 *   on N, K and the SM count only (swapab_policy.h, THE WORKSPACE), so at a launch's start every slot holds the
 *   previous launch's tag (0 in the zeroed workspace), and warp 1 of CTA b reads its own slot's and adds 1
 *   (grid_start). A slot of this launch can carry that tag only once its CTA wrote it; each CTA takes its own sum
 *   from its register.
 * THE POLLER (session 32, runs 145-147). The consumers no longer poll after their own sum: the producer warpgroup's
 *   idle warp 2 reads the other CTAs' slots from the CTA's start (grid_poll), so the last slots are found one round
 *   trip after they land and the last CTA finds the others' already read (run 144h's timeline on main: the last CTA
 *   knew mu 1.3-1.5 us after its epilogue, 80-90% of the CTAs only 1.9-2.3 us after it, a poll over all 128 slots
 *   that had just missed the last one; with the poller every CTA knows mu within ~0.2 us of the others, and the
 *   launch's end moved from 2.5-2.85 to 1.8-2.4 us after the last epilogue on an H100, runs 145-147). */
#ifndef MG_SWAPAB_FINISH_CUH
#define MG_SWAPAB_FINISH_CUH

#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include "hopper.cuh"
#include "mg_kernel.h"
#include "swapab_params.cuh"
#include "swapab_policy.h"

namespace mgsab {

/* ---- the fused finish (THE FUSED FINISH in the file header) --------------------------------------------------- */

/* max_dim 1, THE START TICKET: one thread of the producer warpgroup's warp 1, once per CTA at its start (where the
 * kernel branches to it decides the producer's TMA loop form: PRODUCER R FORM in swapab_kernel.cuh). */
template <class C> __device__ __noinline__ void md1_start(const Params &p, uint64_t *zbar) {
    const unsigned long long old = atomicAdd(p.tick, 1ull);
    if ((unsigned)old == gridDim.x - 1u)   /* every CTA of this launch has its ticket: the next generation, count 0 */
        atomicAdd(p.tick, (1ull << 32) - (unsigned long long)gridDim.x);
    const unsigned gen = (unsigned)(old >> 32) + 1u;   /* what zgen holds once this launch's zeros are written */
    if ((unsigned)old == 0u) {
        typename C::T *out = static_cast<typename C::T *>(p.out);
        for (int i = 0; i < p.m; i++) {
            mg_store_out(out, i, mg_gelu_f32(0.f));   /* gelu(+0) = +0: every row whose max is finite */
            p.fin[i] = 0u;                            /* the -inf counts of this launch start at 0 */
        }
        mg_st_release_gpu(reinterpret_cast<int *>(p.zgen), (int)gen);
    } else {
        while ((unsigned)mg_ld_acquire_gpu(reinterpret_cast<const int *>(p.zgen)) != gen) __nanosleep(64);
    }
    mg_mbar_arrive(zbar);   /* release.cta: the epilogues that wait on zbar see the zeros as written */
}

/* This launch's tag (THE TAGGED SLOTS) in shared memory: flags[3], the fourth of the kernel's flag words after zbar
 * (swapab_kernel.cuh); grid_start writes it, grid_finish reads it after zbar. */
__device__ __forceinline__ volatile int *launch_tag(uint64_t *zbar) {
    return reinterpret_cast<volatile int *>(zbar + 1) + 3;
}

/* max_dim 0's grid finish, THE TAGGED SLOTS: one thread of the producer warpgroup's warp 1, once per CTA at its
 * start: this launch's tag (the previous launch's in the CTA's own slot, + 1) into launch_tag, then zbar. */
__device__ __noinline__ void grid_start(const unsigned long long *gslot, uint64_t *zbar) {
    const unsigned long long old = mg_ld_relaxed_gpu_u64(gslot + blockIdx.x);
    *launch_tag(zbar) = (int)(((unsigned)old + 1u) & 0xffffu);
    mg_mbar_arrive(zbar);   /* release.cta: the finish that waits on zbar reads the tag */
}
/* The fused finishes that start with warp 1 (the kernel's producer branch): max_dim 1's ticket, max_dim 0's tag. */
__device__ __forceinline__ bool has_start(const Params &p) {
    return p.fused == MG_SAB_FUSE_TICKET || p.fused == MG_SAB_FUSE_GRID;
}
template <class C> __device__ __forceinline__ void fused_start(const Params &p, uint64_t *zbar) {
    if (p.fused == MG_SAB_FUSE_TICKET)
        md1_start<C>(p, zbar);
    else
        grid_start(p.gslot, zbar);
}

/* max_dim 1: an epilogue's row max m of x row i is not finite (the caller tests): NaN or +inf make row i NaN; -inf
 * counts, and the slab that completes cdiv(N, 64) -inf maxima makes it NaN. After the zeros (zbar: THE START
 * TICKET). */
template <class C> __device__ __noinline__ void row_finish(const Params &p, int i, float m, uint64_t *zbar) {
    mg_mbar_wait(zbar, 0);
    if (m == -INFINITY && atomicAdd(p.fin + i, 1u) + 1u != (unsigned)p.slabs) return;
    /* gelu(m - m) with m - m NaN: the shared finalize's value bit for bit */
    mg_store_out(static_cast<typename C::T *>(p.out), i, mg_gelu_f32(__uint_as_float(0x7fffffffu)));
}
/* max_dim 0: an order-preserving key of a float for atomicMax (NaN above +inf; -inf's key 0x007fffff > 0 = none). */
__device__ __forceinline__ unsigned col_key(float v) {
    if (v != v) return 0xffffffffu;
    const unsigned u = __float_as_uint(v);
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float col_unkey(unsigned k) {
    if (k == 0xffffffffu) return __uint_as_float(0x7fffffffu);
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}

/* Sum of v over the T consumer threads (t = 0 .. T - 1, named barrier 3) in a fixed order: a xor-shuffle tree per
 * warp, then the warp sums in ascending order. The result is valid in every consumer thread. */
template <int T> __device__ __forceinline__ double consumers_sum(double v, int t, double *sh) {
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    if (t % 32 == 0) sh[t / 32] = v;
    mg_named_bar_sync(3, T);
    double s = 0.0;
#pragma unroll
    for (int w = 0; w < T / 32; w++) s += sh[w];
    return s;
}

/* The finishes' GELU range rule (finish, grid_finish): v = c - mu, formed in fp64 and rounded to fp32, takes the fp32
 * GELU where |v| < 1e30 (far inside fp32's range: the rounding cannot have overflowed), the shared finalize's fp64
 * GELU of c - mu where it is not (an infinity, NaN, or a value near fp32's limit). */
__device__ __forceinline__ bool gelu_f32_fits(float v) { return fabsf(v) < 1e30f; }

/* The last CTA's finish of max_dim 0: the output from fin, fin zeroed for the next launch. T consumer threads,
 * t = 0 .. T - 1; stage: the idle ring (N floats, the plan's bound); sh: T / 32 doubles. */
template <class C> __device__ __noinline__ void finish(const Params &p, int t, float *stage, double *sh) {
    constexpr int T = 128 * C::CONSUMERS, B = 8;   /* B loads in flight per thread */
    using E = typename C::T;
    E *out = static_cast<E *>(p.out);
    mg_fence_proxy_async();   /* the ring was last written by TMA (async proxy); now plain stores */
    double s = 0.0;
    for (int j0 = t; j0 < p.n; j0 += B * T) {
        unsigned key[B];
#pragma unroll
        for (int q = 0; q < B; q++) key[q] = j0 + q * T < p.n ? __ldcg(p.fin + j0 + q * T) : 0u;
#pragma unroll
        for (int q = 0; q < B; q++) {
            const int j = j0 + q * T;
            if (j < p.n) {
                const float c = col_unkey(key[q]);
                stage[j] = c;
                p.fin[j] = 0u;
                s += (double)c;   /* ascending j per thread: a fixed order; NaN and +-inf propagate as in fp64 */
            }
        }
    }
    const double mu = consumers_sum<T>(s, t, sh) / (double)p.n;
    /* the thread's own staged columns (no barrier needed), B at a time: independent GELUs the scheduler overlaps */
    for (int j0 = t; j0 < p.n; j0 += B * T) {
        float v[B];
        bool wide = false;
#pragma unroll
        for (int q = 0; q < B; q++) {
            const int j = j0 + q * T;
            v[q] = j < p.n ? (float)((double)stage[j] - mu) : 0.f;
            wide |= !gelu_f32_fits(v[q]);
        }
        if (!wide) {
#pragma unroll
            for (int q = 0; q < B; q++)
                if (j0 + q * T < p.n) mg_store_out(out, j0 + q * T, mg_gelu_f32(v[q]));
        } else {   /* c - mu beyond fp32 (or NaN) somewhere: the fp64 form, as the finalize */
            for (int q = 0; q < B; q++)
                if (j0 + q * T < p.n) mg_store_out(out, j0 + q * T, mg_gelu_f64((double)stage[j0 + q * T] - mu));
        }
    }
}

/* ---- the grid finish (THE GRID FINISH in the file header) ----------------------------------------------------- */

/* The grid barrier, by one thread per CTA after a barrier of its CTA (cooperative groups' pattern): CTA 0 adds
 * 2^31 - (grid - 1) and every other CTA 1, so the word's top bit flips once when the last one arrives and its low 31
 * bits come back to 0 (the workspace's zero): it needs no reset. The arrival's release publishes what the CTA's
 * barrier ordered before it (cumulativity); the acquire load that sees the flip makes every CTA's visible. */
__device__ __forceinline__ void grid_barrier(unsigned *bar) {
    const unsigned inc = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1u) : 1u;
    const unsigned old = (unsigned)atom_add_acq_rel_gpu(reinterpret_cast<int *>(bar), (int)inc);
    while (((old ^ (unsigned)mg_ld_acquire_gpu(reinterpret_cast<const int *>(bar))) & 0x80000000u) == 0u) {
    }
}

/* A slot (THE TAGGED SLOTS): the sum with its low 16 bits the tag (NaN made the quiet NaN first, so that no payload
 * cleared by the tag turns it into an infinity; +-inf and finite values keep their class) and back. */
__device__ __forceinline__ unsigned long long slot_pack(double s, unsigned tag) {
    const unsigned long long u = s == s ? (unsigned long long)__double_as_longlong(s) : 0x7ff8000000000000ull;
    return (u & ~0xffffull) | tag;
}
__device__ __forceinline__ double slot_sum(unsigned long long v) {
    return __longlong_as_double((long long)(v & ~0xffffull));
}

/* What the grid finish reads of the kernel's parameters, passed by value: read in the kernel, these come from the
 * parameter constant bank; a __noinline__ function given `const Params &` reads them through a generic pointer
 * into the parameter buffer instead (LD.E), whose lines the 134 MB W stream has evicted from L2, so that its first
 * read after the stream went to DRAM on the finish's critical path (run 127's stamps: 0.45-0.67 us between
 * grid_finish's first barrier and its column sum in the last CTA). */
struct GridArgs {
    void *out;
    const float *partial;
    unsigned *gbar;
    unsigned long long *gslot;
    int n, xtiles, gown, gchunk, gslots;
};
__device__ __forceinline__ GridArgs grid_args(const Params &p) {
    return GridArgs{p.out, p.partial, p.gbar, p.gslot, p.n, p.xtiles, p.gown, p.gchunk, p.gslots};
}

/* c[j]: the max over the x tiles' partial rows (max_dim 0), in x-tile order. */
__device__ __forceinline__ float grid_col(const GridArgs &p, int j) {
    float c = __ldcg(p.partial + j);
    for (int xt = 1; xt < p.xtiles; xt++) c = mg_max_nan(c, __ldcg(p.partial + (size_t)xt * p.n + j));
    return c;
}

/* The finish's shared doubles (sh, the kernel's red words): consumers_sum's T / 32 warp sums, then mu (the poller
 * writes it, the consumers read it after kPollMuBar), then this CTA's own packed slot (the consumers write it, the
 * poller reads it after own_bar: THE POLLER). */
template <int T> __device__ __forceinline__ double &sh_mu(double *sh) { return sh[T / 32]; }
template <int T> __device__ __forceinline__ unsigned long long &sh_own(double *sh) {
    return reinterpret_cast<unsigned long long *>(sh)[T / 32 + 1];
}

/* THE POLLER: the named barrier by which the poller hands mu to the consumers (kernel barriers 1-3: the consumers'),
 * and the mbarrier by which the consumers hand it their own sum: the kernel's fifth barrier word after zbar's flags
 * (swapab_kernel.cuh), arrival count 1, one phase per launch. */
constexpr int kPollMuBar = 4;
__device__ __forceinline__ uint64_t *own_bar(uint64_t *zbar) { return zbar + 3; }
constexpr int kPollQ = 8;   /* slots per lane: a grid of at most 32 kPollQ CTAs (the launch checks it) */

/* The grid finish's poller (THE POLLER): the producer warpgroup's warp 2, idle otherwise, from the CTA's start. It
 * reads the other CTAs' slots (lane-strided, up to kPollQ per lane), again only where a slot does not yet carry this
 * launch's tag, until every one does; it sleeps ~1 us between reads while more than half the grid's slots are missing
 * (the W stream's start and middle: little L2 traffic), then spins (at M <= 64 the last half of the CTAs end within
 * ~0.6 us, run 145's timelines: a sleep there would find the last slots up to a sleep late). So a CTA that finishes
 * last finds the others' sums already in registers, and the others see its slot one L2 round trip after it lands,
 * with no read of the other slots again. Then it waits for this CTA's own sum (own_bar: an mbarrier, which
 * compute-sanitizer's racecheck orders as it does zbar; a named barrier that the consumers only arrive at, it
 * reported as a race, run 145, and one that both sides wait at, synccheck as divergent, run 146), sums the grid's
 * slots in the fixed order (ascending b per lane, then a xor tree: the same bits in every CTA) and hands mu to the
 * consumers (kPollMuBar: it arrives, they wait). */
template <class C>
__device__ __noinline__ void grid_poll(unsigned long long *gslot, int n, double *sh, uint64_t *zbar) {
    constexpr int T = 128 * C::CONSUMERS;
    const int lane = (int)threadIdx.x % 32, B = (int)gridDim.x, me = (int)blockIdx.x;
    mg_mbar_wait(zbar, 0);   /* grid_start's tag */
    const unsigned tag = (unsigned)*launch_tag(zbar);
    unsigned long long v[kPollQ];
    unsigned pending = 0u;   /* bit q: slot lane + 32 q is another CTA's, not yet at this launch's tag */
#pragma unroll
    for (int q = 0; q < kPollQ; q++) {
        v[q] = 0ull;
        const int b = lane + 32 * q;
        if (b < B && b != me) pending |= 1u << q;
    }
    for (;;) {
#pragma unroll
        for (int q = 0; q < kPollQ; q++)
            if (pending >> q & 1u) v[q] = mg_ld_relaxed_gpu_u64(gslot + lane + 32 * q);
#pragma unroll
        for (int q = 0; q < kPollQ; q++)
            if ((pending >> q & 1u) && ((unsigned)v[q] & 0xffffu) == tag) pending &= ~(1u << q);
        const int missing = __reduce_add_sync(0xffffffffu, __popc(pending));
        if (missing == 0) break;
        if (2 * missing > B) __nanosleep(1000);
    }
    mg_mbar_wait(own_bar(zbar), 0);   /* the consumers' own sum (grid_finish) */
    const unsigned long long mine = sh_own<T>(sh);
    double g = 0.0;
#pragma unroll
    for (int q = 0; q < kPollQ; q++) {
        const int b = lane + 32 * q;
        if (b < B) g += slot_sum(b == me ? mine : v[q]);
    }
    for (int off = 16; off > 0; off >>= 1) g += __shfl_xor_sync(0xffffffffu, g, off);
    if (lane == 0) sh_mu<T>(sh) = g / (double)n;
    mg_named_bar_arrive(kPollMuBar, T + 32);
}

/* Every CTA's finish of its columns (max_dim 0, the plan's fused = 2; all CTAs resident: a cooperative launch).
 * T consumer threads, t = 0 .. T - 1; sh: T / 32 + 2 doubles (consumers_sum's, mu, the packed own sum); gcol: the
 * own rows' column maxima (gown; the epilogue's). */
template <class C>
__device__ __noinline__ void grid_finish(const GridArgs p, int t, double *sh, const float *gcol, uint64_t *zbar) {
    constexpr int T = 128 * C::CONSUMERS;
    using E = typename C::T;
    E *out = static_cast<E *>(p.out);
    mg_named_bar_sync(3, T);   /* this CTA's partial rows (and gcol) are stored */
    if (!p.gown) {          /* the columns are not this CTA's own: every CTA's partial rows first */
        if (t == 0) grid_barrier(p.gbar);
        mg_named_bar_sync(3, T);
    }
    const int width = p.gown ? C::WROWS : p.gchunk, j0 = (int)blockIdx.x * width;
    const int j1 = p.n - j0 < width ? p.n : j0 + width;
    /* c of the thread's first column stays in a register (one column per thread where width <= T: every plan at
     * N <= 128 grid); the others are read again after the mean */
    double s = 0.0;
    float c0 = 0.f;
    double cs;
    if (p.gown) {   /* the own columns (at most WROWS <= T, in gcol): summed by the first warp alone, lane l over
                     * l, l + 32, ... then a xor tree (a fixed order), so that the slot leaves without consumers_sum's
                     * shared-memory step and barrier (W8, run 190: max_dim 0 M <= 64 0.2-0.4 us sooner) */
        if (j0 + t < j1) c0 = gcol[t];
        if (t < 32) {
#pragma unroll
            for (int i = 0; i < C::WROWS / 32; i++)
                if (j0 + t + 32 * i < j1) s += (double)gcol[t + 32 * i];
            for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
        }
        cs = s;
    } else {
        for (int j = j0 + t; j < j1; j += T) {   /* ascending j per thread: a fixed order */
            const float c = grid_col(p, j);
            if (j == j0 + t) c0 = c;
            s += (double)c;
        }
        cs = consumers_sum<T>(s, t, sh);
    }
    if (t < 32) {   /* THE TAGGED SLOTS, by the consumers' first warp: this CTA's slot (lane 0), and the slots past
                     * the grid that it keeps at this launch's tag; its own packed sum to the poller (THE POLLER) */
        mg_mbar_wait(zbar, 0);   /* grid_start's tag (long since there) */
        const unsigned tag = (unsigned)*launch_tag(zbar);
        const int B = (int)gridDim.x, me = (int)blockIdx.x;
        const unsigned long long mine = slot_pack(cs, tag);
        for (int b = me + t * B; b < p.gslots; b += 32 * B) mg_st_relaxed_gpu_u64(p.gslot + b, b == me ? mine : tag);
        if (t == 0) {
            sh_own<T>(sh) = mine;
            mg_mbar_arrive(own_bar(zbar));   /* release.cta: the poller reads it after its wait */
        }
    }
    mg_named_bar_sync(kPollMuBar, T + 32);   /* the poller wrote mu */
    const double mu = sh_mu<T>(sh);
    /* one GELU per thread, the columns spread over the whole grid: c - mu in fp64, the GELU in fp32 where that fits
     * (the last CTA's finish does the same), the shared finalize's fp64 GELU where it does not (or is NaN) */
    for (int j = j0 + t; j < j1; j += T) {
        const float c = j == j0 + t ? c0 : p.gown ? gcol[j - j0] : grid_col(p, j);
        const float v = (float)((double)c - mu);
        if (gelu_f32_fits(v)) mg_store_out(out, j, mg_gelu_f32(v));
        else mg_store_out(out, j, mg_gelu_f64((double)c - mu));
    }
}

}  // namespace mgsab

#endif /* MG_SWAPAB_FINISH_CUH */
