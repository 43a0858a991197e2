/* hopper.cuh: Hopper (sm_90a) primitives shared by the wgmma kernels (03, 04, 06, 08, 10) and their fused epilogues.
 *
 * Each primitive is a small __device__ __forceinline__ inline-PTX wrapper; the PTX is spelled as in the PTX ISA
 * (9.7.9.25 cp.async.bulk.tensor, 9.7.13.15 mbarrier, 9.7.15 wgmma). The host side builds TMA descriptors with
 * cuTensorMapEncodeTiled, fetched at run time through cudaGetDriverEntryPointByVersion (never -lcuda:
 * <cuda.h> / <cudaTypedefs.h> are included for the types only).
 *
 * CONVENTIONS (all three kernels follow them)
 *  - Both GEMM operands are K-major: A = x (M x K, K contiguous), B = W (N x K, K contiguous), C = A * B^T.
 *    wgmma tf32 accepts only K-major operands from shared memory, which is exactly what nn.Linear gives us.
 *  - Shared-memory operand tiles use the 128-byte swizzle (TMA CU_TENSOR_MAP_SWIZZLE_128B on the load side,
 *    swizzle mode 1 in the wgmma descriptor on the read side). A tile row is exactly 128 bytes of K:
 *        BK = 64 for bf16 (2-byte elements),  BK = 32 for tf32/fp32 (4-byte elements).
 *    A tile of R rows occupies R * 128 bytes, row r at byte r * 128 (before the swizzle permutes its 16-byte
 *    chunks: chunk c of row r lands at chunk c ^ (r % 8)). Eight rows form one 1024-byte swizzle atom, so every
 *    tile base must be 1024-byte aligned (the descriptor's base-offset field is left 0, which means "the
 *    pattern starts at a 1024-byte boundary"). Align the dynamic shared memory base to 1024 by hand: the
 *    runtime only guarantees 16 bytes.
 *  - One wgmma k-step reads 32 bytes of K per row (k16 bf16 = 16 x 2 B, k8 tf32 = 8 x 4 B), so a 128-byte row
 *    holds 4 k-steps; step j uses the descriptor of the tile base plus j * 32 bytes (mg_desc_advance). The
 *    hardware applies the swizzle to the final address, so advancing inside the atom is legal (CUTLASS and
 *    DeepGEMM do the same).
 *  - Accumulator fragment of wgmma m64nN (f32 D, PTX ISA "WGMMA .m64nNk16 / .m64nNk8 register fragment layout for
 *    accumulator matrix D"): thread t of the warpgroup, warp w = t / 32, lane l = t % 32, holds N/2 floats;
 *    for each n8 block i (0 .. N/8-1):
 *        d[4i + 0], d[4i + 1]  ->  row 16w + l/4,      columns 8i + 2(l%4) + {0, 1}
 *        d[4i + 2], d[4i + 3]  ->  row 16w + l/4 + 8,  columns 8i + 2(l%4) + {0, 1}
 *    (the mma.sync m16n8 C layout, one per warp, repeated along N).
 *  - TMA coordinates are {column (innermost, elements), row}. Out-of-bounds parts of a box are filled with
 *    zeros (CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) and STILL count in full toward the mbarrier's transaction bytes,
 *    so expect_tx is always the full box size, even for edge tiles.
 *  - mbarrier phases: a barrier starts in phase 0; wait(parity) returns once the phase with that parity has
 *    completed. For a ring of S stages, the u-th use (u = k_iter / S) of a stage waits on parity u & 1.
 *
 * Global-memory constraints of TMA (checked by mg_make_tma_2d): base 16-byte aligned, row stride a multiple of
 * 16 bytes (so K * elem_bytes % 16 == 0, else the launcher pads), box dims 1 .. 256, box row <= 128 bytes with
 * the 128B swizzle.
 */
#ifndef MG_HOPPER_CUH
#define MG_HOPPER_CUH

#include <cuda.h>          /* CUtensorMap and its enums: types only, nothing is linked */
#include <cudaTypedefs.h>  /* PFN_cuTensorMapEncodeTiled_v12000 */
#include <cuda_runtime.h>
#include <stdint.h>

#include "mg_kernel.h"

/* ============================================================================================== */
/* Shared-memory addresses, fences                                                                  */
/* ============================================================================================== */

/* GPU-scope release store / acquire load of a flag in global memory (the stream-K handshake of ws_streamk.cuh:
 * the writer's data, fenced before the release, is visible to whoever acquires the flag). */
__device__ __forceinline__ void mg_st_release_gpu(int *p, int v) {
    asm volatile("st.release.gpu.global.b32 [%0], %1;\n" ::"l"(p), "r"(v) : "memory");
}
__device__ __forceinline__ int mg_ld_acquire_gpu(const int *p) {
    int v;
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n" : "=r"(v) : "l"(p) : "memory");
    return v;
}

/* GPU-scope relaxed 64-bit store / load: a word that carries its own data (THE TAGGED SLOTS of swapab_finish.cuh),
 * single-copy atomic, read at L2 (never a stale L1 line). */
__device__ __forceinline__ void mg_st_relaxed_gpu_u64(unsigned long long *p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.b64 [%0], %1;\n" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long mg_ld_relaxed_gpu_u64(const unsigned long long *p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];\n" : "=l"(v) : "l"(p) : "memory");
    return v;
}

/* The 32-bit shared-window address that PTX .shared::cta operands take. */
__device__ __forceinline__ uint32_t mg_smem_u32(const void *p) {
    return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/* Makes mbarrier.init visible to the other threads of the cluster and to the async proxy (TMA), before any
 * thread or TMA uses the barrier. Follow it with __syncthreads() (or a cluster barrier when other CTAs will
 * signal this CTA's barriers, e.g. TMA multicast). */
__device__ __forceinline__ void mg_fence_mbarrier_init() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* Orders this thread's generic-proxy shared-memory accesses before later async-proxy accesses (TMA, wgmma
 * operand reads), e.g. after writing smem with ordinary stores that a wgmma will read. */
