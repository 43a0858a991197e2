/* cli_args.c: the maxgemm command-line grammar (cli_args.h). Pure: no I/O, no CUDA; the only globals touched are
 * getopt_long's (optind, opterr, optarg, optopt), reset on every parse. The kernel names come from the registry
 * (mg_registry_parse), the precision, tile and short-circuit mode names from the library's parsers, so the CLI
 * accepts exactly what the library knows. Every number is parsed strictly (digits only, overflow detected). */
#include "cli_args.h"

#include "mg_kernel.h" /* mg_registry_parse */
#include "optkeys.h"   /* mg_optkey_value */
#include "shortcut.h"  /* mg_shortcut_mode_parse */

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define SIZE_MAX_ARG 2147483647LL /* 2^31 - 1: sizes must fit the kernels' int indices */

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(char *err, size_t errlen, const char *fmt, ...) {
    if (err && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* User text quoted in messages is cut at 64 characters. */
#define Q "'%.64s%s'"
#define QARG(s) (s), (strlen(s) > 64 ? "..." : "")

enum { NUM_OK = 0, NUM_SYNTAX = -1, NUM_RANGE = -2 };

/* A signed decimal: optional '-', then digits only. */
static int parse_i64(const char *s, int64_t *v) {
    int neg = 0;
    if (*s == '-') { neg = 1; s++; }
    if (!*s) return NUM_SYNTAX;
    uint64_t acc = 0;
    int over = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return NUM_SYNTAX;
        const unsigned d = (unsigned)(*s - '0');
        if (acc > (UINT64_MAX - d) / 10) over = 1; /* keep scanning: a later non-digit is a syntax error */
        else acc = acc * 10 + d;
    }
    const uint64_t lim = neg ? (uint64_t)INT64_MAX + 1u : (uint64_t)INT64_MAX;
    if (over || acc > lim) return NUM_RANGE;
    *v = neg ? (int64_t)(0 - acc) : (int64_t)acc; /* 0 - acc wraps to the two's-complement value, exact for -2^63 */
    return NUM_OK;
}

/* An unsigned decimal: digits only. */
static int parse_u64(const char *s, uint64_t *v) {
    if (!*s) return NUM_SYNTAX;
    uint64_t acc = 0;
    int over = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return NUM_SYNTAX;
        const unsigned d = (unsigned)(*s - '0');
        if (acc > (UINT64_MAX - d) / 10) over = 1;
        else acc = acc * 10 + d;
    }
    if (over) return NUM_RANGE;
    *v = acc;
    return NUM_OK;
}

/* An integer option in [lo, hi]. */
static int int_opt(const char *opt, const char *val, int64_t lo, int64_t hi, const char *what, int64_t *out,
                   char *err, size_t errlen) {
    int64_t v = 0;
    const int rc = parse_i64(val, &v);
    if (rc == NUM_SYNTAX) return fail(err, errlen, "%s: " Q " is not an integer", opt, QARG(val));
    if (rc == NUM_RANGE || v < lo || v > hi)
        return fail(err, errlen, "%s: " Q " is out of range (%s must be between %lld and %lld)", opt, QARG(val),
                    what, (long long)lo, (long long)hi);
    *out = v;
    return 0;
}

/* ---- getopt_long with the CLI's rules ------------------------------------------------------------------------ */

/* A separate value that is really the next option: "--x", "--", "-x" with x a letter (negative numbers and "-" pass). */
static int looks_like_option(const char *s) {
    return s[0] == '-' && (s[1] == '-' || (s[1] >= 'a' && s[1] <= 'z') || (s[1] >= 'A' && s[1] <= 'Z'));
}

static const char *base_name(const char *s) {
    if (!s) return "maxgemm";
    const char *slash = strrchr(s, '/');
    return slash ? slash + 1 : s;
}

static const struct option *find_long(const struct option *longopts, const char *name, size_t nlen) {
    for (const struct option *o = longopts; o && o->name; o++)
        if (strlen(o->name) == nlen && strncmp(o->name, name, nlen) == 0) return o;
    return NULL;
}

