/* mg_kernel.h: the contract between the library, the registry and every kernel variant.
 *
 * A kernel variant computes the fused GEMM + bias + max-reduction and writes PARTIAL MAXIMA, never y:
 *   max_dim 1 (row max):    partial[t * M + i] = nanmax over the columns j of column-tile t of y[i, j]
 *   max_dim 0 (column max): partial[t * N + j] = nanmax over the rows    i of row-tile    t of y[i, j]
 * where y[i,j] = sum_k x[i,k] * W[j,k] + b[j] (bias added BEFORE the max, so NaN/inf rules stay exact)
 * and nanmax propagates NaN the way torch.max does (mg_nanmaxf below; fmaxf does not).
 * A kernel works in four steps (mg_kernel_ops below): plan (every choice for a problem, on the host, into an
 * mg_launch_plan that says how many partial rows the launch writes), prepare (weight side, once per
 * mg_set_weights), launch (reads the plan, decides nothing), release. The shared finalize (kernels/finalize.cu)
 * then reduces the plan's partial rows and applies mean-subtraction and the exact erf GELU, unless the plan says the
 * launch did that itself (fused_finalize: kernel 8's fused finish). Kernel 0 (cuBLAS)
 * writes y to its workspace and reduces it with a separate kernel into 1 partial row; it is the same contract.
 *
 * Element types: fp32 and tf32 modes read float x/W/b; bf16 mode reads __nv_bfloat16 x/W/b.
 * partial is always float (the fp32 accumulator plus bias). out is float, or bf16 in bf16 mode.
 */
#ifndef MG_KERNEL_H
#define MG_KERNEL_H

#include "maxgemm.h"
#include "mg_status.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mg_problem {
    int m, n, k;
    int max_dim;            /* normalised: 0 (column max) or 1 (row max) */
    mg_precision prec;
    /* Operand alignment, part of the problem because a plan depends on it (TMA reads in place, 16-byte loads):
     * bit 0: x's base is 16-byte aligned; bit 1: W's base is. The library sets both from the pointers it is given
     * (mg_forward_rows, mg_set_weights); a zeroed problem says "not aligned", the safe choice. */
    unsigned align;
} mg_problem;
#define MG_ALIGN_X16 1u
#define MG_ALIGN_W16 2u

/* The device a plan is made for (mg_plan_create asks CUDA once). */
typedef struct mg_device {
    int ordinal, sm, num_sms;
    char name[256];         /* cudaDeviceProp.name ("NVIDIA H200"): the key of the dispatch tables (src/dispatch.h) */
} mg_device;

/* ---- the launch plan ---------------------------------------------------------------------------------------
 * EVERY choice a kernel makes for a problem (tile configuration, panels, stream-K or split-K, remainder split,
 * grid, padding, workspace offsets) is made once, on the host, by the kernel's plan step, into this struct. The
 * library caches it per (m, x alignment) in the mg_plan; launch reads it and decides nothing. */
typedef struct mg_launch_plan {
    mg_problem p;           /* the problem it was made for (p.m: this batch) */
    int partial_rows;       /* rows of partial maxima the launch writes; the finalize reduces exactly these */
    size_t ws_bytes;        /* bytes of workspace the launch uses (from the start of the plan's workspace) */
    /* Optional column sums the finalize folds into max_dim 1's row maxima (kernel 4's remainder split): rem_chunks
     * x rem_cols rows of M floats at workspace + rem_offset, row (j, c) at (j * rem_cols + c) * M: chunk j's share of
     * y[i, c'] for the c-th column c' the partial rows do not cover; y[i, c'] = the sum over j in ascending order. */
    size_t rem_offset;
    int rem_cols, rem_chunks;   /* rem_cols <= 8, rem_chunks <= MG_REM_MAX_CHUNKS; 0: none */
    /* 1: the launch writes the output itself (mg_io::out: the mean and GELU in the kernel's last CTA, kernel 8) and the
     * library runs no finalize after it; the partial rows are written all the same (the tests read them). */
    int fused_finalize;
    char summary[200];      /* one line: what was chosen (printed by --verbose; the bench's notes) */
    /* The kernel's own part of the plan (its template configuration, grid, offsets), opaque to the library. */
    union {
        unsigned char bytes[512];
        double align_;
    } priv;
} mg_launch_plan;
#define MG_REM_MAX_CHUNKS 16

