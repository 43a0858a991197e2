/* 07_gemv_stream.cu: kernel 7, the small-M path: W streamed once at the DRAM rate, exact fp32 FMA, fused epilogue.
 *
 * Why a kernel off the tensor-core ladder. At M <= 8 (N = K = 8192) the forward is a matrix-vector product: W is
 * 128 MiB (bf16) or 256 MiB (fp32 / tf32) and must be read once, while the arithmetic is 2 M N K = 1.1 GFLOP at
 * M = 8. The floor is W's bytes at the DRAM rate (~4.2 TB/s measured by the benchmark's copy ceiling): 32 us
 * bf16, 64 us fp32. The tiled kernels cannot get there: their 64- and 128-row tiles are mostly padding at M = 1, and
 * their stream-K fix-up and per-tile barriers cost more than the tensor work they save (kernel 4 bf16: 0.045 ms at
 * M = 1 and 8, cuBLAS 0.041-0.043; run 44). Here the CUDA cores have ~2x headroom over the memory time at M = 8.
 *
 * Layout. A block is 8 warps; warp w owns R = 4 consecutive W rows (the block covers BN = 32 columns of y) and
 * a row group of up to MT <= 8 rows of x (blockIdx.y; M > 8 runs cdiv(M, 8) groups, each streaming W again: correct
 * for any M, fast only for small M, which is why auto takes this kernel only up to M = 8: registry.c auto_max_m).
 * The lanes of a warp split K: each step a lane loads 16 bytes of each of its R W rows (8 bf16 or 4 fp32, streamed
 * with ld.global.cs so they do not evict x from L1) and the same 16 bytes of each x row (ld.global.nc, L1-cached:
 * the 8 warps and all blocks read the same x), widens them to fp32 and does R x MT x (8 or 4) fmaf. U steps are
 * loaded before any is used (U = 4 up to MT = 4, 2 at MT = 8), so each warp keeps U x R x 512 B of W in flight. Rows whose length in bytes is not
 * a multiple of 16 (or unaligned pointers) take a scalar path (one element per lane per step). After the k loop a
 * xor-butterfly sums each of the R x MT accumulators over the warp.
 *
 * Precision: fp32 FMA in every mode (fp32 mode's 1e-4 bar needs exactly that; bf16 mode reads bf16 and
 * accumulates in fp32, like the tensor-core kernels; tf32 mode gets fp32 accuracy, better than its bar).
 * Epilogue: y = acc + b[j] (bias before the max), rows >= M and columns >= N are -inf (never win a max), NaN
 * propagates through mg_nanmaxf:
 *   max_dim 1: partial[t * M + i] = max over the block's 32 columns (t = blockIdx.x), ntiles = cdiv(N, 32)
 *   max_dim 0: partial[g * N + j] = max over the group's rows (g = blockIdx.y), ntiles = cdiv(M, 8)
 * K = 0: no loads; y = b.
 * The kernel executes griddepcontrol.launch_dependents at its start, so the finalize (launched with PDL) is
 * resident and waiting when the last block ends (finalize.cu).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>

#include "mg_kernel.h"

namespace {

constexpr int WARPS = 8;
constexpr int R = 4;               /* W rows per warp */
constexpr int BN = WARPS * R;      /* columns of y per block */
constexpr int MG = 8;              /* rows of x per row group (the largest MT) */
/* k steps loaded ahead: U x R x 512 B of W in flight per warp. 4 where the registers allow it (MT <= 4); bf16 at
 * MT = 8 fills 128 registers with U = 2. */
