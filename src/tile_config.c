/* tile_config.c: the tile_configs/NAME.cfg parser (used by tools/gen_tiles at build time, by the tests and by the
 * fuzzer) and mg_tile_find over the generated table.
 *
 * The parser takes arbitrary bytes: it never reads past len, never relies on a NUL terminator, rejects bytes
 * outside printable ASCII before the comment marker, and bounds every number while it is being read, so a
 * malformed file gives one "file:line: ..." message and never undefined behaviour.
 *
 * Built with -DMG_TILE_PARSER_ONLY (gen_tiles, the fuzzer) it leaves out mg_tile_find, because the table that
 * mg_tile_find searches is the generator's own output.
 */
#include "tile_config.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define NFIELDS 8

static const char *const field_names[NFIELDS] = {"kernel", "precision", "bm", "bn", "bk", "stages", "consumers",
                                                 "cluster"};
static const int field_min[NFIELDS] = {0, 0, MG_TILE_BMN_MIN, MG_TILE_BMN_MIN, MG_TILE_BK_MIN, 1, 1, 1};
static const int field_max[NFIELDS] = {0, 0, MG_TILE_BMN_MAX, MG_TILE_BMN_MAX, MG_TILE_BK_MAX, MG_TILE_STAGES_MAX,
                                       MG_TILE_CONSUMERS_MAX, MG_TILE_CLUSTER_MAX};

