/* bench.c: the benchmark (build/maxgemm_bench, `make bench`). Runs bench/matrix.txt through the PUBLIC API
 * (mg_plan_create / mg_set_weights / mg_forward) and the registry, and writes one CSV that the plots and the
 * README table read (never printf output).
 *
 *   maxgemm_bench [--matrix FILE] [--csv FILE] [--only-kernel N|NAME] [--quick] [--no-flush] [--list]
 *                 [--commit STR] [library options: --tiles ... --verbose, as `maxgemm run`]
 *   maxgemm_bench --ncu-regex N        (prints the default `ncu -k regex:` for kernel N; used by `make ncu`)
 *   maxgemm_bench --help | --version
 * The command line follows maxgemm's rules (src/cli_args.h, mg_cli_getopt); the library options (mg_options: --tiles,
 * --no-streamk, --mixed-panels, --rem-split, --no-pdl, --shortcut-mode, --verbose) go to every plan, kernel 0's
 * included, and are recorded in every row of the CSV.
 *
 * Every kernel row, in order: create the plan (or skip, saying why), set the weights (weight preparation is
 * one-time work and is NOT timed), poison the output, run once and CHECK it against the GPU fp64 reference
 * (max_err and pass recorded), then time `samples` forwards, each alone between CUDA events, with the L2
 * flushed before each one (src/timing.c). Inputs are filled once per (shape, precision) and the reference is
 * computed once per (shape, precision, max_dim); kernel 0 runs first in every group, so x_kernel0 (kernel 0's
 * median over the row's median) is always a same-run ratio. The ceilings (copy bandwidth, cuBLAS bf16 / tf32
 * / fp32 rates) are measured in the same run, first, as rows with kernel = -1.
 *
 * Units: ms; tflops = 2MNK / median; gbps = bytes that must move at least once (x, W, b read, out written;
 * the short-circuit reads only x) / median; intensity = flop / those bytes.
 * Columns appended after `plan` (readers go by name): kernel0_ms, kernel 0's median over the samples interleaved
 * with this row's (the x_kernel0 numerator; empty where the row was not timed interleaved: kernel 0's own rows,
 * --no-flush, a kernel 0 plan that could not be made); p10_ms / p90_ms, the 10th and 90th percentiles of the
 * row's own samples (linear interpolation between order statistics); date, the run's start in ISO 8601 UTC (one
 * value for every row of a run); requested_kernel, what the matrix asked for ("auto" or the id; `kernel` is the
 * kernel that ran; empty for ceilings, splits and the bare write); dispatch, for an auto row the dispatch-table row
 * ("FILE:LINE", src/dispatch.h) that chose its kernel and options, empty where the registry's rule did; options, a
 * kernel row's launch options that are not auto, KEY=VALUE joined by ';' (src/optkeys.h), or "auto". `flush` (1: L2
 * flushed before every sample) was already there. tiles, streamk, mixed_panels and rem_split are the row's own
 * options: the command line's with the matrix row's KEY=VALUE (or its variant) over them. A kernel row whose launch
 * plan is the same as an earlier row's of its kernel and problem (a variant that changes nothing there) is skipped.
 * Exit status (as maxgemm's): 0 when every row that ran passed; 1 a check failed; 2 usage error (flags, the matrix
 * file); 3 runtime error (a row's error, no GPU (except --list), the CSV cannot be written). 3 wins over 1.
 */
#include "bare_write.h"
#include "dispatch.h"
#include "split.h"
#include "rng.h"
#include "check.h"
#include "cli_args.h"
#include "gpu_util.h"
#include "matrix.h"
#include "maxgemm.h"
#include "mg_kernel.h"
#include "shortcut.h"
#include "timing.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

_Static_assert((int)MGM_FP32 == (int)MG_PREC_FP32 && (int)MGM_TF32 == (int)MG_PREC_TF32 &&
                   (int)MGM_BF16 == (int)MG_PREC_BF16,
               "matrix.h numbers precisions as mg_precision");

/* The commit compiled in (the Makefile passes -DMG_GIT_COMMIT); --commit overrides it at run time. */
#ifndef MG_GIT_COMMIT
#define MG_GIT_COMMIT "unknown"
#endif

/* ------------------------------------------------------------------------------------------ options */

typedef struct opts {
    const char *matrix, *csv;
    int only_kernel;   /* -1: all */
    int quick, list, no_flush, help, version;
    const char *commit;      /* --commit: NULL = the compiled-in MG_GIT_COMMIT */
    const char *ncu_regex;   /* --ncu-regex N */
    const char *dispatch;    /* --dispatch FILE: the dispatch table auto follows (mg_dispatch_load) */
    mg_options opt;          /* the library options, for every plan */
} opts;

static void usage(FILE *f) {
    fprintf(f,
            "usage: maxgemm_bench [--matrix FILE] [--csv FILE] [--only-kernel N|NAME] [--quick] [--no-flush] [--list]\n"
            "                     [--commit STR] [--dispatch FILE] [library options]\n"
            "       maxgemm_bench --ncu-regex N | --help | --version\n"
            "      --matrix FILE                         the matrix (default bench/matrix.txt; its grammar is at its top)\n"
            "      --csv FILE                            where the results go (default bench/results/latest.csv)\n"
            "      --only-kernel N|NAME                  only that kernel's rows (kernel 0 stays: every row's baseline)\n"
            "      --quick                               the matrix's quick_samples per row instead of samples, one warm-up\n"
            "      --no-flush                            keep the L2 warm between samples (default: flushed before each)\n"
            "      --list                                print the rows and what would be skipped; runs nothing (no GPU)\n"
            "      --commit STR                          the commit recorded in every row (default: the one built in, %s)\n"
            "      --dispatch FILE                       auto follows this dispatch table instead of the compiled-in ones\n"
            "                                            (tile_configs/README.md; /dev/null: the registry's rule)\n"
            "      --ncu-regex N                         print kernel N's device-function regex (make ncu) and exit\n"
            "  -h, --help                                this text\n"
            "  -V, --version                             the library version and the built-in commit\n"
            "%s"
            "exit status: 0 every row that ran passed; 1 a check failed; 2 usage error; 3 runtime error (wins over 1)\n",
            MG_GIT_COMMIT, MG_CLI_OPTION_HELP);
}

/* ------------------------------------------------------------------------------------------ run context */

typedef struct env {
    cudaStream_t stream;
    mg_timer *timer;
    int flush;              /* the L2 is flushed before every sample (not --no-flush) */
    int sm, num_sms;
    char gpu[260], driver[160], driver_cuda[16], cuda[16], cublas[48], commit[96];
    int max_clock_mhz;
    uint64_t seed;          /* the matrix's */
    char date[32];          /* the run's start, ISO 8601 UTC */
    mg_options opt;         /* the library options every plan gets (the command line's) */
    /* NVML through dlopen (never linked): the driver version and the SM clock right after each row's samples. */
    void *nvml_lib, *nvml_dev;
    int (*nvml_clock)(void *dev, int type, unsigned *mhz);
} env;

static void csv_clean(char *s) {
    for (; *s; s++) {
        if (*s == ',') *s = ';';
        else if (*s == '"') *s = '\'';
        else if (*s == '\n' || *s == '\r') *s = ' ';
    }
}

static void nvml_open(env *e, int dev) {
    e->nvml_lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!e->nvml_lib) return;
    int (*init)(void) = (int (*)(void))dlsym(e->nvml_lib, "nvmlInit_v2");
    int (*by_bus)(const char *, void **) = (int (*)(const char *, void **))dlsym(e->nvml_lib,
                                                                                  "nvmlDeviceGetHandleByPciBusId_v2");
    int (*drv)(char *, unsigned) = (int (*)(char *, unsigned))dlsym(e->nvml_lib, "nvmlSystemGetDriverVersion");
    e->nvml_clock = (int (*)(void *, int, unsigned *))dlsym(e->nvml_lib, "nvmlDeviceGetClockInfo");
    char bus[64];
    if (!init || !by_bus || init() != 0 || cudaDeviceGetPCIBusId(bus, (int)sizeof bus, dev) != cudaSuccess ||
        by_bus(bus, &e->nvml_dev) != 0) {
        e->nvml_dev = NULL;
        e->nvml_clock = NULL;
        return;
    }
    char v[80];
    if (drv && drv(v, sizeof v) == 0) snprintf(e->driver, sizeof e->driver, "%s (CUDA %s)", v, e->driver_cuda);
}

/* The SM clock now (NVML_CLOCK_SM = 1), else the device's maximum. */
static int sm_clock(const env *e) {
    unsigned mhz = 0;
    if (e->nvml_clock && e->nvml_dev && e->nvml_clock(e->nvml_dev, 1, &mhz) == 0 && mhz > 0) return (int)mhz;
    return e->max_clock_mhz;
}

/* ------------------------------------------------------------------------------------------ results */

enum { ST_OK, ST_SKIPPED, ST_FAIL, ST_ERROR };
static const char *st_name[] = {"ok", "skipped", "fail", "error"};

typedef struct result {
    int status;
    char note[320];
    int kernel;             /* the kernel that ran (auto resolved) */
    char name[48];
    mg_stats st;
    double p10, p90;        /* percentiles of the row's samples */
    double k0_ms;           /* paired kernel 0 median (interleaved samples), NAN when not paired */
    double tflops, gbps, intensity, x_kernel0, max_err;
    int pass;               /* -1: not checked */
    int clock_mhz;
    int samples;
    char plan[240];         /* kernel rows: mg_plan_describe of the row's batch ("" otherwise) */
    char dispatch[300];     /* auto rows: the dispatch-table row that applied ("FILE:LINE"), else "" */
} result;

