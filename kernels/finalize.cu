/* finalize.cu: the shared epilogue tail every kernel variant ends with (declared in src/mg_kernel.h).
 *
 * Input: ntiles partial rows of len floats, row t at partial + t * len (mg_kernel.h's layout):
 *   max_dim 1: len = M, the row maxima of column tile t;  max_dim 0: len = N, the column maxima of row tile t.
 * Output (float, or bf16 in the bf16 mode), SEMANTICS.md exactly:
 *   max_dim 1: m[i] = nanmax_t partial[t][i];  out[i] = gelu(m[i] - m[i])   (+0.0, or NaN when m is NaN or +-inf)
 *   max_dim 0: c[j] = nanmax_t partial[t][j];  mu = mean_j c[j];  out[j] = gelu(c[j] - mu)
 *
 * Determinism: the mean is summed in fp64 in an order that depends on len only (never on timing, the SM count
 * or atomics): a grid of min(cdiv(len, 32), FIN_MAX_BLOCKS) blocks, each thread summing its grid-stride columns
 * in ascending order, a fixed shuffle tree per block, then one fixed-order sum of the per-block sums.
 *
 * Launches: max_dim 1 is one kernel. max_dim 0 is two: (A) tile reduction + per-block fp64 sums into scratch,
 * (B) every block re-sums the <= FIN_MAX_BLOCKS block sums in the same fixed order (so all blocks agree on mu
 * bit for bit, with no third launch and no grid-wide barrier) and applies gelu(c - mu). No host sync.
 *
 * Scratch layout (max_dim 0 only): double block_sums[FIN_MAX_BLOCKS], then float cmax[len].
 *
 * Programmatic dependent launch (PDL): each finalize kernel is launched with the programmatic stream
 * serialization attribute and starts with griddepcontrol.wait, which returns once the kernel before it in the
 * stream has completed and its memory is visible (a no-op when launched without the attribute). So the launch
 * itself overlaps the tail of the GEMM kernel before it (kernels 4 and 6 execute griddepcontrol.launch_dependents
 * at their start; a primary that never does is treated as triggering when it completes). Off while the stream is
 * being captured into a graph (the graphs keep their plain edges) and with options.pdl = 0 (`--no-pdl`).
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mg_kernel.h"

namespace {

constexpr int FIN_THREADS = 256;        /* multiple of 32; the block reductions assume it */
constexpr int FIN_MAX_BLOCKS = 1024;    /* bound on kernel A's grid, hence on the block sums kernel B re-sums */
constexpr int FIN_MAX_GRID = 4096;      /* grid-stride cap of the elementwise kernels */

/* Waits for the grid before this one in the stream (PDL; see the header), then lets the next one (kernel B after
 * kernel A) launch: it waits in turn for this grid to complete, so the early trigger only hides launch latency. */
__device__ __forceinline__ void wait_primary() {
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
}


/* The tile reduction is spread over the block: FIN_POS consecutive positions (one warp's width, so every load
 * of a warp is one coalesced 128-byte row segment) times FIN_TGROUPS tile groups; group g takes tiles g, g + 8, ...
 * At the headline's max_dim 1 (len = M = 1024, 32-64 partial rows) that is 32 blocks whose threads each issue
 * 4-8 independent loads, instead of 4 blocks walking 64 dependent-latency rows. */
constexpr int FIN_POS = 32;
constexpr int FIN_TGROUPS = FIN_THREADS / FIN_POS;
constexpr int FIN_BATCH = 8;   /* tile loads per thread per round trip (reduce_tiles_block) */

/* nanmax over the ntiles rows at position i (valid: i < len); the result is valid in threads 0 .. P-1.
 * Every thread of the block must call it the same number of times (it holds barriers).
 * P positions per block (32 normally; 8 or 1 when len is that small: kernel 7's max_dim 1 at M <= 8 has up to
 * cdiv(N, 32) = 256 partial rows of 1-8 floats, which 8 groups of 32 lanes read 32 loads deep while 31/32 of the
 * lanes had no position). Thread t takes position t % P and tile group t / P; the FIN_THREADS / P groups are
 * combined by xor-shuffles over the lane bits above P, then across the 8 warps through shared memory. */
struct NoExtra {
    __device__ float operator()(float m) const { return m; }
};
/* extra(m): a last step of each thread's own max before the block combines them (fin_rows_kernel's remainder
 * columns), evaluated after the tile loads so that loads it waits for can be issued before them. */