int mg_cli_getopt(int argc, char **argv, const char *who, const char *shortopts, const struct option *longopts,
                  mg_cli_option_fn fn, void *ctx, char *err, size_t errlen) {
    if (!argv || argc < 1 || !fn) return fail(err, errlen, "internal error: no arguments to parse");
    for (int i = 0; i < argc; i++)
        if (!argv[i]) return fail(err, errlen, "argument %d is NULL", i);
    if (!who) who = base_name(argv[0]);
    char so[160];
    if (!shortopts) shortopts = "";
    if (shortopts[0] == '+') shortopts++;
    if (shortopts[0] == ':') shortopts++;
    if (strlen(shortopts) + 3 > sizeof so) return fail(err, errlen, "internal error: option string too long");
    snprintf(so, sizeof so, "+:%s", shortopts);   /* +: stop at the first operand, no permutation; ':' see below */

    optind = 0;   /* glibc: a full re-initialisation (a new argv) */
    opterr = 0;   /* the messages are ours */
    for (;;) {
        const int at = optind < 1 ? 1 : optind;   /* the element the next option starts in (or continues, -abc) */
        int li = -1;
        const int c = getopt_long(argc, argv, so, longopts, &li);
        if (c == -1) break;
        if (at >= argc) return fail(err, errlen, "internal error: the option parser is out of step");
        const char *elem = argv[at];
        const int is_long = elem[0] == '-' && elem[1] == '-';
        if (c == '?' || c == ':') {
            if (is_long) {
                const char *name = elem + 2, *eq = strchr(name, '=');
                const size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
                const struct option *o = find_long(longopts, name, nlen);
                const int shown = (int)(nlen > 64 ? 64 : nlen);
                if (o && c == ':') return fail(err, errlen, "option --%s needs a value", o->name);
                if (o && o->has_arg == no_argument && eq)
                    return fail(err, errlen, "option --%s takes no value (got " Q ")", o->name, QARG(eq + 1));
                return fail(err, errlen, "unknown option '--%.*s' for '%s' (see '%s --help')", shown, name, who, who);
            }
            if (c == ':') return fail(err, errlen, "option -%c needs a value", optopt);
            if (optopt > ' ' && optopt < 127)
                return fail(err, errlen, "unknown option '-%c' for '%s' (see '%s --help')", optopt, who, who);
            return fail(err, errlen, "unknown option " Q " for '%s' (see '%s --help')", QARG(elem), who, who);
        }
        char flag[80];
        int takes_value;
        if (li >= 0 && is_long) {
            const struct option *o = &longopts[li];
            const size_t nlen = strlen(o->name);
            if (strncmp(elem + 2, o->name, nlen) != 0 || (elem[2 + nlen] != '\0' && elem[2 + nlen] != '=')) {
                const char *eq = strchr(elem + 2, '=');
                const size_t glen = eq ? (size_t)(eq - (elem + 2)) : strlen(elem + 2);
                return fail(err, errlen, "unknown option '--%.*s' for '%s' (long options are not abbreviated: --%s?)",
                            (int)(glen > 64 ? 64 : glen), elem + 2, who, o->name);
            }
            snprintf(flag, sizeof flag, "--%s", o->name);
            takes_value = o->has_arg != no_argument;
        } else {
            snprintf(flag, sizeof flag, "-%c", c);
            const char *p = strchr(so + 2, c);
            takes_value = p && p[1] == ':';
        }
        const char *value = NULL;
        if (takes_value) {
            value = optarg ? optarg : "";
            const int separate = optind - 1 > at;   /* "--m 5" / "-m 5", not "--m=5" / "-m5" */
            if (!*value || (separate && looks_like_option(value)))
                return fail(err, errlen, "option %s needs a value", flag);
        }
        const int rc = fn(ctx, c, flag, value, err, errlen);
        if (rc != 0) return rc < 0 ? -1 : 1;
    }
    if (optind < argc)
        return fail(err, errlen, "unexpected argument " Q " for '%s' (it takes options only; see '%s --help')",
                    QARG(argv[optind]), who, who);
    if (optind > 1 && strcmp(argv[optind - 1], "--") == 0)
        return fail(err, errlen, "unexpected argument '--' for '%s' (it takes options only; see '%s --help')", who, who);
    return 0;
}

/* ---- the library options --------------------------------------------------------------------------------------- */

/* An mg_switch value by the names of the switch option keys (optkeys.c: streamk=, mixed_panels=, rem_split= and fuse=
 * share auto, off and force), the one list of them. */
static int parse_switch(const char *flag, const char *val, mg_switch *out, char *err, size_t errlen) {
    const int v = mg_optkey_value(MG_OPTKEY_FUSE, val, strlen(val));
    if (v < 0) return fail(err, errlen, "%s: " Q " is invalid (expected auto, off or force)", flag, QARG(val));
    *out = (mg_switch)v;
    return 0;
}

