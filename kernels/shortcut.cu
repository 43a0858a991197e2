/* shortcut.cu: the exact max_dim == 1 short-circuit (src/shortcut.h).
 *
 * For max_dim 1 the output is gelu(m_i - m_i): +0.0 when y row i is finite, NaN otherwise (SEMANTICS.md). Three
 * facts decide most rows without a GEMM, bit-identically to the full computation:
 *   1. x row i holds NaN or +-inf (and K > 0): every y[i, j] has a term NaN or +-inf * w, so every y[i, j] is
 *      non-finite (inf + anything is inf or NaN; inf * 0 is NaN): m_i is NaN or +-inf -> NaN.
 *   2. NaN in W (K > 0) or in b, or +inf in b: some column is NaN / +inf-or-NaN in EVERY row -> every row NaN
 *      (weight class 1). -inf in b or +-inf in W depend on x's signs and zeros: class 2, rows are computed.
 *   3. everything finite and the overflow certificate holds (src/shortcut_cert.h): y row finite -> +0.0.
 *
 * Data formats. Elements are handled as raw bits (uint32_t for fp32/tf32, uint16_t for bf16), never as floats:
 * |v| in the fp32 bit domain is (bits & 0x7fffffff) (bf16: (bits & 0x7fff) << 16), and for such magnitudes the
 * unsigned order IS the order of |v|, with inf = 0x7f800000 and every NaN above it. So a single unsigned max over
 * a row gives both its finiteness (max >= 0x7f800000 <=> some NaN/inf) and max|x| (the max reinterpreted as float).
 *
 * d_wstats (MG_WSTATS_FLOATS = 4 words, owned by the plan):
 *   [0] max|W| over finite entries, [1] max|b| over finite entries, [2] class (0.0f, 1.0f, 2.0f),
 *   [3] the classify kernel's completion ticket (an unsigned int). mg_shortcut_weight_stats zeroes it; every
 *       classify launch leaves it zero again. It lives here because it must persist, zeroed, between calls and
 *       d_wstats is the plan's only persistent buffer that the API passes to classify (d_count cannot hold it: the
 *       host reads the count from it). Consequence: two classify launches on the SAME d_wstats must not overlap
 *       in time (one plan used concurrently from two streams would race here as on every other plan buffer).
 *
 * Launch structure of classify (the hot path, ONE kernel whatever the outcome):
 *   blocks of 256 threads own contiguous rows (TPR threads per row, TPR in {1, 8, 32, 256} picked from the row
 *   length); each row's group reads its row once with 16-byte loads (scalar head and tail for rows that are not
 *   16-byte aligned, as with odd K), reduces the unsigned max, and its leader writes out[i] (+0.0 or NaN) for a
 *   decided row and a flag d_rows[i] = 1 for a row to compute (0 otherwise). Then the block takes a ticket
 *   (atomicAdd on d_wstats[3]; bit 31 is OR-ed in first by a block that flagged a row). The last block to arrive:
 *   if no block flagged anything, writes *d_count = 0 (the common case: no second kernel, no memset); otherwise it
 *   compacts the flags in place into the ascending row list d_rows[0..count) and writes *d_count. Either way it
 *   resets the ticket and, when asked (mg_shortcut_classify_signal), reports the count without a host copy:
 *   cudaGraphSetConditional(handle, count > 0) for the IF node of mg_forward's graph, a device-side tail launch of
 *   the plan's rare-case graph when count > 0 (tail mode), or the count and a sequence number into mapped pinned
 *   host memory for the polling host. The whole tail is one out-of-line call
 *   (last_block_tail) so the hot path keeps 32 registers and no spills. The memory ordering follows cooperative groups' grid barrier: __syncthreads, then thread 0
 *   fences and does the atomic; the last block's thread 0 fences again before the block reads others' flags (with
 *   ld.cg, L2, never a stale L1 line).
 *
 * Cost model (headline M = 1024, K = 8192, fp32): 32 MiB of x read once, at ~4.2 TB/s about 8 us (less when x is
 * L2-resident, as in a warm-L2 benchmark: 32 MiB < 60 MB), plus one launch; 1024 blocks of 256 threads are all
 * resident at once (8 per SM on 132 SMs), each thread with 4 independent 16-byte loads in flight. The ticket
 * costs 1024 same-address atomics spread over the kernel. See notes/shortcut.md.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

#include "mg_kernel.h"
#include "shortcut.h"
#include "shortcut_cert.h"

namespace {

constexpr int kThreads = 256;                 /* multiple of 32; the block reductions assume 8 warps */
constexpr int kWarps = kThreads / 32;
constexpr uint32_t kAbsInf = 0x7f800000u;     /* |v| bits: >= is inf or NaN, > is NaN */
constexpr uint32_t kNanF32 = 0x7fc00000u;     /* the canonical quiet NaN CUDA arithmetic produces */
constexpr uint16_t kNanBf16 = 0x7fc0u;
constexpr unsigned kTicketAny = 0x80000000u;  /* ticket bit 31: some block flagged a row to compute */