template <int P = FIN_POS, class Extra = NoExtra>
__device__ __forceinline__ float reduce_tiles_block(const float *__restrict__ partial, int ntiles, int len, int i,
                                                    bool valid, Extra extra = Extra()) {
    static_assert(P >= 1 && P <= 32 && (P & (P - 1)) == 0, "P: a power of two up to a warp");
    constexpr int G = FIN_THREADS / P;   /* tile groups */
    constexpr int WARPS = FIN_THREADS / 32;
    __shared__ float red[WARPS][P];
    const int ty = threadIdx.x / P, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    float m = -INFINITY;   /* the identity of the max, for groups that get no tile (ntiles < G) */
    if (valid) {
        /* FIN_BATCH loads issued before any is used: up to G * FIN_BATCH partial rows (64 at P = 32: kernel 4's
         * 33 panels at the headline, its small tiles' 64) in one L2 round trip. (The `#pragma unroll 4` loop this
         * replaces issued ty = 0's 5 headline loads as 1 + 4: two round trips, run 45's SASS.) */
        for (int t0 = ty; t0 < ntiles; t0 += G * FIN_BATCH) {
            float v[FIN_BATCH];
            /* unconditional loads (the last row again past ntiles, then dropped): a guarded load compiled to a
             * branch around each one, and each max waited for its load before the next was issued */
#pragma unroll
            for (int q = 0; q < FIN_BATCH; q++)
                v[q] = __ldg(partial + (size_t)min(t0 + q * G, ntiles - 1) * len + i);
#pragma unroll
            for (int q = 0; q < FIN_BATCH; q++)
                if (t0 + q * G >= ntiles) v[q] = -INFINITY;
#pragma unroll
            for (int q = 0; q < FIN_BATCH; q++) m = mg_nanmaxf(m, v[q]);
        }
    }
    m = extra(m);
#pragma unroll
    for (int off = P; off < 32; off <<= 1) m = mg_nanmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
    if (lane < P) red[warp][lane] = m;
    __syncthreads();
    if (threadIdx.x < P)
        for (int w = 1; w < WARPS; w++) m = mg_nanmaxf(m, red[w][threadIdx.x]);
    __syncthreads();   /* red is reused by the caller's next grid-stride step */
    return m;
}

/* Sum over the block in a fixed order: a xor-shuffle tree per warp, then warp 0 sums the warp results in
 * ascending warp order. Every thread must call it; the result is valid in every thread. */
__device__ double block_sum_fixed(double v) {
    __shared__ double warp_sums[FIN_THREADS / 32];
    __shared__ double total;
    for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (threadIdx.x == 0) {
        double s = 0.0;
        for (int w = 0; w < FIN_THREADS / 32; w++) s += warp_sums[w];
        total = s;
    }
    __syncthreads();
    return total;
}

/* max_dim 1: out[i] = gelu(m - m). m - m is +0.0 for finite m and NaN otherwise; fp32 is exact here.
 * Remainder columns (rem_chunks > 0, at most FIN_TGROUPS of them): tile group c also sums column c's chunks in
 * ascending order (a fixed order: deterministic) and starts its max from that sum. */
template <typename OutT, int P>
__global__ void __launch_bounds__(FIN_THREADS) fin_rows_kernel(const float *__restrict__ partial, int ntiles, int len,
                                                             OutT *__restrict__ out, const float *__restrict__ rem,
                                                             int rem_cols, int rem_chunks) {
    static_assert(FIN_THREADS / P >= 8, "remainder column c is tile group c: at least 8 groups");
    wait_primary();
    const int c = threadIdx.x / P;
    /* The loop bound is uniform over the block: reduce_tiles_block holds barriers. */
    for (long long base = blockIdx.x * P; base < len; base += (long long)gridDim.x * P) {
        const int i = (int)base + threadIdx.x % P;
        /* The chunk loads are issued first, all of them, and summed only after the tile loads (one L2 round trip
         * for both, not one per chunk batch: run 39 measured the serial form at +2.8 us with 16 chunks). */
        const bool has_rem = c < rem_cols && i < len;
        float v[MG_REM_MAX_CHUNKS];
        {
            const float *src = rem + (size_t)c * len + i;
            const size_t step = (size_t)rem_cols * len;
#pragma unroll
            for (int j = 0; j < MG_REM_MAX_CHUNKS; j++)
                v[j] = has_rem && j < rem_chunks ? __ldcg(src + (size_t)j * step) : 0.f;
        }
        auto fold_rem = [&](float m) {
            if (!has_rem) return m;
            float sum = v[0];   /* chunk 0 (with the bias), then the others in ascending order */
#pragma unroll
            for (int j = 1; j < MG_REM_MAX_CHUNKS; j++)
                if (j < rem_chunks) sum += v[j];
            return mg_nanmaxf(m, sum);
        };
        const float m = reduce_tiles_block<P>(partial, ntiles, len, i, i < len, fold_rem);
        if (threadIdx.x < P && i < len) mg_store_out(out, i, mg_gelu_f32(m - m));
    }
}

