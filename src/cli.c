/* cli.c: the maxgemm driver (the grammar, the usage texts and the exit codes: cli_args.h / cli_args.c).
 *   maxgemm list [--csv FILE]          the registry (and the tile configs it uses); --csv: as CSV ('-': stdout)
 *   maxgemm run [options]              see `maxgemm run --help`
 *   maxgemm help [run|list], --help    usage;   maxgemm --version   the library version and the build's commit
 * `run` times the chosen kernel and kernel 0 (cuBLAS, full compute) in the same run and prints the median, TFLOP/s
 * (none when the certified max_dim 1 short-circuit answered every row: no GEMM ran) and x cuBLAS (--no-baseline:
 * kernel 0 is neither planned nor run, e.g. so that a sanitizer sees only the chosen kernel); with --check it
 * compares against the GPU fp64 reference and prints PASS/FAIL. The library options (--tiles, --no-streamk, ...,
 * --verbose) go to every plan of the run through mg_plan_set_options. --csv appends one row for scripts, which read
 * it by column name (tools/csvsel.awk): the times, the check ('pass' 1 or 0, empty when not checked), whether a
 * GEMM ran, the GPU, its SM clock right after the samples, the commit, the seed, the flush setting, the options and
 * the launch plan. With no CUDA device it says so and runs the CPU reference at a size that finishes in seconds.
 * Exit status: 0 ok, 1 check failed, 2 usage error, 3 runtime error (cli_args.h, mg_cli_exit_code).
 */
#include "check.h"
#include "cli_args.h"
#include "dispatch.h"
#include "gpu_util.h"
#include "maxgemm.h"
#include "mg_kernel.h"
#include "reference.h"
#include "rng.h"
#include "shortcut.h"
#include "tile_config.h"
#include "timing.h"

#include <cuda_runtime.h>
#include <dlfcn.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The commit the binary was built from: the Makefile passes -DMG_GIT_COMMIT='"..."' (as for the benchmark). */
#ifndef MG_GIT_COMMIT
#define MG_GIT_COMMIT "unknown"
#endif

static int commit_known(void) { return MG_GIT_COMMIT[0] && strcmp(MG_GIT_COMMIT, "unknown") != 0; }

static int cmd_version(void) {
    printf("maxgemm %s\n", mg_version());
    if (commit_known()) printf("commit %s\n", MG_GIT_COMMIT);
    else printf("commit unknown (built without MG_GIT_COMMIT)\n");
    printf("built with CUDA runtime %d.%d\n", CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
    return MG_EXIT_OK;
}

/* list --csv FILE: the registry for scripts ('-': stdout). */
static int list_csv(const char *path, int sm) {
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "maxgemm: cannot write --csv file '%s'\n", path);
        return MG_EXIT_RUNTIME;
    }
    fputs("id,name,precisions,min_sm,tile_config,built,baseline,auto_rank,gpu_sm\n", f);
    for (int i = 0; i < mg_registry_count(); i++) {
        const mg_kernel *k = mg_registry_at(i);
        char precs[32] = "";
        for (int p = 0; p < MG_PREC_COUNT; p++)
            if (k->precisions & (1u << p)) {
                if (precs[0]) strcat(precs, ";");
                strcat(precs, mg_precision_name((mg_precision)p));
            }
        fprintf(f, "%d,%s,%s,%d,%s,%d,%d,%d,%d\n", k->id, k->name, precs, k->min_sm, k->tile_config,
                mg_kernel_available(k) ? 1 : 0, k->baseline, k->auto_rank, sm);
    }
    if (f == stdout) return fflush(f) == 0 ? MG_EXIT_OK : MG_EXIT_RUNTIME;
    return fclose(f) == 0 ? MG_EXIT_OK : MG_EXIT_RUNTIME;
}

