/* bare_write.h: the benchmark's reference kernel for the short-circuit rows (bench/bare_write.cu).
 * One launch that writes m floats (+0.0) and nothing else: the floor of any max_dim = 1 forward, which must
 * at least launch a kernel and write M outputs. */
#ifndef MG_BENCH_BARE_WRITE_H
#define MG_BENCH_BARE_WRITE_H
#include "maxgemm.h"
#ifdef __cplusplus
extern "C" {
#endif
mg_status mgb_bare_write(float *dst, int m, void *stream /* cudaStream_t */);
#ifdef __cplusplus
}
#endif
#endif
