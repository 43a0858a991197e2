/* shortcut.h: the exact max_dim == 1 short-circuit (kernels/shortcut.cu, certificate arithmetic in src/shortcut_cert.c).
 *
 * For max_dim 1 the output row i is +0.0 when the y row is finite, NaN otherwise (SEMANTICS.md). With the weight
 * statistics taken once in mg_set_weights and one pass over x per call, every row is classified:
 *   MG_ROW_ZERO      all of x row i, W and b finite, and the overflow bound holds  -> out[i] = +0.0
 *   MG_ROW_NAN       x row i holds a NaN or +-inf, or W/b hold a value that makes every y NaN/+inf -> NaN
 *   MG_ROW_COMPUTE   neither can be decided cheaply (overflow possible, or -inf/+-inf in W or b):
 *                    the row is computed by the plan's fused kernel on the gathered rows.
 */
#ifndef MG_SHORTCUT_H
#define MG_SHORTCUT_H
#include <stdint.h>
#include "maxgemm.h"
#ifdef __cplusplus
extern "C" {
#endif
enum { MG_ROW_ZERO = 0, MG_ROW_NAN = 1, MG_ROW_COMPUTE = 2 };

/* Weight statistics, device-resident (MG_WSTATS_FLOATS floats), computed by mg_shortcut_weight_stats. */
#define MG_WSTATS_FLOATS 4
/* [0] max|W| over finite entries, [1] max|b| over finite entries, [2] weight class: 0 all finite,
 * 1 every y is NaN or +inf (NaN in W or b, or +inf in b) -> all rows NaN, 2 other non-finite -> rows need compute. */
mg_status mg_shortcut_weight_stats(const void *W, const void *b, int64_t n, int64_t k, mg_precision prec,
                                   float *d_wstats, void *stream);

/* The certificate on the host side (also used on the device by the same formula): returns 1 when
 * K * max_abs_x * max_abs_w + max_abs_b is safely below FLT_MAX (see shortcut_cert.c for the margin). */
int mg_shortcut_bound_ok(double k, double max_abs_x, double max_abs_w, double max_abs_b);

/* One pass over x (M x K): writes out[i] = +0.0 (MG_ROW_ZERO) or NaN (MG_ROW_NAN) directly (float or bf16),
 * appends MG_ROW_COMPUTE rows to d_rows (ascending order) and their count to *d_count (device int, zeroed by this call). */
mg_status mg_shortcut_classify(const void *x, int64_t m, int64_t k, mg_precision prec, const float *d_wstats,
                               void *out, int *d_rows, int *d_count, void *stream);
/* How the last block of classify reports the count beyond *d_count (mg_shortcut_classify_signal):
 *   has_cond:  cudaGraphSetConditional(cond, count > 0)  -- cond is a cudaGraphConditionalHandle of the graph the
 *              launch was captured into (graph mode of mg_forward);
 *   tail_graph: a cudaGraphExec_t instantiated with cudaGraphInstantiateFlagDeviceLaunch and uploaded: selects
 *              the tail variant of classify (tail mode of mg_forward), which has no ticket and writes neither the
 *              compacted list nor *d_count: it leaves d_rows[i] = 1/0 flags, and the first block that flags a row
 *              tail-launches the graph (cudaStreamGraphTailLaunch: after classify, before anything queued behind
 *              classify's graph). That graph must begin with mg_shortcut_tail_compact. Classify must itself run
 *              inside a graph (a device graph can only be launched from one); a failed device launch traps;
 *   host_word: a DEVICE pointer (cudaHostGetDevicePointer) to 2 words of mapped pinned host memory, 8-byte aligned:
 *              [0] = count, then a system-scope fence, then [1] = seq  -- the host spins on [1] (poll mode). */
typedef struct mg_shortcut_signal {
    unsigned long long cond;   /* cudaGraphConditionalHandle */
    unsigned long long tail_graph;   /* cudaGraphExec_t, 0: none */
    int has_cond;
    unsigned seq;
    unsigned *host_word;       /* NULL: none */
} mg_shortcut_signal;
/* mg_shortcut_classify, plus the report above (signal may be NULL: none; M = 0 with a signal is MG_ERR_SHAPE). */
mg_status mg_shortcut_classify_signal(const void *x, int64_t m, int64_t k, mg_precision prec, const float *d_wstats,
                                      void *out, int *d_rows, int *d_count, const mg_shortcut_signal *signal,
                                      void *stream);
/* Tail mode's first device-graph kernel: compacts the flags d_rows[0..m) left by the tail variant of classify into
 * the ascending list d_rows[0..count), writes *d_count, and re-arms the launch word (d_wstats[3] = 0). */
mg_status mg_shortcut_tail_compact(int *d_rows, int64_t m, int *d_count, const float *d_wstats, void *stream);
/* out[r] = outg[r] for r = d_rows[t], t < min(*d_count, max_count): outg (max_count elements) holds the full
 * computation of every row; the count is read on the device, so nothing comes from the host (graph-capturable). */
mg_status mg_shortcut_scatter_rows(const void *outg, mg_precision prec, const int *d_rows, const int *d_count,
                                   int64_t max_count, void *out, void *stream);

/* How mg_forward learns whether classify left rows to compute (notes/shortcut.md, "Avoiding the host sync"):
 *   GRAPH  one cached CUDA graph per (x, out, m): classify -> IF (count > 0) { full path on all m rows into the
 *          plan's scratch, scatter_rows }; no host round trip. Falls back to POLL if capture/instantiation fails.
 *   POLL   classify writes the count and a sequence number into mapped pinned host memory; the host spins on it
 *          (bounded, then a stream sync); no copy node, no stream sync in the common case.
 *   SYNC   cudaMemcpyAsync of the count + cudaStreamSynchronize (the original path, kept for comparison).
 *   TAIL   two cached graphs per (x, out, m): a host graph holding only classify, and a device-launchable graph
 *          (full path on all m rows, scatter_rows) that classify tail-launches from the device when count > 0.
 *          The common case is one kernel: no conditional node, no host round trip. Falls back to GRAPH if the
 *          device graph cannot be built (e.g. the full path holds nodes a device graph may not), then to POLL.
 * mg_options.shortcut_mode (mg_plan_set_options; the CLI's --shortcut-mode) or mg_plan_set_shortcut_mode picks the
 * mode; the default is MG_SHORTCUT_DEFAULT. In every mode the rare case runs the plan's full path on ALL m rows, so every row is
 * bit-identical to it. */
enum { MG_SHORTCUT_GRAPH = 0, MG_SHORTCUT_POLL = 1, MG_SHORTCUT_SYNC = 2, MG_SHORTCUT_TAIL = 3,
       MG_SHORTCUT_MODE_COUNT = 4 };
#define MG_SHORTCUT_DEFAULT MG_SHORTCUT_TAIL
/* "graph", "poll", "sync", "tail" -> the mode; NULL or "" -> MG_SHORTCUT_DEFAULT; anything else -> -1. */
int mg_shortcut_mode_parse(const char *s);
const char *mg_shortcut_mode_name(int mode);
/* Hidden plan switches (src/maxgemm.c) for tests and benchmarks, not part of the public API. */
mg_status mg_plan_set_shortcut_mode(mg_plan *plan, int mode);
/* The mode the plan's last short-circuit forward actually used (GRAPH may have fallen back to POLL), or -1 when
 * none ran yet or the caller's stream was being captured (then the full path runs: a graph cannot be waited on). */
int mg_plan_shortcut_mode_used(const mg_plan *plan);
/* Why TAIL or GRAPH mode fell back on this plan ("" if it did not). */
const char *mg_plan_shortcut_fallback(const mg_plan *plan);

#ifdef __cplusplus
}
#endif
#endif
