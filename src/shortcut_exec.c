/* shortcut_exec.c: how a plan runs the max_dim 1 short-circuit (the certificate itself is kernels/shortcut.cu,
 * the modes are described in shortcut.h). Every mode runs classify first; they differ in how the rare case (rows
 * classify left undecided) gets the full path: a device-side tail launch (tail, the default), a conditional graph
 * node (graph), or the host reading the count (poll, sync). Library-internal; the plan's fields are in plan.h. */
#include "plan.h"
#include "shortcut.h"

#include <nvtx3/nvToolsExt.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

/* Tail mode's graph sets. The host graph's classify holds the device graph's handle: both go together. A host graph
 * already launched may still be queued on the caller's stream, and its classify would tail-launch the device graph
 * once it runs (when it flags a row): CUDA defers destroying a launched host graph, but it cannot know about the
 * device graph's handle in a kernel parameter, so a set is destroyed only after the event recorded behind its last
 * launch. A rebuild for new (x, out, m) retires the current set once the new one is built (tail_retire); builds
 * destroy the retired sets whose launches have run (tail_sweep, non-blocking), and wait for the oldest only when
 * MG_TAIL_RETIRED sets are all still queued; mg_plan_graph_reset (new weights or options, mg_plan_destroy) waits for
 * all of them (tail_reset). */
static void tail_set_destroy(struct mg_tail_set *t, int wait) {
    if (t->launched && wait && cudaEventSynchronize(t->ev) != cudaSuccess) (void)cudaGetLastError();
    if (t->ge) cudaGraphExecDestroy(t->ge);
    if (t->g) cudaGraphDestroy(t->g);
    if (t->dge) cudaGraphExecDestroy(t->dge);
    if (t->dg) cudaGraphDestroy(t->dg);
    if (t->ev) cudaEventDestroy(t->ev);
    memset(t, 0, sizeof *t);
}

/* Destroys the retired sets whose last launch has run (all of them, waiting, with wait), keeping the others in
 * order. */
static void tail_sweep(mg_plan *pl, int wait) {
    int kept = 0;
    for (int i = 0; i < pl->tail_nold; i++) {
        struct mg_tail_set *t = &pl->tail_old[i];
        int done = wait || !t->launched;
        if (!done) {   /* an error other than not-ready keeps the set too: tail_reset waits for it */
            const cudaError_t q = cudaEventQuery(t->ev);
            done = q == cudaSuccess;
            if (q != cudaSuccess && q != cudaErrorNotReady) (void)cudaGetLastError();
        }
        if (done)
            tail_set_destroy(t, wait);
        else
            pl->tail_old[kept++] = *t;
    }
    pl->tail_nold = kept;   /* slots from here on are never read before tail_retire writes them whole */
}

/* Moves the current set (if any) to the retired ones, waiting for the oldest retired set only when all slots hold
 * sets still queued. */
static void tail_retire(mg_plan *pl) {
    if (pl->tail.ge) {   /* tail_build installs a set whole */
        if (pl->tail_nold == MG_TAIL_RETIRED) {
            tail_set_destroy(&pl->tail_old[0], 1);
            memmove(&pl->tail_old[0], &pl->tail_old[1], (MG_TAIL_RETIRED - 1) * sizeof pl->tail_old[0]);
            pl->tail_nold--;
        }
        pl->tail_old[pl->tail_nold++] = pl->tail;
    }
    memset(&pl->tail, 0, sizeof pl->tail);
    pl->tx = NULL;
    pl->tout = NULL;
    pl->tm = 0;
}

/* Every tail set, current and retired, destroyed after its last launch has run (waits). */
static void tail_reset(mg_plan *pl) {
    tail_retire(pl);
    tail_sweep(pl, 1);
}

/* Graph mode's host graph (a launched one still queued is freed by CUDA after it runs). */
static void graph_drop(mg_plan *pl) {
    if (pl->gexec) cudaGraphExecDestroy(pl->gexec);
    if (pl->graph) cudaGraphDestroy(pl->graph);
    pl->gexec = NULL;
    pl->graph = NULL;
    pl->gx = NULL;
    pl->gout = NULL;
    pl->gm = 0;
}

