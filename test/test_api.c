/* test_api.c (suite "api"): the public API's checks that come before any device is touched (CPU only): a plan
 * descriptor's sizes, max_dim and precision, each refused with the status and a message naming what is wrong. The
 * pointer and device checks of mg_set_weights / mg_forward_rows need a device: gpu_api in test_gpu.c. */
#include "test_common.h"

#include <string.h>

static void expect_refused(mg_plan_desc d, mg_status want, const char *words) {
    mg_plan *pl = (mg_plan *)0x1;
    char what[160];
    snprintf(what, sizeof what, "mg_plan_create M=%lld N=%lld K=%lld max_dim %d precision %d", (long long)d.m,
             (long long)d.n, (long long)d.k, d.max_dim, (int)d.precision);
    mg_test_expect_status(mg_plan_create(&pl, &d), want, what, words);
    cr_expect_null(pl, "%s: a refused plan is NULL", what);
}

Test(api, empty_reductions_and_empty_outputs) {
    mg_plan_desc d = mg_plan_desc_default();
    /* torch raises for these: the max runs over an empty dim */
    d.m = 0; d.max_dim = 0;
    expect_refused(d, MG_ERR_SHAPE, "no elements");
    d.m = 4; d.n = 0; d.max_dim = -1;
    expect_refused(d, MG_ERR_SHAPE, "no elements");
    /* torch gives an empty output for these (0 x 1, 1 x 0): the message says so, not "no elements" */
    d.m = 0; d.n = 8; d.max_dim = 1;
    expect_refused(d, MG_ERR_SHAPE, "0 x 1");
    d.m = 4; d.n = 0; d.max_dim = -2;
    expect_refused(d, MG_ERR_SHAPE, "1 x 0");
}

Test(api, descriptor_fields_out_of_range) {
    mg_plan_desc d = mg_plan_desc_default();
    d.max_dim = 2;
    expect_refused(d, MG_ERR_MAX_DIM, "max_dim 2");
    d = mg_plan_desc_default();
    d.precision = (mg_precision)3;
    expect_refused(d, MG_ERR_PRECISION, "precision 3");
    d = mg_plan_desc_default();
    d.k = -1;
    expect_refused(d, MG_ERR_SHAPE, "K=-1");
    d = mg_plan_desc_default();
    d.n = 1ll << 31;
    expect_refused(d, MG_ERR_SHAPE, "2^31-1");
    d = mg_plan_desc_default();
    d.kernel = 99;   /* named as unknown before any device is looked for (this machine may have none) */
    expect_refused(d, MG_ERR_KERNEL, "unknown kernel 99");
    d = mg_plan_desc_default();
    d.shortcut = 7;
    expect_refused(d, MG_ERR_INVALID_ARG, "shortcut = 7");
    mg_plan *pl = NULL;
    cr_expect_eq(mg_plan_create(&pl, NULL), MG_ERR_INVALID_ARG);
    cr_expect_eq(mg_plan_create(NULL, &d), MG_ERR_INVALID_ARG);
}

/* The Python binding mirrors these structs field for field (python/maxgemm_torch/_library.py, PlanDesc and Options)
 * and refuses a library whose sizes differ from its own; a field added here must be added there too. */
Test(api, struct_sizes_the_python_binding_mirrors) {
    cr_expect_eq(mg_plan_desc_size(), sizeof(mg_plan_desc));
    cr_expect_eq(mg_options_size(), sizeof(mg_options));
    cr_expect_eq(mg_plan_desc_size(), 40, "mg_plan_desc changed: update PlanDesc in python/maxgemm_torch/_library.py");
    cr_expect_eq(mg_options_size(), 13 * sizeof(int), "mg_options changed: update OPTION_FIELDS, Options and the "
                 "option tables in python/maxgemm_torch/_library.py");
}

Test(api, calls_on_a_null_plan) {
    cr_expect_eq(mg_set_weights(NULL, NULL, NULL, NULL), MG_ERR_INVALID_ARG);
    cr_expect_eq(mg_forward(NULL, NULL, NULL, NULL), MG_ERR_INVALID_ARG);
    cr_expect_eq(mg_forward_rows(NULL, 1, NULL, NULL, NULL), MG_ERR_INVALID_ARG);
    cr_expect(strstr(mg_last_error(), "plan is NULL") != NULL, "%s", mg_last_error());
}
