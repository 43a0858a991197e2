/* cli_args.h: the maxgemm command line, parsed by a library function so tests and the fuzzer can drive it.
 *
 *   maxgemm run [options]       time a kernel against kernel 0 (cuBLAS) in the same process; --check compares
 *                               with the fp64 reference
 *   maxgemm list [--csv FILE]   the kernel registry and the tile configs (--csv: the registry as CSV, '-' stdout)
 *   maxgemm help [run|list]     usage (also: maxgemm --help, -h; maxgemm run --help; maxgemm list --help)
 *   maxgemm --version           the library version and the build's commit (also: -V, version)
 *
 * run's options (long and, where there is one, short form):
 *   --kernel N|NAME|auto          registry number or name (default auto)
 *   -m, --m M   -n, --n N   -k, --k K
 *                                 the sizes: M, N in [1, 2^31-1], K in [0, 2^31-1] (K = 0 is valid: y = b);
 *                                 default the model's M=1024 N=8192 K=8192
 *   -d, --max-dim D               -2, -1, 0 or 1 (default 1)
 *   -p, --precision P             fp32, tf32 or bf16 (default fp32)
 *   -s, --seed S                  any unsigned 64-bit decimal (default 42)
 *   -i, --iters I                 timed iterations, >= 1 (default 20)
 *   -w, --warmup W                >= 0 (default 3)
 *   -c, --check                   compare with the fp64 GPU reference (PASS/FAIL; exit 1 on FAIL)
 *       --no-shortcut             max_dim 1: full compute instead of the certified short-circuit
 *       --no-flush                keep the L2 warm between samples
 *       --no-baseline             do not plan or run kernel 0
 *       --dispatch FILE           auto follows this dispatch table (mg_dispatch_load; tile_configs/README.md)
 *                                 instead of the compiled-in ones; /dev/null: the registry's rule
 *       --csv FILE                append one row (header written when the file is empty; a file whose first line is
 *                                 another header is refused, exit 2). Scripts read it by column name: 'pass' is 1 or
 *                                 0 with --check and EMPTY when not checked; 'gemm' is 0 when the certified short-
 *                                 circuit answered every row (then 'tflops' is empty); gpu, sm_clock_mhz, commit,
 *                                 seed, flush, the options and the launch plan ('plan') are in every row
 *   the library's options (mg_options, maxgemm.h; maxgemm_bench takes the same flags):
 *       --tiles auto|main|mid|small|n192      kernel 4's tile configuration (default auto: its policy)
 *       --streamk auto|off|force              kernels 4 and 6: stream-K below half a wave, never, or also the last
 *                                             partial wave of a larger grid
 *       --no-streamk                          the same as --streamk off
 *       --mixed-panels auto|off|force         kernel 4's 256/248-wide column panels
 *       --rem-split auto|off|force            kernel 4, max_dim 1: the leftover columns split along K
 *       --no-pdl                              no programmatic dependent launch (the finalize; kernel 11's launches)
 *       --shortcut-mode graph|poll|sync|tail  how the max_dim 1 short-circuit learns its count (default tail)
 *       --splits S                            kernel 8's split-K factor 1..16, 0 = its policy (default)
 *   -v, --verbose                             the library prints every launch plan to stderr
 *   -h, --help                                run's usage
 *
 * Syntax (glibc getopt_long, in POSIX order: the first operand ends the options): a long option takes its value as
 * the next argument (--m 5) or after '=' (--m=5); a short one as the next argument (-m 5) or attached (-m5); flags
 * without values may be clustered (-cv). Long names must be given in full (no abbreviations). A value given as the
 * next argument that looks like an option (--x, --, -x with x a letter) is a missing value ("--csv -v" is an error,
 * "--csv=-v" names the file "-v"; negative numbers pass: --max-dim -1). A later repetition wins. No operands.
 *
 * Exit status of maxgemm (mg_cli_exit_code maps a library status onto it):
 *   0  success (with --check: the check passed)
 *   1  the check failed (--check: outputs outside the precision's bar)
 *   2  usage error: bad flags or values, or a request the library rejects (shape, max_dim, precision, a kernel
 *      that does not support the precision/shape or this GPU, bad options)
 *   3  runtime error: CUDA or cuBLAS failure, out of memory, a file that cannot be written
 */
#ifndef MG_CLI_ARGS_H
#define MG_CLI_ARGS_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>