/* Drops the cached graphs (their kernel parameters hold x, out, m, W, b and the prepared state of the weights). */
void mg_plan_graph_reset(mg_plan *pl) {
    graph_drop(pl);
    tail_reset(pl);
}

/* ---- the short-circuit (max_dim 1) ------------------------------------------------------------------------
 * classify writes out[i] for every decided row and lists the others (d_rows, *d_count). The rare case (count > 0)
 * runs the full path on ALL m rows into pl->outg, then scatter_rows copies the listed rows to out: every row of out
 * is then exactly what the full path writes (same kernel, same problem, same m; a gathered sub-problem would not
 * be: cuBLAS picks its algorithm, hence its summation order, by M). The modes differ in how the host learns the
 * count (shortcut.h). */

int mg_shortcut_mode_parse(const char *s) {
    if (!s || !*s) return MG_SHORTCUT_DEFAULT;
    if (strcmp(s, "graph") == 0) return MG_SHORTCUT_GRAPH;
    if (strcmp(s, "poll") == 0) return MG_SHORTCUT_POLL;
    if (strcmp(s, "sync") == 0) return MG_SHORTCUT_SYNC;
    if (strcmp(s, "tail") == 0) return MG_SHORTCUT_TAIL;
    return -1;
}

const char *mg_shortcut_mode_name(int mode) {
    switch (mode) {
    case MG_SHORTCUT_GRAPH: return "graph";
    case MG_SHORTCUT_POLL: return "poll";
    case MG_SHORTCUT_SYNC: return "sync";
    case MG_SHORTCUT_TAIL: return "tail";
    default: return "none";
    }
}

mg_status mg_plan_set_shortcut_mode(mg_plan *pl, int mode) {
    if (!pl) return mg_set_error(MG_ERR_INVALID_ARG, "plan is NULL");
    if (mode < 0 || mode >= MG_SHORTCUT_MODE_COUNT)
        return mg_set_error(MG_ERR_INVALID_ARG, "short-circuit mode %d (0 graph, 1 poll, 2 sync, 3 tail)", mode);
    pl->sc_mode = mode;
    pl->opt.shortcut_mode = mode;
    pl->graph_failed = 0;   /* asking for a graph mode again retries the capture */
    pl->tail_failed = 0;
    pl->graph_why[0] = pl->tail_why[0] = '\0';
    return MG_OK;
}
int mg_plan_shortcut_mode_used(const mg_plan *pl) { return pl ? pl->sc_used : -1; }
const char *mg_plan_shortcut_fallback(const mg_plan *pl) {
    if (!pl) return "";
    return pl->sc_used == MG_SHORTCUT_GRAPH ? pl->tail_why : pl->graph_why;
}

/* The rare case, enqueued on stream: the full path on all p->m rows into outg, then the listed rows into out. */
static mg_status run_rare(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream) {
    mg_status st = mg_run_full(pl, p, x, pl->outg, stream);
    if (st != MG_OK) return st;
    return mg_shortcut_scatter_rows(pl->outg, p->prec, pl->rows, pl->count, p->m, out, stream);
}

/* Records a CUDA failure inside graph_build and leaves through its cleanup. */
#define GRAPH_TRY(call)                                                                                 \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            st = mg_set_error(MG_ERR_CUDA, "%s: %s", #call, cudaGetErrorString(e_));                    \
            goto fail;                                                                                  \
        }                                                                                               \
    } while (0)

/* Makes pl->gexec the graph for (x, out, p->m), capturing it if the cached one is for other arguments:
 *   classify (its last block sets the IF node's condition to count > 0)  ->  IF { run_rare }.
 * Both parts are stream-captured on the plan's private stream (captured work does not run; the graph is launched
 * on the caller's stream), cuBLAS bound to that stream by run_full. Kernel parameters, including TMA descriptors
 * the launchers encode on the host, are baked in: hence the key (x, out, m), and graph_reset on mg_set_weights. */
