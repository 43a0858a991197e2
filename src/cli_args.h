/* cli_args.h: the maxgemm command line, parsed by a library function so tests and the fuzzer can drive it.
 *
 *   maxgemm list
 *   maxgemm run [--kernel N|NAME|auto] [--m M] [--n N] [--k K] [--max-dim D] [--precision fp32|tf32|bf16]
 *               [--seed S] [--iters I] [--warmup W] [--check] [--no-shortcut] [--no-flush] [--no-baseline]
 *               [--csv FILE]
 *   maxgemm help            (also -h, --help)
 *
 * Options take their value as the next argument (--m 5) or after '=' (--m=5); a later repetition wins.
 * Ranges: M, N in [1, 2^31-1]; K in [0, 2^31-1] (K = 0 is valid: y = b); max_dim in {-2,-1,0,1};
 * seed any unsigned 64-bit decimal; iters >= 1; warmup >= 0.
 */
#ifndef MG_CLI_ARGS_H
#define MG_CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

#include "maxgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mg_cli_command { MG_CMD_HELP = 0, MG_CMD_LIST, MG_CMD_RUN } mg_cli_command;

typedef struct mg_cli_args {
    mg_cli_command command;
    int kernel;             /* a registry number, or MG_KERNEL_AUTO (default) */
    int64_t m, n, k;        /* defaults 1024, 8192, 8192 */
    int max_dim;            /* as given: -2, -1, 0 or 1 (default 1) */
    mg_precision precision; /* default MG_PREC_FP32 */
    uint64_t seed;          /* default 42 */
    int iters;              /* timed iterations, default 20 */
    int warmup;             /* default 3 */
    int check;              /* --check: compare with the fp64 reference (default off) */
    int shortcut;           /* 0 with --no-shortcut (default 1) */
    int flush_l2;           /* 0 with --no-flush (default 1) */
    int baseline;           /* 0 with --no-baseline: kernel 0 is not timed (default 1) */
    const char *csv_path;   /* --csv FILE (points into argv), NULL if absent */
} mg_cli_args;

/* The defaults above. */
void mg_cli_defaults(mg_cli_args *out);
/* Parses argv[1..argc) (argv[0] is the program). Returns 0 with *out filled, or -1 with one clear message in err
 * (err may be NULL / errlen 0); *out then holds the defaults plus what was parsed before the error. */
int mg_cli_parse(int argc, char **argv, mg_cli_args *out, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* MG_CLI_ARGS_H */
