/* plan.h: the inside of an mg_plan, shared by the two files that implement it (library-internal):
 *   src/maxgemm.c       plans, weights, launch plans, the full path (mg_run_full), mg_forward;
 *   src/shortcut_exec.c the max_dim 1 short-circuit's execution modes (graph, tail, poll, sync: shortcut.h). */
#ifndef MG_PLAN_H
#define MG_PLAN_H

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "dispatch.h"
#include "maxgemm.h"
#include "mg_kernel.h"

/* Launch plans a plan keeps (least recently used goes): a serving loop cycles through a few batch sizes. */
#define MG_LP_CACHE 16
#define MG_TAIL_RETIRED 8   /* retired tail-mode graph sets awaiting their last launch (shortcut_exec.c) */
#define MG_PTR_CACHE 4      /* x and out pointers check_pointer remembers, each (maxgemm.c) */

/* ---- the plan --------------------------------------------------------------------------------------- */
struct mg_plan {
    mg_plan_desc desc;
    mg_problem p;                 /* max_dim normalised */
    const mg_kernel *kernel;
    mg_device dev;
    mg_options opt;               /* the user's (mg_plan_set_options); a launch plan's also take the dispatch row's */
    mg_dispatch_table dispatch;   /* auto plans: the dispatch rows for this GPU, precision and max_dim (a copy) */
    cublasHandle_t cublas;
    int partial_rows;             /* the kernel's bounds: rows of partial, bytes of ws, for every m <= M */
    float *partial;               /* partial_rows * len floats */
    void *ws;                     /* kernel scratch */
    size_t ws_bytes;
    void *fin_scratch;
    mg_prepared prep;             /* the kernel's weight-side state (prep.runner: the kernel these weights need) */
    const mg_kernel_ops *runner;  /* the ops that plan and launch: the kernel's, or prep.runner */
    int prepared;                 /* prep holds kernel state to release */
    int have_weights;
    const void *ptr_ok[2][MG_PTR_CACHE]; /* x, out: the last pointers check_pointer found to be this device's memory
                                          * (a caller's allocator cycling through a few output buffers stays cached) */
    int ptr_next[2];              /* where the next one goes, round robin */
    int pageable_ok;              /* cudaDevAttrPageableMemoryAccess: kernels may read pageable host memory (HMM) */
    unsigned walign;              /* MG_ALIGN_W16 when W's base is 16-byte aligned */
    const void *W, *b;
    /* launch plans, cached per (m, alignment); made on first use (get_launch_plan) */
    struct lp_entry {
        int used;
        unsigned long long stamp;
        mg_launch_plan lp;
    } lps[MG_LP_CACHE];
    unsigned long long lp_clock;
    /* short-circuit (max_dim 1 only) */
    float *wstats;                /* MG_WSTATS_FLOATS device floats */
    int *rows, *count;            /* device: rows to compute, their count */
    void *outg;                   /* M outputs of the full path in the rare case (scatter_rows copies from it) */
    void *cublas_ws;              /* cuBLAS kernels: an explicit workspace (see mg_run_full), else NULL */
    size_t cublas_ws_bytes;
    int sc_mode, sc_used;         /* MG_SHORTCUT_*: configured, used by the last short-circuit forward (-1 none) */
    int *h_count;                 /* sync mode: pinned host copy of *count */
    unsigned *h_sig, *d_sig;      /* poll mode: mapped pinned [count, seq], and its device alias */
    unsigned seq;                 /* poll mode: the last sequence number handed to classify */
    /* graph mode: one instantiated graph, valid for (gx, gout, gm) and the current weights */
    cudaStream_t cap_stream;      /* private non-blocking stream the graph is captured on (never executes work) */
    cudaGraph_t graph;
    cudaGraphExec_t gexec;
    const void *gx;
    void *gout;
    int gm;
    int graph_failed;             /* capture or instantiation failed: POLL until the weights or the mode change */
    char graph_why[1024];         /* why GRAPH (or TAIL, then GRAPH) fell back to POLL */
    char tail_why[512];           /* why TAIL fell back */
    /* tail mode: a set of graphs per (tx, tout, tm): the host graph g holding classify alone, the device graph dg it
     * tail-launches, and ev, recorded after each launch of g on the caller's stream (launched: since it was built).
     * dg's handle lives in those launches' classify parameters, where CUDA cannot see it, so a set is destroyed only
     * once its event has completed: when (x, out, m) change, the current set is retired (tail_old) and destroyed by a
     * later build that finds its event done, or by mg_plan_graph_reset, which waits (src/shortcut_exec.c) */
    struct mg_tail_set {
        cudaGraph_t g, dg;
        cudaGraphExec_t ge, dge;
        cudaEvent_t ev;
        int launched;
    } tail, tail_old[MG_TAIL_RETIRED];
    int tail_nold;
    const void *tx;
    void *tout;
    int tm;
    int tail_failed;              /* building them failed: GRAPH (then POLL) until the weights or the mode change */
};

/* cuBLAS workspace of the plan's cuBLAS kernels (max_dim 1 plans): a conditional graph body may not hold the memory
 * allocation nodes cuBLAS would otherwise add under capture, and the full path must pick the same algorithm inside
 * and outside the graph (bitwise identity), so both use this one buffer. 32 MiB: cuBLAS's default on Hopper. */
#define MG_CUBLAS_WS_BYTES ((size_t)32 << 20)
/* Poll mode: how long the host spins on the mapped count before it falls back to cudaStreamSynchronize (long
 * enough for classify behind a short queue; a stream with a long queue ahead of classify ends in the sync). */
#define MG_POLL_SPIN_NS 10000000LL

/* The full fused path on problem p (p.m may be a subset of the plan's rows): the launch plan, launch, finalize. */
mg_status mg_run_full(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream);
/* max_dim 1 with the short-circuit on (shortcut_exec.c). */
mg_status mg_run_shortcut(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream);
/* Drops the cached graphs (their kernel parameters hold x, out, m, W, b and the prepared state of the weights). */
void mg_plan_graph_reset(mg_plan *pl);

#endif /* MG_PLAN_H */
