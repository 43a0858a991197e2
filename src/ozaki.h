/* ozaki.h: the int8 split-precision layer of issue 19 (Ozaki scheme I, notes/19_int8_ozaki.md): per-row scaling and
 * s8 hi/lo slicing, the per-row range guard, the combine, and the exact per-row fallback. Pure C policy and element
 * math here (CPU-tested by test/test_ozaki.c, the same functions run on the device); the device kernels are
 * kernels/ozaki_slice.cu; the CPU reference of the slicing and the W-statistics reduction are src/ozaki.c. Kernel 9
 * (kernels/09_cublas_int8x3.cu, the cuBLAS baseline) uses all of it; a fused s8 wgmma kernel is meant to share it.
 *
 * ---- the slicing (notes section 1, exactly) ------------------------------------------------------------------------
 * Per row v of x (per call) or of W (once per mg_set_weights), amax = max |v| over the row:
 *   sigma = fp32(32639 / amax), clamped to 2^126 (rows below ~3.8e-34: 32639 / amax would overflow or leave the
 *           normal range of 1 / sigma); sigma = 0 for an all-zero row (and for a non-finite one: see the guard)
 *   u     = fp32(1 / sigma), the row's unit; u = 0 for an all-zero or non-finite row
 *   T     = rint(fp32(v * sigma))          (round to nearest even: cvt.rni; |T| <= 32639 = 127 * 256 + 127)
 *   hi    = floor((T + 128) / 256)  in [-127, 127],   lo = T - 256 hi  in [-128, 127]    (balanced s8 digits)
 * so v ~= (256 hi + lo) u with |v - T u| <= (1/2 + 2^-9) u. Every operation is one IEEE fp32 operation with round to
 * nearest (the device uses the _rn intrinsics, so no contraction or fast-math setting changes a bit), so the CPU
 * reference (mg_oz_slice_ref) and the device are bit-identical.
 *
 * ---- the slice layout --------------------------------------------------------------------------------------------
 * Rows of s8, K padded with zeros to ldk = mg_oz_ld(K) = K rounded up to 16 bytes. The slicing functions take
 * (hi, lo, kpad = ldk, ld) with row r of hi at hi + r * ld, so the caller picks the layout; kernel 9 keeps BOTH slices
 * of a row in one row of 2 * ldk bytes:
 *   x rows:  [ hi | lo ]   (hi at byte 0, lo at byte ldk; row stride 2 ldk)
 *   W rows:  [ lo | hi ]   (lo at byte 0, hi at byte ldk; W padded to np = mg_oz_np(N) rows, the extra rows zero)
 * so the cross sum is ONE GEMM over 2 ldk ([x_hi | x_lo] . [W_lo | W_hi] = hi_x lo_w + lo_x hi_w) and hh reads the
 * hi halves with the same stride. Why 16: cuBLAS int8 GemmEx (CUDA_R_8I, CUBLAS_COMPUTE_32I, IMMA kernels) wants
 * 4-byte aligned pointers (16 for speed), leading dimensions that are multiples of 4 and m, k multiples of 4 (its
 * "regular data ordering" requirements): with ldk % 16 == 0 every slice pointer (the lo / hi halves at +ldk included)
 * is 16-byte aligned, lda = ldb = 2 ldk, k = ldk or 2 ldk, and m = np (N padded to 4, ldc = np) meet them. A TMA
 * loader (s8 wgmma) needs a 16-byte aligned base and row strides of a multiple of 16 bytes: both hold for either
 * half; it should use one tensor map per half (dims {K, rows}, stride 2 ldk), so a box past K is zero-filled by TMA
 * instead of reading the other half.
 *
 * ---- the combine --------------------------------------------------------------------------------------------------
 *   hh = sum hi_x hi_w, cr = sum (hi_x lo_w + lo_x hi_w) (int32, exact for K <= MG_OZ_K_MAX)
 *   y  = fma(fma(float(hh), 256, float(cr)), s, b),  s = fp32(u_x * u_w) * 256          (mg_oz_combine, mg_oz_scale)
 * The lo*lo product is dropped (3 products); its zero-mean error is in the guard's variance below.
 *
 * ---- the guard (issue item 3; derivation in notes/19_int8_ozaki.md, "The guard as built") --------------------------
 * Per x row i, from one pass over the row (amax a_i, n2_i = ||x_i||^2 in fp64, u_i, finiteness) and three W maxima
 * taken once at prepare (mg_oz_wstats: A_W = max_j u_wj, N_W2 = max_j ||w_j||^2, W_M = max_j max|w_j|):
 *   var_i = (u_i^2 N_W2 + A_W^2 n2_i) / 12  +  K u_i^2 A_W^2 (1/144 + 5461.25^2)
 *           (the notes' variance of the 3-product error, sd 8.86e-6 at the headline, maximised over the columns j)
 *   M_i   = u_i W_M / 2 + a_i A_W / 2 + (1/4 + 16384) u_i A_W         (the largest single term of that error)
 *   B_i   = min(K M_i,  Z sqrt(var_i) + (2L/3) M_i),  L = ln(2 / 1e-9) = 21.42,  Z = sqrt(2L) = 6.545
 *           (Bernstein's inequality: P(|e| > B_i) <= 1e-9 per output; K M_i is the deterministic worst case)
 *   row i takes the int8 path iff B_i <= tau = 8.5e-5
 * tau is the fp32 bar's absolute part 1e-4 over the largest GELU slope 1.129, less the mean's share (~6e-7): an error
 * of y below tau keeps the max_dim 0 output within 1e-4 whatever the output is (the relative part is not used:
 * conservative). Z = 6.545 standard deviations: the seed-like headline row has B = 6.55e-5, 1.30x inside tau (notes:
 * U[0, c) rows pass up to c = 1.30). Under nn.Linear's init M_i grows as 1 / sqrt(K): seed-like rows have B = 7.3e-5
 * at K = 2048 and 8.0e-5 at K = 1000, and are flagged below K ~ 650 (correct, slow: the int8 path is for K of a
 * thousand and up). Everything else is FLAGGED and computed exactly (the fallback below):
 *   MG_OZ_NONFINITE  a NaN or +-inf in the row (int8 cannot carry it)
 *   MG_OZ_KLIMIT     K > MG_OZ_K_MAX = 66052: the shared cross accumulator could overflow int32 (K * 2 * 127 * 128 >
 *                    2^31 - 1). This baseline does not split K: every row of such a problem goes to the fallback.
 *   MG_OZ_RANGE      B_i > tau: a row with outliers (one element 1e3 x the rest), heavy tails, values much larger
 *                    than unit scale, or any x row when W has an outlier row (A_W, W_M are maxima over all of W: such
 *                    a W sends EVERY row to the fallback: correct, and as slow as the SIMT kernel)
 * W itself with a NaN or +-inf: the kernel names kernel 1 (naive, exact) as the runner at prepare.
 *
 * ---- the exact fallback and the partial rows ---------------------------------------------------------------------
 * Flagged rows are listed on the device (mg_oz_slice with the guard on: flag[i], list[0 .. *count), order unspecified)
 * with no host synchronisation. The int8 path treats them as absent (-inf in its partial rows: they never compete);
 * mg_oz_fallback computes y for the listed rows only with kernel 1's arithmetic (one fp32 FMA chain per output in k
 * order, then + b: bit for bit what kernel 1 computes, NaN and inf as fp32 gives them) into ONE extra partial row,
 * the last one of the plan:
 *   max_dim 1: fallback row [i] = max_j y[i, j] for a flagged row i, -inf for the others
 *   max_dim 0: fallback row [j] = max over the flagged rows i of y[i, j], -inf when none is flagged
 * The pre-pass fills that row with -inf; the fallback merges into it with an atomic max over the total order of
 * floats (NaN canonical, above +inf; -0 below +0), which is independent of the order the atomics land in: the result
 * is deterministic. The shared finalize (kernels/finalize.cu, unchanged) then reduces all partial rows as usual. */