int mg_cli_apply_option(int code, const char *flag, const char *val, mg_options *opt, char *err, size_t errlen) {
    if (!opt) return fail(err, errlen, "internal error: no options struct");
    if (!flag) flag = "option";
    /* every flag takes a value but the three switches (a new flag needs a value unless it is listed here) */
    const int needs = code >= MG_CLI_OPT_TILES && code < MG_CLI_OPT_END && code != MG_CLI_OPT_NO_STREAMK &&
                      code != MG_CLI_OPT_NO_PDL && code != MG_CLI_OPT_VERBOSE;
    if (needs && (!val || !*val)) return fail(err, errlen, "option %s needs a value", flag);
    switch (code) {
    case MG_CLI_OPT_TILES: {
        mg_tiles t = MG_TILES_AUTO;
        if (mg_tiles_parse(val, &t) != MG_OK)
            return fail(err, errlen, "%s: unknown tile configuration " Q " (expected auto, main, mid, small or n192)",
                        flag, QARG(val));
        opt->tiles = t;
        return 0;
    }
    case MG_CLI_OPT_NO_STREAMK: opt->streamk = MG_SWITCH_OFF; return 0;
    case MG_CLI_OPT_STREAMK:
    case MG_CLI_OPT_MIXED_PANELS:
    case MG_CLI_OPT_REM_SPLIT:
    case MG_CLI_OPT_FUSE:   /* the mg_switch options: parse_switch writes the field only when the value parses */
        return parse_switch(flag, val,
                            code == MG_CLI_OPT_STREAMK        ? &opt->streamk
                            : code == MG_CLI_OPT_MIXED_PANELS ? &opt->mixed_panels
                            : code == MG_CLI_OPT_REM_SPLIT    ? &opt->rem_split
                                                              : &opt->fuse,
                            err, errlen);
    case MG_CLI_OPT_NO_PDL: opt->pdl = 0; return 0;
    case MG_CLI_OPT_SHORTCUT_MODE: {
        const int m = mg_shortcut_mode_parse(val);
        if (m < 0 || m >= MG_SHORTCUT_MODE_COUNT)
            return fail(err, errlen, "%s: unknown short-circuit mode " Q " (expected graph, poll, sync or tail)", flag,
                        QARG(val));
        opt->shortcut_mode = m;
        return 0;
    }
    case MG_CLI_OPT_VERBOSE: opt->verbose = 1; return 0;
    case MG_CLI_OPT_SPLITS: {
        int64_t v = 0;
        if (int_opt(flag, val, 0, MG_SPLITS_MAX, "the split-K factor", &v, err, errlen)) return -1;
        opt->splits = (int)v;
        return 0;
    }
    case MG_CLI_OPT_X_TILE: {
        int64_t v = 0;
        if (int_opt(flag, val, 0, MG_X_TILE_MAX, "kernel 8's x-tile width", &v, err, errlen)) return -1;
        if (!MG_X_TILE_VALID(v))
            return fail(err, errlen, "%s: %lld is not a multiple of 8 (wgmma's N)", flag, (long long)v);
        opt->x_tile = (int)v;
        return 0;
    }
    case MG_CLI_OPT_W_ROWS: {
        int64_t v = 0;
        if (int_opt(flag, val, 0, 256, "kernel 8's W rows per tile", &v, err, errlen)) return -1;
        if (!MG_W_ROWS_VALID(v))
            return fail(err, errlen,
                        "%s: %lld W rows is not a tile height of kernel 8 (64, 128 or 256; 0 = its policy)", flag,
                        (long long)v);
        opt->w_rows = (int)v;
        return 0;
    }
    case MG_CLI_OPT_CLUSTER: {
        int64_t v = 0;
        if (int_opt(flag, val, 0, 2, "kernel 8's CTAs per cluster", &v, err, errlen)) return -1;
        opt->cluster = (int)v;
        return 0;
    }
    case MG_CLI_OPT_MCAST: {   /* the names of the mcast= option key (optkeys.c), the one list of them */
        const int v = mg_optkey_value(MG_OPTKEY_MCAST, val, strlen(val));
        if (v < 0) return fail(err, errlen, "%s: " Q " is invalid (expected auto, w or x)", flag, QARG(val));
        opt->mcast = (mg_mcast)v;
        return 0;
    }
    default: return fail(err, errlen, "internal error: %s is not a library option (code %d)", flag, code);
    }
}