static void res_init(result *r) {
    memset(r, 0, sizeof *r);
    r->st.median = r->st.min = r->st.max = r->st.mean = NAN;
    r->p10 = r->p90 = r->k0_ms = NAN;
    r->tflops = r->gbps = r->intensity = r->x_kernel0 = r->max_err = NAN;
    r->pass = -1;
}

static int res_set(result *r, int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int res_set(result *r, int status, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->note, sizeof r->note, fmt, ap);
    va_end(ap);
    r->status = status;
    return status;
}

static void fnum(FILE *f, double v, const char *fmt) {
    fputc(',', f);
    if (isfinite(v)) fprintf(f, fmt, v);
}

static const char *CSV_HEADER =
    "kernel,name,precision,max_dim,m,n,k,shortcut,median_ms,min_ms,max_ms,mean_ms,tflops,gbps,intensity,x_kernel0,"
    "max_err,pass,status,note,gpu,sm_clock_mhz,driver,cuda,cublas,commit,samples,seed,flush,tiles,streamk,mixed_panels,"
    "rem_split,pdl,shortcut_mode,plan,kernel0_ms,p10_ms,p90_ms,date,requested_kernel,dispatch,options\n";

static const char *switch_name(mg_switch s) {
    return s == MG_SWITCH_AUTO ? "auto" : s == MG_SWITCH_OFF ? "off" : s == MG_SWITCH_FORCE ? "force" : "?";
}

/* A row's options: the command line's, with the matrix row's own (a 'row' line's KEY=VALUE, a variant) over them. */
static mg_options row_options(const env *e, const mgm_row *row) {
    mg_options o = e->opt;
    mg_optset_apply(&row->opt, &o);
    return o;
}

static void csv_row(FILE *f, const env *e, const mgm_row *row, result *r) {
    csv_clean(r->note);
    csv_clean(r->name);
    fprintf(f, "%d,%s,", r->kernel, r->name);
    if (row->prec >= 0 && row->kind != MGM_CEIL_COPY) fputs(mgm_prec_name(row->prec), f);
    fputc(',', f);
    if (row->max_dim >= 0) fprintf(f, "%d", row->max_dim);
    if (row->kind == MGM_CEIL_COPY) fputs(",,,", f);
    else fprintf(f, ",%lld,%lld,%lld", (long long)row->m, (long long)row->n, (long long)row->k);
    fputc(',', f);
    if (row->kind == MGM_KERNEL || row->kind == MGM_BARE_WRITE) fprintf(f, "%d", row->shortcut);
    fnum(f, r->st.median, "%.6g");
    fnum(f, r->st.min, "%.6g");
    fnum(f, r->st.max, "%.6g");
    fnum(f, r->st.mean, "%.6g");
    fnum(f, r->tflops, "%.6g");
    fnum(f, r->gbps, "%.6g");
    fnum(f, r->intensity, "%.6g");
    fnum(f, r->x_kernel0, "%.5g");
    fnum(f, r->max_err, "%.3e");
    fputc(',', f);
    if (r->pass >= 0) fprintf(f, "%d", r->pass);
    fprintf(f, ",%s,%s,%s,", st_name[r->status], r->note, e->gpu);
    if (r->clock_mhz > 0) fprintf(f, "%d", r->clock_mhz);
    fprintf(f, ",%s,%s,%s,%s,", e->driver, e->cuda, e->cublas, e->commit);
    if (r->samples > 0) fprintf(f, "%d", r->samples);
    csv_clean(r->plan);
    const mg_options o = row_options(e, row);
    fprintf(f, ",%llu,%d,%s,%s,%s,%s,%d,%s,%s", (unsigned long long)e->seed, e->flush, mg_tiles_name(o.tiles),
            switch_name(o.streamk), switch_name(o.mixed_panels), switch_name(o.rem_split), o.pdl,
            mg_shortcut_mode_name(o.shortcut_mode), r->plan);
    fnum(f, r->k0_ms, "%.6g");
    fnum(f, r->p10, "%.6g");
    fnum(f, r->p90, "%.6g");
    fprintf(f, ",%s,", e->date);
    if (row->kind == MGM_KERNEL) {
        if (row->kernel < 0) fputs("auto", f);
        else fprintf(f, "%d", row->kernel);
    }
    csv_clean(r->dispatch);
    /* every launch option of the row that is not auto, as KEY=VALUE joined by ';' (src/optkeys.h), or "auto" */
    mg_optset os;
    mg_optset_of(&o, &os);
    char ostr[160];
    mg_optset_format(&os, ostr, sizeof ostr);
    csv_clean(ostr);
    fprintf(f, ",%s,%s\n", r->dispatch, row->kind == MGM_KERNEL ? ostr : "");
    fflush(f);
}

/* "k3 bf16 md1 1024x8192x8192" and friends, for progress lines and --list. */
static void row_label(const mgm_row *row, char *buf, size_t n) {
    switch (row->kind) {
    case MGM_CEIL_COPY: snprintf(buf, n, "ceiling_copy %lld MiB", (long long)row->m); break;
    case MGM_CEIL_BF16:
    case MGM_CEIL_TF32:
    case MGM_CEIL_FP32:
        snprintf(buf, n, "ceiling_%s %lldx%lldx%lld", mgm_prec_name(row->prec), (long long)row->m, (long long)row->n,
                 (long long)row->k);
        break;
    case MGM_CEIL_INT8:
        snprintf(buf, n, "ceiling_int8 %lldx%lldx%lld", (long long)row->m, (long long)row->n, (long long)row->k);
        break;
    case MGM_BARE_WRITE: snprintf(buf, n, "bare_write %lld floats", (long long)row->m); break;
    case MGM_SPLIT_W: snprintf(buf, n, "split_w %lldx%lld", (long long)row->n, (long long)row->k); break;
    case MGM_SPLIT_X: snprintf(buf, n, "split_x %lldx%lld", (long long)row->m, (long long)row->k); break;
    case MGM_KERNEL: {
        char k[16];
        if (row->kernel < 0) snprintf(k, sizeof k, "auto");
        else snprintf(k, sizeof k, "k%d", row->kernel);
        char o[96] = "";
        if (row->opt.set) {
            o[0] = ' ';
            mg_optset_format(&row->opt, o + 1, sizeof o - 1);
        }
        snprintf(buf, n, "%s %s md%d %lldx%lldx%lld%s%s", k, mgm_prec_name(row->prec), row->max_dim, (long long)row->m,
                 (long long)row->n, (long long)row->k, row->shortcut ? " shortcut" : "", o);
        break;
    }
    }
}

static const char *ceiling_name(mgm_kind k) {
    switch (k) {
    case MGM_CEIL_COPY: return "ceiling_copy";
    case MGM_CEIL_BF16: return "ceiling_bf16";
    case MGM_CEIL_TF32: return "ceiling_tf32";
    case MGM_CEIL_FP32: return "ceiling_fp32";
    case MGM_CEIL_INT8: return "ceiling_int8";
    default: return "?";
    }
}

/* Reasons a kernel row cannot run that are known without creating a plan; sm = 0 means "no GPU known". */
static const char *precheck(const mgm_row *row, int sm, char *buf, size_t n) {
    if (row->skip[0]) return row->skip;
    if (row->kind != MGM_KERNEL || row->kernel < 0) return NULL;
    const mg_kernel *k = mg_registry_find(row->kernel);
    if (!k) { snprintf(buf, n, "kernel %d is not in the registry", row->kernel); return buf; }
    if (!mg_kernel_available(k)) { snprintf(buf, n, "kernel %d (%s) is not built into this binary", k->id, k->name); return buf; }
    if (sm > 0 && sm < k->min_sm) {
        snprintf(buf, n, "kernel %d (%s) needs sm_%d; this GPU is sm_%d", k->id, k->name, k->min_sm, sm);
        return buf;
    }
    return NULL;
}

/* The launch plans of the current (shape, precision, max_dim) group's kernel rows so far: a row (an option variant)
 * whose launch plan is the same as an earlier row's of its kernel measures nothing new, and is skipped. */
typedef struct seen_plan {
    int shape_order, prec, max_dim, kernel;
    mg_optset opt;
    mg_launch_plan lp;
} seen_plan;
typedef struct plan_memo { seen_plan *v; int n, cap; } plan_memo;

/* For an explicit kernel row (full compute): its launch plan on dev with options o (the kernel's plan step, on the
 * host, as the library makes it for operands that cudaMalloc aligned). Returns PLAN_NEW after remembering the plan
 * (or where there is nothing to compare), else a reason to skip the row in why: PLAN_SAME (the plan equals an
 * earlier row's of the group and kernel) or PLAN_FAILS. */
enum { PLAN_NEW = 0, PLAN_SAME, PLAN_FAILS };
static int same_plan(plan_memo *pm, const mgm_row *row, const mg_device *dev, const mg_options *o, char *why, size_t n) {
    const mg_kernel *k = row->kernel >= 0 ? mg_registry_find(row->kernel) : NULL;
    if (row->kind != MGM_KERNEL || row->shortcut || !k || !mg_kernel_available(k)) return PLAN_NEW;
    if (pm->n > 0 && (pm->v[0].shape_order != row->shape_order || pm->v[0].prec != row->prec ||
                      pm->v[0].max_dim != row->max_dim))
        pm->n = 0;   /* a new group: rows come sorted by group */
    if (pm->n == pm->cap) {
        const int cap = pm->cap ? 2 * pm->cap : 16;
        seen_plan *nv = (seen_plan *)realloc(pm->v, (size_t)cap * sizeof *nv);
        if (!nv) return PLAN_NEW;   /* nothing skipped: the row runs */
        pm->v = nv;
        pm->cap = cap;
    }
    seen_plan *sp = &pm->v[pm->n];
    memset(sp, 0, sizeof *sp);
    sp->shape_order = row->shape_order;
    sp->prec = row->prec;
    sp->max_dim = row->max_dim;
    sp->kernel = row->kernel;
    sp->opt = row->opt;
    mg_problem p = {(int)row->m, (int)row->n, (int)row->k, row->max_dim, (mg_precision)row->prec,
                    MG_ALIGN_X16 | MG_ALIGN_W16};
    sp->lp.p = p;
    if (k->ops->plan(&p, dev, o, &sp->lp) != MG_OK) {
        snprintf(why, n, "its launch plan: %s", mg_last_error());
        return PLAN_FAILS;
    }
    for (int i = 0; i < pm->n; i++)
        if (pm->v[i].kernel == row->kernel && memcmp(&pm->v[i].lp, &sp->lp, sizeof sp->lp) == 0) {
            char o2[96];
            mg_optset_format(&pm->v[i].opt, o2, sizeof o2);
            snprintf(why, n, "the same launch plan as its %s row: nothing new to measure", o2);
            return PLAN_SAME;
        }
    pm->n++;
    return PLAN_NEW;
}