#ifndef MG_OZAKI_H
#define MG_OZAKI_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "maxgemm.h"

#ifdef __CUDACC__
#define MG_OZ_FN static inline __host__ __device__
#else
#define MG_OZ_FN static inline
#endif

#define MG_OZ_TOP 32639                 /* 127 * 256 + 127: the largest T two signed 8-bit digits represent */
#define MG_OZ_SIGMA_MAX 0x1p126f        /* the scale's clamp: 1 / sigma stays a normal fp32 */
#define MG_OZ_KPAD 16                   /* slice rows are K padded to a multiple of this many bytes */
#define MG_OZ_NPAD 4                    /* kernel 9 pads N (W's rows, the int32 outputs' row stride) to this */
#define MG_OZ_K_MAX 66052               /* (2^31 - 1) / (2 * 127 * 128): the shared cross sum cannot overflow */
#define MG_OZ_AUTO_MIN_K 1024           /* auto's lower K for kernel 10 (mg_oz_auto_fits) */
#define MG_OZ_TAU 8.5e-5                /* the guard's |y error| target: 1e-4 / 1.129 less the mean's share */
#define MG_OZ_GUARD_L 21.416413017506358   /* ln(2 / 1e-9): Bernstein at a 1e-9 tail per output */
#define MG_OZ_LO_VAR 5461.25            /* E lo^2 for lo uniform on -128..127: (256^2 - 1) / 12 */