/* ---- element traits: raw bits, |v| accumulation ------------------------------------------------------------ */
template <typename T> struct Elem;
template <> struct Elem<uint32_t> {           /* fp32 / tf32 */
    static constexpr int kVec = 4;            /* elements per 16-byte load */
    /* Folds one 32-bit word of data (one element) into the running unsigned max of |v|. */
    __device__ __forceinline__ static uint32_t fold(uint32_t acc, uint32_t w) { return max(acc, w & 0x7fffffffu); }
    /* The running max as |v| in the fp32 bit domain. */
    __device__ __forceinline__ static uint32_t finish(uint32_t acc) { return acc; }
    /* Calls f(abs_bits_f32, raw_bits_f32) for each element in a word. */
    template <typename F> __device__ __forceinline__ static void each(uint32_t w, F &&f) { f(w & 0x7fffffffu, w); }
    __device__ __forceinline__ static uint32_t nan_bits() { return kNanF32; }
};
template <> struct Elem<uint16_t> {           /* bf16: a word holds two elements; the max runs on both halves */
    static constexpr int kVec = 8;
    __device__ __forceinline__ static uint32_t fold(uint32_t acc, uint32_t w) { return __vmaxu2(acc, w & 0x7fff7fffu); }
    __device__ __forceinline__ static uint32_t finish(uint32_t acc) { return max(acc & 0xffffu, acc >> 16) << 16; }
    template <typename F> __device__ __forceinline__ static void each(uint32_t w, F &&f) {
        f((w & 0x7fffu) << 16, (w & 0xffffu) << 16);
        f(((w >> 16) & 0x7fffu) << 16, w & 0xffff0000u);
    }
    __device__ __forceinline__ static uint16_t nan_bits() { return kNanBf16; }
};

/* Elements before the first 16-byte boundary at p (p is element-aligned), at most n. */
template <typename T> __device__ __forceinline__ int64_t head_elems(const T *p, int64_t n) {
    const int64_t h = (int64_t)(((16u - ((uint32_t)(uintptr_t)p & 15u)) & 15u) / sizeof(T));
    return h < n ? h : n;
}

template <typename E> __device__ __forceinline__ uint32_t fold4(uint32_t acc, uint4 q) {
    return E::fold(E::fold(E::fold(E::fold(acc, q.x), q.y), q.z), q.w);
}

/* ---- weight statistics -------------------------------------------------------------------------------------- */
/* Grid-stride over W (flat: nk elements, dense) and b (n). Per thread: max |W| and |b| over finite entries and two
 * flag bits: 1 = every row NaN (NaN in W, NaN or +inf in b), 2 = rows need compute (+-inf in W, -inf in b).
 * Blocks combine with atomics into ws (zeroed by a memset just before); the last block turns the flags into the
 * class float and resets the ticket ws[3] for mg_shortcut_classify. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    wstats_kernel(const T *__restrict__ W, int64_t nk, const T *__restrict__ b, int64_t n, float *ws) {
    using E = Elem<T>;
    uint32_t mw = 0, mb = 0, flags = 0;
    auto visit_w = [&](uint32_t a, uint32_t) {
        mw = max(mw, a < kAbsInf ? a : 0u);
        flags |= a > kAbsInf ? 1u : (a == kAbsInf ? 2u : 0u);
    };
    const int64_t gt = (int64_t)blockIdx.x * kThreads + threadIdx.x;
    const int64_t stride = (int64_t)gridDim.x * kThreads;

    const int64_t head = head_elems(W, nk);
    const int64_t nvec = (nk - head) / E::kVec;
    const int64_t tail0 = head + nvec * E::kVec;
    for (int64_t i = gt; i < head; i += stride) E::each((uint32_t)W[i], visit_w);
    const uint4 *Wv = reinterpret_cast<const uint4 *>(W + head);
    int64_t v = gt;
    for (; v + 3 * stride < nvec; v += 4 * stride) {   /* 4 independent 16-byte loads in flight per thread */
        const uint4 q0 = __ldcs(Wv + v), q1 = __ldcs(Wv + v + stride);
        const uint4 q2 = __ldcs(Wv + v + 2 * stride), q3 = __ldcs(Wv + v + 3 * stride);
        const uint4 qs[4] = {q0, q1, q2, q3};
