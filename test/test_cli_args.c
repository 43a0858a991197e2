/* test_cli_args.c (suite "cli_args"): the maxgemm command-line grammar (src/cli_args.c), every default and every
 * error path, the library-option flags shared with maxgemm_bench, the usage texts, the exit-code mapping, and the
 * built binary's exit status (build/maxgemm; skipped where it is not built). CPU only: no CUDA call is made. */
#include "test_common.h"

#include "cli_args.h"
#include "optkeys.h"
#include "mg_kernel.h"
#include "shortcut.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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

static void assert_default_options(const mg_options *o) {
    const mg_options d = mg_options_default();
    cr_assert_eq(o->tiles, d.tiles);
    cr_assert_eq(o->streamk, d.streamk);
    cr_assert_eq(o->mixed_panels, d.mixed_panels);
    cr_assert_eq(o->rem_split, d.rem_split);
    cr_assert_eq(o->pdl, d.pdl);
    cr_assert_eq(o->shortcut_mode, d.shortcut_mode);
    cr_assert_eq(o->verbose, d.verbose);
}

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
    assert_default_options(&a.opt);
    cr_assert_eq(a.opt.tiles, MG_TILES_AUTO);
    cr_assert_eq(a.opt.pdl, 1);
    cr_assert_eq(a.opt.shortcut_mode, MG_SHORTCUT_DEFAULT);
    cr_assert_eq(a.opt.verbose, 0);
    cr_assert_eq(err[0], '\0');
}

Test(cli_args, commands_help_and_version) {
    OK("list");
    cr_assert_eq(a.command, MG_CMD_LIST);
    const char *general[] = {"help", "--help", "-h"};
    for (int i = 0; i < 3; i++) {
        OK(general[i]);
        cr_assert_eq(a.command, MG_CMD_HELP, "%s", general[i]);
        cr_assert_eq(a.help_for, MG_CMD_HELP, "%s", general[i]);
    }
    OK("help", "run");
    cr_assert_eq(a.command, MG_CMD_HELP);
    cr_assert_eq(a.help_for, MG_CMD_RUN);
    OK("help", "list");
    cr_assert_eq(a.help_for, MG_CMD_LIST);
    OK("run", "--help");
    cr_assert_eq(a.command, MG_CMD_HELP);
    cr_assert_eq(a.help_for, MG_CMD_RUN);
    OK("run", "-h");
    cr_assert_eq(a.help_for, MG_CMD_RUN);
    OK("run", "--m", "5", "--help", "--bogus"); /* help stops the parse: what follows is not looked at */
    cr_assert_eq(a.command, MG_CMD_HELP);
    cr_assert_eq(a.help_for, MG_CMD_RUN);
    OK("list", "--help");
    cr_assert_eq(a.command, MG_CMD_HELP);
    cr_assert_eq(a.help_for, MG_CMD_LIST);
    OK("list", "-h");
    cr_assert_eq(a.help_for, MG_CMD_LIST);
    const char *version[] = {"--version", "-V", "version"};
    for (int i = 0; i < 3; i++) {
        OK(version[i]);
        cr_assert_eq(a.command, MG_CMD_VERSION, "%s", version[i]);
    }
}

Test(cli_args, commands_reject_extras) {
    FAILS_WITH("takes no arguments", "--version", "run");
    FAILS_WITH("takes no arguments", "--help", "run");
    FAILS_WITH("no help for 'bench'", "help", "bench");
    FAILS_WITH("one command name at most", "help", "run", "list");
    FAILS_WITH("unknown option '--m' for 'maxgemm list'", "list", "--m", "5");
    FAILS_WITH("unexpected argument 'extra' for 'maxgemm list'", "list", "extra");
    FAILS_WITH("unknown option '--verbose' for 'maxgemm list'", "list", "--verbose");
    FAILS_WITH("option --csv needs a value", "list", "--csv");
}

