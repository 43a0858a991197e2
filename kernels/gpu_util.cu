/* gpu_util.cu: device-side helpers shared by the CLI, the tests and the benchmark (src/gpu_util.h).
 *
 *   mg_fill_uniform / mg_fill_seedlike  the project's counter-based RNG (src/rng.h), bit-identical to the CPU
 *   mg_fill_s8                          bytes in [-127, 127] from the same hash (the benchmark's int8 ceiling)
 *   mg_poison                           a NaN pattern, written before every checked run
 *   mg_l2_flush_read                    the benchmark's L2 flush: a read of a 2 x L2 buffer (timing.c)
 *   mg_gpu_reference                    the fp64 reference: widen, cublasDgemm, fp64 bias + max + finalize
 *   mg_bias_max                         bias + NaN-propagating max over a materialised y (the cuBLAS baselines)
 *
 * Layouts as everywhere (maxgemm.h): x M x K, W N x K, y M x N, all row-major.
 */
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "gpu_util.h"
#include "mg_kernel.h"
#include "rng.h"

namespace {

constexpr int UT_THREADS = 256;     /* multiple of 32: the block reductions assume whole warps */
constexpr int UT_MAX_GRID = 8192;   /* grid-stride cap of the elementwise kernels */

int grid_for(size_t count) {
    const size_t g = (count + UT_THREADS - 1) / UT_THREADS;
    return g < (size_t)UT_MAX_GRID ? (int)(g ? g : 1) : UT_MAX_GRID;
}

__device__ __forceinline__ double nanmax_f64(double a, double b) { return (a != a || a > b) ? a : b; }

/* ---- fill / poison ------------------------------------------------------------------------------------------ */

/* mg_rng_uniform(seed, s, i, lo, hi) = lo + (hi - lo) * u, evaluated with explicit round-to-nearest operations:
 * nvcc would otherwise contract it into one FMA and the GPU value would differ from the CPU's in the last bit. */
__device__ __forceinline__ float rng_uniform_exact(uint64_t seed, uint32_t s, uint64_t i, float lo, float hi) {
    return __fadd_rn(lo, __fmul_rn(__fsub_rn(hi, lo), mg_rng_u01(seed, s, i)));
}

__global__ void fill_f32_kernel(float *__restrict__ dst, size_t count, uint64_t seed, uint32_t s, float lo,
                                float hi) {
    for (size_t i = (size_t)blockIdx.x * UT_THREADS + threadIdx.x; i < count; i += (size_t)gridDim.x * UT_THREADS)
        dst[i] = rng_uniform_exact(seed, s, i, lo, hi);
}

/* bf16 = round-to-nearest-even of the fp32 draw (what the CPU's mg_f32_to_bf16 does). */
__global__ void fill_bf16_kernel(__nv_bfloat16 *__restrict__ dst, size_t count, uint64_t seed, uint32_t s, float lo,
                                 float hi) {
    for (size_t i = (size_t)blockIdx.x * UT_THREADS + threadIdx.x; i < count; i += (size_t)gridDim.x * UT_THREADS)
        dst[i] = __float2bfloat16_rn(rng_uniform_exact(seed, s, i, lo, hi));
}

__global__ void fill_s8_kernel(int8_t *__restrict__ dst, size_t count, uint64_t seed, uint32_t s) {
    for (size_t i = (size_t)blockIdx.x * UT_THREADS + threadIdx.x; i < count; i += (size_t)gridDim.x * UT_THREADS)
        dst[i] = mg_rng_s8(seed, s, i);
}

template <typename T>
__global__ void poison_kernel(T *__restrict__ dst, size_t count, T pattern) {
    for (size_t i = (size_t)blockIdx.x * UT_THREADS + threadIdx.x; i < count; i += (size_t)gridDim.x * UT_THREADS)
        dst[i] = pattern;
}

/* ---- the fp64 reference ---------------------------------------------------------------------------------------- */

template <typename T>
__global__ void widen_kernel(const T *__restrict__ src, double *__restrict__ dst, size_t count) {
    for (size_t i = (size_t)blockIdx.x * UT_THREADS + threadIdx.x; i < count; i += (size_t)gridDim.x * UT_THREADS)
        dst[i] = (double)mg_to_f32(src[i]);
}

/* Block-wide NaN-propagating max (fp64 or fp32); valid in thread 0. */
template <typename V>
__device__ __forceinline__ V nanmax_any(V a, V b) { return (a != a || a > b) ? a : b; }

template <typename V>
__device__ V block_nanmax(V v) {
    __shared__ V warp_max[UT_THREADS / 32];
    for (int off = 16; off > 0; off >>= 1) v = nanmax_any(v, __shfl_xor_sync(0xffffffffu, v, off));
    if (threadIdx.x % 32 == 0) warp_max[threadIdx.x / 32] = v;
    __syncthreads();
    if (threadIdx.x == 0)
        for (int w = 1; w < UT_THREADS / 32; w++) v = nanmax_any(v, warp_max[w]);
    return v;
}

/* max_dim 1 in fp64: one block per row; ref[i] = gelu(m - m), m = nanmax_j (y[i,j] + b[j]). */
__global__ void ref_rows_kernel(const double *__restrict__ y, const double *__restrict__ b, int n,
                                double *__restrict__ ref) {
    const double *row = y + (size_t)blockIdx.x * n;
    double m = -INFINITY;
    for (int j = threadIdx.x; j < n; j += UT_THREADS) m = nanmax_f64(m, row[j] + b[j]);
    m = block_nanmax(m);
    if (threadIdx.x == 0) ref[blockIdx.x] = mg_gelu_f64(m - m);
}

/* max_dim 0 in fp64, step 1: c[j] = nanmax_i (y[i,j] + b[j]), one thread per column (coalesced across j). */
__global__ void ref_cols_kernel(const double *__restrict__ y, const double *__restrict__ b, int m, int n,
                                double *__restrict__ c) {
    const int j = blockIdx.x * UT_THREADS + threadIdx.x;
    if (j >= n) return;
    const double bj = b[j];
    double v = -INFINITY;
    for (int i = 0; i < m; i++) v = nanmax_f64(v, y[(size_t)i * n + j] + bj);
    c[j] = v;
}

/* Step 2: one block, fixed order: mu = sum_j c[j] / n. Step 3 (same kernel, same block): ref = gelu(c - mu).
 * One block is plenty for a test reference; N is at most a few million. */
__global__ void ref_mean_apply_kernel(double *__restrict__ c, int n) {
    __shared__ double warp_sums[UT_THREADS / 32];
    __shared__ double mu;
    double s = 0.0;
    for (int j = threadIdx.x; j < n; j += UT_THREADS) s += c[j];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        double t = 0.0;
        for (int w = 0; w < UT_THREADS / 32; w++) t += warp_sums[w];
        mu = t / (double)n;
    }
    __syncthreads();
    for (int j = threadIdx.x; j < n; j += UT_THREADS) c[j] = mg_gelu_f64(c[j] - mu);
}

