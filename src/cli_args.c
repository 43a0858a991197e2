/* cli_args.c: the maxgemm command-line grammar (cli_args.h). Pure: no I/O, no globals, no CUDA; the kernel
 * names come from the registry (mg_registry_parse) and the precision names from mg_precision_parse, so the CLI
 * accepts exactly what the library knows. Every number is parsed strictly (digits only, overflow detected). */
#include "cli_args.h"

#include "mg_kernel.h" /* mg_registry_parse */

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

enum opt_id { O_KERNEL, O_M, O_N, O_K, O_MAX_DIM, O_PRECISION, O_SEED, O_ITERS, O_WARMUP, O_CHECK, O_NO_SHORTCUT,
              O_NO_FLUSH, O_NO_BASELINE, O_CSV, O_HELP };
static const struct {
    const char *name;
    int takes_value;
    enum opt_id id;
} options[] = {
    {"kernel", 1, O_KERNEL},  {"m", 1, O_M},           {"n", 1, O_N},
    {"k", 1, O_K},            {"max-dim", 1, O_MAX_DIM}, {"precision", 1, O_PRECISION},
    {"seed", 1, O_SEED},      {"iters", 1, O_ITERS},   {"warmup", 1, O_WARMUP},
    {"check", 0, O_CHECK},    {"no-shortcut", 0, O_NO_SHORTCUT}, {"no-flush", 0, O_NO_FLUSH},
    {"no-baseline", 0, O_NO_BASELINE}, {"csv", 1, O_CSV}, {"help", 0, O_HELP},
};

void mg_cli_defaults(mg_cli_args *a) {
    memset(a, 0, sizeof *a);
    a->command = MG_CMD_HELP;
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
}

static int is_help(const char *s) { return strcmp(s, "help") == 0 || strcmp(s, "--help") == 0 || strcmp(s, "-h") == 0; }

static int parse_run(int argc, char **argv, mg_cli_args *a, char *err, size_t errlen) {
    for (int i = 2; i < argc; i++) {
        const char *arg = argv[i];
        if (!arg) return fail(err, errlen, "argument %d is NULL", i);
        if (strcmp(arg, "-h") == 0) { a->command = MG_CMD_HELP; return 0; }
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0')
            return fail(err, errlen, "unexpected argument " Q " for 'run' (options start with --; see 'maxgemm help')",
                        QARG(arg));
        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        const size_t nlen = eq ? (size_t)(eq - name) : strlen(name);
        int found = -1;
        for (size_t o = 0; o < sizeof options / sizeof options[0]; o++)
            if (strlen(options[o].name) == nlen && strncmp(options[o].name, name, nlen) == 0) found = (int)o;
        if (found < 0)
            return fail(err, errlen, "unknown option '--%.*s' for 'run' (see 'maxgemm help')",
                        (int)(nlen > 64 ? 64 : nlen), name);
        const char *opt = options[found].name;
        const char *val = NULL;
        if (!options[found].takes_value) {
            if (eq) return fail(err, errlen, "option --%s takes no value (got " Q ")", opt, QARG(eq + 1));
        } else if (eq) {
            val = eq + 1;
        } else if (i + 1 < argc && argv[i + 1] && strncmp(argv[i + 1], "--", 2) != 0) {
            val = argv[++i];
        }
        if (options[found].takes_value && (!val || !*val))
            return fail(err, errlen, "option --%s needs a value", opt);

        char o[24];
        snprintf(o, sizeof o, "--%s", opt);
        int64_t v = 0;
        switch (options[found].id) {
        case O_KERNEL: {
            int id = 0;
            if (mg_registry_parse(val, &id) != MG_OK) return fail(err, errlen, "%s: %s", o, mg_last_error());
            a->kernel = id;
            break;
        }
        case O_M:
            if (int_opt(o, val, 1, SIZE_MAX_ARG, "M", &v, err, errlen)) return -1;
            a->m = v;
            break;
        case O_N:
            if (int_opt(o, val, 1, SIZE_MAX_ARG, "N", &v, err, errlen)) return -1;
            a->n = v;
            break;
        case O_K:
            if (int_opt(o, val, 0, SIZE_MAX_ARG, "K", &v, err, errlen)) return -1;
            a->k = v;
            break;
        case O_MAX_DIM: {
            const int rc = parse_i64(val, &v);
            if (rc == NUM_SYNTAX) return fail(err, errlen, "%s: " Q " is not an integer", o, QARG(val));
            if (rc == NUM_RANGE || v < -2 || v > 1)
                return fail(err, errlen, "%s: " Q " is invalid (expected -2, -1, 0 or 1)", o, QARG(val));
            a->max_dim = (int)v;
            break;
        }
        case O_PRECISION: {
            mg_precision p;
            if (mg_precision_parse(val, &p) != MG_OK)
                return fail(err, errlen, "%s: unknown precision " Q " (expected fp32, tf32 or bf16)", o, QARG(val));
            a->precision = p;
            break;
        }
        case O_SEED: {
            uint64_t s = 0;
            const int rc = parse_u64(val, &s);
            if (rc == NUM_SYNTAX) return fail(err, errlen, "%s: " Q " is not a non-negative integer", o, QARG(val));
            if (rc == NUM_RANGE) return fail(err, errlen, "%s: " Q " does not fit 64 bits", o, QARG(val));
            a->seed = s;
            break;
        }
        case O_ITERS:
            if (int_opt(o, val, 1, 2147483647LL, "iters", &v, err, errlen)) return -1;
            a->iters = (int)v;
            break;
        case O_WARMUP:
            if (int_opt(o, val, 0, 2147483647LL, "warmup", &v, err, errlen)) return -1;
            a->warmup = (int)v;
            break;
        case O_CHECK: a->check = 1; break;
        case O_NO_SHORTCUT: a->shortcut = 0; break;
        case O_NO_FLUSH: a->flush_l2 = 0; break;
        case O_NO_BASELINE: a->baseline = 0; break;
        case O_CSV: a->csv_path = val; break;
        case O_HELP: a->command = MG_CMD_HELP; return 0;
        }
    }
    return 0;
}

int mg_cli_parse(int argc, char **argv, mg_cli_args *out, char *err, size_t errlen) {
    if (err && errlen) err[0] = '\0';
    if (!out) return fail(err, errlen, "internal error: no output struct");
    mg_cli_defaults(out);
    if (argc < 2 || !argv || !argv[1])
        return fail(err, errlen, "no command given (expected list, run or help)");
    const char *cmd = argv[1];
    if (strcmp(cmd, "run") == 0) {
        out->command = MG_CMD_RUN;
        return parse_run(argc, argv, out, err, errlen);
    }
    if (strcmp(cmd, "list") == 0) out->command = MG_CMD_LIST;
    else if (is_help(cmd)) out->command = MG_CMD_HELP;
    else return fail(err, errlen, "unknown command " Q " (expected list, run or help)", QARG(cmd));
    if (argc > 2)
        return fail(err, errlen, "'%s' takes no arguments (got " Q ")", cmd, QARG(argv[2] ? argv[2] : "(null)"));
    return 0;
}
