/* optkeys.h: the launch options (mg_options fields) written as KEY=VALUE text, in the one vocabulary that the
 * dispatch tables (tile_configs/dispatch/GPU.tsv, src/dispatch.h) and the benchmark matrix (bench/matrix.txt: 'row ...
 * KEY=VALUE', 'variants KEY=V1,V2') share. Pure C, no CUDA: the table generator and the fuzzers link it alone.
 *
 *   tiles=auto|main|mid|small|n192     mg_options.tiles (mg_tiles, in that order)
 *   streamk=auto|off|force             mg_options.streamk (mg_switch)
 *   mixed_panels=auto|off|force        mg_options.mixed_panels (mg_switch)
 *   rem_split=auto|off|force           mg_options.rem_split
 *   splits=auto|1..MG_SPLITS_MAX       mg_options.splits (kernel 8's split-K factor; auto = 0)
 *   x_tile=auto|8..MG_X_TILE_MAX       mg_options.x_tile (kernel 8's x-tile width; auto = 0; the library checks
 *                                      that it is a multiple of 8, the plan that it is one of kernel 8's)
 *   cluster=auto|1|2                   mg_options.cluster (kernel 8's CTAs per cluster; auto = 0)
 *   fuse=auto|off|force                mg_options.fuse (mg_switch: kernel 8's finish in the kernel)
 *   mcast=auto|w|x                     mg_options.mcast (mg_mcast: what kernel 8's clusters of 2 multicast)
 *   w_rows=auto|1..256                 mg_options.w_rows (kernel 8's W rows per tile; auto = 0; the library checks
 *                                      that it is 64, 128 or 256)
 *
 * A value is the field's number: an enum's, or the integer itself; 0 is always "auto" (the kernel's own policy). An
 * option list is "auto" (no key set) or KEY=VALUE items joined by ',' with each key at most once, e.g.
 * "tiles=main,streamk=off". To add an option: one row in the table in optkeys.c and its field in mg_optkey_get /
 * mg_optkey_set; the dispatch tables, the benchmark matrix and its CSV's `options` column take it from there. */
#ifndef MG_OPTKEYS_H
#define MG_OPTKEYS_H

#include "maxgemm.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    MG_OPTKEY_TILES = 0,
    MG_OPTKEY_STREAMK,
    MG_OPTKEY_MIXED_PANELS,
    MG_OPTKEY_REM_SPLIT,
    MG_OPTKEY_SPLITS,
    MG_OPTKEY_X_TILE,
    MG_OPTKEY_CLUSTER,
    MG_OPTKEY_FUSE,
    MG_OPTKEY_MCAST,
    MG_OPTKEY_W_ROWS,
    MG_OPTKEY_COUNT
};
#define MG_OPTKEY_MAX_VALUES 32   /* distinct values of one key */

/* A set of option values: val[key] is meaningful where bit key of set is 1. */
typedef struct mg_optset {
    unsigned set;
    int val[MG_OPTKEY_COUNT];
} mg_optset;

const char *mg_optkey_name(int key);                    /* NULL outside [0, MG_OPTKEY_COUNT) */
/* The key named by s[0..n) (exact, lower case), or -1. */
int mg_optkey_find(const char *s, size_t n);
/* The value of key written s[0..n) (a name, or for an integer key a decimal number in its range), or -1. */
int mg_optkey_value(int key, const char *s, size_t n);
/* Writes value as key's text ("auto", "main", "4"); returns snprintf's count. */
int mg_optkey_format_value(int key, int value, char *buf, size_t len);

/* The field of o that key names; set writes it (value must be in range: callers parse first). */
int mg_optkey_get(const mg_options *o, int key);
void mg_optkey_set(mg_options *o, int key, int value);
/* The fields of o that are not auto (0), as a set. */
void mg_optset_of(const mg_options *o, mg_optset *out);
/* Every key set in s overrides o's field (an explicit "auto" included). */
void mg_optset_apply(const mg_optset *s, mg_options *o);
/* Every key set in s fills o's field where o's is 0 (auto: the caller left it to the policy); the fields the caller
 * set win. Returns the keys it filled, as a mask. */
unsigned mg_optset_fill_auto(const mg_optset *s, mg_options *o);

/* Parses one KEY=VALUE item s[0..n) into *s_out (adding the key; a key already set is an error). 0, or -1 with a
 * message in err (quoting at most 40 bytes of the input, non-printable bytes as '?'). */
int mg_optset_parse_item(const char *s, size_t n, mg_optset *out, char *err, size_t errlen);
/* Parses an option list s[0..n): "auto", or items joined by ','. 0, or -1 with a message. */
int mg_optset_parse(const char *s, size_t n, mg_optset *out, char *err, size_t errlen);
/* Writes s as an option list ("auto" when no key is set; keys in table order). Returns snprintf's count. */
int mg_optset_format(const mg_optset *s, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif /* MG_OPTKEYS_H */
