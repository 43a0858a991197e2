/* cublas_util.cuh: cuBLAS error plumbing shared by the cuBLAS-built kernels (0 and 5): like MG_CUDA_TRY in
 * mg_kernel.h, returns MG_ERR_CUBLAS with the call text and cuBLAS's own message. */
#ifndef MG_CUBLAS_UTIL_CUH
#define MG_CUBLAS_UTIL_CUH
#include <cublas_v2.h>

#include "mg_kernel.h"

#define MG_CUBLAS_TRY(call)                                                                                \
    do {                                                                                                   \
        cublasStatus_t st_ = (call);                                                                       \
        if (st_ != CUBLAS_STATUS_SUCCESS)                                                                  \
            return mg_set_error(MG_ERR_CUBLAS, "%s:%d: %s: %s", __FILE__, __LINE__, #call,                 \
                                cublasGetStatusString(st_));                                               \
    } while (0)
#endif
