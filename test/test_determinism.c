/* test_determinism.c: the GPU suite gpu_determinism (skips cleanly without a CUDA device).
 *
 * Every built registry kernel, every precision it claims, both max_dims, short-circuit off, at a mid shape
 * (1000 x 2048 x 1024), an odd one (333 x 517 x 263) and a small-M one (96 x 1000 x 2056); the naive SIMT kernel not
 * at the mid shape. Each case
 * draws fresh seed-like inputs and runs the same inputs REPS = 100 times, back to back on one stream with no host
 * synchronisation in between (so a kernel that carries state from one launch into the next, e.g. a persistent
 * kernel's tile counter, is exercised), each run into its own poisoned slice of one output buffer:
 *   forward_bitwise   through the public API (mg_forward): every run's output equals run 0's bit for bit
 *                     (fp32/tf32: mg_bitwise_diff_f32; bf16: the raw uint16 bits with memcmp), and run 0 passes the
 *                     precision's bar against the fp64 GPU reference (so identical garbage cannot pass).
 *   partials_bitwise  through the kernel contract (plan + launch, mg_kernel.h): the partial-maxima rows of every run
 *                     equal run 0's bit for bit, every run plans the same partial rows, and no partial entry of run 0
 *                     still holds the poison pattern. Through the public API the max_dim 1 output is +0.0 whatever
 *                     the row maxima are, so this is where row-max (and column-max) nondeterminism shows.
 * A kernel that declines a shape (MG_ERR_UNSUPPORTED) is logged and skipped for that shape; a kernel that runs no
 * case at all fails.
 */
#include "test_common.h"

#include <criterion/logging.h>
#include <criterion/parameterized.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdlib.h>

#include "check.h"
#include "gpu_util.h"
#include "mg_kernel.h"
#include "reference.h"

enum { REPS = 100 };


typedef struct { int64_t m, n, k; } det_shape;
/* The mid shape first; the odd one has no dimension a multiple of 8 (ragged tiles on every edge); the small-M one is
 * where kernel 8 (M <= 256) runs, and on 132 SMs its policy splits K there (5 splits of 96 x 1000 x 2056 in bf16:
 * the split-K fix-up under the bitwise check). */
static const det_shape DET_SHAPES[] = {{1000, 2048, 1024}, {333, 517, 263}, {96, 1000, 2056}};
enum { DET_N_SHAPES = sizeof DET_SHAPES / sizeof DET_SHAPES[0], DET_MID = 0 };

static void *det_dmalloc(size_t bytes) {
    void *p = NULL;
    MG_TEST_CUDA(cudaMalloc(&p, bytes ? bytes : 16));
    return p;
}
static void *det_hmalloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 16);
    cr_assert(p != NULL, "host allocation of %zu bytes failed", bytes);
    return p;
}

static uint64_t det_seed(int kernel_id, int prec, int shape, int dim, int test) {
    return 0xde7e4d1500000000ull ^ ((uint64_t)(kernel_id + 1) << 24) ^ ((uint64_t)prec << 16) ^
           ((uint64_t)shape << 8) ^ ((uint64_t)dim << 4) ^ (uint64_t)test;
}

/* Index of the first run (1..REPS-1) whose len elements differ from run 0, and how many runs differ. */
static int first_differing_run(const void *h, size_t len, mg_precision prec, int *ndiff, size_t *nelems) {
    const size_t es = mg_elem_bytes(prec);
    int first = -1;
    *ndiff = 0;
    *nelems = 0;
    for (int r = 1; r < REPS; r++) {
        const char *a = (const char *)h, *b = (const char *)h + (size_t)r * len * es;
        size_t d;
        if (prec == MG_PREC_BF16) {
            d = 0;
            if (memcmp(a, b, len * es) != 0)
                for (size_t i = 0; i < len; i++) d += ((const uint16_t *)a)[i] != ((const uint16_t *)b)[i];
        } else {
            d = mg_bitwise_diff_f32((const float *)a, (const float *)b, len);
        }
        if (d) {
            if (first < 0) { first = r; *nelems = d; }
            (*ndiff)++;
        }
    }
    return first;
}

