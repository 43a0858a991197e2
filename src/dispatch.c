/* dispatch.c: the dispatch tables (dispatch.h): the parser the build's generator (tools/gen_dispatch.c), the run-time
 * loader and the tests share, and the lookups auto makes. Built with -DMG_DISPATCH_PARSER_ONLY (the generator, the
 * fuzzer) it is the parser alone: no registry, no loaded table.
 *
 * Robustness (mg_dispatch_load reads any file a user names): the text is (pointer, length), may hold NUL bytes and
 * need not end in a newline; lines split on '\n' (a '\r' before it is dropped), fields on spaces and tabs, '#' starts
 * a comment; anything outside printable ASCII is an error; every number is parsed digit by digit with a range check.
 * Every error names the file and the line, and quotes at most 40 bytes of the input. */
#include "dispatch.h"
#include "textscan.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 16
#define MAX_FILE   (4u << 20)

typedef struct field { const char *p; size_t n; } field;

typedef struct pctx {
    const char *file;
    int line;
    char *err;
    size_t errlen;
} pctx;

/* -1 with "file:line: message" in the parse's err */
#define perr(c, ...) mg_text_err((c)->err, (c)->errlen, (c)->file, (c)->line, __VA_ARGS__)

static const char *show(field f, char buf[48]) { return mg_text_show(f.p, f.n, buf); }

static int is(field f, const char *w) { return strlen(w) == f.n && memcmp(f.p, w, f.n) == 0; }

/* A decimal integer in [lo, hi], digits only. */
static int parse_int(pctx *c, field f, const char *what, long long lo, long long hi, int *out) {
    char b[48];
    long long v = 0;
    if (f.n == 0 || f.n > 12) return perr(c, "%s: expected an integer in [%lld, %lld], got '%s'", what, lo, hi, show(f, b));
    for (size_t i = 0; i < f.n; i++) {
        if (f.p[i] < '0' || f.p[i] > '9')
            return perr(c, "%s: expected an integer in [%lld, %lld], got '%s'", what, lo, hi, show(f, b));
        v = v * 10 + (f.p[i] - '0');
    }
    if (v < lo || v > hi) return perr(c, "%s: %s is out of range [%lld, %lld]", what, show(f, b), lo, hi);
    *out = (int)v;
    return 0;
}

/* A plain decimal number (digits and at most one '.'), >= 0. */
static int parse_ratio(pctx *c, field f, double *out) {
    char b[48], z[32];
    int dots = 0, digits = 0, other = 0;
    for (size_t i = 0; i < f.n; i++) {
        if (f.p[i] == '.') dots++;
        else if (f.p[i] >= '0' && f.p[i] <= '9') digits++;
        else other++;
    }
    if (f.n >= sizeof z || dots > 1 || digits == 0 || other)
        return perr(c, "x_kernel0: expected '-', a number or LO..HI (e.g. 1.05 or 0.98..1.07), got '%s'", show(f, b));
    memcpy(z, f.p, f.n);
    z[f.n] = '\0';
    *out = strtod(z, NULL);
    return 0;
}

static int parse_prec(pctx *c, field f, int *out) {
    char b[48];
    if (is(f, "fp32")) *out = MG_PREC_FP32;
    else if (is(f, "tf32")) *out = MG_PREC_TF32;
    else if (is(f, "bf16")) *out = MG_PREC_BF16;
    else return perr(c, "'%s': a row starts with its precision (fp32, tf32 or bf16); the other line is 'gpu NAME'",
                     show(f, b));
    return 0;
}

static const char *prec_name(int p) { return p == MG_PREC_FP32 ? "fp32" : p == MG_PREC_TF32 ? "tf32" : "bf16"; }