__device__ __forceinline__ void mg_fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/* ============================================================================================== */
/* mbarrier (64-bit barrier object in shared memory, 8-byte aligned)                               */
/* ============================================================================================== */

/* Programmatic dependent launch: lets the next kernel of the stream (launched with the programmatic stream
 * serialization attribute) be scheduled before this grid ends; that kernel's griddepcontrol.wait still waits for
 * this grid's completion and memory (kernels/finalize.cu). Executed by one thread per CTA. */
__device__ __forceinline__ void mg_pdl_trigger() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }

/* count = number of arrivals (mbarrier.arrive*) that complete a phase, besides the transaction bytes. */
__device__ __forceinline__ void mg_mbar_init(uint64_t *bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(mg_smem_u32(bar)), "r"(count) : "memory");
}

/* One arrival (release semantics at CTA scope). */
__device__ __forceinline__ void mg_mbar_arrive(uint64_t *bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(mg_smem_u32(bar)) : "memory");
}

/* One arrival plus "expect tx_bytes more transaction bytes in this phase": the producer calls it once per
 * stage, right before issuing the TMA loads that will complete_tx those bytes. */
__device__ __forceinline__ void mg_mbar_arrive_expect_tx(uint64_t *bar, uint32_t tx_bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(mg_smem_u32(bar)),
                 "r"(tx_bytes)
                 : "memory");
}

/* Non-blocking probe: 1 once the phase with this parity has completed (acquire at CTA scope). */
__device__ __forceinline__ uint32_t mg_mbar_try_wait(uint64_t *bar, uint32_t parity) {
    uint32_t done;
    asm volatile(
        "{\n.reg .pred p;\n"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        "selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(mg_smem_u32(bar)), "r"(parity)
        : "memory");
    return done;
}

/* Blocks until the phase with this parity has completed. try_wait suspends the thread for a
 * hardware-chosen time before returning false, so this loop does not hammer the barrier. */
__device__ __forceinline__ void mg_mbar_wait(uint64_t *bar, uint32_t parity) {
    while (!mg_mbar_try_wait(bar, parity)) {
    }
}

/* ============================================================================================== */
/* TMA (cp.async.bulk.tensor), issued by ONE thread                                                */
/* ============================================================================================== */

/* Brings the 128-byte descriptor into the TMA unit's cache (optional; once per CTA before the first load).
 * tmap is the address of a __grid_constant__ kernel parameter (or of global/const memory). */
__device__ __forceinline__ void mg_tma_prefetch_desc(const CUtensorMap *tmap) {
    asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(tmap)) : "memory");
}

/* Loads the box at (col, row) = (c0, c1) of the 2D tensor described by tmap into dst (shared, 1024-aligned for
 * the 128B swizzle) and signals bar with complete_tx(box bytes). */
__device__ __forceinline__ void mg_tma_load_2d(void *dst, const CUtensorMap *tmap, uint64_t *bar, int32_t c0,
                                               int32_t c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];\n" ::"r"(mg_smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(tmap)), "r"(mg_smem_u32(bar)), "r"(c0), "r"(c1)
        : "memory");
}

/* Warp-wide forms (kernel 8's clusters-of-2 producer: the whole warp runs the loop, so ptxas keeps it on the uniform
 * datapath): elect.sync picks one lane of the full warp, which issues the instruction. The multicast loads: the same
 * box lands at the same smem offset in every CTA of the cluster whose bit is set in cta_mask (bit i = the CTA of
 * cluster rank i; this CTA's bit alone is a plain load), and each destination CTA's barrier at bar's offset receives
 * complete_tx(box bytes). */
__device__ __forceinline__ void mg_mbar_arrive_expect_tx_elect(uint64_t *bar, uint32_t tx_bytes) {
    asm volatile("{\n.reg .pred p;\n.reg .b32 l;\nelect.sync l|p, 0xffffffff;\n"
                 "@p mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n}\n" ::"r"(mg_smem_u32(bar)),
                 "r"(tx_bytes)
                 : "memory");
}
__device__ __forceinline__ void mg_tma_load_2d_multicast_elect(void *dst, const CUtensorMap *tmap, uint64_t *bar,
                                                               int32_t c0, int32_t c1, uint16_t cta_mask) {
    asm volatile(
        "{\n.reg .pred p;\n.reg .b32 l;\nelect.sync l|p, 0xffffffff;\n"
        "@p cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4}], [%2], %5;\n}\n" ::"r"(mg_smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(tmap)), "r"(mg_smem_u32(bar)), "r"(c0), "r"(c1), "h"(cta_mask)
        : "memory");
}
__device__ __forceinline__ void mg_tma_load_3d_multicast_elect(void *dst, const CUtensorMap *tmap, uint64_t *bar,
                                                               int32_t c0, int32_t c1, int32_t c2, uint16_t cta_mask) {
    asm volatile(
        "{\n.reg .pred p;\n.reg .b32 l;\nelect.sync l|p, 0xffffffff;\n"
        "@p cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
        " [%0], [%1, {%3, %4, %5}], [%2], %6;\n}\n" ::"r"(mg_smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(tmap)), "r"(mg_smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2), "h"(cta_mask)
        : "memory");
}

/* The 3D forms (kernel 8's W in panels, kernels/08_wgmma_swapab.cu): the box at (c0, c1, c2), c0 along the
 * contiguous dimension. */
