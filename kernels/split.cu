/* split.cu: fp32 -> bf16 hi/lo splitting for the split-precision kernels (src/split.h).
 *
 *   hi = bf16_rn(v),  lo = bf16_rn(v - hi)
 * v - hi is exact in fp32 (hi is v rounded to 8 significant bits, so the difference has at most 16 significant
 * bits and is representable), hence hi + lo represents v to 2^-17 relative (hi: 8 bits, lo: 8 more bits after
 * a gap of at least one bit); see notes/05_06_split.md.
 *
 * Non-finite and overflow rules (split.h):
 *   v = NaN            -> hi = NaN, lo = NaN           (every product with it stays NaN)
 *   v = +-inf          -> hi = +-inf, lo = 0           (v - hi would be NaN; 0 keeps x_lo*W_hi finite)
 *   v finite, |v| above the largest finite bf16 (3.3895e38 < |v| <= FLT_MAX: bf16_rn would give inf)
 *                      -> hi = +-0x7f7f (the largest finite bf16), lo = bf16_rn(v - hi)
 *     so hi + lo stays finite, as v is: a finite input must not turn into an inf product.
 *
 * Layout: src is rows x cols, dense (row stride cols). hi and lo are rows x ld (ld >= cols); columns [cols, ld)
 * are written as zero, so TMA can read 16-byte aligned rows for any K and the padding adds nothing to a dot product.
 *
 * Performance: a memory-bound streaming kernel (4 bytes read, 4 bytes written per element). The fast path moves
 * 8 floats per thread per iteration (two 16-byte loads, two 16-byte stores) when cols % 8 == 0, ld % 8 == 0 and
 * the pointers are 16-byte aligned: the headline W (8192 x 8192, 256 MiB read + 256 MiB written) takes about
 * 0.12-0.2 ms at the ~4.2 TB/s copy rate. Other shapes take a scalar path (odd K; only small problems use it).
 * Rows map to blockIdx.y (grid-stride over rows), column groups to x: no 64-bit division per element.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#include "mg_kernel.h"
#include "split.h"

namespace {

constexpr int kThreads = 256;

/* Split one value into (hi, lo) bf16 bit patterns, with the rules above. */
__host__ __device__ __forceinline__ void split1(float v, uint16_t &hi, uint16_t &lo) {
    const __nv_bfloat16 h = __float2bfloat16_rn(v);
    float hf = __bfloat162float(h);
    uint16_t hb = __bfloat16_as_ushort(h);
    const bool v_inf = fabsf(v) == INFINITY;
    if (fabsf(hf) == INFINITY && !v_inf) {                  /* finite v that overflows bf16: saturate hi */
        hb = (v < 0.f) ? (uint16_t)0xff7f : (uint16_t)0x7f7f;
        hf = (v < 0.f) ? -3.38953139e38f : 3.38953139e38f;
    }
    float r;
    if (v != v) r = v;                             /* NaN: lo NaN too */
    else if (v_inf) r = 0.f;                       /* inf: lo 0 */
    else r = v - hf;                               /* exact */
    hi = hb;
    lo = __bfloat16_as_ushort(__float2bfloat16_rn(r));
}

__device__ __forceinline__ uint32_t pack2(uint16_t a, uint16_t b) { return (uint32_t)a | ((uint32_t)b << 16); }

/* Fast path: 8 elements per thread-iteration. cols8 = cols / 8, ld8 = ld / 8 (column groups of 8). */
__global__ void __launch_bounds__(kThreads) split_vec8(const float *__restrict__ src, int64_t rows, int64_t cols8,
                                                       int64_t ld8, uint4 *__restrict__ hi, uint4 *__restrict__ lo) {
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        const float4 *s = reinterpret_cast<const float4 *>(src) + r * cols8 * 2;
        uint4 *h = hi + r * ld8;
        uint4 *l = lo + r * ld8;
        for (int64_t g = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; g < ld8; g += (int64_t)gridDim.x * blockDim.x) {
            uint4 hv = make_uint4(0, 0, 0, 0), lv = make_uint4(0, 0, 0, 0);
            if (g < cols8) {
                const float4 a = __ldcs(s + 2 * g);      /* streamed once: evict-first */
                const float4 b = __ldcs(s + 2 * g + 1);
                uint16_t h0, h1, h2, h3, h4, h5, h6, h7, l0, l1, l2, l3, l4, l5, l6, l7;
                split1(a.x, h0, l0); split1(a.y, h1, l1); split1(a.z, h2, l2); split1(a.w, h3, l3);
                split1(b.x, h4, l4); split1(b.y, h5, l5); split1(b.z, h6, l6); split1(b.w, h7, l7);
                hv = make_uint4(pack2(h0, h1), pack2(h2, h3), pack2(h4, h5), pack2(h6, h7));
                lv = make_uint4(pack2(l0, l1), pack2(l2, l3), pack2(l4, l5), pack2(l6, l7));
            }
            h[g] = hv;
            l[g] = lv;
        }
    }
}

