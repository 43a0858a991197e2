/* soak.c: build/maxgemm_soak, a reliability soak of the public API (notes/reliability.md).
 *
 *   maxgemm_soak [--calls N] [--check-every C] [--seed S] [--kernels 0,3,4] [--verbose]
 *
 * What it does, in two identical ROUNDS of N/2 forward calls each (the second round replays the first one's
 * shapes, kernels and call sequence with fresh input data, so every lazily loaded module and every library-internal
 * first-use allocation happens in round 1, and round 2 measures the steady state):
 *   phase 1, ONE plan, many batch sizes: for every configuration (each built registry kernel x each precision it
 *     claims, whose min_sm the GPU meets, plus auto per precision) a long-lived plan of capacity M takes a stream of
 *     mg_forward_rows(plan, m, ...) with m varying over [1, M] (m = 1 and m = M included). Per configuration two
 *     plans: max_dim 0, and max_dim 1 with -inf planted in W (so the short-circuit cannot decide any row and the
 *     gather -> kernel -> scatter fallback runs), the short-circuit toggled on/off call by call. Halfway through,
 *     mg_set_weights is called again on the live plan with new weights; x is refreshed every 128 calls.
 *   phase 2, MANY plans: create / reject checks / set_weights / 1-8 forwards / (sometimes) set_weights again /
 *     destroy, over random configurations, M, N, K (K = 0 included), max_dim in {-2,-1,0,1}, short-circuit on/off,
 *     and planted non-finite inputs (NaN row in x, -inf in W, NaN in b) on a quarter of the plans.
 * Every call's status is checked; mismatched shapes must be rejected with MG_ERR_SHAPE and a message naming the
 * rejected m (m = 0 and m = M+1), forward before mg_set_weights must give MG_ERR_NO_WEIGHTS with a message.
 * Every C-th forward call (counted within a round) is spot-checked: the output is poisoned first, then compared with
 * the fp64 GPU reference (mg_gpu_reference) at the precision's bar (mg_check_*), and for max_dim 1 every finite row
 * must be exactly +0.0.
 *
 * Memory: cudaMemGetInfo free bytes are taken at the start, after round 1 and after round 2, each after destroying
 * every plan, cudaDeviceSynchronize and trimming the default stream-ordered pool (mg_gpu_reference allocates from
 * it; cached pool memory is not a leak). The leak criterion is round 2's change: more than 1 MiB less free memory
 * after round 2 than after round 1 fails. The start -> round 1 change (module loading, cuBLAS first use) is printed.
 * Host: getrusage max RSS after round 1 and after round 2; growth over the second half above 64 MiB fails, above
 * 4 MiB warns (a sanity signal: max RSS is a high-water mark).
 *
 * Exit status: 0 pass, 1 any error, 2 bad usage, 77 no CUDA device (skipped).
 */
#include "check.h"
#include "gpu_util.h"
#include "maxgemm.h"
#include "mg_kernel.h"
#include "reference.h"
#include "rng.h"

#include <cuda_runtime.h>

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* ---- limits of the soak's shapes (moderate: the whole soak must stay well under 3 minutes on an H200) ---------- */
enum { MAX_M = 1024, MAX_N = 2048, MAX_K = 2048, NAIVE_MAX_M = 256, NAIVE_MAX_N = 512, NAIVE_MAX_K = 512 };
enum { MAX_CFG = 64, MAX_PRINTED_ERRORS = 40, SYNC_EVERY = 64, X_REFRESH_EVERY = 128 };
static const double LEAK_LIMIT_BYTES = 1048576.0;                 /* 1 MiB of device memory */
static const double RSS_WARN_KIB = 4096.0, RSS_FAIL_KIB = 65536.0; /* host max RSS growth over round 2 */

typedef struct cfg {
    int kernel;                 /* registry id, or MG_KERNEL_AUTO */
    mg_precision prec;
    char label[48];
    /* counters, over both rounds */
    long plans, refused, calls, checks;
} cfg;

typedef struct soak {
    uint64_t seed;
    long calls_target, check_every;
    int verbose;
    cfg cfgs[MAX_CFG];
    int ncfg;
    int sm;
    cudaStream_t st;
    /* the soak's own device buffers, allocated once at the largest shapes (so the memory figures see only the
     * library's allocations come and go) */
    void *x, *W, *b, *out;
    double *ref_d;
    double *ref_h;
    void *out_h;
    /* the choice RNG: reset at the start of each round so round 2 replays round 1's shapes */
    uint64_t choice_ctr;
    int round;
    long round_calls;           /* valid forward calls in the current round (the spot-check counter) */
    /* totals */
    long calls, plans, refused, checks, check_fails, rejections, errors;
} soak;