/* ---- bias + max over a materialised y (the cuBLAS baselines' epilogue) ------------------------------------------ */

/* VEC elements of T in one 16-byte load (VEC = 1: a plain scalar load). */
template <typename T, int VEC>
struct Vec {
    T v[VEC];
};
template <typename T, int VEC>
__device__ __forceinline__ Vec<T, VEC> load_vec(const T *p) {
    Vec<T, VEC> r;
    if constexpr (VEC * sizeof(T) == 16) {
        const uint4 u = __ldg(reinterpret_cast<const uint4 *>(p));
        memcpy(&r, &u, 16);
    } else {
#pragma unroll
        for (int e = 0; e < VEC; e++) r.v[e] = p[e];
    }
    return r;
}

/* max_dim 1: one block per row, threads stride over the row (coalesced), 16-byte loads when aligned. */
template <typename T, int VEC>
__global__ void __launch_bounds__(UT_THREADS) bias_rowmax_kernel(const T *__restrict__ y, const T *__restrict__ b,
                                                               int n, float *__restrict__ partial) {
    const T *row = y + (size_t)blockIdx.x * n;
    float m = -INFINITY;
    for (int j = threadIdx.x * VEC; j < n; j += UT_THREADS * VEC) {
        const Vec<T, VEC> yv = load_vec<T, VEC>(row + j), bv = load_vec<T, VEC>(b + j);
#pragma unroll
        for (int e = 0; e < VEC; e++) m = mg_nanmaxf(m, mg_to_f32(yv.v[e]) + mg_to_f32(bv.v[e]));  /* bias BEFORE max */
    }
    m = block_nanmax(m);
    if (threadIdx.x == 0) partial[blockIdx.x] = m;
}

