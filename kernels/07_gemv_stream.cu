/* 07_gemv_stream.cu: kernel 7, the small-M path: W streamed once at the DRAM rate, exact fp32 FMA, fused epilogue.
 *
 * What it shows: a kernel off the tensor-core ladder. At M <= 8 (N = K = 8192) the forward is a matrix-vector
 * product: W is 128 MiB (bf16) or 256 MiB (fp32 / tf32) and must be read once, while the arithmetic is 2 M N K =
 * 1.1 GFLOP at M = 8. The floor is W's bytes at the DRAM rate (~4.2 TB/s measured by the benchmark's copy ceiling):
 * 32 us bf16, 64 us fp32. The tiled kernels cannot get there: their 64- and 128-row tiles are mostly padding at
 * M = 1, and their stream-K fix-up and per-tile barriers cost more than the tensor work they save. Here the CUDA
 * cores have ~2x headroom over the memory time at M = 8.
 *
 * Layout. A block is 8 warps; warp w owns R = 4 consecutive W rows (the block covers BN = 32 columns of y) and
 * a row group of up to MT <= 8 rows of x (blockIdx.y; M > 8 runs cdiv(M, 8) groups, each streaming W again: correct
 * for any M, fast only for small M, which is why auto takes this kernel only where mg_gemv_auto_fits says so).
 * The lanes of a warp split K: each step a lane loads 16 bytes of each of its R W rows (8 bf16 or 4 fp32, streamed
 * with ld.global.cs so they do not evict x from L1) and the same 16 bytes of each x row (ld.global.nc, L1-cached:
 * the 8 warps and all blocks read the same x), widens them to fp32 and does R x MT x (8 or 4) fmaf. U steps are
 * loaded before any is used (U = 4 up to MT = 4, 2 at MT = 8), so each warp keeps U x R x 512 B of W in flight.
 * Rows whose length in bytes is not a multiple of 16, or x or W not 16-byte aligned (the problem's align bits),
 * take a scalar path (one element per lane per step). After the k loop a xor-butterfly sums each of the R x MT
 * accumulators over the warp.
 *
 * Precision: fp32 FMA in every mode (fp32 mode's 1e-4 bar needs exactly that; bf16 mode reads bf16 and
 * accumulates in fp32, like the tensor-core kernels; tf32 mode gets fp32 accuracy, better than its bar).
 * Epilogue: y = acc + b[j] (bias before the max), rows >= M and columns >= N are -inf (never win a max), NaN
 * propagates through mg_nanmaxf:
 *   max_dim 1: partial[t * M + i] = max over the block's 32 columns (t = blockIdx.x), cdiv(N, 32) partial rows
 *   max_dim 0: partial[g * N + j] = max over the group's rows (g = blockIdx.y), cdiv(M, 8) partial rows
 * K = 0: no loads; y = b.
 * The kernel executes griddepcontrol.launch_dependents at its start, so the finalize (launched with PDL) is
 * resident and waiting when the last block ends (finalize.cu).
 * Host side: plan picks the instantiation (element type, MT = the smallest of 1, 2, 4, 8 holding min(M, 8) rows,
 * 16-byte loads or the scalar path) and the grid; launch checks that x and W have the alignment the plan assumed
 * and enqueues.
 * Run: build/maxgemm run --kernel 7 --m 8 --precision fp32 --check   (also tf32, bf16)
 * Measured (H200, M = 8, N = K = 8192, fp32, max_dim 1, bench/results/h200.csv, run 126): 0.088 ms, 1.68x kernel 0.
 * Design, measurements and history: notes/07_gemv_stream.md.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "gemv_stream.h"
#include "gemv_epilogue.cuh"
#include "mg_kernel.h"

namespace {

using mg_gemv::BN;   /* the layout both gemv kernels share (gemv_epilogue.cuh) */
using mg_gemv::MAX_GROUPS;
using mg_gemv::MG;
using mg_gemv::R;
using mg_gemv::WARPS;
/* k steps loaded ahead: U x R x 512 B of W in flight per warp. 4 where the registers allow it (MT <= 4); bf16 at
 * MT = 8 fills 128 registers with U = 2. */
template <int MT> constexpr int steps_ahead() { return MT <= 4 ? 4 : 2; }