__device__ __forceinline__ void mg_tma_load_3d(void *dst, const CUtensorMap *tmap, uint64_t *bar, int32_t c0,
                                               int32_t c1, int32_t c2) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(mg_smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(tmap)), "r"(mg_smem_u32(bar)), "r"(c0), "r"(c1), "r"(c2)
        : "memory");
}

/* ============================================================================================== */
/* Clusters (kernel 8's clusters of 2; kernel 4's cluster-2 form was removed: notes/04_wgmma_ws.md)  */
/* ============================================================================================== */

/* Arrives on the barrier at the same shared-memory offset in CTA cta_rank of this cluster (mapa translates the
 * address; cta_rank may be this CTA): tells the CTA that multicasts into this CTA's stage that this CTA is done with
 * it. The instruction's default semantics (.release.cta), as CUTLASS (ClusterBarrier::arrive(cta_id, pred)),
 * DeepGEMM and Triton spell it; the waiter is the peer's producer with a plain (acquire.cta) mg_mbar_wait.
 * DO NOT add .release.cluster: sm_90 has no cluster-scope fence, so ptxas emits MEMBAR.ALL.GPU and friends before
 * EVERY such arrive, which made kernel 4's cluster 2 1.83x slower (notes/04_wgmma_ws.md "Cluster 2: the 1.83x"). No
 * data is published through this barrier: the stage's readers are this warp's wgmmas (complete at wait_group). */
__device__ __forceinline__ void mg_mbar_arrive_cluster(uint64_t *bar, uint32_t cta_rank) {
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(mg_smem_u32(bar)), "r"(cta_rank)
        : "memory");
}
/* Full cluster barrier, every thread of every CTA of the cluster (release, then acquire): after barrier init when
 * the peer will signal this CTA's barriers, and before exit while the peer may still arrive on or multicast into this
 * CTA's shared memory. The .aligned form needs the warp converged; the other is for divergent role code. */
__device__ __forceinline__ void mg_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void mg_cluster_sync_unaligned() {
    asm volatile("barrier.cluster.arrive.release;\n" ::: "memory");
    asm volatile("barrier.cluster.wait.acquire;\n" ::: "memory");
}

/* ============================================================================================== */
/* wgmma shared-memory matrix descriptor (PTX ISA "Matrix Descriptor Format")                      */
/* ============================================================================================== */
/*   bits  0-13  start address >> 4          bits 16-29  leading-dimension byte offset >> 4
 *   bits 32-45  stride-dimension byte offset >> 4                 bits 49-51  base offset
 *   bits 62-63  swizzle: 0 none, 1 = 128B, 2 = 64B, 3 = 32B
 * For a K-major operand with the 128B swizzle: LBO is unused ("assumed 1", we encode 1); SBO = the distance
 * between consecutive 8-row groups = 8 rows x 128 B = 1024 B; base offset 0 because tiles start on
 * 1024-byte boundaries. */
__device__ __forceinline__ uint64_t mg_desc_encode(uint32_t x) { return (uint64_t)((x & 0x3FFFFu) >> 4); }

/* Descriptor of a K-major, 128B-swizzled tile whose first row starts at smem_tile (1024-byte aligned). */
__device__ __forceinline__ uint64_t mg_make_desc_k128(const void *smem_tile) {
    uint64_t d = mg_desc_encode(mg_smem_u32(smem_tile));
    d |= (uint64_t)1 << 16;                    /* LBO: unused for swizzled K-major */
    d |= mg_desc_encode(1024u) << 32;          /* SBO: 8 rows x 128 bytes */
    d |= (uint64_t)1 << 62;                    /* 128-byte swizzle */
    return d;
}

/* The same for a K-major tile with the 64B swizzle (TMA CU_TENSOR_MAP_SWIZZLE_64B): rows of 64 bytes of K
 * (BK = 32 bf16), two k-steps per row (mg_desc_advance by 0 / 32). The pattern permutes 16-byte chunks by
 * address bits 7-8, i.e. repeats every 8 rows = 512 bytes: SBO = 8 rows x 64 B = 512 B, tile base 512-byte
 * aligned (1024 is fine), LBO unused. (Added for kernel 6, whose stages hold four tiles.) */
__device__ __forceinline__ uint64_t mg_make_desc_k64(const void *smem_tile) {
    uint64_t d = mg_desc_encode(mg_smem_u32(smem_tile));
    d |= (uint64_t)1 << 16;                    /* LBO: unused for swizzled K-major */
    d |= mg_desc_encode(512u) << 32;           /* SBO: 8 rows x 64 bytes */
    d |= (uint64_t)2 << 62;                    /* 64-byte swizzle */
    return d;
}

/* The descriptor advanced by byte_offset bytes along K (multiple of 16; k-step j of a 128-byte row: j * 32).
 * The start-address field is the low 14 bits; a tile never crosses the 256 KiB the field can address, so the
 * addition cannot carry out of it. */
__device__ __forceinline__ uint64_t mg_desc_advance(uint64_t desc, uint32_t byte_offset) {
    return desc + (uint64_t)(byte_offset >> 4);
}

/* ============================================================================================== */
/* wgmma synchronisation                                                                           */
/* ============================================================================================== */

/* Before the first wgmma that reads/writes accumulator registers last touched by ordinary instructions
 * (zero-initialisation, a previous epilogue), and at the start of every k-iteration (cheap). */
__device__ __forceinline__ void mg_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
/* Closes the group of wgmmas issued since the last commit. */
__device__ __forceinline__ void mg_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/* Waits until at most N committed groups are still pending (N = 0: all done; their smem reads and their
 * accumulator writes are then complete). */
