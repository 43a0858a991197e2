/* test_cli_args.c (suite "cli_args"): the maxgemm command-line grammar, every default and every error path. */
#include "test_common.h"

#include "cli_args.h"
#include "mg_kernel.h"

#include <stdarg.h>

static char err[512];
static mg_cli_args a;

/* parse("run", "--m", "5", NULL): argv[0] is the program name. */
static int parse(const char *first, ...) {
    char *argv[64];
    int argc = 0;
    argv[argc++] = (char *)"maxgemm";
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s && argc < 63; s = va_arg(ap, const char *)) argv[argc++] = (char *)s;
    va_end(ap);
    argv[argc] = NULL;
    memset(err, 0, sizeof err);
    return mg_cli_parse(argc, argv, &a, err, sizeof err);
}

/* Expect failure with a message containing want. */
#define FAILS_WITH(want, ...)                                                                              \
    do {                                                                                                   \
        cr_assert_neq(parse(__VA_ARGS__, NULL), 0, "expected an error containing \"%s\"", want);           \
        cr_assert(strstr(err, want) != NULL, "error \"%s\" does not mention \"%s\"", err, want);         \
    } while (0)
#define OK(...) cr_assert_eq(parse(__VA_ARGS__, NULL), 0, "unexpected error: %s", err)

Test(cli_args, defaults) {
    OK("run");
    cr_assert_eq(a.command, MG_CMD_RUN);
    cr_assert_eq(a.kernel, MG_KERNEL_AUTO);
    cr_assert_eq(a.m, 1024);
    cr_assert_eq(a.n, 8192);
    cr_assert_eq(a.k, 8192);
    cr_assert_eq(a.max_dim, 1);
    cr_assert_eq(a.precision, MG_PREC_FP32);
    cr_assert_eq(a.seed, 42);
    cr_assert_eq(a.iters, 20);
    cr_assert_eq(a.warmup, 3);
    cr_assert_eq(a.check, 0);
    cr_assert_eq(a.shortcut, 1);
    cr_assert_eq(a.flush_l2, 1);
    cr_assert_eq(a.baseline, 1);
    cr_assert_null(a.csv_path);
    cr_assert_eq(err[0], '\0');
}

Test(cli_args, commands) {
    OK("list");
    cr_assert_eq(a.command, MG_CMD_LIST);
    OK("help");
    cr_assert_eq(a.command, MG_CMD_HELP);
    OK("--help");
    cr_assert_eq(a.command, MG_CMD_HELP);
    OK("-h");
    cr_assert_eq(a.command, MG_CMD_HELP);
    OK("run", "--help");
    cr_assert_eq(a.command, MG_CMD_HELP);
}

Test(cli_args, every_option_both_spellings) {
    OK("run", "--kernel", "0", "--m", "5", "--n", "7", "--k", "0", "--max-dim", "-2", "--precision", "bf16",
       "--seed", "18446744073709551615", "--iters", "1", "--warmup", "0", "--check", "--no-shortcut", "--no-flush",
       "--no-baseline", "--csv", "out.csv");
    cr_assert_eq(a.command, MG_CMD_RUN);
    cr_assert_eq(a.kernel, 0);
    cr_assert_eq(a.m, 5);
    cr_assert_eq(a.n, 7);
    cr_assert_eq(a.k, 0, "K = 0 is valid");
    cr_assert_eq(a.max_dim, -2);
    cr_assert_eq(a.precision, MG_PREC_BF16);
    cr_assert_eq(a.seed, UINT64_MAX);
    cr_assert_eq(a.iters, 1);
    cr_assert_eq(a.warmup, 0);
    cr_assert_eq(a.check, 1);
    cr_assert_eq(a.shortcut, 0);
    cr_assert_eq(a.flush_l2, 0);
    cr_assert_eq(a.baseline, 0);
    cr_assert_str_eq(a.csv_path, "out.csv");

    OK("run", "--kernel=cublas", "--m=5", "--n=7", "--k=3", "--max-dim=0", "--precision=tf32", "--seed=7",
       "--iters=9", "--warmup=2", "--csv=x.csv");
    cr_assert_eq(a.kernel, 0);
    cr_assert_eq(a.m, 5);
    cr_assert_eq(a.n, 7);
    cr_assert_eq(a.k, 3);
    cr_assert_eq(a.max_dim, 0);
    cr_assert_eq(a.precision, MG_PREC_TF32);
    cr_assert_eq(a.seed, 7);
    cr_assert_eq(a.iters, 9);
    cr_assert_eq(a.warmup, 2);
    cr_assert_str_eq(a.csv_path, "x.csv");
}

Test(cli_args, max_dims_and_limits) {
    for (int d = -2; d <= 1; d++) {
        char v[8];
        snprintf(v, sizeof v, "%d", d);
        OK("run", "--max-dim", v);
        cr_assert_eq(a.max_dim, d);
    }
    OK("run", "--m", "2147483647", "--n", "1", "--k", "2147483647");
    cr_assert_eq(a.m, 2147483647);
    cr_assert_eq(a.n, 1);
    cr_assert_eq(a.k, 2147483647);
    OK("run", "--m", "1", "--m", "9"); /* a repeated option: the last wins */
    cr_assert_eq(a.m, 9);
}

Test(cli_args, kernel_by_number_name_auto) {
    OK("run", "--kernel", "auto");
    cr_assert_eq(a.kernel, MG_KERNEL_AUTO);
    for (int i = 0; i < mg_registry_count(); i++) {
        const mg_kernel *k = mg_registry_at(i);
        char num[16];
        snprintf(num, sizeof num, "%d", k->id);
        OK("run", "--kernel", num);
        cr_assert_eq(a.kernel, k->id);
        OK("run", "--kernel", k->name);
        cr_assert_eq(a.kernel, k->id);
    }
}

