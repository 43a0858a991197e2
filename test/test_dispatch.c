/* test_dispatch.c (suite "dispatch"): the measured dispatch tables (src/dispatch.h, tile_configs/README.md) and the
 * KEY=VALUE launch options they share with the benchmark matrix (src/optkeys.h). CPU only: the parser, auto's choice
 * from a table (a fake GPU's, loaded from text), the fall-backs to the registry's rule, every committed table row as
 * a launch plan its kernel makes and bounds, and tools/gen_dispatch end to end. */
#include "test_common.h"

#include "dispatch.h"
#include "gpu_util.h"
#include "mg_kernel.h"
#include "optkeys.h"

#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static char err[512];
static mg_dispatch_table tab;

static int parse(const char *text) {
    mg_dispatch_free(&tab);
    memset(err, 0, sizeof err);
    return mg_dispatch_parse(text, strlen(text), "t.tsv", &tab, err, sizeof err);
}

/* The text must be rejected with a message that starts with "t.tsv:LINE: " and mentions want. */
static void expect_error(const char *text, int line, const char *want) {
    mg_test_expect_rejected(parse(text), text, err, "t.tsv", line, want);
    cr_assert_eq(tab.nrows, 0, "a rejected table keeps no rows");
    cr_assert_null(tab.rows);
}

static const mg_kernel *by_name(const char *name) {
    const mg_kernel *k = mg_registry_find_name(name);
    cr_assert(k && mg_kernel_available(k), "kernel %s is not in this build", name);
    return k;
}

Test(dispatch, parses_gpus_rows_and_comments) {
    const char *text = "# a header comment\r\n"
                       "gpu   Fake GPU 9000   # a trailing comment\n"
                       "gpu\tOther GPU\n"
                       "\n"
                       "bf16\t1\t1\t64\tmma_sync\ttiles=mid,streamk=off\t1.02..1.24\t8192\t8192\t# M 1:1.02 64:1.24\n"
                       "bf16 1 65 max 4 auto - - -\n"
                       "fp32  0  1  8  7  splits=4  1.5  1000  0";   /* no final newline */
    cr_assert_eq(parse(text), 0, "%s", err);
    cr_assert_str_eq(tab.file, "t.tsv");
    cr_assert_eq(tab.ngpus, 2);
    cr_assert_str_eq(tab.gpus[0], "Fake GPU 9000");
    cr_assert_str_eq(tab.gpus[1], "Other GPU");
    cr_assert(mg_dispatch_names_gpu(&tab, "Other GPU") && !mg_dispatch_names_gpu(&tab, "Fake GPU"));
    cr_assert_eq(tab.nrows, 3);
    const mg_dispatch_row *r = &tab.rows[0];
    cr_assert(r->prec == MG_PREC_BF16 && r->max_dim == 1 && r->m_lo == 1 && r->m_hi == 64 && r->line == 5);
    cr_assert_str_eq(r->kernel, "mma_sync");
    cr_assert_eq(r->opt.set, (1u << MG_OPTKEY_TILES) | (1u << MG_OPTKEY_STREAMK));
    cr_assert(r->opt.val[MG_OPTKEY_TILES] == MG_TILES_MID && r->opt.val[MG_OPTKEY_STREAMK] == MG_SWITCH_OFF);
    cr_assert(fabs(r->x_lo - 1.02) < 1e-12 && fabs(r->x_hi - 1.24) < 1e-12 && r->n == 8192 && r->k == 8192);
    r = &tab.rows[1];
    cr_assert(r->m_lo == 65 && r->m_hi == INT_MAX && r->opt.set == 0 && isnan(r->x_lo) && r->n == 0 && r->k == 0);
    cr_assert_str_eq(r->kernel, "4");
    r = &tab.rows[2];
    cr_assert(r->prec == MG_PREC_FP32 && r->max_dim == 0 && r->opt.set == 1u << MG_OPTKEY_SPLITS &&
              r->opt.val[MG_OPTKEY_SPLITS] == 4 && r->x_lo == 1.5 && r->x_hi == 1.5 && r->n == 1000 && r->k == 0);
    cr_assert_eq(mg_dispatch_row_for(&tab, MG_PREC_BF16, 1, 1), &tab.rows[0]);
    cr_assert_eq(mg_dispatch_row_for(&tab, MG_PREC_BF16, 1, 64), &tab.rows[0]);
    cr_assert_eq(mg_dispatch_row_for(&tab, MG_PREC_BF16, 1, 65), &tab.rows[1]);
    cr_assert_eq(mg_dispatch_row_for(&tab, MG_PREC_BF16, 1, INT_MAX), &tab.rows[1]);
    cr_assert_null(mg_dispatch_row_for(&tab, MG_PREC_BF16, 0, 5));
    cr_assert_null(mg_dispatch_row_for(&tab, MG_PREC_FP32, 0, 9));
    cr_assert_null(mg_dispatch_row_for(NULL, MG_PREC_FP32, 0, 1));
    /* empty and comment-only tables are fine: they name no GPU */
    cr_assert_eq(parse(""), 0);
    cr_assert_eq(parse("# nothing\n\n"), 0);
    cr_assert(tab.ngpus == 0 && tab.nrows == 0);
    mg_dispatch_free(&tab);
}

