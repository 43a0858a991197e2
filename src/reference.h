/* reference.h: the exact reference, CPU, fp64 accumulation, exactly SEMANTICS.md.
 * Inputs are double (the caller widens fp32 inputs, or bf16-rounded inputs for the bf16 mode).
 * ref_out gets M doubles (max_dim 1 / -1) or N doubles (max_dim 0 / -2).
 * Returns MG_OK, MG_ERR_MAX_DIM for other dims, MG_ERR_SHAPE for an empty reduction
 * (M = 0 with max_dim 0, N = 0 with max_dim 1) or negative sizes. K = 0 is valid: y = b broadcast. */
#ifndef MG_REFERENCE_H
#define MG_REFERENCE_H
#include <stdint.h>
#include "maxgemm.h"

mg_status mg_reference(const double *x, const double *W, const double *b, int64_t M, int64_t N, int64_t K,
                       int max_dim, double *ref_out);
/* The epilogue alone, on a given y (M x N, row-major): shared by the CPU and GPU references' checks. */
mg_status mg_reference_epilogue(const double *y, int64_t M, int64_t N, int max_dim, double *ref_out);
/* Exact GELU: 0.5 v (1 + erf(v / sqrt 2)); NaN in gives NaN out. */
double mg_gelu_exact(double v);
/* torch.max semantics: NaN-propagating. */
double mg_nanmax(double a, double b);
/* max_dim's rule (mg_normalize_max_dim) lives in mg_status.h. */
#include "mg_status.h"
#endif