/* ------------------------------------------------------------------------------------------ progress */

/* A rough guess of one forward's time in seconds on an H200, for the progress line's estimate only (it is scaled
 * by what the run has measured so far): the larger of reading x, W, b once at ~3.5 TB/s and 2MNK at a per-kernel
 * rate near what bench/results/h200.csv measured, plus a launch. */
static double guess_fwd_s(int kernel, int prec, int64_t m, int64_t n, int64_t k) {
    const double es = prec == MGM_BF16 ? 2.0 : 4.0;
    double bytes = ((double)m * (double)k + (double)n * (double)k + (double)n) * es;
    const double flop = 2.0 * (double)m * (double)n * (double)k;
    double bw = 3.5e12, rate;   /* bytes/s, flop/s */
    if (kernel < 0) kernel = prec == MGM_FP32 ? (m <= 8 ? 7 : 6) : (m <= 1 ? 7 : 4);   /* auto, roughly */
    switch (kernel) {
    case 0: rate = prec == MGM_FP32 ? 50e12 : prec == MGM_TF32 ? 400e12 : 750e12; break;
    case 1: rate = 1.5e12; bw = 0.11e12; break;                      /* the naive kernel re-reads W */
    case 2: rate = prec == MGM_BF16 ? 280e12 : 130e12; break;
    case 3: rate = prec == MGM_BF16 ? 650e12 : 350e12; break;
    case 5: rate = 240e12; break;
    case 6: rate = 270e12; break;
    case 7: rate = 20e12; bytes *= (double)((m + 7) / 8); break;    /* W streamed once per 8 rows */
    default: rate = prec == MGM_BF16 ? 700e12 : prec == MGM_TF32 ? 420e12 : 270e12; break;
    }
    double t = bytes / bw, tf = flop / rate;
    return (t > tf ? t : tf) + 10e-6;
}

/* A guess of a whole row's wall time in seconds: warm-up + samples of the row and (paired) of kernel 0, the
 * settle before each (>= SETTLE_MS), the check and the plan set-up. 0 for rows that will be skipped. */
static double guess_row_s(const mgm_row *row, int sm, int flush, int warmup, int samples) {
    char why[160];
    if (precheck(row, sm, why, sizeof why)) return 0.0;
    const double n = (double)(warmup + samples), fixed = 0.012, settle = 0.030;
    switch (row->kind) {
    case MGM_CEIL_COPY: return n * 2.0 * (double)row->m * 1048576.0 / 3.5e12 + fixed;
    case MGM_CEIL_BF16:
    case MGM_CEIL_TF32:
    case MGM_CEIL_FP32: return n * guess_fwd_s(0, row->prec, row->m, row->n, row->k) + fixed;
    case MGM_CEIL_INT8: return n * guess_fwd_s(0, MGM_BF16, row->m, row->n, row->k) + fixed;   /* at most bf16's */
    case MGM_BARE_WRITE: return 2.0 * n * 5e-6 + fixed;
    case MGM_SPLIT_W:
    case MGM_SPLIT_X: return n * (double)(row->kind == MGM_SPLIT_W ? row->n : row->m) * (double)row->k * 8.0 / 3.5e12 + fixed;
    case MGM_KERNEL: {
        double t = row->shortcut ? 20e-6 : guess_fwd_s(row->kernel, row->prec, row->m, row->n, row->k);
        double c = n * t + (8.0 * t > settle ? 8.0 * t : settle) + fixed;
        if (row->kernel != 0 && flush) {
            double t0 = guess_fwd_s(0, row->prec, row->m, row->n, row->k);
            c += n * t0 + (8.0 * t0 > settle ? 8.0 * t0 : settle);
        }
        if (row->shortcut) c += 2.0 * n * t;   /* the classify alone / the graph launch */
        return c;
    }
    }
    return fixed;
}

/* "m:ss" or "h:mm:ss" */
static const char *hms(double s, char *buf, size_t n) {
    long v = s > 0 && isfinite(s) ? (long)(s + 0.5) : 0;
    if (v >= 3600) snprintf(buf, n, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else snprintf(buf, n, "%ld:%02ld", v / 60, v % 60);
    return buf;
}

/* ------------------------------------------------------------------------------------------ per-group state */

/* Inputs of the current (shape, precision): filled once, shared by every kernel and max_dim of the group. */
typedef struct inputs {
    int valid, shape_order, prec;
    int64_t m, n, k;
    void *x, *W, *b, *out;
    double *d_ref;             /* device, max(M, N) doubles */
    double *ref[2];            /* host copies per max_dim, NULL until computed */
    void *h_out;               /* host copy of out */
} inputs;

static void inputs_free(inputs *in) {
    cudaFree(in->x);
    cudaFree(in->W);
    cudaFree(in->b);
    cudaFree(in->out);
    cudaFree(in->d_ref);
    free(in->ref[0]);
    free(in->ref[1]);
    free(in->h_out);
    memset(in, 0, sizeof *in);
}

static mg_status dmalloc(void **p, size_t bytes, const char *what) {
    cudaError_t e = cudaMalloc(p, bytes ? bytes : 16);
    if (e != cudaSuccess) {
        cudaGetLastError();   /* an allocation failure is not sticky: clear it */
        *p = NULL;
        return mg_set_error(MG_ERR_OUT_OF_MEMORY, "cudaMalloc of %.1f MiB for %s: %s", (double)bytes / 1048576.0, what,
                            cudaGetErrorString(e));
    }
    return MG_OK;
}

static mg_status inputs_get(env *e, inputs *in, const mgm_row *row, const mg_matrix *mx) {
    if (in->valid && in->shape_order == row->shape_order && in->prec == row->prec) return MG_OK;
    inputs_free(in);
    size_t es = mg_elem_bytes((mg_precision)row->prec);
    size_t len = (size_t)(row->m > row->n ? row->m : row->n);
    mg_status s;
    if ((s = dmalloc(&in->x, (size_t)row->m * (size_t)row->k * es, "x")) != MG_OK ||
        (s = dmalloc(&in->W, (size_t)row->n * (size_t)row->k * es, "W")) != MG_OK ||
        (s = dmalloc(&in->b, (size_t)row->n * es, "b")) != MG_OK ||
        (s = dmalloc(&in->out, len * es, "out")) != MG_OK ||
        (s = dmalloc((void **)&in->d_ref, len * sizeof(double), "the reference")) != MG_OK) {
        inputs_free(in);
        return s;
    }
    in->h_out = malloc(len * es);
    if (!in->h_out) {
        inputs_free(in);
        return mg_set_error(MG_ERR_OUT_OF_MEMORY, "host allocation of %zu output elements", len);
    }
    s = mg_fill_seedlike(in->x, in->W, in->b, row->m, row->n, row->k, (mg_precision)row->prec, mx->seed, e->stream);
    if (s == MG_OK && cudaStreamSynchronize(e->stream) != cudaSuccess)
        s = mg_set_error(MG_ERR_CUDA, "filling the inputs: %s", cudaGetErrorString(cudaGetLastError()));
    if (s != MG_OK) { inputs_free(in); return s; }
    in->valid = 1;
    in->shape_order = row->shape_order;
    in->prec = row->prec;
    in->m = row->m; in->n = row->n; in->k = row->k;
    return MG_OK;
}

static mg_status reference_get(env *e, inputs *in, int max_dim, const double **ref) {
    if (in->ref[max_dim]) { *ref = in->ref[max_dim]; return MG_OK; }
    size_t len = (size_t)(max_dim == 1 ? in->m : in->n);
    double *h = (double *)malloc(len * sizeof(double));
    if (!h) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "host allocation of the reference (%zu doubles)", len);
    mg_status s = mg_gpu_reference(in->x, in->W, in->b, in->m, in->n, in->k, max_dim, (mg_precision)in->prec,
                                   in->d_ref, e->stream);
    if (s == MG_OK) {
        cudaError_t ce = cudaMemcpyAsync(h, in->d_ref, len * sizeof(double), cudaMemcpyDeviceToHost, e->stream);
        if (ce == cudaSuccess) ce = cudaStreamSynchronize(e->stream);
        if (ce != cudaSuccess) s = mg_set_error(MG_ERR_CUDA, "copying the reference: %s", cudaGetErrorString(ce));
    }
    if (s != MG_OK) { free(h); return s; }
    in->ref[max_dim] = h;
    *ref = h;
    return MG_OK;
}

/* Kernel-0 medians per (shape, precision, max_dim): the x_kernel0 denominators. */
typedef struct baseline { int shape_order, prec, max_dim; double ms; } baseline;
typedef struct baselines { baseline *v; int n, cap; } baselines;