/* Why a row is flagged (0: it takes the int8 path). */
enum { MG_OZ_PASS = 0, MG_OZ_NONFINITE = 1, MG_OZ_KLIMIT = 2, MG_OZ_RANGE = 3 };

/* The W-side maxima the guard needs, over every row of W (prepare, mg_oz_wstats_reduce). */
typedef struct mg_oz_wstats {
    double a_w;    /* max_j u_wj */
    double n_w2;   /* max_j ||w_j||^2 */
    double w_m;    /* max_j max_k |w_jk| */
} mg_oz_wstats;

MG_OZ_FN int64_t mg_oz_ld(int64_t k) { return (k + MG_OZ_KPAD - 1) / MG_OZ_KPAD * MG_OZ_KPAD; }
MG_OZ_FN int64_t mg_oz_np(int64_t n) { return (n + MG_OZ_NPAD - 1) / MG_OZ_NPAD * MG_OZ_NPAD; }

/* One round-to-nearest fp32 operation each, on the host and the device alike (no contraction, no fast math). */
#ifdef __CUDA_ARCH__
MG_OZ_FN float mg_oz_mul_rn(float a, float b) { return __fmul_rn(a, b); }
MG_OZ_FN float mg_oz_div_rn(float a, float b) { return __fdiv_rn(a, b); }
#else
MG_OZ_FN float mg_oz_mul_rn(float a, float b) { return a * b; }
MG_OZ_FN float mg_oz_div_rn(float a, float b) { return a / b; }
#endif

/* The row's scale from its amax (finite, >= 0): 0 for an all-zero row. */
MG_OZ_FN float mg_oz_sigma(float amax) {
    if (!(amax > 0.f)) return 0.f;
    const float s = mg_oz_div_rn((float)MG_OZ_TOP, amax);
    return s <= MG_OZ_SIGMA_MAX ? s : MG_OZ_SIGMA_MAX;    /* also catches 32639 / amax = +inf */
}
/* The row's unit u = fp32(1 / sigma); 0 for sigma = 0. */
MG_OZ_FN float mg_oz_unit(float sigma) { return sigma > 0.f ? mg_oz_div_rn(1.f, sigma) : 0.f; }

/* The balanced digits of an integer t in [-32639, 32639]: hi = floor((t + 128) / 256), lo = t - 256 hi (the
 * numerator is made positive first, so C's truncating division is the floor). */
MG_OZ_FN void mg_oz_digits(int t, int *hi, int *lo) {
    const int h = (t + 128 + 128 * 256) / 256 - 128;
    *hi = h;
    *lo = t - 256 * h;
}