static int cmd_list(const mg_cli_args *a) {
    int sm = 0, ndev = 0;
    char gpu[256] = "";
    if (cudaGetDeviceCount(&ndev) == cudaSuccess && ndev > 0) {
        struct cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess) {
            sm = prop.major * 10 + prop.minor;
            snprintf(gpu, sizeof gpu, "%s", prop.name);
        }
    } else {
        cudaGetLastError();
    }
    if (a->csv_path) return list_csv(a->csv_path, sm);
    printf("%-3s %-14s %-15s %-6s %-15s %-9s %s\n", "id", "name", "precisions", "min_sm", "tile_config", "runs here",
           "technique");
    for (int i = 0; i < mg_registry_count(); i++) {
        const mg_kernel *k = mg_registry_at(i);
        char precs[32] = "";
        for (int p = 0; p < MG_PREC_COUNT; p++)
            if (k->precisions & (1u << p)) {
                if (precs[0]) strcat(precs, ",");
                strcat(precs, mg_precision_name((mg_precision)p));
            }
        /* the sm_90a kernels (wgmma, setmaxnreg) run on sm_90 only: this build targets sm_90a alone */
        const int runs = sm == 90 && sm >= k->min_sm;
        printf("%-3d %-14s %-15s sm_%-3d %-15s %-9s %s%s\n", k->id, k->name, precs, k->min_sm, k->tile_config,
               sm == 0 ? "no GPU" : runs ? "yes" : "no", k->technique, k->baseline ? " [baseline]" : "");
    }
    printf("\ntile configs (tile_configs/*.cfg):\n");
    printf("  %-14s %-5s %4s %4s %4s %6s %9s %7s\n", "kernel", "prec", "bm", "bn", "bk", "stages", "consumers", "cluster");
    for (int i = 0; i < mg_tile_config_count; i++) {
        const mg_tile_config *t = &mg_tile_configs[i];
        printf("  %-14s %-5s %4d %4d %4d %6d %9d %7d\n", t->kernel, t->precision, t->bm, t->bn, t->bk, t->stages,
               t->consumers, t->cluster);
    }
    printf("\ndispatch tables compiled in (tile_configs/dispatch/: what auto runs per GPU, precision, max_dim and M):\n");
    for (int i = 0; i < mg_dispatch_builtin_count; i++) {
        const mg_dispatch_table *t = &mg_dispatch_builtin[i];
        printf("  %s: %d rows, for", t->file, t->nrows);
        for (int g = 0; g < t->ngpus; g++) printf("%s '%s'", g ? "," : "", t->gpus[g]);
        printf("%s\n", mg_dispatch_names_gpu(t, gpu) ? " (this GPU)" : "");
    }
    if (mg_dispatch_builtin_count == 0) printf("  none: auto follows the registry's rule on every GPU\n");
    if (sm == 90) printf("\nthis GPU: sm_90 (the build targets sm_90a: every kernel can run)\n");
    else if (sm) printf("\nthis GPU: sm_%d: the build targets sm_90a only (-gencode arch=compute_90a,code=sm_90a), so NO "
                        "kernel's device code can run here; rebuild with GENCODE for this GPU (the wgmma kernels need "
                        "sm_90a)\n", sm);
    else printf("\nno CUDA device here: nothing can run\n");
    return MG_EXIT_OK;
}

