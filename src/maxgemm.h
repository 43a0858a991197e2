/* maxgemm.h: the one public header of libmaxgemm.
 *
 * maxgemm computes the PyTorch model  out = gelu(max(x @ W^T + b, dim=max_dim) - mean)
 * (the contract: docs/SEMANTICS.md) on NVIDIA GPUs, without ever writing the M x N product.
 *
 * Layout conventions (everywhere in the project):
 *   x   : M x K, row-major (K contiguous)            -- the activations
 *   W   : N x K, row-major (K contiguous)            -- nn.Linear's weight; both operands are K-major
 *   b   : N
 *   out : max_dim 1 (or -1): M values (M x 1);  max_dim 0 (or -2): N values (1 x N)
 * Element type: float for MG_PREC_FP32 and MG_PREC_TF32, bf16 (__nv_bfloat16 / uint16_t bits)
 * for MG_PREC_BF16. All pointers are device pointers; every call is asynchronous on the caller's stream
 * unless it says otherwise.
 *
 * Threads and streams. A plan runs one forward at a time: its calls must come from one thread at a time, and its
 * forwards must not overlap on different streams (each reuses the plan's workspace, partial maxima, counters and
 * graphs; order them with events, or make one plan per stream). Different plans share nothing: one per thread or
 * per stream is safe. mg_last_error() is per thread; mg_dispatch_load() may be called at any time (plans copy
 * their rows when created). The host waits on the device in mg_plan_destroy, in mg_set_weights, and in a max_dim 1
 * forward whose short-circuit runs in poll or sync mode (the default tail mode does not, unless its graphs cannot
 * be built here and it falls back, or the graphs of 8 earlier calls on other x / out buffers are all still queued).
 * Kernels 4 and 6 finish stream-K tiles, and kernel 8 max_dim 0's grid finish, by waiting for other CTAs of the same
 * launch; those launches are cooperative, so the runtime starts the whole grid (one CTA per SM) at once or refuses
 * it with an error (e.g. under MPS with fewer SMs than the plan's grid), never a partly resident grid that hangs.
 */
#ifndef MAXGEMM_H
#define MAXGEMM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mg_status {
    MG_OK = 0,
    MG_ERR_INVALID_ARG,     /* a NULL pointer or a malformed descriptor */
    MG_ERR_SHAPE,           /* M, N or K out of range, an empty reduction (M=0 with max_dim 0, N=0 with max_dim 1),
                             * or an empty output (the other two: torch gives 1 x 0 / 0 x 1; a plan needs M, N >= 1) */
    MG_ERR_MAX_DIM,         /* max_dim outside {-2, -1, 0, 1} */
    MG_ERR_PRECISION,       /* unknown precision mode */
    MG_ERR_KERNEL,          /* unknown kernel number or name */
    MG_ERR_UNSUPPORTED,     /* the kernel does not support this precision, GPU or shape */
    MG_ERR_NO_DEVICE,       /* no CUDA device is present */
    MG_ERR_OUT_OF_MEMORY,   /* a device allocation failed (or the problem exceeds device memory) */
    MG_ERR_NO_WEIGHTS,      /* mg_forward before mg_set_weights */
    MG_ERR_CUDA,            /* a CUDA runtime call or a kernel launch failed */
    MG_ERR_CUBLAS,          /* a cuBLAS call failed */
    MG_STATUS_COUNT
} mg_status;

typedef enum mg_precision {
    MG_PREC_FP32 = 0,       /* fp32 in, fp32 out, accuracy bar atol = rtol = 1e-4 against fp64 */
    MG_PREC_TF32 = 1,       /* fp32 in, tf32 tensor cores allowed, bar 2e-3 */
    MG_PREC_BF16 = 2,       /* bf16 in, bf16 out, fp32 accumulation, bar 1e-2 */
    MG_PREC_COUNT
} mg_precision;

#define MG_KERNEL_AUTO (-1)

typedef struct mg_plan_desc {
    int64_t m, n, k;        /* batch, out_features, in_features */
    int max_dim;            /* -2, -1, 0 or 1 (normalised internally to 0 or 1) */
    mg_precision precision;
    int kernel;             /* a registry number, or MG_KERNEL_AUTO */
    int shortcut;           /* max_dim 1 only: 1 = use the exact certificate short-circuit (default), 0 = full compute */
} mg_plan_desc;

/* A descriptor with the model's defaults: M=1024, N=8192, K=8192, max_dim 1, fp32, auto kernel, shortcut on. */
mg_plan_desc mg_plan_desc_default(void);

typedef struct mg_plan mg_plan;

/* Options: the switches a user may set on a plan (the CLI's flags map onto them one to one; `maxgemm run --help`).
 * Every kernel's plan step reads them; nothing in the library reads the environment. Start from
 * mg_options_default() and change fields; values outside a field's range are MG_ERR_INVALID_ARG. */