/* One element: v finite with |v| <= the amax its row's sigma came from. */
MG_OZ_FN void mg_oz_slice1(float v, float sigma, int8_t *hi, int8_t *lo) {
    const float t = rintf(mg_oz_mul_rn(v, sigma));
    int h, l;
    mg_oz_digits((int)t, &h, &l);
    *hi = (int8_t)h;
    *lo = (int8_t)l;
}

/* Kernel 11's decode of one W element from its two slice bytes: pair = lo_byte | hi_byte << 8 (upper bits ignored).
 * With the sign bits flipped the 16 bits are 256 (hi + 128) + (lo + 128) = T + 32896; under the exponent of 2^23
 * (0x4B000000) they are the fp32 2^23 + T + 32896, and one subtraction leaves T = 256 hi + lo exactly (every value
 * involved is an integer below 2^24). Device: PRMT (the gather, in the kernel), LOP3, FADD. */
#define MG_OZ_DECODE_BIAS 8421504.f   /* 2^23 + 32896 */
MG_OZ_FN float mg_oz_decode(uint32_t pair) {
    const uint32_t bits = (pair & 0xffffu) ^ 0x4B008080u;
#ifdef __CUDA_ARCH__
    return __uint_as_float(bits) - MG_OZ_DECODE_BIAS;
#else
    float f;
    memcpy(&f, &bits, sizeof f);
    return f - MG_OZ_DECODE_BIAS;
#endif
}

/* s_ij = fp32(u_x * u_w) * 256 (exact power of two), and y from the two int32 sums. */
MG_OZ_FN float mg_oz_scale(float ux, float uw) { return mg_oz_mul_rn(mg_oz_mul_rn(ux, uw), 256.f); }
MG_OZ_FN float mg_oz_combine(int32_t hh, int32_t cr, float s, float b) {
    return fmaf(fmaf((float)hh, 256.f, (float)cr), s, b);
}

/* The guard's bound B_i on |y error| of row i against every column (the header's formula); k is the real K. */
MG_OZ_FN double mg_oz_bound(int64_t k, float amax, double n2, float u, mg_oz_wstats w) {
    const double ux = u, a = amax, kk = (double)k;
    const double var = (ux * ux * w.n_w2 + w.a_w * w.a_w * n2) / 12.0 +
                       kk * ux * ux * w.a_w * w.a_w * (1.0 / 144.0 + MG_OZ_LO_VAR * MG_OZ_LO_VAR);
    const double mt = 0.5 * ux * w.w_m + 0.5 * a * w.a_w + (0.25 + 16384.0) * ux * w.a_w;
    const double bern = sqrt(2.0 * MG_OZ_GUARD_L * var) + (2.0 / 3.0) * MG_OZ_GUARD_L * mt;
    const double det = kk * mt;
    return det < bern ? det : bern;
}

/* Kernel 11's bound (x exact in fp32, W held as its two slices: y's error is sum_k x_k (w_k - T_k u_w) with
 * |w_k - T_k u_w| <= (1/2 + 2^-9) u_w, the rounding of slicing alone): the same Bernstein form with
 *   var_i = A_W^2 n2_i / 12        (W's rounding ~ uniform on +-u_w / 2, maximised over the columns)
 *   M_i   = (1/2 + 2^-9) a_i A_W   (the largest single term)
 * No x term and no dropped lo*lo product: it is below mg_oz_bound for the same row (CPU-tested). The fp32 sums of the
 * gemv itself round as SGEMM's do; neither bound counts that (~1e-6 at the headline, notes/19_int8_ozaki.md sec. 8). */
MG_OZ_FN double mg_oz_bound_w(int64_t k, float amax, double n2, mg_oz_wstats w) {
    const double var = w.a_w * w.a_w * n2 / 12.0;
    const double mt = (0.5 + 1.0 / 512.0) * (double)amax * w.a_w;
    const double bern = sqrt(2.0 * MG_OZ_GUARD_L * var) + (2.0 / 3.0) * MG_OZ_GUARD_L * mt;
    const double det = (double)k * mt;
    return det < bern ? det : bern;
}