Test(dispatch, malformed_tables_name_the_line) {
    const char *g = "gpu X\n";
    char t[512];
#define BAD(body, line, want)                                                                                      \
    do {                                                                                                           \
        snprintf(t, sizeof t, "%s%s", g, body);                                                                    \
        expect_error(t, line, want);                                                                               \
    } while (0)
    BAD("fp16 1 1 2 4 auto - - -\n", 2, "a row starts with its precision");
    BAD("# ok\nbf16 1 1 2 4 auto - -\n", 3, "9 fields");
    BAD("bf16 2 1 2 4 auto - - -\n", 2, "max_dim");
    BAD("bf16 1 0 2 4 auto - - -\n", 2, "m_lo");
    BAD("bf16 1 5 4 4 auto - - -\n", 2, "below m_lo");
    BAD("bf16 1 1 99999999999 4 auto - - -\n", 2, "m_hi");
    BAD("bf16 1 1 2 Wgmma auto - - -\n", 2, "kernel 'Wgmma'");
    BAD("bf16 1 1 2 auto auto - - -\n", 2, "kernel 'auto'");
    BAD("bf16 1 1 2 4 tiles=huge - - -\n", 2, "unknown value");
    BAD("bf16 1 1 2 4 tile=main - - -\n", 2, "unknown key");
    BAD("bf16 1 1 2 4 tiles=main,tiles=mid - - -\n", 2, "given twice");
    BAD("bf16 1 1 2 4 tiles=main, - - -\n", 2, "empty item");
    BAD("bf16 1 1 2 4 splits=17 - - -\n", 2, "1..16");
    BAD("bf16 1 1 2 4 auto 1.2.3 - -\n", 2, "x_kernel0");
    BAD("bf16 1 1 2 4 auto 1.3..1.2 - -\n", 2, "LO <= HI");
    BAD("bf16 1 1 2 4 auto - 0 -\n", 2, "n:");
    BAD("bf16 1 1 64 4 auto - - -\nbf16 0 1 64 4 auto - - -\n# gap\nbf16 1 64 90 4 auto - - -\n", 5, "overlaps line 2");
    BAD("gpu X\n", 2, "named twice");
    BAD("gpu\n", 2, "needs the GPU's name");
    BAD("bf16 1 1 2 4 auto - - - \x01\n", 2, "unexpected byte 0x01");
    BAD("bf16 1 1 2 4 auto - - -\n\xc3\xa9\n", 3, "unexpected byte 0xc3");
#undef BAD
    expect_error("# c\nbf16 1 1 2 4 auto - - -\n", 2, "no 'gpu' line");
    /* a NUL byte in the text is an error too, not the end */
    const char nul[] = "gpu X\nbf16 1 1 2 4 auto - - -\n\0\n";
    mg_dispatch_free(&tab);
    cr_assert_eq(mg_dispatch_parse(nul, sizeof nul - 1, "t.tsv", &tab, err, sizeof err), -1);
    cr_assert(strncmp(err, "t.tsv:3: unexpected byte 0x00", 29) == 0, "%s", err);
    cr_assert_eq(mg_dispatch_parse("x", 1, NULL, &tab, NULL, 0), -1, "no file name and no err buffer: still -1");
}

/* A table for a GPU that does not exist, loaded at run time: auto takes the row's kernel (not the registry's pick)
 * and, per batch size, the row's options where the user left them at auto. */