static mg_status graph_build(mg_plan *pl, const mg_problem *p, const void *x, void *out) {
    if (pl->gexec && pl->gx == x && pl->gout == out && pl->gm == p->m) return MG_OK;
    graph_drop(pl);   /* tail mode's sets stay: they are this mode's fallback's, not in the way */
    mg_status st = MG_OK;
    cudaGraph_t g = NULL, ended = NULL;
    cudaGraphExec_t ge = NULL;
    int capturing = 0;
    cudaStream_t cs = NULL;
    cudaGraphConditionalHandle cond = 0;
    if (!pl->cap_stream) GRAPH_TRY(cudaStreamCreateWithFlags(&pl->cap_stream, cudaStreamNonBlocking));
    cs = pl->cap_stream;
    GRAPH_TRY(cudaGraphCreate(&g, 0));
    GRAPH_TRY(cudaGraphConditionalHandleCreate(&cond, g, 0, cudaGraphCondAssignDefault));

    /* classify, then the IF node depending on it */
    GRAPH_TRY(cudaStreamBeginCaptureToGraph(cs, g, NULL, NULL, 0, cudaStreamCaptureModeRelaxed));
    capturing = 1;
    mg_shortcut_signal sig;
    memset(&sig, 0, sizeof sig);
    sig.cond = cond;
    sig.has_cond = 1;
    st = mg_shortcut_classify_signal(x, p->m, p->k, p->prec, pl->wstats, out, pl->rows, pl->count, &sig, cs);
    if (st != MG_OK) goto fail;
    enum cudaStreamCaptureStatus cst;
    const cudaGraphNode_t *deps = NULL;
    const cudaGraphEdgeData *edges = NULL;
    size_t ndeps = 0;
    GRAPH_TRY(cudaStreamGetCaptureInfo(cs, &cst, NULL, NULL, &deps, &edges, &ndeps));
    struct cudaGraphNodeParams np;
    memset(&np, 0, sizeof np);
    np.type = cudaGraphNodeTypeConditional;
    np.conditional.handle = cond;
    np.conditional.type = cudaGraphCondTypeIf;
    np.conditional.size = 1;
    cudaGraphNode_t cnode;
    GRAPH_TRY(cudaGraphAddNode(&cnode, g, deps, edges, ndeps, &np));
    capturing = 0;
    GRAPH_TRY(cudaStreamEndCapture(cs, &ended));

    /* the body: the full path on every row, then the scatter of the listed rows */
    GRAPH_TRY(cudaStreamBeginCaptureToGraph(cs, np.conditional.phGraph_out[0], NULL, NULL, 0,
                                            cudaStreamCaptureModeRelaxed));
    capturing = 1;
    if ((st = run_rare(pl, p, x, out, cs)) != MG_OK) goto fail;
    capturing = 0;
    GRAPH_TRY(cudaStreamEndCapture(cs, &ended));

    GRAPH_TRY(cudaGraphInstantiate(&ge, g, 0));
    pl->graph = g;
    pl->gexec = ge;
    pl->gx = x;
    pl->gout = out;
    pl->gm = p->m;
    return MG_OK;
fail:
    if (capturing) cudaStreamEndCapture(cs, &ended);   /* ends an invalidated capture; the graph is g's */
    cudaGetLastError();                                 /* capture errors are not sticky: clear the last error */
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    return st;
}

/* Makes pl->tail the tail-mode graphs for (x, out, p->m), building them if the cached ones are for other arguments:
 *   1. the device graph: mg_shortcut_tail_compact (classify's tail variant leaves flags), then run_rare, captured
 *      on the private stream, instantiated with
 *      cudaGraphInstantiateFlagDeviceLaunch and uploaded (a device launch needs it resident; the upload is waited
 *      for here, once per key);
 *   2. the host graph: classify alone (its tail variant: no ticket, no count), captured with the device graph's
 *      handle in its signal: the first block that flags a row tail-launches the device graph; none, none does.
 * A device graph may hold only kernel, memcpy and memset nodes (no conditional, event or allocation nodes): if the
 * plan's full path holds anything else, instantiation fails and run_shortcut falls back to GRAPH. */