/* With no device: the exact CPU reference at a size that finishes in seconds. */
static int run_cpu_fallback(const mg_cli_args *a) {
    int64_t m = a->m < 64 ? a->m : 64, n = a->n < 256 ? a->n : 256, k = a->k < 256 ? a->k : 256;
    printf("no CUDA device: running the CPU fp64 reference at M=%lld N=%lld K=%lld instead of M=%lld N=%lld K=%lld "
           "(nothing timed, no CSV row)\n",
           (long long)m, (long long)n, (long long)k, (long long)a->m, (long long)a->n, (long long)a->k);
    double bound = k > 0 ? 1.0 / sqrt((double)k) : 1.0;
    double *x = malloc(sizeof(double) * (size_t)(m * (k ? k : 1)));
    double *W = malloc(sizeof(double) * (size_t)(n * (k ? k : 1)));
    double *b = malloc(sizeof(double) * (size_t)n);
    double *ref = malloc(sizeof(double) * (size_t)(m > n ? m : n));
    int rc = MG_EXIT_OK;
    if (!x || !W || !b || !ref) {
        fprintf(stderr, "maxgemm: host allocation failed\n");
        rc = MG_EXIT_RUNTIME;
        goto out;
    }
    for (int64_t i = 0; i < m * k; i++) x[i] = mg_rng_u01(a->seed, MG_RNG_X, (uint64_t)i);
    for (int64_t i = 0; i < n * k; i++) W[i] = mg_rng_uniform(a->seed, MG_RNG_W, (uint64_t)i, -bound, bound);
    for (int64_t i = 0; i < n; i++) b[i] = mg_rng_uniform(a->seed, MG_RNG_B, (uint64_t)i, -bound, bound);
    mg_status st = mg_reference(x, W, b, m, n, k, a->max_dim, ref);
    if (st != MG_OK) {
        fprintf(stderr, "maxgemm: %s: %s\n", mg_strerror(st), mg_last_error());
        rc = mg_cli_exit_code(st, 0);
    } else {
        int64_t len = (a->max_dim == 1 || a->max_dim == -1) ? m : n;
        printf("reference output (%lld values): first %.9g, last %.9g\n", (long long)len, ref[0], ref[len - 1]);
        printf("NOTHING WAS CHECKED against a GPU kernel: no CUDA device (exit status %d)\n", MG_EXIT_RUNTIME);
        rc = MG_EXIT_RUNTIME;
    }
out:
    free(x);
    free(W);
    free(b);
    free(ref);
    return rc;
}

/* ---- what the CSV row says about the machine (as maxgemm_bench's CSV does) ------------------------------------ */

typedef struct machine {
    char gpu[260];
    int max_clock_mhz;
    /* NVML through dlopen (never linked): the SM clock right after the samples. */
    void *nvml_lib, *nvml_dev;
    int (*nvml_clock)(void *dev, int type, unsigned *mhz);
} machine;

static void csv_clean(char *s) {
    for (; *s; s++) {
        if (*s == ',') *s = ';';
        else if (*s == '"') *s = '\'';
        else if (*s == '\n' || *s == '\r') *s = ' ';
    }
}

static void machine_open(machine *mc) {
    memset(mc, 0, sizeof *mc);
    int dev = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess)
        snprintf(mc->gpu, sizeof mc->gpu, "%s", prop.name);
    csv_clean(mc->gpu);
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess) mc->max_clock_mhz = khz / 1000;
    cudaGetLastError();
    mc->nvml_lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!mc->nvml_lib) return;
    int (*init)(void) = (int (*)(void))dlsym(mc->nvml_lib, "nvmlInit_v2");
    int (*by_bus)(const char *, void **) = (int (*)(const char *, void **))dlsym(mc->nvml_lib,
                                                                                  "nvmlDeviceGetHandleByPciBusId_v2");
    mc->nvml_clock = (int (*)(void *, int, unsigned *))dlsym(mc->nvml_lib, "nvmlDeviceGetClockInfo");
    char bus[64];
    if (!init || !by_bus || init() != 0 || cudaDeviceGetPCIBusId(bus, (int)sizeof bus, dev) != cudaSuccess ||
        by_bus(bus, &mc->nvml_dev) != 0) {
        mc->nvml_dev = NULL;
        mc->nvml_clock = NULL;
    }
}

static void machine_close(machine *mc) {
    if (mc->nvml_lib) dlclose(mc->nvml_lib);
    mc->nvml_lib = NULL;
}

/* The SM clock now (NVML_CLOCK_SM = 1), else the device's maximum; 0 if neither is known. */
static int sm_clock(const machine *mc) {
    unsigned mhz = 0;
    if (mc->nvml_clock && mc->nvml_dev && mc->nvml_clock(mc->nvml_dev, 1, &mhz) == 0 && mhz > 0) return (int)mhz;
    return mc->max_clock_mhz;
}