typedef enum mg_tiles {
    MG_TILES_AUTO = 0,      /* the kernel's policy picks (src/ws_policy.h for kernel 4) */
    MG_TILES_MAIN,          /* kernel 4: 128 x 256 */
    MG_TILES_MID,           /* kernel 4: 128 x 128 */
    MG_TILES_SMALL,         /* kernel 4: 64 x 128 */
    MG_TILES_N192,          /* kernel 4: 128 x 192 */
    MG_TILES_COUNT
} mg_tiles;
typedef enum mg_switch {
    MG_SWITCH_AUTO = 0,     /* where the policy takes it */
    MG_SWITCH_OFF = 1,      /* never */
    MG_SWITCH_FORCE = 2,    /* wherever it can run (tests) */
    MG_SWITCH_COUNT
} mg_switch;
typedef enum mg_mcast {
    MG_MCAST_AUTO = 0,      /* kernel 8's policy: W where there is an even number of x tiles, else x */
    MG_MCAST_W = 1,         /* the cluster's CTAs on one W tile and two x tiles, W boxes multicast (needs an even
                             * number of x tiles: else x, as a request) */
    MG_MCAST_X = 2,         /* the cluster's CTAs on two W tiles and one x tile, x boxes multicast */
    MG_MCAST_COUNT
} mg_mcast;
typedef struct mg_options {
    mg_tiles tiles;         /* kernel 4's tile configuration */
    mg_switch streamk;      /* kernels 4 and 6: stream-K below half a wave (AUTO), never (OFF), or also over the
                             * last partial wave of a grid of several (FORCE: src/ws_policy.h) */
    mg_switch mixed_panels; /* kernel 4: 256- and 248-wide column panels where they even out the waves */
    mg_switch rem_split;    /* kernel 4, max_dim 1: the leftover columns split along K (with the mixed panels) */
    int pdl;                /* 1: programmatic dependent launch where a launch follows another (the finalize after the
                             * GEMM, kernel 11 and its fallback around the pre-pass; default); 0: plain launches */
    int shortcut_mode;      /* max_dim 1 short-circuit: 0 graph, 1 poll, 2 sync, 3 tail (default; shortcut.h) */
    int verbose;            /* 1: print every launch plan to stderr when it is made */
    int splits;             /* kernel 8: its split-K factor, 1 .. MG_SPLITS_MAX (clamped to what its plan allows);
                             * 0 (default): its policy (src/swapab_policy.h) */
    int x_tile;             /* kernel 8: its x-tile width (wgmma's N), one of tile_configs/wgmma_swapab.cfg's bm (8 ..
                             * MG_X_TILE_MAX; for M <= 256 no wider than its policy's); 0 (default): its policy */
    int cluster;            /* kernel 8: CTAs per cluster sharing boxes by TMA multicast, 1 or 2 (a request, like
                             * splits: two-consumer x tiles only, else 1; W boxes with an even number of x tiles, else
                             * x boxes); 0 (default): its configuration's (tile_configs/wgmma_swapab.cfg) */
    mg_switch fuse;         /* kernel 8 finishes the forward (no finalize launch after it): max_dim 1 in the kernel
                             * with no wait at its end (THE START TICKET), max_dim 0 by every CTA in one cooperative
                             * launch in clusters of 1, the CTAs' sums exchanged through tagged slots (THE GRID
                             * FINISH, kernels/swapab_finish.cuh) (AUTO, the default); never (OFF: the shared
                             * finalize kernels); FORCE: as AUTO, and max_dim 0 in clusters of 2 by the last CTA, up
                             * to N = 16384, refusing wider N */
    mg_mcast mcast;         /* kernel 8 in clusters of 2: which operand the two CTAs share and multicast (AUTO: its
                             * policy; W or X: that one); nothing in clusters of 1 */
    int w_rows;             /* kernel 8: W rows per tile, 64, 128 or 256 (its configurations of that height only:
                             * 128 at M <= 64 runs the 64-row x tile on two consumers, split by its rule; 256 needs
                             * several x tiles); 0 (default): its policy */
} mg_options;
#define MG_X_TILE_MAX 256
/* The values mg_options.x_tile takes: 0 (kernel 8's policy) or a multiple of 8 (wgmma's N step) up to MG_X_TILE_MAX. */
#define MG_X_TILE_VALID(v) ((v) >= 0 && (v) <= MG_X_TILE_MAX && (v) % 8 == 0)
#define MG_SPLITS_MAX 16
/* The values mg_options.w_rows takes: 0 (kernel 8's policy) or one of its tile heights. */
#define MG_W_ROWS_VALID(v) ((v) == 0 || (v) == 64 || (v) == 128 || (v) == 256)
mg_options mg_options_default(void);
/* "main", "mid", "small", "n192", "auto" -> the configuration; MG_ERR_INVALID_ARG otherwise. */
mg_status mg_tiles_parse(const char *s, mg_tiles *out);
const char *mg_tiles_name(mg_tiles t);
/* The library's version, "MAJOR.MINOR.PATCH". */
const char *mg_version(void);
/* sizeof(mg_plan_desc) and sizeof(mg_options) as this library was built: bindings that mirror the structs (the
 * Python package's ctypes PlanDesc and Options) compare them at load time instead of trusting their own copy. */
