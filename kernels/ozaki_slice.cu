/* ozaki_slice.cu: the device half of the int8 split-precision layer (src/ozaki.h says what and why).
 *
 *   mg_oz_slice     one block per row (grid-stride over rows): pass 1 reads the row for amax, ||v||^2 (fp64) and
 *                   finiteness (block reduction in a fixed order); thread 0 derives sigma, u and, with the guard on,
 *                   the row's route (flag, and an atomicAdd'ed slot in the list of flagged rows); pass 2 reads the row
 *                   again (L1 / L2) and writes the s8 hi and lo slices, zero-padded to ld. The element math is
 *                   src/ozaki.h's, shared with the CPU reference (src/ozaki.c): bit-identical slices and units.
 *                   16-byte loads and 4-byte slice stores when the row allows (src aligned, K % 4 == 0), else one
 *                   element at a time. The blocks also fill the fallback's partial row with -inf (grid-stride).
 *   mg_oz_fallback  the exact fallback: a grid-stride loop over 16 x 16 tiles of (listed row, column); each thread one
 *                   output with kernel 1's arithmetic (fp32 FMA chain in k order, + b), the tile's row or column
 *                   maxima merged into the fallback partial row by an order-independent atomic max.
 *   mg_oz_prepare_w / mg_oz_prepass  the host sequences kernels 9 and 10 share around them: W's slices, units and guard
 *                   maxima at prepare; the per-launch x pre-pass into the workspace (src/ozaki.h).
 * Memory-bound: mg_oz_slice reads x twice (the second time mostly from cache) and writes half its bytes as slices;
 * at the headline (1024 x 8192) that is 32 MiB + 16 MiB, ~12-20 us (predicted; measured: not yet on a GPU).
 */
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "mg_kernel.h"
#include "ozaki.h"

