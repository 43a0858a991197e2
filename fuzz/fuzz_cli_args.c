/* fuzz_cli_args.c: libFuzzer target for the CLI parser (src/cli_args.c: mg_cli_parse on getopt_long). The input is
 * split at NUL bytes into argv[1..] (argv[0] is "maxgemm"), so the fuzzer controls every argument's bytes. Checks
 * beyond "no crash":
 *   - success: the command is valid and every field of a 'run' is inside its documented range, the kernel is auto
 *     or a registry row, csv_path points into the arguments, the library options are valid values, help names a
 *     command, and the argv array is left as it was (no permutation: the parser runs getopt in POSIX order);
 *   - failure: a non-empty, NUL-terminated message;
 *   - the same input parsed twice gives the same result (getopt's global state is reset on every parse).
 * Linked with the library for mg_registry_parse, mg_precision_parse, mg_tiles_parse, mg_shortcut_mode_parse,
 * mg_options_default and mg_set_error (no CUDA call is made). Run: make fuzz (seed corpus in fuzz/corpus/cli_args). */
#include "cli_args.h"
#include "mg_kernel.h"
#include "shortcut.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAXARGS + 2], *orig[MAXARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"maxgemm";
    size_t start = 0;
    for (size_t i = 0; i <= size && argc < MAXARGS; i++)
        if (buf[i] == '\0') {
            if (i < size || start < size) argv[argc++] = buf + start; /* a trailing NUL ends the last argument */
            start = i + 1;
        }
    argv[argc] = NULL;
    memcpy(orig, argv, sizeof(char *) * (size_t)(argc + 1));

    mg_cli_args a, b;
    char err[200], err2[200];
    memset(err, 'X', sizeof err);
    const int rc = mg_cli_parse(argc, argv, &a, err, sizeof err);
    if (memcmp(orig, argv, sizeof(char *) * (size_t)(argc + 1)) != 0) abort();
    if (rc == 0) {
        if (a.command != MG_CMD_HELP && a.command != MG_CMD_LIST && a.command != MG_CMD_RUN &&
            a.command != MG_CMD_VERSION)
            abort();
        if (a.help_for != MG_CMD_HELP && a.help_for != MG_CMD_LIST && a.help_for != MG_CMD_RUN) abort();
        if (a.command != MG_CMD_HELP && a.help_for != MG_CMD_HELP) abort();
        if (a.m < 1 || a.m > 2147483647 || a.n < 1 || a.n > 2147483647 || a.k < 0 || a.k > 2147483647) abort();
        if (a.max_dim < -2 || a.max_dim > 1) abort();
        if ((int)a.precision < 0 || a.precision >= MG_PREC_COUNT) abort();
        if (a.iters < 1 || a.warmup < 0) abort();
        if (a.kernel != MG_KERNEL_AUTO && !mg_registry_find(a.kernel)) abort();
        if ((a.check | 1) != 1 || (a.shortcut | 1) != 1 || (a.flush_l2 | 1) != 1 || (a.baseline | 1) != 1) abort();
        if (a.csv_path && (a.csv_path < buf || a.csv_path > buf + size || !a.csv_path[0])) abort();
        const mg_options *o = &a.opt;
        if ((int)o->tiles < 0 || o->tiles >= MG_TILES_COUNT) abort();
        if ((int)o->streamk < 0 || o->streamk >= MG_SWITCH_COUNT) abort();
        if ((int)o->mixed_panels < 0 || o->mixed_panels >= MG_SWITCH_COUNT) abort();
        if ((int)o->rem_split < 0 || o->rem_split >= MG_SWITCH_COUNT) abort();
        if ((o->pdl | 1) != 1 || (o->verbose | 1) != 1) abort();
        if (o->splits < 0 || o->splits > MG_SPLITS_MAX) abort();
        if (o->shortcut_mode < 0 || o->shortcut_mode >= MG_SHORTCUT_MODE_COUNT) abort();
        if (a.command != MG_CMD_RUN) {   /* only run's flags change the fields */
            mg_cli_args d;
            mg_cli_defaults(&d);
            d.command = a.command;
            d.help_for = a.help_for;
            /* list --csv FILE (also when a later --help stopped the parse) */
            if (a.command == MG_CMD_LIST || a.help_for == MG_CMD_LIST) d.csv_path = a.csv_path;
            if (a.command == MG_CMD_HELP && a.help_for == MG_CMD_RUN) {
                /* run --help may follow other flags: the fields then hold what came before it */
            } else if (memcmp(&d, &a, sizeof d) != 0) {
                abort();
            }
        }
    } else {
        if (rc != -1 || err[0] == '\0' || !memchr(err, '\0', sizeof err)) abort();
    }
    /* deterministic: a second parse of the same argv gives the same answer */
    const int rc2 = mg_cli_parse(argc, argv, &b, err2, sizeof err2);
    if (rc2 != rc) abort();
    if (rc == 0 && memcmp(&a, &b, sizeof a) != 0) abort();
    if (rc != 0 && strcmp(err, err2) != 0) abort();
    free(buf);
    return 0;
}
