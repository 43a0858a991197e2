/* maxgemm.c: the library: plans, weights, the forward pass, errors.
 *
 * A plan owns everything a forward call needs, allocated once in mg_plan_create: the partial-maxima buffer
 * (kernel->partial_tiles rows), the kernel's scratch, the finalize scratch, a cuBLAS handle, and for max_dim 1
 * the short-circuit's buffers. mg_set_weights is the one place where weight-side work happens (the kernel's
 * prepare: splits, padding, TMA descriptors; the short-circuit's weight statistics). mg_forward enqueues
 *   kernel->launch (partial maxima)  ->  mg_finalize (reduce partials, mean, GELU)
 * on the caller's stream, or, for max_dim 1 with the short-circuit on, the exact certificate (shortcut.h):
 * one pass over x decides every row, and only rows it cannot decide go through the fused kernel.
 */
#include "maxgemm.h"
#include "mg_kernel.h"
#include "reference.h"
#include "shortcut.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------------------------ */
static _Thread_local char last_error[1024];

mg_status mg_set_error(mg_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

const char *mg_last_error(void) { return last_error; }

const char *mg_strerror(mg_status s) {
    switch (s) {
    case MG_OK: return "success";
    case MG_ERR_INVALID_ARG: return "invalid argument";
    case MG_ERR_SHAPE: return "invalid shape";
    case MG_ERR_MAX_DIM: return "invalid max_dim (must be -2, -1, 0 or 1)";
    case MG_ERR_PRECISION: return "unknown precision mode (fp32, tf32 or bf16)";
    case MG_ERR_KERNEL: return "unknown kernel";
    case MG_ERR_UNSUPPORTED: return "kernel does not support this problem";
    case MG_ERR_NO_DEVICE: return "no CUDA device";
    case MG_ERR_OUT_OF_MEMORY: return "out of device memory";
    case MG_ERR_NO_WEIGHTS: return "weights not set (call mg_set_weights first)";
    case MG_ERR_CUDA: return "CUDA error";
    case MG_ERR_CUBLAS: return "cuBLAS error";
    default: return "unknown status";
    }
}

/* ---- precision modes ----------------------------------------------------------------------------- */
static const char *const prec_names[MG_PREC_COUNT] = {"fp32", "tf32", "bf16"};
static const double prec_tol[MG_PREC_COUNT] = {1e-4, 2e-3, 1e-2};

const char *mg_precision_name(mg_precision p) {
    return (p >= 0 && p < MG_PREC_COUNT) ? prec_names[p] : "unknown";
}

mg_status mg_precision_parse(const char *s, mg_precision *out) {
    for (int i = 0; s && i < MG_PREC_COUNT; i++)
        if (strcmp(s, prec_names[i]) == 0) {
            if (out) *out = (mg_precision)i;
            return MG_OK;
        }
    return mg_set_error(MG_ERR_PRECISION, "unknown precision '%s' (expected fp32, tf32 or bf16)", s ? s : "(null)");
}

double mg_precision_tolerance(mg_precision p) { return (p >= 0 && p < MG_PREC_COUNT) ? prec_tol[p] : 0.0; }

/* ---- plans --------------------------------------------------------------------------------------- */
struct mg_plan {
    mg_plan_desc desc;
    mg_problem p;                 /* max_dim normalised */
    const mg_kernel *kernel;
    int device, sm, num_sms;
    cublasHandle_t cublas;
    float *partial;               /* partial_tiles(p) * len floats */
    void *ws;                     /* kernel scratch */
    size_t ws_bytes;
    void *fin_scratch;
    mg_prepared prep;
    int prepared;                 /* prep holds kernel state to release */
    int have_weights;
    const void *W, *b;
    /* short-circuit (max_dim 1 only) */
    float *wstats;                /* MG_WSTATS_FLOATS device floats */
    int *rows, *count;            /* device: rows to compute, their count */
    int *h_count;                 /* pinned host copy of *count */
    void *xg, *outg;              /* gathered rows of x, their outputs (allocated on first need) */
};

mg_plan_desc mg_plan_desc_default(void) {
    mg_plan_desc d = {1024, 8192, 8192, 1, MG_PREC_FP32, MG_KERNEL_AUTO, 1};
    return d;
}

#define CUDA_OR(st, call)                                                                               \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            st = mg_set_error(e_ == cudaErrorMemoryAllocation ? MG_ERR_OUT_OF_MEMORY : MG_ERR_CUDA,     \
                              "%s: %s", #call, cudaGetErrorString(e_));                                  \
            goto fail;                                                                                  \
        }                                                                                               \
    } while (0)