/* ---- errors ---------------------------------------------------------------------------------------------------- */
static void soak_error(soak *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void soak_error(soak *s, const char *fmt, ...) {
    s->errors++;
    if (s->errors > MAX_PRINTED_ERRORS) {
        if (s->errors == MAX_PRINTED_ERRORS + 1) printf("  (further errors counted, not printed)\n");
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    printf("  ERROR [round %d]: ", s->round);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

/* A CUDA failure of the soak's own calls, or a sticky error surfacing at a sync: nothing after it can be trusted
 * (an illegal address poisons the context), so the soak stops with the summary of what it saw. */
static void fatal_cuda(soak *s, const char *what, cudaError_t e) {
    soak_error(s, "%s: %s (%s); the CUDA context is unusable, stopping", what, cudaGetErrorString(e),
               cudaGetErrorName(e));
    printf("RESULT: FAIL (stopped early: %ld calls, %ld plans, %ld errors)\n", s->calls, s->plans, s->errors);
    exit(1);
}
#define SOAK_CUDA(s, call)                                                                                      \
    do {                                                                                                        \
        cudaError_t e_ = (call);                                                                                \
        if (e_ != cudaSuccess) fatal_cuda((s), #call, e_);                                                      \
    } while (0)

/* Synchronises the stream and surfaces asynchronous faults. */
static void sync_check(soak *s, const char *where) {
    cudaError_t e = cudaStreamSynchronize(s->st);
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) fatal_cuda(s, where, e);
}

/* ---- choices --------------------------------------------------------------------------------------------------- */
static uint64_t rnd(soak *s) { return mg_splitmix64(s->seed ^ mg_splitmix64(0xc0ffeeull + s->choice_ctr++)); }
/* Uniform in [lo, hi]. */
static int64_t rnd_range(soak *s, int64_t lo, int64_t hi) { return lo + (int64_t)(rnd(s) % (uint64_t)(hi - lo + 1)); }
/* A dimension in [lo, hi]: often a multiple of 64 (the tile-friendly case), often odd, sometimes an extreme. */
static int64_t rnd_dim(soak *s, int64_t lo, int64_t hi) {
    const int kind = (int)(rnd(s) % 8);
    if (kind == 0) return lo;
    if (kind == 1) return hi;
    if (kind <= 3 && hi >= 64) {
        int64_t v = rnd_range(s, 1, hi / 64) * 64;
        return v < lo ? lo : v;
    }
    int64_t v = rnd_range(s, lo, hi);
    if (kind <= 5 && v % 2 == 0 && v + 1 <= hi) v++;   /* odd: the ragged-edge case */
    return v;
}
/* A batch size for a call on a plan of capacity M: 1 and M often, otherwise anything in between. */
static int64_t rnd_rows(soak *s, int64_t M) {
    const int kind = (int)(rnd(s) % 8);
    if (kind == 0) return 1;
    if (kind == 1) return M;
    return rnd_range(s, 1, M);
}
/* Data seeds differ between rounds (fresh inputs), choice seeds do not. */
static uint64_t data_seed(soak *s) { return mg_splitmix64(rnd(s) ^ ((uint64_t)s->round << 60) ^ 0xda7aull); }

static int is_naive(int kernel) {
    const mg_kernel *k = kernel >= 0 ? mg_registry_find(kernel) : NULL;
    return k && strcmp(k->name, "naive") == 0;
}

/* ---- inputs ---------------------------------------------------------------------------------------------------- */
typedef enum { PLANT_NONE = 0, PLANT_X_NAN_ROW, PLANT_W_NEGINF, PLANT_B_NAN, PLANT_COUNT } plant_kind;
static const char *plant_name(plant_kind p) {
    static const char *n[] = {"none", "NaN in an x row", "-inf in W", "NaN in b"};
    return n[p];
}

static void store_elem(soak *s, void *d, size_t idx, mg_precision prec, float v) {
    if (prec == MG_PREC_BF16) {
        uint16_t h = mg_f32_to_bf16(v);
        SOAK_CUDA(s, cudaMemcpyAsync((uint16_t *)d + idx, &h, 2, cudaMemcpyHostToDevice, s->st));
        sync_check(s, "store_elem");   /* the source is a local */
    } else {
        SOAK_CUDA(s, cudaMemcpyAsync((float *)d + idx, &v, 4, cudaMemcpyHostToDevice, s->st));
        sync_check(s, "store_elem");
    }
}

/* Plants kind into the current inputs; returns the kind actually planted (NONE if the shape cannot hold it). */
static plant_kind plant(soak *s, plant_kind kind, int64_t m, int64_t n, int64_t k, mg_precision prec) {
    switch (kind) {
    case PLANT_X_NAN_ROW:
        if (k < 1) return PLANT_NONE;
        store_elem(s, s->x, (size_t)((m / 2) * k + k / 3), prec, NAN);
        return kind;
    case PLANT_W_NEGINF:
        if (k < 1) return PLANT_NONE;
        store_elem(s, s->W, (size_t)((n / 2) * k + k / 3), prec, -INFINITY);
        return kind;
    case PLANT_B_NAN:
        store_elem(s, s->b, (size_t)(n / 3), prec, NAN);
        return kind;
    default:
        return PLANT_NONE;
    }
}

static void fill_all(soak *s, int64_t m, int64_t n, int64_t k, mg_precision prec, uint64_t seed) {
    mg_status st = mg_fill_seedlike(s->x, s->W, s->b, m, n, k, prec, seed, s->st);
    if (st != MG_OK) soak_error(s, "mg_fill_seedlike: %s (%s)", mg_strerror(st), mg_last_error());
}
static void fill_weights(soak *s, int64_t n, int64_t k, mg_precision prec, uint64_t seed) {
    const float bound = k > 0 ? (float)(1.0 / sqrt((double)k)) : 1.0f;
    mg_status st = mg_fill_uniform(s->W, (size_t)(n * k), prec, seed, MG_RNG_W, -bound, bound, s->st);
    if (st == MG_OK) st = mg_fill_uniform(s->b, (size_t)n, prec, seed, MG_RNG_B, -bound, bound, s->st);
    if (st != MG_OK) soak_error(s, "mg_fill_uniform (weights): %s (%s)", mg_strerror(st), mg_last_error());
}
static void fill_x(soak *s, int64_t m, int64_t k, mg_precision prec, uint64_t seed) {
    mg_status st = mg_fill_uniform(s->x, (size_t)(m * k), prec, seed, MG_RNG_X, 0.0f, 1.0f, s->st);
    if (st != MG_OK) soak_error(s, "mg_fill_uniform (x): %s (%s)", mg_strerror(st), mg_last_error());
}

/* ---- the spot check -------------------------------------------------------------------------------------------- */
/* out (m or n entries, already computed on s->st from the current x/W/b) against the fp64 GPU reference. */
static void spot_check(soak *s, cfg *c, const char *ctx, int64_t m, int64_t n, int64_t k, int max_dim,
                       mg_precision prec) {
    int dim = 1;
    mg_normalize_max_dim(max_dim, &dim);
    const size_t len = (size_t)(dim == 1 ? m : n), es = mg_elem_bytes(prec);
    s->checks++;
    c->checks++;
    mg_status st = mg_gpu_reference(s->x, s->W, s->b, m, n, k, dim, prec, s->ref_d, s->st);
    if (st != MG_OK) {
        soak_error(s, "%s: mg_gpu_reference: %s (%s)", ctx, mg_strerror(st), mg_last_error());
        return;
    }
    SOAK_CUDA(s, cudaMemcpyAsync(s->ref_h, s->ref_d, len * sizeof(double), cudaMemcpyDeviceToHost, s->st));
    SOAK_CUDA(s, cudaMemcpyAsync(s->out_h, s->out, len * es, cudaMemcpyDeviceToHost, s->st));
    sync_check(s, "spot check");
    const double tol = mg_precision_tolerance(prec);
    mg_check_result r;
    if (prec == MG_PREC_BF16)
        mg_check_bf16(s->ref_h, (const uint16_t *)s->out_h, len, tol, tol, &r);
    else
        mg_check_f32(s->ref_h, (const float *)s->out_h, len, tol, tol, &r);
    /* max_dim 1: a finite row is exactly +0.0 (all-zero bits), not merely within the tolerance. */
    size_t not_zero = 0, first_nz = len;
    if (dim == 1)
        for (size_t i = 0; i < len; i++) {
            if (s->ref_h[i] != 0.0) continue;
            const int ok = prec == MG_PREC_BF16 ? ((const uint16_t *)s->out_h)[i] == 0
                                                : ((const uint32_t *)s->out_h)[i] == 0u;
            if (!ok && not_zero++ == 0) first_nz = i;
        }
    if (!r.pass || not_zero) {
        s->check_fails++;
        const size_t fb = r.first_bad < len ? r.first_bad : (first_nz < len ? first_nz : 0);
        const double o = prec == MG_PREC_BF16 ? (double)mg_bf16_to_f32(((const uint16_t *)s->out_h)[fb])
                                              : (double)((const float *)s->out_h)[fb];
        soak_error(s, "%s: check FAILED: %zu of %zu outside atol=rtol=%g (%zu NaN mismatches), max_abs %.3g, "
                   "%zu finite rows not +0.0; first bad [%zu]: out %.9g ref %.9g",
                   ctx, r.fails, r.n, tol, r.nan_mismatch, r.max_abs, not_zero, fb, o, s->ref_h[fb]);
    } else if (s->verbose) {
        printf("  check ok: %s (max_abs %.3g)\n", ctx, r.max_abs);
    }
}

/* ---- one forward call ------------------------------------------------------------------------------------------ */
/* A valid call: m rows (m == M goes through mg_forward, others through mg_forward_rows); spot-checked when its
 * index within the round is a multiple of check_every. Returns 0 on an error. */
static int forward_call(soak *s, cfg *c, mg_plan *plan, int64_t M, int64_t m, int64_t n, int64_t k, int max_dim,
                        mg_precision prec, int shortcut, plant_kind pk, int force_check) {
    int dim = 1;
    mg_normalize_max_dim(max_dim, &dim);
    const size_t len = (size_t)(dim == 1 ? m : n);
    const int check = force_check || (s->check_every > 0 && s->round_calls % s->check_every == 0);
    if (check) {
        mg_status ps = mg_poison(s->out, len, prec, s->st);
        if (ps != MG_OK) soak_error(s, "mg_poison: %s (%s)", mg_strerror(ps), mg_last_error());
    }
    mg_status st = (m == M && (s->round_calls & 1)) ? mg_forward(plan, s->x, s->out, s->st)
                                                    : mg_forward_rows(plan, m, s->x, s->out, s->st);
    s->round_calls++;
    s->calls++;
    c->calls++;
    char ctx[256];
    snprintf(ctx, sizeof ctx, "%s (plan kernel %d) M=%lld m=%lld N=%lld K=%lld max_dim %d short-circuit %s plant '%s'",
             c->label, mg_plan_kernel(plan), (long long)M, (long long)m, (long long)n, (long long)k, max_dim,
             shortcut ? "on" : "off", plant_name(pk));
    if (st != MG_OK) {
        soak_error(s, "%s: forward returned %s (%s)", ctx, mg_strerror(st), mg_last_error());
        /* A failed call may have left an asynchronous fault behind; surface it here, not later. */
        sync_check(s, "after a failed forward");
        return 0;
    }
    if (check) spot_check(s, c, ctx, m, n, k, max_dim, prec);
    if (s->round_calls % SYNC_EVERY == 0) sync_check(s, "periodic stream sync");
    return 1;
}

/* ---- rejection checks ------------------------------------------------------------------------------------------ */
/* The call must return want, with a non-empty message (containing must_mention, if given). */
static void expect_reject(soak *s, const char *what, mg_status got, mg_status want, const char *must_mention) {
    s->rejections++;
    const char *msg = mg_last_error();
    if (got != want) {
        soak_error(s, "%s returned %s (%s), expected %s", what, mg_strerror(got), msg, mg_strerror(want));
        return;
    }
    if (!msg || !msg[0]) {
        soak_error(s, "%s returned %s with an empty mg_last_error() message", what, mg_strerror(got));
        return;
    }
    if (must_mention && !strstr(msg, must_mention))
        soak_error(s, "%s: the message \"%s\" does not name the rejected value %s", what, msg, must_mention);
    else if (s->verbose)
        printf("  rejected as expected: %s -> %s: %s\n", what, mg_strerror(got), msg);
}

static void reject_bad_rows(soak *s, mg_plan *plan, int64_t M, const char *label) {
    char what[320], val[32];
    snprintf(what, sizeof what, "%s: mg_forward_rows(m = 0) on a plan of M = %lld", label, (long long)M);
    expect_reject(s, what, mg_forward_rows(plan, 0, s->x, s->out, s->st), MG_ERR_SHAPE, NULL);
    snprintf(what, sizeof what, "%s: mg_forward_rows(m = M+1 = %lld)", label, (long long)(M + 1));
    snprintf(val, sizeof val, "%lld", (long long)(M + 1));
    expect_reject(s, what, mg_forward_rows(plan, M + 1, s->x, s->out, s->st), MG_ERR_SHAPE, val);
}

/* ---- plans ----------------------------------------------------------------------------------------------------- */
/* Creates a plan; returns NULL (counted as refused, not an error) when the kernel declines the problem with
 * MG_ERR_UNSUPPORTED, NULL with an error otherwise. */
static mg_plan *make_plan(soak *s, cfg *c, int64_t M, int64_t n, int64_t k, int max_dim, int shortcut) {
    mg_plan_desc d = mg_plan_desc_default();
    d.m = M;
    d.n = n;
    d.k = k;
    d.max_dim = max_dim;
    d.precision = c->prec;
    d.kernel = c->kernel;
    d.shortcut = shortcut;
    mg_plan *plan = NULL;
    mg_status st = mg_plan_create(&plan, &d);
    if (st == MG_ERR_UNSUPPORTED) {
        if (c->refused++ == 0 || s->verbose)
            printf("  note: %s refused M=%lld N=%lld K=%lld max_dim %d: %s\n", c->label, (long long)M, (long long)n,
                   (long long)k, max_dim, mg_last_error());
        s->refused++;
        return NULL;
    }
    if (st != MG_OK || !plan) {
        soak_error(s, "%s: mg_plan_create M=%lld N=%lld K=%lld max_dim %d: %s (%s)", c->label, (long long)M,
                   (long long)n, (long long)k, max_dim, mg_strerror(st), mg_last_error());
        return NULL;
    }
    if (c->kernel != MG_KERNEL_AUTO && mg_plan_kernel(plan) != c->kernel)
        soak_error(s, "%s: the plan runs kernel %d", c->label, mg_plan_kernel(plan));
    s->plans++;
    c->plans++;
    return plan;
}

static void destroy_plan(soak *s, mg_plan *plan) {
    /* A well-behaved caller lets its work finish before freeing the plan it runs on. */
    sync_check(s, "before mg_plan_destroy");
    mg_plan_destroy(plan);
}

static void shape_for(soak *s, const cfg *c, int64_t *M, int64_t *n, int64_t *k, int allow_k0) {
    const int naive = is_naive(c->kernel);
    *M = rnd_dim(s, 1, naive ? NAIVE_MAX_M : MAX_M);
    *n = rnd_dim(s, 1, naive ? NAIVE_MAX_N : MAX_N);
    *k = rnd_dim(s, 1, naive ? NAIVE_MAX_K : MAX_K);
    if (allow_k0 && rnd(s) % 16 == 0) *k = 0;
}

/* Phase 1: one long-lived plan of capacity M per (configuration, variant), `calls` forwards with varying m. */
static void phase_one_plan(soak *s, cfg *c, int variant, long calls) {
    int64_t M = 0, n = 0, k = 0;
    const int max_dim = variant == 0 ? 0 : 1;
    const mg_precision prec = c->prec;
    mg_plan *plan = NULL;
    /* A kernel may decline a shape: a few tries, so every configuration gets its long-lived plan. */
    for (int attempt = 0; attempt < 4 && !plan; attempt++) {
        shape_for(s, c, &M, &n, &k, 0);
        if (M < 64) M = 64 + (M % 64);      /* a capacity with room for many distinct batch sizes */
        if (k < 8) k = 8 + k;                /* room for the planted -inf */
        plan = make_plan(s, c, M, n, k, max_dim, 1);
    }
    if (!plan) return;
    char label[96];
    snprintf(label, sizeof label, "%s one-plan max_dim %d", c->label, max_dim);
    reject_bad_rows(s, plan, M, label);
    fill_all(s, M, n, k, prec, data_seed(s));
    const plant_kind pk = variant == 1 ? plant(s, PLANT_W_NEGINF, M, n, k, prec) : PLANT_NONE;
    mg_status st = mg_set_weights(plan, s->W, s->b, s->st);
    if (st != MG_OK) {
        soak_error(s, "%s: mg_set_weights: %s (%s)", label, mg_strerror(st), mg_last_error());
        destroy_plan(s, plan);
        return;
    }
    for (long i = 0; i < calls; i++) {
        if (i > 0 && i % X_REFRESH_EVERY == 0) fill_x(s, M, k, prec, data_seed(s));
        if (i == calls / 2 && i > 0) {
            /* New weights on the live plan: the kernel's prepared state is released and rebuilt. */
            fill_weights(s, n, k, prec, data_seed(s));
            if (variant == 1) plant(s, PLANT_W_NEGINF, M, n, k, prec);
            st = mg_set_weights(plan, s->W, s->b, s->st);
            if (st != MG_OK) {
                soak_error(s, "%s: second mg_set_weights: %s (%s)", label, mg_strerror(st), mg_last_error());
                break;
            }
        }
        const int shortcut = max_dim == 1 ? (int)(i & 1) : 1;
        if (max_dim == 1) mg_plan_set_shortcut(plan, shortcut);
        const int64_t m = rnd_rows(s, M);
        forward_call(s, c, plan, M, m, n, k, max_dim, prec, shortcut, pk, i == calls / 2);
    }
    destroy_plan(s, plan);
}

/* Phase 2: one create / reject / set_weights / forwards / destroy cycle; returns the forward calls it made. */
static long phase_many_plans_one(soak *s) {
    cfg *c = &s->cfgs[rnd(s) % (uint64_t)s->ncfg];
    int64_t M, n, k;
    shape_for(s, c, &M, &n, &k, 1);
    static const int dims[4] = {1, 0, -1, -2};
    const int max_dim = dims[rnd(s) % 4];
    const int shortcut = (int)(rnd(s) & 1);
    const int nfwd = 1 + (int)(rnd(s) % 8);
    const int reweight = rnd(s) % 4 == 0;
    plant_kind want_plant = PLANT_NONE;
    if (rnd(s) % 4 == 0) want_plant = (plant_kind)(1 + rnd(s) % (PLANT_COUNT - 1));
    const mg_precision prec = c->prec;

    mg_plan *plan = make_plan(s, c, M, n, k, max_dim, shortcut);
    if (!plan) return 0;
    char label[160];
    snprintf(label, sizeof label, "%s M=%lld N=%lld K=%lld max_dim %d", c->label, (long long)M, (long long)n,
             (long long)k, max_dim);
    /* Before any weights: bad batch sizes are shape errors, a good one is MG_ERR_NO_WEIGHTS. */
    reject_bad_rows(s, plan, M, label);
    char what[320];
    snprintf(what, sizeof what, "%s: mg_forward before mg_set_weights", label);
    expect_reject(s, what, mg_forward(plan, s->x, s->out, s->st), MG_ERR_NO_WEIGHTS, NULL);
    snprintf(what, sizeof what, "%s: mg_forward_rows(m = 1) before mg_set_weights", label);
    expect_reject(s, what, mg_forward_rows(plan, 1, s->x, s->out, s->st), MG_ERR_NO_WEIGHTS, NULL);

    fill_all(s, M, n, k, prec, data_seed(s));
    const plant_kind pk = plant(s, want_plant, M, n, k, prec);
    mg_status st = mg_set_weights(plan, s->W, s->b, s->st);
    long made = 0;
    if (st != MG_OK) {
        soak_error(s, "%s: mg_set_weights: %s (%s)", label, mg_strerror(st), mg_last_error());
        destroy_plan(s, plan);
        return 0;
    }
    reject_bad_rows(s, plan, M, label);   /* and after: the check does not depend on the weights */
    for (int i = 0; i < nfwd; i++) {
        const int64_t m = rnd_rows(s, M);
        forward_call(s, c, plan, M, m, n, k, max_dim, prec, shortcut, pk, 0);
        made++;
    }
    if (reweight) {
        fill_weights(s, n, k, prec, data_seed(s));
        if (pk == PLANT_W_NEGINF || pk == PLANT_B_NAN) plant(s, pk, M, n, k, prec);
        st = mg_set_weights(plan, s->W, s->b, s->st);
        if (st != MG_OK) {
            soak_error(s, "%s: second mg_set_weights: %s (%s)", label, mg_strerror(st), mg_last_error());
        } else {
            forward_call(s, c, plan, M, rnd_rows(s, M), n, k, max_dim, prec, shortcut, pk, 1);
            made++;
        }
    }
    destroy_plan(s, plan);
    return made;
}

/* ---- memory ---------------------------------------------------------------------------------------------------- */
static size_t free_bytes_settled(soak *s) {
    SOAK_CUDA(s, cudaDeviceSynchronize());
    int dev = 0;
    SOAK_CUDA(s, cudaGetDevice(&dev));
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, dev) == cudaSuccess) SOAK_CUDA(s, cudaMemPoolTrimTo(pool, 0));
    cudaGetLastError();
    SOAK_CUDA(s, cudaDeviceSynchronize());
    size_t f = 0, t = 0;
    SOAK_CUDA(s, cudaMemGetInfo(&f, &t));
    return f;
}

static double maxrss_kib(void) {
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0) return -1.0;
    return (double)ru.ru_maxrss;   /* Linux: KiB */
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- one round ------------------------------------------------------------------------------------------------- */
static void run_round(soak *s, int round, long calls) {
    s->round = round;
    s->choice_ctr = 0;       /* replay: the same shapes, kernels and call sequence in every round */
    s->round_calls = 0;
    const long calls0 = s->calls, plans0 = s->plans, err0 = s->errors;
    const double t0 = now_s();

    /* Phase 1: half of the round's calls, over all configurations, two plans each. */
    const long p1 = calls / 2;
    const long per_plan = p1 / (2L * s->ncfg) > 8 ? p1 / (2L * s->ncfg) : 8;
    for (int i = 0; i < s->ncfg; i++)
        for (int v = 0; v < 2; v++) phase_one_plan(s, &s->cfgs[i], v, per_plan);
    const double t1 = now_s();
    const long p1_calls = s->calls - calls0, p1_plans = s->plans - plans0;

    /* Phase 2: the rest of the round's calls through many short-lived plans. */
    long attempts = 0;
    while (s->calls - calls0 < calls && attempts < 20 * calls) {
        phase_many_plans_one(s);
        attempts++;
    }
    const double t2 = now_s();
    printf("round %d: phase 1 (one plan, varying m): %ld calls on %ld plans in %.1f s; phase 2 (many plans): %ld calls "
           "on %ld plans in %.1f s; %ld errors\n",
           round, p1_calls, p1_plans, t1 - t0, s->calls - calls0 - p1_calls, s->plans - plans0 - p1_plans, t2 - t1,
           s->errors - err0);
    fflush(stdout);
}

/* ---- main ------------------------------------------------------------------------------------------------------ */
static void usage(FILE *f) {
    fprintf(f, "usage: maxgemm_soak [--calls N (10000)] [--check-every C (25)] [--seed S (1)] [--kernels ID,ID,...]"
               " [--verbose]\n"
               "  exit 0 pass, 1 errors, 2 usage, 77 no CUDA device (skipped)\n");
}

static int kernel_selected(const char *list, int id) {
    if (!list) return 1;
    const char *p = list;
    while (*p) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p) return 0;
        if (v == id) return 1;
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return 0;
    }
    return 0;
}