/* ---- public API -------------------------------------------------------------------------------------------------- */

/* Returns 1 when the case ran, 0 when the kernel declined it. */
static int forward_case(const mg_kernel *kern, mg_precision prec, int si, int dim, cudaStream_t st) {
    const int64_t m = DET_SHAPES[si].m, n = DET_SHAPES[si].n, k = DET_SHAPES[si].k;
    const size_t es = mg_elem_bytes(prec), len = (size_t)(dim == 1 ? m : n);
    mg_plan_desc d = mg_plan_desc_default();
    d.m = m;
    d.n = n;
    d.k = k;
    d.max_dim = dim;
    d.precision = prec;
    d.kernel = kern->id;
    d.shortcut = 0;   /* the kernel, not the certificate */
    mg_plan *plan = NULL;
    mg_status s = mg_plan_create(&plan, &d);
    if (s == MG_ERR_UNSUPPORTED) {
        cr_log_warn("kernel %d (%s) %s %lldx%lldx%lld: unsupported: %s", kern->id, kern->name, mg_precision_name(prec),
                    (long long)m, (long long)n, (long long)k, mg_last_error());
        return 0;
    }
    cr_assert(s == MG_OK, "mg_plan_create kernel %d (%s) %s: %s (%s)", kern->id, kern->name, mg_precision_name(prec),
              mg_strerror(s), mg_last_error());

    void *x = det_dmalloc((size_t)(m * k) * es), *W = det_dmalloc((size_t)(n * k) * es), *b = det_dmalloc((size_t)n * es);
    void *out = det_dmalloc((size_t)REPS * len * es);
    double *ref_d = det_dmalloc(len * sizeof(double));
    MG_TEST_OK(mg_fill_seedlike(x, W, b, m, n, k, prec, det_seed(kern->id, prec, si, dim, 0), st));
    MG_TEST_OK(mg_set_weights(plan, W, b, st));
    MG_TEST_OK(mg_poison(out, (size_t)REPS * len, prec, st));
    for (int r = 0; r < REPS; r++) MG_TEST_OK(mg_forward(plan, x, (char *)out + (size_t)r * len * es, st));
    MG_TEST_OK(mg_gpu_reference(x, W, b, m, n, k, dim, prec, ref_d, st));
    MG_TEST_CUDA(cudaStreamSynchronize(st));
    MG_TEST_CUDA(cudaGetLastError());

    void *h = det_hmalloc((size_t)REPS * len * es);
    double *ref = det_hmalloc(len * sizeof(double));
    MG_TEST_CUDA(cudaMemcpy(h, out, (size_t)REPS * len * es, cudaMemcpyDeviceToHost));
    MG_TEST_CUDA(cudaMemcpy(ref, ref_d, len * sizeof(double), cudaMemcpyDeviceToHost));

    /* Run 0 is right (so agreement is not agreement on garbage or on the untouched poison). */
    const double tol = mg_precision_tolerance(prec);
    mg_check_result cr;
    if (prec == MG_PREC_BF16)
        mg_check_bf16(ref, (const uint16_t *)h, len, tol, tol, &cr);
    else
        mg_check_f32(ref, (const float *)h, len, tol, tol, &cr);
    cr_expect(cr.pass, "kernel %d (%s) %s %lldx%lldx%lld max_dim %d: run 0 fails the bar: %zu of %zu outside "
              "atol=rtol=%g (%zu NaN mismatches), max_abs %.3g, first bad [%zu]", kern->id, kern->name,
              mg_precision_name(prec), (long long)m, (long long)n, (long long)k, dim, cr.fails, cr.n, tol,
              cr.nan_mismatch, cr.max_abs, cr.first_bad);

    int ndiff;
    size_t nelems;
    const int first = first_differing_run(h, len, prec, &ndiff, &nelems);
    cr_expect(first < 0, "kernel %d (%s) %s %lldx%lldx%lld max_dim %d: NOT deterministic: %d of %d runs differ from "
              "run 0 (first: run %d, %zu of %zu elements)", kern->id, kern->name, mg_precision_name(prec),
              (long long)m, (long long)n, (long long)k, dim, ndiff, REPS - 1, first, nelems, len);

    free(h);
    free(ref);
    mg_plan_destroy(plan);
    MG_TEST_CUDA(cudaFree(x));
    MG_TEST_CUDA(cudaFree(W));
    MG_TEST_CUDA(cudaFree(b));
    MG_TEST_CUDA(cudaFree(out));
    MG_TEST_CUDA(cudaFree(ref_d));
    return 1;
}