/* max_dim 0: a block covers 32 columns x COL_ROWS row groups; a warp reads 32 consecutive columns of one row
 * (coalesced), each thread walks its rows, then the row groups are combined in shared memory. */
constexpr int COL_ROWS = UT_THREADS / 32;
template <typename T>
__global__ void __launch_bounds__(UT_THREADS) bias_colmax_kernel(const T *__restrict__ y, const T *__restrict__ b,
                                                               int m, int n, float *__restrict__ partial) {
    __shared__ float part[COL_ROWS][32];
    const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
    const int j = blockIdx.x * 32 + tx;
    float c = -INFINITY;
    if (j < n) {
        const float bj = mg_to_f32(b[j]);
        for (int i = ty; i < m; i += COL_ROWS) c = mg_nanmaxf(c, mg_to_f32(y[(size_t)i * n + j]) + bj);
    }
    part[ty][tx] = c;
    __syncthreads();
    if (ty == 0 && j < n) {
        for (int r = 1; r < COL_ROWS; r++) c = mg_nanmaxf(c, part[r][tx]);
        partial[j] = c;
    }
}

template <typename T>
mg_status bias_max_typed(const T *y, const T *b, int m, int n, int max_dim, float *partial, cudaStream_t st) {
    if (max_dim == 1) {
        /* 16-byte loads need 16-byte aligned rows: y and b aligned and n a multiple of the vector width. */
        constexpr int VEC = 16 / sizeof(T);
        const bool vec_ok = n % VEC == 0 && ((uintptr_t)y % 16) == 0 && ((uintptr_t)b % 16) == 0;
        if (vec_ok)
            bias_rowmax_kernel<T, VEC><<<m, UT_THREADS, 0, st>>>(y, b, n, partial);
        else
            bias_rowmax_kernel<T, 1><<<m, UT_THREADS, 0, st>>>(y, b, n, partial);
    } else {
        bias_colmax_kernel<T><<<mg_cdiv(n, 32), UT_THREADS, 0, st>>>(y, b, m, n, partial);
    }
    MG_LAUNCH_CHECK();
    return MG_OK;
}

template <typename T>
mg_status widen(const void *src, double *dst, size_t count, cudaStream_t st) {
    if (count == 0) return MG_OK;
    widen_kernel<T><<<grid_for(count), UT_THREADS, 0, st>>>((const T *)src, dst, count);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

const char *cublas_msg(cublasStatus_t s) { return cublasGetStatusString(s); }

}  // namespace

/* ---- public entry points ----------------------------------------------------------------------------------------- */