namespace {

constexpr int kThreads = 256;             /* multiple of 32: the block reduction assumes whole warps */
constexpr int kWarps = kThreads / 32;
constexpr int kMaxGrid = 65535;

struct RowStats {
    float amax;
    double n2;
    int bad;
};

__device__ __forceinline__ void accumulate(RowStats &s, float v) {
    if (!isfinite(v)) {
        s.bad = 1;
        return;
    }
    s.amax = fmaxf(s.amax, fabsf(v));
    s.n2 += (double)v * (double)v;
}

/* Block reduction of the three statistics; every thread gets the result. Fixed order: deterministic. */
__device__ RowStats block_reduce(RowStats s) {
    __shared__ float sh_amax[kWarps];
    __shared__ double sh_n2[kWarps];
    __shared__ int sh_bad[kWarps];
    for (int o = 16; o > 0; o >>= 1) {
        s.amax = fmaxf(s.amax, __shfl_xor_sync(0xffffffffu, s.amax, o));
        s.n2 += __shfl_xor_sync(0xffffffffu, s.n2, o);
        s.bad |= __shfl_xor_sync(0xffffffffu, s.bad, o);
    }
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    if (lane == 0) {
        sh_amax[warp] = s.amax;
        sh_n2[warp] = s.n2;
        sh_bad[warp] = s.bad;
    }
    __syncthreads();
    RowStats t = {sh_amax[0], sh_n2[0], sh_bad[0]};
    for (int w = 1; w < kWarps; w++) {
        t.amax = fmaxf(t.amax, sh_amax[w]);
        t.n2 += sh_n2[w];
        t.bad |= sh_bad[w];
    }
    __syncthreads();   /* the shared arrays are reused by the next row */
    return t;
}

__device__ __forceinline__ uint32_t pack4(int8_t a, int8_t b, int8_t c, int8_t d) {
    return (uint32_t)(uint8_t)a | ((uint32_t)(uint8_t)b << 8) | ((uint32_t)(uint8_t)c << 16) |
           ((uint32_t)(uint8_t)d << 24);
}

template <bool VEC>
__global__ void __launch_bounds__(kThreads) oz_slice_kernel(const mg_oz_slice_args a) {
    /* a kernel launched after it with PDL (kernel 11) may start now; it waits (griddepcontrol.wait) before reading */
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
    __shared__ float sh_sigma;
    for (int64_t r = blockIdx.x; r < a.rows; r += gridDim.x) {
        const float *v = a.src + r * a.cols;
        RowStats s = {0.f, 0.0, 0};
        if (VEC) {
            const float4 *v4 = reinterpret_cast<const float4 *>(v);
            for (int64_t g = threadIdx.x; g < a.cols / 4; g += kThreads) {
                const float4 q = v4[g];
                accumulate(s, q.x); accumulate(s, q.y); accumulate(s, q.z); accumulate(s, q.w);
            }
        } else {
            for (int64_t c = threadIdx.x; c < a.cols; c += kThreads) accumulate(s, v[c]);
        }
        s = block_reduce(s);
        if (threadIdx.x == 0) {
            const float sigma = s.bad ? 0.f : mg_oz_sigma(s.amax);
            const float u = mg_oz_unit(sigma);
            a.u[r] = u;
            if (a.amax) a.amax[r] = s.amax;
            if (a.n2) a.n2[r] = s.n2;
            if (a.nonfinite) a.nonfinite[r] = s.bad;
            if (a.flag) {
                const int route = mg_oz_route_g(a.guard, a.cols, s.bad, s.amax, s.n2, u, a.w);
                a.flag[r] = route;
                if (route != MG_OZ_PASS) a.list[atomicAdd(a.count, 1)] = (int)r;
            }
            sh_sigma = sigma;
        }
        __syncthreads();
        const float sigma = sh_sigma;
        const bool zero = s.bad != 0;   /* non-finite rows: zero slices (v * 0 would be NaN) */
        if (a.hi) {
            int8_t *hi = a.hi + r * a.ld, *lo = a.lo + r * a.ld;
            if (VEC) {
                const float4 *v4 = reinterpret_cast<const float4 *>(v);
                for (int64_t g = threadIdx.x; g < a.kpad / 4; g += kThreads) {
                    int8_t h[4] = {0, 0, 0, 0}, l[4] = {0, 0, 0, 0};
                    if (4 * g < a.cols && !zero) {   /* cols % 4 == 0: a group is all in or all out */
                        const float4 q = v4[g];
                        mg_oz_slice1(q.x, sigma, &h[0], &l[0]);
                        mg_oz_slice1(q.y, sigma, &h[1], &l[1]);
                        mg_oz_slice1(q.z, sigma, &h[2], &l[2]);
                        mg_oz_slice1(q.w, sigma, &h[3], &l[3]);
                    }
                    reinterpret_cast<uint32_t *>(hi)[g] = pack4(h[0], h[1], h[2], h[3]);
                    reinterpret_cast<uint32_t *>(lo)[g] = pack4(l[0], l[1], l[2], l[3]);
                }
            } else {
                for (int64_t c = threadIdx.x; c < a.kpad; c += kThreads) {
                    int8_t h = 0, l = 0;
                    if (c < a.cols && !zero) mg_oz_slice1(v[c], sigma, &h, &l);
                    hi[c] = h;
                    lo[c] = l;
                }
            }
        }
        __syncthreads();   /* sh_sigma is rewritten by the next row */
    }
    for (int64_t j = (int64_t)blockIdx.x * kThreads + threadIdx.x; a.fill && j < a.fill_len;
         j += (int64_t)gridDim.x * kThreads)
        a.fill[j] = -INFINITY;
}

/* Max into *addr over the total order of floats: a NaN is made the canonical +NaN (0x7fffffff, above +inf as a
 * signed int, and never replaced); non-negative values order as signed ints, negative ones reversed as unsigned.
 * Whatever order the atomics land in, the stored value is the maximum (deterministic); *addr starts at -inf. */
__device__ __forceinline__ void atomic_nanmax(float *addr, float v) {
    if (v != v) v = __int_as_float(0x7fffffff);
    if (__float_as_int(v) >= 0)
        atomicMax(reinterpret_cast<int *>(addr), __float_as_int(v));
    else
        atomicMin(reinterpret_cast<unsigned *>(addr), __float_as_uint(v));
}

constexpr int FB = 16;   /* the fallback's tile: FB listed rows x FB columns, one output per thread */

__global__ void __launch_bounds__(FB * FB) oz_fallback_kernel(const float *__restrict__ x, const float *__restrict__ w,
                                                            const float *__restrict__ b, int N, int K, int max_dim,
                                                            const int *__restrict__ list, const int *__restrict__ count,
                                                            float *prow) {
    /* Launched by PDL (kernel 11), it may start while the kernel before it still runs: every block waits for that
     * grid (and so, through it, for the whole stream before) before it reads or writes anything, and exits only after
     * (a no-op when launched plainly). It lets the finalize after it launch early too. */
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
    __shared__ float tile[FB][FB];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int cnt = *count;
    const int tn = (N + FB - 1) / FB;
    const int64_t items = (int64_t)((cnt + FB - 1) / FB) * tn;
    for (int64_t it = blockIdx.x; it < items; it += gridDim.x) {   /* uniform per block: the barriers are safe */
        const int r = (int)(it / tn) * FB + ty, j = (int)(it % tn) * FB + tx;
        /* Every thread runs the K loop (on a clamped row and column, as kernel 1 does) and masks afterwards. */
        const int i = list[r < cnt ? r : cnt - 1], jc = j < N ? j : N - 1;
        const float *xr = x + (size_t)i * K, *wr = w + (size_t)jc * K;
        float acc = 0.f;
        for (int q = 0; q < K; q++) acc = fmaf(xr[q], wr[q], acc);
        tile[ty][tx] = (r < cnt && j < N) ? acc + b[jc] : -INFINITY;   /* bias BEFORE the max, as kernel 1 */
        __syncthreads();
        if (max_dim == 1) {
            if (tx == 0 && r < cnt) {
                float m = tile[ty][0];
                for (int c = 1; c < FB; c++) m = mg_nanmaxf(m, tile[ty][c]);
                atomic_nanmax(prow + i, m);
            }
        } else if (ty == 0 && j < N) {
            float m = tile[0][tx];
            for (int c = 1; c < FB; c++) m = mg_nanmaxf(m, tile[c][tx]);
            atomic_nanmax(prow + j, m);
        }
        __syncthreads();
    }
}

}  // namespace