/* Which bound routes a row: the three-product scheme's (kernels 9, 10: x and W sliced) or the W-only one (kernel 11). */
enum { MG_OZ_GUARD_X3 = 0, MG_OZ_GUARD_W = 1 };

/* The route of one x row: MG_OZ_PASS (int8) or why it is flagged. The CPU and the device decide alike, except that
 * n2 (an fp64 sum) is summed in another order: a row within ~1e-15 of tau could go either way. K > MG_OZ_K_MAX is
 * flagged under either guard: W's slices are only made up to there (mg_oz_prepare_w). */
MG_OZ_FN int mg_oz_route_g(int guard, int64_t k, int nonfinite, float amax, double n2, float u, mg_oz_wstats w) {
    if (nonfinite) return MG_OZ_NONFINITE;
    if (k > MG_OZ_K_MAX) return MG_OZ_KLIMIT;
    const double b = guard == MG_OZ_GUARD_W ? mg_oz_bound_w(k, amax, n2, w) : mg_oz_bound(k, amax, n2, u, w);
    return b <= MG_OZ_TAU ? MG_OZ_PASS : MG_OZ_RANGE;
}

/* The fallback's grid: one 16 x 16 tile of (flagged row, column) per work item, a grid-stride loop over the items
 * (their number is known on the device only), at most 8 blocks per SM and never more than the items of m rows. */
MG_OZ_FN int mg_oz_fallback_grid(int m, int n, int num_sms) {
    const int64_t items = (int64_t)((m + 15) / 16) * ((n + 15) / 16);
    const int64_t cap = (int64_t)(num_sms > 0 ? num_sms : 132) * 8;
    const int64_t g = items < cap ? items : cap;
    return g > 0 ? (int)g : 1;
}

/* ---- the x pre-pass's workspace (shared by every kernel of this layer) -------------------------------------------
 * [count: int, its own 256 bytes][x slices: m rows of 2 ldk bytes, [hi | lo]][u_x: m floats][flag: m ints]
 * [list: m ints], each at a 256-byte aligned offset; `bytes` is where a kernel's own part may start. The slices are
 * left out (0 bytes) when with_slices is 0 (K = 0, or K > MG_OZ_K_MAX: nothing to multiply). The count at offset 0
 * is zeroed by every launch (cudaMemsetAsync) before the pre-pass counts into it. */
typedef struct mg_oz_xlayout {
    int64_t ldk;                          /* bytes of one slice row (K padded to MG_OZ_KPAD) */
    size_t count_off, xs_off, ux_off, flag_off, list_off, bytes;
} mg_oz_xlayout;

static inline size_t mg_oz_align256(size_t v) { return (v + 255) & ~(size_t)255; }

static inline void mg_oz_xlayout_make(int64_t m, int64_t k, int with_slices, mg_oz_xlayout *l) {
    l->ldk = mg_oz_ld(k);
    l->count_off = 0;
    l->xs_off = 256;
    const size_t xs = with_slices ? mg_oz_align256((size_t)m * 2 * (size_t)l->ldk) : 0;
    l->ux_off = l->xs_off + xs;
    l->flag_off = l->ux_off + mg_oz_align256((size_t)m * 4);
    l->list_off = l->flag_off + mg_oz_align256((size_t)m * 4);
    l->bytes = l->list_off + mg_oz_align256((size_t)m * 4);
}

/* ---- what a launch of this layer does, by shape (kernels 9 and 10 alike) -----------------------------------------
 *   NONE      empty output (M = 0 with max_dim 1, N = 0 with max_dim 0): nothing to enqueue
 *   ZERO      K = 0: y = b; the pre-pass (no slices) then the kernel's combine on zero sums
 *   FALLBACK  K > MG_OZ_K_MAX: the guard flags every row; no slices, no int8 products, the fallback does all
 *   INT8      the pre-pass with slices, the int8 products and their combine, the fallback for the flagged rows */
enum { MG_OZ_STEP_NONE = 0, MG_OZ_STEP_ZERO, MG_OZ_STEP_FALLBACK, MG_OZ_STEP_INT8 };