/* 16 bytes as fp32 values: 4 floats, or 8 bf16 widened (a bf16 is the top half of its fp32: exact). */
template <typename T> struct Vec;
template <> struct Vec<float> {
    static constexpr int E = 4;
    __device__ __forceinline__ static void widen(const uint4 &v, float *f) {
        f[0] = __uint_as_float(v.x); f[1] = __uint_as_float(v.y);
        f[2] = __uint_as_float(v.z); f[3] = __uint_as_float(v.w);
    }
};
template <> struct Vec<__nv_bfloat16> {
    static constexpr int E = 8;
    __device__ __forceinline__ static void widen(const uint4 &v, float *f) {
        const uint32_t w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int q = 0; q < 4; q++) {
            f[2 * q] = __uint_as_float(w[q] << 16);
            f[2 * q + 1] = __uint_as_float(w[q] & 0xffff0000u);
        }
    }
};

template <typename T, int MT, bool VEC>
__global__ void __launch_bounds__(WARPS * 32) gemv_stream_kernel(const T *__restrict__ x, const T *__restrict__ w,
                                                               const T *__restrict__ b, int M, int N, int K,
                                                               int max_dim, float *__restrict__ partial) {
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
    __shared__ float red[WARPS][MT];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int j0 = blockIdx.x * BN + warp * R;
    const int i0 = blockIdx.y * MG;
    const int rows = min(MT, M - i0);   /* >= 1: the grid has cdiv(M, MG) groups */

    /* Clamped rows: every lane runs the same loop; the masks below drop the clamped rows and columns. Row r of
     * the warp's W and row m of the group's x are wrow(r) and xrow(m): recomputed at each use (a wide multiply-add)
     * rather than held as 12 pointers, which pushed bf16 MT = 8 past 128 registers. */
    auto wrow = [&](int r) { return w + (size_t)min(j0 + r, N - 1) * K; };
    auto xrow = [&](int m) { return x + (size_t)(i0 + min(m, rows - 1)) * K; };

    float acc[R][MT];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int m = 0; m < MT; m++) acc[r][m] = 0.f;

    if constexpr (VEC) {
        constexpr int E = Vec<T>::E, U = steps_ahead<MT>();
        const int nvec = K / E;   /* K % E == 0 on this path */
        for (int v0 = lane; v0 < nvec; v0 += 32 * U) {
            uint4 wv[U][R];
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int v = v0 + 32 * u;
#pragma unroll
                for (int r = 0; r < R; r++)
                    wv[u][r] = v < nvec ? __ldcs(reinterpret_cast<const uint4 *>(wrow(r)) + v) : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int u = 0; u < U; u++) {
                const int v = v0 + 32 * u;
                if (v >= nvec) break;
                float wf[R][E];
#pragma unroll
                for (int r = 0; r < R; r++) Vec<T>::widen(wv[u][r], wf[r]);
#pragma unroll
                for (int m = 0; m < MT; m++) {
                    float xf[E];
                    Vec<T>::widen(__ldg(reinterpret_cast<const uint4 *>(xrow(m)) + v), xf);
#pragma unroll
                    for (int r = 0; r < R; r++)
#pragma unroll
                        for (int e = 0; e < E; e++) acc[r][m] = fmaf(xf[e], wf[r][e], acc[r][m]);
                }
            }
        }
    } else {
        for (int k = lane; k < K; k += 32) {
            float wf[R];
#pragma unroll
            for (int r = 0; r < R; r++) wf[r] = mg_to_f32(wrow(r)[k]);
#pragma unroll
            for (int m = 0; m < MT; m++) {
                const float xf = mg_to_f32(xrow(m)[k]);
#pragma unroll
                for (int r = 0; r < R; r++) acc[r][m] = fmaf(xf, wf[r], acc[r][m]);
            }
        }
    }

    /* Warp sums (every lane ends with the totals), then y = sum + b, masked to -inf outside M x N. */
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int m = 0; m < MT; m++) {
            float s = acc[r][m];
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
            const bool ok = j0 + r < N && m < rows;
            acc[r][m] = ok ? s + mg_to_f32(b[min(j0 + r, N - 1)]) : -INFINITY;
        }

    mg_gemv_store_maxima<WARPS, R, MT>(acc, red, warp, lane, j0, i0, rows, M, N, max_dim, partial);
}

/* The private part of a launch plan (mg_launch_plan::priv): the instantiation and the grid. */
struct gemv_priv {
    int enqueue;            /* 0: empty output (M = 0 with max_dim 1, N = 0 with max_dim 0), nothing to launch */
    int bf16;               /* element type: 1 __nv_bfloat16 (bf16 mode), 0 float (fp32, tf32) */
    int mt_log2;            /* MT = 1 << mt_log2: 1, 2, 4 or 8 */
    int vec;                /* 1: 16-byte loads (rows of 16-byte multiples, x and W 16-byte aligned); 0: scalar */
    int grid_x, grid_y;     /* column blocks cdiv(N, BN), row groups cdiv(M, MG) */
};
static_assert(sizeof(gemv_priv) <= sizeof(((mg_launch_plan *)nullptr)->priv.bytes),
              "gemv_priv outgrows mg_launch_plan::priv");