/* The row fields: precision max_dim m_lo m_hi kernel options x_kernel0 n k. */
static int parse_row(pctx *c, const field *f, int nf, mg_dispatch_row *r) {
    char b[48];
    memset(r, 0, sizeof *r);
    r->line = c->line;
    if (nf != 9)
        return perr(c, "a row has 9 fields (precision max_dim m_lo m_hi kernel options x_kernel0 n k), this one %d", nf);
    if (parse_prec(c, f[0], &r->prec)) return -1;
    if (parse_int(c, f[1], "max_dim", 0, 1, &r->max_dim)) return -1;
    if (parse_int(c, f[2], "m_lo", 1, MG_DISPATCH_M_MAX, &r->m_lo)) return -1;
    if (is(f[3], "max")) r->m_hi = MG_DISPATCH_M_MAX;
    else if (parse_int(c, f[3], "m_hi", 1, MG_DISPATCH_M_MAX, &r->m_hi)) return -1;
    if (r->m_hi < r->m_lo) return perr(c, "m_hi %d is below m_lo %d", r->m_hi, r->m_lo);
    if (f[4].n == 0 || f[4].n > MG_DISPATCH_KERNEL_MAX)
        return perr(c, "kernel '%s': a registry name or number of 1 to %d characters", show(f[4], b),
                    MG_DISPATCH_KERNEL_MAX);
    for (size_t i = 0; i < f[4].n; i++) {
        const char ch = f[4].p[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
            return perr(c, "kernel '%s': a registry name ([a-z0-9_]) or number (see 'maxgemm list')", show(f[4], b));
    }
    if (is(f[4], "auto")) return perr(c, "kernel 'auto': a row names the kernel auto takes (a name or a number)");
    memcpy(r->kernel, f[4].p, f[4].n);
    char oerr[256];
    if (mg_optset_parse(f[5].p, f[5].n, &r->opt, oerr, sizeof oerr)) return perr(c, "%s", oerr);
    r->x_lo = r->x_hi = NAN;
    if (!is(f[6], "-")) {
        const char *dd = NULL;
        for (size_t i = 0; i + 1 < f[6].n; i++)
            if (f[6].p[i] == '.' && f[6].p[i + 1] == '.') { dd = f[6].p + i; break; }
        field lo = f[6], hi = f[6];
        if (dd) {
            lo.n = (size_t)(dd - f[6].p);
            hi.p = dd + 2;
            hi.n = f[6].n - lo.n - 2;
        }
        if (parse_ratio(c, lo, &r->x_lo) || parse_ratio(c, hi, &r->x_hi)) return -1;
        if (r->x_hi < r->x_lo) return perr(c, "x_kernel0 '%s': LO..HI with LO <= HI", show(f[6], b));
    }
    if (!is(f[7], "-") && parse_int(c, f[7], "n", 1, MG_DISPATCH_M_MAX, &r->n)) return -1;
    if (!is(f[8], "-") && parse_int(c, f[8], "k", 0, MG_DISPATCH_M_MAX, &r->k)) return -1;
    return 0;
}

/* gpu NAME: the rest of the line (spaces inside kept, the ends trimmed) is a GPU the table was measured on. */
static int gpu_line(pctx *c, const field *f, int nf, mg_dispatch_table *out) {
    if (nf < 2) return perr(c, "'gpu' needs the GPU's name (as cudaDeviceProp.name, e.g. NVIDIA H200)");
    const char *s = f[1].p, *e = f[nf - 1].p + f[nf - 1].n;
    if ((size_t)(e - s) >= MG_DISPATCH_GPU_MAX)
        return perr(c, "the GPU name is longer than %d characters", MG_DISPATCH_GPU_MAX - 1);
    char name[MG_DISPATCH_GPU_MAX];
    memcpy(name, s, (size_t)(e - s));
    name[e - s] = '\0';
    if (mg_dispatch_names_gpu(out, name)) return perr(c, "gpu '%s' is named twice", name);
    if (out->ngpus == MG_DISPATCH_MAX_GPUS) return perr(c, "more than %d 'gpu' lines", MG_DISPATCH_MAX_GPUS);
    snprintf(out->gpus[out->ngpus++], MG_DISPATCH_GPU_MAX, "%s", name);
    return 0;
}

void mg_dispatch_free(mg_dispatch_table *t) {
    if (!t) return;
    free((void *)t->rows);
    memset(t, 0, sizeof *t);
}

int mg_dispatch_parse(const char *text, size_t len, const char *file, mg_dispatch_table *out, char *err,
                      size_t errlen) {
    pctx c = {file ? file : "<table>", 0, err, errlen};
    if (err && errlen) err[0] = '\0';
    if (!out) return perr(&c, "no output table");
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", c.file);
    if (!text && len) return perr(&c, "no text");
    if (len > MAX_FILE) return perr(&c, "larger than %u MiB: not a dispatch table", MAX_FILE >> 20);
    mg_dispatch_row *rows = NULL;
    int nrows = 0, cap = 0, first_row_line = 0, rc = 0;
    size_t pos = 0;
    while (rc == 0 && pos < len) {
        c.line++;
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t end = nl ? (size_t)(nl - text) : len, stop = end;
        if (stop > pos && text[stop - 1] == '\r') stop--;
        /* the comment and the bytes: printable ASCII (and tabs) outside comments */
        for (size_t i = pos; rc == 0 && i < stop; i++) {
            const unsigned char ch = (unsigned char)text[i];
            if (ch == '#') stop = i;
            else if ((ch < 0x20 && ch != '\t') || ch >= 0x7f)
                rc = perr(&c, "unexpected byte 0x%02x (a table is plain ASCII text)", ch);
        }
        field f[MAX_FIELDS];
        int nf = 0;
        for (size_t i = pos; rc == 0 && i < stop;) {
            while (i < stop && (text[i] == ' ' || text[i] == '\t')) i++;
            if (i >= stop) break;
            size_t s = i;
            while (i < stop && text[i] != ' ' && text[i] != '\t') i++;
            if (nf == MAX_FIELDS) rc = perr(&c, "more than %d fields", MAX_FIELDS);
            else f[nf++] = (field){text + s, i - s};
        }
        pos = end + 1;
        if (rc || nf == 0) continue;
        if (is(f[0], "gpu")) {
            rc = gpu_line(&c, f, nf, out);
            continue;
        }
        if (nrows == MG_DISPATCH_MAX_ROWS) { rc = perr(&c, "more than %d rows", MG_DISPATCH_MAX_ROWS); continue; }
        if (nrows == cap) {
            mg_dispatch_row *nr = realloc(rows, (size_t)(cap ? 2 * cap : 32) * sizeof *nr);
            if (!nr) { rc = perr(&c, "out of memory"); continue; }
            rows = nr;
            cap = cap ? 2 * cap : 32;
        }
        mg_dispatch_row *r = &rows[nrows];
        if ((rc = parse_row(&c, f, nf, r)) != 0) continue;
        for (int j = 0; rc == 0 && j < nrows; j++) {
            const mg_dispatch_row *o = &rows[j];
            if (o->prec == r->prec && o->max_dim == r->max_dim && o->m_lo <= r->m_hi && r->m_lo <= o->m_hi)
                rc = perr(&c, "%s max_dim %d m %d..%d overlaps line %d (m %d..%d): a batch size has one row",
                          prec_name(r->prec), r->max_dim, r->m_lo, r->m_hi, o->line, o->m_lo, o->m_hi);
        }
        if (!first_row_line) first_row_line = c.line;
        nrows++;
    }
    if (rc == 0 && nrows > 0 && out->ngpus == 0) {
        c.line = first_row_line;
        rc = perr(&c, "rows but no 'gpu' line: name the GPU the table was measured on (gpu NVIDIA H200)");
    }
    if (rc) {
        free(rows);
        memset(out, 0, sizeof *out);
        return -1;
    }
    out->rows = rows;
    out->nrows = nrows;
    return 0;
}

int mg_dispatch_names_gpu(const mg_dispatch_table *t, const char *gpu) {
    for (int i = 0; t && gpu && i < t->ngpus; i++)
        if (strcmp(t->gpus[i], gpu) == 0) return 1;
    return 0;
}

const mg_dispatch_row *mg_dispatch_row_for(const mg_dispatch_table *t, int prec, int max_dim, int m) {
    for (int i = 0; t && i < t->nrows; i++) {
        const mg_dispatch_row *r = &t->rows[i];
        if (r->prec == prec && r->max_dim == max_dim && r->m_lo <= m && m <= r->m_hi) return r;
    }
    return NULL;
}

#ifndef MG_DISPATCH_PARSER_ONLY
#include <pthread.h>

/* The table mg_dispatch_load gave (have_loaded), else the compiled-in ones. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mg_dispatch_table loaded;
static int have_loaded;

mg_status mg_dispatch_load_text(const char *text, size_t len, const char *name) {
    mg_dispatch_table t;
    char err[512];
    if (mg_dispatch_parse(text, len, name, &t, err, sizeof err)) return mg_set_error(MG_ERR_INVALID_ARG, "%s", err);
    pthread_mutex_lock(&lock);
    mg_dispatch_free(&loaded);
    loaded = t;
    have_loaded = 1;
    pthread_mutex_unlock(&lock);
    return MG_OK;
}

mg_status mg_dispatch_load(const char *path) {
    if (!path) {
        pthread_mutex_lock(&lock);
        mg_dispatch_free(&loaded);
        have_loaded = 0;
        pthread_mutex_unlock(&lock);
        return MG_OK;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return mg_set_error(MG_ERR_INVALID_ARG, "dispatch table %s: cannot open: %s", path, strerror(errno));
    char *buf = malloc(MAX_FILE + 1);
    size_t n = buf ? fread(buf, 1, MAX_FILE + 1, f) : 0;
    const int bad = !buf || ferror(f);
    fclose(f);
    mg_status st = bad ? mg_set_error(MG_ERR_INVALID_ARG, "dispatch table %s: cannot read it", path)
                       : mg_dispatch_load_text(buf, n, path);
    free(buf);
    return st;
}

void mg_dispatch_copy(const char *gpu, int prec, int max_dim, mg_dispatch_table *out) {
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&lock);
    const mg_dispatch_table *t = NULL;
    if (have_loaded) t = mg_dispatch_names_gpu(&loaded, gpu) ? &loaded : NULL;
    for (int i = 0; !have_loaded && !t && i < mg_dispatch_builtin_count; i++)
        if (mg_dispatch_names_gpu(&mg_dispatch_builtin[i], gpu)) t = &mg_dispatch_builtin[i];
    if (t) {
        snprintf(out->file, sizeof out->file, "%s", t->file);
        out->ngpus = 1;
        snprintf(out->gpus[0], sizeof out->gpus[0], "%s", gpu);
        int n = 0;
        for (int i = 0; i < t->nrows; i++) n += t->rows[i].prec == prec && t->rows[i].max_dim == max_dim;
        mg_dispatch_row *rows = n ? malloc((size_t)n * sizeof *rows) : NULL;
        for (int i = 0, j = 0; rows && i < t->nrows; i++)
            if (t->rows[i].prec == prec && t->rows[i].max_dim == max_dim) rows[j++] = t->rows[i];
        out->rows = rows;
        out->nrows = rows ? n : 0;   /* out of memory: no table, the registry's rule */
    }
    pthread_mutex_unlock(&lock);
}