typedef struct token {
    const char *p;
    size_t n;
} token;

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int
fail(char *err, size_t errlen, const char *file, unsigned long line, const char *fmt, ...) {
    if (err && errlen > 0) {
        int w = snprintf(err, errlen, "%s:%lu: ", file, line);
        if (w >= 0 && (size_t)w < errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + w, errlen - (size_t)w, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static int is_space(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Tokens are quoted in messages; they hold printable ASCII only (checked before tokenising), but may be long. */
#define TOKFMT "'%.*s%s'"
#define TOKARG(t) (int)((t).n > 40 ? 40 : (t).n), (t).p, ((t).n > 40 ? "..." : "")

static int tok_eq(token t, const char *s) { return t.n == strlen(s) && memcmp(t.p, s, t.n) == 0; }

int mg_tile_parse_append(const char *text, size_t len, const char *filename, mg_tile_config *out, int max,
                         int *count, char *err, size_t errlen) {
    const char *file = filename ? filename : "<input>";
    if (err && errlen) err[0] = '\0';
    if (!count) return fail(err, errlen, file, 0, "internal error: count is NULL");
    if (*count < 0) *count = 0;
    if (len > 0 && !text) return fail(err, errlen, file, 0, "internal error: text is NULL");
    if (max > 0 && !out) return fail(err, errlen, file, 0, "internal error: out is NULL");

    unsigned long line = 0;
    size_t pos = 0;
    while (pos < len) {
        line++;
        size_t end = pos;
        while (end < len && text[end] != '\n') end++;
        const size_t next = end + 1;

        /* A '#' starts a comment that runs to the end of the line; anything may follow it. */
        size_t stop = pos;
        while (stop < end && text[stop] != '#') stop++;

        token tok[NFIELDS];
        int ntok = 0;
        size_t i = pos;
        while (i < stop) {
            const unsigned char c = (unsigned char)text[i];
            if (is_space(c)) { i++; continue; }
            if (c < 0x21 || c > 0x7e)
                return fail(err, errlen, file, line, "unexpected byte 0x%02x in column %lu (only printable ASCII "
                            "is allowed outside comments)", c, (unsigned long)(i - pos + 1));
            size_t j = i;
            while (j < stop && !is_space((unsigned char)text[j])) {
                const unsigned char d = (unsigned char)text[j];
                if (d < 0x21 || d > 0x7e)
                    return fail(err, errlen, file, line, "unexpected byte 0x%02x in column %lu (only printable "
                                "ASCII is allowed outside comments)", d, (unsigned long)(j - pos + 1));
                j++;
            }
            if (ntok == NFIELDS)
                return fail(err, errlen, file, line, "too many fields: expected %d (kernel precision bm bn bk "
                            "stages consumers cluster)", NFIELDS);
            tok[ntok].p = text + i;
            tok[ntok].n = j - i;
            ntok++;
            i = j;
        }
        pos = next;
        if (ntok == 0) continue; /* blank or comment-only line */
        if (ntok < NFIELDS)
            return fail(err, errlen, file, line, "expected %d fields (kernel precision bm bn bk stages consumers "
                        "cluster), found %d", NFIELDS, ntok);

        mg_tile_config row;
        memset(&row, 0, sizeof row);

        /* kernel: [a-z0-9_]+, at most 31 characters (it becomes part of C macro names). */
        if (tok[0].n > MG_TILE_KERNEL_MAX)
            return fail(err, errlen, file, line, "kernel name " TOKFMT " is longer than %d characters",
                        TOKARG(tok[0]), MG_TILE_KERNEL_MAX);
        for (size_t k = 0; k < tok[0].n; k++) {
            const char c = tok[0].p[k];
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'))
                return fail(err, errlen, file, line, "kernel name " TOKFMT " may only hold a-z, 0-9 and '_'",
                            TOKARG(tok[0]));
        }
        memcpy(row.kernel, tok[0].p, tok[0].n);

        if (!tok_eq(tok[1], "fp32") && !tok_eq(tok[1], "tf32") && !tok_eq(tok[1], "bf16"))
            return fail(err, errlen, file, line, "precision " TOKFMT " is not one of fp32, tf32, bf16",
                        TOKARG(tok[1]));
        memcpy(row.precision, tok[1].p, tok[1].n);

        int val[NFIELDS] = {0};
        for (int f = 2; f < NFIELDS; f++) {
            long v = 0;
            for (size_t k = 0; k < tok[f].n; k++) {
                const char c = tok[f].p[k];
                if (c < '0' || c > '9')
                    return fail(err, errlen, file, line, "%s " TOKFMT " is not a positive decimal integer",
                                field_names[f], TOKARG(tok[f]));
                if (v <= 100000000L) v = v * 10 + (c - '0'); /* saturate: far beyond every range below */
            }
            if (v < field_min[f] || v > field_max[f])
                return fail(err, errlen, file, line, "%s " TOKFMT " is out of range [%d, %d]", field_names[f],
                            TOKARG(tok[f]), field_min[f], field_max[f]);
            val[f] = (int)v;
        }
        row.bm = val[2];
        row.bn = val[3];
        row.bk = val[4];
        row.stages = val[5];
        row.consumers = val[6];
        row.cluster = val[7];

        for (int r = 0; r < *count; r++)
            if (strcmp(out[r].kernel, row.kernel) == 0 && strcmp(out[r].precision, row.precision) == 0)
                return fail(err, errlen, file, line, "duplicate entry for kernel '%s' precision '%s' (each pair "
                            "may appear once across all .cfg files)", row.kernel, row.precision);
        if (*count >= max)
            return fail(err, errlen, file, line, "too many rows: the table holds at most %d", max < 0 ? 0 : max);
        out[(*count)++] = row;
    }
    return 0;
}

int mg_tile_parse(const char *text, size_t len, const char *filename, mg_tile_config *out, int max, int *count,
                  char *err, size_t errlen) {
    if (count) *count = 0;
    return mg_tile_parse_append(text, len, filename, out, max, count, err, errlen);
}

#ifndef MG_TILE_PARSER_ONLY
const mg_tile_config *mg_tile_find(const char *kernel, const char *precision) {
    if (!kernel || !precision) return NULL;
    for (int i = 0; i < mg_tile_config_count; i++)
        if (strcmp(mg_tile_configs[i].kernel, kernel) == 0 && strcmp(mg_tile_configs[i].precision, precision) == 0)
            return &mg_tile_configs[i];
    return NULL;
}
#endif
