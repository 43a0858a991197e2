/* test_tile_config.c (suite "tile_config"): the .cfg parser (src/tile_config.c), the generated table and
 * the real tile_configs/NAME.cfg files. CPU only. The real files are found from the working directory
 * (make test runs from the repository root) or from this source file's location. */
#include "test_common.h"

#include "mg_kernel.h"
#include "tile_config.h"

#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#define MAXR 64
static mg_tile_config rows[MAXR];
static int count;
static char err[512];

static int parse_str(const char *text) {
    memset(err, 0, sizeof err);
    return mg_tile_parse(text, strlen(text), "t.cfg", rows, MAXR, &count, err, sizeof err);
}

/* The text must be rejected with a message that starts with "t.cfg:LINE: " and mentions want. */
static void expect_error(const char *text, int line, const char *want) {
    mg_test_expect_rejected(parse_str(text), text, err, "t.cfg", line, want);
}

Test(tile_config, valid_file) {
    const char *text = "# tiles for a family\n"
                       "\n"
                       "wgmma_tma bf16 128 256 64 4 2 1\n"
                       "   \t  # indented comment\n"
                       "wgmma_tma\ttf32\t128 128 32 4 2 1   # trailing comment\r\n"
                       "mma_sync2 fp32 8 512 256 16 16 4\n"
                       "k_1 bf16 512 8 8 1 1 1"; /* no final newline */
    cr_assert_eq(parse_str(text), 0, "%s", err);
    cr_assert_eq(count, 4);
    cr_assert_str_eq(rows[0].kernel, "wgmma_tma");
    cr_assert_str_eq(rows[0].precision, "bf16");
    cr_assert_eq(rows[0].bm, 128);
    cr_assert_eq(rows[0].bn, 256);
    cr_assert_eq(rows[0].bk, 64);
    cr_assert_eq(rows[0].stages, 4);
    cr_assert_eq(rows[0].consumers, 2);
    cr_assert_eq(rows[0].cluster, 1);
    cr_assert_str_eq(rows[1].precision, "tf32");
    cr_assert_eq(rows[1].bn, 128);
    cr_assert_eq(rows[1].cluster, 1);
    cr_assert_str_eq(rows[2].kernel, "mma_sync2");
    cr_assert_eq(rows[2].bm, 8);
    cr_assert_eq(rows[2].bn, 512);
    cr_assert_eq(rows[2].bk, 256);
    cr_assert_eq(rows[2].stages, 16);
    cr_assert_eq(rows[2].consumers, 16);
    cr_assert_eq(rows[2].cluster, 4);
    cr_assert_str_eq(rows[3].kernel, "k_1");
    cr_assert_eq(rows[3].bm, 512);
    cr_assert_eq(rows[3].bk, 8);
}

Test(tile_config, empty_and_comment_only) {
    cr_assert_eq(parse_str(""), 0);
    cr_assert_eq(count, 0);
    cr_assert_eq(parse_str("# nothing\n\n   \n# \xff\x01 anything goes in a comment\n"), 0, "%s", err);
    cr_assert_eq(count, 0);
}

Test(tile_config, field_count) {
    expect_error("a bf16 8 8 8 1 1\n", 1, "expected 8 fields");
    expect_error("# c\na bf16 8 8 8 1 1 1 1\n", 2, "too many fields");
    expect_error("a\n", 1, "found 1");
}

Test(tile_config, bad_kernel_names) {
    expect_error("Wgmma bf16 8 8 8 1 1 1\n", 1, "kernel name 'Wgmma'");
    expect_error("\nwg-mma bf16 8 8 8 1 1 1\n", 2, "may only hold");
    expect_error("a.b bf16 8 8 8 1 1 1\n", 1, "kernel name");
    expect_error("abcdefghijklmnopqrstuvwxyz012345 bf16 8 8 8 1 1 1\n", 1, "longer than 31");
    /* 31 characters is the limit and fits kernel[32] */
    cr_assert_eq(parse_str("abcdefghijklmnopqrstuvwxyz01234 bf16 8 8 8 1 1 1\n"), 0, "%s", err);
    cr_assert_str_eq(rows[0].kernel, "abcdefghijklmnopqrstuvwxyz01234");
}

Test(tile_config, bad_precision) {
    expect_error("a fp16 8 8 8 1 1 1\n", 1, "precision 'fp16'");
    expect_error("a BF16 8 8 8 1 1 1\n", 1, "precision 'BF16'");
    expect_error("a bf16x 8 8 8 1 1 1\n", 1, "not one of fp32, tf32, bf16");
}