template <int N>
__device__ __forceinline__ void mg_wgmma_wait() {
    static_assert(N >= 0 && N <= 7, "wgmma.wait_group takes 0..7");
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Pins accumulator registers: the compiler may not move reads/writes of them across this point (use around
 * the wgmma issue / wait so that no ordinary instruction touches an accumulator while a wgmma owns it). */
template <int R>
__device__ __forceinline__ void mg_fence_acc(float (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+f"(d[i])::"memory");
}

/* The same for int32 accumulators (the s8 wgmma of kernel 10). */
template <int R>
__device__ __forceinline__ void mg_fence_acc(int32_t (&d)[R]) {
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+r"(d[i])::"memory");
}

/* The same for b32 registers that a register-sourced wgmma will read (A fragments): their ordinary writes are
 * materialised before this point, so a wgmma.fence placed after it separates them from the wgmma. */
template <int R>
__device__ __forceinline__ void mg_fence_regs(uint32_t (&r)[R]) {
#pragma unroll
    for (int i = 0; i < R; i++) asm volatile("" : "+r"(r[i])::"memory");
}

/* ============================================================================================== */
/* Register reallocation between warpgroups (warp-specialised kernels)                             */
/* ============================================================================================== */
/* All warps of a warpgroup must execute the same call. R is a multiple of 8 in 24 .. 256. ptxas ignores
 * setmaxnreg (info C7508 "unable to determine register count at entry") unless the kernel's register budget
 * is fixed: declare the kernel __launch_bounds__(THREADS, 1) (checked with nvcc 13.0). */
template <int R>
__device__ __forceinline__ void mg_setmaxnreg_inc() {
    static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg: 24..256, multiple of 8");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R>
__device__ __forceinline__ void mg_setmaxnreg_dec() {
    static_assert(R >= 24 && R <= 256 && R % 8 == 0, "setmaxnreg: 24..256, multiple of 8");
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}

/* ============================================================================================== */
/* Named barriers, and the NaN-propagating max of the fused epilogues (kernels 4, 6, 8, 10)          */
/* ============================================================================================== */
/* bar.sync on named barrier id for `threads` threads (a multiple of 32). */
__device__ __forceinline__ void mg_named_bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
/* bar.arrive on named barrier id: this thread's earlier writes are visible to the threads that bar.sync on it. */
__device__ __forceinline__ void mg_named_bar_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

/* PTX max.NaN.f32: NaN if either input is NaN (mg_nanmaxf's contract), one FMNMX.NAN instead of mg_nanmaxf's
 * compare-and-select (run 22: with the paired bias loads, 2.6% off the bf16 headline). */
__device__ __forceinline__ float mg_max_nan(float a, float b) {
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
}

/* The max over the 4 lanes of a quad (lane bits 0, 1: the columns of one accumulator row that a warp's lanes hold),
 * of two rows at once (m0: row l / 4, m1: row l / 4 + 8 of the warp's 16); every lane of the quad gets both. */
__device__ __forceinline__ void mg_quad_max2(float &m0, float &m1) {
    m0 = mg_max_nan(m0, __shfl_xor_sync(0xffffffffu, m0, 1));
    m1 = mg_max_nan(m1, __shfl_xor_sync(0xffffffffu, m1, 1));
    m0 = mg_max_nan(m0, __shfl_xor_sync(0xffffffffu, m0, 2));
    m1 = mg_max_nan(m1, __shfl_xor_sync(0xffffffffu, m1, 2));
}

/* The epilogues' transpose-reduce. Each lane holds NT >= 8 values (NT a multiple of 8), v[j] for column
 * 8 (j / 2) + 2 (lane % 4) + j % 2 of a tile whose rows are spread over the 8 lanes that share lane % 4 (lane bits 4,
 * 3, 2: a warp's 16 accumulator rows). At each step a lane keeps half of its values and sends the other half to its
 * partner, so NT/2 + NT/4 + NT/8 shuffles (not 3 x NT) leave each lane the max over the 8 lanes of NT/8 distinct
 * columns, which it stores to dst at those columns: dst holds all NT of them. No branches; v is overwritten. */
template <int NT, int NV>
__device__ __forceinline__ void mg_transpose_max_store(float (&v)[NV], int lane, float *dst) {
    static_assert(NT >= 8 && NT % 8 == 0 && NT <= NV, "transpose-reduce: NT a multiple of 8, at most NV");
    const bool b16 = lane & 16, b8 = lane & 8, b4 = lane & 4;
#pragma unroll
    for (int j = 0; j < NT / 2; j++) {
        const float keep = b16 ? v[NT / 2 + j] : v[j], send = b16 ? v[j] : v[NT / 2 + j];
        v[j] = mg_max_nan(keep, __shfl_xor_sync(0xffffffffu, send, 16));
    }
#pragma unroll
    for (int j = 0; j < NT / 4; j++) {
        const float keep = b8 ? v[NT / 4 + j] : v[j], send = b8 ? v[j] : v[NT / 4 + j];
        v[j] = mg_max_nan(keep, __shfl_xor_sync(0xffffffffu, send, 8));
    }
#pragma unroll
    for (int j = 0; j < NT / 8; j++) {
        const float keep = b4 ? v[NT / 8 + j] : v[j], send = b4 ? v[j] : v[NT / 8 + j];
        v[j] = mg_max_nan(keep, __shfl_xor_sync(0xffffffffu, send, 4));
    }
    /* v[t] now holds original index j = base + t */
    const int base = (b16 ? NT / 2 : 0) + (b8 ? NT / 4 : 0) + (b4 ? NT / 8 : 0);
#pragma unroll
    for (int t = 0; t < NT / 8; t++) {
        const int j = base + t;
        dst[8 * (j >> 1) + 2 * (lane % 4) + (j & 1)] = v[t];
    }
}

/* ============================================================================================== */
/* wgmma.mma_async, both operands from shared memory, f32 accumulators                              */
/* ============================================================================================== */
/* mg_wgmma_bf16<N>: D(64 x N) (+)= A(64 x 16) * B(N x 16)^T, bf16 inputs   (m64nNk16.f32.bf16.bf16)
 * mg_wgmma_tf32<N>: D(64 x N) (+)= A(64 x 8)  * B(N x 8)^T,  tf32 inputs   (m64nNk8.f32.tf32.tf32)
 * d: this thread's N/2 accumulators (layout in the header comment). desc_a / desc_b: mg_make_desc_k128 of the
 * A tile (64 rows) and the B tile (N rows), advanced to the k-step. scale_d = 0 computes D = A*B (ignores d's
 * old value), 1 accumulates. Both operands K-major (imm-trans 0); tf32 has no transpose form at all.
 * tf32 reads the fp32 bit patterns in smem and uses their top 19 bits (the low 13 mantissa bits are ignored).
 * Available N: 64, 96, 128, 152, 192, 256 (96, 152: kernel 8's x tiles, e.g. M = 300 and 600 as 2 and 4 x n152;
 * add a specialisation here, in the same pattern, for others), and 248 as
 * mg_wgmma_*_n248 below.
 * Every thread of the warpgroup must call it (".sync.aligned"), with the same descriptors. */
template <int N>
__device__ __forceinline__ void mg_wgmma_bf16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d);
template <int N>
__device__ __forceinline__ void mg_wgmma_tf32(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b, int scale_d);

/* The accumulator operands of an m64nN wgmma, N/2 = 32, 48, 64, 76, 96 or 128 registers per thread: the PTX register
 * list "{%0, ..., %(N/2-1)}" (built from runs of 32 register names) and the matching "+f" constraints (runs of
 * 8). One definition each, shared by every wrapper. */
#define MG_ACC_R0 \
    "%0, %1, %2, %3, %4, %5, %6, %7,"\
    " %8, %9, %10, %11, %12, %13, %14, %15,"\
    " %16, %17, %18, %19, %20, %21, %22, %23,"\
    " %24, %25, %26, %27, %28, %29, %30, %31"
#define MG_ACC_R32 \
    " %32, %33, %34, %35, %36, %37, %38, %39,"\
    " %40, %41, %42, %43, %44, %45, %46, %47,"\
    " %48, %49, %50, %51, %52, %53, %54, %55,"\
    " %56, %57, %58, %59, %60, %61, %62, %63"
#define MG_ACC_R64 \
    " %64, %65, %66, %67, %68, %69, %70, %71,"\
    " %72, %73, %74, %75, %76, %77, %78, %79,"\
    " %80, %81, %82, %83, %84, %85, %86, %87,"\
    " %88, %89, %90, %91, %92, %93, %94, %95"
#define MG_ACC_R96 \
    " %96, %97, %98, %99, %100, %101, %102, %103,"\
    " %104, %105, %106, %107, %108, %109, %110, %111,"\
    " %112, %113, %114, %115, %116, %117, %118, %119,"\
    " %120, %121, %122, %123, %124, %125, %126, %127"
#define MG_ACC_R96_124 \
    " %96, %97, %98, %99, %100, %101, %102, %103,"\
    " %104, %105, %106, %107, %108, %109, %110, %111,"\
    " %112, %113, %114, %115, %116, %117, %118, %119,"\
    " %120, %121, %122, %123"
#define MG_ACC_R32_48 \
    " %32, %33, %34, %35, %36, %37, %38, %39,"\
    " %40, %41, %42, %43, %44, %45, %46, %47"
#define MG_ACC_R64_76 \
    " %64, %65, %66, %67, %68, %69, %70, %71,"\
    " %72, %73, %74, %75"
#define MG_ACC_STR_32 "{" MG_ACC_R0 "}"
#define MG_ACC_STR_64 "{" MG_ACC_R0 "," MG_ACC_R32 "}"
#define MG_ACC_STR_96 "{" MG_ACC_R0 "," MG_ACC_R32 "," MG_ACC_R64 "}"
#define MG_ACC_STR_128 "{" MG_ACC_R0 "," MG_ACC_R32 "," MG_ACC_R64 "," MG_ACC_R96 "}"
#define MG_ACC_STR_124 "{" MG_ACC_R0 "," MG_ACC_R32 "," MG_ACC_R64 "," MG_ACC_R96_124 "}"
#define MG_ACC_STR_48 "{" MG_ACC_R0 "," MG_ACC_R32_48 "}"
#define MG_ACC_STR_76 "{" MG_ACC_R0 "," MG_ACC_R32 "," MG_ACC_R64_76 "}"
#define MG_ACC8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), \
    "+f"(d[i + 6]), "+f"(d[i + 7])
#define MG_ACC_OPS_32 MG_ACC8(0), MG_ACC8(8), MG_ACC8(16), MG_ACC8(24)
#define MG_ACC_OPS_64 MG_ACC_OPS_32, MG_ACC8(32), MG_ACC8(40), MG_ACC8(48), MG_ACC8(56)
#define MG_ACC_OPS_96 MG_ACC_OPS_64, MG_ACC8(64), MG_ACC8(72), MG_ACC8(80), MG_ACC8(88)
#define MG_ACC_OPS_128 MG_ACC_OPS_96, MG_ACC8(96), MG_ACC8(104), MG_ACC8(112), MG_ACC8(120)
#define MG_ACC_OPS_124 MG_ACC_OPS_96, MG_ACC8(96), MG_ACC8(104), MG_ACC8(112), "+f"(d[120]), "+f"(d[121]), \
    "+f"(d[122]), "+f"(d[123])
#define MG_ACC_OPS_48 MG_ACC_OPS_32, MG_ACC8(32), MG_ACC8(40)
#define MG_ACC_OPS_76 MG_ACC_OPS_64, MG_ACC8(64), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75])

/* The wgmma asm statement (A and B from shared memory), shared by the specialisations of mg_wgmma_bf16 /
 * mg_wgmma_tf32 (MG_WGMMA_SS) and the n248 forms below: m64nN into the accumulators d[0 .. NACC); IA, IB, IP are
 * the operand numbers of desc_a, desc_b and scale_d (NACC, NACC + 1, NACC + 2); TYPE is the k and type suffix of
 * the instruction; IMM its trailing immediates (scale-a, scale-b, and for bf16 trans-a, trans-b). */
#define MG_WGMMA_SS_ASM(N, NACC, TYPE, IMM, IA, IB, IP)                                                           \
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #IP ", 0;\n"                                                \
                 "wgmma.mma_async.sync.aligned.m64n" #N TYPE " " MG_ACC_STR_##NACC ", %" #IA ", %" #IB            \
                 ", p, " IMM ";\n}\n"                                                                             \
                 : MG_ACC_OPS_##NACC                                                                              \
                 : "l"(desc_a), "l"(desc_b), "r"(scale_d))
#define MG_WGMMA_SS(FN, N, NACC, TYPE, IMM, IA, IB, IP)                                                           \
    template <>                                                                                                  \
    __device__ __forceinline__ void FN<N>(float (&d)[NACC], uint64_t desc_a, uint64_t desc_b, int scale_d) {    \
        MG_WGMMA_SS_ASM(N, NACC, TYPE, IMM, IA, IB, IP);                                                         \
    }

MG_WGMMA_SS(mg_wgmma_bf16, 64, 32, "k16.f32.bf16.bf16", "1, 1, 0, 0", 32, 33, 34)
MG_WGMMA_SS(mg_wgmma_bf16, 96, 48, "k16.f32.bf16.bf16", "1, 1, 0, 0", 48, 49, 50)
MG_WGMMA_SS(mg_wgmma_bf16, 128, 64, "k16.f32.bf16.bf16", "1, 1, 0, 0", 64, 65, 66)
MG_WGMMA_SS(mg_wgmma_bf16, 152, 76, "k16.f32.bf16.bf16", "1, 1, 0, 0", 76, 77, 78)
MG_WGMMA_SS(mg_wgmma_bf16, 192, 96, "k16.f32.bf16.bf16", "1, 1, 0, 0", 96, 97, 98)
MG_WGMMA_SS(mg_wgmma_bf16, 256, 128, "k16.f32.bf16.bf16", "1, 1, 0, 0", 128, 129, 130)
MG_WGMMA_SS(mg_wgmma_tf32, 64, 32, "k8.f32.tf32.tf32", "1, 1", 32, 33, 34)
MG_WGMMA_SS(mg_wgmma_tf32, 96, 48, "k8.f32.tf32.tf32", "1, 1", 48, 49, 50)
MG_WGMMA_SS(mg_wgmma_tf32, 128, 64, "k8.f32.tf32.tf32", "1, 1", 64, 65, 66)
MG_WGMMA_SS(mg_wgmma_tf32, 152, 76, "k8.f32.tf32.tf32", "1, 1", 76, 77, 78)
MG_WGMMA_SS(mg_wgmma_tf32, 192, 96, "k8.f32.tf32.tf32", "1, 1", 96, 97, 98)
MG_WGMMA_SS(mg_wgmma_tf32, 256, 128, "k8.f32.tf32.tf32", "1, 1", 128, 129, 130)
/* m64n248 into the first 124 of 128 accumulators (the last 4 are left alone): the narrow panels of kernel 4's
 * mixed-width tiling (ws_scheduler.cuh, "PANELS"), which keeps one 128-register accumulator array for both
 * widths. */
#define MG_WGMMA_SS_N248(FN, TYPE, IMM)                                                                          \
    __device__ __forceinline__ void FN(float (&d)[128], uint64_t desc_a, uint64_t desc_b, int scale_d) {        \
        MG_WGMMA_SS_ASM(248, 124, TYPE, IMM, 124, 125, 126);                                                     \
    }
MG_WGMMA_SS_N248(mg_wgmma_bf16_n248, "k16.f32.bf16.bf16", "1, 1, 0, 0")
MG_WGMMA_SS_N248(mg_wgmma_tf32_n248, "k8.f32.tf32.tf32", "1, 1")

/* ============================================================================================== */
/* wgmma.mma_async with A FROM REGISTERS (bf16), B from shared memory, f32 accumulators              */
/* ============================================================================================== */
/* mg_wgmma_bf16_rs<N>: D(64 x N) (+)= A(64 x 16) * B(N x 16)^T  (m64nNk16.f32.bf16.bf16, A in registers).
 * a: this thread's 4 x b32 A fragment (PTX ISA "Register fragment layout for matrix A", wgmma .m64nNk16,
 * .bf16; the same as mma.m16n8k16's A per warp): warp w = t / 32 of the warpgroup owns rows 16w .. 16w + 15;
 * with g = lane / 4, q = lane % 4, each register holds 2 bf16 (lower half = the smaller k):
 *     a[0] -> row 16w + g,     k 2q, 2q + 1          a[1] -> row 16w + g + 8, k 2q, 2q + 1
 *     a[2] -> row 16w + g,     k 2q + 8, 2q + 9      a[3] -> row 16w + g + 8, k 2q + 8, 2q + 9
 * (the accumulator layout of two adjacent n8 blocks, which is why FlashAttention-3 can feed P from registers.)
 * desc_b: K-major B tile descriptor advanced to the k-step. The register form has no imm-trans-a; its
 * immediates are imm-scale-a = 1, imm-scale-b = 1, imm-trans-b = 0 (K-major B).
 * The registers in a must not be written until a wgmma.wait_group covering this wgmma returned (PTX ISA), and a
 * wgmma.fence must separate their last ordinary write from this instruction. */
template <int N>
__device__ __forceinline__ void mg_wgmma_bf16_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,
                                                 int scale_d);