static mg_status tail_build(mg_plan *pl, const mg_problem *p, const void *x, void *out) {
    if (pl->tail.ge && pl->tx == x && pl->tout == out && pl->tm == p->m) return MG_OK;
    tail_sweep(pl, 0);   /* retired sets whose launches have run */
    mg_status st = MG_OK;
    cudaGraph_t gd = NULL, gh = NULL;
    cudaGraphExec_t ged = NULL, geh = NULL;
    cudaEvent_t ev = NULL;
    int capturing = 0;
    cudaStream_t cs = NULL;
    if (!pl->cap_stream) GRAPH_TRY(cudaStreamCreateWithFlags(&pl->cap_stream, cudaStreamNonBlocking));
    cs = pl->cap_stream;

    GRAPH_TRY(cudaStreamBeginCapture(cs, cudaStreamCaptureModeRelaxed));
    capturing = 1;
    if ((st = mg_shortcut_tail_compact(pl->rows, p->m, pl->count, pl->wstats, cs)) != MG_OK) goto fail;
    if ((st = run_rare(pl, p, x, out, cs)) != MG_OK) goto fail;
    capturing = 0;
    GRAPH_TRY(cudaStreamEndCapture(cs, &gd));
    GRAPH_TRY(cudaGraphInstantiateWithFlags(&ged, gd, cudaGraphInstantiateFlagDeviceLaunch));
    GRAPH_TRY(cudaGraphUpload(ged, cs));
    GRAPH_TRY(cudaStreamSynchronize(cs));

    GRAPH_TRY(cudaStreamBeginCapture(cs, cudaStreamCaptureModeRelaxed));
    capturing = 1;
    mg_shortcut_signal sig;
    memset(&sig, 0, sizeof sig);
    sig.tail_graph = (unsigned long long)(uintptr_t)ged;
    st = mg_shortcut_classify_signal(x, p->m, p->k, p->prec, pl->wstats, out, pl->rows, pl->count, &sig, cs);
    if (st != MG_OK) goto fail;
    capturing = 0;
    GRAPH_TRY(cudaStreamEndCapture(cs, &gh));
    GRAPH_TRY(cudaGraphInstantiate(&geh, gh, 0));
    GRAPH_TRY(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));   /* recorded behind each launch */

    tail_retire(pl);   /* the previous set may still be queued: destroyed once its launch has run */
    pl->tail = (struct mg_tail_set){gh, gd, geh, ged, ev, 0};
    pl->tx = x;
    pl->tout = out;
    pl->tm = p->m;
    return MG_OK;
fail:
    if (capturing) {
        cudaGraph_t ended = NULL;
        cudaStreamEndCapture(cs, &ended);
        if (ended) cudaGraphDestroy(ended);
    }
    cudaGetLastError();
    if (geh) cudaGraphExecDestroy(geh);
    if (gh) cudaGraphDestroy(gh);
    if (ged) cudaGraphExecDestroy(ged);
    if (gd) cudaGraphDestroy(gd);
    if (ev) cudaEventDestroy(ev);
    return st;
}

/* Poll mode's wait: the sequence word of this launch, spinning up to MG_POLL_SPIN_NS, then a stream sync. */
static mg_status poll_count(mg_plan *pl, unsigned seq, void *stream, int *cnt) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    unsigned got = __atomic_load_n(&pl->h_sig[1], __ATOMIC_ACQUIRE);
    for (unsigned it = 1; got != seq; it++) {
        if ((it & 255u) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) > MG_POLL_SPIN_NS) break;
        }
        got = __atomic_load_n(&pl->h_sig[1], __ATOMIC_ACQUIRE);
    }
    if (got != seq) {   /* a long queue ahead of classify, or a failure: wait for the stream, then look again */
        MG_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
        got = __atomic_load_n(&pl->h_sig[1], __ATOMIC_ACQUIRE);
        if (got != seq)
            return mg_set_error(MG_ERR_CUDA, "short-circuit (poll): classify finished without reporting (sequence "
                                             "%u, found %u)", seq, got);
    }
    /* Acquire on the sequence word: the count written before it (behind a system fence) is this launch's. */
    *cnt = (int)__atomic_load_n(&pl->h_sig[0], __ATOMIC_ACQUIRE);
    return MG_OK;
}

/* Whether a failed graph build (tail or graph mode) would fail again on the next call: CUDA / cuBLAS failures
 * (capture, instantiation, allocation) would, so the plan stops paying for them until the weights or the mode
 * change. Argument checks of this call's x or out (MG_ERR_UNSUPPORTED, ...) fall back for this call only. */
static int build_failure_recurs(mg_status st) {
    return st == MG_ERR_CUDA || st == MG_ERR_CUBLAS || st == MG_ERR_OUT_OF_MEMORY;
}

