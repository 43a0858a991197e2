/* gemv_epilogue.cuh: the layout and the partial maxima of the gemv kernels (7 gemv_stream, 11 gemv_int8w): a
 * block of WARPS warps, warp w holding y for its R columns j0 .. j0 + R - 1 (j0 = blockIdx.x * WARPS * R + w * R) and
 * the MT rows i0 .. i0 + MT - 1 of its row group (blockIdx.y), every lane holding all R x MT values (after the warp
 * sums), -inf outside M x N and wherever a kernel masks a row. It writes
 *   max_dim 1: partial[blockIdx.x * M + i0 + i] = max over the block's WARPS * R columns (rows < `rows` only)
 *   max_dim 0: partial[blockIdx.y * N + j]     = max over the group's MT rows (columns < N only)
 * NaN-propagating (mg_nanmaxf). red: WARPS x MT floats of shared memory. Contains a __syncthreads (max_dim 1): every
 * thread of the block must call it. */
#ifndef MG_GEMV_EPILOGUE_CUH
#define MG_GEMV_EPILOGUE_CUH

#include <math.h>

#include "mg_kernel.h"

namespace mg_gemv {
constexpr int WARPS = 8;
constexpr int R = 4;               /* W rows per warp */
constexpr int BN = WARPS * R;      /* columns of y per block */
constexpr int MG = 8;              /* rows of x per row group (the largest MT) */
constexpr int MAX_GROUPS = 65535;  /* gridDim.y: row groups */

/* The partial rows of a launch (the store below): one per block of BN columns (max_dim 1) or per row group (0). */
inline long long partial_rows(long long m, long long n, int max_dim) {
    return max_dim == 1 ? (n + BN - 1) / BN : (m + MG - 1) / MG;
}
}  // namespace mg_gemv

template <int WARPS, int R, int MT>
__device__ __forceinline__ void mg_gemv_store_maxima(const float (&acc)[R][MT], float (*red)[MT], int warp, int lane,
                                                     int j0, int i0, int rows, int M, int N, int max_dim,
                                                     float *__restrict__ partial) {
    if (max_dim == 1) {
        /* the max over the block's columns per row: the warp's R columns, then the warps through smem */
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
    } else if (lane < R) {
        /* the max over the group's rows per column: lane r writes column j0 + r */
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

#endif /* MG_GEMV_EPILOGUE_CUH */