ParameterizedTestParameters(gpu_determinism, forward_bitwise) { return mg_test_registry_params(); }

ParameterizedTest(int *idx, gpu_determinism, forward_bitwise, .timeout = 120) {
    const mg_kernel *kern = mg_test_kernel_or_skip(*idx);
    cudaStream_t st;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    int ran = 0;
    for (int prec = 0; prec < MG_PREC_COUNT; prec++) {
        if (!(kern->precisions & (1u << prec))) continue;
        for (int si = 0; si < DET_N_SHAPES; si++) {
            if (si == DET_MID && mg_test_is_naive(kern)) continue;   /* SIMT: small shapes only */
            for (int dim = 1; dim >= 0; dim--) ran += forward_case(kern, (mg_precision)prec, si, dim, st);
        }
    }
    cr_expect(ran > 0, "kernel %d (%s) ran no determinism case", kern->id, kern->name);
    MG_TEST_CUDA(cudaStreamDestroy(st));
}

/* ---- the kernel contract: partial maxima --------------------------------------------------------------------- */

static int partials_case(const mg_kernel *kern, mg_precision prec, int si, int dim, int sm, const mg_device *dev,
                         cublasHandle_t h, cudaStream_t st) {
    const int64_t m = DET_SHAPES[si].m, n = DET_SHAPES[si].n, k = DET_SHAPES[si].k;
    const mg_problem p = {(int)m, (int)n, (int)k, dim, prec, 0};
    const mg_kernel_ops *ops = kern->ops;
    if (ops->supports && ops->supports(&p, sm) != MG_OK) {
        cr_log_warn("kernel %d (%s) %s %lldx%lldx%lld: unsupported: %s", kern->id, kern->name, mg_precision_name(prec),
                    (long long)m, (long long)n, (long long)k, mg_last_error());
        return 0;
    }
    const size_t es = mg_elem_bytes(prec), len = (size_t)(dim == 1 ? m : n);
    void *x = det_dmalloc((size_t)(m * k) * es), *W = det_dmalloc((size_t)(n * k) * es), *b = det_dmalloc((size_t)n * es);
    MG_TEST_OK(mg_fill_seedlike(x, W, b, m, n, k, prec, det_seed(kern->id, prec, si, dim, 1), st));
    mg_test_direct d;
    mg_test_direct_setup(&d, kern, &p, dev, W, b, st);
    const mg_options opt = mg_options_default();
    const size_t per_run = (size_t)d.bound_rows * len;   /* floats */
    float *hp = det_hmalloc((size_t)REPS * per_run * sizeof(float));
    int ntiles0 = -1, ntiles_differ = 0;
    for (int r = 0; r < REPS; r++) {
        /* every run plans anew (the plan is a pure function of the problem) and writes into poisoned rows */
        MG_TEST_OK(mg_poison(d.partial, per_run, MG_PREC_FP32, st));
        mg_test_direct_launch(&d, &p, dev, &opt, x, W, b, h, st);
        MG_TEST_CUDA(cudaMemcpyAsync(hp + (size_t)r * per_run, d.partial, per_run * sizeof(float),
                                     cudaMemcpyDeviceToHost, st));
        if (r == 0) ntiles0 = d.lp.partial_rows;
        else ntiles_differ += d.lp.partial_rows != ntiles0;
    }
    MG_TEST_CUDA(cudaStreamSynchronize(st));
    MG_TEST_CUDA(cudaGetLastError());
    cr_expect(ntiles_differ == 0, "kernel %d (%s): %d runs planned a different number of partial rows than run 0 (%d)",
              kern->id, kern->name, ntiles_differ, ntiles0);

    const size_t written = (size_t)ntiles0 * len;   /* the rows the contract says were written */
    size_t unwritten = 0, first_unwritten = written;
    for (size_t i = 0; i < written; i++) {
        uint32_t bits;
        memcpy(&bits, &hp[i], 4);
        if (bits == 0x7fbadbadu && unwritten++ == 0) first_unwritten = i;
    }
    cr_expect(unwritten == 0, "kernel %d (%s) %s %lldx%lldx%lld max_dim %d: %zu of %zu partial entries of run 0 "
              "still hold the poison (first [%zu])", kern->id, kern->name, mg_precision_name(prec), (long long)m,
              (long long)n, (long long)k, dim, unwritten, written, first_unwritten);
    int ndiff = 0, first = -1;
    size_t first_elems = 0, first_idx = 0;
    for (int r = 1; r < REPS; r++) {
        const float *cur = hp + (size_t)r * per_run;
        if (memcmp(hp, cur, written * sizeof(float)) == 0) continue;
        if (first < 0) {
            first = r;
            for (size_t i = 0; i < written; i++)
                if (memcmp(&hp[i], &cur[i], 4) != 0 && first_elems++ == 0) first_idx = i;
        }
        ndiff++;
    }
    cr_expect(first < 0, "kernel %d (%s) %s %lldx%lldx%lld max_dim %d: partial maxima NOT deterministic: %d of %d runs "
              "differ from run 0 (first: run %d, %zu of %zu entries, first at tile %zu index %zu: %.9g vs %.9g)",
              kern->id, kern->name, mg_precision_name(prec), (long long)m, (long long)n, (long long)k, dim, ndiff,
              REPS - 1, first, first_elems, written, first_idx / len, first_idx % len, (double)hp[first_idx],
              first >= 0 ? (double)hp[(size_t)first * per_run + first_idx] : 0.0);

    free(hp);
    mg_test_direct_free(&d);
    MG_TEST_CUDA(cudaFree(x));
    MG_TEST_CUDA(cudaFree(W));
    MG_TEST_CUDA(cudaFree(b));
    return 1;
}

ParameterizedTestParameters(gpu_determinism, partials_bitwise) { return mg_test_registry_params(); }

ParameterizedTest(int *idx, gpu_determinism, partials_bitwise, .timeout = 120) {
    const mg_kernel *kern = mg_test_kernel_or_skip(*idx);
    const int sm = mg_test_sm();
    mg_device dev;
    cudaStream_t st;
    cublasHandle_t h;
    mg_test_launch_env(&st, &h, &dev);
    int ran = 0;
    for (int prec = 0; prec < MG_PREC_COUNT; prec++) {
        if (!(kern->precisions & (1u << prec))) continue;
        for (int si = 0; si < DET_N_SHAPES; si++) {
            if (si == DET_MID && mg_test_is_naive(kern)) continue;
            for (int dim = 1; dim >= 0; dim--)
                ran += partials_case(kern, (mg_precision)prec, si, dim, sm, &dev, h, st);
        }
    }
    cr_expect(ran > 0, "kernel %d (%s) ran no partial-maxima determinism case", kern->id, kern->name);
    cublasDestroy(h);
    MG_TEST_CUDA(cudaStreamDestroy(st));
}