/* max_dim 0, kernel A: column maxima into cmax, and one fp64 sum per block into block_sums[blockIdx.x]. Each
 * group-0 thread sums its positions in ascending order; the grid depends on len only, so the order is fixed. */
__global__ void __launch_bounds__(FIN_THREADS) fin_cols_reduce_kernel(const float *__restrict__ partial, int ntiles,
                                                                    int len, float *__restrict__ cmax,
                                                                    double *__restrict__ block_sums) {
    wait_primary();
    double s = 0.0;
    for (long long base = blockIdx.x * FIN_POS; base < len; base += (long long)gridDim.x * FIN_POS) {
        const int j = (int)base + threadIdx.x % FIN_POS;
        const float c = reduce_tiles_block(partial, ntiles, len, j, j < len);
        if (threadIdx.x < FIN_POS && j < len) {
            cmax[j] = c;
            s += (double)c;   /* NaN and +-inf propagate as in the fp64 reference's sum; no overflow in fp64 */
        }
    }
    s = block_sum_fixed(s);
    if (threadIdx.x == 0) block_sums[blockIdx.x] = s;
}

/* max_dim 0, kernel B: mu from the block sums (the same fixed order in every block), then gelu(c - mu).
 * c - mu and the GELU are computed in fp64 (cheap for N values): c - mu can exceed FLT_MAX for extreme finite
 * c, and the fp64 reference does the same; only the final store rounds. */
template <typename OutT>
__global__ void __launch_bounds__(FIN_THREADS) fin_cols_apply_kernel(const float *__restrict__ cmax,
                                                                   const double *__restrict__ block_sums,
                                                                   int nsums, int len, OutT *__restrict__ out) {
    wait_primary();
    double s = 0.0;
    for (int b = threadIdx.x; b < nsums; b += FIN_THREADS) s += block_sums[b];
    const double mu = block_sum_fixed(s) / (double)len;
    for (int j = blockIdx.x * FIN_THREADS + threadIdx.x; j < len; j += gridDim.x * FIN_THREADS)
        mg_store_out(out, j, mg_gelu_f64((double)cmax[j] - mu));
}

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* Blocks for len items at per_block items each, capped (the kernels grid-stride past the cap). */
int grid_for(int len, int per_block, int cap) {
    const int g = mg_cdiv(len, per_block);
    return g < cap ? g : cap;
}


/* kern<<<grid, FIN_THREADS, 0, st>>>(args...), with the PDL attribute when pdl. */
template <typename... KArgs, typename... Args>
mg_status launch(bool pdl, void (*kern)(KArgs...), int grid, cudaStream_t st, Args... args) {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    mg_launch_config(&cfg, &attr, dim3((unsigned)grid), dim3(FIN_THREADS), st, pdl);
    MG_CUDA_TRY(cudaLaunchKernelEx(&cfg, kern, ((KArgs)args)...));
    return MG_OK;
}

