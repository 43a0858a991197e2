/* tile_config.h: tile configurations as data (tile_configs/NAME.cfg, format in tile_configs/README.md).
 *
 * A row of a .cfg file is   kernel precision bm bn bk stages consumers cluster   e.g.
 *     wgmma_tma bf16 128 256 64 4 2 1
 * tools/gen_tiles validates every .cfg file at build time with mg_tile_parse_append and writes
 * build/gen/mg_tiles.h (compile-time macros MG_TILE_<kernel>_<precision>[_BM|_BN|...]) and
 * build/gen/mg_tiles.c (the table mg_tile_configs[] that mg_tile_find searches at run time).
 * This header is included by C and CUDA C++ code alike.
 */
#ifndef MG_TILE_CONFIG_H
#define MG_TILE_CONFIG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Field ranges the parser enforces (inclusive). */
#define MG_TILE_KERNEL_MAX    31  /* characters of the kernel name, [a-z0-9_]+ */
#define MG_TILE_BMN_MIN       8
#define MG_TILE_BMN_MAX       512
#define MG_TILE_BK_MIN        8
#define MG_TILE_BK_MAX        256
#define MG_TILE_STAGES_MAX    16
#define MG_TILE_CONSUMERS_MAX 16
#define MG_TILE_CLUSTER_MAX   4

typedef struct mg_tile_config {
    char kernel[32];        /* NUL-terminated, [a-z0-9_]+ */
    char precision[8];      /* "fp32", "tf32" or "bf16" */
    int bm, bn, bk, stages, consumers, cluster;
} mg_tile_config;

/* Parses the .cfg text (len bytes, arbitrary content: need not be NUL-terminated, may hold NUL bytes)
 * into out[0 .. *count). filename only names the input in messages (NULL: "<input>").
 * Returns 0, or -1 with err = "file:line: what is wrong" (err may be NULL / errlen 0); on error *count holds
 * the rows accepted before the bad line. Duplicate (kernel, precision) pairs are an error. */
int mg_tile_parse(const char *text, size_t len, const char *filename, mg_tile_config *out, int max, int *count,
                  char *err, size_t errlen);
/* The same, appending after the *count rows already in out (which must be valid rows): duplicates are also
 * checked against those, so several files parsed in turn are validated as one table. */
int mg_tile_parse_append(const char *text, size_t len, const char *filename, mg_tile_config *out, int max,
                         int *count, char *err, size_t errlen);

/* The generated table (build/gen/mg_tiles.c): every row of every tile_configs/NAME.cfg, in file order. */
extern const mg_tile_config mg_tile_configs[];
extern const int mg_tile_config_count;

/* Looks up (kernel, precision) in the generated table; NULL when absent. */
const mg_tile_config *mg_tile_find(const char *kernel, const char *precision);

#ifdef __cplusplus
}
#endif
#endif /* MG_TILE_CONFIG_H */