static mg_status validate_desc(const mg_plan_desc *d, mg_problem *p) {
    if (!d) return mg_set_error(MG_ERR_INVALID_ARG, "plan descriptor is NULL");
    int md;
    if (mg_normalize_max_dim(d->max_dim, &md) != MG_OK)
        return mg_set_error(MG_ERR_MAX_DIM, "max_dim %d is invalid (expected -2, -1, 0 or 1)", d->max_dim);
    if (d->precision < 0 || d->precision >= MG_PREC_COUNT)
        return mg_set_error(MG_ERR_PRECISION, "precision %d is not a mode (0 fp32, 1 tf32, 2 bf16)", (int)d->precision);
    const int64_t lim = 0x7fffffff;
    if (d->m < 0 || d->n < 0 || d->k < 0 || d->m > lim || d->n > lim || d->k > lim)
        return mg_set_error(MG_ERR_SHAPE, "sizes M=%lld N=%lld K=%lld must be in [0, 2^31-1]", (long long)d->m,
                            (long long)d->n, (long long)d->k);
    if (d->m == 0 || d->n == 0)
        return mg_set_error(MG_ERR_SHAPE, "M=%lld N=%lld: max on a tensor with no elements (M and N must be >= 1)",
                            (long long)d->m, (long long)d->n);
    p->m = (int)d->m;
    p->n = (int)d->n;
    p->k = (int)d->k;
    p->max_dim = md;
    p->prec = d->precision;
    return MG_OK;
}

static mg_status pick_kernel(const mg_plan_desc *d, const mg_problem *p, int sm, const mg_kernel **out) {
    if (d->kernel == MG_KERNEL_AUTO) {
        const mg_kernel *k = mg_registry_auto(p, sm);
        if (!k)
            return mg_set_error(MG_ERR_UNSUPPORTED, "no built kernel supports %s on sm_%d", mg_precision_name(p->prec), sm);
        *out = k;
        return MG_OK;
    }
    const mg_kernel *k = mg_registry_find(d->kernel);
    if (!k) return mg_set_error(MG_ERR_KERNEL, "unknown kernel %d (see 'maxgemm list')", d->kernel);
    if (!mg_kernel_available(k))
        return mg_set_error(MG_ERR_UNSUPPORTED, "kernel %d (%s) is not built into this library", k->id, k->name);
    if (!(k->precisions & (1u << p->prec)))
        return mg_set_error(MG_ERR_UNSUPPORTED, "kernel %d (%s) does not support %s", k->id, k->name,
                            mg_precision_name(p->prec));
    if (sm < k->min_sm)
        return mg_set_error(MG_ERR_UNSUPPORTED, "kernel %d (%s) needs sm_%d, this GPU is sm_%d", k->id, k->name,
                            k->min_sm, sm);
    if (k->ops->supports) {
        mg_status s = k->ops->supports(p, sm);
        if (s != MG_OK) return s;
    }
    *out = k;
    return MG_OK;
}