static const char CSV_HEADER[] =
    "kernel,name,precision,max_dim,m,n,k,shortcut,median_ms,min_ms,max_ms,mean_ms,tflops,gbps,x_kernel0,kernel0_ms,"
    "gemm,max_err,p999_err,max_rel_err,pass,status,gpu,sm_clock_mhz,commit,version,seed,flush,iters,warmup,tiles,"
    "streamk,mixed_panels,rem_split,pdl,shortcut_mode,shortcut_mode_used,plan\n";

static const char *switch_name(mg_switch s) {
    return s == MG_SWITCH_AUTO ? "auto" : s == MG_SWITCH_OFF ? "off" : s == MG_SWITCH_FORCE ? "force" : "?";
}

static void fnum(FILE *f, double v, const char *fmt) {
    fputc(',', f);
    if (isfinite(v)) fprintf(f, fmt, v);
}

/* 0 when path is absent or empty or starts with this version's header; else -1 (another file: do not mix). */
static int csv_compatible(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[sizeof CSV_HEADER + 8];
    int ok = !fgets(line, sizeof line, f) || strcmp(line, CSV_HEADER) == 0;
    fclose(f);
    return ok ? 0 : -1;
}

/* ---- run ----------------------------------------------------------------------------------------------------- */

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

#define DIE(code, ...)                                                                                             \
    do {                                                                                                           \
        fprintf(stderr, "maxgemm: " __VA_ARGS__);                                                                  \
        fputc('\n', stderr);                                                                                       \
        rc = (code);                                                                                               \
        goto done;                                                                                                 \
    } while (0)
#define TRY(call)                                                                                                  \
    do {                                                                                                           \
        mg_status s_ = (call);                                                                                     \
        if (s_ != MG_OK) DIE(mg_cli_exit_code(s_, 0), "%s: %s", mg_strerror(s_), mg_last_error());                 \
    } while (0)
#define CUDA(call)                                                                                                 \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess) DIE(MG_EXIT_RUNTIME, "%s: %s", #call, cudaGetErrorString(e_));                      \
    } while (0)

/* How many rows the short-circuit leaves to compute for these inputs: classify run once more, into scratch, exactly
 * as the forward ran it (the library decides the same way). 0: the forward ran no GEMM. -1 with a message on error. */
static long long shortcut_rows_left(const void *x, const void *W, const void *b, int64_t m, int64_t n, int64_t k,
                                    mg_precision prec, size_t es, cudaStream_t stream) {
    float *wstats = NULL;
    int *rows = NULL, *count = NULL;
    void *scratch = NULL;
    int h_count = -1;
    mg_status st = MG_OK;
    if (cudaMalloc((void **)&wstats, MG_WSTATS_FLOATS * sizeof(float)) != cudaSuccess ||
        cudaMalloc((void **)&rows, (size_t)m * sizeof(int)) != cudaSuccess ||
        cudaMalloc((void **)&count, sizeof(int)) != cudaSuccess || cudaMalloc(&scratch, (size_t)m * es) != cudaSuccess) {
        st = mg_set_error(MG_ERR_OUT_OF_MEMORY, "cudaMalloc for the short-circuit's row count: %s",
                          cudaGetErrorString(cudaGetLastError()));
    }
    if (st == MG_OK) st = mg_shortcut_weight_stats(W, b, n, k, prec, wstats, stream);
    if (st == MG_OK) st = mg_shortcut_classify(x, m, k, prec, wstats, scratch, rows, count, stream);
    if (st == MG_OK) {
        cudaError_t ce = cudaMemcpyAsync(&h_count, count, sizeof(int), cudaMemcpyDeviceToHost, stream);
        if (ce == cudaSuccess) ce = cudaStreamSynchronize(stream);
        if (ce != cudaSuccess) st = mg_set_error(MG_ERR_CUDA, "the short-circuit's row count: %s", cudaGetErrorString(ce));
    }
    cudaFree(wstats);
    cudaFree(rows);
    cudaFree(count);
    cudaFree(scratch);
    if (st != MG_OK) {
        fprintf(stderr, "maxgemm: %s: %s\n", mg_strerror(st), mg_last_error());
        return -1;
    }
    return h_count;
}