Test(dispatch, auto_follows_the_table) {
    const char *text = "gpu Fake GPU 9000\n"
                       "bf16 1 1 64 mma_sync tiles=mid,streamk=off - - -\n"
                       "bf16 1 65 128 wgmma_ws tiles=small 1.1 8192 8192\n";
    cr_assert_eq(mg_dispatch_load_text(text, strlen(text), "fake.tsv"), MG_OK, "%s", mg_last_error());
    mg_dispatch_table t;
    mg_dispatch_copy("Fake GPU 9000", MG_PREC_BF16, 1, &t);
    cr_assert_eq(t.nrows, 2);
    cr_assert_str_eq(t.file, "fake.tsv");
    const mg_kernel *mma = by_name("mma_sync"), *ws = by_name("wgmma_ws");
    mg_problem p = {32, 8192, 8192, 1, MG_PREC_BF16, MG_ALIGN_X16 | MG_ALIGN_W16};
    const mg_dispatch_row *row = NULL;
    const mg_kernel *k = mg_dispatch_auto(&t, &p, 90, &row);
    cr_assert_eq(k, mma, "auto chose %s, the table says mma_sync", k ? k->name : "none");
    cr_assert_eq(row, &t.rows[0]);
    cr_assert_neq(mg_registry_auto(&p, 90), mma, "the registry's rule must differ, or this test proves nothing");
    char where[300];
    mg_dispatch_where(&t, row, where, sizeof where);
    cr_assert_str_eq(where, "fake.tsv:2");
    /* the options: the row's where the user left auto; what the user set wins */
    mg_options o = mg_options_default();
    cr_assert_eq(mg_dispatch_options(&t, mma, &p, &o), &t.rows[0]);
    cr_assert(o.tiles == MG_TILES_MID && o.streamk == MG_SWITCH_OFF && o.mixed_panels == MG_SWITCH_AUTO && o.splits == 0);
    o = mg_options_default();
    o.tiles = MG_TILES_MAIN;
    cr_assert_not_null(mg_dispatch_options(&t, mma, &p, &o));
    cr_assert(o.tiles == MG_TILES_MAIN && o.streamk == MG_SWITCH_OFF, "the user's tiles must win");
    /* per batch size: m = 100 has a row for wgmma_ws; a plan running mma_sync takes nothing from it */
    p.m = 100;
    o = mg_options_default();
    cr_assert_null(mg_dispatch_options(&t, mma, &p, &o));
    cr_assert(o.tiles == MG_TILES_AUTO && o.streamk == MG_SWITCH_AUTO, "a row naming another kernel changes nothing");
    cr_assert_eq(mg_dispatch_options(&t, ws, &p, &o), &t.rows[1]);
    cr_assert_eq(o.tiles, MG_TILES_SMALL);
    cr_assert_eq(mg_dispatch_auto(&t, &p, 90, NULL), ws);
    /* no row for m = 129, nor for max_dim 0: the registry's rule */
    p.m = 129;
    cr_assert_eq(mg_dispatch_auto(&t, &p, 90, &row), mg_registry_auto(&p, 90));
    cr_assert_null(row);
    mg_dispatch_free(&t);
    mg_dispatch_copy("Fake GPU 9000", MG_PREC_BF16, 0, &t);
    cr_assert_eq(t.nrows, 0);
    /* a loaded table replaces the compiled-in ones: the H200 has none now; NULL brings them back */
    mg_dispatch_copy("NVIDIA H200", MG_PREC_BF16, 1, &t);
    cr_assert_eq(t.nrows, 0);
    cr_assert_eq(mg_dispatch_load(NULL), MG_OK);
    mg_dispatch_copy("Fake GPU 9000", MG_PREC_BF16, 1, &t);
    cr_assert_eq(t.nrows, 0, "the loaded table is gone");
    int builtin_h200 = 0;
    for (int i = 0; i < mg_dispatch_builtin_count; i++) builtin_h200 |= mg_dispatch_names_gpu(&mg_dispatch_builtin[i], "NVIDIA H200");
    mg_dispatch_copy("NVIDIA H200", MG_PREC_BF16, 1, &t);
    cr_assert_eq(t.nrows > 0, builtin_h200, "the compiled-in H200 table is back");
    mg_dispatch_free(&t);
    mg_dispatch_free(&t);   /* twice is fine */
}

Test(dispatch, a_gpu_without_a_table_keeps_the_registry_rule) {
    const int ms[] = {1, 2, 3, 8, 9, 64, 300, 1024, 16384};
    for (int prec = 0; prec < MG_PREC_COUNT; prec++)
        for (int md = 0; md < 2; md++) {
            mg_dispatch_table t;
            mg_dispatch_copy("No Such GPU", prec, md, &t);
            cr_assert_eq(t.nrows, 0);
            for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++) {
                const mg_problem p = {ms[i], 8192, 8192, md, (mg_precision)prec, 3};
                const mg_dispatch_row *row = (const mg_dispatch_row *)&t;
                cr_assert_eq(mg_dispatch_auto(&t, &p, 90, &row), mg_registry_auto(&p, 90));
                cr_assert_null(row);
                mg_options o = mg_options_default(), d = o;
                cr_assert_null(mg_dispatch_options(&t, mg_registry_auto(&p, 90), &p, &o));
                cr_assert(memcmp(&o, &d, sizeof o) == 0);
            }
            mg_dispatch_free(&t);
        }
}

/* A row whose kernel is unknown, not built for the precision, needs a newer GPU, or does not support the problem
 * (K not whole 16-byte vectors: the table does not apply) leaves auto to the registry's rule. */