mg_status mg_plan_create(mg_plan **out, const mg_plan_desc *desc) {
    if (!out) return mg_set_error(MG_ERR_INVALID_ARG, "plan output pointer is NULL");
    *out = NULL;
    mg_problem p;
    mg_status st = validate_desc(desc, &p);
    if (st != MG_OK) return st;

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return mg_set_error(MG_ERR_NO_DEVICE, "no CUDA device is present");
    }
    mg_plan *pl = calloc(1, sizeof *pl);
    if (!pl) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "host allocation of the plan failed");
    pl->desc = *desc;
    pl->p = p;
    CUDA_OR(st, cudaGetDevice(&pl->device));
    struct cudaDeviceProp prop;
    CUDA_OR(st, cudaGetDeviceProperties(&prop, pl->device));
    pl->sm = prop.major * 10 + prop.minor;
    pl->num_sms = prop.multiProcessorCount;
    if ((st = pick_kernel(desc, &p, pl->sm, &pl->kernel)) != MG_OK) goto fail;

    /* Buffers: partial maxima, kernel scratch, finalize scratch, and the short-circuit's. */
    const mg_kernel_ops *ops = pl->kernel->ops;
    size_t len = (size_t)mg_partial_len(&p);
    size_t part_bytes = (size_t)ops->partial_tiles(&p) * len * sizeof(float);
    pl->ws_bytes = ops->workspace_bytes ? ops->workspace_bytes(&p) : 0;
    size_t need = part_bytes + pl->ws_bytes + mg_finalize_scratch_bytes((int)len);
    size_t free_b = 0, total_b = 0;
    CUDA_OR(st, cudaMemGetInfo(&free_b, &total_b));
    if (need > free_b) {
        st = mg_set_error(MG_ERR_OUT_OF_MEMORY, "plan needs %.1f MiB of device memory, %.1f MiB free",
                          need / 1048576.0, free_b / 1048576.0);
        goto fail;
    }
    CUDA_OR(st, cudaMalloc((void **)&pl->partial, part_bytes ? part_bytes : 4));
    if (pl->ws_bytes) CUDA_OR(st, cudaMalloc(&pl->ws, pl->ws_bytes));
    CUDA_OR(st, cudaMalloc(&pl->fin_scratch, mg_finalize_scratch_bytes((int)len) + 16));
    if (p.max_dim == 1) {
        CUDA_OR(st, cudaMalloc((void **)&pl->wstats, MG_WSTATS_FLOATS * sizeof(float)));
        CUDA_OR(st, cudaMalloc((void **)&pl->rows, (size_t)p.m * sizeof(int)));
        CUDA_OR(st, cudaMalloc((void **)&pl->count, sizeof(int)));
        CUDA_OR(st, cudaMemset(pl->count, 0, sizeof(int)));
        CUDA_OR(st, cudaMallocHost((void **)&pl->h_count, sizeof(int)));
    }
    if (cublasCreate(&pl->cublas) != CUBLAS_STATUS_SUCCESS) {
        st = mg_set_error(MG_ERR_CUBLAS, "cublasCreate failed");
        goto fail;
    }
    *out = pl;
    return MG_OK;
fail:
    mg_plan_destroy(pl);
    return st;
}

static void release_prep(mg_plan *pl) {
    if (pl->prepared && pl->kernel && pl->kernel->ops->release) pl->kernel->ops->release(&pl->prep);
    memset(&pl->prep, 0, sizeof pl->prep);
    pl->prepared = 0;
}

void mg_plan_destroy(mg_plan *pl) {
    if (!pl) return;
    release_prep(pl);
    if (pl->cublas) cublasDestroy(pl->cublas);
    cudaFree(pl->partial);
    cudaFree(pl->ws);
    cudaFree(pl->fin_scratch);
    cudaFree(pl->wstats);
    cudaFree(pl->rows);
    cudaFree(pl->count);
    cudaFree(pl->xg);
    cudaFree(pl->outg);
    if (pl->h_count) cudaFreeHost(pl->h_count);
    free(pl);
}

int mg_plan_kernel(const mg_plan *pl) { return pl && pl->kernel ? pl->kernel->id : -1; }
const char *mg_plan_kernel_name(const mg_plan *pl) { return pl && pl->kernel ? pl->kernel->name : ""; }

mg_status mg_plan_set_shortcut(mg_plan *pl, int on) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    pl->desc.shortcut = on ? 1 : 0;
    return MG_OK;
}

mg_status mg_set_weights(mg_plan *pl, const void *W, const void *b, void *stream) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    if (!b || (!W && pl->p.k > 0)) return mg_set_error(MG_ERR_INVALID_ARG, "W or b is NULL");
    pl->have_weights = 0;
    release_prep(pl);
    mg_status st;
    if (pl->kernel->ops->prepare) {
        st = pl->kernel->ops->prepare(&pl->p, W, b, &pl->prep, stream);
        pl->prepared = 1;
        if (st != MG_OK) return st;
    }
    if (pl->p.max_dim == 1) {
        st = mg_shortcut_weight_stats(W, b, pl->p.n, pl->p.k, pl->p.prec, pl->wstats, stream);
        if (st != MG_OK) return st;
    }
    pl->W = W;
    pl->b = b;
    pl->have_weights = 1;
    return MG_OK;
}