Test(cli_args, list_csv) {
    OK("list", "--csv", "-");
    cr_assert_eq(a.command, MG_CMD_LIST);
    cr_assert_str_eq(a.csv_path, "-", "'-' (standard output) is a value, not an option");
    OK("list", "--csv=reg.csv");
    cr_assert_str_eq(a.csv_path, "reg.csv");
    OK("list");
    cr_assert_null(a.csv_path);
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
    assert_default_options(&a.opt);

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

Test(cli_args, short_options) {
    OK("run", "-m", "5", "-n", "7", "-k", "3", "-d", "0", "-p", "bf16", "-s", "9", "-i", "4", "-w", "1", "-c", "-v");
    cr_assert_eq(a.m, 5);
    cr_assert_eq(a.n, 7);
    cr_assert_eq(a.k, 3);
    cr_assert_eq(a.max_dim, 0);
    cr_assert_eq(a.precision, MG_PREC_BF16);
    cr_assert_eq(a.seed, 9);
    cr_assert_eq(a.iters, 4);
    cr_assert_eq(a.warmup, 1);
    cr_assert_eq(a.check, 1);
    cr_assert_eq(a.opt.verbose, 1);
    OK("run", "-m5", "-n7", "-k0", "-d-1", "-ptf32"); /* attached values */
    cr_assert_eq(a.m, 5);
    cr_assert_eq(a.n, 7);
    cr_assert_eq(a.k, 0);
    cr_assert_eq(a.max_dim, -1);
    cr_assert_eq(a.precision, MG_PREC_TF32);
    OK("run", "-cv"); /* clustered switches */
    cr_assert_eq(a.check, 1);
    cr_assert_eq(a.opt.verbose, 1);
    OK("run", "-cm", "12"); /* a cluster whose last letter takes the next argument */
    cr_assert_eq(a.check, 1);
    cr_assert_eq(a.m, 12);
    OK("run", "--max-dim", "-1"); /* a negative number is a value, not an option */
    cr_assert_eq(a.max_dim, -1);
    FAILS_WITH("-m: '0' is out of range", "run", "-m", "0");
    FAILS_WITH("option -m needs a value", "run", "-m");
    FAILS_WITH("option -m needs a value", "run", "-m", "-n", "5");
    FAILS_WITH("unknown option '-x'", "run", "-x");
    FAILS_WITH("unknown option '-x'", "run", "-cx");
    FAILS_WITH("unknown option '-K'", "run", "-K", "5");
}

Test(cli_args, library_options_every_flag) {
    const struct {
        const char *name;
        mg_tiles t;
    } tiles[] = {{"auto", MG_TILES_AUTO},   {"main", MG_TILES_MAIN}, {"mid", MG_TILES_MID},
                 {"small", MG_TILES_SMALL}, {"n192", MG_TILES_N192}};
    for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
        OK("run", "--tiles", tiles[i].name);
        cr_assert_eq(a.opt.tiles, tiles[i].t, "--tiles %s", tiles[i].name);
        char eq[32];
        snprintf(eq, sizeof eq, "--tiles=%s", tiles[i].name);
        OK("run", eq);
        cr_assert_eq(a.opt.tiles, tiles[i].t, "%s", eq);
    }
    const struct {
        const char *name;
        mg_switch s;
    } sw[] = {{"auto", MG_SWITCH_AUTO}, {"off", MG_SWITCH_OFF}, {"force", MG_SWITCH_FORCE}};
    for (size_t i = 0; i < 3; i++) {
        OK("run", "--mixed-panels", sw[i].name);
        cr_assert_eq(a.opt.mixed_panels, sw[i].s, "--mixed-panels %s", sw[i].name);
        cr_assert_eq(a.opt.rem_split, MG_SWITCH_AUTO);
        OK("run", "--rem-split", sw[i].name);
        cr_assert_eq(a.opt.rem_split, sw[i].s, "--rem-split %s", sw[i].name);
        cr_assert_eq(a.opt.mixed_panels, MG_SWITCH_AUTO);
    }
    const char *modes[] = {"graph", "poll", "sync", "tail"};
    const int mode_ids[] = {MG_SHORTCUT_GRAPH, MG_SHORTCUT_POLL, MG_SHORTCUT_SYNC, MG_SHORTCUT_TAIL};
    for (int i = 0; i < 4; i++) {
        OK("run", "--shortcut-mode", modes[i]);
        cr_assert_eq(a.opt.shortcut_mode, mode_ids[i], "--shortcut-mode %s", modes[i]);
        cr_assert_str_eq(mg_shortcut_mode_name(a.opt.shortcut_mode), modes[i]);
    }
    OK("run", "--no-streamk");
    cr_assert_eq(a.opt.streamk, MG_SWITCH_OFF);
    cr_assert_eq(a.opt.pdl, 1);
    OK("run", "--no-pdl");
    cr_assert_eq(a.opt.pdl, 0);
    cr_assert_eq(a.opt.streamk, MG_SWITCH_AUTO);
    OK("run", "--verbose");
    cr_assert_eq(a.opt.verbose, 1);

    /* all at once, mixed with run's own options, both spellings */
    OK("run", "--kernel", "4", "--tiles=mid", "--no-streamk", "--mixed-panels", "off", "--rem-split=force", "--no-pdl",
       "--shortcut-mode=sync", "--verbose", "--m", "64");
    cr_assert_eq(a.kernel, 4);
    cr_assert_eq(a.m, 64);
    cr_assert_eq(a.opt.tiles, MG_TILES_MID);
    cr_assert_eq(a.opt.streamk, MG_SWITCH_OFF);
    cr_assert_eq(a.opt.mixed_panels, MG_SWITCH_OFF);
    cr_assert_eq(a.opt.rem_split, MG_SWITCH_FORCE);
    cr_assert_eq(a.opt.pdl, 0);
    cr_assert_eq(a.opt.shortcut_mode, MG_SHORTCUT_SYNC);
    cr_assert_eq(a.opt.verbose, 1);
    OK("run", "--tiles", "small", "--tiles", "main"); /* the last wins */
    cr_assert_eq(a.opt.tiles, MG_TILES_MAIN);
}

