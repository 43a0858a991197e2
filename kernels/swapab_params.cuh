/* swapab_params.cuh: kernel 8's kernel parameters and the named barrier its roles synchronise on, shared by its
 * kernel (kernels/swapab_kernel.cuh) and its fused finish (kernels/swapab_finish.cuh). */
#ifndef MG_SWAPAB_PARAMS_CUH
#define MG_SWAPAB_PARAMS_CUH

#include <cuda.h>

namespace mgsab {

/* Kernel parameters (__grid_constant__: TMA needs the descriptors' param-space address). Everything but the
 * descriptors and pointers is a field of the launch plan (mg_sab_plan). */
struct Params {
    CUtensorMap w;      /* W in panels (cdiv(K, SUB_K) x N x SUB_K: 08_wgmma_swapab.cu's W PANELS), boxes of
                         * WROWS x SUB_K of one panel */
    CUtensorMap x;      /* x (M x K), boxes of NX x SUB_K (x multicast: XH0 x SUB_K, rank 0's half) */
    CUtensorMap x1;     /* cluster 2: boxes of XH1 x SUB_K (rank 1's half); unused otherwise */
    const void *bias;
    float *partial;
    int *count;         /* split counters, one per slab (zero between launches); NULL when S = 1 */
    float *slots;       /* split slots, S per slab of 64 x NX floats; NULL when S = 1 */
    int m, n, k, max_dim;
    int nk, xtiles, splits, units;
    int slabs;          /* 64-row W slabs = cdiv(N, 64) (the plan's): the md1 finish's all-(-inf) count */
    int wcast;          /* cluster 2: 1 = W multicast (w: 64-row boxes, x: NX-row boxes), 0 = x multicast */
    /* the fused finish (THE FUSED FINISH): fused = 3 (max_dim 1, THE START TICKET): out (M elements of E), the start
     * word tick, zgen and fin (M words) in the workspace; fused = 1 (max_dim 0, the last CTA): out (N elements), the
     * done counter and fin (N words, zero between launches). fused = 2 (max_dim 0, THE GRID FINISH): out, the grid
     * barrier's word gbar (zero between launches) and gslot (gslots >= grid tagged 64-bit words: THE TAGGED SLOTS)
     * in the workspace; gown = 1: each CTA finishes its own unit's W rows (one unit per CTA, one x tile, S = 1), else
     * gchunk columns from CTA b gchunk */
    int fused;
    int gown, gchunk, gslots;
    void *out;
    int *done;
    unsigned long long *tick;
    unsigned *zgen;
    unsigned *fin;
    unsigned *gbar;
    unsigned long long *gslot;
};

/* atomicAdd with acquire-release semantics at GPU scope: its release publishes what this thread stored, and what a
 * barrier ordered before it from the other threads of the CTA (cumulativity); its acquire makes what the other CTAs
 * released before their own arrivals visible to this thread after it. */
__device__ __forceinline__ int atom_add_acq_rel_gpu(int *p, int v) {
    int old;
    asm volatile("atom.add.acq_rel.gpu.global.s32 %0, [%1], %2;\n" : "=r"(old) : "l"(p), "r"(v) : "memory");
    return old;
}

}  // namespace mgsab

#endif /* MG_SWAPAB_PARAMS_CUH */