Test(dispatch, rows_the_kernel_cannot_run_fall_back) {
    const char *text = "gpu Fake\n"
                       "fp32 1 1 1 wgmma_ws auto - - -\n"        /* wgmma_ws does not claim fp32 */
                       "fp32 1 2 2 no_such_kernel auto - - -\n"
                       "fp32 1 3 3 999 auto - - -\n"
                       "fp32 1 4 4 1000000000 auto - - -\n"
                       "bf16 1 1 8 wgmma_ws tiles=main - - -\n"  /* sm_90 only */
                       "bf16 0 1 8 mma_sync auto - - -\n";
    cr_assert_eq(parse(text), 0, "%s", err);
    for (int m = 1; m <= 4; m++) {
        const mg_problem p = {m, 8192, 8192, 1, MG_PREC_FP32, 3};
        const mg_dispatch_row *row = NULL;
        cr_assert_not_null(mg_dispatch_row_for(&tab, MG_PREC_FP32, 1, m));
        cr_assert_eq(mg_dispatch_auto(&tab, &p, 90, &row), mg_registry_auto(&p, 90), "m = %d", m);
        cr_assert_null(row, "m = %d: the row must not be reported as used", m);
    }
    mg_problem p = {4, 8192, 8192, 1, MG_PREC_BF16, 3};
    cr_assert_eq(mg_dispatch_auto(&tab, &p, 90, NULL), by_name("wgmma_ws"), "sm_90 runs it");
    cr_assert_eq(mg_dispatch_auto(&tab, &p, 80, NULL), mg_registry_auto(&p, 80), "sm_80 does not");
    /* K = 8190 bf16 (16,380-byte rows): the measurements do not cover it, the rule decides (and no options) */
    p = (mg_problem){4, 8192, 8190, 0, MG_PREC_BF16, 3};
    cr_assert_eq(mg_dispatch_auto(&tab, &p, 90, NULL), mg_registry_auto(&p, 90));
    mg_options o = mg_options_default();
    cr_assert_null(mg_dispatch_options(&tab, by_name("mma_sync"), &p, &o));
    p.k = 8192;
    cr_assert_eq(mg_dispatch_auto(&tab, &p, 90, NULL), by_name("mma_sync"));
    mg_dispatch_free(&tab);
}

Test(dispatch, load_errors_change_nothing) {
    const char *good = "gpu Fake\nbf16 1 1 8 mma_sync auto - - -\n";
    cr_assert_eq(mg_dispatch_load_text(good, strlen(good), "good.tsv"), MG_OK);
    const char *bad = "gpu Fake\nbf16 1 1 8 mma_sync auto - -\n";
    cr_assert_eq(mg_dispatch_load_text(bad, strlen(bad), "bad.tsv"), MG_ERR_INVALID_ARG);
    cr_assert(strncmp(mg_last_error(), "bad.tsv:2: ", 11) == 0, "%s", mg_last_error());
    cr_assert_eq(mg_dispatch_load("/nonexistent/dir/table.tsv"), MG_ERR_INVALID_ARG);
    cr_assert(strstr(mg_last_error(), "/nonexistent/dir/table.tsv") != NULL, "%s", mg_last_error());
    mg_dispatch_table t;
    mg_dispatch_copy("Fake", MG_PREC_BF16, 1, &t);
    cr_assert_eq(t.nrows, 1, "the good table stays after failed loads");
    cr_assert_str_eq(t.file, "good.tsv");
    mg_dispatch_free(&t);
    /* an empty file names no GPU: auto follows the registry's rule everywhere */
    cr_assert_eq(mg_dispatch_load("/dev/null"), MG_OK, "%s", mg_last_error());
    mg_dispatch_copy("Fake", MG_PREC_BF16, 1, &t);
    cr_assert_eq(t.nrows, 0);
    mg_dispatch_copy("NVIDIA H200", MG_PREC_BF16, 1, &t);
    cr_assert_eq(t.nrows, 0);
    cr_assert_eq(mg_dispatch_load(NULL), MG_OK);
}

/* One row of a committed table at batch m: its kernel supports the problem, plans it, and the plan lies within the
 * bounds a plan of capacity cap (>= m) allocates, on a GPU of sms SMs. */
static void check_row_plan(const mg_dispatch_table *t, const mg_dispatch_row *r, int m, int cap, int sms) {
    const int n = r->n ? r->n : 8192, k = r->k ? r->k : 8192;
    const mg_problem p = {m, n, k, r->max_dim, (mg_precision)r->prec, MG_ALIGN_X16 | MG_ALIGN_W16};
    const mg_kernel *kern = mg_dispatch_kernel(r, &p, 90);
    cr_assert_not_null(kern, "%s:%d: kernel '%s' cannot run %s max_dim %d M=%d N=%d K=%d on sm_90: %s", t->file,
                       r->line, r->kernel, mg_precision_name(p.prec), p.max_dim, m, n, k, mg_last_error());
    mg_device dev = {0, 90, sms, ""};
    snprintf(dev.name, sizeof dev.name, "%s", t->gpus[0]);
    mg_problem pc = p;
    pc.m = cap;
    int rows = 0;
    size_t ws = 0;
    kern->ops->bounds(&pc, &dev, &rows, &ws);
    mg_options o = mg_options_default();
    mg_optset_fill_auto(&r->opt, &o);
    mg_launch_plan lp;
    memset(&lp, 0, sizeof lp);
    lp.p = p;
    const mg_status st = kern->ops->plan(&p, &dev, &o, &lp);
    cr_assert_eq(st, MG_OK, "%s:%d: %s M=%d (capacity %d, %d SMs): the plan fails: %s", t->file, r->line, kern->name, m,
                 cap, sms, mg_last_error());
    cr_assert(lp.partial_rows >= 1 && lp.partial_rows <= rows && lp.ws_bytes <= ws,
              "%s:%d: %s M=%d: %d partial rows, %zu workspace bytes; bounds at M=%d: %d, %zu", t->file, r->line,
              kern->name, m, lp.partial_rows, lp.ws_bytes, cap, rows, ws);
    if (lp.rem_chunks > 0)
        cr_assert(p.max_dim == 1 && lp.rem_cols >= 1 && lp.rem_cols <= 8 && lp.rem_chunks <= MG_REM_MAX_CHUNKS &&
                      lp.rem_offset + (size_t)lp.rem_chunks * lp.rem_cols * m * 4 <= lp.ws_bytes,
                  "%s:%d: the remainder columns lie outside the plan's workspace", t->file, r->line);
}