Test(cli_args, library_options_bad_values_name_the_flag) {
    FAILS_WITH("--tiles: unknown tile configuration 'big'", "run", "--tiles", "big");
    FAILS_WITH("--tiles: unknown tile configuration 'MAIN'", "run", "--tiles=MAIN");
    FAILS_WITH("--mixed-panels: 'yes' is invalid (expected auto, off or force)", "run", "--mixed-panels", "yes");
    FAILS_WITH("--rem-split: 'on' is invalid", "run", "--rem-split", "on");
    FAILS_WITH("--rem-split: '1' is invalid", "run", "--rem-split=1");
    FAILS_WITH("--shortcut-mode: unknown short-circuit mode 'fast'", "run", "--shortcut-mode", "fast");
    FAILS_WITH("--shortcut-mode: unknown short-circuit mode 'none'", "run", "--shortcut-mode", "none");
    FAILS_WITH("option --tiles needs a value", "run", "--tiles");
    FAILS_WITH("option --tiles needs a value", "run", "--tiles=");
    FAILS_WITH("option --shortcut-mode needs a value", "run", "--shortcut-mode", "--check");
    FAILS_WITH("option --mixed-panels needs a value", "run", "--mixed-panels");
    FAILS_WITH("option --no-pdl takes no value (got '1')", "run", "--no-pdl=1");
    FAILS_WITH("option --no-streamk takes no value", "run", "--no-streamk=0");
    FAILS_WITH("option --verbose takes no value", "run", "--verbose=1");
    /* --streamk takes auto|off|force (the env variable's spelling "0" of old is not one of them) */
    FAILS_WITH("--streamk: '0' is invalid (expected auto, off or force)", "run", "--streamk", "0");
    OK("run", "--streamk=force");
    cr_assert_eq(a.opt.streamk, MG_SWITCH_FORCE);
    OK("run", "--streamk", "off");
    cr_assert_eq(a.opt.streamk, MG_SWITCH_OFF);
    OK("run", "--no-streamk", "--streamk", "auto");
    cr_assert_eq(a.opt.streamk, MG_SWITCH_AUTO, "the last one wins");
    FAILS_WITH("unknown option '--pdl'", "run", "--pdl=0");
}

Test(cli_args, apply_option_directly) {
    mg_options o = mg_options_default();
    char e[128];
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_TILES, "--tiles", "n192", &o, e, sizeof e), 0);
    cr_assert_eq(o.tiles, MG_TILES_N192);
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_NO_STREAMK, "--no-streamk", NULL, &o, e, sizeof e), 0);
    cr_assert_eq(o.streamk, MG_SWITCH_OFF);
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_MIXED_PANELS, "--mixed-panels", "force", &o, e, sizeof e), 0);
    cr_assert_eq(o.mixed_panels, MG_SWITCH_FORCE);
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_REM_SPLIT, "--rem-split", "off", &o, e, sizeof e), 0);
    cr_assert_eq(o.rem_split, MG_SWITCH_OFF);
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_NO_PDL, "--no-pdl", NULL, &o, e, sizeof e), 0);
    cr_assert_eq(o.pdl, 0);
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_SHORTCUT_MODE, "--shortcut-mode", "graph", &o, e, sizeof e), 0);
    cr_assert_eq(o.shortcut_mode, MG_SHORTCUT_GRAPH);
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_VERBOSE, "-v", NULL, &o, e, sizeof e), 0);
    cr_assert_eq(o.verbose, 1);
    const mg_options before = o;
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_TILES, "--tiles", NULL, &o, e, sizeof e), -1);
    cr_assert(strstr(e, "--tiles needs a value"), "%s", e);
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_SHORTCUT_MODE, "--shortcut-mode", "", &o, e, sizeof e), -1,
                 "an empty mode is not the default: it is a missing value");
    /* every option that takes a value refuses a missing one (getopt always passes one; direct callers may not) */
    for (int code = MG_CLI_OPT_TILES; code < MG_CLI_OPT_END; code++) {
        if (code == MG_CLI_OPT_NO_STREAMK || code == MG_CLI_OPT_NO_PDL || code == MG_CLI_OPT_VERBOSE) continue;
        mg_options t = before;
        cr_assert_eq(mg_cli_apply_option(code, "--flag", NULL, &t, e, sizeof e), -1, "code 0x%x with no value", code);
        cr_assert(strstr(e, "--flag needs a value"), "code 0x%x: %s", code, e);
    }
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_END, "--x", "1", &o, e, sizeof e), -1);
    cr_assert(strstr(e, "internal error"), "%s", e);
    cr_assert_eq(mg_cli_apply_option(MG_CLI_OPT_TILES, "--tiles", "main", NULL, e, sizeof e), -1);
    cr_assert_eq(memcmp(&before, &o, sizeof o), 0, "a rejected value leaves the options alone");
}

/* mg_cli_getopt with another program's table (what maxgemm_bench does). */
typedef struct seen {
    int n, codes[16];
    const char *vals[16];
    char flags[16][16];
} seen;
static int record(void *ctx, int code, const char *flag, const char *val, char *e, size_t el) {
    seen *s = ctx;
    if (code == 'q') return 1;
    if (code == 'x') {
        snprintf(e, el, "%s: refused", flag);
        return -1;
    }
    if (s->n < 16) {
        s->codes[s->n] = code;
        s->vals[s->n] = val;
        snprintf(s->flags[s->n], sizeof s->flags[0], "%s", flag);
        s->n++;
    }
    return 0;
}

