/* maxgemm.c: the library: plans, weights, the forward pass, errors.
 *
 * A plan owns everything a forward call needs, allocated once in mg_plan_create: the partial-maxima buffer
 * (kernel->partial_tiles rows), the kernel's scratch, the finalize scratch, a cuBLAS handle, and for max_dim 1
 * the short-circuit's buffers. mg_set_weights is the one place where weight-side work happens (the kernel's
 * prepare: splits, padding, TMA descriptors; the short-circuit's weight statistics). mg_forward enqueues
 *   kernel->launch (partial maxima)  ->  mg_finalize (reduce partials, mean, GELU)
 * on the caller's stream, or, for max_dim 1 with the short-circuit on, the exact certificate (shortcut.h):
 * one pass over x decides every row; if any row is left undecided, the full path runs on all rows into a scratch
 * output and those rows are copied out. Whether that rare case happens is known only on the device; by default
 * cached CUDA graphs keep the host out of it (run_shortcut; the modes are in shortcut.h): classify alone in a host
 * graph that tail-launches a device graph (full path, scatter) only when count > 0, or classify -> IF count > 0.
 */
#include "maxgemm.h"
#include "mg_kernel.h"
#include "reference.h"
#include "shortcut.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- options and version ----------------------------------------------------------------------------------- */
#define MG_VERSION_STRING "0.9.0"
const char *mg_version(void) { return MG_VERSION_STRING; }

mg_options mg_options_default(void) {
    mg_options o;
    memset(&o, 0, sizeof o);
    o.tiles = MG_TILES_AUTO;
    o.streamk = MG_SWITCH_AUTO;
    o.mixed_panels = MG_SWITCH_AUTO;
    o.rem_split = MG_SWITCH_AUTO;
    o.pdl = 1;
    o.shortcut_mode = MG_SHORTCUT_DEFAULT;
    o.verbose = 0;
    return o;
}

static const char *const tiles_names[MG_TILES_COUNT] = {"auto", "main", "mid", "small", "n192"};

const char *mg_tiles_name(mg_tiles t) { return (t >= 0 && t < MG_TILES_COUNT) ? tiles_names[t] : "unknown"; }

mg_status mg_tiles_parse(const char *s, mg_tiles *out) {
    for (int i = 0; s && i < MG_TILES_COUNT; i++)
        if (strcmp(s, tiles_names[i]) == 0) {
            if (out) *out = (mg_tiles)i;
            return MG_OK;
        }
    return mg_set_error(MG_ERR_INVALID_ARG, "unknown tile configuration '%s' (expected auto, main, mid, small or n192)",
                        s ? s : "(null)");
}