#pragma unroll
        for (int u = 0; u < 4; u++) {
            E::each(qs[u].x, visit_w); E::each(qs[u].y, visit_w);
            E::each(qs[u].z, visit_w); E::each(qs[u].w, visit_w);
        }
    }
    for (; v < nvec; v += stride) {
        const uint4 q = __ldcs(Wv + v);
        E::each(q.x, visit_w); E::each(q.y, visit_w); E::each(q.z, visit_w); E::each(q.w, visit_w);
    }
    for (int64_t i = tail0 + gt; i < nk; i += stride) E::each((uint32_t)W[i], visit_w);

    auto visit_b = [&](uint32_t a, uint32_t raw) {
        mb = max(mb, a < kAbsInf ? a : 0u);
        if (a > kAbsInf) flags |= 1u;                          /* NaN in b: column NaN in every row */
        else if (a == kAbsInf) flags |= (raw >> 31) ? 2u : 1u; /* -inf: depends on the row; +inf: +inf or NaN */
    };
    for (int64_t j = gt; j < n; j += stride) E::each((uint32_t)b[j], visit_b);

    /* Block reduction, then one set of atomics per block. Positive float bits order like unsigned ints, so
     * atomicMax on the bits is a max of the magnitudes. */
    __shared__ uint32_t s_mw[kWarps], s_mb[kWarps], s_fl[kWarps];
    mw = __reduce_max_sync(0xffffffffu, mw);
    mb = __reduce_max_sync(0xffffffffu, mb);
    flags = __reduce_or_sync(0xffffffffu, flags);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) { s_mw[warp] = mw; s_mb[warp] = mb; s_fl[warp] = flags; }
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < kWarps; w++) { mw = max(mw, s_mw[w]); mb = max(mb, s_mb[w]); flags |= s_fl[w]; }
        unsigned *wsu = reinterpret_cast<unsigned *>(ws);
        if (mw) atomicMax(&wsu[0], mw);
        if (mb) atomicMax(&wsu[1], mb);
        if (flags) atomicOr(&wsu[2], flags);
        __threadfence();
        const unsigned old = atomicAdd(&wsu[3], 1u);
        if (old == gridDim.x - 1) {                 /* last block: every other block's atomics are done */
            __threadfence();
            const unsigned f = atomicOr(&wsu[2], 0u); /* coherent read of the OR of all flags */
            /* Class 1 dominates: a NaN column makes every row NaN whatever else is infinite. */
            ws[2] = (f & 1u) ? 1.0f : ((f & 2u) ? 2.0f : 0.0f);
            atomicExch(&wsu[3], 0u);                  /* the ticket starts at zero for classify */
        }
    }
}

/* ---- classify ------------------------------------------------------------------------------------------------ */
/* The rare tail of classify, run by the last block only when some row was flagged: in-place stable compaction of
 * the flags rows[0..m) into ascending row indices rows[0..count), 256 rows per step. A step reads all its flags
 * before the barrier inside and writes after it, to positions base + prefix <= its own first row + tid: never a
 * flag that is still to be read. Kept out of line so its registers do not count against the hot path. */