static void base_put(baselines *b, int so, int prec, int md, double ms) {
    if (b->n == b->cap) {
        int cap = b->cap ? 2 * b->cap : 64;
        baseline *nv = (baseline *)realloc(b->v, (size_t)cap * sizeof *nv);
        if (!nv) return;   /* x_kernel0 stays empty: not worth failing the run */
        b->v = nv;
        b->cap = cap;
    }
    b->v[b->n++] = (baseline){so, prec, md, ms};
}

static double base_get(const baselines *b, int so, int prec, int md) {
    for (int i = 0; i < b->n; i++)
        if (b->v[i].shape_order == so && b->v[i].prec == prec && b->v[i].max_dim == md) return b->v[i].ms;
    return NAN;
}

/* ------------------------------------------------------------------------------------------ timed bodies */

typedef struct fwd_ctx { mg_plan *plan; const void *x; void *out; cudaStream_t stream; } fwd_ctx;
static mg_status fwd_fn(void *p) {
    fwd_ctx *c = (fwd_ctx *)p;
    return mg_forward(c->plan, c->x, c->out, c->stream);
}

/* Time-based warm-up before a row's samples: run the work for at least SETTLE_MS of wall time (at most
 * SETTLE_MAX calls). A count of warm-ups is not enough: right after the fp64 reference (a DGEMM at full power)
 * the first row of a group, which is always kernel 0, ran up to 11% slow in one run (r6) while the rows after it
 * did not, and every ratio of the group is taken against that row. */
#define SETTLE_MS 30.0
#define SETTLE_MAX 2000
static mg_status settle(mg_timed_fn fn, void *ctx, cudaStream_t stream) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < SETTLE_MAX; i++) {
        mg_status s = fn(ctx);
        if (s != MG_OK) return s;
        if (i % 8 == 7) {
            MG_CUDA_TRY(cudaStreamSynchronize(stream));
            clock_gettime(CLOCK_MONOTONIC, &t1);
            if ((t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) * 1e-6 >= SETTLE_MS) break;
        }
    }
    MG_CUDA_TRY(cudaStreamSynchronize(stream));
    return MG_OK;
}

typedef struct copy_ctx { void *dst; const void *src; size_t bytes; cudaStream_t stream; } copy_ctx;
static mg_status copy_fn(void *p) {
    copy_ctx *c = (copy_ctx *)p;
    MG_CUDA_TRY(cudaMemcpyAsync(c->dst, c->src, c->bytes, cudaMemcpyDeviceToDevice, c->stream));
    return MG_OK;
}

typedef struct gemm_ctx {
    cublasHandle_t h;
    int m, n, k;
    const void *x, *W;
    void *y;
    cudaDataType_t ab, c;
    cublasComputeType_t compute;
} gemm_ctx;
static mg_status gemm_fn(void *p) {
    gemm_ctx *g = (gemm_ctx *)p;
    const float one = 1.0f, zero = 0.0f;
    const int32_t ione = 1, izero = 0;   /* CUBLAS_COMPUTE_32I scales in int32 */
    const int ints = g->compute == CUBLAS_COMPUTE_32I;
    /* Row-major y (M x N) = x W^T is column-major y^T (N x M, ld N) = op_T(W as K x N column-major) x (K x M): the
     * TN layout, which is also the one cuBLAS's int8 tensor-core GEMM takes. */
    cublasStatus_t s = cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, g->n, g->m, g->k, ints ? (const void *)&ione : &one,
                                    g->W, g->ab, g->k, g->x, g->ab, g->k, ints ? (const void *)&izero : &zero, g->y,
                                    g->c, g->n, g->compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS)
        return mg_set_error(MG_ERR_CUBLAS, "cublasGemmEx(%d, %d, %d): cuBLAS status %d", g->n, g->m, g->k, (int)s);
    return MG_OK;
}

typedef struct bare_ctx { float *dst; int m; cudaStream_t stream; } bare_ctx;
static mg_status bare_fn(void *p) {
    bare_ctx *c = (bare_ctx *)p;
    return mgb_bare_write(c->dst, c->m, c->stream);
}