/* ---- maxgemm's commands ---------------------------------------------------------------------------------------- */

void mg_cli_defaults(mg_cli_args *a) {
    memset(a, 0, sizeof *a);
    a->command = MG_CMD_HELP;
    a->help_for = MG_CMD_HELP;
    a->kernel = MG_KERNEL_AUTO;
    a->m = 1024;
    a->n = 8192;
    a->k = 8192;
    a->max_dim = 1;
    a->precision = MG_PREC_FP32;
    a->seed = 42;
    a->iters = 20;
    a->warmup = 3;
    a->check = 0;
    a->shortcut = 1;
    a->flush_l2 = 1;
    a->baseline = 1;
    a->csv_path = NULL;
    a->opt = mg_options_default();
}

#define EXIT_HELP                                                                                                  \
    "exit status: 0 success (and with --check, PASS); 1 the check failed; 2 usage error (bad flags, or a request\n" \
    "the library rejects: shape, kernel/precision/GPU combination, options); 3 runtime error (CUDA, cuBLAS,\n"       \
    "memory, files)\n"

static const char USAGE_GENERAL[] =
    "usage: maxgemm run [options]        time a kernel against kernel 0 (cuBLAS); --check compares with fp64\n"
    "       maxgemm list                 the kernel registry and the tile configs\n"
    "       maxgemm help [run|list]      this text, or a command's (also: maxgemm COMMAND --help)\n"
    "       maxgemm --version            the library version and the build's commit (also -V)\n"
    "defaults: the model's shape M=1024 N=8192 K=8192, max_dim 1, fp32, auto kernel, short-circuit on\n" EXIT_HELP;

static const char USAGE_RUN[] =
    "usage: maxgemm run [options]\n"
    "Times the chosen kernel and kernel 0 (cuBLAS, full compute) in the same process: median, TFLOP/s (not for\n"
    "a run the certified max_dim 1 short-circuit answered without a GEMM) and x cuBLAS.\n"
    "      --kernel N|NAME|auto                  registry number or name (maxgemm list); default auto\n"
    "  -m, --m M                                 rows of x, 1 .. 2^31-1 (default 1024)\n"
    "  -n, --n N                                 out_features, 1 .. 2^31-1 (default 8192)\n"
    "  -k, --k K                                 in_features, 0 .. 2^31-1 (default 8192; 0: y = b)\n"
    "  -d, --max-dim D                           -2, -1, 0 or 1 (default 1)\n"
    "  -p, --precision P                         fp32, tf32 or bf16 (default fp32)\n"
    "  -s, --seed S                              inputs' seed, unsigned 64-bit (default 42)\n"
    "  -i, --iters I                             timed samples, >= 1 (default 20)\n"
    "  -w, --warmup W                            warm-up runs, >= 0 (default 3)\n"
    "  -c, --check                               compare with the fp64 GPU reference: PASS/FAIL (exit 1 on FAIL)\n"
    "      --no-shortcut                         max_dim 1: full compute instead of the certified short-circuit\n"
    "      --no-flush                            keep the L2 warm between samples (default: flushed before each)\n"
    "      --no-baseline                         do not plan or run kernel 0 (sanitizer and Nsight runs)\n"
    "      --dispatch FILE                       auto follows this dispatch table instead of the compiled-in ones\n"
    "                                            (tile_configs/README.md); /dev/null: the registry's rule\n"
    "      --csv FILE                            append one row (the header when the file is empty); 'pass' is\n"
    "                                            1 or 0 with --check and empty without\n" MG_CLI_OPTION_HELP
    "  -h, --help                                this text\n"
    "Long options take their value as --m 5 or --m=5, short ones as -m 5 or -m5; names are never abbreviated.\n"
    EXIT_HELP;

static const char USAGE_LIST[] =
    "usage: maxgemm list [--csv FILE]\n"
    "Prints the kernel registry (id, name, precisions, minimum sm, tile config, built, technique), the tile\n"
    "configs compiled in, and this GPU's compute capability.\n"
    "      --csv FILE                            write the registry as CSV instead (FILE '-': standard output):\n"
    "                                            id,name,precisions (';'-separated),min_sm,tile_config,built,\n"
    "                                            baseline,auto_rank,gpu_sm (this GPU's sm, 0 without one)\n"
    "  -h, --help                                this text\n" EXIT_HELP;