size_t mg_plan_desc_size(void);
size_t mg_options_size(void);

/* The measured dispatch table auto follows (tile_configs/README.md, notes/dispatch.md): by default the tables compiled
 * in from tile_configs/dispatch/GPU.tsv, looked up by the GPU's name. mg_dispatch_load(path) replaces them, for the
 * whole process and the plans created afterwards, with the table in file path (checked as the build checks the
 * committed ones; a malformed file is MG_ERR_INVALID_ARG naming the line, and changes nothing); a table that does not
 * name this GPU (e.g. /dev/null) leaves auto to the registry's rule. path NULL: the compiled-in tables again. */
mg_status mg_dispatch_load(const char *path);

/* Validates desc, picks the kernel (auto: the row of this GPU's dispatch table for the precision, max_dim and M,
 * measured against kernel 0; without one, the registry's rule: the highest-ranked kernel that meets the precision's
 * bar on this GPU), allocates the workspace on the current device. */
mg_status mg_plan_create(mg_plan **plan, const mg_plan_desc *desc);
/* Weight-side preparation happens here and only here (splits, padding, the short-circuit's statistics).
 * W (N x K) and b (N) must stay valid and unchanged until the next mg_set_weights or mg_plan_destroy. A failed call
 * leaves the plan without weights. Both calls below check, before anything is launched, that the current device is
 * the plan's and that every pointer is aligned to its elements and (outside stream capture, where the runtime says)
 * memory of that device (another GPU's is refused, peer access or not), not pageable host memory the GPU cannot
 * address: MG_ERR_INVALID_ARG naming the argument. x and W are not checked where K = 0 (nothing reads them). */
mg_status mg_set_weights(mg_plan *plan, const void *W, const void *b, void *stream /* cudaStream_t */);
/* x: M x K, out: M or N elements; both device pointers of the plan's element type; out shares no byte with x, W
 * or b (MG_ERR_INVALID_ARG). Kernel 4 (wgmma_ws) reads x in place through TMA where K x the element size is a
 * multiple of 16 bytes, and then needs x 16-byte aligned, as every cudaMalloc'd or torch-allocated base is: an x at
 * another offset is refused (MG_ERR_UNSUPPORTED, naming the alignment; its workspace has no room for a copy of x).
 * The other kernels take it (3, 6 and 8 copy it into their workspace, the others read it with narrower loads). The
 * Python binding copies a misaligned x itself. */
mg_status mg_forward(mg_plan *plan, const void *x, void *out, void *stream /* cudaStream_t */);
/* The same for a batch of m rows, 1 <= m <= the plan's M (a plan's M is its capacity): one plan serves every
 * batch size up to it. m outside that range is MG_ERR_SHAPE. */
mg_status mg_forward_rows(mg_plan *plan, int64_t m, const void *x, void *out, void *stream);
void mg_plan_destroy(mg_plan *plan);

/* The kernel the plan runs (its registry number), and its name. */
int mg_plan_kernel(const mg_plan *plan);
const char *mg_plan_kernel_name(const mg_plan *plan);
/* Turn the short-circuit on or off after creation (it only ever applies to max_dim 1). */
mg_status mg_plan_set_shortcut(mg_plan *plan, int on);
/* Replaces the plan's options (checked first; the cached launch plans and graphs are rebuilt on next use). */
mg_status mg_plan_set_options(mg_plan *plan, const mg_options *opt);
mg_status mg_plan_get_options(const mg_plan *plan, mg_options *opt);
/* The one-line summary of the launch plan a batch of m rows runs (made and cached if it was not), into buf. */
mg_status mg_plan_describe(mg_plan *plan, int64_t m, char *buf, size_t len);

const char *mg_strerror(mg_status s);
/* A longer message about the last failure in this thread (which argument, which CUDA error), or "". */
const char *mg_last_error(void);

const char *mg_precision_name(mg_precision p);
/* Parses "fp32", "tf32" or "bf16"; returns MG_ERR_PRECISION otherwise. */
mg_status mg_precision_parse(const char *s, mg_precision *out);
/* Accuracy bar of a precision mode: atol = rtol. */
double mg_precision_tolerance(mg_precision p);

#ifdef __cplusplus
}
#endif
#endif /* MAXGEMM_H */