/* What a launch reads and writes (device pointers). */
typedef struct mg_io {
    const void *x, *w, *b;  /* the caller's operands */
    float *partial;         /* lp->partial_rows rows of M (max_dim 1) or N (max_dim 0) floats */
    void *ws;               /* the plan's workspace: lp->ws_bytes of it are this launch's (NULL if 0). The owner zeroes
                             * it ONCE when it allocates it; a kernel that keeps state there between launches (the
                             * stream-K flags, at a fixed offset) leaves it zero again. */
    void *cublas;           /* cublasHandle_t owned by the plan, bound to the launch's stream */
    void *out;              /* the forward's output (M or N elements of the precision's type): written by a launch whose
                             * plan says fused_finalize, else unused (may be NULL) */
} mg_io;

/* Weight-side state a kernel prepared in mg_set_weights. */
typedef struct mg_prepared {
    void *state;            /* the kernel's own (device buffers, TMA descriptors); freed by its release */
    /* Non-NULL: these weights need another kernel to keep the semantics exact (kernels 5 and 6: W holding +-inf,
     * which a bf16 hi/lo split cannot carry: x_lo * W_hi = 0 * inf = NaN where fp32 gives +-inf). The library
     * then plans and launches that kernel instead, until the next mg_set_weights. */
    const struct mg_kernel_ops *runner;
} mg_prepared;

/* What a kernel file exports: one const mg_kernel_ops named mg_ops_<name> (extern "C"). */
typedef struct mg_kernel_ops {
    /* MG_OK if this kernel can run p on a GPU of compute capability sm (0: any), else MG_ERR_UNSUPPORTED with
     * mg_set_error() saying why (may be NULL: everything in its precision mask is supported). */
    mg_status (*supports)(const mg_problem *p, int sm);
    /* The most partial rows and workspace bytes any plan for a batch m <= p->m may need, whatever the options
     * (mg_plan_create sizes its buffers once with these). */
    void (*bounds)(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes);
    /* Every choice for (p, dev, opt): fills *lp (already zeroed, lp->p = *p). Host only, no CUDA calls. */
    mg_status (*plan)(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp);
    /* Weight-side preparation (may be NULL). Called from mg_set_weights, stream-ordered. */
    mg_status (*prepare)(const mg_problem *p, const mg_device *dev, const void *w, const void *b, mg_prepared *out,
                         void *stream);
    void (*release)(void *state);   /* frees what prepare made (may be NULL) */
    /* Enqueues the plan on stream; checks its launch errors. Reads the plan, writes nothing back. */
    mg_status (*launch)(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream);
} mg_kernel_ops;

/* One registry row. */
typedef struct mg_kernel {
    int id;                 /* the registry number; cuBLAS is 0 */
    const char *name;       /* short, unique, CLI-friendly: "cublas", "naive", "mma_sync", ... */
    const char *technique;  /* one line: what this variant does */
    unsigned precisions;    /* bitmask of (1u << mg_precision) it supports */
    int min_sm;             /* minimum compute capability * 10 (e.g. 90 for sm_90a) */
    const char *tile_config;/* the tile_configs/ entry it uses ("-" for none) */
    int auto_rank;          /* higher is preferred by auto among kernels supporting the problem; 0 = never */
    int baseline;           /* 1 for cuBLAS-built baselines (kernel 0, cuBLAS bf16x3) */
    const char *device_fn;  /* regex of its device function names, for Nsight Compute's -k (make ncu) */
    const mg_kernel_ops *ops; /* its code */
    /* Where auto may take it (may be NULL: wherever supports() says yes). Kernel 7's limits live in its file. */
    int (*auto_fits)(const mg_problem *p);
} mg_kernel;