Test(cli_args, getopt_helper_for_other_programs) {
    static const struct option lo[] = {{"matrix", required_argument, NULL, 'M'}, {"quick", no_argument, NULL, 'Q'},
                                       {"stop", no_argument, NULL, 'q'},           {"bad", no_argument, NULL, 'x'},
                                       MG_CLI_OPTION_LONGOPTS,                     {NULL, 0, NULL, 0}};
    char *argv1[] = {(char *)"/x/y/prog", (char *)"--matrix", (char *)"m.txt", (char *)"--quick",
                     (char *)"--tiles=mid", (char *)"--no-pdl", NULL};
    seen s;
    memset(&s, 0, sizeof s);
    cr_assert_eq(mg_cli_getopt(6, argv1, NULL, "Qv", lo, record, &s, err, sizeof err), 0, "%s", err);
    cr_assert_eq(s.n, 4);
    cr_assert_eq(s.codes[0], 'M');
    cr_assert_str_eq(s.vals[0], "m.txt");
    cr_assert_str_eq(s.flags[0], "--matrix");
    cr_assert_eq(s.codes[1], 'Q');
    cr_assert_null(s.vals[1]);
    cr_assert_eq(s.codes[2], MG_CLI_OPT_TILES);
    cr_assert_str_eq(s.vals[2], "mid");
    cr_assert_eq(s.codes[3], MG_CLI_OPT_NO_PDL);

    char *argv2[] = {(char *)"/x/y/prog", (char *)"--stop", (char *)"--nonsense", NULL};
    memset(&s, 0, sizeof s);
    cr_assert_eq(mg_cli_getopt(3, argv2, NULL, "", lo, record, &s, err, sizeof err), 1, "the callback stopped it");

    char *argv3[] = {(char *)"/x/y/prog", (char *)"--nonsense", NULL};
    cr_assert_eq(mg_cli_getopt(2, argv3, NULL, "", lo, record, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "unknown option '--nonsense' for 'prog'"), "base name of argv[0]: %s", err);
    cr_assert_eq(mg_cli_getopt(2, argv3, "mytool", "", lo, record, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "for 'mytool'"), "%s", err);

    char *argv4[] = {(char *)"prog", (char *)"--bad", NULL};
    cr_assert_eq(mg_cli_getopt(2, argv4, NULL, "", lo, record, &s, err, sizeof err), -1);
    cr_assert_str_eq(err, "--bad: refused", "the callback's message is passed on");

    char *argv5[] = {(char *)"prog", (char *)"--mat", (char *)"x", NULL};
    cr_assert_eq(mg_cli_getopt(3, argv5, NULL, "", lo, record, &s, err, sizeof err), -1);
    cr_assert(strstr(err, "not abbreviated: --matrix"), "%s", err);

    char *argv6[] = {(char *)"prog", (char *)"--quick", (char *)"file", NULL};
    cr_assert_eq(mg_cli_getopt(3, argv6, NULL, "+:Q", lo, record, &s, err, sizeof err), -1,
                 "a leading +: in shortopts is accepted and operands are rejected");
    cr_assert(strstr(err, "unexpected argument 'file'"), "%s", err);
    cr_assert_eq(mg_cli_getopt(1, argv6, NULL, "", lo, NULL, &s, err, sizeof err), -1, "no callback");
}

Test(cli_args, long_names_are_not_abbreviated) {
    FAILS_WITH("unknown option '--kern'", "run", "--kern", "3");
    cr_assert(strstr(err, "--kernel"), "suggests the full name: %s", err);
    FAILS_WITH("unknown option '--max'", "run", "--max", "0");
    FAILS_WITH("unknown option '--prec'", "run", "--prec=bf16");
    FAILS_WITH("unknown option '--tile'", "run", "--tile", "mid");
    FAILS_WITH("unknown option '--no'", "run", "--no"); /* ambiguous as a prefix */
    FAILS_WITH("unknown option '--no-s'", "run", "--no-s");
    FAILS_WITH("unknown option '--verb'", "run", "--verb");
    FAILS_WITH("unknown option '--he'", "run", "--he");
}

