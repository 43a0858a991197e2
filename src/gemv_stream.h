/* gemv_stream.h: where auto may take kernel 7 (gemv_stream, kernels/07_gemv_stream.cu). Its limits live with the
 * kernel's code; the registry's row for kernel 7 points auto_fits at mg_gemv_auto_fits, and the tests read the
 * per-precision limit from mg_gemv_auto_max_m. C-compatible. */
#ifndef MG_GEMV_STREAM_H
#define MG_GEMV_STREAM_H

#include "mg_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 where auto may take kernel 7 for p: M <= mg_gemv_auto_max_m(p->prec), and a row of x and of W (K elements) a
 * multiple of 16 bytes (the kernel's 16-byte loads; other K run its scalar path); 0 otherwise (and for p NULL). */
int mg_gemv_auto_fits(const mg_problem *p);

/* The largest M auto takes kernel 7 for, per precision: fp32 8, tf32 1, bf16 2; 0 for any other value (never). */
int mg_gemv_auto_max_m(mg_precision prec);

#ifdef __cplusplus
}
#endif
#endif /* MG_GEMV_STREAM_H */