/* Every measurement behind a table is made with rows of K that are whole 16-byte vectors (16-byte loads, TMA);
 * other K keep the registry's rule. */
static int applies(const mg_problem *p) { return ((size_t)p->k * mg_elem_bytes(p->prec)) % 16 == 0; }

/* The registry row r's kernel field names (a name, or a number), or NULL. */
static const mg_kernel *named_kernel(const mg_dispatch_row *r) {
    if (r->kernel[0] < '0' || r->kernel[0] > '9') return mg_registry_find_name(r->kernel);
    char *end = NULL;
    const long id = strtol(r->kernel, &end, 10);
    return (end && *end == '\0' && id <= 1000000) ? mg_registry_find((int)id) : NULL;
}

const mg_kernel *mg_dispatch_kernel(const mg_dispatch_row *r, const mg_problem *p, int sm) {
    const mg_kernel *k = (r && p) ? named_kernel(r) : NULL;
    if (!k || !mg_kernel_available(k) || !(k->precisions & (1u << p->prec)) || sm < k->min_sm) return NULL;
    if (k->ops->supports && k->ops->supports(p, sm) != MG_OK) return NULL;
    /* a kernel's own limits on where auto may take it (kernel 7's M, kernel 10's K) hold under a table too: the table
     * is measured at one N x K per M, the limits say where that measurement does not carry over */
    if (k->auto_fits && !k->auto_fits(p)) return NULL;
    return k;
}