/* Every row of every compiled-in table (the committed tile_configs/dispatch/ files) is a valid launch plan for its
 * bucket: at m_lo and m_hi, for a plan of that capacity and for one of capacity m_hi serving m_lo, on 132 SMs (the
 * H200, H100 SXM) and 114 (H100 PCIe). */
Test(dispatch, committed_tables_are_valid_launch_plans) {
    int checked = 0;
    for (int i = 0; i < mg_dispatch_builtin_count; i++) {
        const mg_dispatch_table *t = &mg_dispatch_builtin[i];
        cr_assert_gt(t->ngpus, 0, "%s names no GPU", t->file);
        for (int j = 0; j < t->nrows; j++) {
            const mg_dispatch_row *r = &t->rows[j];
            const int hi = r->m_hi < (1 << 20) ? r->m_hi : (1 << 20);   /* 'max': a large batch stands for it */
            const int sms[] = {132, 114};
            for (int s = 0; s < 2; s++) {
                check_row_plan(t, r, r->m_lo, r->m_lo, sms[s]);
                check_row_plan(t, r, hi, hi, sms[s]);
                check_row_plan(t, r, r->m_lo, hi, sms[s]);
            }
            checked++;
        }
    }
    if (mg_dispatch_builtin_count == 0) cr_skip_test("no dispatch table is committed (tile_configs/dispatch/)");
    cr_assert_gt(checked, 0);
}

/* The compiled-in tables are exactly the committed files (a stale build/gen would show up here). */
Test(dispatch, committed_files_match_the_compiled_tables) {
    char root[1024], pattern[1100];
    mg_test_repo_root(root, sizeof root);
    if (!root[0]) cr_skip_test("cannot locate the repository's tile_configs/ from the working directory");
    snprintf(pattern, sizeof pattern, "%s/tile_configs/dispatch/*.tsv", root);
    glob_t g;
    memset(&g, 0, sizeof g);
    const int grc = glob(pattern, 0, NULL, &g);
    cr_assert(grc == 0 || grc == GLOB_NOMATCH);
    cr_assert_eq((int)g.gl_pathc, mg_dispatch_builtin_count, "%zu files, %d compiled-in tables", g.gl_pathc,
                 mg_dispatch_builtin_count);
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t len = 0;
        char *text = mg_test_slurp(g.gl_pathv[i], &len);
        cr_assert_not_null(text, "cannot read %s", g.gl_pathv[i]);
        mg_dispatch_table t;
        cr_assert_eq(mg_dispatch_parse(text, len, g.gl_pathv[i], &t, err, sizeof err), 0, "%s", err);
        free(text);
        const char *base = strrchr(g.gl_pathv[i], '/');
        const mg_dispatch_table *b = NULL;
        for (int j = 0; j < mg_dispatch_builtin_count; j++) {
            const char *bb = strrchr(mg_dispatch_builtin[j].file, '/');
            if (strcmp(bb ? bb : mg_dispatch_builtin[j].file, base) == 0) b = &mg_dispatch_builtin[j];
        }
        cr_assert_not_null(b, "%s is not compiled in", g.gl_pathv[i]);
        cr_assert(b->ngpus == t.ngpus && b->nrows == t.nrows, "%s differs from the compiled-in table", g.gl_pathv[i]);
        for (int j = 0; j < t.ngpus; j++) cr_assert_str_eq(b->gpus[j], t.gpus[j]);
        for (int j = 0; j < t.nrows; j++) {
            const mg_dispatch_row *x = &b->rows[j], *y = &t.rows[j];
            cr_assert(x->prec == y->prec && x->max_dim == y->max_dim && x->m_lo == y->m_lo && x->m_hi == y->m_hi &&
                          strcmp(x->kernel, y->kernel) == 0 && x->opt.set == y->opt.set &&
                          memcmp(x->opt.val, y->opt.val, sizeof x->opt.val) == 0 && x->line == y->line,
                      "%s:%d differs from the compiled-in table", g.gl_pathv[i], y->line);
        }
        mg_dispatch_free(&t);
    }
    globfree(&g);
}

#ifndef MG_GEN_DISPATCH_BIN
#define MG_GEN_DISPATCH_BIN "build/gen_dispatch"
#endif

static void write_file(const char *path, const char *text) {
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "cannot write %s", path);
    fputs(text, f);
    fclose(f);
}

