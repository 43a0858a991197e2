/* fuzz_cli_args.c: libFuzzer target for the CLI parser (src/cli_args.c). The input is split at NUL bytes into
 * argv[1..] (argv[0] is "maxgemm"), so the fuzzer controls every argument's bytes. Checks beyond "no crash":
 *   - success: the command is valid and every field of a 'run' is inside its documented range, the kernel
 *     is auto or a registry row, csv_path points into the arguments;
 *   - failure: a non-empty, NUL-terminated message.
 * Linked with the library for mg_registry_parse, mg_precision_parse and mg_set_error (no CUDA call is made).
 * Run: make fuzz (seed corpus in fuzz/corpus/cli_args). */
#include "cli_args.h"
#include "mg_kernel.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXARGS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size + 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    buf[size] = '\0';
    char *argv[MAXARGS + 2];
    int argc = 0;
    argv[argc++] = (char *)"maxgemm";
    size_t start = 0;
    for (size_t i = 0; i <= size && argc < MAXARGS; i++)
        if (buf[i] == '\0') {
            if (i < size || start < size) argv[argc++] = buf + start; /* a trailing NUL ends the last argument */
            start = i + 1;
        }
    argv[argc] = NULL;

    mg_cli_args a;
    char err[200];
    memset(err, 'X', sizeof err);
    const int rc = mg_cli_parse(argc, argv, &a, err, sizeof err);
    if (rc == 0) {
        if (a.command != MG_CMD_HELP && a.command != MG_CMD_LIST && a.command != MG_CMD_RUN) abort();
        if (a.m < 1 || a.m > 2147483647 || a.n < 1 || a.n > 2147483647 || a.k < 0 || a.k > 2147483647) abort();
        if (a.max_dim < -2 || a.max_dim > 1) abort();
        if ((int)a.precision < 0 || a.precision >= MG_PREC_COUNT) abort();
        if (a.iters < 1 || a.warmup < 0) abort();
        if (a.kernel != MG_KERNEL_AUTO && !mg_registry_find(a.kernel)) abort();
        if ((a.check | 1) != 1 || (a.shortcut | 1) != 1 || (a.flush_l2 | 1) != 1) abort();
        if (a.csv_path && (a.csv_path < buf || a.csv_path > buf + size || !a.csv_path[0])) abort();
    } else {
        if (rc != -1 || err[0] == '\0' || !memchr(err, '\0', sizeof err)) abort();
    }
    free(buf);
    return 0;
}
