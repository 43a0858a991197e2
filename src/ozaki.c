/* ozaki.c: the host side of the int8 slicing layer (src/ozaki.h): the CPU reference of mg_oz_slice (same element
 * functions as the device, so slices, units and flags are bit-identical; n2 is summed in another order) and the
 * reduction of W's per-row statistics to the guard's three maxima (run by kernel 9's prepare on the downloaded
 * statistics, and by the CPU tests). */
#include "ozaki.h"
#include "mg_kernel.h"

#include <math.h>
#include <string.h>

void mg_oz_slice_ref(const mg_oz_slice_args *a) {
    if (a->count) *a->count = 0;
    for (int64_t r = 0; r < a->rows; r++) {
        const float *v = a->src + r * a->cols;
        float amax = 0.f;
        double n2 = 0.0;
        int bad = 0;
        for (int64_t c = 0; c < a->cols; c++) {
            if (!isfinite(v[c])) {
                bad = 1;
                continue;
            }
            amax = fmaxf(amax, fabsf(v[c]));
            n2 += (double)v[c] * (double)v[c];
        }
        const float sigma = bad ? 0.f : mg_oz_sigma(amax);
        const float u = mg_oz_unit(sigma);
        a->u[r] = u;
        if (a->amax) a->amax[r] = amax;
        if (a->n2) a->n2[r] = n2;
        if (a->nonfinite) a->nonfinite[r] = bad;
        if (a->flag) {
            const int route = mg_oz_route_g(a->guard, a->cols, bad, amax, n2, u, a->w);
            a->flag[r] = route;
            if (route != MG_OZ_PASS) a->list[(*a->count)++] = (int)r;
        }
        if (!a->hi) continue;
        int8_t *hi = a->hi + r * a->ld, *lo = a->lo + r * a->ld;
        for (int64_t c = 0; c < a->kpad; c++) {
            int8_t h = 0, l = 0;
            if (c < a->cols && !bad) mg_oz_slice1(v[c], sigma, &h, &l);
            hi[c] = h;
            lo[c] = l;
        }
    }
    for (int64_t j = 0; a->fill && j < a->fill_len; j++) a->fill[j] = -INFINITY;
}

int64_t mg_oz_wstats_reduce(const float *u, const float *amax, const double *n2, const int *nonfinite, int64_t rows,
                            mg_oz_wstats *out) {
    memset(out, 0, sizeof *out);
    int64_t bad = 0;
    for (int64_t j = 0; j < rows; j++) {
        if (nonfinite[j]) {
            bad++;
            continue;
        }
        if (u[j] > out->a_w) out->a_w = u[j];
        if (n2[j] > out->n_w2) out->n_w2 = n2[j];
        if (amax[j] > out->w_m) out->w_m = amax[j];
    }
    return bad;
}

int mg_oz_auto_fits(const mg_problem *p) { return p && p->k >= MG_OZ_AUTO_MIN_K && p->k <= MG_OZ_K_MAX; }

int mg_gemv_i8_auto_fits(const mg_problem *p) {
    return mg_oz_auto_fits(p) && p->prec == MG_PREC_FP32 && p->m <= MG_GEMV_I8_AUTO_MAX_M;
}