__device__ __noinline__ int compact_flags(int *rows, int m, int *count) {
    __shared__ int s_cnt[kWarps];
    const int warp = threadIdx.x / 32, l32 = threadIdx.x % 32;
    int base = 0;
    for (int c0 = 0; c0 < m; c0 += kThreads) {   /* m <= 2^31 - 1 - 255: checked by the launcher */
        const int i = c0 + (int)threadIdx.x;
        const int f = (i < m) ? __ldcg(rows + i) : 0;   /* L2: other blocks wrote these flags */
        const unsigned bal = __ballot_sync(0xffffffffu, f != 0);
        if (l32 == 0) s_cnt[warp] = __popc(bal);
        __syncthreads();
        int before = 0, total = 0;
#pragma unroll
        for (int w = 0; w < kWarps; w++) {
            before += (w < warp) ? s_cnt[w] : 0;
            total += s_cnt[w];
        }
        if (f) rows[base + before + __popc(bal & ((1u << l32) - 1u))] = i;
        base += total;
        __syncthreads();                                 /* s_cnt is rewritten by the next step */
    }
    if (threadIdx.x == 0) *count = base;
    return base;                                         /* the same in every thread */
}

/* Tells the host side how many rows need the GEMM, from thread 0 of the last block, after *count is written:
 *   graph mode: cudaGraphSetConditional(cond, count > 0) opens the IF node that follows classify in the plan's
 *               graph (the node's default is 0 at every launch; setting it explicitly either way keeps this
 *               independent of that default). One call per launch: no racing calls, as the API requires.
 *   poll mode:  the count, a system-scope fence, then the sequence number, into mapped pinned host memory; the
 *               host spins on the sequence word, so once it sees this launch's number the count beside it is
 *               this launch's too.
 * Out of line (like compact_flags) so the hot path's register budget does not pay for it. */
__device__ __forceinline__ void signal_count(cudaGraphConditionalHandle cond, int has_cond, unsigned *host_word,
                                             unsigned seq, int cnt) {
    if (has_cond) cudaGraphSetConditional(cond, cnt > 0 ? 1u : 0u);
    if (host_word) {
        volatile unsigned *hw = host_word;
        hw[0] = (unsigned)cnt;
        __threadfence_system();
        hw[1] = seq;
    }
}

/* The last block of classify, once every block's flags are in: the count (compacting the flags when some block
 * flagged a row), the ticket reset, the report. Out of line, with the signal passed by address (a __grid_constant__
 * parameter: no local copy), so the hot path keeps its 32 registers without spills. */
__device__ __noinline__ void last_block_tail(bool any, int *rows, int m, int *count, unsigned *ticket,
                                             const mg_shortcut_signal *sig) {
    int cnt = 0;
    if (any) cnt = compact_flags(rows, m, count);    /* rare: some row needs the GEMM */
    else if (threadIdx.x == 0) *count = 0;           /* the common case: nothing to compute */
    if (threadIdx.x == 0) {
        atomicExch(ticket, 0u);                      /* zero for the next launch */
        if (sig->has_cond || sig->host_word) signal_count(sig->cond, sig->has_cond, sig->host_word, sig->seq, cnt);
    }
}

/* Tail mode (kTail): no ticket, no count, no last block. A block that flagged a row claims the launch word (the
 * ticket's word, ws[3], zero between launches) and tail-launches the plan's device graph, whose first kernel
 * (tail_compact_kernel) compacts the flags into rows/count and zeroes the word again. A tail launch runs after this
 * grid, and the host graph it belongs to, have finished (so every block's flags are in), and before anything queued
 * behind that host graph. The library uploads the device graph before it captures this launch, and one launch per
 * classify is all it asks, so a failure means misuse (this variant launched outside a graph) or a device out of
 * launch slots: either must be loud, never a row left unwritten, so it traps (the stream reports
 * cudaErrorLaunchFailure). Out of line: the hot path keeps its registers. */
__device__ __noinline__ void tail_launch_once(unsigned *word, unsigned long long graph) {
    if (atomicExch(word, 1u) != 0u) return;   /* another block of this launch already did */
    if (cudaGraphLaunch(reinterpret_cast<cudaGraphExec_t>(graph), cudaStreamGraphTailLaunch) != cudaSuccess) __trap();
}

/* TPR threads per row, kThreads / TPR rows per block. T: uint32_t (fp32/tf32) or uint16_t (bf16); out has the
 * element type too (float or bf16 bits). ws is read with plain loads (not ld.global.nc): word [3] of the same
 * sector is updated by atomics during the kernel. In-row indices are 32-bit (k < 2^31, checked by the launcher),
 * which with the out-of-line compaction keeps the kernel at <= 32 registers without spills. */