extern "C" mg_status mg_oz_slice(const mg_oz_slice_args *a, void *stream) {
    if (!a || a->rows < 0 || a->cols < 0 ||
        (a->hi && (a->kpad < a->cols || a->ld < a->kpad || a->kpad % 4 != 0 || a->ld % 4 != 0)))
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_oz_slice: bad arguments (rows %lld, cols %lld, kpad %lld, ld %lld)",
                            a ? (long long)a->rows : 0LL, a ? (long long)a->cols : 0LL, a ? (long long)a->kpad : 0LL,
                            a ? (long long)a->ld : 0LL);
    if (a->rows == 0 && (!a->fill || a->fill_len == 0)) return MG_OK;
    if (!a->u || (a->cols > 0 && !a->src) || (a->hi && !a->lo) || (a->flag && (!a->list || !a->count)))
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_oz_slice: NULL pointer");
    const bool vec = a->vec && a->cols % 4 == 0 && ((uintptr_t)a->src % 16) == 0 && ((uintptr_t)a->hi % 4) == 0 &&
                     ((uintptr_t)a->lo % 4) == 0;
    const int64_t g = a->rows > 0 ? a->rows : 1;
    const unsigned grid = (unsigned)(g < kMaxGrid ? g : kMaxGrid);
    cudaStream_t st = (cudaStream_t)stream;
    if (vec)
        oz_slice_kernel<true><<<grid, kThreads, 0, st>>>(*a);
    else
        oz_slice_kernel<false><<<grid, kThreads, 0, st>>>(*a);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

