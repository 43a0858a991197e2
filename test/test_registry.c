/* test_registry.c (suite "registry"): the one kernel table (src/registry.c). CPU only: it reads the table and
 * the auto choice logic; mg_registry_auto's supports() callbacks are host code. */
#include "test_common.h"

#include "gemv_stream.h"
#include "mg_kernel.h"

#include <string.h>

#include <ctype.h>
#include <strings.h>

Test(registry, ids_and_names_unique) {
    const int n = mg_registry_count();
    cr_assert_gt(n, 0);
    for (int i = 0; i < n; i++) {
        const mg_kernel *a = mg_registry_at(i);
        cr_assert_not_null(a);
        cr_assert_geq(a->id, 0);
        cr_assert_not_null(a->name);
        cr_assert_gt(strlen(a->name), 0);
        for (const char *c = a->name; *c; c++)
            cr_assert(islower((unsigned char)*c) || isdigit((unsigned char)*c) || *c == '_',
                      "kernel name '%s' is not CLI-friendly", a->name);
        cr_assert(!isdigit((unsigned char)a->name[0]), "name '%s' would parse as a number", a->name);
        cr_assert_neq(strcasecmp(a->name, "auto"), 0, "'auto' is reserved");
        cr_assert_not_null(a->technique);
        cr_assert_not_null(a->tile_config);
        cr_assert_neq(a->precisions, 0u, "kernel %s supports no precision", a->name);
        cr_assert_eq(a->precisions & ~((1u << MG_PREC_COUNT) - 1), 0u, "kernel %s: unknown precision bits", a->name);
        for (int j = i + 1; j < n; j++) {
            const mg_kernel *b = mg_registry_at(j);
            cr_assert_neq(a->id, b->id, "id %d used twice", a->id);
            cr_assert_neq(strcasecmp(a->name, b->name), 0, "name %s used twice", a->name);
        }
        cr_assert_eq(mg_registry_find(a->id), a);
        cr_assert_eq(mg_registry_find_name(a->name), a);
    }
    cr_assert_null(mg_registry_at(-1));
    cr_assert_null(mg_registry_at(n));
}

Test(registry, every_row_is_a_test_parameter) {
    cr_assert_leq(mg_registry_count(), MG_TEST_MAX_KERNELS, "%d registry rows: the parameterized GPU suites take the "
                  "first %d only (raise MG_TEST_MAX_KERNELS in test/test_common.h)", mg_registry_count(),
                  MG_TEST_MAX_KERNELS);
    cr_assert_gt(mg_registry_count(), 0);
}

Test(registry, kernel_0_is_cublas_baseline) {
    const mg_kernel *k = mg_registry_find(0);
    cr_assert_not_null(k);
    cr_assert_str_eq(k->name, "cublas");
    cr_assert_eq(k->baseline, 1);
    /* Kernel 0 is always built. If this fails, the kernel objects were not linked: registry.c refers to them
     * weakly, and a weak reference does not pull a member out of a static archive (link with --whole-archive
     * or with the objects themselves). */
    cr_assert(mg_kernel_available(k), "kernel 0 (cublas) is not linked into this binary");
    /* cuBLAS is the reference point for every precision */
    for (int p = 0; p < MG_PREC_COUNT; p++) cr_assert(k->precisions & (1u << p), "cublas lacks precision %d", p);
}

Test(registry, every_precision_has_an_auto_kernel) {
    for (int p = 0; p < MG_PREC_COUNT; p++) {
        int found = 0;
        for (int i = 0; i < mg_registry_count(); i++) {
            const mg_kernel *k = mg_registry_at(i);
            if ((k->precisions & (1u << p)) && k->auto_rank > 0) found = 1;
        }
        cr_assert(found, "no auto-eligible kernel for precision %s", mg_precision_name((mg_precision)p));
    }
}

