/* cli.c: the maxgemm driver.
 *   maxgemm list                       the registry (and the tile configs it uses)
 *   maxgemm run [--kernel N|NAME|auto] [--m --n --k] [--max-dim D] [--precision P] [--seed S] [--iters I]
 *               [--warmup W] [--check] [--no-shortcut] [--no-flush] [--no-baseline] [--csv FILE]
 * `run` times the chosen kernel and kernel 0 (cuBLAS, full compute) in the same run and prints the median, TFLOP/s
 * and x cuBLAS (--no-baseline: kernel 0 is neither planned nor run, e.g. so that a sanitizer sees only the chosen
 * kernel); with --check it compares against the GPU fp64 reference and prints PASS/FAIL (exit 1 on FAIL).
 * With no CUDA device it says so and runs the CPU reference at a size that finishes in seconds.
 */
#include "check.h"
#include "cli_args.h"
#include "gpu_util.h"
#include "maxgemm.h"
#include "mg_kernel.h"
#include "reference.h"
#include "rng.h"
#include "tile_config.h"
#include "timing.h"

#include <cuda_runtime.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void print_usage(FILE *f) {
    fprintf(f,
            "usage: maxgemm list\n"
            "       maxgemm run [--kernel N|NAME|auto] [--m M] [--n N] [--k K] [--max-dim -2|-1|0|1]\n"
            "                   [--precision fp32|tf32|bf16] [--seed S] [--iters I] [--warmup W] [--check]\n"
            "                   [--no-shortcut] [--no-flush] [--no-baseline] [--csv FILE]\n"
            "defaults: the model's shape M=1024 N=8192 K=8192, max_dim 1, fp32, auto kernel, short-circuit on\n");
}

static int cmd_list(void) {
    int sm = 0, ndev = 0;
    if (cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) sm = prop.major * 10 + prop.minor;
    } else {
        cudaGetLastError();
    }
    printf("%-3s %-14s %-15s %-6s %-15s %-5s %s\n", "id", "name", "precisions", "min_sm", "tile_config", "built",
           "technique");
    for (int i = 0; i < mg_registry_count(); i++) {
        const mg_kernel *k = mg_registry_at(i);
        char precs[32] = "";
        for (int p = 0; p < MG_PREC_COUNT; p++)
            if (k->precisions & (1u << p)) {
                if (precs[0]) strcat(precs, ",");
                strcat(precs, mg_precision_name((mg_precision)p));
            }
        printf("%-3d %-14s %-15s sm_%-3d %-15s %-5s %s%s\n", k->id, k->name, precs, k->min_sm, k->tile_config,
               mg_kernel_available(k) ? "yes" : "no", k->technique, k->baseline ? " [baseline]" : "");
    }
    printf("\ntile configs (tile_configs/*.cfg):\n");
    printf("  %-14s %-5s %4s %4s %4s %6s %9s %7s\n", "kernel", "prec", "bm", "bn", "bk", "stages", "consumers", "cluster");
    for (int i = 0; i < mg_tile_config_count; i++) {
        const mg_tile_config *t = &mg_tile_configs[i];
        printf("  %-14s %-5s %4d %4d %4d %6d %9d %7d\n", t->kernel, t->precision, t->bm, t->bn, t->bk, t->stages,
               t->consumers, t->cluster);
    }
    if (sm) printf("\nthis GPU: sm_%d\n", sm);
    else printf("\nno CUDA device here\n");
    return 0;
}

/* With no device: the exact CPU reference at a size that finishes in seconds. */
static int run_cpu_fallback(const mg_cli_args *a) {
    int64_t m = a->m < 64 ? a->m : 64, n = a->n < 256 ? a->n : 256, k = a->k < 256 ? a->k : 256;
    printf("no CUDA device: running the CPU fp64 reference at M=%lld N=%lld K=%lld instead of M=%lld N=%lld K=%lld\n",
           (long long)m, (long long)n, (long long)k, (long long)a->m, (long long)a->n, (long long)a->k);
    double bound = k > 0 ? 1.0 / sqrt((double)k) : 1.0;
    double *x = malloc(sizeof(double) * (size_t)(m * (k ? k : 1)));
    double *W = malloc(sizeof(double) * (size_t)(n * (k ? k : 1)));
    double *b = malloc(sizeof(double) * (size_t)n);
    double *ref = malloc(sizeof(double) * (size_t)(m > n ? m : n));
    if (!x || !W || !b || !ref) {
        fprintf(stderr, "maxgemm: host allocation failed\n");
        return 1;
    }
    for (int64_t i = 0; i < m * k; i++) x[i] = mg_rng_u01(a->seed, MG_RNG_X, (uint64_t)i);
    for (int64_t i = 0; i < n * k; i++) W[i] = mg_rng_uniform(a->seed, MG_RNG_W, (uint64_t)i, -bound, bound);
    for (int64_t i = 0; i < n; i++) b[i] = mg_rng_uniform(a->seed, MG_RNG_B, (uint64_t)i, -bound, bound);
    mg_status st = mg_reference(x, W, b, m, n, k, a->max_dim, ref);
    int rc = 0;
    if (st != MG_OK) {
        fprintf(stderr, "maxgemm: %s: %s\n", mg_strerror(st), mg_last_error());
        rc = 1;
    } else {
        int64_t len = (a->max_dim == 1 || a->max_dim == -1) ? m : n;
        printf("reference output (%lld values): first %.9g, last %.9g\n", (long long)len, ref[0], ref[len - 1]);
    }
    free(x);
    free(W);
    free(b);
    free(ref);
    return rc;
}