template <typename T, int TPR, bool kTail>
__global__ void __launch_bounds__(kThreads, 8)   /* <= 32 registers: 8 blocks (2048 threads) per SM, so the
                                                    headline's 1024 rows are all resident in one wave */
    classify_kernel(const T *__restrict__ x, int m, int k, const float *ws, unsigned *ticket, T *__restrict__ out,
                    int *rows, int *count, const __grid_constant__ mg_shortcut_signal sig) {
    using E = Elem<T>;
    static_assert(TPR == 1 || TPR == 8 || TPR == 32 || TPR == kThreads, "TPR: 1, 8, 32 or a whole block");
    constexpr int RPB = kThreads / TPR;
    const int g = threadIdx.x / TPR, lane = threadIdx.x % TPR;
    const int row = (int)blockIdx.x * RPB + g;   /* < m + RPB <= 2^31 - 1: checked by the launcher */

    uint32_t acc = 0;
    if (row < m && k > 0) {
        const T *p = x + (int64_t)row * k;
        const int head = (int)head_elems(p, (int64_t)k);
        const int nvec = (k - head) / E::kVec;
        const int tail0 = head + nvec * E::kVec;
        for (int i = lane; i < head; i += TPR) acc = E::fold(acc, (uint32_t)p[i]);   /* < 8 elements */
        const uint4 *pv = reinterpret_cast<const uint4 *>(p + head);
        int v = lane;
#pragma unroll 1   /* the body already has 4 loads in flight; unrolling further costs registers (spills at 32) */
        for (; v + 3 * TPR < nvec; v += 4 * TPR) {                 /* 4 independent 16-byte loads in flight */
            const uint4 q0 = __ldg(pv + v), q1 = __ldg(pv + v + TPR);
            const uint4 q2 = __ldg(pv + v + 2 * TPR), q3 = __ldg(pv + v + 3 * TPR);
            acc = fold4<E>(acc, q0);
            acc = fold4<E>(acc, q1);
            acc = fold4<E>(acc, q2);
            acc = fold4<E>(acc, q3);
        }
        for (; v < nvec; v += TPR) acc = fold4<E>(acc, __ldg(pv + v));
        for (int i = tail0 + lane; i < k; i += TPR) acc = E::fold(acc, (uint32_t)p[i]);
    }
    uint32_t mx = E::finish(acc);
    /* Group max. Every lane of every warp executes the shuffles (rows past m included), so full masks are valid;
     * groups of TPR <= 32 are aligned within a warp, so xor offsets below TPR stay inside the group. */
    if constexpr (TPR > 1 && TPR <= 32) {
#pragma unroll
        for (int off = TPR / 2; off > 0; off >>= 1) mx = max(mx, __shfl_xor_sync(0xffffffffu, mx, off));
    } else if constexpr (TPR == kThreads) {
        __shared__ uint32_t s_max[kWarps];
        mx = __reduce_max_sync(0xffffffffu, mx);
        if (threadIdx.x % 32 == 0) s_max[threadIdx.x / 32] = mx;
        __syncthreads();
#pragma unroll
        for (int w = 0; w < kWarps; w++) mx = max(mx, s_max[w]);
    }

    int flag = 0;
    if (lane == 0 && row < m) {
        const int wcls = (int)ws[2];
        int cls;
        if (mx >= kAbsInf) cls = MG_ROW_NAN;                      /* x row holds NaN or +-inf (so K > 0) */
        else if (wcls == 1) cls = MG_ROW_NAN;
        else if (wcls == 2) cls = MG_ROW_COMPUTE;
        else cls = mg_cert_bound_ok((double)k, (double)__uint_as_float(mx), (double)ws[0], (double)ws[1])
                       ? MG_ROW_ZERO : MG_ROW_COMPUTE;
        if (cls == MG_ROW_COMPUTE) flag = 1;
        else out[row] = (cls == MG_ROW_NAN) ? (T)E::nan_bits() : (T)0;  /* +0.0: all bits zero */
        rows[row] = flag;
    }

    if constexpr (kTail) {
        if (__syncthreads_or(flag) && threadIdx.x == 0) tail_launch_once(ticket, sig.tail_graph);
        return;
    }
    /* Ticket (see the header comment): barrier, then thread 0 fences and takes the ticket. */
    const int any = __syncthreads_or(flag);
    __shared__ unsigned s_last;
    if (threadIdx.x == 0) {
        __threadfence();
        if (any) atomicOr(ticket, kTicketAny);
        const unsigned old = atomicAdd(ticket, 1u);
        const bool last = (old & ~kTicketAny) == gridDim.x - 1;
        /* old includes this block's own OR (same address, program order) and every other block's. */
        s_last = last ? (1u | (old & kTicketAny)) : 0u;
        if (last) __threadfence();
    }
    __syncthreads();
    const unsigned last = s_last;
    if (!(last & 1u)) return;
    last_block_tail((last & kTicketAny) != 0u, rows, m, count, ticket, &sig);
}