Test(registry, parse_number_name_auto) {
    int id = -7;
    cr_assert_eq(mg_registry_parse("auto", &id), MG_OK);
    cr_assert_eq(id, MG_KERNEL_AUTO);
    cr_assert_eq(mg_registry_parse("AUTO", &id), MG_OK);
    cr_assert_eq(id, MG_KERNEL_AUTO);
    cr_assert_eq(mg_registry_parse("0", &id), MG_OK);
    cr_assert_eq(id, 0);
    cr_assert_eq(mg_registry_parse("cublas", &id), MG_OK);
    cr_assert_eq(id, 0);
    for (int i = 0; i < mg_registry_count(); i++) {
        const mg_kernel *k = mg_registry_at(i);
        char num[16];
        snprintf(num, sizeof num, "%d", k->id);
        id = -7;
        cr_assert_eq(mg_registry_parse(num, &id), MG_OK, "%s", num);
        cr_assert_eq(id, k->id);
        id = -7;
        cr_assert_eq(mg_registry_parse(k->name, &id), MG_OK, "%s", k->name);
        cr_assert_eq(id, k->id);
    }
}

Test(registry, parse_unknown_fails) {
    int id = 12345;
    const char *bad[] = {"nope", "", "999", "-1", "1000001", "99999999999999999999", "3x", "cublas ", "4294967296"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_eq(mg_registry_parse(bad[i], &id), MG_ERR_KERNEL, "'%s' parsed", bad[i]);
        cr_assert_eq(id, 12345, "'%s' changed the id on failure", bad[i]);
        cr_assert_neq(strlen(mg_last_error()), 0);
    }
    cr_assert_eq(mg_registry_parse(NULL, &id), MG_ERR_KERNEL);
    cr_assert_null(mg_registry_find(-5));
    cr_assert_null(mg_registry_find_name("nope"));
    cr_assert_null(mg_registry_find_name(NULL));
}

/* What mg_registry_auto must return, computed independently from the table. */
static const mg_kernel *expected_auto(const mg_problem *p, int sm) {
    const mg_kernel *best = NULL;
    for (int i = 0; i < mg_registry_count(); i++) {
        const mg_kernel *k = mg_registry_at(i);
        if (!mg_kernel_available(k) || k->auto_rank <= 0 || !(k->precisions & (1u << p->prec)) || sm < k->min_sm)
            continue;
        if (k->auto_fits && !k->auto_fits(p)) continue;
        if (k->ops->supports && k->ops->supports(p, sm) != MG_OK) continue;
        if (!best || k->auto_rank > best->auto_rank) best = k;
    }
    return best;
}

Test(registry, auto_picks_only_kernels_that_claim_the_precision) {
    const int sms[] = {70, 80, 89, 90, 100};
    const int dims[] = {0, 1};
    const int ms[] = {1, 2, 3, 8, 9, 1024};   /* both sides of gemv_stream's auto_max_m limits */
    for (int p = 0; p < MG_PREC_COUNT; p++)
        for (size_t s = 0; s < sizeof sms / sizeof sms[0]; s++)
            for (size_t d = 0; d < 2; d++)
            for (size_t mi = 0; mi < sizeof ms / sizeof ms[0]; mi++) {
                mg_problem prob = {ms[mi], 8192, 8192, dims[d], (mg_precision)p, 0};
                const mg_kernel *k = mg_registry_auto(&prob, sms[s]);
                const mg_kernel *want = expected_auto(&prob, sms[s]);
                if (k) {
                    cr_assert(k->precisions & (1u << p), "auto chose %s for %s, which it does not claim", k->name,
                              mg_precision_name((mg_precision)p));
                    cr_assert_leq(k->min_sm, sms[s], "auto chose %s (sm_%d) on sm_%d", k->name, k->min_sm, sms[s]);
                    cr_assert_gt(k->auto_rank, 0, "auto chose %s, which has auto_rank 0", k->name);
                    cr_assert(mg_kernel_available(k), "auto chose %s, which is not built", k->name);
                }
                cr_assert_eq(k, want, "precision %d sm %d: auto chose %s, expected %s", p, sms[s],
                             k ? k->name : "none", want ? want->name : "none");
            }
}

/* The small-M kernel: auto takes it for M = 1 .. its limit in each precision on sm_90 (fp32 8, tf32 1, bf16 2: where
 * run 47 measured it ahead of the tiled kernels), never above (it re-streams W once per 8 rows). */