/* General path: one element per thread-iteration, any cols, ld and alignment. */
__global__ void __launch_bounds__(kThreads) split_scalar(const float *__restrict__ src, int64_t rows, int64_t cols,
                                                         int64_t ld, uint16_t *__restrict__ hi, uint16_t *__restrict__ lo) {
    for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
        for (int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; c < ld; c += (int64_t)gridDim.x * blockDim.x) {
            uint16_t h = 0, l = 0;
            if (c < cols) split1(src[r * cols + c], h, l);
            hi[r * ld + c] = h;
            lo[r * ld + c] = l;
        }
    }
}

}  // namespace

extern "C" mg_status mg_split_bf16(const float *src, int64_t rows, int64_t cols, int64_t ld, uint16_t *hi,
                                   uint16_t *lo, void *stream) {
    if (rows < 0 || cols < 0 || ld < cols)
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_split_bf16: bad shape rows=%lld cols=%lld ld=%lld",
                            (long long)rows, (long long)cols, (long long)ld);
    if (rows == 0 || ld == 0) return MG_OK;
    if (!hi || !lo || (cols > 0 && !src))
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_split_bf16: NULL pointer");
    cudaStream_t s = (cudaStream_t)stream;
    const unsigned gy = (unsigned)(rows < 65535 ? rows : 65535);
    const bool vec = cols % 8 == 0 && ld % 8 == 0 && ((uintptr_t)src % 16) == 0 && ((uintptr_t)hi % 16) == 0 &&
                     ((uintptr_t)lo % 16) == 0;
    if (vec) {
        const int64_t ld8 = ld / 8;
        const unsigned gx = (unsigned)((ld8 + kThreads - 1) / kThreads < 1024 ? (ld8 + kThreads - 1) / kThreads : 1024);
        split_vec8<<<dim3(gx, gy), kThreads, 0, s>>>(src, rows, cols / 8, ld8, reinterpret_cast<uint4 *>(hi),
                                                     reinterpret_cast<uint4 *>(lo));
    } else {
        const unsigned gx = (unsigned)((ld + kThreads - 1) / kThreads < 1024 ? (ld + kThreads - 1) / kThreads : 1024);
        split_scalar<<<dim3(gx, gy), kThreads, 0, s>>>(src, rows, cols, ld, hi, lo);
    }
    MG_LAUNCH_CHECK();
    return MG_OK;
}

/* ---- +-inf detection for the split kernels' exact fallback ------------------------------------------- */
namespace {
__global__ void __launch_bounds__(256) has_inf_kernel(const float *__restrict__ src, size_t count, int *flag) {
    int found = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        found |= isinf(src[i]) ? 1 : 0;
    if (__syncthreads_or(found) && threadIdx.x == 0) *flag = 1;
}
}  // namespace

extern "C" mg_status mg_has_inf_f32(const float *src, size_t count, int *has_inf, void *stream) {
    *has_inf = 0;
    if (count == 0) return MG_OK;
    cudaStream_t s = (cudaStream_t)stream;
    int *d_flag = NULL;
    MG_CUDA_TRY(cudaMallocAsync((void **)&d_flag, sizeof(int), s));
    cudaError_t e = cudaMemsetAsync(d_flag, 0, sizeof(int), s);
    if (e == cudaSuccess) {
        has_inf_kernel<<<1024, 256, 0, s>>>(src, count, d_flag);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess) e = cudaMemcpyAsync(has_inf, d_flag, sizeof(int), cudaMemcpyDeviceToHost, s);
    cudaError_t f = cudaFreeAsync(d_flag, s);
    if (e == cudaSuccess) e = f;
    if (e == cudaSuccess) e = cudaStreamSynchronize(s);
    if (e != cudaSuccess)
        return mg_set_error(MG_ERR_CUDA, "mg_has_inf_f32: %s", cudaGetErrorString(e));
    return MG_OK;
}