/* One specialisation of mg_wgmma_bf16_rs: the four A registers are operands NACC .. NACC + 3, desc_b NACC + 4,
 * scale_d NACC + 5 (given as I0 .. I3, IB, IP). */
#define MG_WGMMA_RS(N, NACC, I0, I1, I2, I3, IB, IP)                                                              \
    template <>                                                                                                  \
    __device__ __forceinline__ void mg_wgmma_bf16_rs<N>(float (&d)[NACC], const uint32_t (&a)[4], uint64_t desc_b, \
                                                        int scale_d) {                                           \
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #IP ", 0;\n"                                           \
                     "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 " MG_ACC_STR_##NACC                \
                     ", {%" #I0 ", %" #I1 ", %" #I2 ", %" #I3 "}, %" #IB ", p, 1, 1, 0;\n}\n"                     \
                     : MG_ACC_OPS_##NACC                                                                         \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(scale_d));                  \
    }

MG_WGMMA_RS(64, 32, 32, 33, 34, 35, 36, 37)
MG_WGMMA_RS(128, 64, 64, 65, 66, 67, 68, 69)
MG_WGMMA_RS(192, 96, 96, 97, 98, 99, 100, 101)
MG_WGMMA_RS(256, 128, 128, 129, 130, 131, 132, 133)

