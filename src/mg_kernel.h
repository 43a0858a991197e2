/* mg_kernel.h: the contract between the library, the registry and every kernel variant.
 *
 * A kernel variant computes the fused GEMM + bias + max-reduction and writes PARTIAL MAXIMA, never y:
 *   max_dim 1 (row max):    partial[t * M + i] = nanmax over the columns j of column-tile t of y[i, j]
 *   max_dim 0 (column max): partial[t * N + j] = nanmax over the rows    i of row-tile    t of y[i, j]
 * where y[i,j] = sum_k x[i,k] * W[j,k] + b[j] (bias added BEFORE the max, so NaN/inf rules stay exact)
 * and nanmax propagates NaN the way torch.max does (mg_nanmaxf below; fmaxf does not).
 * The kernel reports how many partial rows it wrote in args->ntiles (at most kernel->partial_tiles()).
 * The shared finalize (kernels/finalize.cu) then reduces the partial rows and applies
 * mean-subtraction and the exact erf GELU. Kernel 0 (cuBLAS) writes y to its workspace and reduces it with
 * a separate kernel into ntiles = 1 partial row; it is the same contract.
 *
 * Element types: fp32 and tf32 modes read float x/W/b; bf16 mode reads __nv_bfloat16 x/W/b.
 * partial is always float (the fp32 accumulator plus bias). out is float, or bf16 in bf16 mode.
 */
#ifndef MG_KERNEL_H
#define MG_KERNEL_H

#include "maxgemm.h"
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mg_problem {
    int m, n, k;
    int max_dim;            /* normalised: 0 (column max) or 1 (row max) */
    mg_precision prec;
} mg_problem;

/* Weight-side state a kernel prepared in mg_set_weights (owned by the plan, freed by kernel->release). */
typedef struct mg_prepared {
    void *buf[4];           /* device buffers the kernel allocated (e.g. W hi / W lo, padded W) */
    size_t bytes[4];
    void *host;             /* host-side state (e.g. TMA descriptors), malloc'ed */
    int ld;                 /* leading dimension of the prepared W, if padded */
    int exact_fallback;     /* split kernels: W holds +-inf, which a bf16 hi/lo split cannot carry exactly
                             * (x_lo * W_hi = 0 * inf = NaN where fp32 gives +-inf): launch runs the exact
                             * fp32 SIMT kernel (naive) instead. Rare inputs, exact semantics. */
} mg_prepared;

typedef struct mg_launch_args {
    mg_problem p;
    const void *x, *w, *b;  /* device; the caller's pointers */
    const mg_prepared *prep;/* what kernel->prepare made (zeroed if it has none) */
    float *partial;         /* kernel->partial_tiles(p) rows of M (max_dim 1) or N (max_dim 0) floats */
    int ntiles;             /* OUT: partial rows written */
    void *ws;               /* scratch of kernel->workspace_bytes() bytes (may be NULL if 0), sized for the plan's
                             * problem: p.m here may be a sub-batch of it (mg_forward_rows) */
    size_t ws_bytes;        /* the size of ws: a kernel that keeps state in its scratch between launches places it
                             * at a position that does not move with p.m (wgmma_ws: the end) */
    void *stream;           /* cudaStream_t */
    void *cublas;           /* cublasHandle_t owned by the plan, already bound to stream */
    int num_sms;            /* of the current device */
    /* OUT, optional (zero: none): column sums the finalize folds into max_dim 1's row maxima (kernel 4's remainder
     * split, kernels/wgmma_ws.cuh). rem holds rem_chunks x rem_cols rows of M floats, row (j, c) at
     * rem + (j * rem_cols + c) * M: chunk j's share of y[i, c'] for the c-th column c' the partial rows do not
     * cover (bias included in chunk 0); y[i, c'] = the sum over j in ascending order. */
    const float *rem;
    int rem_cols, rem_chunks;   /* rem_cols <= 8, rem_chunks <= MG_REM_MAX_CHUNKS */
} mg_launch_args;
#define MG_REM_MAX_CHUNKS 16