Test(tile_config, bad_numbers) {
    expect_error("a bf16 12a 8 8 1 1 1\n", 1, "bm '12a' is not a positive decimal integer");
    expect_error("a bf16 8 -8 8 1 1 1\n", 1, "bn '-8'");
    expect_error("a bf16 8 8 +8 1 1 1\n", 1, "bk '+8'");
    expect_error("a bf16 8 8 0x10 1 1 1\n", 1, "bk '0x10'");
    expect_error("a bf16 8 8 8 1.5 1 1\n", 1, "stages '1.5'");
    expect_error("a bf16 8 8 8 1 1 99999999999999999999999999\n", 1, "cluster");
}

Test(tile_config, out_of_range) {
    expect_error("a bf16 7 8 8 1 1 1\n", 1, "bm '7' is out of range [8, 512]");
    expect_error("a bf16 513 8 8 1 1 1\n", 1, "bm '513' is out of range");
    expect_error("a bf16 8 0 8 1 1 1\n", 1, "bn '0' is out of range");
    expect_error("a bf16 8 1024 8 1 1 1\n", 1, "bn '1024'");
    expect_error("a bf16 8 8 257 1 1 1\n", 1, "bk '257' is out of range [8, 256]");
    expect_error("a bf16 8 8 4 1 1 1\n", 1, "bk '4'");
    expect_error("a bf16 8 8 8 0 1 1\n", 1, "stages '0' is out of range [1, 16]");
    expect_error("a bf16 8 8 8 17 1 1\n", 1, "stages '17'");
    expect_error("a bf16 8 8 8 1 0 1\n", 1, "consumers '0'");
    expect_error("a bf16 8 8 8 1 17 1\n", 1, "consumers '17' is out of range [1, 16]");
    expect_error("a bf16 8 8 8 1 1 0\n", 1, "cluster '0'");
    expect_error("a bf16 8 8 8 1 1 5\n", 1, "cluster '5' is out of range [1, 4]");
    expect_error("a bf16 8 8 8 1 1 4294967297\n", 1, "cluster '4294967297' is out of range");
}

Test(tile_config, duplicates_rejected) {
    expect_error("a bf16 8 8 8 1 1 1\nb bf16 8 8 8 1 1 1\n# x\na bf16 16 16 16 2 2 2\n", 4, "duplicate");
    cr_assert(strstr(err, "'a'") && strstr(err, "'bf16'"), "%s", err);
    cr_assert_eq(count, 2, "rows before the bad line are kept");
    /* same kernel, other precision: fine */
    cr_assert_eq(parse_str("a bf16 8 8 8 1 1 1\na tf32 8 8 8 1 1 1\na fp32 8 8 8 1 1 1\n"), 0, "%s", err);
    cr_assert_eq(count, 3);
}

Test(tile_config, duplicates_across_files_with_append) {
    const char *f1 = "a bf16 8 8 8 1 1 1\n";
    const char *f2 = "b tf32 8 8 8 1 1 1\n\na bf16 8 8 8 1 1 1\n";
    count = 0;
    cr_assert_eq(mg_tile_parse_append(f1, strlen(f1), "one.cfg", rows, MAXR, &count, err, sizeof err), 0);
    cr_assert_eq(mg_tile_parse_append(f2, strlen(f2), "two.cfg", rows, MAXR, &count, err, sizeof err), -1);
    cr_assert(strncmp(err, "two.cfg:3: duplicate", 20) == 0, "%s", err);
}

Test(tile_config, bytes_outside_ascii) {
    static const char nul[] = "a bf16 8 8 8 1 1 1\nb bf16 8 8\0 8 1 1 1\n";
    memset(err, 0, sizeof err);
    cr_assert_eq(mg_tile_parse(nul, sizeof nul - 1, "t.cfg", rows, MAXR, &count, err, sizeof err), -1);
    cr_assert(strncmp(err, "t.cfg:2: unexpected byte 0x00", 29) == 0, "%s", err);
    expect_error("a bf16 8 8 8 1 1 1 \xc3\xa9\n", 1, "unexpected byte 0xc3");
    expect_error("a\x01 bf16 8 8 8 1 1 1\n", 1, "unexpected byte 0x01");
}

Test(tile_config, respects_len_and_capacity) {
    /* only the first len bytes count: the text need not be NUL-terminated */
    const char *text = "a bf16 8 8 8 1 1 1\nGARBAGE";
    cr_assert_eq(mg_tile_parse(text, 19, "t.cfg", rows, MAXR, &count, err, sizeof err), 0, "%s", err);
    cr_assert_eq(count, 1);
    /* a row cut short by len is a short row */
    cr_assert_eq(mg_tile_parse(text, 12, "t.cfg", rows, MAXR, &count, err, sizeof err), -1);
    cr_assert(strstr(err, "t.cfg:1: expected 8 fields"), "%s", err);
    /* capacity */
    const char *two = "a bf16 8 8 8 1 1 1\nb bf16 8 8 8 1 1 1\n";
    cr_assert_eq(mg_tile_parse(two, strlen(two), "t.cfg", rows, 1, &count, err, sizeof err), -1);
    cr_assert(strstr(err, "t.cfg:2: too many rows"), "%s", err);
    cr_assert_eq(count, 1);
}

