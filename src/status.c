/* status.c: error messages (mg_set_error, mg_last_error, mg_strerror) and the max_dim rule (mg_status.h). */
#include "mg_status.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

mg_status mg_set_error(mg_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

const char *mg_last_error(void) { return last_error; }

const char *mg_strerror(mg_status s) {
    switch (s) {
    case MG_OK: return "success";
    case MG_ERR_INVALID_ARG: return "invalid argument";
    case MG_ERR_SHAPE: return "invalid shape";
    case MG_ERR_MAX_DIM: return "invalid max_dim (must be -2, -1, 0 or 1)";
    case MG_ERR_PRECISION: return "unknown precision mode (fp32, tf32 or bf16)";
    case MG_ERR_KERNEL: return "unknown kernel";
    case MG_ERR_UNSUPPORTED: return "kernel does not support this problem";
    case MG_ERR_NO_DEVICE: return "no CUDA device";
    case MG_ERR_OUT_OF_MEMORY: return "out of device memory";
    case MG_ERR_NO_WEIGHTS: return "weights not set (call mg_set_weights first)";
    case MG_ERR_CUDA: return "CUDA error";
    case MG_ERR_CUBLAS: return "cuBLAS error";
    default: return "unknown status";
    }
}

mg_status mg_normalize_max_dim(int max_dim, int *norm) {
    int d;
    switch (max_dim) {
    case 1: case -1: d = 1; break;
    case 0: case -2: d = 0; break;
    default:
        return mg_set_error(MG_ERR_MAX_DIM, "max_dim %d is invalid for a 2-D tensor (expected -2, -1, 0 or 1)",
                            max_dim);
    }
    if (norm) *norm = d;
    return MG_OK;
}