/* The device graph's first kernel in tail mode: one block compacts classify's flags into the ascending list
 * rows[0..count), writes *count, and zeroes the launch word for the next classify. */
__global__ void __launch_bounds__(kThreads) tail_compact_kernel(int *rows, int m, int *count, unsigned *word) {
    compact_flags(rows, m, count);
    if (threadIdx.x == 0) *word = 0u;
}

/* ---- the rare case's copy -------------------------------------------------------------------------------------- */
/* out[r] = outg[r] for the rows r = rows[t], t < *count: outg holds the full computation of every row (the rare
 * case of mg_forward), and only the rows classify could not decide are copied. The count is read on the device,
 * so the grid is sized for max_count (the problem's M) and the launch needs nothing from the host. */
template <typename T>
__global__ void __launch_bounds__(kThreads)
    scatter_rows_kernel(const T *__restrict__ outg, const int *__restrict__ rows, const int *__restrict__ count,
                        int max_count, T *__restrict__ out) {
    const int c = *count;
    const int n = c < max_count ? c : max_count;
    for (int t = blockIdx.x * kThreads + threadIdx.x; t < n; t += gridDim.x * kThreads) {
        const int r = rows[t];
        if ((unsigned)r < (unsigned)max_count) out[r] = outg[r];
    }
}

bool aligned(const void *p, size_t a) { return ((uintptr_t)p % a) == 0; }