static mg_status check_options(const mg_options *o) {
    if (!o) return mg_set_error(MG_ERR_INVALID_ARG, "options pointer is NULL");
    if (o->tiles < 0 || o->tiles >= MG_TILES_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.tiles = %d (0 auto .. 4 n192)", (int)o->tiles);
    if (o->streamk != MG_SWITCH_AUTO && o->streamk != MG_SWITCH_OFF)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.streamk = %d (0 auto, 1 off)", (int)o->streamk);
    if (o->mixed_panels < 0 || o->mixed_panels >= MG_SWITCH_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.mixed_panels = %d (0 auto, 1 off, 2 force)", (int)o->mixed_panels);
    if (o->rem_split < 0 || o->rem_split >= MG_SWITCH_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.rem_split = %d (0 auto, 1 off, 2 force)", (int)o->rem_split);
    if (o->pdl != 0 && o->pdl != 1) return mg_set_error(MG_ERR_INVALID_ARG, "options.pdl = %d (0 or 1)", o->pdl);
    if (o->verbose != 0 && o->verbose != 1)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.verbose = %d (0 or 1)", o->verbose);
    if (o->shortcut_mode < 0 || o->shortcut_mode >= MG_SHORTCUT_MODE_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.shortcut_mode = %d (0 graph, 1 poll, 2 sync, 3 tail)",
                            o->shortcut_mode);
    return MG_OK;
}

void mg_plan_simple(mg_launch_plan *lp, int partial_rows, size_t ws_bytes, const char *summary) {
    lp->partial_rows = partial_rows;
    lp->ws_bytes = ws_bytes;
    snprintf(lp->summary, sizeof lp->summary, "%s", summary ? summary : "");
}

/* Launch plans a plan keeps (least recently used goes): a serving loop cycles through a few batch sizes. */
#define MG_LP_CACHE 16

/* ---- plans --------------------------------------------------------------------------------------- */
struct mg_plan {
    mg_plan_desc desc;
    mg_problem p;                 /* max_dim normalised */
    const mg_kernel *kernel;
    mg_device dev;
    mg_options opt;
    cublasHandle_t cublas;
    int partial_rows;             /* the kernel's bounds: rows of partial, bytes of ws, for every m <= M */
    float *partial;               /* partial_rows * len floats */
    void *ws;                     /* kernel scratch */
    size_t ws_bytes;
    void *fin_scratch;
    mg_prepared prep;             /* the kernel's weight-side state (prep.runner: the kernel these weights need) */
    const mg_kernel_ops *runner;  /* the ops that plan and launch: the kernel's, or prep.runner */
    int prepared;                 /* prep holds kernel state to release */
    int have_weights;
    unsigned walign;              /* MG_ALIGN_W16 when W's base is 16-byte aligned */
    const void *W, *b;
    /* launch plans, cached per (m, alignment); made on first use (get_launch_plan) */
    struct lp_entry {
        int used;
        unsigned long long stamp;
        mg_launch_plan lp;
    } lps[MG_LP_CACHE];
    unsigned long long lp_clock;
    /* short-circuit (max_dim 1 only) */
    float *wstats;                /* MG_WSTATS_FLOATS device floats */
    int *rows, *count;            /* device: rows to compute, their count */
    void *outg;                   /* M outputs of the full path in the rare case (scatter_rows copies from it) */
    void *cublas_ws;              /* cuBLAS kernels: an explicit workspace (see run_full), else NULL */
    size_t cublas_ws_bytes;
    int sc_mode, sc_used;         /* MG_SHORTCUT_*: configured, used by the last short-circuit forward (-1 none) */
    int *h_count;                 /* sync mode: pinned host copy of *count */
    unsigned *h_sig, *d_sig;      /* poll mode: mapped pinned [count, seq], and its device alias */
    unsigned seq;                 /* poll mode: the last sequence number handed to classify */
    /* graph mode: one instantiated graph, valid for (gx, gout, gm) and the current weights */
    cudaStream_t cap_stream;      /* private non-blocking stream the graph is captured on (never executes work) */
    cudaGraph_t graph;
    cudaGraphExec_t gexec;
    const void *gx;
    void *gout;
    int gm;
    int graph_failed;             /* capture or instantiation failed: POLL until the weights or the mode change */
    char graph_why[1024];         /* why GRAPH (or TAIL, then GRAPH) fell back to POLL */
    char tail_why[512];           /* why TAIL fell back */
    /* tail mode: a host graph holding classify alone, and the device graph it tail-launches, for (tx, tout, tm) */
    cudaGraph_t tgraph, tdgraph;
    cudaGraphExec_t tgexec, tdgexec;
    const void *tx;
    void *tout;
    int tm;
    int tail_failed;              /* building them failed: GRAPH (then POLL) until the weights or the mode change */
};

/* cuBLAS workspace of the plan's cuBLAS kernels (max_dim 1 plans): a conditional graph body may not hold the memory
 * allocation nodes cuBLAS would otherwise add under capture, and the full path must pick the same algorithm inside
 * and outside the graph (bitwise identity), so both use this one buffer. 32 MiB: cuBLAS's default on Hopper. */
#define MG_CUBLAS_WS_BYTES ((size_t)32 << 20)
/* Poll mode: how long the host spins on the mapped count before it falls back to cudaStreamSynchronize (long
 * enough for classify behind a short queue; a stream with a long queue ahead of classify ends in the sync). */
#define MG_POLL_SPIN_NS 10000000LL

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

static void lp_invalidate(mg_plan *pl) {
    for (int i = 0; i < MG_LP_CACHE; i++) pl->lps[i].used = 0;
}

/* The launch plan for problem p (p->m, p->align), from the cache or made by the runner's plan step and checked
 * against the buffers the plan allocated. */
static mg_status get_launch_plan(mg_plan *pl, const mg_problem *p, const mg_launch_plan **out) {
    struct lp_entry *victim = &pl->lps[0];
    for (int i = 0; i < MG_LP_CACHE; i++) {
        struct lp_entry *e = &pl->lps[i];
        if (e->used && e->lp.p.m == p->m && e->lp.p.align == p->align) {
            e->stamp = ++pl->lp_clock;
            *out = &e->lp;
            return MG_OK;
        }
        if (!e->used || (victim->used && e->stamp < victim->stamp)) victim = e;
    }
    mg_launch_plan *lp = &victim->lp;
    memset(lp, 0, sizeof *lp);
    lp->p = *p;
    victim->used = 0;
    mg_status st = pl->runner->plan(p, &pl->dev, &pl->opt, lp);
    if (st != MG_OK) return st;
    if (lp->partial_rows < 1 || lp->partial_rows > pl->partial_rows || lp->ws_bytes > pl->ws_bytes ||
        (lp->rem_chunks > 0 && (p->max_dim != 1 || lp->rem_cols < 1 || lp->rem_cols > 8 ||
                                lp->rem_chunks > MG_REM_MAX_CHUNKS ||
                                lp->rem_offset + (size_t)lp->rem_chunks * lp->rem_cols * p->m * 4 > lp->ws_bytes)))
        return mg_set_error(MG_ERR_UNSUPPORTED, "kernel %s planned %d partial rows (bound %d), %zu workspace bytes "
                            "(bound %zu), remainder %d x %d at %zu: outside its bounds", pl->kernel->name,
                            lp->partial_rows, pl->partial_rows, lp->ws_bytes, pl->ws_bytes, lp->rem_cols,
                            lp->rem_chunks, lp->rem_offset);
    if (pl->opt.verbose)
        fprintf(stderr, "maxgemm: kernel %d (%s) %s M=%d N=%d K=%d max_dim %d: %s\n", pl->kernel->id, pl->kernel->name,
                mg_precision_name(p->prec), p->m, p->n, p->k, p->max_dim, lp->summary);
    victim->used = 1;
    victim->stamp = ++pl->lp_clock;
    *out = lp;
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
    pl->opt = mg_options_default();
    CUDA_OR(st, cudaGetDevice(&pl->dev.ordinal));
    struct cudaDeviceProp prop;
    CUDA_OR(st, cudaGetDeviceProperties(&prop, pl->dev.ordinal));
    pl->dev.sm = prop.major * 10 + prop.minor;
    pl->dev.num_sms = prop.multiProcessorCount;
    if ((st = pick_kernel(desc, &p, pl->dev.sm, &pl->kernel)) != MG_OK) goto fail;
    pl->runner = pl->kernel->ops;

    /* Buffers: partial maxima, kernel scratch, finalize scratch, and the short-circuit's: sized once by the kernel's
     * bounds, which cover every batch m <= M and every option. */
    size_t len = (size_t)mg_partial_len(&p);
    pl->kernel->ops->bounds(&p, &pl->dev, &pl->partial_rows, &pl->ws_bytes);
    size_t part_bytes = (size_t)pl->partial_rows * len * sizeof(float);
    const size_t es = mg_elem_bytes(p.prec);
    if (p.max_dim == 1 && pl->kernel->baseline) pl->cublas_ws_bytes = MG_CUBLAS_WS_BYTES;
    size_t need = part_bytes + pl->ws_bytes + mg_finalize_scratch_bytes((int)len) + pl->cublas_ws_bytes;
    size_t free_b = 0, total_b = 0;
    CUDA_OR(st, cudaMemGetInfo(&free_b, &total_b));
    if (need > free_b) {
        st = mg_set_error(MG_ERR_OUT_OF_MEMORY, "plan needs %.1f MiB of device memory, %.1f MiB free",
                          need / 1048576.0, free_b / 1048576.0);
        goto fail;
    }
    CUDA_OR(st, cudaMalloc((void **)&pl->partial, part_bytes ? part_bytes : 4));
    if (pl->ws_bytes) CUDA_OR(st, cudaMalloc(&pl->ws, pl->ws_bytes));
    if (pl->ws_bytes) CUDA_OR(st, cudaMemset(pl->ws, 0, pl->ws_bytes));   /* the contract: zeroed once (mg_kernel.h) */
    CUDA_OR(st, cudaMalloc(&pl->fin_scratch, mg_finalize_scratch_bytes((int)len) + 16));
    pl->sc_used = -1;
    pl->sc_mode = pl->opt.shortcut_mode;
    if (p.max_dim == 1) {
        CUDA_OR(st, cudaMalloc((void **)&pl->wstats, MG_WSTATS_FLOATS * sizeof(float)));
        CUDA_OR(st, cudaMalloc((void **)&pl->rows, (size_t)p.m * sizeof(int)));
        CUDA_OR(st, cudaMalloc((void **)&pl->count, sizeof(int)));
        CUDA_OR(st, cudaMemset(pl->count, 0, sizeof(int)));
        CUDA_OR(st, cudaMalloc(&pl->outg, (size_t)p.m * es));
        if (pl->cublas_ws_bytes) CUDA_OR(st, cudaMalloc(&pl->cublas_ws, pl->cublas_ws_bytes));
        CUDA_OR(st, cudaMallocHost((void **)&pl->h_count, sizeof(int)));
        CUDA_OR(st, cudaHostAlloc((void **)&pl->h_sig, 2 * sizeof(unsigned), cudaHostAllocMapped));
        pl->h_sig[0] = pl->h_sig[1] = 0;   /* seq starts at 1: a fresh plan never matches a stale word */
        CUDA_OR(st, cudaHostGetDevicePointer((void **)&pl->d_sig, pl->h_sig, 0));
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

/* Drops tail mode's two graphs. The host graph's classify holds the device graph's handle: both go together. */
static void tail_reset(mg_plan *pl) {
    if (pl->tgexec) cudaGraphExecDestroy(pl->tgexec);
    if (pl->tgraph) cudaGraphDestroy(pl->tgraph);
    if (pl->tdgexec) cudaGraphExecDestroy(pl->tdgexec);
    if (pl->tdgraph) cudaGraphDestroy(pl->tdgraph);
    pl->tgexec = pl->tdgexec = NULL;
    pl->tgraph = pl->tdgraph = NULL;
    pl->tx = NULL;
    pl->tout = NULL;
    pl->tm = 0;
}

static void release_prep(mg_plan *pl) {
    if (pl->prepared && pl->kernel && pl->kernel->ops->release && pl->prep.state) pl->kernel->ops->release(pl->prep.state);
    memset(&pl->prep, 0, sizeof pl->prep);
    pl->prepared = 0;
    if (pl->kernel) pl->runner = pl->kernel->ops;
    lp_invalidate(pl);
}

/* Drops the cached graphs (their kernel parameters hold x, out, m, W, b and the prepared state of the weights). */
static void graph_reset(mg_plan *pl) {
    if (pl->gexec) cudaGraphExecDestroy(pl->gexec);
    if (pl->graph) cudaGraphDestroy(pl->graph);
    pl->gexec = NULL;
    pl->graph = NULL;
    pl->gx = NULL;
    pl->gout = NULL;
    pl->gm = 0;
    tail_reset(pl);
}

void mg_plan_destroy(mg_plan *pl) {
    if (!pl) return;
    graph_reset(pl);
    if (pl->cap_stream) cudaStreamDestroy(pl->cap_stream);
    release_prep(pl);
    if (pl->cublas) cublasDestroy(pl->cublas);
    cudaFree(pl->partial);
    cudaFree(pl->ws);
    cudaFree(pl->fin_scratch);
    cudaFree(pl->wstats);
    cudaFree(pl->rows);
    cudaFree(pl->count);
    cudaFree(pl->outg);
    cudaFree(pl->cublas_ws);
    if (pl->h_count) cudaFreeHost(pl->h_count);
    if (pl->h_sig) cudaFreeHost(pl->h_sig);
    free(pl);
}

int mg_plan_kernel(const mg_plan *pl) { return pl && pl->kernel ? pl->kernel->id : -1; }
const char *mg_plan_kernel_name(const mg_plan *pl) { return pl && pl->kernel ? pl->kernel->name : ""; }

mg_status mg_plan_set_shortcut(mg_plan *pl, int on) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    pl->desc.shortcut = on ? 1 : 0;
    return MG_OK;
}

mg_status mg_plan_set_options(mg_plan *pl, const mg_options *opt) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    mg_status st = check_options(opt);
    if (st != MG_OK) return st;
    pl->opt = *opt;
    lp_invalidate(pl);
    graph_reset(pl);   /* the cached graphs hold launches of the old plans */
    return mg_plan_set_shortcut_mode(pl, opt->shortcut_mode);
}

mg_status mg_plan_get_options(const mg_plan *pl, mg_options *opt) {
    if (!pl || !opt) return mg_set_error(MG_ERR_INVALID_ARG, "plan or options pointer is NULL");
    *opt = pl->opt;
    return MG_OK;
}

/* The problem a batch of m rows at x poses: the plan's, with m and both operands' alignment. */
static mg_problem batch_problem(const mg_plan *pl, int m, const void *x) {
    mg_problem p = pl->p;
    p.m = m;
    p.align = pl->walign | (((uintptr_t)x % 16 == 0) ? MG_ALIGN_X16 : 0u);
    return p;
}

mg_status mg_plan_describe(mg_plan *pl, int64_t m, char *buf, size_t len) {
    if (!pl || !buf || len == 0) return mg_set_error(MG_ERR_INVALID_ARG, "plan or buffer is NULL");
    if (m < 1 || m > pl->p.m)
        return mg_set_error(MG_ERR_SHAPE, "batch of %lld rows does not fit this plan (M = %d)", (long long)m, pl->p.m);
    const mg_problem p = batch_problem(pl, (int)m, NULL);   /* NULL: 16-byte aligned, as any allocation is */
    const mg_launch_plan *lp;
    mg_status st = get_launch_plan(pl, &p, &lp);
    if (st != MG_OK) return st;
    snprintf(buf, len, "kernel %d (%s): %s", pl->kernel->id, pl->kernel->name, lp->summary);
    return MG_OK;
}

mg_status mg_set_weights(mg_plan *pl, const void *W, const void *b, void *stream) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    if (!b || (!W && pl->p.k > 0)) return mg_set_error(MG_ERR_INVALID_ARG, "W or b is NULL");
    pl->have_weights = 0;
    /* The graph was captured with the old weights' pointers and prepared state: capture again on next use. */
    graph_reset(pl);
    pl->graph_failed = 0;
    pl->tail_failed = 0;
    pl->graph_why[0] = pl->tail_why[0] = '\0';
    release_prep(pl);   /* also drops the launch plans: W's alignment, and the runner, may change */
    pl->walign = ((uintptr_t)W % 16 == 0) ? MG_ALIGN_W16 : 0u;
    mg_status st;
    if (pl->kernel->ops->prepare) {
        mg_problem p = pl->p;
        p.align = pl->walign;
        pl->prepared = 1;
        st = pl->kernel->ops->prepare(&p, &pl->dev, W, b, &pl->prep, stream);
        if (st != MG_OK) return st;
        if (pl->prep.runner) pl->runner = pl->prep.runner;
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

/* The full fused path on problem p (p.m may be a subset of the plan's rows): the launch plan, launch, finalize. */
static mg_status run_full(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream) {
    const mg_launch_plan *lp;
    mg_status st = get_launch_plan(pl, p, &lp);
    if (st != MG_OK) return st;
    if (cublasSetStream(pl->cublas, (cudaStream_t)stream) != CUBLAS_STATUS_SUCCESS)
        return mg_set_error(MG_ERR_CUBLAS, "cublasSetStream failed");
    /* After cublasSetStream, which resets the workspace to cuBLAS's pool (see MG_CUBLAS_WS_BYTES). */
    if (pl->cublas_ws && cublasSetWorkspace(pl->cublas, pl->cublas_ws, pl->cublas_ws_bytes) != CUBLAS_STATUS_SUCCESS)
        return mg_set_error(MG_ERR_CUBLAS, "cublasSetWorkspace failed");
    const mg_io io = {x, pl->W, pl->b, pl->partial, pl->ws, pl->cublas};
    st = pl->runner->launch(lp, &io, pl->prep.state, stream);
    if (st != MG_OK) return st;
    const float *rem = lp->rem_chunks > 0 ? (const float *)((const char *)pl->ws + lp->rem_offset) : NULL;
    return mg_finalize_rem(pl->partial, lp->partial_rows, mg_partial_len(p), p->max_dim, p->prec, out, pl->fin_scratch,
                           rem, lp->rem_cols, lp->rem_chunks, pl->opt.pdl, stream);
}

/* ---- the short-circuit (max_dim 1) ------------------------------------------------------------------------
 * classify writes out[i] for every decided row and lists the others (d_rows, *d_count). The rare case (count > 0)
 * runs the full path on ALL m rows into pl->outg, then scatter_rows copies the listed rows to out: every row of out
 * is then exactly what the full path writes (same kernel, same problem, same m; a gathered sub-problem would not
 * be: cuBLAS picks its algorithm, hence its summation order, by M). The modes differ in how the host learns the
 * count (shortcut.h). */

int mg_shortcut_mode_parse(const char *s) {
    if (!s || !*s) return MG_SHORTCUT_DEFAULT;
    if (strcmp(s, "graph") == 0) return MG_SHORTCUT_GRAPH;
    if (strcmp(s, "poll") == 0) return MG_SHORTCUT_POLL;
    if (strcmp(s, "sync") == 0) return MG_SHORTCUT_SYNC;
    if (strcmp(s, "tail") == 0) return MG_SHORTCUT_TAIL;
    return -1;
}

const char *mg_shortcut_mode_name(int mode) {
    switch (mode) {
    case MG_SHORTCUT_GRAPH: return "graph";
    case MG_SHORTCUT_POLL: return "poll";
    case MG_SHORTCUT_SYNC: return "sync";
    case MG_SHORTCUT_TAIL: return "tail";
    default: return "none";
    }
}

mg_status mg_plan_set_shortcut_mode(mg_plan *pl, int mode) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    if (mode < 0 || mode >= MG_SHORTCUT_MODE_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "short-circuit mode %d (0 graph, 1 poll, 2 sync, 3 tail)", mode);
    pl->sc_mode = mode;
    pl->opt.shortcut_mode = mode;
    pl->graph_failed = 0;   /* asking for a graph mode again retries the capture */
    pl->tail_failed = 0;
    pl->graph_why[0] = pl->tail_why[0] = '\0';
    return MG_OK;
}
int mg_plan_shortcut_mode(const mg_plan *pl) { return pl ? pl->sc_mode : -1; }
int mg_plan_shortcut_mode_used(const mg_plan *pl) { return pl ? pl->sc_used : -1; }
const char *mg_plan_shortcut_fallback(const mg_plan *pl) {
    if (!pl) return "";
    return pl->sc_used == MG_SHORTCUT_GRAPH ? pl->tail_why : pl->graph_why;
}

/* The rare case, enqueued on stream: the full path on all p->m rows into outg, then the listed rows into out. */
static mg_status run_rare(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream) {
    mg_status st = run_full(pl, p, x, pl->outg, stream);
    if (st != MG_OK) return st;
    return mg_shortcut_scatter_rows(pl->outg, p->prec, pl->rows, pl->count, p->m, out, stream);
}

/* Records a CUDA failure inside graph_build and leaves through its cleanup. */
#define GRAPH_TRY(call)                                                                                 \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            st = mg_set_error(MG_ERR_CUDA, "%s: %s", #call, cudaGetErrorString(e_));                    \
            goto fail;                                                                                  \
        }                                                                                               \
    } while (0)

/* Makes pl->gexec the graph for (x, out, p->m), capturing it if the cached one is for other arguments:
 *   classify (its last block sets the IF node's condition to count > 0)  ->  IF { run_rare }.
 * Both parts are stream-captured on the plan's private stream (captured work does not run; the graph is launched
 * on the caller's stream), cuBLAS bound to that stream by run_full. Kernel parameters, including TMA descriptors
 * the launchers encode on the host, are baked in: hence the key (x, out, m), and graph_reset on mg_set_weights. */
static mg_status graph_build(mg_plan *pl, const mg_problem *p, const void *x, void *out) {
    if (pl->gexec && pl->gx == x && pl->gout == out && pl->gm == p->m) return MG_OK;
    graph_reset(pl);
    mg_status st = MG_OK;
    cudaGraph_t g = NULL, ended = NULL;
    cudaGraphExec_t ge = NULL;
    int capturing = 0;
    cudaStream_t cs = NULL;
    cudaGraphConditionalHandle cond = 0;
    if (!pl->cap_stream) GRAPH_TRY(cudaStreamCreateWithFlags(&pl->cap_stream, cudaStreamNonBlocking));
    cs = pl->cap_stream;
    GRAPH_TRY(cudaGraphCreate(&g, 0));
    GRAPH_TRY(cudaGraphConditionalHandleCreate(&cond, g, 0, cudaGraphCondAssignDefault));

    /* classify, then the IF node depending on it */
    GRAPH_TRY(cudaStreamBeginCaptureToGraph(cs, g, NULL, NULL, 0, cudaStreamCaptureModeRelaxed));
    capturing = 1;
    mg_shortcut_signal sig;
    memset(&sig, 0, sizeof sig);
    sig.cond = cond;
    sig.has_cond = 1;
    st = mg_shortcut_classify_signal(x, p->m, p->k, p->prec, pl->wstats, out, pl->rows, pl->count, &sig, cs);
    if (st != MG_OK) goto fail;
    enum cudaStreamCaptureStatus cst;
    const cudaGraphNode_t *deps = NULL;
    const cudaGraphEdgeData *edges = NULL;
    size_t ndeps = 0;
    GRAPH_TRY(cudaStreamGetCaptureInfo(cs, &cst, NULL, NULL, &deps, &edges, &ndeps));
    struct cudaGraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = cudaGraphNodeTypeConditional;
    np.conditional.handle = cond;
    np.conditional.type = cudaGraphCondTypeIf;
    np.conditional.size = 1;
    cudaGraphNode_t cnode;
    GRAPH_TRY(cudaGraphAddNode(&cnode, g, deps, edges, ndeps, &np));
    capturing = 0;
    GRAPH_TRY(cudaStreamEndCapture(cs, &ended));

    /* the body: the full path on every row, then the scatter of the listed rows */
    GRAPH_TRY(cudaStreamBeginCaptureToGraph(cs, np.conditional.phGraph_out[0], NULL, NULL, 0,
                                            cudaStreamCaptureModeRelaxed));
    capturing = 1;
    if ((st = run_rare(pl, p, x, out, cs)) != MG_OK) goto fail;
    capturing = 0;
    GRAPH_TRY(cudaStreamEndCapture(cs, &ended));

    GRAPH_TRY(cudaGraphInstantiate(&ge, g, 0));
    pl->graph = g;
    pl->gexec = ge;
    pl->gx = x;
    pl->gout = out;
    pl->gm = p->m;
    return MG_OK;
fail:
    if (capturing) cudaStreamEndCapture(cs, &ended);   /* ends an invalidated capture; the graph is g's */
    cudaGetLastError();                                 /* capture errors are not sticky: clear the last error */
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    return st;
}

/* Makes pl->tgexec the tail-mode graphs for (x, out, p->m), building them if the cached ones are for other arguments:
 *   1. the device graph: mg_shortcut_tail_compact (classify's tail variant leaves flags), then run_rare, captured
 *      on the private stream, instantiated with
 *      cudaGraphInstantiateFlagDeviceLaunch and uploaded (a device launch needs it resident; the upload is waited
 *      for here, once per key);
 *   2. the host graph: classify alone (its tail variant: no ticket, no count), captured with the device graph's
 *      handle in its signal: the first block that flags a row tail-launches the device graph; none, none does.
 * A device graph may hold only kernel, memcpy and memset nodes (no conditional, event or allocation nodes): if the
 * plan's full path holds anything else, instantiation fails and run_shortcut falls back to GRAPH. */
static mg_status tail_build(mg_plan *pl, const mg_problem *p, const void *x, void *out) {
    if (pl->tgexec && pl->tx == x && pl->tout == out && pl->tm == p->m) return MG_OK;
    tail_reset(pl);
    mg_status st = MG_OK;
    cudaGraph_t gd = NULL, gh = NULL;
    cudaGraphExec_t ged = NULL, geh = NULL;
    int capturing = 0;
    cudaStream_t cs = NULL;
    if (!pl->cap_stream) GRAPH_TRY(cudaStreamCreateWithFlags(&pl->cap_stream, cudaStreamNonBlocking));
    cs = pl->cap_stream;

    GRAPH_TRY(cudaStreamBeginCapture(cs, cudaStreamCaptureModeRelaxed));
    capturing = 1;
    if ((st = mg_shortcut_tail_compact(pl->rows, p->m, pl->count, pl->wstats, cs)) != MG_OK) goto fail;
    if ((st = run_rare(pl, p, x, out, cs)) != MG_OK) goto fail;
    capturing = 0;
    GRAPH_TRY(cudaStreamEndCapture(cs, &gd));
    GRAPH_TRY(cudaGraphInstantiateWithFlags(&ged, gd, cudaGraphInstantiateFlagDeviceLaunch));
    GRAPH_TRY(cudaGraphUpload(ged, cs));
    GRAPH_TRY(cudaStreamSynchronize(cs));

    GRAPH_TRY(cudaStreamBeginCapture(cs, cudaStreamCaptureModeRelaxed));
    capturing = 1;
    mg_shortcut_signal sig;
    memset(&sig, 0, sizeof sig);
    sig.tail_graph = (unsigned long long)(uintptr_t)ged;
    st = mg_shortcut_classify_signal(x, p->m, p->k, p->prec, pl->wstats, out, pl->rows, pl->count, &sig, cs);
    if (st != MG_OK) goto fail;
    capturing = 0;
    GRAPH_TRY(cudaStreamEndCapture(cs, &gh));
    GRAPH_TRY(cudaGraphInstantiate(&geh, gh, 0));

    pl->tdgraph = gd;
    pl->tdgexec = ged;
    pl->tgraph = gh;
    pl->tgexec = geh;
    pl->tx = x;
    pl->tout = out;
    pl->tm = p->m;
    return MG_OK;
fail:
    if (capturing) {
        cudaGraph_t ended = NULL;
        cudaStreamEndCapture(cs, &ended);
        if (ended) cudaGraphDestroy(ended);
    }
    cudaGetLastError();
    if (geh) cudaGraphExecDestroy(geh);
    if (gh) cudaGraphDestroy(gh);
    if (ged) cudaGraphExecDestroy(ged);
    if (gd) cudaGraphDestroy(gd);
    return st;
}

/* Poll mode's wait: the sequence word of this launch, spinning up to MG_POLL_SPIN_NS, then a stream sync. */
static mg_status poll_count(mg_plan *pl, unsigned seq, void *stream, int *cnt) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned got = __atomic_load_n(&pl->h_sig[1], __ATOMIC_ACQUIRE);
    for (unsigned it = 1; got != seq; it++) {
        if ((it & 255u) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) > MG_POLL_SPIN_NS) break;
        }
        got = __atomic_load_n(&pl->h_sig[1], __ATOMIC_ACQUIRE);
    }
    if (got != seq) {   /* a long queue ahead of classify, or a failure: wait for the stream, then look again */
        MG_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
        got = __atomic_load_n(&pl->h_sig[1], __ATOMIC_ACQUIRE);
        if (got != seq)
            return mg_set_error(MG_ERR_CUDA, "short-circuit (poll): classify finished without reporting (sequence "
                                             "%u, found %u)", seq, got);
    }
    /* Acquire on the sequence word: the count written before it (behind a system fence) is this launch's. */
    *cnt = (int)__atomic_load_n(&pl->h_sig[0], __ATOMIC_ACQUIRE);
    return MG_OK;
}