/* tools/gen_dispatch end to end: a malformed table stops it with file:line, a GPU in two tables too, and a failed run
 * leaves no output; zero tables give an empty, compilable table. */
Test(dispatch, generator_reports_file_and_line) {
    FILE *f = fopen(MG_GEN_DISPATCH_BIN, "rb");
    if (!f) cr_skip_test("%s not found (run from the repository after make)", MG_GEN_DISPATCH_BIN);
    fclose(f);
    char dir[] = "/tmp/mg_gen_dispatch_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char a[300], b[300], out[300], cmd[2048], path[300];
    snprintf(a, sizeof a, "%s/a.tsv", dir);
    snprintf(b, sizeof b, "%s/b.tsv", dir);
    snprintf(out, sizeof out, "%s/o.c", dir);
    write_file(a, "gpu G\n# ok\nbf16 1 1 2 4 auto - - -\nbf16 1 2 3 4 auto - - -\n");
    snprintf(cmd, sizeof cmd, "'%s' %s %s 2> %s/err.txt", MG_GEN_DISPATCH_BIN, out, a, dir);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "gen_dispatch on a bad table: status %d", st);
    snprintf(path, sizeof path, "%s/err.txt", dir);
    size_t len = 0;
    char *msg = mg_test_slurp(path, &len), want[400];
    snprintf(want, sizeof want, "%s:4: bf16 max_dim 1 m 2..3 overlaps line 3", a);
    cr_assert(msg && strstr(msg, want), "gen_dispatch said: %.*s", (int)len, msg ? msg : "");
    free(msg);
    cr_assert_null(fopen(out, "r"), "a failed run must not leave an output");
    write_file(a, "gpu G\nbf16 1 1 2 4 auto - - -\n");
    write_file(b, "gpu H\ngpu G\n");
    snprintf(cmd, sizeof cmd, "'%s' %s %s %s 2> %s/err.txt", MG_GEN_DISPATCH_BIN, out, a, b, dir);
    st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "a GPU in two tables: status %d", st);
    msg = mg_test_slurp(path, &len);
    cr_assert(msg && strstr(msg, "gpu 'G' already has a table"), "gen_dispatch said: %.*s", (int)len, msg ? msg : "");
    free(msg);
    snprintf(cmd, sizeof cmd, "'%s' %s %s", MG_GEN_DISPATCH_BIN, out, a);
    cr_assert_eq(system(cmd), 0);
    msg = mg_test_slurp(out, &len);
    cr_assert(msg && strstr(msg, "mg_dispatch_builtin_count = 1;") && strstr(msg, ".kernel = \"4\""), "%.*s", (int)len,
              msg ? msg : "");
    free(msg);
    snprintf(cmd, sizeof cmd, "'%s' %s", MG_GEN_DISPATCH_BIN, out);
    cr_assert_eq(system(cmd), 0);
    msg = mg_test_slurp(out, &len);
    cr_assert(msg && strstr(msg, "mg_dispatch_builtin_count = 0;"), "%.*s", (int)len, msg ? msg : "");
    free(msg);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* ---- the KEY=VALUE options (src/optkeys.h) ---------------------------------------------------------------------- */

Test(dispatch, optkeys_name_what_the_library_names) {
    char b[32];
    for (int t = 0; t < MG_TILES_COUNT; t++) {
        mg_optkey_format_value(MG_OPTKEY_TILES, t, b, sizeof b);
        cr_assert_str_eq(b, mg_tiles_name((mg_tiles)t));
        cr_assert_eq(mg_optkey_value(MG_OPTKEY_TILES, b, strlen(b)), t);
    }
    const char *sw[] = {"auto", "off", "force"};
    for (int k = MG_OPTKEY_STREAMK; k <= MG_OPTKEY_REM_SPLIT; k++)
        for (int v = 0; v < 3; v++) cr_assert_eq(mg_optkey_value(k, sw[v], strlen(sw[v])), v);
    cr_assert_eq(mg_optkey_value(MG_OPTKEY_SPLITS, "auto", 4), 0);
    cr_assert_eq(mg_optkey_value(MG_OPTKEY_SPLITS, "1", 1), 1);
    cr_assert_eq(mg_optkey_value(MG_OPTKEY_SPLITS, "16", 2), MG_SPLITS_MAX);
    cr_assert_eq(mg_optkey_value(MG_OPTKEY_SPLITS, "0", 1), -1, "0 is written auto");
    cr_assert_eq(mg_optkey_value(MG_OPTKEY_SPLITS, "17", 2), -1);
    cr_assert_eq(mg_optkey_value(MG_OPTKEY_TILES, "1", 1), -1, "tiles takes names only");
    cr_assert_eq(mg_optkey_find("splits", 6), MG_OPTKEY_SPLITS);
    cr_assert_eq(mg_optkey_find("Tiles", 5), -1, "keys are lower case");
    for (int k = 0; k < MG_OPTKEY_COUNT; k++) cr_assert_eq(mg_optkey_find(mg_optkey_name(k), strlen(mg_optkey_name(k))), k);
    cr_assert_null(mg_optkey_name(MG_OPTKEY_COUNT));
    /* each key reads and writes its own field */
    for (int k = 0; k < MG_OPTKEY_COUNT; k++) {
        mg_options o = mg_options_default();
        mg_optkey_set(&o, k, 2);
        for (int j = 0; j < MG_OPTKEY_COUNT; j++) cr_assert_eq(mg_optkey_get(&o, j), j == k ? 2 : 0);
    }
}