template <typename T>
mg_status launch_wstats(const void *W, const void *b, int64_t n, int64_t k, float *d_wstats, cudaStream_t st) {
    int dev = 0, sms = 0;
    MG_CUDA_TRY(cudaGetDevice(&dev));
    MG_CUDA_TRY(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    const int64_t nk = n * k;
    const int64_t vecs = nk / (16 / (int64_t)sizeof(T));             /* 16-byte loads over W */
    const int64_t units = vecs > n ? vecs : n;
    int64_t blocks = (units + 4 * kThreads - 1) / (4 * kThreads);   /* >= 4 loads per thread before the cap */
    const int64_t cap = (int64_t)(sms > 0 ? sms : 1) * 8;           /* 8 resident blocks of 256 per SM */
    if (blocks > cap) blocks = cap;
    if (blocks < 1) blocks = 1;
    /* Zero the accumulators and the ticket; once per mg_set_weights, so the extra memset node costs nothing. */
    MG_CUDA_TRY(cudaMemsetAsync(d_wstats, 0, MG_WSTATS_FLOATS * sizeof(float), st));
    wstats_kernel<T><<<(unsigned)blocks, kThreads, 0, st>>>(static_cast<const T *>(W), nk, static_cast<const T *>(b),
                                                          n, d_wstats);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

template <typename T, int TPR>
mg_status launch_classify_tpr(const void *x, int m, int k, const float *ws, void *out, int *rows, int *count,
                              const mg_shortcut_signal &sig, cudaStream_t st) {
    /* the tail-launching variant exists only where asked for: a kernel that may launch a device graph can itself
     * only be launched from a graph (the launch fails with cudaErrorNotSupported otherwise) */
    auto kern = sig.tail_graph ? classify_kernel<T, TPR, true> : classify_kernel<T, TPR, false>;
    constexpr int RPB = kThreads / TPR;
    const unsigned blocks = (unsigned)(((int64_t)m + RPB - 1) / RPB);
    /* The ticket is d_wstats[3] (see the header comment); classify is the only writer between weight_stats. */
    unsigned *ticket = reinterpret_cast<unsigned *>(const_cast<float *>(ws) + 3);
    kern<<<blocks, kThreads, 0, st>>>(static_cast<const T *>(x), m, k, ws, ticket, static_cast<T *>(out), rows, count,
                                      sig);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

/* Threads per row from the row's bytes: a whole block when each thread still gets >= 2 16-byte loads (8 KiB rows,
 * K >= 2048 fp32: the headline), a warp from 512 B (one load per lane), 8 lanes from 64 B, else one thread. */
template <typename T>
mg_status launch_classify(const void *x, int m, int k, const float *ws, void *out, int *rows, int *count,
                          const mg_shortcut_signal &sig, cudaStream_t st) {
    const int64_t row_bytes = k * (int64_t)sizeof(T);
    if (row_bytes >= 2 * 16 * kThreads)
        return launch_classify_tpr<T, kThreads>(x, m, k, ws, out, rows, count, sig, st);
    if (row_bytes >= 16 * 32) return launch_classify_tpr<T, 32>(x, m, k, ws, out, rows, count, sig, st);
    if (row_bytes >= 16 * 4) return launch_classify_tpr<T, 8>(x, m, k, ws, out, rows, count, sig, st);
    return launch_classify_tpr<T, 1>(x, m, k, ws, out, rows, count, sig, st);
}

mg_status check_prec(mg_precision prec) {
    if (prec != MG_PREC_FP32 && prec != MG_PREC_TF32 && prec != MG_PREC_BF16)
        return mg_set_error(MG_ERR_PRECISION, "shortcut: unknown precision %d", (int)prec);
    return MG_OK;
}

}  // namespace

extern "C" mg_status mg_shortcut_weight_stats(const void *W, const void *b, int64_t n, int64_t k, mg_precision prec,
                                              float *d_wstats, void *stream) {
    mg_status s = check_prec(prec);
    if (s != MG_OK) return s;
    if (n < 0 || k < 0) return mg_set_error(MG_ERR_SHAPE, "shortcut weight stats: N=%lld K=%lld must be >= 0",
                                            (long long)n, (long long)k);
    if (k > 0 && n > INT64_MAX / k) return mg_set_error(MG_ERR_SHAPE, "shortcut weight stats: N*K overflows");
    const size_t es = mg_elem_bytes(prec);
    if (!d_wstats || (n > 0 && !b) || (n > 0 && k > 0 && !W))
        return mg_set_error(MG_ERR_INVALID_ARG, "shortcut weight stats: NULL W, b or d_wstats");
    if (!aligned(d_wstats, 4) || (W && !aligned(W, es)) || (b && !aligned(b, es)))
        return mg_set_error(MG_ERR_UNSUPPORTED, "shortcut weight stats: W, b must be %zu-byte aligned, d_wstats 4-byte",
                            es);
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    return prec == MG_PREC_BF16 ? launch_wstats<uint16_t>(W, b, n, k, d_wstats, st)
                                : launch_wstats<uint32_t>(W, b, n, k, d_wstats, st);
}

extern "C" mg_status mg_shortcut_classify_signal(const void *x, int64_t m, int64_t k, mg_precision prec,
                                                 const float *d_wstats, void *out, int *d_rows, int *d_count,
                                                 const mg_shortcut_signal *signal, void *stream) {
    mg_status s = check_prec(prec);
    if (s != MG_OK) return s;
    if (m < 0 || k < 0)
        return mg_set_error(MG_ERR_SHAPE, "shortcut classify: M=%lld K=%lld must be >= 0", (long long)m, (long long)k);
    if (m > 0x7fffffff - kThreads || k > 0x7fffffff)   /* 32-bit row and in-row indices in the kernel */
        return mg_set_error(MG_ERR_UNSUPPORTED, "shortcut classify: M=%lld or K=%lld too large (< 2^31 - 256)",
                            (long long)m, (long long)k);
    if (!d_wstats || !d_count || (m > 0 && (!out || !d_rows)) || (m > 0 && k > 0 && !x))
        return mg_set_error(MG_ERR_INVALID_ARG, "shortcut classify: NULL x, d_wstats, out, d_rows or d_count");
    const size_t es = mg_elem_bytes(prec);
    if ((x && !aligned(x, es)) || (out && !aligned(out, es)) || !aligned(d_wstats, 4) || !aligned(d_count, 4) ||
        (d_rows && !aligned(d_rows, 4)))
        return mg_set_error(MG_ERR_UNSUPPORTED, "shortcut classify: x and out must be %zu-byte aligned", es);
    mg_shortcut_signal sig;
    memset(&sig, 0, sizeof sig);
    if (signal) sig = *signal;
    if (sig.host_word && !aligned(sig.host_word, 8))
        return mg_set_error(MG_ERR_INVALID_ARG, "shortcut classify: the host signal words must be 8-byte aligned");
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    if (m == 0) {   /* no rows, no kernel: the count is zero */
        if (sig.has_cond || sig.tail_graph || sig.host_word)   /* nothing would signal: the library never asks */
            return mg_set_error(MG_ERR_SHAPE, "shortcut classify: M = 0 with a completion signal");
        MG_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof(int), st));
        return MG_OK;
    }
    return prec == MG_PREC_BF16
               ? launch_classify<uint16_t>(x, (int)m, (int)k, d_wstats, out, d_rows, d_count, sig, st)
               : launch_classify<uint32_t>(x, (int)m, (int)k, d_wstats, out, d_rows, d_count, sig, st);
}

