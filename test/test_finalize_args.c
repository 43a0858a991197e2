/* test_finalize_args.c (suite "finalize_args"): the shared finalize's argument checks (kernels/finalize.cu), which
 * run on the host before any launch, so they are tested here without a GPU: bad input gets a clear error naming what
 * is wrong, never a launch. The pointers are never dereferenced on these paths. */
#include "test_common.h"

#include "mg_kernel.h"

static float dummy[4];

static void expect_invalid(mg_status s, const char *want) {
    mg_test_expect_status(s, MG_ERR_INVALID_ARG, "mg_finalize_rem", want);
}

Test(finalize_args, remainder_sums_only_for_max_dim_1) {
    expect_invalid(mg_finalize_rem(dummy, 1, 4, 0, MG_PREC_FP32, dummy, dummy, dummy, 8, 16, 1, NULL), "max_dim 0");
}

Test(finalize_args, remainder_sums_bounds) {
    expect_invalid(mg_finalize_rem(dummy, 1, 4, 1, MG_PREC_FP32, dummy, NULL, NULL, 8, 16, 1, NULL), "NULL pointer");
    expect_invalid(mg_finalize_rem(dummy, 1, 4, 1, MG_PREC_FP32, dummy, NULL, dummy, 0, 16, 1, NULL), "0 columns");
    expect_invalid(mg_finalize_rem(dummy, 1, 4, 1, MG_PREC_FP32, dummy, NULL, dummy, 9, 16, 1, NULL), "9 columns");
    expect_invalid(mg_finalize_rem(dummy, 1, 4, 1, MG_PREC_FP32, dummy, NULL, dummy, 8, MG_REM_MAX_CHUNKS + 1, 1, NULL),
                   "17 chunks");
    expect_invalid(mg_finalize_rem(dummy, 1, 4, 1, MG_PREC_FP32, dummy, NULL, dummy, 8, -1, 1, NULL), "-1 chunks");
}

Test(finalize_args, the_plain_checks_still_apply) {
    expect_invalid(mg_finalize(dummy, 1, -1, 1, MG_PREC_FP32, dummy, NULL, NULL), "negative length");
    expect_invalid(mg_finalize(dummy, 0, 4, 1, MG_PREC_FP32, dummy, NULL, NULL), "0 partial rows");
    expect_invalid(mg_finalize(NULL, 1, 4, 1, MG_PREC_FP32, dummy, NULL, NULL), "NULL partial");
    expect_invalid(mg_finalize(dummy, 1, 4, 0, MG_PREC_FP32, dummy, NULL, NULL), "needs scratch");
    /* an empty output is not an error, whatever else is passed */
    cr_expect_eq(mg_finalize_rem(NULL, 0, 0, 1, MG_PREC_FP32, NULL, NULL, NULL, 0, 0, 1, NULL), MG_OK);
}