/* Partial rows for a batch of p->m rows (at least 1: an empty output names one that is never written or read). */
int gemv_partial_rows(const mg_problem *p) {
    const long long t = mg_gemv::partial_rows(p->m, p->n, p->max_dim);
    if (t < 1) return 1;
    return t > INT_MAX ? INT_MAX : (int)t;   /* sizes gemv_supports rejects: no overflow on the way there */
}

mg_status gemv_supports(const mg_problem *p, int sm) {
    (void)sm;
    if (p->prec != MG_PREC_FP32 && p->prec != MG_PREC_TF32 && p->prec != MG_PREC_BF16)
        return mg_set_error(MG_ERR_UNSUPPORTED, "gemv_stream: unknown precision %d", (int)p->prec);
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "gemv_stream: negative size (M=%d N=%d K=%d)", p->m, p->n, p->k);
    if ((long long)p->m > (long long)MAX_GROUPS * MG)
        return mg_set_error(MG_ERR_UNSUPPORTED, "gemv_stream: M=%d exceeds the grid's y limit (%d rows)", p->m,
                            MAX_GROUPS * MG);
    if (p->n > INT_MAX - BN)   /* the kernel's column index j0 + r is an int */
        return mg_set_error(MG_ERR_UNSUPPORTED, "gemv_stream: N=%d too large (at most %d)", p->n, INT_MAX - BN);
    return MG_OK;
}

/* The rows grow with m (max_dim 0) or do not depend on it (max_dim 1): p->m's count covers every batch. */
void gemv_bounds(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes) {
    (void)dev;
    if (partial_rows) *partial_rows = gemv_partial_rows(p);
    if (ws_bytes) *ws_bytes = 0;
}

mg_status gemv_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    (void)opt;
    if (!p || !lp)
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_stream: plan called with a NULL %s",
                            p ? "launch plan" : "problem");
    mg_status st = gemv_supports(p, dev ? dev->sm : 0);
    if (st != MG_OK) return st;
    gemv_priv pp = {};
    pp.enqueue = mg_partial_len(p) != 0;
    if (pp.enqueue && (p->m == 0 || p->n == 0))
        return mg_set_error(MG_ERR_SHAPE, "gemv_stream: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m,
                            p->n, p->max_dim);
    pp.bf16 = p->prec == MG_PREC_BF16;
    /* MT = the smallest of 1, 2, 4, 8 that holds min(M, 8) rows. */
    pp.mt_log2 = p->m <= 1 ? 0 : p->m <= 2 ? 1 : p->m <= 4 ? 2 : 3;
    /* 16-byte loads need 16-byte rows and 16-byte aligned x and W (launch checks the pointers agree). */
    const size_t row_bytes = (size_t)p->k * mg_elem_bytes(p->prec);
    pp.vec = row_bytes % 16 == 0 && (p->align & MG_ALIGN_X16) && (p->align & MG_ALIGN_W16);
    pp.grid_x = mg_cdiv(p->n, BN);
    pp.grid_y = mg_cdiv(p->m, MG);
    const int rows = gemv_partial_rows(p);
    char summary[sizeof lp->summary];
    if (pp.enqueue)
        snprintf(summary, sizeof summary,
                 "gemv_stream: %s in, MT %d, %s, grid %d x %d blocks of %d warps, %d partial rows",
                 pp.bf16 ? "bf16" : "fp32", 1 << pp.mt_log2,
                 pp.vec ? "16-byte loads" : row_bytes % 16 ? "scalar loads (rows not 16-byte multiples)"
                                                           : "scalar loads (x or W not 16-byte aligned)",
                 pp.grid_x, pp.grid_y, WARPS, rows);
    else
        snprintf(summary, sizeof summary, "gemv_stream: empty output (M=%d, N=%d, max_dim %d), nothing to launch",
                 p->m, p->n, p->max_dim);
    mg_plan_simple(lp, rows, 0, summary);
    memcpy(lp->priv.bytes, &pp, sizeof pp);
    return MG_OK;
}

/* One host launcher per instantiation; the plan's (bf16, mt_log2, vec) indexes the table. */
using launcher_fn = void (*)(dim3 grid, const void *x, const void *w, const void *b, const mg_problem *p,
                             float *partial, cudaStream_t s);