extern "C" mg_status mg_fill_uniform(void *dst, size_t count, mg_precision prec, uint64_t seed, uint32_t rng_stream,
                                     float lo, float hi, void *stream) {
    if (count == 0) return MG_OK;
    if (!dst) return mg_set_error(MG_ERR_INVALID_ARG, "mg_fill_uniform: NULL destination");
    cudaStream_t st = (cudaStream_t)stream;
    if (prec == MG_PREC_BF16)
        fill_bf16_kernel<<<grid_for(count), UT_THREADS, 0, st>>>((__nv_bfloat16 *)dst, count, seed, rng_stream, lo, hi);
    else if (prec == MG_PREC_FP32 || prec == MG_PREC_TF32)
        fill_f32_kernel<<<grid_for(count), UT_THREADS, 0, st>>>((float *)dst, count, seed, rng_stream, lo, hi);
    else
        return mg_set_error(MG_ERR_PRECISION, "mg_fill_uniform: unknown precision %d", (int)prec);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

extern "C" mg_status mg_fill_s8(void *dst, size_t count, uint64_t seed, uint32_t rng_stream, void *stream) {
    if (count == 0) return MG_OK;
    if (!dst) return mg_set_error(MG_ERR_INVALID_ARG, "mg_fill_s8: NULL destination");
    fill_s8_kernel<<<grid_for(count), UT_THREADS, 0, (cudaStream_t)stream>>>((int8_t *)dst, count, seed, rng_stream);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

extern "C" mg_status mg_fill_seedlike(void *x, void *W, void *b, int64_t m, int64_t n, int64_t k, mg_precision prec,
                                      uint64_t seed, void *stream) {
    if (m < 0 || n < 0 || k < 0)
        return mg_set_error(MG_ERR_SHAPE, "mg_fill_seedlike: negative size (m=%lld n=%lld k=%lld)", (long long)m,
                            (long long)n, (long long)k);
    /* nn.Linear's init bound 1/sqrt(in_features), computed in double and rounded once (the CPU must match). */
    const float bound = k > 0 ? (float)(1.0 / sqrt((double)k)) : 1.0f;
    mg_status s;
    if ((s = mg_fill_uniform(x, (size_t)m * (size_t)k, prec, seed, MG_RNG_X, 0.0f, 1.0f, stream)) != MG_OK) return s;
    if ((s = mg_fill_uniform(W, (size_t)n * (size_t)k, prec, seed, MG_RNG_W, -bound, bound, stream)) != MG_OK) return s;
    return mg_fill_uniform(b, (size_t)n, prec, seed, MG_RNG_B, -bound, bound, stream);
}

extern "C" mg_status mg_poison(void *dst, size_t count, mg_precision prec, void *stream) {
    if (count == 0) return MG_OK;
    if (!dst) return mg_set_error(MG_ERR_INVALID_ARG, "mg_poison: NULL destination");
    cudaStream_t st = (cudaStream_t)stream;
    if (prec == MG_PREC_BF16)
        poison_kernel<uint16_t><<<grid_for(count), UT_THREADS, 0, st>>>((uint16_t *)dst, count, (uint16_t)0x7fbbu);
    else if (prec == MG_PREC_FP32 || prec == MG_PREC_TF32)
        poison_kernel<uint32_t><<<grid_for(count), UT_THREADS, 0, st>>>((uint32_t *)dst, count, 0x7fbadbadu);
    else
        return mg_set_error(MG_ERR_PRECISION, "mg_poison: unknown precision %d", (int)prec);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

/* Reads `bytes` (a multiple of 16, 16-byte aligned) with plain loads, which allocate in L2: the cache ends full of
 * clean lines of this buffer, so whatever the timed work reads next comes from DRAM, and its own misses evict
 * clean lines for free. (A memset flush leaves the L2 full of DIRTY lines: the next sample's reads then compete
 * with their write-back, which slows a read-bound kernel such as the short-circuit's classify by several us.)
 * The XOR of everything read goes to *sink only on an impossible value, so the loads cannot be optimised away. */
namespace {
__global__ void __launch_bounds__(UT_THREADS) flush_read_kernel(const uint4 *__restrict__ buf, size_t n16,
                                                                unsigned *sink) {
    unsigned acc = 0;
    for (size_t i = (size_t)blockIdx.x * UT_THREADS + threadIdx.x; i < n16; i += (size_t)gridDim.x * UT_THREADS) {
        const uint4 v = buf[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9e3779b9u && threadIdx.x == UT_THREADS) *sink = acc;   /* threadIdx.x < UT_THREADS: never */
}
}  // namespace

extern "C" mg_status mg_l2_flush_read(const void *buf, size_t bytes, unsigned *sink, int num_sms, void *stream) {
    if (!buf || !sink || bytes % 16 != 0 || ((uintptr_t)buf % 16) != 0)
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_l2_flush_read: NULL buffer or sink, or not 16-byte sized/aligned");
    if (bytes == 0) return MG_OK;
    const int blocks = (num_sms > 0 ? num_sms : 1) * 8;   /* 8 resident blocks of 256 per SM, grid-stride */
    flush_read_kernel<<<blocks, UT_THREADS, 0, (cudaStream_t)stream>>>((const uint4 *)buf, bytes / 16, sink);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

namespace {
__device__ __forceinline__ uint64_t globaltimer_ns() {
    uint64_t t;
    asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
    return t;
}
__global__ void hold_kernel(const volatile unsigned *release, unsigned *timed_out, uint64_t timeout_ns) {
    const uint64_t t0 = globaltimer_ns();
    while (*release == 0u) {
        if (globaltimer_ns() - t0 > timeout_ns) {
            *timed_out = 1u;
            return;
        }
        __nanosleep(500);
    }
}
}  // namespace

extern "C" mg_status mg_gpu_hold(const volatile unsigned *release, unsigned *timed_out, uint64_t timeout_ns,
                                 void *stream) {
    if (!release || !timed_out) return mg_set_error(MG_ERR_INVALID_ARG, "mg_gpu_hold: NULL release or timed_out word");
    hold_kernel<<<1, 1, 0, (cudaStream_t)stream>>>(release, timed_out, timeout_ns);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

/* The reference's device buffers (stream-ordered allocations, freed on the stream). */
namespace {
struct RefBufs {
    double *x = nullptr, *w = nullptr, *b = nullptr, *y = nullptr;
    cublasHandle_t h = nullptr;
};

mg_status ref_body(RefBufs &r, const void *x, const void *W, const void *b, int m, int n, int k, int max_dim,
                   mg_precision prec, double *ref_out, cudaStream_t st) {
    const size_t xs = (size_t)m * k, ws = (size_t)n * k, ys = (size_t)m * n;
    /* +1 element: a zero-byte request may legally return NULL, which cuBLAS and the kernels do not want. */
    if (cudaMallocAsync((void **)&r.x, (xs + 1) * sizeof(double), st) != cudaSuccess ||
        cudaMallocAsync((void **)&r.w, (ws + 1) * sizeof(double), st) != cudaSuccess ||
        cudaMallocAsync((void **)&r.b, ((size_t)n + 1) * sizeof(double), st) != cudaSuccess ||
        cudaMallocAsync((void **)&r.y, (ys + 1) * sizeof(double), st) != cudaSuccess) {
        cudaGetLastError();   /* reset the runtime's last-error state; what was allocated is freed by the caller */
        return mg_set_error(MG_ERR_OUT_OF_MEMORY, "mg_gpu_reference: cannot allocate %.1f MiB of fp64 scratch",
                            (double)(xs + ws + ys + n) * 8.0 / 1048576.0);
    }
    mg_status s;
    if (prec == MG_PREC_BF16) {
        if ((s = widen<__nv_bfloat16>(x, r.x, xs, st)) != MG_OK) return s;
        if ((s = widen<__nv_bfloat16>(W, r.w, ws, st)) != MG_OK) return s;
        if ((s = widen<__nv_bfloat16>(b, r.b, (size_t)n, st)) != MG_OK) return s;
    } else {
        if ((s = widen<float>(x, r.x, xs, st)) != MG_OK) return s;
        if ((s = widen<float>(W, r.w, ws, st)) != MG_OK) return s;
        if ((s = widen<float>(b, r.b, (size_t)n, st)) != MG_OK) return s;
    }

    if (k == 0) {
        /* y = 0 (then + b below); cuBLAS would reject lda = ldb = 0. All-zero bits are +0.0. */
        MG_CUDA_TRY(cudaMemsetAsync(r.y, 0, ys * sizeof(double), st));
    } else {
        cublasStatus_t cs = cublasCreate(&r.h);
        if (cs != CUBLAS_STATUS_SUCCESS)
            return mg_set_error(MG_ERR_CUBLAS, "mg_gpu_reference: cublasCreate: %s", cublas_msg(cs));
        if ((cs = cublasSetStream(r.h, st)) != CUBLAS_STATUS_SUCCESS)
            return mg_set_error(MG_ERR_CUBLAS, "mg_gpu_reference: cublasSetStream: %s", cublas_msg(cs));
        /* Row-major y (M x N) is column-major y^T (N x M, ld N) = W^T-as-stored (op T of the K x N column-major W)
         * times x^T-as-stored (the K x M column-major x). */
        const double one = 1.0, zero = 0.0;
        cs = cublasDgemm(r.h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, r.w, k, r.x, k, &zero, r.y, n);
        if (cs != CUBLAS_STATUS_SUCCESS)
            return mg_set_error(MG_ERR_CUBLAS, "mg_gpu_reference: cublasDgemm(%d, %d, %d): %s", n, m, k,
                                cublas_msg(cs));
    }

    if (max_dim == 1) {
        ref_rows_kernel<<<m, UT_THREADS, 0, st>>>(r.y, r.b, n, ref_out);
        MG_LAUNCH_CHECK();
    } else {
        ref_cols_kernel<<<mg_cdiv(n, UT_THREADS), UT_THREADS, 0, st>>>(r.y, r.b, m, n, ref_out);
        MG_LAUNCH_CHECK();
        ref_mean_apply_kernel<<<1, UT_THREADS, 0, st>>>(ref_out, n);
        MG_LAUNCH_CHECK();
    }
    return MG_OK;
}
}  // namespace

extern "C" mg_status mg_gpu_reference(const void *x, const void *W, const void *b, int64_t m, int64_t n, int64_t k,
                                      int max_dim, mg_precision prec, double *ref_out, void *stream) {
    if (max_dim != 0 && max_dim != 1)
        return mg_set_error(MG_ERR_MAX_DIM, "mg_gpu_reference: max_dim must be normalised to 0 or 1 (got %d)", max_dim);
    if (prec < 0 || prec >= MG_PREC_COUNT)
        return mg_set_error(MG_ERR_PRECISION, "mg_gpu_reference: unknown precision %d", (int)prec);
    if (m < 0 || n < 0 || k < 0 || m > INT_MAX || n > INT_MAX || k > INT_MAX)
        return mg_set_error(MG_ERR_SHAPE, "mg_gpu_reference: sizes out of range (m=%lld n=%lld k=%lld)", (long long)m,
                            (long long)n, (long long)k);
    if ((max_dim == 0 && m == 0) || (max_dim == 1 && n == 0))
        return mg_set_error(MG_ERR_SHAPE, "mg_gpu_reference: max over an empty dimension (m=%lld n=%lld, max_dim %d)",
                            (long long)m, (long long)n, max_dim);
    const int64_t len = max_dim == 1 ? m : n;
    if (len == 0) return MG_OK;
    if (!ref_out || (k > 0 && (!x || !W)) || !b)
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_gpu_reference: NULL pointer");

    cudaStream_t st = (cudaStream_t)stream;
    RefBufs r;
    mg_status s = ref_body(r, x, W, b, (int)m, (int)n, (int)k, max_dim, prec, ref_out, st);
    /* Cleanup on every path. cublasDestroy synchronises the device: this reference is a test tool, not timed. */
    if (r.h) cublasDestroy(r.h);
    double *bufs[4] = {r.x, r.w, r.b, r.y};
    for (double *p : bufs)
        if (p && cudaFreeAsync(p, st) != cudaSuccess && s == MG_OK)
            s = mg_set_error(MG_ERR_CUDA, "mg_gpu_reference: cudaFreeAsync failed");
    return s;
}

extern "C" mg_status mg_bias_max(const void *y, const void *b, int m, int n, int max_dim, mg_precision y_prec,
                                 float *partial, void *stream) {
    if (m < 0 || n < 0) return mg_set_error(MG_ERR_SHAPE, "mg_bias_max: negative size (m=%d n=%d)", m, n);
    if (max_dim != 0 && max_dim != 1)
        return mg_set_error(MG_ERR_MAX_DIM, "mg_bias_max: max_dim must be normalised to 0 or 1 (got %d)", max_dim);
    if ((max_dim == 1 && n == 0) || (max_dim == 0 && m == 0))
        return mg_set_error(MG_ERR_SHAPE, "mg_bias_max: max over an empty dimension (m=%d n=%d, max_dim %d)", m, n,
                            max_dim);
    if (m == 0 || n == 0) return MG_OK;   /* the partial row is empty */
    if (!y || !b || !partial) return mg_set_error(MG_ERR_INVALID_ARG, "mg_bias_max: NULL pointer");
    cudaStream_t st = (cudaStream_t)stream;
    /* b has y's element type: bf16 for the bf16 baseline, float for the fp32-output ones. */
    if (y_prec == MG_PREC_BF16)
        return bias_max_typed((const __nv_bfloat16 *)y, (const __nv_bfloat16 *)b, m, n, max_dim, partial, st);
    if (y_prec == MG_PREC_FP32 || y_prec == MG_PREC_TF32)
        return bias_max_typed((const float *)y, (const float *)b, m, n, max_dim, partial, st);
    return mg_set_error(MG_ERR_PRECISION, "mg_bias_max: unknown precision %d", (int)y_prec);
}