/* Whether the int8 products run at all (slices exist): 0 < K <= MG_OZ_K_MAX. */
MG_OZ_FN int mg_oz_int8_runs(int64_t k) { return k > 0 && k <= MG_OZ_K_MAX; }

/* The step of a problem, or -1 for a max over an empty dimension (M = 0 with max_dim 0, N = 0 with max_dim 1). */
static inline int mg_oz_step(int64_t m, int64_t n, int64_t k, int max_dim) {
    if ((max_dim == 1 ? m : n) == 0) return MG_OZ_STEP_NONE;
    if (m == 0 || n == 0) return -1;
    return k == 0 ? MG_OZ_STEP_ZERO : k > MG_OZ_K_MAX ? MG_OZ_STEP_FALLBACK : MG_OZ_STEP_INT8;
}

/* ---- the weight side, made once per mg_set_weights (kernels 9 and 10 share it: mg_oz_prepare_w) ------------------ */
typedef struct mg_oz_wstate {
    int8_t *w_sl;       /* np rows of 2 ldk bytes, [W_lo | W_hi]; NULL when no product runs (K = 0 or K > MG_OZ_K_MAX) */
    float *u_w;         /* np units (0 in the padding rows) */
    mg_oz_wstats ws;    /* the guard's W maxima */
    int n, k;
} mg_oz_wstate;

/* ---- the device layer (kernels/ozaki_slice.cu) and its CPU twin (src/ozaki.c) -------------------------------------- */
/* One slicing pass over a rows x cols fp32 matrix (dense, row stride cols): per row amax, sigma, u and (hi, lo
 * non-NULL) the slices: kpad bytes of row r at hi + r * ld and at lo + r * ld (cols <= kpad <= ld, kpad and ld
 * multiples of 4; columns [cols, kpad) written 0, bytes [kpad, ld) not touched: kernel 9 interleaves hi and lo there;
 * non-finite rows written 0 with u = 0). Optional per-row outputs: amax, n2 (fp64 sum of squares), nonfinite (1 if
 * the row holds a NaN or +-inf). With flag non-NULL the guard runs: flag[r] = mg_oz_route_g(guard, ...) with w and
 * k = cols, and every flagged row is appended to list at atomicAdd(count, 1) (*count must be 0 before). fill (may be NULL):
 * fill_len floats set to -inf (the fallback's partial row). vec: 16-byte loads (src 16-byte aligned and
 * cols % 4 == 0; checked again at launch). */
typedef struct mg_oz_slice_args {
    const float *src;
    int64_t rows, cols;
    int8_t *hi, *lo;
    int64_t kpad, ld;      /* bytes written per slice row (K padded), row stride */
    float *u;
    float *amax;
    double *n2;
    int *nonfinite;
    mg_oz_wstats w;
    int *flag, *list, *count;
    float *fill;
    int64_t fill_len;
    int vec;
    int guard;             /* MG_OZ_GUARD_X3 (0, kernels 9 and 10) or MG_OZ_GUARD_W (kernel 11) */
} mg_oz_slice_args;