template <typename T, int MT, bool VEC>
void launch_one(dim3 grid, const void *x, const void *w, const void *b, const mg_problem *p, float *partial,
                cudaStream_t s) {
    gemv_stream_kernel<T, MT, VEC><<<grid, WARPS * 32, 0, s>>>((const T *)x, (const T *)w, (const T *)b, p->m, p->n,
                                                               p->k, p->max_dim, partial);
}

const launcher_fn launchers[2][4][2] = {
    {{launch_one<float, 1, false>, launch_one<float, 1, true>},
     {launch_one<float, 2, false>, launch_one<float, 2, true>},
     {launch_one<float, 4, false>, launch_one<float, 4, true>},
     {launch_one<float, 8, false>, launch_one<float, 8, true>}},
    {{launch_one<__nv_bfloat16, 1, false>, launch_one<__nv_bfloat16, 1, true>},
     {launch_one<__nv_bfloat16, 2, false>, launch_one<__nv_bfloat16, 2, true>},
     {launch_one<__nv_bfloat16, 4, false>, launch_one<__nv_bfloat16, 4, true>},
     {launch_one<__nv_bfloat16, 8, false>, launch_one<__nv_bfloat16, 8, true>}},
};

mg_status gemv_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    (void)state;
    if (!lp || !io)
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_stream: launch called with a NULL %s",
                            lp ? "io" : "launch plan");
    gemv_priv pp;
    memcpy(&pp, lp->priv.bytes, sizeof pp);
    if (!pp.enqueue) return MG_OK;   /* empty output: nothing to reduce */
    const mg_problem *p = &lp->p;
    if (pp.bf16 < 0 || pp.bf16 > 1 || pp.mt_log2 < 0 || pp.mt_log2 > 3 || pp.vec < 0 || pp.vec > 1)
        return mg_set_error(MG_ERR_INVALID_ARG,
                            "gemv_stream: launch plan names no instantiation (bf16 %d, MT 2^%d, vec %d): not made by "
                            "gemv_plan?", pp.bf16, pp.mt_log2, pp.vec);
    if (!io->b || !io->partial || (p->k > 0 && (!io->x || !io->w)))
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_stream: NULL pointer:%s%s%s%s", io->x || p->k == 0 ? "" : " x",
                            io->w || p->k == 0 ? "" : " W", io->b ? "" : " b", io->partial ? "" : " partial");
    const bool x_off = (uintptr_t)io->x % 16 != 0, w_off = (uintptr_t)io->w % 16 != 0;
    if (pp.vec && (x_off || w_off))
        return mg_set_error(MG_ERR_INVALID_ARG,
                            "gemv_stream: the launch plan uses 16-byte loads, made for 16-byte aligned x and W (the "
                            "problem's align bits), but %s not (x %p, W %p)",
                            x_off && w_off ? "x and W are" : x_off ? "x is" : "W is", io->x, io->w);
    launchers[pp.bf16][pp.mt_log2][pp.vec](dim3(pp.grid_x, pp.grid_y), io->x, io->w, io->b, p, io->partial,
                                           (cudaStream_t)stream);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

}  // namespace

/* Where auto may take kernel 7 (src/gemv_stream.h). Run 47 measured it ahead of kernels 4 / 6 (same-process pairs,
 * max_dim 1 and 0): fp32 up to M = 8 (1.42-1.66x kernel 0, +11-33% on kernel 6), tf32 at M = 1 (+8% on kernel 4;
 * kernel 4 leads at M = 4 and 8), bf16 up to M = 2 (M = 1 +12%, M = 2 +3.5%; kernel 4 leads at 4 and 8). And only
 * where x's and W's rows are multiples of 16 bytes: other K run its scalar path, which keeps 16x fewer bytes in
 * flight and was never measured fast. */
extern "C" int mg_gemv_auto_max_m(mg_precision prec) {
    switch (prec) {
    case MG_PREC_FP32: return 8;
    case MG_PREC_TF32: return 1;
    case MG_PREC_BF16: return 2;
    default: return 0;
    }
}

extern "C" int mg_gemv_auto_fits(const mg_problem *p) {
    if (!p) return 0;
    const int max_m = mg_gemv_auto_max_m(p->prec);
    if (max_m <= 0 || p->m > max_m) return 0;
    return ((long long)p->k * (long long)mg_elem_bytes(p->prec)) % 16 == 0;
}

extern "C" const mg_kernel_ops mg_ops_gemv_stream = {
    gemv_supports, gemv_bounds, gemv_plan, NULL, NULL, gemv_launch,
};