Test(cli_args, unknown_command_and_option) {
    FAILS_WITH("no command", (const char *)NULL);
    FAILS_WITH("unknown command 'bench'", "bench");
    FAILS_WITH("unknown option '--bogus'", "run", "--bogus");
    FAILS_WITH("unknown option '--bogus'", "run", "--bogus=3");
    FAILS_WITH("unknown option '--M'", "run", "--M", "5");
    FAILS_WITH("unexpected argument 'extra'", "run", "extra");
    FAILS_WITH("unexpected argument '-m'", "run", "-m", "5");
    FAILS_WITH("unexpected argument '--'", "run", "--");
    FAILS_WITH("takes no arguments", "list", "--m", "5");
    FAILS_WITH("takes no arguments", "help", "run");
}

Test(cli_args, missing_values) {
    FAILS_WITH("--m needs a value", "run", "--m");
    FAILS_WITH("--m needs a value", "run", "--m=");
    FAILS_WITH("--m needs a value", "run", "--m", "--n", "5");
    FAILS_WITH("--kernel needs a value", "run", "--kernel");
    FAILS_WITH("--csv needs a value", "run", "--csv");
    FAILS_WITH("--precision needs a value", "run", "--precision");
    FAILS_WITH("--seed needs a value", "run", "--seed");
    FAILS_WITH("--max-dim needs a value", "run", "--max-dim");
    FAILS_WITH("--check takes no value", "run", "--check=1");
    FAILS_WITH("--no-flush takes no value", "run", "--no-flush=yes");
    FAILS_WITH("--no-baseline takes no value", "run", "--no-baseline=1");
}

Test(cli_args, non_numeric) {
    FAILS_WITH("'abc' is not an integer", "run", "--m", "abc");
    FAILS_WITH("'5x' is not an integer", "run", "--n", "5x");
    FAILS_WITH("'1e3' is not an integer", "run", "--k", "1e3");
    FAILS_WITH("' 5' is not an integer", "run", "--m", " 5");
    FAILS_WITH("'+5' is not an integer", "run", "--m", "+5");
    FAILS_WITH("'-' is not an integer", "run", "--m", "-");
    FAILS_WITH("'0x10' is not an integer", "run", "--iters", "0x10");
    FAILS_WITH("'one' is not an integer", "run", "--max-dim", "one");
    FAILS_WITH("'-1' is not a non-negative integer", "run", "--seed", "-1");
    FAILS_WITH("'1.5' is not an integer", "run", "--warmup", "1.5");
}

Test(cli_args, sizes_out_of_range) {
    FAILS_WITH("out of range", "run", "--m", "0");
    FAILS_WITH("out of range", "run", "--n", "0");
    FAILS_WITH("out of range", "run", "--m", "-5");
    FAILS_WITH("out of range", "run", "--k", "-1");
    FAILS_WITH("out of range", "run", "--m", "2147483648");
    FAILS_WITH("out of range", "run", "--n", "4294967297");
    FAILS_WITH("out of range", "run", "--k", "2147483648");
    FAILS_WITH("out of range", "run", "--m", "99999999999999999999999999");
    FAILS_WITH("out of range", "run", "--m", "-99999999999999999999999999");
    FAILS_WITH("out of range", "run", "--m", "9223372036854775808");
    FAILS_WITH("does not fit 64 bits", "run", "--seed", "18446744073709551616");
}

Test(cli_args, max_dim_invalid) {
    FAILS_WITH("'2' is invalid", "run", "--max-dim", "2");
    FAILS_WITH("'-3' is invalid", "run", "--max-dim", "-3");
    FAILS_WITH("is invalid", "run", "--max-dim=99999999999999999999");
}

Test(cli_args, precision_invalid) {
    FAILS_WITH("unknown precision 'fp16'", "run", "--precision", "fp16");
    FAILS_WITH("unknown precision 'FP32'", "run", "--precision", "FP32");
}

Test(cli_args, kernel_invalid) {
    FAILS_WITH("--kernel", "run", "--kernel", "nope");
    cr_assert(strstr(err, "nope") != NULL, "%s", err);
    FAILS_WITH("--kernel", "run", "--kernel", "999");
    FAILS_WITH("--kernel", "run", "--kernel", "-5");
}

Test(cli_args, iters_and_warmup) {
    FAILS_WITH("out of range", "run", "--iters", "0");
    FAILS_WITH("out of range", "run", "--iters", "-1");
    FAILS_WITH("out of range", "run", "--iters", "2147483648");
    FAILS_WITH("out of range", "run", "--warmup", "-1");
    OK("run", "--warmup", "0", "--iters", "2147483647");
    cr_assert_eq(a.iters, 2147483647);
}

Test(cli_args, long_garbage_is_truncated_in_messages) {
    char big[2000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    FAILS_WITH("...", "run", "--m", big);
    cr_assert(strlen(err) < 200, "message is %zu bytes", strlen(err));
}

Test(cli_args, null_err_buffer_is_allowed) {
    char *argv[] = {(char *)"maxgemm", (char *)"run", (char *)"--m", (char *)"0", NULL};
    cr_assert_neq(mg_cli_parse(4, argv, &a, NULL, 0), 0);
    char tiny[8];
    cr_assert_neq(mg_cli_parse(4, argv, &a, tiny, sizeof tiny), 0);
    cr_assert_eq(strlen(tiny), sizeof tiny - 1, "message is truncated, still terminated");
}