extern "C" mg_status mg_oz_fallback(const float *x, const float *w, const float *b, int m, int n, int k, int max_dim,
                                    const int *list, const int *count, float *prow, int grid, int pdl, void *stream) {
    if (m == 0 || n == 0) return MG_OK;   /* nothing can be listed (m = 0) or no column to compute */
    if (!b || !list || !count || !prow || (k > 0 && (!x || !w)) || grid < 1 || m < 0 || n < 0 || k < 0)
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_oz_fallback: bad arguments (m %d n %d k %d grid %d)", m, n, k,
                            grid);
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    mg_launch_config(&cfg, &attr, dim3((unsigned)grid), dim3(FB, FB), (cudaStream_t)stream, mg_pdl_usable(pdl, stream));
    MG_CUDA_TRY(cudaLaunchKernelEx(&cfg, oz_fallback_kernel, x, w, b, n, k, max_dim, list, count, prow));
    MG_LAUNCH_CHECK();
    return MG_OK;
}

extern "C" void mg_oz_wstate_free(mg_oz_wstate *s) {
    if (!s) return;
    if (s->w_sl) cudaFree(s->w_sl);   /* release cannot report; a failed free leaks at worst */
    if (s->u_w) cudaFree(s->u_w);
    s->w_sl = NULL;
    s->u_w = NULL;
}

/* W's per-row statistics (device, then downloaded) and, when the int8 products run, its slices. */
extern "C" mg_status mg_oz_prepare_w(const float *w, int n_, int k_, int vec, const char *who, mg_oz_wstate *s,
                                     int64_t *bad_rows, void *stream) {
    const int64_t n = n_, ldk = mg_oz_ld(k_), np = mg_oz_np(n_);
    cudaStream_t st = (cudaStream_t)stream;
    s->n = n_;
    s->k = k_;
    MG_CUDA_TRY(cudaMalloc((void **)&s->u_w, (size_t)np * sizeof(float)));
    MG_CUDA_TRY(cudaMemsetAsync(s->u_w, 0, (size_t)np * sizeof(float), st));
    if (mg_oz_int8_runs(k_)) {
        MG_CUDA_TRY(cudaMalloc((void **)&s->w_sl, (size_t)np * 2 * (size_t)ldk));
        MG_CUDA_TRY(cudaMemsetAsync(s->w_sl, 0, (size_t)np * 2 * (size_t)ldk, st));   /* padding rows stay zero */
    }
    /* per-row statistics: amax (float), n2 (double), nonfinite (int) */
    const size_t stat_bytes = (size_t)n * (sizeof(float) + sizeof(double) + sizeof(int));
    char *d_stats = NULL, *h_stats = (char *)malloc(stat_bytes);
    float *h_u = (float *)malloc((size_t)n * sizeof(float));
    if (!h_stats || !h_u) {
        free(h_stats);
        free(h_u);
        return mg_set_error(MG_ERR_OUT_OF_MEMORY, "%s: host allocation of W's statistics failed", who);
    }
    cudaError_t e = cudaMalloc((void **)&d_stats, stat_bytes);
    mg_status ret = MG_OK;
    if (e == cudaSuccess) {
        mg_oz_slice_args a = {};
        a.src = w;
        a.rows = n;
        a.cols = k_;
        a.hi = s->w_sl ? s->w_sl + ldk : NULL;   /* W rows are [lo | hi] */
        a.lo = s->w_sl;
        a.kpad = ldk;
        a.ld = 2 * ldk;
        a.u = s->u_w;
        a.n2 = (double *)d_stats;
        a.amax = (float *)(d_stats + (size_t)n * sizeof(double));
        a.nonfinite = (int *)(d_stats + (size_t)n * (sizeof(double) + sizeof(float)));
        a.vec = vec;
        ret = mg_oz_slice(&a, stream);
        if (ret == MG_OK) e = cudaMemcpyAsync(h_stats, d_stats, stat_bytes, cudaMemcpyDeviceToHost, st);
        if (ret == MG_OK && e == cudaSuccess)
            e = cudaMemcpyAsync(h_u, s->u_w, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost, st);
        if (ret == MG_OK && e == cudaSuccess) e = cudaStreamSynchronize(st);
        cudaFree(d_stats);
    }
    if (ret == MG_OK && e != cudaSuccess)
        ret = mg_set_error(MG_ERR_CUDA, "%s: W statistics: %s", who, cudaGetErrorString(e));
    if (ret == MG_OK)
        *bad_rows = mg_oz_wstats_reduce(h_u, (const float *)(h_stats + (size_t)n * sizeof(double)),
                                        (const double *)h_stats,
                                        (const int *)(h_stats + (size_t)n * (sizeof(double) + sizeof(float))), n,
                                        &s->ws);
    free(h_stats);
    free(h_u);
    return ret;
}