template <typename OutT>
mg_status finalize_typed(const float *partial, int ntiles, int len, int max_dim, OutT *out, void *scratch,
                         const float *rem, int rem_cols, int rem_chunks, bool want_pdl, cudaStream_t st) {
    const bool pdl = mg_pdl_usable(want_pdl, st) != 0;
    if (max_dim == 1) {
        const int lenq = len, rc = rem_chunks > 0 ? rem_cols : 0;
        /* positions per block: 1 for one row, 8 up to 8 rows (kernel 7's M <= 8), else a warp's 32 */
        if (len <= 1)
            return launch(pdl, fin_rows_kernel<OutT, 1>, 1, st, partial, ntiles, lenq, out, rem, rc, rem_chunks);
        if (len <= 8)
            return launch(pdl, fin_rows_kernel<OutT, 8>, 1, st, partial, ntiles, lenq, out, rem, rc, rem_chunks);
        return launch(pdl, fin_rows_kernel<OutT, FIN_POS>, grid_for(len, FIN_POS, FIN_MAX_GRID), st, partial, ntiles,
                      lenq, out, rem, rc, rem_chunks);
    }
    double *block_sums = (double *)scratch;
    float *cmax = (float *)((char *)scratch + align_up(sizeof(double) * FIN_MAX_BLOCKS, 256));
    /* The grid of kernel A depends on len only: that is what makes the summation order fixed. */
    const int nsums = grid_for(len, FIN_POS, FIN_MAX_BLOCKS);
    mg_status s = launch(pdl, fin_cols_reduce_kernel, nsums, st, partial, ntiles, len, cmax, block_sums);
    if (s != MG_OK) return s;
    return launch(pdl, fin_cols_apply_kernel<OutT>, grid_for(len, FIN_THREADS, FIN_MAX_GRID), st, cmax,
                  (const double *)block_sums, nsums, len, out);
}

}  // namespace

extern "C" size_t mg_finalize_scratch_bytes(int len) {
    if (len < 0) len = 0;
    return align_up(sizeof(double) * FIN_MAX_BLOCKS, 256) + align_up(sizeof(float) * (size_t)len, 256);
}

extern "C" mg_status mg_finalize(const float *partial, int ntiles, int len, int max_dim, mg_precision prec,
                                 void *out, void *scratch, void *stream) {
    return mg_finalize_rem(partial, ntiles, len, max_dim, prec, out, scratch, NULL, 0, 0, 1, stream);
}

extern "C" mg_status mg_finalize_rem(const float *partial, int ntiles, int len, int max_dim, mg_precision prec,
                                     void *out, void *scratch, const float *rem, int rem_cols, int rem_chunks,
                                     int pdl, void *stream) {
    if (len < 0) return mg_set_error(MG_ERR_INVALID_ARG, "mg_finalize: negative length %d", len);
    if (max_dim != 0 && max_dim != 1)
        return mg_set_error(MG_ERR_MAX_DIM, "mg_finalize: max_dim must be normalised to 0 or 1 (got %d)", max_dim);
    if (prec < 0 || prec >= MG_PREC_COUNT)
        return mg_set_error(MG_ERR_PRECISION, "mg_finalize: unknown precision %d", (int)prec);
    if (len == 0) return MG_OK;   /* an empty output (M = 0 with max_dim 1, N = 0 with max_dim 0): nothing to write */
    if (ntiles < 1)
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_finalize: the kernel reported %d partial rows (need >= 1)", ntiles);
    if (!partial || !out) return mg_set_error(MG_ERR_INVALID_ARG, "mg_finalize: NULL partial or out");
    if (max_dim == 0 && !scratch)
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_finalize: max_dim 0 needs scratch (mg_finalize_scratch_bytes)");
    if (rem_chunks < 0 || rem_chunks > MG_REM_MAX_CHUNKS ||
        (rem_chunks > 0 && (!rem || rem_cols < 1 || rem_cols > FIN_TGROUPS || max_dim != 1)))
        return mg_set_error(MG_ERR_INVALID_ARG,
                            "mg_finalize: remainder sums need max_dim 1, a pointer, 1..%d columns and 0..%d chunks (got "
                            "%d chunks of %d columns, max_dim %d, %s)", FIN_TGROUPS, MG_REM_MAX_CHUNKS, rem_chunks,
                            rem_cols, max_dim, rem ? "pointer set" : "NULL pointer");
    cudaStream_t st = (cudaStream_t)stream;
    if (prec == MG_PREC_BF16)
        return finalize_typed(partial, ntiles, len, max_dim, (__nv_bfloat16 *)out, scratch, rem, rem_cols, rem_chunks,
                              pdl != 0, st);
    return finalize_typed(partial, ntiles, len, max_dim, (float *)out, scratch, rem, rem_cols, rem_chunks, pdl != 0, st);
}

/* src/mg_kernel.h: 1 when the runtime says stream is not being captured (an error is "cannot say": 0). */
extern "C" int mg_stream_not_capturing(void *stream) {
    cudaStreamCaptureStatus cs = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing((cudaStream_t)stream, &cs) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return cs == cudaStreamCaptureStatusNone;
}

/* src/mg_kernel.h: PDL when the options ask for it (mg_options.pdl) and st is not being captured. */
extern "C" int mg_pdl_usable(int want, void *stream) { return want && mg_stream_not_capturing(stream); }
