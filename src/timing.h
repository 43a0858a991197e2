/* timing.h: benchmark hygiene in one place (src/timing.c): warm-up, L2 flush between samples (a read of a
 * buffer twice the L2 size), a hold kernel so the samples are all queued before the GPU starts them, CUDA-event
 * timing, median/min/max. Used by the CLI and the benchmark. */
#ifndef MG_TIMING_H
#define MG_TIMING_H
#include "maxgemm.h"
#ifdef __cplusplus
extern "C" {
#endif
typedef struct mg_timer mg_timer;
/* flush_l2: 1 = read a 2 x L2 buffer before every sample (not timed; mg_l2_flush_read). */
mg_status mg_timer_create(mg_timer **t, int flush_l2, void *stream);
void mg_timer_destroy(mg_timer *t);
typedef mg_status (*mg_timed_fn)(void *ctx);   /* enqueues the work on the timer's stream */
/* Runs fn warmup times, then iters samples, each event-timed alone; samples_ms gets iters values. */
mg_status mg_time(mg_timer *t, mg_timed_fn fn, void *ctx, int warmup, int iters, double *samples_ms);
/* nfn functions timed alternately, sample by sample (fns[0], fns[1], ..., fns[0], ...), each sample event-timed
 * alone after its own flush; samples_ms[f] gets iters values for function f. mg_time is the nfn = 1 case. */
mg_status mg_time_interleaved(mg_timer *t, int nfn, const mg_timed_fn *fns, void *const *ctxs, int warmup, int iters,
                              double *const *samples_ms);
/* Sample batches (one per mg_time / mg_time_interleaved call) whose hold kernel timed out before the host had
 * queued every sample: those samples may include host launch latency. 0 in a clean run. */
int mg_timer_hold_timeouts(const mg_timer *t);
typedef struct mg_stats { double median, min, max, mean; int n; } mg_stats;
mg_stats mg_stats_of(const double *samples, int n);   /* sorts a copy */
#ifdef __cplusplus
}
#endif
#endif
