/* test_common.h: helpers shared by the Criterion suites.
 *
 * Suite naming: CPU suites are plain names (reference, check, cli_args, registry, tile_config, ...);
 * GPU suites start with "gpu_" and begin each test with
 *     if (!mg_test_has_gpu()) cr_skip_test("no CUDA device");
 * so `build/test_maxgemm` passes on a machine without a GPU, and --filter with a pattern on the suite name
 * selects one side.
 */
#ifndef MG_TEST_COMMON_H
#define MG_TEST_COMMON_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "maxgemm.h"
#include "rng.h"

/* 1 when at least one CUDA device is usable; 0 on any error (no driver, no device, ...). Cached per process. */
static inline int mg_test_has_gpu(void) {
    static int cached = -1;
    if (cached < 0) {
        int n = 0;
        cached = (cudaGetDeviceCount(&n) == cudaSuccess && n > 0) ? 1 : 0;
    }
    return cached;
}

/* Compute capability * 10 of device 0 (e.g. 90), or 0 without a GPU. */
static inline int mg_test_sm(void) {
    if (!mg_test_has_gpu()) return 0;
    int major = 0, minor = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0) != cudaSuccess) return 0;
    if (cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0) != cudaSuccess) return 0;
    return major * 10 + minor;
}

/* |a - b| <= atol + rtol * |b|, with NaN == NaN and equal infinities passing (the check.h rule, for scalars). */
static inline int mg_test_close(double a, double b, double atol, double rtol) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return fabs(a - b) <= atol + rtol * fabs(b);
}

