/* dispatch.h: the measured dispatch tables that `auto` reads (tile_configs/dispatch/<gpu>.tsv; the format is in
 * tile_configs/README.md, how to re-tune in notes/dispatch.md). Library-internal.
 *
 * A table names the GPUs it was measured on (cudaDeviceProp.name, e.g. "NVIDIA H200") and has rows
 *     precision  max_dim  m_lo  m_hi  kernel  options  x_kernel0  n  k
 * saying which registry kernel, with which launch options (optkeys.h; "auto" = the kernel's own policy), auto runs
 * for a batch of m_lo <= m <= m_hi rows. The build turns every committed table into C (tools/gen_dispatch.c ->
 * build/gen/dispatch_table.c: mg_dispatch_builtin[]), so the library never reads a file or the environment to find
 * one; mg_dispatch_load (maxgemm.h) swaps in a table file at run time (maxgemm run --dispatch FILE).
 *
 * How auto uses it (src/maxgemm.c):
 *   mg_plan_create, kernel MG_KERNEL_AUTO: the plan copies the rows of the current table for its GPU, precision and
 *     max_dim (mg_dispatch_copy) and picks its kernel with mg_dispatch_auto for its M: the row for M when its kernel
 *     is built, claims the precision, runs on this sm and supports the problem, else the registry's rule
 *     (mg_registry_auto). The kernel is fixed per plan: the buffers and the weight preparation are the kernel's.
 *   each launch plan (cached per batch m): mg_dispatch_options fills the options the user left at auto from the
 *     row for m, when that row names the plan's kernel; fields the user set win.
 * A problem whose K is not a whole number of 16-byte vectors per row keeps the registry's rule (every measurement
 * is made with 16-byte rows); so does a GPU without a table and an m no row covers. A kernel chosen by number never
 * reads the table. */
#ifndef MG_DISPATCH_H
#define MG_DISPATCH_H

#include "mg_kernel.h"
#include "optkeys.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_DISPATCH_GPU_MAX    256   /* bytes of a GPU name, NUL included (cudaDeviceProp.name's size) */
#define MG_DISPATCH_MAX_GPUS   8     /* 'gpu' lines per table */
#define MG_DISPATCH_MAX_ROWS   4096  /* rows per table */
#define MG_DISPATCH_KERNEL_MAX 31    /* characters of a row's kernel field */
#define MG_DISPATCH_M_MAX      2147483647   /* 'max' in m_hi */

typedef struct mg_dispatch_row {
    int prec;                 /* mg_precision */
    int max_dim;              /* 0 or 1 */
    int m_lo, m_hi;           /* the batch sizes the row covers, inclusive */
    char kernel[MG_DISPATCH_KERNEL_MAX + 1];   /* a registry name or number, as written */
    mg_optset opt;            /* the launch options ("auto": none set) */
    double x_lo, x_hi;        /* the measured x_kernel0 (range over the bucket), for reading; NaN: '-' */
    int n, k;                 /* the shape it was measured at, for reading; 0: '-' */
    int line;                 /* its line in the table file */
} mg_dispatch_row;

typedef struct mg_dispatch_table {
    char file[256];           /* the file it came from, for messages */
    int ngpus;
    char gpus[MG_DISPATCH_MAX_GPUS][MG_DISPATCH_GPU_MAX];
    int nrows;
    const mg_dispatch_row *rows;   /* static (the compiled-in tables) or malloc'ed (mg_dispatch_parse, _copy) */
} mg_dispatch_table;

/* Parses a table (len bytes of any content) named file in messages. 0 with *out filled (rows malloc'ed: free with
 * mg_dispatch_free), or -1 with err = "file:line: what is wrong" and *out empty. Checks what the build checks:
 * fields and ranges, each GPU once, a 'gpu' line wherever there are rows, no two rows of a (precision, max_dim)
 * covering the same m. */
int mg_dispatch_parse(const char *text, size_t len, const char *file, mg_dispatch_table *out, char *err,
                      size_t errlen);
/* Frees what mg_dispatch_parse or mg_dispatch_copy allocated; leaves *t empty. NULL is fine. */
void mg_dispatch_free(mg_dispatch_table *t);
/* 1 if t names gpu. */
int mg_dispatch_names_gpu(const mg_dispatch_table *t, const char *gpu);
/* The row of t for (prec, max_dim, m), NULL if none (t may be NULL). */
const mg_dispatch_row *mg_dispatch_row_for(const mg_dispatch_table *t, int prec, int max_dim, int m);

/* The compiled-in tables (build/gen/dispatch_table.c, from tile_configs/dispatch/GPU.tsv), in file order. */
extern const mg_dispatch_table mg_dispatch_builtin[];
extern const int mg_dispatch_builtin_count;

#ifndef MG_DISPATCH_PARSER_ONLY
/* mg_dispatch_load (maxgemm.h) from text in memory (name: for messages): the tests' way in. */
mg_status mg_dispatch_load_text(const char *text, size_t len, const char *name);
/* Copies into *out the rows of the table auto reads on GPU gpu (the loaded one if mg_dispatch_load gave one, else
 * the compiled-in one naming gpu) for (prec, max_dim); out->nrows 0 when there is none. Free with mg_dispatch_free.
 * Safe against a concurrent mg_dispatch_load. */
void mg_dispatch_copy(const char *gpu, int prec, int max_dim, mg_dispatch_table *out);
/* The registry kernel r names if it is built, claims p's precision, runs on sm and supports p; else NULL. */
const mg_kernel *mg_dispatch_kernel(const mg_dispatch_row *r, const mg_problem *p, int sm);
/* The auto choice for p on sm with table t (NULL: none): t's row for p when it applies and its kernel can run p
 * (*row = that row), else mg_registry_auto (*row = NULL). row may be NULL. */
const mg_kernel *mg_dispatch_auto(const mg_dispatch_table *t, const mg_problem *p, int sm, const mg_dispatch_row **row);
/* The options kernel k launches batch p with: *o (the plan's) with the fields left at auto filled from t's row for
 * p, when the row applies and names k. Returns that row, or NULL (then *o is unchanged). */
const mg_dispatch_row *mg_dispatch_options(const mg_dispatch_table *t, const mg_kernel *k, const mg_problem *p,
                                           mg_options *o);
/* "FILE:LINE" of r (t's file) into buf; "" for r NULL. */
void mg_dispatch_where(const mg_dispatch_table *t, const mg_dispatch_row *r, char *buf, size_t len);

/* The dispatch row the plan's launch for a batch of m rows follows ("FILE:LINE", src/maxgemm.c), or "" when none:
 * a kernel chosen by number, no table for this GPU, no row for m, or a row naming another kernel. */
void mg_plan_dispatch_where(const mg_plan *plan, int64_t m, char *buf, size_t len);
#endif

#ifdef __cplusplus
}
#endif
#endif /* MG_DISPATCH_H */