/* What a kernel file exports: one const mg_kernel_ops named mg_ops_<name> (extern "C"). */
typedef struct mg_kernel_ops {
    /* How many partial rows the launch may write for this problem. */
    int (*partial_tiles)(const mg_problem *p);
    /* Scratch bytes the launch needs (may be NULL: none). The owner zeroes the scratch ONCE when it allocates it;
     * a kernel that keeps state there between launches (wgmma_ws's stream-K flags) must leave it zero again. */
    size_t (*workspace_bytes)(const mg_problem *p);
    /* Returns MG_OK if this kernel can run p, else MG_ERR_UNSUPPORTED with mg_set_error() saying why
     * (may be NULL: everything in its precision mask is supported). */
    mg_status (*supports)(const mg_problem *p, int sm);
    /* Weight-side preparation (may be NULL). Called from mg_set_weights, stream-ordered. */
    mg_status (*prepare)(const mg_problem *p, const void *w, const void *b, mg_prepared *out, void *stream);
    void (*release)(mg_prepared *prep);  /* frees what prepare made (may be NULL) */
    /* Enqueues the fused computation on args->stream; checks its launch errors. */
    mg_status (*launch)(mg_launch_args *args);
} mg_kernel_ops;

/* One registry row. */
typedef struct mg_kernel {
    int id;                 /* the registry number; cuBLAS is 0 */
    const char *name;       /* short, unique, CLI-friendly: "cublas", "naive", "mma_sync", ... */
    const char *technique;  /* one line: what this variant does */
    unsigned precisions;    /* bitmask of (1u << mg_precision) it supports */
    int min_sm;             /* minimum compute capability * 10 (e.g. 90 for sm_90a) */
    const char *tile_config;/* the tile_configs/ entry it uses ("-" for none) */
    int auto_rank;          /* higher is preferred by auto among kernels supporting the precision (and the M
                             * range, auto_max_m); 0 = never */
    int baseline;           /* 1 for cuBLAS-built baselines (kernel 0, cuBLAS bf16x3) */
    const char *device_fn;  /* regex of its device function names, for Nsight Compute's -k (make ncu) */
    const mg_kernel_ops *ops; /* its code (NULL would mark a row that is not built) */
    int auto_max_m[MG_PREC_COUNT]; /* per precision: > 0: auto takes this kernel only for M <= it (it runs any M
                             * when asked); 0: no limit */
    int auto_row_align;     /* > 0: auto takes it only when a row of x and W (K elements) is a multiple of this many
                             * bytes (kernel 7's 16-byte loads; other rows run a scalar path, never measured fast) */
} mg_kernel;

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

/* Errors: a thread-local detail message that mg_last_error() returns. printf-style. */
mg_status mg_set_error(mg_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Shared device-side pieces (kernels/finalize.cu) -------------------------------------------- */
/* Reduces ntiles partial rows of len floats and writes out (len = M for max_dim 1, N for max_dim 0):
 *   max_dim 1: out[i] = gelu(m[i] - m[i]),  max_dim 0: out[j] = gelu(c[j] - mean(c)) with the mean summed
 * in fp64 in a fixed order (deterministic). out is float, or bf16 when prec is MG_PREC_BF16. */
mg_status mg_finalize(const float *partial, int ntiles, int len, int max_dim, mg_precision prec,
                      void *out, void *scratch /* >= mg_finalize_scratch_bytes(len) */, void *stream);
size_t mg_finalize_scratch_bytes(int len);
/* mg_finalize, and for max_dim 1 with rem_chunks > 0 also the remainder columns of mg_launch_args::rem:
 * m[i] = nanmax(max_t partial[t][i], max_c sum_j rem[(j * rem_cols + c) * len + i]). max_dim 0 takes none. */
mg_status mg_finalize_rem(const float *partial, int ntiles, int len, int max_dim, mg_precision prec, void *out,
                          void *scratch, const float *rem, int rem_cols, int rem_chunks, void *stream);

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