#define MG_ASSERT_CLOSE(a, b, atol, rtol)                                                                      \
    cr_assert(mg_test_close((double)(a), (double)(b), (atol), (rtol)), "%s = %.17g, expected %.17g (atol %g rtol %g)", \
              #a, (double)(a), (double)(b), (double)(atol), (double)(rtol))
#define MG_ASSERT_NAN(a) cr_assert(isnan((double)(a)), "%s = %.17g, expected NaN", #a, (double)(a))
/* +0.0 exactly (not -0.0): the max_dim 1 output of a finite row. */
#define MG_ASSERT_POS_ZERO(a)                                                                                   \
    cr_assert((double)(a) == 0.0 && !signbit((double)(a)), "%s = %.17g, expected +0.0", #a, (double)(a))

/* Seed-like inputs on the host, exactly what mg_fill_seedlike (gpu_util.h) draws on the device for fp32:
 * x ~ U[0,1), W, b ~ U(-1/sqrt(K), 1/sqrt(K)) (bound 1 when K = 0). Any pointer may be NULL to skip it. */
static inline void mg_test_seedlike_f32(float *x, float *W, float *b, int64_t m, int64_t n, int64_t k, uint64_t seed) {
    const float bound = k > 0 ? (float)(1.0 / sqrt((double)k)) : 1.0f;
    if (x)
        for (int64_t i = 0; i < m * k; i++) x[i] = mg_rng_u01(seed, MG_RNG_X, (uint64_t)i);
    if (W)
        for (int64_t i = 0; i < n * k; i++) W[i] = mg_rng_uniform(seed, MG_RNG_W, (uint64_t)i, -bound, bound);
    if (b)
        for (int64_t i = 0; i < n; i++) b[i] = mg_rng_uniform(seed, MG_RNG_B, (uint64_t)i, -bound, bound);
}

/* Widens count floats to double; with bf16 != 0 each value is first rounded to bf16 (the bf16 mode's reference
 * is computed from the bf16-rounded inputs, SEMANTICS.md). */
static inline void mg_test_widen(const float *src, double *dst, size_t count, int bf16) {
    for (size_t i = 0; i < count; i++)
        dst[i] = bf16 ? (double)mg_bf16_to_f32(mg_f32_to_bf16(src[i])) : (double)src[i];
}

/* n floats as the precision's elements (bf16: rounded; tf32, fp32: as they are) into dst (n x 2 or 4 bytes). */
static inline void mg_test_to_elems(const float *src, size_t n, mg_precision prec, void *dst) {
    if (prec == MG_PREC_BF16)
        for (size_t i = 0; i < n; i++) ((uint16_t *)dst)[i] = mg_f32_to_bf16(src[i]);
    else
        memcpy(dst, src, n * sizeof(float));
}

/* ---- assertions shared by the GPU suites ------------------------------------------------------------------------- */
/* A CUDA runtime call or a maxgemm call that must succeed; the failure names the call, the file and line. */
#define MG_TEST_CUDA(call)                                                                                      \
    do {                                                                                                        \
        cudaError_t e_ = (call);                                                                                \
        cr_assert(e_ == cudaSuccess, "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));       \
    } while (0)
#define MG_TEST_OK(call)                                                                                        \
    do {                                                                                                        \
        mg_status s_ = (call);                                                                                  \
        cr_assert(s_ == MG_OK, "%s:%d: %s: %s (%s)", __FILE__, __LINE__, #call, mg_strerror(s_), mg_last_error()); \
    } while (0)
#define MG_TEST_NEED_GPU()                                                                                      \
    do {                                                                                                        \
        if (!mg_test_has_gpu()) cr_skip_test("no CUDA device");                                                 \
    } while (0)

/* ---- GPU suites parameterised over the registry ------------------------------------------------------------ */
#include "mg_kernel.h"

/* The kernel at registry position idx if this build and this GPU can run it; skips the test otherwise. */
static inline const mg_kernel *mg_test_kernel_or_skip(int idx) {
    if (!mg_test_has_gpu()) cr_skip_test("no CUDA device");
    const mg_kernel *k = mg_registry_at(idx);
    cr_assert(k != NULL, "registry position %d", idx);
    if (!mg_kernel_available(k)) cr_skip_test("kernel %d (%s) is not built", k->id, k->name);
    const int sm = mg_test_sm();
    if (sm < k->min_sm) cr_skip_test("kernel %d (%s) needs sm_%d, device is sm_%d", k->id, k->name, k->min_sm, sm);
    return k;
}

static inline int mg_test_is_naive(const mg_kernel *k) { return strcmp(k->name, "naive") == 0; }

/* One Criterion parameter per registry row (its position), for ParameterizedTestParameters; at most
 * MG_TEST_MAX_KERNELS rows (registry/every_row_is_a_test_parameter fails before a row would be left out). */
#define MG_TEST_MAX_KERNELS 64
static inline struct criterion_test_params mg_test_registry_params(void) {
    static int positions[MG_TEST_MAX_KERNELS];
    int n = mg_registry_count();
    if (n > MG_TEST_MAX_KERNELS) n = MG_TEST_MAX_KERNELS;
    for (int i = 0; i < n; i++) positions[i] = i;
    return cr_make_param_array(int, positions, (size_t)n);
}

/* What a direct run through the kernel contract needs besides its buffers: a stream, a cuBLAS handle bound to it (the
 * cuBLAS-built kernels use it) and the device (the persistent kernels size their grid by its SM count). */
static inline void mg_test_launch_env(cudaStream_t *st, cublasHandle_t *h, mg_device *dev) {
    memset(dev, 0, sizeof *dev);
    MG_TEST_CUDA(cudaGetDevice(&dev->ordinal));
    MG_TEST_CUDA(cudaDeviceGetAttribute(&dev->num_sms, cudaDevAttrMultiProcessorCount, dev->ordinal));
    int major = 0, minor = 0;
    MG_TEST_CUDA(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev->ordinal));
    MG_TEST_CUDA(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev->ordinal));
    dev->sm = major * 10 + minor;
    MG_TEST_CUDA(cudaStreamCreate(st));
    cr_assert(cublasCreate(h) == CUBLAS_STATUS_SUCCESS, "cublasCreate");
    cr_assert(cublasSetStream(*h, *st) == CUBLAS_STATUS_SUCCESS, "cublasSetStream");
}

/* One kernel run directly through its contract (mg_kernel.h), as the library runs it: bounds -> buffers (ws zeroed
 * once) -> prepare -> plan (with the prepared runner, if any) -> launch. The partial rows the plan says it writes are
 * d->lp.partial_rows, within d->bound_rows; the remainder sums, if any, at d->ws + d->lp.rem_offset. */
typedef struct mg_test_direct {
    mg_launch_plan lp;
    mg_prepared prep;
    const mg_kernel_ops *ops;   /* the kernel's */
    int bound_rows;
    size_t bound_ws;
    float *partial;
    void *ws;
    void *out;   /* M or N floats (a fused plan's output: mg_launch_plan::fused_finalize) */
} mg_test_direct;

static inline void mg_test_direct_setup(mg_test_direct *d, const mg_kernel *kern, const mg_problem *p,
                                        const mg_device *dev, const void *W, const void *b, cudaStream_t st) {
    memset(d, 0, sizeof *d);
    d->ops = kern->ops;
    mg_problem pw = *p;
    pw.align |= MG_ALIGN_W16 | MG_ALIGN_X16;   /* cudaMalloc'ed operands */
    d->ops->bounds(&pw, dev, &d->bound_rows, &d->bound_ws);
    cr_assert(d->bound_rows >= 1, "kernel %d bounds: %d partial rows", kern->id, d->bound_rows);
    const size_t len = (size_t)mg_partial_len(p);
    MG_TEST_CUDA(cudaMalloc((void **)&d->partial, (size_t)d->bound_rows * len * sizeof(float) + 4));
    MG_TEST_CUDA(cudaMalloc(&d->out, len * sizeof(float) + 4));
    if (d->bound_ws) {
        MG_TEST_CUDA(cudaMalloc(&d->ws, d->bound_ws));
        MG_TEST_CUDA(cudaMemset(d->ws, 0, d->bound_ws));   /* zeroed once, as the plan does */
    }
    if (d->ops->prepare) MG_TEST_OK(d->ops->prepare(&pw, dev, W, b, &d->prep, st));
}

/* Plans problem p (m <= the setup's) with opt and launches it on st. */
static inline void mg_test_direct_launch(mg_test_direct *d, const mg_problem *p, const mg_device *dev,
                                         const mg_options *opt, const void *x, const void *W, const void *b,
                                         cublasHandle_t h, cudaStream_t st) {
    const mg_kernel_ops *run = d->prep.runner ? d->prep.runner : d->ops;
    mg_problem pa = *p;
    pa.align |= MG_ALIGN_W16 | MG_ALIGN_X16;
    memset(&d->lp, 0, sizeof d->lp);
    d->lp.p = pa;
    MG_TEST_OK(run->plan(&pa, dev, opt, &d->lp));
    cr_assert(d->lp.partial_rows >= 1 && d->lp.partial_rows <= d->bound_rows && d->lp.ws_bytes <= d->bound_ws,
              "plan outside the bounds: %d partial rows (bound %d), %zu ws bytes (bound %zu)", d->lp.partial_rows,
              d->bound_rows, d->lp.ws_bytes, d->bound_ws);
    const mg_io io = {x, W, b, d->partial, d->ws, h, d->out};
    MG_TEST_OK(run->launch(&d->lp, &io, d->prep.state, st));
}

static inline void mg_test_direct_free(mg_test_direct *d) {
    if (d->ops->release && d->prep.state) d->ops->release(d->prep.state);
    MG_TEST_CUDA(cudaFree(d->partial));
    MG_TEST_CUDA(cudaFree(d->out));
    if (d->ws) MG_TEST_CUDA(cudaFree(d->ws));
    memset(d, 0, sizeof *d);
}

/* Reads a whole file (malloc'ed, free it); NULL if it cannot. */
static inline char *mg_test_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = (char *)malloc(n > 0 ? (size_t)n : 1);
    if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *len = n > 0 ? (size_t)n : 0;
    return buf;
}

/* The repository root: the working directory when it holds tile_configs/README.md (make test runs from there), else
 * one level above this file (test/). Writes "" when it finds none. */
static inline void mg_test_repo_root(char *out, size_t n) {
    FILE *f = fopen("tile_configs/README.md", "r");
    if (f) {
        fclose(f);
        snprintf(out, n, ".");
        return;
    }
    const char *file = __FILE__;
    const char *slash = strrchr(file, '/');
    if (slash) {
        snprintf(out, n, "%.*s/..", (int)(slash - file), file);
        char probe[1200];
        snprintf(probe, sizeof probe, "%s/tile_configs/README.md", out);
        if ((f = fopen(probe, "r"))) {
            fclose(f);
            return;
        }
    }
    out[0] = '\0';
}

/* A library call's refusal: status got must be want and mg_last_error() must mention words (what: the call, for the
 * message). */
static inline void mg_test_expect_status(mg_status got, mg_status want, const char *what, const char *words) {
    cr_expect_eq(got, want, "%s: status %d (%s), want %d", what, (int)got, mg_last_error(), (int)want);
    cr_expect(strstr(mg_last_error(), words) != NULL, "%s: error \"%s\" does not mention \"%s\"", what,
              mg_last_error(), words);
}

/* A parser's rejection: rc must be -1 with a message err that starts with "file:line: " and mentions want. */
static inline void mg_test_expect_rejected(int rc, const char *text, const char *err, const char *file, int line,
                                           const char *want) {
    cr_assert_eq(rc, -1, "accepted: \"%s\"", text);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s:%d: ", file, line);
    cr_assert_eq(strncmp(err, prefix, strlen(prefix)), 0, "error \"%s\" does not start with \"%s\"", err, prefix);
    cr_assert(strstr(err, want) != NULL, "error \"%s\" does not mention \"%s\"", err, want);
}

#endif /* MG_TEST_COMMON_H */