#include "maxgemm.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mg_cli_command { MG_CMD_HELP = 0, MG_CMD_LIST, MG_CMD_RUN, MG_CMD_VERSION } mg_cli_command;

enum { MG_EXIT_OK = 0, MG_EXIT_CHECK_FAILED = 1, MG_EXIT_USAGE = 2, MG_EXIT_RUNTIME = 3 };

typedef struct mg_cli_args {
    mg_cli_command command;
    mg_cli_command help_for;/* MG_CMD_HELP: whose usage (MG_CMD_HELP: the general one, MG_CMD_RUN, MG_CMD_LIST) */
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
    const char *csv_path;   /* run / list --csv FILE (points into argv), NULL if absent */
    const char *dispatch_path; /* run --dispatch FILE: the dispatch table auto follows (mg_dispatch_load), NULL: the
                             * compiled-in ones */
    mg_options opt;         /* the library's options: mg_options_default() changed by the option flags */
} mg_cli_args;

/* The defaults above. */
void mg_cli_defaults(mg_cli_args *out);
/* Parses argv[1..argc) (argv[0] is the program). Returns 0 with *out filled, or -1 with one clear message in err
 * (err may be NULL / errlen 0); *out then holds the defaults plus what was parsed before the error. Uses getopt_long
 * and so its globals (optind is reset on entry): not thread-safe. */
int mg_cli_parse(int argc, char **argv, mg_cli_args *out, char *err, size_t errlen);
/* The usage text of a command (MG_CMD_HELP: the general one), a static string ending in '\n'. */
const char *mg_cli_usage(mg_cli_command which);
/* The exit status for a run that ended with status st (MG_OK when it finished) and, when it finished, whether the
 * check failed: MG_EXIT_OK, MG_EXIT_CHECK_FAILED, MG_EXIT_USAGE (the library rejected the request) or
 * MG_EXIT_RUNTIME (CUDA, cuBLAS, memory, no device, internal). */
int mg_cli_exit_code(mg_status st, int check_failed);

/* ---- the library-option flags, shared by `maxgemm run` and maxgemm_bench -------------------------------------
 * MG_CLI_OPTION_LONGOPTS goes into a getopt_long table; mg_cli_apply_option applies a code it returned. */
enum {
    MG_CLI_OPT_TILES = 0x1000,
    MG_CLI_OPT_NO_STREAMK,
    MG_CLI_OPT_MIXED_PANELS,
    MG_CLI_OPT_REM_SPLIT,
    MG_CLI_OPT_NO_PDL,
    MG_CLI_OPT_SHORTCUT_MODE,
    MG_CLI_OPT_VERBOSE,
    MG_CLI_OPT_STREAMK,
    MG_CLI_OPT_SPLITS,
    MG_CLI_OPT_X_TILE,
    MG_CLI_OPT_CLUSTER,
    MG_CLI_OPT_FUSE,
    MG_CLI_OPT_MCAST,
    MG_CLI_OPT_W_ROWS,
    MG_CLI_OPT_END
};
#define MG_CLI_OPTION_LONGOPTS                                                                                     \
    {"tiles", required_argument, NULL, MG_CLI_OPT_TILES}, {"no-streamk", no_argument, NULL, MG_CLI_OPT_NO_STREAMK}, \
        {"streamk", required_argument, NULL, MG_CLI_OPT_STREAMK},                                                  \
        {"mixed-panels", required_argument, NULL, MG_CLI_OPT_MIXED_PANELS},                                        \
        {"rem-split", required_argument, NULL, MG_CLI_OPT_REM_SPLIT}, {"no-pdl", no_argument, NULL, MG_CLI_OPT_NO_PDL}, \
        {"shortcut-mode", required_argument, NULL, MG_CLI_OPT_SHORTCUT_MODE},                                      \
        {"verbose", no_argument, NULL, MG_CLI_OPT_VERBOSE}, {"splits", required_argument, NULL, MG_CLI_OPT_SPLITS}, \
        {"x-tile", required_argument, NULL, MG_CLI_OPT_X_TILE}, {"cluster", required_argument, NULL, MG_CLI_OPT_CLUSTER}, \
        {"fuse", required_argument, NULL, MG_CLI_OPT_FUSE}, {"mcast", required_argument, NULL, MG_CLI_OPT_MCAST},   \
        {"w-rows", required_argument, NULL, MG_CLI_OPT_W_ROWS}