/* Whether a failed graph build (tail or graph mode) would fail again on the next call: CUDA / cuBLAS failures
 * (capture, instantiation, allocation) would, so the plan stops paying for them until the weights or the mode
 * change. Argument checks of this call's x or out (MG_ERR_UNSUPPORTED, ...) fall back for this call only. */
static int build_failure_recurs(mg_status st) {
    return st == MG_ERR_CUDA || st == MG_ERR_CUBLAS || st == MG_ERR_OUT_OF_MEMORY;
}

static mg_status run_shortcut(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream) {
    /* A caller capturing its stream cannot have the host wait on the device, nor launch our graph inside its
     * capture portably: the full path is capturable and bit-identical. */
    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    MG_CUDA_TRY(cudaStreamIsCapturing((cudaStream_t)stream, &cap));
    if (cap != cudaStreamCaptureStatusNone) {
        pl->sc_used = -1;
        return run_full(pl, p, x, out, stream);
    }
    mg_status st;
    int mode = pl->sc_mode;
    if (mode == MG_SHORTCUT_TAIL) {
        if (!pl->tail_failed) {
            pl->tail_why[0] = '\0';
            st = tail_build(pl, p, x, out);
            if (st == MG_OK) {
                MG_CUDA_TRY(cudaGraphLaunch(pl->tgexec, (cudaStream_t)stream));
                pl->sc_used = MG_SHORTCUT_TAIL;
                return MG_OK;
            }
            if (build_failure_recurs(st)) pl->tail_failed = 1;
            snprintf(pl->tail_why, sizeof pl->tail_why, "tail: %s", mg_last_error());
        }
        mode = MG_SHORTCUT_GRAPH;
    }
    if (mode == MG_SHORTCUT_GRAPH) {
        if (!pl->graph_failed) {
            st = graph_build(pl, p, x, out);
            if (st == MG_OK) {
                MG_CUDA_TRY(cudaGraphLaunch(pl->gexec, (cudaStream_t)stream));
                pl->sc_used = MG_SHORTCUT_GRAPH;
                return MG_OK;
            }
            if (build_failure_recurs(st)) pl->graph_failed = 1;
            /* keeps tail mode's reason, when it fell back from there, in front */
            snprintf(pl->graph_why, sizeof pl->graph_why, "%s%sgraph: %s", pl->tail_why, *pl->tail_why ? "; " : "",
                     mg_last_error());
        }
        mode = MG_SHORTCUT_POLL;
    }
    int cnt = 0;
    if (mode == MG_SHORTCUT_POLL) {
        if (++pl->seq == 0) pl->seq = 1;   /* 0 is the initial word: never a valid sequence number */
        mg_shortcut_signal sig;
        memset(&sig, 0, sizeof sig);
        sig.seq = pl->seq;
        sig.host_word = pl->d_sig;
        st = mg_shortcut_classify_signal(x, p->m, p->k, p->prec, pl->wstats, out, pl->rows, pl->count, &sig, stream);
        if (st != MG_OK) return st;
        if ((st = poll_count(pl, pl->seq, stream, &cnt)) != MG_OK) return st;
    } else {
        st = mg_shortcut_classify(x, p->m, p->k, p->prec, pl->wstats, out, pl->rows, pl->count, stream);
        if (st != MG_OK) return st;
        MG_CUDA_TRY(cudaMemcpyAsync(pl->h_count, pl->count, sizeof(int), cudaMemcpyDeviceToHost, (cudaStream_t)stream));
        MG_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
        cnt = *pl->h_count;
    }
    pl->sc_used = mode;
    if (cnt < 0 || cnt > p->m) return mg_set_error(MG_ERR_CUDA, "short-circuit reported %d rows to compute of %d", cnt, p->m);
    if (cnt == 0) return MG_OK;
    return run_rare(pl, p, x, out, stream);
}

mg_status mg_forward_rows(mg_plan *pl, int64_t m, const void *x, void *out, void *stream) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    if (m < 1 || m > pl->p.m)
        return mg_set_error(MG_ERR_SHAPE, "batch of %lld rows does not fit this plan (M = %d: 1 <= m <= M)",
                            (long long)m, pl->p.m);
    if (!out || (!x && pl->p.k > 0)) return mg_set_error(MG_ERR_INVALID_ARG, "x or out is NULL");
    if (!pl->have_weights) return mg_set_error(MG_ERR_NO_WEIGHTS, "mg_forward before mg_set_weights");
    const mg_problem p = batch_problem(pl, (int)m, x);
    if (p.max_dim == 1 && pl->desc.shortcut) return run_shortcut(pl, &p, x, out, stream);
    return run_full(pl, &p, x, out, stream);
}

mg_status mg_forward(mg_plan *pl, const void *x, void *out, void *stream) {
    return mg_forward_rows(pl, pl ? pl->p.m : 0, x, out, stream);
}