static int cmp_dbl(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The 10th and 90th percentiles of n samples (linear interpolation between order statistics, numpy's default). */
static void percentiles(const double *samples, int n, double *p10, double *p90) {
    *p10 = *p90 = NAN;
    if (n <= 0) return;
    double *c = (double *)malloc((size_t)n * sizeof *c);
    if (!c) return;
    memcpy(c, samples, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_dbl);
    const double q[2] = {0.10, 0.90};
    double *out[2] = {p10, p90};
    for (int i = 0; i < 2; i++) {
        double h = (n - 1) * q[i];
        int lo = (int)h;
        *out[i] = lo + 1 < n ? c[lo] + (h - lo) * (c[lo + 1] - c[lo]) : c[n - 1];
    }
    free(c);
}

static mg_status time_it(env *e, mg_timed_fn fn, void *ctx, int warmup, int samples, result *r) {
    double *buf = (double *)malloc((size_t)samples * sizeof(double));
    if (!buf) return mg_set_error(MG_ERR_OUT_OF_MEMORY, "host allocation of %d samples", samples);
    mg_status s = mg_time(e->timer, fn, ctx, warmup, samples, buf);
    if (s == MG_OK) {
        r->st = mg_stats_of(buf, samples);
        percentiles(buf, samples, &r->p10, &r->p90);
        r->samples = samples;
        r->clock_mhz = sm_clock(e);
    }
    free(buf);
    return s;
}

/* Interleaved timing against kernel 0 (mg_time_interleaved): samples alternate (kernel 0, this row, kernel 0, ...),
 * so both medians come from the same seconds of the run and a clock or power swing moves both. */
static mg_status time_paired(env *e, fwd_ctx *base, fwd_ctx *mine, int warmup, int samples, result *r,
                             double *base_median) {
    double *a = (double *)malloc((size_t)samples * sizeof(double));
    double *b = (double *)malloc((size_t)samples * sizeof(double));
    mg_status s = (a && b) ? MG_OK : mg_set_error(MG_ERR_OUT_OF_MEMORY, "host allocation of %d samples", samples);
    const mg_timed_fn fns[2] = {fwd_fn, fwd_fn};
    void *const ctxs[2] = {base, mine};
    double *const out[2] = {a, b};
    if (s == MG_OK) s = mg_time_interleaved(e->timer, 2, fns, ctxs, warmup, samples, out);
    if (s == MG_OK) {
        r->st = mg_stats_of(b, samples);
        percentiles(b, samples, &r->p10, &r->p90);
        r->samples = samples;
        r->clock_mhz = sm_clock(e);
        *base_median = mg_stats_of(a, samples).median;
    }
    free(a);
    free(b);
    return s;
}

/* ------------------------------------------------------------------------------------------ row runners */

static int run_copy(env *e, const mgm_row *row, int warmup, int samples, result *r) {
    size_t bytes = (size_t)row->m << 20;
    void *src = NULL, *dst = NULL;
    snprintf(r->name, sizeof r->name, "ceiling_copy");
    mg_status s = dmalloc(&src, bytes, "the copy source");
    if (s == MG_OK) s = dmalloc(&dst, bytes, "the copy destination");
    if (s == MG_OK && cudaMemsetAsync(src, 0x3c, bytes, e->stream) != cudaSuccess)
        s = mg_set_error(MG_ERR_CUDA, "cudaMemsetAsync: %s", cudaGetErrorString(cudaGetLastError()));
    copy_ctx c = {dst, src, bytes, e->stream};
    if (s == MG_OK) s = time_it(e, copy_fn, &c, warmup, samples, r);
    cudaFree(src);
    cudaFree(dst);
    if (s != MG_OK) return res_set(r, ST_ERROR, "%s", mg_last_error());
    r->gbps = 2.0 * (double)bytes / (r->st.median * 1e-3) / 1e9;
    return res_set(r, ST_OK, "device-to-device cudaMemcpyAsync of %lld MiB; gbps counts bytes read + written",
                   (long long)row->m);
}

/* Times cuBLAS GemmEx as g describes it (g->h: a handle made here, on the bench's stream) and fills r's rates from
 * 2MNK and the bytes read once + written. */
static mg_status time_gemm(env *e, gemm_ctx *g, double bytes, int warmup, int samples, result *r) {
    cublasHandle_t h = NULL;
    mg_status s = cublasCreate(&h) == CUBLAS_STATUS_SUCCESS ? MG_OK : mg_set_error(MG_ERR_CUBLAS, "cublasCreate failed");
    if (s != MG_OK) h = NULL;
    if (s == MG_OK && cublasSetStream(h, e->stream) != CUBLAS_STATUS_SUCCESS)
        s = mg_set_error(MG_ERR_CUBLAS, "cublasSetStream failed");
    g->h = h;
    if (s == MG_OK) s = time_it(e, gemm_fn, g, warmup, samples, r);
    if (h) cublasDestroy(h);
    if (s == MG_OK) {
        const double flop = 2.0 * (double)g->m * (double)g->n * (double)g->k;
        r->tflops = flop / (r->st.median * 1e-3) / 1e12;
        r->gbps = bytes / (r->st.median * 1e-3) / 1e9;
        r->intensity = flop / bytes;
    }
    return s;
}

static int run_cublas_ceiling(env *e, const mgm_row *row, uint64_t seed, int warmup, int samples, result *r) {
    snprintf(r->name, sizeof r->name, "%s", ceiling_name(row->kind));
    if (row->k == 0) return res_set(r, ST_SKIPPED, "K = 0: no GEMM to time");
    mg_precision p = (mg_precision)row->prec;
    size_t es = mg_elem_bytes(p);
    void *x = NULL, *W = NULL, *b = NULL, *y = NULL;
    mg_status s = dmalloc(&x, (size_t)row->m * (size_t)row->k * es, "ceiling x");
    if (s == MG_OK) s = dmalloc(&W, (size_t)row->n * (size_t)row->k * es, "ceiling W");
    if (s == MG_OK) s = dmalloc(&b, (size_t)row->n * es, "ceiling b");
    if (s == MG_OK) s = dmalloc(&y, (size_t)row->m * (size_t)row->n * es, "ceiling y");
    /* seed-like values: the power (and so the clock) a GEMM draws depends on the data */
    if (s == MG_OK) s = mg_fill_seedlike(x, W, b, row->m, row->n, row->k, p, seed, e->stream);
    gemm_ctx g = {NULL, (int)row->m, (int)row->n, (int)row->k, x, W, y, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F};
    const char *what = "";
    if (row->kind == MGM_CEIL_BF16) {
        g.ab = g.c = CUDA_R_16BF;
        what = "cublasGemmEx bf16 in, bf16 out, CUBLAS_COMPUTE_32F";
    } else if (row->kind == MGM_CEIL_TF32) {
        g.compute = CUBLAS_COMPUTE_32F_FAST_TF32;
        what = "cublasGemmEx fp32 in/out, CUBLAS_COMPUTE_32F_FAST_TF32";
    } else {
        what = "cublasGemmEx fp32 in/out, CUBLAS_COMPUTE_32F (SIMT SGEMM)";
    }
    const double bytes = ((double)row->m * row->k + (double)row->n * row->k + (double)row->m * row->n) * (double)es;
    if (s == MG_OK) s = time_gemm(e, &g, bytes, warmup, samples, r);
    cudaFree(x);
    cudaFree(W);
    cudaFree(b);
    cudaFree(y);
    if (s != MG_OK) return res_set(r, ST_ERROR, "%s", mg_last_error());
    return res_set(r, ST_OK, "%s", what);
}

/* The int8 ceiling: cublasGemmEx s8 x s8 -> s32 (CUBLAS_COMPUTE_32I, the TN layout) at the ceilings shape, the
 * tensor-core roof that kernels 9-11 run their three s8 products on (plots/roofline.gp draws it beside the
 * datasheet's 1979 TOPS). Inputs: bytes in [-127, 127] from the project's hash (the s8 slices of seed-like data span
 * that range; the power, and so the clock, a GEMM draws depends on the data). The tflops column holds TOPS. */
static int run_int8_ceiling(env *e, const mgm_row *row, uint64_t seed, int warmup, int samples, result *r) {
    snprintf(r->name, sizeof r->name, "%s", ceiling_name(row->kind));
    if (row->k == 0) return res_set(r, ST_SKIPPED, "K = 0: no GEMM to time");
    if (row->k % 4 != 0 || row->n % 4 != 0)
        return res_set(r, ST_SKIPPED, "cuBLAS's int8 GEMM needs K and N multiples of 4 (got K = %lld, N = %lld)",
                       (long long)row->k, (long long)row->n);
    const size_t nx = (size_t)row->m * (size_t)row->k, nw = (size_t)row->n * (size_t)row->k;
    void *x = NULL, *W = NULL, *y = NULL;
    mg_status s = dmalloc(&x, nx, "ceiling int8 x");
    if (s == MG_OK) s = dmalloc(&W, nw, "ceiling int8 W");
    if (s == MG_OK) s = dmalloc(&y, (size_t)row->m * (size_t)row->n * sizeof(int32_t), "ceiling int8 y");
    /* drawn on the device (not by a host loop over 2 x 64 MiB and a copy), the same bytes: src/rng.h mg_rng_s8 */
    if (s == MG_OK) s = mg_fill_s8(x, nx, seed, MG_RNG_X, e->stream);
    if (s == MG_OK) s = mg_fill_s8(W, nw, seed, MG_RNG_W, e->stream);
    gemm_ctx g = {NULL, (int)row->m, (int)row->n, (int)row->k, x, W, y, CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I};
    const double bytes = (double)nx + (double)nw + (double)row->m * (double)row->n * 4.0;
    if (s == MG_OK) s = time_gemm(e, &g, bytes, warmup, samples, r);
    cudaFree(x);
    cudaFree(W);
    cudaFree(y);
    if (s != MG_OK) return res_set(r, ST_ERROR, "%s", mg_last_error());
    return res_set(r, ST_OK, "cublasGemmEx s8 in; s32 out; CUBLAS_COMPUTE_32I (TOPS)");
}

typedef struct graph_ctx { cudaGraphExec_t ge; cudaStream_t stream; } graph_ctx;
static mg_status graph_fn(void *p) {
    graph_ctx *c = (graph_ctx *)p;
    MG_CUDA_TRY(cudaGraphLaunch(c->ge, c->stream));
    return MG_OK;
}

/* The bare write captured into a one-node graph: what launching through a graph costs over a plain launch (the
 * short-circuit's tail and graph modes launch graphs). Median ms, or NAN if the capture failed. */
static double bare_write_as_graph(env *e, float *d, int m, int warmup, int samples) {
    cudaStream_t cs = NULL;
    cudaGraph_t g = NULL;
    cudaGraphExec_t ge = NULL;
    double ms = NAN;
    if (cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking) == cudaSuccess &&
        cudaStreamBeginCapture(cs, cudaStreamCaptureModeRelaxed) == cudaSuccess) {
        mg_status s = mgb_bare_write(d, m, cs);
        if (cudaStreamEndCapture(cs, &g) == cudaSuccess && s == MG_OK && cudaGraphInstantiate(&ge, g, 0) == cudaSuccess) {
            graph_ctx c = {ge, e->stream};
            result tmp;
            res_init(&tmp);
            if (time_it(e, graph_fn, &c, warmup, samples, &tmp) == MG_OK) ms = tmp.st.median;
        }
    }
    cudaGetLastError();
    if (ge) cudaGraphExecDestroy(ge);
    if (g) cudaGraphDestroy(g);
    if (cs) cudaStreamDestroy(cs);
    return ms;
}

static int run_bare_write(env *e, const mgm_row *row, int warmup, int samples, const baselines *bl, result *r) {
    snprintf(r->name, sizeof r->name, "bare_write");
    float *d = NULL;
    mg_status s = dmalloc((void **)&d, (size_t)row->m * sizeof(float), "the bare-write output");
    bare_ctx c = {d, (int)row->m, e->stream};
    if (s == MG_OK) s = time_it(e, bare_fn, &c, warmup, samples, r);
    double as_graph = s == MG_OK ? bare_write_as_graph(e, d, (int)row->m, warmup, samples) : NAN;
    cudaFree(d);
    if (s != MG_OK) return res_set(r, ST_ERROR, "%s", mg_last_error());
    r->gbps = (double)row->m * 4.0 / (r->st.median * 1e-3) / 1e9;
    r->x_kernel0 = base_get(bl, row->shape_order, MGM_FP32, 1) / r->st.median;
    return res_set(r, ST_OK, "one launch writing %lld floats: the floor of any max_dim 1 forward; x_kernel0 vs fp32 md1; "
                   "the same kernel as a one-node graph: %.4f ms", (long long)row->m, as_graph);
}

/* The short-circuit's classify alone, plainly launched (the ticket variant that poll and sync modes use), on the
 * row's inputs with its own buffers: separates the kernel from the graph launch around it in tail mode. */
typedef struct classify_ctx {
    const void *x; int64_t m, k; mg_precision prec; const float *ws; void *out; int *rows, *count; cudaStream_t stream;
} classify_ctx;
static mg_status classify_fn(void *p) {
    classify_ctx *c = (classify_ctx *)p;
    return mg_shortcut_classify(c->x, c->m, c->k, c->prec, c->ws, c->out, c->rows, c->count, c->stream);
}
static double classify_alone(env *e, const mgm_row *row, inputs *in, int warmup, int samples) {
    float *ws = NULL;
    int *rows = NULL, *count = NULL;
    double ms = NAN;
    mg_status s = dmalloc((void **)&ws, 4 * sizeof(float), "classify stats");
    if (s == MG_OK) s = dmalloc((void **)&rows, (size_t)row->m * sizeof(int), "classify rows");
    if (s == MG_OK) s = dmalloc((void **)&count, sizeof(int), "classify count");
    if (s == MG_OK) s = mg_shortcut_weight_stats(in->W, in->b, row->n, row->k, (mg_precision)row->prec, ws, e->stream);
    classify_ctx c = {in->x, row->m, row->k, (mg_precision)row->prec, ws, in->out, rows, count, e->stream};
    result tmp;
    res_init(&tmp);
    if (s == MG_OK && time_it(e, classify_fn, &c, warmup, samples, &tmp) == MG_OK) ms = tmp.st.median;
    cudaStreamSynchronize(e->stream);
    cudaFree(ws);
    cudaFree(rows);
    cudaFree(count);
    return ms;
}

typedef struct split_ctx { const float *src; int64_t rows, cols; uint16_t *hi, *lo; cudaStream_t stream; } split_ctx;
static mg_status split_fn(void *p) {
    split_ctx *c = (split_ctx *)p;
    return mg_split_bf16(c->src, c->rows, c->cols, (c->cols + 7) / 8 * 8, c->hi, c->lo, c->stream);
}

/* The fp32 -> bf16 hi/lo split of W (split_w) or x (split_x) alone: the cost kernel 6 avoids per call by splitting
 * W in mg_set_weights and x inside the kernel, and kernel 5 pays for x every call. */
static int run_split(env *e, const mgm_row *row, int warmup, int samples, result *r) {
    const int is_w = row->kind == MGM_SPLIT_W;
    snprintf(r->name, sizeof r->name, is_w ? "split_w" : "split_x");
    const int64_t rows = is_w ? row->n : row->m, cols = row->k, ld = (cols + 7) / 8 * 8;
    float *src = NULL;
    void *hi = NULL, *lo = NULL;
    mg_status s = dmalloc((void **)&src, (size_t)rows * (size_t)(cols ? cols : 1) * 4, "split source");
    if (s == MG_OK) s = dmalloc(&hi, (size_t)rows * (size_t)(ld ? ld : 1) * 2, "split hi");
    if (s == MG_OK) s = dmalloc(&lo, (size_t)rows * (size_t)(ld ? ld : 1) * 2, "split lo");
    if (s == MG_OK)
        s = mg_fill_uniform(src, (size_t)rows * (size_t)cols, MG_PREC_FP32, 7, MG_RNG_W, -1.0f, 1.0f, e->stream);
    split_ctx c = {src, rows, cols, (uint16_t *)hi, (uint16_t *)lo, e->stream};
    if (s == MG_OK) s = time_it(e, split_fn, &c, warmup, samples, r);
    cudaFree(src);
    cudaFree(hi);
    cudaFree(lo);
    if (s != MG_OK) return res_set(r, ST_ERROR, "%s", mg_last_error());
    r->gbps = (double)rows * (double)cols * 8.0 / (r->st.median * 1e-3) / 1e9;   /* 4 B read + 2 x 2 B written */
    return res_set(r, ST_OK, "mg_split_bf16 of %s (%lld x %lld fp32 -> bf16 hi + lo); gbps counts bytes read + written",
                   is_w ? "W" : "x", (long long)rows, (long long)cols);
}

static int run_kernel(env *e, const mgm_row *row, const mg_matrix *mx, inputs *in, int warmup, int samples,
                      baselines *bl, plan_memo *pm, result *r) {
    char why[300];
    const mg_kernel *kk = row->kernel >= 0 ? mg_registry_find(row->kernel) : NULL;
    snprintf(r->name, sizeof r->name, "%s", kk ? kk->name : row->kernel < 0 ? "auto" : "unknown");
    const char *skip = precheck(row, e->sm, why, sizeof why);
    const mg_options ropt = row_options(e, row);
    mg_device dev = {0, e->sm, e->num_sms, ""};
    if (!skip && same_plan(pm, row, &dev, &ropt, why, sizeof why) != PLAN_NEW) skip = why;
    if (skip) return res_set(r, ST_SKIPPED, "%s", skip);

    mg_precision p = (mg_precision)row->prec;
    mg_status s = inputs_get(e, in, row, mx);
    if (s != MG_OK) return res_set(r, ST_ERROR, "inputs: %s", mg_last_error());

    mg_plan_desc d = mg_plan_desc_default();
    d.m = row->m; d.n = row->n; d.k = row->k;
    d.max_dim = row->max_dim;
    d.precision = p;
    d.kernel = row->kernel >= 0 ? row->kernel : MG_KERNEL_AUTO;
    d.shortcut = row->shortcut;
    mg_plan *plan = NULL;
    s = mg_plan_create(&plan, &d);
    if (s == MG_ERR_UNSUPPORTED || s == MG_ERR_KERNEL)
        return res_set(r, ST_SKIPPED, "%s: %s", mg_strerror(s), mg_last_error());
    if (s != MG_OK) return res_set(r, ST_ERROR, "mg_plan_create: %s: %s", mg_strerror(s), mg_last_error());
    s = mg_plan_set_options(plan, &ropt);
    if (s != MG_OK) {
        res_set(r, ST_ERROR, "mg_plan_set_options: %s: %s", mg_strerror(s), mg_last_error());
        mg_plan_destroy(plan);
        return r->status;
    }
    r->kernel = mg_plan_kernel(plan);
    if (mg_plan_kernel_name(plan)) snprintf(r->name, sizeof r->name, "%s", mg_plan_kernel_name(plan));

    s = mg_set_weights(plan, in->W, in->b, e->stream);
    if (s != MG_OK) {
        res_set(r, ST_ERROR, "mg_set_weights: %s: %s", mg_strerror(s), mg_last_error());
        mg_plan_destroy(plan);
        return r->status;
    }
    /* correctness first: poison, one forward, compare with the fp64 reference */
    const double *ref = NULL;
    s = reference_get(e, in, row->max_dim, &ref);
    if (s != MG_OK) {
        res_set(r, ST_ERROR, "reference: %s: %s", mg_strerror(s), mg_last_error());
        mg_plan_destroy(plan);
        return r->status;
    }
    size_t len = (size_t)(row->max_dim == 1 ? row->m : row->n), es = mg_elem_bytes(p);
    s = mg_poison(in->out, len, p, e->stream);
    if (s == MG_OK) s = mg_forward(plan, in->x, in->out, e->stream);
    if (s == MG_OK) {
        cudaError_t ce = cudaMemcpyAsync(in->h_out, in->out, len * es, cudaMemcpyDeviceToHost, e->stream);
        if (ce == cudaSuccess) ce = cudaStreamSynchronize(e->stream);
        if (ce != cudaSuccess) s = mg_set_error(MG_ERR_CUDA, "the checked forward: %s", cudaGetErrorString(ce));
    }
    if (s != MG_OK) {
        res_set(r, ST_ERROR, "mg_forward: %s: %s", mg_strerror(s), mg_last_error());
        mg_plan_destroy(plan);
        return r->status;
    }
    double tol = mg_precision_tolerance(p);
    mg_check_result cr;
    if (p == MG_PREC_BF16) mg_check_bf16(ref, (const uint16_t *)in->h_out, len, tol, tol, &cr);
    else mg_check_f32(ref, (const float *)in->h_out, len, tol, tol, &cr);
    r->max_err = cr.max_abs;
    r->pass = cr.pass ? 1 : 0;

    fwd_ctx c = {plan, in->x, in->out, e->stream};
    /* 'prune X': a row far slower than its group's kernel 0 cannot win anything; one forward (the checked one above
     * was the warm-up: module loading, descriptors) says so without the samples. */
    const double base0 = base_get(bl, row->shape_order, row->prec, row->max_dim);
    if (mx->prune > 0 && r->kernel != 0 && !row->shortcut && cr.pass && !isnan(base0)) {
        double one = NAN;
        s = mg_time(e->timer, fwd_fn, &c, 0, 1, &one);
        if (s == MG_OK && one > mx->prune * base0) {
            res_set(r, ST_SKIPPED, "pruned: one forward took %.4f ms, more than %g x kernel 0's %.4f ms (the matrix's "
                    "'prune')", one, mx->prune, base0);
            mg_plan_destroy(plan);
            return r->status;
        }
        if (s != MG_OK) {
            res_set(r, ST_ERROR, "timing: %s: %s", mg_strerror(s), mg_last_error());
            mg_plan_destroy(plan);
            return r->status;
        }
    }
    /* Every row but kernel 0's own is timed interleaved with a kernel 0 plan of the same problem (full compute),
     * and its x_kernel0 is that paired ratio; where kernel 0 cannot run (or with --no-flush), the group's kernel 0
     * row is the base. */
    mg_plan *plan0 = NULL;
    double base_paired = NAN;
    /* Not with --no-flush: kernel 0 streams W through the L2 and would evict what the row's samples keep warm. */
    if (r->kernel != 0 && e->flush) {
        mg_plan_desc d0 = d;
        d0.kernel = 0;
        d0.shortcut = 0;
        if (mg_plan_create(&plan0, &d0) != MG_OK || mg_plan_set_options(plan0, &e->opt) != MG_OK ||
            mg_set_weights(plan0, in->W, in->b, e->stream) != MG_OK) {
            mg_plan_destroy(plan0);
            plan0 = NULL;
        }
    }
    fwd_ctx c0 = {plan0, in->x, in->out, e->stream};
    s = settle(fwd_fn, &c, e->stream);
    if (s == MG_OK && plan0) s = settle(fwd_fn, &c0, e->stream);
    if (s == MG_OK) s = plan0 ? time_paired(e, &c0, &c, warmup, samples, r, &base_paired)
                              : time_it(e, fwd_fn, &c, warmup, samples, r);
    mg_plan_destroy(plan0);
    /* which short-circuit mode the timed calls ran (--shortcut-mode; a graph mode may have fallen back) */
    const char *sc_mode = mg_shortcut_mode_name(mg_plan_shortcut_mode_used(plan));
    if (mg_plan_describe(plan, row->m, r->plan, sizeof r->plan) != MG_OK) r->plan[0] = '\0';
    if (row->kernel < 0) mg_plan_dispatch_where(plan, row->m, r->dispatch, sizeof r->dispatch);
    mg_plan_destroy(plan);
    if (s != MG_OK) return res_set(r, ST_ERROR, "timing: %s: %s", mg_strerror(s), mg_last_error());

    double t = r->st.median * 1e-3;
    double xb = (double)row->m * row->k * es, wb = ((double)row->n * row->k + row->n) * es, ob = (double)len * es;
    double flop = 2.0 * (double)row->m * (double)row->n * (double)row->k;
    if (row->shortcut) {
        /* the certificate reads x once and writes out; no GEMM is executed, so no TFLOP/s is claimed */
        r->gbps = (xb + ob) / t / 1e9;
    } else {
        r->tflops = flop / t / 1e12;
        r->gbps = (xb + wb + ob) / t / 1e9;
        r->intensity = flop / (xb + wb + ob);
        if (r->kernel == 0 && cr.pass) base_put(bl, row->shape_order, row->prec, row->max_dim, r->st.median);
    }
    r->k0_ms = base_paired;
    r->x_kernel0 = (isnan(base_paired) ? base_get(bl, row->shape_order, row->prec, row->max_dim) : base_paired) /
                   r->st.median;
    if (!cr.pass)
        return res_set(r, ST_FAIL, "%zu of %zu outside atol=rtol=%g (%zu NaN mismatches); first at %zu", cr.fails, cr.n,
                       tol, cr.nan_mismatch, cr.first_bad);
    char paired[96] = "";
    if (!isnan(base_paired)) snprintf(paired, sizeof paired, "x_kernel0 paired: kernel 0 interleaved, %.4f ms", base_paired);
    if (row->shortcut)
        return res_set(r, ST_OK, "short-circuit on (%s mode): no GEMM for certified rows; classify alone (plain launch) "
                       "%.4f ms; %s", sc_mode, classify_alone(e, row, in, warmup, samples), paired);
    return res_set(r, ST_OK, "%s", paired);
}

/* ------------------------------------------------------------------------------------------ main */

enum { B_MATRIX = 0x100, B_CSV, B_ONLY_KERNEL, B_QUICK, B_LIST, B_NO_FLUSH, B_COMMIT, B_NCU_REGEX, B_DISPATCH };
static const struct option bench_longopts[] = {
    {"matrix", required_argument, NULL, B_MATRIX},
    {"csv", required_argument, NULL, B_CSV},
    {"only-kernel", required_argument, NULL, B_ONLY_KERNEL},
    {"quick", no_argument, NULL, B_QUICK},
    {"list", no_argument, NULL, B_LIST},
    {"no-flush", no_argument, NULL, B_NO_FLUSH},
    {"commit", required_argument, NULL, B_COMMIT},
    {"ncu-regex", required_argument, NULL, B_NCU_REGEX},
    {"dispatch", required_argument, NULL, B_DISPATCH},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    MG_CLI_OPTION_LONGOPTS,
    {NULL, 0, NULL, 0},
};

static int bench_option(void *ctx, int code, const char *flag, const char *val, char *err, size_t errlen) {
    opts *o = (opts *)ctx;
    switch (code) {
    case B_MATRIX: o->matrix = val; return 0;
    case B_CSV: o->csv = val; return 0;
    case B_ONLY_KERNEL: {
        int id = 0;
        if (mg_registry_parse(val, &id) != MG_OK || id < 0) {
            snprintf(err, errlen, "%s: %s", flag, id < 0 ? "auto is not a kernel here" : mg_last_error());
            return -1;
        }
        o->only_kernel = id;
        return 0;
    }
    case B_QUICK: o->quick = 1; return 0;
    case B_LIST: o->list = 1; return 0;
    case B_NO_FLUSH: o->no_flush = 1; return 0;
    case B_COMMIT: o->commit = val; return 0;
    case B_DISPATCH: o->dispatch = val; return 0;
    case B_NCU_REGEX: o->ncu_regex = val; return 1;
    case 'h': o->help = 1; return 1;
    case 'V': o->version = 1; return 1;
    case 'v': return mg_cli_apply_option(MG_CLI_OPT_VERBOSE, flag, val, &o->opt, err, errlen);
    default: return mg_cli_apply_option(code, flag, val, &o->opt, err, errlen);
    }
}

/* 0, or 2 after a message (usage error). */
static int parse_opts(int argc, char **argv, opts *o) {
    memset(o, 0, sizeof *o);
    o->matrix = "bench/matrix.txt";
    o->csv = "bench/results/latest.csv";
    o->only_kernel = -1;
    o->opt = mg_options_default();
    char err[512] = "";
    if (mg_cli_getopt(argc, argv, "maxgemm_bench", "hVv", bench_longopts, bench_option, o, err, sizeof err) < 0) {
        fprintf(stderr, "maxgemm_bench: %s%s\n", err, strstr(err, "--help") ? "" : " (see 'maxgemm_bench --help')");
        return MG_EXIT_USAGE;
    }
    return 0;
}

/* `make ncu` asks which kernel names to profile: the registry row's device_fn (cuBLAS-built baselines launch
 * cuBLAS's own GEMM kernels, named *xmma*, *cutlass*, *sgemm*, ...; kernels 4 and 6 share the ws_kernel template). */
static int print_ncu_regex(const char *s) {
    int id = 0;
    if (mg_registry_parse(s, &id) != MG_OK || id < 0) {
        fprintf(stderr, "maxgemm_bench: --ncu-regex: unknown kernel '%s'\n", s);
        return MG_EXIT_USAGE;
    }
    const mg_kernel *k = mg_registry_find(id);
    printf("%s\n", k->device_fn);
    return 0;
}

int main(int argc, char **argv) {
    opts o;
    int rc = parse_opts(argc, argv, &o);
    if (rc) return rc;
    if (o.help) {
        usage(stdout);
        return MG_EXIT_OK;
    }
    if (o.version) {
        printf("maxgemm_bench %s\ncommit %s\n", mg_version(), MG_GIT_COMMIT);
        return MG_EXIT_OK;
    }
    if (o.ncu_regex) return print_ncu_regex(o.ncu_regex);
    if (o.dispatch && mg_dispatch_load(o.dispatch) != MG_OK) {
        fprintf(stderr, "maxgemm_bench: --dispatch: %s\n", mg_last_error());
        return MG_EXIT_USAGE;
    }

    mg_matrix *mx = (mg_matrix *)malloc(sizeof *mx);
    char err[512];
    if (!mx) { fprintf(stderr, "maxgemm_bench: out of memory\n"); return MG_EXIT_RUNTIME; }
    if (mg_matrix_load(o.matrix, mx, err, sizeof err)) {
        fprintf(stderr, "maxgemm_bench: %s\n", err);
        free(mx);
        return MG_EXIT_USAGE;
    }
    int nk = mg_registry_count();
    mgm_kernel_info *known = (mgm_kernel_info *)calloc((size_t)(nk > 0 ? nk : 1), sizeof *known);
    if (!known) { fprintf(stderr, "maxgemm_bench: out of memory\n"); free(mx); return MG_EXIT_RUNTIME; }
    for (int i = 0; i < nk; i++) {
        known[i].id = mg_registry_at(i)->id;
        known[i].prec_mask = mg_registry_at(i)->precisions;
    }
    mgm_row *rows = NULL;
    int nrows = mg_matrix_expand(mx, known, nk, o.only_kernel, &rows, err, sizeof err);
    free(known);
    if (nrows < 0) {
        fprintf(stderr, "maxgemm_bench: %s: %s\n", o.matrix, err);
        free(mx);
        return MG_EXIT_USAGE;
    }
    int samples = o.quick ? mx->quick_samples : mx->samples;
    int warmup = o.quick ? (mx->warmup < 1 ? mx->warmup : 1) : mx->warmup;

    if (o.list) {
        char label[160], why[300];
        int nrun = 0;
        /* the launch plans compared (option variants) as this GPU's, or without one as an H200's (sm_90, 132 SMs) */
        env le;
        memset(&le, 0, sizeof le);
        le.opt = o.opt;
        mg_device ldev = {0, 90, 132, ""};
        int nd = 0;
        struct cudaDeviceProp lprop;
        if (cudaGetDeviceCount(&nd) == cudaSuccess && nd > 0 && cudaGetDeviceProperties(&lprop, 0) == cudaSuccess) {
            ldev.sm = lprop.major * 10 + lprop.minor;
            ldev.num_sms = lprop.multiProcessorCount;
        }
        cudaGetLastError();
        plan_memo lmemo = {NULL, 0, 0};
        double est = 0.0;
        for (int i = 0; i < nrows; i++) {
            row_label(&rows[i], label, sizeof label);
            const char *skip = precheck(&rows[i], 0, why, sizeof why);
            const mg_options ro = row_options(&le, &rows[i]);
            if (!skip && same_plan(&lmemo, &rows[i], &ldev, &ro, why, sizeof why) != PLAN_NEW) skip = why;
            printf("[%d/%d] %s%s%s\n", i + 1, nrows, label, skip ? " ... skipped: " : "", skip ? skip : "");
            nrun += !skip;
            if (!skip) est += guess_row_s(&rows[i], 0, !o.no_flush, warmup, samples);
        }
        free(lmemo.v);
        char tb[32];
        printf("%d rows (%d to run, %d skipped), %d samples each after %d warm-up runs, seed %llu; roughly %s on an "
               "H200 (a model of each row, not a measurement); launch plans compared for sm_%d with %d SMs\n", nrows,
               nrun, nrows - nrun, samples, warmup, (unsigned long long)mx->seed, hms(est, tb, sizeof tb), ldev.sm,
               ldev.num_sms);
        free(rows);
        free(mx);
        return 0;
    }

    int ndev = 0;
    cudaError_t ce = cudaGetDeviceCount(&ndev);
    if (ce != cudaSuccess || ndev == 0) {
        fprintf(stderr, "maxgemm_bench: no CUDA device (%s); nothing to benchmark (--list works without one)\n",
                ce != cudaSuccess ? cudaGetErrorString(ce) : "0 devices");
        free(rows);
        free(mx);
        return MG_EXIT_RUNTIME;
    }

    env e;
    memset(&e, 0, sizeof e);
    int dev = 0;
    struct cudaDeviceProp prop;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaGetDeviceProperties(&prop, dev) != cudaSuccess) {
        fprintf(stderr, "maxgemm_bench: cannot query the device\n");
        return MG_EXIT_RUNTIME;
    }
    e.sm = prop.major * 10 + prop.minor;
    e.num_sms = prop.multiProcessorCount;
    snprintf(e.gpu, sizeof e.gpu, "%s", prop.name);
    csv_clean(e.gpu);
    int khz = 0;
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev) == cudaSuccess) e.max_clock_mhz = khz / 1000;
    int v = 0;
    cudaDriverGetVersion(&v);
    snprintf(e.driver_cuda, sizeof e.driver_cuda, "%d.%d", (v / 1000) % 1000, (v % 1000) / 10);
    snprintf(e.driver, sizeof e.driver, "CUDA %s", e.driver_cuda);   /* NVML adds the driver's own version */
    cudaRuntimeGetVersion(&v);
    snprintf(e.cuda, sizeof e.cuda, "%d.%d", (v / 1000) % 1000, (v % 1000) / 10);
    int cma = 0, cmi = 0, cpa = 0;   /* small numbers: the %d.%d.%d below fits cublas[48] */
    cublasGetProperty(MAJOR_VERSION, &cma);
    cublasGetProperty(MINOR_VERSION, &cmi);
    cublasGetProperty(PATCH_LEVEL, &cpa);
    snprintf(e.cublas, sizeof e.cublas, "%d.%d.%d", cma, cmi, cpa);
    snprintf(e.commit, sizeof e.commit, "%s", o.commit ? o.commit : MG_GIT_COMMIT);
    csv_clean(e.commit);
    nvml_open(&e, dev);
    csv_clean(e.driver);

    e.flush = !o.no_flush;
    e.seed = mx->seed;
    {
        time_t now = time(NULL);
        struct tm utc;
        if (gmtime_r(&now, &utc) == NULL || strftime(e.date, sizeof e.date, "%Y-%m-%dT%H:%M:%SZ", &utc) == 0)
            e.date[0] = '\0';
    }
    e.opt = o.opt;
    {
        /* Option variants ('variants') whose launch plan on this GPU is the same as an earlier variant's of the kernel
         * measure nothing new: they are left out before the run (--list shows each one and why). */
        plan_memo pm = {NULL, 0, 0};
        const mg_device pdev = {dev, e.sm, e.num_sms, ""};
        int w = 0, left_out = 0, failed = -1;   /* failed: the row whose variant's plan failed last (it is kept) */
        char why[300];
        for (int i = 0; i < nrows; i++) {
            const mgm_row *r = &rows[i];
            const mg_options ro = row_options(&e, r);
            if (r->kind == MGM_KERNEL && r->opt.set && !r->exempt_limit && !precheck(r, e.sm, why, sizeof why)) {
                const int sp = same_plan(&pm, r, &pdev, &ro, why, sizeof why);
                /* of a kernel's variants whose plans fail on a problem, the first stays (skipped, saying why) */
                const mgm_row *f = failed >= 0 ? &rows[failed] : NULL;
                const int again = sp == PLAN_FAILS && f && f->kernel == r->kernel && f->shape_order == r->shape_order &&
                                  f->prec == r->prec && f->max_dim == r->max_dim;
                if (sp == PLAN_SAME || again) {
                    left_out++;
                    continue;
                }
                if (sp == PLAN_FAILS) failed = w;
            }
            rows[w++] = rows[i];
        }
        free(pm.v);
        nrows = w;
        if (left_out)
            fprintf(stderr, "maxgemm_bench: %d option variants left out: the same launch plan as an earlier variant of "
                            "their kernel and problem on this GPU, or a plan that fails as an earlier one did\n",
                    left_out);
    }
    if (cudaStreamCreateWithFlags(&e.stream, cudaStreamNonBlocking) != cudaSuccess ||
        mg_timer_create(&e.timer, !o.no_flush, e.stream) != MG_OK) {
        fprintf(stderr, "maxgemm_bench: cannot create the stream or the timer: %s\n", mg_last_error());
        return MG_EXIT_RUNTIME;
    }
    FILE *csv = fopen(o.csv, "w");
    if (!csv) {
        fprintf(stderr, "maxgemm_bench: cannot write %s (does its directory exist?)\n", o.csv);
        return MG_EXIT_RUNTIME;
    }
    fputs(CSV_HEADER, csv);
    fflush(csv);
    fprintf(stderr, "maxgemm_bench: %s (sm_%d, %d SMs, L2 %d MiB, max SM clock %d MHz), driver %s, CUDA %s, cuBLAS %s, "
                    "commit %s; %d rows, %d samples, %d warm-up, %s\n",
            e.gpu, e.sm, e.num_sms, prop.l2CacheSize >> 20, e.max_clock_mhz, e.driver, e.cuda, e.cublas, e.commit, nrows,
            samples, warmup, o.no_flush ? "L2 NOT flushed (warm)" : "L2 flushed before every sample");
    fprintf(stderr, "maxgemm_bench: options: tiles %s, stream-K %s, mixed panels %s, remainder split %s, PDL %s, "
                    "short-circuit mode %s%s\n",
            mg_tiles_name(e.opt.tiles), switch_name(e.opt.streamk), switch_name(e.opt.mixed_panels),
            switch_name(e.opt.rem_split), e.opt.pdl ? "on" : "off", mg_shortcut_mode_name(e.opt.shortcut_mode),
            e.opt.verbose ? ", verbose" : "");

    inputs in;
    memset(&in, 0, sizeof in);
    baselines bl = {NULL, 0, 0};
    plan_memo memo = {NULL, 0, 0};
    int counts[4] = {0, 0, 0, 0}, aborted = 0;
    struct timespec t0, t1;
    /* progress: elapsed and an estimate of what is left, from a per-row guess (guess_row_s) scaled by how long the
     * guessed work done so far actually took */
    double *guess = (double *)calloc((size_t)(nrows > 0 ? nrows : 1), sizeof *guess), guess_left = 0.0, guess_done = 0.0;
    for (int i = 0; guess && i < nrows; i++) guess_left += (guess[i] = guess_row_s(&rows[i], e.sm, e.flush, warmup, samples));
    if (guess) {
        char tb[32];
        fprintf(stderr, "maxgemm_bench: roughly %s to run (a per-row model; the progress lines refine it)\n",
                hms(guess_left, tb, sizeof tb));
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < nrows; i++) {
        const mgm_row *row = &rows[i];
        result r;
        res_init(&r);
        r.kernel = row->kind == MGM_KERNEL ? row->kernel : -1;
        char label[160];
        row_label(row, label, sizeof label);
        {
            clock_gettime(CLOCK_MONOTONIC, &t1);
            double el = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
            /* scale the guess by the run's own pace once enough of it has run to say */
            double scale = (guess_done > 2.0 && el > 2.0) ? el / guess_done : 1.0;
            char te[32], tl[32];
            fprintf(stderr, "[%d/%d %s elapsed, ~%s left] %s ... ", i + 1, nrows, hms(el, te, sizeof te),
                    hms(guess_left * scale, tl, sizeof tl), label);
        }
        if (aborted) {
            res_set(&r, ST_ERROR, "not run: the CUDA context was lost on an earlier row");
        } else {
            switch (row->kind) {
            case MGM_CEIL_COPY: run_copy(&e, row, warmup, samples, &r); break;
            case MGM_CEIL_BF16:
            case MGM_CEIL_TF32:
            case MGM_CEIL_FP32: run_cublas_ceiling(&e, row, mx->seed, warmup, samples, &r); break;
            case MGM_CEIL_INT8: run_int8_ceiling(&e, row, mx->seed, warmup, samples, &r); break;
            case MGM_BARE_WRITE: run_bare_write(&e, row, warmup, samples, &bl, &r); break;
            case MGM_SPLIT_W:
            case MGM_SPLIT_X: run_split(&e, row, warmup, samples, &r); break;
            case MGM_KERNEL: run_kernel(&e, row, mx, &in, warmup, samples, &bl, &memo, &r); break;
            }
            if (r.status == ST_ERROR) {
                /* A sticky error (illegal address, trap) poisons the context: every later call fails. Detect it
                 * and stop running rows, so the CSV says what happened instead of a cascade of errors. */
                cudaGetLastError();
                cudaError_t se = cudaDeviceSynchronize();
                if (se != cudaSuccess) {
                    aborted = 1;
                    size_t l = strlen(r.note);
                    snprintf(r.note + l, sizeof r.note - l, " [context lost: %s]", cudaGetErrorString(se));
                }
            }
        }
        counts[r.status]++;
        if (r.status == ST_SKIPPED) {
            fprintf(stderr, "skipped: %s\n", r.note);
        } else if (r.status == ST_ERROR) {
            fprintf(stderr, "ERROR: %s\n", r.note);
        } else {
            fprintf(stderr, "%.4f ms", r.st.median);
            if (isfinite(r.tflops)) fprintf(stderr, "  %.1f TFLOP/s", r.tflops);
            if (isfinite(r.gbps)) fprintf(stderr, "  %.0f GB/s", r.gbps);
            if (isfinite(r.x_kernel0)) fprintf(stderr, "  x%.3f vs k0", r.x_kernel0);
            if (r.pass >= 0) fprintf(stderr, "  %s (max_err %.2e)", r.pass ? "pass" : "FAIL", r.max_err);
            if (row->kind == MGM_KERNEL && row->kernel < 0) fprintf(stderr, "  [auto: k%d %s]", r.kernel, r.name);
            if (r.status == ST_FAIL) fprintf(stderr, "\n    FAIL: %s", r.note);
            fputc('\n', stderr);
        }
        csv_row(csv, &e, row, &r);
        if (guess) {
            guess_done += guess[i];
            guess_left -= guess[i];
            if (guess_left < 0.0) guess_left = 0.0;
        }
    }
    free(guess);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    inputs_free(&in);
    free(bl.v);
    free(memo.v);
    fclose(csv);
    double wall = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    fprintf(stderr, "maxgemm_bench: %d ok, %d skipped, %d FAILED, %d errors in %.1f s -> %s\n", counts[ST_OK],
            counts[ST_SKIPPED], counts[ST_FAIL], counts[ST_ERROR], wall, o.csv);
    if (mg_timer_hold_timeouts(e.timer) > 0)
        fprintf(stderr, "maxgemm_bench: WARNING: the timing hold timed out in %d sample batches (a timed function "
                        "blocked the host?): those samples may include host launch latency\n",
                mg_timer_hold_timeouts(e.timer));
    mg_timer_destroy(e.timer);
    cudaStreamDestroy(e.stream);
    if (e.nvml_lib) dlclose(e.nvml_lib);
    free(rows);
    free(mx);
    return counts[ST_ERROR] ? MG_EXIT_RUNTIME : counts[ST_FAIL] ? MG_EXIT_CHECK_FAILED : MG_EXIT_OK;
}