const char *mg_cli_usage(mg_cli_command which) {
    switch (which) {
    case MG_CMD_RUN: return USAGE_RUN;
    case MG_CMD_LIST: return USAGE_LIST;
    default: return USAGE_GENERAL;
    }
}

int mg_cli_exit_code(mg_status st, int check_failed) {
    switch (st) {
    case MG_OK: return check_failed ? MG_EXIT_CHECK_FAILED : MG_EXIT_OK;
    case MG_ERR_INVALID_ARG:
    case MG_ERR_SHAPE:
    case MG_ERR_MAX_DIM:
    case MG_ERR_PRECISION:
    case MG_ERR_KERNEL:
    case MG_ERR_UNSUPPORTED: return MG_EXIT_USAGE;
    default: return MG_EXIT_RUNTIME;   /* no device, memory, no weights (internal), CUDA, cuBLAS, unknown */
    }
}

enum { O_KERNEL = 0x100, O_NO_SHORTCUT, O_NO_FLUSH, O_NO_BASELINE, O_CSV, O_DISPATCH };

static const struct option run_longopts[] = {
    {"kernel", required_argument, NULL, O_KERNEL},
    {"m", required_argument, NULL, 'm'},
    {"n", required_argument, NULL, 'n'},
    {"k", required_argument, NULL, 'k'},
    {"max-dim", required_argument, NULL, 'd'},
    {"precision", required_argument, NULL, 'p'},
    {"seed", required_argument, NULL, 's'},
    {"iters", required_argument, NULL, 'i'},
    {"warmup", required_argument, NULL, 'w'},
    {"check", no_argument, NULL, 'c'},
    {"no-shortcut", no_argument, NULL, O_NO_SHORTCUT},
    {"no-flush", no_argument, NULL, O_NO_FLUSH},
    {"no-baseline", no_argument, NULL, O_NO_BASELINE},
    {"csv", required_argument, NULL, O_CSV},
    {"dispatch", required_argument, NULL, O_DISPATCH},
    {"help", no_argument, NULL, 'h'},
    MG_CLI_OPTION_LONGOPTS,
    {NULL, 0, NULL, 0},
};
static const char run_shortopts[] = "m:n:k:d:p:s:i:w:chv";

static int run_option(void *ctx, int code, const char *o, const char *val, char *err, size_t errlen) {
    mg_cli_args *a = ctx;
    int64_t v = 0;
    switch (code) {
    case O_KERNEL: {
        int id = 0;
        if (mg_registry_parse(val, &id) != MG_OK) return fail(err, errlen, "%s: %s", o, mg_last_error());
        a->kernel = id;
        return 0;
    }
    case 'm':
        if (int_opt(o, val, 1, SIZE_MAX_ARG, "M", &v, err, errlen)) return -1;
        a->m = v;
        return 0;
    case 'n':
        if (int_opt(o, val, 1, SIZE_MAX_ARG, "N", &v, err, errlen)) return -1;
        a->n = v;
        return 0;
    case 'k':
        if (int_opt(o, val, 0, SIZE_MAX_ARG, "K", &v, err, errlen)) return -1;
        a->k = v;
        return 0;
    case 'd': {
        const int rc = parse_i64(val, &v);
        if (rc == NUM_SYNTAX) return fail(err, errlen, "%s: " Q " is not an integer", o, QARG(val));
        if (rc == NUM_RANGE || v < -2 || v > 1)
            return fail(err, errlen, "%s: " Q " is invalid (expected -2, -1, 0 or 1)", o, QARG(val));
        a->max_dim = (int)v;
        return 0;
    }
    case 'p': {
        mg_precision p;
        if (mg_precision_parse(val, &p) != MG_OK)
            return fail(err, errlen, "%s: unknown precision " Q " (expected fp32, tf32 or bf16)", o, QARG(val));
        a->precision = p;
        return 0;
    }
    case 's': {
        uint64_t s = 0;
        const int rc = parse_u64(val, &s);
        if (rc == NUM_SYNTAX) return fail(err, errlen, "%s: " Q " is not a non-negative integer", o, QARG(val));
        if (rc == NUM_RANGE) return fail(err, errlen, "%s: " Q " does not fit 64 bits", o, QARG(val));
        a->seed = s;
        return 0;
    }
    case 'i':
        if (int_opt(o, val, 1, 2147483647LL, "iters", &v, err, errlen)) return -1;
        a->iters = (int)v;
        return 0;
    case 'w':
        if (int_opt(o, val, 0, 2147483647LL, "warmup", &v, err, errlen)) return -1;
        a->warmup = (int)v;
        return 0;
    case 'c': a->check = 1; return 0;
    case O_NO_SHORTCUT: a->shortcut = 0; return 0;
    case O_NO_FLUSH: a->flush_l2 = 0; return 0;
    case O_NO_BASELINE: a->baseline = 0; return 0;
    case O_CSV: a->csv_path = val; return 0;
    case O_DISPATCH: a->dispatch_path = val; return 0;
    case 'h':
        a->command = MG_CMD_HELP;
        a->help_for = MG_CMD_RUN;
        return 1;
    case 'v': return mg_cli_apply_option(MG_CLI_OPT_VERBOSE, o, val, &a->opt, err, errlen);
    default:
        if (code >= MG_CLI_OPT_TILES && code < MG_CLI_OPT_END)
            return mg_cli_apply_option(code, o, val, &a->opt, err, errlen);
        return fail(err, errlen, "internal error: option %s (code %d) has no handler", o, code);
    }
}

