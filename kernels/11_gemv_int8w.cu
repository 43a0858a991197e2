/* 11_gemv_int8w.cu: kernel 11, fp32-mode accuracy at small M from HALF the weight bytes (issue 19, item 4).
 *
 * What it shows: at M <= 8 the fp32-mode forward is a matrix-vector product that must read W once; fp32 W is
 * 256 MiB at N = K = 8192, and kernel 7 (gemv_stream) streams it at that floor (~62 us at the 4.28 TB/s copy rate).
 * Kernel 10's prepare already holds W as two s8 slices per element (T = 256 hi + lo, w ~= T u_w with one unit u_w per
 * row: src/ozaki.h), 2 bytes instead of 4. This kernel streams those slices (128 MiB: a 31 us floor) and keeps x in
 * fp32: y_ij = u_wj * sum_k x_ik T_jk + b_j. Only W's slicing rounds (|w - T u_w| <= (1/2 + 2^-9) u_w); x is exact and
 * nothing is dropped, so no lo*lo term and no x-side error: the error is below kernel 10's for the same inputs.
 *
 * The decode (4 elements from one 32-bit word of each slice): T + 32896 = 256 (hi + 128) + (lo + 128) is a 16-bit
 * number whose bytes are the slice bytes with their sign bits flipped, so one PRMT gathers [lo_e, hi_e] and one LOP3
 * (& 0xffff, ^ 0x4B008080) makes the fp32 bit pattern of 2^23 + T + 32896; one FADD of -(2^23 + 32896) leaves T as an
 * exact float. Then R x MT fp32 FMAs with the x values (the same arithmetic as kernel 7 on T instead of w).
 *
 * Layout (kernel 7's): a block is 8 warps, warp w owns R = 4 consecutive W rows (the block covers 32 columns of y)
 * and a group of up to MT <= 8 rows of x (blockIdx.y; larger M runs more groups, correct for any M, fast for small).
 * A warp step covers 512 k in 4 word groups; in group q lane l takes k = 128 q + 4 l .. + 3: one 4-byte word of each
 * slice of each of its R rows (ld.global.cs: streamed past L1) and the matching float4 of each x row (ld.global.nc:
 * L1-resident, every warp reads the same x), so each load instruction is contiguous across the warp (a first version
 * gave each lane 16 consecutive k: 16 cache lines per x load). Row pointers are made once and advanced per step. U
 * steps (2 at MT <= 2, else 1) are loaded before any is used. Words and x groups past the row are masked (the slices
 * are zero-padded to ldk, a multiple of 16); x rows that are not 16-byte multiples or not 16-byte aligned take 4-byte
 * loads.
 *
 * One forward: (1) the shared x pre-pass (src/ozaki.h mg_oz_prepass) with the W-ONLY guard (mg_oz_bound_w): per x row
 * amax, ||x||^2, finiteness, the route; flagged rows listed; the fallback row filled with -inf. No x slices. (2) this
 * kernel, launched with programmatic dependent launch when mg_options.pdl allows (not under stream capture): it
 * streams W while the pre-pass runs and waits (griddepcontrol.wait) only before its epilogue reads the flags; flagged
 * rows are -inf in its partial rows. (3) the shared exact fallback (mg_oz_fallback, kernel 1's arithmetic on the fp32
 * W) for the flagged rows into one extra partial row. W with NaN / inf: prepare names kernel 1 the runner. K = 0:
 * y = b. K > 66052: W has no slices (mg_oz_prepare_w), every row is flagged and runs the fallback, as in kernel 10.
 * Partial rows: max_dim 1, partial[t * M + i] over the block's 32 columns (cdiv(N, 32) rows); max_dim 0,
 * partial[g * N + j] over the group's rows (cdiv(M, 8) rows); then the fallback's row.
 *
 * Run:  build/maxgemm run --kernel 11 --m 8 --precision fp32 --check --no-shortcut   (--m 1..8, --max-dim 0)
 * Measured (H200, run 60, same process, N = K = 8192, max_dim 1 / 0): M = 1 0.0433 / 0.0453 ms = 1.65x / 1.58x kernel 7,
 * M = 4 0.0490 / 0.0508 ms = 1.87x / 1.81x, M = 8 0.0727 / 0.0745 ms = 1.17x / 1.21x (issue-bound at 16 warps per SM:
 * notes/19_int8_ozaki.md section 9); max abs error 1.4e-5 .. 2.0e-5 (md0, 5 seeds).
 */