Test(registry, auto_takes_gemv_stream_up_to_its_limits) {
    const mg_kernel *g = mg_registry_find_name("gemv_stream");
    if (!g || !mg_kernel_available(g)) cr_skip_test("no gemv_stream kernel in this build");
    const int want[MG_PREC_COUNT] = {8, 1, 2};
    for (int p = 0; p < MG_PREC_COUNT; p++) {
        cr_assert_eq(mg_gemv_auto_max_m((mg_precision)p), want[p], "%s: auto limit %d",
                     mg_precision_name((mg_precision)p), mg_gemv_auto_max_m((mg_precision)p));
        cr_assert(g->auto_fits == mg_gemv_auto_fits, "kernel 7's registry row names its auto rule");
        for (int dim = 0; dim < 2; dim++)
            for (int m = 1; m <= 12; m++) {
                const mg_problem prob = {m, 8192, 8192, dim, (mg_precision)p, 0};
                const mg_kernel *k = mg_registry_auto(&prob, 90);
                cr_assert_not_null(k, "no auto kernel for M=%d", m);
                if (m <= want[p])
                    cr_assert_eq(k, g, "%s M=%d max_dim %d: auto chose %s, expected gemv_stream",
                                 mg_precision_name((mg_precision)p), m, dim, k->name);
                else
                    cr_assert_neq(k, g, "%s M=%d: auto chose gemv_stream above its limit",
                                  mg_precision_name((mg_precision)p), m);
            }
        /* rows that are not a multiple of 16 bytes (K = 8190: 16,380 bytes bf16, 32,760 fp32) go to the tiled kernels */
        const mg_problem odd = {1, 8192, 8190, 1, (mg_precision)p, 0};
        const mg_kernel *k = mg_registry_auto(&odd, 90);
        cr_assert(k && k != g, "%s M=1 K=8190: auto chose %s", mg_precision_name((mg_precision)p), k ? k->name : "none");
    }
}

/* Kernel 7's size checks name the size that is out of range and never overflow on the way (M and N near INT_MAX). */
Test(registry, gemv_stream_rejects_sizes_it_cannot_index) {
    const mg_kernel *g = mg_registry_find_name("gemv_stream");
    if (!g || !mg_kernel_available(g)) cr_skip_test("no gemv_stream kernel in this build");
    const mg_problem ok = {8, 8192, 8192, 1, MG_PREC_BF16, 0};
    cr_assert_eq(g->ops->supports(&ok, 90), MG_OK);
    const mg_problem big_m = {2147483647, 8, 8, 0, MG_PREC_FP32, 0};
    cr_assert_eq(g->ops->supports(&big_m, 90), MG_ERR_UNSUPPORTED);
    cr_assert(strstr(mg_last_error(), "M=2147483647") != NULL, "message: %s", mg_last_error());
    const mg_problem big_n = {1, 2147483640, 8, 1, MG_PREC_FP32, 0};
    cr_assert_eq(g->ops->supports(&big_n, 90), MG_ERR_UNSUPPORTED);
    cr_assert(strstr(mg_last_error(), "N=2147483640") != NULL, "message: %s", mg_last_error());
    const mg_device dev = {0, 90, 132, ""};
    int rows = 0;
    size_t ws = 0;
    g->ops->bounds(&big_n, &dev, &rows, &ws);
    cr_assert_gt(rows, 0, "bounds: the partial rows overflowed");
}

Test(registry, naive_is_never_auto) {
    /* a correctness baseline, not a contender */
    const mg_kernel *k = mg_registry_find_name("naive");
    if (!k) cr_skip_test("no naive kernel in this registry");
    cr_assert_eq(k->auto_rank, 0);
}

/* `make ncu` profiles the functions a row's device_fn names: every row needs a non-empty pattern, and the two
 * cuBLAS-built baselines must name cuBLAS's kernels, not a maxgemm function. */
Test(registry, every_row_names_its_device_functions) {
    for (int i = 0; i < mg_registry_count(); i++) {
        const mg_kernel *k = mg_registry_at(i);
        cr_assert(k->device_fn && k->device_fn[0], "kernel %d (%s) has no device_fn", k->id, k->name);
        if (k->baseline) cr_assert(strstr(k->device_fn, "sgemm") != NULL, "baseline %s: %s", k->name, k->device_fn);
    }
}