static const struct option list_longopts[] = {
    {"csv", required_argument, NULL, O_CSV},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static int list_option(void *ctx, int code, const char *o, const char *val, char *err, size_t errlen) {
    mg_cli_args *a = ctx;
    if (code == O_CSV) {
        a->csv_path = val;
        return 0;
    }
    if (code != 'h') return fail(err, errlen, "internal error: option %s has no handler", o);
    a->command = MG_CMD_HELP;
    a->help_for = MG_CMD_LIST;
    return 1;
}

static int is_help(const char *s) { return strcmp(s, "help") == 0 || strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0; }
static int is_version(const char *s) {
    return strcmp(s, "version") == 0 || strcmp(s, "--version") == 0 || strcmp(s, "-V") == 0;
}

int mg_cli_parse(int argc, char **argv, mg_cli_args *out, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!out) return fail(err, errlen, "internal error: no output struct");
    mg_cli_defaults(out);
    if (argc < 2 || !argv || !argv[1])
        return fail(err, errlen, "no command given (expected run, list, help or --version)");
    for (int i = 2; i < argc; i++)
        if (!argv[i]) return fail(err, errlen, "argument %d is NULL", i);
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) {
        out->command = MG_CMD_RUN;
        const int rc = mg_cli_getopt(argc - 1, argv + 1, "maxgemm run", run_shortopts, run_longopts, run_option, out, err, errlen);
        return rc < 0 ? -1 : 0;
    }
    if (strcmp(cmd, "list") == 0) {
        out->command = MG_CMD_LIST;
        const int rc = mg_cli_getopt(argc - 1, argv + 1, "maxgemm list", "h", list_longopts, list_option, out, err, errlen);
        return rc < 0 ? -1 : 0;
    }
    if (is_help(cmd)) {
        out->command = MG_CMD_HELP;
        out->help_for = MG_CMD_HELP;
        if (argc == 2) return 0;
        if (strcmp(cmd, "help") != 0)
            return fail(err, errlen, "'%s' takes no arguments (got " Q "; try 'maxgemm help %.16s')", cmd,
                        QARG(argv[2]), argv[2]);
        if (argc > 3) return fail(err, errlen, "'help' takes one command name at most (got " Q ")", QARG(argv[3]));
        if (strcmp(argv[2], "run") == 0) out->help_for = MG_CMD_RUN;
        else if (strcmp(argv[2], "list") == 0) out->help_for = MG_CMD_LIST;
        else if (!is_help(argv[2]))
            return fail(err, errlen, "no help for " Q " (the commands are run and list)", QARG(argv[2]));
        return 0;
    }
    if (is_version(cmd)) {
        out->command = MG_CMD_VERSION;
        if (argc > 2) return fail(err, errlen, "'%s' takes no arguments (got " Q ")", cmd, QARG(argv[2]));
        return 0;
    }
    if (cmd[0] == '-')
        return fail(err, errlen, "unknown option " Q " before the command (expected run, list, help or --version)",
                    QARG(cmd));
    return fail(err, errlen, "unknown command " Q " (expected run, list, help or --version)", QARG(cmd));
}
