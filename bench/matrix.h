/* matrix.h: the benchmark matrix (bench/matrix.txt): its parser and its expansion into rows.
 *
 * Plain C11, no CUDA and no registry dependency, so it builds and is fuzzed on any machine. The grammar is
 * documented at the top of bench/matrix.txt. mg_matrix_parse accepts ARBITRARY bytes (NULs, no final
 * newline, overlong lines): it never crashes; it returns 0, or -1 with "FILE:LINE: message" in err.
 */
#ifndef MG_BENCH_MATRIX_H
#define MG_BENCH_MATRIX_H
#include <stddef.h>
#include <stdint.h>

#include "optkeys.h"   /* the launch options as KEY=VALUE (src/optkeys.h: pure C, no CUDA) */

#define MGM_MAX_KERNELS   64     /* kernel ids listed in 'kernels' */
#define MGM_MAX_SHAPES    256
#define MGM_MAX_LIMITS    64
#define MGM_MAX_ROWS      1024   /* explicit 'row' lines */
#define MGM_MAX_SHORTCUTS 64
#define MGM_MAX_EXPANDED  400000 /* rows after expansion (a guard against absurd matrices) */
#define MGM_MAX_VARIANTS  256    /* option combinations of 'variants' */
#define MGM_MAX_DIM       2147483647LL   /* M, N, K fit the library's int problem sizes */

/* Precisions, numbered as mg_precision in src/maxgemm.h (checked there by a static assert in bench.c). */
enum { MGM_FP32 = 0, MGM_TF32 = 1, MGM_BF16 = 2, MGM_NPREC = 3 };

typedef struct mgm_shape { int64_t m, n, k; int line; } mgm_shape;
typedef struct mgm_limit { int kernel; double gflop; } mgm_limit;
typedef struct mgm_explicit {
    int kernel /* -1 = auto */, prec, max_dim;
    int64_t m, n, k;
    mg_optset opt;                   /* its KEY=VALUE options (none set: the command line's) */
} mgm_explicit;
typedef struct mgm_shortcut { int64_t m, n, k; int kernel; /* -1 = auto */ } mgm_shortcut;

typedef struct mg_matrix {
    int samples, quick_samples, warmup;
    uint64_t seed;
    int all_kernels;                 /* 'kernels all' (also the default when no 'kernels' line appears) */
    int nkernels, kernels[MGM_MAX_KERNELS];
    int nprec, precs[MGM_NPREC];     /* in file order, no duplicates */
    int nmd, max_dims[2];            /* normalised 0/1, in file order, no duplicates */
    int nshapes; mgm_shape shapes[MGM_MAX_SHAPES];
    int nlimits; mgm_limit limits[MGM_MAX_LIMITS];
    int nrows; mgm_explicit rows[MGM_MAX_ROWS];
    int nshortcuts; mgm_shortcut shortcuts[MGM_MAX_SHORTCUTS];
    /* 'variants': every combination of the listed option values; each sweep row of a kernel other than 0 is run once
     * per combination (0: once, with the command line's options) */
    int nvariants; mg_optset variants[MGM_MAX_VARIANTS];
    int has_ceilings; int64_t ceil_m, ceil_n, ceil_k;
    int64_t copy_mib;
    double prune;                    /* 'prune X': skip a kernel row slower than X times its group's kernel 0 (0: off) */
} mg_matrix;

/* What a row measures. */
typedef enum mgm_kind {
    MGM_CEIL_COPY = 0,   /* device-to-device cudaMemcpyAsync of copy_mib MiB */
    MGM_CEIL_BF16,       /* cuBLAS GemmEx bf16 in/out, fp32 accumulate, at the ceilings shape */
    MGM_CEIL_TF32,       /* cuBLAS CUBLAS_COMPUTE_32F_FAST_TF32 */
    MGM_CEIL_FP32,       /* cuBLAS CUBLAS_COMPUTE_32F (SIMT SGEMM) */
    MGM_CEIL_INT8,       /* cuBLAS GemmEx s8 in, s32 out, CUBLAS_COMPUTE_32I: the roof of kernels 9-11's s8 products */
    MGM_KERNEL,          /* a registry kernel through the public API */
    MGM_BARE_WRITE,      /* a kernel that writes M floats: the launch + write floor of the short-circuit */
    MGM_SPLIT_W,         /* mg_split_bf16 of W (N x K) at the ceilings shape: what the split kernels save by
                          * splitting W once in mg_set_weights instead of per call */
    MGM_SPLIT_X          /* mg_split_bf16 of x (M x K): the per-call split kernel 5 still pays */
} mgm_kind;

typedef struct mgm_row {
    mgm_kind kind;
    int kernel;          /* registry id; -1 = auto (shortcut rows, 'row auto ...'); unused for ceilings / bare write */
    int prec;            /* MGM_FP32.. ; for MGM_CEIL_COPY and MGM_BARE_WRITE: -1 */
    int max_dim;         /* 0 or 1; -1 where it does not apply */
    int shortcut;        /* 0/1 */
    int64_t m, n, k;
    int shape_order;     /* groups rows of one shape together, in the order shapes first appear */
    int exempt_limit;    /* explicit 'row': not subject to 'limit' */
    mg_optset opt;       /* the options the row sets over the command line's (a 'row' line's, or a variant) */
    char skip[96];       /* non-empty: skipped at expansion time, and why */
} mgm_row;

/* The kernels the registry knows: bench.c fills this from mg_registry_*. */
typedef struct mgm_kernel_info { int id; unsigned prec_mask; } mgm_kernel_info;

void mg_matrix_defaults(mg_matrix *mx);
/* Parses len bytes of text; fname is used in messages only. Returns 0 or -1 (err gets "fname:line: why"). */
int mg_matrix_parse(const char *text, size_t len, const char *fname, mg_matrix *mx, char *err, size_t errlen);
/* Reads a file (at most 16 MiB) and parses it. */
int mg_matrix_load(const char *path, mg_matrix *mx, char *err, size_t errlen);

/* Expands the matrix into rows, sorted for execution: ceilings first, then grouped by shape (file order),
 * precision, max_dim, shortcut, with kernel 0 first in every group (it is the x_kernel0 baseline and is
 * added wherever a group lacks it). known[] lists the registry (for 'kernels all'). only_kernel >= 0 keeps
 * that kernel's rows (plus the kernel-0 baselines, the ceilings and the bare-write references).
 * Rows for precisions a kernel does not claim are kept with skip set, so every decision shows in the output.
 * Returns the row count (>= 0) with *rows malloc'ed, or -1 with err set. */
int mg_matrix_expand(const mg_matrix *mx, const mgm_kernel_info *known, int nknown, int only_kernel,
                     mgm_row **rows, char *err, size_t errlen);

const char *mgm_prec_name(int prec);    /* "fp32", "tf32", "bf16", or "-" */
double mgm_gflop(int64_t m, int64_t n, int64_t k);   /* 2MNK / 1e9 */
#endif
