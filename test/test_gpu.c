/* test_gpu.c: the GPU suites (names start with gpu_; every test skips cleanly without a CUDA device).
 *
 *   gpu_util       the device RNG fills are bit-identical to the CPU's; the poison pattern
 *   gpu_reference  mg_gpu_reference (fp64 DGEMM + device epilogue) against the CPU mg_reference
 *   gpu_finalize   mg_finalize against mg_reference_epilogue on synthetic partial rows (NaN/inf planted), and
 *                  bitwise determinism of the fp64 mean
 *   gpu_kernels    EVERY registry kernel, every precision it claims, through the PUBLIC API (plan, weights,
 *                  forward; short-circuit OFF so the kernel really runs) against the GPU fp64 reference at
 *                  the precision's bar, on fresh seed-like inputs per case; plus planted NaN/inf inputs;
 *                  plus the partial-maxima contract checked directly (the max_dim 1 output is constant, so
 *                  only the partial rows show whether a kernel's row maxima are right)
 *
 * Every output buffer is poisoned (NaN pattern) before the run, so a kernel that writes nothing fails.
 * On a mismatch the message names kernel, precision, shape, max_dim, the error and the first bad element.
 */
#include "test_common.h"

#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "gemv_stream.h"
#include "gpu_util.h"
#include "mg_kernel.h"
#include "timing.h"
#include "reference.h"

/* ---- plumbing -------------------------------------------------------------------------------------------------- */



static void *dmalloc(size_t bytes) {
    void *p = NULL;
    MG_TEST_CUDA(cudaMalloc(&p, bytes ? bytes : 16));   /* never a zero-byte request (K = 0 inputs) */
    return p;
}
static void *hmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 16);
    cr_assert(p != NULL, "host allocation of %zu bytes failed", bytes);
    return p;
}

static size_t esize(mg_precision prec) { return prec == MG_PREC_BF16 ? 2 : 4; }

/* Element idx of a device array of the precision's type, as float (one small synchronous copy). */
static void store_elem(void *d, size_t idx, mg_precision prec, float v, cudaStream_t st) {
    if (prec == MG_PREC_BF16) {
        uint16_t h = mg_f32_to_bf16(v);
        MG_TEST_CUDA(cudaMemcpyAsync((uint16_t *)d + idx, &h, 2, cudaMemcpyHostToDevice, st));
    } else {
        MG_TEST_CUDA(cudaMemcpyAsync((float *)d + idx, &v, 4, cudaMemcpyHostToDevice, st));
    }
    MG_TEST_CUDA(cudaStreamSynchronize(st));   /* the source is a local */
}