#ifdef __cplusplus
extern "C" {
#endif
/* Device: every pointer a device pointer; asynchronous on stream. */
mg_status mg_oz_slice(const mg_oz_slice_args *a, void *stream);
/* Device: the exact fallback (the header's last section) for the *count rows of list, of x (m x k), W (n x k), b;
 * prow = the fallback's partial row (m floats for max_dim 1, n for 0), already -inf. grid: mg_oz_fallback_grid.
 * pdl: launched by programmatic dependent launch (mg_pdl_usable decides; its blocks griddepcontrol.wait first), for
 * a kernel before it that executes griddepcontrol.launch_dependents (kernel 11); 0: a plain launch. */
mg_status mg_oz_fallback(const float *x, const float *w, const float *b, int m, int n, int k, int max_dim,
                         const int *list, const int *count, float *prow, int grid, int pdl, void *stream);

/* Device: W's slices (when mg_oz_int8_runs(k)), units and per-row statistics into *s (device buffers it allocates;
 * s->n, s->k set), the statistics downloaded and reduced to s->ws (synchronises the stream). *bad_rows: W's rows
 * holding a NaN or +-inf (s->ws leaves them out; the caller then names kernel 1 as the runner). vec: W 16-byte
 * aligned and k % 4 == 0. who: the kernel's name for the messages. On failure the buffers made so far stay in *s
 * for mg_oz_wstate_free. */
mg_status mg_oz_prepare_w(const float *w, int n, int k, int vec, const char *who, mg_oz_wstate *s, int64_t *bad_rows,
                          void *stream);
/* Frees the device buffers of *s (not s itself); release cannot report, a failed free leaks at worst. */
void mg_oz_wstate_free(mg_oz_wstate *s);
/* The whole prepare of a kernel whose weight state is this layer's alone (kernels 9 and 11), once the kernel has
 * checked p: nothing for N = 0 (launch never reads W); W NULL with K > 0 is an error; otherwise mg_oz_prepare_w into a
 * malloc'ed mg_oz_wstate in out->state (mg_oz_wstate_release frees it), or, for W holding NaN / inf, no state and
 * out->runner = kernel 1 (naive: exact on W itself). who: the kernel's name for the messages. */
struct mg_problem;
struct mg_prepared;
mg_status mg_oz_prepare_state(const struct mg_problem *p, const void *w, const char *who, struct mg_prepared *out,
                              void *stream);
/* mg_kernel_ops::release of that state: mg_oz_wstate_free, then the struct itself. */
void mg_oz_wstate_release(void *state);
/* Device: the x pre-pass of one launch into the workspace ws (layout xl): zeroes the count, then mg_oz_slice with the
 * guard `guard` on W's maxima w: x slices ([hi | lo] rows of 2 ldk bytes, only for MG_OZ_STEP_INT8 under
 * MG_OZ_GUARD_X3: kernel 11 reads x in fp32), u_x, flags, the list of flagged rows, and fb_row's fill_len floats set
 * to -inf (the fallback's partial row). vec: 16-byte loads. Its blocks execute griddepcontrol.launch_dependents, so a
 * kernel launched after it with programmatic stream serialization may start early (and must griddepcontrol.wait
 * before it reads what the pre-pass writes). */
mg_status mg_oz_prepass(const mg_oz_xlayout *xl, int step, int guard, const float *x, int m, int k, int vec,
                        mg_oz_wstats w, void *ws, float *fb_row, int fill_len, void *stream);

/* CPU: what mg_oz_slice does, with host pointers; the list comes out in ascending row order. */
void mg_oz_slice_ref(const mg_oz_slice_args *a);
/* CPU: the W maxima over rows rows of per-row statistics (u, amax, n2, nonfinite as mg_oz_slice writes them);
 * returns the number of rows holding a non-finite value (their statistics are left out). */
int64_t mg_oz_wstats_reduce(const float *u, const float *amax, const double *n2, const int *nonfinite, int64_t rows,
                            mg_oz_wstats *out);
#ifdef __cplusplus
}
#endif

#ifndef __CUDACC__
/* Where auto (and a dispatch table) may take kernel 10: MG_OZ_AUTO_MIN_K <= K <= MG_OZ_K_MAX. Below K ~ 650 the guard
 * flags nn.Linear-initialised rows (notes/19_int8_ozaki.md section 5: its bound grows as 1 / sqrt(K)), so every row
 * would take the exact SIMT fallback; above MG_OZ_K_MAX every row does. Correct either way, but slow: auto keeps
 * kernel 6 there. An explicit --kernel 10 still runs any K. */
struct mg_problem;
int mg_oz_auto_fits(const struct mg_problem *p);
/* Where auto (and a dispatch table) may take kernel 11 (gemv_int8w): fp32 mode, M <= MG_GEMV_I8_AUTO_MAX_M and
 * mg_oz_auto_fits's K range (the same guard reasoning; its W-only bound is smaller, but not below K ~ 300). */
#define MG_GEMV_I8_AUTO_MAX_M 8
int mg_gemv_i8_auto_fits(const struct mg_problem *p);
#endif

#endif /* MG_OZAKI_H */
