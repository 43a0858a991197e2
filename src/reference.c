/* reference.c: the exact CPU reference, fp64 throughout, line by line SEMANTICS.md.
 *
 *   y[i,j] = sum_k x[i,k] * W[j,k] + b[j]           (x: M x K, W: N x K, both row-major / K-major)
 *   max_dim 1 (-1): m[i] = max_j y[i,j];  out[i] = gelu(m[i] - m[i])          (M values)
 *   max_dim 0 (-2): c[j] = max_i y[i,j];  mu = mean_j c[j];  out[j] = gelu(c[j] - mu)   (N values)
 *
 * max is torch.max: a NaN anywhere in the reduced slice gives NaN. GELU is torch's exact form, evaluated in the
 * same order as torch (x * 0.5 * (1 + erf(x / sqrt 2))), so non-finite cases agree with torch too:
 * gelu(+inf) = +inf, gelu(-inf) = -inf * 0 = NaN, gelu(NaN) = NaN.
 * y is never materialised: the reductions are done as each y[i,j] is produced (O(M + N) extra memory).
 */
#include "reference.h"

#include "mg_status.h"

#include <math.h>
#include <stdint.h>

double mg_nanmax(double a, double b) { return (a != a || a > b) ? a : b; }

double mg_gelu_exact(double v) { return v * 0.5 * (1.0 + erf(v * M_SQRT1_2)); }

/* Shape rules shared by both entry points. K is only checked for sign (K = 0 is valid: y = b). */
static mg_status check_shape(int64_t M, int64_t N, int64_t K, int dim) {
    if (M < 0 || N < 0 || K < 0)
        return mg_set_error(MG_ERR_SHAPE, "negative size: M=%lld N=%lld K=%lld", (long long)M, (long long)N,
                            (long long)K);
    if (dim == 1 && N == 0)
        return mg_set_error(MG_ERR_SHAPE, "max over dim 1 of an M x 0 tensor: the reduction has no elements");
    if (dim == 0 && M == 0)
        return mg_set_error(MG_ERR_SHAPE, "max over dim 0 of a 0 x N tensor: the reduction has no elements");
    /* Element counts of x (M*K), W (N*K) and y (M*N) must be addressable. */
    if ((M > 0 && (N > INT64_MAX / M || K > INT64_MAX / M)) || (N > 0 && K > INT64_MAX / N))
        return mg_set_error(MG_ERR_SHAPE, "sizes M=%lld N=%lld K=%lld overflow an element count", (long long)M,
                            (long long)N, (long long)K);
    return MG_OK;
}

/* The part after the max, identical for mg_reference and mg_reference_epilogue: red holds the M row maxima
 * (dim 1) or the N column maxima (dim 0) and is transformed in place into the output. */
static void finish(double *red, int64_t len, int dim) {
    if (dim == 1) {
        /* mean over dim 1 of an M x 1 tensor is the value itself: d = m - m (+0.0, or NaN for NaN/inf m). */
        for (int64_t i = 0; i < len; i++) red[i] = mg_gelu_exact(red[i] - red[i]);
        return;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < len; j++) sum += red[j];
    const double mu = sum / (double)len; /* len = N; N = 0 leaves nothing to write */
    for (int64_t j = 0; j < len; j++) red[j] = mg_gelu_exact(red[j] - mu);
}

mg_status mg_reference(const double *x, const double *W, const double *b, int64_t M, int64_t N, int64_t K,
                       int max_dim, double *ref_out) {
    int dim;
    mg_status s = mg_normalize_max_dim(max_dim, &dim);
    if (s != MG_OK) return s;
    if ((s = check_shape(M, N, K, dim)) != MG_OK) return s;
    const int64_t len = dim == 1 ? M : N;
    if (len > 0 && !ref_out) return mg_set_error(MG_ERR_INVALID_ARG, "mg_reference: ref_out is NULL");
    if (((M > 0 && K > 0) && !x) || ((N > 0 && K > 0) && !W) || (N > 0 && !b))
        return mg_set_error(MG_ERR_INVALID_ARG, "mg_reference: x, W or b is NULL");

    if (dim == 0)
        for (int64_t j = 0; j < N; j++) ref_out[j] = -INFINITY;
    for (int64_t i = 0; i < M; i++) {
        double rowmax = -INFINITY;
        const double *xi = x ? x + i * K : NULL;
        for (int64_t j = 0; j < N; j++) {
            const double *wj = W ? W + j * K : NULL;
            double acc = 0.0;
            for (int64_t k = 0; k < K; k++) acc += xi[k] * wj[k];
            const double y = acc + b[j]; /* bias BEFORE the max: the NaN/inf rules depend on it */
            if (dim == 1)
                rowmax = mg_nanmax(rowmax, y);
            else
                ref_out[j] = mg_nanmax(ref_out[j], y);
        }
        if (dim == 1) ref_out[i] = rowmax;
    }
    finish(ref_out, len, dim);
    return MG_OK;
}

mg_status mg_reference_epilogue(const double *y, int64_t M, int64_t N, int max_dim, double *ref_out) {
    int dim;
    mg_status s = mg_normalize_max_dim(max_dim, &dim);
    if (s != MG_OK) return s;
    if ((s = check_shape(M, N, 0, dim)) != MG_OK) return s;
    const int64_t len = dim == 1 ? M : N;
    if (len > 0 && !ref_out) return mg_set_error(MG_ERR_INVALID_ARG, "mg_reference_epilogue: ref_out is NULL");
    if (M > 0 && N > 0 && !y) return mg_set_error(MG_ERR_INVALID_ARG, "mg_reference_epilogue: y is NULL");

    if (dim == 1) {
        for (int64_t i = 0; i < M; i++) {
            double m = -INFINITY;
            for (int64_t j = 0; j < N; j++) m = mg_nanmax(m, y[i * N + j]);
            ref_out[i] = m;
        }
    } else {
        for (int64_t j = 0; j < N; j++) ref_out[j] = -INFINITY;
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) ref_out[j] = mg_nanmax(ref_out[j], y[i * N + j]);
    }
    finish(ref_out, len, dim);
    return MG_OK;
}