static mg_status run_shortcut(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream) {
    /* A caller capturing its stream cannot have the host wait on the device, nor launch our graph inside its
     * capture portably: the full path is capturable and bit-identical. */
    enum cudaStreamCaptureStatus cap = cudaStreamCaptureStatusNone;
    MG_CUDA_TRY(cudaStreamIsCapturing((cudaStream_t)stream, &cap));
    if (cap != cudaStreamCaptureStatusNone) {
        pl->sc_used = -1;
        return mg_run_full(pl, p, x, out, stream);
    }
    mg_status st;
    int mode = pl->sc_mode;
    if (mode == MG_SHORTCUT_TAIL) {
        if (!pl->tail_failed) {
            pl->tail_why[0] = '\0';
            st = tail_build(pl, p, x, out);
            if (st == MG_OK) {
                MG_CUDA_TRY(cudaGraphLaunch(pl->tail.ge, (cudaStream_t)stream));
                /* behind the launch, so that the set outlives it (tail_retire); without the event, nothing of this
                 * launch may stay queued */
                if (cudaEventRecord(pl->tail.ev, (cudaStream_t)stream) == cudaSuccess) {
                    pl->tail.launched = 1;
                } else {
                    (void)cudaGetLastError();
                    MG_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
                }
                pl->sc_used = MG_SHORTCUT_TAIL;
                return MG_OK;
            }
            if (build_failure_recurs(st)) pl->tail_failed = 1;
            snprintf(pl->tail_why, sizeof pl->tail_why, "tail: %s", mg_last_error());
        }
        mode = MG_SHORTCUT_GRAPH;
    }
    if (mode == MG_SHORTCUT_GRAPH) {
        if (!pl->graph_failed) {
            st = graph_build(pl, p, x, out);
            if (st == MG_OK) {
                MG_CUDA_TRY(cudaGraphLaunch(pl->gexec, (cudaStream_t)stream));
                pl->sc_used = MG_SHORTCUT_GRAPH;
                return MG_OK;
            }
            if (build_failure_recurs(st)) pl->graph_failed = 1;
            /* keeps tail mode's reason, when it fell back from there, in front */
            snprintf(pl->graph_why, sizeof pl->graph_why, "%s%sgraph: %s", pl->tail_why, *pl->tail_why ? "; " : "",
                     mg_last_error());
        }
        mode = MG_SHORTCUT_POLL;
    }
    int cnt = 0;
    if (mode == MG_SHORTCUT_POLL) {
        if (++pl->seq == 0) pl->seq = 1;   /* 0 is the initial word: never a valid sequence number */
        mg_shortcut_signal sig;
        memset(&sig, 0, sizeof sig);
        sig.seq = pl->seq;
        sig.host_word = pl->d_sig;
        st = mg_shortcut_classify_signal(x, p->m, p->k, p->prec, pl->wstats, out, pl->rows, pl->count, &sig, stream);
        if (st != MG_OK) return st;
        if ((st = poll_count(pl, pl->seq, stream, &cnt)) != MG_OK) return st;
    } else {
        st = mg_shortcut_classify(x, p->m, p->k, p->prec, pl->wstats, out, pl->rows, pl->count, stream);
        if (st != MG_OK) return st;
        MG_CUDA_TRY(cudaMemcpyAsync(pl->h_count, pl->count, sizeof(int), cudaMemcpyDeviceToHost, (cudaStream_t)stream));
        MG_CUDA_TRY(cudaStreamSynchronize((cudaStream_t)stream));
        cnt = *pl->h_count;
    }
    pl->sc_used = mode;
    if (cnt < 0 || cnt > p->m) return mg_set_error(MG_ERR_CUDA, "short-circuit reported %d rows to compute of %d", cnt, p->m);
    if (cnt == 0) return MG_OK;
    return run_rare(pl, p, x, out, stream);
}

/* The short-circuit under one NVTX range: classify, and the rare case's full path (its own ranges) when it runs. */
mg_status mg_run_shortcut(mg_plan *pl, const mg_problem *p, const void *x, void *out, void *stream) {
    nvtxRangePushA("maxgemm classify (short-circuit)");
    const mg_status st = run_shortcut(pl, p, x, out, stream);
    nvtxRangePop();
    return st;
}