/* Their lines of --help. */
#define MG_CLI_OPTION_HELP                                                                                         \
    "library options (mg_options; every plan of the run gets them, kernel 0's included):\n"                        \
    "      --tiles auto|main|mid|small|n192      kernel 4's tile configuration: its policy (auto), 128x256, 128x128,\n" \
    "                                            64x128 or 128x192\n"                                                  \
    "      --streamk auto|off|force              kernels 4 and 6: stream-K below half a wave (auto), never, or also\n" \
    "                                            for the last partial wave of a larger grid (force)\n"               \
    "      --no-streamk                          the same as --streamk off\n"                                        \
    "      --mixed-panels auto|off|force         kernel 4: 256- and 248-wide column panels where they even out the\n"  \
    "                                            waves (auto), never, or wherever they fit N\n"                        \
    "      --rem-split auto|off|force            kernel 4, max_dim 1: the leftover columns summed in k-chunks\n"       \
    "      --no-pdl                              no programmatic dependent launch (the finalize, kernel 11)\n"         \
    "      --shortcut-mode graph|poll|sync|tail  how the max_dim 1 short-circuit learns whether rows are left to\n"    \
    "                                            compute (default tail; src/shortcut.h)\n"                             \
    "      --splits S                            kernel 8's split-K factor, 1..16 (clamped to what its plan allows);\n" \
    "                                            0 = its policy (default; src/swapab_policy.h)\n"                      \
    "      --x-tile NX                           kernel 8's x-tile width (wgmma's N: 8 .. 256, one of its\n"          \
    "                                            configurations); 0 = its policy (default)\n"                           \
    "      --w-rows R                            kernel 8's W rows per tile, 64, 128 or 256 (its configurations of\n"  \
    "                                            that height; 256 needs several x tiles); 0 = its policy (default)\n" \
    "      --cluster C                           kernel 8's CTAs per cluster sharing boxes by multicast, 1 or 2\n"   \
    "                                            (2: its two-consumer x tiles; W with an even number of x tiles, else\n"\
    "                                            x); 0 = its tile configuration's (default)\n"                         \
    "      --fuse auto|off|force                 kernel 8 writes the output, no finalize kernel: max_dim 1 with no\n"  \
    "                                            wait at the end, max_dim 0 by every CTA in one cooperative launch\n"  \
    "                                            in clusters of 1 (auto); never (off); force: max_dim 0 in clusters\n" \
    "                                            of 2 by the last CTA\n"                                               \
    "      --mcast auto|w|x                      kernel 8 in clusters of 2: the two CTAs share one W tile (w: needs\n" \
    "                                            an even number of x tiles, else x) or one x tile (x) and multicast\n" \
    "                                            it; auto = its policy (w where it can)\n"                             \
    "  -v, --verbose                             the library prints every launch plan to stderr when it makes it\n"
/* Applies one of them: code from MG_CLI_OPTION_LONGOPTS, flag the option as typed (for messages, e.g. "--tiles"),
 * val its value (NULL for the switches). Returns 0, or -1 with a message naming the flag (opt unchanged). */
int mg_cli_apply_option(int code, const char *flag, const char *val, mg_options *opt, char *err, size_t errlen);

/* ---- getopt_long with the CLI's rules (for maxgemm_bench) ----------------------------------------------------
 * Parses argv[1..argc) (argv[0]: the program or command) against shortopts / longopts (shortopts may omit the leading "+:": it is implied) and calls
 * fn(ctx, code, flag, value) for each option in order: code is getopt_long's return (the short letter or the
 * long option's val), flag the option as typed ("--m", "-m"), value NULL for options without one. fn returns 0 to
 * go on, 1 to stop parsing (e.g. --help: the rest is not looked at), -1 after writing a message to err. Rejects
 * abbreviated long names, unknown options, missing values (including a value that looks like an option), values
 * given to options that take none, and any operand. who names the program in messages ("maxgemm run"; NULL: the
 * base name of argv[0]). Returns 0 (or 1 when fn stopped) or -1. */
typedef int (*mg_cli_option_fn)(void *ctx, int code, const char *flag, const char *value, char *err, size_t errlen);
int mg_cli_getopt(int argc, char **argv, const char *who, const char *shortopts, const struct option *longopts,
                  mg_cli_option_fn fn, void *ctx, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif /* MG_CLI_ARGS_H */