Test(dispatch, optsets_parse_format_and_fill) {
    mg_optset s;
    char b[128];
    cr_assert_eq(mg_optset_parse("streamk=off,tiles=main,splits=4", 31, &s, err, sizeof err), 0, "%s", err);
    mg_optset_format(&s, b, sizeof b);
    cr_assert_str_eq(b, "tiles=main,streamk=off,splits=4", "the table's order");
    cr_assert_eq(mg_optset_parse("auto", 4, &s, err, sizeof err), 0);
    cr_assert_eq(s.set, 0u);
    mg_optset_format(&s, b, sizeof b);
    cr_assert_str_eq(b, "auto");
    const char *bad[] = {"", "tiles", "tiles=", "=main", "tiles=main,,streamk=off", "tiles=main;streamk=off", "a=b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_assert_eq(mg_optset_parse(bad[i], strlen(bad[i]), &s, err, sizeof err), -1, "'%s' parsed", bad[i]);
    /* fill: only the fields left at auto; apply: every field the set names */
    cr_assert_eq(mg_optset_parse("tiles=main,streamk=off,splits=4", 31, &s, err, sizeof err), 0);
    mg_options o = mg_options_default();
    o.tiles = MG_TILES_MID;
    cr_assert_eq(mg_optset_fill_auto(&s, &o), (1u << MG_OPTKEY_STREAMK) | (1u << MG_OPTKEY_SPLITS));
    cr_assert(o.tiles == MG_TILES_MID && o.streamk == MG_SWITCH_OFF && o.splits == 4 && o.pdl == 1);
    mg_optset_apply(&s, &o);
    cr_assert(o.tiles == MG_TILES_MAIN);
    mg_optset of;
    mg_optset_of(&o, &of);
    cr_assert(of.set == s.set && memcmp(of.val, s.val, sizeof s.val) == 0);
    /* a short buffer: truncated, NUL-terminated, the full length returned */
    cr_assert_eq(mg_optset_format(&s, b, 8), (int)strlen("tiles=main,streamk=off,splits=4"));
    cr_assert_str_eq(b, "tiles=m");
}

/* ---- on a GPU: plans made through the public API follow a table for this GPU ---------------------------------- */

/* describe(m) of an explicit kernel-id plan of capacity cap with options o, for comparison. */
static void explicit_describe(const mg_plan_desc *d0, int id, const mg_options *o, int64_t m, char *buf, size_t n) {
    mg_plan_desc d = *d0;
    d.kernel = id;
    mg_plan *pl = NULL;
    MG_TEST_OK(mg_plan_create(&pl, &d));
    MG_TEST_OK(mg_plan_set_options(pl, o));
    MG_TEST_OK(mg_plan_describe(pl, m, buf, n));
    mg_plan_destroy(pl);
}

Test(gpu_dispatch, auto_plans_follow_a_table_for_this_gpu) {
    MG_TEST_NEED_GPU();
    if (mg_test_sm() != 90) cr_skip_test("the kernels of the table need sm_90a");
    struct cudaDeviceProp prop;
    MG_TEST_CUDA(cudaGetDeviceProperties(&prop, 0));
    char text[1024];
    snprintf(text, sizeof text,
             "gpu %s\n"
             "bf16 1 1 64 mma_sync auto - - -\n"
             "bf16 1 65 256 wgmma_ws tiles=small - - -\n"
             "bf16 1 257 512 wgmma_ws tiles=mid,streamk=off - - -\n"
             "bf16 0 65 256 wgmma_ws tiles=small - - -\n", prop.name);
    MG_TEST_OK(mg_dispatch_load_text(text, strlen(text), "gpu.tsv"));
    mg_plan_desc d = mg_plan_desc_default();
    d.n = 1024;
    d.k = 1024;
    d.precision = MG_PREC_BF16;
    d.shortcut = 0;
    /* the kernel: the row for the plan's M */
    d.m = 32;
    mg_plan *small = NULL;
    MG_TEST_OK(mg_plan_create(&small, &d));
    cr_assert_str_eq(mg_plan_kernel_name(small), "mma_sync");
    char where[300];
    mg_plan_dispatch_where(small, 32, where, sizeof where);
    cr_assert_str_eq(where, "gpu.tsv:2");
    mg_plan_destroy(small);
    d.m = 512;
    mg_plan *pl = NULL;
    MG_TEST_OK(mg_plan_create(&pl, &d));
    cr_assert_str_eq(mg_plan_kernel_name(pl), "wgmma_ws");
    /* the options: the row for each batch m, as an explicit kernel 4 plan with those options makes it */
    char got[400], want[400];
    mg_options o = mg_options_default();
    MG_TEST_OK(mg_plan_describe(pl, 512, got, sizeof got));
    o.tiles = MG_TILES_MID;
    o.streamk = MG_SWITCH_OFF;
    explicit_describe(&d, 4, &o, 512, want, sizeof want);
    cr_assert_str_eq(got, want);
    MG_TEST_OK(mg_plan_describe(pl, 100, got, sizeof got));
    o = mg_options_default();
    o.tiles = MG_TILES_SMALL;
    explicit_describe(&d, 4, &o, 100, want, sizeof want);
    cr_assert_str_eq(got, want);
    mg_plan_dispatch_where(pl, 100, where, sizeof where);
    cr_assert_str_eq(where, "gpu.tsv:3");
    mg_plan_dispatch_where(pl, 32, where, sizeof where);
    cr_assert_str_eq(where, "", "m = 32's row names mma_sync: this plan's kernel 4 runs its own policy");
    /* what the user sets wins over the row */
    o = mg_options_default();
    o.tiles = MG_TILES_MAIN;
    MG_TEST_OK(mg_plan_set_options(pl, &o));
    MG_TEST_OK(mg_plan_describe(pl, 512, got, sizeof got));
    o.streamk = MG_SWITCH_OFF;   /* the row's, for the field the user left at auto */
    explicit_describe(&d, 4, &o, 512, want, sizeof want);
    cr_assert_str_eq(got, want);
    mg_plan_destroy(pl);
    /* and it computes: a max_dim 0 auto plan (its N outputs all depend on the kernel's column maxima; max_dim 1's
     * are +0 for every finite row) gives the bits of the explicit plan its row names, at a batch of 100, both
     * outputs written over different fills (NaN, a finite sentinel) */
    const int64_t m = 100;
    d.max_dim = 0;
    mg_plan *p0 = NULL;
    MG_TEST_OK(mg_plan_create(&p0, &d));
    cr_assert_str_eq(mg_plan_kernel_name(p0), "wgmma_ws");
    mg_plan_dispatch_where(p0, m, where, sizeof where);
    cr_assert_str_eq(where, "gpu.tsv:5");
    void *x = NULL, *W = NULL, *b = NULL, *y0 = NULL, *y1 = NULL;
    cudaStream_t st = NULL;
    MG_TEST_CUDA(cudaStreamCreate(&st));
    MG_TEST_CUDA(cudaMalloc(&x, (size_t)d.m * d.k * 2));
    MG_TEST_CUDA(cudaMalloc(&W, (size_t)d.n * d.k * 2));
    MG_TEST_CUDA(cudaMalloc(&b, (size_t)d.n * 2));
    MG_TEST_CUDA(cudaMalloc(&y0, (size_t)d.n * 2));
    MG_TEST_CUDA(cudaMalloc(&y1, (size_t)d.n * 2));
    MG_TEST_OK(mg_fill_seedlike(x, W, b, d.m, d.n, d.k, MG_PREC_BF16, 5, st));
    MG_TEST_OK(mg_poison(y0, (size_t)d.n, MG_PREC_BF16, st));
    MG_TEST_CUDA(cudaMemsetAsync(y1, 0x3c, (size_t)d.n * 2, st));
    MG_TEST_OK(mg_set_weights(p0, W, b, st));
    MG_TEST_OK(mg_forward_rows(p0, m, x, y0, st));
    mg_plan_desc e = d;
    e.kernel = 4;
    mg_plan *ex = NULL;
    MG_TEST_OK(mg_plan_create(&ex, &e));
    o = mg_options_default();
    o.tiles = MG_TILES_SMALL;
    MG_TEST_OK(mg_plan_set_options(ex, &o));
    MG_TEST_OK(mg_set_weights(ex, W, b, st));
    MG_TEST_OK(mg_forward_rows(ex, m, x, y1, st));
    uint16_t h0[1024], h1[1024];
    cr_assert_eq(d.n, 1024);
    MG_TEST_CUDA(cudaMemcpyAsync(h0, y0, sizeof h0, cudaMemcpyDeviceToHost, st));
    MG_TEST_CUDA(cudaMemcpyAsync(h1, y1, sizeof h1, cudaMemcpyDeviceToHost, st));
    MG_TEST_CUDA(cudaStreamSynchronize(st));
    cr_assert(memcmp(h0, h1, sizeof h0) == 0, "the auto plan and kernel 4 with tiles=small differ");
    int distinct = 0;
    for (int j = 1; j < 1024 && !distinct; j++) distinct = h0[j] != h0[0];
    cr_assert(distinct, "every output is 0x%04x: the comparison shows nothing", h0[0]);
    mg_plan_destroy(ex);
    mg_plan_destroy(p0);
    cudaFree(x);
    cudaFree(W);
    cudaFree(b);
    cudaFree(y0);
    cudaFree(y1);
    cudaStreamDestroy(st);
    MG_TEST_OK(mg_dispatch_load(NULL));
}
