/* test_bench_matrix.c (suite "bench_matrix"): the benchmark matrix's launch options (bench/matrix.c): a 'row' line's
 * KEY=VALUE options, 'variants' and its expansion, 'prune'. CPU only (the parser has no CUDA and no registry). */
#include "test_common.h"

#include "matrix.h"

#include <stdlib.h>

static char err[512];
static mg_matrix mx;

static int parse(const char *text) {
    memset(err, 0, sizeof err);
    return mg_matrix_parse(text, strlen(text), "m.txt", &mx, err, sizeof err);
}

static void expect_error(const char *text, int line, const char *want) {
    mg_test_expect_rejected(parse(text), text, err, "m.txt", line, want);
}

/* kernels 0 .. 4 of a registry: 0 claims everything, 4 tf32 and bf16 */
static const mgm_kernel_info known[] = {{0, 7u}, {4, 6u}};

Test(bench_matrix, row_options) {
    cr_assert_eq(parse("row 4 bf16 1 64 8192 8192 tiles=mid streamk=off splits=8\nrow auto tf32 0 1 8 8\n"), 0, "%s", err);
    cr_assert_eq(mx.nrows, 2);
    const mg_optset *o = &mx.rows[0].opt;
    cr_assert_eq(o->set, (1u << MG_OPTKEY_TILES) | (1u << MG_OPTKEY_STREAMK) | (1u << MG_OPTKEY_SPLITS));
    cr_assert(o->val[MG_OPTKEY_TILES] == MG_TILES_MID && o->val[MG_OPTKEY_STREAMK] == MG_SWITCH_OFF &&
              o->val[MG_OPTKEY_SPLITS] == 8);
    cr_assert_eq(mx.rows[1].opt.set, 0u, "no options: the command line's");
    expect_error("# c\nrow 4 bf16 1 64 8192 8192 tiles=huge\n", 2, "row: option 'tiles=huge': unknown value");
    expect_error("row 4 bf16 1 64 8192 8192 tiles=main tiles=mid\n", 1, "given twice");
    expect_error("row 4 bf16 1 64 8192 8192 main\n", 1, "expected KEY=VALUE");
    expect_error("row 4 bf16 1 64 8192 8192 tiles=main streamk=off mixed_panels=off rem_split=off splits=2 x_tile=96 "
                 "cluster=2 fuse=off mcast=x w_rows=128 x=y\n", 1, "arguments");
    cr_assert_eq(parse("row 8 bf16 0 600 8192 8192 x_tile=152\n"), 0, "%s", err);
    cr_assert(mx.rows[0].opt.set == (1u << MG_OPTKEY_X_TILE) && mx.rows[0].opt.val[MG_OPTKEY_X_TILE] == 152);
    cr_assert_eq(parse("row 8 bf16 1 32 8192 8192 x_tile=64 w_rows=128\n"), 0, "%s", err);
    cr_assert(mx.rows[0].opt.set == ((1u << MG_OPTKEY_X_TILE) | (1u << MG_OPTKEY_W_ROWS)) &&
              mx.rows[0].opt.val[MG_OPTKEY_W_ROWS] == 128);
}

