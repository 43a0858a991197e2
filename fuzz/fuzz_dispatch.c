/* fuzz_dispatch.c: libFuzzer target for the dispatch-table parser (src/dispatch.c, what tools/gen_dispatch and
 * mg_dispatch_load run on a file): arbitrary bytes must parse or fail with one "FILE:LINE: why" message, never crash,
 * hang or leak; a table that parses has sane rows (ranges, no two rows of a (precision, max_dim) covering one M), and
 * each row's options print back (src/optkeys.c) to text that parses to the same options. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    mg_dispatch_table t;
    char err[512];
    err[0] = '\0';
    if (mg_dispatch_parse((const char *)data, size, "fuzz.tsv", &t, err, sizeof err) != 0) {
        if (strncmp(err, "fuzz.tsv:", 9) != 0 || t.rows || t.nrows) {
            fprintf(stderr, "a rejected table: message '%s', %d rows kept\n", err, t.nrows);
            abort();
        }
        return 0;
    }
    if (t.nrows > 0 && t.ngpus == 0) abort();
    for (int i = 0; i < t.nrows; i++) {
        const mg_dispatch_row *r = &t.rows[i];
        if (r->prec < 0 || r->prec >= MG_PREC_COUNT || (r->max_dim != 0 && r->max_dim != 1) || r->m_lo < 1 ||
            r->m_hi < r->m_lo || !r->kernel[0] || r->line < 1)
            abort();
        for (int j = 0; j < i; j++) {
            const mg_dispatch_row *o = &t.rows[j];
            if (o->prec == r->prec && o->max_dim == r->max_dim && o->m_lo <= r->m_hi && r->m_lo <= o->m_hi) abort();
        }
        if (mg_dispatch_row_for(&t, r->prec, r->max_dim, r->m_lo) != r) abort();
        char text[256];
        mg_optset back;
        const int n = mg_optset_format(&r->opt, text, sizeof text);
        if (n < 0 || (size_t)n >= sizeof text || mg_optset_parse(text, (size_t)n, &back, err, sizeof err) != 0 ||
            back.set != r->opt.set || memcmp(back.val, r->opt.val, sizeof back.val) != 0) {
            fprintf(stderr, "options '%s' do not read back: %s\n", text, err);
            abort();
        }
    }
    mg_dispatch_free(&t);
    return 0;
}