/* ============================================================================================== */
/* Host: TMA descriptors                                                                           */
/* ============================================================================================== */

/* Bytes per element of a TMA data type (0 for the ones this project does not use). */
static inline size_t mg_tma_elem_bytes(CUtensorMapDataType t) {
    switch (t) {
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_TFLOAT32:
    case CU_TENSOR_MAP_DATA_TYPE_INT32:
    case CU_TENSOR_MAP_DATA_TYPE_UINT32: return 4;
    case CU_TENSOR_MAP_DATA_TYPE_BFLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_FLOAT16:
    case CU_TENSOR_MAP_DATA_TYPE_UINT16: return 2;
    case CU_TENSOR_MAP_DATA_TYPE_UINT8: return 1;
    default: return 0;
    }
}

/* cuTensorMapEncodeTiled from the driver, looked up once (thread-safe static initialisation). NULL with
 * *why set if the driver does not provide it. */
static inline PFN_cuTensorMapEncodeTiled_v12000 mg_tma_encode_fn(const char **why) {
    struct lookup {
        PFN_cuTensorMapEncodeTiled_v12000 fn;
        const char *why;
        lookup() : fn(nullptr), why(nullptr) {
            void *p = nullptr;
            cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
            cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
            if (e != cudaSuccess) {
                why = cudaGetErrorString(e);
                (void)cudaGetLastError(); /* do not leave a sticky-looking error for the next MG_LAUNCH_CHECK */
            } else if (q != cudaDriverEntryPointSuccess || !p) {
                why = "the driver has no cuTensorMapEncodeTiled (needs a CUDA 12.0+ driver)";
            } else {
                fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
            }
        }
    };
    static const lookup l;
    if (why) *why = l.why;
    return l.fn;
}