Test(tile_config, default_filename_and_null_err) {
    const char *bad = "x\n";
    cr_assert_eq(mg_tile_parse(bad, 2, NULL, rows, MAXR, &count, err, sizeof err), -1);
    cr_assert(strncmp(err, "<input>:1: ", 11) == 0, "%s", err);
    cr_assert_eq(mg_tile_parse(bad, 2, "t.cfg", rows, MAXR, &count, NULL, 0), -1);
}

/* Parses the .cfg file at path, appending to out[0 .. *count) (duplicates checked against those rows too); asserts it
 * reads and parses. */
static void parse_file(const char *path, mg_tile_config *out, int max, int *count) {
    size_t len = 0;
    char *text = mg_test_slurp(path, &len);
    cr_assert_not_null(text, "cannot read %s", path);
    const int rc = mg_tile_parse_append(text, len, path, out, max, count, err, sizeof err);
    free(text);
    cr_assert_eq(rc, 0, "%s", err);
}

/* The repository's files matching rel (a glob pattern under the repository root) into *g (globfree it); skips the
 * test where the repository cannot be found from the working directory. root gets the root (at least 1024 bytes). */
static void glob_repo(const char *rel, char *root, glob_t *g) {
    char pattern[1100];
    mg_test_repo_root(root, 1024);
    if (!root[0]) cr_skip_test("cannot locate the repository's tile_configs/ from the working directory");
    snprintf(pattern, sizeof pattern, "%s/%s", root, rel);
    memset(g, 0, sizeof *g);
    const int grc = glob(pattern, 0, NULL, g);
    cr_assert(grc == 0 || grc == GLOB_NOMATCH, "glob failed");
}

Test(tile_config, real_files_parse_and_match_generated_table) {
    char root[1024];
    glob_t g;
    glob_repo("tile_configs/*.cfg", root, &g);
    static mg_tile_config all[4096];
    int total = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) parse_file(g.gl_pathv[i], all, 4096, &total);
    globfree(&g);
    /* The linked table is exactly what the files say (a stale build/gen would show up here). */
    cr_assert_eq(mg_tile_config_count, total, "generated table has %d rows, the files %d", mg_tile_config_count,
                 total);
    for (int i = 0; i < total; i++) {
        const mg_tile_config *t = mg_tile_find(all[i].kernel, all[i].precision);
        cr_assert_not_null(t, "%s %s missing from the generated table", all[i].kernel, all[i].precision);
        cr_assert(t->bm == all[i].bm && t->bn == all[i].bn && t->bk == all[i].bk && t->stages == all[i].stages &&
                      t->consumers == all[i].consumers && t->cluster == all[i].cluster,
                  "%s %s differs from the generated table", all[i].kernel, all[i].precision);
    }
}

Test(tile_config, find_absent) {
    cr_assert_null(mg_tile_find("no_such_kernel", "bf16"));
    cr_assert_null(mg_tile_find(NULL, "bf16"));
    cr_assert_null(mg_tile_find("wgmma_tma", NULL));
    for (int i = 0; i < mg_tile_config_count; i++) {
        cr_assert_null(mg_tile_find(mg_tile_configs[i].kernel, "fp16"));
        cr_assert_eq(mg_tile_find(mg_tile_configs[i].kernel, mg_tile_configs[i].precision), &mg_tile_configs[i]);
    }
}

/* The generator make built beside this test binary (the Makefile passes $(BUILD)/gen_tiles, relative to the
 * repository root). */
#ifndef MG_GEN_TILES_BIN
#define MG_GEN_TILES_BIN "build/gen_tiles"
#endif

/* tools/gen_tiles end to end. */
Test(tile_config, generator_reports_file_and_line) {
    char root[1024];
    mg_test_repo_root(root, sizeof root);
    char gen[1200];
    snprintf(gen, sizeof gen, "%s/%s", root, MG_GEN_TILES_BIN);
    FILE *f = root[0] ? fopen(gen, "rb") : NULL;
    if (!f) cr_skip_test("%s not found (not run from the repository after make)", gen);
    fclose(f);
    char dir[] = "/tmp/mg_gen_tiles_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256], cmd[4096];
    snprintf(path, sizeof path, "%s/bad.cfg", dir);
    f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("# ok\nk bf16 8 8 8 1 1 1\nk bf16 9 8 8 1 1 1\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s' %s/o.h %s/o.c %s 2> %s/err.txt", gen, dir, dir, path, dir);
    int st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 1, "gen_tiles on a bad file: status %d", st);
    snprintf(path, sizeof path, "%s/err.txt", dir);
    size_t len = 0;
    char *msg = mg_test_slurp(path, &len);
    cr_assert_not_null(msg);
    char want[300];
    snprintf(want, sizeof want, "%s/bad.cfg:3: duplicate", dir);
    cr_assert(len > 0 && strstr(msg, want) != NULL, "gen_tiles said: %.*s", (int)len, msg);
    free(msg);
    snprintf(path, sizeof path, "%s/o.h", dir);
    cr_assert_null(fopen(path, "r"), "a failed run must not leave an output");
    /* zero inputs: an empty, compilable table */
    snprintf(cmd, sizeof cmd, "'%s' %s/o.h %s/o.c", gen, dir, dir);
    st = system(cmd);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    snprintf(path, sizeof path, "%s/o.c", dir);
    msg = mg_test_slurp(path, &len);
    cr_assert_not_null(msg);
    cr_assert(strstr(msg, "mg_tile_config_count = 0;"), "%.*s", (int)len, msg);
    free(msg);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}

