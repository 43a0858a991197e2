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
    /* the fused finish (THE FUSED FINISH): fused = 1: out (M or N elements of E), the done counter and fin (M or N
     * words) in the workspace, zero between launches */
    int fused;
    void *out;
    int *done;
    unsigned *fin;
};

/* bar.sync on named barrier id for `threads` threads (a multiple of 32). */
__device__ __forceinline__ void named_bar_sync(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

}  // namespace mgsab

#endif /* MG_SWAPAB_PARAMS_CUH */