/* The checks of a 2D row-major TMA tensor (mg_make_tma_2d's arguments; also each panel of mg_make_tma_3d): MG_OK, or
 * MG_ERR_INVALID_ARG / MG_ERR_UNSUPPORTED with a message naming the violated constraint. */
static inline mg_status mg_tma_check_2d(const CUtensorMap *map, const void *base, CUtensorMapDataType dtype,
                                        uint64_t rows, uint64_t cols, uint64_t row_stride_bytes, uint32_t box_rows,
                                        uint32_t box_cols, CUtensorMapSwizzle swizzle) {
    if (!map || !base) return mg_set_error(MG_ERR_INVALID_ARG, "mg_make_tma: NULL descriptor or base pointer");
    const size_t eb = mg_tma_elem_bytes(dtype);
    if (eb == 0) return mg_set_error(MG_ERR_UNSUPPORTED, "mg_make_tma: unsupported data type %d", (int)dtype);
    if ((uintptr_t)base % 16 != 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "TMA needs a 16-byte aligned base address (got %p)", base);
    if (rows < 1 || cols < 1 || rows > (1ull << 32) || cols > (1ull << 32))
        return mg_set_error(MG_ERR_UNSUPPORTED, "TMA tensor dims must be in 1 .. 2^32 (got %llu x %llu)",
                            (unsigned long long)rows, (unsigned long long)cols);
    if (row_stride_bytes % 16 != 0 || row_stride_bytes >= (1ull << 40) || row_stride_bytes < cols * eb)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "TMA row stride must be a multiple of 16 bytes, >= cols * %zu and < 2^40 (got %llu bytes "
                            "for %llu columns)",
                            eb, (unsigned long long)row_stride_bytes, (unsigned long long)cols);
    if (box_rows < 1 || box_rows > 256 || box_cols < 1 || box_cols > 256 || (box_cols * eb) % 16 != 0)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "TMA box must be 1..256 x 1..256 with a row of a multiple of 16 bytes (got %u x %u of "
                            "%zu-byte elements)",
                            box_rows, box_cols, eb);
    const size_t span = swizzle == CU_TENSOR_MAP_SWIZZLE_128B  ? 128
                        : swizzle == CU_TENSOR_MAP_SWIZZLE_64B ? 64
                        : swizzle == CU_TENSOR_MAP_SWIZZLE_32B ? 32
                                                               : 0;
    if (span && box_cols * eb > span)
        return mg_set_error(MG_ERR_UNSUPPORTED, "TMA box row of %zu bytes exceeds the %zu-byte swizzle span",
                            box_cols * eb, span);
    return MG_OK;
}