int main(int argc, char **argv) {
    soak S;
    memset(&S, 0, sizeof S);
    soak *s = &S;
    s->calls_target = 10000;
    s->check_every = 25;
    s->seed = 1;
    const char *kernels = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--calls") && v) {
            s->calls_target = strtol(v, &end, 10);
            i++;
        } else if (!strcmp(a, "--check-every") && v) {
            s->check_every = strtol(v, &end, 10);
            i++;
        } else if (!strcmp(a, "--seed") && v) {
            s->seed = strtoull(v, &end, 10);
            i++;
        } else if (!strcmp(a, "--kernels") && v) {
            kernels = v;
            i++;
            continue;
        } else if (!strcmp(a, "--verbose")) {
            s->verbose = 1;
            continue;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "maxgemm_soak: unknown or incomplete option '%s'\n", a);
            usage(stderr);
            return 2;
        }
        if (!end || *end) {
            fprintf(stderr, "maxgemm_soak: '%s' is not a number for %s\n", v, a);
            return 2;
        }
    }
    if (s->calls_target < 2 || s->check_every < 0) {
        fprintf(stderr, "maxgemm_soak: --calls must be >= 2 and --check-every >= 0\n");
        return 2;
    }

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        printf("maxgemm_soak: no CUDA device: skipped (exit 77)\n");
        return 77;
    }
    struct cudaDeviceProp prop;
    SOAK_CUDA(s, cudaGetDeviceProperties(&prop, 0));
    s->sm = prop.major * 10 + prop.minor;

    /* Configurations: every built kernel x every precision it claims, where the GPU meets min_sm; plus auto. */
    for (int i = 0; i < mg_registry_count() && s->ncfg < MAX_CFG; i++) {
        const mg_kernel *k = mg_registry_at(i);
        if (!mg_kernel_available(k) || s->sm < k->min_sm || !kernel_selected(kernels, k->id)) continue;
        for (int p = 0; p < MG_PREC_COUNT && s->ncfg < MAX_CFG; p++) {
            if (!(k->precisions & (1u << p))) continue;
            cfg *c = &s->cfgs[s->ncfg++];
            c->kernel = k->id;
            c->prec = (mg_precision)p;
            snprintf(c->label, sizeof c->label, "k%d %s %s", k->id, k->name, mg_precision_name((mg_precision)p));
        }
    }
    if (!kernels)
        for (int p = 0; p < MG_PREC_COUNT && s->ncfg < MAX_CFG; p++) {
            cfg *c = &s->cfgs[s->ncfg++];
            c->kernel = MG_KERNEL_AUTO;
            c->prec = (mg_precision)p;
            snprintf(c->label, sizeof c->label, "auto %s", mg_precision_name((mg_precision)p));
        }
    if (s->ncfg == 0) {
        printf("maxgemm_soak: no built kernel runs on this GPU (sm_%d) with the selection given: nothing to soak\n",
               s->sm);
        return 1;
    }

    printf("maxgemm_soak: %s (sm_%d, %d SMs), %d configurations, %ld calls in 2 rounds, spot check every %ld calls, "
           "seed %" PRIu64 "\n",
           prop.name, s->sm, prop.multiProcessorCount, s->ncfg, s->calls_target, s->check_every, s->seed);
    for (int i = 0; i < s->ncfg; i++) printf("  config: %s\n", s->cfgs[i].label);
    fflush(stdout);

    /* The soak's own buffers, at the largest shapes, float-sized (bf16 uses half). */
    SOAK_CUDA(s, cudaStreamCreate(&s->st));
    SOAK_CUDA(s, cudaMalloc(&s->x, (size_t)MAX_M * MAX_K * 4));
    SOAK_CUDA(s, cudaMalloc(&s->W, (size_t)MAX_N * MAX_K * 4));
    SOAK_CUDA(s, cudaMalloc(&s->b, (size_t)MAX_N * 4));
    const size_t max_len = MAX_M > MAX_N ? MAX_M : MAX_N;
    SOAK_CUDA(s, cudaMalloc(&s->out, max_len * 4));
    SOAK_CUDA(s, cudaMalloc((void **)&s->ref_d, max_len * sizeof(double)));
    s->ref_h = malloc(max_len * sizeof(double));
    s->out_h = malloc(max_len * 4);
    if (!s->ref_h || !s->out_h) {
        printf("maxgemm_soak: host allocation failed\n");
        return 1;
    }

    const double t0 = now_s();
    const size_t free_start = free_bytes_settled(s);
    /* Both rounds make the same number of calls: round 2 must replay round 1 exactly (see the header). */
    const long half = s->calls_target / 2;
    run_round(s, 1, half);
    const size_t free_r1 = free_bytes_settled(s);
    const double rss_r1 = maxrss_kib();
    run_round(s, 2, half);
    const size_t free_r2 = free_bytes_settled(s);
    const double rss_r2 = maxrss_kib();
    const double elapsed = now_s() - t0;

    /* Coverage: a configuration that never ran a call is a hole in the soak, not a pass. */
    printf("per configuration (plans run / refused as unsupported, forward calls, spot checks):\n");
    for (int i = 0; i < s->ncfg; i++) {
        const cfg *c = &s->cfgs[i];
        printf("  %-28s plans %5ld / %4ld  calls %6ld  checks %4ld\n", c->label, c->plans, c->refused, c->calls,
               c->checks);
        if (c->calls == 0) soak_error(s, "%s: no forward call ran (every plan refused or failed)", c->label);
    }

    const double mib = 1048576.0;
    const double steady = (double)free_r1 - (double)free_r2;      /* > 0: less free after round 2 */
    const double first_use = (double)free_start - (double)free_r1;
    if (steady > LEAK_LIMIT_BYTES)
        soak_error(s, "device memory leak: %.2f MiB less free after round 2 than after round 1 (limit 1 MiB)",
                   steady / mib);
    const double rss_growth = rss_r2 - rss_r1;
    if (rss_growth > RSS_FAIL_KIB)
        soak_error(s, "host max RSS grew %.1f MiB over round 2 (limit %.0f MiB)", rss_growth / 1024.0,
                   RSS_FAIL_KIB / 1024.0);

    printf("summary:\n");
    printf("  forward calls %ld (valid), plans %ld (+%ld refused as unsupported), spot checks %ld (%ld failed), "
           "rejection checks %ld\n",
           s->calls, s->plans, s->refused, s->checks, s->check_fails, s->rejections);
    printf("  device free memory: start %.2f MiB, after round 1 %.2f MiB, after round 2 %.2f MiB; round 2 change "
           "%+.3f MiB (leak limit 1 MiB); start -> round 1 %+.3f MiB (module loading, library first use)\n",
           free_start / mib, free_r1 / mib, free_r2 / mib, -steady / mib, -first_use / mib);
    printf("  host max RSS: after round 1 %.1f MiB, after round 2 %.1f MiB (growth %.1f MiB%s)\n", rss_r1 / 1024.0,
           rss_r2 / 1024.0, rss_growth / 1024.0, rss_growth > RSS_WARN_KIB ? ", WARNING: more than 4 MiB" : "");
    printf("  elapsed %.1f s\n", elapsed);
    printf("  errors %ld\n", s->errors);
    printf("RESULT: %s\n", s->errors ? "FAIL" : "PASS");

    cudaFree(s->x);
    cudaFree(s->W);
    cudaFree(s->b);
    cudaFree(s->out);
    cudaFree(s->ref_d);
    cudaStreamDestroy(s->st);
    free(s->ref_h);
    free(s->out_h);
    return s->errors ? 1 : 0;
}