template <int MT> constexpr int steps_ahead() { return MT <= 4 ? 4 : 2; }
constexpr int MAX_GROUPS = 65535;  /* gridDim.y */

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

    if (max_dim == 1) {
        /* the max over the block's 32 columns per row: the warp's R columns, then the 8 warps through smem */
        if (lane == 0) {
#pragma unroll
            for (int m = 0; m < MT; m++) {
                float v = acc[0][m];
#pragma unroll
                for (int r = 1; r < R; r++) v = mg_nanmaxf(v, acc[r][m]);
                red[warp][m] = v;
            }
        }
        __syncthreads();
        if (threadIdx.x < rows) {
            float v = red[0][threadIdx.x];
#pragma unroll
            for (int q = 1; q < WARPS; q++) v = mg_nanmaxf(v, red[q][threadIdx.x]);
            partial[(size_t)blockIdx.x * M + i0 + threadIdx.x] = v;
        }
    } else {
        /* the max over the group's rows per column: lane r writes column j0 + r */
        if (lane < R) {
            float v = -INFINITY;
#pragma unroll
            for (int r = 0; r < R; r++)
                if (r == lane) {
                    v = acc[r][0];
#pragma unroll
                    for (int m = 1; m < MT; m++) v = mg_nanmaxf(v, acc[r][m]);
                }
            if (j0 + lane < N) partial[(size_t)blockIdx.y * N + j0 + lane] = v;
        }
    }
}

int gemv_partial_tiles(const mg_problem *p) {
    const long long t = p->max_dim == 1 ? ((long long)p->n + BN - 1) / BN : ((long long)p->m + MG - 1) / MG;
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

template <typename T, int MT>
void launch_typed(const mg_problem *p, const void *x, const void *w, const void *b, float *partial, bool vec,
                  cudaStream_t s) {
    const dim3 grid(mg_cdiv(p->n, BN), mg_cdiv(p->m, MG));
    const T *xt = (const T *)x, *wt = (const T *)w, *bt = (const T *)b;
    if (vec)
        gemv_stream_kernel<T, MT, true><<<grid, WARPS * 32, 0, s>>>(xt, wt, bt, p->m, p->n, p->k, p->max_dim, partial);
    else
        gemv_stream_kernel<T, MT, false><<<grid, WARPS * 32, 0, s>>>(xt, wt, bt, p->m, p->n, p->k, p->max_dim, partial);
}

/* MT = the smallest of 1, 2, 4, 8 that holds min(M, 8) rows. */
template <typename T>
void launch_mt(const mg_problem *p, const void *x, const void *w, const void *b, float *partial, bool vec,
               cudaStream_t s) {
    if (p->m <= 1) launch_typed<T, 1>(p, x, w, b, partial, vec, s);
    else if (p->m <= 2) launch_typed<T, 2>(p, x, w, b, partial, vec, s);
    else if (p->m <= 4) launch_typed<T, 4>(p, x, w, b, partial, vec, s);
    else launch_typed<T, 8>(p, x, w, b, partial, vec, s);
}

mg_status gemv_launch(mg_launch_args *a) {
    const mg_problem *p = &a->p;
    mg_status st = gemv_supports(p, 0);
    if (st != MG_OK) return st;
    a->ntiles = gemv_partial_tiles(p);
    if (mg_partial_len(p) == 0) return MG_OK;   /* empty output: nothing to reduce */
    if (p->m == 0 || p->n == 0)
        return mg_set_error(MG_ERR_SHAPE, "gemv_stream: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m,
                            p->n, p->max_dim);
    if (!a->b || !a->partial || (p->k > 0 && (!a->x || !a->w)))
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_stream: NULL pointer:%s%s%s%s", a->x ? "" : " x",
                            a->w ? "" : " W", a->b ? "" : " b", a->partial ? "" : " partial");
    /* 16-byte loads need 16-byte rows and 16-byte aligned x and W */
    const size_t row_bytes = (size_t)p->k * mg_elem_bytes(p->prec);
    const bool vec = row_bytes % 16 == 0 && (uintptr_t)a->x % 16 == 0 && (uintptr_t)a->w % 16 == 0;
    cudaStream_t s = (cudaStream_t)a->stream;
    if (p->prec == MG_PREC_BF16)
        launch_mt<__nv_bfloat16>(p, a->x, a->w, a->b, a->partial, vec, s);
    else
        launch_mt<float>(p, a->x, a->w, a->b, a->partial, vec, s);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_gemv_stream = {
    gemv_partial_tiles, NULL, gemv_supports, NULL, NULL, gemv_launch,
};