/* Encodes a 2D row-major tensor for TMA loads: rows x cols elements of dtype at base (device memory),
 * consecutive rows row_stride_bytes apart; each load brings a box_rows x box_cols box (box_cols along the
 * contiguous dimension). Out-of-bounds elements of a box read as zero. promo: the L2 promotion, measured per map
 * (runs 158 and 161 on an H100: kernel 10's slice maps 0.5-3.2% faster without it, kernels 4 and 6 level either way;
 * kernel 8's W panels, mg_make_tma_3d: run 155).
 * Returns MG_OK, or MG_ERR_UNSUPPORTED / MG_ERR_CUDA with a message naming the violated constraint. */
static inline mg_status mg_make_tma_2d(CUtensorMap *map, const void *base, CUtensorMapDataType dtype, uint64_t rows,
                                       uint64_t cols, uint64_t row_stride_bytes, uint32_t box_rows, uint32_t box_cols,
                                       CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promo) {
    const mg_status st = mg_tma_check_2d(map, base, dtype, rows, cols, row_stride_bytes, box_rows, box_cols, swizzle);
    if (st != MG_OK) return st;
    const char *why = nullptr;
    PFN_cuTensorMapEncodeTiled_v12000 encode = mg_tma_encode_fn(&why);
    if (!encode) return mg_set_error(MG_ERR_CUDA, "cannot get cuTensorMapEncodeTiled: %s", why ? why : "unknown");

    const cuuint64_t gdim[2] = {cols, rows};
    const cuuint64_t gstride[1] = {row_stride_bytes}; /* dims 1..rank-1, in bytes */
    const cuuint32_t box[2] = {box_cols, box_rows};
    const cuuint32_t estride[2] = {1, 1};
    CUresult r = encode(map, dtype, 2, const_cast<void *>(base), gdim, gstride, box, estride,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promo, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return mg_set_error(MG_ERR_CUDA,
                            "cuTensorMapEncodeTiled failed (CUresult %d) for %llu x %llu, stride %llu B, box %u x %u",
                            (int)r, (unsigned long long)rows, (unsigned long long)cols,
                            (unsigned long long)row_stride_bytes, box_rows, box_cols);
    return MG_OK;
}

/* Encodes a 3D tensor of panels for TMA loads: panels x rows x cols elements of dtype at base, consecutive rows
 * row_stride_bytes apart and consecutive panels panel_stride_bytes apart; each load brings box_panels x box_rows x
 * box_cols (kernel 8's W map: one panel's, box_panels = 1; tools/probe_start.cu's tma3d variants also deeper
 * boxes). Out-of-bounds elements (rows past `rows`, panels past `panels`) read as zero. The box and swizzle checks
 * are one panel's as a 2D tensor (mg_tma_check_2d). promo: the L2 promotion (mg_make_tma_2d's is 256 B; over panels
 * of 128-byte rows it made kernel 8's W stream ~2 us slower on an H200 and read 1.25x its bytes' L2 sectors:
 * tools/probe_start.cu's tma3d variants, run 155). */
static inline mg_status mg_make_tma_3d(CUtensorMap *map, const void *base, CUtensorMapDataType dtype, uint64_t panels,
                                       uint64_t rows, uint64_t cols, uint64_t row_stride_bytes,
                                       uint64_t panel_stride_bytes, uint32_t box_panels, uint32_t box_rows,
                                       uint32_t box_cols, CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promo) {
    const mg_status st = mg_tma_check_2d(map, base, dtype, rows, cols, row_stride_bytes, box_rows, box_cols, swizzle);
    if (st != MG_OK) return st;
    if (panels < 1 || panels > (1ull << 32))
        return mg_set_error(MG_ERR_UNSUPPORTED, "TMA tensor dims must be in 1 .. 2^32 (got %llu panels)",
                            (unsigned long long)panels);
    if (box_panels < 1 || box_panels > 256)
        return mg_set_error(MG_ERR_UNSUPPORTED, "TMA box dims must be in 1 .. 256 (got %u panels)", box_panels);
    if (panel_stride_bytes % 16 != 0 || panel_stride_bytes >= (1ull << 40) ||
        panel_stride_bytes < rows * row_stride_bytes)
        return mg_set_error(MG_ERR_UNSUPPORTED,
                            "TMA panel stride must be a multiple of 16 bytes, >= rows x row stride and < 2^40 (got %llu "
                            "bytes for %llu rows of %llu)",
                            (unsigned long long)panel_stride_bytes, (unsigned long long)rows,
                            (unsigned long long)row_stride_bytes);
    const char *why = nullptr;
    PFN_cuTensorMapEncodeTiled_v12000 encode = mg_tma_encode_fn(&why);
    if (!encode) return mg_set_error(MG_ERR_CUDA, "cannot get cuTensorMapEncodeTiled: %s", why ? why : "unknown");
    const cuuint64_t gdim[3] = {cols, rows, panels};
    const cuuint64_t gstride[2] = {row_stride_bytes, panel_stride_bytes};
    const cuuint32_t box[3] = {box_cols, box_rows, box_panels};
    const cuuint32_t estride[3] = {1, 1, 1};
    CUresult r = encode(map, dtype, 3, const_cast<void *>(base), gdim, gstride, box, estride,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, promo,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return mg_set_error(MG_ERR_CUDA,
                            "cuTensorMapEncodeTiled failed (CUresult %d) for %llu panels x %llu x %llu, strides %llu / "
                            "%llu B, box %u x %u x %u",
                            (int)r, (unsigned long long)panels, (unsigned long long)rows, (unsigned long long)cols,
                            (unsigned long long)row_stride_bytes, (unsigned long long)panel_stride_bytes, box_panels,
                            box_rows, box_cols);
    return MG_OK;
}

#endif /* MG_HOPPER_CUH */