extern "C" void mg_oz_wstate_release(void *state) {
    mg_oz_wstate *s = static_cast<mg_oz_wstate *>(state);
    if (!s) return;
    mg_oz_wstate_free(s);
    free(s);
}

extern "C" mg_status mg_oz_prepare_state(const mg_problem *p, const void *w, const char *who, mg_prepared *out,
                                         void *stream) {
    out->state = NULL;
    out->runner = NULL;
    if (p->n == 0) return MG_OK;   /* no column: launch never reads W */
    if (!w && p->k > 0) return mg_set_error(MG_ERR_INVALID_ARG, "%s: W is NULL (N=%d K=%d)", who, p->n, p->k);
    mg_oz_wstate *s = static_cast<mg_oz_wstate *>(calloc(1, sizeof *s));
    if (!s) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "%s: host allocation of the weight state failed", who);
    int64_t bad = 0;
    const mg_status st = mg_oz_prepare_w((const float *)w, p->n, p->k, (p->align & MG_ALIGN_W16) && p->k % 4 == 0,
                                         who, s, &bad, stream);
    if (st != MG_OK || bad > 0) {
        mg_oz_wstate_release(s);
        if (st == MG_OK) out->runner = &mg_ops_naive;   /* NaN / inf in W: the exact SIMT kernel runs on W itself */
        return st;
    }
    out->state = s;
    return MG_OK;
}

extern "C" mg_status mg_oz_prepass(const mg_oz_xlayout *xl, int step, int guard, const float *x, int m, int k,
                                   int vec, mg_oz_wstats w, void *ws_, float *fb_row, int fill_len, void *stream) {
    char *ws = (char *)ws_;
    int *count = (int *)(ws + xl->count_off);
    int8_t *xs = step == MG_OZ_STEP_INT8 && guard == MG_OZ_GUARD_X3 ? (int8_t *)(ws + xl->xs_off) : NULL;
    MG_CUDA_TRY(cudaMemsetAsync(count, 0, sizeof(int), (cudaStream_t)stream));
    mg_oz_slice_args a = {};
    a.src = x;
    a.rows = m;
    a.cols = k;
    a.hi = xs;                                       /* x rows are [hi | lo] */
    a.lo = xs ? xs + xl->ldk : NULL;
    a.kpad = xl->ldk;
    a.ld = 2 * xl->ldk;
    a.u = (float *)(ws + xl->ux_off);
    a.w = w;
    a.flag = (int *)(ws + xl->flag_off);
    a.list = (int *)(ws + xl->list_off);
    a.count = count;
    a.fill = fb_row;
    a.fill_len = fill_len;
    a.vec = vec;
    a.guard = guard;
    return mg_oz_slice(&a, stream);
}
