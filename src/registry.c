/* registry.c: THE table of kernel variants. The library, the CLI, the tests, the benchmark and the plots
 * read this table and nothing else. Each kernel's code lives in kernels/NN_<name>.cu and exports one
 * mg_kernel_ops named mg_ops_<name>; the table references it directly, so linking the table links every kernel. */
#include "gemv_stream.h"
#include "ozaki.h"
#include "mg_kernel.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define P_FP32 (1u << MG_PREC_FP32)
#define P_TF32 (1u << MG_PREC_TF32)
#define P_BF16 (1u << MG_PREC_BF16)

#define DECLARE_OPS(sym) extern const mg_kernel_ops sym;
DECLARE_OPS(mg_ops_cublas)
DECLARE_OPS(mg_ops_naive)
DECLARE_OPS(mg_ops_mma_sync)
DECLARE_OPS(mg_ops_wgmma_tma)
DECLARE_OPS(mg_ops_wgmma_ws)
DECLARE_OPS(mg_ops_cublas_bf16x3)
DECLARE_OPS(mg_ops_wgmma_bf16x3)
DECLARE_OPS(mg_ops_gemv_stream)
DECLARE_OPS(mg_ops_wgmma_swapab)
DECLARE_OPS(mg_ops_cublas_int8x3)
DECLARE_OPS(mg_ops_wgmma_int8x3)
DECLARE_OPS(mg_ops_gemv_int8w)

static const mg_kernel table[] = {
    /* id name            technique                                                                 precisions               sm  tile config     rank base device fn (ncu -k)  ops */
    {0, "cublas",        "cuBLAS GEMM (SGEMM / FAST_TF32 / GemmEx bf16) to y, then bias+max and finalize kernels",
                                                                                                     P_FP32 | P_TF32 | P_BF16, 80, "-",            1, 1, "xmma|cutlass|sgemm|gemmk|gemv|sm90_", &mg_ops_cublas, NULL},
    {1, "naive",         "SIMT fp32 FMA, one thread per output, fused bias + NaN-propagating max epilogue",
                                                                                                     P_FP32 | P_TF32 | P_BF16, 70, "-",            0, 0, "naive_kernel", &mg_ops_naive, NULL},
    {2, "mma_sync",      "mma.sync tensor cores (m16n8k8 tf32, m16n8k16 bf16), ldmatrix, cp.async multi-stage pipeline, fused epilogue",
                                                                                                     P_TF32 | P_BF16,          80, "mma_sync",     2, 0, "mma_sync_kernel", &mg_ops_mma_sync, NULL},
    {3, "wgmma_tma",     "wgmma from TMA-loaded swizzled smem, mbarrier multi-stage ring, fused epilogue",
                                                                                                     P_TF32 | P_BF16,          90, "wgmma_tma",    3, 0, "wgmma_tma_kernel", &mg_ops_wgmma_tma, NULL},
    {4, "wgmma_ws",      "warp-specialized wgmma: TMA producer + 2 consumer warpgroups (setmaxnreg), persistent grouped grid, fused epilogue overlapping the next tile's loads, stream-K below half a wave",
                                                                                                     P_TF32 | P_BF16,          90, "wgmma_ws",     4, 0, "ws_kernel", &mg_ops_wgmma_ws, NULL},
    {5, "cublas_bf16x3", "cuBLAS split precision: x, W split to bf16 hi/lo, hi*hi + hi*lo + lo*hi in three GemmEx calls, then bias+max and finalize",
                                                                                                     P_FP32,                   80, "-",            2, 1, "xmma|cutlass|sgemm|gemmk|gemv|sm90_", &mg_ops_cublas_bf16x3, NULL},
    {6, "wgmma_bf16x3",  "fused split precision on kernel 4's design: W split to bf16 hi/lo once, the fp32 x tile split in registers, three register-A bf16 wgmma per k-step",
                                                                                                     P_FP32,                   90, "wgmma_bf16x3", 5, 0, "ws_kernel", &mg_ops_wgmma_bf16x3, NULL},
    /* off the tensor-core ladder: the small-M path. Auto takes it where run 47 measured it ahead (mg_gemv_auto_fits,
     * kernels/07_gemv_stream.cu). */
    {7, "gemv_stream",   "small M: W streamed once with 16-byte loads, x from L1, exact fp32 FMA on the CUDA cores, fused bias + max epilogue",
                                                                                                     P_FP32 | P_TF32 | P_BF16, 90, "-",            6, 0, "gemv_stream_kernel", &mg_ops_gemv_stream, mg_gemv_auto_fits},
    /* small and mid M (M <= 1024), swap-AB: W's rows on wgmma's M side. Not in auto (rank 0) until a measured dispatch table
     * places it (issue 18). Its tile configurations are the rows wgmma_swapab_n8 .. _n256 (one per x-tile width). */
    {8, "wgmma_swapab",  "small and mid M swap-AB: W rows on wgmma's M side (64 per consumer), x rows on its N side (x tiles of 8..256, several up to M = 1024), deep TMA ring, warp-specialized, optional clusters of 2 multicasting x, fused epilogue, deterministic split-K",
                                                                                                     P_TF32 | P_BF16,          90, "wgmma_swapab_n8", 0, 0, "swapab_kernel", &mg_ops_wgmma_swapab, NULL},
    /* issue 19's baseline: int8 split precision from cuBLAS (Ozaki scheme I, src/ozaki.h), the per-row range guard and
     * the exact fallback for the rows it flags. Not in auto (rank 0); a dispatch table decides. */
    {9, "cublas_int8x3", "cuBLAS int8 split precision: x, W scaled per row and sliced to s8 hi/lo, hh and the shared cross term in two GemmEx s8->s32 calls, combine + bias + max, a per-row range guard with an exact SIMT fallback",
                                                                                                     P_FP32,                   80, "-",            0, 1, "xmma|cutlass|sgemm|gemmk|gemv|sm90_|oz_slice|oz_fallback|int8x3_combine", &mg_ops_cublas_int8x3, NULL},
    /* issue 19 item 1: kernel 9's slices, guard and fallback with the three int8 products fused on s8 wgmma (the
     * warp-specialized design of kernels 4 and 8). Not in auto by rank (0): the dispatch table places it, within
     * mg_oz_auto_fits (K from 1024 to 66052). */
    {10, "wgmma_int8x3", "fused int8 split precision: kernel 9's s8 hi/lo slices by TMA, three s8 wgmma per k32 step into two int32 accumulators (hh, shared cross), combine + bias + max in the epilogue, the per-row guard with the exact SIMT fallback",
                                                                                                     P_FP32,                   90, "wgmma_int8x3", 0, 0, "int8x3_kernel|oz_slice|oz_fallback", &mg_ops_wgmma_int8x3, mg_oz_auto_fits},
    /* issue 19 item 4: small M in fp32 mode from kernel 10's W slices (half fp32's bytes) with x in fp32, the W-only
     * guard and the same exact fallback. Not in auto by rank (0): the dispatch table places it, within
     * mg_gemv_i8_auto_fits (M <= 8, K from 1024 to 66052). */
    {11, "gemv_int8w",   "small M, fp32 mode: W as kernel 10's two s8 slices streamed once (half fp32's bytes), x in fp32, exact digit decode + fp32 FMA on the CUDA cores, fused epilogue, the W-only guard with the exact fallback",
                                                                                                     P_FP32,                   90, "-",            0, 0, "gemv_i8_kernel|oz_slice|oz_fallback", &mg_ops_gemv_int8w, mg_gemv_i8_auto_fits},
};

