/* gpu_util.h: device-side helpers shared by the CLI, tests and benchmark (kernels/gpu_util.cu).
 * All asynchronous on stream; all return MG_OK or an error with mg_last_error() set. */
#ifndef MG_GPU_UTIL_H
#define MG_GPU_UTIL_H
#include <stddef.h>
#include <stdint.h>
#include "maxgemm.h"
#ifdef __cplusplus
extern "C" {
#endif
/* Fills count elements (float, or bf16 when prec is MG_PREC_BF16) with mg_rng_uniform(seed, rng_stream, i, lo, hi)
 * (src/rng.h), i.e. exactly what the CPU draws for the same seed. */
mg_status mg_fill_uniform(void *dst, size_t count, mg_precision prec, uint64_t seed, uint32_t rng_stream,
                          float lo, float hi, void *stream);
/* Fills count bytes with mg_rng_s8(seed, rng_stream, i) (src/rng.h): [-127, 127], what the CPU draws. */
mg_status mg_fill_s8(void *dst, size_t count, uint64_t seed, uint32_t rng_stream, void *stream);
/* Seed-like inputs for one problem: x ~ U[0,1), W, b ~ U(-1/sqrt(K), 1/sqrt(K)) (bound 1 when K = 0). */
mg_status mg_fill_seedlike(void *x, void *W, void *b, int64_t m, int64_t n, int64_t k, mg_precision prec,
                           uint64_t seed, void *stream);
/* Writes a poison value (a signalling-looking NaN pattern 0x7fbadbad / bf16 0x7fbb) to count elements. */
mg_status mg_poison(void *dst, size_t count, mg_precision prec, void *stream);
/* The timing harness's L2 flush: reads bytes (multiple of 16, 16-byte aligned) of buf with L2-allocating loads over
 * num_sms x 8 blocks; sink (device, 4 bytes) is written only on an impossible value. */
mg_status mg_l2_flush_read(const void *buf, size_t bytes, unsigned *sink, int num_sms, void *stream);
/* The timing harness's hold (the "blocking kernel" of nvbench): one thread that spins until the host writes a
 * non-zero word to *release (host-mapped memory, device pointer given) or timeout_ns of GPU time have passed; in
 * the second case it writes 1 to *timed_out (device-visible, may be host-mapped). Enqueued before the samples, it
 * keeps the GPU from starting them until all are queued, so no sample includes host launch latency. */
mg_status mg_gpu_hold(const volatile unsigned *release, unsigned *timed_out, uint64_t timeout_ns, void *stream);

/* The GPU fp64 reference: widens x, W, b (float or bf16) to double, cublasDgemm, then the same epilogue as
 * mg_reference_epilogue in fp64 on the device. ref_out is a DEVICE array of M (max_dim 1) or N (max_dim 0)
 * doubles. max_dim is normalised (0 or 1). Allocates and frees its own scratch (y in fp64: M*N*8 bytes). */
mg_status mg_gpu_reference(const void *x, const void *W, const void *b, int64_t m, int64_t n, int64_t k,
                           int max_dim, mg_precision prec, double *ref_out, void *stream);

/* Bias + max over a materialised y (M x N, float or bf16 per prec) into ONE partial row (len M or N):
 * the separate epilogue of the cuBLAS baselines. */
mg_status mg_bias_max(const void *y, const void *b, int m, int n, int max_dim, mg_precision y_prec,
                      float *partial, void *stream);
#ifdef __cplusplus
}
#endif
#endif