typedef struct run_ctx {
    mg_plan *plan;
    const void *x;
    void *out;
    void *stream;
} run_ctx;

static mg_status timed_forward(void *c) {
    run_ctx *r = c;
    return mg_forward(r->plan, r->x, r->out, r->stream);
}

#define DIE(...)                                                                                                   \
    do {                                                                                                           \
        fprintf(stderr, "maxgemm: " __VA_ARGS__);                                                                  \
        fputc('\n', stderr);                                                                                       \
        rc = 2;                                                                                                    \
        goto done;                                                                                                 \
    } while (0)
#define TRY(call)                                                                                                  \
    do {                                                                                                           \
        mg_status s_ = (call);                                                                                     \
        if (s_ != MG_OK) DIE("%s: %s", mg_strerror(s_), mg_last_error());                                          \
    } while (0)
#define CUDA(call)                                                                                                 \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess) DIE("%s: %s", #call, cudaGetErrorString(e_));                                       \
    } while (0)

static int cmd_run(const mg_cli_args *a) {
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return run_cpu_fallback(a);
    }
    int rc = 0;
    void *x = NULL, *W = NULL, *b = NULL, *out = NULL;
    double *ref_d = NULL, *ref = NULL;
    float *outf = NULL;
    mg_plan *plan = NULL, *base = NULL;
    mg_timer *timer = NULL;
    double *samples = NULL;
    cudaStream_t stream = NULL;

    mg_precision prec = a->precision;
    size_t es = prec == MG_PREC_BF16 ? 2 : 4;
    int64_t m = a->m, n = a->n, k = a->k;
    int md1 = (a->max_dim == 1 || a->max_dim == -1);
    size_t len = (size_t)(md1 ? m : n);
    double bytes = (double)es * (double)(m * k + n * k + n) + (double)es * (double)len;
    size_t free_b = 0, total_b = 0;
    CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > 0.9 * (double)free_b)
        DIE("x, W and b need %.1f GiB, the device has %.1f GiB free (M=%lld N=%lld K=%lld)", bytes / 1073741824.0,
            free_b / 1073741824.0, (long long)m, (long long)n, (long long)k);

    mg_plan_desc d = mg_plan_desc_default();
    d.m = m;
    d.n = n;
    d.k = k;
    d.max_dim = a->max_dim;
    d.precision = prec;
    d.kernel = a->kernel;
    d.shortcut = a->shortcut;
    TRY(mg_plan_create(&plan, &d));
    d.kernel = 0;
    d.shortcut = 0;
    if (a->baseline) TRY(mg_plan_create(&base, &d));

    CUDA(cudaStreamCreate(&stream));
    CUDA(cudaMalloc(&x, (size_t)(m * (k ? k : 1)) * es));
    CUDA(cudaMalloc(&W, (size_t)(n * (k ? k : 1)) * es));
    CUDA(cudaMalloc(&b, (size_t)n * es));
    CUDA(cudaMalloc(&out, len * es));
    TRY(mg_fill_seedlike(x, W, b, m, n, k, prec, a->seed, stream));
    TRY(mg_set_weights(plan, W, b, stream));
    if (base) TRY(mg_set_weights(base, W, b, stream));

    int kid = mg_plan_kernel(plan);
    printf("maxgemm run: kernel %d (%s), %s, max_dim %d, M=%lld N=%lld K=%lld, short-circuit %s\n", kid,
           mg_plan_kernel_name(plan), mg_precision_name(prec), a->max_dim, (long long)m, (long long)n, (long long)k,
           (md1 && a->shortcut) ? "on" : "off");

    /* Correctness before timing: poison, run once, compare with the fp64 GPU reference. */
    int pass = 1;
    mg_check_result cr;
    memset(&cr, 0, sizeof cr);
    TRY(mg_poison(out, len, prec, stream));
    TRY(mg_forward(plan, x, out, stream));
    CUDA(cudaStreamSynchronize(stream));
    if (a->check) {
        CUDA(cudaMalloc((void **)&ref_d, len * sizeof(double)));
        TRY(mg_gpu_reference(x, W, b, m, n, k, md1 ? 1 : 0, prec, ref_d, stream));
        ref = malloc(len * sizeof(double));
        outf = malloc(len * es);
        if (!ref || !outf) DIE("host allocation failed");
        CUDA(cudaMemcpyAsync(ref, ref_d, len * sizeof(double), cudaMemcpyDeviceToHost, stream));
        CUDA(cudaMemcpyAsync(outf, out, len * es, cudaMemcpyDeviceToHost, stream));
        CUDA(cudaStreamSynchronize(stream));
        double tol = mg_precision_tolerance(prec);
        pass = prec == MG_PREC_BF16 ? mg_check_bf16(ref, (const uint16_t *)outf, len, tol, tol, &cr)
                                    : mg_check_f32(ref, outf, len, tol, tol, &cr);
    }

    int iters = a->iters;
    samples = malloc(sizeof(double) * (size_t)iters);
    if (!samples) DIE("host allocation failed");
    TRY(mg_timer_create(&timer, a->flush_l2, stream));
    run_ctx rk = {plan, x, out, stream}, rb = {base, x, out, stream};
    TRY(mg_time(timer, timed_forward, &rk, a->warmup, iters, samples));
    mg_stats sk = mg_stats_of(samples, iters);
    mg_stats sb = sk;
    if (base && (kid != 0 || (md1 && a->shortcut))) {
        TRY(mg_time(timer, timed_forward, &rb, a->warmup, iters, samples));
        sb = mg_stats_of(samples, iters);
    }
    double flop = 2.0 * (double)m * (double)n * (double)k;
    if (mg_timer_hold_timeouts(timer) > 0)
        printf("  note: the timing hold timed out in %d of the sample batches (the forward blocked the host, as the "
               "sync and poll short-circuit modes do): their samples include host latency\n",
               mg_timer_hold_timeouts(timer));
    printf("  median %.4f ms (min %.4f, max %.4f, %d samples%s), %.1f TFLOP/s, ", sk.median, sk.min, sk.max, iters,
           a->flush_l2 ? ", L2 flushed" : "", flop / (sk.median * 1e9));
    if (base)
        printf("%.3fx cuBLAS (kernel 0 full compute: %.4f ms)\n", sb.median / sk.median, sb.median);
    else
        printf("kernel 0 not run (--no-baseline)\n");
    if (a->check) {
        printf("  check vs fp64 reference: max abs err %.3g, 99.9th pct abs err %.3g, max rel err %.3g, %zu of %zu outside "
               "atol=rtol=%g: %s\n",
               cr.max_abs, cr.p999_abs, cr.max_rel, cr.fails, cr.n, mg_precision_tolerance(prec), pass ? "PASS" : "FAIL");
        if (!pass && cr.first_bad < cr.n) {
            double o = prec == MG_PREC_BF16 ? mg_bf16_to_f32(((const uint16_t *)outf)[cr.first_bad])
                                            : ((const float *)outf)[cr.first_bad];
            printf("  first bad element %zu: out %.9g, ref %.9g\n", cr.first_bad, o, ref[cr.first_bad]);
        }
    }
    if (a->csv_path && a->csv_path[0]) {
        FILE *f = fopen(a->csv_path, "a");
        if (!f) DIE("cannot open --csv file '%s'", a->csv_path);
        if (ftell(f) == 0)
            fprintf(f, "kernel,name,precision,max_dim,m,n,k,shortcut,median_ms,min_ms,max_ms,tflops,x_kernel0,max_err,"
                       "pass\n");
        fprintf(f, "%d,%s,%s,%d,%lld,%lld,%lld,%d,%.6f,%.6f,%.6f,%.3f,%.4f,%.3g,%d\n", kid, mg_plan_kernel_name(plan),
                mg_precision_name(prec), a->max_dim, (long long)m, (long long)n, (long long)k,
                (md1 && a->shortcut) ? 1 : 0, sk.median, sk.min, sk.max, flop / (sk.median * 1e9),
                base ? sb.median / sk.median : NAN, a->check ? cr.max_abs : NAN, a->check ? pass : 0);
        fclose(f);
    }
    if (!pass) rc = 1;
done:
    mg_timer_destroy(timer);
    mg_plan_destroy(plan);
    mg_plan_destroy(base);
    cudaFree(x);
    cudaFree(W);
    cudaFree(b);
    cudaFree(out);
    cudaFree(ref_d);
    if (stream) cudaStreamDestroy(stream);
    free(ref);
    free(outf);
    free(samples);
    return rc;
}

int main(int argc, char **argv) {
    mg_cli_args a;
    char err[512];
    if (mg_cli_parse(argc, argv, &a, err, sizeof err) != 0) {
        fprintf(stderr, "maxgemm: %s (see 'maxgemm help')\n", err);
        return 2;
    }
    switch (a.command) {
    case MG_CMD_LIST: return cmd_list();
    case MG_CMD_RUN: return cmd_run(&a);
    default: print_usage(stdout); return 0;
    }
}