int mg_registry_count(void) { return (int)(sizeof table / sizeof table[0]); }

const mg_kernel *mg_registry_at(int index) {
    return (index >= 0 && index < mg_registry_count()) ? &table[index] : NULL;
}

const mg_kernel *mg_registry_find(int id) {
    for (int i = 0; i < mg_registry_count(); i++)
        if (table[i].id == id) return &table[i];
    return NULL;
}

const mg_kernel *mg_registry_find_name(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < mg_registry_count(); i++)
        if (strcasecmp(table[i].name, name) == 0) return &table[i];
    return NULL;
}

int mg_kernel_available(const mg_kernel *k) { return k && k->ops && k->ops->launch && k->ops->plan; }

mg_status mg_registry_parse(const char *s, int *id) {
    if (!s || !*s || !id) return mg_set_error(MG_ERR_KERNEL, "empty kernel name");
    if (strcasecmp(s, "auto") == 0) { *id = MG_KERNEL_AUTO; return MG_OK; }
    char *end = NULL;
    long v = strtol(s, &end, 10);
    if (end && *end == '\0') {
        if (!mg_registry_find((int)v) || v < 0 || v > 1000000)
            return mg_set_error(MG_ERR_KERNEL, "unknown kernel number '%s' (see 'maxgemm list')", s);
        *id = (int)v;
        return MG_OK;
    }
    const mg_kernel *k = mg_registry_find_name(s);
    if (!k) return mg_set_error(MG_ERR_KERNEL, "unknown kernel '%s' (see 'maxgemm list')", s);
    *id = k->id;
    return MG_OK;
}

const mg_kernel *mg_registry_auto(const mg_problem *p, int sm) {
    const mg_kernel *best = NULL;
    for (int i = 0; i < mg_registry_count(); i++) {
        const mg_kernel *k = &table[i];
        if (!mg_kernel_available(k) || k->auto_rank <= 0) continue;
        if (!(k->precisions & (1u << p->prec)) || sm < k->min_sm) continue;
        if (k->auto_fits && !k->auto_fits(p)) continue;
        if (k->ops->supports && k->ops->supports(p, sm) != MG_OK) continue;
        if (!best || k->auto_rank > best->auto_rank) best = k;
    }
    return best;
}