/* Every registry row that names a tile config has a row for each precision it claims: the registry, the .cfg
 * files and the kernels' MG_TILE_* macros cannot drift apart silently. */
Test(tile_config, registry_tile_configs_exist) {
    for (int i = 0; i < mg_registry_count(); i++) {
        const mg_kernel *k = mg_registry_at(i);
        if (strcmp(k->tile_config, "-") == 0) continue;
        for (int p = 0; p < MG_PREC_COUNT; p++) {
            if (!(k->precisions & (1u << p))) continue;
            const char *prec = mg_precision_name((mg_precision)p);
            cr_assert_not_null(mg_tile_find(k->tile_config, prec),
                               "kernel %d (%s) names tile config '%s' but tile_configs/ has no '%s %s' row", k->id,
                               k->name, k->tile_config, k->tile_config, prec);
        }
    }
}

/* Tuning variants are overlays (tune/NAME.overlay: only the rows they change, applied on top of tile_configs/ by
 * tools/tune_overlay.sh): every overlay applies (each row matches a base row, values parse), and a row that matches
 * nothing is refused, so a variant cannot silently go stale. */
static int run_capture(const char *cmd, char *out, size_t n) {
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "popen(%s) failed", cmd);
    size_t len = 0, got;
    while (len + 1 < n && (got = fread(out + len, 1, n - 1 - len, p)) > 0) len += got;
    out[len] = '\0';
    char sink[256];
    while (fread(sink, 1, sizeof sink, p) > 0) {}
    const int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(tile_config, tune_overlays_apply_to_tile_configs) {
    char root[1024];
    glob_t g;
    glob_repo("tune/*.overlay", root, &g);
    const size_t n = g.gl_pathc;
    globfree(&g);
    cr_assert(n > 0, "no tune/*.overlay found under %s", root);
    char gen[1200], cmd[4096], out[8192];
    snprintf(gen, sizeof gen, "%s/%s", root, MG_GEN_TILES_BIN);
    FILE *f = fopen(gen, "rb");
    if (f) fclose(f);
    snprintf(cmd, sizeof cmd, "cd '%s' && tools/tune_overlay.sh %s%s --check 2>&1", root,
             f ? "--gen " : "", f ? MG_GEN_TILES_BIN : "");
    const int rc = run_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 0, "%s: exit %d:\n%s", cmd, rc, out);
}

Test(tile_config, tune_overlay_rejects_unmatched_row) {
    char root[1024];
    mg_test_repo_root(root, sizeof root);
    if (!root[0]) cr_skip_test("cannot locate the repository's tile_configs/ from the working directory");
    char dir[] = "/tmp/mg_overlay_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256], cmd[4096], out[4096];
    snprintf(path, sizeof path, "%s/stale.overlay", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("# a variant of a row that tile_configs/ no longer has\nkernels: 4\nno_such_family bf16 128 256 64 4 2 1\n", f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "'%s/tools/tune_overlay.sh' --check '%s' 2>&1", root, path);
    int rc = run_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 1, "--check accepted a row that matches nothing: exit %d:\n%s", rc, out);
    char want[300];
    snprintf(want, sizeof want, "%s:3: row 'no_such_family bf16' matches no row", path);
    cr_expect(strstr(out, want) != NULL, "--check said:\n%s", out);
    snprintf(cmd, sizeof cmd, "'%s/tools/tune_overlay.sh' '%s' '%s/tiles' 2>&1", root, path, dir);
    rc = run_capture(cmd, out, sizeof out);
    cr_expect_eq(rc, 1, "the merge applied a row that matches nothing: exit %d:\n%s", rc, out);
    snprintf(path, sizeof path, "%s/tiles", dir);
    FILE *t = fopen(path, "r");
    cr_expect_null(t, "a failed merge must not write its output directory");
    if (t) fclose(t);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
}
