/* 01_naive.cu: kernel 1, the simplest correct FUSED kernel: the starting point of the numbered sequence.
 *
 * Technique: one thread per output y[i,j], a plain fp32 FMA loop over k (no shared-memory tiling, no tensor
 * cores); the block's 16 x 16 outputs get the bias and are max-reduced in shared memory with the
 * NaN-propagating max, so y is never written:
 *   max_dim 1: the block (column tile t = blockIdx.x) writes partial[t * M + i] for its 16 rows i
 *   max_dim 0: the block (row tile t = blockIdx.y) writes partial[t * N + j] for its 16 columns j
 * What changed from kernel 0: the M x N product is no longer materialised; the math is slow SIMT.
 * Precision: fp32 and tf32 modes both run exact fp32 FMA (tf32 mode simply meets a looser bar); bf16 mode reads
 * bf16 and accumulates in fp32.
 * Memory access: threadIdx.x walks j (16 different W rows per half-warp, each thread reading its own W row
 * sequentially in k, served by L1 lines), threadIdx.y walks i (x loads are broadcast within a half-warp).
 * Expected speed (not yet measured): about 1 TFLOP/s, since every warp-wide W load touches 16 different lines;
 * roughly 0.1-0.2 s at the 137-GFLOP headline. It exists to be obviously right.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>

#include "mg_kernel.h"

namespace {

constexpr int TILE_M = 16;   /* rows per block    (threadIdx.y) */
constexpr int TILE_N = 16;   /* columns per block (threadIdx.x) */
constexpr int MAX_GRID_Y = 65535;

template <typename T>
__global__ void __launch_bounds__(TILE_M * TILE_N) naive_kernel(const T *__restrict__ x, const T *__restrict__ w,
                                                              const T *__restrict__ b, int M, int N, int K,
                                                              int max_dim, float *__restrict__ partial) {
    __shared__ float tile[TILE_M][TILE_N];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int i = blockIdx.y * TILE_M + ty;
    const int j = blockIdx.x * TILE_N + tx;

    /* Every thread runs the same K loop (on a clamped row and column), so each warp reaches the barrier below
     * converged; outside the matrix the result is replaced by -inf, the identity of the (NaN-propagating) max.
     * (With the loop inside `if (i < M && j < N)`, compute-sanitizer's synccheck reported divergent warps at the
     * barrier for tail blocks launched from graphs: notes/reliability.md.) */
    const int ic = i < M ? i : M - 1, jc = j < N ? j : N - 1;
    const T *xr = x + (size_t)ic * K;
    const T *wr = w + (size_t)jc * K;
    float acc = 0.f;
    for (int k = 0; k < K; k++) acc = fmaf(mg_to_f32(xr[k]), mg_to_f32(wr[k]), acc);
    const float v = (i < M && j < N) ? acc + mg_to_f32(b[jc]) : -INFINITY;   /* bias BEFORE the max: NaN/inf exact */
    tile[ty][tx] = v;
    __syncthreads();

    if (max_dim == 1) {
        /* Row max across the tile's 16 columns, one thread per row. */
        if (tx == 0 && i < M) {
            float m = tile[ty][0];
            for (int c = 1; c < TILE_N; c++) m = mg_nanmaxf(m, tile[ty][c]);
            partial[(size_t)blockIdx.x * M + i] = m;
        }
    } else {
        /* Column max across the tile's 16 rows, one thread per column. */
        if (ty == 0 && j < N) {
            float m = tile[0][tx];
            for (int r = 1; r < TILE_M; r++) m = mg_nanmaxf(m, tile[r][tx]);
            partial[(size_t)blockIdx.y * N + j] = m;
        }
    }
}

int naive_partial_tiles(const mg_problem *p) {
    return p->max_dim == 1 ? mg_cdiv(p->n, TILE_N) : mg_cdiv(p->m, TILE_M);
}

mg_status naive_supports(const mg_problem *p, int sm) {
    (void)sm;
    if (p->prec != MG_PREC_FP32 && p->prec != MG_PREC_TF32 && p->prec != MG_PREC_BF16)
        return mg_set_error(MG_ERR_UNSUPPORTED, "naive: unknown precision %d", (int)p->prec);
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "naive: negative size (M=%d N=%d K=%d)", p->m, p->n, p->k);
    if (mg_cdiv(p->m, TILE_M) > MAX_GRID_Y)
        return mg_set_error(MG_ERR_UNSUPPORTED, "naive: M=%d exceeds the grid's y limit (%d rows)", p->m,
                            MAX_GRID_Y * TILE_M);
    return MG_OK;
}

mg_status naive_launch(mg_launch_args *a) {
    const mg_problem *p = &a->p;
    mg_status st = naive_supports(p, 0);
    if (st != MG_OK) return st;
    a->ntiles = naive_partial_tiles(p);
    if (mg_partial_len(p) == 0) return MG_OK;          /* empty output: nothing to reduce */
    if (p->m == 0 || p->n == 0)
        return mg_set_error(MG_ERR_SHAPE, "naive: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m, p->n,
                            p->max_dim);
    if (!a->b || !a->partial || (p->k > 0 && (!a->x || !a->w)))
        return mg_set_error(MG_ERR_INVALID_ARG, "naive: NULL pointer");
    const dim3 block(TILE_N, TILE_M);
    const dim3 grid(mg_cdiv(p->n, TILE_N), mg_cdiv(p->m, TILE_M));
    cudaStream_t s = (cudaStream_t)a->stream;
    if (p->prec == MG_PREC_BF16)
        naive_kernel<__nv_bfloat16><<<grid, block, 0, s>>>((const __nv_bfloat16 *)a->x, (const __nv_bfloat16 *)a->w,
                                                           (const __nv_bfloat16 *)a->b, p->m, p->n, p->k, p->max_dim,
                                                           a->partial);
    else
        naive_kernel<float><<<grid, block, 0, s>>>((const float *)a->x, (const float *)a->w, (const float *)a->b, p->m,
                                                   p->n, p->k, p->max_dim, a->partial);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_naive = {
    naive_partial_tiles, NULL, naive_supports, NULL, NULL, naive_launch,
};