/* count elements of a device array of the precision's type, widened to double on the host. */
static double *download_widened(const void *d, size_t count, mg_precision prec) {
    double *h = hmalloc(count * sizeof(double));
    if (count == 0) return h;
    void *raw = hmalloc(count * esize(prec));
    MG_TEST_CUDA(cudaMemcpy(raw, d, count * esize(prec), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < count; i++)
        h[i] = prec == MG_PREC_BF16 ? (double)mg_bf16_to_f32(((uint16_t *)raw)[i]) : (double)((float *)raw)[i];
    free(raw);
    return h;
}

static double out_value(const void *h_out, size_t i, mg_precision prec) {
    return prec == MG_PREC_BF16 ? (double)mg_bf16_to_f32(((const uint16_t *)h_out)[i])
                                : (double)((const float *)h_out)[i];
}

/* Checks out (host copy, len elements of the precision's type) against ref at tol; returns the result. */
static mg_check_result check_out(const double *ref, const void *h_out, size_t len, mg_precision prec, double tol) {
    mg_check_result r;
    if (prec == MG_PREC_BF16)
        mg_check_bf16(ref, (const uint16_t *)h_out, len, tol, tol, &r);
    else
        mg_check_f32(ref, (const float *)h_out, len, tol, tol, &r);
    return r;
}

/* Number of entries of out that should be exactly +0.0 (ref == 0, the max_dim 1 finite rows) but are not. */
static size_t count_not_pos_zero(const double *ref, const void *h_out, size_t len, mg_precision prec, size_t *first) {
    size_t bad = 0;
    *first = len;
    for (size_t i = 0; i < len; i++) {
        if (ref[i] != 0.0) continue;
        int ok = prec == MG_PREC_BF16 ? ((const uint16_t *)h_out)[i] == 0 : ((const uint32_t *)h_out)[i] == 0u;
        if (!ok && bad++ == 0) *first = i;
    }
    return bad;
}

static size_t count_nan(const double *v, size_t n) {
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += isnan(v[i]) ? 1 : 0;
    return c;
}

/* Distinct seeds per case, so no two checks share inputs. */
static uint64_t case_seed(int kernel_id, int prec, int shape, int max_dim, int variant) {
    return 0x6d67656d6d000000ull ^ ((uint64_t)(kernel_id + 1) << 32) ^ ((uint64_t)prec << 24) ^
           ((uint64_t)shape << 16) ^ ((uint64_t)(max_dim + 2) << 8) ^ (uint64_t)variant;
}

/* The two element types of the helpers (tf32 mode stores fp32). */
static const mg_precision TWO_PRECS[2] = {MG_PREC_FP32, MG_PREC_BF16};

typedef struct { int64_t m, n, k; } shape3;

/* The public-API shapes. The last one is the headline. 300 x 1000 x 4100 (12 tiles, odd M, N, K tails) and
 * 2 x 8192 x 4096 (32 tiles) run kernels 4 and 6 with every tile split across several CTAs by stream-K (up to
 * 11 segments per tile); the headline runs whole tiles. */
static const shape3 SHAPES[] = {
    {1, 1, 1}, {17, 33, 65}, {127, 257, 129}, {1000, 1000, 1000}, {5, 7, 0}, {300, 1000, 4100}, {2, 8192, 4096},
    {1024, 8192, 8192},
};
enum { N_SHAPES = sizeof SHAPES / sizeof SHAPES[0], HEADLINE = N_SHAPES - 1, SHAPE_NEG_DIMS = 1 };

/* Planted non-finite inputs (on 127 x 257 x 129). */
/* PLANT_COUNT ends the kinds the planted-case loops walk; the last columns' kinds after it are for the tests of
 * kernel 4's remainder split (gpu_kernels/ws_rem_split), whose last columns take another path. */
typedef enum {
    PLANT_NONE = 0, PLANT_X, PLANT_W_NEGINF, PLANT_B_NAN, PLANT_COUNT,
    PLANT_LAST_W_NAN = PLANT_COUNT, PLANT_LAST_B_INF, PLANT_X_SMALL, PLANT_ALL
} plant_kind;
static const char *plant_name(plant_kind p) {
    static const char *names[] = {"none", "x: NaN row 3, +inf row 10, -inf row 20", "W[5][7] = -inf", "b[5] = NaN",
                                  "W[N-1][K-1] = NaN", "b[N-2] = +inf", "x[0][K/2] = NaN, x[M-1][0] = +inf"};
    return names[p];
}

static void plant(plant_kind kind, void *x, void *W, void *b, int64_t m, int64_t n, int64_t k, mg_precision prec,
                  cudaStream_t st) {
    switch (kind) {
    case PLANT_X:
        cr_assert(m > 20 && k > 0, "PLANT_X needs M > 20 and K > 0");
        store_elem(x, (size_t)(3 * k + k / 2), prec, NAN, st);
        store_elem(x, (size_t)(10 * k), prec, INFINITY, st);
        store_elem(x, (size_t)(20 * k + k - 1), prec, -INFINITY, st);
        break;
    case PLANT_W_NEGINF:
        cr_assert(n > 5 && k > 7, "PLANT_W_NEGINF needs N > 5 and K > 7");
        store_elem(W, (size_t)(5 * k + 7), prec, -INFINITY, st);
        break;
    case PLANT_B_NAN:
        cr_assert(n > 5, "PLANT_B_NAN needs N > 5");
        store_elem(b, 5, prec, NAN, st);
        break;
    case PLANT_LAST_W_NAN:
        cr_assert(n > 0 && k > 0, "PLANT_LAST_W_NAN needs N, K > 0");
        store_elem(W, (size_t)((n - 1) * k + k - 1), prec, NAN, st);
        break;
    case PLANT_LAST_B_INF:
        cr_assert(n > 1, "PLANT_LAST_B_INF needs N > 1");
        store_elem(b, (size_t)(n - 2), prec, INFINITY, st);
        break;
    case PLANT_X_SMALL:   /* PLANT_X for small M (the small-M kernel's tests) */
        cr_assert(m > 0 && k > 0, "PLANT_X_SMALL needs M, K > 0");
        store_elem(x, (size_t)(k / 2), prec, NAN, st);
        store_elem(x, (size_t)((m - 1) * k), prec, INFINITY, st);
        break;
    default:
        break;
    }
}

/* What the reference must show for a planted case (a check of the test itself, not of the kernel):
 * returns the expected NaN count of the output, or -1 for "not pinned". */
static long expected_nans(plant_kind kind, int dim, int64_t m, int64_t n) {
    switch (kind) {
    case PLANT_X: return dim == 1 ? 3 : (long)n;        /* rows 3, 10, 20 / any NaN or +inf in a column: all */
    case PLANT_W_NEGINF: return dim == 1 ? 0 : 1;       /* -inf never wins a row max / c[5] = -inf, mu = -inf */
    case PLANT_B_NAN: return dim == 1 ? (long)m : (long)n;
    case PLANT_LAST_W_NAN: return dim == 1 ? (long)m : (long)n;   /* column N-1 NaN: every row / the mean */
    case PLANT_LAST_B_INF: return dim == 1 ? (long)m : -1;        /* every row max +inf: inf - inf */
    case PLANT_X_SMALL: return dim == 1 ? (m > 1 ? 2 : 1) : (long)n;   /* rows 0 and M-1 / every column */
    default: return -1;
    }
}

/* The options every case of this file runs with (mg_plan_set_options, or the plan step of a direct run): the defaults,
 * except where a test of a launch choice sets a field for its cases and resets it after (tests pass options; none
 * sets environment variables). */
static mg_options g_opt;
static int g_opt_set;
static void opt_reset(void) {
    g_opt = mg_options_default();
    g_opt_set = 1;
}
static const mg_options *opts(void) {
    if (!g_opt_set) opt_reset();
    return &g_opt;
}

/* ---- one public-API case ------------------------------------------------------------------------------------- */

/* Runs kernel kern on fresh inputs through the public API and checks against the GPU reference.
 * Returns 1 when it ran (pass or cr_expect failure), 0 when the kernel refused the shape (MG_ERR_UNSUPPORTED). */
static int run_case(const mg_kernel *kern, mg_precision prec, int64_t m, int64_t n, int64_t k, int max_dim,
                    uint64_t seed, plant_kind kind, cudaStream_t st) {
    int dim;
    cr_assert(mg_normalize_max_dim(max_dim, &dim) == MG_OK);
    const size_t es = esize(prec), len = (size_t)(dim == 1 ? m : n);
    const double tol = mg_precision_tolerance(prec);

    mg_plan_desc d = mg_plan_desc_default();
    d.m = m;
    d.n = n;
    d.k = k;
    d.max_dim = max_dim;
    d.precision = prec;
    d.kernel = kern->id;
    d.shortcut = 0;   /* exercise the kernel, not the certificate */
    mg_plan *plan = NULL;
    mg_status s = mg_plan_create(&plan, &d);
    if (s == MG_ERR_UNSUPPORTED) {
        cr_log_warn("kernel %d (%s) %s %lldx%lldx%lld max_dim %d: unsupported: %s", kern->id, kern->name,
                    mg_precision_name(prec), (long long)m, (long long)n, (long long)k, max_dim, mg_last_error());
        return 0;
    }
    cr_assert(s == MG_OK, "mg_plan_create kernel %d (%s) %s %lldx%lldx%lld max_dim %d: %s (%s)", kern->id, kern->name,
              mg_precision_name(prec), (long long)m, (long long)n, (long long)k, max_dim, mg_strerror(s),
              mg_last_error());
    cr_assert(mg_plan_kernel(plan) == kern->id, "plan runs kernel %d, asked for %d", mg_plan_kernel(plan), kern->id);
    MG_TEST_OK(mg_plan_set_options(plan, opts()));

    void *x = dmalloc((size_t)m * k * es), *W = dmalloc((size_t)n * k * es), *b = dmalloc((size_t)n * es);
    void *out = dmalloc(len * es);
    double *ref_d = dmalloc(len * sizeof(double));
    MG_TEST_OK(mg_fill_seedlike(x, W, b, m, n, k, prec, seed, st));
    plant(kind, x, W, b, m, n, k, prec, st);

    MG_TEST_OK(mg_set_weights(plan, W, b, st));
    MG_TEST_OK(mg_poison(out, len, prec, st));
    MG_TEST_OK(mg_forward(plan, x, out, st));
    MG_TEST_OK(mg_gpu_reference(x, W, b, m, n, k, dim, prec, ref_d, st));
    MG_TEST_CUDA(cudaStreamSynchronize(st));
    MG_TEST_CUDA(cudaGetLastError());

    double *ref = hmalloc(len * sizeof(double));
    void *h_out = hmalloc(len * es);
    MG_TEST_CUDA(cudaMemcpy(ref, ref_d, len * sizeof(double), cudaMemcpyDeviceToHost));
    MG_TEST_CUDA(cudaMemcpy(h_out, out, len * es, cudaMemcpyDeviceToHost));

    const long want_nans = expected_nans(kind, dim, m, n);
    if (want_nans >= 0)
        cr_assert_eq((long)count_nan(ref, len), want_nans, "test fidelity: the reference shows %zu NaNs for plant '%s'"
                     " max_dim %d, expected %ld", count_nan(ref, len), plant_name(kind), dim, want_nans);

    const mg_check_result r = check_out(ref, h_out, len, prec, tol);
    const size_t fb = r.first_bad < len ? r.first_bad : 0;
    cr_expect(r.pass,
              "kernel %d (%s) %s M=%lld N=%lld K=%lld max_dim %d plant '%s' seed %llx: %zu of %zu outside atol=rtol=%g "
              "(%zu NaN mismatches), max_abs %.3g, max_rel %.3g; first bad [%zu]: ref %.9g out %.9g",
              kern->id, kern->name, mg_precision_name(prec), (long long)m, (long long)n, (long long)k, max_dim,
              plant_name(kind), (unsigned long long)seed, r.fails, r.n, tol, r.nan_mismatch, r.max_abs, r.max_rel,
              r.first_bad, ref[fb], out_value(h_out, fb, prec));
    if (dim == 1) {
        size_t first;
        const size_t bad = count_not_pos_zero(ref, h_out, len, prec, &first);
        cr_expect(bad == 0, "kernel %d (%s) %s M=%lld N=%lld K=%lld max_dim %d: %zu finite rows are not exactly +0.0; "
                  "first [%zu] = %.9g", kern->id, kern->name, mg_precision_name(prec), (long long)m, (long long)n,
                  (long long)k, max_dim, bad, first, first < len ? out_value(h_out, first, prec) : 0.0);
    }

    free(ref);
    free(h_out);
    mg_plan_destroy(plan);
    MG_TEST_CUDA(cudaFree(x));
    MG_TEST_CUDA(cudaFree(W));
    MG_TEST_CUDA(cudaFree(b));
    MG_TEST_CUDA(cudaFree(out));
    MG_TEST_CUDA(cudaFree(ref_d));
    return 1;
}

/* The kernel at registry position idx if this build and this GPU can run it; skips the test otherwise. */
/* ---- gpu_util ------------------------------------------------------------------------------------------------ */

Test(gpu_util, fill_matches_cpu_rng) {
    MG_TEST_NEED_GPU();
    const int64_t m = 17, n = 33, k = 65;
    const uint64_t seed = 0x5eedull;
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    float *hx = hmalloc(m * k * 4), *hw = hmalloc(n * k * 4), *hb = hmalloc(n * 4);
    mg_test_seedlike_f32(hx, hw, hb, m, n, k, seed);
    const float *host[3] = {hx, hw, hb};
    const size_t cnt[3] = {(size_t)(m * k), (size_t)(n * k), (size_t)n};
    for (int pi = 0; pi < 2; pi++) {
        const int prec = TWO_PRECS[pi];
        void *dv[3];
        for (int a = 0; a < 3; a++) dv[a] = dmalloc(cnt[a] * 4);
        MG_TEST_OK(mg_fill_seedlike(dv[0], dv[1], dv[2], m, n, k, (mg_precision)prec, seed, st));
        MG_TEST_CUDA(cudaStreamSynchronize(st));
        for (int a = 0; a < 3; a++) {
            void *h = hmalloc(cnt[a] * 4);
            MG_TEST_CUDA(cudaMemcpy(h, dv[a], cnt[a] * esize((mg_precision)prec), cudaMemcpyDeviceToHost));
            size_t diff = 0, first = cnt[a];
            for (size_t i = 0; i < cnt[a]; i++) {
                int same = prec == MG_PREC_BF16 ? ((uint16_t *)h)[i] == mg_f32_to_bf16(host[a][i])
                                                : memcmp((float *)h + i, host[a] + i, 4) == 0;
                if (!same && diff++ == 0) first = i;
            }
            cr_expect(diff == 0, "%s fill of array %d: %zu of %zu elements differ from the CPU draw (first %zu)",
                      mg_precision_name((mg_precision)prec), a, diff, cnt[a], first);
            free(h);
            MG_TEST_CUDA(cudaFree(dv[a]));
        }
    }
    /* Poison patterns. */
    void *p = dmalloc(64);
    uint32_t h32[16];
    uint16_t h16[16];
    MG_TEST_OK(mg_poison(p, 16, MG_PREC_FP32, st));
    MG_TEST_CUDA(cudaMemcpyAsync(h32, p, sizeof h32, cudaMemcpyDeviceToHost, st));
    MG_TEST_CUDA(cudaStreamSynchronize(st));
    for (int i = 0; i < 16; i++) cr_expect_eq(h32[i], 0x7fbadbadu, "fp32 poison [%d] = %08x", i, h32[i]);
    MG_TEST_OK(mg_poison(p, 16, MG_PREC_BF16, st));
    MG_TEST_CUDA(cudaMemcpyAsync(h16, p, sizeof h16, cudaMemcpyDeviceToHost, st));
    MG_TEST_CUDA(cudaStreamSynchronize(st));
    for (int i = 0; i < 16; i++) cr_expect_eq(h16[i], 0x7fbb, "bf16 poison [%d] = %04x", i, h16[i]);
    MG_TEST_CUDA(cudaFree(p));
    free(hx);
    free(hw);
    free(hb);
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* The timing hold (src/timing.c, mg_gpu_hold): a batch of asynchronous samples is queued behind it and released,
 * so it never times out; a timed function that blocks the host on the stream cannot be released in time, so the
 * hold must give up (no deadlock), be counted, and the timing still succeed. */
typedef struct hold_ctx { void *p; cudaStream_t st; int block_host; } hold_ctx;
static mg_status hold_fn(void *v) {
    hold_ctx *c = (hold_ctx *)v;
    mg_status s = mg_poison(c->p, 16, MG_PREC_FP32, c->st);
    if (s == MG_OK && c->block_host && cudaStreamSynchronize(c->st) != cudaSuccess)
        s = mg_set_error(MG_ERR_CUDA, "hold_fn: cudaStreamSynchronize failed");
    return s;
}
Test(gpu_util, timing_hold, .timeout = 60) {
    MG_TEST_NEED_GPU();
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    hold_ctx c = {dmalloc(64), st, 0};
    double samples[20];
    for (int flush = 0; flush < 2; flush++) {
        mg_timer *t = NULL;
        MG_TEST_OK(mg_timer_create(&t, flush, st));
        c.block_host = 0;
        MG_TEST_OK(mg_time(t, hold_fn, &c, 2, 20, samples));
        cr_expect_eq(mg_timer_hold_timeouts(t), 0, "flush %d: asynchronous samples, yet the hold timed out", flush);
        for (int i = 0; i < 20; i++)
            cr_expect(samples[i] > 0.0 && samples[i] < 40.0, "flush %d: sample %d = %g ms: not a plausible time for a 16-element write",
                      flush, i, samples[i]);
        c.block_host = 1;
        MG_TEST_OK(mg_time(t, hold_fn, &c, 0, 3, samples));
        cr_expect_eq(mg_timer_hold_timeouts(t), 1, "flush %d: a host-blocking sample must run the hold into its "
                                                   "timeout once (counted %d)", flush, mg_timer_hold_timeouts(t));
        mg_timer_destroy(t);
    }
    MG_TEST_CUDA(cudaFree(c.p));
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* ---- gpu_reference ------------------------------------------------------------------------------------------- */

/* The GPU reference against the CPU one on the same (downloaded, widened) inputs. Both are fp64 with different
 * summation orders, so they agree to ~1e-15 relative; 1e-11 leaves room and still catches any layout bug. */
Test(gpu_reference, matches_cpu_reference, .timeout = 120) {
    MG_TEST_NEED_GPU();
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    const shape3 shapes[] = {{127, 257, 129}, {5, 7, 0}};
    for (int si = 0; si < 2; si++)
        for (int pi = 0; pi < 2; pi++)
            for (int kind = PLANT_NONE; kind < PLANT_COUNT; kind++)
                for (int dim = 0; dim <= 1; dim++) {
                    const int prec = TWO_PRECS[pi];
                    const int64_t m = shapes[si].m, n = shapes[si].n, k = shapes[si].k;
                    if (k == 0 && kind != PLANT_NONE) continue;
                    const mg_precision pr = (mg_precision)prec;
                    const size_t es = esize(pr), len = (size_t)(dim == 1 ? m : n);
                    void *x = dmalloc((size_t)m * k * es), *W = dmalloc((size_t)n * k * es), *b = dmalloc((size_t)n * es);
                    double *ref_d = dmalloc(len * sizeof(double));
                    MG_TEST_OK(mg_fill_seedlike(x, W, b, m, n, k, pr, case_seed(-1, prec, si, dim, kind), st));
                    plant((plant_kind)kind, x, W, b, m, n, k, pr, st);
                    MG_TEST_OK(mg_gpu_reference(x, W, b, m, n, k, dim, pr, ref_d, st));
                    MG_TEST_CUDA(cudaStreamSynchronize(st));
                    double *g = hmalloc(len * sizeof(double)), *c = hmalloc(len * sizeof(double));
                    MG_TEST_CUDA(cudaMemcpy(g, ref_d, len * sizeof(double), cudaMemcpyDeviceToHost));
                    double *hx = download_widened(x, (size_t)(m * k), pr), *hw = download_widened(W, (size_t)(n * k), pr),
                           *hb = download_widened(b, (size_t)n, pr);
                    MG_TEST_OK(mg_reference(hx, hw, hb, m, n, k, dim, c));
                    size_t bad = 0, first = len;
                    for (size_t i = 0; i < len; i++)
                        if (!mg_test_close(g[i], c[i], 1e-11, 1e-11) && bad++ == 0) first = i;
                    cr_expect(bad == 0, "GPU vs CPU reference %s %lldx%lldx%lld max_dim %d plant '%s': %zu of %zu differ; "
                              "first [%zu]: gpu %.17g cpu %.17g", mg_precision_name(pr), (long long)m, (long long)n,
                              (long long)k, dim, plant_name((plant_kind)kind), bad, len, first,
                              first < len ? g[first] : 0.0, first < len ? c[first] : 0.0);
                    const long want = expected_nans((plant_kind)kind, dim, m, n);
                    if (want >= 0)
                        cr_expect_eq((long)count_nan(c, len), want, "CPU reference NaN count for plant '%s' max_dim %d",
                                     plant_name((plant_kind)kind), dim);
                    free(g); free(c); free(hx); free(hw); free(hb);
                    MG_TEST_CUDA(cudaFree(x)); MG_TEST_CUDA(cudaFree(W)); MG_TEST_CUDA(cudaFree(b)); MG_TEST_CUDA(cudaFree(ref_d));
                }
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* ---- gpu_finalize -------------------------------------------------------------------------------------------- */

/* Synthetic partial rows with planted specials, against mg_reference_epilogue: for max_dim 0 the ntiles x len
 * partial block IS a y of M = ntiles rows; for max_dim 1 its transpose is a y of N = ntiles columns. */
typedef enum { FP_NONE, FP_NAN_ONE, FP_POSINF_ONE, FP_NEGINF_COLUMN, FP_NEGINF_ONE, FP_COUNT } fin_plant;

Test(gpu_finalize, matches_reference_epilogue, .timeout = 120) {
    MG_TEST_NEED_GPU();
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    const struct { int ntiles, len; } cfg[] = {{1, 1}, {3, 1000}, {64, 8192}, {8, 1 << 20}, {5, 3}};
    for (size_t ci = 0; ci < sizeof cfg / sizeof cfg[0]; ci++)
        for (int dim = 0; dim <= 1; dim++)
            for (int fp = FP_NONE; fp < FP_COUNT; fp++) {
                const int T = cfg[ci].ntiles, L = cfg[ci].len;
                const size_t total = (size_t)T * L;
                float *hp = hmalloc(total * sizeof(float));
                for (size_t i = 0; i < total; i++) hp[i] = mg_rng_uniform(77 + ci * 10 + fp, 9, i, -1.f, 1.f);
                const int pos = L / 2, tile = T - 1;
                switch (fp) {
                case FP_NAN_ONE: hp[(size_t)tile * L + pos] = NAN; break;
                case FP_POSINF_ONE: hp[(size_t)tile * L + pos] = INFINITY; break;
                case FP_NEGINF_COLUMN: for (int t = 0; t < T; t++) hp[(size_t)t * L + pos] = -INFINITY; break;
                case FP_NEGINF_ONE: hp[(size_t)tile * L + pos] = -INFINITY; break;
                default: break;
                }
                /* y for the reference epilogue. */
                double *y = hmalloc(total * sizeof(double)), *ref = hmalloc((size_t)L * sizeof(double));
                for (int t = 0; t < T; t++)
                    for (int i = 0; i < L; i++) {
                        const double v = hp[(size_t)t * L + i];
                        if (dim == 0) y[(size_t)t * L + i] = v; else y[(size_t)i * T + t] = v;
                    }
                MG_TEST_OK(dim == 0 ? mg_reference_epilogue(y, T, L, 0, ref) : mg_reference_epilogue(y, L, T, 1, ref));

                float *d_part = dmalloc(total * sizeof(float));
                void *scratch = dmalloc(mg_finalize_scratch_bytes(L));
                void *out = dmalloc((size_t)L * 4);
                MG_TEST_CUDA(cudaMemcpy(d_part, hp, total * sizeof(float), cudaMemcpyHostToDevice));
                for (int pi = 0; pi < 2; pi++) {
                    const mg_precision pr = TWO_PRECS[pi];
                    /* The output rounding is the only error: fp32 ~6e-8 relative, bf16 2^-9. */
                    const double tol = pr == MG_PREC_BF16 ? 4e-3 : 1e-6;
                    MG_TEST_OK(mg_poison(out, (size_t)L, pr, st));
                    MG_TEST_OK(mg_finalize(d_part, T, L, dim, pr, out, scratch, st));
                    MG_TEST_CUDA(cudaStreamSynchronize(st));
                    void *h_out = hmalloc((size_t)L * 4);
                    MG_TEST_CUDA(cudaMemcpy(h_out, out, (size_t)L * esize(pr), cudaMemcpyDeviceToHost));
                    const mg_check_result r = check_out(ref, h_out, (size_t)L, pr, tol);
                    const size_t fb = r.first_bad < (size_t)L ? r.first_bad : 0;
                    cr_expect(r.pass, "finalize %s ntiles %d len %d max_dim %d plant %d: %zu fail (%zu NaN mismatches), "
                              "max_abs %.3g; first bad [%zu]: ref %.9g out %.9g", mg_precision_name(pr), T, L, dim, fp,
                              r.fails, r.nan_mismatch, r.max_abs, r.first_bad, ref[fb], out_value(h_out, fb, pr));
                    if (dim == 1) {
                        size_t first;
                        const size_t bad = count_not_pos_zero(ref, h_out, (size_t)L, pr, &first);
                        cr_expect(bad == 0, "finalize %s len %d max_dim 1: %zu entries not +0.0 (first %zu)",
                                  mg_precision_name(pr), L, bad, first);
                    }
                    free(h_out);
                }
                free(hp); free(y); free(ref);
                MG_TEST_CUDA(cudaFree(d_part)); MG_TEST_CUDA(cudaFree(scratch)); MG_TEST_CUDA(cudaFree(out));
            }
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* The fp64 mean is summed in a fixed order: two runs (with the scratch re-poisoned) agree bit for bit. */
Test(gpu_finalize, deterministic_mean) {
    MG_TEST_NEED_GPU();
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    const int T = 8, L = 1 << 20;
    float *d_part = dmalloc((size_t)T * L * 4);
    void *scratch = dmalloc(mg_finalize_scratch_bytes(L));
    float *out[2] = {dmalloc((size_t)L * 4), dmalloc((size_t)L * 4)};
    MG_TEST_OK(mg_fill_uniform(d_part, (size_t)T * L, MG_PREC_FP32, 4242, 5, -3.f, 7.f, st));
    for (int r = 0; r < 2; r++) {
        MG_TEST_OK(mg_poison(scratch, mg_finalize_scratch_bytes(L) / 4, MG_PREC_FP32, st));
        MG_TEST_OK(mg_finalize(d_part, T, L, 0, MG_PREC_FP32, out[r], scratch, st));
    }
    MG_TEST_CUDA(cudaStreamSynchronize(st));
    float *h[2] = {hmalloc((size_t)L * 4), hmalloc((size_t)L * 4)};
    for (int r = 0; r < 2; r++) MG_TEST_CUDA(cudaMemcpy(h[r], out[r], (size_t)L * 4, cudaMemcpyDeviceToHost));
    cr_expect_eq(mg_bitwise_diff_f32(h[0], h[1], (size_t)L), 0u, "two finalize runs differ");
    for (int r = 0; r < 2; r++) { free(h[r]); MG_TEST_CUDA(cudaFree(out[r])); }
    MG_TEST_CUDA(cudaFree(d_part));
    MG_TEST_CUDA(cudaFree(scratch));
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* ---- gpu_kernels: every registry kernel through the public API ------------------------------------------------- */

/* The registry reaches kernels through weak references, which an archive link does not resolve: if the test binary
 * were linked that way, every kernel would read as "not built" and every kernel test below would skip. The two
 * baselines are always compiled, so they must be linked. (No GPU needed: this runs everywhere.) */
Test(gpu_kernels, baselines_linked) {
    const char *names[] = {"cublas", "naive"};
    for (int i = 0; i < 2; i++) {
        const mg_kernel *k = mg_registry_find_name(names[i]);
        cr_assert(k != NULL, "registry has no '%s' row", names[i]);
        cr_expect(mg_kernel_available(k), "kernel %d (%s) is not linked into this binary (weak reference unresolved: "
                  "link libmaxgemm.a with --whole-archive)", k->id, k->name);
    }
}

ParameterizedTestParameters(gpu_kernels, random_inputs) { return mg_test_registry_params(); }

/* Every suite shape, every precision kern claims, both max_dims, seed variant `variant`: the cases run; *refused
 * (may be NULL) gets the cases the kernel refused as unsupported. */
static int suite_cases(const mg_kernel *kern, cudaStream_t st, int variant, int *refused) {
    int ran = 0, ref = 0;
    for (int prec = 0; prec < MG_PREC_COUNT; prec++) {
        if (!(kern->precisions & (1u << prec))) continue;
        for (int si = 0; si < N_SHAPES; si++) {
            const shape3 s = SHAPES[si];
            /* The naive SIMT kernel runs the 137-GFLOP headline once (fp32, max_dim 0: the numerically telling
             * output); the fast kernels run it in every mode and both dims. */
            if (si == HEADLINE && mg_test_is_naive(kern) && prec != MG_PREC_FP32) continue;
            for (int dd = 0; dd < 2; dd++) {
                if (si == HEADLINE && mg_test_is_naive(kern) && dd == 0) continue;
                /* max_dim 1 then 0; on one shape the aliases -1 and -2 instead. */
                const int max_dim = si == SHAPE_NEG_DIMS ? (dd == 0 ? -1 : -2) : (dd == 0 ? 1 : 0);
                const int r = run_case(kern, (mg_precision)prec, s.m, s.n, s.k, max_dim,
                                       case_seed(kern->id, prec, si, max_dim, variant), PLANT_NONE, st);
                ran += r;
                ref += !r;
            }
        }
    }
    if (refused) *refused = ref;
    return ran;
}

/* NaN / inf planted in x, W and b (every plant kind), both max_dims, at 127 x 257 x 129; seed variants
 * variant0 + kind. Returns the cases run. */
static int planted_cases(const mg_kernel *kern, cudaStream_t st, int variant0) {
    const shape3 s = {127, 257, 129};
    int ran = 0;
    for (int prec = 0; prec < MG_PREC_COUNT; prec++) {
        if (!(kern->precisions & (1u << prec))) continue;
        for (int kind = PLANT_X; kind < PLANT_COUNT; kind++)
            for (int dim = 1; dim >= 0; dim--)
                ran += run_case(kern, (mg_precision)prec, s.m, s.n, s.k, dim,
                                case_seed(kern->id, prec, 7, dim, variant0 + kind), (plant_kind)kind, st);
    }
    return ran;
}

ParameterizedTest(int *idx, gpu_kernels, random_inputs, .timeout = 300) {
    const mg_kernel *kern = mg_test_kernel_or_skip(*idx);
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    int refused = 0;
    const int ran = suite_cases(kern, st, 0, &refused);
    cr_log_info("kernel %d (%s): %d cases run, %d refused as unsupported", kern->id, kern->name, ran, refused);
    cr_expect(ran > 0, "kernel %d (%s) ran no case at all (%d refused)", kern->id, kern->name, refused);
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

ParameterizedTestParameters(gpu_kernels, planted_nonfinite) { return mg_test_registry_params(); }

ParameterizedTest(int *idx, gpu_kernels, planted_nonfinite, .timeout = 120) {
    const mg_kernel *kern = mg_test_kernel_or_skip(*idx);
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    const int ran = planted_cases(kern, st, 0);
    cr_expect(ran > 0, "kernel %d (%s) ran no planted case", kern->id, kern->name);
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* The partial maxima of kernel kern on each shape (both precisions it claims, both max_dims) against an fp64 host
 * computation; returns the cases run. */
/* max_ntiles_md1 (may be NULL): the most partial rows any max_dim 1 launch reported (its column panels). */
/* rem_launches (may be NULL): counts the launches that left remainder sums for the finalize (mg_launch_args::rem),
 * which the check folds in as mg_finalize_rem does. */
static int partial_maxima_cases(const mg_kernel *kern, const shape3 *shapes, int nshapes, int *max_ntiles_md1,
                                int *rem_launches) {
    const int sm = mg_test_sm();
    mg_device dev;
    cudaStream_t st;
    cublasHandle_t h;
    mg_test_launch_env(&st, &h, &dev);
    const mg_kernel_ops *ops = kern->ops;
    int ran = 0;
    for (int prec = 0; prec < MG_PREC_COUNT; prec++) {
        if (!(kern->precisions & (1u << prec))) continue;
        const mg_precision pr = (mg_precision)prec;
        const size_t es = esize(pr);
        const double tol = mg_precision_tolerance(pr);
        for (int si = 0; si < nshapes; si++)
            for (int dim = 1; dim >= 0; dim--) {
                const int64_t m = shapes[si].m, n = shapes[si].n, k = shapes[si].k;
                const mg_problem p = {(int)m, (int)n, (int)k, dim, pr, 0};
                if (ops->supports && ops->supports(&p, sm) != MG_OK) {
                    cr_log_warn("kernel %d (%s) %s %lldx%lldx%lld: unsupported: %s", kern->id, kern->name,
                                mg_precision_name(pr), (long long)m, (long long)n, (long long)k, mg_last_error());
                    continue;
                }
                const size_t len = (size_t)(dim == 1 ? m : n);
                void *x = dmalloc((size_t)m * k * es), *W = dmalloc((size_t)n * k * es), *b = dmalloc((size_t)n * es);
                MG_TEST_OK(mg_fill_seedlike(x, W, b, m, n, k, pr, case_seed(kern->id, prec, 20 + si, dim, 0), st));
                mg_test_direct d;
                mg_test_direct_setup(&d, kern, &p, &dev, W, b, st);
                MG_TEST_OK(mg_poison(d.partial, (size_t)d.bound_rows * len, MG_PREC_FP32, st));
                mg_test_direct_launch(&d, &p, &dev, opts(), x, W, b, h, st);
                MG_TEST_CUDA(cudaStreamSynchronize(st));
                MG_TEST_CUDA(cudaGetLastError());
                const int rows = d.lp.partial_rows;
                if (max_ntiles_md1 && dim == 1 && rows > *max_ntiles_md1) *max_ntiles_md1 = rows;

                float *hp = hmalloc((size_t)rows * len * sizeof(float)), *got = hmalloc(len * sizeof(float));
                MG_TEST_CUDA(cudaMemcpy(hp, d.partial, (size_t)rows * len * sizeof(float), cudaMemcpyDeviceToHost));
                for (size_t i = 0; i < len; i++) {
                    double v = hp[i];
                    for (int t = 1; t < rows; t++) v = mg_nanmax(v, hp[(size_t)t * len + i]);
                    got[i] = (float)v;
                }
                if (d.lp.rem_chunks > 0) {
                    cr_assert(dim == 1 && d.lp.rem_cols >= 1 && d.lp.rem_cols <= 8, "kernel %d: remainder sums "
                              "with max_dim %d, %d columns", kern->id, dim, d.lp.rem_cols);
                    if (rem_launches) (*rem_launches)++;
                    const size_t nrem = (size_t)d.lp.rem_chunks * d.lp.rem_cols * len;
                    float *hr = hmalloc(nrem * sizeof(float));
                    MG_TEST_CUDA(cudaMemcpy(hr, (char *)d.ws + d.lp.rem_offset, nrem * sizeof(float),
                                            cudaMemcpyDeviceToHost));
                    for (size_t i = 0; i < len; i++)
                        for (int c = 0; c < d.lp.rem_cols; c++) {
                            float sum = hr[(size_t)c * len + i];   /* chunk 0; the chunks in ascending order */
                            for (int j = 1; j < d.lp.rem_chunks; j++)
                                sum += hr[((size_t)j * d.lp.rem_cols + c) * len + i];
                            got[i] = (float)mg_nanmax(got[i], sum);
                        }
                    free(hr);
                }
                /* fp64 maxima of y on the host, from the exact device inputs. */
                double *hx = download_widened(x, (size_t)(m * k), pr), *hw = download_widened(W, (size_t)(n * k), pr),
                       *hb = download_widened(b, (size_t)n, pr), *want = hmalloc(len * sizeof(double));
                for (size_t i = 0; i < len; i++) want[i] = -INFINITY;
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        double acc = 0.0;
                        for (int64_t q = 0; q < k; q++) acc += hx[i * k + q] * hw[j * k + q];
                        const double y = acc + hb[j];
                        if (dim == 1) want[i] = mg_nanmax(want[i], y); else want[j] = mg_nanmax(want[j], y);
                    }
                mg_check_result r;
                mg_check_f32(want, got, len, tol, tol, &r);
                const size_t fb = r.first_bad < len ? r.first_bad : 0;
                cr_expect(r.pass, "partial maxima kernel %d (%s) %s M=%lld N=%lld K=%lld max_dim %d (%d rows; %s): %zu of "
                          "%zu fail (%zu NaN mismatches), max_abs %.3g; first bad [%zu]: want %.9g got %.9g", kern->id,
                          kern->name, mg_precision_name(pr), (long long)m, (long long)n, (long long)k, dim, rows,
                          d.lp.summary, r.fails, r.n, r.nan_mismatch, r.max_abs, r.first_bad, want[fb], (double)got[fb]);
                ran++;
                free(hp); free(got); free(hx); free(hw); free(hb); free(want);
                mg_test_direct_free(&d);
                MG_TEST_CUDA(cudaFree(x)); MG_TEST_CUDA(cudaFree(W)); MG_TEST_CUDA(cudaFree(b));
            }
    }
    cr_assert(cublasDestroy(h) == CUBLAS_STATUS_SUCCESS, "cublasDestroy");
    MG_TEST_CUDA(cudaStreamDestroy(st));
    return ran;
}


ParameterizedTestParameters(gpu_kernels, partial_maxima) { return mg_test_registry_params(); }

ParameterizedTest(int *idx, gpu_kernels, partial_maxima, .timeout = 120) {
    const mg_kernel *kern = mg_test_kernel_or_skip(*idx);
    /* 3 x 5000 x 4100: kernels 4 and 6 split every tile by stream-K (the public API's max_dim 1 output is constant,
     * so this is the only check of the row maxima that path produces); K = 4100 also makes kernel 4 bf16 pad x. */
    const shape3 shapes[] = {{1, 1, 1}, {17, 33, 65}, {127, 257, 129}, {5, 7, 0}, {300, 520, 264}, {3, 5000, 4100}};
    const int ran = partial_maxima_cases(kern, shapes, (int)(sizeof shapes / sizeof shapes[0]), NULL, NULL);
    cr_expect(ran > 0, "kernel %d (%s) ran no partial-maxima case", kern->id, kern->name);
}

/* Kernel 4 (the tests of its launch choices), or skips the test where this build or GPU cannot run it. */
static const mg_kernel *kernel4_or_skip(void) {
    const mg_kernel *kern = mg_registry_find(4);
    if (!kern || !mg_kernel_available(kern) || mg_test_sm() < kern->min_sm) cr_skip_test("kernel 4 not runnable here");
    return kern;
}

/* Kernel 4's mixed-width column panels (ws_scheduler.cuh "PANELS": one 256-wide panel, the others 248, chosen at
 * the headline on 132 SMs). --mixed-panels force takes them wherever they fit N, off never: both must give the reference,
 * through the public API and in the partial maxima (max_dim 1 writes one partial row per panel, 33 here).
 * N = 8190 (33 panels, the last one ragged), 7936 (32 narrow panels, none wide), 8192 (the headline's N). */
Test(gpu_kernels, ws_mixed_panels, .timeout = 600) {
    MG_TEST_NEED_GPU();
    const mg_kernel *kern = kernel4_or_skip();
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    const shape3 pm[] = {{1000, 8190, 24}, {129, 7936, 40}, {300, 8192, 16}};
    const shape3 api[] = {{1000, 8190, 72}, {257, 8192, 200}};
    for (int force = 1; force >= 0; force--) {
        opt_reset();
        g_opt.mixed_panels = force ? MG_SWITCH_FORCE : MG_SWITCH_OFF;
        g_opt.tiles = MG_TILES_MAIN;   /* the configuration with the panels */
        int panels = 0;
        int ran = partial_maxima_cases(kern, pm, (int)(sizeof pm / sizeof pm[0]), &panels, NULL);
        cr_expect_eq(panels, force ? 33 : 32, "--mixed-panels %d: the widest max_dim 1 launch wrote %d partial rows "
                     "(column panels), expected %d", force, panels, force ? 33 : 32);
        for (int prec = 0; prec < MG_PREC_COUNT; prec++) {
            if (!(kern->precisions & (1u << prec))) continue;
            for (int si = 0; si < (int)(sizeof api / sizeof api[0]); si++)
                for (int md = 1; md >= 0; md--)
                    ran += run_case(kern, (mg_precision)prec, api[si].m, api[si].n, api[si].k, md,
                                    case_seed(kern->id, prec, 70 + si, md, force), PLANT_NONE, st);
        }
        cr_expect(ran > 0, "--mixed-panels %d: no case ran", force);
    }
    opt_reset();
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* Kernel 4's remainder split (ws_scheduler.cuh "PANELS", max_dim 1): every panel 248 wide and the r <= 8 last
 * columns summed in k-chunks by the tiles of the first panels, added up by the finalize. --rem-split force takes it
 * wherever the mixed panels would have one wide panel, off never; both must give the reference, in the partial maxima
 * (with the sums folded in) and through the public API, also with a NaN or +inf planted in the last columns (the
 * remainder's path: every row NaN) and a NaN row of x. Shapes: N = 8190 (r = 6, K = 72: 2 k-chunks in bf16),
 * 8192 (r = 8, 16 chunks), 8185 (r = 1); M = 300 shifts the last row of tiles (tile_row0). */
Test(gpu_kernels, ws_rem_split, .timeout = 600) {
    MG_TEST_NEED_GPU();
    const mg_kernel *kern = kernel4_or_skip();
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    const shape3 pm[] = {{1000, 8190, 72}, {300, 8192, 520}, {129, 8185, 200}};
    const shape3 api[] = {{1024, 8192, 1000}, {300, 8190, 136}, {1000, 8185, 72}};
    const plant_kind kinds[] = {PLANT_NONE, PLANT_LAST_W_NAN, PLANT_LAST_B_INF, PLANT_X};
    for (int force = 1; force >= 0; force--) {
        opt_reset();
        g_opt.tiles = MG_TILES_MAIN;   /* the configuration with the panels */
        g_opt.mixed_panels = MG_SWITCH_FORCE;
        g_opt.rem_split = force ? MG_SWITCH_FORCE : MG_SWITCH_OFF;
        int rem = 0;
        int ran = partial_maxima_cases(kern, pm, (int)(sizeof pm / sizeof pm[0]), NULL, &rem);
        /* max_dim 1 launches: 3 shapes x 2 precisions */
        cr_expect(force ? rem == 6 : rem == 0, "--rem-split %d: %d launches left remainder sums, expected %d", force,
                  rem, force ? 6 : 0);
        for (int prec = 0; prec < MG_PREC_COUNT; prec++) {
            if (!(kern->precisions & (1u << prec))) continue;
            for (int si = 0; si < (int)(sizeof api / sizeof api[0]); si++)
                for (int ki = 0; ki < (int)(sizeof kinds / sizeof kinds[0]); ki++)
                    ran += run_case(kern, (mg_precision)prec, api[si].m, api[si].n, api[si].k, 1,
                                    case_seed(kern->id, prec, 80 + si, ki, force), kinds[ki], st);
            /* max_dim 0 never splits: the same answer either way */
            ran += run_case(kern, (mg_precision)prec, 300, 8190, 136, 0, case_seed(kern->id, prec, 89, 0, force),
                            PLANT_LAST_W_NAN, st);
        }
        cr_expect(ran > 0, "--rem-split %d: no case ran", force);
    }
    opt_reset();
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* Kernel 7 (gemv_stream), the small-M kernel, beyond the suites (whose planted shape has M = 127): M = 1..13 with
 * each row-group width (MT = 1, 2, 4, 8; M = 9 and 13 run a second group of 1 and 5 rows), the 16-byte path (rows of
 * a multiple of 16 bytes) and the scalar path, N not a multiple of its 32 columns, non-finite values planted in x,
 * W and b, both max_dims, every precision; the partial maxima against fp64; and auto's choice of it up to its limits. */
Test(gpu_kernels, gemv_stream_small_m, .timeout = 600) {
    MG_TEST_NEED_GPU();
    const mg_kernel *kern = mg_registry_find_name("gemv_stream");
    if (!kern || !mg_kernel_available(kern) || mg_test_sm() < kern->min_sm) cr_skip_test("kernel 7 not runnable here");
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    /* 16-byte path in every precision: 1 x 8192 x 1024, 2 x 1000 x 520, 3 x 4099 x 264, 9 x 130 x 72 (a second
     * row group of 1 row); scalar path: 5 x 257 x 129, 13 x 8192 x 4098 (a second group of 5 rows); fp32 16-byte and
     * bf16 scalar: 8 x 300 x 4100. (Not covered: x or W offset from 16-byte alignment with 16-byte rows, which
     * takes the scalar path by the launcher's pointer check.) */
    const shape3 api[] = {{1, 8192, 1024}, {2, 1000, 520}, {3, 4099, 264}, {5, 257, 129}, {8, 300, 4100},
                          {9, 130, 72}, {13, 8192, 4098}};
    const plant_kind kinds[] = {PLANT_NONE, PLANT_X_SMALL, PLANT_W_NEGINF, PLANT_B_NAN, PLANT_LAST_W_NAN,
                                PLANT_LAST_B_INF};
    int ran = 0;
    for (int prec = 0; prec < MG_PREC_COUNT; prec++) {
        if (!(kern->precisions & (1u << prec))) continue;
        for (int si = 0; si < (int)(sizeof api / sizeof api[0]); si++)
            for (int ki = 0; ki < (int)(sizeof kinds / sizeof kinds[0]); ki++)
                for (int dim = 1; dim >= 0; dim--)
                    ran += run_case(kern, (mg_precision)prec, api[si].m, api[si].n, api[si].k, dim,
                                    case_seed(kern->id, prec, 90 + si, dim, ki), kinds[ki], st);
    }
    cr_expect_eq(ran, 3 * 7 * 6 * 2, "kernel 7 ran %d of %d public-API cases", ran, 3 * 7 * 6 * 2);
    const shape3 pm[] = {{1, 8192, 1024}, {3, 4099, 264}, {8, 300, 4100}, {9, 130, 72}};
    const int pran = partial_maxima_cases(kern, pm, (int)(sizeof pm / sizeof pm[0]), NULL, NULL);
    cr_expect_eq(pran, 3 * 4 * 2, "kernel 7 ran %d of %d partial-maxima cases", pran, 3 * 4 * 2);
    /* auto, through a plan: kernel 7 at its limit in each precision (registry.c), a tiled kernel one row above */
    for (int prec = 0; prec < MG_PREC_COUNT; prec++) {
        const int lim = mg_gemv_auto_max_m((mg_precision)prec);
        cr_assert(lim > 0, "kernel 7 has no auto limit for %s", mg_precision_name((mg_precision)prec));
        for (int m = lim; m <= lim + 1; m++) {
            mg_plan_desc d = mg_plan_desc_default();
            d.m = m;
            d.n = 8192;
            d.k = 1024;
            d.precision = (mg_precision)prec;
            mg_plan *plan = NULL;
            MG_TEST_OK(mg_plan_create(&plan, &d));
            if (m <= lim)
                cr_expect_eq(mg_plan_kernel(plan), kern->id, "%s auto plan M=%d took %s",
                             mg_precision_name((mg_precision)prec), m, mg_plan_kernel_name(plan));
            else
                cr_expect_neq(mg_plan_kernel(plan), kern->id, "%s auto plan M=%d took gemv_stream",
                              mg_precision_name((mg_precision)prec), m);
            mg_plan_destroy(plan);
        }
    }
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* Sub-batches of one plan (mg_forward_rows, m <= M) through stream-K: the launcher's own workspace region (padded x)
 * grows with m, so the stream-K flags must sit where m does not move them, or a launch finds the previous
 * launch's data where its zeroed flags should be. Each sub-batch of an M = 256 (or 1024) plan must give the same bits as a
 * fresh plan made for exactly that m. Kernel 6 fp32 (K = 4096) and kernel 4 bf16 (K = 4100: x padded per call),
 * max_dim 0 (its output depends on every column maximum), N = 8192: every m below splits all its tiles. */
Test(gpu_kernels, stream_k_sub_batches, .timeout = 300) {
    MG_TEST_NEED_GPU();
    /* the last case: an M = 1024 kernel 4 plan runs the main tile configuration, its sub-batches of m = 64, 3 the
     * small-M one and m = 200 the mid-M one (other stream-K slot sizes, the same flags): switching back and forth
     * must not matter */
    const struct { int kernel; mg_precision prec; int64_t k, M; } cfgs[] = {
        {6, MG_PREC_FP32, 4096, 256}, {4, MG_PREC_BF16, 4100, 256}, {4, MG_PREC_TF32, 1000, 1024}};
    const int64_t N = 8192;
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    int ran = 0;
    for (size_t ci = 0; ci < sizeof cfgs / sizeof cfgs[0]; ci++) {
        const mg_kernel *kern = mg_registry_find(cfgs[ci].kernel);
        if (!kern || !mg_kernel_available(kern) || mg_test_sm() < kern->min_sm) continue;
        const mg_precision pr = cfgs[ci].prec;
        const int64_t k = cfgs[ci].k, M = cfgs[ci].M;
        const int64_t rows[] = {M, 64, M, 3, 200, M};
        const size_t es = esize(pr);
        mg_plan_desc d = mg_plan_desc_default();
        d.m = M; d.n = N; d.k = k; d.max_dim = 0; d.precision = pr; d.kernel = cfgs[ci].kernel;
        mg_plan *big = NULL;
        MG_TEST_OK(mg_plan_create(&big, &d));
        void *x = dmalloc((size_t)(M * k) * es), *W = dmalloc((size_t)(N * k) * es), *b = dmalloc((size_t)N * es);
        void *o1 = dmalloc((size_t)N * es), *o2 = dmalloc((size_t)N * es);
        void *h1 = hmalloc((size_t)N * es), *h2 = hmalloc((size_t)N * es);
        MG_TEST_OK(mg_fill_seedlike(x, W, b, M, N, k, pr, case_seed(kern->id, pr, 40 + (int)ci, 0, 0), st));
        MG_TEST_OK(mg_set_weights(big, W, b, st));
        for (size_t ri = 0; ri < sizeof rows / sizeof rows[0]; ri++) {
            const int64_t m = rows[ri];
            MG_TEST_OK(mg_forward_rows(big, m, x, o1, st));
            mg_plan *one = NULL;
            d.m = m;
            MG_TEST_OK(mg_plan_create(&one, &d));
            MG_TEST_OK(mg_set_weights(one, W, b, st));
            MG_TEST_OK(mg_forward(one, x, o2, st));
            MG_TEST_CUDA(cudaMemcpyAsync(h1, o1, (size_t)N * es, cudaMemcpyDeviceToHost, st));
            MG_TEST_CUDA(cudaMemcpyAsync(h2, o2, (size_t)N * es, cudaMemcpyDeviceToHost, st));
            MG_TEST_CUDA(cudaStreamSynchronize(st));
            mg_plan_destroy(one);
            size_t diff = 0, first = 0;
            for (size_t j = 0; j < (size_t)N; j++)
                if (memcmp((char *)h1 + j * es, (char *)h2 + j * es, es) != 0 && diff++ == 0) first = j;
            cr_expect(diff == 0, "kernel %d (%s) %s M=%lld plan, sub-batch %zu (m = %lld) K=%lld: %zu of %lld outputs "
                      "differ from a plan made for m; first [%zu]: %.9g vs %.9g", kern->id, kern->name,
                      mg_precision_name(pr), (long long)M, ri, (long long)m, (long long)k, diff, (long long)N, first,
                      out_value(h1, first, pr), out_value(h2, first, pr));
            ran++;
        }
        mg_plan_destroy(big);
        free(h1); free(h2);
        MG_TEST_CUDA(cudaFree(x)); MG_TEST_CUDA(cudaFree(W)); MG_TEST_CUDA(cudaFree(b));
        MG_TEST_CUDA(cudaFree(o1)); MG_TEST_CUDA(cudaFree(o2));
    }
    cr_expect(ran > 0, "no stream-K sub-batch case ran (kernels 4 and 6 not built or no sm_90 GPU)");
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* --streamk force (kernels 4 and 6): the whole waves run whole tiles and the last partial wave is split into one
 * k-range per SM (src/ws_policy.h), or every tile when there is less than one wave. On a 132-SM GPU: 600 x 1800 with
 * the small 64 x 128 tiles is 10 x 15 = 150 tiles (132 whole, 18 split); 300 x 8192 with the main 128 x 256 tiles is
 * 96 tiles, all split (auto keeps them whole). Partial maxima against the fp64 reference, then the public API's
 * suite and planted NaN/inf under the same option. */
Test(gpu_kernels, ws_streamk_force, .timeout = 900) {
    MG_TEST_NEED_GPU();
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    const shape3 small_shapes[] = {{600, 1800, 1930}, {601, 1799, 1001}, {127, 257, 129}};
    const shape3 main_shapes[] = {{300, 8192, 520}, {3, 5000, 4100}};
    int ran = 0;
    for (int id = 4; id <= 6; id += 2) {
        const mg_kernel *kern = mg_registry_find(id);
        if (!kern || !mg_kernel_available(kern) || mg_test_sm() < kern->min_sm) continue;
        opt_reset();
        g_opt.streamk = MG_SWITCH_FORCE;
        if (id == 4) {
            g_opt.tiles = MG_TILES_SMALL;
            ran += partial_maxima_cases(kern, small_shapes, 3, NULL, NULL);
            g_opt.tiles = MG_TILES_MAIN;
        }
        ran += partial_maxima_cases(kern, main_shapes, 2, NULL, NULL);
        g_opt.tiles = MG_TILES_AUTO;
        ran += suite_cases(kern, st, 70, NULL);
        ran += planted_cases(kern, st, 72);
    }
    opt_reset();
    if (ran == 0) cr_skip_test("kernels 4 and 6 not runnable here");
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* Kernel 4 has four tile configurations (tile_configs/wgmma_ws.cfg: the main one, the mid-M, the small-M and the
 * 128 x 192 one) and
 * picks one by the problem; which one a test shape meets depends on the GPU's SM count. --tiles forces each in
 * turn, so all of them run every shape of the kernel suite (outputs against the fp64 reference, planted NaN/inf, and
 * the partial maxima, the only check of the max_dim 1 row maxima), whichever the automatic choice would be. */
Test(gpu_kernels, ws_tile_configs, .timeout = 900) {
    MG_TEST_NEED_GPU();
    const mg_kernel *kern = kernel4_or_skip();
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    const shape3 pm[] = {{1, 1, 1}, {17, 33, 65}, {127, 257, 129}, {5, 7, 0}, {300, 520, 264}, {3, 5000, 4100},
                         {200, 8192, 1024}, {300, 8192, 520}};
    const mg_tiles tiles[] = {MG_TILES_MAIN, MG_TILES_MID, MG_TILES_SMALL, MG_TILES_N192};
    for (int t = 0; t < 4; t++) {
        opt_reset();
        g_opt.tiles = tiles[t];
        int ran = suite_cases(kern, st, 50 + t, NULL);
        ran += planted_cases(kern, st, 60);
        ran += partial_maxima_cases(kern, pm, (int)(sizeof pm / sizeof pm[0]), NULL, NULL);
        cr_expect(ran > 0, "--tiles %s: no case ran", mg_tiles_name(tiles[t]));
    }
    opt_reset();
    MG_TEST_CUDA(cudaStreamDestroy(st));
}
