/* 01_naive.cu: kernel 1, the simplest correct FUSED kernel: the starting point of the numbered sequence.
 *
 * What it shows: fusion without any GEMM technique. One thread per output y[i,j], a plain fp32 FMA loop over k
 * (no shared-memory tiling, no tensor cores); the block's 16 x 16 outputs get the bias and are max-reduced in
 * shared memory with the NaN-propagating max, so y is never written:
 *   max_dim 1: the block (column tile t = blockIdx.x) writes partial[t * M + i] for its 16 rows i
 *   max_dim 0: the block (row tile t = blockIdx.y) writes partial[t * N + j] for its 16 columns j
 * What changed from kernel 0: the M x N product is no longer materialised; the math is slow SIMT.
 * Precision: fp32 and tf32 modes both run exact fp32 FMA (tf32 mode simply meets a looser bar); bf16 mode reads
 * bf16 and accumulates in fp32. It is also the exact runner the split kernels (5, 6) hand W holding +-inf to.
 * Memory access: threadIdx.x walks j (16 different W rows per half-warp, each thread reading its own W row
 * sequentially in k, served by L1 lines), threadIdx.y walks i (x loads are broadcast within a half-warp).
 * Host side: plan fixes the element type and the grid (cdiv(N, 16) x cdiv(M, 16)) and the partial rows
 * (cdiv(N, 16) for max_dim 1, cdiv(M, 16) for max_dim 0); launch checks the pointers and enqueues.
 * Run: build/maxgemm run --kernel 1 --precision fp32 --check   (also tf32, bf16)
 * Measured (H200, headline M = 1024, N = K = 8192, fp32, max_dim 1, bench/results/h200.csv, run 126): 150 ms
 * (0.92 TFLOP/s, 0.018x kernel 0). It exists to be obviously right.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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

/* The private part of a launch plan (mg_launch_plan::priv). */
struct naive_priv {
    int enqueue;            /* 0: empty output (M = 0 with max_dim 1, N = 0 with max_dim 0), nothing to launch */
    int bf16;               /* element type: 1 __nv_bfloat16 (bf16 mode), 0 float (fp32, tf32) */
    int grid_x, grid_y;     /* column tiles, row tiles */
};
static_assert(sizeof(naive_priv) <= sizeof(((mg_launch_plan *)nullptr)->priv.bytes),
              "naive_priv outgrows mg_launch_plan::priv");

/* Partial rows for a batch of p->m rows: one per column tile (max_dim 1) or row tile (max_dim 0); at least 1, so
 * an empty output still names one (never written, never read: the finalize reduces 0 elements). */
int naive_rows(const mg_problem *p) {
    const int t = p->max_dim == 1 ? mg_cdiv(p->n, TILE_N) : mg_cdiv(p->m, TILE_M);
    return t > 1 ? t : 1;
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

/* The rows grow with m (max_dim 0) or do not depend on it (max_dim 1): p->m's count covers every batch. */
void naive_bounds(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes) {
    (void)dev;
    if (partial_rows) *partial_rows = naive_rows(p);
    if (ws_bytes) *ws_bytes = 0;
}

mg_status naive_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    (void)opt;
    if (!p || !lp)
        return mg_set_error(MG_ERR_INVALID_ARG, "naive: plan called with a NULL %s", p ? "launch plan" : "problem");
    mg_status st = naive_supports(p, dev ? dev->sm : 0);
    if (st != MG_OK) return st;
    naive_priv pp = {};
    pp.enqueue = mg_partial_len(p) != 0;
    if (pp.enqueue && (p->m == 0 || p->n == 0))
        return mg_set_error(MG_ERR_SHAPE, "naive: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m, p->n,
                            p->max_dim);
    pp.bf16 = p->prec == MG_PREC_BF16;
    pp.grid_x = mg_cdiv(p->n, TILE_N);
    pp.grid_y = mg_cdiv(p->m, TILE_M);
    const int rows = naive_rows(p);
    char summary[sizeof lp->summary];
    if (pp.enqueue)
        snprintf(summary, sizeof summary,
                 "naive: %s in, SIMT fp32 FMA, grid %d x %d blocks of %d x %d threads, %d partial rows",
                 pp.bf16 ? "bf16" : "fp32", pp.grid_x, pp.grid_y, TILE_N, TILE_M, rows);
    else
        snprintf(summary, sizeof summary, "naive: empty output (M=%d, N=%d, max_dim %d), nothing to launch", p->m,
                 p->n, p->max_dim);
    mg_plan_simple(lp, rows, 0, summary);
    memcpy(lp->priv.bytes, &pp, sizeof pp);
    return MG_OK;
}

mg_status naive_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    (void)state;
    if (!lp || !io)
        return mg_set_error(MG_ERR_INVALID_ARG, "naive: launch called with a NULL %s", lp ? "io" : "launch plan");
    naive_priv pp;
    memcpy(&pp, lp->priv.bytes, sizeof pp);
    if (!pp.enqueue) return MG_OK;                     /* empty output: nothing to reduce */
    const mg_problem *p = &lp->p;
    if (!io->b || !io->partial || (p->k > 0 && (!io->x || !io->w)))
        return mg_set_error(MG_ERR_INVALID_ARG, "naive: NULL pointer:%s%s%s%s", io->x || p->k == 0 ? "" : " x",
                            io->w || p->k == 0 ? "" : " W", io->b ? "" : " b", io->partial ? "" : " partial");
    const dim3 block(TILE_N, TILE_M);
    const dim3 grid(pp.grid_x, pp.grid_y);
    cudaStream_t s = (cudaStream_t)stream;
    if (pp.bf16)
        naive_kernel<__nv_bfloat16><<<grid, block, 0, s>>>((const __nv_bfloat16 *)io->x, (const __nv_bfloat16 *)io->w,
                                                           (const __nv_bfloat16 *)io->b, p->m, p->n, p->k, p->max_dim,
                                                           io->partial);
    else
        naive_kernel<float><<<grid, block, 0, s>>>((const float *)io->x, (const float *)io->w, (const float *)io->b,
                                                   p->m, p->n, p->k, p->max_dim, io->partial);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_naive = {
    naive_supports, naive_bounds, naive_plan, NULL, NULL, naive_launch,
};