static int cmd_run(const mg_cli_args *a) {
    /* --dispatch: checked first, GPU or not (a malformed table is a usage error naming its line) */
    if (a->dispatch_path && mg_dispatch_load(a->dispatch_path) != MG_OK) {
        fprintf(stderr, "maxgemm: --dispatch: %s\n", mg_last_error());
        return MG_EXIT_USAGE;
    }
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        cudaGetLastError();
        return run_cpu_fallback(a);
    }
    int rc = MG_EXIT_OK;
    void *x = NULL, *W = NULL, *b = NULL, *out = NULL;
    double *ref_d = NULL, *ref = NULL;
    float *outf = NULL;
    mg_plan *plan = NULL, *base = NULL;
    mg_timer *timer = NULL;
    double *samples = NULL;
    cudaStream_t stream = NULL;
    machine mc;
    memset(&mc, 0, sizeof mc);

    mg_precision prec = a->precision;
    size_t es = prec == MG_PREC_BF16 ? 2 : 4;
    int64_t m = a->m, n = a->n, k = a->k;
    int md1 = (a->max_dim == 1 || a->max_dim == -1);
    size_t len = (size_t)(md1 ? m : n);
    const char *csv = a->csv_path && a->csv_path[0] ? a->csv_path : NULL;
    if (csv && csv_compatible(csv) != 0)
        DIE(MG_EXIT_USAGE, "--csv %s: the file holds rows of another format (its first line is not this version's "
                           "header): give a new file", csv);
    double bytes = (double)es * (double)(m * k + n * k + n) + (double)es * (double)len;
    size_t free_b = 0, total_b = 0;
    CUDA(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > 0.9 * (double)free_b)
        DIE(MG_EXIT_RUNTIME, "x, W and b need %.1f GiB, the device has %.1f GiB free (M=%lld N=%lld K=%lld)",
            bytes / 1073741824.0, free_b / 1073741824.0, (long long)m, (long long)n, (long long)k);

    mg_plan_desc d = mg_plan_desc_default();
    d.m = m;
    d.n = n;
    d.k = k;
    d.max_dim = a->max_dim;
    d.precision = prec;
    d.kernel = a->kernel;
    d.shortcut = a->shortcut;
    TRY(mg_plan_create(&plan, &d));
    TRY(mg_plan_set_options(plan, &a->opt));
    d.kernel = 0;
    d.shortcut = 0;
    if (a->baseline) {
        TRY(mg_plan_create(&base, &d));
        TRY(mg_plan_set_options(base, &a->opt));
    }

    CUDA(cudaStreamCreate(&stream));
    CUDA(cudaMalloc(&x, (size_t)(m * (k ? k : 1)) * es));
    CUDA(cudaMalloc(&W, (size_t)(n * (k ? k : 1)) * es));
    CUDA(cudaMalloc(&b, (size_t)n * es));
    CUDA(cudaMalloc(&out, len * es));
    TRY(mg_fill_seedlike(x, W, b, m, n, k, prec, a->seed, stream));
    TRY(mg_set_weights(plan, W, b, stream));
    if (base) TRY(mg_set_weights(base, W, b, stream));

    int kid = mg_plan_kernel(plan);
    const int sc_on = md1 && a->shortcut;
    printf("maxgemm run: kernel %d (%s), %s, max_dim %d, M=%lld N=%lld K=%lld, short-circuit %s\n", kid,
           mg_plan_kernel_name(plan), mg_precision_name(prec), a->max_dim, (long long)m, (long long)n, (long long)k,
           sc_on ? mg_shortcut_mode_name(a->opt.shortcut_mode) : "off");
    char plan_line[400] = "";
    if (mg_plan_describe(plan, m, plan_line, sizeof plan_line) == MG_OK)
        printf("  plan%s: %s\n", sc_on ? " (when rows are left to compute)" : "", plan_line);
    else
        plan_line[0] = '\0';   /* the forward below reports why planning failed */
    if (a->kernel == MG_KERNEL_AUTO) {
        char where[300];
        mg_plan_dispatch_where(plan, m, where, sizeof where);
        printf("  auto: %s%s\n", where[0] ? "dispatch table row " : "the registry's rule (no dispatch-table row for this "
                                                                     "GPU, precision, max_dim and M)", where);
    }

    /* Correctness before timing: poison, run once, compare with the fp64 GPU reference. */
    int pass = 1;
    mg_check_result cr;
    memset(&cr, 0, sizeof cr);
    TRY(mg_poison(out, len, prec, stream));
    TRY(mg_forward(plan, x, out, stream));
    CUDA(cudaStreamSynchronize(stream));
    const int sc_used = sc_on ? mg_plan_shortcut_mode_used(plan) : -1;
    /* Whether the forward ran a GEMM: always, unless the short-circuit ran and certified every row. */
    long long rows_left = 0;
    if (sc_used >= 0) {
        rows_left = shortcut_rows_left(x, W, b, m, n, k, prec, es, stream);
        if (rows_left < 0) {
            rc = MG_EXIT_RUNTIME;
            goto done;
        }
    }
    const int gemm = !(sc_used >= 0 && rows_left == 0);
    if (a->check) {
        CUDA(cudaMalloc((void **)&ref_d, len * sizeof(double)));
        TRY(mg_gpu_reference(x, W, b, m, n, k, md1 ? 1 : 0, prec, ref_d, stream));
        ref = malloc(len * sizeof(double));
        outf = malloc(len * es);
        if (!ref || !outf) DIE(MG_EXIT_RUNTIME, "host allocation failed");
        CUDA(cudaMemcpyAsync(ref, ref_d, len * sizeof(double), cudaMemcpyDeviceToHost, stream));
        CUDA(cudaMemcpyAsync(outf, out, len * es, cudaMemcpyDeviceToHost, stream));
        CUDA(cudaStreamSynchronize(stream));
        double tol = mg_precision_tolerance(prec);
        pass = prec == MG_PREC_BF16 ? mg_check_bf16(ref, (const uint16_t *)outf, len, tol, tol, &cr)
                                    : mg_check_f32(ref, outf, len, tol, tol, &cr);
    }

    int iters = a->iters;
    samples = malloc(sizeof(double) * (size_t)iters);
    if (!samples) DIE(MG_EXIT_RUNTIME, "host allocation failed");
    machine_open(&mc);
    TRY(mg_timer_create(&timer, a->flush_l2, stream));
    run_ctx rk = {plan, x, out, stream}, rb = {base, x, out, stream};
    TRY(mg_time(timer, timed_forward, &rk, a->warmup, iters, samples));
    const int clock_mhz = sm_clock(&mc);
    mg_stats sk = mg_stats_of(samples, iters);
    mg_stats sb = sk;
    if (base && (kid != 0 || sc_on)) {
        TRY(mg_time(timer, timed_forward, &rb, a->warmup, iters, samples));
        sb = mg_stats_of(samples, iters);
    }
    const double flop = 2.0 * (double)m * (double)n * (double)k;
    const double xb = (double)m * (double)k * (double)es, wb = ((double)n * (double)k + (double)n) * (double)es,
                 ob = (double)len * (double)es;
    const double tflops = gemm ? flop / (sk.median * 1e9) : NAN;
    const double gbps = (gemm ? xb + wb + ob : xb + ob) / (sk.median * 1e6);
    const double x_k0 = base ? sb.median / sk.median : NAN;
    if (mg_timer_hold_timeouts(timer) > 0)
        printf("  note: the timing hold timed out in %d of the sample batches (the forward blocked the host, as the "
               "sync and poll short-circuit modes do): their samples include host latency\n",
               mg_timer_hold_timeouts(timer));
    printf("  median %.4f ms (min %.4f, max %.4f, %d samples%s), ", sk.median, sk.min, sk.max, iters,
           a->flush_l2 ? ", L2 flushed" : "");
    if (gemm) printf("%.1f TFLOP/s, ", tflops);
    else printf("no GEMM (the short-circuit certified every row), %.0f GB/s, ", gbps);
    if (base)
        printf("%.3fx cuBLAS (kernel 0 full compute: %.4f ms)\n", x_k0, sb.median);
    else
        printf("kernel 0 not run (--no-baseline)\n");
    if (sc_used >= 0 && rows_left > 0)
        printf("  short-circuit (%s mode): %lld rows left to compute: the full path ran on all %lld rows\n",
               mg_shortcut_mode_name(sc_used), rows_left, (long long)m);
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
    if (csv) {
        FILE *f = fopen(csv, "a");
        if (!f) DIE(MG_EXIT_RUNTIME, "cannot open --csv file '%s'", csv);
        if (ftell(f) == 0) fputs(CSV_HEADER, f);
        char name[64], commit[96], planc[sizeof plan_line];
        snprintf(name, sizeof name, "%s", mg_plan_kernel_name(plan));
        snprintf(commit, sizeof commit, "%s", MG_GIT_COMMIT);
        snprintf(planc, sizeof planc, "%s", plan_line);
        csv_clean(name);
        csv_clean(commit);
        csv_clean(planc);
        fprintf(f, "%d,%s,%s,%d,%lld,%lld,%lld,%d", kid, name, mg_precision_name(prec), a->max_dim, (long long)m,
                (long long)n, (long long)k, sc_on);
        fnum(f, sk.median, "%.6f");
        fnum(f, sk.min, "%.6f");
        fnum(f, sk.max, "%.6f");
        fnum(f, sk.mean, "%.6f");
        fnum(f, tflops, "%.3f");
        fnum(f, gbps, "%.1f");
        fnum(f, x_k0, "%.4f");
        fnum(f, base ? sb.median : NAN, "%.6f");
        fprintf(f, ",%d", gemm);
        fnum(f, a->check ? cr.max_abs : NAN, "%.3e");
        fnum(f, a->check ? cr.p999_abs : NAN, "%.3e");
        fnum(f, a->check ? cr.max_rel : NAN, "%.3e");
        fputc(',', f);
        if (a->check) fprintf(f, "%d", pass);   /* empty: not checked (never 0, which is a failed check) */
        fprintf(f, ",%s,%s,", !a->check ? "ok" : pass ? "ok" : "fail", mc.gpu);
        if (clock_mhz > 0) fprintf(f, "%d", clock_mhz);
        fprintf(f, ",%s,%s,%llu,%d,%d,%d,%s,%s,%s,%s,%d,%s,%s,%s\n", commit, mg_version(),
                (unsigned long long)a->seed, a->flush_l2, iters, a->warmup, mg_tiles_name(a->opt.tiles),
                switch_name(a->opt.streamk), switch_name(a->opt.mixed_panels), switch_name(a->opt.rem_split),
                a->opt.pdl, mg_shortcut_mode_name(a->opt.shortcut_mode),
                sc_used >= 0 ? mg_shortcut_mode_name(sc_used) : "", planc);
        if (fclose(f) != 0) DIE(MG_EXIT_RUNTIME, "writing --csv file '%s' failed", csv);
    }
    rc = mg_cli_exit_code(MG_OK, a->check && !pass);
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
    machine_close(&mc);
    free(ref);
    free(outf);
    free(samples);
    return rc;
}

int main(int argc, char **argv) {
    mg_cli_args a;
    char err[512];
    if (mg_cli_parse(argc, argv, &a, err, sizeof err) != 0) {
        fprintf(stderr, "maxgemm: %s\n", err);
        if (argc < 2) fputs(mg_cli_usage(MG_CMD_HELP), stderr);
        else if (!strstr(err, "--help")) fprintf(stderr, "(see 'maxgemm --help')\n");
        return MG_EXIT_USAGE;
    }
    switch (a.command) {
    case MG_CMD_LIST: return cmd_list(&a);
    case MG_CMD_RUN: return cmd_run(&a);
    case MG_CMD_VERSION: return cmd_version();
    default: fputs(mg_cli_usage(a.help_for), stdout); return MG_EXIT_OK;
    }
}
