/* fuzz_tile_config.c: libFuzzer target for the tile_configs parser (src/tile_config.c, built with
 * -DMG_TILE_PARSER_ONLY). Beyond "no crash, no sanitizer report", it checks the parser's promises:
 *   - success: every row is in range, kernel names are [a-z0-9_]{1,31}, no (kernel, precision) pair repeats,
 *     and printing the rows back and re-parsing gives the same rows;
 *   - failure: the message starts with "fuzz.cfg:<line>: " and *count never exceeds max.
 * Run: make fuzz (seed corpus in fuzz/corpus/tile_config). */
#include "tile_config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXR 16

static void check_row(const mg_tile_config *r) {
    size_t n = strnlen(r->kernel, sizeof r->kernel);
    if (n == 0 || n > MG_TILE_KERNEL_MAX) abort();
    for (size_t i = 0; i < n; i++) {
        const char c = r->kernel[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) abort();
    }
    if (strcmp(r->precision, "fp32") && strcmp(r->precision, "tf32") && strcmp(r->precision, "bf16")) abort();
    if (r->bm < MG_TILE_BMN_MIN || r->bm > MG_TILE_BMN_MAX || r->bn < MG_TILE_BMN_MIN || r->bn > MG_TILE_BMN_MAX)
        abort();
    if (r->bk < MG_TILE_BK_MIN || r->bk > MG_TILE_BK_MAX) abort();
    if (r->stages < 1 || r->stages > MG_TILE_STAGES_MAX || r->consumers < 1 || r->consumers > MG_TILE_CONSUMERS_MAX ||
        r->cluster < 1 || r->cluster > MG_TILE_CLUSTER_MAX)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mg_tile_config rows[MAXR];
    int count = -5;
    char err[256];
    /* The parser must not rely on a terminator: hand it an exact-size heap copy so ASan sees any overread. */
    char *text = malloc(size ? size : 1);
    if (!text) return 0;
    if (size) memcpy(text, data, size);
    const int rc = mg_tile_parse(text, size, "fuzz.cfg", rows, MAXR, &count, err, sizeof err);
    if (count < 0 || count > MAXR) abort();
    if (rc == 0) {
        for (int i = 0; i < count; i++) {
            check_row(&rows[i]);
            for (int j = 0; j < i; j++)
                if (!strcmp(rows[i].kernel, rows[j].kernel) && !strcmp(rows[i].precision, rows[j].precision)) abort();
        }
        /* Round trip: print and re-parse. */
        char buf[MAXR * 96];
        size_t len = 0;
        for (int i = 0; i < count; i++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s %s %d %d %d %d %d %d\n", rows[i].kernel,
                                    rows[i].precision, rows[i].bm, rows[i].bn, rows[i].bk, rows[i].stages,
                                    rows[i].consumers, rows[i].cluster);
        mg_tile_config again[MAXR];
        int count2 = 0;
        if (mg_tile_parse(buf, len, "again.cfg", again, MAXR, &count2, err, sizeof err) != 0) abort();
        if (count2 != count || memcmp(again, rows, (size_t)count * sizeof rows[0]) != 0) abort();
    } else {
        if (rc != -1 || strncmp(err, "fuzz.cfg:", 9) != 0 || strnlen(err, sizeof err) == sizeof err) abort();
        const char *p = err + 9;
        if (*p < '0' || *p > '9') abort();
        while (*p >= '0' && *p <= '9') p++;
        if (p[0] != ':' || p[1] != ' ') abort();
    }
    /* The same input with no error buffer and no room for rows must fail or succeed without touching memory. */
    int c0 = 0;
    const int rc0 = mg_tile_parse(text, size, NULL, NULL, 0, &c0, NULL, 0);
    if (c0 != 0 || (rc0 == 0 && rc == 0 && count > 0)) abort();
    free(text);
    return 0;
}