/* Fills the generic part of a launch plan that has no private part: partial rows, workspace, a summary. */
void mg_plan_simple(mg_launch_plan *lp, int partial_rows, size_t ws_bytes, const char *summary);

/* The registry (src/registry.c): one table that the library, CLI, tests, bench and plots read. */
int mg_registry_count(void);
const mg_kernel *mg_registry_at(int index);          /* by position, 0 .. count-1 */
const mg_kernel *mg_registry_find(int id);           /* by number, NULL if absent */
const mg_kernel *mg_registry_find_name(const char *name);
/* Parses "3", "wgmma" or "auto"; *id = MG_KERNEL_AUTO for auto. */
mg_status mg_registry_parse(const char *s, int *id);
/* The auto choice for a problem on a GPU of compute capability sm (e.g. 90); NULL if none fits. */
const mg_kernel *mg_registry_auto(const mg_problem *p, int sm);
/* 1 if the kernel was compiled into this build (its launcher is linked). */
int mg_kernel_available(const mg_kernel *k);

/* Errors: mg_set_error (mg_status.h). */

/* Shared device-side pieces (kernels/finalize.cu) -------------------------------------------- */
/* Reduces ntiles partial rows of len floats and writes out (len = M for max_dim 1, N for max_dim 0):
 *   max_dim 1: out[i] = gelu(m[i] - m[i]),  max_dim 0: out[j] = gelu(c[j] - mean(c)) with the mean summed
 * in fp64 in a fixed order (deterministic). out is float, or bf16 when prec is MG_PREC_BF16. */
mg_status mg_finalize(const float *partial, int ntiles, int len, int max_dim, mg_precision prec,
                      void *out, void *scratch /* >= mg_finalize_scratch_bytes(len) */, void *stream);
size_t mg_finalize_scratch_bytes(int len);
/* mg_finalize, and for max_dim 1 with rem_chunks > 0 also the remainder columns of a launch plan (rem, at the
 * plan's rem_offset of the workspace): m[i] = nanmax(max_t partial[t][i], max_c sum_j rem[(j * rem_cols + c) * len
 * + i]). max_dim 0 takes none. pdl: launch with programmatic dependent launch (mg_options.pdl; ignored while the
 * stream is being captured). */
mg_status mg_finalize_rem(const float *partial, int ntiles, int len, int max_dim, mg_precision prec, void *out,
                          void *scratch, const float *rem, int rem_cols, int rem_chunks, int pdl, void *stream);
/* Whether a launch on stream may use programmatic dependent launch: want (mg_options.pdl) and the stream is not being
 * captured (kernels/finalize.cu; kernel 11 uses it too). */
int mg_pdl_usable(int want, void *stream);
/* 1 when the runtime says stream is not being captured; 0 when it is, or the runtime cannot say (the legacy stream
 * beside another thread's global capture). */
int mg_stream_not_capturing(void *stream);

/* The exact SIMT kernel the split kernels fall back to (kernels/01_naive.cu). */
extern const mg_kernel_ops mg_ops_naive;

/* Helpers -------------------------------------------------------------------------------------- */
static inline int mg_cdiv(int a, int b) { return (a + b - 1) / b; }
static inline size_t mg_elem_bytes(mg_precision p) { return p == MG_PREC_BF16 ? 2 : 4; }
static inline int mg_partial_len(const mg_problem *p) { return p->max_dim == 1 ? p->m : p->n; }

#ifdef __cplusplus
}
#endif

#ifdef __CUDACC__
#include <cuda_bf16.h>
/* NaN-propagating max, as torch.max: a NaN in either argument gives NaN. */
__device__ __forceinline__ float mg_nanmaxf(float a, float b) { return (a != a || a > b) ? a : b; }
/* An element of x, W or b as fp32 (fp32 and tf32 modes store float, bf16 mode __nv_bfloat16: exact either way). */
__device__ __forceinline__ float mg_to_f32(float v) { return v; }
__device__ __forceinline__ float mg_to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
/* The exact erf GELU, as torch (approximate='none'), in fp32 and fp64. gelu(-inf) = -inf * 0 = NaN, as the formula
 * gives. The shared finalize, kernel 8's fused finish and the fp64 reference use these. */
