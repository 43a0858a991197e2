/* bare_write.cu: the "bare write M floats" reference kernel of the short-circuit rows (see bare_write.h).
 * 256 threads per block, one float per thread: the cheapest launch shape that covers M, so the time measured
 * is the launch plus one wave of stores, the same work the short-circuit's classify kernel cannot avoid. */
#include "bare_write.h"
#include "mg_kernel.h"

#include <cuda_runtime.h>

__global__ void __launch_bounds__(256) bare_write_kernel(float *__restrict__ dst, int m) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < m) dst[i] = 0.0f;
}

extern "C" mg_status mgb_bare_write(float *dst, int m, void *stream) {
    if (!dst || m <= 0) return mg_set_error(MG_ERR_INVALID_ARG, "mgb_bare_write: NULL destination or m = %d <= 0", m);
    bare_write_kernel<<<mg_cdiv(m, 256), 256, 0, (cudaStream_t)stream>>>(dst, m);
    MG_LAUNCH_CHECK();
    return MG_OK;
}