/* The full fused path on problem p (p.m may be a subset of the plan's rows): launch, then finalize. */
static mg_status run_full(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream) {
    if (cublasSetStream(pl->cublas, (cudaStream_t)stream) != CUBLAS_STATUS_SUCCESS)
        return mg_set_error(MG_ERR_CUBLAS, "cublasSetStream failed");
    mg_launch_args a;
    memset(&a, 0, sizeof a);
    a.p = *p;
    a.x = x;
    a.w = pl->W;
    a.b = pl->b;
    a.prep = &pl->prep;
    a.partial = pl->partial;
    a.ws = pl->ws;
    a.stream = stream;
    a.cublas = pl->cublas;
    a.num_sms = pl->num_sms;
    mg_status st = pl->kernel->ops->launch(&a);
    if (st != MG_OK) return st;
    if (a.ntiles < 1 || a.ntiles > pl->kernel->ops->partial_tiles(p))
        return mg_set_error(MG_ERR_CUDA, "kernel %s reported %d partial rows (expected 1..%d)", pl->kernel->name,
                            a.ntiles, pl->kernel->ops->partial_tiles(p));
    return mg_finalize(pl->partial, a.ntiles, mg_partial_len(p), p->max_dim, p->prec, out, pl->fin_scratch, stream);
}

/* max_dim 1 with the certificate: one pass over x decides every row; undecided rows are computed exactly by the
 * plan's kernel on the gathered rows (same kernel, same per-element arithmetic as the full path). */
static mg_status run_shortcut(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream) {
    mg_status st = mg_shortcut_classify(x, p->m, p->k, p->prec, pl->wstats, out, pl->rows, pl->count, stream);
    if (st != MG_OK) return st;
    /* The only way to size the fallback is to read the count: one small copy and a wait. */
    MG_CUDA_TRY(cudaMemcpyAsync(pl->h_count, pl->count, sizeof(int), cudaMemcpyDeviceToHost, (cudaStream_t)stream));
    MG_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
    int cnt = *pl->h_count;
    if (cnt <= 0) return MG_OK;
    if (cnt > p->m) return mg_set_error(MG_ERR_CUDA, "short-circuit reported %d rows to compute of %d", cnt, p->m);
    size_t es = mg_elem_bytes(p->prec);
    if (!pl->xg) MG_CUDA_TRY(cudaMalloc(&pl->xg, (size_t)p->m * (size_t)(p->k ? p->k : 1) * es));
    if (!pl->outg) MG_CUDA_TRY(cudaMalloc(&pl->outg, (size_t)p->m * es));
    if ((st = mg_shortcut_gather(x, p->k, p->prec, pl->rows, cnt, pl->xg, stream)) != MG_OK) return st;
    mg_problem sub = *p;
    sub.m = cnt;
    if ((st = run_full(pl, &sub, pl->xg, pl->outg, stream)) != MG_OK) return st;
    return mg_shortcut_scatter(pl->outg, p->prec, pl->rows, cnt, out, stream);
}

mg_status mg_forward_rows(mg_plan *pl, int64_t m, const void *x, void *out, void *stream) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    if (m < 1 || m > pl->p.m)
        return mg_set_error(MG_ERR_SHAPE, "batch of %lld rows does not fit this plan (M = %d: 1 <= m <= M)",
                            (long long)m, pl->p.m);
    if (!out || (!x && pl->p.k > 0)) return mg_set_error(MG_ERR_INVALID_ARG, "x or out is NULL");
    if (!pl->have_weights) return mg_set_error(MG_ERR_NO_WEIGHTS, "mg_forward before mg_set_weights");
    mg_problem p = pl->p;
    p.m = (int)m;
    if (p.max_dim == 1 && pl->desc.shortcut) return run_shortcut(pl, &p, x, out, stream);
    return run_full(pl, &p, x, out, stream);
}

mg_status mg_forward(mg_plan *pl, const void *x, void *out, void *stream) {
    return mg_forward_rows(pl, pl ? pl->p.m : 0, x, out, stream);
}
