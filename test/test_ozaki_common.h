/* test_ozaki_common.h: inputs and W statistics the CPU suites of the int8 layer share (test/test_ozaki.c, kernels 9
 * and 10; test/test_gemv_int8w.c, kernel 11), through the CPU reference of the slicing (src/ozaki.c). */
#ifndef MG_TEST_OZAKI_COMMON_H
#define MG_TEST_OZAKI_COMMON_H

#include "test_common.h"

#include <stdlib.h>

#include "ozaki.h"

/* W's guard maxima from a dense n x k W, through the CPU reference and the reduction prepare runs; returns the rows
 * holding a NaN or inf (left out of the maxima). */
static int64_t oz_wstats_of(const float *W, int64_t n, int64_t k, mg_oz_wstats *out) {
    float *u = malloc((size_t)(n + 1) * 4), *am = malloc((size_t)(n + 1) * 4);
    double *n2 = malloc((size_t)(n + 1) * sizeof(double));
    int *nf = malloc((size_t)(n + 1) * sizeof(int));
    cr_assert(u && am && n2 && nf);
    mg_oz_slice_args a = {0};
    a.src = W; a.rows = n; a.cols = k; a.u = u; a.amax = am; a.n2 = n2; a.nonfinite = nf;
    mg_oz_slice_ref(&a);
    const int64_t bad = mg_oz_wstats_reduce(u, am, n2, nf, n, out);
    free(u); free(am); free(n2); free(nf);
    return bad;
}

/* The headline's W statistics (K = 8192, nn.Linear's init; 512 rows stand in for the 8192: the maxima move by <1%). */
static mg_oz_wstats oz_headline_w(void) {
    static mg_oz_wstats ws;
    static int done;
    if (!done) {
        const int64_t n = 512, k = 8192;
        float *W = malloc((size_t)(n * k) * sizeof(float));
        cr_assert_not_null(W);
        mg_test_seedlike_f32(NULL, W, NULL, 0, n, k, 7);
        cr_assert_eq(oz_wstats_of(W, n, k, &ws), 0);
        free(W);
        done = 1;
    }
    return ws;
}

/* One seed-like x row of k elements (malloc'ed: free it). */
static float *oz_seedlike_x(int64_t k, uint64_t seed) {
    float *x = malloc((size_t)(k > 0 ? k : 1) * sizeof(float));
    cr_assert_not_null(x);
    mg_test_seedlike_f32(x, NULL, NULL, 1, 0, k, seed);
    return x;
}

#endif /* MG_TEST_OZAKI_COMMON_H */