Test(cli_args, max_dims_and_limits) {
    for (int d = -2; d <= 1; d++) {
        char v[16];
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
    FAILS_WITH("unknown option '--m' before the command", "--m", "5");
    FAILS_WITH("unknown option '--bogus' for 'maxgemm run'", "run", "--bogus");
    FAILS_WITH("unknown option '--bogus'", "run", "--bogus=3");
    FAILS_WITH("unknown option '--M'", "run", "--M", "5");
    FAILS_WITH("unexpected argument 'extra'", "run", "extra");
    FAILS_WITH("unexpected argument 'extra'", "run", "--m", "5", "extra", "--n", "3");
    FAILS_WITH("unexpected argument ''", "run", "");
    FAILS_WITH("unexpected argument '-'", "run", "-");
    FAILS_WITH("unexpected argument '--'", "run", "--");
    FAILS_WITH("unexpected argument '--m'", "run", "--", "--m", "5");
}

Test(cli_args, missing_values) {
    FAILS_WITH("--m needs a value", "run", "--m");
    FAILS_WITH("--m needs a value", "run", "--m=");
    FAILS_WITH("--m needs a value", "run", "--m", "--n", "5");
    FAILS_WITH("--m needs a value", "run", "--m", "--");
    FAILS_WITH("--kernel needs a value", "run", "--kernel");
    FAILS_WITH("--csv needs a value", "run", "--csv");
    FAILS_WITH("--csv needs a value", "run", "--csv", "-v");
    FAILS_WITH("--precision needs a value", "run", "--precision");
    FAILS_WITH("--seed needs a value", "run", "--seed");
    FAILS_WITH("--max-dim needs a value", "run", "--max-dim");
    FAILS_WITH("--check takes no value", "run", "--check=1");
    FAILS_WITH("--no-flush takes no value", "run", "--no-flush=yes");
    FAILS_WITH("--no-baseline takes no value", "run", "--no-baseline=1");
    FAILS_WITH("--help takes no value", "run", "--help=1");
    OK("run", "--csv=-v"); /* with '=' the value is taken as it is */
    cr_assert_str_eq(a.csv_path, "-v");
}

Test(cli_args, non_numeric) {
    FAILS_WITH("--m: 'abc' is not an integer", "run", "--m", "abc");
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
    FAILS_WITH("--m: '0' is out of range (M must be between 1 and 2147483647)", "run", "--m", "0");
    FAILS_WITH("--n: '0' is out of range", "run", "--n", "0");
    FAILS_WITH("out of range", "run", "--m", "-5");
    FAILS_WITH("--k: '-1' is out of range (K must be between 0", "run", "--k", "-1");
    FAILS_WITH("out of range", "run", "--m", "2147483648");
    FAILS_WITH("out of range", "run", "--n", "4294967297");
    FAILS_WITH("out of range", "run", "--k", "2147483648");
    FAILS_WITH("out of range", "run", "--m", "99999999999999999999999999");
    FAILS_WITH("out of range", "run", "--m", "-99999999999999999999999999");
    FAILS_WITH("out of range", "run", "--m", "9223372036854775808");
    FAILS_WITH("does not fit 64 bits", "run", "--seed", "18446744073709551616");
}

Test(cli_args, max_dim_invalid) {
    FAILS_WITH("--max-dim: '2' is invalid", "run", "--max-dim", "2");
    FAILS_WITH("'-3' is invalid", "run", "--max-dim", "-3");
    FAILS_WITH("-d: '-3' is invalid", "run", "-d", "-3");
    FAILS_WITH("is invalid", "run", "--max-dim=99999999999999999999");
}

Test(cli_args, precision_invalid) {
    FAILS_WITH("--precision: unknown precision 'fp16'", "run", "--precision", "fp16");
    FAILS_WITH("unknown precision 'FP32'", "run", "--precision", "FP32");
    FAILS_WITH("-p: unknown precision 'x'", "run", "-px");
}

Test(cli_args, kernel_invalid) {
    FAILS_WITH("--kernel", "run", "--kernel", "nope");
    cr_assert(strstr(err, "nope") != NULL, "%s", err);
    FAILS_WITH("--kernel", "run", "--kernel", "999");
    FAILS_WITH("--kernel", "run", "--kernel=-5");
}

Test(cli_args, iters_and_warmup) {
    FAILS_WITH("out of range", "run", "--iters", "0");
    FAILS_WITH("out of range", "run", "--iters", "-1");
    FAILS_WITH("out of range", "run", "--iters", "2147483648");
    FAILS_WITH("out of range", "run", "--warmup", "-1");
    OK("run", "--warmup", "0", "--iters", "2147483647");
    cr_assert_eq(a.iters, 2147483647);
}

Test(cli_args, parses_again_after_an_error) {
    /* getopt_long keeps state in globals: every parse must start afresh, also after an error mid-cluster */
    FAILS_WITH("unknown option '-x'", "run", "-cxv");
    OK("run", "-v", "--m", "3");
    cr_assert_eq(a.m, 3);
    cr_assert_eq(a.opt.verbose, 1);
    cr_assert_eq(a.check, 0, "nothing left over from the previous parse");
    OK("list");
    OK("run");
    cr_assert_eq(a.opt.verbose, 0);
}

Test(cli_args, long_garbage_is_truncated_in_messages) {
    char big[2000];
    memset(big, 'z', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    FAILS_WITH("...", "run", "--m", big);
    cr_assert(strlen(err) < 200, "message is %zu bytes", strlen(err));
    char opt[sizeof big + 2];
    snprintf(opt, sizeof opt, "--%s", big);
    FAILS_WITH("unknown option", "run", opt);
    cr_assert(strlen(err) < 200, "message is %zu bytes", strlen(err));
    FAILS_WITH("...", "run", "--tiles", big);
    cr_assert(strlen(err) < 200, "message is %zu bytes", strlen(err));
}

Test(cli_args, null_err_buffer_is_allowed) {
    char *argv[] = {(char *)"maxgemm", (char *)"run", (char *)"--m", (char *)"0", NULL};
    cr_assert_neq(mg_cli_parse(4, argv, &a, NULL, 0), 0);
    char tiny[8];
    cr_assert_neq(mg_cli_parse(4, argv, &a, tiny, sizeof tiny), 0);
    cr_assert_eq(strlen(tiny), sizeof tiny - 1, "message is truncated, still terminated");
    char *withnull[] = {(char *)"maxgemm", (char *)"run", NULL, (char *)"--m", NULL};
    cr_assert_neq(mg_cli_parse(4, withnull, &a, err, sizeof err), 0);
    cr_assert(strstr(err, "argument 2 is NULL"), "%s", err);
}

Test(cli_args, usage_texts_document_every_flag_and_exit_code) {
    const char *run = mg_cli_usage(MG_CMD_RUN);
    const char *flags[] = {"--kernel", "--m M", "--n N", "--k K", "-m,", "-n,", "-k,", "--max-dim", "--precision",
                           "--seed", "--iters", "--warmup", "--check", "--no-shortcut", "--no-flush", "--no-baseline",
                           "--csv", "--tiles auto|main|mid|small|n192", "--streamk auto|off|force", "--no-streamk",
                           "--mixed-panels auto|off|force",
                           "--rem-split auto|off|force", "--no-pdl", "--shortcut-mode graph|poll|sync|tail",
                           "--verbose", "-v,", "--help"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        cr_expect(strstr(run, flags[i]) != NULL, "run --help does not document %s", flags[i]);
    cr_expect(strstr(mg_cli_usage(MG_CMD_LIST), "usage: maxgemm list") != NULL);
    const char *gen = mg_cli_usage(MG_CMD_HELP);
    cr_expect(strstr(gen, "--version") != NULL && strstr(gen, "maxgemm run") != NULL && strstr(gen, "maxgemm list"));
    const mg_cli_command cmds[] = {MG_CMD_HELP, MG_CMD_RUN, MG_CMD_LIST, MG_CMD_VERSION};
    for (int i = 0; i < 4; i++) {
        const char *u = mg_cli_usage(cmds[i]);
        cr_expect(strstr(u, "exit status: 0") && strstr(u, "1 the check failed") && strstr(u, "2 usage error") &&
                      strstr(u, "3 runtime error"),
                  "usage %d does not document the exit codes", (int)cmds[i]);
        cr_expect_eq(u[strlen(u) - 1], '\n');
    }
    cr_expect(strstr(MG_CLI_OPTION_HELP, "--shortcut-mode") != NULL, "the bench's shared option help");
}

Test(cli_args, exit_code_mapping) {
    cr_assert_eq(mg_cli_exit_code(MG_OK, 0), MG_EXIT_OK);
    cr_assert_eq(mg_cli_exit_code(MG_OK, 1), MG_EXIT_CHECK_FAILED);
    cr_assert_eq(MG_EXIT_OK, 0);
    cr_assert_eq(MG_EXIT_CHECK_FAILED, 1);
    cr_assert_eq(MG_EXIT_USAGE, 2);
    cr_assert_eq(MG_EXIT_RUNTIME, 3);
    const mg_status usage[] = {MG_ERR_INVALID_ARG, MG_ERR_SHAPE, MG_ERR_MAX_DIM, MG_ERR_PRECISION, MG_ERR_KERNEL,
                               MG_ERR_UNSUPPORTED};
    const mg_status runtime[] = {MG_ERR_NO_DEVICE, MG_ERR_OUT_OF_MEMORY, MG_ERR_NO_WEIGHTS, MG_ERR_CUDA, MG_ERR_CUBLAS,
                                 MG_STATUS_COUNT, (mg_status)999};
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++)
        for (int cf = 0; cf <= 1; cf++)
            cr_assert_eq(mg_cli_exit_code(usage[i], cf), MG_EXIT_USAGE, "%s", mg_strerror(usage[i]));
    for (size_t i = 0; i < sizeof runtime / sizeof runtime[0]; i++)
        for (int cf = 0; cf <= 1; cf++)
            cr_assert_eq(mg_cli_exit_code(runtime[i], cf), MG_EXIT_RUNTIME, "status %d", (int)runtime[i]);
    /* every status has an exit code, and only MG_OK gives 0 or 1 */
    for (int s = 0; s < MG_STATUS_COUNT; s++) {
        const int c = mg_cli_exit_code((mg_status)s, 1);
        cr_assert(s == MG_OK ? c == MG_EXIT_CHECK_FAILED : (c == MG_EXIT_USAGE || c == MG_EXIT_RUNTIME), "status %d -> %d",
                  s, c);
    }
}

/* ---- the built binary (build/maxgemm, from the repository root as `make test` runs) -------------------------- */

/* The Makefile may pass -DMG_CLI_BIN='"$(BUILD)/maxgemm"'; the default is the default build's. */
#ifdef MG_CLI_BIN
#define CLI_BIN MG_CLI_BIN
#else
#define CLI_BIN "build/maxgemm"
#endif

/* Runs CLI_BIN with args (shell words), stdout and stderr into out; returns the exit status (-1: did not exit). */
static int run_cli(const char *args, char *out, size_t outlen) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s %s 2>&1", CLI_BIN, args);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, outlen - 1, p);
    out[n] = '\0';
    while (fgetc(p) != EOF) {
    }
    const int st = pclose(p);
    return (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
}

#define NEED_BIN()                                                                                                 \
    do {                                                                                                           \
        if (access(CLI_BIN, X_OK) != 0) cr_skip_test("%s is not built (run from the repository root)", CLI_BIN); \
    } while (0)

Test(cli_args, binary_version_and_help_exit_0) {
    NEED_BIN();
    static char out[16384];
    cr_assert_eq(run_cli("--version", out, sizeof out), 0, "maxgemm --version: %s", out);
    cr_assert(strstr(out, mg_version()) != NULL, "--version prints mg_version() (%s): %s", mg_version(), out);
    cr_assert(strstr(out, "commit") != NULL, "%s", out);
    cr_assert_eq(run_cli("--help", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "usage: maxgemm") != NULL, "%s", out);
    cr_assert_eq(run_cli("run --help", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "--shortcut-mode") != NULL && strstr(out, "--tiles") != NULL, "%s", out);
    cr_assert_eq(run_cli("list --help", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "usage: maxgemm list") != NULL, "%s", out);
    /* list --csv - works with or without a GPU: the registry as CSV, one row per kernel */
    cr_assert_eq(run_cli("list --csv -", out, sizeof out), 0, "%s", out);
    cr_assert(strncmp(out, "id,name,precisions,min_sm,tile_config,built,baseline,auto_rank,gpu_sm\n", 70) == 0, "%s", out);
    int lines = 0;
    for (const char *c = out; *c; c++) lines += *c == '\n';
    cr_assert_eq(lines, 1 + mg_registry_count(), "%s", out);
}

Test(cli_args, binary_usage_errors_exit_2) {
    NEED_BIN();
    static char out[16384];
    cr_assert_eq(run_cli("run --bogus", out, sizeof out), 2, "maxgemm run --bogus: %s", out);
    cr_assert(strstr(out, "--bogus") != NULL, "the message names the flag: %s", out);
    cr_assert_eq(run_cli("", out, sizeof out), 2, "no command: %s", out);
    cr_assert_eq(run_cli("run --tiles huge", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--tiles") != NULL, "%s", out);
    cr_assert_eq(run_cli("run --m 0", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run_cli("frobnicate", out, sizeof out), 2, "%s", out);
}

/* First contact on a machine without a GPU: `maxgemm run --check` (make run) must not look like a pass. It says that
 * nothing was checked against a GPU kernel and exits 3; `list` says that nothing can run here. */
Test(cli_args, binary_without_gpu_says_nothing_was_checked) {
    NEED_BIN();
    if (mg_test_has_gpu()) cr_skip_test("a CUDA device is present: make run really checks here");
    static char out[16384];
    cr_assert_eq(run_cli("run --check", out, sizeof out), 3, "maxgemm run --check without a GPU: %s", out);
    cr_assert(strstr(out, "NOTHING WAS CHECKED against a GPU kernel") != NULL, "%s", out);
    cr_assert_eq(run_cli("list", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "no CUDA device here: nothing can run") != NULL, "%s", out);
}

/* mg_cli_apply_option(code, flag) on an integer option: the value good sets field key (src/optkeys.h) to want; bad
 * is refused and leaves it. */
static void apply_int_option(int code, const char *flag, const char *good, const char *bad, int key, int want) {
    mg_options o = mg_options_default();
    char e[128];
    cr_assert_eq(mg_cli_apply_option(code, flag, good, &o, e, sizeof e), 0, "%s %s: %s", flag, good, e);
    cr_assert_eq(mg_optkey_get(&o, key), want, "%s %s", flag, good);
    cr_assert_eq(mg_cli_apply_option(code, flag, bad, &o, e, sizeof e), -1, "%s %s is refused", flag, bad);
    cr_assert_eq(mg_optkey_get(&o, key), want, "%s: unchanged on an error", flag);
}

/* --splits S: kernel 8's split-K factor (mg_options.splits), 0 (its policy, the default) .. MG_SPLITS_MAX. */
Test(cli_args, splits_option) {
    OK("run");
    cr_assert_eq(a.opt.splits, 0, "default: the kernel's policy");
    cr_assert_eq(mg_options_default().splits, 0);
    OK("run", "--splits", "2");
    cr_assert_eq(a.opt.splits, 2);
    OK("run", "--splits=16", "--kernel", "8");
    cr_assert_eq(a.opt.splits, 16);
    cr_assert_eq(a.kernel, 8);
    OK("run", "--splits", "3", "--splits", "0");
    cr_assert_eq(a.opt.splits, 0, "the last one wins");
    FAILS_WITH("--splits: '17' is out of range", "run", "--splits", "17");
    FAILS_WITH("--splits: '-1' is out of range", "run", "--splits=-1");
    FAILS_WITH("--splits: 'two' is not an integer", "run", "--splits", "two");
    FAILS_WITH("option --splits needs a value", "run", "--splits");
    apply_int_option(MG_CLI_OPT_SPLITS, "--splits", "4", "99", MG_OPTKEY_SPLITS, 4);
    cr_expect(strstr(mg_cli_usage(MG_CMD_RUN), "--splits S") != NULL, "run --help documents --splits");
}

/* --x-tile NX and --cluster C: kernel 8's x-tile width (a multiple of 8 up to 256; the plan checks it is one of its
 * configurations') and CTAs per cluster (0..2); both 0 (the policy) by default. */
Test(cli_args, x_tile_and_cluster_options) {
    OK("run");
    cr_assert(a.opt.x_tile == 0 && a.opt.cluster == 0, "default: the kernel's policy");
    cr_assert(mg_options_default().x_tile == 0 && mg_options_default().cluster == 0);
    OK("run", "--x-tile", "152", "--cluster=2", "--kernel", "8");
    cr_assert(a.opt.x_tile == 152 && a.opt.cluster == 2 && a.kernel == 8);
    FAILS_WITH("--x-tile: 100 is not a multiple of 8", "run", "--x-tile", "100");
    FAILS_WITH("--x-tile: '264' is out of range", "run", "--x-tile", "264");
    FAILS_WITH("--cluster: '3' is out of range", "run", "--cluster", "3");
    FAILS_WITH("option --cluster needs a value", "run", "--cluster");
    apply_int_option(MG_CLI_OPT_X_TILE, "--x-tile", "96", "97", MG_OPTKEY_X_TILE, 96);
    apply_int_option(MG_CLI_OPT_CLUSTER, "--cluster", "1", "-1", MG_OPTKEY_CLUSTER, 1);
    cr_expect(strstr(mg_cli_usage(MG_CMD_RUN), "--x-tile NX") != NULL, "run --help documents --x-tile");
    cr_expect(strstr(mg_cli_usage(MG_CMD_RUN), "--cluster C") != NULL, "run --help documents --cluster");
}

/* --w-rows R: kernel 8's W rows per tile (64, 128 or 256; the plan checks that a tile of that height fits the batch), 0
 * (the policy) by default, also as the option key w_rows= of the matrices and dispatch tables. */
Test(cli_args, w_rows_option) {
    OK("run");
    cr_assert(a.opt.w_rows == 0 && mg_options_default().w_rows == 0, "default: the kernel's policy");
    OK("run", "--w-rows", "128", "--kernel", "8", "-m", "32");
    cr_assert(a.opt.w_rows == 128 && a.kernel == 8);
    OK("run", "--w-rows=256");
    cr_assert(a.opt.w_rows == 256);
    FAILS_WITH("--w-rows: 96 W rows is not a tile height of kernel 8 (64, 128 or 256; 0 = its policy)", "run",
               "--w-rows", "96");
    FAILS_WITH("--w-rows: '512' is out of range", "run", "--w-rows", "512");
    FAILS_WITH("option --w-rows needs a value", "run", "--w-rows");
    apply_int_option(MG_CLI_OPT_W_ROWS, "--w-rows", "64", "-64", MG_OPTKEY_W_ROWS, 64);
    /* the key takes 1 .. 256 as text (a matrix row, a table row); the library checks the height (gpu_kernels/
     * swapab_fuse_options: mg_plan_set_options refuses w_rows = 100) */
    const int key = mg_optkey_find("w_rows", 6);
    cr_assert(key == MG_OPTKEY_W_ROWS && mg_optkey_value(key, "128", 3) == 128 &&
                  mg_optkey_value(key, "auto", 4) == 0 && mg_optkey_value(key, "257", 3) == -1,
              "w_rows= takes auto and 1 .. 256");
    cr_expect(strstr(mg_cli_usage(MG_CMD_RUN), "--w-rows R") != NULL, "run --help documents --w-rows");
}

/* --fuse auto|off|force: kernel 8's finish in the kernel (an mg_switch, auto by default), also as the option key
 * fuse= of the matrices and dispatch tables. */
Test(cli_args, fuse_option) {
    OK("run");
    cr_assert(a.opt.fuse == MG_SWITCH_AUTO && mg_options_default().fuse == MG_SWITCH_AUTO, "default: auto");
    OK("run", "--fuse", "off", "--kernel", "8");
    cr_assert(a.opt.fuse == MG_SWITCH_OFF && a.kernel == 8);
    OK("run", "--fuse=force");
    cr_assert(a.opt.fuse == MG_SWITCH_FORCE);
    FAILS_WITH("--fuse: 'on' is invalid (expected auto, off or force)", "run", "--fuse", "on");
    FAILS_WITH("option --fuse needs a value", "run", "--fuse");
    const int key = mg_optkey_find("fuse", 4);
    cr_assert(key == MG_OPTKEY_FUSE && mg_optkey_value(key, "off", 3) == MG_SWITCH_OFF &&
                  mg_optkey_value(key, "2", 1) == -1,
              "fuse= takes the switch names only");
    mg_options o = mg_options_default();
    mg_optkey_set(&o, key, MG_SWITCH_FORCE);
    cr_assert(o.fuse == MG_SWITCH_FORCE && mg_optkey_get(&o, key) == MG_SWITCH_FORCE);
    cr_expect(strstr(mg_cli_usage(MG_CMD_RUN), "--fuse auto|off|force") != NULL, "run --help documents --fuse");
}

/* --mcast auto|w|x: what kernel 8's clusters of 2 share and multicast (an mg_mcast, auto by default), also as the
 * option key mcast= of the matrices and dispatch tables; the library refuses a value outside the enum. */
Test(cli_args, mcast_option) {
    OK("run");
    cr_assert(a.opt.mcast == MG_MCAST_AUTO && mg_options_default().mcast == MG_MCAST_AUTO, "default: auto");
    OK("run", "--mcast", "x", "--cluster", "2", "--kernel", "8");
    cr_assert(a.opt.mcast == MG_MCAST_X && a.opt.cluster == 2 && a.kernel == 8);
    OK("run", "--mcast=w");
    cr_assert(a.opt.mcast == MG_MCAST_W);
    FAILS_WITH("--mcast: 'X' is invalid (expected auto, w or x)", "run", "--mcast", "X");
    FAILS_WITH("option --mcast needs a value", "run", "--mcast");
    const int key = mg_optkey_find("mcast", 5);
    cr_assert(key == MG_OPTKEY_MCAST && mg_optkey_value(key, "x", 1) == MG_MCAST_X &&
                  mg_optkey_value(key, "w", 1) == MG_MCAST_W && mg_optkey_value(key, "2", 1) == -1,
              "mcast= takes the names only");
    mg_options o = mg_options_default();
    mg_optkey_set(&o, key, MG_MCAST_X);
    cr_assert(o.mcast == MG_MCAST_X && mg_optkey_get(&o, key) == MG_MCAST_X);
    char buf[16];
    mg_optkey_format_value(key, MG_MCAST_W, buf, sizeof buf);
    cr_expect_str_eq(buf, "w");
    cr_expect(strstr(mg_cli_usage(MG_CMD_RUN), "--mcast auto|w|x") != NULL, "run --help documents --mcast");
}

/* --dispatch FILE: the dispatch table auto follows (mg_dispatch_load, tile_configs/README.md); run only. The binary
 * checks the file before anything runs: a malformed table is a usage error naming its line. */
Test(cli_args, dispatch_option) {
    OK("run");
    cr_assert_null(a.dispatch_path, "default: the compiled-in tables");
    OK("run", "--dispatch", "t.tsv");
    cr_assert_str_eq(a.dispatch_path, "t.tsv");
    OK("run", "--dispatch=/dev/null");
    cr_assert_str_eq(a.dispatch_path, "/dev/null");
    FAILS_WITH("option --dispatch needs a value", "run", "--dispatch");
    FAILS_WITH("unknown option '--dispatch' for 'maxgemm list'", "list", "--dispatch", "t.tsv");
    cr_expect(strstr(mg_cli_usage(MG_CMD_RUN), "--dispatch FILE") != NULL, "run --help documents --dispatch");
}

/* The built binary refuses a table it cannot open, as a usage error, before anything runs. */
Test(cli_args, binary_dispatch_option_checks_the_file) {
    NEED_BIN();
    char out[4096];
    cr_assert_eq(run_cli("run --dispatch /nonexistent/t.tsv", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--dispatch: dispatch table /nonexistent/t.tsv: cannot open") != NULL, "%s", out);
}