__device__ __forceinline__ float mg_gelu_f32(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678118654752440f)); }
__device__ __forceinline__ double mg_gelu_f64(double v) { return 0.5 * v * (1.0 + erf(v * 0.70710678118654752440)); }
/* out[i] = v in the output's type (float, or bf16 in the bf16 mode), rounded once. */
__device__ __forceinline__ void mg_store_out(float *out, int i, float v) { out[i] = v; }
__device__ __forceinline__ void mg_store_out(__nv_bfloat16 *out, int i, float v) { out[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void mg_store_out(float *out, int i, double v) { out[i] = (float)v; }
__device__ __forceinline__ void mg_store_out(__nv_bfloat16 *out, int i, double v) { out[i] = __double2bfloat16(v); }
/* cudaLaunchKernelEx's configuration for grid x block threads with smem bytes of dynamic shared memory on stream s and
 * the one launch attribute *attr (the caller's, filled: it must outlive the launch). Every cudaLaunchKernelEx of the
 * library is configured here (mg_launch_cooperative, mg_launch_config, kernel 8's cluster launch). */
static inline cudaLaunchConfig_t mg_launch_config_attr(dim3 grid, dim3 block, size_t smem, cudaStream_t s,
                                                       cudaLaunchAttribute *attr) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    return cfg;
}
/* A cooperative launch of kern (grid x block threads, smem bytes of dynamic shared memory, stream s): the runtime
 * starts every CTA at once or refuses the grid (cudaErrorCooperativeLaunchTooLarge and the like, returned here), so a
 * kernel whose CTAs wait for other CTAs of the same launch never runs partly resident. Kernel 8's grid finish and
 * kernels 4 / 6's stream-K launch through it; it is capturable (a graph's cooperative kernel node). */
template <class... P, class... A>
static inline cudaError_t mg_launch_cooperative(void (*kern)(P...), unsigned grid, unsigned block, size_t smem,
                                                cudaStream_t s, A... args) {
    cudaLaunchAttribute attr = {};
    attr.id = cudaLaunchAttributeCooperative;
    attr.val.cooperative = 1;
    const cudaLaunchConfig_t cfg = mg_launch_config_attr(grid, block, smem, s, &attr);
    return cudaLaunchKernelEx(&cfg, kern, args...);
}
/* The configuration of a cudaLaunchKernelEx launch: grid, block and stream, and the programmatic stream serialization
 * attribute (written to *attr, which must outlive the launch) when pdl is nonzero; whether a launch may use PDL is
 * mg_pdl_usable's to say. The finalize, the int8 layer's fallback and kernel 11 launch through it. */
static inline void mg_launch_config(cudaLaunchConfig_t *cfg, cudaLaunchAttribute *attr, dim3 grid, dim3 block,
                                    cudaStream_t stream, int pdl) {
    *attr = cudaLaunchAttribute{};
    attr->id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr->val.programmaticStreamSerializationAllowed = 1;
    *cfg = mg_launch_config_attr(grid, block, 0, stream, attr);
    cfg->numAttrs = pdl ? 1 : 0;
}
#endif

/* CUDA error plumbing for .cu launchers: returns MG_ERR_CUDA with the call text and CUDA's message. */
#define MG_CUDA_TRY(call)                                                                            \
    do {                                                                                             \
        cudaError_t mg_e_ = (call);                                                                  \
        if (mg_e_ != cudaSuccess)                                                                    \
            return mg_set_error(MG_ERR_CUDA, "%s:%d: %s: %s", __FILE__, __LINE__, #call,              \
                                cudaGetErrorString(mg_e_));                                          \
    } while (0)
/* After a <<<>>> launch. */
#define MG_LAUNCH_CHECK() MG_CUDA_TRY(cudaGetLastError())

#endif /* MG_KERNEL_H */