extern "C" mg_status mg_shortcut_classify(const void *x, int64_t m, int64_t k, mg_precision prec, const float *d_wstats,
                                          void *out, int *d_rows, int *d_count, void *stream) {
    return mg_shortcut_classify_signal(x, m, k, prec, d_wstats, out, d_rows, d_count, NULL, stream);
}

extern "C" mg_status mg_shortcut_tail_compact(int *d_rows, int64_t m, int *d_count, const float *d_wstats,
                                              void *stream) {
    if (m < 1 || m > 0x7fffffff)
        return mg_set_error(MG_ERR_SHAPE, "shortcut tail compact: M=%lld must be in [1, 2^31-1]", (long long)m);
    if (!d_rows || !d_count || !d_wstats)
        return mg_set_error(MG_ERR_INVALID_ARG, "shortcut tail compact: NULL d_rows, d_count or d_wstats");
    unsigned *word = reinterpret_cast<unsigned *>(const_cast<float *>(d_wstats) + 3);
    tail_compact_kernel<<<1, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(d_rows, (int)m, d_count, word);
    MG_LAUNCH_CHECK();
    return MG_OK;
}

extern "C" mg_status mg_shortcut_scatter_rows(const void *outg, mg_precision prec, const int *d_rows,
                                              const int *d_count, int64_t max_count, void *out, void *stream) {
    mg_status s = check_prec(prec);
    if (s != MG_OK) return s;
    if (max_count < 0 || max_count > 0x7fffffff)
        return mg_set_error(MG_ERR_SHAPE, "shortcut scatter_rows: max_count=%lld must be in [0, 2^31-1]",
                            (long long)max_count);
    if (max_count == 0) return MG_OK;
    if (!outg || !d_rows || !d_count || !out)
        return mg_set_error(MG_ERR_INVALID_ARG, "shortcut scatter_rows: NULL outg, d_rows, d_count or out");
    const size_t es = mg_elem_bytes(prec);
    if (!aligned(outg, es) || !aligned(out, es) || !aligned(d_rows, 4) || !aligned(d_count, 4))
        return mg_set_error(MG_ERR_UNSUPPORTED, "shortcut scatter_rows: outg and out must be %zu-byte aligned", es);
    cudaStream_t st = static_cast<cudaStream_t>(stream);
    /* One thread per possible row, grid-stride beyond 1024 blocks (M > 256K rows). */
    const int64_t want = (max_count + kThreads - 1) / kThreads;
    const unsigned blocks = (unsigned)(want < 1024 ? want : 1024);
    if (prec == MG_PREC_BF16)
        scatter_rows_kernel<uint16_t><<<blocks, kThreads, 0, st>>>(static_cast<const uint16_t *>(outg), d_rows,
                                                                   d_count, (int)max_count,
                                                                   static_cast<uint16_t *>(out));
    else
        scatter_rows_kernel<uint32_t><<<blocks, kThreads, 0, st>>>(static_cast<const uint32_t *>(outg), d_rows,
                                                                   d_count, (int)max_count,
                                                                   static_cast<uint32_t *>(out));
    MG_LAUNCH_CHECK();
    return MG_OK;
}