const mg_kernel *mg_dispatch_auto(const mg_dispatch_table *t, const mg_problem *p, int sm, const mg_dispatch_row **row) {
    if (row) *row = NULL;
    const mg_dispatch_row *r = applies(p) ? mg_dispatch_row_for(t, p->prec, p->max_dim, p->m) : NULL;
    const mg_kernel *k = mg_dispatch_kernel(r, p, sm);
    if (k) {
        if (row) *row = r;
        return k;
    }
    return mg_registry_auto(p, sm);
}

const mg_dispatch_row *mg_dispatch_options(const mg_dispatch_table *t, const mg_kernel *k, const mg_problem *p,
                                           mg_options *o) {
    const mg_dispatch_row *r = (k && applies(p)) ? mg_dispatch_row_for(t, p->prec, p->max_dim, p->m) : NULL;
    /* the row must name k (supports() is not asked again: k already runs this plan) */
    if (!r || named_kernel(r) != k) return NULL;
    mg_optset_fill_auto(&r->opt, o);
    return r;
}

void mg_dispatch_where(const mg_dispatch_table *t, const mg_dispatch_row *r, char *buf, size_t len) {
    if (!len) return;
    if (!r) buf[0] = '\0';
    else snprintf(buf, len, "%s:%d", t ? t->file : "?", r->line);
}
#endif