#include <cuda_runtime.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gemv_epilogue.cuh"
#include "mg_kernel.h"
#include "ozaki.h"

namespace {

using mg_gemv::BN;   /* the layout both gemv kernels share (gemv_epilogue.cuh) */
using mg_gemv::MAX_GROUPS;
using mg_gemv::MG;
using mg_gemv::R;
using mg_gemv::WARPS;

/* 4 W elements from one word of each slice: t[e] = 256 hi_e + lo_e, exact (src/ozaki.h mg_oz_decode). */
__device__ __forceinline__ void decode4(uint32_t lo, uint32_t hi, float t[4]) {
#pragma unroll
    for (int e = 0; e < 4; e++) t[e] = mg_oz_decode(__byte_perm(lo, hi, 0x0040u + e * 0x0011u));   /* [lo_e, hi_e] */
}

struct Args {
    const float *x;
    const int8_t *wsl;     /* W rows [lo | hi], row stride 2 ldk bytes (mg_oz_prepare_w) */
    const float *uw, *b;
    const int *flag;       /* the pre-pass's routes: nonzero rows are computed by the fallback */
    float *partial;
    int M, N, K, ldk, nw;  /* nw: 4-byte words per slice row (ldk / 4; 0 when no slices exist) */
    int max_dim;
};

template <int MT, int U, bool XVEC>
__global__ void __launch_bounds__(WARPS * 32, XVEC ? 2 : 1) gemv_i8_kernel(const Args a) {
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");   /* the fallback (PDL) may be scheduled */
    __shared__ float red[WARPS][MT];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int j0 = blockIdx.x * BN + warp * R;
    const int i0 = blockIdx.y * MG;
    const int rows = min(MT, a.M - i0);   /* >= 1: the grid has cdiv(M, MG) groups */
    /* clamped rows and columns: every lane runs the same loop; the epilogue masks them */
    auto wrow = [&](int r) { return a.wsl + (size_t)min(j0 + r, a.N - 1) * (size_t)(2 * a.ldk); };
    auto xrow = [&](int m) { return a.x + (size_t)(i0 + min(m, rows - 1)) * a.K; };

    float acc[R][MT];
#pragma unroll
    for (int r = 0; r < R; r++)
#pragma unroll
        for (int m = 0; m < MT; m++) acc[r][m] = 0.f;

    /* A warp step covers 512 k (128 words of 4 slice bytes): in word group q the lanes take words 32 q + lane, so
     * every load instruction (4 bytes of a slice, 16 bytes of an x row) is contiguous across the warp. */
    /* The row pointers, made once (lane's word / float4 folded in) and advanced one step at a time: in the loop every
     * load is a register base plus an immediate (recomputing them per use cost ~40% more instructions at MT = 8). */
    const unsigned *wl[R], *wh[R];
    const float4 *xq[MT];
#pragma unroll
    for (int r = 0; r < R; r++) {
        wl[r] = reinterpret_cast<const unsigned *>(wrow(r)) + lane;
        wh[r] = reinterpret_cast<const unsigned *>(wrow(r) + a.ldk) + lane;
    }
#pragma unroll
    for (int m = 0; m < MT; m++) xq[m] = reinterpret_cast<const float4 *>(xrow(m)) + lane;
    for (int s0 = 0; s0 < a.nw; s0 += 128 * U) {
        uint32_t lo[U][4][R], hi[U][4][R];
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const bool in = s0 + 128 * u + 32 * q + lane < a.nw;
#pragma unroll
                for (int r = 0; r < R; r++) {
                    lo[u][q][r] = in ? __ldcs(wl[r] + 128 * u + 32 * q) : 0u;
                    hi[u][q][r] = in ? __ldcs(wh[r] + 128 * u + 32 * q) : 0u;
                }
            }
#pragma unroll
        for (int r = 0; r < R; r++) {
            wl[r] += 128 * U;
            wh[r] += 128 * U;
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
            for (int q = 0; q < 4; q++) {
                const int k4 = 4 * (s0 + 128 * u + 32 * q + lane);
                float t[R][4];
#pragma unroll
                for (int r = 0; r < R; r++) decode4(lo[u][q][r], hi[u][q][r], t[r]);
#pragma unroll
                for (int m = 0; m < MT; m++) {
                    float xf[4];
                    if (XVEC) {   /* K % 4 == 0: a group of 4 is all in or all out */
                        const float4 xv = k4 < a.K ? __ldg(xq[m] + 128 * u + 32 * q) : make_float4(0.f, 0.f, 0.f, 0.f);
                        xf[0] = xv.x; xf[1] = xv.y; xf[2] = xv.z; xf[3] = xv.w;
                    } else {
#pragma unroll
                        for (int e = 0; e < 4; e++) xf[e] = k4 + e < a.K ? __ldg(xrow(m) + k4 + e) : 0.f;
                    }
#pragma unroll
                    for (int r = 0; r < R; r++)
#pragma unroll
                        for (int e = 0; e < 4; e++) acc[r][m] = fmaf(xf[e], t[r][e], acc[r][m]);
                }
            }
#pragma unroll
        for (int m = 0; m < MT; m++) xq[m] += 128 * U;
    }

    /* The pre-pass's flags: written by the kernel before this one in the stream (PDL may have started us early). */
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
    int pass[MT];
#pragma unroll
    for (int m = 0; m < MT; m++) pass[m] = m < rows && a.flag[i0 + m] == MG_OZ_PASS;

    /* Warp sums, then y = u_w * sum + b (every lane), masked to -inf outside M x N and on flagged rows. */
#pragma unroll
    for (int r = 0; r < R; r++) {
        const int jc = min(j0 + r, a.N - 1);
        const float uw = a.uw[jc], bj = a.b[jc];
#pragma unroll
        for (int m = 0; m < MT; m++) {
            float s = acc[r][m];
#pragma unroll
            for (int off = 16; off > 0; off >>= 1) s += __shfl_xor_sync(0xffffffffu, s, off);
            acc[r][m] = j0 + r < a.N && pass[m] ? fmaf(s, uw, bj) : -INFINITY;
        }
    }

    mg_gemv_store_maxima<WARPS, R, MT>(acc, red, warp, lane, j0, i0, rows, a.M, a.N, a.max_dim, a.partial);
}

/* The private part of a launch plan (mg_launch_plan::priv). */
struct gi8_priv {
    int step;               /* MG_OZ_STEP_* (src/ozaki.h) */
    int mt_log2;            /* MT = 1 << mt_log2: 1, 2, 4 or 8 */
    int xvec;               /* x rows 16-byte multiples and x 16-byte aligned: 16-byte x loads and pre-pass loads */
    int nw;                 /* 4-byte words per slice row, ldk / 4 (0: ZERO and FALLBACK, no product runs) */
    int grid_x, grid_y;     /* column blocks cdiv(N, 32), row groups cdiv(M, 8) */
    int main_rows;          /* this kernel's partial rows; the fallback's is the next one */
    int fb_grid;            /* the exact fallback's grid (mg_oz_fallback_grid) */
    int pdl;                /* launch with programmatic dependent launch after the pre-pass (mg_options.pdl) */
    mg_oz_xlayout xl;       /* the workspace: the pre-pass's (no x slices) */
};
static_assert(sizeof(gi8_priv) <= sizeof(((mg_launch_plan *)nullptr)->priv.bytes), "gi8_priv fits priv");

mg_status gi8_supports(const mg_problem *p, int sm) {
    if (p->prec != MG_PREC_FP32)
        return mg_set_error(MG_ERR_UNSUPPORTED, "gemv_int8w implements fp32 mode only (W as two s8 slices with x in "
                                                "fp32 is an fp32-accuracy scheme); use kernel 7 for %s",
                            mg_precision_name(p->prec));
    if (sm != 0 && sm < 90)
        return mg_set_error(MG_ERR_UNSUPPORTED, "gemv_int8w needs sm_90 (programmatic dependent launch); this GPU is "
                                                "sm_%d", sm);
    if (p->m < 0 || p->n < 0 || p->k < 0)
        return mg_set_error(MG_ERR_UNSUPPORTED, "gemv_int8w: negative size (M=%d N=%d K=%d)", p->m, p->n, p->k);
    if ((long long)p->m > (long long)MAX_GROUPS * MG)
        return mg_set_error(MG_ERR_UNSUPPORTED, "gemv_int8w: M=%d exceeds the grid's y limit (%d rows)", p->m,
                            MAX_GROUPS * MG);
    if (p->n > INT_MAX - BN || 2 * mg_oz_ld(p->k) > INT_MAX)
        return mg_set_error(MG_ERR_UNSUPPORTED, "gemv_int8w: N=%d or K=%d too large", p->n, p->k);
    return MG_OK;
}

/* Its own partial rows (+ the fallback's) and workspace at p->m, or naive's (the runner when W holds NaN / inf). */
void gi8_bounds(const mg_problem *p, const mg_device *dev, int *partial_rows, size_t *ws_bytes) {
    int naive_rows = 0;
    size_t naive_ws = 0;
    mg_ops_naive.bounds(p, dev, &naive_rows, &naive_ws);
    mg_oz_xlayout xl;
    mg_oz_xlayout_make(p->m, p->k, 0, &xl);
    const long long rows = mg_gemv::partial_rows(p->m, p->n, p->max_dim) + 1;
    if (partial_rows) *partial_rows = naive_rows > rows ? naive_rows : (int)rows;
    if (ws_bytes) *ws_bytes = naive_ws > xl.bytes ? naive_ws : xl.bytes;
}

mg_status gi8_plan(const mg_problem *p, const mg_device *dev, const mg_options *opt, mg_launch_plan *lp) {
    if (!p || !lp)
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_int8w: plan called with a NULL %s", p ? "launch plan" : "problem");
    mg_status st = gi8_supports(p, 0);
    if (st != MG_OK) return st;
    (void)dev;
    gi8_priv pp;
    memset(&pp, 0, sizeof pp);
    pp.step = mg_oz_step(p->m, p->n, p->k, p->max_dim);
    if (pp.step < 0)
        return mg_set_error(MG_ERR_SHAPE, "gemv_int8w: max over an empty dimension (M=%d, N=%d, max_dim %d)", p->m,
                            p->n, p->max_dim);
    pp.mt_log2 = p->m <= 1 ? 0 : p->m <= 2 ? 1 : p->m <= 4 ? 2 : 3;
    pp.xvec = p->k % 4 == 0 && (p->align & MG_ALIGN_X16);
    pp.nw = pp.step == MG_OZ_STEP_INT8 ? (int)(mg_oz_ld(p->k) / 4) : 0;
    pp.grid_x = mg_cdiv(p->n, BN);
    pp.grid_y = mg_cdiv(p->m, MG);
    pp.main_rows = (int)mg_gemv::partial_rows(p->m, p->n, p->max_dim);
    pp.fb_grid = mg_oz_fallback_grid(p->m, p->n, dev ? dev->num_sms : 0);
    pp.pdl = opt ? opt->pdl != 0 : 1;
    mg_oz_xlayout_make(p->m, p->k, 0, &pp.xl);
    memcpy(lp->priv.bytes, &pp, sizeof pp);
    char summary[sizeof lp->summary];
    static const char *steps[] = {"empty output, nothing to launch", "K = 0: y = b", "K > 66052: every row to the "
                                  "exact fallback", "s8 slices of W, x in fp32"};
    snprintf(summary, sizeof summary, "gemv_int8w: %s; MT %d, %s x loads, grid %d x %d blocks of %d warps, %d + 1 "
             "partial rows%s", steps[pp.step], 1 << pp.mt_log2, pp.xvec ? "16-byte" : "4-byte", pp.grid_x, pp.grid_y,
             WARPS, pp.main_rows, pp.pdl ? ", PDL after the pre-pass" : "");
    mg_plan_simple(lp, pp.step == MG_OZ_STEP_NONE ? 1 : pp.main_rows + 1,
                   pp.step == MG_OZ_STEP_NONE ? 0 : pp.xl.bytes, summary);
    return MG_OK;
}

/* The weight side (mg_prepared::state) is the int8 layer's mg_oz_wstate alone, as kernel 9's: kernel 10's slices of W
 * without tensor maps. */
mg_status gi8_prepare(const mg_problem *p, const mg_device *dev, const void *w, const void *b, mg_prepared *out,
                      void *stream) {
    (void)b;
    (void)dev;
    if (!p || !out)
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_int8w: prepare called with a NULL %s", p ? "output" : "problem");
    out->state = NULL;
    out->runner = NULL;
    const mg_status st = gi8_supports(p, 0);
    if (st != MG_OK) return st;
    return mg_oz_prepare_state(p, w, "gemv_int8w", out, stream);
}

/* One launcher per instantiation; the plan's (mt_log2, xvec) indexes the table. U: 2 steps in flight at MT <= 2
 * (little arithmetic per step), 1 above (MT = 8 at U = 2 would pass 128 registers). */
using launcher_fn = cudaError_t (*)(const cudaLaunchConfig_t *cfg, const Args &a);
template <int MT, bool XVEC> cudaError_t launch_one(const cudaLaunchConfig_t *cfg, const Args &a) {
    return cudaLaunchKernelEx(cfg, gemv_i8_kernel<MT, MT <= 2 ? 2 : 1, XVEC>, a);
}
const launcher_fn launchers[4][2] = {
    {launch_one<1, false>, launch_one<1, true>},
    {launch_one<2, false>, launch_one<2, true>},
    {launch_one<4, false>, launch_one<4, true>},
    {launch_one<8, false>, launch_one<8, true>},
};

mg_status gi8_launch(const mg_launch_plan *lp, const mg_io *io, const void *state, void *stream) {
    if (!lp || !io)
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_int8w: launch called with a NULL %s", lp ? "io" : "launch plan");
    gi8_priv pp;
    memcpy(&pp, lp->priv.bytes, sizeof pp);
    if (pp.step == MG_OZ_STEP_NONE) return MG_OK;   /* empty output: nothing to reduce */
    if (pp.step < MG_OZ_STEP_ZERO || pp.step > MG_OZ_STEP_INT8 || pp.mt_log2 < 0 || pp.mt_log2 > 3 || pp.xvec < 0 ||
        pp.xvec > 1)
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_int8w: the launch plan (step %d, MT 2^%d, xvec %d) was not made "
                            "by gemv_int8w's plan", pp.step, pp.mt_log2, pp.xvec);
    const mg_problem *p = &lp->p;
    const int m = p->m, n = p->n, k = p->k;
    if (!io->b || !io->partial || (k > 0 && (!io->x || !io->w)))
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_int8w: NULL pointer:%s%s%s%s", io->x || k == 0 ? "" : " x",
                            io->w || k == 0 ? "" : " W", io->b ? "" : " b", io->partial ? "" : " partial");
    if (!io->ws)
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_int8w: no workspace (the plan uses %zu bytes)", lp->ws_bytes);
    if (pp.xvec && (uintptr_t)io->x % 16 != 0)
        return mg_set_error(MG_ERR_INVALID_ARG, "gemv_int8w: the launch plan uses 16-byte x loads (the problem's align "
                            "bits), but x (%p) is not 16-byte aligned", io->x);
    const mg_oz_wstate *s = static_cast<const mg_oz_wstate *>(state);
    if (!s || !s->u_w || s->n != n || s->k != k || (pp.nw > 0 && !s->w_sl))
        return mg_set_error(MG_ERR_NO_WEIGHTS, "gemv_int8w: W was not prepared for this problem (N=%d K=%d)", n, k);
    cudaStream_t st = (cudaStream_t)stream;
    char *ws = static_cast<char *>(io->ws);
    const int len = mg_partial_len(p);
    float *fb_row = io->partial + (size_t)pp.main_rows * len;

    /* 1. the pre-pass: the W-only guard's flags and list, the fallback row's -inf (no x slices) */
    mg_status ret = mg_oz_prepass(&pp.xl, pp.step, MG_OZ_GUARD_W, (const float *)io->x, m, k, pp.xvec, s->ws, ws,
                                  fb_row, len, stream);
    if (ret != MG_OK) return ret;

    /* 2. the gemv over the slices, early by PDL: it waits for the pre-pass before its epilogue */
    Args a;
    a.x = static_cast<const float *>(io->x);
    a.wsl = s->w_sl;
    a.uw = s->u_w;
    a.b = static_cast<const float *>(io->b);
    a.flag = reinterpret_cast<const int *>(ws + pp.xl.flag_off);
    a.partial = io->partial;
    a.M = m;
    a.N = n;
    a.K = k;
    a.ldk = (int)pp.xl.ldk;   /* mg_oz_ld(K): the slice rows of W and the layout of the plan alike */
    a.nw = pp.nw;
    a.max_dim = p->max_dim;
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    mg_launch_config(&cfg, &attr, dim3((unsigned)pp.grid_x, (unsigned)pp.grid_y), dim3(WARPS * 32), st,
                     mg_pdl_usable(pp.pdl, st));   /* not under stream capture */
    MG_CUDA_TRY(launchers[pp.mt_log2][pp.xvec](&cfg, a));
    MG_LAUNCH_CHECK();

    /* 3. the exact fallback for the flagged rows (shared with kernels 9 and 10) */
    return mg_oz_fallback(a.x, (const float *)io->w, a.b, m, n, k, p->max_dim,
                          reinterpret_cast<const int *>(ws + pp.xl.list_off),
                          reinterpret_cast<const int *>(ws + pp.xl.count_off), fb_row, pp.fb_grid, pp.pdl, stream);
}

}  // namespace

extern "C" const mg_kernel_ops mg_ops_gemv_int8w = {
    gi8_supports, gi8_bounds, gi8_plan, gi8_prepare, mg_oz_wstate_release, gi8_launch,
};