Test(bench_matrix, variants_expand_per_kernel_but_not_kernel_0) {
    cr_assert_eq(parse("kernels 0 4\nprecisions bf16\nmax_dims 1\nvariants tiles=auto,main streamk=auto,off\n"
                       "shape 64 8192 8192\nrow 4 bf16 1 64 8192 8192 tiles=mid\n"),
                 0, "%s", err);
    cr_assert_eq(mx.nvariants, 4);
    mgm_row *rows = NULL;
    const int n = mg_matrix_expand(&mx, known, 2, -1, &rows, err, sizeof err);
    cr_assert_eq(n, 6, "kernel 0 once, kernel 4 x 4 variants, the explicit row: %d rows (%s)", n, err);
    cr_assert(rows[0].kernel == 0 && rows[0].opt.set == 0, "kernel 0 first, with the command line's options");
    /* kernel 4's rows: the fewest keys set first (the explicit tiles=mid), then by value, auto first */
    const int want[5][2] = {{MG_TILES_MID, -1}, {0, 0}, {0, 1}, {1, 0}, {1, 1}};
    for (int i = 1; i < 6; i++) {
        cr_assert_eq(rows[i].kernel, 4);
        cr_assert_eq(rows[i].opt.val[MG_OPTKEY_TILES], want[i - 1][0], "row %d", i);
        if (want[i - 1][1] >= 0) cr_assert_eq(rows[i].opt.val[MG_OPTKEY_STREAMK], want[i - 1][1], "row %d", i);
    }
    free(rows);
    /* a precision the kernel does not claim: one skipped row stands for all its variants */
    cr_assert_eq(parse("kernels 4\nprecisions fp32\nmax_dims 1\nvariants tiles=auto,main,mid\nshape 8 64 64\n"), 0);
    const int n2 = mg_matrix_expand(&mx, known, 2, -1, &rows, err, sizeof err);
    cr_assert_eq(n2, 2, "the kernel 0 baseline and one skipped kernel 4 row: %d", n2);
    cr_assert(rows[1].kernel == 4 && strstr(rows[1].skip, "does not claim fp32"), "%s", rows[1].skip);
    free(rows);
}

Test(bench_matrix, variants_and_prune_errors) {
    expect_error("variants tiles=auto,auto\n", 1, "a value given twice");
    expect_error("variants tiles=auto tiles=main\n", 1, "given twice");
    expect_error("variants nope=1\n", 1, "is not KEY=V1,V2");
    expect_error("variants tiles=\n", 1, "unknown value");
    expect_error("variants tiles=auto\nvariants streamk=off\n", 2, "'variants' given twice");
    expect_error("variants splits=auto,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 tiles=auto,main,mid,small,n192 "
                 "streamk=auto,off,force mixed_panels=auto,off\n", 1, "510 combinations");
    cr_assert_eq(parse("prune 2.5\nshape 1 8 8\n"), 0, "%s", err);
    cr_assert(fabs(mx.prune - 2.5) < 1e-12);
    cr_assert_eq(parse("shape 1 8 8\n"), 0);
    cr_assert_eq(mx.prune, 0.0, "off by default");
    expect_error("prune 0.5\n", 1, "prune");
}

/* 'ceilings M N K' measures every ceiling of the run first, in kind order: the copy, cuBLAS bf16 / tf32 / fp32 and
 * the int8 one (s8 GemmEx: the roof of kernels 9-11's products, no precision mode of the model), then the splits. */
Test(bench_matrix, ceilings_rows_include_int8) {
    cr_assert_eq(parse("kernels 0\nprecisions bf16\nmax_dims 1\nceilings 1024 8192 8192\ncopy_mib 64\n"), 0, "%s", err);
    mgm_row *rows = NULL;
    const int n = mg_matrix_expand(&mx, known, 2, -1, &rows, err, sizeof err);
    cr_assert_geq(n, 7, "%d rows (%s)", n, err);
    const mgm_kind want[] = {MGM_CEIL_COPY, MGM_CEIL_BF16, MGM_CEIL_TF32, MGM_CEIL_FP32, MGM_CEIL_INT8, MGM_SPLIT_W,
                             MGM_SPLIT_X};
    for (int i = 0; i < 7; i++) cr_assert_eq(rows[i].kind, want[i], "row %d: kind %d", i, (int)rows[i].kind);
    cr_assert(rows[4].prec == -1 && rows[4].m == 1024 && rows[4].n == 8192 && rows[4].k == 8192,
              "the int8 ceiling: no precision mode, the ceilings shape (prec %d, %lld x %lld x %lld)", rows[4].prec,
              (long long)rows[4].m, (long long)rows[4].n, (long long)rows[4].k);
    free(rows);
}
