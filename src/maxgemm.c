/* maxgemm.c: the library: plans, weights, the forward pass, errors.
 *
 * A plan owns everything a forward call needs, allocated once in mg_plan_create: the partial-maxima buffer
 * (the kernel's bounds: pl->partial_rows rows), the kernel's scratch, the finalize scratch, a cuBLAS handle, and for
 * max_dim 1 the short-circuit's buffers. mg_set_weights is the one place where weight-side work happens (the kernel's
 * prepare: splits, padding, TMA descriptors; the short-circuit's weight statistics). mg_forward enqueues
 *   kernel->launch (partial maxima)  ->  mg_finalize (reduce partials, mean, GELU)
 * on the caller's stream, or, for max_dim 1 with the short-circuit on, the exact certificate (shortcut.h):
 * one pass over x decides every row; if any row is left undecided, the full path runs on all rows into a scratch
 * output and those rows are copied out. Whether that rare case happens is known only on the device; by default
 * cached CUDA graphs keep the host out of it (run_shortcut; the modes are in shortcut.h): classify alone in a host
 * graph that tail-launches a device graph (full path, scatter) only when count > 0, or classify -> IF count > 0.
 */
#include "dispatch.h"
#include "maxgemm.h"
#include "mg_kernel.h"
#include "reference.h"
#include "plan.h"
#include "shortcut.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

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
size_t mg_plan_desc_size(void) { return sizeof(mg_plan_desc); }
size_t mg_options_size(void) { return sizeof(mg_options); }

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
    o.splits = 0;
    o.x_tile = 0;
    o.cluster = 0;
    o.fuse = MG_SWITCH_AUTO;
    o.mcast = MG_MCAST_AUTO;
    o.w_rows = 0;
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
    if (o->streamk < MG_SWITCH_AUTO || o->streamk >= MG_SWITCH_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.streamk = %d (0 auto, 1 off, 2 force)", (int)o->streamk);
    if (o->mixed_panels < 0 || o->mixed_panels >= MG_SWITCH_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.mixed_panels = %d (0 auto, 1 off, 2 force)", (int)o->mixed_panels);
    if (o->rem_split < 0 || o->rem_split >= MG_SWITCH_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.rem_split = %d (0 auto, 1 off, 2 force)", (int)o->rem_split);
    if (o->pdl != 0 && o->pdl != 1) return mg_set_error(MG_ERR_INVALID_ARG, "options.pdl = %d (0 or 1)", o->pdl);
    if (o->verbose != 0 && o->verbose != 1)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.verbose = %d (0 or 1)", o->verbose);
    if (o->splits < 0 || o->splits > MG_SPLITS_MAX)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.splits = %d (0 auto, 1 .. %d)", o->splits, MG_SPLITS_MAX);
    if (!MG_X_TILE_VALID(o->x_tile))
        return mg_set_error(MG_ERR_INVALID_ARG, "options.x_tile = %d (0 auto, or a multiple of 8 up to %d: kernel 8's "
                            "x-tile width)", o->x_tile, MG_X_TILE_MAX);
    if (o->fuse < 0 || o->fuse >= MG_SWITCH_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.fuse = %d (0 auto, 1 off, 2 force)", (int)o->fuse);
    if (o->mcast < 0 || o->mcast >= MG_MCAST_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.mcast = %d (0 auto, 1 w, 2 x: kernel 8's multicast operand)",
                            (int)o->mcast);
    if (!MG_W_ROWS_VALID(o->w_rows))
        return mg_set_error(MG_ERR_INVALID_ARG, "options.w_rows = %d (0 auto, or 64, 128, 256: kernel 8's W rows per "
                            "tile)", o->w_rows);
    if (o->cluster < 0 || o->cluster > 2)
        return mg_set_error(MG_ERR_INVALID_ARG, "options.cluster = %d (0 auto, 1 or 2: kernel 8's CTAs per cluster)",
                            o->cluster);
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
    /* torch: the max over an empty dim raises; over the other dim it gives an empty output (1 x 0, 0 x 1) */
    if ((md == 0 && d->m == 0) || (md == 1 && d->n == 0))
        return mg_set_error(MG_ERR_SHAPE, "M=%lld N=%lld, max_dim %d: max on a tensor with no elements (torch raises "
                            "too)", (long long)d->m, (long long)d->n, md);
    if (d->m == 0 || d->n == 0)
        return mg_set_error(MG_ERR_SHAPE, "M=%lld N=%lld, max_dim %d: the output is empty (%s in torch); a plan "
                            "needs M, N >= 1, so return an empty output without one", (long long)d->m, (long long)d->n,
                            md, md == 0 ? "1 x 0" : "0 x 1");
    if (d->kernel != MG_KERNEL_AUTO && !mg_registry_find(d->kernel))
        return mg_set_error(MG_ERR_KERNEL, "unknown kernel %d (see 'maxgemm list')", d->kernel);
    if (d->shortcut != 0 && d->shortcut != 1)
        return mg_set_error(MG_ERR_INVALID_ARG, "shortcut = %d (0 off, 1 on)", d->shortcut);
    p->m = (int)d->m;
    p->n = (int)d->n;
    p->k = (int)d->k;
    p->max_dim = md;
    p->prec = d->precision;
    return MG_OK;
}

/* auto: the dispatch table's row for the plan's M (t: this GPU's rows, src/dispatch.h), else the registry's rule. */
static mg_status pick_kernel(const mg_plan_desc *d, const mg_problem *p, int sm, const mg_dispatch_table *t,
                             const mg_kernel **out) {
    if (d->kernel == MG_KERNEL_AUTO) {
        const mg_kernel *k = mg_dispatch_auto(t, p, sm, NULL);
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
    /* the options: the user's, and where the user left one at auto, the dispatch row for this batch size's */
    mg_options opt = pl->opt;
    const mg_dispatch_row *drow = mg_dispatch_options(&pl->dispatch, pl->kernel, p, &opt);
    mg_status st = pl->runner->plan(p, &pl->dev, &opt, lp);
    if (st != MG_OK) return st;
    if (lp->partial_rows < 1 || lp->partial_rows > pl->partial_rows || lp->ws_bytes > pl->ws_bytes ||
        (lp->rem_chunks > 0 && (p->max_dim != 1 || lp->rem_cols < 1 || lp->rem_cols > 8 ||
                                lp->rem_chunks > MG_REM_MAX_CHUNKS ||
                                lp->rem_offset + (size_t)lp->rem_chunks * lp->rem_cols * p->m * 4 > lp->ws_bytes)))
        return mg_set_error(MG_ERR_UNSUPPORTED, "kernel %s planned %d partial rows (bound %d), %zu workspace bytes "
                            "(bound %zu), remainder %d x %d at %zu: outside its bounds", pl->kernel->name,
                            lp->partial_rows, pl->partial_rows, lp->ws_bytes, pl->ws_bytes, lp->rem_cols,
                            lp->rem_chunks, lp->rem_offset);
    if (pl->opt.verbose) {
        char from[512] = "";
        if (drow) {
            char where[300], opts[96];
            mg_dispatch_where(&pl->dispatch, drow, where, sizeof where);
            mg_optset_format(&drow->opt, opts, sizeof opts);
            snprintf(from, sizeof from, " [dispatch %s: %s]", where, opts);
        }
        fprintf(stderr, "maxgemm: kernel %d (%s) %s M=%d N=%d K=%d max_dim %d: %s%s\n", pl->kernel->id, pl->kernel->name,
                mg_precision_name(p->prec), p->m, p->n, p->k, p->max_dim, lp->summary, from);
    }
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
    CUDA_OR(st, cudaDeviceGetAttribute(&pl->pageable_ok, cudaDevAttrPageableMemoryAccess, pl->dev.ordinal));
    struct cudaDeviceProp prop;
    CUDA_OR(st, cudaGetDeviceProperties(&prop, pl->dev.ordinal));
    pl->dev.sm = prop.major * 10 + prop.minor;
    pl->dev.num_sms = prop.multiProcessorCount;
    snprintf(pl->dev.name, sizeof pl->dev.name, "%s", prop.name);
    if (desc->kernel == MG_KERNEL_AUTO) mg_dispatch_copy(pl->dev.name, p.prec, p.max_dim, &pl->dispatch);
    if ((st = pick_kernel(desc, &p, pl->dev.sm, &pl->dispatch, &pl->kernel)) != MG_OK) goto fail;
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

static void release_prep(mg_plan *pl) {
    if (pl->prepared && pl->kernel && pl->kernel->ops->release && pl->prep.state) pl->kernel->ops->release(pl->prep.state);
    memset(&pl->prep, 0, sizeof pl->prep);
    pl->prepared = 0;
    if (pl->kernel) pl->runner = pl->kernel->ops;
    lp_invalidate(pl);
}

void mg_plan_destroy(mg_plan *pl) {
    if (!pl) return;
    mg_plan_graph_reset(pl);   /* waits for the tail-mode launches still queued (src/shortcut_exec.c, tail_reset) */
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
    mg_dispatch_free(&pl->dispatch);
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
    mg_plan_graph_reset(pl);   /* the cached graphs hold launches of the old plans */
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

void mg_plan_dispatch_where(const mg_plan *pl, int64_t m, char *buf, size_t len) {
    if (!len) return;
    buf[0] = '\0';
    if (!pl || m < 1 || m > pl->p.m) return;
    mg_options o = pl->opt;
    const mg_problem p = batch_problem(pl, (int)m, NULL);
    mg_dispatch_where(&pl->dispatch, mg_dispatch_options(&pl->dispatch, pl->kernel, &p, &o), buf, len);
}

/* ---- the caller's device and pointers ---------------------------------------------------------------- */
/* The plan's buffers, handles and launch plans belong to the device it was made on. */
static mg_status check_device(const mg_plan *pl) {
    int cur = -1;
    if (cudaGetDevice(&cur) != cudaSuccess) {
        (void)cudaGetLastError();
        return mg_set_error(MG_ERR_CUDA, "cudaGetDevice failed");
    }
    if (cur != pl->dev.ordinal)
        return mg_set_error(MG_ERR_INVALID_ARG, "the current device is %d but the plan was made on device %d "
                            "(cudaSetDevice(%d) first)", cur, pl->dev.ordinal, pl->dev.ordinal);
    return MG_OK;
}

/* A pointer the kernels read or write (name: the API's word for it): aligned to its elements, and, where the runtime
 * can say, memory of the plan's device (pageable host memory, unless the GPU reads it through HMM, or another GPU's
 * would fault in a kernel, far from the call, and leave the context unusable). cudaPointerGetAttributes is asked
 * outside stream capture only, and for x and out (slot 0, 1) once per new pointer (the last MG_PTR_CACHE of each
 * are remembered): a forward that reuses its buffers pays a few pointer comparisons. */
static mg_status check_pointer(mg_plan *pl, const void *ptr, const char *name, int slot, void *stream) {
    const size_t es = mg_elem_bytes(pl->p.prec);
    if ((uintptr_t)ptr % es != 0)
        return mg_set_error(MG_ERR_INVALID_ARG, "%s (%p) is not aligned to its %zu-byte %s elements", name, ptr, es,
                            mg_precision_name(pl->p.prec));
    if (slot >= 0)
        for (int i = 0; i < MG_PTR_CACHE; i++)
            if (pl->ptr_ok[slot][i] == ptr) return MG_OK;
    if (!mg_stream_not_capturing(stream)) return MG_OK;   /* capturing, or the runtime cannot say: not asked */
    struct cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, ptr) != cudaSuccess) {
        (void)cudaGetLastError();
        return MG_OK;   /* the runtime cannot say: the kernels will */
    }
    /* pageable host memory the GPU cannot address (no HMM / ATS: the runtime gives no device pointer for it) */
    if (a.type == cudaMemoryTypeUnregistered && !pl->pageable_ok && !a.devicePointer)
        return mg_set_error(MG_ERR_INVALID_ARG, "%s (%p) is host memory the GPU cannot read: pass device memory "
                            "(cudaMalloc, a CUDA tensor)", name, ptr);
    if (a.type == cudaMemoryTypeDevice && a.device != pl->dev.ordinal)   /* peer access or not: copy it over */
        return mg_set_error(MG_ERR_INVALID_ARG, "%s (%p) is memory of device %d; the plan was made on device %d", name,
                            ptr, a.device, pl->dev.ordinal);
    if (slot >= 0) {
        pl->ptr_ok[slot][pl->ptr_next[slot]] = ptr;
        pl->ptr_next[slot] = (pl->ptr_next[slot] + 1) % MG_PTR_CACHE;
    }
    return MG_OK;
}

/* Byte ranges [a, a + an) and [b, b + bn) share a byte. */
static int overlap(const void *a, size_t an, const void *b, size_t bn) {
    const uintptr_t a0 = (uintptr_t)a, b0 = (uintptr_t)b;
    return a && b && an && bn && a0 < b0 + bn && b0 < a0 + an;
}

/* out is written while x, W and b are read (and W, b again by later calls): it may share no byte with them. */
static mg_status check_out_disjoint(const mg_plan *pl, int64_t m, const void *x, const void *out) {
    const size_t es = mg_elem_bytes(pl->p.prec);
    const size_t on = (size_t)(pl->p.max_dim == 1 ? m : pl->p.n) * es;
    const struct { const void *p; size_t n; const char *name; } in[] = {
        {x, (size_t)m * (size_t)pl->p.k * es, "x"},
        {pl->W, (size_t)pl->p.n * (size_t)pl->p.k * es, "W"},
        {pl->b, (size_t)pl->p.n * es, "b"}};
    for (int i = 0; i < 3; i++)
        if (overlap(out, on, in[i].p, in[i].n))
            return mg_set_error(MG_ERR_INVALID_ARG, "out (%p, %zu bytes) overlaps %s (%p, %zu bytes): the forward "
                                "writes out while it reads %s", out, on, in[i].name, in[i].p, in[i].n, in[i].name);
    return MG_OK;
}

mg_status mg_set_weights(mg_plan *pl, const void *W, const void *b, void *stream) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    pl->have_weights = 0;   /* a refused call leaves the plan without weights, not with the old ones */
    if (!b || (!W && pl->p.k > 0)) return mg_set_error(MG_ERR_INVALID_ARG, "W or b is NULL");
    memset(pl->ptr_ok, 0, sizeof pl->ptr_ok);   /* a new set of buffers, likely: ask the runtime again */
    mg_status cs = check_device(pl);
    if (cs == MG_OK && W && pl->p.k > 0) cs = check_pointer(pl, W, "W", -1, stream);   /* K = 0: W is not read */
    if (cs == MG_OK) cs = check_pointer(pl, b, "b", -1, stream);
    if (cs != MG_OK) return cs;
    /* The graph was captured with the old weights' pointers and prepared state: capture again on next use. */
    mg_plan_graph_reset(pl);
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
mg_status mg_run_full(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream) {
    const mg_launch_plan *lp;
    mg_status st = get_launch_plan(pl, p, &lp);
    if (st != MG_OK) return st;
    if (cublasSetStream(pl->cublas, (cudaStream_t)stream) != CUBLAS_STATUS_SUCCESS)
        return mg_set_error(MG_ERR_CUBLAS, "cublasSetStream failed");
    /* After cublasSetStream, which resets the workspace to cuBLAS's pool (see MG_CUBLAS_WS_BYTES). */
    if (pl->cublas_ws && cublasSetWorkspace(pl->cublas, pl->cublas_ws, pl->cublas_ws_bytes) != CUBLAS_STATUS_SUCCESS)
        return mg_set_error(MG_ERR_CUBLAS, "cublasSetWorkspace failed");
    const mg_io io = {x, pl->W, pl->b, pl->partial, pl->ws, pl->cublas, out};
    /* NVTX ranges (host side, the enqueue of each phase): nsys / ncu show the op as classify, GEMM+epilogue and
     * finalize under "maxgemm forward" (make nsys). */
    nvtxRangePushA("maxgemm gemm+epilogue");
    st = pl->runner->launch(lp, &io, pl->prep.state, stream);
    nvtxRangePop();
    if (st != MG_OK) return st;
    if (lp->fused_finalize) return MG_OK;   /* the launch wrote out (its last CTA: kernel 8) */
    const float *rem = lp->rem_chunks > 0 ? (const float *)((const char *)pl->ws + lp->rem_offset) : NULL;
    nvtxRangePushA("maxgemm finalize");
    st = mg_finalize_rem(pl->partial, lp->partial_rows, mg_partial_len(p), p->max_dim, p->prec, out, pl->fin_scratch,
                         rem, lp->rem_cols, lp->rem_chunks, pl->opt.pdl, stream);
    nvtxRangePop();
    return st;
}

mg_status mg_forward_rows(mg_plan *pl, int64_t m, const void *x, void *out, void *stream) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    if (m < 1 || m > pl->p.m)
        return mg_set_error(MG_ERR_SHAPE, "batch of %lld rows does not fit this plan (M = %d: 1 <= m <= M)",
                            (long long)m, pl->p.m);
    if (!out || (!x && pl->p.k > 0)) return mg_set_error(MG_ERR_INVALID_ARG, "x or out is NULL");
    if (!pl->have_weights)
        return mg_set_error(MG_ERR_NO_WEIGHTS, "mg_forward before a successful mg_set_weights (the last one failed "
                            "or there was none)");
    mg_status cs = check_device(pl);
    if (cs == MG_OK && x && pl->p.k > 0) cs = check_pointer(pl, x, "x", 0, stream);   /* K = 0: x is not read */
    if (cs == MG_OK) cs = check_pointer(pl, out, "out", 1, stream);
    if (cs == MG_OK) cs = check_out_disjoint(pl, m, x, out);
    if (cs != MG_OK) return cs;
    const mg_problem p = batch_problem(pl, (int)m, x);
    nvtxRangePushA("maxgemm forward");
    const mg_status st = (p.max_dim == 1 && pl->desc.shortcut) ? mg_run_shortcut(pl, &p, x, out, stream)
                                                               : mg_run_full(pl, &p, x, out, stream);
    nvtxRangePop();
    return st;
}

mg_status mg_forward(mg_plan *pl, const void *x, void *out, void *stream) {
    return mg_forward_rows(pl, pl ? pl->p.m : 0, x, out, stream);
}
