/* fuzz_matrix.c: libFuzzer target for the benchmark matrix parser (bench/matrix.c): arbitrary bytes must parse or
 * fail with one "FILE:LINE: why" message, never crash, hang or leak; a file that parses must also expand (against a
 * fixed registry-like kernel list) without error, and every expanded row must carry sane fields. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "matrix.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static mg_matrix mx;   /* large: keep it off the fuzzer's stack */
    char err[256];
    err[0] = '\0';
    if (mg_matrix_parse((const char *)data, size, "fuzz.txt", &mx, err, sizeof err) != 0) {
        if (strncmp(err, "fuzz.txt:", 9) != 0) {
            fprintf(stderr, "error message does not name the file and line: '%s'\n", err);
            abort();
        }
        return 0;
    }
    const mgm_kernel_info known[] = {{0, 7}, {1, 7}, {2, 6}, {3, 6}, {4, 6}, {5, 1}, {6, 1}};
    mgm_row *rows = NULL;
    int n = mg_matrix_expand(&mx, known, 7, -1, &rows, err, sizeof err);
    if (n < 0) {
        if (err[0] == '\0') abort();   /* a failure must say why */
        return 0;
    }
    for (int i = 0; i < n; i++) {
        const mgm_row *r = &rows[i];
        if (r->m < 0 || r->n < 0 || r->k < 0 || r->prec < -1 || r->prec > 2 || r->max_dim < -1 || r->max_dim > 1)
            abort();
    }
    free(rows);
    return 0;
}
